//! A pass-through in front of the Graph test server that may change what it answers (garble a page's
//! ink, serve hostile HTML, point images elsewhere). Every request still reaches the server, so its
//! budgets count it as they would.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};

/// Changes one answer: given the request's path and query, the status and (mutable) headers, and the
/// body, returns the body to hand on.
pub type Rewrite = dyn Fn(&str, StatusCode, &mut HeaderMap, Bytes) -> Bytes + Send + Sync;

struct Proxy {
    upstream: String,
    rewrite: Box<Rewrite>,
    http: reqwest::Client,
}

async fn forward(State(p): State<Arc<Proxy>>, req: Request) -> Response {
    let path = req
        .uri()
        .path_and_query()
        .map(|x| x.as_str().to_owned())
        .unwrap_or_default();
    let mut out = p
        .http
        .request(req.method().clone(), format!("{}{path}", p.upstream));
    for (k, v) in req.headers() {
        if k != "host" {
            out = out.header(k, v);
        }
    }
    let body = axum::body::to_bytes(req.into_body(), usize::MAX)
        .await
        .unwrap();
    let answer = out.body(body).send().await.unwrap();
    let status = StatusCode::from_u16(answer.status().as_u16()).unwrap();
    let mut headers = HeaderMap::new();
    for (k, v) in answer.headers() {
        if k != "content-length" && k != "transfer-encoding" {
            headers.insert(k.clone(), v.clone());
        }
    }
    let body = answer.bytes().await.unwrap();
    let body = (p.rewrite)(&path, status, &mut headers, body);
    (status, headers, body).into_response()
}

/// Starts the proxy in front of `upstream_base` (the Graph base URL); returns the base URL to give
/// notebridge instead.
pub async fn start(
    upstream_base: &str,
    rewrite: impl Fn(&str, StatusCode, &mut HeaderMap, Bytes) -> Bytes + Send + Sync + 'static,
) -> String {
    let url = url::Url::parse(upstream_base).unwrap();
    let origin = format!("{}://{}", url.scheme(), url.host_str().unwrap())
        + &url.port().map(|p| format!(":{p}")).unwrap_or_default();
    let state = Arc::new(Proxy {
        upstream: origin,
        rewrite: Box::new(rewrite),
        http: reqwest::Client::new(),
    });
    let app = axum::Router::new().fallback(forward).with_state(state);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    format!("http://{addr}{}", url.path())
}
