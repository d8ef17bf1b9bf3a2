//! An image whose full-resolution rendition (`data-fullres-src`) fails for good arrives at the
//! smaller one OneNote shows (`src`), reported as an approximation; when both fail, a visible
//! placeholder stands in for it as before. The real binary migrates a generated notebook through a
//! pass-through to the Graph test server that points the pages' full-resolution URLs (and, in the
//! second test, their `src` too) at resources the server does not have, so it answers 404.

use crate::migrate_support;

use std::collections::HashSet;

use crate::bin_support::Start;
use axum::body::Bytes;
use migrate_support::{command, State};
use notebridge::store::Db;
use notebridge_testkit::generator::{generate, resource_bytes, NotebookSpec};
use notebridge_testkit::graph::model::{ResourceKind, UserNotes};
use notebridge_testkit::lab::{Lab, LabConfig};
use notebridge_testkit::notion::uploads::content_hash;
use notebridge_testkit::notion::DumpNode;

fn fast() -> LabConfig {
    LabConfig {
        user_windows: "60/600ms,600/6s".into(),
        app_windows: "120/600ms,1200/6s".into(),
        notion_per_second: 150,
        ..LabConfig::default()
    }
}

fn spec() -> NotebookSpec {
    NotebookSpec {
        notebooks: 1,
        section_groups_depth: 0,
        section_groups_per_container: 0,
        sections_per_container: 1,
        pages_per_section: 0,
        total_pages: Some(3),
        subpage_ratio: 0.0,
        images_per_page: 1,
        attachments_per_page: 0,
        resource_bytes: 2048,
        seed: 23,
        ..NotebookSpec::default()
    }
}

/// A pass-through that points every image's full-resolution URL (and its `src` when `src_too`)
/// at a resource id the server does not know.
async fn start_proxy(lab: &Lab, notes: &UserNotes, user: &str, src_too: bool) -> String {
    let base = lab.graph.base_url();
    let mut rewrites = Vec::new();
    for r in notes.resources.values() {
        let url = format!("{base}/users('{user}')/onenote/resources/{}/$value", r.id);
        let gone = format!(
            "{base}/users('{user}')/onenote/resources/{}-gone/$value",
            r.id
        );
        rewrites.push((
            format!("data-fullres-src=\"{url}\""),
            format!("data-fullres-src=\"{gone}\""),
        ));
        if src_too {
            rewrites.push((format!("src=\"{url}\""), format!("src=\"{gone}\"")));
        }
    }
    crate::graph_proxy::start(base, move |path, _, _, body| {
        if !path.contains("/content") {
            return body;
        }
        let mut text = String::from_utf8(body.to_vec()).unwrap();
        for (from, to) in &rewrites {
            text = text.replace(from, to);
        }
        Bytes::from(text)
    })
    .await
}

fn walk<'a>(n: &'a DumpNode, out: &mut Vec<&'a DumpNode>) {
    out.push(n);
    n.children.iter().for_each(|c| walk(c, out));
}

/// Migrates the notebook through the proxy; returns the lab's Notion dump, the notes and the state.
async fn migrate(src_too: bool) -> (Lab, UserNotes, State) {
    let lab = Lab::start(fast()).await;
    let notes = generate(&spec());
    let user = lab.add_user("alice", notes.clone());
    let proxy = start_proxy(&lab, &notes, &user.id, src_too).await;
    let state = State::new();
    lab.sign_in(&Db::open(&state.db).unwrap(), "alice", &user);
    let out = command(
        &lab,
        &state,
        &["migrate", "--account", "alice", "--to", &lab.target_page],
    )
    .env(notebridge::settings::env::GRAPH_URL, &proxy)
    .run_to_end()
    .await;
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    (lab, notes, state)
}

/// The notebook's images' resources.
fn images(notes: &UserNotes) -> Vec<&notebridge_testkit::graph::model::Resource> {
    let v: Vec<_> = notes
        .resources
        .values()
        .filter(|r| matches!(r.kind, ResourceKind::Image { .. }))
        .collect();
    assert_eq!(v.len(), 3, "one image per page");
    v
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_resolution_image_gone_arrives_at_its_smaller_rendition_reported() {
    let (lab, notes, state) = migrate(false).await;
    // Every image is an upload of exactly the smaller rendition's bytes.
    let want: HashSet<String> = images(&notes)
        .iter()
        .map(|r| content_hash(&resource_bytes(r, 0, r.len as usize)))
        .collect();
    let root = lab.notion.dump(&lab.target_page).unwrap();
    let mut all = Vec::new();
    walk(&root, &mut all);
    assert!(
        !all.iter()
            .any(|n| n.text.contains("could not be carried over")),
        "no placeholder"
    );
    let got: HashSet<String> = all
        .iter()
        .filter(|n| n.kind == "image" && !n.text.contains(" drawing, "))
        .map(|n| {
            let id = n
                .file
                .as_deref()
                .and_then(|f| f.strip_prefix("file_upload:"))
                .expect("uploaded");
            let up = lab.notion.upload(id).expect("upload known");
            assert_eq!(up.status, "uploaded");
            up.hash.expect("uploaded bytes")
        })
        .collect();
    assert_eq!(got, want);
    // Each page's report says the image arrived at its smaller rendition, and why.
    let db = Db::open(&state.db).unwrap();
    for p in &notes.pages {
        let report = db
            .notion_item("alice", &p.id)
            .unwrap()
            .and_then(|i| i.report)
            .expect("a report");
        assert!(
            report.contains("at full resolution")
                && report.contains("the smaller rendition was carried over")
                && report.contains("404"),
            "{report}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_image_whose_both_renditions_are_gone_leaves_a_placeholder() {
    let (lab, notes, state) = migrate(true).await;
    let n = images(&notes).len();
    let root = lab.notion.dump(&lab.target_page).unwrap();
    let mut all = Vec::new();
    walk(&root, &mut all);
    let placeholders = all
        .iter()
        .filter(|n| n.kind == "paragraph" && n.text.contains("could not be carried over"))
        .count();
    assert_eq!(placeholders, n);
    assert!(!all
        .iter()
        .any(|n| n.kind == "image" && !n.text.contains(" drawing, ")));
    let db = Db::open(&state.db).unwrap();
    for p in &notes.pages {
        let report = db
            .notion_item("alice", &p.id)
            .unwrap()
            .and_then(|i| i.report)
            .expect("a report");
        assert!(
            report.contains("visible placeholder") && !report.contains("was carried over ("),
            "{report}"
        );
    }
}

#[test]
fn the_converter_keeps_src_as_the_fallback_of_a_full_resolution_image() {
    use notebridge::convert::{convert_page, MediaSource};
    let r = "https://graph.microsoft.com/v1.0/me/onenote/resources";
    let html = format!(
        "<html><body><img src=\"{r}/a/$value\" data-fullres-src=\"{r}/b/$value\" />\
         <img src=\"{r}/c/$value\" data-fullres-src=\"{r}/c/$value\" />\
         <img src=\"https://example.com/x.png\" data-fullres-src=\"{r}/d/$value\" /></body></html>"
    );
    let page = convert_page(&html);
    let got: Vec<_> = page
        .resources()
        .into_iter()
        .map(|m| match m {
            MediaSource::Resource { url, fallback, .. } => (url.clone(), fallback.clone()),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(
        got,
        vec![
            (format!("{r}/b/$value"), Some(format!("{r}/a/$value"))),
            // the same URL twice is no fallback; nor is an address that is not a Graph resource
            (format!("{r}/c/$value"), None),
            (format!("{r}/d/$value"), None),
        ]
    );
}
