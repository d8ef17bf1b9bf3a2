//! Handwriting read from OneNote's own files (issue #49): a page's strokes arrive grouped into a
//! few drawings by the rule the API route uses (`ink::group`), each one upload, with the text
//! OneNote recognised once and in order. The file is real: `onenote.rs/pen/Schnelle Notizen.one`
//! (msiemens/onenote.rs `tests/samples/Schnelle Notizen.one`, MPL-2.0; see `SOURCES.md`), a page
//! of typed text with 35 strokes of pen and highlighter that OneNote for Windows recognised
//! ("Handwritin", "Marker", ...) without tying its words to the strokes.

use std::path::Path;

use notebridge::convert::{Block, ConvertedPage, MediaSource};
use notebridge::onefile;

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
        captions.iter().any(|c| c.starts_with("Highlighter drawing")),
        "the highlighter strokes are a drawing of their own: {captions:?}"
    );
    assert!(
        captions.iter().any(|c| c.starts_with("Handwritten drawing")),
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
