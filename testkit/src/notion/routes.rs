//! Request handling: the common checks (bearer, version, rate, faults), then one function per
//! operation, each run under the state lock so a request is applied atomically.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::{DefaultBodyLimit, FromRequest, Multipart, Request, State};
use axum::http::{header, HeaderValue, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Router;
use bytes::Bytes;
use serde_json::{json, Map, Value};

use super::databases::routes as db;
use super::error::ApiError;
use super::faults::FaultKind;
use super::rate::Refused;
use super::store::model::{normalise_payload, normalise_rich_text_item, NodeKind};
use super::store::Position;
use super::uploads::Uploads;
use super::validate::{self, UploadState, ValidationError};
use super::{Endpoint, Inner, LoggedRequest, Shared, ACCEPTED_VERSIONS};

/// Bodies up to this size are read (uploads need 20 MiB parts); JSON bodies are then held to 500 KB.
const READ_LIMIT: usize = 64 * 1024 * 1024;

pub(super) fn router(shared: Arc<Shared>) -> Router {
    Router::new()
        .fallback(handle)
        .with_state(shared)
        .layer(DefaultBodyLimit::max(READ_LIMIT))
}

enum Reply {
    Ok(Value),
    Err(ApiError),
    RateLimited(Refused),
    Drop(Value),
}

async fn handle(State(sh): State<Arc<Shared>>, req: Request) -> Response {
    let request_id = uuid::Uuid::new_v4().to_string();
    let method = req.method().clone();
    let path = req.uri().path().to_owned();
    let (endpoint, raw_id) = classify(&method, &path);
    let reply = process(&sh, req, endpoint, raw_id).await;
    let (status, code) = match &reply {
        Reply::Ok(_) | Reply::Drop(_) => (200, None),
        Reply::Err(e) => (e.status.as_u16(), Some(e.code.to_owned())),
        Reply::RateLimited(_) => (429, Some("rate_limited".to_owned())),
    };
    tracing::debug!(%method, %path, status, "notion test server answered");
    {
        let mut g = sh.lock();
        *g.counters.per_endpoint.entry(endpoint).or_insert(0) += 1;
        if status == 429 {
            g.counters.rate_limited += 1;
        }
        if code.as_deref() == Some("validation_error") {
            g.counters.validation_errors += 1;
        }
        g.log.push(LoggedRequest {
            method: method.to_string(),
            path,
            endpoint,
            status,
            code,
        });
    }
    respond(reply, &request_id)
}

fn respond(reply: Reply, request_id: &str) -> Response {
    let rid = HeaderValue::from_str(request_id).unwrap_or(HeaderValue::from_static("unknown"));
    let json_ct = HeaderValue::from_static("application/json; charset=utf-8");
    match reply {
        Reply::Ok(mut v) => {
            if let Some(o) = v.as_object_mut() {
                o.insert("request_id".into(), request_id.into());
            }
            let mut r = (StatusCode::OK, v.to_string()).into_response();
            r.headers_mut().insert(header::CONTENT_TYPE, json_ct);
            r.headers_mut().insert("x-notion-request-id", rid);
            r
        }
        Reply::Err(e) => error_response(&e, request_id, None),
        Reply::RateLimited(r) => {
            let mut resp = error_response(
                &ApiError::new(
                    StatusCode::TOO_MANY_REQUESTS,
                    "rate_limited",
                    "You have been rate limited. Please try again in a few minutes.",
                ),
                request_id,
                Some(r.retry_after),
            );
            if let Some(reason) = r.reason {
                // Today's answers say which limit: `additional_data.rate_limit_reason`.
                let body = json!({
                    "object": "error",
                    "status": 429,
                    "code": "rate_limited",
                    "message": "You have been rate limited. Please try again in a few minutes.",
                    "request_id": request_id,
                    "additional_data": { "rate_limit_reason": reason },
                });
                *resp.body_mut() = Body::from(body.to_string());
            }
            resp
        }
        Reply::Drop(v) => {
            // Half the answer, then a broken stream: the connection dies mid-response.
            let text = v.to_string();
            let half = Bytes::from(text.as_bytes()[..text.len() / 2].to_vec());
            let chunks: Vec<Result<Bytes, std::io::Error>> = vec![
                Ok(half),
                Err(std::io::Error::new(
                    std::io::ErrorKind::ConnectionReset,
                    "injected connection drop",
                )),
            ];
            let mut r = Response::new(Body::from_stream(futures::stream::iter(chunks)));
            r.headers_mut().insert(header::CONTENT_TYPE, json_ct);
            r
        }
    }
}

fn error_response(e: &ApiError, request_id: &str, retry_after: Option<u64>) -> Response {
    let mut body = json!({
        "object": "error",
        "status": e.status.as_u16(),
        "code": e.code,
        "message": e.message,
        "request_id": request_id,
    });
    if let Some(data) = &e.additional_data {
        body["additional_data"] = data.clone();
    }
    let mut r = (e.status, body.to_string()).into_response();
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json; charset=utf-8"),
    );
    if let Some(s) = retry_after {
        r.headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from(s));
    }
    r
}

fn classify(method: &Method, path: &str) -> (Endpoint, Option<String>) {
    let segs: Vec<&str> = path.trim_matches('/').split('/').collect();
    let id = |i: usize| segs.get(i).map(|s| (*s).to_owned());
    let e = match (method.as_str(), segs.as_slice()) {
        ("GET", ["v1", "users", "me"]) => Endpoint::UsersMe,
        ("POST", ["v1", "pages"]) => Endpoint::CreatePage,
        ("GET", ["v1", "pages", _]) => Endpoint::GetPage,
        ("PATCH", ["v1", "pages", _]) => Endpoint::UpdatePage,
        ("GET", ["v1", "blocks", _]) => Endpoint::GetBlock,
        ("PATCH", ["v1", "blocks", _]) => Endpoint::UpdateBlock,
        ("DELETE", ["v1", "blocks", _]) => Endpoint::DeleteBlock,
        ("GET", ["v1", "blocks", _, "children"]) => Endpoint::ListChildren,
        ("PATCH", ["v1", "blocks", _, "children"]) => Endpoint::AppendChildren,
        ("POST", ["v1", "file_uploads"]) => Endpoint::CreateUpload,
        ("GET", ["v1", "file_uploads", _]) => Endpoint::GetUpload,
        ("POST", ["v1", "file_uploads", _, "send"]) => Endpoint::SendUpload,
        ("POST", ["v1", "file_uploads", _, "complete"]) => Endpoint::CompleteUpload,
        ("POST", ["v1", "databases"]) => Endpoint::CreateDatabase,
        ("GET", ["v1", "databases", _]) => Endpoint::GetDatabase,
        ("PATCH", ["v1", "databases", _]) => Endpoint::UpdateDatabase,
        ("POST", ["v1", "pages", _, "move"]) => Endpoint::MovePage,
        ("GET", ["v1", "data_sources", _]) => Endpoint::GetDataSource,
        ("PATCH", ["v1", "data_sources", _]) => Endpoint::UpdateDataSource,
        ("POST", ["v1", "data_sources", _, "query"]) => Endpoint::QueryDataSource,
        _ => Endpoint::Unknown,
    };
    let raw = match e {
        Endpoint::UsersMe
        | Endpoint::CreatePage
        | Endpoint::CreateUpload
        | Endpoint::CreateDatabase
        | Endpoint::Unknown => None,
        _ => id(2),
    };
    (e, raw)
}

async fn process(sh: &Shared, req: Request, endpoint: Endpoint, raw_id: Option<String>) -> Reply {
    let token = req
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "));
    let Some(token) = token
        .filter(|t| {
            let mut g = sh.lock();
            if *t == sh.config.token {
                // A personal access token past its expiry is refused like any other bad token.
                match g.token_requests_left.as_mut() {
                    Some(0) => false,
                    Some(n) => {
                        *n -= 1;
                        true
                    }
                    None => true,
                }
            } else {
                g.tokens.iter().any(|k| k == t)
            }
        })
        .map(str::to_owned)
    else {
        return Reply::Err(ApiError::new(
            StatusCode::UNAUTHORIZED,
            "unauthorized",
            "API token is invalid.",
        ));
    };
    let version = match req.headers().get("notion-version").map(|v| v.to_str()) {
        None => {
            return Reply::Err(ApiError::new(
                StatusCode::BAD_REQUEST,
                "missing_version",
                "Notion-Version header failed validation: Notion-Version header should be defined, instead was `undefined`.",
            ))
        }
        Some(Ok(v)) if ACCEPTED_VERSIONS.contains(&v) => v.to_owned(),
        Some(v) => {
            return Reply::Err(ApiError::validation(format!(
                "Notion-Version header failed validation: Notion-Version header should be one of {ACCEPTED_VERSIONS:?}, instead was `{}`.",
                v.unwrap_or("(not text)")
            )))
        }
    };
    let fault = {
        let mut g = sh.lock();
        if let Err(r) = g.rate.acquire(&token) {
            return Reply::RateLimited(r);
        }
        if endpoint == Endpoint::Unknown {
            return Reply::Err(ApiError::new(
                StatusCode::BAD_REQUEST,
                "invalid_request_url",
                "Invalid request URL.",
            ));
        }
        let blocks = g.store.len();
        if let Some(e) = g.switches.refuse(endpoint, blocks) {
            return Reply::Err(e);
        }
        let f = g.faults.pick(endpoint);
        if f.is_some() {
            g.counters.faults += 1;
        }
        f
    };
    match &fault {
        Some(FaultKind::Status(s)) => return Reply::Err(ApiError::for_status(*s)),
        Some(FaultKind::Delay(d)) => tokio::time::sleep(*d).await,
        Some(FaultKind::RequestBlocked) => {
            return Reply::RateLimited(Refused {
                retry_after: 60,
                reason: Some(super::rate::BLOCKED_REASON.to_owned()),
            })
        }
        _ => {}
    }
    let id = match raw_id.as_deref().map(parse_id).transpose() {
        Ok(id) => id.unwrap_or_default(),
        Err(e) => return Reply::Err(e),
    };
    let result = if endpoint == Endpoint::SendUpload {
        send_upload(sh, &id, req).await
    } else {
        let query = req.uri().query().unwrap_or("").to_owned();
        match read_json(req).await {
            Err(e) => Err(e),
            Ok(body) => {
                let mut g = sh.lock();
                let refused = refuse_for_version(endpoint, &version, &body)
                    .or_else(|| g.switches.refuse_content(endpoint, &body))
                    .or_else(|| super::mentions::refuse_unseen(&g.store, endpoint, &body));
                match refused {
                    Some(e) => Err(e),
                    None => dispatch(sh, &mut g, endpoint, &id, &query, &version, body),
                }
            }
        }
    };
    match (result, fault) {
        (Ok(_), Some(FaultKind::AppliedThen504)) => Reply::Err(ApiError::for_status(504)),
        (Ok(v), Some(FaultKind::AppliedThen503Saved)) => {
            Reply::Err(ApiError::for_status(503).with_data(saved_data(endpoint, &v)))
        }
        (Ok(v), Some(FaultKind::AppliedThenDrop)) => Reply::Drop(v),
        (Ok(v), _) => Reply::Ok(v),
        (Err(e), _) => Reply::Err(e),
    }
}

/// What a write answered 503 saved, as `additional_data` names it. The wording of
/// `retry_guidance` is not in the stored copies of Notion's page; clients must not read it.
fn saved_data(endpoint: Endpoint, applied: &Value) -> Value {
    let mut data = json!({"retry_guidance": "do_not_retry"});
    match endpoint {
        Endpoint::CreatePage | Endpoint::CreateDatabase => {
            data["committed_resource_id"] = applied["id"].clone();
        }
        Endpoint::AppendChildren => {
            let ids: Vec<Value> = applied["results"]
                .as_array()
                .map(|r| r.iter().map(|b| b["id"].clone()).collect())
                .unwrap_or_default();
            data["committed_child_ids"] = Value::Array(ids);
        }
        _ => {}
    }
    data
}

/// A block type the request's `Notion-Version` does not know yet, answered as Notion answers an
/// unknown type: `400 validation_error` naming it.
fn refuse_for_version(endpoint: Endpoint, version: &str, body: &Value) -> Option<ApiError> {
    let carries_blocks = matches!(
        endpoint,
        Endpoint::CreatePage | Endpoint::AppendChildren | Endpoint::UpdateBlock
    );
    (carries_blocks && version < validate::HEADING_4_SINCE && validate::holds_heading_4(body))
        .then(|| {
            ApiError::validation(format!(
                "body failed validation: heading_4 is not a supported block type in Notion-Version {version}."
            ))
        })
}

fn parse_id(raw: &str) -> Result<String, ApiError> {
    uuid::Uuid::parse_str(raw)
        .map(|u| u.to_string())
        .map_err(|_| {
            ApiError::validation(format!(
                "path failed validation: path.id should be a valid uuid, instead was `\"{raw}\"`."
            ))
        })
}

async fn read_json(req: Request) -> Result<Value, ApiError> {
    let method = req.method().clone();
    let bytes = axum::body::to_bytes(req.into_body(), READ_LIMIT)
        .await
        .map_err(|_| ApiError::validation("The request body could not be read."))?;
    if method == Method::GET || method == Method::DELETE || bytes.is_empty() {
        return Ok(Value::Object(Map::new()));
    }
    if bytes.len() > validate::MAX_PAYLOAD_BYTES {
        return Err(ApiError::validation(format!(
            "body failed validation: the request body is {} bytes; at most {} are accepted.",
            bytes.len(),
            validate::MAX_PAYLOAD_BYTES
        )));
    }
    serde_json::from_slice(&bytes).map_err(|_| {
        ApiError::new(
            StatusCode::BAD_REQUEST,
            "invalid_json",
            "Error parsing JSON body.",
        )
    })
}

fn dispatch(
    sh: &Shared,
    g: &mut Inner,
    endpoint: Endpoint,
    id: &str,
    query: &str,
    version: &str,
    body: Value,
) -> Result<Value, ApiError> {
    let now = g.stamp_at.unwrap_or_else(|| sh.clock.now_ms());
    // A test's clock that moves with the writes: each write lands `stamp_step` later.
    if let (Some(at), Some(step)) = (g.stamp_at.as_mut(), g.stamp_step) {
        if endpoint.is_write() {
            *at += step;
        }
    }
    let body = body
        .as_object()
        .cloned()
        .ok_or_else(|| ApiError::validation("body failed validation: body should be an object."))?;
    let modern = version >= super::PINNED_VERSION;
    let data_sources = version >= db::DATA_SOURCES_SINCE;
    match endpoint {
        Endpoint::GetDataSource | Endpoint::UpdateDataSource | Endpoint::QueryDataSource
            if !data_sources =>
        {
            Err(ApiError::new(
                StatusCode::BAD_REQUEST,
                "invalid_request_url",
                "Invalid request URL.",
            ))
        }
        Endpoint::CreateDatabase => db::create_database(g, &body, version, now),
        Endpoint::GetDatabase => {
            db::render_database(g, id).ok_or_else(|| ApiError::not_found("database", id))
        }
        Endpoint::UpdateDatabase => db::update_database(g, id, &body, version, now),
        Endpoint::MovePage => {
            let to = super::moves::parse_target(&body)?;
            super::moves::check(&g.store, id, &to)?;
            g.store.move_page(id, to, now);
            let n = g.store.get(id).expect("checked above");
            Ok(g.store.render_page(n, &sh.bot_id))
        }
        Endpoint::GetDataSource => db::get_data_source(g, id),
        Endpoint::UpdateDataSource => db::update_data_source(g, id, &body, now),
        Endpoint::QueryDataSource => db::query(sh, g, id, &body),
        Endpoint::UsersMe if g.switches.personal_token_of.is_some() => Ok(json!({
            // A personal access token answers as the person who made it (reference/get-self).
            "object": "user",
            "id": sh.bot_id,
            "name": g.switches.personal_token_of,
            "avatar_url": null,
            "type": "person",
            "person": {"email": "person@example.com"},
        })),
        Endpoint::UsersMe => Ok(json!({
            "object": "user",
            "id": sh.bot_id,
            "name": "notebridge test integration",
            "avatar_url": null,
            "type": "bot",
            "bot": {
                "owner": {"type": "workspace", "workspace": true},
                "workspace_name": "Test workspace",
                "workspace_limits": {"max_file_upload_size_in_bytes": g.uploads.max_size()},
            },
        })),
        Endpoint::CreatePage => create_page(sh, g, &body, now),
        Endpoint::GetPage => {
            let n = page_node(g, id)?;
            Ok(g.store.render_page(n, &sh.bot_id))
        }
        Endpoint::UpdatePage => {
            let page = update_page(sh, g, id, &body, modern, now)?;
            if body.is_empty() {
                g.counters.empty_updates += 1;
            }
            Ok(page)
        }
        Endpoint::GetBlock => {
            let n = g
                .store
                .get(id)
                .ok_or_else(|| ApiError::not_found("block", id))?;
            Ok(g.store
                .render_block(n, &sh.bot_id, &file_renderer(&g.uploads, now)))
        }
        Endpoint::ListChildren => list_children(sh, g, id, query, now),
        Endpoint::AppendChildren => append(sh, g, id, &body, modern, now),
        Endpoint::UpdateBlock => update_block(sh, g, id, &body, modern, now),
        Endpoint::DeleteBlock => {
            let n = g
                .store
                .get_mut(id)
                .ok_or_else(|| ApiError::not_found("block", id))?;
            n.in_trash = true;
            n.edited_ms = now;
            n.person_edit = false;
            let n = g.store.get(id).expect("just updated");
            Ok(g.store
                .render_block(n, &sh.bot_id, &file_renderer(&g.uploads, now)))
        }
        Endpoint::CreateUpload => {
            let u = g.uploads.create(&Value::Object(body), now)?.clone();
            Ok(g.uploads.render(&u, &sh.base_url, now))
        }
        Endpoint::CompleteUpload => {
            let u = g.uploads.complete(id, now)?.clone();
            Ok(g.uploads.render(&u, &sh.base_url, now))
        }
        Endpoint::GetUpload => {
            let u = g
                .uploads
                .get(id)
                .ok_or_else(|| ApiError::not_found("file upload", id))?;
            Ok(g.uploads.render(u, &sh.base_url, now))
        }
        Endpoint::SendUpload | Endpoint::Unknown => Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "invalid_request_url",
            "Invalid request URL.",
        )),
    }
}

fn archived_error() -> ApiError {
    ApiError::validation(
        "Can't edit block that is archived. You must unarchive the block before editing.",
    )
}

fn body_err(e: ValidationError) -> ApiError {
    ApiError::body(&e)
}

fn only_keys(body: &Map<String, Value>, keys: &[&str]) -> Result<(), ApiError> {
    for k in body.keys() {
        if !keys.contains(&k.as_str()) {
            return Err(ApiError::validation(format!(
                "body failed validation: body.{k} should be not present."
            )));
        }
    }
    Ok(())
}

fn page_node<'a>(g: &'a Inner, id: &str) -> Result<&'a super::store::model::Node, ApiError> {
    g.store
        .get(id)
        .filter(|n| matches!(n.kind, NodeKind::Page { .. }))
        .ok_or_else(|| ApiError::not_found("page", id))
}

/// Every `file_upload.id` referenced anywhere in `v`.
fn upload_ids(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(o) => {
            if let Some(id) = o
                .get("file_upload")
                .and_then(|f| f.get("id"))
                .and_then(Value::as_str)
            {
                out.push(id.to_owned());
            }
            o.values().for_each(|c| upload_ids(c, out));
        }
        Value::Array(a) => a.iter().for_each(|c| upload_ids(c, out)),
        _ => {}
    }
}

fn attach_all(g: &mut Inner, v: &Value) {
    let mut ids = Vec::new();
    upload_ids(v, &mut ids);
    for id in ids {
        g.uploads.attach(&id);
    }
}

/// Renders stored media payloads that point at an upload the way Notion returns them: a hosted file.
pub(super) fn file_renderer(uploads: &Uploads, now: i64) -> impl Fn(&Value) -> Value + '_ {
    move |payload: &Value| {
        let Some(id) = payload
            .get("file_upload")
            .and_then(|f| f.get("id"))
            .and_then(Value::as_str)
        else {
            return payload.clone();
        };
        let name = uploads
            .get(id)
            .and_then(|u| u.filename.clone())
            .unwrap_or_else(|| "file".into());
        let mut p = payload.clone();
        if let Some(o) = p.as_object_mut() {
            o.remove("file_upload");
            o.insert("type".into(), "file".into());
            o.insert(
                "file".into(),
                json!({
                    "url": format!("https://files.notion.test/{id}/{name}"),
                    "expiry_time": super::store::model::iso(now + 3_600_000),
                }),
            );
        }
        p
    }
}

fn title_of(props: Option<&Value>) -> Result<Vec<Value>, ApiError> {
    let Some(props) = props else {
        return Ok(Vec::new());
    };
    let obj = props.as_object().ok_or_else(|| {
        ApiError::validation("body failed validation: body.properties should be an object.")
    })?;
    let mut title = Vec::new();
    for (k, v) in obj {
        if k != "title" {
            return Err(ApiError::validation(format!(
                "body failed validation: body.properties.{k} should be not present: a page whose parent is a page has only `title`."
            )));
        }
        let (arr, path) = match v {
            Value::Array(_) => (v, "body.properties.title"),
            Value::Object(o) => (
                o.get("title").ok_or_else(|| {
                    ApiError::validation(
                        "body failed validation: body.properties.title.title should be defined, instead was `undefined`.",
                    )
                })?,
                "body.properties.title.title",
            ),
            _ => {
                return Err(ApiError::validation(
                    "body failed validation: body.properties.title should be an object or an array.",
                ))
            }
        };
        validate::validate_rich_text(arr, path).map_err(body_err)?;
        title = arr
            .as_array()
            .map(|a| a.iter().map(normalise_rich_text_item).collect())
            .unwrap_or_default();
    }
    Ok(title)
}

fn create_page(
    sh: &Shared,
    g: &mut Inner,
    body: &Map<String, Value>,
    now: i64,
) -> Result<Value, ApiError> {
    only_keys(body, &["parent", "properties", "children", "icon", "cover"])?;
    let parent = body
        .get("parent")
        .and_then(Value::as_object)
        .ok_or_else(|| {
            ApiError::validation(
                "body failed validation: body.parent should be defined, instead was `undefined`.",
            )
        })?;
    if parent.contains_key("data_source_id") {
        return create_row(sh, g, body, parent, now);
    }
    if let Some(d) = parent.get("database_id").and_then(Value::as_str) {
        // Since 2025-09-03 rows are created under a data source; the stricter reading refuses a
        // database parent even for a database with one data source.
        return Err(ApiError::validation(format!(
            "body failed validation: body.parent.database_id should be not present: create rows with `data_source_id` (database {d})."
        )));
    }
    only_keys_at(parent, "body.parent", &["type", "page_id"])?;
    let raw = parent.get("page_id").and_then(Value::as_str).ok_or_else(|| {
        ApiError::validation(
            "body failed validation: body.parent.page_id should be defined, instead was `undefined`.",
        )
    })?;
    let parent_id = uuid::Uuid::parse_str(raw)
        .map(|u| u.to_string())
        .map_err(|_| {
            ApiError::validation(
                "body failed validation: body.parent.page_id should be a valid uuid.",
            )
        })?;
    page_node(g, &parent_id)?;
    if g.store.trashed(&parent_id) {
        return Err(archived_error());
    }
    let title = title_of(body.get("properties"))?;
    let uploads = &g.uploads;
    let check = |id: &str| uploads.state(id, now);
    let icon = body.get("icon").cloned().unwrap_or(Value::Null);
    let cover = body.get("cover").cloned().unwrap_or(Value::Null);
    validate::validate_icon_with(&icon, "body.icon", &check).map_err(body_err)?;
    validate::validate_cover_with(&cover, "body.cover", &check).map_err(body_err)?;
    let children = body.get("children").cloned().unwrap_or(json!([]));
    validate::validate_children_with(&children, "body.children", &check).map_err(body_err)?;
    let id = g.store.create_page(&parent_id, title, icon, cover, now);
    if let Value::Array(ch) = &children {
        g.store.insert_blocks(&id, ch, &Position::End, now);
    }
    attach_all(g, &Value::Object(body.clone()));
    let n = g.store.get(&id).expect("page just created");
    Ok(g.store.render_page(n, &sh.bot_id))
}

/// `POST /v1/pages` with a data source parent: a row, its values checked against the schema.
fn create_row(
    sh: &Shared,
    g: &mut Inner,
    body: &Map<String, Value>,
    parent: &Map<String, Value>,
    now: i64,
) -> Result<Value, ApiError> {
    only_keys_at(parent, "body.parent", &["type", "data_source_id"])?;
    let raw = parent
        .get("data_source_id")
        .and_then(Value::as_str)
        .unwrap_or("");
    let ds = uuid::Uuid::parse_str(raw)
        .map(|u| u.to_string())
        .map_err(|_| {
            ApiError::validation(
                "body failed validation: body.parent.data_source_id should be a valid uuid.",
            )
        })?;
    let uploads = &g.uploads;
    let check = |id: &str| uploads.state(id, now);
    let icon = body.get("icon").cloned().unwrap_or(Value::Null);
    let cover = body.get("cover").cloned().unwrap_or(Value::Null);
    validate::validate_icon_with(&icon, "body.icon", &check).map_err(body_err)?;
    validate::validate_cover_with(&cover, "body.cover", &check).map_err(body_err)?;
    let children = body.get("children").cloned().unwrap_or(json!([]));
    validate::validate_children_with(&children, "body.children", &check).map_err(body_err)?;
    let id = db::create_row(g, &ds, body, icon, cover, now)?;
    if let Value::Array(ch) = &children {
        g.store.insert_blocks(&id, ch, &Position::End, now);
    }
    attach_all(g, &Value::Object(body.clone()));
    let n = g.store.get(&id).expect("row just created");
    Ok(g.store.render_page(n, &sh.bot_id))
}

fn only_keys_at(obj: &Map<String, Value>, path: &str, keys: &[&str]) -> Result<(), ApiError> {
    for k in obj.keys() {
        if !keys.contains(&k.as_str()) {
            return Err(ApiError::validation(format!(
                "body failed validation: {path}.{k} should be not present."
            )));
        }
    }
    Ok(())
}

fn trash_flag(body: &Map<String, Value>, modern: bool) -> Result<Option<bool>, ApiError> {
    if modern && body.contains_key("archived") {
        return Err(ApiError::validation(
            "body failed validation: body.archived should be not present; use `in_trash`.",
        ));
    }
    match body.get("in_trash").or_else(|| body.get("archived")) {
        None => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(*b)),
        Some(_) => Err(ApiError::validation(
            "body failed validation: body.in_trash should be a boolean.",
        )),
    }
}

fn update_page(
    sh: &Shared,
    g: &mut Inner,
    id: &str,
    body: &Map<String, Value>,
    modern: bool,
    now: i64,
) -> Result<Value, ApiError> {
    only_keys(
        body,
        &["in_trash", "archived", "properties", "icon", "cover"],
    )?;
    page_node(g, id)?;
    let trash = trash_flag(body, modern)?;
    let row_source = g.store.row_source(id).map(str::to_owned);
    let mut row_values = None;
    let title = match (body.get("properties"), &row_source) {
        (Some(p), Some(ds)) => {
            let (vals, title) = db::parse_row_update(g, ds, p)?;
            row_values = Some(vals);
            title
        }
        (Some(p), None) => Some(title_of(Some(p))?),
        (None, _) => None,
    };
    let check = |uid: &str| g.uploads.state(uid, now);
    for (k, f) in [
        (
            "icon",
            validate::validate_icon_with
                as fn(&Value, &str, &dyn Fn(&str) -> UploadState) -> Result<(), ValidationError>,
        ),
        ("cover", validate::validate_cover_with),
    ] {
        if let Some(v) = body.get(k) {
            f(v, &format!("body.{k}"), &check).map_err(body_err)?;
        }
    }
    let edits_content = title.is_some()
        || row_values.is_some()
        || body.contains_key("icon")
        || body.contains_key("cover");
    if edits_content && trash != Some(false) && g.store.trashed(id) {
        return Err(archived_error());
    }
    if let (Some(ds), Some(vals)) = (&row_source, row_values) {
        db::apply_row_update(g, ds, id, vals);
    }
    let n = g.store.get_mut(id).expect("checked above");
    if let Some(t) = trash {
        n.in_trash = t;
    }
    if let NodeKind::Page {
        title: old_title,
        icon,
        cover,
    } = &mut n.kind
    {
        if let Some(t) = title {
            *old_title = t;
        }
        if let Some(i) = body.get("icon") {
            *icon = i.clone();
        }
        if let Some(c) = body.get("cover") {
            *cover = c.clone();
        }
    }
    n.edited_ms = now;
    n.person_edit = false;
    attach_all(g, &Value::Object(body.clone()));
    let n = g.store.get(id).expect("checked above");
    Ok(g.store.render_page(n, &sh.bot_id))
}

fn list_children(
    sh: &Shared,
    g: &mut Inner,
    id: &str,
    query: &str,
    now: i64,
) -> Result<Value, ApiError> {
    g.store
        .get(id)
        .ok_or_else(|| ApiError::not_found("block", id))?;
    let mut page_size = 100usize;
    let mut cursor = None;
    for (k, v) in url::form_urlencoded::parse(query.as_bytes()) {
        match k.as_ref() {
            "page_size" => {
                page_size = v.parse().ok().filter(|n| (1..=100).contains(n)).ok_or_else(|| {
                    ApiError::validation(format!(
                        "query failed validation: query.page_size should be a number between 1 and 100, instead was `{v}`."
                    ))
                })?
            }
            "start_cursor" => cursor = Some(v.into_owned()),
            _ => {}
        }
    }
    let invalid = || ApiError::validation("The start_cursor provided is invalid.");
    let from = match cursor {
        None => None,
        Some(c) => Some(parse_id(&c).map_err(|_| invalid())?),
    };
    let (kids, next) = g
        .store
        .visible_children_from(id, from.as_deref(), page_size)
        .ok_or_else(invalid)?;
    let render = file_renderer(&g.uploads, now);
    let results: Vec<Value> = kids
        .iter()
        .map(|n| g.store.render_block(n, &sh.bot_id, &render))
        .collect();
    let next = next.map(|n| n.id.clone());
    Ok(json!({
        "object": "list",
        "results": results,
        "next_cursor": next,
        "has_more": next.is_some(),
        "type": "block",
        "block": {},
    }))
}

/// Whether appended children may go under this node.
fn accepts_children(n: &super::store::model::Node) -> Result<Option<usize>, ApiError> {
    match &n.kind {
        NodeKind::Page { .. } => Ok(None),
        NodeKind::Database { .. } => Err(ApiError::validation(
            "Block type `child_database` does not support children.",
        )),
        NodeKind::Block { ty, payload } => match ty.as_str() {
            "table" => Ok(Some(payload["table_width"].as_u64().unwrap_or(0) as usize)),
            "paragraph" | "bulleted_list_item" | "numbered_list_item" | "toggle" | "quote"
            | "to_do" | "callout" => Ok(None),
            t if t.starts_with("heading_") && payload["is_toggleable"] == Value::Bool(true) => {
                Ok(None)
            }
            t => Err(ApiError::validation(format!(
                "Block type `{t}` does not support children."
            ))),
        },
    }
}

fn append(
    sh: &Shared,
    g: &mut Inner,
    id: &str,
    body: &Map<String, Value>,
    modern: bool,
    now: i64,
) -> Result<Value, ApiError> {
    if modern {
        only_keys(body, &["children", "position"])?;
    } else {
        only_keys(body, &["children", "position", "after"])?;
    }
    let target = g
        .store
        .get(id)
        .ok_or_else(|| ApiError::not_found("block", id))?;
    if g.store.trashed(id) {
        return Err(archived_error());
    }
    let table_width = accepts_children(target)?;
    let children = body.get("children").ok_or_else(|| {
        ApiError::validation(
            "body failed validation: body.children should be defined, instead was `undefined`.",
        )
    })?;
    let check = |uid: &str| g.uploads.state(uid, now);
    match table_width {
        Some(w) => validate::validate_table_rows_with(children, "body.children", w, &check),
        None => validate::validate_children_with(children, "body.children", &check),
    }
    .map_err(body_err)?;
    let store = &g.store;
    let after_ok = |raw: &str, path: &str| -> Result<Position, ApiError> {
        let a = parse_id(raw).ok().filter(|a| store.is_visible_child(id, a));
        a.map(Position::After).ok_or_else(|| {
            ApiError::validation(format!(
                "body failed validation: {path} should be the id of a child of the block, instead was `\"{raw}\"`."
            ))
        })
    };
    let pos = match (body.get("position"), body.get("after")) {
        (Some(_), Some(_)) => {
            return Err(ApiError::validation(
                "body failed validation: body.after should be not present with body.position.",
            ))
        }
        (None, None) => Position::End,
        (None, Some(a)) => after_ok(a.as_str().unwrap_or(""), "body.after")?,
        (Some(p), None) => match p.get("type").and_then(Value::as_str) {
            Some("end") => Position::End,
            Some("start") => Position::Start,
            Some("after_block") => {
                let raw = p["after_block"]["id"].as_str().unwrap_or("");
                after_ok(raw, "body.position.after_block.id")?
            }
            _ => {
                return Err(ApiError::validation(
                    "body failed validation: body.position.type should be `\"start\"`, `\"end\"` or `\"after_block\"`.",
                ))
            }
        },
    };
    let blocks = children.as_array().cloned().unwrap_or_default();
    let ids = g.store.insert_blocks(id, &blocks, &pos, now);
    attach_all(g, children);
    let render = file_renderer(&g.uploads, now);
    let results: Vec<Value> = ids
        .iter()
        .filter_map(|i| g.store.get(i))
        .map(|n| g.store.render_block(n, &sh.bot_id, &render))
        .collect();
    Ok(json!({
        "object": "list",
        "results": results,
        "next_cursor": null,
        "has_more": false,
        "type": "block",
        "block": {},
    }))
}

fn update_block(
    sh: &Shared,
    g: &mut Inner,
    id: &str,
    body: &Map<String, Value>,
    modern: bool,
    now: i64,
) -> Result<Value, ApiError> {
    let node = g
        .store
        .get(id)
        .ok_or_else(|| ApiError::not_found("block", id))?;
    let ty = node.block_type().to_owned();
    let parent_width = match &node.parent {
        super::store::model::ParentRef::Block(p) => g.store.get(p).and_then(|pn| match &pn.kind {
            NodeKind::Block { ty, payload } if ty == "table" => payload["table_width"].as_u64(),
            _ => None,
        }),
        _ => None,
    };
    only_keys(body, &[ty.as_str(), "in_trash", "archived"])?;
    let trash = trash_flag(body, modern)?;
    let new_payload = body.get(&ty);
    if let Some(p) = new_payload {
        if ty == "child_page" {
            return Err(ApiError::validation(
                "body failed validation: rename pages with PATCH /v1/pages/{id}.",
            ));
        }
        if trash != Some(false) && g.store.trashed(id) {
            return Err(archived_error());
        }
        let check = |uid: &str| g.uploads.state(uid, now);
        validate::validate_block_update(&ty, p, "body", &check).map_err(body_err)?;
        if let (Some(w), Some(cells)) = (parent_width, p.get("cells").and_then(Value::as_array)) {
            if cells.len() as u64 != w {
                return Err(ApiError::validation(format!(
                    "body failed validation: body.table_row.cells should have `{w}` cells, instead had `{}`.",
                    cells.len()
                )));
            }
        }
    }
    let n = g.store.get_mut(id).expect("checked above");
    if let (Some(p), NodeKind::Block { payload, .. }) =
        (new_payload.and_then(Value::as_object), &mut n.kind)
    {
        let normalised = normalise_payload(&ty, p);
        if let Some(stored) = payload.as_object_mut() {
            if p.contains_key("external") || p.contains_key("file_upload") {
                stored.remove("external");
                stored.remove("file_upload");
                stored.insert("type".into(), normalised["type"].clone());
            }
            for k in p.keys() {
                stored.insert(k.clone(), normalised[k].clone());
            }
        }
    }
    if let Some(t) = trash {
        n.in_trash = t;
    }
    n.edited_ms = now;
    n.person_edit = false;
    if let Some(p) = new_payload {
        attach_all(g, p);
    }
    let n = g.store.get(id).expect("checked above");
    Ok(g.store
        .render_block(n, &sh.bot_id, &file_renderer(&g.uploads, now)))
}

async fn send_upload(sh: &Shared, id: &str, req: Request) -> Result<Value, ApiError> {
    let mut mp = Multipart::from_request(req, &()).await.map_err(|_| {
        ApiError::validation("The request must be multipart/form-data with a `file` field.")
    })?;
    let mut file = None;
    let mut part_number = None;
    let bad = |_| ApiError::validation("The multipart body could not be read.");
    while let Some(field) = mp.next_field().await.map_err(bad)? {
        match field.name() {
            Some("file") => {
                let name = field.file_name().map(str::to_owned);
                let ct = field.content_type().map(str::to_owned);
                let data = field.bytes().await.map_err(bad)?;
                file = Some((name, ct, data));
            }
            Some("part_number") => part_number = Some(field.text().await.map_err(bad)?),
            _ => {}
        }
    }
    let (name, ct, data) = file.ok_or_else(|| {
        ApiError::validation(
            "body failed validation: body.file should be defined, instead was `undefined`.",
        )
    })?;
    let now = sh.clock.now_ms();
    let mut g = sh.lock();
    let u = g
        .uploads
        .send(id, part_number.as_deref(), name, ct, data, now)?
        .clone();
    Ok(g.uploads.render(&u, &sh.base_url, now))
}
