//! The limiter's behaviour on tokio's paused clock with short windows: exact instants, no real waiting.

use std::sync::Arc;
use std::time::Duration;

use notebridge::clock::{Clock, Jitter};
use notebridge::limiter::{
    BreakerState, BudgetHolder, Lane, Limiter, LimiterError, Permit, ThrottleScope, WaitReason,
};
use notebridge::settings::{parse_windows, BackgroundShare, GraphLimits};
use notebridge::store::Db;

const T0: i64 = 1_700_000_000_000;

fn limits() -> GraphLimits {
    GraphLimits {
        user_windows: parse_windows("12/600ms,40/6s").unwrap(),
        user_concurrency: 5,
        app_windows: parse_windows("24/600ms,80/6s").unwrap(),
        app_concurrency: Some(20),
        background_share: BackgroundShare::Fixed(0.5),
    }
}

fn open_db(dir: &tempfile::TempDir) -> Arc<Db> {
    Arc::new(Db::open(&dir.path().join("state.db")).unwrap())
}

fn limiter(db: Arc<Db>, clock: &Clock) -> Limiter {
    Limiter::open(db, limits(), clock.clone(), Jitter::seeded(1)).unwrap()
}

/// Acquires and immediately completes `n` requests, returning their grant instants.
async fn burst(l: &Limiter, user: &str, lane: Lane, n: usize) -> Vec<i64> {
    let mut out = Vec::new();
    for _ in 0..n {
        let p = l.acquire(user, lane).await.unwrap();
        out.push(p.granted_at());
        p.succeeded(None);
    }
    out
}

#[tokio::test(start_paused = true)]
async fn a_full_window_waits_exactly_until_it_slides() {
    let dir = tempfile::tempdir().unwrap();
    let clock = Clock::anchored_at(T0);
    let l = limiter(open_db(&dir), &clock);
    let times = burst(&l, "alice", Lane::Foreground, 12).await;
    assert!(times.iter().all(|&t| t == T0));
    let p = l.acquire("alice", Lane::Foreground).await.unwrap();
    assert_eq!(p.granted_at(), T0 + 600);
}

#[tokio::test(start_paused = true)]
async fn the_wait_is_the_max_over_layers_not_the_min() {
    let dir = tempfile::tempdir().unwrap();
    let clock = Clock::anchored_at(T0);
    let l = limiter(open_db(&dir), &clock);
    burst(&l, "bob", Lane::Foreground, 12).await;
    clock.sleep(Duration::from_millis(300)).await;
    burst(&l, "alice", Lane::Foreground, 12).await;
    // App 600 ms window full until T0+600 (bob's slide out); alice's own until T0+900.
    let l2 = l.clone();
    let alice = tokio::spawn(async move {
        l2.acquire("alice", Lane::Foreground)
            .await
            .unwrap()
            .granted_at()
    });
    let l3 = l.clone();
    let bob = tokio::spawn(async move {
        l3.acquire("bob", Lane::Foreground)
            .await
            .unwrap()
            .granted_at()
    });
    // Until both have decided (their grant transactions run off the runtime; yielding keeps the
    // paused clock where it is).
    while l.waits().len() < 2 {
        tokio::task::yield_now().await;
    }
    let snap = l.snapshot().unwrap();
    let alice_wait = snap.waits.iter().find(|w| w.user == "alice").unwrap();
    assert_eq!(alice_wait.until, T0 + 900);
    assert_eq!(
        alice_wait.reason,
        WaitReason::WindowFull {
            scope: BudgetHolder::User("alice".into()),
            window: "12/600ms".into(),
            background_share: false
        }
    );
    assert_eq!(
        snap.headline().unwrap(),
        "waiting 1 s: alice's 12/600ms window is full"
    );
    assert_eq!(bob.await.unwrap(), T0 + 600);
    assert_eq!(alice.await.unwrap(), T0 + 900);
}

#[tokio::test(start_paused = true)]
async fn the_long_window_holds_after_the_short_ones_allow() {
    let dir = tempfile::tempdir().unwrap();
    let clock = Clock::anchored_at(T0);
    let l = limiter(open_db(&dir), &clock);
    let times = burst(&l, "alice", Lane::Foreground, 40).await;
    // 12 per 600 ms: 12 at 0, 12 at 600, 12 at 1200, 4 at 1800.
    assert_eq!(times[39], T0 + 1800);
    let p = l.acquire("alice", Lane::Foreground).await.unwrap();
    assert_eq!(p.granted_at(), T0 + 6000, "the 40/6s window holds");
}

#[tokio::test(start_paused = true)]
async fn concurrency_cap_frees_on_release_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let clock = Clock::anchored_at(T0);
    let l = limiter(open_db(&dir), &clock);
    let mut held: Vec<Permit> = Vec::new();
    for _ in 0..5 {
        held.push(l.acquire("alice", Lane::Foreground).await.unwrap());
    }
    let l2 = l.clone();
    let sixth = tokio::spawn(async move {
        l2.acquire("alice", Lane::Foreground)
            .await
            .unwrap()
            .granted_at()
    });
    clock.sleep(Duration::from_millis(50)).await;
    assert!(!sixth.is_finished());
    let snap = l.snapshot().unwrap();
    assert!(matches!(
        snap.waits[0].reason,
        WaitReason::ConcurrencyCap {
            in_flight: 5,
            cap: 5,
            ..
        }
    ));
    held.pop().unwrap().succeeded(None);
    assert_eq!(sixth.await.unwrap(), T0 + 50);
    // Another user is not capped by alice.
    let p = l.acquire("bob", Lane::Foreground).await.unwrap();
    assert_eq!(p.granted_at(), T0 + 50);
}

#[tokio::test(start_paused = true)]
async fn background_gets_only_its_share() {
    let dir = tempfile::tempdir().unwrap();
    let clock = Clock::anchored_at(T0);
    let l = limiter(open_db(&dir), &clock);
    let times = burst(&l, "alice", Lane::Background, 7).await;
    assert_eq!(&times[..6], &[T0; 6]);
    assert_eq!(times[6], T0 + 600, "6 of 12 per 600 ms");
    // Foreground still has the rest of the window.
    let fg = burst(&l, "alice", Lane::Foreground, 6).await;
    assert!(fg.iter().all(|&t| t == T0 + 600));
    // Background cap: 2 of 5 in flight.
    let _a = l.acquire("bob", Lane::Background).await.unwrap();
    let _b = l.acquire("bob", Lane::Background).await.unwrap();
    let r = l
        .acquire_before("bob", Lane::Background, clock.now_ms() + 100)
        .await;
    assert!(
        matches!(
            r,
            Err(LimiterError::WouldWait {
                reason: WaitReason::ConcurrencyCap { cap: 2, .. },
                ..
            })
        ),
        "{r:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn acquire_before_reports_the_wait_instead_of_sleeping() {
    let dir = tempfile::tempdir().unwrap();
    let clock = Clock::anchored_at(T0);
    let l = limiter(open_db(&dir), &clock);
    burst(&l, "alice", Lane::Background, 6).await;
    match l.acquire_before("alice", Lane::Background, T0 + 599).await {
        Err(LimiterError::WouldWait { until, reason }) => {
            assert_eq!(until, T0 + 600);
            assert!(reason.to_string().contains("background share"), "{reason}");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(clock.now_ms(), T0, "it did not sleep");
    let p = l
        .acquire_before("alice", Lane::Background, T0 + 600)
        .await
        .unwrap();
    assert_eq!(p.granted_at(), T0 + 600);
}

#[tokio::test(start_paused = true)]
async fn a_user_429_slows_that_user_only() {
    let dir = tempfile::tempdir().unwrap();
    let clock = Clock::anchored_at(T0);
    let l = limiter(open_db(&dir), &clock);
    let p = l.acquire("alice", Lane::Foreground).await.unwrap();
    p.throttled(ThrottleScope::User, None);
    let bob = l.acquire("bob", Lane::Foreground).await.unwrap();
    assert_eq!(bob.granted_at(), T0, "bob is not delayed");
    let snap = l.snapshot().unwrap();
    let alice = snap
        .scopes
        .iter()
        .find(|s| s.scope == BudgetHolder::User("alice".into()))
        .unwrap();
    let BreakerState::Open { until, trips: 1 } = alice.breaker else {
        panic!("{:?}", alice.breaker)
    };
    // First cooldown: a tenth of the 600 ms window, jittered upward by at most a quarter.
    assert!((T0 + 60..=T0 + 75).contains(&until), "{until}");
    let a = l.acquire("alice", Lane::Foreground).await.unwrap();
    assert_eq!(a.granted_at(), until);
    assert!(a.is_probe());
    a.succeeded(None);
    let snap = l.snapshot().unwrap();
    assert!(snap
        .scopes
        .iter()
        .all(|s| s.breaker == BreakerState::Closed));
}

#[tokio::test(start_paused = true)]
async fn an_application_429_slows_everyone_and_retry_after_is_honoured() {
    let dir = tempfile::tempdir().unwrap();
    let clock = Clock::anchored_at(T0);
    let l = limiter(open_db(&dir), &clock);
    let p = l.acquire("alice", Lane::Foreground).await.unwrap();
    p.throttled(
        ThrottleScope::Application,
        Some(Duration::from_millis(2128)),
    );
    let b = l.acquire("bob", Lane::Foreground).await.unwrap();
    assert_eq!(b.granted_at(), T0 + 2128, "never less than Retry-After");
    // bob's request is the probe; alice waits for its answer, without a network call.
    let l2 = l.clone();
    let alice = tokio::spawn(async move {
        l2.acquire("alice", Lane::Foreground)
            .await
            .unwrap()
            .granted_at()
    });
    clock.sleep(Duration::from_millis(500)).await;
    assert!(!alice.is_finished(), "one probe at a time");
    b.succeeded(None);
    assert_eq!(alice.await.unwrap(), T0 + 2628);
}

fn open_scopes(l: &Limiter) -> Vec<BudgetHolder> {
    l.snapshot()
        .unwrap()
        .scopes
        .into_iter()
        .filter(|s| matches!(s.breaker, BreakerState::Open { .. }))
        .map(|s| s.scope)
        .collect()
}

#[tokio::test(start_paused = true)]
async fn an_unscoped_429_escalates_to_the_app_only_when_another_account_cools_down_too() {
    let dir = tempfile::tempdir().unwrap();
    let clock = Clock::anchored_at(T0);
    let l = limiter(open_db(&dir), &clock);
    let open = |l: &Limiter| -> Vec<BudgetHolder> {
        l.snapshot()
            .unwrap()
            .scopes
            .into_iter()
            .filter(|s| matches!(s.breaker, BreakerState::Open { .. }))
            .map(|s| s.scope)
            .collect()
    };
    l.acquire("alice", Lane::Foreground)
        .await
        .unwrap()
        .throttled(ThrottleScope::Unknown, None);
    // No scope: the caller's own budget is the likely one. Others go on at once.
    assert_eq!(open(&l), vec![BudgetHolder::User("alice".into())]);
    let bob = l.acquire("bob", Lane::Foreground).await.unwrap();
    assert_eq!(bob.granted_at(), T0);
    assert!(!bob.is_probe());
    // Bob throttled too while alice cools down: the app's budget binds, everyone cools down.
    bob.throttled(ThrottleScope::Unknown, None);
    assert_eq!(
        open(&l),
        vec![
            BudgetHolder::App,
            BudgetHolder::User("alice".into()),
            BudgetHolder::User("bob".into())
        ]
    );
    let carol = l.acquire("carol", Lane::Foreground).await.unwrap();
    assert!(carol.granted_at() >= T0 + 60, "{}", carol.granted_at() - T0);
    assert!(carol.is_probe(), "the app breaker's probe");
    carol.succeeded(None);
    // Once every cooldown is over and nobody else sends, a lone unscoped 429 is the caller's again.
    clock.sleep(Duration::from_millis(2_000)).await;
    let p = l.acquire("alice", Lane::Foreground).await.unwrap();
    p.succeeded(None);
    let p = l.acquire("bob", Lane::Foreground).await.unwrap();
    p.succeeded(None);
    clock.sleep(Duration::from_millis(600)).await;
    l.acquire("dave", Lane::Foreground)
        .await
        .unwrap()
        .throttled(ThrottleScope::Unknown, None);
    assert_eq!(open(&l), vec![BudgetHolder::User("dave".into())]);
}

/// bob has a request in flight (granted `lead` before) when alice's first 429 comes without a
/// scope: the app's breaker opens on alice's guess. Returns bob's request.
async fn alice_guesses_while_bob_sends(l: &Limiter, clock: &Clock, lead: Duration) -> Permit {
    let bob_in_flight = l.acquire("bob", Lane::Background).await.unwrap();
    clock.sleep(lead).await;
    l.acquire("alice", Lane::Background)
        .await
        .unwrap()
        .throttled(ThrottleScope::Unknown, None);
    bob_in_flight
}

#[tokio::test(start_paused = true)]
async fn an_unscoped_429_while_others_send_holds_them_all_until_another_accounts_probe_answers() {
    let dir = tempfile::tempdir().unwrap();
    let clock = Clock::anchored_at(T0);
    let l = limiter(open_db(&dir), &clock);
    let bob_in_flight = alice_guesses_while_bob_sends(&l, &clock, Duration::ZERO).await;
    assert_eq!(
        open_scopes(&l),
        vec![BudgetHolder::App, BudgetHolder::User("alice".into())],
        "a guess: the app's budget may be the one spent"
    );
    bob_in_flight.succeeded(None);
    // bob waits for the app's cooldown, then his request is its probe; alice may not probe the
    // app before one more cooldown, her guess is not hers to confirm
    let l2 = l.clone();
    let alice = tokio::spawn(async move {
        let p = l2.acquire("alice", Lane::Background).await.unwrap();
        (p.granted_at(), p)
    });
    let bob = l.acquire("bob", Lane::Background).await.unwrap();
    assert!(
        (T0 + 60..=T0 + 75).contains(&bob.granted_at()),
        "{}",
        bob.granted_at() - T0
    );
    assert!(bob.is_probe());
    clock.sleep(Duration::from_millis(20)).await;
    assert!(
        !alice.is_finished(),
        "bob's probe is out; alice's breaker waits for her own"
    );
    // bob's answer comes back: it was alice's budget alone; the app closes, alice probes her own
    bob.succeeded(None);
    let (at, alice) = alice.await.unwrap();
    assert!(alice.is_probe());
    assert!(at >= T0 + 60, "{}", at - T0);
    assert_eq!(open_scopes(&l), Vec::<BudgetHolder>::new());
    // alice's probe refused again, bob fine: hers alone, nobody else waits
    alice.throttled(ThrottleScope::Unknown, None);
    assert_eq!(open_scopes(&l), vec![BudgetHolder::User("alice".into())]);
    let b = l.acquire("bob", Lane::Background).await.unwrap();
    assert!(!b.is_probe());
    assert_eq!(b.granted_at(), clock.now_ms(), "bob goes on at once");
}

#[tokio::test(start_paused = true)]
async fn a_guessed_app_breaker_is_confirmed_by_a_second_account_refused() {
    let dir = tempfile::tempdir().unwrap();
    let clock = Clock::anchored_at(T0);
    let l = limiter(open_db(&dir), &clock);
    let bob_in_flight = alice_guesses_while_bob_sends(&l, &clock, Duration::from_millis(5)).await;
    // bob's request, sent before the guess, is refused too: the app's budget, for certain
    bob_in_flight.throttled(ThrottleScope::Unknown, None);
    assert_eq!(
        open_scopes(&l),
        vec![
            BudgetHolder::App,
            BudgetHolder::User("alice".into()),
            BudgetHolder::User("bob".into())
        ]
    );
    // confirmed: whoever comes first after the cooldowns is the probe, alice included
    let p = l.acquire("alice", Lane::Background).await.unwrap();
    assert!(p.is_probe());
    assert!(p.granted_at() - T0 <= 80, "{}", p.granted_at() - T0);
}

#[tokio::test(start_paused = true)]
async fn a_guess_left_to_others_that_nobody_takes_costs_the_guesser_one_cooldown() {
    let dir = tempfile::tempdir().unwrap();
    let clock = Clock::anchored_at(T0);
    let l = limiter(open_db(&dir), &clock);
    // bob's last request was just now, then he finished
    l.acquire("bob", Lane::Background)
        .await
        .unwrap()
        .succeeded(None);
    l.acquire("alice", Lane::Background)
        .await
        .unwrap()
        .throttled(ThrottleScope::Unknown, None);
    let p = l.acquire("alice", Lane::Background).await.unwrap();
    assert!(p.is_probe());
    let waited = p.granted_at() - T0;
    assert!(
        (120..=150).contains(&waited),
        "two cooldowns of 60 to 75 ms: {waited}"
    );
    p.succeeded(None);
    assert_eq!(open_scopes(&l), Vec::<BudgetHolder>::new());
}

#[tokio::test(start_paused = true)]
async fn a_failed_probe_lets_another_probe_and_a_second_429_quadruples_the_cooldown() {
    let dir = tempfile::tempdir().unwrap();
    let clock = Clock::anchored_at(T0);
    let l = limiter(open_db(&dir), &clock);
    l.acquire("alice", Lane::Foreground)
        .await
        .unwrap()
        .throttled(ThrottleScope::Unknown, None);
    let probe = l.acquire("alice", Lane::Foreground).await.unwrap();
    assert!(probe.is_probe());
    probe.failed();
    let probe2 = l.acquire("alice", Lane::Foreground).await.unwrap();
    assert!(probe2.is_probe());
    // A second 429 on the probe: longer cooldown.
    let t = clock.now_ms();
    probe2.throttled(ThrottleScope::Unknown, None);
    let next = l.acquire("alice", Lane::Foreground).await.unwrap();
    assert!(
        next.granted_at() - t >= 240,
        "four times the first 60 ms: {}",
        next.granted_at() - t
    );
}

#[tokio::test(start_paused = true)]
async fn many_waiters_behind_an_open_breaker_send_one_probe_per_cooldown() {
    let dir = tempfile::tempdir().unwrap();
    let clock = Clock::anchored_at(T0);
    let l = limiter(open_db(&dir), &clock);
    let outage_end = T0 + 5_000;
    let sent = Arc::new(std::sync::Mutex::new(Vec::<i64>::new()));
    l.acquire("alice", Lane::Background)
        .await
        .unwrap()
        .throttled(ThrottleScope::Unknown, None);
    let mut tasks = Vec::new();
    for _ in 0..200 {
        let (l, sent, clock) = (l.clone(), sent.clone(), clock.clone());
        tasks.push(tokio::spawn(async move {
            loop {
                let p = l.acquire("alice", Lane::Background).await.unwrap();
                let now = clock.now_ms();
                if now < outage_end {
                    sent.lock().unwrap().push(now);
                    clock.sleep(Duration::from_millis(5)).await;
                    p.throttled(ThrottleScope::Unknown, None);
                } else {
                    p.succeeded(None);
                    return;
                }
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    let sent = sent.lock().unwrap().clone();
    // Cooldowns 60, 240, 960, ... (capped at 6 s): at most 1 + log4(5000/60) probes, spaced apart.
    assert!(sent.len() <= 5, "{} probes: {sent:?}", sent.len());
    for w in sent.windows(2) {
        assert!(w[1] - w[0] >= 60, "{sent:?}");
    }
}

#[tokio::test(start_paused = true)]
async fn the_ledger_survives_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let clock = Clock::anchored_at(T0);
    {
        let l = limiter(open_db(&dir), &clock);
        burst(&l, "alice", Lane::Foreground, 11).await;
        l.acquire("alice", Lane::Foreground)
            .await
            .unwrap()
            .throttled(ThrottleScope::User, Some(Duration::from_secs(2)));
    }
    clock.sleep(Duration::from_millis(100)).await;
    let l = limiter(open_db(&dir), &Clock::anchored_at(clock.now_ms()));
    let snap = l.snapshot().unwrap();
    let alice = snap
        .scopes
        .iter()
        .find(|s| s.scope == BudgetHolder::User("alice".into()))
        .unwrap();
    assert_eq!(alice.windows[0].foreground, 12);
    assert!(matches!(alice.breaker, BreakerState::Open { until, trips: 1 } if until == T0 + 2000));
    // Bob: the app window has 12 of 24, so he goes at once.
    assert_eq!(
        l.acquire("bob", Lane::Foreground)
            .await
            .unwrap()
            .granted_at(),
        T0 + 100
    );
    let p = l.acquire("alice", Lane::Foreground).await.unwrap();
    assert_eq!(
        p.granted_at(),
        T0 + 2000,
        "the persisted breaker, not just the window (T0+600)"
    );
    assert!(p.is_probe());
}

#[tokio::test(start_paused = true)]
async fn a_killed_process_slots_expire_with_their_lease() {
    let dir = tempfile::tempdir().unwrap();
    let clock = Clock::anchored_at(T0);
    let db = open_db(&dir);
    let dead = limiter(db.clone(), &clock);
    for _ in 0..5 {
        std::mem::forget(dead.acquire("alice", Lane::Foreground).await.unwrap());
    }
    drop(dead);
    let l = limiter(open_db(&dir), &clock);
    let p = l.acquire("alice", Lane::Foreground).await.unwrap();
    // Lease = two shortest windows (1.2 s), but at least 1 s; re-checked by polling.
    assert!(
        (T0 + 1200..T0 + 1260).contains(&p.granted_at()),
        "{}",
        p.granted_at() - T0
    );
}

#[tokio::test(start_paused = true)]
async fn two_processes_share_the_budget_and_foreground_goes_first() {
    let dir = tempfile::tempdir().unwrap();
    let clock = Clock::anchored_at(T0);
    let cron = limiter(open_db(&dir), &clock);
    let term = limiter(open_db(&dir), &clock);
    let a = burst(&cron, "alice", Lane::Foreground, 8).await;
    let b = burst(&term, "alice", Lane::Foreground, 5).await;
    assert!(a.iter().all(|&t| t == T0));
    assert_eq!(&b[..4], &[T0; 4]);
    assert_eq!(b[4], T0 + 600, "the 13th waits for the shared window");
    // The cron process holds alice's whole cap; a terminal scan (foreground) waits for a slot, and so
    // does the cron's own background work. When the cron frees a slot its local waiter is woken at
    // once, yet the slot must go to the other process's foreground request.
    clock.sleep(Duration::from_millis(600)).await;
    let mut held: Vec<Permit> = Vec::new();
    for _ in 0..5 {
        held.push(cron.acquire("alice", Lane::Foreground).await.unwrap());
    }
    let t2 = term.clone();
    let fg = tokio::spawn(async move { t2.acquire("alice", Lane::Foreground).await.unwrap() });
    clock.sleep(Duration::from_millis(1)).await;
    let c2 = cron.clone();
    let bg = tokio::spawn(async move { c2.acquire("alice", Lane::Background).await.unwrap() });
    clock.sleep(Duration::from_millis(1)).await;
    held.pop().unwrap().succeeded(None);
    let fg = fg.await.unwrap();
    clock.sleep(Duration::from_millis(100)).await;
    assert!(
        !bg.is_finished(),
        "background took a slot before waiting foreground work"
    );
    assert_eq!(fg.lane(), Lane::Foreground);
    drop(held);
    let bg = bg.await.unwrap();
    assert!(bg.granted_at() > fg.granted_at());
}

#[tokio::test(start_paused = true)]
async fn soft_brake_paces_and_stops_at_the_limit() {
    let dir = tempfile::tempdir().unwrap();
    let clock = Clock::anchored_at(T0);
    let l = limiter(open_db(&dir), &clock);
    l.acquire("alice", Lane::Foreground)
        .await
        .unwrap()
        .succeeded(Some(0.85));
    // 15% of 12 = 1 left: paced at 600 ms.
    let p = l.acquire("alice", Lane::Foreground).await.unwrap();
    assert_eq!(p.granted_at(), T0 + 600);
    // Bob is not braked.
    assert_eq!(
        l.acquire("bob", Lane::Foreground)
            .await
            .unwrap()
            .granted_at(),
        T0 + 600
    );
    clock.sleep(Duration::from_millis(100)).await;
    p.succeeded(Some(1.2));
    // Stop until alice's oldest request in the window (T0+600, completed at 700) slides out.
    let q = l.acquire("alice", Lane::Foreground).await.unwrap();
    assert_eq!(q.granted_at(), T0 + 1300);
    q.succeeded(None);
    let snap = l.snapshot().unwrap();
    assert_eq!(
        snap.scopes
            .iter()
            .find(|s| s.scope == BudgetHolder::User("alice".into()))
            .unwrap()
            .brake,
        None
    );
    assert_eq!(
        l.acquire("alice", Lane::Foreground)
            .await
            .unwrap()
            .granted_at(),
        T0 + 1300
    );
}

#[tokio::test(start_paused = true)]
async fn acquire_up_to_grants_what_is_free() {
    let dir = tempfile::tempdir().unwrap();
    let clock = Clock::anchored_at(T0);
    let l = limiter(open_db(&dir), &clock);
    let v = l
        .acquire_up_to("alice", Lane::Foreground, 20)
        .await
        .unwrap();
    assert_eq!(v.len(), 5, "the user's concurrency cap");
    drop(v);
    let v = l
        .acquire_up_to("alice", Lane::Foreground, 20)
        .await
        .unwrap();
    assert_eq!(v.len(), 5);
    drop(v);
    let v = l
        .acquire_up_to("alice", Lane::Foreground, 20)
        .await
        .unwrap();
    assert_eq!(v.len(), 2, "12 per 600 ms");
    drop(v);
    let v = l
        .acquire_up_to("alice", Lane::Foreground, 20)
        .await
        .unwrap();
    assert_eq!(v[0].granted_at(), T0 + 600);
}

#[tokio::test(start_paused = true)]
async fn snapshot_serializes() {
    let dir = tempfile::tempdir().unwrap();
    let clock = Clock::anchored_at(T0);
    let l = limiter(open_db(&dir), &clock);
    let _p = l.acquire("alice", Lane::Background).await.unwrap();
    let v = serde_json::to_value(l.snapshot().unwrap()).unwrap();
    assert_eq!(v["scopes"][0]["scope"]["kind"], "app");
    assert_eq!(v["scopes"][1]["scope"]["user"], "alice");
    assert_eq!(v["scopes"][1]["windows"][0]["background"], 1);
    assert_eq!(v["scopes"][1]["windows"][0]["background_limit"], 6);
    assert_eq!(v["scopes"][1]["in_flight_background"], 1);
    assert_eq!(v["scopes"][1]["breaker"]["state"], "closed");
}

#[tokio::test(start_paused = true)]
async fn a_finished_request_keeps_its_slot_for_the_release_margin() {
    let dir = tempfile::tempdir().unwrap();
    let clock = Clock::anchored_at(T0);
    let lim = GraphLimits {
        user_concurrency: 1,
        ..limits()
    };
    let l = Limiter::open(open_db(&dir), lim, clock.clone(), Jitter::seeded(1))
        .unwrap()
        .with_release_margin(Duration::from_millis(10));
    let first = l.acquire("alice", Lane::Foreground).await.unwrap();
    first.succeeded(None);
    // The service may still count the first request in flight for a moment after its answer.
    let second = l.acquire("alice", Lane::Foreground).await.unwrap();
    assert!(
        second.granted_at() >= T0 + 10,
        "granted at +{}",
        second.granted_at() - T0
    );
    // A throttled answer frees its slot at once (nothing was left in flight on the service).
    second.throttled(ThrottleScope::User, None);
}

#[tokio::test(start_paused = true)]
async fn window_slack_holds_every_window_a_little_longer_than_the_service() {
    let dir = tempfile::tempdir().unwrap();
    let clock = Clock::anchored_at(T0);
    let l = Limiter::open(open_db(&dir), limits(), clock.clone(), Jitter::seeded(1))
        .unwrap()
        .with_window_slack(Duration::from_millis(5));
    burst(&l, "alice", Lane::Foreground, 12).await;
    let p = l.acquire("alice", Lane::Foreground).await.unwrap();
    assert_eq!(p.granted_at(), T0 + 605);
}

#[tokio::test(start_paused = true)]
async fn the_service_naming_the_app_scope_confirms_a_guess_whoever_it_answers() {
    let dir = tempfile::tempdir().unwrap();
    let clock = Clock::anchored_at(T0);
    let l = limiter(open_db(&dir), &clock);
    let alice_in_flight = l.acquire("alice", Lane::Background).await.unwrap();
    let bob_in_flight = alice_guesses_while_bob_sends(&l, &clock, Duration::from_millis(5)).await;
    // alice's earlier request comes back refused, its answer naming the app: no guess any more
    alice_in_flight.throttled(ThrottleScope::Application, None);
    bob_in_flight.succeeded(None);
    let p = l.acquire("alice", Lane::Background).await.unwrap();
    assert!(p.is_probe());
    assert!(p.granted_at() - T0 <= 80, "{}", p.granted_at() - T0);
}
