//! The Notion test server's databases, as Notion documents them for API version 2025-09-03: a
//! database created in a page with its data source, listed as a `child_database` block; rows
//! created under the data source with their values checked against the schema (400
//! `validation_error` with Notion's messages); schema updates; paged data source queries; the same
//! rate limit as every other request; the dump showing databases and rows.

use crate::notion_support::fast_server;

use notebridge_testkit::notion::{Endpoint, NotionServer, NotionServerConfig, RateConfig};
use serde_json::{json, Value};

struct Api<'a> {
    s: &'a NotionServer,
    http: reqwest::Client,
    version: &'static str,
}

impl Api<'_> {
    async fn send(&self, method: reqwest::Method, path: &str, body: Option<Value>) -> (u16, Value) {
        let mut req = self
            .http
            .request(method, format!("{}{path}", self.s.base_url()))
            .bearer_auth(self.s.token())
            .header("Notion-Version", self.version);
        if let Some(b) = body {
            req = req.json(&b);
        }
        let resp = req.send().await.expect("the test server answers");
        let status = resp.status().as_u16();
        (status, resp.json().await.expect("a JSON answer"))
    }

    async fn post(&self, path: &str, body: Value) -> (u16, Value) {
        self.send(reqwest::Method::POST, path, Some(body)).await
    }

    async fn patch(&self, path: &str, body: Value) -> (u16, Value) {
        self.send(reqwest::Method::PATCH, path, Some(body)).await
    }

    async fn get(&self, path: &str) -> (u16, Value) {
        self.send(reqwest::Method::GET, path, None).await
    }
}

fn api(s: &NotionServer) -> Api<'_> {
    Api {
        s,
        http: reqwest::Client::new(),
        version: "2025-09-03",
    }
}

fn schema() -> Value {
    json!({
        "Name": {"title": {}},
        "Created": {"date": {}},
        "Tags": {"multi_select": {"options": [{"name": "To Do", "color": "blue"}]}},
        "Order": {"number": {}},
        "OneNote link": {"url": {}},
    })
}

async fn database(a: &Api<'_>, parent: &str, title: &str) -> (String, String) {
    let (st, db) = a
        .post(
            "/v1/databases",
            json!({
                "parent": {"type": "page_id", "page_id": parent},
                "title": [{"text": {"content": title}}],
                "initial_data_source": {"properties": schema()},
            }),
        )
        .await;
    assert_eq!(st, 200, "{db}");
    assert_eq!(db["object"], "database");
    let ds = db["data_sources"][0]["id"].as_str().unwrap().to_owned();
    (db["id"].as_str().unwrap().to_owned(), ds)
}

fn row(ds: &str, name: &str, tags: &[&str], order: u32) -> Value {
    let tags: Vec<Value> = tags.iter().map(|t| json!({"name": t})).collect();
    json!({
        "parent": {"type": "data_source_id", "data_source_id": ds},
        "properties": {
            "Name": {"title": [{"text": {"content": name}}]},
            "Created": {"date": {"start": "2021-03-04T05:06:07.000+00:00"}},
            "Tags": {"multi_select": tags},
            "Order": {"number": order},
        },
        "children": [{"paragraph": {"rich_text": [{"text": {"content": format!("body of {name}")}}]}}],
    })
}

#[tokio::test]
async fn a_database_lives_in_its_page_and_its_rows_under_its_data_source() {
    let s = fast_server(1).await;
    let root = s.add_shared_page("Root");
    let a = api(&s);
    let (db, ds) = database(&a, &root, "Section A").await;

    let (st, listed) = a.get(&format!("/v1/blocks/{root}/children")).await;
    assert_eq!(st, 200);
    assert_eq!(listed["results"][0]["type"], "child_database");
    assert_eq!(listed["results"][0]["id"], db.as_str());
    assert_eq!(listed["results"][0]["child_database"]["title"], "Section A");

    let (st, source) = a.get(&format!("/v1/data_sources/{ds}")).await;
    assert_eq!(st, 200);
    assert_eq!(source["parent"]["database_id"], db.as_str());
    assert_eq!(source["database_parent"]["page_id"], root.as_str());
    assert_eq!(source["properties"]["Tags"]["type"], "multi_select");
    assert_eq!(
        source["properties"]["Tags"]["multi_select"]["options"][0]["name"],
        "To Do"
    );

    let (st, page) = a.post("/v1/pages", row(&ds, "First", &["To Do"], 1)).await;
    assert_eq!(st, 200, "{page}");
    assert_eq!(page["parent"]["type"], "data_source_id");
    assert_eq!(page["parent"]["data_source_id"], ds.as_str());
    assert_eq!(
        page["properties"]["Name"]["title"][0]["plain_text"],
        "First"
    );
    assert_eq!(
        page["properties"]["Tags"]["multi_select"][0]["name"],
        "To Do"
    );
    assert_eq!(page["properties"]["OneNote link"]["url"], Value::Null);
    let id = page["id"].as_str().unwrap().to_owned();

    let (st, got) = a.get(&format!("/v1/pages/{id}")).await;
    assert_eq!(st, 200);
    assert_eq!(got["properties"]["Order"]["number"], 1);

    let dump = s.dump(&root).unwrap();
    assert_eq!(dump.children[0].kind, "database");
    assert_eq!(dump.children[0].title.as_deref(), Some("Section A"));
    assert_eq!(dump.children[0].children[0].title.as_deref(), Some("First"));
    assert_eq!(
        dump.children[0].children[0].children[0].text,
        "body of First"
    );
    let rows = s.rows(&db);
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].properties["Tags"], "To Do");
    assert_eq!(
        rows[0].properties["Created"],
        "2021-03-04T05:06:07.000+00:00"
    );
    assert_eq!(s.databases_under(&root), vec![(db, ds, "Section A".into())]);

    // A database holds no blocks of its own.
    let (st, e) = a
        .patch(
            &format!("/v1/blocks/{}/children", s.databases_under(&root)[0].0),
            json!({"children": [{"paragraph": {"rich_text": []}}]}),
        )
        .await;
    assert_eq!((st, e["code"].as_str()), (400, Some("validation_error")));
}

#[tokio::test]
async fn rows_are_checked_against_the_schema_with_notions_messages() {
    let s = fast_server(2).await;
    let root = s.add_shared_page("Root");
    let a = api(&s);
    let (db, ds) = database(&a, &root, "S").await;
    let parent = json!({"type": "data_source_id", "data_source_id": ds});
    let cases: Vec<(Value, &str)> = vec![
        (
            json!({"Author": {"rich_text": []}}),
            "Author is not a property that exists.",
        ),
        (
            json!({"Tags": {"select": {"name": "To Do"}}}),
            "Tags is expected to be multi_select.",
        ),
        (
            json!({"Tags": {"multi_select": [{"name": "Later"}]}}),
            "no such option",
        ),
        (
            json!({"Tags": {"multi_select": [{"name": "a,b"}]}}),
            "commas",
        ),
        (
            json!({"OneNote link": {"url": "h".repeat(2001)}}),
            "should be ≤ `2000`, instead was `2001`",
        ),
        (
            json!({"Created": {"date": {"start": "last week"}}}),
            "ISO 8601",
        ),
    ];
    for (props, want) in cases {
        let (st, e) = a
            .post("/v1/pages", json!({"parent": parent, "properties": props}))
            .await;
        assert_eq!(st, 400, "{props}: {e}");
        assert_eq!(e["code"], "validation_error");
        let msg = e["message"].as_str().unwrap();
        assert!(msg.contains(want), "{props}: {msg}");
    }
    assert!(s.rows(&db).is_empty(), "a refused row is not created");

    // A database parent is not how rows are made since 2025-09-03; an unknown data source is 404.
    let (st, _) = a
        .post(
            "/v1/pages",
            json!({"parent": {"database_id": db}, "properties": {}}),
        )
        .await;
    assert_eq!(st, 400);
    let unknown = uuid::Uuid::new_v4().to_string();
    let (st, e) = a
        .post(
            "/v1/pages",
            json!({"parent": {"data_source_id": unknown}, "properties": {}}),
        )
        .await;
    assert_eq!((st, e["code"].as_str()), (404, Some("object_not_found")));

    // A schema without a title, with a comma in an option or a status property is refused.
    for props in [
        json!({"Tags": {"multi_select": {}}}),
        json!({"N": {"title": {}}, "T": {"multi_select": {"options": [{"name": "x,y"}]}}}),
        json!({"N": {"title": {}}, "S": {"status": {}}}),
    ] {
        let (st, e) = a
            .post(
                "/v1/databases",
                json!({"parent": {"page_id": root}, "initial_data_source": {"properties": props}}),
            )
            .await;
        assert_eq!(
            (st, e["code"].as_str()),
            (400, Some("validation_error")),
            "{props}"
        );
    }
    assert_eq!(s.databases_under(&root).len(), 1);
}

#[tokio::test]
async fn schema_updates_add_options_that_rows_may_then_use_and_rows_update_in_place() {
    let s = fast_server(3).await;
    let root = s.add_shared_page("Root");
    let a = api(&s);
    let (db, ds) = database(&a, &root, "S").await;
    let (st, _) = a.post("/v1/pages", row(&ds, "P", &["Important"], 1)).await;
    assert_eq!(st, 400, "an option the schema lacks");

    let (st, updated) = a
        .patch(
            &format!("/v1/data_sources/{ds}"),
            json!({"properties": {"Tags": {"multi_select": {"options": [
                {"name": "To Do"}, {"name": "Important", "color": "red"}
            ]}}}}),
        )
        .await;
    assert_eq!(st, 200, "{updated}");
    let opts = updated["properties"]["Tags"]["multi_select"]["options"]
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(opts.len(), 2);
    assert_eq!(opts[0]["color"], "blue", "an option kept keeps its colour");

    let (st, page) = a.post("/v1/pages", row(&ds, "P", &["Important"], 1)).await;
    assert_eq!(st, 200, "{page}");
    let id = page["id"].as_str().unwrap();
    let (st, page) = a
        .patch(
            &format!("/v1/pages/{id}"),
            json!({"properties": {"Tags": {"multi_select": [{"name": "To Do"}]}, "Name": {"title": [{"text": {"content": "Q"}}]}}}),
        )
        .await;
    assert_eq!(st, 200, "{page}");
    let rows = s.rows(&db);
    assert_eq!(rows[0].title, "Q");
    assert_eq!(rows[0].properties["Tags"], "To Do");
    assert_eq!(rows[0].properties["Order"], "1", "values not sent are kept");

    // A refused update changes nothing; so does a property the schema lacks on a row.
    let (st, _) = a
        .patch(
            &format!("/v1/data_sources/{ds}"),
            json!({"properties": {"Tags": {"multi_select": {"options": [{"name": "a,b"}]}}}}),
        )
        .await;
    assert_eq!(st, 400);
    let (st, _) = a
        .patch(
            &format!("/v1/pages/{id}"),
            json!({"properties": {"Level": {"number": 1}}}),
        )
        .await;
    assert_eq!(st, 400);
    assert_eq!(
        s.schema(&ds).unwrap()["Tags"]["multi_select"]["options"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
}

#[tokio::test]
async fn queries_page_through_rows_and_filter_by_title() {
    let s = fast_server(4).await;
    let root = s.add_shared_page("Root");
    let a = api(&s);
    let (_, ds) = database(&a, &root, "S").await;
    for i in 0..7 {
        let (st, _) = a
            .post("/v1/pages", row(&ds, &format!("p{i}"), &[], i))
            .await;
        assert_eq!(st, 200);
    }
    let mut seen = Vec::new();
    let mut cursor = Value::Null;
    loop {
        let (st, page) = a
            .post(
                &format!("/v1/data_sources/{ds}/query"),
                json!({"page_size": 3, "start_cursor": cursor}),
            )
            .await;
        assert_eq!(st, 200, "{page}");
        assert_eq!(page["type"], "page_or_data_source");
        let results = page["results"].as_array().unwrap();
        assert!(results.len() <= 3);
        seen.extend(results.iter().map(|r| {
            r["properties"]["Name"]["title"][0]["plain_text"]
                .as_str()
                .unwrap()
                .to_owned()
        }));
        if page["has_more"] != true {
            break;
        }
        cursor = page["next_cursor"].clone();
    }
    assert_eq!(seen, (0..7).map(|i| format!("p{i}")).collect::<Vec<_>>());

    let (st, found) = a
        .post(
            &format!("/v1/data_sources/{ds}/query"),
            json!({"filter": {"property": "Name", "title": {"equals": "p4"}}}),
        )
        .await;
    assert_eq!(st, 200);
    assert_eq!(found["results"].as_array().unwrap().len(), 1);
    let (st, _) = a
        .post(
            &format!("/v1/data_sources/{ds}/query"),
            json!({"page_size": 101}),
        )
        .await;
    assert_eq!(st, 400);
    let (st, _) = a
        .post(
            &format!("/v1/data_sources/{ds}/query"),
            json!({"start_cursor": "nope"}),
        )
        .await;
    assert_eq!(st, 400);

    // A trashed row is no longer listed.
    let id = found["results"][0]["id"].as_str().unwrap().to_owned();
    let (st, _) = a
        .patch(&format!("/v1/pages/{id}"), json!({"in_trash": true}))
        .await;
    assert_eq!(st, 200);
    let (_, all) = a
        .post(&format!("/v1/data_sources/{ds}/query"), json!({}))
        .await;
    assert_eq!(all["results"].as_array().unwrap().len(), 6);
    assert!(all["results"]
        .as_array()
        .unwrap()
        .iter()
        .all(|r| r["id"] != id.as_str()));

    // Older versions have no data source routes.
    let old = Api {
        version: "2022-06-28",
        ..api(&s)
    };
    let (st, e) = old.get(&format!("/v1/data_sources/{ds}")).await;
    assert_eq!((st, e["code"].as_str()), (400, Some("invalid_request_url")));
}

#[tokio::test]
async fn database_requests_share_the_rate_limit() {
    let s = NotionServer::start(NotionServerConfig {
        rate: RateConfig {
            per_second: 0.001,
            burst: 2,
        },
        ..Default::default()
    })
    .await;
    let root = s.add_shared_page("Root");
    let a = api(&s);
    let (_, ds) = database(&a, &root, "S").await;
    let (st, _) = a.get(&format!("/v1/data_sources/{ds}")).await;
    assert_eq!(st, 200);
    let (st, e) = a
        .post(&format!("/v1/data_sources/{ds}/query"), json!({}))
        .await;
    assert_eq!((st, e["code"].as_str()), (429, Some("rate_limited")));
    assert_eq!(s.counters().per_endpoint[&Endpoint::CreateDatabase], 1);
}
