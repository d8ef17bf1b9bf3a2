//! The real `notebridge status` binary: jobs by state, pages migrated of total, failures with their
//! last error, pages changed in OneNote since migration, and the limiter's live state (a request in
//! flight from another process, an open breaker).

use crate::verify_support;

use std::collections::HashMap;
use std::time::Duration;

use notebridge::clock::{Clock, Jitter};
use notebridge::limiter::{Lane, Limiter, ThrottleScope};
use notebridge::store::inventory::ScanScope;
use serde_json::Value;
use verify_support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn status_shows_queue_failures_changes_and_the_limiter() {
    let w = world().await;
    add_account(&w.db, "alice");
    add_account(&w.db, "bob");
    let target = plan(&w, "alice");
    let fates: HashMap<&str, Fate> = [(
        "s2",
        Fate::Fail("Graph says the section is gone (404)".to_owned()),
    )]
    .into_iter()
    .collect();
    migrate(&w, "alice", &target, &fates).await;
    // First changed in OneNote after it was migrated.
    let mut inv = inventory();
    inv[0].sections[0].pages[0].last_modified = Some("2024-06-01T08:00:00.000Z".into());
    w.db.save_scan("alice", &inv, &ScanScope::All, 9).unwrap();

    // Another process's view: one background request of alice in flight, bob's user throttled.
    let settings = w.lab.settings(&w.db_path);
    let limiter = Limiter::open(
        w.db.clone(),
        settings.graph.clone(),
        Clock::system(),
        Jitter::seeded(1),
    )
    .unwrap();
    let held = limiter
        .acquire("user-alice", Lane::Background)
        .await
        .unwrap();
    let hit = limiter.acquire("user-bob", Lane::Foreground).await.unwrap();
    hit.throttled(ThrottleScope::User, Some(Duration::from_secs(120)));

    let (code, out, err) = run_bin(&w, &["status", "--json"], &[]);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(out.trim()).unwrap();
    let alice = &v["accounts"][0];
    assert_eq!(alice["account"], "alice");
    // 8 jobs + links: nb, s1, p1, p1a, p2, g done; s2 failed; q1 blocked; links done.
    let j = &alice["jobs"];
    assert_eq!(
        (
            j["done"].as_i64(),
            j["failed"].as_i64(),
            j["queued"].as_i64(),
            j["blocked"].as_i64()
        ),
        (Some(7), Some(1), Some(1), Some(1)),
        "{j}"
    );
    assert_eq!(
        (j["pages_done"].as_i64(), j["pages_total"].as_i64()),
        (Some(3), Some(4))
    );
    assert_eq!(alice["onenote_pages"], 4);
    assert_eq!(alice["failures"][0]["item_id"], "s2");
    assert_eq!(alice["failures"][0]["name"], "Inner");
    assert_eq!(
        alice["failures"][0]["error"],
        "Graph says the section is gone (404)"
    );
    assert_eq!(alice["failures"][0]["class"], "item/never");
    let changed = alice["changed_since_migration"].as_array().unwrap();
    assert_eq!(changed.len(), 1);
    assert_eq!(changed[0]["title"], "First");
    assert_eq!(changed[0]["now"], "2024-06-01T08:00:00.000Z");
    assert_eq!(v["accounts"][1]["account"], "bob");

    let scopes = v["limiter"]["scopes"].as_array().unwrap();
    let scope = |user: &str| {
        scopes
            .iter()
            .find(|s| s["scope"]["user"] == user)
            .unwrap_or_else(|| panic!("no scope for {user}: {scopes:?}"))
    };
    let a = scope("user-alice");
    assert_eq!(a["in_flight_background"], 1);
    // The 6 s window still counts the request (the 600 ms one may have let it go by now).
    assert_eq!(a["windows"][1]["background"], 1);
    assert_eq!(a["breaker"]["state"], "closed");
    let b = scope("user-bob");
    assert_eq!(b["breaker"]["state"], "open", "{b}");
    assert_eq!(v["migrating"], Value::Null);

    let (code, out, _) = run_bin(&w, &["status", "--account", "alice"], &[]);
    assert_eq!(code, 0);
    assert!(out.contains("pages migrated: 3 of 4 planned"), "{out}");
    assert!(
        out.contains("section \"Inner\": Graph says the section is gone (404)"),
        "{out}"
    );
    assert!(
        out.contains("changed in OneNote since migrated (1"),
        "{out}"
    );
    assert!(
        out.contains("in flight: 0 foreground, 1 background"),
        "{out}"
    );
    assert!(!out.contains("account bob"), "{out}");
    let (_, out, _) = run_bin(&w, &["status", "--account", "bob"], &[]);
    assert!(out.contains("breaker: open after 1 throttle(s)"), "{out}");
    drop(held);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn status_without_accounts_exits_3() {
    let w = world().await;
    let (code, _, err) = run_bin(&w, &["status"], &[]);
    assert_eq!(code, 3, "{err}");
    add_account(&w.db, "alice");
    let (code, out, err) = run_bin(&w, &["status"], &[("NOTION_TOKEN", None)]);
    assert_eq!(code, 0, "status needs no Notion token: {err}");
    assert!(out.contains("pages migrated: 0 of 0 planned"), "{out}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn status_and_report_show_notions_pace_and_what_it_waits_for() {
    use notebridge::notion::pace::{Limit, Mode, Throttle};
    use notebridge::notion::rate::NotionRate;
    let w = world().await;
    add_account(&w.db, "alice");
    let settings = w.lab.settings(&w.db_path);
    // Another process's pace on the same token: 4 answered, then Notion's per-connection 429.
    let rate = NotionRate::with_mode(
        w.db.clone(),
        settings.notion_token.as_deref().unwrap(),
        Mode::Auto {
            window: Duration::from_secs(60),
        },
        Clock::system(),
    );
    for _ in 0..4 {
        rate.answered(rate.acquire().await.unwrap()).await.unwrap();
    }
    let g = rate.acquire().await.unwrap();
    rate.throttled(
        g,
        Throttle {
            limit: Limit::Connection,
            retry_after: Duration::from_secs(40),
        },
    )
    .await
    .unwrap();
    let (code, out, err) = run_bin(&w, &["status"], &[]);
    assert_eq!(code, 0, "{err}");
    let line = out
        .lines()
        .find(|l| l.starts_with("Notion:"))
        .unwrap_or_else(|| panic!("no Notion line: {out}"));
    assert!(line.contains("4 requests in the last minute"), "{line}");
    assert!(line.contains("connection budget 4/min"), "{line}");
    assert!(line.contains("window resets in"), "{line}");
    assert!(line.contains("for the connection's budget"), "{line}");
    let (code, out, err) = run_bin(&w, &["status", "--json"], &[]);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(v["notion_pace"][0]["budget"], 4);
    assert_eq!(v["notion_pace"][0]["pause_reason"], "connection");
    let report = w.db_path.with_file_name("report.html");
    let (code, _, err) = run_bin(&w, &["report", "--output", report.to_str().unwrap()], &[]);
    assert_eq!(code, 0, "{err}");
    let html = std::fs::read_to_string(&report).unwrap();
    assert!(
        html.contains("connection budget 4/min"),
        "the report shows it too"
    );
}
