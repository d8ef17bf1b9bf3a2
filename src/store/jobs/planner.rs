//! Planning: the inventory turned into jobs under a Notion target page, once (parents before
//! children, siblings in OneNote's order); planning again adds only what is new.

use rusqlite::{params, OptionalExtension};
use serde::Serialize;

use super::{JobKind, JobState, RunToken};
use crate::clock::UnixMillis;
use crate::store::inventory::{Notebook, Section, SectionGroup};
use crate::store::{Db, Result};

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

impl Db {
    /// Plans `notebooks` of `account` under the Notion page `target`: one job per item not planned
    /// before, in OneNote order, plus a link pass. One transaction, by the run lock's holder
    /// (`token`; [`StoreError::LockLost`] otherwise).
    pub fn create_plan(
        &self,
        token: &RunToken,
        account: &str,
        target: &str,
        notebooks: &[Notebook],
        now: UnixMillis,
    ) -> Result<PlanSummary> {
        self.write_holding(token, "planning the migration", |tx| {
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
                 WHERE p.account = ?1
                   AND EXISTS (SELECT 1 FROM jobs j WHERE j.plan_id = p.id AND j.kind != ?2)",
            )?;
            let rows = st.query_map(params![account, JobKind::Links], |r| r.get(0))?;
            rows.collect()
        })
    }

    /// Every Notion page `account`'s plans went under, each once, the first planned first.
    pub fn plan_targets_in_order(&self, account: &str) -> Result<Vec<String>> {
        self.read("reading plan targets", |c| {
            let mut st = c.prepare(
                "SELECT target_page_id FROM plans WHERE account = ?1 GROUP BY target_page_id
                 ORDER BY MIN(id)",
            )?;
            let rows = st.query_map([account], |r| r.get(0))?;
            rows.collect()
        })
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
                params![self.account, kind, item],
                |r| r.get(0),
            )
            .optional()?;
        if let Some(id) = existing {
            self.summary.already_planned += 1;
            return Ok(id);
        }
        *self.seq += 1;
        self.tx.execute(
            "INSERT INTO jobs(plan_id, account, kind, item_id, parent_job, seq, state, updated_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?8, ?7)",
            params![
                self.plan_id,
                self.account,
                kind,
                item,
                parent,
                *self.seq,
                self.now,
                JobState::Queued
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
        "SELECT kind, COUNT(*) FROM jobs WHERE account = ?1 AND state IN (?2, ?3)
         AND kind != ?4 GROUP BY kind",
    )?;
    let rows = st.query_map(
        params![account, JobState::Queued, JobState::Running, JobKind::Links],
        |r| Ok((r.get::<_, JobKind>(0)?, r.get::<_, i64>(1)?)),
    )?;
    let mut out = Remaining::default();
    for row in rows {
        let (kind, n) = row?;
        if kind == JobKind::Page {
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
        "INSERT INTO plans(account, target_page_id) VALUES (?1, ?2)",
        params![account, target],
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

#[cfg(test)]
mod tests {
    use super::super::tests::{drain, open, tree};

    #[test]
    fn plan_runs_parents_first_in_onenote_order() {
        let (_dir, db, t) = open();
        db.save_scan("a", &tree(), &crate::store::inventory::ScanScope::All, 1)
            .unwrap();
        let s = db.create_plan(&t, "a", "target", &tree(), 1).unwrap();
        assert_eq!(s.added, 11);
        assert_eq!(
            drain(&db, &t),
            vec!["nb", "s1", "p1", "p1a", "p1a1", "p1b", "p2", "g", "s2", "q1", "1"]
        );
        // planning again adds nothing but a new (empty) link pass
        let s2 = db.create_plan(&t, "a", "target", &tree(), 2).unwrap();
        assert_eq!(s2.added, 1);
        assert_eq!(s2.already_planned, 10);
    }

    #[test]
    fn subpages_hang_under_the_page_before_them() {
        let (_dir, db, t) = open();
        db.create_plan(&t, "a", "t", &tree(), 1).unwrap();
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
}
