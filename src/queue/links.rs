//! The link pass: once the pages that links point at exist in Notion, the blocks that hold links to
//! them are updated in place. Only pages that had links to not-yet-migrated pages are touched.
//!
//! The writer recorded each block it wrote holding such a link, with the text it holds
//! ([`crate::notion::journal`]): exactly those blocks are updated, from what was written, with no
//! Graph request and no listing, whatever the page became in OneNote or Notion since. A page
//! written by an older notebridge has no records: it is read again from OneNote, converted, and its
//! blocks are matched to Notion's by position, as that version did ([`rewrite_page`]); this keeps
//! the links of a migration that was upgraded halfway, at the cost of one page read each.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::{json, Value};

use super::{JobError, Migration};
use crate::convert::{Block, RichKind};
use crate::failure::{Classify, Next};
use crate::graph::Caller;
use crate::notion::client::NotionError;
use crate::notion::conflict::{self, Fingerprint};
use crate::notion::degrade::{self, note_in_report, Degraded};
use crate::notion::journal::LinkBody;
use crate::notion::listed;
use crate::store::notion_items::NotionItem;

/// Pages whose links are rewritten at once: a page without records re-reads its page from Graph (a
/// round trip or more) before its Notion updates, so one at a time would leave the Graph windows
/// idle at the end of a run; as many as the user's background lane may have in flight by default.
const PAGES_AT_ONCE: usize = 4;

/// The link passes running in a run, one per account at a time. Every plan of an account (its own
/// notebooks, each group's and site's) ends with a pass, and each pass covers all of the account's
/// pages: two at once would send the same block updates twice and forget a recorded block the
/// other has just forgotten. The second waits, then finds only what the first left.
#[derive(Clone, Default)]
pub(super) struct Passes {
    running: Arc<std::sync::Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>>,
}

impl Passes {
    /// Waits until no other pass of `account` runs; the pass runs while the guard lives.
    async fn enter(&self, account: &str) -> tokio::sync::OwnedMutexGuard<()> {
        let lock = self
            .running
            .lock()
            .expect("link passes poisoned")
            .entry(account.to_owned())
            .or_default()
            .clone();
        lock.lock_owned().await
    }
}

/// Rewrites the pending links of `who`'s pages, its groups' and sites' included (a link between
/// an own page and a team's resolves whichever was migrated last); returns how many blocks were
/// updated.
pub(super) async fn rewrite_pending(m: &Migration, who: &Caller) -> Result<u64, JobError> {
    use futures::stream::{self, StreamExt, TryStreamExt};
    let _pass = m.link_passes.enter(&who.account).await;
    let account = who.account.clone();
    // Every store call of the pass runs off the runtime ([`crate::store::Db::call`]).
    let (migrated, pages) = m
        .db()
        .call(move |db| {
            let migrated = db.migrated_page_targets(&account)?;
            let mut pages = Vec::new();
            for key in db.queued_keys(&account)? {
                for item in db.pages_with_pending_links(&key)? {
                    if let Some(notion_id) = item.page_id().map(str::to_owned) {
                        pages.push((key.clone(), item, notion_id));
                    }
                }
            }
            Ok::<_, crate::store::StoreError>((migrated, pages))
        })
        .await?;
    let migrated = &migrated;
    stream::iter(pages)
        .map(|(key, item, notion_id)| async move {
            let at = Item {
                key: &key,
                id: &item.item_id,
                title: &item.title,
            };
            let mut degraded = Vec::new();
            // A page edited in Notion since it was written is the person's now: its links are
            // not updated (that would write over the edit) and stay readable text.
            if let Some(why) = edited_since_written(m, &key, &item, &notion_id).await? {
                degraded.push(Degraded {
                    element: "links to other pages".into(),
                    action: format!("kept as text naming the OneNote page ({})", why.describe()),
                });
                record(m, &key, &item, degraded, false, None).await?;
                return Ok(0);
            }
            let rewritten = if item.links_recorded {
                rewrite_recorded(m, &at, migrated, &mut degraded).await
            } else {
                rewrite_page(m, who, &at, &notion_id, migrated, &mut degraded).await
            };
            match rewritten {
                Ok((n, still_missing)) => {
                    // The pass changed the page: what a later rewrite compares with is what
                    // Notion holds now.
                    let fingerprint = match n {
                        0 => None,
                        _ => Some(m.fingerprint(&notion_id).await?),
                    };
                    record(m, &key, &item, degraded, still_missing, fingerprint).await?;
                    Ok(n)
                }
                // One page that cannot be read again (deleted in OneNote since) or whose Notion
                // page was changed must not hold up the others: its links stay readable text.
                Err(JobError::Permanent(why)) => {
                    tracing::warn!(page = %item.item_id, "links not rewritten: {why}");
                    degraded.push(Degraded {
                        element: "links to other pages".into(),
                        action: format!(
                            "kept as text naming the OneNote page (the link pass could not \
                             rewrite them: {why})"
                        ),
                    });
                    record(m, &key, &item, degraded, false, None).await?;
                    Ok(0)
                }
                Err(other) => Err(other),
            }
        })
        .buffer_unordered(PAGES_AT_ONCE)
        .try_fold(0, |sum, n| async move { Ok(sum + n) })
        .await
}

/// Records what the pass did to a page: whether links remain unresolved, and what it sent
/// degraded, added to the page's stored report as the writer does, so `verify` lists it. The pass
/// writes again blocks the writer wrote: an element both degraded (an e-mail link beside a page
/// link) is listed once.
async fn record(
    m: &Migration,
    key: &str,
    item: &NotionItem,
    degraded: Vec<Degraded>,
    still_missing: bool,
    fingerprint: Option<Fingerprint>,
) -> Result<(), JobError> {
    let report = (!degraded.is_empty()).then(|| {
        let items = degraded.into_iter().map(|d| (d.element, d.action));
        note_in_report(item.report.as_deref(), items)
    });
    let (owner, key, id) = (m.owner().clone(), key.to_owned(), item.item_id.clone());
    m.db()
        .call(move |db| {
            if let Some(report) = report {
                db.set_report(&owner, &key, &id, report.as_deref())?;
            }
            match fingerprint {
                Some(f) => db.set_fingerprint(&owner, &key, &id, &f)?,
                None => db.set_links_checked(&owner, &key, &id, false)?,
            }
            db.set_pending_links(&owner, &key, &id, still_missing)
        })
        .await?;
    crate::crash::point("links.page_recorded");
    Ok(())
}

/// Why the complete page `item` (Notion page `notion_id`) no longer holds what notebridge wrote
/// (`notion::conflict`); `None` when it does, or when no fingerprint was recorded (an older
/// notebridge wrote it: the pass then checks each block's text before updating it).
async fn edited_since_written(
    m: &Migration,
    key: &str,
    item: &NotionItem,
    notion_id: &str,
) -> Result<Option<conflict::Edit>, JobError> {
    let Some(recorded) = item.fingerprint.as_ref() else {
        return Ok(None);
    };
    // An earlier pass found it unedited and may have updated blocks of it before it stopped.
    if item.links_checked {
        return Ok(None);
    }
    let id = notion_id.to_owned();
    let ours = m.db().call(move |db| db.notion_children_of(&id)).await?;
    let (seen, _) = conflict::read(m.notion(), notion_id, &ours)
        .await
        .map_err(crate::notion::writer::WriteError::from)?;
    let edited = conflict::edited(Some(recorded), &seen);
    if edited.is_none() {
        let (owner, key, id) = (m.owner().clone(), key.to_owned(), item.item_id.clone());
        m.db()
            .call(move |db| db.set_links_checked(&owner, &key, &id, true))
            .await?;
    }
    Ok(edited)
}

/// A page whose links are rewritten: its inventory key, id and title.
struct Item<'a> {
    key: &'a str,
    id: &'a str,
    title: &'a str,
}

/// Rewrites the links of a page from the blocks the writer recorded; returns the blocks updated and
/// whether links remain unresolved. A block whose links all point at Notion pages now is forgotten.
async fn rewrite_recorded(
    m: &Migration,
    item: &Item<'_>,
    migrated: &std::collections::HashMap<String, crate::convert::PageTarget>,
    degraded: &mut Vec<Degraded>,
) -> Result<(u64, bool), JobError> {
    let mut still_missing = false;
    let mut n = 0;
    let (key, id) = (item.key.to_owned(), item.id.to_owned());
    let rows = m.db().call(move |db| db.link_blocks(&key, &id)).await?;
    for row in rows {
        let read = LinkBody::of_row_text(&row.body)
            .and_then(|b| b.update(|id| migrated.get(&id.to_ascii_lowercase()).cloned()));
        let Some(u) = read else {
            return Err(JobError::permanent(format!(
                "the record of Notion block {} is not one this notebridge can read",
                row.block_id
            )));
        };
        if u.unresolved > 0 {
            still_missing = true;
        }
        if u.resolved == 0 {
            // None of its pages is migrated yet: sending it again would change nothing.
            continue;
        }
        update(m, &row.block_id, u.body, degraded).await?;
        crate::crash::point("links.block_updated");
        n += 1;
        if u.unresolved == 0 {
            let (owner, key, id) = (m.owner().clone(), item.key.to_owned(), item.id.to_owned());
            m.db()
                .call(move |db| db.forget_link_block(&owner, &key, &id, &row.block_id))
                .await?;
            crate::crash::point("links.block_forgotten");
        }
    }
    Ok((n, still_missing))
}

/// Rewrites one page's links; returns the blocks updated and whether links remain unresolved.
async fn rewrite_page(
    m: &Migration,
    who: &Caller,
    item: &Item<'_>,
    notion_id: &str,
    migrated: &std::collections::HashMap<String, crate::convert::PageTarget>,
    degraded: &mut Vec<Degraded>,
) -> Result<(u64, bool), JobError> {
    let label = format!("page {:?} ({})", item.title, item.id);
    let (key, id) = (item.key.to_owned(), item.id.to_owned());
    let last_modified = m
        .db()
        .call(move |db| db.page_last_modified(&key, &id))
        .await?;
    // With its drawings, as written: blocks are matched to Notion's by position. A big page is
    // held under the big-page permit (its Notion page exists: no turn to wait for).
    let (mut page, _, _big) = m
        .fetch_page(who, None, item.key, item.id, &label, last_modified)
        .await?;
    // The blocks as that version wrote them (every link not resolved then is text naming its
    // page), to tell that a Notion block still holds what was written before it is rewritten.
    let written = page.blocks.clone();
    let mut still_missing = false;
    page.resolve_page_links(|id| match migrated.get(&id.to_ascii_lowercase()) {
        Some(t) => Some(t.clone()),
        None => {
            still_missing = true;
            None
        }
    });
    let level = Level {
        parent: notion_id,
        expected: &page.blocks,
        written: &written,
    };
    let n = rewrite_level(m, level, degraded).await?;
    Ok((n, still_missing))
}

/// One level of a page matched by position: the Notion block `parent`, the blocks it should hold
/// with their links resolved, and the same blocks as written.
#[derive(Clone, Copy)]
struct Level<'a> {
    parent: &'a str,
    expected: &'a [Block],
    written: &'a [Block],
}

/// The text of a block's runs outside any link, cell by cell (what a link pass never changes),
/// from the block's JSON as sent or as Notion lists it.
fn unlinked_text(block: &Value) -> String {
    let t = block["type"].as_str().unwrap_or_default();
    let p = &block[t];
    let fields: Vec<&Value> = match p.get("cells").and_then(Value::as_array) {
        Some(cells) => cells.iter().collect(),
        None => vec![p.get("rich_text").unwrap_or(&p["caption"])],
    };
    let text = |runs: &Value| -> String {
        runs.as_array()
            .into_iter()
            .flatten()
            .filter(|r| r["type"] == "text" && r["text"]["link"].is_null())
            .filter_map(|r| r["text"]["content"].as_str())
            // A link not resolved is written as text naming its page.
            .filter(|c| !(c.contains(" (OneNote page ") && c.ends_with(')')))
            .collect()
    };
    fields
        .into_iter()
        .map(text)
        .collect::<Vec<_>>()
        .join("\u{1f}")
}

/// Whether a Notion block (as listed) holds, outside its links, the text of the block written
/// there: else it is another block than the position says (its page changed since, or its
/// records were lost), and rewriting it would put one block's text over another's.
fn holds_what_was_written(got: &Value, written: &Value) -> bool {
    unlinked_text(got) == unlinked_text(written)
}

/// The note of a block whose links are left as they are because it does not hold what was written.
fn not_rewritten(id: &str) -> Degraded {
    Degraded {
        element: "links to other pages".into(),
        action: format!(
            "kept as text naming the OneNote page in Notion block {id} (it no longer holds the \
             text written there, so the link pass left it alone)"
        ),
    }
}

/// The body blocks of `parent` as Notion lists them, with their typed model.
async fn body_json(m: &Migration, parent: &str) -> Result<Vec<(listed::Listed, Value)>, JobError> {
    let all = m.notion().children(parent).await.map_err(JobError::from)?;
    let typed = listed::of_all(&all, parent).map_err(JobError::from)?;
    Ok(typed
        .into_iter()
        .zip(all)
        .filter(|(l, _)| l.is_body())
        .collect())
}

/// Whether a block's own rich text holds a page link.
fn has_link(b: &Block) -> bool {
    b.rich_texts().iter().any(|rt| {
        rt.iter()
            .any(|r| matches!(r.kind, RichKind::PageLink { .. }))
    })
}

/// Whether a block or anything under it holds a page link.
fn subtree_has_link(b: &Block) -> bool {
    has_link(b) || b.children().iter().any(subtree_has_link)
}

fn rewrite_level<'a>(
    m: &'a Migration,
    level: Level<'a>,
    degraded: &'a mut Vec<Degraded>,
) -> futures::future::BoxFuture<'a, Result<u64, JobError>> {
    Box::pin(async move {
        let Level {
            parent,
            expected,
            written,
        } = level;
        if !expected.iter().any(subtree_has_link) {
            return Ok(0);
        }
        let actual = body_json(m, parent).await?;
        let mut n = 0;
        for ((want, was), (got, raw)) in expected.iter().zip(written).zip(&actual) {
            let id = got.id.as_str();
            let t = want.type_name();
            if got.kind != t {
                // Someone changed the page in Notion: never overwrite their block.
                return Err(JobError::permanent(format!(
                    "Notion block {id} is a {} where a {t} was written",
                    got.kind
                )));
            }
            if has_link(want) {
                if t == "table" {
                    n += rewrite_rows(m, id, (want, was), degraded).await?;
                } else if !holds_what_was_written(raw, &was.to_json()) {
                    degraded.push(not_rewritten(id));
                } else {
                    let json = want.to_json();
                    // Text blocks carry `rich_text`, media blocks their `caption`.
                    let field = if json[t].get("rich_text").is_some() {
                        "rich_text"
                    } else {
                        "caption"
                    };
                    let body = json!({ t: { field: json[t][field].clone() } });
                    update(m, id, body, degraded).await?;
                    crate::crash::point("links.block_updated");
                    n += 1;
                }
            }
            if want.children().iter().any(subtree_has_link) {
                let below = Level {
                    parent: id,
                    expected: want.children(),
                    written: was.children(),
                };
                n += rewrite_level(m, below, degraded).await?;
            }
        }
        Ok(n)
    })
}

/// Updates the rows of a written table whose cells hold page links (mentions or links), each only
/// while it holds what was written.
async fn rewrite_rows(
    m: &Migration,
    table: &str,
    (want, was): (&Block, &Block),
    degraded: &mut Vec<Degraded>,
) -> Result<u64, JobError> {
    let Block::Table { rows: typed, .. } = want else {
        return Ok(0);
    };
    let rows = body_json(m, table).await?;
    let rows_of = |b: &Block| {
        b.to_json()["table"]["children"]
            .as_array()
            .cloned()
            .unwrap_or_default()
    };
    let (cells_json, written_json) = (rows_of(want), rows_of(was));
    let mut n = 0;
    for (((cells, row), written), (got, raw)) in
        typed.iter().zip(&cells_json).zip(&written_json).zip(&rows)
    {
        let linked = cells
            .iter()
            .flatten()
            .any(|r| matches!(r.kind, RichKind::PageLink { .. }));
        if !linked {
            continue;
        }
        if !holds_what_was_written(raw, written) {
            degraded.push(not_rewritten(&got.id));
            continue;
        }
        let cells = row["table_row"]["cells"].clone();
        update(
            m,
            &got.id,
            json!({ "table_row": { "cells": cells } }),
            degraded,
        )
        .await?;
        n += 1;
    }
    Ok(n)
}

/// Rewrites one block; a value Notion refuses in it (e.g. a `mailto:` link beside the page link) is
/// degraded as on the first write and the update sent again.
async fn update(
    m: &Migration,
    id: &str,
    body: Value,
    degraded: &mut Vec<Degraded>,
) -> Result<(), JobError> {
    let mut one = [body];
    loop {
        match m.notion().update_block(id, one[0].clone()).await {
            Ok(_) => return Ok(()),
            Err(e) if e.class().next == Next::Degrade && degrade_one(&mut one, &e, degraded) => {}
            // As for any write: its class decides (a refusal of this page fails it, one of every
            // write stops the run, an outage parks it).
            Err(e) => return Err(JobError::from(e)),
        }
    }
}

/// Degrades the element a refusal names, if it names one, and notes what it degraded.
fn degrade_one(body: &mut [Value], e: &NotionError, degraded: &mut Vec<Degraded>) -> bool {
    match e {
        NotionError::Rejected { message, .. } => match degrade::degrade(body, message) {
            Some(d) => {
                degraded.extend(d);
                true
            }
            None => false,
        },
        NotionError::Refused { .. }
        | NotionError::Ambiguous { .. }
        | NotionError::GaveUp { .. }
        | NotionError::Blocked { .. }
        | NotionError::Unreachable(_)
        | NotionError::Pace(_)
        | NotionError::BadAnswer { .. } => false,
    }
}

#[cfg(test)]
mod tests {
    use super::{holds_what_was_written, Passes};
    use crate::convert::{Block, PageTarget, RichKind, RichText, TextBlock};

    fn para(runs: Vec<RichText>) -> Block {
        Block::Paragraph(TextBlock::new(runs))
    }

    fn link(target: Option<PageTarget>) -> RichText {
        RichText {
            kind: RichKind::PageLink {
                content: "Plan".into(),
                onenote_page_id: "{A}".into(),
                target,
            },
            annotations: Default::default(),
        }
    }

    #[test]
    fn a_block_is_rewritten_only_while_it_holds_the_text_written_there() {
        let written = para(vec![
            RichText::plain("See "),
            link(None),
            RichText::plain("."),
        ]);
        let target = PageTarget {
            id: "a-id".into(),
            title: "Plan".into(),
        };
        let resolved = para(vec![
            RichText::plain("See "),
            link(Some(target)),
            RichText::plain("."),
        ]);
        let w = written.to_json();
        // As written, and as a pass that already sent it left it.
        assert!(holds_what_was_written(&w, &w));
        assert!(holds_what_was_written(&resolved.to_json(), &w));
        // Another block at its position: its text is never replaced.
        let other = para(vec![RichText::plain("Meeting notes, "), link(None)]);
        assert!(!holds_what_was_written(&other.to_json(), &w));
        let empty = para(vec![]);
        assert!(!holds_what_was_written(&empty.to_json(), &w));
    }

    #[tokio::test]
    async fn a_second_pass_of_an_account_waits_for_the_first_and_other_accounts_do_not() {
        let passes = Passes::default();
        let first = passes.enter("alice").await;
        let other = tokio::time::timeout(std::time::Duration::ZERO, passes.enter("bob")).await;
        assert!(other.is_ok(), "another account's pass runs at once");
        let mut second = Box::pin(passes.enter("alice"));
        assert!(
            futures::poll!(second.as_mut()).is_pending(),
            "alice's second pass waits while her first runs"
        );
        drop(first);
        let _second = second.await;
    }
}
