//! The HTTP trace for a first real run (`NOTEBRIDGE_TRACE=FILE` or `--trace FILE`): every exchange
//! with the sign-in service, Graph and Notion as one JSON line (time, service, method, URL, status,
//! headers, duration, a body excerpt), so a user can hand over exactly what a real service answered.
//!
//! It never holds a secret: authorisation and cookie headers, every query parameter, form field and
//! JSON key that names a token, code, secret, signature, credential or key is replaced by
//! `[redacted]` before anything is written. Page content is left out: request and response bodies are
//! written only for answers that failed (Graph's and Notion's error documents) unless
//! `NOTEBRIDGE_TRACE_BODIES=1`, and even then redacted and cut short.
//!
//! The trace is process-wide, like logging: it is installed once at start-up, and each client reports
//! its exchanges to it when it is on.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use serde_json::{json, Map, Value};

/// The most of one body a trace line holds, in characters.
pub const BODY_EXCERPT_CHARS: usize = 2_000;

const REDACTED: &str = "[redacted]";

struct Trace {
    out: Mutex<BufWriter<File>>,
    bodies: bool,
}

static TRACE: OnceLock<Trace> = OnceLock::new();

/// Starts tracing into `path` (created private to its owner, since it names accounts and pages; a
/// trace already there is appended to, so the runs of a cron job follow one another in one file).
/// `bodies` writes every body (redacted), not only those of failed answers.
pub fn install(path: &Path, bodies: bool) -> std::io::Result<()> {
    let file =
        crate::platform::open_private(std::fs::OpenOptions::new().create(true).append(true), path)?;
    let _ = TRACE.set(Trace {
        out: Mutex::new(BufWriter::new(file)),
        bodies,
    });
    Ok(())
}

/// Whether a trace is being written (callers skip building an [`Exchange`] when not).
pub fn enabled() -> bool {
    TRACE.get().is_some()
}

/// Writes what is buffered (at exit; each line is also flushed when written).
pub fn flush() {
    if let Some(t) = TRACE.get() {
        let _ = t.out.lock().map(|mut o| o.flush());
    }
}

/// One HTTP exchange as a client saw it.
#[derive(Debug, Default)]
pub struct Exchange<'a> {
    /// `sign-in`, `graph` or `notion`.
    pub service: &'static str,
    /// HTTP method.
    pub method: &'a str,
    /// The full URL.
    pub url: &'a str,
    /// The request's headers.
    pub request_headers: Vec<(String, String)>,
    /// The request's body, when it has one.
    pub request_body: Option<&'a [u8]>,
    /// The answer's status; `None` when none came.
    pub status: Option<u16>,
    /// The answer's headers.
    pub response_headers: Vec<(String, String)>,
    /// The answer's body, when it was read.
    pub response_body: Option<&'a [u8]>,
    /// The transport error, when there was no answer.
    pub error: Option<String>,
    /// From sending to the end of the answer.
    pub elapsed: Duration,
}

/// The largest answer body the trace reads to show it (bigger ones are noted by size only).
const MAX_TRACED_BODY: u64 = 1024 * 1024;

/// Whether bodies of successful answers are written too.
fn bodies_on() -> bool {
    TRACE.get().is_some_and(|t| t.bodies)
}

/// Sends `req` as [`reqwest::RequestBuilder::send`] does, and records the exchange when a trace is
/// on. An answer whose body the trace shows (a failed one, or any with bodies on, up to 1 MiB) is
/// read here and handed on rebuilt, so the caller reads the same bytes.
pub async fn send(
    req: reqwest::RequestBuilder,
    service: &'static str,
) -> reqwest::Result<reqwest::Response> {
    let log = tracing::enabled!(tracing::Level::DEBUG);
    if !enabled() && !log {
        return req.send().await;
    }
    let (client, request) = req.build_split();
    let request = request?;
    let method = request.method().to_string();
    let url = request.url().to_string();
    let request_headers = header_pairs(request.headers());
    let request_body = request
        .body()
        .and_then(reqwest::Body::as_bytes)
        .map(<[u8]>::to_vec);
    let started = std::time::Instant::now();
    let ex = |status, response_headers, response_body, error| Exchange {
        service,
        method: &method,
        url: &url,
        request_headers: request_headers.clone(),
        request_body: request_body.as_deref(),
        status,
        response_headers,
        response_body,
        error,
        elapsed: started.elapsed(),
    };
    let resp = match client.execute(request).await {
        Ok(r) => r,
        Err(e) => {
            let why = e.to_string().replace(url.as_str(), &redact_url(&url));
            record(ex(None, Vec::new(), None, Some(why)));
            return Err(e);
        }
    };
    let status = resp.status();
    if log {
        // `-vv`: every request, its answer and its time (URL redacted, never a body).
        tracing::debug!(
            service,
            status = status.as_u16(),
            elapsed_ms = started.elapsed().as_millis() as u64,
            "{method} {}",
            redact_url(&url)
        );
    }
    if !enabled() {
        return Ok(resp);
    }
    let headers = resp.headers().clone();
    let show = (bodies_on() || status.as_u16() >= 400)
        && resp.content_length().is_none_or(|n| n <= MAX_TRACED_BODY);
    if !show {
        record(ex(
            Some(status.as_u16()),
            header_pairs(&headers),
            None,
            None,
        ));
        return Ok(resp);
    }
    let version = resp.version();
    let bytes = match resp.bytes().await {
        Ok(b) => b,
        Err(e) => {
            let why = e.to_string().replace(url.as_str(), &redact_url(&url));
            record(ex(
                Some(status.as_u16()),
                header_pairs(&headers),
                None,
                Some(why),
            ));
            return Err(e);
        }
    };
    record(ex(
        Some(status.as_u16()),
        header_pairs(&headers),
        Some(&bytes),
        None,
    ));
    let mut rebuilt = oauth2::http::Response::builder()
        .status(status)
        .version(version);
    for (k, v) in headers.iter() {
        rebuilt = rebuilt.header(k, v);
    }
    Ok(reqwest::Response::from(
        rebuilt
            .body(bytes)
            .expect("the parts of an answer just read"),
    ))
}

/// Headers as (name, value) pairs, for an [`Exchange`].
pub fn header_pairs(h: &reqwest::header::HeaderMap) -> Vec<(String, String)> {
    h.iter()
        .map(|(k, v)| {
            (
                k.as_str().to_owned(),
                String::from_utf8_lossy(v.as_bytes()).into_owned(),
            )
        })
        .collect()
}

/// Writes `e` to the trace, when one is installed.
pub fn record(e: Exchange<'_>) {
    let Some(t) = TRACE.get() else { return };
    let line = to_line(&e, t.bodies, chrono::Utc::now());
    if let Ok(mut out) = t.out.lock() {
        let _ = writeln!(out, "{line}");
        let _ = out.flush();
    }
}

/// The JSON line for `e` (redacted; bodies only when `bodies` or the answer failed).
fn to_line(e: &Exchange<'_>, bodies: bool, now: chrono::DateTime<chrono::Utc>) -> Value {
    let failed = e.status.is_none_or(|s| s >= 400);
    let body = |b: Option<&[u8]>| -> Value {
        match b {
            Some(b) if bodies || failed => Value::String(body_excerpt(b)),
            Some(b) => Value::String(format!("[{} bytes, not traced]", b.len())),
            None => Value::Null,
        }
    };
    let mut line = json!({
        "time": now.to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
        "service": e.service,
        "method": e.method,
        "url": redact_url(e.url),
        "status": e.status,
        "elapsed_ms": e.elapsed.as_millis() as u64,
        "request_headers": headers(&e.request_headers),
        "response_headers": headers(&e.response_headers),
        "request_body": body(e.request_body),
        "response_body": body(e.response_body),
    });
    if let Some(err) = &e.error {
        line["error"] = Value::String(err.clone());
    }
    line
}

/// Whether a header, query parameter or form field of this name may carry a secret.
fn is_secret_name(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    n == "code"
        || n == "key"
        || n.ends_with("_code")
        || n.ends_with("_key")
        || [
            "token",
            "secret",
            "sig",
            "credential",
            "password",
            "assertion",
            "auth",
            "cookie",
        ]
        .iter()
        .any(|s| n.contains(s))
}

/// Whether a JSON key may carry a secret. A bare `code` in JSON is an error code (Graph's `20166`,
/// Notion's `validation_error`), which a trace must keep; `device_code` and `user_code` are secrets.
fn is_secret_key(name: &str) -> bool {
    name != "code" && is_secret_name(name)
}

fn headers(h: &[(String, String)]) -> Value {
    let mut m = Map::new();
    for (k, v) in h {
        let v = if is_secret_name(k) {
            REDACTED.to_owned()
        } else {
            v.clone()
        };
        m.insert(k.to_ascii_lowercase(), Value::String(v));
    }
    Value::Object(m)
}

/// The URL with the values of secret-bearing query parameters replaced.
pub fn redact_url(url: &str) -> String {
    let Ok(mut u) = url::Url::parse(url) else {
        // Not a URL we can read: keep only what is before the query.
        return url.split('?').next().unwrap_or_default().to_owned();
    };
    if u.query().is_some() {
        let pairs: Vec<(String, String)> = u
            .query_pairs()
            .map(|(k, v)| {
                let v = if is_secret_name(&k) {
                    REDACTED.to_owned()
                } else {
                    v.into_owned()
                };
                (k.into_owned(), v)
            })
            .collect();
        u.query_pairs_mut().clear().extend_pairs(pairs);
    }
    if u.password().is_some() {
        let _ = u.set_password(Some(REDACTED));
    }
    u.to_string()
}

/// A redacted excerpt of a body: JSON with secret keys replaced, a form with secret fields replaced,
/// anything else as text; cut at [`BODY_EXCERPT_CHARS`].
fn body_excerpt(b: &[u8]) -> String {
    let text = if let Ok(mut v) = serde_json::from_slice::<Value>(b) {
        redact_json(&mut v);
        v.to_string()
    } else {
        let s = String::from_utf8_lossy(b);
        if looks_like_form(&s) {
            redact_form(&s)
        } else {
            s.into_owned()
        }
    };
    let mut out: String = text.chars().take(BODY_EXCERPT_CHARS).collect();
    if out.len() < text.len() {
        out.push_str(" [cut]");
    }
    out
}

/// Replaces the values of secret keys everywhere in `v`, and those values wherever else they occur
/// in its text (Microsoft's device-code `message` repeats the user code), with an explicit stack
/// (bodies are input).
fn redact_json(v: &mut Value) {
    let mut found: Vec<String> = Vec::new();
    let mut stack = vec![&mut *v];
    while let Some(v) = stack.pop() {
        match v {
            Value::Object(m) => {
                for (k, x) in m.iter_mut() {
                    if is_secret_key(k) && !x.is_object() && !x.is_array() {
                        if let Some(s) = x.as_str().filter(|s| s.len() >= 4) {
                            found.push(s.to_owned());
                        }
                        *x = Value::String(REDACTED.to_owned());
                    } else {
                        stack.push(x);
                    }
                }
            }
            Value::Array(a) => stack.extend(a.iter_mut()),
            _ => {}
        }
    }
    if found.is_empty() {
        return;
    }
    let mut stack = vec![v];
    while let Some(v) = stack.pop() {
        match v {
            Value::String(s) => {
                for secret in &found {
                    if s.contains(secret.as_str()) {
                        *s = s.replace(secret.as_str(), REDACTED);
                    }
                }
            }
            Value::Object(m) => stack.extend(m.values_mut()),
            Value::Array(a) => stack.extend(a.iter_mut()),
            _ => {}
        }
    }
}

fn looks_like_form(s: &str) -> bool {
    !s.is_empty() && !s.contains(char::is_whitespace) && s.split('&').all(|kv| kv.contains('='))
}

fn redact_form(s: &str) -> String {
    let pairs: Vec<(String, String)> = url::form_urlencoded::parse(s.as_bytes())
        .map(|(k, v)| {
            let v = if is_secret_name(&k) {
                REDACTED.to_owned()
            } else {
                v.into_owned()
            };
            (k.into_owned(), v)
        })
        .collect();
    url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs(pairs)
        .finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(e: &Exchange<'_>, bodies: bool) -> String {
        to_line(e, bodies, chrono::DateTime::from_timestamp(0, 0).unwrap()).to_string()
    }

    #[test]
    fn secrets_in_headers_urls_forms_and_json_are_redacted() {
        let form =
            b"grant_type=refresh_token&refresh_token=rt-SECRET1&client_id=app&scope=Notes.Read";
        let answer = br#"{"access_token":"at-SECRET2","refresh_token":"rt-SECRET3","expires_in":3600,"nested":{"device_code":"dc-SECRET4","user_code":"UCSECRET9","message":"enter the code UCSECRET9"}}"#;
        let e = Exchange {
            service: "sign-in",
            method: "POST",
            url: "https://login.example/common/oauth2/v2.0/token?code=SECRET5&x=1",
            request_headers: vec![
                ("Authorization".into(), "Bearer SECRET6".into()),
                ("Cookie".into(), "a=SECRET7".into()),
                (
                    "Content-Type".into(),
                    "application/x-www-form-urlencoded".into(),
                ),
            ],
            request_body: Some(form),
            status: Some(200),
            response_headers: vec![("Set-Cookie".into(), "b=SECRET8".into())],
            response_body: Some(answer),
            ..Exchange::default()
        };
        let l = line(&e, true);
        assert!(!l.contains("SECRET"), "{l}");
        assert!(
            l.contains("client_id=app") && l.contains("expires_in"),
            "{l}"
        );
        assert!(l.contains("x=1"), "{l}");
        assert!(l.contains("application/x-www-form-urlencoded"), "{l}");
    }

    #[test]
    fn bodies_are_left_out_unless_asked_for_or_the_answer_failed() {
        let page = b"<html><body><p>My private note</p></body></html>";
        let ok = Exchange {
            service: "graph",
            method: "GET",
            url: "https://graph.microsoft.com/v1.0/me/onenote/pages/1/content",
            status: Some(200),
            response_body: Some(page),
            ..Exchange::default()
        };
        let l = line(&ok, false);
        assert!(!l.contains("private"), "{l}");
        assert!(l.contains("not traced"), "{l}");
        assert!(line(&ok, true).contains("private"));
        let err = br#"{"error":{"code":"20166","message":"too many requests"}}"#;
        let failed = Exchange {
            status: Some(429),
            response_body: Some(err),
            ..ok
        };
        assert!(line(&failed, false).contains("20166"));
    }

    #[test]
    fn signed_upload_urls_lose_their_signature() {
        let u = redact_url(
            "https://s3.example/f?X-Amz-Signature=SECRET&X-Amz-Credential=SECRET&X-Amz-Security-Token=SECRET&X-Amz-Expires=60",
        );
        assert!(!u.contains("SECRET"), "{u}");
        assert!(u.contains("X-Amz-Expires=60"), "{u}");
    }

    #[test]
    fn long_bodies_are_cut_and_deep_json_does_not_recurse() {
        let big = "x".repeat(10_000);
        assert!(body_excerpt(big.as_bytes()).chars().count() <= BODY_EXCERPT_CHARS + 6);
        let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        // serde_json refuses this depth; the excerpt falls back to text without overflowing the stack
        let ex = body_excerpt(deep.as_bytes());
        assert!(ex.ends_with("[cut]"));
    }
}
