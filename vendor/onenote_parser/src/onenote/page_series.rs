use crate::errors::{ErrorKind, Result};
use crate::fsshttpb::data::cell_id::CellId;
use crate::fsshttpb::data::exguid::ExGuid;
use crate::one::property_set::page_series_node;
use crate::onenote::ParserContext;
use crate::onenote::page::{Page, PageMetadata, parse_page, parse_page_metadata};
use crate::onestore::OneStore;

/// A series of page.
///
/// See [\[MS-ONE\] 1.3.2] and [\[MS-ONE\] 2.2.18].
///
/// [\[MS-ONE\] 1.3.2]: https://docs.microsoft.com/en-us/openspecs/office_file_formats/ms-one/2dd687ac-f36b-4723-b959-4d60c8a90ca9
/// [\[MS-ONE\] 2.2.18]: https://docs.microsoft.com/en-us/openspecs/office_file_formats/ms-one/e2957d3b-a2a8-4756-8662-4e67fefa9f4e
#[derive(Clone, Debug)]
pub struct PageSeries {
    pages: Vec<Page>,
    damaged_pages: Vec<DamagedPage>,
}

impl PageSeries {
    /// The pages contained in this page series that could be read.
    pub fn pages(&self) -> &[Page] {
        &self.pages
    }

    /// The pages of this page series that could not be read, each with its position among all
    /// the series' pages. Each page is an object space of its own ([\[MS-ONESTORE\] 2.1.4]), so a
    /// damaged page leaves the others readable.
    ///
    /// [\[MS-ONESTORE\] 2.1.4]: https://learn.microsoft.com/en-us/openspecs/office_file_formats/ms-onestore/1329433f-02a5-4e83-ab41-80d57ade38d9
    pub fn damaged_pages(&self) -> &[DamagedPage] {
        &self.damaged_pages
    }
}

/// A page of a page series that could not be read.
#[derive(Clone, Debug)]
pub struct DamagedPage {
    position: usize,
    object_space: String,
    metadata: Option<Metadata>,
    reason: String,
}

/// What a damaged page's metadata still tells.
#[derive(Clone, Debug)]
struct Metadata {
    link_target_id: String,
    cached_title: Option<String>,
    level: i32,
}

impl From<PageMetadata> for Metadata {
    fn from(data: PageMetadata) -> Self {
        Metadata {
            link_target_id: data.entity_guid.to_string(),
            cached_title: data.cached_title,
            level: data.page_level,
        }
    }
}

impl DamagedPage {
    /// The page's position among all pages of its series (the readable ones included), from 0.
    pub fn position(&self) -> usize {
        self.position
    }

    /// The page's object space, as text: stable for as long as the page exists in its file.
    pub fn object_space(&self) -> &str {
        &self.object_space
    }

    /// The page's GUID (as [`Page::link_target_id`] gives it), when its metadata could be read.
    pub fn link_target_id(&self) -> Option<String> {
        self.metadata.as_ref().map(|m| m.link_target_id.clone())
    }

    /// The title OneNote cached in the page's metadata, when it could be read.
    pub fn cached_title(&self) -> Option<&str> {
        self.metadata.as_ref()?.cached_title.as_deref()
    }

    /// The page's level in the section page tree, when its metadata could be read.
    pub fn level(&self) -> Option<i32> {
        self.metadata.as_ref().map(|m| m.level)
    }

    /// Why the page could not be read.
    pub fn reason(&self) -> &str {
        &self.reason
    }
}

pub(crate) fn parse_page_series(
    id: ExGuid,
    store: &(impl OneStore + ?Sized),
    ctx: &mut ParserContext,
) -> Result<PageSeries> {
    let object = store
        .data_root()
        .get_object(id)
        .ok_or_else(|| ErrorKind::MalformedOneNoteData("page series object is missing".into()))?;
    let data = page_series_node::parse(object)?;

    let mut pages = Vec::new();
    let mut damaged_pages = Vec::new();
    for (position, page_space_id) in data.page_spaces.into_iter().enumerate() {
        ctx.node_reads = 0;
        let (reason, metadata) = match store.object_space(page_space_id) {
            Some(page_space) => match parse_page(page_space, ctx) {
                Ok(page) => {
                    pages.push(page);
                    continue;
                }
                Err(err) => {
                    // The page was left half-parsed: nothing of it may reach the next one.
                    ctx.page = None;
                    ctx.recognized_words.clear();
                    ctx.outline_depth = 0;
                    (
                        err.to_string(),
                        parse_page_metadata(page_space).ok().map(Metadata::from),
                    )
                }
            },
            None => (
                store
                    .object_space_damage(page_space_id)
                    .unwrap_or("page space is missing")
                    .to_owned(),
                None,
            ),
        };
        damaged_pages.push(DamagedPage {
            position,
            object_space: object_space_text(page_space_id),
            metadata,
            reason,
        });
    }

    Ok(PageSeries {
        pages,
        damaged_pages,
    })
}

fn object_space_text(id: CellId) -> String {
    format!(
        "{{{}}},{},{{{}}},{}",
        id.0.guid, id.0.value, id.1.guid, id.1.value
    )
}
