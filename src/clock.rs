//! Time and randomness seams.
//!
//! Everything that waits, measures windows or adds jitter takes its time and randomness from here, so
//! tests can run the real code on tokio's paused clock with a seeded generator and get exact results.

use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rand::{rngs::StdRng, Rng, SeedableRng};

/// Milliseconds since the Unix epoch: the unit of every persisted timestamp (ledger, leases, jobs).
pub type UnixMillis = i64;

/// A clock that reads wall time as "a wall-clock anchor plus tokio's monotonic time since then".
///
/// In production the anchor is the real time at start, so the values agree with other processes on the
/// same machine. Under `tokio::time::pause()` the monotonic part advances only when tokio's clock does,
/// so a test that sleeps an hour finishes at once and still sees exactly one hour pass.
#[derive(Clone, Debug)]
pub struct Clock {
    anchor_wall: UnixMillis,
    anchor_instant: tokio::time::Instant,
}

impl Clock {
    /// A clock anchored at the real current time.
    pub fn system() -> Self {
        let wall = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_millis() as i64)
            .unwrap_or(0);
        Self::anchored_at(wall)
    }

    /// A clock that reads `wall` now (tests use a fixed value for reproducible ledgers).
    pub fn anchored_at(wall: UnixMillis) -> Self {
        Self {
            anchor_wall: wall,
            anchor_instant: tokio::time::Instant::now(),
        }
    }

    /// The current time in Unix milliseconds.
    pub fn now_ms(&self) -> UnixMillis {
        self.anchor_wall + self.anchor_instant.elapsed().as_millis() as i64
    }

    /// Sleeps for `d` on tokio's clock (paused in tests).
    pub async fn sleep(&self, d: Duration) {
        tokio::time::sleep(d).await
    }

    /// Sleeps until the wall time `t` (no-op when it has passed).
    pub async fn sleep_until_ms(&self, t: UnixMillis) {
        let now = self.now_ms();
        if t > now {
            tokio::time::sleep(Duration::from_millis((t - now) as u64)).await
        }
    }
}

/// A shared, seedable random source for jitter.
#[derive(Clone, Debug)]
pub struct Jitter {
    rng: Arc<Mutex<StdRng>>,
}

impl Jitter {
    /// Seeded from the operating system.
    pub fn from_entropy() -> Self {
        Self {
            rng: Arc::new(Mutex::new(StdRng::from_os_rng())),
        }
    }

    /// Deterministic, for tests.
    pub fn seeded(seed: u64) -> Self {
        Self {
            rng: Arc::new(Mutex::new(StdRng::seed_from_u64(seed))),
        }
    }

    /// A uniformly random fraction in `[0, 1)`.
    pub fn fraction(&self) -> f64 {
        self.rng
            .lock()
            .expect("jitter rng poisoned")
            .random::<f64>()
    }

    /// `base` scaled by a random factor in `[1 - spread, 1 + spread]`.
    pub fn spread(&self, base: Duration, spread: f64) -> Duration {
        let f = 1.0 - spread + 2.0 * spread * self.fraction();
        base.mul_f64(f.max(0.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn paused_clock_advances_exactly() {
        let c = Clock::anchored_at(1_000_000);
        c.sleep(Duration::from_secs(3600)).await;
        assert_eq!(c.now_ms(), 1_000_000 + 3_600_000);
        c.sleep_until_ms(1_000_000 + 3_600_500).await;
        assert_eq!(c.now_ms(), 1_000_000 + 3_600_500);
    }

    #[test]
    fn seeded_jitter_repeats() {
        let a = Jitter::seeded(7);
        let b = Jitter::seeded(7);
        assert_eq!(a.fraction(), b.fraction());
        let d = a.spread(Duration::from_secs(10), 0.2);
        assert!(d >= Duration::from_secs(8) && d <= Duration::from_secs(12));
    }
}
