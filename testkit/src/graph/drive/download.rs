//! The pre-authenticated download URLs `…/content` redirects to: no bearer token (one that arrives
//! is refused with 401, as the docs say these URLs need none), valid a few minutes, `Range`
//! honoured (206 with `Content-Range`), and the faults of a real transfer: throttling, a body cut
//! short after its headers promised more, a file gone, a file over OneNote's 2 GB limit.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use axum::body::Body as AxumBody;
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::Response;
use bytes::Bytes;

use super::routes::served_bytes;
use super::{ItemKind, Kind};
use crate::graph::routes::{Body, Reply};
use crate::graph::Shared;
use crate::net::KillSwitch;

/// The size of each chunk a download body is sent in.
const CHUNK: usize = 64 * 1024;

/// The page SharePoint answers a OneNote file over 2 GB with: 503 and HTML, no `Retry-After`
/// (OneDrive/onedrive-api-docs#1456: "Retured a error warning webpage" with `503 Service
/// Unavailable` after the `302 Found`; alcionai/corso#2910: "OneNote files on OneDrive and
/// SharePoint are limited to 2GB max ... trying to access it via the API results in 503").
const TOO_LARGE_PAGE: &str = "<!DOCTYPE html><html><head><title>Service Unavailable</title></head>\
<body><h1>Service Unavailable</h1><p>The service is unavailable.</p></body></html>";

fn reply(status: u16, code: &str, msg: &str) -> Response {
    super::super::into_response(Reply::error(status, code, msg), None)
}

/// A `Range: bytes=…` request over `len` bytes: `Ok(None)` for the whole body, `Ok(Some((first,
/// last)))` for a satisfiable single range, `Err(())` for one that is not (416).
fn range(headers: &HeaderMap, len: u64) -> Result<Option<(u64, u64)>, ()> {
    let Some(v) = headers.get(header::RANGE).and_then(|v| v.to_str().ok()) else {
        return Ok(None);
    };
    let Some(spec) = v.trim().strip_prefix("bytes=") else {
        return Err(());
    };
    if spec.contains(',') {
        // Several ranges: a server may answer the whole body instead (RFC 9110 14.2).
        return Ok(None);
    }
    let (a, b) = spec.split_once('-').ok_or(())?;
    let (a, b) = (a.trim(), b.trim());
    let (first, last) = if a.is_empty() {
        let n: u64 = b.parse().map_err(|_| ())?;
        if n == 0 || len == 0 {
            return Err(());
        }
        (len.saturating_sub(n), len - 1)
    } else {
        let first: u64 = a.parse().map_err(|_| ())?;
        let last = if b.is_empty() {
            len.saturating_sub(1)
        } else {
            b.parse::<u64>().map_err(|_| ())?.min(len.saturating_sub(1))
        };
        (first, last)
    };
    if first >= len || last < first {
        return Err(());
    }
    Ok(Some((first, last)))
}

/// Serves one request to a download URL (`token` is the part after the prefix).
pub(crate) async fn serve(
    sh: Arc<Shared>,
    method: &str,
    headers: &HeaderMap,
    path: &str,
    token: &str,
    kill: KillSwitch,
) -> Response {
    let svc = &sh.drive;
    if method != "GET" {
        svc.stats.record(Kind::Download, path, None, 405);
        return reply(405, "invalidRequest", "A download URL is read with GET.");
    }
    if headers.contains_key(header::AUTHORIZATION) {
        svc.stats.bearer_refused();
        svc.stats.record(Kind::Download, path, None, 401);
        return reply(
            401,
            "unauthenticated",
            "A pre-authenticated download URL takes no Authorization header.",
        );
    }
    let ticket = {
        let st = svc.state();
        st.tickets
            .get(token)
            .filter(|t| t.expires > tokio::time::Instant::now())
            .cloned()
    };
    let Some(ticket) = ticket else {
        svc.stats.record(Kind::Download, path, None, 401);
        return reply(
            401,
            "unauthenticated",
            "The download URL has expired or is not valid; ask for the item's content again.",
        );
    };
    let user = Some(ticket.user.as_str());
    if let Some(status) = svc.faults.take_error() {
        svc.stats.record(Kind::Download, path, user, status);
        return super::super::into_response(super::server_error_reply(status), None);
    }
    if let Err(t) = svc.faults.admit(&ticket.user) {
        svc.stats.record(Kind::Download, path, user, t.status);
        svc.stats.throttled();
        return super::throttled(t);
    }
    let file = {
        let st = svc.state();
        st.drive(&ticket.drive)
            .and_then(|d| d.item(&ticket.item))
            .and_then(|i| match &i.kind {
                ItemKind::File { mime, bytes } => Some((mime.clone(), bytes.clone())),
                _ => None,
            })
    };
    let gone = svc.faults.is_hidden(&ticket.item) || svc.faults.is_lost(&ticket.item);
    let Some((mime, bytes)) = file.filter(|_| !gone) else {
        svc.stats.record(Kind::Download, path, user, 404);
        return reply(404, "itemNotFound", "The resource could not be found.");
    };
    if svc.faults.is_too_large(&ticket.item) {
        svc.stats.record(Kind::Download, path, user, 503);
        let r = Reply {
            status: 503,
            headers: Vec::new(),
            body: Body::Html(TOO_LARGE_PAGE.to_owned()),
        };
        return super::super::into_response(r, None);
    }
    let mut bytes = served_bytes(svc, &ticket.item, &bytes);
    let grown = svc.faults.grown_by(&ticket.item);
    if grown > 0 {
        let mut more = bytes.to_vec();
        more.resize(more.len() + grown, 0);
        bytes = Bytes::from(more);
    }
    let len = bytes.len() as u64;
    let asked = if svc.faults.ignores_range() {
        Ok(None)
    } else {
        range(headers, len)
    };
    let (status, first, last) = match asked {
        Ok(None) => (StatusCode::OK, 0, len.saturating_sub(1)),
        Ok(Some((f, l))) => (StatusCode::PARTIAL_CONTENT, f, l),
        Err(()) => {
            svc.stats.record(Kind::Download, path, user, 416);
            let mut r = reply(
                416,
                "invalidRange",
                "The requested range is not satisfiable.",
            );
            if let Ok(v) = HeaderValue::from_str(&format!("bytes */{len}")) {
                r.headers_mut().insert(header::CONTENT_RANGE, v);
            }
            return r;
        }
    };
    let body = if len == 0 {
        Bytes::new()
    } else {
        bytes.slice(first as usize..=last as usize)
    };
    let announced = body.len() as u64;
    let cut = svc.faults.take_cut();
    let stall = if cut.is_none() {
        svc.faults.take_stall()
    } else {
        None
    };
    svc.stats
        .record(Kind::Download, path, user, status.as_u16());
    let sent = Arc::clone(&svc.stats.bytes);
    let stream = futures::stream::unfold(0usize, move |at| {
        let body = body.clone();
        let sent = Arc::clone(&sent);
        let kill = kill.clone();
        async move {
            if at >= body.len() {
                return None;
            }
            let quiet_at = stall.map(|k| (k as usize).min(body.len()));
            if quiet_at.is_some_and(|q| at >= q) {
                // The answer goes quiet: headers and the bytes before sent, the connection kept
                // open until the client gives up on it.
                futures::future::pending::<()>().await;
            }
            let limit = cut.map_or(body.len(), |k| (k as usize).min(body.len()));
            if at >= limit {
                // The transfer breaks: the client has fewer bytes than `Content-Length` says, and
                // the connection is gone (no client may reuse it). Pending once first, so the
                // server writes out the headers and the bytes before the cut, as a real transfer
                // broken midway has delivered them.
                tokio::task::yield_now().await;
                kill.kill();
                return Some((
                    Err(std::io::Error::new(
                        std::io::ErrorKind::ConnectionReset,
                        "transfer cut by the test server",
                    )),
                    usize::MAX,
                ));
            }
            let end = (at + CHUNK).min(quiet_at.map_or(limit, |q| q.min(limit)));
            sent.fetch_add((end - at) as u64, Ordering::SeqCst);
            Some((Ok(body.slice(at..end)), end))
        }
    });
    let mut resp = Response::new(AxumBody::from_stream(stream));
    *resp.status_mut() = status;
    let h = resp.headers_mut();
    if let Ok(v) = HeaderValue::from_str(&mime) {
        h.insert(header::CONTENT_TYPE, v);
    }
    h.insert(header::CONTENT_LENGTH, HeaderValue::from(announced));
    h.insert(header::ACCEPT_RANGES, HeaderValue::from_static("bytes"));
    if status == StatusCode::PARTIAL_CONTENT {
        if let Ok(v) = HeaderValue::from_str(&format!("bytes {first}-{last}/{len}")) {
            h.insert(header::CONTENT_RANGE, v);
        }
    }
    resp
}
