//! The sign-in service's HTTP client: reqwest as the `oauth2` crate drives it, with each exchange
//! reported to the HTTP trace (`crate::trace`, which redacts every code and token) when one is on.

use std::future::Future;
use std::ops::Deref;
use std::pin::Pin;
use std::time::Instant;

use oauth2::{AsyncHttpClient, HttpClientError, HttpRequest, HttpResponse};

use crate::trace;

/// A reqwest client that the `oauth2` crate can use and that the trace sees through.
#[derive(Clone, Debug)]
pub(crate) struct TracedHttp(pub(crate) reqwest::Client);

impl Deref for TracedHttp {
    type Target = reqwest::Client;

    fn deref(&self) -> &reqwest::Client {
        &self.0
    }
}

impl<'c> AsyncHttpClient<'c> for TracedHttp {
    type Error = HttpClientError<reqwest::Error>;
    type Future =
        Pin<Box<dyn Future<Output = Result<HttpResponse, Self::Error>> + Send + Sync + 'c>>;

    fn call(&'c self, request: HttpRequest) -> Self::Future {
        Box::pin(async move {
            if !trace::enabled() {
                return AsyncHttpClient::call(&self.0, request).await;
            }
            let method = request.method().to_string();
            let url = request.uri().to_string();
            let request_headers = trace::header_pairs(request.headers());
            let body = request.body().clone();
            let started = Instant::now();
            let result = AsyncHttpClient::call(&self.0, request).await;
            let mut ex = trace::Exchange {
                service: "sign-in",
                method: &method,
                url: &url,
                request_headers,
                request_body: Some(&body),
                elapsed: started.elapsed(),
                ..trace::Exchange::default()
            };
            match &result {
                Ok(resp) => {
                    ex.status = Some(resp.status().as_u16());
                    ex.response_headers = trace::header_pairs(resp.headers());
                    ex.response_body = Some(resp.body());
                    trace::record(ex);
                }
                Err(e) => {
                    ex.error = Some(e.to_string());
                    trace::record(ex);
                }
            }
            result
        })
    }
}
