//! The verification's result: a verdict per item, counts per section and account, and the document
//! `verify --json` prints.

use serde::{Deserialize, Serialize};

/// The verdict on one planned item (a page, or a notebook, section group or section page).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ItemState {
    /// In Notion exactly once, and (for pages) its body is complete.
    Ok,
    /// In Notion, but more than once.
    Duplicated,
    /// In Notion once, but the body is unfinished or the creation was never confirmed.
    Partial,
    /// Planned and done (or never recorded) but not in Notion.
    Missing,
    /// Its job failed permanently.
    Failed,
    /// Not migrated because an ancestor's job failed.
    Blocked,
    /// Its job has not run yet (queued, or in flight).
    Pending,
    /// In the inventory but never planned (not selected, or added after planning): not counted.
    NotPlanned,
}

impl ItemState {
    /// Whether this state satisfies "present exactly once and complete" (unplanned items do).
    pub fn is_good(self) -> bool {
        matches!(self, ItemState::Ok | ItemState::NotPlanned)
    }

    /// The word used in the human report.
    pub fn label(self) -> &'static str {
        match self {
            ItemState::Ok => "ok",
            ItemState::Duplicated => "duplicated",
            ItemState::Partial => "partial",
            ItemState::Missing => "missing",
            ItemState::Failed => "failed",
            ItemState::Blocked => "blocked",
            ItemState::Pending => "pending",
            ItemState::NotPlanned => "not planned",
        }
    }
}

/// One approximation the converter made on a page (as stored with the page).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Approximation {
    /// The source element or feature.
    pub element: String,
    /// How many times.
    pub count: usize,
    /// What was done instead.
    pub action: String,
}

/// What verify found for one planned item.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ItemCheck {
    /// The verdict.
    pub state: ItemState,
    /// The Notion page found (or recorded, when it was not found).
    pub notion_page_id: Option<String>,
    /// Further Notion child pages that are copies of this one.
    pub duplicates: Vec<String>,
    /// Why it is not `ok`, in words.
    pub reason: Option<String>,
}

/// A notebook or section group page.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ContainerReport {
    /// `notebook` or `section_group`.
    pub kind: &'static str,
    /// OneNote id.
    pub id: String,
    /// Names from the notebook down to this item.
    pub path: Vec<String>,
    /// The check.
    #[serde(flatten)]
    pub check: ItemCheck,
}

/// One OneNote page.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PageReport {
    /// OneNote id.
    pub id: String,
    /// OneNote title.
    pub title: String,
    /// Subpage level (0..2).
    pub level: i64,
    /// The check.
    #[serde(flatten)]
    pub check: ItemCheck,
    /// Body blocks recorded when the page was written (any depth).
    pub blocks_recorded: Option<i64>,
    /// Body blocks counted in Notion (a lower bound: counting stops once it reaches the record).
    pub blocks_found: Option<i64>,
    /// What the converter could only approximate on this page.
    pub approximations: Vec<Approximation>,
}

/// Counts of one section (or totals of an account).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Counts {
    /// Pages in the OneNote inventory.
    pub onenote_pages: usize,
    /// Of those, pages that were planned.
    pub planned: usize,
    /// Planned pages found in Notion (once or more).
    pub in_notion: usize,
    /// Planned pages in Notion exactly once and complete.
    pub ok: usize,
    /// Planned pages not in Notion (missing, failed, blocked or pending).
    pub missing: usize,
    /// Extra Notion pages: copies of planned pages.
    pub duplicates: usize,
    /// Child pages notebridge did not create (reported, not counted against the verdict).
    pub foreign: usize,
    /// Planned pages in Notion whose body is incomplete.
    pub partial: usize,
    /// Pages whose job failed permanently.
    pub failed: usize,
    /// Pages waiting on a failed ancestor.
    pub blocked: usize,
    /// Pages whose job has not run yet.
    pub pending: usize,
    /// Pages never planned.
    pub not_planned: usize,
    /// Pages with at least one approximation.
    pub approximated_pages: usize,
}

impl Counts {
    /// Adds `o` to these counts.
    pub fn add(&mut self, o: &Counts) {
        self.onenote_pages += o.onenote_pages;
        self.planned += o.planned;
        self.in_notion += o.in_notion;
        self.ok += o.ok;
        self.missing += o.missing;
        self.duplicates += o.duplicates;
        self.foreign += o.foreign;
        self.partial += o.partial;
        self.failed += o.failed;
        self.blocked += o.blocked;
        self.pending += o.pending;
        self.not_planned += o.not_planned;
        self.approximated_pages += o.approximated_pages;
    }
}

/// A Notion child page notebridge did not create, under one of its pages.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ForeignPage {
    /// The Notion page.
    pub notion_page_id: String,
    /// Its title.
    pub title: String,
    /// Names of the item it sits under.
    pub under: Vec<String>,
}

/// One section.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SectionReport {
    /// OneNote id.
    pub id: String,
    /// Names from the notebook down to the section.
    pub path: Vec<String>,
    /// The section page itself (layout `database`: the section's database).
    pub section_page: ItemCheck,
    /// The section's database, when it is laid out as one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub database: Option<SectionDatabaseReport>,
    /// Counts over its pages.
    pub counts: Counts,
    /// Every page, in OneNote order.
    pub pages: Vec<PageReport>,
    /// Child pages notebridge did not create under the section or its pages.
    pub foreign: Vec<ForeignPage>,
}

/// A section's database (layout `database`) as verify read it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SectionDatabaseReport {
    /// The database, once Notion gave it.
    pub database_id: Option<String>,
    /// Its data source (the rows' parent).
    pub data_source_id: Option<String>,
    /// Rows its data source holds, ours and others (`None`: it could not be queried).
    pub rows_found: Option<usize>,
}

/// One account.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct AccountReport {
    /// The account name.
    pub account: String,
    /// The layout of its plans (`pages`, `database`, or both named when its targets differ).
    pub layout: String,
    /// The Notion pages its plans write under.
    pub targets: Vec<String>,
    /// Whether anything was planned at all.
    pub planned_anything: bool,
    /// Totals over every section.
    pub totals: Counts,
    /// Notebook and section group pages, in OneNote order.
    pub containers: Vec<ContainerReport>,
    /// Every section, in OneNote order.
    pub sections: Vec<SectionReport>,
    /// Child pages notebridge did not create directly under notebook or section group pages.
    pub foreign: Vec<ForeignPage>,
}

impl AccountReport {
    /// Every planned page present exactly once and complete, and every planned container too.
    pub fn complete(&self) -> bool {
        self.containers.iter().all(|c| c.check.state.is_good())
            && self.sections.iter().all(|s| {
                s.section_page.state.is_good() && s.pages.iter().all(|p| p.check.state.is_good())
            })
    }
}

/// The whole report (`verify --json` prints it as one document).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct VerifyReport {
    /// `complete` or `incomplete`.
    pub verdict: &'static str,
    /// Per account.
    pub accounts: Vec<AccountReport>,
    /// Notion requests this verification made.
    pub notion_requests: u64,
}

impl VerifyReport {
    /// Whether every account is complete.
    pub fn complete(&self) -> bool {
        self.accounts.iter().all(AccountReport::complete)
    }
}

pub(super) fn tally(c: &mut Counts, check: &ItemCheck, approximated: bool) {
    let s = check.state;
    if s != ItemState::NotPlanned {
        c.planned += 1;
    }
    if check.notion_page_id.is_some()
        && matches!(
            s,
            ItemState::Ok | ItemState::Duplicated | ItemState::Partial
        )
        || (s == ItemState::Failed && check.notion_page_id.is_some())
    {
        c.in_notion += 1;
    }
    c.duplicates += check.duplicates.len();
    match s {
        ItemState::Ok => c.ok += 1,
        ItemState::Partial => c.partial += 1,
        ItemState::Missing => c.missing += 1,
        ItemState::Failed => c.failed += 1,
        ItemState::Blocked => c.blocked += 1,
        ItemState::Pending => c.pending += 1,
        ItemState::NotPlanned => c.not_planned += 1,
        ItemState::Duplicated => {}
    }
    // Missing counts every planned page that is not in Notion, whatever the cause.
    if matches!(s, ItemState::Blocked | ItemState::Pending)
        || (s == ItemState::Failed && check.notion_page_id.is_none())
    {
        c.missing += 1;
    }
    if approximated {
        c.approximated_pages += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tally_counts_missing_whatever_the_cause() {
        let mut c = Counts::default();
        let ck = |state, id: Option<&str>| ItemCheck {
            state,
            notion_page_id: id.map(str::to_owned),
            duplicates: vec![],
            reason: None,
        };
        tally(&mut c, &ck(ItemState::Ok, Some("x")), true);
        tally(&mut c, &ck(ItemState::Missing, Some("y")), false);
        tally(&mut c, &ck(ItemState::Blocked, None), false);
        tally(&mut c, &ck(ItemState::Failed, None), false);
        tally(&mut c, &ck(ItemState::NotPlanned, None), false);
        assert_eq!(
            (
                c.planned,
                c.in_notion,
                c.ok,
                c.missing,
                c.failed,
                c.not_planned
            ),
            (4, 1, 1, 3, 1, 1)
        );
        assert_eq!(c.approximated_pages, 1);
    }
}
