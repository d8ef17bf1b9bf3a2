//! Bad input to `scan --from` and `migrate --from`: a file that is not OneNote's and a folder with
//! none are usage errors naming the path (exit 2, nothing planned); a section that cannot be read
//! (password protected, damaged) fails alone with its reason (exit 4) and the rest migrates; and
//! with no account signed in, `status`, `verify` and `report` cover the imports from files.

use crate::files_support::{copy_into, fast, notion_tree, run, sample};
use crate::migrate_support::State;
use notebridge_testkit::lab::Lab;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_that_is_not_onenote_and_a_folder_with_none_are_usage_errors_naming_them() {
    let lab = Lab::start(fast()).await;
    let state = State::new();
    let text = state.dir.path().join("notes.txt");
    std::fs::write(&text, "just text").unwrap();
    let empty = state.dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let target = lab.notion.add_shared_page("Import");
    for p in [&text, &empty, &state.dir.path().join("missing.one")] {
        let p = p.to_str().unwrap();
        let (code, _, err) = run(&lab, &state, &["scan", "--from", p]).await;
        assert_eq!(code, 2, "{err}");
        assert!(err.contains(p), "names the path: {err}");
        let (code, _, err) = run(&lab, &state, &["migrate", "--from", p, "--to", &target]).await;
        assert_eq!(code, 2, "{err}");
        assert!(err.contains(p), "names the path: {err}");
    }
    assert!(notion_tree(&lab, &target).is_empty(), "nothing written");
    // A path that is not there is named before Notion is asked anything (an unreachable Notion
    // would otherwise be waited out first); `sync --from` reads its path the same way.
    let asked = lab.notion.request_log().len();
    let missing = state.dir.path().join("Notebooks").join("Wrok.one");
    let missing = missing.to_str().unwrap();
    for cmd in ["migrate", "sync"] {
        let (code, _, err) = run(&lab, &state, &[cmd, "--from", missing, "--to", &target]).await;
        assert_eq!(code, 2, "{cmd}: {err}");
        assert!(err.contains(missing), "{cmd} names the path: {err}");
    }
    assert_eq!(
        lab.notion.request_log().len(),
        asked,
        "Notion was not asked"
    );
    // A resume of a path never planned says so.
    let p = text.to_str().unwrap();
    let (code, _, err) = run(&lab, &state, &["migrate", "--resume", "--from", p]).await;
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("nothing was planned from"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreadable_section_fails_alone_with_its_reason_and_the_rest_migrates() {
    let (Some(locked), Some(good)) = (
        sample("interop-testsuites/SUT/Encryption.one"),
        sample("onenote.rs/samples/New Section Group/New Section 1.one"),
    ) else {
        return;
    };
    let lab = Lab::start(fast()).await;
    let state = State::new();
    let folder = state.dir.path().join("Notebook");
    std::fs::create_dir(&folder).unwrap();
    copy_into(&locked, &folder);
    copy_into(&good, &folder);
    let f = folder.to_str().unwrap();

    let (code, out, err) = run(&lab, &state, &["--json", "scan", "--from", f]).await;
    assert_eq!(code, 4, "{err}");
    let doc: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    let unreadable = doc["unreadable_sections"].as_array().unwrap();
    assert_eq!(unreadable.len(), 1, "{doc}");
    assert_eq!(unreadable[0]["name"], "Encryption");
    let reason = unreadable[0]["reason"].as_str().unwrap().to_owned();
    assert!(reason.contains("password-protected"), "says why: {reason}");
    assert!(
        reason.contains("unlock it in OneNote"),
        "and how to fix it: {reason}"
    );
    assert!(err.contains("Encryption"), "the section is listed: {err}");

    let target = lab.notion.add_shared_page("Import");
    let (code, out, err) = run(&lab, &state, &["migrate", "--from", f, "--to", &target]).await;
    assert_eq!(code, 4, "stdout: {out}\nstderr: {err}");
    let titles: Vec<String> = notion_tree(&lab, &target)
        .into_iter()
        .map(|(_, t)| t)
        .collect();
    assert_eq!(titles, ["Notebook", "New Section 1", "Test Page 2"]);

    // With no account signed in, status, verify and report speak of the import.
    let (code, out, _) = run(&lab, &state, &["--json", "status"]).await;
    assert_eq!(code, 0, "{out}");
    let status: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    let import = &status["imports"][0];
    assert_eq!(import["path"], f);
    let failure = &import["failures"][0];
    assert_eq!(failure["name"], "Encryption");
    assert!(
        failure["error"].as_str().unwrap().contains(&reason),
        "{failure}"
    );
    let (code, out, _) = run(&lab, &state, &["status"]).await;
    assert_eq!(code, 0);
    assert!(out.contains(&format!("OneNote files {f}")), "{out}");
    let (code, out, err) = run(&lab, &state, &["verify"]).await;
    assert_eq!(code, 4, "a failed section is not complete\n{out}\n{err}");
    assert!(
        out.contains(f),
        "verify names the import by its path: {out}"
    );
    let report = state.dir.path().join("report.html");
    let (code, _, err) = run(
        &lab,
        &state,
        &["report", "--output", report.to_str().unwrap()],
    )
    .await;
    assert_eq!(code, 0, "{err}");
    let html = std::fs::read_to_string(&report).unwrap();
    assert!(
        html.contains("Test Page 2") || html.contains("New Section 1"),
        "the import is in the report"
    );
    assert!(html.contains(f), "named by its path");
    assert_eq!(lab.graph.counters().total, 0, "no Graph request");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dry_run_plans_and_times_the_import_and_writes_nothing() {
    let Some(folder) = sample("onenote.rs/samples/New Section Group") else {
        return;
    };
    let lab = Lab::start(fast()).await;
    let state = State::new();
    let target = lab.notion.add_shared_page("Import");
    let f = folder.to_str().unwrap();
    let (code, out, err) = run(
        &lab,
        &state,
        &[
            "--json",
            "migrate",
            "--from",
            f,
            "--to",
            &target,
            "--dry-run",
        ],
    )
    .await;
    assert_eq!(code, 0, "{out}\n{err}");
    let doc: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    let plan = &doc["plan"]["accounts"][0];
    assert_eq!(plan["pages"], 3, "{doc}");
    assert_eq!(plan["graph_requests"], 0);
    assert_eq!(plan["from_files"], true);
    // By its absolute path, as the platform spells it (under Wine `Z:\...` for `/...`).
    let named = plan["account"].as_str().unwrap_or_default();
    let typed = notebridge::imports::absolute(&folder).unwrap();
    assert!(
        notebridge::platform::same_path(named, &typed.display().to_string()),
        "the plan names the import by its path: {named}"
    );
    assert!(notion_tree(&lab, &target).is_empty(), "nothing written");
    // Nothing was queued: with no account either, there is nothing for `status` to show.
    let (code, _, err) = run(&lab, &state, &["status"]).await;
    assert_eq!(code, 3, "{err}");
}
