//! What the last read of an import's files found that is no item to migrate (a folder its table of
//! contents names that is not on disk): kept per import, replaced at each read, shown by `status`,
//! `report` and the run's summary. Never a failure, so nothing for `--retry-failed`.

use rusqlite::params;

use super::{Db, Result};

impl Db {
    /// Replaces the notes of the import with inventory key `key` by `notes`, in their order.
    pub fn save_import_notes(&self, key: &str, notes: &[String]) -> Result<()> {
        self.write("recording an import's notes", |tx| {
            tx.execute("DELETE FROM import_notes WHERE account = ?1", [key])?;
            let mut st =
                tx.prepare("INSERT INTO import_notes(account, seq, note) VALUES (?1, ?2, ?3)")?;
            for (i, n) in notes.iter().enumerate() {
                st.execute(params![key, i as i64, n])?;
            }
            Ok(())
        })
    }

    /// The notes of the import with inventory key `key`, in their order (none for any other key).
    pub fn import_notes(&self, key: &str) -> Result<Vec<String>> {
        self.read("reading an import's notes", |c| {
            let mut st =
                c.prepare("SELECT note FROM import_notes WHERE account = ?1 ORDER BY seq")?;
            let rows = st.query_map([key], |r| r.get(0))?;
            rows.collect()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_read_replaces_the_notes_of_its_import_only() {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(&dir.path().join("s.db")).unwrap();
        let two = vec!["b is not there".to_owned(), "a is not there".to_owned()];
        db.save_import_notes("files:1", &two).unwrap();
        db.save_import_notes("files:2", &["other".to_owned()])
            .unwrap();
        assert_eq!(db.import_notes("files:1").unwrap(), two, "in their order");
        db.save_import_notes("files:1", &[]).unwrap();
        assert!(db.import_notes("files:1").unwrap().is_empty());
        assert_eq!(db.import_notes("files:2").unwrap(), ["other"]);
    }
}
