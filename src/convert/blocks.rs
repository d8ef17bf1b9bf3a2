//! The Notion block model the converter produces, and its exact request JSON.
//!
//! The tree is typed so the writer can walk it (media to upload, page links to rewrite) before
//! serialising; children nest to any depth and are split into requests by the writer.

use serde_json::{json, Map, Value};

/// One of Notion's ten colours, as text colour or as background.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Color {
    /// No colour.
    #[default]
    Default,
    /// A Notion hue as text colour.
    Text(Hue),
    /// A Notion hue as background (highlight).
    Background(Hue),
}

/// The hues Notion offers besides `default`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Hue {
    /// gray
    Gray,
    /// brown
    Brown,
    /// orange
    Orange,
    /// yellow
    Yellow,
    /// green
    Green,
    /// blue
    Blue,
    /// purple
    Purple,
    /// pink
    Pink,
    /// red
    Red,
}

impl Hue {
    /// Notion's name for the hue.
    pub fn name(self) -> &'static str {
        match self {
            Hue::Gray => "gray",
            Hue::Brown => "brown",
            Hue::Orange => "orange",
            Hue::Yellow => "yellow",
            Hue::Green => "green",
            Hue::Blue => "blue",
            Hue::Purple => "purple",
            Hue::Pink => "pink",
            Hue::Red => "red",
        }
    }
}

impl Color {
    /// Notion's colour string (`default`, `blue`, `yellow_background`...).
    pub fn as_notion(self) -> String {
        match self {
            Color::Default => "default".to_string(),
            Color::Text(h) => h.name().to_string(),
            Color::Background(h) => format!("{}_background", h.name()),
        }
    }
}

/// Rich-text annotations.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Annotations {
    /// bold
    pub bold: bool,
    /// italic
    pub italic: bool,
    /// strikethrough
    pub strikethrough: bool,
    /// underline
    pub underline: bool,
    /// inline code
    pub code: bool,
    /// text or background colour
    pub color: Color,
}

/// What a rich-text object holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RichKind {
    /// Plain text, optionally an http(s)/mailto link (validated, at most 2000 characters).
    Text {
        /// The text (never empty, at most 2000 UTF-16 units).
        content: String,
        /// A usable link target.
        link: Option<String>,
    },
    /// A link to another OneNote page; the writer points it at the migrated Notion page.
    PageLink {
        /// The link text.
        content: String,
        /// The target page's OneNote id (the GUID from `page-id={...}`, braces kept).
        onenote_page_id: String,
        /// The migrated Notion page once the writer has resolved the target.
        target: Option<PageTarget>,
    },
    /// An inline LaTeX equation.
    Equation {
        /// KaTeX expression (at most 1000 characters).
        expression: String,
    },
}

/// The Notion page a OneNote page link resolves to: what the store records of a migrated page
/// (the converter only reads it).
pub use crate::store::notion_items::PageTarget;

// What a link makes of its target is the converter's; the store only records the target.
impl PageTarget {
    /// The page's notion.so URL (what a link that cannot be a mention points at).
    pub fn url(&self) -> String {
        page_url(&self.id)
    }
}

/// An empty paragraph standing for a blank line.
pub fn is_spacer(b: &Block) -> bool {
    matches!(b, Block::Paragraph(t) if t.rich_text.is_empty() && t.children.is_empty())
}

/// The notion.so URL of the Notion page `id` (what a link to it holds).
pub fn page_url(id: &str) -> String {
    format!("https://www.notion.so/{}", id.replace('-', ""))
}

/// Whether link text says no more than a page mention shows: the target's title (whitespace and
/// case aside, as OneNote's "Copy Link to Page" pastes it) or the link's own address.
fn text_is_title(content: &str, title: &str) -> bool {
    let norm = |s: &str| {
        s.split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .to_lowercase()
    };
    let c = norm(content);
    c == norm(title)
        || c.starts_with("onenote:")
        || c.starts_with("https://")
        || c.starts_with("http://")
}

/// One rich-text object.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RichText {
    /// Its content.
    pub kind: RichKind,
    /// Its styling.
    pub annotations: Annotations,
}

impl RichText {
    /// Plain unstyled text.
    pub fn plain(content: impl Into<String>) -> Self {
        Self {
            kind: RichKind::Text {
                content: content.into(),
                link: None,
            },
            annotations: Annotations::default(),
        }
    }

    /// The text shown to the reader (for equations, the expression).
    pub fn visible_text(&self) -> String {
        match &self.kind {
            RichKind::Text { content, .. } => content.clone(),
            RichKind::PageLink { content, .. } => content.clone(),
            RichKind::Equation { expression } => expression.clone(),
        }
    }

    /// The request JSON of this object where a page mention is not used (captions, code): a
    /// resolved page link is a notion.so link.
    pub fn to_json(&self) -> Value {
        self.to_json_in(false)
    }

    /// The request JSON of this object; `mentions`: the place takes page mentions (the rich text of
    /// text blocks and table cells). A resolved page link whose text is the target's title becomes a
    /// mention (Notion shows the page's live title and follows renames); link text of the author's
    /// own stays, as a link, so no words are lost. Default annotations and a missing link are left
    /// out (Notion's defaults): a long page's request JSON is about half the size.
    pub fn to_json_in(&self, mentions: bool) -> Value {
        let text = |content: &str, link: Option<&str>| match link {
            Some(url) => json!({"content": content, "link": {"url": url}}),
            None => json!({ "content": content }),
        };
        let mut v = match &self.kind {
            RichKind::Text { content, link } => {
                json!({"type": "text", "text": text(content, link.as_deref())})
            }
            RichKind::PageLink {
                content,
                onenote_page_id,
                target,
            } => match target {
                Some(t) if mentions && text_is_title(content, &t.title) => json!({
                    "type": "mention",
                    "mention": {"type": "page", "page": {"id": t.id}},
                }),
                Some(t) => json!({"type": "text", "text": text(content, Some(&t.url()))}),
                // Until the writer knows the Notion page, the target stays readable as text.
                None => json!({
                    "type": "text",
                    "text": text(&format!("{content} (OneNote page {onenote_page_id})"), None),
                }),
            },
            RichKind::Equation { expression } => json!({
                "type": "equation",
                "equation": {"expression": expression},
            }),
        };
        let a = &self.annotations;
        if *a != Annotations::default() {
            v["annotations"] = json!({
                "bold": a.bold, "italic": a.italic, "strikethrough": a.strikethrough,
                "underline": a.underline, "code": a.code, "color": a.color.as_notion(),
            });
        }
        v
    }
}

/// Where a media block's file comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MediaSource {
    /// A OneNote resource the writer downloads from Graph and uploads to Notion.
    Resource {
        /// The Graph resource URL (`.../onenote/resources/{id}/$value`).
        url: String,
        /// The file name OneNote shows (attachments), if any.
        file_name: Option<String>,
        /// The MIME type OneNote reports, if any.
        mime: Option<String>,
        /// Another rendition to fetch when `url` fails for good: an image's `src` (shown on the
        /// page, smaller) beside its full-resolution `data-fullres-src`.
        fallback: Option<String>,
    },
    /// A public URL Notion fetches itself.
    External(String),
    /// A file that came inside the page (a `data:` URL); the writer uploads its bytes.
    Embedded(super::embedded::EmbeddedFile),
    /// An upload already made with Notion's File Upload API.
    FileUpload {
        /// The Notion file upload id.
        id: String,
    },
}

impl MediaSource {
    /// Replaces the source with a finished Notion upload.
    pub fn set_upload_id(&mut self, id: impl Into<String>) {
        *self = MediaSource::FileUpload { id: id.into() };
    }

    /// The JSON fields (`type` plus its object) inside a media block.
    fn fields(&self, into: &mut Map<String, Value>) {
        match self {
            // `convert` shows resources as the URL they are fetched from.
            MediaSource::Resource { url, .. }
            | MediaSource::External(url)
            | MediaSource::Embedded(super::embedded::EmbeddedFile { key: url, .. }) => {
                into.insert("type".into(), json!("external"));
                into.insert("external".into(), json!({ "url": url }));
            }
            MediaSource::FileUpload { id } => {
                into.insert("type".into(), json!("file_upload"));
                into.insert("file_upload".into(), json!({ "id": id }));
            }
        }
    }
}

/// The text part shared by paragraph-like blocks.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct TextBlock {
    /// At most 100 objects (the converter splits longer ones into further blocks).
    pub rich_text: Vec<RichText>,
    /// Block colour.
    pub color: Color,
    /// Nested blocks.
    pub children: Vec<Block>,
}

impl TextBlock {
    /// A block holding these runs and nothing else.
    pub fn new(rich_text: Vec<RichText>) -> Self {
        Self {
            rich_text,
            ..Self::default()
        }
    }
}

/// Notion's language name for code without a language.
pub const PLAIN: &str = "plain text";

/// One Notion block with its children.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Block {
    /// paragraph
    Paragraph(TextBlock),
    /// heading_1..heading_4 (level 1..=4)
    Heading {
        /// 1, 2, 3 or 4.
        level: u8,
        /// Text (headings carry no children).
        text: TextBlock,
    },
    /// bulleted_list_item
    Bulleted(TextBlock),
    /// numbered_list_item
    Numbered(TextBlock),
    /// to_do
    ToDo {
        /// Text and children.
        text: TextBlock,
        /// Ticked.
        checked: bool,
    },
    /// callout with an emoji icon
    Callout {
        /// Text and children.
        text: TextBlock,
        /// The icon.
        emoji: String,
    },
    /// quote
    Quote(TextBlock),
    /// code
    Code {
        /// The code, line breaks as `\n`.
        rich_text: Vec<RichText>,
        /// Notion's language name ([`PLAIN`] for OneNote's monospace text).
        language: &'static str,
    },
    /// divider
    Divider,
    /// table with its rows (every row exactly `width` cells)
    Table {
        /// Number of columns.
        width: usize,
        /// First row is a header.
        has_column_header: bool,
        /// Rows of cells of rich text.
        rows: Vec<Vec<Vec<RichText>>>,
    },
    /// image
    Image {
        /// File source.
        source: MediaSource,
        /// Caption (alt text).
        caption: Vec<RichText>,
    },
    /// file (named)
    File {
        /// File source.
        source: MediaSource,
        /// Name shown in Notion.
        name: Option<String>,
        /// Caption.
        caption: Vec<RichText>,
    },
    /// pdf
    Pdf {
        /// File source.
        source: MediaSource,
        /// Caption (the attachment name).
        caption: Vec<RichText>,
    },
    /// video (external URL)
    Video {
        /// The video page URL.
        url: String,
    },
    /// embed
    Embed {
        /// The embedded URL.
        url: String,
    },
    /// block equation
    Equation {
        /// KaTeX expression.
        expression: String,
    },
}

fn rich_json(items: &[RichText]) -> Value {
    Value::Array(items.iter().map(RichText::to_json).collect())
}

/// Rich text where Notion takes page mentions (text blocks, table cells).
fn rich_json_mentions(items: &[RichText]) -> Value {
    Value::Array(items.iter().map(|r| r.to_json_in(true)).collect())
}

impl Block {
    /// Notion's type name of the block.
    pub fn type_name(&self) -> &'static str {
        match self {
            Block::Paragraph(_) => "paragraph",
            Block::Heading { level: 1, .. } => "heading_1",
            Block::Heading { level: 2, .. } => "heading_2",
            Block::Heading { level: 3, .. } => "heading_3",
            Block::Heading { .. } => "heading_4",
            Block::Bulleted(_) => "bulleted_list_item",
            Block::Numbered(_) => "numbered_list_item",
            Block::ToDo { .. } => "to_do",
            Block::Callout { .. } => "callout",
            Block::Quote(_) => "quote",
            Block::Code { .. } => "code",
            Block::Divider => "divider",
            Block::Table { .. } => "table",
            Block::Image { .. } => "image",
            Block::File { .. } => "file",
            Block::Pdf { .. } => "pdf",
            Block::Video { .. } => "video",
            Block::Embed { .. } => "embed",
            Block::Equation { .. } => "equation",
        }
    }

    /// The text part of text-like blocks.
    pub fn text(&self) -> Option<&TextBlock> {
        match self {
            Block::Paragraph(t) | Block::Bulleted(t) | Block::Numbered(t) | Block::Quote(t) => {
                Some(t)
            }
            Block::Heading { text, .. }
            | Block::ToDo { text, .. }
            | Block::Callout { text, .. } => Some(text),
            _ => None,
        }
    }

    /// Mutable text part of text-like blocks.
    pub fn text_mut(&mut self) -> Option<&mut TextBlock> {
        match self {
            Block::Paragraph(t) | Block::Bulleted(t) | Block::Numbered(t) | Block::Quote(t) => {
                Some(t)
            }
            Block::Heading { text, .. }
            | Block::ToDo { text, .. }
            | Block::Callout { text, .. } => Some(text),
            _ => None,
        }
    }

    /// Nested blocks (table rows are not blocks of this tree; they serialise as `table_row`).
    pub fn children(&self) -> &[Block] {
        self.text().map(|t| t.children.as_slice()).unwrap_or(&[])
    }

    /// Every rich-text array of this block (text, caption, code, table cells), not its children.
    pub fn rich_texts(&self) -> Vec<&Vec<RichText>> {
        match self {
            Block::Code { rich_text, .. } => vec![rich_text],
            Block::Image { caption, .. }
            | Block::File { caption, .. }
            | Block::Pdf { caption, .. } => {
                vec![caption]
            }
            Block::Table { rows, .. } => rows.iter().flatten().collect(),
            other => other.text().map(|t| vec![&t.rich_text]).unwrap_or_default(),
        }
    }

    /// Calls `f` on every rich-text object of this block and its descendants (e.g. to resolve
    /// page links).
    pub fn visit_rich_text_mut(&mut self, f: &mut dyn FnMut(&mut RichText)) {
        match self {
            Block::Code { rich_text, .. } => rich_text.iter_mut().for_each(&mut *f),
            Block::Image { caption, .. }
            | Block::File { caption, .. }
            | Block::Pdf { caption, .. } => caption.iter_mut().for_each(&mut *f),
            Block::Table { rows, .. } => rows.iter_mut().flatten().flatten().for_each(&mut *f),
            other => {
                if let Some(t) = other.text_mut() {
                    t.rich_text.iter_mut().for_each(&mut *f);
                    for c in &mut t.children {
                        c.visit_rich_text_mut(f);
                    }
                }
            }
        }
    }

    /// The media source of an image, file or pdf block.
    pub fn media(&self) -> Option<&MediaSource> {
        match self {
            Block::Image { source, .. }
            | Block::File { source, .. }
            | Block::Pdf { source, .. } => Some(source),
            _ => None,
        }
    }

    /// Calls `f` on every media source in this block and its descendants.
    pub fn visit_media_mut(&mut self, f: &mut dyn FnMut(&mut MediaSource)) {
        match self {
            Block::Image { source, .. }
            | Block::File { source, .. }
            | Block::Pdf { source, .. } => f(source),
            other => {
                if let Some(t) = other.text_mut() {
                    for c in &mut t.children {
                        c.visit_media_mut(f);
                    }
                }
            }
        }
    }

    /// The Notion request JSON of this block and its children.
    pub fn to_json(&self) -> Value {
        let mut v = self.to_json_shallow();
        let kids: Vec<Value> = match self {
            Block::Table { rows, .. } => rows.iter().map(|r| table_row_json(r)).collect(),
            other => other.children().iter().map(Block::to_json).collect(),
        };
        if !kids.is_empty() {
            v[self.type_name()]["children"] = Value::Array(kids);
        }
        v
    }

    /// The request JSON of this block alone: without its children or a table's rows (the writer
    /// sends those with it or after it, as Notion's per-request limits allow).
    pub fn to_json_shallow(&self) -> Value {
        let mut body = Map::new();
        match self {
            Block::Code {
                rich_text,
                language,
            } => {
                body.insert("rich_text".into(), rich_json(rich_text));
                body.insert("language".into(), json!(language));
                body.insert("caption".into(), json!([]));
            }
            Block::Divider => {}
            Block::Table {
                width,
                has_column_header,
                ..
            } => {
                body.insert("table_width".into(), json!(width));
                body.insert("has_column_header".into(), json!(has_column_header));
                body.insert("has_row_header".into(), json!(false));
            }
            Block::Image { source, caption } | Block::Pdf { source, caption } => {
                source.fields(&mut body);
                body.insert("caption".into(), rich_json(caption));
            }
            Block::File {
                source,
                name,
                caption,
            } => {
                source.fields(&mut body);
                body.insert("caption".into(), rich_json(caption));
                if let Some(n) = name {
                    body.insert("name".into(), json!(n));
                }
            }
            Block::Video { url } => {
                body.insert("type".into(), json!("external"));
                body.insert("external".into(), json!({ "url": url }));
            }
            Block::Embed { url } => {
                body.insert("url".into(), json!(url));
            }
            Block::Equation { expression } => {
                body.insert("expression".into(), json!(expression));
            }
            text_like => {
                let t = text_like.text().expect("every other variant is text-like");
                body.insert("rich_text".into(), rich_json_mentions(&t.rich_text));
                body.insert("color".into(), json!(t.color.as_notion()));
                match text_like {
                    Block::ToDo { checked, .. } => {
                        body.insert("checked".into(), json!(checked));
                    }
                    Block::Callout { emoji, .. } => {
                        body.insert("icon".into(), json!({"type": "emoji", "emoji": emoji}));
                    }
                    _ => {}
                }
            }
        }
        let ty = self.type_name();
        json!({"object": "block", "type": ty, ty: Value::Object(body)})
    }
}

/// The request JSON of one table row (its cells take page mentions).
pub fn table_row_json(cells: &[Vec<RichText>]) -> Value {
    let cells: Vec<Value> = cells.iter().map(|c| rich_json_mentions(c)).collect();
    json!({"object": "block", "type": "table_row", "table_row": {"cells": cells}})
}

#[cfg(test)]
mod tests {
    use super::*;

    fn link(content: &str, resolved: bool) -> RichText {
        RichText {
            kind: RichKind::PageLink {
                content: content.into(),
                onenote_page_id: "{1234}".into(),
                target: resolved.then(|| PageTarget {
                    id: "3c612f56-fdd0-4a30-a4d6-bda7d7426309".into(),
                    title: "Project  Plan".into(),
                }),
            },
            annotations: Annotations {
                bold: true,
                ..Annotations::default()
            },
        }
    }

    #[test]
    fn a_link_titled_as_its_target_is_a_mention_where_notion_takes_one() {
        let mention =
            json!({"type": "page", "page": {"id": "3c612f56-fdd0-4a30-a4d6-bda7d7426309"}});
        let url = "https://www.notion.so/3c612f56fdd04a30a4d6bda7d7426309";
        // text blocks and table cells: a mention, annotations kept
        let p = Block::Paragraph(TextBlock::new(vec![link("project plan", true)])).to_json();
        assert_eq!(p["paragraph"]["rich_text"][0]["mention"], mention);
        assert_eq!(p["paragraph"]["rich_text"][0]["annotations"]["bold"], true);
        let t = Block::Table {
            width: 1,
            has_column_header: false,
            rows: vec![vec![vec![link("Project Plan", true)]]],
        }
        .to_json();
        let cell = &t["table"]["children"][0]["table_row"]["cells"][0][0];
        assert_eq!(cell["mention"], mention);
        // the author's own words stay, as a link to the page
        let p = Block::Paragraph(TextBlock::new(vec![link("see the plan", true)])).to_json();
        assert_eq!(
            p["paragraph"]["rich_text"][0]["text"],
            json!({"content": "see the plan", "link": {"url": url}})
        );
        // captions and code take no mention: a link
        let code = Block::Code {
            rich_text: vec![link("Project Plan", true)],
            language: PLAIN,
        }
        .to_json();
        assert_eq!(code["code"]["rich_text"][0]["text"]["link"]["url"], url);
        let img = Block::Image {
            source: MediaSource::External("https://a.example/x.png".into()),
            caption: vec![link("Project Plan", true)],
        }
        .to_json();
        assert_eq!(img["image"]["caption"][0]["type"], "text");
        // unresolved: readable text naming the OneNote page
        let p = Block::Paragraph(TextBlock::new(vec![link("Project Plan", false)])).to_json();
        assert_eq!(
            p["paragraph"]["rich_text"][0]["text"]["content"],
            "Project Plan (OneNote page {1234})"
        );
    }
}
