//! Every File Upload step (create, the send of each part, complete) exactly once after an unclear
//! answer: applied then answered 504, applied then the connection dropped, or not applied and
//! answered 504. Each time the file arrives once, whole, attached where it belongs, and a multi-part
//! upload resumes from the part Notion does not hold yet.

use crate::notion_support;

use std::collections::{HashMap, HashSet};
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;
use std::time::Duration;

use notebridge::notion::writer::{NewPage, Resource, Writer};
use notebridge_testkit::notion::uploads::content_hash;
use notebridge_testkit::notion::{
    Endpoint, FaultKind, FaultRule, NotionServer, NotionServerConfig, RateConfig,
};
use notion_support::*;

const PIC: &str = "https://graph.example/r/pic/$value";
const BIG: &str = "https://graph.example/r/big/$value";
/// Just over the single-part limit: three parts (10 MiB, 10 MiB, the rest).
const BIG_BYTES: usize = 21 * 1024 * 1024;

fn resources() -> HashMap<String, Resource> {
    [(PIC, "pic.png", "image/png"), (BIG, "big.mp4", "video/mp4")]
        .into_iter()
        .map(|(u, n, m)| {
            (
                u.to_owned(),
                Resource {
                    url: u.to_owned(),
                    file_name: n.to_owned(),
                    mime: Some(m.to_owned()),
                    fallback: None,
                },
            )
        })
        .collect()
}

fn sizes() -> HashMap<String, usize> {
    [(BIG.to_owned(), BIG_BYTES)].into()
}

fn uploads_writer(s: &NotionServer) -> Writer {
    Writer::new(
        client(s, 2000, 200),
        fetch(sizes(), Arc::new(AtomicUsize::new(0))),
        5 * 1024 * 1024 * 1024,
    )
}

/// Asserts that the media block `node` points at an attached upload holding exactly `url`'s bytes.
fn assert_upload(s: &NotionServer, file: Option<&str>, url: &str, what: &str) {
    let id = file
        .and_then(|f| f.strip_prefix("file_upload:"))
        .unwrap_or_else(|| panic!("{what}: {url} not uploaded: {file:?}"));
    let info = s.upload(id).expect("the upload exists");
    let want = content(url, sizes().get(url).copied().unwrap_or(1000));
    assert_eq!(info.status, "uploaded", "{what}");
    assert!(info.attached, "{what}");
    assert_eq!(info.content_length, Some(want.len() as u64), "{what}");
    assert_eq!(
        info.hash.as_deref(),
        Some(content_hash(&want).as_str()),
        "{what}"
    );
}

fn count(s: &NotionServer, e: Endpoint) -> usize {
    s.request_log().iter().filter(|r| r.endpoint == e).count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_upload_step_after_each_unclear_answer_carries_the_file_once() {
    let kinds = [
        FaultKind::AppliedThen504,
        FaultKind::AppliedThenDrop,
        FaultKind::Status(504),
    ];
    // (step, requests of it let through first): the image's create, the big file's create, the
    // image's send, each of the big file's three parts, the big file's completion.
    let steps = [
        (Endpoint::CreateUpload, 0),
        (Endpoint::CreateUpload, 1),
        (Endpoint::SendUpload, 0),
        (Endpoint::SendUpload, 1),
        (Endpoint::SendUpload, 2),
        (Endpoint::SendUpload, 3),
        (Endpoint::CompleteUpload, 0),
    ];
    let s = fast_server(31).await;
    let root = s.add_shared_page("Uploads");
    let w = uploads_writer(&s);
    let resources = resources();
    let blocks = vec![
        para("a picture and a film"),
        media("image", PIC),
        item("nested", vec![media("file", BIG)]),
    ];
    for kind in &kinds {
        for (ep, skip) in steps {
            let what = format!("{kind:?} on {ep:?} after {skip}");
            let before = s.request_log().len();
            let faults = s.counters().faults;
            s.inject(FaultRule::new(kind.clone()).on(ep).after(skip).times(1));
            let page = NewPage {
                parent: &root,
                title: &what,
                blocks: &blocks,
                resources: &resources,
            };
            let (id, stats) = w
                .create_page(page, &HashSet::new(), false, &|_| {})
                .await
                .unwrap_or_else(|e| panic!("{what}: {e}"));
            assert_eq!(s.counters().faults, faults + 1, "{what}: fired once");
            assert_page(&s, &id, &what, &blocks, &resources);
            assert!(stats.placeholders.is_empty(), "{what}: {stats:?}");
            assert_eq!(stats.files, 2, "{what}");
            let dump = s.dump(&id).unwrap();
            assert_upload(&s, dump.children[1].file.as_deref(), PIC, &what);
            assert_upload(&s, dump.children[2].children[0].file.as_deref(), BIG, &what);
            // Nothing sent twice that had arrived, nothing skipped that had not: a send or a
            // completion is repeated only when Notion did not apply it.
            let log = &s.request_log()[before..];
            let n = |e: Endpoint| log.iter().filter(|r| r.endpoint == e).count();
            let lost = matches!(kind, FaultKind::Status(_));
            let creates = 2 + usize::from(ep == Endpoint::CreateUpload);
            let sends = 4 + usize::from(lost && ep == Endpoint::SendUpload);
            let completes = 1 + usize::from(lost && ep == Endpoint::CompleteUpload);
            let reads = usize::from(ep != Endpoint::CreateUpload);
            assert_eq!(n(Endpoint::CreateUpload), creates, "{what}: creates");
            assert_eq!(n(Endpoint::SendUpload), sends, "{what}: sends");
            assert_eq!(n(Endpoint::CompleteUpload), completes, "{what}: completes");
            assert_eq!(n(Endpoint::GetUpload), reads, "{what}: read-backs");
            assert_eq!(
                log.iter().filter(|r| r.status == 400).count(),
                0,
                "{what}: nothing refused"
            );
        }
    }
    assert_eq!(s.pages_under(&root).len(), kinds.len() * steps.len());
}

#[tokio::test]
async fn an_upload_that_expired_before_its_send_is_made_again() {
    let s = NotionServer::start(NotionServerConfig {
        rate: RateConfig {
            per_second: 10_000.0,
            burst: 10_000,
        },
        upload_expiry: Duration::from_millis(300),
        seed: 32,
        ..Default::default()
    })
    .await;
    let root = s.add_shared_page("Expired");
    s.inject(
        FaultRule::new(FaultKind::Delay(Duration::from_millis(450)))
            .on(Endpoint::SendUpload)
            .times(1),
    );
    let resources = resources();
    let blocks = vec![media("image", PIC)];
    let page = NewPage {
        parent: &root,
        title: "Expired",
        blocks: &blocks,
        resources: &resources,
    };
    let (id, stats) = uploads_writer(&s)
        .create_page(page, &HashSet::new(), false, &|_| {})
        .await
        .unwrap();
    assert!(stats.placeholders.is_empty(), "{stats:?}");
    let dump = s.dump(&id).unwrap();
    assert_upload(&s, dump.children[0].file.as_deref(), PIC, "expired");
    // the late send met an expired upload (400), the read-back said so, a new upload carried it
    let log = s.request_log();
    let sends: Vec<u16> = log
        .iter()
        .filter(|r| r.endpoint == Endpoint::SendUpload)
        .map(|r| r.status)
        .collect();
    assert_eq!(sends, [400, 200]);
    assert_eq!(count(&s, Endpoint::CreateUpload), 2);
    assert_eq!(count(&s, Endpoint::GetUpload), 1);
}

/// Writes a page of one paragraph and the picture with `w`; returns its id and what was written.
async fn write_picture(
    root: &str,
    title: &str,
    w: &Writer,
) -> Result<(String, notebridge::notion::writer::WriteStats), notebridge::notion::writer::WriteError>
{
    let resources = resources();
    let blocks = vec![para("before"), media("image", PIC)];
    let page = NewPage {
        parent: root,
        title,
        blocks: &blocks,
        resources: &resources,
    };
    w.create_page(page, &HashSet::new(), false, &|_| {}).await
}

/// The requests to `e` since `before` in the log.
fn since(s: &NotionServer, before: usize, e: Endpoint) -> usize {
    s.request_log()[before..]
        .iter()
        .filter(|r| r.endpoint == e)
        .count()
}

#[tokio::test]
async fn a_send_whose_answer_is_lost_is_looked_up_not_sent_again_even_with_no_retry_left() {
    let s = fast_server(33).await;
    let root = s.add_shared_page("Lost answers");
    for kind in [FaultKind::AppliedThenDrop, FaultKind::AppliedThen504] {
        let what = format!("{kind:?}");
        s.inject(FaultRule::new(kind).on(Endpoint::SendUpload).times(1));
        let before = s.request_log().len();
        // Earlier attempts spent the item's whole budget: a look is not a retry, so the upload
        // still completes from what Notion says it holds.
        let (id, stats) = write_picture(&root, &what, &uploads_writer(&s).after_retries(4))
            .await
            .unwrap_or_else(|e| panic!("{what}: {e}"));
        assert!(stats.placeholders.is_empty(), "{what}: {stats:?}");
        assert_eq!(
            since(&s, before, Endpoint::SendUpload),
            1,
            "{what}: sent once"
        );
        assert_eq!(
            since(&s, before, Endpoint::GetUpload),
            1,
            "{what}: looked up"
        );
        assert_eq!(since(&s, before, Endpoint::CreateUpload), 1, "{what}");
        let dump = s.dump(&id).unwrap();
        assert_upload(&s, dump.children[1].file.as_deref(), PIC, &what);
    }
}

#[tokio::test]
async fn a_persistently_failing_upload_stops_after_the_items_budget_and_leaves_a_placeholder() {
    let s = fast_server(34).await;
    let root = s.add_shared_page("Failing uploads");
    // (step failing, retries the item's earlier attempts spent, requests of that step sent): the
    // first attempt and the budget's 4 retries in all, whichever layer makes them; a send is read
    // back after each failure (Notion may have applied it) and a creation is retried by the client.
    let cases = [
        (Endpoint::SendUpload, 0u32, 5usize),
        (Endpoint::SendUpload, 2, 3),
        (Endpoint::SendUpload, 4, 1),
        (Endpoint::CreateUpload, 0, 5),
        (Endpoint::CreateUpload, 3, 2),
    ];
    for (ep, spent, sent) in cases {
        let what = format!("{ep:?} failing, {spent} spent");
        s.clear_faults();
        s.inject(FaultRule::new(FaultKind::Status(503)).on(ep));
        let before = s.request_log().len();
        let (id, stats) = write_picture(&root, &what, &uploads_writer(&s).after_retries(spent))
            .await
            .unwrap_or_else(|e| panic!("{what}: the page is not failed for its file: {e}"));
        assert_eq!(since(&s, before, ep), sent, "{what}: attempts");
        let reads = if ep == Endpoint::SendUpload { sent } else { 0 };
        assert_eq!(since(&s, before, Endpoint::GetUpload), reads, "{what}");
        if ep == Endpoint::SendUpload {
            assert_eq!(since(&s, before, Endpoint::CreateUpload), 1, "{what}");
        }
        assert_eq!(stats.files, 0, "{what}");
        assert_eq!(stats.placeholders.len(), 1, "{what}: {stats:?}");
        assert!(
            stats.placeholders[0].starts_with("pic.png: Notion kept failing"),
            "{what}: {stats:?}"
        );
        let dump = s.dump(&id).unwrap();
        assert_eq!(dump.children.len(), 2, "{what}");
        assert!(
            dump.children[1]
                .text
                .starts_with(&placeholder_text("pic.png")),
            "{what}: {:?}",
            dump.children[1]
        );
    }
}

#[tokio::test]
async fn an_uploads_client_retries_and_its_resends_spend_one_budget() {
    let s = fast_server(35).await;
    let root = s.add_shared_page("One budget");
    // The creation fails twice (the client retries it), then every send fails (not applied, the
    // upload sends it again): two retries below leave the upload two of the four.
    s.inject(
        FaultRule::new(FaultKind::Status(503))
            .on(Endpoint::CreateUpload)
            .times(2),
    );
    s.inject(FaultRule::new(FaultKind::Status(503)).on(Endpoint::SendUpload));
    let before = s.request_log().len();
    let (_, stats) = write_picture(&root, "One budget", &uploads_writer(&s))
        .await
        .unwrap();
    assert_eq!(since(&s, before, Endpoint::CreateUpload), 3);
    assert_eq!(since(&s, before, Endpoint::SendUpload), 3);
    assert_eq!(since(&s, before, Endpoint::GetUpload), 3);
    assert_eq!(stats.placeholders.len(), 1, "{stats:?}");
    // The page's own appends are a step of their own: a failure of one is retried with a whole
    // budget (the upload's spending is not taken from it).
    s.clear_faults();
    s.inject(
        FaultRule::new(FaultKind::Status(504))
            .on(Endpoint::AppendChildren)
            .times(4),
    );
    let resources = resources();
    let blocks: Vec<notebridge::convert::Block> = std::iter::once(media("image", PIC))
        .chain((0..150).map(|i| para(&i.to_string())))
        .collect();
    let page = NewPage {
        parent: &root,
        title: "Appends",
        blocks: &blocks,
        resources: &resources,
    };
    let before = s.request_log().len();
    let (id, stats) = uploads_writer(&s)
        .create_page(page, &HashSet::new(), false, &|_| {})
        .await
        .unwrap();
    assert_eq!(since(&s, before, Endpoint::AppendChildren), 5);
    assert!(stats.placeholders.is_empty(), "{stats:?}");
    assert_page(&s, &id, "Appends", &blocks, &resources);
}
