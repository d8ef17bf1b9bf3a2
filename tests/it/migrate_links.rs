//! Links recorded where they were written: the link pass updates exactly the blocks the writer
//! recorded as holding links to pages not migrated yet, from what it wrote. It reads nothing from
//! Graph, so a page changed in OneNote since it was written (which a conversion made again would
//! match to the wrong blocks) still gets its links right.

use crate::migrate_support;

use std::time::Duration;

use migrate_support::{notebridge, State};
use notebridge::store::Db;
use notebridge_testkit::generator::{generate, NotebookSpec};
use notebridge_testkit::lab::{Lab, LabConfig};
use serde_json::Value;

/// The page mentions among a page's top-level blocks: the mentioned page ids.
fn mentioned(blocks: &[Value]) -> Vec<String> {
    blocks
        .iter()
        .filter_map(|b| b["paragraph"]["rich_text"].as_array())
        .flatten()
        .filter(|r| r["type"] == "mention")
        .filter_map(|r| r["mention"]["page"]["id"].as_str().map(str::to_owned))
        .collect()
}

/// A listed block without the expiry of its file's URL (a new one at each read).
fn without_expiry(b: &Value) -> Value {
    let mut b = b.clone();
    if let Some(t) = b["type"].as_str().map(str::to_owned) {
        if let Some(f) = b[&t]["file"].as_object_mut() {
            f.remove("expiry_time");
        }
    }
    b
}

/// What the row of a page written before schema version 13 holds (no journal, links not
/// recorded), made between two runs as their holder of the run lock would.
pub(crate) fn forget_journal_between_runs(db: &Db, page: &str) {
    let token = db
        .acquire_run_lock(1, "between runs", 0, Duration::from_secs(60), |_| false)
        .unwrap()
        .unwrap();
    db.forget_journal(&token, "default", page).unwrap();
    db.release_run_lock(token.as_str()).unwrap();
}

/// A lab holding two notebooks whose first was migrated alone, and the pages of the first that
/// link into the second: their links wait for the link pass of a later run.
pub(crate) struct FirstOnly {
    pub lab: Lab,
    pub state: State,
    pub user: String,
    /// (page, the page of the other notebook it links to).
    pub waiting: Vec<(String, String)>,
}

impl FirstOnly {
    pub async fn migrated(seed: u64) -> FirstOnly {
        let lab = Lab::start(LabConfig {
            notion_per_second: 150,
            ..LabConfig::default()
        })
        .await;
        let spec = NotebookSpec {
            notebooks: 2,
            sections_per_container: 1,
            pages_per_section: 6,
            images_per_page: 0,
            subpage_ratio: 0.0,
            title_links: true,
            seed,
            ..NotebookSpec::default()
        };
        let user = lab.add_user("default", generate(&spec));
        let state = State::new();
        lab.sign_in(&Db::open(&state.db).unwrap(), "default", &user);
        let notes = lab.graph.notes(&user.id);
        let notebook_of = |page: &str| {
            let p = notes.page(page).unwrap();
            notes.section(&p.section_id).unwrap().notebook_id.clone()
        };
        let first = notes.notebooks_sorted()[0].clone();
        let waiting: Vec<(String, String)> = notes
            .pages
            .iter()
            .filter(|p| notebook_of(&p.id) == first.id)
            .filter_map(|p| Some((p.id.clone(), p.links.first()?.clone())))
            .filter(|(_, target)| notebook_of(target) != first.id)
            .collect();
        assert!(!waiting.is_empty(), "the notebook links into the other one");
        let (code, out, err) = notebridge(
            &lab,
            &state,
            &[
                "migrate",
                "--to",
                &lab.target_page,
                "--notebook",
                &first.display_name,
            ],
        )
        .await;
        assert_eq!(code, 0, "{out}{err}");
        FirstOnly {
            lab,
            state,
            user: user.id,
            waiting,
        }
    }

    fn notion_id(&self, item: &str) -> String {
        Db::open(&self.state.db)
            .unwrap()
            .notion_item("default", item)
            .unwrap()
            .unwrap()
            .into_page_id()
            .unwrap()
    }

    /// Whether Graph was asked for `page`'s content after its log's first `from` entries.
    fn content_read(&self, from: usize, page: &str) -> bool {
        let content = format!("/pages/{page}/content");
        self.lab.graph.log()[from..]
            .iter()
            .any(|e| e.path.contains(&content))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn links_are_rewritten_where_they_were_written_though_the_page_changed_in_onenote() {
    let f = FirstOnly::migrated(23).await;
    let (lab, state, waiting) = (&f.lab, &f.state, &f.waiting);
    let db = Db::open(&state.db).unwrap();
    let notion_id = |item: &str| f.notion_id(item);
    let mut written = Vec::new();
    for (page, _) in waiting {
        let blocks = lab.notion.blocks_of(&notion_id(page));
        let text = serde_json::to_string(&blocks).unwrap();
        assert!(text.contains("(OneNote page {"), "the link waits: {text}");
        assert!(!db.link_blocks("default", page).unwrap().is_empty());
        written.push(blocks);
    }

    // The linking pages change in OneNote (other text, other blocks) but are not rewritten (no
    // `--update`): their Notion pages keep what was written.
    lab.graph.mutate(&f.user, |n| {
        for p in n.pages.iter_mut() {
            if waiting.iter().any(|(id, _)| *id == p.id) {
                p.content_seed = p.content_seed.wrapping_add(7);
                p.link_texts = vec!["another text".into()];
            }
        }
    });
    let graph_before = lab.graph.log().len();
    let (code, out, err) = notebridge(lab, state, &["migrate", "--to", &lab.target_page]).await;
    assert_eq!(code, 0, "{out}{err}");

    for ((page, target), before) in waiting.iter().zip(&written) {
        let after = lab.notion.blocks_of(&notion_id(page));
        assert_eq!(after.len(), before.len(), "no block added or lost");
        for (b, a) in before.iter().zip(&after) {
            let linked = serde_json::to_string(b)
                .unwrap()
                .contains("(OneNote page {");
            if linked {
                assert_eq!(mentioned(std::slice::from_ref(a)), [notion_id(target)]);
                let rest = serde_json::to_string(a).unwrap();
                assert!(!rest.contains("another text"), "{rest}");
            } else {
                assert_eq!(
                    without_expiry(a),
                    without_expiry(b),
                    "a block without links is left as written"
                );
            }
        }
        let text = serde_json::to_string(&after).unwrap();
        assert!(!text.contains("(OneNote page {"), "{text}");
        assert!(
            db.link_blocks("default", page).unwrap().is_empty(),
            "a block whose links all resolved is forgotten"
        );
        assert!(
            !f.content_read(graph_before, page),
            "the link pass read no page content from Graph"
        );
    }
    assert!(db.pages_with_pending_links("default").unwrap().is_empty());
    let (code, out, err) = notebridge(lab, state, &["verify"]).await;
    assert_eq!(code, 0, "{out}{err}");
}

/// A page an older notebridge wrote has no records of its links: the link pass reads it again from
/// OneNote and matches its blocks by position, as that version did, so an upgrade halfway through a
/// migration loses no link.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_written_before_links_were_recorded_is_read_again_and_its_links_rewritten() {
    let f = FirstOnly::migrated(24).await;
    let db = Db::open(&f.state.db).unwrap();
    for (page, _) in &f.waiting {
        forget_journal_between_runs(&db, page);
        assert!(
            !db.notion_item("default", page)
                .unwrap()
                .unwrap()
                .links_recorded
        );
    }
    let graph_before = f.lab.graph.log().len();
    let (code, out, err) =
        notebridge(&f.lab, &f.state, &["migrate", "--to", &f.lab.target_page]).await;
    assert_eq!(code, 0, "{out}{err}");
    for (page, target) in &f.waiting {
        let blocks = f.lab.notion.blocks_of(&f.notion_id(page));
        assert_eq!(mentioned(&blocks), [f.notion_id(target)]);
        let text = serde_json::to_string(&blocks).unwrap();
        assert!(!text.contains("(OneNote page {"), "{text}");
        assert!(
            f.content_read(graph_before, page),
            "read again from OneNote"
        );
    }
    assert!(db.pages_with_pending_links("default").unwrap().is_empty());
}
