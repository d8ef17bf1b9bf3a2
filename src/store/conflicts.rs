//! Conflicts a person resolved (`notebridge resolve`): they have dealt with a page that notebridge
//! left as they edited it in Notion. A resolved conflict no longer counts as open (a run with
//! nothing else wrong exits 0), and its page is still never written: `Db::is_conflict` holds for
//! it whatever its state. A later OneNote change to the page opens it again
//! (`notion_items::Rewriting::kept`), since the person has something new to look at.

use rusqlite::params;

use super::notion_items::{conflict_of_row, Conflict, CONFLICT_COLUMNS};
use super::{Db, Result};
use crate::clock::UnixMillis;

/// What resolving the conflicts of some pages did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Resolution {
    /// The conflicts resolved now.
    pub resolved: Vec<Conflict>,
    /// The pages asked for that are no open conflict (none was resolved then).
    pub unknown: Vec<String>,
}

/// A Notion id as conflicts are matched: lower case, without dashes.
fn compact(id: &str) -> String {
    id.replace('-', "").to_ascii_lowercase()
}

impl Db {
    /// Resolves the open conflicts whose person's Notion page is one of `pages` (ids with or
    /// without dashes), all or none: when one of them is no open conflict, nothing is resolved
    /// and it is named in [`Resolution::unknown`].
    pub fn resolve_conflicts(&self, pages: &[String], now: UnixMillis) -> Result<Resolution> {
        self.write("resolving conflicts", |tx| {
            let mut find = tx.prepare(&format!(
                "SELECT {CONFLICT_COLUMNS}
                 WHERE replace(lower(c.notion_page_id), '-', '') = ?1 AND c.resolved_at IS NULL"
            ))?;
            let (mut resolved, mut unknown) = (Vec::<Conflict>::new(), Vec::new());
            for page in pages {
                let found: Vec<Conflict> = find
                    .query_map([compact(page)], conflict_of_row)?
                    .collect::<rusqlite::Result<_>>()?;
                if found.is_empty() {
                    unknown.push(page.clone());
                }
                for c in found {
                    if !resolved
                        .iter()
                        .any(|r| r.account == c.account && r.item_id == c.item_id)
                    {
                        resolved.push(c);
                    }
                }
            }
            if !unknown.is_empty() {
                return Ok(Resolution {
                    resolved: Vec::new(),
                    unknown,
                });
            }
            for c in &resolved {
                tx.execute(
                    "UPDATE conflicts SET resolved_at = ?3
                     WHERE account = ?1 AND item_id = ?2 AND resolved_at IS NULL",
                    params![c.account, c.item_id, now],
                )?;
            }
            Ok(Resolution { resolved, unknown })
        })
    }

    /// Resolves every open conflict of every source, in the order they were found.
    pub fn resolve_all_conflicts(&self, now: UnixMillis) -> Result<Vec<Conflict>> {
        self.write("resolving conflicts", |tx| {
            let open: Vec<Conflict> = tx
                .prepare(&format!(
                    "SELECT {CONFLICT_COLUMNS} WHERE c.resolved_at IS NULL
                     ORDER BY c.found_at, c.rowid"
                ))?
                .query_map([], conflict_of_row)?
                .collect::<rusqlite::Result<_>>()?;
            tx.execute(
                "UPDATE conflicts SET resolved_at = ?1 WHERE resolved_at IS NULL",
                [now],
            )?;
            Ok(open)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conflict(db: &Db, account: &str, item: &str, page: &str) {
        db.write("test", |tx| {
            tx.execute(
                "INSERT INTO conflicts(account, item_id, notion_page_id, kept_item_id, found_at,
                                       change)
                 VALUES (?1, ?2, ?3, '', 1, 'renamed')",
                params![account, item, page],
            )
        })
        .unwrap();
    }

    fn open(db: &Db) -> Vec<String> {
        let keys = ["a".to_owned(), "b".to_owned()];
        db.conflicts(&keys)
            .unwrap()
            .into_iter()
            .map(|c| c.item_id)
            .collect()
    }

    #[test]
    fn resolving_is_all_or_none_and_matches_ids_in_any_form() {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(&dir.path().join("t.db")).unwrap();
        conflict(&db, "a", "p1", "0a1b2c3d-0000-4000-8000-00000000000a");
        conflict(&db, "b", "p2", "0a1b2c3d-0000-4000-8000-00000000000b");
        conflict(&db, "a", "p3", "0a1b2c3d-0000-4000-8000-00000000000c");

        // One page that is no conflict: nothing resolved, and it is named.
        let r = db
            .resolve_conflicts(
                &[
                    "0A1B2C3D00004000800000000000000A".into(),
                    "ffffffff-0000-4000-8000-00000000000a".into(),
                ],
                5,
            )
            .unwrap();
        assert!(r.resolved.is_empty());
        assert_eq!(r.unknown, ["ffffffff-0000-4000-8000-00000000000a"]);
        assert_eq!(open(&db), ["p1", "p3", "p2"]);

        // The same page twice, without dashes and in capitals: resolved once.
        let r = db
            .resolve_conflicts(
                &[
                    "0A1B2C3D00004000800000000000000A".into(),
                    "0a1b2c3d-0000-4000-8000-00000000000a".into(),
                ],
                5,
            )
            .unwrap();
        assert_eq!(r.resolved.len(), 1);
        assert_eq!(r.resolved[0].item_id, "p1");
        assert_eq!(open(&db), ["p3", "p2"]);
        let resolved = db.resolved_conflicts(&["a".into()]).unwrap();
        assert_eq!(resolved.len(), 1);
        // Still a conflict: its page is never written.
        assert!(db.is_conflict("a", "p1").unwrap());
        // Resolved already: no open conflict any more.
        let r = db
            .resolve_conflicts(&["0a1b2c3d-0000-4000-8000-00000000000a".into()], 6)
            .unwrap();
        assert_eq!(r.unknown.len(), 1);

        let all = db.resolve_all_conflicts(7).unwrap();
        assert_eq!(
            all.iter().map(|c| c.item_id.as_str()).collect::<Vec<_>>(),
            ["p2", "p3"]
        );
        assert!(open(&db).is_empty());
        assert!(db.resolve_all_conflicts(8).unwrap().is_empty());
    }
}
