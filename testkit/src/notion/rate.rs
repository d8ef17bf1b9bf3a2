//! The per-token rate limit: an average of N requests per second with a small burst (a token bucket),
//! and a forced workspace-level wait for tests that need a long `Retry-After`.

use std::collections::HashMap;
use std::time::Duration;

use tokio::time::Instant;

/// Rate-limit settings.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RateConfig {
    /// Average requests per second per token.
    pub per_second: f64,
    /// Requests allowed at once above the average.
    pub burst: u32,
}

impl Default for RateConfig {
    /// Notion's documented average of 3 requests/s, with a burst of 5 (the burst size is not published).
    fn default() -> Self {
        Self {
            per_second: 3.0,
            burst: 5,
        }
    }
}

#[derive(Debug)]
struct Bucket {
    tokens: f64,
    last: Instant,
}

/// Token buckets per bearer token, plus an optional workspace-wide block.
#[derive(Debug)]
pub struct RateLimiter {
    cfg: RateConfig,
    buckets: HashMap<String, Bucket>,
    blocked_until: Option<Instant>,
}

impl RateLimiter {
    /// A limiter with `cfg`.
    pub fn new(cfg: RateConfig) -> Self {
        Self {
            cfg,
            buckets: HashMap::new(),
            blocked_until: None,
        }
    }

    /// Refuses every request for `d` from now, whatever the buckets hold.
    pub fn block_for(&mut self, d: Duration) {
        self.blocked_until = Some(Instant::now() + d);
    }

    /// Takes one request's token for `token`, or returns the whole seconds to wait (at least 1).
    pub fn acquire(&mut self, token: &str) -> Result<(), u64> {
        let now = Instant::now();
        if let Some(until) = self.blocked_until {
            if now < until {
                return Err(ceil_secs(until - now));
            }
            self.blocked_until = None;
        }
        let burst = f64::from(self.cfg.burst.max(1));
        let b = self.buckets.entry(token.to_owned()).or_insert(Bucket {
            tokens: burst,
            last: now,
        });
        let elapsed = now.duration_since(b.last).as_secs_f64();
        b.tokens = (b.tokens + elapsed * self.cfg.per_second).min(burst);
        b.last = now;
        if b.tokens >= 1.0 {
            b.tokens -= 1.0;
            Ok(())
        } else {
            let wait = (1.0 - b.tokens) / self.cfg.per_second;
            Err(ceil_secs(Duration::from_secs_f64(wait)))
        }
    }
}

fn ceil_secs(d: Duration) -> u64 {
    let s = d.as_secs() + u64::from(d.subsec_nanos() > 0);
    s.max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn burst_then_average() {
        let mut r = RateLimiter::new(RateConfig {
            per_second: 2.0,
            burst: 3,
        });
        for _ in 0..3 {
            assert_eq!(r.acquire("t"), Ok(()));
        }
        assert_eq!(r.acquire("t"), Err(1));
        assert_eq!(r.acquire("other"), Ok(()), "buckets are per token");
        tokio::time::sleep(Duration::from_millis(500)).await;
        assert_eq!(r.acquire("t"), Ok(()));
        assert_eq!(r.acquire("t"), Err(1));
        r.block_for(Duration::from_secs(90));
        tokio::time::sleep(Duration::from_secs(10)).await;
        assert_eq!(r.acquire("t"), Err(80));
        tokio::time::sleep(Duration::from_secs(80)).await;
        assert_eq!(r.acquire("t"), Ok(()));
    }
}
