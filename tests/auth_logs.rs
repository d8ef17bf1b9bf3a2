//! Tokens never reach the logs. Alone in its own test binary: tracing caches per-callsite interest
//! process-wide, so a capture by a thread-local subscriber races with tests running in parallel.

mod auth_support;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use auth_support::{alice, World};
use notebridge::auth::TokenSource;
use notebridge::clock::Clock;
use notebridge::settings::{DefaultDirs, FlagSettings, Settings};
use notebridge::store::accounts::Account;
use notebridge::store::Db;
use notebridge::testserver::TestUser;

/// Access tokens live this long on the test server.
const LIFETIME: Duration = Duration::from_secs(3);

async fn world() -> World {
    World::start(|c| c.access_lifetime = LIFETIME).await
}

fn settings(w: &World) -> Settings {
    let env: HashMap<String, String> = w.env().into_iter().collect();
    Settings::resolve(&FlagSettings::default(), &env, DefaultDirs::default()).unwrap()
}

/// Stores `name` as `user` with a refresh token minted by the server and no access token yet.
fn seed(w: &World, db: &Db, name: &str, user: &TestUser) -> String {
    let rt = w
        .auth
        .mint_refresh_token(user, &["offline_access", "User.Read", "Notes.Read"]);
    db.save_account(&Account {
        name: name.into(),
        user_id: user.id.clone(),
        user_principal_name: user.upn.clone(),
        display_name: None,
        refresh_token: Some(rt.clone()),
        access_token: None,
        access_expires_at: None,
        created_at: 1,
        updated_at: 1,
    })
    .unwrap();
    rt
}

fn open(w: &World) -> Arc<Db> {
    Arc::new(Db::open(&w.db_path()).unwrap())
}

#[derive(Clone, Default)]
struct Captured(Arc<std::sync::Mutex<Vec<u8>>>);

impl std::io::Write for Captured {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[tokio::test]
async fn debug_logs_of_refreshes_never_contain_a_token() {
    let buf = Captured::default();
    let sink = buf.clone();
    let sub = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::DEBUG)
        .with_writer(move || sink.clone())
        .with_ansi(false)
        .finish();
    let _guard = tracing::subscriber::set_default(sub);

    let w = world().await;
    let db = open(&w);
    seed(&w, &db, "alice", &alice());
    let ts = TokenSource::new(db.clone(), &settings(&w), Clock::system()).unwrap();
    let t1 = ts.access_token("alice").await.unwrap();
    w.registry.expire_user(&alice().id);
    let t2 = ts.refresh_after_401("alice", &t1).await.unwrap();
    tracing::debug!(token = ?t2, shown = %t2, "a careless caller logs the token type");
    w.auth.revoke_user(&alice().id);
    let err = ts.refresh_after_401("alice", &t2).await.unwrap_err();
    tracing::error!(error = %err, debug = ?err, "the refresh failed");

    let text = String::from_utf8(buf.0.lock().unwrap().clone()).unwrap();
    assert!(text.contains("access token refreshed"), "{text}");
    assert!(text.contains("<redacted>"), "{text}");
    w.assert_no_secrets(&text);
}
