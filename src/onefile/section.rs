//! One section parsed: from a file (read lazily through the parser's positional reads) or from a
//! package entry (decompressed into memory), a parser panic caught and made a problem, and its pages
//! converted one at a time. Each page is an object space of its own in the file, and the parser
//! reads them one by one: a page that cannot be read is listed with its reason (under its GUID when
//! its metadata survived, else under an id derived from where it is in the file) so that it is
//! reported as that page's problem while the section's other pages are read.

use std::path::Path;
use std::sync::Arc;

use bytes::Bytes;
use onenote_parser::fs::file_source::BytesSource;
use onenote_parser::fs::FileSource;
use onenote_parser::page::{DamagedPage, Page};
use onenote_parser::section::Section;
use onenote_parser::{FileSystem, Parser};
use typed_path::{TypedPath, TypedPathBuf};

use super::{bare_guid, package, render, FilePage, ProblemKind, SectionLocation, SectionProblem};
use crate::convert::{convert_page_with_files, ConvertOptions, ConvertedPage};

/// What a reason adds when the parser gave up on a section.
const WHOLE_SECTION: &str =
    "the damage is in the section's own records, so none of its pages can be read";

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

    /// The pages' metadata as scanned (same ids), in order, those that cannot be read included.
    pub fn pages(&self) -> Vec<FilePage> {
        pages_of(&self.section)
    }

    /// Why page `page_id` cannot be read, when it is one of the section's damaged pages.
    pub fn unreadable(&self, page_id: &str) -> Option<String> {
        let want = bare_guid(page_id);
        let section = self.id();
        entries(&self.section)
            .into_iter()
            .enumerate()
            .find_map(|(i, e)| match e {
                Entry::Damaged(d) if damaged_meta(&section, d, i).id == want => {
                    Some(unreadable_reason(d))
                }
                _ => None,
            })
    }

    /// Converts one page to the blocks the HTML converter would make; `None`: no such page.
    /// A panic while converting is the caller's to catch (as the queue does for the API route).
    pub fn convert(&self, page_id: &str) -> Option<ConvertedPage> {
        let want = bare_guid(page_id);
        let page = self.all().find(|p| bare_guid(p.link_target_id()) == want)?;
        let mut out = convert(page);
        for w in self.section.report().warnings() {
            // A warning raised outside any page (section-level data, or between pages) cannot be
            // placed, so it is each page's: any of them may show the approximation.
            let here = w
                .page()
                .is_none_or(|(id, _)| bare_guid(&id.to_string()) == want);
            if here {
                out.report.add(parser_note(w.message()), PARSER_ACTION);
            }
        }
        Some(out)
    }

    fn all(&self) -> impl Iterator<Item = &Page> {
        self.section
            .page_series()
            .iter()
            .flat_map(|s| s.pages().iter())
    }
}

/// What the page report says was done with what the section file's reader warned of: it read
/// the file anyway, with a neutral value where the writer left one out.
const PARSER_ACTION: &str =
    "read anyway, as the file reader says (this part of the page can differ from OneNote's)";

/// A reader warning as the page report's element (bounded: the message may quote the file).
fn parser_note(message: &str) -> String {
    let m: String = message.chars().take(200).collect();
    format!("section file: {m}")
}

/// A page of a section as the parser gave it: read, or damaged.
enum Entry<'a> {
    Read(&'a Page),
    Damaged(&'a DamagedPage),
}

/// The section's pages in OneNote's order, the damaged ones in their places.
fn entries(section: &Section) -> Vec<Entry<'_>> {
    let mut out = Vec::new();
    for series in section.page_series() {
        let mut read = series.pages().iter();
        let mut damaged = series.damaged_pages().iter().peekable();
        let total = series.pages().len() + series.damaged_pages().len();
        for position in 0..total {
            match damaged.next_if(|d| d.position() == position) {
                Some(d) => out.push(Entry::Damaged(d)),
                None => out.extend(read.next().map(Entry::Read)),
            }
        }
        // Positions past the end (never given by the parser) still keep their pages.
        out.extend(damaged.map(Entry::Damaged));
    }
    out
}

/// Every page of a parsed section, as scanned: each read page's metadata, and for each page that
/// cannot be read what its metadata still tells (or an id and title of its place).
pub(super) fn pages_of(section: &Section) -> Vec<FilePage> {
    let id = section.file_identity().to_string();
    entries(section)
        .into_iter()
        .enumerate()
        .map(|(i, e)| match e {
            Entry::Read(p) => page_meta(p, i),
            Entry::Damaged(d) => damaged_meta(&id, d, i),
        })
        .collect()
}

/// A damaged page's entry: its own GUID when its metadata was read, else a GUID derived from the
/// section's and the page's object space ids, the same for every read of the same file.
fn damaged_meta(section_id: &str, d: &DamagedPage, order: usize) -> FilePage {
    let id = d.link_target_id().map_or_else(
        || derived_guid(&format!("{section_id}|{}", d.object_space())),
        |g| bare_guid(&g),
    );
    let title = d
        .cached_title()
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .map_or_else(|| format!("Unreadable page {}", order + 1), str::to_owned);
    FilePage {
        id,
        title,
        level: d.level().map_or(0, |l| {
            u32::try_from(l.saturating_sub(1)).unwrap_or(0).min(2)
        }),
        order: u32::try_from(order).unwrap_or(u32::MAX),
        created: None,
        last_modified: None,
        author: None,
        problem: Some(unreadable_reason(d)),
    }
}

/// A GUID-shaped id (lowercase, no braces) from the first 16 bytes of `key`'s SHA-256.
fn derived_guid(key: &str) -> String {
    use sha2::{Digest, Sha256};
    let h = Sha256::digest(key.as_bytes());
    let hex: String = h[..16].iter().map(|b| format!("{b:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &hex[..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..]
    )
}

fn unreadable_reason(d: &DamagedPage) -> String {
    let reason: String = d.reason().chars().take(500).collect();
    format!(
        "the page cannot be read from its section file ({reason}); the section's other pages \
         are read"
    )
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
        author: author(p.author()),
        problem: None,
    }
}

/// Longest author name kept, in characters: a name is short, and the file is hostile input.
const MAX_AUTHOR: usize = 200;

/// The file's author name, trimmed and bounded (`None` when empty).
fn author(raw: Option<&str>) -> Option<String> {
    let a = raw?.trim();
    (!a.is_empty()).then(|| a.chars().take(MAX_AUTHOR).collect())
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
    // The file's own labels, where `data-tag` only had a slug (a tag of the user's own, a
    // check box of the user's own that Graph would call `to-do`).
    out.tags = r.tags;
    out.author = meta.author;
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
                .map_err(|why| problem(&super::sniff::prefix(path), &why))
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
                    .min(super::sniff::ENCRYPTION_SCAN_BYTES as usize);
                problem(&bytes[..scan], &why)
            })
        }
    }
}

/// Runs the parser on its own thread ([`super::parser_thread`]), its panics caught; either
/// failure is the parser's reason.
fn guarded(
    f: impl FnOnce() -> onenote_parser::errors::Result<Section> + Send,
) -> Result<Section, String> {
    match super::parser_thread::run(f) {
        Ok(Ok(s)) => Ok(s),
        Ok(Err(e)) => Err(e.to_string()),
        Err(panic) => Err(format!("parser failure: {panic}")),
    }
}

/// A failed parse's problem: a password-protected section is recognised by the encryption data in
/// its bytes (`prefix`, the file's start), every other failure is damage.
fn problem(prefix: &[u8], reason: &str) -> SectionProblem {
    if super::sniff::is_encrypted(prefix) {
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
    crate::platform::typed_path(path)
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
