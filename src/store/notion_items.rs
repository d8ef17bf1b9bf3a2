//! What exists in Notion for each OneNote item, and the intent recorded before each creation, so that a
//! lost answer or a kill never leads to a second page.

use std::collections::{HashMap, HashSet};

use rusqlite::types::{FromSql, FromSqlError, FromSqlResult, ToSql, ToSqlOutput, ValueRef};
use rusqlite::{params, OptionalExtension, Row};
use serde::Serialize;

use super::jobs::{JobKind, JobState, RunToken};
use super::{Db, Result};
use crate::clock::UnixMillis;

/// How far the body of an item has been written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BodyState {
    /// Nothing written yet (or the item has no body).
    None,
    /// Writing started; a resumed run reconciles with what Notion holds.
    Writing,
    /// Complete.
    Done,
}

impl BodyState {
    const ALL: [BodyState; 3] = [BodyState::None, BodyState::Writing, BodyState::Done];

    /// The name stored in the database.
    pub fn as_str(self) -> &'static str {
        match self {
            BodyState::None => "none",
            BodyState::Writing => "writing",
            BodyState::Done => "done",
        }
    }
}

/// Strict: text that is no body state is an error when read, never taken for `none`.
impl FromSql for BodyState {
    fn column_result(v: ValueRef<'_>) -> FromSqlResult<Self> {
        let s = v.as_str()?;
        BodyState::ALL
            .into_iter()
            .find(|b| b.as_str() == s)
            .ok_or_else(|| FromSqlError::Other(format!("unknown body state {s:?}").into()))
    }
}

impl ToSql for BodyState {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(self.as_str().into())
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
}

/// One row of `notion_items`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NotionItem {
    /// OneNote id.
    pub item_id: String,
    /// What it is (`notebook`, `section_group`, `section`, `page`).
    pub kind: String,
    /// The Notion page it goes under.
    pub parent_notion_id: String,
    /// Title it was created with.
    pub title: String,
    /// The Notion page, once known; `None` while only the intent is recorded.
    pub notion_page_id: Option<String>,
    /// Body progress.
    pub body_state: BodyState,
    /// Blocks written.
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
}

impl NotionItem {
    fn from_row(r: &Row<'_>) -> rusqlite::Result<Self> {
        Ok(NotionItem {
            item_id: r.get("item_id")?,
            kind: r.get("kind")?,
            parent_notion_id: r.get("parent_notion_id")?,
            title: r.get("title")?,
            notion_page_id: r.get("notion_page_id")?,
            body_state: r.get("body_state")?,
            blocks: r.get("blocks")?,
            files: r.get("files")?,
            report: r.get("report")?,
            body_shape: r.get("body_shape")?,
            links_recorded: r.get("links_recorded")?,
        })
    }
}

const COLUMNS: &str = "item_id, kind, parent_notion_id, title, notion_page_id, body_state, \
                       blocks, files, report, body_shape, links_recorded";

impl Db {
    /// The Notion record of one OneNote item.
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

    /// Records the intent to create the page for an item under `parent` (before the request).
    pub fn record_intent(
        &self,
        token: &RunToken,
        account: &str,
        item_id: &str,
        kind: &str,
        parent: &str,
        title: &str,
    ) -> Result<()> {
        self.write_holding(token, "recording a page creation", |tx| {
            tx.execute(
                "INSERT INTO notion_items(account, item_id, kind, parent_notion_id, title, body_state)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)
                 ON CONFLICT(account, item_id) DO NOTHING",
                params![account, item_id, kind, parent, title, BodyState::None],
            )?;
            Ok(())
        })
    }

    /// Stores the Notion id of a created page; its body is being written from now on.
    pub fn record_created(
        &self,
        token: &RunToken,
        account: &str,
        item_id: &str,
        notion_id: &str,
    ) -> Result<()> {
        self.write_holding(token, "recording a created page", |tx| {
            tx.execute(
                "UPDATE notion_items SET notion_page_id = ?3, body_state = ?4
                 WHERE account = ?1 AND item_id = ?2",
                params![account, item_id, notion_id, BodyState::Writing],
            )?;
            Ok(())
        })
    }

    /// Records a new title of an item's Notion page.
    pub fn record_title(
        &self,
        token: &RunToken,
        account: &str,
        item_id: &str,
        title: &str,
    ) -> Result<()> {
        self.write_holding(token, "recording a title", |tx| {
            tx.execute(
                "UPDATE notion_items SET title = ?3 WHERE account = ?1 AND item_id = ?2",
                params![account, item_id, title],
            )?;
            Ok(())
        })
    }

    /// Marks the body written, with what was written, the converter's report and whether links to
    /// pages not migrated yet wait for the link pass: one transaction, so a kill never keeps one
    /// without the other. What its steps learned is no longer needed and goes.
    pub fn record_written(
        &self,
        token: &RunToken,
        account: &str,
        item_id: &str,
        w: &Written<'_>,
    ) -> Result<()> {
        self.write_holding(token, "recording a written page", |tx| {
            tx.execute(
                "UPDATE notion_items SET body_state = ?9, blocks = ?3, files = ?4, report = ?5,
                        onenote_last_modified = ?6, pending_links = ?7, body_shape = ?8,
                        links_recorded = ?10
                 WHERE account = ?1 AND item_id = ?2",
                params![
                    account,
                    item_id,
                    w.blocks,
                    w.files,
                    w.report,
                    w.onenote_last_modified,
                    w.pending_links,
                    w.shape,
                    BodyState::Done,
                    w.links_recorded
                ],
            )?;
            tx.execute(
                "DELETE FROM write_steps WHERE account = ?1 AND item_id = ?2",
                params![account, item_id],
            )?;
            Ok(())
        })
    }

    /// Marks the bodies of pages changed in OneNote to be rewritten in place (`migrate --update`) and
    /// puts their jobs back in the queue; one transaction, by the run lock's holder (`token`).
    /// Returns how many.
    pub fn plan_rewrites(&self, token: &RunToken, account: &str, now: UnixMillis) -> Result<usize> {
        let changed = self.changed_since_migration(account)?;
        self.write_holding(token, "planning rewrites", |tx| {
            for (page, ..) in &changed {
                // A known page with body state `none` is rewritten: old body removed, new one written.
                tx.execute(
                    "UPDATE notion_items SET body_state = ?3 WHERE account = ?1 AND item_id = ?2",
                    params![account, page, BodyState::None],
                )?;
                tx.execute(
                    "UPDATE jobs SET state = ?4, attempts = 0, not_before = 0, updated_at = ?3
                     WHERE account = ?1 AND kind = ?5 AND item_id = ?2",
                    params![account, page, now, JobState::Queued, JobKind::Page],
                )?;
            }
            Ok(changed.len())
        })
    }

    /// Replaces a written page's stored report (the link pass adds what it degraded).
    pub fn set_report(
        &self,
        token: &RunToken,
        account: &str,
        item_id: &str,
        report: Option<&str>,
    ) -> Result<()> {
        self.write_holding(token, "recording a page's report", |tx| {
            tx.execute(
                "UPDATE notion_items SET report = ?3 WHERE account = ?1 AND item_id = ?2",
                params![account, item_id, report],
            )?;
            Ok(())
        })
    }

    /// Records whether a written page still holds links to pages not migrated yet.
    pub fn set_pending_links(
        &self,
        token: &RunToken,
        account: &str,
        item_id: &str,
        pending: bool,
    ) -> Result<()> {
        self.write_holding(token, "recording pending links", |tx| {
            tx.execute(
                "UPDATE notion_items SET pending_links = ?3 WHERE account = ?1 AND item_id = ?2",
                params![account, item_id, pending],
            )?;
            Ok(())
        })
    }

    /// Written pages of `account` whose links to other pages wait for the link pass.
    pub fn pages_with_pending_links(&self, account: &str) -> Result<Vec<NotionItem>> {
        self.read("reading pages with pending links", |c| {
            let mut st = c.prepare(&format!(
                "SELECT {COLUMNS} FROM notion_items
                 WHERE account = ?1 AND pending_links = 1 AND body_state = ?2 ORDER BY rowid"
            ))?;
            let rows = st.query_map(params![account, BodyState::Done], NotionItem::from_row)?;
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

    /// The migrated pages as link targets: OneNote page GUID (lowercase) to the Notion page id and
    /// the page's title.
    /// Its groups' and sites' pages are included (a link from an own page to a team's page
    /// resolves).
    pub fn migrated_page_targets(
        &self,
        account: &str,
    ) -> Result<HashMap<String, crate::convert::PageTarget>> {
        self.read("reading migrated pages", |c| {
            let family = super::sources::KEY_OF_ACCOUNT.replace("account", "n.account");
            let mut st = c.prepare(&format!(
                "SELECT p.onenote_guid, n.notion_page_id, p.title FROM notion_items n
                 JOIN pages p ON p.account = n.account AND p.id = n.item_id
                 WHERE {family} AND n.kind = 'page' AND n.notion_page_id IS NOT NULL
                   AND p.onenote_guid IS NOT NULL"
            ))?;
            let rows = st.query_map([account], |r| {
                Ok((
                    r.get::<_, String>(0)?.to_ascii_lowercase(),
                    crate::convert::PageTarget {
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
                   AND p.deleted_at IS NULL AND p.last_modified > n.onenote_last_modified
                 ORDER BY p.section_id, p.\"order\"",
            )?;
            let rows = st.query_map(params![account, JobKind::Page, BodyState::Done], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
            })?;
            rows.collect()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intent_then_created_then_written() {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(&dir.path().join("s.db")).unwrap();
        let t = db
            .acquire_run_lock(1, "run", 0, std::time::Duration::from_secs(90), |_| false)
            .unwrap()
            .unwrap();
        db.record_intent(&t, "a", "p1", "page", "root", "One")
            .unwrap();
        db.record_intent(&t, "a", "p1", "page", "root", "One")
            .unwrap();
        let i = db.notion_item("a", "p1").unwrap().unwrap();
        assert_eq!((i.notion_page_id, i.body_state), (None, BodyState::None));
        db.record_created(&t, "a", "p1", "n1").unwrap();
        assert_eq!(
            db.notion_item("a", "p1").unwrap().unwrap().body_state,
            BodyState::Writing
        );
        let w = Written {
            blocks: 10,
            files: 2,
            report: Some("[]"),
            onenote_last_modified: Some("2024-01-01T00:00:00.000Z"),
            pending_links: true,
            shape: None,
            links_recorded: true,
        };
        db.record_written(&t, "a", "p1", &w).unwrap();
        assert_eq!(db.pages_with_pending_links("a").unwrap().len(), 1);
        let i = db.notion_item("a", "p1").unwrap().unwrap();
        assert_eq!((i.blocks, i.files, i.body_state), (10, 2, BodyState::Done));
        assert_eq!(db.notion_children_of("root").unwrap().len(), 1);
        // links find pages by the GUID the scan recorded
        assert!(db.migrated_page_targets("a").unwrap().is_empty());
    }
}
