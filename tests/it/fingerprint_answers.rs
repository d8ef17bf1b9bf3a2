//! A page's fingerprint (`notion::conflict`) taken from what its writes answered (the creation's
//! page object, each append's blocks) is the one reading the page back would give: per page, the
//! properties and body digests are equal and the rule finds the page unedited. Every write of the
//! first migration is stamped a minute after the one before, so a fingerprint that took its time
//! from the creation alone (and not from the page's later appends) is caught as an edit.

use std::collections::{HashMap, HashSet};

use notebridge::notion::conflict;
use notebridge::store::Db;
use notebridge_testkit::generator::{generate, NotebookSpec};
use notebridge_testkit::lab::Lab;
use notebridge_testkit::notion::{Endpoint, FaultKind, FaultRule};

use crate::account_clean_env::User;
use crate::files_support::sample;
use crate::layout_e2e::{fast, files_db, files_user};

/// 2026-03-02 09:00:30 UTC: mid-minute, as a first migration may be.
const START_MS: i64 = 1_772_442_030_000;

/// Each recorded page's fingerprint against the page as Notion gives it back now; returns how
/// many pages were compared.
fn compare_with_reads(lab: &Lab, db: &Db, account: &str) -> usize {
    let mut compared = 0;
    for item in db.notion_items(account).unwrap() {
        let Some(recorded) = item.fingerprint.clone() else {
            continue;
        };
        let id = item
            .page_id()
            .expect("a fingerprinted item has a page")
            .to_owned();
        let ours: HashSet<String> = db.notion_children_of(&id).unwrap();
        let seen = conflict::of_answers(&lab.notion.page(&id), &lab.notion.blocks_of(&id), &ours);
        assert_eq!(
            recorded.properties, seen.now.properties,
            "{}: properties digest from the answers differs from the read",
            item.title
        );
        assert_eq!(
            recorded.body, seen.now.body,
            "{}: body digest from the answers differs from the read",
            item.title
        );
        assert_eq!(
            conflict::edited(Some(&recorded), &seen),
            None,
            "{}: a page nobody touched is taken for edited (recorded {:?}, read {:?})",
            item.title,
            recorded,
            seen.now
        );
        compared += 1;
    }
    compared
}

fn get_pages(lab: &Lab) -> u64 {
    lab.notion
        .counters()
        .per_endpoint
        .into_iter()
        .filter(|(e, _)| format!("{e:?}") == "GetPage")
        .map(|(_, n)| n)
        .sum()
}

async fn generated_notebook(layout: &str) {
    generated_notebook_with(layout, &[]).await;
}

async fn generated_notebook_with(layout: &str, faults: &[FaultRule]) {
    let lab = Lab::start(fast()).await;
    for f in faults {
        lab.notion.inject(f.clone());
    }
    let notes = generate(&NotebookSpec {
        notebooks: 1,
        sections_per_container: 2,
        pages_per_section: 0,
        total_pages: Some(12),
        subpage_ratio: 0.4,
        images_per_page: 1,
        attachments_per_page: 1,
        seed: 77,
        ..NotebookSpec::default()
    });
    lab.add_user("me", notes.clone());
    let home = tempfile::tempdir().unwrap();
    let me = User {
        lab: &lab,
        home: home.path(),
    };
    let to = lab.target_page.clone();
    me.ok(&["login"]).await;
    lab.notion.stamp_writes_from(START_MS, 60_000);
    me.ok(&["migrate", "--to", &to, "--layout", layout]).await;
    let db = files_db(home.path());
    let compared = compare_with_reads(&lab, &db, "default");
    assert_eq!(compared, notes.pages.len(), "every page has a fingerprint");
    eprintln!(
        "figures: {layout}: {} pages, {} GET page requests, by endpoint: {:?}",
        notes.pages.len(),
        get_pages(&lab),
        lab.notion.counters().per_endpoint
    );
    if layout == "pages" && faults.is_empty() {
        // Every page was created with its writes answered: none is read back (the few GETs left
        // are the run's own, not one a page; a fingerprint read back costs one a page).
        assert!(
            get_pages(&lab) < notes.pages.len() as u64 / 2,
            "{} GET page requests for {} pages",
            get_pages(&lab),
            notes.pages.len()
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_fingerprint_from_answers_is_the_read_one_for_a_generated_notebook_in_pages() {
    generated_notebook("pages").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_fingerprint_from_answers_is_the_read_one_for_a_generated_notebook_in_databases() {
    generated_notebook("database").await;
}

/// Writes answered `503` that name what they saved (a created row, appended blocks) leave no
/// answer in hand: such a row's fingerprint is read back, never taken from the answers it lacks
/// (a body digest missing the saved blocks would take the untouched row for edited).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn writes_answered_503_that_saved_are_fingerprinted_by_a_read() {
    let saved = |e| {
        FaultRule::new(FaultKind::AppliedThen503Saved)
            .on(e)
            .after(1)
            .times(3)
    };
    generated_notebook_with(
        "database",
        &[saved(Endpoint::CreatePage), saved(Endpoint::AppendChildren)],
    )
    .await;
}

async fn real_section(layout: &str) {
    let Some(folder) = sample("onenote.rs/samples/New Section Group") else {
        return;
    };
    let lab = Lab::start(crate::files_support::fast()).await;
    let home = tempfile::tempdir().unwrap();
    let f = folder.to_str().unwrap();
    let to = lab.notion.add_shared_page("Import");
    lab.notion.stamp_writes_from(START_MS, 60_000);
    let out = files_user(
        &lab,
        home.path(),
        &["migrate", "--from", f, "--to", &to, "--layout", layout],
    )
    .run()
    .await;
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let db = files_db(home.path());
    let accounts: Vec<String> = db
        .conn()
        .prepare("SELECT DISTINCT account FROM notion_items")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let compared: usize = accounts
        .iter()
        .map(|a| compare_with_reads(&lab, &db, a))
        .sum();
    assert!(compared > 0, "no page of the sample was fingerprinted");
    eprintln!("figures: real section in {layout}: {compared} pages compared");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_fingerprint_from_answers_is_the_read_one_for_a_real_section_in_pages() {
    real_section("pages").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_fingerprint_from_answers_is_the_read_one_for_a_real_section_in_databases() {
    real_section("database").await;
}

/// A row's body written by its appends alone (as `database_row::create` writes it): a flat body
/// (the creation's answer, three appends to the page) is fingerprinted from the answers and equals
/// the read; a body with blocks three levels deep (children appended under blocks an earlier
/// append answered, which moves their edit time) is not taken from the answers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_from_appends_alone_is_fingerprinted_from_them_unless_a_block_changed_after() {
    use crate::notion_support::{client, fast_server, item, para, writer};
    let s = fast_server(52).await;
    let root = s.add_shared_page("Rows");
    s.stamp_writes_from(START_MS, 60_000);
    let c = client(&s, 2000, 200);
    let flat: Vec<_> = (0..250).map(|i| para(&format!("p{i}"))).collect();
    let deep = vec![
        item("top", vec![item("mid", vec![para("leaf")])]),
        para("after"),
    ];
    for (blocks, whole) in [(flat, true), (deep, false)] {
        let created = c.create_page(&root, "Row", &[]).await.unwrap();
        let id = created["id"].as_str().unwrap().to_owned();
        let mut stats = writer(&s)
            .resume_body(&id, &blocks, &HashMap::new())
            .await
            .unwrap();
        // What `database_row::create` adds: the creation's answer.
        stats.answered.saw(created["last_edited_time"].as_str());
        stats.answered.page = Some(created);
        let (read, _) = conflict::read(&c, &id, &HashSet::new()).await.unwrap();
        match stats.answered.fingerprint() {
            Some(f) => {
                assert!(
                    whole,
                    "a body changed after its answers was taken from them"
                );
                assert_eq!(f.properties, read.now.properties);
                assert_eq!(f.body, read.now.body);
                assert_eq!(conflict::edited(Some(&f), &read), None, "{f:?} {read:?}");
            }
            None => assert!(!whole, "a body answered whole was read back"),
        }
    }
}
