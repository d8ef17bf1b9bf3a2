//! The write journal of pages being written: what each finished write step of a page learned
//! (`write_steps`), and the Notion blocks written holding links to pages not migrated yet
//! (`link_blocks`). The rows are opaque text here; `notion::journal` gives them their meaning.

use rusqlite::params;

use super::jobs::RunToken;
use super::notion_items::{one_row, Stage};
use super::{Db, Result};
use crate::clock::UnixMillis;

/// One finished step as stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StepRow {
    /// The step's number among the page's write steps.
    pub step: i64,
    /// What the step sends (to tell the same plan from a changed one).
    pub mark: String,
    /// What it learned (JSON).
    pub learned: String,
    /// When it was learned.
    pub at: UnixMillis,
}

/// One Notion block holding links to OneNote pages, as stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LinkRow {
    /// The Notion block.
    pub block_id: String,
    /// Its rich text with the links' OneNote targets (JSON).
    pub body: String,
}

impl Db {
    /// Records what step `row.step` of the page `item_id` learned (replacing an earlier record of
    /// it) with the blocks it wrote that hold links: one transaction, by the run lock's holder.
    /// Only a page whose body is not complete has a journal (intended: the uploads of its first
    /// request go before its creation; being written or rewritten): for a complete record, or
    /// none, it is [`StoreError::Item`](super::StoreError::Item) and nothing is kept.
    pub fn record_step_with_links(
        &self,
        token: &RunToken,
        account: &str,
        item_id: &str,
        row: &StepRow,
        links: &[LinkRow],
    ) -> Result<()> {
        let item = format!("item {item_id} of {account}");
        let stages = (Stage::Writing, Stage::Writing);
        self.item_write(token, &item, stages, "recording a written step", |tx| {
            // `WHERE` keeps SQLite from reading `ON CONFLICT` as the join's constraint.
            one_row(tx.execute(
                "INSERT INTO write_steps(account, item_id, step, mark, learned, at)
                 SELECT ?1, ?2, ?3, ?4, ?5, ?6 WHERE EXISTS (
                    SELECT 1 FROM notion_items WHERE account = ?1 AND item_id = ?2
                      AND body_state <> 'done')
                 ON CONFLICT(account, item_id, step)
                 DO UPDATE SET mark = excluded.mark, learned = excluded.learned, at = excluded.at",
                params![account, item_id, row.step, row.mark, row.learned, row.at],
            )?)?;
            let mut st = tx.prepare(
                "INSERT INTO link_blocks(account, item_id, block_id, body) VALUES (?1, ?2, ?3, ?4)
                 ON CONFLICT(account, item_id, block_id) DO UPDATE SET body = excluded.body",
            )?;
            for r in links {
                st.execute(params![account, item_id, r.block_id, r.body])?;
            }
            Ok(())
        })
    }

    /// The recorded steps of a page, in plan order.
    pub fn recorded_steps(&self, account: &str, item_id: &str) -> Result<Vec<StepRow>> {
        self.read("reading written steps", |c| {
            let mut st = c.prepare(
                "SELECT step, mark, learned, at FROM write_steps
                 WHERE account = ?1 AND item_id = ?2 ORDER BY step",
            )?;
            let rows = st.query_map(params![account, item_id], |r| {
                Ok(StepRow {
                    step: r.get(0)?,
                    mark: r.get(1)?,
                    learned: r.get(2)?,
                    at: r.get(3)?,
                })
            })?;
            rows.collect()
        })
    }

    /// The recorded blocks with links of a page.
    pub fn link_blocks(&self, account: &str, item_id: &str) -> Result<Vec<LinkRow>> {
        self.read("reading blocks with links", |c| {
            let mut st = c.prepare(
                "SELECT block_id, body FROM link_blocks
                 WHERE account = ?1 AND item_id = ?2 ORDER BY rowid",
            )?;
            let rows = st.query_map(params![account, item_id], |r| {
                Ok(LinkRow {
                    block_id: r.get(0)?,
                    body: r.get(1)?,
                })
            })?;
            rows.collect()
        })
    }

    /// Forgets one recorded block (all its links point at Notion pages now).
    pub fn forget_link_block(
        &self,
        token: &RunToken,
        account: &str,
        item_id: &str,
        block_id: &str,
    ) -> Result<()> {
        let item = format!("block {block_id} of item {item_id} of {account}");
        let stages = (Stage::Complete, Stage::Complete);
        self.item_write(
            token,
            &item,
            stages,
            "forgetting a block with links",
            |tx| {
                one_row(tx.execute(
                    "DELETE FROM link_blocks WHERE account = ?1 AND item_id = ?2 AND block_id = ?3",
                    params![account, item_id, block_id],
                )?)
            },
        )
    }

    /// Forgets everything journalled of a page (its body is about to be replaced: `--update`),
    /// and that its links were recorded. A record without a page has no journal:
    /// [`StoreError::Item`](super::StoreError::Item).
    pub fn forget_journal(&self, token: &RunToken, account: &str, item_id: &str) -> Result<()> {
        let item = format!("item {item_id} of {account}");
        let stages = (Stage::Writing, Stage::Rewriting);
        self.item_write(
            token,
            &item,
            stages,
            "forgetting a page's write journal",
            |tx| {
                for table in ["write_steps", "link_blocks"] {
                    // Either may hold nothing: a body without links, a journal forgotten already.
                    tx.execute(
                        &format!("DELETE FROM {table} WHERE account = ?1 AND item_id = ?2"),
                        params![account, item_id],
                    )?;
                }
                one_row(tx.execute(
                    "UPDATE notion_items SET links_recorded = 0
                 WHERE account = ?1 AND item_id = ?2 AND notion_page_id IS NOT NULL",
                    params![account, item_id],
                )?)
            },
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::notion_items::ItemKind;

    #[test]
    fn steps_and_link_blocks_are_kept_per_page_until_forgotten() {
        let t = tempfile::tempdir().unwrap();
        let db = Db::open(&t.path().join("s.db")).unwrap();
        let tk = db
            .acquire_run_lock(1, "run", 0, std::time::Duration::from_secs(60), |_| true)
            .unwrap()
            .unwrap();
        let row = |step, learned: &str| StepRow {
            step,
            mark: "m".into(),
            learned: learned.into(),
            at: 5,
        };
        // Only a page with a record whose body is not complete has a journal.
        let refused = db.record_step_with_links(&tk, "a", "p", &row(1, "one"), &[]);
        assert!(
            matches!(refused, Err(crate::store::StoreError::Item { .. })),
            "{refused:?}"
        );
        db.record_intent(&tk, "a", "p", ItemKind::Page, "root", "p")
            .unwrap()
            .created(&db, &tk, "n-p")
            .unwrap();
        // An upload ahead of the creation is journalled while only the intent is recorded.
        db.record_intent(&tk, "a", "q", ItemKind::Page, "root", "q")
            .unwrap();
        db.record_step_with_links(&tk, "a", "p", &row(1, "one"), &[])
            .unwrap();
        db.record_step_with_links(&tk, "a", "p", &row(0, "zero"), &[])
            .unwrap();
        db.record_step_with_links(&tk, "a", "p", &row(1, "again"), &[])
            .unwrap();
        db.record_step_with_links(&tk, "a", "q", &row(0, "other page"), &[])
            .unwrap();
        let got: Vec<String> = db
            .recorded_steps("a", "p")
            .unwrap()
            .into_iter()
            .map(|r| r.learned)
            .collect();
        assert_eq!(got, ["zero", "again"]);
        assert_eq!(
            db.recorded_steps("a", "q").unwrap()[0].learned,
            "other page"
        );
        let link = |id: &str| LinkRow {
            block_id: id.into(),
            body: "{}".into(),
        };
        db.record_step_with_links(&tk, "a", "p", &row(2, "two"), &[link("b1"), link("b2")])
            .unwrap();
        db.forget_link_block(&tk, "a", "p", "b1").unwrap();
        let twice = db.forget_link_block(&tk, "a", "p", "b1");
        assert!(
            matches!(twice, Err(crate::store::StoreError::Item { .. })),
            "{twice:?}"
        );
        assert_eq!(db.link_blocks("a", "p").unwrap(), [link("b2")]);
        db.forget_journal(&tk, "a", "p").unwrap();
        assert!(db.recorded_steps("a", "p").unwrap().is_empty());
        assert!(db.link_blocks("a", "p").unwrap().is_empty());
        assert_eq!(db.recorded_steps("a", "q").unwrap().len(), 1);
        // A process that lost the run lock records and forgets nothing.
        db.acquire_run_lock(2, "other", 1, std::time::Duration::from_secs(60), |_| false)
            .unwrap()
            .unwrap();
        let lost = db.record_step_with_links(&tk, "a", "q", &row(1, "late"), &[link("b3")]);
        assert!(
            matches!(lost, Err(crate::store::StoreError::LockLost { .. })),
            "{lost:?}"
        );
        assert!(db.forget_journal(&tk, "a", "q").is_err());
        assert_eq!(db.recorded_steps("a", "q").unwrap().len(), 1);
        assert!(db.link_blocks("a", "q").unwrap().is_empty());
    }

    #[test]
    fn a_page_finished_with_blocks_of_links_recorded_waits_for_the_link_pass() {
        use crate::store::notion_items::Written;
        let t = tempfile::tempdir().unwrap();
        let db = Db::open(&t.path().join("s.db")).unwrap();
        let tk = db
            .acquire_run_lock(1, "run", 0, std::time::Duration::from_secs(60), |_| true)
            .unwrap()
            .unwrap();
        let writing = db
            .record_intent(&tk, "a", "p", ItemKind::Page, "root", "p")
            .unwrap()
            .created(&db, &tk, "n-p")
            .unwrap();
        // An attempt killed after writing a link to a page not migrated then; that page was
        // migrated before the resume, whose conversion found every link's page.
        let step = StepRow {
            step: 0,
            mark: "m".into(),
            learned: "{}".into(),
            at: 5,
        };
        let link = LinkRow {
            block_id: "b1".into(),
            body: "{}".into(),
        };
        db.record_step_with_links(&tk, "a", "p", &step, &[link])
            .unwrap();
        let w = Written {
            pending_links: false,
            links_recorded: true,
            ..Written::default()
        };
        writing.written(&db, &tk, &w).unwrap();
        let pending = db.pages_with_pending_links("a").unwrap();
        assert_eq!(
            pending.len(),
            1,
            "the written link is rewritten by the pass"
        );
        assert_eq!(db.link_blocks("a", "p").unwrap().len(), 1);
    }
}
