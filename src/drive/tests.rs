//! The client against the model of the drive API (`model_server`): finding a notebook's files,
//! downloads and their resumption, and what each refusal means. Real sockets need tokio's real
//! clock; every pause the client takes is a setting shortened here (the pacer's timing is tested on
//! the paused clock in `pacer`).

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};

use super::model_server::{serve, Model, Node, Shared};
use super::*;
use crate::failure::Classify;
use crate::failure::Meaning;
use crate::limiter::Lane;
use crate::settings::{DefaultDirs, FlagSettings};
use crate::store::accounts::Account;

const WEB_URL: &str =
    "https://contoso-my.sharepoint.com/personal/alice/_layouts/15/Doc.aspx?sourcedoc={7c4a}&action=edit";

struct World {
    model: Shared,
    client: DriveClient,
    db: Arc<Db>,
    who: Caller,
    dir: tempfile::TempDir,
}

/// Bytes that tell where each one sits in the file.
fn bytes(n: usize, seed: u8) -> Vec<u8> {
    (0..n).map(|i| (i as u8).wrapping_mul(31) ^ seed).collect()
}

/// A notebook with two sections at the top (one listed after the table of contents), a section
/// group holding one section and a group of its own, and the recycle bin.
fn notebook() -> Model {
    let mut items = HashMap::new();
    let mut add = |id: &str, n: Node| {
        items.insert(id.to_owned(), n);
    };
    add(
        "nb",
        Node::Notebook(
            "Work".into(),
            ["s-math", "toc", "g-term", "bin", "s-notes"]
                .map(String::from)
                .to_vec(),
        ),
    );
    add("s-math", Node::File("Math.one".into(), bytes(3000, 1)));
    add(
        "toc",
        Node::File("Open Notebook.onetoc2".into(), bytes(10, 2)),
    );
    add(
        "g-term",
        Node::Folder("Term 1".into(), vec!["s-week".into(), "g-deep".into()]),
    );
    add("s-week", Node::File("Week 1.one".into(), bytes(700, 3)));
    add("g-deep", Node::Folder("Deep".into(), vec!["s-in".into()]));
    add("s-in", Node::File("Inner.one".into(), bytes(0, 4)));
    add(
        "bin",
        Node::Folder("OneNote_RecycleBin".into(), vec!["s-old".into()]),
    );
    add("s-old", Node::File("Old.one".into(), bytes(5, 5)));
    add("s-notes", Node::File("Notes.one".into(), bytes(1500, 6)));
    Model {
        drive_id: "b!drive".into(),
        items,
        shares: HashMap::from([(WEB_URL.to_owned(), "nb".to_owned())]),
        token: "tok-1".into(),
        next_token: Some("tok-2".into()),
        page_size: 2,
        ..Model::default()
    }
}

async fn world(model: Model) -> World {
    let model = Arc::new(Mutex::new(model));
    let base = serve(model.clone()).await;
    let dir = tempfile::tempdir().unwrap();
    let env: HashMap<String, String> = [
        (
            "NOTEBRIDGE_DB",
            dir.path().join("state.db").display().to_string(),
        ),
        ("NOTEBRIDGE_CLIENT_ID", "model-client".into()),
        ("NOTEBRIDGE_GRAPH_URL", format!("{base}/v1.0")),
        ("NOTEBRIDGE_AUTHORITY_URL", base.clone()),
        ("NOTEBRIDGE_RETRY_PAUSE", "1ms".into()),
        ("NOTEBRIDGE_DRIVE_THROTTLE_WAIT", "1ms".into()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v))
    .collect();
    let settings =
        Settings::resolve(&FlagSettings::default(), &env, DefaultDirs::default()).unwrap();
    let db = Arc::new(Db::open(&settings.db_path).unwrap());
    let clock = Clock::system();
    db.save_account(&Account {
        name: "alice".into(),
        user_id: "u-alice".into(),
        user_principal_name: "alice@contoso.com".into(),
        display_name: None,
        refresh_token: Some("rt-1".into()),
        access_token: Some("tok-1".into()),
        access_expires_at: Some(clock.now_ms() + 3_600_000),
        updated_at: clock.now_ms(),
    })
    .unwrap();
    let jitter = Jitter::seeded(3);
    let tokens = TokenSource::with_network(
        db.clone(),
        &settings,
        clock.clone(),
        Reachability::new(clock.clone()),
        jitter.clone(),
    )
    .unwrap();
    let client = DriveClient::open(db.clone(), &settings, tokens, clock, jitter);
    let who = Caller {
        account: "alice".into(),
        user_id: "u-alice".into(),
        lane: Lane::Background,
        deadline: None,
        retries: None,
    };
    World {
        model,
        client,
        db,
        who,
        dir,
    }
}

impl World {
    fn file(&self, id: &str) -> Vec<u8> {
        match &self.model.lock().unwrap().items[id] {
            Node::File(_, b) => b.clone(),
            Node::Notebook(..) | Node::Folder(..) => panic!("{id} is not a file"),
        }
    }

    fn section(&self, id: &str) -> SectionFile {
        SectionFile {
            path: vec![id.to_owned()],
            drive_id: "b!drive".into(),
            item_id: id.to_owned(),
            size: self.file(id).len() as u64,
            ctag: None,
            modified: None,
        }
    }

    fn dest(&self, name: &str) -> std::path::PathBuf {
        self.dir.path().join("sections").join(name)
    }

    fn seen(&self) -> Vec<super::model_server::Seen> {
        self.model.lock().unwrap().seen.clone()
    }
}

fn read(p: &Path) -> Vec<u8> {
    std::fs::read(p).unwrap()
}

#[tokio::test]
async fn a_notebooks_sections_are_found_through_paged_nested_listings() {
    let w = world(notebook()).await;
    let files = w.client.notebook_files(&w.who, WEB_URL).await.unwrap();
    assert_eq!(
        (files.drive_id.as_str(), files.folder_id.as_str()),
        ("b!drive", "nb")
    );
    let found: Vec<(String, &str, u64)> = files
        .sections
        .iter()
        .map(|s| (s.path.join("/"), s.item_id.as_str(), s.size))
        .collect();
    assert_eq!(
        found,
        vec![
            ("Math".to_owned(), "s-math", 3000),
            ("Notes".to_owned(), "s-notes", 1500),
            ("Term 1/Week 1".to_owned(), "s-week", 700),
            ("Term 1/Deep/Inner".to_owned(), "s-in", 0),
        ]
    );
    assert!(files.sections[0].ctag.is_some() && files.sections[0].modified.is_some());
    // One share, three pages of the notebook's five children (two a page), one of the group's
    // two, one of the inner group's; the recycle bin is not listed.
    let seen = w.seen();
    let paths: Vec<&str> = seen.iter().map(|s| s.path.as_str()).collect();
    assert_eq!(paths.len(), 6, "{paths:?}");
    assert!(paths[0].starts_with("/shares/u!"));
    assert!(!paths.iter().any(|p| p.contains("/bin/")));
    assert!(seen
        .iter()
        .all(|s| s.auth.as_deref() == Some("Bearer tok-1")));
    assert_eq!(w.client.counters().requests, 6);
    // None of them spent the OneNote limiter's windows.
    let spent: i64 = w
        .db
        .read("counting", |c| {
            c.query_row(
                "SELECT (SELECT count(*) FROM limiter_ledger) + (SELECT count(*) FROM limiter_inflight)",
                [],
                |r| r.get(0),
            )
        })
        .unwrap();
    assert_eq!(spent, 0);
}

#[tokio::test]
async fn a_url_that_is_no_notebook_or_not_shared_falls_back() {
    let mut m = notebook();
    m.shares.insert("https://x/file".into(), "s-math".into());
    let w = world(m).await;
    let not_nb = w
        .client
        .notebook_files(&w.who, "https://x/file")
        .await
        .unwrap_err();
    assert!(
        matches!(not_nb, DriveError::NotANotebook { .. }),
        "{not_nb}"
    );
    let unknown = w
        .client
        .notebook_files(&w.who, "https://x/none")
        .await
        .unwrap_err();
    assert!(
        matches!(unknown, DriveError::NotFound { status: 404, .. }),
        "{unknown}"
    );
    assert!(not_nb.falls_back() && unknown.falls_back());
}

#[tokio::test]
async fn a_section_is_streamed_whole_and_the_token_never_goes_to_the_download_url() {
    let w = world(notebook()).await;
    let dest = w.dest("math.one");
    let n = w
        .client
        .download(&w.who, &w.section("s-math"), &dest)
        .await
        .unwrap();
    assert_eq!(n, 3000);
    assert_eq!(read(&dest), w.file("s-math"));
    assert!(!download::part_path(&dest).exists());
    let seen = w.seen();
    assert_eq!(seen.len(), 2);
    assert_eq!(seen[0].auth.as_deref(), Some("Bearer tok-1"));
    assert!(seen[1].path.starts_with("/download/"));
    assert_eq!(
        seen[1].auth, None,
        "the pre-authenticated URL gets no token"
    );
    let c = w.client.counters();
    assert_eq!((c.requests, c.downloads, c.bytes), (1, 1, 3000));
    // Asked again, the whole file is there: no request.
    w.client
        .download(&w.who, &w.section("s-math"), &dest)
        .await
        .unwrap();
    assert_eq!(w.seen().len(), 2);
    // An empty section is a file too.
    let empty = w.dest("inner.one");
    assert_eq!(
        w.client
            .download(&w.who, &w.section("s-in"), &empty)
            .await
            .unwrap(),
        0
    );
    assert_eq!(read(&empty), Vec::<u8>::new());
}

#[tokio::test]
async fn a_partial_file_left_by_a_killed_run_is_resumed_with_a_range() {
    let w = world(notebook()).await;
    let dest = w.dest("math.one");
    std::fs::create_dir_all(dest.parent().unwrap()).unwrap();
    std::fs::write(download::part_path(&dest), &w.file("s-math")[..1200]).unwrap();
    w.client
        .download(&w.who, &w.section("s-math"), &dest)
        .await
        .unwrap();
    assert_eq!(read(&dest), w.file("s-math"));
    let seen = w.seen();
    assert_eq!(seen[1].range.as_deref(), Some("bytes=1200-"));
    let c = w.client.counters();
    assert_eq!((c.resumed, c.bytes), (1, 1800), "only the rest was fetched");
}

#[tokio::test]
async fn a_cut_transfer_goes_on_from_where_it_stopped() {
    let mut m = notebook();
    m.cut_after = Some((1000, 2));
    let w = world(m).await;
    let dest = w.dest("math.one");
    w.client
        .download(&w.who, &w.section("s-math"), &dest)
        .await
        .unwrap();
    assert_eq!(read(&dest), w.file("s-math"));
    let ranges: Vec<Option<String>> = w.seen().into_iter().skip(1).map(|s| s.range).collect();
    assert_eq!(
        ranges,
        vec![None, Some("bytes=1000-".into()), Some("bytes=2000-".into())]
    );
    let c = w.client.counters();
    assert_eq!((c.retries, c.resumed, c.bytes), (2, 2, 3000));
}

#[tokio::test]
async fn a_200_to_a_range_request_starts_the_file_over() {
    let mut m = notebook();
    m.ignore_range = true;
    let w = world(m).await;
    let dest = w.dest("math.one");
    std::fs::create_dir_all(dest.parent().unwrap()).unwrap();
    std::fs::write(download::part_path(&dest), &w.file("s-math")[..500]).unwrap();
    w.client
        .download(&w.who, &w.section("s-math"), &dest)
        .await
        .unwrap();
    assert_eq!(
        read(&dest),
        w.file("s-math"),
        "written once, from its start"
    );
    assert_eq!(w.client.counters().resumed, 0);
}

#[tokio::test]
async fn a_body_longer_than_listed_is_a_failure_not_a_success() {
    let mut m = notebook();
    m.extra = vec![0; 10];
    let w = world(m).await;
    let dest = w.dest("math.one");
    let err = w
        .client
        .download(&w.who, &w.section("s-math"), &dest)
        .await
        .unwrap_err();
    assert!(matches!(err, DriveError::TransferFailed { .. }), "{err}");
    assert!(err.falls_back());
    assert_eq!(err.retries(), 4, "the item's retries, spent");
    assert!(!dest.exists());
}

#[tokio::test]
async fn a_file_over_2_gb_is_refused_before_any_request() {
    let w = world(notebook()).await;
    let mut big = w.section("s-math");
    big.size = download::MAX_DOWNLOAD + 1;
    let err = w
        .client
        .download(&w.who, &big, &w.dest("big.one"))
        .await
        .unwrap_err();
    assert!(matches!(err, DriveError::TooLarge { .. }) && err.falls_back());
    assert!(w.seen().is_empty());
    big.size = download::MAX_DOWNLOAD;
    assert!(!matches!(
        w.client
            .download(&w.who, &big, &w.dest("big.one"))
            .await
            .unwrap_err(),
        DriveError::TooLarge { .. }
    ));
}

#[tokio::test]
async fn throttles_pause_the_account_and_spend_no_retry() {
    let mut m = notebook();
    m.faults = [(429, Some("0")), (503, None), (503, Some("0"))].into();
    let w = world(m).await;
    let dest = w.dest("math.one");
    w.client
        .download(&w.who, &w.section("s-math"), &dest)
        .await
        .unwrap();
    assert_eq!(read(&dest), w.file("s-math"));
    let c = w.client.counters();
    assert_eq!((c.throttled, c.retries), (3, 0));
    assert_eq!(
        w.db.drive_breaker(&pacer::scope("u-alice")).unwrap(),
        None,
        "the answer after the pause closed the breaker"
    );
}

#[tokio::test]
async fn a_401_refreshes_the_token_once() {
    let mut m = notebook();
    m.token = "tok-2".into();
    m.next_token = None;
    let w = world(m).await;
    // The stored token is refused; the sign-in service refuses the refresh too.
    let err = w.client.notebook_files(&w.who, WEB_URL).await.unwrap_err();
    assert_eq!(err.meaning(), Some(Meaning::SignIn), "{err}");
    assert!(!err.falls_back());
    // With a refresh that works, the request goes on with the new token.
    let mut m = notebook();
    m.token = "tok-0".into();
    m.next_token = Some("tok-0".into());
    let w = world(m).await;
    w.client.notebook_files(&w.who, WEB_URL).await.unwrap();
    let auth: Vec<Option<String>> = w.seen().into_iter().map(|s| s.auth).collect();
    assert_eq!(auth[0].as_deref(), Some("Bearer tok-1"));
    assert!(auth[1..]
        .iter()
        .all(|a| a.as_deref() == Some("Bearer tok-0")));
}

#[tokio::test]
async fn a_refusal_falls_back_and_a_server_error_is_retried_then_falls_back() {
    let mut m = notebook();
    m.faults = [(403, None)].into();
    let w = world(m).await;
    let err = w
        .client
        .download(&w.who, &w.section("s-math"), &w.dest("m.one"))
        .await
        .unwrap_err();
    assert!(
        matches!(err, DriveError::Forbidden { status: 403, .. }),
        "{err}"
    );
    assert!(err.falls_back());
    let mut m = notebook();
    m.faults = vec![(500, None); 5].into();
    let w = world(m).await;
    let err = w.client.notebook_files(&w.who, WEB_URL).await.unwrap_err();
    assert!(
        matches!(
            err,
            DriveError::TransferFailed {
                attempts: 5,
                retries: 4,
                ..
            }
        ),
        "{err}"
    );
    assert!(err.falls_back());
}

#[tokio::test]
async fn an_unreachable_graph_stops_the_run_at_its_deadline() {
    let w = world(notebook()).await;
    // A port nothing listens on.
    let closed = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = closed.local_addr().unwrap();
    drop(closed);
    let mut client = w.client.clone();
    client.base = format!("http://{addr}/v1.0").into();
    client
        .reach
        .set_deadline(Some(Clock::system().now_ms() + 100));
    let err = client.notebook_files(&w.who, WEB_URL).await.unwrap_err();
    assert!(matches!(err, DriveError::Unreachable(_)), "{err}");
    assert_eq!(err.class(), crate::failure::Class::stop_run());
}

#[tokio::test]
async fn a_file_the_service_keeps_refusing_with_503_falls_back() {
    let mut m = notebook();
    // As the download of a OneNote file over 2 GB answers, however often it is asked.
    m.faults = vec![(503, Some("0")); 20].into();
    let w = world(m).await;
    let err = w
        .client
        .download(&w.who, &w.section("s-math"), &w.dest("m.one"))
        .await
        .unwrap_err();
    assert!(
        matches!(err, DriveError::TransferFailed { retries: 0, .. }),
        "{err}"
    );
    assert!(err.falls_back());
    assert_eq!(w.client.counters().throttled, u64::from(MAX_THROTTLED));
}

#[test]
fn ids_stay_one_path_segment() {
    assert_eq!(enc("b!x-Y_z"), "b!x-Y_z");
    assert_eq!(enc("a/b c?d#e"), "a%2Fb%20c%3Fd%23e");
    assert_eq!(enc(".."), "%2E%2E");
}

#[tokio::test]
async fn an_answer_that_goes_quiet_times_out_and_goes_on_with_a_range() {
    let mut m = notebook();
    m.stall_after = Some((1000, 1));
    let w = world(m).await;
    let client = w
        .client
        .clone()
        .with_timeout(std::time::Duration::from_millis(50));
    let dest = w.dest("math.one");
    client
        .download(&w.who, &w.section("s-math"), &dest)
        .await
        .unwrap();
    assert_eq!(read(&dest), w.file("s-math"));
    assert_eq!(w.seen()[2].range.as_deref(), Some("bytes=1000-"));
    assert_eq!(client.counters().retries, 1);
}
