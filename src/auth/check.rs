//! `doctor`'s sign-in check: asks the tenant's device-code endpoint for a code and discards it. That
//! one request proves what a first `login` needs: the authority and tenant answer, the client id is
//! known there, and the app registration allows public client flows. Nobody is signed in by it and the
//! unused code expires on its own.

use oauth2::basic::BasicErrorResponseType;
use oauth2::{RequestTokenError, StandardDeviceAuthorizationResponse};

use super::identity::{describe, transport_detail, Identity};
use super::AuthError;

/// Checks that the sign-in service accepts this app for a device-code sign-in.
pub async fn check_app(id: &Identity) -> Result<(), AuthError> {
    let _: StandardDeviceAuthorizationResponse = id
        .client
        .exchange_device_code()
        .add_scopes(id.scopes())
        .request_async(&id.http)
        .await
        .map_err(|e| match &e {
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
        })?;
    Ok(())
}
