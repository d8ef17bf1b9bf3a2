//! `notebridge scan` through the real binary: the contract's JSON document, the tree, the errors, and
//! no secret in a verbose run's output.

use crate::migrate_support;

use migrate_support::{notebridge, State};
use notebridge::store::inventory::totals;
use notebridge::store::Db;
use notebridge_testkit::generator::{generate, NotebookSpec};
use notebridge_testkit::lab::{expected_inventory, Lab, LabConfig};

fn spec() -> NotebookSpec {
    NotebookSpec {
        notebooks: 2,
        section_groups_depth: 2,
        sections_per_container: 2,
        pages_per_section: 3,
        seed: 8,
        ..NotebookSpec::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scan_json_is_the_contract_document_and_matches_the_source() {
    let lab = Lab::start(LabConfig::default()).await;
    let user = lab.add_user("alice", generate(&spec()));
    let state = State::new();
    lab.sign_in(&Db::open(&state.db).unwrap(), "alice", &user);

    let (code, out, err) =
        notebridge(&lab, &state, &["scan", "--account", "alice", "--json"]).await;
    assert_eq!(code, 0, "{err}");
    let doc: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    let expected = expected_inventory(&lab.graph.notes(&user.id));
    assert_eq!(doc["account"], "alice");
    assert_eq!(doc["notebooks"], serde_json::to_value(&expected).unwrap());
    let t = totals(&expected);
    assert_eq!(doc["totals"], serde_json::to_value(t).unwrap());
    assert!(
        err.contains("Graph requests"),
        "the request count is reported: {err}"
    );

    // human tree: every notebook and section with its page count
    let (code, out, _) = notebridge(&lab, &state, &["scan", "--account", "alice"]).await;
    assert_eq!(code, 0);
    for nb in &expected {
        assert!(out.contains(&nb.name), "{out}");
    }
    assert!(
        out.contains(&format!("{} pages", t.pages)) || out.contains("pages"),
        "{out}"
    );

    // only one notebook, by name
    let name = expected[1].name.clone();
    let (code, out, _) = notebridge(
        &lab,
        &state,
        &["scan", "--account", "alice", "--notebook", &name, "--json"],
    )
    .await;
    assert_eq!(code, 0);
    let doc: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(doc["notebooks"].as_array().unwrap().len(), 1);
    assert_eq!(doc["notebooks"][0]["name"], name.as_str());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scan_errors_name_what_is_wrong() {
    let lab = Lab::start(LabConfig::default()).await;
    let user = lab.add_user("alice", generate(&spec()));
    let state = State::new();
    lab.sign_in(&Db::open(&state.db).unwrap(), "alice", &user);

    let (code, _, err) = notebridge(
        &lab,
        &state,
        &[
            "scan",
            "--account",
            "alice",
            "--notebook",
            "No such notebook",
        ],
    )
    .await;
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("No such notebook"), "{err}");

    let (code, _, err) = notebridge(&lab, &state, &["scan", "--account", "bob"]).await;
    assert_eq!(code, 3, "{err}");
    assert!(err.contains("notebridge login --account bob"), "{err}");

    // a revoked sign-in (refresh tokens revoked, the access token expired): exit 3 naming the account
    lab.auth.revoke_user(&user.id);
    lab.registry.expire_user(&user.id);
    let (code, _, err) = notebridge(&lab, &state, &["scan", "--account", "alice"]).await;
    assert_eq!(code, 3, "{err}");
    assert!(err.contains("alice"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_verbose_scan_and_migration_never_print_a_secret() {
    let lab = Lab::start(LabConfig {
        notion_per_second: 50,
        ..LabConfig::default()
    })
    .await;
    let user = lab.add_user("alice", generate(&NotebookSpec::tiny(3)));
    let state = State::new();
    lab.sign_in(&Db::open(&state.db).unwrap(), "alice", &user);
    let (c1, o1, e1) = notebridge(&lab, &state, &["-vv", "scan", "--account", "alice"]).await;
    let (c2, o2, e2) = notebridge(
        &lab,
        &state,
        &[
            "-vv",
            "migrate",
            "--account",
            "alice",
            "--to",
            &lab.target_page,
        ],
    )
    .await;
    assert_eq!((c1, c2), (0, 0), "{e1}{e2}");
    let text = format!("{o1}{e1}{o2}{e2}");
    assert!(text.contains("DEBUG"), "the run was verbose");
    let mut secrets = lab.auth.issued_secrets();
    secrets.push(lab.notion.token().to_owned());
    assert!(secrets.len() >= 3);
    for s in secrets {
        assert!(!text.contains(&s), "a secret reached the output");
    }
}
