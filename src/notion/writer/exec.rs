//! The step executor: one execution of an item's write steps, each step once, what each learned
//! recorded as it is learned, and the one look that decides whether a step was applied.

use std::collections::{HashMap, HashSet};

use serde_json::{json, Value};

use super::fallback::UploadFailure;
use super::{find_lost_page, placeholder, NewPage, Resource, WriteError, WriteStats, Writer};
use crate::convert::{Block, MediaSource, RichKind, RichText};
use crate::failure::{Classify, Next};
use crate::notion::client::{gave_up, NotionClient, NotionError, Position};
use crate::notion::degrade;
use crate::notion::journal::{self, Journal, Learned, LinkBody, Made, Recorded, Uploaded};
use crate::notion::listed::{self, Listed};
use crate::notion::steps::{self, Items, Parent, Path, Step, Steps};
use crate::store::write_journal::LinkRow;

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
        let mut steps = Steps::new_page(blocks);
        if recover {
            if let Some(id) = find_lost_page(&exec.client, parent, title, ours).await? {
                on_created(&id);
                let (created, items) = exec.found_page(id, &mut steps);
                exec.send_done(created, &items, Sent::Before).await?;
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
                other => unreachable!("a new page's steps start with its creation: {other:?}"),
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
                    let id = v["id"].as_str().map(str::to_owned).ok_or_else(|| {
                        WriteError::Mismatch(format!(
                            "Notion created a page under {parent} without an id"
                        ))
                    })?;
                    exec.stats.answered.saw(v["last_edited_time"].as_str());
                    exec.stats.answered.page = Some(v);
                    // The blocks sent with the creation come back in no answer.
                    exec.stats.answered.body_unanswered |= !first.is_empty();
                    break id;
                }
                Err(e @ NotionError::Ambiguous { .. }) => {
                    // A 503 that names the page it saved: created, with its first blocks, and no
                    // look-up is needed.
                    if let Some(id) = e.saved_resource() {
                        tracing::info!(
                            "Notion answered the creation 503 and named the page it saved"
                        );
                        // Saved, but its answer (the page as stored) is not in hand: the
                        // fingerprint reads the page back.
                        exec.stats.answered.unclear = true;
                        break id.to_owned();
                    }
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
                        exec.send_done(creation, &items, Sent::Now).await?;
                        exec.resuming = true;
                        exec.run(steps).await?;
                        return Ok((exec.page, exec.stats));
                    }
                    exec.before_retry(e).await?;
                }
                Err(e) => return Err(spent(&exec.client, e).into()),
            }
        };
        crate::crash::point("writer.page_created");
        on_created(&id);
        exec.stats.blocks += items.elements();
        exec.page = id;
        // The creation answers with the page, not its blocks: their ids are listed when a later
        // step needs them.
        exec.push_learned(Learned::PageBlocks(items.len()), exec.mark_of_send(&items));
        drop(first);
        exec.send_done(creation, &items, Sent::Now).await?;
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
        exec.run(Steps::body(blocks)).await?;
        Ok(exec.stats)
    }

    /// Replaces a page's body: trashes every body block, then writes `blocks` (`migrate --update`).
    /// Safe to repeat after a kill: the next run trashes whatever the interrupted one wrote.
    /// `listed`: the page's children as the conflict check just listed them (else listed now).
    pub async fn replace_body(
        &self,
        page: &str,
        blocks: &[Block],
        resources: &HashMap<String, Resource>,
        listed: Option<Vec<Listed>>,
    ) -> Result<WriteStats, WriteError> {
        let kids = match listed {
            Some(k) => k,
            None => listed::list(&self.client, page).await?,
        };
        let mut subpages = false;
        for b in &kids {
            if b.is_subpage() {
                subpages = true;
            } else {
                self.client.delete_block(&b.id).await?;
                crate::crash::point("rewrite.block_trashed");
            }
        }
        let mut exec = Exec::new(self, blocks, resources, page.to_owned());
        // Subpages stay where they are; the new body goes before them, as it was.
        exec.top = subpages.then_some(Position::Start);
        exec.run(Steps::body(blocks)).await?;
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

/// One execution of a page's steps: what each step learned so far, in step order.
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
    /// What an earlier attempt recorded, by step, while its records hold for these steps: a
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

    /// The mark of a send: the creation of the page marks as an append to it, so the steps of a
    /// body resumed in its page ([`Steps::body`]) match the steps that created it.
    fn mark_of_send(&self, items: &Items) -> String {
        let like = Step::Append {
            parent: Parent::Page,
            items: items.clone(),
        };
        journal::mark(&like.describe(), &self.kinds(items))
    }

    fn mark_of_upload(&self, step: &Step, block: &[usize]) -> String {
        let source = steps::block_at(self.blocks, block).and_then(|b| match b.media() {
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
            // The steps differ from the recorded ones from here (the page changed in OneNote):
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
    async fn send_done(&mut self, n: usize, items: &Items, sent: Sent) -> Result<(), WriteError> {
        if self.w.journal.is_none() {
            return Ok(());
        }
        let links = self.link_rows(n, items, sent).await?;
        let j = self.w.journal.as_ref().expect("checked");
        j.step(n, &self.marks[n], &self.learned[n], links).await?;
        Ok(())
    }

    /// The Notion blocks send step `n` wrote that hold links to pages not migrated yet, with what
    /// they hold. A block Notion holds as another type (a placeholder where a file could not be
    /// carried over) holds no link; the ids of carried children are listed (an append answers
    /// only its first-level blocks).
    async fn link_rows(
        &mut self,
        n: usize,
        items: &Items,
        sent: Sent,
    ) -> Result<Vec<LinkRow>, WriteError> {
        let wanted = link_candidates(self.blocks, items, sent);
        if wanted.is_empty() {
            return Ok(Vec::new());
        }
        // Listed, not recorded: the record of this step follows with its links, in one
        // transaction. Recorded here first, a kill before that record would keep the step without
        // its links, and a resume would skip the step and never record them.
        self.list_page_blocks(n).await?;
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
    fn found_page(&mut self, id: String, steps: &mut Steps<'_>) -> (usize, Items) {
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
        unreachable!("a new page's steps start with its creation")
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
                self.stats.answered.unclear = true;
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
                        // Applied by an earlier attempt: its answer (and time) is not in hand.
                        self.stats.answered.unclear = true;
                        if *parent == Parent::Page {
                            self.placed(&made);
                        }
                        uploads.clear();
                        self.push_learned(Learned::Blocks(made), mark);
                        self.send_done(n, items, Sent::Before).await?;
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
            crate::crash::point("writer.blocks_appended");
            drop(body);
            self.stats.blocks += items.elements();
            if *parent == Parent::Page {
                self.placed(&made);
            }
            self.push_learned(Learned::Blocks(made), mark);
            self.send_done(n, items, Sent::Now).await?;
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
        if self.list_page_blocks(n).await? {
            self.done(n).await?;
        }
        Ok(())
    }

    /// [`Self::page_blocks`] without the record; whether they were listed now.
    async fn list_page_blocks(&mut self, n: usize) -> Result<bool, WriteError> {
        let Learned::PageBlocks(count) = self.learned[n] else {
            return Ok(false);
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
        Ok(true)
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
    /// prefix of the steps explains (it was changed outside notebridge). `fresh`: list again even
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
        let total = match steps::block_at(self.blocks, items.parent_path()) {
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
                    steps::block_at(self.blocks, &p).map_or("?", Block::type_name)
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
            let b = steps::block_at(self.blocks, path).expect("planned blocks exist");
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
        crate::crash::point("writer.file_uploaded");
        self.done(step).await
    }

    /// The request JSON of a send: each block as converted, its carried children with it, uploaded
    /// files pointed at, placeholders where a file could not be carried over.
    fn request(&mut self, items: &Items, done: &Done) -> Vec<Value> {
        let blocks = self.blocks;
        steps::request_json(blocks, items, |b, path| self.block_json(b, path, done))
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
                    for b in &created {
                        self.stats.answered.saw(b["last_edited_time"].as_str());
                    }
                    match parent {
                        Parent::Page if self.top.is_none() => {
                            self.stats.answered.body.blocks(&created)
                        }
                        // Placed among blocks, or under a block whose answer is then out of date.
                        _ => self.stats.answered.body_unanswered = true,
                    }
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
                // A 503 that names the blocks it saved, one per block sent: appended, and no
                // look-up is needed. Any other count is looked up as an unclear answer is.
                Err(e)
                    if e.saved_children()
                        .is_some_and(|ids| ids.len() == body.len()) =>
                {
                    let ids = e.saved_children().unwrap_or_default();
                    // The blocks as Notion stored them (and their time) came back in no answer:
                    // the fingerprint reads the page back.
                    self.stats.answered.unclear = true;
                    tracing::info!(
                        blocks = ids.len(),
                        "Notion answered the append 503 and named the blocks it saved"
                    );
                    return Ok(ids
                        .iter()
                        .cloned()
                        .zip(body.iter())
                        .map(|(id, sent)| {
                            let kind = sent["type"].as_str().map(str::to_owned);
                            // What was sent was saved whole: its children are what it carried.
                            let has_children = kind.as_deref().map(|k| {
                                sent[k]["children"]
                                    .as_array()
                                    .is_some_and(|c| !c.is_empty())
                            });
                            Made {
                                id,
                                has_children,
                                kind,
                            }
                        })
                        .collect());
                }
                Err(e @ NotionError::Ambiguous { .. }) => {
                    if let Some(made) = self.look(parent_id, items, true).await? {
                        self.stats.answered.unclear = true;
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

/// An unclear write after retries of the item in this attempt goes up as "gave up after that many
/// attempts", so the queue counts them against the item's one retry budget.
fn spent(c: &NotionClient, e: NotionError) -> NotionError {
    let retries = c.retries();
    match e {
        NotionError::Ambiguous { what, detail, .. } if retries.here() > 0 => {
            gave_up(&retries, &what, &detail)
        }
        other => other,
    }
}

/// The blocks a send writes that hold links to pages not migrated yet: (index among the send's
/// first-level blocks, index among its carried children if it is one, what it holds).
fn link_candidates(
    blocks: &[Block],
    items: &Items,
    sent: Sent,
) -> Vec<(usize, Option<usize>, LinkBody)> {
    let of = |b: &Block| match sent {
        Sent::Now => LinkBody::of(b),
        Sent::Before => LinkBody::of(&unresolved(b)),
    };
    let of_row = |r: &[Vec<RichText>]| match sent {
        Sent::Now => LinkBody::of_row(r),
        Sent::Before => {
            let mut r = r.to_vec();
            r.iter_mut().flatten().for_each(forget_target);
            LinkBody::of_row(&r)
        }
    };
    let mut out = Vec::new();
    match items {
        Items::Rows { table, range } => {
            if let Some(Block::Table { rows, .. }) = steps::block_at(blocks, table) {
                for (i, r) in rows[range.clone()].iter().enumerate() {
                    out.extend(of_row(r).map(|b| (i, None, b)));
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
                let b = steps::block_at(blocks, &path).expect("planned blocks exist");
                out.extend(of(b).map(|l| (i, None, l)));
                match b {
                    Block::Table { rows, .. } => {
                        for (j, r) in rows[..*c].iter().enumerate() {
                            out.extend(of_row(r).map(|l| (i, Some(j), l)));
                        }
                    }
                    other => {
                        for (j, kid) in other.children()[..*c].iter().enumerate() {
                            out.extend(of(kid).map(|l| (i, Some(j), l)));
                        }
                    }
                }
                path.pop();
            }
        }
    }
    out
}

/// Who sent a step whose links are recorded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Sent {
    /// This attempt, from the blocks as converted now: a link resolved now was written resolved.
    Now,
    /// An earlier attempt (the step was found applied): its links were written from an earlier
    /// conversion, which may not have known pages migrated since. Every block holding a page link
    /// is recorded as if none was known, so the link pass sends each resolved.
    Before,
}

/// A copy of a block holding a page link, its links as if their pages were not migrated; a block
/// without one as it is (it is recorded as such: not at all).
fn unresolved(b: &Block) -> std::borrow::Cow<'_, Block> {
    let linked = b.rich_texts().iter().any(|rt| {
        rt.iter()
            .any(|r| matches!(r.kind, RichKind::PageLink { .. }))
    });
    if !linked {
        return std::borrow::Cow::Borrowed(b);
    }
    let mut c = b.clone();
    c.visit_rich_text_mut(&mut forget_target);
    std::borrow::Cow::Owned(c)
}

fn forget_target(r: &mut RichText) {
    if let RichKind::PageLink { target, .. } = &mut r.kind {
        *target = None;
    }
}

/// Media block types whose source may be a OneNote resource.
const MEDIA: &[&str] = &["image", "file", "pdf", "audio", "video"];
/// Whether a block Notion holds stands for the block we wrote: the same type, or a placeholder
/// paragraph where a media block could not be carried over.
fn same_kind(got: &str, want: &str) -> bool {
    got == want || (got == "paragraph" && (MEDIA.contains(&want) || want == "embed"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::failure::{Retries, ITEM_RETRIES};
    use std::sync::Arc;

    #[test]
    fn links_of_a_step_an_earlier_attempt_sent_are_recorded_though_resolved_now() {
        use crate::convert::{PageTarget, TextBlock};
        let link = |target: Option<PageTarget>| RichText {
            kind: RichKind::PageLink {
                content: "Plan".into(),
                onenote_page_id: "{A}".into(),
                target,
            },
            annotations: Default::default(),
        };
        let resolved = Some(PageTarget {
            id: "a-id".into(),
            title: "Plan".into(),
        });
        let blocks = vec![
            Block::Paragraph(TextBlock::new(vec![RichText::plain("no link")])),
            Block::Paragraph(TextBlock::new(vec![
                RichText::plain("See "),
                link(resolved),
            ])),
        ];
        let items = Items::Blocks {
            under: Vec::new(),
            range: 0..2,
            carried: vec![0, 0],
        };
        // Written now, resolved: nothing for the link pass.
        assert!(link_candidates(&blocks, &items, Sent::Now).is_empty());
        // Found written by an attempt that may not have known the page: recorded, to be sent
        // resolved by the link pass, as written at its position.
        let before = link_candidates(&blocks, &items, Sent::Before);
        assert_eq!(before.len(), 1, "{before:?}");
        let (i, carried, body) = &before[0];
        assert_eq!((*i, *carried), (1, None));
        let unresolved =
            Block::Paragraph(TextBlock::new(vec![RichText::plain("See "), link(None)]));
        assert_eq!(Some(body.clone()), LinkBody::of(&unresolved));
    }

    #[test]
    fn unclear_writes_the_writer_retried_carry_their_count() {
        let unclear = || NotionError::Ambiguous {
            what: "appending".into(),
            detail: "504".into(),
            saved: None,
        };
        let client = || {
            let rate = crate::notion::rate::NotionRate::new(
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
}
