//! The Notion test server against its rules, over real HTTP with reqwest: each rule asserted once.

use std::time::{Duration, Instant};

use notebridge_testkit::notion::uploads::content_hash;
use notebridge_testkit::notion::{
    DumpNode, Endpoint, FaultKind, FaultRule, NotionServer, NotionServerConfig, RateConfig,
};
use reqwest::Method;
use serde_json::{json, Value};

const VERSION: &str = "2026-03-11";

pub(crate) fn fast() -> NotionServerConfig {
    NotionServerConfig {
        rate: RateConfig {
            per_second: 10_000.0,
            burst: 10_000,
        },
        ..Default::default()
    }
}

pub(crate) struct Api {
    pub(crate) c: reqwest::Client,
    base: String,
    token: String,
    pub(crate) version: &'static str,
}

impl Api {
    pub(crate) fn new(s: &NotionServer) -> Self {
        Self {
            c: reqwest::Client::new(),
            base: s.base_url().to_owned(),
            token: s.token().to_owned(),
            version: VERSION,
        }
    }

    pub(crate) fn req(&self, m: Method, path: &str) -> reqwest::RequestBuilder {
        self.c
            .request(m, format!("{}/v1/{path}", self.base))
            .bearer_auth(&self.token)
            .header("Notion-Version", self.version)
    }

    pub(crate) async fn call(&self, m: Method, path: &str, body: Option<Value>) -> (u16, Value) {
        let mut r = self.req(m, path);
        if let Some(b) = body {
            r = r.json(&b);
        }
        let resp = r.send().await.expect("request");
        let status = resp.status().as_u16();
        (status, resp.json().await.expect("json body"))
    }

    pub(crate) async fn ok(&self, m: Method, path: &str, body: Option<Value>) -> Value {
        let (s, v) = self.call(m, path, body).await;
        assert_eq!(s, 200, "{v}");
        v
    }

    pub(crate) async fn create_page(
        &self,
        parent: &str,
        title: &str,
        children: Value,
    ) -> (u16, Value) {
        self.call(
            Method::POST,
            "pages",
            Some(json!({
                "parent": {"page_id": parent},
                "properties": {"title": {"title": [{"text": {"content": title}}]}},
                "children": children,
            })),
        )
        .await
    }

    pub(crate) async fn append(&self, block: &str, body: Value) -> (u16, Value) {
        self.call(
            Method::PATCH,
            &format!("blocks/{block}/children"),
            Some(body),
        )
        .await
    }

    pub(crate) async fn children(&self, id: &str) -> Vec<Value> {
        let v = self
            .ok(Method::GET, &format!("blocks/{id}/children"), None)
            .await;
        v["results"].as_array().unwrap().clone()
    }
}

pub(crate) fn para(s: &str) -> Value {
    json!({"paragraph": {"rich_text": [{"text": {"content": s}}]}})
}

fn assert_validation(r: &(u16, Value), path: &str) {
    assert_eq!(r.0, 400, "{}", r.1);
    assert_eq!(r.1["code"], "validation_error", "{}", r.1);
    let msg = r.1["message"].as_str().unwrap();
    assert!(msg.contains(path), "message {msg:?} should name {path}");
}

#[tokio::test]
async fn version_and_bearer_are_required() {
    let s = NotionServer::start(fast()).await;
    let api = Api::new(&s);
    let url = format!("{}/v1/users/me", s.base_url());

    let r = api.c.get(&url).bearer_auth(s.token()).send().await.unwrap();
    assert_eq!(r.status(), 400);
    let body: Value = r.json().await.unwrap();
    let keys: Vec<&str> = body
        .as_object()
        .unwrap()
        .keys()
        .map(|k| k.as_str())
        .collect();
    assert_eq!(keys.len(), 5, "{body}");
    for k in ["object", "status", "code", "message", "request_id"] {
        assert!(keys.contains(&k), "{body}");
    }
    assert_eq!(body["object"], "error");
    assert_eq!(body["status"], 400);
    assert_eq!(body["code"], "missing_version");

    let r = api
        .c
        .get(&url)
        .bearer_auth("secret_wrong")
        .header("Notion-Version", VERSION)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 401);
    assert_eq!(r.json::<Value>().await.unwrap()["code"], "unauthorized");

    let r = api
        .c
        .get(&url)
        .bearer_auth(s.token())
        .header("Notion-Version", "2020-01-01")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 400);

    let me = api.ok(Method::GET, "users/me", None).await;
    assert_eq!(me["type"], "bot");
    assert_eq!(me["id"], s.bot_id());
    assert_eq!(
        me["bot"]["workspace_limits"]["max_file_upload_size_in_bytes"],
        5u64 * 1024 * 1024 * 1024
    );
    let old = Api {
        version: "2022-06-28",
        ..Api::new(&s)
    };
    old.ok(Method::GET, "users/me", None).await;
}

#[tokio::test]
async fn only_shared_pages_are_visible() {
    let s = NotionServer::start(fast()).await;
    let api = Api::new(&s);
    let root = s.add_shared_page("Root");
    let page = api.ok(Method::GET, &format!("pages/{root}"), None).await;
    assert_eq!(page["object"], "page");
    assert_eq!(
        page["properties"]["title"]["title"][0]["plain_text"],
        "Root"
    );
    // Ids without dashes are the same id.
    api.ok(
        Method::GET,
        &format!("pages/{}", root.replace('-', "")),
        None,
    )
    .await;

    let other = uuid::Uuid::new_v4().to_string();
    let (st, v) = api.call(Method::GET, &format!("pages/{other}"), None).await;
    assert_eq!((st, v["code"].as_str()), (404, Some("object_not_found")));
    let (st, v) = api.create_page(&other, "x", json!([])).await;
    assert_eq!((st, v["code"].as_str()), (404, Some("object_not_found")));
    let (st, _) = api.append(&other, json!({"children": [para("x")]})).await;
    assert_eq!(st, 404);
}

#[tokio::test]
async fn create_page_with_children_update_and_trash() {
    let s = NotionServer::start(fast()).await;
    let api = Api::new(&s);
    let root = s.add_shared_page("Root");
    let (st, page) = api
        .create_page(
            &root,
            "Meeting notes",
            json!([para("first"), {"to_do": {"rich_text": [{"text": {"content": "task"}}], "checked": true}}]),
        )
        .await;
    assert_eq!(st, 200, "{page}");
    let id = page["id"].as_str().unwrap().to_owned();
    assert_eq!(page["parent"], json!({"type": "page_id", "page_id": root}));
    assert_eq!(id.len(), 36);
    let kids = api.children(&id).await;
    assert_eq!(kids.len(), 2);
    assert_eq!(kids[0]["type"], "paragraph");
    assert_eq!(kids[0]["object"], "block");
    assert_eq!(kids[0]["has_children"], false);
    assert_eq!(kids[0]["parent"], json!({"type": "page_id", "page_id": id}));
    assert_eq!(kids[1]["to_do"]["checked"], true);

    // Update a block's rich text with a link.
    let bid = kids[0]["id"].as_str().unwrap();
    let upd = api
        .ok(
            Method::PATCH,
            &format!("blocks/{bid}"),
            Some(json!({"paragraph": {"rich_text": [
                {"text": {"content": "see "}},
                {"text": {"content": "this page", "link": {"url": "https://www.notion.so/abc"}}}
            ]}})),
        )
        .await;
    assert_eq!(
        upd["paragraph"]["rich_text"][1]["href"],
        "https://www.notion.so/abc"
    );
    let got = api.ok(Method::GET, &format!("blocks/{bid}"), None).await;
    assert_eq!(got["paragraph"]["rich_text"][0]["plain_text"], "see ");
    // Changing the type of a block is not an update.
    let r = api
        .call(
            Method::PATCH,
            &format!("blocks/{bid}"),
            Some(json!({"quote": {"rich_text": []}})),
        )
        .await;
    assert_validation(&r, "body.quote");

    // Delete a block: gone from listings.
    let del = api.ok(Method::DELETE, &format!("blocks/{bid}"), None).await;
    assert_eq!(del["in_trash"], true);
    assert_eq!(api.children(&id).await.len(), 1);

    // Trash the page: it leaves its parent's listing, and content can no longer be appended.
    let p = api
        .ok(
            Method::PATCH,
            &format!("pages/{id}"),
            Some(json!({"in_trash": true})),
        )
        .await;
    assert_eq!(p["in_trash"], true);
    assert!(s.pages_under(&root).is_empty());
    let r = api.append(&id, json!({"children": [para("late")]})).await;
    assert_eq!(r.0, 400);
    // `archived` is gone in 2026-03-11.
    let r = api
        .call(
            Method::PATCH,
            &format!("pages/{id}"),
            Some(json!({"archived": false})),
        )
        .await;
    assert_validation(&r, "body.archived");
}

#[tokio::test]
async fn nesting_two_levels_accepted_three_rejected() {
    let s = NotionServer::start(fast()).await;
    let api = Api::new(&s);
    let root = s.add_shared_page("Root");
    let two = json!([{"toggle": {"rich_text": [], "children": [para("level 2")]}}]);
    let (st, v) = api.append(&root, json!({"children": two})).await;
    assert_eq!(st, 200, "{v}");
    assert_eq!(v["results"][0]["has_children"], true);

    let three = json!([{"toggle": {"rich_text": [], "children": [
        {"toggle": {"rich_text": [], "children": [para("level 3")]}}
    ]}}]);
    let r = api.append(&root, json!({"children": three.clone()})).await;
    assert_validation(&r, "body.children[0].toggle.children[0].toggle.children");
    let r = api.create_page(&root, "deep", three).await;
    assert_validation(&r, "body.children[0].toggle.children[0].toggle.children");

    // A table in a list item is three levels too; the table alone is two.
    let table = json!({"table": {"table_width": 1, "children": [{"table_row": {"cells": [[]]}}]}});
    let r = api
        .append(
            &root,
            json!({"children": [{"bulleted_list_item": {"rich_text": [], "children": [table.clone()]}}]}),
        )
        .await;
    assert_validation(&r, "table.children");
    let (st, _) = api.append(&root, json!({"children": [table]})).await;
    assert_eq!(st, 200);
    assert!(s.counters().validation_errors >= 3);
}

fn text_item(n: usize) -> Value {
    json!({"text": {"content": "x".repeat(n)}})
}

#[tokio::test]
async fn every_limit_at_its_edge() {
    let s = NotionServer::start(fast()).await;
    let api = Api::new(&s);
    let root = s.add_shared_page("Root");
    let ok = |b: Value| json!({"children": [b]});
    // (accepted, rejected, path named in the error)
    let long_url = |n: usize| format!("https://example.com/{}", "a".repeat(n - 20));
    let cases: Vec<(Value, Value, &str)> = vec![
        (
            ok(json!({"paragraph": {"rich_text": [text_item(2000)]}})),
            ok(json!({"paragraph": {"rich_text": [text_item(2001)]}})),
            "body.children[0].paragraph.rich_text[0].text.content.length should be ≤ `2000`, instead was `2001`.",
        ),
        (
            ok(json!({"paragraph": {"rich_text": [{"text": {"content": "a".repeat(1999) + "é"}}]}})),
            ok(json!({"paragraph": {"rich_text": [{"text": {"content": "a".repeat(1999) + "😀"}}]}})),
            "text.content.length",
        ),
        (
            ok(json!({"paragraph": {"rich_text": [{"text": {"content": "l", "link": {"url": long_url(2000)}}}]}})),
            ok(json!({"paragraph": {"rich_text": [{"text": {"content": "l", "link": {"url": long_url(2001)}}}]}})),
            "text.link.url.length",
        ),
        (
            ok(json!({"bookmark": {"url": long_url(2000)}})),
            ok(json!({"bookmark": {"url": long_url(2001)}})),
            "body.children[0].bookmark.url.length",
        ),
        (
            ok(json!({"image": {"external": {"url": long_url(2000)}}})),
            ok(json!({"image": {"external": {"url": long_url(2001)}}})),
            "body.children[0].image.external.url.length",
        ),
        (
            ok(json!({"equation": {"expression": "x".repeat(1000)}})),
            ok(json!({"equation": {"expression": "x".repeat(1001)}})),
            "body.children[0].equation.expression.length",
        ),
        (
            ok(json!({"paragraph": {"rich_text": [{"equation": {"expression": "x".repeat(1000)}}]}})),
            ok(json!({"paragraph": {"rich_text": [{"equation": {"expression": "x".repeat(1001)}}]}})),
            "rich_text[0].equation.expression.length",
        ),
        (
            ok(json!({"paragraph": {"rich_text": vec![text_item(1); 100]}})),
            ok(json!({"paragraph": {"rich_text": vec![text_item(1); 101]}})),
            "body.children[0].paragraph.rich_text.length should be ≤ `100`, instead was `101`.",
        ),
        (
            json!({"children": vec![para("p"); 100]}),
            json!({"children": vec![para("p"); 101]}),
            "body.children.length should be ≤ `100`, instead was `101`.",
        ),
        (
            ok(json!({"toggle": {"rich_text": [], "children": vec![para("p"); 100]}})),
            ok(json!({"toggle": {"rich_text": [], "children": vec![para("p"); 101]}})),
            "body.children[0].toggle.children.length",
        ),
        (
            ok(json!({"paragraph": {"rich_text": [], "color": "red_background"}})),
            ok(json!({"paragraph": {"rich_text": [], "color": "crimson"}})),
            "body.children[0].paragraph.color",
        ),
        (
            ok(json!({"paragraph": {"rich_text": [{"text": {"content": "c"}, "annotations": {"color": "blue"}}]}})),
            ok(json!({"paragraph": {"rich_text": [{"text": {"content": "c"}, "annotations": {"color": "navy"}}]}})),
            "rich_text[0].annotations.color",
        ),
        (
            ok(json!({"code": {"rich_text": [], "language": "rust"}})),
            ok(json!({"code": {"rich_text": [], "language": "brainfuck"}})),
            "body.children[0].code.language",
        ),
        (
            ok(json!({"divider": {}})),
            ok(json!({"marquee": {}})),
            "body.children[0].marquee",
        ),
        (
            ok(json!({"paragraph": {"rich_text": []}})),
            ok(json!({"paragraph": {}})),
            "body.children[0].paragraph.rich_text",
        ),
        (
            ok(json!({"heading_2": {"rich_text": [], "is_toggleable": true, "children": [para("in")]}})),
            ok(json!({"heading_2": {"rich_text": [], "children": [para("in")]}})),
            "body.children[0].heading_2.children",
        ),
        (
            ok(json!({"table": {"table_width": 2, "children": [{"table_row": {"cells": [[], []]}}]}})),
            ok(json!({"table": {"table_width": 2, "children": [{"table_row": {"cells": [[]]}}]}})),
            "body.children[0].table.children[0].table_row.cells",
        ),
        (
            ok(json!({"table": {"table_width": 1, "children": [{"table_row": {"cells": [[]]}}]}})),
            ok(json!({"table": {"table_width": 1}})),
            "body.children[0].table.children",
        ),
        (
            ok(json!({"video": {"type": "external", "external": {"url": "https://www.youtube.com/watch?v=x"}}})),
            ok(json!({"video": {"type": "external"}})),
            "body.children[0].video",
        ),
    ];
    for (good, bad, path) in cases {
        let (st, v) = api.append(&root, good.clone()).await;
        assert_eq!(st, 200, "accepted side of {path}: {v}");
        let r = api.append(&root, bad).await;
        assert_validation(&r, path);
    }

    // 1000 block elements per request: 100 toggles holding 900 children in all.
    let tree = |extra: usize| {
        let kids: Vec<Value> = (0..100)
            .map(|i| {
                let n = if i < 9 { 100 } else { 0 } + usize::from(i == 99) * extra;
                json!({"toggle": {"rich_text": [], "children": vec![para("p"); n]}})
            })
            .collect();
        json!({"children": kids})
    };
    let (st, v) = api.append(&root, tree(0)).await;
    assert_eq!(st, 200, "{v}");
    let r = api.append(&root, tree(1)).await;
    assert_validation(&r, "block elements");

    // 500 KB per request: 100 paragraphs of two 2000-char items pass (~400 KB), of three do not.
    let body = |items: usize| json!({"children": vec![json!({"paragraph": {"rich_text": vec![text_item(2000); items]}}); 100]});
    let (st, _) = api.append(&root, body(2)).await;
    assert_eq!(st, 200);
    let r = api.append(&root, body(3)).await;
    assert_validation(&r, "500000");
}

#[tokio::test]
async fn child_pages_listed_in_creation_order_with_paging() {
    let s = NotionServer::start(fast()).await;
    let api = Api::new(&s);
    let root = s.add_shared_page("Notebook");
    api.append(&root, json!({"children": [para("intro")]}))
        .await;
    for i in 0..5 {
        let (st, _) = api
            .create_page(&root, &format!("Section {i}"), json!([]))
            .await;
        assert_eq!(st, 200);
    }
    let mut seen = Vec::new();
    let mut cursor: Option<String> = None;
    let mut pages = 0;
    loop {
        let q = match &cursor {
            Some(c) => format!("blocks/{root}/children?page_size=2&start_cursor={c}"),
            None => format!("blocks/{root}/children?page_size=2"),
        };
        let v = api.ok(Method::GET, &q, None).await;
        pages += 1;
        assert!(v["results"].as_array().unwrap().len() <= 2);
        for b in v["results"].as_array().unwrap() {
            seen.push(match b["type"].as_str().unwrap() {
                "child_page" => b["child_page"]["title"].as_str().unwrap().to_owned(),
                t => t.to_owned(),
            });
        }
        assert_eq!(v["has_more"], v["next_cursor"].is_string());
        match v["next_cursor"].as_str() {
            Some(c) => cursor = Some(c.to_owned()),
            None => break,
        }
    }
    assert_eq!(pages, 3);
    assert_eq!(
        seen,
        [
            "paragraph",
            "Section 0",
            "Section 1",
            "Section 2",
            "Section 3",
            "Section 4"
        ]
    );
    let r = api
        .call(
            Method::GET,
            &format!("blocks/{root}/children?page_size=101"),
            None,
        )
        .await;
    assert_validation(&r, "page_size");
    let bogus = uuid::Uuid::new_v4();
    let r = api
        .call(
            Method::GET,
            &format!("blocks/{root}/children?start_cursor={bogus}"),
            None,
        )
        .await;
    assert_validation(&r, "start_cursor");
    assert!(s.duplicate_titles(&root).is_empty());
    api.create_page(&root, "Section 1", json!([])).await;
    assert_eq!(s.duplicate_titles(&root).get("Section 1"), Some(&2));
}

#[tokio::test]
async fn append_positions() {
    let s = NotionServer::start(fast()).await;
    let api = Api::new(&s);
    let root = s.add_shared_page("Root");
    let v = api
        .append(&root, json!({"children": [para("b"), para("d")]}))
        .await
        .1;
    let b_id = v["results"][0]["id"].as_str().unwrap().to_owned();
    api.append(
        &root,
        json!({"children": [para("a")], "position": {"type": "start"}}),
    )
    .await;
    api.append(
        &root,
        json!({"children": [para("e")], "position": {"type": "end"}}),
    )
    .await;
    let (st, _) = api
        .append(
            &root,
            json!({"children": [para("c")], "position": {"type": "after_block", "after_block": {"id": b_id}}}),
        )
        .await;
    assert_eq!(st, 200);
    let texts: Vec<String> = s
        .dump(&root)
        .unwrap()
        .children
        .into_iter()
        .map(|c| c.text)
        .collect();
    assert_eq!(texts, ["a", "b", "c", "d", "e"]);

    let stranger = uuid::Uuid::new_v4().to_string();
    let r = api
        .append(
            &root,
            json!({"children": [para("x")], "position": {"type": "after_block", "after_block": {"id": stranger}}}),
        )
        .await;
    assert_validation(&r, "body.position.after_block.id");
    // The pre-2026 `after` parameter is refused under the pinned version, accepted under 2022-06-28.
    let r = api
        .append(&root, json!({"children": [para("x")], "after": b_id}))
        .await;
    assert_validation(&r, "body.after");
    let old = Api {
        version: "2022-06-28",
        ..Api::new(&s)
    };
    let (st, _) = old
        .append(&root, json!({"children": [para("b2")], "after": b_id}))
        .await;
    assert_eq!(st, 200);
    assert_eq!(s.dump(&root).unwrap().children[2].text, "b2");
}

async fn send(api: &Api, id: &str, name: &str, data: Vec<u8>, part: Option<u32>) -> (u16, Value) {
    let mut form = reqwest::multipart::Form::new().part(
        "file",
        reqwest::multipart::Part::bytes(data).file_name(name.to_owned()),
    );
    if let Some(n) = part {
        form = form.text("part_number", n.to_string());
    }
    let r = api
        .req(Method::POST, &format!("file_uploads/{id}/send"))
        .multipart(form)
        .send()
        .await
        .unwrap();
    (r.status().as_u16(), r.json().await.unwrap())
}

fn bytes(n: usize, seed: u8) -> Vec<u8> {
    (0..n)
        .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed))
        .collect()
}

#[tokio::test]
async fn uploads_single_and_multi_part() {
    let s = NotionServer::start(fast()).await;
    let api = Api::new(&s);
    let root = s.add_shared_page("Root");

    // Single part: 0 B and 5 MB.
    for (n, name) in [(0usize, "empty.txt"), (5_000_000, "photo.png")] {
        let u = api.ok(Method::POST, "file_uploads", Some(json!({}))).await;
        assert_eq!(u["status"], "pending");
        assert!(u["expiry_time"].is_string());
        let id = u["id"].as_str().unwrap().to_owned();
        let data = bytes(n, 7);
        let (st, v) = send(&api, &id, name, data.clone(), None).await;
        assert_eq!(st, 200, "{v}");
        assert_eq!(v["status"], "uploaded");
        assert_eq!(v["content_length"], n);
        let info = s.upload(&id).unwrap();
        assert_eq!(info.content_length, Some(n as u64));
        assert_eq!(info.hash, Some(content_hash(&data)));
        // A second send to an uploaded file is refused.
        assert_eq!(send(&api, &id, name, vec![1], None).await.0, 400);
    }

    // Over 20 MiB in one part is refused.
    let big = api.ok(Method::POST, "file_uploads", Some(json!({}))).await;
    let (st, _) = send(
        &api,
        big["id"].as_str().unwrap(),
        "big.pdf",
        vec![0; 20 * 1024 * 1024 + 1],
        None,
    )
    .await;
    assert_eq!(st, 400);

    // Multi-part: 25 MB as 10 MiB + 10 MiB + rest, sent out of order.
    let total = 25_000_000usize;
    let data = bytes(total, 3);
    let mib = 1024 * 1024;
    let r = api
        .call(
            Method::POST,
            "file_uploads",
            Some(json!({"mode": "multi_part", "number_of_parts": 3})),
        )
        .await;
    assert_validation(&r, "filename");
    let u = api
        .ok(
            Method::POST,
            "file_uploads",
            Some(json!({"mode": "multi_part", "number_of_parts": 3, "filename": "movie.mp4"})),
        )
        .await;
    let id = u["id"].as_str().unwrap().to_owned();
    assert_eq!(u["number_of_parts"]["total"], 3);
    // A non-final part under 5 MiB is refused.
    assert_eq!(
        send(&api, &id, "movie.mp4", vec![0; 5 * mib - 1], Some(1))
            .await
            .0,
        400
    );
    let (st, _) = send(&api, &id, "movie.mp4", data[20 * mib..].to_vec(), Some(3)).await;
    assert_eq!(st, 200);
    let (st, v) = send(&api, &id, "movie.mp4", data[..10 * mib].to_vec(), Some(1)).await;
    assert_eq!(st, 200);
    assert_eq!(v["status"], "pending");
    // Completing before every part arrived is refused.
    let r = api
        .call(Method::POST, &format!("file_uploads/{id}/complete"), None)
        .await;
    assert_eq!(r.0, 400);
    send(
        &api,
        &id,
        "movie.mp4",
        data[10 * mib..20 * mib].to_vec(),
        Some(2),
    )
    .await;
    let done = api
        .ok(Method::POST, &format!("file_uploads/{id}/complete"), None)
        .await;
    assert_eq!(done["status"], "uploaded");
    assert_eq!(done["content_length"], total);
    assert_eq!(s.upload(&id).unwrap().hash, Some(content_hash(&data)));

    // Attaching: uploaded ok (expiry cleared), pending and unknown refused.
    let (st, v) = api
        .append(
            &root,
            json!({"children": [{"video": {"type": "file_upload", "file_upload": {"id": id}}}]}),
        )
        .await;
    assert_eq!(st, 200, "{v}");
    assert_eq!(v["results"][0]["video"]["type"], "file");
    let got = api
        .ok(Method::GET, &format!("file_uploads/{id}"), None)
        .await;
    assert!(got["expiry_time"].is_null());
    assert!(s.upload(&id).unwrap().attached);
    assert_eq!(
        s.dump(&root).unwrap().children[0].file.as_deref(),
        Some(format!("file_upload:{id}").as_str())
    );

    let pending = api
        .ok(
            Method::POST,
            "file_uploads",
            Some(json!({"filename": "a.png"})),
        )
        .await;
    let pid = pending["id"].as_str().unwrap();
    let r = api
        .append(
            &root,
            json!({"children": [{"image": {"file_upload": {"id": pid}}}]}),
        )
        .await;
    assert_validation(&r, "body.children[0].image.file_upload.id");
    let unknown = uuid::Uuid::new_v4().to_string();
    let r = api
        .append(
            &root,
            json!({"children": [{"file": {"file_upload": {"id": unknown}}}]}),
        )
        .await;
    assert_validation(&r, "body.children[0].file.file_upload.id");

    // Unsupported extensions are refused.
    let r = api
        .call(
            Method::POST,
            "file_uploads",
            Some(json!({"filename": "notes.one"})),
        )
        .await;
    assert_eq!(r.0, 400);
}

#[tokio::test]
async fn unattached_uploads_expire() {
    let s = NotionServer::start(NotionServerConfig {
        upload_expiry: Duration::from_millis(300),
        ..fast()
    })
    .await;
    let api = Api::new(&s);
    let root = s.add_shared_page("Root");
    let u = api
        .ok(
            Method::POST,
            "file_uploads",
            Some(json!({"filename": "a.png"})),
        )
        .await;
    let id = u["id"].as_str().unwrap().to_owned();
    assert_eq!(send(&api, &id, "a.png", vec![1, 2, 3], None).await.0, 200);
    tokio::time::sleep(Duration::from_millis(400)).await;
    let got = api
        .ok(Method::GET, &format!("file_uploads/{id}"), None)
        .await;
    assert_eq!(got["status"], "expired");
    let r = api
        .append(
            &root,
            json!({"children": [{"image": {"file_upload": {"id": id}}}]}),
        )
        .await;
    assert_validation(&r, "expired");
}

#[tokio::test]
async fn rate_limit_answers_429_with_retry_after() {
    let s = NotionServer::start(NotionServerConfig {
        rate: RateConfig {
            per_second: 2.0,
            burst: 2,
        },
        ..Default::default()
    })
    .await;
    let api = Api::new(&s);
    let mut statuses = Vec::new();
    let mut retry_after = None;
    for _ in 0..3 {
        let r = api.req(Method::GET, "users/me").send().await.unwrap();
        statuses.push(r.status().as_u16());
        if r.status() == 429 {
            retry_after = r
                .headers()
                .get("retry-after")
                .map(|h| h.to_str().unwrap().to_owned());
            assert_eq!(r.json::<Value>().await.unwrap()["code"], "rate_limited");
        }
    }
    assert_eq!(statuses, [200, 200, 429]);
    let secs: u64 = retry_after.unwrap().parse().expect("integer Retry-After");
    assert_eq!(secs, 1);
    tokio::time::sleep(Duration::from_millis(550)).await;
    assert_eq!(
        api.req(Method::GET, "users/me")
            .send()
            .await
            .unwrap()
            .status(),
        200
    );
    assert_eq!(s.counters().rate_limited, 1);

    s.force_rate_limit_for(Duration::from_secs(90));
    let r = api.req(Method::GET, "users/me").send().await.unwrap();
    assert_eq!(r.status(), 429);
    assert_eq!(r.headers()["retry-after"], "90");
}

#[tokio::test]
async fn injected_faults() {
    let s = NotionServer::start(NotionServerConfig { seed: 42, ..fast() }).await;
    let api = Api::new(&s);
    let root = s.add_shared_page("Root");
    for (status, code) in [
        (500, "internal_server_error"),
        (502, "bad_gateway"),
        (503, "service_unavailable"),
        (504, "gateway_timeout"),
        (409, "conflict_error"),
        (529, "service_overload"),
    ] {
        s.inject(
            FaultRule::new(FaultKind::Status(status))
                .on(Endpoint::GetPage)
                .times(1),
        );
        // Other endpoints are untouched.
        api.ok(Method::GET, "users/me", None).await;
        let (st, v) = api.call(Method::GET, &format!("pages/{root}"), None).await;
        assert_eq!((st, v["code"].as_str().unwrap()), (status, code));
        // Only once.
        api.ok(Method::GET, &format!("pages/{root}"), None).await;
    }
    s.inject(FaultRule::new(FaultKind::Status(503)).ratio(0.5));
    let mut fails = 0;
    for _ in 0..40 {
        if api.call(Method::GET, "users/me", None).await.0 == 503 {
            fails += 1;
        }
    }
    assert!((10..=30).contains(&fails), "{fails}");
    s.clear_faults();

    s.inject(FaultRule::new(FaultKind::Delay(Duration::from_millis(300))).times(1));
    let t = Instant::now();
    api.ok(Method::GET, "users/me", None).await;
    assert!(t.elapsed() >= Duration::from_millis(300));
    assert_eq!(s.counters().faults, 6 + fails + 1);
}

#[tokio::test]
async fn applied_then_504_or_drop_leaves_the_write_applied() {
    let s = NotionServer::start(fast()).await;
    let api = Api::new(&s);
    let root = s.add_shared_page("Root");
    s.inject(FaultRule::new(FaultKind::AppliedThen504).times(2));
    let (st, v) = api.create_page(&root, "Once", json!([para("body")])).await;
    assert_eq!((st, v["code"].as_str()), (504, Some("gateway_timeout")));
    let pages = s.pages_under(&root);
    assert_eq!(pages.len(), 1);
    assert_eq!(pages[0].1, "Once");
    let (st, _) = api
        .append(&pages[0].0, json!({"children": [para("more")]}))
        .await;
    assert_eq!(st, 504);
    assert_eq!(s.dump(&pages[0].0).unwrap().children.len(), 2);

    s.inject(
        FaultRule::new(FaultKind::AppliedThenDrop)
            .on(Endpoint::AppendChildren)
            .times(1),
    );
    let r = api
        .req(Method::PATCH, &format!("blocks/{root}/children"))
        .json(&json!({"children": [para("dropped")]}))
        .send()
        .await;
    let failed = match r {
        Err(_) => true,
        Ok(resp) => resp.bytes().await.is_err(),
    };
    assert!(failed, "the answer must not arrive whole");
    let texts: Vec<String> = s
        .dump(&root)
        .unwrap()
        .children
        .into_iter()
        .map(|c| c.text)
        .collect();
    assert_eq!(texts, ["", "dropped"]);
    let log = s.request_log();
    assert_eq!(log.iter().filter(|l| l.status == 504).count(), 2);
}

#[tokio::test]
async fn dump_shape() {
    let s = NotionServer::start(fast()).await;
    let api = Api::new(&s);
    let root = s.add_shared_page("Notebook");
    let (_, page) = api
        .create_page(
            &root,
            "Page 1",
            json!([
                {"heading_1": {"rich_text": [{"text": {"content": "Title"}}]}},
                {"bulleted_list_item": {"rich_text": [{"text": {"content": "item "}}, {"text": {"content": "bold", "link": null}, "annotations": {"bold": true}}],
                    "children": [para("nested")]}},
                {"table": {"table_width": 2, "has_column_header": true, "children": [
                    {"table_row": {"cells": [[{"text": {"content": "A"}}], [{"text": {"content": "B"}}]]}}
                ]}},
                {"image": {"external": {"url": "https://example.com/a.png"}}}
            ]),
        )
        .await;
    assert_eq!(page["object"], "page");
    let dump = s.dump(&root).unwrap();
    let expected: DumpNode = serde_json::from_value(json!({
        "kind": "page", "title": "Notebook",
        "children": [{"kind": "page", "title": "Page 1", "children": [
            {"kind": "heading_1", "text": "Title"},
            {"kind": "bulleted_list_item", "text": "item bold", "children": [{"kind": "paragraph", "text": "nested"}]},
            {"kind": "table", "children": [{"kind": "table_row", "text": "A | B"}]},
            {"kind": "image", "file": "external:https://example.com/a.png"}
        ]}]
    }))
    .unwrap();
    assert_eq!(dump, expected);
    let blocks = s.blocks_of(page["id"].as_str().unwrap());
    assert_eq!(blocks.len(), 4);
    assert_eq!(blocks[1]["has_children"], true);
    let per = s.counters().per_endpoint;
    assert_eq!(per.get(&Endpoint::CreatePage), Some(&1));
}

#[tokio::test]
async fn upload_steps_applied_then_504_or_dropped_are_applied_and_read_back() {
    let s = NotionServer::start(fast()).await;
    let api = Api::new(&s);
    // A single-part send applied, answered 504: the upload is uploaded and a repeat is refused with
    // the status named.
    let u = api
        .ok(
            Method::POST,
            "file_uploads",
            Some(json!({"filename": "a.png"})),
        )
        .await;
    let id = u["id"].as_str().unwrap().to_owned();
    s.inject(
        FaultRule::new(FaultKind::AppliedThen504)
            .on(Endpoint::SendUpload)
            .times(1),
    );
    let (st, v) = send(&api, &id, "a.png", bytes(1000, 1), None).await;
    assert_eq!((st, v["code"].as_str()), (504, Some("gateway_timeout")));
    let got = api
        .ok(Method::GET, &format!("file_uploads/{id}"), None)
        .await;
    assert_eq!(got["status"], "uploaded");
    assert_eq!(got["content_length"], 1000);
    let (st, v) = send(&api, &id, "a.png", bytes(1000, 1), None).await;
    assert_eq!(st, 400);
    assert!(v["message"].as_str().unwrap().contains("`uploaded`"), "{v}");

    // Multi-part: the second part's answer dropped, then the completion's answer 504: the read-back
    // counts the parts held, then reports the upload uploaded.
    let mib = 1024 * 1024;
    let data = bytes(21 * mib, 2);
    let u = api
        .ok(
            Method::POST,
            "file_uploads",
            Some(json!({"mode": "multi_part", "number_of_parts": 3, "filename": "m.mp4"})),
        )
        .await;
    let id = u["id"].as_str().unwrap().to_owned();
    assert_eq!(u["number_of_parts"], json!({"total": 3, "sent": 0}));
    s.inject(
        FaultRule::new(FaultKind::AppliedThenDrop)
            .on(Endpoint::SendUpload)
            .after(1)
            .times(1),
    );
    for n in 1..=2u32 {
        let part = data[(n as usize - 1) * 10 * mib..n as usize * 10 * mib].to_vec();
        let form = reqwest::multipart::Form::new()
            .part(
                "file",
                reqwest::multipart::Part::bytes(part).file_name("m.mp4"),
            )
            .text("part_number", n.to_string());
        let r = api
            .req(Method::POST, &format!("file_uploads/{id}/send"))
            .multipart(form)
            .send()
            .await;
        let whole = match r {
            Err(_) => false,
            Ok(resp) => resp.bytes().await.is_ok(),
        };
        assert_eq!(whole, n == 1, "part {n}");
    }
    let got = api
        .ok(Method::GET, &format!("file_uploads/{id}"), None)
        .await;
    assert_eq!(got["status"], "pending");
    assert_eq!(got["number_of_parts"], json!({"total": 3, "sent": 2}));
    let (st, _) = send(&api, &id, "m.mp4", data[20 * mib..].to_vec(), Some(3)).await;
    assert_eq!(st, 200);
    s.inject(
        FaultRule::new(FaultKind::AppliedThen504)
            .on(Endpoint::CompleteUpload)
            .times(1),
    );
    let r = api
        .call(Method::POST, &format!("file_uploads/{id}/complete"), None)
        .await;
    assert_eq!(r.0, 504);
    let got = api
        .ok(Method::GET, &format!("file_uploads/{id}"), None)
        .await;
    assert_eq!(got["status"], "uploaded");
    assert_eq!(s.upload(&id).unwrap().hash, Some(content_hash(&data)));
    let r = api
        .call(Method::POST, &format!("file_uploads/{id}/complete"), None)
        .await;
    assert_eq!(r.0, 400, "a second completion is refused");
}

#[tokio::test]
async fn the_block_limit_and_a_missing_capability_answer_403_restricted_resource() {
    let s = NotionServer::start(fast()).await;
    let api = Api::new(&s);
    let root = s.add_shared_page("Root");
    // Two more blocks fit; the request that reaches the limit succeeds even past it.
    s.set_block_limit(Some(s.block_count() + 2));
    let (st, _) = api
        .append(
            &root,
            json!({"children": [para("a"), para("b"), para("c")]}),
        )
        .await;
    assert_eq!(st, 200);
    assert_eq!(s.block_count(), 4);
    let (st, v) = api.append(&root, json!({"children": [para("d")]})).await;
    assert_eq!((st, v["code"].as_str()), (403, Some("restricted_resource")));
    assert!(
        v["message"].as_str().unwrap().contains("block limit"),
        "{v}"
    );
    assert_eq!(v["additional_data"]["block_limit"], "block_creation");
    // Localised: another message, the same data.
    s.set_localised_messages(true);
    let (st, v) = api.append(&root, json!({"children": [para("d")]})).await;
    assert_eq!(st, 403);
    assert!(!v["message"].as_str().unwrap().contains("block"), "{v}");
    assert_eq!(v["additional_data"]["block_limit"], "block_creation");
    s.set_localised_messages(false);
    let (st, _) = api.create_page(&root, "More", json!([])).await;
    assert_eq!(st, 403);
    // reads, edits and deletes still work, and a deletion gives no room back
    let kids = api.children(&root).await;
    assert_eq!(kids.len(), 3);
    let first = kids[0]["id"].as_str().unwrap();
    api.ok(Method::DELETE, &format!("blocks/{first}"), None)
        .await;
    assert_eq!(
        api.append(&root, json!({"children": [para("e")]})).await.0,
        403
    );
    s.set_block_limit(None);
    assert_eq!(
        api.append(&root, json!({"children": [para("e")]})).await.0,
        200
    );

    // Without the Insert content capability: the same status and code, another message.
    s.set_insert_content(false);
    let (st, v) = api.append(&root, json!({"children": [para("f")]})).await;
    assert_eq!((st, v["code"].as_str()), (403, Some("restricted_resource")));
    assert!(
        v["message"].as_str().unwrap().contains("insert content"),
        "{v}"
    );
    assert!(
        !v["message"].as_str().unwrap().contains("block limit"),
        "{v}"
    );
    assert!(v.get("additional_data").is_none(), "{v}");
}

#[tokio::test]
async fn a_content_type_must_match_the_file_names_extension() {
    let s = NotionServer::start(fast()).await;
    let api = Api::new(&s);
    let r = api
        .call(
            Method::POST,
            "file_uploads",
            Some(json!({"filename": "scan.png", "content_type": "image/tiff"})),
        )
        .await;
    assert_eq!(r.0, 400, "{}", r.1);
    assert!(r.1["message"].as_str().unwrap().contains("does not match"));
    api.ok(
        Method::POST,
        "file_uploads",
        Some(json!({"filename": "scan.tif", "content_type": "image/tiff"})),
    )
    .await;
    // the part's declared type is checked too
    let u = api.ok(Method::POST, "file_uploads", Some(json!({}))).await;
    let id = u["id"].as_str().unwrap();
    let form = reqwest::multipart::Form::new().part(
        "file",
        reqwest::multipart::Part::bytes(vec![1, 2, 3])
            .file_name("a.png")
            .mime_str("application/pdf")
            .unwrap(),
    );
    let r = api
        .req(Method::POST, &format!("file_uploads/{id}/send"))
        .multipart(form)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 400);
}

#[tokio::test]
async fn times_are_rounded_down_to_the_minute_and_a_persons_edit_names_the_person() {
    let s = NotionServer::start(fast()).await;
    let api = Api::new(&s);
    let root = s.add_shared_page("Root");
    // 2026-03-02T09:00:42.123Z: Notion shows 09:00:00.000.
    s.stamp_writes_at(Some(1_772_442_042_123));
    let (st, page) = api
        .create_page(&root, "Notes", json!([para("first")]))
        .await;
    assert_eq!(st, 200, "{page}");
    assert_eq!(page["created_time"], "2026-03-02T09:00:00.000Z");
    assert_eq!(page["last_edited_time"], "2026-03-02T09:00:00.000Z");
    let id = page["id"].as_str().unwrap().to_owned();
    let kids = api.children(&id).await;
    assert_eq!(kids[0]["last_edited_time"], "2026-03-02T09:00:00.000Z");
    let bot = page["last_edited_by"]["id"].clone();

    // A person's edit in the app, two minutes later: the block and its page, by the person.
    s.stamp_writes_at(Some(1_772_442_042_123 + 120_000));
    s.edit_block_as_person(kids[0]["id"].as_str().unwrap(), "edited");
    let kids = api.children(&id).await;
    assert_eq!(kids[0]["paragraph"]["rich_text"][0]["plain_text"], "edited");
    assert_eq!(kids[0]["last_edited_time"], "2026-03-02T09:02:00.000Z");
    let page = api.ok(Method::GET, &format!("pages/{id}"), None).await;
    assert_eq!(page["last_edited_time"], "2026-03-02T09:02:00.000Z");
    assert_ne!(page["last_edited_by"]["id"], bot);
    s.retitle_as_person(&id, "Renamed");
    let page = api.ok(Method::GET, &format!("pages/{id}"), None).await;
    assert_eq!(
        page["properties"]["title"]["title"][0]["plain_text"],
        "Renamed"
    );

    // The integration's next write is its own again; writes a step apart land minutes apart.
    s.stamp_writes_from(1_772_442_042_123 + 600_000, 60_000);
    api.ok(
        Method::PATCH,
        &format!("blocks/{}", kids[0]["id"].as_str().unwrap()),
        Some(para("by the integration")),
    )
    .await;
    api.ok(
        Method::PATCH,
        &format!("blocks/{id}/children"),
        Some(json!({"children": [para("second")]})),
    )
    .await;
    let kids = api.children(&id).await;
    assert_eq!(kids[0]["last_edited_by"]["id"], bot);
    assert_eq!(kids[0]["last_edited_time"], "2026-03-02T09:10:00.000Z");
    assert_eq!(kids[1]["created_time"], "2026-03-02T09:11:00.000Z");
}

#[tokio::test]
async fn heading_4_is_taken_from_the_pinned_version_and_refused_by_older_ones() {
    let s = NotionServer::start(fast()).await;
    let mut api = Api::new(&s);
    let root = s.add_shared_page("Root");
    let h4 = json!({"heading_4": {"rich_text": [{"text": {"content": "Four"}}]}});
    let (st, v) = api.append(&root, json!({"children": [h4.clone()]})).await;
    assert_eq!(st, 200, "{v}");
    assert_eq!(v["results"][0]["type"], "heading_4");
    assert_eq!(v["results"][0]["heading_4"]["is_toggleable"], false);
    // A client on a version from before the block existed is refused, naming it.
    api.version = "2025-09-03";
    let (st, v) = api.append(&root, json!({"children": [h4.clone()]})).await;
    assert_eq!((st, v["code"].as_str()), (400, Some("validation_error")));
    assert!(v["message"].as_str().unwrap().contains("heading_4"), "{v}");
    let (st, _) = api.create_page(&root, "Old", json!([h4])).await;
    assert_eq!(st, 400);
}
