//! `migrate --via auto|api|files` end to end with the real binary, on a notebook the Graph test
//! server serves both ways from real OneNote files (the OneNote API, and its section files through
//! the drive API): the files way sends no page-content request and a few drive requests per
//! section and writes the same Notion pages as the API way; a section whose file cannot be read
//! falls back to the API alone; a download killed mid-way resumes; `auto` follows the token's
//! permissions.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::bin_support::Start;
use crate::files_support::{body_text, notion_tree, page_id};
use crate::migrate_support::{command, notebridge, State};
use notebridge::store::Db;
use notebridge_testkit::graph::drive::FilesNotebook;
use notebridge_testkit::lab::{onenote_fixture, Lab, LabConfig};
use serde_json::Value;

/// A notebook folder with a section group (sections at two levels).
const NOTEBOOK: &str = "onenote.rs/samples/New Section Group";

fn fast() -> LabConfig {
    LabConfig {
        notion_per_second: 100,
        notion_burst: 20,
        ..LabConfig::default()
    }
}

/// A lab whose user `alice` has the files notebook "Field notes", signed in with `scopes`.
async fn lab_with(config: LabConfig, scopes: &[&str]) -> (Lab, State, FilesNotebook) {
    let lab = Lab::start(config).await;
    let (user, nb) = lab.add_files_user("alice", "Field notes", &onenote_fixture(NOTEBOOK));
    let state = State::new();
    lab.sign_in_with(&Db::open(&state.db).unwrap(), "alice", &user, scopes);
    (lab, state, nb)
}

const WITH_FILES: &[&str] = &["offline_access", "User.Read", "Notes.Read", "Files.Read"];
const WITHOUT_FILES: &[&str] = &["offline_access", "User.Read", "Notes.Read"];

async fn migrate(lab: &Lab, state: &State, via: &str) -> Value {
    let (code, out, err) = notebridge(
        lab,
        state,
        &[
            "--json",
            "migrate",
            "--account",
            "alice",
            "--to",
            &lab.target_page,
            "--via",
            via,
        ],
    )
    .await;
    assert_eq!(code, 0, "stdout: {out}\nstderr: {err}");
    let last = out.lines().last().unwrap_or_default();
    serde_json::from_str(last).unwrap_or_else(|e| panic!("{e}: {out}"))
}

/// OneNote API requests for page content (`.../pages/{id}/content`).
fn page_content_requests(lab: &Lab) -> usize {
    lab.graph
        .log()
        .iter()
        .filter(|e| e.path.contains("/pages/") && e.path.contains("/content"))
        .count()
}

/// Every page's body text under the target, by title.
fn bodies(lab: &Lab) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = notion_tree(lab, &lab.target_page)
        .into_iter()
        .map(|(_, title)| {
            let id = page_id(lab, &lab.target_page, &title).unwrap();
            (title, body_text(lab, &id))
        })
        .collect();
    out.sort();
    out
}

fn status(state: &State, lab: &Lab) -> Value {
    let out = crate::migrate_support::bin(lab, state, &["--json", "status"]).run_blocking();
    assert_eq!(out.code, Some(0), "{out:?}");
    serde_json::from_str(&out.stdout).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn via_files_reads_each_section_file_once_and_writes_what_the_api_way_writes() {
    let (api_lab, api_state, _) = lab_with(fast(), WITH_FILES).await;
    let by_api = migrate(&api_lab, &api_state, "api").await;
    assert!(page_content_requests(&api_lab) > 0);
    let d = api_lab.graph.drive_counters();
    assert_eq!(
        (d.api_requests, d.downloads),
        (0, 0),
        "--via api is unchanged: no drive request"
    );

    let (lab, state, nb) = lab_with(fast(), WITH_FILES).await;
    let doc = migrate(&lab, &state, "files").await;
    assert_eq!(
        page_content_requests(&lab),
        0,
        "no OneNote page-content request: {:?}",
        lab.graph.log()
    );
    let sections = nb.sections.len() as u64;
    let d = lab.graph.drive_counters();
    assert_eq!(d.downloads, sections, "each section file downloaded once");
    // The drive, the notebook's folder by its path, a listing per folder, a content request per
    // section.
    assert!(
        d.api_requests <= 2 + (1 + nb.groups.len() as u64) + sections,
        "{d:?} for {sections} sections"
    );
    assert_eq!(
        doc["drive"]["pages_from_files"], doc["pages_total"],
        "{doc}"
    );
    assert_eq!(doc["drive"]["pages_fell_back"], 0);
    assert!(
        doc["plan"]["accounts"][0]["pages_by_files"]
            .as_i64()
            .unwrap()
            > 0
    );

    // The same Notion pages, in the same tree, with the same bodies.
    assert_eq!(
        notion_tree(&lab, &lab.target_page),
        notion_tree(&api_lab, &api_lab.target_page)
    );
    assert_eq!(bodies(&lab), bodies(&api_lab));
    assert_eq!(doc["pages_total"], by_api["pages_total"]);

    // The downloads are gone once their pages are written.
    let downloads = PathBuf::from(format!("{}.downloads", state.db.display()));
    assert!(
        !downloads.exists() || std::fs::read_dir(&downloads).unwrap().next().is_none(),
        "left behind: {downloads:?}"
    );
    let s = status(&state, &lab);
    let ways = &s["accounts"][0]["ways"];
    assert_eq!(ways["files"], sections, "{ways}");
    assert_eq!(ways["fell_back"], 0);
    // And Notion holds every planned page once, complete.
    let (code, out, err) = notebridge(&lab, &state, &["verify"]).await;
    assert_eq!(code, 0, "stdout: {out}\nstderr: {err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_section_whose_file_does_not_read_goes_through_the_api_alone_and_says_why() {
    let (lab, state, nb) = lab_with(fast(), WITH_FILES).await;
    // One file damaged in storage, one announced over the service's 2 GB (refused up front).
    let broken = &nb.sections[0];
    let huge = &nb.sections[1];
    lab.graph.drive_faults().garble(&broken.item_id, true);
    lab.graph.drive_faults().too_large(&huge.item_id, true);
    let doc = migrate(&lab, &state, "files").await;
    let by_api = broken.pages.len() + huge.pages.len();
    let fell_back = doc["drive"]["pages_fell_back"].as_u64().unwrap();
    assert_eq!(fell_back, by_api as u64, "{doc}");
    assert_eq!(
        page_content_requests(&lab),
        by_api,
        "only the two sections' pages through the API"
    );
    assert_eq!(
        lab.graph.drive_counters().downloads,
        nb.sections.len() as u64 - 1,
        "the file over 2 GB is not asked for"
    );
    // Every page once: the API way's tree.
    let (api_lab, api_state, _) = lab_with(fast(), WITH_FILES).await;
    migrate(&api_lab, &api_state, "api").await;
    assert_eq!(
        notion_tree(&lab, &lab.target_page),
        notion_tree(&api_lab, &api_lab.target_page)
    );
    let s = status(&state, &lab);
    let ways = &s["accounts"][0]["ways"];
    assert_eq!(ways["fell_back"], 2, "{ways}");
    let too_large = ways["sections"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["section_id"] == huge.section_id.as_str())
        .unwrap();
    assert!(
        too_large["fell_back"]
            .as_str()
            .unwrap()
            .contains("could not be downloaded"),
        "{too_large}"
    );
    let section = ways["sections"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["section_id"] == broken.section_id.as_str())
        .unwrap();
    assert!(
        section["fell_back"]
            .as_str()
            .unwrap()
            .contains("could not be read"),
        "{section}"
    );
    let (code, text, _) = notebridge(&lab, &state, &["status"]).await;
    assert_eq!(code, 0);
    assert!(text.contains("  sections by way (--via):"), "{text}");
    assert!(
        text.contains("2 sections through the OneNote API instead of their files")
            || text.contains("1 section through the OneNote API instead of its file"),
        "{text}"
    );
    // And the report says it per section.
    let report = state.dir.path().join("r.html");
    let (code, _, err) = notebridge(
        &lab,
        &state,
        &["report", "--output", report.to_str().unwrap()],
    )
    .await;
    assert_eq!(code, 0, "{err}");
    let html = std::fs::read_to_string(report).unwrap();
    assert!(html.contains("OneNote API instead of its file"), "{html}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auto_reads_files_with_the_file_permission_and_the_api_without_it() {
    let (lab, state, _) = lab_with(fast(), WITH_FILES).await;
    let doc = migrate(&lab, &state, "auto").await;
    assert_eq!(page_content_requests(&lab), 0);
    assert!(lab.graph.drive_counters().downloads > 0);
    assert_eq!(doc["drive"]["pages_from_files"], doc["pages_total"]);

    let (lab, state, _) = lab_with(fast(), WITHOUT_FILES).await;
    let (code, out, err) = notebridge(
        &lab,
        &state,
        &["migrate", "--account", "alice", "--to", &lab.target_page],
    )
    .await;
    assert_eq!(code, 0, "stdout: {out}\nstderr: {err}");
    assert!(page_content_requests(&lab) > 0);
    let d = lab.graph.drive_counters();
    assert_eq!((d.api_requests, d.downloads), (0, 0));
    assert!(
        err.contains("through the OneNote API (the token lacks Files.Read"),
        "the plan says why: {err}"
    );
}

/// The download folder's partial files.
fn partial_downloads(dir: &Path) -> usize {
    let Ok(sections) = std::fs::read_dir(dir) else {
        return 0;
    };
    sections
        .flatten()
        .flat_map(|s| std::fs::read_dir(s.path()).into_iter().flatten().flatten())
        .filter(|f| f.file_name().to_string_lossy().ends_with(".part"))
        .filter(|f| f.metadata().is_ok_and(|m| m.len() > 0))
        .count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killed_mid_download_a_resume_goes_on_from_the_partial_file_with_no_page_twice() {
    let (lab, state, _) = lab_with(LabConfig::default(), WITH_FILES).await;
    // Every download is cut after a few bytes: the partial file grows and the client retries.
    lab.graph.drive_faults().cut_downloads(10_000, 64);
    let mut child = command(
        &lab,
        &state,
        &[
            "migrate",
            "--account",
            "alice",
            "--to",
            &lab.target_page,
            "--via",
            "files",
        ],
    )
    .start();
    let downloads = PathBuf::from(format!("{}.downloads", state.db.display()));
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    while partial_downloads(&downloads) == 0 {
        assert!(tokio::time::Instant::now() < deadline, "no download began");
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    // kill -9 with a partial file on disk.
    child.start_kill().unwrap();
    child.wait().await.unwrap();
    assert!(partial_downloads(&downloads) > 0);
    lab.graph.drive_faults().clear();

    let (code, out, err) = notebridge(&lab, &state, &["--json", "migrate", "--resume"]).await;
    assert_eq!(code, 0, "stdout: {out}\nstderr: {err}");
    let doc: Value = serde_json::from_str(out.lines().last().unwrap()).unwrap();
    assert!(
        doc["drive"]["resumed"].as_u64().unwrap() >= 1,
        "the partial file was continued, not fetched again: {doc}"
    );
    assert_eq!(page_content_requests(&lab), 0);
    let (api_lab, api_state, _) = lab_with(fast(), WITH_FILES).await;
    migrate(&api_lab, &api_state, "api").await;
    assert_eq!(
        notion_tree(&lab, &lab.target_page),
        notion_tree(&api_lab, &api_lab.target_page),
        "every page once"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dry_run_counts_drive_requests_apart_and_downloads_nothing() {
    let (lab, state, nb) = lab_with(fast(), WITH_FILES).await;
    let (code, out, err) = notebridge(
        &lab,
        &state,
        &[
            "migrate",
            "--dry-run",
            "--account",
            "alice",
            "--to",
            &lab.target_page,
            "--via",
            "files",
        ],
    )
    .await;
    assert_eq!(code, 0, "stdout: {out}\nstderr: {err}");
    let sections = nb.sections.len();
    let pages: usize = nb.sections.iter().map(|s| s.pages.len()).sum();
    assert!(
        out.contains(&format!(
            "plan: alice: {pages} of the pages from {sections} section files: {} drive requests",
            2 * sections
        )),
        "{out}"
    );
    assert!(
        out.contains(&format!("plan: alice: {pages} pages")) && out.contains(", 0 Graph requests:"),
        "no OneNote request for them: {out}"
    );
    assert!(
        out.contains("the other 0 pages through the OneNote API"),
        "{out}"
    );
    assert!(
        err.contains(&format!(
            "alice: {sections} sections from their files (--via files)"
        )),
        "{err}"
    );
    assert_eq!(lab.graph.drive_counters().downloads, 0);
    assert_eq!(page_content_requests(&lab), 0);
    assert!(lab.notion.pages_under(&lab.target_page).is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auto_reads_a_groups_notebook_from_its_library_with_sites_read_all() {
    use notebridge_testkit::graph::teams::{group_key, TeamGroup};
    use notebridge_testkit::lab::TEAM_SCOPES;
    const GROUP: &str = "6d2c1e0a-0000-4000-8000-00000000cafe";
    let lab = Lab::start(fast()).await;
    let alice = lab.add_user("alice", Default::default());
    lab.graph.add_group(
        TeamGroup::new(GROUP, "Marketing", &[&alice.id]),
        Default::default(),
    );
    let nb =
        lab.graph
            .add_files_notebook(&group_key(GROUP), "Campaigns", &onenote_fixture(NOTEBOOK));
    let state = State::new();
    lab.sign_in_with(&Db::open(&state.db).unwrap(), "alice", &alice, TEAM_SCOPES);
    let out = command(
        &lab,
        &state,
        &[
            "migrate",
            "--account",
            "alice",
            "--group",
            "Marketing",
            "--to",
            &lab.target_page,
        ],
    )
    .env("NOTEBRIDGE_SCOPES", TEAM_SCOPES.join(" "))
    .run_to_end()
    .await;
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert_eq!(page_content_requests(&lab), 0, "{err}");
    assert_eq!(
        lab.graph.drive_counters().downloads,
        nb.sections.len() as u64
    );
    assert!(
        err.contains("sections from their files (the token carries Sites.Read.All)"),
        "{err}"
    );
}
