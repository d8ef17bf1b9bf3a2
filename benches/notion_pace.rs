//! Notion pace benchmark (issue 31): the Notion client paced `auto` against the Notion test server's
//! per-connection budget per window, over loopback, for budgets 1x, 3x and 10x Notion's documented
//! average (3 requests/s). The window is short so a run takes minutes: `NOTEBRIDGE_BENCH_PACE_WINDOW`
//! seconds (default 6; Notion's is 60), `NOTEBRIDGE_BENCH_PACE_WINDOWS` of them per budget (default
//! 12), 8 callers sending as fast as the pace lets them. Figures per budget: when the first 429
//! taught the budget, the learned budget, and from the window after that on the requests per second
//! Notion accepted against the budget (target >= 0.9) and the 429s per window (target <= 1).

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use notebridge::clock::{Clock, Jitter};
use notebridge::notion::client::NotionClient;
use notebridge::notion::pace::{Mode, DOCUMENTED_PER_SECOND};
use notebridge::notion::rate::NotionRate;
use notebridge::store::Db;
use notebridge_testkit::notion::{NotionServer, NotionServerConfig, WindowBudget};

fn env_num(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

async fn run(factor: u32, window: Duration, windows: u32) {
    let budget = (f64::from(factor) * DOCUMENTED_PER_SECOND * window.as_secs_f64()).round() as u32;
    let server = NotionServer::start(NotionServerConfig::default()).await;
    let started = Instant::now();
    server.set_window_budget(Some(WindowBudget {
        count: budget,
        length: window,
    }));
    let dir = tempfile::tempdir().unwrap();
    let db = Arc::new(Db::open(&dir.path().join("state.db")).unwrap());
    let rate = NotionRate::with_mode(db, server.token(), Mode::Auto { window }, Clock::system());
    let client = NotionClient::new(
        server.base_url(),
        server.token(),
        Arc::new(rate),
        Jitter::seeded(1),
    );
    let end = started + window * windows;
    // When each answered request came back, and when the client first met a 429.
    let done = Arc::new(Mutex::new(Vec::new()));
    let first_429 = Arc::new(Mutex::new(None::<Instant>));
    let mut tasks = Vec::new();
    for _ in 0..8 {
        let (client, done, first_429) = (client.clone(), done.clone(), first_429.clone());
        tasks.push(tokio::spawn(async move {
            while Instant::now() < end {
                client.me().await.unwrap();
                let now = Instant::now();
                done.lock().unwrap().push(now);
                if client.counts().throttled > 0 {
                    first_429.lock().unwrap().get_or_insert(now);
                }
            }
        }));
    }
    // The server's 429s at each window's end, to count them per window from the settled one on.
    let mut refused_at_window = Vec::new();
    for k in 1..=windows {
        tokio::time::sleep_until((started + window * k).into()).await;
        refused_at_window.push(server.counters().rate_limited);
    }
    for t in tasks {
        t.await.unwrap();
    }
    let view = client.rate().view().unwrap();
    let Some(learned_at) = *first_429.lock().unwrap() else {
        println!(
            "notion pace {factor}x: budget {budget}/{} s: no 429 in {windows} windows (pace {:.0}/min)",
            window.as_secs_f64(),
            view.pace_per_minute
        );
        return;
    };
    // Measured from the first whole server window after the one that taught the budget.
    let learned_window = (learned_at - started).as_nanos() / window.as_nanos();
    let from_k = learned_window as u32 + 1;
    if from_k >= windows {
        println!("notion pace {factor}x: the first 429 came in the last window: run more windows");
        return;
    }
    let from = started + window * from_k;
    let to = started + window * windows;
    let accepted = done
        .lock()
        .unwrap()
        .iter()
        .filter(|t| **t >= from && **t < to)
        .count();
    let settled_windows = windows - from_k;
    let seconds = (to - from).as_secs_f64();
    let per_second = accepted as f64 / seconds;
    let budget_per_second = f64::from(budget) / window.as_secs_f64();
    let refused = refused_at_window[windows as usize - 1] - refused_at_window[from_k as usize - 1];
    println!(
        "notion pace {factor}x: budget {budget}/{} s ({budget_per_second:.1}/s); first 429 at {:.1} s (window {}), learned budget {}; over the {settled_windows} windows after it {per_second:.2} requests/s = {:.3} of the budget (target >= 0.9), {refused} 429s = {:.2} per window (target <= 1)",
        window.as_secs_f64(),
        (learned_at - started).as_secs_f64(),
        learned_window + 1,
        view.budget.map_or("none".into(), |b| b.to_string()),
        per_second / budget_per_second,
        refused as f64 / f64::from(settled_windows.max(1)),
    );
    server.shutdown().await;
}

fn main() {
    let window = Duration::from_secs(env_num("NOTEBRIDGE_BENCH_PACE_WINDOW", 6));
    let windows = env_num("NOTEBRIDGE_BENCH_PACE_WINDOWS", 12) as u32;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    for factor in [1, 3, 10] {
        rt.block_on(run(factor, window, windows));
    }
}
