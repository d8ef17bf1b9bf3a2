//! The device-code flow (RFC 8628 as Microsoft runs it): ask for a code, show it, poll for tokens.

use std::time::Duration;

use oauth2::basic::BasicErrorResponseType;
use oauth2::{
    DeviceAuthorizationResponse, DeviceCodeErrorResponseType, ExtraDeviceAuthorizationFields,
    RequestTokenError, TokenResponse,
};
use serde::{Deserialize, Serialize};
use tracing::{debug, info};

use super::identity::{describe, tenant_refusal, transport_detail, Identity};
use super::{AccessToken, AuthError, Secret};
use crate::clock::Clock;

/// Microsoft's non-standard `message` field of the device-code response.
#[derive(Clone, Debug, Deserialize, Serialize)]
pub(super) struct MsExtra {
    message: Option<String>,
}

impl ExtraDeviceAuthorizationFields for MsExtra {}

/// What the user must do to sign in.
#[derive(Clone, Debug)]
pub struct DevicePrompt {
    /// The page to open.
    pub verification_uri: String,
    /// The code to type there (meant to be shown).
    pub user_code: String,
    /// How long the code lives.
    pub expires_in: Duration,
    /// The initial polling interval.
    pub interval: Duration,
    /// Microsoft's ready-made instruction text, when sent.
    pub message: Option<String>,
}

/// Tokens from a completed sign-in.
#[derive(Clone, Debug)]
pub struct SignInTokens {
    /// The access token.
    pub access: AccessToken,
    /// The refresh token (absent only when `offline_access` was not granted).
    pub refresh: Option<Secret>,
    /// The permissions the service granted (its `scope` field).
    pub granted: Vec<String>,
}

/// Lifetime assumed when the service omits `expires_in` (Entra always sends it).
pub(crate) const DEFAULT_LIFETIME: Duration = Duration::from_secs(3600);

/// Asks the tenant's device-code endpoint for a code (the first step of a sign-in; `doctor` uses it
/// alone to prove the app is accepted).
pub(crate) async fn request_code(
    id: &Identity,
) -> Result<DeviceAuthorizationResponse<MsExtra>, AuthError> {
    id.client
        .exchange_device_code()
        .add_scopes(id.scopes())
        .request_async(&id.oauth)
        .await
        .map_err(|e| match &e {
            RequestTokenError::ServerResponse(r)
                if tenant_refusal(r, &id.scopes, None).is_some() =>
            {
                tenant_refusal(r, &id.scopes, None).expect("checked")
            }
            RequestTokenError::ServerResponse(r) => match r.error() {
                BasicErrorResponseType::UnauthorizedClient
                | BasicErrorResponseType::InvalidClient => AuthError::ClientRejected {
                    client_id: id.client_id.clone(),
                    reason: describe(r),
                },
                _ => AuthError::Service {
                    during: "requesting a sign-in code",
                    reason: describe(r),
                },
            },
            _ => AuthError::Transport {
                during: "requesting a sign-in code",
                detail: transport_detail(&e),
            },
        })
}

/// Runs the device-code flow: requests a code, hands it to `on_prompt` (which must show it at once),
/// then polls the token endpoint at the server's interval, honouring `slow_down`, until the user
/// signs in, declines or the code expires.
pub async fn sign_in(
    id: &Identity,
    clock: &Clock,
    on_prompt: impl FnOnce(&DevicePrompt),
) -> Result<SignInTokens, AuthError> {
    let details = request_code(id).await?;
    let prompt = DevicePrompt {
        verification_uri: details.verification_uri().to_string(),
        user_code: details.user_code().secret().clone(),
        expires_in: details.expires_in(),
        interval: details.interval(),
        message: details.extra_fields().message.clone(),
    };
    on_prompt(&prompt);
    info!(
        expires_in_s = prompt.expires_in.as_secs(),
        interval_s = prompt.interval.as_secs(),
        "waiting for the user to enter the code"
    );

    // The crate polls at once; nobody can have typed the code yet, and RFC 8628 asks for `interval`
    // between requests, so the first wait happens here.
    tokio::time::sleep(prompt.interval).await;
    let remaining = prompt.expires_in.saturating_sub(prompt.interval);
    let token = id
        .client
        .exchange_device_access_token(&details)
        .request_async(
            &id.oauth,
            |d| {
                debug!(
                    wait_ms = d.as_millis() as u64,
                    "sign-in pending; polling again"
                );
                tokio::time::sleep(d)
            },
            Some(remaining),
        )
        .await
        .map_err(|e| match &e {
            RequestTokenError::ServerResponse(r)
                if tenant_refusal(r, &id.scopes, None).is_some() =>
            {
                tenant_refusal(r, &id.scopes, None).expect("checked")
            }
            RequestTokenError::ServerResponse(r) => match r.error() {
                DeviceCodeErrorResponseType::ExpiredToken => AuthError::CodeExpired,
                DeviceCodeErrorResponseType::AccessDenied => AuthError::Declined,
                DeviceCodeErrorResponseType::Basic(BasicErrorResponseType::Extension(x))
                    if x == "authorization_declined" =>
                {
                    AuthError::Declined
                }
                DeviceCodeErrorResponseType::Basic(
                    BasicErrorResponseType::UnauthorizedClient
                    | BasicErrorResponseType::InvalidClient,
                ) => AuthError::ClientRejected {
                    client_id: id.client_id.clone(),
                    reason: describe(r),
                },
                _ => AuthError::Service {
                    during: "waiting for the sign-in",
                    reason: describe(r),
                },
            },
            _ => AuthError::Transport {
                during: "waiting for the sign-in",
                detail: transport_detail(&e),
            },
        })?;
    let lifetime = token.expires_in().unwrap_or(DEFAULT_LIFETIME);
    let access = AccessToken::new(
        token.access_token().secret().clone(),
        clock.now_ms() + lifetime.as_millis() as i64,
    );
    info!(
        expires_in_s = lifetime.as_secs(),
        refresh_token = token.refresh_token().is_some(),
        "signed in"
    );
    Ok(SignInTokens {
        access,
        refresh: token
            .refresh_token()
            .map(|r| Secret::new(r.secret().clone())),
        granted: super::identity::granted(token.scopes(), &id.scopes),
    })
}
