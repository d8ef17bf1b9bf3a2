//! OneNote page HTML (Graph `pages/{id}/content`) to Notion blocks, offline and infallible.
//!
//! [`convert_page`] never fails: whatever the HTML, it returns a block tree that meets Notion's
//! limits and a [`Report`] of what could only be approximated. Media blocks keep the Graph
//! resource to fetch ([`MediaSource::Resource`]) and links to other OneNote pages keep the target
//! page id ([`RichKind::PageLink`]); the writer resolves both before sending.

mod autolink;
pub mod blocks;
pub mod css;
mod depth;
pub mod embedded;
mod indent;
mod limits;
mod lists;
pub mod report;
pub mod rich_text;
mod tables;
pub mod tags;
pub mod tree;
mod walker;

use std::collections::BTreeMap;

use scraper::{ElementRef, Html, Node};
use serde_json::{json, Value};

pub use blocks::{
    Annotations, Block, Color, Hue, MediaSource, PageTarget, RichKind, RichText, TextBlock,
};
pub use embedded::{EmbeddedFile, EMBEDDED_SCHEME};
pub use report::{Approximation, Report};
pub use walker::{onenote_page_id, usable_url};

/// The page's markup as the converter parses it: self-closed elements closed, nesting capped.
pub use depth::prepare as prepare_markup;

use walker::{Sink, Style, TextBlockKind, Walker};

/// Largest page body notebridge converts (a page whose answer with its ink is bigger is fetched
/// again without its ink, and the ink reported as not carried over). A bigger page is refused with this reason rather than converted: conversion holds the parsed page and its
/// blocks in memory at once (about 17 bytes per input byte; the requests are made one at a time), and
/// only one page over [`crate::queue::big_page`]'s threshold is converted at once, so this bounds the
/// process's memory (a 50 MB page: see `migrate_hostile::a_50_mb_clipping_...`). A bigger page is
/// refused as it arrives, so it never holds more than this either.
pub const MAX_PAGE_BYTES: usize = 64 * 1024 * 1024;

/// Page facts that are not in the HTML (Graph metadata, the page's ink), shown on the page when given.
#[derive(Clone, Debug, Default)]
pub struct ConvertOptions {
    /// The page's `lastModifiedDateTime`.
    pub last_modified: Option<String>,
    /// The page's ink, fetched beside the HTML.
    pub ink: Ink,
}

/// A block with its place on the page, in the CSS px of the outlines' `top`/`left`.
#[derive(Clone, Debug, PartialEq)]
pub struct PositionedBlock {
    /// Top edge.
    pub top: f64,
    /// Left edge.
    pub left: f64,
    /// The block (a drawing's image).
    pub block: Block,
}

/// What is known of a page's ink (handwriting and drawings).
#[derive(Clone, Debug, Default, PartialEq)]
pub enum Ink {
    /// Not fetched: Graph's `InkNode` comments are reported as ink not migrated.
    #[default]
    NotFetched,
    /// Rendered drawings, placed among the positioned outlines in reading order; the `InkNode`
    /// comments are dropped when there is at least one.
    Drawings(Vec<PositionedBlock>),
    /// The InkML could not be read (the reason); reported once, the comments dropped.
    Unreadable(String),
}

/// One converted page.
#[derive(Clone, Debug, PartialEq)]
pub struct ConvertedPage {
    /// Page title (`Untitled` when OneNote has none).
    pub title: String,
    /// `<meta name="created">` as OneNote wrote it.
    pub created: Option<String>,
    /// The page body, first the date line when there is a date.
    pub blocks: Vec<Block>,
    /// What could only be approximated.
    pub report: Report,
    /// The note tags on the page by their OneNote names (`To Do` for `data-tag="to-do"`), each
    /// once, in the order met.
    pub tags: Vec<String>,
    /// Who wrote the page, where its source says (a section file does; Graph's HTML does not).
    pub author: Option<String>,
}

/// Converts a page with default options.
pub fn convert_page(html: &str) -> ConvertedPage {
    convert_page_with(html, &ConvertOptions::default())
}

/// Converts a page.
pub fn convert_page_with(html: &str, opts: &ConvertOptions) -> ConvertedPage {
    convert_document(&parse(html), opts, None)
}

/// Converts a page, taking its HTML: the text is freed as soon as it is parsed, so a big page's
/// text and its blocks are never held together.
pub fn convert_page_owned(html: String, opts: &ConvertOptions) -> ConvertedPage {
    let doc = parse(&html);
    drop(html);
    convert_document(&doc, opts, None)
}

/// Converts a page whose files came beside its HTML (OneNote's own files, [`crate::onefile`]):
/// an `<img>` or `<object>` whose source is the [`EmbeddedFile::key`] of one of `files` gets those
/// bytes ([`MediaSource::Embedded`]); an `embedded:` source that none answers to becomes the named
/// placeholder of a file that cannot be carried over.
pub fn convert_page_with_files(
    html: String,
    opts: &ConvertOptions,
    files: Vec<EmbeddedFile>,
) -> ConvertedPage {
    let doc = parse(&html);
    drop(html);
    convert_document(&doc, opts, Some(files))
}

/// The page's DOM, after the pass that caps its nesting and closes its self-closed elements.
fn parse(html: &str) -> Html {
    Html::parse_document(&depth::prepare(html))
}

fn convert_document(
    doc: &Html,
    opts: &ConvertOptions,
    files: Option<Vec<EmbeddedFile>>,
) -> ConvertedPage {
    let root = doc.root_element();
    let (title, created) = head_info(root);
    let mut report = Report::default();
    let mut w = Walker::new(&mut report);
    w.carried = files;
    let mut sink = Sink::new(TextBlockKind::Paragraph, false);
    if let Some(body) = root.child_elements().find(|e| e.value().name() == "body") {
        w.set_media_count(walker::MediaCount::of(body));
        let st = w.style_of(body, &Style::default());
        walk_body(&mut w, body, &st, &mut sink, &opts.ink);
    }
    if let Ink::Unreadable(why) = &opts.ink {
        w.report.add(
            format!("ink (InkML could not be read: {why})"),
            "not migrated",
        );
    }
    sink.flush(&mut w);
    if w.placeholders > 0 {
        let n = w.placeholders;
        for _ in 0..n {
            w.report.add(
                "U+FFFC object placeholder",
                "removed (it marks where OneNote had an embedded object)",
            );
        }
    }
    let nested = indent::nest_indented(sink.blocks, &sink.indents);
    let mut blocks = limits::finish(nested, w.report);
    if let Some(line) = date_line(created.as_deref(), opts.last_modified.as_deref()) {
        blocks.insert(0, line);
    }
    ConvertedPage {
        title,
        created,
        blocks,
        report,
        tags: note_tags(root),
        author: None,
    }
}

/// Distinct note tags the page holds; an iterator over the elements, not a walk of the tree.
fn note_tags(root: ElementRef<'_>) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for t in root
        .descendants()
        .filter_map(ElementRef::wrap)
        .filter_map(|e| e.attr("data-tag"))
        .flat_map(tags::parse)
    {
        // A multi-select holds at most 100 options: more names than that are no use to a row.
        let name = tags::display_name(&t.name);
        if names.len() < 100 && !names.contains(&name) {
            names.push(name);
        }
    }
    names
}

/// Title and created date from `<head>`.
fn head_info(root: ElementRef<'_>) -> (String, Option<String>) {
    let mut title = String::new();
    let mut created = None;
    for head in root.child_elements().filter(|e| e.value().name() == "head") {
        for e in head.child_elements() {
            match e.value().name() {
                "title" if title.is_empty() => {
                    let raw: String = e.text().collect();
                    title = raw
                        .split(|c: char| c.is_whitespace() || c == '\u{FFFC}')
                        .filter(|w| !w.is_empty())
                        .collect::<Vec<_>>()
                        .join(" ");
                }
                "meta"
                    if e.attr("name")
                        .is_some_and(|n| n.eq_ignore_ascii_case("created")) =>
                {
                    created = e
                        .attr("content")
                        .map(str::trim)
                        .filter(|c| !c.is_empty())
                        .map(str::to_string);
                }
                _ => {}
            }
        }
    }
    if title.is_empty() {
        title = "Untitled".to_string();
    }
    (title, created)
}

/// OneNote's `2026-04-18T22:31:00.0000000` shown as `2026-04-18 22:31`.
fn display_date(raw: &str) -> String {
    let readable = raw.len() >= 16
        && raw.is_char_boundary(16)
        && raw.as_bytes()[10] == b'T'
        && raw[..10].bytes().all(|b| b.is_ascii_digit() || b == b'-');
    if readable {
        let offset = raw[16..]
            .find(['+', 'Z'])
            .or_else(|| raw[16..].rfind('-'))
            .map(|i| raw[16 + i..].to_string())
            .unwrap_or_default();
        format!("{} {}{}", &raw[..10], &raw[11..16], offset)
    } else {
        raw.chars().take(100).collect()
    }
}

/// The small gray line keeping OneNote's dates visible.
fn date_line(created: Option<&str>, modified: Option<&str>) -> Option<Block> {
    let mut parts = Vec::new();
    if let Some(c) = created {
        parts.push(format!("Created {}", display_date(c)));
    }
    if let Some(m) = modified {
        parts.push(format!("Last modified {}", display_date(m)));
    }
    if parts.is_empty() {
        return None;
    }
    let mut text = RichText::plain(format!("{} (OneNote)", parts.join(" · ")));
    text.annotations.italic = true;
    text.annotations.color = Color::Text(Hue::Gray);
    Some(Block::Paragraph(TextBlock::new(vec![text])))
}

/// Whether `b` is the grey line of OneNote's dates that [`date_line`] makes, the first block of a
/// converted page: it changes with every OneNote save, whatever else did.
pub fn is_date_line(b: &Block) -> bool {
    match b {
        Block::Paragraph(p) => match p.rich_text.as_slice() {
            [t] => {
                let text = t.visible_text();
                t.annotations.italic
                    && t.annotations.color == Color::Text(Hue::Gray)
                    && text.ends_with(" (OneNote)")
                    && (text.starts_with("Created ") || text.starts_with("Last modified "))
            }
            _ => false,
        },
        _ => false,
    }
}

/// What sits at a place on the page.
enum Placed<'a> {
    Outline(ElementRef<'a>),
    Block(Block),
}

/// The body in reading order: positioned outlines and drawings top to bottom and left to right;
/// content outside any outline keeps its place after the outline it follows in the document (at
/// the top when no outline precedes it).
fn walk_body(w: &mut Walker<'_>, body: ElementRef<'_>, st: &Style, sink: &mut Sink, ink: &Ink) {
    let drawings: &[PositionedBlock] = match ink {
        Ink::Drawings(d) => d,
        _ => &[],
    };
    let mut positioned: Vec<(f64, f64, usize, Placed<'_>)> = Vec::new();
    // Loose nodes with the index (into `positioned`, before sorting) of the outline before them.
    let mut loose = Vec::new();
    for child in body.children() {
        let anchor = positioned.len().checked_sub(1);
        let Some(e) = ElementRef::wrap(child) else {
            match child.value() {
                Node::Text(t) if !t.trim().is_empty() => loose.push((anchor, child)),
                // Graph leaves this comment where a page had ink it cannot export; it is noise
                // once the drawings are carried, and the failure is reported once otherwise.
                Node::Comment(c) if c.contains("InkNode") => match ink {
                    Ink::Drawings(d) if !d.is_empty() => {}
                    Ink::Unreadable(_) => {}
                    Ink::Drawings(_) => w.report.add(
                        "ink (handwriting, drawings)",
                        "not migrated: the answer carried no InkML",
                    ),
                    Ink::NotFetched => w.report.add(
                        "ink (handwriting, drawings)",
                        "not migrated: Graph does not return ink",
                    ),
                },
                _ => {}
            }
            continue;
        };
        match outline_position(e) {
            Some((top, left)) => {
                let n = positioned.len();
                positioned.push((top, left, n, Placed::Outline(e)));
            }
            None => loose.push((anchor, child)),
        }
    }
    if positioned.len() > 1 {
        for _ in 0..positioned.len() {
            w.report.add(
                "absolutely positioned outline",
                "placed in reading order (top to bottom, then left to right)",
            );
        }
    }
    if !positioned.is_empty() && loose.iter().any(|(a, _)| a.is_some()) {
        w.report.add(
            "content outside any outline, after an outline",
            "kept after that outline in reading order",
        );
    }
    let outlines = positioned.len();
    // Drawings after the outlines in the tie-break: at the same spot, the text comes first.
    for d in drawings {
        let n = positioned.len();
        positioned.push((d.top, d.left, n, Placed::Block(d.block.clone())));
    }
    positioned.sort_by(|a, b| {
        a.0.total_cmp(&b.0)
            .then(a.1.total_cmp(&b.1))
            .then(a.2.cmp(&b.2))
    });
    let walk_loose = |w: &mut Walker<'_>, sink: &mut Sink, anchor: Option<usize>| {
        // `loose` is in document order, so sorted by anchor (`None` first).
        let from = loose.partition_point(|(a, _)| *a < anchor);
        let to = loose.partition_point(|(a, _)| *a <= anchor);
        sink.indents.start(sink.blocks.len());
        for (_, node) in &loose[from..to] {
            match ElementRef::wrap(*node) {
                Some(e) => w.element(e, st, sink, 1),
                None => {
                    if let Node::Text(t) = node.value() {
                        sink.push_text(t, st);
                    }
                }
            }
        }
        sink.flush(w);
    };
    walk_loose(w, sink, None);
    for (_, _, n, p) in positioned {
        sink.indents.start(sink.blocks.len());
        match p {
            Placed::Outline(e) => w.element(e, st, sink, 1),
            Placed::Block(b) => sink.push_block(w, b),
        }
        sink.flush(w);
        if n < outlines {
            walk_loose(w, sink, Some(n));
        }
    }
}

/// `(top, left)` of an absolutely positioned element.
fn outline_position(e: ElementRef<'_>) -> Option<(f64, f64)> {
    let style = e.attr("style")?;
    let pos = css::property(style, "position")?;
    if !pos.eq_ignore_ascii_case("absolute") {
        return None;
    }
    let top = css::property(style, "top")
        .and_then(css::length_px)
        .unwrap_or(0.0);
    let left = css::property(style, "left")
        .and_then(css::length_px)
        .unwrap_or(0.0);
    Some((top, left))
}

fn collect_media<'a>(blocks: &'a [Block], out: &mut Vec<&'a MediaSource>) {
    for b in blocks {
        if let Some(m @ (MediaSource::Resource { .. } | MediaSource::Embedded(_))) = b.media() {
            out.push(m);
        }
        collect_media(b.children(), out);
    }
}

fn count_types(blocks: &[Block], counts: &mut BTreeMap<&'static str, usize>) {
    for b in blocks {
        *counts.entry(b.type_name()).or_default() += 1;
        if let Block::Table { rows, .. } = b {
            *counts.entry("table_row").or_default() += rows.len();
        }
        count_types(b.children(), counts);
    }
}

impl ConvertedPage {
    /// The files the writer must upload, in page order: OneNote resources to download and files
    /// embedded in the page ([`MediaSource::Embedded`]).
    pub fn resources(&self) -> Vec<&MediaSource> {
        let mut out = Vec::new();
        collect_media(&self.blocks, &mut out);
        out
    }

    /// Calls `f` on every media source (to swap a resource for its upload with
    /// [`MediaSource::set_upload_id`]).
    pub fn visit_media_mut(&mut self, mut f: impl FnMut(&mut MediaSource)) {
        for b in &mut self.blocks {
            b.visit_media_mut(&mut f);
        }
    }

    /// Points every link to another OneNote page at its Notion page; `resolve` maps the OneNote
    /// page id to the migrated page (`None`: not migrated, the link stays text).
    pub fn resolve_page_links(&mut self, mut resolve: impl FnMut(&str) -> Option<PageTarget>) {
        for b in &mut self.blocks {
            b.visit_rich_text_mut(&mut |rt| {
                if let RichKind::PageLink {
                    onenote_page_id,
                    target,
                    ..
                } = &mut rt.kind
                {
                    *target = resolve(onenote_page_id);
                }
            });
        }
    }

    /// Number of blocks of each Notion type, nested ones and table rows included.
    pub fn block_counts(&self) -> BTreeMap<&'static str, usize> {
        let mut counts = BTreeMap::new();
        count_types(&self.blocks, &mut counts);
        counts
    }

    /// The top-level blocks as Notion request JSON.
    pub fn blocks_json(&self) -> Value {
        Value::Array(self.blocks.iter().map(Block::to_json).collect())
    }

    /// Writes [`to_json`](Self::to_json)'s document (the same bytes, compact) one block at a time,
    /// consuming the page, so a long page is never held as JSON whole.
    pub fn write_json(self, out: &mut impl std::io::Write) -> std::io::Result<()> {
        let ConvertedPage {
            title,
            created,
            blocks,
            report,
            // Not part of `convert --json`'s document: a row's `Tags` and `Author` carry them.
            tags: _,
            author: _,
        } = self;
        write!(
            out,
            "{{\"title\":{},\"created\":{},\"blocks\":[",
            Value::from(title),
            created.map_or(Value::Null, Value::from)
        )?;
        for (i, b) in blocks.into_iter().enumerate() {
            if i > 0 {
                out.write_all(b",")?;
            }
            write!(out, "{}", b.to_json())?;
        }
        let report = serde_json::to_value(&report).unwrap_or(Value::Null);
        write!(out, "],\"report\":{report}}}")
    }

    /// The `convert --json` document.
    pub fn to_json(&self) -> Value {
        json!({
            "title": self.title,
            "created": self.created,
            "blocks": self.blocks_json(),
            "report": self.report,
        })
    }
}
