//! Handwriting read from OneNote's own files (issue #49): a page's strokes arrive grouped into a
//! few drawings by the rule the API route uses (`ink::group`), each one upload, with the text
//! OneNote recognised once and in order. The file is real: `onenote.rs/pen/Schnelle Notizen.one`
//! (msiemens/onenote.rs `tests/samples/Schnelle Notizen.one`, MPL-2.0; see `SOURCES.md`), a page
//! of typed text with 35 strokes of pen and highlighter that OneNote for Windows recognised
//! ("Handwritin", "Marker", ...) without tying its words to the strokes.

use std::collections::BTreeMap;
use std::path::Path;

use notebridge::convert::{Block, ConvertedPage, MediaSource};
use notebridge::onefile;
use notebridge_testkit::lab::Lab;
use notebridge_testkit::notion::Endpoint;

use crate::files_support::{fast, report_html, run, sample};
use crate::migrate_support::State;

fn pen_page() -> ConvertedPage {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/onenote-files/onenote.rs/pen/Schnelle Notizen.one");
    let imp = onefile::scan(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let section = onefile::open_section(&imp.sections[0].location).expect("readable");
    let pages = section.pages();
    assert_eq!(pages.len(), 1, "one page: {:?}", pages.len());
    section.convert(&pages[0].id).expect("the page converts")
}

/// Every block of the page, depth first, in order.
fn all_blocks(blocks: &[Block]) -> Vec<&Block> {
    let mut out = Vec::new();
    let mut stack: Vec<&Block> = blocks.iter().rev().collect();
    while let Some(b) = stack.pop() {
        out.push(b);
        stack.extend(b.children().iter().rev());
    }
    out
}

fn text_of(b: &Block) -> String {
    b.rich_texts()
        .into_iter()
        .flatten()
        .map(|r| r.visible_text())
        .collect()
}

#[test]
fn a_real_pen_page_arrives_as_a_few_drawings_with_its_recognised_text_once_and_in_order() {
    let page = pen_page();
    let blocks = all_blocks(&page.blocks);
    let drawings: Vec<(String, &MediaSource)> = blocks
        .iter()
        .filter_map(|b| match b {
            Block::Image { source, caption } => {
                let c: String = caption.iter().map(|r| r.visible_text()).collect();
                c.contains(" drawing, ").then_some((c, source))
            }
            _ => None,
        })
        .collect();
    let captions: Vec<&str> = drawings.iter().map(|(c, _)| c.as_str()).collect();
    // Each stroke was its own drawing before (35 images); grouped, the page's ink is a few.
    assert!(
        (2..=8).contains(&drawings.len()),
        "a few drawings, not one per stroke: {captions:?}"
    );
    let strokes: usize = captions
        .iter()
        .map(|c| {
            let n = c.split(", ").nth(1).unwrap().split(' ').next().unwrap();
            n.parse::<usize>().unwrap()
        })
        .sum();
    assert_eq!(strokes, 35, "every stroke drawn once: {captions:?}");
    assert!(
        captions
            .iter()
            .any(|c| c.starts_with("Highlighter drawing")),
        "the highlighter strokes are a drawing of their own: {captions:?}"
    );
    assert!(
        captions
            .iter()
            .any(|c| c.starts_with("Handwritten drawing")),
        "{captions:?}"
    );
    // Each drawing is one file, uploaded once.
    let svgs: Vec<&MediaSource> = drawings.iter().map(|(_, s)| *s).collect();
    for s in &svgs {
        assert!(
            matches!(s, MediaSource::Embedded(f) if f.mime == "image/svg+xml"),
            "{s:?}"
        );
    }
    let files = page
        .resources()
        .into_iter()
        .filter(|m| matches!(m, MediaSource::Embedded(f) if f.mime == "image/svg+xml"))
        .count();
    assert_eq!(files, drawings.len());

    // The recognised words, once, in the recogniser's order, searchable as text.
    let all: String = blocks
        .iter()
        .map(|b| text_of(b))
        .collect::<Vec<_>>()
        .join("\n");
    let words: Vec<&str> = all.split_whitespace().collect();
    let at = |w: &str| {
        let places: Vec<usize> = (0..words.len()).filter(|&i| words[i] == w).collect();
        assert_eq!(places.len(), 1, "{w} once: {all}");
        places[0]
    };
    assert!(at("Handwritin") < at("Marker"), "{all}");

    // The page's report counts each drawing once, as verify and report show it.
    let counted = page
        .report
        .items
        .iter()
        .find(|a| {
            a.element == "ink (handwriting, drawings)"
                && a.action == "drawn as one image per drawing"
        })
        .map(|a| a.count);
    assert_eq!(counted, Some(drawings.len()), "{:?}", page.report.items);
}

/// What a page costs in Notion requests, by endpoint, migrated on its own by the binary (a files
/// user: `NOTION_TOKEN` alone) into the Notion test server; then what `verify --json` and `report`
/// say of it.
async fn requests_for(rel: &str) -> Option<(BTreeMap<Endpoint, u64>, serde_json::Value, String)> {
    let path = sample(rel)?;
    let path = path.to_str().unwrap();
    let lab = Lab::start(fast()).await;
    let state = State::new();
    let target = lab.notion.add_shared_page("Import");
    let (code, out, err) = run(&lab, &state, &["migrate", "--from", path, "--to", &target]).await;
    assert_eq!(code, 0, "{rel}\nstdout: {out}\nstderr: {err}");
    let requests = lab.notion.counters().per_endpoint;
    let (code, out, err) = run(&lab, &state, &["--json", "verify", "--from", path]).await;
    assert_eq!(code, 0, "verify --from\n{out}\n{err}");
    let verified: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    Some((requests, verified, report_html(&lab, &state).await))
}

/// The approximations `verify --json` lists for the one page: `(element, action, count)`.
fn approximations(verified: &serde_json::Value) -> Vec<(String, String, u64)> {
    let pages: Vec<&serde_json::Value> = verified["accounts"][0]["sections"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|s| s["pages"].as_array().unwrap())
        .collect();
    assert_eq!(pages.len(), 1, "{verified}");
    pages[0]["approximations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            (
                a["element"].as_str().unwrap().to_string(),
                a["action"].as_str().unwrap().to_string(),
                a["count"].as_u64().unwrap(),
            )
        })
        .collect()
}

/// The figure `docs/PERFORMANCE.md` gives: the pen page costs its typed neighbour's requests plus
/// two per drawing (create the upload, send its bytes), not two per stroke.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pen_page_costs_two_requests_per_drawing_not_per_stroke() {
    let (Some((pen, verified, report)), Some((typed, _, _))) = (
        requests_for("onenote.rs/pen/Schnelle Notizen.one").await,
        requests_for("interop-testsuites/SUT/OneWithoutFileData.one").await,
    ) else {
        return;
    };
    // Its 6 drawings and the one picture the page also holds: each image one upload.
    let images = all_blocks(&pen_page().blocks)
        .iter()
        .filter(|b| matches!(b, Block::Image { .. }))
        .count() as u64;
    let n = |m: &BTreeMap<Endpoint, u64>, e: Endpoint| m.get(&e).copied().unwrap_or(0);
    assert_eq!(n(&pen, Endpoint::CreateUpload), images, "{pen:?}");
    assert_eq!(n(&pen, Endpoint::SendUpload), images, "{pen:?}");
    assert_eq!(n(&typed, Endpoint::CreateUpload), 0, "{typed:?}");
    let total = |m: &BTreeMap<Endpoint, u64>| m.values().sum::<u64>();
    let uploads = |m: &BTreeMap<Endpoint, u64>| {
        n(m, Endpoint::CreateUpload) + n(m, Endpoint::SendUpload) + n(m, Endpoint::CompleteUpload)
    };
    eprintln!(
        "pen page: {} requests ({} for {images} images' uploads) {pen:?}\ntyped page: {} requests {typed:?}",
        total(&pen),
        uploads(&pen),
        total(&typed)
    );
    // Apart from the uploads, the pen page costs what the typed one does.
    assert_eq!(
        total(&pen) - uploads(&pen),
        total(&typed),
        "{pen:?}\n{typed:?}"
    );

    // `verify` and `report` count each drawing once, and the words OneNote recognised with them.
    let approx = approximations(&verified);
    let count = |element: &str| {
        approx
            .iter()
            .filter(|(e, _, _)| e == element)
            .map(|(_, _, n)| n)
            .sum::<u64>()
    };
    assert_eq!(
        count("ink (handwriting, drawings)"),
        images - 1,
        "{approx:?}"
    );
    assert!(
        approx
            .iter()
            .any(|(e, a, _)| e.starts_with("handwriting recognition")
                && a.contains("kept as a paragraph")),
        "the recognised words no stroke names, kept once: {approx:?}"
    );
    assert!(
        report.contains("drawn as one image per drawing"),
        "report lists the drawings"
    );
}
