//! Listings as the real service answers them: newest first by default with the owner editing
//! meanwhile, 504s on heavy listings of big sections, `$batch` answered 424 with throttled inner
//! requests, a hierarchy request too heavy for the service, and failing `$batch` envelopes.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use notebridge::clock::{Clock, Jitter};
use notebridge::graph::batch::BatchGet;
use notebridge::graph::model::{Page as Slice, PageMeta};
use notebridge::graph::scan::{scan, ScanProgress};
use notebridge::graph::{Caller, GraphClient};
use notebridge::limiter::Lane;
use notebridge::store::inventory::totals;
use notebridge::store::Db;
use notebridge_testkit::generator::{generate, NotebookSpec};
use notebridge_testkit::lab::{expected_inventory, Lab, LabConfig};

struct Setup {
    lab: Lab,
    _dir: tempfile::TempDir,
    graph: GraphClient,
    who: Caller,
}

async fn setup(spec: NotebookSpec) -> Setup {
    setup_with(LabConfig::default(), spec).await
}

async fn setup_with(config: LabConfig, spec: NotebookSpec) -> Setup {
    let lab = Lab::start(config).await;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state.db");
    let db = Arc::new(Db::open(&path).unwrap());
    let user = lab.add_user("alice", generate(&spec));
    lab.sign_in(&db, "alice", &user);
    let graph = GraphClient::open(
        db.clone(),
        &lab.settings(&path),
        Clock::system(),
        Jitter::seeded(1),
    )
    .unwrap()
    .with_backoff_base(Duration::from_millis(10));
    let who = Caller::for_account(&db, "alice", Lane::Foreground).unwrap();
    Setup {
        lab,
        _dir: dir,
        graph,
        who,
    }
}

fn big_section(pages: usize) -> NotebookSpec {
    NotebookSpec {
        sections_per_container: 1,
        pages_per_section: pages,
        images_per_page: 0,
        subpage_ratio: 0.2,
        seed: 5,
        ..NotebookSpec::default()
    }
}

/// Asserts the scan found exactly the pages the server holds now, each once, in OneNote's order.
async fn assert_complete_scan(s: &Setup) {
    let r = scan(&s.graph, &s.who, &[], Arc::new(ScanProgress::default()))
        .await
        .unwrap();
    assert!(r.failures.is_empty(), "{:?}", r.failures);
    let want = expected_inventory(&s.lab.graph.notes(&s.who.user_id));
    let ids = |nbs: &[notebridge::store::inventory::Notebook]| -> Vec<String> {
        nbs.iter()
            .flat_map(|n| n.sections.iter())
            .flat_map(|s| s.pages.iter().map(|p| p.id.clone()))
            .collect()
    };
    assert_eq!(ids(&r.notebooks), ids(&want), "every page once, in order");
    assert_eq!(totals(&r.notebooks).pages, totals(&want).pages);
}

#[tokio::test]
async fn the_default_order_loses_pages_edited_during_a_listing() {
    // The switch itself: newest-first `$skip` paging of a section edited meanwhile misses pages.
    let s = setup(big_section(250)).await;
    let section = s.lab.graph.notes(&s.who.user_id).sections[0].id.clone();
    s.lab.graph.faults().edit_during_listings(3);
    let naive: Vec<PageMeta> = s
        .graph
        .get_all(
            &s.who,
            &format!("me/onenote/sections/{section}/pages?pagelevel=true&$top=100"),
            100,
            "the section",
        )
        .await
        .unwrap();
    let unique: HashSet<&str> = naive.iter().map(|m| m.id.as_str()).collect();
    assert!(
        unique.len() < 250,
        "an edit moved a page across the slices: {} of 250 listed",
        unique.len()
    );
}

#[tokio::test]
async fn scans_in_onenote_order_lose_no_page_edited_during_the_listing() {
    let s = setup(big_section(250)).await;
    s.lab.graph.faults().edit_during_listings(3);
    assert_complete_scan(&s).await;
    let listings: Vec<String> = s
        .lab
        .graph
        .log()
        .into_iter()
        .filter(|e| e.path.contains("/pages?"))
        .map(|e| e.path)
        .collect();
    assert!(
        listings
            .iter()
            .all(|p| p.contains("orderby=order") && p.contains("select=")),
        "{listings:?}"
    );
}

#[tokio::test]
async fn a_big_section_that_times_out_is_listed_in_smaller_slices() {
    let s = setup(big_section(220)).await;
    s.lab.graph.faults().heavy_listings_time_out(200, 25);
    assert_complete_scan(&s).await;
    let log = s.lab.graph.log();
    assert!(
        log.iter().any(|e| e.status == 504),
        "the heavy listing timed out"
    );
    assert!(
        log.iter().any(
            |e| e.status == 200 && (e.path.contains("%24top=25") || e.path.contains("$top=25"))
        ),
        "then it was listed 25 at a time"
    );
}

#[tokio::test]
async fn batches_answered_424_are_read_for_their_inner_responses() {
    let s = setup(NotebookSpec {
        sections_per_container: 30,
        pages_per_section: 2,
        images_per_page: 0,
        seed: 9,
        ..NotebookSpec::default()
    })
    .await;
    let f = s.lab.graph.faults();
    f.batch_424_on_throttle(true);
    f.batch_inner_failures(0.3, &[429]);
    assert_complete_scan(&s).await;
    assert!(
        s.lab.graph.log().iter().any(|e| e.status == 424),
        "some batch was answered 424"
    );
    assert!(
        s.graph.counts().throttled > 0,
        "the inner 429s reached the limiter"
    );
}

#[tokio::test]
async fn the_hierarchy_falls_back_to_level_by_level_when_it_keeps_failing() {
    let s = setup(NotebookSpec {
        notebooks: 2,
        section_groups_depth: 2,
        section_groups_per_container: 1,
        sections_per_container: 2,
        pages_per_section: 2,
        images_per_page: 0,
        seed: 13,
        ..NotebookSpec::default()
    })
    .await;
    // Every attempt at the one-request hierarchy answers 504.
    s.lab.graph.faults().fail_next(6, 504);
    assert_complete_scan(&s).await;
}

#[tokio::test]
async fn a_failing_envelope_spends_only_its_own_requests_budget() {
    let s = setup(NotebookSpec {
        sections_per_container: 20,
        pages_per_section: 1,
        images_per_page: 0,
        seed: 17,
        ..NotebookSpec::default()
    })
    .await;
    let gets: Vec<BatchGet> = s
        .lab
        .graph
        .notes(&s.who.user_id)
        .sections
        .iter()
        .map(|sec| BatchGet {
            url: format!("me/onenote/sections/{}/pages", sec.id),
            item: sec.id.clone(),
        })
        .collect();
    // The first five envelopes fail: one envelope's requests spend their retries (four each, as
    // every request's), no others.
    s.lab.graph.faults().fail_next(5, 502);
    let results = s.graph.batch_get(&s.who, &gets).await.unwrap();
    let failed = results.iter().filter(|r| r.is_err()).count();
    assert!(
        (1..=5).contains(&failed),
        "the requests of one envelope of at most 5 gave up, no others: {failed}"
    );
    for r in results.iter().filter_map(|r| r.as_ref().ok()) {
        let slice: Slice<PageMeta> = serde_json::from_slice(r).unwrap();
        assert_eq!(slice.value.len(), 1);
    }
    assert!(results.len() - failed >= 15);
}

#[tokio::test]
async fn the_access_token_goes_to_microsoft_graph_hosts_only() {
    use axum::http::HeaderMap;
    use std::sync::atomic::{AtomicU32, Ordering};
    let s = setup(big_section(1)).await;
    // Another host (the loopback address the Graph test server does not use), counting hits.
    let hits = Arc::new(AtomicU32::new(0));
    let h = hits.clone();
    let app = axum::Router::new().fallback(move |_: HeaderMap| {
        let h = h.clone();
        async move {
            h.fetch_add(1, Ordering::SeqCst);
            "x"
        }
    });
    let l = tokio::net::TcpListener::bind("127.0.0.2:0").await.unwrap();
    let other = format!(
        "http://{}/v1.0/me/onenote/resources/r/content",
        l.local_addr().unwrap()
    );
    tokio::spawn(async move {
        let _ = axum::serve(l, app).await;
    });
    let e = s
        .graph
        .get_bytes(&s.who, &other, "file \"x.png\"", 1 << 20)
        .await
        .unwrap_err();
    assert!(
        matches!(e, notebridge::graph::GraphError::ForeignHost { .. }) && e.is_item_failure(),
        "{e:?}"
    );
    assert!(
        e.to_string().contains("refused to send the access token"),
        "{e}"
    );
    assert_eq!(hits.load(Ordering::SeqCst), 0, "nothing was sent there");
    assert!(s
        .graph
        .may_carry_token("https://graph.microsoft.com/v1.0/me/onenote/pages"));
    assert!(s
        .graph
        .may_carry_token("https://graph.microsoft.us/v1.0/me"));
    assert!(!s
        .graph
        .may_carry_token("http://graph.microsoft.com/v1.0/me"));
    assert!(!s
        .graph
        .may_carry_token("https://graph.microsoft.com.evil.example/v1.0/me"));
    assert!(!s
        .graph
        .may_carry_token("https://evil.example/?u=https://graph.microsoft.com"));
    assert!(s.graph.may_carry_token(&format!("{}/me", s.graph.base())));
}

#[tokio::test]
async fn without_hint_headers_scans_keep_within_the_limits_and_ride_out_a_throttle() {
    use notebridge_testkit::graph::faults::ExternalScope;
    let s = setup_with(
        LabConfig {
            hint_headers: false,
            ..LabConfig::default()
        },
        NotebookSpec {
            sections_per_container: 45,
            pages_per_section: 1,
            images_per_page: 0,
            seed: 19,
            ..NotebookSpec::default()
        },
    )
    .await;
    // 46 requests against 40 per 6 s: the limiter must wait from its own model, no header helps.
    assert_complete_scan(&s).await;
    assert_eq!(s.lab.graph.counters().throttled, 0, "no 429 without hints");
    // A throttle from elsewhere, answered with bare 429s (no scope, no Retry-After).
    s.lab.graph.faults().throttle_externally(
        ExternalScope::User(s.who.user_id.clone()),
        Duration::from_secs(1),
    );
    assert_complete_scan(&s).await;
    assert!(
        s.lab.graph.counters().throttled >= 1,
        "the second scan met the throttle and still completed"
    );
}

#[tokio::test]
async fn requests_for_one_item_spend_its_one_retry_count() {
    use notebridge::failure::{Classify, Retries, ITEM_RETRIES};
    use notebridge::graph::GraphError;
    let s = setup(big_section(1)).await;
    let path = "me/onenote/notebooks";
    // The item's earlier attempts spent three of its four retries: one is left for its requests.
    let item = Retries::new(ITEM_RETRIES, 3);
    let who = s.who.clone().for_item(item.clone());
    s.lab.graph.faults().fail_next(3, 503);
    let e = s
        .graph
        .get_json::<serde_json::Value>(&who, path, "the notebooks")
        .await
        .unwrap_err();
    match &e {
        GraphError::GaveUp {
            attempts, retries, ..
        } => assert_eq!((*attempts, *retries), (2, 1), "{e}"),
        other => panic!("gave up, not {other:?}"),
    }
    assert_eq!(e.retries(), 1, "what the queue adds to its own");
    assert_eq!((item.here(), item.spent()), (1, 4));
    // The third failure is still due; a request of its own has the whole count for it.
    s.graph
        .get_json::<serde_json::Value>(&s.who, path, "the notebooks")
        .await
        .unwrap();
}
