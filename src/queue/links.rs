//! The link pass: once the pages that links point at exist in Notion, the blocks that hold links to
//! them are updated in place. Only pages that had links to not-yet-migrated pages are touched, and
//! only the blocks on the way to a link are listed.

use serde_json::{json, Value};

use super::{notion_url, JobError, Migration};
use crate::convert::{Block, RichKind};
use crate::graph::Caller;

/// Rewrites the pending links of `who`'s pages; returns how many blocks were updated.
pub(super) async fn rewrite_pending(m: &Migration, who: &Caller) -> Result<u64, JobError> {
    let pages = m.db().pages_with_pending_links(&who.account)?;
    let migrated = m.db().migrated_pages(&who.account)?;
    let mut updated = 0;
    for item in pages {
        let Some(notion_id) = item.notion_page_id.clone() else {
            continue;
        };
        let label = format!("page {:?} ({})", item.title, item.item_id);
        let last_modified = m.db().page_last_modified(&who.account, &item.item_id)?;
        // With its drawings, as written: blocks are matched to Notion's by position.
        let (mut page, _) = m
            .fetch_page(who, &item.item_id, &label, last_modified)
            .await?;
        let mut still_missing = false;
        page.resolve_page_links(|id| match migrated.get(id) {
            Some(n) => Some(notion_url(n)),
            None => {
                still_missing = true;
                None
            }
        });
        updated += rewrite_level(m, &notion_id, &page.blocks).await?;
        m.db()
            .set_pending_links(&who.account, &item.item_id, still_missing)?;
    }
    Ok(updated)
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
    parent: &'a str,
    expected: &'a [Block],
) -> futures::future::BoxFuture<'a, Result<u64, JobError>> {
    Box::pin(async move {
        if !expected.iter().any(subtree_has_link) {
            return Ok(0);
        }
        let actual: Vec<Value> = m
            .notion()
            .children(parent)
            .await
            .map_err(|e| JobError::Transient(e.to_string()))?
            .into_iter()
            .filter(|b| b["type"] != "child_page")
            .collect();
        let mut n = 0;
        for (want, got) in expected.iter().zip(&actual) {
            let id = got["id"].as_str().unwrap_or_default();
            if has_link(want) && want.type_name() != "table" {
                let t = want.type_name();
                let json = want.to_json();
                let body = json!({ t: { "rich_text": json[t]["rich_text"].clone() } });
                m.notion()
                    .update_block(id, body)
                    .await
                    .map_err(|e| JobError::Transient(e.to_string()))?;
                n += 1;
            }
            if want.children().iter().any(subtree_has_link) {
                n += rewrite_level(m, id, want.children()).await?;
            }
        }
        Ok(n)
    })
}
