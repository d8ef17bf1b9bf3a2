//! The one-migrating-process lock as the queue holds it: taken before the job graph is touched,
//! kept alive by a heartbeat, and, when another process takes it over (this one was paused past
//! its staleness), the run's stop tree is stopped, since going on would run the same jobs twice.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use super::cancel::Cancel;
use crate::clock::Clock;
use crate::store::jobs::{LockHolder, RunToken};
use crate::store::{Db, StoreError};

/// A lock whose holder has not shown signs of life for this long is taken over.
pub const LOCK_STALE: Duration = Duration::from_secs(90);

/// The migration lock, held by this process.
pub struct RunLock {
    db: Arc<Db>,
    token: RunToken,
    lost: Arc<AtomicBool>,
    heartbeat: Option<tokio::task::JoinHandle<()>>,
}

impl RunLock {
    /// Takes the lock for process `pid`, unless a live process (`is_alive`) holds a fresh one:
    /// then who holds it. Taking it queues again what a previous holder left running.
    pub fn acquire(
        db: Arc<Db>,
        pid: i64,
        clock: &Clock,
        is_alive: impl Fn(i64) -> bool,
    ) -> Result<Result<RunLock, LockHolder>, StoreError> {
        let token = uuid::Uuid::new_v4().to_string();
        Ok(
            match db.acquire_run_lock(pid, &token, clock.now_ms(), LOCK_STALE, is_alive)? {
                Ok(token) => Ok(RunLock {
                    db,
                    token,
                    lost: Arc::new(AtomicBool::new(false)),
                    heartbeat: None,
                }),
                Err(holder) => Err(holder),
            },
        )
    }

    /// Refreshes the lock every quarter of [`LOCK_STALE`] until it is released; if another
    /// process took it, `cancel` is stopped and [`RunLock::lost`] says so. Needs a runtime.
    pub fn keep_alive(&mut self, clock: Clock, cancel: Cancel) {
        let (db, token, lost) = (
            self.db.clone(),
            self.token.as_str().to_owned(),
            self.lost.clone(),
        );
        self.heartbeat = Some(tokio::spawn(async move {
            loop {
                tokio::time::sleep(LOCK_STALE / 4).await;
                let token = token.clone();
                let now = clock.now_ms();
                match db.call(move |db| db.heartbeat_run_lock(&token, now)).await {
                    Ok(true) => {}
                    Ok(false) => {
                        tracing::error!(
                            "another notebridge took over the migration lock; stopping"
                        );
                        lost.store(true, Ordering::SeqCst);
                        cancel.stop();
                        return;
                    }
                    Err(e) => tracing::warn!("could not refresh the migration lock: {e}"),
                }
            }
        }));
    }

    /// What the run presents to every transition of the queue.
    pub fn token(&self) -> &RunToken {
        &self.token
    }

    /// Whether another process took the lock over.
    pub fn lost(&self) -> bool {
        self.lost.load(Ordering::SeqCst)
    }

    /// Stops the heartbeat and gives the lock back (a lock taken over is left to its new holder).
    pub fn release(mut self) -> Result<(), StoreError> {
        if let Some(h) = self.heartbeat.take() {
            h.abort();
        }
        self.db.release_run_lock(self.token.as_str())
    }
}

impl Drop for RunLock {
    fn drop(&mut self) {
        if let Some(h) = self.heartbeat.take() {
            h.abort();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn a_lock_taken_over_stops_the_run_and_a_fresh_one_keeps_others_out() {
        let dir = tempfile::tempdir().unwrap();
        let db = Arc::new(Db::open(&dir.path().join("s.db")).unwrap());
        // The paused tokio clock and the wall clock the lock is stamped with move together here.
        let clock = Clock::system();
        let mut lock = RunLock::acquire(db.clone(), 10, &clock, |_| true)
            .unwrap()
            .unwrap();
        // A live holder with a fresh heartbeat keeps a second process out.
        let other = RunLock::acquire(db.clone(), 11, &clock, |_| true).unwrap();
        assert_eq!(other.err().map(|h| h.pid), Some(10));
        let cancel = Cancel::new();
        lock.keep_alive(clock.clone(), cancel.clone());
        tokio::time::sleep(LOCK_STALE).await;
        assert!(!lock.lost() && !cancel.is_stopped(), "our own heartbeat");
        // Another process takes it over (as after a pause past the staleness: its holder looks
        // dead): at the next heartbeat this run stops.
        let thief = RunLock::acquire(db.clone(), 12, &clock, |_| false)
            .unwrap()
            .unwrap();
        tokio::time::timeout(LOCK_STALE / 2, cancel.stopped())
            .await
            .expect("stopped at the next heartbeat");
        assert!(lock.lost());
        // Releasing a lost lock leaves the new holder's.
        lock.release().unwrap();
        let again = RunLock::acquire(db.clone(), 13, &clock, |_| true).unwrap();
        assert_eq!(again.err().map(|h| h.pid), Some(12));
        thief.release().unwrap();
        assert!(RunLock::acquire(db, 14, &clock, |_| true).unwrap().is_ok());
    }
}
