//! OneNote's own files (`.one` sections, `.onetoc2` tables of contents, notebook folders, `.onepkg`
//! packages) read with the `onenote_parser` crate: an inventory with the same shape and ids a Graph
//! scan gives ([`scan`]), and each page converted to the same typed blocks the HTML converter makes
//! ([`open_section`], [`ParsedSection::convert`]).
//!
//! A parsed page is rendered into the Graph HTML dialect (`render`) and run through the one
//! converter, [`crate::convert`], rather than turned into blocks by a second mapping: every rule
//! (headings, lists, tags, colours, tables, placeholders, reading order, Notion's limits) and every
//! report entry then exists once, and the two routes cannot drift apart. Only text and structure go
//! into the HTML; the bytes of pictures, attachments and rendered ink ride beside it as
//! [`crate::convert::EmbeddedFile`]s referenced by `embedded:` keys, so no file is ever base64-encoded
//! into a string. A page's HTML is small (its text and tags), and the file bytes are read from the
//! section one page at a time, when that page is converted.
//!
//! All of this is synchronous disk and CPU work: callers run it on the blocking pool. The parser
//! reads a section file lazily through positional reads, so a big file is never held whole; a
//! `.onepkg` is a cabinet, and only the entry asked for is decompressed, into memory (nothing is
//! written to disk, so nothing is left behind).

mod inventory;
mod math;
mod package;
mod parser_thread;
mod render;
mod section;
mod sniff;

use std::path::{Path, PathBuf};

use crate::failure::{Class, Classify, Meaning, Next, Scope};

pub use section::ParsedSection;

/// What a path holds, read from OneNote's own files (metadata only, as a Graph scan gives).
#[derive(Clone, Debug, PartialEq)]
pub struct FileImport {
    /// The path as given, made absolute.
    pub path: PathBuf,
    /// A folder, `.onetoc2` or `.onepkg`: its one notebook.
    pub notebooks: Vec<FileNotebook>,
    /// A lone `.one` file: its one section, at the top level.
    pub sections: Vec<FileSection>,
    /// The `OneNote_RecycleBin` left out, where there was one.
    pub recycle_bin: Option<PathBuf>,
    /// Folders (section groups) the table of contents names that are not there: nothing to read.
    pub missing_folders: Vec<PathBuf>,
    /// Tables of contents that cannot be read: their folder's listing gave the sections instead.
    pub unreadable_tocs: Vec<UnreadableToc>,
}

/// A table of contents (`.onetoc2`) that cannot be read. No section is lost (the folder's own
/// listing stands in), but OneNote's order of the sections and the notebook's own GUID are.
#[derive(Clone, Debug, PartialEq)]
pub struct UnreadableToc {
    /// The `.onetoc2` file.
    pub path: PathBuf,
    /// The reader's reason.
    pub reason: String,
}

/// A notebook: a `.onetoc2` and the sections and groups it names (or a folder of them).
#[derive(Clone, Debug, PartialEq)]
pub struct FileNotebook {
    /// The table of contents' own GUID (lowercase, no braces).
    pub id: String,
    /// The notebook's name (its folder's or package's name).
    pub name: String,
    /// Section groups, in OneNote's order.
    pub section_groups: Vec<FileSectionGroup>,
    /// Sections, in OneNote's order.
    pub sections: Vec<FileSection>,
}

/// A section group: a sub-folder of a notebook.
#[derive(Clone, Debug, PartialEq)]
pub struct FileSectionGroup {
    /// The group's table of contents' GUID, else one derived from its path.
    pub id: String,
    /// The folder's name.
    pub name: String,
    /// Nested groups, in OneNote's order.
    pub section_groups: Vec<FileSectionGroup>,
    /// Sections, in OneNote's order.
    pub sections: Vec<FileSection>,
}

/// A section (one `.one` file) and its pages, or why it cannot be read.
#[derive(Clone, Debug, PartialEq)]
pub struct FileSection {
    /// The section file's GUID (lowercase, no braces).
    pub id: String,
    /// The section's display name.
    pub name: String,
    /// Where its bytes are.
    pub location: SectionLocation,
    /// Its pages in OneNote's order (none when it has a problem).
    pub pages: Vec<FilePage>,
    /// Why it cannot be read, when it cannot.
    pub problem: Option<SectionProblem>,
}

/// Where a section's bytes are: a file, or an entry of a `.onepkg`. Round-trips through a string
/// ([`to_stored`](Self::to_stored) / [`from_stored`](Self::from_stored)) so a plan can keep it and a
/// resumed run re-open it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum SectionLocation {
    /// A `.one` file on disk.
    File(PathBuf),
    /// An entry (its name in the cabinet, `/`-separated) of a `.onepkg` package.
    Package {
        /// The package file.
        package: PathBuf,
        /// The entry's name inside it.
        entry: String,
    },
}

/// One page's metadata, as a Graph scan lists it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FilePage {
    /// The OneNote page GUID (lowercase, no braces): the `page-id` of Graph's `oneNoteClientUrl`.
    pub id: String,
    /// The title text (empty when the page has none).
    pub title: String,
    /// Subpage level: 0, 1 or 2.
    pub level: u32,
    /// Position in the section, from 0.
    pub order: u32,
    /// Creation time, RFC 3339 UTC.
    pub created: Option<String>,
    /// Last modification time, RFC 3339 UTC.
    pub last_modified: Option<String>,
    /// Who wrote it, as the section file names the page's author.
    pub author: Option<String>,
    /// Why the page cannot be read from its section file (it is damaged), when it cannot.
    pub problem: Option<String>,
}

/// Why a section cannot be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SectionProblem {
    /// What kind of problem.
    pub kind: ProblemKind,
    /// The reason, for the user (what happened and what to do).
    pub reason: String,
}

/// The kinds of unreadable sections.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ProblemKind {
    /// Password-protected: unlock it in OneNote, then export again.
    Encrypted,
    /// The parser rejected it (or failed on it).
    Damaged,
    /// Named in the `.onetoc2`, not on disk (or no longer there).
    Missing,
}

/// Why a path cannot be imported at all.
#[derive(Debug, thiserror::Error)]
pub enum FilesError {
    /// The path is not a OneNote file or notebook folder.
    #[error("{path}: not a OneNote file ({what})")]
    NotOneNote {
        /// The path as given.
        path: PathBuf,
        /// What it is instead.
        what: String,
    },
    /// A folder without any OneNote file in it.
    #[error("{path}: no OneNote files in this folder (no .one, .onetoc2 or .onepkg)")]
    NoOneNoteFiles {
        /// The folder.
        path: PathBuf,
    },
    /// The path cannot be read.
    #[error("{path}: {source}")]
    Io {
        /// The path.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
}

impl Classify for FilesError {
    /// Every one is the user's input to change: the command stops (exit 2) naming the path.
    fn class(&self) -> Class {
        match self {
            FilesError::NotOneNote { .. }
            | FilesError::NoOneNoteFiles { .. }
            | FilesError::Io { .. } => Class::new(Scope::Run, Next::Never).means(Meaning::Usage),
        }
    }
}

impl SectionLocation {
    /// The location as one string: the file's path, or `onepkg:{entry}|{package path}` (the entry
    /// first, since a package path may hold any character but an entry name never holds `|`).
    pub fn to_stored(&self) -> String {
        match self {
            SectionLocation::File(p) => format!("file:{}", p.display()),
            SectionLocation::Package { package, entry } => {
                format!("onepkg:{entry}|{}", package.display())
            }
        }
    }

    /// Reads [`to_stored`](Self::to_stored)'s string back; `None` when it is not one.
    pub fn from_stored(s: &str) -> Option<Self> {
        if let Some(p) = s.strip_prefix("file:") {
            return (!p.is_empty()).then(|| SectionLocation::File(PathBuf::from(p)));
        }
        let rest = s.strip_prefix("onepkg:")?;
        let (entry, package) = rest.split_once('|')?;
        (!entry.is_empty() && !package.is_empty()).then(|| SectionLocation::Package {
            package: PathBuf::from(package),
            entry: entry.to_string(),
        })
    }

    /// The path shown to the user: the file, or `package › entry`.
    pub fn display(&self) -> String {
        match self {
            SectionLocation::File(p) => p.display().to_string(),
            SectionLocation::Package { package, entry } => {
                format!("{} › {entry}", package.display())
            }
        }
    }
}

impl FileImport {
    /// Every section, depth first in OneNote's order (a notebook's or group's own sections before
    /// those of its groups), with the names of the notebook and groups it is in.
    pub fn all_sections(&self) -> Vec<(Vec<&str>, &FileSection)> {
        let mut out: Vec<(Vec<&str>, &FileSection)> = Vec::new();
        for s in &self.sections {
            out.push((Vec::new(), s));
        }
        for nb in &self.notebooks {
            // An explicit stack: group nesting is bounded when scanned, but stays off the call stack.
            let mut stack: Vec<(Vec<&str>, &[FileSectionGroup], &[FileSection])> =
                vec![(vec![nb.name.as_str()], &nb.section_groups, &nb.sections)];
            while let Some((trail, groups, sections)) = stack.pop() {
                for s in sections {
                    out.push((trail.clone(), s));
                }
                for g in groups.iter().rev() {
                    let mut t = trail.clone();
                    t.push(g.name.as_str());
                    stack.push((t, &g.section_groups, &g.sections));
                }
            }
        }
        out
    }
}

/// Reads what `path` holds: a `.one`, `.onetoc2`, `.onepkg` or a notebook folder. Sections that
/// cannot be read are listed with their problem; only a path that is no OneNote input at all (or
/// cannot be read) is an error. Synchronous CPU and disk work: run it on the blocking pool.
pub fn scan(path: &Path) -> Result<FileImport, FilesError> {
    inventory::scan(path)
}

/// Parses the section at `location` once, so its pages can be converted one at a time.
/// Synchronous CPU and disk work: run it on the blocking pool.
pub fn open_section(location: &SectionLocation) -> Result<ParsedSection, SectionProblem> {
    section::open(location)
}

/// The store's form of a page GUID (`{lowercase}`, as `pages.onenote_guid` and
/// [`crate::convert::onenote_page_id`] keep it) from an id of this module (`lowercase`, no braces).
pub fn page_guid_for_store(id: &str) -> String {
    format!("{{{}}}", bare_guid(id))
}

/// An id of this module (lowercase, no braces) from any form of a GUID (`{A-B}`, `a-b`).
pub fn bare_guid(guid: &str) -> String {
    guid.trim()
        .trim_start_matches('{')
        .trim_end_matches('}')
        .to_ascii_lowercase()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locations_round_trip_through_their_stored_form() {
        for loc in [
            SectionLocation::File(PathBuf::from("/n/Notes|draft.one")),
            SectionLocation::Package {
                package: PathBuf::from("/b/My backup|1.onepkg"),
                entry: "Group/Section 1.one".into(),
            },
        ] {
            assert_eq!(SectionLocation::from_stored(&loc.to_stored()), Some(loc));
        }
        assert_eq!(SectionLocation::from_stored("onepkg:|/x"), None);
        assert_eq!(SectionLocation::from_stored("/plain/path.one"), None);
    }

    #[test]
    fn guid_forms_convert_both_ways() {
        let store = page_guid_for_store("3ce4eac6-19a4-4ab1-a5f6-1a5a9ef1f6b6");
        assert_eq!(store, "{3ce4eac6-19a4-4ab1-a5f6-1a5a9ef1f6b6}");
        assert_eq!(
            bare_guid("{3CE4EAC6-19A4-4AB1-A5F6-1A5A9EF1F6B6}"),
            "3ce4eac6-19a4-4ab1-a5f6-1a5a9ef1f6b6"
        );
        assert_eq!(
            crate::convert::onenote_page_id(
                "onenote:#x&section-id={a}&page-id={3CE4EAC6-19A4-4AB1-A5F6-1A5A9EF1F6B6}&end"
            )
            .map(|g| bare_guid(&g)),
            Some(bare_guid(&store))
        );
    }

    #[test]
    fn bad_paths_are_usage_errors() {
        let e = FilesError::NotOneNote {
            path: "/x.txt".into(),
            what: "a text file".into(),
        };
        assert_eq!(e.meaning(), Some(Meaning::Usage));
        assert!(e.to_string().contains("/x.txt"));
    }
}
