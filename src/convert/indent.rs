//! Paragraphs indented under another (OneNote's outline levels, which Graph writes as a left
//! margin) made children of the block above them, as Notion shows indentation.

use super::blocks::{is_spacer, Block};
use super::css;

/// Indentation levels deeper than this are kept at this level (each level Notion shows indents
/// further; the writer sends deeper trees level by level).
pub const MAX_INDENT_NESTING: usize = 30;

/// How far each block of one block list was indented (CSS `margin-left`, in px), as the walker
/// met its paragraph; blocks it does not name were not indented.
#[derive(Clone, Debug, Default)]
pub struct Indents {
    marks: std::collections::BTreeMap<usize, f64>,
    /// Blocks that start a nesting of their own (the first block of each positioned outline):
    /// OneNote indents within one outline, so a block never nests under another outline's.
    starts: std::collections::BTreeSet<usize>,
}

impl Indents {
    /// Records that blocks `from..to` of the list came from a paragraph whose `style` says how
    /// far it is indented; nothing when it says nothing (or zero).
    pub fn mark(&mut self, from: usize, to: usize, style: Option<&str>) {
        // A mark at or after `from` belongs to a block the list has since dropped.
        self.marks.split_off(&from);
        let Some(px) = style.and_then(margin_left_px).filter(|px| *px > 0.0) else {
            return;
        };
        self.marks.extend((from..to).map(|i| (i, px)));
    }

    /// Records that the block at `at` (the next one the list gets) starts a nesting of its own:
    /// nothing before it is its parent.
    pub fn start(&mut self, at: usize) {
        self.starts.insert(at);
    }

    fn of(&self, index: usize) -> f64 {
        self.marks.get(&index).copied().unwrap_or(0.0)
    }
}

/// A `margin-left` in px (`px`, `pt`, `in`, unitless).
fn margin_left_px(style: &str) -> Option<f64> {
    let v = css::property(style, "margin-left")?.trim();
    match v.to_ascii_lowercase().strip_suffix("in") {
        Some(inches) => inches
            .trim()
            .parse::<f64>()
            .ok()
            .filter(|n| n.is_finite())
            .map(|n| n * 96.0),
        None => css::length_px(v),
    }
}

/// Whether Notion shows children under a block of this kind (a heading only as a toggle, which
/// a OneNote heading is not; a blank line is no parent either).
fn takes_children(b: &Block) -> bool {
    matches!(
        b,
        Block::Paragraph(_)
            | Block::Bulleted(_)
            | Block::Numbered(_)
            | Block::Quote(_)
            | Block::ToDo { .. }
            | Block::Callout { .. }
    ) && !is_spacer(b)
}

/// Indented blocks as children of the block above them that is indented less (OneNote's outline
/// levels, which Notion shows as nesting), to [`MAX_INDENT_NESTING`] levels; a block under one
/// that takes no children (a heading, a table) stays beside it. Iterative: the depth is the page's.
pub fn nest_indented(blocks: Vec<Block>, indents: &Indents) -> Vec<Block> {
    if indents.marks.is_empty() {
        return blocks;
    }
    let mut out: Vec<Block> = Vec::with_capacity(blocks.len());
    // The open chain of parents, outermost first, each with its indentation.
    let mut open: Vec<(f64, Block)> = Vec::new();
    fn close(open: &mut Vec<(f64, Block)>, out: &mut Vec<Block>) {
        if let Some((_, b)) = open.pop() {
            match open.last_mut().and_then(|(_, p)| p.text_mut()) {
                Some(parent) => parent.children.push(b),
                None => out.push(b),
            }
        }
    }
    for (i, b) in blocks.into_iter().enumerate() {
        let m = indents.of(i);
        if indents.starts.contains(&i) {
            while !open.is_empty() {
                close(&mut open, &mut out);
            }
        }
        while let Some((pm, parent)) = open.last() {
            let under = *pm < m && takes_children(parent) && open.len() < MAX_INDENT_NESTING + 1;
            if under {
                break;
            }
            close(&mut open, &mut out);
        }
        open.push((m, b));
    }
    while !open.is_empty() {
        close(&mut open, &mut out);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::convert::blocks::{RichText, TextBlock};

    #[test]
    fn indented_blocks_nest_under_the_block_above() {
        let p = |s: &str| Block::Paragraph(TextBlock::new(vec![RichText::plain(s)]));
        let with = |s: &str, kids: Vec<Block>| {
            Block::Paragraph(TextBlock {
                children: kids,
                ..TextBlock::new(vec![RichText::plain(s)])
            })
        };
        let h = Block::Heading {
            level: 1,
            text: TextBlock::new(vec![RichText::plain("H")]),
        };
        let blocks = vec![
            h.clone(),
            p("a"),
            p("a1"),
            p("a11"),
            p("a2"),
            p("b"),
            p("c"),
        ];
        let mut ind = Indents::default();
        // The heading's children (36) stay beside it; "b" is back at 36, "c" at the top.
        ind.mark(1, 2, Some("margin-left:36px"));
        ind.mark(2, 3, Some("margin-left:0.75in"));
        ind.mark(3, 4, Some("font-family:Arial;margin-left:108px"));
        ind.mark(4, 5, Some("margin-left:54pt"));
        ind.mark(5, 6, Some("margin-left:36px"));
        ind.mark(6, 7, Some("margin-left:0"));
        let out = nest_indented(blocks, &ind);
        assert_eq!(
            out,
            vec![
                h,
                with("a", vec![with("a1", vec![p("a11")]), p("a2")]),
                p("b"),
                p("c"),
            ]
        );
        // Deeper than the bound: kept at the deepest level, in order.
        let n = MAX_INDENT_NESTING + 5;
        let deep: Vec<Block> = (0..=n).map(|i| p(&i.to_string())).collect();
        let mut ind = Indents::default();
        for i in 1..=n {
            ind.mark(i, i + 1, Some(&format!("margin-left:{}px", i * 36)));
        }
        let out = nest_indented(deep, &ind);
        assert_eq!(out.len(), 1);
        let mut level = &out[0];
        let mut depth = 0;
        while let Some(c) = level.children().first() {
            depth += 1;
            if depth == MAX_INDENT_NESTING {
                assert_eq!(
                    level.children().len(),
                    6,
                    "the deepest level holds the rest"
                );
                break;
            }
            level = c;
        }
        assert_eq!(depth, MAX_INDENT_NESTING);
    }
}
