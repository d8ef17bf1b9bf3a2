//! Notion pace benchmark (issues 31 and 39): runs of 600 to 1,600 Notion requests paced `auto`
//! against the Notion test server's per-connection budget per window (its own rate model, the code
//! its HTTP server answers with, in process), on tokio's paused clock, so Notion's 60-second window
//! costs no more than a short one. 8 callers send as fast as the pace lets them, each request
//! taking 3 ms each way; a refused request is sent again, as the client does.
//!
//! Figures per run: the span from the first request to the last answered one, against
//! - the issue's *ideal*: the first window's budget at once, then the budget per window
//!   (`(requests - budget) / (budget / window)`), which assumes the run starts where the
//!   service's window starts fresh and flows evenly afterwards;
//! - the *best* any client can do against fixed windows: the first window's budget at once, then
//!   each window's at its reset (`(ceil(requests / budget) - 1) x window - offset`, where
//!   `offset` is how far into the service's window the run starts);
//!
//! and the 429s, in all and in the window that had most. Each case runs at four offsets into the
//! service's window (0, 1/4, 1/2, 3/4 of it). Then a budget that falls mid-run (the workspace's plan
//! changed), and a second run on the same database (the budget the first one learned is used from
//! its first request). `NOTEBRIDGE_BENCH_PACE_WINDOW` (seconds, default 60) sets the window,
//! `NOTEBRIDGE_BENCH_PACE_SHORT` (default 6) the short one also measured; `NOTEBRIDGE_BENCH_VERBOSE`
//! prints the requests answered per window.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use notebridge::clock::Clock;
use notebridge::notion::pace::{Limit, Mode, Throttle, DOCUMENTED_PER_SECOND};
use notebridge::notion::rate::NotionRate;
use notebridge::store::Db;
use notebridge_testkit::notion::rate::{RateConfig, RateLimiter};
use notebridge_testkit::notion::WindowBudget;
use tokio::time::Instant;

const T0: i64 = 1_700_000_000_000;
const TOKEN: &str = "secret_bench";
const WORKERS: usize = 8;
const ONE_WAY: Duration = Duration::from_millis(3);

fn env_num(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// What the service saw, in seconds since it started.
#[derive(Default)]
struct Seen {
    first_sent: Option<f64>,
    answered: Vec<f64>,
    refused: Vec<f64>,
}

/// One run: `requests` answered requests by `WORKERS` callers, starting `offset` after the
/// service started its windows; `change` = (after, new budget) sets the budget again mid-run.
async fn run(
    db: Arc<Db>,
    server: Arc<Mutex<RateLimiter>>,
    epoch: Instant,
    window: Duration,
    requests: usize,
    change: Option<(Duration, WindowBudget)>,
) -> (Seen, Option<u32>) {
    let clock = Clock::anchored_at(T0 + epoch.elapsed().as_millis() as i64);
    let rate = Arc::new(NotionRate::with_mode(
        db,
        TOKEN,
        Mode::Auto { window },
        clock,
    ));
    let seen = Arc::new(Mutex::new(Seen::default()));
    let left = Arc::new(Mutex::new(requests));
    if let Some((after, budget)) = change {
        let server = server.clone();
        tokio::spawn(async move {
            tokio::time::sleep(after).await;
            server.lock().unwrap().set_window_budget(Some(budget));
        });
    }
    let mut tasks = Vec::new();
    for _ in 0..WORKERS {
        let (rate, server, seen, left) = (rate.clone(), server.clone(), seen.clone(), left.clone());
        tasks.push(tokio::spawn(async move {
            loop {
                {
                    let mut l = left.lock().unwrap();
                    if *l == 0 {
                        return;
                    }
                    *l -= 1;
                }
                // One request, sent again until Notion takes it.
                loop {
                    let g = rate.acquire().await.unwrap();
                    seen.lock()
                        .unwrap()
                        .first_sent
                        .get_or_insert(epoch.elapsed().as_secs_f64());
                    tokio::time::sleep(ONE_WAY).await;
                    let answer = server.lock().unwrap().acquire(TOKEN);
                    let at = epoch.elapsed().as_secs_f64();
                    tokio::time::sleep(ONE_WAY).await;
                    match answer {
                        Ok(()) => {
                            seen.lock().unwrap().answered.push(at);
                            rate.answered(g).await.unwrap();
                            break;
                        }
                        Err(r) => {
                            seen.lock().unwrap().refused.push(at);
                            let t = Throttle {
                                limit: Limit::of(429, r.reason.as_deref()),
                                retry_after: Duration::from_secs(r.retry_after),
                            };
                            rate.throttled(g, t).await.unwrap();
                        }
                    }
                }
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    let budget = rate.view().unwrap().budget;
    let seen = Arc::try_unwrap(seen).ok().unwrap().into_inner().unwrap();
    (seen, budget)
}

fn server(count: u32, length: Duration) -> Arc<Mutex<RateLimiter>> {
    let mut s = RateLimiter::new(RateConfig::default());
    s.set_window_budget(Some(WindowBudget { count, length }));
    Arc::new(Mutex::new(s))
}

fn fresh_db() -> (tempfile::TempDir, Arc<Db>) {
    let dir = tempfile::tempdir().unwrap();
    let db = Arc::new(Db::open(&dir.path().join("state.db")).unwrap());
    (dir, db)
}

/// Per service window: (answered, refused).
fn per_window(seen: &Seen, w: f64) -> BTreeMap<u64, (usize, usize)> {
    let mut out = BTreeMap::new();
    for t in &seen.answered {
        out.entry((t / w) as u64).or_insert((0, 0)).0 += 1;
    }
    for t in &seen.refused {
        out.entry((t / w) as u64).or_insert((0, 0)).1 += 1;
    }
    out
}

struct Figures {
    span: f64,
    ideal: f64,
    best: f64,
    refused: usize,
    most_refused: usize,
}

fn figures(seen: &Seen, budget: u32, w: f64, requests: usize, offset: f64) -> Figures {
    let first = seen.first_sent.unwrap_or(0.0);
    let last = seen.answered.iter().copied().fold(0.0, f64::max);
    let b = f64::from(budget);
    let n = requests as f64;
    let windows = (n / b).ceil();
    Figures {
        span: last - first,
        ideal: ((n - b) / (b / w)).max(0.0),
        best: ((windows - 1.0) * w - offset).max(0.0),
        refused: seen.refused.len(),
        most_refused: per_window(seen, w).values().map(|v| v.1).max().unwrap_or(0),
    }
}

fn verbose(seen: &Seen, w: f64) {
    if std::env::var_os("NOTEBRIDGE_BENCH_VERBOSE").is_some() {
        let rows: Vec<String> = per_window(seen, w)
            .iter()
            .map(|(k, (a, r))| format!("w{k}: {a} ok {r} 429"))
            .collect();
        eprintln!("    {}", rows.join(", "));
    }
}

/// Budget `factor` x the documented average, `requests` in all, at four offsets into the window.
async fn case(factor: u32, requests: usize, w: Duration) {
    let budget = (f64::from(factor) * DOCUMENTED_PER_SECOND * w.as_secs_f64()).round() as u32;
    let ws = w.as_secs_f64();
    let mut of_ideal = Vec::new();
    let mut of_best = Vec::new();
    let mut lines = Vec::new();
    let mut most = 0;
    for quarter in 0..4u32 {
        let offset = w * quarter / 4;
        let (_dir, db) = fresh_db();
        let s = server(budget, w);
        let epoch = Instant::now();
        tokio::time::sleep(offset).await;
        let (seen, learned) = run(db, s, epoch, w, requests, None).await;
        verbose(&seen, ws);
        let f = figures(&seen, budget, ws, requests, offset.as_secs_f64());
        of_ideal.push(f.ideal / f.span);
        of_best.push(f.best / f.span);
        most = most.max(f.most_refused);
        lines.push(format!(
            "{:.0} s in: span {:.1} s, {:.2} of ideal, {:.2} of best, {} 429s (most in a window {}), learned {}",
            offset.as_secs_f64(),
            f.span,
            f.ideal / f.span,
            f.best / f.span.max(1e-9),
            f.refused,
            f.most_refused,
            learned.map_or("none".into(), |b| b.to_string()),
        ));
    }
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    let min = |v: &[f64]| v.iter().copied().fold(f64::INFINITY, f64::min);
    println!(
        "notion pace {factor}x, budget {budget}/{ws:.0} s, {requests} requests: ideal {:.1} s; of ideal mean {:.2} (min {:.2}; target >= 0.9), of best mean {:.2} (min {:.2}); most 429s in one window {most} (target <= 1)",
        ((requests as f64 - f64::from(budget)) / (f64::from(budget) / ws)).max(0.0),
        mean(&of_ideal),
        min(&of_ideal),
        mean(&of_best),
        min(&of_best),
    );
    for l in lines {
        println!("    {l}");
    }
}

/// 3x the documented average until 1.5 windows in, then 1x (the plan changed).
async fn budget_drops(requests: usize, w: Duration) {
    let ws = w.as_secs_f64();
    let high = (3.0 * DOCUMENTED_PER_SECOND * ws).round() as u32;
    let low = (DOCUMENTED_PER_SECOND * ws).round() as u32;
    let (_dir, db) = fresh_db();
    let s = server(high, w);
    let epoch = Instant::now();
    let change = (
        w * 3 / 2,
        WindowBudget {
            count: low,
            length: w,
        },
    );
    let (seen, learned) = run(db, s, epoch, w, requests, Some(change)).await;
    verbose(&seen, ws);
    let windows = per_window(&seen, ws);
    // From the first whole window at the lower budget: what was answered against it.
    let from = 2u64;
    let last = seen.answered.iter().copied().fold(0.0, f64::max);
    let whole: Vec<_> = windows
        .range(from..((last / ws) as u64))
        .map(|(_, v)| *v)
        .collect();
    let spent: usize = whole.iter().map(|v| v.0).sum();
    let refused_after: Vec<usize> = windows.range(from + 1..).map(|(_, v)| v.1).collect();
    println!(
        "notion pace budget drop {high} -> {low}/{ws:.0} s at {:.0} s, {requests} requests: learned {}; the {} whole windows at the lower budget answered {:.2} of it (target >= 0.9); 429s in the window it fell {}, in each later window at most {} (target <= 1)",
        change.0.as_secs_f64(),
        learned.map_or("none".into(), |b| b.to_string()),
        whole.len(),
        spent as f64 / (whole.len().max(1) as f64 * f64::from(low)),
        windows.get(&from).map_or(0, |v| v.1) + windows.get(&(from - 1)).map_or(0, |v| v.1),
        refused_after.iter().copied().max().unwrap_or(0),
    );
}

/// A run that learns the budget, then another on the same database `gap` after it ended.
async fn second_run(requests: usize, w: Duration, gap: Duration) {
    let ws = w.as_secs_f64();
    let budget = (3.0 * DOCUMENTED_PER_SECOND * ws).round() as u32;
    let (_dir, db) = fresh_db();
    let s = server(budget, w);
    let epoch = Instant::now();
    run(db.clone(), s.clone(), epoch, w, requests, None).await;
    tokio::time::sleep(gap).await;
    let started = epoch.elapsed().as_secs_f64();
    let (seen, learned) = run(db, s, epoch, w, requests, None).await;
    verbose(&seen, ws);
    let offset = started % ws;
    let f = figures(&seen, budget, ws, requests, offset);
    // The first window of the second run: what it answered of the budget's rest there.
    let first_window = (started / ws) as u64;
    let in_first = per_window(&seen, ws).get(&first_window).map_or(0, |v| v.0);
    println!(
        "notion pace second run {:.0} s after the first ({:.0} s into a window), budget {budget}/{ws:.0} s, {requests} requests: first window answered {in_first}, span {:.1} s = {:.2} of best, {} 429s (most in a window {}), budget {}",
        gap.as_secs_f64(),
        offset,
        f.span,
        f.best / f.span.max(1e-9),
        f.refused,
        f.most_refused,
        learned.map_or("none".into(), |b| b.to_string()),
    );
}

fn main() {
    let long = Duration::from_secs(env_num("NOTEBRIDGE_BENCH_PACE_WINDOW", 60));
    let short = Duration::from_secs(env_num("NOTEBRIDGE_BENCH_PACE_SHORT", 6));
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .start_paused(true)
        .build()
        .unwrap();
    // `NOTEBRIDGE_BENCH_ONLY=cases|drop|second`: one part.
    let only = std::env::var("NOTEBRIDGE_BENCH_ONLY").unwrap_or_default();
    let part = |name: &str| only.is_empty() || only == name;
    rt.block_on(async {
        for w in [long, short] {
            println!("== window {} s ==", w.as_secs());
            if part("cases") {
                for (factor, requests) in [
                    (1, 609),
                    (1, 600),
                    (1, 1_600),
                    (3, 1_559),
                    (3, 600),
                    (3, 1_600),
                ] {
                    case(factor, requests, w).await;
                }
            }
            if part("drop") {
                budget_drops(1_600, w).await;
            }
            if part("second") {
                second_run(700, w, w / 4).await;
                second_run(700, w, w * 3).await;
            }
        }
    });
}
