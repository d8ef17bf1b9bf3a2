//! The drive client (`notebridge::drive`) against the Graph test server's drive API: a notebook's
//! folder found by its path with the default `Files.Read` (through the shares API only for a
//! sign-in that may write), walked through paged, nested listings, and its section files streamed,
//! resumed and refused as the service does. Real sockets need tokio's real clock: every pause the
//! client takes is a setting shortened here (the pacer's timing is tested on the paused clock in
//! `drive::pacer`).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use notebridge::auth::TokenSource;
use notebridge::clock::{Clock, Jitter};
use notebridge::drive::{
    self, DriveClient, DriveError, DriveOwner, NotebookFiles, NotebookLinks, SectionFile,
};
use notebridge::failure::{Class, Classify, Meaning};
use notebridge::graph::Caller;
use notebridge::limiter::Lane;
use notebridge::net::Reachability;
use notebridge::settings::{env, DefaultDirs, FlagSettings, Settings};
use notebridge::store::Db;
use notebridge_testkit::graph::drive::{drive_web_url, FilesNotebook};
use notebridge_testkit::graph::teams::{group_key, TeamGroup};
use notebridge_testkit::lab::{onenote_fixture, Lab, LabConfig, SIGN_IN_SCOPES, TEAM_SCOPES};
use notebridge_testkit::TestUser;

/// A sign-in that may use the shares API (its least privileged scope).
const WRITE_SCOPES: &[&str] = &[
    "offline_access",
    "User.Read",
    "Notes.Read",
    "Files.ReadWrite",
];
/// A sign-in without any `Files` or `Sites` scope.
const NOTES_ONLY: &[&str] = &["offline_access", "User.Read", "Notes.Read"];

struct World {
    lab: Lab,
    nb: FilesNotebook,
    user: TestUser,
    client: DriveClient,
    db: Arc<Db>,
    who: Caller,
    dir: tempfile::TempDir,
    /// The empty section file beside the others.
    blank: String,
}

/// A notebook folder: `Math` and `Notes` at the top, a section group `Term 1` holding `Week 1` and
/// a group `Deep` holding `Inner`, and the recycle bin.
fn notebook_folder(dir: &Path) -> PathBuf {
    let root = dir.join("Work");
    std::fs::create_dir_all(root.join("Term 1").join("Deep")).unwrap();
    std::fs::create_dir_all(root.join("OneNote_RecycleBin")).unwrap();
    let samples = "onenote.rs/samples";
    for (from, to) in [
        (
            format!("{samples}/New Section Group/New Section 1.one"),
            "Math.one",
        ),
        ("apache-tika/testOneNote2016.one".into(), "Notes.one"),
        ("apache-tika/testOneNote.one".into(), "Term 1/Week 1.one"),
        (
            "apache-tika/testOneNote4.one".into(),
            "Term 1/Deep/Inner.one",
        ),
        (
            format!("{samples}/OneNote_RecycleBin/OneNote_DeletedPages.one"),
            "OneNote_RecycleBin/OneNote_DeletedPages.one",
        ),
    ] {
        std::fs::copy(onenote_fixture(&from), root.join(to)).unwrap();
    }
    root
}

/// Settings pointing at the lab, with the client's pauses shortened and the sign-in's `scopes`.
fn settings(lab: &Lab, db: &Path, scopes: &[&str], extra: &[(&str, String)]) -> Settings {
    let mut e = lab.env();
    e.insert(env::RETRY_PAUSE.into(), "1ms".into());
    e.insert(env::DRIVE_THROTTLE_WAIT.into(), "1ms".into());
    e.insert(env::SCOPES.into(), scopes.join(" "));
    for (k, v) in extra {
        e.insert((*k).to_owned(), v.clone());
    }
    let flags = FlagSettings {
        db: Some(db.to_owned()),
        config: None,
    };
    Settings::resolve(&flags, &e, DefaultDirs::default()).unwrap()
}

/// A client on `db` as `settings` say, and the run's record of unreachable services it waits on.
fn client(db: &Arc<Db>, settings: &Settings) -> (DriveClient, Reachability) {
    let clock = Clock::system();
    let reach = Reachability::new(clock.clone());
    let tokens = TokenSource::with_network(
        db.clone(),
        settings,
        clock.clone(),
        reach.clone(),
        Jitter::seeded(3),
    )
    .unwrap();
    let client = DriveClient::open(db.clone(), settings, tokens, clock, Jitter::seeded(3));
    (client, reach)
}

async fn world() -> World {
    world_with(SIGN_IN_SCOPES).await
}

/// Alice's notebook `Work` in her drive (listed two children a page), with an empty section and a
/// table of contents beside its sections, signed in with `scopes`.
async fn world_with(scopes: &[&str]) -> World {
    let lab = Lab::start(LabConfig::default()).await;
    let dir = tempfile::tempdir().unwrap();
    let (user, nb) = lab.add_files_user("alice", "Work", &notebook_folder(dir.path()));
    lab.graph.set_drive_page_size(2);
    let deep = &nb
        .groups
        .iter()
        .find(|g| g.trail == ["Term 1", "Deep"])
        .expect("the inner group is a folder")
        .item_id;
    let blank = lab.graph.add_drive_file(&user.id, deep, "Blank.one", &[]);
    // The table of contents of another notebook: the reader would follow it, the walk leaves it.
    let toc = std::fs::read(onenote_fixture(
        "onenote.rs/samples/New Section Group/Open Notebook.onetoc2",
    ))
    .unwrap();
    lab.graph
        .add_drive_file(&user.id, &nb.item_id, "Open Notebook.onetoc2", &toc);
    let path = dir.path().join("state.db");
    let db = Arc::new(Db::open(&path).unwrap());
    lab.sign_in_with(&db, "alice", &user, scopes);
    let (client, _) = client(&db, &settings(&lab, &path, scopes, &[]));
    let who = Caller::for_account(&db, "alice", Lane::Background).unwrap();
    World {
        lab,
        nb,
        user,
        client,
        db,
        who,
        dir,
        blank,
    }
}

impl World {
    fn links(&self) -> NotebookLinks {
        NotebookLinks {
            web_url: Some(self.nb.web_url.clone()),
            client_url: Some(self.nb.client_url.clone()),
            owner: DriveOwner::Me,
        }
    }

    async fn files(&self) -> NotebookFiles {
        self.client.locate(&self.who, &self.links()).await.unwrap()
    }

    /// The section file whose name is `name`, as the drive lists it.
    async fn section(&self, name: &str) -> SectionFile {
        let files = self.files().await;
        files
            .sections
            .into_iter()
            .find(|s| s.path.last().map(String::as_str) == Some(name))
            .unwrap_or_else(|| panic!("no section {name}"))
    }

    /// The bytes the drive holds for section `name`.
    fn bytes(&self, name: &str) -> Vec<u8> {
        self.nb
            .sections
            .iter()
            .find(|s| s.name == name)
            .map(|s| s.bytes.to_vec())
            .unwrap_or_default()
    }

    fn item(&self, name: &str) -> String {
        self.nb
            .sections
            .iter()
            .find(|s| s.name == name)
            .map(|s| s.item_id.clone())
            .unwrap_or_else(|| panic!("no section {name}"))
    }

    fn dest(&self, name: &str) -> PathBuf {
        self.dir.path().join("sections").join(name)
    }

    /// The drive requests so far, as paths.
    fn log(&self) -> Vec<String> {
        self.lab
            .graph
            .drive_log()
            .into_iter()
            .map(|e| e.path)
            .collect()
    }
}

fn read(p: &Path) -> Vec<u8> {
    std::fs::read(p).unwrap()
}

#[tokio::test]
async fn a_notebooks_sections_are_found_by_path_through_paged_nested_listings() {
    let w = world().await;
    let files = w.files().await;
    assert_eq!(
        (files.drive_id.as_str(), files.folder_id.as_str()),
        (w.nb.drive_id.as_str(), w.nb.item_id.as_str())
    );
    let found: Vec<(String, &str, u64)> = files
        .sections
        .iter()
        .map(|s| (s.path.join("/"), s.item_id.as_str(), s.size))
        .collect();
    let size = |n: &str| w.bytes(n).len() as u64;
    let (math, notes, week, inner) = (
        w.item("Math"),
        w.item("Notes"),
        w.item("Week 1"),
        w.item("Inner"),
    );
    assert_eq!(
        found,
        vec![
            ("Math".to_owned(), math.as_str(), size("Math")),
            ("Notes".to_owned(), notes.as_str(), size("Notes")),
            ("Term 1/Week 1".to_owned(), week.as_str(), size("Week 1")),
            ("Term 1/Deep/Blank".to_owned(), w.blank.as_str(), 0),
            (
                "Term 1/Deep/Inner".to_owned(),
                inner.as_str(),
                size("Inner")
            ),
        ]
    );
    assert!(files
        .sections
        .iter()
        .all(|s| s.ctag.is_some() && s.modified.is_some() && s.drive_id == w.nb.drive_id));
    // The drive, the notebook by its path, three pages of the notebook's five children (two a
    // page), one of the group's two and one of the inner group's; the recycle bin is not listed
    // and the shares API is not asked.
    let log = w.log();
    assert_eq!(log.len(), 7, "{log:?}");
    assert!(log[0].starts_with("/v1.0/me/drive?"), "{log:?}");
    assert!(
        log[1].starts_with("/v1.0/drives/") && log[1].contains("/root:/Notebooks/Work:?"),
        "{log:?}"
    );
    assert_eq!(log.iter().filter(|p| p.contains("/children?")).count(), 5);
    assert!(!log.iter().any(|p| p.contains("/shares/")));
    assert!(w.lab.graph.drive_log().iter().all(|e| e.status == 200));
    assert_eq!(w.client.counters().requests, 7);
    // None of them spent the OneNote limiter's windows, nor reached the OneNote API.
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
    assert!(w.lab.graph.log().is_empty());
    // The drive is asked for once per account and owner.
    w.files().await;
    assert_eq!(w.log().len(), 7 + 6);
}

#[tokio::test]
async fn the_shares_api_is_a_second_way_for_a_sign_in_that_may_write() {
    // With the default scopes, the shares API refuses (as documented), and locate never asks it.
    let w = world().await;
    let err = w
        .client
        .notebook_files(&w.who, &w.nb.web_url)
        .await
        .unwrap_err();
    assert!(
        matches!(err, DriveError::Forbidden { status: 403, .. }),
        "{err}"
    );
    assert!(err.falls_back());
    let web_only = NotebookLinks {
        client_url: None,
        ..w.links()
    };
    let before = w.log().len();
    let err = w.client.locate(&w.who, &web_only).await.unwrap_err();
    assert!(matches!(err, DriveError::NotLocated { .. }), "{err}");
    assert!(err.to_string().contains("Files.ReadWrite"), "{err}");
    assert!(err.falls_back());
    assert_eq!(w.log().len(), before, "no request that could not succeed");

    // A sign-in that may write resolves the web URL to the same files.
    let w = world_with(WRITE_SCOPES).await;
    let by_path = w.files().await;
    let by_share = w.client.locate(&w.who, &web_only).await.unwrap();
    assert_eq!(by_share, by_path);
    assert_eq!(
        w.client
            .notebook_files(&w.who, &w.nb.web_url)
            .await
            .unwrap(),
        by_path
    );
    // And finds a notebook whose path does not lead to it.
    let elsewhere = NotebookLinks {
        client_url: Some(
            w.nb.client_url
                .replace("/Notebooks/Work", "/Notebooks/Gone"),
        ),
        ..w.links()
    };
    let before = w.log().len();
    assert_eq!(w.client.locate(&w.who, &elsewhere).await.unwrap(), by_path);
    let log = w.log();
    assert!(log[before].contains("/root:/Notebooks/Gone"), "{log:?}");
    assert!(log[before + 1].contains("/shares/u!"), "{log:?}");
}

#[tokio::test]
async fn a_url_that_is_no_notebook_or_leads_nowhere_falls_back() {
    let w = world().await;
    let with_client = |url: String| NotebookLinks {
        client_url: Some(url),
        ..w.links()
    };
    let cases = [
        // A section file, not the notebook's folder.
        (format!("{}/Math.one", w.nb.client_url), "a file"),
        // Nothing at that path.
        (
            w.nb.client_url
                .replace("/Notebooks/Work", "/Notebooks/Gone"),
            "404",
        ),
        // Another user's drive: not read by a path in this one.
        (
            w.nb.client_url.replace(
                &drive_web_url(&w.user.id),
                "https://contoso-my.sharepoint.com/personal/bob_contoso_com/Documents",
            ),
            "outside this drive",
        ),
        (
            "onenote:https://d.docs.live.net/d333aee656452f8b/Documents/Work".into(),
            "personal OneDrive",
        ),
    ];
    for (url, why) in cases {
        let err = w
            .client
            .locate(&w.who, &with_client(url.clone()))
            .await
            .unwrap_err();
        assert!(matches!(err, DriveError::NotLocated { .. }), "{url}: {err}");
        assert!(err.to_string().contains(why), "{url}: {err}");
        assert!(err.falls_back() && err.class().code() == "item/degrade");
    }
    // Through the shares API: a URL it does not know, and a notebook no longer shared.
    let w = world_with(WRITE_SCOPES).await;
    let unknown = w
        .client
        .notebook_files(
            &w.who,
            "https://contoso-my.sharepoint.com/personal/x/Documents/None",
        )
        .await
        .unwrap_err();
    assert!(
        matches!(unknown, DriveError::NotFound { status: 404, .. }),
        "{unknown}"
    );
    w.lab.graph.drive_faults().unshare(&w.nb.item_id, true);
    let unshared = w
        .client
        .notebook_files(&w.who, &w.nb.web_url)
        .await
        .unwrap_err();
    assert!(
        matches!(unshared, DriveError::NotFound { .. }),
        "{unshared}"
    );
    assert!(unknown.falls_back() && unshared.falls_back());
}

#[tokio::test]
async fn a_groups_notebook_is_found_by_path_in_the_groups_library() {
    let lab = Lab::start(LabConfig::default()).await;
    let dir = tempfile::tempdir().unwrap();
    let user = lab.add_user("alice", Default::default());
    let gid = "0a1b2c3d-0000-4000-8000-00000000beef";
    lab.graph.add_group(
        TeamGroup::new(gid, "Marketing", &[user.id.as_str()]),
        Default::default(),
    );
    let nb = lab.graph.add_files_notebook(
        &group_key(gid),
        "Campaigns",
        &onenote_fixture("onenote.rs/samples/New Section Group"),
    );
    let path = dir.path().join("state.db");
    let db = Arc::new(Db::open(&path).unwrap());
    lab.sign_in_with(&db, "alice", &user, TEAM_SCOPES);
    let (client, _) = client(&db, &settings(&lab, &path, TEAM_SCOPES, &[]));
    let who = Caller::for_account(&db, "alice", Lane::Background).unwrap();
    let links = NotebookLinks {
        web_url: Some(nb.web_url.clone()),
        client_url: Some(nb.client_url.clone()),
        owner: DriveOwner::Group(gid.into()),
    };
    let files = client.locate(&who, &links).await.unwrap();
    assert_eq!(
        (files.drive_id.as_str(), files.folder_id.as_str()),
        (nb.drive_id.as_str(), nb.item_id.as_str())
    );
    let names: Vec<String> = files.sections.iter().map(|s| s.path.join("/")).collect();
    assert_eq!(names, ["New Section 1", "New Section 2"]);
    assert!(lab.graph.drive_log()[0]
        .path
        .starts_with(&format!("/v1.0/groups/{gid}/drive?")));
    // Looked for in alice's own drive, it is not there (her drive is another library).
    let mine = NotebookLinks {
        owner: DriveOwner::Me,
        ..links
    };
    let err = client.locate(&who, &mine).await.unwrap_err();
    assert!(matches!(err, DriveError::NotLocated { .. }), "{err}");
}

#[tokio::test]
async fn a_section_is_streamed_whole_and_the_token_never_goes_to_the_download_url() {
    let w = world().await;
    let math = w.section("Math").await;
    let before = w.log().len();
    let dest = w.dest("math.one");
    let n = w.client.download(&w.who, &math, &dest).await.unwrap();
    assert_eq!(n, w.bytes("Math").len() as u64);
    assert_eq!(read(&dest), w.bytes("Math"));
    assert!(!drive::part_path(&dest).exists());
    // `/content` with the token, then the download URL without it: the test server refuses a
    // bearer token there, and counts it.
    let log = w.log()[before..].to_vec();
    assert_eq!(log.len(), 2, "{log:?}");
    assert!(log[0].ends_with(&format!("/items/{}/content", math.item_id)));
    assert!(log[1].starts_with("/_dl/"));
    assert_eq!(w.lab.graph.drive_counters().bearer_refused, 0);
    let c = w.client.counters();
    assert_eq!(
        (c.requests, c.downloads, c.bytes),
        (7 + 1, 1, w.bytes("Math").len() as u64)
    );
    // Asked again, the whole file is there: no request.
    w.client.download(&w.who, &math, &dest).await.unwrap();
    assert_eq!(w.log().len(), before + 2);
    // An empty section is a file too.
    let blank = w.section("Blank").await;
    let empty = w.dest("blank.one");
    assert_eq!(w.client.download(&w.who, &blank, &empty).await.unwrap(), 0);
    assert_eq!(read(&empty), Vec::<u8>::new());
}

#[tokio::test]
async fn a_partial_file_left_by_a_killed_run_is_resumed_with_a_range() {
    let w = world().await;
    let math = w.section("Math").await;
    let dest = w.dest("math.one");
    std::fs::create_dir_all(dest.parent().unwrap()).unwrap();
    std::fs::write(drive::part_path(&dest), &w.bytes("Math")[..1200]).unwrap();
    w.client.download(&w.who, &math, &dest).await.unwrap();
    assert_eq!(read(&dest), w.bytes("Math"));
    let rest = w.bytes("Math").len() as u64 - 1200;
    let c = w.client.counters();
    assert_eq!((c.resumed, c.bytes), (1, rest), "only the rest was fetched");
    assert_eq!(w.lab.graph.drive_counters().bytes_sent, rest);
}

#[tokio::test]
async fn a_cut_transfer_goes_on_from_where_it_stopped() {
    let w = world().await;
    let math = w.section("Math").await;
    w.lab.graph.drive_faults().cut_downloads(2, 1000);
    let dest = w.dest("math.one");
    w.client.download(&w.who, &math, &dest).await.unwrap();
    assert_eq!(read(&dest), w.bytes("Math"));
    let size = w.bytes("Math").len() as u64;
    let c = w.client.counters();
    assert_eq!((c.retries, c.resumed, c.bytes), (2, 2, size));
    // 1000 bytes, 1000 more from there, then the rest: no byte sent twice.
    let d = w.lab.graph.drive_counters();
    assert_eq!((d.downloads, d.bytes_sent), (3, size));
}

#[tokio::test]
async fn a_200_to_a_range_request_starts_the_file_over() {
    let w = world().await;
    let math = w.section("Math").await;
    w.lab.graph.drive_faults().ignore_range(true);
    let dest = w.dest("math.one");
    std::fs::create_dir_all(dest.parent().unwrap()).unwrap();
    std::fs::write(drive::part_path(&dest), &w.bytes("Math")[..500]).unwrap();
    w.client.download(&w.who, &math, &dest).await.unwrap();
    assert_eq!(read(&dest), w.bytes("Math"), "written once, from its start");
    assert_eq!(w.client.counters().resumed, 0);
    assert_eq!(
        w.lab.graph.drive_counters().bytes_sent,
        w.bytes("Math").len() as u64
    );
}

#[tokio::test]
async fn a_body_longer_than_listed_is_a_failure_not_a_success() {
    let w = world().await;
    let math = w.section("Math").await;
    w.lab
        .graph
        .drive_faults()
        .grow_after_listing(&math.item_id, 10);
    let dest = w.dest("math.one");
    let err = w.client.download(&w.who, &math, &dest).await.unwrap_err();
    assert!(matches!(err, DriveError::TransferFailed { .. }), "{err}");
    assert!(err.falls_back());
    assert_eq!(err.retries(), 4, "the item's retries, spent");
    assert!(!dest.exists());
}

#[tokio::test]
async fn a_file_over_2_gb_is_refused_before_any_request() {
    let w = world().await;
    w.lab.graph.drive_faults().too_large(&w.item("Math"), true);
    let big = w.section("Math").await;
    assert!(big.size > drive::MAX_DOWNLOAD);
    let before = w.lab.graph.drive_counters();
    let err = w
        .client
        .download(&w.who, &big, &w.dest("big.one"))
        .await
        .unwrap_err();
    assert!(matches!(err, DriveError::TooLarge { .. }) && err.falls_back());
    let after = w.lab.graph.drive_counters();
    assert_eq!(
        (after.api_requests, after.downloads),
        (before.api_requests, before.downloads)
    );
    // Listed at the limit it is asked for, and its length is the download's own.
    w.lab.graph.drive_faults().too_large(&w.item("Math"), false);
    let at_limit = SectionFile {
        size: drive::MAX_DOWNLOAD,
        ..big
    };
    let got = w
        .client
        .download(&w.who, &at_limit, &w.dest("big.one"))
        .await;
    assert!(!matches!(got, Err(DriveError::TooLarge { .. })), "{got:?}");
    assert!(w.lab.graph.drive_counters().downloads > before.downloads);
    assert!(w.lab.graph.drive_counters().downloads > before.downloads);
}

#[tokio::test]
async fn throttles_pause_the_account_and_spend_no_retry() {
    let w = world().await;
    let math = w.section("Math").await;
    let f = w.lab.graph.drive_faults();
    f.throttle_next(1, 429, Duration::ZERO);
    f.throttle_next_without_retry_after(1, 503);
    f.throttle_next(1, 503, Duration::ZERO);
    let dest = w.dest("math.one");
    w.client.download(&w.who, &math, &dest).await.unwrap();
    assert_eq!(read(&dest), w.bytes("Math"));
    let c = w.client.counters();
    assert_eq!((c.throttled, c.retries), (3, 0));
    assert_eq!(w.lab.graph.drive_counters().throttled, 3);
    assert_eq!(
        w.db.drive_breaker(&drive::pacer::scope(&w.user.id))
            .unwrap(),
        None,
        "the answer after the pause closed the breaker"
    );
}

#[tokio::test]
async fn a_401_refreshes_the_token_once() {
    let w = world().await;
    w.files().await;
    let refreshes = w.lab.auth.counters().refreshes;
    // The access token expires: the next request is refused, the token refreshed, the request
    // sent again.
    w.lab.registry.expire_user(&w.user.id);
    w.files().await;
    assert_eq!(w.lab.auth.counters().refreshes, refreshes + 1);
    // When the sign-in service refuses the refresh too, the account must sign in again.
    w.lab.auth.revoke_user(&w.user.id);
    w.lab.registry.expire_user(&w.user.id);
    let err = w.client.locate(&w.who, &w.links()).await.unwrap_err();
    assert_eq!(err.meaning(), Some(Meaning::SignIn), "{err}");
    assert!(!err.falls_back());
}

#[tokio::test]
async fn a_refusal_falls_back_and_a_server_error_is_retried_then_falls_back() {
    // Without a `Files` scope, the drive refuses (403): read through the OneNote API instead.
    let w = world_with(NOTES_ONLY).await;
    let math = SectionFile {
        path: vec!["Math".into()],
        drive_id: w.nb.drive_id.clone(),
        item_id: w.item("Math"),
        size: w.bytes("Math").len() as u64,
        ctag: None,
        modified: None,
        hash: None,
    };
    let err = w
        .client
        .download(&w.who, &math, &w.dest("m.one"))
        .await
        .unwrap_err();
    assert!(
        matches!(err, DriveError::Forbidden { status: 403, .. }),
        "{err}"
    );
    assert!(err.falls_back());
    let err = w.client.locate(&w.who, &w.links()).await.unwrap_err();
    assert!(matches!(err, DriveError::NotLocated { .. }), "{err}");
    assert!(err.falls_back());
    // Server errors spend the item's retries, then fall back with what they spent.
    let w = world().await;
    w.lab.graph.drive_faults().fail_next(5, 500);
    let err = w.client.locate(&w.who, &w.links()).await.unwrap_err();
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
    assert_eq!(err.retries(), 4);
}

#[tokio::test]
async fn an_unreachable_graph_stops_the_run_at_its_deadline() {
    let w = world().await;
    // A port nothing listens on.
    let closed = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = closed.local_addr().unwrap();
    drop(closed);
    let path = w.dir.path().join("state.db");
    let s = settings(
        &w.lab,
        &path,
        SIGN_IN_SCOPES,
        &[(env::GRAPH_URL, format!("http://{addr}/v1.0"))],
    );
    let (client, reach) = client(&w.db, &s);
    reach.set_deadline(Some(Clock::system().now_ms() + 100));
    let err = client.locate(&w.who, &w.links()).await.unwrap_err();
    assert!(matches!(err, DriveError::Unreachable(_)), "{err}");
    assert_eq!(err.class(), Class::stop_run());
}

#[tokio::test]
async fn a_file_the_service_keeps_refusing_with_503_falls_back() {
    let w = world().await;
    let math = w.section("Math").await;
    // As the download of a OneNote file over 2 GB answers, however often it is asked.
    w.lab
        .graph
        .drive_faults()
        .throttle_next(20, 503, Duration::ZERO);
    let err = w
        .client
        .download(&w.who, &math, &w.dest("m.one"))
        .await
        .unwrap_err();
    assert!(
        matches!(err, DriveError::TransferFailed { retries: 0, .. }),
        "{err}"
    );
    assert!(err.falls_back());
    assert_eq!(
        w.client.counters().throttled,
        u64::from(drive::MAX_THROTTLED)
    );
}

#[tokio::test]
async fn an_answer_that_goes_quiet_times_out_and_goes_on_with_a_range() {
    let w = world().await;
    let math = w.section("Math").await;
    w.lab.graph.drive_faults().stall_downloads(1, 1000);
    // Long enough that no gap of a working transfer on a loaded machine (or under Wine) reaches it.
    let client = w.client.clone().with_timeout(Duration::from_secs(2));
    let dest = w.dest("math.one");
    client.download(&w.who, &math, &dest).await.unwrap();
    assert_eq!(read(&dest), w.bytes("Math"));
    let c = client.counters();
    assert_eq!((c.retries, c.resumed), (1, 1));
    // The quiet answer's 1000 bytes were kept: the rest came with a range.
    assert_eq!(
        w.lab.graph.drive_counters().bytes_sent,
        w.bytes("Math").len() as u64
    );
}
