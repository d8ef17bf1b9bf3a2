//! Shared set-up of the end-to-end migration tests: the lab, the real binary, and the check that the
//! Notion tree holds every OneNote page exactly once with exactly its converted body.

use std::collections::HashMap;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use crate::bin_support::{self, Bin};
use notebridge::convert::convert_page_with;
use notebridge::convert::{ConvertOptions, Ink};
use notebridge::store::inventory::{Notebook, Page, Section, SectionGroup};
use notebridge::store::Db;
use notebridge_testkit::generator::page_html_at;
use notebridge_testkit::graph::ink::page_ink;
use notebridge_testkit::lab::Lab;
use notebridge_testkit::notion::DumpNode;
use serde_json::Value;

/// A temp folder with the state database.
pub struct State {
    pub dir: tempfile::TempDir,
    pub db: PathBuf,
}

impl State {
    pub fn new() -> State {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("state.db");
        State { dir, db }
    }
}

/// Runs the real binary against the lab; returns (exit code, stdout, stderr).
pub async fn notebridge(lab: &Lab, state: &State, args: &[&str]) -> (i32, String, String) {
    let out = bin(lab, state, args).run().await;
    (out.code.unwrap_or(-1), out.stdout, out.stderr)
}

/// The binary pointed at the lab and `state`'s database, without progress lines.
pub fn bin(lab: &Lab, state: &State, args: &[&str]) -> Bin {
    bin_support::notebridge(state.dir.path(), &["--no-progress"])
        .args([OsStr::new("--db"), state.db.as_os_str()])
        .args(args)
        .envs(lab.env())
}

/// [`bin`] as a command, for a test that acts while it runs.
pub fn command(lab: &Lab, state: &State, args: &[&str]) -> tokio::process::Command {
    bin(lab, state, args).command()
}

/// The Notion kind tree of converted blocks: (type, children).
#[derive(Debug, PartialEq, Eq, Clone)]
pub struct Shape(pub String, pub Vec<Shape>);

fn shape_of_json(b: &Value) -> Shape {
    let t = b["type"].as_str().unwrap_or_default().to_owned();
    let kids = b[&t]["children"]
        .as_array()
        .map(|a| a.iter().map(shape_of_json).collect())
        .unwrap_or_default();
    Shape(t, kids)
}

fn shape_of_dump(n: &DumpNode) -> Shape {
    Shape(
        n.kind.clone(),
        n.children
            .iter()
            .filter(|c| c.kind != "page")
            .map(shape_of_dump)
            .collect(),
    )
}

/// Asserts that under the lab's target page the Notion tree mirrors `inventory` exactly once, each
/// page with the body its OneNote HTML converts to (and its subpages nested under it).
pub fn assert_mirrors(lab: &Lab, user_id: &str, inventory: &[Notebook]) {
    assert_mirrors_with(lab, user_id, inventory, &[])
}

/// [`assert_mirrors`], where the pages in `unreadable_ink` were served InkML that cannot be read
/// (their bodies hold no drawing).
pub fn assert_mirrors_with(
    lab: &Lab,
    user_id: &str,
    inventory: &[Notebook],
    unreadable_ink: &[String],
) {
    let owner = format!("users('{user_id}')");
    mirrors(
        lab,
        &lab.target_page,
        user_id,
        &owner,
        inventory,
        &[],
        unreadable_ink,
    )
}

/// [`assert_mirrors`] of the notebooks the test server keeps under `notes_key` (a user's id, or a
/// group's or site's key) and serves with resource URLs rooted at `owner` (`groups('id')`), under
/// the Notion page `root_id`, where the pages titled `besides` are someone else's.
pub fn assert_mirrors_at(
    lab: &Lab,
    root_id: &str,
    notes_key: &str,
    owner: &str,
    inventory: &[Notebook],
    besides: &[&str],
) {
    mirrors(lab, root_id, notes_key, owner, inventory, besides, &[])
}

fn mirrors(
    lab: &Lab,
    root_id: &str,
    notes_key: &str,
    owner: &str,
    inventory: &[Notebook],
    besides: &[&str],
    unreadable_ink: &[String],
) {
    let ctx = Ctx {
        lab,
        owner: owner.to_owned(),
        unreadable_ink,
    };
    let root = lab.notion.dump(root_id).expect("root page exists");
    let notes = lab.graph.notes(notes_key);
    let pages: Vec<&DumpNode> = root
        .children
        .iter()
        .filter(|c| c.kind == "page")
        .filter(|c| !besides.iter().any(|b| c.title.as_deref() == Some(*b)))
        .collect();
    assert_eq!(
        pages.len(),
        inventory.len(),
        "notebook pages under {root_id}"
    );
    for (nb, node) in inventory.iter().zip(pages) {
        assert_eq!(node.title.as_deref(), Some(nb.name.as_str()));
        check_container(&ctx, &notes, node, &nb.section_groups, &nb.sections);
    }
}

/// What every page check needs.
struct Ctx<'a> {
    lab: &'a Lab,
    /// Where the test server roots resource URLs (`users('id')`, `groups('id')`).
    owner: String,
    unreadable_ink: &'a [String],
}

fn check_container(
    ctx: &Ctx<'_>,
    notes: &notebridge_testkit::graph::model::UserNotes,
    node: &DumpNode,
    groups: &[SectionGroup],
    sections: &[Section],
) {
    let kids: Vec<&DumpNode> = node.children.iter().filter(|c| c.kind == "page").collect();
    assert_eq!(
        kids.len(),
        groups.len() + sections.len(),
        "children of {:?}",
        node.title
    );
    // Sections first, then section groups: the order they were planned in.
    for (s, n) in sections.iter().zip(&kids) {
        assert_eq!(n.title.as_deref(), Some(s.name.as_str()));
        check_pages(ctx, notes, n, &s.pages);
    }
    for (g, n) in groups.iter().zip(&kids[sections.len()..]) {
        assert_eq!(n.title.as_deref(), Some(g.name.as_str()));
        check_container(ctx, notes, n, &g.section_groups, &g.sections);
    }
}

/// Pages of a section: level-0 pages directly, subpages under the page before them.
fn check_pages(
    ctx: &Ctx<'_>,
    notes: &notebridge_testkit::graph::model::UserNotes,
    node: &DumpNode,
    pages: &[Page],
) {
    let kids: Vec<&DumpNode> = node.children.iter().filter(|c| c.kind == "page").collect();
    let mut i = 0;
    let mut seen = 0;
    while i < pages.len() {
        let level = pages[i].level;
        let mut j = i + 1;
        while j < pages.len() && pages[j].level > level {
            j += 1;
        }
        let n = kids
            .get(seen)
            .unwrap_or_else(|| panic!("page {:?} missing under {:?}", pages[i].title, node.title));
        check_page(ctx, notes, n, &pages[i]);
        check_pages(ctx, notes, n, &pages[i + 1..j]);
        seen += 1;
        i = j;
    }
    assert_eq!(seen, kids.len(), "extra pages under {:?}", node.title);
}

fn check_page(
    ctx: &Ctx<'_>,
    notes: &notebridge_testkit::graph::model::UserNotes,
    node: &DumpNode,
    page: &Page,
) {
    let title = if page.title.trim().is_empty() {
        "Untitled"
    } else {
        page.title.as_str()
    };
    assert_eq!(node.title.as_deref(), Some(title));
    let src = notes.page(&page.id).expect("page in the source");
    let html = page_html_at(src, &notes.resources, ctx.lab.graph.base_url(), &ctx.owner);
    // The page's drawings as the test server generated them, rendered and placed.
    let ink = match page_ink(src, &html) {
        Some(_) if ctx.unreadable_ink.contains(&page.id) => Ink::Unreadable(String::new()),
        Some(ink) => notebridge::ink::for_page(Some(&ink.inkml)).ink,
        None => Ink::Drawings(Vec::new()),
    };
    let want_captions: Vec<String> = match &ink {
        Ink::Drawings(d) => d
            .iter()
            .map(|p| p.block.to_json()["image"]["caption"][0]["text"]["content"].to_string())
            .collect(),
        _ => Vec::new(),
    };
    let converted = convert_page_with(
        &html,
        &ConvertOptions {
            last_modified: page.last_modified.clone(),
            ink,
        },
    );
    let want: Vec<Shape> = converted
        .blocks_json()
        .as_array()
        .unwrap()
        .iter()
        .map(shape_of_json)
        .collect();
    let got: Vec<Shape> = node
        .children
        .iter()
        .filter(|c| c.kind != "page")
        .map(shape_of_dump)
        .collect();
    assert_eq!(got, want, "body of {title:?}");
    // Each drawing arrived with its caption ("Handwritten drawing, 5 strokes"), in reading order.
    let got_captions: Vec<String> = node
        .children
        .iter()
        .filter(|c| c.kind == "image" && c.text.contains(" drawing, "))
        .map(|c| serde_json::Value::String(c.text.clone()).to_string())
        .collect();
    assert_eq!(got_captions, want_captions, "drawings of {title:?}");
    // Every media block points at an upload that arrived.
    fn files(n: &DumpNode, out: &mut Vec<String>) {
        if let Some(f) = &n.file {
            out.push(f.clone());
        }
        n.children.iter().for_each(|c| files(c, out));
    }
    let mut f = Vec::new();
    node.children
        .iter()
        .filter(|c| c.kind != "page")
        .for_each(|c| files(c, &mut f));
    assert!(
        f.iter().all(|x| x.starts_with("file_upload:")),
        "media of {title:?} not uploaded: {f:?}"
    );
}

/// The inventory the binary stored for `account`.
pub fn inventory(db: &Path, account: &str) -> Vec<Notebook> {
    Db::open(db).unwrap().inventory(account).unwrap()
}

/// Job counts by state for `account`.
pub fn counts(db: &Path, account: &str) -> HashMap<&'static str, i64> {
    let c = Db::open(db).unwrap().job_counts(account).unwrap();
    HashMap::from([
        ("queued", c.queued),
        ("running", c.running),
        ("done", c.done),
        ("failed", c.failed),
        ("pages_done", c.pages_done),
        ("pages_total", c.pages_total),
    ])
}

/// Throttles the whole app from outside for `outage` (429s from every account, as another client
/// spending the app's budget makes them), waits it out, and asserts how many requests the service
/// refused meanwhile: at most `in_flight` (what the accounts may have had in flight when it began)
/// and a probe every half second. Returns that count.
pub async fn app_outage_held(lab: &Lab, outage: std::time::Duration, in_flight: u64) -> u64 {
    use notebridge_testkit::graph::faults::ExternalScope;
    let before = lab.graph.counters().throttled;
    lab.graph
        .faults()
        .throttle_externally(ExternalScope::Application, outage);
    tokio::time::sleep(outage).await;
    let refused = lab.graph.counters().throttled - before;
    let bound = in_flight + 2 * outage.as_secs();
    eprintln!("{refused} requests refused in the {outage:?} app-wide outage (bound {bound})");
    assert!(
        refused <= bound,
        "{refused} requests refused in the {outage:?} outage (at most {bound})"
    );
    refused
}
