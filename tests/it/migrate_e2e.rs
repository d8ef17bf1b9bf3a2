//! End to end: the real binary migrates generated notebooks from the Graph test server into the
//! Notion test server, and the Notion tree is checked page by page against the source.

use crate::engine_migrate::named;
use crate::migrate_support;

use std::time::Duration;

use crate::bin_support::Start;
use migrate_support::{
    assert_mirrors, assert_mirrors_at, command, counts, inventory, notebridge, State,
};
use notebridge::store::Db;
use notebridge_testkit::generator::{generate, page_html, NotebookSpec};
use notebridge_testkit::graph::faults::ExternalScope;
use notebridge_testkit::graph::ink::page_ink;
use notebridge_testkit::lab::{Lab, LabConfig};
use rand::{Rng, SeedableRng};

/// Graph windows short enough to matter, Notion fast enough for a test (the pacing and 429 rules
/// themselves are tested against the real 3/s in the Notion tests).
fn fast() -> LabConfig {
    LabConfig {
        user_windows: "60/600ms,600/6s".into(),
        app_windows: "120/600ms,1200/6s".into(),
        notion_per_second: 150,
        ..LabConfig::default()
    }
}

fn spec(pages: usize, seed: u64) -> NotebookSpec {
    NotebookSpec {
        notebooks: 1,
        section_groups_depth: 2,
        section_groups_per_container: 1,
        sections_per_container: 2,
        pages_per_section: 0,
        total_pages: Some(pages),
        subpage_ratio: 0.3,
        images_per_page: 1,
        attachments_per_page: 1,
        resource_bytes: 4096,
        seed,
        ..NotebookSpec::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_300_page_notebook_migrates_completely_and_a_second_run_does_nothing() {
    let lab = Lab::start(fast()).await;
    let user = lab.add_user("alice", generate(&spec(300, 1)));
    let state = State::new();
    lab.sign_in(&Db::open(&state.db).unwrap(), "alice", &user);

    let (code, out, err) = notebridge(
        &lab,
        &state,
        &[
            "--json",
            "migrate",
            "--account",
            "alice",
            "--to",
            &lab.target_page,
        ],
    )
    .await;
    assert_eq!(code, 0, "stdout: {out}\nstderr: {err}");
    let summary: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(summary["outcome"], "finished");
    assert_eq!(summary["pages_done"], 300);
    // One image and one attachment per page, plus the pages' rendered drawings.
    let notes = lab.graph.notes(&user.id);
    let drawings: usize = notes
        .pages
        .iter()
        .filter_map(|p| {
            let html = page_html(p, &notes.resources, lab.graph.base_url(), &user.id);
            page_ink(p, &html).map(|i| i.drawings.len())
        })
        .sum();
    assert_eq!(summary["this_run"]["files"], 600 + drawings);
    assert_eq!(lab.graph.counters().throttled, 0, "no 429 in steady state");

    let inv = inventory(&state.db, "alice");
    assert_mirrors(&lab, &user.id, &inv);

    // Links between OneNote pages point at the migrated Notion pages, forward links included
    // (rewritten by the link pass once their targets existed).
    let db = Db::open(&state.db).unwrap();
    let notes = lab.graph.notes(&user.id);
    let linking: Vec<_> = notes.pages.iter().filter(|p| !p.links.is_empty()).collect();
    assert!(
        linking.len() >= 40,
        "the notebook has links: {}",
        linking.len()
    );
    for p in linking {
        let page_id = db
            .notion_item("alice", &p.id)
            .unwrap()
            .unwrap()
            .into_page_id()
            .unwrap();
        let target = db
            .notion_item("alice", &p.links[0])
            .unwrap()
            .unwrap()
            .into_page_id()
            .unwrap();
        let want = format!("https://www.notion.so/{}", target.replace('-', ""));
        let blocks = serde_json::to_string(&lab.notion.blocks_of(&page_id)).unwrap();
        assert!(
            blocks.contains(&want),
            "page {:?} does not link to {want}",
            p.title
        );
        assert!(
            !blocks.contains("(OneNote page {"),
            "an unresolved link is left in {:?}",
            p.title
        );
    }
    assert!(db.pages_with_pending_links("alice").unwrap().is_empty());
    assert!(summary["this_run"]["links_rewritten"].as_u64().unwrap() > 0);

    // verify re-reads Notion and agrees: every planned page exactly once and complete.
    let (code, out, err) = notebridge(&lab, &state, &["--json", "verify"]).await;
    assert_eq!(code, 0, "{out}{err}");
    let report: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(report["verdict"], "complete");
    assert_eq!(report["accounts"][0]["totals"]["ok"], 300);

    // Nothing left: a second run changes nothing and exits 0.
    let before = lab.notion.counters();
    let (code, out, err) = notebridge(&lab, &state, &["--json", "migrate", "--resume"]).await;
    assert_eq!(code, 0, "{out}{err}");
    let again: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(again["this_run"]["pages"], 0);
    let after = lab.notion.counters();
    let total = |c: &notebridge_testkit::notion::Counters| c.per_endpoint.values().sum::<u64>();
    assert_eq!(
        total(&after) - total(&before),
        1,
        "only the token check: nothing to write, so no proof of Update content"
    );
    assert_eq!(after.writes(), before.writes());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_at_ten_random_moments_then_resume_leaves_exactly_one_of_everything() {
    let config = LabConfig {
        notion_per_second: 40,
        ..fast()
    };
    let lab = Lab::start(config).await;
    let user = lab.add_user("alice", generate(&spec(40, 2)));
    let state = State::new();
    lab.sign_in(&Db::open(&state.db).unwrap(), "alice", &user);
    let mut rng = rand::rngs::StdRng::seed_from_u64(99);

    let mut first = true;
    for _ in 0..10 {
        let args: Vec<&str> = if first {
            vec!["migrate", "--account", "alice", "--to", &lab.target_page]
        } else {
            vec!["migrate", "--resume"]
        };
        first = false;
        let mut child = command(&lab, &state, &args).start();
        let after = Duration::from_millis(rng.random_range(150..1500));
        tokio::select! {
            _ = tokio::time::sleep(after) => {
                // SIGKILL: no chance to clean up.
                child.start_kill().unwrap();
                let _ = child.wait().await;
            }
            status = child.wait() => {
                assert!(status.unwrap().success());
                break;
            }
        }
    }
    let (code, out, err) = notebridge(&lab, &state, &["migrate", "--resume"]).await;
    assert_eq!(code, 0, "{out}{err}");
    let c = counts(&state.db, "alice");
    assert_eq!((c["pages_done"], c["pages_total"]), (40, 40));
    assert_mirrors(&lab, &user.id, &inventory(&state.db, "alice"));
    let (code, out, err) = notebridge(&lab, &state, &["verify"]).await;
    assert_eq!(code, 0, "{out}{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_user_throttle_on_one_account_does_not_stall_the_other() {
    a_user_throttle_on_alice(true).await;
}

/// Without `x-ms-throttle-scope`, alice's first 429 while bob sends may be the app's throttle, so
/// the limiter holds bob too for one cooldown (a guess); bob's next answer clears it, and he still
/// finishes while alice is held.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_user_throttle_without_hint_headers_costs_the_other_account_one_cooldown_at_most() {
    a_user_throttle_on_alice(false).await;
}

async fn a_user_throttle_on_alice(hint_headers: bool) {
    let lab = Lab::start(LabConfig {
        hint_headers,
        ..fast()
    })
    .await;
    let alice = lab.add_user("alice", generate(&spec(12, 3)));
    let bob = lab.add_user("bob", generate(&spec(12, 4)));
    let state = State::new();
    {
        let db = Db::open(&state.db).unwrap();
        lab.sign_in(&db, "alice", &alice);
        lab.sign_in(&db, "bob", &bob);
    }
    // Plan both first (scan in the foreground), then throttle alice from outside: for longer
    // than bob's whole run takes even where starting a process is slow (under Wine, a second or
    // two each).
    const HELD: Duration = Duration::from_secs(10);
    lab.graph
        .faults()
        .throttle_externally(ExternalScope::User(alice.id.clone()), HELD);
    let started = std::time::Instant::now();
    let mut child = command(
        &lab,
        &state,
        &["migrate", "--all-accounts", "--to", &lab.target_page],
    )
    .start();
    // bob finishes while alice is still held back
    let mut bob_done_at = None;
    while started.elapsed() < Duration::from_secs(60) {
        tokio::time::sleep(Duration::from_millis(200)).await;
        let b = counts(&state.db, "bob");
        if b["pages_total"] == 12 && b["pages_done"] == 12 {
            bob_done_at = Some(started.elapsed());
            break;
        }
    }
    let bob_done_at = bob_done_at.expect("bob finished");
    let a = counts(&state.db, "alice");
    assert!(
        bob_done_at < HELD,
        "bob took {bob_done_at:?} while alice was throttled"
    );
    assert!(a["pages_done"] < 12, "alice was not throttled? {a:?}");
    let status = child.wait().await.unwrap();
    assert!(status.success());
    let a = counts(&state.db, "alice");
    assert_eq!(a["pages_done"], 12);
}

/// An app-wide throttle from outside, mid-migration of two accounts, with no hint headers (as
/// OneNote's 429s may come): the shared breaker holds both accounts' workers, so the service sees
/// the requests already in flight and a few probes rather than every worker retrying; the run
/// then finishes both accounts with nothing failed and nothing lost.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_app_throttle_without_hint_headers_holds_both_accounts_and_loses_nothing() {
    const OUTAGE: Duration = Duration::from_secs(3);
    let config = LabConfig {
        hint_headers: false,
        ..fast()
    };
    let in_flight_cap = 2 * u64::from(config.user_concurrency);
    let lab = Lab::start(config).await;
    let alice = lab.add_user("alice", named("Alice's", generate(&spec(40, 5))));
    let bob = lab.add_user("bob", named("Bob's", generate(&spec(40, 6))));
    let state = State::new();
    {
        let db = Db::open(&state.db).unwrap();
        lab.sign_in(&db, "alice", &alice);
        lab.sign_in(&db, "bob", &bob);
    }
    let mut child = command(
        &lab,
        &state,
        &["migrate", "--all-accounts", "--to", &lab.target_page],
    )
    .start();
    let started = std::time::Instant::now();
    let done = |who| counts(&state.db, who)["pages_done"];
    while done("alice") + done("bob") < 4 {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "no page migrated"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(
        done("alice") < 40 && done("bob") < 40,
        "the outage falls mid-run"
    );
    migrate_support::app_outage_held(&lab, OUTAGE, in_flight_cap).await;
    let status = child.wait().await.unwrap();
    assert!(status.success());
    for who in ["alice", "bob"] {
        let c = counts(&state.db, who);
        assert_eq!(
            (c["pages_done"], c["pages_total"], c["failed"]),
            (40, 40, 0),
            "{who}"
        );
    }
    // Both accounts' notebooks are under the one target: each is checked besides the other's.
    let (of_alice, of_bob) = (inventory(&state.db, "alice"), inventory(&state.db, "bob"));
    let names = |nbs: &[notebridge::store::inventory::Notebook]| -> Vec<String> {
        nbs.iter().map(|n| n.name.clone()).collect()
    };
    let (alices, bobs) = (names(&of_alice), names(&of_bob));
    assert!(
        alices.iter().all(|n| !bobs.contains(n)),
        "{alices:?} {bobs:?}"
    );
    let target = &lab.target_page;
    let owner = |id: &str| format!("users('{id}')");
    assert_mirrors_at(
        &lab,
        target,
        &alice.id,
        &owner(&alice.id),
        &of_alice,
        &as_strs(&bobs),
    );
    assert_mirrors_at(
        &lab,
        target,
        &bob.id,
        &owner(&bob.id),
        &of_bob,
        &as_strs(&alices),
    );
}

fn as_strs(names: &[String]) -> Vec<&str> {
    names.iter().map(String::as_str).collect()
}
