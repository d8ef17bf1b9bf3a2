//! The Notion test server's moves, trash and renames of pages and databases (what keeping Notion
//! in step with OneNote needs), over real HTTP: `POST /v1/pages/{id}/move` as the reference
//! documents it (developers.notion.com/reference/move-page, its documented 400 and 404 answers),
//! `PATCH /v1/databases/{id}`, trash through `PATCH /v1/pages/{id}`, and the person switches.

use notebridge_testkit::notion::{Endpoint, FaultKind, FaultRule, NotionServer};
use reqwest::Method;
use serde_json::{json, Value};

use super::testserver_notion::{fast, para, Api};

/// 2026-03-02T09:00:42.123Z.
const T0: i64 = 1_772_442_042_123;

async fn page(api: &Api, parent: &str, title: &str) -> String {
    let (st, v) = api.create_page(parent, title, json!([para(title)])).await;
    assert_eq!(st, 200, "{v}");
    v["id"].as_str().unwrap().to_owned()
}

async fn move_to(api: &Api, id: &str, parent: Value) -> (u16, Value) {
    api.call(
        Method::POST,
        &format!("pages/{id}/move"),
        Some(json!({ "parent": parent })),
    )
    .await
}

/// A database with a title and a text column; (database id, data source id).
async fn database(api: &Api, parent: &str, title: &str) -> (String, String) {
    let db = api
        .ok(
            Method::POST,
            "databases",
            Some(json!({
                "parent": {"type": "page_id", "page_id": parent},
                "title": [{"text": {"content": title}}],
                "initial_data_source": {"properties": {
                    "Name": {"title": {}},
                    "Note": {"rich_text": {}},
                }},
            })),
        )
        .await;
    let ds = db["data_sources"][0]["id"].as_str().unwrap().to_owned();
    (db["id"].as_str().unwrap().to_owned(), ds)
}

async fn row(api: &Api, ds: &str, name: &str, note: &str) -> String {
    let v = api
        .ok(
            Method::POST,
            "pages",
            Some(json!({
                "parent": {"type": "data_source_id", "data_source_id": ds},
                "properties": {
                    "Name": {"title": [{"text": {"content": name}}]},
                    "Note": {"rich_text": [{"text": {"content": note}}]},
                },
                "children": [para(&format!("body of {name}"))],
            })),
        )
        .await;
    v["id"].as_str().unwrap().to_owned()
}

async fn query_titles(api: &Api, ds: &str) -> Vec<String> {
    let v = api
        .ok(
            Method::POST,
            &format!("data_sources/{ds}/query"),
            Some(json!({})),
        )
        .await;
    v["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            r["properties"]["Name"]["title"][0]["plain_text"]
                .as_str()
                .unwrap_or("")
                .to_owned()
        })
        .collect()
}

#[tokio::test]
async fn a_moved_page_keeps_its_id_blocks_and_children_and_goes_last_under_its_new_parent() {
    let s = NotionServer::start(fast()).await;
    let api = Api::new(&s);
    let root = s.add_shared_page("Root");
    let a = page(&api, &root, "A").await;
    let b = page(&api, &root, "B").await;
    let x = page(&api, &a, "X").await;
    let after_x = page(&api, &a, "After X").await;
    let y = page(&api, &x, "Y").await;
    let c = page(&api, &b, "C").await;
    let before = s.dump(&x).unwrap();
    let writes = s.counters().changing_writes();

    // Two minutes later; the SDK's example leaves `type` out.
    s.stamp_writes_at(Some(T0 + 120_000));
    let (st, v) = move_to(&api, &x, json!({"page_id": b})).await;
    assert_eq!(st, 200, "{v}");
    assert_eq!(v["object"], "page");
    assert_eq!(v["id"], x.as_str());
    assert_eq!(v["parent"], json!({"type": "page_id", "page_id": b}));
    assert_eq!(v["last_edited_time"], "2026-03-02T09:02:00.000Z");
    assert_eq!(v["properties"]["title"]["title"][0]["plain_text"], "X");

    assert_eq!(s.children_titles(&a), ["After X"]);
    assert_eq!(s.children_titles(&b), ["C", "X"]);
    assert_eq!(
        s.dump(&x).unwrap(),
        before,
        "blocks and child pages go along"
    );
    assert_eq!(
        s.parent_of(&y),
        Some(json!({"type": "page_id", "page_id": x}))
    );
    let listed = api.children(&b).await;
    let last = listed.last().unwrap();
    assert_eq!(last["type"], "child_page");
    assert_eq!(last["id"], x.as_str());
    // Both parents' content changed.
    for p in [&a, &b] {
        let got = api.ok(Method::GET, &format!("pages/{p}"), None).await;
        assert_eq!(got["last_edited_time"], "2026-03-02T09:02:00.000Z");
    }
    // A write among the writes, logged as a move.
    assert_eq!(s.counters().changing_writes(), writes + 1);
    assert_eq!(s.counters().per_endpoint[&Endpoint::MovePage], 1);
    let logged = s
        .request_log()
        .into_iter()
        .find(|l| l.endpoint == Endpoint::MovePage)
        .unwrap();
    assert_eq!(
        (logged.method.as_str(), logged.path, logged.status),
        ("POST", format!("/v1/pages/{x}/move"), 200)
    );

    // With `type` and an id without dashes; back to the first parent, last again.
    let (st, v) = move_to(
        &api,
        &x,
        json!({"type": "page_id", "page_id": a.replace('-', "")}),
    )
    .await;
    assert_eq!(st, 200, "{v}");
    assert_eq!(s.children_titles(&a), ["After X", "X"]);
    assert_eq!(s.children_titles(&b), ["C"]);
    let _ = (after_x, c);
}

#[tokio::test]
async fn a_move_the_reference_refuses_is_refused_and_changes_nothing() {
    let s = NotionServer::start(fast()).await;
    let api = Api::new(&s);
    let root = s.add_shared_page("Root");
    let a = page(&api, &root, "A").await;
    let x = page(&api, &a, "X").await;
    let y = page(&api, &x, "Y").await;
    let (db, ds) = database(&api, &root, "Section").await;
    let block = api.children(&x).await[0]["id"].as_str().unwrap().to_owned();
    let gone = page(&api, &root, "Gone").await;
    api.ok(
        Method::PATCH,
        &format!("pages/{gone}"),
        Some(json!({"in_trash": true})),
    )
    .await;
    let trashed_child = page(&api, &a, "Trashed child").await;
    api.ok(
        Method::PATCH,
        &format!("pages/{trashed_child}"),
        Some(json!({"in_trash": true})),
    )
    .await;
    let other = s.add_shared_page("Other workspace page");
    s.unshare(&other);
    let nobody = "3c90c3cc-0d44-4b50-8888-8dd25736052a";

    let bad = |msg: &'static str| {
        move |r: (u16, Value)| {
            assert_eq!(r.0, 400, "{}", r.1);
            assert_eq!(r.1["code"], "validation_error", "{}", r.1);
            let m = r.1["message"].as_str().unwrap();
            assert!(m.contains(msg), "{m:?} should say {msg:?}");
        }
    };
    // What is moved: a database or a block is no page; a trashed page stays where it is.
    bad("Moving databases or other block types")(move_to(&api, &db, json!({"page_id": a})).await);
    bad("Moving databases or other block types")(
        move_to(&api, &block, json!({"page_id": a})).await,
    );
    bad("is in trash and cannot be moved")(move_to(&api, &gone, json!({"page_id": a})).await);
    // Where to: a page, not a database (even with one source) nor a block, nor a trashed page.
    bad("body.parent.page_id should be a page")(move_to(&api, &x, json!({"page_id": db})).await);
    bad("body.parent.page_id should be a page")(move_to(&api, &x, json!({"page_id": block})).await);
    bad("archived")(move_to(&api, &x, json!({"page_id": gone})).await);
    bad("archived")(move_to(&api, &y, json!({"page_id": trashed_child})).await);
    // Not under itself nor its own descendant, and not where it already is.
    bad("Parent ID must be different from the child ID")(
        move_to(&api, &x, json!({"page_id": x})).await,
    );
    bad("cannot be under the hierarchy of child")(move_to(&api, &a, json!({"page_id": y})).await);
    bad("New parent must be different from the current parent")(
        move_to(&api, &x, json!({"page_id": a})).await,
    );
    // The body: one of the two keys, a `type` that names it, nothing else.
    bad("body.parent.type")(
        move_to(&api, &x, json!({"type": "data_source_id", "page_id": root})).await,
    );
    bad("exactly one of")(move_to(&api, &x, json!({"page_id": root, "data_source_id": ds})).await);
    bad("exactly one of")(move_to(&api, &x, json!({"type": "page_id"})).await);
    bad("body.parent.database_id should be not present")(
        move_to(&api, &x, json!({"database_id": db})).await,
    );
    bad("should be a valid uuid")(move_to(&api, &x, json!({"page_id": "nope"})).await);
    bad("body.after should be not present")(
        api.call(
            Method::POST,
            &format!("pages/{x}/move"),
            Some(json!({"parent": {"page_id": root}, "after": a})),
        )
        .await,
    );
    bad("body.parent should be defined")(
        api.call(Method::POST, &format!("pages/{x}/move"), Some(json!({})))
            .await,
    );
    // What the token cannot reach: 404.
    for (id, parent) in [
        (nobody, json!({"page_id": root})),
        (other.as_str(), json!({"page_id": root})),
        (x.as_str(), json!({"page_id": nobody})),
        (x.as_str(), json!({"page_id": other})),
        (x.as_str(), json!({"data_source_id": nobody})),
    ] {
        let (st, v) = move_to(&api, id, parent).await;
        assert_eq!(
            (st, v["code"].as_str()),
            (404, Some("object_not_found")),
            "{v}"
        );
    }
    // Without the update content capability: 403, before anything else is looked at.
    s.set_update_content(false);
    let (st, v) = move_to(&api, &x, json!({"page_id": root})).await;
    assert_eq!(
        (st, v["code"].as_str()),
        (403, Some("restricted_resource")),
        "{v}"
    );
    s.set_update_content(true);

    assert_eq!(
        s.parent_of(&x),
        Some(json!({"type": "page_id", "page_id": a}))
    );
    assert_eq!(
        s.parent_of(&y),
        Some(json!({"type": "page_id", "page_id": x}))
    );
    assert_eq!(s.children_titles(&a), ["X"]);
    assert_eq!(s.children_titles(&root), ["A", "Section"]);
    assert_eq!(s.counters().per_endpoint[&Endpoint::MovePage], 23);
    assert_eq!(
        s.request_log()
            .iter()
            .filter(|l| l.endpoint == Endpoint::MovePage && l.status == 200)
            .count(),
        0
    );
}

#[tokio::test]
async fn a_page_moved_into_a_data_source_is_a_row_and_a_row_moved_out_keeps_only_its_title() {
    let s = NotionServer::start(fast()).await;
    let api = Api::new(&s);
    let root = s.add_shared_page("Root");
    let (db1, ds1) = database(&api, &root, "One").await;
    let (_db2, ds2) = database(&api, &root, "Two").await;
    let r = row(&api, &ds1, "Row", "a note").await;
    let kept = row(&api, &ds1, "Kept", "stays").await;
    let body = s.dump(&r).unwrap();

    // Between databases: the title becomes the other source's title, the rest is empty.
    let (st, v) = move_to(
        &api,
        &r,
        json!({"type": "data_source_id", "data_source_id": ds2}),
    )
    .await;
    assert_eq!(st, 200, "{v}");
    assert_eq!(v["parent"]["type"], "data_source_id");
    assert_eq!(v["parent"]["data_source_id"], ds2.as_str());
    assert_eq!(v["properties"]["Name"]["title"][0]["plain_text"], "Row");
    assert_eq!(v["properties"]["Note"]["rich_text"], json!([]));
    assert_eq!(query_titles(&api, &ds1).await, ["Kept"]);
    assert_eq!(query_titles(&api, &ds2).await, ["Row"]);
    assert_eq!(s.dump(&r).unwrap(), body, "the row's blocks go along");
    let rows = s.rows(&ds2);
    assert_eq!(rows[0].properties["Note"], "");

    // Out to a page: a page with its title only.
    let (st, v) = move_to(&api, &r, json!({"page_id": root})).await;
    assert_eq!(st, 200, "{v}");
    assert_eq!(v["parent"], json!({"type": "page_id", "page_id": root}));
    assert_eq!(
        v["properties"],
        json!({"title": {"id": "title", "type": "title", "title": v["properties"]["title"]["title"]}})
    );
    assert_eq!(v["properties"]["title"]["title"][0]["plain_text"], "Row");
    assert_eq!(s.children_titles(&root), ["One", "Two", "Row"]);
    assert!(query_titles(&api, &ds2).await.is_empty());

    // A page into a data source.
    let p = page(&api, &root, "Loose page").await;
    let (st, v) = move_to(&api, &p, json!({"data_source_id": ds1})).await;
    assert_eq!(st, 200, "{v}");
    assert_eq!(query_titles(&api, &ds1).await, ["Kept", "Loose page"]);
    assert_eq!(s.children_titles(&root), ["One", "Two", "Row"]);
    // Already a row of it: the same parent again is refused.
    let (st, v) = move_to(&api, &kept, json!({"data_source_id": ds1})).await;
    assert_eq!(
        (st, v["code"].as_str()),
        (400, Some("validation_error")),
        "{v}"
    );
    // A trashed database takes no rows.
    api.ok(
        Method::PATCH,
        &format!("databases/{db1}"),
        Some(json!({"in_trash": true})),
    )
    .await;
    let (st, v) = move_to(&api, &r, json!({"data_source_id": ds1})).await;
    assert_eq!(
        (st, v["code"].as_str()),
        (400, Some("validation_error")),
        "{v}"
    );
}

#[tokio::test]
async fn a_move_is_a_write_rate_limited_and_hit_by_faults_like_the_others() {
    let s = NotionServer::start(fast()).await;
    let api = Api::new(&s);
    let root = s.add_shared_page("Root");
    let a = page(&api, &root, "A").await;
    let x = page(&api, &root, "X").await;

    // Refused before it is applied.
    s.inject(
        FaultRule::new(FaultKind::Status(503))
            .on(Endpoint::MovePage)
            .times(1),
    );
    let (st, _) = move_to(&api, &x, json!({"page_id": a})).await;
    assert_eq!(st, 503);
    assert_eq!(s.children_titles(&root), ["A", "X"]);
    // Applied, then the answer is lost.
    s.inject(
        FaultRule::new(FaultKind::AppliedThen504)
            .on(Endpoint::MovePage)
            .times(1),
    );
    let (st, _) = move_to(&api, &x, json!({"page_id": a})).await;
    assert_eq!(st, 504);
    assert_eq!(s.children_titles(&a), ["X"]);
    // Retrying it blindly is refused: it is already there.
    let (st, v) = move_to(&api, &x, json!({"page_id": a})).await;
    assert_eq!(st, 400, "{v}");

    // The token's rate limit applies.
    s.force_rate_limit_for(std::time::Duration::from_secs(30));
    let (st, v) = move_to(&api, &x, json!({"page_id": root})).await;
    assert_eq!((st, v["code"].as_str()), (429, Some("rate_limited")));
    assert_eq!(s.children_titles(&a), ["X"]);
}

#[tokio::test]
async fn a_database_is_renamed_and_trashed_with_its_rows_and_restored() {
    let s = NotionServer::start(fast()).await;
    let mut api = Api::new(&s);
    let root = s.add_shared_page("Root");
    let (db, ds) = database(&api, &root, "Section").await;
    row(&api, &ds, "Row", "n").await;

    let v = api
        .ok(
            Method::PATCH,
            &format!("databases/{db}"),
            Some(json!({"title": [{"text": {"content": "Renamed"}}]})),
        )
        .await;
    assert_eq!(v["object"], "database");
    assert_eq!(v["title"][0]["plain_text"], "Renamed");
    assert_eq!(v["data_sources"][0]["name"], "Renamed");
    assert_eq!(s.children_titles(&root), ["Renamed"]);
    assert_eq!(
        api.children(&root).await[0]["child_database"]["title"],
        "Renamed"
    );

    let v = api
        .ok(
            Method::PATCH,
            &format!("databases/{db}"),
            Some(json!({"in_trash": true})),
        )
        .await;
    assert_eq!(v["in_trash"], true);
    assert!(s.is_trashed(&db));
    assert!(api.children(&root).await.is_empty());
    assert!(s.children_titles(&root).is_empty());
    assert!(query_titles(&api, &ds).await.is_empty());
    assert!(s.rows(&db).is_empty());
    // A trashed database is not edited, but can come back.
    let (st, v) = api
        .call(
            Method::PATCH,
            &format!("databases/{db}"),
            Some(json!({"title": [{"text": {"content": "While trashed"}}]})),
        )
        .await;
    assert_eq!((st, v["code"].as_str()), (400, Some("validation_error")));
    api.ok(
        Method::PATCH,
        &format!("databases/{db}"),
        Some(json!({"in_trash": false})),
    )
    .await;
    assert_eq!(query_titles(&api, &ds).await, ["Row"]);
    assert_eq!(s.children_titles(&root), ["Renamed"]);

    // `archived` is gone from the pinned version on; older versions still take it.
    let (st, v) = api
        .call(
            Method::PATCH,
            &format!("databases/{db}"),
            Some(json!({"archived": true})),
        )
        .await;
    assert_eq!((st, v["code"].as_str()), (400, Some("validation_error")));
    assert!(!s.is_trashed(&db));
    for (body, says) in [
        (
            json!({"properties": {}}),
            "body.properties should be not present",
        ),
        (
            json!({"in_trash": "yes"}),
            "body.in_trash should be a boolean",
        ),
        (
            json!({"parent": {"page_id": root}}),
            "does not model `parent`",
        ),
    ] {
        let (st, v) = api
            .call(Method::PATCH, &format!("databases/{db}"), Some(body))
            .await;
        assert_eq!(st, 400, "{v}");
        assert!(v["message"].as_str().unwrap().contains(says), "{v}");
    }
    let (st, v) = api
        .call(
            Method::PATCH,
            &format!("databases/{root}"),
            Some(json!({"in_trash": true})),
        )
        .await;
    assert_eq!(
        (st, v["code"].as_str()),
        (404, Some("object_not_found")),
        "{v}"
    );
    s.set_update_content(false);
    let (st, _) = api
        .call(
            Method::PATCH,
            &format!("databases/{db}"),
            Some(json!({"in_trash": true})),
        )
        .await;
    assert_eq!(st, 403);
    s.set_update_content(true);
    api.version = "2025-09-03";
    api.ok(
        Method::PATCH,
        &format!("databases/{db}"),
        Some(json!({"archived": true})),
    )
    .await;
    assert!(s.is_trashed(&db));
    assert_eq!(s.counters().per_endpoint[&Endpoint::UpdateDatabase], 11);
}

#[tokio::test]
async fn a_trashed_page_hides_its_subtree_from_listings_and_queries_until_restored() {
    let s = NotionServer::start(fast()).await;
    let api = Api::new(&s);
    let root = s.add_shared_page("Root");
    let a = page(&api, &root, "A").await;
    let b = page(&api, &a, "B").await;
    let (_, ds) = database(&api, &a, "Section").await;
    let r = row(&api, &ds, "Row", "n").await;

    let v = api
        .ok(
            Method::PATCH,
            &format!("pages/{a}"),
            Some(json!({"in_trash": true})),
        )
        .await;
    assert_eq!(v["in_trash"], true);
    assert!(api.children(&root).await.is_empty());
    assert!(s.children_titles(&root).is_empty());
    assert!(query_titles(&api, &ds).await.is_empty());
    for id in [&a, &b, &r] {
        assert!(s.is_trashed(id), "{id} is under a trashed page");
    }
    assert!(!s.is_trashed(&root));

    api.ok(
        Method::PATCH,
        &format!("pages/{a}"),
        Some(json!({"in_trash": false})),
    )
    .await;
    assert_eq!(s.children_titles(&root), ["A"]);
    assert_eq!(s.children_titles(&a), ["B", "Section"]);
    assert_eq!(query_titles(&api, &ds).await, ["Row"]);
    assert!(!s.is_trashed(&r));
}

#[tokio::test]
async fn a_person_moves_adds_and_trashes_pages_and_is_named_as_their_last_editor() {
    let s = NotionServer::start(fast()).await;
    let api = Api::new(&s);
    let root = s.add_shared_page("Root");
    s.stamp_writes_at(Some(T0));
    let a = page(&api, &root, "A").await;
    let b = page(&api, &root, "B").await;
    let x = page(&api, &a, "X").await;
    let bot =
        api.ok(Method::GET, &format!("pages/{x}"), None).await["last_edited_by"]["id"].clone();
    let edited = |v: &Value| {
        (
            v["last_edited_time"].as_str().unwrap().to_owned(),
            v["last_edited_by"]["id"] != bot,
        )
    };
    let later = ("2026-03-02T09:05:00.000Z".to_owned(), true);

    s.stamp_writes_at(Some(T0 + 300_000));
    s.move_as_person(&x, &b);
    assert_eq!(
        s.parent_of(&x),
        Some(json!({"type": "page_id", "page_id": b}))
    );
    assert_eq!(s.children_titles(&b), ["X"]);
    assert!(s.children_titles(&a).is_empty());
    for id in [&x, &a, &b] {
        let v = api.ok(Method::GET, &format!("pages/{id}"), None).await;
        assert_eq!(edited(&v), later, "{id}");
    }

    let added = s.add_child_page_as_person(&b, "Written in Notion");
    assert_eq!(s.children_titles(&b), ["X", "Written in Notion"]);
    let v = api.ok(Method::GET, &format!("pages/{added}"), None).await;
    assert_eq!(edited(&v), later);
    assert_eq!(v["parent"], json!({"type": "page_id", "page_id": b}));

    s.stamp_writes_at(Some(T0 + 600_000));
    s.trash_as_person(&x);
    assert!(s.is_trashed(&x));
    assert_eq!(s.children_titles(&b), ["Written in Notion"]);
    let v = api.ok(Method::GET, &format!("pages/{x}"), None).await;
    assert_eq!(v["in_trash"], true);
    assert_eq!(edited(&v), ("2026-03-02T09:10:00.000Z".to_owned(), true));
    assert_eq!(s.parent_of("3c90c3cc-0d44-4b50-8888-8dd25736052a"), None);
    // None of it went through the API.
    assert_eq!(s.counters().per_endpoint.get(&Endpoint::MovePage), None);
}

#[tokio::test]
#[should_panic(expected = "cannot be under the hierarchy of child")]
async fn a_person_cannot_move_a_page_under_its_own_child() {
    let s = NotionServer::start(fast()).await;
    let api = Api::new(&s);
    let root = s.add_shared_page("Root");
    let a = page(&api, &root, "A").await;
    let x = page(&api, &a, "X").await;
    s.move_as_person(&a, &x);
}
