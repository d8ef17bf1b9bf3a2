//! A sign-in test server that behaves like the Microsoft identity platform's v2.0 device-code and
//! token endpoints (`shared/spec/microsoft-identity-device-code.md`), strictly.
//!
//! Each device code follows a [`CodeScript`] (approve after N polls, decline, never answer, send
//! `slow_down` first). Polls that come sooner than the current interval after the previous poll (or
//! after the code was issued) are counted as "too early" and answered `slow_down`, as RFC 8628 says.
//! Refresh tokens rotate: each refresh returns a new one and the used one stops working (stricter than
//! Entra, which keeps old ones valid, so a client that forgets to store the new token fails here).

use std::collections::{HashMap, VecDeque};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Bytes;
use axum::extract::{ConnectInfo, Path, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::{Json, Router};
use serde_json::{json, Value};
use tokio::time::Instant;

use super::net::{KillSwitch, Outage, SwitchedListener};
use super::{TestUser, TokenRegistry};

/// The verification page Entra sends users to.
pub const VERIFICATION_URI: &str = "https://microsoft.com/devicelogin";

/// How a device code ends.
#[derive(Clone, Debug)]
pub enum Outcome {
    /// The user signs in as `user` once the client has polled `after_polls` times.
    ApproveAfter {
        /// Who signs in.
        user: TestUser,
        /// Polls answered `authorization_pending` (or `slow_down`) before success.
        after_polls: u32,
    },
    /// The user declines once the client has polled `after_polls` times.
    DeclineAfter {
        /// Polls answered pending before the decline.
        after_polls: u32,
    },
    /// Nobody enters the code (it expires, unless [`AuthServer::approve_pending`] is called).
    Never,
    /// The user signs in, but the tenant's Conditional Access policy blocks the device code flow:
    /// the poll after `after_polls` pending answers gets `invalid_grant` AADSTS53003.
    BlockedAfter {
        /// Polls answered pending before the block.
        after_polls: u32,
    },
}

/// The script one device code follows.
#[derive(Clone, Debug)]
pub struct CodeScript {
    /// How it ends.
    pub outcome: Outcome,
    /// The first `slow_down_first` polls are answered `slow_down` (each grows the interval by 5 s).
    pub slow_down_first: u32,
}

impl CodeScript {
    /// Approve as `user` after `after_polls` pending answers.
    pub fn approve(user: TestUser, after_polls: u32) -> Self {
        Self {
            outcome: Outcome::ApproveAfter { user, after_polls },
            slow_down_first: 0,
        }
    }

    /// Decline after `after_polls` pending answers.
    pub fn decline(after_polls: u32) -> Self {
        Self {
            outcome: Outcome::DeclineAfter { after_polls },
            slow_down_first: 0,
        }
    }

    /// Nobody enters the code.
    pub fn never() -> Self {
        Self {
            outcome: Outcome::Never,
            slow_down_first: 0,
        }
    }

    /// The tenant's Conditional Access blocks the sign-in after `after_polls` pending answers.
    pub fn blocked(after_polls: u32) -> Self {
        Self {
            outcome: Outcome::BlockedAfter { after_polls },
            slow_down_first: 0,
        }
    }

    /// Answers the first `k` polls with `slow_down`.
    pub fn with_slow_down(mut self, k: u32) -> Self {
        self.slow_down_first = k;
        self
    }
}

/// What the token endpoint does to the next request instead of answering it (a switch per test).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TokenFault {
    /// `400 temporarily_unavailable` (AADSTS90033, "a transient error has occurred").
    TemporarilyUnavailable,
    /// `503` with an Entra error body and `Retry-After: 1`.
    ServiceUnavailable,
    /// `429` with `Retry-After: 1`.
    TooManyRequests,
    /// The connection is closed without an answer, before the request is looked at (a refresh
    /// token sent with it is not spent).
    Drop,
}

/// Configuration of an [`AuthServer`].
#[derive(Clone, Debug)]
pub struct AuthServerConfig {
    /// Shared with the Graph test server, which accepts the access tokens issued here.
    pub registry: Arc<TokenRegistry>,
    /// The one registered public-client app id; any other gets `unauthorized_client`.
    pub client_id: String,
    /// Lifetime of issued access tokens (`expires_in`).
    pub access_lifetime: Duration,
    /// Lifetime of device and user codes (`expires_in` of the device-code response).
    pub code_lifetime: Duration,
    /// Initial polling interval (`interval`, whole seconds).
    pub interval_secs: u64,
    /// Scripts for the device codes, in the order they are issued; when empty, `default_script`.
    pub scripts: VecDeque<CodeScript>,
    /// The script of codes issued after `scripts` ran out.
    pub default_script: CodeScript,
    /// The app is registered for this one tenant only: requests through `common`,
    /// `organizations` or `consumers` get AADSTS50194 (as Entra answers for single-tenant apps
    /// created after October 2018).
    pub single_tenant: Option<String>,
}

impl AuthServerConfig {
    /// Entra-like defaults: tokens for an hour, codes for 15 minutes, interval 5 s, nobody signs in.
    pub fn new(registry: Arc<TokenRegistry>, client_id: &str) -> Self {
        Self {
            registry,
            client_id: client_id.to_owned(),
            access_lifetime: Duration::from_secs(3600),
            code_lifetime: Duration::from_secs(900),
            interval_secs: 5,
            scripts: VecDeque::new(),
            default_script: CodeScript::never(),
            single_tenant: None,
        }
    }

    /// Adds the script of the next device code.
    pub fn script(mut self, s: CodeScript) -> Self {
        self.scripts.push_back(s);
        self
    }
}

/// What the server has seen, for assertions.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AuthCounters {
    /// Device codes issued.
    pub device_codes: u32,
    /// Device-code token polls (all of them).
    pub polls: u32,
    /// Polls sooner than the current interval after the previous one.
    pub too_early_polls: u32,
    /// Refresh-token grants answered with tokens.
    pub refreshes: u32,
    /// Refresh-token grants refused.
    pub refresh_failures: u32,
    /// Access tokens issued (device flow and refresh).
    pub tokens_issued: u32,
}

#[derive(Debug)]
struct DeviceCode {
    script: CodeScript,
    expires: Instant,
    interval: Duration,
    last_poll: Instant,
    polls: u32,
    /// Set by [`AuthServer::approve_pending`]: the user entered the code.
    approved_by: Option<TestUser>,
    scopes: Vec<String>,
    redeemed: bool,
}

#[derive(Debug)]
struct RefreshGrant {
    user: TestUser,
    scopes: Vec<String>,
}

#[derive(Debug)]
struct ServerState {
    cfg: AuthServerConfig,
    codes: HashMap<String, DeviceCode>,
    refresh: HashMap<String, RefreshGrant>,
    counters: AuthCounters,
    issued_secrets: Vec<String>,
    device_scopes: Vec<Vec<String>>,
    seq: u64,
    token_faults: VecDeque<TokenFault>,
}

type Shared = Arc<Mutex<ServerState>>;

/// A running sign-in test server (stops when dropped).
#[derive(Debug)]
pub struct AuthServer {
    addr: SocketAddr,
    state: Shared,
    outage: Outage,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for AuthServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl AuthServer {
    /// Binds 127.0.0.1 on a free port and serves until dropped.
    pub async fn start(cfg: AuthServerConfig) -> AuthServer {
        let state = Arc::new(Mutex::new(ServerState {
            cfg,
            codes: HashMap::new(),
            refresh: HashMap::new(),
            counters: AuthCounters::default(),
            issued_secrets: Vec::new(),
            device_scopes: Vec::new(),
            seq: 0,
            token_faults: VecDeque::new(),
        }));
        let app = Router::new()
            .route("/{tenant}/oauth2/v2.0/devicecode", post(devicecode))
            .route("/{tenant}/oauth2/v2.0/token", post(token))
            .with_state(state.clone());
        let outage = Outage::default();
        let listener = SwitchedListener::bind(outage.clone()).await;
        let addr = listener.addr();
        let task = tokio::spawn(async move {
            let _ = axum::serve(
                listener,
                app.into_make_service_with_connect_info::<KillSwitch>(),
            )
            .await;
        });
        AuthServer {
            addr,
            state,
            outage,
            task,
        }
    }

    /// The outage switch: stop listening for a while, come back on the same address.
    pub fn outage(&self) -> Outage {
        self.outage.clone()
    }

    /// The next token requests (refreshes and device-code polls alike) meet `faults`, in order.
    pub fn fail_next_token_requests(&self, faults: &[TokenFault]) {
        self.lock().token_faults.extend(faults.iter().copied());
    }

    /// The authority base URL (`{authority}/{tenant}/oauth2/v2.0/...`).
    pub fn authority_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, ServerState> {
        self.state.lock().expect("auth server state poisoned")
    }

    /// The counters so far.
    pub fn counters(&self) -> AuthCounters {
        self.lock().counters
    }

    /// Every device code, access token and refresh token issued so far (tests grep output for them).
    pub fn issued_secrets(&self) -> Vec<String> {
        self.lock().issued_secrets.clone()
    }

    /// The scopes of each device-code request, in order.
    pub fn device_scopes(&self) -> Vec<Vec<String>> {
        self.lock().device_scopes.clone()
    }

    /// Adds the script of the next device code to be issued.
    pub fn push_script(&self, s: CodeScript) {
        self.lock().cfg.scripts.push_back(s);
    }

    /// `user` enters every pending (unexpired, undecided) code now. Returns how many.
    pub fn approve_pending(&self, user: &TestUser) -> usize {
        let mut st = self.lock();
        let now = Instant::now();
        let mut n = 0;
        for c in st.codes.values_mut() {
            if !c.redeemed && c.approved_by.is_none() && now < c.expires {
                c.approved_by = Some(user.clone());
                n += 1;
            }
        }
        n
    }

    /// Issues a refresh token for `user` directly, as if they had signed in earlier (for tests that
    /// seed an account without running the device flow).
    pub fn mint_refresh_token(&self, user: &TestUser, scopes: &[&str]) -> String {
        let mut st = self.lock();
        let rt = st.new_secret("rt");
        st.refresh.insert(
            rt.clone(),
            RefreshGrant {
                user: user.clone(),
                scopes: scopes.iter().map(|s| s.to_string()).collect(),
            },
        );
        rt
    }

    /// Revokes every refresh token of `user_id` (as "revoke sessions" in Entra does).
    pub fn revoke_user(&self, user_id: &str) {
        self.lock().refresh.retain(|_, g| g.user.id != user_id);
    }

    /// How many refresh tokens are currently valid for `user_id`.
    pub fn valid_refresh_tokens(&self, user_id: &str) -> usize {
        self.lock()
            .refresh
            .values()
            .filter(|g| g.user.id == user_id)
            .count()
    }
}

impl ServerState {
    fn new_secret(&mut self, kind: &str) -> String {
        self.seq += 1;
        let s = format!("{kind}-{}-{}", self.seq, uuid::Uuid::new_v4().simple());
        self.issued_secrets.push(s.clone());
        s
    }

    /// Issues an access token (and a refresh token with `offline_access`) for `user`.
    fn issue_tokens(&mut self, user: &TestUser, scopes: &[String]) -> Value {
        let at = self.new_secret("at");
        let granted: Vec<&String> = scopes.iter().filter(|s| *s != "offline_access").collect();
        let carried: Vec<String> = granted.iter().map(|s| s.to_string()).collect();
        self.cfg
            .registry
            .insert_scoped(&at, &user.id, self.cfg.access_lifetime, &carried);
        self.counters.tokens_issued += 1;
        let scope_text = granted
            .iter()
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .join(" ");
        let mut body = json!({
            "token_type": "Bearer",
            "scope": scope_text,
            "expires_in": self.cfg.access_lifetime.as_secs(),
            "ext_expires_in": self.cfg.access_lifetime.as_secs(),
            "access_token": at,
        });
        if scopes.iter().any(|s| s == "offline_access") {
            let rt = self.new_secret("rt");
            self.refresh.insert(
                rt.clone(),
                RefreshGrant {
                    user: user.clone(),
                    scopes: scopes.to_vec(),
                },
            );
            body["refresh_token"] = Value::String(rt);
        }
        body
    }
}

/// An error body shaped like Entra's.
fn entra_error(status: StatusCode, error: &str, aadsts: u32, text: &str) -> Response {
    let trace = uuid::Uuid::new_v4();
    let correlation = uuid::Uuid::new_v4();
    let timestamp = chrono::Utc::now().format("%Y-%m-%d %H:%M:%SZ").to_string();
    let body = json!({
        "error": error,
        "error_description": format!(
            "AADSTS{aadsts}: {text} Trace ID: {trace} Correlation ID: {correlation} Timestamp: {timestamp}"
        ),
        "error_codes": [aadsts],
        "timestamp": timestamp,
        "trace_id": trace.to_string(),
        "correlation_id": correlation.to_string(),
        "error_uri": format!("https://login.microsoftonline.com/error?code={aadsts}"),
    });
    (status, Json(body)).into_response()
}

fn bad_request(error: &str, aadsts: u32, text: &str) -> Response {
    entra_error(StatusCode::BAD_REQUEST, error, aadsts, text)
}

/// A refusal from a request check (boxed: responses are large).
fn refuse(error: &str, aadsts: u32, text: &str) -> Box<Response> {
    Box::new(bad_request(error, aadsts, text))
}

/// The form fields of a POST, refusing anything that is not `application/x-www-form-urlencoded`.
fn form(headers: &HeaderMap, body: &Bytes) -> Result<HashMap<String, String>, Box<Response>> {
    let ct = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    if !ct
        .to_ascii_lowercase()
        .starts_with("application/x-www-form-urlencoded")
    {
        return Err(refuse(
            "invalid_request",
            900144,
            "The request body must contain the following parameter: 'grant_type'.",
        ));
    }
    let mut out = HashMap::new();
    for (k, v) in url::form_urlencoded::parse(body) {
        if out.insert(k.to_string(), v.to_string()).is_some() {
            return Err(refuse(
                "invalid_request",
                90014,
                &format!("The parameter '{k}' is duplicated."),
            ));
        }
    }
    Ok(out)
}

fn required<'a>(f: &'a HashMap<String, String>, name: &str) -> Result<&'a str, Box<Response>> {
    match f.get(name).map(String::as_str) {
        Some(v) if !v.is_empty() => Ok(v),
        _ => Err(refuse(
            "invalid_request",
            900144,
            &format!("The request body must contain the following parameter: '{name}'."),
        )),
    }
}

fn check_client(st: &ServerState, f: &HashMap<String, String>) -> Result<(), Box<Response>> {
    let id = required(f, "client_id")?;
    if id != st.cfg.client_id {
        return Err(refuse(
            "unauthorized_client",
            700016,
            &format!(
                "Application with identifier '{id}' was not found in the directory 'contoso.test'."
            ),
        ));
    }
    if f.contains_key("client_secret") || f.contains_key("client_assertion") {
        return Err(refuse(
            "invalid_client",
            700025,
            "Client is public so neither 'client_assertion' nor 'client_secret' should be presented.",
        ));
    }
    Ok(())
}

/// AADSTS50194 for a single-tenant app asked through a multi-tenant endpoint.
fn check_tenant(st: &ServerState, tenant: &str) -> Result<(), Box<Response>> {
    match &st.cfg.single_tenant {
        Some(home)
            if tenant != home && ["common", "organizations", "consumers"].contains(&tenant) =>
        {
            Err(refuse(
                "invalid_request",
                50194,
                &format!(
                    "Application '{}'(notebridge) is not configured as a multi-tenant \
                     application. Usage of the /common endpoint is not supported for such \
                     applications created after '10/15/2018'. Use a tenant-specific endpoint or \
                     configure the application to be multi-tenant.",
                    st.cfg.client_id
                ),
            ))
        }
        _ => Ok(()),
    }
}

async fn devicecode(
    State(state): State<Shared>,
    Path(tenant): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let f = match form(&headers, &body) {
        Ok(f) => f,
        Err(r) => return *r,
    };
    let mut st = state.lock().expect("auth server state poisoned");
    if let Err(r) = check_client(&st, &f) {
        return *r;
    }
    if let Err(r) = check_tenant(&st, &tenant) {
        return *r;
    }
    let scopes: Vec<String> = match required(&f, "scope") {
        Ok(s) => s.split_whitespace().map(str::to_owned).collect(),
        Err(r) => return *r,
    };
    let script = st
        .cfg
        .scripts
        .pop_front()
        .unwrap_or_else(|| st.cfg.default_script.clone());
    let device_code = st.new_secret("dc");
    st.seq += 1;
    let user_code = format!("UC{:06}", st.seq);
    let now = Instant::now();
    let interval = Duration::from_secs(st.cfg.interval_secs);
    let lifetime = st.cfg.code_lifetime;
    st.codes.insert(
        device_code.clone(),
        DeviceCode {
            script,
            expires: now + lifetime,
            interval,
            last_poll: now,
            polls: 0,
            approved_by: None,
            scopes: scopes.clone(),
            redeemed: false,
        },
    );
    st.counters.device_codes += 1;
    st.device_scopes.push(scopes);
    Json(json!({
        "user_code": user_code,
        "device_code": device_code,
        "verification_uri": VERIFICATION_URI,
        "expires_in": lifetime.as_secs(),
        "interval": st.cfg.interval_secs,
        "message": format!(
            "To sign in, use a web browser to open the page {VERIFICATION_URI} and enter the code \
             {user_code} to authenticate."
        ),
    }))
    .into_response()
}

async fn token(
    State(state): State<Shared>,
    ConnectInfo(kill): ConnectInfo<KillSwitch>,
    Path(tenant): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let fault = state
        .lock()
        .expect("auth server state poisoned")
        .token_faults
        .pop_front();
    match fault {
        None => {}
        Some(TokenFault::Drop) => {
            kill.kill();
            return StatusCode::INTERNAL_SERVER_ERROR.into_response();
        }
        Some(TokenFault::TemporarilyUnavailable) => {
            return bad_request(
                "temporarily_unavailable",
                90033,
                "A transient error has occurred. Please try again.",
            )
        }
        Some(f @ (TokenFault::ServiceUnavailable | TokenFault::TooManyRequests)) => {
            let (status, error) = if f == TokenFault::ServiceUnavailable {
                (StatusCode::SERVICE_UNAVAILABLE, "temporarily_unavailable")
            } else {
                (StatusCode::TOO_MANY_REQUESTS, "temporarily_unavailable")
            };
            let mut r = entra_error(
                status,
                error,
                90033,
                "A transient error has occurred. Please try again.",
            );
            r.headers_mut()
                .insert(header::RETRY_AFTER, header::HeaderValue::from_static("1"));
            return r;
        }
    }
    let f = match form(&headers, &body) {
        Ok(f) => f,
        Err(r) => return *r,
    };
    let mut st = state.lock().expect("auth server state poisoned");
    let grant = match required(&f, "grant_type") {
        Ok(g) => g.to_owned(),
        Err(r) => return *r,
    };
    if let Err(r) = check_client(&st, &f) {
        return *r;
    }
    if let Err(r) = check_tenant(&st, &tenant) {
        return *r;
    }
    match grant.as_str() {
        "urn:ietf:params:oauth:grant-type:device_code" => poll(&mut st, &f),
        "refresh_token" => refresh(&mut st, &f),
        other => bad_request(
            "unsupported_grant_type",
            70003,
            &format!("The app requested an unsupported grant type '{other}'."),
        ),
    }
}

fn poll(st: &mut ServerState, f: &HashMap<String, String>) -> Response {
    let dc = match required(f, "device_code") {
        Ok(d) => d.to_owned(),
        Err(r) => return *r,
    };
    st.counters.polls += 1;
    let now = Instant::now();
    let Some(code) = st.codes.get_mut(&dc) else {
        return bad_request(
            "bad_verification_code",
            70018,
            "The provided value for the input parameter 'device_code' is not valid.",
        );
    };
    if code.redeemed {
        return bad_request(
            "invalid_grant",
            54005,
            "OAuth2 Authorization code was already redeemed, please retry with a new valid code.",
        );
    }
    if now >= code.expires {
        return bad_request(
            "expired_token",
            70019,
            "Verification code expired. Please start the sign-in again.",
        );
    }
    // RFC 8628 §3.5: the client must wait at least `interval` before each request; the clock starts
    // when the code is issued, so an immediate first poll is early too.
    let since = now.duration_since(code.last_poll);
    code.last_poll = now;
    code.polls += 1;
    if since < code.interval {
        st.counters.too_early_polls += 1;
        code.interval += Duration::from_secs(5);
        return bad_request(
            "slow_down",
            70016,
            "OAuth 2.0 device flow error. Polling too fast: increase the interval by 5 seconds.",
        );
    }
    if code.polls <= code.script.slow_down_first {
        code.interval += Duration::from_secs(5);
        return bad_request(
            "slow_down",
            70016,
            "OAuth 2.0 device flow error. Polling too fast: increase the interval by 5 seconds.",
        );
    }
    let answered = code.polls - code.script.slow_down_first;
    let approved = match (&code.approved_by, &code.script.outcome) {
        (Some(u), _) => Some(u.clone()),
        (None, Outcome::ApproveAfter { user, after_polls }) if answered > *after_polls => {
            Some(user.clone())
        }
        (None, Outcome::BlockedAfter { after_polls }) if answered > *after_polls => {
            return bad_request(
                "invalid_grant",
                53003,
                "Access has been blocked by Conditional Access policies. The access policy does \
                 not allow token issuance.",
            );
        }
        (None, Outcome::DeclineAfter { after_polls }) if answered > *after_polls => {
            return bad_request(
                "authorization_declined",
                70000,
                "The user declined the authentication request.",
            );
        }
        _ => None,
    };
    match approved {
        None => bad_request(
            "authorization_pending",
            70016,
            "OAuth 2.0 device flow error. Authorization is pending. Continue polling.",
        ),
        Some(user) => {
            code.redeemed = true;
            let scopes = code.scopes.clone();
            Json(st.issue_tokens(&user, &scopes)).into_response()
        }
    }
}

fn refresh(st: &mut ServerState, f: &HashMap<String, String>) -> Response {
    let rt = match required(f, "refresh_token") {
        Ok(r) => r.to_owned(),
        Err(r) => return *r,
    };
    // Rotation: the presented token is spent whether or not the request succeeds further on.
    let Some(grant) = st.refresh.remove(&rt) else {
        st.counters.refresh_failures += 1;
        return bad_request(
            "invalid_grant",
            70000,
            "The provided value for the 'refresh_token' is not valid: it was revoked, has expired \
             or was already used.",
        );
    };
    let scopes = match f.get("scope") {
        Some(s) => {
            let asked: Vec<String> = s.split_whitespace().map(str::to_owned).collect();
            if let Some(extra) = asked.iter().find(|s| !grant.scopes.contains(s)) {
                st.counters.refresh_failures += 1;
                // Not spent on a scope error: put it back.
                let extra = extra.clone();
                st.refresh.insert(rt, grant);
                return bad_request(
                    "invalid_grant",
                    65001,
                    &format!("The user or administrator has not consented to use '{extra}'."),
                );
            }
            grant.scopes.clone()
        }
        None => grant.scopes.clone(),
    };
    st.counters.refreshes += 1;
    let user = grant.user.clone();
    Json(st.issue_tokens(&user, &scopes)).into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn post_form(url: &str, form: &[(&str, &str)]) -> (u16, Value) {
        let r = reqwest::Client::new()
            .post(url)
            .form(form)
            .send()
            .await
            .unwrap();
        let status = r.status().as_u16();
        (status, r.json().await.unwrap())
    }

    fn cfg() -> AuthServerConfig {
        let mut c = AuthServerConfig::new(Arc::new(TokenRegistry::default()), "app-1");
        c.interval_secs = 1;
        c
    }

    #[tokio::test]
    async fn unknown_client_and_non_form_bodies_are_refused() {
        let s = AuthServer::start(cfg()).await;
        let url = format!("{}/common/oauth2/v2.0/devicecode", s.authority_url());
        let (st, b) = post_form(&url, &[("client_id", "other"), ("scope", "User.Read")]).await;
        assert_eq!(st, 400);
        assert_eq!(b["error"], "unauthorized_client");
        assert!(b["error_description"]
            .as_str()
            .unwrap()
            .starts_with("AADSTS700016"));
        assert!(b["trace_id"].is_string() && b["correlation_id"].is_string());
        let r = reqwest::Client::new()
            .post(&url)
            .json(&json!({"client_id": "app-1", "scope": "User.Read"}))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status().as_u16(), 400);
        let tok = format!("{}/common/oauth2/v2.0/token", s.authority_url());
        let (st, b) = post_form(&tok, &[("client_id", "app-1"), ("grant_type", "password")]).await;
        assert_eq!(
            (st, b["error"].as_str()),
            (400, Some("unsupported_grant_type"))
        );
    }

    #[tokio::test]
    async fn early_polls_get_slow_down_and_codes_expire() {
        let mut c = cfg().script(CodeScript::never());
        c.code_lifetime = Duration::from_millis(1500);
        let s = AuthServer::start(c).await;
        let base = s.authority_url();
        let (_, d) = post_form(
            &format!("{base}/tenant-x/oauth2/v2.0/devicecode"),
            &[
                ("client_id", "app-1"),
                ("scope", "offline_access User.Read"),
            ],
        )
        .await;
        assert_eq!(d["interval"], 1);
        let dc = d["device_code"].as_str().unwrap().to_owned();
        let tok = format!("{base}/tenant-x/oauth2/v2.0/token");
        let form = [
            ("client_id", "app-1"),
            ("grant_type", "urn:ietf:params:oauth:grant-type:device_code"),
            ("device_code", dc.as_str()),
        ];
        let (st, b) = post_form(&tok, &form).await;
        assert_eq!((st, b["error"].as_str()), (400, Some("slow_down")));
        assert_eq!(s.counters().too_early_polls, 1);
        tokio::time::sleep(Duration::from_millis(1600)).await;
        let (st, b) = post_form(&tok, &form).await;
        assert_eq!((st, b["error"].as_str()), (400, Some("expired_token")));
    }

    #[tokio::test]
    async fn refresh_tokens_rotate_and_can_be_revoked() {
        let reg = Arc::new(TokenRegistry::default());
        let mut c = cfg();
        c.registry = reg.clone();
        let s = AuthServer::start(c).await;
        let alice = TestUser::named("alice");
        let rt = s.mint_refresh_token(&alice, &["offline_access", "User.Read"]);
        let tok = format!("{}/common/oauth2/v2.0/token", s.authority_url());
        let form = |rt: &str| {
            vec![
                ("client_id".to_owned(), "app-1".to_owned()),
                ("grant_type".to_owned(), "refresh_token".to_owned()),
                ("refresh_token".to_owned(), rt.to_owned()),
            ]
        };
        let r = reqwest::Client::new()
            .post(&tok)
            .form(&form(&rt))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status().as_u16(), 200);
        let b: Value = r.json().await.unwrap();
        let rt2 = b["refresh_token"].as_str().unwrap().to_owned();
        assert_ne!(rt2, rt);
        assert_eq!(
            reg.check(b["access_token"].as_str().unwrap()),
            Ok(alice.id.clone())
        );
        let b: Value = reqwest::Client::new()
            .post(&tok)
            .form(&form(&rt))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_eq!(b["error"], "invalid_grant", "old token reused");
        s.revoke_user(&alice.id);
        let b: Value = reqwest::Client::new()
            .post(&tok)
            .form(&form(&rt2))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_eq!(b["error"], "invalid_grant", "revoked token used");
        assert_eq!(s.counters().refreshes, 1);
        assert_eq!(s.counters().refresh_failures, 2);
    }
}
