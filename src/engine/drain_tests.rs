//! [`drain`] on tokio's paused clock, with a fake queue behind the [`Drain`] seam and the real
//! SQLite store: each account is planned and drained on its own, side by side, so a slow account
//! (a throttled scan) holds up neither another's planning nor its pages.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::*;
use crate::clock::{Clock, UnixMillis};
use crate::queue::RunError;
use crate::store::inventory::{Notebook, Page, ScanScope, Section};
use crate::store::jobs::RunToken;

const T0: UnixMillis = 1_700_000_000_000;

/// Drains by waiting `length` on the clock, and records each run: (inventory keys, deadline,
/// workers, start, end). Accounts in `stops` end stopped.
#[derive(Clone)]
struct Fake {
    db: Arc<Db>,
    clock: Clock,
    length: Duration,
    stops: Vec<String>,
    runs: Arc<Mutex<Vec<Run>>>,
    /// The run lock, taken on `db` as a migration takes it: planning presents it.
    token: RunToken,
}

#[derive(Clone, Debug, PartialEq)]
struct Run {
    keys: Vec<String>,
    deadline: Option<UnixMillis>,
    workers: usize,
    start: UnixMillis,
    end: UnixMillis,
}

impl Drain for Fake {
    fn db(&self) -> &Arc<Db> {
        &self.db
    }

    async fn run(&self, opts: &RunOptions) -> Result<RunEnd, RunError> {
        let start = self.clock.now_ms();
        self.clock.sleep(self.length).await;
        self.runs.lock().unwrap().push(Run {
            keys: opts.accounts.clone(),
            deadline: opts.deadline,
            workers: opts.workers,
            start,
            end: self.clock.now_ms(),
        });
        let stopped = opts
            .accounts
            .iter()
            .any(|k| self.stops.iter().any(|s| s == k));
        Ok(if stopped {
            RunEnd::Stopped
        } else {
            RunEnd::Finished
        })
    }
}

fn fake(length: Duration, stops: &[&str]) -> (tempfile::TempDir, Fake) {
    let dir = tempfile::tempdir().unwrap();
    let db = Arc::new(Db::open(&dir.path().join("s.db")).unwrap());
    let token = db
        .acquire_run_lock(1, "drain test", T0, Duration::from_secs(3600), |_| true)
        .unwrap()
        .unwrap();
    let f = Fake {
        db,
        token,
        clock: Clock::anchored_at(T0),
        length,
        stops: stops.iter().map(|s| s.to_string()).collect(),
        runs: Arc::default(),
    };
    (dir, f)
}

/// Plans one notebook with one page under inventory key `key`.
fn plan(db: &Db, token: &RunToken, key: &str, now: UnixMillis) {
    let nb = vec![Notebook {
        id: format!("nb-{key}"),
        name: "NB".into(),
        created: None,
        last_modified: None,
        section_groups: vec![],
        sections: vec![Section {
            id: format!("s-{key}"),
            name: "S".into(),
            created: None,
            last_modified: None,
            pages: vec![Page {
                id: format!("p-{key}"),
                title: "P".into(),
                level: 0,
                order: 1,
                last_modified: None,
                created: None,
                content_url: None,
                author: None,
                web_url: None,
            }],
        }],
    }];
    db.save_scan(key, &nb, &ScanScope::All, now).unwrap();
    db.create_plan(token, key, "target", &nb, now).unwrap();
}

#[tokio::test(start_paused = true)]
async fn a_slow_accounts_planning_holds_up_neither_the_others_planning_nor_its_pages() {
    let (_dir, f) = fake(Duration::from_secs(600), &[]);
    let accounts = ["alice".to_owned(), "bob".to_owned()];
    let prepare = |account: String| {
        let f = f.clone();
        async move {
            // alice's scan waits an hour on her throttled budget; bob's does not wait.
            if account == "alice" {
                f.clock.sleep(Duration::from_secs(3600)).await;
                plan(&f.db, &f.token, "alice", f.clock.now_ms());
                // Her group's work is drained with her, in the same run.
                plan(&f.db, &f.token, "alice/group:g1", f.clock.now_ms());
            } else {
                plan(&f.db, &f.token, "bob", f.clock.now_ms());
            }
            Ok::<_, RunError>(())
        }
    };
    let deadline = Some(T0 + 7_200_000);
    let end = drain(&f, &accounts, deadline, 3, prepare).await.unwrap();
    assert_eq!(end, RunEnd::Finished);
    let mut runs = f.runs.lock().unwrap().clone();
    runs.sort_by_key(|r| r.start);
    assert_eq!(
        runs,
        [
            Run {
                keys: vec!["bob".into()],
                deadline,
                workers: 3,
                start: T0,
                end: T0 + 600_000,
            },
            Run {
                keys: vec!["alice".into(), "alice/group:g1".into()],
                deadline,
                workers: 3,
                start: T0 + 3_600_000,
                end: T0 + 4_200_000,
            },
        ]
    );
    // Side by side: the whole drain took alice's hour and her run, not the sum of both runs.
    assert_eq!(f.clock.now_ms(), T0 + 4_200_000);
}

#[tokio::test(start_paused = true)]
async fn one_account_stopped_makes_the_run_stopped_while_the_others_finish_and_idle_ones_are_not_run(
) {
    let (_dir, f) = fake(Duration::from_secs(60), &["bob"]);
    for key in ["alice", "bob"] {
        plan(&f.db, &f.token, key, T0);
    }
    let accounts = ["alice".to_owned(), "bob".to_owned(), "carol".to_owned()];
    // A resume: nothing planned now; carol has nothing queued.
    let prepare = |_: String| async { Ok::<_, RunError>(()) };
    let end = drain(&f, &accounts, None, 8, prepare).await.unwrap();
    assert_eq!(end, RunEnd::Stopped);
    let mut keys: Vec<Vec<String>> = f
        .runs
        .lock()
        .unwrap()
        .iter()
        .map(|r| r.keys.clone())
        .collect();
    keys.sort();
    assert_eq!(keys, [vec!["alice".to_owned()], vec!["bob".to_owned()]]);
    assert_eq!(f.clock.now_ms(), T0 + 60_000, "both ran at once");
}

#[tokio::test(start_paused = true)]
async fn a_failed_planning_ends_the_drain_with_its_error_and_leaves_its_account_unrun() {
    let (_dir, f) = fake(Duration::from_secs(60), &[]);
    let accounts = ["alice".to_owned(), "bob".to_owned()];
    let prepare = |account: String| {
        let (db, token) = (f.db.clone(), f.token.clone());
        async move {
            if account == "alice" {
                return Err(RunError::Worker("alice's scan failed".into()));
            }
            plan(&db, &token, "bob", T0);
            Ok(())
        }
    };
    let e = drain(&f, &accounts, None, 8, prepare).await.unwrap_err();
    assert!(e.to_string().contains("alice's scan failed"), "{e}");
    let runs = f.runs.lock().unwrap().clone();
    assert_eq!(runs.len(), 1, "bob's run is not cut short: {runs:?}");
    assert_eq!(runs[0].keys, ["bob"]);
}
