//! Notion's request limits for converted blocks, checked on the JSON that would be sent.
//!
//! Included by the other `convert_*` tests with `#[path]`; the lead will point these at the
//! Notion test server's shared validator when merging.
#![allow(dead_code)]

use serde_json::Value;

const TEXT_BLOCKS: [&str; 10] = [
    "paragraph",
    "heading_1",
    "heading_2",
    "heading_3",
    "bulleted_list_item",
    "numbered_list_item",
    "to_do",
    "callout",
    "quote",
    "toggle",
];
const MEDIA_BLOCKS: [&str; 5] = ["image", "file", "pdf", "video", "audio"];
const HUES: [&str; 10] = [
    "default", "gray", "brown", "orange", "yellow", "green", "blue", "purple", "pink", "red",
];

fn color_ok(c: &str) -> bool {
    HUES.contains(&c) || HUES.iter().any(|h| c == format!("{h}_background"))
}

fn url_ok(u: &str) -> Result<(), String> {
    if u.encode_utf16().count() > 2000 {
        return Err(format!("URL over 2000 characters ({})", u.len()));
    }
    let p = url::Url::parse(u).map_err(|e| format!("invalid URL {u:?}: {e}"))?;
    match p.scheme() {
        "http" | "https" | "mailto" => Ok(()),
        s => Err(format!("URL scheme {s} in {u:?}")),
    }
}

/// Checks one rich-text array.
pub fn rich_text(arr: &Value, at: &str) -> Result<(), String> {
    let items = arr
        .as_array()
        .ok_or_else(|| format!("{at}: rich text is not an array"))?;
    if items.len() > 100 {
        return Err(format!("{at}: {} rich-text objects (max 100)", items.len()));
    }
    for it in items {
        let ty = it["type"].as_str().unwrap_or("");
        match ty {
            "text" => {
                let content = it["text"]["content"]
                    .as_str()
                    .ok_or_else(|| format!("{at}: text without content"))?;
                if content.is_empty() {
                    return Err(format!("{at}: empty text object"));
                }
                let n = content.encode_utf16().count();
                if n > 2000 {
                    return Err(format!("{at}: text content of {n} units (max 2000)"));
                }
                match &it["text"]["link"] {
                    Value::Null => {}
                    l => {
                        url_ok(l["url"].as_str().unwrap_or("")).map_err(|e| format!("{at}: {e}"))?
                    }
                }
            }
            "equation" => {
                let e = it["equation"]["expression"].as_str().unwrap_or("");
                if e.is_empty() || e.chars().count() > 1000 {
                    return Err(format!("{at}: equation of {} chars", e.chars().count()));
                }
            }
            other => return Err(format!("{at}: rich text type {other:?}")),
        }
        if let Some(c) = it["annotations"]["color"].as_str() {
            if !color_ok(c) {
                return Err(format!("{at}: colour {c:?}"));
            }
        }
    }
    Ok(())
}

fn media(body: &Value, at: &str) -> Result<(), String> {
    match body["type"].as_str() {
        Some("external") => url_ok(body["external"]["url"].as_str().unwrap_or("")),
        Some("file_upload") if body["file_upload"]["id"].is_string() => Ok(()),
        other => Err(format!("{at}: media source type {other:?}")),
    }
}

/// Checks one block and its children.
pub fn block(b: &Value) -> Result<(), String> {
    let ty = b["type"]
        .as_str()
        .ok_or_else(|| "block without type".to_string())?;
    let body = b.get(ty).ok_or_else(|| format!("{ty}: no body object"))?;
    if TEXT_BLOCKS.contains(&ty) {
        rich_text(&body["rich_text"], ty)?;
        if let Some(c) = body.get("color") {
            if !c.as_str().is_some_and(color_ok) {
                return Err(format!("{ty}: colour {c}"));
            }
        }
        if ty == "to_do" && !body["checked"].is_boolean() {
            return Err("to_do without checked".into());
        }
        if ty == "callout" && body["icon"]["emoji"].as_str().is_none_or(str::is_empty) {
            return Err("callout without an emoji".into());
        }
        if let Some(kids) = body.get("children") {
            if ty.starts_with("heading") && body["is_toggleable"] != Value::Bool(true) {
                return Err(format!("{ty}: children on a non-toggleable heading"));
            }
            for k in kids.as_array().ok_or("children not an array")? {
                block(k)?;
            }
        }
        return Ok(());
    }
    match ty {
        "code" => {
            rich_text(&body["rich_text"], ty)?;
            if body["language"].as_str().is_none() {
                return Err("code without language".into());
            }
        }
        "divider" => {}
        "equation" => {
            let e = body["expression"].as_str().unwrap_or("");
            if e.is_empty() || e.chars().count() > 1000 {
                return Err(format!("equation block of {} chars", e.chars().count()));
            }
        }
        "embed" | "bookmark" => url_ok(body["url"].as_str().unwrap_or(""))?,
        "table" => {
            let width = body["table_width"].as_u64().unwrap_or(0) as usize;
            if width == 0 {
                return Err("table_width 0".into());
            }
            let rows = body["children"].as_array().ok_or("table without rows")?;
            if rows.is_empty() {
                return Err("table without rows".into());
            }
            for r in rows {
                if r["type"] != "table_row" {
                    return Err(format!("table child of type {}", r["type"]));
                }
                let cells = r["table_row"]["cells"]
                    .as_array()
                    .ok_or("row without cells")?;
                if cells.len() != width {
                    return Err(format!(
                        "row of {} cells in a table {width} wide",
                        cells.len()
                    ));
                }
                for c in cells {
                    rich_text(c, "table cell")?;
                }
            }
        }
        m if MEDIA_BLOCKS.contains(&m) => {
            media(body, m)?;
            if let Some(c) = body.get("caption") {
                rich_text(c, "caption")?;
            }
        }
        other => return Err(format!("unknown block type {other:?}")),
    }
    Ok(())
}

/// Checks a list of blocks.
pub fn blocks(list: &Value) -> Result<(), String> {
    for b in list.as_array().ok_or("blocks not an array")? {
        block(b)?;
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

/// The characters a browser would show for the page body (no whitespace, no U+FFFC), one
/// string per absolutely positioned outline (their order on the page is by position, not by
/// source) and one for everything else.
pub fn visible_source_segments(html: &str) -> Vec<String> {
    let doc = scraper::Html::parse_document(html);
    let mut loose = String::new();
    let mut segments = Vec::new();
    if let Some(body) = doc
        .root_element()
        .child_elements()
        .find(|e| e.value().name() == "body")
    {
        for child in body.children() {
            if let scraper::Node::Text(t) = child.value() {
                loose.extend(t.chars().filter(|c| !c.is_whitespace() && *c != '\u{FFFC}'));
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
        if n.ancestors().any(|a| named(Some(a.value()), &HIDDEN)) {
            continue;
        }
        if named(n.parent().map(|p| p.value()), &["iframe"]) {
            // Re-parsed by the converter, as it is really markup that followed `<iframe/>`.
            let frag = scraper::Html::parse_fragment(t);
            collect(frag.root_element(), out);
        } else {
            out.extend(t.chars().filter(|c| !c.is_whitespace() && *c != '\u{FFFC}'));
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

#[test]
fn the_validator_rejects_what_notion_rejects() {
    use serde_json::json;
    let para = |rt: Value| json!({"type": "paragraph", "paragraph": {"rich_text": rt}});
    assert!(block(&para(json!([{"type":"text","text":{"content":"ok"}}]))).is_ok());
    assert!(block(&para(json!([{"type":"text","text":{"content":""}}]))).is_err());
    assert!(block(&para(
        json!([{"type":"text","text":{"content":"x".repeat(2001)}}])
    ))
    .is_err());
    let many: Vec<Value> = (0..101)
        .map(|_| json!({"type":"text","text":{"content":"a"}}))
        .collect();
    assert!(block(&para(Value::Array(many))).is_err());
    assert!(block(&para(
        json!([{"type":"text","text":{"content":"a","link":{"url":"onenote:x"}}}])
    ))
    .is_err());
    assert!(block(&json!({"type":"table","table":{"table_width":2,"children":[{"type":"table_row","table_row":{"cells":[[]]}}]}})).is_err());
    assert!(block(&json!({"type":"blink","blink":{}})).is_err());
    assert!(is_subsequence("abc", "xaxbxc").is_ok());
    assert!(is_subsequence("abc", "acb").is_err());
}
