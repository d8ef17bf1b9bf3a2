//! Notion refusals that no page can fix, through the real binary: the Free plan's workspace block
//! limit and a missing capability stop the run at once with exit 2 and a message saying what to do,
//! nothing marked failed, and `--resume` completes once the cause is gone; a bad token and a target
//! not shared are told apart with their own messages.

use crate::migrate_support;

use crate::bin_support::Start;
use migrate_support::{assert_mirrors, command, counts, inventory, notebridge, State};
use notebridge::store::Db;
use notebridge_testkit::generator::{generate, NotebookSpec};
use notebridge_testkit::lab::{Lab, LabConfig};

fn fast() -> LabConfig {
    LabConfig {
        user_windows: "60/600ms,600/6s".into(),
        app_windows: "120/600ms,1200/6s".into(),
        notion_per_second: 150,
        ..LabConfig::default()
    }
}

fn spec(pages: usize, seed: u64) -> NotebookSpec {
    NotebookSpec {
        notebooks: 1,
        section_groups_depth: 1,
        section_groups_per_container: 1,
        sections_per_container: 2,
        pages_per_section: 0,
        total_pages: Some(pages),
        subpage_ratio: 0.3,
        images_per_page: 1,
        attachments_per_page: 0,
        resource_bytes: 2048,
        seed,
        ..NotebookSpec::default()
    }
}

fn refused_403(lab: &Lab) -> usize {
    lab.notion
        .request_log()
        .iter()
        .filter(|r| r.status == 403)
        .count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_block_limit_stops_the_run_with_exit_2_and_resume_finishes_after_the_upgrade() {
    let lab = Lab::start(fast()).await;
    let user = lab.add_user("alice", generate(&spec(30, 41)));
    let state = State::new();
    lab.sign_in(&Db::open(&state.db).unwrap(), "alice", &user);
    // Room for the notebook's section pages and a few pages, not for all 30.
    lab.notion
        .set_block_limit(Some(lab.notion.block_count() + 150));

    let args = ["migrate", "--account", "alice", "--to", &lab.target_page];
    let (code, out, err) = notebridge(&lab, &state, &args).await;
    assert_eq!(code, 2, "stdout: {out}\nstderr: {err}");
    assert!(err.contains("workspace block limit"), "{err}");
    assert!(err.contains("upgrade the workspace"), "{err}");
    assert!(err.contains("migrate --resume"), "{err}");
    assert!(!err.contains("share the target"), "{err}");
    let c = counts(&state.db, "alice");
    assert_eq!(c["failed"], 0, "nothing failed: {c:?}");
    assert!(
        c["pages_done"] > 0 && c["pages_done"] < 30,
        "stopped part way: {c:?}"
    );
    // The run stopped at the first refusal: only the pages already in flight met it too.
    let refused = refused_403(&lab);
    assert!((1..=8).contains(&refused), "{refused} refused requests");

    // The workspace is upgraded: the rest arrives, nothing doubled.
    lab.notion.set_block_limit(None);
    let (code, out, err) = notebridge(&lab, &state, &["migrate", "--resume"]).await;
    assert_eq!(code, 0, "stdout: {out}\nstderr: {err}");
    let c = counts(&state.db, "alice");
    assert_eq!((c["pages_done"], c["failed"]), (30, 0));
    assert_mirrors(&lab, &user.id, &inventory(&state.db, "alice"));
    let (code, out, err) = notebridge(&lab, &state, &["--json", "verify"]).await;
    assert_eq!(code, 0, "{out}{err}");
    let report: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(report["verdict"], "complete");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bad_token_an_unshared_target_and_a_missing_capability_each_say_what_to_do() {
    let lab = Lab::start(fast()).await;
    let user = lab.add_user("alice", generate(&spec(6, 42)));
    let state = State::new();
    lab.sign_in(&Db::open(&state.db).unwrap(), "alice", &user);
    let args = ["migrate", "--account", "alice", "--to", &lab.target_page];

    // 401: the token
    let mut cmd = command(&lab, &state, &args);
    cmd.env("NOTION_TOKEN", "secret_wrong");
    let out = cmd.run_to_end().await;
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("Notion does not accept NOTION_TOKEN"), "{err}");
    assert!(!err.contains("share the target"), "{err}");

    // 404: the target not shared
    let (code, _, err) = notebridge(
        &lab,
        &state,
        &[
            "migrate",
            "--account",
            "alice",
            "--to",
            "0123456789abcdef0123456789abcdef",
        ],
    )
    .await;
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("not shared with the integration"), "{err}");
    assert!(!err.contains("NOTION_TOKEN"), "{err}");

    // 403 on insert: the capability; nothing failed, and the run completes once it is given
    lab.notion.set_insert_content(false);
    let (code, out, err) = notebridge(&lab, &state, &args).await;
    assert_eq!(code, 2, "{out}{err}");
    assert!(err.contains("lacks a capability"), "{err}");
    assert!(err.contains("Insert content"), "{err}");
    assert!(!err.contains("block limit"), "{err}");
    assert_eq!(counts(&state.db, "alice")["failed"], 0);
    assert!(refused_403(&lab) <= 8);
    lab.notion.set_insert_content(true);
    let (code, out, err) = notebridge(&lab, &state, &["migrate", "--resume"]).await;
    assert_eq!(code, 0, "{out}{err}");
    assert_mirrors(&lab, &user.id, &inventory(&state.db, "alice"));
}
