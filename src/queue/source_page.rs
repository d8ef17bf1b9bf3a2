//! The one Notion page a group or site gets under the target ("Design (SharePoint site)"), which
//! holds its notebooks. It is made while planning, before any of its notebooks is queued, with the
//! same steps as every page the queue creates: the intent is recorded first, and a creation whose
//! answer was lost is found again under the target by its title, so it exists exactly once however
//! often planning is interrupted.

use std::collections::HashMap;
use std::sync::Arc;

use super::RunError;
use crate::notion::client::NotionClient;
use crate::notion::item::{self, ItemRecord};
use crate::notion::writer::{NewPage, WriteError, Writer};
use crate::store::jobs::RunToken;
use crate::store::notion_items::{ItemKind, ItemState, Unfinished, Written};
use crate::store::Db;

/// The `item_id` of a source's own page in `notion_items`, under the source's inventory key (the
/// key names the group or site; no OneNote id is this word).
pub const SOURCE_ITEM: &str = "source";

/// The Notion page of the group or site with inventory key `key` under `target`: the recorded one,
/// or one created now with `title`, recorded as the run lock's holder `owner`. Its store calls run
/// off the runtime ([`Db::call`]).
pub async fn ensure(
    db: &Arc<Db>,
    owner: &RunToken,
    notion: &NotionClient,
    key: &str,
    target: &str,
    title: &str,
) -> Result<String, RunError> {
    let k = key.to_owned();
    let existing = db.call(move |db| db.notion_item(&k, SOURCE_ITEM)).await?;
    let (intent, parent) = match existing {
        None => (None, target.to_owned()),
        // Recorded intent without an id: an earlier run's creation may have reached Notion.
        Some(i) => match i.state {
            ItemState::Intended(intent) => (Some(intent), i.parent_notion_id),
            // Created, and stopped before it was recorded complete: a page without a body is
            // complete once created.
            ItemState::Writing(page) => {
                return complete(db, owner, Unfinished::Writing(page)).await
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
    complete(db, owner, Unfinished::Writing(page)).await
}

/// Records the source's page complete: nothing but the page, no body, no files, no report.
async fn complete(db: &Arc<Db>, owner: &RunToken, page: Unfinished) -> Result<String, RunError> {
    let owner = owner.clone();
    let done = db
        .call(move |db| page.written(db, &owner, &Written::default()))
        .await?;
    Ok(done.page_id().to_owned())
}
