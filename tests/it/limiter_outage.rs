//! An Application-scope outage during a migration, on tokio's paused clock: OneNote answers every
//! request 429 for 5 s, without `Retry-After`, with or without `x-ms-throttle-scope`. The shared
//! breaker must open at the first 429 and hold every account's workers until its probes find the
//! service again.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use notebridge::clock::{Clock, Jitter};
use notebridge::limiter::{Lane, Limiter, ThrottleScope};
use notebridge::settings::{parse_windows, BackgroundShare, GraphLimits};
use notebridge::store::Db;
use tokio::time::Instant;

const T0: i64 = 1_700_000_000_000;
const USERS: [&str; 2] = ["alice", "bob"];

/// The client's limits of the limiter bench: the documented proportions in short windows, no
/// app-wide windows (the default).
fn limits() -> GraphLimits {
    GraphLimits {
        user_windows: parse_windows("12/600ms,40/6s").unwrap(),
        user_concurrency: 5,
        app_windows: Vec::new(),
        app_concurrency: None,
        background_share: BackgroundShare::Auto,
    }
}

/// What the service saw: each request's arrival (since the run began), whether it was refused,
/// and when it was granted; and when the first refusal was answered.
#[derive(Default)]
struct Log {
    arrivals: Vec<(Duration, bool, Duration)>,
    first_refusal_answered: Option<Duration>,
}

/// 8 background workers per account send requests for `run`; the service refuses every request
/// from `from` for `length` (429, no `Retry-After`; `hint` the scope header it sends then).
async fn migrate_through_outage(
    hint: ThrottleScope,
    from: Duration,
    length: Duration,
    run: Duration,
) -> Log {
    let dir = tempfile::tempdir().unwrap();
    let db = Arc::new(Db::open(&dir.path().join("state.db")).unwrap());
    let clock = Clock::anchored_at(T0);
    let l = Limiter::open(db, limits(), clock, Jitter::seeded(7)).unwrap();
    let start = Instant::now();
    let log = Arc::new(Mutex::new(Log::default()));
    let mut tasks = Vec::new();
    for user in USERS {
        for _ in 0..8 {
            let (l, log) = (l.clone(), log.clone());
            tasks.push(tokio::spawn(async move {
                while start.elapsed() < run {
                    let p = l.acquire(user, Lane::Background).await.unwrap();
                    let granted = start.elapsed();
                    // on its way to the service
                    tokio::time::sleep(Duration::from_millis(10)).await;
                    let at = start.elapsed();
                    let refused = at >= from && at < from + length;
                    log.lock().unwrap().arrivals.push((at, refused, granted));
                    // a page's content takes a while to come back, a refusal does not; the two
                    // accounts' pages differ, so at the outage's start one account may have no
                    // request out while the other's first 429 comes back
                    let answer = if refused {
                        10
                    } else if user == "alice" {
                        80
                    } else {
                        35
                    };
                    tokio::time::sleep(Duration::from_millis(answer)).await;
                    if refused {
                        let now = start.elapsed();
                        log.lock()
                            .unwrap()
                            .first_refusal_answered
                            .get_or_insert(now);
                        p.throttled(hint, None);
                    } else {
                        p.succeeded(None);
                    }
                }
            }));
        }
    }
    for t in tasks {
        t.await.unwrap();
    }
    Arc::try_unwrap(log).ok().unwrap().into_inner().unwrap()
}

/// What the service saw of an outage starting `from` after the run began: how many requests were
/// sent before the first 429 came back, and when each later one arrived (after the outage began).
async fn outage_case(hint: ThrottleScope, from: Duration) -> (usize, Vec<Duration>) {
    let length = Duration::from_secs(5);
    let log = migrate_through_outage(hint, from, length, from + Duration::from_secs(9)).await;
    let first = log.first_refusal_answered.expect("the outage was met");
    let during: Vec<(Duration, bool, Duration)> = log
        .arrivals
        .iter()
        .filter(|(t, ..)| *t >= from && *t < from + length)
        .copied()
        .collect();
    // Sent before the first 429 came back: nothing could hold them. After it, only probes.
    let before = during.iter().filter(|a| a.2 < first).count();
    let after: Vec<Duration> = during
        .iter()
        .filter(|a| a.2 >= first)
        .map(|a| a.0 - from)
        .collect();
    assert!(before >= 1);
    assert!(
        after.len() <= 3,
        "{hint:?}: {before} sent before the first 429 came back, then {after:?}"
    );
    // every account waited on the breaker: nobody's request went between the probes
    for w in after.windows(2) {
        assert!(
            w[1] - w[0] >= Duration::from_millis(60),
            "{hint:?}: {after:?}"
        );
    }
    let resumed = log
        .arrivals
        .iter()
        .find(|(t, refused, _)| *t >= from + length && !refused)
        .map(|(t, ..)| *t - from - length)
        .expect("progress after the outage");
    // within the cooldown then in force: at most 1.25 x 0.06 s x 4^3 after the third probe
    assert!(
        resumed < Duration::from_millis(4_800),
        "{hint:?}: {resumed:?}"
    );
    (before, after)
}

/// Outage starts: the steady state, and two instants when one account has nothing in flight.
const STARTS_MS: [u64; 3] = [7_000, 7_333, 7_610];

#[tokio::test(start_paused = true)]
async fn an_application_outage_reaches_the_service_once_then_its_probes() {
    for ms in STARTS_MS {
        outage_case(ThrottleScope::Application, Duration::from_millis(ms)).await;
    }
}

#[tokio::test(start_paused = true)]
async fn without_the_scope_header_an_outage_of_every_account_stops_them_all_too() {
    for ms in STARTS_MS {
        let from = Duration::from_millis(ms);
        let unscoped = outage_case(ThrottleScope::Unknown, from).await;
        let scoped = outage_case(ThrottleScope::Application, from).await;
        // The first unscoped 429 while the other account sends holds both: the service sees the
        // same requests as when it names the scope (without the guess, 12 or 13 against 7).
        assert_eq!(
            (unscoped.0, unscoped.1.len()),
            (scoped.0, scoped.1.len()),
            "outage at {ms} ms: {unscoped:?} vs {scoped:?}"
        );
    }
}

#[tokio::test(start_paused = true)]
async fn a_breaker_left_half_open_long_ago_does_not_stop_every_account() {
    use notebridge::limiter::{BreakerState, BudgetHolder};
    let dir = tempfile::tempdir().unwrap();
    let db = Arc::new(Db::open(&dir.path().join("state.db")).unwrap());
    let clock = Clock::anchored_at(T0);
    let l = Limiter::open(db, limits(), clock.clone(), Jitter::seeded(7)).unwrap();
    let app_open = |l: &Limiter| {
        let snap = l.snapshot().unwrap();
        let app = snap.scopes.iter().find(|s| s.scope == BudgetHolder::App);
        !matches!(app.map(|s| &s.breaker), Some(BreakerState::Closed) | None)
    };
    // alice is throttled, then sends nothing more: her breaker stays half-open
    l.acquire("alice", Lane::Background)
        .await
        .unwrap()
        .throttled(ThrottleScope::Unknown, None);
    clock.sleep(Duration::from_secs(30)).await;
    l.acquire("bob", Lane::Background)
        .await
        .unwrap()
        .throttled(ThrottleScope::Unknown, None);
    assert!(!app_open(&l), "bob's 429 is his own");
    // while bob's breaker is open, carol's 429 without a scope is the app's
    l.acquire("carol", Lane::Background)
        .await
        .unwrap()
        .throttled(ThrottleScope::Unknown, None);
    assert!(app_open(&l), "two accounts at once: the app's budget");
}
