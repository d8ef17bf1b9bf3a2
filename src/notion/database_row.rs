//! One OneNote page as a row of its section's database (layout `database`), through its item
//! record's lifecycle as a page of layout `pages` goes (`notion::item`): the intent is recorded
//! first, with the data source as its parent; the row is created with its properties and recorded
//! the moment Notion gives it (or, after a lost answer or a crash, found again by a query of the
//! data source for its title, among rows no other item holds); then its body is written through
//! the writer's steps and journal, resumed after a crash. `--update` sets the row's properties in
//! place and replaces its body.
//!
//! Subpages are written as pages inside their parent row's page, not as sub-items: sub-items need a
//! self-relation property, which would put every row's parent in the schema twice and is not
//! something a row can be created into by the API in one step.

use std::collections::{HashMap, HashSet};

use reqwest::Method;
use serde_json::{json, Value};

use super::client::{NotionClient, Retry};
use super::database::{self, names, Row};
use super::item::ItemRecord;
use super::writer::{display_title, Resource, WriteError, WriteStats, Writer};
use crate::convert::Block;
use crate::store::notion_items::{Intended, Rewriting, Writing};

/// Creates the row of `item` in `data_source` with `row`'s properties and writes `blocks` as its
/// body. `intent`: the record of an earlier attempt whose creation may have reached Notion (the
/// row is looked for first); without one the intent is recorded now, before the request.
/// `on_created` runs once the row is recorded (the next sibling's turn), before its body.
#[allow(clippy::too_many_arguments)]
pub async fn create(
    writer: &Writer,
    item: ItemRecord<'_>,
    intent: Option<Intended>,
    data_source: &str,
    row: &Row,
    blocks: &[Block],
    resources: &HashMap<String, Resource>,
    on_created: &(dyn Fn() + Send + Sync),
) -> Result<(Writing, WriteStats), WriteError> {
    let recover = intent.is_some();
    let title = display_title(&row.title);
    let (token, key, item_id, kind) = (
        item.token.clone(),
        item.account.to_owned(),
        item.item_id.to_owned(),
        item.kind,
    );
    let (ds, t) = (data_source.to_owned(), title.clone());
    let (intent, ours) = item
        .db
        .call(move |db| {
            let intent = match intent {
                Some(i) => i,
                None => db.record_intent(&token, &key, &item_id, kind, &ds, &t)?,
            };
            Ok::<_, WriteError>((intent, db.notion_children_of(&ds)?))
        })
        .await?;
    let client = writer.client();
    let found = if recover {
        find_lost_row(client, data_source, &title, &ours).await?
    } else {
        None
    };
    // The creation's answer is the row as Notion stored it (its fingerprint's page half).
    let (id, answer) = match found {
        Some(id) => (id, None),
        None => match database::create_row(client, data_source, row, &[]).await {
            Ok(v) => {
                crate::crash::point("database.row_created");
                let id = v["id"].as_str().map(str::to_owned).ok_or_else(|| {
                    WriteError::Mismatch(format!(
                        "Notion created a row in data source {data_source} without an id"
                    ))
                })?;
                (id, Some(v))
            }
            Err(e @ super::client::NotionError::Ambiguous { .. }) => {
                // A 503 that names the row it saved: created, no look-up needed (its answer is
                // not in hand, so the fingerprint reads the row back).
                if let Some(id) = e.saved_resource() {
                    (id.to_owned(), None)
                } else {
                    match find_lost_row(client, data_source, &title, &ours).await? {
                        Some(id) => (id, None),
                        // Not applied after all: the intent stays, and the next attempt looks
                        // again.
                        None => return Err(e.into()),
                    }
                }
            }
            Err(e) => return Err(e.into()),
        },
    };
    let (token, rid) = (item.token.clone(), id.clone());
    let writing = item
        .db
        .call(move |db| intent.created(db, &token, &rid))
        .await
        .map_err(|e| WriteError::Unrecorded(format!("Notion row {id}: {e}")))?;
    crate::crash::point("database.row_recorded");
    on_created();
    let mut stats = writer.resume_body(&id, blocks, resources).await?;
    if let Some(v) = answer {
        stats.answered.saw(v["last_edited_time"].as_str());
        stats.answered.page = Some(v);
    }
    Ok((writing, stats))
}

/// The row titled `title` in `data_source` that no item holds (`ours`), the last one created.
async fn find_lost_row(
    client: &NotionClient,
    data_source: &str,
    title: &str,
    ours: &HashSet<String>,
) -> Result<Option<String>, WriteError> {
    let mut last = None;
    let mut cursor = Value::Null;
    loop {
        let mut body = json!({
            "page_size": 100,
            "filter": {"property": names::NAME, "title": {"equals": title}},
        });
        if !cursor.is_null() {
            body["start_cursor"] = cursor.clone();
        }
        let v = client
            .call_json(
                Method::POST,
                &format!("/v1/data_sources/{data_source}/query"),
                Some(body),
                Retry::Safe,
                &format!("looking for a row in data source {data_source}"),
            )
            .await?;
        for r in v["results"].as_array().into_iter().flatten() {
            if let Some(id) = r["id"].as_str().filter(|id| !ours.contains(*id)) {
                last = Some(id.to_owned());
            }
        }
        match (v["has_more"].as_bool(), &v["next_cursor"]) {
            (Some(true), Value::String(c)) => cursor = Value::String(c.clone()),
            _ => return Ok(last),
        }
    }
}

/// `migrate --update` of a row: its properties set to `row`'s (title included), what was
/// journalled of its old body forgotten, and `blocks` written in place of the old body.
#[allow(clippy::too_many_arguments)]
pub async fn rewrite(
    writer: &Writer,
    item: ItemRecord<'_>,
    page: &Rewriting,
    old_title: &str,
    row: &Row,
    blocks: &[Block],
    resources: &HashMap<String, Resource>,
    listed: Option<Vec<super::listed::Listed>>,
) -> Result<WriteStats, WriteError> {
    database::update_row(writer.client(), page.page_id(), row).await?;
    let title = display_title(&row.title);
    let retitled = (title != old_title).then_some(title);
    super::item::replace_body(writer, item, page, retitled, blocks, resources, listed).await
}
