//! `notebridge sync --from PATH` as a files user runs it (a clean environment holding only
//! `NOTION_TOKEN`), in both layouts, over a notebook folder of real OneNote section files changed
//! between two runs as OneNote leaves them (`onefile_change`: the real files' own bytes, with the
//! structures a change touches rewritten): a page retitled, edited, reordered, made a subpage and
//! moved to another section; a section file renamed, deleted and added; a page deleted. Notion
//! keeps each page's id, follows every change, and a second `sync` right after writes nothing; a
//! page edited in Notion while OneNote edited or deleted it is a conflict (its OneNote version
//! kept beside it when there is one). And an account whose notebook is files in its OneDrive
//! downloads, on a sync, only the section file that changed.

use std::path::{Path, PathBuf};

use chrono::{TimeZone, Utc};
use notebridge::store::Db;
use notebridge_testkit::lab::Lab;

use crate::files_support::sample;
use crate::layout_e2e::{fast, files_db, files_user};
use crate::onefile_change::{
    copy_notebook, delete_section, move_page, remove_page, rename_section, reorder_pages,
    retitle_page, set_page_level, touch_page, write_section,
};
use crate::sync_e2e::{expect, json, norm, parent};

/// testOneNote1.one's pages.
const ONE_FIRST: &str = "b8f3669b-f533-417a-a700-c2cbbcc760e3";
const ONE_BASICS: &str = "f5e8b626-8c4a-496b-8951-cea55052b874";
/// testOneNote2.one's pages.
const TWO_FIRST: &str = "e1fdd004-97a6-49b8-a9c9-bb781d0c5423";
const TWO_BASICS: &str = "0ad2f2f8-f7c0-4301-82df-064544dd31e5";

/// A notebook folder of four real sections (one in a section group), copied into `into`.
fn notebook(into: &Path) -> Option<PathBuf> {
    let (a, b, c, d) = (
        sample("apache-tika/testOneNote1.one")?,
        sample("apache-tika/testOneNote2.one")?,
        sample("apache-tika/testOneNote4.one")?,
        sample("apache-tika/testOneNote2016.one")?,
    );
    let src = tempfile::tempdir().unwrap();
    let nb = src.path().join("Notebook");
    std::fs::create_dir_all(nb.join("Group")).unwrap();
    std::fs::copy(a, nb.join("First.one")).unwrap();
    std::fs::copy(b, nb.join("Second.one")).unwrap();
    std::fs::copy(c, nb.join("Group/Grouped.one")).unwrap();
    std::fs::copy(d, nb.join("Doomed.one")).unwrap();
    Some(copy_notebook(&nb, into))
}

/// The import's key in the state database.
fn key(db: &Db) -> String {
    db.file_imports().unwrap()[0].key.clone()
}

fn page_of(db: &Db, key: &str, item: &str) -> String {
    db.notion_item(key, item)
        .unwrap()
        .and_then(|i| i.into_page_id())
        .unwrap_or_else(|| panic!("{item} has no Notion page"))
}

/// The section (by its shown name) each section of the import is, by name.
fn section_id(db: &Db, key: &str, name: &str) -> String {
    let mut stack: Vec<notebridge::store::inventory::SectionGroup> = Vec::new();
    for nb in db.inventory(key).unwrap() {
        if let Some(s) = nb.sections.iter().find(|s| s.name == name) {
            return s.id.clone();
        }
        stack.extend(nb.section_groups);
    }
    while let Some(g) = stack.pop() {
        if let Some(s) = g.sections.iter().find(|s| s.name == name) {
            return s.id.clone();
        }
        stack.extend(g.section_groups);
    }
    panic!("no section {name}")
}

/// The test notebook (`notebook`) migrated by a files user in `layout`: the lab, the user's home
/// and the folder (`None`: the samples are not beside this clone).
struct Migrated {
    _dir: tempfile::TempDir,
    notebook: PathBuf,
    lab: Lab,
    home: tempfile::TempDir,
}

impl Migrated {
    async fn start(layout: &str) -> Option<Migrated> {
        let dir = tempfile::tempdir().unwrap();
        let notebook = notebook(dir.path())?;
        let lab = Lab::start(fast()).await;
        let home = tempfile::tempdir().unwrap();
        let to = lab.notion.add_shared_page("Imported");
        let path = notebook.to_str().unwrap();
        let args = ["migrate", "--from", path, "--to", &to, "--layout", layout];
        expect(
            &files_user(&lab, home.path(), &args).run().await,
            0,
            "the first migration",
        );
        Some(Migrated {
            _dir: dir,
            notebook,
            lab,
            home,
        })
    }
}

async fn a_files_users_sync_follows_every_change(layout: &str) {
    let Some(added) = sample("apache-tika/testOneNoteEmbeddedWordDoc.one") else {
        return;
    };
    let Some(m) = Migrated::start(layout).await else {
        return;
    };
    let (nb, lab, home) = (&m.notebook, &m.lab, m.home.path());
    let path = nb.to_str().unwrap();
    let run = |args: Vec<&str>| files_user(lab, home, &args).run();

    // Nothing changed: nothing written.
    let writes = lab.notion.counters().changing_writes();
    let out = run(vec!["sync", "--from", path, "--json"]).await;
    expect(&out, 0, "a sync with nothing changed");
    assert_eq!(
        lab.notion.counters().changing_writes(),
        writes,
        "{}",
        out.stdout
    );

    let db = files_db(home);
    let k = key(&db);
    let (first, second) = (section_id(&db, &k, "First"), section_id(&db, &k, "Second"));
    let (grouped, doomed) = (
        section_id(&db, &k, "Grouped"),
        section_id(&db, &k, "Doomed"),
    );
    let before: Vec<(String, String)> = [ONE_FIRST, ONE_BASICS, TWO_FIRST, TWO_BASICS]
        .iter()
        .map(|p| (p.to_string(), page_of(&db, &k, p)))
        .collect();
    let page = |id: &str| before.iter().find(|(p, _)| p == id).unwrap().1.clone();
    let doomed_page = match db.section_database(&k, &doomed).unwrap() {
        Some(d) => d.created.unwrap().0,
        None => page_of(&db, &k, &doomed),
    };
    drop(db);

    // In OneNote: a page of Second moves into First, where a page is retitled and the order
    // changes; Second's other page is edited; Grouped is renamed; Doomed is deleted; a new
    // section is added.
    let (at_first, at_second) = (nb.join("First.one"), nb.join("Second.one"));
    let first_bytes = retitle_page(
        &std::fs::read(&at_first).unwrap(),
        ONE_FIRST,
        "Retitled in OneNote",
    );
    let first_bytes = reorder_pages(&first_bytes, &[ONE_BASICS, ONE_FIRST]);
    // The retitled page, now second, made a subpage of the first (OneNote's level 2).
    let first_bytes = set_page_level(&first_bytes, ONE_FIRST, 2);
    let (second_bytes, first_bytes) = move_page(
        &std::fs::read(&at_second).unwrap(),
        &first_bytes,
        TWO_BASICS,
    );
    let later = Utc.with_ymd_and_hms(2026, 11, 30, 12, 0, 0).unwrap();
    let second_bytes = touch_page(&second_bytes, TWO_FIRST, later);
    write_section(&at_first, &first_bytes);
    write_section(&at_second, &second_bytes);
    rename_section(&nb.join("Group/Grouped.one"), "Renamed section.one");
    delete_section(&nb.join("Doomed.one"));
    std::fs::copy(added, nb.join("Added.one")).unwrap();

    let out = run(vec!["sync", "--from", path, "--json"]).await;
    expect(&out, 0, "a sync of the files' changes");
    let doc = json(&out);
    eprintln!("figures: sync --from ({layout}): {doc}");
    assert!(
        doc["created"].as_u64() >= Some(2),
        "the section and its page: {doc}"
    );
    // The touched pages hold what they held: their bodies stay (a page's date line follows, a
    // row's properties).
    assert!(doc["unchanged"].as_u64() >= Some(1), "{doc}");
    assert!(doc["moved"].as_u64() >= Some(1), "{doc}");
    assert!(doc["trashed"].as_u64() >= Some(1), "{doc}");
    assert_eq!(doc["failed"], 0, "{doc}");

    let db = files_db(home);
    for p in [ONE_FIRST, ONE_BASICS, TWO_FIRST, TWO_BASICS] {
        assert_eq!(page_of(&db, &k, p), page(p), "{p} kept its Notion page");
    }
    let title = |id: &str| {
        lab.notion
            .dump(id)
            .and_then(|d| d.title)
            .unwrap_or_default()
    };
    assert_eq!(title(&page(ONE_FIRST)), "Retitled in OneNote");
    let home_of = |section: &str| match db.section_database(&k, section).unwrap() {
        Some(d) => norm(&d.created.expect("created").1),
        None => norm(&page_of(&db, &k, section)),
    };
    assert_eq!(parent(lab, &page(TWO_BASICS)), home_of(&first));
    assert_eq!(parent(lab, &page(TWO_FIRST)), home_of(&second));
    assert!(
        lab.notion.is_trashed(&doomed_page),
        "the deleted section is in the trash"
    );
    let renamed = match db.section_database(&k, &grouped).unwrap() {
        Some(d) => d.created.unwrap().0,
        None => page_of(&db, &k, &grouped),
    };
    assert_eq!(title(&renamed), "Renamed section");
    // The subpage under the page before it; First's pages in OneNote's new order.
    assert_eq!(parent(lab, &page(ONE_FIRST)), norm(&page(ONE_BASICS)));
    let want = vec![title(&page(ONE_BASICS)), title(&page(TWO_BASICS))];
    match db.section_database(&k, &first).unwrap() {
        Some(d) => {
            let mut rows = lab.notion.rows(&d.created.unwrap().1);
            rows.sort_by_key(|r| r.properties["Order"].parse::<i64>().unwrap_or(i64::MAX));
            let got: Vec<String> = rows.into_iter().map(|r| r.title).collect();
            assert_eq!(got, want, "rows by their Order");
        }
        None => assert_eq!(
            lab.notion.children_titles(&page_of(&db, &k, &first)),
            want,
            "pages in order"
        ),
    }
    drop(db);

    // A second sync right after writes nothing; `verify --from` proves the import complete.
    let writes = lab.notion.counters().changing_writes();
    let out = run(vec!["sync", "--from", path, "--json"]).await;
    expect(&out, 0, "a second sync");
    assert_eq!(
        lab.notion.counters().changing_writes(),
        writes,
        "{}",
        out.stdout
    );
    let out = run(vec!["verify", "--from", path]).await;
    expect(&out, 0, "verify --from after sync");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_files_users_sync_follows_every_change_in_layout_pages() {
    a_files_users_sync_follows_every_change("pages").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_files_users_sync_follows_every_change_in_layout_database() {
    a_files_users_sync_follows_every_change("database").await;
}

/// An account whose notebook is OneNote files in its OneDrive (`--via files`): a sync with nothing
/// changed downloads no section file and writes nothing; once OneNote saves one section again
/// (a page edited: a real file's bytes changed as OneNote leaves them, its `cTag` new), the next
/// sync downloads that section's file alone and rewrites its page in place.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_drive_notebooks_sync_downloads_only_the_section_that_changed() {
    // Desktop sections whose bytes `onefile_change` knows how to change.
    let (Some(a), Some(b)) = (
        sample("apache-tika/testOneNote1.one"),
        sample("apache-tika/testOneNote2.one"),
    ) else {
        return;
    };
    let folder = tempfile::tempdir().unwrap();
    let path = folder.path().join("Field notes");
    std::fs::create_dir(&path).unwrap();
    std::fs::copy(a, path.join("First.one")).unwrap();
    std::fs::copy(b, path.join("Second.one")).unwrap();
    let lab = Lab::start(fast()).await;
    let (user, nb) = lab.add_files_user("me", "Field notes", &path);
    let home = tempfile::tempdir().unwrap();
    let me = crate::account_clean_env::User {
        lab: &lab,
        home: home.path(),
    };
    let to = lab.target_page.clone();
    me.ok(&["login"]).await;
    me.ok(&["migrate", "--to", &to, "--via", "files"]).await;

    let writes = lab.notion.counters().changing_writes();
    let out = me.run(&["sync", "--json"]).await;
    expect(&out, 0, "a sync with nothing changed");
    let doc = json(&out);
    assert_eq!(doc["drive"]["downloads"], 0, "{doc}");
    assert_eq!(lab.notion.counters().changing_writes(), writes, "{doc}");

    // OneNote saves the first section with one of its pages edited.
    let section = nb.sections[0].clone();
    let bytes = std::fs::read(&section.source).unwrap();
    let first = crate::onefile_change::page_order(&bytes)[0].clone();
    let later = Utc.with_ymd_and_hms(2026, 11, 30, 12, 0, 0).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let changed = dir.path().join(section.source.file_name().unwrap());
    write_section(&changed, &touch_page(&bytes, &first, later));
    lab.graph.replace_section_file(&user.id, &section, &changed);

    let out = me.run(&["sync", "--json"]).await;
    expect(&out, 0, "a sync after one section changed");
    let doc = json(&out);
    eprintln!("figures: sync --via files, one section changed: {doc}");
    assert_eq!(
        doc["drive"]["downloads"], 1,
        "that section's file alone: {doc}"
    );
    // The page saved again as it was is not written again.
    assert_eq!(
        (&doc["updated"], &doc["unchanged"]),
        (&serde_json::json!(0), &serde_json::json!(1)),
        "{doc}"
    );
    assert_eq!(doc["created"], 0, "{doc}");
}

/// A files user's sync over pages edited in Notion: a page OneNote edited too keeps its OneNote
/// version beside it, a page OneNote deleted stays as the person left it (both conflicts, exit
/// 4), and a page deleted in OneNote that nobody touched in Notion goes to the trash.
async fn a_files_users_sync_keeps_what_a_person_edited(layout: &str) {
    let Some(m) = Migrated::start(layout).await else {
        return;
    };
    let (nb, lab, home) = (&m.notebook, &m.lab, m.home.path());
    let path = nb.to_str().unwrap();
    let run = |args: Vec<&str>| files_user(lab, home, &args).run();
    let db = files_db(home);
    let k = key(&db);
    let (edited, gone_edited, gone) = (
        page_of(&db, &k, ONE_FIRST),
        page_of(&db, &k, TWO_FIRST),
        page_of(&db, &k, ONE_BASICS),
    );
    drop(db);
    for p in [&edited, &gone_edited] {
        lab.notion.edit_block_as_person(
            &crate::update_conflicts::text_block(lab, p),
            "Written in Notion by a person",
        );
    }
    let (at_first, at_second) = (nb.join("First.one"), nb.join("Second.one"));
    let later = Utc.with_ymd_and_hms(2026, 11, 30, 12, 0, 0).unwrap();
    let first = touch_page(&std::fs::read(&at_first).unwrap(), ONE_FIRST, later);
    write_section(&at_first, &remove_page(&first, ONE_BASICS));
    write_section(
        &at_second,
        &remove_page(&std::fs::read(&at_second).unwrap(), TWO_FIRST),
    );

    let out = run(vec!["sync", "--from", path, "--json"]).await;
    expect(&out, 4, "a sync with conflicts");
    let doc = json(&out);
    let conflicts: Vec<(String, String, bool)> = doc["conflicts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                norm(c["notion_page_id"].as_str().unwrap()),
                c["change"].as_str().unwrap().to_owned(),
                c["kept_as"].is_string(),
            )
        })
        .collect();
    assert!(
        conflicts.contains(&(norm(&edited), "changed".into(), true)),
        "the OneNote version kept beside the edited page: {conflicts:?}"
    );
    assert!(
        conflicts.contains(&(norm(&gone_edited), "deleted".into(), false)),
        "{conflicts:?}"
    );
    assert!(!lab.notion.is_trashed(&gone_edited));
    assert!(
        lab.notion.is_trashed(&gone),
        "the untouched deleted page goes"
    );
    let text = |p: &str| {
        lab.notion
            .blocks_of(p)
            .iter()
            .any(|b| b.to_string().contains("Written in Notion by a person"))
    };
    assert!(
        text(&edited) && text(&gone_edited),
        "the person's words stay"
    );

    let writes = lab.notion.counters().changing_writes();
    let out = run(vec!["sync", "--from", path, "--json"]).await;
    expect(&out, 4, "a second sync, the conflicts still listed");
    assert_eq!(
        lab.notion.counters().changing_writes(),
        writes,
        "{}",
        out.stdout
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_files_users_sync_keeps_what_a_person_edited_in_layout_pages() {
    a_files_users_sync_keeps_what_a_person_edited("pages").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_files_users_sync_keeps_what_a_person_edited_in_layout_database() {
    a_files_users_sync_keeps_what_a_person_edited("database").await;
}
