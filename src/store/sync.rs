//! What `sync` reads and records of the Notion side: where each item's page was last placed, under
//! what title, whether it went to the trash, and the check made before a step's write (schema
//! 0024). Every write is one transaction by the run lock's holder, naming the state it starts
//! from; one that changes no row is [`StoreError::Item`] and keeps nothing.

use std::collections::HashSet;

use rusqlite::params;

use super::jobs::RunToken;
pub use super::notion_items::Change;
use super::notion_items::{one_row, Fingerprint, ItemKind, Stage, NEXT_PLACED};
use super::{Db, Result};
use crate::clock::UnixMillis;

/// A complete item's page as notebridge last placed it in Notion.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Placed {
    /// The OneNote id.
    pub item_id: String,
    /// What it is.
    pub kind: ItemKind,
    /// Its Notion page.
    pub page_id: String,
    /// The Notion page or data source it was last put under.
    pub parent: String,
    /// The title it was last given.
    pub title: String,
    /// When it was put under its parent, relative to every other page: Notion lists a parent's
    /// child pages in this order.
    pub placed: i64,
    /// A sync step found it unedited and its write may have reached Notion unrecorded.
    pub checked: bool,
    /// A row's `Order` as last written (`None`: unknown, taken as in step).
    pub row_order: Option<i64>,
    /// What the page held when notebridge last wrote it.
    pub fingerprint: Option<Fingerprint>,
    /// A person's edit left it as it is: sync does not touch it again.
    pub conflict: bool,
    /// A row's properties owed after a move into another data source (schema 0029).
    pub row_owed: Option<OwedRow>,
}

/// What a row is owed once a move into another data source has left it only its title: the
/// properties that do not follow OneNote's place (its name, `Order` and `Level` do, and are
/// written from the step). Recorded before the move, so that a resumed step still has them.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct OwedRow {
    /// `Created`, as the row held it (RFC 3339).
    pub created: Option<String>,
    /// `Modified`, as the row held it.
    pub modified: Option<String>,
    /// The tags, by their OneNote names (the new data source may name them otherwise).
    pub tags: Vec<String>,
    /// `Author`.
    pub author: Option<String>,
    /// `OneNote link`.
    pub link: Option<String>,
}

impl OwedRow {
    fn to_json(&self) -> String {
        serde_json::to_string(self).expect("an owed row serialises")
    }

    fn from_json(s: &str) -> Option<OwedRow> {
        serde_json::from_str(s).ok()
    }
}

/// A section's database as `sync` sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlacedDatabase {
    /// The OneNote section.
    pub section_id: String,
    /// The page it was created in.
    pub parent_page_id: String,
    /// Its title as last written.
    pub title: String,
    /// The database.
    pub database_id: String,
    /// Its data source (its rows' parent).
    pub data_source_id: String,
    /// The page a new database is being made in (its section moved in OneNote; schema 0029).
    pub move_parent: Option<String>,
    /// The database and data source it had before its section moved, until trashed.
    pub old: Option<(String, String)>,
}

impl Db {
    /// The complete, live (not trashed) pages of `key` that sync may act on: every kind but the
    /// source pages and the kept OneNote versions, which follow their own items.
    pub fn placed_items(&self, key: &str) -> Result<Vec<Placed>> {
        self.read("reading where pages were placed", |c| {
            let mut st = c.prepare(
                "SELECT n.item_id, n.kind, n.notion_page_id, n.parent_notion_id, n.title,
                        coalesce(n.placed, n.rowid), n.sync_check IS NOT NULL, n.row_order,
                        n.fingerprint,
                        EXISTS (SELECT 1 FROM conflicts c
                                WHERE c.account = n.account AND c.item_id = n.item_id),
                        n.row_owed
                 FROM notion_items n
                 WHERE n.account = ?1 AND n.notion_page_id IS NOT NULL AND n.body_state = 'done'
                   AND n.trashed_at IS NULL AND n.kind NOT IN (?2, ?3)
                 ORDER BY coalesce(n.placed, n.rowid)",
            )?;
            let rows =
                st.query_map(params![key, ItemKind::Source, ItemKind::KeptVersion], |r| {
                    Ok(Placed {
                        item_id: r.get(0)?,
                        kind: r.get(1)?,
                        page_id: r.get(2)?,
                        parent: r.get(3)?,
                        title: r.get(4)?,
                        placed: r.get(5)?,
                        checked: r.get(6)?,
                        row_order: r.get(7)?,
                        fingerprint: r
                            .get::<_, Option<String>>(8)?
                            .as_deref()
                            .and_then(Fingerprint::from_json),
                        conflict: r.get(9)?,
                        row_owed: r
                            .get::<_, Option<String>>(10)?
                            .as_deref()
                            .and_then(OwedRow::from_json),
                    })
                })?;
            rows.collect()
        })
    }

    /// The created, live section databases of `key`.
    pub fn placed_databases(&self, key: &str) -> Result<Vec<PlacedDatabase>> {
        self.read("reading section databases", |c| {
            let mut st = c.prepare(
                "SELECT section_id, parent_page_id, title, database_id, data_source_id,
                        move_parent_page_id, old_database_id, old_data_source_id
                 FROM section_databases
                 WHERE account = ?1 AND database_id IS NOT NULL AND trashed_at IS NULL",
            )?;
            let rows = st.query_map([key], |r| {
                let old: (Option<String>, Option<String>) = (r.get(6)?, r.get(7)?);
                Ok(PlacedDatabase {
                    section_id: r.get(0)?,
                    parent_page_id: r.get(1)?,
                    title: r.get(2)?,
                    database_id: r.get(3)?,
                    data_source_id: r.get(4)?,
                    move_parent: r.get(5)?,
                    old: old.0.zip(old.1),
                })
            })?;
            rows.collect()
        })
    }

    /// The old data sources of `key`'s sections that moved, still in Notion (`verify` reads the
    /// rows a person's edit kept there).
    pub fn old_data_sources(&self, key: &str) -> Result<Vec<String>> {
        self.read("reading old data sources", |c| {
            let mut st = c.prepare(
                "SELECT old_data_source_id FROM section_databases
                 WHERE account = ?1 AND old_data_source_id IS NOT NULL",
            )?;
            let rows = st.query_map([key], |r| r.get(0))?;
            rows.collect()
        })
    }

    /// Sections of the import `key` whose file could not be read this time: what they held is
    /// unknown, not deleted.
    pub fn unreadable_sections(&self, key: &str) -> Result<HashSet<String>> {
        self.read("reading unreadable sections", |c| {
            let mut st = c.prepare(
                "SELECT section_id FROM file_sections WHERE account = ?1 AND problem IS NOT NULL",
            )?;
            let rows = st.query_map([key], |r| r.get(0))?;
            rows.collect()
        })
    }

    /// The section each page of `key` was last seen in (deleted pages included).
    pub fn page_sections(&self, key: &str) -> Result<std::collections::HashMap<String, String>> {
        self.read("reading pages' sections", |c| {
            let mut st = c.prepare("SELECT id, section_id FROM pages WHERE account = ?1")?;
            let rows = st.query_map([key], |r| Ok((r.get(0)?, r.get(1)?)))?;
            rows.collect()
        })
    }

    /// Records that a sync step found `item`'s page unedited, before its write, with what the
    /// row is `owed` once moved into another data source (kept when `None`).
    pub fn sync_checked(
        &self,
        token: &RunToken,
        key: &str,
        item: &str,
        owed: Option<&OwedRow>,
    ) -> Result<()> {
        self.item_write(
            token,
            &format!("{key}/{item}"),
            (Stage::Complete, Stage::Complete),
            "recording a sync check",
            |tx| {
                one_row(tx.execute(
                    "UPDATE notion_items SET sync_check = 'clear', row_owed = coalesce(?3, row_owed)
                     WHERE account = ?1 AND item_id = ?2 AND body_state = 'done'
                       AND trashed_at IS NULL",
                    params![key, item, owed.map(OwedRow::to_json)],
                )?)
            },
        )
    }

    /// Records a sync step's write to `item`'s page: its title, its parent (placed after every
    /// other page when `moved`), a row's `Order` (its properties written: nothing is owed any
    /// more), and its fingerprint as the write's answer gave it; the check is cleared.
    pub fn sync_placed(
        &self,
        token: &RunToken,
        key: &str,
        item: &str,
        p: &Placing<'_>,
    ) -> Result<()> {
        self.item_write(
            token,
            &format!("{key}/{item}"),
            (Stage::Complete, Stage::Complete),
            "recording a sync step",
            |tx| {
                one_row(tx.execute(
                    &format!(
                        "UPDATE notion_items SET title = ?3, parent_notion_id = ?4,
                                placed = CASE WHEN ?5 THEN {NEXT_PLACED} ELSE placed END,
                                row_order = coalesce(?6, row_order),
                                row_owed = CASE WHEN ?6 IS NULL THEN row_owed END,
                                fingerprint = coalesce(?7, fingerprint), sync_check = NULL
                         WHERE account = ?1 AND item_id = ?2 AND body_state = 'done'
                           AND trashed_at IS NULL"
                    ),
                    params![
                        key,
                        item,
                        p.title,
                        p.parent,
                        p.moved,
                        p.row_order,
                        p.fingerprint.map(Fingerprint::to_json)
                    ],
                )?)
            },
        )
    }

    /// Records `items`' pages in Notion's trash (the first one trashed, the others with it).
    pub fn sync_trashed(
        &self,
        token: &RunToken,
        key: &str,
        items: &[String],
        now: UnixMillis,
    ) -> Result<()> {
        self.item_write(
            token,
            &format!("{key}/{}", items.first().map_or("", String::as_str)),
            (Stage::Complete, Stage::Complete),
            "recording trashed pages",
            |tx| {
                for item in items {
                    one_row(tx.execute(
                        "UPDATE notion_items SET trashed_at = ?3, sync_check = NULL
                         WHERE account = ?1 AND item_id = ?2 AND body_state = 'done'
                           AND trashed_at IS NULL",
                        params![key, item, now],
                    )?)?;
                }
                Ok(())
            },
        )
    }

    /// Records a section's database (and the rows in `rows`) in Notion's trash.
    pub fn sync_trashed_database(
        &self,
        token: &RunToken,
        key: &str,
        section: &str,
        rows: &[String],
        now: UnixMillis,
    ) -> Result<()> {
        self.item_write(
            token,
            &format!("{key}/{section}"),
            (Stage::Complete, Stage::Complete),
            "recording a trashed database",
            |tx| {
                one_row(tx.execute(
                    "UPDATE section_databases SET trashed_at = ?3
                     WHERE account = ?1 AND section_id = ?2 AND trashed_at IS NULL",
                    params![key, section, now],
                )?)?;
                for item in rows {
                    one_row(tx.execute(
                        "UPDATE notion_items SET trashed_at = ?3, sync_check = NULL
                         WHERE account = ?1 AND item_id = ?2 AND trashed_at IS NULL",
                        params![key, item, now],
                    )?)?;
                }
                Ok(())
            },
        )
    }

    /// Records a section database's new title.
    pub fn sync_database_retitled(
        &self,
        token: &RunToken,
        key: &str,
        section: &str,
        title: &str,
    ) -> Result<()> {
        self.item_write(
            token,
            &format!("{key}/{section}"),
            (Stage::Complete, Stage::Complete),
            "recording a database's title",
            |tx| {
                one_row(tx.execute(
                    "UPDATE section_databases SET title = ?3
                     WHERE account = ?1 AND section_id = ?2 AND trashed_at IS NULL",
                    params![key, section, title],
                )?)
            },
        )
    }

    /// Records that `section`'s database is to be made again in the page `parent` (its section
    /// moved in OneNote), unless such an intent is recorded; returns the page recorded, and
    /// whether the intent is new (none of an earlier run may have reached Notion).
    pub fn sync_database_moving(
        &self,
        token: &RunToken,
        key: &str,
        section: &str,
        parent: &str,
    ) -> Result<(String, bool)> {
        self.item_write(
            token,
            &format!("{key}/{section}"),
            (Stage::Complete, Stage::Complete),
            "recording a database's move",
            |tx| {
                let earlier: Option<String> = tx.query_row(
                    "SELECT move_parent_page_id FROM section_databases
                     WHERE account = ?1 AND section_id = ?2",
                    params![key, section],
                    |r| r.get(0),
                )?;
                one_row(tx.execute(
                    "UPDATE section_databases
                     SET move_parent_page_id = coalesce(move_parent_page_id, ?3)
                     WHERE account = ?1 AND section_id = ?2 AND database_id IS NOT NULL
                       AND trashed_at IS NULL AND old_database_id IS NULL",
                    params![key, section, parent],
                )?)?;
                let fresh = earlier.is_none();
                Ok((earlier.unwrap_or_else(|| parent.to_owned()), fresh))
            },
        )
    }

    /// Records `section`'s new database (`database`, `data_source`, titled `title`) in the page
    /// its move intent names, in one transaction: the section's record names it from now on, the
    /// old one is kept as old until trashed, and the old data source's tags are the new one's (the
    /// new schema was made with them).
    pub fn sync_database_moved(
        &self,
        token: &RunToken,
        key: &str,
        section: &str,
        database: &str,
        data_source: &str,
        title: &str,
    ) -> Result<()> {
        self.item_write(
            token,
            &format!("{key}/{section}"),
            (Stage::Complete, Stage::Complete),
            "recording a database's new place",
            |tx| {
                tx.execute(
                    "INSERT OR IGNORE INTO database_tags (data_source_id, source_name, name, added_at)
                     SELECT ?3, t.source_name, t.name, t.added_at FROM database_tags t
                     JOIN section_databases d ON d.data_source_id = t.data_source_id
                     WHERE d.account = ?1 AND d.section_id = ?2 AND t.added_at IS NOT NULL",
                    params![key, section, data_source],
                )?;
                one_row(tx.execute(
                    "UPDATE section_databases
                     SET old_database_id = database_id, old_data_source_id = data_source_id,
                         database_id = ?3, data_source_id = ?4, title = ?5,
                         parent_page_id = move_parent_page_id, move_parent_page_id = NULL
                     WHERE account = ?1 AND section_id = ?2 AND move_parent_page_id IS NOT NULL
                       AND old_database_id IS NULL AND trashed_at IS NULL",
                    params![key, section, database, data_source, title],
                )?)
            },
        )
    }

    /// Records that `section`'s old database (the one it had before it moved) is in the trash.
    pub fn sync_old_database_trashed(
        &self,
        token: &RunToken,
        key: &str,
        section: &str,
    ) -> Result<()> {
        self.item_write(
            token,
            &format!("{key}/{section}"),
            (Stage::Complete, Stage::Complete),
            "recording an old database trashed",
            |tx| {
                one_row(tx.execute(
                    "UPDATE section_databases SET old_database_id = NULL, old_data_source_id = NULL
                     WHERE account = ?1 AND section_id = ?2 AND old_database_id IS NOT NULL",
                    params![key, section],
                )?)
            },
        )
    }

    /// Records that `item`'s page, which a person edited in Notion, is left as it is although
    /// OneNote `change`d it: sync leaves it alone from now on, and it is listed as a conflict.
    pub fn sync_conflict(
        &self,
        token: &RunToken,
        key: &str,
        item: &str,
        page: &str,
        change: Change,
        now: UnixMillis,
    ) -> Result<()> {
        self.item_write(
            token,
            &format!("{key}/{item}"),
            (Stage::Complete, Stage::Complete),
            "recording a conflict",
            |tx| {
                // Already a conflict (found by an earlier step of this run) is no error.
                tx.execute(
                    "INSERT INTO conflicts(account, item_id, notion_page_id, kept_item_id, found_at,
                                           onenote_last_modified, change)
                     VALUES (?1, ?2, ?3, '', ?4,
                             (SELECT last_modified FROM pages WHERE account = ?1 AND id = ?2), ?5)
                     ON CONFLICT(account, item_id) DO NOTHING",
                    params![key, item, page, now, change.as_str()],
                )?;
                one_row(tx.execute(
                    "UPDATE notion_items SET sync_check = NULL WHERE account = ?1 AND item_id = ?2",
                    params![key, item],
                )?)
            },
        )
    }
}

/// What a sync step's write changed of an item's page ([`Db::sync_placed`]).
#[derive(Clone, Copy, Debug)]
pub struct Placing<'a> {
    /// Its title now.
    pub title: &'a str,
    /// Its parent now.
    pub parent: &'a str,
    /// It was put under its parent now (after every other page).
    pub moved: bool,
    /// A row's `Order` written now.
    pub row_order: Option<i64>,
    /// The page as the write's answer gave it.
    pub fingerprint: Option<&'a Fingerprint>,
}
