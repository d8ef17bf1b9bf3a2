//! A damaged section costs its damage, not the section: single bits flipped through real
//! multi-page sections (`fixtures/onenote-files`, with their licences), each copy read as
//! `migrate --from` reads it. Nothing may panic out of the reader or hang, a page is never dropped
//! without a word (each listed page converts or says why it cannot be read), and the share of
//! copies that lose the whole section, and of pages kept, is printed beside what reading a
//! section as a whole gave (any unreadable page failed the section: `docs/PERFORMANCE.md` §7).

use std::panic::AssertUnwindSafe;
use std::path::Path;
use std::sync::mpsc;
use std::time::Duration;

use notebridge::onefile::{self, SectionLocation};
use notebridge_testkit::lab::Lab;

use crate::files_support::{fast, notion_tree, run, sample};
use crate::migrate_support::State;

/// The sections walked: two desktop (revision store) files and two FSSHTTPB-packaged ones, each
/// with two pages.
const SECTIONS: &[&str] = &[
    "apache-tika/testOneNote1.one",
    "apache-tika/testOneNote2.one",
    "apache-tika/testOneNoteFromOffice365-2.one",
    "onenote.rs/samples/New Section Group/New Section 2.one",
];

/// Longest one damaged copy may take to read and convert (a debug build on a shared machine;
/// a whole copy takes well under a second).
const HANG: Duration = Duration::from_secs(60);

/// What the walk over one section found.
#[derive(Default, Debug, Clone, Copy)]
struct Tally {
    copies: usize,
    lost_whole: usize,
    lost_whole_before: usize,
    pages: usize,
    kept: usize,
    kept_before: usize,
    reported: usize,
    failed_converting: usize,
    vanished: usize,
}

impl Tally {
    fn add(&mut self, o: Tally) {
        self.copies += o.copies;
        self.lost_whole += o.lost_whole;
        self.lost_whole_before += o.lost_whole_before;
        self.pages += o.pages;
        self.kept += o.kept;
        self.kept_before += o.kept_before;
        self.reported += o.reported;
        self.failed_converting += o.failed_converting;
        self.vanished += o.vanished;
    }

    fn line(&self, name: &str) -> String {
        let pct = |n: usize, of: usize| 100.0 * n as f64 / of.max(1) as f64;
        format!(
            "{name}: {} copies, section lost {} ({:.1} %; reading it whole: {} = {:.1} %), \
             pages kept {}/{} ({:.1} %; whole: {:.1} %), pages reported unreadable {}, \
             pages whose conversion panicked {}, pages missing from a damaged page list {}",
            self.copies,
            self.lost_whole,
            pct(self.lost_whole, self.copies),
            self.lost_whole_before,
            pct(self.lost_whole_before, self.copies),
            self.kept,
            self.pages,
            pct(self.kept, self.pages),
            pct(self.kept_before, self.pages),
            self.reported,
            self.failed_converting,
            self.vanished
        )
    }
}

/// Reads one copy as the queue does (open, then convert each listed page) on a thread of its own,
/// so that a hang fails the test instead of stalling it; `Err` says what went wrong.
fn read_copy(path: &Path, pages_whole: usize) -> Result<Tally, String> {
    let (tx, rx) = mpsc::channel();
    let location = SectionLocation::File(path.to_owned());
    std::thread::spawn(move || {
        let r = std::panic::catch_unwind(|| {
            let mut t = Tally {
                copies: 1,
                pages: pages_whole,
                ..Tally::default()
            };
            let Ok(parsed) = onefile::open_section(&location) else {
                t.lost_whole = 1;
                t.lost_whole_before = 1;
                return Ok(t);
            };
            let pages = parsed.pages();
            if pages.len() > pages_whole {
                return Err(format!("{} pages listed of {pages_whole}", pages.len()));
            }
            // Only a flip in the section's own list of its pages can leave a page out of it.
            t.vanished = pages_whole - pages.len();
            for p in &pages {
                // A panic while converting costs that page (the queue catches it per page).
                let converted =
                    std::panic::catch_unwind(AssertUnwindSafe(|| parsed.convert(&p.id)));
                let Ok(converted) = converted else {
                    t.failed_converting += 1;
                    continue;
                };
                match (converted, parsed.unreadable(&p.id)) {
                    (Some(_), None) => t.kept += 1,
                    (None, Some(_)) => t.reported += 1,
                    (c, u) => {
                        return Err(format!(
                            "page {} converts: {}, unreadable: {u:?}",
                            p.id,
                            c.is_some()
                        ))
                    }
                }
            }
            if t.kept == 0 {
                t.lost_whole = 1;
            }
            // Read as a whole, any unreadable page failed the section.
            if t.reported > 0 {
                t.lost_whole_before = 1;
            } else {
                t.kept_before = t.kept;
            }
            Ok(t)
        });
        let _ = tx.send(r.unwrap_or_else(|_| Err("a panic escaped the reader".into())));
    });
    rx.recv_timeout(HANG)
        .unwrap_or_else(|_| Err(format!("no answer within {HANG:?}: it hangs")))
}

/// Flips `flips` single bits spread evenly through the section at `rel` (the bit within each
/// byte varies with its place), each in a fresh copy, and reads each copy.
fn walk(rel: &str, flips: usize) -> Option<Tally> {
    let src = sample(rel)?;
    let bytes = std::fs::read(&src).unwrap();
    let pages_whole = onefile::open_section(&SectionLocation::File(src.clone()))
        .unwrap_or_else(|p| panic!("{rel} reads whole: {p:?}"))
        .pages()
        .len();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(src.file_name().unwrap());
    let mut tally = Tally::default();
    for k in 0..flips {
        // Evenly spaced, shifted by a prime so the walk does not hit only aligned fields.
        let at = (k * bytes.len() / flips + 7919 * k) % bytes.len();
        let bit = (k * 5 + at) % 8;
        let mut copy = bytes.clone();
        copy[at] ^= 1 << bit;
        std::fs::write(&path, &copy).unwrap();
        let t = read_copy(&path, pages_whole)
            .unwrap_or_else(|e| panic!("{rel} with bit {bit} of byte {at} flipped: {e}"));
        tally.add(t);
    }
    Some(tally)
}

fn walk_all(flips: usize) -> Tally {
    let mut all = Tally::default();
    for rel in SECTIONS {
        let Some(t) = walk(rel, flips) else { continue };
        eprintln!("{}", t.line(rel));
        all.add(t);
    }
    eprintln!("{}", all.line("all"));
    if all.copies == 0 {
        return all;
    }
    assert!(
        all.lost_whole < all.lost_whole_before || all.lost_whole_before == 0,
        "reading page by page loses fewer sections: {all:?}"
    );
    assert!(all.kept >= all.kept_before, "{all:?}");
    all
}

#[test]
fn single_flipped_bits_cost_their_page_not_the_section() {
    let all = walk_all(48);
    // Every page of these copies is listed, read or reported (the full walk finds the rare flip
    // in a section's own list of pages that drops one: `docs/PERFORMANCE.md` §7).
    assert_eq!(all.vanished, 0, "{all:?}");
}

/// The full walk for `docs/PERFORMANCE.md` §7 (minutes in a debug build):
/// `cargo test --release --test it files_damaged::full -- --ignored --nocapture`.
#[test]
#[ignore]
fn full_walk_of_flipped_bits() {
    walk_all(1000);
}

/// The first copy of the walk over `rel` in which exactly one page cannot be read and the others
/// can: its bytes, and the damaged page's title.
fn one_page_damaged(rel: &str) -> Option<(Vec<u8>, String)> {
    let src = sample(rel)?;
    let bytes = std::fs::read(&src).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(src.file_name().unwrap());
    let flips = 48;
    (0..flips).find_map(|k| {
        let at = (k * bytes.len() / flips + 7919 * k) % bytes.len();
        let mut copy = bytes.clone();
        copy[at] ^= 1 << ((k * 5 + at) % 8);
        std::fs::write(&path, &copy).unwrap();
        let parsed = onefile::open_section(&SectionLocation::File(path.clone())).ok()?;
        let pages = parsed.pages();
        let bad: Vec<_> = pages
            .iter()
            .filter(|p| parsed.unreadable(&p.id).is_some())
            .collect();
        (bad.len() == 1 && pages.len() > 1).then(|| (copy, bad[0].title.clone()))
    })
}

/// A section with one damaged page (a bit flipped in it): the page is that page's reported problem
/// (the run names it and why, exits 4, `status` lists it), and the section's other page arrives.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_damaged_page_is_reported_and_the_sections_other_page_arrives() {
    let rel = "apache-tika/testOneNote2.one";
    let Some((bytes, bad)) = one_page_damaged(rel) else {
        if sample(rel).is_some() {
            panic!("no copy of {rel} in the walk has exactly one damaged page");
        }
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("Damaged.one");
    std::fs::write(&file, &bytes).unwrap();
    let path = file.to_str().unwrap();
    let lab = Lab::start(fast()).await;
    let state = State::new();
    let (code, out, err) = run(&lab, &state, &["--json", "scan", "--from", path]).await;
    assert_eq!(code, 0, "scan --from\n{out}\n{err}");
    let doc: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    let titles: Vec<String> = doc["sections"][0]["pages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["title"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(titles.len(), 2, "both pages listed: {doc}");
    assert!(titles.contains(&bad), "{doc}");
    let good: Vec<&String> = titles.iter().filter(|t| **t != bad).collect();
    // The damaged page says so before anything is migrated; the other page carries no problem.
    for p in doc["sections"][0]["pages"].as_array().unwrap() {
        let problem = p.get("problem").and_then(|v| v.as_str());
        if p["title"] == bad.as_str() {
            let problem = problem.unwrap_or_else(|| panic!("the damaged page is marked: {doc}"));
            assert!(
                problem.contains("cannot be read from its section file"),
                "{doc}"
            );
        } else {
            assert_eq!(problem, None, "{doc}");
        }
    }
    assert!(doc["sections"][0].get("problem").is_none(), "{doc}");
    let (code, out, err) = run(&lab, &state, &["scan", "--from", path]).await;
    assert_eq!(code, 0, "scan --from\n{out}\n{err}");
    assert!(
        out.contains(&format!("Damaged  [1 page cannot be read: {bad:?}]")),
        "the tree marks the section\n{out}"
    );
    assert!(
        err.contains(&format!("unreadable page {bad:?}"))
            && err.contains("cannot be read from its section file"),
        "{err}"
    );

    let target = lab.notion.add_shared_page("Imports");
    let (code, out, err) = run(&lab, &state, &["migrate", "--from", path, "--to", &target]).await;
    let said = format!("{out}\n{err}");
    assert_eq!(code, 4, "one page failed\n{said}");
    assert!(said.contains("1 items failed"), "{said}");
    assert!(said.contains(&format!("\"{bad}\"")), "{said}");
    assert!(
        said.contains("cannot be read from its section file"),
        "{said}"
    );
    let tree = notion_tree(&lab, &target);
    assert_eq!(
        tree,
        [(0, "Damaged".to_owned()), (1, good[0].clone())],
        "the section and its readable page\n{said}"
    );

    let (code, out, err) = run(&lab, &state, &["status"]).await;
    let said = format!("{out}\n{err}");
    assert!(said.contains(&bad), "status ({code}): {said}");
    assert!(
        said.contains("cannot be read from its section file"),
        "{said}"
    );
    assert_eq!(lab.graph.counters().total, 0);
}

/// A desktop section whose transaction log names its own fragment as the next one (MS-ONESTORE
/// 2.3.1 `fcrTransactionLog` at byte 160, 2.3.3.1 `nextFragment` after its fragment's entries):
/// the chain is not followed for ever; the section is damaged, and says so.
#[test]
fn a_chain_of_fragments_that_loops_ends_the_read() {
    let Some(src) = sample("apache-tika/testOneNote2016.one") else {
        return;
    };
    let mut bytes = std::fs::read(&src).unwrap();
    let stp = u64::from_le_bytes(bytes[160..168].try_into().unwrap());
    let cb = u32::from_le_bytes(bytes[168..172].try_into().unwrap());
    // The fragment is whole 8-byte entries, then the reference (as the parser reads it).
    let next = usize::try_from(stp).unwrap() + (cb as usize - 12) / 8 * 8;
    bytes[next..next + 8].copy_from_slice(&stp.to_le_bytes());
    bytes[next + 8..next + 12].copy_from_slice(&cb.to_le_bytes());
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("Looping.one");
    std::fs::write(&path, &bytes).unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(onefile::open_section(&SectionLocation::File(path)).map(|_| ()));
    });
    let problem = rx
        .recv_timeout(HANG)
        .expect("the read ends")
        .expect_err("the section is damaged");
    assert_eq!(problem.kind, onefile::ProblemKind::Damaged, "{problem:?}");
    assert!(problem.reason.contains("refers back"), "{}", problem.reason);
}

/// Every reason a read of `bytes`, written as `name` in a folder of its own and read on a thread
/// with `stack` bytes of stack, gives for what it could not read: the file's, its sections' and
/// their pages'. The read must end within [`HANG`]; a panic fails the test.
fn reasons_of_reading(bytes: &[u8], name: &str, stack: usize) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    std::fs::write(&path, bytes).unwrap();
    let (tx, rx) = mpsc::channel();
    let reader = std::thread::Builder::new()
        .stack_size(stack)
        .spawn(move || {
            let mut out = Vec::new();
            match onefile::scan(&path) {
                Err(e) => out.push(format!("{e:#}")),
                Ok(imp) => {
                    for (_, s) in imp.all_sections() {
                        if let Some(p) = &s.problem {
                            out.push(p.reason.clone());
                            continue;
                        }
                        out.extend(s.pages.iter().filter_map(|p| p.problem.clone()));
                        if let Err(e) = onefile::open_section(&s.location) {
                            out.push(e.reason);
                        }
                    }
                }
            }
            let _ = tx.send(out);
        });
    reader.expect("a thread for the read");
    rx.recv_timeout(HANG)
        .expect("the read ends, without a panic")
}

/// Asserts that `reasons` cost pages only (each says the section's other pages are read) and that
/// one of them says `why`.
fn assert_pages_lost_for(reasons: &[String], why: &str) {
    assert!(
        reasons
            .iter()
            .all(|r| r.contains("the section's other pages are read")),
        "only pages are lost: {reasons:?}"
    );
    assert!(reasons.iter().any(|r| r.contains(why)), "{reasons:?}");
}

/// A desktop section whose root file node list holds a reference to itself (MS-ONESTORE 2.3.1
/// `fcrFileNodeListRoot` at byte 172; 2.4.3 a node's reference after its 4-byte header): the read
/// would recurse into the same list until the stack overflowed, ending the process. It stops with
/// the damage named instead.
#[test]
fn a_file_node_list_that_contains_itself_ends_the_read() {
    let Some(src) = sample("apache-tika/testOneNote2016.one") else {
        return;
    };
    let mut bytes = std::fs::read(&src).unwrap();
    let root = u64::from_le_bytes(bytes[172..180].try_into().unwrap()) as usize;
    let root_cb = u32::from_le_bytes(bytes[180..184].try_into().unwrap()) as usize;
    // The list's first node (after its 16-byte fragment header) references the first object
    // space's manifest list with a compressed reference: 2 bytes of location and 1 of size, in
    // units of 8 bytes (stpFormat 2, cbFormat 2).
    let node = root + 16;
    let header = u32::from_le_bytes(bytes[node..node + 4].try_into().unwrap());
    assert_eq!(
        (
            header & 0x3ff,
            (header >> 23) & 3,
            (header >> 25) & 3,
            header >> 27 & 0xf
        ),
        (0x008, 2, 2, 2),
        "the sample's first root node is an object space manifest list reference"
    );
    bytes[node + 4..node + 6].copy_from_slice(&u16::try_from(root / 8).unwrap().to_le_bytes());
    bytes[node + 6] = u8::try_from(root_cb / 8).unwrap();
    // The default stack of a spawned thread, as tokio's blocking threads have.
    let reasons = reasons_of_reading(&bytes, "Itself.one", 2 << 20);
    assert!(
        reasons.iter().any(|r| r.contains("refers back to itself")),
        "{reasons:?}"
    );
}

/// An outline element naming itself as its first child ([MS-ONE] 2.2.21 `ElementChildNodes`, a
/// reference rewritten in each element's property set): the parser stops at its nesting bound
/// (`MAX_OUTLINE_NESTING_DEPTH`) and that costs each such page, while the section is read. The
/// read is made from a thread with less stack than the parser needs at that bound (about 840 KB
/// in a test build): the reader parses on a thread of its own, so the caller's stack is not what
/// decides whether the process survives.
#[test]
fn an_outline_element_that_contains_itself_costs_its_page_whatever_the_callers_stack() {
    let Some(src) = sample("apache-tika/testOneNote1.one") else {
        return;
    };
    let (bytes, rewritten) = crate::files_craft::naming_itself(
        &std::fs::read(&src).unwrap(),
        0x0006_000d, // jcidOutlineElementNode
        0x2400_1c20, // ElementChildNodes
    );
    assert!(
        rewritten > 0,
        "the sample has outline elements with children"
    );
    let reasons = reasons_of_reading(&bytes, "Itself.one", 256 << 10);
    assert_pages_lost_for(&reasons, "maximum outline nesting depth exceeded");
}

/// A picture whose byte property is made property sets nested far deeper than any structure of
/// [MS-ONE] ([MS-ONESTORE] 2.6.7; the bytes of a damaged object can read as one nested set after
/// another): the parser stops at its bound (`MAX_PROPERTY_SET_NESTING_DEPTH`, 32) and that costs
/// the picture's page, while the section is read.
#[test]
fn property_sets_nested_past_the_bound_cost_their_page() {
    let Some(src) = sample("apache-tika/testOneNote1.one") else {
        return;
    };
    let bytes = crate::files_craft::nesting_property_sets(
        &std::fs::read(&src).unwrap(),
        0x0006_0011, // jcidImageNode
        100,
    )
    .expect("the sample has a picture with a 600-byte property");
    let reasons = reasons_of_reading(&bytes, "Nested.one", 2 << 20);
    assert_pages_lost_for(&reasons, "property sets nested deeper than 32");
}

/// A notebook's table of contents whose entries name themselves as their first child ([MS-ONE]
/// `TocChildren`, a reference rewritten in each entry's property set): the walk recursed for ever,
/// overflowing the stack. Now the table of contents is refused as damaged and, as for any table of
/// contents that cannot be read, the folder's own listing gives the notebook's sections.
#[test]
fn a_table_of_contents_entry_that_contains_itself_ends_the_read() {
    let (Some(toc), Some(section)) = (
        sample("interop-testsuites/SUT/Open Notebook.onetoc2"),
        sample("apache-tika/testOneNote2016.one"),
    ) else {
        return;
    };
    let (bytes, rewritten) = crate::files_craft::naming_itself(
        &std::fs::read(&toc).unwrap(),
        0x0002_0001, // jcidPersistablePropertyContainerForTOC
        0x2400_1cf6, // TocChildren
    );
    assert!(rewritten > 0, "the sample has entries with children");
    let dir = tempfile::tempdir().unwrap();
    let notebook = dir.path().join("Notebook");
    std::fs::create_dir(&notebook).unwrap();
    std::fs::write(notebook.join("Open Notebook.onetoc2"), &bytes).unwrap();
    std::fs::copy(&section, notebook.join("Kept.one")).unwrap();
    let (tx, rx) = mpsc::channel();
    let at = notebook.clone();
    std::thread::spawn(move || {
        let _ = tx.send(onefile::scan(&at).map(|imp| {
            let names = imp
                .all_sections()
                .iter()
                .map(|(_, s)| s.name.clone())
                .collect::<Vec<_>>();
            (names, imp.unreadable_tocs)
        }));
    });
    let (sections, unreadable) = rx
        .recv_timeout(HANG)
        .expect("the read ends, without a panic")
        .expect("the folder is read");
    assert_eq!(sections, ["Kept"]);
    assert_eq!(unreadable.len(), 1, "{unreadable:?}");
    assert_eq!(unreadable[0].path, notebook.join("Open Notebook.onetoc2"));
    assert!(
        unreadable[0].reason.contains("names an entry above it"),
        "{}",
        unreadable[0].reason
    );
    // The files user, with nothing set, is told what stood in for it.
    let home = tempfile::tempdir().unwrap();
    let out = crate::bin_support::notebridge(home.path(), &["scan", "--from"])
        .args([&notebook])
        .run_blocking();
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert!(
        out.stderr.contains("Open Notebook.onetoc2 cannot be read")
            && out.stderr.contains("sections were taken from its folder"),
        "{}",
        out.stderr
    );
}
