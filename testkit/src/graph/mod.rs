//! Microsoft Graph OneNote test server: the read API the migrator uses, strictly as documented
//! (`shared/spec/graph-onenote.md`), with OneNote's throttling, JSON batching, faults on demand and
//! inspection of what it saw.
//!
//! Started with [`GraphServer::start`] on `127.0.0.1:0`; it stops when dropped. Access tokens are checked
//! against the [`TokenRegistry`] the sign-in test server issues into.

pub mod batch;
pub mod drive;
pub mod faults;
pub mod ink;
pub mod model;
pub mod routes;
pub mod stats;
pub mod teams;
pub mod throttle;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use axum::body::Body as AxumBody;
use axum::extract::connect_info::ConnectInfo;
use axum::extract::{Request, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::Response;
use axum::Router;
use futures::StreamExt as _;
use rand::rngs::StdRng;
use rand::SeedableRng;
use tokio::time::Instant;

use crate::net::{KillSwitch, Outage, SwitchedListener};
use crate::{TestUser, TokenProblem, TokenRegistry};
use notebridge::settings::GraphLimits;

use faults::{Faults, OuterFault};
use model::{ModelError, UserNotes};
use routes::{Body, Ctx, Reply};
use stats::{Counters, LogEntry, Stats};
use teams::{Route, TeamGroup, TeamSite, Teams, Who};
use throttle::{Rejection, Scope, Throttle, ThrottleConfig};

/// How throttled responses name their scope in `x-ms-throttle-scope`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ScopeHeader {
    /// `User` or `Application`.
    Bare,
    /// `<Scope>/<Limit>/<AppId>/<Id>` as documented for the directory service.
    Full {
        /// Application id.
        app_id: String,
        /// Tenant id, used as `<Id>` for the application scope.
        tenant_id: String,
    },
    /// No header (the OneNote docs do not promise one).
    Absent,
}

/// Everything the server is started with.
#[derive(Clone, Debug)]
pub struct GraphServerConfig {
    /// Tokens issued by the sign-in server (or inserted by a test).
    pub registry: Arc<TokenRegistry>,
    /// Windows and concurrency caps.
    pub limits: ThrottleConfig,
    /// Form of `x-ms-throttle-scope` on 429s.
    pub scope_header: ScopeHeader,
    /// Send `x-ms-throttle-limit-percentage` on successes above 0.8 of a window.
    pub limit_percentage_header: bool,
    /// `Retry-After` on inner batch 429s (e.g. "2.128"); outer OneNote 429s never carry one.
    pub batch_retry_after: Option<String>,
    /// Seed of every random choice (faults, batch order).
    pub seed: u64,
}

impl GraphServerConfig {
    /// The documented OneNote limits (120/60s,400/3600s per user, 240/60s,800/3600s per app, 5 and 20
    /// concurrent), bare scope header, percentage header on.
    pub fn new(registry: Arc<TokenRegistry>) -> Self {
        let d = GraphLimits::default();
        let parse = notebridge::settings::parse_windows;
        Self {
            registry,
            limits: ThrottleConfig {
                user_windows: d.user_windows,
                user_concurrency: d.user_concurrency,
                // The client applies no app-wide limit by default; the server still models the
                // figures Microsoft documents (for app-only calls) unless a test changes them.
                app_windows: parse("240/60s,800/3600s").expect("app windows"),
                app_concurrency: 20,
            },
            scope_header: ScopeHeader::Bare,
            limit_percentage_header: true,
            batch_retry_after: None,
            seed: 0,
        }
    }

    /// Same, with windows given as settings-style lists (`"12/600ms,40/6s"`).
    ///
    /// # Panics
    /// On a list that does not parse (test setup error).
    pub fn with_windows(mut self, user: &str, app: &str) -> Self {
        self.limits.user_windows = notebridge::settings::parse_windows(user).expect("user windows");
        self.limits.app_windows = notebridge::settings::parse_windows(app).expect("app windows");
        self
    }
}

pub(crate) struct Shared {
    registry: Arc<TokenRegistry>,
    base: String,
    scope_header: ScopeHeader,
    limit_percentage_header: bool,
    batch_retry_after: Option<String>,
    data: Mutex<HashMap<String, UserNotes>>,
    users: Mutex<HashMap<String, TestUser>>,
    teams: Mutex<Teams>,
    pub(crate) throttle: Arc<Mutex<Throttle>>,
    pub(crate) faults: Faults,
    pub(crate) stats: Stats,
    pub(crate) shuffle: Mutex<StdRng>,
    pub(crate) drive: drive::DriveService,
}

/// The section id of a page listing path (`/me/onenote/sections/{id}/pages`, and the same under
/// `/users/{id}`, `/groups/{id}` and `/sites/{id}`).
fn section_of_listing(path: &str) -> Option<&str> {
    let rest = path.strip_prefix("/me/onenote/sections/").or_else(|| {
        ["/users/", "/groups/", "/sites/"]
            .iter()
            .find_map(|p| path.strip_prefix(p))
            .and_then(|r| r.split_once("/onenote/sections/").map(|(_, s)| s))
    })?;
    rest.strip_suffix("/pages").filter(|id| !id.contains('/'))
}

/// A Graph error reply for an injected server error.
pub(crate) fn fault_reply(status: u16) -> Reply {
    let code = match status {
        500 => "19999",
        502 => "badGateway",
        503 => "serviceNotAvailable",
        504 => "gatewayTimeout",
        _ => "generalException",
    };
    Reply::error(
        status,
        code,
        "The service encountered an error (injected by the test server).",
    )
}

/// A 400 as OneNote answers some page and resource requests in the field: `code` `19999`, or an
/// error body without a code.
fn bare_400(code: Option<&str>) -> Reply {
    let message = "An unexpected error occurred (injected by the test server).";
    match code {
        Some(c) => Reply::error(400, c, message),
        None => Reply::json(400, serde_json::json!({ "error": { "message": message } })),
    }
}

impl Shared {
    pub(crate) fn throttled_reply(&self, scope: Scope, user: &str, inner: bool) -> Reply {
        let mut r = Reply::error(
            429,
            "20166",
            &format!(
                "The request limit for this {} has been exceeded. Please try again later.",
                match scope {
                    Scope::User => "user",
                    Scope::Application => "application",
                }
            ),
        );
        let value = match &self.scope_header {
            ScopeHeader::Bare => Some(scope.as_str().to_owned()),
            ScopeHeader::Full { app_id, tenant_id } => Some(format!(
                "{}/Read/{app_id}/{}",
                scope.as_str(),
                match scope {
                    Scope::User => user,
                    Scope::Application => tenant_id,
                }
            )),
            ScopeHeader::Absent => None,
        };
        if let Some(v) = value {
            r.headers.push(("x-ms-throttle-scope".into(), v));
        }
        if inner {
            if let Some(ra) = &self.batch_retry_after {
                r.headers.push(("Retry-After".into(), ra.clone()));
            }
        }
        r
    }

    pub(crate) fn add_percentage(&self, r: &mut Reply, used: f64) {
        if self.limit_percentage_header && used > 0.8 && r.status < 400 {
            r.headers.push((
                "x-ms-throttle-limit-percentage".into(),
                format!("{used:.2}"),
            ));
        }
    }

    pub(crate) fn dispatch(&self, who: &Who, method: &str, path: &str, query: &str) -> Reply {
        let user = who.user;
        let owner = match self
            .teams
            .lock()
            .expect("graph teams poisoned")
            .route(who, &self.base, path, query)
        {
            Route::Answered(r) => return r,
            Route::OneNote(o) => o,
        };
        let key = owner.data_key();
        let listed = section_of_listing(path);
        let mut data = self.data.lock().expect("graph data poisoned");
        if let (Some(section), Some((min_pages, max_top))) = (listed, self.faults.heavy_listings())
        {
            let pages = data.get(&key).map_or(0, |n| n.pages_in(section).len());
            let q: Vec<(String, String)> = url::form_urlencoded::parse(query.as_bytes())
                .into_owned()
                .collect();
            let top = q
                .iter()
                .find(|(k, _)| k == "$top")
                .and_then(|(_, v)| v.parse::<usize>().ok())
                .unwrap_or(20);
            let selects = q.iter().any(|(k, _)| k == "$select");
            if pages >= min_pages && (top > max_top || !selects) {
                return fault_reply(504);
            }
        }
        if let Some(section) = listed {
            let field = self.faults.field_behaviour();
            let of_notebook = || {
                let nb = data.get(&key)?.section(section)?.notebook_id.clone();
                Some(field.empty_notebook_listings.contains(&nb))
            };
            if field.empty_page_lists.iter().any(|s| s == section) || of_notebook() == Some(true) {
                // As reported (microsoft-graph-explorer-v4#3935): no body was quoted beyond this.
                return routes::Reply::json(200, serde_json::json!({ "value": [] }));
            }
        }
        if path.ends_with("/onenote/pages") && self.faults.too_many_sections() {
            return routes::Reply::error(
                400,
                "20266",
                "The account has too many sections to list all its pages; list them per section \
                 (injected).",
            );
        }
        if path.contains("/pages") || path.contains("/resources/") {
            if let Some(code) = self.faults.take_bare_400() {
                return bare_400(code.as_deref());
            }
        }
        if let Some(status) = self.faults.ink_status() {
            if path.ends_with("/content")
                && query.to_ascii_lowercase().contains("includeinkml=true")
            {
                return Reply::error(status, "20001", "The request is not supported (injected).");
            }
        }
        let reply = {
            let field = self.faults.field_behaviour();
            let files = self.drive.content.lock().expect("drive content poisoned");
            let users = self.users.lock().expect("graph users poisoned");
            let empty = UserNotes::default();
            let ctx = Ctx {
                base: &self.base,
                user,
                owner: &owner,
                user_info: users.get(user),
                notes: data.get(&key).unwrap_or(&empty),
                omit_next_links: self.faults.omitting_next_links(),
                files: &files,
                field: &field,
            };
            routes::dispatch(&ctx, method, path, query)
        };
        if let Some(section) = listed.filter(|_| reply.status == 200) {
            if self.faults.take_edit_during_listing() {
                if let Some(n) = data.get_mut(&key) {
                    n.touch_oldest_page(section, chrono::Utc::now());
                }
            }
        }
        reply
    }

    fn record(&self, method: &str, path: &str, user: Option<&str>, status: u16, over: bool) {
        tracing::debug!(method, path, status, "graph test server request");
        self.stats.record(
            LogEntry {
                method: method.to_owned(),
                path: path.to_owned(),
                user: user.map(str::to_owned),
                status,
                at: Instant::now(),
                inner_batch: false,
            },
            over,
        );
    }
}

fn unauthorized(problem: Option<TokenProblem>) -> Reply {
    let msg = match problem {
        None => "Access token is empty.",
        Some(TokenProblem::Unknown) => "Access token validation failure. Invalid audience.",
        Some(TokenProblem::Expired) => "Access token has expired or is not yet valid.",
    };
    let mut r = Reply::error(401, "InvalidAuthenticationToken", msg);
    r.headers.push((
        "WWW-Authenticate".into(),
        "Bearer realm=\"\", authorization_uri=\"https://login.microsoftonline.com/common/oauth2/authorize\"".into(),
    ));
    r
}

fn into_response(reply: Reply, slot: Option<throttle::SlotGuard>) -> Response {
    let status = StatusCode::from_u16(reply.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let mut resp = match reply.body {
        Body::Json(v) => {
            let mut r = Response::new(AxumBody::from(v.to_string()));
            r.headers_mut().insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json; odata.metadata=minimal; odata.streaming=true; IEEE754Compatible=false; charset=utf-8"),
            );
            r
        }
        Body::Html(h) => {
            let mut r = Response::new(AxumBody::from(h));
            r.headers_mut()
                .insert(header::CONTENT_TYPE, HeaderValue::from_static("text/html"));
            r
        }
        Body::Raw {
            content_type,
            bytes,
        } => {
            let mut r = Response::new(AxumBody::from(bytes));
            if let Ok(v) = HeaderValue::from_str(&content_type) {
                r.headers_mut().insert(header::CONTENT_TYPE, v);
            }
            r
        }
        Body::Binary(res) => {
            let len = res.len;
            let mime = HeaderValue::from_str(&res.mime)
                .unwrap_or(HeaderValue::from_static("application/octet-stream"));
            // The slot stays taken until the last byte is sent, as a long download occupies the service.
            let stream = crate::generator::resource_stream(res).map(move |c| {
                let _keep = &slot;
                c
            });
            let mut r = Response::new(AxumBody::from_stream(stream));
            r.headers_mut().insert(header::CONTENT_TYPE, mime);
            r.headers_mut()
                .insert(header::CONTENT_LENGTH, HeaderValue::from(len));
            r
        }
    };
    *resp.status_mut() = status;
    for (k, v) in reply.headers {
        if let (Ok(k), Ok(v)) = (
            axum::http::HeaderName::from_bytes(k.as_bytes()),
            HeaderValue::from_str(&v),
        ) {
            resp.headers_mut().append(k, v);
        }
    }
    resp
}

async fn handle(
    State(sh): State<Arc<Shared>>,
    ConnectInfo(kill): ConnectInfo<KillSwitch>,
    req: Request,
) -> Response {
    let method = req.method().as_str().to_owned();
    let full = req
        .uri()
        .path_and_query()
        .map(|p| p.as_str().to_owned())
        .unwrap_or_else(|| req.uri().path().to_owned());
    if let Some(ticket) = req.uri().path().strip_prefix(drive::DOWNLOAD_PREFIX) {
        let ticket = ticket.to_owned();
        return drive::download::serve(
            Arc::clone(&sh),
            &method,
            req.headers(),
            &full,
            &ticket,
            kill,
        )
        .await;
    }
    let token = req
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::to_owned);
    let user = match token {
        None => Err(None),
        Some(t) => sh.registry.check_scoped(&t).map_err(Some),
    };
    let (user, scopes) = match user {
        Ok(u) => u,
        Err(p) => {
            sh.record(&method, &full, None, 401, false);
            return into_response(unauthorized(p), None);
        }
    };
    let Some(rel) = full.strip_prefix("/v1.0") else {
        sh.record(&method, &full, Some(&user), 404, false);
        return into_response(Reply::error(404, "NotFound", "Only /v1.0 is served."), None);
    };
    let rel = rel.to_owned();
    {
        // The drive API is SharePoint / OneDrive: its own throttling and faults, none of OneNote's.
        let (path, query) = rel.split_once('?').unwrap_or((&rel, ""));
        if drive::is_drive_path(path) {
            let who = Who {
                user: &user,
                scopes: &scopes,
            };
            return drive::api(&sh, &who, &method, &full, path, query);
        }
    }
    let fault = sh.faults.next_outer();
    match fault {
        Some(OuterFault::Unauthorized) => {
            sh.record(&method, &full, Some(&user), 401, false);
            return into_response(unauthorized(Some(TokenProblem::Expired)), None);
        }
        Some(OuterFault::Drop) => {
            // Status 0 in the log: the client got no response at all.
            sh.record(&method, &full, Some(&user), 0, false);
            kill.kill();
            return into_response(fault_reply(500), None);
        }
        _ => {}
    }
    let (path, query) = rel.split_once('?').unwrap_or((&rel, ""));
    let (path, query) = (path.to_owned(), query.to_owned());

    if path == "/$batch" {
        if let Some(OuterFault::Delay(d)) = fault {
            tokio::time::sleep(d).await;
        }
        if let Some(OuterFault::Status(s)) = fault {
            sh.record(&method, &full, Some(&user), s, false);
            return into_response(fault_reply(s), None);
        }
        let reply = if method == "POST" {
            match axum::body::to_bytes(req.into_body(), 4 << 20).await {
                Ok(b) => batch::run(
                    &sh,
                    &Who {
                        user: &user,
                        scopes: &scopes,
                    },
                    &b,
                ),
                Err(_) => Reply::error(400, "BadRequest", "Unreadable batch body."),
            }
        } else {
            Reply::error(405, "BadRequest", "$batch takes POST.")
        };
        sh.record(&method, &full, Some(&user), reply.status, false);
        return into_response(reply, None);
    }

    // `/me` and the team lookups are the directory service, not OneNote: OneNote's limits do not
    // apply to them.
    let onenote = path != "/me" && !Teams::is_directory(&path);
    let mut slot = None;
    let mut used = 0.0;
    if onenote {
        match throttle::admit(&sh.throttle, &user) {
            Ok((g, u)) => {
                slot = Some(g);
                used = u;
            }
            Err(rej) => {
                let over = matches!(rej, Rejection::OverLimit(_));
                sh.record(&method, &full, Some(&user), 429, over);
                return into_response(sh.throttled_reply(rej.scope(), &user, false), None);
            }
        }
    }
    match fault {
        Some(OuterFault::Delay(d)) => tokio::time::sleep(d).await,
        Some(OuterFault::Status(s)) => {
            sh.record(&method, &full, Some(&user), s, false);
            return into_response(fault_reply(s), None);
        }
        _ => {}
    }
    let who = Who {
        user: &user,
        scopes: &scopes,
    };
    let mut reply = sh.dispatch(&who, &method, &path, &query);
    sh.add_percentage(&mut reply, used);
    sh.record(&method, &full, Some(&user), reply.status, false);
    into_response(reply, slot)
}

/// A running Graph test server. Stops when dropped.
pub struct GraphServer {
    base: String,
    shared: Arc<Shared>,
    outage: Outage,
    task: tokio::task::JoinHandle<()>,
}

impl GraphServer {
    /// Binds `127.0.0.1:0` and starts serving.
    ///
    /// # Panics
    /// When no loopback port can be bound (a broken test machine).
    pub async fn start(cfg: GraphServerConfig) -> GraphServer {
        let outage = Outage::default();
        let tcp = SwitchedListener::bind(outage.clone()).await;
        let addr = tcp.addr();
        let base = format!("http://{addr}/v1.0");
        let throttle = Arc::new(Mutex::new(Throttle::new(cfg.limits.clone())));
        let shared = Arc::new(Shared {
            registry: cfg.registry,
            base: base.clone(),
            scope_header: cfg.scope_header,
            limit_percentage_header: cfg.limit_percentage_header,
            batch_retry_after: cfg.batch_retry_after,
            data: Mutex::new(HashMap::new()),
            users: Mutex::new(HashMap::new()),
            teams: Mutex::new(Teams::default()),
            faults: Faults::new(cfg.seed, Arc::clone(&throttle)),
            throttle,
            stats: Stats::default(),
            shuffle: Mutex::new(StdRng::seed_from_u64(cfg.seed ^ 0xba7c)),
            drive: drive::DriveService::default(),
        });
        let app = Router::new()
            .fallback(handle)
            .with_state(Arc::clone(&shared));
        let task = tokio::spawn(async move {
            let _ = axum::serve(tcp, app.into_make_service_with_connect_info::<KillSwitch>()).await;
        });
        GraphServer {
            base,
            shared,
            outage,
            task,
        }
    }

    /// The outage switch: stop listening for a while, come back on the same address.
    pub fn outage(&self) -> Outage {
        self.outage.clone()
    }

    /// `http://127.0.0.1:PORT/v1.0`.
    pub fn base_url(&self) -> &str {
        &self.base
    }

    /// The fault switchboard.
    pub fn faults(&self) -> Faults {
        self.shared.faults.clone()
    }

    /// Every request so far.
    pub fn log(&self) -> Vec<LogEntry> {
        self.shared.stats.log()
    }

    /// Counters so far, concurrency peaks included.
    pub fn counters(&self) -> Counters {
        let mut c = self.shared.stats.counters();
        let t = self.shared.throttle.lock().expect("throttle poisoned");
        c.peak_user_concurrency = t.user_peaks();
        c.peak_app_concurrency = t.app_peak();
        c
    }

    /// Registers a user's profile (for `/me`).
    pub fn add_user(&self, user: TestUser) {
        self.shared
            .users
            .lock()
            .expect("graph users poisoned")
            .insert(user.id.clone(), user);
    }

    /// Adds a group (Microsoft 365 or security) with its notebooks (`notes` may be empty).
    pub fn add_group(&self, group: TeamGroup, notes: UserNotes) {
        let key = teams::group_key(&group.id);
        self.teams_mut().add_group(group);
        self.load(&key, notes);
    }

    /// Adds a SharePoint site with its notebooks.
    pub fn add_site(&self, site: TeamSite, notes: UserNotes) {
        let key = teams::site_key(&site.id);
        self.teams_mut().add_site(site);
        self.load(&key, notes);
    }

    /// Marks a user as signed in with a personal Microsoft account: no directory, groups or sites.
    pub fn set_personal_account(&self, user_id: &str, personal: bool) {
        self.teams_mut().set_personal(user_id, personal);
    }

    /// Switch: the document library of a group or site (by id) holds over 5,000 OneNote items, so
    /// its notebook, section group and section listings answer 403 with error 10008.
    pub fn set_big_library(&self, source_id: &str, on: bool) {
        let mut t = self.teams_mut();
        t.set_big_library(&teams::group_key(source_id), on);
        t.set_big_library(&teams::site_key(source_id), on);
    }

    /// Items per page of `/me/memberOf` and `/me/followedSites` when `$top` is not given
    /// (default 100).
    pub fn set_directory_page_size(&self, n: usize) {
        self.teams_mut().set_page_size(n);
    }

    fn teams_mut(&self) -> std::sync::MutexGuard<'_, Teams> {
        self.shared.teams.lock().expect("graph teams poisoned")
    }

    /// Adds generated content to a user's notebooks (or to a group's or site's, under the key
    /// [`teams::group_key`] / [`teams::site_key`] gives).
    pub fn load(&self, user_id: &str, notes: UserNotes) {
        self.shared
            .data
            .lock()
            .expect("graph data poisoned")
            .entry(user_id.to_owned())
            .or_default()
            .merge(notes);
    }

    /// A copy of a user's content as it is now.
    pub fn notes(&self, user_id: &str) -> UserNotes {
        self.shared
            .data
            .lock()
            .expect("graph data poisoned")
            .get(user_id)
            .cloned()
            .unwrap_or_default()
    }

    /// Changes a user's content in place (rename, delete, move: see [`UserNotes`]).
    /// With the `renumber_moved_pages` field switch on, each page `f` moved to another section
    /// comes back under a new id (see [`UserNotes::renumber_moved`]).
    pub fn mutate<R>(&self, user_id: &str, f: impl FnOnce(&mut UserNotes) -> R) -> R {
        let renumber = self.shared.faults.field_behaviour().renumber_moved_pages;
        let mut data = self.shared.data.lock().expect("graph data poisoned");
        let notes = data.entry(user_id.to_owned()).or_default();
        let before: HashMap<String, String> = notes
            .pages
            .iter()
            .map(|p| (p.id.clone(), p.section_id.clone()))
            .collect();
        let r = f(notes);
        if renumber {
            notes.renumber_moved(&before);
        }
        r
    }

    /// Adds `count` generated pages to a section; returns their ids.
    pub fn add_pages(
        &self,
        user_id: &str,
        section_id: &str,
        count: usize,
        seed: u64,
    ) -> Result<Vec<String>, ModelError> {
        self.mutate(user_id, |n| {
            let pages = crate::generator::extra_pages(n, section_id, count, seed);
            let mut ids = Vec::new();
            for (p, r) in pages {
                ids.push(p.id.clone());
                n.add_page(user_id, p, r)?;
            }
            Ok(ids)
        })
    }

    /// Stops serving.
    pub fn shutdown(self) {
        drop(self);
    }
}

impl Drop for GraphServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}
