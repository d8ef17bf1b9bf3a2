//! The budget model, pure: what each lane may use of a window or cap, and how long a number of
//! requests takes at those limits. The limiter grants by it, `status` shows it, and `migrate`'s plan
//! and progress ETA are computed from it, so the three never disagree.

use std::collections::VecDeque;
use std::time::Duration;

use crate::clock::UnixMillis;
use crate::settings::{BackgroundShare, Window};

use super::window::lane_limit;

/// The foreground reserve of a window of `count` requests when the account was never scanned: a
/// twentieth of the window (20 of 400/1h, 6 of 120/60s).
pub fn reserve_floor(count: u32) -> u32 {
    count.div_ceil(20)
}

/// The foreground reserve of a window of `count` in `auto` mode: what the account's last scan cost
/// (`scan_cost`, requests) or the floor for an account never scanned; at least one request, and
/// never more than half the window, so background work always keeps the larger part. A window of
/// one request has no reserve (background could never run otherwise).
pub fn reserve(count: u32, scan_cost: Option<u32>) -> u32 {
    if count <= 1 {
        return 0;
    }
    scan_cost
        .unwrap_or_else(|| reserve_floor(count))
        .clamp(1, count / 2)
}

/// The most a reserve may cost background, as a share of the scope's full rate: a twentieth.
const RESERVE_RATE_SHARE: (u64, u64) = (1, 20);

/// The foreground reserves of a scope's `windows` in `auto` mode: each window's [`reserve`], but
/// never more than leaves background 19/20 of the scope's full rate (the rate of its binding
/// window, the one with the fewest requests per hour). Reserved slots are idle whenever no scan
/// runs, so in the window that binds a long migration a reserve of R costs R of every window's
/// count for the whole run; the other windows refill faster than background can use them, so
/// there a reserve of the whole scan costs nothing in the long run. A scan bigger than the capped
/// reserve pays the binding window's refill for the rest (it never waits behind background work).
///
/// Rates are those the limiter really gets: a request counts from its completion, so it holds its
/// place for the window's length plus `answer_ms` (how long answers take). With windows of nearly
/// the same nominal rate that decides which one binds: at 100 ms answers `12/600ms` holds each
/// place 700 ms (17/s) against `100/6s`'s 16.4/s, and a reserve of 2 there (10/0.7 s = 14/s) would
/// make the short window bind.
pub fn reserves(windows: &[Window], scan_cost: Option<u32>, answer_ms: i64) -> Vec<u32> {
    // How long a place in the window is held, ms.
    let ms = |w: &Window| w.length.as_millis() as u64 + answer_ms.max(0) as u64;
    let ms = |w: &Window| ms(w).max(1);
    // The binding window: the lowest count per length (compared without division).
    let binding = windows
        .iter()
        .min_by(|a, b| (a.count as u64 * ms(b)).cmp(&(b.count as u64 * ms(a))));
    windows
        .iter()
        .map(|w| {
            let r = reserve(w.count, scan_cost);
            let Some(b) = binding else { return r };
            let (num, den) = RESERVE_RATE_SHARE;
            // What background must keep of this window to run at (1 - share) of the binding rate.
            let keep = ((den - num) as u128 * b.count as u128 * ms(w) as u128)
                .div_ceil(den as u128 * ms(b) as u128);
            let cap = (w.count as u128).saturating_sub(keep).min(u32::MAX as u128) as u32;
            // At least one request stays reserved (as `reserve` promises) unless the window holds one.
            r.min(cap.max(u32::from(r > 0)))
        })
        .collect()
}

/// What the background lane may use of each of a scope's `windows`: all but the [`reserves`] in
/// `auto` (answers taking `answer_ms`), a fixed share otherwise.
pub fn background_windows(
    windows: &[Window],
    share: BackgroundShare,
    scan_cost: Option<u32>,
    answer_ms: i64,
) -> Vec<u32> {
    windows
        .iter()
        .zip(reserves(windows, scan_cost, answer_ms))
        .map(|(w, r)| background_window(w.count, share, r))
        .collect()
}

/// The foreground reserve of a concurrency cap in `auto` mode: one slot (none for a cap of 1).
pub fn cap_reserve(cap: u32) -> u32 {
    u32::from(cap > 1)
}

/// What the background lane may use of a window of `count`, given the foreground reserve.
pub fn background_window(count: u32, share: BackgroundShare, reserve: u32) -> u32 {
    match share {
        BackgroundShare::Auto => count.saturating_sub(reserve).max(1),
        BackgroundShare::Fixed(s) => lane_limit(count, s),
    }
}

/// What the background lane may use of a concurrency cap.
pub fn background_cap(cap: u32, share: BackgroundShare) -> u32 {
    match share {
        BackgroundShare::Auto => cap.saturating_sub(cap_reserve(cap)).max(1),
        BackgroundShare::Fixed(s) => lane_limit(cap, s),
    }
}

/// One window as one lane may use it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LaneWindow {
    /// The window.
    pub window: Window,
    /// How many of its requests the lane may use.
    pub usable: u32,
}

impl LaneWindow {
    /// The lane's steady rate through this window, requests per hour.
    pub fn per_hour(&self) -> f64 {
        self.usable as f64 * 3_600_000.0 / self.window.length.as_millis().max(1) as f64
    }
}

/// One window as one lane may use it, with the instants of the requests it counts now.
#[derive(Clone, Debug, PartialEq)]
pub struct WindowState {
    /// The window and the lane's part of it.
    pub lane: LaneWindow,
    /// When each request it counts now was counted (unix ms, any order).
    pub counted: Vec<UnixMillis>,
}

/// The earliest instant at which the last of `requests` more can start through one window of
/// `usable` per `length_ms`, sending each as soon as the window has room, given the instants it
/// counts now: the exact sliding-window schedule (each new request waits for the one `usable`
/// places before it to slide out).
pub fn last_start(
    now: UnixMillis,
    requests: u64,
    usable: u32,
    length_ms: i64,
    counted: &[UnixMillis],
) -> UnixMillis {
    let usable = usable.max(1) as usize;
    let mut live: Vec<UnixMillis> = counted
        .iter()
        .copied()
        .filter(|&t| t > now - length_ms)
        .collect();
    live.sort_unstable();
    let mut ring: VecDeque<UnixMillis> = live.into_iter().collect();
    let mut last = now;
    for _ in 0..requests {
        let at = if ring.len() < usable {
            now
        } else {
            // The one `usable` places back must slide out (over-full: enough to leave room).
            let mut freed = ring.pop_front().expect("non-empty");
            while ring.len() >= usable {
                freed = ring.pop_front().expect("non-empty");
            }
            (freed + length_ms).max(now)
        };
        ring.push_back(at);
        last = at;
    }
    last
}

/// How long until the last of `requests` can start through every window (the slowest decides),
/// from `now` and what the windows count now. Zero for no requests or no windows.
pub fn time_for(now: UnixMillis, requests: u64, windows: &[WindowState]) -> Duration {
    windows
        .iter()
        .map(|w| {
            let len = w.lane.window.length.as_millis() as i64;
            last_start(now, requests, w.lane.usable, len, &w.counted) - now
        })
        .max()
        .map(|ms| Duration::from_millis(ms.max(0) as u64))
        .unwrap_or(Duration::ZERO)
}

/// [`time_for`] with every window empty.
pub fn earliest(requests: u64, windows: &[LaneWindow]) -> Duration {
    let ws: Vec<WindowState> = windows
        .iter()
        .map(|w| WindowState {
            lane: *w,
            counted: Vec::new(),
        })
        .collect();
    time_for(0, requests, &ws)
}

/// The window that decides [`earliest`] (the one with the lowest hourly rate), if any.
pub fn binding(windows: &[LaneWindow]) -> Option<LaneWindow> {
    windows
        .iter()
        .copied()
        .min_by(|a, b| a.per_hour().total_cmp(&b.per_hour()))
}

/// "about 8 h 20 min", "about 4 min", "under a minute".
pub fn human(d: Duration) -> String {
    let s = d.as_secs();
    if s < 60 {
        return "under a minute".into();
    }
    let (h, m) = (s / 3600, (s % 3600).div_ceil(60));
    let (h, m) = if m == 60 { (h + 1, 0) } else { (h, m) };
    match (h, m) {
        (0, m) => format!("about {m} min"),
        (h, 0) => format!("about {h} h"),
        (h, m) => format!("about {h} h {m} min"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::settings::parse_windows;

    #[test]
    fn reserves_follow_the_last_scan_within_bounds() {
        assert_eq!(reserve(400, None), 20);
        assert_eq!(reserve(120, None), 6);
        assert_eq!(reserve(400, Some(35)), 35);
        assert_eq!(reserve(400, Some(0)), 1);
        assert_eq!(reserve(400, Some(5_000)), 200);
        assert_eq!(reserve(1, Some(10)), 0);
        assert_eq!(cap_reserve(5), 1);
        assert_eq!(cap_reserve(1), 0);
    }

    #[test]
    fn a_reserve_never_costs_more_than_a_twentieth_of_the_binding_rate() {
        let ws = parse_windows("120/60s,400/1h").unwrap();
        // The scan of the 40-section notebook: all of it in the minute window (which refills 18
        // times an hour), a twentieth of the hour window that binds a migration.
        assert_eq!(reserves(&ws, Some(41), 0), vec![41, 20]);
        assert_eq!(reserves(&ws, Some(12), 0), vec![12, 12]);
        assert_eq!(reserves(&ws, None, 0), vec![6, 20]);
        assert_eq!(reserves(&ws, Some(0), 0), vec![1, 1]);
        assert_eq!(
            background_windows(&ws, BackgroundShare::Auto, Some(41), 0),
            vec![79, 380]
        );
        assert_eq!(
            background_windows(&ws, BackgroundShare::Fixed(0.5), Some(41), 0),
            vec![60, 200]
        );
        // Windows of equal rate both bind; a window of one has no reserve; at least one otherwise.
        let eq = parse_windows("40/600ms,400/6s").unwrap();
        assert_eq!(reserves(&eq, Some(10), 0), vec![2, 10]);
        assert_eq!(
            reserves(&parse_windows("1/1s").unwrap(), Some(5), 0),
            vec![0]
        );
        assert_eq!(
            reserves(&parse_windows("12/1s").unwrap(), Some(5), 0),
            vec![1]
        );
        assert!(reserves(&[], Some(5), 0).is_empty());
    }

    #[test]
    fn a_reserve_is_judged_at_the_rate_a_window_allows_with_its_answer_time() {
        // Nominally 20/s against 16.7/s: a reserve of 2 in the short window leaves background
        // 10/600ms (16.7/s), 0.95 of the binding rate when answers are instant.
        let ws = parse_windows("12/600ms,100/6s").unwrap();
        assert_eq!(reserves(&ws, Some(8), 0), vec![2, 5]);
        // Answers of 100 ms hold each place 700 ms and 6.1 s: 17.1/s against 16.4/s. A reserve of
        // 2 would leave background 14.3/s in the short window (it would bind); 1 leaves it
        // 15.7/s, above the long window's 95/6.1 s = 15.6/s.
        assert_eq!(reserves(&ws, Some(8), 100), vec![1, 5]);
        assert_eq!(
            background_windows(&ws, BackgroundShare::Auto, Some(8), 100),
            vec![11, 95]
        );
        // At the documented limits answers change nothing: the minute window refills 18 times
        // faster than the hour window and keeps the whole scan.
        let real = parse_windows("120/60s,400/1h").unwrap();
        assert_eq!(reserves(&real, Some(41), 2_000), vec![41, 20]);
        // Answers of 2 s make the short window the binding one (12/2.6 s): it keeps only the one
        // request a reserve holds at least, and the long window (100/8 s) the whole scan.
        assert_eq!(reserves(&ws, Some(8), 2_000), vec![1, 8]);
    }

    proptest::proptest! {
        #[test]
        fn background_keeps_nineteen_twentieths_of_the_binding_rate(
            counts in proptest::collection::vec(2u32..2_000, 1..4),
            lens in proptest::collection::vec(1u64..100_000, 4),
            cost in proptest::option::of(0u32..5_000),
            answer in proptest::prop_oneof![proptest::strategy::Just(0i64), 0i64..5_000],
        ) {
            let ws: Vec<Window> = counts.iter().zip(&lens).map(|(&count, &ms)| Window {
                count,
                length: Duration::from_millis(ms),
            }).collect();
            // The rate a window really allows: each place is held for its length plus an answer.
            let rate = |w: &Window, n: u32| n as f64 / (w.length.as_millis() as f64 + answer as f64);
            let full = ws.iter().map(|w| rate(w, w.count)).fold(f64::INFINITY, f64::min);
            let rs = reserves(&ws, cost, answer);
            for (w, r) in ws.iter().zip(&rs) {
                proptest::prop_assert!(*r <= reserve(w.count, cost));
                proptest::prop_assert!(*r >= 1);
                let bg = rate(w, w.count - r);
                proptest::prop_assert!(*r == 1 || bg >= 0.95 * full - 1e-9, "{w}: {r}");
            }
        }
    }

    #[test]
    fn lanes_split_windows_and_caps() {
        assert_eq!(background_window(400, BackgroundShare::Auto, 20), 380);
        assert_eq!(background_window(400, BackgroundShare::Fixed(0.5), 20), 200);
        assert_eq!(background_window(1, BackgroundShare::Auto, 0), 1);
        assert_eq!(background_cap(5, BackgroundShare::Auto), 4);
        assert_eq!(background_cap(5, BackgroundShare::Fixed(0.5)), 2);
        assert_eq!(background_cap(1, BackgroundShare::Auto), 1);
    }

    #[test]
    fn earliest_is_set_by_the_slowest_window() {
        let ws: Vec<LaneWindow> = parse_windows("114/60s,380/1h")
            .unwrap()
            .into_iter()
            .map(|w| LaneWindow {
                window: w,
                usable: w.count,
            })
            .collect();
        // 3,300 requests at 380/h: the 9th batch of 380 starts after 8 hours.
        assert_eq!(earliest(3_300, &ws), Duration::from_secs(8 * 3600));
        assert_eq!(earliest(380, &ws), Duration::from_secs(3 * 60));
        assert_eq!(earliest(1, &ws), Duration::ZERO);
        assert_eq!(earliest(0, &ws), Duration::ZERO);
        assert_eq!(binding(&ws).unwrap().usable, 380);
        assert_eq!(
            human(Duration::from_secs(8 * 3600 + 20 * 60)),
            "about 8 h 20 min"
        );
        assert_eq!(human(Duration::from_secs(3599)), "about 1 h");
        assert_eq!(human(Duration::from_secs(30)), "under a minute");
    }

    #[test]
    fn the_schedule_counts_what_the_window_holds_now() {
        // 3 per 100 ms holding requests at 0 and 50, now 60: one more now, then at 100, 150, 200.
        assert_eq!(last_start(60, 1, 3, 100, &[0, 50]), 60);
        assert_eq!(last_start(60, 2, 3, 100, &[0, 50]), 100);
        assert_eq!(last_start(60, 4, 3, 100, &[0, 50]), 160);
        // Rows that slid out do not count; an over-full window waits for enough to leave.
        assert_eq!(last_start(200, 3, 3, 100, &[0, 50]), 200);
        assert_eq!(last_start(60, 1, 1, 100, &[10, 20, 50]), 150);
        let w = WindowState {
            lane: LaneWindow {
                window: parse_windows("3/100ms").unwrap()[0],
                usable: 3,
            },
            counted: vec![0, 50],
        };
        assert_eq!(time_for(60, 4, &[w]), Duration::from_millis(100));
        assert_eq!(time_for(60, 4, &[]), Duration::ZERO);
    }

    proptest::proptest! {
        #[test]
        fn the_schedule_never_overfills_a_window(
            counted in proptest::collection::vec(0i64..1_000, 0..20),
            requests in 1u64..60,
            usable in 1u32..8,
            len in 1i64..400,
        ) {
            let now = 1_000;
            let mut times: Vec<i64> = counted.iter().copied().filter(|&t| t > now - len).collect();
            times.truncate(usable as usize);
            let mut all = times.clone();
            let mut t = now;
            for _ in 0..requests {
                let next = last_start(now, 1, usable, len, &all).max(t);
                all.push(next);
                t = next;
            }
            proptest::prop_assert_eq!(t, last_start(now, requests, usable, len, &times));
            for &x in &all {
                let n = all.iter().filter(|&&y| y > x - len && y <= x).count();
                proptest::prop_assert!(n <= usable as usize);
            }
        }
    }
}
