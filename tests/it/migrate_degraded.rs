//! What a migration degrades ends in the page's stored report, end to end, and the page is not
//! failed for it; `verify` (and `report`) list it. The real binary migrates against the lab:
//! - a file whose upload Notion keeps failing stops after the item's one retry budget and leaves a
//!   placeholder;
//! - links the link pass cannot rewrite stay text: pages written without records of their links are
//!   read again by the pass; a pass-through to the Graph test server answers
//!   the pass's second read of each page with forward links as if it had been edited in OneNote
//!   since it was written (a table before everything else), so its blocks no longer match and the
//!   pass never writes over them.

use crate::migrate_support;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crate::bin_support::Start;
use axum::body::Bytes;
use migrate_support::{counts, notebridge, State};
use notebridge::store::Db;
use notebridge_testkit::generator::{generate, NotebookSpec};
use notebridge_testkit::lab::{Lab, LabConfig};
use notebridge_testkit::notion::{Endpoint, FaultKind, FaultRule};
use serde_json::Value;

const BODY: &str = "<body data-absolute-enabled=\"true\"";

fn fast() -> LabConfig {
    LabConfig {
        user_windows: "60/600ms,600/6s".into(),
        app_windows: "120/600ms,1200/6s".into(),
        notion_per_second: 150,
        ..LabConfig::default()
    }
}

/// The pages of `verify --json`'s report, by OneNote id.
fn verified_pages(out: &str) -> HashMap<String, Value> {
    let v: Value = serde_json::from_str(out.trim()).unwrap();
    v["accounts"][0]["sections"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|s| s["pages"].as_array().unwrap().clone())
        .map(|p| (p["id"].as_str().unwrap().to_owned(), p))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_notion_keeps_failing_leaves_a_placeholder_after_the_items_budget() {
    let lab = Lab::start(fast()).await;
    let spec = NotebookSpec {
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
        seed: 62,
        ..NotebookSpec::default()
    };
    let notes = generate(&spec);
    let user = lab.add_user("alice", notes.clone());
    let state = State::new();
    lab.sign_in(&Db::open(&state.db).unwrap(), "alice", &user);
    // Every send of a file answers 503 and is not applied.
    lab.notion
        .inject(FaultRule::new(FaultKind::Status(503)).on(Endpoint::SendUpload));
    let (code, out, err) = notebridge(
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
    .await;
    assert_eq!(code, 0, "{out}\n{err}");
    let c = counts(&state.db, "alice");
    assert_eq!((c["pages_done"], c["failed"]), (3, 0), "{c:?}");
    // Exactly the budget per file: one upload created, its send tried once and retried four times,
    // read back after each (Notion might have applied it); then the page went on without it. No
    // attempt of the page was repeated by the queue.
    let log = lab.notion.request_log();
    let n = |e: Endpoint| log.iter().filter(|r| r.endpoint == e).count();
    let summary: Value = serde_json::from_str(out.trim()).unwrap();
    let files = n(Endpoint::CreateUpload);
    assert!(files >= 3, "an image per page, and the drawings: {files}");
    assert_eq!(summary["this_run"]["placeholders"], files, "{summary}");
    assert_eq!(n(Endpoint::SendUpload), 5 * files);
    assert_eq!(n(Endpoint::GetUpload), 5 * files);
    assert_eq!(
        n(Endpoint::CreatePage),
        2 + 3,
        "a notebook, a section, three pages"
    );

    let db = Db::open(&state.db).unwrap();
    for p in &notes.pages {
        let item = db.notion_item("alice", &p.id).unwrap().unwrap();
        let report = item.report.clone().unwrap_or_default();
        assert!(
            report.contains("visible placeholder: Notion kept failing")
                && report.contains("after 5 attempts"),
            "{:?}: {report}",
            p.title
        );
        let text =
            serde_json::to_string(&lab.notion.blocks_of(&item.into_page_id().unwrap())).unwrap();
        assert!(text.contains("could not be carried over"), "{text}");
    }
    let (code, out, err) = notebridge(&lab, &state, &["--json", "verify"]).await;
    assert_eq!(code, 0, "{out}{err}");
    let pages = verified_pages(&out);
    for p in &notes.pages {
        let listed = pages[&p.id]["approximations"]
            .as_array()
            .unwrap()
            .iter()
            .any(|a| {
                a["element"]
                    .as_str()
                    .is_some_and(|e| e.starts_with("file "))
                    && a["action"]
                        .as_str()
                        .is_some_and(|x| x.starts_with("visible placeholder"))
            });
        assert!(listed, "{:?}: {}", p.title, pages[&p.id]);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn links_the_link_pass_cannot_rewrite_stay_text_and_verify_and_report_list_them() {
    // The first notebook's pages wait for the second's; as pages written by a notebridge that did
    // not record their links, the link pass reads them again from OneNote.
    let f = crate::migrate_links::FirstOnly::migrated(61).await;
    let (lab, state) = (&f.lab, &f.state);
    let db = Db::open(&state.db).unwrap();
    for (page, _) in &f.waiting {
        crate::migrate_links::forget_journal_between_runs(&db, page);
    }
    // Edited in OneNote since they were written: a table before everything else.
    let edited: Vec<String> = f.waiting.iter().map(|(p, _)| p.clone()).collect();
    let reads: Arc<Mutex<HashMap<String, u32>>> = Arc::default();
    let seen = reads.clone();
    let proxy = crate::graph_proxy::start(lab.graph.base_url(), move |path, _, _, body| {
        let Some(id) = edited
            .iter()
            .find(|id| path.contains(&format!("/pages/{id}/content")))
        else {
            return body;
        };
        *seen.lock().unwrap().entry(id.clone()).or_default() += 1;
        let text = String::from_utf8(body.to_vec()).unwrap();
        let Some(at) = text.find(BODY) else {
            return Bytes::from(text);
        };
        let at = at + text[at..].find('>').unwrap() + 1;
        let mut edited = text;
        edited.insert_str(at, "<table><tr><td>added in OneNote</td></tr></table>");
        Bytes::from(edited)
    })
    .await;
    let migrate = ["--json", "migrate", "--to", &lab.target_page];
    let mut cmd = migrate_support::command(lab, state, &migrate);
    let out = cmd
        .env(notebridge::settings::env::GRAPH_URL, &proxy)
        .run_to_end()
        .await;
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    let c = counts(&state.db, "default");
    assert_eq!(c["failed"], 0, "{c:?}");
    // Each waiting page was read again by the pass, once.
    let reads = reads.lock().unwrap().clone();
    assert_eq!(reads.len(), f.waiting.len(), "{reads:?}");
    assert!(reads.values().all(|n| *n == 1), "{reads:?}");

    let forward: Vec<_> = f.waiting.iter().map(|(p, _)| p).collect();
    let db = Db::open(&state.db).unwrap();
    for p in &forward {
        let item = db.notion_item("default", p).unwrap().unwrap();
        let report = item.report.clone().unwrap_or_default();
        assert!(
            report.contains("links to other pages")
                && report.contains("kept as text naming the OneNote page")
                && report.contains("where a table was written"),
            "{:?}: {report}",
            p
        );
        // The link is still the text the writer wrote, and the pass will not try again.
        let text =
            serde_json::to_string(&lab.notion.blocks_of(&item.into_page_id().unwrap())).unwrap();
        assert!(text.contains("(OneNote page {"), "{:?}: {text}", p);
    }
    assert!(db.pages_with_pending_links("default").unwrap().is_empty());

    let (code, out, err) = notebridge(lab, state, &["--json", "verify"]).await;
    assert_eq!(code, 0, "{out}{err}");
    let pages = verified_pages(&out);
    for p in &forward {
        let page = &pages[p.as_str()];
        let listed = page["approximations"]
            .as_array()
            .unwrap()
            .iter()
            .any(|a| a["element"] == "links to other pages");
        assert!(listed, "{:?}: {page}", p);
    }

    let html = state.db.with_file_name("report.html");
    let (code, out, err) =
        notebridge(lab, state, &["report", "--output", html.to_str().unwrap()]).await;
    assert_eq!(code, 0, "{out}{err}");
    let html = std::fs::read_to_string(html).unwrap();
    assert!(html.contains("links to other pages"), "{html}");
    assert!(html.contains("kept as text naming the OneNote page"));
}
