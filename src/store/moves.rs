//! A page OneNote moved is known by what survives the move, not by its Graph id: the real service
//! numbers a page inside its section (`0-<hex>!<n>-<section id>`), so a page moved to another
//! section comes back under a new id. What it keeps is its `onenote:` link GUID
//! (`pages.onenote_guid`) and its created time. A page that went from one inventory key's scan and
//! a page that appeared in the same key are one page when their GUIDs agree; where either has no
//! GUID, when their created time and title agree and no other page of either side does. The
//! record of the page that went is then re-keyed to the new id (with its job, journal, links and
//! conflict) in one transaction, so the queue finds the page written and `sync` moves it in
//! Notion. Nothing else is guessed: two pages of one title and created time are a deletion and a
//! creation, and named as such.

use std::collections::{HashMap, HashSet};

use rusqlite::{params, Connection};
use serde::Serialize;

use super::jobs::RunToken;
use super::notion_items::BodyColumn;
use super::{Db, Result};
use crate::clock::UnixMillis;

/// How a moved page was recognised.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Recognised {
    /// Its `onenote:` link GUID.
    Guid,
    /// Its created time and title, the only page to have them on either side.
    CreatedAndTitle,
}

/// One page that went under one id and came back under another.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Move {
    /// The id it had.
    pub from: String,
    /// The id it has now.
    pub to: String,
    /// How it was recognised.
    pub by: Recognised,
}

/// A page that went whose move could not be told: its Notion page goes and a new one is made.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Recreated {
    /// The OneNote id it had.
    pub page: String,
    /// Its title.
    pub title: String,
    /// Its Notion page (trashed or kept as `--deletions` says).
    pub notion_page_id: String,
    /// Why it was not matched.
    pub why: String,
}

/// What the matching found in one key.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Moves {
    /// Pages recognised as moved.
    pub moved: Vec<Move>,
    /// Pages that went while pages of their title and created time appeared, none of them told
    /// apart.
    pub recreated: Vec<Recreated>,
}

/// One side's page.
struct Candidate {
    id: String,
    title: String,
    created: Option<String>,
    guid: Option<String>,
    notion_page_id: String,
}

fn gone(c: &Connection, key: &str) -> rusqlite::Result<Vec<Candidate>> {
    // Pages the last complete scan no longer found, whose record holds a written page.
    let mut st = c.prepare(
        "SELECT p.id, p.title, p.created, p.onenote_guid, n.notion_page_id
         FROM pages p JOIN notion_items n ON n.account = p.account AND n.item_id = p.id
         WHERE p.account = ?1 AND p.deleted_at IS NOT NULL AND n.kind = 'page'
           AND n.notion_page_id IS NOT NULL AND n.trashed_at IS NULL AND n.body_state = ?2
         ORDER BY p.id",
    )?;
    let rows = st.query_map(params![key, BodyColumn::Done], |r| {
        Ok(Candidate {
            id: r.get(0)?,
            title: r.get(1)?,
            created: r.get(2)?,
            guid: r.get(3)?,
            notion_page_id: r.get(4)?,
        })
    })?;
    rows.collect()
}

fn appeared(c: &Connection, key: &str) -> rusqlite::Result<Vec<Candidate>> {
    // Live pages with no record at all (a page whose creation began is its own).
    let mut st = c.prepare(
        "SELECT p.id, p.title, p.created, p.onenote_guid FROM pages p
         WHERE p.account = ?1 AND p.deleted_at IS NULL
           AND NOT EXISTS (SELECT 1 FROM notion_items n
                           WHERE n.account = p.account AND n.item_id = p.id)
         ORDER BY p.id",
    )?;
    let rows = st.query_map([key], |r| {
        Ok(Candidate {
            id: r.get(0)?,
            title: r.get(1)?,
            created: r.get(2)?,
            guid: r.get(3)?,
            notion_page_id: String::new(),
        })
    })?;
    rows.collect()
}

/// Matches what went with what appeared in `key` (the module's rule); reads only.
fn find(c: &Connection, key: &str) -> rusqlite::Result<Moves> {
    let (gone, appeared) = (gone(c, key)?, appeared(c, key)?);
    let mut out = Moves::default();
    if gone.is_empty() {
        return Ok(out);
    }
    let guid = |p: &Candidate| p.guid.as_deref().map(str::to_ascii_lowercase);
    let count = |side: &[Candidate]| {
        let mut n: HashMap<String, usize> = HashMap::new();
        for g in side.iter().filter_map(guid) {
            *n.entry(g).or_default() += 1;
        }
        n
    };
    let (gone_guids, new_guids) = (count(&gone), count(&appeared));
    let mut taken: HashSet<&str> = HashSet::new();
    let mut matched: HashSet<&str> = HashSet::new();
    for g in &gone {
        let Some(id) = guid(g) else { continue };
        if gone_guids.get(&id) != Some(&1) || new_guids.get(&id) != Some(&1) {
            continue;
        }
        if let Some(n) = appeared.iter().find(|n| guid(n).as_ref() == Some(&id)) {
            out.moved.push(Move {
                from: g.id.clone(),
                to: n.id.clone(),
                by: Recognised::Guid,
            });
            taken.insert(&n.id);
            matched.insert(&g.id);
        }
    }
    // Where a side has no GUID: the created time and title, when one page on each side has them.
    // Two pages whose listings both gave GUIDs, and different ones, are different pages.
    let shape = |p: &Candidate| p.created.clone().map(|c| (c, p.title.clone()));
    let mut gone_by: HashMap<(String, String), Vec<&Candidate>> = HashMap::new();
    for g in gone.iter().filter(|g| !matched.contains(g.id.as_str())) {
        if let Some(s) = shape(g) {
            gone_by.entry(s).or_default().push(g);
        }
    }
    let mut new_by: HashMap<(String, String), Vec<&Candidate>> = HashMap::new();
    for n in appeared.iter().filter(|n| !taken.contains(n.id.as_str())) {
        if let Some(s) = shape(n) {
            new_by.entry(s).or_default().push(n);
        }
    }
    for g in gone.iter().filter(|g| !matched.contains(g.id.as_str())) {
        let Some(s) = shape(g) else { continue };
        let news = new_by.get(&s).map_or(&[][..], Vec::as_slice);
        let olds = &gone_by[&s];
        let comparable = |n: &&Candidate| !given_guid(g) || !given_guid(n);
        if news.is_empty() || !news.iter().all(comparable) {
            continue;
        }
        if let ([n], [_]) = (news, olds.as_slice()) {
            out.moved.push(Move {
                from: g.id.clone(),
                to: n.id.clone(),
                by: Recognised::CreatedAndTitle,
            });
            continue;
        }
        out.recreated.push(Recreated {
            page: g.id.clone(),
            title: g.title.clone(),
            notion_page_id: g.notion_page_id.clone(),
            why: format!(
                "{} pages went and {} came with its title and created time, and no OneNote GUID \
                 tells them apart",
                olds.len(),
                news.len()
            ),
        });
    }
    Ok(out)
}

/// Whether `p`'s GUID is one its listing gave (its `onenote:` link's), rather than the one read
/// from the hex of its Graph id when the listing gave no link: that one changes with the id, so
/// two pages' differing only in it tells nothing.
fn given_guid(p: &Candidate) -> bool {
    let Some(guid) = &p.guid else { return false };
    let bare: String = guid
        .chars()
        .filter(char::is_ascii_hexdigit)
        .collect::<String>()
        .to_ascii_lowercase();
    let hex =
        p.id.split_once('-')
            .and_then(|(_, rest)| rest.split_once('!'))
            .map(|(hex, _)| hex.to_ascii_lowercase());
    hex.as_deref() != Some(bare.as_str())
}

impl Db {
    /// The moves a sync of `key` would recognise (the module's rule), without recording them.
    pub fn find_moves(&self, key: &str) -> Result<Moves> {
        self.read("matching moved pages", |c| find(c, key))
    }

    /// Recognises the pages of `key` that came back under a new id and re-keys each one's
    /// records to it, by the run lock's holder `token`, in one transaction.
    /// Those it cannot tell apart are recorded as recreated (`status` and `report` name them).
    pub fn rekey_moves(&self, token: &RunToken, key: &str, now: UnixMillis) -> Result<Moves> {
        self.write_holding(token, "re-keying moved pages", |tx| {
            let found = find(tx, key)?;
            for m in &found.moved {
                rekey(tx, key, &m.from, &m.to)?;
            }
            for r in &found.recreated {
                tx.execute(
                    "INSERT OR REPLACE INTO recreated_pages(account, item_id, title,
                         notion_page_id, why, found_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                    params![key, r.page, r.title, r.notion_page_id, r.why, now],
                )?;
            }
            Ok(found)
        })
    }

    /// The pages of `keys` deleted and created again because nothing told their move, newest
    /// first.
    pub fn recreated_pages(&self, keys: &[String]) -> Result<Vec<Recreated>> {
        self.read("reading pages created again", |c| {
            let mut st = c.prepare(
                "SELECT item_id, title, notion_page_id, why FROM recreated_pages
                 WHERE account = ?1 ORDER BY found_at DESC, item_id",
            )?;
            let mut out = Vec::new();
            for k in keys {
                let rows = st.query_map([k], |r| {
                    Ok(Recreated {
                        page: r.get(0)?,
                        title: r.get(1)?,
                        notion_page_id: r.get(2)?,
                        why: r.get(3)?,
                    })
                })?;
                for r in rows {
                    out.push(r?);
                }
            }
            Ok(out)
        })
    }
}

/// Every record of page `from` of `key` made the record of `to`, with the items derived from it
/// (its kept OneNote version: the page's id followed by `#`).
fn rekey(c: &Connection, key: &str, from: &str, to: &str) -> rusqlite::Result<()> {
    const OF_PAGE: &str = "(item_id = ?2 OR substr(item_id, 1, length(?2) + 1) = ?2 || '#')";
    const NEW_ID: &str = "?3 || substr(item_id, length(?2) + 1)";
    for table in ["notion_items", "write_steps", "link_blocks", "conflicts"] {
        c.execute(
            &format!("UPDATE {table} SET item_id = {NEW_ID} WHERE account = ?1 AND {OF_PAGE}"),
            params![key, from, to],
        )?;
    }
    // A job planned for the new id by an earlier run gives way to the page's own.
    c.execute(
        &format!("UPDATE OR REPLACE jobs SET item_id = {NEW_ID} WHERE account = ?1 AND {OF_PAGE}"),
        params![key, from, to],
    )?;
    c.execute(
        "UPDATE conflicts SET kept_item_id = ?3 || substr(kept_item_id, length(?2) + 1)
         WHERE account = ?1 AND substr(kept_item_id, 1, length(?2) + 1) = ?2 || '#'",
        params![key, from, to],
    )?;
    Ok(())
}

impl Db {
    /// The items of `key` OneNote no longer has there whose Notion page a record of another key
    /// holds for an item OneNote has (a section file or page moved to another import of the run,
    /// adopted there by its GUID): moved, not deleted.
    pub fn moved_elsewhere(&self, key: &str) -> Result<Vec<String>> {
        self.read("finding items moved to another source", |c| {
            let mut st = c.prepare(
                "SELECT n.item_id FROM notion_items n
                 WHERE n.account = ?1 AND n.notion_page_id IS NOT NULL AND n.trashed_at IS NULL
                   AND (EXISTS (SELECT 1 FROM pages p WHERE p.account = n.account
                                AND p.id = n.item_id AND p.deleted_at IS NOT NULL)
                        OR EXISTS (SELECT 1 FROM sections s WHERE s.account = n.account
                                   AND s.id = n.item_id AND s.deleted_at IS NOT NULL))
                   AND EXISTS (SELECT 1 FROM notion_items o
                               WHERE o.account <> n.account AND o.notion_page_id = n.notion_page_id
                                 AND o.trashed_at IS NULL
                                 AND (EXISTS (SELECT 1 FROM pages p WHERE p.account = o.account
                                              AND p.id = o.item_id AND p.deleted_at IS NULL)
                                      OR EXISTS (SELECT 1 FROM sections s
                                                 WHERE s.account = o.account AND s.id = o.item_id
                                                   AND s.deleted_at IS NULL)))
                 ORDER BY n.item_id",
            )?;
            let rows = st.query_map([key], |r| r.get(0))?;
            rows.collect()
        })
    }

    /// Forgets `key`'s records of `items` (moved to another key, which holds their pages now), by
    /// the run lock's holder `token`, in one transaction.
    pub fn forget_moved(&self, token: &RunToken, key: &str, items: &[String]) -> Result<()> {
        self.write_holding(token, "forgetting items moved to another source", |tx| {
            for i in items {
                for table in ["notion_items", "write_steps", "link_blocks"] {
                    tx.execute(
                        &format!("DELETE FROM {table} WHERE account = ?1 AND item_id = ?2"),
                        params![key, i],
                    )?;
                }
            }
            Ok(())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(id: &str, guid: Option<&str>) -> Candidate {
        Candidate {
            id: id.into(),
            title: "T".into(),
            created: None,
            guid: guid.map(str::to_owned),
            notion_page_id: String::new(),
        }
    }

    #[test]
    fn a_guid_read_from_the_pages_own_id_is_no_guid_its_listing_gave() {
        let id = "0-b0d3e01c12c64d76a45962d54f5cb68c!253-C4CA69B2C470620B!757";
        let own = "{b0d3e01c-12c6-4d76-a459-62d54f5cb68c}";
        assert!(!given_guid(&page(id, Some(own))));
        assert!(!given_guid(&page(id, Some(&own.to_uppercase()))));
        assert!(!given_guid(&page(id, None)));
        assert!(given_guid(&page(
            id,
            Some("{6a3d1e2f-0000-4d76-a459-62d54f5cb68c}")
        )));
        // A file's page: its id is its GUID, and one of the file's own.
        assert!(given_guid(&page(
            "3ce4eac6-19a4-4ab1-a5f6-1a5a9ef1f6b6",
            Some("{3ce4eac6-19a4-4ab1-a5f6-1a5a9ef1f6b6}")
        )));
    }
}
