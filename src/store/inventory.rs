//! The OneNote inventory: what a scan found, stored so that planning, `status` and `verify` work
//! offline, and updated in place on a re-scan (items are recognised by id, so renamed, moved and
//! deleted items are told apart from new ones).

use std::collections::HashSet;

use rusqlite::{params, Transaction};
use serde::{Deserialize, Serialize};

use super::{Db, Result};
use crate::clock::UnixMillis;

/// A notebook with everything in it, in OneNote's order. Serialises to the `scan --json` shape.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Notebook {
    /// Graph id.
    pub id: String,
    /// `displayName`.
    pub name: String,
    /// `createdDateTime`.
    #[serde(skip)]
    pub created: Option<String>,
    /// `lastModifiedDateTime`.
    #[serde(skip)]
    pub last_modified: Option<String>,
    /// Section groups directly in the notebook.
    pub section_groups: Vec<SectionGroup>,
    /// Sections directly in the notebook.
    pub sections: Vec<Section>,
}

impl Notebook {
    /// Every section with its place in the notebook (the section-group names from the notebook
    /// down, then its own name), in the order planning takes them: a container's own sections,
    /// then its section groups. Walked with an explicit stack: the nesting comes from the service.
    pub fn sections_by_path(&self) -> Vec<(Vec<String>, &Section)> {
        let mut out = Vec::new();
        let mut stack: Vec<(Vec<String>, &[SectionGroup], &[Section])> =
            vec![(Vec::new(), &self.section_groups, &self.sections)];
        while let Some((trail, groups, sections)) = stack.pop() {
            for s in sections {
                let mut path = trail.clone();
                path.push(s.name.clone());
                out.push((path, s));
            }
            for g in groups.iter().rev() {
                let mut t = trail.clone();
                t.push(g.name.clone());
                stack.push((t, &g.section_groups, &g.sections));
            }
        }
        out
    }
}

/// A section group (nests to any depth).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SectionGroup {
    /// Graph id.
    pub id: String,
    /// `displayName`.
    pub name: String,
    /// `createdDateTime`.
    #[serde(skip)]
    pub created: Option<String>,
    /// `lastModifiedDateTime`.
    #[serde(skip)]
    pub last_modified: Option<String>,
    /// Nested section groups.
    pub section_groups: Vec<SectionGroup>,
    /// Sections in this group.
    pub sections: Vec<Section>,
}

/// A section and its pages.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Section {
    /// Graph id.
    pub id: String,
    /// `displayName`.
    pub name: String,
    /// `createdDateTime`.
    #[serde(skip)]
    pub created: Option<String>,
    /// `lastModifiedDateTime`.
    #[serde(skip)]
    pub last_modified: Option<String>,
    /// Pages sorted by `order`.
    pub pages: Vec<Page>,
}

/// One page's metadata.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Page {
    /// Graph id.
    pub id: String,
    /// Page title (may be empty; Notion gets `Untitled`).
    pub title: String,
    /// Indent level 0..2 (subpages).
    pub level: i64,
    /// Position in the section.
    pub order: i64,
    /// `lastModifiedDateTime`.
    pub last_modified: Option<String>,
    /// `createdDateTime`.
    #[serde(skip)]
    pub created: Option<String>,
    /// `contentUrl`.
    #[serde(skip)]
    pub content_url: Option<String>,
    /// Who wrote it, where the source says (a section file does; Graph's page resource does not).
    /// Not part of `scan --json`'s document: a row's `Author` shows it.
    #[serde(skip)]
    pub author: Option<String>,
    /// The page in OneNote on the web (Graph's `links.oneNoteWebUrl`; a local file has none).
    /// Not part of `scan --json`'s document: a row's `OneNote link` shows it.
    #[serde(skip)]
    pub web_url: Option<String>,
}

/// Which part of an account's inventory a scan covered: items outside it are left alone.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ScanScope {
    /// Every notebook of the account: notebooks not found are deleted.
    All,
    /// Only these notebook ids: deletions are detected inside them only.
    Notebooks(Vec<String>),
}

/// What a re-scan changed, by kind of item.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ScanDiff {
    /// Items not in the inventory before.
    pub new: usize,
    /// Items whose name/title changed.
    pub renamed: usize,
    /// Items whose parent changed.
    pub moved: usize,
    /// Items that were there before and are gone now.
    pub deleted: usize,
}

/// Totals of a tree, as in the `scan --json` document.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Totals {
    /// Notebooks.
    pub notebooks: usize,
    /// Section groups at any depth.
    pub section_groups: usize,
    /// Sections.
    pub sections: usize,
    /// Pages.
    pub pages: usize,
}

/// Counts everything in `notebooks`.
pub fn totals(notebooks: &[Notebook]) -> Totals {
    fn walk(groups: &[SectionGroup], sections: &[Section], t: &mut Totals) {
        t.section_groups += groups.len();
        t.sections += sections.len();
        t.pages += sections.iter().map(|s| s.pages.len()).sum::<usize>();
        for g in groups {
            walk(&g.section_groups, &g.sections, t);
        }
    }
    let mut t = Totals {
        notebooks: notebooks.len(),
        ..Totals::default()
    };
    for n in notebooks {
        walk(&n.section_groups, &n.sections, &mut t);
    }
    t
}

/// Where an item sits, to detect renames and moves.
struct Prior {
    name: String,
    parent: Option<String>,
}

impl Db {
    /// Stores a scan of `account` in one transaction and reports what changed since the last one.
    pub fn save_scan(
        &self,
        account: &str,
        notebooks: &[Notebook],
        scope: &ScanScope,
        now: UnixMillis,
    ) -> Result<ScanDiff> {
        self.write("storing the scan", |tx| {
            let mut diff = ScanDiff::default();
            let mut seen: HashSet<(&'static str, String)> = HashSet::new();
            for (pos, nb) in notebooks.iter().enumerate() {
                upsert(
                    tx,
                    "notebooks",
                    account,
                    &nb.id,
                    &nb.name,
                    None,
                    pos,
                    &nb.created,
                    &nb.last_modified,
                    &mut diff,
                    ItemExtra::None,
                )?;
                seen.insert(("notebooks", nb.id.clone()));
                save_children(
                    tx,
                    account,
                    &nb.id,
                    None,
                    &nb.section_groups,
                    &nb.sections,
                    &mut diff,
                    &mut seen,
                )?;
            }
            // Everything in scope that was not seen now is gone.
            let in_scope = |nb: &str| match scope {
                ScanScope::All => true,
                ScanScope::Notebooks(ids) => ids.iter().any(|i| i == nb),
            };
            for table in ["notebooks", "section_groups", "sections", "pages"] {
                let notebook_of = match table {
                    "notebooks" => "id",
                    "pages" => "(SELECT s.notebook_id FROM sections s WHERE s.account = t.account AND s.id = t.section_id)",
                    _ => "notebook_id",
                };
                let mut st = tx.prepare(&format!(
                    "SELECT id, {notebook_of} FROM {table} t WHERE account = ?1 AND deleted_at IS NULL"
                ))?;
                let live: Vec<(String, Option<String>)> = st
                    .query_map([account], |r| Ok((r.get(0)?, r.get(1)?)))?
                    .collect::<rusqlite::Result<_>>()?;
                for (id, nb) in live {
                    let nb = nb.unwrap_or_default();
                    if in_scope(&nb) && !seen.contains(&(table, id.clone())) {
                        tx.execute(
                            &format!("UPDATE {table} SET deleted_at = ?3 WHERE account = ?1 AND id = ?2"),
                            params![account, id, now],
                        )?;
                        diff.deleted += 1;
                    }
                }
            }
            Ok(diff)
        })
    }

    /// Records the GUIDs `onenote:` links use for pages (from a scan).
    pub fn save_page_guids(&self, account: &str, guids: &[(String, String)]) -> Result<()> {
        self.write("storing page GUIDs", |tx| {
            let mut st =
                tx.prepare("UPDATE pages SET onenote_guid = ?3 WHERE account = ?1 AND id = ?2")?;
            for (id, guid) in guids {
                st.execute(params![account, id, guid])?;
            }
            Ok(())
        })
    }

    /// The name (title for pages) of an inventory item and whether a re-scan found it deleted.
    pub fn item_name(&self, account: &str, kind: &str, id: &str) -> Result<Option<(String, bool)>> {
        let (table, col) = match kind {
            "notebook" => ("notebooks", "name"),
            "section_group" => ("section_groups", "name"),
            "section" => ("sections", "name"),
            _ => ("pages", "title"),
        };
        self.read("reading an inventory item", |c| {
            c.query_row(
                &format!("SELECT {col}, deleted_at IS NOT NULL FROM {table} WHERE account = ?1 AND id = ?2"),
                params![account, id],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .map(Some)
            .or_else(|e| match e {
                rusqlite::Error::QueryReturnedNoRows => Ok(None),
                e => Err(e),
            })
        })
    }

    /// A page's `lastModifiedDateTime` from the inventory.
    pub fn page_last_modified(&self, account: &str, id: &str) -> Result<Option<String>> {
        self.read("reading a page", |c| {
            c.query_row(
                "SELECT last_modified FROM pages WHERE account = ?1 AND id = ?2",
                params![account, id],
                |r| r.get(0),
            )
            .or_else(|e| match e {
                rusqlite::Error::QueryReturnedNoRows => Ok(None),
                e => Err(e),
            })
        })
    }

    /// The live (not deleted) inventory of `account`, in OneNote's order.
    pub fn inventory(&self, account: &str) -> Result<Vec<Notebook>> {
        self.read("reading the inventory", |c| {
            let mut nbs = Vec::new();
            let mut st = c.prepare(
                "SELECT id, name, created, last_modified FROM notebooks
                 WHERE account = ?1 AND deleted_at IS NULL ORDER BY position",
            )?;
            let rows: Vec<(String, String, Option<String>, Option<String>)> = st
                .query_map([account], |r| {
                    Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
                })?
                .collect::<rusqlite::Result<_>>()?;
            for (id, name, created, last_modified) in rows {
                let (section_groups, sections) = load_children(c, account, &id, None)?;
                nbs.push(Notebook {
                    id,
                    name,
                    created,
                    last_modified,
                    section_groups,
                    sections,
                });
            }
            Ok(nbs)
        })
    }
}

enum ItemExtra<'a> {
    None,
    Group { notebook: &'a str },
    Section { notebook: &'a str },
    Page(&'a Page),
}

#[allow(clippy::too_many_arguments)]
fn save_children(
    tx: &Transaction<'_>,
    account: &str,
    notebook: &str,
    parent_group: Option<&str>,
    groups: &[SectionGroup],
    sections: &[Section],
    diff: &mut ScanDiff,
    seen: &mut HashSet<(&'static str, String)>,
) -> rusqlite::Result<()> {
    let parent = parent_group.unwrap_or(notebook);
    for (pos, g) in groups.iter().enumerate() {
        upsert(
            tx,
            "section_groups",
            account,
            &g.id,
            &g.name,
            Some(parent),
            pos,
            &g.created,
            &g.last_modified,
            diff,
            ItemExtra::Group { notebook },
        )?;
        seen.insert(("section_groups", g.id.clone()));
        save_children(
            tx,
            account,
            notebook,
            Some(&g.id),
            &g.section_groups,
            &g.sections,
            diff,
            seen,
        )?;
    }
    for (pos, s) in sections.iter().enumerate() {
        upsert(
            tx,
            "sections",
            account,
            &s.id,
            &s.name,
            Some(parent),
            pos,
            &s.created,
            &s.last_modified,
            diff,
            ItemExtra::Section { notebook },
        )?;
        seen.insert(("sections", s.id.clone()));
        for p in &s.pages {
            upsert(
                tx,
                "pages",
                account,
                &p.id,
                &p.title,
                Some(&s.id),
                p.order as usize,
                &p.created,
                &p.last_modified,
                diff,
                ItemExtra::Page(p),
            )?;
            seen.insert(("pages", p.id.clone()));
        }
    }
    Ok(())
}

/// Inserts or updates one item, counting it as new, renamed and/or moved.
#[allow(clippy::too_many_arguments)]
fn upsert(
    tx: &Transaction<'_>,
    table: &str,
    account: &str,
    id: &str,
    name: &str,
    parent: Option<&str>,
    position: usize,
    created: &Option<String>,
    last_modified: &Option<String>,
    diff: &mut ScanDiff,
    extra: ItemExtra<'_>,
) -> rusqlite::Result<()> {
    let (name_col, parent_expr) = match table {
        "notebooks" => ("name", "NULL"),
        "pages" => ("title", "section_id"),
        _ => ("name", "COALESCE(parent_group_id, notebook_id)"),
    };
    let prior: Option<Prior> = tx
        .query_row(
            &format!(
                "SELECT {name_col}, {parent_expr} FROM {table}
                 WHERE account = ?1 AND id = ?2 AND deleted_at IS NULL"
            ),
            params![account, id],
            |r| {
                Ok(Prior {
                    name: r.get(0)?,
                    parent: r.get(1)?,
                })
            },
        )
        .map(Some)
        .or_else(|e| match e {
            rusqlite::Error::QueryReturnedNoRows => Ok(None),
            e => Err(e),
        })?;
    match &prior {
        None => diff.new += 1,
        Some(p) => {
            if p.name != name {
                diff.renamed += 1;
            }
            if table != "notebooks" && p.parent.as_deref() != parent {
                diff.moved += 1;
            }
        }
    }
    match extra {
        ItemExtra::None => {
            tx.execute(
                "INSERT INTO notebooks(account, id, name, position, created, last_modified, deleted_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, NULL)
                 ON CONFLICT(account, id) DO UPDATE SET name = excluded.name, position = excluded.position,
                   created = excluded.created, last_modified = excluded.last_modified,
                   deleted_at = NULL",
                params![account, id, name, position as i64, created, last_modified],
            )?;
        }
        ItemExtra::Group { notebook } | ItemExtra::Section { notebook } => {
            let parent_group = parent.filter(|p| *p != notebook);
            tx.execute(
                &format!(
                    "INSERT INTO {table}(account, id, notebook_id, parent_group_id, name, position, created,
                                         last_modified, deleted_at)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, NULL)
                     ON CONFLICT(account, id) DO UPDATE SET notebook_id = excluded.notebook_id,
                       parent_group_id = excluded.parent_group_id, name = excluded.name,
                       position = excluded.position, created = excluded.created,
                       last_modified = excluded.last_modified, deleted_at = NULL"
                ),
                params![
                    account,
                    id,
                    notebook,
                    parent_group,
                    name,
                    position as i64,
                    created,
                    last_modified
                ],
            )?;
        }
        ItemExtra::Page(p) => {
            tx.execute(
                "INSERT INTO pages(account, id, section_id, title, level, \"order\", created, last_modified,
                                   content_url, author, web_url, deleted_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, NULL)
                 ON CONFLICT(account, id) DO UPDATE SET section_id = excluded.section_id,
                   title = excluded.title, level = excluded.level, \"order\" = excluded.\"order\",
                   created = excluded.created, last_modified = excluded.last_modified,
                   content_url = excluded.content_url, author = excluded.author,
                   web_url = excluded.web_url, deleted_at = NULL",
                params![
                    account,
                    id,
                    parent,
                    name,
                    p.level,
                    p.order,
                    created,
                    last_modified,
                    p.content_url,
                    p.author,
                    p.web_url
                ],
            )?;
        }
    }
    Ok(())
}

type Children = (Vec<SectionGroup>, Vec<Section>);

fn load_children(
    c: &rusqlite::Connection,
    account: &str,
    notebook: &str,
    group: Option<&str>,
) -> rusqlite::Result<Children> {
    let mut groups = Vec::new();
    let rows: Vec<(String, String, Option<String>, Option<String>)> = c
        .prepare(
            "SELECT id, name, created, last_modified FROM section_groups
             WHERE account = ?1 AND notebook_id = ?2 AND parent_group_id IS ?3 AND deleted_at IS NULL
             ORDER BY position",
        )?
        .query_map(params![account, notebook, group], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
        })?
        .collect::<rusqlite::Result<_>>()?;
    for (id, name, created, last_modified) in rows {
        let (section_groups, sections) = load_children(c, account, notebook, Some(&id))?;
        groups.push(SectionGroup {
            id,
            name,
            created,
            last_modified,
            section_groups,
            sections,
        });
    }
    let mut sections = Vec::new();
    let rows: Vec<(String, String, Option<String>, Option<String>)> = c
        .prepare(
            "SELECT id, name, created, last_modified FROM sections
             WHERE account = ?1 AND notebook_id = ?2 AND parent_group_id IS ?3 AND deleted_at IS NULL
             ORDER BY position",
        )?
        .query_map(params![account, notebook, group], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
        })?
        .collect::<rusqlite::Result<_>>()?;
    for (id, name, created, last_modified) in rows {
        let pages = c
            .prepare(
                "SELECT id, title, level, \"order\", created, last_modified, content_url, author,
                        web_url FROM pages
                 WHERE account = ?1 AND section_id = ?2 AND deleted_at IS NULL ORDER BY \"order\"",
            )?
            .query_map(params![account, id], |r| {
                Ok(Page {
                    id: r.get(0)?,
                    title: r.get(1)?,
                    level: r.get(2)?,
                    order: r.get(3)?,
                    created: r.get(4)?,
                    last_modified: r.get(5)?,
                    content_url: r.get(6)?,
                    author: r.get(7)?,
                    web_url: r.get(8)?,
                })
            })?
            .collect::<rusqlite::Result<_>>()?;
        sections.push(Section {
            id,
            name,
            created,
            last_modified,
            pages,
        });
    }
    Ok((groups, sections))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(id: &str, title: &str, order: i64) -> Page {
        Page {
            id: id.into(),
            title: title.into(),
            level: 0,
            order,
            last_modified: Some("2024-01-01T00:00:00Z".into()),
            created: None,
            content_url: None,
            author: None,
            web_url: None,
        }
    }

    fn section(id: &str, name: &str, pages: Vec<Page>) -> Section {
        Section {
            id: id.into(),
            name: name.into(),
            created: None,
            last_modified: None,
            pages,
        }
    }

    fn tree() -> Vec<Notebook> {
        vec![Notebook {
            id: "nb1".into(),
            name: "Work".into(),
            created: None,
            last_modified: None,
            section_groups: vec![SectionGroup {
                id: "g1".into(),
                name: "Projects".into(),
                created: None,
                last_modified: None,
                section_groups: vec![SectionGroup {
                    id: "g2".into(),
                    name: "Deep".into(),
                    created: None,
                    last_modified: None,
                    section_groups: vec![],
                    sections: vec![section("s2", "Inner", vec![page("p3", "Deep page", 0)])],
                }],
                sections: vec![],
            }],
            sections: vec![section(
                "s1",
                "Notes",
                vec![page("p1", "First", 0), page("p2", "", 1)],
            )],
        }]
    }

    #[test]
    fn scan_round_trips_in_order() {
        let t = tempfile::tempdir().unwrap();
        let db = Db::open(&t.path().join("s.db")).unwrap();
        let d = db.save_scan("alice", &tree(), &ScanScope::All, 1).unwrap();
        assert_eq!(d.new, 8);
        assert_eq!(db.inventory("alice").unwrap(), tree());
        assert_eq!(
            totals(&tree()),
            Totals {
                notebooks: 1,
                section_groups: 2,
                sections: 2,
                pages: 3
            }
        );
        assert!(db.inventory("bob").unwrap().is_empty());
    }

    #[test]
    fn rescan_detects_renames_moves_and_deletions() {
        let t = tempfile::tempdir().unwrap();
        let db = Db::open(&t.path().join("s.db")).unwrap();
        db.save_scan("alice", &tree(), &ScanScope::All, 1).unwrap();
        let mut next = tree();
        next[0].sections[0].pages[0].title = "First (renamed)".into();
        // move p2 from s1 to s2
        let p2 = next[0].sections[0].pages.remove(1);
        next[0].section_groups[0].section_groups[0].sections[0]
            .pages
            .push(Page { order: 1, ..p2 });
        // delete the deep page
        next[0].section_groups[0].section_groups[0].sections[0]
            .pages
            .remove(0);
        let d = db.save_scan("alice", &next, &ScanScope::All, 2).unwrap();
        assert_eq!(
            d,
            ScanDiff {
                new: 0,
                renamed: 1,
                moved: 1,
                deleted: 1
            }
        );
        let mut expected = next.clone();
        expected[0].section_groups[0].section_groups[0].sections[0].pages[0].order = 1;
        assert_eq!(db.inventory("alice").unwrap(), expected);
        // a deleted page that reappears is live again
        let d = db.save_scan("alice", &tree(), &ScanScope::All, 3).unwrap();
        assert_eq!(d.new, 1);
    }

    #[test]
    fn scoped_scan_leaves_other_notebooks_alone() {
        let t = tempfile::tempdir().unwrap();
        let db = Db::open(&t.path().join("s.db")).unwrap();
        let mut two = tree();
        two.push(Notebook {
            id: "nb2".into(),
            name: "Home".into(),
            created: None,
            last_modified: None,
            section_groups: vec![],
            sections: vec![],
        });
        db.save_scan("alice", &two, &ScanScope::All, 1).unwrap();
        let only_second = vec![two[1].clone()];
        let d = db
            .save_scan(
                "alice",
                &only_second,
                &ScanScope::Notebooks(vec!["nb2".into()]),
                2,
            )
            .unwrap();
        assert_eq!(d.deleted, 0);
        assert_eq!(db.inventory("alice").unwrap().len(), 2);
        let d = db
            .save_scan("alice", &only_second, &ScanScope::All, 3)
            .unwrap();
        assert_eq!(d.deleted, 1 + 2 + 2 + 3);
    }

    #[test]
    fn scan_json_has_the_contract_shape() {
        let v = serde_json::to_value(&tree()[0]).unwrap();
        let keys: Vec<_> = v.as_object().unwrap().keys().cloned().collect();
        assert_eq!(keys, vec!["id", "name", "section_groups", "sections"]);
        let p = &v["sections"][0]["pages"][0];
        let keys: Vec<_> = p.as_object().unwrap().keys().cloned().collect();
        assert_eq!(keys, vec!["id", "title", "level", "order", "last_modified"]);
    }
}
