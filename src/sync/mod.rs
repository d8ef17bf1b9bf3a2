//! `sync`'s structural pass: after the queue has created what is new and rewritten what changed,
//! it retitles, moves, reorders and trashes what OneNote renamed, moved, reordered and deleted
//! ([`diff`] works out what), never over a person's edit.
//!
//! Each step on a page first checks that the page still holds what notebridge last wrote there
//! (`notion::conflict` for a page or row, its title, place and children for a notebook, section
//! group or section page). A page that does not is a conflict: left where and as it is, recorded,
//! and never touched by sync again. A page found unedited is recorded as checked before its write,
//! so that a step resumed after a crash does not take its own write for a person's edit; the
//! write's answer gives the page's new fingerprint, recorded with its new title and place. Every
//! write is safe to repeat (a title, a parent, a trash flag), and the steps are worked out again
//! from the records on every run: a step cut short is simply done again.
//!
//! A deleted item is trashed whole (its deleted pages go with it, and Notion restores them with
//! it) when it and every deleted page under it are unedited and hold nothing notebridge did not
//! write; otherwise what can go goes one by one and the rest stays.

pub mod diff;

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use serde::Serialize;
use serde_json::{json, Value};

use self::diff::{Changes, Deleted, Gone, Sides, Update};
use crate::clock::{Clock, UnixMillis};
use crate::failure::{Class, Classify, Next, Scope};
use crate::notion::client::{title_rich_text, MoveTo, NotionClient, NotionError};
use crate::notion::conflict;
use crate::notion::database::names as row_names;
use crate::queue::cancel::Cancel;
use crate::store::jobs::RunToken;
use crate::store::moves::{Moves, Recognised, Recreated};
use crate::store::notion_items::ItemKind;
use crate::store::sync::{Change, Placed, Placing};
use crate::store::{Db, StoreError};

/// What to do with items deleted in OneNote (`--deletions`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Deletions {
    /// Move them to Notion's trash (recoverable there for 30 days).
    #[default]
    Trash,
    /// Report them and leave them.
    Keep,
}

/// Why the pass could not go on.
#[derive(Debug, thiserror::Error)]
pub enum SyncError {
    /// Notion failed in a way that stops the run (an outage, the budget, a token).
    #[error(transparent)]
    Notion(#[from] NotionError),
    /// The state database failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl Classify for SyncError {
    fn class(&self) -> Class {
        match self {
            SyncError::Notion(e) => e.class(),
            SyncError::Store(e) => e.class(),
        }
    }
}

/// What the pass did (and, in a dry run, would do).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Applied {
    /// Pages, rows and databases retitled.
    pub renamed: usize,
    /// Pages and rows moved to another parent.
    pub moved: usize,
    /// Pages put back in OneNote's order among their siblings, or rows given their new `Order`.
    pub reordered: usize,
    /// Deleted items moved to Notion's trash (each item, its deleted pages included).
    pub trashed: usize,
    /// Deleted items left in Notion (`--deletions keep`, or holding what a person wrote).
    pub kept_deleted: usize,
    /// Items a person edited in Notion, left as they are (found now).
    pub conflicts: usize,
    /// Sections laid out as databases that OneNote moved: Notion's API cannot move a database,
    /// so they stay where they are.
    pub unmovable: usize,
    /// Steps that failed (named in `problems`); the next sync tries them again.
    pub failed: usize,
    /// What failed, or was left, and why.
    pub problems: Vec<String>,
    /// Pages OneNote gave a new id that were recognised as the pages already written
    /// (`store::moves`), by how; each keeps its Notion page.
    pub moved_by: MovedBy,
    /// Pages that went while pages of their title and created time came, none told apart: a
    /// deletion and a creation.
    pub recreated: Vec<Recreated>,
    /// Each change applied (in a dry run: each change that would be), in words.
    pub changes: Vec<String>,
    /// The deadline or a signal stopped the pass with steps left.
    pub stopped: bool,
    /// Pages a move took a child from or gave one to, with the minute of the move: Notion stamps
    /// both parents as edited, so their fingerprints are taken again.
    #[serde(skip)]
    touched: HashMap<String, String>,
}

/// How many moved pages were recognised each way.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct MovedBy {
    /// By their `onenote:` link GUID.
    pub guid: usize,
    /// By their created time and title.
    pub created_and_title: usize,
}

impl Applied {
    /// Counts what the matching of moved pages found.
    pub fn recognised(&mut self, moves: &Moves) {
        for m in &moves.moved {
            match m.by {
                Recognised::Guid => self.moved_by.guid += 1,
                Recognised::CreatedAndTitle => self.moved_by.created_and_title += 1,
            }
        }
        self.recreated.extend(moves.recreated.iter().cloned());
    }
}

/// What the pass works with.
pub struct Pass<'a> {
    /// The state.
    pub db: &'a Arc<Db>,
    /// Notion.
    pub notion: &'a NotionClient,
    /// The run lock's token (`None`: a dry run, which only counts).
    pub owner: Option<&'a RunToken>,
    /// Time.
    pub clock: &'a Clock,
    /// `--deletions`.
    pub deletions: Deletions,
    /// Take no new step after this time.
    pub deadline: Option<UnixMillis>,
    /// The run's stop tree.
    pub cancel: &'a Cancel,
}

/// What a step's write changed of a page, owned, to be recorded off the runtime.
struct Placement {
    title: String,
    parent: String,
    moved: bool,
    row_order: Option<i64>,
    fingerprint: Option<conflict::Fingerprint>,
}

/// What one inventory key holds on both sides, loaded.
struct Loaded {
    notebooks: Vec<crate::store::inventory::Notebook>,
    placed: Vec<Placed>,
    databases: Vec<crate::store::sync::PlacedDatabase>,
    unreadable: HashSet<String>,
    page_sections: HashMap<String, String>,
    targets: HashSet<String>,
    /// In a dry run, the moves a run would recognise (its records are re-keyed here only).
    moves: Moves,
    /// Items OneNote moved to another key of the run, which holds their pages now.
    elsewhere: Vec<Placed>,
}

impl Loaded {
    fn sides(&self) -> Sides<'_> {
        Sides {
            notebooks: &self.notebooks,
            placed: &self.placed,
            databases: &self.databases,
            unreadable: &self.unreadable,
            page_sections: &self.page_sections,
            targets: &self.targets,
        }
    }
}

/// The verdict of a check.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Verdict {
    /// Unedited; the Notion ids of the child pages and databases it holds.
    Clear(HashSet<String>),
    /// A person changed it in Notion.
    Edited(String),
}

fn norm(id: &str) -> String {
    id.replace('-', "").to_ascii_lowercase()
}

/// A title as Notion shows what [`title_rich_text`] wrote.
fn shown_title(title: &str) -> String {
    title_rich_text(title)
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|r| r["text"]["content"].as_str())
        .collect()
}

/// A page object's title, whatever its title property is called.
fn page_title(page: &Value) -> Option<String> {
    let props = page["properties"].as_object()?;
    let title = props.values().find(|v| v["type"] == "title")?;
    Some(
        title["title"]
            .as_array()?
            .iter()
            .filter_map(|r| r["plain_text"].as_str().or(r["text"]["content"].as_str()))
            .collect(),
    )
}

/// A page object's parent id (a page or a data source).
fn parent_id(page: &Value) -> Option<String> {
    let p = &page["parent"];
    let ty = p["type"].as_str()?;
    p[ty].as_str().map(norm)
}

impl Pass<'_> {
    /// Runs the pass over the inventory keys `keys`.
    pub async fn run(&self, keys: &[String]) -> Result<Applied, SyncError> {
        let mut out = Applied::default();
        for key in keys {
            self.key(key, &mut out).await?;
            if out.stopped {
                return Ok(out);
            }
        }
        // Deletions once every key's moves are done: what one import of the run lost may have
        // gone to another, whose page (or the rows inside a database that goes) is moved first.
        for key in keys {
            self.deletions(key, &mut out).await?;
            if out.stopped {
                break;
            }
        }
        Ok(out)
    }

    async fn load(&self, key: &str) -> Result<Loaded, SyncError> {
        let (k, dry) = (key.to_owned(), self.owner.is_none());
        Ok(self
            .db
            .call(move |db| {
                let targets: HashSet<String> = db.plan_targets_in_order(&k)?.into_iter().collect();
                let placed = db.placed_items(&k)?;
                // A run re-keys them before its plan (`Db::rekey_moves`); a dry run sees them so.
                let moves = if dry {
                    db.find_moves(&k)?
                } else {
                    Moves::default()
                };
                let elsewhere = db.moved_elsewhere(&k)?;
                let (gone, mut placed): (Vec<Placed>, Vec<Placed>) = placed
                    .into_iter()
                    .partition(|p| elsewhere.contains(&p.item_id));
                for m in &moves.moved {
                    if let Some(p) = placed.iter_mut().find(|p| p.item_id == m.from) {
                        p.item_id = m.to.clone();
                    }
                }
                Ok::<_, StoreError>(Loaded {
                    notebooks: db.inventory(&k)?,
                    placed,
                    databases: db.placed_databases(&k)?,
                    unreadable: db.unreadable_sections(&k)?,
                    page_sections: db.page_sections(&k)?,
                    targets,
                    moves,
                    elsewhere: gone,
                })
            })
            .await?)
    }

    fn out_of_time(&self) -> bool {
        self.cancel.is_stopped() || self.deadline.is_some_and(|d| self.clock.now_ms() >= d)
    }

    async fn key(&self, key: &str, out: &mut Applied) -> Result<(), SyncError> {
        let mut loaded = self.load(key).await?;
        if self.settle_in_doubt(key, &loaded).await? {
            loaded = self.load(key).await?;
        }
        out.recognised(&loaded.moves);
        if !loaded.elsewhere.is_empty() {
            out.moved_by.guid += loaded
                .elsewhere
                .iter()
                .filter(|p| p.kind == ItemKind::Page)
                .count();
            if let Some(owner) = self.owner {
                let (o, k) = (owner.clone(), key.to_owned());
                let items: Vec<String> =
                    loaded.elsewhere.iter().map(|p| p.item_id.clone()).collect();
                self.db
                    .call(move |db| db.forget_moved(&o, &k, &items))
                    .await?;
            }
        }
        let changes: Changes = diff::changes(&loaded.sides());
        out.unmovable += changes.unmovable.len();
        for s in &changes.unmovable {
            out.problems.push(format!(
                "section {s} was moved in OneNote; its Notion database stays where it is (Notion's \
                 API cannot move a database): move it in Notion by hand"
            ));
        }
        let placed: HashMap<&str, &Placed> = loaded
            .placed
            .iter()
            .map(|p| (p.item_id.as_str(), p))
            .collect();
        for r in &changes.database_retitles {
            if self.out_of_time() {
                out.stopped = true;
                return Ok(());
            }
            out.renamed += 1;
            out.changes.push(format!(
                "rename the database of section {} to {:?}",
                r.section, r.title
            ));
            let Some(owner) = self.owner else { continue };
            match self
                .notion
                .set_database_title(&r.database_id, &r.title)
                .await
            {
                Ok(_) => {
                    let (o, k, s, t) = (
                        owner.clone(),
                        key.to_owned(),
                        r.section.clone(),
                        r.title.clone(),
                    );
                    self.db
                        .call(move |db| db.sync_database_retitled(&o, &k, &s, &t))
                        .await?;
                }
                Err(e) => self.failed(out, &format!("renaming database {}", r.database_id), e)?,
            }
        }
        for u in &changes.updates {
            if self.out_of_time() {
                out.stopped = true;
                return Ok(());
            }
            let Some(p) = placed.get(u.item.as_str()) else {
                continue;
            };
            self.update(key, p, u, out).await?;
        }
        // Moves put pages after their new siblings: the order is worked out on what they left.
        let loaded = self.load(key).await?;
        let placed: HashMap<&str, &Placed> = loaded
            .placed
            .iter()
            .map(|p| (p.item_id.as_str(), p))
            .collect();
        for u in diff::reorders(&loaded.sides()) {
            if self.out_of_time() {
                out.stopped = true;
                return Ok(());
            }
            let Some(p) = placed.get(u.item.as_str()) else {
                continue;
            };
            self.update(key, p, &u, out).await?;
        }
        Ok(())
    }

    /// Trashes (or keeps) what OneNote deleted from `key`, then takes again the fingerprints a
    /// move stamped.
    async fn deletions(&self, key: &str, out: &mut Applied) -> Result<(), SyncError> {
        let loaded = self.load(key).await?;
        let placed: HashMap<&str, &Placed> = loaded
            .placed
            .iter()
            .map(|p| (p.item_id.as_str(), p))
            .collect();
        for d in &diff::changes(&loaded.sides()).deleted {
            if self.out_of_time() {
                out.stopped = true;
                return Ok(());
            }
            self.delete(key, &placed, d, out).await?;
        }
        self.refresh_touched(key, out).await
    }

    /// A step cut short after its check may have moved its page without the move being
    /// recorded (or, on its way back to its parent's end, left it under the stage): the page's
    /// parent is read from Notion and recorded before anything is worked out.
    /// Returns whether it recorded anything.
    async fn settle_in_doubt(&self, key: &str, loaded: &Loaded) -> Result<bool, SyncError> {
        let Some(owner) = self.owner else {
            return Ok(false);
        };
        let mut settled = false;
        for p in loaded.placed.iter().filter(|p| p.checked) {
            let page = match self.notion.page(&p.page_id).await {
                Ok(page) => page,
                Err(e) if e.class().scope == Scope::Item => continue,
                Err(e) => return Err(e.into()),
            };
            let Some(now) = parent_id(&page) else {
                continue;
            };
            if now == norm(&p.parent) {
                continue;
            }
            let fingerprint = match (&p.fingerprint, p.kind) {
                (Some(f), ItemKind::Page) => Some(conflict::after_own_write(&page, f)),
                _ => None,
            };
            let parent = page["parent"][page["parent"]["type"].as_str().unwrap_or("")]
                .as_str()
                .unwrap_or_default()
                .to_owned();
            // Still checked: its step is not done.
            let placement = Placement {
                title: p.title.clone(),
                parent,
                moved: true,
                row_order: None,
                fingerprint,
            };
            self.record(owner, key, &p.item_id, placement, true).await?;
            settled = true;
        }
        Ok(settled)
    }

    /// Takes again the fingerprint of each unedited page of ours that a move stamped as edited
    /// (module doc); one a person edited since keeps its old one, so the edit is seen later.
    async fn refresh_touched(&self, key: &str, out: &mut Applied) -> Result<(), SyncError> {
        let Some(owner) = self.owner else {
            return Ok(());
        };
        if out.touched.is_empty() {
            return Ok(());
        }
        let touched = std::mem::take(&mut out.touched);
        let loaded = self.load(key).await?;
        for p in loaded.placed.iter().filter(|p| p.kind == ItemKind::Page) {
            let (Some(minute), Some(recorded)) = (touched.get(&norm(&p.page_id)), &p.fingerprint)
            else {
                continue;
            };
            let ours: HashSet<String> = {
                let (db, id) = (self.db.clone(), p.page_id.clone());
                db.call(move |db| db.notion_children_of(&id))
                    .await?
                    .iter()
                    .map(|i| norm(i))
                    .collect()
            };
            let seen = match conflict::read(self.notion, &p.page_id, &ours).await {
                Ok((seen, _)) => seen,
                Err(e) => {
                    self.failed(out, &format!("reading page {}", p.page_id), e)?;
                    continue;
                }
            };
            let allowed = conflict::Fingerprint {
                edited: minute.clone().max(recorded.edited.clone()),
                ..recorded.clone()
            };
            if conflict::edited(Some(&allowed), &seen).is_some() {
                continue;
            }
            let placement = Placement {
                title: p.title.clone(),
                parent: p.parent.clone(),
                moved: false,
                row_order: None,
                fingerprint: Some(seen.now),
            };
            self.record(owner, key, &p.item_id, placement, false)
                .await?;
        }
        Ok(())
    }

    /// A Notion failure of one step: counted, or the run's end when it is the run's.
    fn failed(&self, out: &mut Applied, what: &str, e: NotionError) -> Result<(), SyncError> {
        let c = e.class();
        if matches!(c.scope, Scope::Run | Scope::Account) || c.next == Next::Stop {
            return Err(e.into());
        }
        out.failed += 1;
        out.problems.push(format!("{what}: {e}"));
        Ok(())
    }

    /// Whether `p`'s page still holds what notebridge last wrote there (recorded checks stand).
    async fn check(&self, p: &Placed) -> Result<Verdict, NotionError> {
        if p.kind == ItemKind::Page {
            let ours: HashSet<String> = {
                let (db, id) = (self.db.clone(), p.page_id.clone());
                db.call(move |db| db.notion_children_of(&id))
                    .await
                    .unwrap_or_default()
                    .iter()
                    .map(|i| norm(i))
                    .collect()
            };
            let (seen, listed) = conflict::read(self.notion, &p.page_id, &ours).await?;
            let children = listed
                .iter()
                .filter(|l| !l.trashed && (l.is_subpage() || l.is_database()))
                .map(|l| norm(&l.id))
                .collect();
            if p.checked {
                return Ok(Verdict::Clear(children));
            }
            return Ok(match conflict::edited(p.fingerprint.as_ref(), &seen) {
                None => Verdict::Clear(children),
                Some(e) => Verdict::Edited(e.describe().to_owned()),
            });
        }
        // A notebook, section group or section page: notebridge wrote its title and place only.
        let page = self.notion.page(&p.page_id).await?;
        let children = crate::notion::listed::list(self.notion, &p.page_id)
            .await?
            .iter()
            .filter(|l| !l.trashed && (l.is_subpage() || l.is_database()))
            .map(|l| norm(&l.id))
            .collect();
        if p.checked {
            return Ok(Verdict::Clear(children));
        }
        if page_title(&page).is_some_and(|t| t != shown_title(&p.title)) {
            return Ok(Verdict::Edited("renamed in Notion".into()));
        }
        if parent_id(&page).is_some_and(|id| id != norm(&p.parent)) {
            return Ok(Verdict::Edited("moved in Notion".into()));
        }
        Ok(Verdict::Clear(children))
    }

    /// Records `p` as a conflict that OneNote `change`d.
    async fn conflict(
        &self,
        key: &str,
        p: &Placed,
        change: Change,
        why: &str,
        out: &mut Applied,
    ) -> Result<(), SyncError> {
        out.conflicts += 1;
        tracing::info!(item = %p.item_id, change = change.as_str(), "left as edited in Notion: {why}");
        let Some(owner) = self.owner else {
            return Ok(());
        };
        let (o, k, i, page, now) = (
            owner.clone(),
            key.to_owned(),
            p.item_id.clone(),
            p.page_id.clone(),
            self.clock.now_ms(),
        );
        self.db
            .call(move |db| db.sync_conflict(&o, &k, &i, &page, change, now))
            .await?;
        crate::crash::point("sync.conflict_recorded");
        Ok(())
    }

    /// One retitle and/or move (or a reorder: a move to its own parent).
    async fn update(
        &self,
        key: &str,
        p: &Placed,
        u: &Update,
        out: &mut Applied,
    ) -> Result<(), SyncError> {
        let count = |out: &mut Applied| {
            if u.title.is_some() {
                out.renamed += 1;
            }
            match &u.to {
                Some(to) if norm(to.id()) == norm(&p.parent) => out.reordered += 1,
                Some(_) => out.moved += 1,
                None if u.row.is_some() && u.title.is_none() => out.reordered += 1,
                None => {}
            }
        };
        let said = self.describe(p, u);
        let Some(owner) = self.owner else {
            count(out);
            out.changes.push(said);
            return Ok(());
        };
        match self.check(p).await {
            Ok(Verdict::Clear(_)) => {}
            Ok(Verdict::Edited(why)) => return self.conflict(key, p, u.change, &why, out).await,
            Err(e) => return self.failed(out, &format!("checking page {}", p.page_id), e),
        }
        if !p.checked {
            let (o, k, i) = (owner.clone(), key.to_owned(), p.item_id.clone());
            self.db.call(move |db| db.sync_checked(&o, &k, &i)).await?;
        }
        crate::crash::point("sync.checked");
        let mut answer = None;
        let mut title_written = p.title.clone();
        if let Some(stage) = &u.stage {
            // On the way to its parent's end; recorded there, so that a run cut short now
            // finds it where it is (`settle_in_doubt` would too).
            let via = MoveTo::Page(stage.clone());
            let a = match self.notion.move_page(&p.page_id, &via).await {
                Ok(a) => a,
                Err(e) => return self.failed(out, &format!("moving page {}", p.page_id), e),
            };
            crate::crash::point("sync.staged");
            self.touched(out, &a, &[&p.parent, stage]);
            let fingerprint = match (&p.fingerprint, p.kind) {
                (Some(f), ItemKind::Page) => Some(conflict::after_own_write(&a, f)),
                _ => None,
            };
            let placement = Placement {
                title: p.title.clone(),
                parent: stage.clone(),
                moved: true,
                row_order: None,
                fingerprint,
            };
            self.record(owner, key, &p.item_id, placement, true).await?;
        }
        if let Some(to) = &u.to {
            match self.notion.move_page(&p.page_id, to).await {
                Ok(a) => {
                    let from = u.stage.as_deref().unwrap_or(&p.parent);
                    self.touched(out, &a, &[from, to.id()]);
                    answer = Some(a);
                }
                Err(e) => return self.failed(out, &format!("moving page {}", p.page_id), e),
            }
            crate::crash::point("sync.moved");
        }
        let row_props = match &u.row {
            Some(r) => Some(self.row_properties(key, p, u, r).await?),
            None => None,
        };
        let result = match (&u.title, row_props) {
            (_, Some(props)) => self.notion.set_properties(&p.page_id, props).await,
            (Some(t), None) => self.notion.set_title(&p.page_id, t).await,
            (None, None) => Ok(answer.clone().unwrap_or(Value::Null)),
        };
        match result {
            Ok(a) => {
                if !a.is_null() {
                    answer = Some(a);
                }
            }
            Err(e) => return self.failed(out, &format!("updating page {}", p.page_id), e),
        }
        if let Some(t) = &u.title {
            title_written = t.clone();
        }
        crate::crash::point("sync.written");
        let fingerprint = match (&answer, &p.fingerprint) {
            (Some(a), Some(f)) if p.kind == ItemKind::Page => Some(conflict::after_own_write(a, f)),
            _ => None,
        };
        let parent =
            u.to.as_ref()
                .map_or(p.parent.clone(), |t| t.id().to_owned());
        let placement = Placement {
            title: title_written,
            parent,
            moved: u.to.is_some(),
            row_order: u.row.as_ref().map(|r| r.order),
            fingerprint,
        };
        self.record(owner, key, &p.item_id, placement, false)
            .await?;
        crate::crash::point("sync.recorded");
        count(out);
        out.changes.push(said);
        Ok(())
    }

    /// Records what a step's write changed of `item`'s page (its check cleared, or kept while
    /// its step goes on: `still_checked`).
    async fn record(
        &self,
        owner: &RunToken,
        key: &str,
        item: &str,
        pl: Placement,
        still_checked: bool,
    ) -> Result<(), SyncError> {
        let (o, k, i) = (owner.clone(), key.to_owned(), item.to_owned());
        self.db
            .call(move |db| {
                db.sync_placed(
                    &o,
                    &k,
                    &i,
                    &Placing {
                        title: &pl.title,
                        parent: &pl.parent,
                        moved: pl.moved,
                        row_order: pl.row_order,
                        fingerprint: pl.fingerprint.as_ref(),
                    },
                )?;
                if still_checked {
                    db.sync_checked(&o, &k, &i)?;
                }
                Ok::<_, StoreError>(())
            })
            .await?;
        Ok(())
    }

    /// An update in words.
    fn describe(&self, p: &Placed, u: &Update) -> String {
        let what = format!("{} {:?}", p.kind.as_str().replace('_', " "), p.title);
        let mut parts = Vec::new();
        if let Some(t) = &u.title {
            parts.push(format!("rename {what} to {t:?}"));
        }
        match &u.to {
            Some(to) if norm(to.id()) == norm(&p.parent) => {
                parts.push(format!("put {what} back in OneNote's order"))
            }
            Some(to) => parts.push(format!("move {what} under {}", to.id())),
            None => {}
        }
        if let (Some(r), None) = (&u.row, &u.to) {
            parts.push(format!(
                "set {what}'s Order to {} and Level to {}",
                r.order, r.level
            ));
        }
        parts.join("; ")
    }

    /// Notes `parents` as stamped by a move answered with `answer` (the moved page).
    fn touched(&self, out: &mut Applied, answer: &Value, parents: &[&str]) {
        let Some(minute) = answer["last_edited_time"].as_str().map(conflict::minute) else {
            return;
        };
        for p in parents {
            let e = out.touched.entry(norm(p)).or_default();
            if *e < minute {
                *e = minute.clone();
            }
        }
    }

    /// A row's properties that follow OneNote: its name, order and level, and every value the
    /// inventory holds when the page becomes a row now.
    async fn row_properties(
        &self,
        key: &str,
        p: &Placed,
        u: &Update,
        r: &diff::RowValues,
    ) -> Result<Value, SyncError> {
        let title = u.title.clone().unwrap_or_else(|| p.title.clone());
        let mut props = json!({
            row_names::NAME: {"title": title_rich_text(&title)},
            row_names::ORDER: {"number": r.order},
            row_names::LEVEL: {"number": r.level},
        });
        if r.whole {
            let (k, i) = (key.to_owned(), p.item_id.clone());
            if let Some(v) = self.db.call(move |db| db.page_values(&k, &i)).await? {
                let date =
                    |t: Option<String>| t.map_or(Value::Null, |t| json!({"date": {"start": t}}));
                if let Some(c) = v.created {
                    props[row_names::CREATED] = date(Some(c));
                }
                if let Some(m) = v.last_modified {
                    props[row_names::MODIFIED] = date(Some(m));
                }
            }
        }
        Ok(props)
    }

    /// One deleted subtree: trashed whole when nothing in it stops that, else part by part.
    async fn delete(
        &self,
        key: &str,
        placed: &HashMap<&str, &Placed>,
        d: &Deleted,
        out: &mut Applied,
    ) -> Result<(), SyncError> {
        let members = 1 + d.under.len();
        let what = match placed.get(d.top.item.as_str()) {
            Some(p) => format!("{} {:?}", p.kind.as_str().replace('_', " "), p.title),
            None => format!("the database of section {}", d.top.item),
        };
        let with = match d.under.len() {
            0 => String::new(),
            n => format!(" with the {n} deleted pages under it"),
        };
        if self.deletions == Deletions::Keep {
            out.kept_deleted += members;
            out.changes.push(format!(
                "keep {what}{with} (deleted in OneNote; --deletions keep)"
            ));
            return Ok(());
        }
        let Some(owner) = self.owner else {
            out.trashed += members;
            out.changes
                .push(format!("trash {what}{with} (deleted in OneNote)"));
            return Ok(());
        };
        // Every member checked once; a database's children are its rows (in `under`).
        let mut verdicts: HashMap<String, Verdict> = HashMap::new();
        for g in std::iter::once(&d.top).chain(&d.under) {
            if d.database.as_deref() == Some(g.page_id.as_str()) {
                continue;
            }
            let Some(p) = placed.get(g.item.as_str()) else {
                // A section database inside a deleted page: its rows are members.
                continue;
            };
            let v = match self.check(p).await {
                Ok(v) => v,
                Err(e) => return self.failed(out, &format!("checking page {}", p.page_id), e),
            };
            verdicts.insert(g.item.clone(), v);
        }
        // Eligible: unedited, and every child page or database it holds goes too (children
        // first, so a parent sees its children's verdicts).
        let members: Vec<&Gone> = std::iter::once(&d.top).chain(&d.under).collect();
        let mut eligible: HashSet<String> = HashSet::new();
        for g in members.iter().rev() {
            let ok = match verdicts.get(&g.item) {
                Some(Verdict::Clear(children)) => children.iter().all(|c| eligible.contains(c)),
                Some(Verdict::Edited(_)) => false,
                // A database: when every row of it goes.
                None => members
                    .iter()
                    .filter(|m| !std::ptr::eq(**m, *g) && d.database.as_deref() == Some(&g.page_id))
                    .all(|m| eligible.contains(&norm(&m.page_id))),
            };
            if ok {
                eligible.insert(norm(&g.page_id));
            }
        }
        let mut done: HashSet<&str> = HashSet::new();
        for g in &members {
            if done.contains(g.item.as_str()) {
                continue;
            }
            if let Some(Verdict::Edited(why)) = verdicts.get(&g.item) {
                if let Some(p) = placed.get(g.item.as_str()) {
                    let why = why.clone();
                    self.conflict(key, p, Change::Deleted, &why, out).await?;
                }
                continue;
            }
            if !eligible.contains(&norm(&g.page_id)) {
                out.kept_deleted += 1;
                out.problems.push(format!(
                    "{} {} was deleted in OneNote; its Notion page {} holds pages that a person \
                     wrote or edited there, so it stays",
                    g.kind.as_str(),
                    g.item,
                    g.page_id
                ));
                continue;
            }
            // Only the top of what goes is trashed: what is under it goes with it.
            if !std::ptr::eq(*g, &d.top) && eligible.contains(&norm(&g.parent)) {
                continue;
            }
            let database = d.database.as_deref().filter(|id| *id == g.page_id);
            let result = match database {
                Some(id) => self.notion.trash_database(id).await,
                None => self.notion.trash_page(&g.page_id).await,
            };
            if let Err(e) = result {
                self.failed(out, &format!("trashing {}", g.page_id), e)?;
                continue;
            }
            crate::crash::point("sync.trashed");
            out.changes.push(format!(
                "trash {} {} (deleted in OneNote)",
                g.kind.as_str().replace('_', " "),
                g.page_id
            ));
            // A database's rows have its data source for parent: everything in the unit goes.
            let with = match database {
                Some(_) => members.clone(),
                None => descendants(&members, g),
            };
            out.trashed += with.len();
            done.extend(with.iter().map(|m| m.item.as_str()));
            let items: Vec<String> = with
                .iter()
                .filter(|m| placed.contains_key(m.item.as_str()))
                .map(|m| m.item.clone())
                .collect();
            let (o, k, now) = (owner.clone(), key.to_owned(), self.clock.now_ms());
            let section = database.map(|_| g.item.clone());
            self.db
                .call(move |db| match section {
                    Some(s) => db.sync_trashed_database(&o, &k, &s, &items, now),
                    None => db.sync_trashed(&o, &k, &items, now),
                })
                .await?;
        }
        Ok(())
    }
}

/// `g` and every member under it (by their Notion parents), parents first.
fn descendants<'a>(members: &[&'a Gone], g: &'a Gone) -> Vec<&'a Gone> {
    let mut out = vec![g];
    let mut i = 0;
    while i < out.len() {
        let parent = norm(&out[i].page_id);
        out.extend(
            members
                .iter()
                .copied()
                .filter(|m| norm(&m.parent) == parent),
        );
        i += 1;
    }
    out
}
