//! The one-migrating-process lock: taken once per run (putting back what a gone holder left
//! running), kept alive by a heartbeat, and checked in every write of a run ([`RunToken`]).

use std::time::Duration;

use rusqlite::{params, OptionalExtension, Transaction};

use super::{JobState, RunToken};
use crate::clock::UnixMillis;
use crate::store::{Db, Result, StoreError};

/// The migration lock's row as stored (its holder may have died since).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LockRecord {
    /// The holder's process id.
    pub pid: i64,
    /// When it took the lock (unix ms).
    pub started_at: UnixMillis,
    /// Its last heartbeat (unix ms).
    pub heartbeat_at: UnixMillis,
    /// Since when it waits for an unreachable service, if it does.
    pub unreachable_since: Option<UnixMillis>,
}

/// Who holds the migrating lock.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LockHolder {
    /// Its process id.
    pub pid: i64,
    /// When it started (unix ms).
    pub started_at: UnixMillis,
}

/// Whether `token` holds the run lock now, read in the transaction that depends on it.
fn holds(tx: &Transaction<'_>, token: &RunToken) -> rusqlite::Result<bool> {
    tx.query_row(
        "SELECT EXISTS (SELECT 1 FROM run_lock WHERE id = 1 AND token = ?1)",
        [token.as_str()],
        |r| r.get(0),
    )
}

/// Puts every job left running back in the queue without counting its attempt: only called while
/// taking the run lock, when whoever ran them is gone.
fn requeue_orphans(tx: &Transaction<'_>, now: UnixMillis) -> rusqlite::Result<usize> {
    tx.execute(
        "UPDATE jobs SET state = ?1, attempts = MAX(attempts - 1, 0), updated_at = ?3
         WHERE state = ?2",
        params![JobState::Queued, JobState::Running, now],
    )
}

impl Db {
    /// A write of a running migration: `f` runs in a transaction only while `token` holds the run
    /// lock, checked in that transaction, so a process that lost the lock changes nothing
    /// ([`StoreError::LockLost`]).
    pub(crate) fn write_holding<T>(
        &self,
        token: &RunToken,
        action: &str,
        f: impl FnOnce(&Transaction<'_>) -> rusqlite::Result<T>,
    ) -> Result<T> {
        self.write(action, |tx| {
            if !holds(tx, token)? {
                return Ok(None);
            }
            f(tx).map(Some)
        })?
        .ok_or_else(|| self.lock_lost())
    }

    fn lock_lost(&self) -> StoreError {
        StoreError::LockLost {
            path: self.path.clone(),
        }
    }

    /// Takes the one-migrating-process lock, or says who holds it. A holder whose process is gone
    /// (per `is_alive`) or whose heartbeat is older than `stale_after` is replaced. Taking it puts
    /// the jobs a previous holder left running back in the queue, in the same transaction (see the
    /// module's doc).
    pub fn acquire_run_lock(
        &self,
        pid: i64,
        token: &str,
        now: UnixMillis,
        stale_after: Duration,
        is_alive: impl Fn(i64) -> bool,
    ) -> Result<Result<RunToken, LockHolder>> {
        self.write("taking the migration lock", |tx| {
            let holder: Option<(i64, String, i64, i64)> = tx
                .query_row(
                    "SELECT pid, token, started_at, heartbeat_at FROM run_lock WHERE id = 1",
                    [],
                    |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
                )
                .optional()?;
            let ours = holder.as_ref().is_some_and(|h| h.1 == token);
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
            // Taken from nobody or from another holder: whatever is running is not ours.
            if !ours {
                let orphans = requeue_orphans(tx, now)?;
                if orphans > 0 {
                    tracing::info!(
                        orphans,
                        "jobs left running by a previous run are queued again"
                    );
                }
            }
            Ok(Ok(RunToken(token.to_owned())))
        })
    }

    /// The migration lock's row, if any process holds it (or held it and died): for `status`.
    pub fn run_lock_record(&self) -> Result<Option<LockRecord>> {
        self.read("reading the migration lock", |c| {
            c.query_row(
                "SELECT pid, started_at, heartbeat_at, unreachable_since FROM run_lock WHERE id = 1",
                [],
                |r| {
                    Ok(LockRecord {
                        pid: r.get(0)?,
                        started_at: r.get(1)?,
                        heartbeat_at: r.get(2)?,
                        unreachable_since: r.get(3)?,
                    })
                },
            )
            .optional()
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

#[cfg(test)]
mod tests {
    use super::super::tests::{claim, open, tree, STALE};
    use super::*;

    #[test]
    fn taking_the_lock_requeues_what_a_gone_holder_left_running_and_shuts_it_out() {
        let (_dir, db, dead) = open();
        db.create_plan(&dead, "a", "t", &tree(), 1).unwrap();
        let j = claim(&db, &dead, &[], 100).unwrap().unwrap();
        assert_eq!((j.item_id.as_str(), j.attempts), ("nb", 1));
        // Its children wait for it: nothing else is claimable while it runs.
        assert!(claim(&db, &dead, &[], 200).unwrap().is_none());
        // The holder is gone: the next process takes the lock, and with it what was running,
        // without counting the interrupted attempt.
        let next = db
            .acquire_run_lock(2, "next", 300, STALE, |_| false)
            .unwrap()
            .unwrap();
        assert_eq!(db.job_counts("a").unwrap().running, 0);
        let again = claim(&db, &next, &[], 400).unwrap().unwrap();
        assert_eq!((again.id, again.attempts), (j.id, 1));
        // The old holder can neither finish it nor start anything more (s1, queued).
        assert!(matches!(
            db.complete_job(j.id, &dead, 500),
            Err(StoreError::LockLost { .. })
        ));
        assert!(matches!(
            db.start_job(j.id + 1, &dead, 500),
            Err(StoreError::LockLost { .. })
        ));
        assert_eq!(db.job_counts("a").unwrap().running, 1);
    }

    #[test]
    fn run_lock_is_exclusive_until_the_holder_dies_or_goes_stale() {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(&dir.path().join("s.db")).unwrap();
        let stale = STALE;
        let token = |s: &str| Ok(RunToken(s.to_owned()));
        assert_eq!(
            db.acquire_run_lock(10, "t1", 0, stale, |_| true).unwrap(),
            token("t1")
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
            token("t2")
        );
        assert!(!db.heartbeat_run_lock("t1", 2000).unwrap());
        assert!(db.heartbeat_run_lock("t2", 2000).unwrap());
        // alive pid but no heartbeat for a minute: pid reuse, take over
        assert_eq!(
            db.acquire_run_lock(12, "t3", 62_001, stale, |_| true)
                .unwrap(),
            token("t3")
        );
        db.release_run_lock("t3").unwrap();
        assert_eq!(
            db.acquire_run_lock(13, "t4", 62_002, stale, |_| true)
                .unwrap(),
            token("t4")
        );
    }
}
