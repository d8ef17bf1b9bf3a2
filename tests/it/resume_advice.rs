//! Every stop that tells the person to run something leaves that command something to do: each
//! early stop's advice is followed literally (the command is read out of what the binary printed
//! and run exactly so, once the cause is dealt with on the test server), and ends with every page
//! in Notion, exit 0 and `verify` complete. An account's user in a clean environment (the client id
//! and `NOTION_TOKEN`, nothing else); the Notion and Graph test servers model the services
//! (`testkit`), with a switch for each real behaviour (a capability missing, a blocked connection,
//! the block limit, a personal access token that expires, a page not shared yet).

use std::cell::RefCell;

use notebridge_testkit::generator::{generate, NotebookSpec};
use notebridge_testkit::lab::{Lab, LabConfig, CLIENT_ID};
use notebridge_testkit::notion::{Endpoint, FaultKind, FaultRule};

use crate::account_clean_env::json;
use crate::bin_support::{self, Output};
use crate::notion_2026::asked;

/// Graph and Notion fast enough for a test; the product's own defaults otherwise.
fn quick() -> LabConfig {
    LabConfig {
        notion_per_second: 100,
        notion_burst: 20,
        ..LabConfig::default()
    }
}

const PAGES: u64 = 6;

fn notes(seed: u64) -> notebridge_testkit::graph::model::UserNotes {
    generate(&NotebookSpec {
        notebooks: 1,
        sections_per_container: 2,
        pages_per_section: 0,
        total_pages: Some(PAGES as usize),
        subpage_ratio: 0.0,
        images_per_page: 0,
        title_links: true,
        seed,
        ..NotebookSpec::default()
    })
}

/// An account's user whose Notion token may change (a new one made after the old expired).
struct Person<'a> {
    lab: &'a Lab,
    home: tempfile::TempDir,
    token: RefCell<String>,
}

impl<'a> Person<'a> {
    /// The user of a new home, signed in as the default account.
    async fn signed_in(lab: &'a Lab) -> Person<'a> {
        let me = Person {
            lab,
            home: tempfile::tempdir().unwrap(),
            token: RefCell::new(lab.notion.token().to_owned()),
        };
        let out = me.run(&["login"]).await;
        assert_eq!(out.code, Some(0), "{}", out.all());
        me
    }

    fn command<S: AsRef<str>>(&self, args: &[S]) -> bin_support::Bin {
        let (l, token) = (self.lab, self.token.borrow().clone());
        bin_support::notebridge(self.home.path(), &["--no-progress"])
            .args(args.iter().map(AsRef::as_ref))
            .env("NOTEBRIDGE_CLIENT_ID", CLIENT_ID)
            .env("NOTION_TOKEN", token)
            .env("NOTEBRIDGE_AUTHORITY_URL", l.auth.authority_url())
            .env("NOTEBRIDGE_GRAPH_URL", l.graph.base_url())
            .env("NOTEBRIDGE_NOTION_URL", l.notion.base_url())
    }

    async fn run<S: AsRef<str>>(&self, args: &[S]) -> Output {
        self.command(args).run().await
    }

    /// Runs exactly the command `out`'s advice names; expects exit 0.
    async fn follow(&self, out: &Output) -> Output {
        let args = advised(out);
        let done = self.run(&args[1..]).await;
        assert_eq!(
            done.code,
            Some(0),
            "{args:?} as advised by\n{}\ngave\n{}",
            out.stderr,
            done.all()
        );
        done
    }

    /// Every page is migrated once, nothing failed, and `verify` says complete.
    async fn all_in_notion(&self, target: &str) {
        let status = self.run(&["--json", "status"]).await;
        let jobs = json(&status.stdout)["accounts"][0]["jobs"].clone();
        assert_eq!(
            (jobs["pages_done"].as_u64(), jobs["failed"].as_u64()),
            (Some(PAGES), Some(0)),
            "{jobs}"
        );
        assert!(self.lab.notion.duplicate_titles(target).is_empty());
        let verify = self.run(&["--json", "verify"]).await;
        assert_eq!(verify.code, Some(0), "{}", verify.all());
        assert_eq!(json(&verify.stdout)["verdict"], "complete");
    }
}

/// The command the last advice names (on stderr, else on stdout): the words between "run `" and
/// the closing backtick, starting with `notebridge`.
fn advised(out: &Output) -> Vec<String> {
    let (text, at) = [&out.stderr, &out.stdout]
        .into_iter()
        .find_map(|t| Some((t, t.rfind("run `notebridge ")?)))
        .unwrap_or_else(|| panic!("no command advised:\n{}", out.all()));
    let rest = &text[at + "run `".len()..];
    let cmd = &rest[..rest.find('`').expect("the command's closing backtick")];
    cmd.split_whitespace().map(str::to_owned).collect()
}

/// A lab with the default account holding `notes(seed)`, signed in.
async fn lab_with(seed: u64) -> Lab {
    let lab = Lab::start(quick()).await;
    lab.add_user("me", notes(seed));
    lab
}

/// Update content missing: the plan is recorded, the run stops just before its first write (no
/// page written) with exit 2; once the capability is given, the advised command migrates all.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn update_content_missing_the_advice_finishes_the_migration() {
    let lab = lab_with(91).await;
    let me = Person::signed_in(&lab).await;
    lab.notion.set_update_content(false);
    let out = me.run(&["migrate", "--to", &lab.target_page]).await;
    assert_eq!(out.code, Some(2), "{}", out.all());
    assert!(
        out.stderr.contains("lacks a capability: Update content"),
        "{}",
        out.stderr
    );
    assert_eq!(asked(&lab, Endpoint::CreatePage), 0, "no page written");
    assert_eq!(advised(&out), ["notebridge", "migrate", "--resume"]);

    lab.notion.set_update_content(true);
    me.follow(&out).await;
    me.all_in_notion(&lab.target_page).await;
}

/// Insert content missing: the run stops at its first write; the advice finishes it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn insert_content_missing_the_advice_finishes_the_migration() {
    let lab = lab_with(92).await;
    let me = Person::signed_in(&lab).await;
    lab.notion.set_insert_content(false);
    let out = me.run(&["migrate", "--to", &lab.target_page]).await;
    assert_eq!(out.code, Some(2), "{}", out.all());
    assert!(out.stderr.contains("Insert content"), "{}", out.stderr);

    lab.notion.set_insert_content(true);
    me.follow(&out).await;
    me.all_in_notion(&lab.target_page).await;
}

/// A connection Notion blocks from its very first request (`GET /v1/users/me`): nothing is
/// planned yet, and the advised `--resume` goes on with the run that was asked for.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_blocked_before_its_plan_the_advice_finishes_the_migration() {
    let lab = lab_with(93).await;
    let me = Person::signed_in(&lab).await;
    lab.notion.inject(FaultRule::new(FaultKind::RequestBlocked));
    let out = me.run(&["migrate", "--to", &lab.target_page]).await;
    assert_eq!(out.code, Some(2), "{}", out.all());
    assert!(
        out.stderr.contains("public_api_request_blocked"),
        "{}",
        out.stderr
    );
    assert_eq!(asked(&lab, Endpoint::CreatePage), 0);

    lab.notion.clear_faults();
    let done = me.follow(&out).await;
    assert!(
        done.stderr.contains("stopped before its plan was recorded"),
        "{}",
        done.stderr
    );
    me.all_in_notion(&lab.target_page).await;
    // Nothing is left pending: a second resume plans nothing again and writes nothing.
    let writes = lab.notion.counters().writes();
    let again = me.run(&["migrate", "--resume"]).await;
    assert_eq!(again.code, Some(0), "{}", again.all());
    assert!(!again.stderr.contains("stopped before"), "{}", again.all());
    assert_eq!(lab.notion.counters().writes(), writes);
}

/// A connection blocked part way: the advice finishes the migration.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_blocked_part_way_the_advice_finishes_the_migration() {
    let lab = lab_with(94).await;
    let me = Person::signed_in(&lab).await;
    lab.notion
        .inject(FaultRule::new(FaultKind::RequestBlocked).after(12));
    let out = me.run(&["migrate", "--to", &lab.target_page]).await;
    crate::notion_2026::stopped_blocked(&lab, &out);

    lab.notion.clear_faults();
    me.follow(&out).await;
    me.all_in_notion(&lab.target_page).await;
}

/// The workspace's block limit part way: once upgraded, the advice finishes the migration.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_block_limit_the_advice_finishes_the_migration() {
    let lab = lab_with(95).await;
    let me = Person::signed_in(&lab).await;
    lab.notion
        .set_block_limit(Some(lab.notion.block_count() + 20));
    let out = me.run(&["migrate", "--to", &lab.target_page]).await;
    crate::notion_2026::stopped_at_block_limit(&out);
    // `verify` names the pages still queued and the same command for them.
    let verify = me.run(&["verify"]).await;
    assert_ne!(verify.code, Some(0), "{}", verify.all());
    assert!(verify.all().contains("its job is"), "{}", verify.all());
    assert_eq!(advised(&verify), advised(&out));

    lab.notion.set_block_limit(None);
    me.follow(&verify).await;
    me.all_in_notion(&lab.target_page).await;
}

/// A personal access token that expires part way: Notion answers `401`; with a new token made as
/// the advice says, the advised command finishes the migration.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_personal_access_token_expiring_part_way_the_advice_finishes_the_migration() {
    let lab = lab_with(96).await;
    let me = Person::signed_in(&lab).await;
    lab.notion.set_personal_token_of(Some("Ada Lovelace"));
    lab.notion.expire_token_after(Some(14));
    let out = me.run(&["migrate", "--to", &lab.target_page]).await;
    assert_eq!(out.code, Some(2), "{}", out.all());
    assert!(
        out.stderr.contains("expired or was revoked") && out.stderr.contains("make a new one"),
        "{}",
        out.stderr
    );
    assert!(
        asked(&lab, Endpoint::CreatePage) > 0,
        "it expired part way: {}",
        out.all()
    );

    // A new token of the same person, set where the old one was.
    lab.notion.add_token("ntn_made_again");
    *me.token.borrow_mut() = "ntn_made_again".into();
    me.follow(&out).await;
    me.all_in_notion(&lab.target_page).await;
}

/// A target page the connection is given only after the first try: `404` before anything is
/// planned; once shared, the advised command migrates everything under it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_target_shared_too_late_the_advice_finishes_the_migration() {
    let lab = lab_with(97).await;
    let me = Person::signed_in(&lab).await;
    let target = lab.notion.add_unshared_page("Shared later");
    let out = me.run(&["migrate", "--to", &target]).await;
    assert_eq!(out.code, Some(2), "{}", out.all());
    assert!(out.stderr.contains("not shared"), "{}", out.stderr);

    lab.notion.share(&target);
    me.follow(&out).await;
    me.all_in_notion(&target).await;
    assert_eq!(
        lab.notion.pages_under(&lab.target_page).len(),
        0,
        "nothing under another page"
    );
}

/// A person who migrated `notes(seed)` under the lab's target, then renamed a page in OneNote;
/// that page's id.
async fn migrated_then_renamed(lab: &Lab, seed: u64) -> (Person<'_>, String) {
    let user = lab.add_user("me", notes(seed));
    let me = Person::signed_in(lab).await;
    let first = me.run(&["migrate", "--to", &lab.target_page]).await;
    assert_eq!(first.code, Some(0), "{}", first.all());
    let page = lab.graph.mutate(&user.id, |n| {
        let p = &mut n.pages[0];
        p.title = "Renamed in OneNote".into();
        p.modified += chrono::Duration::minutes(5);
        p.id.clone()
    });
    (me, page)
}

/// The rename reached Notion, and every page is there once.
async fn renamed_in_notion(me: &Person<'_>, page: &str) {
    let db = crate::layout_e2e::files_db(me.home.path());
    let id = db
        .notion_item("default", page)
        .unwrap()
        .and_then(|i| i.into_page_id())
        .unwrap();
    assert_eq!(
        me.lab.notion.dump(&id).and_then(|d| d.title).as_deref(),
        Some("Renamed in OneNote")
    );
    me.all_in_notion(&me.lab.target_page).await;
}

/// `sync` stopped for a missing capability names `sync --resume`, which carries the change over.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sync_stopped_for_a_capability_names_sync_and_its_advice_finishes_it() {
    let lab = Lab::start(quick()).await;
    let (me, page) = migrated_then_renamed(&lab, 98).await;
    lab.notion.set_update_content(false);
    let out = me.run(&["sync"]).await;
    assert_eq!(out.code, Some(2), "{}", out.all());
    assert!(out.stderr.contains("Update content"), "{}", out.stderr);
    assert_eq!(advised(&out), ["notebridge", "sync", "--resume"]);

    lab.notion.set_update_content(true);
    me.follow(&out).await;
    renamed_in_notion(&me, &page).await;
}

/// Notion unreachable until `sync --max-duration` runs out, before anything is planned: exit 75
/// naming `sync --resume`, which goes on with that sync (its scan and its change) once Notion
/// answers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sync_that_cannot_reach_notion_names_sync_and_its_advice_finishes_it() {
    let lab = Lab::start(quick()).await;
    let (me, page) = migrated_then_renamed(&lab, 99).await;
    lab.notion.outage().stop();
    let out = me.run(&["sync", "--max-duration", "2s"]).await;
    assert_eq!(out.code, Some(75), "{}", out.all());
    assert_eq!(advised(&out), ["notebridge", "sync", "--resume"]);

    lab.notion.outage().resume();
    me.follow(&out).await;
    renamed_in_notion(&me, &page).await;
}

/// Stopped twice while its writes hang: the second stop ends the run at once, with writes still in
/// flight (Notion applies them after the process is gone), and the command it names finishes the
/// migration with no page twice. SIGTERM is Unix's; Windows' Ctrl-C goes to a console group, not
/// to one child by its id.
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stopped_twice_the_advice_finishes_the_migration() {
    use std::time::Duration;
    let lab = lab_with(97).await;
    let me = Person::signed_in(&lab).await;
    let hang = Duration::from_secs(3);
    lab.notion
        .inject(FaultRule::new(FaultKind::Delay(hang)).on(Endpoint::CreatePage));
    let child = me.command(&["migrate", "--to", &lab.target_page]).spawn();
    // The queue is draining once a page's creation hangs in Notion (the stop is heard from then).
    tokio::time::timeout(Duration::from_secs(60), async {
        while lab.notion.counters().faults == 0 {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("a page's creation reached Notion");
    for _ in 0..2 {
        // SAFETY: sending SIGTERM to our own child.
        unsafe {
            libc::kill(child.id().expect("running") as i32, libc::SIGTERM);
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let out = Output::from(child.wait_with_output().await.unwrap());
    assert_eq!(out.code, Some(75), "{}", out.all());
    assert!(out.stderr.contains("stopped at once"), "{}", out.stderr);
    assert_eq!(advised(&out), ["notebridge", "migrate", "--resume"]);
    assert!(
        asked(&lab, Endpoint::CreatePage) < PAGES as usize,
        "stopped before every page was written"
    );

    // What was in flight lands in Notion after the process is gone; then the advice is followed.
    lab.notion.clear_faults();
    tokio::time::sleep(hang + Duration::from_millis(500)).await;
    me.follow(&out).await;
    me.all_in_notion(&lab.target_page).await;
}
