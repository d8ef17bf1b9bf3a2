//! Circuit breakers, one per scope, stored in the database so every process waits on the same one.
//!
//! Closed = no row. Open = `now < open_until`. Half-open = cooldown over: the next request becomes the
//! one probe (`probe_id`); its success deletes the row, another 429 re-opens it with a longer cooldown.
//!
//! The app's breaker may be open on a guess (`inferred_from`): one account's 429 named no scope while
//! other accounts were sending. Until another account confirms it (refused too) or clears it (its
//! probe answered), the guesser's own requests leave the probe to the others for one more cooldown.

use rusqlite::{params, Connection, OptionalExtension};

use crate::clock::UnixMillis;

/// One breaker row.
#[derive(Clone, Debug, PartialEq)]
pub struct Breaker {
    /// `app` or `user:<id>`.
    pub scope: String,
    /// When it last (re)opened.
    pub opened_at: UnixMillis,
    /// No request of the scope before this.
    pub open_until: UnixMillis,
    /// Consecutive 429s without a successful probe in between.
    pub trips: u32,
    /// The cooldown it was opened with.
    pub cooldown_ms: i64,
    /// The in-flight probe, if one is out.
    pub probe_id: Option<i64>,
    /// The process that sent the probe.
    pub probe_owner: Option<String>,
    /// The user whose unscoped 429 alone opened it (the app's breaker only), until another
    /// account's 429 confirms it.
    pub inferred_from: Option<String>,
}

impl Breaker {
    /// Until when the request of `user` may not be its probe, though the cooldown is over: one
    /// more cooldown for the account whose guess opened it, so another account's answer decides.
    pub fn probe_left_to_others_until(&self, user: &str) -> Option<UnixMillis> {
        (self.inferred_from.as_deref() == Some(user)).then_some(self.open_until + self.cooldown_ms)
    }
}

fn from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Breaker> {
    Ok(Breaker {
        scope: r.get(0)?,
        opened_at: r.get(1)?,
        open_until: r.get(2)?,
        trips: r.get::<_, i64>(3)? as u32,
        cooldown_ms: r.get(4)?,
        probe_id: r.get(5)?,
        probe_owner: r.get(6)?,
        inferred_from: r.get(7)?,
    })
}

const COLUMNS: &str =
    "scope, opened_at, open_until, trips, cooldown_ms, probe_id, probe_owner, inferred_from";

/// The breaker of `scope`, if it is not closed.
pub fn load(c: &Connection, scope: &str) -> rusqlite::Result<Option<Breaker>> {
    c.prepare_cached(&format!(
        "SELECT {COLUMNS} FROM limiter_breakers WHERE scope = ?1"
    ))?
    .query_row(params![scope], from_row)
    .optional()
}

/// Every breaker that is not closed.
pub fn load_all(c: &Connection) -> rusqlite::Result<Vec<Breaker>> {
    let mut st = c.prepare_cached(&format!(
        "SELECT {COLUMNS} FROM limiter_breakers ORDER BY scope"
    ))?;
    let rows = st.query_map([], from_row)?;
    rows.collect()
}

/// Marks request `id` of process `owner` as the half-open probe of `scope`.
pub fn claim_probe(
    c: &Connection,
    scope: &str,
    id: i64,
    owner: &str,
    lease_until: UnixMillis,
) -> rusqlite::Result<()> {
    c.prepare_cached(
        "UPDATE limiter_breakers SET probe_id = ?2, probe_owner = ?3, probe_lease_until = ?4
         WHERE scope = ?1",
    )?
    .execute(params![scope, id, owner, lease_until])?;
    Ok(())
}

/// Closes `scope` if request `id` is its probe (its success proves the scope has room again).
pub fn close_if_probe(c: &Connection, scope: &str, id: i64) -> rusqlite::Result<()> {
    c.prepare_cached("DELETE FROM limiter_breakers WHERE scope = ?1 AND probe_id = ?2")?
        .execute(params![scope, id])?;
    Ok(())
}

/// Frees the probe of `scope` if it is `id` (it failed without a throttle): another may probe.
pub fn release_probe(c: &Connection, scope: &str, id: i64) -> rusqlite::Result<()> {
    c.prepare_cached(
        "UPDATE limiter_breakers SET probe_id = NULL, probe_owner = NULL, probe_lease_until = NULL
         WHERE scope = ?1 AND probe_id = ?2",
    )?
    .execute(params![scope, id])?;
    Ok(())
}

/// Writes `b` (insert or replace), clearing its probe.
pub fn store(c: &Connection, b: &Breaker) -> rusqlite::Result<()> {
    c.prepare_cached(
        "INSERT INTO limiter_breakers(scope, opened_at, open_until, trips, cooldown_ms, probe_id,
                                      probe_owner, probe_lease_until, inferred_from)
         VALUES (?1, ?2, ?3, ?4, ?5, NULL, NULL, NULL, ?6)
         ON CONFLICT(scope) DO UPDATE SET opened_at = excluded.opened_at,
             open_until = excluded.open_until, trips = excluded.trips,
             cooldown_ms = excluded.cooldown_ms, probe_id = NULL, probe_owner = NULL,
             probe_lease_until = NULL, inferred_from = excluded.inferred_from",
    )?
    .execute(params![
        b.scope,
        b.opened_at,
        b.open_until,
        b.trips as i64,
        b.cooldown_ms,
        b.inferred_from,
    ])?;
    Ok(())
}

/// Keeps `scope` open at least until `until`, without touching its trips or probe: for a 429 of a
/// request sent before the breaker opened, which says nothing new about the cooldown. With
/// `confirmed` (the 429 was the scope's own, not a guess from it) the breaker stops being a guess.
pub fn extend(
    c: &Connection,
    scope: &str,
    until: UnixMillis,
    confirmed: bool,
) -> rusqlite::Result<()> {
    c.prepare_cached(
        "UPDATE limiter_breakers SET open_until = max(open_until, ?2),
             inferred_from = CASE WHEN ?3 THEN NULL ELSE inferred_from END
         WHERE scope = ?1",
    )?
    .execute(params![scope, until, confirmed])?;
    Ok(())
}

/// Whether a breaker whose scope is `like` (an SQL pattern: `user:%`, `app`), other than `except`,
/// is throttled now: open, or half-open for less than one more cooldown (its probe about to go or
/// out). A row whose account stopped sending stays half-open; past that it says nothing of now.
/// A breaker opened on `user`'s own guess is no evidence against `user`: `user` is the user id.
pub fn throttled_lately(
    c: &Connection,
    like: &str,
    except: &str,
    user: &str,
    now: UnixMillis,
) -> rusqlite::Result<bool> {
    c.prepare_cached(
        "SELECT EXISTS(SELECT 1 FROM limiter_breakers
                       WHERE scope LIKE ?1 AND scope <> ?2 AND open_until + cooldown_ms > ?3
                         AND (inferred_from IS NULL OR inferred_from <> ?4))",
    )?
    .query_row(params![like, except, now, user], |r| {
        r.get::<_, i64>(0).map(|n| n != 0)
    })
}
