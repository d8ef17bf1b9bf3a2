//! The one Notion page a group or site gets under the target ("Design (SharePoint site)"), which
//! holds its notebooks. It is made while planning, before any of its notebooks is queued, with the
//! same steps as every page the queue creates: the intent is recorded first, and a creation whose
//! answer was lost is found again under the target by its title, so it exists exactly once however
//! often planning is interrupted.

use std::collections::HashMap;

use super::RunError;
use crate::notion::client::NotionClient;
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
    // Recorded intent without an id: an earlier run's creation may have reached Notion.
    let recover = existing.is_some();
    let (intent, parent) = match existing {
        None => (
            db.record_intent(owner, key, SOURCE_ITEM, ItemKind::Source, target, title)?,
            target.to_owned(),
        ),
        Some(i) => match i.state {
            ItemState::Intended(intent) => (intent, i.parent_notion_id),
            // Created, and killed before it was recorded complete: a page without a body is
            // complete once created.
            ItemState::Writing(page) => {
                return Ok(page
                    .written(db, owner, &Written::default())?
                    .page_id()
                    .to_owned())
            }
            ItemState::Rewriting(page) => return Ok(page.page_id().to_owned()),
            ItemState::Complete(page) => return Ok(page.page_id().to_owned()),
        },
    };
    let ours = db.notion_children_of(&parent)?;
    let intent = std::sync::Mutex::new(Some(intent));
    let recorded: std::sync::Mutex<Option<Result<_, String>>> = std::sync::Mutex::new(None);
    let record = |id: &str| {
        let r = match intent.lock().expect("not poisoned").take() {
            Some(i) => i.created(db, owner, id).map_err(|e| e.to_string()),
            None => Err(format!("the page of {key} was created twice")),
        };
        *recorded.lock().expect("not poisoned") = Some(r);
    };
    let writer = Writer::new(notion.clone(), super::no_fetch(), 0);
    let created = writer
        .create_page(
            NewPage {
                parent: &parent,
                title,
                blocks: &[],
                resources: &HashMap::new(),
            },
            &ours,
            recover,
            &record,
        )
        .await;
    let page = match recorded.lock().expect("not poisoned").take() {
        Some(Ok(page)) => Some(page),
        Some(Err(e)) => return Err(RunError::Unrecorded(e)),
        None => None,
    };
    let (id, _) = created.map_err(|e| match e {
        WriteError::Notion(n) => RunError::Notion(n),
        WriteError::Fetch(g) => RunError::Graph(g),
        // A page without a body has nothing to mismatch; should it happen, it is a bug.
        WriteError::Mismatch(m) => RunError::Worker(m),
        WriteError::Store(s) => RunError::Store(s),
    })?;
    // Nothing but the page: no body, no files, no report.
    let page = page.ok_or_else(|| {
        RunError::Unrecorded(format!("the page of {key} was created without its record"))
    })?;
    page.written(db, owner, &Written::default())?;
    Ok(id)
}
