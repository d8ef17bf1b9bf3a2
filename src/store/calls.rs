//! The one way async code reaches the state database: [`Db::call`] and [`Db::submit`] queue a
//! closure, and one drainer on tokio's blocking pool runs the queue in order, so no SQLite call
//! (a grant that waits out the busy timeout behind another process, a sync to a slow disk) holds
//! a runtime thread that Graph and Notion requests need.
//!
//! One queue per database, run in the order the calls were made, but for one exception: a
//! [`Priority::Foreground`] call (a scan's limiter grant, which someone waits on) goes ahead of the
//! [`Priority::Background`] calls queued before it (a migration's grants and outcomes), at most
//! [`OVERTAKES`] times in a row, so background work is delayed by a bounded number of calls and
//! never starved. An [`Priority::Ordered`] call (the default) is never overtaken: a limiter's 429,
//! submitted without waiting, is written before any grant asked for after it, as when the write
//! was made on the spot. Calls of one priority run in the order they were made, so one caller's
//! calls (all made in its lane's priority) are never reordered. The connection is one behind a
//! mutex anyway, so the queue costs no concurrency.
//!
//! The blocking pool, not a thread of our own, because tokio knows about its tasks: on a paused
//! clock in tests, time does not auto-advance while one runs, so the limiter's instants stay exact.
//! Without a runtime (a sync command, a `Drop` after the runtime ended) the queue runs on the
//! caller's thread; a drainer the runtime cancels at shutdown runs what it held as it is dropped,
//! so a submitted write is never lost.

use std::any::Any;
use std::cell::Cell;
use std::collections::VecDeque;
use std::panic::{self, AssertUnwindSafe};
use std::sync::{Arc, Condvar, Mutex};

use super::Db;

/// One queued closure.
type Call = Box<dyn FnOnce(&Db) + Send>;

/// How a queued call may be ordered against the calls queued before it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Priority {
    /// Work someone waits on now (a foreground lane's grant and outcome): runs ahead of the
    /// background calls queued before it, never ahead of an ordered one.
    Foreground,
    /// Work that can wait a few calls (a background lane's grants and outcomes): a foreground
    /// call made after it may run first.
    Background,
    /// Runs after every call queued before it, and before every call queued after it.
    Ordered,
}

/// How many foreground calls in a row may go ahead of a waiting background call: its wait is
/// bounded by this many calls however much foreground work comes.
pub const OVERTAKES: u32 = 8;

/// A call in the queue, with its place in the order calls were made.
struct Queued {
    seq: u64,
    priority: Priority,
    call: Call,
}

/// The database's queue of calls from async code.
#[derive(Default)]
pub(super) struct Calls {
    state: Mutex<State>,
    /// Signalled each time a call has run.
    ran: Condvar,
}

impl std::fmt::Debug for Calls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let s = self.state();
        f.debug_struct("Calls")
            .field("queued", &s.queue.len())
            .field("draining", &s.draining)
            .finish()
    }
}

#[derive(Default)]
struct State {
    queue: VecDeque<Queued>,
    /// A drainer is running or spawned: it takes whatever is queued before it ends.
    draining: bool,
    /// Calls queued so far: the next call's place in the order.
    queued: u64,
    /// The place of the call running now, if one is: with the queue, what [`Db::settle`] waits on.
    running: Option<u64>,
    /// Foreground calls in the queue (none: the front is next, without a look further).
    foreground: usize,
    /// Foreground calls run in a row ahead of an earlier background call.
    overtakes: u32,
}

impl State {
    fn push(&mut self, priority: Priority, call: Call) {
        let seq = self.queued;
        self.queued += 1;
        if priority == Priority::Foreground {
            self.foreground += 1;
        }
        self.queue.push_back(Queued {
            seq,
            priority,
            call,
        });
    }

    /// The next call to run: the first foreground one not behind an ordered call, while
    /// background has not waited [`OVERTAKES`] of them in a row; else the front.
    fn pop(&mut self) -> Option<Queued> {
        let mut at = 0;
        if self.foreground > 0 && self.overtakes < OVERTAKES {
            at = self
                .queue
                .iter()
                .position(|q| q.priority != Priority::Background)
                .filter(|&i| self.queue[i].priority == Priority::Foreground)
                .unwrap_or(0);
        }
        let next = self.queue.remove(at)?;
        self.overtakes = if at > 0 { self.overtakes + 1 } else { 0 };
        if next.priority == Priority::Foreground {
            self.foreground -= 1;
        }
        Some(next)
    }

    /// Whether every call queued before place `target` has run.
    fn ran_before(&self, target: u64) -> bool {
        self.running.is_none_or(|r| r >= target) && self.queue.iter().all(|q| q.seq >= target)
    }
}

impl Calls {
    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().expect("store calls poisoned")
    }
}

thread_local! {
    /// The database whose queue this thread is draining, if any (every call queued before the one
    /// it runs has run).
    static DRAINING: Cell<*const Db> = const { Cell::new(std::ptr::null()) };
}

/// What a call's closure ended with: its value, or its panic (resumed in the caller).
type Ended<T> = Result<T, Box<dyn Any + Send>>;

impl Db {
    /// Runs `f` on the database off the async runtime, after every call queued before it, and
    /// returns what it returned. A panic in `f` is resumed here.
    pub async fn call<T: Send + 'static>(
        self: &Arc<Self>,
        f: impl FnOnce(&Db) -> T + Send + 'static,
    ) -> T {
        self.call_as(Priority::Ordered, f).await
    }

    /// [`Db::call`] in the order `priority` allows.
    pub async fn call_as<T: Send + 'static>(
        self: &Arc<Self>,
        priority: Priority,
        f: impl FnOnce(&Db) -> T + Send + 'static,
    ) -> T {
        let (tx, rx) = tokio::sync::oneshot::channel::<Ended<T>>();
        self.enqueue(
            priority,
            Box::new(move |db| {
                let ended = panic::catch_unwind(AssertUnwindSafe(|| f(db)));
                // The caller may have gone (its task cancelled): the work is done all the same.
                let _ = tx.send(ended);
            }),
        );
        match rx.await {
            Ok(Ok(v)) => v,
            Ok(Err(p)) => panic::resume_unwind(p),
            // Only a drainer dropped without running its queue loses the sender, and it runs it.
            Err(_) => unreachable!("a queued store call is always run"),
        }
    }

    /// Queues `f` to run off the async runtime after every call queued before it, without waiting
    /// for it (a limiter permit's outcome, given back from sync code). A panic in `f` is logged.
    pub fn submit(self: &Arc<Self>, f: impl FnOnce(&Db) + Send + 'static) {
        self.submit_as(Priority::Ordered, f);
    }

    /// [`Db::submit`] in the order `priority` allows.
    pub fn submit_as(self: &Arc<Self>, priority: Priority, f: impl FnOnce(&Db) + Send + 'static) {
        self.enqueue(
            priority,
            Box::new(move |db| {
                if panic::catch_unwind(AssertUnwindSafe(|| f(db))).is_err() {
                    tracing::error!("a state database write panicked");
                }
            }),
        );
    }

    /// Waits until every call queued so far has run (not those queued after): what sync code
    /// does before it reads what async code may have submitted (`Limiter::snapshot` after a
    /// permit's outcome). Returns at once on the drainer itself, where that holds already.
    pub fn settle(&self) {
        if std::ptr::eq(DRAINING.get(), self) {
            return;
        }
        let mut s = self.calls.state();
        let target = s.queued;
        while !s.ran_before(target) {
            s = self.calls.ran.wait(s).expect("store calls poisoned");
        }
    }

    fn enqueue(self: &Arc<Self>, priority: Priority, call: Call) {
        {
            let mut s = self.calls.state();
            s.push(priority, call);
            if s.draining {
                return;
            }
            s.draining = true;
        }
        let drainer = Drainer(self.clone());
        match tokio::runtime::Handle::try_current() {
            // Dropped unrun when the runtime is shutting down: it drains as it is dropped.
            Ok(rt) => drop(rt.spawn_blocking(move || drop(drainer))),
            Err(_) => drop(drainer),
        }
    }
}

/// Runs the queue until it is empty when dropped: on the blocking pool as its task, or wherever
/// a task cancelled unrun is dropped.
struct Drainer(Arc<Db>);

impl Drop for Drainer {
    fn drop(&mut self) {
        let outer = DRAINING.replace(Arc::as_ptr(&self.0));
        loop {
            let next = {
                let mut s = self.0.calls.state();
                match s.pop() {
                    Some(q) => {
                        s.running = Some(q.seq);
                        q.call
                    }
                    None => {
                        s.draining = false;
                        break;
                    }
                }
            };
            next(&self.0);
            self.0.calls.state().running = None;
            self.0.calls.ran.notify_all();
        }
        DRAINING.set(outer);
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::time::Duration;

    use rusqlite::TransactionBehavior;

    use super::*;

    fn open() -> (tempfile::TempDir, Arc<Db>) {
        let dir = tempfile::tempdir().unwrap();
        let db = Arc::new(Db::open(&dir.path().join("s.db")).unwrap());
        (dir, db)
    }

    fn count(db: &Db) -> i64 {
        db.read("count", |c| {
            c.query_row("SELECT count(*) FROM accounts", [], |r| r.get(0))
        })
        .unwrap()
    }

    fn add(db: &Db, name: &str) {
        db.write("add", |tx| {
            tx.execute(
                "INSERT INTO accounts(name,user_id,user_principal_name,updated_at)
                 VALUES(?1,'u','x@y',1)",
                [name],
            )
        })
        .unwrap();
    }

    /// The accounts' names in the order they were written.
    async fn names(db: &Arc<Db>) -> Vec<String> {
        db.call(|db| {
            db.read("names", |c| {
                let mut st = c.prepare("SELECT name FROM accounts ORDER BY rowid")?;
                let rows = st.query_map([], |r| r.get(0))?;
                rows.collect()
            })
        })
        .await
        .unwrap()
    }

    #[tokio::test(flavor = "current_thread")]
    async fn a_call_waiting_on_a_locked_database_leaves_the_runtime_thread_free() {
        let (dir, db) = open();
        // Another process holds a write transaction.
        let mut other = rusqlite::Connection::open(dir.path().join("s.db")).unwrap();
        let held = other
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .unwrap();
        let write = {
            let db = db.clone();
            tokio::spawn(async move { db.call(|db| add(db, "a")).await })
        };
        // The one runtime thread still runs other tasks while the call waits for the lock.
        let ticked = Arc::new(AtomicBool::new(false));
        let ticker = {
            let ticked = ticked.clone();
            tokio::spawn(async move {
                tokio::time::sleep(Duration::from_millis(50)).await;
                ticked.store(true, Ordering::SeqCst);
            })
        };
        ticker.await.unwrap();
        assert!(ticked.load(Ordering::SeqCst));
        assert!(
            !write.is_finished(),
            "the write waits for the other process"
        );
        held.commit().unwrap();
        write.await.unwrap();
        assert_eq!(count(&db), 1);
    }

    #[tokio::test(flavor = "current_thread")]
    async fn calls_run_in_the_order_they_were_made_submitted_ones_included() {
        let (_dir, db) = open();
        for i in 0..20 {
            db.submit(move |db| add(db, &format!("a{i}")));
        }
        // Made after the submissions: it sees every one of them.
        let seen = db.call(count).await;
        assert_eq!(seen, 20);
        let order = names(&db).await;
        let want: Vec<String> = (0..20).map(|i| format!("a{i}")).collect();
        assert_eq!(order, want);
    }

    #[tokio::test(flavor = "current_thread")]
    async fn a_panic_reaches_its_caller_and_the_queue_goes_on() {
        let (_dir, db) = open();
        let failed = {
            let db = db.clone();
            tokio::spawn(async move { db.call(|_| panic!("boom")).await })
        };
        assert!(failed.await.unwrap_err().is_panic());
        db.submit(|_| panic!("boom again"));
        assert_eq!(db.call(count).await, 0);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn settling_reads_what_was_submitted_before() {
        let (_dir, db) = open();
        // A slow first call, so the writes behind it are still queued when sync code reads.
        db.submit(|_| std::thread::sleep(Duration::from_millis(50)));
        for i in 0..5 {
            db.submit(move |db| add(db, &format!("a{i}")));
        }
        db.settle();
        assert_eq!(count(&db), 5);
        // On the drainer itself it returns at once (what was queued before has run).
        assert_eq!(
            db.call(|db| {
                db.settle();
                count(db)
            })
            .await,
            5
        );
    }

    #[test]
    fn without_a_runtime_a_submitted_write_is_made_at_once() {
        let (_dir, db) = open();
        db.submit(|db| add(db, "a"));
        assert_eq!(count(&db), 1);
    }

    #[test]
    fn a_write_submitted_as_the_runtime_ends_is_made() {
        let (_dir, db) = open();
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        rt.block_on(async {
            for i in 0..50 {
                db.submit(move |db| add(db, &format!("a{i}")));
            }
        });
        drop(rt);
        assert_eq!(count(&db), 50);
        // The queue works again afterwards, in another runtime.
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        assert_eq!(rt.block_on(db.call(count)), 50);
    }

    /// The order `pop` runs the queued calls in, as their places in the order they were made.
    fn drain_order(s: &mut State) -> Vec<String> {
        std::iter::from_fn(|| s.pop())
            .map(|q| q.seq.to_string())
            .collect()
    }

    fn push(s: &mut State, p: Priority) {
        s.push(p, Box::new(|_| {}));
    }

    #[test]
    fn a_foreground_call_goes_ahead_of_queued_background_ones_each_priority_in_order() {
        use Priority::*;
        let mut s = State::default();
        // 0..3 background, 3 foreground, 4 background, 5 foreground.
        for p in [
            Background, Background, Background, Foreground, Background, Foreground,
        ] {
            push(&mut s, p);
        }
        assert_eq!(drain_order(&mut s), ["3", "5", "0", "1", "2", "4"]);
        assert_eq!(s.foreground, 0);
    }

    #[test]
    fn no_call_goes_ahead_of_an_ordered_one() {
        use Priority::*;
        let mut s = State::default();
        for p in [
            Background, Ordered, Background, Foreground, Ordered, Foreground,
        ] {
            push(&mut s, p);
        }
        // 3 passes 2 but not the ordered 1; 5 passes nothing (the ordered 4 is before it).
        assert_eq!(drain_order(&mut s), ["0", "1", "3", "2", "4", "5"]);
    }

    #[test]
    fn background_gets_its_turn_after_a_bounded_run_of_foreground_calls() {
        use Priority::*;
        let mut s = State::default();
        push(&mut s, Background);
        push(&mut s, Background);
        let n = OVERTAKES as u64 * 2 + 1;
        for _ in 0..n {
            push(&mut s, Foreground);
        }
        let order: Vec<u64> = std::iter::from_fn(|| s.pop()).map(|q| q.seq).collect();
        let fg = |from: u64, k: u64| (from..from + k).collect::<Vec<_>>();
        let k = OVERTAKES as u64;
        let mut want = fg(2, k);
        want.push(0);
        want.extend(fg(2 + k, k));
        want.push(1);
        want.extend(fg(2 + 2 * k, n - 2 * k));
        assert_eq!(order, want);
    }

    #[test]
    fn settling_waits_for_the_earlier_calls_an_overtaking_one_passed() {
        use Priority::*;
        let mut s = State::default();
        push(&mut s, Background);
        push(&mut s, Foreground);
        let target = s.queued;
        let first = s.pop().unwrap();
        assert_eq!(first.seq, 1, "the foreground call runs first");
        s.running = Some(first.seq);
        assert!(!s.ran_before(target));
        s.running = None;
        // Every call but the background one has run: not settled yet.
        assert!(!s.ran_before(target));
        s.running = s.pop().map(|q| q.seq);
        assert!(!s.ran_before(target));
        s.running = None;
        assert!(s.ran_before(target));
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_foreground_grant_runs_before_the_background_writes_queued_ahead_of_it() {
        let (_dir, db) = open();
        // The drainer is held in a first call until everything below is queued.
        let (go, wait) = std::sync::mpsc::channel::<()>();
        db.submit(move |_| wait.recv().unwrap());
        for i in 0..5 {
            db.submit_as(Priority::Background, move |db| add(db, &format!("b{i}")));
        }
        let fg = {
            let db = db.clone();
            tokio::spawn(async move { db.call_as(Priority::Foreground, count).await })
        };
        // The foreground call is queued once the drainer's state holds it.
        while db.calls.state().foreground == 0 {
            tokio::task::yield_now().await;
        }
        go.send(()).unwrap();
        assert_eq!(fg.await.unwrap(), 0, "it ran before every background write");
        // The background writes kept their own order.
        let order = names(&db).await;
        let want: Vec<String> = (0..5).map(|i| format!("b{i}")).collect();
        assert_eq!(order, want);
    }

    #[tokio::test(start_paused = true)]
    async fn the_paused_clock_stands_still_while_a_call_runs() {
        let (_dir, db) = open();
        let start = tokio::time::Instant::now();
        // A timer is pending: were time to auto-advance while the call runs, it would jump there.
        let timer = tokio::spawn(tokio::time::sleep(Duration::from_secs(3600)));
        db.call(|db| {
            std::thread::sleep(Duration::from_millis(50));
            add(db, "a")
        })
        .await;
        assert_eq!(start.elapsed(), Duration::ZERO);
        timer.abort();
    }
}
