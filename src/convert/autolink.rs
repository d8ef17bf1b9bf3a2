//! Bare URLs in running text as links: OneNote shows a typed URL as a link, and Graph writes it
//! as one, so both routes make it a link in the converter's one place for text.

/// Notion's limit on a link's URL.
const MAX_URL: usize = 2000;

/// Text cut into pieces, each bare `http://` or `https://` URL in it a piece of its own with
/// that URL as its link. A URL starts a word and runs to the next whitespace, less the
/// punctuation a sentence puts after it (and a closing bracket it did not open); one Notion would
/// refuse stays text. Linear in the text (page content is hostile): each word is looked at once,
/// and no further than a URL Notion takes can run.
pub fn autolink(text: &str) -> Vec<(&str, Option<String>)> {
    let mut out = Vec::new();
    if !text.contains("://") {
        out.push((text, None));
        return out;
    }
    // ASCII lowering keeps every byte offset.
    let lower = text.to_ascii_lowercase();
    let mut plain = 0;
    let mut from = 0;
    while let Some(found) = lower[from..].find("http") {
        let start = from + found;
        from = start + 4;
        let rest = &lower[start..];
        if !(rest.starts_with("http://") || rest.starts_with("https://")) {
            continue;
        }
        let starts_word = text[..start]
            .chars()
            .next_back()
            .is_none_or(|c| c.is_whitespace() || "([{<\"'«“‘".contains(c));
        if !starts_word {
            continue;
        }
        // The word, looked at as far as one byte past the longest URL Notion takes.
        let mut reach = (start + MAX_URL + 1).min(text.len());
        while !text.is_char_boundary(reach) {
            reach -= 1;
        }
        let end = text[start..reach]
            .find(char::is_whitespace)
            .map_or(reach, |i| start + i);
        // The rest of this word is no URL's start either way.
        from = end;
        let candidate = url_end(&text[start..end]);
        let Some(url) = usable(candidate) else {
            continue;
        };
        if plain < start {
            out.push((&text[plain..start], None));
        }
        let stop = start + candidate.len();
        out.push((&text[start..stop], Some(url)));
        plain = stop;
        from = stop;
    }
    if plain < text.len() || out.is_empty() {
        out.push((&text[plain..], None));
    }
    out
}

/// A URL as written in running text, without what ends the sentence around it.
fn url_end(s: &str) -> &str {
    // Closing brackets beyond the opening ones, counted once.
    let excess = |open: char, close: char| {
        s.matches(close)
            .count()
            .saturating_sub(s.matches(open).count())
    };
    let (mut round, mut square, mut curly) = (excess('(', ')'), excess('[', ']'), excess('{', '}'));
    let mut s = s;
    while let Some(last) = s.chars().next_back() {
        let cut = match last {
            '.' | ',' | ';' | ':' | '!' | '?' | '\'' | '"' | '»' | '”' | '’' | '>' => true,
            ')' if round > 0 => {
                round -= 1;
                true
            }
            ']' if square > 0 => {
                square -= 1;
                true
            }
            '}' if curly > 0 => {
                curly -= 1;
                true
            }
            _ => false,
        };
        if !cut {
            break;
        }
        s = &s[..s.len() - last.len_utf8()];
    }
    s
}

/// A URL Notion takes as a link (the converter's rule for `href`s, for http(s) alone).
fn usable(u: &str) -> Option<String> {
    if u.len() > MAX_URL {
        return None;
    }
    let parsed = url::Url::parse(u).ok()?;
    let web = matches!(parsed.scheme(), "http" | "https")
        && parsed.host_str().is_some_and(|h| !h.is_empty());
    web.then(|| u.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bare_urls_are_cut_out_with_their_links() {
        let link = |s: &str| -> Vec<(String, Option<String>)> {
            autolink(s)
                .into_iter()
                .map(|(t, l)| (t.to_string(), l))
                .collect()
        };
        let u = |s: &str| Some(s.to_string());
        assert_eq!(
            link("http://example.com/"),
            [("http://example.com/".into(), u("http://example.com/"))]
        );
        assert_eq!(
            link("see https://a.example/x?q=1, then (https://b.example/y)."),
            [
                ("see ".into(), None),
                (
                    "https://a.example/x?q=1".into(),
                    u("https://a.example/x?q=1")
                ),
                (", then (".into(), None),
                ("https://b.example/y".into(), u("https://b.example/y")),
                (").".into(), None),
            ]
        );
        // A bracket the URL opened is its own.
        assert_eq!(
            link("https://en.wikipedia.org/wiki/Rust_(language)")[0].1,
            u("https://en.wikipedia.org/wiki/Rust_(language)")
        );
        // Not a word start, no host, another scheme: text.
        for s in [
            "xhttp://a.example",
            "http://",
            "ftp://a.example",
            "plain text",
        ] {
            assert_eq!(link(s), [(s.to_string(), None)], "{s}");
        }
        // A word longer than any URL Notion takes is text, and so is what follows in it.
        let long = format!("https://a.example/{}", "x".repeat(MAX_URL));
        assert_eq!(link(&long), [(long.clone(), None)]);
        let nested = "(https://a.example/(https://b.example/";
        assert_eq!(
            link(nested)[1].1,
            u("https://a.example/(https://b.example/")
        );
    }

    /// Hostile text: a word of would-be URLs and brackets far longer than any URL, each part of
    /// it looked at once; the text comes back whole and every link is one Notion takes.
    #[test]
    fn a_word_of_bracketed_schemes_is_cut_once() {
        let hostile = "(http://".repeat(200_000) + &")".repeat(200_000);
        let out = autolink(&hostile);
        assert_eq!(out.iter().map(|(t, _)| *t).collect::<String>(), hostile);
        assert!(out.len() <= 3, "{}", out.len());
        assert!(out
            .iter()
            .all(|(t, l)| l.as_deref().is_none_or(|l| l == *t && l.len() <= MAX_URL)));
    }
}
