//! The File Upload API's state: create, send (single or multi-part), complete, expiry, attachment.
//! Only the length and a hash of what arrived are kept (multi-part bytes until completion).

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use bytes::Bytes;
use serde_json::{json, Value};

use super::error::ApiError;
use super::store::model::iso;
use super::validate::UploadState;

/// Largest single-part upload and largest part (20 binary megabytes).
pub const MAX_PART: u64 = 20 * 1024 * 1024;
/// Smallest part of a multi-part upload except the last (5 binary megabytes).
pub const MIN_PART: u64 = 5 * 1024 * 1024;
/// Most bytes in a file name.
pub const MAX_FILENAME_BYTES: usize = 900;

/// Extensions Notion accepts for uploads.
pub const EXTENSIONS: &[&str] = &[
    "aac", "adts", "mid", "midi", "mp3", "mpga", "m4a", "m4b", "mp4", "oga", "ogg", "wav", "wma",
    "pdf", "txt", "json", "doc", "dot", "docx", "dotx", "xls", "xlt", "xla", "xlsx", "xltx", "ppt",
    "pot", "pps", "ppa", "pptx", "potx", "gif", "heic", "ico", "jpeg", "jpg", "png", "svg", "tif",
    "tiff", "webp", "amv", "asf", "wmv", "avi", "f4v", "flv", "gifv", "m4v", "mkv", "webm", "mov",
    "qt", "mpeg",
];

/// FNV-1a 64 of `bytes`, hex: the hash the server records for each upload.
pub fn content_hash(bytes: &[u8]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("{h:016x}")
}

/// Single or multi-part.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// One `send`.
    SinglePart,
    /// `number_of_parts` sends, then `complete`.
    MultiPart,
}

/// What the server knows about one upload.
#[derive(Clone, Debug)]
pub struct Upload {
    /// UUID.
    pub id: String,
    /// Mode.
    pub mode: Mode,
    /// File name (from create, or from the sent part).
    pub filename: Option<String>,
    /// MIME type declared at creation or on the part.
    pub content_type: Option<String>,
    /// True once all content arrived (and, for multi-part, completed).
    pub uploaded: bool,
    /// True once a block or page refers to it.
    pub attached: bool,
    /// Creation, Unix ms.
    pub created_ms: i64,
    /// Expiry, Unix ms (meaningless once attached).
    pub expiry_ms: i64,
    /// Parts expected (multi-part).
    pub number_of_parts: Option<u32>,
    /// Parts received and not yet assembled, by number.
    parts: BTreeMap<u32, Bytes>,
    /// Total length once uploaded.
    pub content_length: Option<u64>,
    /// [`content_hash`] of the whole content once uploaded.
    pub hash: Option<String>,
}

impl Upload {
    /// Status as the API reports it at `now`.
    pub fn status(&self, now: i64) -> &'static str {
        if !self.attached && now >= self.expiry_ms {
            "expired"
        } else if self.uploaded {
            "uploaded"
        } else {
            "pending"
        }
    }
}

/// All uploads of the integration.
#[derive(Debug)]
pub struct Uploads {
    map: HashMap<String, Upload>,
    expiry: Duration,
    max_size: u64,
}

/// The content types that agree with a file name's extension (`None`: an extension not checked).
fn types_for(name: &str) -> Option<&'static [&'static str]> {
    let ext = name.rsplit_once('.')?.1.to_ascii_lowercase();
    Some(match ext.as_str() {
        "png" => &["image/png"],
        "jpg" | "jpeg" => &["image/jpeg"],
        "gif" => &["image/gif"],
        "webp" => &["image/webp"],
        "svg" => &["image/svg+xml"],
        "tif" | "tiff" => &["image/tiff"],
        "heic" => &["image/heic"],
        "ico" => &["image/x-icon", "image/vnd.microsoft.icon"],
        "pdf" => &["application/pdf"],
        "txt" => &["text/plain"],
        "json" => &["application/json"],
        "mp3" => &["audio/mpeg"],
        "wav" => &["audio/wav", "audio/x-wav", "audio/wave"],
        "mp4" => &["video/mp4", "audio/mp4"],
        _ => return None,
    })
}

/// Notion's rule: a declared `content_type` must match the file name's extension.
fn check_type(name: Option<&str>, content_type: Option<&str>) -> Result<(), ApiError> {
    let (Some(name), Some(ct)) = (name, content_type) else {
        return Ok(());
    };
    let ct = ct
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    match types_for(name) {
        Some(ok) if !ok.contains(&ct.as_str()) => Err(ApiError::validation(format!(
            "The content type `{ct}` does not match the extension of the file name `{name}`."
        ))),
        _ => Ok(()),
    }
}

fn extension_ok(name: &str) -> bool {
    name.rsplit_once('.')
        .is_some_and(|(_, ext)| EXTENSIONS.contains(&ext.to_ascii_lowercase().as_str()))
}

impl Uploads {
    /// Uploads that expire `expiry` after creation, capped at `max_size` bytes per file.
    pub fn new(expiry: Duration, max_size: u64) -> Self {
        Self {
            map: HashMap::new(),
            expiry,
            max_size,
        }
    }

    /// The workspace's per-file limit, `workspace_limits.max_file_upload_size_in_bytes`.
    pub fn max_size(&self) -> u64 {
        self.max_size
    }

    /// Changes the per-file limit (a workspace changing plan).
    pub fn set_max_size(&mut self, bytes: u64) {
        self.max_size = bytes;
    }

    /// An upload by id.
    pub fn get(&self, id: &str) -> Option<&Upload> {
        self.map.get(id)
    }

    /// Whether `id` may be attached at `now`.
    pub fn state(&self, id: &str, now: i64) -> UploadState {
        let id = uuid::Uuid::parse_str(id)
            .map(|u| u.to_string())
            .unwrap_or_default();
        match self.map.get(&id) {
            None => UploadState::Unknown,
            Some(u) => match u.status(now) {
                "expired" => UploadState::Expired,
                "uploaded" => UploadState::Uploaded,
                _ => UploadState::Pending,
            },
        }
    }

    /// Marks `id` attached (its expiry no longer applies).
    pub fn attach(&mut self, id: &str) {
        let id = uuid::Uuid::parse_str(id)
            .map(|u| u.to_string())
            .unwrap_or_default();
        if let Some(u) = self.map.get_mut(&id) {
            u.attached = true;
        }
    }

    /// `POST /v1/file_uploads`.
    pub fn create(&mut self, body: &Value, now: i64) -> Result<&Upload, ApiError> {
        let obj = body.as_object().ok_or_else(|| {
            ApiError::validation("body failed validation: body should be an object.")
        })?;
        for k in obj.keys() {
            if !["mode", "filename", "content_type", "number_of_parts"].contains(&k.as_str()) {
                return Err(ApiError::validation(format!(
                    "body failed validation: body.{k} should be not present."
                )));
            }
        }
        let mode = match obj.get("mode").map(|m| m.as_str()) {
            None | Some(Some("single_part")) => Mode::SinglePart,
            Some(Some("multi_part")) => Mode::MultiPart,
            // external_url imports need a public URL the test server cannot fetch.
            Some(other) => {
                return Err(ApiError::validation(format!(
                    "body failed validation: body.mode should be `\"single_part\"` or `\"multi_part\"`, instead was `{}`.",
                    other.unwrap_or("non-string")
                )))
            }
        };
        let filename = match obj.get("filename") {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s.clone()),
            Some(_) => {
                return Err(ApiError::validation(
                    "body failed validation: body.filename should be a string.",
                ))
            }
        };
        if let Some(f) = &filename {
            if f.len() > MAX_FILENAME_BYTES {
                return Err(ApiError::validation(format!(
                    "body failed validation: body.filename.length should be ≤ `{MAX_FILENAME_BYTES}`, instead was `{}`.",
                    f.len()
                )));
            }
            if !extension_ok(f) {
                return Err(ApiError::validation(format!(
                    "The file extension of `{f}` is not supported."
                )));
            }
        }
        let content_type = obj
            .get("content_type")
            .and_then(Value::as_str)
            .map(str::to_owned);
        check_type(filename.as_deref(), content_type.as_deref())?;
        let number_of_parts = match (mode, obj.get("number_of_parts")) {
            (Mode::SinglePart, None) => None,
            (Mode::SinglePart, Some(_)) => {
                return Err(ApiError::validation(
                    "body failed validation: body.number_of_parts should be not present when mode is `single_part`.",
                ))
            }
            (Mode::MultiPart, n) => {
                if filename.is_none() {
                    return Err(ApiError::validation(
                        "body failed validation: body.filename should be defined when mode is `multi_part`.",
                    ));
                }
                match n.and_then(Value::as_u64) {
                    Some(n @ 1..=1000) => Some(n as u32),
                    _ => {
                        return Err(ApiError::validation(
                            "body failed validation: body.number_of_parts should be an integer between 1 and 1000 when mode is `multi_part`.",
                        ))
                    }
                }
            }
        };
        let id = uuid::Uuid::new_v4().to_string();
        let u = Upload {
            id: id.clone(),
            mode,
            filename,
            content_type,
            uploaded: false,
            attached: false,
            created_ms: now,
            expiry_ms: now + self.expiry.as_millis() as i64,
            number_of_parts,
            parts: BTreeMap::new(),
            content_length: None,
            hash: None,
        };
        Ok(self.map.entry(id).or_insert(u))
    }

    fn pending_mut(&mut self, id: &str, now: i64) -> Result<&mut Upload, ApiError> {
        let u = self
            .map
            .get_mut(id)
            .ok_or_else(|| ApiError::not_found("file upload", id))?;
        match u.status(now) {
            "pending" => Ok(u),
            s => Err(ApiError::validation(format!(
                "File upload `{id}` is in status `{s}`; only `pending` uploads accept content."
            ))),
        }
    }

    /// `POST /v1/file_uploads/{id}/send`: one part (or the whole file).
    pub fn send(
        &mut self,
        id: &str,
        part_number: Option<&str>,
        part_filename: Option<String>,
        part_type: Option<String>,
        data: Bytes,
        now: i64,
    ) -> Result<&Upload, ApiError> {
        let max_size = self.max_size;
        let u = self.pending_mut(id, now)?;
        let len = data.len() as u64;
        if u.filename.is_none() {
            u.filename = part_filename;
        }
        match &u.filename {
            Some(f) if extension_ok(f) => {}
            Some(f) => {
                return Err(ApiError::validation(format!(
                    "The file extension of `{f}` is not supported."
                )))
            }
            None => {
                return Err(ApiError::validation(
                    "The file needs a name with a supported extension.",
                ))
            }
        }
        check_type(u.filename.as_deref(), part_type.as_deref())?;
        if u.content_type.is_none() {
            u.content_type = part_type;
        }
        match u.mode {
            Mode::SinglePart => {
                if part_number.is_some() {
                    return Err(ApiError::validation(
                        "`part_number` is only accepted for `multi_part` uploads.",
                    ));
                }
                if len > MAX_PART || len > max_size {
                    return Err(ApiError::validation(format!(
                        "The file is {len} bytes; single-part uploads accept at most {} bytes.",
                        MAX_PART.min(max_size)
                    )));
                }
                u.content_length = Some(len);
                u.hash = Some(content_hash(&data));
                u.uploaded = true;
            }
            Mode::MultiPart => {
                let total = u.number_of_parts.unwrap_or(1);
                let n: u32 = part_number
                    .ok_or_else(|| {
                        ApiError::validation("`part_number` is required for `multi_part` uploads.")
                    })?
                    .trim()
                    .parse()
                    .ok()
                    .filter(|n| (1..=total).contains(n))
                    .ok_or_else(|| {
                        ApiError::validation(format!(
                            "`part_number` should be an integer between 1 and {total}."
                        ))
                    })?;
                if len > MAX_PART || (n < total && len < MIN_PART) {
                    return Err(ApiError::validation(format!(
                        "Part {n} is {len} bytes; parts must be {MIN_PART} to {MAX_PART} bytes, except the last, which may be smaller."
                    )));
                }
                let so_far: u64 = u
                    .parts
                    .iter()
                    .filter(|(k, _)| **k != n)
                    .map(|(_, b)| b.len() as u64)
                    .sum();
                if so_far + len > max_size {
                    return Err(ApiError::validation(format!(
                        "The file exceeds the workspace's upload limit of {max_size} bytes."
                    )));
                }
                u.parts.insert(n, data);
            }
        }
        Ok(u)
    }

    /// `POST /v1/file_uploads/{id}/complete`.
    pub fn complete(&mut self, id: &str, now: i64) -> Result<&Upload, ApiError> {
        let u = self.pending_mut(id, now)?;
        if u.mode != Mode::MultiPart {
            return Err(ApiError::validation(
                "Only `multi_part` uploads can be completed.",
            ));
        }
        let total = u.number_of_parts.unwrap_or(1);
        if u.parts.len() as u32 != total {
            return Err(ApiError::validation(format!(
                "Expected {total} parts but received {}.",
                u.parts.len()
            )));
        }
        let mut all = Vec::new();
        for b in u.parts.values() {
            all.extend_from_slice(b);
        }
        u.parts.clear();
        u.content_length = Some(all.len() as u64);
        u.hash = Some(content_hash(&all));
        u.uploaded = true;
        Ok(u)
    }

    /// The FileUpload object.
    pub fn render(&self, u: &Upload, base_url: &str, now: i64) -> Value {
        let status = u.status(now);
        let mut v = json!({
            "object": "file_upload",
            "id": u.id,
            "created_time": iso(u.created_ms),
            "last_edited_time": iso(u.created_ms),
            "expiry_time": if u.attached { Value::Null } else { iso(u.expiry_ms).into() },
            "upload_url": if status == "pending" { Value::from(format!("{base_url}/v1/file_uploads/{}/send", u.id)) } else { Value::Null },
            "archived": false,
            "in_trash": false,
            "status": status,
            "filename": u.filename,
            "content_type": u.content_type,
            "content_length": u.content_length,
        });
        if u.mode == Mode::MultiPart {
            v["number_of_parts"] = json!({"total": u.number_of_parts, "sent": u.parts.len() as u32 + if u.uploaded { u.number_of_parts.unwrap_or(0) } else { 0 }});
            if status == "pending" {
                v["complete_url"] = format!("{base_url}/v1/file_uploads/{}/complete", u.id).into();
            }
        }
        v
    }
}
