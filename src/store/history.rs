//! What happened over time, for `report`: Graph requests per hour per user (pruned ledger rows folded
//! in by a trigger, plus the rows still in the ledger), when each page was finished, and the last
//! `verify` of each account.

use rusqlite::{params, OptionalExtension};

use super::jobs::{JobKind, JobState};
use super::{Db, Result};
use crate::clock::UnixMillis;

/// One hour's Graph requests of one user.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HourCount {
    /// The hour's start (unix ms, a multiple of an hour).
    pub hour_start: UnixMillis,
    /// Requests granted in it.
    pub requests: u64,
}

const HOUR_MS: i64 = 3_600_000;

impl Db {
    /// Graph requests per hour for `user_id`, oldest first; hours without requests are left out.
    pub fn graph_requests_per_hour(&self, user_id: &str) -> Result<Vec<HourCount>> {
        self.read("reading the Graph request history", |c| {
            let mut st = c.prepare(
                "SELECT hour, SUM(n) FROM (
                     SELECT hour, requests AS n FROM graph_request_hours WHERE user_id = ?1
                     UNION ALL
                     SELECT granted_at / ?2 AS hour, 1 AS n FROM limiter_ledger WHERE user_id = ?1
                 ) GROUP BY hour ORDER BY hour",
            )?;
            let rows = st.query_map(params![user_id, HOUR_MS], |r| {
                Ok(HourCount {
                    hour_start: r.get::<_, i64>(0)? * HOUR_MS,
                    requests: r.get::<_, i64>(1)? as u64,
                })
            })?;
            rows.collect()
        })
    }

    /// When each of `account`'s page jobs finished, oldest first.
    pub fn page_completions(&self, account: &str) -> Result<Vec<UnixMillis>> {
        self.read("reading page completion times", |c| {
            let mut st = c.prepare(
                "SELECT updated_at FROM jobs WHERE account = ?1 AND kind = ?2 AND state = ?3
                 ORDER BY updated_at",
            )?;
            let rows = st.query_map(params![account, JobKind::Page, JobState::Done], |r| {
                r.get(0)
            })?;
            rows.collect()
        })
    }

    /// Keeps `report` (the JSON of one account's verification) as its last one.
    pub fn save_verify_report(&self, account: &str, at: UnixMillis, report: &str) -> Result<()> {
        self.write("saving the verification", |tx| {
            tx.execute(
                "INSERT INTO verify_reports(account, verified_at, report) VALUES (?1, ?2, ?3)
                 ON CONFLICT(account) DO UPDATE SET verified_at = ?2, report = ?3",
                params![account, at, report],
            )?;
            Ok(())
        })
    }

    /// The last verification of `account`: when, and its JSON.
    pub fn last_verify_report(&self, account: &str) -> Result<Option<(UnixMillis, String)>> {
        self.read("reading the last verification", |c| {
            c.query_row(
                "SELECT verified_at, report FROM verify_reports WHERE account = ?1",
                params![account],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pruned_ledger_rows_still_count_in_their_hour() {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(&dir.path().join("s.db")).unwrap();
        let at = |h: i64, m: i64| h * HOUR_MS + m * 60_000;
        db.write("grants", |tx| {
            for t in [at(10, 1), at(10, 59), at(11, 0), at(12, 30)] {
                tx.execute(
                    "INSERT INTO limiter_ledger(user_id, lane, granted_at, at) VALUES ('u', 1, ?1, ?1)",
                    params![t],
                )?;
            }
            tx.execute(
                "INSERT INTO limiter_ledger(user_id, lane, granted_at, at) VALUES ('v', 1, ?1, ?1)",
                params![at(10, 5)],
            )?;
            // the limiter prunes everything before 12:00
            tx.execute("DELETE FROM limiter_ledger WHERE at < ?1", params![at(12, 0)])?;
            Ok(())
        })
        .unwrap();
        let hours = db.graph_requests_per_hour("u").unwrap();
        let got: Vec<(i64, u64)> = hours
            .iter()
            .map(|h| (h.hour_start / HOUR_MS, h.requests))
            .collect();
        assert_eq!(got, vec![(10, 2), (11, 1), (12, 1)]);
        assert_eq!(db.graph_requests_per_hour("v").unwrap().len(), 1);
    }

    #[test]
    fn the_last_verification_replaces_the_one_before() {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(&dir.path().join("s.db")).unwrap();
        assert_eq!(db.last_verify_report("a").unwrap(), None);
        db.save_verify_report("a", 1, "{\"v\":1}").unwrap();
        db.save_verify_report("a", 2, "{\"v\":2}").unwrap();
        assert_eq!(
            db.last_verify_report("a").unwrap(),
            Some((2, "{\"v\":2}".into()))
        );
    }
}
