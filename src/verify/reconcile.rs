//! Reconciling what Notion holds with what was planned: the account's jobs, the inventory flattened
//! to its containers and sections, the child pages matched to the records that expect them, and the
//! verdict on each item.

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};

use crate::notion::writer::display_title;
use crate::store::inventory::{Notebook, Section, SectionGroup};
use crate::store::jobs::{JobRecord, JobState};
use crate::store::layouts::SectionDatabase;
use crate::store::notion_items::NotionItem;
use crate::store::{Db, StoreError};

use super::read::{child_pages, norm, Reader};
use super::report::{ItemCheck, ItemState};

/// One job as verify needs it.
pub(super) type JobRow = JobRecord;

/// The account's jobs and plan targets.
pub(super) fn read_jobs(db: &Db, account: &str) -> Result<(Vec<JobRow>, Vec<String>), StoreError> {
    Ok((db.job_records(account)?, db.plan_targets_in_order(account)?))
}

/// The inventory flattened: containers and sections with their paths and Notion parents.
pub(super) struct Flat<'a> {
    pub(super) containers: Vec<(&'static str, &'a str, Vec<String>)>,
    pub(super) sections: Vec<(&'a Section, Vec<String>)>,
}

pub(super) fn flatten(notebooks: &[Notebook]) -> Flat<'_> {
    pub(super) fn walk<'a>(
        groups: &'a [SectionGroup],
        sections: &'a [Section],
        path: &[String],
        out: &mut Flat<'a>,
    ) {
        // Same order as planning: a container's sections, then its section groups.
        for s in sections {
            let mut p = path.to_vec();
            p.push(s.name.clone());
            out.sections.push((s, p));
        }
        for g in groups {
            let mut p = path.to_vec();
            p.push(g.name.clone());
            out.containers.push(("section_group", &g.id, p.clone()));
            walk(&g.section_groups, &g.sections, &p, out);
        }
    }
    let mut out = Flat {
        containers: Vec::new(),
        sections: Vec::new(),
    };
    for nb in notebooks {
        let path = vec![nb.name.clone()];
        out.containers.push(("notebook", &nb.id, path.clone()));
        walk(&nb.section_groups, &nb.sections, &path, &mut out);
    }
    out
}

/// What the child-page listings say about each record: the page found for it, and its copies.
#[derive(Default)]
pub(super) struct Matches {
    /// item id -> the Notion page adopted for an intent-only record.
    pub(super) adopted: HashMap<String, String>,
    /// item id -> copies.
    pub(super) duplicates: HashMap<String, Vec<String>>,
    /// Notion parent (normalised) -> pages we did not create under it.
    pub(super) foreign: HashMap<String, Vec<(String, String)>>,
}

/// Pairs every Notion child page under our parents with the records that expect to be there.
pub(super) fn match_children(
    reader: &Reader<'_>,
    items: &[NotionItem],
    targets: &HashSet<String>,
    others: &HashSet<String>,
) -> Matches {
    let recorded: HashSet<String> = items.iter().filter_map(|i| i.page_id().map(norm)).collect();
    let mut by_parent: HashMap<String, Vec<&NotionItem>> = HashMap::new();
    let mut parents: Vec<String> = Vec::new();
    for i in items {
        let p = norm(&i.parent_notion_id);
        if !by_parent.contains_key(&p) {
            parents.push(p.clone());
        }
        by_parent.entry(p).or_default().push(i);
    }
    // Our own pages are parents too, even with no records under them (to find foreign pages).
    for id in &recorded {
        if !by_parent.contains_key(id) {
            parents.push(id.clone());
            by_parent.insert(id.clone(), Vec::new());
        }
    }
    let mut m = Matches::default();
    for parent in parents {
        let Some(Ok(listing)) = reader.listings.get(&parent) else {
            continue;
        };
        let expected = &by_parent[&parent];
        // Pages another account of this database created (two accounts may share a target) are
        // theirs, never our duplicates.
        let mut unclaimed: Vec<(String, String)> = child_pages(listing)
            .into_iter()
            .filter(|(id, _)| !recorded.contains(&norm(id)) && !others.contains(&norm(id)))
            .collect();
        // An intent without an id is a creation whose answer was lost: the page with its title is it.
        for item in expected.iter().filter(|i| i.page_id().is_none()) {
            let want = display_title(&item.title);
            if let Some(pos) = unclaimed.iter().position(|(_, t)| *t == want) {
                let (id, _) = unclaimed.remove(pos);
                m.adopted.insert(item.item_id.clone(), id);
            }
        }
        for (id, title) in unclaimed {
            match expected.iter().find(|i| display_title(&i.title) == title) {
                Some(item) => m
                    .duplicates
                    .entry(item.item_id.clone())
                    .or_default()
                    .push(id),
                // Under the target the user's own pages live alongside ours.
                None if targets.contains(&parent) => {}
                None => m
                    .foreign
                    .entry(parent.clone())
                    .or_default()
                    .push((id, title)),
            }
        }
    }
    m
}

pub(super) struct Ctx<'a> {
    pub(super) reader: &'a Reader<'a>,
    pub(super) items: HashMap<&'a str, &'a NotionItem>,
    pub(super) jobs: HashMap<&'a str, &'a JobRow>,
    pub(super) jobs_by_id: HashMap<i64, &'a JobRow>,
    pub(super) names: HashMap<&'a str, String>,
    pub(super) matches: Matches,
    /// Sections laid out as databases (layout `database`), by section id.
    pub(super) databases: HashMap<&'a str, &'a SectionDatabase>,
    /// Every database some section holds (normalised): another one of a section's title is a copy.
    pub(super) claimed: HashSet<String>,
    /// Notion pages reached from a target through found pages only (items are located top-down):
    /// a page under a missing (trashed) parent is not really there, whatever its own listing says.
    pub(super) reachable: RefCell<HashSet<String>>,
}

impl Ctx<'_> {
    /// The nearest failed ancestor job of `job`, as a reason.
    pub(super) fn failed_ancestor(&self, job: &JobRow) -> Option<String> {
        let mut cur = job.parent_job.and_then(|p| self.jobs_by_id.get(&p));
        while let Some(j) = cur {
            if j.state == JobState::Failed {
                let name = self
                    .names
                    .get(j.item_id.as_str())
                    .cloned()
                    .unwrap_or_default();
                return Some(format!(
                    "{} {name:?} failed: {}",
                    j.kind.as_str().replace('_', " "),
                    j.last_error.as_deref().unwrap_or("no error recorded")
                ));
            }
            cur = j.parent_job.and_then(|p| self.jobs_by_id.get(&p));
        }
        None
    }

    /// Where a page item is, and why not when it is not: whether its parent's listing shows it.
    fn page_presence(
        &self,
        item_id: &str,
        rec: Option<&NotionItem>,
    ) -> (Option<String>, Option<String>) {
        match rec {
            None => (None, Some("no Notion page was recorded for it".into())),
            Some(r) if !self.reachable.borrow().contains(&norm(&r.parent_notion_id)) => (
                None,
                Some(format!(
                    "its parent Notion page {} is missing",
                    r.parent_notion_id
                )),
            ),
            Some(r) => match self.reader.listing(&r.parent_notion_id) {
                Some(Err(e)) => (
                    None,
                    Some(format!("its Notion parent could not be read: {e}")),
                ),
                None => (None, Some("its Notion parent was not listed".into())),
                Some(Ok(listing)) => match r.page_id() {
                    Some(id) => {
                        let here = child_pages(listing)
                            .iter()
                            .any(|(c, _)| norm(c) == norm(id));
                        if here {
                            (Some(id.to_owned()), None)
                        } else {
                            (
                                None,
                                Some(format!(
                                    "Notion page {id} is not (or no longer) under its parent"
                                )),
                            )
                        }
                    }
                    None => match self.matches.adopted.get(item_id) {
                        Some(id) => (Some(id.clone()), None),
                        None => (None, Some("its creation was never confirmed".into())),
                    },
                },
            },
        }
    }

    /// Where a section's database is (the recorded one, or for an intent whose answer was lost
    /// the one of its title that no section holds), why not, and the other databases of its
    /// title in the same page that no section holds (copies).
    fn database_presence(
        &self,
        d: &SectionDatabase,
    ) -> ((Option<String>, Option<String>), Vec<String>) {
        if !self.reachable.borrow().contains(&norm(&d.parent_page_id)) {
            let why = format!("its parent Notion page {} is missing", d.parent_page_id);
            return ((None, Some(why)), Vec::new());
        }
        let listing = match self.reader.listing(&d.parent_page_id) {
            Some(Ok(l)) => l,
            Some(Err(e)) => {
                let why = format!("its Notion parent could not be read: {e}");
                return ((None, Some(why)), Vec::new());
            }
            None => {
                return (
                    (None, Some("its Notion parent was not listed".into())),
                    Vec::new(),
                )
            }
        };
        let live = || listing.iter().filter(|b| b.is_database() && !b.trashed);
        let mut copies: Vec<String> = live()
            .filter(|b| b.title.as_deref() == Some(d.title.as_str()))
            .filter(|b| !self.claimed.contains(&norm(&b.id)))
            .map(|b| b.id.clone())
            .collect();
        let presence = match &d.created {
            Some((id, _)) => {
                if live().any(|b| norm(&b.id) == norm(id)) {
                    (Some(id.clone()), None)
                } else {
                    let why =
                        format!("Notion database {id} is not (or no longer) in its parent page");
                    (None, Some(why))
                }
            }
            None if copies.is_empty() => (None, Some("its creation was never confirmed".into())),
            // The creation whose answer was lost made the first; a resumed run adopts it.
            None => (Some(copies.remove(0)), None),
        };
        (presence, copies)
    }

    /// Presence of one item: its check without the body, and the Notion page (or, for a section
    /// laid out as a database, the database) found.
    pub(super) fn locate(&self, item_id: &str) -> (ItemCheck, Option<&NotionItem>) {
        let job = self.jobs.get(item_id);
        let rec = self.items.get(item_id).copied();
        let database = self.databases.get(item_id).copied();
        let (presence, dups) = match database {
            Some(d) => self.database_presence(d),
            None => (
                self.page_presence(item_id, rec),
                self.matches
                    .duplicates
                    .get(item_id)
                    .cloned()
                    .unwrap_or_default(),
            ),
        };
        let check = |state, id: Option<String>, reason: Option<String>| ItemCheck {
            state,
            notion_page_id: id,
            duplicates: dups.clone(),
            reason,
        };
        let Some(job) = job else {
            return (check(ItemState::NotPlanned, None, None), rec);
        };
        let (found, why_not) = presence;
        let recorded = match database {
            Some(d) => d.created.as_ref().map(|(id, _)| id.clone()),
            None => rec.and_then(|r| r.page_id().map(str::to_owned)),
        };
        let unconfirmed = match database {
            Some(d) => d.created.is_none(),
            None => rec.is_some_and(|r| r.page_id().is_none()),
        };
        if let Some(id) = &found {
            self.reachable.borrow_mut().insert(norm(id));
            // A database's rows sit under its data source.
            if let Some((_, ds)) = database.and_then(|d| d.created.as_ref()) {
                self.reachable.borrow_mut().insert(norm(ds));
            }
        }
        let state = match job.state {
            JobState::Failed => {
                let err = job.last_error.as_deref().unwrap_or("no error recorded");
                return (check(ItemState::Failed, found, Some(err.to_owned())), rec);
            }
            _ if found.is_none() => {
                if let Some(why) = self.failed_ancestor(job) {
                    return (check(ItemState::Blocked, None, Some(why)), rec);
                }
                if job.state != JobState::Done {
                    let why = format!(
                        "its job is {} (run `notebridge migrate --resume`)",
                        job.state
                    );
                    return (check(ItemState::Pending, None, Some(why)), rec);
                }
                return (check(ItemState::Missing, recorded, why_not), rec);
            }
            _ if unconfirmed => {
                return (
                    check(
                        ItemState::Partial,
                        found,
                        Some(
                            "created in Notion but never confirmed (`migrate --resume` adopts it)"
                                .into(),
                        ),
                    ),
                    rec,
                );
            }
            _ if !dups.is_empty() => ItemState::Duplicated,
            _ => ItemState::Ok,
        };
        let reason = (state == ItemState::Duplicated).then(|| match database {
            Some(_) => format!("{} more Notion database(s) with its title", dups.len()),
            None => format!("{} more Notion page(s) with its title", dups.len()),
        });
        (check(state, found, reason), rec)
    }
}
