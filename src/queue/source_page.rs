//! The one Notion page a group or site gets under the target ("Design (SharePoint site)"), which
//! holds its notebooks. It is made while planning, before any of its notebooks is queued, with the
//! same steps as every page the queue creates: the intent is recorded first, and a creation whose
//! answer was lost is found again under the target by its title, so it exists exactly once however
//! often planning is interrupted.

use std::collections::HashMap;

use super::RunError;
use crate::notion::client::NotionClient;
use crate::notion::item::{self, ItemRecord};
use crate::notion::writer::{NewPage, WriteError, Writer};
use crate::store::jobs::RunToken;
use crate::store::notion_items::{ItemKind, ItemState, Written};
use crate::store::Db;

/// The `item_id` of a source's own page in `notion_items`, under the source's inventory key (the
/// key names the group or site; no OneNote id is this word).
pub const SOURCE_ITEM: &str = "source";

/// The Notion page of the group or site with inventory key `key` under `target`: the recorded one,
/// or one created now with `title`, recorded as the run lock's holder `owner`.
pub async fn ensure(
    db: &Db,
    owner: &RunToken,
    notion: &NotionClient,
    key: &str,
    target: &str,
    title: &str,
) -> Result<String, RunError> {
    let existing = db.notion_item(key, SOURCE_ITEM)?;
    let (intent, parent) = match existing {
        None => (None, target.to_owned()),
        // Recorded intent without an id: an earlier run's creation may have reached Notion.
        Some(i) => match i.state {
            ItemState::Intended(intent) => (Some(intent), i.parent_notion_id),
            // Created, and stopped before it was recorded complete: a page without a body is
            // complete once created.
            ItemState::Writing(page) => {
                let done = page.written(db, owner, &Written::default())?;
                return Ok(done.page_id().to_owned());
            }
            ItemState::Rewriting(page) => return Ok(page.page_id().to_owned()),
            ItemState::Complete(page) => return Ok(page.page_id().to_owned()),
        },
    };
    let record = ItemRecord {
        db,
        token: owner,
        account: key,
        item_id: SOURCE_ITEM,
        kind: ItemKind::Source,
    };
    let writer = Writer::new(notion.clone(), super::no_fetch(), 0);
    let new = NewPage {
        parent: &parent,
        title,
        blocks: &[],
        resources: &HashMap::new(),
    };
    let (page, _) = item::create(&writer, record, intent, new, &|| {})
        .await
        .map_err(|e| match e {
            WriteError::Notion(n) => RunError::Notion(n),
            WriteError::Fetch(g) => RunError::Graph(g),
            // A page without a body has nothing to mismatch; should it happen, it is a bug.
            WriteError::Mismatch(m) => RunError::Worker(m),
            WriteError::Store(s) => RunError::Store(s),
            WriteError::Unrecorded(u) => RunError::Unrecorded(u),
        })?;
    // Nothing but the page: no body, no files, no report.
    let done = page.written(db, owner, &Written::default())?;
    Ok(done.page_id().to_owned())
}
