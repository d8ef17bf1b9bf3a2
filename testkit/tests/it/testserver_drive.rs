//! The drive API on the Graph test server for notebooks read from OneNote's own files: the
//! notebook's web URL resolved through `/shares`, its package and children, section files served
//! through a redirect to a download URL that refuses a bearer token (whole, or by `Range`), the
//! OneNote API view consistent with the files, the drive's own counters and throttling, and every
//! drive fault.

use std::sync::Arc;
use std::time::Duration;

use notebridge::convert::MediaSource;
use notebridge::onefile::{self, SectionLocation};
use notebridge_testkit::graph::drive::FilesNotebook;
use notebridge_testkit::graph::{GraphServer, GraphServerConfig};
use notebridge_testkit::lab::onenote_fixture;
use notebridge_testkit::{TestUser, TokenRegistry};
use reqwest::redirect::Policy;
use reqwest::StatusCode;
use serde_json::Value;

const ALICE: &str = "alice-0000-user-id";
const BOB: &str = "bob-0000-user-id";
const NOTEBOOK: &str = "onenote.rs/samples/New Section Group";

struct Env {
    srv: GraphServer,
    nb: FilesNotebook,
    /// Follows no redirect, so each hop is seen.
    http: reqwest::Client,
}

impl Env {
    /// A server with tiny OneNote windows (so any OneNote request spent would show) and alice's
    /// files notebook.
    async fn start() -> Env {
        Env::start_with("3/60s").await
    }

    /// The same with the OneNote per-user windows `windows`.
    async fn start_with(windows: &str) -> Env {
        let reg = Arc::new(TokenRegistry::default());
        let hour = Duration::from_secs(3600);
        let scopes = |s: &[&str]| s.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        reg.insert_scoped(
            "tok-alice",
            ALICE,
            hour,
            &scopes(&["User.Read", "Notes.Read", "Files.Read"]),
        );
        reg.insert("tok-alice-notes-only", ALICE, hour);
        // The shares API's least privileged scope (written in lower case: scopes are compared
        // without case).
        reg.insert_scoped(
            "tok-alice-write",
            ALICE,
            hour,
            &scopes(&["User.Read", "Notes.Read", "files.readwrite"]),
        );
        reg.insert_scoped(
            "tok-alice-sites",
            ALICE,
            hour,
            &scopes(&["User.Read", "Notes.Read", "sites.read.all"]),
        );
        reg.insert_scoped(
            "tok-bob",
            BOB,
            hour,
            &scopes(&["User.Read", "Notes.Read", "Files.Read"]),
        );
        let cfg = GraphServerConfig::new(Arc::clone(&reg)).with_windows(windows, "1000/60s");
        let srv = GraphServer::start(cfg).await;
        srv.add_user(TestUser::named("alice"));
        srv.add_user(TestUser::named("bob"));
        let nb = srv.add_files_notebook(ALICE, "Field notes", &onenote_fixture(NOTEBOOK));
        let http = reqwest::Client::builder()
            .redirect(Policy::none())
            .build()
            .unwrap();
        Env { srv, nb, http }
    }

    fn url(&self, path: &str) -> String {
        if path.starts_with("http") {
            path.to_owned()
        } else {
            format!("{}{path}", self.srv.base_url())
        }
    }

    async fn get_as(
        &self,
        token: &str,
        path: &str,
    ) -> (StatusCode, reqwest::header::HeaderMap, Value) {
        let r = self
            .http
            .get(self.url(path))
            .bearer_auth(token)
            .send()
            .await
            .unwrap();
        let (s, h) = (r.status(), r.headers().clone());
        let v = r.json().await.unwrap_or(Value::Null);
        (s, h, v)
    }

    async fn get(&self, path: &str) -> (StatusCode, Value) {
        let (s, _, v) = self.get_as("tok-alice", path).await;
        (s, v)
    }

    /// [`Env::get`] with `Files.ReadWrite`, which the shares API needs.
    async fn get_w(&self, path: &str) -> (StatusCode, Value) {
        let (s, _, v) = self.get_as("tok-alice-write", path).await;
        (s, v)
    }

    /// The notebook folder's path below alice's drive root, for path addressing.
    fn nb_path(&self) -> String {
        format!(
            "/me/drive/root:/Notebooks/{}",
            self.nb.name.replace(' ', "%20")
        )
    }

    /// The download URL `/content` redirects to.
    async fn location(&self, item: &str) -> String {
        let (s, h, _) = self
            .get_as(
                "tok-alice",
                &format!("/drives/{}/items/{item}/content", self.nb.drive_id),
            )
            .await;
        assert_eq!(s, StatusCode::FOUND);
        h[reqwest::header::LOCATION].to_str().unwrap().to_owned()
    }

    /// The HTML the OneNote API serves for page `id` (asserting a 200).
    async fn page_html(&self, id: &str) -> String {
        let r = self
            .http
            .get(self.url(&format!("/me/onenote/pages/{id}/content")))
            .bearer_auth("tok-alice")
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), StatusCode::OK);
        r.text().await.unwrap()
    }

    /// The bytes served for `item` through its download URL.
    async fn download(&self, item: &str) -> bytes::Bytes {
        let url = self.location(item).await;
        self.http
            .get(&url)
            .send()
            .await
            .unwrap()
            .bytes()
            .await
            .unwrap()
    }

    /// Every child of an item, following `@odata.nextLink`.
    async fn children(&self, item: &str, top: Option<usize>) -> (Vec<Value>, usize) {
        let mut next = format!("/drives/{}/items/{item}/children", self.nb.drive_id);
        if let Some(t) = top {
            next.push_str(&format!("?$top={t}"));
        }
        let (mut out, mut pages) = (Vec::new(), 0);
        loop {
            let (s, v) = self.get(&next).await;
            assert_eq!(s, StatusCode::OK, "{v}");
            pages += 1;
            out.extend(v["value"].as_array().unwrap().iter().cloned());
            match v["@odata.nextLink"].as_str() {
                Some(n) => next = n.to_owned(),
                None => return (out, pages),
            }
        }
    }
}

fn fixture_bytes(rel: &str) -> Vec<u8> {
    std::fs::read(onenote_fixture(rel)).unwrap()
}

fn names(items: &[Value]) -> Vec<&str> {
    items.iter().map(|i| i["name"].as_str().unwrap()).collect()
}

#[tokio::test]
async fn the_notebooks_web_url_resolves_to_its_package_and_its_children_are_its_files() {
    let env = Env::start().await;
    let (s, nbs) = env.get("/me/onenote/notebooks").await;
    assert_eq!(s, StatusCode::OK);
    let web = nbs["value"][0]["links"]["oneNoteWebUrl"]["href"]
        .as_str()
        .unwrap();
    assert_eq!(web, env.nb.web_url);
    // Both links are the notebook folder's address in alice's OneDrive for Business, in the shape
    // of the "Create notebook" example (onenote-post-notebooks).
    let client = nbs["value"][0]["links"]["oneNoteClientUrl"]["href"]
        .as_str()
        .unwrap();
    assert_eq!(client, env.nb.client_url);
    assert_eq!(client, format!("onenote:{web}"));
    assert_eq!(
        web,
        "https://contoso-my.sharepoint.com/personal/alice_0000_user_id/Documents/Notebooks/Field%20notes"
    );

    // Encoded exactly as documented: `u!` + unpadded base64url.
    use base64::Engine as _;
    let share = format!(
        "u!{}",
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(web)
    );
    assert_eq!(share, GraphServer::share_id(web));
    // The shares API documents no read-only scope: `Files.Read` is refused there.
    let (s, v) = env.get(&format!("/shares/{share}/driveItem")).await;
    assert_eq!(
        (s, v["error"]["code"].as_str()),
        (StatusCode::FORBIDDEN, Some("accessDenied"))
    );
    let (s, item) = env.get_w(&format!("/shares/{share}/driveItem")).await;
    assert_eq!(s, StatusCode::OK, "{item}");
    // With `Files.Read`, the same item by its path, and its `webUrl` is the notebook's link.
    let (s, by_path) = env.get(&env.nb_path()).await;
    assert_eq!(s, StatusCode::OK, "{by_path}");
    assert_eq!(by_path["id"], item["id"]);
    assert_eq!(by_path["webUrl"], web);
    for other in [
        "/me/drive/root:/notebooks/FIELD%20NOTES".to_owned(),
        "/me/drive/root:/Notebooks/Field%20notes:".to_owned(),
        format!("/drives/{}/root:/Notebooks/Field%20notes", env.nb.drive_id),
    ] {
        let (s, v) = env.get(&other).await;
        assert_eq!((s, &v["id"]), (StatusCode::OK, &item["id"]), "{other}");
    }
    let (s, v) = env.get(&format!("{}:/children", env.nb_path())).await;
    assert_eq!(s, StatusCode::OK, "{v}");
    assert_eq!(v["value"].as_array().map(Vec::len), Some(3));
    let (s, d) = env.get("/me/drive").await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(
        d["webUrl"],
        "https://contoso-my.sharepoint.com/personal/alice_0000_user_id/Documents"
    );
    assert_eq!(item["id"], env.nb.item_id.as_str());
    assert_eq!(item["name"], "Field notes");
    assert_eq!(item["package"]["type"], "oneNote");
    assert!(item.get("folder").is_none() && item.get("file").is_none());
    assert_eq!(item["parentReference"]["driveId"], env.nb.drive_id.as_str());
    assert_eq!(
        item["parentReference"]["path"],
        format!("/drives/{}/root:/Notebooks", env.nb.drive_id).as_str()
    );
    let total = fixture_bytes("onenote.rs/samples/New Section Group/New Section 1.one").len()
        + fixture_bytes("onenote.rs/samples/New Section Group/New Section 2.one").len()
        + fixture_bytes("onenote.rs/samples/New Section Group/Open Notebook.onetoc2").len();
    assert_eq!(item["size"], total as u64);
    for k in [
        "eTag",
        "cTag",
        "lastModifiedDateTime",
        "createdDateTime",
        "webUrl",
    ] {
        assert!(item[k].is_string(), "{k} missing: {item}");
    }

    let (kids, pages) = env.children(&env.nb.item_id, None).await;
    assert_eq!(pages, 1);
    assert_eq!(
        names(&kids),
        [
            "New Section 1.one",
            "New Section 2.one",
            "Open Notebook.onetoc2"
        ]
    );
    for k in &kids {
        assert_eq!(k["file"]["mimeType"], "application/msonenote");
        assert_eq!(k["parentReference"]["id"], env.nb.item_id.as_str());
        assert!(k["@microsoft.graph.downloadUrl"]
            .as_str()
            .unwrap()
            .contains("/_dl/"));
    }
    assert_eq!(
        kids[1]["size"],
        fixture_bytes("onenote.rs/samples/New Section Group/New Section 2.one").len() as u64
    );

    // Paged by `$top`, the next page's link followed as given.
    let (paged, pages) = env.children(&env.nb.item_id, Some(2)).await;
    assert_eq!(pages, 2);
    assert_eq!(names(&paged), names(&kids));
    // And by the server's page size when `$top` is not given.
    env.srv.set_drive_page_size(1);
    let (paged, pages) = env.children(&env.nb.item_id, None).await;
    assert_eq!((pages, names(&paged)), (3, names(&kids)));

    // The same item by id, and with its children expanded.
    let (s, same) = env
        .get(&format!(
            "/drives/{}/items/{}?$expand=children",
            env.nb.drive_id, env.nb.item_id
        ))
        .await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(same["id"], item["id"]);
    assert_eq!(same["children"][0]["name"], "New Section 1.one");
    let (s, me) = env.get("/me/drive").await;
    assert_eq!(
        (s, me["id"].as_str()),
        (StatusCode::OK, Some(env.nb.drive_id.as_str()))
    );
}

#[tokio::test]
async fn unknown_or_badly_encoded_shares_and_items_are_refused_as_documented() {
    let env = Env::start().await;
    let unknown = GraphServer::share_id("https://onedrive.live.com/edit.aspx?resid=nope");
    let (s, v) = env.get_w(&format!("/shares/{unknown}/driveItem")).await;
    assert_eq!(
        (s, v["error"]["code"].as_str()),
        (StatusCode::NOT_FOUND, Some("itemNotFound"))
    );
    // The plain URL, or the encoding with its padding kept, is no share id.
    let padded = format!("{}=", env.nb.share_id);
    for bad in [padded.as_str(), "https%3A%2F%2Fonedrive.live.com"] {
        let (s, _) = env.get_w(&format!("/shares/{bad}/driveItem")).await;
        assert_eq!(s, StatusCode::BAD_REQUEST, "{bad}");
    }
    // A generated (API-only) notebook has no drive item.
    let (s, _) = env
        .get_w(&format!(
            "/shares/{}/driveItem",
            GraphServer::share_id(&notebridge_testkit::graph::routes::notebook_web_url(
                "1-abc"
            ))
        ))
        .await;
    assert_eq!(s, StatusCode::NOT_FOUND);
    // A path that names nothing, and one that does not end where it says.
    for missing in [
        "/me/drive/root:/Notebooks/Nope".to_owned(),
        "/me/drive/root:/Notebooks/Field%20notes/New%20Section%201.one/deeper".to_owned(),
    ] {
        let (s, v) = env.get(&missing).await;
        assert_eq!(
            (s, v["error"]["code"].as_str()),
            (StatusCode::NOT_FOUND, Some("itemNotFound")),
            "{missing}"
        );
    }
    for bad in [
        "/me/drive/root:",
        "/me/drive/root:/a:/b:/c",
        "/me/drive/root:/a:/nope",
    ] {
        let (s, _) = env.get(bad).await;
        assert_eq!(s, StatusCode::BAD_REQUEST, "{bad}");
    }
    let (s, v) = env
        .get(&format!(
            "/drives/{}/items/01NOPE/children",
            env.nb.drive_id
        ))
        .await;
    assert_eq!(
        (s, v["error"]["code"].as_str()),
        (StatusCode::NOT_FOUND, Some("itemNotFound"))
    );
    let (s, _) = env
        .get(&format!(
            "/drives/{}/items/{}/children?$filter=name",
            env.nb.drive_id, env.nb.item_id
        ))
        .await;
    assert_eq!(s, StatusCode::BAD_REQUEST);
    // The notebook is a package, not a file: no content.
    let (s, _) = env
        .get(&format!(
            "/drives/{}/items/{}/content",
            env.nb.drive_id, env.nb.item_id
        ))
        .await;
    assert_eq!(s, StatusCode::BAD_REQUEST);
    // Switched: the notebook's URL no longer resolves.
    env.srv.drive_faults().unshare(&env.nb.item_id, true);
    let (s, _) = env
        .get_w(&format!("/shares/{}/driveItem", env.nb.share_id))
        .await;
    assert_eq!(s, StatusCode::NOT_FOUND);
    env.srv.drive_faults().unshare(&env.nb.item_id, false);
    let (s, _) = env
        .get_w(&format!("/shares/{}/driveItem", env.nb.share_id))
        .await;
    assert_eq!(s, StatusCode::OK);
}

#[tokio::test]
async fn the_drive_needs_a_files_scope_and_the_owner() {
    let env = Env::start().await;
    let path = format!("/shares/{}/driveItem", env.nb.share_id);
    for token in ["tok-alice-notes-only", "tok-alice", "tok-alice-sites"] {
        let (s, _, v) = env.get_as(token, &path).await;
        assert_eq!(
            (s, v["error"]["code"].as_str()),
            (StatusCode::FORBIDDEN, Some("accessDenied")),
            "{token}: the shares API takes Files.ReadWrite or higher"
        );
    }
    let (s, _, _) = env.get_as("tok-alice-write", &path).await;
    assert_eq!(s, StatusCode::OK);
    // Path addressing takes a read scope: `Files.Read`, or `Sites.Read.All` (scopes are
    // case-insensitive), and no scope without `Files`/`Sites` at all.
    let (s, _, _) = env.get_as("tok-alice-notes-only", &env.nb_path()).await;
    assert_eq!(s, StatusCode::FORBIDDEN);
    for token in ["tok-alice", "tok-alice-sites", "tok-alice-write"] {
        let (s, _, v) = env.get_as(token, &env.nb_path()).await;
        assert_eq!(s, StatusCode::OK, "{token}: {v}");
    }
    // Another user's drive is not theirs to read, by path either: present or not, the answer is
    // the same refusal.
    for p in ["Notebooks/Field%20notes", "Notebooks/Nope"] {
        let (s, _, _) = env
            .get_as("tok-bob", &format!("/drives/{}/root:/{p}", env.nb.drive_id))
            .await;
        assert_eq!(s, StatusCode::FORBIDDEN, "{p}");
    }
    // Another user's drive is not theirs to read.
    let (s, _, v) = env
        .get_as(
            "tok-bob",
            &format!(
                "/drives/{}/items/{}/children",
                env.nb.drive_id, env.nb.item_id
            ),
        )
        .await;
    assert_eq!(
        (s, v["error"]["code"].as_str()),
        (StatusCode::FORBIDDEN, Some("accessDenied"))
    );
    // No token at all.
    let r = env.http.get(env.url(&path)).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn content_redirects_to_a_url_that_serves_the_files_exact_bytes_and_refuses_a_bearer_token() {
    let env = Env::start().await;
    let s2 = &env.nb.sections[1];
    assert_eq!(s2.name, "New Section 2");
    let want = fixture_bytes("onenote.rs/samples/New Section Group/New Section 2.one");
    assert_eq!(s2.bytes.as_ref(), want.as_slice());
    let url = env.location(&s2.item_id).await;
    assert!(!url.contains("/v1.0/"), "{url}");

    let r = env
        .http
        .get(&url)
        .bearer_auth("tok-alice")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(env.srv.drive_counters().bearer_refused, 1);
    let r = env.http.post(&url).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::METHOD_NOT_ALLOWED);

    let r = env.http.get(&url).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    assert_eq!(r.content_length(), Some(want.len() as u64));
    assert_eq!(r.headers()["accept-ranges"], "bytes");
    let got = r.bytes().await.unwrap();
    assert_eq!(got.as_ref(), want.as_slice());

    // The bytes are a section the reader parses into the pages the API lists.
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("New Section 2.one");
    std::fs::write(&copy, &got).unwrap();
    let parsed = onefile::open_section(&SectionLocation::File(copy)).unwrap();
    let guids: Vec<String> = parsed.pages().into_iter().map(|p| p.id).collect();
    let listed: Vec<String> = s2.pages.iter().map(|p| p.guid.clone()).collect();
    assert_eq!(guids, listed);

    let c = env.srv.drive_counters();
    assert_eq!((c.downloads, c.bytes_sent), (3, want.len() as u64));

    // The same through the share: its children by the share's own path.
    let (s, kids) = env
        .get_w(&format!("/shares/{}/driveItem/children", env.nb.share_id))
        .await;
    assert_eq!(
        (s, kids["value"].as_array().map(Vec::len)),
        (StatusCode::OK, Some(3))
    );
}

#[tokio::test]
async fn a_range_resumes_with_exactly_the_remaining_bytes() {
    let env = Env::start().await;
    let want = fixture_bytes("onenote.rs/samples/New Section Group/New Section 2.one");
    let url = env.location(&env.nb.sections[1].item_id).await;
    let from = 100_000u64;
    let r = env
        .http
        .get(&url)
        .header("Range", format!("bytes={from}-"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::PARTIAL_CONTENT);
    assert_eq!(
        r.headers()["content-range"].to_str().unwrap(),
        format!("bytes {from}-{}/{}", want.len() - 1, want.len())
    );
    assert_eq!(r.content_length(), Some(want.len() as u64 - from));
    assert_eq!(r.bytes().await.unwrap().as_ref(), &want[from as usize..]);

    let r = env
        .http
        .get(&url)
        .header("Range", "bytes=10-19")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::PARTIAL_CONTENT);
    assert_eq!(r.bytes().await.unwrap().as_ref(), &want[10..20]);

    let r = env
        .http
        .get(&url)
        .header("Range", format!("bytes={}-", want.len()))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::RANGE_NOT_SATISFIABLE);
    assert_eq!(
        r.headers()["content-range"].to_str().unwrap(),
        format!("bytes */{}", want.len())
    );
}

#[tokio::test]
async fn a_cut_transfer_ends_short_and_a_range_fetches_the_rest() {
    let env = Env::start().await;
    let want = fixture_bytes("onenote.rs/samples/New Section Group/New Section 2.one");
    let url = env.location(&env.nb.sections[1].item_id).await;
    env.srv.drive_faults().cut_downloads(1, 70_000);
    let mut r = env.http.get(&url).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    assert_eq!(r.content_length(), Some(want.len() as u64));
    let mut got = Vec::new();
    let mut failed = false;
    loop {
        match r.chunk().await {
            Ok(Some(c)) => got.extend_from_slice(&c),
            Ok(None) => break,
            Err(_) => {
                failed = true;
                break;
            }
        }
    }
    assert!(failed, "the body should end in an error");
    assert_eq!(got.len(), 70_000);
    assert_eq!(got.as_slice(), &want[..70_000]);

    let r = env
        .http
        .get(&url)
        .header("Range", format!("bytes={}-", got.len()))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::PARTIAL_CONTENT);
    got.extend_from_slice(&r.bytes().await.unwrap());
    assert_eq!(got, want);
}

#[tokio::test]
async fn the_api_view_carries_the_files_guids_titles_order_and_text() {
    let env = Env::start_with("1000/60s").await;
    let (s, secs) = env.get("/me/onenote/sections").await;
    assert_eq!(s, StatusCode::OK);
    let mut names: Vec<&str> = secs["value"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["displayName"].as_str().unwrap())
        .collect();
    names.sort();
    assert_eq!(names, ["New Section 1", "New Section 2"]);

    let (texts, media) = api_matches_files(&env, &env.nb).await;
    assert!(texts > 0, "the sample pages hold text");
    assert_eq!(media, 2, "a picture and an attachment");
}

/// Checks that the OneNote API serves `nb` as its files hold it: section and page GUIDs, titles,
/// levels, order, and content converting to the same text, block kinds and file bytes. Returns how
/// many texts and files were compared.
async fn api_matches_files(env: &Env, nb: &FilesNotebook) -> (usize, usize) {
    let (mut texts, mut media) = (0, 0);
    for section in &nb.sections {
        let file = onefile::open_section(&SectionLocation::File(section.source.clone())).unwrap();
        let (s, listed) = env
            .get(&format!("/me/onenote/sections/{}", section.section_id))
            .await;
        assert_eq!(s, StatusCode::OK);
        let href = listed["links"]["oneNoteClientUrl"]["href"]
            .as_str()
            .unwrap();
        assert!(
            href.contains(&format!("section-id={{{}}}", section.guid)),
            "{href}"
        );
        assert_eq!(file.id(), section.guid);
        let (s, pages) = env
            .get(&format!(
                "/me/onenote/sections/{}/pages?pagelevel=true&$orderby=order",
                section.section_id
            ))
            .await;
        assert_eq!(s, StatusCode::OK, "{pages}");
        let pages = pages["value"].as_array().unwrap();
        let want = file.pages();
        assert!(!want.is_empty());
        assert_eq!(pages.len(), want.len());
        for (api, f) in pages.iter().zip(&want) {
            let href = api["links"]["oneNoteClientUrl"]["href"].as_str().unwrap();
            let guid = notebridge::convert::onenote_page_id(href).map(|g| onefile::bare_guid(&g));
            assert_eq!(guid.as_deref(), Some(f.id.as_str()), "{href}");
            assert_eq!(api["title"], f.title.as_str());
            assert_eq!(api["level"], f.level);
            assert_eq!(api["order"], f.order);

            // The content converts to the text the file gives.
            let id = api["id"].as_str().unwrap();
            let html = env.page_html(id).await;
            let from_api = notebridge::convert::convert_page(&html);
            let from_file = file.convert(&f.id).unwrap();
            assert_eq!(from_api.title, from_file.title);
            let text = text_of(&from_file.blocks[1..]);
            texts += text.len();
            assert_eq!(text_of(&from_api.blocks[1..]), text, "{html}");
            // In reading order, children after their parent: the files way nests indented
            // paragraphs (outline levels), which the API's HTML does not carry.
            let flat = |b: &[notebridge::convert::Block]| {
                let mut out = Vec::new();
                let mut stack: Vec<&notebridge::convert::Block> = b.iter().rev().collect();
                while let Some(b) = stack.pop() {
                    out.push(b.clone());
                    stack.extend(b.children().iter().rev());
                }
                out
            };
            let (api_flat, file_flat) = (flat(&from_api.blocks), flat(&from_file.blocks));
            let kinds = |b: &[notebridge::convert::Block]| -> Vec<&'static str> {
                b.iter().map(|b| b.type_name()).collect()
            };
            assert_eq!(kinds(&api_flat), kinds(&file_flat), "{html}");
            // Pictures and attachments are resources holding the file's own bytes.
            for (a, f) in api_flat.iter().zip(&file_flat) {
                let (Some(MediaSource::Resource { url, .. }), Some(MediaSource::Embedded(e))) =
                    (a.media(), f.media())
                else {
                    continue;
                };
                let r = env
                    .http
                    .get(url)
                    .bearer_auth("tok-alice")
                    .send()
                    .await
                    .unwrap();
                assert_eq!(r.status(), StatusCode::OK, "{url}");
                assert_eq!(r.bytes().await.unwrap(), e.bytes);
                media += 1;
            }
        }
    }
    (texts, media)
}

#[tokio::test]
async fn the_api_view_of_richer_sections_converts_as_their_files_do() {
    let env = Env::start_with("1000/60s").await;
    let files: Vec<_> = [
        "apache-tika/testOneNote1.one",
        "apache-tika/testOneNote2.one",
        "apache-tika/testOneNote4.one",
        "apache-tika/testOneNote2016.one",
        "apache-tika/testOneNoteEmbeddedWordDoc.one",
    ]
    .into_iter()
    .map(onenote_fixture)
    .collect();
    let nb = env.srv.add_files_notebook_of(ALICE, "Tika", &files);
    let (texts, _) = api_matches_files(&env, &nb).await;
    assert!(texts > 10, "{texts}");
}

/// Every visible text of blocks and their children, in order, with spaces around it trimmed (HTML
/// drops the spaces a table cell starts with, which a file may hold).
fn text_of(blocks: &[notebridge::convert::Block]) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack: Vec<&notebridge::convert::Block> = blocks.iter().rev().collect();
    while let Some(b) = stack.pop() {
        // Each rich-text array (a block's text, a caption, a table cell) on its own.
        let t: Vec<String> = b
            .rich_texts()
            .into_iter()
            .map(|rich| {
                let t: String = rich.iter().map(|r| r.visible_text()).collect();
                t.trim().to_owned()
            })
            .collect();
        if t.iter().any(|t| !t.is_empty()) {
            out.push(t.join(" / "));
        }
        stack.extend(b.children().iter().rev());
    }
    out
}

#[tokio::test]
async fn drive_requests_leave_the_onenote_windows_and_counters_untouched() {
    let env = Env::start().await;
    let before = env.srv.counters();
    // Far more drive requests than the OneNote window (3 a minute) allows.
    for _ in 0..6 {
        let (s, _) = env.get(&env.nb_path()).await;
        assert_eq!(s, StatusCode::OK);
    }
    let url = env.location(&env.nb.sections[0].item_id).await;
    assert_eq!(
        env.http.get(&url).send().await.unwrap().status(),
        StatusCode::OK
    );
    assert_eq!(env.srv.counters(), before);
    let c = env.srv.drive_counters();
    assert_eq!((c.api_requests, c.downloads), (7, 1));
    assert_eq!(c.per_user.get(ALICE), Some(&8));
    assert!(env.srv.log().is_empty());
    assert_eq!(env.srv.drive_log().len(), 8);
    // The OneNote window is whole.
    for _ in 0..3 {
        let (s, _) = env.get("/me/onenote/notebooks").await;
        assert_eq!(s, StatusCode::OK);
    }
}

#[tokio::test]
async fn drive_throttling_answers_429_and_503_with_retry_after() {
    let env = Env::start().await;
    let f = env.srv.drive_faults();
    let path = env.nb_path();
    f.throttle_next(1, 429, Duration::from_millis(1500));
    f.throttle_next(1, 503, Duration::from_secs(3));
    let (s, h, v) = env.get_as("tok-alice", &path).await;
    assert_eq!(
        (s, v["error"]["code"].as_str()),
        (StatusCode::TOO_MANY_REQUESTS, Some("activityLimitReached"))
    );
    assert_eq!(h["retry-after"], "2");
    let (s, h, v) = env.get_as("tok-alice", &path).await;
    assert_eq!(
        (s, v["error"]["code"].as_str()),
        (StatusCode::SERVICE_UNAVAILABLE, Some("serviceNotAvailable"))
    );
    assert_eq!(h["retry-after"], "3");
    let (s, _, _) = env.get_as("tok-alice", &path).await;
    assert_eq!(s, StatusCode::OK);

    // Downloads are drive requests too.
    let url = env.location(&env.nb.sections[0].item_id).await;
    f.throttle_next(1, 503, Duration::from_secs(1));
    let r = env.http.get(&url).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(r.headers()["retry-after"], "1");
    assert_eq!(
        env.http.get(&url).send().await.unwrap().status(),
        StatusCode::OK
    );

    // A budget per user and window: past it 429, and a refused request does not count.
    f.set_budget(Some((
        2,
        Duration::from_millis(300),
        Duration::from_secs(1),
    )));
    for want in [200, 200, 429, 429] {
        let (s, h, _) = env.get_as("tok-alice", &path).await;
        assert_eq!(s.as_u16(), want);
        if want == 429 {
            assert_eq!(h["retry-after"], "1");
        }
    }
    let (s, _, _) = env.get_as("tok-bob", "/me/drive").await;
    assert_eq!(
        s,
        StatusCode::NOT_FOUND,
        "bob has a budget of his own (and no drive)"
    );
    tokio::time::sleep(Duration::from_millis(320)).await;
    let (s, _, _) = env.get_as("tok-alice", &path).await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(env.srv.drive_counters().throttled, 5);
}

#[tokio::test]
async fn a_missing_file_is_absent_or_its_content_gone() {
    let env = Env::start().await;
    let f = env.srv.drive_faults();
    let s1 = &env.nb.sections[0];
    f.hide(&s1.item_id, true);
    let (kids, _) = env.children(&env.nb.item_id, None).await;
    assert_eq!(names(&kids), ["New Section 2.one", "Open Notebook.onetoc2"]);
    let (s, _) = env
        .get(&format!("/drives/{}/items/{}", env.nb.drive_id, s1.item_id))
        .await;
    assert_eq!(s, StatusCode::NOT_FOUND);
    f.hide(&s1.item_id, false);

    // Listed, but deleted before its download: the content is gone, and so are URLs handed out.
    let url = env.location(&s1.item_id).await;
    f.lose_content(&s1.item_id, true);
    let (kids, _) = env.children(&env.nb.item_id, None).await;
    assert_eq!(kids.len(), 3);
    let (s, v) = env
        .get(&format!(
            "/drives/{}/items/{}/content",
            env.nb.drive_id, s1.item_id
        ))
        .await;
    assert_eq!(
        (s, v["error"]["code"].as_str()),
        (StatusCode::NOT_FOUND, Some("itemNotFound"))
    );
    assert_eq!(
        env.http.get(&url).send().await.unwrap().status(),
        StatusCode::NOT_FOUND
    );
}

#[tokio::test]
async fn a_garbled_file_keeps_its_name_and_size_but_does_not_parse() {
    let env = Env::start().await;
    let s2 = &env.nb.sections[1];
    let path = format!("/drives/{}/items/{}", env.nb.drive_id, s2.item_id);
    let (_, before) = env.get(&path).await;
    env.srv.drive_faults().garble(&s2.item_id, true);
    let (_, after) = env.get(&path).await;
    assert_eq!(after["name"], "New Section 2.one");
    assert_eq!(after["size"], before["size"]);
    assert_ne!(after["eTag"], before["eTag"]);
    let got = env.download(&s2.item_id).await;
    assert_eq!(got.len(), s2.bytes.len());
    assert_ne!(got.as_ref(), s2.bytes.as_ref());
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("New Section 2.one");
    std::fs::write(&copy, &got).unwrap();
    assert!(onefile::open_section(&SectionLocation::File(copy)).is_err());
}

#[tokio::test]
async fn a_file_over_2_gb_is_announced_so_and_its_download_answers_503() {
    let env = Env::start().await;
    let s2 = &env.nb.sections[1];
    env.srv.drive_faults().too_large(&s2.item_id, true);
    let (_, item) = env
        .get(&format!("/drives/{}/items/{}", env.nb.drive_id, s2.item_id))
        .await;
    assert!(item["size"].as_u64().unwrap() > 2 << 30);
    let (_, package) = env.get(&env.nb_path()).await;
    assert!(package["size"].as_u64().unwrap() > 2 << 30);
    let url = env.location(&s2.item_id).await;
    for _ in 0..2 {
        let r = env.http.get(&url).send().await.unwrap();
        assert_eq!(r.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(env.srv.drive_counters().throttled, 0, "no throttling");
        assert!(r.headers().get("retry-after").is_none());
        assert!(r.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/html"));
    }
}

#[tokio::test]
async fn a_download_url_expires() {
    let env = Env::start().await;
    env.srv
        .drive_faults()
        .set_download_url_lifetime(Duration::from_millis(50));
    let url = env.location(&env.nb.sections[0].item_id).await;
    tokio::time::sleep(Duration::from_millis(60)).await;
    assert_eq!(
        env.http.get(&url).send().await.unwrap().status(),
        StatusCode::UNAUTHORIZED
    );
    let fresh = env.location(&env.nb.sections[0].item_id).await;
    assert_eq!(
        env.http.get(&fresh).send().await.unwrap().status(),
        StatusCode::OK
    );
}

#[tokio::test]
async fn loose_section_files_make_a_notebook_of_top_level_sections() {
    let reg = Arc::new(TokenRegistry::default());
    reg.insert_scoped(
        "t",
        ALICE,
        Duration::from_secs(3600),
        &["Notes.Read".to_string(), "Files.Read".to_string()],
    );
    let srv = GraphServer::start(GraphServerConfig::new(reg)).await;
    let files = [
        onenote_fixture("apache-tika/testOneNote2016.one"),
        onenote_fixture("apache-tika/testOneNote1.one"),
    ];
    let nb = srv.add_files_notebook_of(ALICE, "Loose", &files);
    assert_eq!(nb.toc_item_id, None);
    let names: Vec<&str> = nb.sections.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["testOneNote2016", "testOneNote1"]);
    assert!(nb.sections.iter().all(|s| !s.pages.is_empty()));
    let notes = srv.notes(ALICE);
    assert_eq!(notes.sections.len(), 2);
    assert_eq!(
        notes.pages.len(),
        nb.sections.iter().map(|s| s.pages.len()).sum::<usize>()
    );
}

#[tokio::test]
async fn section_groups_are_sub_folders_in_both_views() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("Trips");
    std::fs::create_dir_all(root.join("Group A")).unwrap();
    let samples = "onenote.rs/samples/New Section Group";
    std::fs::copy(
        onenote_fixture(&format!("{samples}/New Section 1.one")),
        root.join("Packing.one"),
    )
    .unwrap();
    std::fs::copy(
        onenote_fixture(&format!("{samples}/New Section 2.one")),
        root.join("Group A/Routes.one"),
    )
    .unwrap();
    let reg = Arc::new(TokenRegistry::default());
    reg.insert_scoped(
        "tok-alice",
        ALICE,
        Duration::from_secs(3600),
        &["Notes.Read".to_string(), "Files.Read".to_string()],
    );
    let srv = GraphServer::start(GraphServerConfig::new(reg)).await;
    let nb = srv.add_files_notebook(ALICE, "Trips", &root);
    let http = reqwest::Client::new();
    let get = |path: String| {
        let http = http.clone();
        let url = format!("{}{path}", srv.base_url());
        async move {
            let r = http.get(url).bearer_auth("tok-alice").send().await.unwrap();
            assert_eq!(r.status(), StatusCode::OK);
            r.json::<Value>().await.unwrap()
        }
    };

    assert_eq!(nb.groups.len(), 1);
    let g = &nb.groups[0];
    let (group_id, folder) = (&g.group_id, &g.item_id);
    assert_eq!(g.trail, ["Group A".to_string()]);
    let groups = get(format!(
        "/me/onenote/notebooks/{}/sectionGroups",
        nb.notebook_id
    ))
    .await;
    assert_eq!(groups["value"][0]["id"], group_id.as_str());
    assert_eq!(groups["value"][0]["displayName"], "Group A");
    let inner = get(format!("/me/onenote/sectionGroups/{group_id}/sections")).await;
    assert_eq!(inner["value"][0]["displayName"], "Routes");
    let top = get(format!("/me/onenote/notebooks/{}/sections", nb.notebook_id)).await;
    assert_eq!(top["value"][0]["displayName"], "Packing");
    assert_eq!(nb.sections[1].groups, ["Group A".to_string()]);

    let kids = get(format!(
        "/drives/{}/items/{}/children",
        nb.drive_id, nb.item_id
    ))
    .await;
    let kids = kids["value"].as_array().unwrap();
    assert_eq!(names(kids), ["Group A", "Packing.one"]);
    assert_eq!(kids[0]["id"], folder.as_str());
    assert_eq!(kids[0]["folder"]["childCount"], 1);
    let routes = get(format!("/drives/{}/items/{folder}/children", nb.drive_id)).await;
    let routes = &routes["value"][0];
    assert_eq!(routes["name"], "Routes.one");
    assert_eq!(
        routes["parentReference"]["path"],
        format!("/drives/{}/root:/Notebooks/Trips/Group%20A", nb.drive_id).as_str()
    );
    // From the drive's root down: the folder notebooks are kept in.
    let root = get("/me/drive/root/children".to_string()).await;
    assert_eq!(root["value"][0]["name"], "Notebooks");
    assert_eq!(root["value"][0]["folder"]["childCount"], 1);
}

#[tokio::test]
async fn the_lab_adds_a_files_user_whose_sign_in_reads_their_files() {
    use notebridge_testkit::lab::{Lab, LabConfig, SIGN_IN_SCOPES};
    let lab = Lab::start(LabConfig::default()).await;
    let (user, nb) = lab.add_files_user("carol", "Field notes", &onenote_fixture(NOTEBOOK));
    assert!(SIGN_IN_SCOPES.contains(&"Files.Read"));
    let scopes: Vec<String> = SIGN_IN_SCOPES
        .iter()
        .filter(|s| **s != "offline_access")
        .map(|s| s.to_string())
        .collect();
    lab.registry
        .insert_scoped("tok-carol", &user.id, Duration::from_secs(60), &scopes);
    let get = |path: String| {
        reqwest::Client::new()
            .get(format!("{}{path}", lab.graph.base_url()))
            .bearer_auth("tok-carol")
            .send()
    };
    // The default scopes read the notebook's folder by its path, not through the shares API.
    let r = get(format!("/me/drive/root:/{}", nb.path.replace(' ', "%20")))
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    let item: Value = r.json().await.unwrap();
    assert_eq!(item["id"], nb.item_id.as_str());
    let r = get(format!("/shares/{}/driveItem", nb.share_id))
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::FORBIDDEN);
    assert_eq!(lab.graph.notes(&user.id).notebooks.len(), 1);
}

#[tokio::test]
async fn drive_requests_in_a_batch_are_the_drives_and_spend_no_onenote_budget() {
    let env = Env::start().await;
    let s1 = &env.nb.sections[0];
    let body = serde_json::json!({ "requests": [
        { "id": "1", "method": "GET", "url": env.nb_path() },
        { "id": "2", "method": "GET", "url": format!("/drives/{}/items/{}/children?$top=1", env.nb.drive_id, env.nb.item_id) },
        { "id": "3", "method": "GET", "url": format!("/drives/{}/items/{}/content", env.nb.drive_id, s1.item_id) },
        { "id": "4", "method": "GET", "url": "/me/onenote/notebooks" },
    ]});
    let r = env
        .http
        .post(env.url("/$batch"))
        .bearer_auth("tok-alice")
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    let v: Value = r.json().await.unwrap();
    let by_id = |id: &str| {
        v["responses"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["id"] == id)
            .unwrap()
            .clone()
    };
    assert_eq!(by_id("1")["status"], 200);
    assert_eq!(by_id("1")["body"]["package"]["type"], "oneNote");
    assert_eq!(by_id("2")["status"], 200);
    assert!(by_id("2")["body"]["@odata.nextLink"].is_string());
    let content = by_id("3");
    assert_eq!(content["status"], 302);
    let url = content["headers"]["Location"].as_str().unwrap();
    let got = env
        .http
        .get(url)
        .send()
        .await
        .unwrap()
        .bytes()
        .await
        .unwrap();
    assert_eq!(got, s1.bytes);
    assert_eq!(by_id("4")["status"], 200);
    let (c, d) = (env.srv.counters(), env.srv.drive_counters());
    assert_eq!((c.inner_requests, c.batches), (1, 1));
    assert_eq!((d.api_requests, d.downloads), (3, 1));
}

#[tokio::test]
async fn a_groups_library_is_read_by_its_members_with_an_all_scope() {
    use notebridge_testkit::graph::teams::{group_key, TeamGroup};
    let env = Env::start_with("1000/60s").await;
    let gid = "0a1b2c3d-0000-4000-8000-00000000beef";
    env.srv.add_group(
        TeamGroup::new(gid, "Marketing", &[ALICE]),
        Default::default(),
    );
    let nb = env
        .srv
        .add_files_notebook(&group_key(gid), "Campaigns", &onenote_fixture(NOTEBOOK));
    // `Files.Read` reads alice's own drive only; `Sites.Read.All` reads her group's library.
    let (s, _, v) = env
        .get_as("tok-alice", &format!("/groups/{gid}/drive/root/children"))
        .await;
    assert_eq!(
        (s, v["error"]["code"].as_str()),
        (StatusCode::FORBIDDEN, Some("accessDenied"))
    );
    let (s, _, kids) = env
        .get_as(
            "tok-alice-sites",
            &format!("/groups/{gid}/drive/root/children"),
        )
        .await;
    assert_eq!(s, StatusCode::OK, "{kids}");
    assert_eq!(kids["value"][0]["name"], "Notebooks");
    let (s, _, item) = env
        .get_as(
            "tok-alice-sites",
            &format!("/groups/{gid}/drive/root:/Notebooks/Campaigns"),
        )
        .await;
    assert_eq!(
        (s, item["package"]["type"].as_str()),
        (StatusCode::OK, Some("oneNote"))
    );
    assert_eq!(item["id"], nb.item_id.as_str());
    // The shares API is refused to a read scope, in a group's library too.
    let (s, _, _) = env
        .get_as(
            "tok-alice-sites",
            &format!("/shares/{}/driveItem", nb.share_id),
        )
        .await;
    assert_eq!(s, StatusCode::FORBIDDEN);
    let (s, _, d) = env
        .get_as("tok-alice-sites", &format!("/groups/{gid}/drive"))
        .await;
    assert_eq!(
        (s, d["driveType"].as_str()),
        (StatusCode::OK, Some("documentLibrary"))
    );
    // The group's library is a site's `Shared Documents`, and the notebook's links lie in it.
    let web = d["webUrl"].as_str().unwrap();
    assert_eq!(
        web,
        format!("https://contoso.sharepoint.com/sites/{gid}/Shared%20Documents")
    );
    assert_eq!(nb.web_url, format!("{web}/Notebooks/Campaigns"));
    assert_eq!(item["webUrl"], nb.web_url.as_str());
    // Bob is no member.
    let (s, _, _) = env
        .get_as(
            "tok-bob",
            &format!("/drives/{}/items/{}", nb.drive_id, nb.item_id),
        )
        .await;
    assert_eq!(s, StatusCode::FORBIDDEN);
    // Alice's own drive is another drive.
    assert_ne!(nb.drive_id, env.nb.drive_id);
}

/// What of a driveItem says whether its content changed, and the rest of its metadata (without
/// the download URL, which is new on every answer).
fn tags(item: &Value) -> (Value, Value, Value, Value, Value, Value) {
    (
        item["eTag"].clone(),
        item["cTag"].clone(),
        item["size"].clone(),
        item["file"]["hashes"]["quickXorHash"].clone(),
        item["lastModifiedDateTime"].clone(),
        item["name"].clone(),
    )
}

#[tokio::test]
async fn a_files_tags_size_and_hash_change_with_its_content_and_only_then() {
    let env = Env::start().await;
    let (s1, s2) = (&env.nb.sections[0], &env.nb.sections[1]);
    let item = |id: &str| format!("/drives/{}/items/{id}", env.nb.drive_id);
    let (_, a0) = env.get(&item(&s1.item_id)).await;
    let (_, b0) = env.get(&item(&s2.item_id)).await;
    // Asked again, nothing changed: the same tags (a client may skip the download).
    assert_eq!(tags(&env.get(&item(&s1.item_id)).await.1), tags(&a0));
    assert!(a0["cTag"].as_str().unwrap().starts_with("\"c:{"), "{a0}");

    // OneNote saves new content into the first section's file.
    let other = fixture_bytes("onenote.rs/non-legacy/New Section 1 2.one");
    assert_ne!(other, s1.bytes.to_vec());
    env.srv.replace_drive_file(ALICE, &s1.item_id, &other);
    let (_, a1) = env.get(&item(&s1.item_id)).await;
    let (old, new) = (tags(&a0), tags(&a1));
    assert_ne!(new.0, old.0, "eTag");
    assert_ne!(new.1, old.1, "cTag");
    assert_eq!(new.2, other.len() as u64);
    assert_ne!(new.3, old.3, "quickXorHash");
    assert!(new.4.as_str() > old.4.as_str(), "lastModifiedDateTime");
    assert_eq!(new.5, old.5, "name");
    assert_eq!(env.download(&s1.item_id).await.to_vec(), other);
    // The other file did not change at all.
    assert_eq!(tags(&env.get(&item(&s2.item_id)).await.1), tags(&b0));
    // The same bytes again are no new version.
    env.srv.replace_drive_file(ALICE, &s1.item_id, &other);
    assert_eq!(tags(&env.get(&item(&s1.item_id)).await.1), new);

    // A rename changes the item (eTag, time) but not its content (cTag, size, hash).
    env.srv.rename_drive_item(ALICE, &s2.item_id, "Renamed.one");
    let (_, b1) = env.get(&item(&s2.item_id)).await;
    let (old, new) = (tags(&b0), tags(&b1));
    assert_ne!(new.0, old.0, "eTag");
    assert_eq!((&new.1, &new.2, &new.3), (&old.1, &old.2, &old.3));
    assert!(new.4.as_str() > old.4.as_str(), "lastModifiedDateTime");
    assert_eq!(new.5, "Renamed.one");
    let (kids, _) = env.children(&env.nb.item_id, None).await;
    assert!(names(&kids).contains(&"Renamed.one"));

    // Folders have no cTag in OneDrive for Business and SharePoint (resources/driveitem).
    let (s, folder) = env.get("/me/drive/root:/Notebooks").await;
    assert_eq!(s, StatusCode::OK, "{folder}");
    assert!(folder["folder"].is_object(), "{folder}");
    assert!(folder.get("cTag").is_none(), "{folder}");
    assert!(folder["eTag"].is_string(), "{folder}");
}

/// A section file saved anew: the drive serves the new bytes and the OneNote API the pages read
/// from them, a page that was there before keeping its id.
#[tokio::test]
async fn a_section_file_saved_anew_is_served_by_both_apis() {
    let env = Env::start_with("1000/60s").await;
    let s1 = env.nb.sections[0].clone();
    let item = format!("/drives/{}/items/{}", env.nb.drive_id, s1.item_id);
    let section = format!("/me/onenote/sections/{}", s1.section_id);
    let (_, a0) = env.get(&item).await;
    let (_, sec0) = env.get(&section).await;
    let modified = |v: &Value| v["lastModifiedDateTime"].as_str().unwrap().to_owned();

    // The same section with bytes that differ (OneNote appends to its files): the same pages.
    let dir = tempfile::tempdir().unwrap();
    let grown = dir.path().join("New Section 1.one");
    let mut bytes = s1.bytes.to_vec();
    bytes.extend_from_slice(&[0u8; 8]);
    std::fs::write(&grown, &bytes).unwrap();
    let s1b = env.srv.replace_section_file(ALICE, &s1, &grown);
    assert_eq!(s1b.pages, s1.pages, "same GUIDs, same ids");
    let (_, a1) = env.get(&item).await;
    assert_ne!(a1["cTag"], a0["cTag"]);
    assert_eq!(a1["size"], bytes.len() as u64);
    let (_, sec1) = env.get(&section).await;
    assert!(modified(&sec1) > modified(&sec0));
    let (s, _) = env
        .get(&format!("/me/onenote/pages/{}", s1.pages[0].page_id))
        .await;
    assert_eq!(s, StatusCode::OK);

    // Another file's pages: the old page is gone, the new ones are listed with their content.
    let other = onenote_fixture("onenote.rs/non-legacy/New Section 1 2.one");
    let s1c = env.srv.replace_section_file(ALICE, &s1b, &other);
    assert_eq!(s1c.section_id, s1.section_id);
    assert_eq!(s1c.item_id, s1.item_id);
    assert_eq!(
        env.download(&s1.item_id).await.to_vec(),
        fixture_bytes("onenote.rs/non-legacy/New Section 1 2.one")
    );
    let (s, _) = env
        .get(&format!("/me/onenote/pages/{}", s1.pages[0].page_id))
        .await;
    assert_eq!(s, StatusCode::NOT_FOUND);
    let file = onefile::open_section(&SectionLocation::File(other.clone())).unwrap();
    let want: Vec<(String, String)> = file.pages().into_iter().map(|p| (p.id, p.title)).collect();
    let got: Vec<(String, String)> = s1c
        .pages
        .iter()
        .map(|p| (p.guid.clone(), p.title.clone()))
        .collect();
    assert_eq!(got, want);
    let (s, listed) = env
        .get(&format!("{section}/pages?pagelevel=true&$orderby=order"))
        .await;
    assert_eq!(s, StatusCode::OK, "{listed}");
    let ids: Vec<&str> = listed["value"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["id"].as_str().unwrap())
        .collect();
    let want_ids: Vec<&str> = s1c.pages.iter().map(|p| p.page_id.as_str()).collect();
    assert_eq!(ids, want_ids);
    let (_, sec2) = env.get(&section).await;
    assert!(modified(&sec2) > modified(&sec1));
    // The other section did not change.
    let s2 = &env.nb.sections[1];
    let (_, p2) = env
        .get(&format!("/me/onenote/sections/{}/pages", s2.section_id))
        .await;
    assert_eq!(p2["value"].as_array().unwrap().len(), s2.pages.len());
    // The content each page serves is the new file's.
    let mut compared = 0;
    for p in &s1c.pages {
        let html = env.page_html(&p.page_id).await;
        let from_api = notebridge::convert::convert_page(&html);
        let from_file = file.convert(&p.guid).unwrap();
        assert_eq!(from_api.title, from_file.title);
        // Every text of the file is served (the HTML's rendering of an equation adds its own
        // text, which the file route leaves out: not what this test is about).
        let served = text_of(&from_api.blocks[1..]);
        let file_texts = text_of(&from_file.blocks[1..]);
        compared += file_texts.len();
        assert!(
            file_texts.iter().all(|t| served.contains(t)),
            "{served:?} lacks some of {file_texts:?}"
        );
    }
    assert!(compared > 0, "the new file's pages hold text");
    // Saving the same bytes again changes nothing.
    let (_, a2) = env.get(&item).await;
    let same = env.srv.replace_section_file(ALICE, &s1c, &other);
    assert_eq!(same, s1c);
    assert_eq!(tags(&env.get(&item).await.1), tags(&a2));
}

/// The personal-drive switch, with the ids as the field reports them (OneDrive/onedrive-api-docs
/// #1890 and #1416, abraunegg/onedrive #3072, #3115 and #3418): the drive's own answer spells its
/// id in lower case, items' `parentReference.driveId` in upper case without its leading zero; a
/// request names the drive in either case, and without its zero is refused. The notebook sits in
/// `Documents` and its client link is the cid's WebDAV address.
#[tokio::test]
async fn a_personal_drive_spells_its_id_as_the_field_reports_and_refuses_it_without_its_zero() {
    let env = Env::start().await;
    env.srv.set_personal_drive(BOB, "0B0D303A0F54ADFF");
    let nb = env
        .srv
        .add_files_notebook(BOB, "Journal", &onenote_fixture(NOTEBOOK));
    assert_eq!(nb.drive_id, "0b0d303a0f54adff");
    assert_eq!(nb.path, "Documents/Journal");
    assert_eq!(
        nb.client_url,
        "onenote:https://d.docs.live.net/0b0d303a0f54adff/Documents/Journal"
    );
    let e = &env;
    let bob = move |p: String| async move {
        let (s, _, v) = e.get_as("tok-bob", &p).await;
        (s, v)
    };
    let (s, d) = bob("/me/drive".into()).await;
    assert_eq!(s, StatusCode::OK, "{d}");
    assert_eq!(
        (d["id"].as_str(), d["driveType"].as_str()),
        (Some("0b0d303a0f54adff"), Some("personal"))
    );
    assert_eq!(
        d["webUrl"],
        "https://onedrive.live.com/?cid=0b0d303a0f54adff"
    );

    for id in ["0b0d303a0f54adff", "0B0D303A0F54ADFF"] {
        let (s, item) = bob(format!("/drives/{id}/root:/Documents/Journal:")).await;
        assert_eq!(s, StatusCode::OK, "{id}: {item}");
        assert_eq!(item["id"], nb.item_id.as_str());
        assert!(
            nb.item_id.starts_with("B0D303A0F54ADFF!s"),
            "{}",
            nb.item_id
        );
        assert_eq!(item["parentReference"]["driveId"], "B0D303A0F54ADFF");
        assert_eq!(item["parentReference"]["driveType"], "personal");
        let (s, _) = bob(format!("/drives/{id}/items/{}/children", nb.item_id)).await;
        assert_eq!(s, StatusCode::OK);
    }
    let (s, e) = bob("/drives/B0D303A0F54ADFF/root:/Documents/Journal:".into()).await;
    assert_eq!(s, StatusCode::BAD_REQUEST, "{e}");
    assert_eq!(e["error"]["code"], "invalidRequest");
    assert!(e["error"]["message"]
        .as_str()
        .unwrap()
        .contains("malformed"));
    let (s, _) = bob(format!(
        "/drives/B0D303A0F54ADFF/items/{}/content",
        nb.sections[0].item_id
    ))
    .await;
    assert_eq!(
        s,
        StatusCode::BAD_REQUEST,
        "a download names the drive with its zero too"
    );
    // Another drive's id, of any length, is an unknown drive.
    let (s, _) = bob("/drives/C0D303A0F54ADFF/root".into()).await;
    assert_eq!(s, StatusCode::NOT_FOUND);

    // The OneNote API links the notebook to that folder.
    let (s, list) = bob("/me/onenote/notebooks".into()).await;
    assert_eq!(s, StatusCode::OK, "{list}");
    let links = list["value"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["id"] == nb.notebook_id.as_str())
        .map(|n| n["links"].clone())
        .unwrap();
    assert_eq!(links["oneNoteClientUrl"]["href"], nb.client_url.as_str());
    // alice's business drive is as it was.
    let (s, d) = env.get("/me/drive").await;
    assert_eq!(
        (s, d["driveType"].as_str()),
        (StatusCode::OK, Some("business"))
    );
}
