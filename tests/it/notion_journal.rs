//! The writer's journal in the state database: a write stopped mid-page (a failing append, a kill)
//! resumes by skipping the steps it recorded, without listing them in Notion again; only the one
//! step in doubt is looked up. Uploads made and not yet attached are not made again, and the page
//! ends exactly as written once.

use crate::notion_support;

use std::collections::{HashMap, HashSet};
use std::sync::atomic::AtomicUsize;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use notebridge::clock::Clock;
use notebridge::convert::Block;
use notebridge::notion::journal::Journal;
use notebridge::notion::writer::{NewPage, Resource, Writer};
use notebridge::store::notion_items::ItemKind;
use notebridge::store::Db;
use notebridge_testkit::notion::{Endpoint, FaultKind, FaultRule, NotionServer};
use notion_support::*;

/// A body of many steps: 250 paragraphs (the creation and two appends to the page), lists whose
/// items have children of their own (appended under ids earlier steps created), a table, images.
fn body() -> (Vec<Block>, HashMap<String, Resource>) {
    let mut resources = HashMap::new();
    let mut blocks = Vec::new();
    for i in 0..4 {
        let url = format!("https://graph.example/resources/{i}/$value");
        resources.insert(
            url.clone(),
            Resource {
                url: url.clone(),
                file_name: format!("pic{i}.png"),
                mime: Some("image/png".into()),
                fallback: None,
            },
        );
        blocks.push(media("image", &url));
        blocks.push(item(
            &format!("list {i}"),
            vec![
                item(&format!("deep {i}"), vec![para(&format!("leaf {i}"))]),
                para(&format!("side {i}")),
            ],
        ));
    }
    blocks.push(table(130));
    blocks.extend((0..250).map(|i| para(&format!("p{i}"))));
    (blocks, resources)
}

/// A journal writing as the holder of the database's run lock (taken, or taken over, with the
/// same token each time, so every journal of a test holds it).
fn journal(db: &Arc<Db>, item: &str) -> Journal {
    let token = db
        .acquire_run_lock(1, "journal test", 0, Duration::from_secs(3600), |_| false)
        .unwrap()
        .unwrap();
    // A page has a journal once its intent is recorded, as the queue records it first.
    if db.notion_item("acct", item).unwrap().is_none() {
        db.record_intent(&token, "acct", item, ItemKind::Page, "root", item)
            .unwrap();
    }
    Journal::new(db.clone(), token, "acct", item, Clock::system())
}

fn journalled(s: &NotionServer, db: &Arc<Db>, item: &str) -> Writer {
    writer_with_files(s).with_journal(journal(db, item))
}

fn writer_with_files(s: &NotionServer) -> Writer {
    Writer::new(
        client(s, 2000, 200),
        fetch(HashMap::new(), Arc::new(AtomicUsize::new(0))),
        5 * 1024 * 1024 * 1024,
    )
}

/// Requests to `e` in the server's log from index `from` on.
fn count(s: &NotionServer, from: usize, e: Endpoint) -> usize {
    s.request_log()[from..]
        .iter()
        .filter(|r| r.endpoint == e)
        .count()
}

/// Creates the page with `w`, the 3rd append onwards failing (503 until the client gives up):
/// returns the page's id.
async fn write_until_the_third_append_fails(
    s: &NotionServer,
    w: &Writer,
    root: &str,
    title: &str,
) -> String {
    let (blocks, resources) = body();
    s.inject(
        FaultRule::new(FaultKind::Status(503))
            .on(Endpoint::AppendChildren)
            .after(2),
    );
    let created: Mutex<Option<String>> = Mutex::new(None);
    let record = |id: &str| *created.lock().unwrap() = Some(id.to_owned());
    let page = NewPage {
        parent: root,
        title,
        blocks: &blocks,
        resources: &resources,
    };
    let stopped = w.create_page(page, &HashSet::new(), false, &record).await;
    assert!(stopped.is_err(), "the write stopped mid-page");
    s.clear_faults();
    let id = created
        .lock()
        .unwrap()
        .clone()
        .expect("the page was created");
    id
}

#[tokio::test]
async fn a_write_stopped_mid_page_resumes_without_listing_the_steps_it_recorded() {
    let s = fast_server(31).await;
    let root = s.add_shared_page("Journal");
    let t = tempfile::tempdir().unwrap();
    let db = Arc::new(Db::open(&t.path().join("s.db")).unwrap());
    let (blocks, resources) = body();

    // What a whole write takes, for the counts below.
    let from = requests(&s);
    let page = NewPage {
        parent: &root,
        title: "Whole",
        blocks: &blocks,
        resources: &resources,
    };
    writer_with_files(&s)
        .create_page(page, &HashSet::new(), false, &|_| {})
        .await
        .unwrap();
    let whole_appends = count(&s, from, Endpoint::AppendChildren);
    let whole_uploads = count(&s, from, Endpoint::CreateUpload);
    assert!(whole_appends > 6, "{whole_appends} appends: many steps");

    let w = journalled(&s, &db, "page");
    let id = write_until_the_third_append_fails(&s, &w, &root, "Stopped").await;
    assert!(
        !db.recorded_steps("acct", "page").unwrap().is_empty(),
        "the steps that finished were recorded as they finished"
    );

    // The resumed write, by a new writer (a new process) reading the journal.
    let from = requests(&s);
    let stats = journalled(&s, &db, "page")
        .resume_body(&id, &blocks, &resources)
        .await
        .unwrap();
    assert_page(&s, &id, "Stopped", &blocks, &resources);
    let listings = count(&s, from, Endpoint::ListChildren);
    assert_eq!(
        listings,
        1,
        "only the step in doubt is looked up: {:?}",
        s.request_log()[from..]
            .iter()
            .map(|r| (r.endpoint, r.path.clone()))
            .collect::<Vec<_>>()
    );
    // Two appends went through before the stop: every other one is made once, none again.
    assert_eq!(count(&s, from, Endpoint::AppendChildren), whole_appends - 2);
    assert!(count(&s, from, Endpoint::CreateUpload) < whole_uploads);
    assert_eq!(
        stats.blocks as u64,
        {
            let all: usize = blocks.iter().map(element_count).sum();
            all as u64
        } - written_before_stop(&blocks)
    );
    assert_eq!(s.counters().validation_errors, 0);

    // Without a journal, the same stop is resumed by looking up every finished step.
    let w = writer_with_files(&s);
    let id = write_until_the_third_append_fails(&s, &w, &root, "Unrecorded").await;
    let from = requests(&s);
    w.resume_body(&id, &blocks, &resources).await.unwrap();
    assert_page(&s, &id, "Unrecorded", &blocks, &resources);
    assert!(
        count(&s, from, Endpoint::ListChildren) > 2,
        "the looks a journal saves"
    );
    assert!(s.duplicate_titles(&root).is_empty());
}

/// Block elements the creation and the first two appends wrote (what the resumed write does not
/// count as written by it).
fn written_before_stop(blocks: &[Block]) -> u64 {
    use notebridge::notion::steps::{Step, Steps};
    Steps::new_page(blocks)
        .filter_map(|s| match s {
            Step::CreatePage { items } | Step::Append { items, .. } => Some(items.elements()),
            Step::Upload { .. } => None,
        })
        .take(3)
        .sum::<usize>() as u64
}

fn element_count(b: &Block) -> usize {
    notebridge::notion::steps::element_count(std::slice::from_ref(b))
}

#[tokio::test]
async fn a_write_killed_at_any_point_resumes_from_its_journal_with_at_most_one_look() {
    let s = fast_server(32).await;
    let root = s.add_shared_page("Killed");
    let t = tempfile::tempdir().unwrap();
    let db = Arc::new(Db::open(&t.path().join("s.db")).unwrap());
    let (blocks, resources) = body();
    let from = requests(&s);
    let page = NewPage {
        parent: &root,
        title: "Whole",
        blocks: &blocks,
        resources: &resources,
    };
    writer_with_files(&s)
        .create_page(page, &HashSet::new(), false, &|_| {})
        .await
        .unwrap();
    let total = requests(&s) - from;

    let step = (total / 9).max(1);
    for (round, kill_at) in (2..total).step_by(step).enumerate() {
        let item = format!("page {round}");
        let title = format!("Round {round}");
        let start = requests(&s);
        let created: Arc<Mutex<Option<String>>> = Arc::default();
        let task = {
            let (w, root, title, blocks, resources, created) = (
                journalled(&s, &db, &item),
                root.clone(),
                title.clone(),
                blocks.clone(),
                resources.clone(),
                created.clone(),
            );
            tokio::spawn(async move {
                let record = move |id: &str| *created.lock().unwrap() = Some(id.to_owned());
                let page = NewPage {
                    parent: &root,
                    title: &title,
                    blocks: &blocks,
                    resources: &resources,
                };
                w.create_page(page, &HashSet::new(), false, &record).await
            })
        };
        while requests(&s) - start < kill_at && !task.is_finished() {
            tokio::time::sleep(Duration::from_micros(200)).await;
        }
        task.abort();
        let _ = task.await;
        tokio::time::sleep(Duration::from_millis(30)).await;
        let Some(id) = created.lock().unwrap().clone() else {
            // Killed before the page's id was known: that is the lost-page recovery, not the
            // journal's (see notion_writer).
            continue;
        };
        let resumed = requests(&s);
        journalled(&s, &db, &item)
            .resume_body(&id, &blocks, &resources)
            .await
            .unwrap();
        assert_page(&s, &id, &title, &blocks, &resources);
        // The step in doubt, and the page's first blocks when the kill came before their ids
        // were listed for a later step.
        let looks = count(&s, resumed, Endpoint::ListChildren);
        assert!(
            looks <= 2,
            "round {round}, killed after {kill_at} of {total} requests: {looks} listings"
        );
    }
    assert!(s.duplicate_titles(&root).is_empty());
    assert_eq!(s.counters().validation_errors, 0);
}

#[tokio::test]
async fn links_are_recorded_in_the_blocks_that_hold_them_wherever_the_steps_put_them() {
    use notebridge::convert::{MediaSource, PageTarget, RichKind, RichText};
    use notebridge::notion::journal::LinkBody;
    let s = fast_server(34).await;
    let root = s.add_shared_page("Links");
    let t = tempfile::tempdir().unwrap();
    let db = Arc::new(Db::open(&t.path().join("s.db")).unwrap());
    let link = |text: &str| RichText {
        kind: RichKind::PageLink {
            content: text.into(),
            onenote_page_id: "{0A0B}".into(),
            target: None,
        },
        annotations: Default::default(),
    };
    let linked = |text: &str| para_of(vec![RichText::plain("see "), link(text)]);
    // In the creation: a first-level block, a carried child, a carried table row, a caption of a
    // file that cannot be carried over (a placeholder holds no link).
    let mut blocks = vec![linked("first")];
    blocks.push(item("holder", vec![para("plain kid"), linked("kid")]));
    let mut rows = table(3);
    if let Block::Table { rows, .. } = &mut rows {
        rows[1][1] = vec![link("cell")];
    }
    blocks.push(rows);
    let gone = "https://graph.example/resources/fail/$value".to_owned();
    blocks.push(Block::Image {
        source: MediaSource::Resource {
            url: gone.clone(),
            file_name: None,
            mime: None,
            fallback: None,
        },
        caption: vec![link("caption")],
    });
    // Appended later: a first-level block, and one under a block an earlier step created.
    blocks.extend((0..150).map(|i| para(&format!("p{i}"))));
    blocks.push(linked("late"));
    blocks.push(item(
        "deep",
        vec![item("mid", vec![linked("deepest")]), para("side")],
    ));
    let resources = HashMap::from([(
        gone.clone(),
        Resource {
            url: gone,
            file_name: "gone.png".into(),
            mime: Some("image/png".into()),
            fallback: None,
        },
    )]);
    let page = NewPage {
        parent: &root,
        title: "Links",
        blocks: &blocks,
        resources: &resources,
    };
    let (id, _) = journalled(&s, &db, "links")
        .create_page(page, &HashSet::new(), false, &|_| {})
        .await
        .unwrap();
    let records = db.link_blocks("acct", "links").unwrap();
    assert_eq!(
        records.len(),
        5,
        "first, kid, cell, late, deepest: {records:?}"
    );

    // Each record, sent with its link resolved, turns exactly its block into the resolved one.
    let target = PageTarget {
        id: "0f0e0d0c-0b0a-4909-8807-060504030201".into(),
        title: "Another title".into(),
    };
    let c = client(&s, 2000, 200);
    for r in &records {
        let u = LinkBody::of_row_text(&r.body)
            .unwrap()
            .update(|_| Some(target.clone()))
            .unwrap();
        assert_eq!((u.resolved, u.unresolved), (1, 0));
        c.update_block(&r.block_id, u.body).await.unwrap();
    }
    let mut resolved = blocks.clone();
    for b in &mut resolved {
        b.visit_rich_text_mut(&mut |rt| {
            if let RichKind::PageLink { target: t, .. } = &mut rt.kind {
                *t = Some(target.clone());
            }
        });
    }
    assert_page(&s, &id, "Links", &resolved, &resources);
    assert_eq!(s.counters().validation_errors, 0);
}
