//! Writing one OneNote item into Notion exactly once, by executing its write plan ([`super::plan`]).
//!
//! Notion has no idempotency keys and a write can be applied although its answer was a 504 or never
//! arrived. So the writer records what each step learned (the ids of the blocks it created, its
//! upload), in the page's journal as it learns it when it has one ([`super::journal`]), and one
//! place ([`Exec::look`]) decides from what Notion holds whether a step was applied: after an
//! unclear answer, before writing again; and when a page is resumed, for the one step after those
//! its journal recorded (steps are sent one after another, so no later one can have been), or,
//! without records, step by step until the first one that was not.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use bytes::Bytes;
use futures::future::BoxFuture;
use serde::Serialize;
use serde_json::{json, Value};

use super::client::{gave_up, NotionClient, NotionError, Position};
use super::degrade::{self, Degraded};
use super::journal::{self, Journal, Learned, LinkBody, Made, Recorded, Uploaded};
use super::listed::{self, Listed};
use super::plan::{self, Items, Parent, Path, Planner, Step};
use super::upload;
use crate::convert::{Block, MediaSource};
use crate::failure::{Class, Classify, Next, Retries, RetryBudget, Scope, ITEM_RETRIES};
use crate::graph::GraphError;
use crate::store::write_journal::LinkRow;
use crate::store::StoreError;

pub use super::upload::{PART_SIZE, SINGLE_PART_MAX};

/// A file the page refers to, to be fetched from Graph and uploaded to Notion.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Resource {
    /// Where to fetch it (a Graph resource URL).
    pub url: String,
    /// The file name to show in Notion.
    pub file_name: String,
    /// MIME type when OneNote gave one.
    pub mime: Option<String>,
    /// Another rendition to fetch when `url` cannot be carried over (an image's smaller `src`
    /// beside its full resolution); using it is reported ([`WriteStats::smaller`]).
    pub fallback: Option<String>,
}

/// Fetches a resource's bytes (through the Graph limiter); the error text names why it failed.
///
/// An error this one file's own for good (gone, forbidden, too big: [`Scope::Item`] and
/// [`Next::Never`]) leaves a placeholder; any other (a deadline, sign-in, retries exhausted) fails
/// the write so the page is tried again later instead of keeping a placeholder for good.
pub type Fetch =
    Arc<dyn Fn(Resource) -> BoxFuture<'static, Result<Bytes, GraphError>> + Send + Sync>;

/// Errors writing an item; each names the Notion object involved.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    /// Notion refused or kept failing.
    #[error(transparent)]
    Notion(#[from] NotionError),
    /// What Notion holds does not match what we wrote (someone edited the page meanwhile).
    #[error("{0}")]
    Mismatch(String),
    /// A file could not be fetched for a reason that is not the file's own (see [`Fetch`]).
    #[error(transparent)]
    Fetch(GraphError),
    /// What a step learned could not be recorded in the state database.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A created page could not be recorded: going on could create it twice.
    #[error("could not record a created Notion page: {0}")]
    Unrecorded(String),
}

impl Classify for WriteError {
    fn class(&self) -> Class {
        match self {
            WriteError::Notion(e) => e.class(),
            // Someone edited the page meanwhile: never written over, this page fails.
            WriteError::Mismatch(_) => Class::item_fails(),
            WriteError::Fetch(e) => e.class(),
            WriteError::Store(e) => e.class(),
            // A bug: nothing the user can do but report it.
            WriteError::Unrecorded(_) => Class::new(Scope::Run, Next::Never),
        }
    }

    fn retries(&self) -> u32 {
        match self {
            WriteError::Notion(e) => e.retries(),
            WriteError::Mismatch(_) => 0,
            WriteError::Fetch(e) => e.retries(),
            WriteError::Store(e) => e.retries(),
            WriteError::Unrecorded(_) => 0,
        }
    }
}

/// What writing a page did.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct WriteStats {
    /// Blocks written (all levels).
    pub blocks: usize,
    /// Files uploaded.
    pub files: usize,
    /// Bytes uploaded.
    pub bytes: u64,
    /// Resources that could not be carried over (a visible placeholder stands in their place).
    pub placeholders: Vec<String>,
    /// Elements Notion refused, sent degraded ([`degrade`]).
    pub degraded: Vec<Degraded>,
    /// Files carried over from their fallback rendition (`name: why the first failed`).
    pub smaller: Vec<String>,
}

/// A page to create: where, its title, its body and the resources the body refers to.
#[derive(Clone, Copy)]
pub struct NewPage<'a> {
    /// The Notion parent page id.
    pub parent: &'a str,
    /// The title (`Untitled` when empty).
    pub title: &'a str,
    /// The converted body.
    pub blocks: &'a [Block],
    /// Resource-backed media in the body, by URL.
    pub resources: &'a HashMap<String, Resource>,
}

/// Writes pages and their bodies.
#[derive(Clone)]
pub struct Writer {
    client: NotionClient,
    fetch: Fetch,
    max_upload: u64,
    /// The item's one retry budget ([`ITEM_RETRIES`]) and what earlier attempts spent of it.
    budget: RetryBudget,
    spent: u32,
    /// Where what each step learned is recorded as it is learned (`None`: kept in memory only).
    journal: Option<Journal>,
}

impl Writer {
    /// A writer that uploads resources fetched with `fetch`, refusing files above `max_upload` bytes
    /// (the workspace limit from `/v1/users/me`).
    pub fn new(client: NotionClient, fetch: Fetch, max_upload: u64) -> Self {
        Self {
            client,
            fetch,
            max_upload,
            budget: ITEM_RETRIES,
            spent: 0,
            journal: None,
        }
    }

    /// The same writer recording what each step learns in the page's `journal`, and the blocks it
    /// writes holding links to pages not migrated yet; a resumed write skips the steps recorded
    /// there.
    pub fn with_journal(mut self, journal: Journal) -> Self {
        self.journal = Some(journal);
        self
    }

    /// The same writer for an item whose earlier attempts already spent `retries` of its one retry
    /// budget: an unclear write is retried only while the rest lasts.
    pub fn after_retries(mut self, retries: u32) -> Self {
        self.spent = retries;
        self
    }

    /// The underlying client.
    pub fn client(&self) -> &NotionClient {
        &self.client
    }

    /// Finds the page we created earlier under `parent` with `title` whose id we never learnt (the
    /// answer was lost): the last child page with that title that is not already one of ours.
    pub async fn find_lost_page(
        &self,
        parent: &str,
        title: &str,
        ours: &HashSet<String>,
    ) -> Result<Option<String>, WriteError> {
        find_lost_page(&self.client, parent, title, ours).await
    }

    /// This writer's client for one step of an item's plan (a creation, an append, an upload): the
    /// step's requests, looks and resends spend from one retry count, which starts from what the
    /// item's earlier attempts spent. Each step has its own, as each request of uv's has: what one
    /// failing step spends is not taken from the next.
    fn item_client(&self) -> NotionClient {
        self.client.for_item(Retries::new(self.budget, self.spent))
    }
}

/// [`Writer::find_lost_page`] with `client` (an item's, so the listing spends its retries).
async fn find_lost_page(
    client: &NotionClient,
    parent: &str,
    title: &str,
    ours: &HashSet<String>,
) -> Result<Option<String>, WriteError> {
    let title = display_title(title);
    let kids = listed::list(client, parent).await?;
    Ok(kids
        .into_iter()
        .filter(|b| b.is_subpage() && !b.trashed)
        .filter(|b| b.title.as_deref() == Some(title.as_str()))
        .map(|b| b.id)
        .rfind(|id| !ours.contains(id)))
}

impl Writer {
    /// Creates a page (with the first request's worth of `blocks`) and writes the rest of the body.
    /// `recover` is true when an earlier attempt may have created it already: the parent is looked at
    /// first. Returns the page id and what was written.
    pub async fn create_page(
        &self,
        page: NewPage<'_>,
        ours: &HashSet<String>,
        recover: bool,
        on_created: &(dyn Fn(&str) + Send + Sync),
    ) -> Result<(String, WriteStats), WriteError> {
        let NewPage {
            parent,
            title,
            blocks,
            resources,
        } = page;
        let mut exec = Exec::new(self, blocks, resources, String::new());
        let mut steps = Planner::new_page(blocks);
        if recover {
            if let Some(id) = find_lost_page(&exec.client, parent, title, ours).await? {
                on_created(&id);
                let (created, items) = exec.found_page(id, &mut steps);
                exec.send_done(created, &items).await?;
                exec.run(steps).await?;
                return Ok((exec.page, exec.stats));
            }
        }
        // The uploads of the first request's blocks, then the creation itself.
        let mut uploads = Vec::new();
        let items = loop {
            match steps.next() {
                Some(step @ Step::Upload { .. }) => exec.push_upload(&step, &mut uploads),
                Some(Step::CreatePage { items }) => break items,
                other => unreachable!("a new page's plan starts with its creation: {other:?}"),
            }
        };
        let done = exec.upload_all(&uploads).await?;
        let mut first = exec.request(&items, &done);
        drop(done);
        let creation = exec.learned.len();
        let id = loop {
            match exec.client.create_page(parent, title, &first).await {
                Err(e) if exec.degraded(&e, &mut first) => {}
                Ok(v) => {
                    break v["id"].as_str().map(str::to_owned).ok_or_else(|| {
                        WriteError::Mismatch(format!(
                            "Notion created a page under {parent} without an id"
                        ))
                    })?
                }
                Err(e @ NotionError::Ambiguous { .. }) => {
                    if let Some(id) = find_lost_page(&exec.client, parent, title, ours).await? {
                        // It was applied, with its first blocks (a creation is whole or nothing):
                        // whatever else of the body it holds is found step by step.
                        on_created(&id);
                        exec.stats.blocks += items.elements();
                        exec.page = id;
                        exec.push_learned(
                            Learned::PageBlocks(items.len()),
                            exec.mark_of_send(&items),
                        );
                        exec.send_done(creation, &items).await?;
                        exec.resuming = true;
                        exec.run(steps).await?;
                        return Ok((exec.page, exec.stats));
                    }
                    exec.before_retry(e).await?;
                }
                Err(e) => return Err(spent(&exec.client, e).into()),
            }
        };
        on_created(&id);
        exec.stats.blocks += items.elements();
        exec.page = id;
        // The creation answers with the page, not its blocks: their ids are listed when a later
        // step needs them.
        exec.push_learned(Learned::PageBlocks(items.len()), exec.mark_of_send(&items));
        drop(first);
        exec.send_done(creation, &items).await?;
        exec.run(steps).await?;
        Ok((exec.page, exec.stats))
    }

    /// Writes `blocks` as the whole body of an existing page, resuming after whatever is there:
    /// the steps its journal recorded are skipped, the first one it did not record is looked up.
    pub async fn resume_body(
        &self,
        page: &str,
        blocks: &[Block],
        resources: &HashMap<String, Resource>,
    ) -> Result<WriteStats, WriteError> {
        let mut exec = Exec::new(self, blocks, resources, page.to_owned());
        exec.resuming = true;
        if let Some(j) = &self.journal {
            let recorded = j.recorded().await?;
            if !recorded.is_empty() {
                exec.recorded = Some(recorded);
            }
        }
        exec.run(Planner::body(blocks)).await?;
        Ok(exec.stats)
    }

    /// Replaces a page's body: trashes every body block, then writes `blocks` (`migrate --update`).
    /// Safe to repeat after a kill: the next run trashes whatever the interrupted one wrote.
    pub async fn replace_body(
        &self,
        page: &str,
        blocks: &[Block],
        resources: &HashMap<String, Resource>,
    ) -> Result<WriteStats, WriteError> {
        let kids = listed::list(&self.client, page).await?;
        let mut subpages = false;
        for b in &kids {
            if b.is_subpage() {
                subpages = true;
            } else {
                self.client.delete_block(&b.id).await?;
            }
        }
        let mut exec = Exec::new(self, blocks, resources, page.to_owned());
        // Subpages stay where they are; the new body goes before them, as it was.
        exec.top = subpages.then_some(Position::Start);
        exec.run(Planner::body(blocks)).await?;
        Ok(exec.stats)
    }
}

impl From<Listed> for Made {
    fn from(l: Listed) -> Self {
        Made {
            id: l.id,
            has_children: Some(l.has_children),
            kind: Some(l.kind),
        }
    }
}

/// The upload steps of one send, by the block they are for.
type Done = std::collections::HashMap<Path, usize>;

/// One execution of a plan: what each step learned so far, in step order.
struct Exec<'w, 'a> {
    w: &'w Writer,
    /// The writer's client for the step being executed ([`Writer::item_client`]).
    client: NotionClient,
    blocks: &'a [Block],
    resources: &'a HashMap<String, Resource>,
    stats: WriteStats,
    /// The page's id (known before any step that needs it).
    page: String,
    /// What step `n` learned is `learned[n]`.
    learned: Vec<Learned>,
    /// The mark of step `n` ([`journal::mark`]) is `marks[n]`.
    marks: Vec<String>,
    /// Steps are looked up before they are sent, until the first not applied (a page resumed).
    resuming: bool,
    /// What an earlier attempt recorded, by step, while its records hold for this plan: a
    /// recorded step is skipped, and only the first one not recorded can have been applied
    /// without its record (steps are sent one after another).
    recorded: Option<HashMap<usize, Recorded>>,
    /// Where the next top-level blocks go (`migrate --update`: before the subpages); `None`: at
    /// the end.
    top: Option<Position>,
    /// Body listings made while resuming, by parent (several steps look at one parent).
    listings: HashMap<String, Vec<Listed>>,
    /// The next look is the only one: the step after the last recorded one.
    look_once: bool,
}

/// An upload step of the next send: its number, its media block, its mark.
type PendingUpload = (usize, Path, String);

impl<'w, 'a> Exec<'w, 'a> {
    fn new(
        w: &'w Writer,
        blocks: &'a [Block],
        resources: &'a HashMap<String, Resource>,
        page: String,
    ) -> Self {
        Self {
            w,
            client: w.item_client(),
            blocks,
            resources,
            stats: WriteStats::default(),
            page,
            learned: Vec::new(),
            marks: Vec::new(),
            resuming: false,
            recorded: None,
            top: None,
            listings: HashMap::new(),
            look_once: false,
        }
    }

    fn push_learned(&mut self, learned: Learned, mark: String) {
        self.learned.push(learned);
        self.marks.push(mark);
    }

    /// Queues an upload step for the next send; a file an earlier attempt uploaded a short while
    /// ago (or found it could not carry) is not made again.
    fn push_upload(&mut self, step: &Step, uploads: &mut Vec<PendingUpload>) {
        let Step::Upload { block } = step else {
            unreachable!("only upload steps are queued");
        };
        let n = self.learned.len();
        let mark = self.mark_of_upload(step, block);
        let reused = self.recorded.as_ref().and_then(|r| match r.get(&n) {
            Some(Recorded {
                mark: m,
                learned: Learned::Upload(Some(u)),
                at,
            }) if *m == mark => match u {
                Uploaded::File(_) => {
                    let now = self.w.journal.as_ref().map_or(*at, Journal::now);
                    (now - at < journal::UPLOAD_REUSE_MS).then(|| u.clone())
                }
                Uploaded::Placeholder { .. } | Uploaded::AsIs => Some(u.clone()),
            },
            _ => None,
        });
        uploads.push((n, block.clone(), mark.clone()));
        self.push_learned(Learned::Upload(reused), mark);
    }

    /// The mark of a send: the creation of the page marks as an append to it, so the plan of a
    /// body resumed in its page ([`Planner::body`]) matches the plan that created it.
    fn mark_of_send(&self, items: &Items) -> String {
        let like = Step::Append {
            parent: Parent::Page,
            items: items.clone(),
        };
        journal::mark(&like.describe(), &self.kinds(items))
    }

    fn mark_of_upload(&self, step: &Step, block: &[usize]) -> String {
        let source = plan::block_at(self.blocks, block).and_then(|b| match b.media() {
            Some(MediaSource::Resource { url, .. }) => Some(url.as_str()),
            Some(MediaSource::Embedded(f)) => Some(f.key.as_str()),
            _ => None,
        });
        journal::mark(&step.describe(), &[source.unwrap_or("")])
    }

    fn mark_of(&self, step: &Step) -> String {
        match step {
            Step::Upload { block } => self.mark_of_upload(step, block),
            Step::CreatePage { items } => self.mark_of_send(items),
            Step::Append { items, .. } => journal::mark(&step.describe(), &self.kinds(items)),
        }
    }

    /// What an earlier attempt recorded for step `n` with `mark`, when it was a send; the first
    /// step without a record ends the records (and is looked up once when resuming).
    fn recorded_send(&mut self, n: usize, mark: &str) -> Option<Learned> {
        let records = self.recorded.as_mut()?;
        match records.remove(&n) {
            Some(r) if r.mark == mark => match r.learned {
                l @ (Learned::Blocks(_) | Learned::PageBlocks(_)) => return Some(l),
                Learned::Upload(_) => {}
            },
            // The plan differs from the recorded one from here (the page changed in OneNote):
            // its steps are looked up one by one, as for a page without records.
            Some(_) => {
                self.recorded = None;
                return None;
            }
            None => {}
        }
        // Not recorded: only this step can have been sent without its record.
        self.recorded = None;
        self.look_once = true;
        None
    }

    /// Records what step `n` learned (no links: the step sent no blocks, or they were recorded).
    async fn done(&mut self, n: usize) -> Result<(), WriteError> {
        if let Some(j) = &self.w.journal {
            j.step(n, &self.marks[n], &self.learned[n], Vec::new())
                .await?;
        }
        Ok(())
    }

    /// Records what send step `n` of `items` learned, with the blocks it wrote that hold links to
    /// pages not migrated yet.
    async fn send_done(&mut self, n: usize, items: &Items) -> Result<(), WriteError> {
        if self.w.journal.is_none() {
            return Ok(());
        }
        let links = self.link_rows(n, items).await?;
        let j = self.w.journal.as_ref().expect("checked");
        j.step(n, &self.marks[n], &self.learned[n], links).await?;
        Ok(())
    }

    /// The Notion blocks send step `n` wrote that hold links to pages not migrated yet, with what
    /// they hold. A block Notion holds as another type (a placeholder where a file could not be
    /// carried over) holds no link; the ids of carried children are listed (an append answers
    /// only its first-level blocks).
    async fn link_rows(&mut self, n: usize, items: &Items) -> Result<Vec<LinkRow>, WriteError> {
        let wanted = link_candidates(self.blocks, items);
        if wanted.is_empty() {
            return Ok(Vec::new());
        }
        self.page_blocks(n).await?;
        let Learned::Blocks(made) = &self.learned[n] else {
            unreachable!("a send's blocks are known once listed");
        };
        let made = made.clone();
        let mut rows = Vec::new();
        let mut kids: HashMap<usize, Vec<Listed>> = HashMap::new();
        for (i, carried, body) in wanted {
            let Some(m) = made.get(i) else { continue };
            let (id, kind) = match carried {
                None => (m.id.clone(), m.kind.clone()),
                Some(c) => {
                    if let std::collections::hash_map::Entry::Vacant(e) = kids.entry(i) {
                        e.insert(listed::body(&self.client, &m.id).await?);
                    }
                    match kids[&i].get(c) {
                        Some(k) => (k.id.clone(), Some(k.kind.clone())),
                        None => continue,
                    }
                }
            };
            if kind.as_deref().is_none_or(|k| k == body.kind) {
                rows.push(body.row(&id));
            }
        }
        Ok(rows)
    }

    /// The page was created by an earlier attempt: its creation step (with its uploads) counts as
    /// done, and the rest is looked up step by step. Returns the creation's step number and what
    /// it sent.
    fn found_page(&mut self, id: String, steps: &mut Planner<'_>) -> (usize, Items) {
        self.page = id;
        self.resuming = true;
        for s in steps.by_ref() {
            let mark = self.mark_of(&s);
            match s {
                Step::Upload { .. } => self.push_learned(Learned::Upload(None), mark),
                Step::CreatePage { items } => {
                    self.push_learned(Learned::PageBlocks(items.len()), mark);
                    return (self.learned.len() - 1, items);
                }
                Step::Append { .. } => break,
            }
        }
        unreachable!("a new page's plan starts with its creation")
    }

    /// Executes the steps (after the creation, if any), each once.
    async fn run(&mut self, steps: impl Iterator<Item = Step>) -> Result<(), WriteError> {
        // The uploads of the next send.
        let mut uploads: Vec<PendingUpload> = Vec::new();
        for step in steps {
            if let Step::Upload { .. } = step {
                self.push_upload(&step, &mut uploads);
                continue;
            }
            let Step::Append { parent, items } = &step else {
                unreachable!("only the first step creates the page")
            };
            let n = self.learned.len();
            let mark = self.mark_of(&step);
            if let Some(learned) = self.recorded_send(n, &mark) {
                // Finished by an earlier attempt: neither sent nor looked up again.
                if let (Parent::Page, Learned::Blocks(made)) = (parent, &learned) {
                    let made = made.clone();
                    self.placed(&made);
                }
                uploads.clear();
                self.push_learned(learned, mark);
                continue;
            }
            self.client = self.w.item_client();
            let (pid, has_children) = self.parent_id(parent, items).await?;
            if self.resuming {
                let seen = if has_children == Some(false) && items.before() == 0 {
                    None
                } else {
                    self.look(&pid, items, false).await?
                };
                if std::mem::take(&mut self.look_once) {
                    // The one step in doubt was looked at: what follows was never sent.
                    self.resuming = false;
                }
                match seen {
                    Some(made) => {
                        if *parent == Parent::Page {
                            self.placed(&made);
                        }
                        uploads.clear();
                        self.push_learned(Learned::Blocks(made), mark);
                        self.send_done(n, items).await?;
                        continue;
                    }
                    // Nothing from here on was written: no more looks.
                    None => {
                        self.resuming = false;
                        self.listings.clear();
                    }
                }
            }
            let done = self.upload_all(&uploads).await?;
            uploads.clear();
            let mut body = self.request(items, &done);
            drop(done);
            let made = self.append(&pid, &mut body, items, parent).await?;
            drop(body);
            self.stats.blocks += items.elements();
            if *parent == Parent::Page {
                self.placed(&made);
            }
            self.push_learned(Learned::Blocks(made), mark);
            self.send_done(n, items).await?;
        }
        Ok(())
    }

    /// Top-level blocks were written: the next go right after them when placed.
    fn placed(&mut self, made: &[Made]) {
        if self.top.is_some() {
            if let Some(last) = made.last() {
                self.top = Some(Position::After(last.id.clone()));
            }
        }
    }

    /// Step `n` created the page with its first blocks: their ids are listed (and recorded) now.
    async fn page_blocks(&mut self, n: usize) -> Result<(), WriteError> {
        let Learned::PageBlocks(count) = self.learned[n] else {
            return Ok(());
        };
        let have = listed::body(&self.client, &self.page).await?;
        if have.len() < count {
            return Err(WriteError::Mismatch(format!(
                "Notion page {} holds {} blocks right after its creation with {count}",
                self.page,
                have.len()
            )));
        }
        let made: Vec<Made> = have.into_iter().take(count).map(Made::from).collect();
        self.learned[n] = Learned::Blocks(made);
        self.done(n).await
    }

    /// The Notion id of a step's parent and whether Notion said it has children. The ids of the
    /// blocks a page was created with are listed the first time a step needs one.
    async fn parent_id(
        &mut self,
        parent: &Parent,
        items: &Items,
    ) -> Result<(String, Option<bool>), WriteError> {
        let (step, index) = match parent {
            Parent::Page => return Ok((self.page.clone(), None)),
            Parent::Created { step, index } => (*step, *index),
        };
        self.page_blocks(step).await?;
        match &self.learned[step] {
            Learned::Blocks(made) => {
                let m = made.get(index).ok_or_else(|| {
                    WriteError::Mismatch(format!(
                        "step {step} created {} blocks, not a block {index} for {}",
                        made.len(),
                        items.before()
                    ))
                })?;
                Ok((m.id.clone(), m.has_children))
            }
            other => unreachable!("a parent is a block a send created, not {other:?}"),
        }
    }

    /// What Notion holds where a send of `items` under `parent` goes: `Some` with the ids of its
    /// blocks when it was applied, `None` when it was not, an error when the parent holds what no
    /// prefix of the plan explains (it was changed outside notebridge). `fresh`: list again even
    /// when a listing of the parent was made while resuming.
    ///
    /// The one place that decides whether a write happened: after an unclear answer and when a page
    /// is resumed.
    async fn look(
        &mut self,
        parent: &str,
        items: &Items,
        fresh: bool,
    ) -> Result<Option<Vec<Made>>, WriteError> {
        let listed_now;
        let have = if fresh {
            listed_now = listed::body(&self.client, parent).await?;
            &listed_now
        } else {
            if !self.listings.contains_key(parent) {
                let have = listed::body(&self.client, parent).await?;
                self.listings.insert(parent.to_owned(), have);
            }
            &self.listings[parent]
        };
        let (before, n) = (items.before(), items.len());
        let total = match plan::block_at(self.blocks, items.parent_path()) {
            _ if items.parent_path().is_empty() => self.blocks.len(),
            Some(Block::Table { rows, .. }) => rows.len(),
            Some(b) => b.children().len(),
            None => 0,
        };
        if have.len() > total {
            return Err(WriteError::Mismatch(format!(
                "Notion block {parent} holds {} blocks but the page has only {total}; it was changed \
                 outside notebridge",
                have.len()
            )));
        }
        if have.len() == before {
            return Ok(None);
        }
        if have.len() < before + n {
            return Err(WriteError::Mismatch(format!(
                "Notion block {parent} holds {} blocks, expected {before} or {}",
                have.len(),
                before + n
            )));
        }
        let kinds = self.kinds(items);
        for (i, (got, want)) in have[before..before + n].iter().zip(&kinds).enumerate() {
            if !same_kind(&got.kind, want) {
                return Err(WriteError::Mismatch(format!(
                    "Notion block {parent} child {} is a {} where a {want} was written; it was \
                     changed outside notebridge",
                    before + i,
                    got.kind
                )));
            }
        }
        Ok(Some(
            have[before..before + n]
                .iter()
                .cloned()
                .map(Made::from)
                .collect(),
        ))
    }

    /// The type names of the first-level blocks a send sends.
    fn kinds(&self, items: &Items) -> Vec<&'static str> {
        match items {
            Items::Rows { range, .. } => vec!["table_row"; range.len()],
            Items::Blocks { under, range, .. } => range
                .clone()
                .map(|i| {
                    let mut p = under.clone();
                    p.push(i);
                    plan::block_at(self.blocks, &p).map_or("?", Block::type_name)
                })
                .collect(),
        }
    }

    /// Makes the uploads of one send, in page order, and records how each went; returns their step
    /// numbers by block.
    async fn upload_all(&mut self, uploads: &[PendingUpload]) -> Result<Done, WriteError> {
        let mut done = Done::new();
        for (step, path, _) in uploads {
            done.insert(path.clone(), *step);
            if let Learned::Upload(Some(reused)) = &self.learned[*step] {
                // Made by an earlier attempt of this write and not attached yet: it is now.
                match reused {
                    Uploaded::File(_) => self.stats.files += 1,
                    Uploaded::Placeholder { name, why } => {
                        self.stats.placeholders.push(format!("{name}: {why}"))
                    }
                    Uploaded::AsIs => {}
                }
                continue;
            }
            let b = plan::block_at(self.blocks, path).expect("planned blocks exist");
            let key = match b.media() {
                Some(MediaSource::Resource { url, .. }) => url.as_str(),
                Some(MediaSource::Embedded(f)) => f.key.as_str(),
                _ => unreachable!("only resources and embedded files are uploaded"),
            };
            let Some(res) = self.resources.get(key) else {
                self.learned[*step] = Learned::Upload(Some(Uploaded::AsIs));
                continue;
            };
            self.upload_one(*step, res).await?;
        }
        Ok(done)
    }

    /// Makes the upload of step `step` and records how it went.
    async fn upload_one(&mut self, step: usize, res: &Resource) -> Result<(), WriteError> {
        {
            // Each upload is a step of its own, with its own retry count.
            let c = self.w.item_client();
            let how = match self.w.upload_or_fallback(&c, res, &mut self.stats).await {
                Ok((id, size)) => {
                    self.stats.files += 1;
                    self.stats.bytes += size;
                    Uploaded::File(id)
                }
                Err(UploadFailure::CannotCarry(why) | UploadFailure::Spent(why)) => {
                    tracing::warn!(file = %res.file_name, "resource not carried over: {why}");
                    self.stats
                        .placeholders
                        .push(format!("{}: {why}", res.file_name));
                    Uploaded::Placeholder {
                        name: res.file_name.clone(),
                        why,
                    }
                }
                Err(UploadFailure::Notion(e)) => return Err(e.into()),
                Err(UploadFailure::Fetch(e)) => return Err(WriteError::Fetch(e)),
            };
            self.learned[step] = Learned::Upload(Some(how));
        }
        self.done(step).await
    }

    /// The request JSON of a send: each block as converted, its carried children with it, uploaded
    /// files pointed at, placeholders where a file could not be carried over.
    fn request(&mut self, items: &Items, done: &Done) -> Vec<Value> {
        let blocks = self.blocks;
        plan::request_json(blocks, items, |b, path| self.block_json(b, path, done))
    }

    /// One block's JSON without its children, its file as the upload made it. An address Notion
    /// cannot fetch at all (`data:`, `file:`, ...) is never sent: a placeholder names it (refusals
    /// of web addresses are degraded when they come).
    fn block_json(&mut self, b: &Block, path: &[usize], done: &Done) -> Value {
        let mut v = b.to_json_shallow();
        let t = b.type_name();
        let uploaded = done.get(path).and_then(|&n| match &self.learned[n] {
            Learned::Upload(u) => u.as_ref(),
            _ => None,
        });
        match uploaded {
            Some(Uploaded::File(id)) => {
                let payload = v[t].as_object_mut().expect("media payload is an object");
                payload.remove("external");
                payload.insert("type".into(), json!("file_upload"));
                payload.insert("file_upload".into(), json!({ "id": id }));
                return v;
            }
            Some(Uploaded::Placeholder { name, why }) => return placeholder(name, why),
            Some(Uploaded::AsIs) | None => {}
        }
        if MEDIA.contains(&t) {
            let url = v[t]["external"]["url"].as_str().map(str::to_owned);
            if url.is_some_and(|u| !self.resources.contains_key(&u) && !degrade::fetchable(&u)) {
                if let Some(d) = degrade::replace_media(&mut v) {
                    self.stats.degraded.push(d);
                }
            }
        }
        v
    }

    /// One append that happens exactly once: after an unclear answer, [`Self::look`] tells whether
    /// it was applied. Returns the new blocks.
    async fn append(
        &mut self,
        parent_id: &str,
        body: &mut [Value],
        items: &Items,
        parent: &Parent,
    ) -> Result<Vec<Made>, WriteError> {
        let position = match parent {
            Parent::Page => self.top.clone().unwrap_or(Position::End),
            Parent::Created { .. } => Position::End,
        };
        loop {
            match self.client.append_at(parent_id, body, &position).await {
                // Refused, so not applied: the degraded request is sent again.
                Err(e) if self.degraded(&e, body) => {}
                Ok(created) => {
                    let made: Vec<Made> = created
                        .iter()
                        .zip(body.iter())
                        .filter_map(|(b, sent)| {
                            Some(Made {
                                id: b["id"].as_str()?.to_owned(),
                                has_children: b["has_children"].as_bool(),
                                kind: sent["type"].as_str().map(str::to_owned),
                            })
                        })
                        .collect();
                    if made.len() != body.len() {
                        return Err(WriteError::Mismatch(format!(
                            "Notion answered an append of {} blocks to {parent_id} with {} ids",
                            body.len(),
                            made.len()
                        )));
                    }
                    return Ok(made);
                }
                Err(e @ NotionError::Ambiguous { .. }) => {
                    if let Some(made) = self.look(parent_id, items, true).await? {
                        return Ok(made);
                    }
                    self.before_retry(e).await?;
                }
                Err(e) => return Err(spent(&self.client, e).into()),
            }
        }
    }

    /// After an unclear write found not applied: waits before sending it again while the item's
    /// one retry budget lasts, else gives up with the count.
    async fn before_retry(&self, e: NotionError) -> Result<(), WriteError> {
        match self.client.retries().retry_after(&e) {
            Some((_, n)) => {
                // The client's pacing of retries, not the queue's: this is one request again.
                self.client.pause_before_retry(n).await;
                Ok(())
            }
            None => Err(spent(&self.client, e).into()),
        }
    }

    /// Whether Notion refused an element of `blocks` that could be degraded (and was: the request
    /// may be sent again). Each call degrades at least one element, so resending ends.
    fn degraded(&mut self, e: &NotionError, blocks: &mut [Value]) -> bool {
        let NotionError::Rejected { message, .. } = e else {
            return false;
        };
        if e.class().next != Next::Degrade {
            return false;
        }
        match degrade::degrade(blocks, message) {
            Some(d) => {
                tracing::info!(
                    elements = d.len(),
                    "Notion refused elements; sending them degraded"
                );
                self.stats.degraded.extend(d);
                true
            }
            None => false,
        }
    }
}

impl Writer {
    /// Uploads a resource ([`Self::upload`]); when it cannot be carried over for a reason of its
    /// own (gone, forbidden, too big, a type Notion refuses) and it has a fallback rendition, that
    /// one is uploaded instead and recorded in `stats`. A failure that is not the file's (deadline,
    /// sign-in, outage, Notion failing) never reaches for the fallback: the page is tried again.
    async fn upload_or_fallback(
        &self,
        c: &NotionClient,
        res: &Resource,
        stats: &mut WriteStats,
    ) -> Result<(String, u64), UploadFailure> {
        let why = match self.upload(c, res).await {
            Err(UploadFailure::CannotCarry(why)) => why,
            done => return done,
        };
        let Some(url) = res.fallback.clone() else {
            return Err(UploadFailure::CannotCarry(why));
        };
        let smaller = Resource {
            url,
            fallback: None,
            ..res.clone()
        };
        match self.upload(c, &smaller).await {
            Ok(done) => {
                tracing::info!(file = %res.file_name, "full resolution not carried over ({why}); \
                    the smaller rendition was");
                stats.smaller.push(format!("{}: {why}", res.file_name));
                Ok(done)
            }
            Err(UploadFailure::CannotCarry(also)) => Err(UploadFailure::CannotCarry(format!(
                "{why} (its smaller rendition too: {also})"
            ))),
            Err(other) => Err(other),
        }
    }

    /// Downloads one resource and uploads it to Notion exactly once ([`upload::upload_once`]);
    /// returns the upload id and size. Each write of a page makes its own uploads: one sent but never
    /// attached (a kill, a lost answer to an append) just expires.
    async fn upload(
        &self,
        c: &NotionClient,
        res: &Resource,
    ) -> Result<(String, u64), UploadFailure> {
        let Some(name) = upload_name(res) else {
            return Err(UploadFailure::CannotCarry(
                "Notion does not accept this file type".into(),
            ));
        };
        let bytes = (self.fetch)(res.clone()).await.map_err(|e| match e {
            // The download stops at the workspace's limit (the fetch is bounded by it).
            GraphError::TooLarge { size, max, .. } if max == self.max_upload => {
                UploadFailure::CannotCarry(over_limit(size, max))
            }
            e => UploadFailure::of_download(e),
        })?;
        let size = bytes.len() as u64;
        // The name's extension, the content type and the bytes must agree for Notion: an image
        // named `.png` that is a TIFF goes up as `.tif`, and the type follows the extension.
        let name = fit_name(&agree_with_bytes(&name, &bytes), MAX_NAME_BYTES);
        if !notion_accepts(&name) {
            return Err(UploadFailure::CannotCarry(format!(
                "it is {}, a file type Notion does not accept",
                describe_kind(&name)
            )));
        }
        if size > self.max_upload {
            return Err(UploadFailure::CannotCarry(over_limit(
                size,
                self.max_upload,
            )));
        }
        let mime = match mime_for(&name) {
            "application/octet-stream" => res
                .mime
                .clone()
                .unwrap_or_else(|| "application/octet-stream".into()),
            m => m.to_owned(),
        };
        let id = upload::upload_once(c, &name, &mime, bytes).await?;
        Ok((id, size))
    }
}

/// An unclear write after retries of the item in this attempt goes up as "gave up after that many
/// attempts", so the queue counts them against the item's one retry budget.
fn spent(c: &NotionClient, e: NotionError) -> NotionError {
    let retries = c.retries();
    match e {
        NotionError::Ambiguous { what, detail } if retries.here() > 0 => {
            gave_up(&retries, &what, &detail)
        }
        other => other,
    }
}

/// The blocks a send writes that hold links to pages not migrated yet: (index among the send's
/// first-level blocks, index among its carried children if it is one, what it holds).
fn link_candidates(blocks: &[Block], items: &Items) -> Vec<(usize, Option<usize>, LinkBody)> {
    let mut out = Vec::new();
    match items {
        Items::Rows { table, range } => {
            if let Some(Block::Table { rows, .. }) = plan::block_at(blocks, table) {
                for (i, r) in rows[range.clone()].iter().enumerate() {
                    out.extend(LinkBody::of_row(r).map(|b| (i, None, b)));
                }
            }
        }
        Items::Blocks {
            under,
            range,
            carried,
        } => {
            let mut path = under.clone();
            for (i, (k, c)) in range.clone().zip(carried).enumerate() {
                path.push(k);
                let b = plan::block_at(blocks, &path).expect("planned blocks exist");
                out.extend(LinkBody::of(b).map(|l| (i, None, l)));
                match b {
                    Block::Table { rows, .. } => {
                        for (j, r) in rows[..*c].iter().enumerate() {
                            out.extend(LinkBody::of_row(r).map(|l| (i, Some(j), l)));
                        }
                    }
                    other => {
                        for (j, kid) in other.children()[..*c].iter().enumerate() {
                            out.extend(LinkBody::of(kid).map(|l| (i, Some(j), l)));
                        }
                    }
                }
                path.pop();
            }
        }
    }
    out
}

/// Media block types whose source may be a OneNote resource.
const MEDIA: &[&str] = &["image", "file", "pdf", "audio", "video"];

/// Why a resource was not uploaded.
enum UploadFailure {
    /// The file cannot be carried over (download failed, type or size refused): a placeholder.
    CannotCarry(String),
    /// Notion kept failing the upload until the item's retry budget was spent: a placeholder, and
    /// no fallback rendition (nothing is left to spend on it), so the page is not failed for it.
    Spent(String),
    /// Notion failed: the item fails and is retried later.
    Notion(NotionError),
    /// The download failed for a reason that is not the file's: the item fails.
    Fetch(GraphError),
}

impl UploadFailure {
    /// A download's failure: the file's own for good degrades it to a placeholder; any other fails
    /// the write.
    fn of_download(e: GraphError) -> Self {
        if the_files_own(e.class()) {
            UploadFailure::CannotCarry(format!("download failed: {}", e.reason()))
        } else {
            UploadFailure::Fetch(e)
        }
    }
}

/// Whether a failure concerns only the file it was for, for good: it becomes a placeholder.
fn the_files_own(class: Class) -> bool {
    matches!(
        (class.scope, class.next),
        (
            Scope::Attempt | Scope::Resource | Scope::Item,
            Next::Never | Next::Degrade
        )
    )
}

impl From<NotionError> for UploadFailure {
    fn from(e: NotionError) -> Self {
        // Notion refusing this file (type, size) is permanent for it; a refusal of every write, an
        // outage or a lost answer is not the file's.
        if the_files_own(e.class()) {
            UploadFailure::CannotCarry(e.to_string())
        } else if matches!(e.class().next, Next::Retry(_)) {
            // [`upload::upload_once`] retries whatever may be retried: this one spent the budget.
            UploadFailure::Spent(e.to_string())
        } else {
            UploadFailure::Notion(e)
        }
    }
}

/// Whether a block Notion holds stands for the block we wrote: the same type, or a placeholder
/// paragraph where a media block could not be carried over.
fn same_kind(got: &str, want: &str) -> bool {
    got == want || (got == "paragraph" && (MEDIA.contains(&want) || want == "embed"))
}

/// The name to upload a resource under: its own when Notion takes the extension, else (images
/// OneNote names without one) its name plus the extension of its MIME type; `None` when Notion
/// would refuse the file.
pub fn upload_name(res: &Resource) -> Option<String> {
    if notion_accepts(&res.file_name) {
        return Some(res.file_name.clone());
    }
    let ext = extension_for(res.mime.as_deref()?)?;
    let base = if res.file_name.trim().is_empty() {
        "file"
    } else {
        res.file_name.trim_end_matches('.')
    };
    (!res.file_name.contains('.')).then(|| format!("{base}.{ext}"))
}

/// Why a file over the workspace's upload limit is a placeholder (its name is in the placeholder).
fn over_limit(size: u64, max: u64) -> String {
    format!(
        "{size} bytes is over the workspace's upload limit of {max} bytes (a paid Notion plan \
         raises it)"
    )
}

/// Most bytes in an upload's file name (Notion's limit, the extension included).
pub const MAX_NAME_BYTES: usize = 900;

/// The image type the bytes are, by their signature.
fn sniff(bytes: &[u8]) -> Option<&'static str> {
    let b = bytes;
    Some(if b.starts_with(b"\x89PNG\r\n\x1a\n") {
        "png"
    } else if b.starts_with(&[0xff, 0xd8, 0xff]) {
        "jpg"
    } else if b.starts_with(b"GIF87a") || b.starts_with(b"GIF89a") {
        "gif"
    } else if b.starts_with(b"II*\0") || b.starts_with(b"MM\0*") {
        "tif"
    } else if b.starts_with(b"BM") && b.len() > 14 {
        "bmp"
    } else if b.len() >= 12 && &b[..4] == b"RIFF" && &b[8..12] == b"WEBP" {
        "webp"
    } else {
        return None;
    })
}

fn same_image_type(a: &str, b: &str) -> bool {
    fn norm(e: &str) -> &str {
        match e {
            "jpeg" => "jpg",
            "tiff" => "tif",
            other => other,
        }
    }
    norm(a) == norm(b)
}

/// `name` with the extension its bytes call for, when it names a raster image the bytes are not.
pub fn agree_with_bytes(name: &str, bytes: &[u8]) -> String {
    let Some((stem, ext)) = name.rsplit_once('.') else {
        return name.to_owned();
    };
    let ext_l = ext.to_ascii_lowercase();
    const RASTER: &[&str] = &["png", "jpg", "jpeg", "gif", "tif", "tiff", "bmp", "webp"];
    if !RASTER.contains(&ext_l.as_str()) {
        return name.to_owned();
    }
    match sniff(bytes) {
        Some(real) if !same_image_type(real, &ext_l) => format!("{stem}.{real}"),
        _ => name.to_owned(),
    }
}

/// `name` shortened to at most `max` bytes, its extension kept, cut at a character boundary.
pub fn fit_name(name: &str, max: usize) -> String {
    if name.len() <= max {
        return name.to_owned();
    }
    let (stem, ext) = match name.rsplit_once('.') {
        Some((s, e)) if e.len() + 2 < max => (s, format!(".{e}")),
        _ => (name, String::new()),
    };
    let mut cut = max - ext.len();
    while !stem.is_char_boundary(cut.min(stem.len())) {
        cut -= 1;
    }
    format!("{}{ext}", &stem[..cut.min(stem.len())])
}

fn describe_kind(name: &str) -> String {
    match name.rsplit_once('.') {
        Some((_, "bmp")) => "a BMP image".into(),
        Some((_, e)) => format!("a .{e} file"),
        None => "a file without an extension".into(),
    }
}

/// The usual extension of a MIME type Notion accepts.
fn extension_for(mime: &str) -> Option<&'static str> {
    let m = mime
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    Some(match m.as_str() {
        "image/png" => "png",
        "image/jpeg" | "image/jpg" | "image/pjpeg" => "jpg",
        "image/gif" => "gif",
        "image/webp" => "webp",
        "image/svg+xml" => "svg",
        "image/tiff" => "tiff",
        "image/heic" => "heic",
        "image/x-icon" | "image/vnd.microsoft.icon" => "ico",
        "application/pdf" => "pdf",
        "text/plain" => "txt",
        "audio/mpeg" => "mp3",
        "audio/wav" | "audio/x-wav" => "wav",
        "video/mp4" => "mp4",
        _ => return None,
    })
}

/// The title Notion will show.
pub fn display_title(title: &str) -> String {
    if title.trim().is_empty() {
        "Untitled".into()
    } else {
        title.to_owned()
    }
}

/// A visible stand-in for a file that could not be carried over.
pub fn placeholder(name: &str, why: &str) -> Value {
    json!({"type": "paragraph", "paragraph": {"rich_text": [{"type": "text", "text": {"content":
        format!("⚠ {name} could not be carried over from OneNote: {why}")},
        "annotations": {"italic": true, "color": "red"}}]}})
}

/// Whether Notion's File Upload API takes this file name's extension.
pub fn notion_accepts(name: &str) -> bool {
    const OK: &[&str] = &[
        "aac", "adts", "mid", "midi", "mp3", "mpga", "m4a", "m4b", "mp4", "oga", "ogg", "wav",
        "wma", "pdf", "txt", "json", "doc", "dot", "docx", "dotx", "xls", "xlt", "xla", "xlsx",
        "xltx", "ppt", "pot", "pps", "ppa", "pptx", "potx", "gif", "heic", "ico", "jpeg", "jpg",
        "png", "svg", "tif", "tiff", "webp", "amv", "asf", "wmv", "avi", "f4v", "flv", "gifv",
        "m4v", "mkv", "webm", "mov", "qt", "mpeg",
    ];
    name.rsplit_once('.')
        .map(|(_, ext)| OK.contains(&ext.to_ascii_lowercase().as_str()))
        .unwrap_or(false)
}

/// A MIME type from a file name's extension, for files OneNote gave none.
pub fn mime_for(name: &str) -> &'static str {
    let ext = name
        .rsplit_once('.')
        .map(|(_, e)| e.to_ascii_lowercase())
        .unwrap_or_default();
    match ext.as_str() {
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "webp" => "image/webp",
        "svg" => "image/svg+xml",
        "tif" | "tiff" => "image/tiff",
        "pdf" => "application/pdf",
        "txt" => "text/plain",
        "json" => "application/json",
        "doc" => "application/msword",
        "docx" => "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        "xls" => "application/vnd.ms-excel",
        "xlsx" => "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
        "ppt" => "application/vnd.ms-powerpoint",
        "pptx" => "application/vnd.openxmlformats-officedocument.presentationml.presentation",
        "mp3" => "audio/mpeg",
        "wav" => "audio/wav",
        "mp4" => "video/mp4",
        "heic" => "image/heic",
        "ico" => "image/vnd.microsoft.icon",
        "m4a" => "audio/mp4",
        "ogg" | "oga" => "audio/ogg",
        "webm" => "video/webm",
        "mov" | "qt" => "video/quicktime",
        _ => "application/octet-stream",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unclear_writes_the_writer_retried_carry_their_count() {
        let unclear = || NotionError::Ambiguous {
            what: "appending".into(),
            detail: "504".into(),
        };
        let client = || {
            let rate = super::super::rate::NotionRate::new(
                crate::settings::Window {
                    count: 3,
                    length: std::time::Duration::from_secs(1),
                },
                3,
            );
            let jitter = crate::clock::Jitter::seeded(1);
            NotionClient::new("http://127.0.0.1:9", "t", Arc::new(rate), jitter)
                .for_item(Retries::new(ITEM_RETRIES, 1))
        };
        let c = client();
        for _ in 0..3 {
            c.retries().spend().expect("left");
        }
        assert_eq!(
            spent(&c, unclear()).retries(),
            3,
            "this attempt's, not the queue's"
        );
        assert_eq!(spent(&c, unclear()).class().code(), "item/retry");
        // Not retried here: nothing to count, the queue's budget is whole.
        assert!(matches!(
            spent(&client(), unclear()),
            NotionError::Ambiguous { .. }
        ));
        assert_eq!(spent(&client(), unclear()).retries(), 0);
    }

    #[test]
    fn only_a_files_own_failure_for_good_leaves_a_placeholder() {
        let graph = |e: GraphError| match UploadFailure::of_download(e) {
            UploadFailure::CannotCarry(why) => Some(why),
            UploadFailure::Notion(_) | UploadFailure::Fetch(_) | UploadFailure::Spent(_) => None,
        };
        let a = || "a".to_owned();
        let gone = GraphError::Item {
            account: a(),
            item: a(),
            status: 404,
            code: crate::graph::ServiceCode::Other,
            message: "gone".into(),
        };
        assert!(graph(gone).is_some_and(|w| w.contains("404")));
        let foreign = GraphError::ForeignHost {
            account: a(),
            item: a(),
            url: "https://x".into(),
        };
        assert!(graph(foreign).is_some());
        let gave_up = GraphError::GaveUp {
            account: a(),
            item: a(),
            attempts: 6,
            retries: 5,
            last: "503".into(),
            timed_out: false,
        };
        assert!(
            graph(gave_up).is_none(),
            "retries exhausted are not the file's"
        );
        let signed_out = GraphError::Auth(crate::auth::AuthError::NoAccount { account: a() });
        assert!(graph(signed_out).is_none());
        let notion =
            |e: NotionError| matches!(UploadFailure::from(e), UploadFailure::CannotCarry(_));
        let rejected = |status, code: &str| NotionError::Rejected {
            what: "creating an upload".into(),
            status,
            code: code.into(),
            message: "m".into(),
        };
        assert!(notion(rejected(400, "validation_error")));
        assert!(notion(rejected(413, "")));
        assert!(
            !notion(rejected(400, "missing_version")),
            "every request's, not the file's"
        );
        assert!(!notion(NotionError::Ambiguous {
            what: "sending".into(),
            detail: "504".into()
        }));
        assert!(!notion(NotionError::GaveUp {
            what: "w".into(),
            attempts: 8,
            last: "503".into()
        }));
    }

    #[test]
    fn accepted_extensions_follow_notion() {
        assert!(notion_accepts("Report.PDF"));
        assert!(notion_accepts("a.xlsx"));
        assert!(!notion_accepts("notes.one"));
        assert!(!notion_accepts("archive.zip"));
        assert!(!notion_accepts("noext"));
        assert_eq!(mime_for("x.PNG"), "image/png");
    }

    #[test]
    fn names_without_an_extension_take_their_mime_type() {
        let r = |name: &str, mime: Option<&str>| Resource {
            url: "u".into(),
            file_name: name.into(),
            mime: mime.map(str::to_owned),
            fallback: None,
        };
        assert_eq!(upload_name(&r("a.png", None)).as_deref(), Some("a.png"));
        assert_eq!(
            upload_name(&r("image", Some("image/png"))).as_deref(),
            Some("image.png")
        );
        assert_eq!(
            upload_name(&r("", Some("image/jpeg"))).as_deref(),
            Some("file.jpg")
        );
        // a name with an extension Notion refuses stays refused, whatever the MIME type says
        assert_eq!(upload_name(&r("x.zip", Some("image/png"))), None);
        assert_eq!(upload_name(&r("notes", None)), None);
    }

    #[test]
    fn names_agree_with_their_bytes_and_fit_900_bytes() {
        let tiff = b"II*\0rest of a tiff";
        let png = b"\x89PNG\r\n\x1a\nrest";
        let bmp = [b"BM".as_slice(), &[0u8; 20]].concat();
        assert_eq!(agree_with_bytes("scan.png", tiff), "scan.tif");
        assert_eq!(agree_with_bytes("scan.png", png), "scan.png");
        assert_eq!(agree_with_bytes("old.png", &bmp), "old.bmp");
        assert!(!notion_accepts("old.bmp"));
        assert_eq!(
            agree_with_bytes("photo.jpeg", &[0xff, 0xd8, 0xff, 0]),
            "photo.jpeg"
        );
        assert_eq!(
            agree_with_bytes("report.pdf", png),
            "report.pdf",
            "only images"
        );
        assert_eq!(mime_for("scan.tif"), "image/tiff");
        let long = format!("x{}.pdf", "é".repeat(600));
        let fit = fit_name(&long, MAX_NAME_BYTES);
        assert!(
            fit.len() <= MAX_NAME_BYTES && fit.ends_with(".pdf"),
            "{}",
            fit.len()
        );
        assert_eq!(
            fit.len(),
            900 - 1,
            "a two-byte character is not cut in half"
        );
        assert_eq!(fit_name("a.png", 900), "a.png");
    }

    #[test]
    fn empty_titles_become_untitled() {
        assert_eq!(display_title("  "), "Untitled");
        assert_eq!(display_title("Plan"), "Plan");
    }
}
