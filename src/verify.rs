//! `verify`: proof of completeness. Re-reads the migrated tree from Notion and reconciles it with the
//! OneNote inventory, the job queue and the Notion records, per notebook and section.
//!
//! Notion is read with one children listing per migrated page (which gives both the child pages under
//! it and its top-level body blocks) plus one per plan target; nested body blocks are only listed
//! when the top-level count alone cannot prove the body complete. Every request goes through the
//! client's pacing.

use std::cell::RefCell;
use std::collections::{HashMap, HashSet, VecDeque};

use futures::stream::{self, StreamExt};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::notion::client::{NotionClient, NotionError};
use crate::notion::split;
use crate::notion::writer::display_title;
use crate::store::inventory::{Notebook, Section, SectionGroup};
use crate::store::notion_items::{BodyState, NotionItem};
use crate::store::{Db, StoreError};

/// How many Notion listings may be in flight at once (the client's pacing still rules the rate).
const CONCURRENT_LISTINGS: usize = 4;

/// Errors that stop a verification (a single unreadable page does not: it is reported instead).
#[derive(Debug, thiserror::Error)]
pub enum VerifyError {
    /// The state database failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// Notion failed in a way that says nothing about the page (transport, 5xx, rate limits beyond
    /// the retry budget): the run stops rather than report pages missing that may well be there.
    #[error("verifying account {account}: {source}")]
    Notion {
        /// The account being verified.
        account: String,
        /// Notion's error.
        source: NotionError,
    },
}

/// The verdict on one planned item (a page, or a notebook, section group or section page).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ItemState {
    /// In Notion exactly once, and (for pages) its body is complete.
    Ok,
    /// In Notion, but more than once.
    Duplicated,
    /// In Notion once, but the body is unfinished or the creation was never confirmed.
    Partial,
    /// Planned and done (or never recorded) but not in Notion.
    Missing,
    /// Its job failed permanently.
    Failed,
    /// Not migrated because an ancestor's job failed.
    Blocked,
    /// Its job has not run yet (queued, or in flight).
    Pending,
    /// In the inventory but never planned (not selected, or added after planning): not counted.
    NotPlanned,
}

impl ItemState {
    /// Whether this state satisfies "present exactly once and complete" (unplanned items do).
    pub fn is_good(self) -> bool {
        matches!(self, ItemState::Ok | ItemState::NotPlanned)
    }

    /// The word used in the human report.
    pub fn label(self) -> &'static str {
        match self {
            ItemState::Ok => "ok",
            ItemState::Duplicated => "duplicated",
            ItemState::Partial => "partial",
            ItemState::Missing => "missing",
            ItemState::Failed => "failed",
            ItemState::Blocked => "blocked",
            ItemState::Pending => "pending",
            ItemState::NotPlanned => "not planned",
        }
    }
}

/// One approximation the converter made on a page (as stored with the page).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Approximation {
    /// The source element or feature.
    pub element: String,
    /// How many times.
    pub count: usize,
    /// What was done instead.
    pub action: String,
}

/// What verify found for one planned item.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ItemCheck {
    /// The verdict.
    pub state: ItemState,
    /// The Notion page found (or recorded, when it was not found).
    pub notion_page_id: Option<String>,
    /// Further Notion child pages that are copies of this one.
    pub duplicates: Vec<String>,
    /// Why it is not `ok`, in words.
    pub reason: Option<String>,
}

/// A notebook or section group page.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ContainerReport {
    /// `notebook` or `section_group`.
    pub kind: &'static str,
    /// OneNote id.
    pub id: String,
    /// Names from the notebook down to this item.
    pub path: Vec<String>,
    /// The check.
    #[serde(flatten)]
    pub check: ItemCheck,
}

/// One OneNote page.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PageReport {
    /// OneNote id.
    pub id: String,
    /// OneNote title.
    pub title: String,
    /// Subpage level (0..2).
    pub level: i64,
    /// The check.
    #[serde(flatten)]
    pub check: ItemCheck,
    /// Body blocks recorded when the page was written (any depth).
    pub blocks_recorded: Option<i64>,
    /// Body blocks counted in Notion (a lower bound: counting stops once it reaches the record).
    pub blocks_found: Option<i64>,
    /// What the converter could only approximate on this page.
    pub approximations: Vec<Approximation>,
}

/// Counts of one section (or totals of an account).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Counts {
    /// Pages in the OneNote inventory.
    pub onenote_pages: usize,
    /// Of those, pages that were planned.
    pub planned: usize,
    /// Planned pages found in Notion (once or more).
    pub in_notion: usize,
    /// Planned pages in Notion exactly once and complete.
    pub ok: usize,
    /// Planned pages not in Notion (missing, failed, blocked or pending).
    pub missing: usize,
    /// Extra Notion pages: copies of planned pages.
    pub duplicates: usize,
    /// Child pages notebridge did not create (reported, not counted against the verdict).
    pub foreign: usize,
    /// Planned pages in Notion whose body is incomplete.
    pub partial: usize,
    /// Pages whose job failed permanently.
    pub failed: usize,
    /// Pages waiting on a failed ancestor.
    pub blocked: usize,
    /// Pages whose job has not run yet.
    pub pending: usize,
    /// Pages never planned.
    pub not_planned: usize,
    /// Pages with at least one approximation.
    pub approximated_pages: usize,
}

impl Counts {
    /// Adds `o` to these counts.
    pub fn add(&mut self, o: &Counts) {
        self.onenote_pages += o.onenote_pages;
        self.planned += o.planned;
        self.in_notion += o.in_notion;
        self.ok += o.ok;
        self.missing += o.missing;
        self.duplicates += o.duplicates;
        self.foreign += o.foreign;
        self.partial += o.partial;
        self.failed += o.failed;
        self.blocked += o.blocked;
        self.pending += o.pending;
        self.not_planned += o.not_planned;
        self.approximated_pages += o.approximated_pages;
    }
}

/// A Notion child page notebridge did not create, under one of its pages.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ForeignPage {
    /// The Notion page.
    pub notion_page_id: String,
    /// Its title.
    pub title: String,
    /// Names of the item it sits under.
    pub under: Vec<String>,
}

/// One section.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SectionReport {
    /// OneNote id.
    pub id: String,
    /// Names from the notebook down to the section.
    pub path: Vec<String>,
    /// The section page itself.
    pub section_page: ItemCheck,
    /// Counts over its pages.
    pub counts: Counts,
    /// Every page, in OneNote order.
    pub pages: Vec<PageReport>,
    /// Child pages notebridge did not create under the section or its pages.
    pub foreign: Vec<ForeignPage>,
}

/// One account.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct AccountReport {
    /// The account name.
    pub account: String,
    /// The Notion pages its plans write under.
    pub targets: Vec<String>,
    /// Whether anything was planned at all.
    pub planned_anything: bool,
    /// Totals over every section.
    pub totals: Counts,
    /// Notebook and section group pages, in OneNote order.
    pub containers: Vec<ContainerReport>,
    /// Every section, in OneNote order.
    pub sections: Vec<SectionReport>,
    /// Child pages notebridge did not create directly under notebook or section group pages.
    pub foreign: Vec<ForeignPage>,
}

impl AccountReport {
    /// Every planned page present exactly once and complete, and every planned container too.
    pub fn complete(&self) -> bool {
        self.containers.iter().all(|c| c.check.state.is_good())
            && self.sections.iter().all(|s| {
                s.section_page.state.is_good() && s.pages.iter().all(|p| p.check.state.is_good())
            })
    }
}

/// The whole report (`verify --json` prints it as one document).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct VerifyReport {
    /// `complete` or `incomplete`.
    pub verdict: &'static str,
    /// Per account.
    pub accounts: Vec<AccountReport>,
    /// Notion requests this verification made.
    pub notion_requests: u64,
}

impl VerifyReport {
    /// Whether every account is complete.
    pub fn complete(&self) -> bool {
        self.accounts.iter().all(AccountReport::complete)
    }
}

/// Verifies `accounts` against Notion through `client`.
pub async fn verify(
    db: &Db,
    client: &NotionClient,
    accounts: &[String],
) -> Result<VerifyReport, VerifyError> {
    let before = client.counts().requests;
    let mut reader = Reader {
        client,
        listings: HashMap::new(),
    };
    let mut reports = Vec::new();
    for account in accounts {
        reports.push(verify_account(db, &mut reader, account).await?);
    }
    let mut report = VerifyReport {
        verdict: "incomplete",
        accounts: reports,
        notion_requests: client.counts().requests - before,
    };
    if report.complete() {
        report.verdict = "complete";
    }
    Ok(report)
}

/// A children listing, or why it could not be read (a 404 or refusal is a finding, not a failure).
type Listing = Result<Vec<Value>, String>;

struct Reader<'a> {
    client: &'a NotionClient,
    /// By normalised id; shared across accounts (they may share a target).
    listings: HashMap<String, Listing>,
}

impl Reader<'_> {
    /// Lists every id not listed yet, a few at a time.
    async fn fetch(&mut self, ids: Vec<String>, account: &str) -> Result<(), VerifyError> {
        let todo: Vec<String> = {
            let mut seen = HashSet::new();
            ids.into_iter()
                .filter(|id| !self.listings.contains_key(&norm(id)) && seen.insert(norm(id)))
                .collect()
        };
        let client = self.client;
        let results: Vec<(String, Result<Vec<Value>, NotionError>)> = stream::iter(todo)
            .map(|id| async move {
                let r = client.children(&id).await;
                (id, r)
            })
            .buffer_unordered(CONCURRENT_LISTINGS)
            .collect()
            .await;
        for (id, r) in results {
            let listing = match r {
                Ok(v) => Ok(v),
                Err(e @ (NotionError::NoAccess { .. } | NotionError::Rejected { .. })) => {
                    Err(e.to_string())
                }
                Err(source) => {
                    return Err(VerifyError::Notion {
                        account: account.to_owned(),
                        source,
                    })
                }
            };
            self.listings.insert(norm(&id), listing);
        }
        Ok(())
    }

    fn listing(&self, id: &str) -> Option<&Listing> {
        self.listings.get(&norm(id))
    }

    /// Counts body blocks under `page` at any depth, stopping once `enough` is reached: the top
    /// level comes from the listing already made; nested levels cost one listing per parent block.
    async fn count_body(
        &self,
        page: &str,
        account: &str,
    ) -> Result<Result<(i64, String), String>, VerifyError> {
        let top = match self.listing(page) {
            Some(Ok(v)) => v.clone(),
            Some(Err(e)) => return Ok(Err(e.clone())),
            None => return Ok(Err(format!("page {page} was not listed"))),
        };
        // Every block is visited, level by level, as `notion::split::shape` does for what was
        // written: a body written twice, or a lost block hidden by a stray one, must not pass.
        let mut count = 0i64;
        let mut counts = Vec::new();
        let mut queue: VecDeque<Option<String>> = VecDeque::new();
        take_body(&top, &mut count, &mut counts, &mut queue);
        while let Some(next) = queue.pop_front() {
            let Some(id) = next else {
                counts.push(0);
                continue;
            };
            match self.client.children(&id).await {
                Ok(kids) => take_body(&kids, &mut count, &mut counts, &mut queue),
                Err(e @ (NotionError::NoAccess { .. } | NotionError::Rejected { .. })) => {
                    return Ok(Err(e.to_string()))
                }
                Err(source) => {
                    return Err(VerifyError::Notion {
                        account: account.to_owned(),
                        source,
                    })
                }
            }
        }
        Ok(Ok((count, split::shape_of_counts(&counts))))
    }
}

/// Counts the body blocks of one listing, notes how many there are (the shape), and queues each in
/// order: its id when it has children to list, `None` when it has none.
fn take_body(
    blocks: &[Value],
    count: &mut i64,
    counts: &mut Vec<usize>,
    queue: &mut VecDeque<Option<String>>,
) {
    let body: Vec<&Value> = blocks.iter().filter(|b| is_body_block(b)).collect();
    counts.push(body.len());
    for b in body {
        *count += 1;
        let id = b["id"].as_str().map(str::to_owned);
        queue.push_back(id.filter(|_| b["has_children"].as_bool() == Some(true)));
    }
}

fn is_body_block(b: &Value) -> bool {
    !trashed(b) && !matches!(b["type"].as_str(), Some("child_page" | "child_database"))
}

fn trashed(b: &Value) -> bool {
    b["in_trash"].as_bool() == Some(true) || b["archived"].as_bool() == Some(true)
}

/// Visible child pages in a listing: (id, title).
fn child_pages(listing: &[Value]) -> Vec<(String, String)> {
    listing
        .iter()
        .filter(|b| b["type"] == "child_page" && !trashed(b))
        .filter_map(|b| {
            Some((
                b["id"].as_str()?.to_owned(),
                b["child_page"]["title"].as_str().unwrap_or("").to_owned(),
            ))
        })
        .collect()
}

/// Notion ids compare without dashes and case (the API accepts and returns both forms).
fn norm(id: &str) -> String {
    id.replace('-', "").to_ascii_lowercase()
}

/// One job as verify needs it.
#[derive(Clone, Debug)]
struct JobRow {
    id: i64,
    kind: String,
    item_id: String,
    state: String,
    last_error: Option<String>,
    parent_job: Option<i64>,
}

/// The account's jobs and plan targets.
fn read_jobs(db: &Db, account: &str) -> Result<(Vec<JobRow>, Vec<String>), StoreError> {
    db.read("reading the job queue for verify", |c| {
        let mut st = c.prepare(
            "SELECT id, kind, item_id, state, last_error, parent_job FROM jobs
             WHERE account = ?1 AND kind != 'links' ORDER BY seq",
        )?;
        let jobs = st
            .query_map([account], |r| {
                Ok(JobRow {
                    id: r.get(0)?,
                    kind: r.get(1)?,
                    item_id: r.get(2)?,
                    state: r.get(3)?,
                    last_error: r.get(4)?,
                    parent_job: r.get(5)?,
                })
            })?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        let mut st = c.prepare(
            "SELECT target_page_id FROM plans WHERE account = ?1 GROUP BY target_page_id
             ORDER BY MIN(id)",
        )?;
        let targets = st
            .query_map([account], |r| r.get(0))?
            .collect::<rusqlite::Result<Vec<String>>>()?;
        Ok((jobs, targets))
    })
}

/// The inventory flattened: containers and sections with their paths and Notion parents.
struct Flat<'a> {
    containers: Vec<(&'static str, &'a str, Vec<String>)>,
    sections: Vec<(&'a Section, Vec<String>)>,
}

fn flatten(notebooks: &[Notebook]) -> Flat<'_> {
    fn walk<'a>(
        groups: &'a [SectionGroup],
        sections: &'a [Section],
        path: &[String],
        out: &mut Flat<'a>,
    ) {
        // Same order as planning: a container's sections, then its section groups.
        for s in sections {
            let mut p = path.to_vec();
            p.push(s.name.clone());
            out.sections.push((s, p));
        }
        for g in groups {
            let mut p = path.to_vec();
            p.push(g.name.clone());
            out.containers.push(("section_group", &g.id, p.clone()));
            walk(&g.section_groups, &g.sections, &p, out);
        }
    }
    let mut out = Flat {
        containers: Vec::new(),
        sections: Vec::new(),
    };
    for nb in notebooks {
        let path = vec![nb.name.clone()];
        out.containers.push(("notebook", &nb.id, path.clone()));
        walk(&nb.section_groups, &nb.sections, &path, &mut out);
    }
    out
}

/// What the child-page listings say about each record: the page found for it, and its copies.
#[derive(Default)]
struct Matches {
    /// item id -> the Notion page adopted for an intent-only record.
    adopted: HashMap<String, String>,
    /// item id -> copies.
    duplicates: HashMap<String, Vec<String>>,
    /// Notion parent (normalised) -> pages we did not create under it.
    foreign: HashMap<String, Vec<(String, String)>>,
}

/// Pairs every Notion child page under our parents with the records that expect to be there.
fn match_children(
    reader: &Reader<'_>,
    items: &[NotionItem],
    targets: &HashSet<String>,
    others: &HashSet<String>,
) -> Matches {
    let recorded: HashSet<String> = items
        .iter()
        .filter_map(|i| i.notion_page_id.as_deref().map(norm))
        .collect();
    let mut by_parent: HashMap<String, Vec<&NotionItem>> = HashMap::new();
    let mut parents: Vec<String> = Vec::new();
    for i in items {
        let p = norm(&i.parent_notion_id);
        if !by_parent.contains_key(&p) {
            parents.push(p.clone());
        }
        by_parent.entry(p).or_default().push(i);
    }
    // Our own pages are parents too, even with no records under them (to find foreign pages).
    for id in &recorded {
        if !by_parent.contains_key(id) {
            parents.push(id.clone());
            by_parent.insert(id.clone(), Vec::new());
        }
    }
    let mut m = Matches::default();
    for parent in parents {
        let Some(Ok(listing)) = reader.listings.get(&parent) else {
            continue;
        };
        let expected = &by_parent[&parent];
        // Pages another account of this database created (two accounts may share a target) are
        // theirs, never our duplicates.
        let mut unclaimed: Vec<(String, String)> = child_pages(listing)
            .into_iter()
            .filter(|(id, _)| !recorded.contains(&norm(id)) && !others.contains(&norm(id)))
            .collect();
        // An intent without an id is a creation whose answer was lost: the page with its title is it.
        for item in expected.iter().filter(|i| i.notion_page_id.is_none()) {
            let want = display_title(&item.title);
            if let Some(pos) = unclaimed.iter().position(|(_, t)| *t == want) {
                let (id, _) = unclaimed.remove(pos);
                m.adopted.insert(item.item_id.clone(), id);
            }
        }
        for (id, title) in unclaimed {
            match expected.iter().find(|i| display_title(&i.title) == title) {
                Some(item) => m
                    .duplicates
                    .entry(item.item_id.clone())
                    .or_default()
                    .push(id),
                // Under the target the user's own pages live alongside ours.
                None if targets.contains(&parent) => {}
                None => m
                    .foreign
                    .entry(parent.clone())
                    .or_default()
                    .push((id, title)),
            }
        }
    }
    m
}

struct Ctx<'a> {
    reader: &'a Reader<'a>,
    items: HashMap<&'a str, &'a NotionItem>,
    jobs: HashMap<&'a str, &'a JobRow>,
    jobs_by_id: HashMap<i64, &'a JobRow>,
    names: HashMap<&'a str, String>,
    matches: Matches,
    /// Notion pages reached from a target through found pages only (items are located top-down):
    /// a page under a missing (trashed) parent is not really there, whatever its own listing says.
    reachable: RefCell<HashSet<String>>,
}

impl Ctx<'_> {
    /// The nearest failed ancestor job of `job`, as a reason.
    fn failed_ancestor(&self, job: &JobRow) -> Option<String> {
        let mut cur = job.parent_job.and_then(|p| self.jobs_by_id.get(&p));
        while let Some(j) = cur {
            if j.state == "failed" {
                let name = self
                    .names
                    .get(j.item_id.as_str())
                    .cloned()
                    .unwrap_or_default();
                return Some(format!(
                    "{} {name:?} failed: {}",
                    j.kind.replace('_', " "),
                    j.last_error.as_deref().unwrap_or("no error recorded")
                ));
            }
            cur = j.parent_job.and_then(|p| self.jobs_by_id.get(&p));
        }
        None
    }

    /// Presence of one item: its check without the body, and the Notion page found.
    fn locate(&self, item_id: &str) -> (ItemCheck, Option<&NotionItem>) {
        let job = self.jobs.get(item_id);
        let rec = self.items.get(item_id).copied();
        let dups = self
            .matches
            .duplicates
            .get(item_id)
            .cloned()
            .unwrap_or_default();
        let check = |state, id: Option<String>, reason: Option<String>| ItemCheck {
            state,
            notion_page_id: id,
            duplicates: dups.clone(),
            reason,
        };
        let Some(job) = job else {
            return (check(ItemState::NotPlanned, None, None), rec);
        };
        // Where the page is, and whether the parent's listing shows it.
        let (found, why_not): (Option<String>, Option<String>) = match rec {
            None => (None, Some("no Notion page was recorded for it".into())),
            Some(r) if !self.reachable.borrow().contains(&norm(&r.parent_notion_id)) => (
                None,
                Some(format!(
                    "its parent Notion page {} is missing",
                    r.parent_notion_id
                )),
            ),
            Some(r) => match self.reader.listing(&r.parent_notion_id) {
                Some(Err(e)) => (
                    None,
                    Some(format!("its Notion parent could not be read: {e}")),
                ),
                None => (None, Some("its Notion parent was not listed".into())),
                Some(Ok(listing)) => match &r.notion_page_id {
                    Some(id) => {
                        let here = child_pages(listing)
                            .iter()
                            .any(|(c, _)| norm(c) == norm(id));
                        if here {
                            (Some(id.clone()), None)
                        } else {
                            (
                                None,
                                Some(format!(
                                    "Notion page {id} is not (or no longer) under its parent"
                                )),
                            )
                        }
                    }
                    None => match self.matches.adopted.get(item_id) {
                        Some(id) => (Some(id.clone()), None),
                        None => (None, Some("its creation was never confirmed".into())),
                    },
                },
            },
        };
        if let Some(id) = &found {
            self.reachable.borrow_mut().insert(norm(id));
        }
        let state = match job.state.as_str() {
            "failed" => {
                let err = job.last_error.as_deref().unwrap_or("no error recorded");
                return (check(ItemState::Failed, found, Some(err.to_owned())), rec);
            }
            _ if found.is_none() => {
                if let Some(why) = self.failed_ancestor(job) {
                    return (check(ItemState::Blocked, None, Some(why)), rec);
                }
                if job.state != "done" {
                    let why = format!(
                        "its job is {} (run `notebridge migrate --resume`)",
                        job.state
                    );
                    return (check(ItemState::Pending, None, Some(why)), rec);
                }
                return (
                    check(
                        ItemState::Missing,
                        rec.and_then(|r| r.notion_page_id.clone()),
                        why_not,
                    ),
                    rec,
                );
            }
            _ if rec.is_some_and(|r| r.notion_page_id.is_none()) => {
                return (
                    check(
                        ItemState::Partial,
                        found,
                        Some(
                            "created in Notion but never confirmed (`migrate --resume` adopts it)"
                                .into(),
                        ),
                    ),
                    rec,
                );
            }
            _ if !dups.is_empty() => ItemState::Duplicated,
            _ => ItemState::Ok,
        };
        let reason = (state == ItemState::Duplicated)
            .then(|| format!("{} more Notion page(s) with its title", dups.len()));
        (check(state, found, reason), rec)
    }
}

async fn verify_account(
    db: &Db,
    reader: &mut Reader<'_>,
    account: &str,
) -> Result<AccountReport, VerifyError> {
    let inventory = db.inventory(account)?;
    let items = db.notion_items(account)?;
    let (jobs, targets) = read_jobs(db, account)?;

    let mut ids: Vec<String> = targets.clone();
    ids.extend(items.iter().map(|i| i.parent_notion_id.clone()));
    ids.extend(items.iter().filter_map(|i| i.notion_page_id.clone()));
    reader.fetch(ids, account).await?;

    let target_set: HashSet<String> = targets.iter().map(|t| norm(t)).collect();
    let others: HashSet<String> = db
        .accounts()?
        .into_iter()
        .filter(|a| a.name != account)
        .map(|a| db.notion_items(&a.name))
        .collect::<Result<Vec<_>, _>>()?
        .into_iter()
        .flatten()
        .filter_map(|i| i.notion_page_id.as_deref().map(norm))
        .collect();
    let matches = match_children(reader, &items, &target_set, &others);
    let mut names: HashMap<&str, String> = HashMap::new();
    let flat = flatten(&inventory);
    for (_, id, path) in &flat.containers {
        names.insert(id, path.last().cloned().unwrap_or_default());
    }
    for (s, _) in &flat.sections {
        names.insert(&s.id, s.name.clone());
        for p in &s.pages {
            names.insert(&p.id, display_title(&p.title));
        }
    }
    let ctx = Ctx {
        reader: &*reader,
        items: items.iter().map(|i| (i.item_id.as_str(), i)).collect(),
        jobs: jobs.iter().map(|j| (j.item_id.as_str(), j)).collect(),
        jobs_by_id: jobs.iter().map(|j| (j.id, j)).collect(),
        names,
        matches,
        reachable: RefCell::new(
            targets
                .iter()
                .filter(|t| matches!(reader.listing(t), Some(Ok(_))))
                .map(|t| norm(t))
                .collect(),
        ),
    };
    let foreign_under = |notion_id: &Option<String>, path: &[String]| -> Vec<ForeignPage> {
        notion_id
            .as_deref()
            .and_then(|id| ctx.matches.foreign.get(&norm(id)))
            .map(|v| {
                v.iter()
                    .map(|(id, title)| ForeignPage {
                        notion_page_id: id.clone(),
                        title: title.clone(),
                        under: path.to_vec(),
                    })
                    .collect()
            })
            .unwrap_or_default()
    };

    let mut containers = Vec::new();
    let mut account_foreign = Vec::new();
    for (kind, id, path) in &flat.containers {
        let (check, _) = ctx.locate(id);
        account_foreign.extend(foreign_under(&check.notion_page_id, path));
        containers.push(ContainerReport {
            kind,
            id: (*id).to_owned(),
            path: path.clone(),
            check,
        });
    }

    let mut sections = Vec::new();
    let mut totals = Counts::default();
    for (s, path) in &flat.sections {
        let (section_page, _) = ctx.locate(&s.id);
        let mut foreign = foreign_under(&section_page.notion_page_id, path);
        let mut counts = Counts {
            onenote_pages: s.pages.len(),
            ..Counts::default()
        };
        let mut pages = Vec::new();
        for p in &s.pages {
            let (mut check, rec) = ctx.locate(&p.id);
            let mut page_path = path.clone();
            page_path.push(display_title(&p.title));
            foreign.extend(foreign_under(&check.notion_page_id, &page_path));
            let mut blocks_found = None;
            if matches!(check.state, ItemState::Ok | ItemState::Duplicated) {
                let rec = rec.expect("a found page has a record");
                if rec.body_state != BodyState::Done {
                    check.state = ItemState::Partial;
                    check.reason = Some("its body was not completely written".into());
                } else {
                    let id = check.notion_page_id.clone().unwrap_or_default();
                    match reader.count_body(&id, account).await? {
                        Ok((n, shape)) => {
                            blocks_found = Some(n);
                            let misplaced = n == rec.blocks
                                && rec.body_shape.as_deref().is_some_and(|want| want != shape);
                            if misplaced {
                                check.state = ItemState::Partial;
                                check.reason = Some(
                                    "its body has the blocks written, but not where they were \
                                     written (some lost, others added)"
                                        .into(),
                                );
                            }
                            if n < rec.blocks {
                                check.state = ItemState::Partial;
                                check.reason = Some(format!(
                                    "{n} of the {} body blocks written are in Notion",
                                    rec.blocks
                                ));
                            } else if n > rec.blocks {
                                check.state = ItemState::Partial;
                                check.reason = Some(format!(
                                    "its body holds {n} blocks where {} were written (content \
                                     written twice, or added outside notebridge)",
                                    rec.blocks
                                ));
                            }
                        }
                        Err(e) => {
                            check.state = ItemState::Partial;
                            check.reason = Some(format!("its body could not be read: {e}"));
                        }
                    }
                }
            }
            let approximations = rec
                .and_then(|r| r.report.as_deref())
                .and_then(|r| match serde_json::from_str::<Vec<Approximation>>(r) {
                    Ok(v) => Some(v),
                    Err(e) => {
                        tracing::warn!(account, page = %p.id, error = %e, "unreadable conversion report");
                        None
                    }
                })
                .unwrap_or_default();
            tally(&mut counts, &check, !approximations.is_empty());
            pages.push(PageReport {
                id: p.id.clone(),
                title: p.title.clone(),
                level: p.level,
                blocks_recorded: rec
                    .filter(|r| r.body_state == BodyState::Done)
                    .map(|r| r.blocks),
                blocks_found,
                check,
                approximations,
            });
        }
        counts.foreign = foreign.len();
        totals.add(&counts);
        sections.push(SectionReport {
            id: s.id.clone(),
            path: path.clone(),
            section_page,
            counts,
            pages,
            foreign,
        });
    }
    totals.foreign += account_foreign.len();
    Ok(AccountReport {
        account: account.to_owned(),
        targets,
        planned_anything: !jobs.is_empty(),
        totals,
        containers,
        sections,
        foreign: account_foreign,
    })
}

fn tally(c: &mut Counts, check: &ItemCheck, approximated: bool) {
    let s = check.state;
    if s != ItemState::NotPlanned {
        c.planned += 1;
    }
    if check.notion_page_id.is_some()
        && matches!(
            s,
            ItemState::Ok | ItemState::Duplicated | ItemState::Partial
        )
        || (s == ItemState::Failed && check.notion_page_id.is_some())
    {
        c.in_notion += 1;
    }
    c.duplicates += check.duplicates.len();
    match s {
        ItemState::Ok => c.ok += 1,
        ItemState::Partial => c.partial += 1,
        ItemState::Missing => c.missing += 1,
        ItemState::Failed => c.failed += 1,
        ItemState::Blocked => c.blocked += 1,
        ItemState::Pending => c.pending += 1,
        ItemState::NotPlanned => c.not_planned += 1,
        ItemState::Duplicated => {}
    }
    // Missing counts every planned page that is not in Notion, whatever the cause.
    if matches!(s, ItemState::Blocked | ItemState::Pending)
        || (s == ItemState::Failed && check.notion_page_id.is_none())
    {
        c.missing += 1;
    }
    if approximated {
        c.approximated_pages += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn ids_compare_without_dashes_or_case() {
        assert_eq!(
            norm("1A2b3c4d-0000-4000-8000-000000000001"),
            norm("1a2b3c4d000040008000000000000001")
        );
    }

    #[test]
    fn child_pages_skip_body_and_trashed_blocks() {
        let listing = vec![
            json!({"id": "a", "type": "paragraph", "paragraph": {}}),
            json!({"id": "b", "type": "child_page", "child_page": {"title": "One"}}),
            json!({"id": "c", "type": "child_page", "child_page": {"title": "Two"}, "in_trash": true}),
        ];
        assert_eq!(child_pages(&listing), vec![("b".into(), "One".into())]);
        assert!(is_body_block(&listing[0]));
        assert!(!is_body_block(&listing[1]));
    }

    #[test]
    fn tally_counts_missing_whatever_the_cause() {
        let mut c = Counts::default();
        let ck = |state, id: Option<&str>| ItemCheck {
            state,
            notion_page_id: id.map(str::to_owned),
            duplicates: vec![],
            reason: None,
        };
        tally(&mut c, &ck(ItemState::Ok, Some("x")), true);
        tally(&mut c, &ck(ItemState::Missing, Some("y")), false);
        tally(&mut c, &ck(ItemState::Blocked, None), false);
        tally(&mut c, &ck(ItemState::Failed, None), false);
        tally(&mut c, &ck(ItemState::NotPlanned, None), false);
        assert_eq!(
            (
                c.planned,
                c.in_notion,
                c.ok,
                c.missing,
                c.failed,
                c.not_planned
            ),
            (4, 1, 1, 3, 1, 1)
        );
        assert_eq!(c.approximated_pages, 1);
    }
}
