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
}

/// A notebook, with the sections and section groups `$expand` brought along.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Notebook {
    /// Id.
    pub id: String,
    /// Name.
    pub display_name: String,
    /// Created.
    pub created_date_time: Option<String>,
    /// Last modified.
    pub last_modified_date_time: Option<String>,
    /// Top-level sections (with `$expand=sections`).
    pub sections: Option<Vec<Section>>,
    /// Top-level section groups (with `$expand=sectionGroups`).
    pub section_groups: Option<Vec<SectionGroup>>,
}

/// A section group.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SectionGroup {
    /// Id.
    pub id: String,
    /// Name.
    pub display_name: String,
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
    /// Name.
    pub display_name: String,
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
}
