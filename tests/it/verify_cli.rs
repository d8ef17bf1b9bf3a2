//! The real `notebridge verify` binary against the lab: exit codes 0/2/3/4 and the JSON document.

use crate::verify_support;

use std::collections::HashMap;

use serde_json::Value;
use verify_support::*;

async fn migrated(fates: &[(&'static str, Fate)]) -> (World, HashMap<String, String>) {
    let w = world().await;
    add_account(&w.db, "alice");
    let target = plan(&w, "alice");
    let fates: HashMap<&str, Fate> = fates.iter().cloned().collect();
    let created = migrate(&w, "alice", &target, &fates).await;
    (w, created)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn complete_exits_0_with_a_table_and_a_verdict() {
    let (w, _) = migrated(&[]).await;
    let (code, out, err) = run_bin(&w, &["verify"], &[]);
    assert_eq!(code, 0, "stdout:\n{out}\nstderr:\n{err}");
    assert!(out.contains("account alice"), "{out}");
    let row = out
        .lines()
        .find(|l| l.trim_start().starts_with("Work / Notes "))
        .unwrap();
    let cells: Vec<&str> = row.split_whitespace().rev().take(8).collect();
    // APPROX FAILED PARTIAL EXTRA MISSING NOTION PLANNED ONENOTE, read from the right
    assert_eq!(cells, vec!["3", "0", "0", "0", "0", "3", "3", "3"], "{row}");
    assert!(
        out.contains("verdict: COMPLETE: all 4 planned pages"),
        "{out}"
    );
    assert!(out.contains("approximations:"), "{out}");

    let log_before = w.lab.notion.request_log();
    let (code, out, _) = run_bin(&w, &["verify", "--json", "--account", "alice"], &[]);
    assert_eq!(code, 0);
    let sent: Vec<_> = w.lab.notion.request_log()[log_before.len()..].to_vec();
    let v: Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(v["verdict"], "complete");
    assert_eq!(v["accounts"][0]["totals"]["ok"], 4);
    assert_eq!(v["accounts"][0]["sections"][0]["pages"][0]["state"], "ok");
    // 13 listings (see verify_report); a 429 from the server's own pacing is retried and counted.
    let throttled = sent.iter().filter(|r| r.status == 429).count();
    assert_eq!(sent.len() - throttled, 13, "{sent:?}");
    assert_eq!(v["notion_requests"], sent.len());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn defects_exit_4_and_are_named_in_json_and_text() {
    let (w, created) = migrated(&[(
        "q1",
        Fate::Fail("Notion rejected creating a page: 400 validation_error: bad".into()),
    )])
    .await;
    w.client.trash_page(&created["p2"]).await.unwrap();
    w.client
        .create_page(&created["s1"], "First", &[])
        .await
        .unwrap();

    let (code, out, err) = run_bin(&w, &["--json", "verify"], &[]);
    assert_eq!(code, 4, "{err}");
    let v: Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(v["verdict"], "incomplete");
    let pages = &v["accounts"][0]["sections"][0]["pages"];
    assert_eq!(pages[0]["state"], "duplicated");
    assert_eq!(pages[0]["duplicates"].as_array().unwrap().len(), 1);
    assert_eq!(pages[2]["state"], "missing");
    let q1 = &v["accounts"][0]["sections"][1]["pages"][0];
    assert_eq!(q1["state"], "failed");
    assert_eq!(
        q1["reason"],
        "Notion rejected creating a page: 400 validation_error: bad"
    );
    let t = &v["accounts"][0]["totals"];
    assert_eq!(
        (
            t["missing"].as_i64(),
            t["duplicates"].as_i64(),
            t["failed"].as_i64()
        ),
        (Some(2), Some(1), Some(1))
    );

    let (code, out, _) = run_bin(&w, &["verify"], &[]);
    assert_eq!(code, 4);
    assert!(out.contains("verdict: INCOMPLETE"), "{out}");
    assert!(out.contains("missing: Work / Notes / Untitled"), "{out}");
    assert!(out.contains("duplicated: Work / Notes / First"), "{out}");
    assert!(
        out.contains("failed: Work / Projects / Inner / Deep page: Notion rejected"),
        "{out}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn missing_token_exits_2_and_no_account_exits_3() {
    let w = world().await;
    let (code, _, err) = run_bin(&w, &["verify"], &[("NOTION_TOKEN", None)]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("NOTION_TOKEN"), "{err}");
    let (code, _, err) = run_bin(&w, &["verify"], &[]);
    assert_eq!(code, 3, "{err}");
    assert!(err.contains("notebridge login"), "{err}");
    add_account(&w.db, "alice");
    let (code, _, err) = run_bin(&w, &["verify", "--account", "bob"], &[]);
    assert_eq!(code, 3, "{err}");
    assert!(err.contains("no account named bob"), "{err}");
    // An account with nothing planned: nothing can be missing.
    let (code, out, _) = run_bin(&w, &["verify"], &[]);
    assert_eq!(code, 0);
    assert!(out.contains("nothing planned yet"), "{out}");
}
