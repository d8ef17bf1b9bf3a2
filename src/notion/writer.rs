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

use super::client::{NotionClient, NotionError};
use super::split::{self, block_type, Prepared};

/// Largest file sent in one part; bigger ones go multi-part.
pub const SINGLE_PART_MAX: usize = 20 * 1000 * 1000;
/// Size of each part of a multi-part upload (Notion wants 5-20 MiB except the last).
pub const PART_SIZE: usize = 10 * 1024 * 1024;

/// A file the page refers to, to be fetched from Graph and uploaded to Notion.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Resource {
    /// Where to fetch it (a Graph resource URL).
    pub url: String,
    /// The file name to show in Notion.
    pub file_name: String,
    /// MIME type when OneNote gave one.
    pub mime: Option<String>,
}

/// Fetches a resource's bytes (through the Graph limiter); the error text names why it failed.
pub type Fetch = Arc<dyn Fn(Resource) -> BoxFuture<'static, Result<Bytes, String>> + Send + Sync>;

/// Errors writing an item; each names the Notion object involved.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    /// Notion refused or kept failing.
    #[error(transparent)]
    Notion(#[from] NotionError),
    /// What Notion holds does not match what we wrote (someone edited the page meanwhile).
    #[error("{0}")]
    Mismatch(String),
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
}

/// How much of a level already exists in Notion.
enum Existing {
    /// Nothing (a block we just created).
    Empty,
    /// Not known: list the parent's children to find out (a resumed write).
    Unknown,
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
                self.write_level(&id, blocks, Existing::Unknown, resources, &mut stats)
                    .await?;
                return Ok((id, stats));
            }
        }
        let prepared: Vec<Prepared> = blocks.iter().map(split::prepare).collect();
        let chunks = split::chunk(&prepared);
        let first = chunks.first().cloned().unwrap_or(0..0);
        let mut first_blocks: Vec<Value> = prepared[first.clone()]
            .iter()
            .map(|p| p.block.clone())
            .collect();
        self.upload_media(&mut first_blocks, resources, &mut stats)
            .await;
        let mut attempt = 0;
        let id = loop {
            attempt += 1;
            match self.client.create_page(parent, title, &first_blocks).await {
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
                        self.write_level(&id, blocks, Existing::Unknown, resources, &mut stats)
                            .await?;
                        return Ok((id, stats));
                    }
                    self.client.pause_before_retry(attempt).await;
                }
                Err(e) => return Err(e.into()),
            }
        };
        on_created(&id);
        stats.blocks += first_blocks.iter().map(split::element_count).sum::<usize>();
        // Deferred children of the first chunk need the ids Notion gave those blocks: one listing.
        if prepared[first.clone()]
            .iter()
            .any(|p| !p.deferred.is_empty())
        {
            let ids = self.body_ids(&id).await?;
            for (p, bid) in prepared[first.clone()].iter().zip(ids) {
                if !p.deferred.is_empty() {
                    self.write_level(&bid, &p.deferred, Existing::Empty, resources, &mut stats)
                        .await?;
                }
            }
        }
        self.append_prepared(&id, &prepared[first.end..], 0, resources, &mut stats)
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
        self.write_level(page, blocks, Existing::Unknown, resources, &mut stats)
            .await?;
        Ok(stats)
    }

    /// Replaces a page's body: trashes every body block, then writes `blocks` (`migrate --update`).
    pub async fn replace_body(
        &self,
        page: &str,
        blocks: &[Value],
        resources: &HashMap<String, Resource>,
    ) -> Result<WriteStats, WriteError> {
        for id in self.body_ids(page).await? {
            self.client.delete_block(&id).await?;
        }
        let mut stats = WriteStats::default();
        self.write_level(page, blocks, Existing::Empty, resources, &mut stats)
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

    fn write_level<'a>(
        &'a self,
        parent: &'a str,
        expected: &'a [Value],
        existing: Existing,
        resources: &'a HashMap<String, Resource>,
        stats: &'a mut WriteStats,
    ) -> BoxFuture<'a, Result<(), WriteError>> {
        Box::pin(async move {
            let have: Vec<Value> = match existing {
                Existing::Empty => Vec::new(),
                Existing::Unknown => self
                    .client
                    .children(parent)
                    .await?
                    .into_iter()
                    .filter(|b| b["type"] != "child_page")
                    .collect(),
            };
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
                if gt != wt {
                    return Err(WriteError::Mismatch(format!(
                        "Notion block {parent} child {i} is a {} where a {} was written; it was \
                         changed outside notebridge",
                        gt.unwrap_or("?"),
                        wt.unwrap_or("?")
                    )));
                }
                // Children of an existing block may be incomplete too: reconcile them the same way.
                if !split::children(want).is_empty() && block_type(want) != Some("table") {
                    let id = got["id"].as_str().unwrap_or_default().to_owned();
                    self.write_level(
                        &id,
                        split::children(want),
                        Existing::Unknown,
                        resources,
                        stats,
                    )
                    .await?;
                }
            }
            let prepared: Vec<Prepared> =
                expected[have.len()..].iter().map(split::prepare).collect();
            self.append_prepared(parent, &prepared, have.len(), resources, stats)
                .await
        })
    }

    /// Appends prepared blocks in requests, then their deferred children to the returned ids.
    async fn append_prepared(
        &self,
        parent: &str,
        prepared: &[Prepared],
        mut count: usize,
        resources: &HashMap<String, Resource>,
        stats: &mut WriteStats,
    ) -> Result<(), WriteError> {
        for range in split::chunk(prepared) {
            let part = &prepared[range];
            let mut blocks: Vec<Value> = part.iter().map(|p| p.block.clone()).collect();
            self.upload_media(&mut blocks, resources, stats).await;
            let ids = self.append_once(parent, &blocks, count).await?;
            count += blocks.len();
            stats.blocks += blocks.iter().map(split::element_count).sum::<usize>();
            for (p, id) in part.iter().zip(ids) {
                if !p.deferred.is_empty() {
                    self.write_level(&id, &p.deferred, Existing::Empty, resources, stats)
                        .await?;
                }
            }
        }
        Ok(())
    }

    /// One append that happens exactly once: after an unknown outcome, the parent's children tell
    /// whether it was applied. Returns the new blocks' ids.
    async fn append_once(
        &self,
        parent: &str,
        blocks: &[Value],
        before: usize,
    ) -> Result<Vec<String>, WriteError> {
        let mut attempt = 0;
        loop {
            attempt += 1;
            match self.client.append(parent, blocks).await {
                Ok(created) => {
                    return Ok(created
                        .iter()
                        .filter_map(|b| b["id"].as_str().map(str::to_owned))
                        .collect())
                }
                Err(NotionError::Ambiguous { .. }) if attempt < 8 => {
                    let now = self.body_ids(parent).await?;
                    if now.len() == before + blocks.len() {
                        return Ok(now[before..].to_vec());
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
                Err(e) => return Err(e.into()),
            }
        }
    }

    /// Uploads every resource-backed media block in `blocks` (any depth) and points the block at the
    /// upload; a resource that cannot be carried over becomes a visible placeholder paragraph.
    async fn upload_media(
        &self,
        blocks: &mut [Value],
        resources: &HashMap<String, Resource>,
        stats: &mut WriteStats,
    ) {
        for b in blocks.iter_mut() {
            let t = block_type(b).unwrap_or_default().to_owned();
            if matches!(t.as_str(), "image" | "file" | "pdf" | "audio" | "video") {
                let url = b[&t]["external"]["url"].as_str().map(str::to_owned);
                if let Some(res) = url.and_then(|u| resources.get(&u)) {
                    match self.upload(res).await {
                        Ok((id, size)) => {
                            let payload =
                                b[&t].as_object_mut().expect("media payload is an object");
                            payload.remove("external");
                            payload.insert("type".into(), json!("file_upload"));
                            payload.insert("file_upload".into(), json!({ "id": id }));
                            stats.files += 1;
                            stats.bytes += size;
                        }
                        Err(why) => {
                            tracing::warn!(file = %res.file_name, "resource not carried over: {why}");
                            stats.placeholders.push(format!("{}: {why}", res.file_name));
                            *b = placeholder(&res.file_name, &why);
                        }
                    }
                }
            }
            let t = block_type(b).unwrap_or_default().to_owned();
            if let Some(kids) = b
                .get_mut(&t)
                .and_then(|p| p.get_mut("children"))
                .and_then(Value::as_array_mut)
            {
                Box::pin(self.upload_media(kids, resources, stats)).await;
            }
        }
    }

    /// Downloads one resource and uploads it to Notion; returns the upload id and size.
    async fn upload(&self, res: &Resource) -> Result<(String, u64), String> {
        if !notion_accepts(&res.file_name) {
            return Err("Notion does not accept this file type".into());
        }
        let bytes = (self.fetch)(res.clone()).await?;
        let size = bytes.len() as u64;
        if size > self.max_upload {
            return Err(format!(
                "{size} bytes is over the workspace's upload limit of {} bytes",
                self.max_upload
            ));
        }
        let mime = res
            .mime
            .clone()
            .unwrap_or_else(|| mime_for(&res.file_name).to_owned());
        let err = |e: NotionError| e.to_string();
        if bytes.len() <= SINGLE_PART_MAX {
            let up = self
                .client
                .create_upload(&res.file_name, &mime, None)
                .await
                .map_err(err)?;
            let id = up["id"].as_str().ok_or("upload without id")?.to_owned();
            self.client
                .send_upload(&id, &res.file_name, &mime, bytes, None)
                .await
                .map_err(err)?;
            Ok((id, size))
        } else {
            let parts = bytes.len().div_ceil(PART_SIZE) as u32;
            let up = self
                .client
                .create_upload(&res.file_name, &mime, Some(parts))
                .await
                .map_err(err)?;
            let id = up["id"].as_str().ok_or("upload without id")?.to_owned();
            for n in 0..parts as usize {
                // Slicing `Bytes` shares the one buffer: a big file is held once, not per part.
                let part = bytes.slice(n * PART_SIZE..((n + 1) * PART_SIZE).min(bytes.len()));
                self.client
                    .send_upload(&id, &res.file_name, &mime, part, Some(n as u32 + 1))
                    .await
                    .map_err(err)?;
            }
            self.client.complete_upload(&id).await.map_err(err)?;
            Ok((id, size))
        }
    }
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
        _ => "application/octet-stream",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn empty_titles_become_untitled() {
        assert_eq!(display_title("  "), "Untitled");
        assert_eq!(display_title("Plan"), "Plan");
    }
}
