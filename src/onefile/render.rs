//! A parsed page rendered into the HTML dialect Graph's `pages/{id}/content` answers, so that the
//! one converter ([`crate::convert`]) makes its blocks: outlines as absolutely positioned `<div>`s
//! (half-inch offsets as CSS px), paragraph styles as `<h1>`..`<h6>`, `<blockquote>`, `<cite>`,
//! runs as `<span style>` (`<sup>`/`<sub>`), note tags as `data-tag`, lists as `<ul>`/`<ol>` (their
//! kind inferred from the list format), tables with cell backgrounds, pictures as `<img>` and files
//! as `<object>`. File bytes never go into the HTML: each is an [`EmbeddedFile`] named by the
//! `embedded:` key the element refers to. Ink becomes drawings placed by position, as the API route
//! places the drawings of its InkML.

use std::fmt::Write as _;
use std::io::Read;

use bytes::Bytes;
use onenote_parser::contents::{
    Content, EmbeddedFile as OneFile, FileDataStatus, Image, Ink as OneInk, NoteTag, Outline,
    OutlineElement, OutlineItem, RichText as OneText, Table,
};
use onenote_parser::page::{Page, PageContent};
use onenote_parser::property::common::ColorRef;

use crate::convert::{
    Block, EmbeddedFile, Ink, MediaSource, PositionedBlock, RichText, EMBEDDED_SCHEME,
};
use crate::ink::inkml::{Brush, Stroke};

/// CSS px per half inch (OneNote's layout unit): 96 px per inch.
const PX_PER_HALF_INCH: f32 = 48.0;
/// CSS px per ink unit (0.01 mm).
const PX_PER_INK_UNIT: f64 = 96.0 / 2540.0;
/// Outline nesting rendered as nesting; deeper items are rendered at this depth, in order (the
/// converter flattens deep lists further by its own rule).
const MAX_NESTING: usize = 40;
/// OneNote's default text size, in half points.
const DEFAULT_FONT_HALF_POINTS: u16 = 22;

/// A page ready for the converter.
pub struct Rendered {
    /// The page in Graph's HTML dialect.
    pub html: String,
    /// The files the HTML refers to by `embedded:` key.
    pub files: Vec<EmbeddedFile>,
    /// Drawings placed among the outlines.
    pub ink: Ink,
    /// Approximations the HTML cannot carry to the converter (the file route's own).
    pub notes: Vec<(String, &'static str)>,
}

/// The page's title as Graph gives it: the title outline's visible text (empty when none).
pub fn title(page: &Page) -> String {
    let Some(t) = page.title() else {
        return String::new();
    };
    let mut out = String::new();
    if let Some(o) = t.contents().first() {
        for item in o.items() {
            if let Some(e) = item.element() {
                for c in e.contents() {
                    if let Some(rt) = c.rich_text() {
                        let text: String = segments(rt).into_iter().map(|s| s.text).collect();
                        if !out.is_empty() && !text.is_empty() {
                            out.push(' ');
                        }
                        out.push_str(&text);
                    }
                }
            }
        }
    }
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Renders `page`; `created` goes into `<meta name="created">` as Graph puts it there.
pub fn page(page: &Page, created: Option<&str>) -> Rendered {
    let mut r = Renderer::default();
    r.html.push_str("<html><head><title>");
    escape_into(&mut r.html, &title(page));
    r.html.push_str("</title>");
    if let Some(c) = created {
        let _ = write!(r.html, "<meta name=\"created\" content=\"{}\" />", attr(c));
    }
    r.html
        .push_str("</head><body data-absolute-enabled=\"true\">");
    for content in page.contents() {
        match content {
            PageContent::Outline(o) => r.outline(o),
            PageContent::Image(img) => {
                let pos = position(img.offset_horizontal(), img.offset_vertical());
                r.image(img, Some(pos));
            }
            PageContent::EmbeddedFile(f) => {
                let pos = position(f.offset_horizontal(), f.offset_vertical());
                let _ = write!(
                    r.html,
                    "<div style=\"position:absolute;left:{}px;top:{}px\">",
                    pos.1, pos.0
                );
                r.file(f);
                r.html.push_str("</div>");
            }
            PageContent::Ink(ink) => {
                let (top, left) = position(ink.offset_horizontal(), ink.offset_vertical());
                r.page_ink(ink, f64::from(top), f64::from(left));
            }
            PageContent::Unknown => r.note(
                "page element of a kind the parser does not read",
                "not migrated",
            ),
        }
    }
    r.html.push_str("</body></html>");
    if let Some(rec) = page.ink_recognition() {
        let text = rec.text();
        if !text.trim().is_empty() && r.drawings.is_empty() && r.inline_ink == 0 {
            // Recognised handwriting whose strokes are not on the page: its text is all that is left.
            r.note("handwriting recognition without strokes", "not migrated");
        }
    }
    Rendered {
        html: r.html,
        files: r.files,
        ink: Ink::Drawings(r.drawings),
        notes: r.notes,
    }
}

/// `(top, left)` in CSS px from half-inch offsets.
fn position(horizontal: Option<f32>, vertical: Option<f32>) -> (f32, f32) {
    let px = |v: Option<f32>| {
        let v = v.unwrap_or(0.0) * PX_PER_HALF_INCH;
        if v.is_finite() {
            (v * 100.0).round() / 100.0
        } else {
            0.0
        }
    };
    (px(vertical), px(horizontal))
}

#[derive(Default)]
struct Renderer {
    html: String,
    files: Vec<EmbeddedFile>,
    drawings: Vec<PositionedBlock>,
    notes: Vec<(String, &'static str)>,
    inline_ink: usize,
}

/// What a run of list items is.
#[derive(Clone, Copy, PartialEq, Eq)]
enum ListKind {
    Bulleted,
    Numbered,
}

impl Renderer {
    fn note(&mut self, what: impl Into<String>, action: &'static str) {
        self.notes.push((what.into(), action));
    }

    fn outline(&mut self, o: &Outline) {
        let (top, left) = position(o.offset_horizontal(), o.offset_vertical());
        let _ = write!(
            self.html,
            "<div style=\"position:absolute;left:{left}px;top:{top}px\">"
        );
        self.items(o.items(), 0);
        self.html.push_str("</div>");
    }

    /// Items in order: runs of list items as one list each, other elements as their content.
    fn items(&mut self, items: &[OutlineItem], depth: usize) {
        let mut open: Option<ListKind> = None;
        for item in items {
            match item {
                OutlineItem::Group(g) => {
                    self.close_list(&mut open);
                    if depth < MAX_NESTING {
                        self.items(g.outlines(), depth + 1);
                    } else {
                        self.flat(g.outlines());
                    }
                }
                OutlineItem::Element(e) => match list_kind(e) {
                    Some(kind) => {
                        if open != Some(kind) {
                            self.close_list(&mut open);
                            self.html.push_str(match kind {
                                ListKind::Bulleted => "<ul>",
                                ListKind::Numbered => "<ol>",
                            });
                            open = Some(kind);
                        }
                        self.html.push_str("<li>");
                        self.element_contents(e, true);
                        self.children(e, depth);
                        self.html.push_str("</li>");
                    }
                    None => {
                        self.close_list(&mut open);
                        self.element_contents(e, false);
                        self.children(e, depth);
                    }
                },
            }
        }
        self.close_list(&mut open);
    }

    fn children(&mut self, e: &OutlineElement, depth: usize) {
        if e.children().is_empty() {
            return;
        }
        if depth < MAX_NESTING {
            self.items(e.children(), depth + 1);
        } else {
            self.flat(e.children());
        }
    }

    /// Items past [`MAX_NESTING`]: every element's content in order, with an explicit stack.
    fn flat(&mut self, items: &[OutlineItem]) {
        let mut stack: Vec<&OutlineItem> = items.iter().rev().collect();
        while let Some(item) = stack.pop() {
            match item {
                OutlineItem::Group(g) => stack.extend(g.outlines().iter().rev()),
                OutlineItem::Element(e) => {
                    self.element_contents(e, false);
                    stack.extend(e.children().iter().rev());
                }
            }
        }
    }

    fn close_list(&mut self, open: &mut Option<ListKind>) {
        match open.take() {
            Some(ListKind::Bulleted) => self.html.push_str("</ul>"),
            Some(ListKind::Numbered) => self.html.push_str("</ol>"),
            None => {}
        }
    }

    fn element_contents(&mut self, e: &OutlineElement, in_list: bool) {
        for c in e.contents() {
            match c {
                Content::RichText(rt) => self.paragraph(rt, in_list),
                Content::Table(t) => self.table(t),
                Content::Image(img) => self.image(img, None),
                Content::EmbeddedFile(f) => self.file(f),
                Content::Ink(ink) => self.inline_ink(ink),
                Content::Unknown => self.note(
                    "outline element of a kind the parser does not read",
                    "not migrated",
                ),
            }
        }
    }

    fn paragraph(&mut self, rt: &OneText, in_list: bool) {
        let style = rt.paragraph_style();
        let tag = match style.style_id().map(str::to_ascii_lowercase).as_deref() {
            Some(h @ ("h1" | "h2" | "h3" | "h4" | "h5" | "h6")) => h.to_string(),
            Some("blockquote") => "blockquote".into(),
            Some("cite") => "cite".into(),
            _ => "p".into(),
        };
        let tags = data_tag(rt.note_tags());
        let mut attrs = String::new();
        if let Some(t) = &tags {
            let _ = write!(attrs, " data-tag=\"{}\"", attr(t));
        }
        let mut css = String::new();
        if let Some(f) = style.font() {
            let _ = write!(css, "font-family:{};", attr(f));
        }
        if !css.is_empty() {
            let _ = write!(attrs, " style=\"{css}\"");
        }
        let (open, close) = match tag.as_str() {
            "blockquote" => (
                format!("<blockquote><p{attrs}>"),
                "</p></blockquote>".to_string(),
            ),
            // `<cite>` is inline for the converter: a paragraph of its own around it.
            "cite" => (format!("<p><cite{attrs}>"), "</cite></p>".to_string()),
            // In a list item a tag goes on a span, as Graph writes it.
            "p" if in_list => (format!("<span{attrs}>"), "</span><br />".to_string()),
            t => (format!("<{t}{attrs}>"), format!("</{t}>")),
        };
        self.html.push_str(&open);
        self.runs(rt);
        self.html.push_str(&close);
        if !rt.math_inline_objects().is_empty() {
            self.note(
                "math (OneNote equation)",
                "its characters kept as text (the parser gives no equation structure to convert)",
            );
        }
        if rt
            .embedded_objects()
            .iter()
            .any(|o| matches!(o, onenote_parser::contents::EmbeddedObject::Ink(_)))
        {
            for o in rt.embedded_objects() {
                if let onenote_parser::contents::EmbeddedObject::Ink(c) = o {
                    self.inline_ink(c.ink());
                }
            }
        }
    }

    fn runs(&mut self, rt: &OneText) {
        for seg in segments(rt) {
            let mut open = String::new();
            let mut close = String::new();
            if let Some(href) = &seg.link {
                let _ = write!(open, "<a href=\"{}\">", attr(href));
                close.insert_str(0, "</a>");
            }
            let css = run_css(&seg.style);
            if !css.is_empty() {
                let _ = write!(open, "<span style=\"{css}\">");
                close.insert_str(0, "</span>");
            }
            if seg.style.superscript {
                open.push_str("<sup>");
                close.insert_str(0, "</sup>");
            } else if seg.style.subscript {
                open.push_str("<sub>");
                close.insert_str(0, "</sub>");
            }
            self.html.push_str(&open);
            text_into(&mut self.html, &seg.text);
            self.html.push_str(&close);
        }
    }

    fn table(&mut self, t: &Table) {
        let border = if t.borders_visible() {
            " style=\"border:1px solid;border-collapse:collapse\""
        } else {
            ""
        };
        let _ = write!(self.html, "<table{border}>");
        for row in t.contents() {
            self.html.push_str("<tr>");
            for cell in row.contents() {
                match cell.background_color() {
                    Some(c) => {
                        let _ = write!(
                            self.html,
                            "<td style=\"background-color:#{:02x}{:02x}{:02x}\">",
                            c.r(),
                            c.g(),
                            c.b()
                        );
                    }
                    None => self.html.push_str("<td>"),
                }
                for e in cell.contents() {
                    self.element_contents(e, false);
                }
                self.html.push_str("</td>");
            }
            self.html.push_str("</tr>");
        }
        self.html.push_str("</table>");
    }

    /// The next file's key, numbered within the page.
    fn key(&self, name: &str) -> String {
        format!("{EMBEDDED_SCHEME}{}-{name}", self.files.len() + 1)
    }

    fn image(&mut self, img: &Image, pos: Option<(f32, f32)>) {
        let ext = img
            .extension()
            .map(|e| e.trim_start_matches('.').to_ascii_lowercase())
            .filter(|e| {
                !e.is_empty() && e.len() <= 8 && e.bytes().all(|b| b.is_ascii_alphanumeric())
            });
        let mime = ext
            .as_deref()
            .map(mime_of)
            .unwrap_or("application/octet-stream");
        let name = img
            .image_filename()
            .map(str::trim)
            .filter(|n| !n.is_empty())
            .map(str::to_string)
            .unwrap_or_else(|| {
                format!(
                    "image-{}.{}",
                    self.files.len() + 1,
                    ext.as_deref().unwrap_or("bin")
                )
            });
        let bytes = match img.data_status() {
            FileDataStatus::Available => img.read().and_then(|r| read_all(r).ok()),
            _ => None,
        }
        .filter(|b| !b.is_empty());
        let key = match bytes {
            Some(bytes) => {
                let key = self.key(&name);
                self.files.push(EmbeddedFile {
                    key: key.clone(),
                    name,
                    mime: mime.to_string(),
                    bytes,
                });
                key
            }
            // A key nothing answers to: the converter makes its named placeholder.
            None => format!("{EMBEDDED_SCHEME}missing"),
        };
        let mut a = String::new();
        if let Some((top, left)) = pos {
            let _ = write!(a, " style=\"position:absolute;left:{left}px;top:{top}px\"");
        }
        if let (Some(w), Some(h)) = (img.layout_max_width(), img.layout_max_height()) {
            if w.is_finite() && h.is_finite() {
                let _ = write!(
                    a,
                    " width=\"{}\" height=\"{}\"",
                    w * PX_PER_HALF_INCH,
                    h * PX_PER_HALF_INCH
                );
            }
        }
        let alt = img.alt_text().or(img.text()).unwrap_or("");
        let _ = write!(
            self.html,
            "<img{a} alt=\"{}\" src=\"{}\" data-src-type=\"{mime}\" />",
            attr(alt),
            attr(&key)
        );
        if let Some(url) = img.hyperlink_url() {
            if !url.is_empty() {
                self.note(
                    "hyperlink on a picture",
                    "not kept (Notion images carry no link)",
                );
            }
        }
    }

    fn file(&mut self, f: &OneFile) {
        let name = f.filename().trim();
        let name = if name.is_empty() { "file" } else { name };
        let mime = name
            .rsplit_once('.')
            .map(|(_, e)| mime_of(&e.to_ascii_lowercase()))
            .unwrap_or("application/octet-stream");
        let bytes = match f.data_status() {
            FileDataStatus::Available => read_all(f.read()).ok(),
            _ => None,
        }
        .filter(|b| !b.is_empty());
        let key = match bytes {
            Some(bytes) => {
                let key = self.key(name);
                self.files.push(EmbeddedFile {
                    key: key.clone(),
                    name: name.to_string(),
                    mime: mime.to_string(),
                    bytes,
                });
                key
            }
            None => format!("{EMBEDDED_SCHEME}missing"),
        };
        let _ = write!(
            self.html,
            "<object data-attachment=\"{}\" type=\"{mime}\" data=\"{}\"></object>",
            attr(name),
            attr(&key)
        );
    }

    /// Ink inside an outline: its drawing in place, as a picture.
    fn inline_ink(&mut self, ink: &OneInk) {
        let Some(d) = drawing(ink, 0.0, 0.0) else {
            return;
        };
        self.inline_ink += 1;
        let name = format!("ink-{}.svg", self.files.len() + 1);
        let key = self.key(&name);
        self.files.push(EmbeddedFile {
            key: key.clone(),
            name,
            mime: "image/svg+xml".into(),
            bytes: Bytes::from(d.svg),
        });
        let _ = write!(
            self.html,
            "<img alt=\"{}\" src=\"{}\" data-src-type=\"image/svg+xml\" />",
            attr(&d.caption),
            attr(&key)
        );
    }

    /// Ink on the page itself: a drawing placed by position among the outlines.
    fn page_ink(&mut self, ink: &OneInk, top: f64, left: f64) {
        let Some(d) = drawing(ink, top, left) else {
            return;
        };
        let name = format!("ink-{}.svg", self.files.len() + 1);
        let key = self.key(&name);
        let file = EmbeddedFile {
            key,
            name,
            mime: "image/svg+xml".into(),
            bytes: Bytes::from(d.svg),
        };
        // Counted as a file so that keys stay unique, but carried in the block, not the HTML.
        self.files.push(file.clone());
        self.drawings.push(PositionedBlock {
            top: d.top,
            left: d.left,
            block: Block::Image {
                source: MediaSource::Embedded(file),
                caption: vec![RichText::plain(d.caption)],
            },
        });
    }
}

/// One rendered ink object.
struct Drawn {
    svg: String,
    top: f64,
    left: f64,
    caption: String,
}

/// Renders an ink object's strokes (every nested group's, iteratively) with `src/ink`'s renderer;
/// `None` when it has no stroke with points.
fn drawing(ink: &OneInk, top: f64, left: f64) -> Option<Drawn> {
    let mut strokes: Vec<Stroke> = Vec::new();
    let mut words: Vec<(u32, String)> = Vec::new();
    let mut stack: Vec<&OneInk> = vec![ink];
    while let Some(i) = stack.pop() {
        stack.extend(i.child_groups().iter().rev());
        for s in i.ink_strokes() {
            let points: Vec<(f64, f64)> = s
                .absolute_path()
                .iter()
                .map(|p| {
                    (
                        left + f64::from(p.x()) * PX_PER_INK_UNIT,
                        top + f64::from(p.y()) * PX_PER_INK_UNIT,
                    )
                })
                .filter(|(x, y)| x.is_finite() && y.is_finite())
                .collect();
            if points.is_empty() {
                continue;
            }
            if let Some(w) = s.recognized_word() {
                if let Some(t) = w.text() {
                    if !words.iter().any(|(id, _)| *id == w.id()) {
                        words.push((w.id(), t.to_string()));
                    }
                }
            }
            strokes.push(Stroke {
                points,
                brush: brush(s),
                time_ms: None,
            });
        }
    }
    if strokes.is_empty() {
        return None;
    }
    let refs: Vec<&Stroke> = strokes.iter().collect();
    let b = crate::ink::group::bounds(refs.iter().copied());
    let svg = crate::ink::svg::render(&refs, &b);
    let n = strokes.len();
    let highlighter = strokes.iter().all(|s| s.brush.highlighter);
    let kind = if highlighter {
        "Highlighter drawing"
    } else {
        "Handwritten drawing"
    };
    let plural = if n == 1 { "stroke" } else { "strokes" };
    let mut caption = format!("{kind}, {n} {plural}");
    if !words.is_empty() {
        let text: Vec<&str> = words.iter().map(|(_, t)| t.as_str()).collect();
        let _ = write!(caption, ": “{}”", text.join(" "));
    }
    Some(Drawn {
        svg,
        top: (b.top * 100.0).round() / 100.0,
        left: (b.left * 100.0).round() / 100.0,
        caption,
    })
}

fn brush(s: &onenote_parser::contents::InkStroke) -> Brush {
    let mut b = Brush::default();
    if let Some(c) = s.color() {
        // COLORREF: 0x00BBGGRR.
        let [r, g, bl, _] = c.to_le_bytes();
        b.color = format!("#{r:02x}{g:02x}{bl:02x}");
    }
    let w = f64::from(s.width()) * PX_PER_INK_UNIT;
    if w.is_finite() && w > 0.0 {
        b.width = w.min(200.0);
    }
    if let Some(t) = s.transparency() {
        b.opacity = f64::from(255 - t) / 255.0;
        b.highlighter = t > 0 && t < 255;
    }
    b
}

/// A styled piece of a paragraph.
struct Segment {
    text: String,
    style: RunStyle,
    link: Option<String>,
}

#[derive(Clone, Default)]
struct RunStyle {
    bold: bool,
    italic: bool,
    underline: bool,
    strike: bool,
    superscript: bool,
    subscript: bool,
    font: Option<String>,
    size: Option<u16>,
    color: Option<(u8, u8, u8)>,
    highlight: Option<(u8, u8, u8)>,
}

fn manual(c: Option<ColorRef>) -> Option<(u8, u8, u8)> {
    match c? {
        ColorRef::Manual { r, g, b } => Some((r, g, b)),
        ColorRef::Auto => None,
    }
}

fn run_css(s: &RunStyle) -> String {
    let mut css = String::new();
    if s.bold {
        css.push_str("font-weight:bold;");
    }
    if s.italic {
        css.push_str("font-style:italic;");
    }
    match (s.underline, s.strike) {
        (true, true) => css.push_str("text-decoration:underline line-through;"),
        (true, false) => css.push_str("text-decoration:underline;"),
        (false, true) => css.push_str("text-decoration:line-through;"),
        (false, false) => {}
    }
    if let Some(f) = &s.font {
        let _ = write!(css, "font-family:{};", attr(f));
    }
    if let Some(sz) = s.size.filter(|&s| s != DEFAULT_FONT_HALF_POINTS && s > 0) {
        let _ = write!(css, "font-size:{}pt;", f32::from(sz) / 2.0);
    }
    if let Some((r, g, b)) = s.color {
        let _ = write!(css, "color:#{r:02x}{g:02x}{b:02x};");
    }
    if let Some((r, g, b)) = s.highlight {
        let _ = write!(css, "background-color:#{r:02x}{g:02x}{b:02x};");
    }
    css
}

/// The visible text of a paragraph cut at every run and link boundary (UTF-16 offsets, as OneNote
/// stores them), hidden runs (the `HYPERLINK` markers) left out.
fn segments(rt: &OneText) -> Vec<Segment> {
    let utf16: Vec<u16> = rt.text().encode_utf16().collect();
    let n = utf16.len();
    let formatting = rt.text_run_formatting();
    let base = rt.paragraph_style();
    // Run i covers [bounds[i], bounds[i + 1]).
    let mut bounds: Vec<usize> = vec![0];
    bounds.extend(rt.text_run_indices().iter().map(|&i| (i as usize).min(n)));
    let links = rt.hyperlinks();
    let mut cuts: Vec<usize> = bounds.clone();
    cuts.push(n);
    for l in &links {
        cuts.push((l.start() as usize).min(n));
        cuts.push((l.end() as usize).min(n));
    }
    cuts.sort_unstable();
    cuts.dedup();
    let mut out: Vec<Segment> = Vec::new();
    for w in cuts.windows(2) {
        let (from, to) = (w[0], w[1]);
        if from >= to {
            continue;
        }
        // The run this piece is in: the last run starting at or before it.
        let run = bounds.partition_point(|&b| b <= from).saturating_sub(1);
        let fmt = formatting.get(run);
        if fmt.is_some_and(|f| f.hidden()) {
            continue;
        }
        let f = fmt.unwrap_or(base);
        let style = RunStyle {
            bold: f.bold() || base.bold(),
            italic: f.italic() || base.italic(),
            underline: f.underline() || base.underline(),
            strike: f.strikethrough() || base.strikethrough(),
            superscript: f.superscript(),
            subscript: f.subscript(),
            font: f.font().map(str::to_string).filter(|_| fmt.is_some()),
            size: f.font_size().filter(|_| fmt.is_some()),
            color: manual(f.font_color()),
            highlight: manual(f.highlight()),
        };
        let link = links
            .iter()
            .find(|l| (l.start() as usize) <= from && to <= (l.end() as usize))
            .map(|l| l.target().to_string());
        let text = String::from_utf16_lossy(&utf16[from..to]);
        let text = strip_markers(&text);
        if text.is_empty() {
            continue;
        }
        out.push(Segment { text, style, link });
    }
    out
}

/// Removes a `HYPERLINK "…"` field marker left in visible text (OneNote marks it hidden, but a
/// file without run formatting shows it).
fn strip_markers(s: &str) -> String {
    const MARK: &str = "\u{fddf}HYPERLINK \"";
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find(MARK) {
        out.push_str(&rest[..i]);
        let after = &rest[i + MARK.len()..];
        rest = match after.find('"') {
            Some(q) => &after[q + 1..],
            None => "",
        };
    }
    out.push_str(rest);
    out.retain(|c| c != '\u{fddf}');
    out
}

/// The list kind of an element that is a list item: numbered when the list format holds a
/// number placeholder (OneNote writes U+FFFD where the number goes), bulleted otherwise.
fn list_kind(e: &OutlineElement) -> Option<ListKind> {
    let l = e.list_contents().first()?;
    Some(if l.list_format().contains(&'\u{fffd}') {
        ListKind::Numbered
    } else {
        ListKind::Bulleted
    })
}

/// The `data-tag` value Graph writes for a paragraph's note tags.
fn data_tag(tags: &[NoteTag]) -> Option<String> {
    let names: Vec<String> = tags
        .iter()
        .filter_map(|t| {
            let d = t.definition()?;
            let checkable = d.shape().is_checkable();
            let mut name = tag_name(d.label(), checkable);
            if checkable && t.item_status().completed() {
                name.push_str(":completed");
            }
            Some(name)
        })
        .collect();
    (!names.is_empty()).then(|| names.join(","))
}

/// Graph's name for a tag from its label (`To Do` → `to-do`, `Discuss with <Person A>` →
/// `discuss-with-person-a`); a label of the user's own is `to-do` when it is a check box.
fn tag_name(label: &str, checkable: bool) -> String {
    let slug: String = label
        .to_ascii_lowercase()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { ' ' })
        .collect::<String>()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join("-");
    let known = [
        "to-do",
        "important",
        "question",
        "critical",
        "idea",
        "definition",
        "highlight",
        "contact",
        "address",
        "phone-number",
        "web-site-to-visit",
        "password",
        "remember-for-later",
        "remember-for-blog",
        "project-a",
        "project-b",
        "movie-to-see",
        "book-to-read",
        "music-to-listen-to",
        "source-for-article",
        "discuss-with-person-a",
        "discuss-with-person-b",
        "discuss-with-manager",
        "send-in-email",
        "schedule-meeting",
        "call-back",
        "client-request",
        "to-do-priority-1",
        "to-do-priority-2",
    ];
    if known.contains(&slug.as_str()) {
        slug
    } else if checkable {
        "to-do".into()
    } else if slug.is_empty() {
        "tag".into()
    } else {
        slug
    }
}

fn read_all(mut r: Box<dyn Read>) -> std::io::Result<Bytes> {
    let mut buf = Vec::new();
    r.read_to_end(&mut buf)?;
    Ok(Bytes::from(buf))
}

fn mime_of(ext: &str) -> &'static str {
    match ext {
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "bmp" => "image/bmp",
        "tif" | "tiff" => "image/tiff",
        "webp" => "image/webp",
        "svg" => "image/svg+xml",
        "emf" => "image/emf",
        "wmf" => "image/wmf",
        "pdf" => "application/pdf",
        "txt" => "text/plain",
        "mp3" => "audio/mpeg",
        "wav" => "audio/wav",
        "wma" => "audio/x-ms-wma",
        "mp4" => "video/mp4",
        "doc" => "application/msword",
        "docx" => "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        "xlsx" => "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
        "pptx" => "application/vnd.openxmlformats-officedocument.presentationml.presentation",
        "zip" => "application/zip",
        _ => "application/octet-stream",
    }
}

/// Text as HTML content: escaped, line breaks (`\n`, `\r`, U+000B) as `<br />`.
fn text_into(out: &mut String, s: &str) {
    let mut first = true;
    for line in s.split(['\n', '\r', '\u{b}']) {
        if !first {
            out.push_str("<br />");
        }
        first = false;
        escape_into(out, line);
    }
}

fn escape_into(out: &mut String, s: &str) {
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            // Control characters are not text in HTML; the converter would drop them anyway.
            c if c.is_control() && c != '\t' => {}
            c => out.push(c),
        }
    }
}

/// A value for a double-quoted attribute.
fn attr(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '"' => out.push_str("&quot;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers_and_names() {
        assert_eq!(
            strip_markers("a\u{fddf}HYPERLINK \"https://x\"link b"),
            "alink b"
        );
        assert_eq!(tag_name("To Do", true), "to-do");
        assert_eq!(
            tag_name("Discuss with <Person A>", true),
            "discuss-with-person-a"
        );
        assert_eq!(tag_name("My own box", true), "to-do");
        assert_eq!(tag_name("Web site to visit", false), "web-site-to-visit");
        assert_eq!(tag_name("Mine", false), "mine");
        let mut s = String::new();
        text_into(&mut s, "a<b\nc");
        assert_eq!(s, "a&lt;b<br />c");
    }
}
