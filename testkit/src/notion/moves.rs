//! `POST /v1/pages/{page_id}/move` [D: reference/move-page, added to the API on 2026-01-15, not
//! tied to a `Notion-Version`]: a page (never a database or another block) goes under another page
//! or into a data source, keeping its id, its blocks and its child pages.
//!
//! The refusals and their messages are the reference's documented 400 answers ("Same parent",
//! "Self parent", "Moving page under its own descendant", "Page in trash") and its 404. Where the
//! reference is silent, the stricter plausible reading is modelled, each said where it is coded:
//! - a trashed *parent* is refused like any edit of a trashed block ("Can't edit block that is
//!   archived"): the move adds a `child_page` to it;
//! - a database id under `parent.page_id` is refused, although the reference allows it for a
//!   database with a single data source ("not recommended"): a client must name the data source;
//! - the moved page goes last among its new parent's children (the reference says nothing of
//!   position, and the API has no position for a move);
//! - both the old and the new parent are stamped as edited by the writer, as a page's creation
//!   stamps its parent.

use serde_json::{Map, Value};

use super::error::ApiError;
use super::store::model::{NodeKind, ParentRef};
use super::store::Store;

/// The message the reference gives for a database or block id in the path.
const NOT_A_PAGE: &str =
    "Moving databases or other block types in the API is not currently supported.";

fn invalid(what: impl std::fmt::Display) -> ApiError {
    ApiError::validation(format!("body failed validation: {what}"))
}

fn uuid_of(raw: Option<&Value>, path: &str) -> Result<String, ApiError> {
    let raw = raw
        .and_then(Value::as_str)
        .ok_or_else(|| invalid(format!("{path} should be a string.")))?;
    uuid::Uuid::parse_str(raw)
        .map(|u| u.to_string())
        .map_err(|_| {
            invalid(format!(
                "{path} should be a valid uuid, instead was `\"{raw}\"`."
            ))
        })
}

/// The new parent a move's body names: `{"parent": {"type": "page_id", "page_id": …}}` or the
/// same with `data_source_id`. `type` may be left out (the SDK's example does); a `type` naming the
/// other key, both keys, neither, or any other key is refused.
pub(crate) fn parse_target(body: &Map<String, Value>) -> Result<ParentRef, ApiError> {
    if let Some(k) = body.keys().find(|k| k.as_str() != "parent") {
        return Err(invalid(format!("body.{k} should be not present.")));
    }
    let parent = match body.get("parent") {
        Some(Value::Object(o)) => o,
        Some(_) => return Err(invalid("body.parent should be an object.")),
        None => {
            return Err(invalid(
                "body.parent should be defined, instead was `undefined`.",
            ))
        }
    };
    if let Some(k) = parent
        .keys()
        .find(|k| !["type", "page_id", "data_source_id"].contains(&k.as_str()))
    {
        return Err(invalid(format!("body.parent.{k} should be not present.")));
    }
    let key = match (
        parent.contains_key("page_id"),
        parent.contains_key("data_source_id"),
    ) {
        (true, false) => "page_id",
        (false, true) => "data_source_id",
        _ => {
            return Err(invalid(
                "body.parent should have exactly one of `page_id` or `data_source_id`.",
            ))
        }
    };
    match parent.get("type") {
        None => {}
        Some(Value::String(t)) if t == key => {}
        Some(t) => {
            return Err(invalid(format!(
                "body.parent.type should be `\"{key}\"` for body.parent.{key}, instead was `{t}`."
            )))
        }
    }
    let id = uuid_of(parent.get(key), &format!("body.parent.{key}"))?;
    Ok(match key {
        "page_id" => ParentRef::Page(id),
        _ => ParentRef::DataSource(id),
    })
}

/// Whether page `id` may go to `to`: the refusals of the reference, in the order a request meets
/// them (what is moved, then where to).
pub(crate) fn check(store: &Store, id: &str, to: &ParentRef) -> Result<(), ApiError> {
    let n = store
        .get(id)
        .ok_or_else(|| ApiError::not_found("page", id))?;
    if !matches!(n.kind, NodeKind::Page { .. }) {
        return Err(ApiError::validation(NOT_A_PAGE));
    }
    if store.trashed(id) {
        return Err(ApiError::validation(format!(
            "Object {id} is in trash and cannot be moved"
        )));
    }
    let target_node = match to {
        ParentRef::Page(p) => {
            let t = store.get(p).ok_or_else(|| ApiError::not_found("page", p))?;
            match t.kind {
                NodeKind::Page { .. } => {}
                // The reference lets a single-source database's id stand here ("not
                // recommended"); the stricter reading refuses it, so a client names the source.
                NodeKind::Database { .. } => {
                    return Err(invalid(format!(
                        "body.parent.page_id should be a page, instead was the database `{p}`; move a page into a database with body.parent.data_source_id."
                    )))
                }
                NodeKind::Block { .. } => {
                    return Err(invalid(format!(
                        "body.parent.page_id should be a page, instead was the block `{p}`."
                    )))
                }
            }
            p.clone()
        }
        ParentRef::DataSource(ds) => store
            .sources
            .get(ds)
            .map(|d| d.database_id.clone())
            .filter(|db| store.get(db).is_some())
            .ok_or_else(|| ApiError::not_found("data source", ds))?,
        ParentRef::Workspace | ParentRef::Block(_) => {
            return Err(invalid(
                "body.parent should have exactly one of `page_id` or `data_source_id`.",
            ))
        }
    };
    if store.trashed(&target_node) {
        // Not in the reference: the move adds a child to the parent, and edits of a trashed block
        // are refused so.
        return Err(ApiError::validation(
            "Can't edit block that is archived. You must unarchive the block before editing.",
        ));
    }
    if let ParentRef::Page(p) = to {
        if p == id {
            return Err(ApiError::validation(format!(
                "Parent ID must be different from the child ID: {id}"
            )));
        }
        if store.is_under(p, id) {
            return Err(ApiError::validation(format!(
                "New parent {p} cannot be under the hierarchy of child {id}"
            )));
        }
    }
    if &n.parent == to {
        return Err(ApiError::validation(
            "New parent must be different from the current parent",
        ));
    }
    Ok(())
}
