//! An item's page through its record's lifecycle (`notion::item`) against the test Notion server:
//! a creation whose answer was lost is found again by its title, never made twice, and a page
//! created by a process that no longer holds the run lock is never taken for recorded.

use crate::notion_support;

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use notebridge::failure::Classify;
use notebridge::notion::item::{self, ItemRecord};
use notebridge::notion::writer::{NewPage, WriteError};
use notebridge::store::jobs::RunToken;
use notebridge::store::notion_items::{ItemKind, ItemState, Stage, Written};
use notebridge::store::Db;
use notion_support::*;

fn lock(db: &Db, pid: i64, token: &str) -> RunToken {
    db.acquire_run_lock(pid, token, 0, Duration::from_secs(3600), |_| false)
        .unwrap()
        .unwrap()
}

/// The titles of the pages under `parent`, as Notion lists them.
async fn child_titles(s: &notebridge_testkit::notion::NotionServer, parent: &str) -> Vec<String> {
    client(s, 1000, 100)
        .children(parent)
        .await
        .unwrap()
        .iter()
        .filter(|b| b["type"] == "child_page" && b["in_trash"] != true)
        .map(|b| b["child_page"]["title"].as_str().unwrap_or("").to_owned())
        .collect()
}

#[tokio::test]
async fn an_intent_whose_creation_reached_notion_finds_that_page_and_makes_no_second() {
    let s = fast_server(41).await;
    let root = s.add_shared_page("Items");
    let t = tempfile::tempdir().unwrap();
    let db = Arc::new(Db::open(&t.path().join("s.db")).unwrap());
    let token = lock(&db, 1, "run");
    let record = ItemRecord {
        db: &db,
        token: &token,
        account: "acct",
        item_id: "p1",
        kind: ItemKind::Page,
    };
    let intent = db
        .record_intent(&token, "acct", "p1", ItemKind::Page, &root, "Lost")
        .unwrap();
    // The creation went out and was applied; its answer never came back.
    let lost = client(&s, 1000, 100)
        .create_page(&root, "Lost", &json_of(&[para("first")]))
        .await
        .unwrap()["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let blocks = [para("first")];
    let created = AtomicUsize::new(0);
    let page = NewPage {
        parent: &root,
        title: "Lost",
        blocks: &blocks,
        resources: &HashMap::new(),
    };
    let on_created = || {
        created.fetch_add(1, Ordering::SeqCst);
    };
    let (writing, _) = item::create(&writer(&s), record, Some(intent), page, &on_created)
        .await
        .unwrap();
    assert_eq!(writing.page_id(), lost);
    assert_eq!(created.load(Ordering::SeqCst), 1);
    assert_eq!(child_titles(&s, &root).await, ["Lost"]);
    let done = writing.written(&db, &token, &Written::default()).unwrap();
    let rec = db.notion_item("acct", "p1").unwrap().unwrap();
    assert_eq!(rec.state, ItemState::Complete(done));
}

#[tokio::test]
async fn a_page_created_after_the_lock_was_taken_over_is_unrecorded_and_found_by_the_new_holder() {
    let s = fast_server(42).await;
    let root = s.add_shared_page("Items");
    let t = tempfile::tempdir().unwrap();
    let db = Arc::new(Db::open(&t.path().join("s.db")).unwrap());
    let old = lock(&db, 1, "old run");
    let intent = db
        .record_intent(&old, "acct", "p1", ItemKind::Page, &root, "Taken over")
        .unwrap();
    // Another process takes the lock over (this one looked dead) while this one goes on.
    let new = lock(&db, 2, "new run");
    let record = |token| ItemRecord {
        db: &db,
        token,
        account: "acct",
        item_id: "p1",
        kind: ItemKind::Page,
    };
    let blocks = [para("body")];
    let page = NewPage {
        parent: &root,
        title: "Taken over",
        blocks: &blocks,
        resources: &HashMap::new(),
    };
    let stale = item::create(&writer(&s), record(&old), Some(intent), page, &|| {}).await;
    let Err(e @ WriteError::Unrecorded(_)) = stale else {
        panic!("a page created without its record must end the run: {stale:?}")
    };
    assert_eq!(e.class().code(), "run/never");
    let rec = db.notion_item("acct", "p1").unwrap().unwrap();
    assert_eq!(rec.state.stage(), Stage::Intended);
    // The holder resumes the intent: the page the other process made is found, not made again.
    let ItemState::Intended(intent) = rec.state else {
        unreachable!()
    };
    let (writing, _) = item::create(&writer(&s), record(&new), Some(intent), page, &|| {})
        .await
        .unwrap();
    assert_eq!(child_titles(&s, &root).await, ["Taken over"]);
    writing.written(&db, &new, &Written::default()).unwrap();
}
