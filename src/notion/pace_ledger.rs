//! The Notion pace's SQLite rows (`notion_pace`, `notion_grants`), beside the Graph limiter's
//! ledger. Every function runs inside the caller's transaction; none commits.

use rusqlite::{params, Connection, OptionalExtension, Row};

use super::pace::{InWindow, Limit, Pace};
use crate::clock::UnixMillis;

fn pace_of(r: &Row<'_>) -> rusqlite::Result<Pace> {
    Ok(Pace {
        window_ms: r.get("window_ms")?,
        per_window: r.get("per_window")?,
        budget: r
            .get::<_, Option<i64>>("budget")?
            .map(|b| b.clamp(0, u32::MAX as i64) as u32),
        reset_at: r.get("reset_at")?,
        tat: r.get("tat")?,
        paused_until: r.get("paused_until")?,
        pause_reason: r
            .get::<_, Option<String>>("pause_reason")?
            .and_then(|c| Limit::from_code(&c)),
        throttled_at: r.get("throttled_at")?,
        raised_at: r.get("raised_at")?,
        ramping: r.get::<_, i64>("ramping")? != 0,
    })
}

/// The pace of the token hashed `key`, if it has one.
pub fn load(c: &Connection, key: &str) -> rusqlite::Result<Option<Pace>> {
    c.prepare_cached("SELECT * FROM notion_pace WHERE token_hash = ?1")?
        .query_row(params![key], pace_of)
        .optional()
}

/// Every token's pace, by key.
pub fn all(c: &Connection) -> rusqlite::Result<Vec<(String, Pace)>> {
    let mut st = c.prepare_cached("SELECT * FROM notion_pace ORDER BY token_hash")?;
    let rows = st.query_map([], |r| Ok((r.get("token_hash")?, pace_of(r)?)))?;
    rows.collect()
}

/// Writes (or replaces) the pace of `key`.
pub fn save(c: &Connection, key: &str, p: &Pace) -> rusqlite::Result<()> {
    c.prepare_cached(
        "INSERT INTO notion_pace(token_hash, window_ms, per_window, budget, reset_at, tat,
                                 paused_until, pause_reason, throttled_at, raised_at, ramping)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)
         ON CONFLICT(token_hash) DO UPDATE SET
            window_ms = excluded.window_ms, per_window = excluded.per_window,
            budget = excluded.budget, reset_at = excluded.reset_at, tat = excluded.tat,
            paused_until = excluded.paused_until, pause_reason = excluded.pause_reason,
            throttled_at = excluded.throttled_at, raised_at = excluded.raised_at,
            ramping = excluded.ramping",
    )?
    .execute(params![
        key,
        p.window_ms,
        p.per_window,
        p.budget.map(i64::from),
        p.reset_at,
        p.tat,
        p.paused_until,
        p.pause_reason.map(Limit::code),
        p.throttled_at,
        p.raised_at,
        p.ramping,
    ])?;
    Ok(())
}

/// Records one granted request of `key`; returns its id.
pub fn insert_grant(c: &Connection, key: &str, now: UnixMillis) -> rusqlite::Result<i64> {
    c.prepare_cached("INSERT INTO notion_grants(token_hash, granted_at) VALUES (?1, ?2)")?
        .execute(params![key, now])?;
    Ok(c.last_insert_rowid())
}

/// Records what became of request `id`: answered (Notion counted it) or refused (429/529).
/// Returns when it was granted (`None`: pruned already).
pub fn set_outcome(
    c: &Connection,
    id: i64,
    answered: bool,
) -> rusqlite::Result<Option<UnixMillis>> {
    c.prepare_cached("UPDATE notion_grants SET outcome = ?2 WHERE id = ?1 RETURNING granted_at")?
        .query_row(params![id, answered], |r| r.get(0))
        .optional()
}

/// Requests of `key` granted from `from` on that Notion answered. Those still in flight are left
/// out: at a 429 some of them arrived before it and some will meet it too, and which is not
/// known; a budget counted short is found again a request at a time, one counted long would
/// send each later window's surplus into 429s.
pub fn answered_since(c: &Connection, key: &str, from: UnixMillis) -> rusqlite::Result<u32> {
    c.prepare_cached(
        "SELECT count(*) FROM notion_grants WHERE token_hash = ?1 AND granted_at >= ?2
           AND outcome = 1",
    )?
    .query_row(params![key, from], |r| r.get::<_, i64>(0))
    .map(|n| n.clamp(0, u32::MAX as i64) as u32)
}

/// Requests of `key` granted from `from` on, refused ones excluded.
pub fn granted_since(c: &Connection, key: &str, from: UnixMillis) -> rusqlite::Result<u32> {
    c.prepare_cached(
        "SELECT count(*) FROM notion_grants WHERE token_hash = ?1 AND granted_at >= ?2
           AND outcome IS NOT 0",
    )?
    .query_row(params![key, from], |r| r.get::<_, i64>(0))
    .map(|n| n.clamp(0, u32::MAX as i64) as u32)
}

/// What `key`'s ledger counts in the window beginning at `start` (see [`InWindow`]).
pub fn in_window(c: &Connection, key: &str, start: UnixMillis) -> rusqlite::Result<InWindow> {
    c.prepare_cached(
        "SELECT count(*), coalesce(sum(outcome = 1 AND granted_at >= ?3), 0),
                coalesce(sum(outcome IS NULL), 0) FROM notion_grants
          WHERE token_hash = ?1 AND granted_at >= ?2 AND outcome IS NOT 0",
    )?
    .query_row(params![key, start - Pace::GRAIN_MS, start], |r| {
        let n = |i| {
            r.get::<_, i64>(i)
                .map(|n| n.clamp(0, u32::MAX as i64) as u32)
        };
        Ok(InWindow {
            granted: n(0)?,
            answered: n(1)?,
            in_flight: n(2)?,
        })
    })
}

/// Deletes the grants of `key` before `before`: no count reads them any more.
pub fn prune(c: &Connection, key: &str, before: UnixMillis) -> rusqlite::Result<usize> {
    c.prepare_cached("DELETE FROM notion_grants WHERE token_hash = ?1 AND granted_at < ?2")?
        .execute(params![key, before])
}
