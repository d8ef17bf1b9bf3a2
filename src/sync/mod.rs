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
//! A row moved into another data source keeps only its title there (as Notion's move is
//! modelled), so every property of the layout is written again: what the row held is read with
//! its check and recorded with it, before the move (`notion_items.row_owed`), so that a step cut
//! short between the move and the write still has it. A section laid out as a database that
//! OneNote moved to another notebook or section group gets a new database in its new place
//! (Notion's API cannot move a database: intent recorded first, found again by its title after a
//! crash), with the old one's schema; its rows are then moved into it as any row is, and the old
//! database is trashed once it holds no row. A row a person edited is a conflict and stays, and so
//! does a row a person added there: the old database is kept for them, and the run says so.
//!
//! A deleted item is trashed whole (its deleted pages go with it, and Notion restores them with
//! it) when it and every deleted page under it are unedited and hold nothing notebridge did not
//! write; otherwise what can go goes one by one and the rest stays.

pub mod diff;

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use serde::Serialize;
use serde_json::{json, Value};

use self::diff::{Changes, DatabaseMove, Deleted, Gone, Sides, Update};
use crate::clock::{Clock, UnixMillis};
use crate::failure::{Class, Classify, Next, Scope};
use crate::notion::client::{title_rich_text, MoveTo, NotionClient, NotionError};
use crate::notion::conflict;
use crate::notion::database::{self as layout, names as row_names, DatabaseError, Databases};
use crate::queue::cancel::Cancel;
use crate::store::jobs::RunToken;
use crate::store::moves::{Moves, Recognised, Recreated};
use crate::store::notion_items::ItemKind;
use crate::store::sync::{Change, OwedRow, Placed, Placing};
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
    /// Old databases of sections that OneNote moved (a new database holds their rows now) kept
    /// in Notion because they still hold rows a person edited or added there.
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
        let mut changes: Changes = diff::changes(&loaded.sides());
        let mut remade = false;
        for m in &changes.database_moves {
            if self.out_of_time() {
                out.stopped = true;
                return Ok(());
            }
            remade |= self.move_database(key, m, out).await?;
        }
        if remade {
            // The sections' records name their new databases: their rows go there.
            loaded = self.load(key).await?;
            changes = diff::changes(&loaded.sides());
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
        self.trash_old_databases(key, out).await?;
        self.refresh_touched(key, out).await
    }

    /// Makes `m`'s section database again in the page its section moved under, with the same
    /// title and schema, and records it as the section's (the old one kept as old until it is
    /// trashed). Returns whether the record changed.
    async fn move_database(
        &self,
        key: &str,
        m: &DatabaseMove,
        out: &mut Applied,
    ) -> Result<bool, SyncError> {
        let said = format!(
            "move the database of section {} under {} (a new database, its rows moved into it)",
            m.section, m.to
        );
        let Some(owner) = self.owner else {
            out.moved += 1;
            out.changes.push(said);
            return Ok(false);
        };
        let (o, k, sec, to) = (
            owner.clone(),
            key.to_owned(),
            m.section.clone(),
            m.to.clone(),
        );
        let (parent, fresh) = self
            .db
            .call(move |db| db.sync_database_moving(&o, &k, &sec, &to))
            .await?;
        let databases = Databases::new(self.db.clone(), self.clock.clone());
        let what = format!("making the database of section {} again", m.section);
        // An intent of an earlier run may have been made in Notion before a crash.
        let found = if fresh {
            None
        } else {
            match databases.find(self.notion, &parent, &m.title).await {
                Ok(f) => f,
                Err(e) => return self.database_failed(out, &what, e).map(|()| false),
            }
        };
        let made = match found {
            Some(f) => f,
            None => {
                let options = match layout::data_source_object(self.notion, &m.data_source_id).await
                {
                    Ok(ds) => layout::tag_options(&ds),
                    Err(e) => return self.failed(out, &what, e).map(|()| false),
                };
                match layout::create_database_with(self.notion, &parent, &m.title, &options).await {
                    Ok(c) => {
                        crate::crash::point("sync.database_made");
                        c
                    }
                    Err(DatabaseError::Notion(e @ NotionError::Ambiguous { .. })) => {
                        match databases.find(self.notion, &parent, &m.title).await {
                            Ok(Some(f)) => f,
                            Ok(None) => return self.failed(out, &what, e).map(|()| false),
                            Err(e) => return self.database_failed(out, &what, e).map(|()| false),
                        }
                    }
                    Err(e) => return self.database_failed(out, &what, e).map(|()| false),
                }
            }
        };
        let (o, k, sec, t) = (
            owner.clone(),
            key.to_owned(),
            m.section.clone(),
            m.title.clone(),
        );
        self.db
            .call(move |db| {
                db.sync_database_moved(&o, &k, &sec, &made.database_id, &made.data_source_id, &t)
            })
            .await?;
        crate::crash::point("sync.database_recorded");
        out.moved += 1;
        out.changes.push(said);
        Ok(true)
    }

    /// Trashes each old database of a section that moved once it holds no row: none of
    /// notebridge's (every row moved, or deleted in OneNote and trashed) and none a person added.
    /// One that still does stays, named in the run's problems; a later sync trashes it once it
    /// is empty.
    async fn trash_old_databases(&self, key: &str, out: &mut Applied) -> Result<(), SyncError> {
        let Some(owner) = self.owner else {
            return Ok(());
        };
        let loaded = self.load(key).await?;
        for d in &loaded.databases {
            let Some((old_db, old_ds)) = &d.old else {
                continue;
            };
            if self.out_of_time() {
                out.stopped = true;
                return Ok(());
            }
            let kept = |out: &mut Applied, why: String| {
                out.unmovable += 1;
                out.problems.push(format!(
                    "section {} moved in OneNote: its rows are in its new database {}, and its old \
                     database {old_db} stays in Notion because it holds {why}",
                    d.section_id, d.database_id
                ));
            };
            let ours = loaded
                .placed
                .iter()
                .filter(|p| norm(&p.parent) == norm(old_ds))
                .count();
            if ours > 0 {
                kept(
                    out,
                    format!("{ours} rows a person edited there (conflicts, left as they are)"),
                );
                continue;
            }
            let rows = match layout::rows(self.notion, old_ds).await {
                Ok(r) => Some(r),
                // Trashed before its record (a run cut short): what Notion answers for a trashed
                // database's data source is not documented, so the database itself is asked.
                Err(e) if e.class().scope == Scope::Item => {
                    match layout::database_object(self.notion, old_db).await {
                        Ok(d) if d["in_trash"] == true || d["archived"] == true => None,
                        _ => {
                            self.failed(out, &format!("reading data source {old_ds}"), e)?;
                            continue;
                        }
                    }
                }
                Err(e) => {
                    self.failed(out, &format!("reading data source {old_ds}"), e)?;
                    continue;
                }
            };
            if let Some(rows) = rows {
                if !rows.is_empty() {
                    let why = format!(
                        "{} rows that notebridge did not write (once they are gone from it, a \
                         later sync trashes it)",
                        rows.len()
                    );
                    kept(out, why);
                    continue;
                }
                if let Err(e) = self.notion.trash_database(old_db).await {
                    self.failed(out, &format!("trashing {old_db}"), e)?;
                    continue;
                }
            }
            crate::crash::point("sync.trashed");
            let (o, k, s) = (owner.clone(), key.to_owned(), d.section_id.clone());
            self.db
                .call(move |db| db.sync_old_database_trashed(&o, &k, &s))
                .await?;
            out.changes.push(format!(
                "trash the old database {old_db} of section {} (its rows moved to {})",
                d.section_id, d.database_id
            ));
        }
        Ok(())
    }

    /// A failure of the database layout in one step: as [`Pass::failed`].
    fn database_failed(
        &self,
        out: &mut Applied,
        what: &str,
        e: DatabaseError,
    ) -> Result<(), SyncError> {
        match e {
            DatabaseError::Notion(e) => self.failed(out, what, e),
            DatabaseError::Store(e) => Err(e.into()),
            e @ DatabaseError::BadAnswer { .. } => {
                out.failed += 1;
                out.problems.push(format!("{what}: {e}"));
                Ok(())
            }
        }
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
        Ok(self.check_page(p).await?.0)
    }

    /// [`Pass::check`], with the page object as read (a content page's or row's).
    async fn check_page(&self, p: &Placed) -> Result<(Verdict, Option<Value>), NotionError> {
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
            let page = self.notion.page(&p.page_id).await?;
            let (seen, listed) = conflict::read_body(self.notion, &p.page_id, &page, &ours).await?;
            let children = listed
                .iter()
                .filter(|l| !l.trashed && (l.is_subpage() || l.is_database()))
                .map(|l| norm(&l.id))
                .collect();
            if p.checked {
                return Ok((Verdict::Clear(children), Some(page)));
            }
            let verdict = match conflict::edited(p.fingerprint.as_ref(), &seen) {
                None => Verdict::Clear(children),
                Some(e) => Verdict::Edited(e.describe().to_owned()),
            };
            return Ok((verdict, Some(page)));
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
            return Ok((Verdict::Clear(children), None));
        }
        if page_title(&page).is_some_and(|t| t != shown_title(&p.title)) {
            return Ok((Verdict::Edited("renamed in Notion".into()), None));
        }
        if parent_id(&page).is_some_and(|id| id != norm(&p.parent)) {
            return Ok((Verdict::Edited("moved in Notion".into()), None));
        }
        Ok((Verdict::Clear(children), None))
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
                // Counted with its database's move.
                Some(_) if u.with_database => {}
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
        let page = match self.check_page(p).await {
            Ok((Verdict::Clear(_), page)) => page,
            Ok((Verdict::Edited(why), _)) => {
                return self.conflict(key, p, u.change, &why, out).await
            }
            Err(e) => return self.failed(out, &format!("checking page {}", p.page_id), e),
        };
        // A row arriving in a data source keeps only its title there: what it is owed is
        // recorded with the check, before the move.
        let owed = match (&u.row, &p.row_owed) {
            (Some(r), None) if r.whole => Some(self.owed(key, p, page.as_ref()).await?),
            _ => None,
        };
        if !p.checked || owed.is_some() {
            let (o, k, i, w) = (
                owner.clone(),
                key.to_owned(),
                p.item_id.clone(),
                owed.clone(),
            );
            self.db
                .call(move |db| db.sync_checked(&o, &k, &i, w.as_ref()))
                .await?;
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
            Some(r) => {
                let owed = owed.as_ref().or(p.row_owed.as_ref());
                match self.row_properties(p, u, r, owed).await {
                    Ok(props) => Some(props),
                    Err(e) => {
                        return self.database_failed(out, &format!("updating row {}", p.page_id), e)
                    }
                }
            }
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
                    db.sync_checked(&o, &k, &i, None)?;
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

    /// A row's properties that follow OneNote (its name, order and level) and, when it arrives in
    /// a data source (`whole`), every other property of the layout as it is `owed`, its tags
    /// added to the data source's schema first.
    async fn row_properties(
        &self,
        p: &Placed,
        u: &Update,
        r: &diff::RowValues,
        owed: Option<&OwedRow>,
    ) -> Result<Value, DatabaseError> {
        let title = u.title.clone().unwrap_or_else(|| p.title.clone());
        let (Some(owed), true) = (owed, r.whole) else {
            return Ok(json!({
                row_names::NAME: {"title": title_rich_text(&title)},
                row_names::ORDER: {"number": r.order},
                row_names::LEVEL: {"number": r.level},
            }));
        };
        let data_source = u.to.as_ref().map_or(p.parent.as_str(), |t| t.id());
        let tags = Databases::new(self.db.clone(), self.clock.clone())
            .ensure_tags(self.notion, data_source, &owed.tags)
            .await?;
        let time = |t: &Option<String>| t.as_deref().and_then(crate::queue::rows::onenote_time);
        let row = layout::Row {
            title,
            created: time(&owed.created),
            modified: time(&owed.modified),
            tags: tags.names,
            author: owed.author.clone(),
            order: u32::try_from(r.order).unwrap_or(0),
            level: u8::try_from(r.level.clamp(0, 2)).unwrap_or(0),
            link: owed.link.clone(),
        };
        Ok(row.properties())
    }

    /// What row `p` is owed once it arrives in a data source: what the inventory holds of it now
    /// (OneNote's times, author and link: a moved page's link names its new section), and the
    /// rest as the row holds it (`page`, read by its check and found unedited, so what notebridge
    /// wrote): its tags, by their OneNote names, and what a section file named that the scan did
    /// not. A page that becomes a row has no tags to keep.
    async fn owed(
        &self,
        key: &str,
        p: &Placed,
        page: Option<&Value>,
    ) -> Result<OwedRow, SyncError> {
        let props = page
            .map(|pg| &pg["properties"])
            .filter(|v| v.get(row_names::NAME).is_some() && p.kind == ItemKind::Page);
        let held = match props {
            Some(props) => {
                let ds = p.parent.clone();
                let recorded = self.db.call(move |db| db.database_tags(&ds)).await?;
                owed_of(props, &recorded)
            }
            None => OwedRow::default(),
        };
        let (k, i) = (key.to_owned(), p.item_id.clone());
        let v = self
            .db
            .call(move |db| db.page_values(&k, &i))
            .await?
            .unwrap_or_default();
        Ok(OwedRow {
            created: v.created.or(held.created),
            modified: v.last_modified.or(held.modified),
            tags: held.tags,
            author: v.author.or(held.author),
            link: v.web_url.or(held.link),
        })
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

/// What a row's properties (as a page object renders them) hold of what the layout writes, its
/// tags by the OneNote names `recorded` for its data source (a name not recorded stands for
/// itself).
fn owed_of(props: &Value, recorded: &[crate::store::layouts::RecordedTag]) -> OwedRow {
    let date = |name: &str| props[name]["date"]["start"].as_str().map(str::to_owned);
    let text: String = props[row_names::AUTHOR]["rich_text"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|r| r["plain_text"].as_str().or(r["text"]["content"].as_str()))
        .collect();
    let tags = props[row_names::TAGS]["multi_select"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|o| o["name"].as_str())
        .map(|n| {
            recorded
                .iter()
                .find(|r| r.name == n)
                .map_or_else(|| n.to_owned(), |r| r.source_name.clone())
        })
        .collect();
    OwedRow {
        created: date(row_names::CREATED),
        modified: date(row_names::MODIFIED),
        tags,
        author: (!text.is_empty()).then_some(text),
        link: props[row_names::LINK]["url"].as_str().map(str::to_owned),
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
