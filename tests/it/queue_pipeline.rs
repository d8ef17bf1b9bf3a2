//! The queue in process (issue 15 point 3): a section's pages are fetched from Graph while their
//! earlier siblings are still being created in Notion, created in OneNote's order all the same, and
//! never more of them ahead than the workers.

use crate::migrate_support::assert_mirrors;

use std::sync::atomic::Ordering;
use std::sync::Arc;

use notebridge::clock::{Clock, Jitter};
use notebridge::graph::GraphClient;
use notebridge::net::Reachability;
use notebridge::notion::client::NotionClient;
use notebridge::notion::rate::NotionRate;
use notebridge::queue::{Migration, RunEnd, RunOptions};
use notebridge::store::inventory::ScanScope;
use notebridge::store::Db;
use notebridge_testkit::generator::{generate, NotebookSpec};
use notebridge_testkit::lab::{expected_inventory, Lab, LabConfig};

/// One notebook with one long section: every page is a sibling of the others.
fn one_section(pages: usize) -> NotebookSpec {
    NotebookSpec {
        notebooks: 1,
        section_groups_depth: 0,
        sections_per_container: 1,
        pages_per_section: pages,
        total_pages: None,
        subpage_ratio: 0.0,
        images_per_page: 1,
        attachments_per_page: 1,
        resource_bytes: 2048,
        seed: 3,
        ..NotebookSpec::default()
    }
}

/// A migration of `alice`'s planned notebook through the lab, built as `migrate` builds it.
fn migration(lab: &Lab, db: &Arc<Db>, path: &std::path::Path) -> Migration {
    let settings = lab.settings(path);
    let clock = Clock::system();
    let reach = Reachability::new(clock.clone());
    let graph = GraphClient::open_sharing(
        db.clone(),
        &settings,
        clock.clone(),
        Jitter::seeded(1),
        reach,
    )
    .unwrap();
    let rate = Arc::new(NotionRate::open(
        db.clone(),
        settings.notion_token.as_deref().unwrap(),
        settings.notion_rate,
        clock.clone(),
    ));
    let notion = NotionClient::new(
        &settings.notion_url,
        settings.notion_token.as_deref().unwrap(),
        rate,
        Jitter::seeded(2),
    );
    // The run lock, as `migrate` takes it before running the queue.
    let lock = db
        .acquire_run_lock(
            std::process::id().into(),
            "queue-pipeline",
            clock.now_ms(),
            std::time::Duration::from_secs(90),
            |_| true,
        )
        .unwrap()
        .unwrap();
    Migration::new(db.clone(), graph, notion, 5 * 1024 * 1024, clock, lock)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sections_pages_are_fetched_ahead_of_their_turn_and_created_in_order() {
    let lab = Lab::start(LabConfig {
        user_windows: "60/600ms,600/6s".into(),
        app_windows: "120/600ms,1200/6s".into(),
        notion_per_second: 300,
        ..LabConfig::default()
    })
    .await;
    let notes = generate(&one_section(40));
    let user = lab.add_user("alice", notes.clone());
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state.db");
    let db = Arc::new(Db::open(&path).unwrap());
    lab.sign_in(&db, "alice", &user);
    let inv = expected_inventory(&notes);
    db.save_scan("alice", &inv, &ScanScope::All, 1).unwrap();
    let m = migration(&lab, &db, &path);
    db.create_plan(m.owner(), "alice", &lab.target_page, &inv, 1)
        .unwrap();
    let workers = 4;
    let end = m
        .run(&RunOptions {
            accounts: vec!["alice".into()],
            deadline: None,
            workers,
        })
        .await
        .unwrap();
    assert_eq!(end, RunEnd::Finished);
    let s = m.stats();
    assert_eq!(s.pages.load(Ordering::SeqCst), 40);
    // Creation order is OneNote's, and every body is whole.
    assert_mirrors(&lab, &user.id, &db.inventory("alice").unwrap());
    // Pages were held ahead of their turn (their content and files fetched while earlier siblings
    // were created), never more than one per worker, and nothing is ahead once the run is over.
    let peak = s.ahead_peak.load(Ordering::SeqCst);
    assert!(
        (2..=workers as u64).contains(&peak),
        "pages ahead at once: {peak} (workers: {workers})"
    );
    assert_eq!(s.ahead.load(Ordering::SeqCst), 0);
    assert!(s.prefetched_bytes.load(Ordering::SeqCst) >= 40 * 2 * 2048);
    // A file fetched ahead is handed to the writer: no file is downloaded twice.
    let log = lab.graph.log();
    let mut files: Vec<&str> = log
        .iter()
        .map(|e| e.path.as_str())
        .filter(|p| p.contains("/resources/"))
        .collect();
    let all = files.len();
    files.sort_unstable();
    files.dedup();
    assert_eq!(files.len(), all, "a file was downloaded twice");
    assert!(all >= 80, "the files were downloaded: {all}");
}
