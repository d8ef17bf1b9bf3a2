//! The migration report: what a person who ran the migration, or who must sign it off, wants on one
//! page. Gathered from the state database only (no network): per section, pages in OneNote and in
//! Notion (from the last `verify` when there is one, otherwise from what the run recorded), failed
//! items with reasons, approximations by kind, files carried over and placeholders, pages done over
//! time and Graph requests per hour against the account's budget. [`html`] renders it as one
//! self-contained file.

pub mod html;

use std::collections::{BTreeMap, HashMap, HashSet};

use serde::Deserialize;

use crate::clock::UnixMillis;
use crate::notion::rate::PaceView;
use crate::settings::Window;
use crate::store::history::HourCount;
use crate::store::inventory::{Notebook, Section};
use crate::store::ways::{SectionWay, Way};
use crate::store::{Db, StoreError};

/// Where the Notion column of a report comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NotionSource {
    /// Read back from Notion by `verify` at this time.
    Verified(UnixMillis),
    /// What the migration recorded as it wrote (not read back).
    Recorded,
}

/// One section's line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SectionRow {
    /// Notebook, section groups, section.
    pub path: Vec<String>,
    /// Pages in OneNote (the last scan).
    pub onenote: u64,
    /// Pages in Notion.
    pub in_notion: u64,
    /// Pages complete (body written and, when verified, checked).
    pub complete: u64,
    /// Pages failed permanently.
    pub failed: u64,
    /// How its pages were read (`--via`): `files`, `api`, or why it went through the API instead
    /// of its file; `None` when no way was planned (an import, or a plan older than `--via`).
    pub way: Option<String>,
}

/// One kind of approximation over the account's pages.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApproximationRow {
    /// The source element or feature.
    pub element: String,
    /// What was done instead.
    pub action: String,
    /// Occurrences.
    pub count: u64,
    /// Pages it occurred on.
    pub pages: u64,
}

/// A permanently failed item.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FailureRow {
    /// Notebook, section group, section or page.
    pub kind: String,
    /// Its name, when known.
    pub name: String,
    /// The last error.
    pub reason: String,
}

/// One account's part of the report.
#[derive(Clone, Debug)]
pub struct AccountSection {
    /// Account name (or a group's or site's inventory key).
    pub account: String,
    /// How the report names it: the account, or the account and its group or site.
    pub title: String,
    /// Who it is.
    pub user_principal_name: String,
    /// How its plans are laid out in Notion (`pages`, `database`, or both named).
    pub layout: String,
    /// Where the Notion counts come from.
    pub source: NotionSource,
    /// Per section, in OneNote order.
    pub sections: Vec<SectionRow>,
    /// Failed items.
    pub failures: Vec<FailureRow>,
    /// Pages edited in Notion and left as they are, their OneNote version kept beside them.
    pub conflicts: Vec<crate::store::notion_items::Conflict>,
    /// Pages deleted and created again in Notion because nothing told their move.
    pub recreated: Vec<crate::store::moves::Recreated>,
    /// Approximations by kind, most frequent first.
    pub approximations: Vec<ApproximationRow>,
    /// Files uploaded to Notion.
    pub files: u64,
    /// Resources that became visible placeholders.
    pub placeholders: u64,
    /// When each page was finished, oldest first.
    pub pages_done: Vec<UnixMillis>,
    /// Graph requests per hour.
    pub requests_per_hour: Vec<HourCount>,
    /// The requests one hour allows the account (from its windows), when any window bounds it.
    pub hourly_budget: Option<u64>,
    /// What the last read of an import's files found that is no item (a folder its table of
    /// contents names that is not there): not a failure.
    pub notes: Vec<String>,
}

/// The whole report.
#[derive(Clone, Debug)]
pub struct MigrationReport {
    /// When it was made.
    pub generated_at: UnixMillis,
    /// Per account.
    pub accounts: Vec<AccountSection>,
    /// Notion's pace per integration token when the report was made (what `status` shows).
    pub notion_pace: Vec<PaceView>,
}

/// The part of a stored `verify` document the report reads (its other fields are ignored).
#[derive(Deserialize)]
struct StoredVerify {
    sections: Vec<StoredSection>,
}

#[derive(Deserialize)]
struct StoredSection {
    path: Vec<String>,
    counts: StoredCounts,
}

#[derive(Deserialize)]
struct StoredCounts {
    onenote_pages: u64,
    in_notion: u64,
    ok: u64,
    failed: u64,
}

/// The approximation entries stored with a page.
#[derive(Deserialize)]
struct StoredApproximation {
    element: String,
    count: u64,
    action: String,
}

/// A section's way as the report's table shows it.
fn way_text(w: &SectionWay) -> String {
    match (&w.fell_back, w.way, w.pages_by_api) {
        (Some(why), _, _) => format!("OneNote API instead of its file: {why}"),
        (None, Way::Files, 0) => "its file".to_owned(),
        (None, Way::Files, n) => format!("its file ({n} pages not in it: OneNote API)"),
        (None, Way::Api, _) => format!("OneNote API ({})", w.reason),
    }
}

/// The requests one hour allows under `windows`: the tightest window scaled to an hour.
pub fn hourly_budget(windows: &[Window]) -> Option<u64> {
    windows
        .iter()
        .filter(|w| !w.length.is_zero())
        .map(|w| {
            let secs = w.length.as_secs_f64();
            // A window of an hour or longer allows at most its whole count within one hour.
            if secs >= 3600.0 {
                u64::from(w.count)
            } else {
                (f64::from(w.count) * 3600.0 / secs).floor() as u64
            }
        })
        .min()
}

/// Gathers the report of `accounts` from `db`.
pub fn gather(
    db: &Db,
    accounts: &[String],
    user_windows: &[Window],
    now: UnixMillis,
) -> Result<MigrationReport, StoreError> {
    let mut out = Vec::new();
    for name in accounts {
        out.push(account_section(db, name, user_windows)?);
    }
    Ok(MigrationReport {
        generated_at: now,
        accounts: out,
        notion_pace: Vec::new(),
    })
}

fn account_section(
    db: &Db,
    account: &str,
    user_windows: &[Window],
) -> Result<AccountSection, StoreError> {
    let acct = db.account(account)?;
    let (upn, user_id) = acct
        .map(|a| (a.user_principal_name, a.user_id))
        .unwrap_or_default();
    let inventory = db.inventory(account)?;
    let items: HashMap<String, _> = db
        .notion_items(account)?
        .into_iter()
        .map(|i| (i.item_id.clone(), i))
        .collect();
    let failed_jobs = db.failed_jobs(account)?;
    let failed_ids: HashSet<&str> = failed_jobs.iter().map(|f| f.item_id.as_str()).collect();

    let ways: HashMap<String, SectionWay> = db
        .section_ways_of(crate::graph::sources::account_of_key(account))?
        .into_iter()
        .filter(|w| w.way.key == account)
        .map(|w| (w.way.section_id.clone(), w.way))
        .collect();
    let mut sections = Vec::new();
    for (path, section) in sections_in_order(&inventory) {
        let mut row = SectionRow {
            path,
            onenote: section.pages.len() as u64,
            in_notion: 0,
            complete: 0,
            failed: 0,
            way: ways.get(&section.id).map(way_text),
        };
        for p in &section.pages {
            if let Some(i) = items.get(&p.id) {
                row.in_notion += u64::from(i.page_id().is_some());
                row.complete += u64::from(i.state.is_complete());
            }
            row.failed += u64::from(failed_ids.contains(p.id.as_str()));
        }
        sections.push(row);
    }

    let mut source = NotionSource::Recorded;
    if let Some((at, json)) = db.last_verify_report(account)? {
        if let Ok(v) = serde_json::from_str::<StoredVerify>(&json) {
            let by_path: HashMap<Vec<String>, StoredCounts> =
                v.sections.into_iter().map(|s| (s.path, s.counts)).collect();
            for row in &mut sections {
                if let Some(c) = by_path.get(&row.path) {
                    row.onenote = c.onenote_pages;
                    row.in_notion = c.in_notion;
                    row.complete = c.ok;
                    row.failed = c.failed;
                }
            }
            source = NotionSource::Verified(at);
        }
    }

    let mut approx: BTreeMap<(String, String), (u64, u64)> = BTreeMap::new();
    let (mut files, mut placeholders) = (0u64, 0u64);
    for item in items.values() {
        files += item.files.max(0) as u64;
        let Some(report) = &item.report else { continue };
        let Ok(entries) = serde_json::from_str::<Vec<StoredApproximation>>(report) else {
            continue;
        };
        for e in entries {
            if e.action.contains("placeholder") {
                placeholders += e.count;
            }
            let slot = approx.entry((e.element, e.action)).or_default();
            slot.0 += e.count;
            slot.1 += 1;
        }
    }
    let mut approximations: Vec<ApproximationRow> = approx
        .into_iter()
        .map(|((element, action), (count, pages))| ApproximationRow {
            element,
            action,
            count,
            pages,
        })
        .collect();
    approximations.sort_by(|a, b| b.pages.cmp(&a.pages).then(b.count.cmp(&a.count)));

    let failures = failed_jobs
        .into_iter()
        .map(|f| FailureRow {
            kind: f.kind.as_str().replace('_', " "),
            name: f.name.unwrap_or(f.item_id),
            reason: f.error,
        })
        .collect();

    Ok(AccountSection {
        account: account.to_owned(),
        title: db.key_title(account)?,
        user_principal_name: upn,
        layout: crate::store::layouts::layouts_label(&db.account_layouts(account)?),
        source,
        sections,
        failures,
        conflicts: db.conflicts(&[account.to_owned()])?,
        recreated: db.recreated_pages(&[account.to_owned()])?,
        approximations,
        files,
        placeholders,
        pages_done: db.page_completions(account)?,
        requests_per_hour: if user_id.is_empty() {
            Vec::new()
        } else {
            db.graph_requests_per_hour(&user_id)?
        },
        hourly_budget: hourly_budget(user_windows),
        notes: db.import_notes(account)?,
    })
}

/// Every section with its path from its notebook's name down, in the order the migration plans
/// them.
fn sections_in_order(notebooks: &[Notebook]) -> Vec<(Vec<String>, &Section)> {
    notebooks
        .iter()
        .flat_map(|nb| {
            nb.sections_by_path().into_iter().map(|(path, s)| {
                let mut p = Vec::with_capacity(path.len() + 1);
                p.push(nb.name.clone());
                p.extend(path);
                (p, s)
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::inventory::SectionGroup;
    use std::time::Duration;

    #[test]
    fn the_hourly_budget_is_the_tightest_window_scaled_to_an_hour() {
        let w = |count, secs| Window {
            count,
            length: Duration::from_secs(secs),
        };
        assert_eq!(hourly_budget(&[w(120, 60), w(400, 3600)]), Some(400));
        assert_eq!(hourly_budget(&[w(10, 60)]), Some(600));
        assert_eq!(hourly_budget(&[w(1000, 86_400)]), Some(1000));
        assert_eq!(hourly_budget(&[]), None);
    }

    #[test]
    fn sections_come_in_the_migration_order() {
        let sec = |n: &str| Section {
            id: n.into(),
            name: n.into(),
            created: None,
            last_modified: None,
            pages: vec![],
        };
        let nb = Notebook {
            id: "nb".into(),
            name: "NB".into(),
            created: None,
            last_modified: None,
            section_groups: vec![SectionGroup {
                id: "g".into(),
                name: "G".into(),
                created: None,
                last_modified: None,
                section_groups: vec![],
                sections: vec![sec("G1"), sec("G2")],
            }],
            sections: vec![sec("S1")],
        };
        let order: Vec<String> = sections_in_order(std::slice::from_ref(&nb))
            .into_iter()
            .map(|(p, _)| p.join("/"))
            .collect();
        assert_eq!(order, vec!["NB/S1", "NB/G/G1", "NB/G/G2"]);
    }
}
