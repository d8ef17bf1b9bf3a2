//! The read API under `/v1.0`: one router shared by plain requests and inner `$batch` requests, so both
//! obey exactly the same rules (paging, `$top` cap, `pagelevel`, `$select`, `$expand`, error bodies).

use chrono::{DateTime, SecondsFormat, Utc};
use serde_json::{json, Map, Value};

use super::model::{Notebook, Page, Resource, Section, SectionGroup, UserNotes};
use super::teams::Owner;
use crate::TestUser;

/// A response body before it is put on the wire (or into a batch response).
#[derive(Clone, Debug)]
pub enum Body {
    /// `application/json`.
    Json(Value),
    /// `text/html` (page content).
    Html(String),
    /// Resource bytes, computed when sent.
    Binary(Resource),
    /// Bytes with their own content type (page content as `multipart/mixed` with ink).
    Raw {
        /// `Content-Type` header value.
        content_type: String,
        /// The body.
        bytes: Vec<u8>,
    },
}

/// A response of the router.
#[derive(Clone, Debug)]
pub struct Reply {
    /// HTTP status.
    pub status: u16,
    /// Extra headers.
    pub headers: Vec<(String, String)>,
    /// Body.
    pub body: Body,
}

impl Reply {
    /// A JSON reply.
    pub fn json(status: u16, v: Value) -> Self {
        Self {
            status,
            headers: Vec::new(),
            body: Body::Json(v),
        }
    }

    /// A Graph error reply: `{"error":{"code","message","innerError":{..}}}`; OneNote's numeric codes
    /// also carry `@api.url`, as the service's do.
    pub fn error(status: u16, code: &str, message: &str) -> Self {
        let mut e = json!({
            "code": code,
            "message": message,
            "innerError": {
                "date": Utc::now().to_rfc3339_opts(SecondsFormat::Secs, true),
                "request-id": uuid::Uuid::new_v4().to_string(),
                "client-request-id": uuid::Uuid::new_v4().to_string(),
            }
        });
        if code.chars().all(|c| c.is_ascii_digit()) {
            e["@api.url"] = json!(format!("https://aka.ms/onenote-errors#C{code}"));
        }
        Self::json(status, json!({ "error": e }))
    }

    fn not_found() -> Self {
        Self::error(404, "20102", "The requested resource does not exist.")
    }
}

/// What one request may see.
pub struct Ctx<'a> {
    /// The server's `/v1.0` URL.
    pub base: &'a str,
    /// The authenticated user id.
    pub user: &'a str,
    /// Whose content is read: the user's own, a group's or a site's.
    pub owner: &'a Owner,
    /// The user's profile, if registered.
    pub user_info: Option<&'a TestUser>,
    /// The user's content.
    pub notes: &'a UserNotes,
    /// Leave `@odata.nextLink` out (fault).
    pub omit_next_links: bool,
    /// Pages and resources read from section files (their HTML and bytes are not generated).
    pub files: &'a super::drive::FilesContent,
    /// The field behaviours switched on.
    pub field: &'a super::faults::Field,
}

#[derive(Debug, Default)]
struct Query {
    raw: Vec<(String, String)>,
    select: Option<Vec<String>>,
    expand: Option<String>,
    top: Option<usize>,
    skip: usize,
    pagelevel: bool,
    /// `$orderby`: a property and whether descending (page listings only).
    orderby: Option<(String, bool)>,
    /// `$count=true`: `@odata.count` with the collection's size (page listings only).
    count: bool,
    /// `$filter`, as written (only `parentSection/id eq '{id}'` on `pages` is implemented).
    filter: Option<String>,
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
            "$select" => q.select = Some(v.split(',').map(|s| s.trim().to_owned()).collect()),
            "$expand" => q.expand = Some(v),
            "$top" => {
                q.top = Some(v.parse().map_err(|_| {
                    Reply::error(400, "BadRequest", &format!("Invalid value '{v}' for $top."))
                })?)
            }
            "$skip" => {
                q.skip = v.parse().map_err(|_| {
                    Reply::error(
                        400,
                        "BadRequest",
                        &format!("Invalid value '{v}' for $skip."),
                    )
                })?
            }
            "pagelevel" => q.pagelevel = v.eq_ignore_ascii_case("true"),
            "$orderby" => {
                let mut parts = v.split_whitespace();
                let prop = parts.next().unwrap_or_default().to_owned();
                let desc = match parts.next().map(str::to_ascii_lowercase).as_deref() {
                    None | Some("asc") => false,
                    Some("desc") => true,
                    Some(other) => {
                        return Err(Reply::error(
                            400,
                            "BadRequest",
                            &format!("Invalid sort direction '{other}' in $orderby."),
                        ))
                    }
                };
                q.orderby = Some((prop, desc));
            }
            "$count" => {
                q.count = match v.to_ascii_lowercase().as_str() {
                    "true" => true,
                    "false" => false,
                    _ => {
                        return Err(Reply::error(
                            400,
                            "BadRequest",
                            &format!("Invalid value '{v}' for $count."),
                        ))
                    }
                }
            }
            "$filter" => q.filter = Some(v),
            "$search" => {
                // Refusing loudly beats silently returning unfiltered data that a client would trust.
                return Err(Reply::error(
                    400,
                    "BadRequest",
                    &format!("{k} is not implemented by the notebridge test server"),
                ));
            }
            _ => {}
        }
    }
    Ok(q)
}

/// The section a `$filter` of `parentSection/id eq '{id}'` names (OData doubles a quote inside a
/// string); `None` for any other filter, which the test server does not implement.
fn parent_section_filter(filter: &str) -> Option<String> {
    let quoted = filter.trim().strip_prefix("parentSection/id eq '")?;
    let id = quoted.strip_suffix('\'')?;
    Some(id.replace("''", "'"))
}

fn filter_refused(filter: &str) -> Reply {
    Reply::error(
        400,
        "BadRequest",
        &format!(
            "$filter={filter} is not implemented by the notebridge test server (only \
             parentSection/id eq '{{id}}' on pages)"
        ),
    )
}

pub(crate) fn pct_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            if let Some(v) = std::str::from_utf8(&b[i + 1..i + 3])
                .ok()
                .and_then(|h| u8::from_str_radix(h, 16).ok())
            {
                out.push(v);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

const NOTEBOOK_PROPS: &[&str] = &[
    "id",
    "self",
    "createdDateTime",
    "displayName",
    "lastModifiedDateTime",
    "isDefault",
    "userRole",
    "isShared",
    "sectionsUrl",
    "sectionGroupsUrl",
    "createdBy",
    "lastModifiedBy",
    "links",
    "sections",
    "sectionGroups",
];
const GROUP_PROPS: &[&str] = &[
    "id",
    "self",
    "createdDateTime",
    "displayName",
    "lastModifiedDateTime",
    "sectionsUrl",
    "sectionGroupsUrl",
    "createdBy",
    "lastModifiedBy",
    "parentNotebook",
    "parentSectionGroup",
    "sections",
    "sectionGroups",
];
const SECTION_PROPS: &[&str] = &[
    "id",
    "self",
    "createdDateTime",
    "displayName",
    "lastModifiedDateTime",
    "isDefault",
    "pagesUrl",
    "createdBy",
    "lastModifiedBy",
    "links",
    "parentNotebook",
    "parentSectionGroup",
];
const PAGE_PROPS: &[&str] = &[
    "id",
    "self",
    "createdDateTime",
    "title",
    "createdByAppId",
    "contentUrl",
    "lastModifiedDateTime",
    "level",
    "order",
    "links",
    "userTags",
    "parentSection",
    "parentNotebook",
];

#[derive(Clone, Copy)]
enum Kind {
    Notebook,
    Group,
    Section,
    Page,
}

impl Kind {
    fn props(self) -> &'static [&'static str] {
        match self {
            Kind::Notebook => NOTEBOOK_PROPS,
            Kind::Group => GROUP_PROPS,
            Kind::Section => SECTION_PROPS,
            Kind::Page => PAGE_PROPS,
        }
    }
    fn type_name(self) -> &'static str {
        match self {
            Kind::Notebook => "microsoft.graph.notebook",
            Kind::Group => "microsoft.graph.sectionGroup",
            Kind::Section => "microsoft.graph.onenoteSection",
            Kind::Page => "microsoft.graph.onenotePage",
        }
    }
}

fn check_select(kind: Kind, select: &Option<Vec<String>>) -> Result<(), Reply> {
    if let Some(sel) = select {
        for s in sel {
            if !kind.props().contains(&s.as_str()) {
                return Err(Reply::error(
                    400,
                    "BadRequest",
                    &format!(
                        "Could not find a property named '{s}' on type '{}'.",
                        kind.type_name()
                    ),
                ));
            }
        }
    }
    Ok(())
}

fn apply_select(mut m: Map<String, Value>, select: &Option<Vec<String>>) -> Map<String, Value> {
    if let Some(sel) = select {
        m.retain(|k, _| {
            let base = k.split('@').next().unwrap_or(k);
            sel.iter().any(|s| s == base)
        });
    }
    m
}

/// Orders two JSON values of one property: numbers as numbers, everything else as text.
fn cmp_json(a: &Value, b: &Value) -> std::cmp::Ordering {
    match (a.as_f64(), b.as_f64()) {
        (Some(x), Some(y)) => x.total_cmp(&y),
        _ => a
            .as_str()
            .unwrap_or_default()
            .cmp(b.as_str().unwrap_or_default()),
    }
}

fn ts(d: DateTime<Utc>) -> String {
    d.to_rfc3339_opts(SecondsFormat::Millis, true)
}

/// The GUID OneNote client links use, derived from the id's hex part.
/// The GUID OneNote shows for an item id (in `oneNoteClientUrl`, and in `onenote:` links).
pub(crate) fn guid_of(id: &str) -> String {
    let hex: String = id
        .chars()
        .skip(2)
        .filter(char::is_ascii_hexdigit)
        .take(32)
        .collect();
    if hex.len() < 32 {
        return "00000000-0000-0000-0000-000000000000".into();
    }
    format!(
        "{}-{}-{}-{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    )
}

/// A notebook's `links.oneNoteWebUrl.href`: the URL the drive API's `/shares` resolves to the
/// notebook's package item.
pub fn notebook_web_url(notebook_id: &str) -> String {
    format!("https://onedrive.live.com/edit.aspx?resid={notebook_id}")
}

fn web_path(name: &str) -> String {
    name.replace(' ', "%20")
}

impl Ctx<'_> {
    fn owner_url(&self) -> String {
        format!("{}/{}/onenote", self.base, self.owner.url_path())
    }

    fn identity(&self) -> Value {
        let name = self
            .user_info
            .map(|u| u.display_name.clone())
            .unwrap_or_else(|| self.user.to_owned());
        json!({ "user": { "id": self.user, "displayName": name } })
    }

    fn context(&self, tail: &str) -> String {
        format!(
            "{}/$metadata#{}/onenote/{tail}",
            self.base,
            self.owner.segment()
        )
    }

    /// A container's `displayName`: its name, or `null` where the field switch says so.
    fn name(&self, id: &str, name: &str) -> Value {
        if self.field.null_names.iter().any(|n| n == id) {
            Value::Null
        } else {
            json!(name)
        }
    }

    fn nb_ref(&self, nb: &Notebook) -> Value {
        json!({
            "id": nb.id,
            "displayName": self.name(&nb.id, &nb.display_name),
            "self": format!("{}/notebooks/{}", self.owner_url(), nb.id),
        })
    }

    fn notebook(&self, nb: &Notebook) -> Map<String, Value> {
        let o = self.owner_url();
        // A notebook served from files links to its folder in the drive; a generated one to a
        // personal OneDrive's `Documents`.
        let (client, web) = match self.files.notebook_links(&nb.id) {
            Some((c, w)) => (c.to_owned(), w.to_owned()),
            None => (
                format!(
                    "onenote:https://d.docs.live.net/{}/Documents/{}",
                    self.user,
                    web_path(&nb.display_name)
                ),
                notebook_web_url(&nb.id),
            ),
        };
        let v = json!({
            "id": nb.id,
            "self": format!("{o}/notebooks/{}", nb.id),
            "createdDateTime": ts(nb.created),
            "displayName": self.name(&nb.id, &nb.display_name),
            "lastModifiedDateTime": ts(nb.modified),
            "isDefault": nb.is_default,
            "userRole": "Owner",
            "isShared": false,
            "sectionsUrl": format!("{o}/notebooks/{}/sections", nb.id),
            "sectionGroupsUrl": format!("{o}/notebooks/{}/sectionGroups", nb.id),
            "createdBy": self.identity(),
            "lastModifiedBy": self.identity(),
            "links": {
                "oneNoteClientUrl": { "href": client },
                "oneNoteWebUrl": { "href": web },
            },
        });
        obj(v)
    }

    fn group_ref(&self, g: &SectionGroup) -> Value {
        json!({
            "id": g.id,
            "displayName": self.name(&g.id, &g.display_name),
            "self": format!("{}/sectionGroups/{}", self.owner_url(), g.id),
        })
    }

    fn parents(&self, m: &mut Map<String, Value>, nb: &str, group: Option<&str>, of: &str) {
        let nb = self.notes.notebook(nb);
        m.insert(
            "parentNotebook@odata.context".into(),
            json!(self.context(&format!("{of}/parentNotebook(id,displayName,self)/$entity"))),
        );
        m.insert(
            "parentNotebook".into(),
            nb.map(|n| self.nb_ref(n)).unwrap_or(Value::Null),
        );
        m.insert(
            "parentSectionGroup@odata.context".into(),
            json!(self.context(&format!(
                "{of}/parentSectionGroup(id,displayName,self)/$entity"
            ))),
        );
        m.insert(
            "parentSectionGroup".into(),
            group
                .and_then(|g| self.notes.section_group(g))
                .map(|g| self.group_ref(g))
                .unwrap_or(Value::Null),
        );
    }

    fn group(&self, g: &SectionGroup) -> Map<String, Value> {
        let o = self.owner_url();
        let mut m = obj(json!({
            "id": g.id,
            "self": format!("{o}/sectionGroups/{}", g.id),
            "createdDateTime": ts(g.created),
            "displayName": self.name(&g.id, &g.display_name),
            "lastModifiedDateTime": ts(g.modified),
            "sectionsUrl": format!("{o}/sectionGroups/{}/sections", g.id),
            "sectionGroupsUrl": format!("{o}/sectionGroups/{}/sectionGroups", g.id),
            "createdBy": self.identity(),
            "lastModifiedBy": self.identity(),
        }));
        self.parents(
            &mut m,
            &g.notebook_id,
            g.parent_group.as_deref(),
            &format!("sectionGroups('{}')", g.id),
        );
        m
    }

    fn section(&self, s: &Section) -> Map<String, Value> {
        let o = self.owner_url();
        let nb_name = self
            .notes
            .notebook(&s.notebook_id)
            .map(|n| n.display_name.clone())
            .unwrap_or_default();
        let mut m = obj(json!({
            "id": s.id,
            "self": format!("{o}/sections/{}", s.id),
            "createdDateTime": ts(s.created),
            "displayName": self.name(&s.id, &s.display_name),
            "lastModifiedDateTime": ts(s.modified),
            "isDefault": s.is_default,
            "pagesUrl": format!("{o}/sections/{}/pages", s.id),
            "createdBy": self.identity(),
            "lastModifiedBy": self.identity(),
            "links": {
                "oneNoteClientUrl": { "href": format!("onenote:https://d.docs.live.net/{}/Documents/{}/{}.one#section-id={{{}}}&end", self.user, web_path(&nb_name), web_path(&s.display_name), guid_of(&s.id)) },
                "oneNoteWebUrl": { "href": format!("https://onedrive.live.com/view.aspx?resid={}", s.id) },
            },
        }));
        self.parents(
            &mut m,
            &s.notebook_id,
            s.parent_group.as_deref(),
            &format!("sections('{}')", s.id),
        );
        m
    }

    fn page(&self, p: &Page, pagelevel: bool) -> Map<String, Value> {
        let o = self.owner_url();
        let section = self.notes.section(&p.section_id);
        let (sec_name, nb_name) = section
            .map(|s| {
                (
                    s.display_name.clone(),
                    self.notes
                        .notebook(&s.notebook_id)
                        .map(|n| n.display_name.clone())
                        .unwrap_or_default(),
                )
            })
            .unwrap_or_default();
        let mut m = obj(json!({
            "id": p.id,
            "self": format!("{o}/pages/{}", p.id),
            "createdDateTime": ts(p.created),
            "title": p.title,
            "createdByAppId": "",
            "contentUrl": format!("{o}/pages/{}/content", p.id),
            "lastModifiedDateTime": ts(p.modified),
            "links": {
                "oneNoteClientUrl": { "href": format!(
                    "onenote:https://d.docs.live.net/{}/Documents/{}/{}.one#{}&section-id={{{}}}&page-id={{{}}}&end",
                    self.user, web_path(&nb_name), web_path(&sec_name), web_path(&p.title),
                    guid_of(&p.section_id), self.notes.client_guid(&p.id)) },
                "oneNoteWebUrl": { "href": format!("https://onedrive.live.com/view.aspx?resid={}&wd=target%28{}.one%7C{}%2F{}%29", p.section_id, web_path(&sec_name), guid_of(&p.section_id), web_path(&p.title)) },
            },
            "userTags": [],
        }));
        if self.field.generic_team_page_links && !matches!(self.owner, Owner::User(_)) {
            let generic = json!({ "href": "https://www.onenote.com/notebooks" });
            m.insert(
                "links".into(),
                json!({ "oneNoteClientUrl": generic, "oneNoteWebUrl": generic }),
            );
        }
        if pagelevel {
            m.insert("level".into(), json!(p.level));
            m.insert("order".into(), json!(p.order));
        }
        m.insert(
            "parentSection@odata.context".into(),
            json!(self.context(&format!(
                "pages('{}')/parentSection(id,displayName,self)/$entity",
                p.id
            ))),
        );
        m.insert(
            "parentSection".into(),
            section
                .map(|s| {
                    json!({
                        "id": s.id,
                        "displayName": self.name(&s.id, &s.display_name),
                        "self": format!("{o}/sections/{}", s.id),
                    })
                })
                .unwrap_or(Value::Null),
        );
        m
    }
}

fn obj(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

/// One `$expand` item, e.g. `sectionGroups($levels=max;$expand=sections)`.
#[derive(Clone, Debug, PartialEq)]
struct ExpandItem {
    name: String,
    expand: Vec<ExpandItem>,
    select: Option<Vec<String>>,
    /// Remaining levels of self-nesting (`$levels`); `u32::MAX` for `max`.
    levels: u32,
}

fn split_top(s: &str, sep: char) -> Vec<String> {
    let (mut depth, mut cur, mut out) = (0i32, String::new(), Vec::new());
    for c in s.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            _ => {}
        }
        if c == sep && depth == 0 {
            out.push(std::mem::take(&mut cur));
        } else {
            cur.push(c);
        }
    }
    out.push(cur);
    out
}

fn bad_expand(s: &str) -> Reply {
    Reply::error(400, "BadRequest", &format!("Invalid $expand: '{s}'."))
}

fn parse_expand(s: &str) -> Result<Vec<ExpandItem>, Reply> {
    let mut out = Vec::new();
    for part in split_top(s, ',') {
        let part = part.trim();
        if part.is_empty() {
            return Err(bad_expand(s));
        }
        let (name, opts) = match part.find('(') {
            Some(i) if part.ends_with(')') => (&part[..i], Some(&part[i + 1..part.len() - 1])),
            Some(_) => return Err(bad_expand(s)),
            None => (part, None),
        };
        let mut item = ExpandItem {
            name: name.trim().to_owned(),
            expand: Vec::new(),
            select: None,
            levels: 1,
        };
        if let Some(opts) = opts {
            for opt in split_top(opts, ';') {
                let (k, v) = opt.split_once('=').ok_or_else(|| bad_expand(s))?;
                match k.trim() {
                    "$expand" => item.expand = parse_expand(v)?,
                    "$select" => {
                        item.select = Some(v.split(',').map(|x| x.trim().to_owned()).collect())
                    }
                    "$levels" => {
                        item.levels = if v.trim() == "max" {
                            u32::MAX
                        } else {
                            v.trim().parse().map_err(|_| bad_expand(s))?
                        }
                    }
                    _ => return Err(bad_expand(s)),
                }
            }
        }
        out.push(item);
    }
    Ok(out)
}

enum Container<'a> {
    Notebook(&'a str),
    Group(&'a str),
}

impl Ctx<'_> {
    fn expand_container(
        &self,
        m: &mut Map<String, Value>,
        c: &Container,
        items: &[ExpandItem],
    ) -> Result<(), Reply> {
        let (nb, grp, ctx_of) = match c {
            Container::Notebook(id) => (Some(*id), None, format!("notebooks('{id}')")),
            Container::Group(id) => (None, Some(*id), format!("sectionGroups('{id}')")),
        };
        for item in items {
            match item.name.as_str() {
                "sections" => {
                    check_select(Kind::Section, &item.select)?;
                    if !item.expand.is_empty() {
                        return Err(bad_expand(&item.name));
                    }
                    let v: Vec<Value> = self
                        .notes
                        .sections_in(nb, grp)
                        .into_iter()
                        .map(|s| Value::Object(apply_select(self.section(s), &item.select)))
                        .collect();
                    m.insert(
                        "sections@odata.context".into(),
                        json!(self.context(&format!("{ctx_of}/sections"))),
                    );
                    m.insert("sections".into(), Value::Array(v));
                }
                "sectionGroups" => {
                    check_select(Kind::Group, &item.select)?;
                    let mut nested = item.expand.clone();
                    if item.levels > 1 {
                        let mut again = item.clone();
                        again.levels = if item.levels == u32::MAX {
                            u32::MAX
                        } else {
                            item.levels - 1
                        };
                        nested.retain(|n| n.name != "sectionGroups");
                        nested.push(again);
                    }
                    let mut v = Vec::new();
                    for g in self.notes.groups_in(nb, grp) {
                        let mut gm = apply_select(self.group(g), &item.select);
                        self.expand_container(&mut gm, &Container::Group(&g.id), &nested)?;
                        v.push(Value::Object(gm));
                    }
                    m.insert(
                        "sectionGroups@odata.context".into(),
                        json!(self.context(&format!("{ctx_of}/sectionGroups"))),
                    );
                    m.insert("sectionGroups".into(), Value::Array(v));
                }
                other => {
                    return Err(Reply::error(
                        400,
                        "BadRequest",
                        &format!("Could not find a navigation property named '{other}'."),
                    ))
                }
            }
        }
        Ok(())
    }
}

struct Listing {
    kind: Kind,
    context: String,
    items: Vec<Map<String, Value>>,
    /// `Some((default, max))` for paged collections (pages).
    paging: Option<(usize, usize)>,
}

impl Ctx<'_> {
    fn list(&self, path: &str, q: &Query, mut l: Listing) -> Reply {
        if let Err(r) = check_select(l.kind, &q.select) {
            return r;
        }
        if !matches!(l.kind, Kind::Page) && (q.orderby.is_some() || q.count) {
            // Refusing loudly beats silently returning unsorted data that a client would trust.
            return Reply::error(
                400,
                "BadRequest",
                "$orderby and $count are implemented by the notebridge test server for page \
                 listings only",
            );
        }
        if matches!(l.kind, Kind::Page)
            && self.field.refuse_count_and_links
            && (q.count || q.select.iter().flatten().any(|f| f == "links"))
        {
            return Reply::error(
                400,
                "BadRequest",
                "The query specified in the URI is not valid (refused by the field switch).",
            );
        }
        if let Some((prop, desc)) = &q.orderby {
            if !l.items.iter().all(|m| m.contains_key(prop.as_str())) {
                return Reply::error(
                    400,
                    "BadRequest",
                    &format!("Could not find a property named '{prop}' to order by."),
                );
            }
            // A stable sort on the one key, as OData asks (ties keep the default order).
            l.items.sort_by(|a, b| {
                let o = cmp_json(&a[prop.as_str()], &b[prop.as_str()]);
                if *desc {
                    o.reverse()
                } else {
                    o
                }
            });
        }
        let top = match (q.top, l.paging) {
            (Some(t), Some((_, max))) if t > max => {
                return Reply::error(
                    400,
                    "20129",
                    &format!("The $top query parameter value exceeds the maximum of {max}."),
                )
            }
            (Some(t), _) => t,
            (None, Some((default, _))) => default,
            (None, None) => usize::MAX,
        };
        let total = l.items.len();
        let start = q.skip.min(total);
        let end = start.saturating_add(top).min(total);
        let value: Vec<Value> = l.items[start..end]
            .iter()
            .cloned()
            .map(|m| Value::Object(apply_select(m, &q.select)))
            .collect();
        let context = match &q.select {
            Some(sel) => format!("{}({})", l.context, sel.join(",")),
            None => l.context,
        };
        let mut out = Map::new();
        out.insert("@odata.context".into(), json!(context));
        if q.count && !(self.field.no_count_with_top && q.top.is_some()) {
            out.insert("@odata.count".into(), json!(total));
        }
        if end < total && !self.omit_next_links {
            let mut ser = url::form_urlencoded::Serializer::new(String::new());
            for (k, v) in &q.raw {
                if k != "$skip" {
                    ser.append_pair(k, v);
                }
            }
            ser.append_pair("$skip", &end.to_string());
            out.insert(
                "@odata.nextLink".into(),
                json!(format!("{}{}?{}", self.base, path, ser.finish())),
            );
        }
        out.insert("value".into(), Value::Array(value));
        Reply::json(200, Value::Object(out))
    }

    fn entity(&self, context: String, q: &Query, kind: Kind, m: Map<String, Value>) -> Reply {
        if let Err(r) = check_select(kind, &q.select) {
            return r;
        }
        let mut out = Map::new();
        out.insert("@odata.context".into(), json!(context));
        out.extend(apply_select(m, &q.select));
        Reply::json(200, Value::Object(out))
    }

    fn with_expand(
        &self,
        q: &Query,
        items: Vec<(Map<String, Value>, Container)>,
    ) -> Result<Vec<Map<String, Value>>, Reply> {
        let exp = match &q.expand {
            Some(e) => parse_expand(e)?,
            None => Vec::new(),
        };
        items
            .into_iter()
            .map(|(m, c)| {
                // $select applies to the entity's own properties; expanded ones come back regardless.
                let mut m = apply_select(m, &q.select);
                self.expand_container(&mut m, &c, &exp)?;
                Ok(m)
            })
            .collect()
    }
}

/// Routes one GET below `/v1.0`. `path` starts with `/` (e.g. `/me/onenote/notebooks`).
pub fn dispatch(ctx: &Ctx, method: &str, path: &str, query: &str) -> Reply {
    let q = match parse_query(query) {
        Ok(q) => q,
        Err(r) => return r,
    };
    let segs: Vec<String> = path.trim_matches('/').split('/').map(pct_decode).collect();
    let (owner, rest) = match segs.first().map(String::as_str) {
        Some("me") => ("me".to_owned(), &segs[1..]),
        Some(s) if s.starts_with("users('") && s.ends_with("')") => {
            (s[7..s.len() - 2].to_owned(), &segs[1..])
        }
        Some("users") if segs.len() > 1 => (segs[1].clone(), &segs[2..]),
        // The owner's access was checked before (`teams::Teams::route`).
        Some("groups" | "sites")
            if segs.len() > 1 && *ctx.owner != Owner::User(ctx.user.into()) =>
        {
            ("me".to_owned(), &segs[2..])
        }
        Some(s)
            if (s.starts_with("groups('") || s.starts_with("sites('"))
                && *ctx.owner != Owner::User(ctx.user.into()) =>
        {
            ("me".to_owned(), &segs[1..])
        }
        _ => {
            return Reply::error(
                400,
                "BadRequest",
                &format!("Resource not found for the segment '{}'.", segs[0]),
            )
        }
    };
    let upn = ctx.user_info.map(|u| u.upn.as_str());
    if owner != "me" && owner != ctx.user && Some(owner.as_str()) != upn {
        return Reply::error(
            403,
            "40004",
            "The user does not have permission to access the requested resource.",
        );
    }
    if method != "GET" {
        return Reply::error(
            405,
            "BadRequest",
            "Only GET is implemented by the test server.",
        );
    }
    let rest: Vec<&str> = rest.iter().map(String::as_str).collect();
    let in_section = match (&q.filter, rest.as_slice()) {
        (None, _) => None,
        (Some(f), ["onenote", "pages"]) => match parent_section_filter(f) {
            Some(id) => Some(id),
            None => return filter_refused(f),
        },
        // Refusing loudly beats silently returning unfiltered data that a client would trust.
        (Some(f), _) => return filter_refused(f),
    };
    let pagelevel_ok = matches!(
        rest.as_slice(),
        ["onenote", "sections", _, "pages"] | ["onenote", "pages", _]
    );
    if q.pagelevel && !pagelevel_ok {
        return Reply::error(
            400,
            "20104",
            "The pagelevel parameter is only supported on sections/{id}/pages and pages/{id}.",
        );
    }
    if q.expand.is_some()
        && !matches!(
            rest.as_slice(),
            ["onenote", "notebooks"]
                | ["onenote", "notebooks", _]
                | ["onenote", "sectionGroups"]
                | ["onenote", "sectionGroups", _]
                | ["onenote", "sectionGroups", _, "sectionGroups"]
                | ["onenote", "notebooks", _, "sectionGroups"]
        )
    {
        return Reply::error(
            400,
            "BadRequest",
            "$expand is only implemented on notebooks and section groups by the test server.",
        );
    }
    let n = ctx.notes;
    let r: Result<Reply, Reply> = (|| match rest.as_slice() {
        [] => Ok(me(ctx)),
        ["onenote", "notebooks"] => {
            let items = n
                .notebooks_sorted()
                .into_iter()
                .map(|nb| (ctx.notebook(nb), Container::Notebook(&nb.id)))
                .collect();
            let items = ctx.with_expand(&q, items)?;
            Ok(ctx.list_raw(path, &q, Kind::Notebook, ctx.context("notebooks"), items))
        }
        ["onenote", "notebooks", id] => {
            let nb = n.notebook(id).ok_or_else(Reply::not_found)?;
            let mut items =
                ctx.with_expand(&q, vec![(ctx.notebook(nb), Container::Notebook(&nb.id))])?;
            Ok(ctx.entity_raw(
                ctx.context("notebooks/$entity"),
                &q,
                Kind::Notebook,
                items.remove(0),
            ))
        }
        ["onenote", "notebooks", id, "sections"] => {
            n.notebook(id).ok_or_else(Reply::not_found)?;
            Ok(ctx.sections_reply(
                path,
                &q,
                Some(id),
                None,
                &format!("notebooks('{id}')/sections"),
            ))
        }
        ["onenote", "notebooks", id, "sectionGroups"] => {
            n.notebook(id).ok_or_else(Reply::not_found)?;
            ctx.groups_reply(
                path,
                &q,
                Some(id),
                None,
                &format!("notebooks('{id}')/sectionGroups"),
            )
        }
        ["onenote", "sectionGroups"] => ctx.groups_reply(path, &q, None, None, "sectionGroups"),
        ["onenote", "sectionGroups", id] => {
            let g = n.section_group(id).ok_or_else(Reply::not_found)?;
            let mut items = ctx.with_expand(&q, vec![(ctx.group(g), Container::Group(&g.id))])?;
            Ok(ctx.entity_raw(
                ctx.context("sectionGroups/$entity"),
                &q,
                Kind::Group,
                items.remove(0),
            ))
        }
        ["onenote", "sectionGroups", id, "sections"] => {
            n.section_group(id).ok_or_else(Reply::not_found)?;
            Ok(ctx.sections_reply(
                path,
                &q,
                None,
                Some(id),
                &format!("sectionGroups('{id}')/sections"),
            ))
        }
        ["onenote", "sectionGroups", id, "sectionGroups"] => {
            n.section_group(id).ok_or_else(Reply::not_found)?;
            ctx.groups_reply(
                path,
                &q,
                None,
                Some(id),
                &format!("sectionGroups('{id}')/sectionGroups"),
            )
        }
        ["onenote", "sections"] => Ok(ctx.sections_reply(path, &q, None, None, "sections")),
        ["onenote", "sections", id] => {
            let s = n.section(id).ok_or_else(Reply::not_found)?;
            Ok(ctx.entity(
                ctx.context("sections/$entity"),
                &q,
                Kind::Section,
                ctx.section(s),
            ))
        }
        ["onenote", "sections", id, "pages"] => {
            n.section(id).ok_or_else(Reply::not_found)?;
            let items = n
                .pages_in(id)
                .into_iter()
                .map(|p| ctx.page(p, q.pagelevel))
                .collect();
            Ok(ctx.list(
                path,
                &q,
                Listing {
                    kind: Kind::Page,
                    context: ctx.context(&format!("sections('{id}')/pages")),
                    items,
                    paging: Some((20, 100)),
                },
            ))
        }
        // Documented (`../pages[?filter,orderby,select,expand,top,skip,count]`, onenote-get-content):
        // every page the user has, each with its `parentSection` expanded by default (its id,
        // displayName and self, as [`Ctx::page`] gives it).
        ["onenote", "pages"] => {
            let hidden = |section: &str| {
                n.section(section)
                    .is_some_and(|s| ctx.field.empty_notebook_listings.contains(&s.notebook_id))
            };
            let mut pages: Vec<_> = n
                .pages
                .iter()
                .filter(|p| in_section.as_deref().is_none_or(|id| id == p.section_id))
                .filter(|p| !hidden(&p.section_id))
                .collect();
            // The documented default order: `lastModifiedTime desc`.
            pages.sort_by(|a, b| b.modified.cmp(&a.modified).then(a.order.cmp(&b.order)));
            let items = pages.into_iter().map(|p| ctx.page(p, false)).collect();
            Ok(ctx.list(
                path,
                &q,
                Listing {
                    kind: Kind::Page,
                    context: ctx.context("pages"),
                    items,
                    paging: Some((20, 100)),
                },
            ))
        }
        ["onenote", "pages", id] => {
            let p = n.page(id).ok_or_else(Reply::not_found)?;
            Ok(ctx.entity(
                ctx.context("pages/$entity"),
                &q,
                Kind::Page,
                ctx.page(p, q.pagelevel),
            ))
        }
        ["onenote", "pages", id, "content" | "$value"] => {
            let p = n.page(id).ok_or_else(Reply::not_found)?;
            let html = match ctx.files.page_html(id, ctx.base, &ctx.owner.segment()) {
                Some(h) => h,
                None => {
                    crate::generator::page_html_at(p, &n.resources, ctx.base, &ctx.owner.segment())
                }
            };
            let ink = q.raw.iter().any(|(k, v)| {
                k.eq_ignore_ascii_case("includeInkML") && v.eq_ignore_ascii_case("true")
            });
            Ok(super::ink::content_reply(p, html, ink))
        }
        ["onenote", "resources", id, "content" | "$value"] => {
            if let Some(r) = ctx.files.resource(&ctx.owner.data_key(), id) {
                return Ok(r);
            }
            let r = n.resources.get(*id).ok_or_else(Reply::not_found)?;
            Ok(Reply {
                status: 200,
                headers: Vec::new(),
                body: Body::Binary(r.clone()),
            })
        }
        _ => Err(Reply::error(
            400,
            "BadRequest",
            &format!(
                "Resource not found for the segment '{}'.",
                rest.last().copied().unwrap_or("")
            ),
        )),
    })();
    r.unwrap_or_else(|e| e)
}

impl Ctx<'_> {
    /// The sections directly in a notebook or a section group (every section with neither).
    fn sections_reply(
        &self,
        path: &str,
        q: &Query,
        notebook: Option<&str>,
        group: Option<&str>,
        context: &str,
    ) -> Reply {
        let items = self
            .notes
            .sections_in(notebook, group)
            .into_iter()
            .map(|s| self.section(s))
            .collect();
        self.list(
            path,
            q,
            Listing {
                kind: Kind::Section,
                context: self.context(context),
                items,
                paging: None,
            },
        )
    }

    /// The section groups directly in a notebook or a section group (every one with neither),
    /// expanded as the query asks.
    fn groups_reply(
        &self,
        path: &str,
        q: &Query,
        notebook: Option<&str>,
        group: Option<&str>,
        context: &str,
    ) -> Result<Reply, Reply> {
        let items = self
            .notes
            .groups_in(notebook, group)
            .into_iter()
            .map(|g| (self.group(g), Container::Group(&g.id)))
            .collect();
        let items = self.with_expand(q, items)?;
        Ok(self.list_raw(path, q, Kind::Group, self.context(context), items))
    }

    /// Like `list`, for items already selected and expanded.
    fn list_raw(
        &self,
        path: &str,
        q: &Query,
        kind: Kind,
        context: String,
        items: Vec<Map<String, Value>>,
    ) -> Reply {
        // Selection already happened before expansion; don't filter the expanded properties away.
        let q2 = Query {
            raw: q.raw.clone(),
            select: None,
            expand: None,
            top: q.top,
            skip: q.skip,
            pagelevel: q.pagelevel,
            orderby: q.orderby.clone(),
            count: q.count,
            filter: q.filter.clone(),
        };
        if let Err(r) = check_select(kind, &q.select) {
            return r;
        }
        let mut r = self.list(
            path,
            &q2,
            Listing {
                kind,
                context,
                items,
                paging: None,
            },
        );
        if let (Some(sel), Body::Json(v)) = (&q.select, &mut r.body) {
            if let Some(c) = v.get("@odata.context").and_then(Value::as_str) {
                v["@odata.context"] = json!(format!("{c}({})", sel.join(",")));
            }
        }
        r
    }

    fn entity_raw(&self, context: String, q: &Query, kind: Kind, m: Map<String, Value>) -> Reply {
        if let Err(r) = check_select(kind, &q.select) {
            return r;
        }
        let mut out = Map::new();
        out.insert("@odata.context".into(), json!(context));
        out.extend(m);
        Reply::json(200, Value::Object(out))
    }
}

fn me(ctx: &Ctx) -> Reply {
    let (upn, name) = match ctx.user_info {
        Some(u) => (u.upn.clone(), u.display_name.clone()),
        None => (format!("{}@contoso.test", ctx.user), ctx.user.to_owned()),
    };
    Reply::json(
        200,
        json!({
            "@odata.context": format!("{}/$metadata#users/$entity", ctx.base),
            "businessPhones": [],
            "displayName": name,
            "givenName": null,
            "jobTitle": null,
            "mail": upn,
            "mobilePhone": null,
            "officeLocation": null,
            "preferredLanguage": "en-US",
            "surname": null,
            "userPrincipalName": upn,
            "id": ctx.user,
        }),
    )
}
