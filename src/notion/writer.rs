//! Writing one OneNote item into Notion exactly once.
//!
//! Notion has no idempotency keys and a write can be applied although its answer was a 504 or never
//! arrived. So every write whose outcome is unknown is followed by a look at what Notion holds (the
//! parent's child pages, the block's children) before anything is written again, and a resumed page is
//! reconciled block by block against what is already there.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use bytes::Bytes;
use futures::future::BoxFuture;
use serde::Serialize;
use serde_json::{json, Value};

use super::client::{NotionClient, NotionError, Position};
use super::degrade::{self, Degraded};
use super::split::{self, block_type, Prepared};
use super::upload;
use crate::failure::{Class, Classify, Next, Scope};
use crate::graph::GraphError;

pub use super::upload::{PART_SIZE, SINGLE_PART_MAX};

/// A file the page refers to, to be fetched from Graph and uploaded to Notion.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Resource {
    /// Where to fetch it (a Graph resource URL).
    pub url: String,
    /// The file name to show in Notion.
    pub file_name: String,
    /// MIME type when OneNote gave one.
    pub mime: Option<String>,
    /// Another rendition to fetch when `url` cannot be carried over (an image's smaller `src`
    /// beside its full resolution); using it is reported ([`WriteStats::smaller`]).
    pub fallback: Option<String>,
}

/// Fetches a resource's bytes (through the Graph limiter); the error text names why it failed.
///
/// An error this one file's own for good (gone, forbidden, too big: [`Scope::Item`] and
/// [`Next::Never`]) leaves a placeholder; any other (a deadline, sign-in, retries exhausted) fails
/// the write so the page is tried again later instead of keeping a placeholder for good.
pub type Fetch =
    Arc<dyn Fn(Resource) -> BoxFuture<'static, Result<Bytes, GraphError>> + Send + Sync>;

/// Errors writing an item; each names the Notion object involved.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    /// Notion refused or kept failing.
    #[error(transparent)]
    Notion(#[from] NotionError),
    /// What Notion holds does not match what we wrote (someone edited the page meanwhile).
    #[error("{0}")]
    Mismatch(String),
    /// A file could not be fetched for a reason that is not the file's own (see [`Fetch`]).
    #[error(transparent)]
    Fetch(GraphError),
}

impl Classify for WriteError {
    fn class(&self) -> Class {
        match self {
            WriteError::Notion(e) => e.class(),
            // Someone edited the page meanwhile: never written over, this page fails.
            WriteError::Mismatch(_) => Class::item_fails(),
            WriteError::Fetch(e) => e.class(),
        }
    }

    fn retries(&self) -> u32 {
        match self {
            WriteError::Notion(e) => e.retries(),
            WriteError::Mismatch(_) => 0,
            WriteError::Fetch(e) => e.retries(),
        }
    }
}

/// What writing a page did.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct WriteStats {
    /// Blocks written (all levels).
    pub blocks: usize,
    /// Files uploaded.
    pub files: usize,
    /// Bytes uploaded.
    pub bytes: u64,
    /// Resources that could not be carried over (a visible placeholder stands in their place).
    pub placeholders: Vec<String>,
    /// Elements Notion refused, sent degraded ([`degrade`]).
    pub degraded: Vec<Degraded>,
    /// Files carried over from their fallback rendition (`name: why the first failed`).
    pub smaller: Vec<String>,
}

/// A page to create: where, its title, its body and the resources the body refers to.
#[derive(Clone, Copy)]
pub struct NewPage<'a> {
    /// The Notion parent page id.
    pub parent: &'a str,
    /// The title (`Untitled` when empty).
    pub title: &'a str,
    /// The converted body.
    pub blocks: &'a [Value],
    /// Resource-backed media in the body, by URL.
    pub resources: &'a HashMap<String, Resource>,
}

/// Writes pages and their bodies.
#[derive(Clone)]
pub struct Writer {
    client: NotionClient,
    fetch: Fetch,
    max_upload: u64,
}

impl Writer {
    /// A writer that uploads resources fetched with `fetch`, refusing files above `max_upload` bytes
    /// (the workspace limit from `/v1/users/me`).
    pub fn new(client: NotionClient, fetch: Fetch, max_upload: u64) -> Self {
        Self {
            client,
            fetch,
            max_upload,
        }
    }

    /// The underlying client.
    pub fn client(&self) -> &NotionClient {
        &self.client
    }

    /// Finds the page we created earlier under `parent` with `title` whose id we never learnt (the
    /// answer was lost): the last child page with that title that is not already one of ours.
    pub async fn find_lost_page(
        &self,
        parent: &str,
        title: &str,
        ours: &HashSet<String>,
    ) -> Result<Option<String>, WriteError> {
        let title = display_title(title);
        let kids = self.client.children(parent).await?;
        Ok(kids
            .iter()
            .filter(|b| b["type"] == "child_page")
            .filter(|b| b["child_page"]["title"].as_str() == Some(title.as_str()))
            .filter_map(|b| b["id"].as_str())
            .rfind(|id| !ours.contains(*id))
            .map(str::to_owned))
    }

    /// Creates a page (with the first request's worth of `blocks`) and writes the rest of the body.
    /// `recover` is true when an earlier attempt may have created it already: the parent is looked at
    /// first. Returns the page id and what was written.
    pub async fn create_page(
        &self,
        page: NewPage<'_>,
        ours: &HashSet<String>,
        recover: bool,
        on_created: &(dyn Fn(&str) + Send + Sync),
    ) -> Result<(String, WriteStats), WriteError> {
        let NewPage {
            parent,
            title,
            blocks,
            resources,
        } = page;
        let mut stats = WriteStats::default();
        if recover {
            if let Some(id) = self.find_lost_page(parent, title, ours).await? {
                on_created(&id);
                self.write_level(&id, blocks, resources, &mut stats).await?;
                return Ok((id, stats));
            }
        }
        // Only the first request's blocks are prepared now; the rest a request at a time.
        let mut first: Vec<Prepared> = split::next_request(blocks);
        let mut first_blocks: Vec<Value> = first
            .iter_mut()
            .map(|p| std::mem::take(&mut p.block))
            .collect();
        self.upload_media(&mut first_blocks, resources, &mut stats)
            .await?;
        let mut attempt = 0;
        let id = loop {
            attempt += 1;
            match self.client.create_page(parent, title, &first_blocks).await {
                Err(e) if self.degraded(&e, &mut first_blocks, &mut stats) => attempt -= 1,
                Ok(v) => {
                    break v["id"].as_str().map(str::to_owned).ok_or_else(|| {
                        WriteError::Mismatch(format!(
                            "Notion created a page under {parent} without an id"
                        ))
                    })?
                }
                Err(NotionError::Ambiguous { .. }) if attempt < 8 => {
                    if let Some(id) = self.find_lost_page(parent, title, ours).await? {
                        // It was applied: whatever of the body it holds is reconciled below.
                        on_created(&id);
                        self.write_level(&id, blocks, resources, &mut stats).await?;
                        return Ok((id, stats));
                    }
                    self.client.pause_before_retry(attempt).await;
                }
                Err(e) => return Err(spent(e, attempt).into()),
            }
        };
        on_created(&id);
        stats.blocks += first_blocks.iter().map(split::element_count).sum::<usize>();
        // The creation answers with the page, not its blocks: one listing gives the ids that the
        // deferred children of the first request's blocks are appended to.
        if first.iter().any(|p| !p.deferred.is_empty()) {
            let ids = self.body_ids(&id).await?;
            if ids.len() != first.len() {
                return Err(WriteError::Mismatch(format!(
                    "Notion page {id} holds {} blocks right after its creation with {}",
                    ids.len(),
                    first.len()
                )));
            }
            for (p, bid) in first.iter().zip(ids) {
                if !p.deferred.is_empty() {
                    self.append_blocks(&bid, &p.deferred, p.carried, resources, &mut stats)
                        .await?;
                }
            }
        }
        self.append_values(
            &id,
            &blocks[first.len()..],
            first.len(),
            resources,
            &mut stats,
            None,
        )
        .await?;
        Ok((id, stats))
    }

    /// Writes `blocks` as the whole body of an existing page, resuming after whatever is there.
    pub async fn resume_body(
        &self,
        page: &str,
        blocks: &[Value],
        resources: &HashMap<String, Resource>,
    ) -> Result<WriteStats, WriteError> {
        let mut stats = WriteStats::default();
        self.write_level(page, blocks, resources, &mut stats)
            .await?;
        Ok(stats)
    }

    /// Replaces a page's body: trashes every body block, then writes `blocks` (`migrate --update`).
    /// Safe to repeat after a kill: the next run trashes whatever the interrupted one wrote.
    pub async fn replace_body(
        &self,
        page: &str,
        blocks: &[Value],
        resources: &HashMap<String, Resource>,
    ) -> Result<WriteStats, WriteError> {
        let kids = self.client.children(page).await?;
        let mut subpages = false;
        for b in &kids {
            if b["type"] == "child_page" {
                subpages = true;
            } else if let Some(id) = b["id"].as_str() {
                self.client.delete_block(id).await?;
            }
        }
        let mut stats = WriteStats::default();
        // Subpages stay where they are; the new body goes before them, as it was.
        let top = subpages.then_some(Position::Start);
        self.append_values(page, blocks, 0, resources, &mut stats, top)
            .await?;
        Ok(stats)
    }

    /// The ids of `parent`'s children that are body blocks (child pages excluded: they are items of
    /// their own, created after the body).
    async fn body_ids(&self, parent: &str) -> Result<Vec<String>, WriteError> {
        Ok(self
            .client
            .children(parent)
            .await?
            .iter()
            .filter(|b| b["type"] != "child_page")
            .filter_map(|b| b["id"].as_str().map(str::to_owned))
            .collect())
    }

    /// Reconciles `parent`'s children with `expected` (what Notion holds is a prefix of it when an
    /// earlier write was cut short), completes the children of those that exist, then appends the
    /// rest.
    fn write_level<'a>(
        &'a self,
        parent: &'a str,
        expected: &'a [Value],
        resources: &'a HashMap<String, Resource>,
        stats: &'a mut WriteStats,
    ) -> BoxFuture<'a, Result<(), WriteError>> {
        Box::pin(async move {
            let have: Vec<Value> = self
                .client
                .children(parent)
                .await?
                .into_iter()
                .filter(|b| b["type"] != "child_page")
                .collect();
            if have.len() > expected.len() {
                return Err(WriteError::Mismatch(format!(
                    "Notion block {parent} holds {} blocks but the page has only {}; it was changed \
                     outside notebridge",
                    have.len(),
                    expected.len()
                )));
            }
            for (i, (got, want)) in have.iter().zip(expected).enumerate() {
                let (gt, wt) = (got["type"].as_str(), block_type(want));
                if !same_kind(gt, wt) {
                    return Err(WriteError::Mismatch(format!(
                        "Notion block {parent} child {i} is a {} where a {} was written; it was \
                         changed outside notebridge",
                        gt.unwrap_or("?"),
                        wt.unwrap_or("?")
                    )));
                }
                // A block sent with all its children got them in the same request: complete.
                let p = split::prepare(want);
                if p.deferred.is_empty() {
                    continue;
                }
                let id = got["id"].as_str().unwrap_or_default().to_owned();
                if got["has_children"] == Value::Bool(false) {
                    self.append_blocks(&id, split::children(want), 0, resources, stats)
                        .await?;
                } else {
                    self.write_level(&id, split::children(want), resources, stats)
                        .await?;
                }
            }
            self.append_values(
                parent,
                &expected[have.len()..],
                have.len(),
                resources,
                stats,
                None,
            )
            .await
        })
    }

    /// Appends `blocks` to `parent`, which already holds `before` body blocks.
    fn append_blocks<'a>(
        &'a self,
        parent: &'a str,
        blocks: &'a [Value],
        before: usize,
        resources: &'a HashMap<String, Resource>,
        stats: &'a mut WriteStats,
    ) -> BoxFuture<'a, Result<(), WriteError>> {
        Box::pin(async move {
            self.append_values(parent, blocks, before, resources, stats, None)
                .await
        })
    }

    /// Appends `body` in requests, each prepared only when it is sent (a long body is never held
    /// twice), then each request's deferred children to the returned ids. `at` places the first
    /// request (each next one goes right after the previous); `None` appends at the end.
    async fn append_values(
        &self,
        parent: &str,
        body: &[Value],
        mut count: usize,
        resources: &HashMap<String, Resource>,
        stats: &mut WriteStats,
        mut at: Option<Position>,
    ) -> Result<(), WriteError> {
        let mut next = 0;
        while next < body.len() {
            let mut part = split::next_request(&body[next..]);
            next += part.len();
            let mut blocks: Vec<Value> = part
                .iter_mut()
                .map(|p| std::mem::take(&mut p.block))
                .collect();
            self.upload_media(&mut blocks, resources, stats).await?;
            let position = at.clone().unwrap_or(Position::End);
            let ids = self
                .append_once(parent, &mut blocks, count, &position, stats)
                .await?;
            if at.is_some() {
                at = ids.last().cloned().map(Position::After).or(at);
            }
            if ids.len() != blocks.len() {
                return Err(WriteError::Mismatch(format!(
                    "Notion answered an append of {} blocks to {parent} with {} ids",
                    blocks.len(),
                    ids.len()
                )));
            }
            count += blocks.len();
            stats.blocks += blocks.iter().map(split::element_count).sum::<usize>();
            for (p, id) in part.iter().zip(ids) {
                if !p.deferred.is_empty() {
                    self.append_blocks(&id, &p.deferred, p.carried, resources, stats)
                        .await?;
                }
            }
        }
        Ok(())
    }

    /// One append that happens exactly once: after an unknown outcome, the parent's children tell
    /// whether it was applied. `before` is how many body blocks the parent held before it. Returns the
    /// new blocks' ids.
    async fn append_once(
        &self,
        parent: &str,
        blocks: &mut [Value],
        before: usize,
        position: &Position,
        stats: &mut WriteStats,
    ) -> Result<Vec<String>, WriteError> {
        let mut attempt = 0;
        loop {
            attempt += 1;
            match self.client.append_at(parent, blocks, position).await {
                // Refused, so not applied: the degraded request is sent again as a first attempt.
                Err(e) if self.degraded(&e, blocks, stats) => attempt -= 1,
                Ok(created) => {
                    return Ok(created
                        .iter()
                        .filter_map(|b| b["id"].as_str().map(str::to_owned))
                        .collect())
                }
                Err(NotionError::Ambiguous { .. }) if attempt < 8 => {
                    let now = self.body_ids(parent).await?;
                    if now.len() == before + blocks.len() {
                        // Ours follow the `before` body blocks already written, wherever placed.
                        return Ok(now[before..before + blocks.len()].to_vec());
                    }
                    if now.len() != before {
                        return Err(WriteError::Mismatch(format!(
                            "Notion block {parent} holds {} blocks, expected {before} or {}",
                            now.len(),
                            before + blocks.len()
                        )));
                    }
                    self.client.pause_before_retry(attempt).await;
                }
                Err(e) => return Err(spent(e, attempt).into()),
            }
        }
    }

    /// Whether Notion refused an element of `blocks` that could be degraded (and was: the request
    /// may be sent again). Each call degrades at least one element, so resending ends.
    fn degraded(&self, e: &NotionError, blocks: &mut [Value], stats: &mut WriteStats) -> bool {
        let NotionError::Rejected { message, .. } = e else {
            return false;
        };
        if e.class().next != Next::Degrade {
            return false;
        }
        match degrade::degrade(blocks, message) {
            Some(d) => {
                tracing::info!(
                    elements = d.len(),
                    "Notion refused elements; sending them degraded"
                );
                stats.degraded.extend(d);
                true
            }
            None => false,
        }
    }

    /// Uploads every resource-backed media block in `blocks` (any depth) and points the block at the
    /// upload; a resource that cannot be carried over becomes a visible placeholder paragraph. Notion
    /// failing (rather than refusing the file) fails the item: a transient outage must not leave a
    /// placeholder for good.
    fn upload_media<'a>(
        &'a self,
        blocks: &'a mut [Value],
        resources: &'a HashMap<String, Resource>,
        stats: &'a mut WriteStats,
    ) -> BoxFuture<'a, Result<(), WriteError>> {
        Box::pin(async move {
            for b in blocks.iter_mut() {
                let t = block_type(b).unwrap_or_default().to_owned();
                if MEDIA.contains(&t.as_str()) {
                    let url = b[&t]["external"]["url"].as_str().map(str::to_owned);
                    // An address Notion cannot fetch at all (`data:`, `file:`, ...) is never sent: a
                    // placeholder names it (refusals of web addresses are degraded when they come).
                    if let Some(u) = url.as_deref().filter(|u| !resources.contains_key(*u)) {
                        if !degrade::fetchable(u) {
                            if let Some(d) = degrade::replace_media(b) {
                                stats.degraded.push(d);
                            }
                            continue;
                        }
                    }
                    if let Some(res) = url.and_then(|u| resources.get(&u)) {
                        match self.upload_or_fallback(res, stats).await {
                            Ok((id, size)) => {
                                let payload =
                                    b[&t].as_object_mut().expect("media payload is an object");
                                payload.remove("external");
                                payload.insert("type".into(), json!("file_upload"));
                                payload.insert("file_upload".into(), json!({ "id": id }));
                                stats.files += 1;
                                stats.bytes += size;
                            }
                            Err(UploadFailure::CannotCarry(why)) => {
                                tracing::warn!(file = %res.file_name, "resource not carried over: {why}");
                                stats.placeholders.push(format!("{}: {why}", res.file_name));
                                *b = placeholder(&res.file_name, &why);
                            }
                            Err(UploadFailure::Notion(e)) => return Err(e.into()),
                            Err(UploadFailure::Fetch(e)) => return Err(WriteError::Fetch(e)),
                        }
                    }
                }
                let t = block_type(b).unwrap_or_default().to_owned();
                if let Some(kids) = b
                    .get_mut(&t)
                    .and_then(|p| p.get_mut("children"))
                    .and_then(Value::as_array_mut)
                {
                    self.upload_media(kids, resources, stats).await?;
                }
            }
            Ok(())
        })
    }

    /// Uploads a resource ([`Self::upload`]); when it cannot be carried over for a reason of its
    /// own (gone, forbidden, too big, a type Notion refuses) and it has a fallback rendition, that
    /// one is uploaded instead and recorded in `stats`. A failure that is not the file's (deadline,
    /// sign-in, outage, Notion failing) never reaches for the fallback: the page is tried again.
    async fn upload_or_fallback(
        &self,
        res: &Resource,
        stats: &mut WriteStats,
    ) -> Result<(String, u64), UploadFailure> {
        let why = match self.upload(res).await {
            Err(UploadFailure::CannotCarry(why)) => why,
            done => return done,
        };
        let Some(url) = res.fallback.clone() else {
            return Err(UploadFailure::CannotCarry(why));
        };
        let smaller = Resource {
            url,
            fallback: None,
            ..res.clone()
        };
        match self.upload(&smaller).await {
            Ok(done) => {
                tracing::info!(file = %res.file_name, "full resolution not carried over ({why}); \
                    the smaller rendition was");
                stats.smaller.push(format!("{}: {why}", res.file_name));
                Ok(done)
            }
            Err(UploadFailure::CannotCarry(also)) => Err(UploadFailure::CannotCarry(format!(
                "{why} (its smaller rendition too: {also})"
            ))),
            Err(other) => Err(other),
        }
    }

    /// Downloads one resource and uploads it to Notion exactly once ([`upload::upload_once`]);
    /// returns the upload id and size. Each write of a page makes its own uploads: one sent but never
    /// attached (a kill, a lost answer to an append) just expires.
    async fn upload(&self, res: &Resource) -> Result<(String, u64), UploadFailure> {
        let Some(name) = upload_name(res) else {
            return Err(UploadFailure::CannotCarry(
                "Notion does not accept this file type".into(),
            ));
        };
        let bytes = (self.fetch)(res.clone()).await.map_err(|e| match e {
            // The download stops at the workspace's limit (the fetch is bounded by it).
            GraphError::TooLarge { size, max, .. } if max == self.max_upload => {
                UploadFailure::CannotCarry(over_limit(size, max))
            }
            e => UploadFailure::of_download(e),
        })?;
        let size = bytes.len() as u64;
        // The name's extension, the content type and the bytes must agree for Notion: an image
        // named `.png` that is a TIFF goes up as `.tif`, and the type follows the extension.
        let name = fit_name(&agree_with_bytes(&name, &bytes), MAX_NAME_BYTES);
        if !notion_accepts(&name) {
            return Err(UploadFailure::CannotCarry(format!(
                "it is {}, a file type Notion does not accept",
                describe_kind(&name)
            )));
        }
        if size > self.max_upload {
            return Err(UploadFailure::CannotCarry(over_limit(
                size,
                self.max_upload,
            )));
        }
        let mime = match mime_for(&name) {
            "application/octet-stream" => res
                .mime
                .clone()
                .unwrap_or_else(|| "application/octet-stream".into()),
            m => m.to_owned(),
        };
        let id = upload::upload_once(&self.client, &name, &mime, bytes).await?;
        Ok((id, size))
    }
}

/// An unclear write the writer already looked after and retried `attempts` times goes up as "gave
/// up after that many attempts", so the queue counts them against the item's one retry budget.
fn spent(e: NotionError, attempts: u32) -> NotionError {
    match e {
        NotionError::Ambiguous { what, detail } if attempts > 1 => NotionError::GaveUp {
            what,
            attempts,
            last: detail,
        },
        other => other,
    }
}

/// Media block types whose source may be a OneNote resource.
const MEDIA: &[&str] = &["image", "file", "pdf", "audio", "video"];

/// Why a resource was not uploaded.
enum UploadFailure {
    /// The file cannot be carried over (download failed, type or size refused): a placeholder.
    CannotCarry(String),
    /// Notion failed: the item fails and is retried later.
    Notion(NotionError),
    /// The download failed for a reason that is not the file's: the item fails.
    Fetch(GraphError),
}

impl UploadFailure {
    /// A download's failure: the file's own for good degrades it to a placeholder; any other fails
    /// the write.
    fn of_download(e: GraphError) -> Self {
        if the_files_own(e.class()) {
            UploadFailure::CannotCarry(format!("download failed: {}", e.reason()))
        } else {
            UploadFailure::Fetch(e)
        }
    }
}

/// Whether a failure concerns only the file it was for, for good: it becomes a placeholder.
fn the_files_own(class: Class) -> bool {
    matches!(
        (class.scope, class.next),
        (
            Scope::Attempt | Scope::Resource | Scope::Item,
            Next::Never | Next::Degrade
        )
    )
}

impl From<NotionError> for UploadFailure {
    fn from(e: NotionError) -> Self {
        // Notion refusing this file (type, size) is permanent for it; a refusal of every write, an
        // outage or a lost answer is not the file's.
        if the_files_own(e.class()) {
            UploadFailure::CannotCarry(e.to_string())
        } else {
            UploadFailure::Notion(e)
        }
    }
}

/// Whether a block Notion holds stands for the block we wrote: the same type, or a placeholder
/// paragraph where a media block could not be carried over.
fn same_kind(got: Option<&str>, want: Option<&str>) -> bool {
    got == want || (got == Some("paragraph") && want.is_some_and(|w| MEDIA.contains(&w)))
}

/// The name to upload a resource under: its own when Notion takes the extension, else (images
/// OneNote names without one) its name plus the extension of its MIME type; `None` when Notion
/// would refuse the file.
pub fn upload_name(res: &Resource) -> Option<String> {
    if notion_accepts(&res.file_name) {
        return Some(res.file_name.clone());
    }
    let ext = extension_for(res.mime.as_deref()?)?;
    let base = if res.file_name.trim().is_empty() {
        "file"
    } else {
        res.file_name.trim_end_matches('.')
    };
    (!res.file_name.contains('.')).then(|| format!("{base}.{ext}"))
}

/// Why a file over the workspace's upload limit is a placeholder (its name is in the placeholder).
fn over_limit(size: u64, max: u64) -> String {
    format!(
        "{size} bytes is over the workspace's upload limit of {max} bytes (a paid Notion plan \
         raises it)"
    )
}

/// Most bytes in an upload's file name (Notion's limit, the extension included).
pub const MAX_NAME_BYTES: usize = 900;

/// The image type the bytes are, by their signature.
fn sniff(bytes: &[u8]) -> Option<&'static str> {
    let b = bytes;
    Some(if b.starts_with(b"\x89PNG\r\n\x1a\n") {
        "png"
    } else if b.starts_with(&[0xff, 0xd8, 0xff]) {
        "jpg"
    } else if b.starts_with(b"GIF87a") || b.starts_with(b"GIF89a") {
        "gif"
    } else if b.starts_with(b"II*\0") || b.starts_with(b"MM\0*") {
        "tif"
    } else if b.starts_with(b"BM") && b.len() > 14 {
        "bmp"
    } else if b.len() >= 12 && &b[..4] == b"RIFF" && &b[8..12] == b"WEBP" {
        "webp"
    } else {
        return None;
    })
}

fn same_image_type(a: &str, b: &str) -> bool {
    fn norm(e: &str) -> &str {
        match e {
            "jpeg" => "jpg",
            "tiff" => "tif",
            other => other,
        }
    }
    norm(a) == norm(b)
}

/// `name` with the extension its bytes call for, when it names a raster image the bytes are not.
pub fn agree_with_bytes(name: &str, bytes: &[u8]) -> String {
    let Some((stem, ext)) = name.rsplit_once('.') else {
        return name.to_owned();
    };
    let ext_l = ext.to_ascii_lowercase();
    const RASTER: &[&str] = &["png", "jpg", "jpeg", "gif", "tif", "tiff", "bmp", "webp"];
    if !RASTER.contains(&ext_l.as_str()) {
        return name.to_owned();
    }
    match sniff(bytes) {
        Some(real) if !same_image_type(real, &ext_l) => format!("{stem}.{real}"),
        _ => name.to_owned(),
    }
}

/// `name` shortened to at most `max` bytes, its extension kept, cut at a character boundary.
pub fn fit_name(name: &str, max: usize) -> String {
    if name.len() <= max {
        return name.to_owned();
    }
    let (stem, ext) = match name.rsplit_once('.') {
        Some((s, e)) if e.len() + 2 < max => (s, format!(".{e}")),
        _ => (name, String::new()),
    };
    let mut cut = max - ext.len();
    while !stem.is_char_boundary(cut.min(stem.len())) {
        cut -= 1;
    }
    format!("{}{ext}", &stem[..cut.min(stem.len())])
}

fn describe_kind(name: &str) -> String {
    match name.rsplit_once('.') {
        Some((_, "bmp")) => "a BMP image".into(),
        Some((_, e)) => format!("a .{e} file"),
        None => "a file without an extension".into(),
    }
}

/// The usual extension of a MIME type Notion accepts.
fn extension_for(mime: &str) -> Option<&'static str> {
    let m = mime
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    Some(match m.as_str() {
        "image/png" => "png",
        "image/jpeg" | "image/jpg" | "image/pjpeg" => "jpg",
        "image/gif" => "gif",
        "image/webp" => "webp",
        "image/svg+xml" => "svg",
        "image/tiff" => "tiff",
        "image/heic" => "heic",
        "image/x-icon" | "image/vnd.microsoft.icon" => "ico",
        "application/pdf" => "pdf",
        "text/plain" => "txt",
        "audio/mpeg" => "mp3",
        "audio/wav" | "audio/x-wav" => "wav",
        "video/mp4" => "mp4",
        _ => return None,
    })
}

/// The title Notion will show.
pub fn display_title(title: &str) -> String {
    if title.trim().is_empty() {
        "Untitled".into()
    } else {
        title.to_owned()
    }
}

/// A visible stand-in for a file that could not be carried over.
pub fn placeholder(name: &str, why: &str) -> Value {
    json!({"type": "paragraph", "paragraph": {"rich_text": [{"type": "text", "text": {"content":
        format!("⚠ {name} could not be carried over from OneNote: {why}")},
        "annotations": {"italic": true, "color": "red"}}]}})
}

/// Whether Notion's File Upload API takes this file name's extension.
pub fn notion_accepts(name: &str) -> bool {
    const OK: &[&str] = &[
        "aac", "adts", "mid", "midi", "mp3", "mpga", "m4a", "m4b", "mp4", "oga", "ogg", "wav",
        "wma", "pdf", "txt", "json", "doc", "dot", "docx", "dotx", "xls", "xlt", "xla", "xlsx",
        "xltx", "ppt", "pot", "pps", "ppa", "pptx", "potx", "gif", "heic", "ico", "jpeg", "jpg",
        "png", "svg", "tif", "tiff", "webp", "amv", "asf", "wmv", "avi", "f4v", "flv", "gifv",
        "m4v", "mkv", "webm", "mov", "qt", "mpeg",
    ];
    name.rsplit_once('.')
        .map(|(_, ext)| OK.contains(&ext.to_ascii_lowercase().as_str()))
        .unwrap_or(false)
}

/// A MIME type from a file name's extension, for files OneNote gave none.
pub fn mime_for(name: &str) -> &'static str {
    let ext = name
        .rsplit_once('.')
        .map(|(_, e)| e.to_ascii_lowercase())
        .unwrap_or_default();
    match ext.as_str() {
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "webp" => "image/webp",
        "svg" => "image/svg+xml",
        "tif" | "tiff" => "image/tiff",
        "pdf" => "application/pdf",
        "txt" => "text/plain",
        "json" => "application/json",
        "doc" => "application/msword",
        "docx" => "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        "xls" => "application/vnd.ms-excel",
        "xlsx" => "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
        "ppt" => "application/vnd.ms-powerpoint",
        "pptx" => "application/vnd.openxmlformats-officedocument.presentationml.presentation",
        "mp3" => "audio/mpeg",
        "wav" => "audio/wav",
        "mp4" => "video/mp4",
        "heic" => "image/heic",
        "ico" => "image/vnd.microsoft.icon",
        "m4a" => "audio/mp4",
        "ogg" | "oga" => "audio/ogg",
        "webm" => "video/webm",
        "mov" | "qt" => "video/quicktime",
        _ => "application/octet-stream",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unclear_writes_the_writer_retried_carry_their_count() {
        let unclear = || NotionError::Ambiguous {
            what: "appending".into(),
            detail: "504".into(),
        };
        assert_eq!(spent(unclear(), 8).retries(), 7);
        assert_eq!(spent(unclear(), 8).class().code(), "item/retry");
        // Not retried here: nothing to count, the queue's budget is whole.
        assert!(matches!(spent(unclear(), 1), NotionError::Ambiguous { .. }));
        assert_eq!(spent(unclear(), 1).retries(), 0);
    }

    #[test]
    fn only_a_files_own_failure_for_good_leaves_a_placeholder() {
        let graph = |e: GraphError| match UploadFailure::of_download(e) {
            UploadFailure::CannotCarry(why) => Some(why),
            UploadFailure::Notion(_) | UploadFailure::Fetch(_) => None,
        };
        let a = || "a".to_owned();
        let gone = GraphError::Item {
            account: a(),
            item: a(),
            status: 404,
            message: "gone".into(),
        };
        assert!(graph(gone).is_some_and(|w| w.contains("404")));
        let foreign = GraphError::ForeignHost {
            account: a(),
            item: a(),
            url: "https://x".into(),
        };
        assert!(graph(foreign).is_some());
        let gave_up = GraphError::GaveUp {
            account: a(),
            item: a(),
            attempts: 6,
            last: "503".into(),
        };
        assert!(
            graph(gave_up).is_none(),
            "retries exhausted are not the file's"
        );
        let signed_out = GraphError::Auth(crate::auth::AuthError::NoAccount { account: a() });
        assert!(graph(signed_out).is_none());
        let notion =
            |e: NotionError| matches!(UploadFailure::from(e), UploadFailure::CannotCarry(_));
        let rejected = |status, code: &str| NotionError::Rejected {
            what: "creating an upload".into(),
            status,
            code: code.into(),
            message: "m".into(),
        };
        assert!(notion(rejected(400, "validation_error")));
        assert!(notion(rejected(413, "")));
        assert!(
            !notion(rejected(400, "missing_version")),
            "every request's, not the file's"
        );
        assert!(!notion(NotionError::Ambiguous {
            what: "sending".into(),
            detail: "504".into()
        }));
        assert!(!notion(NotionError::GaveUp {
            what: "w".into(),
            attempts: 8,
            last: "503".into()
        }));
    }

    #[test]
    fn accepted_extensions_follow_notion() {
        assert!(notion_accepts("Report.PDF"));
        assert!(notion_accepts("a.xlsx"));
        assert!(!notion_accepts("notes.one"));
        assert!(!notion_accepts("archive.zip"));
        assert!(!notion_accepts("noext"));
        assert_eq!(mime_for("x.PNG"), "image/png");
    }

    #[test]
    fn names_without_an_extension_take_their_mime_type() {
        let r = |name: &str, mime: Option<&str>| Resource {
            url: "u".into(),
            file_name: name.into(),
            mime: mime.map(str::to_owned),
            fallback: None,
        };
        assert_eq!(upload_name(&r("a.png", None)).as_deref(), Some("a.png"));
        assert_eq!(
            upload_name(&r("image", Some("image/png"))).as_deref(),
            Some("image.png")
        );
        assert_eq!(
            upload_name(&r("", Some("image/jpeg"))).as_deref(),
            Some("file.jpg")
        );
        // a name with an extension Notion refuses stays refused, whatever the MIME type says
        assert_eq!(upload_name(&r("x.zip", Some("image/png"))), None);
        assert_eq!(upload_name(&r("notes", None)), None);
    }

    #[test]
    fn names_agree_with_their_bytes_and_fit_900_bytes() {
        let tiff = b"II*\0rest of a tiff";
        let png = b"\x89PNG\r\n\x1a\nrest";
        let bmp = [b"BM".as_slice(), &[0u8; 20]].concat();
        assert_eq!(agree_with_bytes("scan.png", tiff), "scan.tif");
        assert_eq!(agree_with_bytes("scan.png", png), "scan.png");
        assert_eq!(agree_with_bytes("old.png", &bmp), "old.bmp");
        assert!(!notion_accepts("old.bmp"));
        assert_eq!(
            agree_with_bytes("photo.jpeg", &[0xff, 0xd8, 0xff, 0]),
            "photo.jpeg"
        );
        assert_eq!(
            agree_with_bytes("report.pdf", png),
            "report.pdf",
            "only images"
        );
        assert_eq!(mime_for("scan.tif"), "image/tiff");
        let long = format!("x{}.pdf", "é".repeat(600));
        let fit = fit_name(&long, MAX_NAME_BYTES);
        assert!(
            fit.len() <= MAX_NAME_BYTES && fit.ends_with(".pdf"),
            "{}",
            fit.len()
        );
        assert_eq!(
            fit.len(),
            900 - 1,
            "a two-byte character is not cut in half"
        );
        assert_eq!(fit_name("a.png", 900), "a.png");
    }

    #[test]
    fn empty_titles_become_untitled() {
        assert_eq!(display_title("  "), "Untitled");
        assert_eq!(display_title("Plan"), "Plan");
    }
}
