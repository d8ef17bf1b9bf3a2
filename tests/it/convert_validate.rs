//! Notion's request rules for converted blocks, checked on the JSON that would be sent.
//!
//! Used by the other `convert_*` tests. The tree is split into requests exactly as
//! the writer makes its steps (`notebridge::notion::steps`), and every request goes through the validator
//! the Notion test server applies (`validate_children`, `validate_table_rows_with`), so "the blocks
//! pass" means the server would take them. On top, the converter's own rules that Notion does not
//! enforce but that the converter promises: no empty text runs, link schemes Notion can open, a
//! checked flag on every to-do, an emoji on every callout, a language on every code block.

use notebridge::convert::Block;
use notebridge::notion::split;
use notebridge::notion::steps::{self, Items, Steps};
use notebridge_testkit::notion::validate::{
    validate_children, validate_table_rows_with, UploadState,
};
use serde_json::Value;

const TEXT_BLOCKS: [&str; 11] = [
    "paragraph",
    "heading_1",
    "heading_2",
    "heading_3",
    "heading_4",
    "bulleted_list_item",
    "numbered_list_item",
    "to_do",
    "callout",
    "quote",
    "toggle",
];

fn scheme_ok(u: &str) -> Result<(), String> {
    let p = url::Url::parse(u).map_err(|e| format!("invalid URL {u:?}: {e}"))?;
    match p.scheme() {
        "http" | "https" | "mailto" => Ok(()),
        s => Err(format!("URL scheme {s} in {u:?}")),
    }
}

/// The converter's own rules for one rich-text array (Notion's limits are the shared validator's).
pub fn rich_text(arr: &Value, at: &str) -> Result<(), String> {
    let items = arr
        .as_array()
        .ok_or_else(|| format!("{at}: rich text is not an array"))?;
    for it in items {
        if let Some(content) = it["text"]["content"].as_str() {
            if content.is_empty() {
                return Err(format!("{at}: empty text object"));
            }
            if let Some(u) = it["text"]["link"]["url"].as_str() {
                scheme_ok(u).map_err(|e| format!("{at}: {e}"))?;
            }
        }
        if let Some(e) = it["equation"]["expression"].as_str() {
            if e.is_empty() {
                return Err(format!("{at}: empty equation"));
            }
        }
    }
    Ok(())
}

fn house_rules(b: &Value) -> Result<(), String> {
    let ty = b["type"]
        .as_str()
        .ok_or_else(|| "block without type".to_string())?;
    let body = b.get(ty).ok_or_else(|| format!("{ty}: no body object"))?;
    if TEXT_BLOCKS.contains(&ty) || ty == "code" {
        rich_text(&body["rich_text"], ty)?;
    }
    match ty {
        "to_do" if !body["checked"].is_boolean() => return Err("to_do without checked".into()),
        "callout" if body["icon"]["emoji"].as_str().is_none_or(str::is_empty) => {
            return Err("callout without an emoji".into())
        }
        "code" if body["language"].as_str().is_none() => return Err("code without language".into()),
        "equation" if body["expression"].as_str().is_none_or(str::is_empty) => {
            return Err("empty equation block".into())
        }
        "embed" | "bookmark" => scheme_ok(body["url"].as_str().unwrap_or(""))?,
        "table_row" => {
            for c in body["cells"].as_array().ok_or("row without cells")? {
                rich_text(c, "table cell")?;
            }
        }
        _ => {}
    }
    if let Some(c) = body.get("caption") {
        rich_text(c, "caption")?;
    }
    for k in split::children(b) {
        house_rules(k)?;
    }
    Ok(())
}

/// Every request of the writer's steps for `list` (a new page's), checked by the test server's
/// validator. Uploads are not involved: media keep their resource URLs here.
fn requests_pass(list: &[Block]) -> Result<(), String> {
    for step in Steps::new_page(list) {
        let Some(items) = step.items() else { continue };
        let req = Value::Array(steps::request_json(list, items, |b, _| b.to_json_shallow()));
        match items {
            Items::Rows { table, .. } => {
                let Some(Block::Table { width, .. }) = steps::block_at(list, table) else {
                    return Err(format!("rows put in a step for {table:?}, not a table"));
                };
                validate_table_rows_with(&req, "body.children", *width, &|_| UploadState::Uploaded)
            }
            Items::Blocks { .. } => validate_children(&req, "body.children"),
        }
        .map_err(|e| e.message)?;
        let bytes = serde_json::json!({"children": req}).to_string().len();
        if bytes > notebridge_testkit::notion::validate::MAX_PAYLOAD_BYTES {
            return Err(format!("a request of {bytes} bytes"));
        }
    }
    Ok(())
}

/// Checks a page body: Notion's rules on every request the writer would send, then the converter's.
pub fn blocks(list: &[Block]) -> Result<(), String> {
    requests_pass(list)?;
    for b in list {
        house_rules(&b.to_json())?;
    }
    Ok(())
}

/// All text the blocks show, in reading order (rich text, captions, cells, equations).
pub fn shown_text(v: &Value, out: &mut String) {
    match v {
        Value::Array(a) => a.iter().for_each(|x| shown_text(x, out)),
        Value::Object(o) => {
            if o.get("type").and_then(Value::as_str) == Some("text") {
                if let Some(c) = o
                    .get("text")
                    .and_then(|t| t.get("content"))
                    .and_then(Value::as_str)
                {
                    out.push_str(c);
                    return;
                }
            }
            if let Some(e) = o
                .get("equation")
                .and_then(|e| e.get("expression"))
                .and_then(Value::as_str)
            {
                out.push_str(e);
                return;
            }
            // Object keys are sorted: take the text of a block before its children.
            for k in ["rich_text", "caption", "table_row", "cells"] {
                if let Some(x) = o.get(k) {
                    shown_text(x, out);
                }
            }
            for (k, x) in o {
                if !["rich_text", "caption", "table_row", "cells"].contains(&k.as_str()) {
                    shown_text(x, out);
                }
            }
        }
        _ => {}
    }
}

/// Whether a source character is one the reader sees (not whitespace, not an invisible character
/// the converter removes).
pub fn shows(c: char) -> bool {
    !c.is_whitespace() && !matches!(c, '\u{FFFC}' | '\u{200B}' | '\u{FEFF}')
}

/// The characters a reader sees in the page body as the converter reads its markup (no
/// whitespace, no U+FFFC), one
/// string per absolutely positioned outline (their order on the page is by position, not by
/// source) and one per run of unpositioned content between outlines (the converter keeps each run
/// after the outline before it, so runs are in order only within themselves).
pub fn visible_source_segments(html: &str) -> Vec<String> {
    // Read as the converter reads it: Graph's self-closed `<object/>` is closed, not left open.
    let doc = scraper::Html::parse_document(&notebridge::convert::prepare_markup(html));
    let mut loose = String::new();
    let mut segments = Vec::new();
    if let Some(body) = doc
        .root_element()
        .child_elements()
        .find(|e| e.value().name() == "body")
    {
        for child in body.children() {
            if let scraper::Node::Text(t) = child.value() {
                loose.extend(t.chars().filter(|c| shows(*c)));
            }
            let Some(e) = scraper::ElementRef::wrap(child) else {
                continue;
            };
            let positioned = e.attr("style").is_some_and(|s| {
                s.to_ascii_lowercase()
                    .replace(' ', "")
                    .contains("position:absolute")
            });
            if positioned {
                let mut seg = String::new();
                collect_element(e, &mut seg);
                segments.push(seg);
                segments.push(std::mem::take(&mut loose));
            } else {
                collect_element(e, &mut loose);
            }
        }
    }
    segments.push(loose);
    segments
}

fn collect_element(e: scraper::ElementRef<'_>, out: &mut String) {
    const HIDDEN: [&str; 9] = [
        "head", "title", "meta", "script", "style", "link", "template", "base", "noscript",
    ];
    if !HIDDEN.contains(&e.value().name()) {
        collect(e, out);
    }
}

/// Checks that every segment of the source survives, each in order.
pub fn text_survives(html: &str, shown: &str) -> Result<(), String> {
    for seg in visible_source_segments(html) {
        is_subsequence(&seg, shown)?;
    }
    Ok(())
}

/// Iterative, so that hostile nesting cannot overflow the test's stack.
fn collect(e: scraper::ElementRef<'_>, out: &mut String) {
    const HIDDEN: [&str; 9] = [
        "head", "title", "meta", "script", "style", "link", "template", "base", "noscript",
    ];
    let named = |n: Option<&scraper::Node>, names: &[&str]| {
        n.and_then(scraper::Node::as_element)
            .is_some_and(|el| names.contains(&el.name()))
    };
    for n in e.descendants() {
        let scraper::Node::Text(t) = n.value() else {
            continue;
        };
        // MathML text becomes LaTeX commands (`α` -> `\alpha`); equations have their own tests.
        if n.ancestors()
            .any(|a| named(Some(a.value()), &HIDDEN) || named(Some(a.value()), &["math"]))
        {
            continue;
        }
        if named(n.parent().map(|p| p.value()), &["iframe"]) {
            // Re-parsed by the converter, as it is really markup that followed `<iframe/>`.
            let frag = scraper::Html::parse_fragment(t);
            collect(frag.root_element(), out);
        } else {
            out.extend(t.chars().filter(|c| shows(*c)));
        }
    }
}

/// Whether every character of `source` appears in `shown`, in order.
pub fn is_subsequence(source: &str, shown: &str) -> Result<(), String> {
    let mut it = shown.chars().filter(|c| !c.is_whitespace());
    for (i, c) in source.chars().enumerate() {
        if !it.any(|s| s == c) {
            let ctx: String = source.chars().skip(i.saturating_sub(20)).take(40).collect();
            return Err(format!("character {c:?} (#{i}) lost near {ctx:?}"));
        }
    }
    Ok(())
}

/// One request of the hand-made JSON block `b` (with its children), then the converter's rules: for
/// blocks the typed model cannot even express.
fn json_block(b: &Value) -> Result<(), String> {
    validate_children(&Value::Array(vec![b.clone()]), "body.children").map_err(|e| e.message)?;
    house_rules(b)
}

#[test]
fn the_validator_rejects_what_notion_rejects() {
    use serde_json::json;
    let para = |rt: Value| json!({"type": "paragraph", "paragraph": {"rich_text": rt}});
    assert!(json_block(&para(json!([{"type":"text","text":{"content":"ok"}}]))).is_ok());
    assert!(json_block(&para(json!([{"type":"text","text":{"content":""}}]))).is_err());
    assert!(json_block(&para(
        json!([{"type":"text","text":{"content":"x".repeat(2001)}}])
    ))
    .is_err());
    let many: Vec<Value> = (0..101)
        .map(|_| json!({"type":"text","text":{"content":"a"}}))
        .collect();
    assert!(json_block(&para(Value::Array(many))).is_err());
    assert!(json_block(&para(
        json!([{"type":"text","text":{"content":"a","link":{"url":"onenote:x"}}}])
    ))
    .is_err());
    assert!(json_block(&json!({"type":"table","table":{"table_width":2,"children":[{"type":"table_row","table_row":{"cells":[[]]}}]}})).is_err());
    assert!(json_block(&json!({"type":"blink","blink":{}})).is_err());
    assert!(is_subsequence("abc", "xaxbxc").is_ok());
    assert!(is_subsequence("abc", "acb").is_err());
}
