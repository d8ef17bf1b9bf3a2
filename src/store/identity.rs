//! One OneNote page, one Notion page, whichever way it was read. Graph's route and the route from
//! files key their inventories differently (Graph ids under an account, file GUIDs under an
//! import), but both know each page's OneNote GUID (`pages.onenote_guid`). Before a plan is made,
//! every page whose GUID another key already migrated is *adopted*: the other key's Notion record
//! is copied under this key, so the page's job finds its page written and `--update` rewrites that
//! same page in place. A section (or group, or notebook) whose every child was adopted under one
//! Notion parent of its kind is adopted as that parent, so the layout is not made twice either.

use std::collections::HashSet;

use rusqlite::{params, OptionalExtension, Transaction};

use super::inventory::{Notebook, Section, SectionGroup};
use super::jobs::RunToken;
use super::notion_items::BodyColumn;
use super::{Db, Result};

/// What adoption found: items whose Notion page another key made.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Adopted {
    /// OneNote pages.
    pub pages: usize,
    /// Notebook, section group and section pages.
    pub containers: usize,
}

impl Db {
    /// Adopts under `key` what other keys migrated of `notebooks` (see the module's doc), by the
    /// run lock's holder `token`, in one transaction. Items this key has a record of already are
    /// left as they are.
    pub fn adopt_migrated(
        &self,
        token: &RunToken,
        key: &str,
        notebooks: &[Notebook],
    ) -> Result<Adopted> {
        self.write_holding(token, "adopting pages migrated another way", |tx| {
            let mut a = Adopter {
                tx,
                key,
                found: Adopted::default(),
            };
            for nb in notebooks {
                let parents = a.children(&nb.section_groups, &nb.sections)?;
                a.container(&nb.id, "notebook", parents)?;
            }
            Ok(a.found)
        })
    }
}

struct Adopter<'a, 't> {
    tx: &'a Transaction<'t>,
    key: &'a str,
    found: Adopted,
}

/// A child's Notion page as adoption sees it: its parent's Notion id, when the child has a written
/// page (adopted or this key's own).
type ChildParent = Option<String>;

impl Adopter<'_, '_> {
    /// Adopts what it can of these children; returns each child's Notion parent (none when it has
    /// no page).
    fn children(
        &mut self,
        groups: &[SectionGroup],
        sections: &[Section],
    ) -> rusqlite::Result<Vec<ChildParent>> {
        let mut out = Vec::new();
        for s in sections {
            let mut parents = Vec::new();
            // Only the pages planning puts under the section's page count (a subpage sits under
            // the nearest page before it with a lower level), by the same rule as planning.
            let mut levels: Vec<i64> = Vec::new();
            for p in &s.pages {
                let parent = self.page(&p.id)?;
                while levels.last().is_some_and(|l| *l >= p.level) {
                    levels.pop();
                }
                if levels.is_empty() {
                    parents.push(parent);
                }
                levels.push(p.level);
            }
            out.push(self.container(&s.id, "section", parents)?);
        }
        for g in groups {
            let parents = self.children(&g.section_groups, &g.sections)?;
            out.push(self.container(&g.id, "section_group", parents)?);
        }
        Ok(out)
    }

    /// This key's record of `item`: its Notion parent, if it has a page.
    fn own(&self, item: &str) -> rusqlite::Result<Option<ChildParent>> {
        self.tx
            .query_row(
                "SELECT parent_notion_id, notion_page_id FROM notion_items
                 WHERE account = ?1 AND item_id = ?2",
                params![self.key, item],
                |r| {
                    let parent: String = r.get(0)?;
                    let page: Option<String> = r.get(1)?;
                    Ok(page.map(|_| parent))
                },
            )
            .optional()
    }

    /// Adopts page `id` when another key wrote its GUID's page; returns its Notion parent.
    fn page(&mut self, id: &str) -> rusqlite::Result<ChildParent> {
        if let Some(own) = self.own(id)? {
            return Ok(own);
        }
        // The other key's record of the same GUID, fully written (a page another route is still
        // writing is left to it).
        let other: Option<(String, String)> = self
            .tx
            .query_row(
                "SELECT n.account, n.item_id FROM pages mine
                 JOIN pages p ON p.onenote_guid = mine.onenote_guid AND p.account <> mine.account
                 JOIN notion_items n ON n.account = p.account AND n.item_id = p.id
                 WHERE mine.account = ?1 AND mine.id = ?2 AND mine.onenote_guid IS NOT NULL
                   AND n.kind = 'page' AND n.notion_page_id IS NOT NULL AND n.body_state = ?3
                 ORDER BY n.rowid DESC LIMIT 1",
                params![self.key, id, BodyColumn::Done],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()?;
        let Some((account, item)) = other else {
            return Ok(None);
        };
        self.copy(&account, &item, id)?;
        self.found.pages += 1;
        self.own(id).map(Option::flatten)
    }

    /// Adopts a container whose children all have pages under one Notion page that another key
    /// made for an item of the same kind; returns its Notion parent.
    fn container(
        &mut self,
        id: &str,
        kind: &str,
        children: Vec<ChildParent>,
    ) -> rusqlite::Result<ChildParent> {
        if let Some(own) = self.own(id)? {
            return Ok(own);
        }
        let parents: HashSet<&Option<String>> = children.iter().collect();
        let [Some(parent)] = parents.into_iter().collect::<Vec<_>>()[..] else {
            return Ok(None);
        };
        let other: Option<(String, String)> = self
            .tx
            .query_row(
                "SELECT account, item_id FROM notion_items
                 WHERE notion_page_id = ?1 AND kind = ?2 AND account <> ?3",
                params![parent, kind, self.key],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()?;
        let Some((account, item)) = other else {
            return Ok(None);
        };
        self.copy(&account, &item, id)?;
        self.found.containers += 1;
        self.own(id).map(Option::flatten)
    }

    /// Copies the Notion record of `item` of `account` as this key's record of `id`, with what
    /// the page held when it was last written (the same Notion page: a sync of the new key moves
    /// it without taking it for a person's edit). Its pending links stay with the record that
    /// wrote them (its link pass rewrites them).
    fn copy(&self, account: &str, item: &str, id: &str) -> rusqlite::Result<()> {
        // The record just found is copied, or the adoption (one transaction) is undone.
        super::notion_items::one_row(self.tx.execute(
            "INSERT INTO notion_items(account, item_id, kind, parent_notion_id, title,
                 notion_page_id, body_state, onenote_last_modified, blocks, files, report,
                 pending_links, body_shape, links_recorded, fingerprint, body_digest, placed,
                 row_order)
             SELECT ?3, ?4, kind, parent_notion_id, title, notion_page_id, body_state,
                 onenote_last_modified, blocks, files, report, 0, body_shape, 0, fingerprint,
                 body_digest, placed, row_order
             FROM notion_items WHERE account = ?1 AND item_id = ?2",
            params![account, item, self.key, id],
        )?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::inventory::{Page, ScanScope};
    use crate::store::notion_items::{ItemKind, ItemState, Written};

    fn page(id: &str, level: i64, order: i64) -> Page {
        Page {
            id: id.into(),
            title: id.to_uppercase(),
            level,
            order,
            last_modified: Some("2024-01-01T00:00:00.000Z".into()),
            created: None,
            content_url: None,
            author: None,
            web_url: None,
        }
    }

    fn tree(nb: &str, section: &str, pages: &[(&str, i64)]) -> Vec<Notebook> {
        vec![Notebook {
            id: nb.into(),
            name: "NB".into(),
            created: None,
            last_modified: None,
            section_groups: vec![],
            sections: vec![Section {
                id: section.into(),
                name: "S".into(),
                created: None,
                last_modified: None,
                pages: pages
                    .iter()
                    .enumerate()
                    .map(|(i, (id, level))| page(id, *level, i as i64))
                    .collect(),
            }],
        }]
    }

    fn written(db: &Db, t: &RunToken, key: &str, item: &str, kind: &str, parent: &str, id: &str) {
        let kind = [
            ItemKind::Notebook,
            ItemKind::SectionGroup,
            ItemKind::Section,
            ItemKind::Page,
        ]
        .into_iter()
        .find(|k| k.as_str() == kind)
        .expect("a kind of item");
        let writing = db
            .record_intent(t, key, item, kind, parent, item)
            .unwrap()
            .created(db, t, id)
            .unwrap();
        let w = Written {
            blocks: 3,
            files: 1,
            report: Some("[]"),
            onenote_last_modified: Some("2024-01-01T00:00:00.000Z"),
            pending_links: false,
            shape: None,
            links_recorded: true,
            fingerprint: None,
            row_order: None,
            body_digest: None,
        };
        writing.written(db, t, &w).unwrap();
    }

    #[test]
    fn pages_read_both_ways_are_one_page_and_their_section_follows() {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(&dir.path().join("s.db")).unwrap();
        let t = db
            .acquire_run_lock(1, "run", 0, std::time::Duration::from_secs(90), |_| false)
            .unwrap()
            .unwrap();
        // Graph's route migrated notebook 0-NB: section 0-S, pages 0-P1 (subpage 0-P2 under it).
        let api = tree("0-NB", "0-S", &[("0-P1", 0), ("0-P2", 1)]);
        db.save_scan("alice", &api, &ScanScope::All, 1).unwrap();
        db.save_page_guids(
            "alice",
            &[
                ("0-P1".into(), "{g1}".into()),
                ("0-P2".into(), "{g2}".into()),
            ],
        )
        .unwrap();
        written(&db, &t, "alice", "0-NB", "notebook", "target", "n-nb");
        written(&db, &t, "alice", "0-S", "section", "n-nb", "n-s");
        written(&db, &t, "alice", "0-P1", "page", "n-s", "n-p1");
        written(&db, &t, "alice", "0-P2", "page", "n-p1", "n-p2");
        // The same notebook from its files: GUIDs as ids, and one page more.
        let files = tree("nbguid", "sguid", &[("g1", 0), ("g2", 1), ("g3", 0)]);
        db.save_scan("files:1", &files, &ScanScope::All, 2).unwrap();
        db.save_page_guids(
            "files:1",
            &[
                ("g1".into(), "{g1}".into()),
                ("g2".into(), "{g2}".into()),
                ("g3".into(), "{g3}".into()),
            ],
        )
        .unwrap();
        let got = db.adopt_migrated(&t, "files:1", &files).unwrap();
        // g3 is new, so the section's top-level pages do not all sit under one page yet: the
        // section is not adopted (a new section page would hold g3).
        assert_eq!(
            got,
            Adopted {
                pages: 2,
                containers: 0
            }
        );
        let p1 = db.notion_item("files:1", "g1").unwrap().unwrap();
        assert_eq!(p1.page_id(), Some("n-p1"));
        assert!(matches!(p1.state, ItemState::Complete(_)));
        assert!(db.notion_item("files:1", "g3").unwrap().is_none());

        // Without the new page, every child is under n-s: the section and notebook follow.
        let dir2 = tempfile::tempdir().unwrap();
        let db2 = Db::open(&dir2.path().join("s.db")).unwrap();
        let t2 = db2
            .acquire_run_lock(1, "run", 0, std::time::Duration::from_secs(90), |_| false)
            .unwrap()
            .unwrap();
        db2.save_scan("alice", &api, &ScanScope::All, 1).unwrap();
        db2.save_page_guids(
            "alice",
            &[
                ("0-P1".into(), "{g1}".into()),
                ("0-P2".into(), "{g2}".into()),
            ],
        )
        .unwrap();
        written(&db2, &t2, "alice", "0-NB", "notebook", "target", "n-nb");
        written(&db2, &t2, "alice", "0-S", "section", "n-nb", "n-s");
        written(&db2, &t2, "alice", "0-P1", "page", "n-s", "n-p1");
        written(&db2, &t2, "alice", "0-P2", "page", "n-p1", "n-p2");
        let same = tree("nbguid", "sguid", &[("g1", 0), ("g2", 1)]);
        db2.save_scan("files:1", &same, &ScanScope::All, 2).unwrap();
        db2.save_page_guids(
            "files:1",
            &[("g1".into(), "{g1}".into()), ("g2".into(), "{g2}".into())],
        )
        .unwrap();
        let got = db2.adopt_migrated(&t2, "files:1", &same).unwrap();
        assert_eq!(
            got,
            Adopted {
                pages: 2,
                containers: 2
            }
        );
        let s = db2.notion_item("files:1", "sguid").unwrap().unwrap();
        assert_eq!(s.page_id(), Some("n-s"));
        let nb = db2.notion_item("files:1", "nbguid").unwrap().unwrap();
        assert_eq!(nb.page_id(), Some("n-nb"));
        // Again: nothing more to adopt, nothing changed.
        assert_eq!(
            db2.adopt_migrated(&t2, "files:1", &same).unwrap(),
            Adopted::default()
        );
        // And the other way round: Graph's route adopts what the files wrote.
        assert_eq!(
            db2.adopt_migrated(&t2, "alice", &api).unwrap(),
            Adopted::default(),
            "alice's own records are kept"
        );
    }
}
