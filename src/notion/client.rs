//! The Notion HTTP client: bearer token, pinned version, every request paced by [`NotionRate`], and the
//! retry rules. Writes that may have been applied (a 5xx or a lost answer) are never retried here:
//! they come back as [`NotionError::Ambiguous`] so the writer can look at what Notion holds first.
//! Retries spend from the item's one count ([`Retries`]) when the client works for an item
//! ([`NotionClient::for_item`]), else from a count of the request's own under the same policy.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use reqwest::Method;
use serde::Serialize;
use serde_json::{json, Value};

use super::pace::{Limit, Throttle, BLOCKED_REASON};
use super::rate::{NotionRate, RateError};
use crate::clock::{Clock, Jitter};
use crate::failure::{Class, Classify, Meaning, Next, Retries, Scope, ITEM_RETRIES};
use crate::net::{Reachability, Service, Unreachable};
use proof::UpdateProof;

pub mod proof;

/// The Notion API version we speak. 2026-03-11 is the newest; we use `position` on appends (which
/// replaced `after`) and `in_trash` (which replaced `archived`), the only parts that changed for us.
pub const NOTION_VERSION: &str = "2026-03-11";

/// How many `429`/`529` answers one request meets before giving up. Not the retry budget's: a
/// throttled request was not applied and not a failure of the item, and the shared pause it starts
/// already slows every request (the Graph limiter's rule too).
const THROTTLED_ATTEMPTS: u32 = 32;

/// Errors from Notion, each naming the request.
#[derive(Debug, thiserror::Error)]
pub enum NotionError {
    /// A 400: our request was wrong (a bug in our output). Permanent for that item.
    #[error("Notion rejected {what}: {status} {code}: {message}")]
    Rejected {
        /// What we were doing.
        what: String,
        /// HTTP status.
        status: u16,
        /// Notion's error code (`validation_error`...).
        code: String,
        /// Notion's message (names the path in the body).
        message: String,
    },
    /// 401, 403 or 404: Notion will not let this integration do it; [`Refusal`] says why.
    #[error("Notion refused {what}: {status} {code}: {message}. {}", kind.advice_for(*needs))]
    Refused {
        /// What we were doing.
        what: String,
        /// Why, from the status and Notion's code.
        kind: Refusal,
        /// The content capability the request needed, when it needs one beyond Read content.
        needs: Option<Capability>,
        /// HTTP status.
        status: u16,
        /// Notion's error code.
        code: String,
        /// Notion's message.
        message: String,
    },
    /// A write whose outcome is unknown (5xx or the answer was lost): look before writing again,
    /// unless the answer says what was saved ([`Saved`]).
    #[error("Notion answered {what} with {detail}; the write may or may not have been applied")]
    Ambiguous {
        /// What we were doing.
        what: String,
        /// Status or transport error.
        detail: String,
        /// What the answer says was saved (a 503's `additional_data`), if it says so.
        saved: Option<Box<Saved>>,
    },
    /// Retryable failures went on until the item's retry budget was spent (or past the throttle
    /// limit).
    #[error("Notion kept failing {what} after {attempts} attempts: {last}")]
    GaveUp {
        /// What we were doing.
        what: String,
        /// Attempts made in this attempt at the item, by every layer (its retries plus one).
        attempts: u32,
        /// The last failure.
        last: String,
    },
    /// A 429 whose `rate_limit_reason` is `public_api_request_blocked`: Notion says retrying will
    /// not help, so nothing is sent again and the run stops (resumable) with that reason.
    #[error(
        "Notion blocked {what}: 429 rate_limited, rate_limit_reason {BLOCKED_REASON} (Notion \
         says retrying will not help). Nothing was marked failed: resume the run once Notion lets \
         this connection's requests through again (ask the workspace's owner or Notion's support)"
    )]
    Blocked {
        /// What we were doing.
        what: String,
    },
    /// Notion could not be reached until the run's deadline: the work is parked, nothing failed.
    #[error(transparent)]
    Unreachable(#[from] Unreachable),
    /// The shared pace (the state database) failed.
    #[error(transparent)]
    Pace(#[from] RateError),
    /// The answer was not the JSON we expected.
    #[error("Notion's answer to {what} was not understood: {problem}")]
    BadAnswer {
        /// What we were doing.
        what: String,
        /// What was wrong.
        problem: String,
    },
}

/// What a write answered `503` saved all the same, as the answer's `additional_data` names it
/// (developers.notion.com/reference/request-limits: "a write can save its change and still return
/// 503"). Notion asks not to repeat such a write.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Saved {
    /// `committed_resource_id`: the page (or other resource) a creation made.
    pub resource_id: Option<String>,
    /// `committed_child_ids`: the direct children an append made, in order.
    pub child_ids: Option<Vec<String>>,
    /// `retry_guidance`, as Notion words it (kept for the log, never read).
    pub guidance: Option<String>,
}

impl Saved {
    /// What `additional_data` says was saved, if it names anything.
    pub fn of(additional_data: &Value) -> Option<Saved> {
        let resource_id = additional_data["committed_resource_id"]
            .as_str()
            .filter(|s| !s.is_empty())
            .map(str::to_owned);
        let child_ids = additional_data["committed_child_ids"]
            .as_array()
            .and_then(|a| {
                a.iter()
                    .map(|v| v.as_str().filter(|s| !s.is_empty()).map(str::to_owned))
                    .collect::<Option<Vec<_>>>()
            });
        let guidance = match &additional_data["retry_guidance"] {
            Value::Null => None,
            Value::String(g) => Some(g.clone()),
            other => Some(other.to_string()),
        };
        (resource_id.is_some() || child_ids.is_some()).then_some(Saved {
            resource_id,
            child_ids,
            guidance,
        })
    }
}

/// Why Notion refused a request, told apart by the status and Notion's `code` (and, for the two
/// kinds of `403 restricted_resource`, its message).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// 401 `unauthorized`: the token is not accepted (mistyped, an integration removed, a personal
    /// access token expired or revoked; the answer does not say which kind it was).
    BadToken,
    /// 404 `object_not_found`: the page or block is not shared with the integration (or is gone).
    NotShared,
    /// 404 `object_not_found` to a personal access token: the page is gone, or the person who made
    /// the token cannot open it (a personal access token needs no Connections).
    NotVisible,
    /// 403 `restricted_resource` for a missing capability (e.g. Insert content).
    MissingCapability,
    /// 403 `restricted_resource` for the workspace block limit of Notion's Free plan.
    BlockLimit,
}

/// A content capability beyond Read content (developers.notion.com/reference/capabilities). No
/// endpoint reports which ones an integration holds; a request that needs one it lacks is
/// answered `403 restricted_resource`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Capability {
    /// Insert content: creating pages and databases, appending blocks.
    Insert,
    /// Update content: updating pages and blocks, trashing, deleting blocks, moving pages.
    Update,
}

impl Capability {
    /// The capability a request of `method` to `path` (below the API's base) needs, if any
    /// beyond Read content.
    pub fn of(method: &Method, path: &str) -> Option<Capability> {
        let path = path.split('?').next().unwrap_or(path);
        let segs: Vec<&str> = path.trim_matches('/').split('/').collect();
        match (method.as_str(), segs.as_slice()) {
            ("POST", ["v1", "pages"] | ["v1", "databases"]) => Some(Capability::Insert),
            ("PATCH", ["v1", "blocks", _, "children"]) => Some(Capability::Insert),
            ("PATCH", ["v1", "pages" | "blocks" | "databases" | "data_sources", _])
            | ("DELETE", ["v1", "blocks" | "pages", _])
            | ("POST", ["v1", "pages", _, "move"]) => Some(Capability::Update),
            _ => None,
        }
    }

    /// Its name in Notion's settings.
    pub fn name(self) -> &'static str {
        match self {
            Capability::Insert => "Insert content",
            Capability::Update => "Update content",
        }
    }
}

impl Refusal {
    /// What the user can do about it, naming the capability the refused request needed when the
    /// refusal is a missing capability.
    pub fn advice_for(self, needs: Option<Capability>) -> String {
        match (self, needs) {
            (Refusal::MissingCapability, Some(c)) => format!(
                "The integration lacks a capability: {}. Give it Read, Update and Insert \
                 content at https://www.notion.so/profile/integrations (Capabilities); with a \
                 personal access token, give its creator edit access to the page. Nothing was \
                 marked failed",
                c.name()
            ),
            (kind, _) => kind.advice().to_owned(),
        }
    }

    /// The refusal an error answer stands for, if it is one: its status, Notion's `code` and the
    /// body's `additional_data` (Notion's messages are localised, so they are never read).
    pub fn of(status: u16, code: &str, additional_data: &Value) -> Option<Refusal> {
        match Answer::of(status) {
            Answer::Unauthorized => Some(Refusal::BadToken),
            Answer::NotFound => Some(Refusal::NotShared),
            Answer::Forbidden
                if code == "restricted_resource" && names_block_limit(additional_data) =>
            {
                Some(Refusal::BlockLimit)
            }
            Answer::Forbidden => Some(Refusal::MissingCapability),
            Answer::Success
            | Answer::BadRequest
            | Answer::Conflict
            | Answer::TooLarge
            | Answer::RateLimited
            | Answer::InternalError
            | Answer::BadGateway
            | Answer::Unavailable
            | Answer::GatewayTimeout
            | Answer::Overloaded
            | Answer::Undocumented(_) => None,
        }
    }

    /// What the user can do about it.
    pub fn advice(self) -> &'static str {
        match self {
            Refusal::BadToken => {
                "Notion does not accept NOTION_TOKEN: a personal access token that expired or was \
                 revoked: make a new one at https://www.notion.so/developers/tokens; an \
                 integration's secret that was mistyped, or whose integration was removed: copy it \
                 again from https://www.notion.so/profile/integrations"
            }
            Refusal::NotShared => {
                "The page is not shared with the integration, or was deleted: share the target \
                 page with it (page menu > Connections)"
            }
            Refusal::NotVisible => {
                "The page does not exist, or the person whose personal access token this is cannot \
                 open it: open it in Notion as that person (a personal access token reaches every \
                 page its creator can open; no Connections are needed)"
            }
            Refusal::MissingCapability => {
                "The integration lacks a capability: give it Read, Update and Insert content at \
                 https://www.notion.so/profile/integrations (Capabilities). Nothing was marked \
                 failed"
            }
            Refusal::BlockLimit => {
                "The workspace has reached Notion's workspace block limit (a Free workspace with \
                 more than one member holds at most 1,000 blocks in all, deleted ones included): \
                 upgrade the workspace to a paid plan and resume the run, or migrate into another \
                 workspace with a new state database (`--db`). Nothing was marked failed"
            }
        }
    }

    /// Whether every further write would meet it too, so the run stops instead of failing pages.
    pub fn stops_run(self) -> bool {
        self.class().scope == Scope::Run
    }
}

/// Notion's block-limit answer is `403 restricted_resource` like a missing capability; its
/// `additional_data.block_limit` (`"block_creation"` today) tells them apart
/// (developers.notion.com/reference/workspace-block-limits). Any value counts: a limit named
/// otherwise later is still the block limit.
fn names_block_limit(additional_data: &Value) -> bool {
    additional_data
        .get("block_limit")
        .is_some_and(|v| !v.is_null())
}

impl NotionError {
    /// The page (or row) an unclear creation's answer says it saved.
    pub fn saved_resource(&self) -> Option<&str> {
        match self {
            NotionError::Ambiguous { saved: Some(s), .. } => s.resource_id.as_deref(),
            _ => None,
        }
    }

    /// The blocks an unclear append's answer says it saved, in order.
    pub fn saved_children(&self) -> Option<&[String]> {
        match self {
            NotionError::Ambiguous { saved: Some(s), .. } => s.child_ids.as_deref(),
            _ => None,
        }
    }

    /// Whether the error ends the run (every further write would meet it): a bad token, a missing
    /// capability, the workspace block limit, a request every call would send wrong.
    pub fn stops_run(&self) -> bool {
        self.class().scope == Scope::Run
    }
}

impl Refusal {
    /// The refusal's class: a bad token, a missing capability and the block limit meet every
    /// further write (the last two stop the run resumably: `--resume` after the fix loses nothing);
    /// an unshared or deleted page is that item's. Each is the user's to fix.
    pub fn class(self) -> Class {
        match self {
            Refusal::BadToken => Class::new(Scope::Run, Next::Never),
            Refusal::MissingCapability | Refusal::BlockLimit => Class::new(Scope::Run, Next::Stop),
            Refusal::NotShared | Refusal::NotVisible => Class::item_fails(),
        }
        .means(Meaning::Usage)
    }
}

/// Notion's `code` of a `400` answer (<https://developers.notion.com/reference/status-codes>; and
/// `invalid_beta`, a beta header Notion does not know).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum BadRequestCode {
    ValidationError,
    MissingVersion,
    InvalidRequestUrl,
    InvalidBeta,
    InvalidJson,
    InvalidRequest,
    InvalidGrant,
    /// A code Notion does not document.
    Undocumented,
}

impl BadRequestCode {
    fn of(code: &str) -> Self {
        match code {
            "validation_error" => Self::ValidationError,
            "missing_version" => Self::MissingVersion,
            "invalid_request_url" => Self::InvalidRequestUrl,
            "invalid_beta" => Self::InvalidBeta,
            "invalid_json" => Self::InvalidJson,
            "invalid_request" => Self::InvalidRequest,
            "invalid_grant" => Self::InvalidGrant,
            _ => Self::Undocumented,
        }
    }
}

/// The class of a rejected answer by its status and Notion's `code`: a refused value is one
/// element's, a request Notion cannot read at all is every request's (a bug: the run stops rather
/// than fail every page), anything else this item's.
fn rejection_class(status: u16, code: &str) -> Class {
    let every_request = Class::new(Scope::Run, Next::Never);
    match Answer::of(status) {
        Answer::BadRequest => match BadRequestCode::of(code) {
            BadRequestCode::ValidationError => Class::new(Scope::Resource, Next::Degrade),
            BadRequestCode::MissingVersion
            | BadRequestCode::InvalidRequestUrl
            | BadRequestCode::InvalidBeta => every_request,
            BadRequestCode::InvalidJson
            | BadRequestCode::InvalidRequest
            | BadRequestCode::InvalidGrant
            | BadRequestCode::Undocumented => Class::item_fails(),
        },
        // Too large, or a status Notion does not document: what this item sent.
        Answer::TooLarge | Answer::Undocumented(_) => Class::item_fails(),
        // Not rejections ([`Answer::decide`]); said of one all the same, the item's.
        Answer::Success
        | Answer::Unauthorized
        | Answer::Forbidden
        | Answer::NotFound
        | Answer::Conflict
        | Answer::RateLimited
        | Answer::InternalError
        | Answer::BadGateway
        | Answer::Unavailable
        | Answer::GatewayTimeout
        | Answer::Overloaded => Class::item_fails(),
    }
}

impl Classify for NotionError {
    fn class(&self) -> Class {
        match self {
            NotionError::Rejected { status, code, .. } => rejection_class(*status, code),
            NotionError::Refused { kind, .. } => kind.class(),
            // Look at what Notion holds, then write again.
            NotionError::Ambiguous { .. } => Class::retry(None),
            // Every further request would be blocked too: the run stops, resumably, the user's to
            // clear with Notion.
            NotionError::Blocked { .. } => Class::new(Scope::Run, Next::Stop).means(Meaning::Usage),
            // The client spent its retries ([`Classify::retries`]); the item's budget decides.
            NotionError::GaveUp { .. } => Class::new(Scope::Item, Next::Retry(None)),
            NotionError::Unreachable(e) => e.class(),
            NotionError::Pace(e) => e.class(),
            // The same request would be answered the same way.
            NotionError::BadAnswer { .. } => Class::item_fails(),
        }
    }

    fn retries(&self) -> u32 {
        match self {
            NotionError::GaveUp { attempts, .. } => attempts.saturating_sub(1),
            NotionError::Rejected { .. }
            | NotionError::Refused { .. }
            | NotionError::Ambiguous { .. }
            | NotionError::Blocked { .. }
            | NotionError::Unreachable(_)
            | NotionError::Pace(_)
            | NotionError::BadAnswer { .. } => 0,
        }
    }
}

/// Counters for the run summary.
#[derive(Debug, Default)]
pub struct NotionStats {
    /// Requests sent (every attempt).
    pub requests: AtomicU64,
    /// 429/529 answers received.
    pub throttled: AtomicU64,
    /// Retries after 5xx/409/transport errors.
    pub retries: AtomicU64,
}

/// A snapshot of [`NotionStats`].
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct NotionCounts {
    /// Requests sent.
    pub requests: u64,
    /// 429/529 received.
    pub throttled: u64,
    /// Retries.
    pub retries: u64,
}

/// Where appended blocks go among a parent's children.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Position {
    /// After the last child.
    End,
    /// Before the first child.
    Start,
    /// Right after this block.
    After(String),
}

/// Notion's answers, each status it documents named
/// (<https://developers.notion.com/reference/status-codes>; `413` and `529 service_overload` as it
/// sends them too, `docs/NOTION-LIMITS.md`), every other status kept as it came.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Answer {
    /// `2xx`: done.
    Success,
    /// `400`: the request was wrong (`invalid_json`, `validation_error`, `missing_version`...).
    BadRequest,
    /// `401 unauthorized`.
    Unauthorized,
    /// `403 restricted_resource`.
    Forbidden,
    /// `404 object_not_found`.
    NotFound,
    /// `409 conflict_error`: the transaction was not completed; Notion asks to try again.
    Conflict,
    /// `413`: the body is too large.
    TooLarge,
    /// `429 rate_limited`.
    RateLimited,
    /// `500 internal_server_error`.
    InternalError,
    /// `502`.
    BadGateway,
    /// `503 service_unavailable` or `database_connection_unavailable`.
    Unavailable,
    /// `504 gateway_timeout`.
    GatewayTimeout,
    /// `529 service_overload`.
    Overloaded,
    /// A status Notion does not document.
    Undocumented(u16),
}

/// What the client does with an answer ([`Answer::decide`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Read the answer.
    Accept,
    /// Not applied and nobody's failure: wait out the shared pause (`notion::rate`) and send
    /// again, spending no retry.
    Pace,
    /// Our request was wrong: [`NotionError::Rejected`], classed by Notion's code.
    Reject,
    /// The integration may not do it: [`NotionError::Refused`].
    Refuse,
    /// Not applied: send again after the policy's pause, spending a retry.
    Retry,
    /// A write that may have been applied: [`NotionError::Ambiguous`] (the writer looks first).
    Ambiguous,
}

impl Answer {
    /// The answer with HTTP status `status`.
    pub fn of(status: u16) -> Answer {
        match status {
            200..=299 => Answer::Success,
            400 => Answer::BadRequest,
            401 => Answer::Unauthorized,
            403 => Answer::Forbidden,
            404 => Answer::NotFound,
            409 => Answer::Conflict,
            413 => Answer::TooLarge,
            429 => Answer::RateLimited,
            500 => Answer::InternalError,
            502 => Answer::BadGateway,
            503 => Answer::Unavailable,
            504 => Answer::GatewayTimeout,
            529 => Answer::Overloaded,
            other => Answer::Undocumented(other),
        }
    }

    /// What to do with this answer to a request that may (`Safe`) or may not be repeated blindly:
    /// one arm per answer, none by default.
    pub fn decide(self, retry: Retry) -> Decision {
        match self {
            Answer::Success => Decision::Accept,
            Answer::RateLimited | Answer::Overloaded => Decision::Pace,
            // A status Notion does not document says nothing we could rely on to repeat the
            // request: the item's, with what Notion said.
            Answer::BadRequest | Answer::TooLarge | Answer::Undocumented(_) => Decision::Reject,
            Answer::Unauthorized | Answer::Forbidden | Answer::NotFound => Decision::Refuse,
            Answer::Conflict => Decision::Retry,
            Answer::InternalError
            | Answer::BadGateway
            | Answer::Unavailable
            | Answer::GatewayTimeout => match retry {
                Retry::Safe => Decision::Retry,
                Retry::Unsafe => Decision::Ambiguous,
            },
        }
    }
}

/// Whether a request may be repeated blindly.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Retry {
    /// Reads, and writes that are harmless to repeat.
    Safe,
    /// Writes that would duplicate content if applied twice.
    Unsafe,
}

/// The Notion API client for one integration token.
#[derive(Clone)]
pub struct NotionClient {
    http: reqwest::Client,
    base: String,
    token: Arc<str>,
    rate: Arc<NotionRate>,
    jitter: Jitter,
    stats: Arc<NotionStats>,
    backoff_base: Duration,
    /// Retry pauses wait on it (tokio's paused clock in tests).
    clock: Clock,
    reach: Reachability,
    /// The retries of the item this client works for (`None`: each request counts its own).
    item: Option<Retries>,
    /// Whether the token is a personal access token.
    personal: bool,
    /// The run's proof of Update content, made before its first write (`None`: no proof asked).
    proof: Option<Arc<UpdateProof>>,
}

impl std::fmt::Debug for NotionClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NotionClient")
            .field("base", &self.base)
            .finish_non_exhaustive()
    }
}

enum Body {
    None,
    Json(Value),
    Multipart(Box<dyn Fn() -> reqwest::multipart::Form + Send + Sync>),
}

impl NotionClient {
    /// A client for `base` (e.g. `https://api.notion.com`) with `token`, paced by `rate`.
    pub fn new(base: &str, token: &str, rate: Arc<NotionRate>, jitter: Jitter) -> Self {
        let http = crate::transport::client_builder()
            .timeout(Duration::from_secs(120))
            .connect_timeout(Duration::from_secs(20))
            .build()
            .expect("reqwest client builds");
        Self {
            http,
            base: base.trim_end_matches('/').to_owned(),
            token: token.into(),
            rate,
            jitter,
            stats: Arc::new(NotionStats::default()),
            backoff_base: ITEM_RETRIES.pause,
            clock: Clock::system(),
            reach: Reachability::new(Clock::system()),
            item: None,
            personal: false,
            proof: None,
        }
    }

    /// This client's token is a personal access token ([`crate::notion::token::TokenKind`]): a 404
    /// is told as a page its creator cannot open, not one to share with an integration.
    pub fn with_personal_token(mut self, personal: bool) -> Self {
        self.personal = personal;
        self
    }

    /// Whether this client's token is a personal access token (told no upload limit).
    pub fn is_personal(&self) -> bool {
        self.personal
    }

    /// This client proving Update content with `proof` before its first write (and every clone
    /// made from it sharing the one proof).
    pub fn with_update_proof(mut self, proof: Arc<UpdateProof>) -> Self {
        self.proof = Some(proof);
        self
    }

    /// Proves the Update content capability on page `id` without changing it: an update that
    /// names nothing to change. Without the capability Notion answers `403 restricted_resource`
    /// (reference/update-a-block), as it would to the link pass, `--update` and trashing.
    pub async fn prove_update(&self, id: &str) -> Result<(), NotionError> {
        self.send(
            Method::PATCH,
            &format!("/v1/pages/{id}"),
            Body::Json(json!({})),
            Retry::Safe,
            &format!("checking the Update content capability on page {id}"),
        )
        .await
        .map(drop)
    }

    /// This client working for one item: its retries spend from `retries`, shared with the layers
    /// above (the writer, the upload, the queue).
    pub fn for_item(&self, retries: Retries) -> Self {
        Self {
            item: Some(retries),
            ..self.clone()
        }
    }

    /// This client with an item's count: its own when it has one, else a new one for what follows
    /// (one upload's steps, say).
    pub fn with_item_retries(&self) -> Self {
        match &self.item {
            Some(_) => self.clone(),
            None => self.for_item(Retries::new(ITEM_RETRIES, 0)),
        }
    }

    /// The retry count requests spend from: the item's, or a new one for a request of its own.
    pub fn retries(&self) -> Retries {
        self.item
            .clone()
            .unwrap_or_else(|| Retries::new(ITEM_RETRIES, 0))
    }

    /// Waits out an unreachable Notion on `reach`, the run's shared record (and deadline).
    pub fn with_reachability(mut self, reach: Reachability) -> Self {
        self.reach = reach;
        self
    }

    /// Waits its retry pauses on the run's `clock`.
    pub fn with_clock(mut self, clock: Clock) -> Self {
        self.clock = clock;
        self
    }

    /// Shortens the retry backoff (tests against the local test server).
    pub fn with_backoff_base(mut self, d: Duration) -> Self {
        self.backoff_base = d;
        self
    }

    /// The counters so far.
    pub fn counts(&self) -> NotionCounts {
        NotionCounts {
            requests: self.stats.requests.load(Ordering::Relaxed),
            throttled: self.stats.throttled.load(Ordering::Relaxed),
            retries: self.stats.retries.load(Ordering::Relaxed),
        }
    }

    /// The shared pacing.
    pub fn rate(&self) -> &Arc<NotionRate> {
        &self.rate
    }

    /// `GET /v1/users/me`: the bot, which also proves the token works.
    pub async fn me(&self) -> Result<Value, NotionError> {
        self.call(
            Method::GET,
            "/v1/users/me",
            Body::None,
            Retry::Safe,
            "reading the integration",
        )
        .await
    }

    /// `GET /v1/pages/{id}`.
    pub async fn page(&self, id: &str) -> Result<Value, NotionError> {
        self.call(
            Method::GET,
            &format!("/v1/pages/{id}"),
            Body::None,
            Retry::Safe,
            &format!("reading page {id}"),
        )
        .await
    }

    /// `POST /v1/pages` under a page parent, with a title and up to one request's worth of children.
    pub async fn create_page(
        &self,
        parent: &str,
        title: &str,
        children: &[Value],
    ) -> Result<Value, NotionError> {
        let mut body = json!({
            "parent": {"page_id": parent},
            "properties": {"title": {"title": title_rich_text(title)}},
        });
        if !children.is_empty() {
            body["children"] = Value::Array(children.to_vec());
        }
        self.call(
            Method::POST,
            "/v1/pages",
            Body::Json(body),
            Retry::Unsafe,
            &format!("creating a page under {parent}"),
        )
        .await
    }

    /// Renames a page. Safe to repeat.
    pub async fn set_title(&self, id: &str, title: &str) -> Result<Value, NotionError> {
        self.call(
            Method::PATCH,
            &format!("/v1/pages/{id}"),
            Body::Json(json!({"properties": {"title": {"title": title_rich_text(title)}}})),
            Retry::Safe,
            &format!("renaming page {id}"),
        )
        .await
    }

    /// Moves page `id` under `parent` (Notion keeps its id, links, comments and backlinks; a
    /// page moved where it already is goes after its siblings). Safe to repeat.
    pub async fn move_page(&self, id: &str, parent: &MoveTo) -> Result<Value, NotionError> {
        let parent = match parent {
            MoveTo::Page(p) => json!({"type": "page_id", "page_id": p}),
            MoveTo::DataSource(d) => json!({"type": "data_source_id", "data_source_id": d}),
        };
        self.call(
            Method::POST,
            &format!("/v1/pages/{id}/move"),
            Body::Json(json!({ "parent": parent })),
            Retry::Safe,
            &format!("moving page {id}"),
        )
        .await
    }

    /// Updates page `id`'s `properties` with only those given. Safe to repeat.
    pub async fn set_properties(&self, id: &str, properties: Value) -> Result<Value, NotionError> {
        self.call(
            Method::PATCH,
            &format!("/v1/pages/{id}"),
            Body::Json(json!({ "properties": properties })),
            Retry::Safe,
            &format!("updating the properties of page {id}"),
        )
        .await
    }

    /// Renames database `id`. Safe to repeat.
    pub async fn set_database_title(&self, id: &str, title: &str) -> Result<Value, NotionError> {
        self.call(
            Method::PATCH,
            &format!("/v1/databases/{id}"),
            Body::Json(json!({ "title": title_rich_text(title) })),
            Retry::Safe,
            &format!("renaming database {id}"),
        )
        .await
    }

    /// Moves database `id` (and its rows) to the trash.
    pub async fn trash_database(&self, id: &str) -> Result<Value, NotionError> {
        self.call(
            Method::PATCH,
            &format!("/v1/databases/{id}"),
            Body::Json(json!({"in_trash": true})),
            Retry::Safe,
            &format!("trashing database {id}"),
        )
        .await
    }

    /// Moves a page to the trash.
    pub async fn trash_page(&self, id: &str) -> Result<Value, NotionError> {
        self.call(
            Method::PATCH,
            &format!("/v1/pages/{id}"),
            Body::Json(json!({"in_trash": true})),
            Retry::Safe,
            &format!("trashing page {id}"),
        )
        .await
    }

    /// Every direct child block of `id` (all cursor pages).
    pub async fn children(&self, id: &str) -> Result<Vec<Value>, NotionError> {
        let mut out = Vec::new();
        self.children_each(id, |items| out.extend(items.iter().cloned()))
            .await?;
        Ok(out)
    }

    /// The direct child blocks of `id`, a cursor page at a time to `each` (a long page's listing is
    /// never held whole).
    pub async fn children_each(
        &self,
        id: &str,
        mut each: impl FnMut(&[Value]),
    ) -> Result<(), NotionError> {
        let mut cursor: Option<String> = None;
        loop {
            let mut path = format!("/v1/blocks/{id}/children?page_size=100");
            if let Some(c) = &cursor {
                // Cursors are opaque: encoded, so one holding `&`, `=` or `+` cannot break the query.
                let c: String = url::form_urlencoded::byte_serialize(c.as_bytes()).collect();
                path.push_str(&format!("&start_cursor={c}"));
            }
            let v = self
                .call(
                    Method::GET,
                    &path,
                    Body::None,
                    Retry::Safe,
                    &format!("listing the children of {id}"),
                )
                .await?;
            if let Some(items) = v["results"].as_array() {
                each(items);
            }
            match (v["has_more"].as_bool(), v["next_cursor"].as_str()) {
                (Some(true), Some(c)) => cursor = Some(c.to_owned()),
                _ => return Ok(()),
            }
        }
    }

    /// `PATCH /v1/blocks/{id}/children` at the end; returns the created first-level blocks.
    pub async fn append(&self, id: &str, children: &[Value]) -> Result<Vec<Value>, NotionError> {
        self.append_at(id, children, &Position::End).await
    }

    /// `PATCH /v1/blocks/{id}/children` at `position`; returns the created first-level blocks.
    pub async fn append_at(
        &self,
        id: &str,
        children: &[Value],
        position: &Position,
    ) -> Result<Vec<Value>, NotionError> {
        let position = match position {
            Position::End => json!({"type": "end"}),
            Position::Start => json!({"type": "start"}),
            Position::After(b) => json!({"type": "after_block", "after_block": {"id": b}}),
        };
        let v = self
            .call(
                Method::PATCH,
                &format!("/v1/blocks/{id}/children"),
                Body::Json(json!({"children": children, "position": position})),
                Retry::Unsafe,
                &format!("appending {} blocks to {id}", children.len()),
            )
            .await?;
        Ok(v["results"].as_array().cloned().unwrap_or_default())
    }

    /// `PATCH /v1/blocks/{id}`: replaces a block's content (used to rewrite links). Safe to repeat.
    pub async fn update_block(&self, id: &str, body: Value) -> Result<Value, NotionError> {
        self.call(
            Method::PATCH,
            &format!("/v1/blocks/{id}"),
            Body::Json(body),
            Retry::Safe,
            &format!("updating block {id}"),
        )
        .await
    }

    /// `DELETE /v1/blocks/{id}` (moves it to the trash). Safe to repeat.
    pub async fn delete_block(&self, id: &str) -> Result<Value, NotionError> {
        self.call(
            Method::DELETE,
            &format!("/v1/blocks/{id}"),
            Body::None,
            Retry::Safe,
            &format!("deleting block {id}"),
        )
        .await
    }

    /// `POST /v1/file_uploads`. Creating an upload that is never attached costs nothing lasting, so it
    /// is safe to repeat.
    pub async fn create_upload(
        &self,
        filename: &str,
        content_type: &str,
        parts: Option<u32>,
    ) -> Result<Value, NotionError> {
        let mut body = json!({"filename": filename, "content_type": content_type});
        match parts {
            Some(n) => {
                body["mode"] = json!("multi_part");
                body["number_of_parts"] = json!(n);
            }
            None => body["mode"] = json!("single_part"),
        }
        self.call(
            Method::POST,
            "/v1/file_uploads",
            Body::Json(body),
            Retry::Safe,
            &format!("creating an upload for {filename}"),
        )
        .await
    }

    /// `POST /v1/file_uploads/{id}/send` with one part (multipart/form-data). Not repeated here: a
    /// send applied whose answer was lost is refused when repeated, so the caller reads the upload
    /// back first ([`super::upload`]).
    pub async fn send_upload(
        &self,
        id: &str,
        filename: &str,
        content_type: &str,
        bytes: bytes::Bytes,
        part_number: Option<u32>,
    ) -> Result<Value, NotionError> {
        let filename = filename.to_owned();
        let content_type = content_type.to_owned();
        let form = move || {
            let part = reqwest::multipart::Part::stream(bytes.clone())
                .file_name(filename.clone())
                .mime_str(&content_type)
                .unwrap_or_else(|_| reqwest::multipart::Part::stream(bytes.clone()));
            let mut f = reqwest::multipart::Form::new().part("file", part);
            if let Some(n) = part_number {
                f = f.text("part_number", n.to_string());
            }
            f
        };
        self.call(
            Method::POST,
            &format!("/v1/file_uploads/{id}/send"),
            Body::Multipart(Box::new(form)),
            Retry::Unsafe,
            &format!("sending upload {id}"),
        )
        .await
    }

    /// `GET /v1/file_uploads/{id}`.
    pub async fn get_upload(&self, id: &str) -> Result<Value, NotionError> {
        self.call(
            Method::GET,
            &format!("/v1/file_uploads/{id}"),
            Body::None,
            Retry::Safe,
            &format!("reading upload {id}"),
        )
        .await
    }

    /// `POST /v1/file_uploads/{id}/complete` (multi-part uploads). Not repeated here, for the same
    /// reason as [`Self::send_upload`].
    pub async fn complete_upload(&self, id: &str) -> Result<Value, NotionError> {
        self.call(
            Method::POST,
            &format!("/v1/file_uploads/{id}/complete"),
            Body::None,
            Retry::Unsafe,
            &format!("completing upload {id}"),
        )
        .await
    }

    /// One JSON request with the client's pacing and retry rules, for the request kinds other
    /// modules own (`notion::database`).
    pub(crate) async fn call_json(
        &self,
        method: Method,
        path: &str,
        body: Option<Value>,
        retry: Retry,
        what: &str,
    ) -> Result<Value, NotionError> {
        let body = body.map_or(Body::None, Body::Json);
        self.call(method, path, body, retry, what).await
    }

    async fn call(
        &self,
        method: Method,
        path: &str,
        body: Body,
        retry: Retry,
        what: &str,
    ) -> Result<Value, NotionError> {
        if let Some(proof) = &self.proof {
            if proof::is_write(&method, path) {
                proof.before_write(self).await?;
            }
        }
        self.send(method, path, body, retry, what).await
    }

    /// [`NotionClient::call`] without the proof before a write.
    async fn send(
        &self,
        method: Method,
        path: &str,
        body: Body,
        retry: Retry,
        what: &str,
    ) -> Result<Value, NotionError> {
        let url = format!("{}{}", self.base, path);
        let retries = self.retries();
        let mut throttled = 0u32;
        let mut unreachable = 0u32;
        loop {
            let grant = self.rate.acquire().await?;
            self.stats.requests.fetch_add(1, Ordering::Relaxed);
            let mut req = self
                .http
                .request(method.clone(), &url)
                .bearer_auth(&*self.token)
                .header("Notion-Version", NOTION_VERSION);
            req = match &body {
                Body::None => req,
                Body::Json(v) => req.json(v),
                Body::Multipart(f) => req.multipart(f()),
            };
            let sent = crate::trace::send(req, "notion").await;
            match &sent {
                // No connection was made, so nothing was applied: any request may go again once
                // Notion answers, and the wait is the network's, not this request's.
                Err(e) if e.is_connect() => {
                    unreachable += 1;
                    self.reach
                        .wait(Service::Notion, unreachable, &self.jitter)
                        .await?;
                    continue;
                }
                _ => self.reach.answered(Service::Notion),
            }
            let failure = match sent {
                Err(e) => {
                    let detail = format!("a transport error ({})", transport_kind(&e));
                    if retry == Retry::Unsafe {
                        return Err(NotionError::Ambiguous {
                            what: what.to_owned(),
                            detail,
                            saved: None,
                        });
                    }
                    detail
                }
                Ok(resp) => {
                    let status = resp.status();
                    let retry_after = resp
                        .headers()
                        .get(reqwest::header::RETRY_AFTER)
                        .and_then(|v| v.to_str().ok())
                        .and_then(|v| v.trim().parse::<f64>().ok())
                        .filter(|s| s.is_finite() && *s >= 0.0)
                        .map(Duration::from_secs_f64);
                    let text = match resp.text().await {
                        Ok(t) => t,
                        Err(e) => {
                            let detail = format!("a lost answer ({})", transport_kind(&e));
                            if retry == Retry::Unsafe {
                                return Err(NotionError::Ambiguous {
                                    what: what.to_owned(),
                                    detail,
                                    saved: None,
                                });
                            }
                            self.backoff(&retries, what, &detail).await?;
                            continue;
                        }
                    };
                    let decision = Answer::of(status.as_u16()).decide(retry);
                    let mut grant = Some(grant);
                    if decision != Decision::Pace {
                        if let Some(g) = grant.take() {
                            self.rate.answered(g).await?;
                        }
                    }
                    // An error answer's body: its `code`, `message` and `additional_data`.
                    let err: Value = if decision == Decision::Accept {
                        Value::Null
                    } else {
                        serde_json::from_str(&text).unwrap_or(Value::Null)
                    };
                    let code = err["code"].as_str().unwrap_or("").to_owned();
                    let message = err["message"].as_str().unwrap_or("").to_owned();
                    match decision {
                        Decision::Accept => {
                            return serde_json::from_str(&text).map_err(|e| {
                                NotionError::BadAnswer {
                                    what: what.to_owned(),
                                    problem: e.to_string(),
                                }
                            })
                        }
                        Decision::Pace => {
                            let reason = err["additional_data"]["rate_limit_reason"].as_str();
                            let grant = grant.take().expect("a refused request keeps its grant");
                            if status.as_u16() == 429 && reason == Some(BLOCKED_REASON) {
                                // Not a pace: Notion says no wait would let it through, so no
                                // request is sent again; the request did reach Notion.
                                self.rate.answered(grant).await?;
                                self.stats.throttled.fetch_add(1, Ordering::Relaxed);
                                return Err(NotionError::Blocked {
                                    what: what.to_owned(),
                                });
                            }
                            // Not applied: safe to repeat any request after the shared pause.
                            let paused = self
                                .rate
                                .throttled(
                                    grant,
                                    Throttle {
                                        limit: Limit::of(status.as_u16(), reason),
                                        retry_after: retry_after.unwrap_or(Duration::from_secs(1)),
                                    },
                                )
                                .await;
                            // Counted once the pause is recorded: whoever sees the count sees it.
                            self.stats.throttled.fetch_add(1, Ordering::Relaxed);
                            paused?;
                            throttled += 1;
                            if throttled >= THROTTLED_ATTEMPTS {
                                return Err(NotionError::GaveUp {
                                    what: what.to_owned(),
                                    attempts: throttled,
                                    last: format!("{status}"),
                                });
                            }
                            continue;
                        }
                        Decision::Reject => {
                            return Err(NotionError::Rejected {
                                what: what.to_owned(),
                                status: status.as_u16(),
                                code,
                                message,
                            })
                        }
                        Decision::Refuse => {
                            let kind =
                                match Refusal::of(status.as_u16(), &code, &err["additional_data"])
                                    .expect("401, 403 and 404 are refusals")
                                {
                                    Refusal::NotShared if self.personal => Refusal::NotVisible,
                                    k => k,
                                };
                            return Err(NotionError::Refused {
                                what: what.to_owned(),
                                kind,
                                needs: Capability::of(&method, path),
                                status: status.as_u16(),
                                code,
                                message,
                            });
                        }
                        Decision::Ambiguous => {
                            let saved = Saved::of(&err["additional_data"]).map(Box::new);
                            if let Some(g) = saved.as_ref().and_then(|s| s.guidance.as_deref()) {
                                tracing::info!(
                                    guidance = g,
                                    "Notion says the unclear write was saved"
                                );
                            }
                            return Err(NotionError::Ambiguous {
                                what: what.to_owned(),
                                detail: format!("{status} {code}"),
                                saved,
                            });
                        }
                        Decision::Retry => format!("{status} {code}"),
                    }
                }
            };
            self.backoff(&retries, what, &failure).await?;
        }
    }

    /// Spends a retry of `retries` and waits before it, or gives up when the budget is spent.
    async fn backoff(&self, retries: &Retries, what: &str, last: &str) -> Result<(), NotionError> {
        let Some(n) = retries.spend() else {
            return Err(gave_up(retries, what, last));
        };
        tracing::debug!(retry = n + 1, "retrying a Notion request after {last}");
        self.pause_before_retry(n).await;
        Ok(())
    }

    /// Waits before retry `n + 1` of an item's requests (`n` spent before it), as every layer that
    /// sends a request again in process does: the policy's pause, doubling, capped at a minute.
    pub async fn pause_before_retry(&self, n: u32) {
        self.stats.retries.fetch_add(1, Ordering::Relaxed);
        let wait = crate::failure::pause(self.backoff_base, n, &self.jitter);
        tracing::debug!(wait_ms = wait.as_millis() as u64, "pausing before a retry");
        self.clock.sleep(wait).await;
    }
}

/// The failure of `what` once `retries` is spent: how many attempts this attempt at the item made
/// in all, so the queue counts them against the same budget.
pub fn gave_up(retries: &Retries, what: &str, last: &str) -> NotionError {
    NotionError::GaveUp {
        what: what.to_owned(),
        attempts: retries.here() + 1,
        last: last.to_owned(),
    }
}

fn transport_kind(e: &reqwest::Error) -> &'static str {
    if e.is_timeout() {
        "timeout"
    } else if e.is_connect() {
        "connection failed"
    } else if e.is_body() || e.is_decode() {
        "connection dropped"
    } else {
        "request failed"
    }
}

/// Where [`NotionClient::move_page`] puts a page.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MoveTo {
    /// Under a page.
    Page(String),
    /// Into a data source, as a row.
    DataSource(String),
}

impl MoveTo {
    /// The page or data source id.
    pub fn id(&self) -> &str {
        match self {
            MoveTo::Page(p) | MoveTo::DataSource(p) => p,
        }
    }
}

/// A title as rich text, split into runs of at most 2000 UTF-16 code units (what Notion counts),
/// never inside a character.
pub fn title_rich_text(title: &str) -> Value {
    let title = if title.trim().is_empty() {
        "Untitled"
    } else {
        title
    };
    let runs: Vec<Value> = utf16_chunks(title, 2000)
        .into_iter()
        .map(|c| json!({"type": "text", "text": {"content": c}}))
        .collect();
    Value::Array(runs)
}

/// `s` cut into pieces of at most `max` UTF-16 code units, at character boundaries.
pub fn utf16_chunks(s: &str, max: usize) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut start, mut units) = (0, 0);
    for (i, ch) in s.char_indices() {
        if units + ch.len_utf16() > max {
            out.push(&s[start..i]);
            start = i;
            units = 0;
        }
        units += ch.len_utf16();
    }
    if start < s.len() || out.is_empty() {
        out.push(&s[start..]);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rejected(status: u16, code: &str) -> NotionError {
        NotionError::Rejected {
            what: "appending".into(),
            status,
            code: code.into(),
            message: "m".into(),
        }
    }

    fn refused(kind: Refusal) -> NotionError {
        NotionError::Refused {
            what: "w".into(),
            kind,
            needs: None,
            status: 403,
            code: "restricted_resource".into(),
            message: "m".into(),
        }
    }

    #[test]
    fn a_refused_write_names_the_capability_it_needed() {
        let of = |m: Method, p: &str| Capability::of(&m, p);
        assert_eq!(of(Method::POST, "/v1/pages"), Some(Capability::Insert));
        assert_eq!(
            of(Method::PATCH, "/v1/blocks/abc/children"),
            Some(Capability::Insert)
        );
        assert_eq!(of(Method::POST, "/v1/databases"), Some(Capability::Insert));
        assert_eq!(of(Method::PATCH, "/v1/pages/abc"), Some(Capability::Update));
        assert_eq!(
            of(Method::PATCH, "/v1/blocks/abc"),
            Some(Capability::Update)
        );
        assert_eq!(
            of(Method::DELETE, "/v1/blocks/abc"),
            Some(Capability::Update)
        );
        assert_eq!(
            of(Method::GET, "/v1/blocks/abc/children?page_size=100"),
            None
        );
        assert_eq!(of(Method::POST, "/v1/file_uploads"), None);
        let e = NotionError::Refused {
            what: "creating a page".into(),
            kind: Refusal::MissingCapability,
            needs: Some(Capability::Insert),
            status: 403,
            code: "restricted_resource".into(),
            message: "m".into(),
        };
        let said = e.to_string();
        assert!(
            said.contains("lacks a capability: Insert content."),
            "{said}"
        );
        assert!(refused(Refusal::MissingCapability)
            .to_string()
            .contains("lacks a capability"));
    }

    #[test]
    fn answers_are_classified_by_status_and_code() {
        let codes = |e: NotionError| (e.class().code(), e.meaning());
        // One refused value is one element's: degraded and sent again.
        assert_eq!(
            codes(rejected(400, "validation_error")),
            ("resource/degrade".into(), None)
        );
        // A request Notion cannot read at all is every request's: the run stops, a bug.
        for code in ["missing_version", "invalid_request_url", "invalid_beta"] {
            assert_eq!(
                codes(rejected(400, code)),
                ("run/never".into(), None),
                "{code}"
            );
        }
        // Anything else refused is this item's.
        for (status, code) in [
            (400, "invalid_request"),
            (400, "invalid_json"),
            (413, ""),
            (405, ""),
        ] {
            assert_eq!(
                codes(rejected(status, code)),
                ("item/never".into(), None),
                "{status} {code}"
            );
        }
        let usage = Some(Meaning::Usage);
        assert_eq!(
            codes(refused(Refusal::BadToken)),
            ("run/never".into(), usage)
        );
        assert_eq!(
            codes(refused(Refusal::NotShared)),
            ("item/never".into(), usage)
        );
        assert_eq!(
            codes(refused(Refusal::MissingCapability)),
            ("run/stop".into(), usage)
        );
        assert_eq!(
            codes(refused(Refusal::BlockLimit)),
            ("run/stop".into(), usage)
        );
        assert_eq!(
            codes(NotionError::Ambiguous {
                what: "w".into(),
                detail: "504".into(),
                saved: None,
            }),
            ("attempt/retry".into(), None)
        );
        assert_eq!(
            codes(NotionError::BadAnswer {
                what: "w".into(),
                problem: "p".into()
            }),
            ("item/never".into(), None)
        );
        let down = NotionError::Unreachable(Unreachable {
            service: Service::Notion,
            since: 0,
        });
        assert_eq!(
            codes(down),
            ("run/stop".into(), Some(Meaning::WorkRemaining))
        );
    }

    /// Every status Notion documents, by what it is.
    const NAMED: [(u16, Answer); 13] = [
        (200, Answer::Success),
        (400, Answer::BadRequest),
        (401, Answer::Unauthorized),
        (403, Answer::Forbidden),
        (404, Answer::NotFound),
        (409, Answer::Conflict),
        (413, Answer::TooLarge),
        (429, Answer::RateLimited),
        (500, Answer::InternalError),
        (502, Answer::BadGateway),
        (503, Answer::Unavailable),
        (504, Answer::GatewayTimeout),
        (529, Answer::Overloaded),
    ];

    fn decisions(statuses: &[u16], retry: Retry) -> Vec<Decision> {
        statuses
            .iter()
            .map(|s| Answer::of(*s).decide(retry))
            .collect()
    }

    #[test]
    fn each_documented_status_is_named_and_any_other_kept_as_it_came() {
        for (status, answer) in NAMED {
            assert_eq!(Answer::of(status), answer, "{status}");
        }
        assert_eq!(Answer::of(201), Answer::Success);
        for status in [302, 405, 418, 501, 520] {
            assert_eq!(Answer::of(status), Answer::Undocumented(status));
        }
    }

    #[test]
    fn a_success_is_read() {
        for retry in [Retry::Safe, Retry::Unsafe] {
            assert_eq!(decisions(&[200, 201, 204], retry), [Decision::Accept; 3]);
        }
    }

    #[test]
    fn a_throttled_answer_waits_the_shared_pause_whatever_the_request() {
        for retry in [Retry::Safe, Retry::Unsafe] {
            assert_eq!(decisions(&[429, 529], retry), [Decision::Pace; 2]);
        }
    }

    #[test]
    fn a_wrong_request_or_an_undocumented_status_is_rejected() {
        for retry in [Retry::Safe, Retry::Unsafe] {
            assert_eq!(
                decisions(&[400, 413, 302, 405, 501], retry),
                [Decision::Reject; 5]
            );
        }
    }

    #[test]
    fn a_request_the_integration_may_not_make_is_refused() {
        for retry in [Retry::Safe, Retry::Unsafe] {
            assert_eq!(decisions(&[401, 403, 404], retry), [Decision::Refuse; 3]);
        }
    }

    #[test]
    fn a_conflict_was_not_applied_and_is_sent_again() {
        for retry in [Retry::Safe, Retry::Unsafe] {
            assert_eq!(decisions(&[409], retry), [Decision::Retry]);
        }
    }

    #[test]
    fn a_server_error_repeats_a_safe_request_and_leaves_a_write_in_doubt() {
        let errors = [500, 502, 503, 504];
        assert_eq!(decisions(&errors, Retry::Safe), [Decision::Retry; 4]);
        assert_eq!(decisions(&errors, Retry::Unsafe), [Decision::Ambiguous; 4]);
    }

    fn idle_client(seed: u64) -> NotionClient {
        let rate = NotionRate::new(
            crate::settings::Window {
                count: 3,
                length: Duration::from_secs(1),
            },
            1,
        );
        NotionClient::new(
            "http://127.0.0.1:9",
            "t",
            Arc::new(rate),
            Jitter::seeded(seed),
        )
        .with_backoff_base(Duration::from_millis(300))
        .with_clock(Clock::anchored_at(0))
    }

    #[tokio::test(start_paused = true)]
    async fn a_retry_pause_is_the_policys_on_the_paused_clock() {
        for n in [0, 3, 9] {
            let want = crate::failure::pause(Duration::from_millis(300), n, &Jitter::seeded(5));
            let client = idle_client(5);
            let pause = tokio::spawn(async move { client.pause_before_retry(n).await });
            tokio::task::yield_now().await;
            // The timer's resolution is a millisecond: not a millisecond early, done within one.
            tokio::time::advance(want - Duration::from_millis(1)).await;
            tokio::task::yield_now().await;
            assert!(!pause.is_finished(), "retry {n}: ended before {want:?}");
            tokio::time::advance(Duration::from_millis(2)).await;
            for _ in 0..3 {
                tokio::task::yield_now().await;
            }
            assert!(
                pause.is_finished(),
                "retry {n}: still waiting after {want:?}"
            );
        }
    }

    #[test]
    fn a_client_that_gave_up_says_how_often_it_retried() {
        let e = NotionError::GaveUp {
            what: "w".into(),
            attempts: 8,
            last: "503".into(),
        };
        assert_eq!(e.class().code(), "item/retry");
        assert_eq!(e.retries(), 7);
        assert_eq!(rejected(400, "validation_error").retries(), 0);
        assert!(
            refused(Refusal::BlockLimit).stops_run() && !refused(Refusal::NotShared).stops_run()
        );
        assert!(rejected(400, "missing_version").stops_run());
    }

    #[test]
    fn a_503_names_what_it_saved_only_with_ids() {
        let page = json!({"retry_guidance": "do_not_retry", "committed_resource_id": "p1"});
        assert_eq!(
            Saved::of(&page),
            Some(Saved {
                resource_id: Some("p1".into()),
                child_ids: None,
                guidance: Some("do_not_retry".into()),
            })
        );
        let blocks = json!({"committed_child_ids": ["b1", "b2"]});
        assert_eq!(
            Saved::of(&blocks).and_then(|s| s.child_ids),
            Some(vec!["b1".to_owned(), "b2".to_owned()])
        );
        // Guidance alone, or ids that are not ids, name nothing: the writer looks.
        assert_eq!(Saved::of(&json!({"retry_guidance": "x"})), None);
        assert_eq!(Saved::of(&json!({"committed_child_ids": ["b1", 3]})), None);
        assert_eq!(Saved::of(&Value::Null), None);
    }

    #[test]
    fn refusals_are_told_apart_by_status_code_and_additional_data() {
        let none = Value::Null;
        assert_eq!(
            Refusal::of(401, "unauthorized", &none),
            Some(Refusal::BadToken)
        );
        assert_eq!(
            Refusal::of(404, "object_not_found", &none),
            Some(Refusal::NotShared)
        );
        let limit = json!({"block_limit": "block_creation"});
        assert_eq!(
            Refusal::of(403, "restricted_resource", &limit),
            Some(Refusal::BlockLimit)
        );
        // Whatever the message says, in any language: without `block_limit` it is a capability.
        assert_eq!(
            Refusal::of(403, "restricted_resource", &none),
            Some(Refusal::MissingCapability)
        );
        assert_eq!(
            Refusal::of(403, "restricted_resource", &json!({"block_limit": null})),
            Some(Refusal::MissingCapability)
        );
        assert_eq!(Refusal::of(400, "validation_error", &limit), None);
        assert!(!Refusal::NotShared.stops_run());
        assert!(Refusal::BlockLimit.stops_run() && Refusal::BadToken.stops_run());
    }

    #[test]
    fn titles_split_by_utf16_code_units_never_inside_a_character() {
        // 1999 ASCII then an emoji (2 units): the emoji starts the second run
        let t = format!("{}😀tail", "a".repeat(1999));
        let runs = title_rich_text(&t);
        let runs = runs.as_array().unwrap();
        assert_eq!(runs.len(), 2);
        let first = runs[0]["text"]["content"].as_str().unwrap();
        assert_eq!(first.encode_utf16().count(), 1999);
        assert_eq!(runs[1]["text"]["content"], "😀tail");
        // 1000 emoji = 2000 units: one run; 1001: two
        assert_eq!(
            title_rich_text(&"😀".repeat(1000))
                .as_array()
                .unwrap()
                .len(),
            1
        );
        assert_eq!(
            title_rich_text(&"😀".repeat(1001))
                .as_array()
                .unwrap()
                .len(),
            2
        );
        assert_eq!(title_rich_text(" ")[0]["text"]["content"], "Untitled");
    }
}
