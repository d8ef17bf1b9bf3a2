//! The name each file goes up to Notion under: one Notion takes, whose extension agrees with the
//! bytes (Notion checks both), within Notion's length.

use super::Resource;
use crate::mime::notion_accepts;
use crate::notion::upload_refusals::UploadRefusal;

/// The name to upload a resource under: its own when Notion takes the extension, else (images
/// OneNote names without one) its name plus the extension of its MIME type; `None` when Notion
/// would refuse the file.
pub fn upload_name(res: &Resource) -> Option<String> {
    if notion_accepts(&res.file_name) {
        return Some(res.file_name.clone());
    }
    let ext = crate::mime::upload_extension(res.mime.as_deref()?)?;
    let base = if res.file_name.trim().is_empty() {
        "file"
    } else {
        res.file_name.trim_end_matches('.')
    };
    (!res.file_name.contains('.')).then(|| format!("{base}.{ext}"))
}

/// Why a file over the workspace's upload limit is a placeholder (its name is in the placeholder).
pub(super) fn over_limit(size: u64, max: u64) -> String {
    format!(
        "{size} bytes is over the workspace's upload limit of {max} bytes (a paid Notion plan \
         raises it)"
    )
}

/// Why a file at least as big as one Notion refused this token is a placeholder, with Notion's
/// words for that refusal.
pub(super) fn over_refused(size: u64, r: &UploadRefusal) -> String {
    format!(
        "{size} bytes is over the workspace's upload limit: Notion refused a file of {} bytes \
         from this token earlier ({})",
        r.size, r.message
    )
}

/// Most bytes in an upload's file name (Notion's limit, the extension included).
pub const MAX_NAME_BYTES: usize = 900;

/// The image type the bytes are, by their signature.
fn sniff(bytes: &[u8]) -> Option<&'static str> {
    let b = bytes;
    Some(if b.starts_with(b"\x89PNG\r\n\x1a\n") {
        "png"
    } else if b.starts_with(&[0xff, 0xd8, 0xff]) {
        "jpg"
    } else if b.starts_with(b"GIF87a") || b.starts_with(b"GIF89a") {
        "gif"
    } else if b.starts_with(b"II*\0") || b.starts_with(b"MM\0*") {
        "tif"
    } else if b.starts_with(b"BM") && b.len() > 14 {
        "bmp"
    } else if b.len() >= 12 && &b[..4] == b"RIFF" && &b[8..12] == b"WEBP" {
        "webp"
    } else {
        return None;
    })
}

fn same_image_type(a: &str, b: &str) -> bool {
    fn norm(e: &str) -> &str {
        match e {
            "jpeg" => "jpg",
            "tiff" => "tif",
            other => other,
        }
    }
    norm(a) == norm(b)
}

/// `name` with the extension its bytes call for, when it names a raster image the bytes are not.
pub fn agree_with_bytes(name: &str, bytes: &[u8]) -> String {
    let Some((stem, ext)) = name.rsplit_once('.') else {
        return name.to_owned();
    };
    let ext_l = ext.to_ascii_lowercase();
    const RASTER: &[&str] = &["png", "jpg", "jpeg", "gif", "tif", "tiff", "bmp", "webp"];
    if !RASTER.contains(&ext_l.as_str()) {
        return name.to_owned();
    }
    match sniff(bytes) {
        Some(real) if !same_image_type(real, &ext_l) => format!("{stem}.{real}"),
        _ => name.to_owned(),
    }
}

/// `name` shortened to at most `max` bytes, its extension kept, cut at a character boundary.
pub fn fit_name(name: &str, max: usize) -> String {
    if name.len() <= max {
        return name.to_owned();
    }
    let (stem, ext) = match name.rsplit_once('.') {
        Some((s, e)) if e.len() + 2 < max => (s, format!(".{e}")),
        _ => (name, String::new()),
    };
    let mut cut = max - ext.len();
    while !stem.is_char_boundary(cut.min(stem.len())) {
        cut -= 1;
    }
    format!("{}{ext}", &stem[..cut.min(stem.len())])
}

pub(super) fn describe_kind(name: &str) -> String {
    match name.rsplit_once('.') {
        Some((_, "bmp")) => "a BMP image".into(),
        Some((_, e)) => format!("a .{e} file"),
        None => "a file without an extension".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mime::for_name as mime_for;

    #[test]
    fn names_without_an_extension_take_their_mime_type() {
        let r = |name: &str, mime: Option<&str>| Resource {
            url: "u".into(),
            file_name: name.into(),
            mime: mime.map(str::to_owned),
            fallback: None,
        };
        assert_eq!(upload_name(&r("a.png", None)).as_deref(), Some("a.png"));
        assert_eq!(
            upload_name(&r("image", Some("image/png"))).as_deref(),
            Some("image.png")
        );
        assert_eq!(
            upload_name(&r("", Some("image/jpeg"))).as_deref(),
            Some("file.jpg")
        );
        // a name with an extension Notion refuses stays refused, whatever the MIME type says
        assert_eq!(upload_name(&r("x.zip", Some("image/png"))), None);
        assert_eq!(upload_name(&r("notes", None)), None);
    }

    #[test]
    fn names_agree_with_their_bytes_and_fit_900_bytes() {
        let tiff = b"II*\0rest of a tiff";
        let png = b"\x89PNG\r\n\x1a\nrest";
        let bmp = [b"BM".as_slice(), &[0u8; 20]].concat();
        assert_eq!(agree_with_bytes("scan.png", tiff), "scan.tif");
        assert_eq!(agree_with_bytes("scan.png", png), "scan.png");
        assert_eq!(agree_with_bytes("old.png", &bmp), "old.bmp");
        assert!(!notion_accepts("old.bmp"));
        assert_eq!(
            agree_with_bytes("photo.jpeg", &[0xff, 0xd8, 0xff, 0]),
            "photo.jpeg"
        );
        assert_eq!(
            agree_with_bytes("report.pdf", png),
            "report.pdf",
            "only images"
        );
        assert_eq!(mime_for("scan.tif"), "image/tiff");
        let long = format!("x{}.pdf", "é".repeat(600));
        let fit = fit_name(&long, MAX_NAME_BYTES);
        assert!(
            fit.len() <= MAX_NAME_BYTES && fit.ends_with(".pdf"),
            "{}",
            fit.len()
        );
        assert_eq!(
            fit.len(),
            900 - 1,
            "a two-byte character is not cut in half"
        );
        assert_eq!(fit_name("a.png", 900), "a.png");
    }
}
