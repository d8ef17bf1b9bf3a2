//! The Notion request-body rules (size limits, nesting, known types and colors, media sources) as pure
//! functions, so the test server and other tests (the converter's property test) apply the very same
//! rules.
//!
//! Lengths are counted in UTF-16 code units, as Notion's JavaScript service counts them: a string of
//! 2000 code points holding one emoji weighs 2001 and is refused by the real API.

use serde_json::{Map, Value};

/// Most UTF-16 code units in one `text.content`.
pub const MAX_TEXT_CONTENT: usize = 2000;
/// Most UTF-16 code units in any URL (links, media, embeds, bookmarks).
pub const MAX_URL: usize = 2000;
/// Most UTF-16 code units in an equation expression.
pub const MAX_EQUATION: usize = 1000;
/// Most elements in any rich-text array.
pub const MAX_RICH_TEXT_ITEMS: usize = 100;
/// Most blocks in any `children` array.
pub const MAX_CHILDREN: usize = 100;
/// Most block elements in one request, all levels together.
pub const MAX_BLOCK_ELEMENTS: usize = 1000;
/// Most bytes in one JSON request body ("500 KB", read as decimal so the server is never more lenient).
pub const MAX_PAYLOAD_BYTES: usize = 500_000;
/// Levels of blocks one request may carry: the top-level children and their children.
pub const MAX_NESTING_LEVELS: usize = 2;

/// A rule broken by a request body, with the JSON path of the offending value.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ValidationError {
    /// Path of the offending value, e.g. `body.children[3].paragraph.rich_text[0].text.content`.
    pub path: String,
    /// The whole message, naming the path, in Notion's style.
    pub message: String,
}

impl ValidationError {
    fn new(path: impl Into<String>, what: impl std::fmt::Display) -> Self {
        let path = path.into();
        Self {
            message: format!("{path} {what}"),
            path,
        }
    }

    fn too_long(path: &str, max: usize, was: usize) -> Self {
        let p = format!("{path}.length");
        Self {
            message: format!("{p} should be ≤ `{max}`, instead was `{was}`."),
            path: p,
        }
    }

    fn not_present(path: &str) -> Self {
        Self::new(path, "should be not present.")
    }

    fn required(path: &str) -> Self {
        Self::new(path, "should be defined, instead was `undefined`.")
    }
}

/// State of a file upload as seen by a block that wants to attach it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UploadState {
    /// Fully sent (single part) or completed (multi-part): attachable.
    Uploaded,
    /// Created but not (fully) sent or completed.
    Pending,
    /// Past its expiry time without being attached.
    Expired,
    /// No such upload for this integration.
    Unknown,
}

/// Block types the server accepts in requests. `heading_4` only from [`HEADING_4_SINCE`] (the
/// routes refuse it before). `column_list`/`column` and `synced_block` are left out on purpose:
/// their request rules are not confirmed, so refusing them is the safe side.
pub const BLOCK_TYPES: &[&str] = &[
    "paragraph",
    "heading_1",
    "heading_2",
    "heading_3",
    "heading_4",
    "bulleted_list_item",
    "numbered_list_item",
    "to_do",
    "toggle",
    "quote",
    "callout",
    "code",
    "equation",
    "divider",
    "breadcrumb",
    "table_of_contents",
    "embed",
    "bookmark",
    "image",
    "video",
    "pdf",
    "audio",
    "file",
    "table",
    "table_row",
    "link_to_page",
];

/// Colors accepted in block payloads and annotations.
pub const COLORS: &[&str] = &[
    "default",
    "gray",
    "brown",
    "orange",
    "yellow",
    "green",
    "blue",
    "purple",
    "pink",
    "red",
    "default_background",
    "gray_background",
    "brown_background",
    "orange_background",
    "yellow_background",
    "green_background",
    "blue_background",
    "purple_background",
    "pink_background",
    "red_background",
];

/// Languages accepted by `code` blocks.
pub const CODE_LANGUAGES: &[&str] = &[
    "abap",
    "abc",
    "agda",
    "arduino",
    "ascii art",
    "assembly",
    "bash",
    "basic",
    "bnf",
    "c",
    "c#",
    "c++",
    "clojure",
    "coffeescript",
    "coq",
    "css",
    "dart",
    "dhall",
    "diff",
    "docker",
    "ebnf",
    "elixir",
    "elm",
    "erlang",
    "f#",
    "flow",
    "fortran",
    "gherkin",
    "glsl",
    "go",
    "graphql",
    "groovy",
    "haskell",
    "hcl",
    "html",
    "idris",
    "java",
    "javascript",
    "json",
    "julia",
    "kotlin",
    "latex",
    "less",
    "lisp",
    "livescript",
    "llvm ir",
    "lua",
    "makefile",
    "markdown",
    "markup",
    "matlab",
    "mathematica",
    "mermaid",
    "nix",
    "notion formula",
    "objective-c",
    "ocaml",
    "pascal",
    "perl",
    "php",
    "plain text",
    "powershell",
    "prolog",
    "protobuf",
    "purescript",
    "python",
    "r",
    "racket",
    "reason",
    "ruby",
    "rust",
    "sass",
    "scala",
    "scheme",
    "scss",
    "shell",
    "smalltalk",
    "solidity",
    "sql",
    "swift",
    "toml",
    "typescript",
    "vb.net",
    "verilog",
    "vhdl",
    "visual basic",
    "webassembly",
    "xml",
    "yaml",
    "java/c/c++/c#",
];

const MEDIA_TYPES: &[&str] = &["image", "video", "pdf", "audio", "file"];
const TEXT_TYPES: &[&str] = &[
    "paragraph",
    "bulleted_list_item",
    "numbered_list_item",
    "toggle",
    "quote",
    "to_do",
    "heading_1",
    "heading_2",
    "heading_3",
    "heading_4",
    "callout",
];

/// The first `Notion-Version` that takes `heading_4`. Notion added the block on 2026-03-30 without
/// a new version; the stricter reading accepts it only from the version current then (2026-03-11),
/// so a client pinned to an older version that sends it is refused.
pub const HEADING_4_SINCE: &str = "2026-03-11";

/// Whether `body` holds a `heading_4` block anywhere (a request older versions refuse).
pub fn holds_heading_4(body: &Value) -> bool {
    let mut stack = vec![body];
    while let Some(v) = stack.pop() {
        match v {
            Value::Object(o) => {
                if o.contains_key("heading_4")
                    || o.get("type").and_then(Value::as_str) == Some("heading_4")
                {
                    return true;
                }
                stack.extend(o.values());
            }
            Value::Array(a) => stack.extend(a.iter()),
            _ => {}
        }
    }
    false
}

/// Length as Notion counts it (UTF-16 code units).
pub fn notion_len(s: &str) -> usize {
    s.encode_utf16().count()
}

type Uploads<'a> = &'a dyn Fn(&str) -> UploadState;

fn any_upload(_: &str) -> UploadState {
    UploadState::Uploaded
}

/// Checks a `children` array sent to `POST /v1/pages` or `PATCH /v1/blocks/{id}/children` under a
/// page or a non-table block; `path` is where the array sits (`body.children`). File-upload ids are
/// only checked for shape here; the server uses [`validate_children_with`].
pub fn validate_children(children: &Value, path: &str) -> Result<(), ValidationError> {
    validate_children_with(children, path, &any_upload)
}

/// [`validate_children`] that also asks `uploads` whether each referenced file upload is attachable.
pub fn validate_children_with(
    children: &Value,
    path: &str,
    uploads: Uploads<'_>,
) -> Result<(), ValidationError> {
    let count = count_blocks(children);
    if count > MAX_BLOCK_ELEMENTS {
        return Err(ValidationError::new(
            path,
            format!(
                "should contain at most `{MAX_BLOCK_ELEMENTS}` block elements, instead was `{count}`."
            ),
        ));
    }
    children_array(children, path, 1, None, uploads)
}

/// Checks rows appended to an existing table of `table_width` columns (only `table_row` blocks allowed).
pub fn validate_table_rows_with(
    children: &Value,
    path: &str,
    table_width: usize,
    uploads: Uploads<'_>,
) -> Result<(), ValidationError> {
    children_array(children, path, 1, Some(table_width), uploads)
}

/// Checks one block as a top-level element of a request (so it may carry one level of children).
pub fn validate_block(block: &Value, path: &str) -> Result<(), ValidationError> {
    validate_block_with(block, path, &any_upload)
}

/// [`validate_block`] with file-upload lookups.
pub fn validate_block_with(
    block: &Value,
    path: &str,
    uploads: Uploads<'_>,
) -> Result<(), ValidationError> {
    block_value(block, path, 1, None, uploads)
}

/// Checks a rich-text array (≤ 100 items, each item's lengths, links, annotations).
pub fn validate_rich_text(v: &Value, path: &str) -> Result<(), ValidationError> {
    rich_text_array(v, path, &any_upload)
}

/// Checks the content of `PATCH /v1/blocks/{id}` for a block of type `ty`: the type payload alone,
/// without children (they are appended, never replaced).
pub fn validate_block_update(
    ty: &str,
    payload: &Value,
    path: &str,
    uploads: Uploads<'_>,
) -> Result<(), ValidationError> {
    let p = format!("{path}.{ty}");
    let obj = payload
        .as_object()
        .ok_or_else(|| type_error(&p, "object"))?;
    if obj.contains_key("children") {
        return Err(ValidationError::not_present(&format!("{p}.children")));
    }
    payload_rules(ty, obj, &p, 1, None, uploads, false)
}

/// Checks a page `icon` (emoji, external URL or attachable file upload; null clears it).
pub fn validate_icon_with(
    v: &Value,
    path: &str,
    uploads: Uploads<'_>,
) -> Result<(), ValidationError> {
    icon(v, path, uploads)
}

/// Checks a page `cover` (external URL or attachable file upload; null clears it).
pub fn validate_cover_with(
    v: &Value,
    path: &str,
    uploads: Uploads<'_>,
) -> Result<(), ValidationError> {
    if v.is_null() {
        return Ok(());
    }
    let obj = v.as_object().ok_or_else(|| type_error(path, "object"))?;
    allow_keys(obj, path, &["type", "external", "file_upload"])?;
    file_source(obj, path, uploads)
}

/// Checks a rich-text array with file-upload lookups (none are referenced from rich text today).
pub fn validate_rich_text_with(
    v: &Value,
    path: &str,
    uploads: Uploads<'_>,
) -> Result<(), ValidationError> {
    rich_text_array(v, path, uploads)
}

/// Number of block elements in `children`, all levels together.
pub fn count_blocks(children: &Value) -> usize {
    children.as_array().map_or(0, |arr| {
        arr.iter()
            .map(|b| {
                1 + block_type(b)
                    .and_then(|t| b.get(t))
                    .and_then(|p| p.get("children"))
                    .map_or(0, count_blocks)
            })
            .sum()
    })
}

/// The type key of a request block: `type` when given, else its one known payload key.
pub fn block_type(b: &Value) -> Option<&str> {
    let obj = b.as_object()?;
    if let Some(t) = obj.get("type").and_then(Value::as_str) {
        return Some(t);
    }
    obj.keys()
        .map(String::as_str)
        .find(|k| *k != "object" && *k != "type")
}

fn type_error(path: &str, want: &str) -> ValidationError {
    ValidationError::new(path, format!("should be an {want}."))
}

fn children_array(
    v: &Value,
    path: &str,
    level: usize,
    table_width: Option<usize>,
    uploads: Uploads<'_>,
) -> Result<(), ValidationError> {
    let arr = v.as_array().ok_or_else(|| type_error(path, "array"))?;
    if arr.len() > MAX_CHILDREN {
        return Err(ValidationError::too_long(path, MAX_CHILDREN, arr.len()));
    }
    for (i, b) in arr.iter().enumerate() {
        block_value(b, &format!("{path}[{i}]"), level, table_width, uploads)?;
    }
    Ok(())
}

fn block_value(
    b: &Value,
    path: &str,
    level: usize,
    table_width: Option<usize>,
    uploads: Uploads<'_>,
) -> Result<(), ValidationError> {
    let obj = b.as_object().ok_or_else(|| type_error(path, "object"))?;
    if let Some(o) = obj.get("object") {
        if o != "block" {
            return Err(ValidationError::new(
                format!("{path}.object"),
                "should be `\"block\"`.",
            ));
        }
    }
    let ty = match obj.get("type") {
        Some(Value::String(t)) => t.as_str(),
        Some(_) => return Err(type_error(&format!("{path}.type"), "string")),
        None => {
            let keys: Vec<&str> = obj
                .keys()
                .map(String::as_str)
                .filter(|k| *k != "object")
                .collect();
            match keys.as_slice() {
                [k] => *k,
                [] => {
                    return Err(ValidationError::new(
                        path,
                        "should have a block type payload (e.g. `paragraph`).",
                    ))
                }
                _ => {
                    return Err(ValidationError::new(
                        path,
                        format!(
                            "should have exactly one block type payload, instead had {keys:?}."
                        ),
                    ))
                }
            }
        }
    };
    if !BLOCK_TYPES.contains(&ty) {
        return Err(ValidationError::new(
            format!("{path}.{ty}"),
            "is not a supported block type.",
        ));
    }
    for k in obj.keys() {
        if k != "object" && k != "type" && k != ty {
            return Err(ValidationError::not_present(&format!("{path}.{k}")));
        }
    }
    match (ty, table_width) {
        ("table_row", None) => {
            return Err(ValidationError::new(
                path,
                "`table_row` blocks can only be children of a `table`.",
            ))
        }
        (t, Some(_)) if t != "table_row" => {
            return Err(ValidationError::new(
                format!("{path}.{t}"),
                "children of a `table` must be `table_row` blocks.",
            ))
        }
        _ => {}
    }
    let p = format!("{path}.{ty}");
    let payload = obj
        .get(ty)
        .ok_or_else(|| ValidationError::required(&p))?
        .as_object()
        .ok_or_else(|| type_error(&p, "object"))?;
    payload_rules(ty, payload, &p, level, table_width, uploads, true)
}

fn allow_keys(obj: &Map<String, Value>, path: &str, keys: &[&str]) -> Result<(), ValidationError> {
    for k in obj.keys() {
        if !keys.contains(&k.as_str()) {
            return Err(ValidationError::not_present(&format!("{path}.{k}")));
        }
    }
    Ok(())
}

fn color(obj: &Map<String, Value>, path: &str) -> Result<(), ValidationError> {
    match obj.get("color") {
        None => Ok(()),
        Some(Value::String(c)) if COLORS.contains(&c.as_str()) => Ok(()),
        Some(other) => Err(ValidationError::new(
            format!("{path}.color"),
            format!("should be a known color, instead was `{other}`."),
        )),
    }
}

fn bool_field(obj: &Map<String, Value>, path: &str, key: &str) -> Result<(), ValidationError> {
    match obj.get(key) {
        None | Some(Value::Bool(_)) => Ok(()),
        Some(_) => Err(type_error(&format!("{path}.{key}"), "boolean")),
    }
}

fn url_value(v: &Value, path: &str) -> Result<(), ValidationError> {
    let s = v.as_str().ok_or_else(|| type_error(path, "string"))?;
    let n = notion_len(s);
    if n > MAX_URL {
        return Err(ValidationError::too_long(path, MAX_URL, n));
    }
    if url::Url::parse(s).is_err() {
        return Err(ValidationError::new(path, "should be a valid URL."));
    }
    Ok(())
}

fn upload_ref(v: &Value, path: &str, uploads: Uploads<'_>) -> Result<(), ValidationError> {
    let obj = v.as_object().ok_or_else(|| type_error(path, "object"))?;
    allow_keys(obj, path, &["id"])?;
    let idp = format!("{path}.id");
    let id = obj
        .get("id")
        .ok_or_else(|| ValidationError::required(&idp))?
        .as_str()
        .ok_or_else(|| type_error(&idp, "string"))?;
    if uuid::Uuid::parse_str(id).is_err() {
        return Err(ValidationError::new(&idp, "should be a valid uuid."));
    }
    match uploads(id) {
        UploadState::Uploaded => Ok(()),
        UploadState::Pending => Err(ValidationError::new(
            &idp,
            format!("refers to file upload `{id}` in status `pending`; only `uploaded` files can be attached."),
        )),
        UploadState::Expired => Err(ValidationError::new(
            &idp,
            format!("refers to file upload `{id}` which has expired."),
        )),
        UploadState::Unknown => Err(ValidationError::new(
            &idp,
            format!("refers to file upload `{id}` which does not exist."),
        )),
    }
}

/// `{type?, external: {url}} | {type?, file_upload: {id}}`, used by media blocks and icons.
fn file_source(
    obj: &Map<String, Value>,
    path: &str,
    uploads: Uploads<'_>,
) -> Result<(), ValidationError> {
    let has_ext = obj.contains_key("external");
    let has_up = obj.contains_key("file_upload");
    let declared = obj.get("type").map(|t| t.as_str().unwrap_or(""));
    match (has_ext, has_up) {
        (true, true) => {
            return Err(ValidationError::new(
                path,
                "should have only one of `external` or `file_upload`.",
            ))
        }
        (false, false) => {
            return Err(ValidationError::new(
                path,
                "should have `external` or `file_upload`.",
            ))
        }
        _ => {}
    }
    let actual = if has_ext { "external" } else { "file_upload" };
    if let Some(d) = declared {
        if d != actual {
            return Err(ValidationError::new(
                format!("{path}.type"),
                format!("should be `\"{actual}\"`, instead was `\"{d}\"`."),
            ));
        }
    }
    if has_ext {
        let p = format!("{path}.external");
        let e = obj["external"]
            .as_object()
            .ok_or_else(|| type_error(&p, "object"))?;
        allow_keys(e, &p, &["url"])?;
        let u = e
            .get("url")
            .ok_or_else(|| ValidationError::required(&format!("{p}.url")))?;
        url_value(u, &format!("{p}.url"))
    } else {
        upload_ref(&obj["file_upload"], &format!("{path}.file_upload"), uploads)
    }
}

fn icon(v: &Value, path: &str, uploads: Uploads<'_>) -> Result<(), ValidationError> {
    if v.is_null() {
        return Ok(());
    }
    let obj = v.as_object().ok_or_else(|| type_error(path, "object"))?;
    if let Some(e) = obj.get("emoji") {
        allow_keys(obj, path, &["type", "emoji"])?;
        match e.as_str() {
            Some(s) if !s.is_empty() => Ok(()),
            _ => Err(ValidationError::new(
                format!("{path}.emoji"),
                "should be an emoji.",
            )),
        }
    } else {
        allow_keys(obj, path, &["type", "external", "file_upload"])?;
        file_source(obj, path, uploads)
    }
}

fn payload_rules(
    ty: &str,
    obj: &Map<String, Value>,
    p: &str,
    level: usize,
    table_width: Option<usize>,
    uploads: Uploads<'_>,
    creating: bool,
) -> Result<(), ValidationError> {
    if TEXT_TYPES.contains(&ty) {
        let mut keys = vec!["rich_text", "color", "children"];
        match ty {
            "to_do" => keys.push("checked"),
            "callout" => keys.push("icon"),
            t if t.starts_with("heading_") => keys.push("is_toggleable"),
            _ => {}
        }
        allow_keys(obj, p, &keys)?;
        if creating || obj.contains_key("rich_text") {
            let rt = obj
                .get("rich_text")
                .ok_or_else(|| ValidationError::required(&format!("{p}.rich_text")))?;
            rich_text_array(rt, &format!("{p}.rich_text"), uploads)?;
        }
        color(obj, p)?;
        bool_field(obj, p, "checked")?;
        bool_field(obj, p, "is_toggleable")?;
        if let Some(i) = obj.get("icon") {
            icon(i, &format!("{p}.icon"), uploads)?;
        }
        if let Some(ch) = obj.get("children") {
            let cp = format!("{p}.children");
            if ty.starts_with("heading_") && obj.get("is_toggleable") != Some(&Value::Bool(true)) {
                return Err(ValidationError::new(
                    &cp,
                    "should be not present unless `is_toggleable` is `true`.",
                ));
            }
            nested_children(ch, &cp, level, uploads)?;
        }
        return Ok(());
    }
    match ty {
        "code" => {
            allow_keys(obj, p, &["rich_text", "language", "caption"])?;
            if creating || obj.contains_key("rich_text") {
                let rt = obj
                    .get("rich_text")
                    .ok_or_else(|| ValidationError::required(&format!("{p}.rich_text")))?;
                rich_text_array(rt, &format!("{p}.rich_text"), uploads)?;
            }
            if let Some(l) = obj.get("language") {
                match l.as_str() {
                    Some(s) if CODE_LANGUAGES.contains(&s) => {}
                    _ => {
                        return Err(ValidationError::new(
                            format!("{p}.language"),
                            format!("should be one of Notion's code languages, instead was `{l}`."),
                        ))
                    }
                }
            }
            caption(obj, p, uploads)
        }
        "equation" => {
            allow_keys(obj, p, &["expression"])?;
            let ep = format!("{p}.expression");
            let e = obj
                .get("expression")
                .ok_or_else(|| ValidationError::required(&ep))?
                .as_str()
                .ok_or_else(|| type_error(&ep, "string"))?;
            let n = notion_len(e);
            if n > MAX_EQUATION {
                return Err(ValidationError::too_long(&ep, MAX_EQUATION, n));
            }
            Ok(())
        }
        "divider" | "breadcrumb" => allow_keys(obj, p, &[]),
        "table_of_contents" => {
            allow_keys(obj, p, &["color"])?;
            color(obj, p)
        }
        "embed" | "bookmark" => {
            allow_keys(obj, p, &["url", "caption"])?;
            let up = format!("{p}.url");
            url_value(
                obj.get("url")
                    .ok_or_else(|| ValidationError::required(&up))?,
                &up,
            )?;
            caption(obj, p, uploads)
        }
        t if MEDIA_TYPES.contains(&t) => {
            if t == "file" {
                allow_keys(
                    obj,
                    p,
                    &["type", "external", "file_upload", "caption", "name"],
                )?;
                if let Some(n) = obj.get("name") {
                    n.as_str()
                        .ok_or_else(|| type_error(&format!("{p}.name"), "string"))?;
                }
            } else {
                allow_keys(obj, p, &["type", "external", "file_upload", "caption"])?;
            }
            file_source(obj, p, uploads)?;
            caption(obj, p, uploads)
        }
        "link_to_page" => {
            allow_keys(obj, p, &["type", "page_id"])?;
            let ip = format!("{p}.page_id");
            let id = obj
                .get("page_id")
                .ok_or_else(|| ValidationError::required(&ip))?
                .as_str()
                .ok_or_else(|| type_error(&ip, "string"))?;
            if uuid::Uuid::parse_str(id).is_err() {
                return Err(ValidationError::new(&ip, "should be a valid uuid."));
            }
            Ok(())
        }
        "table" => {
            allow_keys(
                obj,
                p,
                &[
                    "table_width",
                    "has_column_header",
                    "has_row_header",
                    "children",
                ],
            )?;
            bool_field(obj, p, "has_column_header")?;
            bool_field(obj, p, "has_row_header")?;
            let wp = format!("{p}.table_width");
            if !creating {
                if obj.contains_key("table_width") {
                    return Err(ValidationError::new(
                        &wp,
                        "cannot be changed after creation.",
                    ));
                }
                return Ok(());
            }
            let width = obj
                .get("table_width")
                .ok_or_else(|| ValidationError::required(&wp))?
                .as_u64()
                .filter(|w| *w >= 1)
                .ok_or_else(|| ValidationError::new(&wp, "should be a positive integer."))?;
            let cp = format!("{p}.children");
            let ch = obj
                .get("children")
                .ok_or_else(|| ValidationError::required(&cp))?;
            if level >= MAX_NESTING_LEVELS {
                return Err(depth_error(&cp));
            }
            if ch.as_array().is_some_and(Vec::is_empty) {
                return Err(ValidationError::new(
                    &cp,
                    "should contain at least one row.",
                ));
            }
            children_array(ch, &cp, level + 1, Some(width as usize), uploads)
        }
        "table_row" => {
            allow_keys(obj, p, &["cells"])?;
            let cp = format!("{p}.cells");
            let cells = obj
                .get("cells")
                .ok_or_else(|| ValidationError::required(&cp))?
                .as_array()
                .ok_or_else(|| type_error(&cp, "array"))?;
            if let Some(w) = table_width {
                if cells.len() != w {
                    return Err(ValidationError::new(
                        &cp,
                        format!(
                            "should have `{w}` cells (the table's `table_width`), instead had `{}`.",
                            cells.len()
                        ),
                    ));
                }
            }
            for (i, c) in cells.iter().enumerate() {
                rich_text_array(c, &format!("{cp}[{i}]"), uploads)?;
            }
            Ok(())
        }
        other => Err(ValidationError::new(
            p,
            format!("`{other}` is not a supported block type."),
        )),
    }
}

fn depth_error(path: &str) -> ValidationError {
    ValidationError::new(
        path,
        format!(
            "should be not present: at most {MAX_NESTING_LEVELS} levels of blocks per request."
        ),
    )
}

fn nested_children(
    ch: &Value,
    path: &str,
    level: usize,
    uploads: Uploads<'_>,
) -> Result<(), ValidationError> {
    if level >= MAX_NESTING_LEVELS {
        return Err(depth_error(path));
    }
    children_array(ch, path, level + 1, None, uploads)
}

fn caption(obj: &Map<String, Value>, p: &str, uploads: Uploads<'_>) -> Result<(), ValidationError> {
    match obj.get("caption") {
        None => Ok(()),
        Some(c) => rich_text_array(c, &format!("{p}.caption"), uploads),
    }
}

fn rich_text_array(v: &Value, path: &str, uploads: Uploads<'_>) -> Result<(), ValidationError> {
    let arr = v.as_array().ok_or_else(|| type_error(path, "array"))?;
    if arr.len() > MAX_RICH_TEXT_ITEMS {
        return Err(ValidationError::too_long(
            path,
            MAX_RICH_TEXT_ITEMS,
            arr.len(),
        ));
    }
    for (i, item) in arr.iter().enumerate() {
        rich_text_item(item, &format!("{path}[{i}]"), uploads)?;
    }
    Ok(())
}

fn rich_text_item(v: &Value, path: &str, _uploads: Uploads<'_>) -> Result<(), ValidationError> {
    let obj = v.as_object().ok_or_else(|| type_error(path, "object"))?;
    allow_keys(
        obj,
        path,
        &[
            "type",
            "text",
            "mention",
            "equation",
            "annotations",
            "plain_text",
            "href",
        ],
    )?;
    let kinds: Vec<&str> = ["text", "mention", "equation"]
        .into_iter()
        .filter(|k| obj.contains_key(*k))
        .collect();
    let kind = match kinds.as_slice() {
        [k] => *k,
        _ => {
            return Err(ValidationError::new(
                path,
                "should have exactly one of `text`, `mention` or `equation`.",
            ))
        }
    };
    if let Some(t) = obj.get("type") {
        if t.as_str() != Some(kind) {
            return Err(ValidationError::new(
                format!("{path}.type"),
                format!("should be `\"{kind}\"`, instead was `{t}`."),
            ));
        }
    }
    let p = format!("{path}.{kind}");
    let body = obj[kind]
        .as_object()
        .ok_or_else(|| type_error(&p, "object"))?;
    match kind {
        "text" => {
            allow_keys(body, &p, &["content", "link"])?;
            let cp = format!("{p}.content");
            let c = body
                .get("content")
                .ok_or_else(|| ValidationError::required(&cp))?
                .as_str()
                .ok_or_else(|| type_error(&cp, "string"))?;
            let n = notion_len(c);
            if n > MAX_TEXT_CONTENT {
                return Err(ValidationError::too_long(&cp, MAX_TEXT_CONTENT, n));
            }
            match body.get("link") {
                None | Some(Value::Null) => {}
                Some(Value::Object(l)) => {
                    let lp = format!("{p}.link");
                    allow_keys(l, &lp, &["url"])?;
                    let up = format!("{lp}.url");
                    url_value(
                        l.get("url").ok_or_else(|| ValidationError::required(&up))?,
                        &up,
                    )?;
                }
                Some(_) => return Err(type_error(&format!("{p}.link"), "object")),
            }
        }
        "equation" => {
            allow_keys(body, &p, &["expression"])?;
            let ep = format!("{p}.expression");
            let e = body
                .get("expression")
                .ok_or_else(|| ValidationError::required(&ep))?
                .as_str()
                .ok_or_else(|| type_error(&ep, "string"))?;
            let n = notion_len(e);
            if n > MAX_EQUATION {
                return Err(ValidationError::too_long(&ep, MAX_EQUATION, n));
            }
        }
        _ => mention(body, &p)?,
    }
    if let Some(a) = obj.get("annotations") {
        let ap = format!("{path}.annotations");
        let ann = a.as_object().ok_or_else(|| type_error(&ap, "object"))?;
        allow_keys(
            ann,
            &ap,
            &[
                "bold",
                "italic",
                "strikethrough",
                "underline",
                "code",
                "color",
            ],
        )?;
        for k in ["bold", "italic", "strikethrough", "underline", "code"] {
            bool_field(ann, &ap, k)?;
        }
        color(ann, &ap)?;
    }
    Ok(())
}

fn mention(body: &Map<String, Value>, p: &str) -> Result<(), ValidationError> {
    let kinds = [
        "page",
        "database",
        "user",
        "date",
        "template_mention",
        "custom_emoji",
    ];
    let found: Vec<&str> = kinds
        .into_iter()
        .filter(|k| body.contains_key(*k))
        .collect();
    let kind = match found.as_slice() {
        [k] => *k,
        _ => {
            return Err(ValidationError::new(
                p,
                "should have exactly one mention type (`page`, `date`, `user`...).",
            ))
        }
    };
    allow_keys(body, p, &["type", kind])?;
    if let Some(t) = body.get("type") {
        if t.as_str() != Some(kind) {
            return Err(ValidationError::new(
                format!("{p}.type"),
                format!("should be `\"{kind}\"`, instead was `{t}`."),
            ));
        }
    }
    let mp = format!("{p}.{kind}");
    let m = body[kind]
        .as_object()
        .ok_or_else(|| type_error(&mp, "object"))?;
    match kind {
        "page" | "database" | "user" | "custom_emoji" => {
            let ip = format!("{mp}.id");
            let id = m
                .get("id")
                .ok_or_else(|| ValidationError::required(&ip))?
                .as_str()
                .ok_or_else(|| type_error(&ip, "string"))?;
            if uuid::Uuid::parse_str(id).is_err() {
                return Err(ValidationError::new(&ip, "should be a valid uuid."));
            }
        }
        "date" => {
            let sp = format!("{mp}.start");
            m.get("start")
                .ok_or_else(|| ValidationError::required(&sp))?
                .as_str()
                .ok_or_else(|| type_error(&sp, "string"))?;
        }
        _ => {}
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn para(s: &str) -> Value {
        json!({"paragraph": {"rich_text": [{"text": {"content": s}}]}})
    }

    #[test]
    fn mentions_of_unknown_kinds_or_a_mismatched_type_are_refused() {
        let id = "3c612f56-fdd0-4a30-a4d6-bda7d7426309";
        let rt = |m: Value| json!([{"type": "mention", "mention": m}]);
        assert!(validate_rich_text(&rt(json!({"type": "page", "page": {"id": id}})), "r").is_ok());
        let e = validate_rich_text(&rt(json!({"link_preview": {"url": "https://a.b"}})), "r")
            .unwrap_err();
        assert!(e.to_string().contains("r[0].mention"), "{e}");
        let e =
            validate_rich_text(&rt(json!({"type": "user", "page": {"id": id}})), "r").unwrap_err();
        assert!(e.to_string().contains("r[0].mention.type"), "{e}");
        let e = validate_rich_text(&rt(json!({"page": {"id": "nope"}})), "r").unwrap_err();
        assert!(e.to_string().contains("should be a valid uuid"), "{e}");
    }

    #[test]
    fn text_length_counts_utf16_units() {
        let ok = "a".repeat(1998) + "😀"; // 1999 chars, 2000 UTF-16 units
        assert!(validate_children(&json!([para(&ok)]), "body.children").is_ok());
        let bad = "a".repeat(1999) + "😀"; // 2000 chars, 2001 units
        let e = validate_children(&json!([para(&bad)]), "body.children").unwrap_err();
        assert_eq!(
            e.message,
            "body.children[0].paragraph.rich_text[0].text.content.length should be ≤ `2000`, instead was `2001`."
        );
    }

    #[test]
    fn heading_children_need_toggleable() {
        let h = json!({"heading_2": {"rich_text": [], "children": [para("x")]}});
        assert!(validate_block(&h, "body.children[0]").is_err());
        let h =
            json!({"heading_2": {"rich_text": [], "is_toggleable": true, "children": [para("x")]}});
        assert!(validate_block(&h, "body.children[0]").is_ok());
    }

    #[test]
    fn table_inside_a_list_item_is_three_levels() {
        let t = json!({"table": {"table_width": 1, "children": [{"table_row": {"cells": [[]]}}]}});
        assert!(validate_block(&t, "b").is_ok());
        let li = json!({"bulleted_list_item": {"rich_text": [], "children": [t]}});
        let e = validate_block(&li, "b").unwrap_err();
        assert_eq!(e.path, "b.bulleted_list_item.children[0].table.children");
    }

    #[test]
    fn pending_upload_is_refused_through_the_callback() {
        let id = uuid::Uuid::new_v4().to_string();
        let img = json!({"image": {"type": "file_upload", "file_upload": {"id": id}}});
        assert!(validate_block(&img, "b").is_ok());
        let pending = |_: &str| UploadState::Pending;
        let e = validate_block_with(&img, "b", &pending).unwrap_err();
        assert_eq!(e.path, "b.image.file_upload.id");
    }
}
