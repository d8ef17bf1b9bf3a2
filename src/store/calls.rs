//! The one way async code reaches the state database: [`Db::call`] and [`Db::submit`] queue a
//! closure, and one drainer on tokio's blocking pool runs the queue in order, so no SQLite call
//! (a grant that waits out the busy timeout behind another process, a sync to a slow disk) holds
//! a runtime thread that Graph and Notion requests need.
//!
//! One queue per database, run in the order the calls were made: a limiter permit's outcome,
//! submitted without waiting, is written before any grant asked for after it, as when the write
//! was made on the spot. The connection is one behind a mutex anyway, so the queue costs no
//! concurrency.
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
    queue: VecDeque<Call>,
    /// A drainer is running or spawned: it takes whatever is queued before it ends.
    draining: bool,
    /// Calls queued so far, and calls run so far: what [`Db::settle`] waits on.
    queued: u64,
    ran: u64,
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
        let (tx, rx) = tokio::sync::oneshot::channel::<Ended<T>>();
        self.enqueue(Box::new(move |db| {
            let ended = panic::catch_unwind(AssertUnwindSafe(|| f(db)));
            // The caller may have gone (its task cancelled): the work is done all the same.
            let _ = tx.send(ended);
        }));
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
        self.enqueue(Box::new(move |db| {
            if panic::catch_unwind(AssertUnwindSafe(|| f(db))).is_err() {
                tracing::error!("a state database write panicked");
            }
        }));
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
        while s.ran < target {
            s = self.calls.ran.wait(s).expect("store calls poisoned");
        }
    }

    fn enqueue(self: &Arc<Self>, call: Call) {
        {
            let mut s = self.calls.state();
            s.queue.push_back(call);
            s.queued += 1;
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
                match s.queue.pop_front() {
                    Some(c) => c,
                    None => {
                        s.draining = false;
                        break;
                    }
                }
            };
            next(&self.0);
            self.0.calls.state().ran += 1;
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
        let order: Vec<String> = db
            .call(|db| {
                db.read("names", |c| {
                    let mut st = c.prepare("SELECT name FROM accounts ORDER BY rowid")?;
                    let rows = st.query_map([], |r| r.get(0))?;
                    rows.collect()
                })
            })
            .await
            .unwrap();
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
