//! `migrate --via api` against `--via files` (issue 30): the real `notebridge` binary (release
//! build) migrates the same notebook, made of the readable section files in
//! `fixtures/onenote-files/` (one section each, served by the Graph test server both through the
//! OneNote API and, file by file, through the drive API), once each way, into the Notion test
//! server. The user's OneNote windows are the documented counts in short windows
//! (`120/600ms,400/6s`, `NOTEBRIDGE_BENCH_WINDOWS`); Notion answers at 50/s
//! (`NOTEBRIDGE_BENCH_NOTION_RATE`, client and server alike), so the OneNote windows bind the API
//! way. Figures per way, one line each: pages, OneNote requests, drive requests (API calls and
//! downloads) and bytes, Notion requests, wall time at the short windows; then the budget model's
//! time at the documented limits (120/60s, 400/3600s, Notion's 3/s) for the same requests, and for
//! a notebook of 1,300 pages in 40 sections (the incident's size, `benches/migrate.rs`) whose pages
//! cost what these cost: the OneNote requests a page adds on the API way (the API run's less the
//! files run's, which is the scan both share), Notion's per page and per section as measured, the
//! scan's listings per section, and two drive requests per section file plus the drive, the
//! folder and its listing.
//! Run: `cargo bench --bench via`.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use notebridge::limiter::budget::{earliest, human, LaneWindow};
use notebridge::settings::parse_windows;
use notebridge::store::Db;
use notebridge_testkit::lab::{onenote_fixture, Lab, LabConfig, SIGN_IN_SCOPES};

/// The documented per-user counts in windows short enough for a bench.
const SHORT_WINDOWS: &str = "120/600ms,400/6s";
/// The documented per-user limits.
const DOCUMENTED: &str = "120/60s,400/3600s";
/// Notion's documented average rate (requests per second).
const NOTION_DOCUMENTED: f64 = 3.0;

/// Every sample section file the reader opens, once (fuzzed samples left out).
fn sections() -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for dir in [
        "apache-tika",
        "interop-testsuites/SUT",
        "onenote.rs/samples",
        "onenote.rs/samples/New Section Group",
    ] {
        let Ok(rd) = std::fs::read_dir(onenote_fixture(dir)) else {
            continue;
        };
        let mut files: Vec<_> = rd
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "one"))
            .filter(|p| !p.to_string_lossy().contains("fuzz"))
            .filter(|p| {
                notebridge::onefile::open_section(&notebridge::onefile::SectionLocation::File(
                    p.clone(),
                ))
                .is_ok()
            })
            .collect();
        files.sort();
        out.extend(files);
    }
    out
}

/// What one way's migration did.
struct Ran {
    pages: u64,
    containers: u64,
    onenote: u64,
    drive_api: u64,
    downloads: u64,
    bytes: u64,
    notion: u64,
    wall: Duration,
}

fn migrate(via: &str, windows: &str, notion_rate: u32) -> Ran {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let lab = Lab::start(LabConfig {
            user_windows: windows.into(),
            notion_per_second: notion_rate,
            notion_burst: notion_rate,
            ..LabConfig::default()
        })
        .await;
        let user = lab.add_user("alice", Default::default());
        lab.graph
            .add_files_notebook_of(&user.id, "Samples", &sections());
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("state.db");
        lab.sign_in_with(&Db::open(&db).unwrap(), "alice", &user, SIGN_IN_SCOPES);
        let env: Vec<(String, String)> = lab
            .env()
            .into_iter()
            .filter(|(k, _)| {
                k != "NOTEBRIDGE_GRAPH_APP_LIMITS" && k != "NOTEBRIDGE_GRAPH_APP_CONCURRENCY"
            })
            .collect();
        let target = lab.target_page.clone();
        let way = via.to_owned();
        let started = Instant::now();
        let out = tokio::task::spawn_blocking(move || {
            Command::new(env!("CARGO_BIN_EXE_notebridge"))
                .env_clear()
                .env("HOME", dir.path())
                .envs(env)
                .arg("--db")
                .arg(&db)
                .args(["--no-progress", "--json", "migrate", "--account", "alice"])
                .args(["--to", &target, "--via", &way])
                .stdin(Stdio::null())
                .output()
                .expect("the notebridge binary starts")
        })
        .await
        .unwrap();
        let wall = started.elapsed();
        assert!(
            out.status.success(),
            "migrate --via {via} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let stdout = String::from_utf8_lossy(&out.stdout);
        let doc: serde_json::Value =
            serde_json::from_str(stdout.lines().last().unwrap_or_default()).unwrap();
        let d = lab.graph.drive_counters();
        Ran {
            pages: doc["pages_total"].as_u64().unwrap_or(0),
            containers: doc["this_run"]["containers"].as_u64().unwrap_or(0),
            onenote: lab.graph.counters().total,
            drive_api: d.api_requests,
            downloads: d.downloads,
            bytes: d.bytes_sent,
            notion: lab.notion.request_log().len() as u64,
            wall,
        }
    })
}

/// The budget model's time for `onenote` requests through `windows` and `notion` requests at
/// Notion's documented rate: the slower of the two (they run side by side).
fn model(onenote: u64, notion: u64, windows: &str) -> Duration {
    let lanes: Vec<LaneWindow> = parse_windows(windows)
        .unwrap()
        .into_iter()
        .map(|w| LaneWindow {
            window: w,
            usable: w.count,
        })
        .collect();
    earliest(onenote, &lanes).max(Duration::from_secs_f64(notion as f64 / NOTION_DOCUMENTED))
}

fn main() {
    let windows = std::env::var("NOTEBRIDGE_BENCH_WINDOWS").unwrap_or(SHORT_WINDOWS.into());
    let rate: u32 = std::env::var("NOTEBRIDGE_BENCH_NOTION_RATE")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(50);
    println!(
        "via: {} section files from fixtures/onenote-files, user windows {windows}, Notion {rate}/s",
        sections().len()
    );
    let api = migrate("api", &windows, rate);
    let files = migrate("files", &windows, rate);
    for (via, r) in [("api", &api), ("files", &files)] {
        println!(
            "via {via:<5}: {} pages, {} notebook/section pages; OneNote {} requests, drive {} \
             requests + {} downloads ({:.1} KB), Notion {} requests; wall {:.2}s at {windows}; \
             the budget model at the documented limits ({DOCUMENTED}, Notion 3/s): {}",
            r.pages,
            r.containers,
            r.onenote,
            r.drive_api,
            r.downloads,
            r.bytes as f64 / 1e3,
            r.notion,
            r.wall.as_secs_f64(),
            human(model(r.onenote, r.notion, DOCUMENTED)),
        );
    }
    // A 1,300-page notebook in 40 sections whose pages cost what these cost.
    let (pages, sections) = (1300.0, 40.0);
    let n = |x: u64| x as f64;
    let scan = 1.0 + sections;
    let per_page_api = (n(api.onenote) - n(files.onenote)).max(0.0) / n(api.pages.max(1));
    let notion_per_container = 1.0;
    let notion_per_page =
        (n(api.notion) - n(api.containers) * notion_per_container) / n(api.pages.max(1));
    let notion = (pages * notion_per_page + (sections + 1.0) * notion_per_container).round() as u64;
    let onenote_api = (scan + pages * per_page_api).round() as u64;
    let onenote_files = scan as u64;
    // The drive, the notebook's folder by path, its listing; a content request and a download
    // per section.
    let drive = 3 + 2 * sections as u64;
    println!(
        "1,300 pages in 40 sections at the documented limits: via api {onenote_api} OneNote \
         requests, {}; via files {onenote_files} OneNote + {drive} drive requests, {} (Notion \
         {notion} requests at 3/s binds)",
        human(model(onenote_api, notion, DOCUMENTED)),
        human(model(onenote_files, notion, DOCUMENTED)),
    );
}
