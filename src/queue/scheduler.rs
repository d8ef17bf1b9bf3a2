//! Driving a run's job graph: workers per account take jobs from the graph in memory, a job's
//! creation waits for its turn among its siblings (woken by the change it waits for, never by a
//! poll), and each outcome is decided by the error's class and the one retry budget, then written
//! through to SQLite on the blocking pool. What a job does is the [`Runner`]'s: the migration's
//! fetch, convert and write, or a fake in the tests below.

use std::future::Future;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use super::cancel::Cancel;
use super::graph::{EarlierSiblings, JobGraph};
use super::{JobError, RunEnd, RunError, RunOptions, RunStats, JOB_RETRIES, PER_PARENT};
use crate::clock::{Clock, UnixMillis};
use crate::failure::{Class, Next, RetryBudget, Scope};
use crate::graph::sources::account_of_key;
use crate::store::jobs::{Job, JobState, RunToken};
use crate::store::{Db, StoreError};

/// A page parked behind a sibling that waits for its retry is not taken again sooner than this.
const NOT_YET_MIN: Duration = Duration::from_millis(200);

/// What runs one job.
pub(super) trait Runner: Clone + Send + Sync + 'static {
    /// Does `job`; `turn` says when its Notion page may be created and takes the news that it was.
    fn run(
        &self,
        job: &Job,
        turn: &Turn,
        opts: &RunOptions,
    ) -> impl Future<Output = Result<(), JobError>> + Send;

    /// How often and after what backoff a job is tried again.
    fn retries(&self) -> RetryBudget {
        JOB_RETRIES
    }
}

/// The graph shared by a run's workers, and the signal of its changes.
#[derive(Debug, Default)]
pub(crate) struct Shared {
    graph: Mutex<JobGraph>,
    changes: tokio::sync::Notify,
    /// How often the graph was consulted: what the tests of waking bound.
    #[cfg(test)]
    consulted: AtomicU64,
}

impl Shared {
    fn new(graph: JobGraph) -> Arc<Self> {
        Arc::new(Self {
            graph: Mutex::new(graph),
            ..Self::default()
        })
    }

    fn graph(&self) -> MutexGuard<'_, JobGraph> {
        #[cfg(test)]
        self.consulted.fetch_add(1, Ordering::Relaxed);
        self.graph.lock().expect("job graph poisoned")
    }

    /// Wakes whoever waits for the graph to change.
    fn changed(&self) {
        self.changes.notify_waiters();
    }
}

/// One job's place in its parent's creation order.
#[derive(Clone, Debug)]
pub(crate) struct Turn {
    shared: Arc<Shared>,
    job: i64,
}

impl Turn {
    /// Refuses to start a page whose earlier sibling is queued for a retry (it would hold a
    /// worker, and its fetched content, until that one ran): parked until about then.
    pub(crate) fn check(&self) -> Result<(), JobError> {
        match self.earlier_siblings() {
            a if a.queued > 0 => Err(JobError::NotYet(a.next)),
            _ => Ok(()),
        }
    }

    /// Waits until every earlier sibling has its Notion page, so siblings appear in OneNote's
    /// order. Every change that can end the wait (a sibling's page created, a sibling's job
    /// finished, failed or parked) wakes the waiters, and nothing else does: no timer.
    pub(crate) async fn wait(&self) -> Result<(), JobError> {
        loop {
            let change = self.shared.changes.notified();
            tokio::pin!(change);
            change.as_mut().enable();
            match self.earlier_siblings() {
                EarlierSiblings {
                    running: 0,
                    queued: 0,
                    ..
                } => return Ok(()),
                // An earlier sibling is not even claimed (it waits for a retry): do not hold a
                // worker for it.
                a if a.queued > 0 => return Err(JobError::NotYet(a.next)),
                _ => change.await,
            }
        }
    }

    /// Records that this job's Notion page exists (the writer has stored it): the next sibling's
    /// turn.
    pub(crate) fn created(&self) {
        self.shared.graph().created(self.job);
        self.shared.changed();
    }

    /// Whether every earlier sibling has its Notion page now.
    pub(crate) fn is_now(&self) -> bool {
        let a = self.earlier_siblings();
        a.running == 0 && a.queued == 0
    }

    fn earlier_siblings(&self) -> EarlierSiblings {
        self.shared.graph().earlier_siblings(self.job)
    }
}

/// One run of the scheduler.
pub(crate) struct Scheduler<R> {
    pub(crate) runner: R,
    pub(crate) db: Arc<Db>,
    pub(crate) clock: Clock,
    pub(crate) owner: RunToken,
    pub(crate) stats: Arc<RunStats>,
}

impl<R: Runner> Scheduler<R> {
    /// Drains the jobs of `opts.accounts` with `opts.workers` jobs in flight per account, until
    /// nothing can run any more, the deadline, or `root` stops.
    pub(crate) async fn run(&self, opts: &RunOptions, root: &Cancel) -> Result<RunEnd, RunError> {
        let accounts = opts.accounts.clone();
        let jobs = store(&self.db, move |db| db.load_jobs(&accounts)).await?;
        self.drive(Shared::new(JobGraph::new(jobs)), opts, root)
            .await
    }

    /// Drives the loaded graph `shared` until nothing can run any more, the deadline, or `root`
    /// stops.
    async fn drive(
        &self,
        shared: Arc<Shared>,
        opts: &RunOptions,
        root: &Cancel,
    ) -> Result<RunEnd, RunError> {
        // This run's branch of the stop tree: it stops with the root, or at the deadline.
        let cancel = root.child();
        if let Some(d) = opts.deadline {
            let left = (d - self.clock.now_ms()).max(0) as u64;
            cancel.stop_after(Duration::from_millis(left));
        }
        let stopped = Arc::new(AtomicBool::new(false));
        let mut tasks = Vec::new();
        // Each account gets its own workers: a throttled account holds up only its own pages, never
        // the others' (its workers wait on its breaker while the rest go on). An account's groups
        // and sites share its workers, as they share its budget.
        for accounts in by_account(&opts.accounts) {
            let running = Arc::new(AtomicU64::new(0));
            for _ in 0..opts.workers.max(1) {
                let w = Worker {
                    runner: self.runner.clone(),
                    db: self.db.clone(),
                    clock: self.clock.clone(),
                    owner: self.owner.clone(),
                    stats: self.stats.clone(),
                    shared: shared.clone(),
                    opts: RunOptions {
                        accounts: accounts.clone(),
                        ..opts.clone()
                    },
                    running: running.clone(),
                    stopped: stopped.clone(),
                    cancel: cancel.clone(),
                    root: root.clone(),
                };
                tasks.push(tokio::spawn(async move { w.run().await }));
            }
        }
        let mut first_err = None;
        for t in tasks {
            match t.await {
                Ok(Ok(())) => {}
                Ok(Err(e)) => {
                    root.stop();
                    first_err.get_or_insert(e);
                }
                Err(join) => {
                    root.stop();
                    first_err.get_or_insert(RunError::Worker(join.to_string()));
                }
            }
        }
        if let Some(e) = first_err {
            return Err(e);
        }
        let (pending, _) = shared.graph().pending(&opts.accounts, self.clock.now_ms());
        Ok(
            if pending > 0 && (stopped.load(Ordering::SeqCst) || cancel.is_stopped()) {
                RunEnd::Stopped
            } else {
                RunEnd::Finished
            },
        )
    }
}

/// The accounts' keys grouped by account (one group of all when empty).
fn by_account(keys: &[String]) -> Vec<Vec<String>> {
    if keys.is_empty() {
        return vec![Vec::new()];
    }
    let mut groups: Vec<Vec<String>> = Vec::new();
    for key in keys {
        match groups
            .iter_mut()
            .find(|g| account_of_key(&g[0]) == account_of_key(key))
        {
            Some(g) => g.push(key.clone()),
            None => groups.push(vec![key.clone()]),
        }
    }
    groups
}

struct Worker<R> {
    runner: R,
    db: Arc<Db>,
    clock: Clock,
    owner: RunToken,
    stats: Arc<RunStats>,
    shared: Arc<Shared>,
    opts: RunOptions,
    /// Jobs of this worker's account in flight (or being claimed).
    running: Arc<AtomicU64>,
    stopped: Arc<AtomicBool>,
    /// This run's branch of the stop tree (its deadline).
    cancel: Cancel,
    /// The migration's root: a fatal error stops every account's run.
    root: Cancel,
}

/// What the graph and the database are told of a job's end.
struct Outcome {
    to: JobState,
    not_before: UnixMillis,
    /// The attempt counts (not a stop, not a wait for its turn).
    counted: bool,
    /// The error and its class, when a failure is why.
    error: Option<(String, String)>,
}

impl<R: Runner> Worker<R> {
    async fn run(&self) -> Result<(), RunError> {
        loop {
            let now = self.clock.now_ms();
            if self.cancel.is_stopped() || self.opts.deadline.is_some_and(|d| now >= d) {
                self.stopped.store(true, Ordering::SeqCst);
                return Ok(());
            }
            // Listen before looking, so a change between the look and the wait is not missed.
            let change = self.shared.changes.notified();
            tokio::pin!(change);
            change.as_mut().enable();
            // Claimed and counted as running under the graph's lock, and nothing running looked
            // at under it too: an idle peer never sees a job that is neither pending nor running,
            // and whoever it sees running ends with a change (which wakes it).
            let claimed = {
                let mut graph = self.shared.graph();
                match graph.claim(&self.opts.accounts, now, PER_PARENT) {
                    Some(job) => {
                        self.running.fetch_add(1, Ordering::SeqCst);
                        Ok(job)
                    }
                    None => Err((
                        graph.pending(&self.opts.accounts, now),
                        self.running.load(Ordering::SeqCst),
                    )),
                }
            };
            let job = match claimed {
                Ok(job) => job,
                Err(((pending, next), running)) => {
                    if pending == 0 && running == 0 {
                        return Ok(());
                    }
                    // Work remains but is not claimable yet: its parent or a sibling is in flight
                    // (woken when a job changes: the graph's every change notifies), or it waits for
                    // a retry time (woken at that instant, the earliest of them), or the run stops.
                    let retry = async {
                        match next {
                            Some(t) => self.clock.sleep_until_ms(t).await,
                            None => std::future::pending().await,
                        }
                    };
                    tokio::select! {
                        _ = retry => {}
                        _ = change => {}
                        _ = self.cancel.stopped() => {}
                    }
                    continue;
                }
            };
            let (id, owner) = (job.id, self.owner.clone());
            if let Err(e) = store(&self.db, move |db| db.start_job(id, &owner, now)).await {
                // The graph said queued and the database does not agree (or the lock is gone):
                // nothing more is decided on a view that is wrong.
                self.running.fetch_sub(1, Ordering::SeqCst);
                self.shared.changed();
                return Err(e);
            }
            let turn = Turn {
                shared: self.shared.clone(),
                job: job.id,
            };
            // Where a run's time goes, job by job (`-vv`): with the limiter's waits, what explains
            // a span longer than the budgets allow.
            tracing::debug!(job = id, account = %job.account, kind = job.kind.as_str(), "job starts");
            let result = self.runner.run(&job, &turn, &self.opts).await;
            tracing::debug!(
                job = id,
                account = %job.account,
                kind = job.kind.as_str(),
                ms = self.clock.now_ms() - now,
                ok = result.is_ok(),
                "job ends"
            );
            let end = self.settle(&job, result);
            let (outcome, fatal, stop) = match end {
                Settled::Outcome(o) => (o, None, false),
                Settled::Stop(o) => (o, None, true),
                Settled::Fatal(o, e) => (o, Some(e), true),
            };
            let recorded = self.record(&job, outcome).await;
            self.running.fetch_sub(1, Ordering::SeqCst);
            // A finished, failed or parked job may be what a waiting sibling or an idle worker
            // waits for.
            self.shared.changed();
            if let Some(e) = fatal {
                return Err(e);
            }
            recorded?;
            if stop {
                // The next request could start only after the deadline: this worker is done
                // (claiming again would only meet the same answer).
                self.stopped.store(true, Ordering::SeqCst);
                return Ok(());
            }
        }
    }

    /// What becomes of a job after its attempt: decided by the error's class and the item's
    /// retry budget, shared with the layers below.
    fn settle(&self, job: &Job, result: Result<(), JobError>) -> Settled {
        let now = self.clock.now_ms();
        let park = |not_before| Outcome {
            to: JobState::Queued,
            not_before,
            counted: false,
            error: None,
        };
        match result {
            Ok(()) => Settled::Outcome(Outcome {
                to: JobState::Done,
                not_before: 0,
                counted: true,
                error: None,
            }),
            Err(JobError::Permanent(f)) => {
                tracing::warn!(
                    job = job.id,
                    kind = job.kind.as_str(),
                    class = %f.class,
                    "failed for good: {f}"
                );
                self.stats.failed.fetch_add(1, Ordering::Relaxed);
                Settled::Outcome(Outcome {
                    to: JobState::Failed,
                    not_before: 0,
                    counted: true,
                    error: Some((f.to_string(), f.class.code())),
                })
            }
            // One budget with the layers below: retries the client already made count here.
            Err(JobError::Transient(f)) => {
                let retried = u32::try_from(job.attempts - 1).unwrap_or(0);
                match self.runner.retries().should_retry(&f, retried) {
                    None => {
                        self.stats.failed.fetch_add(1, Ordering::Relaxed);
                        // A client's "gave up after N attempts" already says how often.
                        let msg = if job.attempts > 1 {
                            format!("{f} (after {} attempts)", job.attempts)
                        } else {
                            f.to_string()
                        };
                        let code = Class::new(f.class.scope.max(Scope::Item), Next::Never).code();
                        Settled::Outcome(Outcome {
                            to: JobState::Failed,
                            not_before: 0,
                            counted: true,
                            error: Some((msg, code)),
                        })
                    }
                    Some(backoff) => {
                        tracing::info!(job = job.id, class = %f.class, "will retry: {f}");
                        let backoff = i64::try_from(backoff.as_millis()).unwrap_or(i64::MAX);
                        Settled::Outcome(Outcome {
                            to: JobState::Queued,
                            not_before: now.saturating_add(backoff),
                            counted: true,
                            error: Some((f.to_string(), f.class.code())),
                        })
                    }
                }
            }
            Err(JobError::Stop) => Settled::Stop(park(0)),
            Err(JobError::NotYet(until)) => {
                let min = i64::try_from(NOT_YET_MIN.as_millis()).unwrap_or(i64::MAX);
                Settled::Outcome(park(until.max(now + min)))
            }
            Err(JobError::Fatal(e)) => {
                // Every worker stops taking work now, not when its own job ends: a refusal
                // that stops the run must not be met again by each queued page.
                self.root.stop();
                Settled::Fatal(park(0), e)
            }
        }
    }

    /// Applies an outcome to the graph and writes it through to SQLite (off the runtime threads),
    /// then tells whoever shows the run's progress.
    async fn record(&self, job: &Job, o: Outcome) -> Result<(), RunError> {
        self.shared
            .graph()
            .finish(job.id, o.to, o.not_before, o.counted);
        let (id, owner, now) = (job.id, self.owner.clone(), self.clock.now_ms());
        store(&self.db, move |db| {
            let error = o.error.as_ref().map(|(m, c)| (m.as_str(), c.as_str()));
            match (o.to, o.counted) {
                (JobState::Done, _) => db.complete_job(id, &owner, now),
                (JobState::Failed, _) => {
                    let (m, c) = error.unwrap_or(("", ""));
                    db.fail_job(id, &owner, m, c, now)
                }
                (_, true) => db.requeue_job(id, &owner, error, o.not_before, now),
                (_, false) => db.defer_job(id, &owner, o.not_before, now),
            }
        })
        .await?;
        crate::crash::point("queue.job_recorded");
        self.stats.transitions.send_modify(|n| *n += 1);
        Ok(())
    }
}

/// How an attempt ended, for the worker.
enum Settled {
    /// Recorded, and the worker goes on.
    Outcome(Outcome),
    /// Parked, and this worker stops (the deadline or the network's wait).
    Stop(Outcome),
    /// Parked, and the run ends with the error.
    Fatal(Outcome, RunError),
}

/// Runs a store call off the runtime's threads ([`Db::call`]): the queue's transitions wait for
/// SQLite (a busy database, a sync to disk) without holding a thread that Graph and Notion
/// requests need.
pub(super) async fn store<T: Send + 'static>(
    db: &Arc<Db>,
    f: impl FnOnce(&Db) -> Result<T, StoreError> + Send + 'static,
) -> Result<T, RunError> {
    db.call(f).await.map_err(RunError::Store)
}

#[cfg(test)]
mod tests {
    //! The scheduler in process on tokio's paused clock, with the real store and a fake runner
    //! whose pages take the times the tests give them.

    use std::collections::HashMap;

    use super::*;
    use crate::store::inventory::{Notebook, Page, ScanScope, Section};
    use tokio::time::Instant;

    /// What the fake runner saw, in order: (what, item, seconds since the start).
    type Log = Arc<Mutex<Vec<(&'static str, String, f64)>>>;

    #[derive(Clone)]
    struct Fake {
        start: Instant,
        clock: Clock,
        /// How long fetching each page's content takes.
        fetch: Arc<HashMap<String, Duration>>,
        /// How many of each item's first attempts fail with a retryable error.
        failing: Arc<HashMap<String, i64>>,
        /// Items whose attempt ends the run.
        fatal: Arc<Vec<String>>,
        log: Log,
    }

    impl Fake {
        fn new(fetch: &[(&str, u64)]) -> Self {
            Self {
                start: Instant::now(),
                clock: Clock::system(),
                fetch: Arc::new(
                    fetch
                        .iter()
                        .map(|(i, s)| (i.to_string(), Duration::from_secs(*s)))
                        .collect(),
                ),
                failing: Arc::default(),
                fatal: Arc::default(),
                log: Log::default(),
            }
        }

        fn note(&self, what: &'static str, item: &str) {
            let at = self.start.elapsed().as_secs_f64();
            self.log.lock().unwrap().push((what, item.to_owned(), at));
        }

        fn events(&self, what: &str) -> Vec<(String, f64)> {
            let log = self.log.lock().unwrap();
            log.iter()
                .filter(|(w, ..)| *w == what)
                .map(|(_, i, t)| (i.clone(), *t))
                .collect()
        }

        fn order(&self, what: &str) -> Vec<String> {
            self.events(what).into_iter().map(|(i, _)| i).collect()
        }
    }

    impl Runner for Fake {
        fn run(
            &self,
            job: &Job,
            turn: &Turn,
            opts: &RunOptions,
        ) -> impl Future<Output = Result<(), JobError>> + Send {
            let (me, job, turn, deadline) =
                (self.clone(), job.clone(), turn.clone(), opts.deadline);
            async move {
                me.note("start", &job.item_id);
                turn.check()?;
                let fetch = me.fetch.get(&job.item_id).copied().unwrap_or_default();
                // As the limiter does: a wait that would pass the deadline stops instead.
                if deadline.is_some_and(|d| me.clock.now_ms() + fetch.as_millis() as i64 > d) {
                    return Err(JobError::Stop);
                }
                tokio::time::sleep(fetch).await;
                if me.fatal.contains(&job.item_id) {
                    return Err(JobError::Fatal(RunError::Unrecorded("lost".into())));
                }
                if job.attempts <= me.failing.get(&job.item_id).copied().unwrap_or(0) {
                    me.note("failed", &job.item_id);
                    return Err(JobError::transient("HTTP 503".into()));
                }
                turn.wait().await?;
                tokio::time::sleep(Duration::from_millis(100)).await;
                me.note("created", &job.item_id);
                turn.created();
                tokio::time::sleep(Duration::from_secs(1)).await;
                Ok(())
            }
        }
    }

    /// One notebook with one section of `pages` pages, planned, and the run lock taken.
    fn planned(pages: usize) -> (tempfile::TempDir, Arc<Db>, RunToken) {
        let dir = tempfile::tempdir().unwrap();
        let db = Arc::new(Db::open(&dir.path().join("s.db")).unwrap());
        let nb = vec![Notebook {
            id: "nb".into(),
            name: "NB".into(),
            created: None,
            last_modified: None,
            section_groups: vec![],
            sections: vec![Section {
                id: "s".into(),
                name: "S".into(),
                created: None,
                last_modified: None,
                pages: (1..=pages)
                    .map(|i| Page {
                        id: format!("p{i}"),
                        title: format!("P{i}"),
                        level: 0,
                        order: i as i64,
                        last_modified: None,
                        created: None,
                        content_url: None,
                        author: None,
                        web_url: None,
                    })
                    .collect(),
            }],
        }];
        db.save_scan("a", &nb, &ScanScope::All, 1).unwrap();
        let token = db
            .acquire_run_lock(1, "run", 1, Duration::from_secs(90), |_| false)
            .unwrap()
            .unwrap();
        db.create_plan(&token, "a", "target", &nb, 1).unwrap();
        (dir, db, token)
    }

    fn scheduler(fake: &Fake, db: &Arc<Db>, token: &RunToken) -> Scheduler<Fake> {
        Scheduler {
            runner: fake.clone(),
            db: db.clone(),
            clock: fake.clock.clone(),
            owner: token.clone(),
            stats: Arc::default(),
        }
    }

    fn opts(workers: usize, deadline: Option<UnixMillis>) -> RunOptions {
        RunOptions {
            accounts: vec!["a".into()],
            deadline,
            workers,
        }
    }

    /// Each item's (state, attempts) as stored.
    fn stored(db: &Db) -> HashMap<String, (JobState, i64)> {
        db.load_jobs(&[])
            .unwrap()
            .into_iter()
            .map(|j| (j.job.item_id, (j.state, j.job.attempts)))
            .collect()
    }

    fn pages(n: usize) -> Vec<String> {
        (1..=n).map(|i| format!("p{i}")).collect()
    }

    #[tokio::test(start_paused = true)]
    async fn siblings_are_created_in_onenote_order_while_later_ones_fetch_ahead() {
        let (_dir, db, token) = planned(5);
        // The first page is the slowest to fetch: the later ones fetch beside it and wait.
        let fake = Fake::new(&[("p1", 5), ("p2", 4), ("p3", 3), ("p4", 2), ("p5", 1)]);
        let end = scheduler(&fake, &db, &token)
            .run(&opts(8, None), &Cancel::new())
            .await
            .unwrap();
        assert_eq!(end, RunEnd::Finished);
        let created: Vec<String> = fake
            .order("created")
            .into_iter()
            .filter(|i| i.starts_with('p'))
            .collect();
        assert_eq!(created, pages(5));
        // Three pages of the section in flight at once (`PER_PARENT`): p2 and p3 started with p1.
        let starts: HashMap<String, f64> = fake.events("start").into_iter().collect();
        assert_eq!((starts["p2"], starts["p3"]), (starts["p1"], starts["p1"]));
        // p2 and p3 were fetched while p1 was: each is created 0.1 s after the one before.
        let at: HashMap<String, f64> = fake.events("created").into_iter().collect();
        assert!((at["p3"] - at["p1"] - 0.2).abs() < 1e-6, "{at:?}");
        assert!(stored(&db).values().all(|(s, _)| *s == JobState::Done));
    }

    #[tokio::test(start_paused = true)]
    async fn a_retry_waits_its_time_and_its_later_siblings_wait_for_it_without_an_attempt() {
        let (_dir, db, token) = planned(3);
        let mut fake = Fake::new(&[("p1", 1), ("p2", 1), ("p3", 1)]);
        fake.failing = Arc::new(HashMap::from([("p1".to_owned(), 1)]));
        let end = scheduler(&fake, &db, &token)
            .run(&opts(8, None), &Cancel::new())
            .await
            .unwrap();
        assert_eq!(end, RunEnd::Finished);
        let failed = fake.events("failed");
        let p1_starts: Vec<f64> = fake
            .events("start")
            .into_iter()
            .filter(|(i, _)| i == "p1")
            .map(|(_, t)| t)
            .collect();
        assert_eq!(p1_starts.len(), 2);
        // The first retry comes after the budget's first backoff (4 s), not sooner.
        let waited = p1_starts[1] - failed[0].1;
        assert!((4.0..4.1).contains(&waited), "retried after {waited} s");
        let created: Vec<String> = fake.order("created");
        assert_eq!(created, ["nb", "s", "p1", "p2", "p3", "1"]);
        let s = stored(&db);
        assert_eq!(s["p1"], (JobState::Done, 2));
        // p2 and p3 were parked behind p1 (their attempt not counted), then done at once.
        assert_eq!(
            (s["p2"], s["p3"]),
            ((JobState::Done, 1), (JobState::Done, 1))
        );
    }

    #[tokio::test(start_paused = true)]
    async fn the_deadline_parks_what_would_pass_it_and_leaves_the_rest_queued() {
        let (_dir, db, token) = planned(5);
        let fake = Fake::new(&[("p1", 10), ("p2", 10), ("p3", 10), ("p4", 10), ("p5", 10)]);
        let deadline = fake.clock.now_ms() + 25_000;
        let end = scheduler(&fake, &db, &token)
            .run(&opts(1, Some(deadline)), &Cancel::new())
            .await
            .unwrap();
        assert_eq!(end, RunEnd::Stopped);
        // One worker: p1 and p2 fit (about 11 s each); p3 would pass the deadline.
        assert_eq!(fake.order("created"), ["nb", "s", "p1", "p2"]);
        assert!(fake.start.elapsed() < Duration::from_secs(25));
        let s = stored(&db);
        assert_eq!(s["p2"], (JobState::Done, 1));
        assert_eq!(
            s["p3"],
            (JobState::Queued, 0),
            "parked, its attempt not counted"
        );
        assert_eq!(s["p4"], (JobState::Queued, 0));
        assert!(s.values().all(|(st, _)| *st != JobState::Running));
    }

    #[tokio::test(start_paused = true)]
    async fn a_stop_takes_no_new_work_and_lets_what_is_in_flight_finish() {
        let (_dir, db, token) = planned(6);
        let fake = Fake::new(&[
            ("p1", 2),
            ("p2", 2),
            ("p3", 2),
            ("p4", 2),
            ("p5", 2),
            ("p6", 2),
        ]);
        let root = Cancel::new();
        {
            let root = root.clone();
            tokio::spawn(async move {
                // The notebook and section take 1.1 s each: three pages are in flight.
                tokio::time::sleep(Duration::from_secs(3)).await;
                root.stop();
            });
        }
        let end = scheduler(&fake, &db, &token)
            .run(&opts(8, None), &root)
            .await
            .unwrap();
        assert_eq!(end, RunEnd::Stopped);
        // The three pages in flight at the stop were finished; none was started after it.
        assert_eq!(fake.order("created"), ["nb", "s", "p1", "p2", "p3"]);
        assert!(fake.events("start").iter().all(|(_, t)| *t < 3.0));
        let s = stored(&db);
        assert_eq!(s["p3"], (JobState::Done, 1));
        assert_eq!(s["p4"], (JobState::Queued, 0));
        assert!(s.values().all(|(st, _)| *st != JobState::Running));
    }

    #[tokio::test(start_paused = true)]
    async fn a_fatal_error_ends_the_run_and_parks_its_job() {
        let (_dir, db, token) = planned(3);
        let mut fake = Fake::new(&[("p1", 1), ("p2", 3), ("p3", 3)]);
        fake.fatal = Arc::new(vec!["p1".into()]);
        let root = Cancel::new();
        let r = scheduler(&fake, &db, &token)
            .run(&opts(8, None), &root)
            .await;
        assert!(matches!(r, Err(RunError::Unrecorded(_))), "{r:?}");
        assert!(root.is_stopped(), "every account's run stops");
        let s = stored(&db);
        assert_eq!(s["p1"], (JobState::Queued, 0));
        assert!(s.values().all(|(st, _)| *st != JobState::Running));
    }

    #[tokio::test(start_paused = true)]
    async fn idle_workers_sleep_until_the_change_or_the_retry_time_they_wait_for() {
        let (_dir, db, token) = planned(3);
        // The notebook takes ten minutes: seven of the eight workers have nothing to claim.
        let mut fake = Fake::new(&[("nb", 600), ("p1", 1), ("p2", 1), ("p3", 1)]);
        // p2's first attempt fails: its retry comes 4 s later, and nothing else is left then.
        fake.failing = Arc::new(HashMap::from([("p2".to_owned(), 1)]));
        let shared = Shared::new(JobGraph::new(db.load_jobs(&[]).unwrap()));
        let run = {
            let (s, shared) = (scheduler(&fake, &db, &token), shared.clone());
            tokio::spawn(async move { s.drive(shared, &opts(8, None), &Cancel::new()).await })
        };
        tokio::time::sleep(Duration::from_secs(10)).await;
        let before = shared.consulted.load(Ordering::Relaxed);
        tokio::time::sleep(Duration::from_secs(580)).await;
        // Nothing changed in those minutes: no worker looked at the graph (a nap of a few seconds
        // would have looked thousands of times).
        assert_eq!(shared.consulted.load(Ordering::Relaxed), before);
        // At 605 s the pages have run: p1 is created, p2 failed at 603.2 s and waits for its retry
        // at 607.2 s, p3 is parked behind it. Nobody looks at the graph until then.
        tokio::time::sleep(Duration::from_secs(15)).await;
        let idle = shared.consulted.load(Ordering::Relaxed);
        tokio::time::sleep(Duration::from_secs(2)).await;
        assert_eq!(shared.consulted.load(Ordering::Relaxed), idle);
        assert_eq!(run.await.unwrap().unwrap(), RunEnd::Finished);
        // Woken at that instant, not on a nap's grid.
        let failed = fake.events("failed")[0].1;
        let retried = fake
            .events("start")
            .into_iter()
            .filter(|(i, _)| i == "p2")
            .map(|(_, t)| t)
            .nth(1)
            .unwrap();
        assert!(
            (retried - failed - 4.0).abs() < 1e-9,
            "{}",
            retried - failed
        );
        assert_eq!(fake.order("created"), ["nb", "s", "p1", "p2", "p3", "1"]);
    }

    #[tokio::test(start_paused = true)]
    async fn a_waiting_page_goes_on_the_moment_its_earlier_siblings_are_created() {
        let (_dir, db, _token) = planned(3);
        let shared = Shared::new(JobGraph::new(db.load_jobs(&[]).unwrap()));
        let jobs: Vec<Job> = (0..5)
            .map(|_| {
                let mut g = shared.graph();
                let j = g.claim(&[], 2, PER_PARENT).unwrap();
                if j.kind != crate::store::jobs::JobKind::Page {
                    g.finish(j.id, JobState::Done, 0, true);
                }
                j
            })
            .collect();
        let turn = |j: &Job| Turn {
            shared: shared.clone(),
            job: j.id,
        };
        let waiter = {
            let t = turn(&jobs[4]);
            tokio::spawn(async move { t.wait().await.is_ok() })
        };
        // Time alone never gives a page its turn, however long: no timer wakes the wait.
        tokio::time::sleep(Duration::from_secs(601)).await;
        assert!(!waiter.is_finished(), "p3 went before p1 and p2 exist");
        turn(&jobs[2]).created();
        let before = Instant::now();
        turn(&jobs[3]).created();
        assert!(waiter.await.unwrap());
        assert!(
            before.elapsed() < Duration::from_millis(10),
            "{:?}",
            before.elapsed()
        );
        // A page behind a sibling waiting for its retry (its page not created) is parked until
        // about then, before it fetches anything.
        let shared = Shared::new(JobGraph::new(db.load_jobs(&[]).unwrap()));
        let jobs: Vec<Job> = (0..5)
            .map(|_| shared.graph().claim(&[], 2, usize::MAX))
            .map(|j| {
                let j = j.unwrap();
                if j.kind != crate::store::jobs::JobKind::Page {
                    shared.graph().finish(j.id, JobState::Done, 0, true);
                }
                j
            })
            .collect();
        let turn = |j: &Job| Turn {
            shared: shared.clone(),
            job: j.id,
        };
        assert!(
            turn(&jobs[3]).check().is_ok(),
            "p1 only in flight: p2 may fetch ahead"
        );
        shared
            .graph()
            .finish(jobs[2].id, JobState::Queued, 9_000, true);
        assert!(matches!(
            turn(&jobs[4]).check(),
            Err(JobError::NotYet(9_000))
        ));
        assert!(matches!(
            turn(&jobs[4]).wait().await,
            Err(JobError::NotYet(9_000))
        ));
    }
}
