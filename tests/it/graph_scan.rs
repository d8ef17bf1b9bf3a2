//! The Graph client and the scan against the Graph test server: paging, nesting, re-scans, `$batch`
//! with inner failures, concurrency within the caps, a 401 mid-scan, and the incident-size notebook.

use std::sync::Arc;
use std::time::Duration;

use notebridge::clock::{Clock, Jitter};
use notebridge::graph::scan::{scan, ScanProgress};
use notebridge::graph::{Caller, GraphClient};
use notebridge::limiter::Lane;
use notebridge::store::inventory::{totals, ScanScope};
use notebridge::store::Db;
use notebridge_testkit::generator::{generate, NotebookSpec};
use notebridge_testkit::lab::{expected_inventory, Lab, LabConfig};

struct Setup {
    lab: Lab,
    _dir: tempfile::TempDir,
    db: Arc<Db>,
    graph: GraphClient,
    who: Caller,
}

async fn setup(config: LabConfig, spec: NotebookSpec) -> Setup {
    let lab = Lab::start(config).await;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state.db");
    let db = Arc::new(Db::open(&path).unwrap());
    let user = lab.add_user("alice", generate(&spec));
    lab.sign_in(&db, "alice", &user);
    let settings = lab.settings(&path);
    let graph = GraphClient::open(db.clone(), &settings, Clock::system(), Jitter::seeded(1))
        .unwrap()
        .with_backoff_base(Duration::from_millis(20));
    let who = Caller::for_account(&db, "alice", Lane::Foreground).unwrap();
    Setup {
        lab,
        _dir: dir,
        db,
        graph,
        who,
    }
}

fn nested_spec() -> NotebookSpec {
    NotebookSpec {
        notebooks: 2,
        section_groups_depth: 3,
        section_groups_per_container: 1,
        sections_per_container: 2,
        pages_per_section: 3,
        images_per_page: 0,
        seed: 11,
        ..NotebookSpec::default()
    }
}

#[tokio::test]
async fn scan_matches_the_generated_notebooks_exactly() {
    let s = setup(LabConfig::default(), nested_spec()).await;
    let r = scan(&s.graph, &s.who, &[], Arc::new(ScanProgress::default()))
        .await
        .unwrap();
    assert!(r.failures.is_empty(), "{:?}", r.failures);
    let expected = expected_inventory(&s.lab.graph.notes(&s.who.user_id));
    // three levels of section groups
    assert!(
        expected[0].section_groups[0].section_groups[0]
            .section_groups
            .len()
            == 1
    );
    assert_eq!(r.notebooks.len(), expected.len());
    for (got, want) in r.notebooks.iter().zip(&expected) {
        assert_eq!(
            serde_json::to_value(got).unwrap(),
            serde_json::to_value(want).unwrap()
        );
    }
    assert_eq!(s.lab.graph.counters().throttled, 0);
}

#[tokio::test]
async fn big_sections_are_paged_and_empty_ones_kept() {
    let spec = NotebookSpec {
        sections_per_container: 2,
        pages_per_section: 230,
        images_per_page: 0,
        subpage_ratio: 0.0,
        seed: 3,
        ..NotebookSpec::default()
    };
    let s = setup(LabConfig::default(), spec).await;
    // an empty section and an empty notebook
    s.lab.graph.mutate(&s.who.user_id, |n| {
        let sec = n.sections[1].id.clone();
        n.pages.retain(|p| p.section_id != sec);
    });
    let r = scan(&s.graph, &s.who, &[], Arc::new(ScanProgress::default()))
        .await
        .unwrap();
    let t = totals(&r.notebooks);
    assert_eq!((t.sections, t.pages), (2, 230));
    let counts: Vec<usize> = r.notebooks[0]
        .sections
        .iter()
        .map(|s| s.pages.len())
        .collect();
    assert!(counts.contains(&0) && counts.contains(&230), "{counts:?}");
    let orders: Vec<i64> = r.notebooks[0]
        .sections
        .iter()
        .flat_map(|s| s.pages.iter().map(|p| p.order))
        .collect();
    assert!(
        orders.windows(2).all(|w| w[0] < w[1]),
        "pages in OneNote order"
    );
}

#[tokio::test]
async fn rescan_recognises_renamed_moved_and_deleted_items() {
    let s = setup(LabConfig::default(), nested_spec()).await;
    let r = scan(&s.graph, &s.who, &[], Arc::new(ScanProgress::default()))
        .await
        .unwrap();
    s.db.save_scan("alice", &r.notebooks, &ScanScope::All, 1)
        .unwrap();
    let (renamed, moved, deleted) = s.lab.graph.mutate(&s.who.user_id, |n| {
        let p0 = n.pages[0].id.clone();
        let p1 = n.pages[1].id.clone();
        let p2 = n.pages[2].id.clone();
        let other = n
            .sections
            .iter()
            .find(|s| s.id != n.pages[1].section_id)
            .unwrap()
            .id
            .clone();
        n.rename_page("alice", &p0, "Renamed page").unwrap();
        n.move_page("alice", &p1, &other).unwrap();
        n.delete_page("alice", &p2).unwrap();
        (p0, p1, p2)
    });
    let r2 = scan(&s.graph, &s.who, &[], Arc::new(ScanProgress::default()))
        .await
        .unwrap();
    let diff =
        s.db.save_scan("alice", &r2.notebooks, &ScanScope::All, 2)
            .unwrap();
    assert_eq!(
        (diff.renamed, diff.moved, diff.deleted, diff.new),
        (1, 1, 1, 0)
    );
    let inv = s.db.inventory("alice").unwrap();
    let json = serde_json::to_string(&inv).unwrap();
    assert!(json.contains("Renamed page") && json.contains(&renamed) && json.contains(&moved));
    assert!(!json.contains(&deleted));
}

#[tokio::test]
async fn inner_batch_failures_lose_nothing() {
    let spec = NotebookSpec {
        sections_per_container: 30,
        pages_per_section: 2,
        images_per_page: 0,
        seed: 5,
        ..NotebookSpec::default()
    };
    let config = LabConfig {
        user_windows: "1000/600ms".into(),
        app_windows: "2000/600ms".into(),
        ..LabConfig::default()
    };
    let s = setup(config, spec).await;
    s.lab
        .graph
        .faults()
        .batch_inner_failures(0.2, &[429, 502, 503, 504]);
    let r = scan(&s.graph, &s.who, &[], Arc::new(ScanProgress::default()))
        .await
        .unwrap();
    assert!(r.failures.is_empty(), "{:?}", r.failures);
    assert_eq!(totals(&r.notebooks).pages, 60);
    let expected = expected_inventory(&s.lab.graph.notes(&s.who.user_id));
    assert_eq!(
        serde_json::to_value(&r.notebooks).unwrap(),
        serde_json::to_value(&expected).unwrap()
    );
    let c = s.lab.graph.counters();
    assert!(c.batches > 0, "sections were listed through $batch");
    assert!(
        s.graph.counts().retries + s.graph.counts().throttled > 0,
        "faults were injected"
    );
    // the batches never held more inner requests than the caps allow
    assert!(c.peak_user_concurrency.values().all(|p| *p <= 5), "{c:?}");
    assert!(c.peak_app_concurrency <= 20, "{c:?}");
}

#[tokio::test]
async fn a_401_mid_scan_refreshes_and_continues() {
    let s = setup(LabConfig::default(), nested_spec()).await;
    s.lab.graph.faults().unauthorized_next(1);
    let r = scan(&s.graph, &s.who, &[], Arc::new(ScanProgress::default()))
        .await
        .unwrap();
    assert!(r.failures.is_empty());
    assert_eq!(
        totals(&r.notebooks).pages,
        totals(&expected_inventory(&s.lab.graph.notes(&s.who.user_id))).pages
    );
    assert!(
        s.lab.auth.counters().refreshes >= 2,
        "first token, then the refresh after 401"
    );
}

#[tokio::test]
async fn transient_failures_are_retried_and_a_gone_list_names_the_account() {
    let s = setup(LabConfig::default(), nested_spec()).await;
    s.lab.graph.faults().fail_next(2, 503);
    let r = scan(&s.graph, &s.who, &[], Arc::new(ScanProgress::default()))
        .await
        .unwrap();
    assert!(r.failures.is_empty());
    assert_eq!(s.graph.counts().retries, 2);
    s.lab.graph.faults().fail_next(1, 404);
    let e = scan(&s.graph, &s.who, &[], Arc::new(ScanProgress::default()))
        .await
        .unwrap_err();
    let text = e.to_string();
    assert!(
        text.contains("alice") && text.contains("notebook list") && text.contains("404"),
        "{text}"
    );
}

#[tokio::test]
async fn failures_of_whole_batches_and_single_requests_lose_nothing() {
    let spec = NotebookSpec {
        sections_per_container: 12,
        pages_per_section: 2,
        images_per_page: 0,
        seed: 9,
        ..NotebookSpec::default()
    };
    let config = LabConfig {
        user_windows: "1000/600ms".into(),
        app_windows: "2000/600ms".into(),
        ..LabConfig::default()
    };
    let s = setup(config, spec).await;
    // a third of all answers, `$batch` envelopes included, are 502/503
    s.lab.graph.faults().fail_ratio(0.33, &[502, 503]);
    let r = scan(&s.graph, &s.who, &[], Arc::new(ScanProgress::default()))
        .await
        .unwrap();
    assert!(r.failures.is_empty(), "{:?}", r.failures);
    let expected = expected_inventory(&s.lab.graph.notes(&s.who.user_id));
    assert_eq!(
        serde_json::to_value(&r.notebooks).unwrap(),
        serde_json::to_value(&expected).unwrap()
    );
    assert!(s.graph.counts().retries > 0);
}
