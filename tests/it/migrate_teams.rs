//! `migrate --group/--site` through the real binary against the test servers: a group's and a
//! site's notebooks migrated next to the account's own, each under its one page beneath the
//! target, mirrored page by page, resumed after `kill -9` with nothing created twice, linked to
//! from an own page, verified by `verify` and shown by `status`; an item that turns unreadable
//! during the run fails alone (exit 4); without Notes.Read.All nothing is planned (exit 3).

use std::time::Duration;

use crate::migrate_support;

use crate::bin_support::Start;
use migrate_support::{assert_mirrors_at, command, counts, inventory, State};
use notebridge::store::Db;
use notebridge_testkit::generator::{generate, NotebookSpec};
use notebridge_testkit::graph::teams::{group_key, site_key, TeamGroup, TeamSite};
use notebridge_testkit::lab::{Lab, LabConfig, TEAM_SCOPES};
use notebridge_testkit::notion::{Endpoint, FaultKind, FaultRule};
use notebridge_testkit::TestUser;
use serde_json::Value;

const GROUP: &str = "6d2c1e0a-0000-4000-8000-00000000cafe";
const SITE: &str = "contoso.sharepoint.com,aaaaaaaa-1111-1111-1111-111111111111,bbbbbbbb-2222-2222-2222-222222222222";
const SITE_URL: &str = "https://contoso.sharepoint.com/sites/Design";
const GROUP_PAGE: &str = "Marketing (Microsoft 365 group)";
const SITE_PAGE: &str = "Design (SharePoint site)";

fn spec(notebooks: usize, depth: usize, pages: usize, seed: u64) -> NotebookSpec {
    NotebookSpec {
        notebooks,
        section_groups_depth: depth,
        sections_per_container: 2,
        pages_per_section: pages,
        subpage_ratio: 0.3,
        images_per_page: 1,
        resource_bytes: 2048,
        seed,
        ..NotebookSpec::default()
    }
}

/// Alice with her own notebook, member of "Marketing" (two notebooks with a section group each),
/// reader and follower of "Design"; signed in with the team scopes.
async fn start(notion_per_second: u32) -> (Lab, TestUser, TestUser, State) {
    let lab = Lab::start(LabConfig {
        user_windows: "60/600ms,600/6s".into(),
        app_windows: "120/600ms,1200/6s".into(),
        notion_per_second,
        ..LabConfig::default()
    })
    .await;
    let alice = lab.add_user("alice", generate(&spec(1, 0, 3, 7)));
    let bob = TestUser::named("bob");
    lab.graph.add_user(bob.clone());
    lab.graph.add_group(
        TeamGroup::new(GROUP, "Marketing", &[&alice.id, &bob.id]),
        generate(&spec(2, 1, 4, 41)),
    );
    lab.graph.add_site(
        TeamSite::new(SITE, "Design", SITE_URL, &[&alice.id]),
        generate(&spec(1, 0, 3, 51)),
    );
    let state = State::new();
    lab.sign_in_with(&Db::open(&state.db).unwrap(), "alice", &alice, TEAM_SCOPES);
    (lab, alice, bob, state)
}

fn team_command(lab: &Lab, state: &State, args: &[&str]) -> tokio::process::Command {
    let mut c = command(lab, state, args);
    c.env("NOTEBRIDGE_SCOPES", TEAM_SCOPES.join(" "));
    c
}

async fn run(lab: &Lab, state: &State, args: &[&str]) -> (i32, String, String) {
    let out = team_command(lab, state, args).run_to_end().await;
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn json(out: &str) -> Value {
    serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("{e}: {out}"))
}

fn group_inv_key() -> String {
    format!("alice/group:{GROUP}")
}

fn site_inv_key() -> String {
    format!("alice/site:{SITE}")
}

/// The one page titled `title` under the target.
fn page_under_target(lab: &Lab, title: &str) -> String {
    let found: Vec<String> = lab
        .notion
        .pages_under(&lab.target_page)
        .into_iter()
        .filter(|(_, t)| t == title)
        .map(|(id, _)| id)
        .collect();
    assert_eq!(found.len(), 1, "pages titled {title:?} under the target");
    found.into_iter().next().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_group_and_a_site_migrate_beside_own_notebooks_resume_after_kill_9_and_verify() {
    let (lab, alice, _bob, state) = start(40).await;
    // Alice's first page links to the group's first page (a team page, migrated later).
    let group_page = lab.graph.notes(&group_key(GROUP)).pages[0].clone();
    let linking = lab.graph.mutate(&alice.id, |n| {
        n.pages[0].links.insert(0, group_page.id.clone());
        n.pages[0].id.clone()
    });

    // Her own notebooks first: the link to the team's page cannot resolve yet.
    let (code, out, err) = run(
        &lab,
        &state,
        &["migrate", "--account", "alice", "--to", &lab.target_page],
    )
    .await;
    assert_eq!(code, 0, "{out}{err}");
    {
        let db = Db::open(&state.db).unwrap();
        let pending = db.pages_with_pending_links("alice").unwrap();
        assert!(
            pending.iter().any(|p| p.item_id == linking),
            "the link to the team page waits"
        );
    }

    // The group and the site, killed (SIGKILL) while the group's pages are being written.
    let mut child = team_command(
        &lab,
        &state,
        &[
            "migrate",
            "--account",
            "alice",
            "--to",
            &lab.target_page,
            "--group",
            "Marketing",
            "--site",
            SITE_URL,
        ],
    )
    .start();
    let mut killed = false;
    for _ in 0..1200 {
        tokio::time::sleep(Duration::from_millis(25)).await;
        if let Some(status) = child.try_wait().unwrap() {
            panic!("the run ended ({status}) before it could be killed");
        }
        if state.db.exists() && counts(&state.db, &group_inv_key())["pages_done"] >= 3 {
            child.start_kill().unwrap();
            let _ = child.wait().await;
            killed = true;
            break;
        }
    }
    assert!(killed, "the group's pages never started");
    let part = counts(&state.db, &group_inv_key());
    assert!(part["pages_done"] < part["pages_total"], "{part:?}");

    // Resume drains both sources (their keys belong to alice) with nothing created twice.
    let (code, out, err) = run(&lab, &state, &["--json", "migrate", "--resume"]).await;
    assert_eq!(code, 0, "{out}{err}");
    // The sources share the account's workers (and so its bound on pages held ahead).
    let r = json(&out);
    assert!(
        r["this_run"]["most_pages_ahead"].as_u64().unwrap()
            <= r["this_run"]["workers"].as_u64().unwrap(),
        "{r}"
    );
    for key in [group_inv_key(), site_inv_key(), "alice".to_owned()] {
        let c = counts(&state.db, &key);
        assert_eq!(c["pages_done"], c["pages_total"], "{key}: {c:?}");
        assert_eq!((c["failed"], c["queued"], c["running"]), (0, 0, 0), "{key}");
    }

    // Under the target: her notebook, then one page per source, each mirroring its OneNote tree.
    let group_root = page_under_target(&lab, GROUP_PAGE);
    let site_root = page_under_target(&lab, SITE_PAGE);
    let own = inventory(&state.db, "alice");
    assert_mirrors_at(
        &lab,
        &lab.target_page,
        &alice.id,
        &format!("users('{}')", alice.id),
        &own,
        &[GROUP_PAGE, SITE_PAGE],
    );
    let group_inv = inventory(&state.db, &group_inv_key());
    assert_eq!(group_inv.len(), 2);
    assert_mirrors_at(
        &lab,
        &group_root,
        &group_key(GROUP),
        &format!("groups('{GROUP}')"),
        &group_inv,
        &[],
    );
    let site_inv = inventory(&state.db, &site_inv_key());
    assert_eq!(site_inv.len(), 1);
    assert_mirrors_at(
        &lab,
        &site_root,
        &site_key(SITE),
        &format!("sites('{SITE}')"),
        &site_inv,
        &[],
    );

    // The own page's link now points at the team page's Notion page.
    let db = Db::open(&state.db).unwrap();
    let from = db.notion_item("alice", &linking).unwrap().unwrap();
    let to = db
        .notion_item(&group_inv_key(), &group_page.id)
        .unwrap()
        .unwrap();
    let want = format!(
        "https://www.notion.so/{}",
        to.into_page_id().unwrap().replace('-', "")
    );
    let blocks =
        serde_json::to_string(&lab.notion.blocks_of(&from.into_page_id().unwrap())).unwrap();
    assert!(blocks.contains(&want), "the own page links to {want}");
    assert!(db.pages_with_pending_links("alice").unwrap().is_empty());

    // verify reconciles all three, status shows the sources in the account's totals.
    let (code, out, err) = run(&lab, &state, &["--json", "verify", "--account", "alice"]).await;
    assert_eq!(code, 0, "{out}{err}");
    let v = json(&out);
    let verified: Vec<&str> = v["accounts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["account"].as_str().unwrap())
        .collect();
    assert_eq!(verified.len(), 3, "{verified:?}");
    // People read a source's part by its name, not its key.
    let (code, out, err) = run(&lab, &state, &["verify", "--account", "alice"]).await;
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("account alice · Marketing (Microsoft 365 group)"),
        "{out}"
    );
    let (code, out, err) = run(&lab, &state, &["--json", "status", "--account", "alice"]).await;
    assert_eq!(code, 0, "{err}");
    let s = json(&out);
    let a = &s["accounts"][0];
    let all = |k: &str| counts(&state.db, k)["pages_total"];
    assert_eq!(
        a["jobs"]["pages_done"].as_i64().unwrap(),
        all("alice") + all(&group_inv_key()) + all(&site_inv_key())
    );
    let sources = a["sources"].as_array().unwrap();
    assert_eq!(sources.len(), 2, "{a}");
    assert_eq!(sources[0]["kind"], "group");
    assert_eq!(sources[0]["name"], "Marketing");
    assert_eq!(sources[1]["kind"], "site");
    assert_eq!(sources[1]["url"], SITE_URL);
    for src in sources {
        assert_eq!(src["jobs"]["pages_done"], src["jobs"]["pages_total"]);
        assert!(src["jobs"]["pages_done"].as_i64().unwrap() > 0);
    }
    let (code, out, _) = run(&lab, &state, &["status", "--account", "alice"]).await;
    assert_eq!(code, 0);
    assert!(
        out.contains("of which Marketing (Microsoft 365 group)"),
        "{out}"
    );
    let html = state.dir.path().join("report.html");
    let (code, _, err) = run(
        &lab,
        &state,
        &[
            "report",
            "--account",
            "alice",
            "--output",
            html.to_str().unwrap(),
        ],
    )
    .await;
    assert_eq!(code, 0, "{err}");
    let html = std::fs::read_to_string(html).unwrap();
    // Generated names repeat across sources ("Notebook 1"): each source has its own part, headed
    // by its key.
    for key in [group_inv_key(), site_inv_key()] {
        assert!(html.contains(&key), "the report has {key}");
    }
    assert!(html.contains("alice · Marketing (Microsoft 365 group)"));

    // Everything done: a new plan of the same sources changes nothing in Notion.
    let before = lab.notion.pages_under(&lab.target_page).len();
    let (code, out, err) = run(
        &lab,
        &state,
        &[
            "--json",
            "migrate",
            "--account",
            "alice",
            "--to",
            &lab.target_page,
            "--all-sources",
        ],
    )
    .await;
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(json(&out)["this_run"]["pages"], 0);
    assert_eq!(lab.notion.pages_under(&lab.target_page).len(), before);

    // --update: a group page changed in OneNote is rewritten in place, renamed title included.
    let changed = lab.graph.mutate(&group_key(GROUP), |n| {
        let p = n.pages.iter_mut().find(|p| p.level == 0).unwrap();
        p.content_seed = p.content_seed.wrapping_add(1);
        p.modified += chrono::Duration::days(1);
        p.title = format!("{} (renamed)", p.title);
        p.id.clone()
    });
    let (code, out, err) = run(
        &lab,
        &state,
        &[
            "migrate",
            "--account",
            "alice",
            "--to",
            &lab.target_page,
            "--group",
            GROUP,
            "--update",
        ],
    )
    .await;
    assert_eq!(code, 0, "{out}{err}");
    assert!(err.contains("1 changed pages to rewrite"), "{err}");
    assert_eq!(lab.notion.pages_under(&lab.target_page).len(), before);
    let group_inv = inventory(&state.db, &group_inv_key());
    assert!(format!("{group_inv:?}").contains("(renamed)"), "{changed}");
    assert_mirrors_at(
        &lab,
        &group_root,
        &group_key(GROUP),
        &format!("groups('{GROUP}')"),
        &group_inv,
        &[],
    );
    let (code, out, err) = run(&lab, &state, &["verify"]).await;
    assert_eq!(code, 0, "{out}{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_team_page_that_turns_unreadable_during_the_run_fails_alone_with_exit_4() {
    let (lab, alice, bob, state) = start(150).await;
    // A group that matches nothing is exit 2 naming it; a dry run plans and creates nothing.
    let to = lab.target_page.clone();
    let (code, _, err) = run(
        &lab,
        &state,
        &[
            "migrate",
            "--account",
            "alice",
            "--to",
            &to,
            "--group",
            "Sales",
        ],
    )
    .await;
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("Sales"), "{err}");
    let (code, out, err) = run(
        &lab,
        &state,
        &[
            "--json",
            "migrate",
            "--account",
            "alice",
            "--to",
            &to,
            "--all-sources",
            "--dry-run",
        ],
    )
    .await;
    assert_eq!(code, 0, "{out}{err}");
    let plan = json(&out);
    assert_eq!(plan["dry_run"], true);
    let own = lab.graph.notes(&alice.id).pages.len() as u64;
    let teams = (lab.graph.notes(&group_key(GROUP)).pages.len()
        + lab.graph.notes(&site_key(SITE)).pages.len()) as u64;
    assert_eq!(plan["plan"]["accounts"][0]["pages"], own + teams, "{plan}");
    assert!(
        lab.notion.pages_under(&to).is_empty(),
        "a dry run writes nothing"
    );
    assert!(Db::open(&state.db)
        .unwrap()
        .queued_keys("alice")
        .unwrap()
        .is_empty());
    // The group's page is the run's first page creation: Notion applies it and answers 504, and
    // the page is still made exactly once (checked below).
    lab.notion.inject(
        FaultRule::new(FaultKind::AppliedThen504)
            .on(Endpoint::CreatePage)
            .times(1),
    );
    // Planned, then stopped at once: nothing of the pages is fetched yet.
    let (code, out, err) = run(
        &lab,
        &state,
        &[
            "migrate",
            "--account",
            "alice",
            "--to",
            &lab.target_page,
            "--all-sources",
            "--max-duration",
            "1ms",
        ],
    )
    .await;
    assert_eq!(code, 75, "{out}{err}");
    assert_eq!(
        lab.notion.counters().faults,
        1,
        "the group page's creation was hit"
    );
    let planned = counts(&state.db, &group_inv_key());
    assert!(
        planned["pages_total"] > 0 && planned["pages_done"] == 0,
        "{planned:?}"
    );

    // Alice leaves the group meanwhile: its pages answer 403 from now on.
    lab.graph.add_group(
        TeamGroup::new(GROUP, "Marketing", &[&bob.id]),
        Default::default(),
    );
    let (code, out, err) = run(&lab, &state, &["migrate", "--resume"]).await;
    assert_eq!(code, 4, "{out}{err}");
    // Every group page failed, or waits on its failed parent page (a subpage is never written
    // without it).
    let g = Db::open(&state.db)
        .unwrap()
        .job_counts(&group_inv_key())
        .unwrap();
    assert_eq!(g.pages_done, 0, "{g:?}");
    assert!(g.failed > 0, "{g:?}");
    assert_eq!(g.queued, g.blocked, "{g:?}");
    assert_eq!(g.failed + g.blocked, g.pages_total, "{g:?}");
    // The rest went on.
    for key in ["alice".to_owned(), site_inv_key()] {
        let c = counts(&state.db, &key);
        assert_eq!(c["pages_done"], c["pages_total"], "{key}: {c:?}");
        assert_eq!(c["failed"], 0, "{key}");
    }
    page_under_target(&lab, GROUP_PAGE);
    assert_mirrors_at(
        &lab,
        &page_under_target(&lab, SITE_PAGE),
        &site_key(SITE),
        &format!("sites('{SITE}')"),
        &inventory(&state.db, &site_inv_key()),
        &[],
    );
    // status names the failed pages and why.
    let (code, out, _) = run(&lab, &state, &["--json", "status", "--account", "alice"]).await;
    assert_eq!(code, 0);
    let s = json(&out);
    let failures = s["accounts"][0]["failures"].as_array().unwrap();
    assert_eq!(failures.len() as i64, g.failed);
    assert!(
        failures
            .iter()
            .all(|f| f["kind"] == "page" && f["error"].as_str().unwrap().contains("403")),
        "{failures:?}"
    );
    // verify agrees that the group is incomplete.
    let (code, out, err) = run(&lab, &state, &["verify"]).await;
    assert_eq!(code, 4, "{out}{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_notes_read_all_migrate_of_a_group_is_exit_3_and_creates_nothing() {
    let (lab, alice, _bob, state) = start(150).await;
    // Signed in again with the default scopes only (no Notes.Read.All).
    lab.sign_in(&Db::open(&state.db).unwrap(), "alice", &alice);
    let out = command(
        &lab,
        &state,
        &[
            "migrate",
            "--account",
            "alice",
            "--to",
            &lab.target_page,
            "--group",
            "Marketing",
        ],
    )
    .run_to_end()
    .await;
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(err.contains("Notes.Read.All"), "{err}");
    assert!(lab.notion.pages_under(&lab.target_page).is_empty());
    assert!(Db::open(&state.db)
        .unwrap()
        .queued_keys("alice")
        .unwrap()
        .is_empty());
}

/// `sync` of an account whose plans went to its own notebooks and to a group reads both again:
/// a page renamed in each is renamed in Notion, under its own source's page, in one run.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sync_reads_again_the_account_and_the_group_it_migrated() {
    let (lab, alice, _bob, state) = start(300).await;
    let (code, out, err) = run(
        &lab,
        &state,
        &["migrate", "--account", "alice", "--to", &lab.target_page],
    )
    .await;
    assert_eq!(code, 0, "{out}{err}");
    let (code, out, err) = run(
        &lab,
        &state,
        &[
            "migrate",
            "--account",
            "alice",
            "--to",
            &lab.target_page,
            "--group",
            "Marketing",
        ],
    )
    .await;
    assert_eq!(code, 0, "{out}{err}");
    let own = lab.graph.mutate(&alice.id, |n| {
        n.pages[0].title = "Own page renamed".into();
        n.pages[0].id.clone()
    });
    let team = lab.graph.mutate(&group_key(GROUP), |n| {
        n.pages[0].title = "Team page renamed".into();
        n.pages[0].id.clone()
    });
    let (code, out, err) = run(&lab, &state, &["--json", "sync", "--account", "alice"]).await;
    assert_eq!(code, 0, "{out}{err}");
    let db = Db::open(&state.db).unwrap();
    let page = |key: &str, id: &str| {
        db.notion_item(key, id)
            .unwrap()
            .and_then(|i| i.into_page_id())
            .unwrap()
    };
    let title = |id: &str| {
        lab.notion
            .dump(id)
            .and_then(|d| d.title)
            .unwrap_or_default()
    };
    assert_eq!(title(&page("alice", &own)), "Own page renamed");
    assert_eq!(title(&page(&group_inv_key(), &team)), "Team page renamed");
}
