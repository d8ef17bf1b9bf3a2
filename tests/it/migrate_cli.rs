//! `migrate` at its edges, through the real binary: the exit-code contract (2, 3, 5, 75), stopping on
//! SIGTERM and `--max-duration`, and `--resume` finishing what a stop left.

use crate::migrate_support;

use std::time::Duration;

use crate::bin_support::Start;
use migrate_support::{assert_mirrors, command, counts, inventory, notebridge, State};
use notebridge::store::Db;
use notebridge_testkit::generator::{generate, NotebookSpec};
use notebridge_testkit::lab::{Lab, LabConfig};

fn spec(pages: usize) -> NotebookSpec {
    NotebookSpec {
        total_pages: Some(pages),
        pages_per_section: 0,
        images_per_page: 1,
        seed: 21,
        ..NotebookSpec::default()
    }
}

/// Notion at its real 3 requests/s, so a migration of a few pages lasts several seconds.
async fn slow_lab(pages: usize) -> (Lab, State, notebridge_testkit::TestUser) {
    let lab = Lab::start(LabConfig::default()).await;
    let user = lab.add_user("default", generate(&spec(pages)));
    let state = State::new();
    lab.sign_in(&Db::open(&state.db).unwrap(), "default", &user);
    (lab, state, user)
}

/// Waits until the migrating process has taken the lock.
async fn wait_for_lock(state: &State) {
    for _ in 0..200 {
        let taken = Db::open(&state.db)
            .unwrap()
            .read("probe", |c| {
                c.query_row("SELECT COUNT(*) FROM run_lock", [], |r| r.get::<_, i64>(0))
            })
            .unwrap();
        if taken > 0 {
            return;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("the migration never took its lock");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn usage_and_sign_in_errors_have_their_codes() {
    let (lab, state, _) = slow_lab(2).await;
    let (code, _, err) = notebridge(&lab, &state, &["migrate"]).await;
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--to"), "{err}");

    let (code, _, err) = notebridge(&lab, &state, &["migrate", "--to", "not-a-page"]).await;
    assert_eq!(code, 2, "{err}");

    // a page not shared with the integration: exit 2 before any work
    let (code, _, err) = notebridge(
        &lab,
        &state,
        &["migrate", "--to", "0123456789abcdef0123456789abcdef"],
    )
    .await;
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("share"), "{err}");
    assert_eq!(
        lab.graph.counters().total,
        0,
        "no Graph work before the target check"
    );

    let (code, _, err) = notebridge(
        &lab,
        &state,
        &["migrate", "--account", "nobody", "--to", &lab.target_page],
    )
    .await;
    assert_eq!(code, 3, "{err}");
    assert!(err.contains("notebridge login --account nobody"), "{err}");

    // a typo with --resume names what exists instead of finishing "nothing to do"
    let (code, _, err) =
        notebridge(&lab, &state, &["migrate", "--resume", "--account", "nobdy"]).await;
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("no account named nobdy") && err.contains("accounts: default"),
        "{err}"
    );

    let mut cmd = command(&lab, &state, &["migrate", "--to", &lab.target_page]);
    cmd.env_remove("NOTION_TOKEN");
    let out = cmd.run_to_end().await;
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("NOTION_TOKEN"));

    let (code, _, err) = notebridge(
        &lab,
        &state,
        &["migrate", "--resume", "--max-duration", "0s"],
    )
    .await;
    assert_eq!(code, 2, "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_migrating_process_gets_exit_5_naming_the_first() {
    let (lab, state, _) = slow_lab(6).await;
    let mut first = command(&lab, &state, &["migrate", "--to", &lab.target_page]).start();
    wait_for_lock(&state).await;
    let (code, _, err) = notebridge(&lab, &state, &["migrate", "--resume"]).await;
    assert_eq!(code, 5, "{err}");
    assert!(
        err.contains(&format!("pid {}", first.id().unwrap())),
        "{err}"
    );
    let status = first.wait().await.unwrap();
    assert!(status.success());
}

// SIGTERM is Unix's; Windows' Ctrl-Break goes to a console group, not to one child by its id.
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_parks_the_work_exits_75_and_resume_finishes_it() {
    let (lab, state, user) = slow_lab(8).await;
    let first = command(&lab, &state, &["migrate", "--to", &lab.target_page]).start();
    wait_for_lock(&state).await;
    tokio::time::sleep(Duration::from_millis(1500)).await;
    // SAFETY: sending SIGTERM to our own child.
    unsafe {
        libc::kill(first.id().unwrap() as i32, libc::SIGTERM);
    }
    let out = first.wait_with_output().await.unwrap();
    assert_eq!(
        out.status.code(),
        Some(75),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let c = counts(&state.db, "default");
    assert!(c["pages_done"] < 8, "the stop came before the end: {c:?}");
    assert_eq!(c["running"], 0, "nothing left claimed: {c:?}");

    let (code, out, err) = notebridge(&lab, &state, &["migrate", "--resume"]).await;
    assert_eq!(code, 0, "{out}{err}");
    assert_mirrors(&lab, &user.id, &inventory(&state.db, "default"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn max_duration_stops_with_75_and_resume_goes_on() {
    let (lab, state, user) = slow_lab(8).await;
    let (code, out, err) = notebridge(
        &lab,
        &state,
        &[
            "--json",
            "migrate",
            "--to",
            &lab.target_page,
            "--max-duration",
            "2s",
        ],
    )
    .await;
    assert_eq!(code, 75, "{out}{err}");
    let summary: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(summary["outcome"], "stopped");
    let (code, out, err) = notebridge(&lab, &state, &["migrate", "--resume"]).await;
    assert_eq!(code, 0, "{out}{err}");
    assert_mirrors(&lab, &user.id, &inventory(&state.db, "default"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreadable_section_fails_with_its_reason_and_exit_4() {
    let lab = Lab::start(LabConfig {
        notion_per_second: 150,
        ..LabConfig::default()
    })
    .await;
    let user = lab.add_user(
        "alice",
        generate(&NotebookSpec {
            sections_per_container: 1,
            pages_per_section: 3,
            images_per_page: 0,
            seed: 3,
            ..NotebookSpec::default()
        }),
    );
    let state = State::new();
    lab.sign_in(&Db::open(&state.db).unwrap(), "alice", &user);
    // Every page listing (the only `$batch` use) keeps answering 503 inside the batch.
    lab.graph.faults().batch_inner_failures(1.0, &[503]);
    let (code, out, err) = notebridge(
        &lab,
        &state,
        &["migrate", "--account", "alice", "--to", &lab.target_page],
    )
    .await;
    assert_eq!(code, 4, "{out}{err}");
    assert!(err.contains("could not read section"), "{err}");
    let failed = Db::open(&state.db).unwrap().failed_jobs("alice").unwrap();
    assert_eq!(failed.len(), 1, "{failed:?}");
    assert!(failed[0].error.contains("re-scan"), "{failed:?}");

    // Once the section can be read again, a new `migrate --to` plans and migrates its pages.
    lab.graph.faults().clear();
    let (code, out, err) = notebridge(
        &lab,
        &state,
        &[
            "migrate",
            "--account",
            "alice",
            "--to",
            &lab.target_page,
            "--retry-failed",
        ],
    )
    .await;
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(counts(&state.db, "alice")["pages_done"], 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn update_rewrites_pages_changed_in_onenote_in_place() {
    let lab = Lab::start(LabConfig {
        notion_per_second: 150,
        ..LabConfig::default()
    })
    .await;
    let user = lab.add_user("default", generate(&spec(6)));
    let state = State::new();
    lab.sign_in(&Db::open(&state.db).unwrap(), "default", &user);
    let (code, out, err) = notebridge(&lab, &state, &["migrate", "--to", &lab.target_page]).await;
    assert_eq!(code, 0, "{out}{err}");
    let pages_before = lab.notion.pages_under(&lab.target_page).len();

    // A page changes in OneNote: new body, newer lastModifiedDateTime.
    let changed = lab.graph.mutate(&user.id, |n| {
        let p = n.pages.iter_mut().find(|p| p.level == 0).unwrap();
        p.content_seed = p.content_seed.wrapping_add(1);
        p.modified += chrono::Duration::days(1);
        p.title = format!("{} (renamed)", p.title);
        p.id.clone()
    });
    // a re-scan shows it in `status`
    let (code, _, err) = notebridge(&lab, &state, &["scan"]).await;
    assert_eq!(code, 0, "{err}");
    let (_, out, _) = notebridge(&lab, &state, &["status", "--json"]).await;
    assert!(
        out.contains(&changed),
        "status lists the changed page: {out}"
    );

    let (code, out, err) = notebridge(
        &lab,
        &state,
        &["migrate", "--to", &lab.target_page, "--update"],
    )
    .await;
    assert_eq!(code, 0, "{out}{err}");
    // same Notion pages, no duplicates, and the changed page holds its new body
    assert_eq!(lab.notion.pages_under(&lab.target_page).len(), pages_before);
    assert_mirrors(&lab, &user.id, &inventory(&state.db, "default"));
    let (code, out, err) = notebridge(&lab, &state, &["verify"]).await;
    assert_eq!(code, 0, "{out}{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dry_run_prints_the_plan_and_its_time_and_writes_nothing() {
    use notebridge_testkit::notion::Endpoint;
    let lab = Lab::start(LabConfig {
        notion_per_second: 150,
        ..LabConfig::default()
    })
    .await;
    let user = lab.add_user("default", generate(&spec(7)));
    let state = State::new();
    lab.sign_in(&Db::open(&state.db).unwrap(), "default", &user);
    let (code, out, err) = notebridge(
        &lab,
        &state,
        &["--json", "migrate", "--dry-run", "--to", &lab.target_page],
    )
    .await;
    assert_eq!(code, 0, "{out}{err}");
    let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(v["dry_run"], true);
    let a = &v["plan"]["accounts"][0];
    assert_eq!(a["account"], "default");
    assert_eq!(a["pages"], 7);
    // One image per page is not known before the pages are read: one file per page is assumed.
    assert_eq!(a["files"], 7);
    assert_eq!(a["graph_requests"], 14);
    assert_eq!(v["plan"]["files_per_page_measured"], false);
    assert!(v["plan"]["seconds"].as_u64().is_some(), "{v}");
    assert!(v["plan"]["notion_requests"].as_u64().unwrap() >= 7 * 2);
    // Nothing written to Notion (only the token and target checks) nor to the queue.
    let c = lab.notion.counters();
    let writes: u64 = c
        .per_endpoint
        .iter()
        .filter(|(e, _)| !matches!(e, Endpoint::UsersMe | Endpoint::GetPage))
        .map(|(_, n)| n)
        .sum();
    assert_eq!(writes, 0, "{:?}", c.per_endpoint);
    assert!(lab.notion.pages_under(&lab.target_page).is_empty());
    let jobs = counts(&state.db, "default");
    assert_eq!(
        jobs["queued"] + jobs["done"] + jobs["pages_total"],
        0,
        "{jobs:?}"
    );
    let plans: i64 = Db::open(&state.db)
        .unwrap()
        .read("probe", |c| {
            c.query_row("SELECT COUNT(*) FROM plans", [], |r| r.get(0))
        })
        .unwrap();
    assert_eq!(plans, 0);

    // In human form too; and the real run afterwards prints the same plan before its work.
    let (code, out, err) = notebridge(
        &lab,
        &state,
        &["migrate", "--dry-run", "--to", &lab.target_page],
    )
    .await;
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("plan: default: 7 pages"), "{out}");
    assert!(out.contains("requests/hour"), "{out}");
    assert!(out.contains("nothing was written"), "{out}");
    let (code, out, err) = notebridge(&lab, &state, &["migrate", "--to", &lab.target_page]).await;
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("plan: default: 7 pages"), "{out}");
    assert_eq!(counts(&state.db, "default")["pages_done"], 7);
    // Once pages were read the files per page are measured, and nothing is left.
    let (code, out, err) = notebridge(
        &lab,
        &state,
        &["--json", "migrate", "--dry-run", "--to", &lab.target_page],
    )
    .await;
    assert_eq!(code, 0, "{out}{err}");
    let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(v["plan"]["files_per_page_measured"], true);
    assert_eq!(v["plan"]["accounts"][0]["pages"], 0);
    assert_eq!(v["plan"]["accounts"][0]["graph_requests"], 0);
}
