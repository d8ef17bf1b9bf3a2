//! End to end: the real binary reads OneNote's own files (every sample file and notebook folder the
//! reader supports) and writes them into the Notion test server with no Microsoft account: pages
//! once, in order, `verify` complete, a second run plans nothing.

use crate::files_support::{
    body_kinds, body_text, expected_tree, fast, notion_tree, notion_writes, page_id, run, sample,
    scanned, uploads_of,
};
use crate::migrate_support::State;
use notebridge_testkit::lab::Lab;

/// Every sample the reader supports, as a user would give it: notebook folders, a table of
/// contents, a package, and section files on their own.
const SAMPLES: &[&str] = &[
    "onenote.rs/samples/New Section Group",
    "onenote.rs/samples/New Section Group/Open Notebook.onetoc2",
    "onenote.rs/samples/New Section Group/New Section 2.one",
    "obsidian-importer/makecab-lzx-notebook.onepkg",
    "apache-tika/testOneNote.one",
    "apache-tika/testOneNote1.one",
    "apache-tika/testOneNote2.one",
    "apache-tika/testOneNote4.one",
    "apache-tika/testOneNote2016.one",
    "apache-tika/testOneNote2007OrEarlier.one",
    "apache-tika/testOneNoteEmbeddedWordDoc.one",
    "apache-tika/testOneNoteFromOffice365-2.one",
    "apache-tika/test-tika-3970-dupetext.one",
    "interop-testsuites/SUT/OneWithoutFileData.one",
    "interop-testsuites/SUT/FileSyncWOPI_OneNoteWithODB.one",
    "interop-testsuites/SUT/InvalidData.one",
    "interop-testsuites/MS-ONESTORE-Resources/AlternativePackaging.one",
];

/// Migrates `path` under a page of its own; returns the page, the scan document and the
/// migrate exit code.
async fn migrate_one(
    lab: &Lab,
    state: &State,
    path: &std::path::Path,
) -> (String, serde_json::Value, i32) {
    let doc = scanned(lab, state, path).await;
    let target = lab
        .notion
        .add_shared_page(&format!("Import {}", path.display()));
    let (code, out, err) = run(
        lab,
        state,
        &["migrate", "--from", path.to_str().unwrap(), "--to", &target],
    )
    .await;
    let unreadable = doc["unreadable_sections"].as_array().unwrap().len();
    let want = if unreadable > 0 { 4 } else { 0 };
    assert_eq!(code, want, "{path:?}\nstdout: {out}\nstderr: {err}");
    assert!(
        out.contains("read from OneNote's own files (no Graph requests"),
        "the plan says how it reads: {out}"
    );
    (target, doc, code)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_sample_migrates_once_in_order_verifies_and_a_second_run_plans_nothing() {
    let lab = Lab::start(fast()).await;
    let mut ran = 0;
    for rel in SAMPLES {
        let Some(path) = sample(rel) else { continue };
        let state = State::new();
        let (target, doc, code) = migrate_one(&lab, &state, &path).await;
        let tree = notion_tree(&lab, &target);
        assert_eq!(tree, expected_tree(&doc), "{rel}: the Notion tree");
        // Every page has a body: at least the metadata line.
        for p in doc["notebooks"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|n| n["sections"].as_array().unwrap().clone())
            .chain(doc["sections"].as_array().cloned().unwrap_or_default())
            .flat_map(|s| s["pages"].as_array().unwrap().clone())
        {
            let title = p["title"].as_str().unwrap();
            let title = if title.trim().is_empty() {
                "Untitled"
            } else {
                title
            };
            let id = page_id(&lab, &target, title).unwrap();
            assert!(
                !body_kinds(&lab, &id).is_empty(),
                "{rel}: {title} has a body"
            );
        }
        let (vcode, vout, verr) = run(
            &lab,
            &state,
            &["--json", "verify", "--from", path.to_str().unwrap()],
        )
        .await;
        assert_eq!(vcode, code, "{rel}: verify\n{vout}\n{verr}");
        let report: serde_json::Value = serde_json::from_str(vout.trim()).unwrap();
        let missing = report["accounts"][0]["totals"]["missing"].as_u64();
        assert_eq!(missing, Some(0), "{rel}: {vout}");
        // Again: nothing planned twice, nothing written.
        let before = notion_writes(&lab);
        let (again, out, err) = run(
            &lab,
            &state,
            &["migrate", "--from", path.to_str().unwrap(), "--to", &target],
        )
        .await;
        assert_eq!(again, code, "{rel}: second run\n{out}\n{err}");
        assert_eq!(notion_tree(&lab, &target), tree, "{rel}: nothing more");
        assert_eq!(
            notion_writes(&lab),
            before,
            "{rel}: the second run writes nothing"
        );
        ran += 1;
    }
    // No Graph request and no sign-in, whatever was read.
    assert_eq!(lab.graph.counters().total, 0);
    eprintln!("{ran} of {} samples migrated", SAMPLES.len());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_notebook_folder_carries_its_pages_texts_and_attachments() {
    let Some(path) = sample("onenote.rs/samples/New Section Group") else {
        return;
    };
    let lab = Lab::start(fast()).await;
    let state = State::new();
    let target = lab.notion.add_shared_page("Import");
    let (code, out, err) = run(
        &lab,
        &state,
        &[
            "--json",
            "migrate",
            "--from",
            path.to_str().unwrap(),
            "--to",
            &target,
        ],
    )
    .await;
    assert_eq!(code, 0, "stdout: {out}\nstderr: {err}");
    let summary: serde_json::Value = serde_json::from_str(out.lines().last().unwrap()).unwrap();
    // Each section file is parsed once for all its pages, not once per page.
    assert_eq!(summary["this_run"]["sections_opened"], 2, "{summary}");
    assert_eq!(summary["graph"]["requests"], 0);
    let tree = notion_tree(&lab, &target);
    let titles: Vec<&str> = tree.iter().map(|(_, t)| t.as_str()).collect();
    assert_eq!(
        titles,
        [
            "New Section Group",
            "New Section 1",
            "Test Page 2",
            "New Section 2",
            "Test Page 3",
            "Test Page 4"
        ]
    );
    let p2 = page_id(&lab, &target, "Test Page 2").unwrap();
    assert!(body_text(&lab, &p2).contains("2020"), "the metadata line");
    // The section with the attachment: its files are uploaded from the bytes in the file.
    let kinds: Vec<String> = ["Test Page 3", "Test Page 4"]
        .iter()
        .flat_map(|t| body_kinds(&lab, &page_id(&lab, &target, t).unwrap()))
        .collect();
    assert!(
        kinds
            .iter()
            .any(|k| k == "pdf" || k == "file" || k == "image"),
        "files are carried over: {kinds:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_facts_the_samples_hold_reach_notion() {
    let (Some(desktop), Some(doc), Some(picture), Some(samples)) = (
        sample("apache-tika/testOneNote2016.one"),
        sample("apache-tika/testOneNoteEmbeddedWordDoc.one"),
        sample("interop-testsuites/SUT/FileSyncWOPI_OneNoteWithODB.one"),
        sample("onenote.rs/samples"),
    ) else {
        return;
    };
    let lab = Lab::start(fast()).await;

    // A desktop section: its page's title and text.
    let state = State::new();
    let (target, _, _) = migrate_one(&lab, &state, &desktop).await;
    let page = page_id(&lab, &target, "So good").unwrap();
    assert!(
        body_text(&lab, &page).contains("This is one note 2016"),
        "{}",
        body_text(&lab, &page)
    );

    // An attachment: a file block with its name and exactly its bytes.
    let state = State::new();
    let (target, _, _) = migrate_one(&lab, &state, &doc).await;
    let page = page_id(&lab, &target, "Embedded doc sheet").unwrap();
    let files = uploads_of(&lab, &page);
    let docx = files
        .iter()
        .find(|u| u.filename.as_deref() == Some("Dude this is a super cool embedded doc.docx"))
        .unwrap_or_else(|| panic!("the attachment: {files:?}"));
    assert_eq!(docx.content_length, Some(11_791));
    assert_eq!(docx.hash.as_deref(), Some("d60be7a691e250e1"));
    assert!(body_kinds(&lab, &page).iter().any(|k| k == "file"));

    // A picture: an image block with the picture's bytes.
    let state = State::new();
    let (target, _, _) = migrate_one(&lab, &state, &picture).await;
    // The lone section's page, then its one page.
    let section = &lab.notion.pages_under(&target)[0].0;
    let page = lab.notion.pages_under(section)[0].0.clone();
    let jpg = uploads_of(&lab, &page);
    assert!(
        jpg.iter()
            .any(|u| u.filename.as_deref() == Some("Chrysanthemum.jpg")
                && u.content_length == Some(879_394)),
        "{jpg:?}"
    );
    assert!(body_kinds(&lab, &page).iter().any(|k| k == "image"));

    // A folder with a section group and a recycle bin: the bin is left out, and says so.
    let state = State::new();
    let target = lab.notion.add_shared_page("Samples");
    let s = samples.to_str().unwrap();
    let (code, out, err) = run(&lab, &state, &["migrate", "--from", s, "--to", &target]).await;
    assert_eq!(code, 0, "stdout: {out}\nstderr: {err}");
    assert!(err.contains("recycle bin"), "the plan says so: {err}");
    let tree = notion_tree(&lab, &target);
    assert!(
        !tree.iter().any(|(_, t)| t.contains("Deleted")),
        "nothing of the recycle bin: {tree:?}"
    );
    assert_eq!(
        tree,
        [
            (0, "samples".to_owned()),
            (1, "New Section Group".to_owned()),
            (2, "New Section 1".to_owned()),
            (3, "Test Page 2".to_owned()),
            (2, "New Section 2".to_owned()),
            (3, "Test Page 3".to_owned()),
            (3, "Test Page 4".to_owned()),
        ]
    );
    let sizes: Vec<Option<u64>> = ["Test Page 3", "Test Page 4"]
        .iter()
        .flat_map(|t| uploads_of(&lab, &page_id(&lab, &target, t).unwrap()))
        .map(|u| u.content_length)
        .collect();
    assert!(sizes.contains(&Some(27_146)), "the picture: {sizes:?}");
    assert!(sizes.contains(&Some(77_279)), "the mp3: {sizes:?}");
    assert_eq!(lab.graph.counters().total, 0);
}
