//! In-process test servers that behave like Microsoft's sign-in service, Microsoft Graph's OneNote API
//! and the Notion API, strictly as documented (`shared/spec/`), with fault injection and inspection.
//!
//! They live in the library (not under `tests/`) because both the test suite and the offline demo use
//! them. A server more lenient than the real service hides bugs: rules are never loosened for a test.

pub mod auth;
pub mod generator;
pub mod graph;
pub mod lab;
pub mod net;
pub mod notion;

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use tokio::time::Instant;

/// A user known to the sign-in and Graph test servers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TestUser {
    /// Graph user id (`/me` `id`).
    pub id: String,
    /// `userPrincipalName`.
    pub upn: String,
    /// `displayName`.
    pub display_name: String,
}

impl TestUser {
    /// A user with a predictable id and principal name derived from `name` (e.g. "alice").
    pub fn named(name: &str) -> Self {
        Self {
            id: format!("{name}-0000-user-id"),
            upn: format!("{name}@contoso.test"),
            display_name: name.to_owned(),
        }
    }
}

/// Why an access token was not accepted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TokenProblem {
    /// Never issued, or revoked.
    Unknown,
    /// Issued but past its lifetime.
    Expired,
}

/// Access tokens issued by the sign-in server and checked by the Graph server: the one piece of state
/// the two share, as the real services share Entra ID.
#[derive(Debug, Default)]
pub struct TokenRegistry {
    tokens: Mutex<HashMap<String, Issued>>,
}

/// One access token: whose it is, until when, and the delegated scopes it carries.
#[derive(Clone, Debug)]
struct Issued {
    user: String,
    expires: Instant,
    scopes: Vec<String>,
}

/// The scopes a token inserted without any carries: what notebridge asks for by default.
pub const DEFAULT_SCOPES: &[&str] = &["User.Read", "Notes.Read"];

impl TokenRegistry {
    /// Records `token` as valid for `user_id` for `lifetime` from now (tokio's clock).
    /// The token carries [`DEFAULT_SCOPES`].
    pub fn insert(&self, token: &str, user_id: &str, lifetime: Duration) {
        let scopes: Vec<String> = DEFAULT_SCOPES.iter().map(|s| s.to_string()).collect();
        self.insert_scoped(token, user_id, lifetime, &scopes);
    }

    /// Records `token` as valid for `user_id` for `lifetime`, carrying `scopes` (as granted).
    pub fn insert_scoped(&self, token: &str, user_id: &str, lifetime: Duration, scopes: &[String]) {
        self.tokens.lock().expect("token registry poisoned").insert(
            token.to_owned(),
            Issued {
                user: user_id.to_owned(),
                expires: Instant::now() + lifetime,
                scopes: scopes.to_vec(),
            },
        );
    }

    /// The user a bearer token belongs to, or why it is refused.
    pub fn check(&self, token: &str) -> Result<String, TokenProblem> {
        self.check_scoped(token).map(|(u, _)| u)
    }

    /// The user a bearer token belongs to and the scopes it carries, or why it is refused.
    pub fn check_scoped(&self, token: &str) -> Result<(String, Vec<String>), TokenProblem> {
        let map = self.tokens.lock().expect("token registry poisoned");
        match map.get(token) {
            None => Err(TokenProblem::Unknown),
            Some(i) if Instant::now() >= i.expires => Err(TokenProblem::Expired),
            Some(i) => Ok((i.user.clone(), i.scopes.clone())),
        }
    }

    /// Expires every access token of `user_id` at once (tests force a 401 mid-run with it).
    pub fn expire_user(&self, user_id: &str) {
        let now = Instant::now();
        for i in self
            .tokens
            .lock()
            .expect("token registry poisoned")
            .values_mut()
        {
            if i.user == user_id {
                i.expires = now;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn tokens_expire_on_tokio_time() {
        let r = TokenRegistry::default();
        r.insert("t1", "u1", Duration::from_secs(60));
        assert_eq!(r.check("t1"), Ok("u1".into()));
        assert_eq!(r.check("nope"), Err(TokenProblem::Unknown));
        tokio::time::sleep(Duration::from_secs(60)).await;
        assert_eq!(r.check("t1"), Err(TokenProblem::Expired));
        r.insert("t2", "u1", Duration::from_secs(60));
        r.expire_user("u1");
        assert_eq!(r.check("t2"), Err(TokenProblem::Expired));
    }
}
