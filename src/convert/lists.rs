//! `<ul>`/`<ol>`/`<li>` to bulleted / numbered items with nested children, to
//! [`MAX_LIST_NESTING`] levels; deeper lists are flattened into the text of the deepest item.

use scraper::{ElementRef, Node};

use super::blocks::{is_spacer, Block, RichText, TextBlock};
use super::css;
use super::tags;
use super::tags::Tag;
use super::walker::{Sink, Style, TextBlockKind, Walker, MAX_DEPTH, MAX_LIST_NESTING};

impl Walker<'_> {
    /// A whole list: each `<li>` becomes an item; anything else in the list is kept in place.
    pub fn list(&mut self, e: ElementRef<'_>, st: &Style, sink: &mut Sink, depth: usize) {
        if depth > MAX_DEPTH {
            self.flatten(
                e,
                st,
                sink,
                &format!("nesting deeper than {MAX_DEPTH} levels"),
            );
            return;
        }
        if self.list_depth >= MAX_LIST_NESTING {
            self.flatten(
                e,
                st,
                sink,
                &format!("lists nested deeper than {MAX_LIST_NESTING} levels"),
            );
            return;
        }
        sink.flush(self);
        let ordered = e.value().name() == "ol";
        self.note_marker_style(e, ordered);
        // OneNote's input HTML may tag a whole list: each item carries the tag.
        let list_tags = e.attr("data-tag").map(tags::parse).unwrap_or_default();
        for t in &list_tags {
            self.report.add(
                format!("data-tag=\"{}\" on a list", t.name),
                "applied to each of its items",
            );
        }
        self.list_depth += 1;
        self.list_items(e, st, sink, depth, ordered, &list_tags);
        self.list_depth -= 1;
    }

    fn list_items(
        &mut self,
        e: ElementRef<'_>,
        st: &Style,
        sink: &mut Sink,
        depth: usize,
        ordered: bool,
        list_tags: &[Tag],
    ) {
        for child in e.children() {
            match child.value() {
                Node::Text(t) if !t.trim().is_empty() => {
                    self.report
                        .add("text directly inside a list", "kept as a paragraph");
                    // Loose text gets a block of its own, as a browser draws it on its own line.
                    let mut sub = Sink::new(TextBlockKind::Paragraph, false);
                    sub.push_text(t, st);
                    sub.flush(self);
                    sub.blocks
                        .into_iter()
                        .for_each(|b| sink.push_block(self, b));
                }
                Node::Element(el) => {
                    let Some(c) = ElementRef::wrap(child) else {
                        continue;
                    };
                    match el.name() {
                        "li" => {
                            self.note_marker_style(c, ordered);
                            let st2 = self.style_of(c, st);
                            for b in self.list_item(c, &st2, ordered, depth + 1, list_tags) {
                                sink.push_block(self, b);
                            }
                        }
                        // OneNote leaves `<br />` between items: a blank line there would end
                        // the Notion list (and restart its numbers).
                        "br" => self.report.add(
                            "blank line between list items",
                            "removed (it would split the list in Notion)",
                        ),
                        _ => {
                            self.element(c, st, sink, depth + 1);
                            sink.flush(self);
                        }
                    }
                }
                _ => {}
            }
        }
    }

    fn note_marker_style(&mut self, e: ElementRef<'_>, ordered: bool) {
        if let Some(v) = e
            .attr("style")
            .and_then(|s| css::property(s, "list-style-type"))
        {
            let v = v.to_ascii_lowercase();
            let plain = if ordered { v == "decimal" } else { v == "disc" };
            if !plain {
                self.report.add(
                    format!("list-style-type:{v}"),
                    "Notion picks the marker by nesting depth",
                );
            }
        }
        if e.attr("value").is_some() || e.attr("start").is_some() {
            self.report.add(
                "list numbering (start/value)",
                "Notion numbers items from 1 itself",
            );
        }
    }

    /// One `<li>`: its first text becomes the item, nested lists and further blocks its children.
    pub fn list_item(
        &mut self,
        li: ElementRef<'_>,
        st: &Style,
        ordered: bool,
        depth: usize,
        inherited: &[Tag],
    ) -> Vec<Block> {
        let base = if ordered {
            TextBlockKind::Numbered
        } else {
            TextBlockKind::Bulleted
        };
        if depth > MAX_DEPTH {
            let mut sub = Sink::new(base, false);
            self.flatten(
                li,
                st,
                &mut sub,
                &format!("nesting deeper than {MAX_DEPTH} levels"),
            );
            sub.flush(self);
            return sub.blocks;
        }
        // The item's own tag wins over the list's tag of the same name (`to-do:completed`).
        let own = li.attr("data-tag").map(tags::parse).unwrap_or_default();
        let mut li_tags: Vec<Tag> = inherited
            .iter()
            .filter(|t| !own.iter().any(|o| o.name == t.name))
            .cloned()
            .collect();
        li_tags.extend(own);
        let li_effect = tags::effect(&li_tags, false);
        for t in &li_tags {
            self.report.add(
                format!("data-tag=\"{}\" on a list item", t.name),
                if t.is_checkbox() {
                    "to_do (Notion to-dos carry no bullet or number)"
                } else {
                    "emoji put before the item text"
                },
            );
        }
        let mut sub = Sink::new(base, false);
        let mut first_is_nested_list = false;
        for child in li.children() {
            match child.value() {
                Node::Text(t) => sub.push_text(t, st),
                Node::Element(el) => {
                    let Some(c) = ElementRef::wrap(child) else {
                        continue;
                    };
                    if matches!(el.name(), "ul" | "ol") {
                        sub.flush(self);
                        if sub.blocks.is_empty() {
                            first_is_nested_list = true;
                        }
                        self.list(c, st, &mut sub, depth + 1);
                    } else {
                        self.element(c, st, &mut sub, depth + 1);
                    }
                }
                _ => {}
            }
        }
        sub.flush(self);
        let before = sub.blocks.len();
        let mut blocks: Vec<Block> = sub.blocks.into_iter().filter(|b| !is_spacer(b)).collect();
        for _ in blocks.len()..before {
            self.report.add(
                "blank line inside a list item",
                "removed (a Notion list item holds no blank lines)",
            );
        }
        let absorbable = !first_is_nested_list
            && blocks.first().is_some_and(|b| {
                matches!(
                    b,
                    Block::Paragraph(_)
                        | Block::Bulleted(_)
                        | Block::Numbered(_)
                        | Block::ToDo { .. }
                        | Block::Callout { .. }
                        | Block::Quote(_)
                )
            });
        let (mut rich, mut checked, mut color) = (Vec::new(), None, Default::default());
        if absorbable {
            match blocks.remove(0) {
                Block::ToDo { text, checked: c } => {
                    self.report.add(
                        "to-do in a list item",
                        "to_do (Notion to-dos carry no bullet or number)",
                    );
                    checked = Some(c);
                    rich = text.rich_text;
                    blocks.splice(0..0, text.children);
                }
                Block::Callout { text, emoji } => {
                    rich.push(RichText::plain(format!("{emoji} ")));
                    rich.extend(text.rich_text);
                    blocks.splice(0..0, text.children);
                }
                Block::Paragraph(t) | Block::Bulleted(t) | Block::Numbered(t) | Block::Quote(t) => {
                    color = t.color;
                    rich = t.rich_text;
                    blocks.splice(0..0, t.children);
                }
                _ => unreachable!("checked by `absorbable`"),
            }
        }
        if !li_effect.prefix.is_empty() {
            rich.insert(0, RichText::plain(li_effect.prefix.clone()));
        }
        let checked = li_effect.todo.or(checked);
        if rich.is_empty() && blocks.is_empty() && checked.is_none() {
            return Vec::new();
        }
        let text = TextBlock {
            rich_text: rich,
            color,
            children: blocks,
        };
        vec![match checked {
            Some(checked) => Block::ToDo { text, checked },
            None if ordered => Block::Numbered(text),
            None => Block::Bulleted(text),
        }]
    }
}
