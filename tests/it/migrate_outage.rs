//! The network goes away in the middle of a migration: Graph, Notion and the sign-in service all
//! stop listening (open connections cut) and come back on the same addresses. The run waits, says
//! so in `status`, fails nothing, and goes on; past `--max-duration` it parks and exits 75.

use crate::migrate_support;

use std::time::Duration;

use crate::bin_support::Start;
use migrate_support::{assert_mirrors, command, counts, inventory, notebridge, State};
use notebridge::store::Db;
use notebridge_testkit::generator::{generate, NotebookSpec};
use notebridge_testkit::lab::{Lab, LabConfig};
use serde_json::Value;

/// Access tokens live 8 s, so the one taken at the start is due for refresh (its last fifth) about
/// 6.4 s in: inside an outage that starts 2 s in and lasts 10 s.
async fn lab(pages: usize) -> (Lab, State, notebridge_testkit::TestUser) {
    let lab = Lab::start(LabConfig {
        notion_per_second: 6,
        access_lifetime: Duration::from_secs(8),
        ..LabConfig::default()
    })
    .await;
    let user = lab.add_user(
        "default",
        generate(&NotebookSpec {
            total_pages: Some(pages),
            pages_per_section: 0,
            images_per_page: 1,
            seed: 31,
            ..NotebookSpec::default()
        }),
    );
    let state = State::new();
    lab.sign_in(&Db::open(&state.db).unwrap(), "default", &user);
    (lab, state, user)
}

/// Waits until the migration has written its first pages (so the outage falls mid-run).
async fn wait_for_pages(state: &State, n: i64) {
    for _ in 0..400 {
        if Db::open(&state.db)
            .is_ok_and(|db| db.job_counts("default").is_ok_and(|c| c.pages_done >= n))
        {
            return;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("the migration never got going");
}

/// Waits until all three services listen again after [`Lab::outage_for`].
async fn wait_until_back(lab: &Lab) {
    for _ in 0..800 {
        if !(lab.auth.outage().is_down()
            || lab.graph.outage().is_down()
            || lab.notion.outage().is_down())
        {
            return;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("the services never came back");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn all_three_services_gone_for_10s_mid_migration_the_run_waits_and_finishes() {
    let (lab, state, user) = lab(16).await;
    let run = command(&lab, &state, &["migrate", "--to", &lab.target_page]).start();
    wait_for_pages(&state, 2).await;
    let refreshes_before = lab.auth.counters().refreshes;
    let now = notebridge::clock::Clock::system().now_ms();
    lab.outage_for(Duration::from_secs(10));
    // The access token in use now is due for refresh (its last fifth) inside the outage.
    let a = Db::open(&state.db)
        .unwrap()
        .account("default")
        .unwrap()
        .unwrap();
    let exp = a.access_expires_at.expect("an access token in use");
    let due = exp - (exp - a.updated_at) / 5;
    assert!(
        due > now && due < now + 10_000,
        "refresh due {} ms after the outage began",
        due - now
    );
    tokio::time::sleep(Duration::from_secs(4)).await;
    // `status` reads the database only: it works during the outage and shows the wait.
    let (code, out, err) = notebridge(&lab, &state, &["status"]).await;
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("waiting: network unreachable since"),
        "status shows the wait:\n{out}"
    );
    let out = run.wait_with_output().await.unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("network unreachable since"),
        "the progress lines show the wait:\n{stderr}"
    );
    assert!(
        lab.auth.counters().refreshes > refreshes_before,
        "the token due inside the outage was refreshed after it"
    );
    let (code, out, err) = notebridge(&lab, &state, &["--json", "status"]).await;
    assert_eq!(code, 0, "{out}{err}");
    let v: Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(v["accounts"][0]["failures"], serde_json::json!([]), "{v}");
    assert_eq!(counts(&state.db, "default")["failed"], 0);
    assert_mirrors(&lab, &user.id, &inventory(&state.db, "default"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_outage_past_max_duration_parks_the_work_with_75_and_fails_nothing() {
    let (lab, state, user) = lab(16).await;
    let run = command(
        &lab,
        &state,
        &["migrate", "--to", &lab.target_page, "--max-duration", "5s"],
    )
    .start();
    wait_for_pages(&state, 1).await;
    lab.outage_for(Duration::from_secs(8));
    let out = run.wait_with_output().await.unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(75), "{stderr}");
    let c = counts(&state.db, "default");
    assert_eq!((c["failed"], c["running"]), (0, 0), "{c:?}");
    assert!(c["pages_done"] < 16, "{c:?}");
    // After the outage, the next run goes on and finishes. (Waiting for the services to listen again
    // instead of a fixed 8 s after the run's exit, which came a few seconds into the outage.)
    wait_until_back(&lab).await;
    let (code, out, err) = notebridge(&lab, &state, &["migrate", "--resume"]).await;
    assert_eq!(code, 0, "{out}{err}");
    assert_mirrors(&lab, &user.id, &inventory(&state.db, "default"));
}
