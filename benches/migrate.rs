//! Migration benchmark (issue 8): the real `notebridge` binary (release build) migrates a 1,300-page
//! notebook (the incident's shape: 40 sections, one image per page) from the Graph test server into
//! the Notion test server, over loopback, with short Graph windows. Notion's rate is set high
//! (`NOTEBRIDGE_BENCH_NOTION_RATE`, default 300/s, client and server alike) so that Graph is the
//! bottleneck. Figures: wall time vs the ideal time the Graph windows allow for the OneNote requests
//! the run made, 429s, peak RSS of the binary (VmHWM polled from /proc and ru_maxrss from wait4), and
//! Notion requests per page. One line each.

mod common;

use std::fs::File;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::ideal_makespan_ms;
use notebridge::settings::{parse_windows, GraphLimits, Window};
use notebridge::store::Db;
use notebridge_testkit::generator::{generate, NotebookSpec};
use notebridge_testkit::lab::{Lab, LabConfig};

const USER_WINDOWS: &str = "60/600ms,200/6s";
const APP_WINDOWS: &str = "120/600ms,400/6s";

/// VmHWM of `pid` in kB, if the process is still there.
fn vm_hwm_kb(pid: u32) -> Option<u64> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    s.lines()
        .find(|l| l.starts_with("VmHWM:"))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

/// Waits for `pid` while polling its VmHWM; returns (exit status, last VmHWM kB, ru_maxrss kB).
fn wait_measuring(pid: u32) -> (i32, u64, u64) {
    let mut hwm = 0;
    loop {
        if let Some(h) = vm_hwm_kb(pid) {
            hwm = hwm.max(h);
        }
        let mut status = 0;
        // SAFETY: plain wait4 on our own child with out-pointers to locals.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        let r = unsafe { libc::wait4(pid as i32, &mut status, libc::WNOHANG, &mut usage) };
        if r == pid as i32 {
            let code = if libc::WIFEXITED(status) {
                libc::WEXITSTATUS(status)
            } else {
                -1
            };
            return (code, hwm, usage.ru_maxrss as u64);
        }
        assert!(r == 0, "wait4 failed: {}", std::io::Error::last_os_error());
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn main() {
    let pages: usize = std::env::var("NOTEBRIDGE_BENCH_PAGES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1300);
    let notion_rate: u32 = std::env::var("NOTEBRIDGE_BENCH_NOTION_RATE")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(300);
    // The migration runs in the background lane, which may use this share of every window (the
    // binary's default is 0.5, keeping the rest for foreground work such as a scan).
    let share: f64 = std::env::var("NOTEBRIDGE_BENCH_BACKGROUND_SHARE")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(GraphLimits::default().background_share);
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

        let mut cmd = Command::new(env!("CARGO_BIN_EXE_notebridge"));
        cmd.env_clear()
            .env("HOME", dir.path())
            .envs(lab.env())
            .env("NOTEBRIDGE_BACKGROUND_SHARE", share.to_string())
            .arg("--db")
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
        let (code, hwm_kb, maxrss_kb) = tokio::task::spawn_blocking(move || wait_measuring(pid))
            .await
            .unwrap();
        let wall = started.elapsed();
        let out = std::fs::read_to_string(&out_path).unwrap();
        if code != 0 {
            let err = std::fs::read_to_string(&err_path).unwrap();
            panic!("notebridge exited {code}\nstdout: {out}\nstderr: {err}");
        }
        let summary: serde_json::Value = serde_json::from_str(out.trim()).expect("JSON summary");

        // OneNote requests as the Graph server counted them: inner batch requests count, the
        // envelopes and `/me` (directory service) do not.
        let log = lab.graph.log();
        let onenote: Vec<_> = log
            .iter()
            .filter(|e| e.user.is_some() && !e.path.ends_with("/$batch"))
            .filter(|e| {
                let p = e.path.split('?').next().unwrap_or_default();
                p != "/v1.0/me" && p != "/me"
            })
            .collect();
        let first = onenote.iter().map(|e| e.at).min().unwrap();
        let last = onenote.iter().map(|e| e.at).max().unwrap();
        let span = last.duration_since(first);
        let limits = GraphLimits {
            user_windows: parse_windows(USER_WINDOWS).unwrap(),
            app_windows: parse_windows(APP_WINDOWS).unwrap(),
            ..GraphLimits::default()
        };
        let ideal_ms = ideal_makespan_ms(&limits, &[onenote.len()]);
        // The same with the background lane's share of every window: floor(count * share), >= 1.
        let lane = |ws: &[Window]| -> Vec<Window> {
            ws.iter()
                .map(|w| Window {
                    count: ((w.count as f64 * share).floor() as u32).max(1),
                    length: w.length,
                })
                .collect()
        };
        let lane_limits = GraphLimits {
            user_windows: lane(&limits.user_windows),
            app_windows: lane(&limits.app_windows),
            ..limits.clone()
        };
        let lane_ideal_ms = ideal_makespan_ms(&lane_limits, &[onenote.len()]);
        let throttled = lab.graph.counters().throttled;
        let n = lab.notion.counters();
        let notion_total: u64 = n.per_endpoint.values().sum();
        let pages_done = summary["pages_done"].as_u64().unwrap_or(0);

        println!(
            "migrate: {pages_done}/{} pages ({} files, outcome {}) in {:.1} s wall (process start to exit); Graph windows user {USER_WINDOWS} app {APP_WINDOWS}",
            summary["pages_total"],
            summary["this_run"]["files"],
            summary["outcome"],
            wall.as_secs_f64()
        );
        println!(
            "migrate graph: {} OneNote requests ({:.2} per page), first to last {:.1} s; ideal for that many {:.1} s; ideal / wall = {:.3}, ideal / Graph span = {:.3} (target >= 0.9); with the background lane's share {share} of every window the ideal is {:.1} s, ratio to wall {:.3}; 429s from the server: {throttled} (target 0), client counted {} requests, {} throttled, {} retries",
            onenote.len(),
            onenote.len() as f64 / pages_done.max(1) as f64,
            span.as_secs_f64(),
            ideal_ms as f64 / 1000.0,
            ideal_ms as f64 / 1000.0 / wall.as_secs_f64(),
            ideal_ms as f64 / 1000.0 / span.as_secs_f64(),
            lane_ideal_ms as f64 / 1000.0,
            lane_ideal_ms as f64 / 1000.0 / wall.as_secs_f64(),
            summary["graph"]["requests"],
            summary["graph"]["throttled"],
            summary["graph"]["retries"],
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
    });
}
