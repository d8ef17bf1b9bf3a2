//! Sign-in: the Microsoft identity platform's device-code flow, `GET /me`, and silent token refresh.
//!
//! Secrets (access, refresh and device codes) live only in [`AccessToken`], [`Secret`] and the state
//! database; both types redact themselves in `Debug`/`Display`, and no error message carries one.

mod check;
mod device;
mod identity;
mod me;
mod source;

pub use check::check_app;
pub use device::{sign_in, DevicePrompt, SignInTokens};
pub use identity::{granted_holds, Identity, SignInFailure};
pub use me::{fetch_me, Me};
pub use source::TokenSource;

use crate::clock::UnixMillis;
use crate::failure::{Class, Classify, Meaning, Next, Scope};
use crate::store::StoreError;

/// Where to register an app, shown when no client id is configured.
const REGISTER_HELP: &str = "no Microsoft app (client) id is configured. Register a public-client app \
in the Microsoft Entra admin center (App registrations > New registration; supported account types \
matching your tenant setting), then under Authentication > Advanced settings set \"Allow public \
client flows\" to Yes (device code flow), and under API permissions add the delegated Microsoft Graph \
permissions Notes.Read, Files.Read, User.Read and offline_access (Files.Read lets a migration \
read whole section files from OneDrive instead of page by page). Put its Application (client) ID in the \
NOTEBRIDGE_CLIENT_ID environment variable or as client_id under [microsoft] in the config file";

/// Errors of sign-in and token refresh. Messages name the account and never contain a secret.
#[derive(Debug, thiserror::Error)]
pub enum AuthError {
    /// No client id is configured (exit 2).
    #[error("{REGISTER_HELP}")]
    MissingClientId,
    /// An authority or Graph URL that cannot be used (exit 2).
    #[error("invalid {what} {url:?}: {problem}")]
    BadUrl {
        /// Which URL ("authority URL", "Graph URL").
        what: &'static str,
        /// The URL as configured.
        url: String,
        /// Why it does not work.
        problem: String,
    },
    /// The account does not exist or was signed out (exit 3).
    #[error("no signed-in account named {account:?}; run `notebridge login --account {account}`")]
    NoAccount {
        /// The account name.
        account: String,
    },
    /// The refresh token was rejected (expired, revoked, already used) (exit 3).
    #[error(
        "the sign-in of account {account:?} is no longer valid ({reason}); run \
         `notebridge login --account {account}` to sign in again"
    )]
    RefreshRejected {
        /// The account name.
        account: String,
        /// The service's error code and description.
        reason: String,
    },
    /// The user declined on the verification page (exit 3).
    #[error("sign-in was declined on the verification page; run `notebridge login` to try again")]
    Declined,
    /// The code expired before anyone entered it (exit 3).
    #[error("the sign-in code expired before it was entered; run `notebridge login` again")]
    CodeExpired,
    /// Ctrl-C during sign-in (exit 3: still not signed in).
    #[error("sign-in cancelled; nothing was stored")]
    Cancelled,
    /// The service does not accept the configured app (exit 2).
    #[error(
        "the sign-in service refused the app with client id {client_id:?} ({reason}); check the id \
         and that the app registration allows public client flows"
    )]
    ClientRejected {
        /// The configured client id (not a secret).
        client_id: String,
        /// The service's error code and description.
        reason: String,
    },
    /// The tenant refuses this sign-in for a reason its configuration or its admin must change
    /// (exit 2): a single-tenant app used with `common`, Conditional Access blocking the device
    /// code flow. Signing in again as it is cannot help.
    #[error("{advice} (the sign-in service said {reason})")]
    TenantRefused {
        /// What to do, naming the setting or the admin's task.
        advice: String,
        /// The service's error code and description.
        reason: String,
    },
    /// The permission is not consented to (AADSTS65001) (exit 3: sign in again once it is).
    #[error(
        "the permission {permission} has not been consented to for this app{account_hint}; sign in \
         again with `notebridge login` and accept it, or, where users may not consent, ask an admin \
         of the tenant to grant admin consent (Entra admin center > Enterprise applications > the \
         app > Permissions > Grant admin consent) (the sign-in service said {reason})"
    )]
    ConsentRequired {
        /// The permission named by the service (or the requested scopes).
        permission: String,
        /// ` (account "x")`, or empty.
        account_hint: String,
        /// The service's error code and description.
        reason: String,
    },
    /// Any other error answer from the sign-in service (exit 1).
    #[error("sign-in service error while {during}: {reason}")]
    Service {
        /// What was being done.
        during: &'static str,
        /// The service's error code and description.
        reason: String,
    },
    /// The sign-in service or Graph could not be reached or answered garbage (exit 1).
    #[error("could not complete {during}: {detail}")]
    Transport {
        /// What was being done.
        during: &'static str,
        /// What went wrong (no bodies: they may hold tokens).
        detail: String,
    },
    /// The sign-in service could not be reached or was unavailable until the run's time was up: the
    /// work is parked and a later run goes on (exit 75).
    #[error("could not complete {during} before the run's time was up: {detail}")]
    Unavailable {
        /// What was being done.
        during: &'static str,
        /// The last failure.
        detail: String,
    },
    /// `GET /me` failed (exit 1).
    #[error("reading the signed-in user from Graph ({url}) failed: HTTP {status}: {detail}")]
    Me {
        /// The URL requested.
        url: String,
        /// HTTP status.
        status: u16,
        /// Graph's error code and message.
        detail: String,
    },
    /// Login with an existing account name as another user (exit 2).
    #[error(
        "account {account:?} belongs to {existing}, but {new} signed in; use --force to replace it, \
         or pick another name with --account NAME (nothing was changed)"
    )]
    DifferentUser {
        /// The account name.
        account: String,
        /// Its stored principal name.
        existing: String,
        /// The principal name that just signed in.
        new: String,
    },
    /// The state database failed.
    #[error("storing sign-in state for account {account:?}")]
    Store {
        /// The account name.
        account: String,
        /// The store error.
        #[source]
        source: Box<StoreError>,
    },
}

impl Classify for AuthError {
    fn class(&self) -> Class {
        let run = Class::new(Scope::Run, Next::Never);
        let account = Class::new(Scope::Account, Next::Never);
        match self {
            // The configuration or the tenant's admin must change: every account would meet it.
            AuthError::MissingClientId
            | AuthError::BadUrl { .. }
            | AuthError::ClientRejected { .. }
            | AuthError::TenantRefused { .. } => run.means(Meaning::Usage),
            AuthError::DifferentUser { .. } => account.means(Meaning::Usage),
            // This account must sign in (again); the sign-in service retried what it could.
            AuthError::ConsentRequired { .. }
            | AuthError::NoAccount { .. }
            | AuthError::RefreshRejected { .. }
            | AuthError::Declined
            | AuthError::CodeExpired
            | AuthError::Cancelled => account.means(Meaning::SignIn),
            AuthError::Store { source, .. } => source.class(),
            // The service stayed down until the run's time was up: park, fail nothing.
            AuthError::Unavailable { .. } => Class::stop_run(),
            // Unexpected answers, after the refresh's own retries.
            AuthError::Service { .. } | AuthError::Transport { .. } | AuthError::Me { .. } => run,
        }
    }
}

/// A secret string (refresh token) that never prints itself.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// Wraps a secret.
    pub fn new(s: String) -> Self {
        Self(s)
    }

    /// The secret itself, for the one place that sends or stores it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(<redacted>)")
    }
}

/// A bearer access token with its expiry. `Debug` and `Display` never print the token.
#[derive(Clone, PartialEq, Eq)]
pub struct AccessToken {
    secret: String,
    expires_at: UnixMillis,
}

impl AccessToken {
    /// Wraps a token that expires at `expires_at` (unix ms).
    pub fn new(secret: String, expires_at: UnixMillis) -> Self {
        Self { secret, expires_at }
    }

    /// The token, for the `Authorization: Bearer` header only.
    pub fn secret(&self) -> &str {
        &self.secret
    }

    /// When it expires (unix ms).
    pub fn expires_at(&self) -> UnixMillis {
        self.expires_at
    }
}

impl std::fmt::Debug for AccessToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AccessToken")
            .field("secret", &"<redacted>")
            .field("expires_at", &self.expires_at)
            .finish()
    }
}

impl std::fmt::Display for AccessToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "access token (redacted, expires at {})", self.expires_at)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_auth_error_has_one_class() {
        let r = || "r".to_owned();
        let cases: Vec<(AuthError, &str, Option<Meaning>)> = vec![
            (
                AuthError::MissingClientId,
                "run/never",
                Some(Meaning::Usage),
            ),
            (
                AuthError::BadUrl {
                    what: "Graph URL",
                    url: r(),
                    problem: r(),
                },
                "run/never",
                Some(Meaning::Usage),
            ),
            (
                AuthError::ClientRejected {
                    client_id: r(),
                    reason: r(),
                },
                "run/never",
                Some(Meaning::Usage),
            ),
            (
                AuthError::TenantRefused {
                    advice: r(),
                    reason: r(),
                },
                "run/never",
                Some(Meaning::Usage),
            ),
            (
                AuthError::DifferentUser {
                    account: r(),
                    existing: r(),
                    new: r(),
                },
                "account/never",
                Some(Meaning::Usage),
            ),
            (
                AuthError::ConsentRequired {
                    permission: r(),
                    account_hint: r(),
                    reason: r(),
                },
                "account/never",
                Some(Meaning::SignIn),
            ),
            (
                AuthError::NoAccount { account: r() },
                "account/never",
                Some(Meaning::SignIn),
            ),
            (
                AuthError::RefreshRejected {
                    account: r(),
                    reason: r(),
                },
                "account/never",
                Some(Meaning::SignIn),
            ),
            (AuthError::Declined, "account/never", Some(Meaning::SignIn)),
            (
                AuthError::CodeExpired,
                "account/never",
                Some(Meaning::SignIn),
            ),
            (AuthError::Cancelled, "account/never", Some(Meaning::SignIn)),
            (
                AuthError::Unavailable {
                    during: "refreshing",
                    detail: r(),
                },
                "run/stop",
                Some(Meaning::WorkRemaining),
            ),
            (
                AuthError::Service {
                    during: "d",
                    reason: r(),
                },
                "run/never",
                None,
            ),
            (
                AuthError::Transport {
                    during: "d",
                    detail: r(),
                },
                "run/never",
                None,
            ),
            (
                AuthError::Me {
                    url: r(),
                    status: 500,
                    detail: r(),
                },
                "run/never",
                None,
            ),
        ];
        for (e, code, meaning) in cases {
            assert_eq!(
                (e.class().code(), e.meaning()),
                (code.to_owned(), meaning),
                "{e}"
            );
        }
    }

    #[test]
    fn sign_in_transport_failures_are_retried_after_the_services_wait() {
        use crate::failure::Next;
        let wait = std::time::Duration::from_secs(3);
        let f = SignInFailure::Unavailable {
            status: 503,
            code: String::new(),
            retry_after: Some(wait),
        };
        assert_eq!(f.class().next, Next::Retry(Some(wait)));
        assert!(f.is_transient());
        assert!(SignInFailure::Broken("reset".into()).is_transient());
        assert!(SignInFailure::Unreachable("refused".into()).is_transient());
        assert!(!SignInFailure::Request("bad".into()).is_transient());
    }

    #[test]
    fn tokens_never_print_their_secret() {
        let t = AccessToken::new("at-very-secret".into(), 5);
        assert!(!format!("{t:?} {t}").contains("very-secret"));
        let s = Secret::new("rt-very-secret".into());
        assert!(!format!("{s:?}").contains("very-secret"));
        assert_eq!(s.expose(), "rt-very-secret");
    }

    #[test]
    fn errors_map_to_contract_exit_codes() {
        let e = AuthError::RefreshRejected {
            account: "bob".into(),
            reason: "invalid_grant".into(),
        };
        assert_eq!(e.meaning(), Some(Meaning::SignIn));
        let msg = e.to_string();
        assert!(msg.contains("notebridge login --account bob"), "{msg}");
        let none = AuthError::NoAccount {
            account: "x".into(),
        };
        assert_eq!(none.meaning(), Some(Meaning::SignIn));
        assert_eq!(AuthError::MissingClientId.meaning(), Some(Meaning::Usage));
        assert!(AuthError::MissingClientId
            .to_string()
            .contains("NOTEBRIDGE_CLIENT_ID"));
    }
}
