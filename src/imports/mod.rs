//! Imports from OneNote's own files (`scan --from`, `migrate --from`): what the reader
//! ([`crate::onefile`]) finds under a path, as the inventory the rest of notebridge plans, writes
//! and verifies from. An import is a source of its own, keyed `files:{id}` by the path
//! ([`crate::store::imports`]); its ids are the files' GUIDs, and a page's GUID is also stored in
//! the form Graph's route stores it, so links resolve and a page read both ways is one page.

use std::path::{Path, PathBuf};

use crate::clock::UnixMillis;
use crate::failure::{Class, Classify, Next, Scope};
use crate::onefile::{self, FileImport, FileSection, FileSectionGroup, FilesError};
use crate::store::imports::StoredSection;
use crate::store::inventory::{Notebook, Page, ScanScope, Section, SectionGroup};
use crate::store::jobs::RunToken;
use crate::store::{Db, StoreError};

/// The notebook that holds the sections of an import of section files on their own (a lone
/// `.one`): it has no Notion page of its own, its page is the target, so its sections go straight
/// under the target. No GUID is this word.
pub const LOOSE_NOTEBOOK: &str = "sections";

/// Why an import's files could not be read at all.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// The reader refused the path (not OneNote, none in a folder, unreadable).
    #[error(transparent)]
    Files(#[from] FilesError),
    /// The path could not be made absolute (the working folder is gone).
    #[error("{path}: cannot tell where it is: {source}")]
    Path {
        /// The path as given.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The reader stopped unexpectedly (a bug): nothing of the import is planned.
    #[error("reading {path} stopped unexpectedly: {message}")]
    Reader {
        /// The path.
        path: PathBuf,
        /// The panic's message.
        message: String,
    },
}

impl Classify for ImportError {
    fn class(&self) -> Class {
        match self {
            ImportError::Files(e) => e.class(),
            ImportError::Path { .. } => {
                Class::new(Scope::Run, Next::Never).means(crate::failure::Meaning::Usage)
            }
            ImportError::Reader { .. } => Class::new(Scope::Run, Next::Never),
        }
    }
}

/// `path` made absolute (without resolving links), as an import is recorded.
pub fn absolute(path: &Path) -> Result<PathBuf, ImportError> {
    std::path::absolute(path).map_err(|source| ImportError::Path {
        path: path.to_owned(),
        source,
    })
}

/// Fails with what [`read`] would say when `path` cannot be read at all (it does not exist, or it
/// may not be opened), without reading it: a run names a mistyped path before it asks any service
/// anything, which may mean waiting out an outage first.
pub async fn check_reachable(path: &Path) -> Result<(), ImportError> {
    match tokio::fs::metadata(path).await {
        Ok(_) => Ok(()),
        Err(source) => Err(onefile::FilesError::Io {
            path: path.to_owned(),
            source,
        }
        .into()),
    }
}

/// Reads what the files under `path` hold, on the blocking pool (parsing is CPU work and blocking
/// reads, never for a runtime thread).
pub async fn read(path: &Path) -> Result<FileImport, ImportError> {
    let owned = path.to_owned();
    match tokio::task::spawn_blocking(move || onefile::scan(&owned)).await {
        Ok(r) => Ok(r?),
        Err(e) => Err(ImportError::Reader {
            path: path.to_owned(),
            message: e.to_string(),
        }),
    }
}

/// The GUID of a page as Graph's route stores it (`pages.onenote_guid`: lower case, in braces).
pub fn link_guid(id: &str) -> String {
    format!("{{{}}}", id.trim_matches(['{', '}']).to_ascii_lowercase())
}

/// A section the reader could not read, with its reason.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unreadable {
    /// Its id.
    pub section_id: String,
    /// Its name.
    pub name: String,
    /// The reader's reason (what is wrong and how to fix it).
    pub reason: String,
}

impl std::fmt::Display for Unreadable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "section {:?} ({}) could not be read: {}",
            self.name, self.section_id, self.reason
        )
    }
}

/// A page of a readable section that cannot be read itself (it is damaged): it is planned with
/// the others, and fails alone, with this reason.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnreadablePage {
    /// Its section's id.
    pub section_id: String,
    /// Its section's name.
    pub section: String,
    /// Its id.
    pub page_id: String,
    /// Its title (or the name of its place, when its title cannot be read either).
    pub title: String,
    /// The reader's reason.
    pub reason: String,
}

impl std::fmt::Display for UnreadablePage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "page {:?} ({}) of section {:?}: {}",
            self.title, self.page_id, self.section, self.reason
        )
    }
}

/// An import as the inventory holds it.
#[derive(Clone, Debug, Default)]
pub struct Inventory {
    /// The notebooks, in the order of the files (sections imported on their own under
    /// [`LOOSE_NOTEBOOK`]).
    pub notebooks: Vec<Notebook>,
    /// Whether the import is of sections on their own.
    pub loose: bool,
    /// Where each section is read from.
    pub sections: Vec<StoredSection>,
    /// Sections that could not be read (they are in `notebooks`, without pages).
    pub problems: Vec<Unreadable>,
    /// Pages of readable sections that cannot be read (they are in `notebooks`).
    pub damaged_pages: Vec<UnreadablePage>,
    /// Page id -> the GUID links use for it.
    pub guids: Vec<(String, String)>,
}

impl Inventory {
    /// The inventory of what the reader found.
    pub fn of(import: &FileImport) -> Self {
        let mut inv = Inventory::default();
        for nb in &import.notebooks {
            let (section_groups, sections) = inv.children(&nb.section_groups, &nb.sections);
            inv.notebooks.push(Notebook {
                id: nb.id.clone(),
                name: nb.name.clone(),
                created: None,
                last_modified: None,
                section_groups,
                sections,
            });
        }
        if !import.sections.is_empty() {
            let (_, sections) = inv.children(&[], &import.sections);
            let name = import.path.file_name().map_or_else(
                || import.path.display().to_string(),
                |n| n.to_string_lossy().into_owned(),
            );
            inv.loose = true;
            inv.notebooks.push(Notebook {
                id: LOOSE_NOTEBOOK.to_owned(),
                name,
                created: None,
                last_modified: None,
                section_groups: Vec::new(),
                sections,
            });
        }
        inv
    }

    /// Section groups nest as deep as the folders on disk; the reader gives them as a tree and
    /// this walks it with an explicit stack of the groups still to convert.
    fn children(
        &mut self,
        groups: &[FileSectionGroup],
        sections: &[FileSection],
    ) -> (Vec<SectionGroup>, Vec<Section>) {
        let top = sections.iter().map(|s| self.section(s)).collect();
        // (group, path of indexes from the top to where its converted copy goes)
        let mut out: Vec<SectionGroup> = Vec::new();
        let mut stack: Vec<(&FileSectionGroup, Vec<usize>)> = groups
            .iter()
            .enumerate()
            .rev()
            .map(|(i, g)| (g, vec![i]))
            .collect();
        while let Some((g, at)) = stack.pop() {
            let converted = SectionGroup {
                id: g.id.clone(),
                name: g.name.clone(),
                created: None,
                last_modified: None,
                section_groups: Vec::new(),
                sections: g.sections.iter().map(|s| self.section(s)).collect(),
            };
            let (last, parents) = at.split_last().expect("never empty");
            let mut list = &mut out;
            for &i in parents {
                list = &mut list[i].section_groups;
            }
            debug_assert_eq!(list.len(), *last);
            list.push(converted);
            for (i, child) in g.section_groups.iter().enumerate().rev() {
                let mut path = at.clone();
                path.push(i);
                stack.push((child, path));
            }
        }
        (out, top)
    }

    fn section(&mut self, s: &FileSection) -> Section {
        self.sections.push(StoredSection {
            section_id: s.id.clone(),
            location: s.location.to_stored(),
            problem: s.problem.as_ref().map(|p| p.reason.clone()),
        });
        if let Some(p) = &s.problem {
            self.problems.push(Unreadable {
                section_id: s.id.clone(),
                name: s.name.clone(),
                reason: p.reason.clone(),
            });
        }
        let pages = s
            .pages
            .iter()
            .map(|p| {
                self.guids.push((p.id.clone(), link_guid(&p.id)));
                if let Some(reason) = &p.problem {
                    self.damaged_pages.push(UnreadablePage {
                        section_id: s.id.clone(),
                        section: s.name.clone(),
                        page_id: p.id.clone(),
                        title: p.title.clone(),
                        reason: reason.clone(),
                    });
                }
                Page {
                    id: p.id.clone(),
                    title: p.title.clone(),
                    level: i64::from(p.level),
                    order: i64::from(p.order),
                    last_modified: p.last_modified.clone(),
                    created: p.created.clone(),
                    content_url: None,
                    author: p.author.clone(),
                    web_url: None,
                }
            })
            .collect();
        Section {
            id: s.id.clone(),
            name: s.name.clone(),
            created: None,
            last_modified: None,
            pages,
        }
    }
}

/// Stores an import's inventory under its key `key`: its items, the GUIDs of its pages and where
/// each section is read from. What the files no longer hold is marked deleted, as a re-scan does.
pub fn store(db: &Db, key: &str, inv: &Inventory, now: UnixMillis) -> Result<(), StoreError> {
    db.save_scan(key, &inv.notebooks, &ScanScope::All, now)?;
    db.save_page_guids(key, &inv.guids)?;
    db.save_file_sections(key, &inv.sections)
}

/// Records the notebook that stands for sections imported on their own as written, its page the
/// target `target` itself (see [`LOOSE_NOTEBOOK`]), unless it has a record already.
pub fn record_loose_notebook(
    db: &Db,
    owner: &RunToken,
    key: &str,
    item: &str,
    target: &str,
) -> Result<(), StoreError> {
    if db.notion_item(key, item)?.is_some() {
        return Ok(());
    }
    use crate::store::notion_items::{ItemKind, Written};
    // Nothing but the page: no body, no files, no report.
    db.record_intent(owner, key, item, ItemKind::Notebook, target, "")?
        .created(db, owner, target)?
        .written(db, owner, &Written::default())
        .map(drop)
}

/// The plan's line about a recycle bin left out.
pub fn recycle_bin_note(bin: &Path) -> String {
    format!(
        "the recycle bin ({}) is left out: what was deleted in OneNote is not migrated",
        bin.display()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::onefile::{FileNotebook, FilePage, SectionLocation};

    fn section(id: &str, pages: &[&str]) -> FileSection {
        FileSection {
            id: id.into(),
            name: id.to_uppercase(),
            location: SectionLocation::File(format!("/n/{id}.one").into()),
            pages: pages
                .iter()
                .enumerate()
                .map(|(i, p)| FilePage {
                    id: (*p).into(),
                    title: p.to_uppercase(),
                    level: 0,
                    order: i as u32,
                    created: None,
                    last_modified: None,
                    author: None,
                    problem: None,
                })
                .collect(),
            problem: None,
        }
    }

    #[test]
    fn nested_groups_keep_their_order_and_depth() {
        let deep = FileSectionGroup {
            id: "g2".into(),
            name: "G2".into(),
            section_groups: vec![],
            sections: vec![section("s3", &["p3"])],
        };
        let import = FileImport {
            path: "/n".into(),
            notebooks: vec![FileNotebook {
                id: "nb".into(),
                name: "NB".into(),
                section_groups: vec![
                    FileSectionGroup {
                        id: "g1".into(),
                        name: "G1".into(),
                        section_groups: vec![deep],
                        sections: vec![section("s2", &["p2"])],
                    },
                    FileSectionGroup {
                        id: "g3".into(),
                        name: "G3".into(),
                        section_groups: vec![],
                        sections: vec![],
                    },
                ],
                sections: vec![section("s1", &["p1", "p1b"])],
            }],
            sections: vec![],
            recycle_bin: None,
            missing_folders: Vec::new(),
            unreadable_tocs: Vec::new(),
        };
        let inv = Inventory::of(&import);
        assert!(!inv.loose);
        let nb = &inv.notebooks[0];
        assert_eq!(nb.sections[0].pages.len(), 2);
        let ids: Vec<_> = nb.section_groups.iter().map(|g| g.id.as_str()).collect();
        assert_eq!(ids, ["g1", "g3"]);
        assert_eq!(nb.section_groups[0].section_groups[0].id, "g2");
        assert_eq!(nb.section_groups[0].section_groups[0].sections[0].id, "s3");
        assert_eq!(inv.sections.len(), 3);
        assert_eq!(inv.guids[0], ("p1".into(), "{p1}".into()));
    }

    #[test]
    fn a_lone_section_stands_under_the_loose_notebook_and_problems_are_listed() {
        let mut s = section("s1", &[]);
        s.problem = Some(crate::onefile::SectionProblem {
            kind: crate::onefile::ProblemKind::Encrypted,
            reason: "password protected".into(),
        });
        let import = FileImport {
            path: "/n/Locked.one".into(),
            notebooks: vec![],
            sections: vec![s],
            recycle_bin: None,
            missing_folders: Vec::new(),
            unreadable_tocs: Vec::new(),
        };
        let inv = Inventory::of(&import);
        assert!(inv.loose);
        assert_eq!(inv.notebooks[0].id, LOOSE_NOTEBOOK);
        assert_eq!(inv.notebooks[0].name, "Locked.one");
        assert_eq!(inv.problems.len(), 1);
        assert!(inv.problems[0].to_string().contains("password protected"));
        assert_eq!(
            inv.sections[0].problem.as_deref(),
            Some("password protected")
        );
    }

    #[test]
    fn a_damaged_page_is_listed_with_its_section() {
        let mut s = section("s1", &["p1", "p2"]);
        s.pages[1].problem = Some("the page cannot be read".into());
        let import = FileImport {
            path: "/n/S.one".into(),
            notebooks: vec![],
            sections: vec![s],
            recycle_bin: None,
            missing_folders: Vec::new(),
            unreadable_tocs: Vec::new(),
        };
        let inv = Inventory::of(&import);
        assert!(inv.problems.is_empty());
        assert_eq!(inv.notebooks[0].sections[0].pages.len(), 2);
        assert_eq!(
            inv.damaged_pages,
            [UnreadablePage {
                section_id: "s1".into(),
                section: "S1".into(),
                page_id: "p2".into(),
                title: "P2".into(),
                reason: "the page cannot be read".into(),
            }]
        );
        assert!(inv.damaged_pages[0].to_string().contains("\"P2\""));
    }

    #[test]
    fn link_guids_are_in_graphs_form() {
        assert_eq!(link_guid("ABC-1"), "{abc-1}");
        assert_eq!(link_guid("{abc-1}"), "{abc-1}");
    }
}
