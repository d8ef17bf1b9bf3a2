//! Sections Graph listed empty that their section files could not confirm
//! (`listed_empty_sections`): a retry of their failed jobs scans their notebooks again
//! (`engine::listed_empty`). These calls are blocking and belong on the blocking pool.

use rusqlite::params;

use super::{Db, Result};

impl Db {
    /// Records what a scan of the notebooks `scanned` under inventory key `key` left unconfirmed:
    /// `unconfirmed` (notebook id, section id) replaces what was recorded for those notebooks.
    pub fn save_unconfirmed_sections(
        &self,
        key: &str,
        scanned: &[String],
        unconfirmed: &[(String, String)],
    ) -> Result<()> {
        self.write("recording sections listed empty", |tx| {
            let mut drop = tx.prepare_cached(
                "DELETE FROM listed_empty_sections WHERE key = ?1 AND notebook_id = ?2",
            )?;
            for nb in scanned {
                drop.execute(params![key, nb])?;
            }
            let mut add = tx.prepare_cached(
                "INSERT OR REPLACE INTO listed_empty_sections(key, section_id, notebook_id)
                 VALUES (?1, ?2, ?3)",
            )?;
            for (nb, section) in unconfirmed {
                add.execute(params![key, section, nb])?;
            }
            Ok(())
        })
    }

    /// The notebooks under `key` holding a section listed empty that nothing confirmed yet, each
    /// once, in id order.
    pub fn unconfirmed_notebooks(&self, key: &str) -> Result<Vec<String>> {
        self.read("reading sections listed empty", |c| {
            let mut st = c.prepare_cached(
                "SELECT DISTINCT notebook_id FROM listed_empty_sections WHERE key = ?1
                 ORDER BY notebook_id",
            )?;
            let rows = st.query_map([key], |r| r.get(0))?;
            rows.collect()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scan_of_a_notebook_replaces_what_was_unconfirmed_in_it_alone() {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(&dir.path().join("s.db")).unwrap();
        let s = |nb: &str, sec: &str| (nb.to_owned(), sec.to_owned());
        db.save_unconfirmed_sections(
            "alice",
            &["a".into(), "b".into()],
            &[s("a", "1"), s("b", "2")],
        )
        .unwrap();
        assert_eq!(db.unconfirmed_notebooks("alice").unwrap(), ["a", "b"]);
        assert!(db.unconfirmed_notebooks("bob").unwrap().is_empty());
        // Notebook a scanned again, its section confirmed: b's stays.
        db.save_unconfirmed_sections("alice", &["a".into()], &[])
            .unwrap();
        assert_eq!(db.unconfirmed_notebooks("alice").unwrap(), ["b"]);
    }
}
