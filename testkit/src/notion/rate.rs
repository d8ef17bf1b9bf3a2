//! Notion's request limits, as switches: per token either the older model (an average of N
//! requests per second with a small burst, a token bucket; 429 without a reason) or today's fixed
//! budget per window (429 naming the per-connection limit, `Retry-After` to the window's reset);
//! a per-workspace limit across tokens with its longer `Retry-After`; and a forced wait, with or
//! without a reason, for tests that need one.

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

/// Notion's per-connection limit: a fixed budget of requests per window (Notion's is 60 s; tests use
/// short ones, e.g. 120 per 2 s), spendable at any pace. Windows follow one another from the
/// server's start; past the budget, `429` with the reason and `Retry-After` = the time to the reset.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WindowBudget {
    /// Requests per window per token.
    pub count: u32,
    /// The window.
    pub length: Duration,
}

/// Notion's per-workspace limit, shared by every token of the workspace: `count` requests per
/// `length`; past it, every request of the workspace is refused for `retry_after` (which can be
/// longer than a minute).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WorkspaceLimit {
    /// Requests per window, all tokens together.
    pub count: u32,
    /// The window.
    pub length: Duration,
    /// How long the workspace is refused once past it.
    pub retry_after: Duration,
}

/// `additional_data.rate_limit_reason` of the per-connection limit.
pub const CONNECTION_REASON: &str = "public_api_request_rate_limit";
/// `additional_data.rate_limit_reason` of the per-workspace limit.
pub const WORKSPACE_REASON: &str = "public_api_space_request_rate_limit";
/// `additional_data.rate_limit_reason` of a connection Notion blocks: retrying will not help.
pub const BLOCKED_REASON: &str = "public_api_request_blocked";

/// A request refused with 429.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refused {
    /// `Retry-After`: whole seconds, at least 1.
    pub retry_after: u64,
    /// `additional_data.rate_limit_reason`, when the answer carries one (the older model's does not).
    pub reason: Option<String>,
}

impl Refused {
    fn plain(retry_after: u64) -> Self {
        Self {
            retry_after,
            reason: None,
        }
    }
}

#[derive(Debug)]
struct Bucket {
    tokens: f64,
    last: Instant,
}

/// The limits of one server: per token the older token bucket or a budget per window, plus an
/// optional per-workspace limit across tokens and a forced block.
#[derive(Debug)]
pub struct RateLimiter {
    cfg: RateConfig,
    windows: Option<WindowBudget>,
    workspace: Option<WorkspaceLimit>,
    /// When the server started: windows follow one another from here.
    epoch: Instant,
    buckets: HashMap<String, Bucket>,
    /// Per token: the window's index and what it counted.
    counted: HashMap<String, (u64, u32)>,
    workspace_counted: (u64, u32),
    workspace_blocked_until: Option<Instant>,
    blocked_until: Option<Instant>,
    blocked_reason: Option<String>,
}

impl RateLimiter {
    /// A limiter with the token bucket `cfg`.
    pub fn new(cfg: RateConfig) -> Self {
        Self {
            cfg,
            windows: None,
            workspace: None,
            epoch: Instant::now(),
            buckets: HashMap::new(),
            counted: HashMap::new(),
            workspace_counted: (0, 0),
            workspace_blocked_until: None,
            blocked_until: None,
            blocked_reason: None,
        }
    }

    /// Each token gets `budget` per window instead of the token bucket (`None`: the bucket again).
    pub fn set_window_budget(&mut self, budget: Option<WindowBudget>) {
        self.windows = budget;
        self.counted.clear();
    }

    /// The workspace's limit across tokens (`None`: none).
    pub fn set_workspace_limit(&mut self, limit: Option<WorkspaceLimit>) {
        self.workspace = limit;
        self.workspace_counted = (0, 0);
        self.workspace_blocked_until = None;
    }

    /// Refuses every request for `d` from now, whatever the buckets hold.
    pub fn block_for(&mut self, d: Duration) {
        self.blocked_until = Some(Instant::now() + d);
        self.blocked_reason = None;
    }

    /// Like [`RateLimiter::block_for`], the answers naming `reason` (a limit the client may not know).
    pub fn block_with_reason(&mut self, d: Duration, reason: &str) {
        self.blocked_until = Some(Instant::now() + d);
        self.blocked_reason = Some(reason.to_owned());
    }

    /// Takes one request of `token`, or says why not and for how long.
    pub fn acquire(&mut self, token: &str) -> Result<(), Refused> {
        let now = Instant::now();
        if let Some(until) = self.blocked_until {
            if now < until {
                return Err(Refused {
                    retry_after: ceil_secs(until - now),
                    reason: self.blocked_reason.clone(),
                });
            }
            self.blocked_until = None;
        }
        if let Some(until) = self.workspace_blocked_until {
            if now < until {
                return Err(Refused {
                    retry_after: ceil_secs(until - now),
                    reason: Some(WORKSPACE_REASON.to_owned()),
                });
            }
            self.workspace_blocked_until = None;
        }
        // The connection's limit first: a request it refuses never reaches the workspace's.
        match self.windows {
            Some(w) => {
                let (index, end) = self.window_of(now, w.length);
                let c = self.counted.entry(token.to_owned()).or_insert((index, 0));
                if c.0 != index {
                    *c = (index, 0);
                }
                if c.1 >= w.count {
                    return Err(Refused {
                        retry_after: ceil_secs(end - now),
                        reason: Some(CONNECTION_REASON.to_owned()),
                    });
                }
            }
            None => self.check_bucket(token, now)?,
        }
        if let Some(ws) = self.workspace {
            let (index, _) = self.window_of(now, ws.length);
            if self.workspace_counted.0 != index {
                self.workspace_counted = (index, 0);
            }
            if self.workspace_counted.1 >= ws.count {
                self.workspace_blocked_until = Some(now + ws.retry_after);
                return Err(Refused {
                    retry_after: ceil_secs(ws.retry_after),
                    reason: Some(WORKSPACE_REASON.to_owned()),
                });
            }
            self.workspace_counted.1 += 1;
        }
        match self.windows {
            Some(_) => {
                if let Some(c) = self.counted.get_mut(token) {
                    c.1 += 1;
                }
            }
            None => {
                if let Some(b) = self.buckets.get_mut(token) {
                    b.tokens -= 1.0;
                }
            }
        }
        Ok(())
    }

    /// The index of the window of `length` holding `now`, and when it ends.
    fn window_of(&self, now: Instant, length: Duration) -> (u64, Instant) {
        let len = length.as_nanos().max(1);
        let index = (now.duration_since(self.epoch).as_nanos() / len) as u64;
        let end = self.epoch + Duration::from_nanos(((index as u128 + 1) * len) as u64);
        (index, end)
    }

    /// Refills `token`'s bucket and checks it holds a request (taken once every limit agrees).
    fn check_bucket(&mut self, token: &str, now: Instant) -> Result<(), Refused> {
        let burst = f64::from(self.cfg.burst.max(1));
        let b = self.buckets.entry(token.to_owned()).or_insert(Bucket {
            tokens: burst,
            last: now,
        });
        let elapsed = now.duration_since(b.last).as_secs_f64();
        b.tokens = (b.tokens + elapsed * self.cfg.per_second).min(burst);
        b.last = now;
        if b.tokens >= 1.0 {
            Ok(())
        } else {
            let wait = (1.0 - b.tokens) / self.cfg.per_second;
            Err(Refused::plain(ceil_secs(Duration::from_secs_f64(wait))))
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
        assert_eq!(r.acquire("t"), Err(Refused::plain(1)));
        assert_eq!(r.acquire("other"), Ok(()), "buckets are per token");
        tokio::time::sleep(Duration::from_millis(500)).await;
        assert_eq!(r.acquire("t"), Ok(()));
        assert_eq!(r.acquire("t"), Err(Refused::plain(1)));
        r.block_for(Duration::from_secs(90));
        tokio::time::sleep(Duration::from_secs(10)).await;
        assert_eq!(r.acquire("t"), Err(Refused::plain(80)));
        tokio::time::sleep(Duration::from_secs(80)).await;
        assert_eq!(r.acquire("t"), Ok(()));
    }

    #[tokio::test(start_paused = true)]
    async fn a_window_budget_is_spendable_at_once_and_refused_to_the_reset() {
        let mut r = RateLimiter::new(RateConfig::default());
        r.set_window_budget(Some(WindowBudget {
            count: 120,
            length: Duration::from_secs(2),
        }));
        tokio::time::sleep(Duration::from_millis(500)).await;
        for _ in 0..120 {
            assert_eq!(r.acquire("t"), Ok(()), "a burst of the whole budget");
        }
        let refused = r.acquire("t").unwrap_err();
        assert_eq!(
            refused.retry_after, 2,
            "1.5 s to the reset, in whole seconds"
        );
        assert_eq!(refused.reason.as_deref(), Some(CONNECTION_REASON));
        assert_eq!(r.acquire("u"), Ok(()), "budgets are per token");
        tokio::time::sleep(Duration::from_millis(1_500)).await;
        assert_eq!(r.acquire("t"), Ok(()), "the next window");
    }

    #[tokio::test(start_paused = true)]
    async fn the_workspace_limit_spans_tokens_and_refuses_longer() {
        let mut r = RateLimiter::new(RateConfig {
            per_second: 1_000.0,
            burst: 1_000,
        });
        r.set_workspace_limit(Some(WorkspaceLimit {
            count: 10,
            length: Duration::from_secs(60),
            retry_after: Duration::from_secs(90),
        }));
        for i in 0..10 {
            assert_eq!(r.acquire(if i % 2 == 0 { "a" } else { "b" }), Ok(()));
        }
        let refused = r.acquire("c").unwrap_err();
        assert_eq!(refused.retry_after, 90);
        assert_eq!(refused.reason.as_deref(), Some(WORKSPACE_REASON));
        tokio::time::sleep(Duration::from_secs(60)).await;
        assert_eq!(
            r.acquire("a").unwrap_err().retry_after,
            30,
            "refused until its end"
        );
        tokio::time::sleep(Duration::from_secs(30)).await;
        assert_eq!(r.acquire("a"), Ok(()));
        r.block_with_reason(Duration::from_secs(3), "a_limit_nobody_knows");
        assert_eq!(
            r.acquire("a").unwrap_err().reason.as_deref(),
            Some("a_limit_nobody_knows")
        );
    }
}
