//! The walk over OneNote's HTML: block elements become blocks, inline elements become styled
//! runs of the block being built, and everything unknown keeps its text.

use scraper::{ElementRef, Html, Node};

use super::blocks::{Annotations, Block, Color, MediaSource, RichKind, RichText, TextBlock, PLAIN};
use super::css;
use super::embedded::EMBEDDED_SCHEME;
use super::report::Report;
use super::rich_text::{merge_plain, split_text, EdgeBreaks, Inline, LinkTarget, MAX_TEXT};
use super::tags::{self, Tag};

/// Self-closed `<iframe/>`s inside one another whose swallowed markup is parsed again.
const MAX_REPARSE: usize = 2;

/// Notion's limit on an equation's expression, in characters.
pub const MAX_EQUATION: usize = 1000;

/// Element nesting beyond which content is flattened to text (keeps the stack bounded on
/// hostile input; real pages nest a few levels, lists a dozen).
pub const MAX_DEPTH: usize = 160;

/// List nesting Notion still shows usefully (each level indents further); deeper lists are
/// flattened into the text of the item at this depth, in order.
pub const MAX_LIST_NESTING: usize = 30;

/// Inherited text style.
#[derive(Clone, Debug, Default)]
pub struct Style {
    bold: bool,
    italic: bool,
    underline: bool,
    strike: bool,
    code: bool,
    fg: Color,
    bg: Color,
    link: LinkTarget,
    pre: bool,
}

impl Style {
    /// This style with a background colour (a table cell's, carried on its text).
    pub fn with_background(&self, bg: Color) -> Style {
        Style { bg, ..self.clone() }
    }

    /// The Notion annotations (one colour only: a highlight wins over a text colour).
    pub fn ann(&self) -> Annotations {
        Annotations {
            bold: self.bold,
            italic: self.italic,
            strikethrough: self.strike,
            underline: self.underline,
            code: self.code,
            color: if self.bg != Color::Default {
                self.bg
            } else {
                self.fg
            },
        }
    }
}

/// What the text being collected becomes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum TextBlockKind {
    /// paragraph (a code block when every run is monospace)
    Paragraph,
    /// heading_1..3
    Heading(u8),
    /// bulleted_list_item
    Bulleted,
    /// numbered_list_item
    Numbered,
    /// to_do
    ToDo(bool),
    /// callout
    Callout(&'static str, Color),
    /// quote
    Quote,
    /// code
    Code,
}

/// Blocks produced so far in one container, and the inline content not yet made a block.
#[derive(Debug)]
pub struct Sink {
    /// Finished blocks in order.
    pub blocks: Vec<Block>,
    inline: Inline,
    base: TextBlockKind,
    kind: TextBlockKind,
    /// Inside a `<p>`-like element: a `<br>` is always a line break.
    in_para: bool,
    /// How many of the last blocks are blank lines of code: empty monospace lines right after a
    /// code block, which join it when more code follows.
    code_blanks: usize,
    /// How far the paragraphs that made `blocks` were indented.
    pub indents: super::indent::Indents,
}

fn is_plain_code(b: &Block) -> bool {
    matches!(
        b,
        Block::Code {
            language: PLAIN,
            ..
        }
    )
}

impl Sink {
    /// An empty container whose loose text becomes `base` blocks.
    pub fn new(base: TextBlockKind, in_para: bool) -> Self {
        Self {
            blocks: Vec::new(),
            inline: Inline::default(),
            base,
            kind: base,
            in_para,
            code_blanks: 0,
            indents: Default::default(),
        }
    }

    /// Adds a finished block; a code paragraph right after a code block (nothing but blank lines
    /// of code between) joins it as its next lines.
    pub fn push_block(&mut self, w: &mut Walker<'_>, block: Block) {
        let before = self.blocks.len() - self.code_blanks;
        let joins = is_plain_code(&block) && before > 0 && is_plain_code(&self.blocks[before - 1]);
        let blank = std::mem::take(&mut self.code_blanks);
        if !joins {
            self.blocks.push(block);
            return;
        }
        self.blocks.truncate(before);
        if let (
            Block::Code { rich_text: new, .. },
            Some(Block::Code {
                rich_text: prev, ..
            }),
        ) = (block, self.blocks.last_mut())
        {
            let mut joined = std::mem::take(prev);
            joined.push(RichText::plain("\n".repeat(blank + 1)));
            joined.extend(new);
            *prev = merge_plain(joined);
        }
        w.report.add(
            "monospace paragraph right after another",
            "joined to the code block above as its next line",
        );
        for _ in 0..blank {
            w.report.add(
                "empty monospace line between code lines",
                "kept as a blank line of the code block",
            );
        }
    }

    /// A blank line (an empty paragraph); `code`: it is an empty monospace line, which becomes a
    /// line of the code block right before it when more code follows.
    fn blank_line(&mut self, code: bool) {
        let before = self.blocks.len() - self.code_blanks;
        let after_code = code && before > 0 && is_plain_code(&self.blocks[before - 1]);
        self.blocks.push(Block::Paragraph(TextBlock::default()));
        self.code_blanks = if after_code { self.code_blanks + 1 } else { 0 };
    }

    /// Turns the collected inline content into a block of the current kind; line breaks at its
    /// start or end become blank lines around it, as a browser shows them.
    pub fn flush(&mut self, w: &mut Walker<'_>) {
        let kind = std::mem::replace(&mut self.kind, self.base);
        let mut inline = std::mem::take(&mut self.inline);
        w.placeholders += inline.placeholders;
        let edges = if kind == TextBlockKind::Code {
            EdgeBreaks::default()
        } else {
            inline.take_edge_breaks()
        };
        let sole_display = inline.is_sole_display_equation();
        let rich = inline.finish();
        let block = make_block(kind, rich, sole_display).map(|mut b| {
            if matches!(self.base, TextBlockKind::Heading(_)) && !matches!(b, Block::Heading { .. })
            {
                // A heading turned into another block keeps its emphasis on its text.
                embolden(&mut b);
            }
            b
        });
        let code = block.as_ref().is_some_and(is_plain_code);
        for _ in 0..edges.before {
            self.blank_line(code);
        }
        if let Some(b) = block {
            self.push_block(w, b);
        }
        for _ in 0..edges.after {
            self.blank_line(code);
        }
    }

    /// A blank line between blocks (`<br>` between paragraphs).
    fn spacer(&mut self, w: &mut Walker<'_>) {
        self.flush(w);
        self.blank_line(false);
    }

    /// Adds a text node in the given style.
    pub fn push_text(&mut self, t: &str, st: &Style) {
        self.inline.push_text(t, st.ann(), &st.link, st.pre);
    }

    /// Whether the next text would open a fresh block of the base kind (where a tag on the first
    /// span can still decide the block type).
    fn fresh(&self) -> bool {
        self.inline.is_empty() && self.kind == self.base
    }
}

/// Bold on every run of a text block (a heading's emphasis kept once it is no heading).
pub fn embolden(b: &mut Block) {
    if let Some(t) = b.text_mut() {
        for r in &mut t.rich_text {
            r.annotations.bold = true;
        }
    }
}

fn is_code_run(r: &RichText) -> bool {
    match &r.kind {
        RichKind::Text { content, .. } => r.annotations.code || content.trim().is_empty(),
        _ => false,
    }
}

/// The block for collected text; `None` when there is nothing to show. `sole_display`: the text is
/// one display equation and nothing else (it becomes an `equation` block).
fn make_block(kind: TextBlockKind, mut rich: Vec<RichText>, sole_display: bool) -> Option<Block> {
    let empty = rich.is_empty();
    let tb = |r| TextBlock::new(r);
    Some(match kind {
        TextBlockKind::ToDo(checked) => Block::ToDo {
            text: tb(rich),
            checked,
        },
        TextBlockKind::Callout(emoji, color) => Block::Callout {
            text: TextBlock { color, ..tb(rich) },
            emoji: emoji.to_string(),
        },
        _ if empty => return None,
        TextBlockKind::Paragraph
            if sole_display
                && rich.len() == 1
                && matches!(rich[0].kind, RichKind::Equation { .. }) =>
        {
            let Some(RichText {
                kind: RichKind::Equation { expression },
                ..
            }) = rich.pop()
            else {
                return None;
            };
            Block::Equation { expression }
        }
        TextBlockKind::Paragraph
            if rich.iter().all(is_code_run) && rich.iter().any(|r| r.annotations.code) =>
        {
            for r in &mut rich {
                r.annotations.code = false;
            }
            Block::Code {
                rich_text: merge_plain(rich),
                language: PLAIN,
            }
        }
        TextBlockKind::Code => {
            for r in &mut rich {
                r.annotations.code = false;
            }
            Block::Code {
                rich_text: rich,
                language: PLAIN,
            }
        }
        TextBlockKind::Paragraph => Block::Paragraph(tb(rich)),
        TextBlockKind::Heading(level) => Block::Heading {
            level,
            text: tb(rich),
        },
        TextBlockKind::Bulleted => Block::Bulleted(tb(rich)),
        TextBlockKind::Numbered => Block::Numbered(tb(rich)),
        TextBlockKind::Quote => Block::Quote(tb(rich)),
    })
}

/// Conversion state shared by the whole page.
pub struct Walker<'r> {
    /// Where approximations go.
    pub report: &'r mut Report,
    /// U+FFFC placeholders dropped so far.
    pub placeholders: usize,
    /// Lists open around the element being converted.
    pub list_depth: usize,
    /// Files carried in the page itself (`data:` URLs) so far, for their names.
    pub embedded: usize,
    /// Self-closed `<iframe/>`s whose swallowed markup is being parsed again around this point.
    reparsing: usize,
    /// Images and files on the page, and how many of each the walk has met, to name the one a
    /// placeholder stands for.
    media: MediaCount,
    /// Files that came beside the HTML, by their `embedded:` key (`None`: Graph's HTML, where an
    /// `embedded:` source is no source at all).
    pub carried: Option<Vec<super::embedded::EmbeddedFile>>,
}

/// Images and attached files: how many the page has and how many were met so far.
#[derive(Clone, Copy, Debug, Default)]
pub struct MediaCount {
    /// `<img>` elements of the page.
    pub images: usize,
    /// `<object>` and `<embed>` elements of the page.
    pub files: usize,
    images_seen: usize,
    files_seen: usize,
}

impl MediaCount {
    /// Counts the images and files under `root` (iteratively: the depth is the input's).
    pub fn of(root: ElementRef<'_>) -> Self {
        let mut c = Self::default();
        for n in root.descendants() {
            if let Node::Element(el) = n.value() {
                match el.name() {
                    "img" => c.images += 1,
                    "object" | "embed" => c.files += 1,
                    _ => {}
                }
            }
        }
        c
    }
}

/// `what n of total`, or `what n` when the count missed it (markup parsed again from a
/// self-closed `<iframe/>` is not counted beforehand).
fn position(what: &str, n: usize, total: usize) -> String {
    if n <= total {
        format!("{what} {n} of {total}")
    } else {
        format!("{what} {n}")
    }
}

/// Whether `s` starts with the ASCII `prefix`, case aside (never slicing inside a character: an
/// attribute may start with any text).
fn starts_with_ignore_case(s: &str, prefix: &str) -> bool {
    s.as_bytes()
        .get(..prefix.len())
        .is_some_and(|p| p.eq_ignore_ascii_case(prefix.as_bytes()))
}

/// The file name at the end of a path or URL that cannot be fetched (`images/pic.png`), if any.
fn file_name_in(url: &str) -> Option<String> {
    if starts_with_ignore_case(url, "data:") {
        return None;
    }
    let path = url.split(['?', '#']).next().unwrap_or("");
    let name = path.rsplit(['/', '\\']).next().unwrap_or("");
    let plausible = name.contains('.')
        && !name.starts_with('.')
        && name.chars().count() <= 200
        && !name.chars().any(|c| c.is_control() || c == ':');
    plausible.then(|| name.to_string())
}

/// Elements whose content is never shown.
const INVISIBLE: [&str; 9] = [
    "head", "title", "meta", "script", "style", "link", "template", "base", "noscript",
];
/// Containers that hold blocks.
const CONTAINERS: [&str; 20] = [
    "div", "body", "html", "section", "article", "main", "header", "footer", "nav", "aside",
    "center", "form", "fieldset", "figure", "dl", "dd", "dt", "address", "details", "summary",
];
/// Elements that start a new line when flattened.
const BLOCKISH: [&str; 14] = [
    "p", "div", "li", "tr", "h1", "h2", "h3", "h4", "h5", "h6", "pre", "table", "ul", "ol",
];
/// Inline elements whose meaning Notion's annotations carry fully.
const INLINE: [&str; 22] = [
    "span", "b", "strong", "i", "em", "u", "ins", "s", "strike", "del", "code", "kbd", "samp",
    "tt", "font", "mark", "abbr", "label", "time", "var", "dfn", "q",
];

impl<'r> Walker<'r> {
    /// A walker reporting into `report`.
    pub fn new(report: &'r mut Report) -> Self {
        Self {
            report,
            placeholders: 0,
            list_depth: 0,
            embedded: 0,
            reparsing: 0,
            media: MediaCount::default(),
            carried: None,
        }
    }

    /// Tells the walker how many images and files the page has.
    pub fn set_media_count(&mut self, media: MediaCount) {
        self.media = media;
    }

    /// Walks the children of `e` into `sink`.
    pub fn children(&mut self, e: ElementRef<'_>, st: &Style, sink: &mut Sink, depth: usize) {
        for child in e.children() {
            match child.value() {
                Node::Text(t) => {
                    if st.fg != Color::Default && st.bg != Color::Default && !t.trim().is_empty() {
                        self.report.add(
                            "text colour on a background colour",
                            "text colour not kept (Notion gives a run one colour: the background)",
                        );
                    }
                    sink.inline.push_text(t, st.ann(), &st.link, st.pre)
                }
                Node::Element(_) => {
                    if let Some(c) = ElementRef::wrap(child) {
                        self.element(c, st, sink, depth + 1);
                    }
                }
                // Graph leaves this comment where a page had ink it cannot export.
                Node::Comment(c) if c.contains("InkNode") => self.report.add(
                    "ink (handwriting, drawings)",
                    "not migrated: Graph does not return ink",
                ),
                _ => {}
            }
        }
    }

    /// The style `e` gives its content.
    pub fn style_of(&mut self, e: ElementRef<'_>, parent: &Style) -> Style {
        let mut st = parent.clone();
        match e.value().name() {
            "b" | "strong" => st.bold = true,
            "i" | "em" => st.italic = true,
            "u" | "ins" => st.underline = true,
            "s" | "strike" | "del" => st.strike = true,
            "code" | "kbd" | "samp" | "tt" => st.code = true,
            "mark" => st.bg = Color::Background(super::blocks::Hue::Yellow),
            "font" => {
                if let Some(c) = e.attr("color").and_then(css::parse_color) {
                    st.fg = css::text_color(c);
                }
            }
            _ => {}
        }
        let Some(style) = e.attr("style") else {
            return st;
        };
        for (k, v) in css::declarations(style) {
            match k.as_str() {
                "font-weight" => {
                    if let Some(b) = css::is_bold_weight(v) {
                        st.bold = b;
                    }
                }
                "font-style" => st.italic = v.contains("italic") || v.contains("oblique"),
                "text-decoration" | "text-decoration-line" => {
                    let v = v.to_ascii_lowercase();
                    st.underline = v.contains("underline");
                    st.strike = v.contains("line-through");
                }
                "font-family" => st.code = css::is_monospace(v),
                "color" => {
                    if let Some(c) = css::parse_color(v) {
                        st.fg = css::text_color(c);
                        // Black text is Notion's own default: nothing is approximated.
                        if st.fg != Color::Default {
                            self.report
                                .add("CSS color", "nearest Notion colour (text colour)");
                        }
                    }
                }
                // A table's, row's or cell's background is the table's to carry (and to count).
                "background-color" | "background"
                    if !matches!(
                        e.value().name(),
                        "td" | "th" | "tr" | "table" | "thead" | "tbody" | "tfoot"
                    ) =>
                {
                    if let Some(c) = css::parse_color(v) {
                        let bg = css::background_color(c);
                        if parent.bg != Color::Default && parent.bg != bg {
                            self.report.add(
                                "background colour inside another background colour",
                                "the inner one kept on its text",
                            );
                        }
                        st.bg = bg;
                        // A white background is Notion's page itself: nothing is approximated.
                        if bg != Color::Default {
                            self.report
                                .add("CSS background-color", "nearest Notion colour (background)");
                        }
                    }
                }
                "font-size"
                    if !matches!(
                        e.value().name(),
                        "body" | "h1" | "h2" | "h3" | "h4" | "h5" | "h6"
                    ) =>
                {
                    self.report
                        .add("font-size", "not kept (Notion text has one size)");
                }
                _ => {}
            }
        }
        st
    }

    /// Applies the tags of an element to the text about to be collected in `sink`: a to-do or
    /// callout when the text starts here, an emoji in the text otherwise.
    fn apply_tags(&mut self, tags: &[Tag], sink: &mut Sink) {
        if tags.is_empty() {
            return;
        }
        let fresh = sink.fresh();
        let can_callout = fresh
            && matches!(
                sink.base,
                TextBlockKind::Paragraph | TextBlockKind::Heading(_) | TextBlockKind::Quote
            );
        let effect = tags::effect(tags, can_callout);
        let mut prefix = effect.prefix.clone();
        if fresh {
            if let Some(checked) = effect.todo {
                // List items report this when the item is assembled.
                if let TextBlockKind::Heading(_) = sink.base {
                    self.report.add(
                        "data-tag on a heading",
                        "to_do, its text bold (heading style dropped)",
                    );
                }
                sink.kind = TextBlockKind::ToDo(checked);
            } else if let Some((emoji, color)) = effect.callout {
                if let TextBlockKind::Heading(_) = sink.base {
                    self.report.add(
                        "data-tag on a heading",
                        "callout, its text bold (heading style dropped)",
                    );
                }
                sink.kind = TextBlockKind::Callout(emoji, color);
            }
        } else {
            // Mid-text a tag cannot change the block: its box shows as a character.
            if let Some(checked) = effect.todo {
                prefix.insert_str(0, if checked { "☑ " } else { "☐ " });
            }
        }
        for t in tags {
            let how = if effect.callout.is_some_and(|(e, _)| e == t.emoji()) && fresh {
                "callout with the tag's emoji"
            } else if t.is_checkbox() && fresh {
                "to_do (plus the tag's emoji unless a plain to-do)"
            } else {
                "emoji put before the text"
            };
            if t.name != "to-do" || !fresh {
                self.report.add(format!("data-tag=\"{}\"", t.name), how);
            }
        }
        if !prefix.is_empty() {
            sink.inline
                .push_text(&prefix, Annotations::default(), &LinkTarget::None, false);
        }
    }

    /// Converts one element into `sink`.
    pub fn element(&mut self, e: ElementRef<'_>, parent: &Style, sink: &mut Sink, depth: usize) {
        let name = e.value().name();
        if INVISIBLE.contains(&name) {
            return;
        }
        if depth > MAX_DEPTH {
            self.flatten(
                e,
                parent,
                sink,
                &format!("nesting deeper than {MAX_DEPTH} levels"),
            );
            return;
        }
        let st = self.style_of(e, parent);
        let tags = e.attr("data-tag").map(tags::parse).unwrap_or_default();
        match name {
            "br" => {
                if sink.in_para || !sink.inline.is_empty() {
                    sink.inline.push_break(st.ann());
                } else {
                    sink.spacer(self);
                }
            }
            "p" | "h1" | "h2" | "h3" | "h4" | "h5" | "h6" | "pre" => {
                self.paragraph(e, name, &st, &tags, sink, depth)
            }
            "ul" | "ol" => self.list(e, &st, sink, depth),
            "li" => {
                // A list item outside any list: a bullet, as a browser shows it.
                sink.flush(self);
                for b in self.list_item(e, &st, false, depth, &[]) {
                    sink.push_block(self, b);
                }
            }
            "table" => {
                sink.flush(self);
                for b in self.table(e, &st, depth) {
                    sink.push_block(self, b);
                }
            }
            "img" => {
                sink.flush(self);
                self.apply_tags(&tags, sink);
                sink.flush(self);
                for b in self.image(e) {
                    sink.push_block(self, b);
                }
            }
            "object" | "embed" => {
                sink.flush(self);
                for b in self.attachment(e) {
                    sink.push_block(self, b);
                }
                // An object's own content is its fallback (a self-closed one has none: the
                // pass before parsing closes it).
                self.children(e, &st, sink, depth);
            }
            "iframe" => self.iframe(e, &st, sink, depth),
            "math" => self.math(e, sink),
            "hr" => {
                sink.flush(self);
                sink.push_block(self, Block::Divider);
            }
            "blockquote" => {
                sink.flush(self);
                let mut sub = Sink::new(TextBlockKind::Quote, false);
                self.children(e, &st, &mut sub, depth);
                sub.flush(self);
                for b in sub.blocks {
                    sink.push_block(
                        self,
                        match b {
                            Block::Paragraph(t) if !t.rich_text.is_empty() => Block::Quote(t),
                            other => other,
                        },
                    );
                }
            }
            "a" => self.link(e, st, sink, depth),
            n if CONTAINERS.contains(&n) => {
                sink.flush(self);
                self.apply_tags(&tags, sink);
                self.children(e, &st, sink, depth);
                sink.flush(self);
            }
            n => {
                if !INLINE.contains(&n) {
                    let what = match n {
                        "sup" => "text kept (no superscript in Notion)",
                        "sub" => "text kept (no subscript in Notion)",
                        "cite" => "text kept as normal text",
                        _ => "unknown element: text kept",
                    };
                    self.report.add(format!("<{n}>"), what);
                }
                self.apply_tags(&tags, sink);
                self.children(e, &st, sink, depth);
            }
        }
    }

    /// Content nested too deep (`why`): its text, in order, into the current block, a line break
    /// where a block (paragraph, item, row) starts. Iterative: the depth is the input's.
    pub fn flatten(&mut self, e: ElementRef<'_>, st: &Style, sink: &mut Sink, why: &str) {
        self.report.add(why, "flattened to text, in order");
        for node in e.descendants() {
            match node.value() {
                Node::Text(t) => sink.inline.push_text(t, st.ann(), &st.link, st.pre),
                Node::Element(el) if el.name() == "br" => sink.inline.push_break(st.ann()),
                Node::Element(el) if BLOCKISH.contains(&el.name()) && !sink.inline.ends_line() => {
                    sink.inline.push_break(st.ann())
                }
                _ => {}
            }
        }
    }

    fn paragraph(
        &mut self,
        e: ElementRef<'_>,
        name: &str,
        st: &Style,
        tags: &[Tag],
        sink: &mut Sink,
        depth: usize,
    ) {
        sink.flush(self);
        let base = match name {
            "h1" => TextBlockKind::Heading(1),
            "h2" => TextBlockKind::Heading(2),
            "h3" => TextBlockKind::Heading(3),
            // OneNote's fourth heading level is Notion's `heading_4` (since 2026-03-30).
            "h4" => TextBlockKind::Heading(4),
            "h5" | "h6" => {
                self.report.add(
                    format!("<{name}>"),
                    "heading_4 (Notion has four heading levels)",
                );
                TextBlockKind::Heading(4)
            }
            "pre" => TextBlockKind::Code,
            _ => TextBlockKind::Paragraph,
        };
        let mut st = st.clone();
        st.pre |= name == "pre";
        let mut sub = Sink::new(base, true);
        self.apply_tags(tags, &mut sub);
        self.children(e, &st, &mut sub, depth);
        sub.flush(self);
        // An empty paragraph is a blank line, as OneNote shows it; an empty monospace one after
        // code is a blank line of that code when more code follows.
        let first = sink.blocks.len();
        if sub.blocks.is_empty() && name == "p" {
            sink.blank_line(st.code);
        }
        for b in sub.blocks {
            if super::blocks::is_spacer(&b) {
                sink.blank_line(st.code);
            } else {
                sink.push_block(self, b);
            }
        }
        sink.indents.mark(first, sink.blocks.len(), e.attr("style"));
    }

    fn link(&mut self, e: ElementRef<'_>, mut st: Style, sink: &mut Sink, depth: usize) {
        let href = e.attr("href").map(str::trim).unwrap_or("");
        match classify_link(href) {
            Link::None => self.children(e, &st, sink, depth),
            Link::Url(u) => {
                st.link = LinkTarget::Url(u);
                self.children(e, &st, sink, depth);
            }
            Link::Page(id) => {
                st.link = LinkTarget::Page(id);
                self.children(e, &st, sink, depth);
            }
            Link::Unusable => {
                self.report.add(
                    "link with an unusable URL",
                    "kept as text with its target in brackets",
                );
                st.link = LinkTarget::None;
                self.children(e, &st, sink, depth);
                let ann = Annotations {
                    color: Color::Text(super::blocks::Hue::Gray),
                    ..Annotations::default()
                };
                sink.inline
                    .push_text(&format!(" ({href})"), ann, &LinkTarget::None, false);
            }
        }
    }

    /// A `<math>` element: an inline equation (an `equation` block when it is display math alone in
    /// its paragraph), or a LaTeX code block when Notion's 1000-character limit would refuse it.
    fn math(&mut self, e: ElementRef<'_>, sink: &mut Sink) {
        let Ok(m) = crate::mathml::convert_element(e) else {
            // Nothing to show (an empty `<math>`): nothing is lost.
            return;
        };
        for w in &m.warnings {
            self.report.add(
                format!("<math>: {w}"),
                "approximated in the equation's LaTeX",
            );
        }
        if m.latex.chars().count() <= MAX_EQUATION {
            self.report
                .add("<math>", "MathML converted to a KaTeX equation");
            sink.inline
                .push_equation(m.latex, m.display, Annotations::default());
        } else {
            self.report.add(
                format!("<math> longer than {MAX_EQUATION} characters of LaTeX"),
                "kept as a LaTeX code block",
            );
            sink.flush(self);
            let rich_text = split_text(&m.latex, MAX_TEXT)
                .into_iter()
                .map(RichText::plain)
                .collect();
            sink.push_block(
                self,
                Block::Code {
                    rich_text,
                    language: "latex",
                },
            );
        }
    }

    fn iframe(&mut self, e: ElementRef<'_>, st: &Style, sink: &mut Sink, depth: usize) {
        sink.flush(self);
        let url = e
            .attr("data-original-src")
            .or_else(|| e.attr("src"))
            .map(str::trim)
            .unwrap_or("");
        if let Some(u) = usable_url(url).filter(|u| u.starts_with("http")) {
            if is_video_site(&u) {
                sink.push_block(self, Block::Video { url: u });
            } else {
                sink.push_block(self, Block::Embed { url: u });
            }
        } else if !url.is_empty() {
            self.report
                .add("<iframe> with an unusable URL", "URL kept as text");
            sink.inline
                .push_text(url, Annotations::default(), &LinkTarget::None, false);
            sink.flush(self);
        }
        // `<iframe ... />` is not self-closing in HTML: the rest of the page became its text.
        let raw: String = e.text().collect();
        if !raw.trim().is_empty() && self.reparsing >= MAX_REPARSE {
            // Each level would parse the rest of the page again and hold it: its text stays.
            self.report.add(
                format!("self-closed <iframe/> nested more than {MAX_REPARSE} deep"),
                "the markup it swallowed kept as text",
            );
            sink.inline
                .push_text(&raw, Annotations::default(), &LinkTarget::None, false);
            sink.flush(self);
        } else if !raw.trim().is_empty() {
            self.report.add(
                "self-closed <iframe/>",
                "the markup it swallowed was parsed as page content",
            );
            let frag = Html::parse_fragment(&raw);
            drop(raw);
            self.reparsing += 1;
            self.children(frag.root_element(), st, sink, depth);
            self.reparsing -= 1;
            sink.flush(self);
        }
    }

    fn image(&mut self, e: ElementRef<'_>) -> Vec<Block> {
        self.media.images_seen += 1;
        let attr = |n: &str| e.attr(n).map(str::trim).filter(|s| !s.is_empty());
        let src = attr("src");
        let url = attr("data-fullres-src").or(src).unwrap_or("");
        let mime = e
            .attr("data-fullres-src-type")
            .or_else(|| e.attr("data-src-type"))
            .map(str::to_string);
        let mut cap = Inline::default();
        if let Some(alt) = e.attr("alt") {
            cap.push_text(alt, Annotations::default(), &LinkTarget::None, false);
        }
        self.placeholders += cap.placeholders;
        let caption = cap.finish();
        if e.attr("width").is_some() || e.attr("height").is_some() {
            self.report.add(
                "<img> width/height",
                "not kept (Notion sizes images itself)",
            );
        }
        let source = match self.source(url, None, mime, "image") {
            // The smaller rendition OneNote shows is the fallback when the full resolution cannot
            // be fetched (only another Graph resource: the writer fetches it the same way).
            Ok(MediaSource::Resource {
                url: full,
                file_name,
                mime,
                ..
            }) => {
                let fallback = src
                    .and_then(|s| match media_source(s, None, None) {
                        Some(MediaSource::Resource { url, .. }) => Some(url),
                        _ => None,
                    })
                    .filter(|s| *s != full);
                MediaSource::Resource {
                    url: full,
                    file_name,
                    mime,
                    fallback,
                }
            }
            Ok(s) => s,
            Err(why) => {
                // The page it was rendered from, when OneNote names one.
                let from = attr("data-render-src")
                    .or_else(|| attr("data-render-original-src"))
                    .and_then(usable_url);
                let why = if from.is_some() && url.is_empty() {
                    "rendered from a web page, no image file"
                } else {
                    why
                };
                let at = position("image", self.media.images_seen, self.media.images);
                let (label, named) = if !caption.is_empty() {
                    (
                        caption,
                        "visible placeholder naming its alt text and position",
                    )
                } else if let Some(name) = file_name_in(url) {
                    (
                        vec![RichText::plain(name)],
                        "visible placeholder naming its file name and position",
                    )
                } else {
                    (
                        Vec::new(),
                        "visible placeholder naming its position (no alt text)",
                    )
                };
                self.report
                    .add(format!("<img> not carried over ({why})"), named);
                return vec![placeholder("🖼️", &at, label, why, from)];
            }
        };
        with_caption_overflow(self.report, caption, |caption| Block::Image {
            source,
            caption,
        })
    }

    /// The source of a media element: a Graph resource, a public URL, or the bytes of a `data:`
    /// URL; else why it cannot be carried over.
    fn source(
        &mut self,
        url: &str,
        file_name: Option<String>,
        mime: Option<String>,
        what: &str,
    ) -> Result<MediaSource, &'static str> {
        if starts_with_ignore_case(url, "data:") {
            let Some(file) = super::embedded::decode(url, file_name, what, self.embedded + 1)
            else {
                return Err("its data: URL cannot be decoded");
            };
            self.embedded += 1;
            self.report
                .add(format!("{what} in a data: URL"), "uploaded from its bytes");
            return Ok(MediaSource::Embedded(file));
        }
        if let Some(carried) = &self.carried {
            if url.len() > EMBEDDED_SCHEME.len()
                && url[..EMBEDDED_SCHEME.len()].eq_ignore_ascii_case(EMBEDDED_SCHEME)
            {
                return match carried.iter().find(|f| f.key == url) {
                    Some(f) => Ok(MediaSource::Embedded(f.clone())),
                    None => Err("its bytes are not in the OneNote file"),
                };
            }
        }
        if url.is_empty() {
            return Err("no source");
        }
        media_source(url, file_name, mime).ok_or("no usable source URL")
    }

    fn attachment(&mut self, e: ElementRef<'_>) -> Vec<Block> {
        self.media.files_seen += 1;
        let name = e
            .attr("data-attachment")
            .map(str::trim)
            .filter(|n| !n.is_empty())
            .map(str::to_string);
        let url = e
            .attr("data")
            .or_else(|| e.attr("src"))
            .unwrap_or("")
            .trim();
        let mime = e.attr("type").map(str::to_string);
        let is_pdf = mime.as_deref() == Some("application/pdf")
            || name
                .as_deref()
                .is_some_and(|n| n.to_ascii_lowercase().ends_with(".pdf"));
        let name_text = || {
            name.as_ref()
                .map(|n| {
                    let mut i = Inline::default();
                    i.push_text(n, Annotations::default(), &LinkTarget::None, false);
                    i.finish()
                })
                .unwrap_or_default()
        };
        let source = match self.source(url, name.clone(), mime.clone(), "file") {
            Ok(s) => s,
            Err(why) => {
                let at = position("file", self.media.files_seen, self.media.files);
                let label = match name_text() {
                    l if !l.is_empty() => l,
                    _ => file_name_in(url).map(RichText::plain).into_iter().collect(),
                };
                self.report.add(
                    format!("<object> not carried over ({why})"),
                    if label.is_empty() {
                        "visible placeholder naming its position (no file name)"
                    } else {
                        "visible placeholder naming the file and its position"
                    },
                );
                return vec![placeholder("📎", &at, label, why, None)];
            }
        };
        if is_pdf {
            with_caption_overflow(self.report, name_text(), |caption| Block::Pdf {
                source,
                caption,
            })
        } else {
            // Notion's file name field is short; a long name stays whole in the caption.
            let short = name.clone().filter(|n| n.chars().count() <= 900);
            let caption = if short.is_some() {
                Vec::new()
            } else {
                name_text()
            };
            with_caption_overflow(self.report, caption, |caption| Block::File {
                source,
                name: short,
                caption,
            })
        }
    }
}

/// The visible trace of a file that cannot be carried over: its icon, its label (alt text or file
/// name) when it has one, its position on the page (`at`: "image 2 of 3"), why, and the page it
/// came from when known, so a person can find it in OneNote.
fn placeholder(
    icon: &str,
    at: &str,
    mut label: Vec<RichText>,
    why: &str,
    from: Option<String>,
) -> Block {
    // Room for the icon and the reason within the 100-object limit.
    label.truncate(90);
    let mut rich = vec![RichText::plain(format!("{icon} "))];
    let note = if label.is_empty() {
        let mut at = at.to_string();
        if let Some(first) = at.get_mut(..1) {
            first.make_ascii_uppercase();
        }
        rich.push(RichText::plain(at));
        format!(" (not carried over: {why})")
    } else {
        rich.extend(label);
        format!(" ({at}, not carried over: {why})")
    };
    let gray = Annotations {
        color: Color::Text(super::blocks::Hue::Gray),
        italic: true,
        ..Annotations::default()
    };
    rich.push(RichText {
        kind: RichKind::Text {
            content: note,
            link: None,
        },
        annotations: gray,
    });
    if let Some(u) = from {
        rich.push(RichText::plain(" "));
        rich.push(RichText {
            kind: RichKind::Text {
                content: u.clone(),
                link: Some(u),
            },
            annotations: gray,
        });
    }
    Block::Paragraph(TextBlock::new(merge_plain(rich)))
}

/// A media block with at most 100 caption objects; the rest of a huge caption follows as text.
fn with_caption_overflow(
    report: &mut Report,
    mut caption: Vec<RichText>,
    make: impl FnOnce(Vec<RichText>) -> Block,
) -> Vec<Block> {
    let rest = if caption.len() > 100 {
        caption.split_off(100)
    } else {
        Vec::new()
    };
    let mut out = vec![make(caption)];
    if !rest.is_empty() {
        report.add(
            format!(
                "{} caption with more than 100 text runs",
                out[0].type_name()
            ),
            "the rest follows as a paragraph",
        );
        out.push(Block::Paragraph(TextBlock::new(rest)));
    }
    out
}

/// What an `href` is good for.
enum Link {
    None,
    Url(String),
    Page(String),
    Unusable,
}

fn classify_link(href: &str) -> Link {
    if href.is_empty() {
        return Link::None;
    }
    if starts_with_ignore_case(href, "onenote:") {
        return match onenote_page_id(href) {
            Some(id) => Link::Page(id),
            None => Link::Unusable,
        };
    }
    match usable_url(href) {
        Some(u) => Link::Url(u),
        None => Link::Unusable,
    }
}

/// The `{GUID}` of `page-id=` in an `onenote:` link.
pub fn onenote_page_id(href: &str) -> Option<String> {
    let lower = href.to_ascii_lowercase();
    let start = lower.find("page-id=")? + "page-id=".len();
    let raw = href[start..].split('&').next().unwrap_or("");
    let id = raw
        .replace("%7B", "{")
        .replace("%7b", "{")
        .replace("%7D", "}")
        .replace("%7d", "}");
    let inner = id.trim_start_matches('{').trim_end_matches('}');
    let ok = !inner.is_empty()
        && inner.len() <= 64
        && inner.chars().all(|c| c.is_ascii_alphanumeric() || c == '-');
    ok.then(|| format!("{{{inner}}}"))
}

/// A URL Notion accepts as a link: http(s) or mailto, parseable, at most 2000 characters.
pub fn usable_url(u: &str) -> Option<String> {
    if u.is_empty() || u.len() > MAX_TEXT || u.chars().any(char::is_whitespace) {
        return None;
    }
    let parsed = url::Url::parse(u).ok()?;
    match parsed.scheme() {
        "http" | "https" if parsed.host_str().is_some_and(|h| !h.is_empty()) => {}
        "mailto" if u.len() > 7 => {}
        _ => return None,
    }
    // Notion re-serialises nothing: send the text as written when it is already valid.
    Some(u.to_string())
}

fn media_source(url: &str, file_name: Option<String>, mime: Option<String>) -> Option<MediaSource> {
    let u = usable_url(url).filter(|u| u.starts_with("http"))?;
    if u.contains("/onenote/resources/") || u.contains("/onenote/resources%2F") {
        Some(MediaSource::Resource {
            url: u,
            file_name,
            mime,
            fallback: None,
        })
    } else {
        Some(MediaSource::External(u))
    }
}

fn is_video_site(u: &str) -> bool {
    let host = url::Url::parse(u)
        .ok()
        .and_then(|p| p.host_str().map(str::to_ascii_lowercase))
        .unwrap_or_default();
    const SITES: [&str; 6] = [
        "youtube.com",
        "youtu.be",
        "youtube-nocookie.com",
        "vimeo.com",
        "dailymotion.com",
        "loom.com",
    ];
    SITES
        .iter()
        .any(|s| host == *s || host.ends_with(&format!(".{s}")))
}
