//! `migrate --update` never writes over a person's edit: before a page's rewrite writes anything
//! the conflict rule (`notion::conflict`) is applied and its verdict recorded; a page edited in
//! Notion is left as it is and the OneNote version is kept beside it, exactly once, as an item of
//! its own (`ItemKind::KeptVersion`): a child page of the person's page in layout `pages`, a row
//! of the section's database in layout `database`, titled "<title> (OneNote version, <date>)". A
//! later OneNote version of the page rewrites that kept copy, never the person's page.

use std::sync::atomic::Ordering;

use crate::notion::conflict;
use crate::notion::database_row;
use crate::notion::item::{self, ItemRecord};
use crate::notion::listed::Listed;
use crate::notion::steps;
use crate::notion::writer::{display_title, NewPage, WriteError};
use crate::store::jobs::Job;
use crate::store::notion_items::{Check, ItemKind, ItemState, Rewriting, Unfinished, Written};

use super::ensure::{with_write_report, PageWrite};
use super::{JobError, Migration};

/// What a kept OneNote version's item id adds to its page's OneNote id.
pub const KEPT_SUFFIX: &str = "#onenote-version";

/// The title of the OneNote version of `title` kept beside the person's page: the day of the
/// OneNote version (`lastModifiedDateTime`) says which one it is.
pub fn kept_title(title: &str, onenote_last_modified: Option<&str>) -> String {
    let day = onenote_last_modified
        .and_then(|t| t.get(..10))
        .unwrap_or("undated");
    format!("{} (OneNote version, {day})", display_title(title))
}

impl Migration {
    /// The rewrite `page` with its check's verdict: the one recorded by an earlier attempt, else
    /// the rule applied now and recorded before anything is written. A page already in conflict
    /// stays one without a request. Returns the children listed for the check when it cleared the
    /// rewrite (the rewrite replaces them).
    pub(super) async fn check_rewrite(
        &self,
        item: ItemRecord<'_>,
        page: Rewriting,
    ) -> Result<(Rewriting, Option<Vec<Listed>>), JobError> {
        if page.check().is_some() {
            return Ok((page, None));
        }
        let (a, i, pid) = (
            item.account.to_owned(),
            item.item_id.to_owned(),
            page.page_id().to_owned(),
        );
        let (known, recorded, ours) = self
            .db
            .call(move |db| {
                Ok::<_, crate::store::StoreError>((
                    db.is_conflict(&a, &i)?,
                    db.notion_item(&a, &i)?.and_then(|n| n.fingerprint),
                    db.notion_children_of(&pid)?,
                ))
            })
            .await?;
        let (check, listed) = if known {
            (Check::Conflict, None)
        } else {
            let (seen, listed) = conflict::read(&self.notion, page.page_id(), &ours)
                .await
                .map_err(WriteError::from)?;
            match conflict::edited(recorded.as_ref(), &seen) {
                Some(why) => {
                    tracing::info!(
                        notion_page = page.page_id(),
                        reason = why.describe(),
                        "page edited in Notion: left as it is, its OneNote version kept beside it"
                    );
                    (Check::Conflict, None)
                }
                None => (Check::Clear, Some(listed)),
            }
        };
        let token = self.owner.clone();
        let page = self
            .db
            .call(move |db| page.checked(db, &token, check))
            .await?;
        crate::crash::point("rewrite.checked");
        Ok((page, listed))
    }

    /// Keeps `new`, the OneNote version of the page `original` (found edited in Notion), beside
    /// it, then records the conflict: the kept copy is created, resumed or brought up to date
    /// through its own item's lifecycle, so a crash at any point neither loses it nor makes it
    /// twice, and the person's page is never written.
    pub(super) async fn keep_onenote_version(
        &self,
        job: &Job,
        original: Rewriting,
        new: &NewPage<'_>,
        p: &PageWrite<'_>,
    ) -> Result<(), JobError> {
        let kept_id = format!("{}{KEPT_SUFFIX}", job.item_id);
        let title = kept_title(new.title, p.last_modified);
        let writer = self.item_writer(job, &kept_id, Some(p));
        let record = ItemRecord {
            db: &self.db,
            token: &self.owner,
            account: &job.account,
            item_id: &kept_id,
            kind: ItemKind::KeptVersion,
        };
        let (a, k) = (job.account.clone(), kept_id.clone());
        let existing = self.db.call(move |db| db.notion_item(&a, &k)).await?;
        let page = NewPage {
            parent: original.page_id(),
            title: &title,
            blocks: new.blocks,
            resources: new.resources,
        };
        // Layout `database`: a row of the same data source, its title saying what it is.
        let row = p.row.as_ref().map(|r| {
            let mut row = r.row.clone();
            row.title = title.clone();
            (r.data_source.as_str(), row)
        });
        let no_turn = || {};
        let rewrite = |kept: Rewriting, old_title: String| {
            let (writer, row, page) = (&writer, &row, &page);
            async move {
                let stats = match row {
                    Some((_, row)) => {
                        database_row::rewrite(
                            writer,
                            record,
                            &kept,
                            &old_title,
                            row,
                            page.blocks,
                            page.resources,
                            None,
                        )
                        .await?
                    }
                    None => item::rewrite(writer, record, &kept, &old_title, *page, None).await?,
                };
                Ok::<_, JobError>((stats, Unfinished::Rewriting(kept)))
            }
        };
        let create = |intent| {
            let (writer, row, page, no_turn) = (&writer, &row, &page, &no_turn);
            async move {
                let (kept, stats) = match row {
                    Some((ds, row)) => {
                        database_row::create(
                            writer,
                            record,
                            intent,
                            ds,
                            row,
                            page.blocks,
                            page.resources,
                            no_turn,
                        )
                        .await?
                    }
                    None => item::create(writer, record, intent, *page, no_turn).await?,
                };
                Ok::<_, JobError>((stats, Unfinished::Writing(kept)))
            }
        };
        let written = match existing.map(|i| (i.state, i.title, i.onenote_last_modified)) {
            // Already keeps this OneNote version (a resumed run, or no OneNote change since).
            Some((ItemState::Complete(_), _, kept)) if kept.as_deref() == p.last_modified => None,
            Some((ItemState::Complete(kept), old_title, _)) => {
                let token = self.owner.clone();
                let kept = self
                    .db
                    .call(move |db| kept.to_rewrite_kept(db, &token))
                    .await?;
                Some(rewrite(kept, old_title).await?)
            }
            Some((ItemState::Rewriting(kept), old_title, _)) => {
                Some(rewrite(kept, old_title).await?)
            }
            Some((ItemState::Writing(kept), ..)) => {
                let stats = writer
                    .resume_body(kept.page_id(), page.blocks, page.resources)
                    .await?;
                Some((stats, Unfinished::Writing(kept)))
            }
            Some((ItemState::Intended(intent), ..)) => Some(create(Some(intent)).await?),
            None => Some(create(None).await?),
        };
        if let Some((stats, unfinished)) = written {
            self.count(&stats);
            let fingerprint = self
                .fingerprint_written(unfinished.page_id(), &stats)
                .await?;
            let shape = steps::shape(page.blocks);
            let report = with_write_report(p.report, &stats);
            let w = Written {
                blocks: steps::element_count(page.blocks) as i64,
                files: stats.files as i64,
                report: report.as_deref(),
                onenote_last_modified: p.last_modified,
                pending_links: p.pending_links,
                shape: Some(&shape),
                links_recorded: true,
                fingerprint: Some(&fingerprint),
                row_order: None,
                // A kept copy is written again whenever OneNote's version changes.
                body_digest: None,
            };
            unfinished.written(&self.db, &self.owner, &w)?;
            crate::crash::point("conflict.kept_recorded");
        }
        let (token, now) = (self.owner.clone(), self.clock.now_ms());
        let modified = p.last_modified.map(str::to_owned);
        self.db
            .call(move |db| original.kept(db, &token, &kept_id, modified.as_deref(), now))
            .await?;
        crate::crash::point("conflict.recorded");
        self.stats.conflicts.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }
}
