//! One OneNote page is one Notion page, whichever way it was read: a page is keyed by its OneNote
//! page GUID, which Graph's route reads from `links.oneNoteClientUrl` and the files carry, so a
//! section migrated through Graph and then from its file (or the other way round) is not created
//! twice.

use chrono::{TimeZone, Utc};

use crate::files_support::{fast, notion_tree, run, sample, scanned};
use crate::migrate_support::State;
use notebridge::store::Db;
use notebridge_testkit::graph::model::{Notebook, Page, Section, UserNotes};
use notebridge_testkit::lab::Lab;

/// What the Graph test server serves for a notebook holding one section with one page whose
/// GUID is `guid` (the server derives an item's GUID from the hex digits of its id).
fn notes_with_page(guid: &str, title: &str, modified: &str) -> UserNotes {
    let t = Utc.with_ymd_and_hms(2020, 10, 1, 0, 0, 0).unwrap();
    let modified = chrono::DateTime::parse_from_rfc3339(modified)
        .unwrap()
        .with_timezone(&Utc);
    UserNotes {
        notebooks: vec![Notebook {
            id: "0-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa".into(),
            display_name: "Work".into(),
            created: t,
            modified: t,
            is_default: true,
        }],
        section_groups: vec![],
        sections: vec![Section {
            id: "0-bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb".into(),
            display_name: "New Section 1".into(),
            created: t,
            modified: t,
            notebook_id: "0-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa".into(),
            parent_group: None,
            is_default: false,
        }],
        pages: vec![Page {
            id: format!("0-{}", guid.replace('-', "")),
            title: title.into(),
            created: t,
            modified,
            section_id: "0-bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb".into(),
            level: 0,
            order: 0,
            content_seed: 1,
            resources: vec![],
            links: vec![],
            link_texts: vec![],
            mail_link: false,
            fourth_heading: false,
            extra_paragraphs: 0,
        }],
        resources: Default::default(),
        kept_guids: Default::default(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_migrated_through_graph_is_not_created_again_from_its_file_nor_the_other_way() {
    let Some(file) = sample("onenote.rs/samples/New Section Group/New Section 1.one") else {
        return;
    };
    let f = file.to_str().unwrap();
    let lab = Lab::start(fast()).await;

    // Graph first, then the file.
    let state = State::new();
    let doc = scanned(&lab, &state, &file).await;
    let page = &doc["sections"][0]["pages"][0];
    let (guid, title) = (
        page["id"].as_str().unwrap(),
        page["title"].as_str().unwrap(),
    );
    let modified = page["last_modified"].as_str().unwrap();
    let user = lab.add_user("alice", notes_with_page(guid, title, modified));
    lab.sign_in(&Db::open(&state.db).unwrap(), "alice", &user);
    let target = lab.notion.add_shared_page("Graph first");
    let (code, out, err) = run(
        &lab,
        &state,
        &["migrate", "--account", "alice", "--to", &target],
    )
    .await;
    assert_eq!(code, 0, "stdout: {out}\nstderr: {err}");
    let by_graph = notion_tree(&lab, &target);
    assert_eq!(
        by_graph,
        [
            (0, "Work".to_owned()),
            (1, "New Section 1".to_owned()),
            (2, title.to_owned())
        ]
    );
    let (code, out, err) = run(&lab, &state, &["migrate", "--from", f, "--to", &target]).await;
    assert_eq!(code, 0, "stdout: {out}\nstderr: {err}");
    assert!(err.contains("migrated before"), "the plan says so: {err}");
    assert_eq!(
        notion_tree(&lab, &target),
        by_graph,
        "nothing created twice"
    );
    let (code, out, _) = run(&lab, &state, &["verify"]).await;
    assert_eq!(code, 0, "both sources verify complete: {out}");

    // The file first, then Graph.
    let state = State::new();
    let user = lab.add_user("bob", notes_with_page(guid, title, modified));
    lab.sign_in(&Db::open(&state.db).unwrap(), "bob", &user);
    let target = lab.notion.add_shared_page("Files first");
    let (code, out, err) = run(&lab, &state, &["migrate", "--from", f, "--to", &target]).await;
    assert_eq!(code, 0, "stdout: {out}\nstderr: {err}");
    let by_file = notion_tree(&lab, &target);
    assert_eq!(
        by_file,
        [(0, "New Section 1".to_owned()), (1, title.to_owned())]
    );
    let (code, out, err) = run(
        &lab,
        &state,
        &["migrate", "--account", "bob", "--to", &target],
    )
    .await;
    assert_eq!(code, 0, "stdout: {out}\nstderr: {err}");
    assert_eq!(notion_tree(&lab, &target), by_file, "nothing created twice");
    let (code, out, _) = run(&lab, &state, &["verify"]).await;
    assert_eq!(code, 0, "both sources verify complete: {out}");
}
