//! The drive client: a synced notebook's section files (`.one`) read from OneDrive or SharePoint
//! through Graph's drive API, a listing per folder and one download per section, instead of the
//! OneNote API's request per page (`docs/GRAPH-DRIVE.md` has the service's documented behaviour).
//!
//! The notebook's folder is found by path from its `links.oneNoteClientUrl.href` in the drive the
//! caller names, or through the shares API from its `links.oneNoteWebUrl.href` when the sign-in
//! holds the write permission that API needs ([`locate`], [`share`]), walked level by level ([`walk`]), and each section file streamed to a file the
//! caller names ([`download`](DriveClient::download)), resumed with `Range` after a cut. Drive
//! requests never spend the OneNote limiter's windows: [`pacer`] holds their own cap and the
//! account's breaker. What a failure means for the caller is [`DriveError`]'s class: fall back to
//! the OneNote API, stop the run resumably, or sign in again.

mod download;
pub mod error;
pub mod locate;
pub mod model;
pub mod pacer;
pub mod quickxor;
pub mod share;
pub mod walk;

#[cfg(test)]
mod tests;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use reqwest::header::HeaderMap;
use serde::de::DeserializeOwned;
use serde::Serialize;

pub use download::{part_path, MAX_DOWNLOAD};
pub use error::DriveError;
pub use locate::{DriveInfo, DriveOwner, NotebookLinks};
use pacer::{Pacer, Slot};
use walk::{Walk, BOUNDS};

use crate::auth::{AccessToken, TokenSource};
use crate::clock::{Clock, Jitter};
use crate::failure::{pause, Retries};
use crate::graph::{error_message, may_carry_token, transport_detail, Caller};
use crate::limiter::parse_retry_after;
use crate::net::{Reachability, Service};
use crate::settings::Settings;
use crate::store::Db;

/// Largest listing or item answer read into memory.
const MAX_JSON_BYTES: usize = 8 * 1024 * 1024;
/// Largest error body read for its message.
const MAX_ERROR_BYTES: usize = 64 * 1024;
/// Throttled answers tolerated for one request before it gives up (the pacer spaces them): a file
/// the service keeps answering 503 for (OneNote files over 2 GB do) falls back within minutes.
pub const MAX_THROTTLED: u32 = 10;
/// How long an answer may send nothing before the request counts as timed out.
const READ_IDLE_TIMEOUT: Duration = Duration::from_secs(120);
/// Children asked for per listing page.
const PAGE_SIZE: u32 = 200;
/// The fields of a driveItem the client reads.
const SELECT: &str = "id,name,size,cTag,lastModifiedDateTime,file,folder,package,parentReference";

/// The section files of one notebook, as its drive holds them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NotebookFiles {
    /// The drive holding the notebook.
    pub drive_id: String,
    /// The notebook's own item (its folder, with the `package` facet).
    pub folder_id: String,
    /// Its section files, the notebook's own first, then each section group's, level by level.
    pub sections: Vec<SectionFile>,
}

/// One section file (`.one`) of a notebook in a drive.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SectionFile {
    /// Section-group folder names from the notebook folder down, then the section's name (file name without `.one`).
    pub path: Vec<String>,
    /// The drive holding it.
    pub drive_id: String,
    /// Its item id.
    pub item_id: String,
    /// Its size in bytes, as listed.
    pub size: u64,
    /// Its `cTag` (changes with its content), when the drive gave one.
    pub ctag: Option<String>,
    /// When it last changed (ISO 8601), when given.
    pub modified: Option<String>,
    /// Its hash as the drive gives it, which its download is checked against.
    pub hash: Option<FileHash>,
}

/// A file's hash as the drive gives it (`file.hashes`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FileHash {
    /// `quickXorHash`: base64 of the 20 bytes ([`quickxor::QuickXor`]).
    QuickXor(String),
    /// `sha256Hash`: hex of the 32 bytes, in either case.
    Sha256(String),
}

impl FileHash {
    /// The hash a drive item's facet gives, QuickXorHash first (every drive gives it).
    pub fn of(item: &model::DriveItem) -> Option<FileHash> {
        let h = item.file.as_ref()?.hashes.as_ref()?;
        let given = |s: &Option<String>| s.clone().filter(|s| !s.trim().is_empty());
        given(&h.quick_xor_hash)
            .map(FileHash::QuickXor)
            .or_else(|| given(&h.sha256_hash).map(FileHash::Sha256))
    }

    /// How the state database keeps it: `{name}:{value}`.
    pub fn stored(&self) -> String {
        match self {
            FileHash::QuickXor(v) | FileHash::Sha256(v) => format!("{}:{v}", self.name()),
        }
    }

    /// The hash [`Self::stored`] wrote; `None` for another form.
    pub fn from_stored(s: &str) -> Option<FileHash> {
        match s.split_once(':')? {
            ("quickXorHash", v) => Some(FileHash::QuickXor(v.to_owned())),
            ("sha256Hash", v) => Some(FileHash::Sha256(v.to_owned())),
            _ => None,
        }
    }

    /// The name the drive gives it.
    pub fn name(&self) -> &'static str {
        match self {
            FileHash::QuickXor(_) => "quickXorHash",
            FileHash::Sha256(_) => "sha256Hash",
        }
    }

    /// Whether the file at `path` has this hash (read in chunks, off the runtime).
    pub async fn matches(&self, path: &std::path::Path) -> std::io::Result<bool> {
        let (want, path) = (self.clone(), path.to_owned());
        tokio::task::spawn_blocking(move || {
            use sha2::Digest as _;
            use std::io::Read as _;
            let mut f = std::fs::File::open(&path)?;
            let mut buf = vec![0u8; 64 * 1024];
            let mut qx = quickxor::QuickXor::new();
            let mut sha = sha2::Sha256::new();
            loop {
                let n = f.read(&mut buf)?;
                if n == 0 {
                    break;
                }
                match want {
                    FileHash::QuickXor(_) => qx.update(&buf[..n]),
                    FileHash::Sha256(_) => sha.update(&buf[..n]),
                }
            }
            Ok(match &want {
                FileHash::QuickXor(b64) => qx.base64() == b64.trim(),
                FileHash::Sha256(hex) => {
                    let got: String = sha.finalize().iter().map(|b| format!("{b:02x}")).collect();
                    got.eq_ignore_ascii_case(hex.trim())
                }
            })
        })
        .await
        .map_err(std::io::Error::other)?
    }
}

/// Drive requests and bytes of a client so far.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct DriveCounters {
    /// Requests to Graph's drive API (shares, listings, `/content`).
    pub requests: u64,
    /// Requests to the pre-authenticated download URLs.
    pub downloads: u64,
    /// 429s and 503s received.
    pub throttled: u64,
    /// Retries after transient failures and cut transfers.
    pub retries: u64,
    /// Downloads that went on from a partial file (`206` to a `Range` request).
    pub resumed: u64,
    /// Section bytes written.
    pub bytes: u64,
}

#[derive(Debug, Default)]
struct Stats {
    requests: AtomicU64,
    downloads: AtomicU64,
    throttled: AtomicU64,
    retries: AtomicU64,
    resumed: AtomicU64,
    bytes: AtomicU64,
}

/// Reads notebooks' section files from their drives. One client per run; clones share the pace
/// and the counters.
#[derive(Clone)]
pub struct DriveClient {
    http: reqwest::Client,
    base: Arc<str>,
    tokens: TokenSource,
    clock: Clock,
    jitter: Jitter,
    pacer: Arc<Pacer>,
    reach: Reachability,
    pause: Duration,
    stats: Arc<Stats>,
    drives: Arc<locate::Drives>,
    /// Whether the sign-in's scopes hold one the shares API takes.
    shares: bool,
}

/// What an answer's status says: every status named, none retried or refused by a default.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Said {
    /// 2xx.
    Ok,
    /// 301, 302, 303, 307, 308: go to `Location`.
    Redirect,
    /// 429, 503, and SharePoint's 509 (bandwidth): the account waits, nothing failed.
    Throttled,
    /// 401 before the token was refreshed.
    Unauthorized,
    /// 408, 500, 502, 504: ask again after a pause.
    Transient,
    /// 404, 410.
    NotFound,
    /// 403, or 401 after a refresh.
    Forbidden,
    /// Any other answer: the same request gets the same.
    Refused,
}

fn said(status: u16, refreshed: bool) -> Said {
    match status {
        200..=299 => Said::Ok,
        301 | 302 | 303 | 307 | 308 => Said::Redirect,
        429 | 503 | 509 => Said::Throttled,
        401 if !refreshed => Said::Unauthorized,
        401 | 403 => Said::Forbidden,
        404 | 410 => Said::NotFound,
        408 | 500 | 502 | 504 => Said::Transient,
        0..=199
        | 300
        | 304..=306
        | 309..=399
        | 400
        | 402
        | 405..=407
        | 409
        | 411..=428
        | 430..=499
        | 501
        | 505..=508
        | 510..=u16::MAX => Said::Refused,
    }
}

/// One request's attempts: the token, the retries spent, and what was met so far.
struct Attempt<'a> {
    who: &'a Caller,
    what: &'a str,
    retries: Retries,
    token: AccessToken,
    refreshed: bool,
    throttled: u32,
    unreachable: u32,
}

impl DriveClient {
    /// The client of the configured Graph, pacing on `db` as `settings` say, with the run's token
    /// source (and, through it, the run's record of unreachable services).
    pub fn open(
        db: Arc<Db>,
        settings: &Settings,
        tokens: TokenSource,
        clock: Clock,
        jitter: Jitter,
    ) -> Self {
        let pacer = Pacer::new(db, settings.drive, clock.clone(), jitter.clone());
        Self {
            http: http_client(READ_IDLE_TIMEOUT),
            base: settings.graph_url.trim_end_matches('/').into(),
            reach: tokens.reachability().clone(),
            tokens,
            clock,
            jitter,
            pacer: Arc::new(pacer),
            pause: settings.retries.pause,
            stats: Arc::new(Stats::default()),
            drives: Arc::default(),
            shares: locate::may_use_shares(&settings.scopes),
        }
    }

    /// Shortens the idle timeout (tests of hung answers).
    pub fn with_timeout(mut self, d: Duration) -> Self {
        self.http = http_client(d);
        self
    }

    /// Drive requests and bytes this client made (for the plan, stats, and tests).
    pub fn counters(&self) -> DriveCounters {
        let s = &self.stats;
        DriveCounters {
            requests: s.requests.load(Ordering::Relaxed),
            downloads: s.downloads.load(Ordering::Relaxed),
            throttled: s.throttled.load(Ordering::Relaxed),
            retries: s.retries.load(Ordering::Relaxed),
            resumed: s.resumed.load(Ordering::Relaxed),
            bytes: s.bytes.load(Ordering::Relaxed),
        }
    }

    /// The section files of the notebook whose `links.oneNoteWebUrl.href` is `web_url`, found
    /// through the shares API alone (which needs `Files.ReadWrite`; [`DriveClient::locate`] finds
    /// a notebook with `Files.Read`).
    pub async fn notebook_files(
        &self,
        who: &Caller,
        web_url: &str,
    ) -> Result<NotebookFiles, DriveError> {
        let what = format!("notebook {}", web_url.split('?').next().unwrap_or(web_url));
        let found = self.by_share(who, &what, web_url).await?;
        self.walk(who, &what, found).await
    }

    /// The notebook's item through the shares API.
    async fn by_share(
        &self,
        who: &Caller,
        what: &str,
        web_url: &str,
    ) -> Result<locate::Found, DriveError> {
        let url = format!(
            "{}/shares/{}/driveItem?$select={SELECT}",
            self.base,
            share::share_token(web_url)
        );
        let item: model::DriveItem = self.get_json(who, &url, what).await?;
        self.notebook_item(who, what, item, None)
    }

    /// The item, when it is a notebook, and its drive: `drive`, the id as the caller resolved it,
    /// else as the item's `parentReference` names it, a personal id's dropped leading zero put
    /// back (onedrive-api-docs#1890: the service refuses the 15-digit form in a request).
    fn notebook_item(
        &self,
        who: &Caller,
        what: &str,
        item: model::DriveItem,
        drive: Option<String>,
    ) -> Result<locate::Found, DriveError> {
        if !item.is_notebook() {
            let kind = match (&item.package, &item.folder, &item.file) {
                (Some(_), _, _) => "a package of another type",
                (None, Some(_), _) => "a folder without the notebook package",
                (None, None, Some(_)) => "a file",
                (None, None, None) => "an item without a kind",
            };
            return Err(DriveError::NotANotebook {
                account: who.account.clone(),
                what: what.to_owned(),
                problem: format!("the URL leads to {kind}"),
            });
        }
        let named = item.parent.and_then(|p| p.drive_id);
        let named = named.map(|d| locate::canonical_drive_id(&d).into_owned());
        let Some(drive_id) = drive.or(named) else {
            return Err(DriveError::BadAnswer {
                account: who.account.clone(),
                what: what.to_owned(),
                problem: "the notebook item names no drive (parentReference.driveId)".into(),
            });
        };
        Ok(locate::Found {
            drive_id,
            item_id: item.id,
        })
    }

    /// The notebook's section files: its folder walked level by level.
    async fn walk(
        &self,
        who: &Caller,
        what: &str,
        found: locate::Found,
    ) -> Result<NotebookFiles, DriveError> {
        let locate::Found { drive_id, item_id } = found;
        let mut walk = Walk::new(&drive_id, &item_id, BOUNDS);
        let over = |bound: String| DriveError::OverBound {
            account: who.account.clone(),
            what: what.to_owned(),
            bound,
        };
        while let Some(folder) = walk.next_folder() {
            let mut next = Some(format!(
                "{}/drives/{}/items/{}/children?$top={PAGE_SIZE}&$select={SELECT}",
                self.base,
                enc(&drive_id),
                enc(&folder.id)
            ));
            while let Some(url) = next.take() {
                walk.listing().map_err(over)?;
                let page: model::Children = self.get_json(who, &url, what).await?;
                next = page.next_link;
                walk.take(&folder, page.value).map_err(over)?;
            }
        }
        Ok(NotebookFiles {
            drive_id,
            folder_id: item_id,
            sections: walk.sections(),
        })
    }

    /// A JSON answer of Graph's drive API, retried, paced and refreshed as the module says.
    async fn get_json<T: DeserializeOwned>(
        &self,
        who: &Caller,
        url: &str,
        what: &str,
    ) -> Result<T, DriveError> {
        let mut a = self.attempt(who, what, url).await?;
        loop {
            let Some((resp, slot)) = self.graph_get(&mut a, url).await? else {
                continue;
            };
            let status = resp.status().as_u16();
            if said(status, a.refreshed) != Said::Ok {
                // A redirect where JSON was asked for: nothing to follow it to.
                drop(slot);
                return Err(DriveError::BadAnswer {
                    account: who.account.clone(),
                    what: what.to_owned(),
                    problem: format!("HTTP {status} where a JSON answer was expected"),
                });
            }
            let body = match read_bounded(resp, MAX_JSON_BYTES).await {
                Ok(b) => b,
                Err(Read::TooLarge) => {
                    return Err(DriveError::BadAnswer {
                        account: who.account.clone(),
                        what: what.to_owned(),
                        problem: format!("answer over {MAX_JSON_BYTES} bytes"),
                    })
                }
                Err(Read::Cut(detail)) => {
                    drop(slot);
                    self.again(&mut a, &detail).await?;
                    continue;
                }
            };
            drop(slot);
            return serde_json::from_slice(&body).map_err(|e| DriveError::BadAnswer {
                account: who.account.clone(),
                what: what.to_owned(),
                problem: e.to_string(),
            });
        }
    }

    /// The first state of a request to `url` on Graph: the token, refusing a foreign host.
    async fn attempt<'a>(
        &self,
        who: &'a Caller,
        what: &'a str,
        url: &str,
    ) -> Result<Attempt<'a>, DriveError> {
        if !may_carry_token(&self.base, url) {
            return Err(DriveError::ForeignHost {
                account: who.account.clone(),
                what: what.to_owned(),
                url: url.split('?').next().unwrap_or(url).to_owned(),
            });
        }
        Ok(Attempt {
            who,
            what,
            retries: who.retries(),
            token: self.tokens.access_token(&who.account).await?,
            refreshed: false,
            throttled: 0,
            unreachable: 0,
        })
    }

    /// One GET of `url` on Graph with the bearer token, never following a redirect: the answer
    /// (2xx or a redirect) with its slot, `None` when it is to be sent again (after a throttle's
    /// wait, a refresh, a pause), or the error that ends the request.
    async fn graph_get(
        &self,
        a: &mut Attempt<'_>,
        url: &str,
    ) -> Result<Option<(reqwest::Response, Slot)>, DriveError> {
        let slot = self.pacer.admit(a.who).await?;
        let req = self.http.get(url).bearer_auth(a.token.secret());
        let sent = crate::trace::send(req, "graph").await;
        self.stats.requests.fetch_add(1, Ordering::Relaxed);
        let resp = match sent {
            Ok(r) => r,
            Err(e) => {
                drop(slot);
                self.not_sent(a, &e).await?;
                return Ok(None);
            }
        };
        self.reach.answered(Service::Graph);
        let status = resp.status().as_u16();
        match said(status, a.refreshed) {
            Said::Ok | Said::Redirect => {
                self.pacer.answered(a.who, &slot).await?;
                Ok(Some((resp, slot)))
            }
            Said::Throttled => {
                self.throttle(a, slot, status, resp.headers()).await?;
                Ok(None)
            }
            Said::Unauthorized => {
                drop(slot);
                a.refreshed = true;
                a.token = self
                    .tokens
                    .refresh_after_401(&a.who.account, &a.token)
                    .await?;
                Ok(None)
            }
            Said::Transient => {
                drop(slot);
                self.again(a, &format!("HTTP {status}")).await?;
                Ok(None)
            }
            Said::NotFound | Said::Forbidden | Said::Refused => {
                self.pacer.answered(a.who, &slot).await?;
                drop(slot);
                Err(self.refused(a, status, resp).await)
            }
        }
    }

    /// The error of a refusal (`NotFound`, `Forbidden` or `Refused`, as [`said`] names it).
    async fn refused(&self, a: &Attempt<'_>, status: u16, resp: reqwest::Response) -> DriveError {
        let (account, what) = (a.who.account.clone(), a.what.to_owned());
        match said(status, a.refreshed) {
            Said::NotFound => DriveError::NotFound {
                account,
                what,
                status,
            },
            Said::Forbidden => DriveError::Forbidden {
                account,
                what,
                status,
                message: refusal_message(resp).await,
            },
            Said::Ok
            | Said::Redirect
            | Said::Throttled
            | Said::Unauthorized
            | Said::Transient
            | Said::Refused => DriveError::Refused {
                account,
                what,
                status,
                message: refusal_message(resp).await,
            },
        }
    }

    /// A request that got no answer: an unreachable service is waited for (the run's network
    /// wait), anything else spends a retry.
    async fn not_sent(&self, a: &mut Attempt<'_>, e: &reqwest::Error) -> Result<(), DriveError> {
        if e.is_connect() {
            a.unreachable += 1;
            tracing::debug!(account = %a.who.account, what = a.what, "drive unreachable: {}", transport_detail(e));
            self.reach
                .wait(Service::Graph, a.unreachable, &self.jitter)
                .await?;
            return Ok(());
        }
        self.reach.answered(Service::Graph);
        self.again(a, &transport_detail(e)).await
    }

    /// A 429 or 503: the account's breaker opens (the pacer waits it out before the next
    /// request); no retry is spent, but a request throttled again and again gives up.
    async fn throttle(
        &self,
        a: &mut Attempt<'_>,
        slot: Slot,
        status: u16,
        headers: &HeaderMap,
    ) -> Result<(), DriveError> {
        self.stats.throttled.fetch_add(1, Ordering::Relaxed);
        a.throttled += 1;
        self.pacer
            .throttled(a.who, slot, status, retry_after(headers))
            .await?;
        if a.throttled >= MAX_THROTTLED {
            return Err(self.gave_up(a, &format!("HTTP {status}, {MAX_THROTTLED} times")));
        }
        Ok(())
    }

    /// Spends a retry after a transient failure and waits the pause before it, or gives up when
    /// the item's count is spent.
    async fn again(&self, a: &mut Attempt<'_>, last: &str) -> Result<(), DriveError> {
        let Some(n) = a.retries.spend() else {
            return Err(self.gave_up(a, last));
        };
        self.stats.retries.fetch_add(1, Ordering::Relaxed);
        let wait = pause(self.pause, n, &self.jitter);
        tracing::debug!(account = %a.who.account, what = a.what, retry = n + 1, wait_ms = wait.as_millis() as u64, "retrying after {last}");
        self.clock.sleep(wait).await;
        Ok(())
    }

    fn gave_up(&self, a: &Attempt<'_>, last: &str) -> DriveError {
        DriveError::TransferFailed {
            account: a.who.account.clone(),
            what: a.what.to_owned(),
            attempts: a.retries.here() + a.throttled + 1,
            retries: a.retries.here(),
            last: last.to_owned(),
        }
    }
}

fn http_client(idle: Duration) -> reqwest::Client {
    // No total timeout: a section may take as long as it takes while bytes arrive. No redirects:
    // the download URL is followed by hand, without the bearer token.
    crate::transport::client_builder()
        .read_timeout(idle)
        .connect_timeout(Duration::from_secs(20))
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("reqwest client builds")
}

/// An id as one path segment: what would end or leave the segment is percent-encoded (ids are
/// the service's, but never trusted), and the rest, `!` of drive ids included, kept as Graph
/// writes it.
fn enc(s: &str) -> String {
    // The URL library drops these segments rather than encode them.
    if s == "." || s == ".." {
        return s.replace('.', "%2E");
    }
    let mut u = url::Url::parse("http://segment/").expect("a fixed URL parses");
    u.path_segments_mut()
        .expect("an http URL has a path")
        .push(s);
    u.path()[1..].to_owned()
}

/// Why a body was not read whole.
enum Read {
    /// Over the bound.
    TooLarge,
    /// The connection was cut or timed out.
    Cut(String),
}

/// Reads a body of at most `max` bytes.
async fn read_bounded(resp: reqwest::Response, max: usize) -> Result<Vec<u8>, Read> {
    if resp.content_length().is_some_and(|n| n as usize > max) {
        return Err(Read::TooLarge);
    }
    let mut buf = Vec::new();
    let mut stream = resp.bytes_stream();
    while let Some(chunk) = stream.next().await {
        let chunk =
            chunk.map_err(|e| Read::Cut(format!("answer cut off ({})", transport_detail(&e))))?;
        if buf.len() + chunk.len() > max {
            return Err(Read::TooLarge);
        }
        buf.extend_from_slice(&chunk);
    }
    Ok(buf)
}

/// Graph's error code and message from an error answer's body (read up to a bound).
async fn refusal_message(resp: reqwest::Response) -> String {
    match read_bounded(resp, MAX_ERROR_BYTES).await {
        Ok(b) => error_message(&b),
        Err(_) => "no error details".into(),
    }
}

fn retry_after(h: &HeaderMap) -> Option<Duration> {
    h.get(reqwest::header::RETRY_AFTER)
        .and_then(|v| v.to_str().ok())
        .and_then(parse_retry_after)
}
