//! Layout `database` end to end through the library's `migrate` ([`notebridge::engine::migrate`])
//! against the lab (API route): each section becomes one database in its notebook's or section
//! group's page, each top-level page one row with OneNote's dates, order and level, each subpage a
//! child page inside its parent row's page, its note tags as `Tags` (each added to the schema
//! once); no row's body starts with the grey date line. A second
//! run writes nothing twice.

use crate::migrate_support::State;

use std::collections::HashMap;
use std::sync::Arc;

use chrono::{DateTime, Utc};
use notebridge::clock::{Clock, Jitter};
use notebridge::engine::{self, Outcome, Process, Request, Services};
use notebridge::queue::cancel::Cancel;
use notebridge::queue::RunEnd;
use notebridge::store::layouts::Layout;
use notebridge::store::Db;
use notebridge_testkit::generator::{generate, page_html, NotebookSpec};
use notebridge_testkit::lab::Lab;

use crate::engine_migrate::fast;
use notebridge_testkit::notion::store::DumpNode;

fn spec(pages: usize, seed: u64) -> NotebookSpec {
    NotebookSpec {
        notebooks: 1,
        section_groups_depth: 1,
        section_groups_per_container: 1,
        sections_per_container: 2,
        pages_per_section: 0,
        total_pages: Some(pages),
        subpage_ratio: 0.4,
        images_per_page: 1,
        resource_bytes: 2048,
        seed,
        ..NotebookSpec::default()
    }
}

struct Quiet;
impl engine::Observer for Quiet {
    fn event(&self, _: engine::Event) {}
}

/// Stops the run's tree once `pages` pages are migrated (watched through the progress handle).
struct StopAfter {
    cancel: Cancel,
    pages: i64,
}

impl engine::Observer for StopAfter {
    fn event(&self, event: engine::Event) {
        if let engine::Event::Draining(progress) = event {
            let (progress, cancel, pages) = (progress.clone(), self.cancel.clone(), self.pages);
            tokio::spawn(async move {
                let mut changes = progress.changes();
                while progress.snapshot().await.done < pages {
                    tokio::time::timeout(std::time::Duration::from_secs(30), changes.next())
                        .await
                        .expect("the run tells of its changes");
                }
                cancel.stop();
            });
        }
    }
}

async fn run(lab: &Lab, state: &State, req: &Request) -> engine::Report {
    run_with(lab, state, req, &Quiet, Cancel::default()).await
}

async fn run_with(
    lab: &Lab,
    state: &State,
    req: &Request,
    observer: &dyn engine::Observer,
    cancel: Cancel,
) -> engine::Report {
    let settings = lab.settings(&state.db);
    let db = Arc::new(Db::open(&state.db).unwrap());
    let clock = Clock::system();
    let svc = Services {
        settings: &settings,
        notion_token: lab.notion.token(),
        db: &db,
        clock: &clock,
        jitter: Jitter::seeded(5),
        cancel: &cancel,
        process: Process {
            pid: std::process::id() as i64,
            is_alive: |_| false,
        },
    };
    match engine::migrate(svc, req, observer).await.unwrap() {
        Outcome::Ran(r) => *r,
        o => panic!("expected a run, got {o:?}"),
    }
}

fn count(node: &DumpNode, kind: &str) -> usize {
    // The dump is a test server's tree of a few dozen nodes: a stack, not recursion, all the same.
    let mut n = 0;
    let mut stack = vec![node];
    while let Some(d) = stack.pop() {
        n += usize::from(d.kind == kind);
        stack.extend(d.children.iter());
    }
    n
}

fn instant(s: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(s)
        .unwrap_or_else(|e| panic!("{s:?} is not a date: {e}"))
        .with_timezone(&Utc)
}

fn title_of(t: &str) -> &str {
    if t.is_empty() {
        "Untitled"
    } else {
        t
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_section_is_a_database_and_each_page_a_row_with_its_onenote_values() {
    let lab = Lab::start(fast()).await;
    let notes = generate(&spec(12, 7));
    let alice = lab.add_user("alice", notes.clone());
    let state = State::new();
    {
        let db = Db::open(&state.db).unwrap();
        lab.sign_in(&db, "alice", &alice);
    }
    let req = Request {
        account: Some("alice".into()),
        target: Some(lab.target_page.clone()),
        layout: Some(Layout::Database),
        ..Request::default()
    };
    let r = run(&lab, &state, &req).await;
    assert_eq!(r.end, RunEnd::Finished);

    let db = Db::open(&state.db).unwrap();
    assert_eq!(
        db.layout_of(&lab.target_page).unwrap(),
        Some(Layout::Database)
    );
    let tree = lab.notion.dump(&lab.target_page).unwrap();
    assert_eq!(
        count(&tree, "database"),
        notes.sections.len(),
        "one database per section: {tree:#?}"
    );
    let (mut subpages_checked, mut tagged_rows) = (0, 0);
    for section in &notes.sections {
        let rec = db
            .section_database("alice", &section.id)
            .unwrap()
            .unwrap_or_else(|| panic!("section {} has no database", section.display_name));
        let (database, data_source) = rec.created.expect("the database was created");
        let schema = lab.notion.schema(&data_source).unwrap();
        let options = schema["Tags"]["multi_select"]["options"]
            .as_array()
            .unwrap();
        assert!(options.len() <= 1, "each tag added once: {options:?}");
        assert_eq!(rec.title, section.display_name);
        let pages: Vec<_> = notes
            .pages
            .iter()
            .filter(|p| p.section_id == section.id)
            .collect();
        let rows = lab.notion.rows(&database);
        let top: Vec<_> = pages.iter().filter(|p| p.level == 0).collect();
        assert_eq!(
            rows.len(),
            top.len(),
            "one row per top-level page: {rows:#?}"
        );
        let by_title: HashMap<&str, _> = rows.iter().map(|r| (r.title.as_str(), r)).collect();
        for p in &top {
            let row = by_title
                .get(title_of(&p.title))
                .unwrap_or_else(|| panic!("no row for page {:?}", p.title));
            let props = &row.properties;
            assert_eq!(props["Order"], p.order.to_string(), "{row:#?}");
            assert_eq!(props["Level"], "0");
            assert_eq!(instant(&props["Created"]), p.created);
            assert_eq!(instant(&props["Modified"]), p.modified);
            let html = page_html(p, &notes.resources, "http://graph/v1.0", &alice.id);
            let tagged = html.contains("data-tag=\"to-do");
            assert_eq!(props["Tags"], if tagged { "To Do" } else { "" }, "{row:#?}");
            tagged_rows += usize::from(tagged);
            let body = lab.notion.dump(&row.id).unwrap();
            assert!(
                body.children.iter().all(|b| !b.text.ends_with("(OneNote)")),
                "no date line in a row's body: {body:#?}"
            );
        }
        // A subpage is a child page of the row of the nearest page before it at a lower level.
        let mut stack: Vec<(u8, &str)> = Vec::new();
        for p in &pages {
            while stack.last().is_some_and(|(l, _)| *l >= p.level) {
                stack.pop();
            }
            if let Some((_, parent)) = stack.last() {
                let parent_id = db
                    .notion_item("alice", parent)
                    .unwrap()
                    .and_then(|i| i.into_page_id())
                    .expect("the parent page was written");
                let under = lab.notion.dump(&parent_id).unwrap();
                let n = under
                    .children
                    .iter()
                    .filter(|c| c.kind == "page" && c.title.as_deref() == Some(title_of(&p.title)))
                    .count();
                assert_eq!(n, 1, "subpage {:?} once in its parent: {under:#?}", p.title);
                subpages_checked += 1;
            }
            stack.push((p.level, &p.id));
        }
    }
    assert!(subpages_checked > 0, "the notebook has subpages");
    assert!(tagged_rows > 0, "the notebook has tagged pages");
    drop(db);

    // Nothing twice: a second plan of the same target finds everything written.
    let writes = lab.notion.counters().per_endpoint.clone();
    let again = run(&lab, &state, &req).await;
    assert_eq!(again.end, RunEnd::Finished);
    let tree2 = lab.notion.dump(&lab.target_page).unwrap();
    assert_eq!(count(&tree2, "database"), notes.sections.len());
    assert_eq!(count(&tree2, "page"), count(&tree, "page"));
    assert_eq!(
        lab.notion
            .counters()
            .per_endpoint
            .get(&notebridge_testkit::notion::Endpoint::CreateDatabase),
        writes.get(&notebridge_testkit::notion::Endpoint::CreateDatabase),
        "no database created again"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_stopped_midway_and_resumed_makes_no_database_or_row_twice() {
    let lab = Lab::start(fast()).await;
    let notes = generate(&spec(12, 11));
    let alice = lab.add_user("alice", notes.clone());
    let state = State::new();
    {
        let db = Db::open(&state.db).unwrap();
        lab.sign_in(&db, "alice", &alice);
    }
    let req = Request {
        account: Some("alice".into()),
        target: Some(lab.target_page.clone()),
        layout: Some(Layout::Database),
        workers: 1,
        ..Request::default()
    };
    let cancel = Cancel::default();
    let stop = StopAfter {
        cancel: cancel.clone(),
        pages: 4,
    };
    let r = run_with(&lab, &state, &req, &stop, cancel).await;
    assert_eq!(r.end, RunEnd::Stopped, "stopped with pages left");
    let resume = Request {
        account: Some("alice".into()),
        resume: true,
        layout: Some(Layout::Database),
        ..Request::default()
    };
    let r = run(&lab, &state, &resume).await;
    assert_eq!(r.end, RunEnd::Finished);

    let db = Db::open(&state.db).unwrap();
    let tree = lab.notion.dump(&lab.target_page).unwrap();
    assert_eq!(count(&tree, "database"), notes.sections.len(), "{tree:#?}");
    // Every page once: rows and subpages, beside the notebook's and section groups' pages and
    // the target page itself.
    let containers = 1 + notes.notebooks.len() + notes.section_groups.len();
    assert_eq!(
        count(&tree, "page"),
        notes.pages.len() + containers,
        "{tree:#?}"
    );
    for section in &notes.sections {
        let (database, _) = db
            .section_database("alice", &section.id)
            .unwrap()
            .and_then(|d| d.created)
            .expect("the section's database");
        let top = notes
            .pages
            .iter()
            .filter(|p| p.section_id == section.id && p.level == 0)
            .count();
        assert_eq!(lab.notion.rows(&database).len(), top);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn update_rewrites_a_changed_row_in_place_with_its_new_values() {
    let lab = Lab::start(fast()).await;
    let notes = generate(&spec(6, 3));
    let alice = lab.add_user("alice", notes.clone());
    let state = State::new();
    {
        let db = Db::open(&state.db).unwrap();
        lab.sign_in(&db, "alice", &alice);
    }
    let req = Request {
        account: Some("alice".into()),
        target: Some(lab.target_page.clone()),
        layout: Some(Layout::Database),
        ..Request::default()
    };
    assert_eq!(run(&lab, &state, &req).await.end, RunEnd::Finished);
    let changed = notes.pages.iter().find(|p| p.level == 0).unwrap().clone();
    let db = Db::open(&state.db).unwrap();
    let (database, _) = db
        .section_database("alice", &changed.section_id)
        .unwrap()
        .and_then(|d| d.created)
        .unwrap();
    let row_id = db
        .notion_item("alice", &changed.id)
        .unwrap()
        .and_then(|i| i.into_page_id())
        .unwrap();
    drop(db);
    let before = lab.notion.rows(&database);

    let modified = changed.modified + chrono::Duration::days(3);
    lab.graph.mutate(&alice.id, |n| {
        let p = n.pages.iter_mut().find(|p| p.id == changed.id).unwrap();
        p.modified = modified;
        p.content_seed += 1;
    });
    let update = Request {
        update: true,
        ..req.clone()
    };
    assert_eq!(run(&lab, &state, &update).await.end, RunEnd::Finished);
    let after = lab.notion.rows(&database);
    assert_eq!(after.len(), before.len(), "no row made twice: {after:#?}");
    let row = after.iter().find(|r| r.id == row_id).expect("the same row");
    assert_eq!(instant(&row.properties["Modified"]), modified, "{row:#?}");
    let new = notes::changed_html(&lab, &alice.id, &changed.id);
    let tagged = new.contains("data-tag=\"to-do");
    assert_eq!(row.properties["Tags"], if tagged { "To Do" } else { "" });
}

mod notes {
    use notebridge_testkit::generator::page_html;
    use notebridge_testkit::lab::Lab;

    /// The page's HTML as the lab serves it now.
    pub fn changed_html(lab: &Lab, user: &str, page: &str) -> String {
        let n = lab.graph.notes(user);
        let p = n.pages.iter().find(|p| p.id == page).unwrap();
        page_html(p, &n.resources, "http://graph/v1.0", user)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_section_group_from_files_arrives_as_databases_with_a_row_per_top_level_page() {
    let Some(path) = crate::files_support::sample("onenote.rs/samples/New Section Group") else {
        return;
    };
    let lab = Lab::start(fast()).await;
    let state = State::new();
    let target = lab.notion.add_shared_page("Imported");
    let req = Request {
        from: vec![path],
        target: Some(target.clone()),
        layout: Some(Layout::Database),
        ..Request::default()
    };
    assert_eq!(run(&lab, &state, &req).await.end, RunEnd::Finished);

    let c = rusqlite::Connection::open(&state.db).unwrap();
    let one = |sql: &str| -> i64 { c.query_row(sql, [], |r| r.get(0)).unwrap() };
    let sections = one("SELECT COUNT(*) FROM sections WHERE deleted_at IS NULL");
    let top = one("SELECT COUNT(*) FROM pages WHERE deleted_at IS NULL AND level = 0");
    let all = one("SELECT COUNT(*) FROM pages WHERE deleted_at IS NULL");
    assert!(sections > 0 && top > 0);
    let tree = lab.notion.dump(&target).unwrap();
    assert_eq!(count(&tree, "database") as i64, sections, "{tree:#?}");
    let mut ids = c
        .prepare("SELECT database_id FROM section_databases")
        .unwrap();
    let databases: Vec<String> = ids
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let rows: Vec<_> = databases.iter().flat_map(|d| lab.notion.rows(d)).collect();
    assert_eq!(rows.len() as i64, top, "{rows:#?}");
    for r in &rows {
        assert!(
            !r.properties["Created"].is_empty(),
            "OneNote's date: {r:#?}"
        );
    }
    // Every page once, beside the target page and the notebook's and section groups' pages.
    let containers = 1
        + one("SELECT COUNT(*) FROM notebooks WHERE deleted_at IS NULL")
        + one("SELECT COUNT(*) FROM section_groups WHERE deleted_at IS NULL");
    assert_eq!(count(&tree, "page") as i64, all + containers, "{tree:#?}");
}
