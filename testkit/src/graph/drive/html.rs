//! A page read from a section file, written back as the HTML Graph's `pages/{id}/content` serves,
//! so the API view of a files notebook carries the same text and files as the file itself.
//!
//! The product renders a parsed page into Graph's dialect inside `notebridge::onefile` but does not
//! publish that HTML; what it publishes is the page converted into typed blocks
//! ([`notebridge::onefile::ParsedSection::convert`]). This writes those blocks as Graph's HTML
//! (headings, paragraphs, lists, to-do tags, tables, pictures and attachments as resources), which
//! the converter reads back into the same blocks. Runs keep bold, italic, underline, strikethrough
//! and links; colours and positions are not carried (the converter's report of the file route
//! names what it approximated).

use std::fmt::Write as _;

use bytes::Bytes;
use notebridge::convert::{Block, ConvertedPage, MediaSource, RichKind, RichText};

/// Where a page's resource URLs start; replaced when the page is served, because the URL names the
/// owner (`{base}/users('{id}')/onenote/resources`) and the page is rendered before any request.
pub(crate) const RESOURCE_BASE: &str = "{{resource-base}}";

/// A file of the page served as a OneNote resource.
pub(crate) struct PageFile {
    /// The resource id in the page's HTML.
    pub(crate) id: String,
    /// Its media type.
    pub(crate) mime: String,
    /// Its bytes.
    pub(crate) bytes: Bytes,
}

enum Step<'a> {
    Open(&'a Block),
    Close(&'static str),
}

/// The page as Graph's HTML; `resource_id` names each embedded file as it is met.
pub(crate) fn page_html(
    page: &ConvertedPage,
    mut resource_id: impl FnMut() -> String,
) -> (String, Vec<PageFile>) {
    let mut h = String::new();
    let mut files = Vec::new();
    h.push_str("<html lang=\"en-US\"><head><title>");
    escape(&mut h, &page.title);
    h.push_str("</title>");
    if let Some(c) = &page.created {
        h.push_str("<meta name=\"created\" content=\"");
        escape(&mut h, c);
        h.push_str("\" />");
    }
    h.push_str(
        "</head><body data-absolute-enabled=\"true\" style=\"font-family:Calibri;font-size:11pt\">",
    );
    h.push_str("<div style=\"position:absolute;left:48px;top:115px;width:624px\">");
    // The converter puts its own date line first from `created`; the page's body starts after it.
    let body = match page.blocks.first() {
        Some(b) if is_date_line(b) => &page.blocks[1..],
        _ => &page.blocks[..],
    };
    // An explicit stack: a page's nesting is bounded by the converter, but stays off the call stack.
    let mut stack: Vec<Step<'_>> = body.iter().rev().map(Step::Open).collect();
    while let Some(step) = stack.pop() {
        let b = match step {
            Step::Close(tag) => {
                h.push_str(tag);
                continue;
            }
            Step::Open(b) => b,
        };
        let (open, close, nest) = match b {
            Block::Paragraph(_) => ("<p>", "</p>", false),
            Block::Heading { level: 1, .. } => ("<h1>", "</h1>", false),
            Block::Heading { level: 2, .. } => ("<h2>", "</h2>", false),
            Block::Heading { .. } => ("<h3>", "</h3>", false),
            Block::Bulleted(_) => ("<ul><li>", "</li></ul>", true),
            Block::Numbered(_) => ("<ol><li>", "</li></ol>", true),
            Block::ToDo { checked: true, .. } => {
                ("<p data-tag=\"to-do:completed\">", "</p>", false)
            }
            Block::ToDo { .. } => ("<p data-tag=\"to-do\">", "</p>", false),
            Block::Callout { .. } => ("<p data-tag=\"important\">", "</p>", false),
            Block::Quote(_) => ("<blockquote>", "</blockquote>", false),
            _ => ("", "", false),
        };
        if let Some(t) = b.text() {
            h.push_str(open);
            runs(&mut h, &t.rich_text);
            if nest {
                stack.push(Step::Close(close));
                stack.extend(t.children.iter().rev().map(Step::Open));
            } else {
                h.push_str(close);
                stack.extend(t.children.iter().rev().map(Step::Open));
            }
            continue;
        }
        match b {
            Block::Code { rich_text, .. } => {
                h.push_str("<p style=\"font-family:Consolas\">");
                runs(&mut h, rich_text);
                h.push_str("</p>");
            }
            Block::Table { rows, .. } => {
                h.push_str("<table style=\"border:1px solid;border-collapse:collapse\">");
                for row in rows {
                    h.push_str("<tr>");
                    for cell in row {
                        h.push_str("<td style=\"border:1px solid\">");
                        runs(&mut h, cell);
                        h.push_str("</td>");
                    }
                    h.push_str("</tr>");
                }
                h.push_str("</table>");
            }
            Block::Image { source, caption } => match embedded(source) {
                Some(f) => {
                    let id = resource_id();
                    let _ = write!(
                        h,
                        "<img alt=\"{alt}\" src=\"{RESOURCE_BASE}/{id}/$value\" data-src-type=\"{m}\" \
                         data-fullres-src=\"{RESOURCE_BASE}/{id}/$value\" data-fullres-src-type=\"{m}\" />",
                        alt = attr(&plain(caption)),
                        m = attr(&f.mime)
                    );
                    files.push(PageFile {
                        id,
                        mime: f.mime.clone(),
                        bytes: f.bytes.clone(),
                    });
                }
                None => paragraph(&mut h, caption),
            },
            Block::File {
                source, caption, ..
            }
            | Block::Pdf { source, caption } => match embedded(source) {
                Some(f) => {
                    let id = resource_id();
                    let _ = write!(
                            h,
                            "<object data-attachment=\"{}\" type=\"{}\" data=\"{RESOURCE_BASE}/{id}/$value\" />",
                            attr(&f.name),
                            attr(&f.mime)
                        );
                    files.push(PageFile {
                        id,
                        mime: f.mime.clone(),
                        bytes: f.bytes.clone(),
                    });
                }
                None => paragraph(&mut h, caption),
            },
            Block::Video { url } | Block::Embed { url } => {
                let _ = write!(h, "<iframe data-original-src=\"{}\" />", attr(url));
            }
            Block::Equation { expression } => {
                h.push_str("<p>");
                escape(&mut h, expression);
                h.push_str("</p>");
            }
            _ => {}
        }
    }
    h.push_str("</div></body></html>");
    (h, files)
}

fn embedded(source: &MediaSource) -> Option<&notebridge::convert::EmbeddedFile> {
    match source {
        MediaSource::Embedded(f) => Some(f),
        _ => None,
    }
}

fn is_date_line(b: &Block) -> bool {
    let Block::Paragraph(t) = b else {
        return false;
    };
    let text = plain(&t.rich_text);
    t.children.is_empty()
        && (text.starts_with("Created ") || text.starts_with("Last modified "))
        && text.ends_with(" (OneNote)")
}

fn plain(rich: &[RichText]) -> String {
    rich.iter().map(RichText::visible_text).collect()
}

fn paragraph(h: &mut String, rich: &[RichText]) {
    if !rich.is_empty() {
        h.push_str("<p>");
        runs(h, rich);
        h.push_str("</p>");
    }
}

fn runs(h: &mut String, rich: &[RichText]) {
    for r in rich {
        let a = &r.annotations;
        let mut style = Vec::new();
        if a.bold {
            style.push("font-weight:bold");
        }
        if a.italic {
            style.push("font-style:italic");
        }
        match (a.underline, a.strikethrough) {
            (true, true) => style.push("text-decoration:underline line-through"),
            (true, false) => style.push("text-decoration:underline"),
            (false, true) => style.push("text-decoration:line-through"),
            (false, false) => {}
        }
        if !style.is_empty() {
            let _ = write!(h, "<span style=\"{}\">", style.join(";"));
        }
        match &r.kind {
            RichKind::Text {
                content,
                link: Some(href),
            } => {
                let _ = write!(h, "<a href=\"{}\">", attr(href));
                text(h, content);
                h.push_str("</a>");
            }
            RichKind::Text {
                content,
                link: None,
            } => text(h, content),
            RichKind::PageLink {
                content,
                onenote_page_id,
                ..
            } => {
                let _ = write!(
                    h,
                    "<a href=\"onenote:#page&amp;page-id={}&amp;end\">",
                    attr(onenote_page_id)
                );
                text(h, content);
                h.push_str("</a>");
            }
            RichKind::Equation { expression } => text(h, expression),
        }
        if !style.is_empty() {
            h.push_str("</span>");
        }
    }
}

/// Text with its line breaks as `<br />`, as OneNote writes soft breaks.
fn text(h: &mut String, s: &str) {
    for (i, line) in s.split('\n').enumerate() {
        if i > 0 {
            h.push_str("<br />");
        }
        escape(h, line);
    }
}

fn escape(h: &mut String, s: &str) {
    for c in s.chars() {
        match c {
            '&' => h.push_str("&amp;"),
            '<' => h.push_str("&lt;"),
            '>' => h.push_str("&gt;"),
            '"' => h.push_str("&quot;"),
            _ => h.push(c),
        }
    }
}

fn attr(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    escape(&mut out, s);
    out
}
