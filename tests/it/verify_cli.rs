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
    let cells: Vec<&str> = row.split_whitespace().rev().take(6).collect();
    // FAILED PARTIAL EXTRA MISSING NOTION ONENOTE, read from the right
    assert_eq!(cells, vec!["0", "0", "0", "0", "3", "3"], "{row}");
    assert!(
        out.lines()
            .next()
            .unwrap()
            .starts_with("COMPLETE: all 4 planned pages"),
        "the verdict comes first: {out}"
    );
    assert!(out.contains("approximated on 4 pages"), "{out}");
    assert!(
        out.contains("superscript shown as plain text 8x on 4 pages"),
        "{out}"
    );
    assert!(out.contains("verify --detail"), "{out}");
    assert!(
        out.lines().all(|l| l.chars().count() <= 100),
        "fits 100 columns: {out}"
    );
    // the whole human output, with what differs between runs (the target's id, the request count)
    // replaced
    let target = w.db.plan_targets("alice").unwrap().remove(0);
    let requests = out
        .split(" Notion requests)")
        .next()
        .and_then(|h| h.rsplit('(').next())
        .unwrap()
        .to_owned();
    let stable = out.replace(&target, "[target]").replace(
        &format!("({requests} Notion requests)"),
        "([n] Notion requests)",
    );
    insta::assert_snapshot!("verify_complete_human", stable);
    let (_, detail, _) = run_bin(&w, &["verify", "--detail"], &[]);
    assert!(detail.lines().count() > out.lines().count(), "{detail}");

    let log_before = w.lab.notion.request_log();
    let (code, out, _) = run_bin(&w, &["verify", "--json", "--account", "alice"], &[]);
    assert_eq!(code, 0);
    let sent: Vec<_> = w.lab.notion.request_log()[log_before.len()..].to_vec();
    let v: Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(v["verdict"], "complete");
    assert_eq!(v["accounts"][0]["totals"]["ok"], 4);
    assert_eq!(v["accounts"][0]["sections"][0]["pages"][0]["state"], "ok");
    // the token and target checks, then 13 listings (see verify_report); a 429 from the server's
    // own pacing is retried and counted.
    let throttled = sent.iter().filter(|r| r.status == 429).count();
    assert_eq!(sent.len() - throttled, 2 + 13, "{sent:?}");
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
    assert!(
        out.starts_with("INCOMPLETE: of 4 planned pages 1 are complete"),
        "{out}"
    );
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
    // a typo names what exists
    let (code, _, err) = run_bin(&w, &["verify", "--account", "bob"], &[]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("no account named bob") && err.contains("accounts: alice"),
        "{err}"
    );
    // an account with nothing planned: nothing to verify is not "complete"
    for args in [&["verify"][..], &["verify", "--account", "alice"][..]] {
        let (code, out, err) = run_bin(&w, args, &[]);
        assert_eq!(code, 2, "{out}{err}");
        assert!(err.contains("nothing to verify"), "{err}");
        assert!(!out.contains("COMPLETE"), "{out}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_or_sharing_problem_is_that_problem_not_missing_pages() {
    let (w, _) = migrated(&[]).await;
    let (code, out, err) = run_bin(&w, &["verify"], &[("NOTION_TOKEN", Some("ntn_wrong"))]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(err.contains("Notion rejected NOTION_TOKEN"), "{err}");
    assert!(!out.contains("missing"), "no verdict about pages: {out}");

    // the integration lost access to the target page
    let target = w.db.plan_targets("alice").unwrap().remove(0);
    w.lab.notion.unshare(&target);
    let (code, out, err) = run_bin(&w, &["verify"], &[]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(err.contains("is not shared with the integration"), "{err}");
    assert!(out.is_empty(), "{out}");
}
