//! The Graph OneNote test server, checked rule by rule over real HTTP (loopback, real time, short
//! windows). Each test starts its own server.

use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use notebridge_testkit::generator::{generate, NotebookSpec};
use notebridge_testkit::graph::faults::ExternalScope;
use notebridge_testkit::graph::{GraphServer, GraphServerConfig, ScopeHeader};
use notebridge_testkit::{TestUser, TokenRegistry};
use serde_json::{json, Value};

const ALICE: &str = "alice-0000-user-id";
const BOB: &str = "bob-0000-user-id";

struct Env {
    srv: GraphServer,
    http: reqwest::Client,
    reg: Arc<TokenRegistry>,
}

impl Env {
    async fn start(
        cfg: impl FnOnce(GraphServerConfig) -> GraphServerConfig,
        spec: NotebookSpec,
    ) -> Env {
        let reg = Arc::new(TokenRegistry::default());
        reg.insert("tok-alice", ALICE, Duration::from_secs(3600));
        reg.insert("tok-bob", BOB, Duration::from_secs(3600));
        let srv = GraphServer::start(cfg(GraphServerConfig::new(Arc::clone(&reg)))).await;
        srv.add_user(TestUser::named("alice"));
        srv.load(ALICE, generate(&spec));
        srv.load(BOB, generate(&NotebookSpec::tiny(99)));
        Env {
            srv,
            http: reqwest::Client::new(),
            reg,
        }
    }

    fn url(&self, rel: &str) -> String {
        format!("{}{rel}", self.srv.base_url())
    }

    async fn get_as(&self, token: &str, rel: &str) -> reqwest::Response {
        let url = if rel.starts_with("http") {
            rel.to_owned()
        } else {
            self.url(rel)
        };
        self.http
            .get(url)
            .bearer_auth(token)
            .send()
            .await
            .expect("request")
    }

    async fn get(&self, rel: &str) -> reqwest::Response {
        self.get_as("tok-alice", rel).await
    }

    async fn json(&self, rel: &str) -> (u16, Value) {
        let r = self.get(rel).await;
        let s = r.status().as_u16();
        (s, r.json().await.expect("json body"))
    }

    async fn batch(&self, body: Value) -> (u16, Value) {
        let r = self
            .http
            .post(self.url("/$batch"))
            .bearer_auth("tok-alice")
            .json(&body)
            .send()
            .await
            .unwrap();
        let s = r.status().as_u16();
        (s, r.json().await.unwrap())
    }

    fn first_section(&self) -> String {
        let n = self.srv.notes(ALICE);
        n.sections_in(Some(&n.notebooks[0].id), None)[0].id.clone()
    }
}

fn roomy(c: GraphServerConfig) -> GraphServerConfig {
    let mut c = c.with_windows("10000/60s", "10000/60s");
    c.limits.user_concurrency = 50;
    c.limits.app_concurrency = 50;
    c
}

fn error_code(v: &Value) -> &str {
    v["error"]["code"].as_str().unwrap_or("")
}

#[tokio::test]
async fn pages_page_by_next_link_and_skip_and_cap_top_at_100() {
    let spec = NotebookSpec {
        sections_per_container: 1,
        pages_per_section: 45,
        images_per_page: 0,
        ..NotebookSpec::default()
    };
    let e = Env::start(roomy, spec).await;
    let sec = e.first_section();
    let mut url = format!("/me/onenote/sections/{sec}/pages");
    let mut seen = Vec::new();
    let mut sizes = Vec::new();
    loop {
        let (s, v) = e.json(&url).await;
        assert_eq!(s, 200);
        let page = v["value"].as_array().unwrap();
        sizes.push(page.len());
        seen.extend(page.iter().map(|p| p["id"].as_str().unwrap().to_owned()));
        match v["@odata.nextLink"].as_str() {
            Some(next) => {
                assert!(next.starts_with("http://127.0.0.1:"), "absolute: {next}");
                url = next.to_owned();
            }
            None => break,
        }
    }
    assert_eq!(sizes, vec![20, 20, 5]);
    seen.sort();
    seen.dedup();
    assert_eq!(seen.len(), 45);
    // the documented default order: lastModifiedDateTime descending
    let (_, v) = e
        .json(&format!("/me/onenote/sections/{sec}/pages?$top=100"))
        .await;
    let dates: Vec<&str> = v["value"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["lastModifiedDateTime"].as_str().unwrap())
        .collect();
    assert_eq!(dates.len(), 45);
    assert!(dates.windows(2).all(|w| w[0] >= w[1]));
    assert!(v.get("@odata.nextLink").is_none());

    let (s, v) = e
        .json(&format!("/me/onenote/sections/{sec}/pages?$top=101"))
        .await;
    assert_eq!((s, error_code(&v)), (400, "20129"));

    // with nextLink missing (a reported service quirk), $skip still pages
    e.srv.faults().omit_next_links(true);
    let (_, v) = e
        .json(&format!("/me/onenote/sections/{sec}/pages?$top=10"))
        .await;
    assert!(v.get("@odata.nextLink").is_none());
    let (_, v2) = e
        .json(&format!(
            "/me/onenote/sections/{sec}/pages?$top=10&$skip=40"
        ))
        .await;
    assert_eq!(v2["value"].as_array().unwrap().len(), 5);
}

#[tokio::test]
async fn pagelevel_select_entities_and_404() {
    let spec = NotebookSpec {
        sections_per_container: 1,
        pages_per_section: 30,
        subpage_ratio: 0.6,
        ..NotebookSpec::default()
    };
    let e = Env::start(roomy, spec).await;
    let sec = e.first_section();
    let (_, plain) = e
        .json(&format!("/me/onenote/sections/{sec}/pages?$top=30"))
        .await;
    assert!(plain["value"][0].get("level").is_none());
    assert!(plain["value"][0]["parentSection"]["id"] == json!(sec));
    let (_, lv) = e
        .json(&format!(
            "/me/onenote/sections/{sec}/pages?pagelevel=true&$top=30"
        ))
        .await;
    let levels: Vec<u64> = lv["value"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["level"].as_u64().unwrap())
        .collect();
    assert!(levels.iter().all(|l| *l <= 2) && levels.contains(&1));
    let mut orders: Vec<u64> = lv["value"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["order"].as_u64().unwrap())
        .collect();
    orders.sort();
    assert_eq!(orders, (0..30).collect::<Vec<_>>());
    let (s, v) = e.json("/me/onenote/notebooks?pagelevel=true").await;
    assert_eq!((s, error_code(&v)), (400, "20104"));

    let (_, sel) = e
        .json(&format!(
            "/me/onenote/sections/{sec}/pages?$select=id,title"
        ))
        .await;
    let keys: Vec<&String> = sel["value"][0].as_object().unwrap().keys().collect();
    assert_eq!(keys, vec!["id", "title"]);
    let (s, _) = e.json("/me/onenote/notebooks?$select=nope").await;
    assert_eq!(s, 400);

    let (s, nb) = e.json("/me/onenote/notebooks").await;
    assert_eq!(s, 200);
    let nb0 = &nb["value"][0];
    for k in [
        "id",
        "displayName",
        "createdDateTime",
        "lastModifiedDateTime",
        "self",
        "links",
        "sectionsUrl",
        "sectionGroupsUrl",
        "isDefault",
        "userRole",
    ] {
        assert!(nb0.get(k).is_some(), "notebook lacks {k}");
    }
    assert!(nb["@odata.context"]
        .as_str()
        .unwrap()
        .contains("$metadata#users("));
    let pid = plain["value"][0]["id"].as_str().unwrap();
    let (s, p) = e
        .json(&format!("/me/onenote/pages/{pid}?pagelevel=true"))
        .await;
    assert_eq!(s, 200);
    assert!(p["level"].is_u64() && p["contentUrl"].as_str().unwrap().ends_with("/content"));

    let (s, v) = e.json("/me/onenote/pages/1-doesnotexist!1-X!1").await;
    assert_eq!((s, error_code(&v)), (404, "20102"));
    let (s, me) = e.json("/me").await;
    assert_eq!(
        (s, me["userPrincipalName"].as_str()),
        (200, Some("alice@contoso.test"))
    );
}

#[tokio::test]
async fn nested_section_groups_and_expand() {
    let spec = NotebookSpec {
        section_groups_depth: 2,
        section_groups_per_container: 2,
        sections_per_container: 1,
        pages_per_section: 1,
        ..NotebookSpec::default()
    };
    let e = Env::start(roomy, spec).await;
    let (_, nbs) = e.json("/me/onenote/notebooks").await;
    let nb = nbs["value"][0]["id"].as_str().unwrap().to_owned();
    // walk the tree by explicit recursion
    let mut sections = e
        .json(&format!("/me/onenote/notebooks/{nb}/sections"))
        .await
        .1["value"]
        .as_array()
        .unwrap()
        .len();
    let mut groups: Vec<String> = e
        .json(&format!("/me/onenote/notebooks/{nb}/sectionGroups"))
        .await
        .1["value"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["id"].as_str().unwrap().to_owned())
        .collect();
    let mut seen_groups = 0;
    while let Some(g) = groups.pop() {
        seen_groups += 1;
        let (_, s) = e
            .json(&format!("/me/onenote/sectionGroups/{g}/sections"))
            .await;
        for sec in s["value"].as_array().unwrap() {
            assert_eq!(sec["parentSectionGroup"]["id"], json!(g));
            sections += 1;
        }
        let (_, sub) = e
            .json(&format!("/me/onenote/sectionGroups/{g}/sectionGroups"))
            .await;
        groups.extend(
            sub["value"]
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x["id"].as_str().unwrap().to_owned()),
        );
    }
    assert_eq!(seen_groups, 6);
    assert_eq!(sections, 7);
    // notebooks/{id}/sections is top-level only; flat sections lists all
    let (_, all) = e.json("/me/onenote/sections").await;
    assert_eq!(all["value"].as_array().unwrap().len(), 7);

    let (s, v) = e
        .json("/me/onenote/notebooks?$expand=sections,sectionGroups($expand=sections)")
        .await;
    assert_eq!(s, 200);
    let n0 = &v["value"][0];
    assert_eq!(n0["sections"].as_array().unwrap().len(), 1);
    let g0 = &n0["sectionGroups"][0];
    assert_eq!(g0["sections"].as_array().unwrap().len(), 1);
    // one level only unless asked: no sectionGroups inside
    assert!(g0.get("sectionGroups").is_none());
    let (_, deep) = e
        .json("/me/onenote/notebooks?$expand=sectionGroups($levels=max;$expand=sections)")
        .await;
    assert_eq!(
        deep["value"][0]["sectionGroups"][0]["sectionGroups"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    let (s, _) = e.json("/me/onenote/notebooks?$expand=pages").await;
    assert_eq!(s, 400);
}

#[tokio::test]
async fn tokens_are_checked_against_the_registry() {
    let e = Env::start(roomy, NotebookSpec::tiny(1)).await;
    let r = e
        .http
        .get(e.url("/me/onenote/notebooks"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 401);
    let r = e.get_as("forged", "/me/onenote/notebooks").await;
    assert_eq!(r.status(), 401);
    let v: Value = r.json().await.unwrap();
    assert_eq!(error_code(&v), "InvalidAuthenticationToken");
    e.reg.insert("short", ALICE, Duration::from_millis(50));
    assert_eq!(
        e.get_as("short", "/me/onenote/notebooks").await.status(),
        200
    );
    tokio::time::sleep(Duration::from_millis(80)).await;
    assert_eq!(
        e.get_as("short", "/me/onenote/notebooks").await.status(),
        401
    );
    // each user sees their own notebooks
    let (_, a) = e.json("/me/onenote/sections").await;
    let b: Value = e
        .get_as("tok-bob", "/me/onenote/sections")
        .await
        .json()
        .await
        .unwrap();
    assert_ne!(a["value"][0]["id"], b["value"][0]["id"]);
    // 401 on demand
    e.srv.faults().unauthorized_next(1);
    assert_eq!(e.get("/me/onenote/notebooks").await.status(), 401);
    assert_eq!(e.get("/me/onenote/notebooks").await.status(), 200);
    let unauth = e.srv.log().iter().filter(|l| l.status == 401).count();
    assert_eq!(unauth, 4);
}

#[tokio::test]
async fn window_slides_and_429_has_scope_but_no_retry_after() {
    let e = Env::start(
        |c| c.with_windows("5/600ms", "1000/60s"),
        NotebookSpec::tiny(2),
    )
    .await;
    let t0 = tokio::time::Instant::now();
    for _ in 0..3 {
        assert_eq!(e.get("/me/onenote/notebooks").await.status(), 200);
    }
    tokio::time::sleep_until(t0 + Duration::from_millis(300)).await;
    for _ in 0..2 {
        assert_eq!(e.get("/me/onenote/notebooks").await.status(), 200);
    }
    tokio::time::sleep_until(t0 + Duration::from_millis(700)).await;
    // the first three have left the window, the two from t0+300ms have not: three more fit, not five
    for _ in 0..3 {
        assert_eq!(e.get("/me/onenote/notebooks").await.status(), 200);
    }
    let r = e.get("/me/onenote/notebooks").await;
    assert!(
        t0.elapsed() < Duration::from_millis(900),
        "test machine too slow"
    );
    assert_eq!(r.status(), 429);
    assert!(r.headers().get("retry-after").is_none());
    assert_eq!(r.headers()["x-ms-throttle-scope"], "User");
    let v: Value = r.json().await.unwrap();
    assert_eq!(error_code(&v), "20166");
    // the other user has their own window
    assert_eq!(
        e.get_as("tok-bob", "/me/onenote/notebooks").await.status(),
        200
    );
    // /me is not a OneNote call
    assert_eq!(e.get("/me").await.status(), 200);
}

#[tokio::test]
async fn app_scope_and_full_scope_header() {
    let e = Env::start(
        |c| {
            let mut c = c.with_windows("100/60s", "3/60s");
            c.scope_header = ScopeHeader::Full {
                app_id: "app-1".into(),
                tenant_id: "tenant-1".into(),
            };
            c
        },
        NotebookSpec::tiny(3),
    )
    .await;
    for t in ["tok-alice", "tok-bob", "tok-alice"] {
        assert_eq!(e.get_as(t, "/me/onenote/notebooks").await.status(), 200);
    }
    let r = e.get_as("tok-bob", "/me/onenote/notebooks").await;
    assert_eq!(r.status(), 429);
    assert_eq!(
        r.headers()["x-ms-throttle-scope"],
        "Application/Read/app-1/tenant-1"
    );
}

#[tokio::test]
async fn hammering_while_throttled_keeps_the_throttle() {
    let e = Env::start(
        |c| c.with_windows("3/400ms", "1000/60s"),
        NotebookSpec::tiny(4),
    )
    .await;
    let t0 = tokio::time::Instant::now();
    for _ in 0..3 {
        assert_eq!(e.get("/me/onenote/notebooks").await.status(), 200);
    }
    // keep asking every 100 ms for 800 ms: the first three left the window long ago, yet every
    // refused request counted, so the scope stays over its limit
    for i in 1..=8 {
        tokio::time::sleep_until(t0 + Duration::from_millis(100 * i)).await;
        assert_eq!(
            e.get("/me/onenote/notebooks").await.status(),
            429,
            "attempt {i}"
        );
    }
    // a quiet full window later it opens again
    tokio::time::sleep(Duration::from_millis(450)).await;
    assert_eq!(e.get("/me/onenote/notebooks").await.status(), 200);
    let c = e.srv.counters();
    assert_eq!(c.arrived_over_limit, 8);
    assert_eq!(c.throttled, 8);
    assert_eq!(c.per_user[ALICE], 12);
}

#[tokio::test]
async fn concurrency_cap_per_user_and_app() {
    let e = Env::start(
        |c| {
            let mut c = c.with_windows("100/60s", "100/60s");
            c.limits.user_concurrency = 2;
            c.limits.app_concurrency = 3;
            c
        },
        NotebookSpec::tiny(5),
    )
    .await;
    let e = Arc::new(e);
    e.srv.faults().delay_next(2, Duration::from_millis(400));
    let slow: Vec<_> = (0..2)
        .map(|_| {
            let e = Arc::clone(&e);
            tokio::spawn(async move { e.get("/me/onenote/notebooks").await.status().as_u16() })
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(150)).await;
    let r = e.get("/me/onenote/notebooks").await;
    assert_eq!(r.status(), 429);
    assert_eq!(r.headers()["x-ms-throttle-scope"], "User");
    // bob takes the app's third slot (held by a delay), so a fourth request fails on the app cap
    e.srv.faults().delay_next(1, Duration::from_millis(300));
    let e2 = Arc::clone(&e);
    let bob = tokio::spawn(async move {
        e2.get_as("tok-bob", "/me/onenote/notebooks")
            .await
            .status()
            .as_u16()
    });
    tokio::time::sleep(Duration::from_millis(100)).await;
    let r = e.get_as("tok-bob", "/me/onenote/notebooks").await;
    assert_eq!(r.status(), 429);
    assert_eq!(r.headers()["x-ms-throttle-scope"], "Application");
    for s in slow {
        assert_eq!(s.await.unwrap(), 200);
    }
    assert_eq!(bob.await.unwrap(), 200);
    let c = e.srv.counters();
    assert_eq!(c.peak_user_concurrency[ALICE], 2);
    assert_eq!(c.peak_app_concurrency, 3);
    assert_eq!(c.arrived_over_limit, 0);
    assert_eq!(e.get("/me/onenote/notebooks").await.status(), 200);
}

#[tokio::test]
async fn limit_percentage_header_above_point_eight() {
    let e = Env::start(
        |c| c.with_windows("10/30s", "1000/60s"),
        NotebookSpec::tiny(6),
    )
    .await;
    let mut seen = Vec::new();
    for _ in 0..10 {
        let r = e.get("/me/onenote/notebooks").await;
        seen.push(
            r.headers()
                .get("x-ms-throttle-limit-percentage")
                .map(|v| v.to_str().unwrap().to_owned()),
        );
    }
    let mut want = vec![None; 8];
    want.push(Some("0.90".to_owned()));
    want.push(Some("1.00".to_owned()));
    assert_eq!(seen, want);

    let off = Env::start(
        |c| {
            let mut c = c.with_windows("2/30s", "1000/60s");
            c.limit_percentage_header = false;
            c
        },
        NotebookSpec::tiny(6),
    )
    .await;
    for _ in 0..2 {
        let r = off.get("/me/onenote/notebooks").await;
        assert!(r.headers().get("x-ms-throttle-limit-percentage").is_none());
    }
}

fn get_req(id: &str, url: &str) -> Value {
    json!({ "id": id, "method": "GET", "url": url })
}

#[tokio::test]
async fn batch_validation() {
    let e = Env::start(roomy, NotebookSpec::tiny(7)).await;
    let many: Vec<Value> = (0..21)
        .map(|i| get_req(&i.to_string(), "/me/onenote/notebooks"))
        .collect();
    let (s, v) = e.batch(json!({ "requests": many })).await;
    assert_eq!((s, error_code(&v)), (400, "BadRequest"));
    let twenty: Vec<Value> = (0..20)
        .map(|i| get_req(&i.to_string(), "/me/onenote/notebooks"))
        .collect();
    assert_eq!(e.batch(json!({ "requests": twenty })).await.0, 200);
    let dup = json!({ "requests": [get_req("a", "/me/onenote/notebooks"), get_req("A", "/me/onenote/sections")] });
    assert_eq!(e.batch(dup).await.0, 400);
    let noid = json!({ "requests": [{ "method": "GET", "url": "/me/onenote/notebooks" }] });
    assert_eq!(e.batch(noid).await.0, 400);
    let abs = json!({ "requests": [get_req("1", &e.url("/me/onenote/notebooks"))] });
    assert_eq!(e.batch(abs).await.0, 400);
    let unknown_dep =
        json!({ "requests": [{ "id": "1", "method": "GET", "url": "/me", "dependsOn": ["9"] }] });
    assert_eq!(e.batch(unknown_dep).await.0, 400);
    let r = e
        .http
        .post(e.url("/$batch"))
        .bearer_auth("tok-alice")
        .body("not json")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 400);
}

#[tokio::test]
async fn batch_shuffles_encodes_and_resolves_dependencies() {
    let spec = NotebookSpec {
        sections_per_container: 1,
        pages_per_section: 2,
        images_per_page: 1,
        ..NotebookSpec::default()
    };
    let e = Env::start(
        |c| {
            let mut c = roomy(c);
            c.seed = 42;
            c
        },
        spec,
    )
    .await;
    let notes = e.srv.notes(ALICE);
    let page = &notes.pages[0];
    let res = &page.resources[0];
    let mut reqs: Vec<Value> = (0..8)
        .map(|i| get_req(&format!("n{i}"), "/me/onenote/notebooks"))
        .collect();
    reqs.push(get_req(
        "html",
        &format!("/me/onenote/pages/{}/content", page.id),
    ));
    reqs.push(get_req(
        "bin",
        &format!("me/onenote/resources/{res}/$value"),
    ));
    reqs.push(get_req("missing", "/me/onenote/pages/nope"));
    reqs.push(json!({ "id": "after-missing", "method": "GET", "url": "/me/onenote/notebooks", "dependsOn": ["missing"] }));
    reqs.push(json!({ "id": "after-html", "method": "GET", "url": "/me/onenote/notebooks", "dependsOn": ["html"] }));
    let (s, v) = e.batch(json!({ "requests": reqs })).await;
    assert_eq!(s, 200);
    let resp = v["responses"].as_array().unwrap();
    assert_eq!(resp.len(), 13);
    let ids: Vec<&str> = resp.iter().map(|r| r["id"].as_str().unwrap()).collect();
    let sent: Vec<&str> = reqs.iter().map(|r| r["id"].as_str().unwrap()).collect();
    assert_ne!(ids, sent, "responses must not simply follow request order");
    let by = |id: &str| resp.iter().find(|r| r["id"] == id).unwrap().clone();
    let b64 = base64::engine::general_purpose::STANDARD;
    let html = b64.decode(by("html")["body"].as_str().unwrap()).unwrap();
    assert!(String::from_utf8(html)
        .unwrap()
        .contains("<body data-absolute-enabled=\"true\""));
    let bin = b64.decode(by("bin")["body"].as_str().unwrap()).unwrap();
    assert_eq!(&bin[..8], b"\x89PNG\r\n\x1a\n");
    assert!(
        by("n0")["body"]["value"].is_array(),
        "JSON bodies stay JSON"
    );
    assert_eq!(by("missing")["status"], 404);
    assert_eq!(by("after-missing")["status"], 424);
    assert_eq!(by("after-html")["status"], 200);
    // same seed, same order
    let e2 = Env::start(
        |c| {
            let mut c = roomy(c);
            c.seed = 42;
            c
        },
        NotebookSpec {
            sections_per_container: 1,
            pages_per_section: 2,
            images_per_page: 1,
            ..NotebookSpec::default()
        },
    )
    .await;
    let (_, v2) = e2.batch(json!({ "requests": reqs })).await;
    let ids2: Vec<&str> = v2["responses"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ids2);
    let c = e.srv.counters();
    assert_eq!((c.batches, c.inner_requests), (1, 13));
}

#[tokio::test]
async fn batch_inner_requests_count_and_throttle_individually() {
    let e = Env::start(
        |c| {
            let mut c = c.with_windows("6/30s", "1000/60s");
            c.limits.user_concurrency = 50;
            c.batch_retry_after = Some("2.128".into());
            c
        },
        NotebookSpec::tiny(8),
    )
    .await;
    let reqs: Vec<Value> = (0..8)
        .map(|i| get_req(&i.to_string(), "/me/onenote/notebooks"))
        .collect();
    let (s, v) = e.batch(json!({ "requests": reqs })).await;
    assert_eq!(s, 200, "outer stays 200 when inner requests fail");
    let resp = v["responses"].as_array().unwrap();
    let ok = resp.iter().filter(|r| r["status"] == 200).count();
    let throttled: Vec<&Value> = resp.iter().filter(|r| r["status"] == 429).collect();
    assert_eq!((ok, throttled.len()), (6, 2));
    for t in throttled {
        assert_eq!(t["headers"]["x-ms-throttle-scope"], "User");
        assert_eq!(t["headers"]["Retry-After"], "2.128");
        assert_eq!(t["body"]["error"]["code"], "20166");
    }
    // the window is spent: a plain request is refused too
    let r = e.get("/me/onenote/notebooks").await;
    assert_eq!(r.status(), 429);
    assert!(r.headers().get("retry-after").is_none());
}

#[tokio::test]
async fn batch_parallel_requests_hold_concurrency_slots() {
    let e = Env::start(
        |c| c.with_windows("1000/60s", "1000/60s"),
        NotebookSpec::tiny(9),
    )
    .await;
    // default cap of 5 concurrent per user
    let reqs: Vec<Value> = (0..7)
        .map(|i| get_req(&i.to_string(), "/me/onenote/notebooks"))
        .collect();
    let (_, v) = e.batch(json!({ "requests": reqs })).await;
    let resp = v["responses"].as_array().unwrap();
    assert_eq!(resp.iter().filter(|r| r["status"] == 200).count(), 5);
    assert_eq!(resp.iter().filter(|r| r["status"] == 429).count(), 2);
    // sequential (dependsOn) requests take one slot at a time
    let seq: Vec<Value> = (0..7)
        .map(|i| {
            let mut r = get_req(&i.to_string(), "/me/onenote/notebooks");
            if i > 0 {
                r["dependsOn"] = json!([(i - 1).to_string()]);
            }
            r
        })
        .collect();
    let (_, v) = e.batch(json!({ "requests": seq })).await;
    assert!(v["responses"]
        .as_array()
        .unwrap()
        .iter()
        .all(|r| r["status"] == 200));
    assert_eq!(e.srv.counters().peak_user_concurrency[ALICE], 5);
}

#[tokio::test]
async fn server_error_faults_by_count_and_ratio() {
    let e = Env::start(roomy, NotebookSpec::tiny(10)).await;
    e.srv.faults().fail_next(2, 503);
    assert_eq!(e.get("/me/onenote/notebooks").await.status(), 503);
    assert_eq!(e.get("/me/onenote/notebooks").await.status(), 503);
    assert_eq!(e.get("/me/onenote/notebooks").await.status(), 200);

    async fn run_ratio(seed: u64) -> Vec<u16> {
        let e = Env::start(
            |c| {
                let mut c = roomy(c);
                c.seed = seed;
                c
            },
            NotebookSpec::tiny(10),
        )
        .await;
        e.srv.faults().fail_ratio(0.5, &[500, 502, 503, 504]);
        let mut out = Vec::new();
        for _ in 0..40 {
            out.push(e.get("/me/onenote/notebooks").await.status().as_u16());
        }
        out
    }
    let a = run_ratio(3).await;
    assert_eq!(a, run_ratio(3).await, "seeded faults repeat");
    let failed = a.iter().filter(|s| **s != 200).count();
    assert!((8..=32).contains(&failed), "{failed} of 40 failed");
    assert!(a.iter().all(|s| [200, 500, 502, 503, 504].contains(s)));
    assert!(
        [500u16, 502, 503, 504]
            .iter()
            .filter(|s| a.contains(s))
            .count()
            >= 3
    );
}

#[tokio::test]
async fn timeout_and_connection_drop_faults() {
    let e = Env::start(roomy, NotebookSpec::tiny(11)).await;
    e.srv.faults().delay_next(1, Duration::from_millis(500));
    let r = e
        .http
        .get(e.url("/me/onenote/notebooks"))
        .bearer_auth("tok-alice")
        .timeout(Duration::from_millis(150))
        .send()
        .await;
    assert!(r.unwrap_err().is_timeout());
    assert_eq!(e.get("/me/onenote/notebooks").await.status(), 200);

    e.srv.faults().drop_next(1);
    let r = e
        .http
        .get(e.url("/me/onenote/notebooks"))
        .bearer_auth("tok-alice")
        .send()
        .await;
    let err = r.expect_err("dropped connection gives no response");
    assert!(!err.is_timeout() && !err.is_status(), "{err:?}");
    assert_eq!(e.get("/me/onenote/notebooks").await.status(), 200);
    assert!(e.srv.log().iter().any(|l| l.status == 0));
}

#[tokio::test]
async fn inner_batch_failures_keep_outer_200() {
    let e = Env::start(roomy, NotebookSpec::tiny(12)).await;
    e.srv.faults().batch_inner_failures(1.0, &[502, 503]);
    let reqs: Vec<Value> = (0..4)
        .map(|i| get_req(&i.to_string(), "/me/onenote/notebooks"))
        .collect();
    let (s, v) = e.batch(json!({ "requests": reqs })).await;
    assert_eq!(s, 200);
    for r in v["responses"].as_array().unwrap() {
        assert!(r["status"] == 502 || r["status"] == 503, "{r}");
    }
    e.srv.faults().batch_inner_failures(1.0, &[429]);
    let (_, v) = e
        .batch(json!({ "requests": [get_req("x", "/me/onenote/notebooks")] }))
        .await;
    assert_eq!(v["responses"][0]["status"], 429);
    assert_eq!(v["responses"][0]["headers"]["x-ms-throttle-scope"], "User");
}

#[tokio::test]
async fn external_throttle_blocks_a_scope_for_a_while() {
    let e = Env::start(roomy, NotebookSpec::tiny(13)).await;
    e.srv.faults().throttle_externally(
        ExternalScope::User(ALICE.into()),
        Duration::from_millis(300),
    );
    let r = e.get("/me/onenote/notebooks").await;
    assert_eq!(r.status(), 429);
    assert_eq!(r.headers()["x-ms-throttle-scope"], "User");
    assert_eq!(
        e.get_as("tok-bob", "/me/onenote/notebooks").await.status(),
        200
    );
    tokio::time::sleep(Duration::from_millis(350)).await;
    assert_eq!(e.get("/me/onenote/notebooks").await.status(), 200);
    e.srv
        .faults()
        .throttle_externally(ExternalScope::Application, Duration::from_millis(300));
    let r = e.get_as("tok-bob", "/me/onenote/notebooks").await;
    assert_eq!(r.headers()["x-ms-throttle-scope"], "Application");
    assert_eq!(e.srv.counters().arrived_over_limit, 2);
}

#[tokio::test]
async fn content_and_resources_round_trip() {
    let spec = NotebookSpec {
        sections_per_container: 1,
        pages_per_section: 2,
        images_per_page: 1,
        attachments_per_page: 1,
        large_resource_bytes: Some(8 * 1024 * 1024),
        ..NotebookSpec::default()
    };
    let e = Env::start(roomy, spec).await;
    let notes = e.srv.notes(ALICE);
    let mut checked = 0;
    for p in &notes.pages {
        let r = e.get(&format!("/me/onenote/pages/{}/content", p.id)).await;
        assert_eq!(r.headers()["content-type"], "text/html");
        let html = r.text().await.unwrap();
        assert!(html.contains(&format!("<title>{}</title>", p.title)));
        // every resource URL in the page is served, users('...')-rooted as written
        for part in html
            .split("data=\"")
            .skip(1)
            .chain(html.split("data-fullres-src=\"").skip(1))
        {
            let url = &part[..part.find('"').unwrap()];
            assert!(url.contains("/users('alice-0000-user-id')/onenote/resources/"));
            let r = e.get(url).await;
            assert_eq!(r.status(), 200, "{url}");
            let len: u64 = r.headers()["content-length"]
                .to_str()
                .unwrap()
                .parse()
                .unwrap();
            let body = r.bytes().await.unwrap();
            assert_eq!(body.len() as u64, len);
            checked += 1;
        }
    }
    assert_eq!(checked, 4);
    let big = notes
        .resources
        .values()
        .find(|r| r.len == 8 * 1024 * 1024)
        .unwrap();
    let body = e
        .get(&format!("/me/onenote/resources/{}/content", big.id))
        .await
        .bytes()
        .await
        .unwrap();
    assert_eq!(body.len(), 8 * 1024 * 1024);
    assert_eq!(
        body[4_000_000..4_000_100].to_vec(),
        notebridge_testkit::generator::resource_bytes(big, 4_000_000, 100)
    );
}

#[tokio::test]
async fn mutations_show_up_on_rescan() {
    let spec = NotebookSpec {
        sections_per_container: 2,
        pages_per_section: 3,
        images_per_page: 0,
        ..NotebookSpec::default()
    };
    let e = Env::start(roomy, spec).await;
    let notes = e.srv.notes(ALICE);
    let (s1, s2) = (notes.sections[0].id.clone(), notes.sections[1].id.clone());
    let p = notes.pages_in(&s1)[0].id.clone();
    e.srv
        .mutate(ALICE, |n| n.rename_page(ALICE, &p, "Renamed"))
        .unwrap();
    let (_, v) = e.json(&format!("/me/onenote/pages/{p}")).await;
    assert_eq!(v["title"], "Renamed");
    let html = e
        .get(&format!("/me/onenote/pages/{p}/content"))
        .await
        .text()
        .await
        .unwrap();
    assert!(html.contains("<title>Renamed</title>"));
    e.srv
        .mutate(ALICE, |n| n.move_page(ALICE, &p, &s2))
        .unwrap();
    let (_, v) = e.json(&format!("/me/onenote/sections/{s2}/pages")).await;
    assert_eq!(v["value"].as_array().unwrap().len(), 4);
    assert_eq!(
        v["value"][0]["id"],
        json!(p),
        "the moved page is the newest"
    );
    e.srv.mutate(ALICE, |n| n.delete_page(ALICE, &p)).unwrap();
    assert_eq!(e.get(&format!("/me/onenote/pages/{p}")).await.status(), 404);
    let added = e.srv.add_pages(ALICE, &s1, 2, 5).unwrap();
    let (_, v) = e.json(&format!("/me/onenote/sections/{s1}/pages")).await;
    assert_eq!(v["value"].as_array().unwrap().len(), 4);
    assert!(added.iter().all(|id| v["value"]
        .as_array()
        .unwrap()
        .iter()
        .any(|x| x["id"] == json!(id))));
    e.srv
        .mutate(ALICE, |n| n.rename_section(ALICE, &s2, "Zeta"))
        .unwrap();
    let (_, v) = e.json(&format!("/me/onenote/sections/{s2}")).await;
    assert_eq!(v["displayName"], "Zeta");
    assert!(e
        .srv
        .mutate(ALICE, |n| n.delete_page(ALICE, "nope"))
        .is_err());
}

#[tokio::test]
async fn incident_size_notebook_is_served_in_full() {
    let e = Env::start(roomy, NotebookSpec::incident(2024)).await;
    let (_, all) = e.json("/me/onenote/sections").await;
    let sections = all["value"].as_array().unwrap();
    assert_eq!(sections.len(), 40);
    let mut pages = 0;
    for s in sections {
        let mut url = format!(
            "/me/onenote/sections/{}/pages?$top=100&pagelevel=true",
            s["id"].as_str().unwrap()
        );
        loop {
            let (_, v) = e.json(&url).await;
            pages += v["value"].as_array().unwrap().len();
            match v["@odata.nextLink"].as_str() {
                Some(n) => url = n.to_owned(),
                None => break,
            }
        }
    }
    assert_eq!(pages, 1300);
    assert_eq!(generate(&NotebookSpec::incident(2024)), e.srv.notes(ALICE));
}

/// Documented (onenote-get-content: `../pages[?filter,orderby,select,expand,top,skip,count]`):
/// every page of the user, each with its `parentSection`; the test server implements the one filter
/// notebridge sends, `parentSection/id eq '{id}'`, and refuses any other loudly.
#[tokio::test]
async fn all_pages_filtered_by_parent_section() {
    let spec = NotebookSpec {
        sections_per_container: 2,
        pages_per_section: 3,
        ..NotebookSpec::default()
    };
    let e = Env::start(roomy, spec).await;
    let sec = e.first_section();
    let (s, all) = e.json("/me/onenote/pages?$top=100").await;
    assert_eq!(s, 200, "{all}");
    let n = e.srv.notes(ALICE);
    assert_eq!(
        all["value"].as_array().unwrap().len(),
        n.pages.len().min(100)
    );
    let filter = format!("parentSection/id eq '{sec}'");
    let q: String = url::form_urlencoded::byte_serialize(filter.as_bytes()).collect();
    let (s, some) = e
        .json(&format!(
            "/me/onenote/pages?$filter={q}&$select=id&$top=100"
        ))
        .await;
    assert_eq!(s, 200, "{some}");
    let ids: Vec<&str> = some["value"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["id"].as_str().unwrap())
        .collect();
    let want: Vec<&str> = n.pages_in(&sec).iter().map(|p| p.id.as_str()).collect();
    assert_eq!(ids, want);
    let (s, v) = e.json("/me/onenote/pages?$filter=title%20eq%20'x'").await;
    assert_eq!((s, error_code(&v)), (400, "BadRequest"), "{v}");
    let (s, v) = e
        .json(&format!("/me/onenote/sections/{sec}/pages?$filter={q}"))
        .await;
    assert_eq!((s, error_code(&v)), (400, "BadRequest"), "{v}");
}

/// Every change a OneNote user makes, through [`GraphServer::mutate`], as the API then shows it:
/// each moves the `lastModifiedDateTime` of what changed forward, and leaves the rest as it was.
#[tokio::test]
async fn every_change_a_onenote_user_makes_shows_up_through_the_api() {
    let spec = NotebookSpec {
        notebooks: 2,
        section_groups_depth: 2,
        section_groups_per_container: 1,
        sections_per_container: 2,
        pages_per_section: 3,
        images_per_page: 1,
        extra_paragraphs: 2,
        ..NotebookSpec::default()
    };
    let e = Env::start(roomy, spec).await;
    let notes = e.srv.notes(ALICE);
    let (nb1, nb2) = (notes.notebooks[0].id.clone(), notes.notebooks[1].id.clone());
    let s1 = notes.sections_in(Some(&nb1), None)[0].id.clone();
    let html = |p: String| {
        let e = &e;
        async move {
            e.get(&format!("/me/onenote/pages/{p}/content"))
                .await
                .text()
                .await
                .unwrap()
        }
    };
    let modified = |v: &Value| v["lastModifiedDateTime"].as_str().unwrap().to_owned();
    let by_order = |n: &notebridge_testkit::graph::model::UserNotes, s: &str| {
        let mut v: Vec<(u32, String)> = n
            .pages
            .iter()
            .filter(|p| p.section_id == s)
            .map(|p| (p.order, p.id.clone()))
            .collect();
        v.sort();
        v.into_iter().map(|(_, id)| id).collect::<Vec<_>>()
    };
    let order0 = by_order(&notes, &s1);
    let (p, q) = (order0[0].clone(), order0[1].clone());

    // A page's content is edited: new body, same title, later time; its neighbour untouched.
    let (before, q_before) = (html(p.clone()).await, html(q.clone()).await);
    let (_, v0) = e.json(&format!("/me/onenote/pages/{p}")).await;
    e.srv
        .mutate(ALICE, |n| n.edit_page_content(ALICE, &p))
        .unwrap();
    let after = html(p.clone()).await;
    assert_ne!(after, before);
    let (_, v1) = e.json(&format!("/me/onenote/pages/{p}")).await;
    assert_eq!(v1["title"], v0["title"]);
    assert!(modified(&v1) > modified(&v0));
    assert_eq!(html(q.clone()).await, q_before);

    // Reordered: the last page goes first; the pages are numbered again, their bodies and times
    // stay, the section's time moves on.
    let last = order0[2].clone();
    let (_, sec0) = e.json(&format!("/me/onenote/sections/{s1}")).await;
    let (_, l0) = e.json(&format!("/me/onenote/pages/{last}")).await;
    let last_html = html(last.clone()).await;
    e.srv
        .mutate(ALICE, |n| n.reorder_page(ALICE, &last, 0))
        .unwrap();
    let n = e.srv.notes(ALICE);
    assert_eq!(by_order(&n, &s1), [last.clone(), p.clone(), q.clone()]);
    let (_, l1) = e
        .json(&format!("/me/onenote/pages/{last}?pagelevel=true"))
        .await;
    assert_eq!(l1["order"], 0);
    assert_eq!(modified(&l1), modified(&l0));
    assert_eq!(html(last.clone()).await, last_html);
    let (_, sec1) = e.json(&format!("/me/onenote/sections/{s1}")).await;
    assert!(modified(&sec1) > modified(&sec0));
    // Past the end: last.
    e.srv
        .mutate(ALICE, |n| n.reorder_page(ALICE, &last, 99))
        .unwrap();
    assert_eq!(
        by_order(&e.srv.notes(ALICE), &s1),
        [p.clone(), q.clone(), last.clone()]
    );

    // A subpage: its level, later; OneNote has no fourth level.
    e.srv
        .mutate(ALICE, |n| n.set_page_level(ALICE, &q, 2))
        .unwrap();
    let (_, v) = e
        .json(&format!("/me/onenote/pages/{q}?pagelevel=true"))
        .await;
    assert_eq!(v["level"], 2);
    assert!(e
        .srv
        .mutate(ALICE, |n| n.set_page_level(ALICE, &q, 3))
        .is_err());

    // A notebook and a section group are renamed.
    let g1 = e.srv.notes(ALICE).groups_in(Some(&nb1), None)[0].id.clone();
    let (_, nbv0) = e.json(&format!("/me/onenote/notebooks/{nb1}")).await;
    e.srv
        .mutate(ALICE, |n| n.rename_notebook(ALICE, &nb1, "Field book"))
        .unwrap();
    e.srv
        .mutate(ALICE, |n| n.rename_section_group(ALICE, &g1, "Archive"))
        .unwrap();
    let (_, nbv1) = e.json(&format!("/me/onenote/notebooks/{nb1}")).await;
    assert_eq!(nbv1["displayName"], "Field book");
    assert!(modified(&nbv1) > modified(&nbv0));
    let (_, gv) = e.json(&format!("/me/onenote/sectionGroups/{g1}")).await;
    assert_eq!(gv["displayName"], "Archive");
    assert!(modified(&gv) > modified(&nbv1));

    // A section moves into a group of another notebook; a group of another notebook than the
    // one named is refused.
    let g2 = e.srv.notes(ALICE).groups_in(Some(&nb2), None)[0].id.clone();
    assert!(e
        .srv
        .mutate(ALICE, |n| n.move_section(ALICE, &s1, &nb1, Some(&g2)))
        .is_err());
    e.srv
        .mutate(ALICE, |n| n.move_section(ALICE, &s1, &nb2, Some(&g2)))
        .unwrap();
    let (_, v) = e
        .json(&format!("/me/onenote/sectionGroups/{g2}/sections"))
        .await;
    assert!(v["value"]
        .as_array()
        .unwrap()
        .iter()
        .any(|s| s["id"] == json!(s1)));

    // A page moves to a section of the first notebook (from the second notebook, now).
    let s_other = e.srv.notes(ALICE).sections_in(Some(&nb1), None)[0]
        .id
        .clone();
    e.srv
        .mutate(ALICE, |n| n.move_page(ALICE, &p, &s_other))
        .unwrap();
    let (_, v) = e
        .json(&format!("/me/onenote/sections/{s_other}/pages"))
        .await;
    assert_eq!(
        v["value"][0]["id"],
        json!(p),
        "the moved page is the newest"
    );

    // A section group goes with everything in it, at every depth.
    let n = e.srv.notes(ALICE);
    let inner = n.groups_in(None, Some(&g1))[0].id.clone();
    let doomed_sections: Vec<String> = n
        .sections
        .iter()
        .filter(|s| matches!(s.parent_group.as_deref(), Some(g) if g == g1 || g == inner))
        .map(|s| s.id.clone())
        .collect();
    assert!(doomed_sections.len() >= 4, "{doomed_sections:?}");
    let doomed_page = n.pages_in(&doomed_sections[0])[0].clone();
    e.srv
        .mutate(ALICE, |n| n.delete_section_group(ALICE, &g1))
        .unwrap();
    for path in [
        format!("/me/onenote/sectionGroups/{g1}"),
        format!("/me/onenote/sectionGroups/{inner}"),
        format!("/me/onenote/sections/{}", doomed_sections[0]),
        format!("/me/onenote/pages/{}", doomed_page.id),
    ] {
        assert_eq!(e.get(&path).await.status(), 404, "{path}");
    }
    let n = e.srv.notes(ALICE);
    assert!(doomed_page
        .resources
        .iter()
        .all(|r| !n.resources.contains_key(r)));
    assert!(
        n.section(&s_other).is_some(),
        "the notebook's own sections stay"
    );

    // A notebook goes with everything in it; the other stays whole.
    let nb2_sections = n.sections.iter().filter(|s| s.notebook_id == nb2).count();
    e.srv
        .mutate(ALICE, |n| n.delete_notebook(ALICE, &nb2))
        .unwrap();
    assert_eq!(
        e.get(&format!("/me/onenote/notebooks/{nb2}"))
            .await
            .status(),
        404
    );
    assert_eq!(
        e.get(&format!("/me/onenote/sections/{s1}")).await.status(),
        404
    );
    let after = e.srv.notes(ALICE);
    assert!(after.sections.iter().all(|s| s.notebook_id == nb1));
    assert!(after.section_groups.iter().all(|g| g.notebook_id == nb1));
    assert!(after
        .pages
        .iter()
        .all(|pg| after.section(&pg.section_id).is_some()));
    assert_eq!(n.sections.len() - nb2_sections, after.sections.len());
    let (_, v) = e.json("/me/onenote/notebooks").await;
    assert_eq!(v["value"].as_array().unwrap().len(), 1);
    for missing in [
        e.srv.mutate(ALICE, |n| n.delete_notebook(ALICE, &nb2)),
        e.srv.mutate(ALICE, |n| n.delete_section_group(ALICE, &g1)),
        e.srv.mutate(ALICE, |n| n.rename_notebook(ALICE, &nb2, "x")),
        e.srv
            .mutate(ALICE, |n| n.rename_section_group(ALICE, &g1, "x")),
        e.srv.mutate(ALICE, |n| n.edit_page_content(ALICE, "nope")),
        e.srv.mutate(ALICE, |n| n.reorder_page(ALICE, "nope", 0)),
    ] {
        assert!(missing.is_err());
    }
}
