//! Tokens never reach the logs. Alone in its own test binary: tracing caches per-callsite interest
//! process-wide, so a capture by a thread-local subscriber races with tests running in parallel.

use crate::auth_support;

use std::sync::Arc;

use auth_support::{alice, open, seed, settings, world};
use notebridge::auth::TokenSource;
use notebridge::clock::Clock;

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
