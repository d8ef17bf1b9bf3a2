//! The Microsoft Graph OneNote client. Every request goes through the [`Limiter`] with its account's
//! user and lane; the client never sleeps on throttling timers of its own (the limiter's breaker and
//! windows decide when the next request may go). Transient failures are retried with jittered
//! backoff, a 401 refreshes the token once, and a 403/404 fails only the item it concerns.

pub mod batch;
pub mod model;
pub mod scan;
pub mod sources;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use futures::StreamExt;
use reqwest::header::HeaderMap;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

use crate::auth::{AccessToken, AuthError, TokenSource};
use crate::clock::{Clock, Jitter, UnixMillis};
use crate::failure::{pause, Class, Classify, Next, Retries, Scope, ITEM_RETRIES};
use crate::limiter::{
    parse_limit_percentage, parse_retry_after, parse_scope_header, Lane, Limiter, LimiterError,
    Permit, ThrottleScope,
};
use crate::net::{Reachability, Service, Unreachable};
use crate::settings::Settings;
use crate::store::Db;

/// How long a finished request still holds its concurrency slot (see `Limiter::with_release_margin`).
const RELEASE_MARGIN: Duration = Duration::from_millis(10);
/// How much longer than the service's each window is held (see `Limiter::with_window_slack`).
const WINDOW_SLACK: Duration = Duration::from_millis(5);
/// Throttled answers tolerated for one request before giving up (the limiter paces them).
const MAX_THROTTLED_ATTEMPTS: u32 = 60;
/// How long an answer may send nothing before the request counts as timed out.
const READ_IDLE_TIMEOUT: Duration = Duration::from_secs(120);
/// Microsoft Graph's hosts in its national clouds (Microsoft's "national cloud deployments" list).
const GRAPH_HOSTS: &[&str] = &[
    "graph.microsoft.com",
    "graph.microsoft.us",
    "dod-graph.microsoft.us",
    "microsoftgraph.chinacloudapi.cn",
];
/// Largest response body read into memory (a resource bigger than this is refused, not truncated).
pub const MAX_BODY_BYTES: usize = 512 * 1024 * 1024;

/// Who a request is for: the account (for tokens and messages), its Graph user (for the limiter), and
/// the lane.
#[derive(Clone, Debug)]
pub struct Caller {
    /// Local account name.
    pub account: String,
    /// Graph user id: the limiter's user.
    pub user_id: String,
    /// Foreground (scan) or background (migration).
    pub lane: Lane,
    /// Give up instead of waiting past this time (unix ms): `migrate --max-duration`.
    pub deadline: Option<UnixMillis>,
    /// The retries of the item these requests are for, shared with every layer working on it
    /// (`None`: each request counts its own under [`ITEM_RETRIES`]).
    pub retries: Option<Retries>,
}

/// Errors of Graph calls. Each names the account and the OneNote item.
#[derive(Debug, thiserror::Error)]
pub enum GraphError {
    /// 403/404: this item cannot be read; the rest can.
    #[error("{account}: {item}: Graph answered {status}: {message}")]
    Item {
        /// Account name.
        account: String,
        /// The OneNote item (kind, title and id).
        item: String,
        /// HTTP status.
        status: u16,
        /// Graph's error code, where it changes what the refusal means.
        code: ServiceCode,
        /// Graph's error code and message, as it wrote them.
        message: String,
    },
    /// Transient failures went on past the retry limit.
    #[error("{account}: {item}: gave up after {attempts} attempts: {last}")]
    GaveUp {
        /// Account name.
        account: String,
        /// The OneNote item.
        item: String,
        /// Attempts made.
        attempts: u32,
        /// Retries spent from the item's count in this attempt at it, by every layer (what the
        /// queue counts against the same budget; throttled answers spend none).
        retries: u32,
        /// The last failure.
        last: String,
        /// Whether the last failure was no answer in time (Graph's 504, or the timeout): a
        /// lighter request may still succeed where this one cannot.
        timed_out: bool,
    },
    /// A resource URL or `@odata.nextLink` pointed away from Microsoft Graph: it is not followed,
    /// so the access token never goes there.
    #[error(
        "{account}: {item}: refused to send the access token to {url:?}: not the configured Graph \
         host nor one of Microsoft's Graph hosts"
    )]
    ForeignHost {
        /// Account name.
        account: String,
        /// The OneNote item.
        item: String,
        /// The URL, without its query.
        url: String,
    },
    /// The answer could not be understood.
    #[error("{account}: {item}: unexpected answer from Graph: {problem}")]
    BadAnswer {
        /// Account name.
        account: String,
        /// The OneNote item.
        item: String,
        /// What was wrong.
        problem: String,
    },
    /// The answer is bigger than the caller can use (e.g. a file over Notion's upload limit).
    #[error("{account}: {item}: {size} bytes is over the limit of {max} bytes")]
    TooLarge {
        /// Account name.
        account: String,
        /// The OneNote item.
        item: String,
        /// Its size.
        size: u64,
        /// The limit.
        max: u64,
    },
    /// Tokens could not be had (sign-in required).
    #[error(transparent)]
    Auth(#[from] AuthError),
    /// The limiter failed, or would wait past the deadline.
    #[error(transparent)]
    Limiter(#[from] LimiterError),
    /// Graph could not be reached until the deadline: the work is parked, nothing failed.
    #[error(transparent)]
    Unreachable(#[from] Unreachable),
}

impl GraphError {
    /// What went wrong, without the account and item (for text shown inside a Notion page).
    pub fn reason(&self) -> String {
        match self {
            GraphError::Item {
                status, message, ..
            } => format!("Graph answered {status}: {message}"),
            GraphError::TooLarge { size, max, .. } => {
                format!("{size} bytes is over the limit of {max} bytes")
            }
            GraphError::BadAnswer { problem, .. } => problem.clone(),
            GraphError::GaveUp { last, attempts, .. } => {
                format!("gave up after {attempts} attempts: {last}")
            }
            other => other.to_string(),
        }
    }

    /// Whether Graph gave up because it did not answer in time (504, or no answer before the
    /// timeout): a lighter request may still succeed.
    pub fn is_timeout(&self) -> bool {
        matches!(
            self,
            GraphError::GaveUp {
                timed_out: true,
                ..
            }
        )
    }

    /// Whether only this item failed and the run should go on ([`Scope::Item`]).
    pub fn is_item_failure(&self) -> bool {
        self.class().scope == Scope::Item
    }
}

impl Classify for GraphError {
    fn class(&self) -> Class {
        match self {
            // Refused, on a foreign host, too large, not understood: asking again gets the same.
            GraphError::Item { .. }
            | GraphError::ForeignHost { .. }
            | GraphError::TooLarge { .. }
            | GraphError::BadAnswer { .. } => Class::item_fails(),
            // The client spent its retries on it ([`Classify::retries`]): the budget decides.
            GraphError::GaveUp { .. } => Class::new(Scope::Item, Next::Retry(None)),
            GraphError::Auth(e) => e.class(),
            GraphError::Limiter(e) => e.class(),
            GraphError::Unreachable(e) => e.class(),
        }
    }

    fn retries(&self) -> u32 {
        match self {
            GraphError::GaveUp { retries, .. } => *retries,
            GraphError::Item { .. }
            | GraphError::ForeignHost { .. }
            | GraphError::TooLarge { .. }
            | GraphError::BadAnswer { .. }
            | GraphError::Auth(_)
            | GraphError::Limiter(_)
            | GraphError::Unreachable(_) => 0,
        }
    }
}

/// The error codes of Graph's OneNote API that change what a refusal means (Microsoft's "OneNote
/// error codes" reference); every other code is [`ServiceCode::Other`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ServiceCode {
    /// 20166: too many requests, whatever the status it comes with.
    Throttled,
    /// 40004: the access token lacks a permission the request needs.
    MissingScope,
    /// 10008: the document library holds more than 5,000 OneNote items.
    TooManyItems,
    /// OneNote's generic 19999, an empty code or none: the answer names no reason of its own.
    Unnamed,
    /// Any other code.
    Other,
}

impl ServiceCode {
    /// The code of an error body (`{"error": {"code": ...}}`).
    pub fn of(body: &[u8]) -> Self {
        let v: Option<Value> = serde_json::from_slice(body).ok();
        match v.as_ref().and_then(|v| v["error"]["code"].as_str()) {
            Some("20166") => ServiceCode::Throttled,
            Some("40004") => ServiceCode::MissingScope,
            Some("10008") => ServiceCode::TooManyItems,
            Some("19999" | "") | None => ServiceCode::Unnamed,
            Some(_) => ServiceCode::Other,
        }
    }
}

/// Request counters for reports.
#[derive(Debug, Default)]
struct Stats {
    requests: AtomicU64,
    throttled: AtomicU64,
    retries: AtomicU64,
    batches: AtomicU64,
    bytes: AtomicU64,
}

/// A snapshot of the client's counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct GraphCounts {
    /// Requests sent to Graph, inner `$batch` requests counted one by one.
    pub requests: u64,
    /// 429s (or 20166 errors) received.
    pub throttled: u64,
    /// Retries after transient failures.
    pub retries: u64,
    /// `$batch` envelopes sent.
    pub batches: u64,
    /// Response bytes read.
    pub bytes: u64,
}

/// The Graph client (cheap to clone).
#[derive(Clone)]
pub struct GraphClient {
    http: reqwest::Client,
    base: Arc<str>,
    limiter: Limiter,
    tokens: TokenSource,
    clock: Clock,
    jitter: Jitter,
    stats: Arc<Stats>,
    /// The pause before the first retry of a request ([`crate::failure::pause`]).
    pause: Duration,
    reach: Reachability,
}

/// One answer that reached us: status, headers and body.
struct Answer {
    status: u16,
    headers: HeaderMap,
    body: Bytes,
}

impl Caller {
    /// [`Caller::for_account`] from async code: the account is read off the runtime
    /// ([`Db::call`]), so a database locked by another process holds no runtime thread.
    pub async fn of_account(db: &Arc<Db>, account: &str, lane: Lane) -> Result<Caller, GraphError> {
        let account = account.to_owned();
        db.call(move |db| Caller::for_account(db, &account, lane))
            .await
    }

    /// The caller for a stored, signed-in account, read on the calling thread (sync code).
    pub fn for_account(db: &Db, account: &str, lane: Lane) -> Result<Caller, GraphError> {
        let no_account = || AuthError::NoAccount {
            account: account.to_owned(),
        };
        let a = db
            .account(account)
            .map_err(|e| GraphError::BadAnswer {
                account: account.to_owned(),
                item: "the account".into(),
                problem: e.to_string(),
            })?
            .filter(|a| a.signed_in())
            .ok_or_else(no_account)?;
        Ok(Caller {
            account: a.name,
            user_id: a.user_id,
            lane,
            deadline: None,
            retries: None,
        })
    }

    /// This caller's requests for one item: their retries spend from `retries`, the item's one
    /// count, shared with the layers above.
    pub fn for_item(self, retries: Retries) -> Caller {
        Caller {
            retries: Some(retries),
            ..self
        }
    }

    /// The count a request spends its retries from: the item's, or a new one of its own.
    pub fn retries(&self) -> Retries {
        self.retries
            .clone()
            .unwrap_or_else(|| Retries::new(ITEM_RETRIES, 0))
    }
}

impl GraphClient {
    /// The client for the configured Graph, with its limiter and token source on `db`.
    pub fn open(
        db: Arc<Db>,
        settings: &Settings,
        clock: Clock,
        jitter: Jitter,
    ) -> Result<GraphClient, GraphError> {
        let reach = Reachability::new(clock.clone());
        Self::open_sharing(db, settings, clock, jitter, reach)
    }

    /// Same, recording and waiting out unreachable services on `reach` (shared with the run's
    /// Notion client, bounded by its deadline).
    pub fn open_sharing(
        db: Arc<Db>,
        settings: &Settings,
        clock: Clock,
        jitter: Jitter,
        reach: Reachability,
    ) -> Result<GraphClient, GraphError> {
        let limiter = Limiter::open(
            db.clone(),
            settings.graph.clone(),
            clock.clone(),
            jitter.clone(),
        )?
        .with_release_margin(RELEASE_MARGIN)
        .with_window_slack(WINDOW_SLACK);
        let tokens = TokenSource::with_network(db, settings, clock.clone(), reach, jitter.clone())?;
        Ok(
            GraphClient::new(&settings.graph_url, limiter, tokens, clock, jitter)
                .with_backoff_base(settings.retries.pause),
        )
    }

    /// A client for `base` (e.g. `https://graph.microsoft.com/v1.0`).
    pub fn new(
        base: &str,
        limiter: Limiter,
        tokens: TokenSource,
        clock: Clock,
        jitter: Jitter,
    ) -> Self {
        // No total timeout: a large download may take as long as it takes while bytes arrive;
        // only a connection where nothing arrives for a while fails.
        let http = crate::transport::client_builder()
            .read_timeout(READ_IDLE_TIMEOUT)
            .connect_timeout(Duration::from_secs(20))
            .build()
            .expect("reqwest client builds");
        Self {
            http,
            base: base.trim_end_matches('/').into(),
            limiter,
            reach: tokens.reachability().clone(),
            tokens,
            clock,
            jitter,
            stats: Arc::new(Stats::default()),
            pause: ITEM_RETRIES.pause,
        }
    }

    /// Sets the pause before a request's first retry (doubling for each further one).
    pub fn with_backoff_base(mut self, d: Duration) -> Self {
        self.pause = d;
        self
    }

    /// Shortens the idle timeout (tests of hung answers): a request fails when nothing arrives for
    /// `d`.
    pub fn with_timeout(mut self, d: Duration) -> Self {
        self.http = crate::transport::client_builder()
            .read_timeout(d)
            .build()
            .expect("reqwest client builds");
        self
    }

    /// Where unreachable services are recorded and waited out (shared with the token source; the
    /// Notion client of a run shares it too).
    pub fn reachability(&self) -> &Reachability {
        &self.reach
    }

    /// The token source (the drive client of a run shares it: one refresh for both).
    pub fn tokens(&self) -> &TokenSource {
        &self.tokens
    }

    /// The limiter every request goes through.
    pub fn limiter(&self) -> &Limiter {
        &self.limiter
    }

    /// The base URL.
    pub fn base(&self) -> &str {
        &self.base
    }

    /// Counters so far.
    pub fn counts(&self) -> GraphCounts {
        GraphCounts {
            requests: self.stats.requests.load(Ordering::Relaxed),
            throttled: self.stats.throttled.load(Ordering::Relaxed),
            retries: self.stats.retries.load(Ordering::Relaxed),
            batches: self.stats.batches.load(Ordering::Relaxed),
            bytes: self.stats.bytes.load(Ordering::Relaxed),
        }
    }

    /// Absolute URL for a path relative to the base (absolute URLs are used as given).
    pub fn url(&self, path: &str) -> String {
        if path.starts_with("http://") || path.starts_with("https://") {
            path.to_owned()
        } else {
            format!("{}/{}", self.base, path.trim_start_matches('/'))
        }
    }

    /// Whether `url` may be sent the bearer token: the configured Graph host (with its scheme), or
    /// one of Microsoft's Graph hosts over HTTPS. Resource URLs and next links come
    /// from page content and answers, which must never steer the token elsewhere.
    pub fn may_carry_token(&self, url: &str) -> bool {
        may_carry_token(&self.base, url)
    }

    /// GET a JSON document.
    pub async fn get_json<T: DeserializeOwned>(
        &self,
        who: &Caller,
        path: &str,
        item: &str,
    ) -> Result<T, GraphError> {
        let a = self.get(who, path, item, MAX_BODY_BYTES).await?;
        serde_json::from_slice(&a.body).map_err(|e| GraphError::BadAnswer {
            account: who.account.clone(),
            item: item.to_owned(),
            problem: e.to_string(),
        })
    }

    /// [`GraphClient::get_json`], giving up at the first timeout (504 or no answer in time)
    /// instead of asking the same again: for a listing the caller asks again in smaller slices.
    pub async fn get_json_stepping<T: DeserializeOwned>(
        &self,
        who: &Caller,
        path: &str,
        item: &str,
    ) -> Result<T, GraphError> {
        let a = self.get_with(who, path, item, MAX_BODY_BYTES, true).await?;
        serde_json::from_slice(&a.body).map_err(|e| GraphError::BadAnswer {
            account: who.account.clone(),
            item: item.to_owned(),
            problem: e.to_string(),
        })
    }

    /// GET text (page HTML), refusing ([`GraphError::TooLarge`]) an answer over `max` bytes from
    /// its Content-Length, or as soon as that many have arrived: a refused page holds at most `max`.
    pub async fn get_text(
        &self,
        who: &Caller,
        path: &str,
        item: &str,
        max: usize,
    ) -> Result<String, GraphError> {
        let a = self.get(who, path, item, max).await?;
        // Taking the buffer over instead of copying it: a page's HTML is held once, not twice.
        String::from_utf8(Vec::from(a.body)).map_err(|e| GraphError::BadAnswer {
            account: who.account.clone(),
            item: item.to_owned(),
            problem: format!("not UTF-8: {e}"),
        })
    }

    /// GET content with its `Content-Type` (page content with `includeInkML=true` comes back as
    /// `multipart/mixed`, whose boundary is in that header), refusing an answer over `max` bytes as
    /// [`GraphClient::get_text`] does.
    pub async fn get_with_type(
        &self,
        who: &Caller,
        path: &str,
        item: &str,
        max: usize,
    ) -> Result<(String, Bytes), GraphError> {
        let a = self.get(who, path, item, max).await?;
        Ok((content_type(&a.headers), a.body))
    }

    /// GET binary content (a resource), read in chunks into one buffer sized from Content-Length,
    /// refusing (without downloading) anything over `max` bytes.
    pub async fn get_bytes(
        &self,
        who: &Caller,
        path: &str,
        item: &str,
        max: usize,
    ) -> Result<Bytes, GraphError> {
        Ok(self.get(who, path, item, max).await?.body)
    }

    /// Every item of a paged collection: follows `@odata.nextLink`, and falls back to `$skip` when a
    /// full page comes back without one (reported to happen on OneNote).
    pub async fn get_all<T: DeserializeOwned>(
        &self,
        who: &Caller,
        path: &str,
        page_size: usize,
        item: &str,
    ) -> Result<Vec<T>, GraphError> {
        let mut out = Vec::new();
        let mut next = Some(self.url(path));
        while let Some(url) = next.take() {
            let page: model::Page<T> = self.get_json(who, &url, item).await?;
            let n = page.value.len();
            out.extend(page.value);
            next = match page.next_link {
                Some(l) => Some(l),
                None if n >= page_size && page_size > 0 => Some(with_skip(&url, skip_of(&url) + n)),
                None => None,
            };
        }
        Ok(out)
    }

    async fn get(
        &self,
        who: &Caller,
        path: &str,
        item: &str,
        max: usize,
    ) -> Result<Answer, GraphError> {
        self.get_with(who, path, item, max, false).await
    }

    /// GET, retrying what may be retried from the caller's count ([`Caller::retries`]). `stepping`:
    /// a timeout (504, or no answer in time) ends the request at once, as the caller asks again
    /// with a lighter one.
    async fn get_with(
        &self,
        who: &Caller,
        path: &str,
        item: &str,
        max: usize,
        stepping: bool,
    ) -> Result<Answer, GraphError> {
        let url = self.url(path);
        if !self.may_carry_token(&url) {
            return Err(GraphError::ForeignHost {
                account: who.account.clone(),
                item: item.to_owned(),
                url: url.split('?').next().unwrap_or(&url).to_owned(),
            });
        }
        let retries = who.retries();
        let mut token = self.tokens.access_token(&who.account).await?;
        let mut refreshed = false;
        let mut throttled = 0u32;
        let mut unreachable = 0u32;
        loop {
            let permit = self.permit(who).await?;
            let sent = self.send(&url, &token, max).await;
            self.stats.requests.fetch_add(1, Ordering::Relaxed);
            if !matches!(sent, Err(BodyError::Unreachable(_))) {
                self.reach.answered(Service::Graph);
            }
            let answer = match sent {
                Ok(a) => a,
                Err(BodyError::Unreachable(detail)) => {
                    // Never reached Graph: says nothing about the item; wait for the network.
                    permit.failed();
                    unreachable += 1;
                    tracing::debug!(account = %who.account, item, "Graph unreachable: {detail}");
                    self.reach
                        .wait(Service::Graph, unreachable, &self.jitter)
                        .await?;
                    continue;
                }
                Err(BodyError::TooLarge(size)) => {
                    permit.succeeded(None);
                    return Err(GraphError::TooLarge {
                        account: who.account.clone(),
                        item: item.to_owned(),
                        size,
                        max: max as u64,
                    });
                }
                Err(BodyError::Failed { detail, timed_out }) => {
                    permit.failed();
                    let failed = Failed::Transient { timed_out };
                    self.again(who, item, &retries, failed, &detail, stepping)
                        .await?;
                    continue;
                }
            };
            let failed = match answered(answer.status, &answer.headers, &answer.body, refreshed) {
                Ok(()) => {
                    permit.succeeded(percentage(&answer.headers));
                    self.stats
                        .bytes
                        .fetch_add(answer.body.len() as u64, Ordering::Relaxed);
                    return Ok(answer);
                }
                Err(f) => f,
            };
            match failed {
                Failed::Throttled(scope, retry_after) => {
                    self.stats.throttled.fetch_add(1, Ordering::Relaxed);
                    permit.throttled(scope, retry_after);
                    throttled += 1;
                    tracing::info!(account = %who.account, item, "Graph throttled the request; the limiter holds the scope back");
                    if throttled >= MAX_THROTTLED_ATTEMPTS {
                        return Err(GraphError::GaveUp {
                            account: who.account.clone(),
                            item: item.to_owned(),
                            attempts: throttled + retries.here(),
                            retries: retries.here(),
                            last: "429 Too Many Requests".into(),
                            timed_out: false,
                        });
                    }
                }
                Failed::Unauthorized => {
                    permit.succeeded(None);
                    refreshed = true;
                    token = self.tokens.refresh_after_401(&who.account, &token).await?;
                }
                Failed::Transient { .. } => {
                    permit.failed();
                    let last = format!("HTTP {}", answer.status);
                    self.again(who, item, &retries, failed, &last, stepping)
                        .await?;
                }
                Failed::BareBadRequest => {
                    // An answer, not a failure of the service's to answer: the limiter counts it
                    // as any other (the window spent), and the item's count pays for the retry.
                    permit.succeeded(percentage(&answer.headers));
                    let last = format!("HTTP 400: {}", error_message(&answer.body));
                    if self
                        .again(who, item, &retries, failed, &last, false)
                        .await
                        .is_err()
                    {
                        return Err(refused(who, item, answer.status, &answer.body));
                    }
                }
                Failed::Refused => {
                    permit.succeeded(percentage(&answer.headers));
                    return Err(refused(who, item, answer.status, &answer.body));
                }
            }
        }
    }

    /// A slot from the limiter, or the deadline error.
    async fn permit(&self, who: &Caller) -> Result<Permit, GraphError> {
        Ok(match who.deadline {
            Some(d) => {
                self.limiter
                    .acquire_before(&who.user_id, who.lane, d)
                    .await?
            }
            None => self.limiter.acquire(&who.user_id, who.lane).await?,
        })
    }

    async fn send(&self, url: &str, token: &AccessToken, max: usize) -> Result<Answer, BodyError> {
        answer(self.http.get(url).bearer_auth(token.secret()), max).await
    }

    /// POSTs a JSON body (the `$batch` envelope) without a permit of its own: the inner requests
    /// hold the permits.
    async fn post_json(
        &self,
        url: &str,
        token: &AccessToken,
        body: &Value,
    ) -> Result<Answer, BodyError> {
        let req = self.http.post(url).bearer_auth(token.secret()).json(body);
        let a = answer(req, MAX_BODY_BYTES).await;
        if !matches!(a, Err(BodyError::Unreachable(_))) {
            self.reach.answered(Service::Graph);
        }
        a
    }

    /// Spends a retry of `retries` on `failed` as its class says, and waits the pause before it;
    /// the request gives up instead when the class says not to retry, the count is spent, or
    /// (`stepping`) a timeout is to be met with a lighter request.
    async fn again(
        &self,
        who: &Caller,
        item: &str,
        retries: &Retries,
        failed: Failed,
        last: &str,
        stepping: bool,
    ) -> Result<(), GraphError> {
        let timed_out = failed.timed_out();
        let spent = match (timed_out, stepping) {
            (true, true) => None,
            (true, false) | (false, _) => retries.retry_after(&failed),
        };
        let Some((after, n)) = spent else {
            return Err(gave_up(who, item, retries, last, timed_out));
        };
        self.stats.retries.fetch_add(1, Ordering::Relaxed);
        let wait = after.unwrap_or_else(|| pause(self.pause, n, &self.jitter));
        tracing::debug!(account = %who.account, item, retry = n + 1, wait_ms = wait.as_millis() as u64, "retrying after {last}");
        self.clock.sleep(wait).await;
        Ok(())
    }
}

/// Whether `url` may be sent the bearer token of the Graph at `base`: its host (with its scheme),
/// or one of Microsoft's Graph hosts over HTTPS (the drive client's next links are held to the
/// same rule).
pub(crate) fn may_carry_token(base: &str, url: &str) -> bool {
    let (Ok(u), Ok(base)) = (url::Url::parse(url), url::Url::parse(base)) else {
        return false;
    };
    // The configured host on any port: links in content name the service's own address,
    // which a proxy or gateway in front of it (the configured URL) may not share.
    let same_as_base = u.scheme() == base.scheme() && u.host_str() == base.host_str();
    let microsoft = u.scheme() == "https"
        && u.port_or_known_default() == Some(443)
        && u.host_str()
            .is_some_and(|h| GRAPH_HOSTS.iter().any(|g| h.eq_ignore_ascii_case(g)));
    same_as_base || microsoft
}

/// The failure of a request for `item` that retries could not settle: the attempts this attempt at
/// the item made in all, so the queue counts them against the same budget.
fn gave_up(who: &Caller, item: &str, retries: &Retries, last: &str, timed_out: bool) -> GraphError {
    GraphError::GaveUp {
        account: who.account.clone(),
        item: item.to_owned(),
        attempts: retries.here() + 1,
        retries: retries.here(),
        last: last.to_owned(),
        timed_out,
    }
}

/// Graph's refusal of a request for `item`.
fn refused(who: &Caller, item: &str, status: u16, body: &[u8]) -> GraphError {
    GraphError::Item {
        account: who.account.clone(),
        item: item.to_owned(),
        status,
        code: ServiceCode::of(body),
        message: error_message(body),
    }
}

/// Why one attempt at a request did not bring its answer: the one typed disposition the client,
/// `$batch` and its envelope act on, its class ([`Classify`]) saying whether to retry.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Failed {
    /// 429, or Graph's throttling code: the limiter holds the scope back; the retry count is not
    /// spent (the limiter paces every retry, and nothing failed).
    Throttled(ThrottleScope, Option<Duration>),
    /// 401 before the token was refreshed: refresh it once and ask again.
    Unauthorized,
    /// No answer in time, a broken connection, or an answer that says nothing about the item
    /// (408, 5xx).
    Transient {
        /// No answer (or no more of it) in time: a lighter request may still succeed.
        timed_out: bool,
    },
    /// A 400 carrying OneNote's generic code `19999`, an empty code or none: in the field the same
    /// request succeeds when asked again (obsidian-importer PR #611, a field report), so it is
    /// retried from the item's count; when that is spent it is the refusal it says it is.
    BareBadRequest,
    /// Any other error answer (a 401 after a refresh included): the same request gets the same.
    Refused,
}

impl Failed {
    /// Whether no answer came in time.
    fn timed_out(self) -> bool {
        match self {
            Failed::Transient { timed_out } => timed_out,
            Failed::Throttled(..)
            | Failed::Unauthorized
            | Failed::BareBadRequest
            | Failed::Refused => false,
        }
    }
}

impl Classify for Failed {
    fn class(&self) -> Class {
        match self {
            Failed::Throttled(_, after) => Class::retry(*after),
            Failed::Unauthorized | Failed::Transient { .. } | Failed::BareBadRequest => {
                Class::retry(None)
            }
            Failed::Refused => Class::item_fails(),
        }
    }
}

/// The `Content-Type` header, empty when absent or not text.
fn content_type(h: &HeaderMap) -> String {
    h.get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned()
}

/// What an answer's status (and, for Graph's throttling code, its body) says: every status named,
/// so that no answer is retried or refused by a default. `refreshed`: the token was refreshed for
/// this request already, so a 401 is a refusal.
fn answered(status: u16, headers: &HeaderMap, body: &[u8], refreshed: bool) -> Result<(), Failed> {
    let throttled = || Failed::Throttled(scope(headers), retry_after(headers));
    match status {
        200..=299 => Ok(()),
        429 => Err(throttled()),
        // Graph's OneNote throttling code may come with another error status.
        400..=599 if ServiceCode::of(body) == ServiceCode::Throttled => Err(throttled()),
        400 if bare_bad_request(body) => Err(Failed::BareBadRequest),
        401 if !refreshed => Err(Failed::Unauthorized),
        408 | 500 | 502 | 503 | 504 => Err(Failed::Transient {
            timed_out: status == 504,
        }),
        0..=199 | 300..=407 | 409..=428 | 430..=499 | 501 | 505..=u16::MAX => Err(Failed::Refused),
    }
}

/// Whether a 400's body names no reason of its own: OneNote's generic `19999`, an empty code, no
/// code, or no Graph error body at all.
fn bare_bad_request(body: &[u8]) -> bool {
    ServiceCode::of(body) == ServiceCode::Unnamed
}

fn scope(h: &HeaderMap) -> ThrottleScope {
    h.get("x-ms-throttle-scope")
        .and_then(|v| v.to_str().ok())
        .map(parse_scope_header)
        .unwrap_or(ThrottleScope::Unknown)
}

fn retry_after(h: &HeaderMap) -> Option<Duration> {
    h.get(reqwest::header::RETRY_AFTER)
        .and_then(|v| v.to_str().ok())
        .and_then(parse_retry_after)
}

fn percentage(h: &HeaderMap) -> Option<f64> {
    h.get("x-ms-throttle-limit-percentage")
        .and_then(|v| v.to_str().ok())
        .and_then(parse_limit_percentage)
}

/// Graph's error message from an error body, or a short description.
pub(crate) fn error_message(body: &[u8]) -> String {
    serde_json::from_slice::<Value>(body)
        .ok()
        .and_then(|v| {
            let code = v["error"]["code"].as_str().unwrap_or_default().to_owned();
            v["error"]["message"]
                .as_str()
                .map(|m| format!("{code} {m}").trim().to_owned())
        })
        .unwrap_or_else(|| "no error details".into())
}

pub(crate) fn transport_detail(e: &reqwest::Error) -> String {
    if e.is_timeout() {
        "timed out".into()
    } else if e.is_connect() {
        "could not connect".into()
    } else {
        "connection failed".into()
    }
}

/// Sends `req` and reads its answer, body bounded by `max`.
async fn answer(req: reqwest::RequestBuilder, max: usize) -> Result<Answer, BodyError> {
    let resp = crate::trace::send(req, "graph").await.map_err(|e| {
        if e.is_connect() {
            BodyError::Unreachable(transport_detail(&e))
        } else {
            BodyError::Failed {
                detail: transport_detail(&e),
                timed_out: e.is_timeout(),
            }
        }
    })?;
    let status = resp.status().as_u16();
    let headers = resp.headers().clone();
    let body = read_body(resp, max).await?;
    Ok(Answer {
        status,
        headers,
        body,
    })
}

/// Why a body was not read.
#[derive(Debug)]
enum BodyError {
    /// Over the caller's bound (bytes announced or read so far): not worth downloading.
    TooLarge(u64),
    /// The connection failed or was cut, or no answer came in time (`timed_out`).
    Failed {
        /// What happened, for messages.
        detail: String,
        /// No answer (or no more of it) in time.
        timed_out: bool,
    },
    /// No connection could be made (refused, DNS, connect timeout): the request never left.
    Unreachable(String),
}

impl std::fmt::Display for BodyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BodyError::TooLarge(n) => write!(f, "answer of {n} bytes is over the bound"),
            BodyError::Failed { detail: d, .. } | BodyError::Unreachable(d) => f.write_str(d),
        }
    }
}

/// Reads a body chunk by chunk into one buffer (no second copy); a body over `max` bytes is refused
/// from its Content-Length before any of it is read, or as soon as it grows past `max`.
async fn read_body(resp: reqwest::Response, max: usize) -> Result<Bytes, BodyError> {
    let announced = resp.content_length();
    if let Some(n) = announced.filter(|n| *n as usize > max) {
        return Err(BodyError::TooLarge(n));
    }
    let mut buf = BytesMut::with_capacity(announced.map_or(64 * 1024, |n| n as usize));
    let mut stream = resp.bytes_stream();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|e| BodyError::Failed {
            detail: format!("answer cut off ({})", transport_detail(&e)),
            timed_out: e.is_timeout(),
        })?;
        if buf.len() + chunk.len() > max {
            return Err(BodyError::TooLarge((buf.len() + chunk.len()) as u64));
        }
        buf.extend_from_slice(&chunk);
    }
    Ok(buf.freeze())
}

/// The `$skip` of `url` (0 when none).
fn skip_of(url: &str) -> usize {
    url::Url::parse(url)
        .ok()
        .and_then(|u| {
            u.query_pairs()
                .find(|(k, _)| k == "$skip")
                .and_then(|(_, v)| v.parse().ok())
        })
        .unwrap_or(0)
}

/// `url` with `$skip=n` set (replacing any `$skip` already there).
fn with_skip(url: &str, n: usize) -> String {
    match url::Url::parse(url) {
        Ok(mut u) => {
            let pairs: Vec<(String, String)> = u
                .query_pairs()
                .filter(|(k, _)| k != "$skip")
                .map(|(k, v)| (k.into_owned(), v.into_owned()))
                .collect();
            u.query_pairs_mut()
                .clear()
                .extend_pairs(pairs)
                .append_pair("$skip", &n.to_string());
            u.to_string()
        }
        Err(_) => url.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_graph_error_has_one_class() {
        use crate::failure::Meaning;
        let a = || "alice".to_owned();
        let i = || "page x".to_owned();
        let item = [
            GraphError::Item {
                account: a(),
                item: i(),
                status: 404,
                code: ServiceCode::Other,
                message: "gone".into(),
            },
            GraphError::ForeignHost {
                account: a(),
                item: i(),
                url: "https://evil".into(),
            },
            GraphError::TooLarge {
                account: a(),
                item: i(),
                size: 2,
                max: 1,
            },
            GraphError::BadAnswer {
                account: a(),
                item: i(),
                problem: "not JSON".into(),
            },
        ];
        for e in item {
            assert_eq!(e.class().code(), "item/never", "{e}");
            assert!(
                e.is_item_failure() && e.meaning().is_none() && e.retries() == 0,
                "{e}"
            );
        }
        let gave_up = GraphError::GaveUp {
            account: a(),
            item: i(),
            attempts: 6,
            retries: 5,
            last: "HTTP 503".into(),
            timed_out: false,
        };
        assert_eq!(gave_up.class().code(), "item/retry");
        assert_eq!(
            gave_up.retries(),
            5,
            "the client's retries count against the item's budget"
        );
        assert!(gave_up.is_item_failure());
        // What it wraps answers for itself.
        let auth = GraphError::Auth(AuthError::NoAccount { account: a() });
        assert_eq!(
            (auth.class().code(), auth.meaning()),
            ("account/never".into(), Some(Meaning::SignIn))
        );
        let wait = GraphError::Limiter(LimiterError::WouldWait {
            until: 5,
            reason: crate::limiter::WaitReason::BreakerOpen {
                scope: crate::limiter::BudgetHolder::App,
                trips: 1,
            },
        });
        assert_eq!(
            (wait.class().code(), wait.meaning()),
            ("run/stop".into(), Some(Meaning::WorkRemaining))
        );
        let bad = GraphError::Limiter(LimiterError::InvalidLimits("x".into()));
        assert_eq!(
            (bad.class().code(), bad.meaning()),
            ("run/never".into(), Some(Meaning::Usage))
        );
        let down = GraphError::Unreachable(Unreachable {
            service: Service::Graph,
            since: 0,
        });
        assert_eq!(
            (down.class().code(), down.meaning()),
            ("run/stop".into(), Some(Meaning::WorkRemaining))
        );
        assert!(!down.is_item_failure());
    }

    #[test]
    fn a_timeout_is_known_from_the_failure_not_from_its_text() {
        let gave_up = |last: &str, timed_out| GraphError::GaveUp {
            account: "a".into(),
            item: "section".into(),
            attempts: 3,
            retries: 2,
            last: last.into(),
            timed_out,
        };
        assert!(gave_up("HTTP 504", true).is_timeout());
        assert!(gave_up("answer cut off (timed out)", true).is_timeout());
        // A message that merely mentions a timeout (a 503's body, say) is not one.
        assert!(!gave_up("HTTP 503: the request timed out upstream", false).is_timeout());
        assert!(!GraphError::Item {
            account: "a".into(),
            item: "section".into(),
            status: 504,
            code: ServiceCode::Other,
            message: "timed out".into(),
        }
        .is_timeout());
    }

    #[test]
    fn skip_is_replaced_not_repeated() {
        let u = with_skip(
            "http://x/v1.0/me/onenote/sections/1/pages?$top=100&$skip=100",
            200,
        );
        assert!(u.contains("skip=200"));
        assert!(!u.contains("skip=100"));
        assert!(u.contains("top=100"));
    }

    #[test]
    fn content_type_is_read_or_empty() {
        let mut h = HeaderMap::new();
        assert_eq!(content_type(&h), "");
        h.insert(
            "content-type",
            "multipart/mixed; boundary=\"b-1\"".parse().unwrap(),
        );
        assert_eq!(content_type(&h), "multipart/mixed; boundary=\"b-1\"");
    }

    #[test]
    fn throttles_are_recognised_by_status_and_by_body_code() {
        let none = HeaderMap::new();
        let mut h = HeaderMap::new();
        h.insert("x-ms-throttle-scope", "User".parse().unwrap());
        assert_eq!(
            answered(429, &h, b"", false),
            Err(Failed::Throttled(ThrottleScope::User, None))
        );
        let body = br#"{"error":{"code":"20166","message":"too many"}}"#;
        assert_eq!(
            answered(503, &none, body, false),
            Err(Failed::Throttled(ThrottleScope::Unknown, None))
        );
        h.insert("retry-after", "2.128".parse().unwrap());
        assert_eq!(
            answered(429, &h, b"", false),
            Err(Failed::Throttled(
                ThrottleScope::User,
                Some(Duration::from_millis(2128))
            ))
        );
        assert_eq!(answered(204, &none, b"", false), Ok(()));
        assert_eq!(
            answered(502, &none, b"", false),
            Err(Failed::Transient { timed_out: false })
        );
        assert_eq!(
            answered(504, &none, b"", false),
            Err(Failed::Transient { timed_out: true })
        );
        assert_eq!(answered(404, &none, b"", false), Err(Failed::Refused));
        assert_eq!(answered(401, &none, b"", false), Err(Failed::Unauthorized));
        assert_eq!(
            answered(401, &none, b"", true),
            Err(Failed::Refused),
            "a second 401 is the item's"
        );
        assert_eq!(answered(302, &none, b"", false), Err(Failed::Refused));
    }

    #[test]
    fn only_transient_answers_spend_the_count_and_a_refusal_spends_none() {
        let count = Retries::new(ITEM_RETRIES, 0);
        assert_eq!(
            count.retry_after(&Failed::Transient { timed_out: false }),
            Some((None, 0))
        );
        assert_eq!(count.retry_after(&Failed::Refused), None);
        assert_eq!(count.here(), 1);
        let wait = Some(Duration::from_secs(2));
        assert_eq!(
            Failed::Throttled(ThrottleScope::Application, wait).class(),
            Class::retry(wait)
        );
    }

    #[test]
    fn service_codes_are_read_from_the_error_body_not_its_message() {
        let body = |code: &str| format!(r#"{{"error":{{"code":"{code}","message":"m"}}}}"#);
        assert_eq!(
            ServiceCode::of(body("40004").as_bytes()),
            ServiceCode::MissingScope
        );
        assert_eq!(
            ServiceCode::of(body("10008").as_bytes()),
            ServiceCode::TooManyItems
        );
        assert_eq!(
            ServiceCode::of(body("20166").as_bytes()),
            ServiceCode::Throttled
        );
        assert_eq!(
            ServiceCode::of(body("accessDenied").as_bytes()),
            ServiceCode::Other
        );
        // A message that starts with a code is not one.
        let msg = br#"{"error":{"code":"x","message":"40004 scopes"}}"#;
        assert_eq!(ServiceCode::of(msg), ServiceCode::Other);
        // No reason of its own: OneNote's generic code, an empty one, none, or no error body.
        assert_eq!(ServiceCode::of(b"not json"), ServiceCode::Unnamed);
        assert_eq!(
            ServiceCode::of(body("19999").as_bytes()),
            ServiceCode::Unnamed
        );
        assert_eq!(ServiceCode::of(body("").as_bytes()), ServiceCode::Unnamed);
        assert_eq!(
            ServiceCode::of(br#"{"error":{"message":"m"}}"#),
            ServiceCode::Unnamed
        );
    }

    /// Field report: obsidian-importer PR #611 ("a bare 400 is still retried").
    #[test]
    fn a_bare_400_is_asked_again_and_a_400_with_its_reason_is_not() {
        let h = HeaderMap::new();
        for body in [
            &br#"{"error":{"code":"19999","message":"m"}}"#[..],
            br#"{"error":{"code":"","message":"m"}}"#,
            br#"{"error":{"message":"m"}}"#,
            b"",
        ] {
            assert_eq!(answered(400, &h, body, false), Err(Failed::BareBadRequest));
        }
        let named = br#"{"error":{"code":"20129","message":"$top too big"}}"#;
        assert_eq!(answered(400, &h, named, false), Err(Failed::Refused));
        assert_eq!(Failed::BareBadRequest.class(), Class::retry(None));
    }
}
