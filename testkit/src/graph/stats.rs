//! What the Graph test server saw: a request log and counters, readable while it runs.

use std::collections::HashMap;
use std::sync::Mutex;

use tokio::time::Instant;

/// One request as the server evaluated it (an inner `$batch` request is its own entry).
#[derive(Clone, Debug, PartialEq)]
pub struct LogEntry {
    /// HTTP method.
    pub method: String,
    /// Path (with query) relative to the host, or relative to `/v1.0` for inner requests.
    pub path: String,
    /// The authenticated user, if the token was accepted.
    pub user: Option<String>,
    /// Status returned.
    pub status: u16,
    /// When it arrived (tokio's clock).
    pub at: Instant,
    /// Whether it was an inner request of a `$batch`.
    pub inner_batch: bool,
}

/// Counters over the server's life.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Counters {
    /// Every evaluated request: outer requests (batches included) and inner batch requests.
    pub total: u64,
    /// `total` per authenticated user.
    pub per_user: HashMap<String, u64>,
    /// 429 responses, outer and inner.
    pub throttled: u64,
    /// Requests that arrived while their scope was over a window (or externally throttled).
    pub arrived_over_limit: u64,
    /// `$batch` requests.
    pub batches: u64,
    /// Inner requests of all batches.
    pub inner_requests: u64,
    /// Highest number of requests in flight per user.
    pub peak_user_concurrency: HashMap<String, u32>,
    /// Highest number of requests in flight app-wide.
    pub peak_app_concurrency: u32,
}

/// Log and counters behind a lock.
#[derive(Debug, Default)]
pub struct Stats {
    log: Mutex<Vec<LogEntry>>,
    counters: Mutex<Counters>,
}

impl Stats {
    /// Records one evaluated request.
    pub fn record(&self, entry: LogEntry, over_limit: bool) {
        {
            let mut c = self.counters.lock().expect("stats poisoned");
            c.total += 1;
            if let Some(u) = &entry.user {
                *c.per_user.entry(u.clone()).or_default() += 1;
            }
            if entry.status == 429 {
                c.throttled += 1;
            }
            if over_limit {
                c.arrived_over_limit += 1;
            }
            if entry.inner_batch {
                c.inner_requests += 1;
            }
            if entry.path.ends_with("/$batch") && !entry.inner_batch {
                c.batches += 1;
            }
        }
        self.log.lock().expect("stats poisoned").push(entry);
    }

    /// A copy of the log so far.
    pub fn log(&self) -> Vec<LogEntry> {
        self.log.lock().expect("stats poisoned").clone()
    }

    /// A copy of the counters, with the concurrency peaks filled in by the caller.
    pub fn counters(&self) -> Counters {
        self.counters.lock().expect("stats poisoned").clone()
    }
}
