//! The conflict rule: whether a Notion page still holds what notebridge last wrote there, so that
//! a rewrite never goes over a person's edit.
//!
//! Neither of Notion's own stamps proves it alone: `last_edited_time` is rounded down to the
//! minute (<https://developers.notion.com/changelog/last-edited-time-is-now-rounded-to-the-nearest-minute>),
//! so an edit in the minute of notebridge's last write leaves it as it was; and with a personal
//! access token `last_edited_by` is the person themself whether notebridge or they wrote. So when a
//! page's body is complete notebridge records a [`Fingerprint`] of the page as Notion gives it back:
//! its `last_edited_time`, a digest of its properties (title, icon, cover; a row's every property)
//! and a digest of its body's top-level blocks (each block's id, type, `last_edited_time`, whether
//! it has children, and its content). Before a rewrite the page is read the same way ([`Seen`]) and
//! [`edited`] decides:
//! - a `last_edited_time` in a later minute than the fingerprint's (or than the creation of the
//!   latest of notebridge's own subpages, which moves its parent's time) is an edit, for sure;
//! - in the same minute, any difference of properties or body digests is an edit;
//! - a page without a fingerprint (written by an older notebridge) cannot be proved unedited and
//!   is taken as edited: a kept copy costs a page, an overwrite costs a person's work.
//!
//! The check costs one `GET /v1/pages/{id}` per page to be rewritten; the listing of the page's
//! children is the one the rewrite needs anyway (it is handed on). Recording the fingerprint of a
//! page created now costs the listing only ([`read_body`]): the page half is what its writes
//! answered (`writer::Answered`); any other page is read back with both ([`read`]).

use std::collections::HashSet;

use serde::Serialize;
use serde_json::Value;
use sha2::{Digest, Sha256};

use super::client::{NotionClient, NotionError};
use super::listed::Listed;
pub use crate::store::notion_items::Fingerprint;

/// A page as read now: its fingerprint, and the latest minute notebridge's own subpages or
/// databases inside it were created (creating a child page moves its parent's time).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Seen {
    /// The page read the way a fingerprint is taken.
    pub now: Fingerprint,
    /// The latest creation minute of a child page or database that notebridge made in it.
    pub ours_latest: Option<String>,
}

/// Why a page counts as edited in Notion.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Edit {
    /// No fingerprint was recorded (an older notebridge wrote it): it cannot be proved unedited.
    Unprovable,
    /// Edited in a later minute than notebridge's last write.
    Later,
    /// Its properties (title, icon, cover, a row's properties) differ.
    Properties,
    /// Its body's top-level blocks differ.
    Body,
}

impl Edit {
    /// In words, for logs and reports.
    pub fn describe(self) -> &'static str {
        match self {
            Edit::Unprovable => "written by an older notebridge: no record proves it unedited",
            Edit::Later => "edited in Notion after notebridge wrote it",
            Edit::Properties => "its title or properties were edited in Notion",
            Edit::Body => "its content was edited in Notion",
        }
    }
}

/// The rule (module doc): `None` when the page still holds what notebridge wrote.
pub fn edited(recorded: Option<&Fingerprint>, seen: &Seen) -> Option<Edit> {
    let Some(rec) = recorded else {
        return Some(Edit::Unprovable);
    };
    let allowed = match &seen.ours_latest {
        Some(o) if *o > rec.edited => o.as_str(),
        _ => rec.edited.as_str(),
    };
    if seen.now.edited.as_str() > allowed {
        Some(Edit::Later)
    } else if seen.now.properties != rec.properties {
        Some(Edit::Properties)
    } else if seen.now.body != rec.body {
        Some(Edit::Body)
    } else {
        None
    }
}

/// Reads page `id` (`GET` the page, list its children) into what the rule compares; `ours` are
/// the Notion ids of the items notebridge recorded inside it (its subpages). The listing is
/// returned, in the typed model, for the rewrite that may follow; it is digested a cursor page at
/// a time, never held whole as JSON.
pub async fn read(
    client: &NotionClient,
    id: &str,
    ours: &HashSet<String>,
) -> Result<(Seen, Vec<Listed>), NotionError> {
    let page = client.page(id).await?;
    read_body(client, id, &page, ours).await
}

/// [`read`] with the page object in hand (a write's answer): only its children are listed.
pub async fn read_body(
    client: &NotionClient,
    id: &str,
    page: &Value,
    ours: &HashSet<String>,
) -> Result<(Seen, Vec<Listed>), NotionError> {
    let mut digest = Digests::new(ours);
    let mut listed = Vec::new();
    let mut bad = false;
    client
        .children_each(id, |items| {
            for b in items {
                digest.block(b);
                match Listed::of(b) {
                    Some(l) => listed.push(l),
                    None => bad = true,
                }
            }
        })
        .await?;
    if bad {
        // A child that is no block would shift every position after it (as `listed::of_all`).
        return Err(NotionError::BadAnswer {
            what: format!("listing the children of {id}"),
            problem: "a child without an id or type".into(),
        });
    }
    Ok((digest.finish(page), listed))
}

/// What the rule compares, from a page object and its children's listing (pure).
pub fn of_answers(page: &Value, listing: &[Value], ours: &HashSet<String>) -> Seen {
    let mut digest = Digests::new(ours);
    listing.iter().for_each(|b| digest.block(b));
    digest.finish(page)
}

/// The digests of a page taken as its listing comes.
struct Digests {
    ours: HashSet<String>,
    body: Sha256,
    ours_latest: Option<String>,
}

fn norm(s: &str) -> String {
    s.replace('-', "").to_ascii_lowercase()
}

impl Digests {
    fn new(ours: &HashSet<String>) -> Self {
        Self {
            ours: ours.iter().map(|s| norm(s)).collect(),
            body: Sha256::new(),
            ours_latest: None,
        }
    }

    /// One listed child, in the listing's order.
    fn block(&mut self, b: &Value) {
        let kind = b["type"].as_str().unwrap_or("");
        let trashed =
            b["in_trash"].as_bool() == Some(true) || b["archived"].as_bool() == Some(true);
        if matches!(kind, "child_page" | "child_database") {
            let id = b["id"].as_str().map(norm).unwrap_or_default();
            if self.ours.contains(&id) {
                if let Some(m) = b["created_time"].as_str().map(minute) {
                    if self.ours_latest.as_ref().is_none_or(|l| m > *l) {
                        self.ours_latest = Some(m);
                    }
                }
            }
            return;
        }
        if trashed {
            return;
        }
        body_entry(&mut self.body, b);
    }

    /// The page's own fields with the blocks digested so far.
    fn finish(self, page: &Value) -> Seen {
        Seen {
            now: page_half(page, self.body),
            ours_latest: self.ours_latest,
        }
    }
}

/// One body block (not a child page or database, not trashed) into the body digest.
fn body_entry(body: &mut Sha256, b: &Value) {
    let kind = b["type"].as_str().unwrap_or("");
    let mut payload = b[kind].clone();
    strip_volatile(&mut payload);
    let entry = serde_json::json!([
        b["id"].as_str().map(norm),
        kind,
        b["last_edited_time"].as_str().map(minute),
        b["has_children"].as_bool(),
        payload,
    ]);
    body.update(entry.to_string().as_bytes());
    body.update(b"\n");
}

/// The fingerprint of `page` with its body digested in `body`.
fn page_half(page: &Value, body: Sha256) -> Fingerprint {
    let mut props = serde_json::Map::new();
    if let Some(p) = page["properties"].as_object() {
        for (name, v) in p {
            let ty = v["type"].as_str().unwrap_or("");
            // Computed values change without anyone editing the page's own.
            if matches!(
                ty,
                "created_time"
                    | "last_edited_time"
                    | "created_by"
                    | "last_edited_by"
                    | "formula"
                    | "rollup"
                    | "unique_id"
            ) {
                continue;
            }
            let mut value = v[ty].clone();
            strip_volatile(&mut value);
            props.insert(name.clone(), serde_json::json!([ty, value]));
        }
    }
    let (mut icon, mut cover) = (page["icon"].clone(), page["cover"].clone());
    strip_volatile(&mut icon);
    strip_volatile(&mut cover);
    let props = serde_json::json!([props, icon, cover]);
    Fingerprint {
        edited: page["last_edited_time"]
            .as_str()
            .map(minute)
            .unwrap_or_default(),
        properties: hex(Sha256::digest(props.to_string().as_bytes()).as_slice()),
        body: hex(body.finalize().as_slice()),
    }
}

/// The fingerprint of a page after notebridge's own write changed only its properties or place
/// (`sync`: a retitle, a move, a row's order), from the write's answer: the page half is the
/// answer's, the body half what was recorded, since the write did not touch the body.
pub fn after_own_write(answer: &Value, recorded: &Fingerprint) -> Fingerprint {
    Fingerprint {
        body: recorded.body.clone(),
        ..page_half(answer, Sha256::new())
    }
}

/// A body digested from the blocks its appends answered, in their order: what a listing of the
/// page's body blocks would digest to when those appends are all the page's body was given.
#[derive(Clone, Debug, Default)]
pub struct AnsweredBody(Sha256);

impl PartialEq for AnsweredBody {
    fn eq(&self, other: &Self) -> bool {
        self.0.clone().finalize() == other.0.clone().finalize()
    }
}

impl Eq for AnsweredBody {}

impl AnsweredBody {
    /// The top-level blocks an append to the page answered, in the answer's order.
    pub fn blocks(&mut self, answered: &[Value]) {
        for b in answered {
            // As a listing is digested ([`Digests::block`]): pages, databases and trashed blocks
            // are no body.
            let kind = b["type"].as_str().unwrap_or("");
            let trashed =
                b["in_trash"].as_bool() == Some(true) || b["archived"].as_bool() == Some(true);
            if !matches!(kind, "child_page" | "child_database") && !trashed {
                body_entry(&mut self.0, b);
            }
        }
    }

    /// The fingerprint of `page` (its page half) with this body.
    pub fn fingerprint(&self, page: &Value) -> Fingerprint {
        page_half(page, self.0.clone())
    }
}

/// A Notion time to the minute (`2024-01-02T03:04`): Notion rounds down to the minute already;
/// the cut keeps two reads comparable whatever the seconds say.
pub fn minute(t: &str) -> String {
    t.get(..16).unwrap_or(t).to_owned()
}

/// What changes between two reads of an unedited page: a Notion-hosted file's signed URL and its
/// expiry, and a mention's rendered text (a linked page's current title).
fn strip_volatile(v: &mut Value) {
    match v {
        Value::Object(o) => {
            if o.contains_key("expiry_time") {
                o.remove("expiry_time");
                o.remove("url");
            }
            if o.get("type").and_then(Value::as_str) == Some("mention") {
                o.remove("plain_text");
            }
            o.values_mut().for_each(strip_volatile);
        }
        Value::Array(a) => a.iter_mut().for_each(strip_volatile),
        _ => {}
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn page(edited: &str, title: &str) -> Value {
        json!({"object": "page", "id": "p", "last_edited_time": edited, "icon": null,
            "cover": null, "properties": {"title": {"id": "title", "type": "title",
            "title": [{"type": "text", "text": {"content": title}, "plain_text": title}]}}})
    }

    fn block(id: &str, edited: &str, text: &str) -> Value {
        json!({"object": "block", "id": id, "type": "paragraph", "has_children": false,
            "created_time": edited, "last_edited_time": edited,
            "paragraph": {"rich_text": [{"type": "text", "text": {"content": text},
                "plain_text": text}]}})
    }

    fn child_page(id: &str, created: &str) -> Value {
        json!({"object": "block", "id": id, "type": "child_page", "has_children": false,
            "created_time": created, "last_edited_time": created,
            "child_page": {"title": "Sub"}})
    }

    const W: &str = "2026-01-01T10:00:00.000Z";
    const LATER: &str = "2026-01-01T10:05:00.000Z";

    fn written() -> Fingerprint {
        of_answers(&page(W, "T"), &[block("a", W, "one")], &HashSet::new()).now
    }

    #[test]
    fn an_unchanged_page_is_not_edited_and_a_later_minute_always_is() {
        let rec = written();
        let same = of_answers(&page(W, "T"), &[block("a", W, "one")], &HashSet::new());
        assert_eq!(edited(Some(&rec), &same), None);
        let later = of_answers(&page(LATER, "T"), &[block("a", W, "one")], &HashSet::new());
        assert_eq!(edited(Some(&rec), &later), Some(Edit::Later));
        assert_eq!(edited(None, &same), Some(Edit::Unprovable));
    }

    #[test]
    fn an_edit_in_the_minute_of_the_write_is_seen_by_the_digests() {
        let rec = written();
        // Same minute (Notion rounds it down), other text, same block id.
        let text = of_answers(
            &page("2026-01-01T10:00:00.000Z", "T"),
            &[block("a", W, "one, edited")],
            &HashSet::new(),
        );
        assert_eq!(edited(Some(&rec), &text), Some(Edit::Body));
        let added = of_answers(
            &page(W, "T"),
            &[block("a", W, "one"), block("b", W, "")],
            &HashSet::new(),
        );
        assert_eq!(edited(Some(&rec), &added), Some(Edit::Body));
        let title = of_answers(&page(W, "T2"), &[block("a", W, "one")], &HashSet::new());
        assert_eq!(edited(Some(&rec), &title), Some(Edit::Properties));
    }

    #[test]
    fn notebridges_own_subpages_move_the_time_without_an_edit_and_no_further() {
        let rec = written();
        let ours: HashSet<String> = ["S-1".to_owned()].into();
        let with_sub = of_answers(
            &page(LATER, "T"),
            &[block("a", W, "one"), child_page("s1", LATER)],
            &ours,
        );
        assert_eq!(edited(Some(&rec), &with_sub), None);
        // A child page someone else made is theirs: the page's later time stays an edit.
        let theirs = of_answers(
            &page(LATER, "T"),
            &[block("a", W, "one"), child_page("x", LATER)],
            &ours,
        );
        assert_eq!(edited(Some(&rec), &theirs), Some(Edit::Later));
        // An edit in a minute after our subpage's creation is an edit.
        let after = of_answers(
            &page("2026-01-01T10:09:00.000Z", "T"),
            &[block("a", W, "one"), child_page("s1", LATER)],
            &ours,
        );
        assert_eq!(edited(Some(&rec), &after), Some(Edit::Later));
    }

    #[test]
    fn signed_file_urls_and_mention_texts_do_not_count_as_edits() {
        let file = |url: &str, exp: &str| {
            json!({"object": "block", "id": "f", "type": "image", "has_children": false,
                "last_edited_time": W, "image": {"type": "file",
                "file": {"url": url, "expiry_time": exp}}})
        };
        let a = of_answers(
            &page(W, "T"),
            &[file("https://s3/x?sig=1", "A")],
            &HashSet::new(),
        );
        let b = of_answers(
            &page(W, "T"),
            &[file("https://s3/x?sig=2", "B")],
            &HashSet::new(),
        );
        assert_eq!(edited(Some(&a.now), &b), None);
    }
}
