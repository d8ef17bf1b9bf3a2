//! Tokens never reach the logs. The capture runs alone in a fresh process of this test binary:
//! tracing caches per-callsite interest process-wide, so a thread-local subscriber's capture races
//! with the other tests of `tests/it` running in parallel (a refresh's log line could be missed).

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

#[test]
fn debug_logs_of_refreshes_never_contain_a_token() {
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "auth_logs::capture",
            "--exact",
            "--ignored",
            "--test-threads=1",
            "--nocapture",
        ])
        .env_clear()
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("1 passed"),
        "the capture failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The capture itself, run only by [`debug_logs_of_refreshes_never_contain_a_token`] in a process of
/// its own.
#[tokio::test]
#[ignore = "run in a process of its own by debug_logs_of_refreshes_never_contain_a_token"]
async fn capture() {
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
