//! All three test servers started together, sharing one token registry, with the settings that point
//! notebridge at them. The integration tests and the offline demo both start from here.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use super::auth::{AuthServer, AuthServerConfig, CodeScript};
use super::graph::drive::FilesNotebook;
use super::graph::model::UserNotes;
use super::graph::{GraphServer, GraphServerConfig};
use super::notion::rate::RateConfig;
use super::notion::{NotionServer, NotionServerConfig};
use super::{TestUser, TokenRegistry};
use notebridge::settings::{env, DefaultDirs, FlagSettings, Settings};
use notebridge::store::accounts::Account;
use notebridge::store::Db;

/// The Entra app id the sign-in test server knows.
pub const CLIENT_ID: &str = "0badc0de-0000-4000-8000-notebridge00";

/// The scopes for team notebooks: `Notes.Read.All` for groups' and sites' OneNote content,
/// `Sites.Read.All` for followed sites and site lookups by URL.
pub const TEAM_SCOPES: &[&str] = &[
    "offline_access",
    "User.Read",
    "Notes.Read.All",
    "Sites.Read.All",
];

/// The scopes [`Lab::sign_in`] grants: OneNote and the user's own files (`Files.Read`, for
/// notebooks read from their section files through the drive API).
pub const SIGN_IN_SCOPES: &[&str] = &["offline_access", "User.Read", "Notes.Read", "Files.Read"];

/// A sample OneNote file or folder of the repository's `fixtures/onenote-files/` (`rel` is relative
/// to it, e.g. `"onenote.rs/samples/New Section Group"`).
pub fn onenote_fixture(rel: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fixtures/onenote-files")
        .join(rel)
}

/// How the lab is set up.
#[derive(Clone, Debug)]
pub struct LabConfig {
    /// Graph per-user windows (settings syntax).
    pub user_windows: String,
    /// Graph app windows.
    pub app_windows: String,
    /// Graph concurrency per user.
    pub user_concurrency: u32,
    /// Graph concurrency per app.
    pub app_concurrency: u32,
    /// Notion requests per second (server and client alike).
    pub notion_per_second: u32,
    /// Notion requests the server allows at once above its average (5, like its default: Notion
    /// does not publish it). A bench that scales the rate up scales this with it, or the burst
    /// tolerates a few milliseconds' bunching only.
    pub notion_burst: u32,
    /// Access-token lifetime.
    pub access_lifetime: Duration,
    /// Seed of the servers' random choices.
    pub seed: u64,
    /// Graph sends `x-ms-throttle-scope` and `x-ms-throttle-limit-percentage` (documented for the
    /// directory service, not promised for OneNote); off: neither header is ever sent.
    pub hint_headers: bool,
}

impl Default for LabConfig {
    /// Short windows in the documented 1:3.3 minute-to-hour proportion, and Notion's real 3/s.
    fn default() -> Self {
        Self {
            user_windows: "12/600ms,40/6s".into(),
            app_windows: "24/600ms,80/6s".into(),
            user_concurrency: 5,
            app_concurrency: 20,
            notion_per_second: 3,
            notion_burst: 5,
            access_lifetime: Duration::from_secs(3600),
            seed: 7,
            hint_headers: true,
        }
    }
}

/// The running servers.
pub struct Lab {
    /// Tokens shared by sign-in and Graph.
    pub registry: Arc<TokenRegistry>,
    /// Sign-in.
    pub auth: AuthServer,
    /// Graph.
    pub graph: GraphServer,
    /// Notion.
    pub notion: NotionServer,
    /// A Notion page shared with the integration, to migrate under.
    pub target_page: String,
    /// The configuration.
    pub config: LabConfig,
}

impl Lab {
    /// Starts the three servers on loopback.
    pub async fn start(config: LabConfig) -> Lab {
        let registry = Arc::new(TokenRegistry::default());
        let mut acfg = AuthServerConfig::new(registry.clone(), CLIENT_ID);
        acfg.access_lifetime = config.access_lifetime;
        acfg.interval_secs = 1;
        let auth = AuthServer::start(acfg).await;
        let mut gcfg = GraphServerConfig::new(registry.clone())
            .with_windows(&config.user_windows, &config.app_windows);
        gcfg.limits.user_concurrency = config.user_concurrency;
        gcfg.limits.app_concurrency = config.app_concurrency;
        gcfg.seed = config.seed;
        if !config.hint_headers {
            gcfg.scope_header = super::graph::ScopeHeader::Absent;
            gcfg.limit_percentage_header = false;
        }
        let graph = GraphServer::start(gcfg).await;
        let notion = NotionServer::start(NotionServerConfig {
            rate: RateConfig {
                per_second: config.notion_per_second as f64,
                burst: config.notion_burst,
            },
            seed: config.seed,
            ..NotionServerConfig::default()
        })
        .await;
        let target_page = notion.add_shared_page("OneNote import");
        Lab {
            registry,
            auth,
            graph,
            notion,
            target_page,
            config,
        }
    }

    /// All three services stop listening for `length` (open connections are cut), then come back
    /// on the same addresses.
    pub fn outage_for(&self, length: Duration) {
        self.auth.outage().stop_for(length);
        self.graph.outage().stop_for(length);
        self.notion.outage().stop_for(length);
    }

    /// Adds a OneNote user with their notebooks; the next device-code sign-in approves as them.
    pub fn add_user(&self, name: &str, notes: UserNotes) -> TestUser {
        let user = TestUser::named(name);
        self.graph.add_user(user.clone());
        self.graph.load(&user.id, notes);
        self.auth.push_script(CodeScript::approve(user.clone(), 1));
        user
    }

    /// Adds a OneNote user whose notebook `notebook` is read from the OneNote files at `path` (a
    /// notebook folder, see [`crate::graph::GraphServer::add_files_notebook`]): served by the
    /// OneNote API and, file by file, by the drive API. The next device-code sign-in approves as
    /// them.
    pub fn add_files_user(
        &self,
        name: &str,
        notebook: &str,
        path: &Path,
    ) -> (TestUser, FilesNotebook) {
        let user = self.add_user(name, UserNotes::default());
        let nb = self.graph.add_files_notebook(&user.id, notebook, path);
        (user, nb)
    }

    /// The environment that points the notebridge binary at the lab.
    pub fn env(&self) -> HashMap<String, String> {
        let c = &self.config;
        [
            (env::CLIENT_ID, CLIENT_ID.to_owned()),
            (env::AUTHORITY_URL, self.auth.authority_url()),
            (env::GRAPH_URL, self.graph.base_url().to_owned()),
            (env::NOTION_URL, self.notion.base_url().to_owned()),
            (env::NOTION_TOKEN, self.notion.token().to_owned()),
            (env::GRAPH_USER_LIMITS, c.user_windows.clone()),
            (env::GRAPH_APP_LIMITS, c.app_windows.clone()),
            (env::GRAPH_USER_CONCURRENCY, c.user_concurrency.to_string()),
            (env::GRAPH_APP_CONCURRENCY, c.app_concurrency.to_string()),
            (env::NOTION_RATE, format!("{}/1s", c.notion_per_second)),
            // Retries pause and back off as in production, scaled down like the windows.
            (env::RETRY_PAUSE, "10ms".to_owned()),
            (env::RETRY_BACKOFF, "250ms".to_owned()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .collect()
    }

    /// Settings for in-process use with the database at `db`.
    pub fn settings(&self, db: &Path) -> Settings {
        let flags = FlagSettings {
            db: Some(db.to_owned()),
            config: None,
        };
        Settings::resolve(&flags, &self.env(), DefaultDirs::default())
            .expect("lab settings resolve")
    }

    /// Stores `user` as the signed-in account `name` without the device-code dance (a refresh token
    /// minted by the sign-in server; the first Graph call refreshes it like a real one).
    pub fn sign_in(&self, db: &Db, name: &str, user: &TestUser) {
        self.sign_in_with(db, name, user, SIGN_IN_SCOPES);
    }

    /// [`Lab::sign_in`] with the scopes the grant carries (e.g. [`TEAM_SCOPES`]).
    pub fn sign_in_with(&self, db: &Db, name: &str, user: &TestUser, scopes: &[&str]) {
        let rt = self.auth.mint_refresh_token(user, scopes);
        db.save_account(&Account {
            name: name.to_owned(),
            user_id: user.id.clone(),
            user_principal_name: user.upn.clone(),
            display_name: Some(user.display_name.clone()),
            refresh_token: Some(rt),
            access_token: None,
            access_expires_at: None,
            updated_at: 0,
        })
        .expect("account stored");
    }
}

/// The inventory a complete, correct scan of `notes` must produce: the service's order (notebooks,
/// section groups and sections by name) and pages in OneNote's order.
pub fn expected_inventory(notes: &UserNotes) -> Vec<notebridge::store::inventory::Notebook> {
    use chrono::SecondsFormat;
    use notebridge::store::inventory as inv;
    let ts =
        |d: chrono::DateTime<chrono::Utc>| Some(d.to_rfc3339_opts(SecondsFormat::Millis, true));
    fn sections(
        notes: &UserNotes,
        nb: &str,
        group: Option<&str>,
        ts: &dyn Fn(chrono::DateTime<chrono::Utc>) -> Option<String>,
    ) -> Vec<inv::Section> {
        notes
            .sections_in(Some(nb), group)
            .into_iter()
            .map(|s| {
                let mut pages: Vec<inv::Page> = notes
                    .pages_in(&s.id)
                    .into_iter()
                    .map(|p| inv::Page {
                        id: p.id.clone(),
                        title: p.title.clone(),
                        level: p.level as i64,
                        order: p.order as i64,
                        last_modified: ts(p.modified),
                        created: ts(p.created),
                        content_url: None,
                        author: None,
                        web_url: None,
                    })
                    .collect();
                pages.sort_by_key(|p| p.order);
                inv::Section {
                    id: s.id.clone(),
                    name: s.display_name.clone(),
                    created: ts(s.created),
                    last_modified: ts(s.modified),
                    pages,
                }
            })
            .collect()
    }
    fn groups(
        notes: &UserNotes,
        nb: &str,
        parent: Option<&str>,
        ts: &dyn Fn(chrono::DateTime<chrono::Utc>) -> Option<String>,
    ) -> Vec<inv::SectionGroup> {
        notes
            .groups_in(Some(nb), parent)
            .into_iter()
            .map(|g| inv::SectionGroup {
                id: g.id.clone(),
                name: g.display_name.clone(),
                created: ts(g.created),
                last_modified: ts(g.modified),
                section_groups: groups(notes, nb, Some(&g.id), ts),
                sections: sections(notes, nb, Some(&g.id), ts),
            })
            .collect()
    }
    notes
        .notebooks_sorted()
        .into_iter()
        .map(|n| inv::Notebook {
            id: n.id.clone(),
            name: n.display_name.clone(),
            created: ts(n.created),
            last_modified: ts(n.modified),
            section_groups: groups(notes, &n.id, None, &ts),
            sections: sections(notes, &n.id, None, &ts),
        })
        .collect()
}
