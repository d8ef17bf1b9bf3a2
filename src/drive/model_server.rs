//! A minimal model of the documented drive API, for the client's tests until the Graph test server
//! serves it: each route answers as Microsoft's pages say, and each fault is a switch.
//!
//! - `GET /v1.0/shares/{u!token}/driveItem`: the item a web URL was shared as (shares-get); an
//!   unknown token is 404 `itemNotFound`.
//! - `GET /v1.0/drives/{d}/items/{i}/children`: a page of children (`$top` or the model's smaller
//!   page) with `@odata.nextLink` while more remain (driveitem-list-children).
//! - `GET /v1.0/drives/{d}/items/{i}/content`: `302 Found` to a pre-authenticated URL on another
//!   path, with no body (driveitem-get-content); 401 without the current bearer token.
//! - `GET /download/{i}?tempauth=...`: the file, `206` with `Content-Range` for `Range: bytes=N-`
//!   (driveitem-get-content, "Partial range downloads").
//! - `POST /common/oauth2/v2.0/token`: the sign-in service's refresh of an access token.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

use axum::body::Body;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use base64::Engine;
use serde_json::{json, Value};

/// One item of the model drive.
#[derive(Clone, Debug)]
pub enum Node {
    /// The notebook's top item (`package` of type `oneNote`), with its children's ids.
    Notebook(String, Vec<String>),
    /// A folder with its children's ids.
    Folder(String, Vec<String>),
    /// A file and its bytes.
    File(String, Vec<u8>),
}

/// One request the model saw.
#[derive(Clone, Debug)]
pub struct Seen {
    /// The path, without the query.
    pub path: String,
    /// The `Authorization` header, if any.
    pub auth: Option<String>,
    /// The `Range` header, if any.
    pub range: Option<String>,
}

/// The model's state and switches.
#[derive(Debug, Default)]
pub struct Model {
    /// The drive's id.
    pub drive_id: String,
    /// Items by id.
    pub items: HashMap<String, Node>,
    /// Shared web URLs and the item each leads to.
    pub shares: HashMap<String, String>,
    /// The access token the API accepts now.
    pub token: String,
    /// What the token endpoint hands out next; `None`: it refuses with `invalid_grant`.
    pub next_token: Option<String>,
    /// Children per page at most (the service's own page size).
    pub page_size: usize,
    /// Statuses answered to the next API or download requests (then served normally), with
    /// their `Retry-After`.
    pub faults: VecDeque<(u16, Option<&'static str>)>,
    /// Download bodies cut off after this many bytes, this many times.
    pub cut_after: Option<(usize, u32)>,
    /// Download bodies that stop sending after this many bytes (the connection stays open), this
    /// many times.
    pub stall_after: Option<(usize, u32)>,
    /// Range requests answered with the whole file (`200`), as a server without range support.
    pub ignore_range: bool,
    /// Bytes appended to every download body (the file grew since it was listed).
    pub extra: Vec<u8>,
    /// Every request, in order.
    pub seen: Vec<Seen>,
}

/// The shared model.
pub type Shared = Arc<Mutex<Model>>;

/// Serves `model` on a local port; returns its base URL (`http://127.0.0.1:port`).
pub async fn serve(model: Shared) -> String {
    let app = Router::new()
        .route("/v1.0/shares/{token}/driveItem", get(share))
        .route("/v1.0/drives/{drive}/items/{item}/children", get(children))
        .route("/v1.0/drives/{drive}/items/{item}/content", get(content))
        .route("/download/{item}", get(download))
        .route("/common/oauth2/v2.0/token", post(token))
        .with_state(model);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    format!("http://{addr}")
}

fn error(status: StatusCode, code: &str) -> Response {
    let body = json!({"error": {"code": code, "message": format!("model: {code}")}});
    (status, axum::Json(body)).into_response()
}

/// Records the request; the fault to answer instead, if one is queued.
fn enter(m: &mut Model, path: String, h: &HeaderMap) -> Option<Response> {
    let header = |n: &str| h.get(n).and_then(|v| v.to_str().ok()).map(str::to_owned);
    m.seen.push(Seen {
        path,
        auth: header("authorization"),
        range: header("range"),
    });
    let (status, after) = m.faults.pop_front()?;
    let mut r = error(StatusCode::from_u16(status).unwrap(), "fault");
    if let Some(a) = after {
        r.headers_mut().insert("retry-after", a.parse().unwrap());
    }
    Some(r)
}

fn authorised(m: &Model, h: &HeaderMap) -> bool {
    h.get("authorization").and_then(|v| v.to_str().ok()) == Some(&format!("Bearer {}", m.token))
}

fn item_json(m: &Model, id: &str) -> Value {
    let parent = json!({"driveId": m.drive_id});
    match &m.items[id] {
        Node::Notebook(name, kids) => {
            json!({"id": id, "name": name, "package": {"type": "oneNote"},
            "size": 0, "parentReference": parent, "childCount": kids.len()})
        }
        Node::Folder(name, kids) => json!({"id": id, "name": name,
            "folder": {"childCount": kids.len()}, "parentReference": parent}),
        Node::File(name, bytes) => {
            json!({"id": id, "name": name, "file": {"mimeType": "application/octet-stream"},
            "size": bytes.len(), "cTag": format!("\"c:{{{id}}},1\""),
            "lastModifiedDateTime": "2026-11-30T10:00:00Z", "parentReference": parent})
        }
    }
}

async fn share(State(s): State<Shared>, Path(token): Path<String>, h: HeaderMap) -> Response {
    let mut m = s.lock().unwrap();
    if let Some(r) = enter(&mut m, format!("/shares/{token}/driveItem"), &h) {
        return r;
    }
    if !authorised(&m, &h) {
        return error(StatusCode::UNAUTHORIZED, "InvalidAuthenticationToken");
    }
    let url = token
        .strip_prefix("u!")
        .and_then(|t| {
            base64::engine::general_purpose::URL_SAFE_NO_PAD
                .decode(t)
                .ok()
        })
        .and_then(|b| String::from_utf8(b).ok());
    match url.and_then(|u| m.shares.get(&u).cloned()) {
        Some(id) => axum::Json(item_json(&m, &id)).into_response(),
        None => error(StatusCode::NOT_FOUND, "itemNotFound"),
    }
}

async fn children(
    State(s): State<Shared>,
    Path((drive, item)): Path<(String, String)>,
    Query(q): Query<HashMap<String, String>>,
    h: HeaderMap,
) -> Response {
    let mut m = s.lock().unwrap();
    if let Some(r) = enter(&mut m, format!("/drives/{drive}/items/{item}/children"), &h) {
        return r;
    }
    if !authorised(&m, &h) {
        return error(StatusCode::UNAUTHORIZED, "InvalidAuthenticationToken");
    }
    let kids = match m.items.get(&item) {
        Some(Node::Notebook(_, k) | Node::Folder(_, k)) if drive == m.drive_id => k.clone(),
        Some(_) | None => return error(StatusCode::NOT_FOUND, "itemNotFound"),
    };
    let top = q
        .get("$top")
        .and_then(|t| t.parse().ok())
        .unwrap_or(200usize)
        .min(m.page_size.max(1));
    let skip: usize = q
        .get("$skiptoken")
        .and_then(|t| t.parse().ok())
        .unwrap_or(0);
    let page: Vec<Value> = kids
        .iter()
        .skip(skip)
        .take(top)
        .map(|k| item_json(&m, k))
        .collect();
    let mut body = json!({"value": page});
    if skip + top < kids.len() {
        // The next link is absolute, on the service's own host, as Graph's are.
        let host = h
            .get("host")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default();
        body["@odata.nextLink"] = json!(format!(
            "http://{host}/v1.0/drives/{drive}/items/{item}/children?$top={top}&$skiptoken={}",
            skip + top
        ));
    }
    axum::Json(body).into_response()
}

async fn content(
    State(s): State<Shared>,
    Path((drive, item)): Path<(String, String)>,
    h: HeaderMap,
) -> Response {
    let mut m = s.lock().unwrap();
    if let Some(r) = enter(&mut m, format!("/drives/{drive}/items/{item}/content"), &h) {
        return r;
    }
    if !authorised(&m, &h) {
        return error(StatusCode::UNAUTHORIZED, "InvalidAuthenticationToken");
    }
    match m.items.get(&item) {
        Some(Node::File(..)) if drive == m.drive_id => {}
        Some(_) | None => return error(StatusCode::NOT_FOUND, "itemNotFound"),
    }
    let host = h
        .get("host")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    let location = format!("http://{host}/download/{item}?tempauth=model-{item}");
    (StatusCode::FOUND, [("location", location)]).into_response()
}

async fn download(State(s): State<Shared>, Path(item): Path<String>, h: HeaderMap) -> Response {
    let mut m = s.lock().unwrap();
    if let Some(r) = enter(&mut m, format!("/download/{item}"), &h) {
        return r;
    }
    let Some(Node::File(_, bytes)) = m.items.get(&item) else {
        return error(StatusCode::NOT_FOUND, "itemNotFound");
    };
    let mut bytes = bytes.clone();
    bytes.extend_from_slice(&m.extra);
    let total = bytes.len();
    let from = h
        .get("range")
        .and_then(|v| v.to_str().ok())
        .and_then(|r| r.strip_prefix("bytes="))
        .and_then(|r| r.strip_suffix('-'))
        .and_then(|n| n.parse::<usize>().ok())
        .filter(|_| !m.ignore_range);
    if from.is_some_and(|f| f >= total) {
        return error(StatusCode::RANGE_NOT_SATISFIABLE, "invalidRange");
    }
    let start = from.unwrap_or(0);
    let body = bytes[start..].to_vec();
    let len = body.len();
    let cut = match &mut m.cut_after {
        Some((n, times)) if *times > 0 && *n < len => {
            *times -= 1;
            Some(*n)
        }
        Some(_) | None => None,
    };
    let stall = match &mut m.stall_after {
        Some((n, times)) if *times > 0 && *n < len => {
            *times -= 1;
            Some(*n)
        }
        Some(_) | None => None,
    };
    if let Some(n) = stall {
        use futures::StreamExt;
        let sent = futures::stream::iter([Ok::<_, std::io::Error>(bytes::Bytes::from(
            body[..n].to_vec(),
        ))]);
        let mut r = Response::new(Body::from_stream(sent.chain(futures::stream::pending())));
        r.headers_mut()
            .insert("content-length", len.to_string().parse().unwrap());
        return r;
    }
    let stream_body = match cut {
        // The connection drops after `n` bytes of the announced length.
        Some(n) => {
            use futures::StreamExt;
            let sent = futures::stream::iter([Ok(bytes::Bytes::from(body[..n].to_vec()))]);
            // A pause before the cut lets the server write out what was sent, as a network would.
            let cut = futures::stream::once(async {
                tokio::task::yield_now().await;
                Err(std::io::Error::other("model: connection cut"))
            });
            Body::from_stream(sent.chain(cut))
        }
        None => Body::from(body),
    };
    let mut r = Response::new(stream_body);
    r.headers_mut()
        .insert("content-length", len.to_string().parse().unwrap());
    if from.is_some() {
        *r.status_mut() = StatusCode::PARTIAL_CONTENT;
        r.headers_mut().insert(
            "content-range",
            format!("bytes {start}-{}/{total}", total - 1)
                .parse()
                .unwrap(),
        );
    }
    r
}

async fn token(State(s): State<Shared>) -> Response {
    let mut m = s.lock().unwrap();
    match m.next_token.take() {
        Some(t) => {
            m.token = t.clone();
            axum::Json(
                json!({"token_type": "Bearer", "access_token": t, "expires_in": 3600,
                "refresh_token": format!("rt-{t}"), "scope": "Files.Read offline_access"}),
            )
            .into_response()
        }
        None => (
            StatusCode::BAD_REQUEST,
            axum::Json(json!({"error": "invalid_grant",
                "error_description": "AADSTS70008: the refresh token has expired"})),
        )
            .into_response(),
    }
}
