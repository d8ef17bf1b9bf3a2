//! Notion's pace as a model, apart from where it is kept: what Notion's answers say about the
//! connection's budget, and when the next request may go. `notion::rate` runs it inside one SQLite
//! transaction per grant, so every process on one database shares it.
//!
//! Notion (developers.notion.com/reference/request-limits) gives each connection a fixed budget
//! per 60-second window, spendable at any pace, and answers past it `429 rate_limited` with
//! `Retry-After` = the time to the window's reset; a separate per-workspace limit, shared by every
//! connection of the workspace, answers 429 with a `Retry-After` that can exceed a minute. The
//! body's `additional_data.rate_limit_reason` says which (other values may appear: a plain 429).
//! The budgets per plan are not published, so `auto` learns the connection's from the answers:
//! - until the first 429 it learns: requests go as fast as callers send them, up to
//!   [`LEARNING_PER_SECOND`], so the first window's budget is spent (and told by its 429) inside
//!   that window; a full window without a 429 that held callers back doubles that ceiling;
//! - a per-connection 429 gives the budget: what this token was granted in the window that ended
//!   in it (counted from the end of the previous per-connection pause when that pause began the
//!   window, which is exact; else from `now + Retry-After - window`, which may miss what the
//!   second `Retry-After` rounds away, so such a count only ever raises a known budget) and the
//!   window's reset (`now + Retry-After`; later windows follow every window length);
//! - with a budget and a reset, each window is spent whole as soon as callers ask: up to the budget
//!   at once, then one request per second past it (the first one's 429 ends the window and gives
//!   its reset again; one that is answered says the budget grew);
//! - a per-workspace 429 pauses every request for its `Retry-After` and halves the pace; it never
//!   sets the budget;
//! - a plain 429 (no reason, an unknown one) or a 529 pauses for its `Retry-After` and slows the
//!   pace by a fifth (the older token-bucket model's answer has no reason).
//!
//! A pace slowed below the budget is spread evenly over the window, and each full window without a
//! 429 in which it held callers back raises it again (back to the budget by a tenth).

use std::fmt;
use std::time::Duration;

use crate::clock::UnixMillis;
use crate::settings::{NotionPace, Window};

/// Notion's documented average, the start of `auto`: 3 requests per second.
pub const DOCUMENTED_PER_SECOND: f64 = 3.0;

/// The per-connection window Notion documents.
pub const NOTION_WINDOW: Duration = Duration::from_secs(60);

/// The `rate_limit_reason` of the per-connection limit.
pub const CONNECTION_REASON: &str = "public_api_request_rate_limit";

/// The `rate_limit_reason` of the per-workspace limit.
pub const WORKSPACE_REASON: &str = "public_api_space_request_rate_limit";

/// The `rate_limit_reason` of an endpoint's own limit.
pub const ENDPOINT_REASON: &str = "public_api_endpoint_rate_limit";

/// The `rate_limit_reason` of a connection Notion blocks ("retrying won't help"): no pace, the
/// client stops ([`crate::notion::client::NotionError::Blocked`]).
pub const BLOCKED_REASON: &str = "public_api_request_blocked";

/// Back-to-back requests a fixed pace allows (as the in-process pace always did).
const FIXED_BURST: u32 = 3;

/// Back-to-back requests `auto` allows while it has not met a 429 yet.
const RAMP_BURST: u32 = 3;

/// The ceiling of `auto` while it learns (no 429 yet): 20 times the documented average, so a budget
/// of up to 1,200 per minute is spent in the first 20 s of a window and a budget up to 3,600 within
/// one window. It is a ceiling, not a pace: the pipeline's callers set the real one. Why not
/// unbounded: every request in flight when the budget runs out meets a 429 too, so the ceiling
/// keeps those to about `ceiling x round trip` (a few at Notion's 100-300 ms) whatever the number
/// of workers; and under the older token-bucket model, whose 429 names no limit, it bounds what
/// goes before the first refusal comes back.
pub const LEARNING_PER_SECOND: f64 = 20.0 * DOCUMENTED_PER_SECOND;

/// Past a known budget, one request at a time, the next once the last is answered or this long
/// after it: the first meets the window's 429 (which gives its reset), and answered ones show a
/// budget that grew or was counted short.
const PROBE_GAP_MS: i64 = 1_000;

/// `Retry-After` is whole seconds: how far a reset read from it may be from the real one.
const RETRY_AFTER_GRAIN_MS: i64 = 1_000;

/// Which limit a 429 or 529 answer reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Limit {
    /// The connection's budget per window (`rate_limit_reason` says so).
    Connection,
    /// The workspace's limit, shared with its other connections.
    Workspace,
    /// An endpoint's own limit: a pause for its `Retry-After`, saying nothing of the connection's
    /// budget or pace.
    Endpoint,
    /// A 429 without a reason, or with one we do not know.
    Other,
    /// 529 `service_overload`.
    Overload,
}

impl Limit {
    /// The limit an answer with `status` and `rate_limit_reason` reports.
    pub fn of(status: u16, reason: Option<&str>) -> Limit {
        match (status, reason) {
            (529, _) => Limit::Overload,
            (_, Some(CONNECTION_REASON)) => Limit::Connection,
            (_, Some(WORKSPACE_REASON)) => Limit::Workspace,
            (_, Some(ENDPOINT_REASON)) => Limit::Endpoint,
            _ => Limit::Other,
        }
    }

    /// Its name in the state database and in JSON.
    pub fn code(self) -> &'static str {
        match self {
            Limit::Connection => "connection",
            Limit::Workspace => "workspace",
            Limit::Endpoint => "endpoint",
            Limit::Other => "rate_limited",
            Limit::Overload => "service_overload",
        }
    }

    /// The limit named `code` (see [`Limit::code`]).
    pub fn from_code(code: &str) -> Option<Limit> {
        [
            Limit::Connection,
            Limit::Workspace,
            Limit::Endpoint,
            Limit::Other,
            Limit::Overload,
        ]
        .into_iter()
        .find(|l| l.code() == code)
    }
}

impl fmt::Display for Limit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Limit::Connection => "the connection's budget",
            Limit::Workspace => "the workspace's limit",
            Limit::Endpoint => "an endpoint's own limit",
            Limit::Other => "a 429",
            Limit::Overload => "Notion's overload (529)",
        })
    }
}

/// How the pace is set: learned, or fixed by a number.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Mode {
    /// Learned from Notion's answers, for a per-connection window of this length.
    Auto {
        /// The connection's window (Notion's is 60 s; tests use shorter ones).
        window: Duration,
    },
    /// Exactly this many requests per window, `burst` of them back to back; a 429 still pauses.
    Fixed {
        /// The pace.
        window: Window,
        /// Requests allowed back to back.
        burst: u32,
    },
}

impl Mode {
    /// The mode a setting asks for (Notion's own 60-second window for `auto`).
    pub fn of(setting: NotionPace) -> Mode {
        match setting {
            NotionPace::Auto => Mode::Auto {
                window: NOTION_WINDOW,
            },
            NotionPace::Fixed(window) => Mode::Fixed {
                window,
                burst: FIXED_BURST,
            },
        }
    }

    fn window_ms(self) -> i64 {
        let d = match self {
            Mode::Auto { window } => window,
            Mode::Fixed { window, .. } => window.length,
        };
        (d.as_millis() as i64).max(1)
    }

    /// How much a pace without a budget rises after a clean window: what one grain of
    /// `Retry-After` is of the window's rest, at least one request.
    fn step(self, per_window: f64) -> f64 {
        let left = (self.window_ms() - RETRY_AFTER_GRAIN_MS).max(RETRY_AFTER_GRAIN_MS);
        (per_window * RETRY_AFTER_GRAIN_MS as f64 / left as f64).max(1.0)
    }
}

/// A 429 or 529 answer, as the pace reads it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Throttle {
    /// Which limit.
    pub limit: Limit,
    /// Its `Retry-After` (1 s when it had none), uncapped.
    pub retry_after: Duration,
}

/// The shared pace of one integration token (one row of `notion_pace`).
#[derive(Clone, Debug, PartialEq)]
pub struct Pace {
    /// The window the pace and budget count in (ms).
    pub window_ms: i64,
    /// Requests per window the pace spends now.
    pub per_window: f64,
    /// The connection's budget per window, once a per-connection 429 told it.
    pub budget: Option<u32>,
    /// A window reset a per-connection 429 gave (later ones follow every window).
    pub reset_at: Option<UnixMillis>,
    /// GCRA's theoretical arrival time of the next request (unix ms, fractional).
    pub tat: f64,
    /// No request goes before this (a 429's or 529's `Retry-After`).
    pub paused_until: UnixMillis,
    /// Which limit set the pause.
    pub pause_reason: Option<Limit>,
    /// The last 429/529.
    pub throttled_at: Option<UnixMillis>,
    /// When the pace last changed, or the window it watches for a raise began.
    pub raised_at: UnixMillis,
    /// No 429 of any kind yet: the pace is the learning ceiling, doubled after each full window
    /// that held callers back.
    pub ramping: bool,
}

/// What the ledger counted for one decision.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Requests granted (refused ones excluded) since [`Pace::raised_at`].
    pub since_raise: u32,
}

/// What the ledger counts in the window beginning at `start`, for a grant against a known budget.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct InWindow {
    /// Requests granted from a grain before `start` on that Notion counted or may still count
    /// (refused ones excluded): the reset is read from whole seconds of `Retry-After`, up to one
    /// late, so a request of that last second may have counted in this window.
    pub granted: u32,
    /// Requests granted from `start` on that Notion answered (it counted them).
    pub answered: u32,
    /// Of [`InWindow::granted`], those not answered yet.
    pub in_flight: u32,
}

impl Pace {
    /// A token's pace before any answer: the learning ceiling (or the fixed number).
    pub fn fresh(mode: Mode, now: UnixMillis) -> Pace {
        let window_ms = mode.window_ms();
        let per_window = match mode {
            Mode::Auto { .. } => LEARNING_PER_SECOND * window_ms as f64 / 1_000.0,
            Mode::Fixed { window, .. } => f64::from(window.count.max(1)),
        };
        Pace {
            window_ms,
            per_window,
            budget: None,
            reset_at: None,
            tat: now as f64,
            paused_until: now,
            pause_reason: None,
            throttled_at: None,
            raised_at: now,
            ramping: true,
        }
    }

    /// This pace as `mode` reads it: a row written under another window (another setting, another
    /// process) starts learning again for this one.
    pub fn for_mode(mut self, mode: Mode, now: UnixMillis) -> Pace {
        if matches!(mode, Mode::Auto { .. }) && self.window_ms != mode.window_ms() {
            let fresh = Pace::fresh(mode, now);
            self = Pace {
                tat: self.tat,
                paused_until: self.paused_until,
                pause_reason: self.pause_reason,
                throttled_at: self.throttled_at,
                ..fresh
            };
        }
        self
    }

    fn interval_ms(&self, mode: Mode) -> f64 {
        match mode {
            Mode::Fixed { window, .. } => {
                window.length.as_millis() as f64 / f64::from(window.count.max(1))
            }
            Mode::Auto { .. } => self.window_ms as f64 / self.per_window.max(1.0),
        }
    }

    fn burst(&self, mode: Mode) -> u32 {
        match mode {
            Mode::Fixed { burst, .. } => burst.max(1),
            Mode::Auto { .. } if self.ramping => RAMP_BURST,
            // A pace slowed below the budget is spread evenly: its burst would only bunch.
            Mode::Auto { .. } => 1,
        }
    }

    /// Whether requests spend a known budget per window (rather than follow an even pace): `auto`
    /// with a budget and a reset from a per-connection 429, not slowed below it since.
    pub fn spends_budget(&self, mode: Mode) -> bool {
        matches!(mode, Mode::Auto { .. })
            && self.reset_at.is_some()
            && self.budget.is_some_and(|b| self.per_window >= f64::from(b))
    }

    /// Where the budget's current window begins, when [`Pace::spends_budget`]: windows follow
    /// one another from the last reset a per-connection 429 gave (a reset still ahead means an
    /// earlier window is still running).
    pub fn window_start(&self, mode: Mode, now: UnixMillis) -> Option<UnixMillis> {
        if !self.spends_budget(mode) {
            return None;
        }
        let r = self.reset_at?;
        let w = self.window_ms.max(1);
        Some(r + (now - r).div_euclid(w) * w)
    }

    /// A grain of `Retry-After` (ms): what [`InWindow::granted`] counts before the window.
    pub const GRAIN_MS: i64 = RETRY_AFTER_GRAIN_MS;

    /// Whether the budget's windows are counted from the end of a per-connection pause (the
    /// pause ended at a reset, so nothing of this token was granted between the reset and it).
    fn exact_windows(&self) -> bool {
        self.pause_reason == Some(Limit::Connection)
            && self
                .reset_at
                .is_some_and(|r| (0..=RETRY_AFTER_GRAIN_MS).contains(&(self.paused_until - r)))
    }

    /// Takes one request's slot at `now`, or says until when to wait. `in_window(start)` counts
    /// the ledger's requests of this token in the window beginning at `start` (asked only when a
    /// budget is spent per window).
    pub fn grant(
        &mut self,
        mode: Mode,
        now: UnixMillis,
        in_window: impl FnOnce(UnixMillis) -> InWindow,
    ) -> Result<(), UnixMillis> {
        if self.paused_until > now {
            return Err(self.paused_until);
        }
        if let (Some(start), Some(budget)) = (self.window_start(mode, now), self.budget) {
            let counted = in_window(start);
            // Answered past the budget in a window counted from a reset: the budget grew.
            if self.exact_windows() && counted.answered > budget {
                self.budget = Some(counted.answered);
                self.per_window = f64::from(counted.answered);
            }
            let budget = self.budget.unwrap_or(budget);
            if counted.granted < budget {
                self.tat = now as f64;
                return Ok(());
            }
            // Spent: one request past it at a time (the next once the last is answered, or a gap
            // later), until the window's 429 or its end.
            let next_probe = self.tat.ceil() as UnixMillis;
            if next_probe <= now || counted.in_flight == 0 {
                self.tat = (now + PROBE_GAP_MS) as f64;
                return Ok(());
            }
            return Err(next_probe.min(start + self.window_ms));
        }
        let allowance = self.interval_ms(mode) * f64::from(self.burst(mode) - 1);
        let earliest = (self.tat - allowance).ceil() as UnixMillis;
        if earliest > now {
            return Err(earliest);
        }
        self.tat = self.tat.max(now as f64) + self.interval_ms(mode);
        Ok(())
    }

    /// Whether a window has passed since [`Pace::raised_at`] (then [`Pace::watch`] runs).
    pub fn window_passed(&self, mode: Mode, now: UnixMillis) -> bool {
        matches!(mode, Mode::Auto { .. }) && now - self.raised_at >= self.window_ms
    }

    /// A window passed without a 429: when the pace held callers back (they took at least 90% of
    /// it), spend faster. While learning the ceiling doubles; a pace slowed below a known budget
    /// rises back to it by a tenth, one without a budget by a step.
    pub fn watch(&mut self, mode: Mode, now: UnixMillis, counts: Counts) {
        if !self.window_passed(mode, now) {
            return;
        }
        let elapsed = (now - self.raised_at) as f64;
        let demand = f64::from(counts.since_raise) * self.window_ms as f64 / elapsed;
        if demand >= 0.9 * self.per_window && !self.spends_budget(mode) {
            self.per_window = if self.ramping {
                self.per_window * 2.0
            } else {
                let up = self.per_window + mode.step(self.per_window);
                match self.budget {
                    Some(b) => (self.per_window * 1.1).max(up).min(f64::from(b)),
                    None => up,
                }
            };
        }
        self.raised_at = now;
    }

    /// Reads a 429/529 at `now` for a request granted at `granted_at`. `accepted_since(t)` counts
    /// the requests of this token granted from `t` on that Notion answered. Returns the shared
    /// pause.
    pub fn throttled(
        &mut self,
        mode: Mode,
        t: Throttle,
        now: UnixMillis,
        granted_at: UnixMillis,
        accepted_since: impl FnOnce(UnixMillis) -> u32,
    ) -> Duration {
        let ra = t.retry_after.as_millis() as i64;
        let until = now + ra;
        // A request granted before the last throttle met the same limit: the pace already answered.
        let fresh = self.throttled_at.is_none_or(|at| granted_at > at);
        let mut accepted_since = Some(accepted_since);
        let mut count = |from: UnixMillis| accepted_since.take().map_or(0, |f| f(from));
        if let Mode::Auto { .. } = mode {
            match t.limit {
                Limit::Connection => {
                    let by_retry_after = until - self.window_ms;
                    // A per-connection pause that ended inside this window's first grain began
                    // the window: nothing was granted between the reset and its end.
                    let resumed = match self.pause_reason {
                        Some(Limit::Connection)
                            if self.paused_until <= now
                                && self.paused_until >= by_retry_after - RETRY_AFTER_GRAIN_MS =>
                        {
                            Some(self.paused_until)
                        }
                        _ => None,
                    };
                    let from = resumed.unwrap_or(by_retry_after);
                    let counted = count(from).max(1);
                    // An exact count is the budget (it fell, or the window was the first one
                    // counted exactly). One from `Retry-After` never exceeds the budget but may
                    // miss up to a grain of requests, a whole burst of them: it only raises one.
                    let budget = match (self.budget, resumed) {
                        (Some(b), None) => counted.max(b),
                        _ => counted,
                    };
                    self.budget = Some(budget);
                    // Every 429 of one window gives its reset to a grain: the earliest is closest.
                    self.reset_at = Some(match self.reset_at {
                        Some(r) if (r - until).abs() <= RETRY_AFTER_GRAIN_MS => r.min(until),
                        _ => until,
                    });
                    self.per_window = f64::from(budget);
                    self.ramping = false;
                    self.raised_at = until;
                }
                Limit::Workspace if fresh => {
                    self.per_window = (self.slowed_from(now, count) * 0.5).max(1.0);
                    self.ramping = false;
                    self.raised_at = until;
                }
                Limit::Other | Limit::Overload if fresh => {
                    self.per_window = (self.slowed_from(now, count) * 0.8).max(1.0);
                    self.ramping = false;
                    self.raised_at = until;
                }
                _ => {}
            }
        }
        if until > self.paused_until {
            self.paused_until = until;
            self.pause_reason = Some(t.limit);
        }
        self.throttled_at = Some(self.throttled_at.map_or(now, |at| at.max(now)));
        Duration::from_millis((self.paused_until - now).max(0) as u64)
    }

    /// The pace a workspace or plain 429 at `now` slows: the pace itself, or while learning (the
    /// ceiling is not a pace) what callers were granted in the last window, at least the
    /// documented average.
    fn slowed_from(&self, now: UnixMillis, accepted_since: impl FnOnce(UnixMillis) -> u32) -> f64 {
        if !self.ramping {
            return self.per_window;
        }
        let spent = f64::from(accepted_since(now - self.window_ms));
        let documented = DOCUMENTED_PER_SECOND * self.window_ms as f64 / 1_000.0;
        spent.max(documented).min(self.per_window)
    }

    /// The next window reset after `now` that a per-connection 429 gave, if any.
    pub fn next_reset(&self, now: UnixMillis) -> Option<UnixMillis> {
        let r = self.reset_at?;
        if r >= now {
            return Some(r);
        }
        let w = self.window_ms.max(1);
        Some(r + ((now - r) / w + 1) * w)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const W: i64 = 60_000;

    fn auto() -> Mode {
        Mode::Auto {
            window: Duration::from_millis(W as u64),
        }
    }

    fn throttle(limit: Limit, secs: u64) -> Throttle {
        Throttle {
            limit,
            retry_after: Duration::from_secs(secs),
        }
    }

    #[test]
    fn reasons_name_their_limit_and_an_unknown_one_is_a_plain_429() {
        assert_eq!(Limit::of(429, Some(CONNECTION_REASON)), Limit::Connection);
        assert_eq!(Limit::of(429, Some(WORKSPACE_REASON)), Limit::Workspace);
        assert_eq!(Limit::of(429, Some(ENDPOINT_REASON)), Limit::Endpoint);
        assert_eq!(Limit::of(429, Some("a_new_limit")), Limit::Other);
        assert_eq!(Limit::of(429, None), Limit::Other);
        assert_eq!(Limit::of(529, Some(CONNECTION_REASON)), Limit::Overload);
        for l in [
            Limit::Connection,
            Limit::Workspace,
            Limit::Endpoint,
            Limit::Other,
            Limit::Overload,
        ] {
            assert_eq!(Limit::from_code(l.code()), Some(l));
        }
    }

    #[test]
    fn an_endpoint_429_pauses_for_its_retry_after_and_leaves_budget_and_pace() {
        let mut p = Pace::fresh(auto(), 0);
        p.per_window = 400.0;
        p.budget = Some(400);
        p.ramping = false;
        let wait = p.throttled(auto(), throttle(Limit::Endpoint, 5), 10_000, 9_000, |_| {
            panic!("an endpoint's 429 counts nothing")
        });
        assert_eq!(wait, Duration::from_secs(5));
        assert_eq!((p.per_window, p.budget), (400.0, Some(400)));
        assert_eq!(p.pause_reason, Some(Limit::Endpoint));
    }

    #[test]
    fn auto_learns_at_its_ceiling_and_doubles_it_after_a_full_window() {
        let mut p = Pace::fresh(auto(), 0);
        assert_eq!(p.per_window, 3_600.0);
        p.watch(auto(), W - 1, Counts { since_raise: 3_600 });
        assert_eq!(p.per_window, 3_600.0, "not a whole window yet");
        p.watch(auto(), W, Counts { since_raise: 3_600 });
        assert_eq!(p.per_window, 7_200.0);
        // callers that did not use the ceiling do not raise it
        p.watch(auto(), 2 * W, Counts { since_raise: 100 });
        assert_eq!(p.per_window, 7_200.0);
    }

    #[test]
    fn a_per_connection_429_sets_the_budget_from_the_window_that_ended_in_it() {
        let mut p = Pace::fresh(auto(), 0);
        p.per_window = 720.0;
        let mut asked = None;
        let wait = p.throttled(
            auto(),
            throttle(Limit::Connection, 12),
            100_000,
            99_990,
            |from| {
                asked = Some(from);
                500
            },
        );
        assert_eq!(wait, Duration::from_secs(12));
        assert_eq!(
            asked,
            Some(100_000 + 12_000 - W),
            "the window ending at the reset"
        );
        assert_eq!(p.budget, Some(500));
        assert_eq!(p.per_window, 500.0);
        assert!(p.spends_budget(auto()));
        assert!(!p.ramping);
        assert_eq!(p.next_reset(100_000), Some(112_000));
        assert_eq!(p.next_reset(113_000), Some(112_000 + W));
        // the next window's 429 counts from the end of the pause: nothing was granted before it
        let mut asked = None;
        p.throttled(
            auto(),
            throttle(Limit::Connection, 1),
            112_000 + W - 500,
            112_000 + W - 600,
            |from| {
                asked = Some(from);
                500
            },
        );
        assert_eq!(asked, Some(112_000));
        // a count from `Retry-After` (not from a pause's end) never lowers it: it may miss a
        // burst sent in the second `Retry-After` rounds away
        p.throttled(
            auto(),
            throttle(Limit::Connection, 1),
            300_000,
            299_000,
            |_| 200,
        );
        assert_eq!(p.budget, Some(500));
        assert_eq!(p.reset_at, Some(301_000));
        // an exact count (from the end of the pause that began the window) says the budget fell
        let mut asked = None;
        p.throttled(
            auto(),
            throttle(Limit::Connection, 1),
            301_000 + W - 500,
            301_000 + W - 600,
            |from| {
                asked = Some(from);
                200
            },
        );
        assert_eq!(asked, Some(301_000));
        assert_eq!(p.budget, Some(200));
        // a count from `Retry-After` above the budget raises it
        p.throttled(
            auto(),
            throttle(Limit::Connection, 1),
            500_000,
            499_000,
            |_| 240,
        );
        assert_eq!(p.budget, Some(240));
    }

    fn no_window(_: UnixMillis) -> InWindow {
        unreachable!("only a budget spent per window is counted")
    }

    #[test]
    fn a_known_budget_is_spent_at_once_then_one_request_a_second_until_the_windows_end() {
        let mut p = Pace::fresh(auto(), 0);
        p.throttled(
            auto(),
            throttle(Limit::Connection, 30),
            10_000,
            9_990,
            |_| 100,
        );
        assert_eq!(p.budget, Some(100));
        assert_eq!(p.grant(auto(), 20_000, no_window), Err(40_000), "paused");
        // the window beginning at the reset: counted from a grain before it
        let counts = |granted, answered| {
            move |start| {
                assert_eq!(start, 40_000);
                InWindow {
                    granted,
                    answered,
                    in_flight: 1,
                }
            }
        };
        assert_eq!(p.grant(auto(), 40_000, counts(0, 0)), Ok(()));
        assert_eq!(p.grant(auto(), 40_001, counts(99, 50)), Ok(()), "no pace");
        // spent: one more, then the next a second later (or at the window's end)
        assert_eq!(p.grant(auto(), 40_002, counts(100, 90)), Ok(()));
        assert_eq!(p.grant(auto(), 40_003, counts(101, 90)), Err(41_002));
        assert_eq!(p.tat, 41_002.0);
        // the last one past it answered and nothing in flight: the next goes at once
        let settled = |start| {
            assert_eq!(start, 40_000);
            InWindow {
                granted: 101,
                answered: 100,
                in_flight: 0,
            }
        };
        assert_eq!(p.grant(auto(), 40_004, settled), Ok(()));
        assert_eq!(p.grant(auto(), 99_900, counts(110, 100)), Ok(()));
        assert_eq!(p.grant(auto(), 99_901, counts(111, 100)), Err(100_000));
        // answered past the budget in a window counted from the reset: it grew
        assert_eq!(p.grant(auto(), 99_950, counts(101, 101)), Err(100_000));
        assert_eq!(p.budget, Some(101));
        // windows follow one another from the reset, also for a later run
        let next = |start| {
            assert_eq!(start, 40_000 + 3 * W);
            InWindow::default()
        };
        assert_eq!(p.grant(auto(), 40_000 + 3 * W + 5, next), Ok(()));
    }

    #[test]
    fn a_per_workspace_429_pauses_and_lowers_the_pace_but_is_never_the_budget() {
        let mut p = Pace::fresh(auto(), 0);
        p.per_window = 400.0;
        p.ramping = false;
        let wait = p.throttled(
            auto(),
            throttle(Limit::Workspace, 90),
            10_000,
            9_000,
            |_| panic!("a workspace 429 counts nothing"),
        );
        assert_eq!(wait, Duration::from_secs(90), "uncapped");
        assert_eq!(p.budget, None);
        assert_eq!(p.per_window, 200.0);
        assert_eq!(p.pause_reason, Some(Limit::Workspace));
        // the requests already in flight when it came meet the same limit: lowered once
        p.throttled(auto(), throttle(Limit::Workspace, 89), 10_500, 9_500, |_| 0);
        assert_eq!(p.per_window, 200.0);
        assert_eq!(
            p.paused_until, 100_000,
            "a shorter pause never shortens a longer one"
        );
        // while learning it halves what callers were granted in the last window
        let mut p = Pace::fresh(auto(), 0);
        let mut asked = None;
        p.throttled(
            auto(),
            throttle(Limit::Workspace, 90),
            8_000,
            7_990,
            |from| {
                asked = Some(from);
                500
            },
        );
        assert_eq!(asked, Some(8_000 - W));
        assert_eq!((p.per_window, p.budget, p.ramping), (250.0, None, false));
        assert!(!p.spends_budget(auto()));
    }

    #[test]
    fn a_plain_429_slows_the_pace_and_a_fixed_pace_never_moves() {
        let mut p = Pace::fresh(auto(), 0);
        p.throttled(auto(), throttle(Limit::Other, 1), 5_000, 4_000, |_| 0);
        assert_eq!(p.per_window, 144.0);
        assert_eq!(p.budget, None);
        let fixed = Mode::Fixed {
            window: Window {
                count: 3,
                length: Duration::from_secs(1),
            },
            burst: 3,
        };
        let mut f = Pace::fresh(fixed, 0);
        f.throttled(fixed, throttle(Limit::Connection, 5), 1_000, 900, |_| 7);
        assert_eq!((f.per_window, f.budget), (3.0, None));
        assert_eq!(f.paused_until, 6_000);
        f.watch(fixed, 100_000, Counts { since_raise: 1_000 });
        assert_eq!(f.per_window, 3.0);
    }

    #[test]
    fn the_grant_keeps_the_interval_after_its_burst_and_honours_the_pause() {
        let fixed = Mode::Fixed {
            window: Window {
                count: 3,
                length: Duration::from_secs(1),
            },
            burst: 3,
        };
        let mut p = Pace::fresh(fixed, 0);
        for _ in 0..3 {
            assert_eq!(p.grant(fixed, 0, no_window), Ok(()));
        }
        assert_eq!(p.grant(fixed, 0, no_window), Err(334));
        assert_eq!(p.grant(fixed, 334, no_window), Ok(()));
        p.paused_until = 10_000;
        assert_eq!(p.grant(fixed, 5_000, no_window), Err(10_000));
    }
}
