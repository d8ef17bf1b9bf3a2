//! The configured app as the `oauth2` crate sees it: client id, the tenant's device-code and token
//! endpoints, scopes, and an HTTP client that never follows redirects.

use std::time::Duration;

use oauth2::basic::BasicClient;
use oauth2::{
    ClientId, DeviceAuthorizationUrl, EndpointNotSet, EndpointSet, HttpClientError,
    RequestTokenError, Scope, TokenUrl,
};

use super::http::TracedHttp;
use super::AuthError;
use crate::settings::Settings;

/// `BasicClient` with the device-authorization and token endpoints set.
pub(crate) type DeviceClient =
    BasicClient<EndpointNotSet, EndpointSet, EndpointNotSet, EndpointNotSet, EndpointSet>;

/// How long one HTTP exchange with the sign-in service or `/me` may take.
const HTTP_TIMEOUT: Duration = Duration::from_secs(60);

/// The app's sign-in configuration.
#[derive(Clone, Debug)]
pub struct Identity {
    pub(crate) client: DeviceClient,
    pub(crate) http: TracedHttp,
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
        let http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(HTTP_TIMEOUT)
            .build()
            .map_err(|e| AuthError::Transport {
                during: "setting up HTTPS",
                detail: e.to_string(),
            })?;
        Ok(Identity {
            client,
            http: TracedHttp(http),
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

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or(s).trim()
}

/// A transport or parse failure as text. Response bodies are left out on purpose: a token response
/// that failed to parse still holds tokens.
pub(crate) fn transport_detail<T: oauth2::ErrorResponse>(
    e: &RequestTokenError<HttpClientError<reqwest::Error>, T>,
) -> String {
    match e {
        RequestTokenError::ServerResponse(_) => "unexpected error response".into(),
        RequestTokenError::Request(HttpClientError::Reqwest(r)) => {
            let mut s = r.to_string();
            let mut src = std::error::Error::source(r.as_ref());
            while let Some(c) = src {
                s.push_str(&format!(": {c}"));
                src = c.source();
            }
            s
        }
        RequestTokenError::Request(other) => other.to_string(),
        RequestTokenError::Parse(p, _body) => {
            format!("unreadable response (at field {:?})", p.path().to_string())
        }
        RequestTokenError::Other(s) => s.clone(),
    }
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
    fn missing_client_id_is_a_usage_error() {
        let e = Identity::from_settings(&settings(&[])).unwrap_err();
        assert!(matches!(e, AuthError::MissingClientId));
    }
}
