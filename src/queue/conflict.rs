//! `migrate --update` never writes over a person's edit: before a page's rewrite writes anything
//! the conflict rule (`notion::conflict`) is applied and its verdict recorded; a page edited in
//! Notion is left as it is and the OneNote version is kept beside it, exactly once, as an item of
//! its own (`ItemKind::KeptVersion`): a child page of the person's page in layout `pages`, a row
//! of the section's database in layout `database`, titled "<title> (OneNote version, <date>)". A
//! later OneNote version of the page rewrites that kept copy, never the person's page.
//!
//! A kept copy is a page like any other: a person may take it up and write in it. So it is
//! rewritten under the same rule: checked first, and once found edited it is never written again.
//! The newer OneNote version then goes into a new kept copy beside the page ([`KeptId`]: the
//! second, third...), and the edited copy is recorded as a conflict of its own (so `status`,
//! `report`, `--json` and `resolve` show it as any other). Keeping another copy, rather than only
//! reporting the conflict, is what loses nothing: the edited copy holds the person's text, the
//! new one OneNote's newest version, which a cut-over would otherwise leave behind in OneNote.

use std::sync::atomic::Ordering;

use crate::notion::conflict;
use crate::notion::database_row;
use crate::notion::item::{self, ItemRecord};
use crate::notion::listed::Listed;
use crate::notion::steps;
use crate::notion::writer::{display_title, NewPage, WriteError};
use crate::store::jobs::Job;
use crate::store::notion_items::{
    Check, ItemKind, ItemState, NotionItem, Rewriting, Unfinished, Written,
};

use super::ensure::{with_write_report, PageWrite};
use super::{JobError, Migration};

/// What a kept OneNote version's item id adds to its page's OneNote id.
pub const KEPT_SUFFIX: &str = "#onenote-version";

/// Which of a page's kept OneNote versions an item is: the first is `<page id>#onenote-version`;
/// each later one, made because a person edited the one before, `<page id>#onenote-version-<n>`.
/// The copy that follows OneNote is the first a person has not edited.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KeptId<'a> {
    page: &'a str,
    n: u32,
}

impl<'a> KeptId<'a> {
    /// The first kept copy of the page `page` (its OneNote id).
    pub fn first(page: &'a str) -> Self {
        Self { page, n: 1 }
    }

    /// The copy made once a person edited this one.
    pub fn next(self) -> Self {
        Self {
            n: self.n + 1,
            ..self
        }
    }
}

impl std::fmt::Display for KeptId<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.n {
            1 => write!(f, "{}{KEPT_SUFFIX}", self.page),
            n => write!(f, "{}{KEPT_SUFFIX}-{n}", self.page),
        }
    }
}

/// The title of the OneNote version of `title` kept beside the person's page as copy `kept`: the
/// day of the OneNote version (`lastModifiedDateTime`) says which one it is, and a later copy's
/// number tells it from the one before (a person edited that one, maybe the same day).
pub fn kept_title(title: &str, onenote_last_modified: Option<&str>, kept: KeptId<'_>) -> String {
    let day = onenote_last_modified
        .and_then(|t| t.get(..10))
        .unwrap_or("undated");
    match kept.n {
        1 => format!("{} (OneNote version, {day})", display_title(title)),
        n => format!("{} (OneNote version {n}, {day})", display_title(title)),
    }
}

/// The kept copy to write ([`Migration::current_kept_copy`]): which one, its record, the children
/// its check listed, and the earlier copies found edited on the way.
type KeptCopy<'a> = (
    KeptId<'a>,
    Option<NotionItem>,
    Option<Vec<Listed>>,
    Vec<Rewriting>,
);

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
    /// twice, and the person's page is never written. A kept copy found edited in Notion is left
    /// as it is and the version goes into the next one (module doc).
    pub(super) async fn keep_onenote_version(
        &self,
        job: &Job,
        original: Rewriting,
        new: &NewPage<'_>,
        p: &PageWrite<'_>,
    ) -> Result<(), JobError> {
        let (kept, existing, listed, superseded) = self.current_kept_copy(job, p).await?;
        let kept_id = kept.to_string();
        let title = kept_title(new.title, p.last_modified, kept);
        let writer = self.item_writer(job, &kept_id, Some(p));
        let record = ItemRecord {
            db: &self.db,
            token: &self.owner,
            account: &job.account,
            item_id: &kept_id,
            kind: ItemKind::KeptVersion,
        };
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
        let rewrite = |kept: Rewriting, old_title: String, listed: Option<Vec<Listed>>| {
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
                            listed,
                        )
                        .await?
                    }
                    None => item::rewrite(writer, record, &kept, &old_title, *page, listed).await?,
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
        let written = match existing.map(|i| (i.state, i.title)) {
            // Already keeps this OneNote version (a resumed run, or no OneNote change since).
            Some((ItemState::Complete(_), _)) => None,
            // Checked and found as notebridge wrote it (`current_kept_copy`).
            Some((ItemState::Rewriting(kept), old_title)) => {
                Some(rewrite(kept, old_title, listed).await?)
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
        let found = 1 + superseded.len() as u64;
        self.db
            .call(move |db| {
                original.kept(db, &token, &kept_id, modified.as_deref(), now, superseded)
            })
            .await?;
        crate::crash::point("conflict.recorded");
        self.stats.conflicts.fetch_add(found, Ordering::Relaxed);
        Ok(())
    }

    /// The kept copy that is to hold the OneNote version `p` of `job`'s page, with its record:
    /// the first copy that no person edited. A copy recorded as edited by an earlier run is
    /// passed over; one that holds an older version is checked (as any rewrite is, and the
    /// verdict recorded before anything is written) and, found edited, passed over too and
    /// returned among the superseded, to be recorded as a conflict with the page's. A copy found
    /// unedited comes back to be rewritten, with the children its check listed; one that already
    /// holds this version, or is being created or written, comes back as it is. The walk is
    /// bounded by the page's kept copies in the state database, one per time a person edited one.
    async fn current_kept_copy<'j>(
        &self,
        job: &'j Job,
        p: &PageWrite<'_>,
    ) -> Result<KeptCopy<'j>, JobError> {
        let mut kept = KeptId::first(&job.item_id);
        let mut superseded = Vec::new();
        loop {
            let (a, k) = (job.account.clone(), kept.to_string());
            let (existing, edited_before) = self
                .db
                .call(move |db| {
                    Ok::<_, crate::store::StoreError>((
                        db.notion_item(&a, &k)?,
                        db.is_conflict(&a, &k)?,
                    ))
                })
                .await?;
            let Some(rec) = existing else {
                return Ok((kept, None, None, superseded));
            };
            let rewriting = match rec.state.clone() {
                ItemState::Complete(_) if edited_before => {
                    kept = kept.next();
                    continue;
                }
                ItemState::Complete(_)
                    if rec.onenote_last_modified.as_deref() == p.last_modified =>
                {
                    return Ok((kept, Some(rec), None, superseded));
                }
                ItemState::Complete(copy) => {
                    let token = self.owner.clone();
                    self.db
                        .call(move |db| copy.to_rewrite_kept(db, &token))
                        .await?
                }
                ItemState::Rewriting(copy) => copy,
                ItemState::Intended(_) | ItemState::Writing(_) => {
                    return Ok((kept, Some(rec), None, superseded));
                }
            };
            let k = kept.to_string();
            let record = ItemRecord {
                db: &self.db,
                token: &self.owner,
                account: &job.account,
                item_id: &k,
                kind: ItemKind::KeptVersion,
            };
            let (checked, listed) = self.check_rewrite(record, rewriting).await?;
            if checked.check() == Some(Check::Conflict) {
                tracing::info!(
                    notion_page = checked.page_id(),
                    "a kept OneNote version was edited in Notion: left as it is, the newer \
                     OneNote version kept in another copy"
                );
                superseded.push(checked);
                kept = kept.next();
                continue;
            }
            let rec = NotionItem {
                state: ItemState::Rewriting(checked),
                ..rec
            };
            return Ok((kept, Some(rec), listed, superseded));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kept_copy_has_an_id_and_a_title_of_its_own() {
        let first = KeptId::first("0-ab!1-cd");
        assert_eq!(first.to_string(), "0-ab!1-cd#onenote-version");
        assert_eq!(first.next().to_string(), "0-ab!1-cd#onenote-version-2");
        assert_eq!(
            first.next().next().to_string(),
            "0-ab!1-cd#onenote-version-3"
        );
        let t = Some("2026-03-04T10:00:00Z");
        assert_eq!(
            kept_title("Notes", t, first),
            "Notes (OneNote version, 2026-03-04)"
        );
        assert_eq!(
            kept_title("", t, first.next()),
            "Untitled (OneNote version 2, 2026-03-04)"
        );
        assert_eq!(
            kept_title("Notes", None, first),
            "Notes (OneNote version, undated)"
        );
    }
}
