//! Shared by the benches: the ideal schedule the Graph windows allow.

use std::collections::VecDeque;

use notebridge::settings::{GraphLimits, Window};

/// The earliest schedule the windows allow for `per_user[u]` requests of each user, zero latency:
/// the time of the last request after the first (ms).
pub fn ideal_makespan_ms(lim: &GraphLimits, per_user: &[usize]) -> i64 {
    let mut left = per_user.to_vec();
    let mut times: Vec<VecDeque<i64>> = vec![VecDeque::new(); per_user.len()];
    let mut all: VecDeque<i64> = VecDeque::new();
    let longest = |ws: &[Window]| {
        ws.iter()
            .map(|w| w.length.as_millis() as i64)
            .max()
            .unwrap_or(1)
    };
    let (lu, la) = (longest(&lim.user_windows), longest(&lim.app_windows));
    let room = |ts: &VecDeque<i64>, ws: &[Window], t: i64| {
        ws.iter().all(|w| {
            let len = w.length.as_millis() as i64;
            ts.iter().rev().take_while(|&&x| x > t - len).count() < w.count as usize
        })
    };
    let mut t = 0i64;
    let mut last = 0;
    while left.iter().any(|&n| n > 0) {
        let mut sent = false;
        for u in 0..per_user.len() {
            if left[u] > 0
                && room(&times[u], &lim.user_windows, t)
                && room(&all, &lim.app_windows, t)
            {
                times[u].push_back(t);
                all.push_back(t);
                left[u] -= 1;
                last = t;
                sent = true;
            }
        }
        if !sent {
            t += 1;
            for q in times.iter_mut() {
                while q.front().is_some_and(|&x| x <= t - lu) {
                    q.pop_front();
                }
            }
            while all.front().is_some_and(|&x| x <= t - la) {
                all.pop_front();
            }
        }
    }
    last
}
