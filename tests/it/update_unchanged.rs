//! A page OneNote stamps modified without changing what it holds (renamed, or saved again as it
//! was) is not written again by `migrate --update` or `sync`, as an account's user runs them (a
//! clean environment: the client id and the Notion token): its blocks stay the very blocks written
//! before, its date line is updated in place and a new title written (a row: its properties set),
//! and the run counts one with its title unchanged `unchanged`; a page whose content changed is
//! rewritten as before. Both layouts. The Graph and Notion test servers model the services
//! (`testkit`).

use chrono::Duration;
use notebridge_testkit::generator::{generate, NotebookSpec};
use serde_json::Value;

use crate::account_clean_env::User;
use crate::layout_e2e::files_db;
use crate::sync_e2e::{expect, json, migrated_with};

/// The ids of `page`'s top-level blocks, in order.
fn block_ids(lab: &notebridge_testkit::lab::Lab, page: &str) -> Vec<String> {
    lab.notion
        .blocks_of(page)
        .iter()
        .filter_map(|b| b["id"].as_str().map(str::to_owned))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_stamped_modified_with_the_same_content_is_not_written_again() {
    stamped_pages_keep_their_bodies("pages").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_row_stamped_modified_with_the_same_content_keeps_its_body() {
    stamped_pages_keep_their_bodies("database").await;
}

/// In layout `pages` a kept page's date line is updated in place and a new title written; in
/// layout `database` a kept row's properties are set (its title and OneNote's times among them).
async fn stamped_pages_keep_their_bodies(layout: &str) {
    let notes = generate(&NotebookSpec {
        notebooks: 1,
        section_groups_depth: 0,
        sections_per_container: 1,
        pages_per_section: 0,
        total_pages: Some(5),
        subpage_ratio: 0.0,
        images_per_page: 1,
        attachments_per_page: 1,
        resource_bytes: 3000,
        seed: 52,
        ..NotebookSpec::default()
    });
    let (lab, user, home) = migrated_with(&notes, layout).await;
    let me = User {
        lab: &lab,
        home: home.path(),
    };
    let (touched, renamed, edited) = (&notes.pages[0], &notes.pages[1], &notes.pages[2]);
    let db = files_db(home.path());
    let page = |id: &str| {
        db.notion_item("default", id)
            .unwrap()
            .and_then(|i| i.into_page_id())
            .unwrap()
    };
    let (pt, pr, pe) = (page(&touched.id), page(&renamed.id), page(&edited.id));
    drop(db);
    let before: Vec<Vec<String>> = [&pt, &pr, &pe].iter().map(|p| block_ids(&lab, p)).collect();
    assert!(before.iter().all(|b| !b.is_empty()));

    // In OneNote: one page saved again as it was, one renamed, one edited.
    let later = touched.modified + Duration::days(1);
    lab.graph.mutate(&user.id, |n| {
        n.pages
            .iter_mut()
            .find(|p| p.id == touched.id)
            .unwrap()
            .modified = later;
        n.rename_page("me", &renamed.id, "Renamed in OneNote")
            .unwrap();
        n.edit_page_content("me", &edited.id).unwrap();
    });
    let to = lab.target_page.clone();
    let requests = lab.notion.request_log().len();
    let out = me
        .run(&["migrate", "--to", &to, "--update", "--json"])
        .await;
    expect(&out, 0, "migrate --update");
    let doc = json(&out);
    eprintln!(
        "figures: --update of 3 stamped pages (1 touched, 1 renamed, 1 edited): {} Notion requests: {}",
        lab.notion.request_log().len() - requests,
        doc["this_run"]
    );
    assert_eq!(doc["this_run"]["rewritten"], 3, "{doc}");
    assert_eq!(doc["this_run"]["unchanged"], 1, "the touched page: {doc}");
    // The touched page: its date line updated in place, nothing else; the renamed one: its date
    // line and its title. Every other block is the very block written before.
    let writes_to = |page: &str, blocks: &[String]| -> Vec<String> {
        let mut ids = vec![page.replace('-', "")];
        ids.extend(blocks.iter().map(|b| b.replace('-', "")));
        lab.notion.request_log()[requests..]
            .iter()
            .filter(|r| r.method != "GET")
            .filter(|r| ids.iter().any(|id| r.path.replace('-', "").contains(id)))
            .map(|r| format!("{} {}", r.method, r.path))
            .collect()
    };
    assert_eq!(
        writes_to(&pt, &before[0]).len(),
        1,
        "{:?}",
        writes_to(&pt, &before[0])
    );
    assert_eq!(
        writes_to(&pr, &before[1]).len(),
        if layout == "pages" { 2 } else { 1 },
        "{:?}",
        writes_to(&pr, &before[1])
    );
    assert_eq!(block_ids(&lab, &pt), before[0]);
    assert_eq!(block_ids(&lab, &pr), before[1]);
    let first_text = |page: &str| {
        lab.notion.blocks_of(page)[0]["paragraph"]["rich_text"][0]["plain_text"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    };
    let shown = match layout {
        "pages" => first_text(&pt),
        _ => lab.notion.page(&pt)["properties"].to_string(),
    };
    assert!(
        shown.contains(&later.format("%Y-%m-%d").to_string()),
        "the date line or the row's times show the new save: {shown}"
    );
    assert_eq!(
        lab.notion.dump(&pr).and_then(|d| d.title).as_deref(),
        Some("Renamed in OneNote")
    );
    // The edited page's body is written again.
    assert_ne!(block_ids(&lab, &pe), before[2]);
    // Nothing is missing or written twice, and a run right after writes nothing.
    let verify = json(&me.ok(&["verify", "--json"]).await);
    assert_eq!(verify["verdict"], "complete", "{verify}");
    // No write request at all (counted by the server), not even the proof of Update content.
    let all_writes = lab.notion.counters().writes();
    let writes = lab.notion.counters().changing_writes();
    me.ok(&["migrate", "--to", &to, "--update"]).await;
    assert_eq!(lab.notion.counters().writes(), all_writes);

    // `sync` counts a page saved again as it was as unchanged, not as updated, and writes its
    // date line (a row: its properties) alone.
    lab.graph.mutate(&user.id, |n| {
        n.pages
            .iter_mut()
            .find(|p| p.id == touched.id)
            .unwrap()
            .modified = later + Duration::days(1);
    });
    let out = me.run(&["sync", "--json"]).await;
    expect(&out, 0, "sync");
    let doc = json(&out);
    assert_eq!(
        (&doc["updated"], &doc["unchanged"]),
        (&Value::from(0), &Value::from(1)),
        "{doc}"
    );
    assert_eq!(
        lab.notion.counters().changing_writes(),
        writes + 1,
        "its date line or its properties alone: {doc}"
    );
    assert_eq!(block_ids(&lab, &pt), before[0]);
}
