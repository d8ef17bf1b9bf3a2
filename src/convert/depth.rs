//! A pass before parsing, over the tags only, with two jobs that need the same walk.
//!
//! It caps element nesting. html5ever's tree builder looks through the stack of open elements for
//! many start tags (is a `p` in button scope, which formatting elements are open), so its time grows
//! with the square of the nesting: 20,000 nested lists took about 22 s. Tags past [`MAX_DEPTH`] are
//! left out; their text stays, in order, in the deepest element kept (the walker flattens anything
//! past 160 levels anyway, and reports it).
//!
//! It closes self-closed elements. Graph writes its HTML as XHTML (`<object ... />`, `<iframe ... />`),
//! but HTML ignores the `/` of a non-void element and leaves it open. An open `<object>` is a scope
//! boundary, so the `</div>` of its outline is ignored and every outline after it is parsed inside
//! it, out of the page's reading order; an open `<iframe>` or `<script>` takes the rest of the page as
//! its text. Such a tag gets its end tag written right after it, as the XHTML meant. Inside `<svg>` and
//! `<math>`, where HTML itself honours the `/`, nothing is added.
//!
//! Ordinary pages are passed through untouched and uncopied.

use std::borrow::Cow;

/// Deepest element nesting handed to the parser.
pub const MAX_DEPTH: usize = 1000;

/// Elements that never have an end tag, so never nest.
const VOID: &[&str] = &[
    "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source",
    "track", "wbr", "keygen", "frame", "basefont", "bgsound",
];

/// Elements whose end tag may be left out (HTML closes them at the next sibling or the parent's
/// end), so they never deepen the parser's stack by themselves. They are not counted: a sloppy
/// table or a long run of unclosed paragraphs must not be taken for deep nesting and lose its tags.
const OPTIONAL_END: &[&str] = &[
    "p", "li", "dt", "dd", "td", "th", "tr", "thead", "tbody", "tfoot", "colgroup", "caption",
    "option", "optgroup", "rb", "rt", "rtc", "rp", "html", "head", "body",
];

/// Elements whose content is text up to their end tag, not markup.
const RAW: &[&str] = &["script", "style", "textarea", "title", "xmp"];

/// Elements whose self-closed tag is left as it is: closing the document's frame at once would
/// move the page's content after the end of its body.
const FRAME: &[&str] = &["html", "head", "body"];

/// Foreign content, where HTML honours a self-closing `/` itself.
const FOREIGN: &[&str] = &["svg", "math"];

/// `html` with the tags nested past [`MAX_DEPTH`] left out and self-closed elements closed
/// (borrowed when neither is needed).
pub fn prepare(html: &str) -> Cow<'_, str> {
    if scan(html, None) == 0 {
        return Cow::Borrowed(html);
    }
    let mut out = String::with_capacity(html.len());
    scan(html, Some(&mut out));
    Cow::Owned(out)
}

enum Tag {
    /// A start tag: whether it opens an element, the raw-text element it starts, if any, whether
    /// it is self-closed and HTML would leave it open (its name's byte range), and whether it starts
    /// foreign content.
    Start {
        opens: bool,
        raw: Option<&'static str>,
        self_closed: Option<(usize, usize)>,
        foreign: bool,
    },
    /// An end tag, and whether it ends foreign content.
    End {
        foreign: bool,
    },
    Other,
}

/// Walks the markup once; with `out`, copies all but the tags past the cap, and closes the
/// self-closed elements HTML would leave open. Returns how many changes it makes.
fn scan(html: &str, mut out: Option<&mut String>) -> usize {
    let b = html.as_bytes();
    let (mut i, mut copied) = (0, 0);
    let (mut depth, mut dropped, mut count) = (0usize, 0usize, 0usize);
    let mut foreign = 0usize;
    while let Some(off) = b[i..].iter().position(|&c| c == b'<') {
        let lt = i + off;
        let Some((tag, end)) = tag_at(b, lt) else {
            i = lt + 1;
            continue;
        };
        match tag {
            Tag::Start { foreign: true, .. } => foreign += 1,
            Tag::End { foreign: true } => foreign = foreign.saturating_sub(1),
            _ => {}
        }
        let close = match &tag {
            Tag::Start {
                self_closed: Some(name),
                ..
            } if foreign == 0 => Some(*name),
            _ => None,
        };
        let drop = match &tag {
            Tag::Start { opens: true, .. } if depth >= MAX_DEPTH => {
                dropped += 1;
                true
            }
            Tag::Start { opens: true, .. } => {
                depth += 1;
                false
            }
            Tag::End { .. } if dropped > 0 => {
                dropped -= 1;
                true
            }
            Tag::End { .. } => {
                depth = depth.saturating_sub(1);
                false
            }
            _ => false,
        };
        if drop {
            count += 1;
            if let Some(o) = out.as_deref_mut() {
                o.push_str(&html[copied..lt]);
            }
            copied = end;
        } else if let Some((from, to)) = close {
            count += 1;
            if let Some(o) = out.as_deref_mut() {
                o.push_str(&html[copied..end]);
                o.push_str("</");
                o.push_str(&html[from..to]);
                o.push('>');
            }
            copied = end;
        }
        i = end;
        // Raw text runs to its end tag; a kept raw element's end tag closes it as usual.
        if let Tag::Start {
            opens: true,
            raw: Some(name),
            ..
        } = tag
        {
            i = raw_end(b, i, name);
        }
    }
    if let Some(o) = out {
        o.push_str(&html[copied..]);
    }
    count
}

/// Where the end tag `</name` of a raw-text element starting at `from` begins (the end when none).
fn raw_end(b: &[u8], from: usize, name: &str) -> usize {
    let n = name.len();
    let mut i = from;
    while let Some(off) = b[i..].iter().position(|&c| c == b'<') {
        let lt = i + off;
        if b.get(lt + 1) == Some(&b'/')
            && b.get(lt + 2..lt + 2 + n)
                .is_some_and(|s| s.eq_ignore_ascii_case(name.as_bytes()))
        {
            return lt;
        }
        i = lt + 1;
    }
    b.len()
}

/// The tag starting at `lt` (a `<`) and the index after its `>`; `None` when the `<` is text.
fn tag_at(b: &[u8], lt: usize) -> Option<(Tag, usize)> {
    let next = *b.get(lt + 1)?;
    if next == b'!' {
        let end = if b[lt..].starts_with(b"<!--") {
            find(b, lt + 4, b"-->").map(|e| e + 3)
        } else {
            find(b, lt + 2, b">").map(|e| e + 1)
        };
        return Some((Tag::Other, end.unwrap_or(b.len())));
    }
    if next == b'?' {
        return Some((Tag::Other, find(b, lt + 2, b">").map_or(b.len(), |e| e + 1)));
    }
    let (closing, name_at) = if next == b'/' {
        (true, lt + 2)
    } else {
        (false, lt + 1)
    };
    if !b.get(name_at)?.is_ascii_alphabetic() {
        return None;
    }
    let name_end = b[name_at..]
        .iter()
        .position(|c| c.is_ascii_whitespace() || *c == b'/' || *c == b'>')
        .map_or(b.len(), |p| name_at + p);
    // The tag ends at the first `>` outside a quoted attribute value.
    let mut i = name_end;
    let mut quote = None;
    let gt = loop {
        let c = *b.get(i)?;
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if c == b'"' || c == b'\'' => quote = Some(c),
            None if c == b'>' => break i,
            None => {}
        }
        i += 1;
    };
    // Compared in place: no allocation per tag on the way through an ordinary page.
    let name = &b[name_at..name_end];
    let is = |n: &str| name.eq_ignore_ascii_case(n.as_bytes());
    let optional = OPTIONAL_END.iter().any(|n| is(n));
    let foreign = FOREIGN.iter().any(|n| is(n));
    if closing {
        let tag = if optional {
            Tag::Other
        } else {
            Tag::End { foreign }
        };
        return Some((tag, gt + 1));
    }
    let self_closing = gt > name_end && b[gt - 1] == b'/';
    let void = VOID.iter().any(|n| is(n));
    let opens = !self_closing && !optional && !void;
    let raw = RAW.iter().find(|n| is(n)).copied();
    let self_closed = (self_closing && !void && !foreign && !FRAME.iter().any(|n| is(n)))
        .then_some((name_at, name_end));
    let tag = Tag::Start {
        opens,
        raw,
        self_closed,
        foreign: foreign && !self_closing,
    };
    Some((tag, gt + 1))
}

fn find(b: &[u8], from: usize, what: &[u8]) -> Option<usize> {
    b.get(from..)?
        .windows(what.len())
        .position(|w| w == what)
        .map(|p| from + p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ordinary_pages_pass_through_uncopied() {
        let html = "<html><body><p a='>'>x < y</p><br><img src=a /><!-- <p> --></body></html>";
        assert!(matches!(prepare(html), Cow::Borrowed(_)));
    }

    #[test]
    fn self_closed_elements_are_closed_outside_foreign_content() {
        let html = "<body><div><object data=\"a/b\" /><br /></div><iframe src='x'/>t\
                    <p><math><mspace width=\"1em\"/><mi>x</mi></math><SPAN/></p><svg><path d=\"M0\"/></svg></body>";
        assert_eq!(
            prepare(html),
            "<body><div><object data=\"a/b\" /></object><br /></div><iframe src='x'/></iframe>t\
             <p><math><mspace width=\"1em\"/><mi>x</mi></math><SPAN/></SPAN></p><svg><path d=\"M0\"/></svg></body>"
        );
    }

    #[test]
    fn tags_past_the_cap_are_left_out_and_their_text_kept() {
        let n = MAX_DEPTH + 500;
        let html = format!("{}{}", "<ul><li>x".repeat(n), "</li></ul>".repeat(n));
        let capped = prepare(&html);
        // Lists nest; their items close themselves, so only the lists count and are capped.
        assert_eq!(capped.matches("<ul>").count(), MAX_DEPTH);
        assert_eq!(capped.matches("</ul>").count(), MAX_DEPTH);
        assert_eq!(capped.matches("<li>").count(), n);
        assert_eq!(capped.matches('x').count(), n);
        assert_eq!(scan(&capped, None), 0);
    }

    #[test]
    fn unclosed_paragraphs_and_cells_are_not_taken_for_nesting() {
        let n = MAX_DEPTH * 3;
        let html = format!(
            "<html><body>{}<table>{}</table></body></html>",
            "<p>para".repeat(n),
            "<tr><td>cell".repeat(n)
        );
        assert!(matches!(prepare(&html), Cow::Borrowed(_)));
    }

    #[test]
    fn raw_text_and_quoted_brackets_are_not_tags() {
        let deep = "<div>".repeat(MAX_DEPTH - 3);
        let html = format!(
            "<html><body>{deep}<script>if (a<b) {{ '<div>' }}</script><p title=\"<div>\">t</p>"
        );
        assert!(matches!(prepare(&html), Cow::Borrowed(_)));
    }
}
