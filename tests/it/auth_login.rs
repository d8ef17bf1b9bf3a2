//! `notebridge login` end to end: the real binary against the sign-in test server.

use crate::auth_support;

use std::time::{Duration, Instant};

use crate::bin_support::Start;
use auth_support::{alice, bob, World, CLIENT_ID};
use notebridge::store::Db;
use notebridge_testkit::auth::CodeScript;
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, BufReader};

fn json_lines(s: &str) -> Vec<Value> {
    s.lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l:?}")))
        .collect()
}

#[tokio::test]
async fn happy_path_json_stores_the_account_privately() {
    let w = World::start(|c| c.scripts.push_back(CodeScript::approve(alice(), 0))).await;
    let out = w.run(&["login", "--json", "--account", "alice"]).await;
    assert_eq!(out.code, Some(0), "{out:?}");
    let lines = json_lines(&out.stdout);
    assert_eq!(lines.len(), 2, "{out:?}");
    assert_eq!(
        lines[0]["verification_uri"],
        "https://microsoft.com/devicelogin"
    );
    assert!(lines[0]["user_code"].as_str().unwrap().starts_with("UC"));
    assert_eq!(lines[0]["expires_in"], 900);
    assert_eq!(lines[0].as_object().unwrap().len(), 3);
    assert_eq!(lines[1]["account"], "alice");
    assert_eq!(lines[1]["user_principal_name"], "alice@contoso.test");
    assert_eq!(lines[1]["user_id"], alice().id);

    let c = w.auth.counters();
    assert_eq!((c.device_codes, c.polls, c.too_early_polls), (1, 1, 0));
    assert_eq!(
        w.auth.device_scopes()[0],
        ["offline_access", "User.Read", "Notes.Read", "Files.Read"]
    );
    assert_eq!(
        w.graph.requests.load(std::sync::atomic::Ordering::SeqCst),
        1
    );

    let privacy = notebridge::platform::privacy(&w.db_path()).unwrap();
    assert!(
        matches!(privacy, notebridge::platform::Privacy::Private(_)),
        "{privacy:?}"
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(w.db_path()).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
    }
    let db = Db::open(&w.db_path()).unwrap();
    let a = db.account("alice").unwrap().unwrap();
    assert_eq!(a.user_id, alice().id);
    let rt = a.refresh_token.clone().unwrap();
    assert!(
        w.auth.issued_secrets().contains(&rt),
        "stored refresh token is the issued one"
    );
    // What the token response granted is what `--via auto` decides from.
    assert_eq!(
        db.granted_scopes("alice").unwrap().unwrap(),
        ["User.Read", "Notes.Read", "Files.Read"]
    );

    let out = w.run(&["accounts", "--json"]).await;
    assert_eq!(out.code, Some(0));
    let v: Value = serde_json::from_str(out.stdout.trim()).unwrap();
    assert_eq!(v["accounts"][0]["name"], "alice");
    assert_eq!(v["accounts"][0]["signed_in"], true);
    w.assert_no_secrets(&out.all());
}

#[tokio::test]
async fn prompt_is_flushed_before_polling_and_pending_then_success() {
    // Nobody enters the code until the test has read the prompt line.
    let w = World::start(|c| c.scripts.push_back(CodeScript::never())).await;
    let mut child = w.command(&["--json", "login"]).start();
    let mut stdout = BufReader::new(child.stdout.take().unwrap()).lines();
    let first = tokio::time::timeout(Duration::from_secs(10), stdout.next_line())
        .await
        .expect("prompt not flushed")
        .unwrap()
        .unwrap();
    let v: Value = serde_json::from_str(&first).unwrap();
    assert!(v["user_code"].is_string());
    // Let it poll (pending) a few times, then "enter the code".
    tokio::time::sleep(Duration::from_millis(2600)).await;
    assert!(w.auth.counters().polls >= 1, "{:?}", w.auth.counters());
    assert_eq!(w.auth.approve_pending(&bob()), 1);
    let rest = tokio::time::timeout(Duration::from_secs(10), stdout.next_line())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    let status = child.wait().await.unwrap();
    assert_eq!(status.code(), Some(0));
    let v: Value = serde_json::from_str(&rest).unwrap();
    assert_eq!(
        (v["account"].as_str(), v["user_id"].as_str()),
        (Some("default"), Some(bob().id.as_str()))
    );
    let c = w.auth.counters();
    assert!(c.polls >= 3, "{c:?}");
    assert_eq!(c.too_early_polls, 0, "{c:?}");
}

#[tokio::test]
async fn pending_polls_follow_the_interval() {
    let w = World::start(|c| c.scripts.push_back(CodeScript::approve(alice(), 2))).await;
    let t = Instant::now();
    let out = w.run(&["login", "--account", "a"]).await;
    assert_eq!(out.code, Some(0), "{out:?}");
    let c = w.auth.counters();
    assert_eq!(
        (c.polls, c.too_early_polls, c.tokens_issued),
        (3, 0, 1),
        "{c:?}"
    );
    assert!(t.elapsed() >= Duration::from_secs(3), "{:?}", t.elapsed());
    assert!(
        out.stderr.contains("https://microsoft.com/devicelogin"),
        "{out:?}"
    );
    assert!(
        out.stdout.contains("alice@contoso.test") && out.stdout.contains("\"a\""),
        "{out:?}"
    );
}

#[tokio::test]
async fn slow_down_grows_the_interval() {
    let w = World::start(|c| {
        c.scripts
            .push_back(CodeScript::approve(alice(), 0).with_slow_down(1))
    })
    .await;
    let t = Instant::now();
    let out = w.run(&["login"]).await;
    assert_eq!(out.code, Some(0), "{out:?}");
    let c = w.auth.counters();
    assert_eq!((c.polls, c.too_early_polls), (2, 0), "{c:?}");
    // 1 s before the first poll, then 1 + 5 s after slow_down.
    assert!(t.elapsed() >= Duration::from_secs(7), "{:?}", t.elapsed());
}

#[tokio::test]
async fn expiry_exits_3_with_a_clear_message() {
    let w = World::start(|c| {
        c.code_lifetime = Duration::from_secs(3);
        c.scripts.push_back(CodeScript::never());
    })
    .await;
    let out = w.run(&["login"]).await;
    assert_eq!(out.code, Some(3), "{out:?}");
    assert!(out.stderr.contains("expired"), "{out:?}");
    assert!(Db::open(&w.db_path())
        .unwrap()
        .accounts()
        .unwrap()
        .is_empty());
    assert_eq!(w.auth.counters().too_early_polls, 0);
}

#[tokio::test]
async fn decline_exits_3_with_a_clear_message() {
    let w = World::start(|c| c.scripts.push_back(CodeScript::decline(1))).await;
    let out = w.run(&["login", "--json"]).await;
    assert_eq!(out.code, Some(3), "{out:?}");
    assert!(out.stderr.contains("declined"), "{out:?}");
    let lines = json_lines(&out.stdout);
    assert_eq!(lines.len(), 2, "the prompt, then the error as JSON");
    assert!(lines[0]["user_code"].is_string());
    assert_eq!(lines[1]["exit"], 3);
    assert_eq!(w.auth.counters().polls, 2);
}

#[tokio::test]
async fn missing_or_unknown_client_id_is_a_usage_error() {
    let w = World::start(|_| {}).await;
    let out = w
        .bin(&["login"])
        .env_remove("NOTEBRIDGE_CLIENT_ID")
        .run()
        .await;
    assert_eq!(out.code, Some(2), "{out:?}");
    for needle in [
        "NOTEBRIDGE_CLIENT_ID",
        "public client flows",
        "Notes.Read",
        "offline_access",
    ] {
        assert!(out.stderr.contains(needle), "{needle} missing: {out:?}");
    }
    assert_eq!(w.auth.counters().device_codes, 0);

    let out = w
        .bin(&["login"])
        .env("NOTEBRIDGE_CLIENT_ID", "not-registered")
        .run()
        .await;
    assert_eq!(out.code, Some(2), "{out:?}");
    assert!(
        out.stderr.contains("not-registered") && out.stderr.contains("AADSTS700016"),
        "{out:?}"
    );
    assert_ne!(CLIENT_ID, "not-registered");
}

#[tokio::test]
async fn an_account_name_with_a_slash_is_a_usage_error_before_any_sign_in() {
    let w = World::start(|_| {}).await;
    let out = w.run(&["login", "--account", "alice/group:1"]).await;
    assert_eq!(out.code, Some(2), "{out:?}");
    assert!(
        out.stderr.contains("--account") && out.stderr.contains("'/'"),
        "{out:?}"
    );
    assert_eq!(w.auth.counters().device_codes, 0);
}

#[tokio::test]
async fn two_accounts_side_by_side_and_name_takeover_needs_force() {
    let w = World::start(|c| {
        c.scripts.push_back(CodeScript::approve(alice(), 0));
        c.scripts.push_back(CodeScript::approve(bob(), 0));
        c.scripts.push_back(CodeScript::approve(bob(), 0));
        c.scripts.push_back(CodeScript::approve(bob(), 0));
        c.scripts.push_back(CodeScript::approve(alice(), 0));
    })
    .await;
    assert_eq!(w.run(&["login", "--account", "alice"]).await.code, Some(0));
    assert_eq!(w.run(&["login", "--account", "bob"]).await.code, Some(0));
    let out = w.run(&["accounts", "--json"]).await;
    let v: Value = serde_json::from_str(out.stdout.trim()).unwrap();
    let names: Vec<(&str, &str)> = v["accounts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| (a["name"].as_str().unwrap(), a["user_id"].as_str().unwrap()))
        .collect();
    assert_eq!(
        names,
        [("alice", alice().id.as_str()), ("bob", bob().id.as_str())]
    );

    // bob signs in under the name "alice": refused, alice's tokens untouched.
    let db = Db::open(&w.db_path()).unwrap();
    let before = db.account("alice").unwrap().unwrap();
    let out = w.run(&["login", "--account", "alice"]).await;
    assert_eq!(out.code, Some(2), "{out:?}");
    assert!(
        out.stderr.contains("--force") && out.stderr.contains("alice@contoso.test"),
        "{out:?}"
    );
    assert_eq!(db.account("alice").unwrap().unwrap(), before);
    let out = w.run(&["login", "--account", "alice", "--force"]).await;
    assert_eq!(out.code, Some(0), "{out:?}");
    assert_eq!(db.account("alice").unwrap().unwrap().user_id, bob().id);

    // Same user again under the same name: tokens replaced.
    let out = w.run(&["login", "--account", "bob"]).await;
    assert_eq!(out.code, Some(2), "alice under bob's name: {out:?}");
    let b1 = db.account("bob").unwrap().unwrap();
    w.auth.push_script(CodeScript::approve(bob(), 0));
    assert_eq!(w.run(&["login", "--account", "bob"]).await.code, Some(0));
    let b2 = db.account("bob").unwrap().unwrap();
    assert_ne!(b1.refresh_token, b2.refresh_token);

    // logout keeps the row, drops the tokens.
    assert_eq!(w.run(&["logout", "--account", "bob"]).await.code, Some(0));
    assert!(!db.account("bob").unwrap().unwrap().signed_in());
}

#[tokio::test]
async fn verbose_output_never_contains_a_token() {
    let w = World::start(|c| {
        c.scripts.push_back(CodeScript::approve(alice(), 1));
        c.scripts.push_back(CodeScript::approve(alice(), 1));
    })
    .await;
    let human = w.run(&["-vv", "login"]).await;
    assert_eq!(human.code, Some(0), "{human:?}");
    let json = w.run(&["-vv", "--json", "login"]).await;
    assert_eq!(json.code, Some(0), "{json:?}");
    // The verbose run really logged the flow (so the grep covers something).
    assert!(human.stderr.contains("waiting for the user"), "{human:?}");
    assert_eq!(
        w.auth.issued_secrets().len(),
        6,
        "2 device codes, 2 access, 2 refresh"
    );
    w.assert_no_secrets(&human.all());
    w.assert_no_secrets(&json.all());
}

// A console's Ctrl-C reaches a Windows child only through its console group (no per-process
// signal); the stop itself is `platform::stop_signal`, whose Unix side this drives.
#[cfg(unix)]
#[tokio::test]
async fn ctrl_c_stops_cleanly_with_nothing_stored() {
    let w = World::start(|c| c.scripts.push_back(CodeScript::never())).await;
    let mut child = w.command(&["--json", "login"]).start();
    let mut stdout = BufReader::new(child.stdout.take().unwrap()).lines();
    tokio::time::timeout(Duration::from_secs(10), stdout.next_line())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    let pid = child.id().unwrap() as i32;
    // SAFETY: signalling our own child by its pid.
    unsafe {
        libc::kill(pid, libc::SIGINT);
    }
    let out = tokio::time::timeout(Duration::from_secs(10), child.wait_with_output())
        .await
        .expect("did not stop on Ctrl-C")
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cancelled"));
    assert!(Db::open(&w.db_path())
        .unwrap()
        .accounts()
        .unwrap()
        .is_empty());
}
