//! Regressions found in review: what `verify` once could not see.

use crate::verify_support;

use std::collections::HashMap;

use notebridge::verify::verify;
use serde_json::json;
use verify_support::*;

fn para(text: &str) -> serde_json::Value {
    json!({"object": "block", "type": "paragraph",
           "paragraph": {"rich_text": [{"type": "text", "text": {"content": text}}]}})
}

/// A body written twice (a retried append whose first answer was lost) has more blocks than
/// recorded; verify counts only up to the record, so it calls the page complete.
#[tokio::test]
async fn a_body_written_twice_is_not_complete() {
    let w = world().await;
    add_account(&w.db, "alice");
    let target = plan(&w, "alice");
    let created = migrate(&w, "alice", &target, &HashMap::new()).await;
    // The same three top-level blocks appended a second time.
    w.client.append(&created["p1"], &body("p1")).await.unwrap();
    let r = verify(&w.db, &w.client, &["alice".to_owned()])
        .await
        .unwrap();
    assert!(
        !r.complete(),
        "duplicated body content verified as complete: {}",
        serde_json::to_string(&r.accounts[0].sections[0].pages[0]).unwrap()
    );
}

/// Lost content hidden by extra content: a nested block deleted, an unrelated top-level block
/// added. The count is a lower bound, so it still reaches the record.
#[tokio::test]
async fn a_lost_nested_block_masked_by_an_extra_block_is_not_complete() {
    let w = world().await;
    add_account(&w.db, "alice");
    let target = plan(&w, "alice");
    let created = migrate(&w, "alice", &target, &HashMap::new()).await;
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
    w.client
        .append(&created["p1"], &[para("stray")])
        .await
        .unwrap();
    let r = verify(&w.db, &w.client, &["alice".to_owned()])
        .await
        .unwrap();
    assert!(
        !r.complete(),
        "a page missing a written block verified as complete: {}",
        serde_json::to_string(&r.accounts[0].sections[0].pages[0]).unwrap()
    );
}

/// Two accounts migrated under the same Notion page (verify's reader says they may share a
/// target), each with a notebook of the same name: each account's notebook page is taken for a
/// copy of the other's, so a correct migration is reported INCOMPLETE.
#[tokio::test]
async fn two_accounts_under_one_target_are_not_each_others_duplicates() {
    let w = world().await;
    add_account(&w.db, "alice");
    add_account(&w.db, "bob");
    let target = plan(&w, "alice");
    w.db.save_scan(
        "bob",
        &inventory(),
        &notebridge::store::inventory::ScanScope::All,
        1,
    )
    .unwrap();
    plan_as_holder(&w, "bob", &target, 3);
    migrate(&w, "alice", &target, &HashMap::new()).await;
    migrate(&w, "bob", &target, &HashMap::new()).await;
    let r = verify(&w.db, &w.client, &["alice".to_owned(), "bob".to_owned()])
        .await
        .unwrap();
    assert!(
        r.complete(),
        "a correct two-account migration is incomplete: {}",
        serde_json::to_string(&r.accounts[0].containers).unwrap()
    );
}
