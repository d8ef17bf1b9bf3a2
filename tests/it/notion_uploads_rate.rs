//! The writer's uploads (sizes, multi-part, placeholders) and the client's pacing against the Notion
//! test server: a 429 pauses every caller once, a long Retry-After is not capped, 3/s holds.

use crate::notion_support;

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use notebridge::notion::writer::{NewPage, Resource, Writer};
use notebridge_testkit::notion::uploads::content_hash;
use notebridge_testkit::notion::{NotionServer, NotionServerConfig};
use notion_support::*;

fn res(url: &str, name: &str, mime: Option<&str>) -> (String, Resource) {
    (
        url.to_owned(),
        Resource {
            url: url.to_owned(),
            file_name: name.to_owned(),
            mime: mime.map(str::to_owned),
            fallback: None,
        },
    )
}

#[tokio::test]
async fn uploads_of_0_b_5_mb_and_25_mb_arrive_whole_and_attached() {
    let s = fast_server(21).await;
    let root = s.add_shared_page("Files");
    let sizes: HashMap<String, usize> = [
        ("https://graph.example/r/empty/$value".to_owned(), 0),
        ("https://graph.example/r/five/$value".to_owned(), 5_000_000),
        ("https://graph.example/r/big/$value".to_owned(), 25_000_000),
    ]
    .into();
    let resources: HashMap<String, Resource> = [
        res(
            "https://graph.example/r/empty/$value",
            "empty.txt",
            Some("text/plain"),
        ),
        res(
            "https://graph.example/r/five/$value",
            "five.pdf",
            Some("application/pdf"),
        ),
        res(
            "https://graph.example/r/big/$value",
            "big.mp4",
            Some("video/mp4"),
        ),
    ]
    .into();
    let calls = Arc::new(AtomicUsize::new(0));
    let w = Writer::new(
        client(&s, 2000, 200),
        fetch(sizes.clone(), calls.clone()),
        5 * 1024 * 1024 * 1024,
    );
    let blocks = vec![
        para("three files"),
        media("file", "https://graph.example/r/empty/$value"),
        media("pdf", "https://graph.example/r/five/$value"),
        item(
            "nested",
            vec![media("file", "https://graph.example/r/big/$value")],
        ),
    ];
    let page = NewPage {
        parent: &root,
        title: "Files",
        blocks: &blocks,
        resources: &resources,
    };
    let (id, stats) = w
        .create_page(page, &HashSet::new(), false, &|_| {})
        .await
        .unwrap();
    assert_page(&s, &id, "Files", &blocks, &resources);
    assert_eq!(stats.files, 3);
    assert_eq!(stats.bytes, 30_000_000);
    assert!(stats.placeholders.is_empty());
    // each block's upload holds exactly the bytes fetched for it
    let dump = s.dump(&id).unwrap();
    let ids: Vec<String> = [
        &dump.children[1],
        &dump.children[2],
        &dump.children[3].children[0],
    ]
    .iter()
    .map(|n| {
        n.file
            .clone()
            .unwrap()
            .trim_start_matches("file_upload:")
            .to_owned()
    })
    .collect();
    for (upload, (url, name)) in ids.iter().zip([
        ("https://graph.example/r/empty/$value", "empty.txt"),
        ("https://graph.example/r/five/$value", "five.pdf"),
        ("https://graph.example/r/big/$value", "big.mp4"),
    ]) {
        let info = s.upload(upload).unwrap();
        let bytes = content(url, sizes[url]);
        assert_eq!(info.status, "uploaded");
        assert!(info.attached);
        assert_eq!(info.filename.as_deref(), Some(name));
        assert_eq!(info.content_length, Some(bytes.len() as u64));
        assert_eq!(info.hash.as_deref(), Some(content_hash(&bytes).as_str()));
    }
    // 25 MB went in three parts of at most 10 MiB, then a completion
    let log = s.request_log();
    let sends = log.iter().filter(|r| r.path.ends_with("/send")).count();
    let completes = log.iter().filter(|r| r.path.ends_with("/complete")).count();
    assert_eq!((sends, completes), (1 + 1 + 3, 1));
    assert_eq!(calls.load(Ordering::SeqCst), 3);
}

#[tokio::test]
async fn a_resource_that_cannot_be_carried_over_becomes_a_visible_placeholder() {
    let s = fast_server(22).await;
    let root = s.add_shared_page("Placeholders");
    let resources: HashMap<String, Resource> = [
        res(
            "https://graph.example/r/fail/$value",
            "lost.png",
            Some("image/png"),
        ),
        res(
            "https://graph.example/r/zip/$value",
            "archive.zip",
            Some("application/zip"),
        ),
        res(
            "https://graph.example/r/ok/$value",
            "image",
            Some("image/png"),
        ),
    ]
    .into();
    let calls = Arc::new(AtomicUsize::new(0));
    let w = Writer::new(
        client(&s, 2000, 200),
        fetch(HashMap::new(), calls.clone()),
        5 * 1024 * 1024 * 1024,
    );
    let blocks = vec![
        media("image", "https://graph.example/r/fail/$value"),
        item(
            "in a list",
            vec![media("file", "https://graph.example/r/zip/$value")],
        ),
        media("image", "https://graph.example/r/ok/$value"),
    ];
    let page = NewPage {
        parent: &root,
        title: "Placeholders",
        blocks: &blocks,
        resources: &resources,
    };
    let (id, stats) = w
        .create_page(page, &HashSet::new(), false, &|_| {})
        .await
        .unwrap();
    assert_page(&s, &id, "Placeholders", &blocks, &resources);
    let dump = s.dump(&id).unwrap();
    assert!(dump.children[0]
        .text
        .starts_with(&placeholder_text("lost.png")));
    assert!(dump.children[0]
        .text
        .contains("download failed: Graph answered 404"));
    assert!(dump.children[1].children[0]
        .text
        .contains("Notion does not accept this file type"));
    // the image OneNote gave no extension went up as image.png
    let up = dump.children[2].file.clone().unwrap();
    let info = s.upload(up.trim_start_matches("file_upload:")).unwrap();
    assert_eq!(info.filename.as_deref(), Some("image.png"));
    assert_eq!(stats.placeholders.len(), 2);
    assert!(stats.placeholders[0].starts_with("lost.png: "));
    assert!(stats.placeholders[1].starts_with("archive.zip: "));
    // the unsupported file was never downloaded: only lost.png and image were fetched
    assert_eq!(calls.load(Ordering::SeqCst), 2);
    assert_eq!(s.counters().validation_errors, 0);
}

#[tokio::test]
async fn a_429_pauses_every_caller_once_for_its_retry_after() {
    // Notion's real pace: 3/s with a small burst, on both sides
    let s = NotionServer::start(NotionServerConfig::default()).await;
    let c = client(&s, 3, 3);
    s.force_rate_limit_for(Duration::from_millis(1500));
    let start = Instant::now();
    let first = {
        let c = c.clone();
        tokio::spawn(async move {
            c.me().await.unwrap();
            Instant::now()
        })
    };
    // the others start once the first has been told to wait
    while c.counts().throttled == 0 {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let paused = c.rate().paused_for().unwrap();
    assert!(paused > Duration::from_millis(1500), "{paused:?}");
    let mut others = Vec::new();
    for _ in 0..4 {
        let c = c.clone();
        others.push(tokio::spawn(async move {
            c.me().await.unwrap();
            Instant::now()
        }));
    }
    let mut done = vec![first.await.unwrap()];
    for o in others {
        done.push(o.await.unwrap());
    }
    // Retry-After is whole seconds: 2 s from the 429
    for t in &done {
        assert!(*t - start >= Duration::from_secs(2), "{:?}", *t - start);
    }
    let counters = s.counters();
    assert_eq!(counters.rate_limited, 1, "nobody sent during the pause");
    assert_eq!(s.request_log().len(), 6);
    assert_eq!(c.counts().throttled, 1);
}

#[tokio::test]
async fn a_90_second_retry_after_is_honoured_in_full() {
    let s = NotionServer::start(NotionServerConfig::default()).await;
    let c = client(&s, 3, 3);
    s.force_rate_limit_for(Duration::from_secs(90));
    let task = {
        let c = c.clone();
        tokio::spawn(async move { c.me().await })
    };
    while c.counts().throttled == 0 {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    // the shared pause is the whole 90 s (the official SDKs would cap it at 60)
    let paused = c.rate().paused_for().unwrap();
    assert!(paused > Duration::from_secs(89), "{paused:?}");
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(s.request_log().len(), 1, "nothing sent during the pause");
    task.abort();
}

#[tokio::test]
async fn the_client_keeps_to_three_per_second_without_a_429() {
    let s = NotionServer::start(NotionServerConfig::default()).await;
    let c = client(&s, 3, 3);
    let start = Instant::now();
    let mut tasks = Vec::new();
    for _ in 0..12 {
        let c = c.clone();
        tasks.push(tokio::spawn(async move { c.me().await.unwrap() }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    let took = start.elapsed();
    // A burst of 3, then one every 333 ms: 9 intervals, never sooner (the schedule itself, to the
    // millisecond, is `the_pace_grants_a_burst_then_one_an_interval_on_the_paused_clock`'s).
    assert!(took >= Duration::from_millis(2900), "{took:?}");
    assert_eq!(s.counters().rate_limited, 0);
}

#[tokio::test(start_paused = true)]
async fn the_pace_grants_a_burst_then_one_an_interval_on_the_paused_clock() {
    use notebridge::clock::Clock;
    use notebridge::notion::pace::Mode;
    use notebridge::notion::rate::NotionRate;
    use notebridge::settings::Window;

    let db = notebridge::store::Db::open_in_memory().unwrap();
    let window = Window {
        count: 3,
        length: Duration::from_secs(1),
    };
    let mode = Mode::Fixed { window, burst: 3 };
    let rate = NotionRate::with_mode(Arc::new(db), "t", mode, Clock::anchored_at(0));
    let start = tokio::time::Instant::now();
    let mut at = Vec::new();
    for _ in 0..12 {
        let _grant = rate.acquire().await.unwrap();
        at.push(start.elapsed().as_millis());
    }
    // Three at once, then one every third of a second (the timer's resolution is a millisecond).
    for (i, t) in at.iter().enumerate() {
        let want = if i < 3 { 0 } else { (i as u128 - 2) * 1000 / 3 };
        assert!(
            (want..=want + 1).contains(t),
            "grant {i} at {t} ms, want {want}: {at:?}"
        );
    }
}
