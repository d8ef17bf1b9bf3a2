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

use crate::convert::rich_text::{split_text, MAX_TEXT};
use crate::convert::{
    Annotations, Block, Color, EmbeddedFile, Hue, Ink, MediaSource, PositionedBlock, RichKind,
    RichText, TextBlock, EMBEDDED_SCHEME,
};
use crate::ink::inkml::{Brush, Stroke};

/// CSS px per half inch (OneNote's layout unit): 96 px per inch.
const PX_PER_HALF_INCH: f32 = 48.0;
/// CSS px per ink unit (0.01 mm).
const PX_PER_INK_UNIT: f64 = 96.0 / 2540.0;
/// Outline nesting rendered as nesting; deeper items are rendered at this depth, in order (the
/// converter flattens deep lists further by its own rule).
const MAX_NESTING: usize = 40;
/// CSS px a paragraph is indented per outline level (OneNote's default indent, 0.375 in).
const PX_PER_INDENT: usize = 36;
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
    /// The note tags used on the page by the labels the file gives them (the user's own tags
    /// included, which `data-tag` can only name by a slug), in order of first use.
    pub tags: Vec<String>,
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
    let lines: Vec<Vec<(u32, &str)>> = page
        .ink_recognition()
        .map(|rec| {
            rec.lines()
                .iter()
                .map(|l| {
                    l.words()
                        .iter()
                        .filter_map(|w| w.text().map(|t| (w.id(), t)))
                        .collect()
                })
                .collect()
        })
        .unwrap_or_default();
    r.read_order(&lines);
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
                pen_strokes(ink, f64::from(top), f64::from(left), &mut r.page_pen);
            }
            PageContent::Unknown => r.note(
                "page element of a kind the parser does not read",
                "not migrated",
            ),
        }
    }
    r.html.push_str("</body></html>");
    r.page_ink();
    if !lines.is_empty() {
        r.recognition(&lines);
    }
    Rendered {
        html: r.html,
        files: r.files,
        ink: Ink::Drawings(r.drawings),
        notes: r.notes,
        tags: r.tags,
    }
}

/// Distinct tag labels kept per page: far more than OneNote's tag gallery offers, and a bound on
/// what a hostile file can make a row carry.
const MAX_PAGE_TAGS: usize = 100;
/// Longest tag label kept, in characters (Notion's option names stop at 100; the mapping to an
/// accepted name cuts there and says so).
const MAX_TAG_LABEL: usize = 200;

/// A tag's label as a row's tag name: trimmed and bounded; `None` when empty.
fn tag_label(raw: &str) -> Option<String> {
    let t = raw.trim();
    (!t.is_empty()).then(|| t.chars().take(MAX_TAG_LABEL).collect())
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
    /// The outline level of the paragraphs being written (0 outside outlines' nesting).
    indent: usize,
    /// `(top, left)` of the outline being written.
    outline_at: (f64, f64),
    /// Where the page's first drawing is, in reading order: the recognised handwriting goes
    /// right after it.
    ink_at: Option<(f64, f64)>,
    /// The recognised words the drawings' strokes name (in their captions already).
    named_words: std::collections::HashSet<u32>,
    /// Where each recognised word is in the recogniser's reading order: `(line, place)` by id.
    word_at: std::collections::HashMap<u32, (usize, usize)>,
    /// The strokes of the ink on the page itself (every ink object's), grouped once they are all
    /// known.
    page_pen: Vec<PenStroke>,
    /// The page's tag labels so far ([`Rendered::tags`]).
    tags: Vec<String>,
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
        self.outline_at = (f64::from(top), f64::from(left));
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
                        // Indented as Graph writes an outline level: a left margin per level.
                        self.indent = depth;
                        self.element_contents(e, false);
                        self.indent = 0;
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
                    self.indent = MAX_NESTING;
                    self.element_contents(e, false);
                    self.indent = 0;
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
        for t in rt.note_tags() {
            let label = t.definition().and_then(|d| tag_label(d.label()));
            if let Some(l) = label {
                if self.tags.len() < MAX_PAGE_TAGS && !self.tags.contains(&l) {
                    self.tags.push(l);
                }
            }
        }
        let tags = data_tag(rt.note_tags());
        let mut attrs = String::new();
        if let Some(t) = &tags {
            let _ = write!(attrs, " data-tag=\"{}\"", attr(t));
        }
        let mut css = String::new();
        if let Some(f) = style.font() {
            let _ = write!(css, "font-family:{};", attr(f));
        }
        if !in_list && self.indent > 0 {
            let _ = write!(css, "margin-left:{}px;", self.indent * PX_PER_INDENT);
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
        let segs = segments(rt);
        // The inline objects belong to the math-formatted runs, in order.
        let mut objects = rt.math_inline_objects().iter();
        let mut run_object = std::collections::HashMap::new();
        for (i, f) in rt.text_run_formatting().iter().enumerate() {
            if f.math_formatting() {
                if let Some(o) = objects.next() {
                    run_object.insert(i, o);
                }
            }
        }
        let display = !segs.is_empty() && segs.iter().all(|s| s.math);
        let mut i = 0;
        while i < segs.len() {
            if segs[i].math {
                let mut runs = Vec::new();
                let mut seen = std::collections::HashSet::new();
                while i < segs.len() && segs[i].math {
                    let first = seen.insert(segs[i].run);
                    runs.push(super::math::MathRun {
                        text: &segs[i].text,
                        object: if first {
                            run_object.get(&segs[i].run).copied()
                        } else {
                            None
                        },
                    });
                    i += 1;
                }
                self.html.push_str(&super::math::mathml(&runs, display));
                continue;
            }
            let seg = &segs[i];
            i += 1;
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
                // A cell's paragraphs start at its edge, whatever the table's level.
                let level = std::mem::take(&mut self.indent);
                for e in cell.contents() {
                    self.element_contents(e, false);
                }
                self.indent = level;
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
        let given = img
            .image_filename()
            .map(str::trim)
            .filter(|n| !n.is_empty())
            .map(str::to_string);
        let own_shown = own_format_shown(img);
        // A page number on a picture that is a document, not a picture Notion shows, makes it
        // a file printout's page (OneNote numbers some plain pictures too).
        let printout = img.displayed_page_number().filter(|_| !own_shown);
        let picture = picture_of(img, own_shown);
        if printout.is_some() && !picture.as_ref().is_some_and(|p| p.shown) {
            self.lost_printout_page(img, given.as_deref(), printout, pos);
            return;
        }
        let bytes = picture.as_ref().map(|p| p.bytes.clone());
        // The bytes say what the picture is; the name and extension only when they do not.
        let ext = picture
            .as_ref()
            .and_then(|p| p.format)
            .map(str::to_string)
            .or_else(|| {
                img.extension()
                    .map(|e| e.trim_start_matches('.').to_ascii_lowercase())
            })
            .or_else(|| {
                given
                    .as_deref()
                    .and_then(|n| n.rsplit_once('.'))
                    .map(|(_, e)| e.to_ascii_lowercase())
            })
            .filter(|e| {
                !e.is_empty() && e.len() <= 8 && e.bytes().all(|b| b.is_ascii_alphanumeric())
            });
        let mime = ext
            .as_deref()
            .and_then(crate::mime::of_extension)
            .unwrap_or(crate::mime::OCTET_STREAM);
        let rendition = picture.as_ref().is_some_and(|p| p.rendition);
        let name = match (&given, printout) {
            // A printout page is a picture of one page of its document, named after both.
            (_, Some(n)) => format!(
                "{} page {}.{}",
                given.as_deref().unwrap_or("printout"),
                u64::from(n) + 1,
                ext.as_deref().unwrap_or("bin")
            ),
            (Some(g), None) if rendition => {
                format!("{g}.{}", ext.as_deref().unwrap_or("bin"))
            }
            (Some(g), None) => g.clone(),
            (None, None) => format!(
                "image-{}.{}",
                self.files.len() + 1,
                ext.as_deref().unwrap_or("bin")
            ),
        };
        if rendition {
            self.note(
                if printout.is_some() {
                    "file printout page"
                } else {
                    "picture in a format Notion does not show"
                },
                "the picture OneNote keeps of it for browsers, uploaded instead",
            );
        }
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
        let alt = caption_of(img, given.as_deref(), printout);
        let _ = write!(
            self.html,
            "<img{a} alt=\"{}\" src=\"{}\" data-src-type=\"{mime}\" />",
            attr(&alt),
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

    /// A printout page with no picture Notion can show: a placeholder naming the document and the
    /// page, then the page's recognised text, so that what it said is still on the page.
    fn lost_printout_page(
        &mut self,
        img: &Image,
        name: Option<&str>,
        page: Option<u32>,
        pos: Option<(f32, f32)>,
    ) {
        let text = recognised_text(img);
        self.printout_placeholder(name, page, text.as_deref(), pos);
    }

    fn printout_placeholder(
        &mut self,
        name: Option<&str>,
        page: Option<u32>,
        text: Option<&str>,
        pos: Option<(f32, f32)>,
    ) {
        let page = page.map_or(1, |n| u64::from(n) + 1);
        let name = name.unwrap_or("a file printout");
        self.note(
            "file printout page without a picture of it",
            "placeholder naming the file and page, its recognised text kept below",
        );
        match pos {
            Some((top, left)) => {
                let _ = write!(
                    self.html,
                    "<div style=\"position:absolute;left:{left}px;top:{top}px\">"
                );
            }
            None => self.html.push_str("<div>"),
        }
        self.html.push_str("<p>🖨️ ");
        escape_into(
            &mut self.html,
            &format!(
                "Printout of {name}, page {page} (not carried over: the file holds no picture of \
                 this page that Notion can show)"
            ),
        );
        self.html.push_str("</p>");
        if let Some(text) = text {
            self.html.push_str("<p>");
            text_into(&mut self.html, text);
            self.html.push_str("</p>");
        }
        self.html.push_str("</div>");
    }

    fn file(&mut self, f: &OneFile) {
        let name = f.filename().trim();
        let name = if name.is_empty() { "file" } else { name };
        let mime = crate::mime::for_name(name);
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

    /// Where each recognised word is in the recogniser's reading order (its lines, in order).
    fn read_order(&mut self, lines: &[Vec<(u32, &str)>]) {
        for (l, line) in lines.iter().enumerate() {
            for (k, (id, _)) in line.iter().enumerate() {
                self.word_at.entry(*id).or_insert((l, k));
            }
        }
    }

    /// Ink inside an outline (a paragraph, a table cell): its drawings in place, as pictures,
    /// grouped by the same rule as the ink on the page. An inline ink object's strokes are in its
    /// own space, so objects are grouped one at a time.
    fn inline_ink(&mut self, ink: &OneInk) {
        let mut pen = Vec::new();
        pen_strokes(ink, 0.0, 0.0, &mut pen);
        self.inline_pen(&pen);
    }

    /// One inline ink object's strokes ([`Self::inline_ink`]) written in place.
    fn inline_pen(&mut self, pen: &[PenStroke]) {
        for d in drawings(pen, &self.word_at) {
            self.inline_ink += 1;
            self.count_drawing(&d);
            self.first_ink_at(self.outline_at);
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
            if let Some(text) = &d.text_below {
                self.html.push_str("<p>");
                escape_into(&mut self.html, text);
                self.html.push_str("</p>");
            }
        }
    }

    /// The ink on the page itself: every ink object's strokes grouped into drawings together, each
    /// placed by its position among the outlines.
    fn page_ink(&mut self) {
        let pen = std::mem::take(&mut self.page_pen);
        for d in drawings(&pen, &self.word_at) {
            self.place_drawing(d);
        }
    }

    /// Counts a drawing, once, and its recognised words in the page's report (words already in
    /// its caption or under it are not repeated by the page's recognition paragraph).
    fn count_drawing(&mut self, d: &Drawn) {
        let (element, action) = crate::ink::DRAWING_REPORTED;
        self.note(element, action);
        self.named_words.extend(d.words.iter().copied());
        for _ in &d.words {
            self.note(
                "ink (recognised handwriting, words)",
                "kept as text with their drawing",
            );
        }
    }

    /// A drawing on the page itself, placed by its position.
    fn place_drawing(&mut self, d: Drawn) {
        self.count_drawing(&d);
        self.first_ink_at((d.top, d.left));
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
        if let Some(text) = d.text_below {
            // Same place, pushed after: reading order keeps it right under the drawing.
            self.drawings.push(PositionedBlock {
                top: d.top,
                left: d.left,
                block: Block::Paragraph(TextBlock::new(
                    split_text(&text, MAX_TEXT)
                        .into_iter()
                        .map(RichText::plain)
                        .collect(),
                )),
            });
        }
    }

    fn first_ink_at(&mut self, at: (f64, f64)) {
        let earlier =
            |a: (f64, f64), b: (f64, f64)| a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)).is_lt();
        if self.ink_at.is_none_or(|now| earlier(at, now)) {
            self.ink_at = Some(at);
        }
    }

    /// The page's handwriting recognition (`lines` of `(word id, best guess)`), kept once: the
    /// words a drawing's strokes name are in its caption already; the others go in a paragraph
    /// right after the page's first drawing, or at the page's end when no stroke is on it.
    fn recognition(&mut self, lines: &[Vec<(u32, &str)>]) {
        let text = unnamed_words(lines, &self.named_words);
        if text.is_empty() {
            return;
        }
        let (at, label, action) = match self.ink_at {
            Some(at) => (
                at,
                "Handwriting recognised by OneNote: ",
                "kept as a paragraph after the drawing",
            ),
            // Reading order puts it after everything else on the page.
            None => (
                (f64::MAX, f64::MAX),
                "Handwriting recognised by OneNote (its strokes are not in the file): ",
                "its recognised text kept as a paragraph at the end of the page",
            ),
        };
        self.note(
            if self.ink_at.is_some() {
                "handwriting recognition its strokes do not name"
            } else {
                "handwriting recognition without strokes"
            },
            action,
        );
        let mut rich = vec![RichText {
            kind: RichKind::Text {
                content: label.into(),
                link: None,
            },
            annotations: Annotations {
                italic: true,
                color: Color::Text(Hue::Gray),
                ..Default::default()
            },
        }];
        rich.extend(split_text(&text, MAX_TEXT).into_iter().map(RichText::plain));
        self.drawings.push(PositionedBlock {
            top: at.0,
            left: at.1,
            block: Block::Paragraph(TextBlock::new(rich)),
        });
    }
}

/// The bytes a picture is shown with.
struct Picture {
    bytes: Bytes,
    /// The format the bytes announce.
    format: Option<&'static str>,
    /// Notion shows that format.
    shown: bool,
    /// The bytes are the browser-compatible rendition OneNote keeps beside the picture (a file
    /// printout's page, an EMF), not the picture itself.
    rendition: bool,
}

/// What a picture is shown with: its own bytes when Notion shows their format, else the rendition
/// OneNote keeps for browsers when Notion shows that, else its own bytes (or the rendition when it
/// has no bytes of its own). A printout's own bytes are the whole document, so they are only
/// read when nothing else shows the page. `own_shown`: [`own_format_shown`].
fn picture_of(img: &Image, own_shown: bool) -> Option<Picture> {
    let own = || -> Option<Picture> {
        let bytes = match img.data_status() {
            FileDataStatus::Available => img.read().and_then(|r| read_all(r).ok()),
            _ => None,
        }
        .filter(|b| !b.is_empty())?;
        Some(picture(bytes, false))
    };
    let web = || -> Option<Picture> {
        let w = img.web_picture()?;
        if w.data_status() != FileDataStatus::Available {
            return None;
        }
        let bytes = read_all(w.read()).ok().filter(|b| !b.is_empty())?;
        Some(picture(bytes, true))
    };
    if own_shown {
        return own();
    }
    match web() {
        Some(w) if w.shown => Some(w),
        w => own().or(w),
    }
}

fn picture(bytes: Bytes, rendition: bool) -> Picture {
    let format = sniff_image(&bytes);
    Picture {
        shown: format.is_some_and(|f| crate::mime::notion_accepts(&format!("x.{f}"))),
        format,
        bytes,
        rendition,
    }
}

/// Whether the picture's own bytes are in a format Notion shows, from their first bytes alone.
fn own_format_shown(img: &Image) -> bool {
    if img.data_status() != FileDataStatus::Available {
        return false;
    }
    let Some(r) = img.read() else {
        return false;
    };
    let mut head = Vec::with_capacity(64);
    if r.take(64).read_to_end(&mut head).is_err() {
        return false;
    }
    sniff_image(&head).is_some_and(|f| crate::mime::notion_accepts(&format!("x.{f}")))
}

/// The text OneNote recognised in a picture (its OCR), or its alternative text.
fn recognised_text(img: &Image) -> Option<String> {
    let mut parts: Vec<&str> = Vec::new();
    for t in [img.alt_text(), img.text()].into_iter().flatten() {
        let t = t.trim();
        if !t.is_empty() && !parts.contains(&t) {
            parts.push(t);
        }
    }
    (!parts.is_empty()).then(|| parts.join("\n"))
}

/// A picture's caption: a printout page names its document and page; then the text OneNote
/// recognised in it (both the alternative text and the OCR text when they differ), so the
/// picture's words stay searchable.
fn caption_of(img: &Image, name: Option<&str>, printout: Option<u32>) -> String {
    let text = recognised_text(img);
    match printout {
        Some(n) => {
            let head = format!(
                "Printout of {}, page {}",
                name.unwrap_or("a file"),
                u64::from(n) + 1
            );
            match text {
                Some(t) => format!("{head}: {t}"),
                None => head,
            }
        }
        None => text.unwrap_or_default(),
    }
}

/// One drawing of ink: strokes grouped by [`crate::ink::group`], rendered as one picture.
struct Drawn {
    svg: String,
    top: f64,
    left: f64,
    caption: String,
    /// The recognised text when the caption cannot hold it: a paragraph right under the drawing.
    text_below: Option<String>,
    /// The recognised words its strokes name, by id.
    words: Vec<u32>,
}

/// One stroke as the file gives it: absolute points in ink units and its pen.
struct PenStroke {
    points: Vec<(f32, f32)>,
    /// Where the ink object holding it is on the page, CSS px: `(top, left)`.
    at: (f64, f64),
    color: Option<u32>,
    width: f32,
    transparency: Option<u8>,
    /// The handwriting-recognition word it belongs to: `(id, best guess)`.
    word: Option<(u32, String)>,
}

/// Appends an ink object's strokes (every nested group's, iteratively, in document order) placed at
/// `(top, left)` CSS px.
fn pen_strokes(ink: &OneInk, top: f64, left: f64, out: &mut Vec<PenStroke>) {
    let mut stack: Vec<&OneInk> = vec![ink];
    while let Some(i) = stack.pop() {
        stack.extend(i.child_groups().iter().rev());
        for s in i.ink_strokes() {
            out.push(PenStroke {
                points: s.absolute_path().iter().map(|p| (p.x(), p.y())).collect(),
                at: (top, left),
                color: s.color(),
                width: s.width(),
                transparency: s.transparency(),
                word: s
                    .recognized_word()
                    .and_then(|w| w.text().map(|t| (w.id(), t.to_string()))),
            });
        }
    }
}

/// The longest caption Notion takes (characters of one rich-text item).
const MAX_CAPTION: usize = 2000;

/// Strokes grouped into drawings by the rule both routes share (strokes of one recognised line
/// together), in reading order; each drawing's recognised words once, in the recogniser's reading
/// order (`word_at`; words it does not place follow in stroke order), in its caption, or in a
/// paragraph under it when the caption cannot hold them.
fn drawings(
    pen: &[PenStroke],
    word_at: &std::collections::HashMap<u32, (usize, usize)>,
) -> Vec<Drawn> {
    let mut strokes: Vec<Stroke> = Vec::with_capacity(pen.len());
    let mut words: Vec<Option<(u32, &str)>> = Vec::with_capacity(pen.len());
    for s in pen {
        let (top, left) = s.at;
        let points: Vec<(f64, f64)> = s
            .points
            .iter()
            .map(|&(x, y)| {
                (
                    left + f64::from(x) * PX_PER_INK_UNIT,
                    top + f64::from(y) * PX_PER_INK_UNIT,
                )
            })
            .filter(|(x, y)| x.is_finite() && y.is_finite())
            .collect();
        if points.is_empty() {
            continue;
        }
        strokes.push(Stroke {
            points,
            brush: brush(s),
            time_ms: None,
        });
        words.push(s.word.as_ref().map(|(id, t)| (*id, t.as_str())));
    }
    // A recognised line is known by the line of its words; a word the recognition does not list
    // keeps its strokes together by itself.
    let lines: Vec<Option<u64>> = words
        .iter()
        .map(|w| {
            w.map(|(id, _)| match word_at.get(&id) {
                Some(&(line, _)) => line as u64,
                None => (1 << 40) + u64::from(id),
            })
        })
        .collect();
    crate::ink::group::group_lines(&strokes, &lines)
        .into_iter()
        .map(|g| {
            let refs: Vec<&Stroke> = g.iter().map(|&i| &strokes[i]).collect();
            let mut named: Vec<(u32, &str)> = Vec::new();
            let mut seen = std::collections::HashSet::new();
            for &i in &g {
                if let Some((id, t)) = words[i] {
                    if seen.insert(id) {
                        named.push((id, t));
                    }
                }
            }
            // Stable: words the recognition does not place keep their stroke order, last.
            named.sort_by_key(|(id, _)| word_at.get(id).copied().unwrap_or((usize::MAX, 0)));
            let d = crate::ink::render_drawing(&refs);
            let (caption, text_below) = caption_and_text(&d.description, &named, word_at);
            Drawn {
                svg: d.svg,
                top: d.top,
                left: d.left,
                caption,
                text_below,
                words: named.iter().map(|(id, _)| *id).collect(),
            }
        })
        .collect()
}

/// A drawing's caption with its recognised words (a line break between recognised lines is a
/// space), or the bare description and the words as a paragraph of their own (lines kept) when
/// the caption would pass [`MAX_CAPTION`].
fn caption_and_text(
    description: &str,
    named: &[(u32, &str)],
    word_at: &std::collections::HashMap<u32, (usize, usize)>,
) -> (String, Option<String>) {
    let mut lines: Vec<Vec<&str>> = Vec::new();
    let mut last_line = None;
    for (id, t) in named {
        let t = t.trim();
        if t.is_empty() {
            continue;
        }
        let line = word_at.get(id).map(|&(l, _)| l);
        match lines.last_mut() {
            Some(cur) if line == last_line => cur.push(t),
            _ => lines.push(vec![t]),
        }
        last_line = line;
    }
    if lines.is_empty() {
        return (description.to_string(), None);
    }
    let flat: Vec<String> = lines.iter().map(|l| l.join(" ")).collect();
    let caption = format!("{description}: “{}”", flat.join(" "));
    if caption.chars().count() <= MAX_CAPTION {
        (caption, None)
    } else {
        (description.to_string(), Some(flat.join("\n")))
    }
}

/// The recognised words, line by line, that no drawing names (each word once).
fn unnamed_words(lines: &[Vec<(u32, &str)>], named: &std::collections::HashSet<u32>) -> String {
    let mut seen = std::collections::HashSet::new();
    let mut out: Vec<String> = Vec::new();
    for line in lines {
        let words: Vec<&str> = line
            .iter()
            .filter(|(id, t)| !named.contains(id) && seen.insert(*id) && !t.trim().is_empty())
            .map(|(_, t)| t.trim())
            .collect();
        if !words.is_empty() {
            out.push(words.join(" "));
        }
    }
    out.join("\n")
}

fn brush(s: &PenStroke) -> Brush {
    let mut b = Brush::default();
    if let Some(c) = s.color {
        // COLORREF: 0x00BBGGRR.
        let [r, g, bl, _] = c.to_le_bytes();
        b.color = format!("#{r:02x}{g:02x}{bl:02x}");
    }
    let w = f64::from(s.width) * PX_PER_INK_UNIT;
    if w.is_finite() && w > 0.0 {
        b.width = w.min(200.0);
    }
    // A translucent pen is OneNote's highlighter; a fully transparent value draws as opaque ink
    // rather than nothing.
    if let Some(t) = s.transparency.filter(|&t| t > 0 && t < 255) {
        b.opacity = f64::from(255 - t) / 255.0;
        b.highlighter = true;
    }
    b
}

/// A styled piece of a paragraph.
struct Segment {
    text: String,
    style: RunStyle,
    link: Option<String>,
    /// The text run it is part of.
    run: usize,
    /// The run is math-formatted (part of an equation).
    math: bool,
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
        let math = fmt.is_some_and(|f| f.math_formatting());
        out.push(Segment {
            text,
            style,
            link,
            run,
            math,
        });
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
    Some(kind_of_format(l.list_format()))
}

fn kind_of_format(format: &[char]) -> ListKind {
    if format.contains(&'\u{fffd}') {
        ListKind::Numbered
    } else {
        ListKind::Bulleted
    }
}

/// The `data-tag` value Graph writes for a paragraph's note tags.
fn data_tag(tags: &[NoteTag]) -> Option<String> {
    let names: Vec<String> = tags
        .iter()
        .filter_map(|t| {
            let d = t.definition()?;
            Some(tag_value(
                d.label(),
                d.shape().is_checkable(),
                t.item_status().completed(),
            ))
        })
        .collect();
    (!names.is_empty()).then(|| names.join(","))
}

/// One tag as `data-tag` writes it: its name, `:completed` on a ticked check box.
fn tag_value(label: &str, checkable: bool, completed: bool) -> String {
    let mut name = tag_name(label, checkable);
    if checkable && completed {
        name.push_str(":completed");
    }
    name
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

/// The picture format its first bytes announce.
fn sniff_image(b: &[u8]) -> Option<&'static str> {
    Some(if b.starts_with(b"\x89PNG\r\n\x1a\n") {
        "png"
    } else if b.starts_with(b"\xff\xd8\xff") {
        "jpg"
    } else if b.starts_with(b"GIF8") {
        "gif"
    } else if b.starts_with(b"BM") {
        "bmp"
    } else if b.starts_with(b"II*\0") || b.starts_with(b"MM\0*") {
        "tiff"
    } else if b.len() >= 12 && &b[..4] == b"RIFF" && &b[8..12] == b"WEBP" {
        "webp"
    } else if b.starts_with(b"\x01\0\0\0") && b.get(40..44) == Some(b" EMF") {
        "emf"
    } else {
        return None;
    })
}

fn read_all(mut r: Box<dyn Read>) -> std::io::Result<Bytes> {
    let mut buf = Vec::new();
    r.read_to_end(&mut buf)?;
    Ok(Bytes::from(buf))
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
        assert_eq!(tag_value("To Do", true, true), "to-do:completed");
        assert_eq!(tag_value("Important", false, true), "important");
        // A row's tags keep the label as the user wrote it, commas included (the mapping to a
        // name Notion accepts is the database layout's, and is reported there).
        assert_eq!(
            tag_label(" Call back, later "),
            Some("Call back, later".into())
        );
        assert_eq!(tag_label("My own box"), Some("My own box".into()));
        assert_eq!(tag_label("   "), None);
        assert_eq!(
            tag_label(&"x".repeat(500)).unwrap().chars().count(),
            MAX_TAG_LABEL
        );
        let mut s = String::new();
        text_into(&mut s, "a<b\nc");
        assert_eq!(s, "a&lt;b<br />c");
    }

    #[test]
    fn list_formats_give_the_list_kind() {
        // OneNote writes U+FFFD where the number goes ("1.", "a)") and the bullet itself otherwise.
        assert!(kind_of_format(&['\u{fffd}', '.']) == ListKind::Numbered);
        assert!(kind_of_format(&['(', '\u{fffd}', ')']) == ListKind::Numbered);
        assert!(kind_of_format(&['•']) == ListKind::Bulleted);
        assert!(kind_of_format(&[]) == ListKind::Bulleted);
    }

    #[test]
    fn run_styles_become_the_css_the_converter_reads() {
        let s = RunStyle {
            bold: true,
            italic: true,
            underline: true,
            strike: true,
            font: Some("Consolas".into()),
            size: Some(DEFAULT_FONT_HALF_POINTS),
            color: Some((0xff, 0, 0)),
            highlight: Some((0xff, 0xff, 0)),
            ..RunStyle::default()
        };
        assert_eq!(
            run_css(&s),
            "font-weight:bold;font-style:italic;text-decoration:underline line-through;\
             font-family:Consolas;color:#ff0000;background-color:#ffff00;"
        );
        let big = RunStyle {
            size: Some(28),
            ..RunStyle::default()
        };
        assert_eq!(run_css(&big), "font-size:14pt;");
    }

    #[test]
    fn pictures_are_known_by_their_bytes() {
        assert_eq!(sniff_image(b"\x89PNG\r\n\x1a\nrest"), Some("png"));
        assert_eq!(sniff_image(b"\xff\xd8\xff\xe0"), Some("jpg"));
        assert_eq!(sniff_image(b"GIF89a"), Some("gif"));
        assert_eq!(sniff_image(b"plain"), None);
    }

    /// The HTML the renderer writes, converted by the one converter: each content kind becomes the
    /// block the API route makes of the same markup.
    #[test]
    fn the_dialect_written_becomes_the_api_routes_blocks() {
        use crate::convert::{convert_page_with_files, Color, ConvertOptions, Hue, RichKind};
        let red_bold = run_css(&RunStyle {
            bold: true,
            color: Some((0xe0, 0x10, 0x10)),
            ..RunStyle::default()
        });
        let mono = run_css(&RunStyle {
            font: Some("Consolas".into()),
            ..RunStyle::default()
        });
        let mut body = String::new();
        text_into(&mut body, "line one\nline two");
        let html = format!(
            "<html><head><title>T</title><meta name=\"created\" content=\"2020-01-02T03:04:05Z\" /></head>\
             <body data-absolute-enabled=\"true\">\
             <div style=\"position:absolute;left:48px;top:300px\"><p>below</p></div>\
             <div style=\"position:absolute;left:48px;top:100px\">\
             <h1>Head</h1><h5>Small</h5>\
             <p data-tag=\"{done}\">Done</p><p data-tag=\"{open}\">Open</p>\
             <ul><li><span>a</span><br /><ol><li><span>n1</span><br /></li></ol></li></ul>\
             <blockquote><p>q</p></blockquote>\
             <p><span style=\"{mono}\">let x = 1;</span></p>\
             <p><span style=\"{red_bold}\">red</span>x<sup>2</sup></p>\
             <p><a href=\"onenote:#P&amp;section-id={{S}}&amp;page-id={{ABC-1}}&amp;end\">link</a></p>\
             <p>{body}</p>\
             <table><tr><td style=\"background-color:#ff0000\"><p>cell</p></td></tr></table>\
             <img alt=\"gone\" src=\"embedded:missing\" data-src-type=\"image/png\" />\
             <img alt=\"pic\" src=\"embedded:1-a.png\" data-src-type=\"image/png\" />\
             <object data-attachment=\"d.pdf\" type=\"application/pdf\" data=\"embedded:2-d.pdf\"></object>\
             </div></body></html>",
            done = tag_value("To Do", true, true),
            open = tag_value("To Do", true, false),
        );
        let file = |key: &str, name: &str, mime: &str| EmbeddedFile {
            key: key.into(),
            name: name.into(),
            mime: mime.into(),
            bytes: Bytes::from_static(b"bytes"),
        };
        let files = vec![
            file("embedded:1-a.png", "a.png", "image/png"),
            file("embedded:2-d.pdf", "d.pdf", "application/pdf"),
        ];
        let opts = ConvertOptions {
            last_modified: Some("2020-01-03T00:00:00Z".into()),
            ink: Ink::Drawings(Vec::new()),
        };
        let page = convert_page_with_files(html, &opts, files);
        let types: Vec<&str> = page.blocks.iter().map(Block::type_name).collect();
        assert_eq!(
            types,
            [
                "paragraph",
                "heading_1",
                "heading_4",
                "to_do",
                "to_do",
                "bulleted_list_item",
                "quote",
                "code",
                "paragraph",
                "paragraph",
                "paragraph",
                "table",
                "paragraph",
                "image",
                "pdf",
                "paragraph"
            ],
            "{:#?}",
            page.blocks
        );
        let text = |b: &Block| -> String {
            b.rich_texts()
                .into_iter()
                .flatten()
                .map(|r| r.visible_text())
                .collect()
        };
        assert_eq!(
            text(&page.blocks[0]),
            "Created 2020-01-02 03:04Z · Last modified 2020-01-03 00:00Z (OneNote)"
        );
        assert!(matches!(page.blocks[3], Block::ToDo { checked: true, .. }));
        assert!(matches!(page.blocks[4], Block::ToDo { checked: false, .. }));
        assert_eq!(
            page.blocks[5].children()[0].type_name(),
            "numbered_list_item"
        );
        assert_eq!(text(&page.blocks[5]), "a");
        assert_eq!(text(&page.blocks[5].children()[0]), "n1");
        let red = &page.blocks[8].rich_texts()[0][0];
        assert!(red.annotations.bold);
        assert_eq!(red.annotations.color, Color::Text(Hue::Red));
        assert!(page.blocks[9].rich_texts()[0].iter().any(|r| matches!(
            &r.kind,
            RichKind::PageLink { onenote_page_id, .. } if onenote_page_id == "{ABC-1}"
        )));
        assert_eq!(text(&page.blocks[10]), "line one\nline two");
        let Block::Table { rows, .. } = &page.blocks[11] else {
            panic!("{:?}", page.blocks[11]);
        };
        assert_eq!(rows[0][0][0].annotations.color, Color::Background(Hue::Red));
        assert!(text(&page.blocks[12]).contains("its bytes are not in the OneNote file"));
        assert!(
            matches!(&page.blocks[13], Block::Image { source: MediaSource::Embedded(f), .. } if f.name == "a.png")
        );
        assert_eq!(text(&page.blocks[15]), "below");
        let reported: Vec<&str> = page
            .report
            .items
            .iter()
            .map(|a| a.element.as_str())
            .collect();
        for want in [
            "<h5>",
            "<sup>",
            "CSS color",
            "absolutely positioned outline",
        ] {
            assert!(reported.contains(&want), "{want} in {reported:?}");
        }
        assert!(reported
            .iter()
            .any(|r| r.contains("not carried over (its bytes are not in the OneNote file)")));
    }

    #[test]
    fn ink_strokes_render_in_place_with_their_recognised_words() {
        let stroke = |x: f32, word: Option<(u32, &str)>| PenStroke {
            points: vec![(x, 0.0), (x + 500.0, 250.0), (x + 1000.0, 0.0)],
            at: (100.0, 48.0),
            color: Some(0x0000_00ff),
            width: 53.0,
            transparency: None,
            word: word.map(|(i, t)| (i, t.to_string())),
        };
        let no_lines = std::collections::HashMap::new();
        let mut ds = drawings(
            &[
                stroke(0.0, Some((1, "hello"))),
                stroke(1200.0, Some((1, "hello"))),
                stroke(2400.0, Some((2, "world"))),
            ],
            &no_lines,
        );
        assert_eq!(
            ds.len(),
            1,
            "written one after the other, a word's gap apart"
        );
        let d = ds.remove(0);
        assert_eq!(d.caption, "Handwritten drawing, 3 strokes: “hello world”");
        assert!(d.svg.starts_with("<svg"), "{}", d.svg);
        assert!(
            d.svg.contains("#ff0000"),
            "red from COLORREF 0x0000ff: {}",
            d.svg
        );
        // Placed where the ink is on the page (less half the pen), in CSS px.
        assert!(
            (d.top - 100.0).abs() < 2.0 && (d.left - 48.0).abs() < 2.0,
            "{} {}",
            d.top,
            d.left
        );
        let hl = PenStroke {
            transparency: Some(128),
            word: None,
            ..stroke(0.0, None)
        };
        assert!(drawings(&[hl], &no_lines)[0]
            .caption
            .starts_with("Highlighter drawing, 1 stroke"));
        let empty = PenStroke {
            points: Vec::new(),
            ..stroke(0.0, None)
        };
        assert!(drawings(&[empty], &no_lines).is_empty());
    }

    /// Ends a page written by hand in a test as [`page`] does (the page's recognition, then the
    /// body closed) and converts it; the renderer's notes beside it.
    fn finish(
        mut r: Renderer,
        lines: &[Vec<(u32, &str)>],
    ) -> (crate::convert::ConvertedPage, Vec<(String, &'static str)>) {
        use crate::convert::{convert_page_with_files, ConvertOptions};
        r.recognition(lines);
        r.html.push_str("</body></html>");
        let opts = ConvertOptions {
            last_modified: None,
            ink: Ink::Drawings(r.drawings),
        };
        (convert_page_with_files(r.html, &opts, r.files), r.notes)
    }

    /// A model of a page whose ink OneNote recognised (the samples have none): strokes and the
    /// page's recognition as the parser gives them, rendered and converted. The recognised text
    /// arrives once, searchable, whether the strokes name their words, some of them, or none, or
    /// the strokes are not on the page at all.
    #[test]
    fn recognised_handwriting_arrives_once_with_its_ink() {
        // "Hello World Hello World": four words, two lines.
        let lines: Vec<Vec<(u32, &str)>> = vec![
            vec![(1, "Hello"), (2, "World")],
            vec![(3, "Hello"), (4, "World")],
        ];
        let stroke = |x: f32, word: Option<u32>| PenStroke {
            points: vec![(x, 0.0), (x + 500.0, 250.0)],
            at: (300.0, 48.0),
            color: None,
            width: 53.0,
            transparency: None,
            word: word.map(|id| {
                (
                    id,
                    lines
                        .iter()
                        .flatten()
                        .find(|w| w.0 == id)
                        .unwrap()
                        .1
                        .to_string(),
                )
            }),
        };
        let convert = |named: &[Option<u32>], strokes_on_page: bool| {
            let mut r = Renderer::default();
            r.read_order(&lines);
            r.html.push_str(
                "<html><head><title>T</title></head><body>\
                 <div style=\"position:absolute;left:48px;top:40px\"><p>above</p></div>\
                 <div style=\"position:absolute;left:48px;top:900px\"><p>below</p></div>",
            );
            if strokes_on_page {
                let pen: Vec<PenStroke> = named
                    .iter()
                    .enumerate()
                    .map(|(i, w)| stroke(i as f32 * 700.0, *w))
                    .collect();
                r.page_pen = pen;
                r.page_ink();
            }
            let (page, notes) = finish(r, &lines);
            let texts: Vec<(String, String)> = page
                .blocks
                .iter()
                .map(|b| {
                    let t: String = b
                        .rich_texts()
                        .into_iter()
                        .flatten()
                        .map(|r| r.visible_text())
                        .collect();
                    (b.type_name().to_string(), t)
                })
                .collect();
            (texts, notes)
        };
        let words = |t: &str| {
            t.split(|c: char| !c.is_alphanumeric())
                .filter(|w| *w == "Hello" || *w == "World")
                .count()
        };
        let total = |texts: &[(String, String)]| texts.iter().map(|(_, t)| words(t)).sum::<usize>();

        // The strokes name every word: the caption holds them, no paragraph repeats them.
        let (t, _) = convert(&[Some(1), Some(2), Some(3), Some(4)], true);
        assert_eq!(total(&t), 4, "{t:?}");
        assert_eq!(t[1].0, "image");
        assert!(t[1].1.ends_with("“Hello World Hello World”"), "{t:?}");
        assert_eq!(t.len(), 3, "{t:?}");

        // The strokes name none: the drawing, then the recognised text right after it.
        let (t, notes) = convert(&[None, None, None], true);
        assert_eq!(total(&t), 4, "{t:?}");
        let kinds: Vec<&str> = t.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(kinds, ["paragraph", "image", "paragraph", "paragraph"]);
        assert_eq!(t[0].1, "above");
        assert_eq!(
            t[2].1,
            "Handwriting recognised by OneNote: Hello World\nHello World"
        );
        assert_eq!(t[3].1, "below");
        assert!(notes
            .iter()
            .any(|(w, _)| w.contains("its strokes do not name")));

        // Some: each word once, the rest after the drawing.
        let (t, _) = convert(&[Some(1), Some(2), None], true);
        assert_eq!(total(&t), 4, "{t:?}");
        assert!(t[1].1.ends_with("“Hello World”"), "{t:?}");
        assert_eq!(t[2].1, "Handwriting recognised by OneNote: Hello World");

        // No strokes on the page: the text is all that is left, kept at the page's end.
        let (t, notes) = convert(&[], false);
        assert_eq!(total(&t), 4, "{t:?}");
        assert_eq!(t.last().unwrap().0, "paragraph");
        assert!(t.last().unwrap().1.starts_with(
            "Handwriting recognised by OneNote (its strokes are not in the file): Hello World"
        ));
        assert!(notes
            .iter()
            .any(|(w, a)| w.contains("without strokes") && a.contains("kept")));
    }

    /// A model of the page (#49: "Hello World Hello World" in two handwritten lines, which
    /// the file stores as 62 ink objects of one stroke each, and OneNote's recognition of it),
    /// built as the parser gives it: the lines stored bottom one first. Before the shared rule it
    /// arrived as 62 one-stroke images; now it is its lines, with the sentence once, in order.
    #[test]
    fn a_page_of_handwriting_stored_stroke_by_stroke_arrives_as_its_lines_with_the_sentence_once() {
        let lines: Vec<Vec<(u32, &str)>> = vec![
            vec![(1, "Hello"), (2, "World")],
            vec![(3, "Hello"), (4, "World")],
        ];
        // Ink units (0.01 mm): strokes 7 mm high side by side, words 9 mm apart, lines 1.5 cm.
        let word = |id: u32, text: &str, line_top: f64, x0: f32| -> Vec<PenStroke> {
            (0..31 / 2 + usize::from(id % 2 == 1))
                .map(|k| {
                    let x = x0 + k as f32 * 170.0;
                    PenStroke {
                        points: vec![(x, 0.0), (x + 80.0, 700.0), (x + 160.0, 0.0)],
                        // Each stroke its own ink object, placed at its line.
                        at: (line_top, 48.0),
                        color: None,
                        width: 53.0,
                        transparency: None,
                        word: Some((id, text.to_string())),
                    }
                })
                .collect()
        };
        let line = |ids: (u32, u32), top: f64| {
            let mut v = word(ids.0, "Hello", top, 0.0);
            let end = v.iter().map(|s| s.points[2].0).fold(0.0, f32::max);
            v.extend(word(ids.1, "World", top, end + 900.0));
            v
        };
        let mut pen = line((3, 4), 300.0 + 1500.0 * PX_PER_INK_UNIT);
        pen.extend(line((1, 2), 300.0));
        assert_eq!(pen.len(), 62);
        let mut r = Renderer::default();
        r.read_order(&lines);
        r.html.push_str(
            "<html><head><title>T</title></head><body>\
             <div style=\"position:absolute;left:48px;top:40px\"><p>above</p></div>",
        );
        r.page_pen = pen;
        r.page_ink();
        let (page, notes) = finish(r, &lines);
        let captions: Vec<String> = page
            .blocks
            .iter()
            .filter_map(|b| match b {
                Block::Image { caption, .. } => {
                    Some(caption.iter().map(|r| r.visible_text()).collect())
                }
                _ => None,
            })
            .collect();
        assert!(
            (1..=2).contains(&captions.len()),
            "a line is one drawing: {captions:?}"
        );
        let all: String = page
            .blocks
            .iter()
            .flat_map(|b| b.rich_texts().into_iter().flatten())
            .map(|r| r.visible_text())
            .collect::<Vec<_>>()
            .join(" ");
        let words: Vec<&str> = all
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| *w == "Hello" || *w == "World")
            .collect();
        assert_eq!(words, ["Hello", "World", "Hello", "World"], "{all}");
        let strokes: usize = captions
            .iter()
            .map(|c| c.split(", ").nth(1).unwrap().split(' ').next().unwrap())
            .map(|n| n.parse::<usize>().unwrap())
            .sum();
        assert_eq!(strokes, 62, "{captions:?}");
        // One upload per drawing, each counted once, with its four words.
        assert_eq!(page.resources().len(), captions.len());
        let noted = |what: &str| notes.iter().filter(|(w, _)| w == what).count();
        assert_eq!(noted(crate::ink::DRAWING_REPORTED.0), captions.len());
        assert_eq!(noted("ink (recognised handwriting, words)"), 4);
    }

    /// Ink inside a table cell and inside an outline (a model: the real files here carry ink on
    /// the page only): the same rule groups each object's strokes, a highlighter stroke over the
    /// text and a sketch a hand's width away stay apart, each drawing is one file, and a cell's
    /// drawings follow the table, with the recognised word once.
    #[test]
    fn ink_in_a_table_cell_or_an_outline_is_grouped_by_the_same_rule() {
        let stroke = |x: f32, transparency: Option<u8>, word: Option<(u32, &str)>| PenStroke {
            points: vec![(x, 0.0), (x + 400.0, 300.0), (x + 800.0, 0.0)],
            at: (0.0, 0.0),
            color: None,
            width: 53.0,
            transparency,
            word: word.map(|(i, t)| (i, t.to_string())),
        };
        let lines: Vec<Vec<(u32, &str)>> = vec![vec![(9, "cell")]];
        let mut r = Renderer::default();
        r.read_order(&lines);
        r.html.push_str(
            "<html><head><title>T</title></head><body>\
             <div style=\"position:absolute;left:48px;top:40px\"><p>text</p>",
        );
        // In the outline: a highlighter stroke, then a sketch 10 cm to its right.
        r.inline_pen(&[stroke(0.0, Some(128), None), stroke(10_000.0, None, None)]);
        r.html.push_str("<table><tr><td>");
        r.inline_pen(&[
            stroke(0.0, None, Some((9, "cell"))),
            stroke(850.0, None, Some((9, "cell"))),
        ]);
        r.html.push_str("</td><td>b</td></tr></table></div>");
        let (page, notes) = finish(r, &lines);
        let mut captions = Vec::new();
        let mut stack: Vec<&Block> = page.blocks.iter().rev().collect();
        while let Some(b) = stack.pop() {
            if let Block::Image { caption, .. } = b {
                captions.push(caption.iter().map(|r| r.visible_text()).collect::<String>());
            }
            stack.extend(b.children().iter().rev());
        }
        assert_eq!(
            captions,
            [
                "Highlighter drawing, 1 stroke",
                "Handwritten drawing, 1 stroke",
                "Handwritten drawing, 2 strokes: “cell”"
            ]
        );
        assert_eq!(page.resources().len(), 3, "one file per drawing");
        // Written in the HTML, so counted by the renderer (the page's report takes its notes).
        let drawn = notes
            .iter()
            .filter(|(w, _)| w == "ink (handwriting, drawings)")
            .count();
        assert_eq!(drawn, 3);
        let words = notes
            .iter()
            .filter(|(w, _)| w == "ink (recognised handwriting, words)")
            .count();
        assert_eq!(words, 1);
        // The word is in its drawing's caption; no paragraph repeats it.
        assert!(!notes.iter().any(|(w, _)| w.contains("do not name")));
    }

    #[test]
    fn recognised_text_a_caption_cannot_hold_goes_under_the_drawing_with_its_lines() {
        let words: Vec<(u32, String)> = (0..600).map(|i| (i, format!("word{i}"))).collect();
        let at: std::collections::HashMap<u32, (usize, usize)> = words
            .iter()
            .map(|(id, _)| (*id, (*id as usize / 100, *id as usize % 100)))
            .collect();
        let named: Vec<(u32, &str)> = words.iter().map(|(i, t)| (*i, t.as_str())).collect();
        let (caption, below) = caption_and_text("Handwritten drawing, 900 strokes", &named, &at);
        assert_eq!(caption, "Handwritten drawing, 900 strokes");
        let below = below.expect("the text under the drawing");
        assert_eq!(below.lines().count(), 6);
        assert!(below.starts_with("word0 word1 ") && below.ends_with("word599"));
        let (caption, below) = caption_and_text("Handwritten drawing, 9 strokes", &named[..3], &at);
        assert_eq!(
            caption,
            "Handwritten drawing, 9 strokes: “word0 word1 word2”"
        );
        assert!(below.is_none());
    }

    #[test]
    fn recognised_words_are_kept_once_in_line_order() {
        let lines: Vec<Vec<(u32, &str)>> = vec![
            vec![(1, "a"), (2, "b"), (1, "a")],
            vec![(3, " "), (4, "d")],
            vec![(2, "b")],
        ];
        let none = std::collections::HashSet::new();
        assert_eq!(unnamed_words(&lines, &none), "a b\nd");
        let named: std::collections::HashSet<u32> = [1, 4].into_iter().collect();
        assert_eq!(unnamed_words(&lines, &named), "b");
    }

    /// A printout page with no picture Notion shows (a model: the sample's pages all have one).
    #[test]
    fn a_printout_page_without_its_picture_names_file_and_page_and_keeps_its_text() {
        use crate::convert::{convert_page_with_files, ConvertOptions};
        let mut r = Renderer::default();
        r.html.push_str("<html><head><title>T</title></head><body>");
        r.printout_placeholder(
            Some("{8B11}.xps"),
            Some(2),
            Some("first line\nsecond line"),
            Some((100.0, 48.0)),
        );
        r.html.push_str("</body></html>");
        let page = convert_page_with_files(r.html, &ConvertOptions::default(), r.files);
        let texts: Vec<String> = page
            .blocks
            .iter()
            .map(|b| {
                b.rich_texts()
                    .into_iter()
                    .flatten()
                    .map(|r| r.visible_text())
                    .collect()
            })
            .collect();
        assert_eq!(
            texts,
            [
                "🖨️ Printout of {8B11}.xps, page 3 (not carried over: the file holds no picture \
                 of this page that Notion can show)",
                "first line\nsecond line"
            ]
        );
        assert!(r
            .notes
            .iter()
            .any(|(w, _)| w == "file printout page without a picture of it"));
    }
}
