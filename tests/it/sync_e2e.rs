//! `notebridge sync` as an account's user runs it (a clean environment: the client id and the
//! Notion token), in both layouts: after a first migration, every kind of change a OneNote user
//! makes (a page created, edited, renamed, moved within its section, to another section and to
//! another notebook, made a subpage, reordered, deleted; a section renamed and deleted) is
//! mirrored in Notion in one run, keeping each Notion page's id; a second `sync` right after
//! writes nothing; and a page edited in Notion while OneNote moved or deleted it is left where
//! and as it is, a conflict (exit 4). The Graph and Notion test servers model the services
//! (`testkit`): nothing here is recorded from the real ones.

use std::collections::HashMap;

use notebridge::store::Db;
use notebridge_testkit::generator::{generate, NotebookSpec};
use notebridge_testkit::graph::model::{Page, UserNotes};
use notebridge_testkit::lab::Lab;
use notebridge_testkit::TestUser;
use serde_json::Value;

use crate::account_clean_env::User;
use crate::bin_support::Output;
use crate::layout_e2e::{fast, files_db};
use crate::update_conflicts::text_block;

pub(crate) fn json(out: &Output) -> Value {
    let last = out.stdout.lines().last().unwrap_or_default();
    serde_json::from_str(last.trim())
        .unwrap_or_else(|e| panic!("{e}\nstdout: {}\nstderr: {}", out.stdout, out.stderr))
}

pub(crate) fn expect(out: &Output, code: i32, what: &str) {
    assert_eq!(
        out.code,
        Some(code),
        "{what}\nstdout: {}\nstderr: {}",
        out.stdout,
        out.stderr
    );
}

fn page_of(db: &Db, item: &str) -> String {
    db.notion_item("default", item)
        .unwrap()
        .and_then(|i| i.into_page_id())
        .unwrap_or_else(|| panic!("{item} has no Notion page"))
}

pub(crate) fn norm(id: &str) -> String {
    id.replace('-', "").to_ascii_lowercase()
}

/// The id a page object's parent names, whatever kind it is.
pub(crate) fn parent(lab: &Lab, page: &str) -> String {
    let p = lab.notion.parent_of(page).expect("a parent");
    let ty = p["type"].as_str().unwrap_or_default().to_owned();
    norm(p[ty.as_str()].as_str().unwrap_or_default())
}

/// Two notebooks of two sections each, four pages a section, no subpages.
fn notes() -> UserNotes {
    generate(&NotebookSpec {
        notebooks: 2,
        section_groups_depth: 0,
        sections_per_container: 2,
        pages_per_section: 4,
        total_pages: None,
        subpage_ratio: 0.0,
        images_per_page: 0,
        seed: 71,
        ..NotebookSpec::default()
    })
}

/// The pages of section `s`, in OneNote's order.
fn pages_in(n: &UserNotes, s: &str) -> Vec<Page> {
    let mut p: Vec<Page> = n
        .pages
        .iter()
        .filter(|p| p.section_id == s)
        .cloned()
        .collect();
    p.sort_by_key(|p| p.order);
    p
}

/// The sections of notebook `nb`, in order.
fn sections_of(n: &UserNotes, nb: &str) -> Vec<String> {
    n.sections
        .iter()
        .filter(|s| s.notebook_id == nb)
        .map(|s| s.id.clone())
        .collect()
}

/// The lab with `notes()` signed in as "me" and migrated in `layout`; the user's home.
async fn migrated(layout: &str) -> (Lab, TestUser, UserNotes, tempfile::TempDir) {
    let notes = notes();
    let (lab, user, home) = migrated_with(&notes, layout).await;
    (lab, user, notes, home)
}

/// A lab where the account `me`, holding `notes`, signed in and migrated them under the target
/// in `layout`; its home.
pub(crate) async fn migrated_with(
    notes: &UserNotes,
    layout: &str,
) -> (Lab, TestUser, tempfile::TempDir) {
    let lab = Lab::start(fast()).await;
    let user = lab.add_user("me", notes.clone());
    let home = tempfile::tempdir().unwrap();
    let me = User {
        lab: &lab,
        home: home.path(),
    };
    me.ok(&["login"]).await;
    me.ok(&["migrate", "--to", &lab.target_page, "--layout", layout])
        .await;
    (lab, user, home)
}

async fn every_change_kind_is_mirrored_and_a_second_sync_writes_nothing(layout: &str) {
    let (lab, user, notes, home) = migrated(layout).await;
    let me = User {
        lab: &lab,
        home: home.path(),
    };

    // Right after the migration, nothing to do: sync reads and writes nothing to Notion, not even
    // the update that changes nothing which proves Update content (counted by the server).
    let writes = lab.notion.counters().writes();
    let out = me.run(&["sync", "--json"]).await;
    expect(&out, 0, "a sync with nothing changed");
    let doc = json(&out);
    for k in [
        "created",
        "updated",
        "renamed",
        "moved",
        "trashed",
        "kept_deleted",
    ] {
        assert_eq!(doc[k], 0, "{k} in {doc}");
    }
    assert_eq!(
        lab.notion.counters().writes(),
        writes,
        "no write request: {doc}"
    );

    let nbs: Vec<String> = notes.notebooks.iter().map(|n| n.id.clone()).collect();
    let (a1, a2) = {
        let s = sections_of(&notes, &nbs[0]);
        (s[0].clone(), s[1].clone())
    };
    let (b1, b2) = {
        let s = sections_of(&notes, &nbs[1]);
        (s[0].clone(), s[1].clone())
    };
    let (pa1, pa2, pb1) = (
        pages_in(&notes, &a1),
        pages_in(&notes, &a2),
        pages_in(&notes, &b1),
    );
    let renamed = &pa1[0];
    let to_other_section = &pa1[1];
    let deleted = &pa1[2];
    let made_subpage = &pa1[3];
    let to_other_notebook = &pa2[0];
    let reordered = &pa2[3];
    let edited = &pb1[0];
    let gone_section_pages = pages_in(&notes, &b2).len();
    let db = files_db(home.path());
    let before: HashMap<String, String> = notes
        .pages
        .iter()
        .map(|p| (p.id.clone(), page_of(&db, &p.id)))
        .collect();
    drop(db);
    lab.graph.mutate(&user.id, |n| {
        n.rename_page("me", &renamed.id, "Renamed in OneNote")
            .unwrap();
        n.rename_section("me", &a2, "Second section (renamed)")
            .unwrap();
        n.move_page("me", &to_other_section.id, &a2).unwrap();
        n.move_page("me", &to_other_notebook.id, &b1).unwrap();
        n.delete_page("me", &deleted.id).unwrap();
        n.set_page_level("me", &made_subpage.id, 1).unwrap();
        n.reorder_page("me", &reordered.id, 0).unwrap();
        n.edit_page_content("me", &edited.id).unwrap();
        n.delete_section("me", &b2).unwrap();
        // The first section goes to the other notebook, its pages with it.
        n.move_section("me", &a1, &nbs[1], None).unwrap();
    });
    lab.graph.add_pages(&user.id, &a1, 1, 99).unwrap();

    let out = me.run(&["sync", "--json"]).await;
    expect(&out, 0, "a sync of every change kind");
    let doc = json(&out);
    eprintln!("figures: sync {layout}: {doc}");
    assert_eq!(doc["created"], 1, "{doc}");
    // The edited page, and the pages OneNote stamped as modified when it renamed or moved them
    // (their bodies are written again in place, retitled on the way).
    assert!(doc["updated"].as_u64() >= Some(1), "{doc}");
    assert!(doc["renamed"].as_u64() >= Some(1), "the section: {doc}");
    // Three pages and the section (in layout database a new database where the section went,
    // its rows moved into it).
    assert_eq!(doc["moved"], 4, "{doc}");
    assert_eq!(doc["unmovable"], 0, "{doc}");
    assert_eq!(doc["trashed"], 1 + 1 + gone_section_pages, "{doc}");
    assert_eq!(doc["kept_deleted"], 0, "{doc}");
    assert_eq!(doc["failed"], 0, "{doc}");
    assert_eq!(doc["conflicts"].as_array().map(Vec::len), Some(0), "{doc}");

    let db = files_db(home.path());
    // Every page kept its Notion id.
    for p in notes.pages.iter().filter(|p| p.section_id != b2) {
        assert_eq!(
            page_of(&db, &p.id),
            before[&p.id],
            "{} kept its page",
            p.title
        );
    }
    let title = |id: &str| {
        lab.notion
            .dump(id)
            .and_then(|d| d.title)
            .unwrap_or_default()
    };
    assert_eq!(title(&before[&renamed.id]), "Renamed in OneNote");
    // Where each moved page is now: its section's page, or its data source.
    let home_of = |section: &str| match db.section_database("default", section).unwrap() {
        Some(d) => norm(&d.created.expect("created").1),
        None => norm(&page_of(&db, section)),
    };
    assert_eq!(parent(&lab, &before[&to_other_section.id]), home_of(&a2));
    assert_eq!(parent(&lab, &before[&to_other_notebook.id]), home_of(&b1));
    assert_eq!(
        parent(&lab, &before[&made_subpage.id]),
        norm(&before[&renamed.id]),
        "made a subpage of the page before it that stayed (the others moved or went)"
    );
    assert!(lab.notion.is_trashed(&before[&deleted.id]));
    let nb2 = norm(&page_of(&db, &nbs[1]));
    match db.section_database("default", &a1).unwrap() {
        Some(d) => assert_eq!(parent(&lab, &d.created.unwrap().0), nb2),
        None => assert_eq!(parent(&lab, &page_of(&db, &a1)), nb2),
    }
    match db.section_database("default", &b2).unwrap() {
        Some(d) => assert!(lab.notion.is_trashed(&d.created.unwrap().0)),
        None => assert!(lab.notion.is_trashed(&page_of(&db, &b2))),
    }
    // The section's new title, and its pages in OneNote's order.
    let now = lab.graph.notes(&user.id);
    let want: Vec<String> = pages_in(&now, &a2)
        .into_iter()
        .filter(|p| p.level == 0)
        .map(|p| p.title)
        .collect();
    match db.section_database("default", &a2).unwrap() {
        Some(d) => {
            let (database, source) = d.created.unwrap();
            assert_eq!(title(&database), "Second section (renamed)");
            let mut rows = lab.notion.rows(&source);
            rows.sort_by_key(|r| r.properties["Order"].parse::<i64>().unwrap_or(i64::MAX));
            let got: Vec<String> = rows.into_iter().map(|r| r.title).collect();
            assert_eq!(got, want, "rows by their Order");
        }
        None => {
            let section = page_of(&db, &a2);
            assert_eq!(title(&section), "Second section (renamed)");
            assert_eq!(lab.notion.children_titles(&section), want, "pages in order");
        }
    }
    drop(db);

    // Right after: nothing left to do, no write request sent.
    let writes = lab.notion.counters().writes();
    let out = me.run(&["sync", "--json"]).await;
    expect(&out, 0, "a second sync");
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
    assert_eq!(lab.notion.counters().writes(), writes, "{doc}");
    // And the migration is proved complete as OneNote now holds it.
    let out = me.run(&["verify"]).await;
    expect(&out, 0, "verify after sync");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_account_users_sync_mirrors_every_change_in_layout_pages() {
    every_change_kind_is_mirrored_and_a_second_sync_writes_nothing("pages").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_account_users_sync_mirrors_every_change_in_layout_database() {
    every_change_kind_is_mirrored_and_a_second_sync_writes_nothing("database").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_a_person_edited_in_notion_is_never_moved_retitled_or_trashed() {
    let (lab, user, notes, home) = migrated("pages").await;
    let me = User {
        lab: &lab,
        home: home.path(),
    };
    let nbs: Vec<String> = notes.notebooks.iter().map(|n| n.id.clone()).collect();
    let a = sections_of(&notes, &nbs[0]);
    let b = sections_of(&notes, &nbs[1]);
    let pa = pages_in(&notes, &a[0]);
    let (moved, deleted, untouched_move) = (&pa[0], &pa[1], &pa[2]);
    let db = files_db(home.path());
    let page = |item: &str| page_of(&db, item);
    let (p_moved, p_deleted, p_other) =
        (page(&moved.id), page(&deleted.id), page(&untouched_move.id));
    let (p_a1, p_a2) = (page(&a[0]), page(&a[1]));
    let (p_nb2, p_b1, p_b2) = (page(&nbs[1]), page(&b[0]), page(&b[1]));
    let b2_pages: Vec<String> = pages_in(&notes, &b[1])
        .iter()
        .map(|p| page(&p.id))
        .collect();
    drop(db);

    // In Notion: two pages edited, a section retitled, a page of a person's own added under a
    // section of the notebook OneNote is about to delete.
    lab.notion
        .edit_block_as_person(&text_block(&lab, &p_moved), "A person's words");
    lab.notion
        .edit_block_as_person(&text_block(&lab, &p_deleted), "A person's words");
    lab.notion.retitle_as_person(&p_a2, "Named in Notion");
    let own = lab
        .notion
        .add_child_page_as_person(&p_b1, "A person's own page");
    // In OneNote: the edited pages moved and deleted, the section renamed, another page moved,
    // the second notebook deleted.
    lab.graph.mutate(&user.id, |n| {
        n.move_page("me", &moved.id, &a[1]).unwrap();
        n.delete_page("me", &deleted.id).unwrap();
        n.rename_section("me", &a[1], "Renamed in OneNote").unwrap();
        n.move_page("me", &untouched_move.id, &a[1]).unwrap();
        n.delete_notebook("me", &nbs[1]).unwrap();
    });

    // A dry run says what would change and writes nothing.
    let writes = lab.notion.counters().changing_writes();
    let out = me.run(&["sync", "--dry-run", "--json"]).await;
    expect(&out, 0, "sync --dry-run");
    let doc = json(&out);
    assert_eq!(doc["dry_run"], true, "{doc}");
    assert!(doc["moved"].as_u64() >= Some(2), "{doc}");
    assert!(doc["trashed"].as_u64() >= Some(1), "{doc}");
    assert_eq!(lab.notion.counters().changing_writes(), writes, "{doc}");

    // `--deletions keep`: deleted items are reported and left.
    let out = me.run(&["sync", "--deletions", "keep", "--json"]).await;
    expect(&out, 4, "sync --deletions keep (with conflicts)");
    let doc = json(&out);
    assert_eq!(doc["trashed"], 0, "{doc}");
    assert!(doc["kept_deleted"].as_u64() >= Some(1), "{doc}");
    assert!(!lab.notion.is_trashed(&p_nb2));
    assert!(!lab.notion.is_trashed(&p_b2));

    let out = me.run(&["sync", "--json"]).await;
    expect(&out, 4, "sync with conflicts");
    let doc = json(&out);
    eprintln!("figures: sync with conflicts: {doc}");
    let conflicts: Vec<(String, String)> = doc["conflicts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                norm(c["notion_page_id"].as_str().unwrap()),
                c["change"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    for (p, change) in [(&p_deleted, "deleted"), (&p_a2, "renamed")] {
        assert!(
            conflicts.contains(&(norm(p), change.to_owned())),
            "{p} {change} in {conflicts:?}"
        );
    }
    // OneNote stamps a moved page as modified: its content is a change too, so its OneNote
    // version is kept beside it (a move alone is a conflict `moved`, with nothing to keep).
    assert!(
        conflicts
            .iter()
            .any(|(p, c)| *p == norm(&p_moved) && (c == "changed" || c == "moved")),
        "{conflicts:?}"
    );
    // The person's pages stay where and as they are.
    assert_eq!(parent(&lab, &p_moved), norm(&p_a1));
    assert!(!lab.notion.is_trashed(&p_deleted));
    assert_eq!(
        lab.notion.dump(&p_a2).and_then(|d| d.title).as_deref(),
        Some("Named in Notion")
    );
    // What nobody edited follows OneNote.
    assert_eq!(parent(&lab, &p_other), norm(&p_a2));
    // The deleted notebook: the section holding a person's page stays (with that page and the
    // notebook page above it); the other section goes, with its pages.
    assert!(!lab.notion.is_trashed(&own));
    assert!(!lab.notion.is_trashed(&p_b1));
    assert!(!lab.notion.is_trashed(&p_nb2));
    assert!(lab.notion.is_trashed(&p_b2));
    for p in &b2_pages {
        assert!(lab.notion.is_trashed(p), "{p} went with its section");
    }
    // `status` and `report` list the conflicts, with what OneNote did.
    let out = me.run(&["status", "--json"]).await;
    let status = json(&out);
    assert!(status.to_string().contains(&p_moved), "{status}");
    let html = home.path().join("report.html");
    me.ok(&["report", "--output", html.to_str().unwrap()]).await;
    let html = std::fs::read_to_string(&html).unwrap();
    assert!(
        html.contains(&format!("<td>{p_deleted}</td><td>deleted</td>")),
        "the report names the deleted page's conflict"
    );

    // A second sync right after writes nothing, and says the same.
    let writes = lab.notion.counters().changing_writes();
    let out = me.run(&["sync", "--json"]).await;
    expect(&out, 4, "a second sync with the conflicts");
    assert_eq!(
        lab.notion.counters().changing_writes(),
        writes,
        "{}",
        out.stdout
    );
}
