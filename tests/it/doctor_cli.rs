//! `notebridge doctor` through the real binary against the lab: everything passing (with the requests
//! it promises and no Notion content written), then each check failing on its own with its exit
//! code and fix.

use crate::bin_support::Start;
use crate::migrate_support::{command, State};
use notebridge::store::Db;
use notebridge_testkit::generator::{generate, NotebookSpec};
use notebridge_testkit::lab::{Lab, LabConfig};
use notebridge_testkit::notion::Endpoint;
use serde_json::Value;

fn spec() -> NotebookSpec {
    NotebookSpec {
        total_pages: Some(2),
        pages_per_section: 0,
        seed: 5,
        ..NotebookSpec::default()
    }
}

/// Runs doctor with `--json`, after `tweak` changed the command; returns (exit, checks).
async fn doctor(
    lab: &Lab,
    state: &State,
    args: &[&str],
    tweak: impl FnOnce(&mut tokio::process::Command),
) -> (i32, Vec<Value>) {
    let mut all = vec!["doctor", "--json"];
    all.extend_from_slice(args);
    let mut c = command(lab, state, &all);
    tweak(&mut c);
    let out = c.run_to_end().await;
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "doctor --json is one document ({e}): {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    let checks = doc["checks"].as_array().unwrap().clone();
    assert_eq!(
        doc["ok"].as_bool().unwrap(),
        checks.iter().all(|c| c["ok"] == true)
    );
    (out.status.code().unwrap(), checks)
}

fn failed(checks: &[Value]) -> Vec<String> {
    checks
        .iter()
        .filter(|c| c["ok"] == false)
        .map(|c| c["name"].as_str().unwrap().to_owned())
        .collect()
}

fn check<'a>(checks: &'a [Value], name: &str) -> &'a Value {
    checks
        .iter()
        .find(|c| c["name"] == name)
        .unwrap_or_else(|| panic!("no check {name} in {checks:?}"))
}

async fn lab() -> (Lab, State) {
    let lab = Lab::start(LabConfig::default()).await;
    let user = lab.add_user("default", generate(&spec()));
    let state = State::new();
    lab.sign_in(&Db::open(&state.db).unwrap(), "default", &user);
    (lab, state)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn all_checks_pass_with_one_graph_request_and_no_notion_write() {
    let (lab, state) = lab().await;
    let (code, checks) = doctor(&lab, &state, &["--to", &lab.target_page], |_| {}).await;
    assert_eq!(code, 0, "{checks:#?}");
    for name in [
        "database",
        "database_mode",
        "disk_space",
        "client_id",
        "sign_in_service",
        "scopes",
        "account:default",
        "graph:default",
        "notion_token",
        "upload_limit",
        "notion_target",
        "notion_capabilities",
        "migration_lock",
    ] {
        assert_eq!(check(&checks, name)["ok"], true, "{name}: {checks:#?}");
    }
    assert_eq!(
        lab.graph.counters().total,
        1,
        "one Graph request per account"
    );
    let log = lab.notion.request_log();
    assert!(!log.is_empty());
    // Doctor writes no content: it reads, and proves Update content by one update of the target
    // that names nothing to change.
    let updates: Vec<_> = log.iter().filter(|r| r.method != "GET").collect();
    assert_eq!(updates.len(), 1, "{log:?}");
    assert_eq!(updates[0].endpoint, Endpoint::UpdatePage, "{log:?}");
    assert!(updates[0].path.ends_with(&lab.target_page), "{log:?}");
    assert!(lab.notion.blocks_of(&lab.target_page).is_empty());
    assert_eq!(check(&checks, "notion_capabilities")["ok"], true);
    // human output: a verdict per check
    let out = command(&lab, &state, &["doctor"]).run_to_end().await;
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("checks passed"), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_failing_check_names_itself_with_its_exit_code() {
    let (lab, state) = lab().await;

    // configuration: exit 2
    let (code, c) = doctor(&lab, &state, &[], |c| {
        c.env_remove("NOTEBRIDGE_CLIENT_ID");
    })
    .await;
    assert_eq!((code, failed(&c)), (2, vec!["client_id".to_owned()]));
    assert!(check(&c, "client_id")["fix"]
        .as_str()
        .unwrap()
        .contains("NOTEBRIDGE_CLIENT_ID"));

    let (code, c) = doctor(&lab, &state, &[], |c| {
        c.env(
            "NOTEBRIDGE_CLIENT_ID",
            "11111111-2222-3333-4444-555555555555",
        );
    })
    .await;
    assert_eq!(code, 2, "{c:#?}");
    assert_eq!(failed(&c)[0], "sign_in_service");
    assert!(check(&c, "sign_in_service")["fix"]
        .as_str()
        .unwrap()
        .contains("public client flows"));

    let (code, c) = doctor(&lab, &state, &[], |c| {
        c.env("NOTEBRIDGE_SCOPES", "offline_access User.Read");
    })
    .await;
    assert_eq!((code, failed(&c)), (2, vec!["scopes".to_owned()]));

    let (code, c) = doctor(&lab, &state, &[], |c| {
        c.env("NOTION_TOKEN", "ntn_not-the-right-one");
    })
    .await;
    assert_eq!((code, failed(&c)), (2, vec!["notion_token".to_owned()]));

    let (code, c) = doctor(&lab, &state, &[], |c| {
        c.env_remove("NOTION_TOKEN");
    })
    .await;
    assert_eq!((code, failed(&c)), (2, vec!["notion_token".to_owned()]));

    let (code, c) = doctor(
        &lab,
        &state,
        &["--to", "0123456789abcdef0123456789abcdef"],
        |_| {},
    )
    .await;
    assert_eq!((code, failed(&c)), (2, vec!["notion_target".to_owned()]));
    assert!(check(&c, "notion_target")["fix"]
        .as_str()
        .unwrap()
        .contains("Connections"));

    // A file others can read (Windows' ACL side of the same rule is `platform`'s unit test).
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&state.db).unwrap().permissions();
        std::fs::set_permissions(&state.db, std::fs::Permissions::from_mode(0o644)).unwrap();
        let (code, c) = doctor(&lab, &state, &[], |_| {}).await;
        assert_eq!((code, failed(&c)), (2, vec!["database_mode".to_owned()]));
        std::fs::set_permissions(&state.db, mode).unwrap();
    }

    // another process migrating: exit 5 (this test's own pid is alive, its heartbeat fresh)
    let now = chrono::Utc::now().timestamp_millis();
    let db = Db::open(&state.db).unwrap();
    db.write("holding the lock", |tx| {
        tx.execute(
            "INSERT INTO run_lock(id, pid, token, started_at, heartbeat_at) VALUES (1, ?1, 't', ?2, ?2)",
            rusqlite::params![std::process::id(), now],
        )
    })
    .unwrap();
    let (code, c) = doctor(&lab, &state, &[], |_| {}).await;
    assert_eq!((code, failed(&c)), (5, vec!["migration_lock".to_owned()]));
    db.write("releasing", |tx| tx.execute("DELETE FROM run_lock", []))
        .unwrap();

    // sign-in: exit 3
    let (code, c) = doctor(&lab, &state, &["--account", "nobody"], |_| {}).await;
    assert_eq!((code, failed(&c)), (3, vec!["account:nobody".to_owned()]));
    assert!(check(&c, "account:nobody")["fix"]
        .as_str()
        .unwrap()
        .contains("notebridge login --account nobody"));

    let user = db.account("default").unwrap().unwrap().user_id;
    lab.auth.revoke_user(&user);
    let (code, c) = doctor(&lab, &state, &[], |_| {}).await;
    assert_eq!((code, failed(&c)), (3, vec!["account:default".to_owned()]));

    let empty = State::new();
    let (code, c) = doctor(&lab, &empty, &[], |_| {}).await;
    assert_eq!((code, failed(&c)), (3, vec!["accounts".to_owned()]));

    // the first failing class decides: a configuration error before a sign-in one
    let (code, _) = doctor(&lab, &state, &[], |c| {
        c.env_remove("NOTION_TOKEN");
    })
    .await;
    assert_eq!(
        code, 3,
        "account:default fails first (3), then notion_token (2)"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn doctor_says_which_way_the_notebooks_take_and_what_the_file_permission_would_save() {
    // With Files.Read granted: the account's own notebooks are read from their section files.
    let lab = Lab::start(LabConfig::default()).await;
    let user = lab.add_user("default", generate(&spec()));
    let state = State::new();
    lab.sign_in_with(
        &Db::open(&state.db).unwrap(),
        "default",
        &user,
        &["offline_access", "User.Read", "Notes.Read", "Files.Read"],
    );
    let (code, c) = doctor(&lab, &state, &[], |_| {}).await;
    assert_eq!(code, 0, "{c:#?}");
    let via = check(&c, "via:default");
    assert_eq!(via["ok"], true);
    assert_eq!(
        via["detail"],
        "own notebooks: section files (the token carries Files.Read)"
    );
    assert!(via.get("fix").is_none(), "{via}");

    // Signed in without it (an account that never consented): the OneNote API, and what adding
    // it would save for the pages the last scan found.
    let lab = Lab::start(LabConfig::default()).await;
    let user = lab.add_user("default", generate(&spec()));
    let state = State::new();
    lab.sign_in_with(
        &Db::open(&state.db).unwrap(),
        "default",
        &user,
        &["offline_access", "User.Read", "Notes.Read"],
    );
    let scanned = command(&lab, &state, &["scan"]).run_to_end().await;
    assert_eq!(scanned.status.code(), Some(0), "{scanned:?}");
    let (code, c) = doctor(&lab, &state, &[], |_| {}).await;
    assert_eq!(code, 0, "either way migrates: {c:#?}");
    let via = check(&c, "via:default");
    let detail = via["detail"].as_str().unwrap();
    assert!(
        detail.starts_with("own notebooks: the OneNote API (the token lacks Files.Read"),
        "{detail}"
    );
    assert!(
        detail.contains("adding Files.Read would save time for its 2 pages: "),
        "{detail}"
    );
    assert!(detail.contains(" -> "), "{detail}");
    assert!(
        via["fix"].as_str().unwrap().contains("add Files.Read"),
        "{via}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreachable_notion_fails_its_checks_with_what_was_tried_and_doctor_ends() {
    let (lab, state) = lab().await;
    // A listener that accepts and never answers (a proxy or a blackhole), and a refused port.
    let silent = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let silent_url = format!("http://{}", silent.local_addr().unwrap());
    let held = tokio::spawn(async move {
        let mut open = Vec::new();
        while let Ok((sock, _)) = silent.accept().await {
            open.push(sock);
        }
    });
    let refused_url = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}", l.local_addr().unwrap())
    };
    for url in [&silent_url, &refused_url] {
        let (code, c) = doctor(
            &lab,
            &state,
            &["--timeout", "1s", "--to", &lab.target_page],
            |c| {
                c.env("NOTEBRIDGE_NOTION_URL", url);
            },
        )
        .await;
        assert_eq!(failed(&c), vec!["notion_token".to_owned()], "{url}: {c:#?}");
        assert_eq!(code, 1, "a network failure says nothing about the set-up");
        let n = check(&c, "notion_token");
        let detail = n["detail"].as_str().unwrap();
        assert!(
            detail.starts_with("Notion did not answer within 1s"),
            "{detail}"
        );
        assert!(
            detail.contains(&format!("GET {url}/v1/users/me")),
            "{detail}"
        );
        let fix = n["fix"].as_str().unwrap();
        assert!(fix.contains("NOTEBRIDGE_NOTION_URL"), "{fix}");
        assert!(fix.contains("--timeout"), "{fix}");
        // The Microsoft side was still checked, and passed.
        assert_eq!(check(&c, "graph:default")["ok"], true);
    }
    held.abort();
    let out = command(&lab, &state, &["doctor", "--timeout", "0s"])
        .run_to_end()
        .await;
    assert_eq!(
        out.status.code(),
        Some(2),
        "a zero timeout is a usage error"
    );
}
