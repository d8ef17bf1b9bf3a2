//! Layout `database` against the Notion test server: a section's database is made once (a crash
//! between its creation and its record, or a lost answer, finds it again), tags are added to the
//! schema once each (a crash between the schema update and its record sends no second update),
//! names Notion refuses are mapped, rows carry OneNote's properties and are updated in place, and
//! the rows are read back through paged data source queries.

use crate::notion_support::{client, fast_server};

use std::sync::Arc;

use chrono::{DateTime, Utc};
use notebridge::clock::Clock;
use notebridge::notion::database::{self, Databases, Row};
use notebridge::store::Db;
use notebridge_testkit::notion::{Endpoint, FaultKind, FaultRule, NotionServer};
use serde_json::json;

fn layout() -> (Arc<Db>, Databases) {
    let db = Arc::new(Db::open_in_memory().unwrap());
    let d = Databases::new(db.clone(), Clock::system());
    (db, d)
}

fn hits(s: &NotionServer, e: Endpoint) -> u64 {
    s.counters().per_endpoint.get(&e).copied().unwrap_or(0)
}

fn at(s: &str) -> Option<DateTime<Utc>> {
    Some(DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc))
}

#[tokio::test]
async fn a_section_gets_one_database_even_after_a_crash_before_its_record() {
    let s = fast_server(11).await;
    let root = s.add_shared_page("Notebook");
    let n = client(&s, 1000, 1000);
    let (_, first) = layout();
    let a = first
        .ensure_database(&n, "acct", "sec-1", &root, "Ideas")
        .await
        .unwrap();
    let again = first
        .ensure_database(&n, "acct", "sec-1", &root, "Ideas")
        .await
        .unwrap();
    assert_eq!(a, again);
    assert_eq!(hits(&s, Endpoint::CreateDatabase), 1);

    // A process that recorded the intent and died before recording the database: the state has
    // the intent only; the database is found among the parent's children, not made again.
    let (db2, second) = layout();
    db2.intend_section_database("acct", "sec-1", &root, "Ideas", 1)
        .unwrap();
    let found = second
        .ensure_database(&n, "acct", "sec-1", &root, "Ideas")
        .await
        .unwrap();
    assert_eq!(found, a);
    assert_eq!(hits(&s, Endpoint::CreateDatabase), 1);

    // Another section of the same name gets its own: the found one is held by a section already.
    let other = second
        .ensure_database(&n, "acct", "sec-2", &root, "Ideas")
        .await
        .unwrap();
    assert_ne!(other, a);
    assert_eq!(s.databases_under(&root).len(), 2);
}

#[tokio::test]
async fn a_lost_answer_to_the_creation_finds_the_database_it_made() {
    let s = fast_server(12).await;
    let root = s.add_shared_page("Notebook");
    let n = client(&s, 1000, 1000);
    s.inject(
        FaultRule::new(FaultKind::AppliedThen504)
            .on(Endpoint::CreateDatabase)
            .times(1),
    );
    let (db, d) = layout();
    let got = d
        .ensure_database(&n, "acct", "sec", &root, "Journal")
        .await
        .unwrap();
    assert_eq!(s.databases_under(&root).len(), 1);
    assert_eq!(s.databases_under(&root)[0].0, got.database_id);
    let rec = db.section_database("acct", "sec").unwrap().unwrap();
    assert_eq!(
        rec.created,
        Some((got.database_id.clone(), got.data_source_id.clone()))
    );
}

#[tokio::test]
async fn tags_are_added_once_each_and_refused_names_are_mapped() {
    let s = fast_server(13).await;
    let root = s.add_shared_page("Notebook");
    let n = client(&s, 1000, 1000);
    let (_, d) = layout();
    let sec = d
        .ensure_database(&n, "acct", "sec", &root, "Work")
        .await
        .unwrap();
    let ds = sec.data_source_id.clone();

    let tags = vec![
        "To Do".to_owned(),
        "Call back, later".to_owned(),
        "Important".to_owned(),
    ];
    let t1 = d.ensure_tags(&n, &ds, &tags).await.unwrap();
    assert_eq!(t1.names, vec!["To Do", "Call back; later", "Important"]);
    assert_eq!(t1.mapped.len(), 1);
    assert_eq!(t1.mapped[0].from, "Call back, later");
    assert_eq!(
        hits(&s, Endpoint::UpdateDataSource),
        1,
        "one update for the page's new tags"
    );

    // Known tags: no update; one new tag: one update.
    d.ensure_tags(&n, &ds, &tags[..2]).await.unwrap();
    assert_eq!(hits(&s, Endpoint::UpdateDataSource), 1);
    d.ensure_tags(&n, &ds, &["Question".to_owned(), "To Do".to_owned()])
        .await
        .unwrap();
    assert_eq!(hits(&s, Endpoint::UpdateDataSource), 2);
    let opts = s.schema(&ds).unwrap()["Tags"]["multi_select"]["options"]
        .as_array()
        .unwrap()
        .len();
    assert_eq!(opts, 4, "no option lost to a later update");

    // A crash after the schema update and before its record: the record says pending; the
    // schema is read and no second update is sent.
    let (db2, d2) = layout();
    db2.intend_database_tag(&ds, "Question", "Question")
        .unwrap();
    let t = d2
        .ensure_tags(&n, &ds, &["Question".to_owned()])
        .await
        .unwrap();
    assert_eq!(t.names, vec!["Question"]);
    assert_eq!(hits(&s, Endpoint::UpdateDataSource), 2);
    assert!(db2.database_tags(&ds).unwrap().iter().all(|t| t.added));
}

#[tokio::test]
async fn rows_carry_onenote_properties_update_in_place_and_read_back_paged() {
    let s = fast_server(14).await;
    let root = s.add_shared_page("Notebook");
    let n = client(&s, 1000, 1000);
    let (_, d) = layout();
    let sec = d
        .ensure_database(&n, "acct", "sec", &root, "Work")
        .await
        .unwrap();
    let ds = sec.data_source_id.clone();
    let tags = d
        .ensure_tags(&n, &ds, &["To Do".to_owned(), "A, B".to_owned()])
        .await
        .unwrap();
    let row = Row {
        title: "Plan".into(),
        created: at("2020-01-02T03:04:05Z"),
        modified: at("2021-06-07T08:09:10Z"),
        tags: tags.names.clone(),
        author: Some("Ada Lovelace".into()),
        order: 0,
        level: 0,
        link: Some("https://onenote.example/page?id=1".into()),
    };
    let body = vec![json!({"paragraph": {"rich_text": [{"text": {"content": "hello"}}]}})];
    let page = database::create_row(&n, &ds, &row, &body).await.unwrap();
    let id = page["id"].as_str().unwrap().to_owned();
    let rows = s.rows(&sec.database_id);
    assert_eq!(rows.len(), 1);
    let p = &rows[0].properties;
    assert_eq!(p["Name"], "Plan");
    assert_eq!(p["Created"], "2020-01-02T03:04:05.000Z");
    assert_eq!(p["Modified"], "2021-06-07T08:09:10.000Z");
    assert_eq!(p["Tags"], "To Do, A; B");
    assert_eq!(p["Author"], "Ada Lovelace");
    assert_eq!(p["Order"], "0");
    assert_eq!(p["Level"], "0");
    assert_eq!(p["OneNote link"], "https://onenote.example/page?id=1");
    let dump = s.dump(&root).unwrap();
    assert_eq!(dump.children[0].kind, "database");
    assert_eq!(dump.children[0].children[0].children[0].text, "hello");

    // `--update` with changed tags: the same row, its new values.
    let newer = d
        .ensure_tags(&n, &ds, &["Important".to_owned()])
        .await
        .unwrap();
    let changed = Row {
        tags: newer.names,
        modified: at("2022-01-01T00:00:00Z"),
        ..row.clone()
    };
    database::update_row(&n, &id, &changed).await.unwrap();
    let rows = s.rows(&sec.database_id);
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].id, id);
    assert_eq!(rows[0].properties["Tags"], "Important");
    assert_eq!(rows[0].properties["Modified"], "2022-01-01T00:00:00.000Z");

    // Over a hundred rows come back through the query's pages.
    for i in 1..=104u32 {
        let r = Row {
            title: format!("p{i}"),
            order: i,
            ..Row::default()
        };
        database::create_row(&n, &ds, &r, &[]).await.unwrap();
    }
    let before = hits(&s, Endpoint::QueryDataSource);
    let all = database::rows(&n, &ds).await.unwrap();
    assert_eq!(all.len(), 105);
    assert_eq!(hits(&s, Endpoint::QueryDataSource) - before, 2);
    assert_eq!(database::row_title(&all[104]), "p104");
}

#[tokio::test]
async fn verify_checks_each_planned_row_is_held_once() {
    let s = fast_server(15).await;
    let root = s.add_shared_page("Notebook");
    let n = client(&s, 1000, 1000);
    let (_, d) = layout();
    let sec = d
        .ensure_database(&n, "acct", "sec", &root, "Work")
        .await
        .unwrap();
    let mut planned = Vec::new();
    for i in 0..103u32 {
        let r = Row {
            title: format!("p{i}"),
            order: i,
            ..Row::default()
        };
        let v = database::create_row(&n, &sec.data_source_id, &r, &[])
            .await
            .unwrap();
        planned.push((v["id"].as_str().unwrap().to_owned(), r.title));
    }
    let check = database::check_rows(&n, &sec.data_source_id, &planned)
        .await
        .unwrap();
    assert!(check.complete(), "{check:?}");
    assert_eq!(check.found, 103);

    // A row made twice and one planned but gone are both told.
    let twice = Row {
        title: "p7".into(),
        ..Row::default()
    };
    database::create_row(&n, &sec.data_source_id, &twice, &[])
        .await
        .unwrap();
    planned.push((uuid::Uuid::new_v4().to_string(), "gone".into()));
    let check = database::check_rows(&n, &sec.data_source_id, &planned)
        .await
        .unwrap();
    assert!(!check.complete());
    assert_eq!(check.repeated, vec![("p7".to_owned(), 2)]);
    assert_eq!(check.missing, vec![planned.last().unwrap().0.clone()]);
}
