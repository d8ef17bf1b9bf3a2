//! The Notion writer against the Notion test server over loopback: every converted block accepted,
//! request counts at their minimum, transient failures, applied-but-unanswered writes and kills at
//! random points, each ending with exactly the source's blocks, once, in order.

use crate::notion_support;

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use notebridge::convert::{convert_page, Block};
use notebridge::notion::client::NotionError;
use notebridge::notion::writer::{NewPage, Resource, WriteError};
use notebridge_testkit::notion::{Endpoint, FaultKind, FaultRule};
use notion_support::*;
use rand::{rngs::StdRng, Rng, SeedableRng};
use serde_json::Value;

fn no_resources() -> HashMap<String, Resource> {
    HashMap::new()
}

fn noop(_: &str) {}

/// Converts an HTML page and gathers its resources as the queue does.
fn converted(html: &str) -> (String, Vec<Block>, HashMap<String, Resource>) {
    let page = convert_page(html);
    let resources = notebridge::queue::resources_of(&page.resources());
    (page.title.clone(), page.blocks, resources)
}

fn html_files(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut v: Vec<_> = std::fs::read_dir(dir)
        .map(|d| {
            d.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "html"))
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

#[tokio::test]
async fn every_converted_page_is_accepted_and_lands_exactly_as_written() {
    let s = fast_server(1).await;
    let w = writer(&s);
    let root = s.add_shared_page("Fixtures");
    let here = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = html_files(&here.join("fixtures"));
    let public =
        crate::public_samples::dir("every_converted_page_is_accepted_and_lands_exactly_as_written")
            .map(|d| html_files(&d))
            .unwrap_or_default();
    files.extend(public.iter().cloned());
    assert!(files.len() >= 17, "fixtures found: {}", files.len());
    let mut types = HashSet::new();
    for f in &files {
        let html = std::fs::read_to_string(f).unwrap();
        let (title, blocks, resources) = converted(&html);
        collect_types(&json_of(&blocks), &mut types);
        let page = NewPage {
            parent: &root,
            title: &title,
            blocks: &blocks,
            resources: &resources,
        };
        let (id, _) = w
            .create_page(page, &HashSet::new(), false, &noop)
            .await
            .unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        assert_page(&s, &id, &title, &blocks, &resources);
    }
    assert_eq!(s.counters().validation_errors, 0);
    // the converter's whole vocabulary went through (public samples add more when present)
    for t in [
        "paragraph",
        "heading_1",
        "bulleted_list_item",
        "numbered_list_item",
        "to_do",
        "table",
        "table_row",
        "code",
        "image",
    ] {
        assert!(types.contains(t), "no {t} among the fixtures: {types:?}");
    }
    eprintln!("{} pages, block types: {types:?}", files.len());
}

fn collect_types(blocks: &[Value], out: &mut HashSet<String>) {
    for b in blocks {
        if let Some(t) = notebridge::notion::split::block_type(b) {
            out.insert(t.to_owned());
        }
        collect_types(notebridge::notion::split::children(b), out);
    }
}

/// 20 subtrees of 125 blocks: T > A > B > C > D > 120 leaves (6 levels), 2,500 blocks.
///
/// The minimum, counting every request (reads too: they cost the same rate): the page needs its
/// creation plus one request that yields the ids of its top-level blocks (a listing, or an append,
/// whose answer has them) = 2. In each subtree, let k be the deepest level whose id we know (T: 1).
/// A request targets one block and writes at most two levels under it, but only the first level's
/// ids come back; a listing reveals one level. So every request raises k by at most one, and the
/// leaves (level 6) need a request targeting C or D, with k >= 4: three raises, then the 120
/// leaves need two requests (at most 100 children per array, all under the one D). 5 per subtree,
/// none shared between subtrees: 2 + 20 * 5 = 102.
#[tokio::test]
async fn a_deep_page_of_2500_blocks_takes_the_minimum_of_102_requests() {
    let s = fast_server(2).await;
    let w = writer(&s);
    let root = s.add_shared_page("Deep");
    let blocks: Vec<Block> = (0..20)
        .map(|t| {
            let leaves: Vec<Block> = (0..120).map(|i| para(&format!("{t}.{i}"))).collect();
            let d = item(&format!("{t}D"), leaves);
            let c = item(&format!("{t}C"), vec![d]);
            let b = item(&format!("{t}B"), vec![c]);
            let a = item(&format!("{t}A"), vec![b]);
            item(&format!("{t}T"), vec![a])
        })
        .collect();
    let total = notebridge::notion::steps::element_count(&blocks);
    assert_eq!(total, 2500);
    assert_eq!(notebridge::notion::steps::depth(&blocks), 6);
    let before = requests(&s);
    let page = NewPage {
        parent: &root,
        title: "Deep",
        blocks: &blocks,
        resources: &no_resources(),
    };
    let (id, stats) = w
        .create_page(page, &HashSet::new(), false, &noop)
        .await
        .unwrap();
    assert_eq!(requests(&s) - before, 102);
    assert_eq!(stats.blocks, 2500);
    assert_page(&s, &id, "Deep", &blocks, &no_resources());

    // a bare chain of 6 levels: creation, a listing, then 4 appends (the same bound: 2 + 4)
    let mut chain = para("6");
    for d in (1..6).rev() {
        chain = item(&d.to_string(), vec![chain]);
    }
    let before = requests(&s);
    let page = NewPage {
        parent: &root,
        title: "Chain",
        blocks: std::slice::from_ref(&chain),
        resources: &no_resources(),
    };
    let (id, _) = w
        .create_page(page, &HashSet::new(), false, &noop)
        .await
        .unwrap();
    assert_eq!(requests(&s) - before, 6);
    assert_page(&s, &id, "Chain", &[chain], &no_resources());
}

#[tokio::test]
async fn a_flat_page_of_n_blocks_takes_one_request_per_hundred() {
    let s = fast_server(3).await;
    let w = writer(&s);
    let root = s.add_shared_page("Flat");
    for n in [0usize, 1, 100, 101, 250, 1000, 1001] {
        let blocks: Vec<Block> = (0..n).map(|i| para(&i.to_string())).collect();
        let before = requests(&s);
        let title = format!("Flat {n}");
        let page = NewPage {
            parent: &root,
            title: &title,
            blocks: &blocks,
            resources: &no_resources(),
        };
        let (id, _) = w
            .create_page(page, &HashSet::new(), false, &noop)
            .await
            .unwrap();
        let want = 1 + n.saturating_sub(100).div_ceil(100);
        assert_eq!(requests(&s) - before, want, "{n} blocks");
        assert_page(&s, &id, &title, &blocks, &no_resources());
    }
}

/// Writes `n` pages of [`mixed_body`] under a new root and checks each lands exactly once.
async fn write_pages_and_check(s: &notebridge_testkit::notion::NotionServer, n: usize) {
    let w = writer(s);
    let root = s.add_shared_page("Root");
    let mut bodies = Vec::new();
    for i in 0..n {
        let title = format!("Page {i}");
        let blocks = mixed_body(&title);
        let page = NewPage {
            parent: &root,
            title: &title,
            blocks: &blocks,
            resources: &no_resources(),
        };
        let ours: HashSet<String> = s.pages_under(&root).into_iter().map(|(id, _)| id).collect();
        let (id, _) = w
            .create_page(page, &ours, false, &noop)
            .await
            .unwrap_or_else(|e| panic!("{title}: {e}"));
        bodies.push((id, title, blocks));
    }
    let pages = s.pages_under(&root);
    assert_eq!(pages.len(), n, "one Notion page per source page");
    assert!(s.duplicate_titles(&root).is_empty());
    for (id, title, blocks) in &bodies {
        assert_page(s, id, title, blocks, &no_resources());
    }
}

#[tokio::test]
async fn server_errors_and_conflicts_at_10_percent_leave_every_page_whole_and_single() {
    let s = fast_server(4).await;
    // five statuses at ~2.1 % each: ~10 % of all requests fail, nothing applied
    for st in [409, 500, 502, 503, 504] {
        s.inject(FaultRule::new(FaultKind::Status(st)).ratio(0.021));
    }
    write_pages_and_check(&s, 10).await;
    let c = s.counters();
    let total: u64 = c.per_endpoint.values().sum();
    let ratio = c.faults as f64 / total as f64;
    assert!(c.faults >= 10 && (0.05..0.2).contains(&ratio), "{c:?}");
}

#[tokio::test]
async fn applied_writes_answered_504_or_dropped_are_neither_repeated_nor_lost() {
    for kind in [FaultKind::AppliedThen504, FaultKind::AppliedThenDrop] {
        for ep in [Endpoint::CreatePage, Endpoint::AppendChildren] {
            let s = fast_server(5).await;
            s.inject(FaultRule::new(kind.clone()).on(ep).times(3));
            write_pages_and_check(&s, 3).await;
            assert_eq!(s.counters().faults, 3, "{kind:?} on {ep:?} fired");
        }
    }
    // and at random among many appends and creations
    let s = fast_server(6).await;
    s.inject(FaultRule::new(FaultKind::AppliedThen504).ratio(0.08));
    s.inject(FaultRule::new(FaultKind::AppliedThenDrop).ratio(0.08));
    write_pages_and_check(&s, 4).await;
    assert!(s.counters().faults >= 4);
}

#[tokio::test]
async fn a_write_killed_at_random_points_resumes_to_exactly_the_source() {
    let s = fast_server(7).await;
    let root = s.add_shared_page("Killed");
    let mut resources = HashMap::new();
    for i in 0..3 {
        let url = format!("https://graph.example/resources/{i}/$value");
        resources.insert(
            url.clone(),
            Resource {
                url,
                file_name: format!("pic{i}.png"),
                mime: Some("image/png".into()),
                fallback: None,
            },
        );
    }
    let mut blocks = mixed_body("K");
    blocks.insert(
        1,
        media("image", "https://graph.example/resources/0/$value"),
    );
    blocks.push(media("image", "https://graph.example/resources/1/$value"));
    blocks[1 + 1] = item(
        "holder",
        vec![media("image", "https://graph.example/resources/2/$value")],
    );

    // how many requests a whole write takes
    let w = writer(&s);
    let before = requests(&s);
    let page = NewPage {
        parent: &root,
        title: "Reference",
        blocks: &blocks,
        resources: &resources,
    };
    w.create_page(page, &HashSet::new(), false, &noop)
        .await
        .unwrap();
    let total = requests(&s) - before;

    let mut rng = StdRng::seed_from_u64(11);
    for round in 0..16 {
        let title = format!("Round {round}");
        let kill_at = rng.random_range(1..total);
        let start = requests(&s);
        let created: Arc<Mutex<Option<String>>> = Arc::default();
        let task = {
            let (w, root, title, blocks, resources, created) = (
                w.clone(),
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
        let known = created.lock().unwrap().clone();
        // the driver resumes a page it recorded, and looks for one it may have created otherwise
        let id = match known {
            Some(id) => {
                w.resume_body(&id, &blocks, &resources).await.unwrap();
                id
            }
            None => {
                let ours: HashSet<String> = s
                    .pages_under(&root)
                    .into_iter()
                    .filter(|(_, t)| *t != title)
                    .map(|(id, _)| id)
                    .collect();
                let page = NewPage {
                    parent: &root,
                    title: &title,
                    blocks: &blocks,
                    resources: &resources,
                };
                w.create_page(page, &ours, true, &noop).await.unwrap().0
            }
        };
        assert_page(&s, &id, &title, &blocks, &resources);
        eprintln!("round {round}: killed after {kill_at} of {total} requests");
    }
    assert!(s.duplicate_titles(&root).is_empty());
    assert_eq!(s.pages_under(&root).len(), 17);
    assert_eq!(s.counters().validation_errors, 0);
}

#[tokio::test]
async fn a_block_notion_refuses_fails_the_item_with_its_path_and_no_retry() {
    let s = fast_server(8).await;
    let w = writer(&s);
    let root = s.add_shared_page("Bad");
    // Over Notion's 2,000 characters: the converter never makes such a text.
    let bad = para(&"x".repeat(2001));
    let blocks = vec![para("fine"), bad];
    let page = NewPage {
        parent: &root,
        title: "Bad",
        blocks: &blocks,
        resources: &no_resources(),
    };
    let before = requests(&s);
    let err = w
        .create_page(page, &HashSet::new(), false, &noop)
        .await
        .unwrap_err();
    match &err {
        WriteError::Notion(NotionError::Rejected { code, message, .. }) => {
            assert_eq!(code, "validation_error");
            assert!(message.contains("body.children[1].paragraph.rich_text[0].text.content"));
        }
        other => panic!("{other:?}"),
    }
    assert!(err.to_string().contains("validation_error"));
    assert_eq!(requests(&s) - before, 1, "a rejection is not retried");
}

/// `migrate --update`: a page's new body replaces the old one in place, before its subpages (Notion
/// appends at the end unless told where).
#[tokio::test]
async fn a_replaced_body_goes_before_the_subpages() {
    let s = fast_server(41).await;
    let root = s.add_shared_page("Root");
    let w = writer(&s);
    let old: Vec<Block> = (0..3).map(|i| para(&format!("old {i}"))).collect();
    let page = NewPage {
        parent: &root,
        title: "Page",
        blocks: &old,
        resources: &HashMap::new(),
    };
    let (id, _) = w
        .create_page(page, &HashSet::new(), false, &|_: &str| {})
        .await
        .unwrap();
    w.client().create_page(&id, "Subpage", &[]).await.unwrap();

    let new: Vec<Block> = (0..150).map(|i| para(&format!("new {i}"))).collect();
    w.replace_body(&id, &new, &HashMap::new(), None)
        .await
        .unwrap();
    let dump = s.dump(&id).unwrap();
    let kinds: Vec<&str> = dump.children.iter().map(|c| c.kind.as_str()).collect();
    assert_eq!(kinds.len(), 151);
    assert!(kinds[..150].iter().all(|k| *k == "paragraph"), "{kinds:?}");
    assert_eq!(kinds[150], "page");
    let texts: Vec<&str> = dump.children[..150]
        .iter()
        .map(|c| c.text.as_str())
        .collect();
    let want: Vec<String> = (0..150).map(|i| format!("new {i}")).collect();
    assert_eq!(texts, want);
}

#[tokio::test]
async fn a_full_resolution_download_that_is_not_the_files_fault_never_falls_back() {
    let s = fast_server(9).await;
    let root = s.add_shared_page("No fallback");
    let full = "https://graph.example/resources/full/$value";
    let small = "https://graph.example/resources/small/$value";
    let fetched = Arc::new(Mutex::new(Vec::new()));
    let seen = fetched.clone();
    let fetch: notebridge::notion::writer::Fetch = Arc::new(move |r: Resource| {
        seen.lock().unwrap().push(r.url.clone());
        Box::pin(async move {
            // Retries exhausted (an outage, throttling): not the file's own failure.
            Err(notebridge::graph::GraphError::GaveUp {
                account: "test".into(),
                item: format!("file {:?}", r.file_name),
                attempts: 8,
                retries: 7,
                last: "503".into(),
                timed_out: false,
            })
        })
    });
    let w = notebridge::notion::writer::Writer::new(client(&s, 2000, 200), fetch, 5 << 20);
    let resources = HashMap::from([(
        full.to_owned(),
        Resource {
            url: full.into(),
            file_name: "pic.png".into(),
            mime: Some("image/png".into()),
            fallback: Some(small.into()),
        },
    )]);
    let blocks = vec![media("image", full)];
    let page = NewPage {
        parent: &root,
        title: "P",
        blocks: &blocks,
        resources: &resources,
    };
    let err = w
        .create_page(page, &HashSet::new(), false, &noop)
        .await
        .unwrap_err();
    assert!(matches!(err, WriteError::Fetch(_)), "{err}");
    assert_eq!(*fetched.lock().unwrap(), vec![full.to_owned()]);
}

/// An unclear append found not applied is sent again only while the item's one retry budget lasts:
/// its four retries in all, fewer when earlier attempts of the item spent some.
#[tokio::test]
async fn unclear_writes_are_retried_within_the_items_one_retry_budget() {
    use notebridge::failure::Classify;
    let s = fast_server(12).await;
    let root = s.add_shared_page("Budget");
    // Every append answers 504 without being applied.
    s.inject(
        FaultRule::new(FaultKind::Status(504))
            .on(Endpoint::AppendChildren)
            .times(1000),
    );
    let blocks: Vec<Block> = (0..150).map(|i| para(&i.to_string())).collect();
    let appends = |s: &notebridge_testkit::notion::NotionServer| {
        s.request_log()
            .iter()
            .filter(|r| r.endpoint == Endpoint::AppendChildren)
            .count()
    };
    for (spent, sent, retries) in [(0u32, 5usize, 4u32), (3, 2, 1), (4, 1, 0)] {
        let title = format!("Spent {spent}");
        let page = NewPage {
            parent: &root,
            title: &title,
            blocks: &blocks,
            resources: &no_resources(),
        };
        let before = appends(&s);
        let err = writer(&s)
            .after_retries(spent)
            .create_page(page, &HashSet::new(), false, &noop)
            .await
            .unwrap_err();
        assert_eq!(appends(&s) - before, sent, "{spent} spent: {err}");
        assert_eq!(err.retries(), retries, "{err}");
        assert_eq!(spent + err.retries(), 4, "the whole budget spent, no more");
    }
}
