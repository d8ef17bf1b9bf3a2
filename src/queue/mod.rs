//! Draining the job queue: the run's job graph is loaded once and driven in memory
//! ([`graph`], `scheduler`); workers fetch page content and resources from Graph in the background
//! lane (or read them from section files: `drive_pages` for a synced notebook's, `file_pages` for
//! an import's), convert, and write to Notion exactly once. Several pages are in flight at a time, so Graph
//! fetches of one page overlap Notion writes of another, and memory stays bounded by the number of
//! workers whatever the notebook's size.
//!
//! One job's work is `job` (a container's page, a OneNote page, the link pass); a page's content is
//! fetched and converted in `fetch` (its files in `prefetch` and the writer's fetcher), made safe to
//! convert in `conversion`, and written once in `ensure`. What ends the run or fails an item is
//! `errors`; the run's counters are `stats`.

pub mod big_page;
pub mod cancel;
pub mod conflict;
mod conversion;
mod drive_pages;
mod ensure;
mod errors;
mod fetch;
mod file_pages;
pub mod graph;
mod job;
pub mod links;
pub mod lock;
mod open_sections;
pub mod prefetch;
pub(crate) mod rows;
mod scheduler;
pub mod source_page;
mod stats;
pub mod unchanged;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde::Serialize;

use crate::clock::{Clock, UnixMillis};
use crate::drive::{DriveClient, DriveCounters};
use crate::failure::RetryBudget;
use crate::graph::{Caller, GraphClient};
use crate::notion::client::NotionClient;
use crate::store::jobs::{Job, RunToken};
use crate::store::Db;
use big_page::BigPages;
use cancel::Cancel;
pub use conversion::resources_of;
pub use drive_pages::{dest as section_download, downloads_dir};
use errors::JobError;
pub use errors::RunError;
// `source_page` writes a group's or site's page with no files, as a container is written.
use fetch::no_fetch;
use scheduler::Turn;
pub use stats::RunStats;

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

/// How the run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RunEnd {
    /// Nothing left to do.
    Finished,
    /// Stopped by the deadline or a signal with work remaining.
    Stopped,
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
    sections: file_pages::ImportSections,
    /// Section files read from OneDrive or SharePoint (`--via files`); none: the OneNote API only.
    drive: Option<drive_pages::DriveSections>,
    /// One link pass of an account at a time (see [`links::Passes`]).
    link_passes: links::Passes,
    /// Layout `database`: the sections' databases and their tags.
    databases: crate::notion::database::Databases,
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
            databases: crate::notion::database::Databases::new(db.clone(), clock.clone()),
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
            sections: file_pages::ImportSections::default(),
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
