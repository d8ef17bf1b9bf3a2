//! The changed copies of real section files that `onefile_change` makes, read back through the
//! product: `scan --from PATH --json` (the binary, in a clean environment) shows each change and
//! nothing else changed, and the converter reads a rewritten text run. Each test first checks
//! that the sample does not already show what the change should show.

use std::path::Path;

use serde_json::Value;

use crate::bin_support::notebridge;
use crate::files_support::sample;
use crate::onefile_change::{
    copy_notebook, delete_section, desktop_notebook, move_page, move_section, page_order,
    remove_page, rename_section, reorder_pages, retitle_page, rewrite_text, set_page_level,
    touch_page, write_section,
};

/// testOneNote1.one's pages (desktop OneNote 2013, a series per page).
const ONE: &str = "apache-tika/testOneNote1.one";
const ONE_FIRST: &str = "b8f3669b-f533-417a-a700-c2cbbcc760e3";
const ONE_BASICS: &str = "f5e8b626-8c4a-496b-8951-cea55052b874";
/// testOneNote2.one's pages (OneNote 2016, each page with earlier revisions in the file).
const TWO: &str = "apache-tika/testOneNote2.one";
const TWO_FIRST: &str = "e1fdd004-97a6-49b8-a9c9-bb781d0c5423";
const TWO_BASICS: &str = "0ad2f2f8-f7c0-4301-82df-064544dd31e5";

/// `scan --from PATH --json` through the binary, with nothing of the developer's environment.
fn scan(path: &Path) -> Value {
    let home = tempfile::tempdir().unwrap();
    let out = notebridge(
        home.path(),
        &["--json", "scan", "--from", path.to_str().unwrap()],
    )
    .run_blocking();
    assert_eq!(out.code, Some(0), "{}", out.all());
    serde_json::from_str(out.stdout.trim()).unwrap_or_else(|e| panic!("{e}: {}", out.stdout))
}

/// Every section of a scan document (at any depth), with its pages.
fn sections(doc: &Value) -> Vec<Value> {
    fn walk(c: &Value, out: &mut Vec<Value>) {
        out.extend(c["sections"].as_array().into_iter().flatten().cloned());
        for g in c["section_groups"].as_array().into_iter().flatten() {
            walk(g, out);
        }
    }
    let mut out = Vec::new();
    walk(doc, &mut out);
    for n in doc["notebooks"].as_array().into_iter().flatten() {
        walk(n, &mut out);
    }
    out
}

/// The pages of the one section a scan of a section file holds.
fn pages(doc: &Value) -> Vec<Value> {
    let s = sections(doc);
    assert_eq!(s.len(), 1, "{doc}");
    assert!(s[0].get("problem").is_none(), "{doc}");
    s[0]["pages"].as_array().unwrap().clone()
}

/// The pages' ids, in order.
fn ids(pages: &[Value]) -> Vec<Value> {
    pages.iter().map(|p| p["id"].clone()).collect()
}

fn page<'a>(pages: &'a [Value], id: &str) -> &'a Value {
    pages
        .iter()
        .find(|p| p["id"] == id)
        .unwrap_or_else(|| panic!("no page {id} in {pages:?}"))
}

/// A sample changed by `change`, written beside the test as `name`: the sample's scan and the
/// copy's.
fn changed(rel: &str, name: &str, change: impl FnOnce(&[u8]) -> Vec<u8>) -> Option<(Value, Value)> {
    let src = sample(rel)?;
    let dir = tempfile::tempdir().unwrap();
    let before = std::fs::read(&src).unwrap();
    let after = change(&before);
    assert_ne!(before, after, "the change changed nothing");
    let copy = dir.path().join(name);
    write_section(&copy, &after);
    Some((scan(&src), scan(&copy)))
}

/// The page without the fields a change may touch.
fn without(p: &Value, fields: &[&str]) -> Value {
    let mut p = p.clone();
    for f in fields {
        p.as_object_mut().unwrap().remove(*f);
    }
    p
}

#[test]
fn a_retitled_page_has_its_new_title_and_keeps_its_guid_and_place() {
    // Longer than the old title, with characters outside ASCII, and shorter: any length.
    for (rel, id, title) in [
        (ONE, ONE_BASICS, "Grundlagen von OneNote – überarbeitet"),
        (TWO, TWO_FIRST, "Kurz"),
    ] {
        let Some((before, after)) = changed(rel, "Retitled.one", |b| retitle_page(b, id, title))
        else {
            return;
        };
        let (before, after) = (pages(&before), pages(&after));
        assert_ne!(
            page(&before, id)["title"],
            title,
            "the sample's title differs"
        );
        assert_eq!(page(&after, id)["title"], title);
        assert_eq!(before.len(), after.len());
        for (b, a) in before.iter().zip(&after) {
            assert_eq!(without(b, &["title"]), without(a, &["title"]));
            if b["id"] != id {
                assert_eq!(b, a, "another page is as it was");
            }
        }
    }
}

#[test]
fn a_touched_page_is_later_and_nothing_else_changes() {
    let when = chrono::DateTime::parse_from_rfc3339("2026-11-30T08:15:42Z")
        .unwrap()
        .to_utc();
    for (rel, id) in [(ONE, ONE_FIRST), (TWO, TWO_BASICS)] {
        let Some((before, after)) = changed(rel, "Touched.one", |b| touch_page(b, id, when)) else {
            return;
        };
        let (before, after) = (pages(&before), pages(&after));
        let was = page(&before, id)["last_modified"]
            .as_str()
            .unwrap()
            .to_owned();
        assert!(was.as_str() < "2026-11-30T08:15:42Z", "{was}");
        assert_eq!(page(&after, id)["last_modified"], "2026-11-30T08:15:42Z");
        for (b, a) in before.iter().zip(&after) {
            assert_eq!(
                without(b, &["last_modified"]),
                without(a, &["last_modified"])
            );
            if b["id"] != id {
                assert_eq!(b, a, "another page is as it was");
            }
        }
    }
}

/// The text the converter makes of page `id` of the section file at `path`.
fn converted(path: &Path, id: &str) -> String {
    let section = notebridge::onefile::open_section(&notebridge::onefile::SectionLocation::File(
        path.to_path_buf(),
    ))
    .unwrap();
    let page = section.convert(id).expect("the page is there");
    format!("{:?}", page.blocks)
}

#[test]
fn a_rewritten_text_run_is_what_the_converter_reads() {
    let Some(src) = sample(ONE) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let bytes = std::fs::read(&src).unwrap();
    let before = converted(&src, ONE_BASICS);
    // The blocks hold the page's picture: a failure does not print them. The words are also in
    // a picture's recognised text, which stays.
    let runs = |blocks: &str, words: &str| blocks.matches(words).count();
    assert_eq!(runs(&before, "Collaborate with others"), 2);
    assert_eq!(runs(&before, "Work together with your whole team"), 0);
    let after = rewrite_text(
        &bytes,
        ONE_BASICS,
        "Collaborate with others",
        "Work together with your whole team",
    );
    let copy = dir.path().join("Edited.one");
    write_section(&copy, &after);
    let now = converted(&copy, ONE_BASICS);
    assert_eq!(runs(&now, "Collaborate with others"), 1);
    assert_eq!(runs(&now, "Work together with your whole team"), 1);
    // The rest of the page is as it was: only that run's words differ.
    assert!(
        before.replacen(
            "Collaborate with others",
            "Work together with your whole team",
            1
        ) == now
    );
    // And the scan sees the same pages (the time is touch_page's to change).
    assert_eq!(pages(&scan(&src)), pages(&scan(&copy)));
}

#[test]
fn reordered_pages_are_scanned_in_their_new_order() {
    for (rel, first, second) in [(ONE, ONE_FIRST, ONE_BASICS), (TWO, TWO_FIRST, TWO_BASICS)] {
        let Some((before, after)) =
            changed(rel, "Reordered.one", |b| reorder_pages(b, &[second, first]))
        else {
            return;
        };
        assert_swapped(&pages(&before), &pages(&after), first, second);
    }
}

/// `before` held pages `first` then `second`, `after` holds them the other way round, each as it
/// was but for its place.
fn assert_swapped(before: &[Value], after: &[Value], first: &str, second: &str) {
    assert_eq!(ids(before), [first, second]);
    assert_eq!(ids(after), [second, first]);
    for (i, a) in after.iter().enumerate() {
        assert_eq!(a["order"], i);
        let b = page(before, a["id"].as_str().unwrap());
        assert_eq!(without(b, &["order"]), without(a, &["order"]));
    }
}

/// A section whose one series holds its pages (OneNote's layout after a page is added to a
/// series): testOneNoteEmbeddedWordDoc.one with a page of testOneNote2.one moved in after its own.
#[test]
fn pages_of_one_series_are_reordered_within_it() {
    let (Some(two), Some(word)) = (
        sample(TWO),
        sample("apache-tika/testOneNoteEmbeddedWordDoc.one"),
    ) else {
        return;
    };
    let own = "c7f7c2c8-dffa-4ad4-b5e3-84a969d31c8c";
    let (_, both) = move_page(
        &std::fs::read(two).unwrap(),
        &std::fs::read(word).unwrap(),
        TWO_BASICS,
    );
    let dir = tempfile::tempdir().unwrap();
    let (before, after) = (dir.path().join("Before.one"), dir.path().join("After.one"));
    write_section(&before, &both);
    write_section(&after, &reorder_pages(&both, &[TWO_BASICS, own]));
    assert_swapped(
        &pages(&scan(&before)),
        &pages(&scan(&after)),
        own,
        TWO_BASICS,
    );
}

#[test]
fn a_removed_page_is_gone_and_the_other_stays() {
    for (rel, gone, kept) in [(ONE, ONE_FIRST, ONE_BASICS), (TWO, TWO_BASICS, TWO_FIRST)] {
        let Some((before, after)) = changed(rel, "Removed.one", |b| remove_page(b, gone)) else {
            return;
        };
        let (before, after) = (pages(&before), pages(&after));
        assert_eq!(before.len(), 2);
        assert_eq!(after.len(), 1, "{after:?}");
        assert_eq!(
            without(&after[0], &["order"]),
            without(page(&before, kept), &["order"])
        );
        assert_eq!(after[0]["order"], 0);
    }
}

#[test]
fn a_page_made_a_subpage_has_its_level() {
    let Some((before, after)) = changed(ONE, "Subpage.one", |b| set_page_level(b, ONE_BASICS, 2))
    else {
        return;
    };
    let (before, after) = (pages(&before), pages(&after));
    assert_eq!(page(&before, ONE_BASICS)["level"], 0);
    assert_eq!(page(&after, ONE_BASICS)["level"], 1);
    assert_eq!(before[0], after[0]);
    assert_eq!(
        without(&before[1], &["level"]),
        without(&after[1], &["level"])
    );
}

/// Moves page `id` from section file `from` to `to` (samples, copied side by side into a notebook
/// folder) and checks the scan and the converter: the page at the end of `to` as it was, gone
/// from `from`, every other page as it was.
fn check_move(from: &str, to: &str, id: &str) {
    let (Some(src_from), Some(src_to)) = (sample(from), sample(to)) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let notebook = dir.path().join("Notebook");
    std::fs::create_dir(&notebook).unwrap();
    let (at_from, at_to) = (
        notebook.join(src_from.file_name().unwrap()),
        notebook.join(src_to.file_name().unwrap()),
    );
    std::fs::copy(&src_from, &at_from).unwrap();
    std::fs::copy(&src_to, &at_to).unwrap();
    let name = |p: &Path| p.file_stem().unwrap().to_str().unwrap().to_owned();
    let before = scan(&notebook);
    let (changed_from, changed_to) = move_page(
        &std::fs::read(&src_from).unwrap(),
        &std::fs::read(&src_to).unwrap(),
        id,
    );
    write_section(&at_from, &changed_from);
    write_section(&at_to, &changed_to);
    let after = scan(&notebook);
    let pages_of = |doc: &Value, section: &str| {
        sections(doc)
            .into_iter()
            .find(|s| s["name"] == section)
            .map(|s| s["pages"].as_array().unwrap().clone())
            .unwrap()
    };
    let (from_before, to_before) = (
        pages_of(&before, &name(&at_from)),
        pages_of(&before, &name(&at_to)),
    );
    let (from_after, to_after) = (
        pages_of(&after, &name(&at_from)),
        pages_of(&after, &name(&at_to)),
    );
    assert!(ids(&from_before).contains(&Value::from(id)));
    assert!(!ids(&to_before).contains(&Value::from(id)));
    // Gone from where it was, the others there as they were but for their place.
    let stayed: Vec<Value> = from_before
        .iter()
        .filter(|p| p["id"] != id)
        .map(|p| without(p, &["order"]))
        .collect();
    assert_eq!(
        from_after
            .iter()
            .map(|p| without(p, &["order"]))
            .collect::<Vec<_>>(),
        stayed
    );
    // At the end of its new section as it was (title, level, time), after the pages there.
    assert_eq!(to_after[..to_before.len()], to_before[..]);
    assert_eq!(to_after.len(), to_before.len() + 1);
    let moved = to_after.last().unwrap();
    assert_eq!(moved["order"], to_before.len());
    assert_eq!(
        without(moved, &["order"]),
        without(page(&from_before, id), &["order"])
    );
    let section_ids = |doc: &Value| {
        sections(doc)
            .iter()
            .map(|s| s["id"].clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(section_ids(&before), section_ids(&after));
    // Its content came with it, pictures included: the converter reads the same blocks.
    assert!(converted(&src_from, id) == converted(&at_to, id));
    let mut order = ids(&to_before);
    order.push(Value::from(id));
    assert_eq!(
        page_order(&changed_to)
            .into_iter()
            .map(Value::from)
            .collect::<Vec<_>>(),
        order
    );
    // Edited where it is now: the functions find it in its new file as in its first.
    let when = chrono::DateTime::parse_from_rfc3339("2026-12-01T09:00:00Z")
        .unwrap()
        .to_utc();
    let edited = dir.path().join("Edited.one");
    write_section(
        &edited,
        &retitle_page(&touch_page(&changed_to, id, when), id, "Moved, then edited"),
    );
    let edited = pages(&scan(&edited));
    let page_now = page(&edited, id);
    assert_eq!(page_now["title"], "Moved, then edited");
    assert_eq!(page_now["last_modified"], "2026-12-01T09:00:00Z");
    assert_eq!(edited[..to_before.len()], to_before[..]);
    // Removed again (it shares its series with the page before it there), the section is back
    // to its own pages.
    let back = dir.path().join("Back.one");
    write_section(&back, &remove_page(&changed_to, id));
    let again: Vec<Value> = sections(&scan(&back))[0]["pages"]
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(again, to_before);
}

#[test]
fn a_page_moved_to_another_section_is_found_there_as_it_was_and_not_where_it_was() {
    check_move(TWO, ONE, TWO_FIRST);
    // A page with a picture, into a section whose revisions are many.
    check_move(ONE, TWO, ONE_BASICS);
}

#[test]
fn sections_renamed_moved_and_deleted_keep_their_guids_where_they_are() {
    let dir = tempfile::tempdir().unwrap();
    let Some(notebook) = desktop_notebook(dir.path(), "Notebook") else {
        return;
    };
    let copy = copy_notebook(&notebook, &dir.path().join("Copy"));
    let other = dir.path().join("Other notebook");
    // Each section's place: its group's name (none at the top), its name and its GUID.
    let place = |doc: &Value| {
        let mut out = Vec::new();
        for n in doc["notebooks"].as_array().unwrap() {
            for s in n["sections"].as_array().unwrap() {
                out.push((String::new(), s["name"].clone(), s["id"].clone()));
            }
            for g in n["section_groups"].as_array().unwrap() {
                for s in g["sections"].as_array().unwrap() {
                    let group = g["name"].as_str().unwrap().to_owned();
                    out.push((group, s["name"].clone(), s["id"].clone()));
                }
            }
        }
        out
    };
    let before = place(&scan(&notebook));
    assert_eq!(place(&scan(&copy)), before, "the copy is the same notebook");
    let id = |name: &str| {
        before
            .iter()
            .find(|(_, n, _)| n == name)
            .map(|(_, _, id)| id.clone())
            .unwrap()
    };
    let top = |name: &str, id: Value| (String::new(), Value::from(name), id);
    let grouped = |name: &str, id: Value| ("Group".to_owned(), Value::from(name), id);
    assert_eq!(
        before,
        [
            top("testOneNote1", id("testOneNote1")),
            top("testOneNote2", id("testOneNote2")),
            grouped("testOneNote2016", id("testOneNote2016")),
            grouped("testOneNote4", id("testOneNote4")),
        ]
    );
    rename_section(&notebook.join("testOneNote1.one"), "Renamed.one");
    move_section(&notebook.join("testOneNote2.one"), &notebook.join("Group"));
    move_section(&notebook.join("Group/testOneNote4.one"), &other);
    delete_section(&notebook.join("Group/testOneNote2016.one"));
    assert_eq!(
        place(&scan(&notebook)),
        [
            top("Renamed", id("testOneNote1")),
            grouped("testOneNote2", id("testOneNote2")),
        ]
    );
    assert_eq!(
        place(&scan(&other)),
        [top("testOneNote4", id("testOneNote4"))]
    );
}
