//! The pace of drive requests, apart from the OneNote limiter: a cap on each account's requests in
//! flight (in this process), and one breaker per account in the state database that a 429 or 503
//! opens for its `Retry-After` (or a doubling wait when it gave none), so every request of the
//! account, in every process on the database, waits it out together.
//!
//! After rclone's pacer (`lib/pacer/pacer.go`): one pacer per remote, its connection tokens the
//! cap, and a `Retry-After` sleeping the whole remote, not only the request that met it. The
//! breaker's reads and writes go to the blocking pool (`store::drive_ledger`).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::DriveError;
use crate::clock::{Clock, Jitter};
use crate::graph::Caller;
use crate::settings::DriveLimits;
use crate::store::{Db, StoreError};

/// The longest wait a throttle without `Retry-After` imposes.
const MAX_WAIT: Duration = Duration::from_secs(300);

/// The breaker scope of a Graph user's drive requests.
pub fn scope(user_id: &str) -> String {
    format!("drive:user:{user_id}")
}

/// Paces the drive requests of every account of a client (clones of the client share it).
#[derive(Debug)]
pub struct Pacer {
    db: Arc<Db>,
    clock: Clock,
    jitter: Jitter,
    limits: DriveLimits,
    caps: Mutex<HashMap<String, Arc<Semaphore>>>,
}

/// Leave to send one request: its place under the account's cap, held until dropped.
#[derive(Debug)]
pub struct Slot {
    _permit: OwnedSemaphorePermit,
    /// Whether the account had a breaker row when the slot was given: only then can an answer
    /// have one to close.
    breaker_seen: bool,
}

impl Pacer {
    /// The pacer of drive requests on `db`.
    pub fn new(db: Arc<Db>, limits: DriveLimits, clock: Clock, jitter: Jitter) -> Self {
        Self {
            db,
            clock,
            jitter,
            limits,
            caps: Mutex::new(HashMap::new()),
        }
    }

    fn cap(&self, user_id: &str) -> Arc<Semaphore> {
        self.caps
            .lock()
            .expect("drive caps poisoned")
            .entry(user_id.to_owned())
            .or_insert_with(|| Arc::new(Semaphore::new(self.limits.concurrency.max(1) as usize)))
            .clone()
    }

    /// Waits for a place under `who`'s cap and for its breaker to be closed;
    /// [`DriveError::Throttled`] instead when the breaker stays open past the caller's deadline.
    pub async fn admit(&self, who: &Caller) -> Result<Slot, DriveError> {
        let permit = self
            .cap(&who.user_id)
            .acquire_owned()
            .await
            .expect("the drive cap is never closed");
        let scope = scope(&who.user_id);
        let mut breaker_seen = false;
        loop {
            let key = scope.clone();
            let row = self.blocking(move |db| db.drive_breaker(&key)).await?;
            breaker_seen |= row.is_some();
            let now = self.clock.now_ms();
            match row {
                Some(b) if b.open_until > now => {
                    if who.deadline.is_some_and(|d| b.open_until > d) {
                        return Err(DriveError::Throttled {
                            account: who.account.clone(),
                            until: b.open_until,
                        });
                    }
                    self.clock.sleep_until_ms(b.open_until).await;
                }
                Some(_) | None => {
                    return Ok(Slot {
                        _permit: permit,
                        breaker_seen,
                    })
                }
            }
        }
    }

    /// `who`'s request answered with something other than a throttle: the account's breaker
    /// closes (once its pause is over).
    pub async fn answered(&self, who: &Caller, slot: &Slot) -> Result<(), DriveError> {
        if slot.breaker_seen {
            let (scope, now) = (scope(&who.user_id), self.clock.now_ms());
            self.blocking(move |db| db.drive_answered(&scope, now))
                .await?;
        }
        Ok(())
    }

    /// `who`'s request met a 429 or 503 (`status`): every drive request of the account waits
    /// `retry_after`, or the doubling wait of the settings when the answer gave none. Returns
    /// the pause from now.
    pub async fn throttled(
        &self,
        who: &Caller,
        slot: Slot,
        status: u16,
        retry_after: Option<Duration>,
    ) -> Result<Duration, DriveError> {
        drop(slot);
        let (scope, now) = (scope(&who.user_id), self.clock.now_ms());
        let base = self.limits.throttle_wait;
        let jitter = self.jitter.clone();
        let wait = move |trips: u32| -> i64 {
            let d = retry_after.unwrap_or_else(|| {
                let grown =
                    base.saturating_mul(2u32.saturating_pow(trips.saturating_sub(1).min(16)));
                jitter.spread(grown.min(MAX_WAIT), 0.25)
            });
            d.as_millis().min(i64::MAX as u128) as i64
        };
        let b = self
            .blocking(move |db| db.drive_throttled(&scope, now, status, wait))
            .await?;
        let pause = Duration::from_millis((b.open_until - now).max(0) as u64);
        tracing::info!(
            account = %who.account,
            status,
            wait_ms = pause.as_millis() as u64,
            "the drive asked to slow down; the account's drive requests wait"
        );
        Ok(pause)
    }

    /// Runs `f` on the blocking pool: SQLite may wait on another process's transaction.
    async fn blocking<T: Send + 'static>(
        &self,
        f: impl FnOnce(&Db) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<T, DriveError> {
        let db = self.db.clone();
        match tokio::task::spawn_blocking(move || f(&db)).await {
            Ok(r) => Ok(r?),
            Err(e) => std::panic::resume_unwind(e.into_panic()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::limiter::Lane;
    use std::sync::atomic::{AtomicUsize, Ordering};

    const T0: i64 = 1_700_000_000_000;

    fn caller(user: &str) -> Caller {
        Caller {
            account: format!("acct-{user}"),
            user_id: user.to_owned(),
            lane: Lane::Background,
            deadline: None,
            retries: None,
        }
    }

    fn limits(concurrency: u32) -> DriveLimits {
        DriveLimits {
            concurrency,
            throttle_wait: Duration::from_secs(10),
        }
    }

    fn pacer(db: &Arc<Db>, clock: &Clock, concurrency: u32) -> Arc<Pacer> {
        Arc::new(Pacer::new(
            db.clone(),
            limits(concurrency),
            clock.clone(),
            Jitter::seeded(1),
        ))
    }

    fn db(dir: &tempfile::TempDir) -> Arc<Db> {
        Arc::new(Db::open(&dir.path().join("state.db")).unwrap())
    }

    #[tokio::test(start_paused = true)]
    async fn no_more_than_the_cap_of_one_account_is_in_flight_and_accounts_do_not_share_it() {
        let dir = tempfile::tempdir().unwrap();
        let clock = Clock::anchored_at(T0);
        let p = pacer(&db(&dir), &clock, 3);
        let (now, most) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
        let mut tasks = Vec::new();
        for _ in 0..12 {
            let (p, now, most, clock) = (p.clone(), now.clone(), most.clone(), clock.clone());
            tasks.push(tokio::spawn(async move {
                let slot = p.admit(&caller("u1")).await.unwrap();
                let n = now.fetch_add(1, Ordering::SeqCst) + 1;
                most.fetch_max(n, Ordering::SeqCst);
                clock.sleep(Duration::from_millis(100)).await;
                now.fetch_sub(1, Ordering::SeqCst);
                p.answered(&caller("u1"), &slot).await.unwrap();
            }));
        }
        // Another account is not held behind the first one's cap.
        let other = p.admit(&caller("u2")).await.unwrap();
        assert!(clock.now_ms() - T0 < 100, "u2 went at once");
        drop(other);
        for t in tasks {
            t.await.unwrap();
        }
        assert_eq!(most.load(Ordering::SeqCst), 3);
        assert_eq!(
            clock.now_ms() - T0,
            400,
            "12 requests of 100 ms, 3 at a time"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_retry_after_holds_every_request_of_the_account_and_only_that_account() {
        let dir = tempfile::tempdir().unwrap();
        let clock = Clock::anchored_at(T0);
        let p = pacer(&db(&dir), &clock, 4);
        let slot = p.admit(&caller("u1")).await.unwrap();
        let pause = p
            .throttled(&caller("u1"), slot, 429, Some(Duration::from_secs(7)))
            .await
            .unwrap();
        assert_eq!(pause, Duration::from_secs(7));
        let mut waiting = Vec::new();
        for _ in 0..3 {
            let (p, clock) = (p.clone(), clock.clone());
            waiting.push(tokio::spawn(async move {
                let s = p.admit(&caller("u1")).await.unwrap();
                let at = clock.now_ms() - T0;
                p.answered(&caller("u1"), &s).await.unwrap();
                at
            }));
        }
        let free = p.admit(&caller("u2")).await.unwrap();
        assert_eq!(clock.now_ms(), T0, "another account does not wait");
        drop(free);
        for w in waiting {
            assert_eq!(
                w.await.unwrap(),
                7_000,
                "each waited the whole Retry-After, no more"
            );
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_503_pauses_like_a_429_and_without_retry_after_the_wait_doubles() {
        let dir = tempfile::tempdir().unwrap();
        let clock = Clock::anchored_at(T0);
        let db = db(&dir);
        let p = pacer(&db, &clock, 4);
        let s = p.admit(&caller("u1")).await.unwrap();
        assert_eq!(
            p.throttled(&caller("u1"), s, 503, Some(Duration::from_secs(3)))
                .await
                .unwrap(),
            Duration::from_secs(3)
        );
        let s = p.admit(&caller("u1")).await.unwrap();
        assert_eq!(clock.now_ms() - T0, 3_000);
        let first = p.throttled(&caller("u1"), s, 503, None).await.unwrap();
        let s = p.admit(&caller("u1")).await.unwrap();
        let second = p.throttled(&caller("u1"), s, 429, None).await.unwrap();
        // 10 s, then 20 s, each spread by a quarter (trips 2 and 3 of the breaker).
        assert!(
            (Duration::from_millis(15_000)..=Duration::from_millis(25_000)).contains(&first),
            "{first:?}"
        );
        assert!(
            (Duration::from_millis(30_000)..=Duration::from_millis(50_000)).contains(&second),
            "{second:?}"
        );
        let s = p.admit(&caller("u1")).await.unwrap();
        p.answered(&caller("u1"), &s).await.unwrap();
        assert_eq!(
            db.drive_breaker(&scope("u1")).unwrap(),
            None,
            "an answer after the pause closes the breaker"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn two_clients_on_one_database_share_the_breaker() {
        let dir = tempfile::tempdir().unwrap();
        let clock = Clock::anchored_at(T0);
        // Two processes: two connections to one file, two pacers.
        let a = pacer(&db(&dir), &clock, 4);
        let b = pacer(&db(&dir), &clock, 4);
        let s = a.admit(&caller("u1")).await.unwrap();
        a.throttled(&caller("u1"), s, 429, Some(Duration::from_secs(30)))
            .await
            .unwrap();
        let s = b.admit(&caller("u1")).await.unwrap();
        assert_eq!(clock.now_ms() - T0, 30_000, "the other process waited too");
        b.answered(&caller("u1"), &s).await.unwrap();
    }

    #[tokio::test(start_paused = true)]
    async fn a_pause_past_the_deadline_stops_instead_of_waiting() {
        let dir = tempfile::tempdir().unwrap();
        let clock = Clock::anchored_at(T0);
        let p = pacer(&db(&dir), &clock, 4);
        let s = p.admit(&caller("u1")).await.unwrap();
        p.throttled(&caller("u1"), s, 429, Some(Duration::from_secs(600)))
            .await
            .unwrap();
        let mut who = caller("u1");
        who.deadline = Some(T0 + 60_000);
        let err = p.admit(&who).await.unwrap_err();
        assert!(
            matches!(err, DriveError::Throttled { until, .. } if until == T0 + 600_000),
            "{err}"
        );
        assert!(!err.falls_back());
        assert_eq!(clock.now_ms(), T0, "it did not wait first");
    }
}
