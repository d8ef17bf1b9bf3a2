//! Shared set-up of the sign-in tests: the sign-in test server, a tiny `/v1.0/me` (until the Graph
//! test server lands) and a way to run the real binary in an isolated environment.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

use axum::extract::State;
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use notebridge_testkit::auth::{AuthServer, AuthServerConfig};
use notebridge_testkit::{TestUser, TokenProblem, TokenRegistry};
use serde_json::json;

use crate::bin_support::{self, Bin};

/// The client id the test server knows.
pub const CLIENT_ID: &str = "11111111-2222-3333-4444-555555555555";

/// A strict stand-in for Graph's `GET /v1.0/me`: bearer tokens checked against the registry.
pub struct MeServer {
    pub url: String,
    pub requests: Arc<AtomicU32>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for MeServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

#[derive(Clone)]
struct MeState {
    registry: Arc<TokenRegistry>,
    users: Arc<Mutex<HashMap<String, TestUser>>>,
    requests: Arc<AtomicU32>,
}

fn unauthorized(message: &str) -> Response {
    (
        StatusCode::UNAUTHORIZED,
        Json(
            json!({"error": {"code": "InvalidAuthenticationToken", "message": message,
                              "innerError": {"request-id": "r", "client-request-id": "c"}}}),
        ),
    )
        .into_response()
}

async fn me(State(st): State<MeState>, headers: HeaderMap) -> Response {
    st.requests.fetch_add(1, Ordering::SeqCst);
    let Some(token) = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
    else {
        return unauthorized("Access token is empty.");
    };
    match st.registry.check(token) {
        Err(TokenProblem::Expired) => {
            unauthorized("Lifetime validation failed, the token is expired.")
        }
        Err(TokenProblem::Unknown) => unauthorized("IDX14100: JWT is not well formed."),
        Ok(uid) => {
            let users = st.users.lock().unwrap();
            let Some(u) = users.get(&uid) else {
                return unauthorized("unknown user");
            };
            Json(json!({
                "@odata.context": "https://graph.microsoft.com/v1.0/$metadata#users/$entity",
                "id": u.id, "userPrincipalName": u.upn, "displayName": u.display_name,
                "mail": u.upn,
            }))
            .into_response()
        }
    }
}

impl MeServer {
    pub async fn start(registry: Arc<TokenRegistry>, users: &[&TestUser]) -> MeServer {
        let users = Arc::new(Mutex::new(
            users.iter().map(|u| (u.id.clone(), (*u).clone())).collect(),
        ));
        let requests = Arc::new(AtomicU32::new(0));
        let app = Router::new()
            .route("/v1.0/me", get(me))
            .with_state(MeState {
                registry,
                users,
                requests: requests.clone(),
            });
        let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/v1.0", l.local_addr().unwrap());
        let task = tokio::spawn(async move {
            let _ = axum::serve(l, app).await;
        });
        MeServer {
            url,
            requests,
            task,
        }
    }

    /// `GET /me` with `token`: the status code.
    pub async fn status_with(&self, token: &str) -> u16 {
        reqwest::Client::new()
            .get(format!("{}/me", self.url))
            .bearer_auth(token)
            .send()
            .await
            .unwrap()
            .status()
            .as_u16()
    }
}

/// One isolated world: temp dir, sign-in server, `/me` server.
pub struct World {
    pub dir: tempfile::TempDir,
    pub registry: Arc<TokenRegistry>,
    pub auth: AuthServer,
    pub graph: MeServer,
}

pub fn alice() -> TestUser {
    TestUser::named("alice")
}

pub fn bob() -> TestUser {
    TestUser::named("bob")
}

impl World {
    /// Starts both servers; `tune` adjusts the sign-in server's config (interval 1 s by default).
    pub async fn start(tune: impl FnOnce(&mut AuthServerConfig)) -> World {
        let registry = Arc::new(TokenRegistry::default());
        let mut cfg = AuthServerConfig::new(registry.clone(), CLIENT_ID);
        cfg.interval_secs = 1;
        tune(&mut cfg);
        let auth = AuthServer::start(cfg).await;
        let graph = MeServer::start(registry.clone(), &[&alice(), &bob()]).await;
        World {
            dir: tempfile::tempdir().unwrap(),
            registry,
            auth,
            graph,
        }
    }

    pub fn db_path(&self) -> PathBuf {
        self.dir.path().join("state/notebridge.db")
    }

    /// The environment the binary runs with (nothing inherited but PATH).
    pub fn env(&self) -> Vec<(String, String)> {
        vec![
            ("PATH".into(), std::env::var("PATH").unwrap_or_default()),
            ("HOME".into(), self.dir.path().display().to_string()),
            ("NOTEBRIDGE_DB".into(), self.db_path().display().to_string()),
            ("NOTEBRIDGE_CLIENT_ID".into(), CLIENT_ID.into()),
            ("NOTEBRIDGE_AUTHORITY_URL".into(), self.auth.authority_url()),
            ("NOTEBRIDGE_GRAPH_URL".into(), self.graph.url.clone()),
            ("NOTEBRIDGE_RETRY_PAUSE".into(), "10ms".into()),
        ]
    }

    /// The binary with `args`, pointed at this world.
    pub fn bin(&self, args: &[&str]) -> Bin {
        bin_support::notebridge(self.dir.path(), args).envs(self.env())
    }

    /// [`World::bin`] as a command, for a test that acts while it runs.
    pub fn command(&self, args: &[&str]) -> tokio::process::Command {
        self.bin(args).command()
    }

    /// Runs the binary to completion.
    pub async fn run(&self, args: &[&str]) -> Output {
        self.bin(args).run().await
    }

    /// Asserts that no secret the sign-in server issued appears in `text`.
    pub fn assert_no_secrets(&self, text: &str) {
        let secrets = self.auth.issued_secrets();
        assert!(
            !secrets.is_empty(),
            "the server issued nothing: the check would be empty"
        );
        for s in secrets {
            assert!(!text.contains(&s), "secret {s} leaked into output:\n{text}");
        }
    }
}

pub use crate::bin_support::Output;

// Shared by the token tests.

use std::time::Duration;

use notebridge::settings::{DefaultDirs, FlagSettings, Settings};
use notebridge::store::accounts::Account;
use notebridge::store::Db;

/// Access tokens live this long on the test server.
pub const LIFETIME: Duration = Duration::from_secs(3);

pub async fn world() -> World {
    World::start(|c| c.access_lifetime = LIFETIME).await
}

pub fn settings(w: &World) -> Settings {
    let env: HashMap<String, String> = w.env().into_iter().collect();
    Settings::resolve(&FlagSettings::default(), &env, DefaultDirs::default()).unwrap()
}

/// Stores `name` as `user` with a refresh token minted by the server for the default scopes (as
/// a sign-in with them grants) and no access token yet.
pub fn seed(w: &World, db: &Db, name: &str, user: &TestUser) -> String {
    seed_with(
        w,
        db,
        name,
        user,
        &["offline_access", "User.Read", "Notes.Read", "Files.Read"],
    )
}

/// [`seed`] with a refresh token for `scopes` (what the user consented to).
pub fn seed_with(w: &World, db: &Db, name: &str, user: &TestUser, scopes: &[&str]) -> String {
    let rt = w.auth.mint_refresh_token(user, scopes);
    db.save_account(&Account {
        name: name.into(),
        user_id: user.id.clone(),
        user_principal_name: user.upn.clone(),
        display_name: None,
        refresh_token: Some(rt.clone()),
        access_token: None,
        access_expires_at: None,
        updated_at: 1,
    })
    .unwrap();
    rt
}

pub fn open(w: &World) -> Arc<Db> {
    Arc::new(Db::open(&w.db_path()).unwrap())
}
