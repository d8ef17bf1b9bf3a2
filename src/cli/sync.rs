//! `notebridge sync`: keeps Notion in step with OneNote after a first migration. One run scans,
//! creates what is new, rewrites what changed, then mirrors renames, moves, order and deletions
//! (`crate::sync`), never over a person's edit; `migrate`'s run does all of it
//! ([`super::migrate::execute`]).

use std::sync::Arc;
use std::time::Duration;

use clap::{Args, ValueEnum};

use super::migrate::{execute, parse_page_id};
use super::output::Printer;
use crate::cli::exit::{CliError, CliResult, Exit};
use crate::clock::Clock;
use crate::engine::Request;
use crate::settings::Settings;
use crate::store::Db;
use crate::sync::Deletions;

/// What to do with items deleted in OneNote.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum DeletionsArg {
    /// Move them to Notion's trash (recoverable there for 30 days).
    Trash,
    /// Report them and leave them in Notion.
    Keep,
}

/// Arguments of `sync`.
#[derive(Debug, Args)]
pub struct SyncArgs {
    /// The account to keep in step [default: default; with --resume: every account with queued
    /// work].
    #[arg(long, value_name = "NAME", conflicts_with = "all_accounts")]
    pub account: Option<String>,
    /// Every signed-in account.
    #[arg(long)]
    pub all_accounts: bool,
    /// OneNote's own files migrated before (as given to `migrate --from`); repeat for several.
    /// Needs no Microsoft account, only NOTION_TOKEN.
    #[arg(long = "from", value_name = "PATH", conflicts_with_all = ["account", "all_accounts"])]
    pub from: Vec<std::path::PathBuf>,
    /// The Notion page to migrate under [default: the one the source was migrated under; a
    /// source never migrated needs it].
    #[arg(long, value_name = "NOTION_PAGE")]
    pub to: Option<String>,
    /// What to do with notebooks, sections and pages deleted in OneNote.
    #[arg(long, value_name = "WHAT", value_enum, default_value = "trash")]
    pub deletions: DeletionsArg,
    /// Take no new work after this long (e.g. 50m), park what is in flight, exit 75.
    #[arg(long, value_name = "DURATION", value_parser = super::migrate::parse_max_duration)]
    pub max_duration: Option<Duration>,
    /// Finish what an interrupted sync left queued, then mirror the structure.
    #[arg(long)]
    pub resume: bool,
    /// Print the changes; write nothing to Notion or to the queue.
    #[arg(long)]
    pub dry_run: bool,
}

/// Runs `sync`.
pub fn run(settings: &Settings, printer: &Printer, args: SyncArgs) -> CliResult<Exit> {
    let token = settings.notion_token.clone().ok_or_else(|| {
        CliError::usage(
            "no Notion integration token: set NOTION_TOKEN (or `token` under [notion] in the \
             config file) to the token the migration was made with",
        )
    })?;
    let target = args.to.as_deref().map(parse_page_id).transpose()?;
    let db = Arc::new(Db::open(&settings.db_path)?);
    let clock = Clock::system();
    let started_at = clock.now_ms();
    let req = Request {
        account: args.account.clone(),
        all_accounts: args.all_accounts,
        target,
        resume: args.resume,
        deadline: args.max_duration.map(|d| started_at + d.as_millis() as i64),
        update: true,
        dry_run: args.dry_run,
        workers: settings.workers,
        from: args.from.clone(),
        sync: Some(match args.deletions {
            DeletionsArg::Trash => Deletions::Trash,
            DeletionsArg::Keep => Deletions::Keep,
        }),
        ..Request::default()
    };
    super::runtime()?.block_on(execute(
        settings, printer, &db, &clock, &token, &req, "sync",
    ))
}
