//! Migration benchmark (issues 8 and 15): the real `notebridge` binary (release build), with its
//! default settings (per-user windows and cap only, `auto` lanes), migrates a 1,300-page notebook (the
//! incident's shape: 40 sections, one image per page) from the Graph test server into the Notion test
//! server, over loopback, with the documented per-user counts in short windows (`120/600ms,400/6s`).
//! Notion's rate is set high (`NOTEBRIDGE_BENCH_NOTION_RATE`, default 300/s, client and server alike)
//! so that Graph is the bottleneck. A `notebridge scan` of the same notebook runs once on its own
//! before the migration and once while the migration saturates the budget. Figures: the migration's
//! efficiency against the full per-user budget (the ideal time the windows allow for the OneNote
//! requests made, over their span), the plan's predicted time, the scan during the migration vs idle,
//! 429s, peak RSS of the binary (VmHWM polled from /proc and ru_maxrss from wait4), and Notion requests
//! per page. One line each. `NOTEBRIDGE_BENCH_BACKGROUND_SHARE` sets a fixed share instead of `auto`.
//!
//! The pipelined run (issue 15 point 3): a 300-page notebook of a few long sections (the end-to-end
//! tests' shape: an image, an attachment and often a drawing per page), user `12/600ms,100/6s`,
//! Notion at 300/s, Graph answering after 100 ms (`NOTEBRIDGE_BENCH_LATENCY_MS`). The figure is
//! the Graph requests' first-to-last span against the earliest time the windows allow for that
//! many (target <= 1.1x), with the most pages the run held ahead of their turn. It runs twice, with
//! the default `auto` lanes and with `NOTEBRIDGE_BACKGROUND_SHARE=1` (the whole budget), one line
//! each, unless a share is set.
//! The import from files (issue 29): every readable sample in `fixtures/onenote-files/` migrated
//! with `migrate --from` (no account, no Graph request) into the Notion test server at
//! `NOTEBRIDGE_BENCH_FILES_RATE` (default 10/s, client and server alike). The figure is the Notion
//! requests' rate from the first to the last against that rate (target >= 0.9: Notion alone
//! binds), with the run's wall time and its Graph requests (target 0).
//! `NOTEBRIDGE_BENCH_ONLY=full|pipeline|files` runs one of the three; the share setting applies to
//! the first two.
//! `NOTEBRIDGE_BENCH_VERBOSE=1`: the pipelined run's OneNote requests per second on stderr.

mod common;

use std::fs::File;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{ideal_makespan_ms, is_onenote_request, wait_measuring};
use notebridge::settings::{parse_windows, GraphLimits};
use notebridge::store::Db;
use notebridge_testkit::generator::{generate, NotebookSpec};
use notebridge_testkit::lab::{Lab, LabConfig};
use notebridge_testkit::notion::{DumpNode, Endpoint};

/// The documented per-user counts (120/60s, 400/3600s) in windows short enough for a bench.
const USER_WINDOWS: &str = "120/600ms,400/6s";
/// The server's app-wide windows (the documented app-only figures, scaled alike); the client applies
/// none, as by default.
const APP_WINDOWS: &str = "240/600ms,800/6s";

/// The environment of a `notebridge` run with the client's default limits: the lab's URLs, token
/// and user windows, but not its app-wide limits.
fn client_env(lab: &Lab) -> Vec<(String, String)> {
    lab.env()
        .into_iter()
        .filter(|(k, _)| {
            k != "NOTEBRIDGE_GRAPH_APP_LIMITS" && k != "NOTEBRIDGE_GRAPH_APP_CONCURRENCY"
        })
        .collect()
}

/// Runs `notebridge scan` for alice; its wall time (process start to exit).
fn timed_scan(lab: &Lab, home: &std::path::Path, db: &std::path::Path) -> Duration {
    let started = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_notebridge"))
        .env_clear()
        .env("HOME", home)
        .envs(client_env(lab))
        .arg("--db")
        .arg(db)
        .args(["--no-progress", "--json", "scan", "--account", "alice"])
        .stdin(Stdio::null())
        .output()
        .expect("the notebridge binary starts");
    let wall = started.elapsed();
    assert!(
        out.status.success(),
        "scan failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    wall
}

fn main() {
    let only = std::env::var("NOTEBRIDGE_BENCH_ONLY").unwrap_or_default();
    if only.is_empty() || only == "full" {
        full();
    }
    if only.is_empty() || only == "files" {
        files();
    }
    if only.is_empty() || only == "pipeline" {
        match std::env::var("NOTEBRIDGE_BENCH_BACKGROUND_SHARE").ok() {
            Some(share) => pipeline(Some(share)),
            // Side by side: what the default lanes cost against the whole budget.
            None => {
                pipeline(None);
                pipeline(Some("1".into()));
            }
        }
    }
}

/// The pipelined run's user windows (issue 15 point 3).
const PIPELINE_WINDOWS: &str = "12/600ms,100/6s";

/// A 300-page migration in long sections: how close its Graph requests come to the windows' ideal,
/// with background `share` (`None`: the default, `auto`).
fn pipeline(share: Option<String>) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let lab = Lab::start(LabConfig {
            user_windows: PIPELINE_WINDOWS.into(),
            app_windows: "240/600ms,800/6s".into(),
            notion_per_second: 300,
            ..LabConfig::default()
        })
        .await;
        let spec = NotebookSpec {
            notebooks: 1,
            section_groups_depth: 2,
            section_groups_per_container: 1,
            sections_per_container: 2,
            pages_per_section: 0,
            total_pages: Some(300),
            subpage_ratio: 0.3,
            images_per_page: 1,
            attachments_per_page: 1,
            resource_bytes: 4096,
            seed: 1,
            ..NotebookSpec::default()
        };
        let user = lab.add_user("alice", generate(&spec));
        // Graph's answers take a WAN round trip (default 100 ms; the scan bench's stand-in), so a
        // page whose requests run one after another costs what a real one does.
        let latency_ms: u64 = std::env::var("NOTEBRIDGE_BENCH_LATENCY_MS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(100);
        if latency_ms > 0 {
            lab.graph
                .faults()
                .delay_next(u32::MAX, Duration::from_millis(latency_ms));
        }
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("state.db");
        lab.sign_in(&Db::open(&db).unwrap(), "alice", &user);
        let started = Instant::now();
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_notebridge"));
        cmd.env_clear()
            .env("HOME", dir.path())
            .envs(client_env(&lab));
        if let Some(s) = &share {
            cmd.env("NOTEBRIDGE_BACKGROUND_SHARE", s);
        }
        let out = cmd
            .arg("--db")
            .arg(&db)
            .args(["--no-progress", "--json", "migrate", "--account", "alice", "--to"])
            .arg(&lab.target_page)
            .stdin(Stdio::null())
            .output()
            .expect("the notebridge binary starts");
        let wall = started.elapsed();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "migrate failed: {stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let summary: serde_json::Value = serde_json::from_str(stdout.trim()).expect("JSON summary");
        let log = lab.graph.log();
        let onenote: Vec<_> = log
            .iter()
            .filter(|e| is_onenote_request(e))
            .collect();
        let first = onenote.iter().map(|e| e.at).min().unwrap();
        let last = onenote.iter().map(|e| e.at).max().unwrap();
        let span = last.duration_since(first).as_secs_f64();
        if std::env::var("NOTEBRIDGE_BENCH_VERBOSE").is_ok() {
            let mut per_s = vec![0u32; span as usize + 1];
            for e in &onenote {
                per_s[e.at.duration_since(first).as_secs() as usize] += 1;
            }
            eprintln!("pipeline OneNote requests per second from the first: {per_s:?}");
        }
        let limits = GraphLimits {
            user_windows: parse_windows(PIPELINE_WINDOWS).unwrap(),
            ..GraphLimits::default()
        };
        let ideal = ideal_makespan_ms(&limits, &[onenote.len()]) as f64 / 1000.0;
        println!(
            "migrate pipeline: background share {}, Graph latency {latency_ms} ms; {}/{} pages ({} files) in {:.1} s wall; {} OneNote requests (the migration's scan included), first to last {span:.1} s; ideal for that many at user {PIPELINE_WINDOWS} {ideal:.1} s; span / ideal = {:.3}x (target <= 1.1x); most pages ahead of their turn at once {} ({} workers), {:.1} MB of files fetched ahead; 429s from the server: {}",
            share.as_deref().unwrap_or("auto (default)"),
            summary["pages_done"],
            summary["pages_total"],
            summary["this_run"]["files"],
            wall.as_secs_f64(),
            onenote.len(),
            span / ideal,
            summary["this_run"]["most_pages_ahead"],
            summary["this_run"]["workers"],
            summary["this_run"]["prefetched_bytes"].as_f64().unwrap_or(0.0) / 1e6,
            lab.graph.counters().throttled,
        );
    });
}

/// The 1,300-page migration with a scan during it.
fn full() {
    let pages: usize = std::env::var("NOTEBRIDGE_BENCH_PAGES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1300);
    let notion_rate: u32 = std::env::var("NOTEBRIDGE_BENCH_NOTION_RATE")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(300);
    let share = std::env::var("NOTEBRIDGE_BENCH_BACKGROUND_SHARE").ok();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let lab = Arc::new(
            Lab::start(LabConfig {
                user_windows: USER_WINDOWS.into(),
                app_windows: APP_WINDOWS.into(),
                notion_per_second: notion_rate,
                ..LabConfig::default()
            })
            .await,
        );
        let spec = NotebookSpec {
            total_pages: Some(pages),
            ..NotebookSpec::incident(1)
        };
        let user = lab.add_user("alice", generate(&spec));
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("state.db");
        lab.sign_in(&Db::open(&db).unwrap(), "alice", &user);
        let out_path = dir.path().join("stdout.json");
        let err_path = dir.path().join("stderr.log");
        let long = parse_windows(USER_WINDOWS)
            .unwrap()
            .iter()
            .map(|w| w.length)
            .max()
            .unwrap();

        // The scan alone (it also records the scan's cost: the foreground reserve), then a quiet
        // long window so the migration starts with the whole budget.
        let idle_scan = timed_scan(&lab, dir.path(), &db);
        let scan_requests = lab.graph.log().iter().filter(|e| e.user.is_some()).count();
        tokio::time::sleep(long + Duration::from_millis(200)).await;
        let log_from = lab.graph.log().len();

        let mut cmd = Command::new(env!("CARGO_BIN_EXE_notebridge"));
        cmd.env_clear()
            .env("HOME", dir.path())
            .envs(client_env(&lab));
        if let Some(s) = &share {
            cmd.env("NOTEBRIDGE_BACKGROUND_SHARE", s);
        }
        cmd.arg("--db")
            .arg(&db)
            .arg("--no-progress")
            .args(["--json", "migrate", "--account", "alice", "--to"])
            .arg(&lab.target_page)
            .stdin(Stdio::null())
            .stdout(File::create(&out_path).unwrap())
            .stderr(File::create(&err_path).unwrap());
        let started = Instant::now();
        // Reaped by `wait4` in `wait_measuring`, which also reads its rusage; `Child::wait` cannot.
        #[allow(clippy::zombie_processes)]
        let child = cmd.spawn().expect("the notebridge binary starts");
        let pid = child.id();
        let waiter = tokio::task::spawn_blocking(move || wait_measuring(pid));
        // A scan while the migration saturates the budget: once it is into its second long window.
        let busy_scan = {
            let (lab, home, db) = (lab.clone(), dir.path().to_owned(), db.clone());
            tokio::task::spawn_blocking(move || {
                let deadline = Instant::now() + Duration::from_secs(600);
                while lab.graph.log().len() < log_from + 2 * scan_requests + 500
                    && Instant::now() < deadline
                {
                    std::thread::sleep(Duration::from_millis(50));
                }
                timed_scan(&lab, &home, &db)
            })
        };
        let (code, hwm_kb, maxrss_kb) = waiter.await.unwrap();
        let wall = started.elapsed();
        let busy_scan = busy_scan.await.unwrap();
        let out = std::fs::read_to_string(&out_path).unwrap();
        if code != 0 {
            let err = std::fs::read_to_string(&err_path).unwrap();
            panic!("notebridge exited {code}\nstdout: {out}\nstderr: {err}");
        }
        let summary: serde_json::Value = serde_json::from_str(out.trim()).expect("JSON summary");

        // OneNote requests as the Graph server counted them from the migration's start (the scan
        // during it included: it spends the same budget): inner batch requests count, the envelopes
        // and `/me` (directory service) do not.
        let log = lab.graph.log();
        let onenote: Vec<_> = log[log_from..]
            .iter()
            .filter(|e| is_onenote_request(e))
            .collect();
        let first = onenote.iter().map(|e| e.at).min().unwrap();
        let last = onenote.iter().map(|e| e.at).max().unwrap();
        let span = last.duration_since(first);
        // The full per-user budget, no lane and no app-wide window: what one account may send.
        let limits = GraphLimits {
            user_windows: parse_windows(USER_WINDOWS).unwrap(),
            ..GraphLimits::default()
        };
        let ideal_ms = ideal_makespan_ms(&limits, &[onenote.len()]);
        let throttled = lab.graph.counters().throttled;
        let n = lab.notion.counters();
        let notion_total: u64 = n.per_endpoint.values().sum();
        let pages_done = summary["pages_done"].as_u64().unwrap_or(0);
        let plan = &summary["plan"];

        println!(
            "migrate: {pages_done}/{} pages ({} files, outcome {}) in {:.1} s wall (process start to exit); Graph windows user {USER_WINDOWS} (server app {APP_WINDOWS}, client none); background share {}",
            summary["pages_total"],
            summary["this_run"]["files"],
            summary["outcome"],
            wall.as_secs_f64(),
            share.as_deref().unwrap_or("auto (default)"),
        );
        println!(
            "migrate graph: {} OneNote requests ({:.2} per page), first to last {:.1} s; ideal for that many at the full per-user budget {:.1} s; efficiency ideal / Graph span = {:.3} (target >= 0.9), ideal / wall = {:.3}; 429s from the server: {throttled} (target 0), client counted {} requests, {} throttled, {} retries",
            onenote.len(),
            onenote.len() as f64 / pages_done.max(1) as f64,
            span.as_secs_f64(),
            ideal_ms as f64 / 1000.0,
            ideal_ms as f64 / 1000.0 / span.as_secs_f64(),
            ideal_ms as f64 / 1000.0 / wall.as_secs_f64(),
            summary["graph"]["requests"],
            summary["graph"]["throttled"],
            summary["graph"]["retries"],
        );
        println!(
            "migrate plan: predicted {} s for {} Graph requests ({} files at {:.2} per page, {}), took {:.1} s",
            plan["seconds"],
            plan["accounts"][0]["graph_requests"],
            plan["accounts"][0]["files"],
            plan["files_per_page"].as_f64().unwrap_or(0.0),
            if plan["files_per_page_measured"].as_bool() == Some(true) { "measured" } else { "assumed" },
            wall.as_secs_f64(),
        );
        println!(
            "migrate scan: a scan during the migration took {:.3} s vs {:.3} s idle = {:.2}x (target <= 1.25x; {scan_requests} Graph requests in the idle scan, /me and $batch envelopes included; process start to exit)",
            busy_scan.as_secs_f64(),
            idle_scan.as_secs_f64(),
            busy_scan.as_secs_f64() / idle_scan.as_secs_f64(),
        );
        println!(
            "migrate memory: peak RSS of the binary {:.1} MB by VmHWM (polled every 20 ms), {:.1} MB by wait4 ru_maxrss (target <= 100 MB)",
            hwm_kb as f64 / 1024.0,
            maxrss_kb as f64 / 1024.0
        );
        println!(
            "migrate notion: {notion_total} requests ({:.2} per page; {}), 429s from the server: {}; Notion rate {notion_rate}/s client and server, so Graph is the bottleneck",
            notion_total as f64 / pages_done.max(1) as f64,
            n.per_endpoint
                .iter()
                .map(|(k, v)| format!("{k:?} {v}"))
                .collect::<Vec<_>>()
                .join(", "),
            n.rate_limited
        );
        let dump = lab.notion.dump(&lab.target_page).expect("the target page");
        let bound = LowerBound::of(&dump);
        let kind = |e: &[Endpoint]| -> u64 { e.iter().map(|e| n.per_endpoint.get(e).copied().unwrap_or(0)).sum() };
        let (creates, appends) = (kind(&[Endpoint::CreatePage]), kind(&[Endpoint::AppendChildren]));
        let (up_create, up_send, up_complete) = (
            kind(&[Endpoint::CreateUpload]),
            kind(&[Endpoint::SendUpload]),
            kind(&[Endpoint::CompleteUpload]),
        );
        let links = kind(&[Endpoint::UpdateBlock]);
        let looks = kind(&[Endpoint::GetPage, Endpoint::GetBlock, Endpoint::ListChildren, Endpoint::GetUpload]);
        let writes = creates + appends + up_create + up_send + up_complete;
        let per = |x: u64| x as f64 / bound.pages.max(1) as f64;
        println!(
            "migrate notion per page ({} Notion pages, notebook and sections included; {} files): create {:.2}, append {:.2}, upload create {:.2}, upload send {:.2}, upload complete {:.2}, link pass {:.2}, look-ups {:.2}, /users/me {}; lower bound {:.2} (create 1, append {:.2}, uploads {:.2}); the writes against it: {:.3}x",
            bound.pages,
            bound.files,
            per(creates),
            per(appends),
            per(up_create),
            per(up_send),
            per(up_complete),
            per(links),
            per(looks),
            kind(&[Endpoint::UsersMe]),
            per(bound.total()),
            per(bound.appends),
            per(2 * bound.files),
            writes as f64 / bound.total().max(1) as f64,
        );
    });
}

/// The samples the import-from-files run migrates: every one the reader reads whole (those in
/// `fixtures/onenote-files/`).
const FILE_SAMPLES: &[&str] = &[
    "onenote.rs/samples",
    "apache-tika/testOneNote.one",
    "apache-tika/testOneNote1.one",
    "apache-tika/testOneNote2.one",
    "apache-tika/testOneNote4.one",
    "apache-tika/testOneNote2016.one",
    "apache-tika/testOneNote2007OrEarlier.one",
    "apache-tika/testOneNoteEmbeddedWordDoc.one",
    "apache-tika/testOneNoteFromOffice365-2.one",
    "apache-tika/test-tika-3970-dupetext.one",
    "interop-testsuites/SUT/OneWithoutFileData.one",
    "interop-testsuites/SUT/FileSyncWOPI_OneNoteWithODB.one",
    "interop-testsuites/SUT/InvalidData.one",
    "interop-testsuites/MS-ONESTORE-Resources/AlternativePackaging.one",
];

/// `migrate --from` every sample: its Notion request rate against the configured one.
fn files() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let rate: u32 = std::env::var("NOTEBRIDGE_BENCH_FILES_RATE")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10);
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/onenote-files");
    rt.block_on(async {
        let lab = Lab::start(LabConfig {
            notion_per_second: rate,
            notion_burst: rate.max(5),
            ..LabConfig::default()
        })
        .await;
        let dir = tempfile::tempdir().expect("temp dir");
        let db = dir.path().join("state.db");
        let target = lab.notion.add_shared_page("Files");
        let mut args: Vec<String> = vec!["--no-progress".into(), "--json".into(), "migrate".into()];
        let mut imports = 0;
        for s in FILE_SAMPLES.iter().map(|s| root.join(s)).filter(|p| p.exists()) {
            args.push("--from".into());
            args.push(s.display().to_string());
            imports += 1;
        }
        args.extend(["--to".into(), target.clone(), "--db".into(), db.display().to_string()]);
        let notion_requests = |lab: &Lab| -> u64 {
            lab.notion.counters().per_endpoint.values().sum::<u64>()
        };
        let started = Instant::now();
        let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_notebridge"))
            .env_clear()
            .env("HOME", dir.path())
            .envs(lab.env())
            .args(&args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("the notebridge binary starts");
        // The Notion requests' first and last moments, polled every 2 ms.
        let (mut first, mut last, mut seen) = (None, None, 0u64);
        let status = loop {
            tokio::select! {
                s = child.wait() => break s.expect("the binary ran"),
                _ = tokio::time::sleep(Duration::from_millis(2)) => {
                    let n = notion_requests(&lab);
                    if n > seen {
                        let now = started.elapsed();
                        first.get_or_insert(now);
                        last = Some(now);
                        seen = n;
                    }
                }
            }
        };
        let wall = started.elapsed();
        let total = notion_requests(&lab);
        assert!(status.code().is_some_and(|c| c == 0), "migrate --from failed: {status}");
        let span = last.unwrap_or_default().saturating_sub(first.unwrap_or_default());
        // Requests after the first, over the time they took: the pace the run held.
        let achieved = seen.saturating_sub(1) as f64 / span.as_secs_f64().max(1e-9);
        let pages: usize = notebridge::store::Db::open(&db)
            .ok()
            .and_then(|d| d.file_imports().ok().map(|i| (d, i)))
            .map(|(d, i)| {
                i.iter()
                    .map(|x| d.job_counts(&x.key).map(|c| c.pages_done as usize).unwrap_or(0))
                    .sum()
            })
            .unwrap_or(0);
        println!(
            "migrate files: {} imports, {pages} pages in {:.1} s wall; {total} Notion requests, first to last {:.1} s = {achieved:.2}/s against NOTEBRIDGE_NOTION_RATE {rate}/1s: ratio {:.3} (target >= 0.9: Notion alone binds); Graph requests {} (target 0); 429s from the server {}",
            imports,
            wall.as_secs_f64(),
            span.as_secs_f64(),
            achieved / f64::from(rate),
            lab.graph.counters().total,
            lab.notion.counters().rate_limited,
        );
    });
}

/// The fewest write requests Notion's rules allow for what the server holds: one create per page
/// (its first 100 blocks ride along), one append per further 100 children of any parent, one per
/// top-level block with grandchildren (a request carries two levels: the third needs a request of
/// its own in that block's subtree), and two per file of 20 MB or less (create, send).
struct LowerBound {
    pages: u64,
    appends: u64,
    files: u64,
}

impl LowerBound {
    fn of(root: &DumpNode) -> LowerBound {
        let mut b = LowerBound {
            pages: 0,
            appends: 0,
            files: 0,
        };
        // (node, depth below its page: 0 for the page itself)
        let mut stack = vec![(root, 0usize)];
        while let Some((node, depth)) = stack.pop() {
            let page = node.kind == "page";
            let depth = if page { 0 } else { depth };
            if page {
                b.pages += 1;
            }
            if node
                .file
                .as_deref()
                .is_some_and(|f| f.starts_with("file_upload:"))
            {
                b.files += 1;
            }
            let blocks: Vec<&DumpNode> =
                node.children.iter().filter(|c| c.kind != "page").collect();
            b.appends += (blocks.len().saturating_sub(100) as u64).div_ceil(100);
            if depth == 1
                && blocks
                    .iter()
                    .any(|c| c.children.iter().any(|g| g.kind != "page"))
            {
                b.appends += 1;
            }
            for c in &node.children {
                stack.push((c, depth + 1));
            }
        }
        b
    }

    fn total(&self) -> u64 {
        self.pages + self.appends + 2 * self.files
    }
}
