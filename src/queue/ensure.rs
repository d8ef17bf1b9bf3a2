//! A job's Notion page written exactly once: created, resumed or rewritten through its record's
//! lifecycle, and what was written recorded.

use std::collections::HashMap;
use std::sync::atomic::Ordering;

use bytes::Bytes;

use crate::convert::Block;
use crate::graph::Caller;
use crate::notion::conflict::{self, Fingerprint};
use crate::notion::database_row;
use crate::notion::item::{self, ItemRecord};
use crate::notion::journal::Journal;
use crate::notion::steps;
use crate::notion::writer::{NewPage, Resource, WriteStats, Writer};
use crate::store::jobs::Job;
use crate::store::notion_items::{Check, ItemKind, ItemState, NotionItem, Unfinished, Written};

use super::fetch::no_fetch;
use super::prefetch::Prefetched;
use super::rows::RowWrite;
use super::unchanged;
use super::{JobError, Migration, Turn};

impl Migration {
    /// Creates (or finishes) the Notion page of `job` exactly once. Returns whether a page was
    /// created or completed now.
    #[allow(clippy::too_many_arguments)]
    pub(super) async fn ensure(
        &self,
        job: &Job,
        turn: &Turn,
        parent: &str,
        title: &str,
        blocks: &[Block],
        resources: &HashMap<String, Resource>,
        page: Option<PageWrite<'_>>,
    ) -> Result<bool, JobError> {
        let (account, item_id) = (job.account.as_str(), job.item_id.as_str());
        let (a, i) = (account.to_owned(), item_id.to_owned());
        let existing = self.db.call(move |db| db.notion_item(&a, &i)).await?;
        let writer = self.item_writer(job, item_id, page.as_ref());
        let kind = ItemKind::of_job(job.kind).ok_or_else(|| {
            JobError::permanent(format!("a {} job has no page", job.kind.as_str()))
        })?;
        let record = ItemRecord {
            db: &self.db,
            token: &self.owner,
            account,
            item_id,
            kind,
        };
        let new = NewPage {
            parent,
            title,
            blocks,
            resources,
        };
        // The next sibling's turn.
        let created = || turn.created();
        // Layout `database`: the page is a row of its section's database.
        let row = page.as_ref().and_then(|p| p.row.as_ref());
        let digest = page
            .as_ref()
            .map(|p| unchanged::body_digest(blocks, resources, &p.svgs));
        // A rewrite to the body already in Notion writes no body.
        let existing = match (existing, page.as_ref(), digest.as_deref()) {
            (Some(rec), Some(p), Some(d)) => match rec.state.clone() {
                ItemState::Rewriting(rewriting) => {
                    match self
                        .rewrite_unless_unchanged(
                            &writer,
                            record,
                            rewriting,
                            &rec,
                            title,
                            blocks,
                            d,
                            (p.last_modified, p.pending_links),
                            row.map(|r| &r.row),
                        )
                        .await?
                    {
                        None => return Ok(true),
                        Some(rewriting) => Some(NotionItem {
                            state: ItemState::Rewriting(rewriting),
                            ..rec
                        }),
                    }
                }
                _ => Some(rec),
            },
            (existing, ..) => existing,
        };
        let (stats, unfinished) = match existing.map(|i| (i.state, i.title)) {
            Some((ItemState::Complete(_), _)) => return Ok(false),
            Some((ItemState::Rewriting(rewriting), old_title)) => {
                // Nothing is written before the check says the page is notebridge's to rewrite.
                let (rewriting, listed) = self.check_rewrite(record, rewriting).await?;
                if rewriting.check() == Some(Check::Conflict) {
                    let Some(p) = page.as_ref() else {
                        return Err(JobError::permanent(
                            "a container's page cannot be a conflict".to_owned(),
                        ));
                    };
                    self.keep_onenote_version(job, rewriting, &new, p).await?;
                    return Ok(true);
                }
                let stats = match row {
                    Some(r) => {
                        database_row::rewrite(
                            &writer, record, &rewriting, &old_title, &r.row, blocks, resources,
                            listed,
                        )
                        .await?
                    }
                    None => {
                        item::rewrite(&writer, record, &rewriting, &old_title, new, listed).await?
                    }
                };
                (stats, Unfinished::Rewriting(rewriting))
            }
            Some((ItemState::Intended(intent), _)) if row.is_some() => {
                let r = row.expect("matched on a row");
                turn.wait().await?;
                let (page, stats) = database_row::create(
                    &writer,
                    record,
                    Some(intent),
                    &r.data_source,
                    &r.row,
                    blocks,
                    resources,
                    &created,
                )
                .await?;
                (stats, Unfinished::Writing(page))
            }
            None if row.is_some() => {
                let r = row.expect("matched on a row");
                turn.wait().await?;
                let (page, stats) = database_row::create(
                    &writer,
                    record,
                    None,
                    &r.data_source,
                    &r.row,
                    blocks,
                    resources,
                    &created,
                )
                .await?;
                (stats, Unfinished::Writing(page))
            }
            Some((ItemState::Writing(page), _)) => {
                let stats = writer
                    .resume_body(page.page_id(), blocks, resources)
                    .await?;
                (stats, Unfinished::Writing(page))
            }
            // An earlier attempt's creation may have reached Notion: its page is looked for.
            Some((ItemState::Intended(intent), _)) => {
                turn.wait().await?;
                let (page, stats) =
                    item::create(&writer, record, Some(intent), new, &created).await?;
                (stats, Unfinished::Writing(page))
            }
            None => {
                turn.wait().await?;
                let (page, stats) = item::create(&writer, record, None, new, &created).await?;
                (stats, Unfinished::Writing(page))
            }
        };
        self.count(&stats);
        // What a later rewrite compares with, as Notion gives it back now.
        let fingerprint = match page {
            Some(_) => Some(
                self.fingerprint_written(unfinished.page_id(), &stats)
                    .await?,
            ),
            None => None,
        };
        let shape = steps::shape(blocks);
        let report = with_write_report(page.as_ref().and_then(|p| p.report), &stats);
        let recorded_digest = digest
            .as_deref()
            .and_then(|d| unchanged::digest_to_record(d, &stats));
        let written = Written {
            // The whole body as it stands in Notion now, whether this run wrote all of it or
            // resumed after blocks written before (a placeholder stands in for a file one for one).
            blocks: steps::element_count(blocks) as i64,
            files: stats.files as i64,
            report: report.as_deref(),
            onenote_last_modified: page.as_ref().and_then(|p| p.last_modified),
            pending_links: page.as_ref().is_some_and(|p| p.pending_links),
            shape: Some(&shape),
            links_recorded: page.is_some(),
            fingerprint: fingerprint.as_ref(),
            row_order: page
                .as_ref()
                .and_then(|p| p.row.as_ref())
                .map(|r| i64::from(r.row.order)),
            body_digest: recorded_digest.as_deref(),
        };
        crate::crash::point("queue.body_written");
        unfinished.written(&self.db, &self.owner, &written)?;
        crate::crash::point("queue.item_recorded");
        Ok(true)
    }

    /// What a job's write counted, added to the run's counters.
    pub(super) fn count(&self, stats: &WriteStats) {
        self.stats
            .blocks
            .fetch_add(stats.blocks as u64, Ordering::Relaxed);
        self.stats
            .files
            .fetch_add(stats.files as u64, Ordering::Relaxed);
        self.stats.bytes.fetch_add(stats.bytes, Ordering::Relaxed);
        self.stats
            .placeholders
            .fetch_add(stats.placeholders.len() as u64, Ordering::Relaxed);
        self.stats.approximations.fetch_add(
            (stats.degraded.len() + stats.smaller.len()) as u64,
            Ordering::Relaxed,
        );
    }

    /// The writer of one item's page: a OneNote page's (`page`) fetches its files and records
    /// what each step learns in the journal of `item_id`, as it is learned.
    pub(super) fn item_writer(
        &self,
        job: &Job,
        item_id: &str,
        page: Option<&PageWrite<'_>>,
    ) -> Writer {
        let fetch = match page {
            Some(p) => self.fetcher(p.who.clone(), p.svgs.clone(), p.prefetched.clone()),
            None => no_fetch(),
        };
        let writer = Writer::new(self.notion.clone(), fetch, self.max_upload)
            .after_retries(u32::try_from(job.attempts - 1).unwrap_or(0));
        match page {
            Some(_) => writer.with_journal(Journal::new(
                self.db.clone(),
                self.owner.clone(),
                &job.account,
                item_id,
                self.clock.clone(),
            )),
            None => writer,
        }
    }

    /// The fingerprint of the page `id` as Notion holds it now (`notion::conflict`).
    pub(super) async fn fingerprint(&self, id: &str) -> Result<Fingerprint, JobError> {
        let page = id.to_owned();
        let ours = self.db.call(move |db| db.notion_children_of(&page)).await?;
        let (seen, _) = conflict::read(&self.notion, id, &ours).await?;
        Ok(seen.now)
    }

    /// The fingerprint of the page `id` just written with `stats`: a page created now with every
    /// write answered takes its page half from the answers (only its children are listed), any
    /// other is read ([`Self::fingerprint`]).
    pub(super) async fn fingerprint_written(
        &self,
        id: &str,
        stats: &WriteStats,
    ) -> Result<Fingerprint, JobError> {
        if let Some(whole) = stats.answered.fingerprint() {
            return Ok(whole);
        }
        let Some(answer) = stats.answered.page() else {
            return self.fingerprint(id).await;
        };
        let p = id.to_owned();
        let ours = self.db.call(move |db| db.notion_children_of(&p)).await?;
        let (seen, _) = conflict::read_body(&self.notion, id, &answer, &ours).await?;
        Ok(seen.now)
    }
}

/// What a OneNote page's write needs besides its blocks.
pub(super) struct PageWrite<'a> {
    /// Who fetches its resources.
    pub(super) who: &'a Caller,
    /// The converter's report (JSON).
    pub(super) report: Option<&'a str>,
    /// Its `lastModifiedDateTime`.
    pub(super) last_modified: Option<&'a str>,
    /// Rendered drawings by `ink:` URL.
    pub(super) svgs: HashMap<String, Bytes>,
    /// Files fetched before the page's turn.
    pub(super) prefetched: Prefetched,
    /// It links to pages not migrated yet.
    pub(super) pending_links: bool,
    /// Layout `database`: the row it is written as (none: a page).
    pub(super) row: Option<RowWrite>,
}

/// The converter's report of a page with what writing it approximated added (elements Notion
/// refused, files left as placeholders, images carried over at their smaller rendition), so
/// `verify` lists them beside the converter's.
pub(super) fn with_write_report(report: Option<&str>, stats: &WriteStats) -> Option<String> {
    let mut items: Vec<(String, String)> = stats
        .degraded
        .iter()
        .map(|d| (d.element.clone(), d.action.clone()))
        .collect();
    for s in &stats.smaller {
        let (name, why) = s.split_once(": ").unwrap_or((s.as_str(), "it failed"));
        items.push((
            format!("image {name} at full resolution"),
            format!("the smaller rendition was carried over ({why})"),
        ));
    }
    for p in &stats.placeholders {
        let (name, why) = p
            .split_once(": ")
            .unwrap_or((p.as_str(), "not carried over"));
        items.push((
            format!("file {name}"),
            format!("visible placeholder: {why}"),
        ));
    }
    crate::notion::degrade::add_to_report(report, items)
}
