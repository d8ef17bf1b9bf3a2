//! Scan benchmark (issue 5): the incident-sized notebook (1,300 pages in 40 sections) scanned by the
//! real scan code against the Graph test server under the DEFAULT limits (user 120/60s,400/3600s,
//! app 240/60s,800/3600s, 5 and 20 concurrent); then the 40 section listings fetched through
//! `$batch` vs one GET each (sequential, and 5 at a time), on loopback and with a round-trip latency
//! injected by the server, to show where batching pays. Every run gets its own lab (fresh budgets)
//! and its own state database (fresh limiter ledger). One line per figure.

use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::StreamExt;
use notebridge::clock::{Clock, Jitter};
use notebridge::graph::batch::BatchGet;
use notebridge::graph::scan::{scan, ScanProgress};
use notebridge::graph::{Caller, GraphClient, GraphCounts};
use notebridge::limiter::Lane;
use notebridge::settings::{GraphLimits, Window};
use notebridge::store::inventory::totals;
use notebridge::store::Db;
use notebridge_testkit::generator::{generate, NotebookSpec};
use notebridge_testkit::graph::stats::Counters;
use notebridge_testkit::lab::{Lab, LabConfig};
use serde_json::Value;

/// The server's app-wide windows: what Microsoft documents for app-only calls.
const SERVER_APP_WINDOWS: &str = "240/60s,800/3600s";

fn windows(ws: &[Window]) -> String {
    ws.iter()
        .map(|w| format!("{}/{}s", w.count, w.length.as_secs()))
        .collect::<Vec<_>>()
        .join(",")
}

/// A lab with the documented default limits, one user holding the incident notebook, signed in, and
/// a client whose token is already fetched (the `/me` warm-up is not OneNote and not throttled).
struct Run {
    lab: Lab,
    _dir: tempfile::TempDir,
    graph: GraphClient,
    who: Caller,
    user_id: String,
}

impl Run {
    async fn start() -> Run {
        let d = GraphLimits::default();
        let lab = Lab::start(LabConfig {
            user_windows: windows(&d.user_windows),
            // The server models the app-wide figures Microsoft documents (for app-only calls);
            // the client applies none by default.
            app_windows: SERVER_APP_WINDOWS.into(),
            user_concurrency: d.user_concurrency,
            app_concurrency: 20,
            ..LabConfig::default()
        })
        .await;
        let user = lab.add_user("alice", generate(&NotebookSpec::incident(1)));
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.db");
        let db = Arc::new(Db::open(&path).unwrap());
        lab.sign_in(&db, "alice", &user);
        let settings = lab.settings(&path);
        let graph = GraphClient::open(
            db.clone(),
            &settings,
            Clock::system(),
            Jitter::from_entropy(),
        )
        .unwrap();
        let who = Caller::for_account(&db, "alice", Lane::Foreground).unwrap();
        let _: Value = graph
            .get_json(&who, "me", "the signed-in user")
            .await
            .unwrap();
        Run {
            lab,
            _dir: dir,
            graph,
            who,
            user_id: user.id,
        }
    }

    fn section_listings(&self) -> Vec<BatchGet> {
        self.lab
            .graph
            .notes(&self.user_id)
            .sections
            .iter()
            .map(|s| BatchGet {
                url: format!("me/onenote/sections/{}/pages?pagelevel=true&$top=100", s.id),
                item: format!("section {}", s.id),
            })
            .collect()
    }
}

/// Client and server counters since `before`.
fn delta(run: &Run, before: (GraphCounts, Counters)) -> (GraphCounts, u64, u64, u64, u64) {
    let g = run.graph.counts();
    let s = run.lab.graph.counters();
    (
        GraphCounts {
            requests: g.requests - before.0.requests,
            throttled: g.throttled - before.0.throttled,
            retries: g.retries - before.0.retries,
            batches: g.batches - before.0.batches,
            bytes: g.bytes - before.0.bytes,
        },
        // Requests the server counted against the budget: inner requests count, envelopes do not.
        (s.total - before.1.total) - (s.batches - before.1.batches),
        s.throttled - before.1.throttled,
        s.batches - before.1.batches,
        // HTTP round trips the client made: envelopes plus plain requests.
        (s.total - before.1.total) - (s.inner_requests - before.1.inner_requests),
    )
}

async fn full_scan() {
    let run = Run::start().await;
    let before = (run.graph.counts(), run.lab.graph.counters());
    let started = Instant::now();
    let result = scan(&run.graph, &run.who, &[], Arc::new(ScanProgress::default()))
        .await
        .unwrap();
    let wall = started.elapsed();
    let t = totals(&result.notebooks);
    let (g, budget, throttled, _, trips) = delta(&run, before);
    println!(
        "scan (default limits {} user; server app windows {}): {} pages in {} sections found ({} failures); {} requests against the budget ({} by the client's count, {} $batch envelopes, {trips} HTTP round trips), 429s: {throttled} (target 0), wall time {:.3} s",
        windows(&GraphLimits::default().user_windows),
        SERVER_APP_WINDOWS,
        t.pages,
        t.sections,
        result.failures.len(),
        budget,
        g.requests,
        g.batches,
        wall.as_secs_f64()
    );
}

#[derive(Clone, Copy, Debug)]
enum Mode {
    Batched,
    OneByOne,
    FiveAtATime,
}

async fn listings(mode: Mode, latency: Option<Duration>) {
    let run = Run::start().await;
    let gets = run.section_listings();
    if let Some(l) = latency {
        // Every answer held this long: a stand-in for a WAN round trip to Graph.
        run.lab.graph.faults().delay_next(u32::MAX, l);
    }
    let before = (run.graph.counts(), run.lab.graph.counters());
    let started = Instant::now();
    let ok = match mode {
        Mode::Batched => run
            .graph
            .batch_get(&run.who, &gets)
            .await
            .expect("batch runs")
            .iter()
            .filter(|r| r.is_ok())
            .count(),
        Mode::OneByOne => {
            let mut ok = 0;
            for g in &gets {
                let r: Result<Vec<Value>, _> =
                    run.graph.get_all(&run.who, &g.url, 100, &g.item).await;
                ok += usize::from(r.is_ok());
            }
            ok
        }
        Mode::FiveAtATime => {
            futures::stream::iter(gets.iter().map(|g| {
                let run = &run;
                async move {
                    run.graph
                        .get_all::<Value>(&run.who, &g.url, 100, &g.item)
                        .await
                        .is_ok()
                }
            }))
            .buffer_unordered(5)
            .filter(|ok| futures::future::ready(*ok))
            .count()
            .await
        }
    };
    let wall = started.elapsed();
    run.lab.graph.faults().clear();
    let (_, budget, throttled, batches, trips) = delta(&run, before);
    println!(
        "section listings {:<11} latency {:>6}: {ok}/{} listed, {budget} requests against the budget, {trips} HTTP round trips ({batches} $batch), 429s: {throttled}, wall time {:.3} s",
        format!("{mode:?}"),
        latency
            .map(|l| format!("{} ms", l.as_millis()))
            .unwrap_or("none".into()),
        gets.len(),
        wall.as_secs_f64()
    );
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        full_scan().await;
        for latency in [None, Some(Duration::from_millis(100))] {
            for mode in [Mode::Batched, Mode::OneByOne, Mode::FiveAtATime] {
                listings(mode, latency).await;
            }
        }
    });
}
