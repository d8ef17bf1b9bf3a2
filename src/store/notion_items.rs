//! What exists in Notion for each OneNote item, as one lifecycle ([`ItemState`]): the intent
//! recorded before each creation (so that a lost answer or a kill never leads to a second page),
//! the page and how far its body is written. The store is the lifecycle's only writer: each
//! transition is a method of the state it starts from and one checked `UPDATE`, and a write that
//! changes no row is [`StoreError::Item`] (the record was not in the state the caller held).

use std::collections::{HashMap, HashSet};
use std::fmt;

use rusqlite::types::{FromSql, FromSqlError, FromSqlResult, ToSql, ToSqlOutput, ValueRef};
use rusqlite::{params, OptionalExtension, Row, Transaction};
use serde::{Deserialize, Serialize};

use super::jobs::{JobKind, JobState, RunToken};
use super::{Db, Result, StoreError};
use crate::clock::UnixMillis;

/// What a page held when notebridge finished writing it, as Notion gave it back: what the
/// conflict rule (`notion::conflict`) compares a page with before it is written again.
/// The SQL for the next placement number: after every page placed so far (a record without one
/// was placed when it was made, so its rowid stands for it).
pub(super) const NEXT_PLACED: &str =
    "(SELECT coalesce(max(coalesce(placed, rowid)), 0) + 1 FROM notion_items)";

/// What OneNote did to an item a person edited in Notion (`conflicts.change`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Change {
    /// Its content changed: the OneNote version is kept beside it.
    Changed,
    /// It was renamed.
    Renamed,
    /// It was moved (to another parent, or to another place among its siblings).
    Moved,
    /// It was deleted.
    Deleted,
}

impl Change {
    /// The name stored in the database.
    pub fn as_str(self) -> &'static str {
        match self {
            Change::Changed => "changed",
            Change::Renamed => "renamed",
            Change::Moved => "moved",
            Change::Deleted => "deleted",
        }
    }

    /// The stored name read back (an unknown one is the oldest meaning, a content change).
    pub fn parse(s: &str) -> Change {
        match s {
            "renamed" => Change::Renamed,
            "moved" => Change::Moved,
            "deleted" => Change::Deleted,
            _ => Change::Changed,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Fingerprint {
    /// The page's `last_edited_time`, to the minute (`YYYY-MM-DDTHH:MM`).
    pub edited: String,
    /// Digest of its properties, icon and cover.
    pub properties: String,
    /// Digest of its body's top-level blocks.
    pub body: String,
}

impl Fingerprint {
    /// The stored form (JSON).
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("a fingerprint is plain strings")
    }

    /// Read from its stored form; `None` when it is not one (taken as no fingerprint).
    pub fn from_json(s: &str) -> Option<Self> {
        serde_json::from_str(s).ok()
    }
}

/// A migrated page as a OneNote page link's target (the converter points links at it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PageTarget {
    /// The Notion page id.
    pub id: String,
    /// The target page's title as migrated (to tell whether the link text is just the title).
    pub title: String,
}

/// The `body_state` column, read only together with `notion_page_id` ([`ItemState`] is what they
/// mean): `none` is an intent without a page, or a page whose old body is to be replaced.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum BodyColumn {
    None,
    Writing,
    Done,
}

impl BodyColumn {
    const ALL: [BodyColumn; 3] = [BodyColumn::None, BodyColumn::Writing, BodyColumn::Done];

    fn as_str(self) -> &'static str {
        match self {
            BodyColumn::None => "none",
            BodyColumn::Writing => "writing",
            BodyColumn::Done => "done",
        }
    }
}

/// Strict: text that is no body state is an error when read, never taken for `none`.
impl FromSql for BodyColumn {
    fn column_result(v: ValueRef<'_>) -> FromSqlResult<Self> {
        let s = v.as_str()?;
        BodyColumn::ALL
            .into_iter()
            .find(|b| b.as_str() == s)
            .ok_or_else(|| FromSqlError::Other(format!("unknown body state {s:?}").into()))
    }
}

impl ToSql for BodyColumn {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(self.as_str().into())
    }
}

/// What a Notion item stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ItemKind {
    /// A notebook's page.
    Notebook,
    /// A section group's page.
    SectionGroup,
    /// A section's page.
    Section,
    /// A OneNote page (title and body).
    Page,
    /// The page of a group or site that holds its notebooks (`queue::source_page`).
    Source,
    /// The OneNote version of a page kept beside it because a person edited the page in Notion
    /// (a child page of it, or a row of its section's database).
    KeptVersion,
}

impl ItemKind {
    const ALL: [ItemKind; 6] = [
        ItemKind::Notebook,
        ItemKind::SectionGroup,
        ItemKind::Section,
        ItemKind::Page,
        ItemKind::Source,
        ItemKind::KeptVersion,
    ];

    /// The name stored in the database.
    pub fn as_str(self) -> &'static str {
        match self {
            ItemKind::Notebook => "notebook",
            ItemKind::SectionGroup => "section_group",
            ItemKind::Section => "section",
            ItemKind::Page => "page",
            ItemKind::Source => "source",
            ItemKind::KeptVersion => "kept_version",
        }
    }

    /// The item a job of `kind` makes a page for (`None`: the link pass makes none).
    pub fn of_job(kind: JobKind) -> Option<ItemKind> {
        match kind {
            JobKind::Notebook => Some(ItemKind::Notebook),
            JobKind::SectionGroup => Some(ItemKind::SectionGroup),
            JobKind::Section => Some(ItemKind::Section),
            JobKind::Page => Some(ItemKind::Page),
            JobKind::Links => None,
        }
    }
}

/// Strict: text that is no kind is an error when read.
impl FromSql for ItemKind {
    fn column_result(v: ValueRef<'_>) -> FromSqlResult<Self> {
        let s = v.as_str()?;
        ItemKind::ALL
            .into_iter()
            .find(|k| k.as_str() == s)
            .ok_or_else(|| FromSqlError::Other(format!("unknown item kind {s:?}").into()))
    }
}

impl ToSql for ItemKind {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(self.as_str().into())
    }
}

/// Where an item is in its lifecycle, without its data: what a refused transition names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    /// No record: nothing was asked of Notion.
    Planned,
    /// [`ItemState::Intended`].
    Intended,
    /// [`ItemState::Writing`].
    Writing,
    /// [`ItemState::Rewriting`].
    Rewriting,
    /// [`ItemState::Complete`].
    Complete,
}

impl fmt::Display for Stage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Stage::Planned => "planned",
            Stage::Intended => "intended",
            Stage::Writing => "being written",
            Stage::Rewriting => "to be rewritten",
            Stage::Complete => "complete",
        })
    }
}

/// Which record: the item's inventory key and OneNote id.
#[derive(Clone, Debug, PartialEq, Eq)]
struct ItemKey {
    account: String,
    item_id: String,
}

impl ItemKey {
    fn new(account: &str, item_id: &str) -> Self {
        Self {
            account: account.to_owned(),
            item_id: item_id.to_owned(),
        }
    }
}

impl fmt::Display for ItemKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "item {} of {}", self.item_id, self.account)
    }
}

/// The creation is about to be asked for, or was: Notion may hold the page, its id unknown (a
/// resumed run looks for it under the parent before creating it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Intended {
    key: ItemKey,
}

/// The page exists; its body is being written (the write journal holds what each step learned).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Writing {
    key: ItemKey,
    page_id: String,
}

/// The page exists and its old body is to be replaced by the page's new content
/// (`migrate --update`), once the conflict rule (`notion::conflict`) found it unedited in Notion.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rewriting {
    key: ItemKey,
    page_id: String,
    check: Option<Check>,
}

/// The verdict of the check made before a rewrite writes anything, recorded so that a resumed
/// rewrite never takes its own half-written body for a person's edit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Check {
    /// The page holds what notebridge wrote: it may be rewritten.
    Clear,
    /// Someone edited it in Notion: it is left as it is, the OneNote version kept beside it.
    Conflict,
}

impl Check {
    const ALL: [Check; 2] = [Check::Clear, Check::Conflict];

    fn as_str(self) -> &'static str {
        match self {
            Check::Clear => "clear",
            Check::Conflict => "conflict",
        }
    }
}

/// Strict: text that is no verdict is an error when read.
impl FromSql for Check {
    fn column_result(v: ValueRef<'_>) -> FromSqlResult<Self> {
        let s = v.as_str()?;
        Check::ALL
            .into_iter()
            .find(|c| c.as_str() == s)
            .ok_or_else(|| FromSqlError::Other(format!("unknown rewrite check {s:?}").into()))
    }
}

impl ToSql for Check {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(self.as_str().into())
    }
}

/// The page and its whole body are written.
///
/// A transition is a method of the state it starts from, so one from another state does not
/// compile. A page being written is recorded complete:
///
/// ```
/// # use notebridge::store::{Db, jobs::RunToken, notion_items::{Complete, Writing, Written}};
/// fn finish(db: &Db, token: &RunToken, page: Writing) -> Complete {
///     page.written(db, token, &Written::default()).unwrap()
/// }
/// ```
///
/// and a complete one cannot be written again (`migrate --update` makes it [`Rewriting`] first):
///
/// ```compile_fail
/// # use notebridge::store::{Db, jobs::RunToken, notion_items::{Complete, Writing, Written}};
/// fn finish(db: &Db, token: &RunToken, page: Complete) -> Complete {
///     page.written(db, token, &Written::default()).unwrap()
/// }
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Complete {
    key: ItemKey,
    page_id: String,
}

/// What Notion holds of an item that has a record (an item without one is planned only). Each
/// state is made only by the store, read from its record or returned by a transition, so a state
/// in hand is one the record was in; the transitions are its methods.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ItemState {
    /// See [`Intended`].
    Intended(Intended),
    /// See [`Writing`].
    Writing(Writing),
    /// See [`Rewriting`].
    Rewriting(Rewriting),
    /// See [`Complete`].
    Complete(Complete),
}

impl ItemState {
    /// The Notion page, once known.
    pub fn page_id(&self) -> Option<&str> {
        match self {
            ItemState::Intended(_) => None,
            ItemState::Writing(s) => Some(&s.page_id),
            ItemState::Rewriting(s) => Some(&s.page_id),
            ItemState::Complete(s) => Some(&s.page_id),
        }
    }

    /// Whether the page and its whole body are written.
    pub fn is_complete(&self) -> bool {
        matches!(self, ItemState::Complete(_))
    }

    /// The stage, without the data.
    pub fn stage(&self) -> Stage {
        match self {
            ItemState::Intended(_) => Stage::Intended,
            ItemState::Writing(_) => Stage::Writing,
            ItemState::Rewriting(_) => Stage::Rewriting,
            ItemState::Complete(_) => Stage::Complete,
        }
    }

    /// What the columns spell, or why they spell nothing (a body without a page).
    fn of_columns(
        key: ItemKey,
        page: Option<String>,
        body: BodyColumn,
        check: Option<Check>,
    ) -> Result<Self, String> {
        Ok(match (page, body) {
            (None, BodyColumn::None) => ItemState::Intended(Intended { key }),
            (Some(page_id), BodyColumn::Writing) => ItemState::Writing(Writing { key, page_id }),
            (Some(page_id), BodyColumn::None) => ItemState::Rewriting(Rewriting {
                key,
                page_id,
                check,
            }),
            (Some(page_id), BodyColumn::Done) => ItemState::Complete(Complete { key, page_id }),
            (None, b @ (BodyColumn::Writing | BodyColumn::Done)) => {
                return Err(format!("{key} has a body {} but no page", b.as_str()))
            }
        })
    }
}

/// A page whose body is to be written: one being written for the first time, or one whose old
/// body is replaced.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Unfinished {
    /// See [`Writing`].
    Writing(Writing),
    /// See [`Rewriting`].
    Rewriting(Rewriting),
}

impl Unfinished {
    /// The Notion page.
    pub fn page_id(&self) -> &str {
        match self {
            Unfinished::Writing(s) => &s.page_id,
            Unfinished::Rewriting(s) => &s.page_id,
        }
    }

    /// The body is written, with what was written (see [`Writing::written`]).
    pub fn written(self, db: &Db, token: &RunToken, w: &Written<'_>) -> Result<Complete> {
        match self {
            Unfinished::Writing(s) => s.written(db, token, w),
            Unfinished::Rewriting(s) => s.written(db, token, w),
        }
    }
}

/// What writing an item's body produced.
#[derive(Clone, Copy, Debug, Default)]
pub struct Written<'a> {
    /// Blocks written.
    pub blocks: i64,
    /// Files uploaded.
    pub files: i64,
    /// The converter's report (JSON).
    pub report: Option<&'a str>,
    /// OneNote's `lastModifiedDateTime` of what was written.
    pub onenote_last_modified: Option<&'a str>,
    /// Links to pages not migrated yet wait for the link pass.
    pub pending_links: bool,
    /// The body's shape (`notion::split::shape`).
    pub shape: Option<&'a str>,
    /// The blocks holding links to pages not migrated yet were recorded as they were written
    /// (`notion::journal`), so the link pass updates them without reading the page again.
    pub links_recorded: bool,
    /// What the page holds now, as Notion gave it back (`notion::conflict`): what a later rewrite
    /// compares with. `None` for items never rewritten (containers).
    pub fingerprint: Option<&'a Fingerprint>,
    /// A row's `Order` property as written (layout `database`), which `sync` compares with
    /// OneNote's order.
    pub row_order: Option<i64>,
    /// The digest of the converted body it was written from, when all of it arrived as converted
    /// (`queue::unchanged`): a later rewrite from the same body writes none.
    pub body_digest: Option<&'a str>,
}

/// One row of `notion_items`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NotionItem {
    /// OneNote id.
    pub item_id: String,
    /// What it is.
    pub kind: ItemKind,
    /// The Notion page it goes under.
    pub parent_notion_id: String,
    /// Title it was created with.
    pub title: String,
    /// Where it is in its lifecycle (its Notion page once known).
    pub state: ItemState,
    /// Blocks written (of a complete body; what an earlier body had while it is rewritten).
    pub blocks: i64,
    /// Files uploaded.
    pub files: i64,
    /// The converter's report (JSON), for `verify`.
    pub report: Option<String>,
    /// The written body's shape (`notion::split::shape`), for `verify`.
    pub body_shape: Option<String>,
    /// Its blocks holding links to pages not migrated yet were recorded where they were written
    /// (else, written by an older notebridge, the link pass reads the page again).
    pub links_recorded: bool,
    /// What the page held when its body was last written (`notion::conflict`; `None`: written by
    /// an older notebridge).
    pub fingerprint: Option<Fingerprint>,
    /// OneNote's `lastModifiedDateTime` of the version written (or kept beside it).
    pub onenote_last_modified: Option<String>,
    /// The link pass found the page unedited and may have updated some of its blocks since (its
    /// fingerprint is taken again when the pass records the page).
    pub links_checked: bool,
    /// The digest of the converted body it was last written from ([`Written::body_digest`]).
    pub body_digest: Option<String>,
}

impl NotionItem {
    /// The Notion page, once known.
    pub fn page_id(&self) -> Option<&str> {
        self.state.page_id()
    }

    /// The Notion page, once known, taken out of the record.
    pub fn into_page_id(self) -> Option<String> {
        self.state.page_id().map(str::to_owned)
    }

    fn from_row(r: &Row<'_>) -> rusqlite::Result<Self> {
        let account: String = r.get("account")?;
        let item_id: String = r.get("item_id")?;
        let key = ItemKey::new(&account, &item_id);
        let state = ItemState::of_columns(
            key,
            r.get("notion_page_id")?,
            r.get("body_state")?,
            r.get("rewrite_check")?,
        )
        .map_err(|e| {
            rusqlite::Error::FromSqlConversionFailure(0, rusqlite::types::Type::Text, e.into())
        })?;
        Ok(NotionItem {
            item_id,
            kind: r.get("kind")?,
            parent_notion_id: r.get("parent_notion_id")?,
            title: r.get("title")?,
            state,
            blocks: r.get("blocks")?,
            files: r.get("files")?,
            report: r.get("report")?,
            body_shape: r.get("body_shape")?,
            links_recorded: r.get("links_recorded")?,
            fingerprint: r
                .get::<_, Option<String>>("fingerprint")?
                .as_deref()
                .and_then(Fingerprint::from_json),
            onenote_last_modified: r.get("onenote_last_modified")?,
            links_checked: r.get("links_checked")?,
            body_digest: r.get("body_digest")?,
        })
    }
}

const COLUMNS: &str = "account, item_id, kind, parent_notion_id, title, notion_page_id, \
                       body_state, blocks, files, report, body_shape, links_recorded, \
                       fingerprint, rewrite_check, onenote_last_modified, links_checked, \
                       body_digest";

/// `Ok` when a statement changed exactly one row; else the error that rolls its transaction back
/// and that [`Db::item_write`] turns into [`StoreError::Item`].
pub(super) fn one_row(changed: usize) -> rusqlite::Result<()> {
    match changed {
        1 => Ok(()),
        n => Err(rusqlite::Error::StatementChangedRows(n)),
    }
}

impl Db {
    /// Runs `f`, one transition of the record `key` from `from` to `to`, in one transaction by the
    /// run lock's holder: [`StoreError::Item`] when a statement of it changed no row (or more than
    /// one; [`one_row`]), and nothing of it is kept.
    pub(super) fn item_write<T>(
        &self,
        token: &RunToken,
        key: &str,
        (from, to): (Stage, Stage),
        action: &str,
        f: impl FnOnce(&Transaction<'_>) -> rusqlite::Result<T>,
    ) -> Result<T> {
        match self.write_holding(token, action, f) {
            Err(StoreError::Sqlite {
                source: rusqlite::Error::StatementChangedRows(_),
                ..
            }) => Err(StoreError::Item {
                path: self.path.clone(),
                item: key.to_owned(),
                from,
                to,
            }),
            other => other,
        }
    }

    /// The Notion record of one OneNote item (`None`: planned only).
    pub fn notion_item(&self, account: &str, item_id: &str) -> Result<Option<NotionItem>> {
        self.read("reading a Notion record", |c| {
            c.query_row(
                &format!("SELECT {COLUMNS} FROM notion_items WHERE account = ?1 AND item_id = ?2"),
                params![account, item_id],
                NotionItem::from_row,
            )
            .optional()
        })
    }

    /// Every Notion record of `account`.
    pub fn notion_items(&self, account: &str) -> Result<Vec<NotionItem>> {
        self.read("reading Notion records", |c| {
            let mut st = c.prepare(&format!(
                "SELECT {COLUMNS} FROM notion_items WHERE account = ?1 ORDER BY rowid"
            ))?;
            let rows = st.query_map([account], NotionItem::from_row)?;
            rows.collect()
        })
    }

    /// Planned → intended: records the intent to create the page for an item under `parent`,
    /// before the request. An item that has a record already is refused.
    pub fn record_intent(
        &self,
        token: &RunToken,
        account: &str,
        item_id: &str,
        kind: ItemKind,
        parent: &str,
        title: &str,
    ) -> Result<Intended> {
        let key = ItemKey::new(account, item_id);
        self.item_write(
            token,
            &key.to_string(),
            (Stage::Planned, Stage::Intended),
            "recording a page creation",
            |tx| {
                one_row(tx.execute(
                    &format!(
                        "INSERT INTO notion_items(account, item_id, kind, parent_notion_id, title,
                                                  body_state, placed)
                         VALUES (?1, ?2, ?3, ?4, ?5, ?6, {})
                         ON CONFLICT(account, item_id) DO NOTHING",
                        NEXT_PLACED
                    ),
                    params![account, item_id, kind, parent, title, BodyColumn::None],
                )?)
            },
        )?;
        Ok(Intended { key })
    }

    /// Complete → rewriting for the pages changed in OneNote since they were written
    /// (`migrate --update`), their jobs back in the queue; one transaction, by the run lock's
    /// holder (`token`). Returns how many.
    pub fn plan_rewrites(&self, token: &RunToken, account: &str, now: UnixMillis) -> Result<usize> {
        let changed = self.changed_since_migration(account)?;
        self.item_write(
            token,
            &format!("a changed page of {account}"),
            (Stage::Complete, Stage::Rewriting),
            "planning rewrites",
            |tx| {
                for (page, ..) in &changed {
                    one_row(tx.execute(
                        "UPDATE notion_items SET body_state = ?3
                         WHERE account = ?1 AND item_id = ?2 AND notion_page_id IS NOT NULL
                           AND body_state = ?4",
                        params![account, page, BodyColumn::None, BodyColumn::Done],
                    )?)?;
                    one_row(tx.execute(
                        "UPDATE jobs SET state = ?4, attempts = 0, not_before = 0, updated_at = ?3
                         WHERE account = ?1 AND kind = ?5 AND item_id = ?2",
                        params![account, page, now, JobState::Queued, JobKind::Page],
                    )?)?;
                }
                Ok(changed.len())
            },
        )
    }

    /// Replaces a complete page's stored report (the link pass adds what it degraded).
    pub fn set_report(
        &self,
        token: &RunToken,
        account: &str,
        item_id: &str,
        report: Option<&str>,
    ) -> Result<()> {
        self.item_write(
            token,
            &ItemKey::new(account, item_id).to_string(),
            (Stage::Complete, Stage::Complete),
            "recording a page's report",
            |tx| {
                one_row(tx.execute(
                    "UPDATE notion_items SET report = ?3
                     WHERE account = ?1 AND item_id = ?2 AND body_state = ?4",
                    params![account, item_id, report, BodyColumn::Done],
                )?)
            },
        )
    }

    /// Records whether a complete page still holds links to pages not migrated yet.
    pub fn set_pending_links(
        &self,
        token: &RunToken,
        account: &str,
        item_id: &str,
        pending: bool,
    ) -> Result<()> {
        self.item_write(
            token,
            &ItemKey::new(account, item_id).to_string(),
            (Stage::Complete, Stage::Complete),
            "recording pending links",
            |tx| {
                one_row(tx.execute(
                    "UPDATE notion_items SET pending_links = ?3
                     WHERE account = ?1 AND item_id = ?2 AND body_state = ?4",
                    params![account, item_id, pending, BodyColumn::Done],
                )?)
            },
        )
    }

    /// Records what a complete page holds now (`notion::conflict`), after the link pass changed it.
    pub fn set_fingerprint(
        &self,
        token: &RunToken,
        account: &str,
        item_id: &str,
        fingerprint: &Fingerprint,
    ) -> Result<()> {
        self.item_write(
            token,
            &ItemKey::new(account, item_id).to_string(),
            (Stage::Complete, Stage::Complete),
            "recording a page's fingerprint",
            |tx| {
                one_row(tx.execute(
                    "UPDATE notion_items SET fingerprint = ?3, links_checked = 0
                     WHERE account = ?1 AND item_id = ?2 AND body_state = ?4",
                    params![account, item_id, fingerprint.to_json(), BodyColumn::Done],
                )?)
            },
        )
    }

    /// Records that the link pass found a complete page unedited, before it updates any block
    /// (`checked`), or that it is done with it.
    pub fn set_links_checked(
        &self,
        token: &RunToken,
        account: &str,
        item_id: &str,
        checked: bool,
    ) -> Result<()> {
        self.item_write(
            token,
            &ItemKey::new(account, item_id).to_string(),
            (Stage::Complete, Stage::Complete),
            "recording the link pass's check",
            |tx| {
                one_row(tx.execute(
                    "UPDATE notion_items SET links_checked = ?4
                     WHERE account = ?1 AND item_id = ?2 AND body_state = ?3",
                    params![account, item_id, BodyColumn::Done, checked],
                )?)
            },
        )
    }

    /// Complete pages of `account` whose links to other pages wait for the link pass.
    pub fn pages_with_pending_links(&self, account: &str) -> Result<Vec<NotionItem>> {
        self.read("reading pages with pending links", |c| {
            let mut st = c.prepare(&format!(
                "SELECT {COLUMNS} FROM notion_items
                 WHERE account = ?1 AND pending_links = 1 AND body_state = ?2
                   AND notion_page_id IS NOT NULL ORDER BY rowid"
            ))?;
            let rows = st.query_map(params![account, BodyColumn::Done], NotionItem::from_row)?;
            rows.collect()
        })
    }

    /// The Notion pages already created under `parent` (to tell ours from a lost one).
    pub fn notion_children_of(&self, parent: &str) -> Result<HashSet<String>> {
        self.read("reading Notion records", |c| {
            let mut st = c.prepare(
                "SELECT notion_page_id FROM notion_items
                 WHERE parent_notion_id = ?1 AND notion_page_id IS NOT NULL",
            )?;
            let rows = st.query_map([parent], |r| r.get(0))?;
            rows.collect()
        })
    }

    /// Files per migrated page over every page this database has migrated, and how many pages
    /// that is (the plan's estimate of files not yet read).
    pub fn files_per_page(&self) -> Result<(f64, i64)> {
        self.read("counting migrated files", |c| {
            c.query_row(
                "SELECT coalesce(sum(files), 0), count(*) FROM notion_items
                 WHERE kind = ?1 AND body_state = ?2",
                params![JobKind::Page, BodyColumn::Done],
                |r| {
                    let (files, pages): (i64, i64) = (r.get(0)?, r.get(1)?);
                    Ok((files as f64 / pages.max(1) as f64, pages))
                },
            )
        })
    }

    /// The migrated pages as link targets: OneNote page GUID (lowercase) to the Notion page id and
    /// the page's title.
    /// Its groups' and sites' pages are included (a link from an own page to a team's page
    /// resolves).
    pub fn migrated_page_targets(&self, account: &str) -> Result<HashMap<String, PageTarget>> {
        self.read("reading migrated pages", |c| {
            // The account's own key or one of its groups' or sites' (`KEY_OF_ACCOUNT` of
            // `store::sources`, on `n.account`).
            let mut st = c.prepare(
                "SELECT p.onenote_guid, n.notion_page_id, p.title FROM notion_items n
                 JOIN pages p ON p.account = n.account AND p.id = n.item_id
                 WHERE (n.account = ?1 OR (n.account >= ?1 || '/' AND n.account < ?1 || '0'))
                   AND n.kind = 'page' AND n.notion_page_id IS NOT NULL
                   AND p.onenote_guid IS NOT NULL",
            )?;
            let rows = st.query_map([account], |r| {
                Ok((
                    r.get::<_, String>(0)?.to_ascii_lowercase(),
                    PageTarget {
                        id: r.get(1)?,
                        title: r.get(2)?,
                    },
                ))
            })?;
            rows.collect()
        })
    }

    /// Pages migrated before OneNote last changed them: (page id, title, migrated, now in OneNote).
    pub fn changed_since_migration(
        &self,
        account: &str,
    ) -> Result<Vec<(String, String, String, String)>> {
        self.read("finding changed pages", |c| {
            let mut st = c.prepare(
                "SELECT p.id, p.title, n.onenote_last_modified, p.last_modified
                 FROM notion_items n JOIN pages p ON p.account = n.account AND p.id = n.item_id
                 WHERE n.account = ?1 AND n.kind = ?2 AND n.body_state = ?3
                   AND n.notion_page_id IS NOT NULL
                   AND p.deleted_at IS NULL AND p.last_modified > n.onenote_last_modified
                 ORDER BY p.section_id, p.\"order\"",
            )?;
            let rows = st.query_map(params![account, ItemKind::Page, BodyColumn::Done], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
            })?;
            rows.collect()
        })
    }
}

impl Intended {
    /// Intended → writing: the page `page_id` exists (created now, or found again after a lost
    /// answer); its body is being written from now on.
    pub fn created(self, db: &Db, token: &RunToken, page_id: &str) -> Result<Writing> {
        let Intended { key } = self;
        db.item_write(
            token,
            &key.to_string(),
            (Stage::Intended, Stage::Writing),
            "recording a created page",
            |tx| {
                one_row(tx.execute(
                    "UPDATE notion_items SET notion_page_id = ?3, body_state = ?4
                     WHERE account = ?1 AND item_id = ?2 AND notion_page_id IS NULL
                       AND body_state = ?5",
                    params![
                        key.account,
                        key.item_id,
                        page_id,
                        BodyColumn::Writing,
                        BodyColumn::None
                    ],
                )?)
            },
        )?;
        Ok(Writing {
            key,
            page_id: page_id.to_owned(),
        })
    }
}

/// Marks the body of `key`'s page `page_id`, found with body column `from`, written: what was
/// written, the converter's report and whether links wait for the link pass, in one transaction
/// (a kill never keeps one without the other). What its steps learned is no longer needed and goes.
/// Its links wait for the link pass too while blocks holding links are recorded: an earlier attempt
/// may have written them before their pages existed, though the body converted last found them all.
fn finish_body(
    db: &Db,
    token: &RunToken,
    (key, page_id): (ItemKey, String),
    from: (Stage, BodyColumn),
    w: &Written<'_>,
) -> Result<Complete> {
    db.item_write(
        token,
        &key.to_string(),
        (from.0, Stage::Complete),
        "recording a written page",
        |tx| {
            one_row(tx.execute(
                "UPDATE notion_items SET body_state = ?9, blocks = ?3, files = ?4, report = ?5,
                        onenote_last_modified = ?6, body_shape = ?8,
                        pending_links = (?7 OR EXISTS (SELECT 1 FROM link_blocks
                            WHERE account = ?1 AND item_id = ?2)),
                        links_recorded = ?10, fingerprint = ?13, rewrite_check = NULL,
                        row_order = coalesce(?14, row_order), body_digest = ?15
                 WHERE account = ?1 AND item_id = ?2 AND notion_page_id = ?11
                   AND body_state = ?12
                   AND (body_state != 'none' OR rewrite_check = 'clear')",
                params![
                    key.account,
                    key.item_id,
                    w.blocks,
                    w.files,
                    w.report,
                    w.onenote_last_modified,
                    w.pending_links,
                    w.shape,
                    BodyColumn::Done,
                    w.links_recorded,
                    page_id,
                    from.1,
                    w.fingerprint.map(Fingerprint::to_json),
                    w.row_order,
                    w.body_digest
                ],
            )?)?;
            tx.execute(
                "DELETE FROM write_steps WHERE account = ?1 AND item_id = ?2",
                params![key.account, key.item_id],
            )
        },
    )?;
    Ok(Complete { key, page_id })
}

impl Writing {
    /// The Notion page.
    pub fn page_id(&self) -> &str {
        &self.page_id
    }

    /// Writing → complete, with what was written ([`Written`]).
    pub fn written(self, db: &Db, token: &RunToken, w: &Written<'_>) -> Result<Complete> {
        let from = (Stage::Writing, BodyColumn::Writing);
        finish_body(db, token, (self.key, self.page_id), from, w)
    }
}

impl Rewriting {
    /// The Notion page.
    pub fn page_id(&self) -> &str {
        &self.page_id
    }

    /// Records the new title the page was given (renamed in OneNote since it was written).
    pub fn retitled(&self, db: &Db, token: &RunToken, title: &str) -> Result<()> {
        db.item_write(
            token,
            &self.key.to_string(),
            (Stage::Rewriting, Stage::Rewriting),
            "recording a title",
            |tx| {
                one_row(tx.execute(
                    "UPDATE notion_items SET title = ?3
                     WHERE account = ?1 AND item_id = ?2 AND notion_page_id = ?4
                       AND body_state = ?5",
                    params![
                        self.key.account,
                        self.key.item_id,
                        title,
                        self.page_id,
                        BodyColumn::None
                    ],
                )?)
            },
        )
    }

    /// Rewriting → complete, with what the new body is ([`Written`]). Only a rewrite the check
    /// cleared is written (else the record changes no row and this is refused).
    pub fn written(self, db: &Db, token: &RunToken, w: &Written<'_>) -> Result<Complete> {
        let from = (Stage::Rewriting, BodyColumn::None);
        finish_body(db, token, (self.key, self.page_id), from, w)
    }

    /// Rewriting → complete without a write: OneNote's version `onenote_last_modified` converts
    /// to the very body the page was last written from (`queue::unchanged`), so the page keeps
    /// its body, its record (fingerprint, journal of links) and its title; only the version
    /// handled is recorded. Refused for a rewrite already checked (it goes on as checked).
    pub fn unchanged(
        self,
        db: &Db,
        token: &RunToken,
        onenote_last_modified: Option<&str>,
    ) -> Result<Complete> {
        let Rewriting { key, page_id, .. } = self;
        db.item_write(
            token,
            &key.to_string(),
            (Stage::Rewriting, Stage::Complete),
            "recording an unchanged page",
            |tx| {
                one_row(tx.execute(
                    "UPDATE notion_items SET body_state = ?3,
                            onenote_last_modified = coalesce(?4, onenote_last_modified)
                     WHERE account = ?1 AND item_id = ?2 AND notion_page_id = ?5
                       AND body_state = ?6 AND rewrite_check IS NULL",
                    params![
                        key.account,
                        key.item_id,
                        BodyColumn::Done,
                        onenote_last_modified,
                        page_id,
                        BodyColumn::None
                    ],
                )?)
            },
        )?;
        Ok(Complete { key, page_id })
    }

    /// The verdict of the check before the rewrite (`None`: not checked yet).
    pub fn check(&self) -> Option<Check> {
        self.check
    }

    /// Records the verdict of the check made before any write of the rewrite.
    pub fn checked(self, db: &Db, token: &RunToken, check: Check) -> Result<Rewriting> {
        db.item_write(
            token,
            &self.key.to_string(),
            (Stage::Rewriting, Stage::Rewriting),
            "recording a rewrite's check",
            |tx| {
                one_row(tx.execute(
                    "UPDATE notion_items SET rewrite_check = ?3
                     WHERE account = ?1 AND item_id = ?2 AND notion_page_id = ?4
                       AND body_state = ?5 AND rewrite_check IS NULL",
                    params![
                        self.key.account,
                        self.key.item_id,
                        check,
                        self.page_id,
                        BodyColumn::None
                    ],
                )?)
            },
        )?;
        Ok(Rewriting {
            check: Some(check),
            ..self
        })
    }

    /// Rewriting (found edited in Notion) → complete as the person left it: the page's record
    /// keeps what notebridge last wrote (its fingerprint: it is not notebridge's to write any
    /// more), takes the OneNote version `onenote_last_modified` as the one handled (kept in
    /// `kept_item_id`'s page, beside it), and the conflict is recorded, in one transaction. A
    /// conflict the person resolved is open again: OneNote changed the page since.
    ///
    /// `superseded` are the page's earlier kept copies found edited in Notion on the way (their
    /// rewrites' verdicts a conflict): each is a conflict of its own in the same transaction,
    /// left as the person left it, its record keeping the version it holds, the newer OneNote
    /// version kept as `kept_item_id`.
    pub fn kept(
        self,
        db: &Db,
        token: &RunToken,
        kept_item_id: &str,
        onenote_last_modified: Option<&str>,
        now: UnixMillis,
        superseded: Vec<Rewriting>,
    ) -> Result<Complete> {
        let Rewriting { key, page_id, .. } = self;
        db.item_write(
            token,
            &key.to_string(),
            (Stage::Rewriting, Stage::Complete),
            "recording a conflict",
            |tx| {
                one_row(tx.execute(
                    "UPDATE notion_items SET body_state = ?3, rewrite_check = NULL,
                            onenote_last_modified = ?4
                     WHERE account = ?1 AND item_id = ?2 AND notion_page_id = ?5
                       AND body_state = ?6 AND rewrite_check = ?7",
                    params![
                        key.account,
                        key.item_id,
                        BodyColumn::Done,
                        onenote_last_modified,
                        page_id,
                        BodyColumn::None,
                        Check::Conflict
                    ],
                )?)?;
                record_conflict(tx, &key, &page_id, kept_item_id, onenote_last_modified, now)?;
                for copy in &superseded {
                    one_row(tx.execute(
                        "UPDATE notion_items SET body_state = ?3, rewrite_check = NULL
                         WHERE account = ?1 AND item_id = ?2 AND notion_page_id = ?4
                           AND body_state = ?5 AND rewrite_check = ?6",
                        params![
                            copy.key.account,
                            copy.key.item_id,
                            BodyColumn::Done,
                            copy.page_id,
                            BodyColumn::None,
                            Check::Conflict
                        ],
                    )?)?;
                    record_conflict(
                        tx,
                        &copy.key,
                        &copy.page_id,
                        kept_item_id,
                        onenote_last_modified,
                        now,
                    )?;
                }
                Ok(())
            },
        )?;
        Ok(Complete { key, page_id })
    }
}

/// Records (or, for a page already in conflict, updates and opens again) the conflict of `key`'s
/// page `page_id`: the OneNote version `onenote_last_modified` is kept as `kept_item_id`.
fn record_conflict(
    tx: &Transaction<'_>,
    key: &ItemKey,
    page_id: &str,
    kept_item_id: &str,
    onenote_last_modified: Option<&str>,
    now: UnixMillis,
) -> rusqlite::Result<()> {
    one_row(tx.execute(
        "INSERT INTO conflicts(account, item_id, notion_page_id, kept_item_id,
                               found_at, onenote_last_modified)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)
         ON CONFLICT(account, item_id) DO UPDATE SET
            kept_item_id = excluded.kept_item_id,
            onenote_last_modified = excluded.onenote_last_modified,
            resolved_at = NULL",
        params![
            key.account,
            key.item_id,
            page_id,
            kept_item_id,
            now,
            onenote_last_modified
        ],
    )?)
}

impl Complete {
    /// The Notion page.
    pub fn page_id(&self) -> &str {
        &self.page_id
    }

    /// A kept OneNote version (complete) → rewriting, not checked yet: a later OneNote version of
    /// its page replaces it, as long as the conflict rule finds it as notebridge wrote it (a kept
    /// copy is a page like any other: a person may have written in it). Refused for any other
    /// item.
    pub fn to_rewrite_kept(self, db: &Db, token: &RunToken) -> Result<Rewriting> {
        let Complete { key, page_id } = self;
        db.item_write(
            token,
            &key.to_string(),
            (Stage::Complete, Stage::Rewriting),
            "planning a kept version's rewrite",
            |tx| {
                one_row(tx.execute(
                    "UPDATE notion_items SET body_state = ?3, rewrite_check = NULL
                     WHERE account = ?1 AND item_id = ?2 AND notion_page_id = ?4
                       AND body_state = ?5 AND kind = ?6",
                    params![
                        key.account,
                        key.item_id,
                        BodyColumn::None,
                        page_id,
                        BodyColumn::Done,
                        ItemKind::KeptVersion
                    ],
                )?)
            },
        )?;
        Ok(Rewriting {
            key,
            page_id,
            check: None,
        })
    }
}

/// A page left as a person edited it in Notion, its OneNote version kept beside it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Conflict {
    /// The inventory key.
    pub account: String,
    /// The OneNote page id.
    pub item_id: String,
    /// The page's title as notebridge last wrote it.
    pub title: String,
    /// The person's Notion page (left as it is).
    pub notion_page_id: String,
    /// The Notion page holding the OneNote version (`None` while it is being written).
    pub kept_page_id: Option<String>,
    /// The kept version's title.
    pub kept_title: Option<String>,
    /// OneNote's `lastModifiedDateTime` of the version kept.
    pub onenote_last_modified: Option<String>,
    /// When it was first found (Unix ms).
    pub found_at: UnixMillis,
    /// What OneNote did to it (`changed`: its content, whose OneNote version is kept beside it;
    /// `renamed`, `moved`, `deleted`: a `sync` step left undone, with no other version to keep).
    pub change: Change,
}

/// The columns a [`Conflict`] is read from, for `FROM conflicts c` ([`conflict_of_row`]).
pub(super) const CONFLICT_COLUMNS: &str =
    "c.account, c.item_id, coalesce(n.title, ''), c.notion_page_id, k.notion_page_id, k.title,
     c.onenote_last_modified, c.found_at, c.change
     FROM conflicts c
     LEFT JOIN notion_items n ON n.account = c.account AND n.item_id = c.item_id
     LEFT JOIN notion_items k ON k.account = c.account AND k.item_id = c.kept_item_id";

/// A row of `SELECT` [`CONFLICT_COLUMNS`] as a [`Conflict`].
pub(super) fn conflict_of_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Conflict> {
    Ok(Conflict {
        account: r.get(0)?,
        item_id: r.get(1)?,
        title: r.get(2)?,
        notion_page_id: r.get(3)?,
        kept_page_id: r.get(4)?,
        kept_title: r.get(5)?,
        onenote_last_modified: r.get(6)?,
        found_at: r.get(7)?,
        change: Change::parse(&r.get::<_, String>(8)?),
    })
}

impl Db {
    /// The open conflicts of the inventory keys `accounts` (not resolved by the person, see
    /// `Db::resolve_conflicts`), in the order they were found.
    pub fn conflicts(&self, accounts: &[String]) -> Result<Vec<Conflict>> {
        self.conflicts_where(accounts, false)
    }

    /// The conflicts of `accounts` the person resolved, in the order they were found.
    pub fn resolved_conflicts(&self, accounts: &[String]) -> Result<Vec<Conflict>> {
        self.conflicts_where(accounts, true)
    }

    fn conflicts_where(&self, accounts: &[String], resolved: bool) -> Result<Vec<Conflict>> {
        self.read("reading conflicts", |c| {
            let mut st = c.prepare(&format!(
                "SELECT {CONFLICT_COLUMNS}
                 WHERE c.account = ?1 AND (c.resolved_at IS NOT NULL) = ?2
                 ORDER BY c.found_at, c.rowid"
            ))?;
            let mut out = Vec::new();
            for a in accounts {
                for r in st.query_map(params![a, resolved], conflict_of_row)? {
                    out.push(r?);
                }
            }
            Ok(out)
        })
    }

    /// The conflicts of `accounts` with their groups' and sites' (`Db::queued_keys`).
    pub fn account_conflicts(&self, accounts: &[String]) -> Result<Vec<Conflict>> {
        let mut keys = Vec::new();
        for a in accounts {
            keys.extend(self.queued_keys(a)?);
        }
        self.conflicts(&keys)
    }

    /// Whether the page `item_id` of `account` is a recorded conflict.
    pub fn is_conflict(&self, account: &str, item_id: &str) -> Result<bool> {
        self.read("reading conflicts", |c| {
            c.query_row(
                "SELECT count(*) FROM conflicts WHERE account = ?1 AND item_id = ?2",
                params![account, item_id],
                |r| r.get::<_, i64>(0),
            )
            .map(|n| n > 0)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn db_and_lock() -> (tempfile::TempDir, Db, RunToken) {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(&dir.path().join("s.db")).unwrap();
        let t = db
            .acquire_run_lock(1, "run", 0, std::time::Duration::from_secs(90), |_| false)
            .unwrap()
            .unwrap();
        (dir, db, t)
    }

    fn refused<T: fmt::Debug>(r: Result<T>, want: (Stage, Stage)) {
        match r {
            Err(StoreError::Item { from, to, .. }) => assert_eq!((from, to), want),
            other => panic!("expected a refused transition {want:?}, got {other:?}"),
        }
    }

    #[test]
    fn intent_then_created_then_written() {
        let (_dir, db, t) = db_and_lock();
        let intent = db
            .record_intent(&t, "a", "p1", ItemKind::Page, "root", "One")
            .unwrap();
        // A second intent would hide the first one's page: it changes no row and is refused.
        refused(
            db.record_intent(&t, "a", "p1", ItemKind::Page, "root", "One"),
            (Stage::Planned, Stage::Intended),
        );
        let i = db.notion_item("a", "p1").unwrap().unwrap();
        assert_eq!((i.page_id(), i.state.stage()), (None, Stage::Intended));
        assert_eq!(i.kind, ItemKind::Page);
        let writing = intent.created(&db, &t, "n1").unwrap();
        assert_eq!(
            db.notion_item("a", "p1").unwrap().unwrap().state,
            ItemState::Writing(writing.clone())
        );
        let w = Written {
            blocks: 10,
            files: 2,
            report: Some("[]"),
            onenote_last_modified: Some("2024-01-01T00:00:00.000Z"),
            pending_links: true,
            shape: None,
            links_recorded: true,
            fingerprint: None,
            row_order: None,
            body_digest: None,
        };
        let done = writing.written(&db, &t, &w).unwrap();
        assert_eq!(done.page_id(), "n1");
        assert_eq!(db.pages_with_pending_links("a").unwrap().len(), 1);
        let i = db.notion_item("a", "p1").unwrap().unwrap();
        assert_eq!((i.blocks, i.files), (10, 2));
        assert_eq!(i.state, ItemState::Complete(done));
        assert_eq!(db.notion_children_of("root").unwrap().len(), 1);
        // links find pages by the GUID the scan recorded
        assert!(db.migrated_page_targets("a").unwrap().is_empty());
    }

    #[test]
    fn a_transition_from_a_state_the_record_is_not_in_changes_nothing_and_is_an_error() {
        let (_dir, db, t) = db_and_lock();
        let intent = db
            .record_intent(&t, "a", "p1", ItemKind::Page, "root", "One")
            .unwrap();
        let stale = intent.clone();
        let writing = intent.created(&db, &t, "n1").unwrap();
        // The same intent held twice: the second creation finds the page recorded already.
        refused(
            stale.created(&db, &t, "n2"),
            (Stage::Intended, Stage::Writing),
        );
        let again = writing.clone();
        writing.written(&db, &t, &Written::default()).unwrap();
        refused(
            again.written(&db, &t, &Written::default()),
            (Stage::Writing, Stage::Complete),
        );
        let i = db.notion_item("a", "p1").unwrap().unwrap();
        assert_eq!(i.page_id(), Some("n1"));
        assert!(i.state.is_complete());
        // Writes about an item without a record (or not complete) change no row: refused.
        refused(
            db.set_report(&t, "a", "nobody", Some("[]")),
            (Stage::Complete, Stage::Complete),
        );
        refused(
            db.set_pending_links(&t, "a", "nobody", true),
            (Stage::Complete, Stage::Complete),
        );
        db.record_intent(&t, "a", "p2", ItemKind::Page, "root", "Two")
            .unwrap();
        refused(
            db.set_pending_links(&t, "a", "p2", true),
            (Stage::Complete, Stage::Complete),
        );
        db.set_report(&t, "a", "p1", Some("[1]")).unwrap();
        db.set_pending_links(&t, "a", "p1", false).unwrap();
    }

    #[test]
    fn rewrites_are_planned_for_every_changed_page_with_a_job_or_for_none() {
        use crate::store::inventory::{Notebook, Page, ScanScope, Section};
        let (_dir, db, t) = db_and_lock();
        let inv = |modified: &str| {
            vec![Notebook {
                id: "nb".into(),
                name: "NB".into(),
                created: None,
                last_modified: None,
                section_groups: vec![],
                sections: vec![Section {
                    id: "s".into(),
                    name: "S".into(),
                    created: None,
                    last_modified: None,
                    pages: vec![Page {
                        id: "p1".into(),
                        title: "P1".into(),
                        level: 0,
                        order: 0,
                        last_modified: Some(modified.into()),
                        created: None,
                        content_url: None,
                        author: None,
                        web_url: None,
                    }],
                }],
            }]
        };
        let written = Written {
            onenote_last_modified: Some("2024-01-01T00:00:00.000Z"),
            ..Written::default()
        };
        db.save_scan("a", &inv("2024-01-01T00:00:00.000Z"), &ScanScope::All, 1)
            .unwrap();
        db.record_intent(&t, "a", "p1", ItemKind::Page, "root", "P1")
            .unwrap()
            .created(&db, &t, "n1")
            .unwrap()
            .written(&db, &t, &written)
            .unwrap();
        db.save_scan("a", &inv("2024-02-01T00:00:00.000Z"), &ScanScope::All, 2)
            .unwrap();
        // A changed page whose job was never planned: its rewrite would never run, so nothing is
        // planned, not even the record's half of it.
        refused(
            db.plan_rewrites(&t, "a", 3),
            (Stage::Complete, Stage::Rewriting),
        );
        let i = db.notion_item("a", "p1").unwrap().unwrap();
        assert_eq!(i.state.stage(), Stage::Complete);
        db.create_plan(&t, "a", "root", &inv("2024-02-01T00:00:00.000Z"), 4)
            .unwrap();
        assert_eq!(db.plan_rewrites(&t, "a", 5).unwrap(), 1);
        let i = db.notion_item("a", "p1").unwrap().unwrap();
        let ItemState::Rewriting(page) = i.state else {
            panic!("{:?}", i.state)
        };
        assert_eq!(page.page_id(), "n1");
        page.retitled(&db, &t, "P1 renamed").unwrap();
        // Not written before the conflict check cleared it.
        refused(
            page.clone().written(&db, &t, &written),
            (Stage::Rewriting, Stage::Complete),
        );
        let page = page.checked(&db, &t, Check::Clear).unwrap();
        refused(
            page.clone().checked(&db, &t, Check::Conflict),
            (Stage::Rewriting, Stage::Rewriting),
        );
        page.written(&db, &t, &written).unwrap();
        assert_eq!(
            db.notion_item("a", "p1").unwrap().unwrap().title,
            "P1 renamed"
        );
    }

    #[test]
    fn a_body_without_a_page_is_no_state_and_is_refused_when_read() {
        let (_dir, db, t) = db_and_lock();
        db.record_intent(&t, "a", "p1", ItemKind::Page, "root", "One")
            .unwrap();
        db.write("breaking a record", |tx| {
            tx.execute("UPDATE notion_items SET body_state = 'done'", [])
        })
        .unwrap();
        assert!(matches!(
            db.notion_item("a", "p1"),
            Err(StoreError::Sqlite { .. })
        ));
    }
}
