//! Where an account can read notebooks: its own (`/me/onenote`), the Microsoft 365 groups it is a
//! member of (`/groups/{id}/onenote`) and the SharePoint sites it follows or names
//! (`/sites/{id}/onenote`). Groups and sites are read with the same OneNote API and the signed-in
//! user's own budget, so every request here goes through the limiter like any other.
//!
//! Permissions, as Microsoft's reference pages give them: a group's or site's OneNote content needs
//! the delegated `Notes.Read.All` (work or school accounts; a tenant may require admin consent);
//! the signed-in user's `memberOf` needs only `User.Read`; `followedSites` and the site lookup by
//! URL need `Sites.Read.All`. Personal Microsoft accounts have no groups or sites.

use serde::Deserialize;

use super::model;
use super::{Caller, GraphClient, GraphError, ServiceCode};
use crate::failure::{Class, Classify, Meaning, Next, Scope};

pub use crate::store::sources::{account_of_key, source_of_key, Source, SourceKind};

/// The permission groups' and sites' notebooks need.
pub const NOTES_READ_ALL: &str = "Notes.Read.All";
/// The permission followed sites and site lookups by URL need.
pub const SITES_READ_ALL: &str = "Sites.Read.All";

// Where a source's requests go is Graph's; what a source is, the store keeps.
impl Source {
    /// The OneNote root of its requests (`me/onenote`, `groups/{id}/onenote`, `sites/{id}/onenote`).
    pub fn root(&self) -> String {
        match self.kind {
            SourceKind::Personal => super::scan::PERSONAL_ROOT.to_owned(),
            SourceKind::Group => format!("groups/{}/onenote", self.id),
            SourceKind::Site => format!("sites/{}/onenote", self.id),
        }
    }
}

/// The OneNote root that the items under an inventory key are read from: `me/onenote` for the
/// account's own, `groups/{id}/onenote` or `sites/{id}/onenote` for a team's.
pub fn root_of_key(key: &str) -> String {
    match source_of_key(key) {
        Some((kind, id)) => Source {
            kind,
            id: id.to_owned(),
            name: String::new(),
            url: None,
        }
        .root(),
        None => super::scan::PERSONAL_ROOT.to_owned(),
    }
}

/// Why a source cannot be listed or found.
#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    /// The token lacks the delegated permission the request needs.
    #[error(
        "{account}: reading {what} needs the delegated Microsoft Graph permission {permission}, \
         which this account's sign-in does not carry. Add it to the app registration (API \
         permissions > Delegated), set NOTEBRIDGE_SCOPES=\"offline_access User.Read \
         Notes.Read.All Sites.Read.All\" (keep it set for later runs) and sign in again: \
         `notebridge login --account {account}`; in a work tenant an admin may have to grant admin \
         consent first (Entra admin center > Enterprise applications > the app > Permissions)"
    )]
    MissingPermission {
        /// Account name.
        account: String,
        /// What was asked for.
        what: String,
        /// The permission (`Notes.Read.All`, `Sites.Read.All`).
        permission: &'static str,
    },
    /// A `--group` or `--site` that matches nothing this account can see.
    #[error(
        "{account}: no {kind} {name:?} that this account can read{detail}; `notebridge sources \
         --account {account}` lists the groups and sites it can read"
    )]
    NotFound {
        /// Account name.
        account: String,
        /// `group` or `site`.
        kind: &'static str,
        /// As given.
        name: String,
        /// More about why (e.g. the service's answer).
        detail: String,
    },
    /// Personal Microsoft accounts have no groups or sites.
    #[error(
        "{account}: {wanted}: this is a personal Microsoft account, which has no Microsoft 365 \
         groups or SharePoint sites (only work or school accounts do)"
    )]
    PersonalAccount {
        /// Account name.
        account: String,
        /// What was asked for.
        wanted: String,
    },
    /// OneNote error 10008: the source's document library holds over 5,000 OneNote items.
    #[error(
        "{account}: {label}: its document library holds more than 5,000 OneNote items (notebooks, \
         sections, section groups), so Graph refuses to list its notebooks (OneNote error 10008). \
         Microsoft's advice: keep each document library under 5,000 OneNote items (move notebooks \
         to another library or site), or read the notebooks section by section \
         (`sections/{{id}}/pages`) where the section ids are known"
    )]
    TooManyItems {
        /// Account name.
        account: String,
        /// The source.
        label: String,
    },
    /// Any other failure of a Graph request.
    #[error(transparent)]
    Graph(#[from] GraphError),
}

impl Classify for SourceError {
    fn class(&self) -> Class {
        match self {
            // The account's sign-in lacks the permission: signing in again with it is the fix.
            SourceError::MissingPermission { .. } => {
                Class::new(Scope::Account, Next::Never).means(Meaning::SignIn)
            }
            // What the command was asked for does not exist: nothing is done.
            SourceError::NotFound { .. } | SourceError::PersonalAccount { .. } => {
                Class::new(Scope::Run, Next::Never).means(Meaning::Usage)
            }
            // Only this source cannot be listed; the others go on.
            SourceError::TooManyItems { .. } => Class::item_fails(),
            SourceError::Graph(e) => e.class(),
        }
    }
}

impl SourceError {
    /// Whether only this source failed and the rest of the work can go on.
    pub fn is_source_failure(&self) -> bool {
        self.class().scope == Scope::Item
    }
}

/// The status and typed error code of a refused request; `None` for every other failure.
pub fn refusal(e: &GraphError) -> Option<(u16, ServiceCode)> {
    match e {
        GraphError::Item { status, code, .. } => Some((*status, *code)),
        GraphError::GaveUp { .. }
        | GraphError::ForeignHost { .. }
        | GraphError::BadAnswer { .. }
        | GraphError::TooLarge { .. }
        | GraphError::Auth(_)
        | GraphError::Limiter(_)
        | GraphError::Unreachable(_) => None,
    }
}

/// Turns a refused request for `source` into what it means: the permission a group's or site's
/// notebooks need, a library over OneNote's item limit, or the refusal as it came.
pub fn explain(account: &str, source: &Source, e: GraphError) -> SourceError {
    let personal = source.kind == SourceKind::Personal;
    match refusal(&e) {
        Some((403, ServiceCode::MissingScope)) if !personal => SourceError::MissingPermission {
            account: account.to_owned(),
            what: source.label(),
            permission: NOTES_READ_ALL,
        },
        Some((403, ServiceCode::TooManyItems)) => SourceError::TooManyItems {
            account: account.to_owned(),
            label: source.label(),
        },
        Some((_, ServiceCode::MissingScope | ServiceCode::TooManyItems))
        | Some((_, ServiceCode::Throttled | ServiceCode::Unnamed | ServiceCode::Other))
        | None => SourceError::Graph(e),
    }
}

/// A source found by discovery, with its notebook count (or why it could not be counted).
#[derive(Debug)]
pub struct Found {
    /// The source.
    pub source: Source,
    /// Its notebooks.
    pub notebooks: Result<usize, SourceError>,
}

/// What discovery found.
#[derive(Debug, Default)]
pub struct Discovery {
    /// The account's own notebooks first, then groups, then sites (groups and sites that hold no
    /// notebooks are left out).
    pub found: Vec<Found>,
    /// A personal Microsoft account: no groups or sites to look for.
    pub personal_account: bool,
    /// Followed sites were not listed because the sign-in lacks `Sites.Read.All`.
    pub sites_need_permission: bool,
}

impl Discovery {
    /// What the state database keeps of it: each source with its notebook count, or why it has none.
    pub fn to_store(&self) -> Vec<(Source, Result<usize, String>)> {
        self.found
            .iter()
            .map(|f| {
                (
                    f.source.clone(),
                    f.notebooks.as_ref().map(|n| *n).map_err(|e| e.to_string()),
                )
            })
            .collect()
    }
}

#[derive(Debug, Deserialize)]
struct DirectoryObject {
    #[serde(rename = "@odata.type")]
    odata_type: Option<String>,
    id: String,
    #[serde(rename = "displayName")]
    display_name: Option<String>,
    #[serde(rename = "groupTypes", default)]
    group_types: Vec<String>,
}

#[derive(Debug, Deserialize)]
struct SiteJson {
    id: String,
    #[serde(rename = "displayName")]
    display_name: Option<String>,
    #[serde(rename = "webUrl")]
    web_url: Option<String>,
}

/// The Microsoft 365 groups `who` is a direct member of (`/me/memberOf`, every page); `None` for a
/// personal Microsoft account. Security groups and directory roles hold no notebooks and are left out.
pub async fn member_groups(
    graph: &GraphClient,
    who: &Caller,
) -> Result<Option<Vec<Source>>, SourceError> {
    let objects: Vec<DirectoryObject> = match graph
        .get_all(
            who,
            "me/memberOf?$select=id,displayName,groupTypes",
            0,
            "the account's group memberships",
        )
        .await
    {
        Ok(o) => o,
        // Graph has no directory for personal accounts: memberOf answers 404.
        Err(e) if matches!(refusal(&e), Some((404, _))) => return Ok(None),
        Err(e) => return Err(e.into()),
    };
    Ok(Some(
        objects
            .into_iter()
            .filter(|o| o.odata_type.as_deref() == Some("#microsoft.graph.group"))
            .filter(|o| {
                o.group_types
                    .iter()
                    .any(|t| t.eq_ignore_ascii_case("Unified"))
            })
            .map(|o| Source {
                kind: SourceKind::Group,
                name: o.display_name.unwrap_or_else(|| o.id.clone()),
                id: o.id,
                url: None,
            })
            .collect(),
    ))
}

/// The sites `who` follows; `Err(MissingPermission)` without `Sites.Read.All`.
pub async fn followed_sites(graph: &GraphClient, who: &Caller) -> Result<Vec<Source>, SourceError> {
    let sites: Vec<SiteJson> = graph
        .get_all(
            who,
            "me/followedSites?$select=id,displayName,webUrl",
            0,
            "the account's followed sites",
        )
        .await
        .map_err(|e| match refusal(&e) {
            Some((403, _)) => SourceError::MissingPermission {
                account: who.account.clone(),
                what: "the followed SharePoint sites".into(),
                permission: SITES_READ_ALL,
            },
            _ => e.into(),
        })?;
    Ok(sites.into_iter().map(site_source).collect())
}

fn site_source(s: SiteJson) -> Source {
    Source {
        kind: SourceKind::Site,
        name: s
            .display_name
            .or_else(|| s.web_url.clone())
            .unwrap_or_else(|| s.id.clone()),
        id: s.id,
        url: s.web_url,
    }
}

/// How many notebooks `source` holds: one OneNote listing (the signed-in user's budget).
pub async fn count_notebooks(
    graph: &GraphClient,
    who: &Caller,
    source: &Source,
) -> Result<usize, SourceError> {
    let notebooks: Vec<model::Notebook> = graph
        .get_all(
            who,
            &format!("{}/notebooks?$select=id,displayName", source.root()),
            0,
            &source.label(),
        )
        .await
        .map_err(|e| explain(&who.account, source, e))?;
    Ok(notebooks.len())
}

/// Everything `who` can read notebooks in: its own notebooks, its groups and its followed sites,
/// each counted with one OneNote listing. Groups and sites without notebooks are left out; a source
/// that cannot be listed is kept with its error (10008, no access), except that a missing
/// `Notes.Read.All` stops discovery, since it concerns every group and site alike.
pub async fn discover(
    graph: &GraphClient,
    who: &Caller,
    personal_name: &str,
) -> Result<Discovery, SourceError> {
    let mut d = Discovery::default();
    let own = Source::personal(&who.user_id, personal_name);
    let own_count = count_notebooks(graph, who, &own).await;
    d.found.push(Found {
        source: own,
        notebooks: own_count,
    });
    let groups = match member_groups(graph, who).await? {
        Some(g) => g,
        None => {
            d.personal_account = true;
            return Ok(d);
        }
    };
    let sites = match followed_sites(graph, who).await {
        Ok(s) => s,
        Err(SourceError::MissingPermission { .. }) => {
            d.sites_need_permission = true;
            Vec::new()
        }
        Err(e) => return Err(e),
    };
    for source in groups.into_iter().chain(sites) {
        match count_notebooks(graph, who, &source).await {
            Ok(0) => {}
            Err(e @ SourceError::MissingPermission { .. }) => return Err(e),
            notebooks => d.found.push(Found { source, notebooks }),
        }
    }
    Ok(d)
}

/// The group `--group NAME_OR_ID` names among `who`'s groups (by id, or by display name ignoring
/// case).
pub async fn find_group(
    graph: &GraphClient,
    who: &Caller,
    wanted: &str,
) -> Result<Source, SourceError> {
    let Some(groups) = member_groups(graph, who).await? else {
        return Err(SourceError::PersonalAccount {
            account: who.account.clone(),
            wanted: format!("--group {wanted}"),
        });
    };
    let by_id = groups.iter().find(|g| g.id == wanted);
    let by_name = || groups.iter().find(|g| g.name.eq_ignore_ascii_case(wanted));
    by_id
        .or_else(by_name)
        .cloned()
        .ok_or_else(|| SourceError::NotFound {
            account: who.account.clone(),
            kind: "group",
            name: wanted.to_owned(),
            detail: " (the account is not a member of a Microsoft 365 group with that name or id)"
                .into(),
        })
}

/// The site `--site URL_OR_ID` names: a URL is looked up (`sites/{hostname}:/{path}`, which needs
/// `Sites.Read.All`); anything else is taken as a Graph site id and checked by listing its
/// notebooks.
pub async fn find_site(
    graph: &GraphClient,
    who: &Caller,
    wanted: &str,
) -> Result<Source, SourceError> {
    let not_found = |detail: String| SourceError::NotFound {
        account: who.account.clone(),
        kind: "site",
        name: wanted.to_owned(),
        detail,
    };
    let Some(url) = url::Url::parse(wanted)
        .ok()
        .filter(|u| matches!(u.scheme(), "https" | "http"))
    else {
        let source = Source {
            kind: SourceKind::Site,
            id: wanted.to_owned(),
            name: wanted.to_owned(),
            url: None,
        };
        return match count_notebooks(graph, who, &source).await {
            Ok(_) => Ok(source),
            Err(SourceError::Graph(e)) if matches!(refusal(&e), Some((403 | 404, _))) => {
                Err(not_found(format!(" (Graph answered: {})", e.reason())))
            }
            Err(e) => Err(e),
        };
    };
    let host = url.host_str().unwrap_or_default();
    let path = url.path().trim_end_matches('/');
    let lookup = format!("sites/{host}:{}", if path.is_empty() { "/" } else { path });
    match graph
        .get_json::<SiteJson>(who, &lookup, &format!("site {wanted}"))
        .await
    {
        Ok(s) => Ok(site_source(s)),
        Err(e) => match refusal(&e) {
            Some((404, _)) => Err(not_found(String::new())),
            Some((403, _)) => Err(not_found(format!(
                " (Graph refused the lookup: either the account may not read the site, or the \
                 sign-in lacks {SITES_READ_ALL}, which looking a site up by URL needs; its Graph \
                 id works with {NOTES_READ_ALL} alone)"
            ))),
            Some((400, _)) => Err(not_found(format!(" (Graph answered: {})", e.reason()))),
            _ => Err(e.into()),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_roots_and_titles() {
        let g = Source {
            kind: SourceKind::Group,
            id: "g1".into(),
            name: "Marketing".into(),
            url: None,
        };
        assert_eq!(g.root(), "groups/g1/onenote");
        assert_eq!(g.inventory_key("alice"), "alice/group:g1");
        assert_eq!(account_of_key("alice/group:g1"), "alice");
        assert_eq!(account_of_key("alice"), "alice");
        assert_eq!(g.notion_title(), "Marketing (Microsoft 365 group)");
        let s = Source {
            kind: SourceKind::Site,
            id: "h,1,2".into(),
            name: "Design".into(),
            url: Some("https://contoso.sharepoint.com/sites/Design".into()),
        };
        assert_eq!(s.root(), "sites/h,1,2/onenote");
        assert_eq!(s.notion_title(), "Design (SharePoint site)");
        let p = Source::personal("u1", "alice");
        assert_eq!(p.root(), "me/onenote");
        assert_eq!(p.inventory_key("alice"), "alice");
        // Keys lead back to where their items are read from.
        for src in [&g, &s] {
            let key = src.inventory_key("alice");
            assert_eq!(source_of_key(&key), Some((src.kind, src.id.as_str())));
            assert_eq!(root_of_key(&key), src.root());
        }
        assert_eq!(source_of_key("alice"), None);
        assert_eq!(root_of_key("alice"), "me/onenote");
    }

    #[test]
    fn refusals_mean_what_the_service_code_says() {
        let g = Source {
            kind: SourceKind::Group,
            id: "g1".into(),
            name: "Marketing".into(),
            url: None,
        };
        let item = |status, code, message: &str| GraphError::Item {
            account: "alice".into(),
            item: "x".into(),
            status,
            code,
            message: message.into(),
        };
        let scope = || {
            item(
                403,
                ServiceCode::MissingScope,
                "40004 The OAuth token doesn't have...",
            )
        };
        let e = explain("alice", &g, scope());
        assert_eq!(e.meaning(), Some(Meaning::SignIn));
        assert!(e.to_string().contains("Notes.Read.All"));
        assert!(e.to_string().contains("`notebridge login --account alice`"));
        let e = explain(
            "alice",
            &g,
            item(403, ServiceCode::TooManyItems, "10008 One or more..."),
        );
        assert!(matches!(e, SourceError::TooManyItems { .. }));
        assert!(e.is_source_failure());
        assert!(e.to_string().contains("5,000"));
        let e = explain(
            "alice",
            &g,
            item(403, ServiceCode::Other, "accessDenied Access denied"),
        );
        assert!(matches!(e, SourceError::Graph(_)));
        assert!(e.is_source_failure());
        assert_eq!(e.meaning(), None);
        // The code, not the message's first word, decides; a personal account's 40004 is a
        // refusal of its own notebooks, not a group's missing permission.
        let e = explain(
            "alice",
            &g,
            item(403, ServiceCode::Other, "40004 lookalike"),
        );
        assert!(matches!(e, SourceError::Graph(_)), "{e}");
        let own = Source::personal("u1", "alice");
        assert!(matches!(
            explain("alice", &own, scope()),
            SourceError::Graph(_)
        ));
    }
}
