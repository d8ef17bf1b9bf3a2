//! A OneNote page as a row of its section's database (`notion::database_row`) against the Notion
//! test server: the row is created once with its properties and its body written through the
//! writer's steps; a creation whose answer was lost, or whose record a crash prevented, is found
//! again by a query of the data source, never made twice.

use crate::notion_support::*;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use notebridge::clock::Clock;
use notebridge::notion::database::{self, Databases, Row};
use notebridge::notion::database_row;
use notebridge::notion::item::ItemRecord;
use notebridge::store::jobs::RunToken;
use notebridge::store::notion_items::{ItemKind, ItemState, Written};
use notebridge::store::Db;
use notebridge_testkit::notion::{Endpoint, FaultKind, FaultRule, NotionServer};

fn lock(db: &Db) -> RunToken {
    db.acquire_run_lock(1, "run", 0, Duration::from_secs(3600), |_| false)
        .unwrap()
        .unwrap()
}

async fn section(s: &NotionServer, db: &Arc<Db>) -> (String, String) {
    let root = s.add_shared_page("Notebook");
    let d = Databases::new(db.clone(), Clock::system());
    let sec = d
        .ensure_database(&client(s, 1000, 1000), "acct", "sec", &root, "Work")
        .await
        .unwrap();
    (sec.database_id, sec.data_source_id)
}

fn row(title: &str, order: u32) -> Row {
    Row {
        title: title.into(),
        order,
        author: Some("Ada".into()),
        ..Row::default()
    }
}

#[tokio::test]
async fn a_row_is_created_with_its_properties_and_its_whole_body() {
    let s = fast_server(21).await;
    let t = tempfile::tempdir().unwrap();
    let db = Arc::new(Db::open(&t.path().join("s.db")).unwrap());
    let token = lock(&db);
    let (dbid, ds) = section(&s, &db).await;
    // More blocks than one request takes: the body goes on in appends.
    let blocks: Vec<_> = (0..130).map(|i| para(&format!("line {i}"))).collect();
    let item = ItemRecord {
        db: &db,
        token: &token,
        account: "acct",
        item_id: "p1",
        kind: ItemKind::Page,
    };
    let (writing, stats) = database_row::create(
        &writer(&s),
        item,
        None,
        &ds,
        &row("Plan", 0),
        &blocks,
        &HashMap::new(),
        &|| {},
    )
    .await
    .unwrap();
    assert_eq!(stats.blocks, 130);
    let rows = s.rows(&dbid);
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].id, writing.page_id());
    assert_eq!(rows[0].properties["Author"], "Ada");
    let dump = s.dump(&dbid).unwrap();
    assert_eq!(dump.children[0].children.len(), 130);
    assert_eq!(dump.children[0].children[129].text, "line 129");
    let done = writing.written(&db, &token, &Written::default()).unwrap();
    let rec = db.notion_item("acct", "p1").unwrap().unwrap();
    assert_eq!(rec.state, ItemState::Complete(done));
}

#[tokio::test]
async fn a_lost_answer_or_a_crash_before_the_record_finds_the_row_it_made() {
    let s = fast_server(22).await;
    let t = tempfile::tempdir().unwrap();
    let db = Arc::new(Db::open(&t.path().join("s.db")).unwrap());
    let token = lock(&db);
    let (dbid, ds) = section(&s, &db).await;
    let item = |id: &'static str| ItemRecord {
        db: &db,
        token: &token,
        account: "acct",
        item_id: id,
        kind: ItemKind::Page,
    };

    // The creation is applied and its answer lost.
    s.inject(
        FaultRule::new(FaultKind::AppliedThen504)
            .on(Endpoint::CreatePage)
            .times(1),
    );
    let (w1, _) = database_row::create(
        &writer(&s),
        item("p1"),
        None,
        &ds,
        &row("Same title", 0),
        &[para("one")],
        &HashMap::new(),
        &|| {},
    )
    .await
    .unwrap();
    assert_eq!(s.rows(&dbid).len(), 1);
    w1.written(&db, &token, &Written::default()).unwrap();

    // The intent was recorded and the row created by a process killed before it recorded it:
    // the next attempt finds it (not p1's row of the same title, which is held) and writes its
    // body.
    let intent = db
        .record_intent(&token, "acct", "p2", ItemKind::Page, &ds, "Same title")
        .unwrap();
    let made = database::create_row(&client(&s, 1000, 1000), &ds, &row("Same title", 1), &[])
        .await
        .unwrap();
    let (w2, _) = database_row::create(
        &writer(&s),
        item("p2"),
        Some(intent),
        &ds,
        &row("Same title", 1),
        &[para("two")],
        &HashMap::new(),
        &|| {},
    )
    .await
    .unwrap();
    assert_eq!(w2.page_id(), made["id"].as_str().unwrap());
    let rows = s.rows(&dbid);
    assert_eq!(rows.len(), 2, "nothing twice");
    let dump = s.dump(&dbid).unwrap();
    let bodies: Vec<&str> = dump
        .children
        .iter()
        .map(|r| r.children[0].text.as_str())
        .collect();
    assert_eq!(bodies, ["one", "two"]);
}
