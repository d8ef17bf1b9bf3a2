//! Building rich text from HTML text the way a browser renders it (collapsed whitespace, `<br>`
//! as a line break), and splitting it to Notion's 2000-unit limit.

use super::blocks::{Annotations, RichKind, RichText};

/// Notion's limit on one text object, counted in UTF-16 units (what Notion's JavaScript counts;
/// it is never more than the number of chars, so either way of counting is satisfied).
pub const MAX_TEXT: usize = 2000;
/// Room kept in page-link text for the visible target added until the link is resolved.
const PAGE_LINK_TEXT: usize = MAX_TEXT - 64;

/// Where a run of text links to.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub enum LinkTarget {
    /// No link.
    #[default]
    None,
    /// A valid http(s)/mailto URL.
    Url(String),
    /// Another OneNote page, by its page id.
    Page(String),
}

#[derive(Debug)]
enum Piece {
    Text {
        text: String,
        ann: Annotations,
        link: LinkTarget,
    },
    Equation {
        expression: String,
        display: bool,
        ann: Annotations,
    },
}

/// Blank lines that line breaks at the edges of a block show (see [`Inline::take_edge_breaks`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EdgeBreaks {
    /// Blank lines before the block.
    pub before: usize,
    /// Blank lines after it.
    pub after: usize,
}

/// Inline content being collected for one block.
#[derive(Debug, Default)]
pub struct Inline {
    pieces: Vec<Piece>,
    pending_space: bool,
    /// Some visible content has been added since the start or the last line break.
    in_line: bool,
    /// U+FFFC placeholders dropped.
    pub placeholders: usize,
    /// Some text was preformatted (`<pre>`): a code block, whose text is never linked.
    verbatim: bool,
}

/// OneNote puts U+FFFC where an embedded object sat; it carries no text.
const PLACEHOLDER: char = '\u{FFFC}';

fn is_html_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r' | '\x0c')
}

/// Invisible characters removed from text; where one stood between two words a space remains
/// (zero-width joiners are kept: emoji sequences and scripts need them).
fn is_invisible(c: char) -> bool {
    matches!(c, PLACEHOLDER | '\u{200B}' | '\u{FEFF}')
}

impl Inline {
    /// Whether the content is one display equation and nothing visible besides (line breaks and
    /// spaces around it show nothing).
    pub fn is_sole_display_equation(&self) -> bool {
        let mut display = 0;
        for p in &self.pieces {
            match p {
                Piece::Equation { display: true, .. } => display += 1,
                Piece::Equation { .. } => return false,
                Piece::Text { text, .. } if text.trim().is_empty() => {}
                Piece::Text { .. } => return false,
            }
        }
        display == 1
    }

    /// Whether nothing has been added since the start or the last line break.
    pub fn ends_line(&self) -> bool {
        !self.in_line
    }

    /// Whether no visible content (text, break or equation) has been added.
    pub fn is_empty(&self) -> bool {
        self.pieces.is_empty()
    }

    fn text_run(&mut self, ann: Annotations, link: &LinkTarget) -> &mut String {
        let reuse = matches!(self.pieces.last(), Some(Piece::Text { ann: a, link: l, .. }) if *a == ann && l == link);
        if !reuse {
            self.pieces.push(Piece::Text {
                text: String::new(),
                ann,
                link: link.clone(),
            });
        }
        match self.pieces.last_mut() {
            Some(Piece::Text { text, .. }) => text,
            _ => unreachable!("a text piece was just ensured"),
        }
    }

    /// Adds source text; whitespace collapses unless `preserve` (`<pre>`) or the text is code
    /// (monospace): code keeps every space and tab as written, NBSP as a space.
    pub fn push_text(&mut self, s: &str, ann: Annotations, link: &LinkTarget, preserve: bool) {
        // A whitespace-only node with a line break between code spans is the markup's layout.
        let layout = s.contains('\n') && s.chars().all(is_html_space);
        self.verbatim |= preserve;
        if preserve || (ann.code && !layout) {
            let mut clean = String::with_capacity(s.len());
            let mut prev = self.last_char();
            let mut chars = s.chars().peekable();
            while let Some(c) = chars.next() {
                let out = match c {
                    '\r' => None,
                    // Outside `<pre>`, a line break in the source is a space, as a browser shows.
                    '\n' if !preserve => Some(' '),
                    '\u{a0}' => Some(' '),
                    c if is_invisible(c) => {
                        if c == PLACEHOLDER {
                            self.placeholders += 1;
                        }
                        let next = chars.peek().copied();
                        let between_words = prev.is_some_and(|p| !p.is_whitespace())
                            && next.is_some_and(|n| !n.is_whitespace() && !is_invisible(n));
                        between_words.then_some(' ')
                    }
                    c => Some(c),
                };
                if let Some(o) = out {
                    clean.push(o);
                    prev = Some(o);
                }
            }
            if !clean.is_empty() {
                self.text_run(ann, link).push_str(&clean);
                self.in_line = !clean.ends_with('\n');
                self.pending_space = false;
            }
            return;
        }
        // A collapsed space belongs to the text it stands in (not to the next styled run), so it
        // is written at once; `pending_space` then means "a space was just written".
        let mut pending = self.pending_space;
        let mut in_line = self.in_line;
        let mut placeholders = 0;
        let mut run: Option<&mut String> = None;
        for c in s.chars() {
            if c == PLACEHOLDER {
                placeholders += 1;
            }
            // An invisible character collapses like a space, so words never join across it.
            let space = is_html_space(c) || is_invisible(c);
            if space && (pending || !in_line) {
                continue;
            }
            let r = match run {
                Some(ref mut r) => r,
                None => {
                    run = Some(self.text_run(ann, link));
                    run.as_mut().expect("just set")
                }
            };
            if space {
                r.push(' ');
                pending = true;
            } else {
                r.push(c);
                pending = false;
                in_line = true;
            }
        }
        self.pending_space = pending;
        self.in_line = in_line;
        self.placeholders += placeholders;
    }

    /// The last character collected, if any.
    fn last_char(&self) -> Option<char> {
        match self.pieces.last() {
            Some(Piece::Text { text, .. }) => text.chars().next_back(),
            Some(Piece::Equation { .. }) => Some('x'),
            None => None,
        }
    }

    /// Removes the collapsed space written at the end of a line (a browser does not show it).
    fn drop_trailing_space(&mut self) {
        if !self.pending_space {
            return;
        }
        self.pending_space = false;
        if let Some(Piece::Text { text, .. }) = self.pieces.last_mut() {
            if text.ends_with(' ') {
                text.pop();
                if text.is_empty() {
                    self.pieces.pop();
                }
            }
        }
    }

    /// A `<br>`: a line break; spaces before it vanish, as in a browser.
    pub fn push_break(&mut self, ann: Annotations) {
        self.drop_trailing_space();
        self.in_line = false;
        // Breaks carry no link so that links never span lines.
        self.text_run(ann, &LinkTarget::None).push('\n');
    }

    /// An equation; `display` when the source was display math (`display="block"`).
    pub fn push_equation(&mut self, expression: String, display: bool, ann: Annotations) {
        self.pending_space = false;
        self.pieces.push(Piece::Equation {
            expression,
            display,
            ann,
        });
        self.in_line = true;
    }

    /// Removes the line breaks at the start and end of the content and says how many blank lines
    /// they show: each leading break one, each trailing break but the last (which only ends the
    /// last line; after a display equation, a block of its own, every one).
    pub fn take_edge_breaks(&mut self) -> EdgeBreaks {
        self.drop_trailing_space();
        let mut lead = 0;
        let mut first = 0;
        while let Some(Piece::Text { text, .. }) = self.pieces.get_mut(first) {
            let rest = text.trim_start_matches('\n');
            lead += text.len() - rest.len();
            if rest.is_empty() {
                first += 1;
            } else {
                *text = rest.to_string();
                break;
            }
        }
        self.pieces.drain(..first);
        let mut trail = 0;
        while let Some(Piece::Text { text, .. }) = self.pieces.last_mut() {
            let kept = text.trim_end_matches('\n').len();
            trail += text.len() - kept;
            text.truncate(kept);
            if text.is_empty() {
                self.pieces.pop();
            } else {
                break;
            }
        }
        let after_block = matches!(
            self.pieces.last(),
            Some(Piece::Equation { display: true, .. })
        );
        EdgeBreaks {
            before: lead,
            after: if after_block {
                trail
            } else {
                trail.saturating_sub(1)
            },
        }
    }

    /// The rich-text objects: trailing breaks removed, each text object within Notion's limit.
    pub fn finish(mut self) -> Vec<RichText> {
        self.drop_trailing_space();
        // A browser shows nothing for breaks at the very end of a block.
        while let Some(Piece::Text { text, .. }) = self.pieces.last_mut() {
            let trimmed = text.trim_end_matches('\n').len();
            text.truncate(trimmed);
            if text.is_empty() {
                self.pieces.pop();
            } else {
                break;
            }
        }
        let mut out = Vec::with_capacity(self.pieces.len());
        for p in self.pieces {
            match p {
                Piece::Text { text, ann, link } if !text.is_empty() => match link {
                    LinkTarget::Page(id) => {
                        for part in split_text(&text, PAGE_LINK_TEXT) {
                            out.push(RichText {
                                kind: RichKind::PageLink {
                                    content: part.to_string(),
                                    onenote_page_id: id.clone(),
                                    target: None,
                                },
                                annotations: ann,
                            });
                        }
                    }
                    LinkTarget::Url(u) => {
                        for part in split_text(&text, MAX_TEXT) {
                            out.push(RichText {
                                kind: RichKind::Text {
                                    content: part.to_string(),
                                    link: Some(u.clone()),
                                },
                                annotations: ann,
                            });
                        }
                    }
                    LinkTarget::None => {
                        // Code keeps its text as written; elsewhere a typed URL is a link, as
                        // OneNote shows it (and Graph writes it) whichever route read the page.
                        let pieces = if ann.code || self.verbatim {
                            vec![(text.as_str(), None)]
                        } else {
                            super::autolink::autolink(&text)
                        };
                        for (piece, link) in pieces {
                            for part in split_text(piece, MAX_TEXT) {
                                out.push(RichText {
                                    kind: RichKind::Text {
                                        content: part.to_string(),
                                        link: link.clone(),
                                    },
                                    annotations: ann,
                                });
                            }
                        }
                    }
                },
                Piece::Text { .. } => {}
                Piece::Equation {
                    expression, ann, ..
                } => out.push(RichText {
                    kind: RichKind::Equation { expression },
                    annotations: ann,
                }),
            }
        }
        out
    }
}

/// Joins neighbouring unlinked text objects of equal style while they fit one object.
pub fn merge_plain(items: Vec<RichText>) -> Vec<RichText> {
    let mut out: Vec<RichText> = Vec::with_capacity(items.len());
    for it in items {
        if let (
            Some(RichText {
                kind:
                    RichKind::Text {
                        content: prev,
                        link: None,
                    },
                annotations: pa,
            }),
            RichKind::Text {
                content,
                link: None,
            },
        ) = (out.last_mut(), &it.kind)
        {
            if *pa == it.annotations
                && prev.encode_utf16().count() + content.encode_utf16().count() <= MAX_TEXT
            {
                prev.push_str(content);
                continue;
            }
        }
        out.push(it);
    }
    out
}

/// Characters that belong to the grapheme before them: a cut just before one would split a
/// visible character.
fn joins_previous(c: char) -> bool {
    matches!(c as u32,
        0x0300..=0x036F | 0x1AB0..=0x1AFF | 0x1DC0..=0x1DFF | 0x20D0..=0x20FF | 0xFE20..=0xFE2F
        | 0x200D | 0xFE00..=0xFE0F | 0x1F3FB..=0x1F3FF | 0xE0020..=0xE007F | 0xE0100..=0xE01EF
        | 0x0E31 | 0x0E34..=0x0E3A | 0x0E47..=0x0E4E | 0x093E..=0x094F | 0x3099..=0x309A)
}

/// Splits `s` into parts of at most `max` UTF-16 units, never inside a surrogate pair and, where
/// a boundary within the last 32 characters allows, not inside a grapheme.
pub fn split_text(s: &str, max: usize) -> Vec<&str> {
    // UTF-8 never takes fewer bytes than UTF-16 units, so short strings need no counting.
    if s.len() <= max {
        return vec![s];
    }
    let mut parts = Vec::new();
    let mut rest = s;
    while !rest.is_empty() {
        let mut units = 0;
        let mut end = rest.len();
        for (i, c) in rest.char_indices() {
            if units + c.len_utf16() > max {
                end = i;
                break;
            }
            units += c.len_utf16();
        }
        if end < rest.len() {
            // Walk back from the hard limit to a cut that does not split a grapheme.
            let mut cut = end;
            let mut prev_chars = rest[..end].chars().rev();
            let mut next = rest[end..].chars().next();
            for _ in 0..32 {
                let prev = prev_chars.next();
                let ok = match (prev, next) {
                    (Some(p), Some(n)) => {
                        !joins_previous(n) && p != '\u{200D}' && !is_regional_pair(rest, cut)
                    }
                    _ => true,
                };
                if ok {
                    break;
                }
                match prev {
                    Some(p) => {
                        cut -= p.len_utf8();
                        next = Some(p);
                    }
                    None => break,
                }
            }
            if cut == 0 {
                cut = end;
            }
            end = cut;
        }
        if end == 0 {
            // `max` smaller than one character: take it anyway rather than loop forever.
            end = rest
                .chars()
                .next()
                .map(char::len_utf8)
                .unwrap_or(rest.len());
        }
        parts.push(&rest[..end]);
        rest = &rest[end..];
    }
    parts
}

/// Whether cutting at `at` separates the two halves of a regional-indicator flag.
fn is_regional_pair(s: &str, at: usize) -> bool {
    let ri = |c: char| (0x1F1E6..=0x1F1FF).contains(&(c as u32));
    let before = s[..at].chars().rev().take_while(|&c| ri(c)).count();
    let after_is_ri = s[at..].chars().next().is_some_and(ri);
    after_is_ri && before % 2 == 1
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text_of(items: &[RichText]) -> String {
        items.iter().map(RichText::visible_text).collect()
    }

    #[test]
    fn bare_urls_become_links_and_code_stays_text() {
        let a = Annotations::default();
        let mut i = Inline::default();
        i.push_text("go to http://example.com/ now", a, &LinkTarget::None, false);
        let out = i.finish();
        assert_eq!(text_of(&out), "go to http://example.com/ now");
        assert!(
            matches!(&out[1].kind, RichKind::Text { link: Some(l), .. } if l == "http://example.com/")
        );
        let code = Annotations { code: true, ..a };
        for (ann, pre) in [(code, false), (a, true)] {
            let mut i = Inline::default();
            i.push_text("http://example.com/", ann, &LinkTarget::None, pre);
            let out = i.finish();
            assert!(
                out.iter()
                    .all(|r| matches!(&r.kind, RichKind::Text { link: None, .. })),
                "{out:?}"
            );
        }
        // An existing link keeps its own target.
        let mut i = Inline::default();
        let to = LinkTarget::Url("https://other.example/".into());
        i.push_text("http://example.com/", a, &to, false);
        assert!(
            matches!(&i.finish()[0].kind, RichKind::Text { link: Some(l), .. } if l == "https://other.example/")
        );
    }

    #[test]
    fn whitespace_collapses_like_a_browser() {
        let mut i = Inline::default();
        let a = Annotations::default();
        i.push_text("  \n\t hello   \r\n world ", a, &LinkTarget::None, false);
        i.push_text("  again\u{FFFC}", a, &LinkTarget::None, false);
        i.push_break(a);
        i.push_text("   next\u{a0}line  ", a, &LinkTarget::None, false);
        i.push_break(a);
        assert_eq!(i.placeholders, 1);
        assert_eq!(text_of(&i.finish()), "hello world again\nnext\u{a0}line");
    }

    #[test]
    fn edge_breaks_leave_the_text_and_count_blank_lines() {
        let a = Annotations::default();
        let none = LinkTarget::None;
        let mut i = Inline::default();
        i.push_break(a);
        i.push_break(a);
        i.push_text("mid", a, &none, false);
        i.push_break(a);
        i.push_text("dle ", a, &none, false);
        i.push_break(a);
        i.push_break(a);
        i.push_break(a);
        let edges = i.take_edge_breaks();
        assert_eq!(
            edges,
            EdgeBreaks {
                before: 2,
                after: 2
            }
        );
        assert_eq!(text_of(&i.finish()), "mid\ndle");
        // Nothing but breaks: each is a blank line.
        let mut i = Inline::default();
        i.push_break(a);
        i.push_break(a);
        assert_eq!(
            i.take_edge_breaks(),
            EdgeBreaks {
                before: 2,
                after: 0
            }
        );
        assert!(i.is_empty());
        // After a display equation, a block of its own, every trailing break is a blank line.
        let mut i = Inline::default();
        i.push_equation("x".into(), true, a);
        i.push_break(a);
        assert_eq!(
            i.take_edge_breaks(),
            EdgeBreaks {
                before: 0,
                after: 1
            }
        );
    }

    #[test]
    fn runs_merge_and_split_by_style() {
        let mut i = Inline::default();
        let plain = Annotations::default();
        let bold = Annotations {
            bold: true,
            ..plain
        };
        i.push_text("a ", plain, &LinkTarget::None, false);
        i.push_text("b", bold, &LinkTarget::None, false);
        i.push_text("c", bold, &LinkTarget::None, false);
        let out = i.finish();
        assert_eq!(out.len(), 2);
        assert_eq!(text_of(&out), "a bc");
        // The space stays with the plain text it was written in.
        assert_eq!(out[0].visible_text(), "a ");
        assert!(out[1].annotations.bold);
    }

    #[test]
    fn splits_at_the_limit_without_breaking_pairs_or_graphemes() {
        let s = "a".repeat(1999) + "😀" + "b";
        let parts = split_text(&s, 2000);
        assert_eq!(parts[0].len(), 1999);
        assert_eq!(parts[1], "😀b");
        let s = "x".repeat(1999) + "e\u{301}" + "y";
        let parts = split_text(&s, 2000);
        assert_eq!(parts[0], "x".repeat(1999));
        assert_eq!(parts.concat(), s);
        let long = "é".repeat(4500);
        let parts = split_text(&long, 2000);
        assert_eq!(parts.len(), 3);
        assert!(parts.iter().all(|p| p.encode_utf16().count() <= 2000));
        // Nothing but combining marks: cut anyway.
        let marks = "\u{301}".repeat(2100);
        assert_eq!(split_text(&marks, 2000).concat(), marks);
    }
}
