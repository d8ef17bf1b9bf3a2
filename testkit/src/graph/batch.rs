//! JSON batching (`POST /v1.0/$batch`): validation as documented (at most 20 requests, unique ids,
//! relative URLs, `dependsOn`), each inner request evaluated individually against throttling, parallel
//! inner requests holding a concurrency slot for the whole batch, and responses in shuffled order.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use base64::Engine as _;
use rand::seq::SliceRandom;
use serde_json::{json, Map, Value};
use tokio::time::Instant;

use super::routes::{Body, Reply};
use super::stats::LogEntry;
use super::teams::Who;
use super::throttle::{self, Rejection, SlotGuard};
use super::Shared;

/// Most inner requests one batch may carry.
pub const MAX_BATCH: usize = 20;

struct Inner {
    id: String,
    method: String,
    url: String,
    depends_on: Vec<String>,
}

fn bad(msg: &str) -> Reply {
    Reply::error(400, "BadRequest", msg)
}

fn parse(body: &[u8]) -> Result<Vec<Inner>, Reply> {
    let v: Value =
        serde_json::from_slice(body).map_err(|_| bad("Invalid batch payload format."))?;
    let reqs = v
        .get("requests")
        .and_then(Value::as_array)
        .ok_or_else(|| bad("Invalid batch payload format: 'requests' is required."))?;
    if reqs.is_empty() {
        return Err(bad("Invalid batch payload format: 'requests' is empty."));
    }
    if reqs.len() > MAX_BATCH {
        return Err(bad(&format!(
            "The number of batch requests exceeds the maximum of {MAX_BATCH}."
        )));
    }
    let mut out = Vec::new();
    let mut seen = HashSet::new();
    for r in reqs {
        let field = |name: &str| r.get(name).and_then(Value::as_str).map(str::to_owned);
        let id = field("id").ok_or_else(|| bad("Batch request is missing the required 'id'."))?;
        if !seen.insert(id.to_lowercase()) {
            return Err(bad(&format!("Batch request ids must be unique: '{id}'.")));
        }
        let method =
            field("method").ok_or_else(|| bad(&format!("Batch request '{id}' has no method.")))?;
        let url = field("url").ok_or_else(|| bad(&format!("Batch request '{id}' has no url.")))?;
        if url.contains("://") {
            return Err(bad(&format!(
                "Batch request '{id}': the url must be relative to the version root."
            )));
        }
        if r.get("body").is_some() {
            let has_ct = r
                .get("headers")
                .and_then(Value::as_object)
                .is_some_and(|h| h.keys().any(|k| k.eq_ignore_ascii_case("content-type")));
            if !has_ct {
                return Err(bad(&format!(
                    "Batch request '{id}' has a body but no Content-Type header."
                )));
            }
        }
        let depends_on = match r.get("dependsOn") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(a)) => a
                .iter()
                .map(|d| d.as_str().map(str::to_owned))
                .collect::<Option<Vec<_>>>()
                .ok_or_else(|| bad(&format!("Batch request '{id}': dependsOn must hold ids.")))?,
            Some(_) => {
                return Err(bad(&format!(
                    "Batch request '{id}': dependsOn must be an array."
                )))
            }
        };
        out.push(Inner {
            id,
            method,
            url,
            depends_on,
        });
    }
    for r in &out {
        for d in &r.depends_on {
            if !seen.contains(&d.to_lowercase()) {
                return Err(bad(&format!(
                    "Batch request '{}' depends on unknown request '{d}'.",
                    r.id
                )));
            }
        }
    }
    Ok(out)
}

/// Execution order: every request after its dependencies; `None` on a cycle.
fn order(reqs: &[Inner]) -> Option<Vec<usize>> {
    let mut done: HashSet<String> = HashSet::new();
    let mut out = Vec::new();
    while out.len() < reqs.len() {
        let before = out.len();
        for (i, r) in reqs.iter().enumerate() {
            if !out.contains(&i)
                && r.depends_on
                    .iter()
                    .all(|d| done.contains(&d.to_lowercase()))
            {
                out.push(i);
            }
        }
        for &i in &out[before..] {
            done.insert(reqs[i].id.to_lowercase());
        }
        if out.len() == before {
            return None;
        }
    }
    Some(out)
}

fn inner_json(id: &str, reply: Reply) -> Value {
    let mut headers = Map::new();
    for (k, v) in &reply.headers {
        headers.insert(k.clone(), json!(v));
    }
    let b64 = base64::engine::general_purpose::STANDARD;
    let body = match reply.body {
        Body::Json(v) => {
            headers.insert(
                "Content-Type".into(),
                json!("application/json; odata.metadata=minimal; odata.streaming=true; IEEE754Compatible=false; charset=utf-8"),
            );
            v
        }
        // Non-JSON inner bodies come back base64-encoded.
        Body::Html(h) => {
            headers.insert("Content-Type".into(), json!("text/html"));
            json!(b64.encode(h.as_bytes()))
        }
        Body::Raw {
            content_type,
            bytes,
        } => {
            headers.insert("Content-Type".into(), json!(content_type));
            json!(b64.encode(bytes))
        }
        Body::Binary(r) => {
            headers.insert("Content-Type".into(), json!(r.mime.clone()));
            let bytes = crate::generator::resource_bytes(&r, 0, r.len as usize);
            json!(b64.encode(bytes))
        }
    };
    json!({ "id": id, "status": reply.status, "headers": headers, "body": body })
}

/// Runs a batch for `user`; the reply is 200 whenever the payload is valid, whatever the inner results.
pub(crate) fn run(sh: &Arc<Shared>, who: &Who, body: &[u8]) -> Reply {
    let user = who.user;
    let reqs = match parse(body) {
        Ok(r) => r,
        Err(e) => return e,
    };
    let Some(seq) = order(&reqs) else {
        return bad("Batch requests have circular dependencies.");
    };
    let mut held: Vec<SlotGuard> = Vec::new();
    let mut status_of: HashMap<String, u16> = HashMap::new();
    let mut responses = Vec::new();
    for i in seq {
        let r = &reqs[i];
        let failed_dep = r
            .depends_on
            .iter()
            .find(|d| status_of.get(&d.to_lowercase()).is_none_or(|s| *s >= 400));
        let path = if r.url.starts_with('/') {
            r.url.clone()
        } else {
            format!("/{}", r.url)
        };
        let (p, q) = path.split_once('?').unwrap_or((&path, ""));
        if failed_dep.is_none() && super::drive::is_drive_path(p) {
            // A drive request: SharePoint's throttling and counters, none of OneNote's.
            let reply = super::drive::api_reply(sh, who, &r.method, &path, p, q);
            status_of.insert(r.id.to_lowercase(), reply.status);
            responses.push(inner_json(&r.id, reply));
            continue;
        }
        let (reply, over) = if let Some(d) = failed_dep {
            (
                Reply::error(
                    424,
                    "FailedDependency",
                    &format!("The request depends on request '{d}', which failed."),
                ),
                false,
            )
        } else {
            match throttle::admit(&sh.throttle, user) {
                Err(rej) => (
                    sh.throttled_reply(rej.scope(), user, true),
                    matches!(rej, Rejection::OverLimit(_)),
                ),
                Ok((guard, used)) => {
                    let reply = match sh.faults.next_inner() {
                        Some(429) => sh.throttled_reply(throttle::Scope::User, user, true),
                        Some(s) => super::fault_reply(s),
                        None => {
                            let (p, q) = path.split_once('?').unwrap_or((&path, ""));
                            let mut reply = sh.dispatch(who, &r.method, p, q);
                            sh.add_percentage(&mut reply, used);
                            reply
                        }
                    };
                    // Parallel requests run together, so each keeps its slot until the batch ends.
                    if r.depends_on.is_empty() {
                        held.push(guard);
                    }
                    (reply, false)
                }
            }
        };
        status_of.insert(r.id.to_lowercase(), reply.status);
        sh.stats.record(
            LogEntry {
                method: r.method.clone(),
                path: path.clone(),
                user: Some(user.to_owned()),
                status: reply.status,
                at: Instant::now(),
                inner_batch: true,
            },
            over,
        );
        responses.push(inner_json(&r.id, reply));
    }
    drop(held);
    responses.shuffle(&mut *sh.shuffle.lock().expect("shuffle rng poisoned"));
    // Graph's throttling guidance: a batch whose inner requests were throttled may itself fail with
    // 424, still carrying every inner response.
    let outer = if sh.faults.answers_424_on_throttle() && status_of.values().any(|s| *s == 429) {
        424
    } else {
        200
    };
    Reply::json(outer, json!({ "responses": responses }))
}
