//! The `.onepkg` whose section `onenote_parser` 2.1.0 refused ("outline element has no original
//! author"; OfficeIMO wrote it, leaving out properties OneNote always writes): with the vendored
//! parser's patches (`vendor/onenote_parser/PATCHES.md`) `scan --from` lists its page and
//! `migrate --from` carries it into Notion, run as a files user runs them: the binary, a clean
//! environment, the Notion token and no Microsoft sign-in.

use std::ffi::OsStr;

use notebridge::settings::env;
use notebridge_testkit::lab::Lab;

use crate::bin_support;
use crate::files_support::{body_text, fast, notion_tree, page_id, report_html, sample};
use crate::migrate_support::State;

const PACKAGE: &str = "obsidian-importer/makecab-lzx-notebook.onepkg";

/// What a files user has: the Notion token (the lab's Notion standing in for Notion's address,
/// pace and retry pauses), no Microsoft client id; nothing here signs in or calls Graph (checked).
async fn run(lab: &Lab, state: &State, args: &[&str]) -> (i32, String, String) {
    let all = lab.env();
    let keep = [
        env::NOTION_URL,
        env::NOTION_TOKEN,
        env::NOTION_RATE,
        env::RETRY_PAUSE,
        env::RETRY_BACKOFF,
    ];
    let out = bin_support::notebridge(state.dir.path(), &["--no-progress"])
        .args([OsStr::new("--db"), state.db.as_os_str()])
        .args(args)
        .envs(all.into_iter().filter(|(k, _)| keep.contains(&k.as_str())))
        .run()
        .await;
    (out.code.unwrap_or(-1), out.stdout, out.stderr)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_refused_package_section_is_scanned_migrated_and_verified() {
    let Some(path) = sample(PACKAGE) else { return };
    let path = path.to_str().unwrap();
    let lab = Lab::start(fast()).await;
    let state = State::new();

    let (code, out, err) = run(&lab, &state, &["--json", "scan", "--from", path]).await;
    assert_eq!(code, 0, "scan --from\n{out}\n{err}");
    let doc: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(doc["unreadable_sections"], serde_json::json!([]), "{doc}");
    let section = &doc["notebooks"][0]["sections"][0];
    assert_eq!(section["name"], "Compressed section", "{doc}");
    assert!(section.get("problem").is_none(), "{doc}");
    assert_eq!(section["pages"][0]["title"], "Compressed page", "{doc}");
    assert_eq!(doc["totals"]["pages"], 1, "{doc}");

    let target = lab.notion.add_shared_page("Imports");
    let (code, out, err) = run(&lab, &state, &["migrate", "--from", path, "--to", &target]).await;
    assert_eq!(code, 0, "migrate --from\n{out}\n{err}");
    assert_eq!(
        notion_tree(&lab, &target),
        [
            (0, "makecab-lzx-notebook".to_owned()),
            (1, "Compressed section".to_owned()),
            (2, "Compressed page".to_owned()),
        ]
    );
    let page = page_id(&lab, &target, "Compressed page").unwrap();
    let text = body_text(&lab, &page);
    assert!(text.contains("2026"), "the metadata line: {text}");
    assert!(
        text.lines().count() > 1,
        "the page's own text arrives beside its metadata line: {text}"
    );

    let (code, out, err) = run(&lab, &state, &["--json", "verify", "--from", path]).await;
    assert_eq!(code, 0, "verify --from\n{out}\n{err}");
    let report: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(report["accounts"][0]["totals"]["missing"], 0, "{out}");
    // What the reader read with a neutral value (the levels and indents OfficeIMO left out) is
    // in the page's report, as `verify` lists it.
    let pages: Vec<&serde_json::Value> = report["accounts"][0]["sections"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|s| s["pages"].as_array().unwrap())
        .collect();
    assert_eq!(pages.len(), 1, "{out}");
    let noted: Vec<&str> = pages[0]["approximations"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|a| a["element"].as_str())
        .filter(|e| e.starts_with("section file: "))
        .collect();
    assert!(
        noted
            .iter()
            .any(|e| e.contains("child level") || e.contains("indent distances")),
        "the reader's warnings reach the page's report: {out}"
    );
    let html = report_html(&lab, &state).await;
    assert!(html.contains(noted[0]), "report lists {:?}", noted[0]);
    assert_eq!(lab.graph.counters().total, 0, "no Graph request");
}
