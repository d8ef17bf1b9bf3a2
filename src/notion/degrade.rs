//! A refused element never costs a page: when Notion answers `400 validation_error` about a value
//! inside a request (a link URL, an image URL, an icon), that element is degraded in the request and
//! the request is sent again. A link becomes plain text with its target shown, an external image a
//! visible placeholder naming its URL, an icon is dropped.
//!
//! Notion names the refused value in one of two shapes: a path (`body.children[3].paragraph.
//! rich_text[0].text.link.url should be ...`), which degrades exactly that element, or a list of
//! path-less complaints (`Content creation Failed. Fix the following: \nInvalid URL for link.`),
//! which degrades the links (or images) Notion may refuse: those with a scheme other than http(s)
//! first, all of them when none is left.

use serde::Serialize;
use serde_json::{json, Value};

use super::split::block_type;

/// One element sent differently than converted, for the page's report.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Degraded {
    /// What Notion refused (e.g. `link mailto:a@b.c`).
    pub element: String,
    /// What was sent instead.
    pub action: String,
}

/// A page's stored report (the converter's items as JSON) with `items` (element, action) added: an
/// item already there counts once more. The one way the writer and the link pass record what they
/// sent degraded, so `verify` lists it beside the converter's approximations.
pub fn add_to_report(
    report: Option<&str>,
    items: impl IntoIterator<Item = (String, String)>,
) -> Option<String> {
    merge(report, items, |had, _| had + 1)
}

/// [`add_to_report`] for what was degraded again in a rewrite of blocks already written: an item
/// counts as often as the rewrite met it, unless the report already counts it that often (the
/// first write degraded the same element), so nothing is listed twice.
pub fn note_in_report(
    report: Option<&str>,
    items: impl IntoIterator<Item = (String, String)>,
) -> Option<String> {
    let mut seen: Vec<((String, String), u64)> = Vec::new();
    for i in items {
        match seen.iter_mut().find(|(k, _)| *k == i) {
            Some((_, n)) => *n += 1,
            None => seen.push((i, 1)),
        }
    }
    let mut out = report.map(str::to_owned);
    for ((element, action), n) in seen {
        out = merge(out.as_deref(), [(element, action)], |had, new| {
            if new {
                n
            } else {
                had.max(n)
            }
        });
    }
    out
}

/// Adds each item to the report; `count(had, new)` is the item's count after it (`new`: not in the
/// report before, `had` 0).
fn merge(
    report: Option<&str>,
    items: impl IntoIterator<Item = (String, String)>,
    count: impl Fn(u64, bool) -> u64,
) -> Option<String> {
    let mut items = items.into_iter().peekable();
    if items.peek().is_none() {
        return report.map(str::to_owned);
    }
    let mut all: Vec<Value> = report
        .and_then(|r| serde_json::from_str(r).ok())
        .unwrap_or_default();
    for (element, action) in items {
        match all
            .iter_mut()
            .find(|i| i["element"] == element.as_str() && i["action"] == action.as_str())
        {
            Some(i) => i["count"] = json!(count(i["count"].as_u64().unwrap_or(0), false)),
            None => {
                all.push(json!({"element": element, "count": count(0, true), "action": action}))
            }
        }
    }
    serde_json::to_string(&all).ok()
}

/// Degrades in `children` (a request's blocks) what Notion's `message` refused; `None` when the
/// message names nothing that can be degraded (the request then fails as before).
pub fn degrade(children: &mut [Value], message: &str) -> Option<Vec<Degraded>> {
    let mut done = Vec::new();
    for path in paths(message) {
        if let Some(d) = degrade_path(children, &path) {
            done.push(d);
        }
    }
    if done.is_empty() && message.contains("Invalid URL for link") {
        done = degrade_links(children);
    }
    if done.is_empty() && message.to_ascii_lowercase().contains("invalid image url") {
        done = degrade_images(children);
    }
    (!done.is_empty()).then_some(done)
}

/// A path segment: a key or an array index.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Seg {
    Key(String),
    Index(usize),
}

/// The request paths under `body.children` named in a validation message.
fn paths(message: &str) -> Vec<Vec<Seg>> {
    let mut out = Vec::new();
    let mut rest = message;
    while let Some(i) = rest.find("body.children[") {
        let tail = &rest[i + "body.".len()..];
        let end = tail
            .find(|c: char| !(c.is_ascii_alphanumeric() || "_.[]".contains(c)))
            .unwrap_or(tail.len());
        let text = tail[..end].trim_end_matches('.');
        let mut segs = Vec::new();
        for part in text.split('.') {
            let (key, mut idx) = match part.find('[') {
                Some(b) => (&part[..b], &part[b..]),
                None => (part, ""),
            };
            if !key.is_empty() {
                segs.push(Seg::Key(key.to_owned()));
            }
            while let Some(close) = idx.find(']') {
                if let Ok(n) = idx[1..close].parse() {
                    segs.push(Seg::Index(n));
                }
                idx = &idx[close + 1..];
            }
        }
        if !out.contains(&segs) {
            out.push(segs);
        }
        rest = &tail[end..];
    }
    out
}

/// Degrades the element at `path` (which starts `children[i]`).
fn degrade_path(children: &mut [Value], path: &[Seg]) -> Option<Degraded> {
    let (Some(Seg::Key(k)), Some(Seg::Index(i))) = (path.first(), path.get(1)) else {
        return None;
    };
    if k != "children" {
        return None;
    }
    let keys: Vec<&str> = path
        .iter()
        .filter_map(|s| match s {
            Seg::Key(k) => Some(k.as_str()),
            Seg::Index(_) => None,
        })
        .collect();
    // The deepest block on the path, and the rest of the path inside it.
    let mut block = children.get_mut(*i)?;
    let mut at = 2;
    loop {
        let t = block_type(block)?.to_owned();
        match (path.get(at), path.get(at + 1), path.get(at + 2)) {
            (Some(Seg::Key(ty)), Some(Seg::Key(c)), Some(Seg::Index(j)))
                if *ty == t && c == "children" =>
            {
                block = block.get_mut(&t)?.get_mut("children")?.get_mut(*j)?;
                at += 3;
            }
            _ => break,
        }
    }
    let inner = &path[at..];
    let t = block_type(block)?.to_owned();
    if keys.contains(&"link") {
        // …rich_text[n].text.link(.url): the run at rich_text[n].
        let n = inner.iter().position(|s| *s == Seg::Key("text".into()))?;
        let mut v: &mut Value = block;
        for s in &inner[..n] {
            v = match s {
                Seg::Key(k) => v.get_mut(k.as_str())?,
                Seg::Index(j) => v.get_mut(*j)?,
            };
        }
        return unlink(v);
    }
    if keys.contains(&"mention") {
        // …rich_text[n].mention.page.id: the run at rich_text[n].
        let n = inner
            .iter()
            .position(|s| *s == Seg::Key("mention".into()))?;
        let mut v: &mut Value = block;
        for s in &inner[..n] {
            v = match s {
                Seg::Key(k) => v.get_mut(k.as_str())?,
                Seg::Index(j) => v.get_mut(*j)?,
            };
        }
        return unmention(v);
    }
    if keys.contains(&"icon") {
        let payload = block.get_mut(&t)?.as_object_mut()?;
        payload.remove("icon")?;
        return Some(Degraded {
            element: format!("{t} icon"),
            action: "icon dropped (refused by Notion)".into(),
        });
    }
    if keys.contains(&"external") || matches!(t.as_str(), "embed" | "bookmark") {
        return replace_media(block);
    }
    None
}

/// A rich-text run without its link, its target shown after its text.
fn unlink(run: &mut Value) -> Option<Degraded> {
    let url = run["text"]["link"]["url"].as_str()?.to_owned();
    let text = run.get_mut("text")?.as_object_mut()?;
    text.remove("link");
    let content = text.get("content").and_then(Value::as_str).unwrap_or("");
    // Notion counts text in UTF-16 code units; past 2000 the target stays only in the report.
    let shown = format!("{content} ({url})");
    if shown.encode_utf16().count() <= 2000 {
        text.insert("content".into(), json!(shown));
    }
    Some(Degraded {
        element: format!("link {}", scheme_of(&url)),
        action: "kept as text with its target shown (link refused by Notion)".into(),
    })
}

/// A page mention Notion refused, sent as a link to the page with its address as the text (the
/// title is only known to Notion); annotations are kept.
fn unmention(run: &mut Value) -> Option<Degraded> {
    let id = run["mention"]["page"]["id"].as_str()?.to_owned();
    let url = crate::convert::blocks::page_url(&id);
    let obj = run.as_object_mut()?;
    obj.remove("mention");
    obj.insert("type".into(), json!("text"));
    obj.insert("text".into(), json!({"content": url, "link": {"url": url}}));
    Some(Degraded {
        element: "page mention".into(),
        action: "sent as a link to the page (mention refused by Notion)".into(),
    })
}

/// A media, embed or bookmark block replaced by a visible placeholder naming its URL.
pub fn replace_media(block: &mut Value) -> Option<Degraded> {
    let t = block_type(block)?.to_owned();
    let p = &block[&t];
    let url = p["external"]["url"]
        .as_str()
        .or_else(|| p["url"].as_str())?
        .to_owned();
    *block = json!({"type": "paragraph", "paragraph": {"rich_text": [{"type": "text", "text": {
        "content": format!("⚠ {t} not shown: Notion cannot use its address {}", shorten(&url))},
        "annotations": {"italic": true, "color": "red"}}]}});
    Some(Degraded {
        element: format!("{t} {}", scheme_of(&url)),
        action: "placeholder naming its address (Notion cannot use it)".into(),
    })
}

/// A URL as shown in a placeholder: `data:` URLs are cut (they hold the whole file).
fn shorten(url: &str) -> String {
    if url.len() <= 200 {
        return url.to_owned();
    }
    let mut end = 200;
    while !url.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &url[..end])
}

fn scheme_of(url: &str) -> String {
    match url.split_once(':') {
        Some((s, _)) if !s.is_empty() && s.len() < 20 => format!("{}:", s.to_ascii_lowercase()),
        _ => "(no scheme)".into(),
    }
}

/// Whether Notion could fetch an external address at all (http or https).
pub fn fetchable(url: &str) -> bool {
    web(url)
}

fn web(url: &str) -> bool {
    let u = url.to_ascii_lowercase();
    u.starts_with("https://") || u.starts_with("http://")
}

/// Every block of `children` at any depth, as mutable references, without recursion.
fn for_each_block(children: &mut [Value], mut f: impl FnMut(&mut Value)) {
    let mut stack: Vec<&mut Value> = children.iter_mut().collect();
    while let Some(b) = stack.pop() {
        f(b);
        let Some(t) = block_type(b).map(str::to_owned) else {
            continue;
        };
        if let Some(kids) = b
            .get_mut(&t)
            .and_then(|p| p.get_mut("children"))
            .and_then(Value::as_array_mut)
        {
            stack.extend(kids.iter_mut());
        }
    }
}

/// The rich-text arrays of a block's payload (its text, caption, or table cells).
fn runs_of(block: &mut Value) -> Vec<&mut Value> {
    let Some(t) = block_type(block).map(str::to_owned) else {
        return Vec::new();
    };
    let Some(p) = block.get_mut(&t).and_then(Value::as_object_mut) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (k, v) in p.iter_mut() {
        match (k.as_str(), v) {
            ("rich_text" | "caption", Value::Array(a)) => out.extend(a.iter_mut()),
            ("cells", Value::Array(cells)) => {
                for c in cells.iter_mut() {
                    if let Value::Array(a) = c {
                        out.extend(a.iter_mut());
                    }
                }
            }
            _ => {}
        }
    }
    out
}

/// Path-less "Invalid URL for link": links that are not http(s) first, all links when none is.
fn degrade_links(children: &mut [Value]) -> Vec<Degraded> {
    let mut done = Vec::new();
    for pass in [false, true] {
        for_each_block(children, |b| {
            for run in runs_of(b) {
                let Some(url) = run["text"]["link"]["url"].as_str() else {
                    continue;
                };
                if pass || !web(url) {
                    done.extend(unlink(run));
                }
            }
        });
        if !done.is_empty() {
            break;
        }
    }
    done
}

/// Path-less "Invalid image url": external images not plainly web images first, all when none is.
fn degrade_images(children: &mut [Value]) -> Vec<Degraded> {
    let mut done = Vec::new();
    for pass in [false, true] {
        for_each_block(children, |b| {
            let Some(url) = b["image"]["external"]["url"].as_str() else {
                return;
            };
            if pass || !(web(url) && looks_like_image(url)) {
                done.extend(replace_media(b));
            }
        });
        if !done.is_empty() {
            break;
        }
    }
    done
}

/// Whether a URL's path ends in an image extension Notion shows.
pub fn looks_like_image(url: &str) -> bool {
    let path = url
        .split(['?', '#'])
        .next()
        .unwrap_or(url)
        .to_ascii_lowercase();
    [
        ".png", ".jpg", ".jpeg", ".gif", ".webp", ".svg", ".bmp", ".tif", ".tiff", ".heic", ".ico",
    ]
    .iter()
    .any(|e| path.ends_with(e))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn linked(text: &str, url: &str) -> Value {
        json!({"type": "paragraph", "paragraph": {"rich_text": [
            {"type": "text", "text": {"content": "see "}},
            {"type": "text", "text": {"content": text, "link": {"url": url}}}]}})
    }

    #[test]
    fn what_was_degraded_is_added_to_the_stored_report() {
        let converter = r#"[{"element":"ink","count":1,"action":"drawn as an image"}]"#;
        assert_eq!(
            add_to_report(Some(converter), Vec::new()).as_deref(),
            Some(converter)
        );
        let link = || ("link mailto:".to_owned(), "kept as text".to_owned());
        let r = add_to_report(Some(converter), [link(), link()]).unwrap();
        let v: Value = serde_json::from_str(&r).unwrap();
        assert_eq!(v[0]["element"], "ink");
        assert_eq!(
            v[1],
            json!({"element": "link mailto:", "count": 2, "action": "kept as text"})
        );
        let r = add_to_report(None, [link()]).unwrap();
        assert_eq!(serde_json::from_str::<Value>(&r).unwrap()[0]["count"], 1);

        // A rewrite meeting the element the first write degraded lists it once, as it stands.
        let first = add_to_report(None, [link()]);
        let again = note_in_report(first.as_deref(), [link()]);
        assert_eq!(again, first);
        let mention = || ("page mention".to_owned(), "sent as a link".to_owned());
        let r = note_in_report(first.as_deref(), [link(), link(), mention()]).unwrap();
        let v: Value = serde_json::from_str(&r).unwrap();
        assert_eq!(
            (v[0]["count"].as_u64(), v[1]["count"].as_u64()),
            (Some(2), Some(1))
        );
        assert_eq!(v[1]["element"], "page mention");
        assert_eq!(note_in_report(Some(&r), [mention()]), Some(r));
    }

    #[test]
    fn a_path_degrades_exactly_that_link() {
        let mut blocks = vec![
            linked("a", "https://a.example"),
            json!({"type": "bulleted_list_item", "bulleted_list_item": {"rich_text": [],
                "children": [linked("mail me", "mailto:x@y.z"), linked("b", "https://b.example")]}}),
        ];
        let msg = "body failed validation: body.children[1].bulleted_list_item.children[0].paragraph.rich_text[1].text.link.url should be a valid URL, instead was `\"mailto:x@y.z\"`.";
        let d = degrade(&mut blocks, msg).unwrap();
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].element, "link mailto:");
        let kids = &blocks[1]["bulleted_list_item"]["children"];
        assert_eq!(
            kids[0]["paragraph"]["rich_text"][1]["text"],
            json!({"content": "mail me (mailto:x@y.z)"})
        );
        // the others keep their links
        assert!(kids[1]["paragraph"]["rich_text"][1]["text"]["link"].is_object());
        assert!(blocks[0]["paragraph"]["rich_text"][1]["text"]["link"].is_object());
    }

    #[test]
    fn a_refused_page_mention_becomes_a_link_to_the_page() {
        let id = "3c612f56-fdd0-4a30-a4d6-bda7d7426309";
        let mut blocks = vec![json!({"type": "paragraph", "paragraph": {"rich_text": [
            {"type": "text", "text": {"content": "see "}},
            {"type": "mention", "mention": {"type": "page", "page": {"id": id}},
             "annotations": {"bold": true, "italic": false, "strikethrough": false,
                "underline": false, "code": false, "color": "default"}}]}})];
        let msg = format!("body.children[0].paragraph.rich_text[1].mention.page.id: Could not find page with ID: {id}.");
        let d = degrade(&mut blocks, &msg).unwrap();
        assert_eq!(d[0].element, "page mention");
        let run = &blocks[0]["paragraph"]["rich_text"][1];
        assert_eq!(run["type"], "text");
        assert!(run.get("mention").is_none());
        let url = "https://www.notion.so/3c612f56fdd04a30a4d6bda7d7426309";
        assert_eq!(run["text"], json!({"content": url, "link": {"url": url}}));
        assert_eq!(run["annotations"]["bold"], true);
    }

    #[test]
    fn notions_pathless_link_complaint_degrades_non_web_links_first() {
        let mut blocks = vec![
            linked("a", "https://a.example"),
            linked("m", "mailto:q@r.s"),
        ];
        let msg = "Content creation Failed. Fix the following: \nInvalid URL for link.";
        let d = degrade(&mut blocks, msg).unwrap();
        assert_eq!(d.len(), 1);
        assert!(blocks[0]["paragraph"]["rich_text"][1]["text"]["link"].is_object());
        assert!(blocks[1]["paragraph"]["rich_text"][1]["text"]["link"].is_null());
        // refused again with only web links left: those go too
        let d = degrade(&mut blocks, msg).unwrap();
        assert_eq!(d[0].element, "link https:");
        assert!(
            degrade(&mut blocks, msg).is_none(),
            "nothing left to degrade"
        );
    }

    #[test]
    fn images_icons_and_unknown_paths() {
        let mut blocks = vec![
            json!({"type": "image", "image": {"type": "external", "external": {"url": "https://x.example/pic"}}}),
            json!({"type": "callout", "callout": {"rich_text": [], "icon": {"type": "emoji", "emoji": "x"}}}),
        ];
        let d = degrade(
            &mut blocks,
            "Content creation Failed. Fix the following: \nInvalid image url.",
        )
        .unwrap();
        assert_eq!(d[0].element, "image https:");
        assert_eq!(blocks[0]["type"], "paragraph");
        assert!(blocks[0]["paragraph"]["rich_text"][0]["text"]["content"]
            .as_str()
            .unwrap()
            .contains("https://x.example/pic"));
        let d = degrade(
            &mut blocks,
            "body failed validation: body.children[1].callout.icon.emoji should be an emoji.",
        )
        .unwrap();
        assert_eq!(d[0].element, "callout icon");
        assert!(blocks[1]["callout"]["icon"].is_null());
        assert!(degrade(
            &mut blocks,
            "body failed validation: body.children[0].paragraph.color should be a color."
        )
        .is_none());
        assert!(degrade(
            &mut blocks,
            "body failed validation: body.children[9].paragraph.rich_text[0].text.link.url is bad"
        )
        .is_none());
    }
}
