//! Team notebooks on the Graph test server: Microsoft 365 groups and SharePoint sites, whose OneNote
//! content is served under `/groups/{id}/onenote/...` and `/sites/{id}/onenote/...` by the same
//! routes as `/me/onenote/...` (with the signed-in user's throttling), and the directory requests
//! that find them: `/me/memberOf`, `/me/followedSites` and the site lookup
//! `/sites/{hostname}:/{server-relative-path}`.
//!
//! The permission rules follow Microsoft's reference pages: OneNote content of groups and sites needs
//! the delegated `Notes.Read.All`; `memberOf` of the signed-in user needs only `User.Read`;
//! `followedSites` and the site lookup need `Sites.Read.All`; personal Microsoft accounts have no
//! directory (`memberOf` answers 404 as it does for them) and no groups or sites.

use std::collections::HashSet;

use serde_json::{json, Map, Value};

use super::routes::Reply;

/// A Microsoft 365 group (or a security group, which holds no notebooks).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TeamGroup {
    /// Directory object id.
    pub id: String,
    /// `displayName`.
    pub display_name: String,
    /// User ids of its members.
    pub members: Vec<String>,
    /// A Microsoft 365 ("Unified") group; `false`: a security group.
    pub unified: bool,
}

impl TeamGroup {
    /// A Microsoft 365 group with these members.
    pub fn new(id: &str, name: &str, members: &[&str]) -> Self {
        Self {
            id: id.to_owned(),
            display_name: name.to_owned(),
            members: members.iter().map(|m| m.to_string()).collect(),
            unified: true,
        }
    }
}

/// A SharePoint site.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TeamSite {
    /// Graph site id (`{hostname},{site collection id},{web id}`).
    pub id: String,
    /// `displayName`.
    pub display_name: String,
    /// `webUrl` (`https://contoso.sharepoint.com/sites/Design`).
    pub web_url: String,
    /// User ids who may read it.
    pub readers: Vec<String>,
    /// User ids who follow it (`/me/followedSites`); following needs reading too.
    pub followers: Vec<String>,
}

impl TeamSite {
    /// A site at `web_url` that `readers` may read and follow.
    pub fn new(id: &str, name: &str, web_url: &str, readers: &[&str]) -> Self {
        let readers: Vec<String> = readers.iter().map(|m| m.to_string()).collect();
        Self {
            id: id.to_owned(),
            display_name: name.to_owned(),
            web_url: web_url.to_owned(),
            followers: readers.clone(),
            readers,
        }
    }
}

/// Whose OneNote content a request reads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Owner {
    /// A user's own notebooks (`/me`, `/users/{id}`).
    User(String),
    /// A group's notebooks.
    Group(String),
    /// A site's notebooks.
    Site(String),
}

impl Owner {
    /// The key the server keeps the content under.
    pub fn data_key(&self) -> String {
        match self {
            Owner::User(u) => u.clone(),
            Owner::Group(g) => group_key(g),
            Owner::Site(s) => site_key(s),
        }
    }

    /// The OData segment (`users('x')`, `groups('x')`, `sites('x')`).
    pub fn segment(&self) -> String {
        match self {
            Owner::User(u) => format!("users('{u}')"),
            Owner::Group(g) => format!("groups('{g}')"),
            Owner::Site(s) => format!("sites('{s}')"),
        }
    }

    /// The URL path (`users/x`, `groups/x`, `sites/x`).
    pub fn url_path(&self) -> String {
        match self {
            Owner::User(u) => format!("users/{u}"),
            Owner::Group(g) => format!("groups/{g}"),
            Owner::Site(s) => format!("sites/{s}"),
        }
    }
}

/// The content key of a group's notebooks (see [`super::GraphServer::notes`]).
pub fn group_key(id: &str) -> String {
    format!("groups/{id}")
}

/// The content key of a site's notebooks.
pub fn site_key(id: &str) -> String {
    format!("sites/{id}")
}

/// Who asks: the token's user and the scopes it carries.
pub(crate) struct Who<'a> {
    pub(crate) user: &'a str,
    pub(crate) scopes: &'a [String],
}

impl Who<'_> {
    fn has(&self, scope: &str) -> bool {
        // Scopes are case-insensitive, and a ReadWrite grant includes reading.
        let rw = scope.replace(".Read", ".ReadWrite");
        self.scopes
            .iter()
            .any(|s| s.eq_ignore_ascii_case(scope) || s.eq_ignore_ascii_case(&rw))
    }
}

/// Where a request goes.
pub(crate) enum Route {
    /// Answered here (directory requests, refusals).
    Answered(Reply),
    /// OneNote content of this owner, served by the shared routes.
    OneNote(Owner),
}

/// The groups, sites and account kinds the server knows.
#[derive(Debug)]
pub(crate) struct Teams {
    groups: Vec<TeamGroup>,
    sites: Vec<TeamSite>,
    /// Users signed in with a personal Microsoft account.
    personal: HashSet<String>,
    /// Content keys whose document library holds over 5,000 OneNote items (error 10008).
    big_libraries: HashSet<String>,
    /// Items per page of directory collections.
    page_size: usize,
}

impl Default for Teams {
    fn default() -> Self {
        Self {
            groups: Vec::new(),
            sites: Vec::new(),
            personal: HashSet::new(),
            big_libraries: HashSet::new(),
            page_size: 100,
        }
    }
}

fn missing_notes_scope() -> Reply {
    Reply::error(
        403,
        "40004",
        "The OAuth token doesn't have the required scopes to perform the requested action.",
    )
}

fn access_denied() -> Reply {
    Reply::error(403, "accessDenied", "Access denied")
}

fn no_directory(path: &str) -> Reply {
    // What Graph answers a personal Microsoft account for directory requests (reported for
    // `/me/memberOf`): a 404 with an empty code.
    Reply::error(
        404,
        "",
        &format!("No HTTP resource was found that matches the request URI '{path}'."),
    )
}

fn too_many_items() -> Reply {
    Reply::error(
        403,
        "10008",
        "One or more of the document libraries on the user or group's OneDrive contains more than \
         5,000 OneNote items (notebooks, sections, section groups), and cannot be queried using the \
         API. Please make sure that none of the user or group's document libraries contains more \
         than 5,000 OneNote items.",
    )
}

impl Teams {
    pub(crate) fn add_group(&mut self, g: TeamGroup) {
        self.groups.retain(|o| o.id != g.id);
        self.groups.push(g);
    }

    pub(crate) fn add_site(&mut self, s: TeamSite) {
        self.sites.retain(|o| o.id != s.id);
        self.sites.push(s);
    }

    pub(crate) fn set_personal(&mut self, user: &str, personal: bool) {
        if personal {
            self.personal.insert(user.to_owned());
        } else {
            self.personal.remove(user);
        }
    }

    pub(crate) fn set_big_library(&mut self, key: &str, on: bool) {
        if on {
            self.big_libraries.insert(key.to_owned());
        } else {
            self.big_libraries.remove(key);
        }
    }

    pub(crate) fn set_page_size(&mut self, n: usize) {
        self.page_size = n.max(1);
    }

    /// Whether `path` is a directory request (not OneNote: OneNote's limits do not apply).
    /// Whether `user` may read what the content key `owner` holds: their own, a Microsoft 365
    /// group's they are a member of, a site's they may read.
    pub(crate) fn may_read(&self, user: &str, owner: &str) -> bool {
        if owner == user {
            return true;
        }
        if let Some(g) = owner.strip_prefix("groups/") {
            return self
                .groups
                .iter()
                .any(|x| x.id == g && x.unified && x.members.iter().any(|m| m == user));
        }
        if let Some(s) = owner.strip_prefix("sites/") {
            return self
                .sites
                .iter()
                .any(|x| x.id == s && x.readers.iter().any(|m| m == user));
        }
        false
    }

    pub(crate) fn is_directory(path: &str) -> bool {
        let segs: Vec<&str> = path.trim_matches('/').split('/').collect();
        match segs.as_slice() {
            ["me", "memberOf", ..] | ["me", "followedSites"] => true,
            ["sites", first, ..] => first.contains(':'),
            _ => false,
        }
    }

    /// Routes one request of `who`: directory requests are answered, OneNote requests get their
    /// owner after the permission checks.
    pub(crate) fn route(&self, who: &Who, base: &str, path: &str, query: &str) -> Route {
        let mut segs: Vec<String> = path
            .trim_matches('/')
            .split('/')
            .map(super::routes::pct_decode)
            .collect();
        // `groups('x')` / `sites('x')`, as resource URLs in page content are written.
        if let Some((kind, id)) = segs.first().and_then(|f| {
            let (k, rest) = f.split_once("('")?;
            Some((k.to_owned(), rest.strip_suffix("')")?.to_owned()))
        }) {
            if kind == "groups" || kind == "sites" {
                segs.splice(0..1, [kind, id]);
            }
        }
        let segs: Vec<&str> = segs.iter().map(String::as_str).collect();
        let personal = self.personal.contains(who.user);
        match segs.as_slice() {
            ["me", "memberOf", rest @ ..] => {
                if personal {
                    return Route::Answered(no_directory(path));
                }
                let only_groups = match rest {
                    [] => false,
                    ["microsoft.graph.group"] => true,
                    _ => {
                        return Route::Answered(Reply::error(
                            400,
                            "Request_BadRequest",
                            "Unsupported cast on memberOf.",
                        ))
                    }
                };
                let mut items: Vec<Map<String, Value>> = self
                    .groups
                    .iter()
                    .filter(|g| g.members.iter().any(|m| m == who.user))
                    .map(|g| {
                        obj(json!({
                            "@odata.type": "#microsoft.graph.group",
                            "id": g.id,
                            "displayName": g.display_name,
                            "groupTypes": if g.unified { json!(["Unified"]) } else { json!([]) },
                            "mailEnabled": g.unified,
                            "securityEnabled": !g.unified,
                        }))
                    })
                    .collect();
                if !only_groups {
                    // Directory roles are members of memberOf too: a client must filter by type.
                    items.push(obj(json!({
                        "@odata.type": "#microsoft.graph.directoryRole",
                        "id": "0f971eea-41eb-4569-a71e-57bb8a3eff1e",
                        "displayName": "Directory Readers",
                        "roleTemplateId": "88d8e3e3-8f55-4a1e-953a-9b9898b8876b",
                    })));
                }
                Route::Answered(self.collection(base, path, query, "directoryObjects", items))
            }
            ["me", "followedSites"] => {
                if personal {
                    return Route::Answered(no_directory(path));
                }
                if !who.has("Sites.Read.All") {
                    return Route::Answered(access_denied());
                }
                let items = self
                    .sites
                    .iter()
                    .filter(|s| s.followers.iter().any(|m| m == who.user))
                    .filter(|s| s.readers.iter().any(|m| m == who.user))
                    .map(site_json)
                    .collect();
                Route::Answered(self.collection(base, path, query, "sites", items))
            }
            ["sites", first, rest @ ..] if first.contains(':') => {
                // `/sites/{hostname}:/{server-relative-path}` (the path may end with `:`).
                if personal {
                    return Route::Answered(no_directory(path));
                }
                if !who.has("Sites.Read.All") {
                    return Route::Answered(access_denied());
                }
                let host = first.trim_end_matches(':');
                let rel = rest.join("/");
                let rel = rel.trim_end_matches(':').trim_end_matches('/');
                let url = format!("https://{host}/{rel}");
                let found = self.sites.iter().find(|s| {
                    s.web_url
                        .trim_end_matches('/')
                        .eq_ignore_ascii_case(url.trim_end_matches('/'))
                });
                Route::Answered(match found {
                    None => Reply::error(404, "itemNotFound", "Requested site could not be found"),
                    Some(s) if !s.readers.iter().any(|m| m == who.user) => access_denied(),
                    Some(s) => {
                        let mut m = site_json(s);
                        m.insert(
                            "@odata.context".into(),
                            json!(format!("{base}/$metadata#sites/$entity")),
                        );
                        Reply::json(200, Value::Object(m))
                    }
                })
            }
            ["groups", id, "onenote", rest @ ..] => {
                if personal {
                    return Route::Answered(no_directory(path));
                }
                if !who.has("Notes.Read.All") {
                    return Route::Answered(missing_notes_scope());
                }
                match self.groups.iter().find(|g| g.id == *id) {
                    None => Route::Answered(Reply::error(
                        404,
                        "Request_ResourceNotFound",
                        &format!("Resource '{id}' does not exist or one of its queried reference-property objects are not present."),
                    )),
                    Some(g) if !g.members.iter().any(|m| m == who.user) => {
                        Route::Answered(access_denied())
                    }
                    Some(g) => self.onenote(Owner::Group(g.id.clone()), rest),
                }
            }
            ["sites", id, "onenote", rest @ ..] => {
                if personal {
                    return Route::Answered(no_directory(path));
                }
                if !who.has("Notes.Read.All") {
                    return Route::Answered(missing_notes_scope());
                }
                match self.sites.iter().find(|s| s.id == *id) {
                    None => Route::Answered(Reply::error(
                        404,
                        "itemNotFound",
                        "Requested site could not be found",
                    )),
                    Some(s) if !s.readers.iter().any(|m| m == who.user) => {
                        Route::Answered(access_denied())
                    }
                    Some(s) => self.onenote(Owner::Site(s.id.clone()), rest),
                }
            }
            _ => Route::OneNote(Owner::User(who.user.to_owned())),
        }
    }

    /// A source's OneNote request, unless its library is over 5,000 items: then its listings of
    /// notebooks, section groups and sections fail with 10008 (listing one section's pages works,
    /// as Microsoft's advice for 10008 says).
    fn onenote(&self, owner: Owner, rest: &[&str]) -> Route {
        let listing = matches!(
            rest,
            ["notebooks"]
                | ["notebooks", _]
                | ["notebooks", _, "sections" | "sectionGroups"]
                | ["sections"]
                | ["sectionGroups"]
                | ["sectionGroups", _, "sections" | "sectionGroups"]
        );
        if listing && self.big_libraries.contains(&owner.data_key()) {
            return Route::Answered(too_many_items());
        }
        Route::OneNote(owner)
    }

    /// A directory collection, paged by `$top` (at most 999) or the server's page size, with an
    /// opaque `$skiptoken` in `@odata.nextLink` as the directory writes it.
    fn collection(
        &self,
        base: &str,
        path: &str,
        query: &str,
        context: &str,
        items: Vec<Map<String, Value>>,
    ) -> Reply {
        let q: Vec<(String, String)> = url::form_urlencoded::parse(query.as_bytes())
            .into_owned()
            .collect();
        let get = |k: &str| q.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
        let top = match get("$top").map(|v| v.parse::<usize>()) {
            None => self.page_size,
            Some(Ok(t)) if (1..=999).contains(&t) => t,
            Some(_) => {
                return Reply::error(
                    400,
                    "Request_BadRequest",
                    "Invalid page size specified: the value must be between 1 and 999.",
                )
            }
        };
        let skip = match get("$skiptoken").map(|v| v.strip_prefix("X'").map(str::to_owned)) {
            None => 0,
            Some(Some(hex)) => match usize::from_str_radix(hex.trim_end_matches('\''), 16) {
                Ok(n) => n,
                Err(_) => {
                    return Reply::error(400, "Request_BadRequest", "Invalid skip token.");
                }
            },
            Some(None) => return Reply::error(400, "Request_BadRequest", "Invalid skip token."),
        };
        let select: Option<Vec<String>> =
            get("$select").map(|s| s.split(',').map(|x| x.trim().to_owned()).collect());
        let end = (skip + top).min(items.len());
        let start = skip.min(end);
        let value: Vec<Value> = items[start..end]
            .iter()
            .cloned()
            .map(|mut m| {
                if let Some(sel) = &select {
                    m.retain(|k, _| k.starts_with('@') || sel.iter().any(|s| s == k));
                }
                Value::Object(m)
            })
            .collect();
        let mut out = Map::new();
        out.insert(
            "@odata.context".into(),
            json!(format!("{base}/$metadata#{context}")),
        );
        if end < items.len() {
            let mut ser = url::form_urlencoded::Serializer::new(String::new());
            for (k, v) in &q {
                if k != "$skiptoken" {
                    ser.append_pair(k, v);
                }
            }
            ser.append_pair("$skiptoken", &format!("X'{end:X}'"));
            out.insert(
                "@odata.nextLink".into(),
                json!(format!("{base}{path}?{}", ser.finish())),
            );
        }
        out.insert("value".into(), Value::Array(value));
        Reply::json(200, Value::Object(out))
    }
}

fn site_json(s: &TeamSite) -> Map<String, Value> {
    let name = s
        .web_url
        .trim_end_matches('/')
        .rsplit('/')
        .next()
        .unwrap_or_default()
        .to_owned();
    obj(json!({
        "id": s.id,
        "displayName": s.display_name,
        "name": name,
        "webUrl": s.web_url,
        "siteCollection": { "hostname": url::Url::parse(&s.web_url).ok().and_then(|u| u.host_str().map(str::to_owned)) },
    }))
}

fn obj(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}
