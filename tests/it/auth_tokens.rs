//! `TokenSource` against the sign-in test server: refresh ahead of expiry, after a 401, rotation
//! persisted, single-flight, revoked refresh tokens.

use crate::auth_support;
use crate::lock_support::{ticks_while_waiting, HeldWrite};

use std::time::Duration;

use auth_support::{alice, bob, open, seed, seed_with, settings, world};
use notebridge::auth::{AuthError, TokenSource};
use notebridge::cli::exit::{Exit, Failure};
use notebridge::clock::Clock;

#[tokio::test]
async fn refreshes_when_missing_then_reuses_then_refreshes_ahead_of_expiry() {
    let w = world().await;
    let db = open(&w);
    let rt0 = seed(&w, &db, "alice", &alice());
    let ts = TokenSource::new(db.clone(), &settings(&w), Clock::system()).unwrap();

    let t1 = ts.access_token("alice").await.unwrap();
    // Its life is counted from here, not from after the checks below (slow on a loaded machine).
    let issued = tokio::time::Instant::now();
    assert_eq!(w.graph.status_with(t1.secret()).await, 200);
    assert_eq!(w.auth.counters().refreshes, 1);
    let stored = db.account("alice").unwrap().unwrap();
    assert_ne!(
        stored.refresh_token.as_deref(),
        Some(rt0.as_str()),
        "rotated token stored"
    );
    assert_eq!(stored.access_token.as_deref(), Some(t1.secret()));

    // Fresh: no new request.
    let again = ts.access_token("alice").await.unwrap();
    assert_eq!(again, t1);
    assert_eq!(w.auth.counters().refreshes, 1);

    // Inside the last fifth of its life (0.6 s of 3 s) it is replaced before it expires.
    tokio::time::sleep_until(issued + Duration::from_millis(2500)).await;
    assert_eq!(
        w.graph.status_with(t1.secret()).await,
        200,
        "old one still valid"
    );
    let t2 = ts.access_token("alice").await.unwrap();
    assert_ne!(t2, t1);
    assert_eq!(w.auth.counters().refreshes, 2);
    assert_eq!(w.graph.status_with(t2.secret()).await, 200);
    assert_eq!(w.auth.valid_refresh_tokens(&alice().id), 1);
}

#[tokio::test]
async fn refresh_after_401_once_even_for_many_callers() {
    let w = world().await;
    let db = open(&w);
    seed(&w, &db, "alice", &alice());
    let ts = TokenSource::new(db.clone(), &settings(&w), Clock::system()).unwrap();
    let t1 = ts.access_token("alice").await.unwrap();
    w.registry.expire_user(&alice().id);
    assert_eq!(w.graph.status_with(t1.secret()).await, 401);

    let calls = (0..8).map(|_| {
        let ts = ts.clone();
        let t1 = t1.clone();
        tokio::spawn(async move { ts.refresh_after_401("alice", &t1).await.unwrap() })
    });
    let tokens = futures::future::join_all(calls).await;
    let first = tokens[0].as_ref().unwrap().clone();
    for t in &tokens {
        assert_eq!(t.as_ref().unwrap(), &first);
    }
    assert_ne!(first, t1);
    assert_eq!(
        w.auth.counters().refreshes,
        2,
        "one for the first token, one after the 401"
    );
    assert_eq!(w.graph.status_with(first.secret()).await, 200);
}

#[tokio::test]
async fn concurrent_first_use_makes_one_refresh_per_account() {
    let w = world().await;
    let db = open(&w);
    seed(&w, &db, "alice", &alice());
    seed(&w, &db, "bob", &bob());
    let ts = TokenSource::new(db.clone(), &settings(&w), Clock::system()).unwrap();
    let calls = (0..10).map(|i| {
        let ts = ts.clone();
        let name = if i % 2 == 0 { "alice" } else { "bob" };
        tokio::spawn(async move { (name, ts.access_token(name).await.unwrap()) })
    });
    let got = futures::future::join_all(calls).await;
    assert_eq!(w.auth.counters().refreshes, 2, "{:?}", w.auth.counters());
    for r in got {
        let (name, tok) = r.unwrap();
        let expect = if name == "alice" {
            alice().id
        } else {
            bob().id
        };
        assert_eq!(
            w.registry.check(tok.secret()),
            Ok(expect),
            "each account is its own user"
        );
    }
}

#[tokio::test]
async fn rotated_refresh_token_survives_a_restart() {
    let w = world().await;
    let rt0;
    let t1;
    {
        let db = open(&w);
        rt0 = seed(&w, &db, "alice", &alice());
        let ts = TokenSource::new(db.clone(), &settings(&w), Clock::system()).unwrap();
        t1 = ts.access_token("alice").await.unwrap();
        // The process "dies" here: source and database handle dropped without any shutdown step.
    }
    assert_eq!(
        w.auth.valid_refresh_tokens(&alice().id),
        1,
        "rt0 spent, rt1 live"
    );
    let db = open(&w);
    let ts = TokenSource::new(db.clone(), &settings(&w), Clock::system()).unwrap();
    w.registry.expire_user(&alice().id);
    let t2 = ts.refresh_after_401("alice", &t1).await.unwrap();
    assert_eq!(w.graph.status_with(t2.secret()).await, 200);
    assert_eq!(w.auth.counters().refresh_failures, 0);
    // The original token really is dead, so only the stored rotation made this work.
    assert_ne!(
        db.account("alice").unwrap().unwrap().refresh_token.unwrap(),
        rt0
    );
}

#[tokio::test]
async fn revoked_refresh_token_is_a_sign_in_error_naming_the_account() {
    let w = world().await;
    let db = open(&w);
    seed(&w, &db, "alice", &alice());
    let ts = TokenSource::new(db.clone(), &settings(&w), Clock::system()).unwrap();
    let t1 = ts.access_token("alice").await.unwrap();
    w.auth.revoke_user(&alice().id);
    w.registry.expire_user(&alice().id);
    let err = ts.refresh_after_401("alice", &t1).await.unwrap_err();
    assert!(matches!(err, AuthError::RefreshRejected { .. }), "{err:?}");
    let msg = err.to_string();
    assert!(msg.contains("notebridge login --account alice"), "{msg}");
    assert!(msg.contains("invalid_grant"), "{msg}");
    for s in w.auth.issued_secrets() {
        assert!(!msg.contains(&s) && !format!("{err:?}").contains(&s));
    }
    let e = Failure::from(err).context("scanning");
    assert_eq!(e.exit(), Exit::SignIn);
    assert_eq!(Exit::SignIn.code(), 3);
}

#[tokio::test]
async fn unknown_or_signed_out_account_is_a_sign_in_error() {
    let w = world().await;
    let db = open(&w);
    seed(&w, &db, "alice", &alice());
    db.forget_tokens("alice", 2).unwrap();
    let ts = TokenSource::new(db.clone(), &settings(&w), Clock::system()).unwrap();
    for name in ["alice", "nobody"] {
        let err = ts.access_token(name).await.unwrap_err();
        assert!(matches!(err, AuthError::NoAccount { .. }), "{err:?}");
        assert_eq!(Failure::from(err).exit(), Exit::SignIn);
    }
    assert_eq!(w.auth.counters().refreshes, 0);
}

#[tokio::test]
async fn each_token_records_the_permissions_it_was_granted() {
    let w = world().await;
    let db = open(&w);
    seed(&w, &db, "alice", &alice());
    assert_eq!(db.granted_scopes("alice").unwrap(), None);
    let ts = TokenSource::new(db.clone(), &settings(&w), Clock::system()).unwrap();
    ts.access_token("alice").await.unwrap();
    assert_eq!(
        db.granted_scopes("alice").unwrap().unwrap(),
        ["User.Read", "Notes.Read", "Files.Read"]
    );
    assert_eq!(w.auth.counters().refresh_failures, 0);
}

#[tokio::test]
async fn an_account_that_never_consented_to_a_file_permission_refreshes_without_it() {
    // Signed in before Files.Read was among the default scopes: asking for it now is refused
    // (AADSTS65001), which must not sign the account out; the refresh goes on without it.
    let w = world().await;
    let db = open(&w);
    seed_with(
        &w,
        &db,
        "alice",
        &alice(),
        &["offline_access", "User.Read", "Notes.Read"],
    );
    let ts = TokenSource::new(db.clone(), &settings(&w), Clock::system()).unwrap();
    let t = ts.access_token("alice").await.unwrap();
    assert_eq!(w.graph.status_with(t.secret()).await, 200);
    let c = w.auth.counters();
    assert_eq!((c.refreshes, c.refresh_failures), (1, 1), "{c:?}");
    assert_eq!(
        db.granted_scopes("alice").unwrap().unwrap(),
        ["User.Read", "Notes.Read"]
    );
    // Known now: the next refresh does not ask for it at all.
    ts.refresh_now("alice").await.unwrap();
    let c = w.auth.counters();
    assert_eq!((c.refreshes, c.refresh_failures), (2, 1), "{c:?}");
}

#[tokio::test]
async fn a_missing_onenote_permission_still_means_signing_in_again() {
    // Only file permissions are optional: a OneNote permission never consented to is the
    // user's to fix.
    let w = world().await;
    let db = open(&w);
    seed_with(&w, &db, "alice", &alice(), &["offline_access", "User.Read"]);
    let ts = TokenSource::new(db.clone(), &settings(&w), Clock::system()).unwrap();
    let e = ts.access_token("alice").await.unwrap_err();
    assert!(
        matches!(&e, AuthError::ConsentRequired { permission, .. } if permission == "Notes.Read"),
        "{e:?}"
    );
}

/// Storing a refresh's tokens waits for the database while another process holds a write (up to
/// the busy timeout). It waits off the runtime: the one thread of a current-thread runtime goes
/// on running every other task meanwhile (here the sign-in server's, and this one's ticks).
#[tokio::test(flavor = "current_thread")]
async fn storing_refreshed_tokens_behind_a_locked_database_leaves_the_runtime_to_other_tasks() {
    let w = world().await;
    let db = open(&w);
    seed(&w, &db, "alice", &alice());
    let ts = TokenSource::new(db.clone(), &settings(&w), Clock::system()).unwrap();
    let held = HeldWrite::take(&w.db_path());
    let token = {
        let ts = ts.clone();
        tokio::spawn(async move { ts.access_token("alice").await })
    };
    // The refresh is answered (the server runs on this thread too), then its tokens wait to be
    // stored.
    let mut ticks = 0;
    while w.auth.counters().refreshes == 0 {
        assert!(ticks < 500, "the sign-in server never got the refresh");
        tokio::time::sleep(Duration::from_millis(10)).await;
        ticks += 1;
    }
    ticks_while_waiting(&token, "the tokens were stored (or failed)").await;
    held.release();
    let t = token.await.unwrap().unwrap();
    let stored = db.account("alice").unwrap().unwrap();
    assert_eq!(stored.access_token.as_deref(), Some(t.secret()));
    assert_eq!(w.auth.counters().refreshes, 1);
}
