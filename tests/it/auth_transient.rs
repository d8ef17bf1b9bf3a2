//! Sign-in that meets a service that is down or unreachable for now: only a refused grant means
//! "sign in again"; `temporarily_unavailable`, 5xx, 429, dropped connections and a service that
//! does not listen are waited out, with one refresh for every waiting caller, until the deadline.

use crate::auth_support;

use std::time::Duration;

use auth_support::{alice, open, seed, settings, world, World};
use notebridge::auth::{AuthError, TokenSource};
use notebridge::cli::exit::{Exit, Failure};
use notebridge::clock::{Clock, Jitter};
use notebridge::net::Reachability;
use notebridge_testkit::auth::{CodeScript, TokenFault};

#[tokio::test]
async fn refresh_waits_out_unavailable_answers_and_dropped_connections() {
    let w = world().await;
    let db = open(&w);
    seed(&w, &db, "alice", &alice());
    let ts = TokenSource::new(db.clone(), &settings(&w), Clock::system()).unwrap();
    w.auth.fail_next_token_requests(&[
        TokenFault::TemporarilyUnavailable,
        TokenFault::ServiceUnavailable,
        TokenFault::TooManyRequests,
        TokenFault::Drop,
    ]);
    let t = ts.access_token("alice").await.unwrap();
    assert_eq!(w.graph.status_with(t.secret()).await, 200);
    let c = w.auth.counters();
    assert_eq!((c.refreshes, c.refresh_failures), (1, 0), "{c:?}");
    // The dropped request did not spend the refresh token: exactly one valid one, the stored one.
    assert_eq!(w.auth.valid_refresh_tokens(&alice().id), 1);
    assert_eq!(ts.reachability().since(), None);
}

#[tokio::test]
async fn every_caller_waits_on_one_refresh_while_the_sign_in_service_is_down() {
    let w = world().await;
    let db = open(&w);
    seed(&w, &db, "alice", &alice());
    let ts = TokenSource::new(db.clone(), &settings(&w), Clock::system()).unwrap();
    w.auth.outage().stop_for(Duration::from_millis(1500));
    let calls = (0..8).map(|_| {
        let ts = ts.clone();
        tokio::spawn(async move { ts.access_token("alice").await })
    });
    let watcher = {
        let r = ts.reachability().clone();
        tokio::spawn(async move {
            for _ in 0..100 {
                if r.since().is_some() {
                    return true;
                }
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            false
        })
    };
    let tokens = futures::future::join_all(calls).await;
    let first = tokens[0].as_ref().unwrap().as_ref().unwrap().clone();
    for t in &tokens {
        assert_eq!(t.as_ref().unwrap().as_ref().unwrap(), &first);
    }
    assert!(
        watcher.await.unwrap(),
        "the wait for the sign-in service was recorded"
    );
    assert_eq!(w.auth.counters().refreshes, 1, "one refresh for all");
    assert_eq!(ts.reachability().since(), None, "reachable again");
    assert_eq!(w.graph.status_with(first.secret()).await, 200);
}

#[tokio::test]
async fn an_outage_past_the_deadline_means_work_remaining_not_sign_in() {
    let w = world().await;
    let db = open(&w);
    seed(&w, &db, "alice", &alice());
    let clock = Clock::system();
    let reach = Reachability::new(clock.clone());
    reach.set_deadline(Some(clock.now_ms() + 1_000));
    let ts = TokenSource::with_network(db.clone(), &settings(&w), clock, reach, Jitter::seeded(3))
        .unwrap();
    w.auth.outage().stop();
    let e = ts.access_token("alice").await.unwrap_err();
    assert!(matches!(e, AuthError::Unavailable { .. }), "{e:?}");
    assert_eq!(Failure::from(e).exit(), Exit::WorkRemaining);
    w.auth.outage().resume();
    // The refresh token was never sent, so it still works.
    assert!(ts.access_token("alice").await.is_ok());
}

#[tokio::test]
async fn a_refused_grant_still_means_sign_in_again_at_once() {
    let w = world().await;
    let db = open(&w);
    seed(&w, &db, "alice", &alice());
    let ts = TokenSource::new(db.clone(), &settings(&w), Clock::system()).unwrap();
    w.auth.revoke_user(&alice().id);
    // A transient answer first: waited out, then the refusal decides.
    w.auth
        .fail_next_token_requests(&[TokenFault::TemporarilyUnavailable]);
    let e = ts.access_token("alice").await.unwrap_err();
    assert!(matches!(e, AuthError::RefreshRejected { .. }), "{e:?}");
    assert_eq!(Failure::from(e).exit(), Exit::SignIn);
}

#[tokio::test]
async fn login_polls_through_unavailable_answers() {
    let w = World::start(|c| c.scripts.push_back(CodeScript::approve(alice(), 1))).await;
    w.auth.fail_next_token_requests(&[
        TokenFault::ServiceUnavailable,
        TokenFault::TemporarilyUnavailable,
        TokenFault::Drop,
    ]);
    let out = w.run(&["login", "--account", "a"]).await;
    assert_eq!(out.code, Some(0), "{out:?}");
    assert!(out.stdout.contains("alice@contoso.test"), "{out:?}");
    assert_eq!(w.auth.counters().tokens_issued, 1);
}

#[tokio::test]
async fn the_proxy_variables_are_honoured() {
    // A proxy that is not there: every request through it fails to connect.
    let dead = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let proxy = format!("http://{}", dead.local_addr().unwrap());
    drop(dead);
    let w = World::start(|c| c.scripts.push_back(CodeScript::approve(alice(), 1))).await;
    let out = w
        .bin(&["login", "--account", "a"])
        .env("HTTP_PROXY", &proxy)
        .env("HTTPS_PROXY", &proxy)
        .run()
        .await;
    assert_eq!(out.code, Some(1), "through the dead proxy: {out:?}");
    assert_eq!(
        w.auth.counters().device_codes,
        0,
        "nothing reached the server"
    );
    let out = w
        .bin(&["login", "--account", "a"])
        .env("HTTP_PROXY", &proxy)
        .env("HTTPS_PROXY", &proxy)
        .env("NO_PROXY", "127.0.0.1")
        .run()
        .await;
    assert_eq!(out.code, Some(0), "NO_PROXY bypasses it: {out:?}");
}

#[tokio::test]
async fn a_sign_in_service_that_keeps_saying_not_now_parks_the_work_once_the_retries_are_spent() {
    let w = world().await;
    let db = open(&w);
    seed(&w, &db, "alice", &alice());
    let ts = TokenSource::new(db.clone(), &settings(&w), Clock::system()).unwrap();
    // The first attempt and four retries (the item's policy), each answered "not now".
    w.auth
        .fail_next_token_requests(&[TokenFault::ServiceUnavailable; 5]);
    let e = ts.access_token("alice").await.unwrap_err();
    assert!(matches!(e, AuthError::Unavailable { .. }), "{e:?}");
    assert_eq!(Failure::from(e).exit(), Exit::WorkRemaining);
    // Nothing was spent at the service: the next refresh works.
    assert!(ts.access_token("alice").await.is_ok());
}
