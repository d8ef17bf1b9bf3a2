//! A page's blocks as an indented text tree for people (what `notebridge convert` shows without
//! `--json`): one line per block with its type, a file's name, its text cut to the width, and
//! where its file comes from; table rows under their table.
//!
//! A run's marks are shown on that run, in the text, as `[text]{bold, red}`; a link as
//! `[text](target)`, its text before where it goes; so a block with one bold word reads as it looks.

use console::{measure_text_width, truncate_str};

use super::blocks::{Annotations, Block, Color, MediaSource, RichKind, RichText};

/// Spaces per nesting level.
const INDENT: usize = 2;
/// Room the text keeps however long the rest of the line is.
const MIN_TEXT: usize = 12;
/// Columns of a marked or linked run's text, and of a link's target: one long run must not push
/// the marks and links after it off the line.
const RUN_TEXT: usize = 40;

/// The tree's lines, none wider than `width` columns.
pub fn render(blocks: &[Block], width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    // An explicit stack: the tree's depth is the page's.
    let mut stack: Vec<(usize, &Block)> = blocks.iter().rev().map(|b| (0, b)).collect();
    while let Some((depth, b)) = stack.pop() {
        let indent = " ".repeat(depth * INDENT);
        lines.push(line(
            &indent,
            b.type_name(),
            &head(b),
            &text_of(b),
            &tail(b),
            width,
        ));
        if let Block::Table { rows, .. } = b {
            let indent = " ".repeat((depth + 1) * INDENT);
            for row in rows {
                let cells: Vec<String> = row.iter().map(|c| runs_text(c)).collect();
                lines.push(line(
                    &indent,
                    "table_row",
                    "",
                    &cells.join(" | "),
                    "",
                    width,
                ));
            }
        }
        stack.extend(b.children().iter().rev().map(|c| (depth + 1, c)));
    }
    lines
}

/// `indent type head "text" tail`, the text cut so the whole fits `width` (the line itself cut when
/// even the shortest text does not fit).
fn line(indent: &str, ty: &str, head: &str, text: &str, tail: &str, width: usize) -> String {
    let mut fixed = format!("{indent}{ty}");
    if !head.is_empty() {
        fixed.push(' ');
        fixed.push_str(head);
    }
    let tail = if tail.is_empty() {
        String::new()
    } else {
        format!(" {tail}")
    };
    let mut out = fixed.clone();
    if !text.is_empty() {
        // Two quotes and the space before them.
        let room = width
            .saturating_sub(measure_text_width(&fixed) + measure_text_width(&tail) + 3)
            .max(MIN_TEXT);
        out.push_str(&format!(" \"{}\"", cut(text, room)));
    }
    out.push_str(&tail);
    cut(&out, width)
}

/// `s` cut to at most `width` columns, `…` marking the cut. `truncate_str` counts some emoji
/// sequences (a symbol and U+FE0F) narrower than `measure_text_width` does: cut again until the
/// measure agrees.
fn cut(s: &str, width: usize) -> String {
    let mut room = width;
    loop {
        let t = truncate_str(s, room, "…");
        if measure_text_width(&t) <= width || room == 0 {
            return t.into_owned();
        }
        room -= 1;
    }
}

/// What a block says before its text: a to-do's box, a callout's icon, a table's shape, a file's
/// name.
fn head(b: &Block) -> String {
    match b {
        Block::ToDo { checked, .. } => if *checked { "[x]" } else { "[ ]" }.to_string(),
        Block::Callout { emoji, .. } => visible(emoji),
        Block::Code { language, .. } => format!("({language})"),
        Block::Table {
            width,
            has_column_header,
            rows,
        } => format!(
            "{width} columns, {} rows{}",
            rows.len(),
            if *has_column_header {
                ", header row"
            } else {
                ""
            }
        ),
        Block::File { name: Some(n), .. } => visible(n),
        Block::Equation { expression } => visible(expression),
        _ => String::new(),
    }
}

/// Where a media block's content comes from, after its name and caption.
fn source_text(s: &MediaSource) -> String {
    match s {
        MediaSource::Resource { url, .. } | MediaSource::External(url) => visible(url),
        MediaSource::Embedded(f) => format!("{} (in the page)", visible(&f.key)),
        MediaSource::FileUpload { id } => format!("upload {}", visible(id)),
    }
}

/// The block's own text (captions for media) with each run's marks and links, newlines shown
/// as `↵`.
fn text_of(b: &Block) -> String {
    match b {
        Block::Table { .. } => String::new(),
        _ => b.rich_texts().iter().map(|r| runs_text(r)).collect(),
    }
}

/// What follows the text: a media block's source, a block's own colour.
fn tail(b: &Block) -> String {
    let mut parts = Vec::new();
    match b {
        Block::Image { source, .. } | Block::Pdf { source, .. } | Block::File { source, .. } => {
            parts.push(format!("from {}", source_text(source)));
        }
        Block::Video { url } | Block::Embed { url } => parts.push(format!("from {}", visible(url))),
        _ => {}
    }
    if let Some(t) = b.text() {
        if t.color != Color::Default {
            parts.push(format!("[block {}]", t.color.as_notion()));
        }
    }
    parts.join(" ")
}

/// A run's marks in Notion's names, in a fixed order.
fn marks(r: &RichText) -> Vec<String> {
    let Annotations {
        bold,
        italic,
        strikethrough,
        underline,
        code,
        color,
    } = r.annotations;
    let mut out: Vec<String> = [
        (bold, "bold"),
        (italic, "italic"),
        (strikethrough, "strikethrough"),
        (underline, "underline"),
        (code, "code"),
    ]
    .into_iter()
    .filter(|(on, _)| *on)
    .map(|(_, name)| name.to_string())
    .collect();
    if color != Color::Default {
        out.push(color.as_notion());
    }
    if matches!(r.kind, RichKind::Equation { .. }) {
        out.push("equation".to_string());
    }
    out
}

/// Where a run links to, if it does.
fn link_of(r: &RichText) -> Option<String> {
    match &r.kind {
        RichKind::Text {
            link: Some(url), ..
        } => Some(visible(url)),
        RichKind::PageLink {
            onenote_page_id,
            target,
            ..
        } => Some(match target {
            Some(t) => t.url(),
            None => format!("OneNote page {}", visible(onenote_page_id)),
        }),
        _ => None,
    }
}

/// One run as shown: plain text as it is, a marked or linked run as `[text](target){marks}`.
fn run_text(r: &RichText) -> String {
    let text = visible(&r.visible_text());
    let (link, marks) = (link_of(r), marks(r));
    if link.is_none() && marks.is_empty() {
        return text;
    }
    let mut out = format!("[{}]", cut(&text, RUN_TEXT));
    if let Some(l) = link {
        out.push_str(&format!("({})", cut(&l, RUN_TEXT)));
    }
    if !marks.is_empty() {
        out.push_str(&format!("{{{}}}", marks.join(", ")));
    }
    out
}

fn runs_text(runs: &[RichText]) -> String {
    runs.iter().map(run_text).collect()
}

/// Text safe to print on a terminal: a line break as `↵`, a tab as a space, other control
/// characters (page content is hostile: escape sequences) escaped.
fn visible(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\n' => out.push('↵'),
            '\t' => out.push(' '),
            c if c.is_control() => out.extend(c.escape_unicode()),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::convert::blocks::TextBlock;

    fn para(runs: Vec<RichText>) -> Block {
        Block::Paragraph(TextBlock::new(runs))
    }

    #[test]
    fn lines_fit_the_width_and_show_marks_and_links_on_their_runs() {
        let mut bold = RichText::plain("bold words ".repeat(20));
        bold.annotations.bold = true;
        let link = RichText {
            kind: RichKind::Text {
                content: "site".into(),
                link: Some("https://e.com/x".into()),
            },
            annotations: Annotations::default(),
        };
        let child = para(vec![RichText::plain("child\nline\u{1b}[31m")]);
        let mut item = TextBlock::new(vec![RichText::plain("see "), bold, link]);
        item.children.push(child);
        let lines = render(&[Block::Bulleted(item.clone())], 100);
        assert_eq!(
            lines,
            vec![
                "bulleted_list_item \"see [bold words bold words bold words bold w…]{bold}[site](https://e.com/x)\"",
                "  paragraph \"child↵line\\u{1b}[31m\"",
            ]
        );
        let narrow = render(&[Block::Bulleted(item)], 60);
        assert!(
            narrow.iter().all(|l| measure_text_width(l) <= 60),
            "{narrow:?}"
        );
    }

    #[test]
    fn a_file_shows_its_name_and_caption_before_its_source() {
        let file = Block::File {
            source: MediaSource::External("https://e.com/files/report.pdf".into()),
            name: Some("report.pdf".into()),
            caption: vec![RichText::plain("Q3 numbers")],
        };
        assert_eq!(
            render(&[file], 100),
            vec!["file report.pdf \"Q3 numbers\" from https://e.com/files/report.pdf"]
        );
    }

    #[test]
    fn table_rows_sit_under_their_table() {
        let t = Block::Table {
            width: 2,
            has_column_header: true,
            rows: vec![
                vec![vec![RichText::plain("a")], vec![RichText::plain("b")]],
                vec![vec![RichText::plain("c")], vec![]],
            ],
        };
        assert_eq!(
            render(&[t], 80),
            vec![
                "table 2 columns, 2 rows, header row",
                "  table_row \"a | b\"",
                "  table_row \"c | \"",
            ]
        );
    }
}
