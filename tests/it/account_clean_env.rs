//! An account's user as they meet notebridge: a clean environment holding only what such a user
//! sets (the app's client id and `NOTION_TOKEN`), plus the addresses of the test servers that
//! stand in for Microsoft and Notion, and a home of the test's own. No limits, paces or retry
//! pauses of the lab's: the product's defaults (Graph's documented 120/min, 400/h and 5 in flight
//! per user; Notion's `auto` pace) against servers that enforce those same documented limits.
//! Every command of a first migration works there: `doctor`, `login`, `scan`, `migrate --layout
//! database`, `migrate --resume`, `status`, `verify`; and an account whose notebook is files in its
//! OneDrive (`--via files`) the same way; and a team of two accounts, signed in one after the
//! other, migrated by one `migrate --all-accounts` through an app-wide throttle.

use std::path::Path;

use notebridge_testkit::generator::{generate, NotebookSpec};
use notebridge_testkit::lab::{Lab, LabConfig, CLIENT_ID};
use serde_json::Value;

use crate::bin_support::{self, Output};
use crate::engine_migrate::named;

/// The services as documented: Graph's per-user and per-app windows, Notion's 3 requests/s.
pub(crate) fn documented() -> LabConfig {
    LabConfig {
        user_windows: "120/60s,400/1h".into(),
        app_windows: "240/60s,800/1h".into(),
        user_concurrency: 5,
        app_concurrency: 20,
        notion_per_second: 3,
        ..LabConfig::default()
    }
}

/// An account's user: the lab whose servers they reach and their home; their environment holds
/// the app's client id and the Notion token, nothing else of the machine's.
pub(crate) struct User<'a> {
    pub(crate) lab: &'a Lab,
    pub(crate) home: &'a Path,
}

impl User<'_> {
    pub(crate) async fn run(&self, args: &[&str]) -> Output {
        self.bin(args).run().await
    }

    /// The binary with `args`, in this user's environment and nothing else.
    pub(crate) fn bin(&self, args: &[&str]) -> bin_support::Bin {
        let h = self.home;
        bin_support::notebridge(h, &["--no-progress"])
            .args(args)
            .env("NOTEBRIDGE_CLIENT_ID", CLIENT_ID)
            .env("NOTION_TOKEN", self.lab.notion.token())
            .env("NOTEBRIDGE_AUTHORITY_URL", self.lab.auth.authority_url())
            .env("NOTEBRIDGE_GRAPH_URL", self.lab.graph.base_url())
            .env("NOTEBRIDGE_NOTION_URL", self.lab.notion.base_url())
    }

    pub(crate) async fn ok(&self, args: &[&str]) -> Output {
        let out = self.run(args).await;
        assert_eq!(
            out.code,
            Some(0),
            "notebridge {}\nstdout: {}\nstderr: {}",
            args.join(" "),
            out.stdout,
            out.stderr
        );
        out
    }
}

pub(crate) fn json(out: &str) -> Value {
    serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("{e}: {out}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_first_migration_with_only_a_client_id_and_a_notion_token() {
    let lab = Lab::start(documented()).await;
    let notes = generate(&NotebookSpec {
        notebooks: 1,
        section_groups_depth: 1,
        section_groups_per_container: 1,
        sections_per_container: 1,
        pages_per_section: 0,
        total_pages: Some(4),
        subpage_ratio: 0.3,
        images_per_page: 1,
        resource_bytes: 1024,
        seed: 4,
        ..NotebookSpec::default()
    });
    lab.add_user("me", notes.clone());
    let home = tempfile::tempdir().unwrap();
    let me = User {
        lab: &lab,
        home: home.path(),
    };
    let to = lab.target_page.clone();

    // A first user signs in once, as the default account: no command below names one.
    me.ok(&["login"]).await;
    let doctor = me.run(&["--json", "doctor", "--to", &to]).await;
    bin_support::doctor_passed(doctor.code, &doctor.stdout);
    let scan = me.ok(&["--json", "scan"]).await;
    assert_eq!(
        json(&scan.stdout)["notebooks"].as_array().map(Vec::len),
        Some(1),
        "{}",
        scan.stdout
    );
    let run = me
        .ok(&["--json", "migrate", "--to", &to, "--layout", "database"])
        .await;
    let summary = json(run.stdout.lines().last().unwrap_or_default());
    assert_eq!(summary["outcome"], "finished", "{}", run.stdout);
    assert_eq!(summary["pages_done"], notes.pages.len(), "{}", run.stdout);
    assert_eq!(
        lab.notion.databases_under(&to).len()
            + lab
                .notion
                .pages_under(&to)
                .iter()
                .map(|(id, _)| {
                    let mut n = 0;
                    let mut stack = vec![id.clone()];
                    while let Some(p) = stack.pop() {
                        n += lab.notion.databases_under(&p).len();
                        stack.extend(lab.notion.pages_under(&p).into_iter().map(|(i, _)| i));
                    }
                    n
                })
                .sum::<usize>(),
        notes.sections.len(),
        "one database per section"
    );
    me.ok(&["migrate", "--resume"]).await;
    let status = me.ok(&["--json", "status"]).await;
    assert_eq!(json(&status.stdout)["accounts"][0]["layout"], "database");
    let verify = me.ok(&["--json", "verify"]).await;
    let v = json(&verify.stdout);
    assert_eq!(v["verdict"], "complete", "{}", verify.stdout);
    assert_eq!(v["accounts"][0]["layout"], "database");
    let sections = v["accounts"][0]["sections"].as_array().unwrap();
    assert_eq!(sections.len(), notes.sections.len());
    for s in sections {
        let top = s["pages"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|p| p["level"] == 0 && p["state"] == "ok")
            .count();
        assert_eq!(
            s["database"]["rows_found"], top,
            "a row per page of the section (subpages are pages inside their row): {s}"
        );
    }
    let c = lab.graph.counters();
    assert_eq!(
        c.arrived_over_limit, 0,
        "the defaults stay within the documented limits"
    );
}

/// An account whose notebook is OneNote files in its OneDrive, as its user migrates it: signed in
/// once (the default sign-in asks `Files.Read`), `migrate --via files --layout database`, then
/// `verify`. Each row names its page's author as the section file does and links the page on the
/// web as Graph's scan does.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_notebook_of_drive_files_migrated_as_databases_with_only_a_client_id_and_a_token() {
    let Some(path) = crate::files_support::sample("onenote.rs/samples/New Section Group") else {
        return;
    };
    let lab = Lab::start(documented()).await;
    lab.add_files_user("me", "Field notes", &path);
    let home = tempfile::tempdir().unwrap();
    let me = User {
        lab: &lab,
        home: home.path(),
    };
    let to = lab.target_page.clone();
    me.ok(&["login"]).await;
    let run = me
        .ok(&[
            "--json", "migrate", "--to", &to, "--via", "files", "--layout", "database",
        ])
        .await;
    let summary = json(run.stdout.lines().last().unwrap_or_default());
    assert_eq!(summary["outcome"], "finished", "{}", run.stdout);

    let verify = me.ok(&["--json", "verify"]).await;
    let v = json(&verify.stdout);
    assert_eq!(v["verdict"], "complete", "{}", verify.stdout);
    // Each page's author as its section file names it (titles repeat only with the same author).
    let mut authors = std::collections::HashMap::new();
    for (_, section) in notebridge::onefile::scan(&path).unwrap().all_sections() {
        let parsed = notebridge::onefile::open_section(&section.location).unwrap();
        for p in parsed.pages() {
            let title = if p.title.trim().is_empty() {
                "Untitled".to_owned()
            } else {
                p.title.clone()
            };
            authors.insert(title, p.author.clone().unwrap_or_default());
        }
    }
    let mut rows = 0;
    let mut authored = 0;
    for s in v["accounts"][0]["sections"].as_array().unwrap() {
        let database = s["database"]["database_id"].as_str().unwrap();
        for row in lab.notion.rows(database) {
            rows += 1;
            assert_eq!(
                Some(&row.properties["Author"]),
                authors.get(&row.title),
                "{row:#?}"
            );
            authored += usize::from(!row.properties["Author"].is_empty());
            assert!(
                row.properties["OneNote link"].starts_with("https://"),
                "{row:#?}"
            );
        }
    }
    assert!(
        rows > 0 && authored > 0,
        "{rows} rows, {authored} with an author"
    );
    assert_eq!(lab.graph.counters().arrived_over_limit, 0);
}

/// A team's migration as its user runs it: two accounts signed in with `login --account`, then one
/// `migrate --all-accounts`, against servers whose 429s carry no hint headers. An app-wide
/// throttle from outside falls mid-run: the shared breaker holds both accounts, so the service
/// sees what was in flight and a few probes, and the run finishes both accounts with nothing
/// failed; `verify` finds every page.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_accounts_through_an_app_throttle_without_hint_headers() {
    use std::time::{Duration, Instant};
    const OUTAGE: Duration = Duration::from_secs(3);
    let lab = Lab::start(LabConfig {
        hint_headers: false,
        ..documented()
    })
    .await;
    let spec = |seed| NotebookSpec {
        notebooks: 1,
        sections_per_container: 2,
        pages_per_section: 0,
        total_pages: Some(6),
        resource_bytes: 1024,
        seed,
        ..NotebookSpec::default()
    };
    let alices = named("Alice's", generate(&spec(21)));
    let bobs = named("Bob's", generate(&spec(22)));
    let pages = alices.pages.len() + bobs.pages.len();
    // Each `add_user` queues the approval of the next device code: alice's, then bob's.
    lab.add_user("alice", alices);
    lab.add_user("bob", bobs);
    let home = tempfile::tempdir().unwrap();
    let me = User {
        lab: &lab,
        home: home.path(),
    };
    me.ok(&["login", "--account", "alice"]).await;
    me.ok(&["login", "--account", "bob"]).await;
    let to = lab.target_page.clone();

    let run = me
        .bin(&["--json", "migrate", "--all-accounts", "--to", &to])
        .spawn();
    // The outage starts once both accounts' notebooks have their pages in Notion: their scans are
    // done and their pages' bodies are being read.
    let started = Instant::now();
    while lab.notion.pages_under(&to).len() < 2 {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "nothing written"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // What can be in flight: 5 per account, the documented cap.
    crate::migrate_support::app_outage_held(&lab, OUTAGE, 2 * 5).await;
    let out = run.wait_with_output().await.unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let summary = json(stdout.lines().last().unwrap_or_default());
    assert_eq!(summary["outcome"], "finished", "{stdout}");
    assert_eq!(summary["pages_done"], pages, "{stdout}");
    verified_complete(&me).await;
}

/// `verify` says the migration is complete.
pub(crate) async fn verified_complete(me: &User<'_>) {
    let verify = me.ok(&["--json", "verify"]).await;
    assert_eq!(
        json(&verify.stdout)["verdict"],
        "complete",
        "{}",
        verify.stdout
    );
}
