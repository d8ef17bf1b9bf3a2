//! Imports from files survive what a migration from Graph survives: kill -9 at any point and
//! `migrate --resume` (with no account signed in) finishes with no page created twice and none
//! lost; a file gone before the resume fails its pages with a reason naming it; `--update`
//! rewrites in place the pages whose OneNote modified time is newer than what was migrated.

use std::time::Duration;

use crate::bin_support::Start;
use crate::files_support::{copy_into, expected_tree, notion_tree, page_id, run, sample, scanned};
use crate::migrate_support::{command, State};
use notebridge::store::Db;
use notebridge_testkit::lab::{Lab, LabConfig};

/// Notion at 3 requests a second, the real pace, so a run of a few pages lasts long enough to be
/// interrupted.
fn real_pace() -> LabConfig {
    LabConfig::default()
}

/// Pages anywhere under `root`.
fn pages(lab: &Lab, root: &str) -> usize {
    notion_tree(lab, root).len()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killed_mid_migration_a_resume_finishes_with_no_page_twice_and_none_lost() {
    let (Some(folder), Some(lone)) = (
        sample("onenote.rs/samples/New Section Group"),
        sample("apache-tika/testOneNote1.one"),
    ) else {
        return;
    };
    let lab = Lab::start(real_pace()).await;
    let state = State::new();
    let target = lab.notion.add_shared_page("Import");
    let (f, l) = (folder.to_str().unwrap(), lone.to_str().unwrap());
    let mut want = expected_tree(&scanned(&lab, &state, &folder).await);
    want.extend(expected_tree(&scanned(&lab, &state, &lone).await));
    let mut child = command(
        &lab,
        &state,
        &["migrate", "--from", f, "--from", l, "--to", &target],
    )
    .start();
    // Killed once a few pages are in Notion (and more are to come).
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    while pages(&lab, &target) < 3 {
        assert!(tokio::time::Instant::now() < deadline, "no progress");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    child.start_kill().unwrap();
    child.wait().await.unwrap();
    assert!(pages(&lab, &target) < want.len(), "killed before the end");

    let (code, out, err) = run(&lab, &state, &["migrate", "--resume"]).await;
    assert_eq!(code, 0, "stdout: {out}\nstderr: {err}");
    let mut got = notion_tree(&lab, &target);
    // The two imports are planned side by side: compare each one's part.
    got.sort();
    want.sort();
    assert_eq!(got, want, "every page once");
    assert_eq!(lab.graph.counters().total, 0, "no Graph request");
    let (vcode, vout, _) = run(&lab, &state, &["verify"]).await;
    assert_eq!(
        vcode, 0,
        "verify with no account covers the imports: {vout}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_gone_before_the_resume_fails_its_pages_with_a_reason_naming_it() {
    let Some(folder) = sample("onenote.rs/samples/New Section Group") else {
        return;
    };
    let lab = Lab::start(LabConfig {
        notion_per_second: 2,
        notion_burst: 2,
        ..LabConfig::default()
    })
    .await;
    let state = State::new();
    let copy = copy_into(&folder, state.dir.path());
    let target = lab.notion.add_shared_page("Import");
    let (code, out, err) = run(
        &lab,
        &state,
        &[
            "migrate",
            "--from",
            copy.to_str().unwrap(),
            "--to",
            &target,
            "--max-duration",
            "1s",
        ],
    )
    .await;
    assert_eq!(
        code, 75,
        "stopped with work left\nstdout: {out}\nstderr: {err}"
    );
    std::fs::remove_dir_all(&copy).unwrap();

    let (code, out, err) = run(&lab, &state, &["migrate", "--resume"]).await;
    assert_eq!(
        code, 4,
        "the pages fail, the run ends\nstdout: {out}\nstderr: {err}"
    );
    let (_, status, _) = run(&lab, &state, &["--json", "status"]).await;
    let status: serde_json::Value = serde_json::from_str(status.trim()).unwrap();
    let import = &status["imports"][0];
    assert_eq!(import["path"], copy.to_str().unwrap());
    let failures = import["failures"].as_array().unwrap();
    assert!(!failures.is_empty(), "{status}");
    for f in failures {
        let e = f["error"].as_str().unwrap();
        assert!(
            e.contains(copy.to_str().unwrap()),
            "the reason names the path: {e}"
        );
    }
    // Nothing was created twice meanwhile.
    assert!(lab.notion.duplicate_titles(&target).is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn update_rewrites_in_place_the_pages_newer_in_the_files_than_in_notion() {
    let Some(folder) = sample("onenote.rs/samples/New Section Group") else {
        return;
    };
    let lab = Lab::start(crate::files_support::fast()).await;
    let state = State::new();
    let f = folder.to_str().unwrap();
    let target = lab.notion.add_shared_page("Import");
    let (code, out, err) = run(&lab, &state, &["migrate", "--from", f, "--to", &target]).await;
    assert_eq!(code, 0, "stdout: {out}\nstderr: {err}");
    let before = notion_tree(&lab, &target);
    let page = page_id(&lab, &target, "Test Page 3").unwrap();
    // What was migrated is older than the file now holds (as after editing it in OneNote).
    {
        let db = Db::open(&state.db).unwrap();
        let n = db
            .conn()
            .execute(
                "UPDATE notion_items SET onenote_last_modified = '2001-01-01T00:00:00Z'
                 WHERE item_id IN (SELECT id FROM pages WHERE title = 'Test Page 3')",
                [],
            )
            .unwrap();
        assert_eq!(n, 1);
    }
    let (_, status, _) = run(&lab, &state, &["--json", "status"]).await;
    assert!(
        status.contains("Test Page 3"),
        "status lists the changed page: {status}"
    );
    let writes = crate::files_support::notion_writes(&lab);
    let (code, out, err) = run(
        &lab,
        &state,
        &["migrate", "--from", f, "--to", &target, "--update"],
    )
    .await;
    assert!(
        crate::files_support::notion_writes(&lab) > writes,
        "the body was written again"
    );
    assert_eq!(code, 0, "stdout: {out}\nstderr: {err}");
    assert!(
        err.contains("1 changed pages to rewrite"),
        "the plan says what it rewrites: {err}"
    );
    assert_eq!(notion_tree(&lab, &target), before, "same pages, none added");
    assert_eq!(
        page_id(&lab, &target, "Test Page 3").unwrap(),
        page,
        "in place"
    );
    let (code, out, _) = run(&lab, &state, &["verify"]).await;
    assert_eq!(code, 0, "{out}");
}
