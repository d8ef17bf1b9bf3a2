//! End to end under an unreliable Notion: the real binary migrates while 3 % of every write (page
//! creations, appends, link rewrites, and each File Upload step) is applied and then answered 504
//! (these pages fit one request each, so appends are few; the writer tests cover them).
//! Every page arrives once with every image and file attached, and `verify` agrees.

use crate::migrate_support;

use migrate_support::{assert_mirrors, counts, inventory, notebridge, State};
use notebridge::store::Db;
use notebridge_testkit::generator::{generate, NotebookSpec};
use notebridge_testkit::lab::{Lab, LabConfig};
use notebridge_testkit::notion::{Endpoint, FaultKind, FaultRule};

fn spec() -> NotebookSpec {
    NotebookSpec {
        notebooks: 1,
        section_groups_depth: 1,
        section_groups_per_container: 1,
        sections_per_container: 2,
        pages_per_section: 0,
        total_pages: Some(40),
        subpage_ratio: 0.3,
        images_per_page: 1,
        attachments_per_page: 1,
        resource_bytes: 4096,
        seed: 19,
        ..NotebookSpec::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_migration_under_3_percent_applied_then_504_arrives_with_every_file() {
    let lab = Lab::start(LabConfig {
        user_windows: "60/600ms,600/6s".into(),
        app_windows: "120/600ms,1200/6s".into(),
        notion_per_second: 150,
        ..LabConfig::default()
    })
    .await;
    let user = lab.add_user("alice", generate(&spec()));
    let state = State::new();
    lab.sign_in(&Db::open(&state.db).unwrap(), "alice", &user);
    // One sure hit on each kind of write (the ratio's hits depend on the order requests arrive in),
    // then 3 % of every write.
    for (e, skip) in [
        (Endpoint::CreatePage, 3),
        (Endpoint::UpdateBlock, 0),
        (Endpoint::CreateUpload, 2),
        (Endpoint::SendUpload, 2),
    ] {
        lab.notion.inject(
            FaultRule::new(FaultKind::AppliedThen504)
                .on(e)
                .after(skip)
                .times(1),
        );
    }
    lab.notion
        .inject(FaultRule::new(FaultKind::AppliedThen504).ratio(0.03));

    let (code, out, err) = notebridge(
        &lab,
        &state,
        &[
            "--json",
            "migrate",
            "--account",
            "alice",
            "--to",
            &lab.target_page,
        ],
    )
    .await;
    assert_eq!(code, 0, "stdout: {out}\nstderr: {err}");
    let summary: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(summary["pages_done"], 40);
    assert_eq!(summary["this_run"]["placeholders"], 0, "{summary}");
    let c = counts(&state.db, "alice");
    assert_eq!((c["failed"], c["pages_done"]), (0, 40));
    assert_mirrors(&lab, &user.id, &inventory(&state.db, "alice"));

    // The faults did hit the uploads' steps, not only pages and blocks.
    let hit = |e: Endpoint| {
        lab.notion
            .request_log()
            .iter()
            .filter(|r| r.endpoint == e && r.status == 504)
            .count()
    };
    for e in [
        Endpoint::CreatePage,
        Endpoint::UpdateBlock,
        Endpoint::CreateUpload,
        Endpoint::SendUpload,
    ] {
        assert!(hit(e) >= 1, "{e:?} was not hit");
    }
    assert!(
        lab.notion.counters().faults >= 6,
        "{:?}",
        lab.notion.counters()
    );

    lab.notion.clear_faults();
    let (code, out, err) = notebridge(&lab, &state, &["--json", "verify"]).await;
    assert_eq!(code, 0, "{out}{err}");
    let report: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(report["verdict"], "complete");
    assert_eq!(report["accounts"][0]["totals"]["ok"], 40);
}
