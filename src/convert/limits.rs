//! The last pass: blank lines at the edges of a block list removed, and rich-text arrays over
//! Notion's 100 objects continued in further blocks of the same kind.

use super::blocks::is_spacer;
use super::blocks::{Block, TextBlock};
use super::report::Report;

/// Notion's limit on any rich-text array.
pub const MAX_ITEMS: usize = 100;

/// Tidies a block list and everything under it; each block continued in further ones is reported.
pub fn finish(blocks: Vec<Block>, report: &mut Report) -> Vec<Block> {
    let mut out: Vec<Block> = Vec::with_capacity(blocks.len());
    for mut b in blocks {
        // Blank lines between blocks are the author's; at the start or end they show nothing.
        if is_spacer(&b) && out.is_empty() {
            continue;
        }
        if let Some(t) = b.text_mut() {
            t.children = finish(std::mem::take(&mut t.children), report);
        }
        let before = out.len();
        let ty = b.type_name();
        split_into(b, &mut out);
        for _ in before + 1..out.len() {
            report.add(
                format!("{ty} with more than {MAX_ITEMS} text runs"),
                "continued in a further block of the same type",
            );
        }
    }
    while out.last().is_some_and(is_spacer) {
        out.pop();
    }
    out
}

/// Pushes `b`, continued in as many blocks of its kind as its text needs.
fn split_into(mut b: Block, out: &mut Vec<Block>) {
    if let Block::Code {
        rich_text,
        language,
    } = &mut b
    {
        while rich_text.len() > MAX_ITEMS {
            let rest = rich_text.split_off(MAX_ITEMS);
            out.push(Block::Code {
                rich_text: std::mem::replace(rich_text, rest),
                language,
            });
        }
        out.push(b);
        return;
    }
    let Some(t) = b.text_mut() else {
        out.push(b);
        return;
    };
    if t.rich_text.len() <= MAX_ITEMS {
        out.push(b);
        return;
    }
    // Children stay with the last part, right under the end of the text they belonged to.
    let children = std::mem::take(&mut t.children);
    let mut rest = std::mem::take(&mut t.rich_text);
    let color = t.color;
    loop {
        let tail = if rest.len() > MAX_ITEMS {
            rest.split_off(MAX_ITEMS)
        } else {
            Vec::new()
        };
        let mut part = b.clone();
        let last = tail.is_empty();
        if let Some(pt) = part.text_mut() {
            *pt = TextBlock {
                rich_text: rest,
                color,
                children: if last { children.clone() } else { Vec::new() },
            };
        }
        out.push(part);
        if last {
            break;
        }
        rest = tail;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::convert::blocks::RichText;

    #[test]
    fn long_arrays_continue_in_further_blocks() {
        let rich: Vec<RichText> = (0..250).map(|i| RichText::plain(i.to_string())).collect();
        let child = Block::Paragraph(TextBlock::new(vec![RichText::plain("c")]));
        let b = Block::Bulleted(TextBlock {
            rich_text: rich,
            color: Default::default(),
            children: vec![child.clone()],
        });
        let mut report = Report::default();
        let out = finish(vec![b], &mut report);
        assert_eq!(out.len(), 3);
        assert_eq!(report.items[0].count, 2);
        assert_eq!(out[0].text().unwrap().rich_text.len(), 100);
        assert_eq!(out[2].text().unwrap().rich_text.len(), 50);
        assert!(out[0].children().is_empty());
        assert_eq!(out[2].children(), &[child]);
    }

    #[test]
    fn blank_lines_between_blocks_stay_and_edges_go() {
        let sp = || Block::Paragraph(TextBlock::default());
        let p = |s: &str| Block::Paragraph(TextBlock::new(vec![RichText::plain(s)]));
        let out = finish(
            vec![sp(), sp(), p("a"), sp(), sp(), p("b"), sp()],
            &mut Report::default(),
        );
        assert_eq!(out, vec![p("a"), sp(), sp(), p("b")]);
    }
}
