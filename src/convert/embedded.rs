//! Files carried inside the page HTML as `data:` URLs (pasted images, some clippers' output): the
//! writer uploads their bytes instead of fetching a Graph resource.

use base64::Engine;
use bytes::Bytes;

/// URL scheme of embedded files in the converted page; the writer's fetcher serves them from
/// [`EmbeddedFile::bytes`] (as it serves rendered drawings), never from the network.
pub const EMBEDDED_SCHEME: &str = "embedded:";

/// A file whose bytes came with the page.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EmbeddedFile {
    /// `embedded:{name}`: what the block refers to until the writer has uploaded it.
    pub key: String,
    /// The file name Notion shows (`image-1.png`, or the attachment's own name).
    pub name: String,
    /// The media type the `data:` URL declares.
    pub mime: String,
    /// The decoded bytes.
    pub bytes: Bytes,
}

/// Decodes a `data:[<type>][;base64],<data>` URL; `n` numbers the page's embedded files. `None`
/// when it is not a well-formed data URL or holds nothing.
pub fn decode(url: &str, file_name: Option<String>, what: &str, n: usize) -> Option<EmbeddedFile> {
    let rest = url.get(5..)?;
    let (meta, data) = rest.split_once(',')?;
    let mut params = meta.split(';').map(str::trim);
    let mime = params
        .next()
        .filter(|m| !m.is_empty())
        .unwrap_or("text/plain")
        .to_ascii_lowercase();
    let base64 = params.any(|p| p.eq_ignore_ascii_case("base64"));
    let bytes = if base64 {
        // Line breaks and spaces inside the attribute are common in pasted markup.
        let clean: String = data.chars().filter(|c| !c.is_ascii_whitespace()).collect();
        let clean = percent_decode(clean.as_bytes());
        base64::engine::general_purpose::STANDARD
            .decode(clean.trim_ascii_end())
            .or_else(|_| base64::engine::general_purpose::STANDARD_NO_PAD.decode(&clean))
            .ok()?
    } else {
        percent_decode(data.as_bytes())
    };
    if bytes.is_empty() {
        return None;
    }
    let name = file_name
        .filter(|n| !n.trim().is_empty())
        .unwrap_or_else(|| {
            let ext = crate::mime::extension_of(&mime).unwrap_or("bin");
            format!("{what}-{n}.{ext}")
        });
    Some(EmbeddedFile {
        key: format!("{EMBEDDED_SCHEME}{n}-{name}"),
        name,
        mime,
        bytes: Bytes::from(bytes),
    })
}

fn percent_decode(s: &[u8]) -> Vec<u8> {
    percent_encoding::percent_decode(s).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_and_percent_forms() {
        let f = decode("data:image/png;base64,iVBO Rw0K\nGgo=", None, "image", 1).unwrap();
        assert_eq!(&f.bytes[..], b"\x89PNG\r\n\x1a\n");
        assert_eq!(f.name, "image-1.png");
        assert_eq!(f.key, "embedded:1-image-1.png");
        let t = decode("data:,a%20b%2", None, "file", 2).unwrap();
        assert_eq!(&t.bytes[..], b"a b%2");
        assert_eq!(t.mime, "text/plain");
        assert!(decode("data:image/png;base64,!!!", None, "image", 3).is_none());
        assert!(decode("data:image/png;base64,", None, "image", 3).is_none());
        assert!(decode("data:nocomma", None, "image", 3).is_none());
    }
}
