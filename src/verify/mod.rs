//! `verify`: proof of completeness. Re-reads the migrated tree from Notion and reconciles it with the
//! OneNote inventory, the job queue and the Notion records, per notebook and section.
//!
//! Notion is read with one children listing per migrated page (which gives both the child pages under
//! it and its top-level body blocks) plus one per plan target; nested body blocks are only listed
//! when the top-level count alone cannot prove the body complete. A section laid out as a database
//! (layout `database`) is found among its parent page's children, and its rows are read with its
//! data source's queries (100 rows each), then checked as the pages under a page are. Every request
//! goes through the client's pacing.
//!
//! The parts: `read` lists what Notion holds, `reconcile` pairs it with what was planned and
//! decides each item's verdict, `report` is the result's shape and its counts.

mod read;
mod reconcile;
mod report;

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};

use crate::notion::client::{NotionClient, NotionError};
use crate::notion::writer::display_title;
use crate::store::{Db, StoreError};

use read::{norm, Reader};
use reconcile::{flatten, match_children, read_jobs, Ctx};
use report::tally;
pub use report::{
    AccountReport, Approximation, ContainerReport, Counts, ForeignPage, ItemCheck, ItemState,
    PageReport, SectionDatabaseReport, SectionReport, VerifyReport,
};

/// Errors that stop a verification (a single unreadable page does not: it is reported instead).
#[derive(Debug, thiserror::Error)]
pub enum VerifyError {
    /// The state database failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// Notion failed in a way that says nothing about the page (transport, 5xx, rate limits beyond
    /// the retry budget): the run stops rather than report pages missing that may well be there.
    #[error("verifying account {account}: {source}")]
    Notion {
        /// The account being verified.
        account: String,
        /// Notion's error.
        source: NotionError,
    },
}

impl crate::failure::Classify for VerifyError {
    fn class(&self) -> crate::failure::Class {
        use crate::failure::{Class, Next, Scope};
        match self {
            VerifyError::Store(e) => e.class(),
            // Whatever Notion's failure, the verification cannot say anything: it ends.
            VerifyError::Notion { source, .. } => Class {
                scope: Scope::Run,
                next: Next::Never,
                ..source.class()
            },
        }
    }
}

/// Verifies `accounts` against Notion through `client`.
pub async fn verify(
    db: &Db,
    client: &NotionClient,
    accounts: &[String],
) -> Result<VerifyReport, VerifyError> {
    let before = client.counts().requests;
    let mut reader = Reader {
        client,
        listings: HashMap::new(),
    };
    let mut reports = Vec::new();
    for account in accounts {
        reports.push(verify_account(db, &mut reader, account).await?);
    }
    let mut report = VerifyReport {
        verdict: "incomplete",
        accounts: reports,
        notion_requests: client.counts().requests - before,
    };
    if report.complete() {
        report.verdict = "complete";
    }
    Ok(report)
}

async fn verify_account(
    db: &Db,
    reader: &mut Reader<'_>,
    account: &str,
) -> Result<AccountReport, VerifyError> {
    let inventory = db.inventory(account)?;
    let items = db.notion_items(account)?;
    let (jobs, targets) = read_jobs(db, account)?;

    let databases = db.section_databases(account)?;
    // Rows are read by querying their data source (a data source has no children to list).
    let mut data_sources: Vec<String> = databases
        .iter()
        .filter_map(|(_, d)| d.created.as_ref().map(|(_, ds)| ds.clone()))
        .collect();
    // A moved section's old database, kept for the rows a person edited there: they are found
    // in it.
    let old_sources = db.old_data_sources(account)?;
    data_sources.extend(old_sources.iter().cloned());
    let is_source: HashSet<String> = data_sources.iter().map(|d| norm(d)).collect();
    let mut ids: Vec<String> = targets.clone();
    ids.extend(items.iter().map(|i| i.parent_notion_id.clone()));
    ids.extend(items.iter().filter_map(|i| i.page_id().map(str::to_owned)));
    ids.extend(databases.iter().map(|(_, d)| d.parent_page_id.clone()));
    ids.retain(|id| !is_source.contains(&norm(id)));
    reader.fetch(ids, account).await?;
    reader.query_rows(data_sources, account).await?;
    let layout = crate::store::layouts::layouts_label(&db.account_layouts(account)?);

    let target_set: HashSet<String> = targets.iter().map(|t| norm(t)).collect();
    // Every other key's pages: other accounts', and this account's groups' and sites' (a team's
    // page sits under the same target as the account's own notebooks).
    let mut keys: Vec<String> = db.accounts()?.into_iter().map(|a| a.name).collect();
    keys.extend(db.accounts_with_jobs()?);
    keys.sort();
    keys.dedup();
    let others: HashSet<String> = keys
        .into_iter()
        .filter(|k| k != account)
        .map(|k| db.notion_items(&k))
        .collect::<Result<Vec<_>, _>>()?
        .into_iter()
        .flatten()
        .filter_map(|i| i.page_id().map(norm))
        .collect();
    let matches = match_children(reader, &items, &target_set, &others);
    let mut names: HashMap<&str, String> = HashMap::new();
    let flat = flatten(&inventory);
    for (_, id, path) in &flat.containers {
        names.insert(id, path.last().cloned().unwrap_or_default());
    }
    for (s, _) in &flat.sections {
        names.insert(&s.id, s.name.clone());
        for p in &s.pages {
            names.insert(&p.id, display_title(&p.title));
        }
    }
    let ctx = Ctx {
        reader: &*reader,
        items: items.iter().map(|i| (i.item_id.as_str(), i)).collect(),
        jobs: jobs.iter().map(|j| (j.item_id.as_str(), j)).collect(),
        jobs_by_id: jobs.iter().map(|j| (j.id, j)).collect(),
        names,
        matches,
        databases: databases.iter().map(|(s, d)| (s.as_str(), d)).collect(),
        claimed: db.claimed_databases()?.iter().map(|d| norm(d)).collect(),
        // Items adopted from another route (see `store::identity`) sit under that route's pages,
        // which that route's own verification reaches from its target.
        reachable: RefCell::new(
            targets
                .iter()
                .chain(
                    items
                        .iter()
                        .map(|i| &i.parent_notion_id)
                        .filter(|p| others.contains(&norm(p))),
                )
                .chain(&old_sources)
                .filter(|t| matches!(reader.listing(t), Some(Ok(_))))
                .map(|t| norm(t))
                .collect(),
        ),
    };
    let foreign_under = |notion_id: &Option<String>, path: &[String]| -> Vec<ForeignPage> {
        notion_id
            .as_deref()
            .and_then(|id| ctx.matches.foreign.get(&norm(id)))
            .map(|v| {
                v.iter()
                    .map(|(id, title)| ForeignPage {
                        notion_page_id: id.clone(),
                        title: title.clone(),
                        under: path.to_vec(),
                    })
                    .collect()
            })
            .unwrap_or_default()
    };

    let mut containers = Vec::new();
    let mut account_foreign = Vec::new();
    for (kind, id, path) in &flat.containers {
        // Sections imported on their own have no notebook page: their notebook's page is the
        // target itself (so is that of a notebook adopted from them, see `store::identity`).
        let is_target = ctx.items.get(id).is_some_and(|i| {
            i.page_id()
                .is_some_and(|p| norm(p) == norm(&i.parent_notion_id))
        });
        if is_target {
            continue;
        }
        let (check, _) = ctx.locate(id);
        account_foreign.extend(foreign_under(&check.notion_page_id, path));
        containers.push(ContainerReport {
            kind,
            id: (*id).to_owned(),
            path: path.clone(),
            check,
        });
    }

    let mut sections = Vec::new();
    let mut totals = Counts::default();
    for (s, path) in &flat.sections {
        let (section_page, _) = ctx.locate(&s.id);
        let database = ctx.databases.get(s.id.as_str()).map(|d| {
            let data_source = d.created.as_ref().map(|(_, ds)| ds.clone());
            let rows_found = data_source
                .as_deref()
                .and_then(|ds| reader.listing(ds))
                .and_then(|l| l.as_ref().ok())
                .map(Vec::len);
            SectionDatabaseReport {
                database_id: d.created.as_ref().map(|(id, _)| id.clone()),
                data_source_id: data_source,
                rows_found,
            }
        });
        // A database's rows are the pages under its data source.
        let rows_parent = match &database {
            Some(d) => d.data_source_id.clone(),
            None => section_page.notion_page_id.clone(),
        };
        let mut foreign = foreign_under(&rows_parent, path);
        let mut counts = Counts {
            onenote_pages: s.pages.len(),
            ..Counts::default()
        };
        let mut pages = Vec::new();
        for p in &s.pages {
            let (mut check, rec) = ctx.locate(&p.id);
            let mut page_path = path.clone();
            page_path.push(display_title(&p.title));
            foreign.extend(foreign_under(&check.notion_page_id, &page_path));
            let mut blocks_found = None;
            if matches!(check.state, ItemState::Ok | ItemState::Duplicated) {
                let rec = rec.expect("a found page has a record");
                if !rec.state.is_complete() {
                    check.state = ItemState::Partial;
                    check.reason = Some("its body was not completely written".into());
                } else {
                    let id = check.notion_page_id.clone().unwrap_or_default();
                    match reader.count_body(&id, account).await? {
                        Ok((n, shape)) => {
                            blocks_found = Some(n);
                            let misplaced = n == rec.blocks
                                && rec.body_shape.as_deref().is_some_and(|want| want != shape);
                            if misplaced {
                                check.state = ItemState::Partial;
                                check.reason = Some(
                                    "its body has the blocks written, but not where they were \
                                     written (some lost, others added)"
                                        .into(),
                                );
                            }
                            if n < rec.blocks {
                                check.state = ItemState::Partial;
                                check.reason = Some(format!(
                                    "{n} of the {} body blocks written are in Notion",
                                    rec.blocks
                                ));
                            } else if n > rec.blocks {
                                check.state = ItemState::Partial;
                                check.reason = Some(format!(
                                    "its body holds {n} blocks where {} were written (content \
                                     written twice, or added outside notebridge)",
                                    rec.blocks
                                ));
                            }
                        }
                        Err(e) => {
                            check.state = ItemState::Partial;
                            check.reason = Some(format!("its body could not be read: {e}"));
                        }
                    }
                }
            }
            let approximations = rec
                .and_then(|r| r.report.as_deref())
                .and_then(|r| match serde_json::from_str::<Vec<Approximation>>(r) {
                    Ok(v) => Some(v),
                    Err(e) => {
                        tracing::warn!(account, page = %p.id, error = %e, "unreadable conversion report");
                        None
                    }
                })
                .unwrap_or_default();
            tally(&mut counts, &check, !approximations.is_empty());
            pages.push(PageReport {
                id: p.id.clone(),
                title: p.title.clone(),
                level: p.level,
                blocks_recorded: rec.filter(|r| r.state.is_complete()).map(|r| r.blocks),
                blocks_found,
                check,
                approximations,
            });
        }
        counts.foreign = foreign.len();
        totals.add(&counts);
        sections.push(SectionReport {
            id: s.id.clone(),
            path: path.clone(),
            section_page,
            database,
            counts,
            pages,
            foreign,
        });
    }
    totals.foreign += account_foreign.len();
    Ok(AccountReport {
        account: account.to_owned(),
        layout,
        targets,
        planned_anything: !jobs.is_empty(),
        totals,
        containers,
        sections,
        foreign: account_foreign,
    })
}
