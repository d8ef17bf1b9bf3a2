//! Pages built to break a converter (issue 20): deep nesting, huge attributes, broken entities,
//! invalid UTF-8, truncated documents. The converter, the MathML and InkML readers and the
//! multipart splitter must not panic or overflow the stack (2 MB, what a tokio worker has), and
//! what they produce must be blocks Notion takes. Deep cases run on an explicit 2 MB thread: a
//! stack overflow aborts the whole test binary, so it must never be left to chance.

use crate::convert_validate as validate;

use notebridge::convert::{convert_page, convert_page_with, ConvertOptions, ConvertedPage};
use notebridge::ink::{self, multipart::split_multipart};
use notebridge::notion::split;
use proptest::prelude::*;

const WORKER_STACK: usize = 2 * 1024 * 1024;

/// Runs `f` on a thread with a tokio worker's stack.
fn on_worker_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::Builder::new()
        .stack_size(WORKER_STACK)
        .spawn(f)
        .unwrap()
        .join()
        .unwrap()
}

fn checked(page: &ConvertedPage) -> Result<(), String> {
    validate::blocks(&page.blocks)?;
    for b in page.blocks_json().as_array().unwrap() {
        let d = split::depth(b);
        if d > 40 {
            return Err(format!("a block nested {d} levels deep"));
        }
    }
    Ok(())
}

fn nested(open: &str, inner: &str, close: &str, n: usize) -> String {
    format!(
        "<html><body>{}{inner}{}</body></html>",
        open.repeat(n),
        close.repeat(n)
    )
}

fn shown(page: &ConvertedPage) -> String {
    let mut s = String::new();
    validate::shown_text(&page.blocks_json(), &mut s);
    s
}

#[test]
fn twenty_thousand_nested_lists_are_flattened_in_order() {
    let page = on_worker_stack(|| convert_page(&nested("<ul><li>x", "", "</li></ul>", 20_000)));
    checked(&page).unwrap();
    // Every item's text is kept, in order.
    assert_eq!(shown(&page).matches('x').count(), 20_000);
    assert!(page
        .report
        .items
        .iter()
        .any(|a| a.element.starts_with("lists nested deeper than")));
}

#[test]
fn deep_elements_of_every_kind_convert_on_a_worker_stack() {
    let cases = [
        ("<div>a", "", "</div>"),
        ("<span style=\"font-weight:bold\">a", "", "</span>"),
        ("<blockquote>a", "", "</blockquote>"),
        ("<ol><li><p>a</p>", "", "</li></ol>"),
        ("<table><tr><td>a", "", "</td></tr></table>"),
        ("<a href=\"https://e.com\">a", "", "</a>"),
        ("<p><b><i>a", "", "</i></b></p>"),
        // Self-closed iframes, closed by the pass before parsing, each followed by its text.
        ("<iframe src=\"https://e.com\"/>a", "", ""),
    ];
    for (open, inner, close) in cases {
        // 5,000 levels: far past every limit (html5ever's parse of deep nesting is quadratic).
        let html = nested(open, inner, close, 5_000);
        let page = on_worker_stack(move || convert_page(&html));
        checked(&page).unwrap_or_else(|e| panic!("{open}: {e}"));
        assert!(shown(&page).contains('a'), "{open}: text kept");
    }
}

#[test]
fn deep_mathml_is_kept_as_text_on_a_worker_stack() {
    for n in [3_000, 20_000] {
        let html = format!(
            "<html><body><p><math>{}<mi>x</mi>{}</math></p></body></html>",
            "<mrow><mfrac><mrow>".repeat(n / 3),
            "</mrow><mn>2</mn></mfrac></mrow>".repeat(n / 3)
        );
        let page = on_worker_stack(move || convert_page(&html));
        checked(&page).unwrap();
        assert!(page
            .report
            .items
            .iter()
            .any(|a| a.element.contains("nesting deeper than")));
        let m = format!(
            "<math>{}<mi>y</mi>{}</math>",
            "<mrow>".repeat(n),
            "</mrow>".repeat(n)
        );
        let r = on_worker_stack(move || notebridge::mathml::convert(&m)).unwrap();
        assert!(r.latex.contains('y'));
    }
}

#[test]
fn deep_and_cyclic_inkml_is_read_or_refused_on_a_worker_stack() {
    let trace = "<trace>0 0, 10 10, 20 5</trace>";
    let deep = format!(
        "<ink xmlns=\"http://www.w3.org/2003/InkML\">{}{trace}{}</ink>",
        "<traceGroup>".repeat(20_000),
        "</traceGroup>".repeat(20_000)
    );
    let d = on_worker_stack(move || ink::for_page(Some(&deep)));
    match &d.ink {
        notebridge::convert::Ink::Unreadable(why) => {
            assert!(why.contains("nested deeper"), "{why}")
        }
        other => panic!("{other:?}"),
    }
    // Trace groups as deep as real ink could ever be are read (the walk is iterative).
    let ok = format!(
        "<ink xmlns=\"http://www.w3.org/2003/InkML\">{}{trace}{}</ink>",
        "<traceGroup>".repeat(200),
        "</traceGroup>".repeat(200)
    );
    let d = on_worker_stack(move || ink::for_page(Some(&ok)));
    match &d.ink {
        notebridge::convert::Ink::Drawings(v) => assert_eq!(v.len(), 1),
        other => panic!("{other:?}"),
    }
    let cyclic = format!(
        "<ink xmlns=\"http://www.w3.org/2003/InkML\"><definitions>\
         <context xml:id=\"a\" contextRef=\"#b\"/><context xml:id=\"b\" contextRef=\"#a\"/>\
         <brush xml:id=\"p\" brushRef=\"#q\"/><brush xml:id=\"q\" brushRef=\"#p\"/></definitions>\
         <traceGroup contextRef=\"#a\">{trace}</traceGroup><trace brushRef=\"#p\">1 1, 2 2</trace></ink>"
    );
    let d = on_worker_stack(move || ink::for_page(Some(&cyclic)));
    match &d.ink {
        notebridge::convert::Ink::Unreadable(why) => assert!(why.contains("chain"), "{why}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn request_splitting_counts_deep_trees_without_recursion() {
    // Built and dropped here on a big stack: serde_json's own drop recurses.
    let n = 2_000;
    let r = std::thread::Builder::new()
        .stack_size(256 * 1024 * 1024)
        .spawn(move || {
            let mut v = serde_json::json!({"type": "paragraph", "paragraph": {"rich_text": []}});
            // `json!` would serialise `v` afresh at each level (quadratic: seconds of CPU in the
            // debug build); moving it in builds the same tree in linear time.
            for _ in 0..n {
                let mut item = serde_json::json!({"type": "bulleted_list_item",
                    "bulleted_list_item": {"rich_text": [], "children": []}});
                item["bulleted_list_item"]["children"] = serde_json::Value::Array(vec![v]);
                v = item;
            }
            let counts = on_worker_stack_ref(&v);
            drop(v);
            counts
        })
        .unwrap()
        .join()
        .unwrap();
    assert_eq!(r, (n + 1, n + 1));
}

/// `split`'s walks of `v` on a thread with a worker's stack (the tree stays with the caller).
fn on_worker_stack_ref(v: &serde_json::Value) -> (usize, usize) {
    std::thread::scope(|s| {
        std::thread::Builder::new()
            .stack_size(WORKER_STACK)
            .spawn_scoped(s, || (split::element_count(v), split::depth(v)))
            .unwrap()
            .join()
            .unwrap()
    })
}

#[test]
fn a_page_over_the_size_limit_is_refused_by_convert() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.html");
    let mut f = std::fs::File::create(&path).unwrap();
    let para = "<p>0123456789012345678901234567890123456789012345678901234567890123456789</p>\n";
    let mut written = 0;
    use std::io::Write;
    while written <= notebridge::convert::MAX_PAGE_BYTES {
        f.write_all(para.as_bytes()).unwrap();
        written += para.len();
    }
    drop(f);
    let out = crate::bin_support::notebridge(dir.path(), &["convert"])
        .args([&path])
        .run_blocking();
    assert_ne!(out.code, Some(0), "{out:?}");
    assert!(out.stderr.contains("over the limit of"), "{out:?}");
}

// Fuzz-style properties: adversarial input of every kind, never a panic, always valid blocks.

fn fragment() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z ]{0,10}",
        Just("&#xFFFFFFFF;&#0;&#x;&am;&amp&lt&#55296;&#x110000;&nbsp".to_string()),
        Just("<".to_string()),
        Just("</".to_string()),
        Just("<p style=\"".to_string()),
        Just("<!--".to_string()),
        Just("<![CDATA[".to_string()),
        Just("<math><mfrac><mrow>".to_string()),
        Just("<table><tr><td colspan=\"99999999999\">".to_string()),
        Just("<ul data-tag=\"to-do,,,:completed\"><li>".to_string()),
        (1usize..4).prop_map(|k| format!(
            "<img alt=\"{}\" src=\"data:image/png;base64,{}\" />",
            "a".repeat(k * 30_000),
            "A".repeat(k * 1000)
        )),
        (1usize..4).prop_map(|k| format!(
            "<span style=\"{}\">s</span>",
            "color:red;".repeat(k * 5_000)
        )),
        (1usize..5)
            .prop_map(|k| format!("<a href=\"https://e.com/{}\">l</a>", "x".repeat(k * 1500))),
        (100usize..3000).prop_map(|n| "<div><ul><li>".repeat(n)),
        (100usize..3000).prop_map(|n| "<math>".to_string() + &"<msup><mrow>".repeat(n)),
        Just("<p style=\"font-family:Consolas\">\u{FFFC}\u{200B}\t  </p>".to_string()),
    ]
}

fn hostile_page() -> impl Strategy<Value = Vec<u8>> {
    (
        prop::collection::vec(fragment(), 0..12),
        any::<bool>(),
        any::<u16>(),
        prop::collection::vec(any::<u8>(), 0..8),
    )
        .prop_map(|(parts, cut, at, junk)| {
            let mut b = format!(
                "<html><head><title>T</title></head><body>{}</body></html>",
                parts.concat()
            )
            .into_bytes();
            if cut && !b.is_empty() {
                b.truncate(at as usize % b.len());
            }
            // Invalid UTF-8 spliced in somewhere.
            let pos = if b.is_empty() {
                0
            } else {
                at as usize % b.len()
            };
            b.splice(pos..pos, junk.into_iter().map(|x| x | 0x80));
            b
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn prop_hostile_pages_convert_to_valid_blocks(page in hostile_page()) {
        let html = String::from_utf8_lossy(&page).into_owned();
        let out = on_worker_stack(move || convert_page_with(&html, &ConvertOptions::default()));
        prop_assert!(checked(&out).is_ok(), "{:?}", checked(&out));
    }

    #[test]
    fn prop_hostile_mathml_never_panics(parts in prop::collection::vec(prop::sample::select(vec![
        "<math>", "</math>", "<mrow>", "</mrow>", "<mfrac>", "</mfrac>", "<msup>", "<mi>x</mi>",
        "<mo>&#x1D70B;</mo>", "<mtable><mtr><mtd>", "<semantics><annotation encoding=\"application/x-tex\">",
        "<mfenced open=\"\" separators=\"\">", "&broken;", "\u{FFFF}", "<mspace width=\"1e308em\"/>",
        "<mmultiscripts><mprescripts/>", "<menclose notation=\"box\">",
    ]), 0..400)) {
        let m = format!("<math>{}", parts.concat());
        let _ = on_worker_stack(move || notebridge::mathml::convert(&m));
    }

    #[test]
    fn prop_hostile_inkml_never_panics(parts in prop::collection::vec(prop::sample::select(vec![
        "<ink xmlns=\"http://www.w3.org/2003/InkML\">", "<traceGroup>", "</traceGroup>", "<trace>",
        "1 2, 3 4", "'1'2\"3", "!@#", "</trace>", "<context xml:id=\"c\" contextRef=\"#c\"/>",
        "<traceGroup contextRef=\"#c\">", "<brush xml:id=\"b\"><brushProperty name=\"width\" value=\"1e400\"/></brush>",
        "<trace brushRef=\"#b\">", "<trace brushRef=\"#nope\">", "&amp;", "&nope;", "</ink>",
        "<traceFormat><channel name=\"X\" type=\"decimal\"/></traceFormat>",
    ]), 0..300)) {
        let x = parts.concat();
        let _ = on_worker_stack(move || ink::for_page(Some(&x)));
    }

    #[test]
    fn prop_hostile_multipart_never_panics(
        body in prop::collection::vec(any::<u8>(), 0..600),
        boundary in "[a-zA-Z0-9'()+_,-./:=? ]{0,72}",
        prefix in prop::sample::select(vec!["", "--", "\r\n--", "\n--"]),
        cut in any::<u16>(),
    ) {
        let mut env = format!("{prefix}{boundary}\r\nContent-Type: text/html\r\n\r\n<p>x</p>\r\n--{boundary}\r\nContent-Type: application/inkml+xml\r\nContent-Transfer-Encoding: base64\r\n\r\n").into_bytes();
        env.extend(&body);
        env.extend(format!("\r\n--{boundary}--").as_bytes());
        let cut = cut as usize % (env.len() + 1);
        env.truncate(cut);
        let ct = format!("multipart/mixed; boundary=\"{boundary}\"");
        let _ = split_multipart(&ct, &env);
        let _ = split_multipart("multipart/mixed", &env);
        let _ = split_multipart("text/html", &body);
    }
}
