//! `notebridge migrate`: check the Notion target, scan what is needed (foreground), plan, and drain
//! the queue (background); `--resume` drains what is queued.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;
use clap::Args;
use serde_json::json;

use super::output::Printer;
use super::progress::{Frame, Ticker};
use crate::cli::exit::{CliError, Exit};
use crate::clock::{Clock, Jitter};
use crate::engine::{self, Selection};
use crate::failure::{Classify, Next};
use crate::graph::scan::{scan, ScanProgress, ScanResult};
use crate::graph::{Caller, GraphClient};
use crate::limiter::Lane;
use crate::net::Reachability;
use crate::notion::client::{NotionClient, NotionError};
use crate::notion::rate::NotionRate;
use crate::queue::cancel::Cancel;
use crate::queue::lock::RunLock;
use crate::queue::{Migration, RunEnd};
use crate::settings::{parse_duration, Settings};
use crate::store::jobs::{Remaining, RunToken};
use crate::store::Db;

/// Pages worked on at once: enough to keep Graph and Notion both busy, few enough to bound memory.
const WORKERS: usize = 8;
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
}

impl MigrateArgs {
    /// Whether groups or sites are asked for (otherwise only the account's own notebooks).
    pub fn team(&self) -> bool {
        !self.groups.is_empty() || !self.sites.is_empty() || self.all_sources
    }
}

fn parse_max_duration(s: &str) -> Result<Duration, String> {
    let d = parse_duration(s).map_err(|e| format!("{e}; for example: 50m or 2h"))?;
    if d.is_zero() {
        return Err("must be longer than zero; for example: 50m".into());
    }
    Ok(d)
}

/// Runs the migration.
pub fn run(settings: &Settings, printer: &Printer, args: MigrateArgs) -> anyhow::Result<Exit> {
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
    if args.dry_run {
        // Nothing is written to the queue, so a migration running meanwhile is no obstacle.
        return super::runtime()?.block_on(migrate(
            settings,
            printer,
            &args,
            &db,
            &clock,
            &token,
            target,
            started_at,
            &Cancel::new(),
            None,
        ));
    }

    // One migrating process per database.
    let pid = std::process::id() as i64;
    let runtime = super::runtime()?;
    // The lock's clock lives on the runtime that keeps it alive.
    let _entered = runtime.enter();
    let mut lock = match RunLock::acquire(db.clone(), pid, &clock, pid_alive)? {
        Ok(lock) => lock,
        Err(holder) => {
            let started = chrono::DateTime::from_timestamp_millis(holder.started_at)
                .map(|d| d.to_rfc3339())
                .unwrap_or_default();
            return Err(CliError::new(
                Exit::Busy,
                format!(
                "another notebridge (pid {}, started {started}) is migrating with {}; wait for it \
                 or stop it",
                holder.pid,
                settings.db_path.display()
            ),
            )
            .into());
        }
    };
    // The root of the run's stop tree: signals and a lost lock stop it.
    let cancel = Cancel::new();
    lock.keep_alive(clock.clone(), cancel.clone());
    let result = runtime.block_on(migrate(
        settings,
        printer,
        &args,
        &db,
        &clock,
        &token,
        target,
        started_at,
        &cancel,
        Some(lock.token()),
    ));
    if lock.lost() {
        return Err(CliError::new(
            Exit::Busy,
            "another notebridge process took over this database's migration lock while this one \
             was paused; this one stopped and left the work to it",
        )
        .into());
    }
    lock.release()?;
    result
}

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
    cancel: &Cancel,
    owner: Option<&RunToken>,
) -> anyhow::Result<Exit> {
    let started = Instant::now();
    let deadline = args.max_duration.map(|d| started_at + d.as_millis() as i64);
    let jitter = Jitter::from_entropy();
    let rate = Arc::new(NotionRate::new(settings.notion_rate, 3));
    // One record of unreachable services (Graph, sign-in, Notion), waited out until the deadline.
    let reach = Reachability::new(clock.clone());
    reach.set_deadline(deadline);
    let notion = NotionClient::new(&settings.notion_url, token, rate, jitter.clone())
        .with_reachability(reach.clone());

    // Check the target before any work: a token or sharing problem is a usage error.
    let me = notion.me().await.map_err(notion_usage)?;
    let max_upload = me["bot"]["workspace_limits"]["max_file_upload_size_in_bytes"]
        .as_u64()
        .unwrap_or(5 * 1024 * 1024);
    if let Some(t) = &target {
        notion.page(t).await.map_err(notion_usage)?;
    }

    let accounts = engine::select_accounts(
        db,
        Selection {
            account: args.account.as_deref(),
            all_accounts: args.all_accounts,
            resume: args.resume,
        },
    )?;
    let graph = GraphClient::open_sharing(db.clone(), settings, clock.clone(), jitter, reach)?;
    let _network_wait = record_network_wait(db.clone(), graph.reachability().clone());

    if args.resume && accounts.is_empty() {
        printer.note("nothing is queued; plan a migration with `notebridge migrate --to PAGE`");
        return Ok(Exit::Done);
    }
    if args.dry_run {
        return dry_run(
            settings, printer, args, db, &graph, &notion, &accounts, target, clock,
        )
        .await;
    }
    if args.retry_failed {
        let owner = owner.expect("only a dry run has no run lock");
        let n = engine::retry_failed(db, owner, &accounts, clock.now_ms())?;
        printer.note(format!("{n} failed items put back in the queue"));
    }
    let files_per_page = super::estimate::files_per_page(db)?;
    let plans = std::sync::Mutex::new(Vec::new());

    let migration = Migration::new(
        db.clone(),
        graph.clone(),
        notion.clone(),
        max_upload,
        clock.clone(),
        owner.expect("only a dry run has no run lock").clone(),
    )
    .with_cancel(cancel.clone());
    {
        let m = migration.clone();
        tokio::spawn(async move {
            wait_for_stop_signal().await;
            tracing::warn!("stop requested: finishing what is in flight (again to stop at once)");
            m.request_stop();
            // A second request does not wait for in-flight work (which may sit in a long
            // throttle cooldown): the next run takes it up as after a kill.
            wait_for_stop_signal().await;
            eprintln!("stopped at once; run `notebridge migrate --resume` to go on");
            std::process::exit(Exit::WorkRemaining.code().into());
        });
    }
    let ticker = progress(printer, &migration, &accounts, settings);
    // Each account is planned (scanned in the foreground) and drained on its own, side by side.
    let unreadable = std::sync::atomic::AtomicUsize::new(0);
    let prepare = |account: String| {
        let (graph, target, plans) = (&graph, &target, &plans);
        let (notion, unreadable) = (&notion, &unreadable);
        async move {
            if !args.resume {
                let target = target.as_deref().expect("checked above");
                let p = plan(
                    printer, db, graph, notion, &account, args, target, clock, owner,
                )
                .await?;
                unreadable.fetch_add(p.unreadable_sources, Ordering::Relaxed);
            }
            let left = db.account_remaining(&account)?;
            // Before this account's work: what it is and the time its budget implies.
            let user_id = Caller::for_account(db, &account, Lane::Background)?.user_id;
            let p = super::estimate::plan(
                graph.limiter(),
                settings.notion_rate,
                files_per_page,
                &[(account.clone(), user_id, left)],
            )?;
            for line in p.lines() {
                printer.out(format!("plan: {line}"));
            }
            plans.lock().expect("plans poisoned").push(p);
            anyhow::Ok(())
        }
    };
    let end = engine::drain(&migration, &accounts, deadline, WORKERS, prepare).await;
    ticker.finish();
    let end = end?;

    let s = migration.stats();
    let g = graph.counts();
    let n = notion.counts();
    let waited = notion.rate().waited().await;
    let engine::Summary {
        failed,
        blocked,
        pages_done,
        pages_total,
    } = engine::summarise(db, &accounts)?;
    let plan = super::estimate::Plan::merge(plans.into_inner().expect("plans poisoned"));
    let summary = json!({
        "plan": plan,
        "outcome": end,
        "accounts": accounts,
        "pages_done": pages_done,
        "pages_total": pages_total,
        "this_run": {
            "pages": s.pages.load(Ordering::Relaxed),
            "containers": s.containers.load(Ordering::Relaxed),
            "blocks": s.blocks.load(Ordering::Relaxed),
            "files": s.files.load(Ordering::Relaxed),
            "bytes": s.bytes.load(Ordering::Relaxed),
            "links_rewritten": s.links.load(Ordering::Relaxed),
            "workers": WORKERS,
            "most_pages_ahead": s.ahead_peak.load(Ordering::Relaxed),
            "prefetched_bytes": s.prefetched_bytes.load(Ordering::Relaxed),
            "approximations": s.approximations.load(Ordering::Relaxed),
            "placeholders": s.placeholders.load(Ordering::Relaxed),
            "seconds": started.elapsed().as_secs_f64(),
        },
        "graph": {"requests": g.requests, "throttled": g.throttled, "retries": g.retries, "batches": g.batches},
        "notion": {"requests": n.requests, "throttled": n.throttled, "retries": n.retries,
                   "waited_seconds": waited.as_secs_f64()},
        "failed": failed,
        "blocked_by_failures": blocked,
    });
    if printer.json {
        printer.json_line(&summary);
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
            started.elapsed().as_secs_f64()
        ));
        printer.out(format!(
            "Graph: {} requests, {} throttled; Notion: {} requests, {} throttled, {:.1}s waiting on its \
             rate limit; {} approximations (see `notebridge verify`)",
            g.requests,
            g.throttled,
            n.requests,
            n.throttled,
            waited.as_secs_f64(),
            s.approximations.load(Ordering::Relaxed)
        ));
        if failed > 0 {
            printer.out(format!(
                "{failed} items failed ({blocked} more wait on them); `notebridge status` lists them, \
                 `notebridge migrate --resume --retry-failed` tries them again"
            ));
        }
    }
    Ok(match end {
        RunEnd::Stopped => {
            printer.note("stopped with work remaining; run `notebridge migrate --resume` to go on");
            Exit::WorkRemaining
        }
        RunEnd::Finished if failed > 0 || unreadable.into_inner() > 0 => Exit::SomeFailed,
        RunEnd::Finished => Exit::Done,
    })
}

/// What planning one account left: its work, and how many groups or sites could not be read.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Planned {
    /// Work queued for the account (its groups' and sites' included).
    pub left: Remaining,
    /// Sources that could not be listed at all (nothing of them was planned).
    pub unreadable_sources: usize,
}

/// Scans an account (foreground), stores the inventory and plans its selected notebooks; with
/// `--group`, `--site` or `--all-sources`, those sources' (see [`super::migrate_sources`]).
#[allow(clippy::too_many_arguments)]
async fn plan(
    printer: &Printer,
    db: &Arc<Db>,
    graph: &GraphClient,
    notion: &NotionClient,
    account: &str,
    args: &MigrateArgs,
    target: &str,
    clock: &Clock,
    owner: Option<&RunToken>,
) -> anyhow::Result<Planned> {
    let who = Caller::for_account(db, account, Lane::Foreground)?;
    if args.team() {
        let t = super::migrate_sources::Planning {
            printer,
            db,
            graph,
            notion,
            who: &who,
            target,
            clock,
            update: args.update,
            owner,
        };
        return t.plan(args).await;
    }
    printer.note(format!("scanning {account}..."));
    let notebooks = &args.notebooks;
    let meter = graph.limiter().scan_meter(&who.user_id);
    let result = scan(graph, &who, notebooks, Arc::new(ScanProgress::default())).await?;
    super::scan::record_scan_cost(meter);
    super::scan::store_scan(db, account, notebooks, &result, clock.now_ms())?;
    let left = plan_key(
        printer,
        db,
        account,
        account,
        target,
        &result,
        clock,
        args.update,
        owner,
    )?;
    Ok(Planned {
        left,
        unreadable_sources: 0,
    })
}

/// Plans what a scan found under one inventory key (an account's own, or a group's or site's)
/// beneath the Notion page `target`; `label` names it in messages. Returns what is left of the
/// key's work (without the run lock's `owner`, a dry run: what would be).
#[allow(clippy::too_many_arguments)]
pub(super) fn plan_key(
    printer: &Printer,
    db: &Db,
    key: &str,
    label: &str,
    target: &str,
    result: &ScanResult,
    clock: &Clock,
    update: bool,
    owner: Option<&RunToken>,
) -> anyhow::Result<Remaining> {
    let Some(owner) = owner else {
        let (planned, left) = db.preview_plan(key, target, &result.notebooks, clock.now_ms())?;
        for f in &result.failures {
            printer.problem(format!("{label}: {f} (what is in it would not be planned)"));
        }
        printer.note(format!(
            "{label}: {} items would be planned, {} already planned or migrated",
            planned.added.saturating_sub(1),
            planned.already_planned
        ));
        return Ok(left);
    };
    // Items keep the Notion page they were first planned under; say so when that is not `--to`.
    let earlier: Vec<String> = db
        .plan_targets(key)?
        .into_iter()
        .filter(|t| t != target)
        .collect();
    if !earlier.is_empty() {
        printer.note(format!(
            "{label}: what was planned before, and new pages of it, stays under Notion page {}; \
             only new notebooks go under {target} (use a new --db to migrate everything elsewhere)",
            earlier.join(", ")
        ));
    }
    let planned = db
        .create_plan(owner, key, target, &result.notebooks, clock.now_ms())
        .context("planning")?;
    // What could not be listed is not silently left out: its job fails with the reason, so the run
    // ends with exit 4, `status` shows it, and the next `migrate --to` scans it again.
    for f in &result.failures {
        printer.problem(format!("{label}: {f}"));
        let reason = format!(
            "{f}; what is in it was not planned (run `notebridge migrate --to PAGE` again to re-scan)"
        );
        // The scan records only failures of the item itself ([`GraphError::is_item_failure`]).
        let class = crate::failure::Class::item_fails().code();
        db.fail_planned_item(owner, key, f.kind, &f.id, &reason, &class, clock.now_ms())?;
    }
    let rewrites = if update {
        db.plan_rewrites(owner, key, clock.now_ms())?
    } else {
        0
    };
    printer.note(format!(
        "{label}: {} items planned, {} already planned or migrated{}",
        planned.added.saturating_sub(1),
        planned.already_planned,
        if update {
            format!(", {rewrites} changed pages to rewrite")
        } else {
            String::new()
        }
    ));
    Ok(db.remaining_work(key)?)
}

/// `migrate --dry-run`: scans where needed, then prints the plan and its time; nothing is written
/// to Notion or to the queue.
#[allow(clippy::too_many_arguments)]
async fn dry_run(
    settings: &Settings,
    printer: &Printer,
    args: &MigrateArgs,
    db: &Arc<Db>,
    graph: &GraphClient,
    notion: &NotionClient,
    accounts: &[String],
    target: Option<String>,
    clock: &Clock,
) -> anyhow::Result<Exit> {
    let mut work = Vec::new();
    for account in accounts {
        let left = match &target {
            Some(t) if !args.resume => {
                plan(printer, db, graph, notion, account, args, t, clock, None)
                    .await?
                    .left
            }
            _ => db.account_remaining(account)?,
        };
        let user_id = Caller::for_account(db, account, Lane::Background)?.user_id;
        work.push((account.clone(), user_id, left));
    }
    let files = super::estimate::files_per_page(db)?;
    let p = super::estimate::plan(graph.limiter(), settings.notion_rate, files, &work)?;
    if printer.json {
        printer.json_line(&json!({"dry_run": true, "accounts": accounts, "plan": p}));
    } else {
        for line in p.lines() {
            printer.out(format!("plan: {line}"));
        }
        printer.out("dry run: nothing was written to Notion or to the queue");
    }
    Ok(Exit::Done)
}

/// Keeps the migration lock's "waiting for the network since" up to date for `status`; stops when
/// the returned guard is dropped.
fn record_network_wait(db: Arc<Db>, reach: Reachability) -> AbortOnDrop {
    let pid = std::process::id() as i64;
    AbortOnDrop(tokio::spawn(async move {
        let mut last = None;
        loop {
            tokio::time::sleep(Duration::from_secs(1)).await;
            let since = reach.since();
            if since != last {
                match db.record_network_wait(pid, since) {
                    Ok(()) => last = since,
                    Err(e) => tracing::warn!("could not record the wait for the network: {e}"),
                }
            }
        }
    }))
}

/// A task that ends with its owner.
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// The progress display: pages, requests, the reason for a wait, and an ETA from the budget model
/// (what is left, at what the limiter lets background work send, from what the windows hold now).
fn progress(printer: &Printer, m: &Migration, accounts: &[String], settings: &Settings) -> Ticker {
    let m = m.clone();
    let notion_rate = settings.notion_rate;
    let names = super::progress::AccountNames::load(m.db());
    let users: Vec<(String, String)> = accounts
        .iter()
        .filter_map(|a| {
            let user = m.db().account(a).ok().flatten()?.user_id;
            Some((a.clone(), user))
        })
        .collect();
    let assumed = super::estimate::files_per_page(m.db())
        .unwrap_or((super::estimate::ASSUMED_FILES_PER_PAGE, false));
    Ticker::start(
        printer,
        "migrate",
        Duration::from_secs(15),
        Arc::new(move || {
            let (mut done, mut total) = (0i64, 0i64);
            let mut work = Vec::new();
            for (a, user) in &users {
                if let Ok(c) = m.db().account_job_counts(a) {
                    done += c.pages_done;
                    total += c.pages_total;
                }
                if let Ok(left) = m.db().account_remaining(a) {
                    work.push((a.clone(), user.clone(), left));
                }
            }
            let s = m.stats();
            let g = m.graph().counts();
            let n = m.notion().counts();
            let waiting = m
                .graph()
                .reachability()
                .waiting()
                .or_else(|| names.current_wait(m.graph().limiter()));
            // Files per page as this run finds them, once it has read a few pages.
            let pages_now = s.pages.load(Ordering::Relaxed);
            let files = if pages_now >= 5 {
                (
                    s.files.load(Ordering::Relaxed) as f64 / pages_now as f64,
                    true,
                )
            } else {
                assumed
            };
            let eta = super::estimate::plan(m.graph().limiter(), notion_rate, files, &work)
                .ok()
                .map(|p| human_secs(p.seconds));
            Frame {
                done: done as u64,
                total: Some(total as u64),
                unit: "pages",
                eta,
                waiting,
                details: vec![
                    format!("{} files", s.files.load(Ordering::Relaxed)),
                    format!("Graph {} req, {} throttled", g.requests, g.throttled),
                    format!("Notion {} req", n.requests),
                ],
            }
        }),
    )
}

fn human_secs(s: u64) -> String {
    if s >= 3600 {
        format!("{}h{:02}m", s / 3600, (s % 3600) / 60)
    } else if s >= 60 {
        format!("{}m{:02}s", s / 60, s % 60)
    } else {
        format!("{s}s")
    }
}

/// A Notion failure at the start that retrying cannot help (a refused token, target or id) is the
/// user's to fix: exit 2 with the reason. Any other keeps its own meaning (an outage: 75; a missing
/// capability or the block limit: 2, from their class).
fn notion_usage(e: NotionError) -> anyhow::Error {
    match e.class().next {
        Next::Never | Next::Degrade => CliError::usage(e.to_string()).into(),
        Next::Stop | Next::Retry(_) => e.into(),
    }
}

/// The Notion page id in an id or URL (the last 32 hex digits), dashed.
pub fn parse_page_id(s: &str) -> anyhow::Result<String> {
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
        return Err(CliError::usage(format!(
            "--to {s:?} is not a Notion page id or URL; for example: --to \
             https://www.notion.so/Imports-0123456789abcdef0123456789abcdef"
        ))
        .into());
    };
    let t = tail.to_ascii_lowercase();
    Ok(format!(
        "{}-{}-{}-{}-{}",
        &t[..8],
        &t[8..12],
        &t[12..16],
        &t[16..20],
        &t[20..]
    ))
}

pub(super) fn pid_alive(pid: i64) -> bool {
    let Ok(pid) = i32::try_from(pid) else {
        return false;
    };
    // SAFETY: kill with signal 0 only checks whether the process exists.
    let r = unsafe { libc::kill(pid, 0) };
    r == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

async fn wait_for_stop_signal() {
    use tokio::signal::unix::{signal, SignalKind};
    let mut term = match signal(SignalKind::terminate()) {
        Ok(s) => s,
        Err(_) => {
            let _ = tokio::signal::ctrl_c().await;
            return;
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = term.recv() => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
