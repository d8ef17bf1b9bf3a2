//! A notebook every page listing of which is empty while its pages and section files exist (field
//! report: microsoft-graph-explorer-v4#3935, 2025-08 and 2026-03; the Graph test server's
//! `empty_notebook_listings`, a model of that report, not a recorded answer). The sections Graph
//! lists empty are read from their section files through the drive API, as `--via files` reads
//! them, whatever `--via` says; a section whose file cannot be had fails with that reason, and
//! `migrate --resume --retry-failed` reads it again. Driven through the binary in an account
//! user's clean environment (the client id and `NOTION_TOKEN`).

use crate::files_support::notion_tree;
use crate::migrate_support::{notebridge, State};
use notebridge::store::Db;
use notebridge_testkit::graph::drive::FilesNotebook;
use notebridge_testkit::graph::faults::Field;
use notebridge_testkit::lab::{onenote_fixture, Lab, LabConfig};
use serde_json::Value;

/// A notebook folder with a section group (sections at two levels).
const NOTEBOOK: &str = "onenote.rs/samples/New Section Group";
const SCOPES: &[&str] = &["offline_access", "User.Read", "Notes.Read", "Files.Read"];

async fn lab() -> (Lab, State, FilesNotebook) {
    let lab = Lab::start(LabConfig {
        notion_per_second: 100,
        notion_burst: 20,
        ..LabConfig::default()
    })
    .await;
    let (user, nb) = lab.add_files_user("alice", "Field notes", &onenote_fixture(NOTEBOOK));
    let state = State::new();
    lab.sign_in_with(&Db::open(&state.db).unwrap(), "alice", &user, SCOPES);
    (lab, state, nb)
}

fn listed_empty(lab: &Lab, nb: &FilesNotebook) {
    lab.graph.faults().field(Field {
        empty_notebook_listings: vec![nb.notebook_id.clone()],
        ..Field::default()
    });
}

fn last_json(out: &str) -> Value {
    let last = out.lines().last().unwrap_or_default();
    serde_json::from_str(last).unwrap_or_else(|e| panic!("{e}: {out}"))
}

fn pages_in(nb: &FilesNotebook) -> usize {
    nb.sections.iter().map(|s| s.pages.len()).sum()
}

/// `--via api` names the OneNote API, yet the sections Graph lists empty are read from their
/// files: every page arrives, the run says so, `verify` is complete.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_page_of_a_notebook_listed_empty_arrives_from_its_section_files() {
    let (lab, state, nb) = lab().await;
    assert!(pages_in(&nb) > 1);
    listed_empty(&lab, &nb);
    let to = lab.target_page.clone();
    let args = [
        "--json",
        "migrate",
        "--account",
        "alice",
        "--to",
        &to,
        "--via",
        "api",
    ];
    let (code, out, err) = notebridge(&lab, &state, &args).await;
    assert_eq!(code, 0, "stdout: {out}\nstderr: {err}");
    let doc = last_json(&out);
    assert_eq!(doc["pages_done"], pages_in(&nb), "{doc}");
    assert_eq!(doc["drive"]["pages_from_files"], pages_in(&nb), "{doc}");
    assert!(
        err.contains("whose section files hold pages")
            && err.contains("their pages are migrated from the files"),
        "the run says so: {err}"
    );
    assert!(
        err.contains("2 sections from their files (listed empty by Graph)"),
        "and which way the sections take, though --via api was asked: {err}"
    );
    // Every page's title is in Notion.
    let titles: Vec<String> = notion_tree(&lab, &to).into_iter().map(|(_, t)| t).collect();
    for s in &nb.sections {
        for p in &s.pages {
            assert!(
                titles.contains(&p.title),
                "{} missing from {titles:?}",
                p.title
            );
        }
    }
    // Each section file was downloaded once: at planning, where the queue then read it.
    assert_eq!(
        lab.graph.drive_counters().downloads,
        nb.sections.len() as u64
    );
    let (code, out, err) = notebridge(&lab, &state, &["--json", "verify"]).await;
    assert_eq!(code, 0, "stdout: {out}\nstderr: {err}");
    // A second run finds every page migrated: nothing is written again.
    let (code, out, err) = notebridge(&lab, &state, &args).await;
    assert_eq!(code, 0, "stdout: {out}\nstderr: {err}");
    assert_eq!(notion_tree(&lab, &to).len(), titles.len());
    // `sync` scans as `migrate` does: the sections, listed empty again, are read from their files
    // again, so nothing is taken for deleted and nothing is written.
    let (code, out, err) =
        notebridge(&lab, &state, &["--json", "sync", "--account", "alice"]).await;
    assert_eq!(code, 0, "stdout: {out}\nstderr: {err}");
    let doc = last_json(&out);
    for n in [
        "created",
        "updated",
        "moved",
        "trashed",
        "kept_deleted",
        "failed",
    ] {
        assert_eq!(doc[n], 0, "{n}: {doc}");
    }
    assert_eq!(notion_tree(&lab, &to).len(), titles.len());
}

/// With the files' content gone from the drive, nothing confirms the sections empty: each fails
/// with the reason (exit 4), `status` names it and `verify` is not complete. Once the drive
/// serves them again, the advice printed, `migrate --resume --retry-failed`, migrates every page.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sections_listed_empty_whose_files_cannot_be_read_fail_and_are_retried() {
    let (lab, state, nb) = lab().await;
    listed_empty(&lab, &nb);
    for s in &nb.sections {
        lab.graph.drive_faults().lose_content(&s.item_id, true);
    }
    let to = lab.target_page.clone();
    let (code, out, err) = notebridge(
        &lab,
        &state,
        &["--json", "migrate", "--account", "alice", "--to", &to],
    )
    .await;
    assert_eq!(code, 4, "stdout: {out}\nstderr: {err}");
    assert!(
        err.contains("nothing confirms it is empty"),
        "the reason is told: {err}"
    );
    let advice = "notebridge migrate --resume --retry-failed";
    let (code, status, err) = notebridge(&lab, &state, &["status"]).await;
    assert_eq!(code, 0, "{err}");
    for s in &nb.sections {
        assert!(
            status.contains(&s.section_id),
            "{} in {status}",
            s.section_id
        );
    }
    assert!(
        status.contains("nothing confirms it is empty") && status.contains(advice),
        "{status}"
    );
    let (code, out, err) = notebridge(&lab, &state, &["--json", "verify"]).await;
    assert_eq!(code, 4, "stdout: {out}\nstderr: {err}");
    assert_ne!(last_json(&out)["verdict"], "complete", "{out}");

    for s in &nb.sections {
        lab.graph.drive_faults().lose_content(&s.item_id, false);
    }
    let mut printed: Vec<&str> = advice.split(' ').skip(1).collect();
    printed.insert(0, "--json");
    let (code, out, err) = notebridge(&lab, &state, &printed).await;
    assert_eq!(code, 0, "stdout: {out}\nstderr: {err}");
    let (code, out, err) = notebridge(&lab, &state, &["--json", "verify"]).await;
    assert_eq!(code, 0, "stdout: {out}\nstderr: {err}");
    let titles: Vec<String> = notion_tree(&lab, &to).into_iter().map(|(_, t)| t).collect();
    for s in &nb.sections {
        for p in &s.pages {
            assert!(
                titles.contains(&p.title),
                "{} missing from {titles:?}",
                p.title
            );
        }
    }
}
