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
            .filter(|h| h.starts_with("https://") && !is_generic_link(h))
    }

    /// The page's GUID as `onenote:` links name it: `{lower-case}`. From its client link; where
    /// that names no page (the generic `https://www.onenote.com/notebooks` of group and site
    /// notebooks, microsoft-graph-docs-contrib#9160, or a listing without `links`), from its id.
    pub fn guid(&self) -> Option<String> {
        let from_link = || {
            let href = self
                .links
                .as_ref()?
                .one_note_client_url
                .as_ref()?
                .href
                .as_deref()?;
            crate::convert::onenote_page_id(href).map(|g| g.to_ascii_lowercase())
        };
        from_link().or_else(|| guid_of_page_id(&self.id))
    }
}

/// The GUID a Graph page id carries: its ids read `{n}-{32 hex digits}!{n}-{section}` (the
/// shape of the ids in microsoft-graph-docs-contrib#9160, `1-d73a7c5528e444ed8e1a4d1dc3279557!20-…`),
/// the hex digits being the page's GUID as `onenote:` links write it [not documented: a link that
/// names another GUID stays unresolved, it never resolves to a wrong page]. `None` for another
/// shape.
pub fn guid_of_page_id(id: &str) -> Option<String> {
    let (_, rest) = id.split_once('-')?;
    let (hex, _) = rest.split_once('!')?;
    if hex.len() != 32 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    let h = hex.to_ascii_lowercase();
    Some(format!(
        "{{{}-{}-{}-{}-{}}}",
        &h[0..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..32]
    ))
}

/// Whether `href` is the generic `https://www.onenote.com/notebooks` that group and site notebooks'
/// pages can carry as both links (field report: microsoft-graph-docs-contrib#9160): it names no
/// page, so it is no page's link.
pub fn is_generic_link(href: &str) -> bool {
    let Ok(u) = url::Url::parse(href) else {
        return false;
    };
    u.host_str().is_some_and(|h| {
        h.eq_ignore_ascii_case("www.onenote.com") || h.eq_ignore_ascii_case("onenote.com")
    }) && u
        .path()
        .trim_end_matches('/')
        .eq_ignore_ascii_case("/notebooks")
        && u.query().is_none()
        && u.fragment().is_none()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// As recorded in `shared/recorded-answers/graph/onenote-error-and-edge-responses.json`
    /// (microsoft-graph-docs-contrib#9160, a field report).
    #[test]
    fn a_generic_page_link_is_no_page_link() {
        let generic = serde_json::json!({
            "id": "1-abc",
            "links": {
                "oneNoteClientUrl": {"href": "https://www.onenote.com/notebooks"},
                "oneNoteWebUrl": {"href": "https://www.onenote.com/notebooks"},
            }
        });
        let m: PageMeta = serde_json::from_value(generic).unwrap();
        assert_eq!(m.web_url(), None);
        assert_eq!(m.guid(), None, "an id of another shape gives no GUID");
        // The page id of the report: its GUID, as a link to it names it.
        let reported = serde_json::json!({
            "id": "1-d73a7c5528e444ed8e1a4d1dc3279557!20-0003e5c3-9487-435c-9f3d-ae2fb49897fe",
            "links": {"oneNoteClientUrl": {"href": "https://www.onenote.com/notebooks"}},
        });
        let m: PageMeta = serde_json::from_value(reported).unwrap();
        assert_eq!(
            m.guid().as_deref(),
            Some("{d73a7c55-28e4-44ed-8e1a-4d1dc3279557}")
        );
        assert_eq!(guid_of_page_id("1-abc!2-x"), None);
        let own = serde_json::json!({
            "id": "1-abc",
            "links": {
                "oneNoteWebUrl": {"href": "https://contoso.sharepoint.com/sites/x/_layouts/Doc.aspx?sourcedoc=%7B1%7D&wd=target%28S.one%7C2%2FP%29"},
            }
        });
        let m: PageMeta = serde_json::from_value(own).unwrap();
        assert!(m.web_url().is_some());
        assert!(is_generic_link("https://www.onenote.com/notebooks/"));
        assert!(!is_generic_link("https://www.onenote.com/notebooks?id=1"));
    }
}
