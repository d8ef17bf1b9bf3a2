//! The losses of issue 32, one fixture (`26-` to `31-`) and assertions each, and a property where
//! one fits: code separated by a blank line or text stays separate, headings keep the author's
//! weight, table and row backgrounds, placeholders that name what is missing, a report of every
//! merge and drop, blank lines and line breaks as OneNote shows them.

use crate::convert_validate as validate;

use notebridge::convert::css::{background_color, Rgb};
use notebridge::convert::{convert_page, Block, Color, ConvertedPage, Hue, RichText};
use proptest::prelude::*;

fn fixture(name: &str) -> String {
    let path = format!("{}/fixtures/{name}.html", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).expect("fixture readable")
}

/// Converts and checks the blocks with the Notion test server's validator.
fn convert_checked(html: &str) -> Result<ConvertedPage, String> {
    let page = convert_page(html);
    validate::blocks(&page.blocks)?;
    Ok(page)
}

/// Converts a fixture, checks it (validator, every visible character kept) and snapshots it.
fn snapshot(name: &str) -> ConvertedPage {
    let html = fixture(name);
    let page = convert_checked(&html).unwrap_or_else(|e| panic!("{name}: {e}"));
    let json = page.to_json();
    let mut shown = String::new();
    validate::shown_text(&json["blocks"], &mut shown);
    validate::text_survives(&html, &shown).unwrap_or_else(|e| panic!("{name}: {e}"));
    insta::assert_json_snapshot!(name, json);
    page
}

fn runs_text(runs: &[RichText]) -> String {
    runs.iter().map(RichText::visible_text).collect()
}

fn text_of(b: &Block) -> String {
    b.rich_texts().iter().map(|r| runs_text(r)).collect()
}

fn codes(page: &ConvertedPage) -> Vec<String> {
    page.blocks
        .iter()
        .filter(|b| matches!(b, Block::Code { .. }))
        .map(text_of)
        .collect()
}

fn report_count(page: &ConvertedPage, element: &str, action: &str) -> usize {
    page.report
        .items
        .iter()
        .filter(|a| a.element == element && a.action.starts_with(action))
        .map(|a| a.count)
        .sum()
}

fn is_blank(b: &Block) -> bool {
    matches!(b, Block::Paragraph(t) if t.rich_text.is_empty() && t.children.is_empty())
}

// 1. Separate code stays separate.

#[test]
fn code_separated_by_a_blank_line_or_text_is_two_blocks() {
    let page = snapshot("26-code-separated");
    assert_eq!(
        codes(&page),
        vec![
            "let a = 1;",
            "let b = 2;",
            "SELECT 1;",
            "SELECT  2;",
            "x = [\n    1,\n]",
            "y = x",
            "if ok:\n\n    run()",
        ]
    );
    // The blank line between the first two is kept as the author's blank line.
    let first = page
        .blocks
        .iter()
        .position(|b| text_of(b) == "let a = 1;")
        .unwrap();
    assert!(is_blank(&page.blocks[first + 1]));
    assert_eq!(
        report_count(&page, "monospace paragraph right after another", "joined"),
        3
    );
    assert_eq!(
        report_count(&page, "empty monospace line between code lines", "kept"),
        1
    );
}

// 2. A heading keeps the author's formatting.

#[test]
fn headings_keep_the_authors_weight_and_a_demoted_heading_stays_bold() {
    let page = snapshot("27-headings-author-formatting");
    let Block::Heading { level: 4, text } = &page.blocks[0] else {
        panic!("a heading_4 first: {:?}", page.blocks[0]);
    };
    let bold: Vec<(String, bool)> = text
        .rich_text
        .iter()
        .map(|r| (r.visible_text(), r.annotations.bold))
        .collect();
    assert_eq!(
        bold,
        vec![
            ("Plain ".to_string(), false),
            ("bold part".to_string(), true),
            (" plain".to_string(), false)
        ]
    );
    let Block::Heading { level: 4, text } = &page.blocks[1] else {
        panic!("a heading_4 second");
    };
    assert!(text
        .rich_text
        .iter()
        .all(|r| r.annotations.italic && !r.annotations.bold));
    // A tag made the h6 a to-do and the h2 a callout: the emphasis stays with the text.
    let Block::ToDo { text, .. } = &page.blocks[2] else {
        panic!("a to-do third");
    };
    assert!(text.rich_text.iter().all(|r| r.annotations.bold));
    let Block::Callout { text, .. } = &page.blocks[3] else {
        panic!("a callout fourth");
    };
    assert!(text.rich_text.iter().all(|r| r.annotations.bold));
    let Some(Block::Table { rows, .. }) = page.blocks.get(4) else {
        panic!("a table fifth");
    };
    let cell = &rows[0][0];
    assert!(cell
        .iter()
        .filter(|r| r.visible_text().contains("Heading"))
        .all(|r| r.annotations.bold));
    assert!(cell
        .iter()
        .filter(|r| r.visible_text().contains("cell text"))
        .all(|r| !r.annotations.bold));
    // What was mapped is still said.
    // OneNote's fourth level is Notion's own (heading_4): nothing to say; five and six are said.
    assert_eq!(report_count(&page, "<h4>", "heading"), 0);
    assert_eq!(report_count(&page, "<h5>", "heading_4"), 1);
    assert_eq!(report_count(&page, "<h6>", "heading_4"), 1);
    assert_eq!(
        report_count(&page, "data-tag on a heading", "to_do, its text bold"),
        1
    );
    assert_eq!(
        report_count(&page, "heading_4 in a table cell", "kept as bold text"),
        1
    );
}

// 3. Table and row backgrounds.

#[test]
fn table_row_and_group_backgrounds_reach_each_cell_they_cover() {
    let page = snapshot("28-table-row-backgrounds");
    let tables: Vec<&Vec<Vec<Vec<RichText>>>> = page
        .blocks
        .iter()
        .filter_map(|b| match b {
            Block::Table { rows, .. } => Some(rows),
            _ => None,
        })
        .collect();
    let colour = |t: usize, r: usize, c: usize| {
        let cell = &tables[t][r][c];
        assert!(!cell.is_empty(), "cell {t}/{r}/{c} has text");
        let first = cell[0].annotations.color;
        assert!(cell.iter().all(|x| x.annotations.color == first));
        first
    };
    let bg = |hex: u32| {
        background_color(Rgb(
            (hex >> 16) as u8,
            (hex >> 8 & 0xff) as u8,
            (hex & 0xff) as u8,
        ))
    };
    assert_eq!(colour(0, 0, 0), Color::Background(Hue::Red));
    assert_eq!(colour(0, 0, 1), Color::Background(Hue::Red));
    assert_eq!(colour(0, 1, 0), Color::Background(Hue::Green));
    // The cell's own background wins over its row's.
    assert_eq!(colour(0, 1, 1), Color::Background(Hue::Blue));
    // No row colour: the table's.
    assert_eq!(colour(0, 2, 0), bg(0xFFF2CC));
    assert!(tables[0][2][1].is_empty());
    // A row group's colour over the table's; the table's where no group has one.
    assert_eq!(colour(1, 0, 0), bg(0xF4B083));
    assert_eq!(colour(1, 1, 0), Color::Background(Hue::Gray));
    assert_eq!(report_count(&page, "table cell background", "nearest"), 7);
    assert_eq!(
        report_count(&page, "table cell background on an empty cell", "not kept"),
        1
    );
    // The table's colour is the cells' to carry, not reported a second time as text colour.
    assert_eq!(report_count(&page, "CSS background-color", ""), 0);
}

// 4. A placeholder names what is missing.

#[test]
fn placeholders_name_the_image_or_file_by_alt_text_file_name_or_position() {
    let page = snapshot("29-placeholders-named");
    let texts: Vec<String> = page.blocks.iter().map(text_of).collect();
    let has = |want: &str| {
        assert!(
            texts.iter().any(|t| t == want),
            "no {want:?} among {texts:#?}"
        )
    };
    has("🖼️ Image 2 of 4 (not carried over: no source)");
    has("🖼️ whiteboard.jpg (image 3 of 4, not carried over: no usable source URL)");
    has("🖼️ Sketch of the plan (image 4 of 4, not carried over: no usable source URL)");
    has("📎 File 1 of 2 (not carried over: no source)");
    has("📎 minutes.docx (file 2 of 2, not carried over: no usable source URL)");
    // The report says what the placeholder was written with.
    let actions: Vec<&str> = page
        .report
        .items
        .iter()
        .filter(|a| a.action.starts_with("visible placeholder"))
        .map(|a| a.action.as_str())
        .collect();
    assert_eq!(
        actions,
        vec![
            "visible placeholder naming its position (no alt text)",
            "visible placeholder naming its file name and position",
            "visible placeholder naming its alt text and position",
            "visible placeholder naming its position (no file name)",
            "visible placeholder naming the file and its position",
        ]
    );
}

#[test]
fn sources_and_links_starting_with_any_text_convert_and_are_named() {
    // The scheme checks once sliced these at a fixed byte, inside a character: the page panicked.
    let html = "<html><body><img src=\"日本語の写真.png\" /><img src=\"dataé:x\" />\
                <object data-attachment=\"ñ.txt\" data=\"aaaaaaañ\" />\
                <p><a href=\"aaaaaaañ\">odd link</a> <a href=\"onenoté:x\">other</a></p></body></html>";
    let page = convert_checked(html).unwrap();
    let texts: Vec<String> = page.blocks.iter().map(text_of).collect();
    assert!(texts[0].starts_with("🖼️ 日本語の写真.png (image 1 of 2, not carried over"));
    assert!(texts[1].starts_with("🖼️ Image 2 of 2 (not carried over"));
    assert!(texts[2].starts_with("📎 ñ.txt (file 1 of 1, not carried over"));
    assert!(texts[3].contains("odd link (aaaaaaañ)"), "{}", texts[3]);
}

// 5. The report tells every merge and drop.

#[test]
fn merges_and_drops_are_in_the_report_with_counts() {
    let page = snapshot("30-merges-and-drops");
    let want = [
        ("monospace paragraph right after another", 2),
        ("text colour on a background colour", 1),
        ("bulleted_list_item in a table cell", 1),
        ("divider in a table cell", 1),
        ("blank line between list items", 1),
        ("background colour inside another background colour", 1),
    ];
    for (element, n) in want {
        assert_eq!(report_count(&page, element, ""), n, "{element}");
    }
}

#[test]
fn a_block_continued_past_notions_run_limit_is_reported() {
    let runs: String = (0..150)
        .map(|i| {
            if i % 2 == 0 {
                format!("<b>b{i}</b>")
            } else {
                format!("<i>i{i}</i>")
            }
        })
        .collect();
    let page = convert_checked(&format!("<html><body><p>{runs}</p></body></html>")).unwrap();
    assert_eq!(page.blocks.len(), 2);
    assert_eq!(
        report_count(&page, "paragraph with more than 100 text runs", "continued"),
        1
    );
}

// 6. Line breaks.

#[test]
fn blank_lines_are_kept_and_edge_breaks_leave_no_newline() {
    let page = snapshot("31-blank-lines");
    let shape: Vec<String> = page
        .blocks
        .iter()
        .map(|b| match b {
            b if is_blank(b) => "_".to_string(),
            Block::Equation { .. } => "=".to_string(),
            b => text_of(b),
        })
        .collect();
    assert_eq!(
        shape,
        vec![
            "Before two blank lines",
            "_",
            "_",
            "After two blank lines",
            "_",
            "A break at the start",
            "A break at the end",
            "Two breaks at the end",
            "_",
            "Equation:",
            "=",
            "_",
            "_",
            "Three lines in one\nparagraph\nstay in it",
        ]
    );
}

fn word() -> impl Strategy<Value = String> {
    "[a-z]{1,8}"
}

/// What separates two groups of code lines.
fn separator() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec![
        "<br />",
        "<p>   </p>",
        "<p>text</p>",
        "<p><span style=\"font-family:Calibri\">back to text</span></p>",
        "<br /><br />",
        "plain loose text",
    ])
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// 1. Groups of code lines with a blank line or text between them are one code block each,
    ///    their lines as written.
    #[test]
    fn prop_code_separated_by_text_or_a_blank_line_never_merges(
        groups in prop::collection::vec(prop::collection::vec("[a-z=;(){} ]{1,12}", 1..4), 1..5),
        seps in prop::collection::vec(separator(), 4),
    ) {
        let mut body = String::new();
        for (i, g) in groups.iter().enumerate() {
            if i > 0 {
                body.push_str(seps[i - 1]);
            }
            for line in g {
                body.push_str(&format!(
                    "<p style=\"font-family:Consolas\">{}</p>",
                    line.replace(' ', "&nbsp;")
                ));
            }
        }
        let page = convert_checked(&format!("<html><body>{body}</body></html>"))
            .map_err(TestCaseError::fail)?;
        let want: Vec<String> = groups.iter().map(|g| g.join("\n")).collect();
        prop_assert_eq!(codes(&page), want);
    }

    /// 3. A row's or table's background reaches every cell of it, counted once per cell.
    #[test]
    fn prop_row_and_table_backgrounds_reach_every_cell(
        rgb in (0u8..=255, 0u8..=255, 0u8..=255),
        on_row in any::<bool>(),
        cells in prop::collection::vec(word(), 1..5),
    ) {
        let (r, g, b) = rgb;
        let colour = format!("background-color:#{r:02x}{g:02x}{b:02x}");
        let tds: String = cells.iter().map(|c| format!("<td>{c}</td>")).collect();
        let html = if on_row {
            format!("<html><body><table><tr style=\"{colour}\">{tds}</tr></table></body></html>")
        } else {
            format!("<html><body><table style=\"{colour}\"><tr>{tds}</tr></table></body></html>")
        };
        let page = convert_checked(&html).map_err(TestCaseError::fail)?;
        let Some(Block::Table { rows, .. }) = page.blocks.first() else {
            return Err(TestCaseError::fail("no table"));
        };
        let want = background_color(Rgb(r, g, b));
        for cell in &rows[0] {
            prop_assert!(cell.iter().all(|t| t.annotations.color == want));
        }
        let counted = report_count(&page, "table cell background", "")
            + report_count(&page, "table cell background (white)", "");
        prop_assert_eq!(counted, cells.len());
    }

    /// 4. Every image without a usable source is named by its alt text or its position.
    #[test]
    fn prop_placeholders_say_which_image(alts in prop::collection::vec(prop::option::of(word()), 1..6)) {
        let imgs: String = alts
            .iter()
            .map(|a| match a {
                Some(a) => format!("<img alt=\"{a}\" />"),
                None => "<img />".to_string(),
            })
            .collect();
        let page = convert_checked(&format!("<html><body>{imgs}</body></html>"))
            .map_err(TestCaseError::fail)?;
        let texts: Vec<String> = page.blocks.iter().map(text_of).collect();
        prop_assert_eq!(texts.len(), alts.len());
        let n = alts.len();
        for (i, (t, a)) in texts.iter().zip(&alts).enumerate() {
            let at = format!("{} of {n}", i + 1);
            match a {
                Some(a) => prop_assert!(t.starts_with(&format!("🖼️ {a} (image {at},")), "{}", t),
                None => prop_assert!(t.starts_with(&format!("🖼️ Image {at} (")), "{}", t),
            }
        }
    }

    /// 6. No paragraph's text begins or ends with a newline from a `<br>`, and the blank lines
    ///    between paragraphs are the ones a browser shows: one per leading break, one per trailing
    ///    break but the last, one per `<br />` between paragraphs.
    #[test]
    fn prop_breaks_leave_no_stray_newline_and_blank_lines_are_kept(
        paras in prop::collection::vec((0usize..3, prop::collection::vec(word(), 1..3), 0usize..3, 0usize..3), 1..6),
    ) {
        let mut body = String::new();
        let mut want: Vec<Option<String>> = Vec::new();
        for (lead, words, trail, between) in &paras {
            body.push_str(&format!(
                "<p>{}{}{}</p>{}",
                "<br />".repeat(*lead),
                words.join("<br />"),
                "<br />".repeat(*trail),
                "<br />".repeat(*between)
            ));
            want.extend(std::iter::repeat_n(None, *lead));
            want.push(Some(words.join("\n")));
            want.extend(std::iter::repeat_n(None, trail.saturating_sub(1) + between));
        }
        // Blank lines at the very start or end of the page show nothing.
        let first = want.iter().position(Option::is_some).unwrap_or(0);
        let last = want.iter().rposition(Option::is_some).map_or(0, |i| i + 1);
        let want = want[first..last].to_vec();
        let page = convert_checked(&format!("<html><body>{body}</body></html>"))
            .map_err(TestCaseError::fail)?;
        let got: Vec<Option<String>> = page
            .blocks
            .iter()
            .map(|b| (!is_blank(b)).then(|| text_of(b)))
            .collect();
        for t in got.iter().flatten() {
            prop_assert!(!t.starts_with('\n') && !t.ends_with('\n'), "{:?}", t);
        }
        prop_assert_eq!(got, want);
    }
}
