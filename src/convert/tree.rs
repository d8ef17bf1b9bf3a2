//! A page's blocks as an indented text tree for people (what `notebridge convert` shows without
//! `--json`): one line per block with its type, its text cut to the width, the annotations its
//! text uses and where its links go; table rows under their table.

use std::collections::BTreeSet;

use console::{measure_text_width, truncate_str};

use super::blocks::{Annotations, Block, Color, MediaSource, RichKind, RichText};

/// Spaces per nesting level.
const INDENT: usize = 2;
/// Room the text keeps however long the rest of the line is.
const MIN_TEXT: usize = 12;

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
                let mut notes = Notes::default();
                row.iter().flatten().for_each(|r| notes.add(r));
                lines.push(line(
                    &indent,
                    "table_row",
                    "",
                    &cells.join(" | "),
                    &notes.render(),
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

/// What a block says besides its text: a to-do's box, a callout's icon, a table's shape, a media
/// block's source.
fn head(b: &Block) -> String {
    match b {
        Block::Heading { .. } | Block::Paragraph(_) | Block::Bulleted(_) | Block::Numbered(_) => {
            String::new()
        }
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
        Block::Image { source, .. } | Block::Pdf { source, .. } => source_text(source),
        Block::File { source, name, .. } => match name {
            Some(n) => format!("{} {}", visible(n), source_text(source)),
            None => source_text(source),
        },
        Block::Video { url } | Block::Embed { url } => visible(url),
        Block::Equation { expression } => visible(expression),
        Block::Quote(_) | Block::Divider => String::new(),
    }
}

fn source_text(s: &MediaSource) -> String {
    match s {
        MediaSource::Resource { url, .. } | MediaSource::External(url) => visible(url),
        MediaSource::Embedded(f) => format!("{} (in the page)", visible(&f.key)),
        MediaSource::FileUpload { id } => format!("upload {}", visible(id)),
    }
}

/// The block's own text (captions for media), newlines shown as `↵`.
fn text_of(b: &Block) -> String {
    match b {
        Block::Table { .. } => String::new(),
        _ => b.rich_texts().iter().map(|r| runs_text(r)).collect(),
    }
}

/// Annotations used and link targets, after the text.
fn tail(b: &Block) -> String {
    let mut notes = Notes::default();
    if let Block::Table { .. } = b {
        return String::new();
    }
    for runs in b.rich_texts() {
        runs.iter().for_each(|r| notes.add(r));
    }
    if let Some(t) = b.text() {
        if t.color != Color::Default {
            notes
                .annotations
                .insert(format!("block {}", t.color.as_notion()));
        }
    }
    notes.render()
}

/// The annotations (sorted) and link targets (in order of first use) of some runs, each once.
#[derive(Default)]
struct Notes {
    annotations: BTreeSet<String>,
    links: Vec<String>,
}

impl Notes {
    fn add(&mut self, r: &RichText) {
        let Annotations {
            bold,
            italic,
            strikethrough,
            underline,
            code,
            color,
        } = r.annotations;
        for (on, name) in [
            (bold, "bold"),
            (italic, "italic"),
            (strikethrough, "strikethrough"),
            (underline, "underline"),
            (code, "code"),
        ] {
            if on {
                self.annotations.insert(name.to_string());
            }
        }
        if color != Color::Default {
            self.annotations.insert(color.as_notion());
        }
        let link = match &r.kind {
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
            RichKind::Equation { .. } => {
                self.annotations.insert("equation".to_string());
                None
            }
            RichKind::Text { link: None, .. } => None,
        };
        if let Some(l) = link {
            if !self.links.contains(&l) {
                self.links.push(l);
            }
        }
    }

    fn render(&self) -> String {
        let mut parts = Vec::new();
        if !self.annotations.is_empty() {
            let names: Vec<&str> = self.annotations.iter().map(String::as_str).collect();
            parts.push(format!("[{}]", names.join(", ")));
        }
        for l in &self.links {
            parts.push(format!("→ {l}"));
        }
        parts.join(" ")
    }
}

fn runs_text(runs: &[RichText]) -> String {
    runs.iter().map(|r| visible(&r.visible_text())).collect()
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
    fn lines_fit_the_width_and_keep_annotations_and_links() {
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
        let mut item = TextBlock::new(vec![bold, link]);
        item.children.push(child);
        let lines = render(&[Block::Bulleted(item)], 60);
        assert_eq!(lines.len(), 2);
        assert!(
            lines.iter().all(|l| measure_text_width(l) <= 60),
            "{lines:?}"
        );
        assert!(lines[0].starts_with("bulleted_list_item \"bold words"));
        assert!(
            lines[0].ends_with("…\" [bold] → https://e.com/x"),
            "{}",
            lines[0]
        );
        assert_eq!(lines[1], "  paragraph \"child↵line\\u{1b}[31m\"");
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
