//! One section parsed: from a file (read lazily through the parser's positional reads) or from a
//! package entry (decompressed into memory), a parser panic caught and made a problem, and its pages
//! converted one at a time.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;
use std::sync::Arc;

use bytes::Bytes;
use onenote_parser::fs::file_source::BytesSource;
use onenote_parser::fs::FileSource;
use onenote_parser::page::Page;
use onenote_parser::section::Section;
use onenote_parser::{FileSystem, Parser};
use typed_path::{TypedPath, TypedPathBuf};

use super::{bare_guid, package, render, FilePage, ProblemKind, SectionLocation, SectionProblem};
use crate::convert::{convert_page_with_files, ConvertOptions, ConvertedPage};

/// What a reason adds when the parser gave up on a section.
const WHOLE_SECTION: &str =
    "the parser reads a section as a whole, so one bad page costs its section";

/// A section parsed once so that its pages can be converted one at a time; its file data stays
/// where it is (the file, or the package entry's bytes) until this is dropped.
pub struct ParsedSection {
    section: Section,
}

impl std::fmt::Debug for ParsedSection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ParsedSection")
            .field("name", &self.section.display_name())
            .finish_non_exhaustive()
    }
}

impl ParsedSection {
    /// The section file's own GUID (lowercase, no braces).
    pub fn id(&self) -> String {
        self.section.file_identity().to_string()
    }

    /// The section's display name.
    pub fn name(&self) -> &str {
        self.section.display_name()
    }

    /// The pages' metadata as scanned (same ids), in order.
    pub fn pages(&self) -> Vec<FilePage> {
        self.all()
            .enumerate()
            .map(|(i, p)| page_meta(p, i))
            .collect()
    }

    /// Converts one page to the blocks the HTML converter would make; `None`: no such page.
    /// A panic while converting is the caller's to catch (as the queue does for the API route).
    pub fn convert(&self, page_id: &str) -> Option<ConvertedPage> {
        let want = bare_guid(page_id);
        let page = self.all().find(|p| bare_guid(p.link_target_id()) == want)?;
        Some(convert(page))
    }

    fn all(&self) -> impl Iterator<Item = &Page> {
        self.section
            .page_series()
            .iter()
            .flat_map(|s| s.pages().iter())
    }
}

/// A page's metadata; `order` is its position in the section.
pub(super) fn page_meta(p: &Page, order: usize) -> FilePage {
    FilePage {
        id: bare_guid(p.link_target_id()),
        title: render::title(p),
        // The file counts levels 1 to 3 (MS-ONE 2.3.74 PageLevel), Graph 0 to 2.
        level: u32::try_from(p.level().saturating_sub(1))
            .unwrap_or(0)
            .min(2),
        order: u32::try_from(order).unwrap_or(u32::MAX),
        created: rfc3339(p.created_time().unix_timestamp()),
        last_modified: rfc3339(p.updated_time().unix_timestamp()),
    }
}

fn rfc3339(secs: i64) -> Option<String> {
    chrono::DateTime::from_timestamp(secs, 0)
        .map(|d| d.to_rfc3339_opts(chrono::SecondsFormat::Secs, true))
}

fn convert(page: &Page) -> ConvertedPage {
    let meta = page_meta(page, 0);
    let r = render::page(page, meta.created.as_deref());
    let opts = ConvertOptions {
        last_modified: meta.last_modified,
        ink: r.ink,
    };
    let mut out = convert_page_with_files(r.html, &opts, r.files);
    for (what, action) in r.notes {
        out.report.add(what, action);
    }
    out
}

/// Opens and parses the section at `location`.
pub(super) fn open(location: &SectionLocation) -> Result<ParsedSection, SectionProblem> {
    parse(location).map(|section| ParsedSection { section })
}

/// Parses a section, with every failure (a parser error, a panic, a file gone) as its problem.
pub(super) fn parse(location: &SectionLocation) -> Result<Section, SectionProblem> {
    match location {
        SectionLocation::File(path) => {
            if !path.is_file() {
                return Err(missing(path));
            }
            let typed = typed(path);
            guarded(|| Parser::new().parse_section(typed.to_path()))
                .map_err(|why| problem(&super::inventory::prefix(path), &why))
        }
        SectionLocation::Package { package, entry } => {
            if !package.is_file() {
                return Err(missing(package));
            }
            let bytes = package::read_entry(package, entry).map_err(|e| match e {
                package::EntryError::NoEntry(_) => SectionProblem {
                    kind: ProblemKind::Missing,
                    reason: e.to_string(),
                },
                e => damaged(&e.to_string()),
            })?;
            let bytes = Bytes::from(bytes);
            let fs = EntryFs { bytes: &bytes };
            let name = TypedPathBuf::from_unix(entry.rsplit('/').next().unwrap_or(entry));
            guarded(|| Parser::new_with_fs(fs).parse_section(name.to_path())).map_err(|why| {
                let scan = bytes
                    .len()
                    .min(super::inventory::ENCRYPTION_SCAN_BYTES as usize);
                problem(&bytes[..scan], &why)
            })
        }
    }
}

/// Runs the parser with its panics caught; either failure is the parser's reason.
fn guarded(f: impl FnOnce() -> onenote_parser::errors::Result<Section>) -> Result<Section, String> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(s)) => Ok(s),
        Ok(Err(e)) => Err(e.to_string()),
        Err(panic) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "it failed on this file".into());
            Err(format!("parser failure: {what}"))
        }
    }
}

/// A failed parse's problem: a password-protected section is recognised by the encryption data in
/// its bytes (`prefix`, the file's start), every other failure is damage.
fn problem(prefix: &[u8], reason: &str) -> SectionProblem {
    if super::inventory::is_encrypted(prefix) {
        return SectionProblem {
            kind: ProblemKind::Encrypted,
            reason: "the section is password-protected, and its pages cannot be read without the \
                     password: unlock it in OneNote, then export the notebook again"
                .into(),
        };
    }
    damaged(reason)
}

fn damaged(reason: &str) -> SectionProblem {
    let reason: String = reason.chars().take(500).collect();
    SectionProblem {
        kind: ProblemKind::Damaged,
        reason: format!("the section cannot be read ({reason}); {WHOLE_SECTION}"),
    }
}

pub(super) fn missing(path: &Path) -> SectionProblem {
    SectionProblem {
        kind: ProblemKind::Missing,
        reason: format!("{} is not there", path.display()),
    }
}

/// The parser's form of a host path.
pub(super) fn typed(path: &Path) -> TypedPathBuf {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        TypedPath::new(path.as_os_str().as_bytes(), typed_path::PathType::Unix).to_path_buf()
    }
    #[cfg(not(unix))]
    {
        TypedPath::derive(&path.to_string_lossy()).to_path_buf()
    }
}

/// A file system holding one package entry's bytes, so the parser reads them without a copy.
#[derive(Clone, Copy)]
struct EntryFs<'a> {
    bytes: &'a Bytes,
}

fn refused() -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::Unsupported,
        "a package entry is read by itself",
    )
}

impl FileSystem for EntryFs<'_> {
    fn is_directory(&self, _: TypedPath) -> std::io::Result<bool> {
        Ok(false)
    }
    fn read_dir(&self, _: TypedPath) -> std::io::Result<Vec<TypedPathBuf>> {
        Ok(Vec::new())
    }
    fn read_file(&self, _: TypedPath) -> std::io::Result<Vec<u8>> {
        Err(refused())
    }
    fn write_file(&self, _: TypedPath, _: &[u8]) -> std::io::Result<()> {
        Err(refused())
    }
    fn stream_to_file(&self, _: TypedPath, _: &mut dyn std::io::Read) -> std::io::Result<()> {
        Err(refused())
    }
    fn make_dir(&self, _: TypedPath) -> std::io::Result<()> {
        Err(refused())
    }
    fn canonicalize(&self, p: TypedPath) -> std::io::Result<TypedPathBuf> {
        Ok(p.to_path_buf())
    }
    fn exists(&self, _: TypedPath) -> std::io::Result<bool> {
        Ok(false)
    }
    fn open_file(&self, _: TypedPath) -> std::io::Result<Arc<dyn FileSource>> {
        Ok(Arc::new(BytesSource::new(self.bytes.clone())))
    }
}
