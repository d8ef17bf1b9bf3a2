//! What the files route used to lose, on the real samples that hold it (`fixtures/onenote-files`,
//! else `../shared/onenote-files`; each test skips, saying so, without them): a bare URL, paragraphs
//! indented under another, and a file printout's pages with the text OneNote recognised in them.
//! The API route's markup for the same facts gives the same blocks, and the binary carries them
//! into Notion.

use notebridge::convert::{self, Block, ConvertedPage, MediaSource, RichKind};
use notebridge::onefile;
use notebridge_testkit::lab::Lab;
use serde_json::Value;

use crate::convert_validate as validate;
use crate::files_support::{body_kinds, fast, page_id, run, sample, uploads_of};
use crate::migrate_support::State;

const PRINTOUT: &str = "apache-tika/test-tika-3970-dupetext.one";

/// The section with a bare URL and indented paragraphs: its copy in `fixtures/` sits beside the
/// `onenote.rs/samples/` notebook (see `fixtures/onenote-files/README.md`), else the shared one.
fn urls_and_indents() -> Option<std::path::PathBuf> {
    let copy = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/onenote-files/onenote.rs/non-legacy/New Section 1 2.one");
    if copy.is_file() {
        return Some(copy);
    }
    sample("onenote.rs/samples/non-legacy/New Section 1 2.one")
}

/// The fullest page of a lone section file (the samples' other pages are empty), converted as
/// the queue converts it.
fn only_page(path: Option<std::path::PathBuf>) -> Option<ConvertedPage> {
    let path = path?;
    let rel = path.display().to_string();
    let imp = onefile::scan(&path).unwrap_or_else(|e| panic!("{rel}: {e}"));
    let s = &imp.sections[0];
    let parsed = onefile::open_section(&s.location).unwrap_or_else(|p| panic!("{rel}: {p:?}"));
    let mut pages: Vec<ConvertedPage> = s
        .pages
        .iter()
        .map(|p| parsed.convert(&p.id).unwrap())
        .collect();
    for p in &pages {
        validate::blocks(&p.blocks).unwrap_or_else(|e| panic!("{rel}: {e}"));
    }
    pages.sort_by_key(|p| std::cmp::Reverse(p.blocks.len()));
    assert!(
        pages.len() < 2 || pages[1].blocks.len() <= 1,
        "{rel}: one page with a body"
    );
    pages.into_iter().next()
}

fn text(b: &Block) -> String {
    b.rich_texts()
        .into_iter()
        .flatten()
        .map(|r| r.visible_text())
        .collect()
}

/// Every block at any depth, in order, with its depth.
fn all(blocks: &[Block]) -> Vec<(usize, &Block)> {
    let mut out = Vec::new();
    let mut stack: Vec<(usize, &Block)> = blocks.iter().rev().map(|b| (0, b)).collect();
    while let Some((d, b)) = stack.pop() {
        out.push((d, b));
        stack.extend(b.children().iter().rev().map(|c| (d + 1, c)));
    }
    out
}

fn links(b: &Block) -> Vec<(String, String)> {
    b.rich_texts()
        .into_iter()
        .flatten()
        .filter_map(|r| match &r.kind {
            RichKind::Text {
                content,
                link: Some(l),
            } => Some((content.clone(), l.clone())),
            _ => None,
        })
        .collect()
}

#[test]
fn a_bare_url_in_a_real_section_becomes_a_link_and_the_linked_word_keeps_its_own() {
    let Some(page) = only_page(urls_and_indents()) else {
        return;
    };
    let blocks = all(&page.blocks);
    let url = blocks
        .iter()
        .find(|(_, b)| text(b) == "http://example.com/")
        .expect("the bare URL's paragraph");
    assert_eq!(
        links(url.1),
        [(
            "http://example.com/".to_string(),
            "http://example.com/".to_string()
        )]
    );
    // The word OneNote linked keeps its own target, and nothing else on the page became a link.
    let linked: Vec<(String, String)> = blocks.iter().flat_map(|(_, b)| links(b)).collect();
    assert_eq!(
        linked,
        [
            ("magna".to_string(), "https://example.com".to_string()),
            (
                "http://example.com/".to_string(),
                "http://example.com/".to_string()
            )
        ]
    );
}

#[test]
fn paragraphs_indented_in_a_real_section_nest_under_the_one_above() {
    let Some(page) = only_page(urls_and_indents()) else {
        return;
    };
    // The styled paragraph holds the one indented under it, which holds the next level.
    let styled = page
        .blocks
        .iter()
        .find(|b| text(b).starts_with("Lorem ipsum dolor sit amet, consetetur sadipscing elitr, sed diam nonumy eirmod tempor invidunt ut labore et dolore magna"))
        .expect("the styled paragraph at the top level");
    assert_eq!(styled.type_name(), "paragraph");
    assert_eq!(styled.children().len(), 1, "{styled:#?}");
    let child = &styled.children()[0];
    assert_eq!(child.type_name(), "paragraph");
    assert!(text(child).starts_with("Lorem ipsum"), "{child:?}");
    assert_eq!(child.children().len(), 1);
    let grandchild = &child.children()[0];
    assert!(text(grandchild).starts_with("Lorem ipsum"));
    assert!(grandchild.children().is_empty());
    // Paragraphs indented under the heading stay beside it (a heading holds no children in
    // Notion); the lists keep their own nesting.
    let heading = page
        .blocks
        .iter()
        .position(|b| b.type_name() == "heading_1")
        .unwrap();
    assert!(page.blocks[heading].children().is_empty());
    assert!(page.blocks[heading + 1..]
        .iter()
        .take(4)
        .any(|b| b.type_name() == "to_do"));
    let depth = all(&page.blocks)
        .iter()
        .filter(|(_, b)| b.type_name() == "bulleted_list_item")
        .map(|(d, _)| *d)
        .collect::<Vec<_>>();
    assert_eq!(depth, [0, 1, 2]);
}

#[test]
fn each_printout_page_arrives_as_its_picture_with_its_recognised_text() {
    let Some(page) = only_page(sample(PRINTOUT)) else {
        return;
    };
    let images: Vec<&Block> = page
        .blocks
        .iter()
        .filter(|b| b.type_name() == "image")
        .collect();
    assert_eq!(images.len(), 8, "{:#?}", page.blocks);
    let mut names = Vec::new();
    for (i, img) in images.iter().enumerate() {
        let Block::Image {
            source: MediaSource::Embedded(f),
            caption,
        } = img
        else {
            panic!("{img:?}");
        };
        // The page's picture, not the whole document again.
        assert_eq!(f.mime, "image/png", "{}", f.name);
        assert!(f.bytes.starts_with(b"\x89PNG\r\n\x1a\n"), "{}", f.name);
        assert!(f.bytes.len() < 400_000, "{}: {}", f.name, f.bytes.len());
        let want = format!(
            "{{8B115CF1-4B6A-453D-B067-345A14CD563B}}.xps page {}.png",
            i + 1
        );
        assert_eq!(f.name, want);
        names.push(f.name.clone());
        let cap: String = caption.iter().map(|r| r.visible_text()).collect();
        assert!(
            cap.starts_with(&format!(
                "Printout of {{8B115CF1-4B6A-453D-B067-345A14CD563B}}.xps, page {}: ",
                i + 1
            )),
            "{cap}"
        );
        assert!(cap.len() > 1000, "the page's recognised text: {cap}");
    }
    names.dedup();
    assert_eq!(names.len(), 8, "one picture per page");
    // Each page's recognised text is there once, and nothing says a file was lost.
    let everything: String = all(&page.blocks)
        .iter()
        .map(|(_, b)| text(b) + "\n")
        .collect();
    for img in &images {
        let cap = text(img);
        let (_, recognised) = cap.split_once(": ").unwrap();
        assert_eq!(everything.matches(recognised).count(), 1, "{recognised}");
    }
    assert!(everything.contains("When I think of Heaven, deliver me in a black-winged bird"));
    assert!(everything.contains("Start turning the wool across the wire"));
    assert!(!everything.contains("not carried over"), "{everything}");
    assert!(page
        .report
        .items
        .iter()
        .any(|a| a.element == "file printout page" && a.count == 8));
}

/// The same facts as Graph's HTML writes them: a typed URL, paragraphs indented by a left margin.
#[test]
fn the_api_routes_markup_gives_the_same_links_and_nesting() {
    let html = "<html><head><title>T</title></head><body>\
        <div style=\"position:absolute;left:48px;top:120px\">\
        <p style=\"margin-top:0pt;margin-bottom:0pt\">Parent</p>\
        <p style=\"margin-left:36px;margin-top:0pt;margin-bottom:0pt\">Child http://example.com/</p>\
        <p style=\"margin-left:.75in\">Grandchild</p>\
        <p style=\"margin-left:27pt\"><span style=\"font-family:Consolas\">http://code.example/</span></p>\
        <p>Back</p>\
        <p><a href=\"https://target.example/\">https://shown.example/</a></p>\
        </div></body></html>";
    let page = convert::convert_page(html);
    validate::blocks(&page.blocks).unwrap();
    let top: Vec<String> = page.blocks.iter().map(text).collect();
    assert_eq!(top, ["Parent", "Back", "https://shown.example/"]);
    let parent = &page.blocks[0];
    let kids: Vec<String> = parent.children().iter().map(text).collect();
    assert_eq!(kids, ["Child http://example.com/", "http://code.example/"]);
    assert_eq!(
        links(&parent.children()[0]),
        [(
            "http://example.com/".to_string(),
            "http://example.com/".to_string()
        )]
    );
    assert_eq!(
        parent.children()[0]
            .children()
            .iter()
            .map(text)
            .collect::<Vec<_>>(),
        ["Grandchild"]
    );
    // Code stays as written; an existing link keeps its target.
    assert_eq!(parent.children()[1].type_name(), "code");
    assert!(links(&parent.children()[1]).is_empty());
    assert_eq!(
        links(&page.blocks[2]),
        [(
            "https://shown.example/".to_string(),
            "https://target.example/".to_string()
        )]
    );
}

/// Each positioned outline starts its own nesting: the first paragraph of a later outline, though
/// indented, is no child of the earlier outline's last block (OneNote indents within an outline),
/// nor is content outside any outline.
#[test]
fn an_indented_paragraph_never_nests_under_another_outlines_block() {
    let html = "<html><head><title>T</title></head><body>\
        <div style=\"position:absolute;left:48px;top:120px\">\
        <p>First</p>\
        <p style=\"margin-left:36px\">First's child</p>\
        </div>\
        <div style=\"position:absolute;left:48px;top:400px\">\
        <p style=\"margin-left:36px\">Second, indented</p>\
        <p style=\"margin-left:72px\">Second's child</p>\
        </div>\
        <p style=\"margin-left:36px\">Outside, indented</p>\
        </body></html>";
    let page = convert::convert_page(html);
    validate::blocks(&page.blocks).unwrap();
    let top: Vec<String> = page.blocks.iter().map(text).collect();
    assert_eq!(top, ["First", "Second, indented", "Outside, indented"]);
    let kids = |b: &Block| b.children().iter().map(text).collect::<Vec<_>>();
    assert_eq!(kids(&page.blocks[0]), ["First's child"]);
    assert!(page.blocks[0].children()[0].children().is_empty());
    assert_eq!(kids(&page.blocks[1]), ["Second's child"]);
}

/// The rich-text links of a Notion block as the test server holds it.
fn json_links(b: &Value) -> Vec<String> {
    let ty = b["type"].as_str().unwrap_or_default();
    b[ty]["rich_text"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|r| r["text"]["link"]["url"].as_str().map(str::to_string))
        .collect()
}

/// The binary, in an environment holding only what a files user has, carries the link, the
/// nesting and the printout pages into Notion.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_binary_carries_links_nesting_and_printout_pages_into_notion() {
    let (Some(urls), Some(printout)) = (urls_and_indents(), sample(PRINTOUT)) else {
        return;
    };
    let lab = Lab::start(fast()).await;
    let state = State::new();
    let target = lab.notion.add_shared_page("Import");
    for path in [&urls, &printout] {
        let (code, out, err) = run(
            &lab,
            &state,
            &["migrate", "--from", path.to_str().unwrap(), "--to", &target],
        )
        .await;
        assert_eq!(code, 0, "{path:?}\nstdout: {out}\nstderr: {err}");
    }
    // The section's fullest "Test Page" (its other one is empty).
    let section = page_id(&lab, &target, "New Section 1 2").unwrap();
    let test_page = lab
        .notion
        .pages_under(&section)
        .into_iter()
        .filter(|(_, t)| t == "Test Page")
        .map(|(id, _)| id)
        .max_by_key(|id| lab.notion.blocks_of(id).len())
        .unwrap();
    let blocks = lab.notion.blocks_of(&test_page);
    assert!(
        blocks
            .iter()
            .any(|b| json_links(b) == ["http://example.com/"]),
        "{blocks:#?}"
    );
    let dump = lab.notion.dump(&test_page).unwrap();
    let styled = dump
        .children
        .iter()
        .find(|n| n.text.contains("aliquyam erat") && n.text.starts_with("Lorem ipsum dolor sit amet, consetetur sadipscing elitr, sed diam nonumy eirmod tempor invidunt ut labore et dolore magna"))
        .expect("the styled paragraph");
    assert_eq!(styled.children.len(), 1, "{styled:#?}");
    assert_eq!(styled.children[0].children.len(), 1, "{styled:#?}");

    let elephant = page_id(&lab, &target, "This little elephant went to market").unwrap();
    let kinds = body_kinds(&lab, &elephant);
    assert_eq!(
        kinds.iter().filter(|k| *k == "image").count(),
        8,
        "{kinds:?}"
    );
    let uploads = uploads_of(&lab, &elephant);
    assert_eq!(uploads.len(), 8);
    for (i, u) in uploads.iter().enumerate() {
        assert_eq!(u.status, "uploaded");
        assert_eq!(
            u.filename.as_deref(),
            Some(
                format!(
                    "{{8B115CF1-4B6A-453D-B067-345A14CD563B}}.xps page {}.png",
                    i + 1
                )
                .as_str()
            )
        );
    }
    let captions: Vec<String> = lab
        .notion
        .blocks_of(&elephant)
        .iter()
        .filter(|b| b["type"] == "image")
        .map(|b| {
            b["image"]["caption"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|r| r["plain_text"].as_str().or(r["text"]["content"].as_str()))
                .collect()
        })
        .collect();
    assert!(
        captions[0].starts_with("Printout of {8B115CF1-4B6A-453D-B067-345A14CD563B}.xps, page 1: When I think of Heaven"),
        "{captions:?}"
    );
    assert_eq!(lab.graph.counters().total, 0);
}
