//! Sliding-window and cooldown arithmetic, pure: no clock, no database.
//!
//! A request counted at `t` occupies a window of length `L` during `[t, t + L)`. A window of `count`
//! has room at `now` when fewer than `count` of its requests satisfy `t > now - L`.

use std::time::Duration;

use crate::clock::UnixMillis;

/// The background lane's limit for a window or cap of `count`: `floor(count * share)`, at least 1.
pub fn lane_limit(count: u32, share: f64) -> u32 {
    ((count as f64 * share).floor() as u32).clamp(1, count.max(1))
}

/// How many of `times` lie in the window ending at `now` (`t > now - length`).
pub fn in_window(times: &[UnixMillis], now: UnixMillis, length_ms: i64) -> usize {
    times.iter().filter(|&&t| t > now - length_ms).count()
}

/// The earliest instant at or after `now` at which a window of `limit` over `length_ms` has room for
/// one more request, given the counted instants `times` (any order). `now` when it has room already.
pub fn room_at(times: &[UnixMillis], now: UnixMillis, limit: u32, length_ms: i64) -> UnixMillis {
    let mut live: Vec<UnixMillis> = times
        .iter()
        .copied()
        .filter(|&t| t > now - length_ms)
        .collect();
    if live.len() < limit as usize {
        return now;
    }
    live.sort_unstable();
    // The (n - limit)-th oldest must slide out; then exactly limit - 1 remain.
    live[live.len() - limit as usize] + length_ms
}

/// Settings of one circuit breaker's cooldown, derived from its scope's windows.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CooldownPolicy {
    /// The first cooldown before model and Retry-After are considered.
    pub base_ms: i64,
    /// No cooldown exceeds this (unless a Retry-After demands more).
    pub cap_ms: i64,
}

impl CooldownPolicy {
    /// Base = a tenth of the shortest window (6 s for Graph's minute window), cap = the longest window.
    pub fn for_windows(shortest_ms: i64, longest_ms: i64) -> Self {
        Self {
            base_ms: (shortest_ms / 10).max(1),
            cap_ms: longest_ms.max(shortest_ms / 10).max(1),
        }
    }

    /// The cooldown after the `trip`-th consecutive 429 (1-based): `base * 4^(trip-1)`, stretched by a
    /// jitter factor in `[1, 1.25)` (`jitter` in `[0, 1)`; only upward, so never below the schedule),
    /// capped; then never less than the model's own wait nor a given Retry-After. Four times, not
    /// twice: OneNote counts a refused request in its windows like any other, so each probe into a
    /// throttle that goes on prolongs it; quadrupling sends half as many into any outage (three in
    /// the 2.1 windows after the first 429 at the base of a tenth) for a resumption at most one cooldown late.
    pub fn cooldown_ms(
        &self,
        trip: u32,
        jitter: f64,
        model_wait_ms: i64,
        retry_after: Option<Duration>,
    ) -> i64 {
        let steps = trip.saturating_sub(1).min(40);
        let scheduled = (self.base_ms as f64) * 4f64.powi(steps as i32);
        let jittered = (scheduled * (1.0 + 0.25 * jitter.clamp(0.0, 1.0))).min(self.cap_ms as f64);
        let ra = retry_after.map(|d| d.as_millis() as i64).unwrap_or(0);
        (jittered.ceil() as i64).max(model_wait_ms).max(ra).max(1)
    }
}

/// The pacing gap for a user whose last success reported `percentage` (> 0.8, < 1.0) of a window of
/// `count` over `length_ms`: the remaining budget spread evenly over one window length.
pub fn brake_interval_ms(percentage: f64, count: u32, length_ms: i64) -> i64 {
    let remaining = ((1.0 - percentage) * count as f64).floor().max(1.0);
    (length_ms as f64 / remaining).ceil() as i64
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn lane_limits() {
        assert_eq!(lane_limit(120, 0.5), 60);
        assert_eq!(lane_limit(5, 0.5), 2);
        assert_eq!(lane_limit(1, 0.5), 1);
        assert_eq!(lane_limit(12, 0.01), 1);
        assert_eq!(lane_limit(12, 1.0), 12);
    }

    #[test]
    fn room_examples() {
        // 3 per 100 ms, requests at 0, 10, 20: room again at 100 (the one at 0 slides out).
        assert_eq!(room_at(&[0, 10, 20], 50, 3, 100), 100);
        assert_eq!(room_at(&[0, 10, 20], 100, 3, 100), 100);
        assert_eq!(room_at(&[0, 10], 50, 3, 100), 50);
        // Over-full (a service that counted more than we allowed): wait for enough to leave.
        assert_eq!(room_at(&[0, 10, 20, 30], 50, 2, 100), 120);
    }

    #[test]
    fn cooldown_grows_caps_and_respects_floors() {
        let p = CooldownPolicy::for_windows(60_000, 3_600_000);
        assert_eq!(p.cooldown_ms(1, 0.0, 0, None), 6_000);
        assert_eq!(p.cooldown_ms(2, 0.0, 0, None), 24_000);
        assert_eq!(p.cooldown_ms(3, 0.999, 0, None), 119_976);
        assert_eq!(p.cooldown_ms(30, 0.5, 0, None), 3_600_000);
        assert_eq!(p.cooldown_ms(1, 0.0, 41_000, None), 41_000);
        assert_eq!(
            p.cooldown_ms(1, 0.0, 0, Some(Duration::from_millis(7_128))),
            7_128
        );
        assert_eq!(
            p.cooldown_ms(30, 0.0, 0, Some(Duration::from_secs(7200))),
            7_200_000
        );
    }

    #[test]
    fn brake_pacing() {
        // 85% of 120/60s: 18 left, one every 3.34 s.
        assert_eq!(brake_interval_ms(0.85, 120, 60_000), 3_334);
        assert_eq!(brake_interval_ms(0.999, 120, 60_000), 60_000);
    }

    proptest! {
        #[test]
        fn room_at_is_the_earliest_instant_with_room(
            mut times in proptest::collection::vec(0i64..1_000, 0..40),
            now in 0i64..1_200,
            limit in 1u32..10,
            len in 1i64..500,
        ) {
            times.retain(|&t| t <= now);
            let r = room_at(&times, now, limit, len);
            prop_assert!(r >= now);
            prop_assert!(in_window(&times, r, len) < limit as usize);
            if r > now {
                prop_assert!(in_window(&times, r - 1, len) >= limit as usize);
            }
        }

        #[test]
        fn cooldown_is_monotone_in_trips_until_cap(
            trip in 1u32..20, j in 0.0f64..1.0, short in 10i64..100_000, mult in 1i64..100,
        ) {
            let p = CooldownPolicy::for_windows(short, short * mult);
            let a = p.cooldown_ms(trip, 0.0, 0, None);
            let b = p.cooldown_ms(trip + 1, 0.0, 0, None);
            prop_assert!(b >= a);
            prop_assert!(b <= p.cap_ms.max(1));
            prop_assert!(p.cooldown_ms(trip, j, 0, None) >= a);
        }
    }
}
