//! Draining the job queue: the run's job graph is loaded once and driven in memory
//! ([`graph`], `scheduler`); workers fetch page content and resources from Graph in the background
//! lane (or read them from section files: `drive_pages` for a synced notebook's, `file_pages` for
//! an import's), convert, and write to Notion exactly once. Several pages are in flight at a time, so Graph
//! fetches of one page overlap Notion writes of another, and memory stays bounded by the number of
//! workers whatever the notebook's size.

pub mod big_page;
pub mod cancel;
mod drive_pages;
mod file_pages;
pub mod graph;
pub mod links;
pub mod lock;
pub mod prefetch;
mod scheduler;
pub mod source_page;

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use serde::Serialize;

use crate::clock::{Clock, UnixMillis};
use bytes::Bytes;

use crate::convert::{
    convert_page_owned, Block, ConvertOptions, ConvertedPage, Ink, MediaSource, MAX_PAGE_BYTES,
};
use crate::drive::{DriveClient, DriveCounters, DriveError};
use crate::failure::{Class, Classify, Meaning, Next, RetryBudget, Scope};
use crate::graph::sources::{account_of_key, root_of_key};
use crate::graph::{Caller, GraphClient, GraphError};
use crate::ink::{self, split_multipart, PageDrawings};
use crate::limiter::Lane;
use crate::notion::client::{NotionClient, NotionError};
use crate::notion::item::{self, ItemRecord};
use crate::notion::journal::Journal;
use crate::notion::plan;
use crate::notion::writer::{Fetch, NewPage, Resource, WriteError, WriteStats, Writer};
use crate::store::imports::is_files_key;
use crate::store::jobs::{Job, JobKind, RunToken};
use crate::store::notion_items::{ItemKind, ItemState, Unfinished, Written};
use crate::store::{Db, StoreError};
use big_page::{BigPages, BigPermit};
use cancel::Cancel;
use prefetch::Prefetched;
use scheduler::Turn;

/// An item's retries in all ([`crate::failure::ITEM_RETRIES`], the client's and the writer's
/// included): a failure the client retried is not retried again on top.
const JOB_RETRIES: RetryBudget = crate::failure::ITEM_RETRIES;
/// Children of one parent in flight at once. Siblings are created one after another, so more
/// workers on one parent would only wait in line; the others take the next parent's pages, whose
/// creation runs beside (pages ahead of their turn: at most this many per parent).
const PER_PARENT: usize = 3;

/// What the run is asked to do.
#[derive(Clone, Debug)]
pub struct RunOptions {
    /// Accounts whose jobs to run (all when empty).
    pub accounts: Vec<String>,
    /// Take no new work after this time (unix ms); waits that would pass it stop the run.
    pub deadline: Option<UnixMillis>,
    /// Pages worked on at once, per account.
    pub workers: usize,
}

/// Errors that end the run (as opposed to failing one item).
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The state database failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// Sign-in is needed, or the limiter failed.
    #[error(transparent)]
    Graph(GraphError),
    /// A worker died (a bug): the run stops; what it held is taken up by the next run.
    #[error("a migration worker stopped unexpectedly: {0}")]
    Worker(String),
    /// Notion refuses every further write (a bad token, a missing capability, the workspace block
    /// limit): the run stops with nothing marked failed.
    #[error(transparent)]
    Notion(NotionError),
    /// Writing a page met a failure that ends the run (Notion refusing every further write, a file
    /// download that needs a sign-in).
    #[error(transparent)]
    Write(WriteError),
    /// A created Notion page could not be recorded: going on could create it twice.
    #[error("could not record a created Notion page: {0}")]
    Unrecorded(String),
    /// Reading a section file met a failure that ends the run (a sign-in, a throttle longer than
    /// the time left, the state folder).
    #[error(transparent)]
    Drive(DriveError),
}

impl Classify for RunError {
    fn class(&self) -> Class {
        match self {
            RunError::Store(e) => e.class(),
            RunError::Graph(e) => e.class(),
            RunError::Notion(e) => e.class(),
            RunError::Write(e) => e.class(),
            RunError::Drive(e) => e.class(),
            // Bugs: nothing the user can do but report them.
            RunError::Worker(_) | RunError::Unrecorded(_) => Class::new(Scope::Run, Next::Never),
        }
    }
}

/// Counters of one run.
#[derive(Debug, Default)]
pub struct RunStats {
    /// OneNote pages written.
    pub pages: AtomicU64,
    /// Notebook, section group and section pages created.
    pub containers: AtomicU64,
    /// Blocks written.
    pub blocks: AtomicU64,
    /// Files uploaded.
    pub files: AtomicU64,
    /// Bytes uploaded.
    pub bytes: AtomicU64,
    /// Items failed for good in this run.
    pub failed: AtomicU64,
    /// Approximations reported by the converter.
    pub approximations: AtomicU64,
    /// Resources replaced by placeholders.
    pub placeholders: AtomicU64,
    /// Links rewritten by the link pass.
    pub links: AtomicU64,
    /// Pages to be created whose content is fetched and whose write has not ended, now (they
    /// wait for their turn, or are being written).
    pub ahead: AtomicU64,
    /// The most pages that were ever ahead at once (at most the workers: each holds one).
    pub ahead_peak: AtomicU64,
    /// Bytes of files fetched before their page's turn.
    pub prefetched_bytes: AtomicU64,
    /// Section files parsed for imports from files (once per section while its pages are
    /// converted, not once per page).
    pub sections_opened: AtomicU64,
    /// Counts the job transitions recorded (and plans added): what a progress display waits on.
    pub transitions: tokio::sync::watch::Sender<u64>,
    /// What was read from section files in OneDrive or SharePoint (`--via`).
    pub from_drive: drive_pages::FileStats,
}

/// One page counted in [`RunStats::ahead`] while it lives.
struct Ahead<'a>(&'a RunStats);

impl<'a> Ahead<'a> {
    fn enter(stats: &'a RunStats) -> Self {
        let now = stats.ahead.fetch_add(1, Ordering::SeqCst) + 1;
        stats.ahead_peak.fetch_max(now, Ordering::SeqCst);
        Ahead(stats)
    }
}

impl Drop for Ahead<'_> {
    fn drop(&mut self) {
        self.0.ahead.fetch_sub(1, Ordering::SeqCst);
    }
}

/// How the run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RunEnd {
    /// Nothing left to do.
    Finished,
    /// Stopped by the deadline or a signal with work remaining.
    Stopped,
}

/// Why a job did not complete.
enum JobError {
    /// Fails this item for good (the run goes on).
    Permanent(Failure),
    /// Try again later, while the item's retry budget lasts ([`JOB_RETRIES`]).
    Transient(Failure),
    /// The deadline or a stop: park the job.
    Stop,
    /// Not its turn yet (an earlier sibling is still queued): park it until about when that one may
    /// run, attempt not counted.
    NotYet(UnixMillis),
    /// The whole run must end.
    Fatal(RunError),
}

/// An item's failure: the message stored with it, its class (stored beside it) and the retries lower
/// layers already spent on it.
struct Failure {
    message: String,
    class: Class,
    retries: u32,
}

impl Failure {
    /// The failure of a classified error.
    fn of(e: &(impl Classify + std::fmt::Display)) -> Self {
        Self {
            message: e.to_string(),
            class: e.class(),
            retries: e.retries(),
        }
    }
}

impl Classify for Failure {
    fn class(&self) -> Class {
        self.class
    }

    fn retries(&self) -> u32 {
        self.retries
    }
}

impl std::ops::Deref for Failure {
    type Target = str;

    fn deref(&self) -> &str {
        &self.message
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl JobError {
    /// This item fails for good for a reason of its own.
    fn permanent(message: String) -> Self {
        JobError::Permanent(Failure {
            message,
            class: Class::item_fails(),
            retries: 0,
        })
    }

    /// This attempt failed; the item is tried again while its budget lasts.
    fn transient(message: String) -> Self {
        JobError::Transient(Failure {
            message,
            class: Class::retry(None),
            retries: 0,
        })
    }

    /// What the queue does with a classified error: its class decides, and nothing else.
    fn classified<E>(e: E, fatal: impl FnOnce(E) -> RunError) -> Self
    where
        E: Classify + std::fmt::Display,
    {
        let class = e.class();
        match (class.next, class.scope) {
            // Waits that would pass the deadline, the network's included: park, fail nothing.
            (Next::Stop, _) if class.meaning == Some(Meaning::WorkRemaining) => JobError::Stop,
            // A stop the user must act on first (a capability, the block limit): the job is
            // parked, nothing failed, and the run ends with the reason.
            (Next::Stop, _) => JobError::Fatal(fatal(e)),
            (Next::Retry(_), _) => JobError::Transient(Failure::of(&e)),
            // Sign-in required, a refusal of every write, a broken limiter or state: nothing more
            // can be done in this run.
            (Next::Never | Next::Degrade, Scope::Run | Scope::Account) => JobError::Fatal(fatal(e)),
            // This item (or an element no layer below could degrade) cannot be had: the rest can.
            (Next::Never | Next::Degrade, Scope::Item | Scope::Resource | Scope::Attempt) => {
                JobError::Permanent(Failure::of(&e))
            }
        }
    }
}

impl From<StoreError> for JobError {
    fn from(e: StoreError) -> Self {
        JobError::Fatal(RunError::Store(e))
    }
}

impl From<GraphError> for JobError {
    fn from(e: GraphError) -> Self {
        JobError::classified(e, RunError::Graph)
    }
}

impl From<WriteError> for JobError {
    fn from(e: WriteError) -> Self {
        JobError::classified(e, RunError::Write)
    }
}

impl From<NotionError> for JobError {
    fn from(e: NotionError) -> Self {
        JobError::classified(e, RunError::Notion)
    }
}

/// The migration: everything a worker needs, shared.
#[derive(Clone)]
pub struct Migration {
    db: Arc<Db>,
    graph: GraphClient,
    notion: NotionClient,
    max_upload: u64,
    clock: Clock,
    /// The run lock's token: the one proof of ownership every transition presents.
    owner: RunToken,
    cancel: Cancel,
    stats: Arc<RunStats>,
    callers: Arc<Mutex<HashMap<String, Caller>>>,
    big: BigPages,
    /// How often and after what backoff an item is tried again.
    retries: RetryBudget,
    /// Section files opened for imports from files.
    sections: file_pages::OpenSections,
    /// Section files read from OneDrive or SharePoint (`--via files`); none: the OneNote API only.
    drive: Option<drive_pages::DriveSections>,
    /// One link pass of an account at a time (see [`links::Passes`]).
    link_passes: links::Passes,
}

impl Migration {
    /// A migration over `db`, reading with `graph` and writing with `notion`, by the holder of the
    /// run lock `owner`; files above `max_upload` bytes become placeholders.
    pub fn new(
        db: Arc<Db>,
        graph: GraphClient,
        notion: NotionClient,
        max_upload: u64,
        clock: Clock,
        owner: RunToken,
    ) -> Self {
        // One record of unreachable services for the whole run: Graph, sign-in and Notion.
        let notion = notion
            .with_reachability(graph.reachability().clone())
            .with_clock(clock.clone());
        Self {
            db,
            graph,
            notion,
            max_upload,
            clock,
            owner,
            cancel: Cancel::new(),
            stats: Arc::new(RunStats::default()),
            callers: Arc::new(Mutex::new(HashMap::new())),
            big: BigPages::default(),
            retries: JOB_RETRIES,
            sections: file_pages::OpenSections::default(),
            drive: None,
            link_passes: links::Passes::default(),
        }
    }

    /// The same migration reading the sections planned `files` from their files with `drive`
    /// (downloaded beside the state database).
    pub fn with_drive(mut self, drive: DriveClient) -> Self {
        self.drive = Some(drive_pages::DriveSections::new(
            drive,
            &self.db,
            self.clock.clone(),
        ));
        self
    }

    /// The drive client's counters, when section files are read.
    pub fn drive_counters(&self) -> Option<DriveCounters> {
        self.drive.as_ref().map(|d| d.client().counters())
    }

    /// The run's counters.
    pub fn stats(&self) -> &Arc<RunStats> {
        &self.stats
    }

    /// The run lock's token this migration writes with (planning presents it too).
    pub fn owner(&self) -> &RunToken {
        &self.owner
    }

    /// The same migration retrying its items under `retries` (the settings' backoffs) instead of
    /// [`JOB_RETRIES`].
    pub fn with_retries(mut self, retries: RetryBudget) -> Self {
        self.retries = retries;
        self
    }

    /// The same migration stopped by `cancel` (the root a signal and the lock's heartbeat stop).
    pub fn with_cancel(mut self, cancel: Cancel) -> Self {
        self.cancel = cancel;
        self
    }

    /// Asks the workers to take no new work (Ctrl-C, SIGTERM, a lost lock, a fatal error).
    pub fn request_stop(&self) {
        self.cancel.stop();
    }

    /// Drains the queue for `opts.accounts` with `opts.workers` pages in flight per account: the
    /// job graph is loaded once and driven in memory (see `scheduler`).
    pub async fn run(&self, opts: &RunOptions) -> Result<RunEnd, RunError> {
        // Waiting for an unreachable service ends where the run's time does.
        self.graph.reachability().set_deadline(opts.deadline);
        let end = scheduler::Scheduler {
            runner: self.clone(),
            db: self.db.clone(),
            clock: self.clock.clone(),
            owner: self.owner.clone(),
            stats: self.stats.clone(),
        }
        .run(opts, &self.cancel)
        .await;
        if let Some(d) = &self.drive {
            d.clean(&self.db);
        }
        end
    }

    /// The Graph caller for a job's inventory key (background lane, the run's deadline): a group's
    /// or site's items are read as the signed-in account, with its token and its budget (Graph's
    /// limits are the user's).
    fn caller(&self, key: &str, opts: &RunOptions) -> Result<Caller, JobError> {
        if is_files_key(key) {
            // An import from files reads nothing from Graph: no user, no budget. Its pages'
            // files are embedded in them and served from memory.
            return Ok(Caller {
                account: key.to_owned(),
                user_id: String::new(),
                lane: Lane::Background,
                deadline: opts.deadline,
                retries: None,
            });
        }
        let account = account_of_key(key);
        if let Some(c) = self.callers.lock().expect("callers poisoned").get(account) {
            return Ok(c.clone());
        }
        let mut c = Caller::for_account(&self.db, account, Lane::Background)?;
        c.deadline = opts.deadline;
        self.callers
            .lock()
            .expect("callers poisoned")
            .insert(account.to_owned(), c.clone());
        Ok(c)
    }

    /// The Notion page this job's page goes under.
    async fn parent_notion_id(&self, job: &Job) -> Result<String, JobError> {
        /// What the database says of a job's parent.
        enum Parent {
            /// The plan's target page (none: the plan has none).
            Target(Option<String>),
            /// The parent job is not in the database.
            Missing,
            /// The parent's Notion page (none: not created yet).
            Page(Option<String>),
        }
        let (plan, parent) = (job.plan_id, job.parent_job);
        let found = self
            .db
            .call(move |db| {
                Ok::<_, crate::store::StoreError>(match parent {
                    None => Parent::Target(db.plan_target(plan)?),
                    Some(p) => match db.job_item(p)? {
                        None => Parent::Missing,
                        Some((account, item)) => Parent::Page(
                            db.notion_item(&account, &item)?
                                .and_then(|i| i.into_page_id()),
                        ),
                    },
                })
            })
            .await?;
        match found {
            Parent::Target(t) => {
                t.ok_or_else(|| JobError::permanent(format!("plan {} has no target", job.plan_id)))
            }
            Parent::Missing => Err(JobError::permanent(format!(
                "parent job {} is missing",
                parent.unwrap_or_default()
            ))),
            Parent::Page(page) => page.ok_or_else(|| {
                JobError::transient(format!(
                    "the parent of {} has no Notion page yet",
                    job.item_id
                ))
            }),
        }
    }

    async fn process(&self, job: &Job, opts: &RunOptions, turn: &Turn) -> Result<(), JobError> {
        match job.kind {
            JobKind::Links => {
                let who = self.caller(&job.account, opts)?;
                let n = links::rewrite_pending(self, &who).await?;
                self.stats.links.fetch_add(n, Ordering::Relaxed);
                Ok(())
            }
            JobKind::Page => self.page(job, opts, turn).await,
            _ => self.container(job, turn).await,
        }
    }

    /// A notebook, section group or section: a page with no body.
    async fn container(&self, job: &Job, turn: &Turn) -> Result<(), JobError> {
        let (account, kind, id) = (job.account.clone(), job.kind.as_str(), job.item_id.clone());
        let (name, _) = self
            .db
            .call(move |db| db.item_name(&account, kind, &id))
            .await?
            .ok_or_else(|| {
                JobError::permanent(format!(
                    "{} {} is not in the inventory",
                    job.kind.as_str(),
                    job.item_id
                ))
            })?;
        let parent = self.parent_notion_id(job).await?;
        let created = self
            .ensure(job, turn, &parent, &name, &[], &HashMap::new(), None)
            .await?;
        if created {
            self.stats.containers.fetch_add(1, Ordering::Relaxed);
        }
        Ok(())
    }

    /// A OneNote page: fetch, convert, write.
    async fn page(&self, job: &Job, opts: &RunOptions, turn: &Turn) -> Result<(), JobError> {
        // What the page is, as planned and as written so far: read off the runtime.
        let (account, id) = (job.account.clone(), job.item_id.clone());
        let (named, existing, last_modified) = self
            .db
            .call(move |db| {
                Ok::<_, crate::store::StoreError>((
                    db.item_name(&account, "page", &id)?,
                    db.notion_item(&account, &id)?,
                    db.page_last_modified(&account, &id)?,
                ))
            })
            .await?;
        let (title, deleted) = named.ok_or_else(|| {
            JobError::permanent(format!("page {} is not in the inventory", job.item_id))
        })?;
        let item = format!("page {title:?} ({})", job.item_id);
        if deleted {
            return Err(JobError::permanent(format!(
                "{item} was deleted in OneNote after it was planned"
            )));
        }
        if let Some(existing) = &existing {
            if existing.state.is_complete() {
                return Ok(());
            }
        }
        let parent = self.parent_notion_id(job).await?;
        // The page's Graph requests (content, ink, files) spend from the item's one count.
        let already = u32::try_from(job.attempts - 1).unwrap_or(0);
        let who = self
            .caller(&job.account, opts)?
            .for_item(crate::failure::Retries::new(self.retries, already));
        let created = existing.is_some_and(|i| i.page_id().is_some());
        if !created {
            // An earlier sibling waiting for a retry would make this page wait long after its
            // content is fetched: park it before spending Graph budget. Siblings in flight are
            // not waited for here: the content and files are fetched while they are created, and
            // the page waits for its turn only before its own creation (in `ensure`).
            turn.check()?;
        }
        // A big page is converted and written under the one big-page permit, held to the end.
        let (mut page, mut svgs, _big) = self
            .fetch_page(
                &who,
                (!created).then_some(turn),
                &job.account,
                &job.item_id,
                &item,
                last_modified.clone(),
            )
            .await?;
        // Counted from its content until its Notion page exists (or the attempt ends): each
        // worker holds at most one page ahead of its turn.
        let _ahead = (!created).then(|| Ahead::enter(&self.stats));
        for m in page.resources() {
            if let MediaSource::Embedded(f) = m {
                svgs.insert(f.key.clone(), f.bytes.clone());
            }
        }
        let migrated = self
            .db
            .migrated_page_targets(account_of_key(&job.account))?;
        let mut unresolved = false;
        page.resolve_page_links(|id| match migrated.get(&id.to_ascii_lowercase()) {
            Some(t) => Some(t.clone()),
            None => {
                unresolved = true;
                None
            }
        });
        let media = page.resources();
        let resources = resources_of(&media);
        // A page to be created uploads every file it has: fetch them now, in page order, while
        // its earlier siblings are still being written (a page being resumed or rewritten may
        // skip files already in Notion, so it fetches as the writer goes).
        let prefetched = if created {
            Prefetched::default()
        } else {
            let ordered: Vec<&Resource> = media
                .iter()
                .filter_map(|m| resource_url(m))
                .filter_map(|u| resources.get(u))
                .collect();
            let max = usize::try_from(self.max_upload).unwrap_or(usize::MAX);
            prefetch::fetch_ahead(
                &self.graph,
                &who,
                &ordered,
                max,
                &self.stats.prefetched_bytes,
            )
            .await
        };
        drop(media);
        let report = serde_json::to_string(&page.report).ok();
        let approximations = page.report.items.len() as u64;
        // The typed blocks go to the writer, which makes each request's JSON when it sends it.
        let blocks = std::mem::take(&mut page.blocks);
        drop(page);
        self.ensure(
            job,
            turn,
            &parent,
            &title,
            &blocks,
            &resources,
            Some(PageWrite {
                who: &who,
                report: report.as_deref(),
                last_modified: last_modified.as_deref(),
                svgs,
                prefetched,
                pending_links: unresolved,
            }),
        )
        .await?;
        self.stats.pages.fetch_add(1, Ordering::Relaxed);
        self.stats
            .approximations
            .fetch_add(approximations, Ordering::Relaxed);
        Ok(())
    }

    /// Fetches a page's content with its ink and converts it; returns the page and the rendered
    /// drawings' SVG by their `ink:` URL. Ink that cannot be read is in the page's report (the
    /// page still migrates); an answer that cannot even be split is fetched again without ink.
    /// `key` is the page's inventory key: a group's or site's page is read from its OneNote root.
    /// A big page comes with the big-page permit, taken after its turn (`turn`: the page's job when
    /// its Notion page is still to be created), see [`big_page`].
    async fn fetch_page(
        &self,
        who: &Caller,
        turn: Option<&Turn>,
        key: &str,
        item_id: &str,
        item: &str,
        last_modified: Option<String>,
    ) -> Result<(ConvertedPage, HashMap<String, Bytes>, Option<BigPermit>), JobError> {
        if is_files_key(key) {
            let page = self
                .sections
                .convert(&self.db, key, item_id, item, &self.stats.sections_opened)
                .await?;
            return Ok((page, HashMap::new(), None));
        }
        if let Some(drive) = &self.drive {
            let read = drive
                .read(&self.db, who, key, item_id, item, &self.stats.from_drive)
                .await?;
            if let drive_pages::Read::Page(page) = read {
                return Ok((page, HashMap::new(), None));
            }
        }
        let mut permit = None;
        loop {
            if let Some(got) = self
                .fetch_page_once(who, turn, key, item_id, item, &last_modified, &mut permit)
                .await?
            {
                return Ok((got.0, got.1, permit));
            }
            // A big body that had to wait was dropped; it is fetched again with its turn and the
            // permit.
            tracing::info!(
                item,
                "big page: waiting for its turn and the big-page permit to fetch it again"
            );
            self.admit_later(turn, &mut permit).await?;
        }
    }

    /// Whether a body of `len` bytes may be converted now: a small one always, a big one when the
    /// page has its turn and the big-page permit is free at once (then held in `permit`).
    fn admit_now(&self, len: usize, turn: Option<&Turn>, permit: &mut Option<BigPermit>) -> bool {
        if permit.is_some() || !big_page::is_big(len) {
            return true;
        }
        let at_turn = match turn {
            None => true,
            Some(t) => t.is_now(),
        };
        *permit = at_turn.then(|| self.big.try_take()).flatten();
        permit.is_some()
    }

    /// Waits for the page's turn, then for the big-page permit (a stop ends the wait).
    async fn admit_later(
        &self,
        turn: Option<&Turn>,
        permit: &mut Option<BigPermit>,
    ) -> Result<(), JobError> {
        if let Some(t) = turn {
            t.wait().await?;
        }
        tokio::select! {
            p = self.big.take() => *permit = Some(p),
            _ = self.cancel.stopped() => return Err(JobError::Stop),
        }
        Ok(())
    }

    /// One fetch of the page's content, converted; `None` when the body is big and could not be
    /// converted now (dropped: the caller waits for the turn and the permit, then fetches again).
    #[allow(clippy::too_many_arguments)]
    async fn fetch_page_once(
        &self,
        who: &Caller,
        turn: Option<&Turn>,
        key: &str,
        item_id: &str,
        item: &str,
        last_modified: &Option<String>,
        permit: &mut Option<BigPermit>,
    ) -> Result<Option<(ConvertedPage, HashMap<String, Bytes>)>, JobError> {
        let last_modified = last_modified.clone();
        let path = format!("{}/pages/{item_id}/content", root_of_key(key));
        let with_ink = self
            .graph
            .get_with_type(
                who,
                &format!("{path}?includeInkML=true"),
                item,
                MAX_PAGE_BYTES,
            )
            .await;
        let (ctype, body) = match with_ink {
            Ok(a) => a,
            // `includeInkML` is undocumented: when the service errors on it, the page is fetched
            // without it and its ink reported as not carried over. Too large with its ink, the page
            // may still fit without it: the HTML is what must not be lost.
            Err(
                e @ (GraphError::Item { .. }
                | GraphError::GaveUp { .. }
                | GraphError::TooLarge { .. }),
            ) => {
                tracing::warn!(
                    item,
                    "page content with ink failed ({e}); fetching it without ink"
                );
                let html = self.page_html(who, &path, item).await?;
                if !self.admit_now(html.len(), turn, permit) {
                    return Ok(None);
                }
                let opts = ConvertOptions {
                    last_modified,
                    ink: Ink::Unreadable(format!(
                        "the page with its ink could not be fetched: {}",
                        e.reason()
                    )),
                };
                let page = isolated(item, "converting it", || convert_page_owned(html, &opts))?;
                return Ok(Some((page, HashMap::new())));
            }
            Err(e) => return Err(e.into()),
        };
        if !self.admit_now(body.len(), turn, permit) {
            return Ok(None);
        }
        let split = isolated(item, "reading its ink", || {
            split_multipart(&ctype, &body).map(|parts| {
                let d = ink::for_page(parts.inkml.as_deref());
                (parts.html, d)
            })
        })?;
        let (html, drawings) = match split {
            Ok(parts) => parts,
            Err(e) => {
                tracing::warn!(item, "page content with ink could not be split: {e}");
                let html = self.page_html(who, &path, item).await?;
                if !self.admit_now(html.len(), turn, permit) {
                    return Ok(None);
                }
                let d = PageDrawings {
                    ink: Ink::Unreadable(e.to_string()),
                    ..PageDrawings::default()
                };
                (html, d)
            }
        };
        drop(body);
        let opts = ConvertOptions {
            last_modified,
            ink: drawings.ink,
        };
        let page = isolated(item, "converting it", || convert_page_owned(html, &opts))?;
        Ok(Some((page, drawings.svgs)))
    }

    /// The page's HTML without its ink; a page over [`MAX_PAGE_BYTES`] is refused as it arrives
    /// (from its Content-Length, or once that many bytes came), so it never holds more.
    async fn page_html(&self, who: &Caller, path: &str, item: &str) -> Result<String, JobError> {
        match self.graph.get_text(who, path, item, MAX_PAGE_BYTES).await {
            Ok(html) => Ok(html),
            Err(GraphError::TooLarge { size, .. }) => Err(oversized(item, size)),
            Err(e) => Err(e.into()),
        }
    }

    /// Creates (or finishes) the Notion page of `job` exactly once. Returns whether a page was
    /// created or completed now.
    #[allow(clippy::too_many_arguments)]
    async fn ensure(
        &self,
        job: &Job,
        turn: &Turn,
        parent: &str,
        title: &str,
        blocks: &[Block],
        resources: &HashMap<String, Resource>,
        page: Option<PageWrite<'_>>,
    ) -> Result<bool, JobError> {
        let (account, item_id) = (job.account.as_str(), job.item_id.as_str());
        let (a, i) = (account.to_owned(), item_id.to_owned());
        let existing = self.db.call(move |db| db.notion_item(&a, &i)).await?;
        let fetch = match &page {
            Some(p) => self.fetcher(p.who.clone(), p.svgs.clone(), p.prefetched.clone()),
            None => no_fetch(),
        };
        let mut writer = Writer::new(self.notion.clone(), fetch, self.max_upload)
            .after_retries(u32::try_from(job.attempts - 1).unwrap_or(0));
        if page.is_some() {
            // What each step learns is recorded as it is learned, with the blocks holding links.
            let journal = Journal::new(
                self.db.clone(),
                self.owner.clone(),
                account,
                item_id,
                self.clock.clone(),
            );
            writer = writer.with_journal(journal);
        }
        let kind = ItemKind::of_job(job.kind).ok_or_else(|| {
            JobError::permanent(format!("a {} job has no page", job.kind.as_str()))
        })?;
        let record = ItemRecord {
            db: &self.db,
            token: &self.owner,
            account,
            item_id,
            kind,
        };
        let new = NewPage {
            parent,
            title,
            blocks,
            resources,
        };
        // The next sibling's turn.
        let created = || turn.created();
        let (stats, unfinished) = match existing.map(|i| (i.state, i.title)) {
            Some((ItemState::Complete(_), _)) => return Ok(false),
            // `--update`: the page exists; its old body goes, the new one is written.
            Some((ItemState::Rewriting(page), old_title)) => {
                let stats = item::rewrite(&writer, record, &page, &old_title, new).await?;
                (stats, Unfinished::Rewriting(page))
            }
            Some((ItemState::Writing(page), _)) => {
                let stats = writer
                    .resume_body(page.page_id(), blocks, resources)
                    .await?;
                (stats, Unfinished::Writing(page))
            }
            // An earlier attempt's creation may have reached Notion: its page is looked for.
            Some((ItemState::Intended(intent), _)) => {
                turn.wait().await?;
                let (page, stats) =
                    item::create(&writer, record, Some(intent), new, &created).await?;
                (stats, Unfinished::Writing(page))
            }
            None => {
                turn.wait().await?;
                let (page, stats) = item::create(&writer, record, None, new, &created).await?;
                (stats, Unfinished::Writing(page))
            }
        };
        self.stats
            .blocks
            .fetch_add(stats.blocks as u64, Ordering::Relaxed);
        self.stats
            .files
            .fetch_add(stats.files as u64, Ordering::Relaxed);
        self.stats.bytes.fetch_add(stats.bytes, Ordering::Relaxed);
        self.stats
            .placeholders
            .fetch_add(stats.placeholders.len() as u64, Ordering::Relaxed);
        self.stats.approximations.fetch_add(
            (stats.degraded.len() + stats.smaller.len()) as u64,
            Ordering::Relaxed,
        );
        let shape = plan::shape(blocks);
        let report = with_write_report(page.as_ref().and_then(|p| p.report), &stats);
        let written = Written {
            // The whole body as it stands in Notion now, whether this run wrote all of it or
            // resumed after blocks written before (a placeholder stands in for a file one for one).
            blocks: plan::element_count(blocks) as i64,
            files: stats.files as i64,
            report: report.as_deref(),
            onenote_last_modified: page.as_ref().and_then(|p| p.last_modified),
            pending_links: page.as_ref().is_some_and(|p| p.pending_links),
            shape: Some(&shape),
            links_recorded: page.is_some(),
        };
        unfinished.written(&self.db, &self.owner, &written)?;
        Ok(true)
    }

    /// Downloads resources through the Graph limiter, in the background lane; rendered drawings
    /// (`ink:` URLs) come from `svgs` in memory.
    fn fetcher(&self, who: Caller, svgs: HashMap<String, Bytes>, ahead: Prefetched) -> Fetch {
        let graph = self.graph.clone();
        // Nothing bigger than Notion takes is downloaded at all.
        let max = usize::try_from(self.max_upload).unwrap_or(usize::MAX);
        let svgs = Arc::new(svgs);
        Arc::new(move |res: Resource| {
            let graph = graph.clone();
            let who = who.clone();
            let svg = svgs.get(&res.url).cloned();
            let fetched = ahead.take(&res.url);
            // Drawings and files embedded in the page are served from memory, never fetched.
            let drawing = res.url.starts_with(ink::DRAWING_SCHEME)
                || res.url.starts_with(crate::convert::EMBEDDED_SCHEME);
            Box::pin(async move {
                let item = format!("file {:?}", res.file_name);
                if drawing {
                    return svg.ok_or_else(|| GraphError::BadAnswer {
                        account: who.account.clone(),
                        item,
                        problem: "the drawing was not rendered".into(),
                    });
                }
                match fetched {
                    Some(answer) => answer,
                    None => graph.get_bytes(&who, &res.url, &item, max).await,
                }
            })
        })
    }

    /// The database.
    pub fn db(&self) -> &Arc<Db> {
        &self.db
    }

    /// The Graph client.
    pub fn graph(&self) -> &GraphClient {
        &self.graph
    }

    /// The Notion client.
    pub fn notion(&self) -> &NotionClient {
        &self.notion
    }
}

impl scheduler::Runner for Migration {
    fn retries(&self) -> RetryBudget {
        self.retries
    }

    fn run(
        &self,
        job: &Job,
        turn: &Turn,
        opts: &RunOptions,
    ) -> impl std::future::Future<Output = Result<(), JobError>> + Send {
        self.process(job, opts, turn)
    }
}

/// What a OneNote page's write needs besides its blocks.
struct PageWrite<'a> {
    /// Who fetches its resources.
    who: &'a Caller,
    /// The converter's report (JSON).
    report: Option<&'a str>,
    /// Its `lastModifiedDateTime`.
    last_modified: Option<&'a str>,
    /// Rendered drawings by `ink:` URL.
    svgs: HashMap<String, Bytes>,
    /// Files fetched before the page's turn.
    prefetched: Prefetched,
    /// It links to pages not migrated yet.
    pending_links: bool,
}

/// A fetcher for pages without resources.
fn no_fetch() -> Fetch {
    Arc::new(|res: Resource| {
        Box::pin(async move {
            Err(GraphError::BadAnswer {
                account: String::new(),
                item: format!("file {:?}", res.file_name),
                problem: "it has no source to fetch from".into(),
            })
        })
    })
}

/// A page body over [`MAX_PAGE_BYTES`] (`size` is its Content-Length, or what had arrived when it
/// was refused): failed for good with the reason (the run goes on, `--retry-failed` tries it again).
fn oversized(item: &str, size: u64) -> JobError {
    JobError::permanent(format!(
        "{item}: its content is {size} bytes or more, over the limit of {MAX_PAGE_BYTES} bytes for \
         one page; not migrated (split the page in OneNote)"
    ))
}

/// Runs one page's conversion step so that a panic fails that page alone, for good and with the
/// reason, instead of ending the run (and being taken again by every `--resume`).
fn isolated<T>(item: &str, what: &str, f: impl FnOnce() -> T) -> Result<T, JobError> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).map_err(|panic| {
        let why = panic
            .downcast_ref::<&str>()
            .map(|s| (*s).to_string())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic".into());
        tracing::error!(item, "failed while {what}: {why}");
        JobError::permanent(format!("{item}: failed while {what}: {why}"))
    })
}

/// The converter's report of a page with what writing it approximated added (elements Notion
/// refused, files left as placeholders, images carried over at their smaller rendition), so
/// `verify` lists them beside the converter's.
fn with_write_report(report: Option<&str>, stats: &WriteStats) -> Option<String> {
    let mut items: Vec<(String, String)> = stats
        .degraded
        .iter()
        .map(|d| (d.element.clone(), d.action.clone()))
        .collect();
    for s in &stats.smaller {
        let (name, why) = s.split_once(": ").unwrap_or((s.as_str(), "it failed"));
        items.push((
            format!("image {name} at full resolution"),
            format!("the smaller rendition was carried over ({why})"),
        ));
    }
    for p in &stats.placeholders {
        let (name, why) = p
            .split_once(": ")
            .unwrap_or((p.as_str(), "not carried over"));
        items.push((
            format!("file {name}"),
            format!("visible placeholder: {why}"),
        ));
    }
    crate::notion::degrade::add_to_report(report, items)
}

/// The URL under which [`resources_of`] keeps a media source, if it has one.
fn resource_url(m: &MediaSource) -> Option<&str> {
    match m {
        MediaSource::Resource { url, .. } => Some(url),
        MediaSource::Embedded(f) => Some(&f.key),
        _ => None,
    }
}

/// The resources a converted page refers to, by URL, with the names Notion will show: what the
/// queue hands the writer.
pub fn resources_of(media: &[&MediaSource]) -> HashMap<String, Resource> {
    let mut out = HashMap::new();
    for (i, m) in media.iter().enumerate() {
        if let MediaSource::Embedded(f) = m {
            out.insert(
                f.key.clone(),
                Resource {
                    url: f.key.clone(),
                    file_name: f.name.clone(),
                    mime: Some(f.mime.clone()),
                    fallback: None,
                },
            );
        }
        if let MediaSource::Resource {
            url,
            file_name,
            mime,
            fallback,
        } = m
        {
            let name = file_name.clone().unwrap_or_else(|| {
                // An image of a type Notion does not take (or none) is named as a PNG, as the
                // page shows it.
                let ext = mime
                    .as_deref()
                    .and_then(crate::mime::upload_extension)
                    .unwrap_or("png");
                format!("image-{}.{ext}", i + 1)
            });
            let mime = mime
                .clone()
                .or_else(|| Some(crate::mime::for_name(&name).to_owned()));
            out.insert(
                url.clone(),
                Resource {
                    url: url.clone(),
                    file_name: name,
                    mime,
                    fallback: fallback.clone(),
                },
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn a_page_too_large_to_download_fails_alone_and_the_run_goes_on() {
        let e = GraphError::TooLarge {
            account: "a".into(),
            item: "page x".into(),
            size: 600_000_000,
            max: 512 * 1024 * 1024,
        };
        assert!(matches!(JobError::from(e), JobError::Permanent(_)));
    }

    fn notion_refused(kind: crate::notion::client::Refusal) -> NotionError {
        NotionError::Refused {
            what: "appending".into(),
            kind,
            status: 403,
            code: "restricted_resource".into(),
            message: "m".into(),
        }
    }

    #[test]
    fn the_class_alone_decides_what_the_queue_does() {
        use crate::notion::client::Refusal;
        let gone = GraphError::Item {
            account: "a".into(),
            item: "page".into(),
            status: 404,
            code: crate::graph::ServiceCode::Other,
            message: "gone".into(),
        };
        match JobError::from(gone) {
            JobError::Permanent(f) => assert_eq!(f.class.code(), "item/never"),
            _ => panic!("a page Graph refuses fails alone"),
        }
        let down = crate::net::Unreachable {
            service: crate::net::Service::Graph,
            since: 0,
        };
        assert!(matches!(
            JobError::from(GraphError::from(down.clone())),
            JobError::Stop
        ));
        assert!(matches!(
            JobError::from(WriteError::Notion(NotionError::Unreachable(down))),
            JobError::Stop
        ));
        let signed_out = GraphError::Auth(crate::auth::AuthError::NoAccount {
            account: "a".into(),
        });
        assert!(matches!(
            JobError::from(signed_out),
            JobError::Fatal(RunError::Graph(_))
        ));
        // Every further write would meet it: the run stops, nothing failed.
        let limit = WriteError::Notion(notion_refused(Refusal::BlockLimit));
        match JobError::from(limit) {
            JobError::Fatal(e) => assert_eq!(e.meaning(), Some(crate::failure::Meaning::Usage)),
            _ => panic!("the block limit stops the run"),
        }
        // A page not shared (deleted meanwhile) is that page's.
        let unshared = WriteError::Notion(notion_refused(Refusal::NotShared));
        assert!(matches!(JobError::from(unshared), JobError::Permanent(_)));
        // A refused value no layer below could degrade fails the page.
        let refused_value = NotionError::Rejected {
            what: "appending".into(),
            status: 400,
            code: "validation_error".into(),
            message: "body failed validation".into(),
        };
        match JobError::from(WriteError::Notion(refused_value)) {
            JobError::Permanent(f) => assert_eq!(f.class.code(), "resource/degrade"),
            _ => panic!("fails the page"),
        }
        let edited = WriteError::Mismatch("edited meanwhile".into());
        assert!(matches!(JobError::from(edited), JobError::Permanent(_)));
    }

    #[test]
    fn a_failure_the_client_retried_is_not_retried_again_by_the_queue() {
        // An unclear write the writer could not settle: nothing below retried it, so the queue
        // gives it its whole budget.
        let unclear = WriteError::Notion(NotionError::Ambiguous {
            what: "appending".into(),
            detail: "504".into(),
        });
        let JobError::Transient(f) = JobError::from(unclear) else {
            panic!("retried")
        };
        assert_eq!(
            JOB_RETRIES.should_retry(&f, 0),
            Some(Duration::from_secs(4))
        );
        assert_eq!(
            JOB_RETRIES.should_retry(&f, 3),
            Some(Duration::from_secs(32))
        );
        assert_eq!(
            JOB_RETRIES.should_retry(&f, 4),
            None,
            "five attempts in all"
        );
        // The Graph client gave up after 6 attempts: its 5 retries spent the item's budget.
        let gave_up = GraphError::GaveUp {
            account: "a".into(),
            item: "page".into(),
            attempts: 6,
            retries: 5,
            last: "HTTP 503".into(),
            timed_out: false,
        };
        let JobError::Transient(f) = JobError::from(gave_up) else {
            panic!("a retry class")
        };
        assert_eq!(f.retries, 5);
        assert_eq!(JOB_RETRIES.should_retry(&f, 0), None);
        // A file download the client retried twice leaves the queue two more attempts.
        let fetch = WriteError::Fetch(GraphError::GaveUp {
            account: "a".into(),
            item: "file".into(),
            attempts: 3,
            retries: 2,
            last: "HTTP 503".into(),
            timed_out: false,
        });
        let JobError::Transient(f) = JobError::from(fetch) else {
            panic!("a retry class")
        };
        assert!(JOB_RETRIES.should_retry(&f, 1).is_some());
        assert_eq!(JOB_RETRIES.should_retry(&f, 2), None);
        // Notion's client gave up after 8 attempts: nothing left on top.
        let notion = WriteError::Notion(NotionError::GaveUp {
            what: "listing".into(),
            attempts: 8,
            last: "503".into(),
        });
        let JobError::Transient(f) = JobError::from(notion) else {
            panic!("a retry class")
        };
        assert_eq!(JOB_RETRIES.should_retry(&f, 0), None);
    }

    #[test]
    fn a_panic_in_conversion_fails_that_page_for_good_with_its_reason() {
        let r: Result<(), JobError> = isolated("page \"p\" (1)", "converting it", || {
            panic!("index out of bounds")
        });
        match r {
            Err(JobError::Permanent(why)) => {
                assert!(why.contains("page \"p\" (1)"), "{why}");
                assert!(why.contains("converting it"), "{why}");
                assert!(why.contains("index out of bounds"), "{why}");
            }
            _ => panic!("a panic must fail the page permanently"),
        }
        let ok = isolated("page", "converting it", || 7);
        assert!(matches!(ok, Ok(7)));
    }

    #[test]
    fn a_page_over_the_limit_is_refused_for_good_with_the_sizes() {
        match oversized("page \"big\"", MAX_PAGE_BYTES as u64 + 1) {
            JobError::Permanent(why) => {
                assert!(why.contains(&(MAX_PAGE_BYTES + 1).to_string()), "{why}");
                assert!(why.contains(&MAX_PAGE_BYTES.to_string()), "{why}");
                assert!(why.contains("over the limit"), "{why}");
            }
            _ => panic!("refused for good"),
        }
    }
}
