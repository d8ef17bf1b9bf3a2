//! `notebridge convert FILE [--json]` as a process: output shapes (the JSON document; for people,
//! the block tree and the report, in snapshots) and the usage error.

use crate::bin_support::{notebridge, Output};

fn convert(args: &[&str]) -> Output {
    let home = tempfile::tempdir().unwrap();
    notebridge(home.path(), &["convert"])
        .args(args)
        .run_blocking()
}

fn fixture(name: &str) -> String {
    format!("{}/fixtures/{name}", env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn json_is_one_document_with_blocks_and_report() {
    let out = convert(&[&fixture("12-images.html"), "--json"]);
    assert!(out.code == Some(0), "{}", out.stderr.clone());
    let doc: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(doc["title"], "Images");
    assert!(doc["created"].is_null());
    let blocks = doc["blocks"].as_array().unwrap();
    assert_eq!(blocks[0]["type"], "image");
    // Resource URLs are left as they are, as external media.
    assert_eq!(
        blocks[0]["image"]["external"]["url"],
        "https://graph.microsoft.com/v1.0/users('me')/onenote/resources/0-full!1/$value"
    );
    assert!(doc["report"]
        .as_array()
        .unwrap()
        .iter()
        .any(|r| r["element"] == "<img> width/height" && r["count"] == 1));
}

#[test]
fn human_output_summarises_types_and_approximations() {
    let out = convert(&[&fixture("11-tables.html")]);
    assert!(out.code == Some(0));
    let text = out.stdout;
    assert!(text.contains("title: Tables"), "{text}");
    assert!(text.contains("  table: 1"), "{text}");
    assert!(text.contains("  table_row: 4"), "{text}");
    assert!(text.contains("files to upload: 1"), "{text}");
    assert!(
        text.contains("table cell span (colspan/rowspan) ×2"),
        "{text}"
    );
}

#[test]
fn human_output_counts_table_rows_in_the_total_like_the_type_lines() {
    let out = convert(&[&fixture("11-tables.html")]);
    let text = out.stdout;
    // 1 table, its 4 rows, 1 image.
    assert!(text.contains("\nblocks: 6\n"), "{text}");
}

/// The human output of a fixture: the block tree, then the summary and the report. Not a
/// terminal here, so lines are cut at the fixed width.
fn human(name: &str) -> String {
    let out = convert(&[&fixture(name)]);
    assert!(out.code == Some(0), "{}", out.stderr);
    let text = out.stdout;
    // The tree: from the blank line after the title to the one before the summary.
    let tree = text.split("\n\n").nth(1).unwrap_or("");
    assert!(!tree.is_empty(), "{text}");
    for line in tree.lines() {
        assert!(console::measure_text_width(line) <= 100, "too wide: {line}");
    }
    text
}

#[test]
fn human_output_shows_the_block_tree_then_the_report() {
    for name in [
        "08-lists-nested.html",
        "11-tables.html",
        "15-links.html",
        "29-placeholders-named.html",
        "30-merges-and-drops.html",
    ] {
        insta::assert_snapshot!(format!("human-{name}"), human(name));
    }
}

#[test]
fn a_missing_file_is_a_usage_error_naming_it() {
    let out = convert(&["/no/such/page.html"]);
    assert_eq!(out.code, Some(2));
    assert!(out.stderr.clone().contains("/no/such/page.html"));
}

#[test]
fn empty_and_binary_files_are_usage_errors_that_print_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let cases: [(&str, &[u8], &str); 4] = [
        ("empty.html", b"", "empty"),
        ("blank.html", b"  \n\t\n", "empty"),
        (
            "image.png",
            b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x10",
            "binary",
        ),
        (
            "notebook.one",
            &[
                0xE4, 0x52, 0x5C, 0x7B, 0x8C, 0xD8, 0xA7, 0x4D, 0xAE, 0xB1, 0x53, 0x78, 0xD0, 0x29,
                0x96, 0xD3,
            ],
            "binary",
        ),
    ];
    for (name, bytes, why) in cases {
        let p = dir.path().join(name);
        std::fs::write(&p, bytes).unwrap();
        let out = convert(&[p.to_str().unwrap()]);
        assert_eq!(out.code, Some(2), "{name}");
        assert!(out.stdout.is_empty(), "{name}: nothing on stdout");
        let err = out.stderr.clone();
        assert!(
            err.contains(name) && err.contains("is not OneNote page HTML") && err.contains(why),
            "{name}: {err}"
        );
    }
    // a page with a stray invalid byte still converts
    let p = dir.path().join("stray.html");
    std::fs::write(&p, b"<html><body><p>caf\xe9 au lait</p></body></html>").unwrap();
    assert_eq!(convert(&[p.to_str().unwrap()]).code, Some(0));
}
