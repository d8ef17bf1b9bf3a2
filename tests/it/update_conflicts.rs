//! `migrate --update` never writes over what a person wrote in Notion, as users run it (a clean
//! environment: an account's user with the client id and the Notion token, a files user with the
//! token alone), in both layouts. A page edited in Notion and in OneNote at once is a conflict:
//! left as the person left it, the OneNote version kept beside it (a child page in layout `pages`,
//! a row of the section's database in layout `database`), listed by the run's summary, `status`
//! and `report`, exit 4; a second run makes no second copy and writes nothing, and a later OneNote
//! change updates the kept copy, never the person's page. A page edited only in OneNote (one with
//! a subpage notebridge made after it, which moves the page's own edit time) is rewritten as
//! before. An edit in the same minute as notebridge's write (Notion shows the time rounded down to
//! the minute, so the time cannot tell) is caught as well.

use chrono::{DateTime, Duration, TimeZone, Utc};
use notebridge::store::Db;
use notebridge_testkit::generator::{generate, NotebookSpec};
use notebridge_testkit::lab::Lab;
use serde_json::Value;

use crate::account_clean_env::User;
use crate::bin_support::Output;
use crate::files_support::sample;
use crate::layout_e2e::{fast, files_db, files_user};

/// The minute notebridge's first migration is stamped in (mid-minute: Notion shows 09:00).
fn written_at() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 3, 2, 9, 0, 30).unwrap()
}

fn ms(t: DateTime<Utc>) -> Option<i64> {
    Some(t.timestamp_millis())
}

fn json(out: &str) -> Value {
    let last = out.lines().last().unwrap_or_default();
    serde_json::from_str(last.trim()).unwrap_or_else(|e| panic!("{e}: {out}"))
}

fn display(t: &str) -> &str {
    if t.trim().is_empty() {
        "Untitled"
    } else {
        t
    }
}

/// The title of the OneNote version kept beside `title`'s page, of the version modified at `t`.
pub(crate) fn kept(title: &str, t: DateTime<Utc>) -> String {
    format!(
        "{} (OneNote version, {})",
        display(title),
        t.format("%Y-%m-%d")
    )
}

/// The first block of `page` holding text, as Notion lists it.
pub(crate) fn text_block(lab: &Lab, page: &str) -> String {
    lab.notion
        .blocks_of(page)
        .into_iter()
        .find(|b| {
            let ty = b["type"].as_str().unwrap_or("");
            b[ty]["rich_text"].as_array().is_some_and(|r| !r.is_empty())
        })
        .and_then(|b| b["id"].as_str().map(str::to_owned))
        .unwrap_or_else(|| panic!("page {page} has no text block"))
}

/// Every text of `page`'s top-level blocks, joined.
pub(crate) fn body_text(lab: &Lab, page: &str) -> String {
    lab.notion
        .blocks_of(page)
        .iter()
        .map(|b| {
            let ty = b["type"].as_str().unwrap_or("");
            b[ty]["rich_text"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|r| r["plain_text"].as_str())
                .collect::<String>()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Every page or row titled as a kept OneNote version anywhere under `root`.
pub(crate) fn kept_copies(lab: &Lab, root: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_owned()];
    while let Some(id) = stack.pop() {
        let mut children = lab.notion.pages_under(&id);
        for (db, _, _) in lab.notion.databases_under(&id) {
            children.extend(lab.notion.rows(&db).into_iter().map(|r| (r.id, r.title)));
        }
        for (cid, title) in children {
            if title.contains(" (OneNote version") {
                out.push((cid.clone(), title));
            }
            stack.push(cid);
        }
    }
    out.sort();
    out
}

fn page_of(db: &Db, key: &str, item: &str) -> String {
    db.notion_item(key, item)
        .unwrap()
        .and_then(|i| i.into_page_id())
        .unwrap_or_else(|| panic!("{item} has no Notion page"))
}

fn title_of(lab: &Lab, page: &str) -> String {
    lab.notion
        .dump(page)
        .and_then(|d| d.title)
        .unwrap_or_default()
}

/// A OneNote page changed at `t` (its content too).
fn change_in_onenote(lab: &Lab, user: &str, page: &str, t: DateTime<Utc>) {
    lab.graph.mutate(user, |n| {
        let p = n.pages.iter_mut().find(|p| p.id == page).unwrap();
        p.modified = t;
        p.content_seed += 1;
    });
}

fn expect_code(out: &Output, code: i32, what: &str) {
    assert_eq!(
        out.code,
        Some(code),
        "{what}\nstdout: {}\nstderr: {}",
        out.stdout,
        out.stderr
    );
}

async fn an_account_users_update_keeps_what_a_person_wrote(layout: &str) {
    let lab = Lab::start(fast()).await;
    let notes = generate(&NotebookSpec {
        notebooks: 1,
        section_groups_depth: 0,
        sections_per_container: 1,
        pages_per_section: 0,
        total_pages: Some(8),
        subpage_ratio: 0.4,
        images_per_page: 0,
        seed: 50,
        ..NotebookSpec::default()
    });
    let user = lab.add_user("me", notes.clone());
    let home = tempfile::tempdir().unwrap();
    let me = User {
        lab: &lab,
        home: home.path(),
    };
    let to = lab.target_page.clone();
    me.ok(&["login"]).await;
    // Each write of the first migration a minute after the one before: a subpage is created
    // minutes after its parent page was written, which moves the parent's edit time.
    lab.notion
        .stamp_writes_from(written_at().timestamp_millis(), 60_000);
    me.ok(&["migrate", "--to", &to, "--layout", layout]).await;
    let first = requests(&lab);
    eprintln!(
        "figures: {layout}: first migration of {} pages: {first:?}",
        notes.pages.len()
    );

    // Three top-level pages: A edited in Notion in the minute notebridge wrote it, C retitled
    // in Notion minutes later, B (one with a subpage) edited in OneNote only.
    let top: Vec<_> = notes.pages.iter().filter(|p| p.level == 0).collect();
    let with_sub = notes
        .pages
        .windows(2)
        .find(|w| w[0].level == 0 && w[1].level == 1)
        .map(|w| w[0].clone())
        .expect("a page with a subpage");
    let others: Vec<_> = top.iter().filter(|p| p.id != with_sub.id).collect();
    let (a, b, c) = (others[0], &with_sub, others[1]);
    let db = files_db(home.path());
    let (pa, pb, pc) = (
        page_of(&db, "default", &a.id),
        page_of(&db, "default", &b.id),
        page_of(&db, "default", &c.id),
    );
    drop(db);
    // A's edit in the minute of notebridge's last write to A (its edit time as Notion shows it).
    let a_written = lab.notion.page(&pa)["last_edited_time"]
        .as_str()
        .map(|t| DateTime::parse_from_rfc3339(t).unwrap().with_timezone(&Utc))
        .unwrap();
    lab.notion.stamp_writes_at(ms(a_written));
    lab.notion
        .edit_block_as_person(&text_block(&lab, &pa), "Written in Notion by a person");
    assert_eq!(
        lab.notion.page(&pa)["last_edited_time"],
        a_written.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
    );
    lab.notion
        .stamp_writes_at(ms(written_at() + Duration::hours(5)));
    lab.notion.retitle_as_person(&pc, "Renamed in Notion");
    let b_before = body_text(&lab, &pb);
    let changed = written_at() + Duration::days(2);
    for p in [a, b, c] {
        change_in_onenote(&lab, &user.id, &p.id, changed);
    }

    lab.notion
        .stamp_writes_at(ms(written_at() + Duration::hours(6)));
    let update = me
        .run(&["--json", "migrate", "--to", &to, "--update"])
        .await;
    expect_code(&update, 4, "conflicts are exit 4");
    eprintln!(
        "figures: {layout}: --update of 3 changed pages (2 conflicts): {:?}",
        since(&requests(&lab), &first)
    );
    let summary = json(&update.stdout);
    assert_eq!(summary["failed"], 0, "a conflict is no failure: {summary}");
    let conflicts = summary["conflicts"].as_array().unwrap();
    let mut pages: Vec<&str> = conflicts
        .iter()
        .map(|c| c["notion_page_id"].as_str().unwrap())
        .collect();
    pages.sort();
    let mut want = vec![pa.as_str(), pc.as_str()];
    want.sort();
    assert_eq!(pages, want, "{summary}");
    assert!(
        conflicts.iter().all(|c| c["kept_as"].is_string()),
        "{summary}"
    );

    // The person's pages are as they left them.
    assert!(body_text(&lab, &pa).contains("Written in Notion by a person"));
    assert_eq!(title_of(&lab, &pc), "Renamed in Notion");
    // Beside each, the OneNote version: a child page, or a row of the same database.
    let copies = kept_copies(&lab, &to);
    let mut titles: Vec<String> = copies.iter().map(|(_, t)| t.clone()).collect();
    titles.sort();
    let mut want = vec![kept(&a.title, changed), kept(&c.title, changed)];
    want.sort();
    assert_eq!(titles, want, "{copies:?}");
    for (id, title) in &copies {
        let person = if *title == kept(&a.title, changed) {
            &pa
        } else {
            &pc
        };
        let beside = match layout {
            "pages" => lab.notion.pages_under(person).iter().any(|(k, _)| k == id),
            _ => lab
                .notion
                .rows(&section_database(&lab, &to))
                .iter()
                .any(|r| r.id == *id),
        };
        assert!(beside, "{title} is kept beside its page ({layout})");
        assert!(
            !body_text(&lab, id).contains("Written in Notion by a person"),
            "the kept copy is OneNote's"
        );
    }
    // B, edited in OneNote only, was rewritten in place as before.
    assert_ne!(body_text(&lab, &pb), b_before, "B rewritten");

    // `verify` counts every planned page once: a kept copy is neither a duplicate nor foreign.
    let verify = me.ok(&["--json", "verify"]).await;
    let totals = &json(&verify.stdout)["accounts"][0]["totals"];
    assert_eq!(
        (&totals["duplicates"], &totals["foreign"], &totals["ok"]),
        (
            &Value::from(0),
            &Value::from(0),
            &Value::from(notes.pages.len())
        ),
        "{}",
        verify.stdout
    );
    // `status` and `report` list the conflicts.
    let status = me.ok(&["--json", "status"]).await;
    assert_eq!(
        json(&status.stdout)["accounts"][0]["conflicts"]
            .as_array()
            .map(Vec::len),
        Some(2),
        "{}",
        status.stdout
    );
    let text = me.ok(&["status"]).await;
    assert!(text.stdout.contains("conflict: "), "{}", text.stdout);
    let report = home.path().join("r.html");
    me.ok(&["report", "--output", report.to_str().unwrap()])
        .await;
    let html = std::fs::read_to_string(&report).unwrap();
    assert!(
        html.contains("Edited in Notion") && html.contains(&pa),
        "{html}"
    );

    // Again, nothing changed: no second copy, nothing written, still exit 4.
    let writes = writes(&lab);
    let again = me.run(&["migrate", "--to", &to, "--update"]).await;
    expect_code(&again, 4, "the conflicts stand");
    assert_eq!(writes, self::writes(&lab), "a second run writes nothing");
    assert_eq!(kept_copies(&lab, &to).len(), 2);

    // OneNote changes A again: its kept copy follows, the person's page stays.
    let later = changed + Duration::days(1);
    change_in_onenote(&lab, &user.id, &a.id, later);
    let third = me.run(&["migrate", "--to", &to, "--update"]).await;
    expect_code(&third, 4, "the conflicts stand");
    let copies = kept_copies(&lab, &to);
    assert_eq!(copies.len(), 2, "no new copy: {copies:?}");
    assert!(
        copies.iter().any(|(_, t)| *t == kept(&a.title, later)),
        "{copies:?}"
    );
    assert!(body_text(&lab, &pa).contains("Written in Notion by a person"));
}

/// The one section's database under the target (layout `database`).
fn section_database(lab: &Lab, to: &str) -> String {
    let mut stack = vec![to.to_owned()];
    while let Some(id) = stack.pop() {
        if let Some((db, _, _)) = lab.notion.databases_under(&id).into_iter().next() {
            return db;
        }
        stack.extend(lab.notion.pages_under(&id).into_iter().map(|(i, _)| i));
    }
    panic!("no database under {to}")
}

/// Notion requests by endpoint so far (the figures of the fingerprint's cost).
fn requests(lab: &Lab) -> std::collections::BTreeMap<String, u64> {
    lab.notion
        .counters()
        .per_endpoint
        .into_iter()
        .map(|(e, n)| (format!("{e:?}"), n))
        .collect()
}

fn since(
    now: &std::collections::BTreeMap<String, u64>,
    before: &std::collections::BTreeMap<String, u64>,
) -> std::collections::BTreeMap<String, u64> {
    now.iter()
        .map(|(k, n)| (k.clone(), n - before.get(k).copied().unwrap_or(0)))
        .filter(|(_, n)| *n > 0)
        .collect()
}

fn writes(lab: &Lab) -> u64 {
    crate::files_support::notion_writes(lab)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_account_users_update_keeps_a_persons_edits_beside_the_onenote_version_in_pages() {
    an_account_users_update_keeps_what_a_person_wrote("pages").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_account_users_update_keeps_a_persons_edits_beside_the_onenote_version_in_databases() {
    an_account_users_update_keeps_what_a_person_wrote("database").await;
}

async fn a_files_users_update_keeps_what_a_person_wrote(layout: &str) {
    let Some(folder) = sample("onenote.rs/samples/New Section Group") else {
        return;
    };
    let lab = Lab::start(crate::files_support::fast()).await;
    let home = tempfile::tempdir().unwrap();
    let f = folder.to_str().unwrap();
    let to = lab.notion.add_shared_page("Import");
    lab.notion.stamp_writes_at(ms(written_at()));
    let out = files_user(
        &lab,
        home.path(),
        &["migrate", "--from", f, "--to", &to, "--layout", layout],
    )
    .run()
    .await;
    expect_code(&out, 0, "first migration");
    let db = files_db(home.path());
    let page = |title: &str| -> (String, String, String) {
        db.conn()
            .query_row(
                "SELECT n.account, n.item_id, n.notion_page_id FROM notion_items n
                 JOIN pages p ON p.account = n.account AND p.id = n.item_id WHERE p.title = ?1",
                [title],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .unwrap()
    };
    let (_, _, edited) = page("Test Page 3");
    let others: Vec<String> = db
        .conn()
        .prepare(
            "SELECT p.title FROM notion_items n JOIN pages p
             ON p.account = n.account AND p.id = n.item_id
             WHERE n.kind = 'page' AND p.title != 'Test Page 3' ORDER BY p.title",
        )
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let other = others.first().expect("another page").clone();
    let (_, _, rewritten) = page(&other);
    // Both pages changed in OneNote since they were migrated (as after editing the files).
    let n = db
        .conn()
        .execute(
            "UPDATE notion_items SET onenote_last_modified = '2001-01-01T00:00:00Z'
             WHERE item_id IN (SELECT id FROM pages WHERE title IN ('Test Page 3', ?1))",
            [&other],
        )
        .unwrap();
    assert_eq!(n, 2);
    drop(db);
    // A person edits Test Page 3 in the very minute notebridge wrote it.
    lab.notion
        .edit_block_as_person(&text_block(&lab, &edited), "A person's note");
    let written = |page: &str| {
        (
            lab.notion.page(page)["last_edited_time"].clone(),
            lab.notion.blocks_of(page),
        )
    };
    let other_before = written(&rewritten);
    lab.notion
        .stamp_writes_at(ms(written_at() + Duration::minutes(5)));
    let out = files_user(
        &lab,
        home.path(),
        &["--json", "migrate", "--from", f, "--to", &to, "--update"],
    )
    .run()
    .await;
    expect_code(&out, 4, "a conflict is exit 4");
    let summary = json(&out.stdout);
    assert_eq!(
        summary["conflicts"].as_array().map(Vec::len),
        Some(1),
        "{summary}"
    );
    assert_eq!(summary["conflicts"][0]["notion_page_id"], edited.as_str());
    assert_eq!(summary["conflicts"][0]["page"], "Test Page 3");
    assert!(body_text(&lab, &edited).contains("A person's note"));
    let copies = kept_copies(&lab, &to);
    assert_eq!(copies.len(), 1, "{copies:?}");
    assert!(
        copies[0].1.starts_with("Test Page 3 (OneNote version, "),
        "{copies:?}"
    );
    // Its content converts as before (only its time was moved back): it keeps its body, and its
    // date line or its row's properties are written (`queue::unchanged`).
    assert_ne!(
        written(&rewritten),
        other_before,
        "{other:?}, changed in OneNote only, is written"
    );
    assert_eq!(summary["this_run"]["unchanged"], 1, "{summary}");
    let status = files_user(&lab, home.path(), &["status"]).run().await;
    expect_code(&status, 0, "status");
    assert!(status.stdout.contains("Test Page 3"), "{}", status.stdout);
    let again = files_user(
        &lab,
        home.path(),
        &["migrate", "--from", f, "--to", &to, "--update"],
    )
    .run()
    .await;
    expect_code(&again, 4, "the conflict stands");
    assert_eq!(kept_copies(&lab, &to).len(), 1, "no second copy");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_files_users_update_keeps_a_persons_edit_in_the_minute_of_the_write_in_pages() {
    a_files_users_update_keeps_what_a_person_wrote("pages").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_files_users_update_keeps_a_persons_edit_in_the_minute_of_the_write_in_databases() {
    a_files_users_update_keeps_what_a_person_wrote("database").await;
}
