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
use crate::store::layouts::Layout;
use crate::store::notion_items::ItemKind;
use crate::store::sync::{Change, Placed, PlacedDatabase};

/// What one inventory key holds on both sides.
#[derive(Clone, Copy, Debug)]
pub struct Sides<'a> {
    /// How its target is laid out.
    pub layout: Layout,
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
    /// It is a row after the step: the row's values to write.
    pub row: Option<RowValues>,
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
    /// Every property is written (the page becomes a row now), not only the changed ones.
    pub whole: bool,
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
    /// Sections laid out as databases that OneNote moved: Notion's API cannot move a database.
    pub unmovable: Vec<String>,
    /// Deleted items, each with what went with it.
    pub deleted: Vec<Deleted>,
}

impl Changes {
    /// Nothing to do.
    pub fn is_empty(&self) -> bool {
        self.updates.is_empty() && self.database_retitles.is_empty() && self.deleted.is_empty()
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
    data_sources: HashSet<&'a str>,
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
                if parent.is_some_and(|p| p.page_id != d.parent_page_id) {
                    out.unmovable.push(e.item.clone());
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
            let whole = !row_now;
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
        out.updates.push(Update {
            item: e.item.clone(),
            kind: placed.kind,
            page_id: placed.page_id.clone(),
            title,
            to,
            row,
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
/// gives them take part; rows are ordered by their `Order` property instead.
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
    let mut out = Vec::new();
    for (parent, want) in wanted {
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
                row: None,
                change: Change::Moved,
            });
        }
    }
    out
}
