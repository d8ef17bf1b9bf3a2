//! Ink end to end: the real binary migrates a generated notebook whose pages carry ink; every drawing
//! arrives as an SVG image block with its caption, placed among the outlines in reading order, and a
//! page whose InkML cannot be read still migrates with the failure in its report.

use crate::migrate_support;

use crate::bin_support::Start;
use axum::body::Bytes;
use migrate_support::{assert_mirrors_with, command, inventory, State};
use notebridge::store::Db;
use notebridge_testkit::generator::{generate, page_html, NotebookSpec};
use notebridge_testkit::graph::ink::page_ink;
use notebridge_testkit::lab::{Lab, LabConfig};
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
        sections_per_container: 2,
        pages_per_section: 0,
        total_pages: Some(24),
        subpage_ratio: 0.0,
        images_per_page: 1,
        attachments_per_page: 0,
        resource_bytes: 2048,
        seed: 11,
        ..NotebookSpec::default()
    }
}

/// A pass-through to the Graph test server that breaks the InkML of one page (an unclosed root
/// element), as a truncated or garbled answer would.
async fn start_proxy(upstream_base: &str, broken_page: &str) -> String {
    let page = format!("/pages/{broken_page}/content");
    crate::graph_proxy::start(upstream_base, move |path, _, _, body| {
        if !path.contains(&page) {
            return body;
        }
        let text = String::from_utf8(body.to_vec()).unwrap();
        assert!(text.contains("</inkml:ink>"), "the broken page has ink");
        Bytes::from(text.replace("</inkml:ink>", "</inkml:in>"))
    })
    .await
}

fn walk<'a>(n: &'a DumpNode, out: &mut Vec<&'a DumpNode>) {
    out.push(n);
    n.children.iter().for_each(|c| walk(c, out));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn drawings_arrive_as_captioned_svg_images_in_reading_order() {
    let lab = Lab::start(fast()).await;
    let notes = generate(&spec());
    let user = lab.add_user("alice", notes.clone());
    // Pages with ink, by the test server's own generation.
    let mut inked = Vec::new();
    let mut strokes = 0;
    let mut drawings = 0;
    for p in &notes.pages {
        let html = page_html(p, &notes.resources, lab.graph.base_url(), &user.id);
        if let Some(ink) = page_ink(p, &html) {
            drawings += ink.drawings.len();
            strokes += ink.drawings.iter().map(|d| d.strokes).sum::<usize>();
            inked.push(p.id.clone());
        }
    }
    assert!(inked.len() >= 3, "the notebook has inked pages: {inked:?}");
    let broken = inked[0].clone();

    let proxy = start_proxy(lab.graph.base_url(), &broken).await;
    let state = State::new();
    lab.sign_in(&Db::open(&state.db).unwrap(), "alice", &user);
    let out = command(
        &lab,
        &state,
        &[
            "--json",
            "migrate",
            "--account",
            "alice",
            "--to",
            &lab.target_page,
        ],
    )
    .env(notebridge::settings::env::GRAPH_URL, &proxy)
    .run_to_end()
    .await;
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "stdout: {stdout}\nstderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let summary: serde_json::Value = serde_json::from_str(stdout.trim()).unwrap();
    assert_eq!(summary["pages_done"], 24);

    // Every page mirrors its conversion with drawings placed (the broken one without).
    let inv = inventory(&state.db, "alice");
    assert_mirrors_with(&lab, &user.id, &inv, std::slice::from_ref(&broken));

    // Every drawing image is an uploaded SVG of exactly the rendered bytes.
    let root = lab.notion.dump(&lab.target_page).unwrap();
    let mut all = Vec::new();
    walk(&root, &mut all);
    let images: Vec<&DumpNode> = all
        .iter()
        .copied()
        .filter(|n| n.kind == "image" && n.text.contains(" drawing, "))
        .collect();
    let broken_drawings = {
        let p = notes.pages.iter().find(|p| p.id == broken).unwrap();
        let html = page_html(p, &notes.resources, lab.graph.base_url(), &user.id);
        page_ink(p, &html).unwrap().drawings.len()
    };
    assert_eq!(images.len(), drawings - broken_drawings);
    let mut svgs = std::collections::HashSet::new();
    for p in &notes.pages {
        if p.id == broken {
            continue;
        }
        let html = page_html(p, &notes.resources, lab.graph.base_url(), &user.id);
        if let Some(ink) = page_ink(p, &html) {
            for svg in notebridge::ink::for_page(Some(&ink.inkml)).svgs.values() {
                svgs.insert(notebridge_testkit::notion::uploads::content_hash(svg));
            }
        }
    }
    for img in &images {
        let id = img
            .file
            .as_deref()
            .and_then(|f| f.strip_prefix("file_upload:"))
            .expect("uploaded");
        let up = lab.notion.upload(id).expect("upload known");
        assert_eq!(up.status, "uploaded");
        assert!(
            up.filename.as_deref().is_some_and(|f| f.ends_with(".svg")),
            "{:?}",
            up.filename
        );
        assert!(svgs.contains(up.hash.as_deref().unwrap()), "SVG bytes");
    }

    // The broken page migrated, its failure in its stored report.
    let db = Db::open(&state.db).unwrap();
    let report = db
        .notion_item("alice", &broken)
        .unwrap()
        .and_then(|i| i.report)
        .expect("a report");
    assert!(
        report.contains("InkML could not be read") && report.contains("not migrated"),
        "{report}"
    );
    // Each other inked page's report counts its drawings once, as verify and report show them.
    for id in &inked[1..] {
        let p = notes.pages.iter().find(|p| &p.id == id).unwrap();
        let html = page_html(p, &notes.resources, lab.graph.base_url(), &user.id);
        let want = page_ink(p, &html).unwrap().drawings.len() as u64;
        let report = db
            .notion_item("alice", id)
            .unwrap()
            .and_then(|i| i.report)
            .expect("a report");
        let items: serde_json::Value = serde_json::from_str(&report).unwrap();
        let counted: u64 = items
            .as_array()
            .unwrap()
            .iter()
            .filter(|a| {
                a["element"] == notebridge::ink::DRAWING_REPORTED.0
                    && a["action"] == notebridge::ink::DRAWING_REPORTED.1
            })
            .filter_map(|a| a["count"].as_u64())
            .sum();
        assert_eq!(counted, want, "{report}");
    }
    eprintln!(
        "figures: {} pages, {} with ink, {drawings} drawings ({strokes} strokes) generated, {} placed",
        notes.pages.len(),
        inked.len(),
        images.len()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pages_whose_ink_request_errors_migrate_without_ink_reported() {
    let lab = Lab::start(fast()).await;
    let notes = generate(&NotebookSpec {
        total_pages: Some(4),
        ..spec()
    });
    let user = lab.add_user("alice", notes);
    let state = State::new();
    lab.sign_in(&Db::open(&state.db).unwrap(), "alice", &user);
    lab.graph.faults().fail_ink_requests(Some(400));
    let out = command(
        &lab,
        &state,
        &["migrate", "--account", "alice", "--to", &lab.target_page],
    )
    .run_to_end()
    .await;
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let db = Db::open(&state.db).unwrap();
    let pages = lab.graph.notes(&user.id).pages;
    assert_eq!(pages.len(), 4);
    for p in &pages {
        let item = db.notion_item("alice", &p.id).unwrap().expect("migrated");
        let report = item.report.unwrap_or_default();
        assert!(
            report.contains("could not be fetched") && report.contains("not migrated"),
            "{report}"
        );
    }
}
