//! Access tokens for Graph calls: from the database while fresh, refreshed ahead of expiry and once
//! more after a 401, one refresh at a time per account.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use oauth2::basic::BasicErrorResponseType;
use oauth2::{RefreshToken, RequestTokenError, TokenResponse};
use tracing::{debug, info};

use super::device::DEFAULT_LIFETIME;
use super::identity::{describe, transport_detail, Identity, SignInFailure};
use super::{AccessToken, AuthError};
use crate::clock::{Clock, Jitter, UnixMillis};
use crate::failure::{pause, Classify, Next, Retries, RetryBudget};
use crate::net::{Reachability, Service};
use crate::settings::Settings;
use crate::store::accounts::Account;
use crate::store::Db;

/// The most a token is refreshed ahead of its expiry.
const MAX_MARGIN: Duration = Duration::from_secs(300);

/// Hands out access tokens per account. Cheap to clone; clones share the single-flight locks.
#[derive(Clone, Debug)]
pub struct TokenSource {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    db: Arc<Db>,
    /// The app tokens are asked for with; `None` when no client id is configured. Only a token
    /// request needs one (and then fails with [`AuthError::MissingClientId`]): an import from
    /// files, which asks for none, runs without it.
    id: Option<Identity>,
    /// The configured scopes (a refresh asks for them, less what the account never consented to).
    scopes: Vec<String>,
    clock: Clock,
    /// Shared with the run's other clients: the sign-in service being down is waited out there too.
    reach: Reachability,
    jitter: Jitter,
    /// How often, and after what pause, a refresh the service could not answer for now is tried
    /// again.
    policy: RetryBudget,
    /// One async lock per account: whoever holds it refreshes, the rest wait and reuse the result.
    flights: Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
}

impl TokenSource {
    /// A token source over the accounts in `db`, for the configured app.
    pub fn new(db: Arc<Db>, settings: &Settings, clock: Clock) -> Result<TokenSource, AuthError> {
        let reach = Reachability::new(clock.clone());
        Self::with_network(db, settings, clock, reach, Jitter::from_entropy())
    }

    /// Same, waiting out an unreachable or unavailable sign-in service on `reach` (shared with the
    /// run's other clients, and bounded by its deadline).
    pub fn with_network(
        db: Arc<Db>,
        settings: &Settings,
        clock: Clock,
        reach: Reachability,
        jitter: Jitter,
    ) -> Result<TokenSource, AuthError> {
        let id = match Identity::from_settings(settings) {
            Ok(id) => Some(id),
            Err(AuthError::MissingClientId) => None,
            Err(e) => return Err(e),
        };
        Ok(TokenSource {
            inner: Arc::new(Inner {
                db,
                id,
                scopes: settings.scopes.clone(),
                clock,
                reach,
                jitter,
                policy: settings.retries,
                flights: Mutex::new(HashMap::new()),
            }),
        })
    }

    /// Whether a client id is configured: what signing in and refreshing need. A run that reads an
    /// account's notebooks asks this before any work, so that a missing id is said up front.
    pub fn require_app(&self) -> Result<(), AuthError> {
        self.app().map(|_| ())
    }

    fn app(&self) -> Result<&Identity, AuthError> {
        self.inner.id.as_ref().ok_or(AuthError::MissingClientId)
    }

    /// Where this source records and waits out unreachable services.
    pub fn reachability(&self) -> &Reachability {
        &self.inner.reach
    }

    /// A valid access token for `account`, refreshed when it expires soon.
    pub async fn access_token(&self, account: &str) -> Result<AccessToken, AuthError> {
        let flight = self.flight(account);
        let _turn = flight.lock().await;
        let acct = self.load(account).await?;
        if let Some(t) = self.usable(&acct) {
            return Ok(t);
        }
        self.refresh(&acct).await
    }

    /// A new access token for `account` whatever the stored one's age: proves the refresh token still
    /// works (`doctor`). Shares the single-flight lock with every other caller.
    pub async fn refresh_now(&self, account: &str) -> Result<AccessToken, AuthError> {
        let flight = self.flight(account);
        let _turn = flight.lock().await;
        let acct = self.load(account).await?;
        self.refresh(&acct).await
    }

    /// A new access token after Graph answered 401 to `rejected`. When another caller already replaced
    /// that token, its replacement is returned without a second refresh.
    pub async fn refresh_after_401(
        &self,
        account: &str,
        rejected: &AccessToken,
    ) -> Result<AccessToken, AuthError> {
        let flight = self.flight(account);
        let _turn = flight.lock().await;
        let acct = self.load(account).await?;
        if acct.access_token.as_deref() != Some(rejected.secret()) {
            if let Some(t) = self.usable(&acct) {
                debug!(account, "token already replaced by another request");
                return Ok(t);
            }
        }
        self.refresh(&acct).await
    }

    fn flight(&self, account: &str) -> Arc<tokio::sync::Mutex<()>> {
        self.inner
            .flights
            .lock()
            .expect("token flights poisoned")
            .entry(account.to_owned())
            .or_default()
            .clone()
    }

    /// The signed-in account `account`, read off the runtime (a database locked by another
    /// process waits on the blocking pool, not on a runtime thread).
    async fn load(&self, account: &str) -> Result<Account, AuthError> {
        let name = account.to_owned();
        self.inner
            .db
            .call(move |db| db.account(&name))
            .await
            .map_err(|source| AuthError::Store {
                account: account.to_owned(),
                source: Box::new(source),
            })?
            .filter(Account::signed_in)
            .ok_or_else(|| AuthError::NoAccount {
                account: account.to_owned(),
            })
    }

    /// The stored access token when it is not within its refresh margin.
    fn usable(&self, a: &Account) -> Option<AccessToken> {
        let (tok, exp) = (a.access_token.as_ref()?, a.access_expires_at?);
        let now = self.inner.clock.now_ms();
        (now < exp - refresh_margin(exp, a.updated_at)).then(|| AccessToken::new(tok.clone(), exp))
    }

    /// Refreshes `a`'s tokens. Only a refusal of the grant itself (`invalid_grant`,
    /// `interaction_required`, consent) means "sign in again". A service that cannot be reached is
    /// waited for as long as the run may run (the network's wait, shared with the other clients);
    /// one that answers "not now" is asked again while the refresh's retry count lasts, then the
    /// work is parked ([`AuthError::Unavailable`]). Callers hold the account's flight lock
    /// meanwhile, so every worker waits on this one refresh.
    async fn refresh(&self, a: &Account) -> Result<AccessToken, AuthError> {
        let during = "refreshing an access token";
        let retries = Retries::new(self.inner.policy, 0);
        let mut unreachable = 0u32;
        let mut asked = self.refresh_scopes(a).await;
        loop {
            let failure = match self.exchange(a, &asked).await {
                Ok(resp) => {
                    self.inner.reach.answered(Service::SignIn);
                    return self.store(a, resp, &asked).await;
                }
                // A file permission only speeds a migration up (`--via auto`): one the account
                // never consented to (an account signed in before it was asked for) is left out,
                // not a reason to sign in again.
                Err(Exchange::Final(AuthError::ConsentRequired { permission, .. }))
                    if super::identity::is_file_permission(&permission)
                        && asked.iter().any(|s| s.eq_ignore_ascii_case(&permission)) =>
                {
                    info!(account = %a.name, %permission, "refreshing without a file permission the account has not consented to");
                    asked.retain(|s| !s.eq_ignore_ascii_case(&permission));
                    continue;
                }
                Err(Exchange::Final(e)) => {
                    self.inner.reach.answered(Service::SignIn);
                    return Err(e);
                }
                Err(Exchange::Again(f)) => f,
            };
            match &failure {
                SignInFailure::Unreachable(_) => {
                    unreachable += 1;
                    self.inner
                        .reach
                        .wait(Service::SignIn, unreachable, &self.inner.jitter)
                        .await
                        .map_err(|u| AuthError::Unavailable {
                            during,
                            detail: u.to_string(),
                        })?;
                }
                SignInFailure::Broken(_)
                | SignInFailure::Unavailable { .. }
                | SignInFailure::Request(_) => {
                    self.inner.reach.answered(Service::SignIn);
                    let Some((after, n)) = retries.retry_after(&failure) else {
                        return Err(match failure.class().next {
                            Next::Retry(_) => AuthError::Unavailable {
                                during,
                                detail: failure.to_string(),
                            },
                            Next::Never | Next::Stop | Next::Degrade => AuthError::Transport {
                                during,
                                detail: failure.to_string(),
                            },
                        });
                    };
                    let wait = pause(self.inner.policy.pause, n, &self.inner.jitter)
                        .max(after.unwrap_or_default());
                    let now = self.inner.clock.now_ms();
                    if self
                        .inner
                        .reach
                        .deadline()
                        .is_some_and(|d| now + wait.as_millis() as i64 >= d)
                    {
                        return Err(AuthError::Unavailable {
                            during,
                            detail: failure.to_string(),
                        });
                    }
                    info!(account = %a.name, retry = n + 1, wait_ms = wait.as_millis() as u64, "token refresh failed for now ({failure}); trying again");
                    self.inner.clock.sleep(wait).await;
                }
            }
        }
    }

    /// The scopes a refresh asks for: the configured ones, less the file permissions the
    /// account's last token was not granted (asking for a permission never consented to fails the
    /// whole refresh; `login` asks for it again).
    async fn refresh_scopes(&self, a: &Account) -> Vec<String> {
        let configured = self.inner.scopes.clone();
        let name = a.name.clone();
        let granted = match self.inner.db.call(move |db| db.granted_scopes(&name)).await {
            Ok(Some(g)) => g,
            Ok(None) => return configured,
            Err(e) => {
                tracing::warn!(account = %a.name, "could not read the granted permissions: {e}");
                return configured;
            }
        };
        configured
            .into_iter()
            .filter(|s| {
                !super::identity::is_file_permission(s)
                    || super::identity::granted_holds(&granted, s)
            })
            .collect()
    }

    /// One refresh-token exchange asking for `scopes`.
    async fn exchange(&self, a: &Account, scopes: &[String]) -> Result<RefreshResponse, Exchange> {
        let id = self.app().map_err(Exchange::Final)?;
        let old = RefreshToken::new(a.refresh_token.clone().unwrap_or_default());
        debug!(account = %a.name, "refreshing the access token");
        id.client
            .exchange_refresh_token(&old)
            .add_scopes(scopes.iter().map(|s| oauth2::Scope::new(s.clone())))
            .request_async(&id.oauth)
            .await
            .map_err(|e| {
                Exchange::Final(match &e {
                    RequestTokenError::ServerResponse(r)
                        if super::identity::tenant_refusal(r, &id.scopes, Some(&a.name))
                            .is_some() =>
                    {
                        super::identity::tenant_refusal(r, &id.scopes, Some(&a.name))
                            .expect("checked")
                    }
                    RequestTokenError::ServerResponse(r) => match r.error() {
                        BasicErrorResponseType::InvalidGrant => AuthError::RefreshRejected {
                            account: a.name.clone(),
                            reason: describe(r),
                        },
                        BasicErrorResponseType::Extension(x)
                            if x == "interaction_required" || x == "consent_required" =>
                        {
                            AuthError::RefreshRejected {
                                account: a.name.clone(),
                                reason: describe(r),
                            }
                        }
                        BasicErrorResponseType::UnauthorizedClient
                        | BasicErrorResponseType::InvalidClient => AuthError::ClientRejected {
                            client_id: id.client_id.clone(),
                            reason: describe(r),
                        },
                        BasicErrorResponseType::InvalidRequest
                        | BasicErrorResponseType::InvalidScope
                        | BasicErrorResponseType::UnsupportedGrantType
                        | BasicErrorResponseType::Extension(_) => AuthError::Service {
                            during: "refreshing an access token",
                            reason: describe(r),
                        },
                    },
                    RequestTokenError::Request(f) if f.is_transient() => {
                        let RequestTokenError::Request(f) = e else {
                            unreachable!("matched above")
                        };
                        return Exchange::Again(f);
                    }
                    RequestTokenError::Request(_)
                    | RequestTokenError::Parse(..)
                    | RequestTokenError::Other(_) => AuthError::Transport {
                        during: "refreshing an access token",
                        detail: transport_detail(&e),
                    },
                })
            })
    }

    /// Stores a refresh's tokens and returns the access token.
    async fn store(
        &self,
        a: &Account,
        resp: RefreshResponse,
        asked: &[String],
    ) -> Result<AccessToken, AuthError> {
        let old_secret = a.refresh_token.clone().unwrap_or_default();
        let now = self.inner.clock.now_ms();
        let lifetime = resp.expires_in().unwrap_or(DEFAULT_LIFETIME);
        let access = AccessToken::new(
            resp.access_token().secret().clone(),
            now + lifetime.as_millis() as i64,
        );
        // The old refresh token is spent: the new one is stored with the access token in one
        // transaction before anyone can use either.
        let rt = resp
            .refresh_token()
            .map(|r| r.secret().clone())
            .unwrap_or(old_secret);
        // `auto` reads section files only with the permission the last token carries.
        let granted = super::identity::granted(resp.scopes(), asked);
        let (name, secret, expires) = (
            a.name.clone(),
            access.secret().to_owned(),
            access.expires_at(),
        );
        let (stored, recorded) = self
            .inner
            .db
            .call(move |db| {
                let stored = db.update_tokens(&name, &rt, &secret, expires, now);
                // The permissions are recorded only with the tokens they came with.
                let recorded = stored
                    .is_ok()
                    .then(|| db.save_granted_scopes(&name, &granted));
                (stored, recorded)
            })
            .await;
        stored.map_err(|source| AuthError::Store {
            account: a.name.clone(),
            source: Box::new(source),
        })?;
        if let Some(Err(e)) = recorded {
            tracing::warn!(account = %a.name, "could not record the granted permissions: {e}");
        }
        info!(account = %a.name, expires_in_s = lifetime.as_secs(), "access token refreshed");
        Ok(access)
    }
}

/// The `oauth2` crate's answer to a refresh.
type RefreshResponse = oauth2::basic::BasicTokenResponse;

/// How one exchange ended when it did not produce tokens.
enum Exchange {
    /// An answer that decides: the error is the result.
    Final(AuthError),
    /// Nothing decided: try again later.
    Again(SignInFailure),
}

/// How long before expiry a token counts as stale: a fifth of its lifetime (from when it was stored,
/// `updated_at`), at most five minutes, so both hour-long real tokens and seconds-long test tokens
/// are refreshed ahead of time without refreshing on every call.
fn refresh_margin(expires_at: UnixMillis, stored_at: UnixMillis) -> i64 {
    let lifetime = (expires_at - stored_at).max(0);
    (lifetime / 5).min(MAX_MARGIN.as_millis() as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn margin_is_a_fifth_capped_at_five_minutes() {
        assert_eq!(refresh_margin(10_000, 0), 2_000);
        assert_eq!(refresh_margin(3_600_000, 0), 300_000);
        assert_eq!(refresh_margin(0, 10), 0);
    }

    #[tokio::test(start_paused = true)]
    async fn without_a_client_id_only_a_token_request_fails_and_it_names_the_setting() {
        use crate::settings::{DefaultDirs, FlagSettings};
        let dir = tempfile::tempdir().unwrap();
        let flags = FlagSettings {
            db: Some(dir.path().join("s.db")),
            config: None,
        };
        let settings = Settings::resolve(&flags, &HashMap::new(), DefaultDirs::default()).unwrap();
        let db = Arc::new(Db::open(&settings.db_path).unwrap());
        let clock = Clock::anchored_at(1_000_000);
        // Made without one: an import from files never asks it for anything.
        let ts = TokenSource::new(db.clone(), &settings, clock).unwrap();
        assert!(matches!(ts.require_app(), Err(AuthError::MissingClientId)));
        db.save_account(&Account {
            name: "a".into(),
            user_id: "u".into(),
            user_principal_name: "a@example.com".into(),
            display_name: None,
            refresh_token: Some("rt".into()),
            access_token: None,
            access_expires_at: None,
            updated_at: 0,
        })
        .unwrap();
        let e = ts.access_token("a").await.unwrap_err();
        assert!(matches!(e, AuthError::MissingClientId), "{e}");
        assert!(e.to_string().contains("NOTEBRIDGE_CLIENT_ID"), "{e}");
    }
}
