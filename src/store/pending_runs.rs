//! A planning run whose plan is not recorded yet (schema 0030): recorded before the run asks any
//! service anything, forgotten once every source's plan is recorded, so that a run stopped in
//! between is continued by the next `--resume` of its command rather than found with nothing
//! queued. The request is the engine's to read; the store keeps its text.

use rusqlite::{params, OptionalExtension};

use super::{Db, Result};
use crate::clock::UnixMillis;

impl Db {
    /// Records `request` as the pending run of `command` (replacing an earlier one).
    pub fn record_pending_run(&self, command: &str, request: &str, now: UnixMillis) -> Result<()> {
        self.write("recording the run's request", |tx| {
            tx.execute(
                "INSERT INTO pending_runs(command, request, recorded_at) VALUES (?1, ?2, ?3)
                 ON CONFLICT(command) DO UPDATE SET request = ?2, recorded_at = ?3",
                params![command, request, now],
            )
            .map(drop)
        })
    }

    /// The pending run of `command`, if one is recorded.
    pub fn pending_run(&self, command: &str) -> Result<Option<String>> {
        self.read("reading the pending run", |c| {
            c.query_row(
                "SELECT request FROM pending_runs WHERE command = ?1",
                [command],
                |r| r.get(0),
            )
            .optional()
        })
    }

    /// Forgets the pending run of `command`: its plan is recorded.
    pub fn forget_pending_run(&self, command: &str) -> Result<()> {
        self.write("forgetting the run's request", |tx| {
            tx.execute("DELETE FROM pending_runs WHERE command = ?1", [command])
                .map(drop)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pending_run_is_kept_per_command_until_forgotten() {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(&dir.path().join("s.db")).unwrap();
        assert_eq!(db.pending_run("migrate").unwrap(), None);
        db.record_pending_run("migrate", "{\"a\":1}", 1).unwrap();
        db.record_pending_run("migrate", "{\"a\":2}", 2).unwrap();
        db.record_pending_run("sync", "{}", 3).unwrap();
        assert_eq!(
            db.pending_run("migrate").unwrap().as_deref(),
            Some("{\"a\":2}")
        );
        db.forget_pending_run("migrate").unwrap();
        assert_eq!(db.pending_run("migrate").unwrap(), None);
        assert_eq!(db.pending_run("sync").unwrap().as_deref(), Some("{}"));
    }
}
