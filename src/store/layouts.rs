//! How each target page is laid out in Notion (`migrate --layout pages|database`), recorded with
//! its first plan and kept by `--resume`, `--update` and `--retry-failed`; and what layout
//! `database` made there: one database per section (intent first, so a crash between its
//! creation and its record makes no second one) and the tags each data source's schema holds.

use rusqlite::types::{FromSql, FromSqlError, FromSqlResult, ToSql, ToSqlOutput, ValueRef};
use rusqlite::{params, OptionalExtension};
use serde::Serialize;

use crate::clock::UnixMillis;
use crate::store::{Db, Result};

/// How a migration is laid out in Notion.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Layout {
    /// Notebooks, section groups, sections and pages as nested pages.
    #[default]
    Pages,
    /// As pages, but each section a database whose rows are its pages.
    Database,
}

impl Layout {
    /// The name the command line and the state database use.
    pub fn as_str(self) -> &'static str {
        match self {
            Layout::Pages => "pages",
            Layout::Database => "database",
        }
    }

    /// The layout named `s` (`pages` or `database`).
    pub fn parse(s: &str) -> Option<Layout> {
        match s {
            "pages" => Some(Layout::Pages),
            "database" => Some(Layout::Database),
            _ => None,
        }
    }
}

impl std::fmt::Display for Layout {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl ToSql for Layout {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(ToSqlOutput::from(self.as_str()))
    }
}

impl FromSql for Layout {
    fn column_result(v: ValueRef<'_>) -> FromSqlResult<Self> {
        let s = v.as_str()?;
        Layout::parse(s).ok_or_else(|| FromSqlError::Other(format!("unknown layout {s:?}").into()))
    }
}

/// How a plan or `status` names the layouts of one account's targets: the one they share, or
/// each of them (`pages, database`) when its targets are laid out differently; `pages` when
/// nothing is recorded yet.
pub fn layouts_label(layouts: &[Layout]) -> String {
    match layouts {
        [] => Layout::Pages.as_str().to_owned(),
        _ => layouts
            .iter()
            .map(|l| l.as_str())
            .collect::<Vec<_>>()
            .join(", "),
    }
}

/// What recording a layout for a target found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LayoutCheck {
    /// The target had no layout; this one is now recorded.
    Recorded,
    /// The target was already planned with this layout.
    Same,
    /// The target was planned with another layout (this one); nothing was changed.
    Differs(Layout),
}

/// A section's database as recorded: intended (its creation may have reached Notion) or created.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SectionDatabase {
    /// The page it is created in (its notebook's or section group's).
    pub parent_page_id: String,
    /// Its title (the section's name).
    pub title: String,
    /// The database and its data source, once Notion gave them.
    pub created: Option<(String, String)>,
}

/// A tag of a data source's `Tags` property as recorded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecordedTag {
    /// The OneNote tag name.
    pub source_name: String,
    /// The option name written to Notion.
    pub name: String,
    /// Whether the schema update that adds it is confirmed.
    pub added: bool,
}

impl Db {
    /// Records `layout` for `target` unless it has one: the check says which.
    pub fn record_layout(
        &self,
        target: &str,
        layout: Layout,
        now: UnixMillis,
    ) -> Result<LayoutCheck> {
        self.write("recording the layout", |tx| {
            let old: Option<Layout> = tx
                .query_row(
                    "SELECT layout FROM target_layouts WHERE target_page_id = ?1",
                    [target],
                    |r| r.get(0),
                )
                .optional()?;
            match old {
                Some(l) if l == layout => Ok(LayoutCheck::Same),
                Some(l) => Ok(LayoutCheck::Differs(l)),
                None => {
                    tx.execute(
                        "INSERT INTO target_layouts (target_page_id, layout, recorded_at)
                         VALUES (?1, ?2, ?3)",
                        params![target, layout, now],
                    )?;
                    Ok(LayoutCheck::Recorded)
                }
            }
        })
    }

    /// The layout recorded for `target` (`None`: never planned).
    pub fn layout_of(&self, target: &str) -> Result<Option<Layout>> {
        self.read("reading the layout", |c| {
            c.query_row(
                "SELECT layout FROM target_layouts WHERE target_page_id = ?1",
                [target],
                |r| r.get(0),
            )
            .optional()
        })
    }

    /// The layouts recorded for the targets `account`'s plans are under, in name order (empty:
    /// nothing planned yet).
    pub fn account_layouts(&self, account: &str) -> Result<Vec<Layout>> {
        self.read("reading an account's layouts", |c| {
            let mut st = c.prepare(
                "SELECT DISTINCT tl.layout FROM plans p
                 JOIN target_layouts tl ON tl.target_page_id = p.target_page_id
                 WHERE p.account = ?1 ORDER BY tl.layout DESC",
            )?;
            let rows = st.query_map([account], |r| r.get(0))?;
            rows.collect()
        })
    }

    /// Records the intent to create `section`'s database in `parent` titled `title`, unless one is
    /// recorded; returns the record as it now is.
    pub fn intend_section_database(
        &self,
        account: &str,
        section: &str,
        parent: &str,
        title: &str,
        now: UnixMillis,
    ) -> Result<SectionDatabase> {
        self.write("recording a database's intent", |tx| {
            tx.execute(
                "INSERT OR IGNORE INTO section_databases
                   (account, section_id, parent_page_id, title, intended_at)
                 VALUES (?1, ?2, ?3, ?4, ?5)",
                params![account, section, parent, title, now],
            )?;
            section_database_in(tx, account, section)
                .map(|d| d.expect("the intent was just recorded"))
        })
    }

    /// `section`'s database record, if any.
    pub fn section_database(
        &self,
        account: &str,
        section: &str,
    ) -> Result<Option<SectionDatabase>> {
        self.read("reading a section's database", |c| {
            section_database_in(c, account, section)
        })
    }

    /// Every section database recorded for `account`, by section id (`verify` checks them).
    pub fn section_databases(&self, account: &str) -> Result<Vec<(String, SectionDatabase)>> {
        self.read("reading an account's databases", |c| {
            let mut st = c.prepare(
                "SELECT section_id, parent_page_id, title, database_id, data_source_id
                 FROM section_databases WHERE account = ?1 ORDER BY rowid",
            )?;
            let rows = st.query_map([account], |r| Ok((r.get(0)?, section_database_at(r, 1)?)))?;
            rows.collect()
        })
    }

    /// Every database recorded for any section (a database is claimed by one section only), a
    /// moved section's old one included while it is kept.
    pub fn claimed_databases(&self) -> Result<Vec<String>> {
        self.read("reading the recorded databases", |c| {
            let mut st = c.prepare(
                "SELECT database_id FROM section_databases WHERE database_id IS NOT NULL
                 UNION ALL
                 SELECT old_database_id FROM section_databases WHERE old_database_id IS NOT NULL",
            )?;
            let rows = st.query_map([], |r| r.get(0))?;
            rows.collect()
        })
    }

    /// Records the database Notion made (or that was found again) for an intended section.
    /// Refused (no row changed) when the section had no intent or already has its database.
    pub fn section_database_created(
        &self,
        account: &str,
        section: &str,
        database: &str,
        data_source: &str,
        now: UnixMillis,
    ) -> Result<bool> {
        self.write("recording a database", |tx| {
            let n = tx.execute(
                "UPDATE section_databases SET database_id = ?3, data_source_id = ?4, created_at = ?5
                 WHERE account = ?1 AND section_id = ?2 AND database_id IS NULL",
                params![account, section, database, data_source, now],
            )?;
            Ok(n == 1)
        })
    }

    /// Whether `database` is recorded as some section's database (a database found again by its
    /// title is adopted only when no other section holds it).
    pub fn database_claimed(&self, database: &str) -> Result<bool> {
        self.read("reading a database's owner", |c| {
            c.query_row(
                "SELECT EXISTS (SELECT 1 FROM section_databases
                                WHERE database_id = ?1 OR old_database_id = ?1)",
                [database],
                |r| r.get(0),
            )
        })
    }

    /// The tags recorded for `data_source`, in the order they were recorded.
    pub fn database_tags(&self, data_source: &str) -> Result<Vec<RecordedTag>> {
        self.read("reading a database's tags", |c| {
            let mut st = c.prepare(
                "SELECT source_name, name, added_at IS NOT NULL FROM database_tags
                 WHERE data_source_id = ?1 ORDER BY rowid",
            )?;
            let rows = st.query_map([data_source], |r| {
                Ok(RecordedTag {
                    source_name: r.get(0)?,
                    name: r.get(1)?,
                    added: r.get(2)?,
                })
            })?;
            rows.collect()
        })
    }

    /// Records that `name` (for OneNote's `source_name`) is about to be added to `data_source`'s
    /// schema, unless that tag is recorded already.
    pub fn intend_database_tag(
        &self,
        data_source: &str,
        source_name: &str,
        name: &str,
    ) -> Result<()> {
        self.write("recording a tag's intent", |tx| {
            tx.execute(
                "INSERT OR IGNORE INTO database_tags (data_source_id, source_name, name)
                 VALUES (?1, ?2, ?3)",
                params![data_source, source_name, name],
            )?;
            Ok(())
        })
    }

    /// Records that the schema holds the tags `names` of `data_source`.
    pub fn database_tags_added(
        &self,
        data_source: &str,
        names: &[String],
        now: UnixMillis,
    ) -> Result<()> {
        self.write("recording added tags", |tx| {
            let mut st = tx.prepare(
                "UPDATE database_tags SET added_at = ?3
                 WHERE data_source_id = ?1 AND name = ?2 AND added_at IS NULL",
            )?;
            for n in names {
                st.execute(params![data_source, n, now])?;
            }
            Ok(())
        })
    }
}

/// What the inventory says of a page that a row shows: its level, its order, and OneNote's
/// created and last modified times (as OneNote wrote them).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PageValues {
    /// Indent level 0..2.
    pub level: i64,
    /// Position in its section.
    pub order: i64,
    /// `createdDateTime`.
    pub created: Option<String>,
    /// `lastModifiedDateTime`.
    pub last_modified: Option<String>,
    /// Who wrote it, where the source says.
    pub author: Option<String>,
    /// The page in OneNote on the web.
    pub web_url: Option<String>,
}

impl Db {
    /// The inventory's values of page `id` of `account` that its row shows (`None`: not in it).
    pub fn page_values(&self, account: &str, id: &str) -> Result<Option<PageValues>> {
        self.read("reading a page's row values", |c| {
            c.query_row(
                "SELECT level, \"order\", created, last_modified, author, web_url FROM pages
                 WHERE account = ?1 AND id = ?2",
                [account, id],
                |r| {
                    Ok(PageValues {
                        level: r.get(0)?,
                        order: r.get(1)?,
                        created: r.get(2)?,
                        last_modified: r.get(3)?,
                        author: r.get(4)?,
                        web_url: r.get(5)?,
                    })
                },
            )
            .optional()
        })
    }
}

fn section_database_in(
    c: &rusqlite::Connection,
    account: &str,
    section: &str,
) -> rusqlite::Result<Option<SectionDatabase>> {
    c.query_row(
        "SELECT parent_page_id, title, database_id, data_source_id FROM section_databases
         WHERE account = ?1 AND section_id = ?2",
        params![account, section],
        |r| section_database_at(r, 0),
    )
    .optional()
}

/// A section database record from `parent_page_id, title, database_id, data_source_id`, read
/// from column `first` on.
fn section_database_at(r: &rusqlite::Row<'_>, first: usize) -> rusqlite::Result<SectionDatabase> {
    let db: Option<String> = r.get(first + 2)?;
    let ds: Option<String> = r.get(first + 3)?;
    Ok(SectionDatabase {
        parent_page_id: r.get(first)?,
        title: r.get(first + 1)?,
        created: db.zip(ds),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_target_keeps_the_layout_it_was_first_planned_with() {
        let db = Db::open_in_memory().unwrap();
        assert_eq!(db.layout_of("t").unwrap(), None);
        assert_eq!(
            db.record_layout("t", Layout::Database, 1).unwrap(),
            LayoutCheck::Recorded
        );
        assert_eq!(
            db.record_layout("t", Layout::Database, 2).unwrap(),
            LayoutCheck::Same
        );
        assert_eq!(
            db.record_layout("t", Layout::Pages, 3).unwrap(),
            LayoutCheck::Differs(Layout::Database)
        );
        assert_eq!(db.layout_of("t").unwrap(), Some(Layout::Database));
        assert_eq!(Layout::parse("rows"), None);
        assert_eq!(Layout::parse("pages"), Some(Layout::Pages));
    }

    #[test]
    fn plans_made_before_layouts_were_recorded_are_pages() {
        let t = tempfile::tempdir().unwrap();
        let path = t.path().join("s.db");
        let db = Db::open_to(&path, 17).unwrap();
        db.write("a plan of an older notebridge", |tx| {
            tx.execute(
                "INSERT INTO plans (account, target_page_id) VALUES ('a', 'old-target')",
                [],
            )
        })
        .unwrap();
        drop(db);
        let db = Db::open(&path).unwrap();
        assert_eq!(db.layout_of("old-target").unwrap(), Some(Layout::Pages));
        assert_eq!(
            db.record_layout("old-target", Layout::Database, 1).unwrap(),
            LayoutCheck::Differs(Layout::Pages)
        );
    }

    #[test]
    fn a_section_database_is_intended_once_and_recorded_once() {
        let db = Db::open_in_memory().unwrap();
        let first = db
            .intend_section_database("a", "s1", "parent", "Section", 1)
            .unwrap();
        assert_eq!(first.created, None);
        let again = db
            .intend_section_database("a", "s1", "other", "Renamed", 2)
            .unwrap();
        assert_eq!(again, first, "a second intent keeps the first");
        assert!(db
            .section_database_created("a", "s1", "db1", "ds1", 3)
            .unwrap());
        assert!(!db
            .section_database_created("a", "s1", "db2", "ds2", 4)
            .unwrap());
        assert!(!db
            .section_database_created("a", "none", "db3", "ds3", 4)
            .unwrap());
        let rec = db.section_database("a", "s1").unwrap().unwrap();
        assert_eq!(rec.created, Some(("db1".into(), "ds1".into())));
        db.intend_section_database("a", "s2", "parent", "Other", 5)
            .unwrap();
        db.intend_section_database("b", "s3", "parent", "Theirs", 5)
            .unwrap();
        let all = db.section_databases("a").unwrap();
        assert_eq!(
            all.iter()
                .map(|(s, d)| (s.as_str(), d.created.is_some()))
                .collect::<Vec<_>>(),
            vec![("s1", true), ("s2", false)]
        );
        assert_eq!(db.claimed_databases().unwrap(), vec!["db1".to_owned()]);
    }

    #[test]
    fn tags_are_intended_then_confirmed() {
        let db = Db::open_in_memory().unwrap();
        db.intend_database_tag("ds", "A, B", "A B").unwrap();
        db.intend_database_tag("ds", "A, B", "A B").unwrap();
        db.intend_database_tag("ds", "To Do", "To Do").unwrap();
        let tags = db.database_tags("ds").unwrap();
        assert_eq!(tags.len(), 2);
        assert!(tags.iter().all(|t| !t.added));
        db.database_tags_added("ds", &["A B".into()], 5).unwrap();
        let tags = db.database_tags("ds").unwrap();
        assert_eq!(tags[0].source_name, "A, B");
        assert!(tags[0].added);
        assert!(!tags[1].added);
    }
}
