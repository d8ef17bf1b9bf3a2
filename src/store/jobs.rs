//! The persistent job queue: planning, claiming with a lease, finishing, and the one-migrating-process
//! lock. Every state change is one transaction, so a kill at any moment leaves the queue consistent and
//! the next run takes up what was in flight.

use std::time::Duration;

use rusqlite::{params, OptionalExtension, Row};
use serde::Serialize;

use super::inventory::{Notebook, Section, SectionGroup};
use super::{Db, Result};
use crate::clock::UnixMillis;

/// What a job migrates.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
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

    fn parse(s: &str) -> rusqlite::Result<Self> {
        Ok(match s {
            "notebook" => JobKind::Notebook,
            "section_group" => JobKind::SectionGroup,
            "section" => JobKind::Section,
            "page" => JobKind::Page,
            "links" => JobKind::Links,
            other => {
                return Err(rusqlite::Error::FromSqlConversionFailure(
                    0,
                    rusqlite::types::Type::Text,
                    format!("unknown job kind {other:?}").into(),
                ))
            }
        })
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
            kind: JobKind::parse(&r.get::<_, String>("kind")?)?,
            item_id: r.get("item_id")?,
            parent_job: r.get("parent_job")?,
            seq: r.get("seq")?,
            attempts: r.get("attempts")?,
        })
    }
}

/// What planning added.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct PlanSummary {
    /// The plan row.
    pub plan_id: i64,
    /// Jobs added now.
    pub added: usize,
    /// Items that were already planned (or done) before and were left as they are.
    pub already_planned: usize,
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
    /// How many times it was tried.
    pub attempts: i64,
}

/// Who holds the migrating lock.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LockHolder {
    /// Its process id.
    pub pid: i64,
    /// When it started (unix ms).
    pub started_at: UnixMillis,
}

const BLOCKED_CTE: &str = "WITH RECURSIVE blocked(id) AS (
        SELECT id FROM jobs WHERE state = 'failed'
        UNION SELECT j.id FROM jobs j JOIN blocked b ON j.parent_job = b.id)";

const JOB_COLUMNS: &str = "id, plan_id, account, kind, item_id, parent_job, seq, attempts";

impl Db {
    /// Plans `notebooks` of `account` under the Notion page `target`: one job per item not planned
    /// before, in OneNote order, plus a link pass. One transaction.
    pub fn create_plan(
        &self,
        account: &str,
        target: &str,
        notebooks: &[Notebook],
        now: UnixMillis,
    ) -> Result<PlanSummary> {
        self.write("planning the migration", |tx| {
            plan_in(tx, account, target, notebooks, now)
        })
    }

    /// What [`Db::create_plan`] would leave to do, without planning anything (`migrate --dry-run`):
    /// the plan is made in a transaction that is rolled back.
    pub fn preview_plan(
        &self,
        account: &str,
        target: &str,
        notebooks: &[Notebook],
        now: UnixMillis,
    ) -> Result<(PlanSummary, Remaining)> {
        self.rehearse("previewing the migration plan", |tx| {
            let summary = plan_in(tx, account, target, notebooks, now)?;
            Ok((summary, remaining_in(tx, account)?))
        })
    }

    /// Pages and notebook/section-group/section pages of `account` still to migrate (queued or
    /// running).
    pub fn remaining_work(&self, account: &str) -> Result<Remaining> {
        self.read("counting the work left", |c| remaining_in(c, account))
    }

    /// Files per migrated page over every page this database has migrated, and how many pages
    /// that is (the plan's estimate of files not yet read).
    pub fn files_per_page(&self) -> Result<(f64, i64)> {
        self.read("counting migrated files", |c| {
            c.query_row(
                "SELECT coalesce(sum(files), 0), count(*) FROM notion_items
                 WHERE kind = 'page' AND body_state = 'done'",
                [],
                |r| {
                    let (files, pages): (i64, i64) = (r.get(0)?, r.get(1)?);
                    Ok((files as f64 / pages.max(1) as f64, pages))
                },
            )
        })
    }

    /// The Notion page a plan writes under.
    pub fn plan_target(&self, plan_id: i64) -> Result<Option<String>> {
        self.read("reading the plan", |c| {
            c.query_row(
                "SELECT target_page_id FROM plans WHERE id = ?1",
                [plan_id],
                |r| r.get(0),
            )
            .optional()
        })
    }

    /// The Notion pages earlier plans of `account` put items under (with jobs in them).
    pub fn plan_targets(&self, account: &str) -> Result<Vec<String>> {
        self.read("reading plan targets", |c| {
            let mut st = c.prepare(
                "SELECT DISTINCT p.target_page_id FROM plans p
                 WHERE p.account = ?1 AND EXISTS (SELECT 1 FROM jobs j WHERE j.plan_id = p.id AND j.kind != 'links')",
            )?;
            let rows = st.query_map([account], |r| r.get(0))?;
            rows.collect()
        })
    }

    /// Claims the next runnable job of `accounts` (all when empty): queued, or running with an expired
    /// lease; its parent done; not held back by `not_before`. The link pass waits for every other job
    /// of its plan.
    pub fn claim_job(
        &self,
        accounts: &[String],
        owner: &str,
        lease: Duration,
        now: UnixMillis,
    ) -> Result<Option<Job>> {
        self.claim_job_within(accounts, owner, lease, now, i64::MAX)
    }

    /// [`Db::claim_job`], passing over jobs whose parent already has `per_parent` children
    /// running: siblings are created one after another (Notion lists child pages in creation
    /// order), so workers spread over several parents instead of queueing behind one.
    pub fn claim_job_within(
        &self,
        accounts: &[String],
        owner: &str,
        lease: Duration,
        now: UnixMillis,
        per_parent: i64,
    ) -> Result<Option<Job>> {
        let filter = account_filter(accounts);
        self.write("claiming a job", |tx| {
            let job = tx
                .query_row(
                    &format!(
                        "{BLOCKED_CTE}
                         SELECT {JOB_COLUMNS} FROM jobs j
                         WHERE (j.state = 'queued' OR (j.state = 'running' AND j.lease_until < ?1))
                           AND j.not_before <= ?1 {filter}
                           AND (j.parent_job IS NULL
                                OR (SELECT p.state FROM jobs p WHERE p.id = j.parent_job) = 'done')
                           AND (SELECT COUNT(*) FROM jobs s WHERE s.account = j.account
                                AND s.parent_job IS j.parent_job AND s.state = 'running'
                                AND s.kind != 'links') < ?2
                           AND (j.kind != 'links' OR NOT EXISTS (
                                SELECT 1 FROM jobs o WHERE o.plan_id = j.plan_id AND o.kind != 'links'
                                  AND o.state IN ('queued', 'running')
                                  AND o.id NOT IN (SELECT id FROM blocked)))
                         ORDER BY j.seq LIMIT 1"
                    ),
                    params![now, per_parent],
                    Job::from_row,
                )
                .optional()?;
            let Some(mut job) = job else { return Ok(None) };
            tx.execute(
                "UPDATE jobs SET state = 'running', lease_owner = ?2, lease_until = ?3,
                        attempts = attempts + 1, updated_at = ?4 WHERE id = ?1",
                params![job.id, owner, now + lease.as_millis() as i64, now],
            )?;
            job.attempts += 1;
            Ok(Some(job))
        })
    }

    /// Whether any job of `accounts` could still run now or later (queued or running and not blocked
    /// by a failed ancestor), and the earliest `not_before` among the waiting ones.
    pub fn pending_work(
        &self,
        accounts: &[String],
        now: UnixMillis,
    ) -> Result<(i64, Option<UnixMillis>)> {
        let filter = account_filter(accounts);
        self.read("counting pending jobs", |c| {
            c.query_row(
                &format!(
                    "{BLOCKED_CTE}
                     SELECT COUNT(*), MIN(CASE WHEN j.not_before > ?1 THEN j.not_before END) FROM jobs j
                     WHERE j.state IN ('queued', 'running') {filter}
                       AND j.id NOT IN (SELECT id FROM blocked)"
                ),
                params![now],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
        })
    }

    /// Marks a job done.
    pub fn complete_job(&self, job: i64, owner: &str, now: UnixMillis) -> Result<()> {
        self.finish(job, owner, "done", None, 0, now)
    }

    /// Marks a job failed for good, with its error.
    pub fn fail_job(&self, job: i64, owner: &str, error: &str, now: UnixMillis) -> Result<()> {
        self.finish(job, owner, "failed", Some(error), 0, now)
    }

    /// Puts a job back in the queue, to run again no earlier than `not_before`.
    pub fn requeue_job(
        &self,
        job: i64,
        owner: &str,
        error: Option<&str>,
        not_before: UnixMillis,
        now: UnixMillis,
    ) -> Result<()> {
        self.finish(job, owner, "queued", error, not_before, now)
    }

    /// Parks a job we hold without counting the attempt (a stop, not a failure).
    pub fn park_job(&self, job: i64, owner: &str, now: UnixMillis) -> Result<()> {
        self.defer_job(job, owner, 0, now)
    }

    /// Parks a job we hold until `not_before`, without counting the attempt.
    pub fn defer_job(
        &self,
        job: i64,
        owner: &str,
        not_before: UnixMillis,
        now: UnixMillis,
    ) -> Result<()> {
        self.write("parking a job", |tx| {
            tx.execute(
                "UPDATE jobs SET state = 'queued', lease_owner = NULL, lease_until = NULL,
                        attempts = MAX(attempts - 1, 0), not_before = ?4, updated_at = ?3
                 WHERE id = ?1 AND lease_owner = ?2 AND state = 'running'",
                params![job, owner, now, not_before],
            )?;
            Ok(())
        })
    }

    /// The siblings before `job` (same account and parent, lower `seq`) whose Notion page does not
    /// exist yet: how many are in flight, how many still queued, and the earliest time a queued one
    /// may run. Notion lists child pages in creation order, so a page is created only after these.
    pub fn earlier_siblings_pending(&self, job: &Job) -> Result<(i64, i64, UnixMillis)> {
        self.read("checking sibling order", |c| {
            c.query_row(
                "SELECT COALESCE(SUM(j.state = 'running'), 0), COALESCE(SUM(j.state = 'queued'), 0),
                        COALESCE(MIN(CASE WHEN j.state = 'queued' THEN j.not_before END), 0)
                 FROM jobs j LEFT JOIN notion_items n ON n.account = j.account AND n.item_id = j.item_id
                 WHERE j.account = ?1 AND j.parent_job IS ?2 AND j.seq < ?3 AND j.kind != 'links'
                   AND n.notion_page_id IS NULL",
                params![job.account, job.parent_job, job.seq],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
        })
    }

    fn finish(
        &self,
        job: i64,
        owner: &str,
        state: &str,
        error: Option<&str>,
        not_before: UnixMillis,
        now: UnixMillis,
    ) -> Result<()> {
        self.write("recording a job's outcome", |tx| {
            tx.execute(
                "UPDATE jobs SET state = ?3, last_error = COALESCE(?4, last_error), not_before = ?5,
                        lease_owner = NULL, lease_until = NULL, updated_at = ?6
                 WHERE id = ?1 AND lease_owner = ?2",
                params![job, owner, state, error, not_before, now],
            )?;
            Ok(())
        })
    }

    /// Fails the job of a planned item whose contents could not be read (outside any run).
    pub fn fail_planned_item(
        &self,
        account: &str,
        kind: &str,
        item_id: &str,
        error: &str,
        now: UnixMillis,
    ) -> Result<()> {
        self.write("recording an unreadable item", |tx| {
            tx.execute(
                "UPDATE jobs SET state = 'failed', last_error = ?4, lease_owner = NULL,
                        lease_until = NULL, updated_at = ?5
                 WHERE account = ?1 AND kind = ?2 AND item_id = ?3",
                params![account, kind, item_id, error, now],
            )?;
            Ok(())
        })
    }

    /// Puts permanently failed jobs of `accounts` back in the queue (`--retry-failed`).
    pub fn retry_failed(&self, accounts: &[String], now: UnixMillis) -> Result<usize> {
        let filter = account_filter(accounts);
        self.write("re-queueing failed jobs", |tx| {
            // The link pass of an affected plan must run again after the retried pages exist.
            tx.execute(
                &format!(
                    "UPDATE jobs SET state = 'queued', updated_at = ?1
                     WHERE kind = 'links' AND state = 'done' AND plan_id IN (
                        SELECT j.plan_id FROM jobs j WHERE j.state = 'failed' {filter})"
                ),
                params![now],
            )?;
            tx.execute(
                &format!(
                    "UPDATE jobs SET state = 'queued', attempts = 0, not_before = 0, updated_at = ?1
                     WHERE state = 'failed' {}",
                    filter.replace("j.", "")
                ),
                params![now],
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
                    r.get::<_, String>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, i64>(2)?,
                ))
            })?;
            for row in rows {
                let (state, kind, n) = row?;
                match state.as_str() {
                    "queued" => counts.queued += n,
                    "running" => counts.running += n,
                    "done" => counts.done += n,
                    _ => counts.failed += n,
                }
                if kind == "page" {
                    counts.pages_total += n;
                    if state == "done" {
                        counts.pages_done += n;
                    }
                }
            }
            counts.blocked = c.query_row(
                &format!(
                    "{BLOCKED_CTE} SELECT COUNT(*) FROM jobs
                     WHERE account = ?1 AND state = 'queued' AND id IN (SELECT id FROM blocked)"
                ),
                [account],
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
                        COALESCE(j.last_error, ''), j.attempts
                 FROM jobs j WHERE j.account = ?1 AND j.state = 'failed' ORDER BY j.seq",
            )?;
            let rows = st.query_map([account], |r| {
                Ok(FailedJob {
                    kind: JobKind::parse(&r.get::<_, String>(0)?)?,
                    item_id: r.get(1)?,
                    name: r.get(2)?,
                    error: r.get(3)?,
                    attempts: r.get(4)?,
                })
            })?;
            rows.collect()
        })
    }

    /// Puts jobs left running by a process that is gone back in the queue without counting the attempt.
    /// Only the holder of the migration lock may call it (no other process is running jobs then).
    pub fn requeue_orphans(&self, now: UnixMillis) -> Result<usize> {
        self.write("re-queueing interrupted jobs", |tx| {
            tx.execute(
                "UPDATE jobs SET state = 'queued', lease_owner = NULL, lease_until = NULL,
                        attempts = MAX(attempts - 1, 0), updated_at = ?1 WHERE state = 'running'",
                [now],
            )
        })
    }

    /// The kind and OneNote id of a job.
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

    /// Takes the one-migrating-process lock, or says who holds it. A holder whose process is gone
    /// (per `is_alive`) or whose heartbeat is older than `stale_after` is replaced.
    pub fn acquire_run_lock(
        &self,
        pid: i64,
        token: &str,
        now: UnixMillis,
        stale_after: Duration,
        is_alive: impl Fn(i64) -> bool,
    ) -> Result<Result<(), LockHolder>> {
        self.write("taking the migration lock", |tx| {
            let holder: Option<(i64, String, i64, i64)> = tx
                .query_row(
                    "SELECT pid, token, started_at, heartbeat_at FROM run_lock WHERE id = 1",
                    [],
                    |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
                )
                .optional()?;
            if let Some((hpid, htoken, started, beat)) = holder {
                let fresh = now - beat < stale_after.as_millis() as i64;
                if htoken != token && fresh && is_alive(hpid) {
                    return Ok(Err(LockHolder {
                        pid: hpid,
                        started_at: started,
                    }));
                }
            }
            tx.execute(
                "INSERT OR REPLACE INTO run_lock(id, pid, token, started_at, heartbeat_at)
                 VALUES (1, ?1, ?2, ?3, ?3)",
                params![pid, token, now],
            )?;
            Ok(Ok(()))
        })
    }

    /// Refreshes our lock's heartbeat; false if we no longer hold it.
    pub fn heartbeat_run_lock(&self, token: &str, now: UnixMillis) -> Result<bool> {
        self.write("refreshing the migration lock", |tx| {
            Ok(tx.execute(
                "UPDATE run_lock SET heartbeat_at = ?2 WHERE id = 1 AND token = ?1",
                params![token, now],
            )? > 0)
        })
    }

    /// Records, on the lock process `pid` holds, since when it waits for an unreachable service
    /// (`None`: everything answers), for `status` to show.
    pub fn record_network_wait(&self, pid: i64, since: Option<UnixMillis>) -> Result<()> {
        self.write("recording a wait for the network", |tx| {
            tx.execute(
                "UPDATE run_lock SET unreachable_since = ?2 WHERE id = 1 AND pid = ?1",
                params![pid, since],
            )?;
            Ok(())
        })
    }

    /// Gives the lock back.
    pub fn release_run_lock(&self, token: &str) -> Result<()> {
        self.write("releasing the migration lock", |tx| {
            tx.execute("DELETE FROM run_lock WHERE id = 1 AND token = ?1", [token])?;
            Ok(())
        })
    }
}

fn account_filter(accounts: &[String]) -> String {
    if accounts.is_empty() {
        String::new()
    } else {
        // Account names are user-chosen labels; quote them as SQL string literals.
        let list: Vec<String> = accounts
            .iter()
            .map(|a| format!("'{}'", a.replace('\'', "''")))
            .collect();
        format!("AND j.account IN ({})", list.join(", "))
    }
}

struct Planner<'a, 't> {
    tx: &'a rusqlite::Transaction<'t>,
    account: &'a str,
    plan_id: i64,
    now: UnixMillis,
    seq: &'a mut i64,
    summary: PlanSummary,
}

impl Planner<'_, '_> {
    /// Adds one job unless the item is already planned; returns the item's job id either way.
    fn add(&mut self, kind: JobKind, item: &str, parent: Option<i64>) -> rusqlite::Result<i64> {
        let existing: Option<i64> = self
            .tx
            .query_row(
                "SELECT id FROM jobs WHERE account = ?1 AND kind = ?2 AND item_id = ?3",
                params![self.account, kind.as_str(), item],
                |r| r.get(0),
            )
            .optional()?;
        if let Some(id) = existing {
            self.summary.already_planned += 1;
            return Ok(id);
        }
        *self.seq += 1;
        self.tx.execute(
            "INSERT INTO jobs(plan_id, account, kind, item_id, parent_job, seq, updated_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            params![
                self.plan_id,
                self.account,
                kind.as_str(),
                item,
                parent,
                *self.seq,
                self.now
            ],
        )?;
        self.summary.added += 1;
        Ok(self.tx.last_insert_rowid())
    }

    fn add_children(
        &mut self,
        parent: i64,
        groups: &[SectionGroup],
        sections: &[Section],
    ) -> rusqlite::Result<()> {
        for s in sections {
            let sj = self.add(JobKind::Section, &s.id, Some(parent))?;
            // A subpage (level > 0) nests under the nearest page before it with a lower level.
            let mut stack: Vec<(i64, i64)> = Vec::new();
            for p in &s.pages {
                while stack.last().is_some_and(|(lvl, _)| *lvl >= p.level) {
                    stack.pop();
                }
                let pj = self.add(
                    JobKind::Page,
                    &p.id,
                    Some(stack.last().map_or(sj, |(_, j)| *j)),
                )?;
                stack.push((p.level, pj));
            }
        }
        for g in groups {
            let gj = self.add(JobKind::SectionGroup, &g.id, Some(parent))?;
            self.add_children(gj, &g.section_groups, &g.sections)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::inventory::Page;

    fn page(id: &str, level: i64, order: i64) -> Page {
        Page {
            id: id.into(),
            title: id.to_uppercase(),
            level,
            order,
            last_modified: None,
            created: None,
            content_url: None,
        }
    }

    fn tree() -> Vec<Notebook> {
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

    fn open() -> (tempfile::TempDir, Db) {
        let t = tempfile::tempdir().unwrap();
        let db = Db::open(&t.path().join("s.db")).unwrap();
        (t, db)
    }

    fn drain(db: &Db) -> Vec<String> {
        let mut order = Vec::new();
        while let Some(j) = db.claim_job(&[], "w", Duration::from_secs(60), 10).unwrap() {
            order.push(j.item_id.clone());
            db.complete_job(j.id, "w", 10).unwrap();
        }
        order
    }

    #[test]
    fn plan_runs_parents_first_in_onenote_order() {
        let (_t, db) = open();
        db.save_scan("a", &tree(), &crate::store::inventory::ScanScope::All, 1)
            .unwrap();
        let s = db.create_plan("a", "target", &tree(), 1).unwrap();
        assert_eq!(s.added, 11);
        assert_eq!(
            drain(&db),
            vec!["nb", "s1", "p1", "p1a", "p1a1", "p1b", "p2", "g", "s2", "q1", "1"]
        );
        // planning again adds nothing but a new (empty) link pass
        let s2 = db.create_plan("a", "target", &tree(), 2).unwrap();
        assert_eq!(s2.added, 1);
        assert_eq!(s2.already_planned, 10);
    }

    #[test]
    fn subpages_hang_under_the_page_before_them() {
        let (_t, db) = open();
        db.create_plan("a", "t", &tree(), 1).unwrap();
        let parent_of = |item: &str| -> String {
            db.read("q", |c| {
                c.query_row(
                    "SELECT p.item_id FROM jobs j JOIN jobs p ON p.id = j.parent_job WHERE j.item_id = ?1",
                    [item],
                    |r| r.get(0),
                )
            })
            .unwrap()
        };
        assert_eq!(parent_of("p1a"), "p1");
        assert_eq!(parent_of("p1a1"), "p1a");
        assert_eq!(parent_of("p1b"), "p1");
        assert_eq!(parent_of("p2"), "s1");
        assert_eq!(parent_of("q1"), "s2");
    }

    #[test]
    fn expired_lease_is_taken_up_again_and_live_one_is_not() {
        let (_t, db) = open();
        db.create_plan("a", "t", &tree(), 1).unwrap();
        let j = db
            .claim_job(&[], "dead", Duration::from_secs(30), 100)
            .unwrap()
            .unwrap();
        assert_eq!(j.item_id, "nb");
        // its children wait for it; the lease is live, so nothing is claimable
        assert!(db
            .claim_job(&[], "other", Duration::from_secs(30), 200)
            .unwrap()
            .is_none());
        let again = db
            .claim_job(&[], "other", Duration::from_secs(30), 100 + 30_001)
            .unwrap()
            .unwrap();
        assert_eq!((again.id, again.attempts), (j.id, 2));
        // the dead owner can no longer finish it
        db.complete_job(j.id, "dead", 40_000).unwrap();
        assert_eq!(db.job_counts("a").unwrap().running, 1);
    }

    #[test]
    fn failures_block_descendants_and_retry_failed_requeues() {
        let (_t, db) = open();
        db.create_plan("a", "t", &tree(), 1).unwrap();
        let nb = db
            .claim_job(&[], "w", Duration::from_secs(30), 1)
            .unwrap()
            .unwrap();
        db.complete_job(nb.id, "w", 1).unwrap();
        let s1 = db
            .claim_job(&[], "w", Duration::from_secs(30), 1)
            .unwrap()
            .unwrap();
        assert_eq!(s1.item_id, "s1");
        db.fail_job(s1.id, "w", "400 validation_error", 1).unwrap();
        // the rest of the plan goes on, the link pass included (it links what exists)
        assert_eq!(drain(&db), vec!["g", "s2", "q1", "1"]);
        let c = db.job_counts("a").unwrap();
        assert_eq!((c.failed, c.blocked, c.queued), (1, 5, 5));
        assert_eq!(
            db.pending_work(&[], 1).unwrap().0,
            0,
            "only blocked work is left"
        );
        let f = db.failed_jobs("a").unwrap();
        assert_eq!(f[0].error, "400 validation_error");
        assert_eq!(db.retry_failed(&["a".into()], 2).unwrap(), 1);
        assert_eq!(
            drain(&db),
            vec!["s1", "p1", "p1a", "p1a1", "p1b", "p2", "1"]
        );
    }

    #[test]
    fn requeue_waits_for_not_before_and_accounts_filter() {
        let (_t, db) = open();
        db.create_plan("a", "t", &tree(), 1).unwrap();
        assert!(db
            .claim_job(&["b".into()], "w", Duration::from_secs(1), 1)
            .unwrap()
            .is_none());
        let j = db
            .claim_job(&["a".into()], "w", Duration::from_secs(1), 1)
            .unwrap()
            .unwrap();
        db.requeue_job(j.id, "w", Some("503"), 500, 1).unwrap();
        assert!(db
            .claim_job(&[], "w", Duration::from_secs(1), 499)
            .unwrap()
            .is_none());
        assert_eq!(db.pending_work(&[], 499).unwrap(), (11, Some(500)));
        assert!(db
            .claim_job(&[], "w", Duration::from_secs(1), 500)
            .unwrap()
            .is_some());
    }

    #[test]
    fn a_parent_with_enough_children_running_is_passed_over_for_the_next() {
        let (_t, db) = open();
        db.create_plan("a", "t", &tree(), 1).unwrap();
        let lease = Duration::from_secs(60);
        let claim = |n| db.claim_job_within(&[], "w", lease, 1, n).unwrap().unwrap();
        for _ in 0..2 {
            let c = claim(1);
            db.complete_job(c.id, "w", 1).unwrap();
        }
        // nb and s1 done: one of s1's pages runs, so the group under nb is next, not p2.
        let got: Vec<String> = (0..2).map(|_| claim(1).item_id).collect();
        assert_eq!(got, ["p1", "g"]);
        // Without the bound the order is the plan's.
        let (_t2, db2) = open();
        db2.create_plan("a", "t", &tree(), 1).unwrap();
        let order: Vec<String> = (0..4)
            .map(|_| {
                let j = db2.claim_job(&[], "w", lease, 1).unwrap().unwrap();
                if j.kind != JobKind::Page {
                    db2.complete_job(j.id, "w", 1).unwrap();
                }
                j.item_id
            })
            .collect();
        assert_eq!(order, ["nb", "s1", "p1", "p2"]);
    }

    #[test]
    fn park_does_not_count_an_attempt() {
        let (_t, db) = open();
        db.create_plan("a", "t", &tree(), 1).unwrap();
        let j = db
            .claim_job(&[], "w", Duration::from_secs(1), 1)
            .unwrap()
            .unwrap();
        db.park_job(j.id, "w", 2).unwrap();
        let j2 = db
            .claim_job(&[], "w", Duration::from_secs(1), 3)
            .unwrap()
            .unwrap();
        assert_eq!((j2.id, j2.attempts), (j.id, 1));
    }

    #[test]
    fn run_lock_is_exclusive_until_the_holder_dies_or_goes_stale() {
        let (_t, db) = open();
        let stale = Duration::from_secs(60);
        assert_eq!(
            db.acquire_run_lock(10, "t1", 0, stale, |_| true).unwrap(),
            Ok(())
        );
        assert_eq!(
            db.acquire_run_lock(11, "t2", 1000, stale, |_| true)
                .unwrap(),
            Err(LockHolder {
                pid: 10,
                started_at: 0
            })
        );
        // holder process gone
        assert_eq!(
            db.acquire_run_lock(11, "t2", 1000, stale, |_| false)
                .unwrap(),
            Ok(())
        );
        assert!(!db.heartbeat_run_lock("t1", 2000).unwrap());
        assert!(db.heartbeat_run_lock("t2", 2000).unwrap());
        // alive pid but no heartbeat for a minute: pid reuse, take over
        assert_eq!(
            db.acquire_run_lock(12, "t3", 62_001, stale, |_| true)
                .unwrap(),
            Ok(())
        );
        db.release_run_lock("t3").unwrap();
        assert_eq!(
            db.acquire_run_lock(13, "t4", 62_002, stale, |_| true)
                .unwrap(),
            Ok(())
        );
    }
}

/// Work left of one account.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Remaining {
    /// OneNote pages.
    pub pages: i64,
    /// Notebook, section group and section pages.
    pub containers: i64,
}

fn remaining_in(c: &rusqlite::Connection, account: &str) -> rusqlite::Result<Remaining> {
    let mut st = c.prepare_cached(
        "SELECT kind, COUNT(*) FROM jobs WHERE account = ?1 AND state IN ('queued', 'running')
         AND kind != 'links' GROUP BY kind",
    )?;
    let rows = st.query_map([account], |r| {
        Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?))
    })?;
    let mut out = Remaining::default();
    for row in rows {
        let (kind, n) = row?;
        if kind == "page" {
            out.pages += n;
        } else {
            out.containers += n;
        }
    }
    Ok(out)
}

/// Plans `notebooks` for `account` inside `tx` (see [`Db::create_plan`]).
fn plan_in(
    tx: &rusqlite::Transaction<'_>,
    account: &str,
    target: &str,
    notebooks: &[Notebook],
    now: UnixMillis,
) -> rusqlite::Result<PlanSummary> {
    tx.execute(
        "INSERT INTO plans(account, target_page_id, created_at) VALUES (?1, ?2, ?3)",
        params![account, target, now],
    )?;
    let plan_id = tx.last_insert_rowid();
    let mut seq: i64 = tx.query_row(
        "SELECT COALESCE(MAX(seq), 0) FROM jobs WHERE account = ?1",
        [account],
        |r| r.get(0),
    )?;
    let mut p = Planner {
        tx,
        account,
        plan_id,
        now,
        seq: &mut seq,
        summary: PlanSummary {
            plan_id,
            ..PlanSummary::default()
        },
    };
    for nb in notebooks {
        let job = p.add(JobKind::Notebook, &nb.id, None)?;
        p.add_children(job, &nb.section_groups, &nb.sections)?;
    }
    let plan_id_text = plan_id.to_string();
    p.add(JobKind::Links, &plan_id_text, None)?;
    Ok(p.summary)
}
