//! `notebridge migrate`: the flags and the stop signals; the run itself, under the run lock, is
//! the library's ([`crate::engine::migrate()`]), whose events and outcome this shows.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use clap::Args;
use serde_json::json;

use super::output::Printer;
use super::progress::Ticker;
use crate::cli::exit::{CliError, CliResult, Exit};
use crate::clock::{Clock, Jitter};
use crate::engine::plan::Picks;
use crate::engine::way::Via;
use crate::engine::{self, Event, Observer, Outcome, Process, Report, Request, Services};
use crate::queue::cancel::Cancel;
use crate::queue::RunEnd;
use crate::settings::{parse_duration, Settings};
use crate::store::imports::is_files_key;
use crate::store::layouts::Layout;
use crate::store::notion_items::Conflict;
use crate::store::sync::Change;
use crate::store::Db;

pub(super) use crate::queue::lock::LOCK_STALE;

/// Arguments of `migrate`.
#[derive(Debug, Args)]
pub struct MigrateArgs {
    /// The account to migrate [default: default; with --resume: every account with queued work].
    #[arg(long, value_name = "NAME", conflicts_with = "all_accounts")]
    pub account: Option<String>,
    /// Every signed-in account, in one run under one app budget.
    #[arg(long)]
    pub all_accounts: bool,
    /// The Notion page to migrate under (id or URL; shared with the integration).
    #[arg(long, value_name = "NOTION_PAGE")]
    pub to: Option<String>,
    /// Only these notebooks (name or id); repeat for several. With --group, --site or
    /// --all-sources it picks among the notebooks of every source named.
    #[arg(long = "notebook", value_name = "NAME_OR_ID")]
    pub notebooks: Vec<String>,
    /// A Microsoft 365 group's notebooks (its display name or id); repeat for several. Needs the
    /// delegated permission Notes.Read.All.
    #[arg(long = "group", value_name = "NAME_OR_ID", conflicts_with = "resume")]
    pub groups: Vec<String>,
    /// A SharePoint site's notebooks (its URL, e.g. https://contoso.sharepoint.com/sites/Design, or
    /// its Graph id); repeat for several. Needs Notes.Read.All; a URL also Sites.Read.All.
    #[arg(long = "site", value_name = "URL_OR_ID", conflicts_with = "resume")]
    pub sites: Vec<String>,
    /// The account's own notebooks and those of every group and followed site that holds any.
    #[arg(long, conflicts_with = "resume")]
    pub all_sources: bool,
    /// OneNote's own files instead of an account: a section file (.one), a notebook's table of
    /// contents (.onetoc2) or its folder, or a notebook package (.onepkg); repeat for several.
    /// Needs no Microsoft account, only NOTION_TOKEN.
    #[arg(
        long = "from",
        value_name = "PATH",
        conflicts_with_all = ["account", "all_accounts", "notebooks", "groups", "sites", "all_sources"]
    )]
    pub from: Vec<std::path::PathBuf>,
    /// Drain what is queued without planning anew.
    #[arg(long)]
    pub resume: bool,
    /// Take no new work after this long (e.g. 50m, 2h), park what is in flight, exit 75.
    #[arg(long, value_name = "DURATION", value_parser = parse_max_duration)]
    pub max_duration: Option<Duration>,
    /// Put permanently failed items back in the queue first.
    #[arg(long)]
    pub retry_failed: bool,
    /// Re-write pages changed in OneNote since they were migrated (same Notion page, new body).
    #[arg(long)]
    pub update: bool,
    /// Print the plan and the time the budgets imply; write nothing to Notion or the queue.
    #[arg(long)]
    pub dry_run: bool,
    /// How page content is read for notebooks in OneDrive or SharePoint: api (the OneNote API,
    /// page by page), files (each section's .one file through the drive API; a section that
    /// cannot be read so goes through the API), auto (files where the token carries the file
    /// permission: Files.Read, or Files.Read.All / Sites.Read.All for groups and sites).
    #[arg(long, value_name = "WAY", default_value = "auto", value_parser = Via::parse)]
    pub via: Via,
    /// How the migration is laid out in Notion: pages (notebooks, section groups, sections and
    /// pages as nested pages) or database (each section a database whose rows are its pages, with
    /// OneNote's dates, tags, author and order as properties) [default: pages, or the layout the
    /// target was planned with]. Recorded with the plan: --resume, --update and --retry-failed
    /// keep it.
    #[arg(long, value_name = "LAYOUT", value_parser = parse_layout)]
    pub layout: Option<Layout>,
}

fn parse_layout(s: &str) -> Result<Layout, String> {
    Layout::parse(s).ok_or_else(|| format!("unknown layout {s:?}; use pages or database"))
}

pub(super) fn parse_max_duration(s: &str) -> Result<Duration, String> {
    let d = parse_duration(s).map_err(|e| format!("{e}; for example: 50m or 2h"))?;
    if d.is_zero() {
        return Err("must be longer than zero; for example: 50m".into());
    }
    Ok(d)
}

/// Runs the migration.
pub fn run(settings: &Settings, printer: &Printer, args: MigrateArgs) -> CliResult<Exit> {
    let token = settings.notion_token.clone().ok_or_else(|| {
        CliError::usage(
            "no Notion integration token: create an internal integration at \
             https://www.notion.so/profile/integrations, share the target page with it, and set \
             NOTION_TOKEN (or `token` under [notion] in the config file)",
        )
    })?;
    if !args.resume && args.to.is_none() {
        return Err(CliError::usage(
            "--to NOTION_PAGE is required (the page to migrate under, e.g. --to \
             https://www.notion.so/Imports-0123456789abcdef0123456789abcdef); use --resume to \
             continue a planned migration",
        )
        .into());
    }
    let target = args.to.as_deref().map(parse_page_id).transpose()?;
    let db = Arc::new(Db::open(&settings.db_path)?);
    let clock = Clock::system();
    let started_at = clock.now_ms();
    super::runtime()?.block_on(migrate(
        settings, printer, &args, &db, &clock, &token, target, started_at,
    ))
}

/// Runs the library's migration with the command's flags, shows what it tells, and prints its
/// outcome (human text or the contract's JSON document) and the exit code it means.
#[allow(clippy::too_many_arguments)]
async fn migrate(
    settings: &Settings,
    printer: &Printer,
    args: &MigrateArgs,
    db: &Arc<Db>,
    clock: &Clock,
    token: &str,
    target: Option<String>,
    started_at: i64,
) -> CliResult<Exit> {
    let req = Request {
        account: args.account.clone(),
        all_accounts: args.all_accounts,
        target,
        picks: Picks {
            notebooks: args.notebooks.clone(),
            groups: args.groups.clone(),
            sites: args.sites.clone(),
            all_sources: args.all_sources,
            own: false,
        },
        resume: args.resume,
        deadline: args.max_duration.map(|d| started_at + d.as_millis() as i64),
        retry_failed: args.retry_failed,
        update: args.update,
        dry_run: args.dry_run,
        workers: settings.workers,
        from: args.from.clone(),
        via: args.via,
        layout: args.layout,
        sync: None,
    };
    execute(settings, printer, db, clock, token, &req, "migrate").await
}

/// Runs the library's migration (`migrate`, or `sync` when `req.sync` says so) as `req` asks,
/// shows what it tells, and prints its outcome (human text or the contract's JSON document) and
/// the exit code it means. `command` names the command in what it advises.
pub(super) async fn execute(
    settings: &Settings,
    printer: &Printer,
    db: &Arc<Db>,
    clock: &Clock,
    token: &str,
    req: &Request,
    command: &'static str,
) -> CliResult<Exit> {
    // The root of the run's stop tree: signals and a lost lock stop it.
    let cancel = Cancel::new();
    let svc = Services {
        settings,
        notion_token: token,
        db,
        clock,
        jitter: Jitter::from_entropy(),
        cancel: &cancel,
        process: Process {
            pid: std::process::id() as i64,
            is_alive: pid_alive,
        },
    };
    let shown = Shown {
        printer: printer.clone(),
        cancel: cancel.clone(),
        ticker: Mutex::new(None),
        command,
    };
    let outcome = engine::migrate(svc, req, &shown).await;
    if let Some(t) = shown.ticker.lock().expect("ticker poisoned").take() {
        t.finish();
    }
    let outcome = outcome.map_err(|e| {
        // The advice names the command that goes on with this run, as it is to be typed.
        let resumable = !req.dry_run && e.resumable();
        let failure = crate::cli::exit::Failure::from(e);
        if resumable {
            failure.with_hint(format!(
                "once that is dealt with, run `notebridge {command} --resume` to go on"
            ))
        } else {
            failure
        }
    });
    match outcome? {
        Outcome::NothingQueued => {
            printer.note("nothing is queued; plan a migration with `notebridge migrate --to PAGE`");
            Ok(Exit::Done)
        }
        Outcome::DryRun {
            accounts,
            plan,
            sync,
        } => {
            if printer.json {
                let mut doc = json!({"dry_run": true, "accounts": accounts, "plan": plan});
                if let Some(a) = &sync {
                    let new: i64 = plan.accounts.iter().map(|p| p.pages + p.containers).sum();
                    let keys = accounts.clone();
                    let changed = db
                        .call(move |db| {
                            let mut n = 0;
                            for k in &keys {
                                n += db.changed_since_migration(k)?.len() as i64;
                            }
                            Ok::<_, crate::store::StoreError>(n)
                        })
                        .await?;
                    // A page recognised as moved is not created, nor (in a dry run) counted as
                    // changed before its records follow it.
                    let recognised = (a.moved_by.guid + a.moved_by.created_and_title) as i64;
                    add_sync_counts(&mut doc, a, new - recognised, changed, &[]);
                }
                printer.json_line(&doc);
            } else {
                for line in plan.lines() {
                    printer.out(format!("plan: {line}"));
                }
                if let Some(a) = &sync {
                    for line in sync_lines(a) {
                        printer.out(line);
                    }
                    for c in &a.changes {
                        printer.out(format!("would {c}"));
                    }
                }
                printer.out("dry run: nothing was written to Notion or to the queue");
            }
            Ok(Exit::Done)
        }
        Outcome::Ran(r) => {
            // What the last read of the run's imports found that is no item (a folder the table
            // of contents names that is not there): said with the summary, never failed.
            let keys = r.accounts.clone();
            let notes = db
                .call(move |db| {
                    let mut notes = Vec::new();
                    for k in keys.iter().filter(|k| is_files_key(k)) {
                        notes.extend(db.import_notes(k)?);
                    }
                    Ok::<_, crate::store::StoreError>(notes)
                })
                .await?;
            Ok(print_report(printer, &r, &notes, command))
        }
    }
}

/// Prints what a run did and returns its exit code.
fn print_report(printer: &Printer, r: &Report, notes: &[String], command: &str) -> Exit {
    let (s, g, n) = (&r.stats, &r.graph, &r.notion);
    let engine::Summary {
        failed,
        blocked,
        pages_done,
        pages_total,
    } = r.summary;
    if printer.json {
        let mut doc = json!({
            "plan": r.plan,
            "outcome": r.end,
            "accounts": r.accounts,
            "pages_done": pages_done,
            "pages_total": pages_total,
            "this_run": {
                "pages": s.pages.load(Ordering::Relaxed),
                "rewritten": s.rewritten.load(Ordering::Relaxed),
                "unchanged": s.unchanged.load(Ordering::Relaxed),
                "containers": s.containers.load(Ordering::Relaxed),
                "blocks": s.blocks.load(Ordering::Relaxed),
                "files": s.files.load(Ordering::Relaxed),
                "bytes": s.bytes.load(Ordering::Relaxed),
                "links_rewritten": s.links.load(Ordering::Relaxed),
                "workers": r.workers,
                "most_pages_ahead": s.ahead_peak.load(Ordering::Relaxed),
                "prefetched_bytes": s.prefetched_bytes.load(Ordering::Relaxed),
                "sections_opened": s.sections_opened.load(Ordering::Relaxed),
                "approximations": s.approximations.load(Ordering::Relaxed),
                "placeholders": s.placeholders.load(Ordering::Relaxed),
                "conflicts": s.conflicts.load(Ordering::Relaxed),
                "seconds": r.seconds,
            },
            "graph": {"requests": g.requests, "throttled": g.throttled, "retries": g.retries, "batches": g.batches},
            "drive": {"requests": r.drive.requests, "downloads": r.drive.downloads,
                      "bytes": r.drive.bytes, "throttled": r.drive.throttled,
                      "resumed": r.drive.resumed,
                      "sections_read": s.from_drive.sections.load(Ordering::Relaxed),
                      "pages_from_files": s.from_drive.pages.load(Ordering::Relaxed),
                      "pages_fell_back": s.from_drive.fell_back.load(Ordering::Relaxed)},
            "notion": {"requests": n.requests, "throttled": n.throttled, "retries": n.retries,
                       "waited_seconds": r.notion_waited.as_secs_f64()},
            "failed": failed,
            "blocked_by_failures": blocked,
            "conflicts": conflicts_json(&r.conflicts),
            "notes": notes,
        });
        if let Some(a) = &r.sync {
            let rewritten = s.rewritten.load(Ordering::Relaxed) as i64;
            let unchanged = s.unchanged.load(Ordering::Relaxed) as i64;
            let written =
                (s.pages.load(Ordering::Relaxed) + s.containers.load(Ordering::Relaxed)) as i64;
            // A page stamped modified whose body and title Notion holds already is not updated.
            add_sync_counts(
                &mut doc,
                a,
                written - rewritten,
                rewritten - unchanged,
                &r.conflicts,
            );
            doc["unchanged"] = json!(unchanged);
            doc["failed"] = json!(failed + a.failed as i64);
        }
        printer.json_line(&doc);
    } else {
        printer.out(format!(
            "{} pages migrated of {} planned; this run: {} pages, {} notebook/section pages, {} blocks, \
             {} files ({:.1} MB), {} links rewritten in {:.1}s",
            pages_done,
            pages_total,
            s.pages.load(Ordering::Relaxed),
            s.containers.load(Ordering::Relaxed),
            s.blocks.load(Ordering::Relaxed),
            s.files.load(Ordering::Relaxed),
            s.bytes.load(Ordering::Relaxed) as f64 / 1e6,
            s.links.load(Ordering::Relaxed),
            r.seconds
        ));
        printer.out(format!(
            "Graph: {} requests, {} throttled; Notion: {} requests, {} throttled, {:.1}s waiting on its \
             rate limit; {} approximations (see `notebridge verify`)",
            g.requests,
            g.throttled,
            n.requests,
            n.throttled,
            r.notion_waited.as_secs_f64(),
            s.approximations.load(Ordering::Relaxed)
        ));
        let from_files = s.from_drive.pages.load(Ordering::Relaxed);
        let fell_back = s.from_drive.fell_back.load(Ordering::Relaxed);
        if from_files + fell_back > 0 || r.drive.requests > 0 {
            printer.out(format!(
                "Section files: {} sections read ({:.1} MB, {} drive requests, {} downloads), {} \
                 pages from them, {} pages of their sections through the OneNote API instead \
                 (`notebridge status` says why)",
                s.from_drive.sections.load(Ordering::Relaxed),
                r.drive.bytes as f64 / 1e6,
                r.drive.requests,
                r.drive.downloads,
                from_files,
                fell_back
            ));
        }
        for n in notes {
            printer.out(format!("note: {n}"));
        }
        if failed > 0 {
            printer.out(format!(
                "{failed} items failed ({blocked} more wait on them); `notebridge status` lists them, \
                 `notebridge migrate --resume --retry-failed` tries them again"
            ));
        }
        if let Some(a) = &r.sync {
            for line in sync_lines(a) {
                printer.out(line);
            }
            // Each change, up to a screenful (`--json` has them all).
            for c in a.changes.iter().take(40) {
                printer.out(format!("  {c}"));
            }
            if a.changes.len() > 40 {
                printer.out(format!(
                    "  and {} more (`--json` lists them)",
                    a.changes.len() - 40
                ));
            }
            for p in &a.problems {
                printer.problem(p.clone());
            }
        }
        for line in conflict_lines(&r.conflicts) {
            printer.out(line);
        }
    }
    let sync_failed = r.sync.as_ref().is_some_and(|a| a.failed > 0);
    match r.end {
        RunEnd::Stopped => {
            printer.note(format!(
                "stopped with work remaining; run `notebridge {command} --resume` to go on"
            ));
            Exit::WorkRemaining
        }
        RunEnd::Finished
            if failed > 0 || r.unreadable_sources > 0 || !r.conflicts.is_empty() || sync_failed =>
        {
            Exit::SomeFailed
        }
        RunEnd::Finished => Exit::Done,
    }
}

/// `sync`'s counts as the contract's JSON gives them, added to the run's document: `created`
/// (new pages and containers), `updated` (pages rewritten in place) and the structural pass's.
fn add_sync_counts(
    doc: &mut serde_json::Value,
    a: &crate::sync::Applied,
    created: i64,
    updated: i64,
    conflicts: &[Conflict],
) {
    doc["created"] = json!(created);
    doc["updated"] = json!(updated);
    doc["renamed"] = json!(a.renamed);
    doc["moved"] = json!(a.moved);
    doc["moved_by"] = json!(a.moved_by);
    doc["recreated"] = json!(a.recreated);
    doc["reordered"] = json!(a.reordered);
    doc["trashed"] = json!(a.trashed);
    doc["kept_deleted"] = json!(a.kept_deleted);
    doc["unmovable"] = json!(a.unmovable);
    doc["sync_problems"] = json!(a.problems);
    doc["changes"] = json!(a.changes);
    doc["conflicts"] = json!(conflicts_json(conflicts));
    if doc.get("failed").is_none() {
        doc["failed"] = json!(a.failed);
    }
}

/// `sync`'s structural changes in words, one line each that is not nothing.
fn sync_lines(a: &crate::sync::Applied) -> Vec<String> {
    let mut out = Vec::new();
    for (n, what) in [
        (a.renamed, "renamed"),
        (a.moved, "moved"),
        (a.reordered, "put back in OneNote's order"),
        (a.trashed, "moved to Notion's trash (deleted in OneNote)"),
        (a.kept_deleted, "left in Notion though deleted in OneNote"),
        (a.conflicts, "left as a person edited them in Notion"),
        (a.failed, "failed (the next sync tries them again)"),
    ] {
        if n > 0 {
            out.push(format!("sync: {n} items {what}"));
        }
    }
    if out.is_empty() {
        out.push("sync: nothing renamed, moved, reordered or deleted".into());
    }
    let by = a.moved_by;
    if by.guid + by.created_and_title > 0 {
        out.push(format!(
            "sync: {} pages OneNote gave a new id recognised as moved ({} by their OneNote GUID, \
             {} by created time and title), each keeping its Notion page",
            by.guid + by.created_and_title,
            by.guid,
            by.created_and_title
        ));
    }
    for r in &a.recreated {
        out.push(format!(
            "sync: page {:?} ({}) deleted and created again in Notion, not moved: {}",
            r.title, r.notion_page_id, r.why
        ));
    }
    out
}

/// The conflicts as the contract's JSON lists them (`sync --json`'s `conflicts`): the page, the
/// person's Notion page, and the Notion page its OneNote version is kept as.
pub(crate) fn conflicts_json(conflicts: &[Conflict]) -> Vec<serde_json::Value> {
    conflicts
        .iter()
        .map(|c| {
            json!({
                "page": c.title,
                "account": c.account,
                "notion_page_id": c.notion_page_id,
                "kept_as": c.kept_page_id,
                "kept_title": c.kept_title,
                "onenote_last_modified": c.onenote_last_modified,
                "change": c.change,
            })
        })
        .collect()
}

/// The conflicts in words: a line saying what they are, then one per page.
pub(crate) fn conflict_lines(conflicts: &[Conflict]) -> Vec<String> {
    if conflicts.is_empty() {
        return Vec::new();
    }
    let mut out = vec![format!(
        "{} pages were edited in Notion since notebridge wrote them and are left as they are \
         (the OneNote version of a page changed in OneNote is kept beside it):",
        conflicts.len()
    )];
    for c in conflicts {
        out.push(match c.change {
            Change::Changed => format!(
                "  conflict: {:?} (Notion page {}): OneNote version kept as {:?} ({})",
                c.title,
                c.notion_page_id,
                c.kept_title.as_deref().unwrap_or("not written yet"),
                c.kept_page_id.as_deref().unwrap_or("no page yet")
            ),
            change => format!(
                "  conflict: {:?} (Notion page {}) was {} in OneNote; left where and as it is",
                c.title,
                c.notion_page_id,
                change.as_str()
            ),
        });
    }
    out.push(
        "  once you have dealt with one: notebridge resolve NOTION_PAGE (it stays as you left it)"
            .into(),
    );
    out
}

/// Shows a run's events: notes and problems on stderr, the plan on stdout, and once the queue is
/// drained, the progress display and the stop signals' handler.
struct Shown {
    printer: Printer,
    /// The run's stop tree's root, which a signal stops.
    cancel: Cancel,
    ticker: Mutex<Option<Ticker>>,
    /// The command, named in what it advises.
    command: &'static str,
}

impl Observer for Shown {
    fn event(&self, event: Event) {
        match event {
            Event::Plan(p) => {
                for line in p.lines() {
                    self.printer.out(format!("plan: {line}"));
                }
            }
            Event::Draining(progress) => {
                let cancel = self.cancel.clone();
                let command = self.command;
                tokio::spawn(async move {
                    wait_for_stop_signal().await;
                    tracing::warn!(
                        "stop requested: finishing what is in flight (again to stop at once)"
                    );
                    cancel.stop();
                    // A second request does not wait for in-flight work (which may sit in a long
                    // throttle cooldown): the next run takes it up as after a kill.
                    wait_for_stop_signal().await;
                    eprintln!("stopped at once; run `notebridge {command} --resume` to go on");
                    std::process::exit(Exit::WorkRemaining.code().into());
                });
                let ticker = super::progress::migration(&self.printer, *progress);
                *self.ticker.lock().expect("ticker poisoned") = Some(ticker);
            }
            Event::Problem(_) => self.printer.problem(event.to_string()),
            Event::Scanning { .. }
            | Event::Note(_)
            | Event::NoTeams { .. }
            | Event::SitesNeedPermission { .. }
            | Event::EarlierTarget { .. }
            | Event::SourcePageElsewhere { .. }
            | Event::Planned { .. }
            | Event::RetriedFailed(_) => self.printer.note(event.to_string()),
        }
    }
}

/// The Notion page id in `--to`'s id or URL, dashed.
pub fn parse_page_id(s: &str) -> CliResult<String> {
    notion_id(s).ok_or_else(|| {
        CliError::usage(format!(
            "--to {s:?} is not a Notion page id or URL; for example: --to \
             https://www.notion.so/Imports-0123456789abcdef0123456789abcdef"
        ))
        .into()
    })
}

/// The Notion id in an id or URL (the last 32 hex digits), dashed; `None` when it holds none.
pub(super) fn notion_id(s: &str) -> Option<String> {
    let path = s.split(['?', '#']).next().unwrap_or(s);
    let hex: String = path.chars().filter(|c| c.is_ascii_hexdigit()).collect();
    let compact: String = path.replace('-', "");
    let tail = if compact.len() >= 32
        && compact[compact.len() - 32..]
            .chars()
            .all(|c| c.is_ascii_hexdigit())
    {
        compact[compact.len() - 32..].to_owned()
    } else if hex.len() == 32 {
        hex
    } else {
        return None;
    };
    let t = tail.to_ascii_lowercase();
    Some(format!(
        "{}-{}-{}-{}-{}",
        &t[..8],
        &t[8..12],
        &t[12..16],
        &t[16..20],
        &t[20..]
    ))
}

/// Whether the process `pid` that a lock names is alive. One naming this very process is a dead
/// holder whose id was given again (Windows, and Wine, hand a freed id out again at once): this
/// process has not taken the lock yet when it asks.
pub(super) fn pid_alive(pid: i64) -> bool {
    pid != i64::from(std::process::id()) && crate::platform::pid_alive(pid)
}

async fn wait_for_stop_signal() {
    crate::platform::stop_signal().await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lock_naming_this_process_names_a_dead_holder_whose_id_came_back() {
        assert!(!pid_alive(i64::from(std::process::id())));
        assert!(!pid_alive(-1));
    }

    #[test]
    fn page_ids_come_from_ids_and_urls() {
        let want = "01234567-89ab-cdef-0123-456789abcdef";
        for input in [
            "0123456789abcdef0123456789abcdef",
            "01234567-89ab-cdef-0123-456789abcdef",
            "https://www.notion.so/Imports-0123456789abcdef0123456789abcdef",
            "https://www.notion.so/team/Imports-0123456789ABCDEF0123456789abcdef?pvs=4",
        ] {
            assert_eq!(parse_page_id(input).unwrap(), want, "{input}");
        }
        assert!(parse_page_id("https://www.notion.so/Imports").is_err());
    }

    #[test]
    fn max_duration_needs_a_unit_and_length() {
        assert_eq!(
            parse_max_duration("50m").unwrap(),
            Duration::from_secs(3000)
        );
        assert!(parse_max_duration("0s").is_err());
        assert!(parse_max_duration("10").is_err());
    }
}
