//! The job graph of one run, in memory. The run lock makes this process the only one changing the
//! queue, so the graph is read from SQLite once at the start and then decided on here alone: which
//! job runs next (parents first, OneNote order, at most [`super::PER_PARENT`] children of a parent
//! in flight, the link pass last), and whose turn it is to be created among siblings (the per-parent
//! sequencer: Notion lists child pages in creation order). Every change is written through to SQLite
//! by the scheduler; nothing here does I/O.

use std::collections::HashMap;

use crate::clock::UnixMillis;
use crate::store::jobs::{Job, JobKind, JobState, StoredJob};

/// One job as the run knows it.
#[derive(Clone, Debug)]
struct Node {
    job: Job,
    state: JobState,
    not_before: UnixMillis,
    /// Its Notion page exists (recorded by the writer), whatever its job's state.
    created: bool,
    /// Index of its parent's node.
    parent: Option<usize>,
}

/// The earlier siblings of a job whose Notion page does not exist yet.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Ahead {
    /// In flight now.
    pub running: usize,
    /// Waiting in the queue (for a retry time, or for a worker).
    pub queued: usize,
    /// The earliest time a queued one may run (0 when none waits for a time).
    pub next: UnixMillis,
}

/// The jobs of the accounts a run drains, in OneNote order.
#[derive(Debug, Default)]
pub struct JobGraph {
    /// Sorted by `seq`, then id: the order jobs are claimed in.
    nodes: Vec<Node>,
    by_id: HashMap<i64, usize>,
    /// Item jobs (the link pass left out) by account and parent job, in OneNote order: the
    /// sequencers of creation order.
    siblings: HashMap<(String, Option<i64>), Vec<usize>>,
}

impl JobGraph {
    /// The graph of `jobs` (as [`crate::store::Db::load_jobs`] reads them).
    pub fn new(mut jobs: Vec<StoredJob>) -> Self {
        jobs.sort_by_key(|j| (j.job.seq, j.job.id));
        let by_id: HashMap<i64, usize> = jobs
            .iter()
            .enumerate()
            .map(|(i, j)| (j.job.id, i))
            .collect();
        let mut siblings: HashMap<(String, Option<i64>), Vec<usize>> = HashMap::new();
        let nodes = jobs
            .into_iter()
            .enumerate()
            .map(|(i, j)| {
                if j.job.kind != JobKind::Links {
                    siblings
                        .entry((j.job.account.clone(), j.job.parent_job))
                        .or_default()
                        .push(i);
                }
                Node {
                    parent: j.job.parent_job.and_then(|p| by_id.get(&p).copied()),
                    job: j.job,
                    state: j.state,
                    not_before: j.not_before,
                    created: j.created,
                }
            })
            .collect();
        Self {
            nodes,
            by_id,
            siblings,
        }
    }

    /// Whether `n` or an ancestor failed (its work cannot be done in this run).
    fn blocked(&self, mut n: usize) -> bool {
        // Parents come before children in `seq`, so the walk ends; the bound is the graph's size
        // whatever the stored rows say.
        for _ in 0..=self.nodes.len() {
            let node = &self.nodes[n];
            if node.state == JobState::Failed {
                return true;
            }
            match node.parent {
                Some(p) => n = p,
                None => return false,
            }
        }
        false
    }

    fn of(accounts: &[String], job: &Job) -> bool {
        accounts.is_empty() || accounts.contains(&job.account)
    }

    /// The next job of `accounts` (all when empty) that may run at `now`: queued, not held back by
    /// its retry time, its parent done, fewer than `per_parent` of its siblings in flight; the link
    /// pass only when nothing else of its plan is left to do. It becomes running here, its attempt
    /// counted.
    pub fn claim(
        &mut self,
        accounts: &[String],
        now: UnixMillis,
        per_parent: usize,
    ) -> Option<Job> {
        let found = (0..self.nodes.len()).find(|&i| {
            let n = &self.nodes[i];
            n.state == JobState::Queued
                && n.not_before <= now
                && Self::of(accounts, &n.job)
                && n.job.parent_job.is_none_or(|_| {
                    n.parent
                        .is_some_and(|p| self.nodes[p].state == JobState::Done)
                })
                && match n.job.kind {
                    JobKind::Links => !self.plan_pending(n.job.plan_id),
                    _ => self.running_siblings(i) < per_parent,
                }
        })?;
        let n = &mut self.nodes[found];
        n.state = JobState::Running;
        n.job.attempts += 1;
        Some(n.job.clone())
    }

    /// Whether an item job of `plan` is still to do (and not blocked by a failure).
    fn plan_pending(&self, plan: i64) -> bool {
        (0..self.nodes.len()).any(|i| {
            let n = &self.nodes[i];
            n.job.plan_id == plan
                && n.job.kind != JobKind::Links
                && n.state.is_pending()
                && !self.blocked(i)
        })
    }

    fn siblings_of(&self, i: usize) -> &[usize] {
        let j = &self.nodes[i].job;
        self.siblings
            .get(&(j.account.clone(), j.parent_job))
            .map_or(&[], Vec::as_slice)
    }

    fn running_siblings(&self, i: usize) -> usize {
        self.siblings_of(i)
            .iter()
            .filter(|&&s| self.nodes[s].state == JobState::Running)
            .count()
    }

    /// Work of `accounts` that can still run, now or later (queued or running, not blocked by a
    /// failure), and the earliest retry time after `now` among it.
    pub fn pending(&self, accounts: &[String], now: UnixMillis) -> (usize, Option<UnixMillis>) {
        let mut count = 0;
        let mut next: Option<UnixMillis> = None;
        for (i, n) in self.nodes.iter().enumerate() {
            if n.state.is_pending() && Self::of(accounts, &n.job) && !self.blocked(i) {
                count += 1;
                if n.state == JobState::Queued && n.not_before > now {
                    next = Some(next.map_or(n.not_before, |t| t.min(n.not_before)));
                }
            }
        }
        (count, next)
    }

    /// The earlier siblings of `job` whose Notion page does not exist yet.
    pub fn ahead_of(&self, job: i64) -> Ahead {
        let Some(&i) = self.by_id.get(&job) else {
            return Ahead::default();
        };
        let mut out = Ahead::default();
        for &s in self.siblings_of(i).iter().take_while(|&&s| s != i) {
            let n = &self.nodes[s];
            if n.created {
                continue;
            }
            match n.state {
                JobState::Running => out.running += 1,
                JobState::Queued => {
                    out.queued += 1;
                    if out.queued == 1 || n.not_before < out.next {
                        out.next = n.not_before;
                    }
                }
                JobState::Done | JobState::Failed => {}
            }
        }
        out
    }

    /// Records that `job`'s Notion page exists: the next sibling's turn.
    pub fn created(&mut self, job: i64) {
        if let Some(&i) = self.by_id.get(&job) {
            self.nodes[i].created = true;
        }
    }

    /// Records a running job's outcome: its new state, the time before which it may not run again,
    /// and whether its attempt counts (a stop or a wait for its turn does not).
    pub fn finish(&mut self, job: i64, to: JobState, not_before: UnixMillis, counted: bool) {
        if let Some(&i) = self.by_id.get(&job) {
            let n = &mut self.nodes[i];
            n.state = to;
            n.not_before = not_before;
            if !counted {
                n.job.attempts = (n.job.attempts - 1).max(0);
            }
        }
    }

    /// The job's state as the run knows it.
    pub fn state(&self, job: i64) -> Option<JobState> {
        self.by_id.get(&job).map(|&i| self.nodes[i].state)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(id: i64, kind: JobKind, parent: Option<i64>, plan: i64) -> StoredJob {
        StoredJob {
            job: Job {
                id,
                plan_id: plan,
                account: "a".into(),
                kind,
                item_id: format!("i{id}"),
                parent_job: parent,
                seq: id,
                attempts: 0,
            },
            state: JobState::Queued,
            not_before: 0,
            created: false,
        }
    }

    /// A notebook (1) with a section (2) of three pages (3, 4, 5) and a second section (6) with one
    /// page (7); the link pass (8).
    fn graph() -> JobGraph {
        use JobKind::*;
        JobGraph::new(vec![
            job(8, Links, None, 1),
            job(1, Notebook, None, 1),
            job(2, Section, Some(1), 1),
            job(3, Page, Some(2), 1),
            job(4, Page, Some(2), 1),
            job(5, Page, Some(2), 1),
            job(6, Section, Some(1), 1),
            job(7, Page, Some(6), 1),
        ])
    }

    fn ids(g: &mut JobGraph, per_parent: usize) -> Vec<i64> {
        let mut out = Vec::new();
        while let Some(j) = g.claim(&[], 0, per_parent) {
            out.push(j.id);
            g.finish(j.id, JobState::Done, 0, true);
        }
        out
    }

    #[test]
    fn parents_run_first_in_onenote_order_and_the_link_pass_last() {
        assert_eq!(ids(&mut graph(), 3), [1, 2, 3, 4, 5, 6, 7, 8]);
    }

    #[test]
    fn a_parent_with_enough_children_running_is_passed_over_for_the_next() {
        let mut g = graph();
        for _ in 0..3 {
            let j = g.claim(&[], 0, 1).unwrap();
            if j.kind != JobKind::Page {
                g.finish(j.id, JobState::Done, 0, true);
            }
        }
        // 1, 2 done, page 3 running: with one child per parent the next is section 6, not page 4.
        assert_eq!(g.claim(&[], 0, 1).map(|j| j.id), Some(6));
        g.finish(6, JobState::Done, 0, true);
        assert_eq!(g.claim(&[], 0, 1).map(|j| j.id), Some(7));
        assert_eq!(g.claim(&[], 0, 1).map(|j| j.id), None, "4 waits for 3");
    }

    #[test]
    fn a_retry_waits_for_its_time_and_a_failure_blocks_what_is_under_it() {
        let mut g = graph();
        let nb = g.claim(&[], 0, 3).unwrap();
        g.finish(nb.id, JobState::Queued, 500, true);
        assert!(g.claim(&[], 499, 3).is_none());
        assert_eq!(g.pending(&[], 499), (8, Some(500)));
        let again = g.claim(&[], 500, 3).unwrap();
        assert_eq!((again.id, again.attempts), (1, 2));
        g.finish(1, JobState::Done, 0, true);
        let s = g.claim(&[], 500, 3).unwrap();
        assert_eq!(s.id, 2);
        g.finish(2, JobState::Failed, 0, true);
        // Section 2's pages are blocked; the rest, and the link pass, go on.
        assert_eq!(ids(&mut g, 3), [6, 7, 8]);
        assert_eq!(g.pending(&[], 500), (0, None));
    }

    #[test]
    fn a_stop_does_not_count_the_attempt() {
        let mut g = graph();
        let j = g.claim(&[], 0, 3).unwrap();
        g.finish(j.id, JobState::Queued, 0, false);
        assert_eq!(g.claim(&[], 0, 3).map(|j| j.attempts), Some(1));
    }

    #[test]
    fn a_page_waits_only_for_earlier_siblings_not_yet_created() {
        let mut g = graph();
        for _ in 0..2 {
            let j = g.claim(&[], 0, 3).unwrap();
            g.finish(j.id, JobState::Done, 0, true);
        }
        let pages: Vec<Job> = (0..3).map(|_| g.claim(&[], 0, 3).unwrap()).collect();
        assert_eq!(g.ahead_of(pages[0].id), Ahead::default());
        assert_eq!(g.ahead_of(pages[2].id).running, 2);
        g.created(pages[0].id);
        assert_eq!(g.ahead_of(pages[2].id).running, 1);
        // Page 4 waits for a retry: page 5 is told when that may be.
        g.finish(pages[1].id, JobState::Queued, 9_000, true);
        let a = g.ahead_of(pages[2].id);
        assert_eq!((a.running, a.queued, a.next), (0, 1, 9_000));
        // Another account's pages are no siblings.
        let mut other = job(9, JobKind::Page, Some(2), 1);
        other.job.account = "b".into();
        let mut jobs = vec![other];
        jobs.extend(graph().nodes.into_iter().map(|n| StoredJob {
            job: n.job,
            state: n.state,
            not_before: n.not_before,
            created: n.created,
        }));
        let g = JobGraph::new(jobs);
        assert_eq!(g.ahead_of(9), Ahead::default());
    }
}
