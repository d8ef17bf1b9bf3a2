//! The Graph test server's ink over real HTTP: without `includeInkML=true` ink pages carry one
//! `<!-- InkNode is not supported -->` per drawing; with it the answer is `multipart/mixed`, and the
//! client side (split, parse, group, render) finds exactly the drawings the generator drew, at the
//! generator's positions, each in reading order right after the outline it was drawn beside.

use std::sync::Arc;
use std::time::Duration;

use notebridge::ink::{drawings, split_multipart};
use notebridge_testkit::generator::{generate, page_html, NotebookSpec};
use notebridge_testkit::graph::ink::{outline_positions, page_ink};
use notebridge_testkit::graph::{GraphServer, GraphServerConfig};
use notebridge_testkit::{TestUser, TokenRegistry};

const ALICE: &str = "alice-0000-user-id";

#[tokio::test]
async fn include_inkml_round_trip_finds_every_generated_drawing_in_place() {
    let reg = Arc::new(TokenRegistry::default());
    reg.insert("tok-alice", ALICE, Duration::from_secs(3600));
    let mut cfg = GraphServerConfig::new(Arc::clone(&reg)).with_windows("10000/60s", "10000/60s");
    cfg.limits.user_concurrency = 50;
    cfg.limits.app_concurrency = 50;
    let srv = GraphServer::start(cfg).await;
    srv.add_user(TestUser::named("alice"));
    let spec = NotebookSpec {
        sections_per_container: 2,
        pages_per_section: 12,
        images_per_page: 0,
        ..NotebookSpec::default()
    };
    srv.load(ALICE, generate(&spec));
    let notes = srv.notes(ALICE);
    let http = reqwest::Client::new();
    let get = |rel: String| {
        let req = http
            .get(format!("{}{rel}", srv.base_url()))
            .bearer_auth("tok-alice");
        async move { req.send().await.expect("request") }
    };
    let (mut ink_pages, mut plain_pages, mut strokes, mut drawn, mut multi_drawing_pages) =
        (0, 0, 0, 0, 0);
    let mut highlighters = 0;
    for p in &notes.pages {
        let html = page_html(p, &notes.resources, srv.base_url(), ALICE);
        let truth = page_ink(p, &html);

        let plain = get(format!("/me/onenote/pages/{}/content", p.id)).await;
        assert_eq!(plain.headers()["content-type"], "text/html");
        let plain_html = plain.text().await.unwrap();
        let comments = plain_html
            .matches("<!-- InkNode is not supported -->")
            .count();
        assert_eq!(comments, truth.as_ref().map_or(0, |t| t.drawings.len()));

        let r = get(format!(
            "/me/onenote/pages/{}/content?includeInkML=true",
            p.id
        ))
        .await;
        assert_eq!(r.status(), 200);
        let ct = r.headers()["content-type"].to_str().unwrap().to_owned();
        assert!(ct.starts_with("multipart/mixed; boundary="), "{ct}");
        let body = r.bytes().await.unwrap();
        let parts = split_multipart(&ct, &body).unwrap();
        assert_eq!(parts.html, plain_html, "the HTML part is the plain answer");

        let Some(truth) = truth else {
            assert!(parts.inkml.is_none());
            plain_pages += 1;
            continue;
        };
        ink_pages += 1;
        let inkml = parts.inkml.expect("ink page has an InkML part");
        let got = drawings(&inkml).unwrap();
        assert_eq!(got.len(), truth.drawings.len(), "page {}", p.id);
        if got.len() > 1 {
            multi_drawing_pages += 1;
        }
        // Match each generated drawing to the parsed one at its place.
        let mut placed = Vec::new();
        for t in &truth.drawings {
            let d = got
                .iter()
                .find(|d| (d.left - t.left).abs() < 0.01 && (d.top - t.top).abs() < 0.01)
                .unwrap_or_else(|| panic!("no drawing at {},{} on page {}", t.left, t.top, p.id));
            assert_eq!(d.strokes, t.strokes);
            assert_eq!(d.highlighter, t.highlighter);
            assert!((d.width - (t.right - t.left)).abs() < 0.02);
            assert!((d.height - (t.bottom - t.top)).abs() < 0.02);
            assert!(d
                .svg
                .starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
            assert_eq!(d.svg.matches("<path ").count(), t.strokes);
            strokes += d.strokes;
            drawn += 1;
            highlighters += usize::from(d.highlighter);
            placed.push((d.top, t.outline));
        }
        // Placement: among the outlines sorted by top, each drawing comes right after its outline.
        let mut items: Vec<(f64, String)> = outline_positions(&parts.html)
            .into_iter()
            .map(|(l, t)| (t, format!("outline {l},{t}")))
            .collect();
        for (top, (l, t)) in placed {
            items.push((top, format!("ink after {l},{t}")));
        }
        items.sort_by(|a, b| a.0.partial_cmp(&b.0).unwrap());
        for (i, (_, what)) in items.iter().enumerate() {
            if let Some(o) = what.strip_prefix("ink after ") {
                assert_eq!(items[i - 1].1, format!("outline {o}"), "page {}", p.id);
            }
        }
        // The drawings come back in reading order (top, then left).
        assert!(got
            .windows(2)
            .all(|w| (w[0].top, w[0].left) <= (w[1].top, w[1].left)));
    }
    // The generator's share of ink pages (about a third) and shapes are all exercised.
    assert!(
        ink_pages >= 3 && plain_pages >= 3,
        "{ink_pages} ink / {plain_pages} plain"
    );
    assert!(multi_drawing_pages >= 1 && highlighters >= 1);
    eprintln!(
        "ink pages {ink_pages}, plain {plain_pages}, drawings {drawn}, strokes {strokes}, highlighter drawings {highlighters}"
    );
    srv.shutdown();
}
