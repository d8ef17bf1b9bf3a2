//! Reading an account's whole OneNote hierarchy with as few requests as the API allows: one request
//! for every notebook with all its section groups and sections (`$expand` with `$levels=max`, falling
//! back to explicit recursion where the service refuses that), then one `$batch`ed listing per section
//! of up to 100 pages, following `@odata.nextLink` for bigger sections.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use super::batch::BatchGet;
use super::model;
use super::{Caller, GraphClient, GraphError, ServiceCode};
use crate::store::inventory::{Notebook, Page, Section, SectionGroup};
use crate::store::ways::NotebookUrls;

const PAGE_SIZE: usize = 100;
const ENTITY_FIELDS: &str = "id,displayName,createdDateTime,lastModifiedDateTime";
/// A notebook's fields: its web URL too, where its section files are found (`--via files`).
const NOTEBOOK_FIELDS: &str = "id,displayName,createdDateTime,lastModifiedDateTime,links";

/// Live figures for a progress display.
#[derive(Debug, Default)]
pub struct ScanProgress {
    /// Notebooks, groups, sections and pages found so far.
    pub items: AtomicU64,
    /// Sections whose pages are listed.
    pub sections_done: AtomicU64,
    /// Sections in all (known after the hierarchy request).
    pub sections_total: AtomicU64,
}

/// What a scan found, and what it could not read.
#[derive(Debug)]
pub struct ScanResult {
    /// The notebooks, in Graph's order, complete except for the failures.
    pub notebooks: Vec<Notebook>,
    /// Items whose contents could not be read (403/404, or gave up); they are in `notebooks` but
    /// what is under them is not.
    pub failures: Vec<ScanFailure>,
    /// Page id -> the GUID `onenote:` links use for it.
    pub page_guids: Vec<(String, String)>,
    /// Each notebook's links (where its section files are).
    pub notebook_urls: Vec<NotebookUrls>,
    /// What the person should know of what was read: containers Graph gave no name, read as
    /// untitled.
    pub notes: Vec<String>,
    /// Sections Graph listed empty. Graph has listed every section of some accounts empty while
    /// they held pages (microsoft-graph-explorer-v4#3935), so an empty listing proves nothing:
    /// `migrate` reads each of these from its section file ([`ListedEmpty`]).
    pub listed_empty: Vec<ListedEmpty>,
}

/// A section whose page listing was empty, which only its section file can confirm.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ListedEmpty {
    /// Its Graph id.
    pub id: String,
    /// Its kind, name and id, for messages.
    pub label: String,
    /// What Graph's listing of all pages by `parentSection` said of it.
    pub evidence: Evidence,
}

impl ScanResult {
    /// Adds the note that names the sections Graph listed empty (for `scan`, which reads no
    /// section file: the person learns the listing may be wrong and what `migrate` does).
    pub fn note_listed_empty(&mut self) {
        if self.listed_empty.is_empty() {
            return;
        }
        let named: Vec<String> = self
            .listed_empty
            .iter()
            .map(|l| match &l.evidence {
                Evidence::Empty => l.label.clone(),
                e => format!("{} ({e})", l.label),
            })
            .collect();
        self.notes.push(format!(
            "Graph listed no pages in {}; Graph lists some accounts' sections empty while they \
             hold pages, so `migrate` reads them from their section files: {}",
            plural(named.len(), "section"),
            named.join(", ")
        ));
    }
}

/// A container's name: Graph's, or, where Graph gave none (its `displayName` is `null` or
/// blank), `Untitled {kind}`, with a note naming it so the person can find it.
fn name_of(kind: &str, id: &str, name: Option<String>, notes: &mut Vec<String>) -> String {
    match name {
        Some(n) if !n.trim().is_empty() => n,
        _ => {
            let untitled = format!("Untitled {kind}");
            notes.push(format!(
                "Graph gave the {kind} {id} no name (its displayName is null); it is read as \
                 \"{untitled}\""
            ));
            untitled
        }
    }
}

/// A container whose contents could not be listed.
#[derive(Debug)]
pub struct ScanFailure {
    /// `notebook`, `section_group` or `section` (the job kinds).
    pub kind: &'static str,
    /// Its Graph id.
    pub id: String,
    /// Its kind, name and id, for messages.
    pub label: String,
    /// Why.
    pub error: GraphError,
    /// A section Graph listed empty whose section file could not confirm it: `migrate --resume
    /// --retry-failed` reads it again (other failures need a new scan).
    pub listed_empty: bool,
}

impl std::fmt::Display for ScanFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "could not read {}: {}", self.label, self.error)
    }
}

/// The OneNote root of the signed-in user's own notebooks.
pub const PERSONAL_ROOT: &str = "me/onenote";

/// Scans the notebooks of `who` (all, or those whose name or id is in `only`).
pub async fn scan(
    graph: &GraphClient,
    who: &Caller,
    only: &[String],
    progress: Arc<ScanProgress>,
) -> Result<ScanResult, GraphError> {
    scan_at(graph, who, PERSONAL_ROOT, only, progress).await
}

/// [`scan`] of the notebooks under a OneNote `root`: `me/onenote`, `groups/{id}/onenote` or
/// `sites/{id}/onenote` (the same API, the same budget: the signed-in user's).
pub async fn scan_at(
    graph: &GraphClient,
    who: &Caller,
    root: &str,
    only: &[String],
    progress: Arc<ScanProgress>,
) -> Result<ScanResult, GraphError> {
    let notebooks = hierarchy(graph, who, root).await?;
    let selected: Vec<model::Notebook> = notebooks
        .into_iter()
        .filter(|n| {
            only.is_empty()
                || only
                    .iter()
                    .any(|o| o == &n.id || n.display_name.as_deref() == Some(o.as_str()))
        })
        .collect();
    let mut failures = Vec::new();
    let mut notes = Vec::new();
    let mut out = Vec::new();
    let notebook_urls = selected
        .iter()
        .filter_map(|n| {
            let links = n.links.as_ref()?;
            let href = |h: &Option<model::Href>| h.as_ref().and_then(|h| h.href.clone());
            Some(NotebookUrls {
                id: n.id.clone(),
                client_url: href(&links.one_note_client_url),
                web_url: href(&links.one_note_web_url),
            })
        })
        .collect();
    for nb in selected {
        progress.items.fetch_add(1, Ordering::Relaxed);
        let name = name_of("notebook", &nb.id, nb.display_name.clone(), &mut notes);
        let mut tree = Notebook {
            id: nb.id.clone(),
            name: name.clone(),
            created: nb.created_date_time.clone(),
            last_modified: nb.last_modified_date_time.clone(),
            section_groups: Vec::new(),
            sections: Vec::new(),
        };
        let (groups, sections) = match (nb.section_groups, nb.sections) {
            (Some(g), Some(s)) => (g, s),
            // The service did not expand: ask for the containers one level at a time.
            _ => {
                let item = format!("notebook {name:?} ({})", nb.id);
                let path = format!("{root}/notebooks/{}", nb.id);
                children_or_failure(graph, who, &path, ("notebook", &nb.id, item), &mut failures)
                    .await?
            }
        };
        let mut found = Found {
            failures: &mut failures,
            notes: &mut notes,
        };
        tree.section_groups =
            convert_groups(graph, who, root, groups, &progress, &mut found).await?;
        tree.sections = sections
            .into_iter()
            .map(|s| convert_section(s, found.notes))
            .collect();
        progress
            .items
            .fetch_add(tree.sections.len() as u64, Ordering::Relaxed);
        out.push(tree);
    }
    // Count sections, then list their pages in batches.
    let mut all_sections: Vec<&mut Section> = Vec::new();
    for nb in out.iter_mut() {
        collect_sections(&mut nb.section_groups, &mut nb.sections, &mut all_sections);
    }
    progress
        .sections_total
        .store(all_sections.len() as u64, Ordering::Relaxed);
    let (page_guids, listed_empty) = list_pages(
        graph,
        who,
        root,
        &mut all_sections,
        &progress,
        (&mut failures, &mut notes),
    )
    .await?;
    Ok(ScanResult {
        notebooks: out,
        failures,
        page_guids,
        notebook_urls,
        notes,
        listed_empty,
    })
}

/// What a scan collects besides the tree: what it could not read, and what the person should know.
struct Found<'a> {
    failures: &'a mut Vec<ScanFailure>,
    notes: &'a mut Vec<String>,
}

/// All notebooks, with their section groups (any depth) and sections when the service expands them.
async fn hierarchy(
    graph: &GraphClient,
    who: &Caller,
    root: &str,
) -> Result<Vec<model::Notebook>, GraphError> {
    let full = format!(
        "{root}/notebooks?$select={NOTEBOOK_FIELDS}&$expand=sections($select={ENTITY_FIELDS}),\
         sectionGroups($levels=max;$select={ENTITY_FIELDS};$expand=sections($select={ENTITY_FIELDS}))"
    );
    match graph.get_all(who, &full, 0, "the notebook list").await {
        Ok(n) => Ok(n),
        // Refused (400), or too heavy for the service (5xx, timeouts): level by level is lighter.
        Err(e @ (GraphError::Item { status: 400, .. } | GraphError::GaveUp { .. })) => {
            tracing::info!("the one-shot hierarchy failed ({e}); walking it level by level");
            graph
                .get_all(
                    who,
                    &format!("{root}/notebooks?$select={NOTEBOOK_FIELDS}"),
                    0,
                    "the notebook list",
                )
                .await
        }
        Err(e) => Err(e),
    }
}

type Containers = (Vec<model::SectionGroup>, Vec<model::Section>);

/// The section groups and sections directly inside a notebook or group (`path` names it).
async fn children(
    graph: &GraphClient,
    who: &Caller,
    path: &str,
    item: &str,
) -> Result<Containers, GraphError> {
    let groups = graph
        .get_all(
            who,
            &format!("{path}/sectionGroups?$select={ENTITY_FIELDS}"),
            0,
            item,
        )
        .await?;
    let sections = graph
        .get_all(
            who,
            &format!("{path}/sections?$select={ENTITY_FIELDS}"),
            0,
            item,
        )
        .await?;
    Ok((groups, sections))
}

/// The containers under `path`; when only this item cannot be read, the failure is recorded and the
/// scan goes on with nothing under it.
async fn children_or_failure(
    graph: &GraphClient,
    who: &Caller,
    path: &str,
    (kind, id, label): (&'static str, &str, String),
    failures: &mut Vec<ScanFailure>,
) -> Result<Containers, GraphError> {
    match children(graph, who, path, &label).await {
        Ok(c) => Ok(c),
        Err(error) if error.is_item_failure() => {
            failures.push(ScanFailure {
                kind,
                id: id.to_owned(),
                label,
                error,
                listed_empty: false,
            });
            Ok((Vec::new(), Vec::new()))
        }
        Err(e) => Err(e),
    }
}

fn convert_groups<'a>(
    graph: &'a GraphClient,
    who: &'a Caller,
    root: &'a str,
    groups: Vec<model::SectionGroup>,
    progress: &'a ScanProgress,
    found: &'a mut Found<'_>,
) -> futures::future::BoxFuture<'a, Result<Vec<SectionGroup>, GraphError>> {
    Box::pin(async move {
        let mut out = Vec::new();
        for g in groups {
            progress.items.fetch_add(1, Ordering::Relaxed);
            let name = name_of("section group", &g.id, g.display_name, found.notes);
            let (kids, sections) = match (g.section_groups, g.sections) {
                (Some(k), Some(s)) => (k, s),
                _ => {
                    let item = format!("section group {name:?} ({})", g.id);
                    let path = format!("{root}/sectionGroups/{}", g.id);
                    let what = ("section_group", g.id.as_str(), item);
                    children_or_failure(graph, who, &path, what, found.failures).await?
                }
            };
            progress
                .items
                .fetch_add(sections.len() as u64, Ordering::Relaxed);
            let section_groups = convert_groups(graph, who, root, kids, progress, found).await?;
            out.push(SectionGroup {
                id: g.id,
                name,
                created: g.created_date_time,
                last_modified: g.last_modified_date_time,
                section_groups,
                sections: sections
                    .into_iter()
                    .map(|s| convert_section(s, found.notes))
                    .collect(),
            });
        }
        Ok(out)
    })
}

fn convert_section(s: model::Section, notes: &mut Vec<String>) -> Section {
    Section {
        name: name_of("section", &s.id, s.display_name, notes),
        id: s.id,
        created: s.created_date_time,
        last_modified: s.last_modified_date_time,
        pages: Vec::new(),
    }
}

fn collect_sections<'a>(
    groups: &'a mut [SectionGroup],
    sections: &'a mut [Section],
    out: &mut Vec<&'a mut Section>,
) {
    out.extend(sections.iter_mut());
    for g in groups.iter_mut() {
        collect_sections(&mut g.section_groups, &mut g.sections, out);
    }
}

/// Lists the pages of every section: the first slice of each listing through `$batch`, further
/// slices (sections over 100 pages) one by one. Listings ask for OneNote's order (`$orderby=order`:
/// the default, newest first, moves a page edited meanwhile across the `$skip` slices) and their
/// size (`$count`); a listing that is inconsistent anyway (a page seen twice, fewer pages than
/// counted, a page without its order) is read again, so no page silently drops out.
async fn list_pages(
    graph: &GraphClient,
    who: &Caller,
    root: &str,
    sections: &mut [&mut Section],
    progress: &ScanProgress,
    (failures, notes): (&mut Vec<ScanFailure>, &mut Vec<String>),
) -> Result<(Vec<(String, String)>, Vec<ListedEmpty>), GraphError> {
    let mut guids = Vec::new();
    let gets: Vec<BatchGet> = sections
        .iter()
        .map(|s| BatchGet {
            url: listing_url(root, &s.id, SLICES[0], Shape::Full),
            item: format!("section {:?} ({})", s.name, s.id),
        })
        .collect();
    let results = graph.batch_get_stepping(who, &gets).await?;
    let (mut uncounted, mut fallback, mut empty) = (Vec::new(), Vec::new(), Vec::new());
    for ((section, get), result) in sections.iter_mut().zip(&gets).zip(results) {
        let first = result.and_then(|b| listing_slice(who, get, &b));
        let at = (root, section.id.as_str(), get.item.as_str());
        let metas = match list_section(graph, who, at, first).await {
            Ok((m, how)) => {
                match how {
                    Read::Counted => {}
                    Read::Uncounted => uncounted.push(get.item.clone()),
                    Read::Fallback => fallback.push(get.item.clone()),
                }
                m
            }
            Err(error) if error.is_item_failure() => {
                failures.push(ScanFailure {
                    kind: "section",
                    id: section.id.clone(),
                    label: get.item.clone(),
                    error,
                    listed_empty: false,
                });
                continue;
            }
            Err(e) => return Err(e),
        };
        if metas.is_empty() {
            empty.push((section.id.clone(), get.item.clone()));
        }
        guids.extend(metas.iter().filter_map(|m| Some((m.id.clone(), m.guid()?))));
        let mut pages: Vec<Page> = metas
            .into_iter()
            .enumerate()
            .map(|(i, m)| Page {
                web_url: m.web_url(),
                id: m.id,
                title: m.title.unwrap_or_default(),
                level: m.level.unwrap_or(0),
                order: m.order.unwrap_or(i as i64),
                last_modified: m.last_modified_date_time,
                created: m.created_date_time,
                content_url: m.content_url,
                // Graph's page resource names no person (`createdByAppId` is the app that made it).
                author: None,
            })
            .collect();
        // Asked in OneNote's order already; sorting again costs nothing and keeps it whatever the
        // service did.
        pages.sort_by_key(|p| p.order);
        progress
            .items
            .fetch_add(pages.len() as u64, Ordering::Relaxed);
        progress.sections_done.fetch_add(1, Ordering::Relaxed);
        section.pages = pages;
    }
    if !uncounted.is_empty() {
        notes.push(format!(
            "Graph gave no page count for {} (@odata.count left out); their listings were read to \
             their end instead of checked against a count: {}",
            plural(uncounted.len(), "section"),
            uncounted.join(", ")
        ));
    }
    // Graph has listed every section of some accounts empty while they held pages
    // (microsoft-graph-explorer-v4#3935): each section listed empty is asked about once more, in a
    // differently shaped listing, whose answer is kept as evidence; only its file can confirm it.
    let evidence = if empty.is_empty() {
        Vec::new()
    } else {
        pages_by_parent_section(graph, who, root, &empty).await?
    };
    let listed_empty = empty
        .into_iter()
        .zip(evidence)
        .map(|((id, label), evidence)| ListedEmpty {
            id,
            label,
            evidence,
        })
        .collect();
    if !fallback.is_empty() {
        notes.push(format!(
            "OneNote refused the page listing with its count and links for {}; they were listed \
             without them (no page count to check against, no OneNote link per page): {}",
            plural(fallback.len(), "section"),
            fallback.join(", ")
        ));
    }
    Ok((guids, listed_empty))
}

/// What a second listing says of a section listed empty.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Evidence {
    /// It lists pages in it: at least this many (it asks for two).
    Pages(usize),
    /// It agrees: no page.
    Empty,
    /// It could not be asked (refused, or failed): why.
    None(String),
}

impl std::fmt::Display for Evidence {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Evidence::Pages(n) => write!(
                f,
                "Graph's pages filtered by parentSection/id list {} in it",
                if *n > 1 { "pages" } else { "a page" }
            ),
            Evidence::Empty => f.write_str("Graph's pages filtered by parentSection/id list none"),
            Evidence::None(why) => f.write_str(why),
        }
    }
}

/// Asks Graph's listing of all pages, for each section of `empty` (its id and label), for those
/// whose `parentSection` is that section: one request per section, `$batch`ed, each through the
/// limiter. `../pages[?filter,...]` is documented (onenote-get-content), and so is its default
/// expansion of `parentSection`; filtering on `parentSection/id` is what exporters in the field
/// send. Microsoft documents this listing failing (20266) on accounts with many sections: a refusal
/// or failure of one of these requests is no evidence, never the section's failure.
async fn pages_by_parent_section(
    graph: &GraphClient,
    who: &Caller,
    root: &str,
    empty: &[(String, String)],
) -> Result<Vec<Evidence>, GraphError> {
    let gets: Vec<BatchGet> = empty
        .iter()
        .map(|(id, item)| {
            let filter = format!("parentSection/id eq '{}'", id.replace('\'', "''"));
            let filter: String = url::form_urlencoded::byte_serialize(filter.as_bytes()).collect();
            BatchGet {
                url: format!("{root}/pages?$filter={filter}&$select=id&$top=2"),
                item: item.clone(),
            }
        })
        .collect();
    let results = graph.batch_get(who, &gets).await?;
    let mut out = Vec::with_capacity(results.len());
    for (get, result) in gets.iter().zip(results) {
        let listing = result.and_then(|b| listing_slice(who, get, &b));
        out.push(match listing {
            Ok(p) if p.value.is_empty() => Evidence::Empty,
            Ok(p) => Evidence::Pages(p.value.len()),
            Err(e) if e.is_item_failure() => {
                tracing::info!(item = get.item, "the listing by parentSection failed ({e})");
                Evidence::None("Graph's listing of its pages by parentSection failed too".into())
            }
            Err(e) => return Err(e),
        });
    }
    Ok(out)
}

/// A page listing's slice from a `$batch`ed answer's body.
fn listing_slice(
    who: &Caller,
    get: &BatchGet,
    body: &[u8],
) -> Result<model::Page<model::PageMeta>, GraphError> {
    serde_json::from_slice(body).map_err(|e| GraphError::BadAnswer {
        account: who.account.clone(),
        item: get.item.clone(),
        problem: e.to_string(),
    })
}

fn plural(n: usize, what: &str) -> String {
    if n == 1 {
        format!("1 {what}")
    } else {
        format!("{n} {what}s")
    }
}

/// How a section's pages were known to be all there.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Read {
    /// Checked against the size Graph counted.
    Counted,
    /// Graph counted nothing: read to the listing's end.
    Uncounted,
    /// In the fallback shape, which asks no count: read to the listing's end.
    Fallback,
}

/// Slice sizes a listing tries, biggest first: big sections time out (504) on heavy listings.
const SLICES: [usize; 4] = [PAGE_SIZE, 50, 25, 10];
/// Listings of one section before an inconsistent one is given up on.
const MAX_LISTINGS: usize = 3;
/// The page fields the inventory uses, and only those (lighter listings time out less).
const PAGE_FIELDS: &str =
    "id,title,createdDateTime,lastModifiedDateTime,contentUrl,level,order,links";

/// The page fields of the listing known to work in the field (obsidian-importer's query): no
/// `links`, which some accounts' listings refuse.
const FALLBACK_PAGE_FIELDS: &str =
    "id,title,createdDateTime,lastModifiedDateTime,level,order,contentUrl";

/// The query a page listing asks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Shape {
    /// With its size (`$count`) and the pages' `links` (their GUIDs and web addresses).
    Full,
    /// The shape known to work in the field, for a listing OneNote refused (400) in the full one:
    /// `$select=id,title,createdDateTime,lastModifiedDateTime,level,order,contentUrl&$orderby=order
    /// &pagelevel=true&$top=100&$skip=n` (obsidian-importer's, a field report).
    Fallback,
}

fn listing_url(root: &str, section: &str, top: usize, shape: Shape) -> String {
    match shape {
        Shape::Full => format!(
            "{root}/sections/{section}/pages?pagelevel=true&$orderby=order&$count=true\
             &$select={PAGE_FIELDS}&$top={top}"
        ),
        Shape::Fallback => format!(
            "{root}/sections/{section}/pages?$select={FALLBACK_PAGE_FIELDS}&$orderby=order\
             &pagelevel=true&$top={top}"
        ),
    }
}

/// One complete listing of a section: its pages and the size the service counted.
struct Listing {
    metas: Vec<model::PageMeta>,
    counted: Option<u64>,
}

impl Listing {
    /// Why the listing cannot be trusted, if it cannot.
    fn inconsistency(&self) -> Option<String> {
        let mut seen = std::collections::HashSet::new();
        if let Some(m) = self.metas.iter().find(|m| !seen.insert(m.id.as_str())) {
            return Some(format!("page {} was listed twice", m.id));
        }
        if let Some(n) = self.counted.filter(|n| (seen.len() as u64) < *n) {
            return Some(format!("{} pages listed of {n} counted", seen.len()));
        }
        if let Some(m) = self.metas.iter().find(|m| m.order.is_none()) {
            return Some(format!("page {} was listed without its order", m.id));
        }
        None
    }
}

/// The pages of one section, from `first` (the batched first slice) on; timeouts step down to
/// smaller slices, inconsistent listings are read again.
async fn list_section(
    graph: &GraphClient,
    who: &Caller,
    (root, section, item): (&str, &str, &str),
    first: Result<model::Page<model::PageMeta>, GraphError>,
) -> Result<(Vec<model::PageMeta>, Read), GraphError> {
    let mut first = Some(first);
    let mut slice = 0;
    let mut shape = Shape::Full;
    let mut union: Vec<model::PageMeta> = Vec::new();
    let mut most_counted = 0u64;
    let mut last_problem = String::new();
    for _ in 0..MAX_LISTINGS {
        let listing = loop {
            let at = (root, section, item, shape);
            let attempt = match first.take() {
                Some(f) => complete(graph, who, at, f, SLICES[slice]).await,
                None => {
                    let url = listing_url(root, section, SLICES[slice], shape);
                    let f = graph.get_json_stepping(who, &url, item).await;
                    complete(graph, who, at, f, SLICES[slice]).await
                }
            };
            match attempt {
                // Refused as asked, with a reason (a bare 400 was asked again, and is its own
                // failure): the shape known to work.
                Err(GraphError::Item {
                    status: 400,
                    code: ServiceCode::Other,
                    ..
                }) if shape == Shape::Full => {
                    shape = Shape::Fallback;
                    tracing::info!(
                        item,
                        "the page listing was refused; asking in the shape known to work"
                    );
                }
                Err(e) if e.is_timeout() && slice + 1 < SLICES.len() => {
                    slice += 1;
                    tracing::info!(
                        item,
                        top = SLICES[slice],
                        "the listing timed out; asking in smaller slices"
                    );
                }
                other => break other?,
            }
        };
        most_counted = most_counted.max(listing.counted.unwrap_or(0));
        let Some(problem) = listing.inconsistency() else {
            let how = match (shape, listing.counted) {
                (Shape::Fallback, _) => Read::Fallback,
                (Shape::Full, Some(_)) => Read::Counted,
                (Shape::Full, None) => Read::Uncounted,
            };
            return Ok((listing.metas, how));
        };
        tracing::info!(
            item,
            "the page listing was inconsistent ({problem}); listing again"
        );
        last_problem = problem;
        for m in listing.metas {
            match union.iter_mut().find(|u| u.id == m.id) {
                Some(u) => *u = m,
                None => union.push(m),
            }
        }
    }
    // No listing was consistent on its own; what they found together may still be whole.
    if union.len() as u64 >= most_counted && union.iter().all(|m| m.order.is_some()) {
        let how = match (shape, most_counted) {
            (Shape::Fallback, _) => Read::Fallback,
            (Shape::Full, 0) => Read::Uncounted,
            (Shape::Full, _) => Read::Counted,
        };
        return Ok((union, how));
    }
    Err(GraphError::BadAnswer {
        account: who.account.clone(),
        item: item.to_owned(),
        problem: format!(
            "the page listing stayed inconsistent after {MAX_LISTINGS} listings ({last_problem})"
        ),
    })
}

/// Reads the rest of a listing whose first slice is `first`: `@odata.nextLink`, or `$skip` when a
/// full slice came without one (reported to happen on OneNote).
async fn complete(
    graph: &GraphClient,
    who: &Caller,
    (root, section, item, shape): (&str, &str, &str, Shape),
    first: Result<model::Page<model::PageMeta>, GraphError>,
    top: usize,
) -> Result<Listing, GraphError> {
    let first = first?;
    let counted = first.count;
    let mut full = first.value.len() >= top;
    let mut metas = first.value;
    let mut next = first.next_link;
    loop {
        let url = match next.take() {
            Some(l) => l,
            None if full => super::with_skip(
                &graph.url(&listing_url(root, section, top, shape)),
                metas.len(),
            ),
            None => break,
        };
        let page: model::Page<model::PageMeta> = graph.get_json_stepping(who, &url, item).await?;
        let n = page.value.len();
        metas.extend(page.value);
        next = page.next_link;
        full = n >= top;
        if n == 0 {
            break;
        }
    }
    Ok(Listing { metas, counted })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(id: &str, order: Option<i64>) -> model::PageMeta {
        serde_json::from_value(serde_json::json!({"id": id, "order": order})).unwrap()
    }

    #[test]
    fn inconsistent_listings_are_recognised() {
        let ok = Listing {
            metas: vec![meta("a", Some(0)), meta("b", Some(1))],
            counted: Some(2),
        };
        assert_eq!(ok.inconsistency(), None);
        let twice = Listing {
            metas: vec![meta("a", Some(0)), meta("a", Some(0))],
            counted: Some(2),
        };
        assert!(twice.inconsistency().unwrap().contains("twice"));
        let short = Listing {
            metas: vec![meta("a", Some(0))],
            counted: Some(2),
        };
        assert!(short
            .inconsistency()
            .unwrap()
            .contains("1 pages listed of 2"));
        let unordered = Listing {
            metas: vec![meta("a", None)],
            counted: None,
        };
        assert!(unordered.inconsistency().unwrap().contains("order"));
    }
}
