//! The library's `migrate` ([`notebridge::engine::migrate`]) called in this process against the
//! test kit's servers, without the binary: its events, its outcome, and what it leaves in Notion
//! and in the queue.
//!
//! These run on the real clock: the servers answer over real sockets, and under tokio's paused
//! clock a runtime waiting on a socket jumps to its next timer (the HTTP clients' timeouts among
//! them). So nothing here depends on how long anything takes: the deadline is one already reached
//! when the queue is drained, and the stop comes when a page is done. How a deadline reached
//! mid-run and a retry's wait come out to the millisecond is tested on the paused clock with a fake
//! runner behind the scheduler's seam (`queue::scheduler::tests`).

use crate::migrate_support;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use migrate_support::{assert_mirrors, assert_mirrors_at, counts, inventory, State};
use notebridge::clock::{Clock, Jitter};
use notebridge::engine::{
    self, plan::Picks, Event, Observer, Outcome, Process, Report, Request, Services, Snapshot,
};
use notebridge::failure::{Classify, Meaning};
use notebridge::queue::cancel::Cancel;
use notebridge::queue::lock::RunLock;
use notebridge::queue::RunEnd;
use notebridge::store::Db;
use notebridge_testkit::generator::{generate, NotebookSpec};
use notebridge_testkit::graph::model::UserNotes;
use notebridge_testkit::lab::{Lab, LabConfig};
use notebridge_testkit::notion::Endpoint;

/// Graph windows short enough to matter, Notion fast enough for a test.
pub(crate) fn fast() -> LabConfig {
    LabConfig {
        user_windows: "60/600ms,600/6s".into(),
        app_windows: "120/600ms,1200/6s".into(),
        notion_per_second: 100,
        ..LabConfig::default()
    }
}

fn spec(pages: usize, seed: u64) -> NotebookSpec {
    NotebookSpec {
        notebooks: 1,
        section_groups_depth: 1,
        section_groups_per_container: 1,
        sections_per_container: 2,
        pages_per_section: 0,
        total_pages: Some(pages),
        subpage_ratio: 0.3,
        images_per_page: 1,
        resource_bytes: 2048,
        seed,
        ..NotebookSpec::default()
    }
}

/// `notes` with its notebooks renamed `{prefix} Notebook 1`..., so two accounts' trees can be told
/// apart under one target page.
pub(crate) fn named(prefix: &str, mut notes: UserNotes) -> UserNotes {
    for nb in &mut notes.notebooks {
        nb.display_name = format!("{prefix} {}", nb.display_name);
    }
    notes
}

/// Every event of a run, in order; with `stop_after_pages`, the run's stop tree is stopped once
/// that many pages are migrated (watched through the progress handle the run hands out).
#[derive(Default)]
struct Recorder {
    events: Mutex<Vec<Event>>,
    stop: Option<(Cancel, i64)>,
    /// The progress when the stop was asked for.
    at_stop: Arc<Mutex<Option<Snapshot>>>,
}

impl Observer for Recorder {
    fn event(&self, event: Event) {
        if let (Event::Draining(progress), Some((cancel, pages))) = (&event, &self.stop) {
            let (progress, cancel, pages) = (progress.clone(), cancel.clone(), *pages);
            let at_stop = self.at_stop.clone();
            tokio::spawn(async move {
                let mut changes = progress.changes();
                loop {
                    let now = progress.snapshot().await;
                    if now.done >= pages {
                        *at_stop.lock().unwrap() = Some(now);
                        break;
                    }
                    // Looked at again when the run tells of a change (a job's transition), not
                    // on a timer.
                    tokio::time::timeout(Duration::from_secs(30), changes.next())
                        .await
                        .expect("the run tells of its changes");
                }
                cancel.stop();
            });
        }
        self.events.lock().unwrap().push(event);
    }
}

impl Recorder {
    fn lines(&self) -> Vec<String> {
        self.events
            .lock()
            .unwrap()
            .iter()
            .map(|e| match e {
                Event::Plan(p) => format!("plan {}", p.accounts[0].account),
                e => e.to_string(),
            })
            .collect()
    }

    fn plans(&self) -> Vec<engine::estimate::Plan> {
        let events = self.events.lock().unwrap();
        events
            .iter()
            .filter_map(|e| match e {
                Event::Plan(p) => Some(p.clone()),
                _ => None,
            })
            .collect()
    }
}

/// A run as the command makes it, with its own stop tree unless one is given.
async fn run(
    lab: &Lab,
    state: &State,
    req: &Request,
    observer: &dyn Observer,
    cancel: Option<Cancel>,
) -> Result<Outcome, engine::MigrateError> {
    let settings = lab.settings(&state.db);
    let db = Arc::new(Db::open(&state.db).unwrap());
    let clock = Clock::system();
    let cancel = cancel.unwrap_or_default();
    let svc = Services {
        settings: &settings,
        notion_token: lab.notion.token(),
        db: &db,
        clock: &clock,
        jitter: Jitter::seeded(5),
        cancel: &cancel,
        process: Process {
            pid: std::process::id() as i64,
            // No other process is alive: each run here takes the lock the last one released.
            is_alive: |_| false,
        },
    };
    engine::migrate(svc, req, observer).await
}

fn plan_to(lab: &Lab) -> Request {
    Request {
        target: Some(lab.target_page.clone()),
        ..Request::default()
    }
}

fn ran(outcome: Outcome) -> Report {
    match outcome {
        Outcome::Ran(r) => *r,
        o => panic!("expected a run, got {o:?}"),
    }
}

/// Notion requests other than the token and target checks.
fn notion_writes(lab: &Lab) -> u64 {
    let c = lab.notion.counters();
    c.per_endpoint
        .iter()
        .filter(|(e, _)| !matches!(e, Endpoint::UsersMe | Endpoint::GetPage))
        .map(|(_, n)| n)
        .sum::<u64>()
        // The capability check before any work changes nothing.
        - c.empty_updates
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_accounts_are_planned_and_drained_side_by_side_with_one_plan_and_summary() {
    let lab = Lab::start(fast()).await;
    let alice = lab.add_user("alice", named("Alice", generate(&spec(9, 1))));
    let bob = lab.add_user("bob", named("Bob", generate(&spec(6, 2))));
    let state = State::new();
    {
        let db = Db::open(&state.db).unwrap();
        lab.sign_in(&db, "alice", &alice);
        lab.sign_in(&db, "bob", &bob);
    }
    let rec = Recorder::default();
    let req = Request {
        all_accounts: true,
        ..plan_to(&lab)
    };
    let r = ran(run(&lab, &state, &req, &rec, None).await.unwrap());

    assert_eq!(r.end, RunEnd::Finished);
    assert_eq!(r.accounts, ["alice", "bob"]);
    assert_eq!(r.summary.pages_done, 15);
    assert_eq!(r.summary.pages_total, 15);
    assert_eq!((r.summary.failed, r.summary.blocked), (0, 0));
    assert_eq!(r.unreadable_sources, 0);
    assert_eq!(r.stats.pages.load(std::sync::atomic::Ordering::Relaxed), 15);
    // Each account's plan is told before its work, and the report holds both, merged.
    let mut plans = rec.plans();
    plans.sort_by(|a, b| a.accounts[0].account.cmp(&b.accounts[0].account));
    let per: Vec<(String, i64)> = plans
        .iter()
        .map(|p| (p.accounts[0].account.clone(), p.accounts[0].pages))
        .collect();
    assert_eq!(per, [("alice".to_owned(), 9), ("bob".to_owned(), 6)]);
    let merged = r.plan.as_ref().expect("a merged plan");
    let mut in_merged: Vec<(String, i64)> = merged
        .accounts
        .iter()
        .map(|a| (a.account.clone(), a.pages))
        .collect();
    in_merged.sort();
    assert_eq!(in_merged, per);
    assert_eq!(
        merged.notion_requests,
        plans.iter().map(|p| p.notion_requests).sum::<i64>(),
        "one Notion token's rate for both"
    );
    // The events, account by account: scanned, planned, its plan; all after the drain began.
    let lines = rec.lines();
    assert_eq!(lines[0], "migrating", "{lines:#?}");
    for (account, p) in [("alice", &plans[0]), ("bob", &plans[1])] {
        let at = |want: &str| {
            lines
                .iter()
                .position(|l| l == want)
                .unwrap_or_else(|| panic!("no {want:?} in {lines:#?}"))
        };
        let a = &p.accounts[0];
        let planned = format!(
            "{account}: {} items planned, 0 already planned or migrated",
            a.pages + a.containers
        );
        assert!(
            at(&format!("scanning {account}...")) < at(&planned)
                && at(&planned) < at(&format!("plan {account}")),
            "{lines:#?}"
        );
    }
    // And each account's sections' way: these notebooks are in no drive, so the API.
    for account in ["alice", "bob"] {
        assert!(
            lines.iter().any(|l| l.starts_with(&format!(
                "{account}: 4 sections through the OneNote API instead of their files: the \
                 notebook's folder could not be read"
            ))),
            "{lines:#?}"
        );
    }
    assert_eq!(lines.len(), 1 + 2 * 4, "{lines:#?}");
    let theirs = |db: &State, who: &str| {
        inventory(&db.db, who)
            .iter()
            .map(|n| n.name.clone())
            .collect::<Vec<_>>()
    };
    let (alices, bobs) = (theirs(&state, "alice"), theirs(&state, "bob"));
    let (a_besides, b_besides): (Vec<&str>, Vec<&str>) = (
        bobs.iter().map(String::as_str).collect(),
        alices.iter().map(String::as_str).collect(),
    );
    let users = |id: &str| format!("users('{id}')");
    assert_mirrors_at(
        &lab,
        &lab.target_page,
        &alice.id,
        &users(&alice.id),
        &inventory(&state.db, "alice"),
        &a_besides,
    );
    assert_mirrors_at(
        &lab,
        &lab.target_page,
        &bob.id,
        &users(&bob.id),
        &inventory(&state.db, "bob"),
        &b_besides,
    );

    // Again: nothing new is planned, nothing is written, and the summary is the same.
    let writes = notion_writes(&lab);
    let rec = Recorder::default();
    let again = ran(run(&lab, &state, &req, &rec, None).await.unwrap());
    assert_eq!(again.end, RunEnd::Finished);
    assert_eq!(again.summary, r.summary);
    assert_eq!(notion_writes(&lab), writes);
    assert!(rec
        .lines()
        .iter()
        .any(|l| l.starts_with("alice: 0 items planned, ")));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dry_run_plans_and_times_the_work_and_writes_nothing() {
    let lab = Lab::start(fast()).await;
    let user = lab.add_user("default", generate(&spec(7, 3)));
    let state = State::new();
    lab.sign_in(&Db::open(&state.db).unwrap(), "default", &user);
    let rec = Recorder::default();
    let req = Request {
        dry_run: true,
        ..plan_to(&lab)
    };
    let (accounts, plan) = match run(&lab, &state, &req, &rec, None).await.unwrap() {
        Outcome::DryRun { accounts, plan, .. } => (accounts, plan),
        o => panic!("expected a dry run, got {o:?}"),
    };
    assert_eq!(accounts, ["default"]);
    let a = &plan.accounts[0];
    assert_eq!((a.pages, a.files, a.graph_requests), (7, 7, 14));
    assert!(!plan.files_per_page_measured);
    assert!(plan.notion_requests >= 7 * 2);
    let lines = rec.lines();
    assert_eq!(
        lines[..2],
        [
            "scanning default...".to_owned(),
            format!(
                "default: {} items would be planned, 0 already planned or migrated",
                a.pages + a.containers
            ),
        ]
    );
    // Which way its sections would take (the notebook is in no drive: the OneNote API).
    assert_eq!(lines.len(), 3, "{lines:#?}");
    assert!(
        lines[2].starts_with(
            "default: 4 sections through the OneNote API instead of their files: the notebook's \
             folder could not be read"
        ),
        "{lines:#?}"
    );
    assert_eq!(a.pages_by_files, 0);
    assert_eq!(notion_writes(&lab), 0);
    assert!(lab.notion.pages_under(&lab.target_page).is_empty());
    let jobs = counts(&state.db, "default");
    assert_eq!(jobs["queued"] + jobs["done"] + jobs["pages_total"], 0);
    // The scan's inventory is kept: it is no write to Notion or the queue.
    assert_eq!(inventory(&state.db, "default").len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_stopped_mid_way_resumes_with_no_page_created_twice_or_lost() {
    let lab = Lab::start(LabConfig {
        notion_per_second: 40,
        ..fast()
    })
    .await;
    let user = lab.add_user("alice", generate(&spec(30, 4)));
    let state = State::new();
    lab.sign_in(&Db::open(&state.db).unwrap(), "alice", &user);
    let cancel = Cancel::new();
    let rec = Recorder {
        stop: Some((cancel.clone(), 1)),
        ..Recorder::default()
    };
    let req = Request {
        account: Some("alice".into()),
        ..plan_to(&lab)
    };
    let first = ran(run(&lab, &state, &req, &rec, Some(cancel)).await.unwrap());
    assert_eq!(first.end, RunEnd::Stopped);
    let s = first.summary;
    // What was in flight at the stop finished (at most the workers' pages), nothing more began.
    let snap = rec.at_stop.lock().unwrap().clone().expect("stopped");
    // The progress handle saw the whole plan, its ETA, and this run's requests.
    assert_eq!(snap.total, 30, "{snap:?}");
    assert!(snap.eta_seconds.is_some() && snap.graph.requests > 0 && snap.notion.requests > 0);
    let at_stop = snap.done;
    assert!(
        at_stop >= 1 && s.pages_done >= at_stop && s.pages_done <= at_stop + engine::WORKERS as i64,
        "{at_stop} pages at the stop, {s:?}"
    );
    assert_eq!((s.pages_total, s.failed), (30, 0));
    let c = counts(&state.db, "alice");
    assert_eq!(
        c["running"], 0,
        "a stop parks what it did not finish: {c:?}"
    );

    let rec = Recorder::default();
    let resume = Request {
        account: Some("alice".into()),
        resume: true,
        retry_failed: true,
        ..Request::default()
    };
    let second = ran(run(&lab, &state, &resume, &rec, None).await.unwrap());
    assert_eq!(second.end, RunEnd::Finished);
    assert_eq!(
        (second.summary.pages_done, second.summary.pages_total),
        (30, 30)
    );
    assert_eq!(
        second
            .stats
            .pages
            .load(std::sync::atomic::Ordering::Relaxed) as i64,
        30 - s.pages_done,
        "the resume writes only what the first run left"
    );
    // A resume plans nothing: no scan, only the account's plan before its work (and, asked to,
    // the failed items put back first: none, the stop failed nothing).
    assert_eq!(
        rec.lines(),
        [
            "0 failed items put back in the queue",
            "migrating",
            "plan alice"
        ]
    );
    assert_mirrors(&lab, &user.id, &inventory(&state.db, "alice"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deadline_reached_before_the_drain_parks_all_the_work_and_a_resume_does_it() {
    let lab = Lab::start(fast()).await;
    let user = lab.add_user("alice", generate(&spec(8, 5)));
    let state = State::new();
    lab.sign_in(&Db::open(&state.db).unwrap(), "alice", &user);
    let rec = Recorder::default();
    let req = Request {
        account: Some("alice".into()),
        // Reached at once: the scan and the plan happen, no work is taken.
        deadline: Some(Clock::system().now_ms()),
        ..plan_to(&lab)
    };
    let r = ran(run(&lab, &state, &req, &rec, None).await.unwrap());
    assert_eq!(r.end, RunEnd::Stopped);
    assert_eq!((r.summary.pages_done, r.summary.pages_total), (0, 8));
    assert_eq!(r.summary.failed, 0, "a deadline fails nothing");
    assert_eq!(notion_writes(&lab), 0, "{:?}", lab.notion.counters());
    assert_eq!(rec.plans().len(), 1, "the plan is told before the drain");

    let resume = Request {
        resume: true,
        ..Request::default()
    };
    let r = ran(run(&lab, &state, &resume, &Recorder::default(), None)
        .await
        .unwrap());
    assert_eq!(r.end, RunEnd::Finished);
    assert_eq!((r.summary.pages_done, r.summary.pages_total), (8, 8));
    assert_mirrors(&lab, &user.id, &inventory(&state.db, "alice"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_library_run_fails_with_typed_errors_that_carry_their_meaning_and_holds_the_run_lock() {
    let lab = Lab::start(fast()).await;
    let user = lab.add_user("alice", generate(&spec(3, 6)));
    let state = State::new();
    lab.sign_in(&Db::open(&state.db).unwrap(), "alice", &user);
    let rec = Recorder::default();
    // A notebook the account does not have: a usage error, nothing planned.
    let req = Request {
        account: Some("alice".into()),
        picks: Picks {
            notebooks: vec!["Nope".into()],
            ..Picks::default()
        },
        ..plan_to(&lab)
    };
    let e = run(&lab, &state, &req, &rec, None).await.unwrap_err();
    assert_eq!(e.meaning(), Some(Meaning::Usage), "{e}");
    assert!(
        e.to_string()
            .contains("no notebook named or with id \"Nope\""),
        "{e}"
    );
    assert_eq!(counts(&state.db, "alice")["pages_total"], 0);
    // A page that is not shared with the integration is refused before any work.
    let req = Request {
        account: Some("alice".into()),
        target: Some("01234567-89ab-cdef-0123-456789abcdef".into()),
        ..Request::default()
    };
    let e = run(&lab, &state, &req, &rec, None).await.unwrap_err();
    assert_eq!(e.meaning(), Some(Meaning::Usage), "{e}");
    // An account nobody signed in: sign-in required.
    let req = Request {
        account: Some("carol".into()),
        ..plan_to(&lab)
    };
    let e = run(&lab, &state, &req, &rec, None).await.unwrap_err();
    assert_eq!(e.meaning(), Some(Meaning::SignIn), "{e}");
    // Resuming nothing is no error.
    let req = Request {
        resume: true,
        ..Request::default()
    };
    assert!(matches!(
        run(&lab, &state, &req, &rec, None).await.unwrap(),
        Outcome::NothingQueued
    ));
    // Another live process migrating with this database: busy, naming it; a dry run goes on.
    let db = Arc::new(Db::open(&state.db).unwrap());
    let clock = Clock::system();
    let other = RunLock::acquire(db.clone(), 4242, &clock, |_| false)
        .unwrap()
        .unwrap();
    let settings = lab.settings(&state.db);
    let cancel = Cancel::new();
    let svc = |dry_run| {
        (
            Services {
                settings: &settings,
                notion_token: lab.notion.token(),
                db: &db,
                clock: &clock,
                jitter: Jitter::seeded(5),
                cancel: &cancel,
                process: Process {
                    pid: std::process::id() as i64,
                    is_alive: |_| true,
                },
            },
            Request {
                account: Some("alice".into()),
                dry_run,
                ..plan_to(&lab)
            },
        )
    };
    let (s, req) = svc(false);
    let e = engine::migrate(s, &req, &rec).await.unwrap_err();
    assert_eq!(e.meaning(), Some(Meaning::Busy), "{e}");
    assert!(e.to_string().contains("pid 4242"), "{e}");
    let (s, req) = svc(true);
    assert!(matches!(
        engine::migrate(s, &req, &rec).await.unwrap(),
        Outcome::DryRun { .. }
    ));
    other.release().unwrap();
}

/// Another process that takes the database's write lock the moment planning starts reading, and
/// holds it while a ticker on the run's runtime ticks `TICKS` times.
struct LockWhenScanning {
    db: std::path::PathBuf,
    inner: Recorder,
    /// The ticker: its count of ticks while the lock was held.
    held: Mutex<Option<tokio::task::JoinHandle<u32>>>,
}

const TICKS: u32 = 20;

impl Observer for LockWhenScanning {
    fn event(&self, event: Event) {
        if matches!(event, Event::Scanning { .. }) && self.held.lock().unwrap().is_none() {
            let other = rusqlite::Connection::open(&self.db).unwrap();
            other.execute_batch("BEGIN IMMEDIATE").unwrap();
            *self.held.lock().unwrap() = Some(tokio::spawn(async move {
                let mut ticks = 0;
                for _ in 0..TICKS {
                    tokio::time::sleep(Duration::from_millis(10)).await;
                    ticks += 1;
                }
                other.execute_batch("COMMIT").unwrap();
                ticks
            }));
        }
        self.inner.event(event);
    }
}

/// Planning's store calls (the import's inventory, the plan) wait for a database another
/// process holds off the runtime: the one thread of a current-thread runtime goes on running
/// every other task meanwhile, and planning goes on once the lock is let go.
#[tokio::test(flavor = "current_thread")]
async fn planning_behind_a_locked_database_leaves_the_runtime_to_other_tasks() {
    let Some(section) = crate::files_support::sample("apache-tika/testOneNote1.one") else {
        return;
    };
    let lab = Lab::start(crate::files_support::fast()).await;
    let state = State::new();
    let rec = LockWhenScanning {
        db: state.db.clone(),
        inner: Recorder::default(),
        held: Mutex::new(None),
    };
    let req = Request {
        from: vec![section],
        ..plan_to(&lab)
    };
    let r = ran(run(&lab, &state, &req, &rec, None).await.unwrap());
    assert_eq!(r.end, RunEnd::Finished);
    let ticker = rec
        .held
        .lock()
        .unwrap()
        .take()
        .expect("planning read the import");
    assert_eq!(ticker.await.unwrap(), TICKS);
    assert!(
        rec.inner.lines().iter().any(|l| l.starts_with("plan ")),
        "{:?}",
        rec.inner.lines()
    );
}
