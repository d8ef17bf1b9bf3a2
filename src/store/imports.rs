//! Imports from OneNote's own files: each path imported is a source of its own, with an inventory
//! key `files:{id}` (see [`key_of`]), and each of its sections keeps where it is read from, so a
//! resumed run opens the same file without reading the whole import again.

use rusqlite::{params, OptionalExtension};

use super::jobs::{JobKind, JobState};
use super::{Db, Result};

use super::import_key::PREFIX;
pub use super::import_key::{is_files_key, key_of};

/// One import as stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredImport {
    /// Its inventory key.
    pub key: String,
    /// The path imported (absolute).
    pub path: String,
}

/// Where one section of an import is read from, and why the last read could not read it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredSection {
    /// The section's id (its file's GUID).
    pub section_id: String,
    /// `SectionLocation::to_stored()`.
    pub location: String,
    /// The reader's reason when the section could not be read.
    pub problem: Option<String>,
}

impl Db {
    /// The inventory key of the import of `path` (absolute), made on first use. A path the
    /// platform takes for the same file (on Windows and macOS, in other letter case; on Windows
    /// also in its `\\?\` form or with `/`) is the same import ([`crate::platform::same_path`]).
    pub fn register_import(&self, path: &str) -> Result<String> {
        self.write("recording an import from files", |tx| {
            if let Some(id) = same_import(tx, path)? {
                return Ok(key_of(id));
            }
            tx.execute("INSERT INTO file_imports(path) VALUES (?1)", [path])?;
            Ok(key_of(tx.last_insert_rowid()))
        })
    }

    /// The key of the import of `path` (compared as [`Db::register_import`] does), if it was ever
    /// imported.
    pub fn import_key(&self, path: &str) -> Result<Option<String>> {
        self.read("reading an import from files", |c| {
            Ok(same_import(c, path)?.map(key_of))
        })
    }

    /// Every import from files, in the order they were first made.
    pub fn file_imports(&self) -> Result<Vec<StoredImport>> {
        self.read("listing imports from files", |c| {
            let mut st = c.prepare("SELECT id, path FROM file_imports ORDER BY id")?;
            let rows = st.query_map([], |r| {
                Ok(StoredImport {
                    key: key_of(r.get(0)?),
                    path: r.get(1)?,
                })
            })?;
            rows.collect()
        })
    }

    /// The path of the import whose inventory key is `key`.
    pub fn import_path(&self, key: &str) -> Result<Option<String>> {
        let Some(id) = key.strip_prefix(PREFIX).and_then(|i| i.parse::<i64>().ok()) else {
            return Ok(None);
        };
        self.read("reading an import from files", |c| {
            c.query_row("SELECT path FROM file_imports WHERE id = ?1", [id], |r| {
                r.get(0)
            })
            .optional()
        })
    }

    /// Replaces what is known of where the sections of import `key` are read from (after a read of
    /// its files).
    pub fn save_file_sections(&self, key: &str, sections: &[StoredSection]) -> Result<()> {
        self.write("storing where an import's sections are", |tx| {
            tx.execute("DELETE FROM file_sections WHERE account = ?1", [key])?;
            let mut st = tx.prepare(
                "INSERT OR REPLACE INTO file_sections(account, section_id, location, problem)
                 VALUES (?1, ?2, ?3, ?4)",
            )?;
            for s in sections {
                st.execute(params![key, s.section_id, s.location, s.problem])?;
            }
            Ok(())
        })
    }

    /// Where section `section_id` of import `key` is read from.
    pub fn file_section(&self, key: &str, section_id: &str) -> Result<Option<StoredSection>> {
        self.read("reading where a section is", |c| {
            c.query_row(
                "SELECT section_id, location, problem FROM file_sections
                 WHERE account = ?1 AND section_id = ?2",
                params![key, section_id],
                |r| {
                    Ok(StoredSection {
                        section_id: r.get(0)?,
                        location: r.get(1)?,
                        problem: r.get(2)?,
                    })
                },
            )
            .optional()
        })
    }

    /// The section a page of `key` is in, as the inventory has it.
    pub fn page_section(&self, key: &str, page_id: &str) -> Result<Option<String>> {
        self.read("reading a page's section", |c| {
            c.query_row(
                "SELECT section_id FROM pages WHERE account = ?1 AND id = ?2",
                params![key, page_id],
                |r| r.get(0),
            )
            .optional()
        })
    }

    /// Page jobs of section `section_id` of `key` still to run (queued or running): how many
    /// conversions an opened section file is kept for.
    pub fn pages_left_in_section(&self, key: &str, section_id: &str) -> Result<usize> {
        self.read("counting a section's pages left", |c| {
            c.query_row(
                "SELECT COUNT(*) FROM jobs j JOIN pages p ON p.account = j.account AND p.id = j.item_id
                 WHERE j.account = ?1 AND j.kind = ?2 AND p.section_id = ?3
                   AND j.state IN (?4, ?5)",
                params![
                    key,
                    JobKind::Page,
                    section_id,
                    JobState::Queued,
                    JobState::Running
                ],
                |r| r.get::<_, i64>(0),
            )
            .map(|n| usize::try_from(n).unwrap_or(0))
        })
    }
}

/// The id of the import whose recorded path names the same file as `path` here: the exact text
/// first, then the platform's comparison over the few imports a database holds.
fn same_import(c: &rusqlite::Connection, path: &str) -> rusqlite::Result<Option<i64>> {
    let exact = c
        .query_row("SELECT id FROM file_imports WHERE path = ?1", [path], |r| {
            r.get(0)
        })
        .optional()?;
    if exact.is_some() || !crate::platform::CASE_INSENSITIVE_PATHS {
        return Ok(exact);
    }
    let mut st = c.prepare("SELECT id, path FROM file_imports ORDER BY id")?;
    let rows = st.query_map([], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?)))?;
    for row in rows {
        let (id, stored) = row?;
        if crate::platform::same_path(&stored, path) {
            return Ok(Some(id));
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_import_keeps_its_key_and_its_sections_locations() {
        let t = tempfile::tempdir().unwrap();
        let db = Db::open(&t.path().join("s.db")).unwrap();
        let a = db.register_import("/notes/Work").unwrap();
        let b = db.register_import("/notes/Home.one").unwrap();
        assert_ne!(a, b);
        assert!(is_files_key(&a) && is_files_key(&b));
        assert!(!is_files_key("alice") && !is_files_key("alice/group:g"));
        assert_eq!(db.register_import("/notes/Work").unwrap(), a);
        assert_eq!(db.import_key("/notes/Work").unwrap(), Some(a.clone()));
        assert_eq!(db.import_key("/elsewhere").unwrap(), None);
        assert_eq!(
            db.import_path(&b).unwrap().as_deref(),
            Some("/notes/Home.one")
        );
        assert_eq!(db.import_path("alice").unwrap(), None);
        assert_eq!(db.file_imports().unwrap().len(), 2);
        // Typed again in other letters: the same import where the platform ignores case.
        let other_case = db.register_import("/NOTES/work").unwrap();
        if crate::platform::CASE_INSENSITIVE_PATHS {
            assert_eq!(other_case, a);
            assert_eq!(db.import_key("/notes/WORK").unwrap(), Some(a.clone()));
            assert_eq!(db.file_imports().unwrap().len(), 2);
        } else {
            assert_ne!(other_case, a);
            assert_eq!(db.import_key("/notes/WORK").unwrap(), None);
            assert_eq!(db.file_imports().unwrap().len(), 3);
        }
        let s = StoredSection {
            section_id: "s1".into(),
            location: "file:/notes/Work/A.one".into(),
            problem: None,
        };
        db.save_file_sections(&a, std::slice::from_ref(&s)).unwrap();
        assert_eq!(db.file_section(&a, "s1").unwrap(), Some(s));
        assert_eq!(db.file_section(&b, "s1").unwrap(), None);
        // A new read replaces what the last one found.
        db.save_file_sections(&a, &[]).unwrap();
        assert_eq!(db.file_section(&a, "s1").unwrap(), None);
    }
}
