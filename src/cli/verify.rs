//! `notebridge verify`: the completeness report, per section, with a verdict and exit 0 or 4.

use std::sync::Arc;

use clap::Args;

use super::output::Printer;
use crate::cli::exit::{CliError, Exit};
use crate::clock::Jitter;
use crate::notion::client::NotionClient;
use crate::notion::rate::NotionRate;
use crate::settings::{env, Settings};
use crate::store::Db;
use crate::verify::{verify, AccountReport, Counts, ItemState, VerifyReport};

/// Arguments of `verify`.
#[derive(Debug, Args)]
pub struct VerifyArgs {
    /// Only this account (default: every account in the database).
    #[arg(long, value_name = "NAME")]
    pub account: Option<String>,
}

/// Runs the verification.
pub fn run(settings: &Settings, printer: &Printer, args: VerifyArgs) -> anyhow::Result<Exit> {
    let Some(token) = settings.notion_token.clone() else {
        return Err(CliError::usage(format!(
            "{} is not set: verify reads the migrated pages back from Notion. Set it (or \
             notion.token in the config file) to the integration's secret",
            env::NOTION_TOKEN
        ))
        .into());
    };
    let db = Db::open(&settings.db_path)?;
    let accounts = select_accounts(&db, args.account.as_deref())?;
    let report = super::runtime()?.block_on(async {
        let rate = Arc::new(NotionRate::new(settings.notion_rate, 3));
        let client = NotionClient::new(&settings.notion_url, &token, rate, Jitter::from_entropy());
        verify(&db, &client, &accounts).await
    })?;
    // Kept for `report`, which shows what Notion really held at the last verification.
    let now = crate::clock::Clock::system().now_ms();
    for a in &report.accounts {
        db.save_verify_report(&a.account, now, &serde_json::to_string(a)?)?;
    }
    if printer.json {
        printer.json_line(&serde_json::to_value(&report)?);
    } else {
        print_human(printer, &report);
    }
    Ok(if report.complete() {
        Exit::Done
    } else {
        Exit::SomeFailed
    })
}

/// The named account, or every account; exit 3 when there is none.
pub(super) fn select_accounts(db: &Db, name: Option<&str>) -> anyhow::Result<Vec<String>> {
    match name {
        Some(n) => match db.account(n)? {
            Some(a) => Ok(vec![a.name]),
            None => Err(CliError::sign_in(format!(
                "no account named {n}; sign in with `notebridge login --account {n}`"
            ))
            .into()),
        },
        None => {
            let all: Vec<String> = db.accounts()?.into_iter().map(|a| a.name).collect();
            if all.is_empty() {
                return Err(CliError::sign_in(
                    "no accounts in this database; sign in with `notebridge login`",
                )
                .into());
            }
            Ok(all)
        }
    }
}

fn print_human(printer: &Printer, report: &VerifyReport) {
    for a in &report.accounts {
        print_account(printer, a);
        printer.out("");
    }
    let mut t = Counts::default();
    let mut containers_bad = 0;
    for a in &report.accounts {
        t.add(&a.totals);
        containers_bad += a
            .containers
            .iter()
            .filter(|c| !c.check.state.is_good())
            .count()
            + a.sections
                .iter()
                .filter(|s| !s.section_page.state.is_good())
                .count();
    }
    if report.complete() {
        printer.out(format!(
            "verdict: COMPLETE: all {} planned pages are in Notion exactly once and complete \
             ({} pages with approximations; {} Notion requests)",
            t.planned, t.approximated_pages, report.notion_requests
        ));
    } else {
        printer.out(format!(
            "verdict: INCOMPLETE: of {} planned pages {} are ok; {} missing ({} failed, {} blocked \
             by a failed parent, {} not run yet), {} partially written, {} extra copies; {} \
             notebook/group/section pages with problems ({} Notion requests)",
            t.planned,
            t.ok,
            t.missing,
            t.failed,
            t.blocked,
            t.pending,
            t.partial,
            t.duplicates,
            containers_bad,
            report.notion_requests
        ));
    }
}

fn print_account(printer: &Printer, a: &AccountReport) {
    printer.out(format!(
        "account {} (under Notion page{} {})",
        a.account,
        if a.targets.len() == 1 { "" } else { "s" },
        if a.targets.is_empty() {
            "-".to_owned()
        } else {
            a.targets.join(", ")
        }
    ));
    if !a.planned_anything {
        printer.out("  nothing planned yet: run `notebridge migrate --to PAGE` first");
    }
    let rows: Vec<(String, &Counts)> = a
        .sections
        .iter()
        .map(|s| (s.path.join(" / "), &s.counts))
        .collect();
    let width = rows
        .iter()
        .map(|(p, _)| p.chars().count())
        .chain([7])
        .max()
        .unwrap_or(7)
        .min(60);
    let header = [
        "ONENOTE", "PLANNED", "NOTION", "MISSING", "EXTRA", "PARTIAL", "FAILED", "APPROX",
    ];
    printer.out(format!(
        "  {:width$}  {}",
        "SECTION",
        header.map(|h| format!("{h:>7}")).join(" ")
    ));
    let line = |name: &str, c: &Counts| {
        let cells = [
            c.onenote_pages,
            c.planned,
            c.in_notion,
            c.missing,
            c.duplicates + c.foreign,
            c.partial,
            c.failed,
            c.approximated_pages,
        ];
        format!(
            "  {:width$}  {}",
            truncate(name, width),
            cells.map(|n| format!("{n:>7}")).join(" ")
        )
    };
    for (name, c) in &rows {
        printer.out(line(name, c));
    }
    printer.out(line("TOTAL", &a.totals));

    let mut problems = Vec::new();
    for c in &a.containers {
        if !c.check.state.is_good() {
            problems.push(problem(
                &format!("{} {}", c.kind.replace('_', " "), c.path.join(" / ")),
                c.check.state,
                c.check.reason.as_deref(),
            ));
        }
    }
    for s in &a.sections {
        if !s.section_page.state.is_good() {
            problems.push(problem(
                &format!("section {}", s.path.join(" / ")),
                s.section_page.state,
                s.section_page.reason.as_deref(),
            ));
        }
        for p in &s.pages {
            if !p.check.state.is_good() {
                problems.push(problem(
                    &format!("{} / {}", s.path.join(" / "), title(&p.title)),
                    p.check.state,
                    p.check.reason.as_deref(),
                ));
            }
        }
        for f in &s.foreign {
            problems.push(format!(
                "  extra: {:?} ({}) under {} was not created by notebridge",
                f.title,
                f.notion_page_id,
                f.under.join(" / ")
            ));
        }
    }
    for f in &a.foreign {
        problems.push(format!(
            "  extra: {:?} ({}) under {} was not created by notebridge",
            f.title,
            f.notion_page_id,
            f.under.join(" / ")
        ));
    }
    if !problems.is_empty() {
        printer.out("problems:");
        for p in problems {
            printer.out(p);
        }
    }
    let approximated: Vec<String> = a
        .sections
        .iter()
        .flat_map(|s| {
            s.pages
                .iter()
                .filter(|p| !p.approximations.is_empty())
                .map(move |p| {
                    let list: Vec<String> = p
                        .approximations
                        .iter()
                        .map(|x| format!("{} x{} ({})", x.element, x.count, x.action))
                        .collect();
                    format!(
                        "  {} / {}: {}",
                        s.path.join(" / "),
                        title(&p.title),
                        list.join("; ")
                    )
                })
        })
        .collect();
    if !approximated.is_empty() {
        printer.out("approximations:");
        for l in approximated {
            printer.out(l);
        }
    }
}

fn problem(what: &str, state: ItemState, reason: Option<&str>) -> String {
    match reason {
        Some(r) => format!("  {}: {what}: {r}", state.label()),
        None => format!("  {}: {what}", state.label()),
    }
}

fn title(t: &str) -> String {
    crate::notion::writer::display_title(t)
}

fn truncate(s: &str, width: usize) -> String {
    if s.chars().count() <= width {
        s.to_owned()
    } else {
        let mut t: String = s.chars().take(width.saturating_sub(1)).collect();
        t.push('…');
        t
    }
}
