//! What the limiter shows of itself: `status`, progress bars and logs read a [`LimiterSnapshot`].

use std::fmt;

use serde::Serialize;

use super::Lane;
use crate::clock::UnixMillis;

/// A budget the limiter models: the whole app, or one user.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind", content = "user")]
pub enum BudgetHolder {
    /// Every request in this database.
    App,
    /// One Graph user id.
    User(String),
}

impl BudgetHolder {
    /// The key breakers are stored under.
    pub fn key(&self) -> String {
        match self {
            BudgetHolder::App => "app".into(),
            BudgetHolder::User(u) => format!("user:{u}"),
        }
    }
}

impl fmt::Display for BudgetHolder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BudgetHolder::App => f.write_str("the app"),
            BudgetHolder::User(u) => write!(f, "{u}"),
        }
    }
}

/// Why a request is waiting. `Display` reads as a log line ("alice's 400/1h window is full").
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum WaitReason {
    /// A sliding window has no room (for `lane`: background is limited to its share).
    WindowFull {
        /// Whose window.
        scope: BudgetHolder,
        /// The window, e.g. `400/1h`.
        window: String,
        /// Whether the background share (not the whole window) is what is full.
        background_share: bool,
    },
    /// A concurrency cap is reached.
    ConcurrencyCap {
        /// Whose cap.
        scope: BudgetHolder,
        /// Requests in flight.
        in_flight: u32,
        /// The cap that applies to the lane.
        cap: u32,
    },
    /// A circuit breaker is open after a 429.
    BreakerOpen {
        /// Whose breaker.
        scope: BudgetHolder,
        /// Consecutive 429s.
        trips: u32,
    },
    /// The breaker's one probe is out; everyone else waits for its answer.
    ProbeInFlight {
        /// Whose breaker.
        scope: BudgetHolder,
    },
    /// The service reported the user near a limit (`x-ms-throttle-limit-percentage`).
    SoftBrake {
        /// The user.
        user: String,
        /// The reported share.
        percentage: f64,
    },
    /// Background work yields to waiting foreground work.
    ForegroundFirst,
}

impl fmt::Display for WaitReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let owner = |s: &BudgetHolder| match s {
            BudgetHolder::App => "the app's".to_string(),
            BudgetHolder::User(u) => format!("{u}'s"),
        };
        match self {
            WaitReason::WindowFull {
                scope,
                window,
                background_share: false,
            } => write!(f, "{} {window} window is full", owner(scope)),
            WaitReason::WindowFull { scope, window, .. } => {
                write!(
                    f,
                    "the background share of {} {window} window is used up",
                    owner(scope)
                )
            }
            WaitReason::ConcurrencyCap {
                scope,
                in_flight,
                cap,
            } => write!(
                f,
                "{} concurrency cap is reached ({in_flight} in flight, cap {cap})",
                owner(scope)
            ),
            WaitReason::BreakerOpen { scope, trips } => write!(
                f,
                "Graph throttled {} ({trips} time(s) in a row); cooling down",
                match scope {
                    BudgetHolder::App => "the app".to_string(),
                    BudgetHolder::User(u) => u.clone(),
                }
            ),
            WaitReason::ProbeInFlight { scope } => {
                write!(f, "waiting for the probe after {} throttle", owner(scope))
            }
            WaitReason::SoftBrake { user, percentage } => write!(
                f,
                "{user} is at {:.0}% of a Graph limit; pacing",
                percentage * 100.0
            ),
            WaitReason::ForegroundFirst => f.write_str("foreground work goes first"),
        }
    }
}

/// Use of one window.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct WindowUse {
    /// `COUNT/DURATION`.
    pub window: String,
    /// The window's length in ms.
    pub length_ms: i64,
    /// Its limit.
    pub limit: u32,
    /// What the background lane may use of it (all but the foreground reserve, or a fixed share).
    pub background_limit: u32,
    /// What counts against that part now: every request in `auto` (the reserve is what
    /// foreground may still use), background's own under a fixed share.
    pub background_used: u32,
    /// Foreground requests counted in it now.
    pub foreground: u32,
    /// Background requests counted in it now.
    pub background: u32,
}

/// A breaker's state.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "snake_case", tag = "state")]
pub enum BreakerState {
    /// Requests flow.
    Closed,
    /// Cooling down until `until`.
    Open {
        /// End of the cooldown.
        until: UnixMillis,
        /// Consecutive 429s.
        trips: u32,
    },
    /// The cooldown is over: one probe may go (or is out).
    HalfOpen {
        /// Whether the probe is out.
        probe_in_flight: bool,
        /// Consecutive 429s.
        trips: u32,
    },
}

/// One scope's state.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BudgetState {
    /// App or user.
    pub scope: BudgetHolder,
    /// Every window's use.
    pub windows: Vec<WindowUse>,
    /// Requests in flight, foreground.
    pub in_flight_foreground: u32,
    /// Requests in flight, background.
    pub in_flight_background: u32,
    /// The concurrency cap (`None`: no cap, the app's default).
    pub concurrency: Option<u32>,
    /// What the background lane may use of the cap.
    pub background_concurrency: Option<u32>,
    /// The breaker.
    pub breaker: BreakerState,
    /// The soft brake's last reported percentage (users only).
    pub brake: Option<f64>,
    /// Foreground requests waiting (every process).
    pub foreground_waiting: u32,
}

/// One request of this process that is waiting now.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct WaitState {
    /// The user.
    pub user: String,
    /// The lane.
    pub lane: Lane,
    /// When it will next try (unix ms).
    pub until: UnixMillis,
    /// Why it waits.
    pub reason: WaitReason,
    /// `reason` as text.
    pub message: String,
}

/// The limiter's state at one instant.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LimiterSnapshot {
    /// When it was taken.
    pub at: UnixMillis,
    /// The app first, then each user.
    pub scopes: Vec<BudgetState>,
    /// This process's waiting requests.
    pub waits: Vec<WaitState>,
}

impl LimiterSnapshot {
    /// The longest current wait as a log line: "waiting 41 s: alice's 400/1h window is full".
    pub fn headline(&self) -> Option<String> {
        let w = self.waits.iter().max_by_key(|w| w.until)?;
        let secs = ((w.until - self.at).max(0) as f64 / 1000.0).ceil() as i64;
        Some(format!("waiting {secs} s: {}", w.message))
    }
}
