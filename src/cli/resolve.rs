//! `notebridge resolve`: the person says they have dealt with conflicts (pages notebridge left as
//! they edited them in Notion), so that runs from cron stop exiting 4 for them. Nothing is written
//! to Notion, and the pages stay theirs: notebridge still never writes to them. Reads and writes
//! the state database only (`store::conflicts`).

use clap::Args;
use serde_json::json;

use super::migrate::{conflicts_json, notion_id};
use super::output::Printer;
use crate::cli::exit::{CliError, CliResult, Exit};
use crate::clock::Clock;
use crate::settings::Settings;
use crate::store::Db;

/// Arguments of `resolve`.
#[derive(Debug, Args)]
pub struct ResolveArgs {
    /// The Notion page of each conflict to resolve: its id or URL, as `status` lists it.
    #[arg(value_name = "NOTION_PAGE", required_unless_present = "all")]
    pub pages: Vec<String>,
    /// Every open conflict of every account and import.
    #[arg(long, conflicts_with = "pages")]
    pub all: bool,
}

/// Resolves the conflicts asked for, all or none.
pub fn run(settings: &Settings, printer: &Printer, args: ResolveArgs) -> CliResult<Exit> {
    let mut pages = Vec::new();
    for p in &args.pages {
        pages.push(notion_id(p).ok_or_else(|| {
            CliError::usage(format!(
                "{p:?} is not a Notion page id or URL; `notebridge status` lists each conflict's \
                 Notion page"
            ))
        })?);
    }
    let db = Db::open(&settings.db_path)?;
    let now = Clock::system().now_ms();
    let resolved = if args.all {
        db.resolve_all_conflicts(now)?
    } else {
        let r = db.resolve_conflicts(&pages, now)?;
        if !r.unknown.is_empty() {
            return Err(CliError::usage(format!(
                "no open conflict has the Notion page {}; nothing was resolved (`notebridge \
                 status` lists the open conflicts)",
                r.unknown.join(", ")
            ))
            .into());
        }
        r.resolved
    };
    if printer.json {
        printer.json_line(&json!({ "resolved": conflicts_json(&resolved) }));
    } else if resolved.is_empty() {
        printer.out("no open conflicts");
    } else {
        printer.out(format!("conflicts resolved: {}", resolved.len()));
        for c in &resolved {
            printer.out(format!(
                "  {:?} (Notion page {}, {} in OneNote)",
                c.title,
                c.notion_page_id,
                c.change.as_str()
            ));
        }
        printer.note(
            "notebridge still never writes to these pages; when OneNote changes one of them \
             again, its OneNote version is kept beside it and its conflict is open again",
        );
    }
    Ok(Exit::Done)
}
