//! The drive API's read routes below `/v1.0`: a drive, its items, their children (paged) and their
//! content (a redirect to a download URL), the items found by id, by the drive's root, by a path
//! below it (`root:/{path}`, `root:/{path}:/children`) or by a sharing URL
//! (`/shares/{u!…}/driveItem`, which takes a write scope as Microsoft's page says).

use serde_json::{json, Map, Value};

use super::{DriveService, DriveState, ItemKind, Ticket};
use crate::graph::routes::{pct_decode, Body, Reply};
use crate::graph::teams::{group_key, site_key, Who};

/// The bytes a file is announced with when it is switched "too large": 2 GiB more than it has.
pub const TOO_LARGE_EXTRA: u64 = 2 << 30;

/// The delegated scopes that read the signed-in user's own files
/// (<https://learn.microsoft.com/en-us/graph/api/driveitem-get-content#permissions>).
const READ_SCOPES: &[&str] = &[
    "Files.Read",
    "Files.ReadWrite",
    "Files.Read.All",
    "Files.ReadWrite.All",
    "Sites.Read.All",
    "Sites.ReadWrite.All",
];

/// The delegated scopes of the shares API: "Access shared items"
/// (<https://learn.microsoft.com/en-us/graph/api/shares-get#permissions>) lists `Files.ReadWrite` as
/// the least privileged and `Files.ReadWrite.All`, `Sites.ReadWrite.All` above it; no read-only
/// scope is listed, so a `Files.Read` sign-in is refused there while path and id addressing serve it.
const SHARES_SCOPES: &[&str] = &[
    "Files.ReadWrite",
    "Files.ReadWrite.All",
    "Sites.ReadWrite.All",
];

/// The delegated scopes that read a group's or a site's document library.
const ALL_SCOPES: &[&str] = &[
    "Files.Read.All",
    "Files.ReadWrite.All",
    "Sites.Read.All",
    "Sites.ReadWrite.All",
];

const ITEM_PROPS: &[&str] = &[
    "id",
    "name",
    "size",
    "eTag",
    "cTag",
    "createdDateTime",
    "lastModifiedDateTime",
    "webUrl",
    "parentReference",
    "file",
    "folder",
    "package",
    "root",
    "@microsoft.graph.downloadUrl",
    "children",
];

fn not_found() -> Reply {
    Reply::error(404, "itemNotFound", "The resource could not be found.")
}

fn access_denied() -> Reply {
    Reply::error(403, "accessDenied", "Access denied")
}

fn invalid(msg: &str) -> Reply {
    Reply::error(400, "invalidRequest", msg)
}

#[derive(Default)]
struct Query {
    raw: Vec<(String, String)>,
    top: Option<usize>,
    skip: usize,
    select: Option<Vec<String>>,
    expand_children: bool,
}

fn parse_query(query: &str) -> Result<Query, Reply> {
    let mut q = Query {
        raw: url::form_urlencoded::parse(query.as_bytes())
            .into_owned()
            .collect(),
        ..Query::default()
    };
    for (k, v) in q.raw.clone() {
        match k.as_str() {
            "$top" => match v.parse::<usize>() {
                Ok(n) if n > 0 => q.top = Some(n),
                _ => return Err(invalid(&format!("Invalid value '{v}' for $top."))),
            },
            "$skiptoken" => {
                q.skip = v
                    .parse()
                    .map_err(|_| invalid(&format!("Invalid $skiptoken '{v}'.")))?
            }
            "$select" => {
                let sel: Vec<String> = v.split(',').map(|s| s.trim().to_owned()).collect();
                if let Some(bad) = sel.iter().find(|s| !ITEM_PROPS.contains(&s.as_str())) {
                    return Err(invalid(&format!(
                        "Parsing OData Select and Expand failed: Could not find a property named \
                         '{bad}' on type 'microsoft.graph.driveItem'."
                    )));
                }
                q.select = Some(sel);
            }
            "$expand" if v == "children" => q.expand_children = true,
            k if k.starts_with('$') => {
                // Refusing loudly beats silently answering unfiltered or unsorted data.
                return Err(invalid(&format!(
                    "{k}={v} is not implemented by the notebridge test server's drive API"
                )));
            }
            _ => {}
        }
    }
    Ok(q)
}

/// What a path names.
enum Target {
    Drive(String),
    Item {
        drive: String,
        item: String,
        tail: Tail,
    },
    /// An item by its path below the drive's root, looked up once the caller may read the drive
    /// (so a path in another's drive says nothing of what is there).
    Path {
        drive: String,
        path: Vec<String>,
        tail: Tail,
    },
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Tail {
    Item,
    Children,
    Content,
}

fn tail(rest: &[&str]) -> Option<Tail> {
    match rest {
        [] => Some(Tail::Item),
        ["children"] => Some(Tail::Children),
        ["content"] => Some(Tail::Content),
        _ => None,
    }
}

/// Path addressing below a drive's root (<https://learn.microsoft.com/en-us/graph/api/driveitem-get>,
/// `root:/{item-path}`): the segments after `root:` up to the one that ends with `:` are the path,
/// what follows it the tail (`/root:/a/b`, `/root:/a/b:`, `/root:/a/b:/children`).
fn root_path<'s>(rest: &[&'s str]) -> Option<(Vec<&'s str>, Tail)> {
    let mut path = Vec::new();
    for (i, seg) in rest.iter().enumerate() {
        if let Some(last) = seg.strip_suffix(':') {
            path.push(last);
            return Some((path, tail(&rest[i + 1..])?))
                .filter(|(p, _)| p.iter().all(|s| !s.is_empty()));
        }
        path.push(seg);
    }
    (!path.is_empty() && path.iter().all(|s| !s.is_empty())).then_some((path, Tail::Item))
}

/// The item at `path` below the root of drive `d`, by name (case-insensitive, as OneDrive and
/// SharePoint compare names); one step per segment.
fn item_at(st: &DriveState, svc: &DriveService, d: &str, path: &[String]) -> Result<String, Reply> {
    let drive = st.drive(d).ok_or_else(not_found)?;
    let mut at = drive.root().id.clone();
    for name in path {
        at = drive
            .items
            .iter()
            .find(|i| {
                i.parent.as_deref() == Some(at.as_str())
                    && i.name.eq_ignore_ascii_case(name)
                    && !svc.faults.is_hidden(&i.id)
            })
            .map(|i| i.id.clone())
            .ok_or_else(not_found)?;
    }
    Ok(at)
}

/// An item of drive `d` named by `rest` (after the drive): `root`, `root:/{path}`, `items/{id}`.
fn in_drive(st: &DriveState, d: String, rest: &[&str]) -> Result<Target, Reply> {
    let bad = || invalid("Invalid request path for the drive API.");
    match rest {
        [] => Ok(Target::Drive(d)),
        ["root", rest @ ..] => {
            let root = st.drive(&d).ok_or_else(not_found)?.root().id.clone();
            Ok(Target::Item {
                drive: d,
                item: root,
                tail: tail(rest).ok_or_else(bad)?,
            })
        }
        ["root:", rest @ ..] => {
            let (path, tail) = root_path(rest).ok_or_else(bad)?;
            Ok(Target::Path {
                drive: d,
                path: path.into_iter().map(str::to_owned).collect(),
                tail,
            })
        }
        ["items", i, rest @ ..] => Ok(Target::Item {
            drive: d,
            item: (*i).to_owned(),
            tail: tail(rest).ok_or_else(bad)?,
        }),
        _ => Err(bad()),
    }
}

/// The item a `/shares/{id}` names: `u!` and the unpadded base64url of a sharing URL.
fn shared_url(share_id: &str) -> Option<String> {
    use base64::Engine as _;
    let enc = share_id.strip_prefix("u!")?;
    if enc.contains('=') {
        return None;
    }
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(enc)
        .ok()?;
    String::from_utf8(bytes).ok()
}

fn resolve(
    st: &DriveState,
    svc: &DriveService,
    user: &str,
    segs: &[&str],
) -> Result<Target, Reply> {
    // `/me/drive`, `/groups/{id}/drive` and `/sites/{id}/drive`: the drive of an owner.
    let (owner, segs): (Option<String>, &[&str]) = match segs {
        ["me", "drive", rest @ ..] => (Some(user.to_owned()), rest),
        ["groups", g, "drive", rest @ ..] => (Some(group_key(g)), rest),
        ["sites", s, "drive", rest @ ..] => (Some(site_key(s)), rest),
        _ => (None, segs),
    };
    let bad = || invalid("Invalid request path for the drive API.");
    if let Some(owner) = owner {
        let d = st
            .drive_of(&owner)
            .map(|d| d.id.clone())
            .ok_or_else(not_found)?;
        return in_drive(st, d, segs);
    }
    match segs {
        ["drives", d, rest @ ..] => {
            if st.named_without_its_zero(d) {
                return Err(invalid(
                    "The provided drive id appears to be malformed, or does not represent a valid drive.",
                ));
            }
            // The drive as it spells its own id (a personal one is named in either case).
            let d = st
                .drive(d)
                .map_or_else(|| (*d).to_owned(), |x| x.id.clone());
            in_drive(st, d, rest)
        }
        ["shares", s, "driveItem", rest @ ..] => {
            let url = shared_url(s).ok_or_else(|| {
                invalid("The share id is not a sharing token or a properly encoded sharing URL.")
            })?;
            let (d, i) = st.shares.get(&url).ok_or_else(not_found)?;
            if svc.faults.is_unshared(i) {
                return Err(not_found());
            }
            Ok(Target::Item {
                drive: d.clone(),
                item: i.clone(),
                tail: tail(rest).ok_or_else(bad)?,
            })
        }
        _ => Err(bad()),
    }
}

/// Answers one drive API request of `who` (its throttling already decided).
pub(crate) fn dispatch(
    svc: &DriveService,
    origin: &str,
    who: &Who,
    method: &str,
    path: &str,
    query: &str,
    may_read: &dyn Fn(&str) -> bool,
) -> Reply {
    let has = |s: &str| who.scopes.iter().any(|x| x.eq_ignore_ascii_case(s));
    // The user's own drive takes any read scope; a group's or site's needs a `.All` one and
    // membership (<https://learn.microsoft.com/en-us/graph/api/drive-get#permissions>).
    let allowed =
        |owner: &str| owner == who.user || (ALL_SCOPES.iter().any(|s| has(s)) && may_read(owner));
    if !READ_SCOPES.iter().any(|s| has(s)) {
        return access_denied();
    }
    if path.trim_start_matches('/').starts_with("shares/") && !SHARES_SCOPES.iter().any(|s| has(s))
    {
        return access_denied();
    }
    if method != "GET" {
        return Reply::error(
            405,
            "invalidRequest",
            "Only GET is implemented by the test server's drive API.",
        );
    }
    let q = match parse_query(query) {
        Ok(q) => q,
        Err(r) => return r,
    };
    let decoded: Vec<String> = path.trim_matches('/').split('/').map(pct_decode).collect();
    let segs: Vec<&str> = decoded.iter().map(String::as_str).collect();
    let mut st = svc.state();
    let target = match resolve(&st, svc, who.user, &segs) {
        Ok(t) => t,
        Err(r) => return r,
    };
    let (drive_id, item_id, tail) = match target {
        Target::Drive(d) => {
            let Some(drive) = st.drive(&d) else {
                return not_found();
            };
            if !allowed(&drive.owner) {
                return access_denied();
            }
            let own = drive.owner == who.user;
            let kind = match (drive.personal, own) {
                (true, _) => "personal",
                (false, true) => "business",
                (false, false) => "documentLibrary",
            };
            return Reply::json(
                200,
                json!({
                    "@odata.context": format!("{origin}/v1.0/$metadata#drives/$entity"),
                    "id": drive.id,
                    "driveType": kind,
                    "name": if own { "OneDrive" } else { "Documents" },
                    "owner": { "user": { "id": drive.owner, "displayName": drive.owner } },
                    "webUrl": drive.web_url(),
                }),
            );
        }
        Target::Item { drive, item, tail } => (drive, item, tail),
        Target::Path { drive, path, tail } => {
            if st.drive(&drive).is_some_and(|d| !allowed(&d.owner)) {
                return access_denied();
            }
            match item_at(&st, svc, &drive, &path) {
                Ok(item) => (drive, item, tail),
                Err(r) => return r,
            }
        }
    };
    let Some(drive) = st.drive(&drive_id) else {
        return not_found();
    };
    if !allowed(&drive.owner) {
        return access_denied();
    }
    let Some(item) = drive
        .item(&item_id)
        .filter(|_| !svc.faults.is_hidden(&item_id))
    else {
        return not_found();
    };
    match tail {
        Tail::Item => {
            let mut m = item_json(svc, &mut st, origin, &drive_id, &item_id, who.user);
            if q.expand_children {
                let (children, next) = children_page(
                    svc, &mut st, origin, &drive_id, &item_id, who.user, &q, path,
                );
                m.insert("children".into(), Value::Array(children));
                if let Some(n) = next {
                    m.insert("children@odata.nextLink".into(), json!(n));
                }
            }
            let mut out = Map::new();
            out.insert(
                "@odata.context".into(),
                json!(format!(
                    "{origin}/v1.0/$metadata#drives('{drive_id}')/items/$entity"
                )),
            );
            out.extend(select(m, &q.select));
            Reply::json(200, Value::Object(out))
        }
        Tail::Children => {
            if matches!(item.kind, ItemKind::File { .. }) {
                return Reply::json(
                    200,
                    json!({
                        "@odata.context": format!("{origin}/v1.0/$metadata#drives('{drive_id}')/items('{item_id}')/children"),
                        "value": [],
                    }),
                );
            }
            let (children, next) = children_page(
                svc, &mut st, origin, &drive_id, &item_id, who.user, &q, path,
            );
            let mut out = Map::new();
            out.insert(
                "@odata.context".into(),
                json!(format!(
                    "{origin}/v1.0/$metadata#drives('{drive_id}')/items('{item_id}')/children"
                )),
            );
            if let Some(n) = next {
                out.insert("@odata.nextLink".into(), json!(n));
            }
            out.insert(
                "value".into(),
                Value::Array(
                    children
                        .into_iter()
                        .map(|c| match c {
                            Value::Object(m) => Value::Object(select(m, &q.select)),
                            v => v,
                        })
                        .collect(),
                ),
            );
            Reply::json(200, Value::Object(out))
        }
        Tail::Content => {
            if !matches!(item.kind, ItemKind::File { .. }) {
                return invalid("Only items with the file facet can be downloaded.");
            }
            if svc.faults.is_lost(&item_id) {
                return not_found();
            }
            let url = issue_ticket(svc, &mut st, origin, &drive_id, &item_id, who.user);
            Reply {
                status: 302,
                headers: vec![("Location".into(), url)],
                body: Body::Raw {
                    content_type: "text/plain".into(),
                    bytes: Vec::new(),
                },
            }
        }
    }
}

fn select(mut m: Map<String, Value>, sel: &Option<Vec<String>>) -> Map<String, Value> {
    if let Some(sel) = sel {
        // `id` always comes back, as the service sends it whatever `$select` says.
        m.retain(|k, _| k == "id" || sel.iter().any(|s| s == k));
    }
    m
}

/// A fresh pre-authenticated download URL for a file (expired ones are forgotten meanwhile).
fn issue_ticket(
    svc: &DriveService,
    st: &mut DriveState,
    origin: &str,
    drive: &str,
    item: &str,
    user: &str,
) -> String {
    let now = tokio::time::Instant::now();
    st.tickets.retain(|_, t| t.expires > now);
    let token = uuid::Uuid::new_v4().simple().to_string();
    st.tickets.insert(
        token.clone(),
        Ticket {
            drive: drive.to_owned(),
            item: item.to_owned(),
            user: user.to_owned(),
            expires: now + svc.faults.url_lifetime(),
        },
    );
    format!("{origin}{}{token}", super::DOWNLOAD_PREFIX)
}

/// One page of an item's visible children, by name, and the link to the next page.
#[allow(clippy::too_many_arguments)]
fn children_page(
    svc: &DriveService,
    st: &mut DriveState,
    origin: &str,
    drive_id: &str,
    item_id: &str,
    user: &str,
    q: &Query,
    path: &str,
) -> (Vec<Value>, Option<String>) {
    let Some(drive) = st.drive(drive_id) else {
        return (Vec::new(), None);
    };
    let mut kids: Vec<(String, String)> = drive
        .items
        .iter()
        .filter(|i| i.parent.as_deref() == Some(item_id) && !svc.faults.is_hidden(&i.id))
        .map(|i| (i.name.to_lowercase(), i.id.clone()))
        .collect();
    kids.sort();
    // The service pages on its own terms: a page is never longer than its page size, whatever
    // `$top` asks (server-driven paging, <https://learn.microsoft.com/en-us/graph/paging>).
    let top = q.top.unwrap_or(st.page_size).min(st.page_size);
    let start = q.skip.min(kids.len());
    let end = start.saturating_add(top).min(kids.len());
    let next = (end < kids.len()).then(|| {
        let mut ser = url::form_urlencoded::Serializer::new(String::new());
        for (k, v) in &q.raw {
            if k != "$skiptoken" && k != "$top" && k != "$expand" {
                ser.append_pair(k, v);
            }
        }
        ser.append_pair("$top", &top.to_string());
        ser.append_pair("$skiptoken", &end.to_string());
        let children_path = if path.ends_with("/children") {
            path.to_owned()
        } else {
            format!("/drives/{drive_id}/items/{item_id}/children")
        };
        format!("{origin}/v1.0{children_path}?{}", ser.finish())
    });
    let ids: Vec<String> = kids[start..end].iter().map(|(_, id)| id.clone()).collect();
    let values = ids
        .iter()
        .map(|id| Value::Object(item_json(svc, st, origin, drive_id, id, user)))
        .collect();
    (values, next)
}

/// The bytes a file is served with now (garbled when switched so).
pub(crate) fn served_bytes(
    svc: &DriveService,
    item_id: &str,
    bytes: &bytes::Bytes,
) -> bytes::Bytes {
    if !svc.faults.is_garbled(item_id) {
        return bytes.clone();
    }
    // The OneNote header (file type GUIDs) kept so the file still looks like a section, the rest
    // noise of a fixed seed: the reader opens it and cannot parse it.
    let keep = bytes.len().min(64);
    let mut out = bytes[..keep].to_vec();
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    while out.len() < bytes.len() {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        out.push((x >> 24) as u8);
    }
    bytes::Bytes::from(out)
}

/// An item's driveItem JSON (without `@odata.context`).
fn item_json(
    svc: &DriveService,
    st: &mut DriveState,
    origin: &str,
    drive_id: &str,
    item_id: &str,
    user: &str,
) -> Map<String, Value> {
    let Some(drive) = st.drive(drive_id) else {
        return Map::new();
    };
    let Some(item) = drive.item(item_id).cloned() else {
        return Map::new();
    };
    // Names from the root down to the item's parent, for `parentReference.path`.
    let mut trail = Vec::new();
    let mut at = item.parent.clone();
    while let Some(p) = at {
        match drive.item(&p) {
            Some(i) if i.kind != ItemKind::Root => {
                trail.push(i.name.clone());
                at = i.parent.clone();
            }
            _ => break,
        }
    }
    trail.reverse();
    let size = size_of(svc, st, drive_id, item_id);
    let drive = st.drive(drive_id).expect("drive checked above");
    let child_count = drive
        .items
        .iter()
        .filter(|i| i.parent.as_deref() == Some(item_id) && !svc.faults.is_hidden(&i.id))
        .count();
    // A garbled file is another content: both tags move on.
    let garbled = u32::from(svc.faults.is_garbled(item_id));
    let parent_path: String = trail
        .iter()
        .map(|n| format!("/{}", super::web_segment(n)))
        .collect();
    let mut web_path = parent_path.clone();
    if item.kind != ItemKind::Root {
        web_path.push('/');
        web_path.push_str(&super::web_segment(&item.name));
    }
    let ts =
        |d: chrono::DateTime<chrono::Utc>| d.to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    let mut m = Map::new();
    m.insert("id".into(), json!(item.id));
    m.insert("name".into(), json!(item.name));
    m.insert("size".into(), json!(size));
    m.insert(
        "eTag".into(),
        json!(format!(
            "\"{{{}}},{}\"",
            item.guid,
            item.etag_version + garbled
        )),
    );
    // "In OneDrive for Business or SharePoint document libraries, the cTag property isn't
    // returned, if the driveItem has a folder facet" (resources/driveitem).
    if !matches!(item.kind, ItemKind::Root | ItemKind::Folder) {
        m.insert(
            "cTag".into(),
            json!(format!(
                "\"c:{{{}}},{}\"",
                item.guid,
                item.ctag_version + garbled
            )),
        );
    }
    m.insert("createdDateTime".into(), json!(ts(item.created)));
    m.insert("lastModifiedDateTime".into(), json!(ts(item.modified)));
    // A personal OneDrive's items open by their id; a business library's by their path.
    let web_url = if drive.personal {
        format!(
            "https://onedrive.live.com/redir?resid={}",
            item.id.replace('!', "%21")
        )
    } else {
        format!("{}{web_path}", drive.web_url())
    };
    m.insert("webUrl".into(), json!(web_url));
    if let Some(parent) = &item.parent {
        m.insert(
            "parentReference".into(),
            json!({
                "driveType": if drive.personal { "personal" } else { "business" },
                "driveId": drive.reported_id(),
                "id": parent,
                "path": format!("/drives/{drive_id}/root:{parent_path}"),
            }),
        );
    }
    match &item.kind {
        ItemKind::Root => {
            m.insert("root".into(), json!({}));
            m.insert("folder".into(), json!({ "childCount": child_count }));
        }
        ItemKind::Folder => {
            m.insert("folder".into(), json!({ "childCount": child_count }));
        }
        ItemKind::Notebook => {
            m.insert("package".into(), json!({ "type": "oneNote" }));
        }
        ItemKind::File { mime, bytes } => {
            // Every file's `quickXorHash`, as OneDrive and SharePoint give it
            // (<https://learn.microsoft.com/en-us/graph/api/resources/hashes>), of the bytes served
            // (computed with the product's implementation, which the published vectors check).
            let mut h = notebridge::drive::quickxor::QuickXor::new();
            h.update(&served_bytes(svc, item_id, bytes));
            m.insert(
                "file".into(),
                json!({ "mimeType": mime, "hashes": { "quickXorHash": h.base64() } }),
            );
            let url = issue_ticket(svc, st, origin, drive_id, item_id, user);
            m.insert("@microsoft.graph.downloadUrl".into(), json!(url));
        }
    }
    m
}

/// A file's announced size, or the sum of the visible files below a folder.
fn size_of(svc: &DriveService, st: &DriveState, drive_id: &str, item_id: &str) -> u64 {
    let Some(drive) = st.drive(drive_id) else {
        return 0;
    };
    let file_size = |i: &super::DriveItem| match &i.kind {
        ItemKind::File { .. } if svc.faults.listed_size(&i.id).is_some() => {
            svc.faults.listed_size(&i.id).unwrap_or(0)
        }
        ItemKind::File { bytes, .. } => {
            let extra = if svc.faults.is_too_large(&i.id) {
                TOO_LARGE_EXTRA
            } else {
                0
            };
            bytes.len() as u64 + extra
        }
        _ => 0,
    };
    drive
        .items
        .iter()
        .filter(|i| matches!(i.kind, ItemKind::File { .. }) && !svc.faults.is_hidden(&i.id))
        .filter(|i| {
            // The file itself, or a file with `item_id` among its ancestors (depth bounded by the
            // drive's own items, walked without recursion).
            let mut at = Some(i.id.clone());
            let mut steps = 0;
            while let Some(id) = at {
                if id == item_id {
                    return true;
                }
                steps += 1;
                if steps > drive.items.len() {
                    return false;
                }
                at = drive.item(&id).and_then(|x| x.parent.clone());
            }
            false
        })
        .map(file_size)
        .sum()
}
