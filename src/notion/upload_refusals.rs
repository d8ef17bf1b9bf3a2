//! The upload limit a token learned from Notion's refusals (`notion_upload_refusals`). A personal
//! access token is told no limit by `GET /v1/users/me`, so the workspace's limit is met as the
//! refusal of a file too large; the smallest size refused is kept per token hash (as
//! `notion_pace` keeps the learned request budget), so a later file at least that big goes as a
//! placeholder without a create and a send, in this run and the next ones. Every function runs
//! inside the caller's transaction or read; none commits.

use rusqlite::{params, Connection, OptionalExtension};

use crate::clock::UnixMillis;

/// How long a refusal is used: after a day the workspace may have changed plan, so the next file
/// that big is tried again (one create and one send a day, at most).
pub const REMEMBERED_MS: i64 = 24 * 60 * 60 * 1000;

/// The smallest upload Notion refused for a token, within [`REMEMBERED_MS`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UploadRefusal {
    /// The refused file's size in bytes: files at least this big are not sent.
    pub size: u64,
    /// Notion's words for the refusal.
    pub message: String,
    /// When Notion refused it.
    pub refused_at: UnixMillis,
}

impl UploadRefusal {
    /// Whether a file of `size` bytes is at least as big as the one refused.
    pub fn covers(&self, size: u64) -> bool {
        size >= self.size
    }
}

/// The refusal kept for the token hashed `key`, unless older than [`REMEMBERED_MS`] at `now`.
pub fn load(c: &Connection, key: &str, now: UnixMillis) -> rusqlite::Result<Option<UploadRefusal>> {
    c.prepare_cached(
        "SELECT size, message, refused_at FROM notion_upload_refusals
          WHERE token_hash = ?1 AND refused_at > ?2",
    )?
    .query_row(params![key, now - REMEMBERED_MS], |r| {
        Ok(UploadRefusal {
            size: r.get::<_, i64>(0)?.max(0) as u64,
            message: r.get(1)?,
            refused_at: r.get(2)?,
        })
    })
    .optional()
}

/// Records that Notion refused a file of `size` bytes for `key` at `now`: kept when it is the
/// smallest refused within [`REMEMBERED_MS`] (a larger one refused meanwhile, sent before the
/// smaller refusal was known, changes nothing).
pub fn record(
    c: &Connection,
    key: &str,
    size: u64,
    message: &str,
    now: UnixMillis,
) -> rusqlite::Result<()> {
    c.prepare_cached(
        "INSERT INTO notion_upload_refusals(token_hash, size, message, refused_at)
         VALUES (?1, ?2, ?3, ?4)
         ON CONFLICT(token_hash) DO UPDATE SET
            size = excluded.size, message = excluded.message, refused_at = excluded.refused_at
          WHERE excluded.size <= notion_upload_refusals.size
             OR notion_upload_refusals.refused_at <= ?5",
    )?
    .execute(params![
        key,
        i64::try_from(size).unwrap_or(i64::MAX),
        message,
        now,
        now - REMEMBERED_MS
    ])?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Db;

    #[test]
    fn the_smallest_refusal_of_the_last_day_is_kept_per_token() {
        let db = Db::open_in_memory().unwrap();
        let c = db.conn();
        let day = REMEMBERED_MS;
        record(&c, "a", 9000, "nine", 1_000).unwrap();
        record(&c, "a", 5000, "five", 2_000).unwrap();
        record(&c, "a", 7000, "seven", 3_000).unwrap();
        let kept = load(&c, "a", 3_000).unwrap().unwrap();
        assert_eq!((kept.size, kept.message.as_str()), (5000, "five"));
        assert!(kept.covers(5000) && kept.covers(6000) && !kept.covers(4999));
        assert_eq!(load(&c, "b", 3_000).unwrap(), None, "per token");
        assert_eq!(
            load(&c, "a", 2_000 + day).unwrap(),
            None,
            "forgotten after a day"
        );
        // A day on, a larger refusal replaces the stale smaller one.
        record(&c, "a", 8000, "eight", 2_000 + day).unwrap();
        assert_eq!(load(&c, "a", 2_001 + day).unwrap().unwrap().size, 8000);
    }
}
