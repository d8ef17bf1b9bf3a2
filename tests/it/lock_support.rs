//! Another process's write on the state database, for the tests that check a store call waiting on
//! it leaves the async runtime to its other tasks.

use std::path::Path;
use std::time::{Duration, Instant};

use tokio::task::JoinHandle;

/// A second connection holding SQLite's write lock (an IMMEDIATE transaction), as another process
/// in the middle of a write; held until [`release`](Self::release).
pub struct HeldWrite(rusqlite::Connection);

impl HeldWrite {
    /// Takes the write lock of the database at `path`.
    pub fn take(path: &Path) -> Self {
        let c = rusqlite::Connection::open(path).unwrap();
        c.execute_batch("BEGIN IMMEDIATE").unwrap();
        Self(c)
    }

    /// Commits, letting the waiting writes through.
    pub fn release(self) {
        self.0.execute_batch("COMMIT").unwrap();
    }
}

/// Runs ten 10 ms ticks on the test's own runtime and checks that they ran at once (the runtime
/// was not stalled by the store) while `waiting` still waits for the database; `what` says what
/// must not have happened yet.
pub async fn ticks_while_waiting<T>(waiting: &JoinHandle<T>, what: &str) {
    let started = Instant::now();
    for _ in 0..10 {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "the runtime was stalled for {:?}",
        started.elapsed()
    );
    assert!(
        !waiting.is_finished(),
        "{what} while the database was locked"
    );
}
