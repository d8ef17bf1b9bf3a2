//! Many accounts, one process (issue 15 point 5). Three parts:
//!
//! - `ledger`: the limiter alone (its SQLite ledger on a temporary database, no network) granting
//!   requests for 50 accounts, 8 workers each, as fast as it can, with each account's ledger as full
//!   as a saturated hour window keeps it (400 rows); grants per second against the rate 50 accounts'
//!   documented budgets allow (400/h each, and the minute window's 120/min burst).
//! - `migrate`: the real `notebridge` binary (release build) runs `migrate --all-accounts` for 50
//!   accounts against the lab's test servers with short per-user windows in the documented
//!   proportion (`6/600ms,20/6s`, concurrency 5 each, no app-wide limit on either side) and Notion
//!   fast enough not to bind: Graph requests per second against the sum of the accounts' budgets
//!   (over the run and while every account has work), the ideal time those windows allow for the
//!   requests made (and the ideal the lanes allow, each window less its foreground reserve), where
//!   each account's span goes, 429s, and the binary's peak RSS (VmHWM polled from /proc and
//!   ru_maxrss from wait4; target <= 150 MB).
//! - `claim`: the run's job graph alone, one account with 50,000 pages in one section
//!   (`NOTEBRIDGE_BENCH_CLAIM_PAGES`) drained five at a time: jobs per second.
//!
//! `NOTEBRIDGE_BENCH_ACCOUNTS` (default 50), `NOTEBRIDGE_BENCH_PAGES` (pages per account, default
//! 24), `NOTEBRIDGE_BENCH_GRANTS` (ledger part, default 20000), `NOTEBRIDGE_BENCH_ONLY=ledger|claim|migrate`,
//! `NOTEBRIDGE_BENCH_NOTION_RATE` (server, default 3000/s), `NOTEBRIDGE_BENCH_NOTION_BURST` (server,
//! default a tenth of its rate), `NOTEBRIDGE_BENCH_NOTION_CLIENT_RATE` (default half the server's),
//! `NOTEBRIDGE_BENCH_BACKGROUND_SHARE` (the binary's `NOTEBRIDGE_BACKGROUND_SHARE`),
//! `NOTEBRIDGE_BENCH_VERBOSE=1` (Graph and Notion requests per second on stderr),
//! `NOTEBRIDGE_BENCH_LOG` (the binary's `NOTEBRIDGE_LOG` filter: `notebridge=debug` logs each job's
//! start and end and each limiter wait) with `NOTEBRIDGE_BENCH_STDERR` (where its stderr is kept).

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
use notebridge::queue::graph::JobGraph;
use notebridge::settings::{parse_windows, GraphLimits};
use notebridge::store::jobs::{Job, JobKind, JobState, StoredJob};
use notebridge::store::Db;
use notebridge_testkit::generator::{generate, NotebookSpec};
use notebridge_testkit::graph::stats::LogEntry;
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

/// The run's job graph alone: one account with `pages` pages in one section (the claim's and the
/// sequencer's worst case), drained five at a time as its workers do: each page claimed, its turn
/// asked, created, finished, and the pending work counted.
fn claim(pages: usize) {
    let job = |id: i64, kind: JobKind, parent: Option<i64>| StoredJob {
        job: Job {
            id,
            plan_id: 1,
            account: "alice".into(),
            kind,
            item_id: format!("i{id}"),
            parent_job: parent,
            seq: id,
            attempts: 0,
        },
        state: JobState::Queued,
        not_before: 0,
        created: false,
    };
    let pages = pages as i64;
    let mut jobs = vec![
        job(1, JobKind::Notebook, None),
        job(2, JobKind::Section, Some(1)),
    ];
    jobs.extend((3..pages + 3).map(|id| job(id, JobKind::Page, Some(2))));
    jobs.push(job(pages + 3, JobKind::Links, None));
    let accounts = ["alice".to_string()];
    let started = Instant::now();
    let mut g = JobGraph::new(jobs);
    let loaded = started.elapsed();
    let mut in_flight = std::collections::VecDeque::new();
    let mut claims = 0usize;
    loop {
        while in_flight.len() < 5 {
            let Some(j) = g.claim(&accounts, 0, 3) else {
                break;
            };
            claims += 1;
            in_flight.push_back(j.id);
        }
        let Some(id) = in_flight.pop_front() else {
            break;
        };
        assert_eq!(g.earlier_siblings(id).running, 0);
        g.created(id);
        g.finish(id, JobState::Done, 0, true);
        g.pending(&accounts, 0);
    }
    assert_eq!(claims as i64, pages + 3);
    let secs = started.elapsed().as_secs_f64();
    println!(
        "claim: {claims} jobs of one account, {pages} pages in one section, drained 5 at a time (claim, turn, created, finished, pending each) in {secs:.3} s = {:.0} jobs/s, the graph built in {:.1} ms",
        claims as f64 / secs,
        loaded.as_secs_f64() * 1000.0,
    );
}

/// `migrate --all-accounts` of `accounts` accounts with `pages` pages each, the real binary, the
/// Notion server at `notion_rate`/s and the client paced at `client_rate`/s.
async fn migrate(
    accounts: usize,
    pages: usize,
    notion_rate: u32,
    notion_burst: u32,
    client_rate: u32,
) {
    let lab = Lab::start(LabConfig {
        user_windows: USER_WINDOWS.into(),
        // The server's app-wide limits out of reach: Microsoft documents none for delegated calls.
        app_windows: "1000000/600ms,1000000/6s".into(),
        app_concurrency: 100_000,
        notion_per_second: notion_rate,
        notion_burst,
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
        // The client paces Notion below the server's rate; the server's burst absorbs the
        // pacing's millisecond jitter.
        .env("NOTEBRIDGE_NOTION_RATE", format!("{client_rate}/1s"))
        .envs(std::env::var("NOTEBRIDGE_BENCH_LOG").map(|f| ("NOTEBRIDGE_LOG", f)))
        .envs(
            std::env::var("NOTEBRIDGE_BENCH_BACKGROUND_SHARE")
                .map(|f| ("NOTEBRIDGE_BACKGROUND_SHARE", f)),
        )
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
    if let Ok(keep) = std::env::var("NOTEBRIDGE_BENCH_STDERR") {
        std::fs::copy(&err_path, keep).unwrap();
    }
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
    where_the_span_goes(&onenote, first, &limits);
    let summary: serde_json::Value = serde_json::from_str(out.trim()).expect("JSON summary");
    println!(
        "migrate --all-accounts: {accounts} accounts, {} of {} pages (outcome {}) in {:.1} s wall (process start to exit); Graph windows user {USER_WINDOWS} each, no app-wide limit; Notion {notion_rate}/s server (burst {notion_burst}), {client_rate}/s client",
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

/// Where the run's span goes, from the Graph server's log alone: when each account sent its first
/// and last request (the start's spread, the tail's), each account's own span against the ideal for
/// its own requests, the scan (listings, which come before any page) and the requests sent again
/// (the link pass reads pages a second time), and the rate while every account still had work.
fn where_the_span_goes(onenote: &[&LogEntry], first: tokio::time::Instant, limits: &GraphLimits) {
    struct Acc {
        first: f64,
        last: f64,
        scan_last: f64,
        repeats_from: Option<f64>,
        count: usize,
        scans: usize,
        repeats: usize,
        /// When the first long window's count was used (its n-th request).
        window_used: Option<f64>,
    }
    // The log is in arrival order.
    let long_count = limits
        .user_windows
        .iter()
        .max_by_key(|w| w.length)
        .map_or(0, |w| w.count as usize);
    let mut accs: HashMap<&str, Acc> = HashMap::new();
    let mut seen: std::collections::HashSet<(&str, &str)> = std::collections::HashSet::new();
    for e in onenote {
        let t = e.at.duration_since(first).as_secs_f64();
        let user = e.user.as_deref().unwrap();
        let a = accs.entry(user).or_insert(Acc {
            first: t,
            last: t,
            scan_last: 0.0,
            repeats_from: None,
            count: 0,
            scans: 0,
            repeats: 0,
            window_used: None,
        });
        a.first = a.first.min(t);
        a.last = a.last.max(t);
        a.count += 1;
        if a.count == long_count {
            a.window_used = Some(t);
        }
        let path = e.path.split('?').next().unwrap_or_default();
        if !path.contains("/pages/") && !path.contains("/resources/") {
            a.scan_last = a.scan_last.max(t);
            a.scans += 1;
        }
        if !seen.insert((user, path)) {
            a.repeats += 1;
            a.repeats_from.get_or_insert(t);
        }
    }
    let accs: Vec<Acc> = accs.into_values().collect();
    let stats = |f: &dyn Fn(&Acc) -> f64| {
        let mut v: Vec<f64> = accs.iter().map(f).collect();
        v.sort_by(f64::total_cmp);
        let q = |p: f64| v[((v.len() - 1) as f64 * p).round() as usize];
        format!("{:.1}/{:.1}/{:.1}", q(0.0), q(0.5), q(1.0))
    };
    let own_ideal = |a: &Acc| ideal_makespan_ms(limits, &[a.count]) as f64 / 1000.0;
    let lanes_ideal = |a: &Acc| lanes_ideal_ms(limits, a.count, a.scans) as f64 / 1000.0;
    let all_busy_from = accs.iter().map(|a| a.first).fold(0.0, f64::max);
    let all_busy_to = accs.iter().map(|a| a.last).fold(f64::INFINITY, f64::min);
    let in_busy = onenote
        .iter()
        .filter(|e| {
            let t = e.at.duration_since(first).as_secs_f64();
            t >= all_busy_from && t <= all_busy_to
        })
        .count();
    let per_account: f64 = limits
        .user_windows
        .iter()
        .map(|w| w.count as f64 / w.length.as_secs_f64())
        .fold(f64::INFINITY, f64::min);
    let busy = all_busy_to - all_busy_from;
    println!(
        "migrate --all-accounts per account (min/median/max, s from the first OneNote request): first request {}, scan done {}, long window's {long_count} used {} (ideal {:.1}), last request {}; own span {}, own ideal {}, own span / own ideal {}; the ideal the lanes allow (the scan's requests at the start in the foreground, the rest in the background, each window less its reserve) {}, own span / that {}; requests {}, sent again (link pass) {} from {}; while every account had work ({all_busy_from:.1} to {all_busy_to:.1} s) {:.1} requests/s = {:.3} of the sum of budgets",
        stats(&|a| a.first),
        stats(&|a| a.scan_last),
        stats(&|a| a.window_used.unwrap_or(a.last)),
        ideal_makespan_ms(limits, &[long_count]) as f64 / 1000.0,
        stats(&|a| a.last),
        stats(&|a| a.last - a.first),
        stats(&own_ideal),
        stats(&|a| (a.last - a.first) / own_ideal(a)),
        stats(&lanes_ideal),
        stats(&|a| (a.last - a.first) / lanes_ideal(a)),
        stats(&|a| a.count as f64),
        stats(&|a| a.repeats as f64),
        stats(&|a| a.repeats_from.unwrap_or(a.last)),
        in_busy as f64 / busy,
        in_busy as f64 / busy / (per_account * accs.len() as f64),
    );
}

/// The earliest time one account's `count` requests can end (ms after the first) under `auto`
/// lanes with answers taking no time: its `scan` requests at the start in the foreground, then the
/// background within each window's count less its reserve (sized from that scan, as
/// `limiter::budget::reserves` sizes it).
fn lanes_ideal_ms(limits: &GraphLimits, count: usize, scan: usize) -> i64 {
    let windows = &limits.user_windows;
    let reserves = notebridge::limiter::budget::reserves(windows, Some(scan as u32), 0);
    let mut sent: Vec<i64> = vec![0; scan.min(count)];
    let mut t = 0i64;
    while sent.len() < count {
        let room = windows.iter().zip(&reserves).all(|(w, r)| {
            let len = w.length.as_millis() as i64;
            let held = sent.iter().filter(|&&x| x > t - len).count();
            held + (*r as usize) < w.count as usize
        });
        if room {
            sent.push(t);
        } else {
            t += 1;
        }
    }
    sent.last().copied().unwrap_or(0)
}

fn main() {
    let accounts: usize = env_num("NOTEBRIDGE_BENCH_ACCOUNTS", 50);
    let pages: usize = env_num("NOTEBRIDGE_BENCH_PAGES", 24);
    let grants: usize = env_num("NOTEBRIDGE_BENCH_GRANTS", 20_000);
    // Notion must not bind: 50 accounts' 24 pages take about 5,240 Notion requests, 397/s over the
    // 13.2 s the Graph windows allow, so the client goes at 1500/s. The server's burst is scaled
    // with its rate (a tenth of a second's worth, as Notion's 5 at 3/s are more than a second's):
    // with a burst of 5 at 1500/s, requests bunched by a few milliseconds drew 429s, and each
    // paused every Notion request for a whole second (Retry-After has no finer unit).
    let notion_rate: u32 = env_num("NOTEBRIDGE_BENCH_NOTION_RATE", 3000);
    let notion_burst: u32 = env_num("NOTEBRIDGE_BENCH_NOTION_BURST", notion_rate / 10);
    let client_rate: u32 = env_num("NOTEBRIDGE_BENCH_NOTION_CLIENT_RATE", notion_rate / 2);
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
        if only.is_empty() || only == "claim" {
            claim(env_num("NOTEBRIDGE_BENCH_CLAIM_PAGES", 50_000));
        }
        if only.is_empty() || only == "migrate" {
            migrate(accounts, pages, notion_rate, notion_burst, client_rate).await;
        }
    });
}
