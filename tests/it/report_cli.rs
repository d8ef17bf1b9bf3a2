//! `notebridge report` on a finished test migration: the file is written from the state alone, its
//! charts have a point per finished page and a bar per hour of Graph requests, and a real headless
//! browser (Chromium, where installed; skipped saying so otherwise) renders it without fetching
//! anything: every request the browser would make goes to a proxy that counts connections.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use crate::migrate_support::{notebridge, State};
use notebridge::store::Db;
use notebridge_testkit::generator::{generate, NotebookSpec};
use notebridge_testkit::lab::{Lab, LabConfig};

fn fast() -> LabConfig {
    LabConfig {
        user_windows: "60/600ms,600/6s".into(),
        app_windows: "120/600ms,1200/6s".into(),
        notion_per_second: 150,
        ..LabConfig::default()
    }
}

fn chromium() -> Option<PathBuf> {
    [
        "/usr/bin/chromium",
        "/usr/bin/chromium-browser",
        "/usr/bin/google-chrome",
    ]
    .iter()
    .map(PathBuf::from)
    .find(|p| p.exists())
}

/// Hosts of Chromium's own background services (time, updates, accounts), which it contacts whatever
/// the page, even with background networking off; anything else came from the page.
const BROWSER_OWN: [&str; 4] = ["google.com", "googleapis.com", "gvt1.com", "gstatic.com"];

/// Runs headless Chromium on `file` with every network request sent to a recording proxy; returns
/// (the rendered DOM, the request lines that did not come from Chromium's own services).
fn render_in_browser(browser: &Path, file: &Path, extra: &[String]) -> (String, Vec<String>) {
    let proxy = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = proxy.local_addr().unwrap().port();
    proxy.set_nonblocking(true).unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let stop = Arc::new(AtomicBool::new(false));
    let watcher = {
        let (seen, stop) = (seen.clone(), stop.clone());
        std::thread::spawn(move || {
            while !stop.load(Ordering::SeqCst) {
                if let Ok((mut c, _)) = proxy.accept() {
                    c.set_nonblocking(false).unwrap();
                    c.set_read_timeout(Some(std::time::Duration::from_secs(1)))
                        .unwrap();
                    let mut buf = [0u8; 512];
                    let n = c.read(&mut buf).unwrap_or(0);
                    let line = String::from_utf8_lossy(&buf[..n])
                        .lines()
                        .next()
                        .unwrap_or("")
                        .to_owned();
                    seen.lock().unwrap().push(line);
                }
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
        })
    };
    let profile = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-extensions",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg(format!("--proxy-server=http://127.0.0.1:{port}"))
        .arg("--proxy-bypass-list=<-loopback>")
        .args(extra)
        .arg(format!("file://{}", file.display()))
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    stop.store(true, Ordering::SeqCst);
    watcher.join().unwrap();
    assert!(
        out.status.success(),
        "chromium: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let from_page = seen
        .lock()
        .unwrap()
        .iter()
        .filter(|line| {
            let host = line.split_whitespace().nth(1).unwrap_or("");
            let host = host
                .trim_start_matches("http://")
                .trim_start_matches("https://");
            let host = host.split(['/', ':']).next().unwrap_or("");
            !BROWSER_OWN
                .iter()
                .any(|own| host == *own || host.ends_with(&format!(".{own}")))
        })
        .cloned()
        .collect();
    (String::from_utf8_lossy(&out.stdout).into_owned(), from_page)
}

/// The `points` of the pages chart's polyline, counted as coordinate pairs.
fn polyline_points(dom: &str) -> usize {
    let Some(start) = dom.find("<polyline") else {
        return 0;
    };
    let rest = &dom[start..];
    let p = rest.find("points=\"").expect("points") + 8;
    let end = rest[p..].find('"').unwrap();
    rest[p..p + end].split_whitespace().count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_finished_migration_reports_itself_and_renders_offline() {
    let lab = Lab::start(fast()).await;
    let spec = NotebookSpec {
        total_pages: Some(12),
        pages_per_section: 0,
        images_per_page: 1,
        seed: 31,
        ..NotebookSpec::default()
    };
    let user = lab.add_user("alice", generate(&spec));
    let state = State::new();
    lab.sign_in(&Db::open(&state.db).unwrap(), "alice", &user);

    let (code, _, err) = notebridge(
        &lab,
        &state,
        &["migrate", "--account", "alice", "--to", &lab.target_page],
    )
    .await;
    assert_eq!(code, 0, "{err}");
    let (code, _, err) = notebridge(&lab, &state, &["verify"]).await;
    assert_eq!(code, 0, "{err}");

    let file = state.dir.path().join("report.html");
    let before = (lab.graph.counters().total, lab.notion.request_log().len());
    let (code, out, err) = notebridge(
        &lab,
        &state,
        &["report", "--output", file.to_str().unwrap()],
    )
    .await;
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("report.html"), "{out}");
    assert_eq!(
        (lab.graph.counters().total, lab.notion.request_log().len()),
        before,
        "the report reads the state only"
    );
    let html = std::fs::read_to_string(&file).unwrap();

    let db = Db::open(&state.db).unwrap();
    let done = db.page_completions("alice").unwrap().len();
    assert_eq!(done, 12);
    assert!(html.contains(&format!("data-chart=\"pages\" data-points=\"{done}\"")));
    let hours = db
        .graph_requests_per_hour(&db.account("alice").unwrap().unwrap().user_id)
        .unwrap();
    assert!(!hours.is_empty());
    assert_eq!(
        hours.iter().map(|h| h.requests).sum::<u64>(),
        lab.graph.counters().per_user[&user.id] - lab.graph.counters().batches,
        "every Graph request the server saw is in the chart (a $batch envelope is its inner requests)"
    );
    assert!(html.contains(&format!(
        "data-chart=\"requests\" data-points=\"{}\"",
        hours.len()
    )));
    assert!(html.contains("read back from Notion by <code>notebridge verify</code>"));
    assert!(html.contains("<b>12</b> pages in OneNote"));
    assert!(html.contains("<b>12</b> complete"));

    let Some(browser) = chromium() else {
        eprintln!("report in a browser: skipped: no Chromium installed");
        return;
    };
    let (dom, fetched) = render_in_browser(&browser, &file, &["--dump-dom".to_owned()]);
    assert!(fetched.is_empty(), "the report fetched {fetched:?}");
    assert!(dom.contains("migration report"), "{dom}");
    assert_eq!(polyline_points(&dom), done, "a point per finished page");
    assert_eq!(dom.matches("class=\"bar\"").count(), hours.len());

    // a phone-sized screenshot renders
    let shot = state.dir.path().join("report.png");
    let (_, fetched) = render_in_browser(
        &browser,
        &file,
        &[
            format!("--screenshot={}", shot.display()),
            "--window-size=390,1400".to_owned(),
        ],
    );
    assert!(fetched.is_empty(), "the report fetched {fetched:?}");
    let png = std::fs::read(&shot).unwrap();
    assert!(png.starts_with(b"\x89PNG") && png.len() > 5_000);
    if let Ok(dest) = std::env::var("NOTEBRIDGE_REPORT_SCREENSHOT") {
        std::fs::copy(&shot, dest).unwrap();
    }
}
