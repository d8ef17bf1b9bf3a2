//! Notion's pace against the test server's limit models, on tokio's paused clock: the client's
//! grants meet the server's own rate model in process (the same code the HTTP server answers
//! with), each request taking a few milliseconds each way.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use notebridge::clock::Clock;
use notebridge::notion::pace::{Limit, Mode, Throttle};
use notebridge::notion::rate::NotionRate;
use notebridge::settings::{NotionPace, Window};
use notebridge::store::Db;

use crate::lock_support::{ticks_while_waiting, HeldWrite};
use notebridge_testkit::notion::rate::{
    RateConfig, RateLimiter, WindowBudget, WorkspaceLimit, CONNECTION_REASON,
};
use tokio::time::Instant;

const T0: i64 = 1_700_000_000_000;
const TOKEN: &str = "secret_pace";

/// What the server saw: when it accepted each request, and each refusal with its reason.
#[derive(Default)]
struct Seen {
    accepted: Vec<Duration>,
    refused: Vec<(Duration, Option<String>)>,
}

impl Seen {
    /// Accepted requests per server window of `w` after `from`, whole windows only.
    fn per_window(&self, w: Duration, from: Duration, to: Duration) -> Vec<usize> {
        let first = from.as_nanos().div_ceil(w.as_nanos()) as u64;
        let last = (to.as_nanos() / w.as_nanos()) as u64;
        (first..last)
            .map(|k| {
                let (a, b) = (w * k as u32, w * (k as u32 + 1));
                self.accepted.iter().filter(|t| **t >= a && **t < b).count()
            })
            .collect()
    }

    /// The most refusals in any one server window of `w` after `from`.
    fn most_refused_per_window(&self, w: Duration, from: Duration) -> usize {
        let mut per = std::collections::BTreeMap::new();
        for (t, _) in self.refused.iter().filter(|(t, _)| *t >= from) {
            *per.entry(t.as_nanos() / w.as_nanos()).or_insert(0) += 1;
        }
        per.values().copied().max().unwrap_or(0)
    }
}

/// `workers` tasks on each pace send requests to `server` (as `token`) until `run` has passed.
async fn drive(
    paces: &[(Arc<NotionRate>, &str)],
    server: Arc<Mutex<RateLimiter>>,
    workers: usize,
    run: Duration,
) -> Seen {
    let start = Instant::now();
    let seen = Arc::new(Mutex::new(Seen::default()));
    let mut tasks = Vec::new();
    for (rate, token) in paces {
        for _ in 0..workers {
            let (rate, server, seen, token) = (
                rate.clone(),
                server.clone(),
                seen.clone(),
                token.to_string(),
            );
            tasks.push(tokio::spawn(async move {
                while start.elapsed() < run {
                    let g = rate.acquire().await.unwrap();
                    tokio::time::sleep(Duration::from_millis(3)).await;
                    let answer = server.lock().unwrap().acquire(&token);
                    let at = start.elapsed();
                    tokio::time::sleep(Duration::from_millis(3)).await;
                    match answer {
                        Ok(()) => {
                            seen.lock().unwrap().accepted.push(at);
                            rate.answered(g).await.unwrap();
                        }
                        Err(r) => {
                            let limit = Limit::of(429, r.reason.as_deref());
                            seen.lock().unwrap().refused.push((at, r.reason));
                            rate.throttled(
                                g,
                                Throttle {
                                    limit,
                                    retry_after: Duration::from_secs(r.retry_after),
                                },
                            )
                            .await
                            .unwrap();
                        }
                    }
                }
            }));
        }
    }
    for t in tasks {
        t.await.unwrap();
    }
    Arc::try_unwrap(seen).ok().unwrap().into_inner().unwrap()
}

fn window_server(count: u32, length: Duration) -> Arc<Mutex<RateLimiter>> {
    let mut s = RateLimiter::new(RateConfig::default());
    s.set_window_budget(Some(WindowBudget { count, length }));
    Arc::new(Mutex::new(s))
}

fn auto(db: Arc<Db>, window: Duration, clock: &Clock) -> Arc<NotionRate> {
    Arc::new(NotionRate::with_mode(
        db,
        TOKEN,
        Mode::Auto { window },
        clock.clone(),
    ))
}

fn open_db(dir: &tempfile::TempDir) -> Arc<Db> {
    Arc::new(Db::open(&dir.path().join("state.db")).unwrap())
}

#[tokio::test(start_paused = true)]
async fn auto_learns_the_connection_budget_per_window_and_spends_each_window_whole() {
    let dir = tempfile::tempdir().unwrap();
    let clock = Clock::anchored_at(T0);
    let w = Duration::from_secs(60);
    // 10x the documented average: 1,800 per minute
    let rate = auto(open_db(&dir), w, &clock);
    let seen = drive(&[(rate.clone(), TOKEN)], window_server(1_800, w), 8, w * 12).await;
    let view = rate.view().unwrap();
    let budget = view.budget.expect("a per-connection 429 told the budget");
    assert!((1_750..=1_800).contains(&budget), "learned {budget}");
    // learning at 3,600 a minute: the first window meets the budget
    let settled = w * 2;
    let windows = seen.per_window(w, settled, w * 12);
    assert!(!windows.is_empty());
    for n in &windows {
        assert!(
            *n >= 1_620,
            "each later window spent at least 0.9 of it: {windows:?}"
        );
    }
    assert!(
        seen.most_refused_per_window(w, settled) <= 1,
        "at most one 429 per window once learned"
    );
    assert!(seen
        .refused
        .iter()
        .all(|(_, r)| r.as_deref() == Some(CONNECTION_REASON)));
}

/// Requests the server accepted in `[from, to)`.
fn accepted_in(seen: &Seen, from: Duration, to: Duration) -> usize {
    seen.accepted
        .iter()
        .filter(|t| **t >= from && **t < to)
        .count()
}

#[tokio::test(start_paused = true)]
async fn auto_spends_the_first_window_whole_and_learns_the_budget_in_it() {
    let w = Duration::from_secs(60);
    // 1x and 3x Notion's documented average
    for budget in [180u32, 540] {
        let dir = tempfile::tempdir().unwrap();
        let clock = Clock::anchored_at(T0);
        let rate = auto(open_db(&dir), w, &clock);
        let seen = drive(&[(rate.clone(), TOKEN)], window_server(budget, w), 8, w * 4).await;
        let first = seen.refused.first().expect("the budget was met").0;
        // the budget, as fast as the ceiling of 60/s lets it go, then its 429
        let at_ceiling = Duration::from_secs_f64(f64::from(budget) / 60.0 + 1.0);
        assert!(first < at_ceiling, "{budget}: first 429 at {first:?}");
        let windows = seen.per_window(w, Duration::ZERO, w * 4);
        assert_eq!(
            windows,
            vec![budget as usize; 4],
            "every window spent whole"
        );
        // each later window at once from its reset: most of it in its first second
        for k in 1..4 {
            let start = w * k;
            let early = accepted_in(&seen, start, start + Duration::from_secs(2));
            assert!(
                early >= budget as usize * 9 / 10,
                "{budget}: window {k}: {early}"
            );
        }
        assert!(seen.most_refused_per_window(w, Duration::ZERO) <= 1);
        let learned = rate.view().unwrap().budget.expect("learned");
        assert!(
            (budget * 9 / 10..=budget).contains(&learned),
            "{budget}: learned {learned}"
        );
    }
}

#[tokio::test(start_paused = true)]
async fn a_budget_the_ledger_holds_is_spent_from_the_first_request_of_the_next_run() {
    let dir = tempfile::tempdir().unwrap();
    let clock = Clock::anchored_at(T0);
    let began = Instant::now();
    let w = Duration::from_secs(60);
    let server = window_server(540, w);
    let first = auto(open_db(&dir), w, &clock);
    // its callers stop once the third window's pause ends (180 s), each sending one more
    drive(&[(first, TOKEN)], server.clone(), 8, w * 2 + w / 6).await;
    // the next run, another process on the same database, 50 s into a window that nobody used,
    // the last reset the ledger has two windows old
    tokio::time::sleep_until(began + Duration::from_secs(290)).await;
    let next = auto(open_db(&dir), w, &clock);
    let seen = drive(&[(next.clone(), TOKEN)], server.clone(), 8, w * 2).await;
    // `drive` counts from its own start: the server's windows begin 10 s and 70 s after it
    let (reset, later) = (Duration::from_secs(10), Duration::from_secs(70));
    assert_eq!(
        accepted_in(&seen, Duration::ZERO, Duration::from_secs(1)),
        540,
        "the window's budget at once from the first request, no learning"
    );
    assert_eq!(accepted_in(&seen, Duration::ZERO, reset), 540);
    assert_eq!(
        accepted_in(&seen, reset, reset + Duration::from_secs(1)),
        540
    );
    assert_eq!(accepted_in(&seen, reset, later), 540);
    // one 429 ends each server window (they begin 10 s after `drive` did)
    let shifted = Seen {
        accepted: Vec::new(),
        refused: seen
            .refused
            .iter()
            .map(|(t, r)| (*t + Duration::from_secs(50), r.clone()))
            .collect(),
    };
    assert!(
        shifted.most_refused_per_window(w, Duration::ZERO) <= 1,
        "{:?}",
        seen.refused
    );
    assert_eq!(next.view().unwrap().budget, Some(540));

    // a run in a window its predecessor's requests began spends only what they left of it
    // its callers stopped once the pause to 420 s ended (130 s after it began), each sending one
    let before = accepted_in(&seen, Duration::from_secs(130), Duration::from_secs(200));
    let again = auto(open_db(&dir), w, &clock);
    let seen = drive(&[(again, TOKEN)], server, 8, Duration::from_secs(20)).await;
    assert!(
        before > 0,
        "the predecessor's last requests are in this window"
    );
    assert_eq!(
        accepted_in(&seen, Duration::ZERO, Duration::from_secs(10)) + before,
        540
    );
    assert!(
        seen.most_refused_per_window(w, Duration::ZERO) <= 1,
        "{:?}",
        seen.refused
    );
}

#[tokio::test(start_paused = true)]
async fn a_budget_that_falls_mid_run_is_learned_in_the_window_it_falls() {
    let dir = tempfile::tempdir().unwrap();
    let clock = Clock::anchored_at(T0);
    let w = Duration::from_secs(60);
    let server = window_server(540, w);
    {
        // the workspace's plan changes 90 s in
        let server = server.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_secs(90)).await;
            server.lock().unwrap().set_window_budget(Some(WindowBudget {
                count: 180,
                length: w,
            }));
        });
    }
    let rate = auto(open_db(&dir), w, &clock);
    let seen = drive(&[(rate.clone(), TOKEN)], server, 8, w * 7).await;
    assert_eq!(rate.view().unwrap().budget, Some(180));
    // the window it fell in is the one that tells it (the requests in flight then meet it too);
    // each later one is spent whole with one 429
    let settled = w * 3;
    assert_eq!(seen.per_window(w, settled, w * 7), vec![180; 4]);
    assert!(seen.most_refused_per_window(w, settled) <= 1);
    assert!(
        seen.most_refused_per_window(w, Duration::ZERO) <= 8,
        "in flight at most"
    );
}

#[tokio::test(start_paused = true)]
async fn a_short_window_budget_is_learned_too() {
    let dir = tempfile::tempdir().unwrap();
    let clock = Clock::anchored_at(T0);
    let w = Duration::from_secs(2);
    let rate = auto(open_db(&dir), w, &clock);
    let seen = drive(&[(rate.clone(), TOKEN)], window_server(120, w), 4, w * 40).await;
    let budget = rate.view().unwrap().budget.expect("learned");
    assert!(budget <= 120, "never above the server's: {budget}");
    let settled = w * 10;
    let windows = seen.per_window(w, settled, w * 40);
    let spent: usize = windows.iter().sum();
    assert!(
        spent as f64 >= 0.9 * 120.0 * windows.len() as f64,
        "spent {spent} in {} windows of 120",
        windows.len()
    );
    // One 429 ends each window; a request already in flight when it came may meet it too (a grain
    // of `Retry-After` is half this window, so the pace runs well above the budget).
    let refused: Vec<_> = seen
        .refused
        .iter()
        .map(|r| r.0)
        .filter(|t| *t >= settled)
        .collect();
    assert!(
        refused.len() <= windows.len(),
        "{refused:?} in {} windows",
        windows.len()
    );
    assert!(seen.most_refused_per_window(w, settled) <= 2, "{refused:?}");
}

#[tokio::test(start_paused = true)]
async fn under_the_older_token_bucket_auto_settles_near_its_average() {
    let dir = tempfile::tempdir().unwrap();
    let clock = Clock::anchored_at(T0);
    let w = Duration::from_secs(60);
    let server = Arc::new(Mutex::new(RateLimiter::new(RateConfig::default())));
    let rate = auto(open_db(&dir), w, &clock);
    let run = w * 10;
    let seen = drive(&[(rate.clone(), TOKEN)], server, 4, run).await;
    // the bucket's 429s carry no reason: a plain 429 never sets a connection budget
    assert_eq!(rate.view().unwrap().budget, None);
    assert!(seen.refused.iter().all(|(_, r)| r.is_none()));
    let per_second = seen.accepted.len() as f64 / run.as_secs_f64();
    assert!(
        (2.5..=3.1).contains(&per_second),
        "{per_second}/s against 3/s"
    );
    // bounded: a few 429s per minute, never a storm
    assert!(
        seen.refused.len() <= 10 * 4,
        "{} 429s in 10 minutes",
        seen.refused.len()
    );
}

#[tokio::test(start_paused = true)]
async fn a_per_workspace_429_pauses_everyone_and_is_never_taken_for_the_connection_budget() {
    let dir = tempfile::tempdir().unwrap();
    let clock = Clock::anchored_at(T0);
    let w = Duration::from_secs(60);
    let mut s = RateLimiter::new(RateConfig::default());
    s.set_window_budget(Some(WindowBudget {
        count: 1_800,
        length: w,
    }));
    // the workspace allows 500 a minute in all; past it, 90 s for everyone
    s.set_workspace_limit(Some(WorkspaceLimit {
        count: 500,
        length: w,
        retry_after: Duration::from_secs(90),
    }));
    let server = Arc::new(Mutex::new(s));
    let rate = auto(open_db(&dir), w, &clock);
    let seen = drive(&[(rate.clone(), TOKEN)], server, 4, w * 4).await;
    let view = rate.view().unwrap();
    assert_eq!(
        view.budget, None,
        "the workspace's limit is not the connection's budget"
    );
    let first = seen.refused.first().expect("the workspace limit was met").0;
    // the pause holds every request: nothing reaches the server for the 90 s
    let during = seen
        .accepted
        .iter()
        .chain(seen.refused.iter().skip(1).map(|(t, _)| t))
        .filter(|t| {
            **t > first + Duration::from_millis(10) && **t < first + Duration::from_secs(90)
        })
        .count();
    assert_eq!(during, 0, "requests during the workspace's pause");
    // it came while learning, after the workspace's 500 of the minute: the pace is half that,
    // raised a step for each clean window since
    assert!(
        (250.0..270.0).contains(&view.pace_per_minute),
        "{}",
        view.pace_per_minute
    );
}

#[tokio::test(start_paused = true)]
async fn two_processes_on_one_database_share_the_budget_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let clock = Clock::anchored_at(T0);
    let w = Duration::from_secs(60);
    // two `migrate` runs on one integration token: one database, two handles, two paces
    let a = auto(open_db(&dir), w, &clock);
    let b = auto(open_db(&dir), w, &clock);
    let seen = drive(
        &[(a.clone(), TOKEN), (b.clone(), TOKEN)],
        window_server(600, w),
        3,
        w * 10,
    )
    .await;
    let (va, vb) = (a.view().unwrap(), b.view().unwrap());
    assert_eq!(va.budget, vb.budget, "one learned budget");
    let budget = va.budget.expect("learned");
    assert!((580..=600).contains(&budget), "learned {budget}");
    let settled = w * 4;
    for n in seen.per_window(w, settled, w * 10) {
        assert!(n >= 540, "both together spend the window: {n}");
    }
    assert!(seen.most_refused_per_window(w, settled) <= 1);
}

#[tokio::test(start_paused = true)]
async fn a_fixed_number_holds_whatever_the_budget_and_auto_finds_it() {
    let w = Duration::from_secs(60);
    let run = w * 8;
    let dir = tempfile::tempdir().unwrap();
    let clock = Clock::anchored_at(T0);
    let fixed = Arc::new(NotionRate::open(
        open_db(&dir),
        TOKEN,
        NotionPace::Fixed(Window {
            count: 3,
            length: Duration::from_secs(1),
        }),
        clock.clone(),
    ));
    let seen = drive(&[(fixed.clone(), TOKEN)], window_server(900, w), 4, run).await;
    let per_second = seen.accepted.len() as f64 / run.as_secs_f64();
    assert!((2.9..=3.1).contains(&per_second), "fixed: {per_second}/s");
    assert!(seen.refused.is_empty());
    assert_eq!(fixed.view().unwrap().budget, None);

    let dir = tempfile::tempdir().unwrap();
    let auto = auto(open_db(&dir), w, &clock);
    let seen = drive(&[(auto.clone(), TOKEN)], window_server(900, w), 4, run).await;
    let per_second = seen.accepted.len() as f64 / run.as_secs_f64();
    assert!(per_second > 11.0, "auto: {per_second}/s against 15/s");
    assert!(auto.view().unwrap().budget.is_some());
}

#[tokio::test(start_paused = true)]
async fn an_unknown_rate_limit_reason_is_a_plain_429() {
    let dir = tempfile::tempdir().unwrap();
    let clock = Clock::anchored_at(T0);
    let w = Duration::from_secs(60);
    let server = window_server(600, w);
    server
        .lock()
        .unwrap()
        .block_with_reason(Duration::from_secs(5), "a_limit_nobody_knows");
    let rate = auto(open_db(&dir), w, &clock);
    let seen = drive(&[(rate.clone(), TOKEN)], server, 4, Duration::from_secs(20)).await;
    let view = rate.view().unwrap();
    assert_eq!(view.budget, None, "an unknown reason tells no budget");
    let unknown: Vec<_> = seen
        .refused
        .iter()
        .filter(|(_, r)| r.as_deref() == Some("a_limit_nobody_knows"))
        .collect();
    // its Retry-After (5 s) paused every worker: the four in flight at the start, then nobody
    assert!(
        !unknown.is_empty() && unknown.len() <= 4,
        "{}",
        unknown.len()
    );
    assert!(seen.accepted.iter().all(|t| *t >= Duration::from_secs(5)));
    assert!(view.pace_per_minute < 180.0, "slowed like any 429");
}

/// A client of the HTTP test server as `token`, paced `auto` for `window` on `db`.
/// The pace's grant transaction waits for another process's write off the runtime: the one
/// thread of a current-thread runtime runs every other task meanwhile.
#[tokio::test(flavor = "current_thread")]
async fn a_grant_waiting_on_a_locked_database_leaves_the_runtime_to_other_tasks() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state.db");
    let rate = NotionRate::open(open_db(&dir), TOKEN, NotionPace::Auto, Clock::system());
    let held = HeldWrite::take(&path);
    let rate = Arc::new(rate);
    let grant = {
        let rate = rate.clone();
        tokio::spawn(async move { rate.acquire().await })
    };
    ticks_while_waiting(&grant, "granted").await;
    held.release();
    let g = grant.await.unwrap().unwrap();
    rate.answered(g).await.unwrap();
    assert_eq!(rate.view().unwrap().requests_last_minute, 1);
}

fn http_client(
    s: &notebridge_testkit::notion::NotionServer,
    db: Arc<Db>,
    token: &str,
    window: Duration,
) -> notebridge::notion::client::NotionClient {
    let rate = NotionRate::with_mode(db, token, Mode::Auto { window }, Clock::system());
    notebridge::notion::client::NotionClient::new(
        s.base_url(),
        token,
        Arc::new(rate),
        notebridge::clock::Jitter::seeded(3),
    )
}

#[tokio::test]
async fn the_client_reads_the_reason_from_notions_answer() {
    use notebridge_testkit::notion::{NotionServer, NotionServerConfig};
    let s = NotionServer::start(NotionServerConfig::default()).await;
    let w = Duration::from_secs(2);
    s.set_window_budget(Some(WindowBudget {
        count: 10,
        length: w,
    }));
    let dir = tempfile::tempdir().unwrap();
    let db = open_db(&dir);
    let c = http_client(&s, db.clone(), s.token(), w);
    let mut tasks = Vec::new();
    for _ in 0..2 {
        let c = c.clone();
        tasks.push(tokio::spawn(async move {
            // the pace doubles each window until the server's budget answers
            while c.counts().throttled == 0 {
                c.me().await.unwrap();
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    let view = c.rate().view().unwrap();
    let budget = view.budget.expect("the 429 named the per-connection limit");
    assert!(budget <= 10, "{budget}");
    assert!(s.counters().rate_limited >= 1);

    // another connection of the workspace: its own budget, the workspace's limit shared
    s.add_token("secret_other");
    s.set_window_budget(None);
    s.set_workspace_limit(Some(WorkspaceLimit {
        count: 3,
        length: Duration::from_secs(2),
        retry_after: Duration::from_secs(3),
    }));
    let other = http_client(&s, db, "secret_other", w);
    for _ in 0..3 {
        other.me().await.unwrap();
    }
    let started = Instant::now();
    other.me().await.unwrap();
    assert!(
        started.elapsed() >= Duration::from_secs(3),
        "waited out the workspace's pause"
    );
    let v = other.rate().view().unwrap();
    assert_eq!(
        v.budget, None,
        "a workspace 429 is not the connection's budget"
    );
    assert_eq!(
        c.rate().view().unwrap().budget,
        Some(budget),
        "each token its own pace"
    );

    // a reason nobody knows: a plain 429, waited out
    s.set_workspace_limit(None);
    s.force_rate_limit_with_reason(Duration::from_secs(1), "a_limit_nobody_knows");
    let before = c.counts().throttled;
    c.me().await.unwrap();
    assert_eq!(c.counts().throttled, before + 1);
    assert_eq!(
        c.rate().view().unwrap().budget,
        Some(budget),
        "unchanged by it"
    );
}
