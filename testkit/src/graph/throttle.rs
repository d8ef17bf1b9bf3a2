//! OneNote throttling as the service applies it: sliding windows per user and per app, concurrency caps,
//! and punitive counting (a request that arrives while its scope is over the limit is refused and still
//! counted, so a client that keeps hammering keeps itself throttled).

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

use tokio::time::Instant;

use notebridge::settings::Window;

/// Which budget refused a request (`x-ms-throttle-scope`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Scope {
    /// The per-user (per app per user) budget.
    User,
    /// The app-wide budget.
    Application,
}

impl Scope {
    /// The header's scope word.
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::User => "User",
            Scope::Application => "Application",
        }
    }
}

/// Why a request was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rejection {
    /// The scope was over a window (or externally throttled) when the request arrived.
    OverLimit(Scope),
    /// The scope had as many requests in flight as it allows.
    Concurrency(Scope),
}

impl Rejection {
    /// The scope that refused.
    pub fn scope(self) -> Scope {
        match self {
            Rejection::OverLimit(s) | Rejection::Concurrency(s) => s,
        }
    }
}

/// The limits the server enforces.
#[derive(Clone, Debug, PartialEq)]
pub struct ThrottleConfig {
    /// Sliding windows per user.
    pub user_windows: Vec<Window>,
    /// In-flight requests per user.
    pub user_concurrency: u32,
    /// Sliding windows for the app.
    pub app_windows: Vec<Window>,
    /// In-flight requests for the app.
    pub app_concurrency: u32,
}

#[derive(Debug)]
struct ScopeState {
    windows: Vec<(Window, VecDeque<Instant>)>,
    in_flight: u32,
    peak: u32,
    blocked_until: Option<Instant>,
}

impl ScopeState {
    fn new(windows: &[Window]) -> Self {
        Self {
            windows: windows.iter().map(|w| (*w, VecDeque::new())).collect(),
            in_flight: 0,
            peak: 0,
            blocked_until: None,
        }
    }

    fn prune(&mut self, now: Instant) {
        for (w, q) in &mut self.windows {
            while q
                .front()
                .is_some_and(|t| now.duration_since(*t) >= w.length)
            {
                q.pop_front();
            }
        }
    }

    fn over(&self, now: Instant) -> bool {
        self.blocked_until.is_some_and(|t| now < t)
            || self
                .windows
                .iter()
                .any(|(w, q)| q.len() as u64 >= u64::from(w.count))
    }

    fn record(&mut self, now: Instant) {
        for (_, q) in &mut self.windows {
            q.push_back(now);
        }
    }

    fn use_fraction(&self) -> f64 {
        self.windows
            .iter()
            .map(|(w, q)| q.len() as f64 / f64::from(w.count))
            .fold(0.0, f64::max)
    }
}

/// Throttle state of the whole server (one app, many users).
#[derive(Debug)]
pub struct Throttle {
    cfg: ThrottleConfig,
    users: HashMap<String, ScopeState>,
    app: ScopeState,
}

impl Throttle {
    /// Fresh state for `cfg`.
    pub fn new(cfg: ThrottleConfig) -> Self {
        let app = ScopeState::new(&cfg.app_windows);
        Self {
            cfg,
            users: HashMap::new(),
            app,
        }
    }

    fn user_state(&mut self, user: &str) -> &mut ScopeState {
        let ws = &self.cfg.user_windows;
        self.users
            .entry(user.to_owned())
            .or_insert_with(|| ScopeState::new(ws))
    }

    /// Evaluates one arriving request of `user` at `now`: records it in every window of both scopes
    /// whatever the outcome, then admits it (taking a concurrency slot in both scopes) or refuses it.
    /// On success returns the highest window use in either scope, this request included.
    pub fn admit(&mut self, user: &str, now: Instant) -> Result<f64, Rejection> {
        let (user_cap, app_cap) = (self.cfg.user_concurrency, self.cfg.app_concurrency);
        self.app.prune(now);
        let app_over = self.app.over(now);
        self.app.record(now);
        let u = self.user_state(user);
        u.prune(now);
        let user_over = u.over(now);
        u.record(now);
        if user_over {
            return Err(Rejection::OverLimit(Scope::User));
        }
        if app_over {
            return Err(Rejection::OverLimit(Scope::Application));
        }
        if u.in_flight >= user_cap {
            return Err(Rejection::Concurrency(Scope::User));
        }
        if self.app.in_flight >= app_cap {
            return Err(Rejection::Concurrency(Scope::Application));
        }
        let u = self.user_state(user);
        u.in_flight += 1;
        u.peak = u.peak.max(u.in_flight);
        let user_use = u.use_fraction();
        self.app.in_flight += 1;
        self.app.peak = self.app.peak.max(self.app.in_flight);
        Ok(user_use.max(self.app.use_fraction()))
    }

    /// Gives back the concurrency slot of an admitted request.
    pub fn release(&mut self, user: &str) {
        let u = self.user_state(user);
        u.in_flight = u.in_flight.saturating_sub(1);
        self.app.in_flight = self.app.in_flight.saturating_sub(1);
    }

    /// Makes a scope refuse everything until `until`, as if another client had used its budget.
    /// `user` None blocks the app scope.
    pub fn block(&mut self, user: Option<&str>, until: Instant) {
        match user {
            Some(u) => self.user_state(u).blocked_until = Some(until),
            None => self.app.blocked_until = Some(until),
        }
    }

    /// Highest concurrency seen per user.
    pub fn user_peaks(&self) -> HashMap<String, u32> {
        self.users
            .iter()
            .map(|(k, v)| (k.clone(), v.peak))
            .collect()
    }

    /// Highest concurrency seen app-wide.
    pub fn app_peak(&self) -> u32 {
        self.app.peak
    }
}

/// A concurrency slot held by an admitted request; released when dropped (response finished).
#[derive(Debug)]
pub struct SlotGuard {
    throttle: Arc<Mutex<Throttle>>,
    user: String,
}

impl Drop for SlotGuard {
    fn drop(&mut self) {
        if let Ok(mut t) = self.throttle.lock() {
            t.release(&self.user);
        }
    }
}

/// Evaluates a request now and wraps the slot in a guard.
pub fn admit(throttle: &Arc<Mutex<Throttle>>, user: &str) -> Result<(SlotGuard, f64), Rejection> {
    let used = throttle
        .lock()
        .expect("throttle poisoned")
        .admit(user, Instant::now())?;
    Ok((
        SlotGuard {
            throttle: Arc::clone(throttle),
            user: user.to_owned(),
        },
        used,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn cfg(user: &str, app: &str, uc: u32, ac: u32) -> ThrottleConfig {
        ThrottleConfig {
            user_windows: notebridge::settings::parse_windows(user).unwrap(),
            user_concurrency: uc,
            app_windows: notebridge::settings::parse_windows(app).unwrap(),
            app_concurrency: ac,
        }
    }

    #[tokio::test(start_paused = true)]
    async fn window_slides_per_request_not_per_bucket() {
        let mut t = Throttle::new(cfg("3/1s", "100/1s", 100, 100));
        let t0 = Instant::now();
        for _ in 0..2 {
            t.admit("u", t0).unwrap();
            t.release("u");
        }
        let t1 = t0 + Duration::from_millis(600);
        t.admit("u", t1).unwrap();
        t.release("u");
        // a fixed 1 s bucket would reset at t0+1s; the sliding window frees only the first two
        assert_eq!(
            t.admit("u", t0 + Duration::from_millis(999)),
            Err(Rejection::OverLimit(Scope::User))
        );
        // the refused request above was counted too, so at t0+1s only the t0 entries expired: 2 slots
        let t2 = t0 + Duration::from_millis(1000);
        t.admit("u", t2).unwrap();
        t.release("u");
        // window now holds t1, t0+999, t2: full
        assert!(t.admit("u", t2).is_err());
    }

    #[tokio::test(start_paused = true)]
    async fn hammering_extends_the_throttle() {
        let mut t = Throttle::new(cfg("2/1s", "100/1s", 100, 100));
        let t0 = Instant::now();
        t.admit("u", t0).unwrap();
        t.admit("u", t0).unwrap();
        for ms in (100..1000).step_by(100) {
            assert!(t.admit("u", t0 + Duration::from_millis(ms)).is_err());
        }
        // without punitive counting this would pass (t0 entries expired); the refused ones still count
        assert!(t.admit("u", t0 + Duration::from_millis(1050)).is_err());
        // a client that waits a full window after its last attempt gets through
        assert!(t.admit("u", t0 + Duration::from_millis(2100)).is_ok());
    }

    #[tokio::test(start_paused = true)]
    async fn concurrency_and_app_scope() {
        let mut t = Throttle::new(cfg("100/1s", "100/1s", 2, 3));
        let now = Instant::now();
        t.admit("a", now).unwrap();
        t.admit("a", now).unwrap();
        assert_eq!(t.admit("a", now), Err(Rejection::Concurrency(Scope::User)));
        t.admit("b", now).unwrap();
        assert_eq!(
            t.admit("b", now),
            Err(Rejection::Concurrency(Scope::Application))
        );
        t.release("a");
        t.admit("b", now).unwrap();
        assert_eq!(t.app_peak(), 3);
        assert_eq!(t.user_peaks()["a"], 2);
    }

    #[tokio::test(start_paused = true)]
    async fn block_refuses_until_time() {
        let mut t = Throttle::new(cfg("100/1s", "100/1s", 10, 10));
        let now = Instant::now();
        t.block(None, now + Duration::from_secs(2));
        assert_eq!(
            t.admit("a", now),
            Err(Rejection::OverLimit(Scope::Application))
        );
        assert!(t.admit("a", now + Duration::from_secs(2)).is_ok());
    }
}
