//! Notion as it is in 2026 (issue 48, items 8 to 13) as a files user meets it: a clean environment
//! holding `NOTION_TOKEN` alone (and, for the test server, its URL), migrating OneNote's own files
//! from the samples with `migrate --from`. Each behaviour is a switch of the Notion test server;
//! each test shows that nothing is lost and what the person is told.

use std::path::{Path, PathBuf};

use notebridge_testkit::lab::Lab;
use notebridge_testkit::notion::{Endpoint, FaultKind, FaultRule};
use serde_json::Value;

use crate::bin_support::{self, Output};
use crate::files_support::{expected_tree, fast, notion_tree, sample};
use crate::notion_2026::{asked, placeholders, stopped_at_block_limit, stopped_blocked};

/// A files user: a home of its own, the state database and the Notion token. Nothing of
/// Microsoft's.
struct FilesUser {
    home: tempfile::TempDir,
    db: PathBuf,
    token: String,
    notion_url: String,
}

impl FilesUser {
    fn new(lab: &Lab) -> FilesUser {
        let home = tempfile::tempdir().unwrap();
        FilesUser {
            db: home.path().join("notebridge.db"),
            token: lab.notion.token().to_owned(),
            notion_url: lab.notion.base_url().to_owned(),
            home,
        }
    }

    async fn run(&self, args: &[&str]) -> Output {
        let h = self.home.path();
        bin_support::notebridge(h, &["--no-progress"])
            .args(args)
            .env("NOTION_TOKEN", &self.token)
            .env("NOTEBRIDGE_DB", &self.db)
            .env("NOTEBRIDGE_NOTION_URL", &self.notion_url)
            .run()
            .await
    }

    /// Runs `args` and expects exit 0.
    async fn ok(&self, args: &[&str]) -> Output {
        let out = self.run(args).await;
        assert_eq!(out.code, Some(0), "{args:?}\n{}", out.all());
        out
    }

    /// `verify` says the migration is complete.
    async fn verified_complete(&self) {
        let out = self.run(&["verify"]).await;
        assert_eq!(out.code, Some(0), "{}", out.all());
    }
}

fn json(out: &str) -> Value {
    serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("{e}: {out}"))
}

/// A lab, a files user and the page it migrates under; the sample's path (`None`: skipped, the
/// samples are not beside this clone).
async fn set_up(rel: &str) -> Option<(Lab, FilesUser, String, PathBuf)> {
    let path = sample(rel)?;
    let lab = Lab::start(fast()).await;
    let target = lab.notion.add_shared_page("Imports");
    let user = FilesUser::new(&lab);
    Some((lab, user, target, path))
}

/// The pages the sample should become, as `scan` plans them.
async fn planned(user: &FilesUser, path: &Path) -> Vec<(usize, String)> {
    let out = user
        .ok(&["--json", "scan", "--from", path.to_str().unwrap()])
        .await;
    expected_tree(&json(&out.stdout))
}

/// A folder of three sections of real pages (onenote.rs's samples).
const GROUP: &str = "onenote.rs/samples/New Section Group";
/// A real page holding an embedded Word document (Apache Tika's samples).
const EMBEDDED: &str = "apache-tika/testOneNoteEmbeddedWordDoc.one";

/// Item 8: a personal access token. Doctor names its kind; the embedded file, over the
/// workspace's upload limit, is refused by Notion and goes as a placeholder with Notion's reason;
/// nothing failed. Verify's 404 and the advice for a refused (expired, revoked) token fit the kind.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn files_a_personal_access_token_is_named_and_a_too_large_file_is_a_placeholder() {
    let Some((lab, user, target, path)) = set_up(EMBEDDED).await else {
        return;
    };
    lab.notion.set_personal_token_of(Some("Ada Lovelace"));
    lab.notion.set_max_file_upload_size(1000);
    let doctor = user.run(&["--json", "doctor", "--to", &target]).await;
    let checks = crate::bin_support::doctor_passed(doctor.code, &doctor.stdout)["checks"].clone();
    let token = checks
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "notion_token")
        .unwrap_or_else(|| panic!("{checks}"));
    assert!(
        token["detail"]
            .as_str()
            .unwrap()
            .contains("personal access token of Ada Lovelace"),
        "{token}"
    );

    let f = path.to_str().unwrap();
    let run = user
        .ok(&["--json", "migrate", "--from", f, "--to", &target])
        .await;
    let s = json(run.stdout.lines().last().unwrap());
    assert_eq!(s["failed"], 0, "{s}");
    let placeholders = placeholders(&lab, &target);
    assert!(!placeholders.is_empty(), "the file is a placeholder");
    for t in &placeholders {
        assert!(t.contains("at most 1000 bytes"), "Notion's reason: {t}");
    }
    user.verified_complete().await;

    // The target out of its creator's reach: verify says so as fits a personal access token.
    lab.notion.unshare(&target);
    let out = user.run(&["verify"]).await;
    assert_eq!(out.code, Some(2), "{}", out.all());
    assert!(out.stderr.contains("cannot open it"), "{}", out.stderr);
    assert!(!out.stderr.contains("Connections >"), "{}", out.stderr);

    // The token expired or revoked (Notion answers 401 and says nothing of its kind): the advice
    // names making a new one, beside the integration's secret.
    let expired = FilesUser {
        token: "ntn_expired".into(),
        ..user
    };
    for cmd in [
        vec!["verify"],
        vec!["migrate", "--from", f, "--to", &target, "--update"],
    ] {
        let out = expired.run(&cmd).await;
        assert_eq!(out.code, Some(2), "{cmd:?}: {}", out.all());
        assert!(
            out.stderr.contains("expired or was revoked") && out.stderr.contains("make a new one"),
            "{cmd:?}: {}",
            out.stderr
        );
    }
}

/// Item 9: a connection without Update content is found before any page is written: the run
/// exits 2 saying what to give it; once given, the same command migrates every page.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn files_a_missing_update_capability_is_found_before_any_page_is_written() {
    let Some((lab, user, target, path)) = set_up(GROUP).await else {
        return;
    };
    lab.notion.set_update_content(false);
    let f = path.to_str().unwrap();
    let out = user.run(&["migrate", "--from", f, "--to", &target]).await;
    assert_eq!(out.code, Some(2), "{}", out.all());
    assert!(out.stderr.contains("lacks a capability"), "{}", out.stderr);
    assert!(out.stderr.contains("Update"), "{}", out.stderr);
    assert_eq!(asked(&lab, Endpoint::CreatePage), 0, "no page written");

    lab.notion.set_update_content(true);
    user.ok(&["migrate", "--from", f, "--to", &target]).await;
    assert_eq!(notion_tree(&lab, &target), planned(&user, &path).await);
    user.verified_complete().await;
}

/// Item 10: `public_api_request_blocked` stops the run at once with its reason (exit 2), nothing
/// failed; `--resume` once Notion lets the connection through completes it, every page once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn files_a_blocked_connection_stops_at_once_and_resume_completes() {
    let Some((lab, user, target, path)) = set_up(GROUP).await else {
        return;
    };
    lab.notion
        .inject(FaultRule::new(FaultKind::RequestBlocked).after(6));
    let f = path.to_str().unwrap();
    let out = user.run(&["migrate", "--from", f, "--to", &target]).await;
    stopped_blocked(&lab, &out);

    lab.notion.clear_faults();
    let run = user.ok(&["--json", "migrate", "--resume"]).await;
    assert_eq!(json(run.stdout.lines().last().unwrap())["failed"], 0);
    assert_eq!(notion_tree(&lab, &target), planned(&user, &path).await);
    assert!(lab.notion.duplicate_titles(&target).is_empty());
    user.verified_complete().await;
}

/// Migrates the sample at `rel` with `faults` injected; returns the lab once `verify` said
/// complete and the tree is the one planned.
async fn migrated(rel: &str, faults: &[FaultRule]) -> Option<Lab> {
    let (lab, user, target, path) = set_up(rel).await?;
    for f in faults {
        lab.notion.inject(f.clone());
    }
    user.ok(&["migrate", "--from", path.to_str().unwrap(), "--to", &target])
        .await;
    assert_eq!(notion_tree(&lab, &target), planned(&user, &path).await);
    user.verified_complete().await;
    Some(lab)
}

/// Item 11: writes answered `503` that name what they saved make no duplicate and no look-up
/// (the run asks for exactly the listings a run without them asks for).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn files_writes_answered_503_that_name_what_they_saved_are_neither_repeated_nor_looked_up() {
    let Some(control) = migrated(GROUP, &[]).await else {
        return;
    };
    // The samples' pages each fit in the request that creates them (no append follows), so the
    // created pages are the writes answered 503 here; `notion_2026` covers appended blocks.
    assert_eq!(asked(&control, Endpoint::AppendChildren), 0);
    let saved = FaultRule::new(FaultKind::AppliedThen503Saved)
        .on(Endpoint::CreatePage)
        .after(1)
        .times(3);
    let lab = migrated(GROUP, &[saved]).await.unwrap();
    assert_eq!(lab.notion.counters().faults, 3, "every fault fired");
    for e in [
        Endpoint::CreatePage,
        Endpoint::AppendChildren,
        Endpoint::ListChildren,
    ] {
        assert_eq!(asked(&lab, e), asked(&control, e), "{e:?}");
    }
    assert_eq!(lab.notion.block_count(), control.notion.block_count());
}

/// Item 13: the block limit answered in the workspace's language (French) stops the run (exit 2)
/// with the same advice, nothing failed; `--resume` after the upgrade completes it, every page
/// once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn files_the_block_limit_in_another_language_stops_and_resume_completes() {
    let Some((lab, user, target, path)) = set_up(GROUP).await else {
        return;
    };
    lab.notion.set_localised_messages(true);
    lab.notion
        .set_block_limit(Some(lab.notion.block_count() + 8));
    let f = path.to_str().unwrap();
    let out = user.run(&["migrate", "--from", f, "--to", &target]).await;
    stopped_at_block_limit(&out);
    let want = planned(&user, &path).await;
    assert!(
        notion_tree(&lab, &target).len() < want.len(),
        "stopped part way"
    );

    lab.notion.set_block_limit(None);
    let run = user.ok(&["--json", "migrate", "--resume"]).await;
    assert_eq!(json(run.stdout.lines().last().unwrap())["failed"], 0);
    assert_eq!(notion_tree(&lab, &target), want);
    assert!(lab.notion.duplicate_titles(&target).is_empty());
    user.verified_complete().await;
}
