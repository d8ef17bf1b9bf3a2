//! One file through Notion's File Upload API exactly once.
//!
//! Every step (create, the send of each part, complete) may be applied although its answer was a 5xx
//! or never came, and a send repeated after an applied one is refused (`400`: only `pending` uploads
//! accept content). So after any unclear answer, and after a 400 on a send or a completion, the
//! upload is read back (`GET /v1/file_uploads/{id}`) and the work goes on from what it says:
//! `uploaded` is done, `pending` with `number_of_parts.sent` parts resumes with the next part,
//! `expired` or `failed` starts a new upload. An unclear answer to the create itself leaves at worst
//! an orphan upload, which expires unattached: only the id we were answered with is ever attached.
//!
//! Every step sent again, every new upload after an unusable one and every retry the client makes
//! spends from the item's one retry count ([`crate::failure::Retries`]), so an upload that keeps
//! failing ends after the item's budget with [`NotionError::GaveUp`], never 8 sends per step times
//! 3 uploads times the queue's attempts.

use bytes::Bytes;
use serde_json::Value;

use super::client::{gave_up, NotionClient, NotionError};
use crate::failure::{Classify, Retries, Scope};

/// How an upload ended without an upload to attach.
#[derive(Debug, thiserror::Error)]
pub enum UploadError {
    /// Notion refused the file's content as it was sent: a `413`, or a `400 validation_error`
    /// while the upload is still `pending` (no step applied before explains it). That is how
    /// Notion refuses a file over the workspace's per-file limit (reference/importing-external-
    /// files, "exceeds your workspace's per-file size limit"); its message is localised, so the
    /// step, not the words, tells it apart.
    #[error(transparent)]
    ContentRefused(NotionError),
    /// Any other failure, as the client gave it.
    #[error(transparent)]
    Notion(#[from] NotionError),
}

impl UploadError {
    /// The Notion error, whichever way the upload ended.
    pub fn into_notion(self) -> NotionError {
        match self {
            UploadError::ContentRefused(e) | UploadError::Notion(e) => e,
        }
    }
}

impl Classify for UploadError {
    fn class(&self) -> crate::failure::Class {
        match self {
            UploadError::ContentRefused(e) | UploadError::Notion(e) => e.class(),
        }
    }
}

/// Whether a refusal answered to a send is the content's own ([`UploadError::ContentRefused`]).
fn refuses_content(e: &NotionError) -> bool {
    matches!(e, NotionError::Rejected { status: 413, .. })
        || matches!(e, NotionError::Rejected { status: 400, code, .. } if code == "validation_error")
}

/// Largest file sent in one part; bigger ones go multi-part.
pub const SINGLE_PART_MAX: usize = 20 * 1000 * 1000;
/// Size of each part of a multi-part upload (Notion wants 5-20 MiB except the last).
pub const PART_SIZE: usize = 10 * 1024 * 1024;

/// What Notion says of an upload.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Status {
    /// Awaiting content or completion.
    Pending,
    /// Everything arrived: it may be attached.
    Uploaded,
    /// `expired` or `failed`: it can no longer be used.
    Gone(String),
}

/// How sending an upload's content ended.
enum Done {
    /// Everything arrived.
    Uploaded,
    /// The upload expired or failed first: a new one is needed.
    Gone(String),
}

impl Done {
    /// The end a status stands for, `None` while pending.
    fn of(s: Status) -> Option<Done> {
        match s {
            Status::Pending => None,
            Status::Uploaded => Some(Done::Uploaded),
            Status::Gone(g) => Some(Done::Gone(g)),
        }
    }
}

/// An upload as read from a FileUpload object.
#[derive(Clone, Debug)]
struct Seen {
    status: Status,
    /// `number_of_parts.sent` (0 for single-part uploads).
    sent: u32,
    /// `number_of_parts.total` (multi-part uploads).
    total: Option<u32>,
}

fn seen(v: &Value) -> Seen {
    let status = match v["status"].as_str() {
        Some("uploaded") => Status::Uploaded,
        Some("pending") => Status::Pending,
        Some(other) => Status::Gone(other.to_owned()),
        None => Status::Gone("unknown".to_owned()),
    };
    let sent = v["number_of_parts"]["sent"].as_u64().unwrap_or(0) as u32;
    let total = v["number_of_parts"]["total"].as_u64().map(|t| t as u32);
    Seen {
        status,
        sent,
        total,
    }
}

/// Whether Notion's answer leaves the step's outcome to be looked up: an unclear answer, or a 400
/// that a step applied earlier explains (the upload is no longer `pending`).
fn look_after(e: &NotionError) -> bool {
    match e {
        NotionError::Ambiguous { .. } => true,
        // Not a 400 that every request would meet (a missing version header): that one is a bug
        // no earlier step explains.
        NotionError::Rejected { status, .. } => *status == 400 && e.class().scope != Scope::Run,
        NotionError::Refused { .. }
        | NotionError::GaveUp { .. }
        | NotionError::Blocked { .. }
        | NotionError::Unreachable(_)
        | NotionError::Pace(_)
        | NotionError::BadAnswer { .. } => false,
    }
}

/// Uploads `bytes` as `name` (`mime`) and returns the id of an upload whose status is `uploaded`.
/// A refusal of the file's content comes back as [`UploadError::ContentRefused`], one of its name
/// or type as [`NotionError::Rejected`]; a failure still classed
/// as retryable means the item's retry budget is spent ([`NotionClient::for_item`]; a client
/// without one counts this upload's retries under the same policy).
pub async fn upload_once(
    c: &NotionClient,
    name: &str,
    mime: &str,
    bytes: Bytes,
) -> Result<String, UploadError> {
    let c = &c.with_item_retries();
    let retries = c.retries();
    let parts = (bytes.len() > SINGLE_PART_MAX).then(|| bytes.len().div_ceil(PART_SIZE) as u32);
    loop {
        // Repeated blindly by the client: an upload created twice leaves one orphan that expires.
        let up = c.create_upload(name, mime, parts).await?;
        crate::crash::point("upload.created");
        let id = up["id"]
            .as_str()
            .map(str::to_owned)
            .ok_or_else(|| NotionError::BadAnswer {
                what: format!("creating an upload for {name}"),
                problem: "no id".into(),
            })?;
        let status = match parts {
            None => send_single(c, &id, name, mime, &bytes).await?,
            Some(total) => send_parts(c, &id, name, mime, &bytes, total, &retries).await?,
        };
        match status {
            Done::Uploaded => return Ok(id),
            Done::Gone(s) => {
                let Some(n) = retries.spend() else {
                    return Err(UploadError::Notion(gave_up(
                        &retries,
                        &format!("uploading {name}"),
                        &format!("upload {id} was `{s}` before its content arrived"),
                    )));
                };
                tracing::info!(upload = %id, status = %s, "upload unusable; starting a new one");
                c.pause_before_retry(n).await;
            }
        }
    }
}

async fn send_single(
    c: &NotionClient,
    id: &str,
    name: &str,
    mime: &str,
    bytes: &Bytes,
) -> Result<Done, UploadError> {
    let s = send_step(c, id, name, mime, bytes.clone(), None).await?;
    crate::crash::point("upload.part_sent");
    // The send answered (or the read-back said) pending: the content did not arrive whole.
    Done::of(s.status).ok_or_else(|| {
        UploadError::Notion(NotionError::BadAnswer {
            what: format!("sending upload {id}"),
            problem: "the upload is still pending after its single part was sent".into(),
        })
    })
}

/// Sends parts from the first one Notion does not hold, then completes; a completion that finds
/// parts missing goes back to sending them.
async fn send_parts(
    c: &NotionClient,
    id: &str,
    name: &str,
    mime: &str,
    bytes: &Bytes,
    total: u32,
    retries: &Retries,
) -> Result<Done, UploadError> {
    let mut next = 1u32;
    loop {
        while next <= total {
            let start = (next as usize - 1) * PART_SIZE;
            // Slicing `Bytes` shares the one buffer: a big file is held once, not per part.
            let part = bytes.slice(start..(start + PART_SIZE).min(bytes.len()));
            let s = send_step(c, id, name, mime, part, Some(next)).await?;
            crate::crash::point("upload.part_sent");
            let sent = s.sent;
            match Done::of(s.status) {
                None => next = (next + 1).max(sent + 1),
                Some(done) => return Ok(done),
            }
        }
        let s = complete_step(c, id).await?;
        let sent = s.sent;
        match Done::of(s.status) {
            None => next = sent + 1,
            Some(done) => return Ok(done),
        }
        // Parts Notion said it held went missing: sending them again is a retry like any other.
        if retries.spend().is_none() {
            return Err(UploadError::Notion(gave_up(
                retries,
                &format!("completing upload {id}"),
                "Notion kept reporting parts missing",
            )));
        }
    }
}

/// One send whose effect is known: returns the upload as the answer or a read-back shows it, with
/// part `part` (or the single part) held, or the upload done or gone.
async fn send_step(
    c: &NotionClient,
    id: &str,
    name: &str,
    mime: &str,
    bytes: Bytes,
    part: Option<u32>,
) -> Result<Seen, UploadError> {
    loop {
        let e = match c.send_upload(id, name, mime, bytes.clone(), part).await {
            Ok(v) => return Ok(seen(&v)),
            Err(e) if look_after(&e) => e,
            Err(e) if refuses_content(&e) => return Err(UploadError::ContentRefused(e)),
            Err(e) => return Err(e.into()),
        };
        let s = seen(&c.get_upload(id).await?);
        match (&s.status, part) {
            (Status::Uploaded | Status::Gone(_), _) => return Ok(s),
            (Status::Pending, Some(n)) if s.sent >= n => return Ok(s),
            // Still pending and our content is not there: a 400 was about the content itself.
            (Status::Pending, _) if refuses_content(&e) => {
                return Err(UploadError::ContentRefused(e))
            }
            (Status::Pending, _) if matches!(e, NotionError::Rejected { .. }) => {
                return Err(e.into())
            }
            // Not applied: sent again while the item's budget lasts.
            (Status::Pending, _) => again(c, &e).await?,
        }
    }
}

/// Before a step found not applied is sent again: a retry of the item's budget and its pause, or
/// the upload gives up with what was spent.
async fn again(c: &NotionClient, e: &NotionError) -> Result<(), NotionError> {
    let retries = c.retries();
    match retries.retry_after(e) {
        Some((_, n)) => {
            c.pause_before_retry(n).await;
            Ok(())
        }
        None => Err(match e {
            NotionError::Ambiguous { what, detail, .. } => gave_up(&retries, what, detail),
            other => gave_up(&retries, "an upload step", &other.to_string()),
        }),
    }
}

/// One completion whose effect is known: the upload done or gone, or pending with the count of
/// parts Notion holds (so the missing ones are sent again).
async fn complete_step(c: &NotionClient, id: &str) -> Result<Seen, NotionError> {
    loop {
        let e = match c.complete_upload(id).await {
            Ok(v) => {
                let s = seen(&v);
                if s.status == Status::Pending {
                    return Err(NotionError::BadAnswer {
                        what: format!("completing upload {id}"),
                        problem: "the completed upload is still pending".into(),
                    });
                }
                return Ok(s);
            }
            Err(e) if look_after(&e) => e,
            Err(e) => return Err(e),
        };
        let s = seen(&c.get_upload(id).await?);
        match &s.status {
            Status::Uploaded | Status::Gone(_) => return Ok(s),
            Status::Pending if s.total.is_some_and(|t| s.sent < t) => return Ok(s),
            Status::Pending if matches!(e, NotionError::Rejected { .. }) => return Err(e),
            Status::Pending => again(c, &e).await?,
        }
    }
}
