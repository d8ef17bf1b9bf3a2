//! What a run tells whoever watches it: the one seam between the engine and a display. The engine
//! never prints; the command shows these events (human text or nothing with `--json`), and tests
//! record them.

use std::fmt;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use tokio::sync::watch;

use super::estimate::{self, Plan};
use crate::clock::UnixMillis;
use crate::drive::DriveCounters;
use crate::graph::GraphCounts;
use crate::notion::client::NotionCounts;
use crate::notion::rate::PaceView;
use crate::queue::Migration;
use crate::store::imports::is_files_key;

/// Receives a run's events, in the order they happen; called on the run's tasks, so it must not
/// block for long.
pub trait Observer: Send + Sync {
    /// One event.
    fn event(&self, event: Event);
}

/// One thing that happened while planning or running. `Display` gives the line a person reads.
#[derive(Clone)]
pub enum Event {
    /// A scan begins; `label` names the account, or the account and the group or site.
    Scanning {
        /// What is scanned.
        label: String,
    },
    /// Something worth knowing about the plan (what an import from files leaves out, what was
    /// migrated another way); the message says what.
    Note(String),
    /// Something could not be read or planned and the rest goes on; the message says what.
    Problem(String),
    /// `--all-sources` for a personal Microsoft account, which has no groups or sites.
    NoTeams {
        /// The account.
        account: String,
    },
    /// `--all-sources` without `Sites.Read.All`: followed sites were not listed.
    SitesNeedPermission {
        /// The account.
        account: String,
    },
    /// Items planned before under another Notion page stay there.
    EarlierTarget {
        /// The account or source.
        label: String,
        /// The pages planned under before.
        earlier: Vec<String>,
        /// This run's target.
        target: String,
    },
    /// A group's or site's page was made by an earlier migration under another Notion page.
    SourcePageElsewhere {
        /// The group or site.
        source: String,
        /// The Notion page its page is under.
        parent: String,
    },
    /// What planning one account or source added.
    Planned {
        /// The account or source.
        label: String,
        /// Items newly planned (or, in a dry run, that would be).
        added: usize,
        /// Items planned or migrated before.
        already: usize,
        /// With `--update`: changed pages planned for a rewrite.
        rewrites: Option<usize>,
        /// A dry run: nothing was written.
        preview: bool,
    },
    /// `--retry-failed` put this many failed items back in the queue.
    RetriedFailed(usize),
    /// One account's plan and the time its budgets imply, before its work starts.
    Plan(Plan),
    /// The queue is about to be drained (planning runs beside it, account by account); the
    /// handle reads the run's progress at any time.
    Draining(Box<Progress>),
}

impl fmt::Display for Event {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Event::Scanning { label } => write!(f, "scanning {label}..."),
            Event::Note(m) => f.write_str(m),
            Event::Problem(p) => f.write_str(p),
            Event::NoTeams { account } => write!(
                f,
                "{account}: a personal Microsoft account has no Microsoft 365 groups or SharePoint \
                 sites"
            ),
            Event::SitesNeedPermission { account } => write!(
                f,
                "{account}: followed SharePoint sites were not listed: that needs the delegated \
                 permission Sites.Read.All"
            ),
            Event::EarlierTarget {
                label,
                earlier,
                target,
            } => write!(
                f,
                "{label}: what was planned before, and new pages of it, stays under Notion page \
                 {}; only new notebooks go under {target} (use a new --db to migrate everything \
                 elsewhere)",
                earlier.join(", ")
            ),
            Event::SourcePageElsewhere { source, parent } => write!(
                f,
                "{source}: its page was made under Notion page {parent} by an earlier migration; \
                 its notebooks stay under it"
            ),
            Event::Planned {
                label,
                added,
                already,
                rewrites: _,
                preview: true,
            } => write!(
                f,
                "{label}: {added} items would be planned, {already} already planned or migrated"
            ),
            Event::Planned {
                label,
                added,
                already,
                rewrites,
                preview: false,
            } => {
                write!(
                    f,
                    "{label}: {added} items planned, {already} already planned or migrated"
                )?;
                match rewrites {
                    Some(n) => write!(f, ", {n} changed pages to rewrite"),
                    None => Ok(()),
                }
            }
            Event::RetriedFailed(n) => write!(f, "{n} failed items put back in the queue"),
            Event::Plan(p) => f.write_str(&p.lines().join("; ")),
            Event::Draining(_) => f.write_str("migrating"),
        }
    }
}

impl fmt::Debug for Event {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// Reads a running migration's progress: pages, requests, why it waits, and the ETA from the
/// budget model (what is left, at what the limiter lets background work send now).
#[derive(Clone)]
pub struct Progress {
    migration: Migration,
    /// Account name and Graph user id of each account the run covers.
    users: Arc<Vec<(String, Option<String>)>>,
    /// Files per page before this run has read enough pages to tell.
    assumed: (f64, bool),
}

/// The progress of a run at one moment.
#[derive(Clone, Debug, Default)]
pub struct Snapshot {
    /// OneNote pages migrated (this run and earlier ones).
    pub done: i64,
    /// OneNote pages planned.
    pub total: i64,
    /// The time left the budgets imply, when it can be told.
    pub eta_seconds: Option<u64>,
    /// Why the run waits for the network, if it does.
    pub network_wait: Option<String>,
    /// Otherwise, why the limiter holds Graph requests back (it names Graph user ids), if it does.
    pub limiter_wait: Option<String>,
    /// Files uploaded by this run.
    pub files: u64,
    /// Graph requests of this run.
    pub graph: GraphCounts,
    /// Notion requests of this run.
    pub notion: NotionCounts,
    /// Notion's pace (shared with every process on the database), when it could be read.
    pub notion_pace: Option<PaceView>,
    /// Pages this run read from their section files.
    pub pages_from_files: u64,
    /// Pages of `files` sections this run read through the OneNote API instead.
    pub pages_fell_back: u64,
    /// Drive requests and bytes of this run.
    pub drive: DriveCounters,
}

impl Progress {
    pub(super) fn new(migration: &Migration, accounts: &[String]) -> Self {
        let db = migration.db();
        // An import from files has no Graph user; an account that is gone is left out.
        let users = accounts
            .iter()
            .filter_map(|a| {
                if is_files_key(a) {
                    return Some((a.clone(), None));
                }
                Some((a.clone(), Some(db.account(a).ok().flatten()?.user_id)))
            })
            .collect();
        let assumed =
            estimate::files_per_page(db).unwrap_or((estimate::ASSUMED_FILES_PER_PAGE, false));
        Self {
            migration: migration.clone(),
            users: Arc::new(users),
            assumed,
        }
    }

    /// The state database the run drains.
    pub fn db(&self) -> &Arc<crate::store::Db> {
        self.migration.db()
    }

    /// The run's progress now, read off the runtime (the counts and budgets are in the state
    /// database); a failed read leaves its part out.
    pub async fn snapshot(&self) -> Snapshot {
        let me = self.clone();
        self.migration.db().call(move |_| me.read()).await
    }

    /// What changes what a snapshot shows: each job's transition, a wait of the Graph limiter
    /// beginning or ending, the network going or coming back. A display reads a snapshot when
    /// one comes, instead of on a timer.
    pub fn changes(&self) -> Changes {
        let m = &self.migration;
        Changes {
            jobs: m.stats().transitions.subscribe(),
            waits: m.graph().limiter().watch_waits(),
            network: m.graph().reachability().watch(),
        }
    }

    /// What [`Progress::snapshot`] reads, on the calling thread.
    fn read(&self) -> Snapshot {
        let m = &self.migration;
        let (mut done, mut total) = (0, 0);
        let mut work = Vec::new();
        for (a, user) in self.users.iter() {
            if let Ok(c) = m.db().account_job_counts(a) {
                done += c.pages_done;
                total += c.pages_total;
            }
            if let Ok(left) = m.db().account_remaining(a) {
                work.push(estimate::Work {
                    label: a.clone(),
                    user_id: user.clone(),
                    left,
                    // The ETA takes each section's way: a section read from its file spends
                    // no OneNote request.
                    files: m.db().account_files_left(a).unwrap_or_default(),
                    layouts: Vec::new(),
                });
            }
        }
        let s = m.stats();
        let network_wait = m.graph().reachability().waiting();
        let limiter_wait = match network_wait {
            Some(_) => None,
            None => m
                .graph()
                .limiter()
                .waits()
                .first()
                .map(|w| w.message.clone()),
        };
        // Files per page as this run finds them, once it has read a few pages.
        let (pages, files) = (
            s.pages.load(Ordering::Relaxed),
            s.files.load(Ordering::Relaxed),
        );
        let fpp = if pages >= 5 {
            (files as f64 / pages as f64, true)
        } else {
            self.assumed
        };
        let rate = m.notion().rate();
        let eta_seconds = estimate::plan(m.graph().limiter(), rate.window(), fpp, &work)
            .ok()
            .map(|p| p.seconds);
        Snapshot {
            done,
            total,
            eta_seconds,
            network_wait,
            limiter_wait,
            files,
            graph: m.graph().counts(),
            notion: m.notion().counts(),
            notion_pace: rate.view().ok(),
            pages_from_files: s.from_drive.pages.load(Ordering::Relaxed),
            pages_fell_back: s.from_drive.fell_back.load(Ordering::Relaxed),
            drive: m.drive_counters().unwrap_or_default(),
        }
    }
}

/// The changes of a run's progress, as they come ([`Progress::changes`]).
pub struct Changes {
    jobs: watch::Receiver<u64>,
    waits: watch::Receiver<u64>,
    network: watch::Receiver<Option<UnixMillis>>,
}

impl Changes {
    /// Resolves at the next change not seen yet (several at once are one).
    pub async fn next(&mut self) {
        tokio::select! {
            _ = news(&mut self.jobs) => {}
            _ = news(&mut self.waits) => {}
            _ = news(&mut self.network) => {}
        }
    }
}

/// The next change `rx` tells; never, once its sender is gone.
async fn news<T>(rx: &mut watch::Receiver<T>) {
    if rx.changed().await.is_err() {
        std::future::pending::<()>().await;
    }
}
