//! The grant decision as a pure function of what the ledger holds.
//!
//! The limiter reads one [`LedgerView`] per decision (inside its IMMEDIATE transaction), asks
//! [`decide`] what to do, and writes the grant in the same transaction. Window use is computed here
//! once ([`scope_windows`]), for the decision, `status` and the plan and ETA alike.

use super::budget::{self, LaneWindow, WindowState};
use super::state::{BudgetHolder, WaitReason, WindowUse};
use super::window::brake_interval_ms;
use super::Lane;
use crate::clock::UnixMillis;
use crate::settings::{BackgroundShare, GraphLimits, Window};

/// One ledger row as a window sees it: when it counts from, and its lane.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Counted {
    /// The instant it counts from (unix ms): its completion, or its grant while in flight.
    pub at: UnixMillis,
    /// When it was granted (unix ms): `at - granted` is how long its answer took.
    pub granted: UnixMillis,
    /// Its lane.
    pub lane: Lane,
}

/// How long the answers of `rows` took on average (ms; 0 without rows). A request counts in the
/// windows from its completion, so each one holds its place for the window's length plus this.
/// Rows still in flight count as instant: they are at most a cap's worth.
pub fn answer_ms(rows: &[Counted]) -> i64 {
    if rows.is_empty() {
        return 0;
    }
    let sum: i64 = rows.iter().map(|c| (c.at - c.granted).max(0)).sum();
    sum / rows.len() as i64
}

/// Requests in flight in one scope.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct InFlight {
    /// Both lanes.
    pub total: u32,
    /// Background lane only.
    pub background: u32,
    /// Held by other processes (their release does not notify us).
    pub remote: u32,
}

/// A breaker that is not closed, as one decision needs it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BreakerView {
    /// No request of the scope before this.
    pub open_until: UnixMillis,
    /// Consecutive 429s.
    pub trips: u32,
    /// The half-open probe, if one is out: `Some(true)` when another process sent it.
    pub probe_remote: Option<bool>,
    /// Half-open, but the asking user may not probe before this: the breaker is the app's, opened
    /// on this user's own guess, and another account's answer is the one that tells.
    pub probe_left_to_others_until: Option<UnixMillis>,
}

/// The soft brake of a user, with what pacing needs of the ledger.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BrakeView {
    /// The reported share of a limit.
    pub percentage: f64,
    /// When it was reported.
    pub at: UnixMillis,
    /// At 1.0 and above: no request before this.
    pub hold_until: UnixMillis,
    /// When the user's latest request was granted, if the ledger still holds one.
    pub last_granted: Option<UnixMillis>,
}

/// One scope's part of the ledger.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ScopeView {
    /// Every row that may still count in one of the scope's windows, oldest first.
    pub counted: Vec<Counted>,
    /// Its requests in flight.
    pub in_flight: InFlight,
    /// Its breaker, unless closed.
    pub breaker: Option<BreakerView>,
}

/// Everything one grant decision reads, read once.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LedgerView {
    /// The decision's instant.
    pub now: UnixMillis,
    /// The requesting user's scope.
    pub user: ScopeView,
    /// The app scope (every user's rows; only read when app windows are configured).
    pub app: ScopeView,
    /// What the user's last scan cost (sizes the foreground reserve).
    pub scan_cost: Option<u32>,
    /// The user's soft brake, unless released.
    pub brake: Option<BrakeView>,
    /// A live foreground waiter of this user exists (any process).
    pub foreground_waiting_user: bool,
    /// A live foreground waiter blocked on the app scope exists (any process).
    pub foreground_waiting_app: bool,
    /// A foreground request of this user is in flight (any process).
    pub foreground_in_flight_user: bool,
    /// A foreground request of any user is in flight (any process).
    pub foreground_in_flight_any: bool,
}

/// The limits and margins a decision applies.
#[derive(Clone, Copy, Debug)]
pub struct Policy<'a> {
    /// The modelled limits.
    pub limits: &'a GraphLimits,
    /// How much longer than the service's each window is held (ms).
    pub window_slack_ms: i64,
}

/// Everything that blocks one request, folded by the max rule.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Blocked {
    /// The latest instant some timed blocker (window, breaker, brake) lifts, and its reason.
    pub timed: Option<(UnixMillis, WaitReason)>,
    /// A blocker without a known end (cap, probe, foreground first).
    pub untimed: Option<WaitReason>,
    /// An untimed blocker is held by another process: poll for it.
    pub remote: bool,
    /// Some blocker is the app scope's.
    pub app_blocked: bool,
}

impl Blocked {
    fn timed(&mut self, until: UnixMillis, reason: WaitReason, app: bool) {
        self.app_blocked |= app;
        if self.timed.as_ref().is_none_or(|(t, _)| until > *t) {
            self.timed = Some((until, reason));
        }
    }

    fn untimed(&mut self, reason: WaitReason, remote: bool, app: bool) {
        self.app_blocked |= app;
        self.remote |= remote;
        if self.untimed.is_none() {
            self.untimed = Some(reason);
        }
    }

    /// Whether anything blocks.
    pub fn any(&self) -> bool {
        self.timed.is_some() || self.untimed.is_some()
    }

    /// The reason to show: the timed blocker's (it decides the wait), else the untimed one's.
    pub fn reason(&self) -> WaitReason {
        match (&self.timed, &self.untimed) {
            (Some((_, r)), _) => r.clone(),
            (None, Some(r)) => r.clone(),
            (None, None) => WaitReason::ForegroundFirst,
        }
    }
}

/// What [`decide`] concluded.
#[derive(Clone, Debug, PartialEq)]
pub enum Verdict {
    /// Grant `count` requests now (at least 1); the first is the half-open probe of `probes`.
    Grant {
        /// How many.
        count: u32,
        /// The scopes whose probe the first grant is.
        probes: Vec<BudgetHolder>,
    },
    /// Wait.
    Wait(Blocked),
}

/// One window of a scope, as the ledger fills it now.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WindowFill {
    /// The window.
    pub window: Window,
    /// Its length as held (the service's plus the slack), ms.
    pub length_ms: i64,
    /// Requests it counts now, both lanes.
    pub total: u32,
    /// Background requests it counts now.
    pub background: u32,
    /// What background may use of it.
    pub background_limit: u32,
    /// When it has room for one more request of any lane (`now` when it has room).
    pub room_at: UnixMillis,
    /// When background's part has room for one more (`now` when it has room).
    pub background_room_at: UnixMillis,
}

impl WindowFill {
    /// What background has used of its part: every request in `auto` (the reserve is what
    /// foreground may still use, whichever lane used the rest), its own under a fixed share.
    pub fn background_used(&self, share: BackgroundShare) -> u32 {
        match share {
            BackgroundShare::Auto => self.total,
            BackgroundShare::Fixed(_) => self.background,
        }
    }
}

/// The rows a lane's part of a window counts: all of them in `auto`, background's under a fixed
/// share.
fn counts_for_background(share: BackgroundShare, c: &Counted) -> bool {
    match share {
        BackgroundShare::Auto => true,
        BackgroundShare::Fixed(_) => c.lane == Lane::Background,
    }
}

/// The instant the `offset`-th oldest (0-based) of `rows` that `keep` selects slides out of a
/// window of `len` (rows already filtered to the window, oldest first).
fn slides_out(
    rows: &[Counted],
    keep: impl Fn(&Counted) -> bool,
    offset: u32,
    len: i64,
) -> Option<UnixMillis> {
    rows.iter()
        .filter(|c| keep(c))
        .nth(offset as usize)
        .map(|c| c.at + len)
}

/// How every window of a scope is filled at `now`, with background's limits sized from
/// `scan_cost` (user windows: the user's last scan; app windows: `None`, the floor). Windows are
/// held `slack_ms` longer than the service's.
pub fn scope_windows(
    windows: &[Window],
    share: BackgroundShare,
    scan_cost: Option<u32>,
    counted: &[Counted],
    now: UnixMillis,
    slack_ms: i64,
) -> Vec<WindowFill> {
    let limits = budget::background_windows(windows, share, scan_cost, answer_ms(counted));
    windows
        .iter()
        .zip(limits)
        .map(|(w, k)| {
            let len = w.length.as_millis() as i64 + slack_ms;
            let since = now - len;
            let start = counted.partition_point(|c| c.at <= since);
            let live = &counted[start..];
            let total = live.len() as u32;
            let background = live.iter().filter(|c| c.lane == Lane::Background).count() as u32;
            let room_at = if total >= w.count {
                slides_out(live, |_| true, total - w.count, len).unwrap_or(now)
            } else {
                now
            };
            let used = match share {
                BackgroundShare::Auto => total,
                BackgroundShare::Fixed(_) => background,
            };
            let background_room_at = if used >= k {
                slides_out(live, |c| counts_for_background(share, c), used - k, len).unwrap_or(now)
            } else {
                now
            };
            WindowFill {
                window: *w,
                length_ms: len,
                total,
                background,
                background_limit: k,
                room_at,
                background_room_at,
            }
        })
        .collect()
}

/// What `status` shows of a window under `share`.
pub fn window_use(f: &WindowFill, share: BackgroundShare) -> WindowUse {
    WindowUse {
        window: f.window.to_string(),
        length_ms: f.length_ms,
        limit: f.window.count,
        background_limit: f.background_limit,
        background_used: f.background_used(share),
        foreground: f.total - f.background,
        background: f.background,
    }
}

/// The windows as background work may use them, with the instants that count against its part:
/// the budget model of `migrate`'s plan and progress ETA.
pub fn background_states(
    windows: &[Window],
    share: BackgroundShare,
    scan_cost: Option<u32>,
    counted: &[Counted],
    now: UnixMillis,
) -> Vec<WindowState> {
    let limits = budget::background_windows(windows, share, scan_cost, answer_ms(counted));
    windows
        .iter()
        .zip(limits)
        .map(|(w, usable)| {
            let since = now - w.length.as_millis() as i64;
            WindowState {
                lane: LaneWindow { window: *w, usable },
                counted: counted
                    .iter()
                    .filter(|c| c.at > since && counts_for_background(share, c))
                    .map(|c| c.at)
                    .collect(),
            }
        })
        .collect()
}

/// The highest share of any window its rows fill now (0..=1 and above).
pub fn highest_use(windows: &[Window], counted: &[Counted], now: UnixMillis) -> f64 {
    scope_windows(windows, BackgroundShare::Auto, None, counted, now, 0)
        .iter()
        .map(|f| f.total as f64 / f.window.count.max(1) as f64)
        .fold(0.0, f64::max)
}

/// When every window has room for one more request of any lane (the model's own Retry-After).
pub fn room_at(windows: &[Window], counted: &[Counted], now: UnixMillis) -> UnixMillis {
    scope_windows(windows, BackgroundShare::Auto, None, counted, now, 0)
        .iter()
        .map(|f| f.room_at)
        .fold(now, UnixMillis::max)
}

/// The soft brake: above 0.8 pace the user's remaining budget over its shortest window; at 1.0 and
/// above hold until the oldest of its requests slides out, then one at a time until a new hint.
/// `None` when the brake says nothing about now (a whole window passed since the hint): release it.
pub fn brake_next(b: &BrakeView, shortest: &Window, now: UnixMillis) -> Option<UnixMillis> {
    let len = shortest.length.as_millis() as i64;
    if now - b.at >= len {
        return None;
    }
    let paced_from = b.last_granted.unwrap_or(b.at);
    let next = if b.percentage >= 1.0 {
        if paced_from < b.hold_until {
            b.hold_until
        } else {
            // One request went after the hold; the next waits for the hint its answer brings.
            paced_from + len
        }
    } else {
        paced_from + brake_interval_ms(b.percentage, shortest.count, len)
    };
    Some(next.max(b.hold_until))
}

/// The user's shortest window (the soft brake paces over it).
pub fn shortest(windows: &[Window]) -> Option<&Window> {
    windows.iter().min_by_key(|w| w.length)
}

/// The grant decision: may `max` requests (at least one) of `user` in `lane` start at `view.now`?
/// Every window, cap, breaker, brake and lane rule of both scopes is checked; a wait is the max over
/// every timed blocker.
pub fn decide(policy: Policy<'_>, view: &LedgerView, user: &str, lane: Lane, max: u32) -> Verdict {
    let lim = policy.limits;
    let share = lim.background_share;
    let now = view.now;
    let mut blocked = Blocked::default();
    let mut free = max.max(1);
    let mut probes = Vec::new();
    let scopes = [
        (BudgetHolder::User(user.to_owned()), &view.user),
        (BudgetHolder::App, &view.app),
    ];
    for (scope, sv) in scopes {
        let app = scope == BudgetHolder::App;
        if let Some(br) = sv.breaker {
            if now < br.open_until {
                let reason = WaitReason::BreakerOpen {
                    scope: scope.clone(),
                    trips: br.trips,
                };
                blocked.timed(br.open_until, reason, app);
            } else if let Some(remote) = br.probe_remote {
                let reason = WaitReason::ProbeInFlight {
                    scope: scope.clone(),
                };
                blocked.untimed(reason, remote, app);
            } else if let Some(until) = br.probe_left_to_others_until.filter(|&t| now < t) {
                let reason = WaitReason::BreakerOpen {
                    scope: scope.clone(),
                    trips: br.trips,
                };
                blocked.timed(until, reason, app);
            } else {
                probes.push(scope.clone());
                free = free.min(1);
            }
        }
        let (windows, cap, cost) = if app {
            (&lim.app_windows, lim.app_concurrency, None)
        } else {
            (
                &lim.user_windows,
                Some(lim.user_concurrency),
                view.scan_cost,
            )
        };
        let fills = scope_windows(
            windows,
            share,
            cost,
            &sv.counted,
            now,
            policy.window_slack_ms,
        );
        for f in &fills {
            let full = |background_share: bool| WaitReason::WindowFull {
                scope: scope.clone(),
                window: f.window.to_string(),
                background_share,
            };
            if f.total >= f.window.count {
                blocked.timed(f.room_at, full(false), app);
            } else {
                free = free.min(f.window.count - f.total);
            }
            if lane == Lane::Background {
                let used = f.background_used(share);
                if used >= f.background_limit {
                    blocked.timed(f.background_room_at, full(true), app);
                } else {
                    free = free.min(f.background_limit - used);
                }
            }
        }
        if !app {
            if let (Some(b), Some(w)) = (&view.brake, shortest(windows)) {
                match brake_next(b, w, now) {
                    Some(next) if now < next => {
                        let reason = WaitReason::SoftBrake {
                            user: user.to_owned(),
                            percentage: b.percentage,
                        };
                        blocked.timed(next, reason, false);
                    }
                    Some(_) => free = free.min(1),
                    None => {}
                }
            }
        }
        let Some(cap) = cap else {
            continue;
        };
        let f = sv.in_flight;
        let cap_reason = |in_flight, cap| WaitReason::ConcurrencyCap {
            scope: scope.clone(),
            in_flight,
            cap,
        };
        if f.total >= cap {
            blocked.untimed(cap_reason(f.total, cap), f.remote > 0, app);
        } else {
            free = free.min(cap - f.total);
        }
        if lane == Lane::Background {
            let k = budget::background_cap(cap, share);
            let used = match share {
                BackgroundShare::Auto => f.total,
                BackgroundShare::Fixed(_) => f.background,
            };
            if used >= k {
                blocked.untimed(cap_reason(used, k), f.remote > 0, app);
            } else {
                free = free.min(k - used);
            }
        }
    }
    if lane == Lane::Background {
        let mut hold = view.foreground_waiting_user || view.foreground_waiting_app;
        if share == BackgroundShare::Auto && !hold {
            // Work-conserving, foreground first: while foreground work of this budget is in
            // flight (under app-wide limits: any account's), background takes nothing new, so the
            // foreground's next request finds room.
            let app_limited = !lim.app_windows.is_empty() || lim.app_concurrency.is_some();
            hold = if app_limited {
                view.foreground_in_flight_any
            } else {
                view.foreground_in_flight_user
            };
        }
        if hold {
            // A foreground waiter's grant does not notify us; poll.
            blocked.untimed(WaitReason::ForegroundFirst, true, false);
        }
    }
    if blocked.any() {
        Verdict::Wait(blocked)
    } else {
        Verdict::Grant {
            count: free.max(1),
            probes,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::limiter::window::room_at as room_of;
    use crate::settings::parse_windows;
    use proptest::prelude::*;

    fn limits(share: BackgroundShare) -> GraphLimits {
        GraphLimits {
            user_windows: parse_windows("12/600ms,40/6s").unwrap(),
            user_concurrency: 5,
            app_windows: Vec::new(),
            app_concurrency: None,
            background_share: share,
        }
    }

    fn policy(l: &GraphLimits) -> Policy<'_> {
        Policy {
            limits: l,
            window_slack_ms: 0,
        }
    }

    fn rows(ats: &[(UnixMillis, Lane)]) -> Vec<Counted> {
        let mut v: Vec<Counted> = ats
            .iter()
            .map(|&(at, lane)| Counted {
                at,
                granted: at,
                lane,
            })
            .collect();
        v.sort_by_key(|c| c.at);
        v
    }

    fn view(now: UnixMillis, counted: Vec<Counted>) -> LedgerView {
        LedgerView {
            now,
            user: ScopeView {
                counted,
                ..ScopeView::default()
            },
            ..LedgerView::default()
        }
    }

    fn wait_until(v: Verdict) -> (Option<UnixMillis>, WaitReason) {
        match v {
            Verdict::Wait(b) => (b.timed.as_ref().map(|t| t.0), b.reason()),
            g => panic!("expected a wait, got {g:?}"),
        }
    }

    #[test]
    fn an_empty_ledger_grants_as_many_as_the_tightest_layer_allows() {
        let l = limits(BackgroundShare::Auto);
        let v = view(1_000, Vec::new());
        let g = decide(policy(&l), &v, "alice", Lane::Foreground, 20);
        // The cap (5) is the tightest.
        assert_eq!(
            g,
            Verdict::Grant {
                count: 5,
                probes: vec![]
            }
        );
        // Background keeps the cap's reserved slot.
        let g = decide(policy(&l), &v, "alice", Lane::Background, 20);
        assert_eq!(
            g,
            Verdict::Grant {
                count: 4,
                probes: vec![]
            }
        );
    }

    #[test]
    fn a_full_window_waits_for_its_oldest_row_to_slide_out() {
        let l = limits(BackgroundShare::Auto);
        let r: Vec<_> = (0..12).map(|i| (100 + i, Lane::Foreground)).collect();
        let v = view(300, rows(&r));
        let (until, reason) = wait_until(decide(policy(&l), &v, "alice", Lane::Foreground, 1));
        assert_eq!(until, Some(700));
        assert!(matches!(
            reason,
            WaitReason::WindowFull {
                background_share: false,
                ..
            }
        ));
    }

    #[test]
    fn background_in_auto_leaves_the_reserve_whichever_lane_used_the_window() {
        let l = limits(BackgroundShare::Auto);
        // 12/600ms keeps 1 for foreground (40/6s binds; its reserve is 2).
        let r: Vec<_> = (0..11).map(|i| (100 + i, Lane::Foreground)).collect();
        let v = view(300, rows(&r));
        let (until, reason) = wait_until(decide(policy(&l), &v, "alice", Lane::Background, 1));
        assert_eq!(until, Some(700), "the oldest of the 11 slides out");
        assert!(matches!(
            reason,
            WaitReason::WindowFull {
                background_share: true,
                ..
            }
        ));
        // Foreground takes the reserved one at once.
        assert!(matches!(
            decide(policy(&l), &v, "alice", Lane::Foreground, 3),
            Verdict::Grant { count: 1, .. }
        ));
    }

    #[test]
    fn under_a_fixed_share_only_background_rows_count_against_its_part() {
        let l = limits(BackgroundShare::Fixed(0.5));
        let mut r: Vec<_> = (0..6).map(|i| (100 + i, Lane::Background)).collect();
        r.extend((0..3).map(|i| (50 + i, Lane::Foreground)));
        let v = view(300, rows(&r));
        let (until, _) = wait_until(decide(policy(&l), &v, "alice", Lane::Background, 1));
        assert_eq!(
            until,
            Some(700),
            "the oldest background row, not the foreground at 50"
        );
        assert!(matches!(
            decide(policy(&l), &v, "alice", Lane::Foreground, 9),
            Verdict::Grant { count: 3, .. }
        ));
    }

    #[test]
    fn the_wait_is_the_latest_of_every_timed_blocker() {
        let l = limits(BackgroundShare::Auto);
        let mut v = view(300, Vec::new());
        v.user.breaker = Some(BreakerView {
            open_until: 900,
            trips: 2,
            probe_remote: None,
            probe_left_to_others_until: None,
        });
        v.brake = Some(BrakeView {
            percentage: 1.2,
            at: 250,
            hold_until: 1_200,
            last_granted: Some(240),
        });
        let (until, reason) = wait_until(decide(policy(&l), &v, "alice", Lane::Foreground, 1));
        assert_eq!(until, Some(1_200));
        assert!(matches!(reason, WaitReason::SoftBrake { .. }));
    }

    #[test]
    fn a_half_open_breaker_grants_one_probe_unless_one_is_out() {
        let l = limits(BackgroundShare::Auto);
        let mut v = view(1_000, Vec::new());
        v.user.breaker = Some(BreakerView {
            open_until: 900,
            trips: 1,
            probe_remote: None,
            probe_left_to_others_until: None,
        });
        assert_eq!(
            decide(policy(&l), &v, "alice", Lane::Foreground, 5),
            Verdict::Grant {
                count: 1,
                probes: vec![BudgetHolder::User("alice".into())]
            }
        );
        v.user.breaker.as_mut().unwrap().probe_remote = Some(true);
        match decide(policy(&l), &v, "alice", Lane::Foreground, 5) {
            Verdict::Wait(b) => {
                assert!(b.remote && b.timed.is_none());
                assert!(matches!(b.reason(), WaitReason::ProbeInFlight { .. }));
            }
            g => panic!("{g:?}"),
        }
    }

    #[test]
    fn an_app_breaker_opened_on_a_users_guess_leaves_its_probe_to_others_for_a_cooldown() {
        let l = limits(BackgroundShare::Auto);
        let mut v = view(1_000, Vec::new());
        v.app.breaker = Some(BreakerView {
            open_until: 900,
            trips: 1,
            probe_remote: None,
            probe_left_to_others_until: Some(1_100),
        });
        let (until, reason) = wait_until(decide(policy(&l), &v, "alice", Lane::Background, 1));
        assert_eq!(until, Some(1_100));
        assert_eq!(
            reason,
            WaitReason::BreakerOpen {
                scope: BudgetHolder::App,
                trips: 1
            }
        );
        v.now = 1_100;
        assert_eq!(
            decide(policy(&l), &v, "alice", Lane::Background, 5),
            Verdict::Grant {
                count: 1,
                probes: vec![BudgetHolder::App]
            }
        );
    }

    #[test]
    fn background_yields_to_foreground_of_its_own_budget() {
        let l = limits(BackgroundShare::Auto);
        let mut v = view(1_000, Vec::new());
        v.foreground_in_flight_any = true;
        assert!(matches!(
            decide(policy(&l), &v, "alice", Lane::Background, 1),
            Verdict::Grant { .. }
        ));
        v.foreground_in_flight_user = true;
        let Verdict::Wait(b) = decide(policy(&l), &v, "alice", Lane::Background, 1) else {
            panic!("background went first")
        };
        assert_eq!(b.reason(), WaitReason::ForegroundFirst);
        // A fixed share holds back only for waiters.
        let fixed = limits(BackgroundShare::Fixed(0.5));
        assert!(matches!(
            decide(policy(&fixed), &v, "alice", Lane::Background, 1),
            Verdict::Grant { .. }
        ));
        v.foreground_waiting_app = true;
        assert!(matches!(
            decide(policy(&fixed), &v, "alice", Lane::Background, 1),
            Verdict::Wait(_)
        ));
    }

    #[test]
    fn the_cap_counts_every_process_and_says_when_another_holds_it() {
        let l = limits(BackgroundShare::Auto);
        let mut v = view(1_000, Vec::new());
        v.user.in_flight = InFlight {
            total: 5,
            background: 4,
            remote: 2,
        };
        let Verdict::Wait(b) = decide(policy(&l), &v, "alice", Lane::Foreground, 1) else {
            panic!("over the cap")
        };
        assert!(b.remote && !b.app_blocked);
        assert!(matches!(
            b.reason(),
            WaitReason::ConcurrencyCap {
                in_flight: 5,
                cap: 5,
                ..
            }
        ));
    }

    #[test]
    fn status_and_the_plan_read_the_same_fill() {
        let ws = parse_windows("12/600ms,40/6s").unwrap();
        let r = rows(&[
            (100, Lane::Foreground),
            (200, Lane::Background),
            (5_000, Lane::Background),
        ]);
        let fills = scope_windows(&ws, BackgroundShare::Auto, Some(30), &r, 5_100, 0);
        let u = window_use(&fills[1], BackgroundShare::Auto);
        assert_eq!((u.foreground, u.background, u.background_limit), (1, 2, 38));
        let short = window_use(&fills[0], BackgroundShare::Auto);
        assert_eq!((short.foreground, short.background), (0, 1));
        let states = background_states(&ws, BackgroundShare::Auto, Some(30), &r, 5_100);
        assert_eq!(states[1].counted, vec![100, 200, 5_000]);
        assert_eq!(states[1].lane.usable, 38);
        let states = background_states(&ws, BackgroundShare::Fixed(0.5), Some(30), &r, 5_100);
        assert_eq!(states[1].counted, vec![200, 5_000]);
        assert_eq!(states[1].lane.usable, 20);
        assert_eq!(room_at(&ws, &r, 5_100), 5_100);
        // The short window is the fuller: 1 of 12 against 3 of 40.
        assert!((highest_use(&ws, &r, 5_100) - 1.0 / 12.0).abs() < 1e-9);
    }

    #[test]
    fn what_counts_against_backgrounds_part_depends_on_the_share() {
        let ws = parse_windows("4/6s").unwrap();
        // Foreground alone filled the window: background's part is used up only in `auto`.
        let r = rows(&[
            (100, Lane::Foreground),
            (200, Lane::Foreground),
            (300, Lane::Foreground),
        ]);
        let auto = scope_windows(&ws, BackgroundShare::Auto, None, &r, 400, 0);
        assert_eq!(
            window_use(&auto[0], BackgroundShare::Auto).background_used,
            3
        );
        let fixed = scope_windows(&ws, BackgroundShare::Fixed(0.5), None, &r, 400, 0);
        let u = window_use(&fixed[0], BackgroundShare::Fixed(0.5));
        assert_eq!((u.background_used, u.background_limit), (0, 2));
    }

    proptest! {
        /// The pure decision agrees with the sliding-window oracle the property tests use: a
        /// foreground request waits exactly until every window has room.
        #[test]
        fn a_foreground_wait_is_the_oracle_room_at(
            ats in proptest::collection::vec(0i64..6_000, 0..80),
            now in 6_000i64..7_000,
            slack in 0i64..10,
        ) {
            let l = limits(BackgroundShare::Auto);
            let r = rows(&ats.iter().map(|&a| (a, Lane::Foreground)).collect::<Vec<_>>());
            let v = view(now, r);
            let p = Policy { limits: &l, window_slack_ms: slack };
            let expect = l.user_windows.iter().map(|w| {
                room_of(&ats, now, w.count, w.length.as_millis() as i64 + slack)
            }).max().unwrap();
            match decide(p, &v, "alice", Lane::Foreground, 1) {
                Verdict::Grant { .. } => prop_assert_eq!(expect, now),
                Verdict::Wait(b) => prop_assert_eq!(b.timed.map(|t| t.0), Some(expect)),
            }
        }
    }
}
