//! One `migrate` run in the library: check the Notion target, select the accounts, put failed items
//! back when asked, plan each account (scanned in the foreground) and drain its queue (background)
//! side by side, and return what the run did. What happens on the way is told to an
//! [`Observer`]; nothing here prints.

use crate::notion::token::{reported_upload_limit, TokenKind, LARGEST_DOCUMENTED_UPLOAD};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::estimate::{self, Plan};
use super::events::{Event, Observer, Progress};
use super::pending::{command_of, PendingRun};
use super::plan::{Picks, PlanError, Planner};
use super::way::Via;
use super::{drain, retry_failed, select_accounts, summarise, SelectError, Selection, Summary};
use crate::clock::{Clock, Jitter, UnixMillis};
use crate::drive::{DriveClient, DriveCounters};
use crate::failure::{Class, Classify, Meaning, Next, Scope};
use crate::graph::{Caller, GraphClient, GraphCounts, GraphError};
use crate::imports;
use crate::limiter::{Lane, LimiterError};
use crate::net::Reachability;
use crate::notion::client::proof::UpdateProof;
use crate::notion::client::{NotionClient, NotionCounts, NotionError};
use crate::notion::rate::NotionRate;
use crate::notion::writer::WriteError;
use crate::queue::cancel::Cancel;
use crate::queue::lock::RunLock;
use crate::queue::{Migration, RunEnd, RunError, RunStats};
use crate::settings::Settings;
use crate::store::imports::is_files_key;
use crate::store::jobs::RunToken;
use crate::store::layouts::Layout;
use crate::store::notion_items::Conflict;
use crate::store::{Db, StoreError};
use crate::sync::{Applied, Deletions, Pass, SyncError};

/// Pages worked on at once per account unless `NOTEBRIDGE_WORKERS` says otherwise: enough to keep
/// Graph and Notion both busy, few enough to bound memory.
pub const WORKERS: usize = 8;

/// Files up to this size are uploaded when the workspace does not say its limit (Notion's Free
/// plan's).
const DEFAULT_MAX_UPLOAD: u64 = 5 * 1024 * 1024;

/// What a `migrate` run is asked to do: the command's flags, parsed.
#[derive(Clone, Debug)]
pub struct Request {
    /// One account by name.
    pub account: Option<String>,
    /// Every signed-in account.
    pub all_accounts: bool,
    /// The Notion page (dashed id) to plan under; `None` only with `resume`.
    pub target: Option<String>,
    /// What to take from OneNote.
    pub picks: Picks,
    /// Drain what is queued without planning anew.
    pub resume: bool,
    /// Take no new work after this time (unix ms).
    pub deadline: Option<UnixMillis>,
    /// Put permanently failed items back in the queue first.
    pub retry_failed: bool,
    /// Plan rewrites of pages changed in OneNote since they were migrated.
    pub update: bool,
    /// Plan and time the work, write nothing to Notion or the queue.
    pub dry_run: bool,
    /// Pages in flight per account.
    pub workers: usize,
    /// Paths of OneNote's own files to migrate instead of accounts (`--from`): each is a source
    /// of its own, read with no account and no Graph request.
    pub from: Vec<std::path::PathBuf>,
    /// How page content is read for an account's notebooks (`--via`).
    pub via: Via,
    /// How the target is laid out in Notion (`--layout`), recorded with its first plan; `None`:
    /// as recorded, or `pages` for a target never planned.
    pub layout: Option<Layout>,
    /// `sync`: after the queue, mirror OneNote's renames, moves, order and deletions (what to do
    /// with deletions); its target defaults to each source's recorded one.
    pub sync: Option<Deletions>,
}

impl Default for Request {
    fn default() -> Self {
        Self {
            account: None,
            all_accounts: false,
            target: None,
            picks: Picks::default(),
            resume: false,
            deadline: None,
            retry_failed: false,
            update: false,
            dry_run: false,
            workers: WORKERS,
            from: Vec::new(),
            via: Via::Auto,
            layout: None,
            sync: None,
        }
    }
}

/// This process as the run lock knows it.
#[derive(Clone, Copy, Debug)]
pub struct Process {
    /// Its id, recorded with the lock.
    pub pid: i64,
    /// Whether the process with this id is alive (a dead holder's lock is taken over).
    pub is_alive: fn(i64) -> bool,
}

/// What a run works with, made by the caller: the settings, the state, time and randomness, the
/// stop tree's root and this process for the run lock.
pub struct Services<'a> {
    /// The services' addresses, limits and rates.
    pub settings: &'a Settings,
    /// The Notion integration's token.
    pub notion_token: &'a str,
    /// The state database.
    pub db: &'a Arc<Db>,
    /// Time.
    pub clock: &'a Clock,
    /// Randomness for backoff jitter.
    pub jitter: Jitter,
    /// The root of the run's stop tree (signals and a lost lock stop it).
    pub cancel: &'a Cancel,
    /// Who takes the run lock: one migrating process per database. A dry run, which writes
    /// nothing to the queue, does not take it (a migration running meanwhile is no obstacle).
    pub process: Process,
}

/// Why a run could not be done (as opposed to an item failing).
#[derive(Debug, thiserror::Error)]
pub enum MigrateError {
    /// Notion refused the token or the target page before any work.
    #[error(transparent)]
    Target(NotionError),
    /// No accounts could be selected.
    #[error(transparent)]
    Select(#[from] SelectError),
    /// Planning failed.
    #[error(transparent)]
    Plan(#[from] PlanError),
    /// The queue's run ended in a failure.
    #[error(transparent)]
    Run(#[from] RunError),
    /// The state database failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The Graph client could not be made, or an account is not signed in.
    #[error(transparent)]
    Graph(#[from] GraphError),
    /// The limiter's budgets could not be read for the plan's time.
    #[error(transparent)]
    Limiter(#[from] LimiterError),
    /// `--resume --from PATH` for a path never planned.
    #[error(
        "nothing was planned from {0}; plan it with `notebridge migrate --from PATH --to PAGE`"
    )]
    NotImported(String),
    /// Planning without a Notion page to plan under.
    #[error("a migration that plans needs the Notion page to migrate under (--to)")]
    NoTarget,
    /// `sync` of a source never migrated, without `--to`.
    #[error(
        "{0} was never migrated: give the Notion page to migrate it under (--to), as for `migrate`"
    )]
    NeverMigrated(String),
    /// `sync`'s structural pass stopped.
    #[error(transparent)]
    Sync(#[from] SyncError),
    /// Another live process holds the run lock of this database.
    #[error(
        "another notebridge (pid {pid}, started {started}) is migrating with {db}; wait for it \
         or stop it"
    )]
    Busy {
        /// The holder's process id.
        pid: i64,
        /// When it started (RFC 3339).
        started: String,
        /// The database.
        db: String,
    },
    /// Another process took the run lock over while this one was paused past its staleness.
    #[error(
        "another notebridge process took over this database's migration lock while this one was \
         paused; this one stopped and left the work to it"
    )]
    LockLost,
}

impl Classify for MigrateError {
    fn class(&self) -> Class {
        match self {
            // A refusal at the start that retrying cannot help (a token, target or id) is the
            // user's to fix; an outage keeps its own meaning.
            MigrateError::Target(e) => {
                let c = e.class();
                match c.next {
                    Next::Never | Next::Degrade => {
                        Class::new(Scope::Run, Next::Never).means(Meaning::Usage)
                    }
                    Next::Stop | Next::Retry(_) => c,
                }
            }
            MigrateError::Select(e) => e.class(),
            MigrateError::Plan(e) => e.class(),
            MigrateError::Run(e) => e.class(),
            MigrateError::Store(e) => e.class(),
            MigrateError::Graph(e) => e.class(),
            MigrateError::Limiter(e) => e.class(),
            MigrateError::Sync(e) => e.class(),
            MigrateError::NoTarget
            | MigrateError::NotImported(_)
            | MigrateError::NeverMigrated(_) => {
                Class::new(Scope::Run, Next::Never).means(Meaning::Usage)
            }
            MigrateError::Busy { .. } | MigrateError::LockLost => {
                Class::new(Scope::Run, Next::Never).means(Meaning::Busy)
            }
        }
    }
}

impl MigrateError {
    /// Whether `--resume` goes on with the run once its cause is dealt with: Notion refusing or
    /// blocking the token or the target (a planning run's request is kept until its plan is
    /// recorded), or a stop that parks the work.
    pub fn resumable(&self) -> bool {
        match self {
            MigrateError::Target(_)
            | MigrateError::Run(RunError::Notion(_) | RunError::Write(WriteError::Notion(_)))
            | MigrateError::Sync(SyncError::Notion(_)) => true,
            e => e.class().next == Next::Stop,
        }
    }
}

/// What a run did.
#[derive(Debug)]
pub enum Outcome {
    /// `--resume` with nothing queued.
    NothingQueued,
    /// `--dry-run`: the plan and its time; nothing was written.
    DryRun {
        /// The accounts covered.
        accounts: Vec<String>,
        /// Their plan.
        plan: Plan,
        /// `sync`: the renames, moves, reorders and deletions it would apply.
        sync: Option<Box<Applied>>,
    },
    /// The queue was drained (or stopped). Boxed: a report is much larger than the other outcomes.
    Ran(Box<Report>),
}

/// What a run that drained the queue did.
#[derive(Debug)]
pub struct Report {
    /// The accounts covered.
    pub accounts: Vec<String>,
    /// The accounts' plans, merged (none when no account got as far as its plan).
    pub plan: Option<Plan>,
    /// Whether it finished or stopped with work left.
    pub end: RunEnd,
    /// What the accounts' queues hold after it.
    pub summary: Summary,
    /// Groups or sites that could not be listed at all.
    pub unreadable_sources: usize,
    /// Pages edited in Notion and left as they are, their OneNote version kept beside them (this
    /// run's and earlier runs').
    pub conflicts: Vec<Conflict>,
    /// The run's counters.
    pub stats: Arc<RunStats>,
    /// Graph requests of the run.
    pub graph: GraphCounts,
    /// Drive requests and bytes of the run (section files).
    pub drive: DriveCounters,
    /// Notion requests of the run.
    pub notion: NotionCounts,
    /// Time spent waiting on Notion's rate.
    pub notion_waited: Duration,
    /// The run's length in seconds.
    pub seconds: f64,
    /// Pages in flight per account.
    pub workers: usize,
    /// `sync`'s structural pass (none when the queue did not finish, or for `migrate`).
    pub sync: Option<Applied>,
}

/// Runs `migrate` as `req` asks, under the run lock unless it is a dry run, telling `observer`
/// what happens.
pub async fn migrate(
    svc: Services<'_>,
    req: &Request,
    observer: &dyn Observer,
) -> Result<Outcome, MigrateError> {
    if !req.resume && req.target.is_none() && req.sync.is_none() {
        return Err(MigrateError::NoTarget);
    }
    if req.dry_run {
        return run(&svc, req, None, observer).await;
    }
    let Process { pid, is_alive } = svc.process;
    let (db, clock) = (svc.db.clone(), svc.clock.clone());
    let taken = svc
        .db
        .call(move |_| RunLock::acquire(db, pid, &clock, is_alive))
        .await?;
    let mut lock = match taken {
        Ok(lock) => lock,
        Err(holder) => {
            return Err(MigrateError::Busy {
                pid: holder.pid,
                started: chrono::DateTime::from_timestamp_millis(holder.started_at)
                    .map(|d| d.to_rfc3339())
                    .unwrap_or_default(),
                db: svc.settings.db_path.display().to_string(),
            })
        }
    };
    // A lost lock stops the run's stop tree: going on would run the same jobs twice.
    lock.keep_alive(svc.clock.clone(), svc.cancel.clone());
    let outcome = run(&svc, req, Some(lock.token()), observer).await;
    if lock.lost() {
        return Err(MigrateError::LockLost);
    }
    svc.db.call(move |_| lock.release()).await?;
    outcome
}

/// The run itself, by the holder of the run lock `owner` (none for a dry run). A resume after a
/// planning run that stopped before its plan was recorded goes on with that run (what the advice
/// to resume promised); a planning run that ends in an error a resume cannot help (a usage error)
/// is no longer pending.
async fn run(
    svc: &Services<'_>,
    req: &Request,
    owner: Option<&RunToken>,
    observer: &dyn Observer,
) -> Result<Outcome, MigrateError> {
    let db = svc.db;
    let command = command_of(req);
    let continued = match (req.resume, owner) {
        (true, Some(_)) => {
            let kept = db.call(move |db| db.pending_run(command)).await?;
            kept.as_deref()
                .and_then(PendingRun::from_json)
                .filter(|p| p.fits(req))
                .map(|p| {
                    observer.event(Event::Note(format!(
                        "going on with the {command} ({}) that stopped before its plan was \
                         recorded",
                        p.describe()
                    )));
                    p.continued_by(req)
                })
        }
        _ => None,
    };
    let req = continued.as_ref().unwrap_or(req);
    let outcome = run_request(svc, req, owner, observer).await;
    if let Err(e) = &outcome {
        if !req.resume && owner.is_some() && !e.resumable() {
            db.call(move |db| db.forget_pending_run(command)).await?;
        }
    }
    outcome
}

/// [`run`] of one request.
async fn run_request(
    svc: &Services<'_>,
    req: &Request,
    owner: Option<&RunToken>,
    observer: &dyn Observer,
) -> Result<Outcome, MigrateError> {
    let &Services {
        settings,
        notion_token,
        db,
        clock,
        ref jitter,
        cancel,
        process: _,
    } = svc;
    let started = clock.now_ms();
    let command = command_of(req);
    let rate = Arc::new(NotionRate::open(
        db.clone(),
        notion_token,
        settings.notion_rate,
        clock.clone(),
    ));
    // One record of unreachable services (Graph, sign-in, Notion), waited out until the deadline.
    let reach = Reachability::new(clock.clone());
    reach.set_deadline(req.deadline);
    let notion = NotionClient::new(&settings.notion_url, notion_token, rate, jitter.clone())
        .with_backoff_base(settings.retries.pause)
        .with_reachability(reach.clone())
        .with_clock(clock.clone());

    // A mistyped `--from` is named at once, before Notion is asked anything (an unreachable Notion
    // is waited out until the deadline). A resume reads no path again: its sections were recorded.
    if !req.resume {
        for p in &req.from {
            imports::check_reachable(p).await.map_err(PlanError::from)?;
        }
    }
    // What a planning run was asked is kept until its plan is recorded, so that a stop before
    // that (Notion refusing, an outage) leaves `--resume` something to go on with.
    if !req.resume && owner.is_some() {
        let mut from = Vec::new();
        for p in &req.from {
            from.push(imports::absolute(p).map_err(PlanError::from)?);
        }
        let (kept, now) = (PendingRun::of(req, &from).to_json(), clock.now_ms());
        db.call(move |db| db.record_pending_run(command, &kept, now))
            .await?;
    }
    // Check the target before any work: a token or sharing problem is the user's to fix.
    let me = notion.me().await.map_err(MigrateError::Target)?;
    let token = TokenKind::of(&me);
    tracing::info!(token = %token.describe(), "Notion token");
    let notion = notion.with_personal_token(token.is_personal());
    // A personal access token is told no limit: files go up to the largest Notion documents, and
    // one over the workspace's limit comes back refused and becomes a placeholder with that reason.
    let max_upload = reported_upload_limit(&me).unwrap_or(if token.is_personal() {
        LARGEST_DOCUMENTED_UPLOAD
    } else {
        DEFAULT_MAX_UPLOAD
    });
    if let Some(t) = &req.target {
        notion.page(t).await.map_err(MigrateError::Target)?;
    }

    let (account, all_accounts, resume) = (req.account.clone(), req.all_accounts, req.resume);
    let syncing = req.sync.is_some();
    let from = req.from.clone();
    let accounts = db
        .call(move |db| {
            if from.is_empty() {
                // `sync --resume` goes on with the structural steps even when nothing is
                // queued: the accounts are chosen as a sync chooses them.
                let sel = Selection {
                    account: account.as_deref(),
                    all_accounts,
                    resume: resume && !syncing,
                };
                Ok(select_accounts(db, sel)?)
            } else {
                import_keys(db, &from, resume)
            }
        })
        .await?;
    // `sync` goes on under each source's recorded target unless `--to` names one; a source never
    // migrated needs `--to`.
    let mut targets: std::collections::HashMap<String, String> = Default::default();
    if !req.resume {
        for account in &accounts {
            let t = match (&req.target, req.sync) {
                (Some(t), _) => t.clone(),
                (None, _) => {
                    let k = account.clone();
                    let (recorded, label) = db
                        .call(move |db| {
                            Ok::<_, StoreError>((
                                db.plan_targets_in_order(&k)?.into_iter().next(),
                                plan_label(db, &k)?,
                            ))
                        })
                        .await?;
                    recorded.ok_or(MigrateError::NeverMigrated(label))?
                }
            };
            targets.insert(account.clone(), t);
        }
    }
    // Update content (the link pass, `--update`, `sync`'s moves, trashing) is proven under each
    // target the run writes under, by an update that changes nothing, just before the run's first
    // write (`notion::proof`): not met after half a migration, and not sent by a run that finds
    // nothing to change. A dry run writes nothing.
    let notion = if req.dry_run {
        notion
    } else {
        let (keys, planned) = (
            accounts.clone(),
            targets.values().cloned().collect::<Vec<_>>(),
        );
        let targets = db
            .call(move |db| {
                let mut all: std::collections::BTreeSet<String> = planned.into_iter().collect();
                for k in &keys {
                    all.extend(db.plan_targets(k)?);
                }
                Ok::<_, crate::store::StoreError>(all)
            })
            .await?;
        notion.with_update_proof(Arc::new(UpdateProof::new(targets)))
    };
    let graph =
        GraphClient::open_sharing(db.clone(), settings, clock.clone(), jitter.clone(), reach)?;
    // Only an account's notebooks need the Microsoft app (and say so before any work); imports
    // from files never ask for a token, so a run of them needs no client id.
    let reads_accounts = accounts.iter().any(|k| !is_files_key(k));
    if reads_accounts {
        graph.tokens().require_app().map_err(GraphError::from)?;
    }
    // Section files come through the drive API, paced apart from OneNote's windows, with the
    // same tokens.
    let drive = DriveClient::open(
        db.clone(),
        settings,
        graph.tokens().clone(),
        clock.clone(),
        jitter.clone(),
    );
    let _network_wait = record_network_wait(db.clone(), graph.reachability());

    if req.resume && accounts.is_empty() {
        return Ok(Outcome::NothingQueued);
    }
    if let (true, Some(asked)) = (req.resume, req.layout) {
        let keys = accounts.clone();
        db.call(move |db| check_resumed_layout(db, &keys, asked))
            .await?;
    }
    // Plans as the run lock's holder, or previews when there is none (a dry run).
    // `sync` reads again every source an account's plans went to: its own notebooks and each
    // group and site migrated before.
    let mut picks_of: std::collections::HashMap<String, Picks> = Default::default();
    if syncing && !req.resume {
        for account in accounts.iter().filter(|k| !is_files_key(k)) {
            let keys = queued_keys(db, std::slice::from_ref(account)).await?;
            let mut picks = Picks::default();
            for k in &keys {
                match crate::store::sources::source_of_key(k) {
                    Some((crate::store::sources::SourceKind::Group, id)) => {
                        picks.groups.push(id.to_owned())
                    }
                    Some((crate::store::sources::SourceKind::Site, id)) => {
                        picks.sites.push(id.to_owned())
                    }
                    _ => {}
                }
            }
            let own_planned = {
                let a = account.clone();
                db.call(move |db| db.plan_targets(&a)).await?
            };
            picks.own = picks.team() && !own_planned.is_empty();
            picks_of.insert(account.clone(), picks);
        }
    }
    let moves = Mutex::new(Vec::new());
    let planner = |target: &str, account: &str| Planner {
        db,
        graph: &graph,
        notion: &notion,
        clock,
        picks: picks_of.get(account).unwrap_or(&req.picks),
        target: target.to_owned(),
        update: req.update && owner.is_some(),
        owner,
        observer,
        via: req.via,
        drive: &drive,
        layout: req.layout,
        moves: &moves,
    };
    let target_of = |account: &str| targets.get(account).map(String::as_str);
    if req.dry_run {
        let mut work = Vec::new();
        for account in &accounts {
            let target = target_of(account);
            let (left, files) = match target {
                Some(t) => {
                    let p = planner(t, account).plan(account).await?;
                    (Some(p.left), Some(p.files))
                }
                None => (None, None),
            };
            let (account, target, asked) = (account.clone(), target.map(str::to_owned), req.layout);
            work.push(
                db.call(move |db| {
                    // A target being planned is laid out as recorded, or as asked; a resumed
                    // account's work as its targets were recorded.
                    let layouts = match &target {
                        Some(t) => vec![db.layout_of(t)?.or(asked).unwrap_or_default()],
                        None => db.account_layouts(&account)?,
                    };
                    let left = match left {
                        Some(l) => l,
                        None => db.account_remaining(&account)?,
                    };
                    let files = match files {
                        Some(f) => f,
                        None => db.account_files_left(&account)?,
                    };
                    Ok::<_, MigrateError>(estimate::Work {
                        label: plan_label(db, &account)?,
                        user_id: graph_user(db, &account)?,
                        left,
                        files,
                        layouts,
                    })
                })
                .await?,
            );
        }
        let (limiter, rate) = (graph.limiter().clone(), notion.rate().clone());
        let plan = db
            .call(move |db| {
                let files = estimate::files_per_page(db)?;
                Ok::<_, MigrateError>(estimate::plan(&limiter, rate.window(), files, &work)?)
            })
            .await?;
        let sync = match req.sync {
            Some(deletions) => {
                let keys = queued_keys(db, &accounts).await?;
                let pass = Pass {
                    db,
                    notion: &notion,
                    owner: None,
                    clock,
                    deletions,
                    deadline: None,
                    cancel,
                };
                Some(Box::new(pass.run(&keys).await?))
            }
            None => None,
        };
        return Ok(Outcome::DryRun {
            accounts,
            plan,
            sync,
        });
    }
    let owner = owner.expect("only a dry run runs without the run lock");
    if req.retry_failed {
        let (token, keys, now) = (owner.clone(), accounts.clone(), clock.now_ms());
        let n = db
            .call(move |db| retry_failed(db, &token, &keys, now))
            .await?;
        observer.event(Event::RetriedFailed(n));
    }
    let files_per_page = db.call(estimate::files_per_page).await?;
    let plans = Mutex::new(Vec::new());
    let migration = Migration::new(
        db.clone(),
        graph.clone(),
        notion.clone(),
        max_upload,
        clock.clone(),
        owner.clone(),
    )
    .with_cancel(cancel.clone())
    .with_retries(settings.retries);
    // Imports read their own files: no drive downloads to make or clean up.
    let migration = if reads_accounts {
        migration.with_drive(drive.clone())
    } else {
        migration
    };
    observer.event(Event::Draining(Box::new(Progress::new(
        &migration, &accounts,
    ))));
    // Each account is planned (scanned in the foreground) and drained on its own, side by side.
    let unreadable = AtomicUsize::new(0);
    let stats = migration.stats();
    let retrying = req.retry_failed;
    // Accounts whose plan is recorded: once every one is, the run is no longer pending.
    let (planned, planning) = (AtomicUsize::new(0), targets.len());
    let prepare = |account: String| {
        let (graph, plans, unreadable, planner, notion, planned) =
            (&graph, &plans, &unreadable, &planner, &notion, &planned);
        async move {
            if let Some(t) = target_of(&account) {
                let p = planner(t, &account).plan(&account).await?;
                unreadable.fetch_add(p.unreadable_sources, Ordering::Relaxed);
                if planned.fetch_add(1, Ordering::SeqCst) + 1 == planning {
                    db.call(move |db| db.forget_pending_run(command)).await?;
                }
                // New work changes the progress line's total.
                stats.transitions.send_modify(|n| *n += 1);
            } else if retrying && !is_files_key(&account) {
                // Sections Graph listed empty that their files could not confirm: their notebooks
                // are scanned again and the files read, so their retried jobs find their pages.
                for (target, picks) in rescans(db, &account).await? {
                    let mut p = planner(&target, &account);
                    p.picks = &picks;
                    p.plan(&account).await?;
                    stats.transitions.send_modify(|n| *n += 1);
                }
            }
            // Before this account's work: what it is and the time its budget implies.
            let (limiter, rate) = (graph.limiter().clone(), notion.rate().clone());
            let p = db
                .call(move |db| {
                    let work = estimate::Work {
                        label: plan_label(db, &account)?,
                        user_id: graph_user(db, &account)?,
                        left: db.account_remaining(&account)?,
                        files: db.account_files_left(&account)?,
                        layouts: db.account_layouts(&account)?,
                    };
                    Ok::<_, MigrateError>(estimate::plan(
                        &limiter,
                        rate.window(),
                        files_per_page,
                        &[work],
                    )?)
                })
                .await?;
            plans.lock().expect("plans poisoned").push(p.clone());
            observer.event(Event::Plan(p));
            Ok::<_, MigrateError>(())
        }
    };
    let mut end = drain(&migration, &accounts, req.deadline, req.workers, prepare).await?;
    // `sync` mirrors the structure once what is new exists and what changed is rewritten.
    let sync = match req.sync {
        Some(deletions) if end == RunEnd::Finished => {
            let keys = queued_keys(db, &accounts).await?;
            let pass = Pass {
                db,
                notion: &notion,
                owner: Some(owner),
                clock,
                deletions,
                deadline: req.deadline,
                cancel,
            };
            let mut applied = pass.run(&keys).await?;
            for (_, m) in moves.lock().expect("moves poisoned").iter() {
                applied.recognised(m);
            }
            if applied.stopped {
                end = RunEnd::Stopped;
            }
            Some(applied)
        }
        _ => None,
    };
    let keys = accounts.clone();
    let (summary, conflicts) = db
        .call(move |db| Ok::<_, StoreError>((summarise(db, &keys)?, db.account_conflicts(&keys)?)))
        .await?;
    Ok(Outcome::Ran(Box::new(Report {
        plan: Plan::merge(plans.into_inner().expect("plans poisoned")),
        accounts,
        end,
        summary,
        unreadable_sources: unreadable.into_inner(),
        conflicts,
        stats: migration.stats().clone(),
        graph: graph.counts(),
        drive: drive.counters(),
        notion: notion.counts(),
        notion_waited: notion.rate().waited(),
        seconds: (clock.now_ms() - started) as f64 / 1000.0,
        workers: req.workers,
        sync,
    })))
}

/// What a resumed run with `--retry-failed` scans again for `account`: per inventory key with
/// sections Graph listed empty that nothing confirmed (`engine::listed_empty`), the key's first
/// target and picks naming those notebooks in its source.
async fn rescans(db: &Arc<Db>, account: &str) -> Result<Vec<(String, Picks)>, StoreError> {
    let keys = queued_keys(db, &[account.to_owned()]).await?;
    db.call(move |db| {
        let mut out = Vec::new();
        for key in keys {
            let notebooks = db.unconfirmed_notebooks(&key)?;
            let Some(target) = db.plan_targets_in_order(&key)?.into_iter().next() else {
                continue;
            };
            if notebooks.is_empty() {
                continue;
            }
            let mut picks = Picks {
                notebooks,
                ..Picks::default()
            };
            match crate::store::sources::source_of_key(&key) {
                Some((crate::store::sources::SourceKind::Group, id)) => {
                    picks.groups.push(id.to_owned())
                }
                Some((crate::store::sources::SourceKind::Site, id)) => {
                    picks.sites.push(id.to_owned())
                }
                _ => {}
            }
            out.push((target, picks));
        }
        Ok(out)
    })
    .await
}

/// The inventory keys of `accounts` with their groups' and sites' (an import is its own key).
async fn queued_keys(db: &Arc<Db>, accounts: &[String]) -> Result<Vec<String>, StoreError> {
    let accounts = accounts.to_vec();
    db.call(move |db| {
        let mut keys = Vec::new();
        for a in &accounts {
            for k in db.queued_keys(a)? {
                if !keys.contains(&k) {
                    keys.push(k);
                }
            }
            if !keys.contains(a) {
                keys.push(a.clone());
            }
        }
        Ok(keys)
    })
    .await
}

/// `--resume --layout`: every target the resumed work is under must have been planned with that
/// layout (resuming keeps the recorded one; it cannot change it).
fn check_resumed_layout(db: &Db, keys: &[String], asked: Layout) -> Result<(), MigrateError> {
    for key in keys {
        for target in db.plan_targets(key)? {
            match db.layout_of(&target)? {
                Some(recorded) if recorded != asked => {
                    return Err(PlanError::Layout {
                        target,
                        recorded,
                        asked,
                    }
                    .into())
                }
                _ => {}
            }
        }
    }
    Ok(())
}

/// How the plan names an inventory key's work: the account, or an import's path.
fn plan_label(db: &Db, key: &str) -> Result<String, StoreError> {
    if is_files_key(key) {
        return Ok(db.import_path(key)?.unwrap_or_else(|| key.to_owned()));
    }
    Ok(key.to_owned())
}

/// The Graph user an inventory key's work is read as: the signed-in account's; none for an
/// import from files, which reads nothing from Graph.
fn graph_user(db: &Db, key: &str) -> Result<Option<String>, GraphError> {
    if is_files_key(key) {
        return Ok(None);
    }
    Ok(Some(
        Caller::for_account(db, key, Lane::Background)?.user_id,
    ))
}

/// The inventory keys of the imports of `paths` (`--from`), recorded on first use; with `resume`
/// only imports planned before, in the order given.
fn import_keys(
    db: &Db,
    paths: &[std::path::PathBuf],
    resume: bool,
) -> Result<Vec<String>, MigrateError> {
    let mut keys = Vec::new();
    for p in paths {
        let path = imports::absolute(p).map_err(PlanError::from)?;
        let shown = path.display().to_string();
        let key = if resume {
            // Recorded by a `--from` that could not read it, it was never planned either.
            db.import_key(&shown)?
                .filter(|k| db.plan_targets(k).is_ok_and(|t| !t.is_empty()))
                .ok_or_else(|| MigrateError::NotImported(shown.clone()))?
        } else {
            db.register_import(&shown)?
        };
        if !keys.contains(&key) {
            keys.push(key);
        }
    }
    Ok(keys)
}

/// Keeps the migration lock's "waiting for the network since" up to date for `status`: written
/// when it changes (off the runtime), never on a timer; stops when the returned guard is dropped.
fn record_network_wait(db: Arc<Db>, reach: &Reachability) -> AbortOnDrop {
    let pid = std::process::id() as i64;
    let mut since = reach.watch();
    AbortOnDrop(tokio::spawn(async move {
        while since.changed().await.is_ok() {
            let now = *since.borrow_and_update();
            if let Err(e) = db.call(move |db| db.record_network_wait(pid, now)).await {
                tracing::warn!("could not record the wait for the network: {e}");
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::Service;

    #[tokio::test(start_paused = true)]
    async fn the_wait_for_the_network_is_recorded_when_it_changes() {
        let dir = tempfile::tempdir().unwrap();
        let db = Arc::new(Db::open(&dir.path().join("s.db")).unwrap());
        let pid = std::process::id() as i64;
        db.acquire_run_lock(pid, "run", 1, Duration::from_secs(90), |_| false)
            .unwrap()
            .unwrap();
        let clock = Clock::anchored_at(1_000_000);
        let reach = Reachability::new(clock.clone());
        let _recording = record_network_wait(db.clone(), &reach);
        let since = || db.run_lock_record().unwrap().unwrap().unreachable_since;
        let jitter = Jitter::seeded(1);
        // The attempt's own wait (a quarter of a second) is all it takes: no second-long round.
        reach.wait(Service::Notion, 1, &jitter).await.unwrap();
        assert_eq!(since(), Some(1_000_000));
        reach.answered(Service::Notion);
        // Written as soon as the recorder has run, with no timer in between.
        tokio::time::sleep(Duration::from_millis(1)).await;
        assert_eq!(since(), None);
    }
}
