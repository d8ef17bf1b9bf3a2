//! Team notebooks on the Graph test server: groups and sites served by the same OneNote routes as
//! `/me/onenote` (paging, `$batch`, the signed-in user's throttling), the directory requests that find
//! them, and the permission rules (`Notes.Read.All`, `Sites.Read.All`, membership, personal accounts,
//! error 10008).

use std::sync::Arc;
use std::time::Duration;

use notebridge_testkit::generator::{generate, NotebookSpec};
use notebridge_testkit::graph::teams::{group_key, site_key, TeamGroup, TeamSite};
use notebridge_testkit::graph::{GraphServer, GraphServerConfig};
use notebridge_testkit::{TestUser, TokenRegistry};
use serde_json::{json, Value};

const ALICE: &str = "alice-0000-user-id";
const BOB: &str = "bob-0000-user-id";
const GROUP: &str = "0a1b2c3d-0000-4000-8000-00000000beef";
const SITE: &str = "contoso.sharepoint.com,11111111-1111-1111-1111-111111111111,22222222-2222-2222-2222-222222222222";
const SITE_URL: &str = "https://contoso.sharepoint.com/sites/Design";
const TEAM: &[&str] = &["User.Read", "Notes.Read.All", "Sites.Read.All"];

struct Env {
    srv: GraphServer,
    http: reqwest::Client,
}

impl Env {
    async fn start(windows: &str) -> Env {
        let reg = Arc::new(TokenRegistry::default());
        let hour = Duration::from_secs(3600);
        let scopes = |s: &[&str]| s.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        reg.insert_scoped("tok-alice", ALICE, hour, &scopes(TEAM));
        reg.insert("tok-alice-plain", ALICE, hour);
        reg.insert_scoped(
            "tok-alice-notes",
            ALICE,
            hour,
            &scopes(&["User.Read", "Notes.Read.All"]),
        );
        reg.insert_scoped("tok-bob", BOB, hour, &scopes(TEAM));
        let mut cfg = GraphServerConfig::new(Arc::clone(&reg)).with_windows(windows, "10000/60s");
        cfg.limits.app_concurrency = 50;
        let srv = GraphServer::start(cfg).await;
        srv.add_user(TestUser::named("alice"));
        srv.add_user(TestUser::named("bob"));
        srv.load(ALICE, generate(&NotebookSpec::tiny(1)));
        let spec = NotebookSpec {
            section_groups_depth: 1,
            pages_per_section: 25,
            images_per_page: 1,
            seed: 21,
            ..NotebookSpec::default()
        };
        srv.add_group(
            TeamGroup::new(GROUP, "Marketing", &[ALICE]),
            generate(&spec),
        );
        srv.add_group(
            TeamGroup {
                unified: false,
                ..TeamGroup::new("5ec0-0000-group", "All staff (security)", &[ALICE, BOB])
            },
            Default::default(),
        );
        srv.add_site(
            TeamSite::new(SITE, "Design", SITE_URL, &[ALICE]),
            generate(&NotebookSpec::tiny(31)),
        );
        Env {
            srv,
            http: reqwest::Client::new(),
        }
    }

    async fn json_as(&self, token: &str, rel: &str) -> (u16, Value) {
        let url = if rel.starts_with("http") {
            rel.to_owned()
        } else {
            format!("{}{rel}", self.srv.base_url())
        };
        let r = self.http.get(url).bearer_auth(token).send().await.unwrap();
        let s = r.status().as_u16();
        (s, r.json().await.unwrap_or(Value::Null))
    }

    async fn json(&self, rel: &str) -> (u16, Value) {
        self.json_as("tok-alice", rel).await
    }
}

fn code(v: &Value) -> &str {
    v["error"]["code"].as_str().unwrap_or("")
}

fn ids(v: &Value) -> Vec<String> {
    v["value"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["id"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn group_and_site_notebooks_are_served_like_personal_ones() {
    let e = Env::start("10000/60s").await;
    let notes = e.srv.notes(&group_key(GROUP));
    let (s, v) = e.json(&format!("/groups/{GROUP}/onenote/notebooks")).await;
    assert_eq!(s, 200, "{v}");
    assert_eq!(ids(&v), vec![notes.notebooks[0].id.clone()]);
    assert!(v["@odata.context"]
        .as_str()
        .unwrap()
        .contains(&format!("groups('{GROUP}')/onenote/notebooks")));
    assert!(v["value"][0]["self"]
        .as_str()
        .unwrap()
        .contains(&format!("/groups/{GROUP}/onenote/notebooks/")));
    // Paging of a section's pages, as under /me: 25 pages, 20 by default, then the next link.
    let sec = &notes.sections_in(Some(&notes.notebooks[0].id), None)[0].id;
    let (s, v) = e
        .json(&format!("/groups/{GROUP}/onenote/sections/{sec}/pages"))
        .await;
    assert_eq!(s, 200);
    assert_eq!(v["value"].as_array().unwrap().len(), 20);
    let next = v["@odata.nextLink"].as_str().unwrap().to_owned();
    assert!(next.contains(&format!("/groups/{GROUP}/onenote/sections/{sec}/pages")));
    let (_, v2) = e.json(&next).await;
    assert_eq!(v2["value"].as_array().unwrap().len(), 5);
    let (s, v) = e
        .json(&format!(
            "/groups/{GROUP}/onenote/sections/{sec}/pages?$top=101"
        ))
        .await;
    assert_eq!((s, code(&v)), (400, "20129"));
    // Content: resource URLs are rooted at the group, and they are served there.
    let page = &notes.pages_in(sec)[0].id;
    let html = e
        .http
        .get(format!(
            "{}/groups/{GROUP}/onenote/pages/{page}/content",
            e.srv.base_url()
        ))
        .bearer_auth("tok-alice")
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let res = html
        .split("data-fullres-src=\"")
        .nth(1)
        .and_then(|r| r.split('"').next())
        .expect("an image")
        .to_owned();
    assert!(
        res.contains(&format!("groups('{GROUP}')/onenote/resources/")),
        "{res}"
    );
    let r = e
        .http
        .get(&res)
        .bearer_auth("tok-alice")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 200);
    // A group's ids are not the user's: /me does not know them.
    let (s, _) = e.json(&format!("/me/onenote/pages/{page}")).await;
    assert_eq!(s, 404);
    // A site's notebooks.
    let (s, v) = e.json(&format!("/sites/{SITE}/onenote/notebooks")).await;
    assert_eq!(s, 200);
    assert_eq!(
        ids(&v),
        vec![e.srv.notes(&site_key(SITE)).notebooks[0].id.clone()]
    );
}

#[tokio::test]
async fn team_requests_batch_and_count_against_the_signed_in_users_limits() {
    let e = Env::start("4/60s").await;
    let notes = e.srv.notes(&group_key(GROUP));
    let sec = &notes.sections_in(Some(&notes.notebooks[0].id), None)[0].id;
    let body = json!({"requests": [
        {"id": "1", "method": "GET", "url": format!("/groups/{GROUP}/onenote/sections/{sec}/pages?$top=5")},
        {"id": "2", "method": "GET", "url": format!("/sites/{SITE}/onenote/notebooks")},
        {"id": "3", "method": "GET", "url": "/me/onenote/notebooks"},
    ]});
    let r = e
        .http
        .post(format!("{}/$batch", e.srv.base_url()))
        .bearer_auth("tok-alice")
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 200);
    let v: Value = r.json().await.unwrap();
    let mut statuses: Vec<(String, u64)> = v["responses"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| {
            (
                x["id"].as_str().unwrap().to_owned(),
                x["status"].as_u64().unwrap(),
            )
        })
        .collect();
    statuses.sort();
    assert_eq!(
        statuses,
        vec![("1".into(), 200), ("2".into(), 200), ("3".into(), 200)]
    );
    // One left in alice's 4/60s window: a group request takes it, the next is throttled.
    let (s, _) = e.json(&format!("/groups/{GROUP}/onenote/notebooks")).await;
    assert_eq!(s, 200);
    let (s, v) = e.json(&format!("/sites/{SITE}/onenote/notebooks")).await;
    assert_eq!((s, code(&v)), (429, "20166"));
    // Directory requests are not OneNote: they still answer.
    let (s, _) = e.json("/me/memberOf").await;
    assert_eq!(s, 200);
}

#[tokio::test]
async fn member_of_lists_groups_and_roles_with_skiptoken_paging() {
    let e = Env::start("10000/60s").await;
    e.srv.set_directory_page_size(1);
    let mut url = "/me/memberOf?$select=id,displayName,groupTypes".to_owned();
    let mut all = Vec::new();
    loop {
        let (s, v) = e.json(&url).await;
        assert_eq!(s, 200, "{v}");
        all.extend(v["value"].as_array().unwrap().iter().cloned());
        match v["@odata.nextLink"].as_str() {
            Some(n) => {
                assert!(n.contains("skiptoken"));
                url = n.to_owned();
            }
            None => break,
        }
    }
    let types: Vec<&str> = all
        .iter()
        .map(|x| x["@odata.type"].as_str().unwrap())
        .collect();
    assert_eq!(
        types,
        vec![
            "#microsoft.graph.group",
            "#microsoft.graph.group",
            "#microsoft.graph.directoryRole"
        ]
    );
    assert_eq!(all[0]["displayName"], "Marketing");
    assert_eq!(all[0]["groupTypes"], json!(["Unified"]));
    assert_eq!(all[1]["groupTypes"], json!([]));
    assert!(all[0].get("mailEnabled").is_none(), "$select applies");
    // Bob is in the security group only.
    let (_, v) = e
        .json_as("tok-bob", "/me/memberOf/microsoft.graph.group")
        .await;
    assert_eq!(ids(&v), vec!["5ec0-0000-group".to_owned()]);
    let (s, _) = e.json("/me/memberOf?$top=1000").await;
    assert_eq!(s, 400);
}

#[tokio::test]
async fn followed_sites_and_site_lookup_need_sites_read_all() {
    let e = Env::start("10000/60s").await;
    let (s, v) = e.json("/me/followedSites").await;
    assert_eq!(s, 200);
    assert_eq!(ids(&v), vec![SITE.to_owned()]);
    assert_eq!(v["value"][0]["webUrl"], SITE_URL);
    let (s, v) = e.json("/sites/contoso.sharepoint.com:/sites/Design").await;
    assert_eq!(s, 200, "{v}");
    assert_eq!(v["id"], SITE);
    assert_eq!(v["displayName"], "Design");
    let (s, v) = e.json("/sites/contoso.sharepoint.com:/sites/Nope").await;
    assert_eq!((s, code(&v)), (404, "itemNotFound"));
    // Bob cannot read Design.
    let (s, _) = e
        .json_as("tok-bob", "/sites/contoso.sharepoint.com:/sites/Design")
        .await;
    assert_eq!(s, 403);
    let (_, v) = e.json_as("tok-bob", "/me/followedSites").await;
    assert!(ids(&v).is_empty());
    // Without Sites.Read.All neither is allowed; the site's notebooks still are (Notes.Read.All).
    let (s, v) = e.json_as("tok-alice-notes", "/me/followedSites").await;
    assert_eq!((s, code(&v)), (403, "accessDenied"));
    let (s, _) = e
        .json_as(
            "tok-alice-notes",
            "/sites/contoso.sharepoint.com:/sites/Design",
        )
        .await;
    assert_eq!(s, 403);
    let (s, _) = e
        .json_as(
            "tok-alice-notes",
            &format!("/sites/{SITE}/onenote/notebooks"),
        )
        .await;
    assert_eq!(s, 200);
}

#[tokio::test]
async fn team_content_needs_notes_read_all_and_membership() {
    let e = Env::start("10000/60s").await;
    for path in [
        format!("/groups/{GROUP}/onenote/notebooks"),
        format!("/sites/{SITE}/onenote/notebooks"),
    ] {
        let (s, v) = e.json_as("tok-alice-plain", &path).await;
        assert_eq!((s, code(&v)), (403, "40004"), "{path}");
    }
    // memberOf needs only User.Read.
    let (s, _) = e.json_as("tok-alice-plain", "/me/memberOf").await;
    assert_eq!(s, 200);
    // Not a member, not a reader, no such group.
    let (s, v) = e
        .json_as("tok-bob", &format!("/groups/{GROUP}/onenote/notebooks"))
        .await;
    assert_eq!((s, code(&v)), (403, "accessDenied"));
    let (s, _) = e
        .json_as("tok-bob", &format!("/sites/{SITE}/onenote/notebooks"))
        .await;
    assert_eq!(s, 403);
    let (s, v) = e.json("/groups/no-such-group/onenote/notebooks").await;
    assert_eq!((s, code(&v)), (404, "Request_ResourceNotFound"));
    let (s, _) = e.json("/sites/nope,1,2/onenote/notebooks").await;
    assert_eq!(s, 404);
}

#[tokio::test]
async fn personal_accounts_have_no_directory_groups_or_sites() {
    let e = Env::start("10000/60s").await;
    e.srv.set_personal_account(ALICE, true);
    let (s, v) = e.json("/me/memberOf").await;
    assert_eq!((s, code(&v)), (404, ""));
    let (s, _) = e.json("/me/followedSites").await;
    assert_eq!(s, 404);
    let (s, _) = e.json(&format!("/groups/{GROUP}/onenote/notebooks")).await;
    assert_eq!(s, 404);
    let (s, _) = e.json("/me/onenote/notebooks").await;
    assert_eq!(s, 200, "their own notebooks still answer");
}

#[tokio::test]
async fn a_library_over_5000_items_answers_10008_on_listings_but_not_on_a_sections_pages() {
    let e = Env::start("10000/60s").await;
    e.srv.set_big_library(GROUP, true);
    let notes = e.srv.notes(&group_key(GROUP));
    let nb = &notes.notebooks[0].id;
    let sec = &notes.sections_in(Some(nb), None)[0].id;
    for path in [
        format!("/groups/{GROUP}/onenote/notebooks"),
        format!("/groups/{GROUP}/onenote/notebooks/{nb}/sections"),
        format!("/groups/{GROUP}/onenote/sections"),
    ] {
        let (s, v) = e.json(&path).await;
        assert_eq!((s, code(&v)), (403, "10008"), "{path}");
        assert!(v["error"]["message"].as_str().unwrap().contains("5,000"));
    }
    let (s, _) = e
        .json(&format!("/groups/{GROUP}/onenote/sections/{sec}/pages"))
        .await;
    assert_eq!(s, 200);
    let (s, _) = e.json(&format!("/sites/{SITE}/onenote/notebooks")).await;
    assert_eq!(s, 200, "only the switched source");
    e.srv.set_big_library(GROUP, false);
    let (s, _) = e.json(&format!("/groups/{GROUP}/onenote/notebooks")).await;
    assert_eq!(s, 200);
}
