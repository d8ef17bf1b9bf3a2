//! `notebridge sync` as an account's user runs it (a clean environment: the client id and the
//! Notion token), with the Graph test server numbering pages as the real service does: a page
//! moved to another section comes back under a new id (its new section's id in it), 404 under the
//! old one, keeping only its `onenote:` link GUID and created time (the field switch
//! `renumber_moved_pages`). A moved page stays the same Notion page, moved there; one a person
//! edited in Notion is a conflict and stays; two pages no GUID and nothing else tells apart are a
//! deletion and a creation, named as such. The Graph and Notion test servers model the services
//! (`testkit`): nothing here is recorded from the real ones.

use std::collections::HashMap;

use notebridge::store::Db;
use notebridge_testkit::generator::{generate, NotebookSpec};
use notebridge_testkit::graph::faults::Field;
use notebridge_testkit::graph::model::{Page, UserNotes};
use notebridge_testkit::lab::Lab;

use crate::account_clean_env::User;
use crate::layout_e2e::files_db;
use crate::sync_e2e::{expect, json, migrated_with, norm, parent};
use crate::update_conflicts::{body_text, text_block};

/// Two notebooks of two sections each, four pages a section; in each section of the first
/// notebook the third page is a subpage of the second.
fn notes() -> UserNotes {
    let mut n = generate(&NotebookSpec {
        notebooks: 2,
        section_groups_depth: 0,
        sections_per_container: 2,
        pages_per_section: 4,
        total_pages: None,
        subpage_ratio: 0.0,
        images_per_page: 0,
        seed: 73,
        ..NotebookSpec::default()
    });
    let first = n.notebooks[0].id.clone();
    let sections: Vec<String> = sections_of(&n, &first);
    for s in sections {
        let third = pages_in(&n, &s)[2].id.clone();
        n.pages.iter_mut().find(|p| p.id == third).unwrap().level = 1;
    }
    n
}

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

fn sections_of(n: &UserNotes, nb: &str) -> Vec<String> {
    n.sections
        .iter()
        .filter(|s| s.notebook_id == nb)
        .map(|s| s.id.clone())
        .collect()
}

fn page_of(db: &Db, item: &str) -> Option<String> {
    db.notion_item("default", item)
        .unwrap()
        .and_then(|i| i.into_page_id())
}

/// The page `p` is now (by its created time and title: the server keeps both through a move).
fn now_of(lab: &Lab, user: &str, p: &Page) -> Page {
    lab.graph
        .notes(user)
        .pages
        .into_iter()
        .find(|n| n.created == p.created && n.title == p.title)
        .unwrap_or_else(|| panic!("{} is still there", p.title))
}

/// Where a page of section `s` goes in Notion: the section's page, or its data source.
fn home_of(db: &Db, s: &str) -> String {
    match db.section_database("default", s).unwrap() {
        Some(d) => norm(&d.created.expect("created").1),
        None => norm(&page_of(db, s).expect("the section's page")),
    }
}

async fn moved_pages_keep_their_notion_pages(layout: &str) {
    let notes = notes();
    let (lab, user, home) = migrated_with(&notes, layout).await;
    lab.graph.faults().field(Field {
        renumber_moved_pages: true,
        ..Field::default()
    });
    let me = User {
        lab: &lab,
        home: home.path(),
    };
    let nbs: Vec<String> = notes.notebooks.iter().map(|n| n.id.clone()).collect();
    let a = sections_of(&notes, &nbs[0]);
    let b = sections_of(&notes, &nbs[1]);
    let (pa0, pa1) = (pages_in(&notes, &a[0]), pages_in(&notes, &a[1]));
    let to_other_section = &pa0[0];
    let (parent_page, subpage) = (&pa0[1], &pa0[2]);
    let moved_and_edited = &pa0[3];
    let to_other_notebook = &pa1[0];
    let edited_in_notion = &pa1[3];
    let db = files_db(home.path());
    let before: HashMap<String, String> = notes
        .pages
        .iter()
        .map(|p| (p.id.clone(), page_of(&db, &p.id).expect("migrated")))
        .collect();
    drop(db);
    let old_body = body_text(&lab, &before[&moved_and_edited.id]);
    lab.notion.edit_block_as_person(
        &text_block(&lab, &before[&edited_in_notion.id]),
        "A person's words",
    );
    lab.graph.mutate(&user.id, |n| {
        n.move_page("me", &to_other_section.id, &a[1]).unwrap();
        // A page with its subpage, as OneNote moves them: the subpage stays under it.
        n.move_page("me", &parent_page.id, &b[0]).unwrap();
        n.move_page("me", &subpage.id, &b[0]).unwrap();
        n.set_page_level("me", &subpage.id, 1).unwrap();
        n.move_page("me", &moved_and_edited.id, &a[1]).unwrap();
        n.edit_page_content("me", &moved_and_edited.id).unwrap();
        n.move_page("me", &to_other_notebook.id, &b[1]).unwrap();
        n.move_page("me", &edited_in_notion.id, &a[0]).unwrap();
    });
    let moved = [
        to_other_section,
        parent_page,
        subpage,
        moved_and_edited,
        to_other_notebook,
        edited_in_notion,
    ];
    let now: HashMap<String, Page> = moved
        .iter()
        .map(|p| (p.id.clone(), now_of(&lab, &user.id, p)))
        .collect();
    for p in moved {
        assert_ne!(now[&p.id].id, p.id, "the server gave {} a new id", p.title);
        assert!(
            now[&p.id]
                .id
                .ends_with(now[&p.id].section_id.split_once('-').map_or("", |(_, t)| t)),
            "its new section's id is in it"
        );
    }

    // A dry run counts each as moved (by its GUID), none created or trashed, and writes nothing.
    let writes = lab.notion.counters().changing_writes();
    let out = me.run(&["sync", "--dry-run", "--json"]).await;
    expect(&out, 0, "sync --dry-run");
    let doc = json(&out);
    assert_eq!(doc["moved_by"]["guid"], 6, "{doc}");
    assert_eq!(doc["moved_by"]["created_and_title"], 0, "{doc}");
    assert_eq!(doc["created"], 0, "{doc}");
    assert_eq!(doc["trashed"], 0, "{doc}");
    assert!(doc["moved"].as_u64() >= Some(5), "{doc}");
    assert_eq!(lab.notion.counters().changing_writes(), writes, "{doc}");

    let out = me.run(&["sync", "--json"]).await;
    expect(
        &out,
        4,
        "a sync of moved pages, one of them edited in Notion",
    );
    let doc = json(&out);
    eprintln!("figures: sync of renumbered moves {layout}: {doc}");
    assert_eq!(doc["moved_by"]["guid"], 6, "{doc}");
    assert_eq!(doc["recreated"].as_array().map(Vec::len), Some(0), "{doc}");
    assert_eq!(doc["created"], 0, "{doc}");
    assert_eq!(doc["trashed"], 0, "{doc}");
    assert_eq!(doc["failed"], 0, "{doc}");

    let db = files_db(home.path());
    for p in moved {
        let new = &now[&p.id];
        assert_eq!(
            page_of(&db, &new.id).as_deref(),
            Some(before[&p.id].as_str()),
            "{} kept its Notion page",
            p.title
        );
        assert!(page_of(&db, &p.id).is_none(), "no record under the old id");
        assert!(!lab.notion.is_trashed(&before[&p.id]), "{}", p.title);
    }
    for p in [to_other_section, moved_and_edited] {
        assert_eq!(parent(&lab, &before[&p.id]), home_of(&db, &a[1]));
    }
    assert_eq!(
        parent(&lab, &before[&to_other_notebook.id]),
        home_of(&db, &b[1])
    );
    assert_eq!(parent(&lab, &before[&parent_page.id]), home_of(&db, &b[0]));
    assert_eq!(
        parent(&lab, &before[&subpage.id]),
        norm(&before[&parent_page.id]),
        "the subpage stays under its page"
    );
    // Moved and edited in one go: the same page, with OneNote's new content.
    assert_ne!(body_text(&lab, &before[&moved_and_edited.id]), old_body);
    // Edited in Notion: a conflict, left where it was with the person's words.
    assert_eq!(
        parent(&lab, &before[&edited_in_notion.id]),
        home_of(&db, &a[1])
    );
    assert!(body_text(&lab, &before[&edited_in_notion.id]).contains("A person's words"));
    let conflicts = doc["conflicts"].as_array().unwrap();
    assert!(
        conflicts
            .iter()
            .any(|c| norm(c["notion_page_id"].as_str().unwrap())
                == norm(&before[&edited_in_notion.id])),
        "{doc}"
    );
    drop(db);

    // Right after: nothing left to do, nothing written.
    let writes = lab.notion.counters().changing_writes();
    let out = me.run(&["sync", "--json"]).await;
    expect(&out, 4, "a second sync (the conflict stays open)");
    let doc = json(&out);
    for k in ["created", "updated", "moved", "trashed"] {
        assert_eq!(doc[k], 0, "{k} in {doc}");
    }
    assert_eq!(doc["moved_by"]["guid"], 0, "{doc}");
    assert_eq!(lab.notion.counters().changing_writes(), writes, "{doc}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn renumbered_moved_pages_keep_their_notion_pages_in_layout_pages() {
    moved_pages_keep_their_notion_pages("pages").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn renumbered_moved_pages_keep_their_notion_pages_in_layout_database() {
    moved_pages_keep_their_notion_pages("database").await;
}

/// Listings without `links` (the shape some accounts' listings fall back to) give no GUID: a
/// moved page is known by its created time and title when it alone has them; two pages of one
/// title and created time are not guessed at: each is trashed and created again, and the run,
/// `status` and `report` say so.
async fn without_guids_only_one_candidate_is_a_move(layout: &str) {
    let mut notes = notes();
    let nb = notes.notebooks[0].id.clone();
    let a = sections_of(&notes, &nb);
    let (pa0, pa1) = (pages_in(&notes, &a[0]), pages_in(&notes, &a[1]));
    let (twin1, twin2, single) = (pa0[0].id.clone(), pa1[0].id.clone(), pa0[3].id.clone());
    let created = pa0[0].created;
    for p in notes.pages.iter_mut() {
        if p.id == twin1 || p.id == twin2 {
            p.title = "Meeting notes".into();
            p.created = created;
        }
    }
    let lab = {
        let (lab, user, home) = {
            // The field behaviour is on from the first listing: nothing ever had a GUID.
            let lab = Lab::start(crate::layout_e2e::fast()).await;
            lab.graph.faults().field(Field {
                refuse_count_and_links: true,
                renumber_moved_pages: true,
                ..Field::default()
            });
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
        };
        let me = User {
            lab: &lab,
            home: home.path(),
        };
        let db = files_db(home.path());
        let p_twin1 = page_of(&db, &twin1).unwrap();
        let p_single = page_of(&db, &single).unwrap();
        drop(db);
        let single_page = notes.page(&single).unwrap().clone();
        lab.graph.mutate(&user.id, |n| {
            n.move_page("me", &twin1, &a[1]).unwrap();
            n.move_page("me", &twin2, &a[0]).unwrap();
            n.move_page("me", &single, &a[1]).unwrap();
        });
        let out = me.run(&["sync", "--json"]).await;
        expect(&out, 0, "a sync of moves without GUIDs");
        let doc = json(&out);
        eprintln!("figures: sync without GUIDs {layout}: {doc}");
        assert_eq!(doc["moved_by"]["guid"], 0, "{doc}");
        assert_eq!(doc["moved_by"]["created_and_title"], 1, "{doc}");
        assert_eq!(doc["created"], 2, "{doc}");
        assert_eq!(doc["trashed"], 2, "{doc}");
        let recreated = doc["recreated"].as_array().unwrap();
        assert_eq!(recreated.len(), 2, "{doc}");
        assert!(recreated.iter().all(|r| r["title"] == "Meeting notes"));
        let new_single = now_of(&lab, &user.id, &single_page);
        let db = files_db(home.path());
        assert_eq!(page_of(&db, &new_single.id), Some(p_single.clone()));
        assert_eq!(parent(&lab, &p_single), home_of(&db, &a[1]));
        assert!(lab.notion.is_trashed(&p_twin1), "not guessed at: trashed");
        drop(db);
        // `status` and `report` name the pages created again.
        let status = json(&me.run(&["status", "--json"]).await);
        assert!(status.to_string().contains(&p_twin1), "{status}");
        let html = home.path().join("report.html");
        me.ok(&["report", "--output", html.to_str().unwrap()]).await;
        let html = std::fs::read_to_string(&html).unwrap();
        assert!(
            html.contains(&p_twin1),
            "the report names the page created again"
        );
        lab
    };
    drop(lab);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_guids_only_one_candidate_is_a_move_in_layout_pages() {
    without_guids_only_one_candidate_is_a_move("pages").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_guids_only_one_candidate_is_a_move_in_layout_database() {
    without_guids_only_one_candidate_is_a_move("database").await;
}

/// Two notebook folders of real section files migrated in one run (`--from A --from B`); a
/// section file moved from one to the other keeps its section's and pages' Notion pages (its
/// pages' GUIDs are the files' own), moved under the other notebook, nothing trashed; and a page
/// moved to another section file of the same notebook keeps its page too.
async fn a_section_file_moved_between_notebooks_keeps_its_pages(layout: &str) {
    use crate::files_support::sample;
    use crate::layout_e2e::files_user;
    use crate::onefile_change::{move_page, move_section, write_section};
    let (Some(one), Some(two), Some(four)) = (
        sample("apache-tika/testOneNote1.one"),
        sample("apache-tika/testOneNote2.one"),
        sample("apache-tika/testOneNote4.one"),
    ) else {
        return;
    };
    // testOneNote1.one's second page.
    const ONE_BASICS: &str = "f5e8b626-8c4a-496b-8951-cea55052b874";
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("Alpha"), dir.path().join("Beta"));
    std::fs::create_dir_all(&a).unwrap();
    std::fs::create_dir_all(&b).unwrap();
    std::fs::copy(one, a.join("First.one")).unwrap();
    std::fs::copy(four, a.join("Second.one")).unwrap();
    std::fs::copy(two, b.join("Third.one")).unwrap();
    let lab = Lab::start(crate::layout_e2e::fast()).await;
    let home = tempfile::tempdir().unwrap();
    let to = lab.notion.add_shared_page("Imported");
    let (pa, pb) = (a.to_str().unwrap(), b.to_str().unwrap());
    let args = [
        "migrate", "--from", pa, "--from", pb, "--to", &to, "--layout", layout,
    ];
    expect(
        &files_user(&lab, home.path(), &args).run().await,
        0,
        "the first migration",
    );
    let db = files_db(home.path());
    let imports = db.file_imports().unwrap();
    let key_of = |p: &std::path::Path| {
        imports
            .iter()
            .find(|i| std::path::Path::new(&i.path).ends_with(p.file_name().unwrap()))
            .unwrap()
            .key
            .clone()
    };
    let (ka, kb) = (key_of(&a), key_of(&b));
    let page = |db: &Db, k: &str, item: &str| {
        db.notion_item(k, item)
            .unwrap()
            .and_then(|i| i.into_page_id())
            .unwrap_or_else(|| panic!("{item} has no page under {k}"))
    };
    // The second section (testOneNote4.one) and its first page.
    let (second, second_first) = {
        let nb = &db.inventory(&ka).unwrap()[0];
        let s = nb
            .sections
            .iter()
            .find(|s| !s.pages.iter().any(|p| p.id == ONE_BASICS))
            .unwrap();
        (s.id.clone(), s.pages[0].id.clone())
    };
    let p_second = db
        .section_database(&ka, &second)
        .unwrap()
        .is_none()
        .then(|| page(&db, &ka, &second));
    let (p_two_first, p_one_basics) = (page(&db, &ka, &second_first), page(&db, &ka, ONE_BASICS));
    drop(db);

    // The second section file goes to the other notebook's folder; a page of the first moves to
    // the third (its bytes as OneNote leaves both files).
    let moved = move_section(&a.join("Second.one"), &b);
    let (first_bytes, third_bytes) = (
        std::fs::read(a.join("First.one")).unwrap(),
        std::fs::read(b.join("Third.one")).unwrap(),
    );
    let (first_after, third_after) = move_page(&first_bytes, &third_bytes, ONE_BASICS);
    write_section(&a.join("First.one"), &first_after);
    write_section(&b.join("Third.one"), &third_after);
    assert!(moved.exists());

    let sync = ["sync", "--from", pa, "--from", pb, "--json"];
    let out = files_user(&lab, home.path(), &sync).run().await;
    expect(&out, 0, "a sync of a moved section file");
    let doc = json(&out);
    eprintln!("figures: files sync of moved sections {layout}: {doc}");
    // In layout database the section's database cannot move: a new one is made under Beta, its
    // rows moved into it, and the old one, empty, trashed.
    let databases = usize::from(layout == "database");
    assert_eq!(doc["trashed"], databases, "{doc}");
    assert_eq!(doc["created"], databases, "{doc}");
    assert_eq!(doc["moved_by"]["guid"], 2, "{doc}");
    assert_eq!(doc["failed"], 0, "{doc}");
    let db = files_db(home.path());
    assert_eq!(
        page(&db, &kb, &second_first),
        p_two_first,
        "the moved section's page kept"
    );
    if let Some(p_second) = &p_second {
        assert_eq!(&page(&db, &kb, &second), p_second, "the moved section kept");
        let nb = db.inventory(&kb).unwrap()[0].id.clone();
        assert_eq!(parent(&lab, p_second), norm(&page(&db, &kb, &nb)));
    }
    assert_eq!(
        page(&db, &kb, ONE_BASICS),
        p_one_basics,
        "the moved page kept"
    );
    for p in [&p_two_first, &p_one_basics] {
        assert!(!lab.notion.is_trashed(p), "{p}");
    }
    // Each under Beta's section now (its page, or its data source).
    let third = db.inventory(&kb).unwrap()[0]
        .sections
        .iter()
        .find(|s| s.pages.iter().any(|p| p.id == ONE_BASICS))
        .unwrap()
        .id
        .clone();
    let home_of = |s: &str| match db.section_database(&kb, s).unwrap() {
        Some(d) => norm(&d.created.expect("created").1),
        None => norm(&page(&db, &kb, s)),
    };
    assert_eq!(parent(&lab, &p_one_basics), home_of(&third));
    drop(db);

    // Right after: nothing written.
    let writes = lab.notion.counters().changing_writes();
    let out = files_user(&lab, home.path(), &sync).run().await;
    expect(&out, 0, "a second sync");
    let doc = json(&out);
    for k in ["created", "moved", "trashed"] {
        assert_eq!(doc[k], 0, "{k} in {doc}");
    }
    assert_eq!(lab.notion.counters().changing_writes(), writes, "{doc}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_section_file_moved_between_notebooks_keeps_its_pages_in_layout_pages() {
    a_section_file_moved_between_notebooks_keeps_its_pages("pages").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_section_file_moved_between_notebooks_keeps_its_pages_in_layout_database() {
    a_section_file_moved_between_notebooks_keeps_its_pages("database").await;
}
