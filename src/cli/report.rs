//! `notebridge report [--account NAME] [--output FILE]`: writes the self-contained HTML report of the
//! migration from the state database (no network).

use std::path::PathBuf;

use clap::Args;

use super::output::Printer;
use crate::cli::exit::{CliResult, Exit};
use crate::clock::Clock;
use crate::report::{gather, html};
use crate::settings::Settings;
use crate::store::Db;

/// Arguments of `report`.
#[derive(Debug, Args)]
pub struct ReportArgs {
    /// Only this account (default: every account in the database).
    #[arg(long, value_name = "NAME")]
    pub account: Option<String>,
    /// Where to write the report.
    #[arg(
        long,
        short,
        value_name = "FILE",
        default_value = "notebridge-report.html"
    )]
    pub output: PathBuf,
}

/// Writes the report.
pub fn run(settings: &Settings, printer: &Printer, args: ReportArgs) -> CliResult<Exit> {
    let db = Db::open(&settings.db_path)?;
    let mut accounts = Vec::new();
    for a in super::verify::select_accounts(&db, args.account.as_deref())? {
        // Each account's groups and sites follow it, under their own keys.
        let sources: Vec<String> = db
            .queued_keys(&a)?
            .into_iter()
            .filter(|k| *k != a)
            .collect();
        accounts.push(a);
        accounts.extend(sources);
    }
    if args.account.is_none() {
        // Imports from OneNote's own files are sources of their own, named by their paths.
        accounts.extend(super::verify::planned_imports(&db)?);
    }
    let mut report = gather(
        &db,
        &accounts,
        &settings.graph.user_windows,
        Clock::system().now_ms(),
    )?;
    // The pace's clock is anchored on tokio's; read it inside a runtime.
    report.notion_pace = super::runtime()?.block_on(async {
        crate::notion::rate::all_views(&db, &Clock::system())
            .map(|v| v.into_iter().filter(|p| p.known()).collect::<Vec<_>>())
    })?;
    let page = html::render(&report);
    std::fs::write(&args.output, page.as_bytes()).map_err(|e| {
        super::exit::CliError::usage(format!(
            "cannot write the report to {}: {e}",
            args.output.display()
        ))
    })?;
    if printer.json {
        printer.json_line(&serde_json::json!({
            "report": args.output,
            "accounts": accounts,
            "bytes": page.len(),
        }));
    } else {
        printer.out(format!(
            "wrote {} ({} KB): open it in a browser; it fetches nothing",
            args.output.display(),
            page.len().div_ceil(1024)
        ));
    }
    Ok(Exit::Done)
}
