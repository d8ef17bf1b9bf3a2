//! Notion as it is in 2026 (issue 48, items 8 to 13), through the binary in an account user's clean
//! environment (the app's client id and `NOTION_TOKEN`, nothing else): each behaviour is a switch of
//! the Notion test server, and each test shows that nothing is lost and what the person is told.

use notebridge_testkit::generator::{generate, NotebookSpec};
use notebridge_testkit::lab::{Lab, LabConfig};
use notebridge_testkit::notion::{Endpoint, FaultKind, FaultRule};
use serde_json::Value;

use crate::account_clean_env::verified_complete;
use crate::account_clean_env::{json, User};

/// Graph and Notion fast enough for a test; the product's own defaults otherwise.
fn quick() -> LabConfig {
    LabConfig {
        notion_per_second: 100,
        notion_burst: 20,
        ..LabConfig::default()
    }
}

fn spec(pages: usize, seed: u64) -> NotebookSpec {
    NotebookSpec {
        notebooks: 1,
        sections_per_container: 1,
        pages_per_section: 0,
        total_pages: Some(pages),
        subpage_ratio: 0.0,
        images_per_page: 0,
        seed,
        ..NotebookSpec::default()
    }
}

/// Every block of the tree under `root`, depth first, as the API renders them.
pub(crate) fn all_blocks(lab: &Lab, root: &str) -> Vec<Value> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_owned()];
    while let Some(id) = stack.pop() {
        for b in lab.notion.blocks_of(&id) {
            if let Some(i) = b["id"].as_str() {
                stack.push(i.to_owned());
            }
            out.push(b);
        }
    }
    out
}

/// The text of every placeholder (a file that could not be carried over) under `root`.
pub(crate) fn placeholders(lab: &Lab, root: &str) -> Vec<String> {
    all_blocks(lab, root)
        .iter()
        .filter_map(|b| b["paragraph"]["rich_text"][0]["plain_text"].as_str())
        .filter(|t| t.contains("could not be carried over"))
        .map(str::to_owned)
        .collect()
}

/// The user of `home`, signed in once as the default account.
async fn signed_in<'a>(lab: &'a Lab, home: &'a tempfile::TempDir) -> User<'a> {
    let me = User {
        lab,
        home: home.path(),
    };
    me.ok(&["login"]).await;
    me
}

/// Every one of `pages` pages is done and nothing failed.
async fn all_done(me: &User<'_>, pages: u64) {
    let j = jobs(me).await;
    assert_eq!(
        (j["pages_done"].as_u64(), j["failed"].as_u64()),
        (Some(pages), Some(0)),
        "{j}"
    );
}

/// The summary line of `migrate --json`.
fn summary(out: &str) -> Value {
    json(out.lines().last().unwrap_or_default())
}

/// Item 12: OneNote's fourth heading level arrives as Notion's `heading_4` (the server takes it
/// only from the version notebridge pins, and refuses it from older ones).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fourth_level_heading_arrives_as_heading_4() {
    let lab = Lab::start(quick()).await;
    let notes = generate(&NotebookSpec {
        fourth_headings: true,
        ..spec(3, 12)
    });
    lab.add_user("me", notes.clone());
    let home = tempfile::tempdir().unwrap();
    let me = signed_in(&lab, &home).await;
    let run = me
        .ok(&["--json", "migrate", "--to", &lab.target_page])
        .await;
    assert_eq!(summary(&run.stdout)["pages_done"], 3, "{}", run.stdout);
    let blocks = all_blocks(&lab, &lab.target_page);
    let fourth: Vec<&Value> = blocks.iter().filter(|b| b["type"] == "heading_4").collect();
    assert_eq!(fourth.len(), 3, "one heading_4 per page");
    for b in fourth {
        let text = b["heading_4"]["rich_text"][0]["plain_text"]
            .as_str()
            .unwrap();
        assert!(text.starts_with("Level four of page"), "{b}");
    }
    assert!(
        !blocks.iter().any(|b| b["type"] == "heading_3"),
        "no heading is demoted to level three"
    );
    verified_complete(&me).await;
}

/// The account's job counts as `status --json` shows them.
async fn jobs(me: &User<'_>) -> Value {
    let status = me.ok(&["--json", "status"]).await;
    json(&status.stdout)["accounts"][0]["jobs"].clone()
}

/// How many requests the Notion server answered `status`.
pub(crate) fn answered(lab: &Lab, status: u16) -> usize {
    lab.notion
        .request_log()
        .iter()
        .filter(|r| r.status == status)
        .count()
}

/// A run stopped by the block limit: exit 2 with the limit's advice, not a missing capability's.
pub(crate) fn stopped_at_block_limit(out: &crate::bin_support::Output) {
    assert_eq!(out.code, Some(2), "{}", out.all());
    for said in ["workspace block limit", "upgrade the workspace"] {
        assert!(out.stderr.contains(said), "{said}: {}", out.stderr);
    }
    assert!(!out.stderr.contains("lacks a capability"), "{}", out.stderr);
}

/// Item 13: the Free plan's block limit, answered in the workspace's language (French here), is
/// known by `additional_data.block_limit`: the run stops at once with exit 2 and the same advice,
/// nothing failed, and `--resume` after the upgrade completes it with nothing doubled.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_block_limit_in_another_language_stops_the_run_and_resume_completes_it() {
    let lab = Lab::start(quick()).await;
    let notes = generate(&spec(12, 13));
    lab.add_user("me", notes.clone());
    let home = tempfile::tempdir().unwrap();
    let me = signed_in(&lab, &home).await;
    lab.notion.set_localised_messages(true);
    lab.notion
        .set_block_limit(Some(lab.notion.block_count() + 40));

    let out = me.run(&["migrate", "--to", &lab.target_page]).await;
    stopped_at_block_limit(&out);
    let j = jobs(&me).await;
    assert_eq!(j["failed"], 0, "nothing failed: {j}");
    let done = j["pages_done"].as_u64().unwrap();
    assert!(done < 12, "stopped part way: {j}");

    lab.notion.set_block_limit(None);
    me.ok(&["migrate", "--resume"]).await;
    all_done(&me, 12).await;
    assert!(lab.notion.duplicate_titles(&lab.target_page).is_empty());
    verified_complete(&me).await;
}

/// A run that met `public_api_request_blocked`: exit 2 with that reason, "retrying will not help"
/// and `--resume`; each request met the block once at most (none was sent again).
pub(crate) fn stopped_blocked(lab: &Lab, out: &crate::bin_support::Output) {
    assert_eq!(out.code, Some(2), "{}", out.all());
    for said in [
        "public_api_request_blocked",
        "retrying will not help",
        "migrate --resume",
    ] {
        assert!(out.stderr.contains(said), "{said}: {}", out.stderr);
    }
    let refused = answered(lab, 429);
    assert!((1..=8).contains(&refused), "{refused} requests refused");
}

/// Item 9, Insert content. No endpoint reports which capabilities an integration holds
/// (developers.notion.com/reference/capabilities; `GET /v1/users/me` answers no capabilities),
/// every request that needs Insert content creates something, and a create Notion refuses for its
/// body first would prove nothing (the order of Notion's checks is not documented): so the run's
/// first write proves it, before any page exists. Without it the run stops at that write: exit 2
/// naming Insert content, no page written, nothing failed, no more than the writes already in
/// flight refused; once it is given, `--resume` migrates every page once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_insert_capability_stops_the_run_at_its_first_write_and_resume_completes() {
    let lab = Lab::start(quick()).await;
    lab.add_user("me", generate(&spec(6, 19)));
    lab.notion.set_insert_content(false);
    let home = tempfile::tempdir().unwrap();
    let me = signed_in(&lab, &home).await;

    let out = me.run(&["migrate", "--to", &lab.target_page]).await;
    assert_eq!(out.code, Some(2), "{}", out.all());
    assert!(
        out.stderr.contains("lacks a capability: Insert content."),
        "{}",
        out.stderr
    );
    let refused = answered(&lab, 403);
    assert!(refused >= 1, "the first write met the refusal");
    // Pages are written by a handful of workers: those already sending meet it too, no more.
    assert!(refused <= 8, "{refused} writes refused: the run went on");
    assert!(lab.notion.pages_under(&lab.target_page).is_empty());
    assert_eq!(jobs(&me).await["failed"], 0, "nothing marked failed");

    lab.notion.set_insert_content(true);
    me.ok(&["--json", "migrate", "--resume"]).await;
    all_done(&me, 6).await;
    assert!(lab.notion.duplicate_titles(&lab.target_page).is_empty());
    verified_complete(&me).await;
}

/// Item 10: a 429 naming `public_api_request_blocked` ("retrying won't help") stops the run at once
/// with that reason and exit 2: no request is sent again, nothing is marked failed, and `--resume`
/// once Notion lets the connection through again completes the migration.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_blocked_connection_stops_at_once_with_its_reason_and_resume_completes() {
    let lab = Lab::start(quick()).await;
    lab.add_user("me", generate(&spec(6, 10)));
    let home = tempfile::tempdir().unwrap();
    let me = signed_in(&lab, &home).await;
    // Blocked part way: after the first few requests, every one.
    lab.notion
        .inject(FaultRule::new(FaultKind::RequestBlocked).after(12));
    let out = me.run(&["migrate", "--to", &lab.target_page]).await;
    stopped_blocked(&lab, &out);
    assert_eq!(jobs(&me).await["failed"], 0);

    lab.notion.clear_faults();
    me.ok(&["migrate", "--resume"]).await;
    all_done(&me, 6).await;
    verified_complete(&me).await;
}

/// Requests of `endpoint` the Notion test server answered.
pub(crate) fn asked(lab: &Lab, endpoint: Endpoint) -> usize {
    lab.notion
        .request_log()
        .iter()
        .filter(|r| r.endpoint == endpoint)
        .count()
}

/// Migrates `notes` in a fresh lab and clean environment, with `faults` injected after sign-in;
/// returns the lab (to read what Notion holds and was asked) once `verify` said complete.
async fn migrated(
    notes: &notebridge_testkit::graph::model::UserNotes,
    faults: &[FaultRule],
) -> Lab {
    let lab = Lab::start(quick()).await;
    lab.add_user("me", notes.clone());
    let home = tempfile::tempdir().unwrap();
    let me = signed_in(&lab, &home).await;
    for f in faults {
        lab.notion.inject(f.clone());
    }
    let run = me
        .ok(&["--json", "migrate", "--to", &lab.target_page])
        .await;
    assert_eq!(
        summary(&run.stdout)["pages_done"],
        notes.pages.len(),
        "{}",
        run.stdout
    );
    verified_complete(&me).await;
    lab
}

/// Item 11: writes answered `503` that say what they saved (`committed_resource_id` for a created
/// page, `committed_child_ids` for appended blocks): nothing is written twice, nothing is lost, and
/// no look-up is made for them (the run asks Notion for exactly the listings a run without them
/// asks for).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn writes_answered_503_that_name_what_they_saved_are_neither_repeated_nor_looked_up() {
    let notes = generate(&NotebookSpec {
        images_per_page: 1,
        resource_bytes: 1024,
        subpage_ratio: 0.3,
        extra_paragraphs: 150,
        ..spec(8, 11)
    });
    let control = migrated(&notes, &[]).await;
    let saved = |e| {
        FaultRule::new(FaultKind::AppliedThen503Saved)
            .on(e)
            .after(1)
            .times(3)
    };
    let lab = migrated(
        &notes,
        &[saved(Endpoint::CreatePage), saved(Endpoint::AppendChildren)],
    )
    .await;
    assert_eq!(lab.notion.counters().faults, 6, "every fault fired");
    for e in [Endpoint::CreatePage, Endpoint::AppendChildren] {
        assert_eq!(asked(&lab, e), asked(&control, e), "{e:?} sent once each");
    }
    assert_eq!(
        asked(&lab, Endpoint::ListChildren),
        asked(&control, Endpoint::ListChildren),
        "no look-up"
    );
    assert_eq!(
        lab.notion.block_count(),
        control.notion.block_count(),
        "nothing doubled, nothing missing"
    );
}

/// Item 8: a personal access token. `GET /v1/users/me` answers the person, so doctor names the
/// token's kind and says the upload limit is not reported; the run sends each file, and one over
/// the workspace's limit is refused by Notion and becomes a placeholder with Notion's reason,
/// nothing failed; the Free plan's block limit does not hold it; a page its creator cannot open is
/// told as such, not as one to share with an integration.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_personal_access_token_is_named_and_its_upload_limit_learned_from_notions_refusal() {
    let lab = Lab::start(quick()).await;
    let notes = generate(&NotebookSpec {
        images_per_page: 1,
        resource_bytes: 4000,
        ..spec(4, 8)
    });
    lab.add_user("me", notes.clone());
    lab.notion.set_personal_token_of(Some("Ada Lovelace"));
    lab.notion.set_max_file_upload_size(3000);
    lab.notion
        .set_block_limit(Some(lab.notion.block_count() + 3));
    let home = tempfile::tempdir().unwrap();
    let me = signed_in(&lab, &home).await;

    let doctor = me
        .run(&["--json", "doctor", "--to", &lab.target_page])
        .await;
    let checks = crate::bin_support::doctor_passed(doctor.code, &doctor.stdout)["checks"].clone();
    let detail = |name: &str| -> String {
        checks
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == name)
            .map(|c| c["detail"].as_str().unwrap_or_default().to_owned())
            .unwrap_or_else(|| panic!("no {name}: {checks}"))
    };
    assert!(
        detail("notion_token").contains("personal access token of Ada Lovelace"),
        "{checks}"
    );
    assert!(
        detail("upload_limit").contains("not reported to a personal access token"),
        "{checks}"
    );
    let missing = me
        .run(&[
            "--json",
            "doctor",
            "--to",
            "0123456789abcdef0123456789abcdef",
        ])
        .await;
    assert_eq!(missing.code, Some(2), "{}", missing.all());
    assert!(
        missing.stdout.contains("cannot open it"),
        "{}",
        missing.stdout
    );
    assert!(
        !missing.stdout.contains("Connections >"),
        "{}",
        missing.stdout
    );

    let run = me
        .ok(&["--json", "migrate", "--to", &lab.target_page])
        .await;
    let s = summary(&run.stdout);
    assert_eq!(s["pages_done"], 4, "{}", run.stdout);
    assert_eq!(jobs(&me).await["failed"], 0);
    let refused = placeholders(&lab, &lab.target_page);
    assert_eq!(refused.len(), 4, "each picture a placeholder: {refused:?}");
    for t in &refused {
        assert!(t.contains("at most 3000 bytes"), "Notion's reason: {t}");
    }
    verified_complete(&me).await;
}

/// Item 8, remembered: the size of an upload Notion refused a personal access token is kept in the
/// state database, so a later run sends no file that big (no create, no send, counted on the test
/// server) and makes it a placeholder quoting Notion's refusal; a smaller file still goes, and
/// doctor says where the limit comes from.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_upload_size_is_remembered_and_no_file_that_big_is_sent_again() {
    let lab = Lab::start(quick()).await;
    let pictures = |pages, seed, big| {
        generate(&NotebookSpec {
            images_per_page: 1,
            resource_bytes: 1000,
            large_resource_bytes: Some(big),
            ..spec(pages, seed)
        })
    };
    let user = lab.add_user("me", pictures(2, 80, 5000));
    lab.notion.set_personal_token_of(Some("Ada Lovelace"));
    lab.notion.set_max_file_upload_size(3000);
    let home = tempfile::tempdir().unwrap();
    let me = signed_in(&lab, &home).await;
    me.ok(&["--json", "migrate", "--to", &lab.target_page])
        .await;
    // The 5000-byte picture was created, sent once and refused; the 1000-byte one went.
    let refused_sends = || {
        lab.notion
            .request_log()
            .iter()
            .filter(|r| r.endpoint == Endpoint::SendUpload && r.status != 200)
            .count()
    };
    assert_eq!(refused_sends(), 1);
    let created = asked(&lab, Endpoint::CreateUpload);

    let doctor = me.run(&["--json", "doctor"]).await;
    let limit = crate::bin_support::doctor_passed(doctor.code, &doctor.stdout)["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "upload_limit")
        .map(|c| c["detail"].as_str().unwrap().to_owned())
        .unwrap();
    assert!(
        limit.contains("refusal of a 5000-byte upload")
            && limit.contains("files of 5000 bytes or more"),
        "{limit}"
    );

    // New pages: a picture bigger than the refused one, and a small one.
    lab.graph.load(&user.id, pictures(2, 81, 6000));
    let run = me
        .ok(&["--json", "migrate", "--to", &lab.target_page])
        .await;
    let s = summary(&run.stdout);
    assert_eq!(s["this_run"]["pages"], 2, "{}", run.stdout);
    assert_eq!(refused_sends(), 1, "no upload refused again");
    assert_eq!(
        asked(&lab, Endpoint::CreateUpload) - created,
        s["this_run"]["files"].as_u64().unwrap() as usize,
        "an upload created for each file that went, none for the one too big"
    );
    let placeholders = placeholders(&lab, &lab.target_page);
    assert_eq!(placeholders.len(), 2, "{placeholders:?}");
    assert!(
        placeholders.iter().any(|t| t.contains("6000 bytes")
            && t.contains("refused a file of 5000 bytes")
            && t.contains("at most 3000 bytes")),
        "Notion's reason, remembered: {placeholders:?}"
    );
    assert_eq!(jobs(&me).await["failed"], 0);
    verified_complete(&me).await;
}

/// Item 9: a connection without Update content (which the link pass, `--update` and trashing
/// need) is found before any page is written, by doctor and by the run (just before its first
/// write), which exits 2 saying what to give it; once given, the same command migrates
/// everything.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_update_capability_is_found_before_any_work() {
    let lab = Lab::start(quick()).await;
    let notes = generate(&NotebookSpec {
        title_links: true,
        ..spec(5, 9)
    });
    lab.add_user("me", notes.clone());
    lab.notion.set_update_content(false);
    let home = tempfile::tempdir().unwrap();
    let me = signed_in(&lab, &home).await;
    let doctor = me
        .run(&["--json", "doctor", "--to", &lab.target_page])
        .await;
    assert_eq!(doctor.code, Some(2), "{}", doctor.all());
    let checks = json(&doctor.stdout)["checks"].clone();
    let caps = checks
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "notion_capabilities")
        .cloned()
        .unwrap_or_else(|| panic!("{checks}"));
    assert_eq!(caps["ok"], false, "{caps}");
    assert!(caps["fix"].as_str().unwrap().contains("Update"), "{caps}");

    let out = me.run(&["migrate", "--to", &lab.target_page]).await;
    assert_eq!(out.code, Some(2), "{}", out.all());
    assert!(out.stderr.contains("lacks a capability"), "{}", out.stderr);
    assert!(out.stderr.contains("Update"), "{}", out.stderr);
    assert_eq!(
        asked(&lab, Endpoint::CreatePage),
        0,
        "no work before the check"
    );
    assert!(lab.notion.pages_under(&lab.target_page).is_empty());

    lab.notion.set_update_content(true);
    let run = me
        .ok(&["--json", "migrate", "--to", &lab.target_page])
        .await;
    assert_eq!(summary(&run.stdout)["pages_done"], 5, "{}", run.stdout);
    verified_complete(&me).await;

    // A run that finds nothing to write sends no proof (Update content is proven just before a
    // run's first write): it does not stop, and no write request reaches Notion.
    lab.notion.set_update_content(false);
    let before = lab.notion.counters().writes();
    me.ok(&["migrate", "--to", &lab.target_page]).await;
    me.ok(&["migrate", "--resume"]).await;
    assert_eq!(lab.notion.counters().writes(), before);
}
