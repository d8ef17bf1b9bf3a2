//! Many accounts, one process (issue 15 point 5). Two parts, one line each:
//!
//! - `ledger`: the limiter alone (its SQLite ledger on a temporary database, no network) granting
//!   requests for 50 accounts, 8 workers each, as fast as it can, with each account's ledger as full
//!   as a saturated hour window keeps it (400 rows); grants per second against the rate 50 accounts'
//!   documented budgets allow (400/h each, and the minute window's 120/min burst).
//! - `migrate`: the real `notebridge` binary (release build) runs `migrate --all-accounts` for 50
//!   accounts against the lab's test servers with short per-user windows in the documented
//!   proportion (`6/600ms,20/6s`, concurrency 5 each, no app-wide limit on either side) and Notion
//!   fast enough not to bind (`NOTEBRIDGE_BENCH_NOTION_RATE`, default 1500/s on the server, a quarter
//!   that in the client, so that no Notion 429 pauses the run): Graph requests per
//!   second against the sum of the accounts' budgets, the ideal time those windows allow for the
//!   requests made over their span, 429s, and the binary's peak RSS (VmHWM polled from /proc and
//!   ru_maxrss from wait4; target <= 150 MB).
//!
//! `NOTEBRIDGE_BENCH_ACCOUNTS` (default 50), `NOTEBRIDGE_BENCH_PAGES` (pages per account, default
//! 24), `NOTEBRIDGE_BENCH_GRANTS` (ledger part, default 20000), `NOTEBRIDGE_BENCH_ONLY=ledger|migrate`,
//! `NOTEBRIDGE_BENCH_NOTION_CLIENT_RATE` (default a quarter of the server's),
//! `NOTEBRIDGE_BENCH_VERBOSE=1` (Graph and Notion requests per second on stderr).

mod common;

use std::collections::HashMap;
use std::fs::File;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{cpu_seconds, env_num, ideal_makespan_ms, is_onenote_request, wait_measuring_usage};
use notebridge::clock::{Clock, Jitter};
use notebridge::limiter::{Lane, Limiter};
use notebridge::settings::{parse_windows, GraphLimits};
use notebridge::store::Db;
use notebridge_testkit::generator::{generate, NotebookSpec};
use notebridge_testkit::lab::{Lab, LabConfig};

/// The documented per-user counts' proportion (120/60s, 400/3600s) in windows short enough for a
/// bench: 50 accounts send at most 167 requests/s together.
const USER_WINDOWS: &str = "6/600ms,20/6s";

/// The limiter alone: `accounts` accounts, 8 workers each, granting `grants` requests in all.
async fn ledger(accounts: usize, grants: usize) {
    let dir = tempfile::tempdir().unwrap();
    let db = Arc::new(Db::open(&dir.path().join("ledger.db")).unwrap());
    // Windows that never bind, so the ledger itself is what is measured; every account ends with
    // grants / accounts rows in them (400 by default: a saturated hour window's worth).
    let limits = GraphLimits {
        user_windows: parse_windows("1000000/60s,1000000/1h").unwrap(),
        ..GraphLimits::default()
    };
    // As the Graph client opens it: the margins spawn a delayed release per request.
    let l = Limiter::open(db, limits, Clock::system(), Jitter::from_entropy())
        .unwrap()
        .with_release_margin(Duration::from_millis(10))
        .with_window_slack(Duration::from_millis(5));
    let left = Arc::new(AtomicUsize::new(grants));
    let started = Instant::now();
    let mut tasks = Vec::new();
    for a in 0..accounts {
        for _ in 0..8 {
            let (l, left) = (l.clone(), left.clone());
            let user = format!("user-{a:02}");
            tasks.push(tokio::spawn(async move {
                while left
                    .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
                    .is_ok()
                {
                    l.acquire(&user, Lane::Background)
                        .await
                        .unwrap()
                        .succeeded(None);
                }
            }));
        }
    }
    for t in tasks {
        t.await.unwrap();
    }
    let secs = started.elapsed().as_secs_f64();
    let rate = grants as f64 / secs;
    let hourly = accounts as f64 * 400.0 / 3600.0;
    let minute = accounts as f64 * 120.0 / 60.0;
    println!(
        "ledger: {grants} grants for {accounts} accounts (8 workers each, {} rows per account in the windows at the end) in {secs:.2} s = {rate:.0} grants/s; {accounts} accounts' documented budgets allow {hourly:.1}/s (400/h each): {:.0}x (target >= 10x); their minute windows' burst {minute:.0}/s (120/min each): {:.1}x",
        grants / accounts,
        rate / hourly,
        rate / minute,
    );
}

/// `migrate --all-accounts` of `accounts` accounts with `pages` pages each, the real binary, the
/// Notion server at `notion_rate`/s and the client paced at `client_rate`/s.
async fn migrate(accounts: usize, pages: usize, notion_rate: u32, client_rate: u32) {
    let lab = Lab::start(LabConfig {
        user_windows: USER_WINDOWS.into(),
        // The server's app-wide limits out of reach: Microsoft documents none for delegated calls.
        app_windows: "1000000/600ms,1000000/6s".into(),
        app_concurrency: 100_000,
        notion_per_second: notion_rate,
        ..LabConfig::default()
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let db_path = dir.path().join("state.db");
    {
        let db = Db::open(&db_path).unwrap();
        for a in 0..accounts {
            let spec = NotebookSpec {
                sections_per_container: 2,
                pages_per_section: 0,
                total_pages: Some(pages),
                subpage_ratio: 0.2,
                images_per_page: 1,
                resource_bytes: 1024,
                seed: a as u64 + 1,
                ..NotebookSpec::default()
            };
            let name = format!("user{a:02}");
            let user = lab.add_user(&name, generate(&spec));
            lab.sign_in(&db, &name, &user);
        }
    }
    let out_path = dir.path().join("stdout.json");
    let err_path = dir.path().join("stderr.log");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_notebridge"));
    cmd.env_clear()
        .env("HOME", dir.path())
        .envs(lab.env().into_iter().filter(|(k, _)| {
            k != "NOTEBRIDGE_GRAPH_APP_LIMITS" && k != "NOTEBRIDGE_GRAPH_APP_CONCURRENCY"
        }))
        .arg("--db")
        .arg(&db_path)
        .arg("--no-progress")
        // By default the client paces Notion at a quarter of the server's rate: nearer to it the
        // pacing's millisecond jitter draws 429s, and each pauses every Notion request for a
        // whole second.
        .env("NOTEBRIDGE_NOTION_RATE", format!("{client_rate}/1s"))
        .args(["--json", "migrate", "--all-accounts", "--to"])
        .arg(&lab.target_page)
        .stdin(Stdio::null())
        .stdout(File::create(&out_path).unwrap())
        .stderr(File::create(&err_path).unwrap());
    let started = Instant::now();
    // Reaped by `wait4` in `wait_measuring`, which also reads its rusage; `Child::wait` cannot.
    #[allow(clippy::zombie_processes)]
    let child = cmd.spawn().expect("the notebridge binary starts");
    let pid = child.id();
    let waiter = tokio::task::spawn_blocking(move || wait_measuring_usage(pid));
    // Notion's server keeps counters only: sample them to find its first-to-last span.
    let mut samples: Vec<(Instant, u64)> = Vec::new();
    while !waiter.is_finished() {
        let n: u64 = lab.notion.counters().per_endpoint.values().sum();
        samples.push((Instant::now(), n));
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let (code, hwm_kb, usage) = waiter.await.unwrap();
    let maxrss_kb = usage.ru_maxrss as u64;
    let wall = started.elapsed();
    let out = std::fs::read_to_string(&out_path).unwrap();
    if code != 0 {
        let err = std::fs::read_to_string(&err_path).unwrap();
        panic!("notebridge exited {code}\nstdout: {out}\nstderr: {err}");
    }
    // OneNote requests as the Graph server counted them: inner batch requests count, the envelopes
    // and `/me` (directory service) do not.
    let log = lab.graph.log();
    let onenote: Vec<_> = log.iter().filter(|e| is_onenote_request(e)).collect();
    let mut per_user: HashMap<&str, usize> = HashMap::new();
    for e in &onenote {
        *per_user.entry(e.user.as_deref().unwrap()).or_default() += 1;
    }
    let counts: Vec<usize> = per_user.values().copied().collect();
    let first = onenote.iter().map(|e| e.at).min().unwrap();
    let last = onenote.iter().map(|e| e.at).max().unwrap();
    let span = last.duration_since(first).as_secs_f64();
    let limits = GraphLimits {
        user_windows: parse_windows(USER_WINDOWS).unwrap(),
        ..GraphLimits::default()
    };
    let ideal = ideal_makespan_ms(&limits, &counts) as f64 / 1000.0;
    // The long-run rate of the sum of budgets: each account's binding window.
    let budget: f64 = limits
        .user_windows
        .iter()
        .map(|w| w.count as f64 / w.length.as_secs_f64())
        .fold(f64::INFINITY, f64::min)
        * accounts as f64;
    let n = lab.notion.counters();
    let notion_total: u64 = n.per_endpoint.values().sum();
    // From the last sample before Notion's first request to the first that saw its last.
    let notion_from = samples
        .iter()
        .rev()
        .find(|s| s.1 == 0)
        .map_or(started, |s| s.0);
    let notion_to = samples
        .iter()
        .find(|s| s.1 == notion_total)
        .map_or(Instant::now(), |s| s.0);
    let notion_span = notion_to.duration_since(notion_from).as_secs_f64();
    let notion_rate_seen = notion_total as f64 / notion_span;
    if std::env::var("NOTEBRIDGE_BENCH_VERBOSE").is_ok() {
        // Per second of the run: OneNote requests, Notion requests.
        let mut graph_per_s = vec![0u32; wall.as_secs() as usize + 1];
        for e in &onenote {
            let s = e.at.duration_since(first).as_secs() as usize;
            if let Some(c) = graph_per_s.get_mut(s) {
                *c += 1;
            }
        }
        eprintln!("graph per second from its first request: {graph_per_s:?}");
        let per_s: Vec<u64> = samples.windows(2).fold(Vec::new(), |mut out, w| {
            let s = w[1].0.duration_since(notion_from).as_secs_f64() as usize;
            if w[1].0 >= notion_from {
                out.resize(out.len().max(s + 1), 0);
                out[s] += w[1].1 - w[0].1;
            }
            out
        });
        eprintln!("notion per second from its first request: {per_s:?}");
    }
    let summary: serde_json::Value = serde_json::from_str(out.trim()).expect("JSON summary");
    println!(
        "migrate --all-accounts: {accounts} accounts, {} of {} pages (outcome {}) in {:.1} s wall (process start to exit); Graph windows user {USER_WINDOWS} each, no app-wide limit; Notion {notion_rate}/s server, {client_rate}/s client",
        summary["pages_done"],
        summary["pages_total"],
        summary["outcome"],
        wall.as_secs_f64(),
    );
    println!(
        "migrate --all-accounts graph: {} OneNote requests from {} accounts, first to last {span:.1} s = {:.1} requests/s against the sum of budgets {budget:.1}/s ({:.3}); ideal for that many per account {ideal:.1} s, ideal / span = {:.3}; 429s from the server: {}",
        onenote.len(),
        per_user.len(),
        onenote.len() as f64 / span,
        onenote.len() as f64 / span / budget,
        ideal / span,
        lab.graph.counters().throttled,
    );
    println!(
        "migrate --all-accounts notion: {notion_total} requests, first to last {notion_span:.1} s = {notion_rate_seen:.1} requests/s against the client's rate {client_rate}/s ({:.3}; server {notion_rate}/s), 429s {}",
        notion_rate_seen / client_rate as f64,
        n.rate_limited,
    );
    println!(
        "migrate --all-accounts memory: peak RSS of the binary {:.1} MB by VmHWM (polled every 20 ms), {:.1} MB by wait4 ru_maxrss (target <= 150 MB); its CPU time {:.1} s in {:.1} s wall ({:.2} cores)",
        hwm_kb as f64 / 1024.0,
        maxrss_kb as f64 / 1024.0,
        cpu_seconds(&usage),
        wall.as_secs_f64(),
        cpu_seconds(&usage) / wall.as_secs_f64(),
    );
}

fn main() {
    let accounts: usize = env_num("NOTEBRIDGE_BENCH_ACCOUNTS", 50);
    let pages: usize = env_num("NOTEBRIDGE_BENCH_PAGES", 24);
    let grants: usize = env_num("NOTEBRIDGE_BENCH_GRANTS", 20_000);
    let notion_rate: u32 = env_num("NOTEBRIDGE_BENCH_NOTION_RATE", 1500);
    let client_rate: u32 = env_num("NOTEBRIDGE_BENCH_NOTION_CLIENT_RATE", notion_rate / 4);
    let only = std::env::var("NOTEBRIDGE_BENCH_ONLY").unwrap_or_default();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        if only.is_empty() || only == "ledger" {
            ledger(accounts, grants).await;
        }
        if only.is_empty() || only == "migrate" {
            migrate(accounts, pages, notion_rate, client_rate).await;
        }
    });
}
