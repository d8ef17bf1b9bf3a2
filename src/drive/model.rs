//! The drive API's JSON as the client reads it: a `driveItem` (only the fields it uses) and a page
//! of a folder's children.
//!
//! Microsoft's driveItem reference (<https://learn.microsoft.com/en-us/graph/api/resources/driveitem>):
//! a folder has a `folder` facet, a file a `file` facet; a notebook's top item has a `package` facet
//! of type `oneNote` and neither of the others
//! (<https://learn.microsoft.com/en-us/graph/api/resources/package>).

use serde::de::IgnoredAny;
use serde::Deserialize;

/// One item of a drive.
#[derive(Debug, Deserialize)]
pub struct DriveItem {
    /// The item's id in its drive.
    pub id: String,
    /// Its name (a file's with its extension).
    #[serde(default)]
    pub name: String,
    /// Bytes (a file's length).
    pub size: Option<u64>,
    /// Changes when the content changes (not given for folders in OneDrive for Business).
    #[serde(rename = "cTag")]
    pub ctag: Option<String>,
    /// When it last changed (ISO 8601).
    #[serde(rename = "lastModifiedDateTime")]
    pub modified: Option<String>,
    /// Present on files.
    pub file: Option<FileFacet>,
    /// Present on folders.
    pub folder: Option<IgnoredAny>,
    /// Present on packages (a OneNote notebook).
    pub package: Option<Package>,
    /// Where it is.
    #[serde(rename = "parentReference")]
    pub parent: Option<ParentReference>,
}

/// The `file` facet.
#[derive(Debug, Deserialize)]
pub struct FileFacet {
    /// The file's hashes, those the drive gives.
    pub hashes: Option<Hashes>,
}

/// `file.hashes` (<https://learn.microsoft.com/en-us/graph/api/resources/hashes>): OneDrive for
/// Business and SharePoint give `quickXorHash`; OneDrive Personal `quickXorHash`, and `sha1Hash`
/// and `sha256Hash` on some items.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Hashes {
    /// Base64 of the file's QuickXorHash.
    pub quick_xor_hash: Option<String>,
    /// Hex of the file's SHA-256.
    pub sha256_hash: Option<String>,
}

/// The `package` facet.
#[derive(Debug, Deserialize)]
pub struct Package {
    /// `oneNote` for a notebook; other types may come.
    #[serde(rename = "type")]
    pub kind: Option<String>,
}

/// The `parentReference` of an item.
#[derive(Debug, Deserialize)]
pub struct ParentReference {
    /// The drive holding the item.
    #[serde(rename = "driveId")]
    pub drive_id: Option<String>,
}

/// One page of a folder's children.
#[derive(Debug, Deserialize)]
pub struct Children {
    /// The items.
    #[serde(default)]
    pub value: Vec<DriveItem>,
    /// The next page, when there is one.
    #[serde(rename = "@odata.nextLink")]
    pub next_link: Option<String>,
}

impl DriveItem {
    /// Whether this is a OneNote notebook's top item.
    pub fn is_notebook(&self) -> bool {
        self.package
            .as_ref()
            .and_then(|p| p.kind.as_deref())
            .is_some_and(|k| k.eq_ignore_ascii_case("oneNote"))
    }
}
