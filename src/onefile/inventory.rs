//! What a path holds: a section file, a notebook (its `.onetoc2`, the folder holding it, or a
//! `.onepkg`), in OneNote's order. A table of contents gives the order; sections and groups on disk
//! that it does not name follow in name order (OneNote adds them to the notebook when it opens it),
//! and what it names but is not there is listed as missing: a section as a section that cannot be
//! read, a folder (a section group) as a note of the import.

use std::collections::HashSet;
use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use onenote_parser::fs::file_source::BytesSource;
use onenote_parser::fs::native_fs::NativeFs;
use onenote_parser::fs::FileSource;
use onenote_parser::{FileSystem, Parser};
use typed_path::{TypedPath, TypedPathBuf};

use super::section::{self, typed};
use super::{
    package, FileImport, FileNotebook, FileSection, FileSectionGroup, FilesError, ProblemKind,
    SectionLocation, SectionProblem,
};
use crate::platform::{path_key, same_path};

/// Section groups nested deeper than this are read into the group at this depth (their sections
/// in order), so the walk's depth never depends on the input.
pub const MAX_GROUP_DEPTH: usize = 12;

/// The folder OneNote keeps deleted pages and sections in.
const RECYCLE_BIN: &str = "OneNote_RecycleBin";

/// `{7B5C52E4-D88C-4DA7-AEB1-5378D02996D3}`, a section's file type, as stored (little-endian).
const SECTION_TYPE: [u8; 16] = [
    0xe4, 0x52, 0x5c, 0x7b, 0x8c, 0xd8, 0xa7, 0x4d, 0xae, 0xb1, 0x53, 0x78, 0xd0, 0x29, 0x96, 0xd3,
];
/// `{43FF2FA1-EFD9-4C76-9EE2-10EA5722765F}`, a table of contents' file type.
const TOC_TYPE: [u8; 16] = [
    0xa1, 0x2f, 0xff, 0x43, 0xd9, 0xef, 0x76, 0x4c, 0x9e, 0xe2, 0x10, 0xea, 0x57, 0x22, 0x76, 0x5f,
];
/// `{109ADD3F-911B-49F5-A5D0-1791EDC8AED8}`, the revision store format (offset 48).
const REVISION_STORE: [u8; 16] = [
    0x3f, 0xdd, 0x9a, 0x10, 0x1b, 0x91, 0xf5, 0x49, 0xa5, 0xd0, 0x17, 0x91, 0xed, 0xc8, 0xae, 0xd8,
];
/// `{638DE92F-A6D4-4BC1-9A36-B3FC2511A5B7}`, the FSSHTTPB packaging format (offset 48).
const PACKAGED_STORE: [u8; 16] = [
    0x2f, 0xe9, 0x8d, 0x63, 0xd4, 0xa6, 0xc1, 0x4b, 0x9a, 0x36, 0xb3, 0xfc, 0x25, 0x11, 0xa5, 0xb7,
];

/// The first 1024 bytes of a file (fewer when it is shorter).
pub(super) fn head(path: &Path) -> io::Result<Vec<u8>> {
    let mut buf = Vec::with_capacity(1024);
    File::open(path)?.take(1024).read_to_end(&mut buf)?;
    Ok(buf)
}

/// Whether the bytes start like a OneNote revision store (a section or table of contents, either
/// format).
pub(super) fn is_onenote(head: &[u8]) -> bool {
    let at = |o: usize| head.get(o..o + 16);
    matches!(at(0), Some(g) if g == SECTION_TYPE || g == TOC_TYPE)
        || matches!(at(48), Some(g) if g == REVISION_STORE || g == PACKAGED_STORE)
}

/// A GUID-shaped id for something with no GUID of its own (a missing or unreadable section, a
/// group without a table of contents): the same input always gives the same id.
fn derived_id(what: &str) -> String {
    // Two FNV-1a passes with different offsets: 128 stable bits, no dependency.
    let fnv = |seed: u64| {
        let mut h = seed;
        for b in what.bytes() {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        h
    };
    let v = (u128::from(fnv(0xcbf2_9ce4_8422_2325)) << 64) | u128::from(fnv(0x6c62_272e_07bb_0142));
    uuid::Uuid::from_u128(v).to_string()
}

/// The id of a section that cannot be parsed: its header's file GUID when there is one.
fn fallback_id(head: &[u8], what: &str) -> String {
    match head.get(16..32) {
        Some(g) if is_onenote(head) && g.iter().any(|&b| b != 0) => {
            let mut b = [0u8; 16];
            b.copy_from_slice(g);
            uuid::Uuid::from_bytes_le(b).to_string()
        }
        _ => derived_id(what),
    }
}

pub(super) fn scan(path: &Path) -> Result<FileImport, FilesError> {
    let path = std::path::absolute(path).map_err(|source| FilesError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let io_err = |source| FilesError::Io {
        path: path.clone(),
        source,
    };
    let meta = std::fs::metadata(&path).map_err(io_err)?;
    let mut aside = Aside::default();
    let mut out = FileImport {
        path: path.clone(),
        notebooks: Vec::new(),
        sections: Vec::new(),
        recycle_bin: None,
        missing_folders: Vec::new(),
        unreadable_tocs: Vec::new(),
    };
    if meta.is_dir() {
        let tree = Disk { root: path.clone() };
        let c = container(&tree, "", None, 0, &mut aside);
        aside.give_to(&mut out);
        if c.sections.is_empty() && c.groups.is_empty() && !c.has_toc {
            return Err(FilesError::NoOneNoteFiles { path });
        }
        out.notebooks.push(notebook(c, file_name(&path)));
        return Ok(out);
    }
    let head = head(&path).map_err(io_err)?;
    let ext = path
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    if package::looks_like_cab(&head) || ext == "onepkg" {
        if !package::looks_like_cab(&head) {
            return Err(FilesError::NotOneNote {
                path,
                what: "named .onepkg, but not a cabinet file as OneNote packages are".into(),
            });
        }
        let entries = package::entries(&path).map_err(|e| FilesError::NotOneNote {
            path: path.clone(),
            what: format!("a cabinet that cannot be read ({e})"),
        })?;
        let tree = Package {
            file: path.clone(),
            entries,
        };
        let Some(root) = tree.toc_dir() else {
            return Err(FilesError::NotOneNote {
                path,
                what: "a cabinet without a notebook (.onetoc2) in it".into(),
            });
        };
        let c = container(&tree, &root, None, 0, &mut aside);
        aside.give_to(&mut out);
        let name = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        out.notebooks.push(notebook(c, name));
        return Ok(out);
    }
    if !is_onenote(&head) {
        return Err(FilesError::NotOneNote {
            path,
            what: describe(&head, &ext),
        });
    }
    if ext == "onetoc2" {
        let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
        let tree = Disk { root: dir.clone() };
        let toc = file_name(&path);
        let c = container(&tree, "", Some(&toc), 0, &mut aside);
        aside.give_to(&mut out);
        out.notebooks.push(notebook(c, file_name(&dir)));
        return Ok(out);
    }
    out.sections.push(section_at(
        SectionLocation::File(path.clone()),
        &head,
        &file_name(&path),
    ));
    Ok(out)
}

/// What a file that is not OneNote's seems to be, for the message.
fn describe(head: &[u8], ext: &str) -> String {
    let kind = if head.is_empty() {
        "an empty file".to_string()
    } else if head.starts_with(b"%PDF") {
        "a PDF document".into()
    } else if head.starts_with(b"PK\x03\x04") {
        "a ZIP archive (a Word, Excel or other Office document?)".into()
    } else if head.starts_with(b"\x89PNG") || head.starts_with(b"\xff\xd8\xff") {
        "a picture".into()
    } else if std::str::from_utf8(head).is_ok() {
        "a text file".into()
    } else {
        "a file whose first bytes are no OneNote section, notebook or package".into()
    };
    if ext.is_empty() {
        kind
    } else {
        format!("{kind}, named .{ext}")
    }
}

fn file_name(p: &Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| p.display().to_string())
}

fn notebook(c: Container, name: String) -> FileNotebook {
    FileNotebook {
        id: c.id,
        name,
        section_groups: c.groups,
        sections: c.sections,
    }
}

/// A section read at `location`; `name` is its file name, used when it cannot be read.
fn section_at(location: SectionLocation, head: &[u8], name: &str) -> FileSection {
    let fallback_name = name
        .strip_suffix(".one")
        .or_else(|| name.strip_suffix(".ONE"))
        .unwrap_or(name)
        .to_string();
    match section::parse(&location) {
        Ok(s) => {
            let pages = section::pages_of(&s);
            FileSection {
                id: s.file_identity().to_string(),
                name: s.display_name().to_string(),
                location,
                pages,
                problem: None,
            }
        }
        Err(problem) => FileSection {
            id: fallback_id(head, &location.to_stored()),
            name: fallback_name,
            location,
            pages: Vec::new(),
            problem: Some(problem),
        },
    }
}

/// A notebook's or group's content.
/// What a walk leaves out of the notebook, for the caller to say.
#[derive(Default)]
struct Aside {
    /// The `OneNote_RecycleBin`, where there is one.
    recycle_bin: Option<PathBuf>,
    /// The folders a table of contents names that are not there.
    missing_folders: Vec<PathBuf>,
    /// The tables of contents that cannot be read.
    unreadable_tocs: Vec<super::UnreadableToc>,
}

impl Aside {
    fn give_to(self, out: &mut FileImport) {
        out.recycle_bin = self.recycle_bin;
        out.missing_folders = self.missing_folders;
        out.unreadable_tocs = self.unreadable_tocs;
    }
}

struct Container {
    id: String,
    has_toc: bool,
    groups: Vec<FileSectionGroup>,
    sections: Vec<FileSection>,
}

/// A tree of files: a folder on disk or a package's entries. Directories are `/`-joined relative
/// names, `""` the root.
trait Tree {
    /// `(name, is_dir)` of what `dir` holds, by name.
    fn list(&self, dir: &str) -> Vec<(String, bool)>;
    /// The file `dir/name` for the parser.
    fn open(&self, dir: &str, name: &str) -> io::Result<Arc<dyn FileSource>>;
    /// Where the section `dir/name` is.
    fn location(&self, dir: &str, name: &str) -> SectionLocation;
    /// The first bytes of `dir/name`.
    fn head(&self, dir: &str, name: &str) -> Vec<u8>;
    /// `dir` as a path for the user.
    fn path(&self, dir: &str) -> PathBuf;
}

fn join(dir: &str, name: &str) -> String {
    if dir.is_empty() {
        name.to_string()
    } else {
        format!("{dir}/{name}")
    }
}

struct Disk {
    root: PathBuf,
}

impl Disk {
    fn at(&self, dir: &str, name: &str) -> PathBuf {
        let mut p = self.root.clone();
        for part in dir.split('/').filter(|s| !s.is_empty()) {
            p.push(part);
        }
        p.push(name);
        p
    }
}

impl Tree for Disk {
    fn list(&self, dir: &str) -> Vec<(String, bool)> {
        let Ok(rd) = std::fs::read_dir(self.path(dir)) else {
            return Vec::new();
        };
        let mut out: Vec<(String, bool)> = rd
            .filter_map(Result::ok)
            .filter_map(|e| {
                let name = e.file_name().to_str()?.to_string();
                let is_dir = std::fs::metadata(e.path()).ok()?.is_dir();
                Some((name, is_dir))
            })
            .collect();
        out.sort();
        out
    }
    fn open(&self, dir: &str, name: &str) -> io::Result<Arc<dyn FileSource>> {
        NativeFs {}.open_file(typed(&self.at(dir, name)).to_path())
    }
    fn location(&self, dir: &str, name: &str) -> SectionLocation {
        SectionLocation::File(self.at(dir, name))
    }
    fn head(&self, dir: &str, name: &str) -> Vec<u8> {
        head(&self.at(dir, name)).unwrap_or_default()
    }
    fn path(&self, dir: &str) -> PathBuf {
        let mut p = self.root.clone();
        for part in dir.split('/').filter(|s| !s.is_empty()) {
            p.push(part);
        }
        p
    }
}

struct Package {
    file: PathBuf,
    entries: Vec<package::Entry>,
}

impl Package {
    /// The folder of the shallowest `.onetoc2` (the notebook's own).
    fn toc_dir(&self) -> Option<String> {
        self.entries
            .iter()
            .filter(|e| e.name.to_ascii_lowercase().ends_with(".onetoc2"))
            .min_by_key(|e| (e.name.matches('/').count(), e.name.clone()))
            .map(|e| match e.name.rsplit_once('/') {
                Some((d, _)) => d.to_string(),
                None => String::new(),
            })
    }

    fn read(&self, dir: &str, name: &str) -> io::Result<Vec<u8>> {
        package::read_entry(&self.file, &join(dir, name))
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e.to_string()))
    }
}

impl Tree for Package {
    fn list(&self, dir: &str) -> Vec<(String, bool)> {
        let prefix = if dir.is_empty() {
            String::new()
        } else {
            format!("{dir}/")
        };
        let mut seen = HashSet::new();
        let mut out = Vec::new();
        for e in &self.entries {
            let Some(rest) = e.name.strip_prefix(&prefix) else {
                continue;
            };
            let (name, is_dir) = match rest.split_once('/') {
                Some((d, _)) => (d.to_string(), true),
                None => (rest.to_string(), false),
            };
            if seen.insert(name.clone()) {
                out.push((name, is_dir));
            }
        }
        out.sort();
        out
    }
    fn open(&self, dir: &str, name: &str) -> io::Result<Arc<dyn FileSource>> {
        let bytes = self.read(dir, name)?;
        Ok(Arc::new(BytesSource::new(bytes::Bytes::from(bytes))))
    }
    fn location(&self, dir: &str, name: &str) -> SectionLocation {
        SectionLocation::Package {
            package: self.file.clone(),
            entry: join(dir, name),
        }
    }
    fn head(&self, dir: &str, name: &str) -> Vec<u8> {
        let mut b = self.read(dir, name).unwrap_or_default();
        b.truncate(1024);
        b
    }
    fn path(&self, dir: &str) -> PathBuf {
        if dir.is_empty() {
            self.file.clone()
        } else {
            PathBuf::from(format!("{}/{dir}", self.file.display()))
        }
    }
}

fn has_ext(name: &str, ext: &str) -> bool {
    name.rsplit_once('.')
        .is_some_and(|(_, e)| e.eq_ignore_ascii_case(ext))
}

/// Whether `dir` (or a folder under it, to [`MAX_GROUP_DEPTH`]) holds a section or notebook file.
fn holds_onenote(tree: &dyn Tree, dir: &str) -> bool {
    let mut stack = vec![(dir.to_string(), 0usize)];
    while let Some((d, depth)) = stack.pop() {
        for (name, is_dir) in tree.list(&d) {
            if is_dir {
                if depth < MAX_GROUP_DEPTH && !name.eq_ignore_ascii_case(RECYCLE_BIN) {
                    stack.push((join(&d, &name), depth + 1));
                }
            } else if has_ext(&name, "one") || has_ext(&name, "onetoc2") {
                return true;
            }
        }
    }
    false
}

/// The content of `dir` (a notebook's or group's folder), in OneNote's order.
fn container(
    tree: &dyn Tree,
    dir: &str,
    toc: Option<&str>,
    depth: usize,
    aside: &mut Aside,
) -> Container {
    let listing = tree.list(dir);
    let toc_name = toc.map(str::to_string).or_else(|| {
        let tocs: Vec<&String> = listing
            .iter()
            .filter(|(n, d)| !d && has_ext(n, "onetoc2"))
            .map(|(n, _)| n)
            .collect();
        tocs.iter()
            .find(|n| n.eq_ignore_ascii_case("Open Notebook.onetoc2"))
            .or(tocs.first())
            .map(|n| n.to_string())
    });
    let read = toc_name.as_deref().and_then(|t| {
        let src = tree.open(dir, t).ok()?;
        // The folder's own listing stands in for a table of contents that cannot be read, so no
        // section is lost; only OneNote's order and the notebook's GUID are, which the caller says.
        match read_toc(src) {
            Ok(read) => Some(read),
            Err(reason) => {
                tracing::debug!(reason = %reason, "a table of contents cannot be read");
                aside.unreadable_tocs.push(super::UnreadableToc {
                    path: tree.path(&join(dir, t)),
                    reason,
                });
                None
            }
        }
    });
    let id = read
        .as_ref()
        .map(|(id, _)| id.clone())
        .unwrap_or_else(|| derived_id(&tree.path(dir).display().to_string()));
    let mut names: Vec<String> = read.map(|(_, n)| n).unwrap_or_default();
    // The contents name files as OneNote wrote them; the folder may spell a name in other letters
    // where the file system ignores case (Windows, macOS), and it is still that file, once.
    let mut named: HashSet<String> = names.iter().map(|n| path_key(n)).collect();
    for (name, is_dir) in &listing {
        let wanted = if *is_dir {
            name.eq_ignore_ascii_case(RECYCLE_BIN) || holds_onenote(tree, &join(dir, name))
        } else {
            has_ext(name, "one")
        };
        if wanted && !name.starts_with('.') && named.insert(path_key(name)) {
            names.push(name.clone());
        }
    }
    let mut out = Container {
        id,
        has_toc: toc_name.is_some(),
        groups: Vec::new(),
        sections: Vec::new(),
    };
    for name in names {
        let entry = listing
            .iter()
            .find(|(n, _)| *n == name)
            .or_else(|| listing.iter().find(|(n, _)| same_path(n, &name)));
        if name.eq_ignore_ascii_case(RECYCLE_BIN) {
            if entry.is_some() && aside.recycle_bin.is_none() {
                aside.recycle_bin = Some(tree.path(&join(dir, &name)));
            }
            continue;
        }
        match entry {
            Some((_, true)) => {
                let sub = join(dir, &name);
                let c = if depth + 1 < MAX_GROUP_DEPTH {
                    container(tree, &sub, None, depth + 1, aside)
                } else {
                    flat_container(tree, &sub, aside)
                };
                out.groups.push(FileSectionGroup {
                    id: c.id,
                    name: name.clone(),
                    section_groups: c.groups,
                    sections: c.sections,
                });
            }
            Some((_, false)) => {
                let head = tree.head(dir, &name);
                out.sections
                    .push(section_at(tree.location(dir, &name), &head, &name));
            }
            // A folder (a section group) the contents name that is not there holds nothing to
            // read: said, not failed, since no later run can read it either.
            None if !has_ext(&name, "one") => {
                aside.missing_folders.push(tree.path(&join(dir, &name)));
            }
            None => {
                let location = tree.location(dir, &name);
                let path = tree.path(&join(dir, &name));
                out.sections.push(FileSection {
                    id: derived_id(&location.to_stored()),
                    name: name.strip_suffix(".one").unwrap_or(&name).to_string(),
                    location,
                    pages: Vec::new(),
                    problem: Some(SectionProblem {
                        kind: ProblemKind::Missing,
                        reason: format!(
                            "the notebook's table of contents names {name}, but {} is not there",
                            path.display()
                        ),
                    }),
                });
            }
        }
    }
    out
}

/// A group at the depth limit: every section below it, in order, with no further groups.
fn flat_container(tree: &dyn Tree, dir: &str, aside: &mut Aside) -> Container {
    let mut c = container(tree, dir, None, MAX_GROUP_DEPTH, aside);
    let mut stack = std::mem::take(&mut c.groups);
    stack.reverse();
    while let Some(g) = stack.pop() {
        c.sections.extend(g.sections);
        stack.extend(g.section_groups.into_iter().rev());
    }
    c
}

/// A table of contents read for its id and entry names, in order: the parser resolves each entry
/// against a file system that records the name and answers that nothing exists, so no section is
/// parsed here (each is parsed on its own, and fails on its own).
fn read_toc(source: Arc<dyn FileSource>) -> Result<(String, Vec<String>), String> {
    let state = TocState {
        source,
        asked: Mutex::new(Vec::new()),
    };
    let fs = TocFs { state: &state };
    let base = TypedPathBuf::from_unix("nb");
    let toc = base.join("toc.onetoc2");
    let parsed =
        super::parser_thread::run(|| Parser::new_with_fs(fs).parse_notebook(toc.to_path()));
    let nb = match parsed {
        Ok(Ok(nb)) => nb,
        Ok(Err(e)) => return Err(e.to_string()),
        Err(_) => return Err("the parser failed on the table of contents".into()),
    };
    let asked = state.asked.into_inner().unwrap_or_else(|p| p.into_inner());
    let mut seen = HashSet::new();
    let names = asked
        .into_iter()
        .filter_map(|p| {
            let s = p.to_string_lossy().into_owned();
            s.strip_prefix("nb/").map(str::to_string)
        })
        .filter(|n| seen.insert(n.clone()))
        .collect();
    Ok((nb.file_identity().to_string(), names))
}

struct TocState {
    source: Arc<dyn FileSource>,
    asked: Mutex<Vec<TypedPathBuf>>,
}

#[derive(Clone, Copy)]
struct TocFs<'a> {
    state: &'a TocState,
}

fn unsupported() -> io::Error {
    io::Error::new(
        io::ErrorKind::Unsupported,
        "only the table of contents is read",
    )
}

impl FileSystem for TocFs<'_> {
    fn is_directory(&self, _: TypedPath) -> io::Result<bool> {
        Ok(false)
    }
    fn read_dir(&self, _: TypedPath) -> io::Result<Vec<TypedPathBuf>> {
        Ok(Vec::new())
    }
    fn read_file(&self, _: TypedPath) -> io::Result<Vec<u8>> {
        Err(unsupported())
    }
    fn write_file(&self, _: TypedPath, _: &[u8]) -> io::Result<()> {
        Err(unsupported())
    }
    fn stream_to_file(&self, _: TypedPath, _: &mut dyn Read) -> io::Result<()> {
        Err(unsupported())
    }
    fn make_dir(&self, _: TypedPath) -> io::Result<()> {
        Err(unsupported())
    }
    fn canonicalize(&self, p: TypedPath) -> io::Result<TypedPathBuf> {
        Ok(p.to_path_buf())
    }
    fn exists(&self, p: TypedPath) -> io::Result<bool> {
        if let Ok(mut a) = self.state.asked.lock() {
            a.push(p.to_path_buf());
        }
        Ok(false)
    }
    fn open_file(&self, _: TypedPath) -> io::Result<Arc<dyn FileSource>> {
        Ok(self.state.source.clone())
    }
}
