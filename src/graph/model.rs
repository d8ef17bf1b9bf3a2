//! The Graph OneNote entities we read, as Graph spells them.

use serde::Deserialize;

/// One page of a collection.
#[derive(Debug, Deserialize)]
pub struct Page<T> {
    /// The items.
    #[serde(default = "Vec::new")]
    pub value: Vec<T>,
    /// The next page, absolute.
    #[serde(rename = "@odata.nextLink")]
    pub next_link: Option<String>,
    /// The collection's size, when asked for with `$count=true`.
    #[serde(rename = "@odata.count")]
    pub count: Option<u64>,
}

/// A notebook, with the sections and section groups `$expand` brought along.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Notebook {
    /// Id.
    pub id: String,
    /// Name: `null` is allowed by Graph's v1.0 model (msgraph-metadata), and met.
    #[serde(default)]
    pub display_name: Option<String>,
    /// Created.
    pub created_date_time: Option<String>,
    /// Last modified.
    pub last_modified_date_time: Option<String>,
    /// Top-level sections (with `$expand=sections`).
    pub sections: Option<Vec<Section>>,
    /// Top-level section groups (with `$expand=sectionGroups`).
    pub section_groups: Option<Vec<SectionGroup>>,
    /// `links`: where its folder of section files is in OneDrive or SharePoint.
    pub links: Option<NotebookLinks>,
}

/// A notebook's `links`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NotebookLinks {
    /// The notebook in the desktop client: `onenote:` and its folder's address in the drive.
    pub one_note_client_url: Option<Href>,
    /// The notebook in OneNote on the web.
    pub one_note_web_url: Option<Href>,
}

/// A section group.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SectionGroup {
    /// Id.
    pub id: String,
    /// Name: `null` is allowed by Graph's v1.0 model (msgraph-metadata), and met.
    #[serde(default)]
    pub display_name: Option<String>,
    /// Created.
    pub created_date_time: Option<String>,
    /// Last modified.
    pub last_modified_date_time: Option<String>,
    /// Its sections (with `$expand=sections`).
    pub sections: Option<Vec<Section>>,
    /// Its section groups (with `$expand=sectionGroups`).
    pub section_groups: Option<Vec<SectionGroup>>,
}

/// A section.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Section {
    /// Id.
    pub id: String,
    /// Name: `null` is allowed by Graph's v1.0 model (msgraph-metadata), and met.
    #[serde(default)]
    pub display_name: Option<String>,
    /// Created.
    pub created_date_time: Option<String>,
    /// Last modified.
    pub last_modified_date_time: Option<String>,
}

/// A page's metadata (`pagelevel=true` adds `level` and `order`).
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PageMeta {
    /// Id.
    pub id: String,
    /// Title (may be empty or missing).
    pub title: Option<String>,
    /// Created.
    pub created_date_time: Option<String>,
    /// Last modified.
    pub last_modified_date_time: Option<String>,
    /// Content URL.
    pub content_url: Option<String>,
    /// Indent 0..2.
    pub level: Option<i64>,
    /// Position in the section.
    pub order: Option<i64>,
    /// `links.oneNoteClientUrl.href` holds the page's GUID, which `onenote:` links use.
    pub links: Option<PageLinks>,
}

/// A page's `links`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PageLinks {
    /// The desktop client URL (`onenote:...&page-id={GUID}&end`).
    pub one_note_client_url: Option<Href>,
    /// The page in OneNote on the web (a row's `OneNote link` in layout `database`).
    pub one_note_web_url: Option<Href>,
}

/// A link object.
#[derive(Debug, Deserialize)]
pub struct Href {
    /// The URL.
    pub href: Option<String>,
}

impl PageMeta {
    /// `links.oneNoteWebUrl.href`: the page in OneNote on the web.
    pub fn web_url(&self) -> Option<String> {
        self.links
            .as_ref()?
            .one_note_web_url
            .as_ref()?
            .href
            .clone()
            .filter(|h| h.starts_with("https://"))
    }

    /// The page's GUID as `onenote:` links name it: `{lower-case}`.
    pub fn guid(&self) -> Option<String> {
        let href = self
            .links
            .as_ref()?
            .one_note_client_url
            .as_ref()?
            .href
            .as_deref()?;
        crate::convert::onenote_page_id(href).map(|g| g.to_ascii_lowercase())
    }
}
