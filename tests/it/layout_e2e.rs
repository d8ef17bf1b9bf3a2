//! Layout `database` as its users run it, with the binary: an account's notebook through the
//! OneNote API (a section group, subpages, note tags) and OneNote's own files with nothing but a
//! Notion token. The test server's dump shows one database per section and one row per top-level
//! page with each property as OneNote had it; the dry run, the plan and `status` name the layout;
//! `--update` (no `--layout`: the recorded one is kept) rewrites a row whose tags changed in
//! place.

use std::collections::HashMap;
use std::path::Path;

use chrono::{DateTime, Utc};
use notebridge::convert::convert_page;
use notebridge::onefile;
use notebridge::store::layouts::Layout;
use notebridge::store::Db;
use notebridge_testkit::generator::{generate, page_html, NotebookSpec};
use notebridge_testkit::lab::{Lab, LabConfig};
use notebridge_testkit::notion::databases::RowDump;
use serde_json::{json, Value};

use crate::bin_support;
use crate::files_support::sample;
use crate::migrate_support::{notebridge, State};

/// Graph and Notion fast enough for a test.
pub(crate) fn fast() -> LabConfig {
    LabConfig {
        user_windows: "60/600ms,600/6s".into(),
        app_windows: "120/600ms,1200/6s".into(),
        notion_per_second: 150,
        ..LabConfig::default()
    }
}

fn spec() -> NotebookSpec {
    NotebookSpec {
        notebooks: 1,
        section_groups_depth: 1,
        section_groups_per_container: 1,
        sections_per_container: 2,
        pages_per_section: 0,
        total_pages: Some(14),
        subpage_ratio: 0.4,
        images_per_page: 1,
        resource_bytes: 2048,
        seed: 21,
        ..NotebookSpec::default()
    }
}

fn json(out: &str) -> Value {
    serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("{e}: {out}"))
}

fn instant(s: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(s)
        .unwrap_or_else(|e| panic!("{s:?} is not a date: {e}"))
        .with_timezone(&Utc)
}

/// A row's `Tags` as the names Notion holds.
fn tags_of(row: &RowDump) -> Vec<String> {
    let v = &row.raw["Tags"];
    v["multi_select"]
        .as_array()
        .or(v.as_array())
        .map(|a| {
            a.iter()
                .filter_map(|o| o["name"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

fn untitled(t: &str) -> &str {
    if t.is_empty() {
        "Untitled"
    } else {
        t
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_accounts_notebook_arrives_as_databases_and_an_update_rewrites_a_retagged_row() {
    let lab = Lab::start(fast()).await;
    let notes = generate(&spec());
    let alice = lab.add_user("alice", notes.clone());
    let state = State::new();
    lab.sign_in(&Db::open(&state.db).unwrap(), "alice", &alice);
    let to = lab.target_page.clone();
    let base = ["migrate", "--account", "alice", "--to", &to];

    // The dry run names the layout and writes nothing.
    let mut dry = vec!["--json"];
    dry.extend(base);
    dry.extend(["--layout", "database", "--dry-run"]);
    let (code, out, err) = notebridge(&lab, &state, &dry).await;
    assert_eq!(code, 0, "{out}\n{err}");
    assert_eq!(json(&out)["plan"]["accounts"][0]["layout"], "database");
    assert!(
        lab.notion.databases_under(&to).is_empty(),
        "a dry run creates nothing"
    );

    let mut first = base.to_vec();
    first.extend(["--layout", "database"]);
    let (code, out, err) = notebridge(&lab, &state, &first).await;
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(
        out.contains("layout database"),
        "the plan names the layout: {out}"
    );

    let db = Db::open(&state.db).unwrap();
    assert_eq!(db.layout_of(&to).unwrap(), Some(Layout::Database));
    let mut subpages = 0;
    let mut tagged = 0;
    for section in &notes.sections {
        let (database, _) = db
            .section_database("alice", &section.id)
            .unwrap()
            .and_then(|d| d.created)
            .unwrap_or_else(|| panic!("section {} has no database", section.display_name));
        let rows = lab.notion.rows(&database);
        let pages: Vec<_> = notes
            .pages
            .iter()
            .filter(|p| p.section_id == section.id)
            .collect();
        let top: Vec<_> = pages.iter().filter(|p| p.level == 0).collect();
        assert_eq!(
            rows.len(),
            top.len(),
            "one row per top-level page: {rows:#?}"
        );
        let by_title: HashMap<&str, &RowDump> =
            rows.iter().map(|r| (r.title.as_str(), r)).collect();
        for p in &top {
            let row = by_title
                .get(untitled(&p.title))
                .unwrap_or_else(|| panic!("no row for {:?}", p.title));
            let html = page_html(p, &notes.resources, lab.graph.base_url(), &alice.id);
            let want = convert_page(&html).tags;
            assert_eq!(tags_of(row), want, "{row:#?}");
            tagged += usize::from(!want.is_empty());
            assert_eq!(instant(&row.properties["Created"]), p.created);
            assert_eq!(instant(&row.properties["Modified"]), p.modified);
            assert_eq!(row.properties["Order"], p.order.to_string());
            assert_eq!(row.properties["Level"], "0");
            // The page in OneNote on the web, as Graph links it; Graph's page names no author.
            let link = &row.properties["OneNote link"];
            assert!(
                link.starts_with("https://onedrive.live.com/view.aspx?resid=")
                    && link.contains(&section.id),
                "{row:#?}"
            );
            assert_eq!(row.properties["Author"], "", "{row:#?}");
        }
        subpages += pages.len() - top.len();
    }
    assert!(
        tagged > 0 && subpages > 0,
        "the notebook has tags and subpages"
    );
    // Every subpage is a page inside a row's page: the pages in the tree are the target, the
    // notebook and group pages, the rows and the subpages.
    let all = lab.notion.dump(&to).unwrap();
    let mut stack = vec![&all];
    let mut pages = 0;
    while let Some(n) = stack.pop() {
        pages += usize::from(n.kind == "page");
        stack.extend(n.children.iter());
    }
    assert_eq!(
        pages,
        1 + notes.notebooks.len() + notes.section_groups.len() + notes.pages.len()
    );

    // `status` names the layout.
    let (code, out, _) = notebridge(&lab, &state, &["--json", "status"]).await;
    assert_eq!(code, 0);
    assert_eq!(json(&out)["accounts"][0]["layout"], "database", "{out}");

    // A page's tags change in OneNote: `--update`, with no --layout, rewrites its row in place.
    let page = notes.pages.iter().find(|p| p.level == 0).unwrap().clone();
    let before = convert_page(&page_html(
        &page,
        &notes.resources,
        lab.graph.base_url(),
        &alice.id,
    ))
    .tags;
    let modified = page.modified + chrono::Duration::days(2);
    let changed = lab.graph.mutate(&alice.id, |n| {
        let resources = n.resources.clone();
        let p = n.pages.iter_mut().find(|q| q.id == page.id).unwrap();
        p.modified = modified;
        for _ in 0..200 {
            p.content_seed += 1;
            let html = page_html(p, &resources, lab.graph.base_url(), &alice.id);
            let now = convert_page(&html).tags;
            if now != before {
                return now;
            }
        }
        panic!("no seed changes the page's tags");
    });
    let row_id = db
        .notion_item("alice", &page.id)
        .unwrap()
        .and_then(|i| i.into_page_id())
        .unwrap();
    let (database, _) = db
        .section_database("alice", &page.section_id)
        .unwrap()
        .and_then(|d| d.created)
        .unwrap();
    drop(db);
    let rows_before = lab.notion.rows(&database).len();
    let mut update = base.to_vec();
    update.push("--update");
    let (code, out, err) = notebridge(&lab, &state, &update).await;
    assert_eq!(code, 0, "{out}\n{err}");
    let rows = lab.notion.rows(&database);
    assert_eq!(rows.len(), rows_before, "no row made twice: {rows:#?}");
    let row = rows.iter().find(|r| r.id == row_id).expect("the same row");
    assert_eq!(tags_of(row), changed, "{row:#?}");
    assert_eq!(instant(&row.properties["Modified"]), modified);

    // `verify` reads every database's rows back (its data source's queries) and finds each page
    // once and complete; a row put in the trash in Notion is a page missing.
    let (code, out, err) = notebridge(&lab, &state, &["--json", "verify"]).await;
    assert_eq!(
        code, 0,
        "{out}
{err}"
    );
    let v = json(&out);
    assert_eq!(v["verdict"], "complete", "{out}");
    assert_eq!(v["accounts"][0]["layout"], "database");
    for s in v["accounts"][0]["sections"].as_array().unwrap() {
        assert!(s["database"]["database_id"].is_string(), "{s}");
    }
    let (status, _) = notion_patch(
        &lab,
        &format!("/v1/pages/{row_id}"),
        json!({"in_trash": true}),
    )
    .await;
    assert_eq!(status, 200);
    let (code, out, _) = notebridge(&lab, &state, &["--json", "verify"]).await;
    assert_eq!(code, 4, "{out}");
    let v = json(&out);
    let checked = v["accounts"][0]["sections"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|s| s["pages"].as_array().unwrap().iter())
        .find(|p| p["notion_page_id"] == json!(row_id))
        .cloned()
        .unwrap_or_default();
    assert_eq!(checked["state"], "missing", "{out}");
}

/// A request to the Notion test server as an integration would send it.
async fn notion_patch(lab: &Lab, path: &str, body: Value) -> (u16, Value) {
    let r = reqwest::Client::new()
        .patch(format!("{}{path}", lab.notion.base_url()))
        .bearer_auth(lab.notion.token())
        .header("Notion-Version", "2025-09-03")
        .json(&body)
        .send()
        .await
        .unwrap();
    let status = r.status().as_u16();
    (status, r.json().await.unwrap_or_default())
}

/// What a files user has: a home and the Notion token (and the test server's address, for Notion
/// itself). The state database is where notebridge puts it by default.
pub(crate) fn files_user(lab: &Lab, home: &Path, args: &[&str]) -> bin_support::Bin {
    bin_support::notebridge(home, &["--no-progress"])
        .args(args)
        .env("NOTION_TOKEN", lab.notion.token())
        .env("NOTEBRIDGE_NOTION_URL", lab.notion.base_url())
}

/// The state database a files user's runs keep, at its default place under the home.
pub(crate) fn files_db(home: &Path) -> Db {
    Db::open(&bin_support::default_db(home)).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn files_with_only_a_notion_token_arrive_as_databases_with_their_tags_and_dates() {
    let (Some(group), Some(tagged)) = (
        sample("onenote.rs/samples/New Section Group"),
        sample("onenote.rs/non-legacy/New Section 1 2.one"),
    ) else {
        return;
    };
    let lab = Lab::start(fast()).await;
    let home = tempfile::tempdir().unwrap();
    let to = lab.notion.add_shared_page("Imported");
    let (g, t) = (group.to_str().unwrap(), tagged.to_str().unwrap());
    let args = [
        "migrate", "--from", g, "--from", t, "--to", &to, "--layout", "database",
    ];
    let out = files_user(&lab, home.path(), &args).run().await;
    assert_eq!(out.code, Some(0), "{}\n{}", out.stdout, out.stderr);

    // Each section read from the files is one database; each top-level page one row, with the
    // tags, dates and order the file holds.
    let db = files_db(home.path());
    let mut sections = 0;
    let mut tags_seen: Vec<String> = Vec::new();
    let mut authors = 0;
    for path in [&group, &tagged] {
        let import = onefile::scan(path).unwrap();
        let key = db
            .import_key(&std::path::absolute(path).unwrap().display().to_string())
            .unwrap()
            .expect("the import is recorded");
        for (_, section) in import.all_sections() {
            sections += 1;
            let parsed = onefile::open_section(&section.location).unwrap();
            let (database, _) = db
                .section_database(&key, &parsed.id())
                .unwrap()
                .and_then(|d| d.created)
                .unwrap_or_else(|| panic!("section {} has no database", parsed.name()));
            let rows = lab.notion.rows(&database);
            let pages = parsed.pages();
            let top: Vec<_> = pages.iter().filter(|p| p.level == 0).collect();
            assert_eq!(rows.len(), top.len(), "{rows:#?}");
            for p in &top {
                // Titles repeat in the samples; a row's Order is its page's place.
                let row = rows
                    .iter()
                    .find(|r| r.properties["Order"] == p.order.to_string())
                    .unwrap_or_else(|| panic!("no row for {:?}: {rows:#?}", p.title));
                assert_eq!(row.title, untitled(&p.title));
                let converted = parsed.convert(&p.id).expect("the page converts");
                assert_eq!(tags_of(row), converted.tags, "{row:#?}");
                tags_seen.extend(converted.tags);
                // The file names each page's author; a local file has no web link.
                assert_eq!(
                    row.properties["Author"],
                    p.author.clone().unwrap_or_default(),
                    "{row:#?}"
                );
                authors += usize::from(p.author.is_some());
                assert_eq!(row.properties["OneNote link"], "", "{row:#?}");
                assert_eq!(
                    row.properties
                        .get("Created")
                        .filter(|s| !s.is_empty())
                        .map(|s| instant(s)),
                    p.created.as_deref().map(instant),
                    "{row:#?}"
                );
                assert_eq!(
                    row.properties
                        .get("Modified")
                        .filter(|s| !s.is_empty())
                        .map(|s| instant(s)),
                    p.last_modified.as_deref().map(instant),
                    "{row:#?}"
                );
            }
        }
    }
    assert_eq!(
        lab.notion
            .dump(&to)
            .map(|d| {
                let mut stack = vec![d];
                let mut n = 0;
                while let Some(x) = stack.pop() {
                    n += usize::from(x.kind == "database");
                    stack.extend(x.children);
                }
                n
            })
            .unwrap(),
        sections
    );
    assert!(authors > 0, "the samples name their pages' authors");
    for want in ["To Do", "Important"] {
        assert!(
            tags_seen.iter().any(|t| t == want),
            "the tagged section's {want:?} is a row's tag: {tags_seen:?}"
        );
    }

    // `status` of the import names its layout.
    let out = files_user(&lab, home.path(), &["--json", "status"])
        .run()
        .await;
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let doc = json(&out.stdout);
    assert!(
        doc["imports"]
            .as_array()
            .unwrap()
            .iter()
            .all(|i| i["layout"] == "database"),
        "{doc}"
    );

    // `verify` with nothing but the token checks the imports' databases row by row.
    let out = files_user(&lab, home.path(), &["--json", "verify"])
        .run()
        .await;
    assert_eq!(
        out.code,
        Some(0),
        "{}
{}",
        out.stdout,
        out.stderr
    );
    let v = json(&out.stdout);
    assert_eq!(v["verdict"], "complete", "{}", out.stdout);
    let checked: usize = v["accounts"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|a| a["sections"].as_array().unwrap().iter())
        .map(|s| s["database"]["rows_found"].as_u64().unwrap_or(0) as usize)
        .sum();
    assert!(checked > 0, "{}", out.stdout);
}
