//! What each step of a page's write learned is in the state database as it is learned: a migration
//! stopped in the middle of one big page (the workspace's block limit, through the real binary)
//! resumes by skipping the finished steps, without listing them in Notion again; only the step in
//! doubt is looked up, no block is written twice, and `verify` finds the page complete.

use crate::migrate_support;

use crate::bin_support::Start;
use axum::body::Bytes;
use axum::http::HeaderValue;
use migrate_support::{command, State};
use notebridge::store::Db;
use notebridge_testkit::generator::{generate, NotebookSpec};
use notebridge_testkit::lab::{Lab, LabConfig};
use notebridge_testkit::notion::Endpoint;

/// Lists whose 120 items each have an item of their own: each list goes bare in the page's
/// creation and its items are appended under it in two steps (100 + 20), so the steps have six
/// parents and looking them up again would list each.
fn big_page() -> Bytes {
    let mut body = String::new();
    for k in 0..6 {
        body.push_str(&format!("<ul><li>list {k}<ul>"));
        for j in 0..120 {
            body.push_str(&format!(
                "<li>item {k}.{j}<ul><li>leaf {k}.{j}</li></ul></li>"
            ));
        }
        body.push_str("</ul></li></ul>\n");
    }
    Bytes::from(format!(
        "<html><head><title>Big</title></head><body>{body}</body></html>"
    ))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_migration_stopped_mid_page_resumes_without_relisting_finished_steps() {
    let lab = Lab::start(LabConfig {
        notion_per_second: 150,
        ..LabConfig::default()
    })
    .await;
    let spec = NotebookSpec {
        sections_per_container: 1,
        pages_per_section: 1,
        images_per_page: 0,
        subpage_ratio: 0.0,
        seed: 33,
        ..NotebookSpec::default()
    };
    let notes = generate(&spec);
    let page_id = notes.pages[0].id.clone();
    let user = lab.add_user("default", notes);
    let html = big_page();
    let content = format!("/pages/{page_id}/content");
    let proxy =
        crate::graph_proxy::start(lab.graph.base_url(), move |path, status, headers, body| {
            if !path.contains(&content) || !status.is_success() {
                return body;
            }
            headers.insert(
                "content-type",
                HeaderValue::from_static("text/html; charset=utf-8"),
            );
            html.clone()
        })
        .await;
    let state = State::new();
    lab.sign_in(&Db::open(&state.db).unwrap(), "default", &user);
    let run = |args: &[&str]| {
        let mut c = command(&lab, &state, args);
        c.env(notebridge::settings::env::GRAPH_URL, &proxy);
        c
    };

    // Room for the notebook's and section's pages, the page's creation and about four appends
    // (of 200 and 40 elements), not for all twelve: the run stops mid-page.
    lab.notion
        .set_block_limit(Some(lab.notion.block_count() + 2 + 7 + 480 + 10));
    let out = run(&["migrate", "--to", &lab.target_page])
        .run_to_end()
        .await;
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("workspace block limit"), "{err}");
    let appends = |from: usize| {
        lab.notion.request_log()[from..]
            .iter()
            .filter(|r| r.endpoint == Endpoint::AppendChildren && r.status == 200)
            .count()
    };
    let before = appends(0);
    assert!(
        (2..12).contains(&before),
        "stopped mid-page after {before} appends"
    );

    lab.notion.set_block_limit(None);
    let from = lab.notion.request_log().len();
    let out = run(&["migrate", "--resume"]).run_to_end().await;
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let log = lab.notion.request_log()[from..].to_vec();
    // Once its body is written the page is read once more, whole, for its fingerprint (what a
    // later `--update` compares with): that listing is after the last append.
    let last_append = log
        .iter()
        .rposition(|r| r.endpoint == Endpoint::AppendChildren)
        .unwrap_or(0);
    let listings: Vec<&str> = log[..last_append]
        .iter()
        .filter(|r| r.endpoint == Endpoint::ListChildren)
        .map(|r| r.path.as_str())
        .collect();
    assert_eq!(
        listings.len(),
        1,
        "only the step in doubt is looked up: {listings:?}"
    );
    // 1 creation + 12 appends in the plan: those made before the stop are not made again.
    assert_eq!(appends(from), 12 - before);
    assert_eq!(
        log.iter()
            .filter(|r| r.endpoint == Endpoint::CreatePage)
            .count(),
        0
    );

    let db = Db::open(&state.db).unwrap();
    let notion_page = db
        .notion_item("default", &page_id)
        .unwrap()
        .unwrap()
        .into_page_id()
        .unwrap();
    let dump = lab.notion.dump(&notion_page).unwrap();
    // The page's "Last modified" line, then the lists.
    let lists: Vec<_> = dump
        .children
        .iter()
        .filter(|c| c.text.starts_with("list "))
        .collect();
    assert_eq!(dump.children.len(), 7);
    assert!(dump.children[0].text.starts_with("Last modified"));
    assert_eq!(
        lists.len(),
        6,
        "{:?}",
        dump.children.iter().map(|c| &c.text).collect::<Vec<_>>()
    );
    for (k, list) in lists.into_iter().enumerate() {
        assert_eq!(list.text, format!("list {k}"));
        let items: Vec<&str> = list.children.iter().map(|c| c.text.as_str()).collect();
        let want: Vec<String> = (0..120).map(|j| format!("item {k}.{j}")).collect();
        assert_eq!(items, want, "list {k}: every item once, in order");
        assert!(list.children.iter().all(|c| c.children.len() == 1));
    }
    assert!(
        db.recorded_steps("default", &page_id).unwrap().is_empty(),
        "a written page's steps are forgotten"
    );
    let out = run(&["verify"]).run_to_end().await;
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}
