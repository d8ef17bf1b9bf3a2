//! The drive breaker's rows (`drive_breakers`): the pause a 429 or 503 from OneDrive or SharePoint
//! puts on every drive request of its scope, in every process on this database. `drive::pacer`
//! gives them their meaning; these calls are blocking and belong on the blocking pool.

use rusqlite::{params, Connection, OptionalExtension};

use super::{Db, Result};
use crate::clock::UnixMillis;

/// One scope's breaker as stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DriveBreaker {
    /// When a throttled answer last paused the scope.
    pub opened_at: UnixMillis,
    /// No drive request of the scope before this.
    pub open_until: UnixMillis,
    /// Throttled answers since the scope last answered anything else.
    pub trips: u32,
    /// The status that last paused it (429 or 503).
    pub status: u16,
}

fn load(c: &Connection, scope: &str) -> rusqlite::Result<Option<DriveBreaker>> {
    c.prepare_cached(
        "SELECT opened_at, open_until, trips, status FROM drive_breakers WHERE scope = ?1",
    )?
    .query_row(params![scope], |r| {
        Ok(DriveBreaker {
            opened_at: r.get(0)?,
            open_until: r.get(1)?,
            trips: r.get::<_, i64>(2)?.clamp(0, u32::MAX as i64) as u32,
            status: r.get::<_, i64>(3)?.clamp(0, u16::MAX as i64) as u16,
        })
    })
    .optional()
}

impl Db {
    /// The breaker of `scope`, if a throttled answer left one.
    pub fn drive_breaker(&self, scope: &str) -> Result<Option<DriveBreaker>> {
        self.read("reading the drive breaker", |c| load(c, scope))
    }

    /// Records a throttled answer (`status`) of `scope` at `now`, in one transaction: the trips go
    /// up by one and the scope stays closed until `now + wait(trips)` ms, or longer when another
    /// answer already asked for longer (a shorter `Retry-After` never shortens a pause in force).
    pub fn drive_throttled(
        &self,
        scope: &str,
        now: UnixMillis,
        status: u16,
        wait: impl FnOnce(u32) -> i64,
    ) -> Result<DriveBreaker> {
        self.write("recording a throttled drive request", |tx| {
            let old = load(tx, scope)?;
            let trips = old.map_or(0, |b| b.trips).saturating_add(1);
            let until = now.saturating_add(wait(trips).max(0));
            let b = DriveBreaker {
                opened_at: now,
                open_until: old.map_or(until, |b| b.open_until.max(until)),
                trips,
                status,
            };
            tx.prepare_cached(
                "INSERT INTO drive_breakers(scope, opened_at, open_until, trips, status)
                 VALUES (?1, ?2, ?3, ?4, ?5)
                 ON CONFLICT(scope) DO UPDATE SET opened_at = excluded.opened_at,
                    open_until = excluded.open_until, trips = excluded.trips,
                    status = excluded.status",
            )?
            .execute(params![scope, b.opened_at, b.open_until, b.trips, b.status])?;
            Ok(b)
        })
    }

    /// `scope` answered something other than a throttle at `now`: its breaker closes, unless a
    /// pause still in force (another request's later 429) keeps it.
    pub fn drive_answered(&self, scope: &str, now: UnixMillis) -> Result<()> {
        self.write("closing the drive breaker", |tx| {
            tx.prepare_cached("DELETE FROM drive_breakers WHERE scope = ?1 AND open_until <= ?2")?
                .execute(params![scope, now])
                .map(drop)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_throttle_lengthens_a_pause_never_shortens_it_and_an_answer_closes_it_once_over() {
        let db = Db::open_in_memory().unwrap();
        assert_eq!(db.drive_breaker("s").unwrap(), None);
        let b = db
            .drive_throttled("s", 1_000, 429, |t| 500 * t as i64)
            .unwrap();
        assert_eq!((b.open_until, b.trips, b.status), (1_500, 1, 429));
        // A second throttle asking for less keeps the longer pause, and counts.
        let b = db.drive_throttled("s", 1_100, 503, |_| 100).unwrap();
        assert_eq!((b.open_until, b.trips, b.status), (1_500, 2, 503));
        // An answer during the pause leaves it; one after it closes the breaker.
        db.drive_answered("s", 1_400).unwrap();
        assert_eq!(db.drive_breaker("s").unwrap().unwrap().trips, 2);
        db.drive_answered("s", 1_500).unwrap();
        assert_eq!(db.drive_breaker("s").unwrap(), None);
        // Other scopes are their own.
        db.drive_throttled("t", 0, 429, |_| 10).unwrap();
        assert_eq!(db.drive_breaker("s").unwrap(), None);
    }
}
