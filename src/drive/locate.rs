//! Where a notebook's folder is in its drive, from the notebook's links (`docs/GRAPH-DRIVE.md`,
//! section 1).
//!
//! The first way needs only the read permission the product asks for (`Files.Read`): the
//! notebook's `oneNoteClientUrl` is its folder's address (`onenote:` and the folder's `webUrl` in
//! OneDrive for Business and SharePoint; `onenote:https://d.docs.live.net/{cid}/{path}` in a
//! personal OneDrive), so the part below the drive's own `webUrl` (or below the personal drive's
//! `cid`) is the folder's path, read with path addressing (`/drives/{id}/root:/{path}:`). A URL
//! that does not lie in the drive the caller names is not guessed at. The second way, the shares
//! API with the notebook's `oneNoteWebUrl`, needs a write permission (`Files.ReadWrite` at least):
//! it is asked only when the sign-in's scopes hold one, and only when the first way failed.

use std::collections::HashMap;
use std::sync::Mutex;

use serde::Deserialize;

use super::{enc, model, DriveClient, DriveError, NotebookFiles, SELECT};
use crate::auth::granted_holds;
use crate::graph::Caller;

/// The host of personal OneDrive's WebDAV addresses, which `oneNoteClientUrl` uses for a personal
/// account's notebooks (its first path segment is the drive's `cid`).
const PERSONAL_HOST: &str = "d.docs.live.net";
/// Longest client URL read (a hostile one is refused, not parsed at length).
const MAX_URL_CHARS: usize = 4096;
/// Most path segments below a drive's root read from a URL.
const MAX_SEGMENTS: usize = 64;
/// The delegated scopes the shares API documents (the least privileged is `Files.ReadWrite`,
/// <https://learn.microsoft.com/en-us/graph/api/shares-get#permissions>).
pub const SHARES_SCOPES: &[&str] = &[
    "Files.ReadWrite",
    "Files.ReadWrite.All",
    "Sites.ReadWrite.All",
];

/// Whose drive holds a notebook, as the caller knows it from where it listed the notebook.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub enum DriveOwner {
    /// The signed-in user's own drive (`/me/drive`).
    #[default]
    Me,
    /// A Microsoft 365 group's document library (`/groups/{id}/drive`).
    Group(String),
    /// A SharePoint site's default document library (`/sites/{id}/drive`).
    Site(String),
}

impl DriveOwner {
    /// The path of the owner's drive below Graph's base.
    fn drive_path(&self) -> String {
        match self {
            DriveOwner::Me => "me/drive".to_owned(),
            DriveOwner::Group(id) => format!("groups/{}/drive", enc(id)),
            DriveOwner::Site(id) => format!("sites/{}/drive", enc(id)),
        }
    }
}

/// A notebook's `links`, as the OneNote API gives them, and where it was listed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NotebookLinks {
    /// `links.oneNoteWebUrl.href`: what the shares API resolves.
    pub web_url: Option<String>,
    /// `links.oneNoteClientUrl.href`: the folder's address, read by path.
    pub client_url: Option<String>,
    /// The drive the notebook was listed from (the account's own, a group's or a site's).
    pub owner: DriveOwner,
}

/// A drive as `GET /{owner}/drive` describes it.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
pub struct DriveInfo {
    /// The drive's id.
    pub id: String,
    /// Its address (absent from a personal OneDrive's answer in some forms).
    #[serde(rename = "webUrl")]
    pub web_url: Option<String>,
}

/// The drives looked up so far, per account and owner (a run reads a handful).
#[derive(Debug, Default)]
pub(super) struct Drives(Mutex<HashMap<(String, DriveOwner), DriveInfo>>);

/// The path below `drive`'s root of the folder `client_url` names, each segment decoded; why not
/// when the URL is not one of the documented shapes or lies outside that drive.
pub fn path_in_drive(client_url: &str, drive: &DriveInfo) -> Result<Vec<String>, String> {
    if client_url.len() > MAX_URL_CHARS {
        return Err(format!("a client URL over {MAX_URL_CHARS} characters"));
    }
    let raw = strip_prefix_ci(client_url, "onenote:").unwrap_or(client_url);
    let url = url::Url::parse(raw).map_err(|e| format!("not a URL ({e})"))?;
    if !matches!(url.scheme(), "https" | "http") {
        return Err(format!("a {} URL, not a drive's", url.scheme()));
    }
    let host = url.host_str().unwrap_or_default();
    let segs = segments(&url)?;
    let rest = if host.eq_ignore_ascii_case(PERSONAL_HOST) {
        // `d.docs.live.net/{cid}/...`: a personal drive's id is its cid.
        match segs.split_first() {
            Some((cid, rest)) if same_drive(cid, &drive.id) => rest.to_vec(),
            Some(_) | None => return Err("a personal OneDrive that is not this drive".into()),
        }
    } else {
        let Some(base) = drive.web_url.as_deref() else {
            return Err("the drive gave no webUrl to compare with".into());
        };
        let base = url::Url::parse(base).map_err(|e| format!("the drive's webUrl: {e}"))?;
        let base_segs = segments(&base)?;
        let same_host = base
            .host_str()
            .is_some_and(|h| h.eq_ignore_ascii_case(host));
        let under = segs.len() >= base_segs.len()
            && base_segs
                .iter()
                .zip(&segs)
                .all(|(a, b)| a.eq_ignore_ascii_case(b));
        if !same_host || !under {
            return Err("a folder outside this drive".into());
        }
        segs[base_segs.len()..].to_vec()
    };
    if rest.is_empty() {
        return Err("the drive's root, not a notebook's folder".into());
    }
    Ok(rest)
}

/// A URL's path segments, decoded, without empty ones; refused when a segment could not be one
/// name of a drive path.
fn segments(url: &url::Url) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    for s in url.path_segments().into_iter().flatten() {
        if s.is_empty() {
            continue;
        }
        if out.len() == MAX_SEGMENTS {
            return Err(format!("a path over {MAX_SEGMENTS} segments"));
        }
        let name = percent_encoding::percent_decode_str(s)
            .decode_utf8()
            .map_err(|_| "a path segment that is not UTF-8")?
            .into_owned();
        // Neither can be in a OneDrive or SharePoint name, and each would change the path.
        if name == "." || name == ".." || name.contains(['/', ':', '\\']) {
            return Err(format!("a path segment {name:?} that names no item"));
        }
        out.push(name);
    }
    Ok(out)
}

/// Whether two drive ids name the same drive, as the service means them: without regard to case,
/// and a OneDrive Personal id (16 hexadecimal digits) the same with or without its leading zero,
/// which the service drops in some answers (field report: OneDrive/onedrive-api-docs#1890,
/// abraunegg/onedrive#3115 and #3418: `B0D303A0F54ADFF` for the drive `0B0D303A0F54ADFF`).
pub fn same_drive(a: &str, b: &str) -> bool {
    canonical_drive_id(a).eq_ignore_ascii_case(&canonical_drive_id(b))
}

/// A drive id in the form to send: a personal id given with 15 hexadecimal digits gets its
/// leading zero back (the form the drive's own answer gives); any other id is kept as it is.
pub fn canonical_drive_id(id: &str) -> std::borrow::Cow<'_, str> {
    if id.len() == 15 && id.bytes().all(|b| b.is_ascii_hexdigit()) {
        std::borrow::Cow::Owned(format!("0{id}"))
    } else {
        std::borrow::Cow::Borrowed(id)
    }
}

fn strip_prefix_ci<'a>(s: &'a str, prefix: &str) -> Option<&'a str> {
    let head = s.get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix)
        .then(|| &s[prefix.len()..])
}

/// Whether a way's failure says only that this way does not lead to the notebook, so the other
/// may: a refusal or an answer that names no notebook. A failure that is the service's (transient
/// failures past the retries, a pause past the deadline, an outage) or the sign-in's goes up as it
/// is, with the retries it spent.
fn not_here(e: &DriveError) -> bool {
    match e {
        DriveError::NotFound { .. }
        | DriveError::Forbidden { .. }
        | DriveError::Refused { .. }
        | DriveError::NotANotebook { .. }
        | DriveError::BadAnswer { .. }
        | DriveError::ForeignHost { .. } => true,
        DriveError::NotLocated { .. }
        | DriveError::TooLarge { .. }
        | DriveError::OverBound { .. }
        | DriveError::TransferFailed { .. }
        | DriveError::Throttled { .. }
        | DriveError::File { .. }
        | DriveError::Auth(_)
        | DriveError::Store(_)
        | DriveError::Unreachable(_) => false,
    }
}

/// Whether `scopes` hold one the shares API takes (compared as sign-in compares permissions).
pub fn may_use_shares(scopes: &[String]) -> bool {
    SHARES_SCOPES.iter().any(|w| granted_holds(scopes, w))
}

/// A notebook's drive and item, once found.
pub(super) struct Found {
    pub(super) drive_id: String,
    pub(super) item_id: String,
}

impl DriveClient {
    /// The section files of the notebook `links` describes: its folder found by path from its
    /// client URL in the drive `links.owner` names, else (when the sign-in may use it) through the
    /// shares API from its web URL, then walked. A notebook neither way finds is
    /// [`DriveError::NotLocated`] (read it through the OneNote API); a failure that is not the
    /// way's (transient failures past the item's retries, a pause past the deadline, an outage,
    /// the sign-in) ends the search as it is.
    pub async fn locate(
        &self,
        who: &Caller,
        links: &NotebookLinks,
    ) -> Result<NotebookFiles, DriveError> {
        let shown = links
            .client_url
            .as_deref()
            .or(links.web_url.as_deref())
            .unwrap_or("without links");
        let what = format!(
            "notebook {}",
            shown.split(['?', '#']).next().unwrap_or(shown)
        );
        let mut why = Vec::new();
        match links.client_url.as_deref() {
            Some(client) => match self.by_path(who, &what, &links.owner, client).await {
                Ok(found) => return self.walk(who, &what, found).await,
                Err(e) if not_here(&e) => why.push(format!("by its path: {e}")),
                Err(e) => return Err(e),
            },
            None => why.push("no client URL to read its path from".to_owned()),
        }
        match links.web_url.as_deref() {
            Some(web) if self.shares => match self.by_share(who, &what, web).await {
                Ok(found) => return self.walk(who, &what, found).await,
                Err(e) if not_here(&e) => why.push(format!("through the shares API: {e}")),
                Err(e) => return Err(e),
            },
            Some(_) => why.push(
                "the shares API needs Files.ReadWrite, which the sign-in's scopes do not hold"
                    .to_owned(),
            ),
            None => why.push("no web URL for the shares API".to_owned()),
        }
        Err(DriveError::NotLocated {
            account: who.account.clone(),
            what,
            why: why.join("; "),
        })
    }

    /// The notebook's item by path from its client URL, in `owner`'s drive.
    async fn by_path(
        &self,
        who: &Caller,
        what: &str,
        owner: &DriveOwner,
        client_url: &str,
    ) -> Result<Found, DriveError> {
        let drive = self.drive_info(who, what, owner).await?;
        let path =
            path_in_drive(client_url, &drive).map_err(|problem| DriveError::NotANotebook {
                account: who.account.clone(),
                what: what.to_owned(),
                problem: format!("its client URL is {problem}"),
            })?;
        let path: Vec<String> = path.iter().map(|s| enc(s)).collect();
        // The closing `:` always: without it, OneDrive Personal reads a last name ending in
        // `drive` as a property (OneDrive/onedrive-api-docs#941).
        let url = format!(
            "{}/drives/{}/root:/{}:?$select={SELECT}",
            self.base,
            enc(&drive.id),
            path.join("/")
        );
        let item: model::DriveItem = self.get_json(who, &url, what).await?;
        // The drive's own answer spells its id; an item's `parentReference` may drop a personal
        // id's leading zero or change its case (onedrive-api-docs#1890).
        let drive_id = match item.parent.as_ref().and_then(|p| p.drive_id.as_deref()) {
            Some(d) if !same_drive(d, &drive.id) => canonical_drive_id(d).into_owned(),
            Some(_) | None => drive.id,
        };
        self.notebook_item(who, what, item, Some(drive_id))
    }

    /// The drive of `owner`, asked once per account and owner.
    async fn drive_info(
        &self,
        who: &Caller,
        what: &str,
        owner: &DriveOwner,
    ) -> Result<DriveInfo, DriveError> {
        let key = (who.account.clone(), owner.clone());
        let known = self
            .drives
            .0
            .lock()
            .expect("drive cache poisoned")
            .get(&key)
            .cloned();
        if let Some(d) = known {
            return Ok(d);
        }
        let url = format!("{}/{}?$select=id,webUrl", self.base, owner.drive_path());
        let info: DriveInfo = self.get_json(who, &url, what).await?;
        self.drives
            .0
            .lock()
            .expect("drive cache poisoned")
            .insert(key, info.clone());
        Ok(info)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn business() -> DriveInfo {
        DriveInfo {
            id: "b!abc".into(),
            web_url: Some(
                "https://contoso-my.sharepoint.com/personal/admin_m365x841051_onmicrosoft_com/Documents"
                    .into(),
            ),
        }
    }

    #[test]
    fn the_documented_business_client_url_is_a_path_below_the_drive() {
        // The example of "Create notebook" (onenote-post-notebooks).
        let url = "onenote:https://contoso-my.sharepoint.com/personal/admin_m365x841051_onmicrosoft_com/Documents/Notebooks/My%20Private%20notebook";
        assert_eq!(
            path_in_drive(url, &business()).unwrap(),
            ["Notebooks", "My Private notebook"]
        );
        // The web URL is the same address; case and a fragment do not matter.
        let web = "https://CONTOSO-my.sharepoint.com/personal/admin_m365x841051_onmicrosoft_com/documents/Notebooks/Work/#section-id={1}";
        assert_eq!(
            path_in_drive(web, &business()).unwrap(),
            ["Notebooks", "Work"]
        );
    }

    #[test]
    fn a_personal_client_url_is_a_path_below_its_cid() {
        let drive = DriveInfo {
            id: "D333AEE656452F8B".into(),
            web_url: Some("https://onedrive.live.com/?cid=d333aee656452f8b".into()),
        };
        let url = "onenote:https://d.docs.live.net/d333aee656452f8b/Documents/COP2018";
        assert_eq!(
            path_in_drive(url, &drive).unwrap(),
            ["Documents", "COP2018"]
        );
        let other = "onenote:https://d.docs.live.net/0c2fc6153c0dbd75/Documents/JVNJ";
        assert!(path_in_drive(other, &drive)
            .unwrap_err()
            .contains("not this drive"));
    }

    /// OneDrive Personal gives a 16-digit drive id that starts with 0 without the zero in some
    /// answers, in either case (field report: OneDrive/onedrive-api-docs#1890, abraunegg/onedrive
    /// #3115 and #3418, recorded in `shared/recorded-answers/drive/drive-real-responses.json`).
    /// The notebook's folder is found in its drive whichever form either side holds.
    #[test]
    fn a_personal_drive_id_without_its_leading_zero_or_in_other_case_is_the_same_drive() {
        let url = "onenote:https://d.docs.live.net/0b0d303a0f54adff/Documents/Field%20notes";
        for id in ["0B0D303A0F54ADFF", "B0D303A0F54ADFF", "b0d303a0f54adff"] {
            let drive = DriveInfo {
                id: id.into(),
                web_url: None,
            };
            assert_eq!(
                path_in_drive(url, &drive).unwrap(),
                ["Documents", "Field notes"],
                "{id}"
            );
        }
        let dropped = "onenote:https://d.docs.live.net/B0D303A0F54ADFF/Documents/Field%20notes";
        let drive = DriveInfo {
            id: "0B0D303A0F54ADFF".into(),
            web_url: None,
        };
        assert!(path_in_drive(dropped, &drive).is_ok());
        assert!(same_drive("B0D303A0F54ADFF", "0b0d303a0f54adff"));
        assert_eq!(canonical_drive_id("B0D303A0F54ADFF"), "0B0D303A0F54ADFF");
        // Another drive stays another drive: only a leading zero is given back, and only to a
        // personal id's 15 digits; a business drive id is compared as it is.
        assert!(!same_drive("B0D303A0F54ADF0", "0B0D303A0F54ADFF"));
        assert!(!same_drive("1B0D303A0F54ADFF", "B0D303A0F54ADFF"));
        assert!(!same_drive("b!abc", "b!ABD"));
        let other = "onenote:https://d.docs.live.net/0c2fc6153c0dbd75/Documents/JVNJ";
        assert!(path_in_drive(other, &drive)
            .unwrap_err()
            .contains("not this drive"));
    }

    #[test]
    fn a_url_outside_the_drive_or_of_no_item_is_not_guessed_at() {
        let d = business();
        for (url, why) in [
            (
                "onenote:https://contoso-my.sharepoint.com/personal/bob_contoso_com/Documents/Notebooks/Work",
                "outside this drive",
            ),
            (
                "https://contoso.sharepoint.com/personal/admin_m365x841051_onmicrosoft_com/Documents/Notebooks/W",
                "outside this drive",
            ),
            (
                "onenote:https://contoso-my.sharepoint.com/personal/admin_m365x841051_onmicrosoft_com/Documents",
                "root",
            ),
            (
                "https://contoso-my.sharepoint.com/personal/admin_m365x841051_onmicrosoft_com/Documents/a%2Fb",
                "names no item",
            ),
            (
                // The URL parser resolves an encoded `..`, which leaves the drive.
                "https://contoso-my.sharepoint.com/personal/admin_m365x841051_onmicrosoft_com/Documents/%2E%2E",
                "outside this drive",
            ),
            ("onenote:file:///C:/Notebooks/Work", "file URL"),
            ("not a url", "not a URL"),
            (
                "https://contoso-my.sharepoint.com/personal/admin_m365x841051_onmicrosoft_com/Documents/%FF",
                "not UTF-8",
            ),
        ] {
            let e = path_in_drive(url, &d).unwrap_err();
            assert!(e.contains(why), "{url}: {e}");
        }
        let long = format!("https://x/{}", "a/".repeat(MAX_URL_CHARS));
        assert!(path_in_drive(&long, &d).unwrap_err().contains("characters"));
        let deep = format!(
            "https://contoso-my.sharepoint.com/personal/admin_m365x841051_onmicrosoft_com/Documents/{}",
            "a/".repeat(MAX_SEGMENTS)
        );
        assert!(path_in_drive(&deep, &d).unwrap_err().contains("segments"));
        let no_web = DriveInfo {
            id: "b!abc".into(),
            web_url: None,
        };
        assert!(path_in_drive(
            "https://contoso-my.sharepoint.com/personal/x/Documents/N",
            &no_web
        )
        .is_err());
    }

    #[test]
    fn only_a_write_scope_opens_the_shares_api() {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert!(!may_use_shares(&s(&[
            "offline_access",
            "User.Read",
            "Notes.Read",
            "Files.Read"
        ])));
        assert!(!may_use_shares(&s(&["Files.Read.All", "Sites.Read.All"])));
        assert!(may_use_shares(&s(&["files.readwrite"])));
        assert!(may_use_shares(&s(&["Sites.ReadWrite.All"])));
    }
}
