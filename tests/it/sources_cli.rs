//! `notebridge sources` and `scan --group/--site/--all-sources` through the real binary against the
//! test servers: what is found and remembered, the contract's documents, each team's inventory kept
//! apart from the account's own, and the permission, not-found, 10008 and personal-account errors
//! with their exit codes.

use crate::migrate_support;

use crate::bin_support::Start;
use migrate_support::{command, State};
use notebridge::graph::sources::SourceKind;
use notebridge::store::inventory::totals;
use notebridge::store::Db;
use notebridge_testkit::generator::{generate, NotebookSpec};
use notebridge_testkit::graph::teams::{group_key, site_key, TeamGroup, TeamSite};
use notebridge_testkit::lab::{expected_inventory, Lab, LabConfig, TEAM_SCOPES};
use notebridge_testkit::TestUser;
use serde_json::Value;

const GROUP: &str = "6d2c1e0a-0000-4000-8000-00000000cafe";
const SITE: &str = "contoso.sharepoint.com,aaaaaaaa-1111-1111-1111-111111111111,bbbbbbbb-2222-2222-2222-222222222222";
const SITE_URL: &str = "https://contoso.sharepoint.com/sites/Design";

/// Runs the binary; `team` sets NOTEBRIDGE_SCOPES to the team scopes the grant was made with.
async fn run(lab: &Lab, state: &State, team: bool, args: &[&str]) -> (i32, String, String) {
    let mut c = command(lab, state, args);
    if team {
        c.env("NOTEBRIDGE_SCOPES", TEAM_SCOPES.join(" "));
    }
    let out = c.run_to_end().await;
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

struct Teams {
    lab: Lab,
    alice: TestUser,
    state: State,
}

/// Alice with her own notebook, member of "Marketing" (notebooks), of "Empty" (none) and of a
/// security group; she follows "Design" (notebooks) and can read but does not follow "Archive".
async fn start(team_sign_in: bool) -> Teams {
    let lab = Lab::start(LabConfig {
        user_windows: "200/600ms,2000/6s".into(),
        ..LabConfig::default()
    })
    .await;
    let alice = lab.add_user("alice", generate(&NotebookSpec::tiny(1)));
    let bob = TestUser::named("bob");
    lab.graph.add_user(bob.clone());
    let group_notes = generate(&NotebookSpec {
        notebooks: 2,
        section_groups_depth: 1,
        sections_per_container: 1,
        pages_per_section: 2,
        images_per_page: 0,
        seed: 41,
        ..NotebookSpec::default()
    });
    lab.graph.add_group(
        TeamGroup::new(GROUP, "Marketing", &[&alice.id, &bob.id]),
        group_notes,
    );
    lab.graph.add_group(
        TeamGroup::new("e0-empty", "Empty", &[&alice.id]),
        Default::default(),
    );
    lab.graph.add_group(
        TeamGroup {
            unified: false,
            ..TeamGroup::new("5ec-staff", "Staff", &[&alice.id])
        },
        Default::default(),
    );
    lab.graph.add_site(
        TeamSite::new(SITE, "Design", SITE_URL, &[&alice.id]),
        generate(&NotebookSpec::tiny(51)),
    );
    lab.graph.add_site(
        TeamSite {
            followers: Vec::new(),
            ..TeamSite::new(
                "contoso.sharepoint.com,c,d",
                "Archive",
                "https://contoso.sharepoint.com/sites/Archive",
                &[&alice.id],
            )
        },
        generate(&NotebookSpec::tiny(61)),
    );
    let state = State::new();
    let db = Db::open(&state.db).unwrap();
    if team_sign_in {
        lab.sign_in_with(&db, "alice", &alice, TEAM_SCOPES);
    } else {
        lab.sign_in(&db, "alice", &alice);
    }
    Teams { lab, alice, state }
}

fn json(out: &str) -> Value {
    serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("{e}: {out}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sources_lists_own_notebooks_groups_and_followed_sites_and_remembers_them() {
    let t = start(true).await;
    // memberOf and followedSites one item per page: every @odata.nextLink is followed.
    t.lab.graph.set_directory_page_size(1);
    let (code, out, err) = run(
        &t.lab,
        &t.state,
        true,
        &["sources", "--account", "alice", "--json"],
    )
    .await;
    assert_eq!(code, 0, "{err}");
    let doc = json(&out);
    assert_eq!(doc["account"], "alice");
    let got: Vec<(String, String, i64)> = doc["sources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["kind"].as_str().unwrap().to_owned(),
                s["id"].as_str().unwrap().to_owned(),
                s["notebooks"].as_i64().unwrap(),
            )
        })
        .collect();
    // Empty holds no notebooks, Staff is a security group, Archive is not followed.
    assert_eq!(
        got,
        vec![
            ("personal".into(), t.alice.id.clone(), 1),
            ("group".into(), GROUP.into(), 2),
            ("site".into(), SITE.into(), 1),
        ]
    );
    assert_eq!(doc["sources"][1]["name"], "Marketing");
    assert_eq!(doc["sources"][2]["url"], SITE_URL);
    assert!(doc["sources"][1].get("url").is_none());
    // What it cost: 4 notebook listings (own, Marketing, Empty, Design), 4 memberOf pages and one
    // followedSites page.
    assert!(
        err.contains("3 sources found with 9 Graph requests"),
        "says what it cost: {err}"
    );

    let stored = Db::open(&t.state.db).unwrap().sources("alice").unwrap();
    let kinds: Vec<SourceKind> = stored.iter().map(|s| s.source.kind).collect();
    assert_eq!(
        kinds,
        vec![SourceKind::Personal, SourceKind::Group, SourceKind::Site]
    );
    assert_eq!(stored[1].notebooks, Some(2));

    // Discovery runs in the foreground lane and costs OneNote budget: one listing per source
    // (own, Marketing, Empty, Design), each by alice's token.
    let listings = t
        .lab
        .graph
        .log()
        .iter()
        .filter(|e| e.path.contains("/onenote/notebooks"))
        .count();
    assert_eq!(
        listings, 4,
        "one listing per source: own, Marketing, Empty, Design"
    );

    let (code, out, _) = run(&t.lab, &t.state, true, &["sources", "--account", "alice"]).await;
    assert_eq!(code, 0);
    assert!(
        out.contains("Marketing") && out.contains(&format!("--group {GROUP}")),
        "{out}"
    );
    assert!(out.contains(&format!("--site {SITE_URL}")), "{out}");
    let member_of_pages = t
        .lab
        .graph
        .log()
        .iter()
        .filter(|e| e.path.contains("/me/memberOf"))
        .count();
    assert_eq!(
        member_of_pages,
        2 * 4,
        "3 groups and a role, one a page, in each of two runs"
    );

    // A site named by its id afterwards keeps the name and URL discovery found.
    let (code, out, err) = run(
        &t.lab,
        &t.state,
        true,
        &["scan", "--account", "alice", "--site", SITE, "--json"],
    )
    .await;
    assert_eq!(code, 0, "{err}");
    let doc = json(&out);
    assert_eq!(doc["sites"][0]["name"], "Design");
    assert_eq!(doc["sites"][0]["url"], SITE_URL);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scan_reads_a_group_and_a_site_and_keeps_their_inventory_apart() {
    let t = start(true).await;
    let (code, out, err) = run(
        &t.lab,
        &t.state,
        true,
        &[
            "scan",
            "--account",
            "alice",
            "--group",
            "marketing",
            "--site",
            SITE_URL,
            "--json",
        ],
    )
    .await;
    assert_eq!(code, 0, "{err}");
    let doc = json(&out);
    let group_inv = expected_inventory(&t.lab.graph.notes(&group_key(GROUP)));
    let site_inv = expected_inventory(&t.lab.graph.notes(&site_key(SITE)));
    assert_eq!(
        doc["notebooks"],
        serde_json::json!([]),
        "own notebooks not asked for"
    );
    assert_eq!(doc["groups"][0]["id"], GROUP);
    assert_eq!(doc["groups"][0]["name"], "Marketing");
    assert_eq!(
        doc["groups"][0]["notebooks"],
        serde_json::to_value(&group_inv).unwrap()
    );
    assert_eq!(doc["sites"][0]["id"], SITE);
    assert_eq!(doc["sites"][0]["url"], SITE_URL);
    assert_eq!(
        doc["sites"][0]["notebooks"],
        serde_json::to_value(&site_inv).unwrap()
    );
    let mut both = group_inv.clone();
    both.extend(site_inv.clone());
    assert_eq!(doc["totals"], serde_json::to_value(totals(&both)).unwrap());

    // Each source's inventory under its own key; a scan of the account's own notebooks (which
    // deletes what it no longer finds) leaves them alone.
    let (code, _, err) = run(&t.lab, &t.state, true, &["scan", "--account", "alice"]).await;
    assert_eq!(code, 0, "{err}");
    let db = Db::open(&t.state.db).unwrap();
    // Compared as the contract's document: the stored content URLs (under each source's root,
    // checked below) are not in the expected tree.
    let stored = |key: &str| serde_json::to_value(db.inventory(key).unwrap()).unwrap();
    let value = |inv| serde_json::to_value(inv).unwrap();
    assert_eq!(stored(&format!("alice/group:{GROUP}")), value(&group_inv));
    assert_eq!(stored(&format!("alice/site:{SITE}")), value(&site_inv));
    assert_eq!(
        stored("alice"),
        value(&expected_inventory(&t.lab.graph.notes(&t.alice.id)))
    );
    let urls = db.inventory(&format!("alice/group:{GROUP}")).unwrap()[0].sections[0].pages[0]
        .content_url
        .clone()
        .unwrap();
    assert!(
        urls.contains(&format!("/groups/{GROUP}/onenote/pages/")),
        "{urls}"
    );

    // The same through the group's id and the site's id, with --all-sources and a notebook filter.
    let own = t.lab.graph.notes(&t.alice.id).notebooks[0]
        .display_name
        .clone();
    let (code, out, err) = run(
        &t.lab,
        &t.state,
        true,
        &[
            "scan",
            "--account",
            "alice",
            "--all-sources",
            "--group",
            GROUP,
            "--json",
        ],
    )
    .await;
    assert_eq!(code, 0, "{err}");
    let doc = json(&out);
    assert_eq!(doc["notebooks"][0]["name"], own.as_str());
    assert_eq!(
        doc["groups"].as_array().unwrap().len(),
        1,
        "named and found once"
    );
    assert_eq!(doc["sites"].as_array().unwrap().len(), 1);
    let (code, out, err) = run(
        &t.lab,
        &t.state,
        true,
        &[
            "scan",
            "--account",
            "alice",
            "--site",
            SITE,
            "--notebook",
            "Notebook 1",
            "--json",
        ],
    )
    .await;
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        json(&out)["sites"][0]["notebooks"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_notes_read_all_a_team_request_is_exit_3_naming_the_permission() {
    let t = start(false).await;
    let (code, out, err) = run(
        &t.lab,
        &t.state,
        false,
        &[
            "scan",
            "--account",
            "alice",
            "--group",
            "Marketing",
            "--json",
        ],
    )
    .await;
    assert_eq!(code, 3, "{err}");
    assert!(err.contains("Notes.Read.All"), "{err}");
    assert!(err.contains("notebridge login --account alice"), "{err}");
    assert!(err.contains("admin consent"), "{err}");
    assert_eq!(json(&out)["exit"], 3);
    let (code, _, err) = run(&t.lab, &t.state, false, &["sources", "--account", "alice"]).await;
    assert_eq!(code, 3, "{err}");
    assert!(err.contains("Notes.Read.All"), "{err}");
    // The account's own notebooks still scan as before.
    let (code, _, err) = run(&t.lab, &t.state, false, &["scan", "--account", "alice"]).await;
    assert_eq!(code, 0, "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_group_or_site_that_matches_nothing_is_exit_2_naming_it() {
    let t = start(true).await;
    for (flag, value) in [
        ("--group", "Sales"),
        ("--group", "5ec-staff"),
        ("--site", "https://contoso.sharepoint.com/sites/Nope"),
        ("--site", "contoso.sharepoint.com,no,such"),
    ] {
        let (code, _, err) = run(
            &t.lab,
            &t.state,
            true,
            &["scan", "--account", "alice", flag, value],
        )
        .await;
        assert_eq!(code, 2, "{flag} {value}: {err}");
        assert!(err.contains(value), "{err}");
        assert!(err.contains("notebridge sources --account alice"), "{err}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_library_over_5000_items_is_reported_with_microsofts_advice_and_the_rest_scans() {
    let t = start(true).await;
    t.lab.graph.set_big_library(SITE, true);
    let (code, out, err) = run(
        &t.lab,
        &t.state,
        true,
        &["scan", "--account", "alice", "--all-sources", "--json"],
    )
    .await;
    assert_eq!(code, 4, "{err}");
    assert!(err.contains("10008") && err.contains("5,000"), "{err}");
    assert!(
        err.contains("section by section"),
        "Microsoft's advice: {err}"
    );
    let doc = json(&out);
    assert_eq!(doc["groups"][0]["notebooks"].as_array().unwrap().len(), 2);
    assert_eq!(doc["notebooks"].as_array().unwrap().len(), 1);
    let (code, out, err) = run(
        &t.lab,
        &t.state,
        true,
        &["sources", "--account", "alice", "--json"],
    )
    .await;
    assert_eq!(code, 4, "{err}");
    let site = &json(&out)["sources"][2];
    assert_eq!(site["id"], SITE);
    assert!(site["notebooks"].is_null());
    assert!(site["problem"].as_str().unwrap().contains("10008"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn personal_accounts_have_no_groups_or_sites_and_say_so() {
    let t = start(true).await;
    t.lab.graph.set_personal_account(&t.alice.id, true);
    let (code, out, err) = run(
        &t.lab,
        &t.state,
        true,
        &["sources", "--account", "alice", "--json"],
    )
    .await;
    assert_eq!(code, 0, "{err}");
    assert_eq!(json(&out)["sources"].as_array().unwrap().len(), 1);
    assert!(err.contains("personal Microsoft account"), "{err}");
    let (code, _, err) = run(
        &t.lab,
        &t.state,
        true,
        &["scan", "--account", "alice", "--group", "Marketing"],
    )
    .await;
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("personal Microsoft account"), "{err}");
}
