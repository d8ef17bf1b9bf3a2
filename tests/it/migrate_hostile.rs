//! Hostile pages in a real migration (issue 20): a page of 5,000 nested lists, one of 3,000
//! nested MathML rows, one with a `data:` image, two sibling pages of 60,000 paragraphs (6 MB each,
//! converted one at a time under the big-page permit) and one over the page size limit, among
//! ordinary pages. The process must not abort: the deep pages migrate flattened, the image is uploaded from
//! its bytes, the oversized page fails alone with its reason (not taken again by `--resume`, taken
//! again by `--retry-failed`), every ordinary page arrives, and the process's peak RSS stays low.

use crate::migrate_support;
use crate::peak_rss::run_measured;

use std::collections::HashMap;

use crate::bin_support::Start;
use axum::body::Bytes;
use axum::http::HeaderValue;
use migrate_support::{command, State};
use notebridge::store::Db;
use notebridge_testkit::generator::{clipping, generate, NotebookSpec};
use notebridge_testkit::lab::{Lab, LabConfig};

/// The bytes of a 1x1 PNG.
const PNG_B64: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP4z8DwHwAFAAIBoKK11gAAAABJRU5ErkJggg==";

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
        total_pages: Some(10),
        subpage_ratio: 0.0,
        images_per_page: 0,
        attachments_per_page: 0,
        resource_bytes: 512,
        seed: 20,
        ..NotebookSpec::default()
    }
}

/// A pass-through to the Graph test server that serves hostile HTML for some pages.
async fn start_proxy(upstream_base: &str, hostile: HashMap<String, Bytes>) -> String {
    crate::graph_proxy::start(upstream_base, move |path, status, headers, body| {
        let Some((_, html)) = hostile
            .iter()
            .find(|(id, _)| path.contains(&format!("/pages/{id}/content")))
            .filter(|_| status.is_success())
        else {
            return body;
        };
        headers.insert(
            "content-type",
            HeaderValue::from_static("text/html; charset=utf-8"),
        );
        html.clone()
    })
    .await
}

fn page(body: &str) -> Bytes {
    Bytes::from(format!(
        "<html><head><title>Hostile</title></head><body>{body}</body></html>"
    ))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_pages_are_migrated_or_failed_alone_and_ordinary_pages_arrive() {
    let lab = Lab::start(fast()).await;
    let notes = generate(&spec());
    let user = lab.add_user("mallory", notes.clone());
    let ids: Vec<String> = notes.pages.iter().map(|p| p.id.clone()).collect();
    let (lists, math, image, big, long, long2) =
        (&ids[1], &ids[3], &ids[5], &ids[7], &ids[8], &ids[9]);
    // The 6 MB page: 60,000 paragraphs.
    let paragraphs: String = (0..60_000)
        .map(|i| {
            format!(
                "<p>Paragraph {i:05} of a very long page, with text enough to be typical.</p>\n"
            )
        })
        .collect();
    let mut oversized = String::with_capacity(notebridge::convert::MAX_PAGE_BYTES + 100);
    while oversized.len() <= notebridge::convert::MAX_PAGE_BYTES {
        oversized.push_str("<p>A paragraph of a page far too big to migrate in one piece.</p>\n");
    }
    let hostile = HashMap::from([
        (
            lists.clone(),
            page(&format!(
                "{}deep{}",
                "<ul><li>x".repeat(5_000),
                "</li></ul>".repeat(5_000)
            )),
        ),
        (
            math.clone(),
            page(&format!(
                "<p><math>{}<mi>y</mi>{}</math></p>",
                "<mrow>".repeat(3_000),
                "</mrow>".repeat(3_000)
            )),
        ),
        (
            image.clone(),
            page(&format!(
                "<p>Pasted:</p><img alt=\"pixel\" src=\"data:image/png;base64,{PNG_B64}\" />"
            )),
        ),
        (big.clone(), page(&oversized)),
        (long.clone(), page(&paragraphs)),
        // Its next sibling is as big: fetched ahead while the first is written, it must wait
        // for the one big-page permit without holding its body (the peak below would double).
        (
            long2.clone(),
            page(&paragraphs.replace("Paragraph", "Line")),
        ),
    ]);
    drop(oversized);
    let proxy = start_proxy(lab.graph.base_url(), hostile).await;
    let state = State::new();
    lab.sign_in(&Db::open(&state.db).unwrap(), "mallory", &user);
    let run = |extra: &'static [&'static str]| {
        let mut args = vec![
            "--json",
            "migrate",
            "--account",
            "mallory",
            "--to",
            lab.target_page.as_str(),
        ];
        args.extend(extra);
        let mut c = command(&lab, &state, &args);
        c.env(notebridge::settings::env::GRAPH_URL, &proxy);
        c
    };
    let first = run(&[]);
    let (code, stdout, stderr, peak) = tokio::task::spawn_blocking(move || run_measured(&first))
        .await
        .unwrap();
    // Exit 4: finished, one item failed for good.
    assert_eq!(code, Some(4), "stdout: {stdout}\nstderr: {stderr}");
    let summary: serde_json::Value = serde_json::from_str(stdout.trim()).unwrap();
    assert_eq!(summary["failed"], 1, "{summary}");
    assert_eq!(summary["pages_done"], ids.len() - 1, "{summary}");
    eprintln!(
        "figures: peak RSS of the migration {:.1} MB",
        peak as f64 / 1e6
    );
    // The target for a 6 MB page is 250 MB for the whole process; measured 96 MB here (a
    // debug build, two 6 MB siblings in flight, the 65 MB page refused from its Content-Length; the
    // migrating process alone, see `peak_rss`). Figures before that probe (145 to 260 MB) also
    // counted this test process, which holds the hostile pages and other tests' work.
    assert!(peak < 250_000_000, "peak RSS {peak} bytes");

    let db = Db::open(&state.db).unwrap();
    for id in &ids {
        let item = db.notion_item("mallory", id).unwrap();
        if id == big {
            assert!(item.is_none_or(|i| !i.state.is_complete()));
        } else {
            let item = item.unwrap_or_else(|| panic!("page {id} migrated"));
            assert!(item.state.is_complete(), "page {id}");
        }
    }
    let failed = db.failed_jobs("mallory").unwrap();
    assert_eq!(failed.len(), 1);
    assert_eq!(&failed[0].item_id, big);
    assert!(
        failed[0].error.contains("over the limit of"),
        "{}",
        failed[0].error
    );
    for id in [long, long2] {
        let long_blocks = db.notion_item("mallory", id).unwrap().unwrap().blocks;
        assert!(
            long_blocks >= 60_000,
            "{long_blocks} blocks of the long page {id}"
        );
    }
    let report = |id: &str| {
        db.notion_item("mallory", id)
            .unwrap()
            .and_then(|i| i.report)
            .unwrap_or_default()
    };
    assert!(
        report(lists).contains("lists nested deeper than"),
        "{}",
        report(lists)
    );
    assert!(
        report(math).contains("nesting deeper than"),
        "{}",
        report(math)
    );
    assert!(
        report(image).contains("uploaded from its bytes"),
        "{}",
        report(image)
    );
    assert_eq!(summary["this_run"]["placeholders"], 0, "{summary}");
    // The pasted image is an upload of exactly its bytes.
    let root = lab.notion.dump(&lab.target_page).unwrap();
    let mut stack = vec![&root];
    let mut pixel = None;
    while let Some(n) = stack.pop() {
        if n.kind == "image" && n.text.contains("pixel") {
            pixel = n.file.clone();
        }
        stack.extend(n.children.iter());
    }
    let id = pixel
        .as_deref()
        .and_then(|f| f.strip_prefix("file_upload:"))
        .expect("the data: image was uploaded")
        .to_owned();
    let up = lab.notion.upload(&id).expect("upload known");
    use base64::Engine;
    let png = base64::engine::general_purpose::STANDARD
        .decode(PNG_B64)
        .unwrap();
    assert_eq!(
        up.hash.as_deref(),
        Some(notebridge_testkit::notion::uploads::content_hash(&png).as_str())
    );

    // `--resume` does not take the failed page again; `--retry-failed` does.
    let out = run(&["--resume"]).run_to_end().await;
    assert_eq!(out.status.code(), Some(4));
    let again: serde_json::Value =
        serde_json::from_str(String::from_utf8_lossy(&out.stdout).trim()).unwrap();
    assert_eq!(again["this_run"]["pages"], 0, "{again}");
    let out = run(&["--resume", "--retry-failed"]).run_to_end().await;
    assert_eq!(out.status.code(), Some(4));
    let retried: serde_json::Value =
        serde_json::from_str(String::from_utf8_lossy(&out.stdout).trim()).unwrap();
    // The page was fetched again (and refused again, still too big).
    assert!(
        retried["graph"]["requests"].as_u64() > again["graph"]["requests"].as_u64(),
        "{again}\n{retried}"
    );
    let failed = db.failed_jobs("mallory").unwrap();
    assert_eq!(failed.len(), 1);
    assert_eq!(&failed[0].item_id, big);
}

/// The 50 MB page, migrated whole with the process under 1 GB. Minutes in a debug build and
/// a gigabyte of memory on CI's 2 cores, so it runs by hand, in a release build:
/// `cargo test --release -p notebridge --test it -- --ignored migrate_hostile::a_50_mb`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a gigabyte and minutes: run by hand with --release --ignored"]
async fn a_50_mb_clipping_migrates_whole_with_the_process_under_1_gb() {
    let lab = Lab::start(fast()).await;
    let notes = generate(&NotebookSpec {
        total_pages: Some(4),
        ..spec()
    });
    let user = lab.add_user("mallory", notes.clone());
    let ids: Vec<String> = notes.pages.iter().map(|p| p.id.clone()).collect();
    let (clip, parts) = clipping(50_000_000);
    let clip = page(&clip);
    assert!(clip.len() > 50_000_000 && clip.len() <= notebridge::convert::MAX_PAGE_BYTES);
    let big = ids[1].clone();
    let proxy = start_proxy(lab.graph.base_url(), HashMap::from([(big.clone(), clip)])).await;
    let state = State::new();
    lab.sign_in(&Db::open(&state.db).unwrap(), "mallory", &user);
    let mut c = command(
        &lab,
        &state,
        &[
            "--json",
            "migrate",
            "--account",
            "mallory",
            "--to",
            lab.target_page.as_str(),
        ],
    );
    c.env(notebridge::settings::env::GRAPH_URL, &proxy);
    let (code, stdout, stderr, peak) = tokio::task::spawn_blocking(move || run_measured(&c))
        .await
        .unwrap();
    assert_eq!(code, Some(0), "stdout: {stdout}\nstderr: {stderr}");
    let summary: serde_json::Value = serde_json::from_str(stdout.trim()).unwrap();
    assert_eq!(summary["pages_done"], ids.len(), "{summary}");
    eprintln!(
        "figures: 50 MB page, peak RSS of the migration {:.1} MB, {} blocks",
        peak as f64 / 1e6,
        summary["this_run"]["blocks"]
    );
    // Every part of the clipping arrived: 19 blocks a part (a heading, 6 paragraphs, 4 list items
    // and their 4 nested items, a table and its 3 rows), 19,513 parts. Measured (release build, 2
    // cores): 370,810 blocks, peak RSS 856 MB, 471 s.
    assert!(
        summary["this_run"]["blocks"].as_u64().unwrap() >= 19 * parts,
        "{parts} parts: {summary}"
    );
    assert!(peak < 1_000_000_000, "peak RSS {peak} bytes");
}
