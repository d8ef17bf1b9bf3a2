//! For any input, conversion never panics, meets Notion's limits and keeps every visible
//! character; also the stress shapes of the issue and the real public samples.

use crate::convert_validate as validate;

use notebridge::convert::convert_page;
use proptest::prelude::*;

/// Converts and checks: valid blocks, every source character shown in order.
fn check(html: &str) -> Result<notebridge::convert::ConvertedPage, String> {
    let page = convert_page(html);
    let json = page.to_json();
    validate::blocks(&page.blocks)?;
    let mut shown = String::new();
    validate::shown_text(&json["blocks"], &mut shown);
    validate::text_survives(html, &shown)?;
    Ok(page)
}

fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-zA-Z0-9 ]{0,12}",
        "[ \t\r\n]{1,4}",
        "\\PC{0,8}",
        Just("&nbsp;&amp;&lt;x&gt;".to_string()),
        Just("\u{FFFC}".to_string()),
        Just("😀e\u{301}🇫🇷".to_string()),
        (1usize..3).prop_map(|n| "é".repeat(1990 * n)),
    ]
}

fn style() -> impl Strategy<Value = String> {
    prop::sample::select(vec![
        "",
        " style=\"font-weight:bold\"",
        " style=\"font-style:italic;text-decoration:underline line-through\"",
        " style=\"color:#1e4e79;background-color:yellow\"",
        " style=\"font-family:Consolas\"",
        " style=\"color:rgb(300,-1,2)\"",
        " style=\"position:absolute;left:10px;top:5px\"",
        " data-tag=\"to-do\"",
        " data-tag=\"to-do:completed,important\"",
        " data-tag=\"idea\"",
        " colspan=\"3\" rowspan=\"2\"",
        " style=\"list-style-type:lower-roman\"",
    ])
    .prop_map(str::to_string)
}

fn leaf() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => text(),
        1 => Just("<br />".to_string()),
        1 => Just("<img src=\"https://graph.microsoft.com/v1.0/users('me')/onenote/resources/0-a!1/$value\" alt=\"pic\" />".to_string()),
        1 => Just("<object data-attachment=\"a.pdf\" type=\"application/pdf\" data=\"https://graph.microsoft.com/v1.0/me/onenote/resources/x/$value\"></object>".to_string()),
        1 => Just("<iframe data-original-src=\"https://youtu.be/x\"></iframe>".to_string()),
        1 => Just("<math><mfrac><mi>a</mi><mn>2</mn></mfrac></math>".to_string()),
        1 => "[a-z]{1,5}".prop_map(|t| format!("<a href=\"onenote:#p&amp;page-id={{{t}}}&amp;end\">{t}</a>")),
        1 => "[a-z]{1,5}".prop_map(|t| format!("<a href=\"https://e.com/{t}\">{t}</a>")),
        1 => "[a-z]{1,5}".prop_map(|t| format!("<a href=\"bad url {t}\">{t}</a>")),
    ]
}

fn node() -> impl Strategy<Value = String> {
    leaf().prop_recursive(6, 80, 6, |inner| {
        let tag = prop::sample::select(vec![
            "p",
            "div",
            "span",
            "b",
            "i",
            "u",
            "s",
            "del",
            "strong",
            "em",
            "code",
            "pre",
            "h1",
            "h3",
            "h5",
            "ul",
            "ol",
            "li",
            "table",
            "tr",
            "td",
            "th",
            "sup",
            "sub",
            "cite",
            "blockquote",
            "a",
            "font",
            "unknowntag",
        ]);
        (tag, style(), prop::collection::vec(inner, 0..6))
            .prop_map(|(t, st, kids)| format!("<{t}{st}>{}</{t}>", kids.concat()))
    })
}

fn page() -> impl Strategy<Value = String> {
    prop::collection::vec(node(), 0..6).prop_map(|outlines| {
        let body: String = outlines
            .into_iter()
            .enumerate()
            .map(|(i, o)| {
                format!(
                    "<div style=\"position:absolute;left:{}px;top:{}px\">{o}</div>",
                    48 + (i % 2) * 300,
                    500 - i * 60
                )
            })
            .collect();
        format!("<html><head><title>T</title><meta name=\"created\" content=\"2024-01-01T00:00:00.0000000\" /></head><body>{body}</body></html>")
    })
}

/// Damage real markup: cut, duplicate or splice in stray markup at char boundaries.
fn mutated() -> impl Strategy<Value = String> {
    (
        page(),
        prop::collection::vec((any::<prop::sample::Index>(), 0usize..5), 1..5),
    )
        .prop_map(|(html, edits)| {
            let mut s = html;
            for (at, kind) in edits {
                let bounds: Vec<usize> =
                    s.char_indices().map(|(i, _)| i).chain([s.len()]).collect();
                let i = bounds[at.index(bounds.len())];
                let j = bounds[(at.index(bounds.len()) + 7).min(bounds.len() - 1)];
                let insert = ["<", "</p>", "<td>", "\"", "&am"];
                match kind {
                    0 => s.replace_range(i..j, ""),
                    1 => {
                        let dup = s[i..j].to_string();
                        s.insert_str(i, &dup)
                    }
                    k => s.insert_str(i, insert[k % insert.len()]),
                }
            }
            s
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 192, ..ProptestConfig::default() })]

    #[test]
    fn generated_pages_convert_validly(html in page()) {
        check(&html).map_err(|e| TestCaseError::fail(format!("{e}\n{html}")))?;
    }

    #[test]
    fn mutated_pages_convert_validly(html in mutated()) {
        check(&html).map_err(|e| TestCaseError::fail(format!("{e}\n{html}")))?;
    }

    #[test]
    fn arbitrary_text_converts_validly(html in "(\\PC|<|>|/|&|;|=|\")*") {
        check(&html).map_err(|e| TestCaseError::fail(format!("{e}\n{html}")))?;
    }
}

#[test]
fn long_text_and_many_runs_are_split_to_the_limits() {
    let long = "a😀".repeat(3000);
    let runs: String = (0..450)
        .map(|i| {
            if i % 2 == 0 {
                format!("<b>{i}</b>")
            } else {
                format!("<i>{i}</i>")
            }
        })
        .collect();
    let html =
        format!("<body><p>{long}</p><p>{runs}</p><table><tr><td>{runs}</td></tr></table></body>");
    let page = check(&html).unwrap();
    // 450 runs need five paragraphs of at most 100 objects.
    assert_eq!(page.blocks.len(), 1 + 5 + 1);
}

#[test]
fn long_urls_and_equations_stay_within_limits() {
    let url = format!("https://example.com/{}", "x".repeat(2100));
    let math: String = (0..600).map(|i| format!("<mi>v{i}</mi>")).collect();
    let html = format!("<body><p><a href=\"{url}\">link</a></p><img src=\"{url}\" /><p><math>{math}</math></p></body>");
    check(&html).unwrap();
}

#[test]
fn stress_shapes_convert() {
    // Lists nested 12 deep.
    let mut deep = "deepest".to_string();
    for i in 0..12 {
        deep = format!("<ul><li>level {i}{deep}</li></ul>");
    }
    let page = check(&format!("<body>{deep}</body>")).unwrap();
    let mut depth = 0;
    let mut b = &page.blocks[0];
    while let Some(c) = b.children().first() {
        b = c;
        depth += 1;
    }
    assert_eq!(depth, 11);
    // 3,000 paragraphs.
    let many: String = (0..3000).map(|i| format!("<p>para {i}</p>")).collect();
    assert_eq!(
        check(&format!("<body>{many}</body>")).unwrap().blocks.len(),
        3000
    );
    // Empty body, no body, nesting far beyond any real page.
    assert!(check("<html><body></body></html>")
        .unwrap()
        .blocks
        .is_empty());
    assert_eq!(check("").unwrap().title, "Untitled");
    let nested = "<div><span>".repeat(3000) + "core";
    let page = check(&nested).unwrap();
    assert!(!page.report.items.is_empty());
    let nested = "<ul><li><table><tr><td><blockquote><p><b>".repeat(400) + "core";
    check(&nested).unwrap();
}

#[test]
fn a_five_megabyte_page_converts() {
    let para = "<p style=\"margin-top:0pt\">Some <span style=\"font-weight:bold\">bold</span> text and a <a href=\"https://example.com\">link</a>.</p>\n";
    let body = para.repeat(5_000_000 / para.len() + 1);
    let html = format!("<html><body><div style=\"position:absolute;left:48px;top:115px\">{body}</div></body></html>");
    assert!(html.len() >= 5_000_000);
    let page = convert_page(&html);
    assert_eq!(page.blocks.len(), body.matches("<p ").count());
}

/// The public samples beside the clone (`../shared/fixtures/onenote-public`), when present.
#[test]
fn public_samples_convert_validly() {
    let Some(dir) = crate::public_samples::dir("public_samples_convert_validly") else {
        return;
    };
    let entries = std::fs::read_dir(&dir).unwrap();
    let mut files: Vec<_> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "html"))
        .collect();
    files.sort();
    assert!(!files.is_empty());
    for f in files {
        let html = String::from_utf8_lossy(&std::fs::read(&f).unwrap()).into_owned();
        check(&html).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
    }
}

/// Found by `mutated_pages_convert_validly`: a damaged outline (`<div <td>style=...>` is no
/// longer positioned) and text after the last outline. Unpositioned content is kept after the
/// outline before it, so each run is in order within itself, not with the others.
#[test]
fn content_between_outlines_stays_after_the_outline_before_it() {
    let html = "<html><head><title>T</title></head><body>\
        <div style=\"position:absolute;left:48px;top:500px\"><pre data-tag=\"to-do:completed,important\"></pre></div>\
        <div <td>style=\"position:absolute;left:348px;top:440px\"><iframe data-original-src=\"https://youtu.be/x\"></iframe></div>\
        <div style=\"position:absolute;left:48px;top:380px\"><cite style=\"position:absolute;left:10px;top:5px\"></cite></div>></div>\
        </body></html>";
    check(html).unwrap();
}
