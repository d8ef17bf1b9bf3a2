//! Property tests of the limiter over random request streams, on tokio's paused clock.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

use notebridge::clock::{Clock, Jitter};
use notebridge::limiter::budget;
use notebridge::limiter::window::room_at;
use notebridge::limiter::{Lane, Limiter};
use notebridge::settings::{parse_windows, BackgroundShare, GraphLimits, Window};
use notebridge::store::Db;
use proptest::prelude::*;

const T0: i64 = 1_700_000_000_000;
const USERS: [&str; 3] = ["alice", "bob", "carol"];

fn limits() -> GraphLimits {
    GraphLimits {
        user_windows: parse_windows("12/600ms,40/6s").unwrap(),
        user_concurrency: 5,
        app_windows: parse_windows("24/600ms,80/6s").unwrap(),
        app_concurrency: Some(20),
        background_share: BackgroundShare::Fixed(0.5),
    }
}

fn run<F: std::future::Future<Output = ()>>(f: F) {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .start_paused(true)
        .build()
        .unwrap()
        .block_on(tokio::task::LocalSet::new().run_until(f));
}

#[derive(Clone, Debug)]
struct Op {
    user: usize,
    background: bool,
    start_ms: u64,
    hold_ms: u64,
    process: usize,
    outcome: u8,
}

fn op() -> impl Strategy<Value = Op> {
    (
        0..3usize,
        any::<bool>(),
        0..3_000u64,
        0..300u64,
        0..2usize,
        0..3u8,
    )
        .prop_map(
            |(user, background, start_ms, hold_ms, process, outcome)| Op {
                user,
                background,
                start_ms,
                hold_ms,
                process,
                outcome,
            },
        )
}

/// Checks that no span of a window's length holds more than `limit` of `times`.
fn assert_window(times: &[i64], w: &Window, limit: u32, what: &str) {
    let len = w.length.as_millis() as i64;
    for &g in times {
        let n = times.iter().filter(|&&t| t > g - len && t <= g).count();
        assert!(
            n <= limit as usize,
            "{what}: {n} grants in the {w} window ending at {}",
            g - T0
        );
    }
}

#[derive(Default)]
struct Seen {
    grants: Vec<(usize, bool, i64)>,
    in_flight: HashMap<(Option<usize>, bool), u32>,
}

impl Seen {
    fn enter(&mut self, user: usize, bg: bool, lim: &GraphLimits) {
        for key in [
            (Some(user), false),
            (Some(user), true),
            (None, false),
            (None, true),
        ] {
            if key.1 && !bg {
                continue;
            }
            let n = self.in_flight.entry(key).or_default();
            *n += 1;
            let cap = if key.0.is_some() {
                lim.user_concurrency
            } else {
                lim.app_concurrency.expect("the props run with an app cap")
            };
            let cap = if key.1 {
                budget::background_cap(cap, lim.background_share)
            } else {
                cap
            };
            assert!(*n <= cap, "in flight {n} > cap {cap} for {key:?}");
        }
    }
    fn leave(&mut self, user: usize, bg: bool) {
        for key in [
            (Some(user), false),
            (Some(user), true),
            (None, false),
            (None, true),
        ] {
            if key.1 && !bg {
                continue;
            }
            *self.in_flight.get_mut(&key).unwrap() -= 1;
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Random streams for three users, both lanes, two processes on one database: no window, lane
    /// share or cap is ever exceeded, counting every process's grants together.
    #[test]
    fn no_window_share_or_cap_is_ever_exceeded(ops in proptest::collection::vec(op(), 1..120)) {
        run(async move {
            let dir = tempfile::tempdir().unwrap();
            let clock = Clock::anchored_at(T0);
            let lims = limits();
            let procs: Vec<Limiter> = (0..2)
                .map(|i| {
                    let db = Arc::new(Db::open(&dir.path().join("s.db")).unwrap());
                    Limiter::open(db, lims.clone(), clock.clone(), Jitter::seeded(i)).unwrap()
                })
                .collect();
            let seen = Rc::new(RefCell::new(Seen::default()));
            let mut tasks = Vec::new();
            for o in ops {
                let (l, seen, clock, lims) = (procs[o.process].clone(), seen.clone(), clock.clone(), lims.clone());
                tasks.push(tokio::task::spawn_local(async move {
                    clock.sleep(Duration::from_millis(o.start_ms)).await;
                    let lane = if o.background { Lane::Background } else { Lane::Foreground };
                    let p = l.acquire(USERS[o.user], lane).await.unwrap();
                    {
                        let mut s = seen.borrow_mut();
                        s.grants.push((o.user, o.background, p.granted_at()));
                        s.enter(o.user, o.background, &lims);
                    }
                    clock.sleep(Duration::from_millis(o.hold_ms)).await;
                    seen.borrow_mut().leave(o.user, o.background);
                    match o.outcome {
                        0 => p.succeeded(None),
                        1 => p.failed(),
                        _ => drop(p),
                    }
                }));
            }
            for t in tasks {
                t.await.unwrap();
            }
            let s = seen.borrow();
            let share = lims.background_share;
            let all: Vec<i64> = s.grants.iter().map(|g| g.2).collect();
            let all_bg: Vec<i64> = s.grants.iter().filter(|g| g.1).map(|g| g.2).collect();
            for w in &lims.app_windows {
                assert_window(&all, w, w.count, "app");
                assert_window(&all_bg, w, budget::background_window(w.count, share, 0), "app background");
            }
            for (u, name) in USERS.iter().enumerate() {
                let mine: Vec<i64> = s.grants.iter().filter(|g| g.0 == u).map(|g| g.2).collect();
                let mine_bg: Vec<i64> = s.grants.iter().filter(|g| g.0 == u && g.1).map(|g| g.2).collect();
                for w in &lims.user_windows {
                    assert_window(&mine, w, w.count, name);
                    assert_window(&mine_bg, w, budget::background_window(w.count, share, 0), "user background");
                }
            }
        });
    }

    /// After any history, a new request starts exactly when the last of its blocking windows (user and
    /// app, short and long) has room: the max over layers, never earlier and never later.
    #[test]
    fn the_wait_is_the_max_over_every_window(
        history in proptest::collection::vec((0..2usize, 0..200u64), 1..90),
        who in 0..2usize,
    ) {
        run(async move {
            let dir = tempfile::tempdir().unwrap();
            let clock = Clock::anchored_at(T0);
            let lims = limits();
            let db = Arc::new(Db::open(&dir.path().join("s.db")).unwrap());
            let l = Limiter::open(db, lims.clone(), clock.clone(), Jitter::seeded(3)).unwrap();
            let mut counted: Vec<(usize, i64)> = Vec::new();
            for (u, gap) in history {
                clock.sleep(Duration::from_millis(gap)).await;
                let p = l.acquire(USERS[u], Lane::Foreground).await.unwrap();
                counted.push((u, p.granted_at()));
                p.succeeded(None);
            }
            let now = clock.now_ms();
            let mine: Vec<i64> = counted.iter().filter(|c| c.0 == who).map(|c| c.1).collect();
            let all: Vec<i64> = counted.iter().map(|c| c.1).collect();
            let mut expect = now;
            for w in &lims.user_windows {
                expect = expect.max(room_at(&mine, now, w.count, w.length.as_millis() as i64));
            }
            for w in &lims.app_windows {
                expect = expect.max(room_at(&all, now, w.count, w.length.as_millis() as i64));
            }
            let p = l.acquire(USERS[who], Lane::Foreground).await.unwrap();
            assert_eq!(p.granted_at() - T0, expect - T0);
        });
    }

    /// Background saturating both users' shares never delays a foreground stream that stays within
    /// the foreground's own share (here under 2 per 600 ms and 19 per 6 s; background takes half).
    #[test]
    fn foreground_within_its_share_never_waits_behind_background(
        gaps in proptest::collection::vec(320..600u64, 5..30),
        bg_hold in 0..40u64,
    ) {
        run(async move {
            let dir = tempfile::tempdir().unwrap();
            let clock = Clock::anchored_at(T0);
            let db = Arc::new(Db::open(&dir.path().join("s.db")).unwrap());
            let l = Limiter::open(db, limits(), clock.clone(), Jitter::seeded(5)).unwrap();
            let stop = T0 + gaps.iter().sum::<u64>() as i64 + 1_000;
            let mut bg = Vec::new();
            for w in 0..8 {
                let (l, clock) = (l.clone(), clock.clone());
                bg.push(tokio::task::spawn_local(async move {
                    while clock.now_ms() < stop {
                        let p = l.acquire(USERS[w % 2], Lane::Background).await.unwrap();
                        clock.sleep(Duration::from_millis(bg_hold)).await;
                        p.succeeded(None);
                    }
                }));
            }
            for gap in gaps {
                clock.sleep(Duration::from_millis(gap)).await;
                let asked = clock.now_ms();
                let p = l.acquire("alice", Lane::Foreground).await.unwrap();
                assert_eq!(p.granted_at(), asked, "foreground waited behind background");
                p.succeeded(None);
            }
            for t in bg {
                t.await.unwrap();
            }
        });
    }
}
