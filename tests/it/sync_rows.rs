//! `notebridge sync` in layout `database` as an account's user runs it (a clean environment: the
//! client id and the Notion token): a page moved to another section's database arrives there with
//! every property the layout writes, although the Notion test server keeps only a row's title
//! when it moves into another data source (as the move endpoint is modelled: what Notion keeps is
//! not documented); a section moved to another notebook gets a new database there, with the same
//! title and schema, its rows moved into it (their ids and properties kept) and the old database
//! trashed; a row a person edited in Notion stays where it is, a conflict, and keeps the old
//! database in Notion, as a row a person added there does until it is gone. The Graph and Notion
//! test servers model the services (`testkit`): nothing here is recorded from the real ones.

use std::collections::{BTreeMap, BTreeSet};

use chrono::SecondsFormat;
use notebridge::store::Db;
use notebridge_testkit::generator::{generate, NotebookSpec};
use notebridge_testkit::graph::model::UserNotes;
use notebridge_testkit::lab::Lab;

use crate::account_clean_env::User;
use crate::layout_e2e::files_db;
use crate::sync_e2e::{expect, json, migrated_with, norm};

/// Two notebooks of two sections each, five pages a section, no subpages.
fn notes() -> UserNotes {
    generate(&NotebookSpec {
        notebooks: 2,
        section_groups_depth: 0,
        sections_per_container: 2,
        pages_per_section: 5,
        total_pages: None,
        subpage_ratio: 0.0,
        images_per_page: 0,
        seed: 73,
        ..NotebookSpec::default()
    })
}

/// The sections of notebook `nb`, in order.
fn sections_of(n: &UserNotes, nb: &str) -> Vec<String> {
    n.sections
        .iter()
        .filter(|s| s.notebook_id == nb)
        .map(|s| s.id.clone())
        .collect()
}

/// `section`'s database and data source as recorded.
fn database_of(db: &Db, section: &str) -> (String, String) {
    db.section_database("default", section)
        .unwrap()
        .and_then(|d| d.created)
        .unwrap_or_else(|| panic!("section {section} has its database"))
}

/// Each row of `source` by its id: every property's value in plain text.
fn rows(lab: &Lab, source: &str) -> BTreeMap<String, BTreeMap<String, String>> {
    lab.notion
        .rows(source)
        .into_iter()
        .map(|r| (norm(&r.id), r.properties))
        .collect()
}

/// A data source's schema as names and types, and its tag options' names in order.
fn schema(lab: &Lab, source: &str) -> (BTreeMap<String, String>, Vec<String>) {
    let s = lab.notion.schema(source).expect("a data source");
    let props = s
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.clone(), v["type"].as_str().unwrap_or_default().to_owned()))
        .collect();
    let tags = s["Tags"]["multi_select"]["options"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|o| o["name"].as_str().map(str::to_owned))
        .collect();
    (props, tags)
}

/// A second `sync` right after writes nothing to Notion, and says so (exit `code`).
async fn second_sync_writes_nothing(lab: &Lab, me: &User<'_>, code: i32) {
    let writes = lab.notion.counters().changing_writes();
    let out = me.run(&["sync", "--json"]).await;
    expect(&out, code, "a second sync");
    let doc = json(&out);
    for k in [
        "created",
        "updated",
        "renamed",
        "moved",
        "reordered",
        "trashed",
    ] {
        assert_eq!(doc[k], 0, "{k} in {doc}");
    }
    assert_eq!(lab.notion.counters().changing_writes(), writes, "{doc}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_row_moved_to_another_sections_database_keeps_every_property() {
    let notes = notes();
    let (lab, user, home) = migrated_with(&notes, "database").await;
    let me = User {
        lab: &lab,
        home: home.path(),
    };
    let nb = &notes.notebooks[0].id;
    let s = sections_of(&notes, nb);
    let db = files_db(home.path());
    let ((_, from), (_, to)) = (database_of(&db, &s[0]), database_of(&db, &s[1]));
    // The row with the most properties set (tags among them), and its page.
    let before = rows(&lab, &from);
    let (row, props) = before
        .iter()
        .max_by_key(|(_, p)| p.values().filter(|v| !v.is_empty()).count())
        .map(|(r, p)| (r.clone(), p.clone()))
        .unwrap();
    assert!(
        !props["Tags"].is_empty() && !props["OneNote link"].is_empty(),
        "the moved row has tags and a link: {props:?}"
    );
    let item = notes
        .pages
        .iter()
        .find(|p| {
            db.notion_item("default", &p.id)
                .unwrap()
                .and_then(|i| i.into_page_id())
                .is_some_and(|id| norm(&id) == row)
        })
        .map(|p| p.id.clone())
        .expect("the row's page");
    drop(db);

    lab.graph
        .mutate(&user.id, |n| n.move_page("me", &item, &s[1]).unwrap());
    let out = me.run(&["sync", "--json"]).await;
    expect(&out, 0, "a sync of a page moved to another section");
    let doc = json(&out);
    eprintln!("figures: sync of a moved row: {doc}");
    assert_eq!(doc["moved"], 1, "{doc}");
    assert_eq!(doc["failed"], 0, "{doc}");

    let now = lab.graph.notes(&user.id);
    let page = now.pages.iter().find(|p| p.id == item).unwrap();
    let link = files_db(home.path())
        .page_values("default", &item)
        .unwrap()
        .and_then(|v| v.web_url)
        .expect("the page's link in OneNote");
    let after = rows(&lab, &to);
    let got = after
        .get(&row)
        .expect("the row is in the other database, its id kept");
    assert!(
        !rows(&lab, &from).contains_key(&row),
        "and left its old one"
    );
    // Every property as it was, but what OneNote changed by the move: the page's order in its
    // new section, its modified time and its link (OneNote's page link names its section).
    let mut want = props.clone();
    assert_ne!(want["OneNote link"], link);
    want.insert("OneNote link".into(), link);
    want.insert("Order".into(), page.order.to_string());
    want.insert(
        "Modified".into(),
        page.modified.to_rfc3339_opts(SecondsFormat::Millis, true),
    );
    assert_eq!(got, &want, "every property of the layout, set again");
    // The tags are options of the new data source's schema.
    let (_, options) = schema(&lab, &to);
    for t in got["Tags"].split(", ").filter(|t| !t.is_empty()) {
        assert!(options.iter().any(|o| o == t), "{t} in {options:?}");
    }

    second_sync_writes_nothing(&lab, &me, 0).await;
    let out = me.run(&["verify"]).await;
    expect(&out, 0, "verify after the move");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_section_moved_to_another_notebook_gets_a_database_there_with_its_rows() {
    let notes = notes();
    let (lab, user, home) = migrated_with(&notes, "database").await;
    let me = User {
        lab: &lab,
        home: home.path(),
    };
    let (nb1, nb2) = (&notes.notebooks[0].id, &notes.notebooks[1].id);
    let s = sections_of(&notes, nb1);
    let db = files_db(home.path());
    let (old_db, old_ds) = database_of(&db, &s[0]);
    let nb2_page = db
        .notion_item("default", nb2)
        .unwrap()
        .and_then(|i| i.into_page_id())
        .unwrap();
    drop(db);
    let before = rows(&lab, &old_ds);
    let old_schema = schema(&lab, &old_ds);
    let title = lab.notion.dump(&old_db).and_then(|d| d.title);

    lab.graph.mutate(&user.id, |n| {
        n.move_section("me", &s[0], nb2, None).unwrap()
    });
    // A dry run counts the database's move and writes nothing.
    let writes = lab.notion.counters().changing_writes();
    let out = me.run(&["sync", "--dry-run", "--json"]).await;
    expect(&out, 0, "sync --dry-run");
    assert_eq!(json(&out)["moved"], 1, "{}", out.stdout);
    assert_eq!(lab.notion.counters().changing_writes(), writes);

    let out = me.run(&["sync", "--json"]).await;
    expect(&out, 0, "a sync of a section moved to another notebook");
    let doc = json(&out);
    eprintln!("figures: sync of a moved section database: {doc}");
    assert_eq!(doc["moved"], 1, "the database, its rows with it: {doc}");
    assert_eq!(doc["unmovable"], 0, "{doc}");
    assert_eq!(doc["failed"], 0, "{doc}");

    let db = files_db(home.path());
    let (new_db, new_ds) = database_of(&db, &s[0]);
    drop(db);
    assert_ne!(norm(&new_db), norm(&old_db), "a new database");
    let parent = crate::sync_e2e::parent(&lab, &new_db);
    assert_eq!(
        parent,
        norm(&nb2_page),
        "in the notebook the section moved to"
    );
    assert_eq!(lab.notion.dump(&new_db).and_then(|d| d.title), title);
    assert_eq!(schema(&lab, &new_ds), old_schema, "the same schema");
    assert_eq!(
        rows(&lab, &new_ds),
        before,
        "every row, its id and properties kept"
    );
    assert!(
        lab.notion.is_trashed(&old_db),
        "the old database, emptied, is trashed"
    );

    second_sync_writes_nothing(&lab, &me, 0).await;
    let out = me.run(&["verify"]).await;
    expect(&out, 0, "verify after the move");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_row_a_person_edited_stays_in_the_old_database_which_stays() {
    let notes = notes();
    let (lab, user, home) = migrated_with(&notes, "database").await;
    let me = User {
        lab: &lab,
        home: home.path(),
    };
    let (nb1, nb2) = (&notes.notebooks[0].id, &notes.notebooks[1].id);
    let s = sections_of(&notes, nb1);
    let db = files_db(home.path());
    let (old_db, old_ds) = database_of(&db, &s[0]);
    drop(db);
    let before = rows(&lab, &old_ds);
    let raw = lab.notion.rows(&old_ds)[0].id.clone();
    let edited = norm(&raw);
    lab.notion.edit_block_as_person(
        &crate::update_conflicts::text_block(&lab, &raw),
        "A person's words",
    );

    lab.graph.mutate(&user.id, |n| {
        n.move_section("me", &s[0], nb2, None).unwrap()
    });
    let out = me.run(&["sync", "--json"]).await;
    expect(&out, 4, "a sync with a conflict");
    let doc = json(&out);
    eprintln!("figures: sync of a moved section with an edited row: {doc}");
    assert_eq!(doc["unmovable"], 1, "the old database stays: {doc}");
    let conflicts: Vec<String> = doc["conflicts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| norm(c["notion_page_id"].as_str().unwrap()))
        .collect();
    assert_eq!(conflicts, std::slice::from_ref(&edited), "{doc}");

    let db = files_db(home.path());
    let (_, new_ds) = database_of(&db, &s[0]);
    drop(db);
    // The person's row stays where and as it is, in the old database, which stays with it.
    assert!(!lab.notion.is_trashed(&old_db));
    let old_now = rows(&lab, &old_ds);
    assert_eq!(old_now.keys().collect::<Vec<_>>(), [&edited]);
    assert_eq!(old_now[&edited], before[&edited]);
    // Every other row moved, as it was.
    let moved = rows(&lab, &new_ds);
    let want: BTreeSet<&String> = before.keys().filter(|k| **k != edited).collect();
    assert_eq!(moved.keys().collect::<BTreeSet<_>>(), want);
    for (id, p) in &moved {
        assert_eq!(p, &before[id], "row {id}");
    }

    second_sync_writes_nothing(&lab, &me, 4).await;
    let out = me.run(&["verify"]).await;
    expect(&out, 0, "verify with the person's row in the old database");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_row_a_person_added_keeps_the_old_database_until_it_is_gone() {
    let notes = notes();
    let (lab, user, home) = migrated_with(&notes, "database").await;
    let me = User {
        lab: &lab,
        home: home.path(),
    };
    let (nb1, nb2) = (&notes.notebooks[0].id, &notes.notebooks[1].id);
    let s = sections_of(&notes, nb1);
    let db = files_db(home.path());
    let (old_db, old_ds) = database_of(&db, &s[0]);
    drop(db);
    let before = rows(&lab, &old_ds);
    let theirs = lab.notion.add_row_as_person(&old_ds, "A person's own row");

    lab.graph.mutate(&user.id, |n| {
        n.move_section("me", &s[0], nb2, None).unwrap()
    });
    let out = me.run(&["sync", "--json"]).await;
    expect(
        &out,
        0,
        "a sync of a section whose database holds a person's row",
    );
    let doc = json(&out);
    assert_eq!(doc["moved"], 1, "{doc}");
    assert_eq!(doc["unmovable"], 1, "the old database stays: {doc}");
    assert!(
        doc["sync_problems"].to_string().contains(&old_db),
        "the run names it: {doc}"
    );
    // Every row of notebridge's moved; the person's stays, in the old database, which stays.
    let db = files_db(home.path());
    let (_, new_ds) = database_of(&db, &s[0]);
    drop(db);
    assert_eq!(rows(&lab, &new_ds), before);
    assert!(!lab.notion.is_trashed(&old_db));
    assert_eq!(
        rows(&lab, &old_ds).keys().collect::<Vec<_>>(),
        [&norm(&theirs)]
    );

    // Once the person took their row out of it, the next sync trashes the emptied database.
    lab.notion.trash_as_person(&theirs);
    let out = me.run(&["sync", "--json"]).await;
    expect(&out, 0, "a sync once the person's row is gone");
    let doc = json(&out);
    assert_eq!(doc["unmovable"], 0, "{doc}");
    assert!(lab.notion.is_trashed(&old_db), "{doc}");
    second_sync_writes_nothing(&lab, &me, 0).await;
    let out = me.run(&["verify"]).await;
    expect(&out, 0, "verify after the old database went");
}
