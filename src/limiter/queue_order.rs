//! The limiter's calls in the state database's queue: a foreground grant goes ahead of a
//! migration's queued outcomes, a 429's outcome stays ahead of every later grant.

use std::sync::Arc;

use super::{Lane, Limiter, ThrottleScope};
use crate::clock::{Clock, Jitter};
use crate::settings::{parse_windows, GraphLimits};
use crate::store::{Db, Priority};

const T0: i64 = 1_700_000_000_000;

fn open(dir: &tempfile::TempDir) -> (Arc<Db>, Limiter) {
    let db = Arc::new(Db::open(&dir.path().join("state.db")).unwrap());
    let limits = GraphLimits {
        user_windows: parse_windows("40/600ms,400/6s").unwrap(),
        user_concurrency: 8,
        ..GraphLimits::default()
    };
    let l = Limiter::open(
        db.clone(),
        limits,
        Clock::anchored_at(T0),
        Jitter::seeded(1),
    )
    .unwrap();
    (db, l)
}

/// Foreground rows in the ledger, read on the drainer (where a queued call runs).
fn foreground_rows(db: &Db) -> i64 {
    db.read("count", |c| {
        c.query_row(
            "SELECT count(*) FROM limiter_ledger WHERE lane = ?1",
            [Lane::Foreground.code()],
            |r| r.get(0),
        )
    })
    .unwrap()
}

/// Holds the queue's drainer in a call until the returned sender is used.
fn hold(db: &Arc<Db>) -> std::sync::mpsc::Sender<()> {
    let (go, wait) = std::sync::mpsc::channel::<()>();
    db.submit(move |_| wait.recv().unwrap());
    go
}

#[tokio::test(flavor = "current_thread")]
async fn a_foreground_grant_goes_ahead_of_background_outcomes_queued_before_it() {
    let dir = tempfile::tempdir().unwrap();
    let (db, l) = open(&dir);
    let bg = [
        l.acquire("alice", Lane::Background).await.unwrap(),
        l.acquire("alice", Lane::Background).await.unwrap(),
    ];
    let go = hold(&db);
    for p in bg {
        p.succeeded(None);
    }
    // What the drainer sees when the background work queued so far runs.
    let (tx, seen) = tokio::sync::oneshot::channel();
    db.submit_as(Priority::Background, move |db| {
        let _ = tx.send(foreground_rows(db));
    });
    let fg = {
        let l = l.clone();
        tokio::spawn(async move { l.acquire("alice", Lane::Foreground).await })
    };
    // The spawned acquire queues its grant on its first poll.
    tokio::task::yield_now().await;
    go.send(()).unwrap();
    let p = fg.await.unwrap().unwrap();
    assert_eq!(
        seen.await.unwrap(),
        1,
        "the grant ran before the background calls"
    );
    p.succeeded(None);
}

#[tokio::test(flavor = "current_thread")]
async fn a_429_is_seen_by_a_foreground_grant_asked_for_after_it() {
    let dir = tempfile::tempdir().unwrap();
    let (db, l) = open(&dir);
    let p = l.acquire("alice", Lane::Background).await.unwrap();
    let go = hold(&db);
    p.throttled(ThrottleScope::User, None);
    let fg = {
        let l = l.clone();
        tokio::spawn(async move {
            let d = l.now_ms() + 1;
            l.acquire_before("alice", Lane::Foreground, d).await
        })
    };
    tokio::task::yield_now().await;
    go.send(()).unwrap();
    assert!(
        fg.await.unwrap().is_err(),
        "the breaker the 429 opened holds the grant back"
    );
}
