//! The drive API (OneDrive / SharePoint document libraries) on the Graph test server, for notebooks
//! read from OneNote's own files: a notebook's folder found by its path (`root:/Notebooks/{name}`,
//! with `Files.Read`) or its web URL resolved through `/shares` (with `Files.ReadWrite` or higher,
//! as documented), the notebook's package item and its children (section files, section-group folders, `Open Notebook.onetoc2`),
//! and each file's content through a redirect to a pre-authenticated download URL that refuses a
//! bearer token, with the faults the real services show ([`DriveFaults`]).
//!
//! The same notebook is served by the OneNote routes too ([`super::GraphServer::add_files_notebook`]),
//! consistent with its files: page GUIDs, titles, levels and order come from the files, page
//! content is rendered from them, and the notebook's `links` are its folder's `webUrl`. Drive requests are counted apart ([`DriveCounters`]) and never
//! spend the OneNote throttling windows: they are another service, with its own throttling.
//!
//! Shapes follow Microsoft's documentation: driveItem
//! (<https://learn.microsoft.com/en-us/graph/api/resources/driveitem>), the package facet
//! (<https://learn.microsoft.com/en-us/graph/api/resources/package>), shares
//! (<https://learn.microsoft.com/en-us/graph/api/shares-get>), list children
//! (<https://learn.microsoft.com/en-us/graph/api/driveitem-list-children>), download
//! (<https://learn.microsoft.com/en-us/graph/api/driveitem-get-content>, partial ranges included)
//! and throttling (429 and 503 with `Retry-After`,
//! <https://learn.microsoft.com/en-us/sharepoint/dev/general-development/how-to-avoid-getting-throttled-or-blocked-in-sharepoint-online>).

pub(crate) mod download;
pub mod faults;
pub mod files;
mod html;
pub mod routes;

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use chrono::{DateTime, Utc};
use tokio::time::Instant;

use super::routes::{Body, Reply};
use super::stats::LogEntry;

pub use faults::DriveFaults;
pub use files::{FilesGroup, FilesNotebook, FilesPage, FilesSection};

/// What a drive item is.
#[derive(Clone, Debug, PartialEq)]
pub enum ItemKind {
    /// The drive's root folder.
    Root,
    /// A folder (a section group, or the folder notebooks are kept in).
    Folder,
    /// A OneNote notebook: a package of `type: oneNote`.
    Notebook,
    /// A file and its bytes.
    File {
        /// `file.mimeType`.
        mime: String,
        /// The bytes served.
        bytes: Bytes,
    },
}

/// One item of a drive.
#[derive(Clone, Debug, PartialEq)]
pub struct DriveItem {
    /// `id`.
    pub id: String,
    /// The GUID in `eTag` and `cTag`.
    pub guid: String,
    /// `name`.
    pub name: String,
    /// The folder it is in; `None` for the root.
    pub parent: Option<String>,
    /// What it is.
    pub kind: ItemKind,
    /// `createdDateTime`.
    pub created: DateTime<Utc>,
    /// `lastModifiedDateTime`.
    pub modified: DateTime<Utc>,
    /// The number after the GUID in `eTag`: goes up with every change of the item, its name and
    /// place included (<https://learn.microsoft.com/en-us/graph/api/resources/driveitem>: the
    /// eTag is "for the entire item (metadata + content)").
    pub etag_version: u32,
    /// The number after the GUID in `cTag`: goes up only when the content changes ("not changed if
    /// only the metadata is changed").
    pub ctag_version: u32,
}

/// A user's drive.
#[derive(Clone, Debug)]
pub(crate) struct Drive {
    /// The id as the drive's own answer (`/me/drive`) spells it: a business drive's `b!…`, a
    /// personal OneDrive's 16 lower-case hexadecimal digits (its cid).
    pub(crate) id: String,
    pub(crate) owner: String,
    pub(crate) items: Vec<DriveItem>,
    /// A personal OneDrive ([`super::GraphServer::set_personal_drive`]).
    pub(crate) personal: bool,
}

impl Drive {
    /// The id as items' `parentReference.driveId` gives it. A personal OneDrive's comes in upper
    /// case with its leading zero dropped (field report, not documentation:
    /// OneDrive/onedrive-api-docs#1890, abraunegg/onedrive#3115 and #3418: `B0D303A0F54ADFF` for
    /// the drive `0b0d303a0f54adff`); a business drive's as it is.
    pub(crate) fn reported_id(&self) -> String {
        if self.personal {
            let upper = self.id.to_ascii_uppercase();
            upper.strip_prefix('0').unwrap_or(&upper).to_owned()
        } else {
            self.id.clone()
        }
    }

    /// The drive's `webUrl`: a business library's address ([`drive_web_url`]), or a personal
    /// OneDrive's `https://onedrive.live.com/?cid={cid}`.
    pub(crate) fn web_url(&self) -> String {
        if self.personal {
            format!("https://onedrive.live.com/?cid={}", self.id)
        } else {
            drive_web_url(&self.owner)
        }
    }

    /// Whether `id`, as a request names it, is this drive: exactly, or for a personal OneDrive
    /// in any letter case (the service gives its id in both).
    pub(crate) fn named(&self, id: &str) -> bool {
        self.id == id || (self.personal && self.id.eq_ignore_ascii_case(id))
    }

    pub(crate) fn item(&self, id: &str) -> Option<&DriveItem> {
        self.items.iter().find(|i| i.id == id)
    }

    pub(crate) fn root(&self) -> &DriveItem {
        self.items
            .iter()
            .find(|i| i.kind == ItemKind::Root)
            .expect("a drive has a root")
    }
}

/// A download URL handed out: whose item it is and until when it is valid.
#[derive(Clone, Debug)]
pub(crate) struct Ticket {
    pub(crate) drive: String,
    pub(crate) item: String,
    pub(crate) user: String,
    pub(crate) expires: Instant,
}

#[derive(Debug)]
pub(crate) struct DriveState {
    pub(crate) drives: Vec<Drive>,
    /// Owners whose drive, once made, is a personal OneDrive with this cid (lower case).
    pub(crate) personal: HashMap<String, String>,
    /// Web URL → (drive id, item id).
    pub(crate) shares: HashMap<String, (String, String)>,
    pub(crate) tickets: HashMap<String, Ticket>,
    pub(crate) next_id: u64,
    pub(crate) page_size: usize,
}

impl Default for DriveState {
    fn default() -> Self {
        Self {
            drives: Vec::new(),
            personal: HashMap::new(),
            shares: HashMap::new(),
            tickets: HashMap::new(),
            next_id: 0,
            // OneDrive answers children in pages of 200 when `$top` is not given.
            page_size: 200,
        }
    }
}

impl DriveState {
    pub(crate) fn drive(&self, id: &str) -> Option<&Drive> {
        self.drives.iter().find(|d| d.named(id))
    }

    /// A personal OneDrive that `id` would name with the leading zero the service drops in some
    /// answers put back: a request naming it so is refused, as the service refuses it.
    pub(crate) fn named_without_its_zero(&self, id: &str) -> bool {
        id.len() == 15
            && self
                .drives
                .iter()
                .any(|d| d.personal && d.named(&format!("0{id}")))
    }

    pub(crate) fn drive_of(&self, user: &str) -> Option<&Drive> {
        self.drives.iter().find(|d| d.owner == user)
    }
}

/// Pages and resources of files notebooks, for the OneNote routes.
#[derive(Debug, Default)]
pub struct FilesContent {
    /// Page id → the page's HTML (resource URLs still to be placed).
    pages: HashMap<String, String>,
    /// (owner key, resource id) → media type and bytes.
    resources: HashMap<(String, String), (String, Bytes)>,
    /// Notebook id → its `links` (`oneNoteClientUrl`, `oneNoteWebUrl`), where its files sit.
    links: HashMap<String, (String, String)>,
}

impl FilesContent {
    /// The HTML of a page read from a file, its resource URLs under `base` and the owner's segment.
    pub(crate) fn page_html(
        &self,
        page_id: &str,
        base: &str,
        owner_segment: &str,
    ) -> Option<String> {
        self.pages.get(page_id).map(|h| {
            h.replace(
                html::RESOURCE_BASE,
                &format!("{base}/{owner_segment}/onenote/resources"),
            )
        })
    }

    /// The `oneNoteClientUrl` and `oneNoteWebUrl` of a notebook served from files.
    pub(crate) fn notebook_links(&self, notebook_id: &str) -> Option<(&str, &str)> {
        self.links
            .get(notebook_id)
            .map(|(c, w)| (c.as_str(), w.as_str()))
    }

    /// A resource of a page read from a file, as the resource route answers it.
    pub(crate) fn resource(&self, owner_key: &str, id: &str) -> Option<Reply> {
        self.resources
            .get(&(owner_key.to_owned(), id.to_owned()))
            .map(|(mime, bytes)| Reply {
                status: 200,
                headers: Vec::new(),
                body: Body::Raw {
                    content_type: mime.clone(),
                    bytes: bytes.to_vec(),
                },
            })
    }
}

/// What the drive service saw, apart from the OneNote API's counters.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DriveCounters {
    /// Drive API requests (`/shares`, `/drives`, `/me/drive`), whatever their answer.
    pub api_requests: u64,
    /// Requests to download URLs, whatever their answer.
    pub downloads: u64,
    /// Body bytes of downloads actually sent.
    pub bytes_sent: u64,
    /// 429 and 503 answers of the throttling switches (API and downloads).
    pub throttled: u64,
    /// Download requests refused because they carried an `Authorization` header.
    pub bearer_refused: u64,
    /// API requests and downloads per user.
    pub per_user: HashMap<String, u64>,
}

#[derive(Debug, Default)]
pub(crate) struct DriveStats {
    counters: Mutex<DriveCounters>,
    log: Mutex<Vec<LogEntry>>,
    pub(crate) bytes: Arc<AtomicU64>,
}

/// Which kind of drive request is recorded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Api,
    Download,
}

impl DriveStats {
    pub(crate) fn record(&self, kind: Kind, path: &str, user: Option<&str>, status: u16) {
        tracing::debug!(path, status, "graph test server drive request");
        {
            let mut c = self.counters.lock().expect("drive stats poisoned");
            match kind {
                Kind::Api => c.api_requests += 1,
                Kind::Download => c.downloads += 1,
            }
            if let Some(u) = user {
                *c.per_user.entry(u.to_owned()).or_default() += 1;
            }
        }
        self.log
            .lock()
            .expect("drive stats poisoned")
            .push(LogEntry {
                method: "GET".into(),
                path: path.to_owned(),
                user: user.map(str::to_owned),
                status,
                at: Instant::now(),
                inner_batch: false,
            });
    }

    /// One answer of the throttling switches (a 503 for a file over 2 GB is not one).
    pub(crate) fn throttled(&self) {
        self.counters
            .lock()
            .expect("drive stats poisoned")
            .throttled += 1;
    }

    pub(crate) fn bearer_refused(&self) {
        self.counters
            .lock()
            .expect("drive stats poisoned")
            .bearer_refused += 1;
    }
}

/// The drive service of one Graph test server.
#[derive(Debug, Default)]
pub(crate) struct DriveService {
    pub(crate) state: Mutex<DriveState>,
    pub(crate) content: Mutex<FilesContent>,
    pub(crate) faults: DriveFaults,
    pub(crate) stats: DriveStats,
}

impl DriveService {
    pub(crate) fn state(&self) -> std::sync::MutexGuard<'_, DriveState> {
        self.state.lock().expect("drive state poisoned")
    }

    pub(crate) fn counters(&self) -> DriveCounters {
        let mut c = self
            .stats
            .counters
            .lock()
            .expect("drive stats poisoned")
            .clone();
        c.bytes_sent = self.stats.bytes.load(Ordering::SeqCst);
        c
    }

    pub(crate) fn log(&self) -> Vec<LogEntry> {
        self.stats.log.lock().expect("drive stats poisoned").clone()
    }
}

/// The `webUrl` of the drive of `owner` (a user id, or a group's or site's key): a OneDrive for
/// Business library for a user (`https://{tenant}-my.sharepoint.com/personal/{user}/Documents`, as
/// the notebook example of <https://learn.microsoft.com/en-us/graph/api/onenote-post-notebooks>
/// shows), a site's `Shared Documents` library for a group or a site. Items' `webUrl`s, and a files
/// notebook's `links`, are this and the item's path.
pub fn drive_web_url(owner: &str) -> String {
    if let Some(g) = owner.strip_prefix("groups/") {
        return format!(
            "https://contoso.sharepoint.com/sites/{}/Shared%20Documents",
            web_segment(g)
        );
    }
    if let Some(s) = owner.strip_prefix("sites/") {
        return format!(
            "https://contoso.sharepoint.com/sites/{}/Shared%20Documents",
            web_segment(s)
        );
    }
    format!(
        "https://contoso-my.sharepoint.com/personal/{}/Documents",
        owner.replace(['-', '.', '@'], "_")
    )
}

/// A name as one segment of a `webUrl` (SharePoint writes a space as `%20`).
pub(crate) fn web_segment(s: &str) -> String {
    s.replace('%', "%25")
        .replace(' ', "%20")
        .replace('#', "%23")
        .replace('/', "%2F")
        .replace('?', "%3F")
}

/// Whether a path below `/v1.0` belongs to the drive API.
pub(crate) fn is_drive_path(path: &str) -> bool {
    let mut segs = path.trim_start_matches('/').split('/');
    matches!(
        (segs.next(), segs.next(), segs.next()),
        (Some("shares" | "drives"), Some(_), _)
            | (Some("me"), Some("drive"), _)
            | (Some("groups" | "sites"), Some(_), Some("drive"))
    )
}

/// The path prefix of download URLs (outside `/v1.0`: another host in the real service).
pub(crate) const DOWNLOAD_PREFIX: &str = "/_dl/";

impl super::GraphServer {
    /// Adds a notebook read from OneNote's own files at `path` (a notebook folder with its
    /// `.onetoc2`, or a folder of `.one` files and section-group sub-folders) to the notebooks and
    /// drive of `owner` (a user id, or the key [`super::teams::group_key`] /
    /// [`super::teams::site_key`] gives for a group's or site's library), named `name`: the
    /// OneNote API serves it with the files' page GUIDs, titles, levels, order and content, and
    /// the drive API serves its files' real bytes.
    ///
    /// # Panics
    /// When `path` holds no OneNote notebook (a test setup error).
    pub fn add_files_notebook(
        &self,
        owner: &str,
        name: &str,
        path: &std::path::Path,
    ) -> FilesNotebook {
        files::add(self, owner, name, files::Source::Folder(path))
    }

    /// Adds a notebook made of the section files `files` (top-level sections, in this order) to
    /// `owner`'s notebooks and drive, named `name`; see [`super::GraphServer::add_files_notebook`].
    ///
    /// # Panics
    /// When a file is not a readable `.one` file (a test setup error).
    pub fn add_files_notebook_of(
        &self,
        owner: &str,
        name: &str,
        files: &[std::path::PathBuf],
    ) -> FilesNotebook {
        files::add(self, owner, name, files::Source::Files(files))
    }

    /// Puts a file `name` holding `bytes` into the folder `parent` (an item id) of `owner`'s drive,
    /// beside what a notebook's files put there (an empty section file, a stray file); its id.
    ///
    /// # Panics
    /// When `owner` has no drive or `parent` is no folder of it (a test setup error).
    pub fn add_drive_file(&self, owner: &str, parent: &str, name: &str, bytes: &[u8]) -> String {
        let mut st = self.shared.drive.state();
        let no = st
            .drives
            .iter()
            .position(|d| d.owner == owner)
            .unwrap_or_else(|| panic!("{owner} has no drive"));
        let is_folder = st.drives[no].item(parent).is_some_and(|i| {
            matches!(
                i.kind,
                ItemKind::Folder | ItemKind::Notebook | ItemKind::Root
            )
        });
        assert!(is_folder, "{parent} is no folder of {owner}'s drive");
        files::new_item(
            &mut st,
            no,
            name,
            parent,
            ItemKind::File {
                mime: files::ONENOTE_MIME.into(),
                bytes: Bytes::copy_from_slice(bytes),
            },
        )
    }

    /// The owner saves new content into file `item_id` of their drive (OneNote syncing a changed
    /// section file, say `bytes` read from another real `.one` file): its size, `quickXorHash`,
    /// `eTag` and `cTag` change and its `lastModifiedDateTime` moves a minute on. Bytes equal to
    /// the file's leave it as it is (no new version). Only the drive changes: for a section file
    /// whose pages the OneNote API should follow, use [`super::GraphServer::replace_section_file`].
    ///
    /// # Panics
    /// When `owner` has no drive or `item_id` is no file of it (a test setup error).
    pub fn replace_drive_file(&self, owner: &str, item_id: &str, bytes: &[u8]) {
        let mut st = self.shared.drive.state();
        let item = drive_item_mut(&mut st, owner, item_id);
        let ItemKind::File { bytes: old, .. } = &mut item.kind else {
            panic!("{item_id} is no file of {owner}'s drive");
        };
        if old.as_ref() == bytes {
            return;
        }
        *old = Bytes::copy_from_slice(bytes);
        item.etag_version += 1;
        item.ctag_version += 1;
        item.modified += chrono::Duration::minutes(1);
    }

    /// The owner renames item `item_id` of their drive (a section file or a section group's
    /// folder renamed in OneNote): its `eTag` changes and its `lastModifiedDateTime` moves a
    /// minute on; its content, so its `cTag`, size and hash, stay.
    ///
    /// # Panics
    /// When `owner` has no drive or `item_id` is not in it (a test setup error).
    pub fn rename_drive_item(&self, owner: &str, item_id: &str, name: &str) {
        let mut st = self.shared.drive.state();
        let item = drive_item_mut(&mut st, owner, item_id);
        item.name = name.to_owned();
        item.etag_version += 1;
        item.modified += chrono::Duration::minutes(1);
    }

    /// Switch: `owner`'s drive is a personal OneDrive whose id (its cid) is `cid`, 16
    /// hexadecimal digits, with the ids as the field reports them rather than as a business
    /// drive's: `/me/drive` answers `driveType: personal` and the id in lower case; items'
    /// `parentReference.driveId` gives it in upper case without a leading zero
    /// ([`Drive::reported_id`]); item ids are that and `!s` and 32 hexadecimal digits (the
    /// form of abraunegg/onedrive#3418's log); a request names the drive in either case, and one
    /// naming it without its leading zero is refused with `400 invalidRequest` ("The provided
    /// drive id appears to be malformed, or does not represent a valid drive.",
    /// OneDrive/onedrive-api-docs#1416; abraunegg/onedrive#3115: "invalid for any queries").
    /// A files notebook added to the drive afterwards sits in `Documents` and links to it as a
    /// personal account's notebook does: `oneNoteClientUrl`
    /// `onenote:https://d.docs.live.net/{cid}/Documents/{name}`.
    ///
    /// # Panics
    /// When `cid` is not 16 hexadecimal digits, or `owner` already has a drive (a test setup
    /// error: set the switch before adding files).
    pub fn set_personal_drive(&self, owner: &str, cid: &str) {
        assert!(
            cid.len() == 16 && cid.bytes().all(|b| b.is_ascii_hexdigit()),
            "a personal drive id is 16 hexadecimal digits: {cid}"
        );
        let mut st = self.shared.drive.state();
        assert!(st.drive_of(owner).is_none(), "{owner} already has a drive");
        st.personal
            .insert(owner.to_owned(), cid.to_ascii_lowercase());
    }

    /// The drive fault switchboard.
    pub fn drive_faults(&self) -> DriveFaults {
        self.shared.drive.faults.clone()
    }

    /// Drive requests and bytes so far.
    pub fn drive_counters(&self) -> DriveCounters {
        self.shared.drive.counters()
    }

    /// Every drive request so far (API calls and downloads; paths relative to the host).
    pub fn drive_log(&self) -> Vec<LogEntry> {
        self.shared.drive.log()
    }

    /// Items per page of children listings when `$top` is not given, and at most when it asks
    /// for more (default 200).
    pub fn set_drive_page_size(&self, n: usize) {
        self.shared.drive.state().page_size = n.max(1);
    }

    /// The `/shares` id of a sharing URL: `u!` and the URL's unpadded base64url, as documented
    /// (<https://learn.microsoft.com/en-us/graph/api/shares-get#encoding-sharing-urls>).
    pub fn share_id(url: &str) -> String {
        use base64::Engine as _;
        format!(
            "u!{}",
            base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(url.as_bytes())
        )
    }
}

/// Item `item_id` of `owner`'s drive, for a test's change.
fn drive_item_mut<'a>(st: &'a mut DriveState, owner: &str, item_id: &str) -> &'a mut DriveItem {
    st.drives
        .iter_mut()
        .find(|d| d.owner == owner)
        .unwrap_or_else(|| panic!("{owner} has no drive"))
        .items
        .iter_mut()
        .find(|i| i.id == item_id)
        .unwrap_or_else(|| panic!("{item_id} is not in {owner}'s drive"))
}

/// The answer to a throttled drive request, with its `Retry-After` in whole seconds (rounded up).
pub(crate) fn throttled(t: faults::DriveThrottle) -> axum::response::Response {
    super::into_response(throttled_reply(t), None)
}

/// [`throttled`] before it is put on the wire (or into a `$batch` response).
pub(crate) fn throttled_reply(t: faults::DriveThrottle) -> Reply {
    let mut r = match t.status {
        429 => Reply::error(
            429,
            "activityLimitReached",
            "The request has been throttled",
        ),
        _ => Reply::error(
            503,
            "serviceNotAvailable",
            "The service is not available. Try the request again after a delay. There may be a Retry-After header.",
        ),
    };
    if let Some(after) = t.retry_after {
        let secs = after.as_secs() + u64::from(after.subsec_nanos() > 0);
        r.headers.push(("Retry-After".into(), secs.to_string()));
    }
    r
}

/// The answer of a switched server error ([`DriveFaults::fail_next`]).
pub(crate) fn server_error_reply(status: u16) -> Reply {
    match status {
        500 => Reply::error(
            500,
            "generalException",
            "An unspecified error has occurred.",
        ),
        502 => Reply::error(
            502,
            "badGateway",
            "The gateway received an invalid response.",
        ),
        _ => Reply::error(504, "gatewayTimeout", "The gateway timed out."),
    }
}

/// Serves one drive API request of an authenticated user (`path` and `query` below `/v1.0`).
pub(crate) fn api(
    sh: &super::Shared,
    who: &super::teams::Who,
    method: &str,
    full: &str,
    path: &str,
    query: &str,
) -> axum::response::Response {
    super::into_response(api_reply(sh, who, method, full, path, query), None)
}

/// [`api`] before it is put on the wire: a plain request's answer, or an inner `$batch` request's
/// (the drive API is served in batches too, with the drive's throttling, not OneNote's).
pub(crate) fn api_reply(
    sh: &super::Shared,
    who: &super::teams::Who,
    method: &str,
    full: &str,
    path: &str,
    query: &str,
) -> Reply {
    let svc = &sh.drive;
    if let Some(status) = svc.faults.take_error() {
        svc.stats.record(Kind::Api, full, Some(who.user), status);
        return server_error_reply(status);
    }
    if let Err(t) = svc.faults.admit(who.user) {
        svc.stats.record(Kind::Api, full, Some(who.user), t.status);
        svc.stats.throttled();
        return throttled_reply(t);
    }
    let origin = sh.base.trim_end_matches("/v1.0");
    let teams = sh.teams.lock().expect("graph teams poisoned");
    let may_read = |owner: &str| teams.may_read(who.user, owner);
    let reply = routes::dispatch(svc, origin, who, method, path, query, &may_read);
    svc.stats
        .record(Kind::Api, full, Some(who.user), reply.status);
    reply
}
