//! The lanes with the default settings (`auto`, only the documented per-user limits) on tokio's
//! paused clock: background uses everything but a foreground reserve sized from the account's last
//! scan, yields while foreground work of any process waits or is in flight, and keeps a fixed share
//! only when one is set.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use notebridge::clock::{Clock, Jitter};
use notebridge::limiter::{
    BreakerState, BudgetHolder, Lane, Limiter, LimiterError, ThrottleScope, WaitReason,
};
use notebridge::settings::{
    parse_windows, BackgroundShare, DefaultDirs, FlagSettings, GraphLimits, Settings,
};
use notebridge::store::Db;

const T0: i64 = 1_700_000_000_000;

/// The defaults with short windows: per-user windows and cap only, `auto` lanes.
fn limits() -> GraphLimits {
    GraphLimits {
        user_windows: parse_windows("40/600ms,400/6s").unwrap(),
        ..GraphLimits::default()
    }
}

fn open(dir: &tempfile::TempDir, lim: GraphLimits, clock: &Clock) -> Limiter {
    let db = Arc::new(Db::open(&dir.path().join("state.db")).unwrap());
    Limiter::open(db, lim, clock.clone(), Jitter::seeded(1)).unwrap()
}

/// Acquires and completes `n` requests at once, returning their grant instants.
async fn burst(l: &Limiter, user: &str, lane: Lane, n: usize) -> Vec<i64> {
    let mut out = Vec::new();
    for _ in 0..n {
        let p = l.acquire(user, lane).await.unwrap();
        out.push(p.granted_at());
        p.succeeded(None);
    }
    out
}

fn reason(r: Result<notebridge::limiter::Permit, LimiterError>) -> WaitReason {
    match r {
        Err(LimiterError::WouldWait { reason, .. }) => reason,
        other => panic!("expected a wait, got {other:?}"),
    }
}

#[tokio::test(start_paused = true)]
async fn the_default_settings_apply_only_the_per_user_limits() {
    let dir = tempfile::tempdir().unwrap();
    let env = HashMap::from([(
        "NOTEBRIDGE_GRAPH_USER_LIMITS".to_string(),
        "12/600ms,40/6s".to_string(),
    )]);
    let dirs = DefaultDirs {
        db_file: Some(dir.path().join("state.db")),
        config_file: None,
    };
    let s = Settings::resolve(&FlagSettings::default(), &env, dirs).unwrap();
    assert_eq!(s.graph.background_share, BackgroundShare::Auto);
    let clock = Clock::anchored_at(T0);
    let l = open(&dir, s.graph, &clock);
    // Five accounts at their full windows at once: no app-wide window holds them to 24/600ms.
    let users = ["alice", "bob", "carol", "dave", "erin"];
    for user in users {
        let t = burst(&l, user, Lane::Foreground, 12).await;
        assert!(t.iter().all(|&t| t == T0), "{user}: {t:?}");
    }
    let snap = l.snapshot().unwrap();
    let app = snap
        .scopes
        .iter()
        .find(|s| s.scope == BudgetHolder::App)
        .unwrap();
    assert!(app.windows.is_empty());
    assert_eq!(app.concurrency, None);
    // Nor an app-wide cap: 5 accounts x 5 in flight, above the 20 documented for app-only calls.
    clock.sleep(Duration::from_millis(600)).await;
    let mut held = Vec::new();
    for user in users {
        for _ in 0..5 {
            held.push(l.acquire(user, Lane::Foreground).await.unwrap());
        }
    }
    assert_eq!(held.len(), 25);
    assert!(held.iter().all(|p| p.granted_at() == T0 + 600));
}

#[tokio::test(start_paused = true)]
async fn an_application_429_cools_every_account_without_app_limits() {
    let dir = tempfile::tempdir().unwrap();
    let clock = Clock::anchored_at(T0);
    let l = open(&dir, limits(), &clock);
    l.acquire("alice", Lane::Background)
        .await
        .unwrap()
        .throttled(ThrottleScope::Application, None);
    let snap = l.snapshot().unwrap();
    let app = snap
        .scopes
        .iter()
        .find(|s| s.scope == BudgetHolder::App)
        .unwrap();
    let BreakerState::Open { until, .. } = app.breaker else {
        panic!("{:?}", app.breaker)
    };
    // The app breaker cools down on the user windows' schedule (a tenth of the shortest).
    assert!((T0 + 60..=T0 + 75).contains(&until), "{}", until - T0);
    let bob = l.acquire("bob", Lane::Foreground).await.unwrap();
    assert_eq!(
        bob.granted_at(),
        until,
        "bob waits for the app's cooldown too"
    );
    assert!(bob.is_probe());
}

#[tokio::test(start_paused = true)]
async fn background_uses_all_but_the_floor_reserve_for_an_account_never_scanned() {
    let dir = tempfile::tempdir().unwrap();
    let clock = Clock::anchored_at(T0);
    let l = open(&dir, limits(), &clock);
    // Reserve floor: a twentieth of 40 = 2. Background takes the other 38 at once.
    let bg = burst(&l, "alice", Lane::Background, 39).await;
    assert!(bg[..38].iter().all(|&t| t == T0), "{bg:?}");
    assert_eq!(bg[38], T0 + 600, "the 39th waits for the window to slide");
    // The reserve is there for foreground work, at once.
    let fg = burst(&l, "alice", Lane::Foreground, 2).await;
    assert_eq!(fg, vec![T0 + 600; 2]);
    let snap = l.snapshot().unwrap();
    let alice = snap
        .scopes
        .iter()
        .find(|s| s.scope == BudgetHolder::User("alice".into()))
        .unwrap();
    assert_eq!(alice.windows[0].background_limit, 38);
    assert_eq!(alice.windows[1].background_limit, 380);
    assert_eq!(alice.background_concurrency, Some(4));
}

#[tokio::test(start_paused = true)]
async fn the_reserve_is_sized_from_what_the_last_scan_cost() {
    let dir = tempfile::tempdir().unwrap();
    let clock = Clock::anchored_at(T0);
    // The long window binds (its rate is half the short one's), so its reserve may be a twentieth
    // of it: 10, the scan's whole cost.
    let lim = GraphLimits {
        user_windows: parse_windows("40/600ms,200/6s").unwrap(),
        ..GraphLimits::default()
    };
    let l = open(&dir, lim, &clock);
    // A scan of 10 requests, metered.
    let meter = l.scan_meter("alice");
    burst(&l, "alice", Lane::Foreground, 10).await;
    burst(&l, "bob", Lane::Foreground, 3).await;
    assert_eq!(
        meter.finish().await.unwrap(),
        10,
        "only alice's foreground requests"
    );
    clock.sleep(Duration::from_millis(6_000)).await;
    let t1 = clock.now_ms();
    // A migration now leaves exactly the scan's 10 requests of every window to foreground work.
    let bg = burst(&l, "alice", Lane::Background, 31).await;
    assert!(bg[..30].iter().all(|&t| t == t1), "{bg:?}");
    assert_eq!(bg[30], t1 + 600);
    // The migration fills background's part of the window again...
    let t2 = t1 + 600;
    let bg = burst(&l, "alice", Lane::Background, 29).await;
    assert!(bg.iter().all(|&t| t == t2), "{bg:?}");
    let r = l.acquire_before("alice", Lane::Background, t2 + 50).await;
    assert!(
        matches!(
            reason(r),
            WaitReason::WindowFull {
                background_share: true,
                ..
            }
        ),
        "background's part is used up"
    );
    // ...and a rescan of the same size during it does not wait at all,
    clock.sleep(Duration::from_millis(10)).await;
    let t3 = clock.now_ms();
    let fg = burst(&l, "alice", Lane::Foreground, 10).await;
    assert!(fg.iter().all(|&t| t == t3), "{fg:?}");
    // while a bigger one pays only the window's own refill, never background work.
    let more = l.acquire("alice", Lane::Foreground).await.unwrap();
    assert_eq!(more.granted_at(), t2 + 600, "the oldest request slides out");
    let snap = l.snapshot().unwrap();
    let alice = snap
        .scopes
        .iter()
        .find(|s| s.scope == BudgetHolder::User("alice".into()))
        .unwrap();
    assert_eq!(alice.windows[0].background_limit, 30);
    assert_eq!(alice.windows[1].background_limit, 190);
}

/// The documented per-user counts (120/60s, 400/1h) in short windows.
fn documented() -> GraphLimits {
    GraphLimits {
        user_windows: parse_windows("120/600ms,400/6s").unwrap(),
        ..GraphLimits::default()
    }
}

/// Runs background work of `user` without pause as long as it can start by `until`; returns its
/// grant instants.
async fn saturate(l: &Limiter, user: &str, until: i64) -> Vec<i64> {
    let mut out = Vec::new();
    loop {
        match l.acquire_before(user, Lane::Background, until).await {
            Ok(p) => {
                out.push(p.granted_at());
                p.succeeded(None);
            }
            Err(LimiterError::WouldWait { .. }) => return out,
            Err(e) => panic!("{e}"),
        }
    }
}

#[tokio::test(start_paused = true)]
async fn a_saturating_migration_keeps_nineteen_twentieths_of_the_binding_window() {
    let dir = tempfile::tempdir().unwrap();
    let clock = Clock::anchored_at(T0);
    let l = open(&dir, documented(), &clock);
    // The 40-section notebook's scan: 41 requests, more than a twentieth of the 400/6s window.
    l.record_scan_cost("alice", 41).await.unwrap();
    let bg = saturate(&l, "alice", T0 + 60_000 - 1).await;
    // Ten long windows: 380 of each window's 400 (the reserve keeps 20; held for the whole scan of
    // 41 it would leave 359, 0.8975 of the budget).
    assert_eq!(bg.len(), 3_800, "{}", bg.len() as f64 / 4_000.0);
    // The minute-like window keeps the whole scan: background takes 79 of its 120 at a time.
    assert_eq!(bg.iter().filter(|&&t| t == T0).count(), 79);
    let snap = l.snapshot().unwrap();
    let alice = &snap.scopes[1];
    assert_eq!(alice.windows[0].background_limit, 79);
    assert_eq!(alice.windows[1].background_limit, 380);
}

#[tokio::test(start_paused = true)]
async fn a_scan_the_reserve_covers_waits_for_nothing_and_a_bigger_one_only_for_the_refill() {
    let dir = tempfile::tempdir().unwrap();
    let clock = Clock::anchored_at(T0);
    let l = open(&dir, documented(), &clock);
    l.record_scan_cost("alice", 41).await.unwrap();
    // A migration that has saturated background's part of the long window for a while: bursts at
    // 0, 0.6, 1.2, 1.8 and 2.4 s, again from 6 s, and nothing more until 12 s.
    let bg = saturate(&l, "alice", T0 + 9_000).await;
    assert_eq!(bg.len(), 760);
    clock.sleep(Duration::from_millis(600)).await;
    let now = clock.now_ms();
    assert_eq!(now, T0 + 9_000);
    // 20 of the scan's 41 at once: the long window's reserve.
    let fg = burst(&l, "alice", Lane::Foreground, 20).await;
    assert!(fg.iter().all(|&t| t == now), "{fg:?}");
    // The rest come as the long window refills: each when the oldest request still counted slides
    // out (here the background burst of 6 s before), never behind background work.
    let migration = tokio::spawn({
        let l = l.clone();
        async move { saturate(&l, "alice", T0 + 12_500).await }
    });
    let rest = burst(&l, "alice", Lane::Foreground, 21).await;
    let mut counted: Vec<i64> = bg.iter().chain(&fg).copied().collect();
    let mut expect = Vec::new();
    let mut at = now;
    for _ in 0..21 {
        at = at.max(notebridge::limiter::window::room_at(
            &counted, at, 400, 6_000,
        ));
        counted.push(at);
        expect.push(at);
    }
    assert_eq!(rest, expect);
    assert_eq!(rest, vec![T0 + 12_000; 21], "the refill at 12 s");
    migration.await.unwrap();
}

/// Runs background work of `user` with `workers` requests at a time, each answered after
/// `answer_ms`, as long as one can start by `until`; returns the grant instants.
async fn saturate_answering(
    l: &Limiter,
    user: &str,
    workers: usize,
    answer_ms: u64,
    until: i64,
) -> Vec<i64> {
    let tasks: Vec<_> = (0..workers)
        .map(|_| {
            let (l, user) = (l.clone(), user.to_owned());
            tokio::spawn(async move {
                let mut out = Vec::new();
                loop {
                    match l.acquire_before(&user, Lane::Background, until).await {
                        Ok(p) => {
                            out.push(p.granted_at());
                            tokio::time::sleep(Duration::from_millis(answer_ms)).await;
                            p.succeeded(None);
                        }
                        Err(LimiterError::WouldWait { .. }) => return out,
                        Err(e) => panic!("{e}"),
                    }
                }
            })
        })
        .collect();
    let mut all = Vec::new();
    for t in tasks {
        all.extend(t.await.unwrap());
    }
    all.sort_unstable();
    all
}

/// The most requests any `length_ms` span of `grants` (sorted) holds.
fn busiest(grants: &[i64], length_ms: i64) -> usize {
    (0..grants.len())
        .map(|i| grants[i..].partition_point(|&t| t < grants[i] + length_ms))
        .max()
        .unwrap_or(0)
}

#[tokio::test(start_paused = true)]
async fn with_slow_answers_the_short_windows_reserve_does_not_make_it_bind() {
    // The pipelined bench's windows: nominally 20/s and 16.7/s. A request counts from its
    // completion, so with 100 ms answers a place is held 700 ms in the short window (17.1/s) and
    // 6.1 s in the long one (16.4/s). The short window's reserve is sized at those rates: 1, not
    // the 2 that instant answers allow (10/0.7 s = 14.3/s would bind).
    let windows = parse_windows("12/600ms,100/6s").unwrap();
    let lim = GraphLimits {
        user_windows: windows.clone(),
        ..GraphLimits::default()
    };
    let dir = tempfile::tempdir().unwrap();
    let clock = Clock::anchored_at(T0);
    let l = open(&dir, lim, &clock);
    l.record_scan_cost("alice", 8).await.unwrap();
    let limits_now = |l: &Limiter| {
        let snap = l.snapshot().unwrap();
        let alice = snap
            .scopes
            .iter()
            .find(|s| s.scope == BudgetHolder::User("alice".into()))
            .map(|s| {
                s.windows
                    .iter()
                    .map(|w| w.background_limit)
                    .collect::<Vec<_>>()
            });
        alice.unwrap_or_default()
    };
    // Instant answers: the nominal rates.
    let bg = saturate_answering(&l, "alice", 4, 0, T0 + 599).await;
    assert_eq!(bg.len(), 10);
    assert_eq!(limits_now(&l), vec![10, 95]);
    clock.sleep(Duration::from_millis(6_000)).await;
    // 100 ms answers, ten long windows.
    let t1 = clock.now_ms();
    let bg = saturate_answering(&l, "alice", 4, 100, t1 + 61_000 - 1).await;
    assert_eq!(limits_now(&l), vec![11, 95]);
    // Background stays within its part of each window as the server counts (at the grant) ...
    assert!(busiest(&bg, 600) <= 11, "{}", busiest(&bg, 600));
    assert!(busiest(&bg, 6_000) <= 95, "{}", busiest(&bg, 6_000));
    // ... and the long window alone binds: each of its 95 places is held 6.1 s (a place frees
    // 6 s after the answer), so ten of those periods allow 950, and background got every one.
    assert_eq!(bg.len(), 10 * 95);
    // A reserve of 2 in the short window would have allowed at most 10 per 700 ms: 872.
    assert!(bg.len() > 10 * 61_000 / 700 + 1);
}

#[tokio::test(start_paused = true)]
async fn foreground_first_across_two_processes_on_one_database() {
    let dir = tempfile::tempdir().unwrap();
    let clock = Clock::anchored_at(T0);
    let cron = open(&dir, limits(), &clock); // the migration
    let term = open(&dir, limits(), &clock); // a scan in a terminal
    let scan = term.acquire("alice", Lane::Foreground).await.unwrap();
    // The windows and the cap have room, yet background takes nothing while the scan's request is
    // in flight in the other process.
    let r = cron
        .acquire_before("alice", Lane::Background, clock.now_ms() + 200)
        .await;
    assert_eq!(reason(r), WaitReason::ForegroundFirst);
    // Other accounts' budgets are their own: bob's migration goes on.
    let bob = cron.acquire("bob", Lane::Background).await.unwrap();
    assert_eq!(bob.granted_at(), clock.now_ms());
    bob.succeeded(None);
    let c = cron.clone();
    let bg = tokio::spawn(async move { c.acquire("alice", Lane::Background).await.unwrap() });
    clock.sleep(Duration::from_millis(100)).await;
    assert!(!bg.is_finished());
    let done_at = clock.now_ms();
    scan.succeeded(None);
    let bg = bg.await.unwrap();
    assert!(
        bg.granted_at() >= done_at,
        "background after the scan's request"
    );
    assert!(
        bg.granted_at() - done_at <= 20,
        "polls the other process soon"
    );
    // A waiting foreground request (here behind a full cap held by background) goes first too.
    let mut held = vec![bg];
    for _ in 0..3 {
        held.push(cron.acquire("alice", Lane::Background).await.unwrap());
    }
    // Background has its 4 of the cap; the 5th slot is the foreground reserve.
    let r = cron
        .acquire_before("alice", Lane::Background, clock.now_ms() + 50)
        .await;
    assert!(
        matches!(reason(r), WaitReason::ConcurrencyCap { cap: 4, .. }),
        "background keeps one slot free"
    );
    let fg = term.acquire("alice", Lane::Foreground).await.unwrap();
    assert_eq!(
        fg.granted_at(),
        clock.now_ms(),
        "the reserved slot, at once"
    );
    let t2 = term.clone();
    let fg2 = tokio::spawn(async move { t2.acquire("alice", Lane::Foreground).await.unwrap() });
    clock.sleep(Duration::from_millis(5)).await;
    let c = cron.clone();
    let bg2 = tokio::spawn(async move { c.acquire("alice", Lane::Background).await.unwrap() });
    clock.sleep(Duration::from_millis(5)).await;
    held.pop().unwrap().succeeded(None);
    let fg2 = fg2.await.unwrap();
    clock.sleep(Duration::from_millis(50)).await;
    assert!(
        !bg2.is_finished(),
        "the freed slot went to the waiting scan"
    );
    let fg2_at = fg2.granted_at();
    fg.succeeded(None);
    fg2.succeeded(None);
    let bg2 = bg2.await.unwrap();
    assert!(bg2.granted_at() > fg2_at);
}

#[tokio::test(start_paused = true)]
async fn a_fixed_share_caps_background_when_set() {
    let dir = tempfile::tempdir().unwrap();
    let clock = Clock::anchored_at(T0);
    let lim = GraphLimits {
        background_share: BackgroundShare::Fixed(0.5),
        ..limits()
    };
    let l = open(&dir, lim, &clock);
    let bg = burst(&l, "alice", Lane::Background, 21).await;
    assert!(bg[..20].iter().all(|&t| t == T0), "{bg:?}");
    assert_eq!(bg[20], T0 + 600, "half of 40, however idle foreground is");
    let mut held = Vec::new();
    for _ in 0..2 {
        held.push(l.acquire("bob", Lane::Background).await.unwrap());
    }
    let r = l
        .acquire_before("bob", Lane::Background, clock.now_ms() + 50)
        .await;
    assert!(matches!(
        reason(r),
        WaitReason::ConcurrencyCap { cap: 2, .. }
    ));
}

#[tokio::test(start_paused = true)]
async fn under_app_limits_an_account_waiting_on_its_own_breaker_does_not_hold_others_back() {
    let dir = tempfile::tempdir().unwrap();
    let clock = Clock::anchored_at(T0);
    let lim = GraphLimits {
        app_windows: parse_windows("80/600ms,800/6s").unwrap(),
        app_concurrency: Some(20),
        ..limits()
    };
    let l = open(&dir, lim, &clock);
    l.acquire("alice", Lane::Foreground)
        .await
        .unwrap()
        .throttled(ThrottleScope::User, None);
    // Alice's scan waits on her own breaker...
    let l2 = l.clone();
    let scan = tokio::spawn(async move { l2.acquire("alice", Lane::Foreground).await.unwrap() });
    clock.sleep(Duration::from_millis(1)).await;
    assert!(!scan.is_finished());
    // ...which is no reason for bob's migration to stop.
    let bob = l.acquire("bob", Lane::Background).await.unwrap();
    assert_eq!(bob.granted_at(), clock.now_ms());
    // A foreground request in flight does compete for the app's budget: background waits for it.
    let carol = l.acquire("carol", Lane::Foreground).await.unwrap();
    let r = l
        .acquire_before("bob", Lane::Background, clock.now_ms() + 50)
        .await;
    assert_eq!(reason(r), WaitReason::ForegroundFirst);
    carol.succeeded(None);
    bob.succeeded(None);
    scan.await.unwrap().succeeded(None);
}
