//! The content tree's records: pages and blocks as the server stores them, and how they render as
//! Notion API objects.

use serde_json::{json, Map, Value};

/// Where a node hangs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ParentRef {
    /// A root page shared with the integration (parent is the workspace).
    Workspace,
    /// A page (or a page's `child_page` block, which has the same id).
    Page(String),
    /// A block.
    Block(String),
    /// A data source (the node is one of its rows).
    DataSource(String),
}

/// What a node is.
#[derive(Clone, Debug)]
pub enum NodeKind {
    /// A page; listed in its parent's children as a `child_page` block with the same id.
    Page {
        /// Title as normalised rich text.
        title: Vec<Value>,
        /// Page icon as sent (or null).
        icon: Value,
        /// Page cover as sent (or null).
        cover: Value,
    },
    /// A database: listed in its parent page's children as a `child_database` block with the same
    /// id; its rows hang under its one data source, not among its children.
    Database {
        /// Title as normalised rich text.
        title: Vec<Value>,
        /// The id of its data source.
        data_source: String,
    },
    /// A block with its normalised type payload (without `children`).
    Block {
        /// Block type, e.g. `paragraph`.
        ty: String,
        /// The type payload.
        payload: Value,
    },
}

/// One page or block.
#[derive(Clone, Debug)]
pub struct Node {
    /// UUID with dashes.
    pub id: String,
    /// Its parent.
    pub parent: ParentRef,
    /// Page or block.
    pub kind: NodeKind,
    /// Child ids in display order (trashed ones included; listings skip them).
    pub children: Vec<String>,
    /// Trashed (deleted block or trashed page).
    pub in_trash: bool,
    /// Creation time, Unix ms.
    pub created_ms: i64,
    /// Last edit time, Unix ms.
    pub edited_ms: i64,
    /// Last edited by a person in Notion's app (not through the API): its `last_edited_by` is
    /// the person ([`PERSON_ID`]).
    pub person_edit: bool,
}

/// The user id of the workspace's person who edits pages in Notion's app in tests.
pub const PERSON_ID: &str = "6f1c3a52-9d3e-4c1b-8a57-2f0e5b7d4c11";

impl Node {
    /// The block type this node lists as (`child_page` for pages).
    pub fn block_type(&self) -> &str {
        match &self.kind {
            NodeKind::Page { .. } => "child_page",
            NodeKind::Database { .. } => "child_database",
            NodeKind::Block { ty, .. } => ty,
        }
    }

    /// The page or database title in plain text (empty for blocks).
    pub fn title(&self) -> String {
        match &self.kind {
            NodeKind::Page { title, .. } | NodeKind::Database { title, .. } => plain_text(title),
            NodeKind::Block { .. } => String::new(),
        }
    }
}

/// A page's, database's or block's `created_time` or `last_edited_time`: rounded down to the
/// minute, as Notion does since July 2022
/// (<https://developers.notion.com/changelog/last-edited-time-is-now-rounded-to-the-nearest-minute>).
pub fn iso_minute(ms: i64) -> String {
    iso(ms - ms.rem_euclid(60_000))
}

/// ISO 8601 with milliseconds, as Notion writes times.
pub fn iso(ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(ms)
        .unwrap_or_default()
        .to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

/// Concatenated `plain_text` of a normalised rich-text array.
pub fn plain_text(items: &[Value]) -> String {
    items
        .iter()
        .filter_map(|i| i.get("plain_text").and_then(Value::as_str))
        .collect()
}

/// A request rich-text item completed the way Notion returns it (type, annotations, plain_text, href).
pub fn normalise_rich_text_item(item: &Value) -> Value {
    let mut ann = json!({"bold": false, "italic": false, "strikethrough": false,
        "underline": false, "code": false, "color": "default"});
    if let Some(a) = item.get("annotations").and_then(Value::as_object) {
        for (k, v) in a {
            ann[k] = v.clone();
        }
    }
    if let Some(t) = item.get("text") {
        let content = t.get("content").and_then(Value::as_str).unwrap_or("");
        let link = t.get("link").cloned().unwrap_or(Value::Null);
        let href = link.get("url").cloned().unwrap_or(Value::Null);
        json!({"type": "text", "text": {"content": content, "link": link},
            "annotations": ann, "plain_text": content, "href": href})
    } else if let Some(e) = item.get("equation") {
        let expr = e.get("expression").and_then(Value::as_str).unwrap_or("");
        json!({"type": "equation", "equation": {"expression": expr},
            "annotations": ann, "plain_text": expr, "href": null})
    } else {
        let m = item.get("mention").cloned().unwrap_or(Value::Null);
        let mut m_obj = m.as_object().cloned().unwrap_or_default();
        let kind = [
            "page",
            "database",
            "user",
            "date",
            "template_mention",
            "custom_emoji",
        ]
        .into_iter()
        .find(|k| m_obj.contains_key(*k))
        .unwrap_or("page");
        m_obj.insert("type".into(), kind.into());
        let plain = match kind {
            "date" => m_obj["date"]["start"].as_str().unwrap_or("").to_owned(),
            _ => "Untitled".to_owned(),
        };
        json!({"type": "mention", "mention": Value::Object(m_obj),
            "annotations": ann, "plain_text": plain, "href": null})
    }
}

/// Normalises every rich-text array inside a type payload (`rich_text`, `caption`, table `cells`).
pub fn normalise_payload(ty: &str, payload: &Map<String, Value>) -> Value {
    let mut out = payload.clone();
    out.remove("children");
    for key in ["rich_text", "caption"] {
        if let Some(Value::Array(a)) = out.get(key) {
            let n: Vec<Value> = a.iter().map(normalise_rich_text_item).collect();
            out.insert(key.into(), Value::Array(n));
        }
    }
    if let Some(Value::Array(cells)) = out.get("cells") {
        let n: Vec<Value> = cells
            .iter()
            .map(|c| {
                Value::Array(
                    c.as_array()
                        .map(|a| a.iter().map(normalise_rich_text_item).collect())
                        .unwrap_or_default(),
                )
            })
            .collect();
        out.insert("cells".into(), Value::Array(n));
    }
    // Defaults Notion fills in on creation, so responses look like the real ones.
    let text_like = [
        "paragraph",
        "bulleted_list_item",
        "numbered_list_item",
        "toggle",
        "quote",
        "to_do",
        "heading_1",
        "heading_2",
        "heading_3",
        "heading_4",
        "callout",
    ];
    if text_like.contains(&ty) {
        out.entry("color").or_insert_with(|| "default".into());
    }
    if ty.starts_with("heading_") {
        out.entry("is_toggleable").or_insert(Value::Bool(false));
    }
    if ty == "to_do" {
        out.entry("checked").or_insert(Value::Bool(false));
    }
    if ty == "code" {
        out.entry("caption").or_insert_with(|| json!([]));
        out.entry("language").or_insert_with(|| "plain text".into());
    }
    if [
        "image", "video", "pdf", "audio", "file", "embed", "bookmark",
    ]
    .contains(&ty)
    {
        out.entry("caption").or_insert_with(|| json!([]));
    }
    if ["image", "video", "pdf", "audio", "file"].contains(&ty) && !out.contains_key("type") {
        let t = if out.contains_key("external") {
            "external"
        } else {
            "file_upload"
        };
        out.insert("type".into(), t.into());
    }
    if ty == "table" {
        out.entry("has_column_header").or_insert(Value::Bool(false));
        out.entry("has_row_header").or_insert(Value::Bool(false));
    }
    Value::Object(out)
}
