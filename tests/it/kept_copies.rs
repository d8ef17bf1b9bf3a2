//! A kept copy is a page like any other, as users run `sync` and `migrate --update` (clean
//! environments: an account's user with the client id and the Notion token, a files user with the
//! token alone), in both layouts. A page a person edited in Notion is a conflict and its OneNote
//! version is kept beside it; once a person writes in that kept copy too, a later OneNote change
//! never overwrites it: the newer OneNote version goes into another copy beside the page
//! (`<title> (OneNote version 2, <date>)`), the edited copy is listed as a conflict of its own
//! (`status`, the run's `--json`, `resolve`), and the run exits 4. A copy nobody edited is
//! brought up to date as before. The Graph and Notion test servers model the services
//! (`testkit`), and the files route reads real OneNote section files changed as OneNote leaves
//! them (`onefile_change`); nothing here is recorded from the real services.

use std::path::Path;

use chrono::{DateTime, Duration, TimeZone, Utc};
use notebridge_testkit::generator::{generate, NotebookSpec};
use notebridge_testkit::lab::Lab;
use serde_json::Value;

use crate::account_clean_env::User;
use crate::files_support::sample;
use crate::layout_e2e::{fast, files_db, files_user};
use crate::onefile_change::{copy_notebook, rewrite_text, touch_page, write_section};
use crate::sync_e2e::{expect, json, migrated_with, norm};
use crate::update_conflicts::{kept, kept_copies, text_block};

/// What the person writes in their page, and in the kept copy.
const IN_PAGE: &str = "Written in Notion by a person";
const IN_COPY: &str = "Taken up in the kept copy by a person";

/// Whether `text` is anywhere in the content tree of page `id` (its child pages included).
fn holds(lab: &Lab, id: &str, text: &str) -> bool {
    lab.notion
        .dump(id)
        .map(|d| serde_json::to_string(&d).unwrap())
        .is_some_and(|d| d.contains(text))
}

/// The title of the `n`th OneNote version kept beside `title`'s page, of the version of `t`.
fn kept_n(title: &str, n: u32, t: DateTime<Utc>) -> String {
    match n {
        1 => kept(title, t),
        n => format!("{title} (OneNote version {n}, {})", t.format("%Y-%m-%d")),
    }
}

/// The open conflicts of a run's or `status`'s document, as (person's page, kept copy's page):
/// a run names the copy `kept_as` (the contract's field), `status` `kept_page_id`.
fn conflicts(doc: &Value) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = doc["conflicts"]
        .as_array()
        .unwrap_or_else(|| panic!("no conflicts: {doc}"))
        .iter()
        .map(|c| {
            (
                norm(c["notion_page_id"].as_str().unwrap()),
                norm(
                    c["kept_as"]
                        .as_str()
                        .or(c["kept_page_id"].as_str())
                        .unwrap_or_default(),
                ),
            )
        })
        .collect();
    out.sort();
    out
}

/// The Notion page of the kept copy titled `title` under the target.
fn copy_titled(lab: &Lab, to: &str, title: &str) -> String {
    let copies = kept_copies(lab, to);
    let found: Vec<&(String, String)> = copies.iter().filter(|(_, t)| t == title).collect();
    assert_eq!(found.len(), 1, "one copy titled {title:?}: {copies:?}");
    found[0].0.clone()
}

/// A conflict as [`conflicts`] lists it: the person's page and the kept copy's, compacted.
fn pair(page: &str, kept_as: &str) -> (String, String) {
    (norm(page), norm(kept_as))
}

fn sorted(mut v: Vec<(String, String)>) -> Vec<(String, String)> {
    v.sort();
    v
}

async fn an_edited_kept_copy_is_never_overwritten(layout: &str) {
    let notes = generate(&NotebookSpec {
        notebooks: 1,
        section_groups_depth: 0,
        sections_per_container: 1,
        pages_per_section: 0,
        total_pages: Some(3),
        subpage_ratio: 0.0,
        images_per_page: 0,
        seed: 54,
        ..NotebookSpec::default()
    });
    let (lab, user, home) = migrated_with(&notes, layout).await;
    let me = User {
        lab: &lab,
        home: home.path(),
    };
    let to = lab.target_page.clone();
    let a = &notes.pages[0];
    let db = files_db(home.path());
    let pa = db
        .notion_item("default", &a.id)
        .unwrap()
        .and_then(|i| i.into_page_id())
        .unwrap();
    drop(db);
    // Each OneNote version of A is told apart by its last lines: "Line 0 of page <label>", the
    // label its content's own (the generator's `content_seed % 1000`).
    let change = |t: DateTime<Utc>| -> String {
        let mut line = String::new();
        lab.graph.mutate(&user.id, |n| {
            let p = n.pages.iter_mut().find(|p| p.id == a.id).unwrap();
            p.modified = t;
            p.content_seed += 1;
            p.extra_paragraphs = 2;
            line = format!("Line 1 of page {}", p.content_seed % 1000);
        });
        line
    };

    // A person edits A, OneNote changes it: the conflict, its OneNote version kept beside it.
    lab.notion
        .edit_block_as_person(&text_block(&lab, &pa), IN_PAGE);
    let first = a.modified + Duration::days(2);
    let v1 = change(first);
    let out = me.run(&["sync", "--json"]).await;
    expect(&out, 4, "sync with A in conflict");
    let k1 = copy_titled(&lab, &to, &kept(&a.title, first));
    assert_eq!(conflicts(&json(&out)), [pair(&pa, &k1)]);
    assert!(holds(&lab, &k1, &v1));

    // The person takes the kept copy up and writes in it; OneNote changes A again.
    lab.notion
        .edit_block_as_person(&text_block(&lab, &k1), IN_COPY);
    let second = first + Duration::days(1);
    let v2 = change(second);
    let out = me.run(&["sync", "--json"]).await;
    expect(&out, 4, "sync with the kept copy edited");
    // The person's text stays in both their pages; the newest OneNote version is in a new copy
    // beside A (a child page of A, or a row of the same database), listed with both conflicts.
    assert!(holds(&lab, &pa, IN_PAGE));
    assert!(
        holds(&lab, &k1, IN_COPY),
        "the edited copy is left as it is"
    );
    assert!(holds(&lab, &k1, &v1) && !holds(&lab, &k1, &v2));
    let k2 = copy_titled(&lab, &to, &kept_n(&a.title, 2, second));
    assert!(holds(&lab, &k2, &v2), "the newest OneNote version is kept");
    assert!(!holds(&lab, &k2, IN_COPY));
    let beside = match layout {
        "pages" => crate::sync_e2e::parent(&lab, &k2) == norm(&pa),
        _ => crate::sync_e2e::parent(&lab, &k2) == crate::sync_e2e::parent(&lab, &pa),
    };
    assert!(beside, "the new copy is beside A ({layout})");
    let both = sorted(vec![pair(&pa, &k2), pair(&k1, &k2)]);
    let doc = json(&out);
    assert_eq!(conflicts(&doc), both, "{doc}");
    assert_eq!(kept_copies(&lab, &to).len(), 2);
    let status = json(&me.ok(&["status", "--json"]).await);
    assert_eq!(conflicts(&status["accounts"][0]), both, "{status}");
    let text = me.ok(&["status"]).await;
    assert!(
        text.stdout.contains(&kept(&a.title, first)),
        "status names the edited copy: {}",
        text.stdout
    );
    // `verify` counts every planned page once: neither copy is a duplicate or foreign.
    let verify = json(&me.ok(&["--json", "verify"]).await);
    let totals = &verify["accounts"][0]["totals"];
    assert_eq!(
        (&totals["duplicates"], &totals["foreign"], &totals["ok"]),
        (
            &Value::from(0),
            &Value::from(0),
            &Value::from(notes.pages.len())
        ),
        "{verify}"
    );

    // Nothing changed since: no third copy, nothing written, the conflicts stand.
    let writes = lab.notion.counters().changing_writes();
    let out = me.run(&["sync", "--json"]).await;
    expect(&out, 4, "a second sync");
    assert_eq!(lab.notion.counters().changing_writes(), writes);
    assert_eq!(conflicts(&json(&out)), both);

    // OneNote changes A again, `migrate --update`: the copy nobody edited follows OneNote.
    let third = second + Duration::days(1);
    let v3 = change(third);
    let out = me.run(&["migrate", "--to", &to, "--update"]).await;
    expect(&out, 4, "migrate --update with the conflicts");
    assert_eq!(
        norm(&copy_titled(&lab, &to, &kept_n(&a.title, 2, third))),
        norm(&k2),
        "the unedited copy is brought up to date in place"
    );
    assert!(holds(&lab, &k2, &v3));
    assert!(holds(&lab, &k1, IN_COPY) && holds(&lab, &pa, IN_PAGE));
    assert_eq!(kept_copies(&lab, &to).len(), 2);

    // That copy edited too, OneNote again, `migrate --update`: a third copy, nothing lost.
    lab.notion
        .edit_block_as_person(&text_block(&lab, &k2), "And in the second copy");
    let fourth = third + Duration::days(1);
    let v4 = change(fourth);
    let out = me
        .run(&["--json", "migrate", "--to", &to, "--update"])
        .await;
    expect(&out, 4, "migrate --update with the second copy edited");
    let k3 = copy_titled(&lab, &to, &kept_n(&a.title, 3, fourth));
    assert!(holds(&lab, &k3, &v4));
    assert!(holds(&lab, &k2, "And in the second copy") && holds(&lab, &k2, &v3));
    assert!(holds(&lab, &k1, IN_COPY) && holds(&lab, &pa, IN_PAGE));
    let all = sorted(vec![pair(&pa, &k3), pair(&k1, &k2), pair(&k2, &k3)]);
    assert_eq!(conflicts(&json(&out)), all);

    // `resolve` takes an edited copy's page as any conflict's: that one alone is resolved.
    let out = me.run(&["resolve", &k1, "--json"]).await;
    expect(&out, 0, "resolve the first copy");
    let status = json(&me.ok(&["status", "--json"]).await);
    assert_eq!(
        conflicts(&status["accounts"][0]),
        sorted(vec![pair(&pa, &k3), pair(&k2, &k3)])
    );
    assert_eq!(status["accounts"][0]["conflicts_resolved"], 1, "{status}");
    expect(&me.run(&["resolve", "--all"]).await, 0, "resolve --all");
    let writes = lab.notion.counters().changing_writes();
    let out = me.run(&["sync", "--json"]).await;
    expect(&out, 0, "every conflict resolved, nothing changed");
    assert_eq!(lab.notion.counters().changing_writes(), writes);
    assert!(holds(&lab, &k1, IN_COPY) && holds(&lab, &pa, IN_PAGE));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_accounts_edited_kept_copy_is_never_overwritten_in_pages() {
    an_edited_kept_copy_is_never_overwritten("pages").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_accounts_edited_kept_copy_is_never_overwritten_in_databases() {
    an_edited_kept_copy_is_never_overwritten("database").await;
}

/// testOneNote1.one's first page, and words of it the test rewrites (a paragraph of its own,
/// after the one a person edits in layout `pages`, the date line).
const FIRST: &str = "b8f3669b-f533-417a-a700-c2cbbcc760e3";
const WORDS: &str = "Take notes anywhere on the page";

/// Changes the words `old` of the page in the section file `at` to `new`, edited at `t`.
fn edit_in_onenote(at: &Path, old: &str, new: &str, t: DateTime<Utc>) {
    let bytes = std::fs::read(at).unwrap();
    let bytes = touch_page(&rewrite_text(&bytes, FIRST, old, new), FIRST, t);
    write_section(at, &bytes);
}

async fn a_files_users_edited_kept_copy_is_never_overwritten(layout: &str) {
    let Some(one) = sample("apache-tika/testOneNote1.one") else {
        return;
    };
    let src = tempfile::tempdir().unwrap();
    let folder = src.path().join("Notebook");
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::copy(one, folder.join("First.one")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let nb = copy_notebook(&folder, dir.path());
    let path = nb.to_str().unwrap();
    let at = nb.join("First.one");
    let lab = Lab::start(fast()).await;
    let home = tempfile::tempdir().unwrap();
    let to = lab.notion.add_shared_page("Imported");
    let run = |args: Vec<&str>| files_user(&lab, home.path(), &args).run();
    let args = vec!["migrate", "--from", path, "--to", &to, "--layout", layout];
    expect(&run(args).await, 0, "the first migration");
    let db = files_db(home.path());
    let key = db.file_imports().unwrap()[0].key.clone();
    let item = db.notion_item(&key, FIRST).unwrap().unwrap();
    let title = item.title.clone();
    let page = item.into_page_id().unwrap();
    drop(db);

    lab.notion
        .edit_block_as_person(&text_block(&lab, &page), IN_PAGE);
    let first = Utc.with_ymd_and_hms(2026, 11, 30, 12, 0, 0).unwrap();
    edit_in_onenote(&at, WORDS, "Second words of OneNote", first);
    let out = run(vec!["sync", "--from", path, "--json"]).await;
    expect(&out, 4, "sync with the page in conflict");
    let k1 = copy_titled(&lab, &to, &kept(&title, first));
    assert!(holds(&lab, &k1, "Second words of OneNote"));

    lab.notion
        .edit_block_as_person(&text_block(&lab, &k1), IN_COPY);
    let second = first + Duration::days(1);
    edit_in_onenote(
        &at,
        "Second words of OneNote",
        "Third words of OneNote",
        second,
    );
    let out = run(vec!["sync", "--from", path, "--json"]).await;
    expect(&out, 4, "sync with the kept copy edited");
    assert!(holds(&lab, &page, IN_PAGE));
    assert!(holds(&lab, &k1, IN_COPY) && !holds(&lab, &k1, "Third words of OneNote"));
    let k2 = copy_titled(&lab, &to, &kept_n(&title, 2, second));
    assert!(holds(&lab, &k2, "Third words of OneNote") && !holds(&lab, &k2, IN_COPY));
    assert_eq!(
        conflicts(&json(&out)),
        sorted(vec![pair(&page, &k2), pair(&k1, &k2)])
    );

    // `migrate --update` after the next change: the copy nobody edited follows OneNote.
    let third = second + Duration::days(1);
    edit_in_onenote(
        &at,
        "Third words of OneNote",
        "Fourth words of OneNote",
        third,
    );
    let out = run(vec!["migrate", "--from", path, "--to", &to, "--update"]).await;
    expect(&out, 4, "migrate --update with the conflicts");
    assert_eq!(
        norm(&copy_titled(&lab, &to, &kept_n(&title, 2, third))),
        norm(&k2)
    );
    assert!(holds(&lab, &k2, "Fourth words of OneNote"));
    assert!(holds(&lab, &k1, IN_COPY) && holds(&lab, &page, IN_PAGE));
    assert_eq!(kept_copies(&lab, &to).len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_files_users_edited_kept_copy_is_never_overwritten_in_pages() {
    a_files_users_edited_kept_copy_is_never_overwritten("pages").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_files_users_edited_kept_copy_is_never_overwritten_in_databases() {
    a_files_users_edited_kept_copy_is_never_overwritten("database").await;
}
