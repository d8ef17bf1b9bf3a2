//! The configured app as the `oauth2` crate sees it: client id, the tenant's device-code and token
//! endpoints, scopes, and an HTTP client that never follows redirects.

use std::time::Duration;

use oauth2::basic::BasicClient;
use oauth2::{
    AsyncHttpClient, ClientId, DeviceAuthorizationUrl, EndpointNotSet, EndpointSet, HttpRequest,
    HttpResponse, RequestTokenError, Scope, TokenUrl,
};

use super::AuthError;
use crate::settings::Settings;
use crate::trace;

/// `BasicClient` with the device-authorization and token endpoints set.
pub(crate) type DeviceClient =
    BasicClient<EndpointNotSet, EndpointSet, EndpointNotSet, EndpointNotSet, EndpointSet>;

/// How long one HTTP exchange with the sign-in service or `/me` may take.
const HTTP_TIMEOUT: Duration = Duration::from_secs(60);

/// The app's sign-in configuration.
#[derive(Clone, Debug)]
pub struct Identity {
    pub(crate) client: DeviceClient,
    pub(crate) http: reqwest::Client,
    /// The same client as the `oauth2` crate's transport, telling a service that is down apart
    /// from one that refuses.
    pub(crate) oauth: SignInHttp,
    pub(crate) scopes: Vec<String>,
    pub(crate) client_id: String,
    pub(crate) graph_url: String,
}

impl Identity {
    /// Builds it from settings; a missing client id is [`AuthError::MissingClientId`].
    pub fn from_settings(settings: &Settings) -> Result<Identity, AuthError> {
        let client_id = settings
            .client_id
            .clone()
            .filter(|c| !c.trim().is_empty())
            .ok_or(AuthError::MissingClientId)?;
        let base = format!(
            "{}/{}/oauth2/v2.0",
            settings.authority_url.trim_end_matches('/'),
            settings.tenant
        );
        let bad = |problem: String| AuthError::BadUrl {
            what: "authority URL",
            url: settings.authority_url.clone(),
            problem,
        };
        let device = DeviceAuthorizationUrl::new(format!("{base}/devicecode"))
            .map_err(|e| bad(e.to_string()))?;
        let token = TokenUrl::new(format!("{base}/token")).map_err(|e| bad(e.to_string()))?;
        let client = BasicClient::new(ClientId::new(client_id.clone()))
            .set_device_authorization_url(device)
            .set_token_uri(token);
        // No redirects: a redirected token request could carry a code or refresh token elsewhere.
        let http = crate::transport::client_builder()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(HTTP_TIMEOUT)
            .build()
            .map_err(|e| AuthError::Transport {
                during: "setting up HTTPS",
                detail: e.to_string(),
            })?;
        Ok(Identity {
            client,
            oauth: SignInHttp(http.clone()),
            http,
            scopes: settings.scopes.clone(),
            client_id,
            graph_url: settings.graph_url.trim_end_matches('/').to_owned(),
        })
    }

    /// The configured scopes as `oauth2` scopes.
    pub(crate) fn scopes(&self) -> impl Iterator<Item = Scope> + '_ {
        self.scopes.iter().map(|s| Scope::new(s.clone()))
    }

    /// The Graph base URL (without trailing slash).
    pub fn graph_url(&self) -> &str {
        &self.graph_url
    }
}

/// The service's error code and description, without anything that could be a secret.
pub(crate) fn describe<T: oauth2::ErrorResponseType + std::fmt::Display>(
    e: &oauth2::StandardErrorResponse<T>,
) -> String {
    match e.error_description() {
        Some(d) => format!("{}: {}", e.error(), first_line(d)),
        None => e.error().to_string(),
    }
}

/// The AADSTS number in an Entra error description ("AADSTS50194: ...").
fn aadsts(description: &str) -> Option<u32> {
    let rest = &description[description.find("AADSTS")? + 6..];
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

/// The clear error for the refusals admins and tenants really answer, when `e` is one of them:
/// AADSTS50194 (single-tenant app with `common`), 65001 (consent), 53003 and its kin (Conditional
/// Access). `scopes` are the ones asked for, named when the service does not name one.
pub(crate) fn tenant_refusal<T: oauth2::ErrorResponseType + std::fmt::Display>(
    e: &oauth2::StandardErrorResponse<T>,
    scopes: &[String],
    account: Option<&str>,
) -> Option<AuthError> {
    let desc = e
        .error_description()
        .map(String::as_str)
        .unwrap_or_default();
    let reason = describe(e);
    match aadsts(desc)? {
        50194 => Some(AuthError::TenantRefused {
            advice: "the app is registered for a single tenant, so it cannot sign in through \
                     `common`: set NOTEBRIDGE_TENANT (or tenant under [microsoft]) to your tenant's \
                     domain or id, e.g. contoso.onmicrosoft.com"
                .into(),
            reason,
        }),
        53000 | 53001 | 53002 | 53003 | 530003 | 50097 => Some(AuthError::TenantRefused {
            advice: "the tenant's Conditional Access policies block this sign-in (the device \
                     code flow, or this device); the tenant's admin must allow it for this app \
                     (Entra admin center > Protection > Conditional Access) before anyone can sign \
                     in with notebridge"
                .into(),
            reason,
        }),
        65001 => {
            let permission = desc
                .split('\'')
                .nth(1)
                .filter(|p| !p.is_empty() && !p.contains(' '))
                .map(str::to_owned)
                .unwrap_or_else(|| scopes.join(" "));
            Some(AuthError::ConsentRequired {
                permission,
                account_hint: account
                    .map(|a| format!(" (account {a:?})"))
                    .unwrap_or_default(),
                reason,
            })
        }
        _ => None,
    }
}

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or(s).trim()
}

/// A transport or parse failure as text. Response bodies are left out on purpose: a token response
/// that failed to parse still holds tokens.
pub(crate) fn transport_detail<T: oauth2::ErrorResponse>(
    e: &RequestTokenError<SignInFailure, T>,
) -> String {
    match e {
        RequestTokenError::ServerResponse(_) => "unexpected error response".into(),
        RequestTokenError::Request(f) => f.to_string(),
        RequestTokenError::Parse(p, _body) => {
            format!("unreadable response (at field {:?})", p.path().to_string())
        }
        RequestTokenError::Other(s) => s.clone(),
    }
}

/// Why an exchange with the sign-in service did not produce an answer worth reading.
#[derive(Debug, thiserror::Error)]
pub enum SignInFailure {
    /// The service could not be reached at all (refused, DNS, connect timeout).
    #[error("could not connect: {0}")]
    Unreachable(String),
    /// The connection broke or timed out after it was made.
    #[error("the connection failed: {0}")]
    Broken(String),
    /// The service answered that it cannot serve now: 5xx, 429 or `temporarily_unavailable`.
    #[error("the sign-in service is unavailable for now (HTTP {status}{code})")]
    Unavailable {
        /// HTTP status.
        status: u16,
        /// `: <error>` when the body named one.
        code: String,
        /// `Retry-After`, when sent.
        retry_after: Option<Duration>,
    },
    /// The request could not be built (a bug).
    #[error("{0}")]
    Request(String),
}

impl SignInFailure {
    /// Whether trying again later can help.
    pub fn is_transient(&self) -> bool {
        use crate::failure::Classify;
        matches!(self.class().next, crate::failure::Next::Retry(_))
    }
}

impl crate::failure::Classify for SignInFailure {
    fn class(&self) -> crate::failure::Class {
        use crate::failure::{Class, Next, Scope};
        match self {
            SignInFailure::Unreachable(_) | SignInFailure::Broken(_) => Class::retry(None),
            SignInFailure::Unavailable { retry_after, .. } => Class::retry(*retry_after),
            // Our request could not be built: a bug every attempt would meet.
            SignInFailure::Request(_) => Class::new(Scope::Run, Next::Never),
        }
    }
}

/// A reqwest error with its causes, without the URL.
fn chain(e: &reqwest::Error) -> String {
    let mut s = e.to_string();
    let mut src = std::error::Error::source(e);
    while let Some(c) = src {
        s.push_str(&format!(": {c}"));
        src = c.source();
    }
    s
}

/// The `oauth2` crate's HTTP transport: reqwest, with answers that mean "down for now" turned into
/// [`SignInFailure::Unavailable`] before the crate reads them as a refusal.
#[derive(Clone, Debug)]
pub(crate) struct SignInHttp(reqwest::Client);

impl<'c> AsyncHttpClient<'c> for SignInHttp {
    type Error = SignInFailure;
    type Future = std::pin::Pin<
        Box<dyn std::future::Future<Output = Result<HttpResponse, SignInFailure>> + Send + 'c>,
    >;

    fn call(&'c self, request: HttpRequest) -> Self::Future {
        Box::pin(async move {
            // What the trace needs of the request, taken before it is consumed (only when tracing).
            let traced = trace::enabled().then(|| {
                (
                    request.method().to_string(),
                    request.uri().to_string(),
                    trace::header_pairs(request.headers()),
                    request.body().clone(),
                    std::time::Instant::now(),
                )
            });
            let record = |status: Option<u16>,
                          headers: Option<&reqwest::header::HeaderMap>,
                          body: Option<&[u8]>,
                          error: Option<String>| {
                if let Some((method, url, request_headers, request_body, started)) = &traced {
                    trace::record(trace::Exchange {
                        service: "sign-in",
                        method,
                        url,
                        request_headers: request_headers.clone(),
                        request_body: Some(request_body),
                        status,
                        response_headers: headers.map(trace::header_pairs).unwrap_or_default(),
                        response_body: body,
                        error,
                        elapsed: started.elapsed(),
                    });
                }
            };
            let req: reqwest::Request = request
                .try_into()
                .map_err(|e: reqwest::Error| SignInFailure::Request(e.to_string()))?;
            let resp = self.0.execute(req).await.map_err(|e| {
                let f = if e.is_connect() {
                    SignInFailure::Unreachable(chain(&e))
                } else {
                    SignInFailure::Broken(chain(&e))
                };
                record(None, None, None, Some(f.to_string()));
                f
            })?;
            let status = resp.status();
            let headers = resp.headers().clone();
            let body = resp.bytes().await.map_err(|e| {
                let f = SignInFailure::Broken(chain(&e));
                record(
                    Some(status.as_u16()),
                    Some(&headers),
                    None,
                    Some(f.to_string()),
                );
                f
            })?;
            record(Some(status.as_u16()), Some(&headers), Some(&body), None);
            let code = serde_json::from_slice::<serde_json::Value>(&body)
                .ok()
                .and_then(|v| v["error"].as_str().map(str::to_owned));
            let down = status.is_server_error()
                || status.as_u16() == 429
                || matches!(
                    code.as_deref(),
                    Some("temporarily_unavailable" | "server_error")
                );
            if down {
                let retry_after = headers
                    .get(reqwest::header::RETRY_AFTER)
                    .and_then(|v| v.to_str().ok())
                    .and_then(|v| v.trim().parse::<f64>().ok())
                    .filter(|s| s.is_finite() && *s >= 0.0)
                    .map(|s| Duration::from_secs_f64(s.min(3600.0)));
                return Err(SignInFailure::Unavailable {
                    status: status.as_u16(),
                    code: code.map(|c| format!(": {c}")).unwrap_or_default(),
                    retry_after,
                });
            }
            let mut b = oauth2::http::Response::builder().status(status.as_u16());
            for (k, v) in headers.iter() {
                b = b.header(k.as_str(), v.as_bytes());
            }
            b.body(body.to_vec())
                .map_err(|e| SignInFailure::Request(e.to_string()))
        })
    }
}

/// The permissions a token response granted: its `scope` field, or, when the service left it out,
/// the scopes asked for (RFC 6749 section 5.1: it may be omitted only when it is what was asked).
/// `offline_access` is a sign-in matter, not a permission on data: it is left out.
pub(crate) fn granted(answered: Option<&Vec<Scope>>, asked: &[String]) -> Vec<String> {
    let all: Vec<String> = match answered {
        Some(s) => s.iter().map(|s| s.to_string()).collect(),
        None => asked.to_vec(),
    };
    all.into_iter()
        .filter(|s| !s.eq_ignore_ascii_case("offline_access"))
        .collect()
}

/// Whether `scope` is a OneDrive/SharePoint file permission (`Files.*`): what lets `--via auto`
/// read section files, and nothing else needs.
pub(crate) fn is_file_permission(scope: &str) -> bool {
    let bare = scope.rsplit('/').next().unwrap_or(scope);
    bare.len() > 6 && bare[..6].eq_ignore_ascii_case("files.")
}

/// Whether the `granted` permissions hold `scope`; Entra names Graph's permissions bare
/// (`Files.Read`) or with the resource (`https://graph.microsoft.com/Files.Read`), in any case.
pub fn granted_holds(granted: &[String], scope: &str) -> bool {
    let bare = |s: &str| s.rsplit('/').next().unwrap_or(s).to_ascii_lowercase();
    let want = bare(scope);
    granted.iter().any(|g| bare(g) == want)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::settings::{DefaultDirs, FlagSettings};
    use std::collections::HashMap;

    fn settings(env: &[(&str, &str)]) -> Settings {
        let mut e: HashMap<String, String> = env
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        e.insert("NOTEBRIDGE_DB".into(), "/tmp/x.db".into());
        Settings::resolve(&FlagSettings::default(), &e, DefaultDirs::default()).unwrap()
    }

    #[test]
    fn endpoints_follow_authority_and_tenant() {
        let s = settings(&[
            ("NOTEBRIDGE_CLIENT_ID", "app-1"),
            ("NOTEBRIDGE_TENANT", "contoso.onmicrosoft.com"),
            ("NOTEBRIDGE_AUTHORITY_URL", "http://127.0.0.1:9/"),
        ]);
        let id = Identity::from_settings(&s).unwrap();
        assert_eq!(
            id.client.device_authorization_url().as_str(),
            "http://127.0.0.1:9/contoso.onmicrosoft.com/oauth2/v2.0/devicecode"
        );
        assert_eq!(
            id.client.token_uri().as_str(),
            "http://127.0.0.1:9/contoso.onmicrosoft.com/oauth2/v2.0/token"
        );
    }

    #[test]
    fn aadsts_numbers_are_read_from_descriptions() {
        assert_eq!(
            aadsts("AADSTS50194: Application 'x' is not configured"),
            Some(50194)
        );
        assert_eq!(aadsts("no code"), None);
    }

    #[test]
    fn missing_client_id_is_a_usage_error() {
        let e = Identity::from_settings(&settings(&[])).unwrap_err();
        assert!(matches!(e, AuthError::MissingClientId));
    }
}
