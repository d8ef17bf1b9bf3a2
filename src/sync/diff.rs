//! What changed between OneNote (the inventory, as the last scan left it) and what notebridge last
//! placed in Notion (the records), as steps: pure, so every rule is tested without a service.
//!
//! Where an item belongs is the planner's rule (`store::jobs::planner`): a section or section
//! group under its notebook's or group's page, a page under its section (its page, or its
//! database's data source in layout `database`), a subpage under the nearest page before it with
//! a lower level. Notion lists a parent's child pages in the order they were put there, and a page
//! can only be put after its siblings, so an order is mirrored by moving, in OneNote's order, every
//! page after the longest start of OneNote's order that Notion already has in that order.

use std::collections::{HashMap, HashSet};

use crate::notion::client::MoveTo;
use crate::store::inventory::{Notebook, Section, SectionGroup};
use crate::store::notion_items::ItemKind;
use crate::store::sync::{Change, Placed, PlacedDatabase};

/// What one inventory key holds on both sides.
#[derive(Clone, Copy, Debug)]
pub struct Sides<'a> {
    /// The live inventory, in OneNote's order.
    pub notebooks: &'a [Notebook],
    /// Its complete, live pages in Notion.
    pub placed: &'a [Placed],
    /// Its created, live section databases.
    pub databases: &'a [PlacedDatabase],
    /// Sections whose content could not be read this time (their pages are not deleted).
    pub unreadable: &'a HashSet<String>,
    /// The section each page was last seen in.
    pub page_sections: &'a HashMap<String, String>,
    /// The pages notebridge writes under: never retitled, moved or trashed.
    pub targets: &'a HashSet<String>,
}

/// One item's page to retitle and/or move (one check before both).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Update {
    /// The OneNote id.
    pub item: String,
    /// What it is.
    pub kind: ItemKind,
    /// Its Notion page.
    pub page_id: String,
    /// Its new title.
    pub title: Option<String>,
    /// Its new parent (or its own, to go after its siblings).
    pub to: Option<MoveTo>,
    /// To go after its siblings under the parent it already has, it goes through this page
    /// first (Notion refuses a move to the page's own parent): its parent's parent.
    pub stage: Option<String>,
    /// It is a row after the step: the row's values to write.
    pub row: Option<RowValues>,
    /// A row going with its section's database to the database made where the section moved
    /// (counted with the database, not as a move of its own).
    pub with_database: bool,
    /// What OneNote did, named in a conflict.
    pub change: Change,
}

/// A row's values that follow OneNote's page.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RowValues {
    /// `Order`.
    pub order: i64,
    /// `Level`.
    pub level: i64,
    /// Every property is written (the row arrives in a data source now: Notion keeps only its
    /// title there), not only the changed ones.
    pub whole: bool,
}

/// A section's database whose section OneNote moved to another notebook or section group:
/// Notion's API cannot move a database, so one is made in the new place and its rows moved there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DatabaseMove {
    /// The section.
    pub section: String,
    /// The section's name (the new database's title).
    pub title: String,
    /// Its database now.
    pub database_id: String,
    /// Its data source now (the new schema copies its tags).
    pub data_source_id: String,
    /// The page the new database goes in.
    pub to: String,
}

/// A section database to retitle.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DatabaseRetitle {
    /// The section.
    pub section: String,
    /// The database.
    pub database_id: String,
    /// Its new title.
    pub title: String,
}

/// Something deleted in OneNote, with everything of ours under it in Notion that went with it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Deleted {
    /// The top item (its Notion parent was not deleted).
    pub top: Gone,
    /// The deleted items under it, parents before children.
    pub under: Vec<Gone>,
    /// A section's database (layout `database`): trashed as a whole with its rows (`under`).
    pub database: Option<String>,
}

/// One deleted item's page.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Gone {
    /// The OneNote id.
    pub item: String,
    /// What it was.
    pub kind: ItemKind,
    /// Its Notion page (a section's database: the database).
    pub page_id: String,
    /// Its Notion parent.
    pub parent: String,
}

/// What changed in one key's structure.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Changes {
    /// Pages to retitle or move, parents before children.
    pub updates: Vec<Update>,
    /// Section databases to retitle.
    pub database_retitles: Vec<DatabaseRetitle>,
    /// Section databases to make again where OneNote moved their sections.
    pub database_moves: Vec<DatabaseMove>,
    /// Deleted items, each with what went with it.
    pub deleted: Vec<Deleted>,
}

impl Changes {
    /// Nothing to do.
    pub fn is_empty(&self) -> bool {
        self.updates.is_empty()
            && self.database_retitles.is_empty()
            && self.database_moves.is_empty()
            && self.deleted.is_empty()
    }
}

/// Where one live item belongs.
#[derive(Clone, Debug)]
struct Expected {
    item: String,
    kind: ItemKind,
    /// The item it goes under (`None`: a notebook, which stays where it is).
    parent: Option<String>,
    title: String,
    /// A page's level and OneNote order.
    level: i64,
    order: i64,
    /// A page's section (its level-0 parent in layout `database` is the section's data source).
    section: Option<String>,
}

/// Every live item in the planner's order, with where it goes.
fn expected(notebooks: &[Notebook]) -> Vec<Expected> {
    let mut out = Vec::new();
    for nb in notebooks {
        out.push(Expected {
            item: nb.id.clone(),
            kind: ItemKind::Notebook,
            parent: None,
            title: nb.name.clone(),
            level: 0,
            order: 0,
            section: None,
        });
        children(&mut out, &nb.id, &nb.section_groups, &nb.sections);
    }
    out
}

/// The planner's walk, without recursion: sections then groups of each container.
fn children(out: &mut Vec<Expected>, parent: &str, groups: &[SectionGroup], sections: &[Section]) {
    let mut stack: Vec<(&str, &[SectionGroup], &[Section])> = vec![(parent, groups, sections)];
    while let Some((parent, groups, sections)) = stack.pop() {
        for s in sections {
            out.push(Expected {
                item: s.id.clone(),
                kind: ItemKind::Section,
                parent: Some(parent.to_owned()),
                title: s.name.clone(),
                level: 0,
                order: 0,
                section: None,
            });
            let mut levels: Vec<(i64, &str)> = Vec::new();
            for p in &s.pages {
                while levels.last().is_some_and(|(l, _)| *l >= p.level) {
                    levels.pop();
                }
                out.push(Expected {
                    item: p.id.clone(),
                    kind: ItemKind::Page,
                    parent: Some(levels.last().map_or(s.id.as_str(), |(_, id)| id).to_owned()),
                    title: p.title.clone(),
                    level: p.level,
                    order: p.order,
                    section: Some(s.id.clone()),
                });
                levels.push((p.level, &p.id));
            }
        }
        for g in groups {
            out.push(Expected {
                item: g.id.clone(),
                kind: ItemKind::SectionGroup,
                parent: Some(parent.to_owned()),
                title: g.name.clone(),
                level: 0,
                order: 0,
                section: None,
            });
        }
        // Groups' contents after every sibling of theirs, first group first.
        for g in groups.iter().rev() {
            stack.push((&g.id, &g.section_groups, &g.sections));
        }
    }
}

/// The Notion side, indexed.
struct Index<'a> {
    pages: HashMap<&'a str, &'a Placed>,
    databases: HashMap<&'a str, &'a PlacedDatabase>,
    /// Every section's data source, old ones (of a database made again elsewhere) included.
    data_sources: HashSet<&'a str>,
    /// The data sources of databases made again elsewhere, to the new ones their rows go to.
    old_sources: HashMap<&'a str, &'a str>,
}

impl<'a> Index<'a> {
    fn of(s: &Sides<'a>) -> Self {
        let databases: HashMap<&str, &PlacedDatabase> = s
            .databases
            .iter()
            .map(|d| (d.section_id.as_str(), d))
            .collect();
        Index {
            pages: s.placed.iter().map(|p| (p.item_id.as_str(), p)).collect(),
            data_sources: s
                .databases
                .iter()
                .map(|d| d.data_source_id.as_str())
                .chain(
                    s.databases
                        .iter()
                        .filter_map(|d| d.old.as_ref())
                        .map(|o| o.1.as_str()),
                )
                .collect(),
            old_sources: s
                .databases
                .iter()
                .filter_map(|d| Some((d.old.as_ref()?.1.as_str(), d.data_source_id.as_str())))
                .collect(),
            databases,
        }
    }

    /// Where `e` goes in Notion now, when its parent is there (`None`: a notebook, or a parent
    /// not created yet).
    fn destination(&self, e: &Expected) -> Option<MoveTo> {
        let parent = e.parent.as_deref()?;
        if e.kind == ItemKind::Page && e.section.as_deref() == Some(parent) {
            if let Some(d) = self.databases.get(parent) {
                return Some(MoveTo::DataSource(d.data_source_id.clone()));
            }
        }
        self.pages
            .get(parent)
            .map(|p| MoveTo::Page(p.page_id.clone()))
    }
}

/// The retitles, moves and deletions of one key (order is [`reorders`]'s, once these are done).
pub fn changes(s: &Sides<'_>) -> Changes {
    let idx = Index::of(s);
    let mut out = Changes::default();
    let live = expected(s.notebooks);
    let live_ids: HashSet<&str> = live.iter().map(|e| e.item.as_str()).collect();
    for e in &live {
        if e.kind == ItemKind::Section {
            if let Some(d) = idx.databases.get(e.item.as_str()) {
                if d.title != e.title {
                    out.database_retitles.push(DatabaseRetitle {
                        section: e.item.clone(),
                        database_id: d.database_id.clone(),
                        title: e.title.clone(),
                    });
                }
                let parent = e.parent.as_deref().and_then(|p| idx.pages.get(p));
                // One move at a time: a database made again elsewhere waits until its old one
                // is gone before it follows its section again.
                if let Some(p) = parent.filter(|p| p.page_id != d.parent_page_id) {
                    if d.old.is_none() {
                        out.database_moves.push(DatabaseMove {
                            section: e.item.clone(),
                            title: e.title.clone(),
                            database_id: d.database_id.clone(),
                            data_source_id: d.data_source_id.clone(),
                            to: d.move_parent.clone().unwrap_or_else(|| p.page_id.clone()),
                        });
                    }
                }
                continue;
            }
        }
        let Some(placed) = idx.pages.get(e.item.as_str()) else {
            continue;
        };
        if placed.conflict || s.targets.contains(&placed.page_id) {
            continue;
        }
        let title = (placed.title != e.title).then(|| e.title.clone());
        let to = idx
            .destination(e)
            .filter(|d| d.id() != placed.parent.as_str());
        let row_now = idx.data_sources.contains(placed.parent.as_str());
        let row_after = match &to {
            Some(MoveTo::DataSource(_)) => true,
            Some(MoveTo::Page(_)) => false,
            None => row_now,
        };
        let row = if row_after {
            // A move into a data source keeps only the title (and one cut short still owes the
            // rest): every property is written again.
            let whole =
                matches!(to, Some(MoveTo::DataSource(_))) || (row_now && placed.row_owed.is_some());
            let order_changed = placed.row_order.is_some_and(|o| o != e.order);
            (whole || order_changed || title.is_some()).then_some(RowValues {
                order: e.order,
                level: e.level,
                whole,
            })
        } else {
            None
        };
        if title.is_none() && to.is_none() && row.is_none() {
            continue;
        }
        let change = if to.is_some() || (title.is_none() && row.is_some()) {
            Change::Moved
        } else {
            Change::Renamed
        };
        let with_database = matches!(&to, Some(MoveTo::DataSource(ds))
            if idx.old_sources.get(placed.parent.as_str()) == Some(&ds.as_str()));
        out.updates.push(Update {
            item: e.item.clone(),
            kind: placed.kind,
            page_id: placed.page_id.clone(),
            title,
            to,
            stage: None,
            row,
            with_database,
            change,
        });
    }
    out.deleted = deleted(s, &live_ids);
    out
}

/// The deleted items grouped under the top one of each deleted subtree.
fn deleted(s: &Sides<'_>, live: &HashSet<&str>) -> Vec<Deleted> {
    let gone: Vec<&Placed> = s
        .placed
        .iter()
        .filter(|p| {
            !live.contains(p.item_id.as_str()) && !p.conflict && !s.targets.contains(&p.page_id)
        })
        .filter(|p| {
            // A page of a section that could not be read is unknown, not deleted.
            p.kind != ItemKind::Page
                || !s
                    .page_sections
                    .get(&p.item_id)
                    .is_some_and(|sec| s.unreadable.contains(sec))
        })
        .collect();
    let dead_dbs: Vec<&PlacedDatabase> = s
        .databases
        .iter()
        .filter(|d| !live.contains(d.section_id.as_str()) && !s.unreadable.contains(&d.section_id))
        .collect();
    // Notion parent -> deleted children (a database's rows by its data source).
    let mut kids: HashMap<&str, Vec<&Placed>> = HashMap::new();
    for g in &gone {
        kids.entry(g.parent.as_str()).or_default().push(g);
    }
    let gone_pages: HashSet<&str> = gone.iter().map(|g| g.page_id.as_str()).collect();
    let db_sources: HashSet<&str> = dead_dbs.iter().map(|d| d.data_source_id.as_str()).collect();
    let gone_of = |p: &Placed| Gone {
        item: p.item_id.clone(),
        kind: p.kind,
        page_id: p.page_id.clone(),
        parent: p.parent.clone(),
    };
    // Everything deleted under `root`, parents first, without recursion.
    let under = |root: &str| {
        let mut out = Vec::new();
        let mut queue = std::collections::VecDeque::from([root.to_owned()]);
        while let Some(parent) = queue.pop_front() {
            for k in kids.get(parent.as_str()).into_iter().flatten() {
                out.push(gone_of(k));
                queue.push_back(k.page_id.clone());
            }
        }
        out
    };
    let mut out = Vec::new();
    for d in &dead_dbs {
        // The database sits in its parent's page: a deleted parent takes it along.
        if gone_pages.contains(d.parent_page_id.as_str()) {
            continue;
        }
        out.push(Deleted {
            top: Gone {
                item: d.section_id.clone(),
                kind: ItemKind::Section,
                page_id: d.database_id.clone(),
                parent: d.parent_page_id.clone(),
            },
            under: under(&d.data_source_id),
            database: Some(d.database_id.clone()),
        });
    }
    for g in &gone {
        if gone_pages.contains(g.parent.as_str()) || db_sources.contains(g.parent.as_str()) {
            continue;
        }
        out.push(Deleted {
            top: gone_of(g),
            under: under(&g.page_id),
            database: None,
        });
    }
    // Databases inside deleted pages go with them.
    for unit in &mut out {
        let inside: Vec<&PlacedDatabase> = dead_dbs
            .iter()
            .copied()
            .filter(|d| {
                d.parent_page_id == unit.top.page_id
                    || unit.under.iter().any(|u| u.page_id == d.parent_page_id)
            })
            .collect();
        for d in inside {
            unit.under.push(Gone {
                item: d.section_id.clone(),
                kind: ItemKind::Section,
                page_id: d.database_id.clone(),
                parent: d.parent_page_id.clone(),
            });
            unit.under.extend(under(&d.data_source_id));
        }
    }
    out
}

/// The pages to put after their siblings, in this order, so that every parent lists its
/// children of ours in OneNote's order (module doc). Only pages already under the parent OneNote
/// gives them take part; rows are ordered by their `Order` property instead. A parent whose own
/// parent is not one of notebridge's pages (the target, under which notebooks stay in the order
/// they were made) is left as it is.
pub fn reorders(s: &Sides<'_>) -> Vec<Update> {
    let idx = Index::of(s);
    let live = expected(s.notebooks);
    // Parent page -> its children of ours in OneNote's order.
    let mut wanted: Vec<(String, Vec<&Placed>)> = Vec::new();
    let mut at: HashMap<String, usize> = HashMap::new();
    for e in &live {
        let Some(MoveTo::Page(parent)) = idx.destination(e) else {
            continue;
        };
        let Some(placed) = idx.pages.get(e.item.as_str()) else {
            continue;
        };
        if placed.parent != parent || placed.conflict || s.targets.contains(&placed.page_id) {
            continue;
        }
        let i = *at.entry(parent.clone()).or_insert_with(|| {
            wanted.push((parent.clone(), Vec::new()));
            wanted.len() - 1
        });
        wanted[i].1.push(placed);
    }
    // A parent's own parent, where its children go for a moment on their way to its end.
    let stage_of = |parent: &str| {
        s.placed
            .iter()
            .find(|p| p.page_id == parent)
            .map(|p| p.parent.clone())
            .filter(|g| !idx.data_sources.contains(g.as_str()))
    };
    let mut out = Vec::new();
    for (parent, want) in wanted {
        let Some(stage) = stage_of(&parent) else {
            continue;
        };
        let mut now = want.clone();
        now.sort_by_key(|p| p.placed);
        // The longest start of OneNote's order that Notion's order holds, in order.
        let mut k = 0;
        for p in &now {
            if k < want.len() && want[k].item_id == p.item_id {
                k += 1;
            }
        }
        for p in &want[k..] {
            out.push(Update {
                item: p.item_id.clone(),
                kind: p.kind,
                page_id: p.page_id.clone(),
                title: None,
                to: Some(MoveTo::Page(parent.clone())),
                stage: Some(stage.clone()),
                row: None,
                with_database: false,
                change: Change::Moved,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::inventory::Page;

    fn page(id: &str, title: &str, level: i64, order: i64) -> Page {
        Page {
            id: id.into(),
            title: title.into(),
            level,
            order,
            last_modified: None,
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

    fn notebook(sections: Vec<Section>) -> Notebook {
        Notebook {
            id: "nb".into(),
            name: "Notebook".into(),
            created: None,
            last_modified: None,
            section_groups: Vec::new(),
            sections,
        }
    }

    fn placed(item: &str, kind: ItemKind, parent: &str, title: &str, at: i64) -> Placed {
        Placed {
            item_id: item.into(),
            kind,
            page_id: format!("n-{item}"),
            parent: parent.into(),
            title: title.into(),
            placed: at,
            checked: false,
            row_order: None,
            fingerprint: None,
            conflict: false,
            row_owed: None,
        }
    }

    /// The Notion side of notebook `nb` with sections `s1` and `s2` as first migrated.
    fn first(pages: &[(&str, &str, &str)]) -> Vec<Placed> {
        let mut out = vec![
            placed("nb", ItemKind::Notebook, "target", "Notebook", 1),
            placed("s1", ItemKind::Section, "n-nb", "One", 2),
            placed("s2", ItemKind::Section, "n-nb", "Two", 3),
        ];
        for (i, (id, parent, title)) in pages.iter().enumerate() {
            out.push(placed(id, ItemKind::Page, parent, title, 10 + i as i64));
        }
        out
    }

    struct World {
        notebooks: Vec<Notebook>,
        placed: Vec<Placed>,
        databases: Vec<PlacedDatabase>,
        unreadable: HashSet<String>,
        sections: HashMap<String, String>,
        targets: HashSet<String>,
    }

    impl World {
        fn new(notebooks: Vec<Notebook>, placed: Vec<Placed>) -> World {
            World {
                notebooks,
                placed,
                databases: Vec::new(),
                unreadable: HashSet::new(),
                sections: HashMap::new(),
                targets: HashSet::from(["target".to_owned()]),
            }
        }

        fn sides(&self) -> Sides<'_> {
            Sides {
                notebooks: &self.notebooks,
                placed: &self.placed,
                databases: &self.databases,
                unreadable: &self.unreadable,
                page_sections: &self.sections,
                targets: &self.targets,
            }
        }
    }

    fn as_migrated() -> (Vec<Section>, Vec<Placed>) {
        let sections = vec![
            section(
                "s1",
                "One",
                vec![
                    page("a", "A", 0, 0),
                    page("b", "B", 1, 1),
                    page("c", "C", 0, 2),
                ],
            ),
            section("s2", "Two", vec![page("d", "D", 0, 0)]),
        ];
        let placed = first(&[
            ("a", "n-s1", "A"),
            ("b", "n-a", "B"),
            ("c", "n-s1", "C"),
            ("d", "n-s2", "D"),
        ]);
        (sections, placed)
    }

    #[test]
    fn nothing_changed_is_nothing_to_do() {
        let (sections, placed) = as_migrated();
        let w = World::new(vec![notebook(sections)], placed);
        assert!(changes(&w.sides()).is_empty());
        assert!(reorders(&w.sides()).is_empty());
    }

    #[test]
    fn a_rename_a_move_to_another_section_and_a_subpage_made_a_page_are_steps() {
        let (mut sections, placed) = as_migrated();
        sections[0].name = "One (renamed)".into();
        // C goes to section two; B is no longer a subpage of A.
        let c = sections[0].pages.remove(2);
        sections[1].pages.push(Page { order: 1, ..c });
        sections[0].pages[1].level = 0;
        let w = World::new(vec![notebook(sections)], placed);
        let ch = changes(&w.sides());
        let by: HashMap<&str, &Update> = ch.updates.iter().map(|u| (u.item.as_str(), u)).collect();
        assert_eq!(by["s1"].title.as_deref(), Some("One (renamed)"));
        assert_eq!(by["s1"].to, None);
        assert_eq!(by["s1"].change, Change::Renamed);
        assert_eq!(by["c"].to, Some(MoveTo::Page("n-s2".into())));
        assert_eq!(by["b"].to, Some(MoveTo::Page("n-s1".into())));
        assert_eq!(by["b"].change, Change::Moved);
        assert_eq!(ch.updates.len(), 3);
        assert!(ch.deleted.is_empty());
    }

    #[test]
    fn order_is_mirrored_by_moving_what_follows_the_longest_start_notion_has() {
        let (mut sections, placed) = as_migrated();
        // C before A (B stays under A).
        sections[0].pages = vec![
            page("c", "C", 0, 0),
            page("a", "A", 0, 1),
            page("b", "B", 1, 2),
        ];
        let w = World::new(vec![notebook(sections)], placed);
        assert!(changes(&w.sides()).updates.is_empty());
        let r = reorders(&w.sides());
        // Notion has A, C: C is first in OneNote's order, so A goes after it.
        let moved: Vec<&str> = r.iter().map(|u| u.item.as_str()).collect();
        assert_eq!(moved, ["a"]);
        assert_eq!(r[0].to, Some(MoveTo::Page("n-s1".into())));
        // Through the section's notebook page: Notion refuses a move to the parent a page has.
        assert_eq!(r[0].stage.as_deref(), Some("n-nb"));
        // Once A is placed after C, the order holds.
        let mut placed = w.placed.clone();
        placed.iter_mut().find(|p| p.item_id == "a").unwrap().placed = 100;
        let w = World { placed, ..w };
        assert!(reorders(&w.sides()).is_empty());
    }

    #[test]
    fn a_deleted_section_goes_whole_and_a_page_of_an_unreadable_section_is_not_deleted() {
        let (mut sections, placed) = as_migrated();
        sections.remove(1);
        sections[0].pages.remove(2);
        let mut w = World::new(vec![notebook(sections)], placed);
        w.sections = HashMap::from([("c".to_owned(), "s1".to_owned())]);
        let ch = changes(&w.sides());
        let tops: Vec<(&str, Vec<&str>)> = ch
            .deleted
            .iter()
            .map(|d| {
                (
                    d.top.item.as_str(),
                    d.under.iter().map(|g| g.item.as_str()).collect(),
                )
            })
            .collect();
        assert_eq!(tops, [("s2", vec!["d"]), ("c", vec![])]);
        w.unreadable.insert("s1".into());
        let ch = changes(&w.sides());
        assert_eq!(ch.deleted.len(), 1, "{:?}", ch.deleted);
        assert_eq!(ch.deleted[0].top.item, "s2");
    }

    #[test]
    fn conflicts_and_the_target_are_never_touched() {
        let (mut sections, mut placed) = as_migrated();
        sections[0].pages[0].title = "A (renamed)".into();
        sections.remove(1);
        placed
            .iter_mut()
            .find(|p| p.item_id == "a")
            .unwrap()
            .conflict = true;
        placed
            .iter_mut()
            .find(|p| p.item_id == "d")
            .unwrap()
            .conflict = true;
        let w = World::new(vec![notebook(sections)], placed);
        let ch = changes(&w.sides());
        assert!(ch.updates.is_empty(), "{:?}", ch.updates);
        // The edited page stays, so nothing goes with its deleted section: the pass finds the
        // page among the section's children and keeps the section for it.
        let tops: Vec<&str> = ch.deleted.iter().map(|d| d.top.item.as_str()).collect();
        assert_eq!(tops, ["s2"]);
        assert!(ch.deleted[0].under.is_empty());
    }

    #[test]
    fn in_layout_database_a_page_moves_between_data_sources_and_its_order_is_a_property() {
        let (mut sections, mut placed) = as_migrated();
        placed.retain(|p| p.kind != ItemKind::Section);
        for p in &mut placed {
            p.parent = match p.parent.as_str() {
                "n-s1" => "ds1".into(),
                "n-s2" => "ds2".into(),
                other => other.into(),
            };
            p.row_order = Some(match p.item_id.as_str() {
                "a" | "d" => 0,
                "b" => 1,
                _ => 2,
            });
        }
        let c = sections[0].pages.remove(2);
        sections[1].pages.insert(0, Page { order: 0, ..c });
        sections[1].pages[1].order = 1;
        let mut w = World::new(vec![notebook(sections)], placed);
        w.databases = vec![
            PlacedDatabase {
                section_id: "s1".into(),
                parent_page_id: "n-nb".into(),
                title: "One".into(),
                database_id: "db1".into(),
                data_source_id: "ds1".into(),
                move_parent: None,
                old: None,
            },
            PlacedDatabase {
                section_id: "s2".into(),
                parent_page_id: "n-nb".into(),
                title: "Two (old)".into(),
                database_id: "db2".into(),
                data_source_id: "ds2".into(),
                move_parent: None,
                old: None,
            },
        ];
        let ch = changes(&w.sides());
        assert_eq!(ch.database_retitles.len(), 1);
        assert_eq!(ch.database_retitles[0].title, "Two");
        let by: HashMap<&str, &Update> = ch.updates.iter().map(|u| (u.item.as_str(), u)).collect();
        assert_eq!(by["c"].to, Some(MoveTo::DataSource("ds2".into())));
        assert_eq!(
            by["c"].row,
            Some(RowValues {
                order: 0,
                level: 0,
                whole: true
            })
        );
        // D's Order follows it (0 -> 1) without a move.
        assert_eq!(by["d"].to, None);
        assert_eq!(by["d"].row.as_ref().map(|r| r.order), Some(1));
        // Rows are not reordered by moves.
        assert!(reorders(&w.sides()).is_empty());
    }

    #[test]
    fn a_section_database_follows_its_section_by_a_new_database_and_its_rows_follow_it() {
        let (mut sections, _) = as_migrated();
        // s1 moves into the group g; its rows are in ds1 under the notebook's page.
        let s1 = sections.remove(0);
        let mut nb = notebook(sections);
        nb.section_groups.push(SectionGroup {
            id: "g".into(),
            name: "Group".into(),
            created: None,
            last_modified: None,
            section_groups: Vec::new(),
            sections: vec![s1],
        });
        let mut placed = vec![
            placed("nb", ItemKind::Notebook, "target", "Notebook", 1),
            placed("g", ItemKind::SectionGroup, "n-nb", "Group", 2),
            placed("s2", ItemKind::Section, "n-nb", "Two", 3),
            placed("a", ItemKind::Page, "ds1", "A", 4),
            placed("b", ItemKind::Page, "n-a", "B", 5),
            placed("c", ItemKind::Page, "ds1", "C", 6),
            placed("d", ItemKind::Page, "n-s2", "D", 7),
        ];
        for p in &mut placed {
            p.row_order = Some(if p.item_id == "c" { 2 } else { 0 });
        }
        let mut w = World::new(vec![nb], placed);
        let db1 = PlacedDatabase {
            section_id: "s1".into(),
            parent_page_id: "n-nb".into(),
            title: "One".into(),
            database_id: "db1".into(),
            data_source_id: "ds1".into(),
            move_parent: None,
            old: None,
        };
        w.databases = vec![db1.clone()];
        let ch = changes(&w.sides());
        assert_eq!(
            ch.database_moves,
            [DatabaseMove {
                section: "s1".into(),
                title: "One".into(),
                database_id: "db1".into(),
                data_source_id: "ds1".into(),
                to: "n-g".into(),
            }]
        );
        assert!(ch.updates.is_empty(), "its rows wait for the new database");
        // Made again in the group: the rows go with it, every property written there.
        w.databases = vec![PlacedDatabase {
            parent_page_id: "n-g".into(),
            database_id: "db9".into(),
            data_source_id: "ds9".into(),
            old: Some(("db1".into(), "ds1".into())),
            ..db1
        }];
        let ch = changes(&w.sides());
        assert!(ch.database_moves.is_empty(), "{:?}", ch.database_moves);
        let moved: Vec<(&str, bool)> = ch
            .updates
            .iter()
            .map(|u| (u.item.as_str(), u.with_database))
            .collect();
        assert_eq!(moved, [("a", true), ("c", true)]);
        assert!(ch
            .updates
            .iter()
            .all(|u| u.to == Some(MoveTo::DataSource("ds9".into()))
                && u.row.as_ref().is_some_and(|r| r.whole)));
        // The subpage stays under its row's page.
        assert!(!ch.updates.iter().any(|u| u.item == "b"));
    }
}
