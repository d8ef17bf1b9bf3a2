//! A notebook read from OneNote's own files with the product's reader ([`notebridge::onefile`]),
//! put into the server twice: as OneNote API content (notebook, section groups, sections, pages
//! with the files' GUIDs and rendered HTML) and as drive items (the notebook package, its folders
//! and the files' real bytes).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use bytes::Bytes;
use chrono::{DateTime, TimeZone, Utc};
use notebridge::onefile::{self, FileSection, FileSectionGroup, SectionLocation};

use super::html::page_html;
use super::{Drive, DriveItem, DriveState, ItemKind};
use crate::graph::model::{Notebook, Page, Section, SectionGroup, UserNotes};
use crate::graph::GraphServer;

/// The folder of a notebook's deleted sections and pages.
const RECYCLE_BIN: &str = "OneNote_RecycleBin";

/// The media type OneDrive gives OneNote's files (`.one` and `.onetoc2`).
pub const ONENOTE_MIME: &str = "application/msonenote";

/// A notebook served from files: how tests reach it through either API.
#[derive(Clone, Debug, PartialEq)]
pub struct FilesNotebook {
    /// The OneNote API notebook id.
    pub notebook_id: String,
    /// Its display name (and the package item's name).
    pub name: String,
    /// `links.oneNoteWebUrl.href` of the notebook: its folder's `webUrl` in the drive, as OneDrive
    /// for Business shows it (what `/shares` resolves).
    pub web_url: String,
    /// `links.oneNoteClientUrl.href`: `onenote:` and the same URL.
    pub client_url: String,
    /// The notebook folder's path from the drive's root (`Notebooks/{name}`).
    pub path: String,
    /// [`GraphServer::share_id`] of `web_url`.
    pub share_id: String,
    /// The owner's drive id.
    pub drive_id: String,
    /// The notebook's package item id.
    pub item_id: String,
    /// The `Open Notebook.onetoc2` item, when the folder had one.
    pub toc_item_id: Option<String>,
    /// Section groups, depth first.
    pub groups: Vec<FilesGroup>,
    /// Sections, depth first in the files' order (a container's own sections before its groups').
    pub sections: Vec<FilesSection>,
}

/// A section group of a files notebook: a folder.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FilesGroup {
    /// The group names from the notebook down to this one (its own last).
    pub trail: Vec<String>,
    /// The OneNote API section group id.
    pub group_id: String,
    /// The folder's drive item id.
    pub item_id: String,
}

/// A section file of a files notebook.
#[derive(Clone, Debug, PartialEq)]
pub struct FilesSection {
    /// The OneNote API section id.
    pub section_id: String,
    /// The section's GUID in the file (lowercase, no braces).
    pub guid: String,
    /// Display name (the file name without `.one`).
    pub name: String,
    /// The names of the section groups it is in, outermost first.
    pub groups: Vec<String>,
    /// The file's drive item id.
    pub item_id: String,
    /// The file it was read from.
    pub source: PathBuf,
    /// The file's bytes, as the drive serves them.
    pub bytes: Bytes,
    /// Its pages in the file's order.
    pub pages: Vec<FilesPage>,
}

/// A page of a section file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FilesPage {
    /// The OneNote API page id.
    pub page_id: String,
    /// The page GUID in the file (lowercase, no braces): `page-id` of its `oneNoteClientUrl`.
    pub guid: String,
    /// Title.
    pub title: String,
    /// Subpage level 0..=2.
    pub level: u32,
    /// Position in the section.
    pub order: u32,
}

/// A notebook or section group still to be put into the server.
struct Container {
    /// The group names from the notebook down to it.
    trail: Vec<String>,
    /// Its OneNote API id (`None`: the notebook).
    group_id: Option<String>,
    /// Its folder's (or the package's) item id.
    folder: String,
    groups: Vec<FileSectionGroup>,
    sections: Vec<FileSection>,
}

pub(super) enum Source<'a> {
    Folder(&'a Path),
    Files(&'a [PathBuf]),
}

/// When the files say nothing about a time.
fn fallback_time() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2020, 1, 6, 9, 0, 0)
        .single()
        .expect("valid date")
}

fn time(s: Option<&str>) -> DateTime<Utc> {
    s.and_then(|s| DateTime::parse_from_rfc3339(s).ok())
        .map(|d| d.with_timezone(&Utc))
        .unwrap_or_else(fallback_time)
}

fn hex(guid: &str) -> String {
    onefile::bare_guid(guid).replace('-', "")
}

/// A stable GUID for a notebook made of loose section files (it has no table of contents).
fn name_guid(name: &str) -> String {
    let fnv = |seed: u64| {
        name.bytes().fold(seed, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
        })
    };
    let v = (u128::from(fnv(0xcbf2_9ce4_8422_2325)) << 64) | u128::from(fnv(0x6c62_272e_07bb_0142));
    uuid::Uuid::from_u128(v).to_string()
}

/// Ids as the service shapes them (`1-{32 hex}!{n}-{16 HEX}!{k}`), the 32 hex digits being the
/// item's GUID, where the server reads a OneNote GUID from (`routes::guid_of`).
struct Ids {
    tag: String,
    n: u64,
}

impl Ids {
    fn onenote(&mut self, guid: &str) -> String {
        self.n += 1;
        format!("1-{}!1-{}!{}", hex(guid), self.tag, self.n)
    }
}

pub(super) fn add(srv: &GraphServer, user: &str, name: &str, source: Source<'_>) -> FilesNotebook {
    let (nb_guid, toc, bin, groups, sections) = match source {
        Source::Folder(path) => {
            let import = onefile::scan(path)
                .unwrap_or_else(|e| panic!("{}: no files notebook: {e}", path.display()));
            let nb = import
                .notebooks
                .into_iter()
                .next()
                .unwrap_or_else(|| panic!("{}: not a notebook folder", path.display()));
            let toc = std::fs::read_dir(path)
                .ok()
                .into_iter()
                .flatten()
                .filter_map(Result::ok)
                .map(|e| e.path())
                .find(|p| {
                    p.extension()
                        .is_some_and(|e| e.eq_ignore_ascii_case("onetoc2"))
                });
            let bin = Some(path.join(RECYCLE_BIN)).filter(|b| b.is_dir());
            (nb.id, toc, bin, nb.section_groups, nb.sections)
        }
        Source::Files(files) => {
            let mut sections = Vec::new();
            for f in files {
                let import = onefile::scan(f)
                    .unwrap_or_else(|e| panic!("{}: not a section file: {e}", f.display()));
                sections.extend(import.sections);
            }
            (name_guid(name), None, None, Vec::new(), sections)
        }
    };
    let svc = &srv.shared.drive;
    let mut st = svc.state();
    let drive_no = ensure_drive(&mut st, user);
    let tag = format!(
        "{:016X}",
        0x0B00_0000_0000_0000u64 | (drive_no as u64) << 32 | st.next_id
    );
    let mut ids = Ids { tag, n: 0 };
    let notebook_id = ids.onenote(&nb_guid);
    let personal = st.drives[drive_no].personal;
    // Where OneNote keeps a user's notebooks: `Notebooks/{name}` in a business drive, and the
    // links are that folder's URL (the example of
    // <https://learn.microsoft.com/en-us/graph/api/onenote-post-notebooks>); `Documents/{name}`
    // in a personal OneDrive, whose client link is the WebDAV address of its cid
    // (`d.docs.live.net/{cid}/…`) and whose web link opens the package by its item id.
    let folder_name = if personal { "Documents" } else { "Notebooks" };
    let notebooks_folder = notebooks_folder(&mut st, drive_no, folder_name);
    let package = new_item(
        &mut st,
        drive_no,
        name,
        &notebooks_folder,
        ItemKind::Notebook,
    );
    let (web_url, client_url) = if personal {
        (
            format!(
                "https://onedrive.live.com/edit.aspx?resid={}",
                package.replace('!', "%21")
            ),
            format!(
                "onenote:https://d.docs.live.net/{}/Documents/{}",
                st.drives[drive_no].id,
                super::web_segment(name)
            ),
        )
    } else {
        let web = format!(
            "{}/Notebooks/{}",
            super::drive_web_url(user),
            super::web_segment(name)
        );
        (web.clone(), format!("onenote:{web}"))
    };
    let mut notes = UserNotes::default();
    let mut content = svc.content.lock().expect("drive content poisoned");
    let mut out = FilesNotebook {
        notebook_id: notebook_id.clone(),
        name: name.to_owned(),
        web_url: web_url.clone(),
        client_url: client_url.clone(),
        path: format!("{folder_name}/{name}"),
        share_id: GraphServer::share_id(&web_url),
        drive_id: st.drives[drive_no].id.clone(),
        item_id: String::new(),
        toc_item_id: None,
        groups: Vec::new(),
        sections: Vec::new(),
    };
    let mut first = None::<DateTime<Utc>>;
    let mut last = None::<DateTime<Utc>>;
    out.item_id = package.clone();
    if let Some(toc) = toc {
        let bytes = std::fs::read(&toc).unwrap_or_else(|e| panic!("{}: {e}", toc.display()));
        let file_name = toc
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        out.toc_item_id = Some(new_item(
            &mut st,
            drive_no,
            &file_name,
            &package,
            ItemKind::File {
                mime: ONENOTE_MIME.into(),
                bytes: Bytes::from(bytes),
            },
        ));
    }
    if let Some(bin) = bin {
        // Deleted sections and pages sit in the notebook's folder as OneNote keeps them; the
        // OneNote API does not list them.
        let folder = new_item(&mut st, drive_no, RECYCLE_BIN, &package, ItemKind::Folder);
        let mut files: Vec<PathBuf> = std::fs::read_dir(&bin)
            .into_iter()
            .flatten()
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.is_file())
            .collect();
        files.sort();
        for f in files {
            let bytes = std::fs::read(&f).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
            let file_name = f
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            new_item(
                &mut st,
                drive_no,
                &file_name,
                &folder,
                ItemKind::File {
                    mime: ONENOTE_MIME.into(),
                    bytes: Bytes::from(bytes),
                },
            );
        }
    }
    // Depth first with an explicit stack: group nesting is bounded by the reader, but stays off
    // the call stack.
    let mut stack = vec![Container {
        trail: Vec::new(),
        group_id: None,
        folder: package.clone(),
        groups,
        sections,
    }];
    while let Some(c) = stack.pop() {
        for s in c.sections {
            let section = add_section(
                &mut st,
                drive_no,
                &c.folder,
                &mut ids,
                &mut notes,
                &mut content,
                (user, &notebook_id, c.group_id.as_deref(), &c.trail),
                s,
            );
            for p in &section.pages {
                let page = notes.page(&p.page_id).expect("page just added");
                first = Some(first.map_or(page.created, |f| f.min(page.created)));
                last = Some(last.map_or(page.modified, |l| l.max(page.modified)));
            }
            out.sections.push(section);
        }
        for g in c.groups.into_iter().rev() {
            let id = ids.onenote(&g.id);
            let item = new_item(&mut st, drive_no, &g.name, &c.folder, ItemKind::Folder);
            let mut trail = c.trail.clone();
            trail.push(g.name.clone());
            notes.section_groups.push(SectionGroup {
                id: id.clone(),
                display_name: g.name.clone(),
                created: fallback_time(),
                modified: fallback_time(),
                notebook_id: notebook_id.clone(),
                parent_group: c.group_id.clone(),
            });
            out.groups.push(FilesGroup {
                trail: trail.clone(),
                group_id: id.clone(),
                item_id: item.clone(),
            });
            stack.push(Container {
                trail,
                group_id: Some(id),
                folder: item,
                groups: g.section_groups,
                sections: g.sections,
            });
        }
    }
    notes.notebooks.push(Notebook {
        id: notebook_id.clone(),
        display_name: name.to_owned(),
        created: first.unwrap_or_else(fallback_time),
        modified: last.unwrap_or_else(fallback_time),
        is_default: false,
    });
    let (d, i) = (st.drives[drive_no].id.clone(), package.clone());
    st.shares.insert(web_url.clone(), (d, i));
    content
        .links
        .insert(notebook_id.clone(), (client_url, web_url));
    for it in st.drives[drive_no].items.iter_mut() {
        if it.id == package {
            it.created = first.unwrap_or_else(fallback_time);
            it.modified = last.unwrap_or_else(fallback_time);
        }
    }
    drop(content);
    drop(st);
    srv.load(user, notes);
    out
}

/// One section: its file as a drive item, its pages as OneNote content.
#[allow(clippy::too_many_arguments)]
fn add_section(
    st: &mut DriveState,
    drive_no: usize,
    folder: &str,
    ids: &mut Ids,
    notes: &mut UserNotes,
    content: &mut super::FilesContent,
    (user, notebook_id, group_id, trail): (&str, &str, Option<&str>, &[String]),
    s: FileSection,
) -> FilesSection {
    let SectionLocation::File(path) = &s.location else {
        panic!(
            "{}: sections inside packages are not served from a drive",
            s.location.display()
        );
    };
    let bytes =
        Bytes::from(std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display())));
    let file_name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| format!("{}.one", s.name));
    let display = file_name
        .strip_suffix(".one")
        .unwrap_or(&file_name)
        .to_owned();
    let item_id = new_item(
        st,
        drive_no,
        &file_name,
        folder,
        ItemKind::File {
            mime: ONENOTE_MIME.into(),
            bytes: bytes.clone(),
        },
    );
    let section_id = ids.onenote(&s.id);
    let (pages, first, last) = read_pages(
        &s.location,
        &s.id,
        &section_id,
        ids,
        notes,
        content,
        user,
        &HashMap::new(),
    );
    notes.sections.push(Section {
        id: section_id.clone(),
        display_name: display.clone(),
        created: first.unwrap_or_else(fallback_time),
        modified: last.unwrap_or_else(fallback_time),
        notebook_id: notebook_id.to_owned(),
        parent_group: group_id.map(str::to_owned),
        is_default: false,
    });
    FilesSection {
        section_id,
        guid: onefile::bare_guid(&s.id),
        name: display,
        groups: trail.to_vec(),
        item_id,
        source: path.clone(),
        bytes,
        pages,
    }
}

/// The pages of the section file at `location` (section GUID `section_guid`), put into `notes`
/// under `section_id` and their HTML and resources into `content`; a page whose GUID is in
/// `kept` keeps that page id (OneNote keeps a page's id while it stays in its section). Returns
/// them in the file's order with the earliest creation and latest modification times.
#[allow(clippy::too_many_arguments)]
fn read_pages(
    location: &SectionLocation,
    section_guid: &str,
    section_id: &str,
    ids: &mut Ids,
    notes: &mut UserNotes,
    content: &mut super::FilesContent,
    user: &str,
    kept: &HashMap<String, String>,
) -> (Vec<FilesPage>, Option<DateTime<Utc>>, Option<DateTime<Utc>>) {
    let parsed = onefile::open_section(location).ok();
    let mut pages = Vec::new();
    let (mut first, mut last) = (None::<DateTime<Utc>>, None::<DateTime<Utc>>);
    for p in parsed.as_ref().map(|x| x.pages()).unwrap_or_default() {
        ids.n += 1;
        let page_id = kept
            .get(&onefile::bare_guid(&p.id))
            .cloned()
            .unwrap_or_else(|| {
                format!(
                    "1-{}!{}-{}!{}",
                    hex(&p.id),
                    p.order + 1,
                    hex(section_guid)[..16].to_ascii_uppercase(),
                    ids.n
                )
            });
        let created = time(p.created.as_deref());
        let modified = time(p.last_modified.as_deref()).max(created);
        first = Some(first.map_or(created, |f| f.min(created)));
        last = Some(last.map_or(modified, |l| l.max(modified)));
        if let Some(converted) = parsed.as_ref().and_then(|x| x.convert(&p.id)) {
            let mut k = 0u64;
            let tag = ids.tag.clone();
            let guid = hex(&p.id);
            let (html, files) = page_html(&converted, || {
                k += 1;
                format!("0-{guid}!{k}-{tag}!{k}")
            });
            content.pages.insert(page_id.clone(), html);
            for f in files {
                content
                    .resources
                    .insert((user.to_owned(), f.id), (f.mime, f.bytes));
            }
        }
        notes.pages.push(Page {
            id: page_id.clone(),
            title: p.title.clone(),
            created,
            modified,
            section_id: section_id.to_owned(),
            level: u8::try_from(p.level.min(2)).unwrap_or(0),
            order: p.order,
            content_seed: 0,
            resources: Vec::new(),
            links: Vec::new(),
            link_texts: Vec::new(),
            mail_link: false,
            fourth_heading: false,
            extra_paragraphs: 0,
        });
        pages.push(FilesPage {
            page_id,
            guid: onefile::bare_guid(&p.id),
            title: p.title,
            level: p.level,
            order: p.order,
        });
    }
    (pages, first, last)
}

impl GraphServer {
    /// OneNote saves section `section` of `owner`'s files notebook anew as the file at `path` (the
    /// same section changed elsewhere: another real `.one` file): the drive serves its bytes (see
    /// [`GraphServer::replace_drive_file`]: size, hash, `eTag` and `cTag` change) and the OneNote
    /// API serves the section's pages read from it, a page whose GUID was there before keeping its
    /// id. The section's `lastModifiedDateTime` moves on. Returns the section as it is now; a file
    /// with the same bytes changes nothing.
    ///
    /// # Panics
    /// When `path` cannot be read (a test setup error).
    pub fn replace_section_file(
        &self,
        owner: &str,
        section: &FilesSection,
        path: &Path,
    ) -> FilesSection {
        let bytes =
            Bytes::from(std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display())));
        if bytes == section.bytes {
            return section.clone();
        }
        self.replace_drive_file(owner, &section.item_id, &bytes);
        let mut ids = {
            let mut st = self.shared.drive.state();
            st.next_id += 1;
            // Fresh numbers for new page and resource ids, apart from any handed out before.
            Ids {
                tag: format!("{:016X}", 0x0C00_0000_0000_0000u64 | st.next_id),
                n: st.next_id * 100_000,
            }
        };
        let kept: HashMap<String, String> = section
            .pages
            .iter()
            .map(|p| (p.guid.clone(), p.page_id.clone()))
            .collect();
        let location = SectionLocation::File(path.to_path_buf());
        let pages = self.mutate(owner, |notes| {
            let mut content = self
                .shared
                .drive
                .content
                .lock()
                .expect("drive content poisoned");
            for p in notes
                .pages
                .iter()
                .filter(|p| p.section_id == section.section_id)
            {
                content.pages.remove(&p.id);
            }
            notes.pages.retain(|p| p.section_id != section.section_id);
            let (pages, _, last) = read_pages(
                &location,
                &section.guid,
                &section.section_id,
                &mut ids,
                notes,
                &mut content,
                owner,
                &kept,
            );
            if let Some(s) = notes
                .sections
                .iter_mut()
                .find(|s| s.id == section.section_id)
            {
                let later = s.modified + chrono::Duration::minutes(1);
                s.modified = last.map_or(later, |l| l.max(later));
            }
            pages
        });
        FilesSection {
            source: path.to_path_buf(),
            bytes,
            pages,
            ..section.clone()
        }
    }
}

/// The index of `user`'s drive, made (with its root) when the user has none yet: a personal
/// OneDrive when the switch says so, else a business drive.
fn ensure_drive(st: &mut DriveState, user: &str) -> usize {
    if let Some(i) = st.drives.iter().position(|d| d.owner == user) {
        return i;
    }
    use base64::Engine as _;
    let no = st.drives.len();
    let (id, personal) = match st.personal.get(user) {
        Some(cid) => (cid.clone(), true),
        // Business drive ids are `b!` and base64url; the exact bytes mean nothing to a client.
        None => (
            format!(
                "b!{}",
                base64::engine::general_purpose::URL_SAFE_NO_PAD
                    .encode(format!("notebridge-testkit-drive-{no:08}-{user}"))
            ),
            false,
        ),
    };
    st.drives.push(Drive {
        id,
        owner: user.to_owned(),
        items: Vec::new(),
        personal,
    });
    st.next_id += 1;
    let n = st.next_id;
    let root = DriveItem {
        id: item_id(&st.drives[no], no, n),
        guid: item_guid(no, n),
        name: "root".into(),
        parent: None,
        kind: ItemKind::Root,
        created: fallback_time(),
        modified: fallback_time(),
        etag_version: 1,
        ctag_version: 1,
    };
    st.drives[no].items.push(root);
    no
}

/// The folder `name` at the drive's root, where OneNote keeps a user's notebooks (`Notebooks` in
/// OneDrive for Business, `Documents` in a personal OneDrive).
fn notebooks_folder(st: &mut DriveState, drive_no: usize, name: &str) -> String {
    let root = st.drives[drive_no].root().id.clone();
    if let Some(f) = st.drives[drive_no]
        .items
        .iter()
        .find(|i| i.name == name && i.parent.as_deref() == Some(&root))
    {
        return f.id.clone();
    }
    new_item(st, drive_no, name, &root, ItemKind::Folder)
}

pub(super) fn new_item(
    st: &mut DriveState,
    drive_no: usize,
    name: &str,
    parent: &str,
    kind: ItemKind,
) -> String {
    st.next_id += 1;
    let n = st.next_id;
    let id = item_id(&st.drives[drive_no], drive_no, n);
    st.drives[drive_no].items.push(DriveItem {
        id: id.clone(),
        guid: item_guid(drive_no, n),
        name: name.to_owned(),
        parent: Some(parent.to_owned()),
        kind,
        created: fallback_time(),
        modified: fallback_time(),
        etag_version: 1,
        ctag_version: 1,
    });
    id
}

/// Item ids as the service shapes them: SharePoint's `01` and 32 upper-case letters and digits;
/// a personal OneDrive's drive id as items report it, `!s` and 32 hexadecimal digits.
fn item_id(drive: &Drive, drive_no: usize, n: u64) -> String {
    if drive.personal {
        format!("{}!s{drive_no:08x}{n:024x}", drive.reported_id())
    } else {
        format!("01NB{drive_no:06}{n:024}")
    }
}

fn item_guid(drive_no: usize, n: u64) -> String {
    format!("{:08X}-0000-4000-8000-{n:012X}", drive_no + 1)
}
