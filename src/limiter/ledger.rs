//! The limiter's SQLite rows: the request ledger, in-flight slots, foreground waiters and soft brakes.
//! Every function runs inside the caller's transaction; none commits.

use rusqlite::{params, Connection, OptionalExtension};

use super::model::{Counted, InFlight as InFlightCounts};
use super::Lane;
use crate::clock::UnixMillis;

/// Records one granted request: a ledger row and its in-flight slot (same id).
pub fn insert_grant(
    c: &Connection,
    user: &str,
    lane: Lane,
    now: UnixMillis,
    owner: &str,
    lease_until: UnixMillis,
) -> rusqlite::Result<i64> {
    c.prepare_cached(
        "INSERT INTO limiter_ledger(user_id, lane, granted_at, at) VALUES (?1, ?2, ?3, ?3)",
    )?
    .execute(params![user, lane.code(), now])?;
    let id = c.last_insert_rowid();
    c.prepare_cached(
        "INSERT INTO limiter_inflight(id, user_id, lane, owner, lease_until) VALUES (?1,?2,?3,?4,?5)",
    )?
    .execute(params![id, user, lane.code(), owner, lease_until])?;
    Ok(id)
}

/// Ends request `id`: frees its slot and counts it from `now` (its completion), never earlier.
pub fn complete(c: &Connection, id: i64, now: UnixMillis) -> rusqlite::Result<()> {
    release_slot(c, id)?;
    count_from(c, id, now)
}

/// Counts request `id` in the windows from `now` (its completion), never earlier.
pub fn count_from(c: &Connection, id: i64, now: UnixMillis) -> rusqlite::Result<()> {
    c.prepare_cached("UPDATE limiter_ledger SET at = max(at, ?2) WHERE id = ?1")?
        .execute(params![id, now])?;
    Ok(())
}

/// Lets request `id`'s slot expire at `at` however long its process lives (a released slot is no
/// longer its process's, so its lease is not renewed).
pub fn release_slot_at(c: &Connection, id: i64, at: UnixMillis) -> rusqlite::Result<()> {
    c.prepare_cached(
        "UPDATE limiter_inflight SET lease_until = ?2, owner = owner || '/released' WHERE id = ?1",
    )?
    .execute(params![id, at])?;
    Ok(())
}

/// Frees request `id`'s concurrency slot.
pub fn release_slot(c: &Connection, id: i64) -> rusqlite::Result<()> {
    c.prepare_cached("DELETE FROM limiter_inflight WHERE id = ?1")?
        .execute(params![id])?;
    Ok(())
}

/// Drops what a dead process left behind: expired slots, waiters and probes.
pub fn expire(c: &Connection, now: UnixMillis) -> rusqlite::Result<()> {
    c.prepare_cached("DELETE FROM limiter_inflight WHERE lease_until <= ?1")?
        .execute(params![now])?;
    c.prepare_cached("DELETE FROM limiter_fg_waiters WHERE lease_until <= ?1")?
        .execute(params![now])?;
    c.prepare_cached(
        "UPDATE limiter_breakers SET probe_id = NULL, probe_owner = NULL, probe_lease_until = NULL
         WHERE probe_lease_until <= ?1",
    )?
    .execute(params![now])?;
    Ok(())
}

/// Extends the leases of every slot and probe process `owner` holds: it is alive.
pub fn refresh_leases(c: &Connection, owner: &str, until: UnixMillis) -> rusqlite::Result<()> {
    c.prepare_cached(
        "UPDATE limiter_inflight SET lease_until = ?2 WHERE owner = ?1 AND lease_until < ?2",
    )?
    .execute(params![owner, until])?;
    c.prepare_cached(
        "UPDATE limiter_breakers SET probe_lease_until = ?2
         WHERE probe_owner = ?1 AND probe_lease_until < ?2",
    )?
    .execute(params![owner, until])?;
    Ok(())
}

/// Deletes ledger rows that no window can see any more.
pub fn prune(c: &Connection, before: UnixMillis) -> rusqlite::Result<usize> {
    c.prepare_cached(
        "DELETE FROM limiter_ledger WHERE at <= ?1 AND id NOT IN (SELECT id FROM limiter_inflight)",
    )?
    .execute(params![before])
}

/// Whether a user other than `user` has a request in flight or was granted one after `since`: other
/// accounts are sending through this app now.
pub fn others_sending(c: &Connection, user: &str, since: UnixMillis) -> rusqlite::Result<bool> {
    c.prepare_cached(
        "SELECT EXISTS(SELECT 1 FROM limiter_inflight WHERE user_id <> ?1)
             OR EXISTS(SELECT 1 FROM limiter_ledger WHERE user_id <> ?1 AND granted_at > ?2)",
    )?
    .query_row(params![user, since], |r| r.get::<_, i64>(0).map(|n| n != 0))
}

/// When `user`'s latest request was granted.
pub fn last_granted(c: &Connection, user: &str) -> rusqlite::Result<Option<UnixMillis>> {
    c.prepare_cached("SELECT max(granted_at) FROM limiter_ledger WHERE user_id = ?1")?
        .query_row(params![user], |r| r.get(0))
}

/// Registers (or refreshes) a waiting foreground request.
pub fn upsert_waiter(
    c: &Connection,
    id: &str,
    user: &str,
    app_blocked: bool,
    lease_until: UnixMillis,
) -> rusqlite::Result<()> {
    c.prepare_cached(
        "INSERT INTO limiter_fg_waiters(id, user_id, app_blocked, lease_until) VALUES (?1,?2,?3,?4)
         ON CONFLICT(id) DO UPDATE SET app_blocked = excluded.app_blocked,
                                       lease_until = excluded.lease_until",
    )?
    .execute(params![id, user, app_blocked, lease_until])?;
    Ok(())
}

/// Removes a foreground waiter (granted or cancelled).
pub fn delete_waiter(c: &Connection, id: &str) -> rusqlite::Result<()> {
    c.prepare_cached("DELETE FROM limiter_fg_waiters WHERE id = ?1")?
        .execute(params![id])?;
    Ok(())
}

/// Whether a live foreground waiter holds back background work of `user`: one of the same user, or
/// one blocked on the app scope. Returns (user-scope, app-scope) hold-backs.
pub fn foreground_waiting(c: &Connection, user: &str) -> rusqlite::Result<(bool, bool)> {
    c.prepare_cached(
        "SELECT coalesce(max(user_id = ?1), 0), coalesce(max(app_blocked), 0)
         FROM limiter_fg_waiters",
    )?
    .query_row(params![user], |r| {
        Ok((r.get::<_, i64>(0)? != 0, r.get::<_, i64>(1)? != 0))
    })
}

/// Number of live foreground waiters (for the snapshot).
pub fn waiter_count(c: &Connection, user: Option<&str>) -> rusqlite::Result<u32> {
    c.prepare_cached("SELECT count(*) FROM limiter_fg_waiters WHERE (?1 IS NULL OR user_id = ?1)")?
        .query_row(params![user], |r| r.get::<_, i64>(0).map(|n| n as u32))
}

/// A user's soft brake from `x-ms-throttle-limit-percentage`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Brake {
    /// The reported share of a limit (0.8 to 1.8).
    pub percentage: f64,
    /// When it was reported.
    pub at: UnixMillis,
    /// At 1.0 and above: no request before this.
    pub hold_until: UnixMillis,
}

/// The brake of `user`, if any.
pub fn brake(c: &Connection, user: &str) -> rusqlite::Result<Option<Brake>> {
    c.prepare_cached("SELECT percentage, at, hold_until FROM limiter_brakes WHERE user_id = ?1")?
        .query_row(params![user], |r| {
            Ok(Brake {
                percentage: r.get(0)?,
                at: r.get(1)?,
                hold_until: r.get(2)?,
            })
        })
        .optional()
}

/// Sets (or replaces) the brake of `user`.
pub fn set_brake(c: &Connection, user: &str, b: Brake) -> rusqlite::Result<()> {
    c.prepare_cached(
        "INSERT INTO limiter_brakes(user_id, percentage, at, hold_until) VALUES (?1,?2,?3,?4)
         ON CONFLICT(user_id) DO UPDATE SET percentage = excluded.percentage, at = excluded.at,
                                            hold_until = excluded.hold_until",
    )?
    .execute(params![user, b.percentage, b.at, b.hold_until])?;
    Ok(())
}

/// Releases the brake of `user`.
pub fn clear_brake(c: &Connection, user: &str) -> rusqlite::Result<()> {
    c.prepare_cached("DELETE FROM limiter_brakes WHERE user_id = ?1")?
        .execute(params![user])?;
    Ok(())
}

/// Users with any ledger row, slot, breaker or brake (for the snapshot).
pub fn known_users(c: &Connection) -> rusqlite::Result<Vec<String>> {
    let mut st = c.prepare_cached(
        "SELECT user_id FROM limiter_ledger UNION SELECT user_id FROM limiter_inflight
         UNION SELECT substr(scope, 6) FROM limiter_breakers WHERE scope LIKE 'user:%'
         UNION SELECT user_id FROM limiter_brakes ORDER BY 1",
    )?;
    let rows = st.query_map([], |r| r.get(0))?;
    rows.collect()
}

/// Requests `user`'s last scan cost, if it was ever scanned.
pub fn scan_cost(c: &Connection, user: &str) -> rusqlite::Result<Option<u32>> {
    c.prepare_cached("SELECT requests FROM limiter_scan_costs WHERE user_id = ?1")?
        .query_row(params![user], |r| r.get::<_, i64>(0))
        .optional()
        .map(|n| n.map(|n| n.clamp(0, u32::MAX as i64) as u32))
}

/// Records what `user`'s scan that ended at `at` cost.
pub fn set_scan_cost(
    c: &Connection,
    user: &str,
    requests: u32,
    at: UnixMillis,
) -> rusqlite::Result<()> {
    c.prepare_cached(
        "INSERT INTO limiter_scan_costs(user_id, requests, at) VALUES (?1, ?2, ?3)
         ON CONFLICT(user_id) DO UPDATE SET requests = excluded.requests, at = excluded.at",
    )?
    .execute(params![user, requests as i64, at])?;
    Ok(())
}

/// The rows of `user` (or every user's when `None`) with `at > since`, oldest first: what the
/// windows count.
pub fn counted_since(
    c: &Connection,
    user: Option<&str>,
    since: UnixMillis,
) -> rusqlite::Result<Vec<Counted>> {
    let row = |r: &rusqlite::Row<'_>| {
        Ok(Counted {
            at: r.get(0)?,
            granted: r.get(2)?,
            lane: if r.get::<_, i64>(1)? == Lane::Background.code() {
                Lane::Background
            } else {
                Lane::Foreground
            },
        })
    };
    match user {
        Some(u) => c
            .prepare_cached(
                "SELECT at, lane, granted_at FROM limiter_ledger WHERE user_id = ?1 AND at > ?2
                 ORDER BY at",
            )?
            .query_map(params![u, since], row)?
            .collect(),
        None => c
            .prepare_cached(
                "SELECT at, lane, granted_at FROM limiter_ledger WHERE at > ?1 ORDER BY at",
            )?
            .query_map(params![since], row)?
            .collect(),
    }
}

/// In-flight slots in one read: `user`'s, the whole app's, and whether a foreground request of
/// `user` / of anyone is in flight, seen from process `me`.
pub struct InFlightView {
    /// The user's slots.
    pub user: InFlightCounts,
    /// Every slot.
    pub app: InFlightCounts,
    /// A foreground slot of the user.
    pub foreground_user: bool,
    /// A foreground slot of anyone.
    pub foreground_any: bool,
}

/// Reads [`InFlightView`].
pub fn in_flight_view(c: &Connection, user: &str, me: &str) -> rusqlite::Result<InFlightView> {
    let mut st = c.prepare_cached(
        "SELECT user_id = ?1, lane, owner <> ?2, count(*) FROM limiter_inflight GROUP BY 1, 2, 3",
    )?;
    let mut rows = st.query(params![user, me])?;
    let mut v = InFlightView {
        user: InFlightCounts::default(),
        app: InFlightCounts::default(),
        foreground_user: false,
        foreground_any: false,
    };
    while let Some(r) = rows.next()? {
        let mine: bool = r.get::<_, i64>(0)? != 0;
        let background = r.get::<_, i64>(1)? == Lane::Background.code();
        let remote: bool = r.get::<_, i64>(2)? != 0;
        let n = r.get::<_, i64>(3)? as u32;
        let scopes: &mut [&mut InFlightCounts] = if mine {
            &mut [&mut v.user, &mut v.app]
        } else {
            &mut [&mut v.app]
        };
        for s in scopes.iter_mut() {
            s.total += n;
            if background {
                s.background += n;
            }
            if remote {
                s.remote += n;
            }
        }
        if !background {
            v.foreground_any = true;
            v.foreground_user |= mine;
        }
    }
    Ok(v)
}
