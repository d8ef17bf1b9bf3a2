//! The persistent job queue: planning, the lifecycle of each item's job, and the one-migrating-process
//! lock. Every state change is one transaction, so a kill at any moment leaves the queue consistent
//! and the next run takes up what was in flight.
//!
//! **One owner per item: the run lock.** Only the process holding the migration lock changes the
//! queue's states, so a job in `running` belongs either to that process or to a holder that is gone.
//! Taking the lock therefore puts every `running` job back in the queue in the same transaction
//! (nothing else re-queues orphans), and each transition of a run checks, in its transaction, that
//! the caller still holds the lock ([`RunToken`]): a process paused past the lock's staleness can
//! no longer finish a job its successor took up. There is no per-job lease or owner.
//!
//! The rooms: this module holds the job states and their transitions; [`planner`] turns the
//! inventory into jobs; [`lock`] is the one-migrating-process lock every write of a run presents.

mod lock;
mod planner;

pub use lock::{LockHolder, LockRecord};
pub use planner::{PlanSummary, Remaining};

use std::fmt;

use rusqlite::types::{FromSql, FromSqlError, FromSqlResult, ToSql, ToSqlOutput, ValueRef};
use rusqlite::{params, OptionalExtension, Row, Transaction};
use serde::Serialize;

use super::{Db, Result, StoreError};
use crate::clock::UnixMillis;

/// What a job migrates.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum JobKind {
    /// A notebook page under the target.
    Notebook,
    /// A section group page.
    SectionGroup,
    /// A section page.
    Section,
    /// A OneNote page (title and body).
    Page,
    /// The second pass that rewrites links between migrated pages.
    Links,
}

impl JobKind {
    const ALL: [JobKind; 5] = [
        JobKind::Notebook,
        JobKind::SectionGroup,
        JobKind::Section,
        JobKind::Page,
        JobKind::Links,
    ];

    /// The name stored in the database.
    pub fn as_str(self) -> &'static str {
        match self {
            JobKind::Notebook => "notebook",
            JobKind::SectionGroup => "section_group",
            JobKind::Section => "section",
            JobKind::Page => "page",
            JobKind::Links => "links",
        }
    }
}

/// Where an item's job is in its lifecycle. Stored as its name; text that is none of them is an
/// error when read (never taken for a default).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum JobState {
    /// Waiting to run (possibly not before a retry time, or behind a failed ancestor).
    Queued,
    /// Taken by the process holding the run lock (or by one that died: re-queued when the lock is
    /// next taken).
    Running,
    /// Finished: its Notion page (and body) exists.
    Done,
    /// Failed for good, with its last error; `--retry-failed` queues it again.
    Failed,
}

impl JobState {
    const ALL: [JobState; 4] = [
        JobState::Queued,
        JobState::Running,
        JobState::Done,
        JobState::Failed,
    ];

    /// The name stored in the database.
    pub fn as_str(self) -> &'static str {
        match self {
            JobState::Queued => "queued",
            JobState::Running => "running",
            JobState::Done => "done",
            JobState::Failed => "failed",
        }
    }

    /// Still to do: queued or in flight.
    pub fn is_pending(self) -> bool {
        matches!(self, JobState::Queued | JobState::Running)
    }
}

impl fmt::Display for JobState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Reads one of `all` by its stored name; anything else is a conversion error naming the text.
fn strict<T: Copy>(
    v: ValueRef<'_>,
    what: &str,
    all: &[T],
    name: impl Fn(T) -> &'static str,
) -> FromSqlResult<T> {
    let s = v.as_str()?;
    all.iter()
        .copied()
        .find(|x| name(*x) == s)
        .ok_or_else(|| FromSqlError::Other(format!("unknown {what} {s:?}").into()))
}

impl FromSql for JobState {
    fn column_result(v: ValueRef<'_>) -> FromSqlResult<Self> {
        strict(v, "job state", &JobState::ALL, JobState::as_str)
    }
}

impl ToSql for JobState {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(self.as_str().into())
    }
}

impl FromSql for JobKind {
    fn column_result(v: ValueRef<'_>) -> FromSqlResult<Self> {
        strict(v, "job kind", &JobKind::ALL, JobKind::as_str)
    }
}

impl ToSql for JobKind {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(self.as_str().into())
    }
}

/// Proof of holding the migration lock: what every transition of a run presents (see the
/// module's doc). Only [`Db::acquire_run_lock`] makes one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunToken(String);

impl RunToken {
    /// The token as stored in the lock's row.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// A claimed job.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Job {
    /// Row id.
    pub id: i64,
    /// The plan it belongs to.
    pub plan_id: i64,
    /// The account whose OneNote item it is.
    pub account: String,
    /// What it migrates.
    pub kind: JobKind,
    /// The OneNote id (the plan id for the link pass).
    pub item_id: String,
    /// The job whose Notion page is this one's parent (`None`: the plan's target page).
    pub parent_job: Option<i64>,
    /// OneNote order across the plan.
    pub seq: i64,
    /// Attempts so far, this one included.
    pub attempts: i64,
}

impl Job {
    fn from_row(r: &Row<'_>) -> rusqlite::Result<Self> {
        Ok(Job {
            id: r.get("id")?,
            plan_id: r.get("plan_id")?,
            account: r.get("account")?,
            kind: r.get("kind")?,
            item_id: r.get("item_id")?,
            parent_job: r.get("parent_job")?,
            seq: r.get("seq")?,
            attempts: r.get("attempts")?,
        })
    }
}

/// Job counts of one account by state.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct JobCounts {
    /// Waiting to run (including those waiting on a failed parent).
    pub queued: i64,
    /// Claimed by a live or dead process.
    pub running: i64,
    /// Finished.
    pub done: i64,
    /// Failed permanently.
    pub failed: i64,
    /// Of the queued ones: blocked because an ancestor failed.
    pub blocked: i64,
    /// Page jobs in all.
    pub pages_total: i64,
    /// Page jobs done.
    pub pages_done: i64,
}

/// A permanently failed job, for `status` and the run summary.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FailedJob {
    /// What it was.
    pub kind: JobKind,
    /// OneNote id.
    pub item_id: String,
    /// Title or name from the inventory, when known.
    pub name: Option<String>,
    /// The last error.
    pub error: String,
    /// What the last error meant (`scope/next`, e.g. `item/never`; `failure::Class::code`), when
    /// recorded (not for errors recorded before schema version 9).
    pub class: Option<String>,
    /// How many times it was tried.
    pub attempts: i64,
}

/// A job as a run loads it (see `queue::graph`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredJob {
    /// The job (its attempts so far).
    pub job: Job,
    /// Where it is in its lifecycle.
    pub state: JobState,
    /// It may not run before this time (unix ms).
    pub not_before: UnixMillis,
    /// Its Notion page exists.
    pub created: bool,
}

/// One item's job as `verify` reads it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JobRecord {
    /// Row id.
    pub id: i64,
    /// What it migrates.
    pub kind: JobKind,
    /// The OneNote id.
    pub item_id: String,
    /// Where it is in its lifecycle.
    pub state: JobState,
    /// Its last error, if it had one.
    pub last_error: Option<String>,
    /// The job whose Notion page is this one's parent.
    pub parent_job: Option<i64>,
}

impl Db {
    /// `account`'s item jobs (the link pass left out) in OneNote order, as `verify` reads them.
    pub fn job_records(&self, account: &str) -> Result<Vec<JobRecord>> {
        self.read("reading the job queue", |c| {
            let mut st = c.prepare(
                "SELECT id, kind, item_id, state, last_error, parent_job FROM jobs
                 WHERE account = ?1 AND kind != ?2 ORDER BY seq",
            )?;
            let rows = st.query_map(params![account, JobKind::Links], |r| {
                Ok(JobRecord {
                    id: r.get(0)?,
                    kind: r.get(1)?,
                    item_id: r.get(2)?,
                    state: r.get(3)?,
                    last_error: r.get(4)?,
                    parent_job: r.get(5)?,
                })
            })?;
            rows.collect()
        })
    }

    /// Every job of `accounts` (all when empty), with whether its Notion page exists: what a run
    /// drives in memory.
    pub fn load_jobs(&self, accounts: &[String]) -> Result<Vec<StoredJob>> {
        let accounts = accounts_param(accounts);
        self.read("loading the job queue", |c| {
            let mut st = c.prepare(
                "SELECT j.id, j.plan_id, j.account, j.kind, j.item_id, j.parent_job, j.seq,
                        j.attempts, j.state, j.not_before, n.notion_page_id IS NOT NULL AS created
                 FROM jobs j LEFT JOIN notion_items n
                   ON n.account = j.account AND n.item_id = j.item_id AND j.kind != ?1
                 WHERE (?2 IS NULL OR j.account IN (SELECT value FROM json_each(?2)))
                 ORDER BY j.seq, j.id",
            )?;
            let rows = st.query_map(params![JobKind::Links, accounts], |r| {
                Ok(StoredJob {
                    job: Job::from_row(r)?,
                    state: r.get("state")?,
                    not_before: r.get("not_before")?,
                    created: r.get("created")?,
                })
            })?;
            rows.collect()
        })
    }

    /// Queued → running, its attempt counted: the run's claim of a job its graph chose.
    pub fn start_job(&self, job: i64, token: &RunToken, now: UnixMillis) -> Result<()> {
        self.transition(
            job,
            JobState::Queued,
            token,
            JobState::Running,
            "starting a job",
            |tx| {
                tx.execute(
                    "UPDATE jobs SET state = ?2, attempts = attempts + 1, updated_at = ?3
                 WHERE id = ?1 AND state = ?4",
                    params![job, JobState::Running, now, JobState::Queued],
                )
            },
        )
    }

    /// Running → done.
    pub fn complete_job(&self, job: i64, token: &RunToken, now: UnixMillis) -> Result<()> {
        self.finish(job, token, JobState::Done, None, 0, now)
    }

    /// Running → failed for good, with its error and the error's class (`failure::Class::code`).
    pub fn fail_job(
        &self,
        job: i64,
        token: &RunToken,
        error: &str,
        class: &str,
        now: UnixMillis,
    ) -> Result<()> {
        self.finish(job, token, JobState::Failed, Some((error, class)), 0, now)
    }

    /// Running → queued, to run again no earlier than `not_before`, with the error and its class
    /// when a failure is why.
    pub fn requeue_job(
        &self,
        job: i64,
        token: &RunToken,
        error: Option<(&str, &str)>,
        not_before: UnixMillis,
        now: UnixMillis,
    ) -> Result<()> {
        self.finish(job, token, JobState::Queued, error, not_before, now)
    }

    /// Running → queued without counting the attempt (a stop, not a failure).
    pub fn park_job(&self, job: i64, token: &RunToken, now: UnixMillis) -> Result<()> {
        self.defer_job(job, token, 0, now)
    }

    /// Running → queued until `not_before`, without counting the attempt.
    pub fn defer_job(
        &self,
        job: i64,
        token: &RunToken,
        not_before: UnixMillis,
        now: UnixMillis,
    ) -> Result<()> {
        self.transition(
            job,
            JobState::Running,
            token,
            JobState::Queued,
            "parking a job",
            |tx| {
                tx.execute(
                    "UPDATE jobs SET state = ?2, attempts = MAX(attempts - 1, 0), not_before = ?4,
                        updated_at = ?3
                 WHERE id = ?1 AND state = ?5",
                    params![job, JobState::Queued, now, not_before, JobState::Running],
                )
            },
        )
    }

    /// A running job's outcome: `to`, with the error and its class when given.
    fn finish(
        &self,
        job: i64,
        token: &RunToken,
        to: JobState,
        error: Option<(&str, &str)>,
        not_before: UnixMillis,
        now: UnixMillis,
    ) -> Result<()> {
        let (error, class) = error.unzip();
        self.transition(
            job,
            JobState::Running,
            token,
            to,
            "recording a job's outcome",
            |tx| {
                tx.execute(
                    "UPDATE jobs SET state = ?2, last_error = COALESCE(?3, last_error),
                        error_class = CASE WHEN ?3 IS NULL THEN error_class ELSE ?6 END,
                        not_before = ?4, updated_at = ?5
                 WHERE id = ?1 AND state = ?7",
                    params![job, to, error, not_before, now, class, JobState::Running],
                )
            },
        )
    }

    /// Runs the update `f` of job `job` from `from` to `to` in one transaction that first checks
    /// `token` still holds the run lock: [`StoreError::LockLost`] if not, [`StoreError::Transition`]
    /// if `f` changed no row (the job was not in `from`).
    fn transition(
        &self,
        job: i64,
        from: JobState,
        token: &RunToken,
        to: JobState,
        action: &str,
        f: impl FnOnce(&Transaction<'_>) -> rusqlite::Result<usize>,
    ) -> Result<()> {
        match self.write_holding(token, action, f)? {
            0 => Err(StoreError::Transition {
                path: self.path.clone(),
                job: format!("job {job}"),
                from,
                to,
            }),
            _ => Ok(()),
        }
    }

    /// Fails the job of a planned item whose contents could not be read (from whatever state it
    /// was in: the scan that just ran says it cannot be had). [`StoreError::Transition`] when no
    /// such item is planned.
    #[allow(clippy::too_many_arguments)]
    pub fn fail_planned_item(
        &self,
        token: &RunToken,
        account: &str,
        kind: &str,
        item_id: &str,
        error: &str,
        class: &str,
        now: UnixMillis,
    ) -> Result<()> {
        let changed = self.write_holding(token, "recording an unreadable item", |tx| {
            tx.execute(
                "UPDATE jobs SET state = ?7, last_error = ?4, error_class = ?6, updated_at = ?5
                 WHERE account = ?1 AND kind = ?2 AND item_id = ?3",
                params![account, kind, item_id, error, now, class, JobState::Failed],
            )
        })?;
        if changed == 0 {
            return Err(StoreError::Transition {
                path: self.path.clone(),
                job: format!("the job of {kind} {item_id} of {account}"),
                from: JobState::Queued,
                to: JobState::Failed,
            });
        }
        Ok(())
    }

    /// Puts permanently failed jobs of `accounts` back in the queue (`--retry-failed`), by the run
    /// lock's holder (`token`; [`StoreError::LockLost`] otherwise).
    pub fn retry_failed(
        &self,
        token: &RunToken,
        accounts: &[String],
        now: UnixMillis,
    ) -> Result<usize> {
        let accounts = accounts_param(accounts);
        self.write_holding(token, "re-queueing failed jobs", |tx| {
            // The link pass of an affected plan must run again after the retried pages exist.
            tx.execute(
                "UPDATE jobs SET state = ?2, updated_at = ?1
                 WHERE kind = ?5 AND state = ?3 AND plan_id IN (
                    SELECT j.plan_id FROM jobs j WHERE j.state = ?4
                      AND (?6 IS NULL OR j.account IN (SELECT value FROM json_each(?6))))",
                params![
                    now,
                    JobState::Queued,
                    JobState::Done,
                    JobState::Failed,
                    JobKind::Links,
                    accounts
                ],
            )?;
            tx.execute(
                "UPDATE jobs SET state = ?2, attempts = 0, not_before = 0, updated_at = ?1
                 WHERE state = ?3 AND (?4 IS NULL OR account IN (SELECT value FROM json_each(?4)))",
                params![now, JobState::Queued, JobState::Failed, accounts],
            )
        })
    }

    /// Counts of `account`'s jobs by state.
    pub fn job_counts(&self, account: &str) -> Result<JobCounts> {
        self.read("counting jobs", |c| {
            let mut counts = JobCounts::default();
            let mut st = c.prepare(
                "SELECT state, kind, COUNT(*) FROM jobs WHERE account = ?1 GROUP BY state, kind",
            )?;
            let rows = st.query_map([account], |r| {
                Ok((
                    r.get::<_, JobState>(0)?,
                    r.get::<_, JobKind>(1)?,
                    r.get::<_, i64>(2)?,
                ))
            })?;
            for row in rows {
                let (state, kind, n) = row?;
                match state {
                    JobState::Queued => counts.queued += n,
                    JobState::Running => counts.running += n,
                    JobState::Done => counts.done += n,
                    JobState::Failed => counts.failed += n,
                }
                if kind == JobKind::Page {
                    counts.pages_total += n;
                    if state == JobState::Done {
                        counts.pages_done += n;
                    }
                }
            }
            // The queued jobs under a failed ancestor.
            counts.blocked = c.query_row(
                "WITH RECURSIVE blocked(id) AS (
                    SELECT id FROM jobs WHERE state = ?3
                    UNION SELECT j.id FROM jobs j JOIN blocked b ON j.parent_job = b.id)
                 SELECT COUNT(*) FROM jobs
                 WHERE account = ?1 AND state = ?2 AND id IN (SELECT id FROM blocked)",
                params![account, JobState::Queued, JobState::Failed],
                |r| r.get(0),
            )?;
            Ok(counts)
        })
    }

    /// `account`'s permanently failed jobs, in OneNote order.
    pub fn failed_jobs(&self, account: &str) -> Result<Vec<FailedJob>> {
        self.read("listing failed jobs", |c| {
            let mut st = c.prepare(
                "SELECT j.kind, j.item_id, COALESCE(
                        (SELECT title FROM pages p WHERE p.account = j.account AND p.id = j.item_id),
                        (SELECT name FROM sections s WHERE s.account = j.account AND s.id = j.item_id),
                        (SELECT name FROM section_groups g WHERE g.account = j.account AND g.id = j.item_id),
                        (SELECT name FROM notebooks n WHERE n.account = j.account AND n.id = j.item_id)),
                        COALESCE(j.last_error, ''), j.attempts, j.error_class
                 FROM jobs j WHERE j.account = ?1 AND j.state = ?2 ORDER BY j.seq",
            )?;
            let rows = st.query_map(params![account, JobState::Failed], |r| {
                Ok(FailedJob {
                    kind: r.get(0)?,
                    item_id: r.get(1)?,
                    name: r.get(2)?,
                    error: r.get(3)?,
                    class: r.get(5)?,
                    attempts: r.get(4)?,
                })
            })?;
            rows.collect()
        })
    }

    /// The account and OneNote id of a job.
    pub fn job_item(&self, job: i64) -> Result<Option<(String, String)>> {
        self.read("reading a job", |c| {
            c.query_row(
                "SELECT account, item_id FROM jobs WHERE id = ?1",
                [job],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()
        })
    }

    /// Accounts that have jobs in the queue.
    pub fn accounts_with_jobs(&self) -> Result<Vec<String>> {
        self.read("listing accounts with jobs", |c| {
            let mut st = c.prepare("SELECT DISTINCT account FROM jobs ORDER BY account")?;
            let rows = st.query_map([], |r| r.get(0))?;
            rows.collect()
        })
    }
}

/// `accounts` as one statement parameter: a JSON array of the names (read with `json_each`), or
/// NULL for every account. Names are user-chosen labels: they go in as a value, never as SQL.
fn accounts_param(accounts: &[String]) -> Option<String> {
    (!accounts.is_empty())
        .then(|| serde_json::to_string(accounts).expect("a list of strings is JSON"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::inventory::{Notebook, Page, Section, SectionGroup};
    use rusqlite::types::{FromSql, ValueRef};
    use std::time::Duration;

    pub(super) fn page(id: &str, level: i64, order: i64) -> Page {
        Page {
            id: id.into(),
            title: id.to_uppercase(),
            level,
            order,
            last_modified: None,
            created: None,
            content_url: None,
            author: None,
            web_url: None,
        }
    }

    pub(super) fn tree() -> Vec<Notebook> {
        vec![Notebook {
            id: "nb".into(),
            name: "NB".into(),
            created: None,
            last_modified: None,
            section_groups: vec![SectionGroup {
                id: "g".into(),
                name: "G".into(),
                created: None,
                last_modified: None,
                section_groups: vec![],
                sections: vec![Section {
                    id: "s2".into(),
                    name: "S2".into(),
                    created: None,
                    last_modified: None,
                    pages: vec![page("q1", 0, 0)],
                }],
            }],
            sections: vec![Section {
                id: "s1".into(),
                name: "S1".into(),
                created: None,
                last_modified: None,
                pages: vec![
                    page("p1", 0, 0),
                    page("p1a", 1, 1),
                    page("p1a1", 2, 2),
                    page("p1b", 1, 3),
                    page("p2", 0, 4),
                ],
            }],
        }]
    }

    pub(super) const STALE: Duration = Duration::from_secs(60);

    /// A database, and the run lock taken on it.
    pub(super) fn open() -> (tempfile::TempDir, Db, RunToken) {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(&dir.path().join("s.db")).unwrap();
        let t = db
            .acquire_run_lock(1, "run", 0, STALE, |_| true)
            .unwrap()
            .unwrap();
        (dir, db, t)
    }

    /// The next job the run's graph picks at `now` (loaded afresh, so it is what the database
    /// holds), started in the database.
    pub(super) fn claim_within(
        db: &Db,
        t: &RunToken,
        accounts: &[String],
        now: UnixMillis,
        per_parent: usize,
    ) -> Result<Option<Job>> {
        let mut g = crate::queue::graph::JobGraph::new(db.load_jobs(accounts)?);
        let Some(job) = g.claim(accounts, now, per_parent) else {
            return Ok(None);
        };
        db.start_job(job.id, t, now)?;
        Ok(Some(job))
    }

    pub(super) fn claim(
        db: &Db,
        t: &RunToken,
        accounts: &[String],
        now: UnixMillis,
    ) -> Result<Option<Job>> {
        claim_within(db, t, accounts, now, usize::MAX)
    }

    pub(super) fn pending(
        db: &Db,
        accounts: &[String],
        now: UnixMillis,
    ) -> (usize, Option<UnixMillis>) {
        crate::queue::graph::JobGraph::new(db.load_jobs(accounts).unwrap()).pending(accounts, now)
    }

    pub(super) fn drain(db: &Db, t: &RunToken) -> Vec<String> {
        let mut order = Vec::new();
        while let Some(j) = claim(db, t, &[], 10).unwrap() {
            order.push(j.item_id.clone());
            db.complete_job(j.id, t, 10).unwrap();
        }
        order
    }

    #[test]
    fn a_process_that_lost_the_lock_can_neither_plan_nor_retry_nor_fail_anything() {
        let (_dir, db, old) = open();
        db.create_plan(&old, "a", "t", &tree(), 1).unwrap();
        let j = claim(&db, &old, &[], 2).unwrap().unwrap();
        db.fail_job(j.id, &old, "gone", "item/never", 2).unwrap();
        // Its heartbeat stopped long ago: another process takes the lock over.
        let later = 10 * STALE.as_millis() as i64;
        let new = db
            .acquire_run_lock(2, "run-2", later, STALE, |_| false)
            .unwrap()
            .unwrap();
        let lost = |r: Result<()>| matches!(r, Err(StoreError::LockLost { .. }));
        let a = ["a".to_owned()];
        assert!(lost(db.retry_failed(&old, &a, later).map(drop)));
        assert!(lost(
            db.create_plan(&old, "a", "t2", &tree(), later).map(drop)
        ));
        assert!(lost(db.fail_planned_item(
            &old,
            "a",
            "section",
            "s1",
            "gone",
            "item/never",
            later
        )));
        assert!(lost(db.plan_rewrites(&old, "a", later).map(drop)));
        // Nor record what it wrote in Notion.
        use crate::store::notion_items::{ItemKind, Stage};
        let page = ItemKind::Page;
        assert!(lost(
            db.record_intent(&old, "a", "p1", page, "n", "P1").map(drop)
        ));
        let intent = db.record_intent(&new, "a", "p2", page, "n", "P2").unwrap();
        assert!(lost(intent.created(&db, &old, "notion-1").map(drop)));
        assert!(lost(db.set_report(&old, "a", "p1", Some("[]"))));
        assert!(lost(db.set_pending_links(&old, "a", "p1", true)));
        assert_eq!(db.notion_item("a", "p1").unwrap(), None);
        let p2 = db.notion_item("a", "p2").unwrap().unwrap();
        assert_eq!(p2.state.stage(), Stage::Intended);
        // Nothing it tried was written; the holder's writes go through.
        let c = db.job_counts("a").unwrap();
        assert_eq!((c.failed, c.done), (1, 0));
        assert_eq!(db.plan_targets("a").unwrap(), ["t"]);
        assert_eq!(db.retry_failed(&new, &a, later).unwrap(), 1);
        assert_eq!(db.job_counts("a").unwrap().failed, 0);
    }

    #[test]
    fn a_transition_from_the_wrong_state_fails_and_changes_nothing() {
        let (_dir, db, t) = open();
        db.create_plan(&t, "a", "t", &tree(), 1).unwrap();
        let nb = claim(&db, &t, &[], 1).unwrap().unwrap();
        db.complete_job(nb.id, &t, 2).unwrap();
        for r in [
            db.complete_job(nb.id, &t, 3),
            db.fail_job(nb.id, &t, "e", "item/never", 3),
            db.requeue_job(nb.id, &t, None, 0, 3),
            db.park_job(nb.id, &t, 3),
            db.complete_job(9_999, &t, 3),
        ] {
            match r {
                Err(StoreError::Transition { from, .. }) => assert_eq!(from, JobState::Running),
                other => panic!("a job that is not running cannot move: {other:?}"),
            }
        }
        let c = db.job_counts("a").unwrap();
        assert_eq!((c.done, c.failed, c.running), (1, 0, 0));
        assert!(matches!(
            db.fail_planned_item(&t, "a", "section", "nope", "gone", "item/never", 4),
            Err(StoreError::Transition { .. })
        ));
    }

    #[test]
    fn unknown_state_or_kind_text_is_an_error_not_a_default() {
        let (_dir, db, t) = open();
        db.create_plan(&t, "a", "t", &tree(), 1).unwrap();
        // Only a file edited by hand (or a newer notebridge) holds such text: the CHECK constraint
        // keeps ours out, so it is lifted for the test.
        db.write("test", |tx| {
            tx.execute_batch(
                "PRAGMA ignore_check_constraints = ON;
                 UPDATE jobs SET state = 'paused' WHERE item_id = 'p1';
                 PRAGMA ignore_check_constraints = OFF;",
            )
        })
        .unwrap();
        let e = db.job_counts("a").unwrap_err().to_string();
        assert!(e.contains("unknown job state \"paused\""), "{e}");
        assert!(db.job_records("a").is_err());
        let e = JobKind::column_result(ValueRef::Text(b"chapter")).unwrap_err();
        assert!(
            e.to_string().contains("unknown job kind \"chapter\""),
            "{e}"
        );
        for s in JobState::ALL {
            assert_eq!(
                JobState::column_result(ValueRef::Text(s.as_str().as_bytes())).unwrap(),
                s
            );
        }
    }

    #[test]
    fn failures_block_descendants_and_retry_failed_requeues() {
        let (_dir, db, t) = open();
        db.create_plan(&t, "a", "t", &tree(), 1).unwrap();
        let nb = claim(&db, &t, &[], 1).unwrap().unwrap();
        db.complete_job(nb.id, &t, 1).unwrap();
        let s1 = claim(&db, &t, &[], 1).unwrap().unwrap();
        assert_eq!(s1.item_id, "s1");
        db.fail_job(s1.id, &t, "400 validation_error", "resource/degrade", 1)
            .unwrap();
        // the rest of the plan goes on, the link pass included (it links what exists)
        assert_eq!(drain(&db, &t), vec!["g", "s2", "q1", "1"]);
        let c = db.job_counts("a").unwrap();
        assert_eq!((c.failed, c.blocked, c.queued), (1, 5, 5));
        assert_eq!(pending(&db, &[], 1).0, 0, "only blocked work is left");
        let f = db.failed_jobs("a").unwrap();
        assert_eq!(f[0].error, "400 validation_error");
        assert_eq!(db.retry_failed(&t, &["a".into()], 2).unwrap(), 1);
        assert_eq!(
            drain(&db, &t),
            vec!["s1", "p1", "p1a", "p1a1", "p1b", "p2", "1"]
        );
    }

    #[test]
    fn requeue_waits_for_not_before_and_accounts_filter() {
        let (_dir, db, t) = open();
        db.create_plan(&t, "a", "t", &tree(), 1).unwrap();
        assert!(claim(&db, &t, &["b".into()], 1).unwrap().is_none());
        let j = claim(&db, &t, &["a".into()], 1).unwrap().unwrap();
        db.requeue_job(j.id, &t, Some(("503", "attempt/retry")), 500, 1)
            .unwrap();
        assert!(claim(&db, &t, &[], 499).unwrap().is_none());
        assert_eq!(pending(&db, &[], 499), (11, Some(500)));
        assert!(claim(&db, &t, &[], 500).unwrap().is_some());
    }

    #[test]
    fn account_names_are_values_never_sql() {
        let (_dir, db, t) = open();
        let odd = "o'brien\") OR 1=1 --".to_owned();
        db.create_plan(&t, &odd, "t", &tree(), 1).unwrap();
        db.create_plan(&t, "a", "t", &tree(), 1).unwrap();
        let of = |accounts: &[String]| -> Vec<String> {
            let a: std::collections::BTreeSet<String> = db
                .load_jobs(accounts)
                .unwrap()
                .into_iter()
                .map(|j| j.job.account)
                .collect();
            a.into_iter().collect()
        };
        assert_eq!(of(std::slice::from_ref(&odd)), vec![odd.clone()]);
        assert!(of(&["o'brien".into()]).is_empty());
        assert_eq!(of(&[]).len(), 2, "no names: every account");
        let j = claim(&db, &t, std::slice::from_ref(&odd), 1)
            .unwrap()
            .unwrap();
        db.fail_job(j.id, &t, "gone", "item/never", 1).unwrap();
        assert_eq!(db.retry_failed(&t, &["a".into()], 2).unwrap(), 0);
        assert_eq!(db.retry_failed(&t, &[odd], 2).unwrap(), 1);
    }

    #[test]
    fn the_error_class_is_stored_beside_its_message() {
        let (_dir, db, t) = open();
        db.create_plan(&t, "a", "t", &tree(), 1).unwrap();
        let nb = claim(&db, &t, &[], 1).unwrap().unwrap();
        // A retry records its class with its message; a park (no error) keeps both.
        db.requeue_job(nb.id, &t, Some(("HTTP 503", "attempt/retry")), 0, 1)
            .unwrap();
        let again = claim(&db, &t, &[], 2).unwrap().unwrap();
        assert_eq!(again.id, nb.id);
        db.park_job(again.id, &t, 2).unwrap();
        let again = claim(&db, &t, &[], 3).unwrap().unwrap();
        db.requeue_job(again.id, &t, None, 0, 3).unwrap();
        let class: Option<String> = db
            .read("test", |c| {
                c.query_row("SELECT error_class FROM jobs WHERE id = ?1", [nb.id], |r| {
                    r.get(0)
                })
            })
            .unwrap();
        assert_eq!(class.as_deref(), Some("attempt/retry"));
        let again = claim(&db, &t, &[], 4).unwrap().unwrap();
        db.fail_job(again.id, &t, "Graph answered 404", "item/never", 4)
            .unwrap();
        let f = db.failed_jobs("a").unwrap();
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].error, "Graph answered 404");
        assert_eq!(f[0].class.as_deref(), Some("item/never"));
        // An unreadable item found by the scan records its class too.
        db.fail_planned_item(&t, "a", "section", "s1", "gone", "item/never", 5)
            .unwrap();
        let f = db.failed_jobs("a").unwrap();
        assert!(
            f.iter().all(|j| j.class.as_deref() == Some("item/never")),
            "{f:?}"
        );
    }

    #[test]
    fn errors_recorded_before_version_9_have_no_class() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.db");
        {
            let db = Db::open_to(&path, 8).unwrap();
            // As a version-8 notebridge planned and failed a job: its message, no class.
            db.write("test", |tx| {
                tx.execute(
                    "INSERT INTO plans(id, account, target_page_id, created_at) VALUES (1, 'a', 't', 1)",
                    [],
                )?;
                tx.execute(
                    "INSERT INTO jobs(plan_id, account, kind, item_id, seq, state, last_error,
                                      updated_at)
                     VALUES (1, 'a', 'notebook', 'nb', 1, 'failed', 'old', 1)",
                    [],
                )?;
                Ok(())
            })
            .unwrap();
        }
        let db = Db::open(&path).unwrap();
        let f = db.failed_jobs("a").unwrap();
        assert_eq!((f[0].error.as_str(), f[0].class.as_deref()), ("old", None));
    }

    #[test]
    fn a_parent_with_enough_children_running_is_passed_over_for_the_next() {
        let (_dir, db, t) = open();
        db.create_plan(&t, "a", "t", &tree(), 1).unwrap();
        let next = |n| claim_within(&db, &t, &[], 1, n).unwrap().unwrap();
        for _ in 0..2 {
            let c = next(1);
            db.complete_job(c.id, &t, 1).unwrap();
        }
        // nb and s1 done: one of s1's pages runs, so the group under nb is next, not p2.
        let got: Vec<String> = (0..2).map(|_| next(1).item_id).collect();
        assert_eq!(got, ["p1", "g"]);
        // Without the bound the order is the plan's.
        let (_dir2, db2, t2) = open();
        db2.create_plan(&t2, "a", "t", &tree(), 1).unwrap();
        let order: Vec<String> = (0..4)
            .map(|_| {
                let j = claim(&db2, &t2, &[], 1).unwrap().unwrap();
                if j.kind != JobKind::Page {
                    db2.complete_job(j.id, &t2, 1).unwrap();
                }
                j.item_id
            })
            .collect();
        assert_eq!(order, ["nb", "s1", "p1", "p2"]);
    }

    #[test]
    fn park_does_not_count_an_attempt() {
        let (_dir, db, t) = open();
        db.create_plan(&t, "a", "t", &tree(), 1).unwrap();
        let j = claim(&db, &t, &[], 1).unwrap().unwrap();
        db.park_job(j.id, &t, 2).unwrap();
        let j2 = claim(&db, &t, &[], 3).unwrap().unwrap();
        assert_eq!((j2.id, j2.attempts), (j.id, 1));
    }
}
