//! OneNote's own files (`fixtures/onenote-files`, copied from public corpora with their licences):
//! what `onefile::scan` finds in each sample and each notebook layout, the pages converted from
//! them, and every bad input (not OneNote, an empty folder, password-protected, damaged, missing).
//! `apache-tika/testOneNote.one` holds made-up personal data: only its structure is asserted.

use std::path::{Path, PathBuf};

use notebridge::convert::{Block, MediaSource, RichKind};
use notebridge::failure::{Classify, Meaning};
use notebridge::onefile::{
    self, bare_guid, page_guid_for_store, FileImport, FileNotebook, FileSection, FilesError,
    ParsedSection, ProblemKind, SectionLocation,
};

use crate::convert_validate as validate;

fn sample(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/onenote-files")
        .join(rel)
}

fn scan(rel: &str) -> FileImport {
    onefile::scan(&sample(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// The one section of a lone `.one` file.
fn lone(rel: &str) -> FileSection {
    let imp = scan(rel);
    assert!(imp.notebooks.is_empty(), "{rel}");
    assert_eq!(imp.sections.len(), 1, "{rel}");
    imp.sections.into_iter().next().unwrap()
}

fn open(s: &FileSection) -> ParsedSection {
    onefile::open_section(&s.location).unwrap_or_else(|p| panic!("{}: {p:?}", s.name))
}

/// Every text of a page's blocks, in order, nested ones included (a table: all its cells).
fn texts(blocks: &[Block]) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack: Vec<&Block> = blocks.iter().rev().collect();
    while let Some(b) = stack.pop() {
        let t: String = b
            .rich_texts()
            .into_iter()
            .flatten()
            .filter(|r| matches!(r.kind, RichKind::Text { .. }))
            .map(|r| r.visible_text())
            .collect();
        out.push(t);
        stack.extend(b.children().iter().rev());
    }
    out
}

fn embedded(page: &notebridge::convert::ConvertedPage) -> Vec<notebridge::convert::EmbeddedFile> {
    page.resources()
        .into_iter()
        .filter_map(|m| match m {
            MediaSource::Embedded(f) => Some(f.clone()),
            _ => None,
        })
        .collect()
}

fn fnv(b: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for x in b {
        h ^= u64::from(*x);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

#[test]
fn parsed_sections_cross_threads() {
    fn send_sync<T: Send + Sync + 'static>() {}
    send_sync::<ParsedSection>();
    send_sync::<FileImport>();
    send_sync::<FilesError>();
}

#[test]
fn a_desktop_section_gives_its_page_title_dates_and_text() {
    let s = lone("apache-tika/testOneNote2016.one");
    assert_eq!(s.name, "testOneNote2016");
    assert_eq!(s.id, "d5ead24b-60f4-49a1-879e-e2c00b38fd22");
    assert!(s.problem.is_none());
    assert_eq!(s.pages.len(), 1);
    let p = &s.pages[0];
    assert_eq!(p.title, "So good");
    assert_eq!(p.id, "9bb586ae-4589-4bc1-b60f-67a307892a79");
    assert_eq!((p.level, p.order), (0, 0));
    assert_eq!(p.created.as_deref(), Some("2019-12-11T23:37:52Z"));
    assert_eq!(p.last_modified.as_deref(), Some("2019-12-11T23:37:56Z"));
    let parsed = open(&s);
    assert_eq!(
        parsed.pages(),
        s.pages,
        "the same pages and ids as the scan"
    );
    let page = parsed.convert(&p.id).unwrap();
    assert_eq!(page.title, "So good");
    let t = texts(&page.blocks);
    // The API route's date line first, then the body.
    assert_eq!(
        t[0],
        "Created 2019-12-11 23:37Z · Last modified 2019-12-11 23:37Z (OneNote)"
    );
    assert!(t.iter().any(|x| x == "This is one note 2016"), "{t:?}");
    validate::blocks(&page.blocks).unwrap();
    assert!(parsed
        .convert("00000000-0000-0000-0000-000000000000")
        .is_none());
}

#[test]
fn page_ids_are_the_guids_the_api_route_sees() {
    let s = lone("apache-tika/testOneNote2016.one");
    let id = &s.pages[0].id;
    // Graph's oneNoteClientUrl carries page-id={GUID} in upper case; the store keeps `{lower}`.
    let url = format!(
        "onenote:https://x/Notes.one#So%20good&section-id={{A}}&page-id={{{}}}&end",
        id.to_uppercase()
    );
    let from_api = notebridge::convert::onenote_page_id(&url).unwrap();
    assert_eq!(bare_guid(&from_api), *id);
    assert_eq!(
        page_guid_for_store(id),
        from_api.to_ascii_lowercase(),
        "one key in pages.onenote_guid whichever route read the page"
    );
    // The converter finds the page by any form of its GUID.
    let parsed = open(&s);
    assert!(parsed
        .convert(&page_guid_for_store(id).to_uppercase())
        .is_some());
}

#[test]
fn a_packaged_section_from_onedrive_reads_like_a_desktop_one() {
    let s = lone("apache-tika/testOneNoteFromOffice365-2.one");
    assert_eq!(s.name, "Section1");
    assert_eq!(s.pages.len(), 2);
    assert_eq!(
        s.pages.iter().map(|p| p.order).collect::<Vec<_>>(),
        vec![0, 1]
    );
    let parsed = open(&s);
    for p in &s.pages {
        let page = parsed.convert(&p.id).unwrap();
        validate::blocks(&page.blocks).unwrap();
        assert!(texts(&page.blocks)[0].starts_with("Created "));
    }
}

#[test]
fn pictures_carry_their_bytes_and_alt_text() {
    let s = lone("interop-testsuites/SUT/FileSyncWOPI_OneNoteWithODB.one");
    let parsed = open(&s);
    let page = parsed.convert(&s.pages[0].id).unwrap();
    let files = embedded(&page);
    assert_eq!(files.len(), 1);
    assert_eq!(files[0].name, "Chrysanthemum.jpg");
    assert_eq!(files[0].mime, "image/jpeg");
    assert_eq!(files[0].bytes.len(), 879_394);
    assert!(files[0].bytes.starts_with(b"\xff\xd8\xff"));
    assert!(page
        .blocks
        .iter()
        .any(|b| matches!(b, Block::Image { source: MediaSource::Embedded(f), .. } if f.name == "Chrysanthemum.jpg")));

    // Alt text becomes the caption, as on the API route.
    let s = lone("apache-tika/testOneNote1.one");
    let parsed = open(&s);
    let page = parsed.convert(&s.pages[0].id).unwrap();
    let mut captions = Vec::new();
    let mut stack: Vec<&Block> = page.blocks.iter().collect();
    while let Some(b) = stack.pop() {
        if let Block::Image { caption, source } = b {
            assert!(matches!(source, MediaSource::Embedded(f) if f.mime == "image/png"));
            captions.push(caption.iter().map(|r| r.visible_text()).collect::<String>());
        }
        stack.extend(b.children());
    }
    assert!(captions.iter().any(|c| c == "Play button"), "{captions:?}");
    validate::blocks(&page.blocks).unwrap();
}

#[test]
fn attachments_become_file_blocks_with_their_names_and_bytes() {
    let s = lone("apache-tika/testOneNoteEmbeddedWordDoc.one");
    let page = open(&s).convert(&s.pages[0].id).unwrap();
    assert_eq!(page.title, "Embedded doc sheet");
    let name = "Dude this is a super cool embedded doc.docx";
    let file = page
        .blocks
        .iter()
        .find_map(|b| match b {
            Block::File {
                source: MediaSource::Embedded(f),
                name: n,
                ..
            } => Some((f.clone(), n.clone())),
            _ => None,
        })
        .expect("a file block");
    assert_eq!(file.1.as_deref(), Some(name));
    assert_eq!(file.0.name, name);
    // The attachment's bytes exactly: its size, a ZIP (docx) header, and its pinned hash.
    assert_eq!(file.0.bytes.len(), 11_791);
    assert!(file.0.bytes.starts_with(b"PK\x03\x04"));
    assert_eq!(fnv(&file.0.bytes), 0xd60b_e7a6_91e2_50e1);
}

#[test]
fn a_notebook_folder_keeps_groups_order_and_leaves_the_recycle_bin_out() {
    let imp = scan("onenote.rs/samples");
    assert!(imp.sections.is_empty());
    assert_eq!(imp.notebooks.len(), 1);
    let nb = &imp.notebooks[0];
    assert_eq!(nb.name, "samples");
    assert!(nb.sections.is_empty());
    assert_eq!(nb.section_groups.len(), 1, "{nb:#?}");
    let g = &nb.section_groups[0];
    assert_eq!(g.name, "New Section Group");
    let names: Vec<&str> = g.sections.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["New Section 1", "New Section 2"]);
    let bin = notebridge::imports::absolute(&sample("onenote.rs/samples/OneNote_RecycleBin"));
    assert_eq!(
        imp.recycle_bin.as_deref(),
        Some(bin.unwrap().as_path()),
        "by its absolute path, as the platform spells it"
    );
    let all: Vec<String> = imp
        .all_sections()
        .iter()
        .map(|(trail, s)| format!("{}/{}", trail.join("/"), s.name))
        .collect();
    assert_eq!(
        all,
        [
            "samples/New Section Group/New Section 1",
            "samples/New Section Group/New Section 2"
        ]
    );
    let s2 = &g.sections[1];
    let titles: Vec<&str> = s2.pages.iter().map(|p| p.title.as_str()).collect();
    assert_eq!(titles, ["Test Page 3", "Test Page 4"]);

    // The picture and the attachment of the second section, with their bytes.
    let parsed = open(s2);
    let pic = embedded(&parsed.convert(&s2.pages[0].id).unwrap());
    assert_eq!(pic.len(), 1);
    assert_eq!(
        (pic[0].name.as_str(), pic[0].mime.as_str()),
        ("dummy_1.png", "image/png")
    );
    assert_eq!(pic[0].bytes.len(), 27_146);
    assert_eq!(fnv(&pic[0].bytes), 0x7565_9e1c_3bee_1d44);
    let page4 = parsed.convert(&s2.pages[1].id).unwrap();
    let mp3 = embedded(&page4);
    assert_eq!(mp3[0].name, "ff-16b-2c-44100hz.mp3");
    assert_eq!(mp3[0].bytes.len(), 77_279);
    assert_eq!(fnv(&mp3[0].bytes), 0xad6c_6138_093a_25f6);
    assert!(
        matches!(&page4.blocks[1], Block::File { name: Some(n), .. } if n == "ff-16b-2c-44100hz.mp3")
    );
}

#[test]
fn a_table_of_contents_names_the_notebook_by_its_folder() {
    let imp = scan("onenote.rs/samples/New Section Group/Open Notebook.onetoc2");
    let nb = &imp.notebooks[0];
    assert_eq!(nb.name, "New Section Group");
    let names: Vec<&str> = nb.sections.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["New Section 1", "New Section 2"]);
    // The same section files give the same ids whichever way the notebook was reached.
    let folder = scan("onenote.rs/samples");
    assert_eq!(folder.notebooks[0].section_groups[0].sections, nb.sections);
    assert!(
        matches!(&nb.sections[0].location, SectionLocation::File(p) if p.ends_with("New Section 1.one"))
    );
}

/// A notebook's sections: each one's name, and whether it was read.
fn names_read(nb: &FileNotebook) -> Vec<(&str, bool)> {
    nb.sections
        .iter()
        .map(|s| (s.name.as_str(), s.problem.is_none()))
        .collect()
}

#[test]
fn a_table_of_contents_finds_its_sections_in_other_letter_case_where_the_platform_does() {
    // A notebook copied through a tool that changed a file name's case: OneNote on Windows still
    // opens it, so must notebridge there and on macOS; on Linux the names differ.
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("Notizbuch Größe");
    std::fs::create_dir(&dir).unwrap();
    let from = sample("onenote.rs/samples/New Section Group");
    for (name, as_name) in [
        ("Open Notebook.onetoc2", "Open Notebook.onetoc2"),
        ("New Section 1.one", "NEW SECTION 1.one"),
        ("New Section 2.one", "New Section 2.one"),
    ] {
        std::fs::copy(from.join(name), dir.join(as_name)).unwrap();
    }
    let imp = onefile::scan(&dir).unwrap();
    let nb = &imp.notebooks[0];
    let found = names_read(nb);
    if notebridge::platform::CASE_INSENSITIVE_PATHS {
        assert_eq!(found, [("New Section 1", true), ("New Section 2", true)]);
        // Read, not only listed: the pages the file has under the name OneNote wrote.
        let pages = |s: &FileSection| s.pages.iter().map(|p| p.id.clone()).collect::<Vec<_>>();
        let original = scan("onenote.rs/samples/New Section Group");
        let want = pages(&original.notebooks[0].sections[0]);
        assert!(!want.is_empty());
        assert_eq!(pages(&nb.sections[0]), want, "read, not only listed");
    } else {
        assert_eq!(
            found,
            [
                ("New Section 1", false),
                ("New Section 2", true),
                ("NEW SECTION 1", true)
            ]
        );
        let p = nb.sections[0].problem.as_ref().unwrap();
        assert_eq!(p.kind, ProblemKind::Missing);
    }
}

/// A copy of "New Section Group" whose table of contents names its first section `toc_name`
/// (UTF-16 code units as many as "New Section 1", written over it: a crafted file, no sample
/// has a non-ASCII section name) and whose first section file is named `file_name`.
fn notebook_naming_its_first_section(toc_name: &str, file_name: &str) -> tempfile::TempDir {
    let t = tempfile::tempdir().unwrap();
    let from = sample("onenote.rs/samples/New Section Group");
    let utf16 = |s: &str| -> Vec<u8> { s.encode_utf16().flat_map(u16::to_le_bytes).collect() };
    let (old, new) = (utf16("New Section 1.one"), utf16(toc_name));
    assert_eq!(old.len(), new.len(), "{toc_name}");
    let mut toc = std::fs::read(from.join("Open Notebook.onetoc2")).unwrap();
    let at = toc
        .windows(old.len())
        .position(|w| w == old.as_slice())
        .expect("the contents name New Section 1.one");
    toc[at..at + old.len()].copy_from_slice(&new);
    std::fs::write(t.path().join("Open Notebook.onetoc2"), toc).unwrap();
    std::fs::copy(from.join("New Section 1.one"), t.path().join(file_name)).unwrap();
    std::fs::copy(
        from.join("New Section 2.one"),
        t.path().join("New Section 2.one"),
    )
    .unwrap();
    t
}

#[test]
fn a_table_of_contents_finds_its_sections_in_the_other_unicode_normalisation_where_the_platform_does(
) {
    // "Nèw Section 1" composed (è, U+00E8), as OneNote writes it on Windows, against decomposed
    // (e + U+0300), as HFS+ lists any name; and the other way round ("Nè Section 1" keeps the
    // length of the name it replaces in either form). macOS finds the file by either form, so
    // must notebridge there; on Windows and Linux they are two names.
    let same = "N\u{e8}w Section 1.one";
    let t = notebook_naming_its_first_section(same, same);
    let imp = onefile::scan(t.path()).unwrap();
    let read: Vec<bool> = imp.notebooks[0]
        .sections
        .iter()
        .map(|s| s.problem.is_none())
        .collect();
    assert_eq!(
        read,
        [true, true],
        "the crafted contents, in one form everywhere"
    );
    for (toc_name, file_name) in [
        ("N\u{e8}w Section 1.one", "Ne\u{300}w Section 1.one"),
        ("Ne\u{300} Section 1.one", "N\u{e8} Section 1.one"),
    ] {
        let t = notebook_naming_its_first_section(toc_name, file_name);
        let imp = onefile::scan(t.path()).unwrap();
        let nb = &imp.notebooks[0];
        let found = names_read(nb);
        if notebridge::platform::NORMALIZATION_INSENSITIVE_PATHS {
            assert_eq!(found.len(), 2, "{toc_name:?}: {found:?}");
            assert!(found.iter().all(|(_, read)| *read), "{found:?}");
            assert_eq!(nb.sections[0].pages.len(), 1, "read, not only listed");
        } else {
            assert_eq!(found.len(), 3, "{toc_name:?}: {found:?}");
            let p = nb.sections[0].problem.as_ref().expect("two names here");
            assert_eq!(p.kind, ProblemKind::Missing);
            assert!(nb.sections[2].problem.is_none(), "{found:?}");
        }
    }
}

#[test]
fn a_notebook_lists_each_bad_section_with_its_reason_and_reads_the_rest() {
    let imp = scan("interop-testsuites/SUT");
    let nb = &imp.notebooks[0];
    let by = |name: &str| {
        nb.sections
            .iter()
            .find(|s| s.name == name)
            .unwrap_or_else(|| panic!("{name} in {nb:#?}"))
    };
    let enc = by("Encryption");
    let p = enc.problem.as_ref().unwrap();
    assert_eq!(p.kind, ProblemKind::Encrypted);
    assert!(p.reason.contains("password-protected"), "{}", p.reason);
    assert!(
        p.reason.contains("unlock it in OneNote, then export"),
        "{}",
        p.reason
    );
    assert!(enc.pages.is_empty());
    // Named in the table of contents, not on disk.
    let missing = by("LargeData");
    assert_eq!(missing.problem.as_ref().unwrap().kind, ProblemKind::Missing);
    assert!(missing
        .problem
        .as_ref()
        .unwrap()
        .reason
        .contains("LargeData.one"));
    // The readable sections are read, the one on disk that the contents do not name included.
    assert!(by("OneWithoutFileData").problem.is_none());
    assert_eq!(by("OneWithoutFileData").pages.len(), 1);
    assert!(by("FileSyncWOPI_OneNoteWithODB").problem.is_none());
    // Opening a bad section gives the same problem.
    assert_eq!(
        onefile::open_section(&enc.location).unwrap_err().kind,
        ProblemKind::Encrypted
    );
}

#[test]
fn a_damaged_section_fails_alone_with_the_parsers_reason() {
    // (`testOneNote-fuzz3.one` keeps its first page: `files_damaged`.)
    for rel in [
        "apache-tika/testOneNote-fuzz1.one",
        "apache-tika/testOneNote-fuzz2.one",
    ] {
        let s = lone(rel);
        let p = s.problem.as_ref().unwrap_or_else(|| panic!("{rel} read"));
        assert_eq!(p.kind, ProblemKind::Damaged, "{rel}");
        assert!(p.reason.contains("cannot be read ("), "{}", p.reason);
        assert!(
            p.reason.ends_with(
                "the damage is in the section's own records, so none of its pages can be read"
            ),
            "{}",
            p.reason
        );
        // A stable id from the file's own header, so a later run knows it again.
        assert_eq!(lone(rel).id, s.id);
    }
}

#[test]
fn a_package_is_one_notebook_read_entry_by_entry() {
    let imp = scan("obsidian-importer/makecab-lzx-notebook.onepkg");
    assert_eq!(imp.notebooks.len(), 1);
    let nb = &imp.notebooks[0];
    assert_eq!(nb.name, "makecab-lzx-notebook");
    assert_eq!(nb.sections.len(), 1);
    let s = &nb.sections[0];
    assert_eq!(s.name, "Compressed section");
    let SectionLocation::Package { package, entry } = &s.location else {
        panic!("{:?}", s.location);
    };
    assert_eq!(entry, "Compressed section.one");
    assert!(package.ends_with("makecab-lzx-notebook.onepkg"));
    // OfficeIMO wrote this section, not OneNote, leaving out properties OneNote always writes
    // (authors, outline levels and indents): it is read all the same.
    assert!(s.problem.is_none(), "{:?}", s.problem);
    assert_eq!(s.pages.len(), 1);
    assert_eq!(s.pages[0].title, "Compressed page");
    let page = open(s).convert(&s.pages[0].id).unwrap();
    validate::blocks(&page.blocks).unwrap();
    assert!(texts(&page.blocks).iter().any(|t| !t.trim().is_empty()));
    let stored = s.location.to_stored();
    assert_eq!(
        SectionLocation::from_stored(&stored).as_ref(),
        Some(&s.location)
    );
    // An entry that is not in the package is missing, not a crash.
    let gone = SectionLocation::Package {
        package: package.clone(),
        entry: "Nope.one".into(),
    };
    assert_eq!(
        onefile::open_section(&gone).unwrap_err().kind,
        ProblemKind::Missing
    );
}

#[test]
fn a_section_gone_since_the_scan_is_missing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("Notes.one");
    std::fs::copy(sample("apache-tika/testOneNote2016.one"), &path).unwrap();
    let s = onefile::scan(&path).unwrap().sections.remove(0);
    assert!(s.problem.is_none());
    std::fs::remove_file(&path).unwrap();
    let p = onefile::open_section(&s.location).unwrap_err();
    assert_eq!(p.kind, ProblemKind::Missing);
    assert!(p.reason.contains("Notes.one"), "{}", p.reason);
}

#[test]
fn what_is_not_onenote_is_a_usage_error_naming_the_path() {
    let dir = tempfile::tempdir().unwrap();
    let text = dir.path().join("notes.one");
    std::fs::write(&text, "just some text\n").unwrap();
    let fake_pkg = dir.path().join("backup.onepkg");
    std::fs::write(&fake_pkg, b"PK\x03\x04 not a cabinet").unwrap();
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    std::fs::write(empty.join("readme.txt"), "hi").unwrap();
    for (path, want) in [
        (text.clone(), "a text file, named .one"),
        (fake_pkg.clone(), "not a cabinet"),
    ] {
        let e = onefile::scan(&path).unwrap_err();
        assert!(matches!(e, FilesError::NotOneNote { .. }), "{e}");
        assert_eq!(e.meaning(), Some(Meaning::Usage));
        let msg = e.to_string();
        assert!(msg.contains(&path.display().to_string()), "{msg}");
        assert!(msg.contains(want), "{msg}");
    }
    let e = onefile::scan(&empty).unwrap_err();
    assert!(matches!(e, FilesError::NoOneNoteFiles { .. }), "{e}");
    assert_eq!(e.meaning(), Some(Meaning::Usage));
    assert!(e.to_string().contains("empty"));
    let e = onefile::scan(&dir.path().join("absent.one")).unwrap_err();
    assert!(matches!(e, FilesError::Io { .. }), "{e}");
    assert_eq!(e.meaning(), Some(Meaning::Usage));
}

#[test]
fn every_readable_sample_page_converts_to_blocks_notion_takes() {
    let mut pages = 0;
    for rel in [
        "apache-tika",
        "interop-testsuites/SUT",
        "interop-testsuites/MS-ONESTORE-Resources/AlternativePackaging.one",
        "onenote.rs/samples",
    ] {
        let path = sample(rel);
        let imports: Vec<FileImport> = if path.is_dir() && rel == "apache-tika" {
            // A folder of unrelated sections: each file by itself.
            let mut files: Vec<PathBuf> = std::fs::read_dir(&path)
                .unwrap()
                .map(|e| e.unwrap().path())
                .collect();
            files.sort();
            files.iter().map(|f| onefile::scan(f).unwrap()).collect()
        } else {
            vec![onefile::scan(&path).unwrap()]
        };
        for imp in imports {
            for (_, s) in imp.all_sections() {
                if s.problem.is_some() {
                    continue;
                }
                let parsed = open(s);
                for p in &s.pages {
                    // A page that cannot be read says so (a fuzzer's output has one).
                    let Some(page) = parsed.convert(&p.id) else {
                        assert!(parsed.unreadable(&p.id).is_some(), "{} {}", s.name, p.order);
                        continue;
                    };
                    validate::blocks(&page.blocks)
                        .unwrap_or_else(|e| panic!("{} {}: {e}", s.name, p.order));
                    pages += 1;
                }
            }
        }
    }
    assert!(pages >= 15, "{pages} pages");
}

/// A `.onepkg` made like OneNote's export: a cabinet (MSZIP) holding a notebook's `.onetoc2` and
/// section files, here the `onenote.rs` group's, one of them in a sub-folder of the cabinet.
fn package_of(dir: &Path, files: &[(&str, PathBuf)]) -> PathBuf {
    let mut builder = cab::CabinetBuilder::new();
    let folder = builder.add_folder(cab::CompressionType::MsZip);
    for (name, _) in files {
        folder.add_file(*name);
    }
    let path = dir.join("Exported.onepkg");
    let mut w = builder
        .build(std::fs::File::create(&path).unwrap())
        .unwrap();
    let mut i = 0;
    while let Some(mut f) = w.next_file().unwrap() {
        std::io::Write::write_all(&mut f, &std::fs::read(&files[i].1).unwrap()).unwrap();
        i += 1;
    }
    w.finish().unwrap();
    path
}

#[test]
fn a_package_export_gives_its_sections_read_from_the_cabinet() {
    let dir = tempfile::tempdir().unwrap();
    let g = "onenote.rs/samples/New Section Group";
    let pkg = package_of(
        dir.path(),
        &[
            (
                "Open Notebook.onetoc2",
                sample(&format!("{g}/Open Notebook.onetoc2")),
            ),
            (
                "New Section 1.one",
                sample(&format!("{g}/New Section 1.one")),
            ),
            (
                "New Section 2.one",
                sample(&format!("{g}/New Section 2.one")),
            ),
            (
                r"OneNote_RecycleBin\OneNote_DeletedPages.one",
                sample("onenote.rs/samples/OneNote_RecycleBin/OneNote_DeletedPages.one"),
            ),
        ],
    );
    let imp = onefile::scan(&pkg).unwrap();
    let nb = &imp.notebooks[0];
    assert_eq!(nb.name, "Exported");
    // The same sections, ids and pages as from the folder, read from the package's entries.
    let folder = scan(&format!("{g}/Open Notebook.onetoc2"));
    let want = &folder.notebooks[0].sections;
    assert_eq!(nb.sections.len(), 2, "{nb:#?}");
    for (got, want) in nb.sections.iter().zip(want) {
        assert_eq!(
            (&got.id, &got.name, &got.pages),
            (&want.id, &want.name, &want.pages)
        );
        assert!(
            matches!(&got.location, SectionLocation::Package { entry, .. } if entry.ends_with(".one"))
        );
    }
    assert_eq!(
        nb.id, folder.notebooks[0].id,
        "the table of contents' own GUID"
    );
    assert!(imp
        .recycle_bin
        .as_ref()
        .is_some_and(|p| p.to_string_lossy().ends_with("OneNote_RecycleBin")));
    // A page converted from the package carries its picture's bytes, as from the folder.
    let s2 = &nb.sections[1];
    let stored = s2.location.to_stored();
    let again = SectionLocation::from_stored(&stored).unwrap();
    let page = onefile::open_section(&again)
        .unwrap()
        .convert(&s2.pages[0].id)
        .unwrap();
    let pic = embedded(&page);
    assert_eq!(pic[0].bytes.len(), 27_146);
    assert_eq!(fnv(&pic[0].bytes), 0x7565_9e1c_3bee_1d44);
}
