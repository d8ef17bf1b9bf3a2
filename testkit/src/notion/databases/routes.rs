//! The database and data source operations, each run under the state lock like every other:
//! `POST /v1/databases`, `GET /v1/databases/{id}`, `GET`/`PATCH /v1/data_sources/{id}`,
//! `POST /v1/data_sources/{id}/query`, and rows through `POST /v1/pages` and `PATCH
//! /v1/pages/{id}` [D: reference/database-create, reference/retrieve-a-data-source,
//! reference/update-a-data-source, reference/query-a-data-source, reference/post-page].

use std::collections::BTreeMap;

use serde_json::{json, Map, Value};

use super::{schema, values};
use crate::notion::error::ApiError;
use crate::notion::store::model::{normalise_rich_text_item, NodeKind};
use crate::notion::validate;
use crate::notion::{Inner, Shared};

/// The first API version with data sources: older versions have no `/v1/data_sources` routes.
pub(crate) const DATA_SOURCES_SINCE: &str = "2025-09-03";

fn invalid(path: &str, what: impl std::fmt::Display) -> ApiError {
    ApiError::validation(format!("body failed validation: {path} {what}"))
}

fn only_keys(obj: &Map<String, Value>, path: &str, keys: &[&str]) -> Result<(), ApiError> {
    for k in obj.keys() {
        if !keys.contains(&k.as_str()) {
            return Err(invalid(&format!("{path}.{k}"), "should be not present."));
        }
    }
    Ok(())
}

fn uuid_at(v: Option<&Value>, path: &str) -> Result<String, ApiError> {
    let raw = v
        .and_then(Value::as_str)
        .ok_or_else(|| invalid(path, "should be defined, instead was `undefined`."))?;
    uuid::Uuid::parse_str(raw)
        .map(|u| u.to_string())
        .map_err(|_| invalid(path, "should be a valid uuid."))
}

fn rich_text(v: Option<&Value>, path: &str) -> Result<Vec<Value>, ApiError> {
    let Some(v) = v else {
        return Ok(Vec::new());
    };
    validate::validate_rich_text(v, path).map_err(|e| ApiError::body(&e))?;
    Ok(v.as_array()
        .map(|a| a.iter().map(normalise_rich_text_item).collect())
        .unwrap_or_default())
}

/// The database object.
pub(crate) fn render_database(g: &Inner, id: &str) -> Option<Value> {
    let n = g.store.get(id)?;
    let NodeKind::Database { title, data_source } = &n.kind else {
        return None;
    };
    let ds = g.store.sources.get(data_source)?;
    let parent = match &n.parent {
        crate::notion::store::model::ParentRef::Page(p) => json!({"type": "page_id", "page_id": p}),
        _ => json!({"type": "workspace", "workspace": true}),
    };
    Some(json!({
        "object": "database",
        "id": n.id,
        "title": title,
        "description": [],
        "parent": parent,
        "is_inline": true,
        "archived": n.in_trash,
        "in_trash": n.in_trash,
        "is_locked": false,
        "created_time": crate::notion::store::model::iso_minute(n.created_ms),
        "last_edited_time": crate::notion::store::model::iso_minute(n.edited_ms),
        "data_sources": [{"id": ds.id, "name": crate::notion::store::model::plain_text(&ds.title)}],
        "icon": null,
        "cover": null,
        "url": format!("https://www.notion.so/{}", n.id.replace('-', "")),
        "public_url": null,
    }))
}

/// Databases are modelled as Notion has them since [`DATA_SOURCES_SINCE`] only.
fn models_databases(version: &str) -> Result<(), ApiError> {
    if version < DATA_SOURCES_SINCE {
        return Err(ApiError::validation(format!(
            "The test server models databases for Notion-Version {DATA_SOURCES_SINCE} and later only (`initial_data_source`), instead was `{version}`."
        )));
    }
    Ok(())
}

/// `POST /v1/databases`: a database in a page, with its first data source.
pub(crate) fn create_database(
    g: &mut Inner,
    body: &Map<String, Value>,
    version: &str,
    now: i64,
) -> Result<Value, ApiError> {
    models_databases(version)?;
    only_keys(
        body,
        "body",
        &[
            "parent",
            "title",
            "description",
            "is_inline",
            "initial_data_source",
            "icon",
            "cover",
        ],
    )?;
    let parent = body
        .get("parent")
        .and_then(Value::as_object)
        .ok_or_else(|| invalid("body.parent", "should be defined, instead was `undefined`."))?;
    only_keys(parent, "body.parent", &["type", "page_id"])?;
    let parent_id = uuid_at(parent.get("page_id"), "body.parent.page_id")?;
    let is_page = g
        .store
        .get(&parent_id)
        .is_some_and(|n| matches!(n.kind, NodeKind::Page { .. }));
    if !is_page {
        return Err(ApiError::not_found("page", &parent_id));
    }
    if g.store.trashed(&parent_id) {
        return Err(ApiError::validation(
            "Can't edit block that is archived. You must unarchive the block before editing.",
        ));
    }
    let title = rich_text(body.get("title"), "body.title")?;
    rich_text(body.get("description"), "body.description")?;
    if let Some(v) = body.get("is_inline") {
        if !v.is_boolean() {
            return Err(invalid("body.is_inline", "should be a boolean."));
        }
    }
    let props = match body.get("initial_data_source") {
        None => json!({"Name": {"title": {}}}),
        Some(Value::Object(o)) => {
            only_keys(o, "body.initial_data_source", &["properties"])?;
            o.get("properties")
                .cloned()
                .unwrap_or_else(|| json!({"Name": {"title": {}}}))
        }
        Some(_) => return Err(invalid("body.initial_data_source", "should be an object.")),
    };
    let schema = schema::parse_new(
        &props,
        "body.initial_data_source.properties",
        &mut g.store.sources.ids,
    )?;
    let (db, _) = g.store.create_database(&parent_id, title, schema, now);
    Ok(render_database(g, &db).expect("database just created"))
}

fn data_source_of<'a>(g: &'a Inner, id: &str) -> Result<&'a super::DataSource, ApiError> {
    let ds = g
        .store
        .sources
        .get(id)
        .ok_or_else(|| ApiError::not_found("data source", id))?;
    if g.store.get(&ds.database_id).is_none() {
        return Err(ApiError::not_found("data source", id));
    }
    Ok(ds)
}

fn render_source(g: &Inner, id: &str) -> Result<Value, ApiError> {
    let ds = data_source_of(g, id)?;
    let db = g.store.get(&ds.database_id).expect("checked above");
    let parent = match &db.parent {
        crate::notion::store::model::ParentRef::Page(p) => json!({"type": "page_id", "page_id": p}),
        _ => json!({"type": "workspace", "workspace": true}),
    };
    Ok(ds.render(&parent, g.store.trashed(&db.id)))
}

/// `GET /v1/data_sources/{id}`.
pub(crate) fn get_data_source(g: &Inner, id: &str) -> Result<Value, ApiError> {
    render_source(g, id)
}

/// `PATCH /v1/data_sources/{id}`: its title or schema.
pub(crate) fn update_data_source(
    g: &mut Inner,
    id: &str,
    body: &Map<String, Value>,
    now: i64,
) -> Result<Value, ApiError> {
    only_keys(
        body,
        "body",
        &["properties", "title", "description", "icon", "in_trash"],
    )?;
    data_source_of(g, id)?;
    let db_id = g
        .store
        .sources
        .get(id)
        .expect("checked")
        .database_id
        .clone();
    if g.store.trashed(&db_id) && body.get("in_trash") != Some(&Value::Bool(false)) {
        return Err(ApiError::validation(
            "Can't edit block that is archived. You must unarchive the block before editing.",
        ));
    }
    let title = match body.get("title") {
        Some(t) => Some(rich_text(Some(t), "body.title")?),
        None => None,
    };
    let mut props = g.store.sources.get(id).expect("checked").properties.clone();
    if let Some(p) = body.get("properties") {
        schema::apply_update(&mut props, p, &mut g.store.sources.ids)?;
    }
    let ds = g.store.sources.get_mut(id).expect("checked");
    // Values of removed properties and options go with them.
    for vals in ds.values.values_mut() {
        vals.retain(|pid, v| {
            let Some(p) = props.iter().find(|p| &p.id == pid) else {
                return false;
            };
            if let Value::Array(a) = v {
                if p.ty == "multi_select" {
                    a.retain(|o| {
                        p.options
                            .iter()
                            .any(|x| Some(x.id.as_str()) == o["id"].as_str())
                    });
                }
            }
            true
        });
    }
    ds.properties = props;
    if let Some(t) = title {
        ds.title = t.clone();
        if let Some(NodeKind::Database { title, .. }) = g.store.get_mut(&db_id).map(|n| &mut n.kind)
        {
            *title = t;
        }
    }
    let ds = g.store.sources.get_mut(id).expect("checked");
    ds.edited_ms = now;
    if let Some(Value::Bool(b)) = body.get("in_trash") {
        if let Some(n) = g.store.get_mut(&db_id) {
            n.in_trash = *b;
        }
    }
    render_source(g, id)
}

/// A filter the test server evaluates: one property compared with `equals` (title, rich text, url,
/// number, checkbox) or a multi-select `contains`; anything else is refused rather than guessed.
fn matches(filter: &Value, row: &Value) -> Result<bool, ApiError> {
    let obj = filter
        .as_object()
        .ok_or_else(|| invalid("body.filter", "should be an object."))?;
    let key = obj.get("property").and_then(Value::as_str).ok_or_else(|| {
        invalid(
            "body.filter.property",
            "should be defined, instead was `undefined`.",
        )
    })?;
    let prop = row.get(key).ok_or_else(|| {
        ApiError::validation(format!("Could not find property with name or id: {key}"))
    })?;
    let ty = prop["type"].as_str().unwrap_or("");
    let cond = obj
        .get(ty)
        .and_then(Value::as_object)
        .ok_or_else(|| ApiError::validation(format!("body failed validation: body.filter.{ty} should be defined for property `{key}` of type `{ty}`.")))?;
    let value = &prop[ty];
    match (ty, cond.iter().next()) {
        ("title" | "rich_text", Some((op, Value::String(s)))) if op == "equals" => {
            Ok(values::plain(ty, value) == *s)
        }
        ("url" | "number" | "checkbox", Some((op, x))) if op == "equals" => Ok(value == x),
        ("multi_select", Some((op, Value::String(s)))) if op == "contains" => Ok(value
            .as_array()
            .is_some_and(|a| a.iter().any(|o| o["name"].as_str() == Some(s)))),
        _ => Err(ApiError::validation(format!(
            "The test server does not model this filter on `{ty}` properties: {filter}"
        ))),
    }
}

/// `POST /v1/data_sources/{id}/query`: its visible rows in creation order, paged.
pub(crate) fn query(
    sh: &Shared,
    g: &Inner,
    id: &str,
    body: &Map<String, Value>,
) -> Result<Value, ApiError> {
    only_keys(
        body,
        "body",
        &[
            "filter",
            "sorts",
            "start_cursor",
            "page_size",
            "filter_properties",
            "in_trash",
        ],
    )?;
    let ds = data_source_of(g, id)?;
    if body
        .get("sorts")
        .is_some_and(|s| s.as_array().is_none_or(|a| !a.is_empty()))
    {
        return Err(ApiError::validation(
            "The test server does not model sorts; rows come in creation order.",
        ));
    }
    let page_size = match body.get("page_size") {
        None => 100,
        Some(v) => v
            .as_u64()
            .filter(|n| (1..=100).contains(n))
            .ok_or_else(|| {
                invalid(
                    "body.page_size",
                    format!("should be a number between 1 and 100, instead was `{v}`."),
                )
            })? as usize,
    };
    let rows = g.store.visible_rows(&ds.id);
    let mut rendered: Vec<Value> = Vec::with_capacity(rows.len());
    for r in rows {
        let page = g.store.render_page(r, &sh.bot_id);
        if let Some(f) = body.get("filter") {
            if !matches(f, &page["properties"])? {
                continue;
            }
        }
        rendered.push(page);
    }
    let from = match body.get("start_cursor") {
        None | Some(Value::Null) => 0,
        Some(c) => {
            let c = c.as_str().unwrap_or("");
            rendered
                .iter()
                .position(|p| p["id"].as_str() == Some(c))
                .ok_or_else(|| ApiError::validation("The start_cursor provided is invalid."))?
        }
    };
    let end = (from + page_size).min(rendered.len());
    let next = rendered.get(end).map(|p| p["id"].clone());
    let results: Vec<Value> = rendered[from..end].to_vec();
    Ok(json!({
        "object": "list",
        "results": results,
        "next_cursor": next,
        "has_more": next.is_some(),
        "type": "page_or_data_source",
        "page_or_data_source": {},
    }))
}

/// The row part of `POST /v1/pages` whose parent is a data source: its values checked against the
/// schema; returns the new row's id.
pub(crate) fn create_row(
    g: &mut Inner,
    ds_id: &str,
    body: &Map<String, Value>,
    icon: Value,
    cover: Value,
    now: i64,
) -> Result<String, ApiError> {
    let ds = data_source_of(g, ds_id)?;
    if g.store.trashed(&ds.database_id) {
        return Err(ApiError::validation(
            "Can't edit block that is archived. You must unarchive the block before editing.",
        ));
    }
    let vals = match body.get("properties") {
        Some(p) => values::parse(&ds.properties, p)?,
        None => Default::default(),
    };
    let mut vals = vals;
    let title = match vals.remove("title") {
        Some(Value::Array(t)) => t,
        _ => Vec::new(),
    };
    Ok(g.store.create_row(ds_id, title, vals, icon, cover, now))
}

/// A row's checked values by property id, and its new title when the title was among them.
pub(crate) type RowUpdate = (BTreeMap<String, Value>, Option<Vec<Value>>);

/// A row's values for `PATCH /v1/pages/{id}`, checked against the schema but not applied yet
/// (the rest of the request may still be refused): the values by property id and the new title
/// when the title was among them.
pub(crate) fn parse_row_update(
    g: &Inner,
    ds_id: &str,
    props: &Value,
) -> Result<RowUpdate, ApiError> {
    let ds = data_source_of(g, ds_id)?;
    let mut vals = values::parse(&ds.properties, props)?;
    let title = match vals.remove("title") {
        Some(Value::Array(t)) => Some(t),
        _ => None,
    };
    Ok((vals, title))
}

/// Applies values from [`parse_row_update`]: they replace those properties' values.
pub(crate) fn apply_row_update(
    g: &mut Inner,
    ds_id: &str,
    row: &str,
    vals: BTreeMap<String, Value>,
) {
    if let Some(ds) = g.store.sources.get_mut(ds_id) {
        ds.values.entry(row.to_owned()).or_default().extend(vals);
    }
}

/// `PATCH /v1/databases/{id}` [D: reference/update-database]: the database's own attributes since
/// 2025-09-03 (its schema is its data source's). Modelled: `title` (the single data source's name
/// follows it, as `PATCH /v1/data_sources/{id}` does the other way), `description`, `icon`,
/// `cover` and `is_inline` (checked, not kept), and `in_trash`, which hides the database from its
/// page's children and its rows from every listing and query. `archived` is refused from the
/// pinned version on, as for pages. `parent` (moving a database) and `is_locked` are documented
/// but not modelled: refused, rather than guessed.
pub(crate) fn update_database(
    g: &mut Inner,
    id: &str,
    body: &Map<String, Value>,
    version: &str,
    now: i64,
) -> Result<Value, ApiError> {
    models_databases(version)?;
    let modern = version >= crate::notion::PINNED_VERSION;
    let mut keys = vec![
        "title",
        "description",
        "icon",
        "cover",
        "is_inline",
        "in_trash",
    ];
    if !modern {
        keys.push("archived");
    }
    if modern && body.contains_key("archived") {
        return Err(invalid(
            "body.archived",
            "should be not present; use `in_trash`.",
        ));
    }
    if let Some(k) = ["parent", "is_locked"]
        .into_iter()
        .find(|k| body.contains_key(*k))
    {
        return Err(ApiError::validation(format!(
            "The test server does not model `{k}` on PATCH /v1/databases/{{id}}."
        )));
    }
    only_keys(body, "body", &keys)?;
    let n = g
        .store
        .get(id)
        .filter(|n| matches!(n.kind, NodeKind::Database { .. }))
        .ok_or_else(|| ApiError::not_found("database", id))?;
    let trash = match body.get("in_trash").or_else(|| body.get("archived")) {
        None => None,
        Some(Value::Bool(b)) => Some(*b),
        Some(_) => return Err(invalid("body.in_trash", "should be a boolean.")),
    };
    let edits = body.keys().any(|k| k != "in_trash" && k != "archived");
    if edits && trash != Some(false) && g.store.trashed(&n.id) {
        return Err(ApiError::validation(
            "Can't edit block that is archived. You must unarchive the block before editing.",
        ));
    }
    let title = match body.get("title") {
        Some(t) => Some(rich_text(Some(t), "body.title")?),
        None => None,
    };
    rich_text(body.get("description"), "body.description")?;
    if let Some(v) = body.get("is_inline") {
        if !v.is_boolean() {
            return Err(invalid("body.is_inline", "should be a boolean."));
        }
    }
    let uploads = &g.uploads;
    let check = |uid: &str| uploads.state(uid, now);
    if let Some(i) = body.get("icon") {
        validate::validate_icon_with(i, "body.icon", &check).map_err(|e| ApiError::body(&e))?;
    }
    if let Some(c) = body.get("cover") {
        validate::validate_cover_with(c, "body.cover", &check).map_err(|e| ApiError::body(&e))?;
    }
    let n = g.store.get_mut(id).expect("checked above");
    let mut source = None;
    if let NodeKind::Database {
        title: t,
        data_source,
    } = &mut n.kind
    {
        if let Some(new) = &title {
            *t = new.clone();
        }
        source = Some(data_source.clone());
    }
    if let Some(b) = trash {
        n.in_trash = b;
    }
    n.edited_ms = now;
    n.person_edit = false;
    if let (Some(new), Some(ds)) = (title, source.and_then(|s| g.store.sources.get_mut(&s))) {
        ds.title = new;
    }
    Ok(render_database(g, id).expect("checked above"))
}
