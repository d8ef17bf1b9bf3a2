//! One OneNote item's Notion page written through its record's lifecycle
//! (`store::notion_items`): the intent recorded before the page is asked for, a creation whose
//! answer was lost found again under its parent, the page recorded the moment it exists, its body
//! written, resumed or replaced. The caller records the page complete with what was written
//! ([`Unfinished::written`]). The queue's pages and containers and a group's or site's own page
//! all go this one way.

use std::sync::{Arc, Mutex};

use super::listed::Listed;
use super::writer::{display_title, NewPage, WriteError, WriteStats, Writer};
use crate::store::jobs::RunToken;
use crate::store::notion_items::{Intended, ItemKind, Rewriting, Writing};
use crate::store::Db;

/// The item a page is written for, and where its lifecycle is recorded.
#[derive(Clone, Copy)]
pub struct ItemRecord<'a> {
    /// The state database, reached off the runtime ([`Db::call`]).
    pub db: &'a Arc<Db>,
    /// The run lock's token, presented by every write.
    pub token: &'a RunToken,
    /// The item's inventory key.
    pub account: &'a str,
    /// Its OneNote id.
    pub item_id: &'a str,
    /// What it is.
    pub kind: ItemKind,
}

/// Creates the item's page under `page.parent` and writes its body. `intent` is the record of an
/// earlier attempt whose creation may have reached Notion (its page is looked for first); without
/// one the intent is recorded now, before the request. The page is recorded as soon as Notion
/// gives it, then `on_created` runs (the next sibling's turn). Returns the page, its body written,
/// to be recorded complete.
///
/// The record of the created page is made from inside the writer's sync callback, so it is
/// submitted ([`Db::submit`]) rather than awaited: it runs before any store call made after it
/// (the next sibling's intent, the body's journal), and its outcome is awaited once the writer
/// returns.
pub async fn create(
    writer: &Writer,
    item: ItemRecord<'_>,
    intent: Option<Intended>,
    page: NewPage<'_>,
    on_created: &(dyn Fn() + Send + Sync),
) -> Result<(Writing, WriteStats), WriteError> {
    let recover = intent.is_some();
    let token = item.token.clone();
    let (key, item_id, kind) = (item.account.to_owned(), item.item_id.to_owned(), item.kind);
    let (parent, title) = (page.parent.to_owned(), display_title(page.title));
    let (intent, ours) = item
        .db
        .call(move |db| {
            let intent = match intent {
                Some(i) => i,
                None => db.record_intent(&token, &key, &item_id, kind, &parent, &title)?,
            };
            Ok::<_, WriteError>((intent, db.notion_children_of(&parent)?))
        })
        .await?;
    crate::crash::point("item.intent_recorded");
    let intent = Mutex::new(Some(intent));
    type Recorded = tokio::sync::oneshot::Receiver<Result<Writing, WriteError>>;
    let recorded: Mutex<Option<Recorded>> = Mutex::new(None);
    let record = |id: &str| {
        let (tx, rx) = tokio::sync::oneshot::channel();
        match intent.lock().expect("not poisoned").take() {
            Some(i) => {
                let (token, id) = (item.token.clone(), id.to_owned());
                item.db.submit(move |db| {
                    let r = i
                        .created(db, &token, &id)
                        .map_err(|e| unrecorded(&id, &e.to_string()));
                    crate::crash::point("item.page_recorded");
                    let _ = tx.send(r);
                });
            }
            None => {
                let _ = tx.send(Err(unrecorded(id, "its item's page was created already")));
            }
        }
        *recorded.lock().expect("not poisoned") = Some(rx);
        on_created();
    };
    let written = writer.create_page(page, &ours, recover, &record).await;
    let pending = recorded.lock().expect("not poisoned").take();
    let recorded = match pending {
        Some(rx) => Some(rx.await.unwrap_or_else(|_| {
            Err(WriteError::Unrecorded(
                "the record of a created page was never made".into(),
            ))
        })),
        None => None,
    };
    match (recorded, written) {
        (Some(Ok(page)), Ok((_, stats))) => Ok((page, stats)),
        // Going on without the record could create the page again: that comes first.
        (Some(Err(e)), _) => Err(e),
        (Some(Ok(_)), Err(e)) | (None, Err(e)) => Err(e),
        (None, Ok((id, _))) => Err(unrecorded(
            &id,
            "Notion gave it without a record being made",
        )),
    }
}

/// Replaces the body of the item's page `page` (`migrate --update`): a title renamed in OneNote
/// since `old_title` follows, what was journalled of the old body is forgotten, and the new body
/// `new` is written in place of the old one.
pub async fn rewrite(
    writer: &Writer,
    item: ItemRecord<'_>,
    page: &Rewriting,
    old_title: &str,
    new: NewPage<'_>,
    listed: Option<Vec<Listed>>,
) -> Result<WriteStats, WriteError> {
    let title = display_title(new.title);
    if title != old_title {
        writer.client().set_title(page.page_id(), &title).await?;
        crate::crash::point("rewrite.retitled");
    }
    let retitled = (title != old_title).then_some(title);
    replace_body(
        writer,
        item,
        page,
        retitled,
        new.blocks,
        new.resources,
        listed,
    )
    .await
}

/// The end of a rewrite, once Notion holds the new title (`retitled`, when it changed): the title
/// recorded, what was journalled of the old body forgotten, and `blocks` written in its place.
/// A page's rewrite and a database row's share it.
pub(crate) async fn replace_body(
    writer: &Writer,
    item: ItemRecord<'_>,
    page: &Rewriting,
    retitled: Option<String>,
    blocks: &[crate::convert::Block],
    resources: &std::collections::HashMap<String, super::writer::Resource>,
    listed: Option<Vec<Listed>>,
) -> Result<WriteStats, WriteError> {
    let (token, key, item_id) = (
        item.token.clone(),
        item.account.to_owned(),
        item.item_id.to_owned(),
    );
    let page_rec = page.clone();
    item.db
        .call(move |db| {
            if let Some(title) = retitled {
                page_rec.retitled(db, &token, &title)?;
            }
            // The old body's blocks go: nothing recorded of them holds any more.
            db.forget_journal(&token, &key, &item_id)
        })
        .await?;
    crate::crash::point("rewrite.journal_forgotten");
    writer
        .replace_body(page.page_id(), blocks, resources, listed)
        .await
}

fn unrecorded(page: &str, why: &str) -> WriteError {
    WriteError::Unrecorded(format!("Notion page {page}: {why}"))
}
