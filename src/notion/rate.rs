//! Notion's request pacing: an average rate with a small burst, and one shared pause that a 429's
//! `Retry-After` imposes on every caller at once (uncapped: Notion's workspace-level waits can exceed
//! the 60 s the official SDKs cap them at).

use std::time::Duration;

use tokio::sync::Mutex;
use tokio::time::Instant;

use crate::settings::Window;

/// Paces Notion requests for one integration token.
#[derive(Debug)]
pub struct NotionRate {
    interval: Duration,
    burst: u32,
    state: Mutex<State>,
}

#[derive(Debug)]
struct State {
    /// The theoretical time at which the next request would be on schedule (GCRA).
    tat: Instant,
    /// Nobody sends before this (a 429's Retry-After).
    paused_until: Instant,
    /// Total time callers spent waiting, for the run summary.
    waited: Duration,
}

impl NotionRate {
    /// `rate` requests per window on average, allowing `burst` back-to-back requests.
    pub fn new(rate: Window, burst: u32) -> Self {
        let now = Instant::now();
        Self {
            interval: rate.length / rate.count.max(1),
            burst: burst.max(1),
            state: Mutex::new(State {
                tat: now,
                paused_until: now,
                waited: Duration::ZERO,
            }),
        }
    }

    /// Waits until one request may go, then takes its slot.
    pub async fn acquire(&self) {
        loop {
            let wait = {
                let mut s = self.state.lock().await;
                let now = Instant::now();
                let allowance = self.interval * (self.burst - 1);
                let earliest_by_rate = s.tat.max(now).checked_sub(allowance).unwrap_or(now);
                let earliest = earliest_by_rate.max(s.paused_until);
                if earliest <= now {
                    s.tat = s.tat.max(now) + self.interval;
                    return;
                }
                let w = earliest - now;
                s.waited += w;
                w
            };
            tokio::time::sleep(wait).await;
        }
    }

    /// Every caller pauses for `d` from now (a 429 or 529 answer); a shorter pause never shortens a
    /// longer one already in force.
    pub async fn pause_for(&self, d: Duration) {
        let mut s = self.state.lock().await;
        s.paused_until = s.paused_until.max(Instant::now() + d);
    }

    /// How long the shared pause still lasts.
    pub async fn paused_for(&self) -> Duration {
        let s = self.state.lock().await;
        s.paused_until.saturating_duration_since(Instant::now())
    }

    /// Total time callers waited on pacing and pauses.
    pub async fn waited(&self) -> Duration {
        self.state.lock().await.waited
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn three_per_second() -> Window {
        Window {
            count: 3,
            length: Duration::from_secs(1),
        }
    }

    #[tokio::test(start_paused = true)]
    async fn average_rate_holds_after_the_burst() {
        let r = NotionRate::new(three_per_second(), 3);
        let start = Instant::now();
        let mut times = Vec::new();
        for _ in 0..30 {
            r.acquire().await;
            times.push(start.elapsed());
        }
        // the burst goes at once, then one every 333 ms
        assert_eq!(times[2], Duration::ZERO);
        assert!(times[3] > Duration::ZERO);
        // over any span the count never exceeds burst + span/interval
        let total = times[29];
        assert!(total >= Duration::from_millis(333 * 27), "{total:?}");
        assert!(total <= Duration::from_millis(333 * 28), "{total:?}");
    }

    #[tokio::test(start_paused = true)]
    async fn a_pause_holds_every_caller_and_is_not_capped() {
        let r = Arc::new(NotionRate::new(three_per_second(), 3));
        r.pause_for(Duration::from_secs(90)).await;
        // a shorter pause later does not shorten it
        r.pause_for(Duration::from_secs(5)).await;
        let start = Instant::now();
        let mut tasks = Vec::new();
        for _ in 0..5 {
            let r = r.clone();
            tasks.push(tokio::spawn(async move {
                r.acquire().await;
                Instant::now()
            }));
        }
        for t in tasks {
            let at = t.await.unwrap();
            assert!(at - start >= Duration::from_secs(90));
        }
        assert!(r.waited().await >= Duration::from_secs(90 * 5));
    }
}
