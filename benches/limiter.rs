//! Limiter benchmark: prints three figures, one line each (quoted by the README's performance section).
//!
//! The Graph test server (src/testserver/graph.rs) had not landed when this was written, so the bench
//! drives the limiter against an in-process strict model of the service instead: sliding windows per
//! user and per app counted on arrival, rejected requests counted too (punitive), concurrency caps,
//! 429 without Retry-After, and an injectable Application-scope outage. Real time, short windows
//! (user 12/600ms,40/6s, app 24/600ms,80/6s). `NOTEBRIDGE_BENCH_REQUESTS` sets the request count of
//! the efficiency run (default 600).

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use notebridge::clock::{Clock, Jitter};
use notebridge::limiter::{Lane, Limiter, ThrottleScope};
use notebridge::settings::{parse_windows, GraphLimits, Window};
use notebridge::store::Db;
use tokio::time::Instant;

const USERS: [&str; 2] = ["alice", "bob"];

fn limits() -> GraphLimits {
    GraphLimits {
        user_windows: parse_windows("12/600ms,40/6s").unwrap(),
        user_concurrency: 5,
        app_windows: parse_windows("24/600ms,80/6s").unwrap(),
        app_concurrency: 20,
        background_share: 0.5,
    }
}

/// What the model answered.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Answer {
    Ok,
    Throttled(ThrottleScope),
}

/// A strict model of OneNote's throttling: never more lenient than the documented limits.
struct Service {
    limits: GraphLimits,
    start: Instant,
    state: Mutex<ServiceState>,
    latency: Duration,
}

#[derive(Default)]
struct ServiceState {
    arrivals: HashMap<Option<String>, VecDeque<Instant>>,
    in_flight: HashMap<Option<String>, u32>,
    outage: Option<(Instant, Instant)>,
    log: Vec<(Instant, bool)>,
    throttled: u32,
}

impl Service {
    fn new(limits: GraphLimits) -> Arc<Self> {
        Arc::new(Self {
            limits,
            start: Instant::now(),
            state: Mutex::new(ServiceState::default()),
            latency: Duration::from_millis(2),
        })
    }

    async fn call(&self, user: &str) -> Answer {
        let now = Instant::now();
        let keys = [Some(user.to_owned()), None];
        let answer = {
            let mut s = self.state.lock().unwrap();
            let mut over = None;
            for key in &keys {
                let (windows, cap) = match key {
                    Some(_) => (&self.limits.user_windows, self.limits.user_concurrency),
                    None => (&self.limits.app_windows, self.limits.app_concurrency),
                };
                let q = s.arrivals.entry(key.clone()).or_default();
                let longest = windows.iter().map(|w| w.length).max().unwrap();
                while q.front().is_some_and(|t| now.duration_since(*t) >= longest) {
                    q.pop_front();
                }
                // Punitive: the rejected request counts as well.
                q.push_back(now);
                let full = windows.iter().any(|w: &Window| {
                    q.iter()
                        .filter(|t| now.duration_since(**t) < w.length)
                        .count()
                        > w.count as usize
                });
                let busy = *s.in_flight.get(key).unwrap_or(&0) >= cap;
                if (full || busy) && over.is_none() {
                    over = Some(if key.is_some() {
                        ThrottleScope::User
                    } else {
                        ThrottleScope::Application
                    });
                }
            }
            if let Some((from, to)) = s.outage {
                if now >= from && now < to && over.is_none() {
                    over = Some(ThrottleScope::Application);
                }
            }
            s.log.push((now, over.is_none()));
            match over {
                Some(scope) => {
                    s.throttled += 1;
                    Answer::Throttled(scope)
                }
                None => {
                    for key in &keys {
                        *s.in_flight.entry(key.clone()).or_default() += 1;
                    }
                    Answer::Ok
                }
            }
        };
        tokio::time::sleep(self.latency).await;
        if answer == Answer::Ok {
            let mut s = self.state.lock().unwrap();
            for key in &keys {
                *s.in_flight.get_mut(key).unwrap() -= 1;
            }
        }
        answer
    }
}

fn open_limiter(dir: &tempfile::TempDir, name: &str) -> Limiter {
    let db = Arc::new(Db::open(&dir.path().join(name)).unwrap());
    Limiter::open(db, limits(), Clock::system(), Jitter::from_entropy()).unwrap()
}

/// One request through limiter and model; the 429 carries no Retry-After (OneNote sends none).
async fn send(l: &Limiter, svc: &Service, user: &str, lane: Lane) -> (Instant, Answer) {
    let p = l.acquire(user, lane).await.unwrap();
    let at = Instant::now();
    let a = svc.call(user).await;
    match a {
        Answer::Ok => p.succeeded(None),
        Answer::Throttled(scope) => p.throttled(scope, None),
    }
    (at, a)
}

/// The earliest schedule the windows allow for `per_user` requests of each user, zero latency.
fn ideal_makespan_ms(lim: &GraphLimits, per_user: usize) -> i64 {
    let mut left = vec![per_user; USERS.len()];
    let mut times: Vec<Vec<i64>> = vec![Vec::new(); USERS.len()];
    let mut all: Vec<i64> = Vec::new();
    let room = |ts: &[i64], ws: &[Window], t: i64| {
        ws.iter().all(|w| {
            let len = w.length.as_millis() as i64;
            ts.iter().filter(|&&x| x > t - len).count() < w.count as usize
        })
    };
    let mut t = 0i64;
    let mut last = 0;
    while left.iter().any(|&n| n > 0) {
        let mut sent = false;
        for u in 0..USERS.len() {
            if left[u] > 0
                && room(&times[u], &lim.user_windows, t)
                && room(&all, &lim.app_windows, t)
            {
                times[u].push(t);
                all.push(t);
                left[u] -= 1;
                last = t;
                sent = true;
            }
        }
        if !sent {
            t += 1;
        }
    }
    last
}

async fn efficiency(n: usize) {
    let dir = tempfile::tempdir().unwrap();
    let l = open_limiter(&dir, "eff.db");
    let svc = Service::new(limits());
    let per_user = n / USERS.len();
    let mut tasks = Vec::new();
    for user in USERS {
        let remaining = Arc::new(Mutex::new(per_user));
        for _ in 0..5 {
            let (l, svc, remaining) = (l.clone(), svc.clone(), remaining.clone());
            tasks.push(tokio::spawn(async move {
                let mut out = Vec::new();
                loop {
                    {
                        let mut r = remaining.lock().unwrap();
                        if *r == 0 {
                            return out;
                        }
                        *r -= 1;
                    }
                    out.push(send(&l, &svc, user, Lane::Foreground).await);
                }
            }));
        }
    }
    let mut sends = Vec::new();
    for t in tasks {
        sends.extend(t.await.unwrap());
    }
    let first = sends.iter().map(|s| s.0).min().unwrap();
    let last = sends.iter().map(|s| s.0).max().unwrap();
    let actual = last.duration_since(first).as_millis() as f64;
    let ideal = ideal_makespan_ms(&limits(), per_user) as f64;
    let throttled = svc.state.lock().unwrap().throttled;
    println!(
        "efficiency: {n} requests, 2 users: ideal makespan {:.2} s / actual {:.2} s = {:.3} (target >= 0.95), 429s from the service: {throttled} (target 0)",
        ideal / 1000.0,
        actual / 1000.0,
        ideal / actual
    );
}

async fn spiral() {
    let dir = tempfile::tempdir().unwrap();
    let l = open_limiter(&dir, "spiral.db");
    let svc = Service::new(limits());
    // Start it in the steady state, after the first 6 s window has filled and begun to slide.
    let from = svc.start + Duration::from_secs(7);
    let to = from + Duration::from_secs(5);
    svc.state.lock().unwrap().outage = Some((from, to));
    let end = to + Duration::from_secs(4);
    let mut tasks = Vec::new();
    // A queue of 40 background workers (a migration) for two users.
    for w in 0..40 {
        let (l, svc) = (l.clone(), svc.clone());
        tasks.push(tokio::spawn(async move {
            while Instant::now() < end {
                send(&l, &svc, USERS[w % 2], Lane::Background).await;
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    let log = svc.state.lock().unwrap().log.clone();
    let during = log.iter().filter(|(t, _)| *t >= from && *t < to).count();
    if std::env::var_os("NOTEBRIDGE_BENCH_VERBOSE").is_some() {
        for (t, ok) in log
            .iter()
            .filter(|(t, _)| *t >= from && *t < to + Duration::from_secs(1))
        {
            eprintln!(
                "  {:>6} ms {}",
                t.duration_since(from).as_millis(),
                if *ok { "ok" } else { "429" }
            );
        }
    }
    let next_ok = log
        .iter()
        .find(|(t, ok)| *t >= to && *ok)
        .map(|(t, _)| t.duration_since(to));
    let first_cooldown_ms = 60.0; // a tenth of the app's shortest window (600 ms), before jitter
    let bound = 1.0 + 5000.0 / first_cooldown_ms;
    let snap = l.snapshot().unwrap();
    println!(
        "spiral: 5 s Application-scope outage: {during} requests sent during it (target <= {bound:.0}); \
         first success {} ms after its end (the cooldown in effect then was at most {} ms; breakers now: {})",
        next_ok.map(|d| d.as_millis().to_string()).unwrap_or("none".into()),
        // Cooldowns double from 60 ms: 60+120+...+1920 = 3780 ms < 5 s < 7620 ms, so the one in
        // effect at the end is the 3840 ms step (+ up to 25 % jitter).
        3840 * 5 / 4,
        serde_json::to_string(&snap.scopes.iter().map(|s| &s.breaker).collect::<Vec<_>>()).unwrap()
    );
}

async fn fg_stream(l: &Limiter, svc: &Service, n: usize) -> f64 {
    let mut waits = Vec::new();
    for _ in 0..n {
        tokio::time::sleep(Duration::from_millis(350)).await;
        let asked = Instant::now();
        let (at, _) = send(l, svc, "alice", Lane::Foreground).await;
        waits.push(at.duration_since(asked).as_secs_f64() * 1000.0);
    }
    waits.iter().sum::<f64>() / waits.len() as f64
}

async fn lanes() {
    let n = 20;
    let dir = tempfile::tempdir().unwrap();
    let alone = {
        let l = open_limiter(&dir, "alone.db");
        let svc = Service::new(limits());
        fg_stream(&l, &svc, n).await
    };
    let l = open_limiter(&dir, "busy.db");
    let svc = Service::new(limits());
    let stop = Instant::now() + Duration::from_millis(350 * n as u64 + 500);
    let mut bg = Vec::new();
    for w in 0..20 {
        let (l, svc) = (l.clone(), svc.clone());
        bg.push(tokio::spawn(async move {
            while Instant::now() < stop {
                send(&l, &svc, USERS[w % 2], Lane::Background).await;
            }
        }));
    }
    let busy = fg_stream(&l, &svc, n).await;
    for t in bg {
        t.await.unwrap();
    }
    let throttled = svc.state.lock().unwrap().throttled;
    println!(
        "lanes: foreground mean wait {busy:.2} ms while background saturates vs {alone:.2} ms alone = {:.2}x (target <= 1.25x; both are limiter bookkeeping, no throttle wait), 429s: {throttled}",
        busy / alone
    );
}

fn main() {
    // `cargo bench` passes `--bench`; nothing else to parse.
    let n: usize = std::env::var("NOTEBRIDGE_BENCH_REQUESTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(600);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        efficiency(n).await;
        spiral().await;
        lanes().await;
    });
}
