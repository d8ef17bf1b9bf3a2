//! The product's one table of file types: each extension with its MIME type and whether Notion's
//! File Upload API takes it, looked up both ways.
//!
//! Notion checks a file upload's name against its declared content type and refuses extensions it
//! does not list, so every name a page's file gets (an embedded file, a picture OneNote named
//! without an extension, a `.one` file's attachment) and every type declared for it come from this
//! one table. Notion's list: <https://developers.notion.com/docs/working-with-files-and-media>
//! ("Supported file types").

/// The type of bytes nothing says more about.
pub const OCTET_STREAM: &str = "application/octet-stream";

/// One file type.
struct FileType {
    /// The extension, lowercase, without its dot.
    ext: &'static str,
    /// Its MIME type, when the product names one (an extension Notion takes with no type here is
    /// sent with the type its source declared).
    mime: Option<&'static str>,
    /// Whether Notion's File Upload API takes a file with this extension.
    notion: bool,
}

const fn t(ext: &'static str, mime: &'static str, notion: bool) -> FileType {
    FileType {
        ext,
        mime: Some(mime),
        notion,
    }
}

/// An extension Notion takes for which no MIME type is named here.
const fn notion_only(ext: &'static str) -> FileType {
    FileType {
        ext,
        mime: None,
        notion: true,
    }
}

/// Every file type the product knows. The first extension of a MIME type is the one a file of that
/// type is named with (`jpg`, `tiff`).
const TYPES: &[FileType] = &[
    // Images.
    t("png", "image/png", true),
    t("jpg", "image/jpeg", true),
    t("jpeg", "image/jpeg", true),
    t("gif", "image/gif", true),
    t("webp", "image/webp", true),
    t("svg", "image/svg+xml", true),
    t("tiff", "image/tiff", true),
    t("tif", "image/tiff", true),
    t("heic", "image/heic", true),
    t("ico", "image/vnd.microsoft.icon", true),
    t("bmp", "image/bmp", false),
    t("emf", "image/emf", false),
    t("wmf", "image/wmf", false),
    // Documents.
    t("pdf", "application/pdf", true),
    t("txt", "text/plain", true),
    t("json", "application/json", true),
    t("doc", "application/msword", true),
    notion_only("dot"),
    t(
        "docx",
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        true,
    ),
    notion_only("dotx"),
    t("xls", "application/vnd.ms-excel", true),
    notion_only("xlt"),
    notion_only("xla"),
    t(
        "xlsx",
        "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
        true,
    ),
    notion_only("xltx"),
    t("ppt", "application/vnd.ms-powerpoint", true),
    notion_only("pot"),
    notion_only("pps"),
    notion_only("ppa"),
    t(
        "pptx",
        "application/vnd.openxmlformats-officedocument.presentationml.presentation",
        true,
    ),
    notion_only("potx"),
    t("zip", "application/zip", false),
    // Audio.
    t("mp3", "audio/mpeg", true),
    notion_only("mpga"),
    t("wav", "audio/wav", true),
    t("wma", "audio/x-ms-wma", true),
    t("m4a", "audio/mp4", true),
    notion_only("m4b"),
    t("ogg", "audio/ogg", true),
    t("oga", "audio/ogg", true),
    notion_only("aac"),
    notion_only("adts"),
    notion_only("mid"),
    notion_only("midi"),
    // Video (`mp4` is Notion's for audio too; a file named `.mp4` is sent as video).
    t("mp4", "video/mp4", true),
    t("webm", "video/webm", true),
    t("mov", "video/quicktime", true),
    t("qt", "video/quicktime", true),
    notion_only("amv"),
    notion_only("asf"),
    notion_only("wmv"),
    notion_only("avi"),
    notion_only("f4v"),
    notion_only("flv"),
    notion_only("gifv"),
    notion_only("m4v"),
    notion_only("mkv"),
    notion_only("mpeg"),
];

/// Other names in use for a MIME type of [`TYPES`]: (the other name, the table's).
const ALIASES: &[(&str, &str)] = &[
    ("image/jpg", "image/jpeg"),
    ("image/pjpeg", "image/jpeg"),
    ("image/x-icon", "image/vnd.microsoft.icon"),
    ("audio/x-wav", "audio/wav"),
];

/// The extension of a file name, lowercase (`None` without a dot).
fn extension(name: &str) -> Option<String> {
    name.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase())
}

fn by_extension(ext: &str) -> Option<&'static FileType> {
    let ext = ext.to_ascii_lowercase();
    TYPES.iter().find(|t| t.ext == ext)
}

/// The MIME type of an extension (any case, no dot), when the table names one.
pub fn of_extension(ext: &str) -> Option<&'static str> {
    by_extension(ext)?.mime
}

/// The MIME type a file name's extension calls for; [`OCTET_STREAM`] when the table names none.
pub fn for_name(name: &str) -> &'static str {
    extension(name)
        .and_then(|e| of_extension(&e))
        .unwrap_or(OCTET_STREAM)
}

/// The extension a file of MIME type `mime` is named with (parameters and case aside).
pub fn extension_of(mime: &str) -> Option<&'static str> {
    let m = mime
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    let m = ALIASES
        .iter()
        .find(|(alias, _)| *alias == m)
        .map_or(m.as_str(), |(_, name)| name);
    TYPES.iter().find(|t| t.mime == Some(m)).map(|t| t.ext)
}

/// [`extension_of`], when Notion's File Upload API takes that extension.
pub fn upload_extension(mime: &str) -> Option<&'static str> {
    extension_of(mime).filter(|e| by_extension(e).is_some_and(|t| t.notion))
}

/// Whether Notion's File Upload API takes a file of this name (by its extension).
pub fn notion_accepts(name: &str) -> bool {
    extension(name)
        .and_then(|e| by_extension(&e))
        .is_some_and(|t| t.notion)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    #[test]
    fn notion_takes_the_extensions_its_file_upload_guide_lists() {
        let listed: BTreeSet<&str> = [
            "aac", "adts", "mid", "midi", "mp3", "mpga", "m4a", "m4b", "mp4", "oga", "ogg", "wav",
            "wma", "pdf", "txt", "json", "doc", "dot", "docx", "dotx", "xls", "xlt", "xla", "xlsx",
            "xltx", "ppt", "pot", "pps", "ppa", "pptx", "potx", "gif", "heic", "ico", "jpeg",
            "jpg", "png", "svg", "tif", "tiff", "webp", "amv", "asf", "wmv", "avi", "f4v", "flv",
            "gifv", "m4v", "mkv", "webm", "mov", "qt", "mpeg",
        ]
        .into();
        let taken: BTreeSet<&str> = TYPES.iter().filter(|t| t.notion).map(|t| t.ext).collect();
        assert_eq!(taken, listed);
        assert!(notion_accepts("Report.PDF"));
        assert!(notion_accepts("a.xlsx"));
        assert!(!notion_accepts("notes.one"));
        assert!(!notion_accepts("archive.zip"));
        assert!(!notion_accepts("old.bmp"));
        assert!(!notion_accepts("noext"));
    }

    #[test]
    fn each_extension_is_listed_once_in_lowercase() {
        let mut seen = BTreeSet::new();
        for t in TYPES {
            assert_eq!(t.ext, t.ext.to_ascii_lowercase());
            assert!(seen.insert(t.ext), "{} twice", t.ext);
        }
        for (alias, name) in ALIASES {
            assert!(TYPES.iter().any(|t| t.mime == Some(*name)), "{alias}");
            assert!(TYPES.iter().all(|t| t.mime != Some(*alias)), "{alias}");
        }
    }

    #[test]
    fn a_type_and_the_extension_it_is_named_with_agree_both_ways() {
        for t in TYPES {
            if let Some(m) = t.mime {
                let ext = extension_of(m).expect("every named type has an extension");
                assert_eq!(of_extension(ext), Some(m), "{}", t.ext);
            }
        }
        assert_eq!(extension_of("image/jpeg"), Some("jpg"));
        assert_eq!(extension_of("IMAGE/PJPEG; q=1"), Some("jpg"));
        assert_eq!(extension_of("image/tiff"), Some("tiff"));
        assert_eq!(extension_of("image/x-icon"), Some("ico"));
        assert_eq!(extension_of("audio/x-wav"), Some("wav"));
        assert_eq!(extension_of("image/bmp"), Some("bmp"));
        assert_eq!(extension_of("application/x-unknown"), None);
        assert_eq!(upload_extension("image/bmp"), None, "Notion refuses .bmp");
        assert_eq!(upload_extension("image/png"), Some("png"));
        assert_eq!(upload_extension("video/mp4"), Some("mp4"));
        assert_eq!(upload_extension("application/zip"), None);
    }

    #[test]
    fn names_take_the_type_of_their_extension() {
        assert_eq!(for_name("x.PNG"), "image/png");
        assert_eq!(for_name("scan.tif"), "image/tiff");
        assert_eq!(for_name("a.jpeg"), "image/jpeg");
        assert_eq!(for_name("song.wma"), "audio/x-ms-wma");
        assert_eq!(for_name("talk.m4a"), "audio/mp4");
        assert_eq!(for_name("clip.mp4"), "video/mp4");
        assert_eq!(for_name("icon.ico"), "image/vnd.microsoft.icon");
        assert_eq!(
            for_name("film.flv"),
            OCTET_STREAM,
            "taken, but no type named"
        );
        assert_eq!(for_name("noext"), OCTET_STREAM);
        assert_eq!(of_extension("png"), Some("image/png"));
        assert_eq!(of_extension("emf"), Some("image/emf"));
        assert_eq!(of_extension("zip"), Some("application/zip"));
        assert_eq!(of_extension("one"), None);
    }
}
