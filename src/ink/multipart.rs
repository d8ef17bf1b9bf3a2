//! Splits Graph's answer to `GET pages/{id}/content?includeInkML=true`: a `multipart/mixed` envelope
//! with a `text/html` part and, when the page has ink, an `application/inkml+xml` part. Parts may come
//! in any order, lines may end in CRLF or LF, and a plain `text/html` answer passes through.

use base64::Engine as _;

use super::InkError;

/// The page content, split.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PageParts {
    /// The page HTML (the `text/html` part, or the whole body of a plain HTML answer).
    pub html: String,
    /// The InkML document, when the answer carried one.
    pub inkml: Option<String>,
}

/// Splits a page-content answer given its `Content-Type` header and body.
pub fn split_multipart(content_type: &str, body: &[u8]) -> Result<PageParts, InkError> {
    let (media, params) = parse_content_type(content_type);
    let boundary = if media.starts_with("multipart/") {
        Some(params.get_param("boundary").ok_or_else(|| {
            InkError::Multipart(format!("{media} answer without a boundary parameter"))
        })?)
    } else {
        // Some proxies and SDKs hand over the body with a generic type; a body that opens with a
        // delimiter line followed by part headers is still the envelope.
        sniff_boundary(body)
    };
    let Some(boundary) = boundary else {
        let html = utf8(body, "page content")?;
        return Ok(PageParts { html, inkml: None });
    };
    let mut out = PageParts::default();
    let mut html = None;
    for (i, part) in parts(body, &boundary)?.into_iter().enumerate() {
        let (headers, content) = split_headers(part).ok_or_else(|| {
            InkError::Multipart(format!(
                "part {} has no blank line after its headers",
                i + 1
            ))
        })?;
        let ctype = header(headers, "content-type").unwrap_or_default();
        let (pmedia, _) = parse_content_type(&ctype);
        let content = decode(
            content,
            header(headers, "content-transfer-encoding").as_deref(),
            i + 1,
        )?;
        match pmedia.as_str() {
            "text/html" if html.is_none() => html = Some(utf8(&content, "text/html part")?),
            "application/inkml+xml" if out.inkml.is_none() => {
                out.inkml = Some(utf8(&content, "application/inkml+xml part")?)
            }
            _ => {}
        }
    }
    out.html = html.ok_or_else(|| InkError::Multipart("no text/html part".into()))?;
    Ok(out)
}

trait Params {
    fn get_param(&self, name: &str) -> Option<String>;
}

impl Params for Vec<(String, String)> {
    fn get_param(&self, name: &str) -> Option<String> {
        self.iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.clone())
            .filter(|v| !v.is_empty())
    }
}

/// `type/subtype; k=v; k="v"` into the lower-cased media type and its parameters.
fn parse_content_type(v: &str) -> (String, Vec<(String, String)>) {
    let mut it = v.split(';');
    let media = it.next().unwrap_or("").trim().to_ascii_lowercase();
    let params = it
        .filter_map(|p| {
            let (k, v) = p.split_once('=')?;
            let v = v.trim();
            let v = v
                .strip_prefix('"')
                .and_then(|v| v.strip_suffix('"'))
                .unwrap_or(v);
            Some((k.trim().to_owned(), v.to_owned()))
        })
        .collect();
    (media, params)
}

fn sniff_boundary(body: &[u8]) -> Option<String> {
    let body = body.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(body);
    let first = body.split(|&b| b == b'\n').next()?;
    let first = std::str::from_utf8(first).ok()?.trim_end();
    let b = first.strip_prefix("--")?;
    if b.is_empty() || b.contains(char::is_whitespace) {
        return None;
    }
    let rest = &body[first.len()..];
    let next = std::str::from_utf8(rest).ok()?.trim_start();
    next.get(..13)
        .filter(|h| h.eq_ignore_ascii_case("content-type:"))
        .map(|_| b.to_owned())
}

/// The parts' raw bytes (headers + content), without the line break that belongs to each delimiter.
fn parts<'a>(body: &'a [u8], boundary: &str) -> Result<Vec<&'a [u8]>, InkError> {
    let delim = format!("--{boundary}");
    let d = delim.as_bytes();
    // Delimiters only count at the start of a line (RFC 2046 §5.1.1).
    let mut starts = Vec::new();
    let mut i = 0;
    while i + d.len() <= body.len() {
        if (i == 0 || body[i - 1] == b'\n') && &body[i..i + d.len()] == d {
            starts.push(i);
            i += d.len();
        } else {
            i += 1;
        }
    }
    if starts.is_empty() {
        return Err(InkError::Multipart(format!(
            "boundary {boundary:?} does not occur in the body"
        )));
    }
    let mut out = Vec::new();
    let mut closed = false;
    for (n, &s) in starts.iter().enumerate() {
        let after = s + d.len();
        if body[after..].starts_with(b"--") {
            closed = true;
            break;
        }
        // Skip transport padding and the delimiter line's own line break.
        let line_end = body[after..]
            .iter()
            .position(|&b| b == b'\n')
            .map(|p| after + p + 1)
            .ok_or_else(|| InkError::Multipart("delimiter line is not terminated".into()))?;
        let end = match starts.get(n + 1) {
            Some(&next) => next,
            None => {
                return Err(InkError::Multipart(format!(
                    "part {} is not followed by a delimiter (body truncated?)",
                    n + 1
                )))
            }
        };
        let mut content = &body[line_end.min(end)..end];
        // The line break before the next delimiter belongs to the delimiter.
        content = content.strip_suffix(b"\n").unwrap_or(content);
        content = content.strip_suffix(b"\r").unwrap_or(content);
        out.push(content);
    }
    if !closed {
        return Err(InkError::Multipart(format!(
            "no closing delimiter --{boundary}-- (body truncated?)"
        )));
    }
    Ok(out)
}

/// Splits a part at its first empty line (CRLF or LF).
fn split_headers(part: &[u8]) -> Option<(&str, &[u8])> {
    if part.starts_with(b"\r\n") {
        return Some(("", &part[2..]));
    }
    if part.starts_with(b"\n") {
        return Some(("", &part[1..]));
    }
    let mut i = 0;
    while i < part.len() {
        if part[i] == b'\n' {
            let rest = &part[i + 1..];
            let skip = if rest.starts_with(b"\r\n") {
                2
            } else if rest.starts_with(b"\n") {
                1
            } else {
                0
            };
            if skip > 0 {
                let head = std::str::from_utf8(&part[..i]).ok()?;
                return Some((head, &rest[skip..]));
            }
        }
        i += 1;
    }
    None
}

/// A header's value (case-insensitive name, folded continuation lines joined).
fn header(headers: &str, name: &str) -> Option<String> {
    let mut found: Option<String> = None;
    for line in headers.lines() {
        let line = line.trim_end_matches('\r');
        if line.starts_with([' ', '\t']) {
            if let Some(f) = found.as_mut() {
                f.push(' ');
                f.push_str(line.trim());
            }
            continue;
        }
        if found.is_some() {
            break;
        }
        if let Some((k, v)) = line.split_once(':') {
            if k.trim().eq_ignore_ascii_case(name) {
                found = Some(v.trim().to_owned());
            }
        }
    }
    found
}

fn decode(content: &[u8], cte: Option<&str>, part: usize) -> Result<Vec<u8>, InkError> {
    match cte.map(|c| c.trim().to_ascii_lowercase()).as_deref() {
        None | Some("7bit" | "8bit" | "binary") => Ok(content.to_vec()),
        Some("base64") => {
            let clean: Vec<u8> = content
                .iter()
                .copied()
                .filter(|b| !b.is_ascii_whitespace())
                .collect();
            base64::engine::general_purpose::STANDARD
                .decode(clean)
                .map_err(|e| InkError::Multipart(format!("part {part}: bad base64: {e}")))
        }
        Some(other) => Err(InkError::Multipart(format!(
            "part {part}: unsupported Content-Transfer-Encoding {other}"
        ))),
    }
}

fn utf8(b: &[u8], what: &str) -> Result<String, InkError> {
    let b = b.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(b);
    String::from_utf8(b.to_vec())
        .map_err(|e| InkError::Multipart(format!("{what} is not UTF-8: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(nl: &str, parts: &[(&str, &str)]) -> Vec<u8> {
        let mut s = String::new();
        for (t, body) in parts {
            s.push_str(&format!("--b1{nl}Content-Type: {t}{nl}{nl}{body}{nl}"));
        }
        s.push_str(&format!("--b1--{nl}"));
        s.into_bytes()
    }

    #[test]
    fn crlf_and_lf_any_order() {
        for nl in ["\r\n", "\n"] {
            let b = env(
                nl,
                &[
                    ("application/inkml+xml", "<ink/>"),
                    ("text/html; charset=utf-8", "<html>x</html>"),
                ],
            );
            let p = split_multipart("multipart/mixed; boundary=\"b1\"", &b).unwrap();
            assert_eq!(p.html, "<html>x</html>");
            assert_eq!(p.inkml.as_deref(), Some("<ink/>"));
        }
    }

    #[test]
    fn missing_inkml_part_and_plain_html() {
        let b = env("\r\n", &[("text/html", "<p>a</p>")]);
        let p = split_multipart("multipart/mixed; boundary=b1", &b).unwrap();
        assert_eq!((p.html.as_str(), p.inkml), ("<p>a</p>", None));
        let p = split_multipart("text/html", b"<html>--b1</html>").unwrap();
        assert_eq!(p.html, "<html>--b1</html>");
    }

    #[test]
    fn boundary_inside_a_line_is_content_and_truncation_is_an_error() {
        let b = env("\n", &[("text/html", "a --b1 b")]);
        let p = split_multipart("multipart/mixed; boundary=b1", &b).unwrap();
        assert_eq!(p.html, "a --b1 b");
        let cut = &b[..b.len() - 8];
        assert!(matches!(
            split_multipart("multipart/mixed; boundary=b1", cut),
            Err(InkError::Multipart(_))
        ));
        assert!(split_multipart("multipart/mixed", &b).is_err());
    }
}
