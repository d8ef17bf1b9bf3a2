//! `verify`'s reconciliation against the lab's Notion server: a complete migration, then one defect
//! at a time (a missing page, a copy, a partial body, an interrupted write, failed jobs), each found
//! and explained, with the Notion requests it takes.

use crate::verify_support;

use std::collections::HashMap;

use notebridge::verify::{verify, ItemState, PageReport, VerifyReport};
use verify_support::*;

fn page<'a>(r: &'a VerifyReport, id: &str) -> &'a PageReport {
    r.accounts[0]
        .sections
        .iter()
        .flat_map(|s| &s.pages)
        .find(|p| p.id == id)
        .unwrap_or_else(|| panic!("page {id} not in the report"))
}

async fn migrated(fates: &[(&'static str, Fate)]) -> (World, String, HashMap<String, String>) {
    let w = world().await;
    add_account(&w.db, "alice");
    let target = plan(&w, "alice");
    let fates: HashMap<&str, Fate> = fates.iter().cloned().collect();
    let created = migrate(&w, "alice", &target, &fates).await;
    (w, target, created)
}

async fn check(w: &World) -> VerifyReport {
    verify(&w.db, &w.client, &["alice".to_owned()])
        .await
        .unwrap()
}

#[tokio::test]
async fn a_complete_migration_verifies_with_one_listing_per_page() {
    let (w, _target, created) = migrated(&[]).await;
    let before = w.lab.notion.request_log().len();
    let r = check(&w).await;
    assert!(
        r.complete(),
        "{}",
        serde_json::to_string_pretty(&r).unwrap()
    );
    assert_eq!(r.verdict, "complete");
    let a = &r.accounts[0];
    assert_eq!(
        (
            a.totals.onenote_pages,
            a.totals.planned,
            a.totals.in_notion,
            a.totals.ok
        ),
        (4, 4, 4, 4)
    );
    assert_eq!(
        (
            a.totals.missing,
            a.totals.duplicates,
            a.totals.partial,
            a.totals.failed
        ),
        (0, 0, 0, 0)
    );
    assert_eq!(a.sections.len(), 2);
    assert_eq!(a.sections[0].path, vec!["Work", "Notes"]);
    assert_eq!(a.sections[1].path, vec!["Work", "Projects", "Inner"]);
    let p1 = page(&r, "p1");
    assert_eq!(p1.check.state, ItemState::Ok);
    assert_eq!(
        p1.check.notion_page_id.as_deref(),
        Some(created["p1"].as_str())
    );
    assert_eq!((p1.blocks_recorded, p1.blocks_found), (Some(5), Some(5)));
    assert_eq!(p1.approximations.len(), 1);
    assert_eq!(p1.approximations[0].element, "<sup>");
    assert_eq!(a.totals.approximated_pages, 4);
    // One listing per migrated item (8) and the target; each page's bullet needs one more listing to
    // prove its 5 blocks (3 at the top level): 4. Nothing else.
    let requests = w.lab.notion.request_log().len() - before;
    assert_eq!(r.notion_requests, 8 + 1 + 4);
    assert_eq!(requests as u64, r.notion_requests);
}

#[tokio::test]
async fn a_page_trashed_in_notion_is_missing() {
    let (w, _t, created) = migrated(&[]).await;
    w.client.trash_page(&created["p2"]).await.unwrap();
    let r = check(&w).await;
    assert!(!r.complete());
    let p2 = page(&r, "p2");
    assert_eq!(p2.check.state, ItemState::Missing);
    assert!(p2
        .check
        .reason
        .as_deref()
        .unwrap()
        .contains("not (or no longer) under its parent"));
    let s = &r.accounts[0].sections[0];
    assert_eq!(
        (s.counts.missing, s.counts.in_notion, s.counts.ok),
        (1, 2, 2)
    );
    assert_eq!(page(&r, "p1").check.state, ItemState::Ok);
}

#[tokio::test]
async fn a_second_copy_of_a_page_is_a_duplicate_and_foreign_pages_are_only_reported() {
    let (w, _t, created) = migrated(&[]).await;
    // A copy of "Sub" under "First" (what a lost answer and a blind retry would make) ...
    let copy = w
        .client
        .create_page(&created["p1"], "Sub", &[])
        .await
        .unwrap()["id"]
        .as_str()
        .unwrap()
        .to_owned();
    // ... and a page someone added by hand to the section.
    w.client
        .create_page(&created["s1"], "My own notes", &[])
        .await
        .unwrap();
    let r = check(&w).await;
    assert!(!r.complete());
    let sub = page(&r, "p1a");
    assert_eq!(sub.check.state, ItemState::Duplicated);
    assert_eq!(sub.check.duplicates, vec![copy]);
    assert_eq!(
        sub.check.notion_page_id.as_deref(),
        Some(created["p1a"].as_str())
    );
    let s = &r.accounts[0].sections[0];
    assert_eq!((s.counts.duplicates, s.counts.foreign), (1, 1));
    assert_eq!(s.foreign[0].title, "My own notes");
    assert_eq!(s.foreign[0].under, vec!["Work", "Notes"]);

    // The foreign page alone does not make the migration incomplete.
    w.client.trash_page(&sub.check.duplicates[0]).await.unwrap();
    let r = check(&w).await;
    assert!(
        r.complete(),
        "{}",
        serde_json::to_string_pretty(&r).unwrap()
    );
    assert_eq!(r.accounts[0].totals.foreign, 1);
}

#[tokio::test]
async fn missing_body_blocks_and_an_interrupted_write_are_partial() {
    let (w, _t, created) = migrated(&[("q1", Fate::Interrupted)]).await;
    // Delete one nested block of First: 4 of 5 remain.
    let top = w.client.children(&created["p1"]).await.unwrap();
    let bullet = top
        .iter()
        .find(|b| b["type"] == "bulleted_list_item")
        .unwrap();
    let inner = w
        .client
        .children(bullet["id"].as_str().unwrap())
        .await
        .unwrap();
    w.client
        .delete_block(inner[0]["id"].as_str().unwrap())
        .await
        .unwrap();
    let r = check(&w).await;
    assert!(!r.complete());
    let p1 = page(&r, "p1");
    assert_eq!(p1.check.state, ItemState::Partial);
    assert_eq!((p1.blocks_recorded, p1.blocks_found), (Some(5), Some(4)));
    assert_eq!(
        p1.check.reason.as_deref(),
        Some("4 of the 5 body blocks written are in Notion")
    );
    let q1 = page(&r, "q1");
    assert_eq!(q1.check.state, ItemState::Partial);
    assert_eq!(
        q1.check.reason.as_deref(),
        Some("its body was not completely written")
    );
    assert_eq!(r.accounts[0].totals.partial, 2);
    assert_eq!(r.accounts[0].totals.in_notion, 4);
}

#[tokio::test]
async fn a_creation_never_confirmed_is_found_by_title() {
    let w = world().await;
    add_account(&w.db, "alice");
    let target = plan(&w, "alice");
    migrate(&w, "alice", &target, &HashMap::new()).await;
    // A later page whose answer was lost: the intent is recorded and the page exists, no id.
    let s1 = w.db.notion_item("alice", "s1").unwrap().unwrap();
    let sid = s1.into_page_id().unwrap();
    w.db.write("test", |tx| {
        tx.execute(
            "UPDATE notion_items SET notion_page_id = NULL, body_state = 'none' WHERE item_id = 'p2'",
            [],
        )
    })
    .unwrap();
    let r = check(&w).await;
    let p2 = page(&r, "p2");
    assert_eq!(p2.check.state, ItemState::Partial);
    assert!(p2
        .check
        .reason
        .as_deref()
        .unwrap()
        .contains("never confirmed"));
    assert!(p2.check.duplicates.is_empty());
    assert!(r.accounts[0].sections[0].foreign.is_empty());
    // With that page trashed, nothing carries its title: missing.
    let kids = w.client.children(&sid).await.unwrap();
    let untitled = kids
        .iter()
        .find(|b| b["child_page"]["title"] == "Untitled")
        .unwrap();
    w.client
        .trash_page(untitled["id"].as_str().unwrap())
        .await
        .unwrap();
    let r = check(&w).await;
    assert_eq!(page(&r, "p2").check.state, ItemState::Missing);
}

#[tokio::test]
async fn failed_jobs_give_their_reason_and_block_what_is_under_them() {
    let (w, _t, _created) = migrated(&[
        (
            "p2",
            Fate::Fail("Notion rejected creating a page: 400 validation_error: bad block".into()),
        ),
        (
            "s2",
            Fate::Fail("Graph says the section is gone (404)".into()),
        ),
    ])
    .await;
    let r = check(&w).await;
    assert!(!r.complete());
    assert_eq!(r.verdict, "incomplete");
    let p2 = page(&r, "p2");
    assert_eq!(p2.check.state, ItemState::Failed);
    assert_eq!(
        p2.check.reason.as_deref(),
        Some("Notion rejected creating a page: 400 validation_error: bad block")
    );
    let inner = &r.accounts[0].sections[1];
    assert_eq!(inner.section_page.state, ItemState::Failed);
    assert_eq!(inner.pages[0].check.state, ItemState::Blocked);
    assert_eq!(
        inner.pages[0].check.reason.as_deref(),
        Some("section \"Inner\" failed: Graph says the section is gone (404)")
    );
    let t = &r.accounts[0].totals;
    assert_eq!((t.failed, t.blocked, t.missing, t.ok), (1, 1, 2, 2));
}

#[tokio::test]
async fn pages_not_planned_are_listed_but_do_not_count() {
    let w = world().await;
    add_account(&w.db, "alice");
    let target = plan(&w, "alice");
    migrate(&w, "alice", &target, &HashMap::new()).await;
    // A page added in OneNote after planning.
    let mut inv = inventory();
    inv[0].sections[0]
        .pages
        .push(notebridge::store::inventory::Page {
            id: "p3".into(),
            title: "Later".into(),
            level: 0,
            order: 3,
            last_modified: None,
            created: None,
            content_url: None,
            author: None,
            web_url: None,
        });
    w.db.save_scan(
        "alice",
        &inv,
        &notebridge::store::inventory::ScanScope::All,
        5,
    )
    .unwrap();
    let r = check(&w).await;
    assert!(r.complete());
    assert_eq!(page(&r, "p3").check.state, ItemState::NotPlanned);
    let t = &r.accounts[0].totals;
    assert_eq!((t.onenote_pages, t.planned, t.not_planned), (5, 4, 1));
}

#[tokio::test]
async fn pages_under_a_trashed_section_page_are_missing_too() {
    let (w, _t, created) = migrated(&[]).await;
    w.client.trash_page(&created["s2"]).await.unwrap();
    let r = check(&w).await;
    assert!(!r.complete());
    let inner = &r.accounts[0].sections[1];
    assert_eq!(inner.section_page.state, ItemState::Missing);
    let q1 = &inner.pages[0];
    assert_eq!(q1.check.state, ItemState::Missing);
    assert_eq!(
        q1.check.reason.as_deref(),
        Some(format!("its parent Notion page {} is missing", created["s2"]).as_str())
    );
    assert_eq!(page(&r, "p1").check.state, ItemState::Ok);
}
