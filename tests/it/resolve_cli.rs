//! `notebridge resolve` as an account's user runs it (a clean environment: the client id and the
//! Notion token) between `sync` runs from cron: a conflict the person has dealt with stops the
//! exit 4, its page is still never written, and a later OneNote change to it opens it again with
//! its kept copy brought up to date. A page that is no open conflict is named, and nothing is
//! resolved. The Graph and Notion test servers model the services (`testkit`).

use chrono::Duration;
use notebridge_testkit::generator::{generate, NotebookSpec};
use serde_json::Value;

use crate::account_clean_env::User;
use crate::layout_e2e::files_db;
use crate::sync_e2e::{expect, json, migrated_with, norm};
use crate::update_conflicts::{body_text, kept, kept_copies, text_block};

/// The open conflicts' Notion pages in a run's or `resolve`'s document (`key`), compacted.
fn pages(doc: &Value, key: &str) -> Vec<String> {
    let mut out: Vec<String> = doc[key]
        .as_array()
        .unwrap_or_else(|| panic!("no {key}: {doc}"))
        .iter()
        .map(|c| norm(c["notion_page_id"].as_str().unwrap()))
        .collect();
    out.sort();
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resolved_conflict_ends_the_exit_4_its_page_stays_and_a_later_change_opens_it_again() {
    let notes = generate(&NotebookSpec {
        notebooks: 1,
        section_groups_depth: 0,
        sections_per_container: 1,
        pages_per_section: 0,
        total_pages: Some(4),
        subpage_ratio: 0.0,
        images_per_page: 0,
        seed: 51,
        ..NotebookSpec::default()
    });
    let (lab, user, home) = migrated_with(&notes, "pages").await;
    let me = User {
        lab: &lab,
        home: home.path(),
    };
    let to = lab.target_page.clone();
    let (a, c) = (&notes.pages[0], &notes.pages[1]);
    let db = files_db(home.path());
    let page = |id: &str| {
        db.notion_item("default", id)
            .unwrap()
            .and_then(|i| i.into_page_id())
            .unwrap()
    };
    let (pa, pc) = (page(&a.id), page(&c.id));
    drop(db);

    // A person edits A's text and retitles C in Notion; both change in OneNote.
    lab.notion
        .edit_block_as_person(&text_block(&lab, &pa), "Written in Notion by a person");
    lab.notion.retitle_as_person(&pc, "Renamed in Notion");
    let changed = a.modified + Duration::days(2);
    let change = |id: &str, t| {
        lab.graph.mutate(&user.id, |n| {
            let p = n.pages.iter_mut().find(|p| p.id == id).unwrap();
            p.modified = t;
            p.content_seed += 1;
        })
    };
    change(&a.id, changed);
    change(&c.id, changed);
    let out = me.run(&["sync", "--json"]).await;
    expect(&out, 4, "sync with two conflicts");
    let mut both = vec![norm(&pa), norm(&pc)];
    both.sort();
    assert_eq!(pages(&json(&out), "conflicts"), both);
    let text = me.ok(&["status"]).await;
    assert!(
        text.stdout.contains("notebridge resolve NOTION_PAGE"),
        "status says how to resolve: {}",
        text.stdout
    );

    // Not an id, or no open conflict's page: named, and nothing is resolved.
    let out = me.run(&["resolve", "meeting notes"]).await;
    expect(&out, 2, "resolve of what is no id");
    assert!(out.stderr.contains("meeting notes"), "{}", out.stderr);
    let stranger = "0123456789abcdef0123456789abcdef";
    let out = me.run(&["resolve", &pa, stranger]).await;
    expect(&out, 2, "resolve of a page that is no conflict");
    assert!(out.stderr.contains("01234567-89ab"), "{}", out.stderr);
    let status = json(&me.ok(&["status", "--json"]).await);
    assert_eq!(
        pages(&status["accounts"][0], "conflicts"),
        both,
        "nothing resolved"
    );

    // A resolved by its URL: C alone keeps the exit 4, and nothing is written.
    let url = format!("https://www.notion.so/Notes-{}", norm(&pa));
    let out = me.run(&["resolve", &url, "--json"]).await;
    expect(&out, 0, "resolve A");
    assert_eq!(pages(&json(&out), "resolved"), [norm(&pa)]);
    let status = json(&me.ok(&["status", "--json"]).await);
    assert_eq!(pages(&status["accounts"][0], "conflicts"), [norm(&pc)]);
    assert_eq!(status["accounts"][0]["conflicts_resolved"], 1, "{status}");
    let writes = lab.notion.counters().changing_writes();
    let out = me.run(&["sync", "--json"]).await;
    expect(&out, 4, "sync with C open");
    assert_eq!(pages(&json(&out), "conflicts"), [norm(&pc)]);

    // Every open one: sync is in step, exit 0, and has written nothing.
    let out = me.run(&["resolve", "--all"]).await;
    expect(&out, 0, "resolve --all");
    assert!(out.stdout.contains("Renamed in Notion") || out.stdout.contains(&pc));
    let out = me.run(&["sync", "--json"]).await;
    expect(&out, 0, "sync with every conflict resolved");
    assert_eq!(pages(&json(&out), "conflicts"), Vec::<String>::new());
    assert_eq!(lab.notion.counters().changing_writes(), writes);
    assert!(body_text(&lab, &pa).contains("Written in Notion by a person"));
    assert_eq!(
        lab.notion.dump(&pc).and_then(|d| d.title).as_deref(),
        Some("Renamed in Notion")
    );
    let out = me.run(&["resolve", "--all", "--json"]).await;
    expect(&out, 0, "resolve --all with none open");
    assert_eq!(pages(&json(&out), "resolved"), Vec::<String>::new());

    // OneNote changes A again: its kept copy follows, A's conflict is open again, A stays.
    let later = changed + Duration::days(1);
    change(&a.id, later);
    let out = me.run(&["sync", "--json"]).await;
    expect(&out, 4, "sync after A changed again in OneNote");
    assert_eq!(pages(&json(&out), "conflicts"), [norm(&pa)]);
    assert!(body_text(&lab, &pa).contains("Written in Notion by a person"));
    let copies = kept_copies(&lab, &to);
    assert!(
        copies.iter().any(|(_, t)| *t == kept(&a.title, later)),
        "{copies:?}"
    );
    let status = json(&me.ok(&["status", "--json"]).await);
    assert_eq!(pages(&status["accounts"][0], "conflicts"), [norm(&pa)]);
    assert_eq!(status["accounts"][0]["conflicts_resolved"], 1, "{status}");
}
