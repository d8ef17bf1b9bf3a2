//! The walk of a notebook's folder: its section files (`*.one`) and its section groups (folders),
//! level by level from a queue, never by recursion, with bounds on depth, entries and listing pages
//! so that a hostile or broken folder tree cannot hold the client or its memory.
//!
//! What a synced notebook's folder holds (OneNote's files as `onefile` reads them): a `.one` file
//! per section, a folder per section group, `Open Notebook.onetoc2` (the table of contents, not
//! needed here) and `OneNote_RecycleBin` (deleted sections and pages), which is not walked.

use std::collections::VecDeque;

use super::model::DriveItem;
use super::SectionFile;

/// The folder of deleted sections and pages, which is not part of the notebook.
const RECYCLE_BIN: &str = "OneNote_RecycleBin";
/// A section file's extension.
const SECTION_EXTENSION: &str = ".one";

/// How far a walk may go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bounds {
    /// Section-group levels below the notebook.
    pub depth: usize,
    /// Children seen in all.
    pub entries: usize,
    /// Listing pages asked for in all.
    pub listings: usize,
}

/// Far beyond any notebook people keep (OneNote's own limits are a few thousand sections), near
/// enough that a hostile tree costs little.
pub const BOUNDS: Bounds = Bounds {
    depth: 32,
    entries: 20_000,
    listings: 1_000,
};

/// A folder waiting to be listed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Folder {
    /// Its item id.
    pub id: String,
    /// The section-group names from the notebook down to it (empty for the notebook).
    pub path: Vec<String>,
}

/// The walk so far.
#[derive(Debug)]
pub struct Walk {
    bounds: Bounds,
    drive_id: String,
    pending: VecDeque<Folder>,
    sections: Vec<SectionFile>,
    entries: usize,
    listings: usize,
}

impl Walk {
    /// A walk of the notebook folder `root` in drive `drive_id`.
    pub fn new(drive_id: &str, root: &str, bounds: Bounds) -> Self {
        Self {
            bounds,
            drive_id: drive_id.to_owned(),
            pending: VecDeque::from([Folder {
                id: root.to_owned(),
                path: Vec::new(),
            }]),
            sections: Vec::new(),
            entries: 0,
            listings: 0,
        }
    }

    /// The next folder to list, if any.
    pub fn next_folder(&mut self) -> Option<Folder> {
        self.pending.pop_front()
    }

    /// Counts one more listing page; the bound's name when it is over.
    pub fn listing(&mut self) -> Result<(), String> {
        self.listings += 1;
        if self.listings > self.bounds.listings {
            return Err(format!("{} listing pages", self.bounds.listings));
        }
        Ok(())
    }

    /// Takes one page of `folder`'s children: section files are kept, section-group folders
    /// queued; the bound's name when one is passed.
    pub fn take(&mut self, folder: &Folder, items: Vec<DriveItem>) -> Result<(), String> {
        self.entries += items.len();
        if self.entries > self.bounds.entries {
            return Err(format!("{} entries", self.bounds.entries));
        }
        for item in items {
            if item.folder.is_some() {
                if item.name == RECYCLE_BIN {
                    continue;
                }
                if folder.path.len() >= self.bounds.depth {
                    return Err(format!("{} section-group levels", self.bounds.depth));
                }
                let mut path = folder.path.clone();
                path.push(item.name);
                self.pending.push_back(Folder { id: item.id, path });
            } else if item.file.is_some() {
                let Some(name) = section_name(&item.name) else {
                    continue;
                };
                let mut path = folder.path.clone();
                path.push(name.to_owned());
                let hash = super::FileHash::of(&item);
                self.sections.push(SectionFile {
                    path,
                    // The walk's drive spelt as the drive's own answer spells it, unless the item
                    // is in another drive (onedrive-api-docs#1890: a personal id may come
                    // without its leading zero or in other case).
                    drive_id: match item.parent.and_then(|p| p.drive_id) {
                        Some(d) if !super::locate::same_drive(&d, &self.drive_id) => {
                            super::locate::canonical_drive_id(&d).into_owned()
                        }
                        Some(_) | None => self.drive_id.clone(),
                    },
                    item_id: item.id,
                    size: item.size.unwrap_or(0),
                    ctag: item.ctag,
                    modified: item.modified,
                    hash,
                });
            }
        }
        Ok(())
    }

    /// The section files found, the notebook's own first, then each section group's level by
    /// level, each folder's in the order the drive listed them.
    pub fn sections(self) -> Vec<SectionFile> {
        self.sections
    }
}

/// The section's name of a `.one` file name (without the extension, any case), `None` for other
/// files.
fn section_name(file: &str) -> Option<&str> {
    let cut = file.len().checked_sub(SECTION_EXTENSION.len())?;
    let (name, ext) = (file.get(..cut)?, file.get(cut..)?);
    (ext.eq_ignore_ascii_case(SECTION_EXTENSION) && !name.is_empty()).then_some(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(json: serde_json::Value) -> DriveItem {
        serde_json::from_value(json).unwrap()
    }

    fn file(id: &str, name: &str, size: u64) -> DriveItem {
        item(
            serde_json::json!({"id": id, "name": name, "size": size, "file": {}, "cTag": format!("c-{id}")}),
        )
    }

    fn folder(id: &str, name: &str) -> DriveItem {
        item(serde_json::json!({"id": id, "name": name, "folder": {"childCount": 1}}))
    }

    #[test]
    fn sections_and_groups_are_found_level_by_level_and_the_rest_left() {
        let mut w = Walk::new("d1", "nb", BOUNDS);
        let root = w.next_folder().unwrap();
        w.take(
            &root,
            vec![
                file("s1", "Math.one", 10),
                file("toc", "Open Notebook.onetoc2", 1),
                folder("g1", "Term 1"),
                folder("bin", RECYCLE_BIN),
                file("s2", "Notes.ONE", 20),
                file("x", ".one", 1),
            ],
        )
        .unwrap();
        let g = w.next_folder().unwrap();
        assert_eq!(g.path, vec!["Term 1".to_owned()]);
        w.take(&g, vec![file("s3", "Week 1.one", 30), folder("g2", "Deep")])
            .unwrap();
        let d = w.next_folder().unwrap();
        w.take(&d, vec![file("s4", "Inner.one", 40)]).unwrap();
        assert!(w.next_folder().is_none(), "the recycle bin is not walked");
        let s = w.sections();
        let paths: Vec<Vec<&str>> = s
            .iter()
            .map(|s| s.path.iter().map(String::as_str).collect())
            .collect();
        assert_eq!(
            paths,
            vec![
                vec!["Math"],
                vec!["Notes"],
                vec!["Term 1", "Week 1"],
                vec!["Term 1", "Deep", "Inner"],
            ]
        );
        assert_eq!(
            (s[3].drive_id.as_str(), s[3].item_id.as_str(), s[3].size),
            ("d1", "s4", 40)
        );
        assert_eq!(s[0].ctag.as_deref(), Some("c-s1"));
    }

    #[test]
    fn a_tree_deeper_or_wider_than_the_bounds_stops_the_walk() {
        let small = Bounds {
            depth: 3,
            entries: 50,
            listings: 10,
        };
        // A chain of folders one inside the other: the walk refuses the level past the bound,
        // with memory of one folder at a time.
        let mut w = Walk::new("d", "nb", small);
        let mut levels = 0;
        let err = loop {
            let f = w.next_folder().expect("a folder is queued at each level");
            match w.take(&f, vec![folder(&format!("f{levels}"), "g")]) {
                Ok(()) => levels += 1,
                Err(e) => break e,
            }
        };
        assert_eq!(levels, 3);
        assert!(err.contains("3 section-group levels"), "{err}");
        // Too many children in all.
        let mut w = Walk::new("d", "nb", small);
        let root = w.next_folder().unwrap();
        let many = (0..51).map(|i| file(&i.to_string(), "a.one", 1)).collect();
        assert!(w.take(&root, many).unwrap_err().contains("50 entries"));
        // Too many listing pages.
        let mut w = Walk::new("d", "nb", small);
        for _ in 0..10 {
            w.listing().unwrap();
        }
        assert!(w.listing().unwrap_err().contains("10 listing pages"));
    }

    #[test]
    fn only_one_files_are_sections() {
        assert_eq!(section_name("Math.one"), Some("Math"));
        assert_eq!(section_name("a.b.One"), Some("a.b"));
        assert_eq!(section_name(".one"), None);
        assert_eq!(section_name("Open Notebook.onetoc2"), None);
        assert_eq!(section_name("one"), None);
        assert_eq!(section_name("é.one"), Some("é"));
        assert_eq!(section_name("éone"), None);
    }
}
