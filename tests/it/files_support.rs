//! Shared set-up of the tests that migrate OneNote's own files: where the samples are (the copies
//! in `fixtures/onenote-files/`, else `../shared/onenote-files/`; a test skips, saying so, when
//! neither has them), a lab whose Notion is fast enough for a test, and readers of the Notion tree.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use notebridge_testkit::lab::{Lab, LabConfig};
use serde_json::Value;

use crate::migrate_support::{notebridge, State};

/// A sample file or folder, by its path under the samples folder; `None` (and a line saying so)
/// when the samples are not beside this clone.
pub fn sample(rel: &str) -> Option<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for base in ["fixtures/onenote-files", "../shared/onenote-files"] {
        let p = root.join(base).join(rel);
        if p.exists() {
            return Some(p);
        }
    }
    eprintln!("skipped: the OneNote sample {rel} is neither in fixtures/onenote-files nor in ../shared/onenote-files");
    None
}

/// Copies a file or a folder (recursively; samples are a few levels deep) into `into`; returns
/// the copy's path.
pub fn copy_into(src: &Path, into: &Path) -> PathBuf {
    let dst = into.join(src.file_name().unwrap());
    if src.is_dir() {
        std::fs::create_dir_all(&dst).unwrap();
        for e in std::fs::read_dir(src).unwrap() {
            copy_into(&e.unwrap().path(), &dst);
        }
    } else {
        std::fs::copy(src, &dst).unwrap();
    }
    dst
}

/// Graph is never asked, so its windows do not matter; Notion is fast enough for a test.
pub fn fast() -> LabConfig {
    LabConfig {
        notion_per_second: 100,
        notion_burst: 20,
        ..LabConfig::default()
    }
}

/// Runs the binary with no account signed in; returns (exit code, stdout, stderr).
pub async fn run(lab: &Lab, state: &State, args: &[&str]) -> (i32, String, String) {
    notebridge(lab, state, args).await
}

/// The HTML `report --output FILE` writes (exit 0).
pub async fn report_html(lab: &Lab, state: &State) -> String {
    let html = state.dir.path().join("report.html");
    let (code, out, err) = run(lab, state, &["report", "--output", html.to_str().unwrap()]).await;
    assert_eq!(code, 0, "report\n{out}\n{err}");
    std::fs::read_to_string(&html).unwrap()
}

/// `scan --from PATH --json`'s document.
pub async fn scanned(lab: &Lab, state: &State, path: &Path) -> Value {
    let (code, out, err) = run(
        lab,
        state,
        &["--json", "scan", "--from", path.to_str().unwrap()],
    )
    .await;
    assert!(
        code == 0 || code == 4,
        "scan --from {path:?}: {code}\n{err}"
    );
    let doc: Value = serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("{e}: {out}"));
    assert_eq!(doc["source"]["kind"], "files", "{doc}");
    assert!(doc.get("account").is_none(), "{doc}");
    assert!(
        !state.db.exists(),
        "scan --from is offline and stores nothing"
    );
    doc
}

/// The page titles a scan document holds, in order and with their depth as planned: a notebook's
/// page, its section groups' and sections', and the pages (a subpage under the page before it
/// with a lower level). A lone section's page stands at depth 0; a section that cannot be read has
/// none.
pub fn expected_tree(doc: &Value) -> Vec<(usize, String)> {
    fn sections(out: &mut Vec<(usize, String)>, list: &Value, depth: usize) {
        // A section that cannot be read fails at planning: it gets no page.
        for s in list
            .as_array()
            .into_iter()
            .flatten()
            .filter(|s| s.get("problem").is_none())
        {
            out.push((depth, s["name"].as_str().unwrap().to_owned()));
            let mut levels: Vec<i64> = Vec::new();
            for p in s["pages"].as_array().into_iter().flatten() {
                let level = p["level"].as_i64().unwrap();
                while levels.last().is_some_and(|l| *l >= level) {
                    levels.pop();
                }
                let title = p["title"].as_str().unwrap();
                let title = if title.trim().is_empty() {
                    "Untitled"
                } else {
                    title
                };
                out.push((depth + 1 + levels.len(), title.to_owned()));
                levels.push(level);
            }
        }
    }
    fn container(out: &mut Vec<(usize, String)>, c: &Value, depth: usize) {
        sections(out, &c["sections"], depth);
        for g in c["section_groups"].as_array().into_iter().flatten() {
            out.push((depth, g["name"].as_str().unwrap().to_owned()));
            container(out, g, depth + 1);
        }
    }
    let mut out = Vec::new();
    for nb in doc["notebooks"].as_array().into_iter().flatten() {
        out.push((0, nb["name"].as_str().unwrap().to_owned()));
        container(&mut out, nb, 1);
    }
    sections(&mut out, &doc["sections"], 0);
    out
}

/// The pages under `root` in Notion, in order, with their depth (the test server's own view).
pub fn notion_tree(lab: &Lab, root: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut stack: Vec<(usize, String, String)> = lab
        .notion
        .pages_under(root)
        .into_iter()
        .rev()
        .map(|(id, t)| (0, id, t))
        .collect();
    while let Some((depth, id, title)) = stack.pop() {
        out.push((depth, title));
        for (cid, ct) in lab.notion.pages_under(&id).into_iter().rev() {
            stack.push((depth + 1, cid, ct));
        }
    }
    out
}

/// The id of the page titled `title` anywhere under `root`.
pub fn page_id(lab: &Lab, root: &str, title: &str) -> Option<String> {
    let mut stack = vec![root.to_owned()];
    while let Some(id) = stack.pop() {
        for (cid, ct) in lab.notion.pages_under(&id) {
            if ct == title {
                return Some(cid);
            }
            stack.push(cid);
        }
    }
    None
}

/// Calls `f` with each block of a page's body in body order, at any depth (subpages left out).
fn each_body_block(
    lab: &Lab,
    page: &str,
    mut f: impl FnMut(&notebridge_testkit::notion::DumpNode),
) {
    let Some(d) = lab.notion.dump(page) else {
        return;
    };
    let mut stack: Vec<&notebridge_testkit::notion::DumpNode> = d
        .children
        .iter()
        .rev()
        .filter(|c| c.kind != "page")
        .collect();
    while let Some(n) = stack.pop() {
        f(n);
        stack.extend(n.children.iter().rev().filter(|c| c.kind != "page"));
    }
}

/// All the text of a page's body (subpages left out), one block a line, as the test server
/// summarises each block.
pub fn body_text(lab: &Lab, page: &str) -> String {
    let mut out = String::new();
    each_body_block(lab, page, |n| {
        out.push_str(&n.text);
        out.push('\n');
    });
    out
}

/// The block kinds of a page's body at any depth (subpages left out).
pub fn body_kinds(lab: &Lab, page: &str) -> Vec<String> {
    let mut out = Vec::new();
    each_body_block(lab, page, |n| out.push(n.kind.clone()));
    out
}

/// Notion requests that change what it holds, so far.
pub fn notion_writes(lab: &Lab) -> u64 {
    lab.notion.counters().changing_writes()
}

/// The files uploaded for a page's body (subpages left out), in body order, as the test server
/// recorded them.
pub fn uploads_of(lab: &Lab, page: &str) -> Vec<notebridge_testkit::notion::UploadInfo> {
    let mut out = Vec::new();
    each_body_block(lab, page, |n| {
        if let Some(id) = n
            .file
            .as_deref()
            .and_then(|f| f.strip_prefix("file_upload:"))
        {
            out.extend(lab.notion.upload(id));
        }
    });
    out
}
