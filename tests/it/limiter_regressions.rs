//! Regressions found in review of the Graph limiter (window slack vs pruning, slots freed late).

use std::sync::Arc;
use std::time::Duration;

use notebridge::clock::{Clock, Jitter};
use notebridge::limiter::{Lane, Limiter};
use notebridge::settings::{parse_windows, BackgroundShare, GraphLimits};
use notebridge::store::Db;

use crate::lock_support::{ticks_while_waiting, HeldWrite};

const T0: i64 = 1_700_000_000_000;

/// The window slack must hold for the longest window too: pruning at `now - longest` (without the
/// slack) deletes rows the slackened window still counts, so a request arriving during the slack
/// goes out early.
#[tokio::test(start_paused = true)]
async fn window_slack_survives_the_ledger_prune() {
    let dir = tempfile::tempdir().unwrap();
    let db = Arc::new(Db::open(&dir.path().join("state.db")).unwrap());
    let clock = Clock::anchored_at(T0);
    let limits = GraphLimits {
        user_windows: parse_windows("3/1s").unwrap(),
        user_concurrency: 5,
        app_windows: parse_windows("30/1s").unwrap(),
        app_concurrency: Some(20),
        background_share: BackgroundShare::Fixed(0.5),
    };
    let l = Limiter::open(db, limits, clock.clone(), Jitter::seeded(1))
        .unwrap()
        .with_window_slack(Duration::from_millis(5));
    for _ in 0..3 {
        let p = l.acquire("alice", Lane::Foreground).await.unwrap();
        assert_eq!(p.granted_at(), T0);
        p.succeeded(None);
    }
    // A request arriving exactly when the service's window slides, inside the slack.
    tokio::time::advance(Duration::from_millis(1000)).await;
    let p = l.acquire("alice", Lane::Foreground).await.unwrap();
    assert!(
        p.granted_at() >= T0 + 1005,
        "granted at +{} ms, inside the 5 ms slack",
        p.granted_at() - T0
    );
}

/// The release margin frees a slot from a spawned task; when the process's runtime ends first (a
/// command that exits right after its last request, as every CLI run does), the slot stays in the
/// shared ledger for a whole lease and the next process's background lane is held back by it.
#[test]
fn slots_freed_late_are_not_leaked_when_the_runtime_ends() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state.db");
    let limits = GraphLimits {
        user_windows: parse_windows("100/1s").unwrap(),
        user_concurrency: 4,
        app_windows: parse_windows("100/1s").unwrap(),
        app_concurrency: Some(20),
        background_share: BackgroundShare::Fixed(0.5),
    };
    // The first process: two background requests, answered, then it exits.
    {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            let db = Arc::new(Db::open(&path).unwrap());
            let l = Limiter::open(db, limits.clone(), Clock::system(), Jitter::seeded(1))
                .unwrap()
                .with_release_margin(Duration::from_millis(10));
            let a = l.acquire("alice", Lane::Background).await.unwrap();
            let b = l.acquire("alice", Lane::Background).await.unwrap();
            a.succeeded(None);
            b.succeeded(None);
        });
    }
    // The next process: its background lane (share 2 of 4) should be free at once.
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let db = Arc::new(Db::open(&path).unwrap());
        let clock = Clock::system();
        let l = Limiter::open(db, limits.clone(), clock.clone(), Jitter::seeded(2)).unwrap();
        let r = l
            .acquire_before("alice", Lane::Background, clock.now_ms() + 300)
            .await;
        assert!(
            r.is_ok(),
            "background lane still held by the exited process: {r:?}"
        );
    });
}

/// A grant transaction waits for the database while another process holds a write (up to the
/// busy timeout). It waits off the runtime: the one thread of a current-thread runtime goes on
/// running every other task meanwhile (a Graph answer read, a Notion request, a progress line).
#[tokio::test(flavor = "current_thread")]
async fn a_grant_waiting_on_a_locked_database_leaves_the_runtime_to_other_tasks() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state.db");
    let db = Arc::new(Db::open(&path).unwrap());
    let l = Limiter::open(
        db,
        GraphLimits::default(),
        Clock::system(),
        Jitter::seeded(1),
    )
    .unwrap();
    let held = HeldWrite::take(&path);
    let grant = {
        let l = l.clone();
        tokio::spawn(async move { l.acquire("alice", Lane::Foreground).await })
    };
    ticks_while_waiting(&grant, "granted").await;
    held.release();
    let p = grant.await.unwrap().unwrap();
    p.succeeded(None);
}

/// A scan's cost is written like a grant: off the runtime, so a database another process holds
/// leaves the one thread of a current-thread runtime to every other task.
#[tokio::test(flavor = "current_thread")]
async fn a_scan_cost_waiting_on_a_locked_database_leaves_the_runtime_to_other_tasks() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state.db");
    let db = Arc::new(Db::open(&path).unwrap());
    let l = Limiter::open(
        db,
        GraphLimits::default(),
        Clock::system(),
        Jitter::seeded(1),
    )
    .unwrap();
    let usable = |l: &Limiter| -> Vec<u32> {
        let (user, _) = l.background_budget("alice").unwrap();
        user.iter().map(|w| w.lane.usable).collect()
    };
    let before = usable(&l);
    let held = HeldWrite::take(&path);
    let recorded = {
        let l = l.clone();
        tokio::spawn(async move { l.record_scan_cost("alice", 1_000).await })
    };
    ticks_while_waiting(&recorded, "recorded").await;
    held.release();
    recorded.await.unwrap().unwrap();
    assert_ne!(usable(&l), before, "the reserve follows the recorded cost");
}
