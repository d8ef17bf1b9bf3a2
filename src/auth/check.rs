//! `doctor`'s sign-in check: asks the tenant's device-code endpoint for a code and discards it. That
//! one request proves what a first `login` needs: the authority and tenant answer, the client id is
//! known there, and the app registration allows public client flows. Nobody is signed in by it and the
//! unused code expires on its own.

use super::device::request_code;
use super::identity::Identity;
use super::AuthError;

/// Checks that the sign-in service accepts this app for a device-code sign-in.
pub async fn check_app(id: &Identity) -> Result<(), AuthError> {
    request_code(id).await.map(|_| ())
}
