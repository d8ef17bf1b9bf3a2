//! The layout is recorded with the plan (the binary, files route): a first plan records `pages`
//! for its target, a second run keeps it, a run without `--layout` keeps whatever was recorded,
//! and an explicit other `--layout` for a planned target is exit 2 naming the recorded one, with
//! nothing planned or written; `--resume` with another layout is refused the same way.

use crate::files_support::{fast, notion_writes, run, sample};
use crate::migrate_support::State;

use notebridge::store::layouts::{Layout, LayoutCheck};
use notebridge::store::Db;
use notebridge_testkit::lab::Lab;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_plan_records_its_layout_and_a_target_laid_out_otherwise_is_refused() {
    let Some(path) = sample("apache-tika/testOneNote1.one") else {
        return;
    };
    let lab = Lab::start(fast()).await;
    let state = State::new();
    let target = lab.notion.add_shared_page("Pages here");
    let args = ["migrate", "--from", path.to_str().unwrap(), "--to", &target];
    let (code, out, err) = run(&lab, &state, &args).await;
    assert_eq!(code, 0, "stdout: {out}\nstderr: {err}");
    let db = Db::open(&state.db).unwrap();
    assert_eq!(db.layout_of(&target).unwrap(), Some(Layout::Pages));
    let (code, _, err) = run(&lab, &state, &args).await;
    assert_eq!(code, 0, "a second run keeps the layout: {err}");

    // A target whose plan recorded layout `database`: planning it as pages is refused.
    let other = lab.notion.add_shared_page("Database here");
    assert_eq!(
        db.record_layout(&other, Layout::Database, 1).unwrap(),
        LayoutCheck::Recorded
    );
    drop(db);
    let writes = notion_writes(&lab);
    let from = path.to_str().unwrap();
    let args = [
        "migrate", "--from", from, "--to", &other, "--layout", "pages",
    ];
    let (code, out, err) = run(&lab, &state, &args).await;
    assert_eq!(code, 2, "stdout: {out}\nstderr: {err}");
    assert!(
        err.contains("--layout database"),
        "the message names the recorded layout: {err}"
    );
    assert_eq!(notion_writes(&lab), writes, "nothing written");
    assert!(lab.notion.pages_under(&other).is_empty());
    let (code, out, err) = run(
        &lab,
        &state,
        &[
            "migrate",
            "--from",
            path.to_str().unwrap(),
            "--to",
            &other,
            "--layout",
            "pages",
            "--dry-run",
        ],
    )
    .await;
    assert_eq!(code, 2, "a dry run says the same: {out}\n{err}");
    // Resuming the first target as a database is refused as well.
    let (code, _, err) = run(
        &lab,
        &state,
        &[
            "migrate", "--from", from, "--resume", "--layout", "database",
        ],
    )
    .await;
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--layout pages"), "{err}");
    assert_eq!(notion_writes(&lab), writes, "nothing written");
    // Without --layout the recorded one is kept: the dry run's plan says `database`.
    let (code, out, err) = run(
        &lab,
        &state,
        &[
            "--json",
            "migrate",
            "--from",
            from,
            "--to",
            &other,
            "--dry-run",
        ],
    )
    .await;
    assert_eq!(code, 0, "{out}\n{err}");
    let doc: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(doc["plan"]["accounts"][0]["layout"], "database", "{doc}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_layout_is_a_usage_error_and_help_offers_both() {
    let lab = Lab::start(fast()).await;
    let state = State::new();
    let target = lab.notion.add_shared_page("Here");
    let (code, _, err) = run(
        &lab,
        &state,
        &[
            "migrate", "--from", "x.one", "--to", &target, "--layout", "table",
        ],
    )
    .await;
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("--layout") && err.contains("pages or database"),
        "{err}"
    );
    let (code, out, _) = run(&lab, &state, &["migrate", "--help"]).await;
    assert_eq!(code, 0);
    assert!(
        out.contains("--layout <LAYOUT>") && out.contains("database"),
        "{out}"
    );
}
