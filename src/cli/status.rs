//! `notebridge status`: per account, the queue by state, pages migrated of total, permanent failures
//! with their last error, pages changed in OneNote since they were migrated, and the Graph limiter's
//! live state. Reads the state database only: no network, works while a migration runs.

use std::sync::Arc;

use clap::Args;
use serde::Serialize;
use serde_json::json;

use super::output::Printer;
use crate::cli::exit::{CliResult, Exit};
use crate::clock::{Clock, Jitter, UnixMillis};
use crate::engine::way;
use crate::graph::sources::{source_of_key, SourceKind};
use crate::limiter::state::{BreakerState, BudgetHolder, BudgetState, LimiterSnapshot};
use crate::limiter::Limiter;
use crate::notion::rate::{all_views, NotionRate, PaceView};
use crate::settings::Settings;
use crate::store::inventory::totals;
use crate::store::jobs::{FailedJob, JobCounts};
use crate::store::layouts::layouts_label;
use crate::store::moves::Recreated;
use crate::store::notion_items::Conflict;
use crate::store::ways::{ShownWay, WayCounts};
use crate::store::Db;

/// Arguments of `status`.
#[derive(Debug, Args)]
pub struct StatusArgs {
    /// Only this account (default: every account in the database).
    #[arg(long, value_name = "NAME")]
    pub account: Option<String>,
}

/// A page changed in OneNote after it was migrated (`migrate --update` rewrites it).
#[derive(Debug, Serialize)]
pub struct ChangedPage {
    /// OneNote id.
    pub id: String,
    /// Title.
    pub title: String,
    /// `lastModifiedDateTime` of what was migrated.
    pub migrated: String,
    /// `lastModifiedDateTime` now.
    pub now: String,
}

/// One account's status.
#[derive(Debug, Serialize)]
pub struct AccountStatus {
    /// Account name.
    pub account: String,
    /// Who it is.
    pub user_principal_name: String,
    /// Graph user id (the limiter's user scope).
    pub graph_user_id: String,
    /// Whether it has tokens.
    pub signed_in: bool,
    /// Jobs by state, with page counts.
    pub jobs: JobCounts,
    /// Pages in the inventory (the last scan).
    pub onenote_pages: usize,
    /// Permanently failed items.
    pub failures: Vec<FailedJob>,
    /// Pages changed in OneNote since migration.
    pub changed_since_migration: Vec<ChangedPage>,
    /// Pages edited in Notion and left as they are, their OneNote version kept beside them.
    pub conflicts: Vec<Conflict>,
    /// Conflicts the person resolved (`notebridge resolve`): their pages are still left alone.
    pub conflicts_resolved: usize,
    /// Pages deleted and created again in Notion because nothing told their move.
    pub recreated: Vec<Recreated>,
    /// Its groups and sites with queued or migrated work (already counted in the totals above).
    pub sources: Vec<SourceStatus>,
    /// Which way its sections' pages are read (`--via`), and why.
    pub ways: Ways,
    /// How its work is laid out in Notion (`pages`, `database`; both, comma-separated, when its
    /// targets differ), as recorded with its plans.
    pub layout: String,
}

/// The sections of an account by the way their pages are read.
#[derive(Debug, Serialize)]
pub struct Ways {
    /// Sections by way.
    #[serde(flatten)]
    pub counts: WayCounts,
    /// Each section's way, its reason and any fall-back.
    pub sections: Vec<ShownWay>,
}

/// One group or site of an account, as `status` shows it.
#[derive(Debug, Serialize)]
pub struct SourceStatus {
    /// `group` or `site`.
    pub kind: String,
    /// Its Graph id.
    pub id: String,
    /// Display name, as discovery or the command that named it found it.
    pub name: Option<String>,
    /// The site's URL.
    pub url: Option<String>,
    /// Jobs by state, with page counts.
    pub jobs: JobCounts,
    /// Pages in its inventory (the last scan).
    pub onenote_pages: usize,
}

/// One import from OneNote's own files, as `status` shows it.
#[derive(Debug, Serialize)]
pub struct ImportStatus {
    /// The path imported.
    pub path: String,
    /// Its inventory key.
    pub key: String,
    /// Jobs by state, with page counts.
    pub jobs: JobCounts,
    /// Pages in its inventory (the last read of the files).
    pub onenote_pages: usize,
    /// Permanently failed items.
    pub failures: Vec<FailedJob>,
    /// Pages changed in the files since migration.
    pub changed_since_migration: Vec<ChangedPage>,
    /// Pages edited in Notion and left as they are, their OneNote version kept beside them.
    pub conflicts: Vec<Conflict>,
    /// Conflicts the person resolved (`notebridge resolve`): their pages are still left alone.
    pub conflicts_resolved: usize,
    /// Pages deleted and created again in Notion because nothing told their move.
    pub recreated: Vec<Recreated>,
    /// What the last read of the files found that is no item (a folder the table of contents
    /// names that is not there): not a failure.
    pub notes: Vec<String>,
    /// How it is laid out in Notion, as recorded with its plan.
    pub layout: String,
}

/// Who holds the migration lock.
#[derive(Debug, Serialize)]
pub struct Migrating {
    /// Process id.
    pub pid: i64,
    /// Start (unix ms).
    pub started_at: UnixMillis,
    /// Last heartbeat (unix ms).
    pub heartbeat_at: UnixMillis,
    /// Since when it waits for a service it cannot reach (unix ms), if it does.
    pub network_unreachable_since: Option<UnixMillis>,
}

/// Runs `status`.
pub fn run(settings: &Settings, printer: &Printer, args: StatusArgs) -> CliResult<Exit> {
    let db = Arc::new(Db::open(&settings.db_path)?);
    let names = super::verify::select_accounts(&db, args.account.as_deref())?;
    let mut statuses = Vec::new();
    for name in &names {
        let a = db
            .account(name)?
            .expect("select_accounts returned an existing account");
        // The account's own work, then each group's and site's (kept under their own keys).
        let mut keys = vec![name.clone()];
        keys.extend(db.queued_keys(name)?.into_iter().filter(|k| k != name));
        let (mut changed, mut failures, mut sources) = (Vec::new(), Vec::new(), Vec::new());
        let mut onenote_pages = 0;
        let mut layouts = Vec::new();
        for key in &keys {
            layouts.extend(db.account_layouts(key)?);
            changed.extend(self::changed(&db, key)?);
            failures.extend(db.failed_jobs(key)?);
            let pages = totals(&db.inventory(key)?).pages;
            onenote_pages += pages;
            if let Some((kind, id)) = source_of_key(key) {
                let known = db.source_of_key(key)?;
                sources.push(SourceStatus {
                    kind: kind.as_str().to_owned(),
                    id: id.to_owned(),
                    name: known.as_ref().map(|s| s.name.clone()),
                    url: known.and_then(|s| s.url),
                    jobs: db.job_counts(key)?,
                    onenote_pages: pages,
                });
            }
        }
        statuses.push(AccountStatus {
            signed_in: a.signed_in(),
            account: a.name,
            user_principal_name: a.user_principal_name,
            graph_user_id: a.user_id,
            jobs: db.account_job_counts(name)?,
            onenote_pages,
            failures,
            changed_since_migration: changed,
            conflicts: db.conflicts(&keys)?,
            conflicts_resolved: db.resolved_conflicts(&keys)?.len(),
            recreated: db.recreated_pages(&keys)?,
            sources,
            ways: Ways {
                counts: db.way_counts(name)?,
                sections: db.section_ways_of(name)?,
            },
            layout: {
                layouts.sort_by_key(|l| std::cmp::Reverse(l.as_str()));
                layouts.dedup();
                layouts_label(&layouts)
            },
        });
    }
    let mut imports = Vec::new();
    if args.account.is_none() {
        for key in super::verify::planned_imports(&db)? {
            imports.push(ImportStatus {
                path: db.import_path(&key)?.unwrap_or_else(|| key.clone()),
                jobs: db.job_counts(&key)?,
                onenote_pages: totals(&db.inventory(&key)?).pages,
                failures: db.failed_jobs(&key)?,
                changed_since_migration: changed(&db, &key)?,
                conflicts: db.conflicts(std::slice::from_ref(&key))?,
                conflicts_resolved: db.resolved_conflicts(std::slice::from_ref(&key))?.len(),
                recreated: db.recreated_pages(std::slice::from_ref(&key))?,
                notes: db.import_notes(&key)?,
                layout: layouts_label(&db.account_layouts(&key)?),
                key,
            });
        }
    }
    // The limiter's clock is anchored on tokio's; read it inside a runtime.
    let limiter = super::runtime()?.block_on(async {
        let limiter = Limiter::open(
            db.clone(),
            settings.graph.clone(),
            Clock::system(),
            Jitter::from_entropy(),
        )?;
        limiter.snapshot()
    })?;
    let notion = notion_pace(&db, settings)?;
    let migrating = run_lock(&db)?;
    if printer.json {
        printer.json_line(&json!({
            "database": settings.db_path,
            "config": settings.config_path,
            "accounts": statuses,
            "imports": imports,
            "limiter": limiter,
            "notion_pace": notion,
            "migrating": migrating,
        }));
    } else {
        // Where the state lives, first: with several databases (--db, cron) it is the question.
        printer.out(format!(
            "state: {} (config: {})",
            settings.db_path.display(),
            settings
                .config_path
                .as_ref()
                .map_or("none".to_owned(), |p| p.display().to_string())
        ));
        print_human(printer, &statuses, &limiter, migrating.as_ref());
        for i in &imports {
            print_import(printer, i);
        }
        for p in &notion {
            printer.out(p.to_string());
        }
    }
    Ok(Exit::Done)
}

/// The pages of `key` changed in OneNote since they were migrated.
fn changed(db: &Db, key: &str) -> Result<Vec<ChangedPage>, crate::store::StoreError> {
    Ok(db
        .changed_since_migration(key)?
        .into_iter()
        .map(|(id, title, migrated, now)| ChangedPage {
            id,
            title,
            migrated,
            now,
        })
        .collect())
}

fn print_import(printer: &Printer, i: &ImportStatus) {
    let j = &i.jobs;
    printer.out("");
    printer.out(format!("OneNote files {} (no account needed)", i.path));
    printer.out(format!(
        "  pages migrated: {} of {} planned ({} in the files at the last read)",
        j.pages_done, j.pages_total, i.onenote_pages
    ));
    printer.out(format!(
        "  jobs: {} queued ({} blocked by a failure), {} running, {} done, {} failed",
        j.queued, j.blocked, j.running, j.done, j.failed
    ));
    printer.out(format!("  layout: {}", i.layout));
    for n in &i.notes {
        printer.out(format!("  note: {n}"));
    }
    print_failures(printer, &i.failures);
    print_changed(printer, &i.changed_since_migration);
    print_conflicts(printer, &i.conflicts, i.conflicts_resolved);
    print_recreated(printer, &i.recreated);
}

fn print_recreated(printer: &Printer, recreated: &[Recreated]) {
    for r in recreated {
        printer.out(format!(
            "  created again, not moved: {:?} (its old Notion page {}): {}",
            r.title, r.notion_page_id, r.why
        ));
    }
}

fn print_conflicts(printer: &Printer, conflicts: &[Conflict], resolved: usize) {
    for line in super::migrate::conflict_lines(conflicts) {
        printer.out(format!("  {line}"));
    }
    if resolved > 0 {
        printer.out(format!(
            "  conflicts resolved: {resolved} (notebridge leaves their pages as you left them)"
        ));
    }
}

fn print_failures(printer: &Printer, failures: &[FailedJob]) {
    if failures.is_empty() {
        return;
    }
    printer.out("  failed permanently (`migrate --retry-failed` queues them again):");
    for f in failures {
        printer.out(format!(
            "    {} {}: {} (after {} attempt{})",
            serde_json::to_value(f.kind)
                .ok()
                .and_then(|v| v.as_str().map(|s| s.replace('_', " ")))
                .unwrap_or_default(),
            f.name
                .as_deref()
                .map_or_else(|| f.item_id.clone(), |n| format!("{n:?}")),
            f.error,
            f.attempts,
            if f.attempts == 1 { "" } else { "s" }
        ));
    }
}

fn print_changed(printer: &Printer, changed: &[ChangedPage]) {
    if changed.is_empty() {
        return;
    }
    printer.out(format!(
        "  changed in OneNote since migrated ({}; `migrate --update` rewrites them):",
        changed.len()
    ));
    for c in changed {
        printer.out(format!(
            "    {:?}: migrated {}, now {}",
            c.title, c.migrated, c.now
        ));
    }
}

/// Notion's pace as the state database holds it: the configured token's when one is set and it
/// has sent requests, else every token's (their hashes are all the database knows of them).
fn notion_pace(db: &Arc<Db>, settings: &Settings) -> CliResult<Vec<PaceView>> {
    // The pace's clock is anchored on tokio's; read it inside a runtime.
    let views = super::runtime()?.block_on(async {
        let clock = Clock::system();
        match &settings.notion_token {
            Some(t) => NotionRate::open(db.clone(), t, settings.notion_rate, clock)
                .view()
                .map(|v| vec![v])
                .map(|v| v.into_iter().filter(|v| v.known()).collect()),
            None => all_views(db, &clock).map(|v| v.into_iter().filter(PaceView::known).collect()),
        }
    })?;
    Ok(views)
}

/// The process migrating with this database now, if any.
pub(super) fn run_lock(db: &Db) -> CliResult<Option<Migrating>> {
    Ok(db
        .run_lock_record()?
        .map(|r| Migrating {
            pid: r.pid,
            started_at: r.started_at,
            heartbeat_at: r.heartbeat_at,
            network_unreachable_since: r.unreachable_since,
        })
        // A holder that died (kill -9) or stopped beating is not migrating: the next run takes over.
        .filter(|m: &Migrating| {
            let now = crate::clock::Clock::system().now_ms();
            super::migrate::pid_alive(m.pid)
                && now - m.heartbeat_at < super::migrate::LOCK_STALE.as_millis() as i64
        }))
}

fn print_human(
    printer: &Printer,
    statuses: &[AccountStatus],
    limiter: &LimiterSnapshot,
    migrating: Option<&Migrating>,
) {
    match migrating {
        Some(m) => {
            printer.out(format!(
                "migrating now: process {} since {} (last heartbeat {})",
                m.pid,
                time(m.started_at),
                time(m.heartbeat_at)
            ));
            if let Some(t) = m.network_unreachable_since {
                printer.out(format!(
                    "  waiting: network unreachable since {} (nothing fails meanwhile; it goes on \
                     when the services answer)",
                    crate::net::hh_mm(t)
                ));
            }
        }
        None => printer.out("no migration running"),
    }
    for s in statuses {
        let j = &s.jobs;
        printer.out("");
        printer.out(format!(
            "account {} ({}{})",
            s.account,
            s.user_principal_name,
            if s.signed_in { "" } else { ", signed out" }
        ));
        printer.out(format!(
            "  pages migrated: {} of {} planned ({} in OneNote at the last scan)",
            j.pages_done, j.pages_total, s.onenote_pages
        ));
        printer.out(format!(
            "  jobs: {} queued ({} blocked by a failure), {} running, {} done, {} failed",
            j.queued, j.blocked, j.running, j.done, j.failed
        ));
        printer.out(format!("  layout: {}", s.layout));
        for src in &s.sources {
            let what = SourceKind::parse(&src.kind).map_or("", |k| k.what());
            printer.out(format!(
                "  of which {} ({what}{}): {} of {} pages migrated, {} failed",
                src.name.as_deref().unwrap_or(&src.id),
                src.url
                    .as_deref()
                    .map_or_else(String::new, |u| format!(", {u}")),
                src.jobs.pages_done,
                src.jobs.pages_total,
                src.jobs.failed
            ));
        }
        if !s.ways.sections.is_empty() {
            printer.out("  sections by way (--via):");
            for line in way::lines(&s.ways.sections) {
                printer.out(format!("    {line}"));
            }
        }
        print_failures(printer, &s.failures);
        print_changed(printer, &s.changed_since_migration);
        print_conflicts(printer, &s.conflicts, s.conflicts_resolved);
        print_recreated(printer, &s.recreated);
        if let Some(scope) = limiter
            .scopes
            .iter()
            .find(|x| x.scope == BudgetHolder::User(s.graph_user_id.clone()))
        {
            print_scope(
                printer,
                &format!("{}'s Graph budget", s.account),
                scope,
                limiter.at,
            );
        }
    }
    printer.out("");
    // The app's budget is shown when it is configured or its breaker is not closed (a 429
    // scoped `Application`); by default only the per-user budgets apply.
    if let Some(app) = limiter.scopes.iter().find(|x| {
        x.scope == BudgetHolder::App
            && (!x.windows.is_empty()
                || x.concurrency.is_some()
                || x.breaker != BreakerState::Closed)
    }) {
        print_scope(printer, "the app's Graph budget", app, limiter.at);
    }
    for w in &limiter.waits {
        printer.out(format!(
            "  waiting {} s: {}",
            ((w.until - limiter.at).max(0) + 999) / 1000,
            w.message
        ));
    }
}

fn print_scope(printer: &Printer, label: &str, s: &BudgetState, now: UnixMillis) {
    printer.out(format!("  {label}:"));
    for w in &s.windows {
        let used = w.foreground + w.background;
        let full = if used >= w.limit {
            "  FULL"
        } else if w.background_used >= w.background_limit {
            "  background share full"
        } else {
            ""
        };
        printer.out(format!(
            "    window {:>12}: {used}/{} used ({} foreground, {} background of its {}){full}",
            w.window, w.limit, w.foreground, w.background, w.background_limit
        ));
    }
    let cap = match (s.concurrency, s.background_concurrency) {
        (Some(c), Some(b)) => format!(" (cap {c}, background {b})"),
        _ => " (no cap)".to_owned(),
    };
    printer.out(format!(
        "    in flight: {} foreground, {} background{cap}",
        s.in_flight_foreground, s.in_flight_background
    ));
    let breaker = match &s.breaker {
        BreakerState::Closed => "closed".to_owned(),
        BreakerState::Open { until, trips } => format!(
            "open after {trips} throttle(s): cooling down {} s more",
            ((until - now).max(0) + 999) / 1000
        ),
        BreakerState::HalfOpen {
            probe_in_flight,
            trips,
        } => format!(
            "half-open after {trips} throttle(s){}",
            if *probe_in_flight {
                ", probe in flight"
            } else {
                ""
            }
        ),
    };
    printer.out(format!("    breaker: {breaker}"));
    if let Some(p) = s.brake {
        printer.out(format!(
            "    pacing: Graph reported {:.0}% of a limit used",
            p * 100.0
        ));
    }
    if s.foreground_waiting > 0 {
        printer.out(format!(
            "    foreground requests waiting: {}",
            s.foreground_waiting
        ));
    }
}

fn time(ms: UnixMillis) -> String {
    chrono::DateTime::from_timestamp_millis(ms)
        .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true))
        .unwrap_or_else(|| ms.to_string())
}
