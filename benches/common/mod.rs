//! Shared by the benches: the ideal schedule the Graph windows allow, the figures' settings, and
//! the peak memory of a child process. Each bench uses only some of them.
#![allow(dead_code)]

use std::collections::VecDeque;
use std::time::Duration;

use notebridge::settings::{GraphLimits, Window};
use notebridge_testkit::graph::stats::LogEntry;

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

/// A bench setting from the environment, or its default.
pub fn env_num<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Whether the Graph test server counted `e` as a OneNote request: inner batch requests count, the
/// envelopes and `/me` (directory service) do not.
pub fn is_onenote_request(e: &LogEntry) -> bool {
    let p = e.path.split('?').next().unwrap_or_default();
    e.user.is_some() && !e.path.ends_with("/$batch") && p != "/v1.0/me" && p != "/me"
}

/// VmHWM of `pid` in kB, if the process is still there.
pub fn vm_hwm_kb(pid: u32) -> Option<u64> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    s.lines()
        .find(|l| l.starts_with("VmHWM:"))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

/// Waits for `pid` while polling its VmHWM; returns (exit status, last VmHWM kB, ru_maxrss kB).
pub fn wait_measuring(pid: u32) -> (i32, u64, u64) {
    let (code, hwm, usage) = wait_measuring_usage(pid);
    (code, hwm, usage.ru_maxrss as u64)
}

/// The CPU time (user and system) an rusage reports, seconds.
pub fn cpu_seconds(u: &libc::rusage) -> f64 {
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    tv(u.ru_utime) + tv(u.ru_stime)
}

/// [`wait_measuring`] with the whole rusage of the child (its CPU time, [`cpu_seconds`]).
pub fn wait_measuring_usage(pid: u32) -> (i32, u64, libc::rusage) {
    let mut hwm = 0;
    loop {
        if let Some(h) = vm_hwm_kb(pid) {
            hwm = hwm.max(h);
        }
        let mut status = 0;
        // SAFETY: plain wait4 on our own child with out-pointers to locals.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        let r = unsafe { libc::wait4(pid as i32, &mut status, libc::WNOHANG, &mut usage) };
        if r == pid as i32 {
            let code = if libc::WIFEXITED(status) {
                libc::WEXITSTATUS(status)
            } else {
                -1
            };
            return (code, hwm, usage);
        }
        assert!(r == 0, "wait4 failed: {}", std::io::Error::last_os_error());
        std::thread::sleep(Duration::from_millis(20));
    }
}
