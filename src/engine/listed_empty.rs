//! Sections Graph listed empty. Graph has listed every section of some accounts empty while they
//! held pages (microsoft-graph-explorer-v4#3935, 2025-08 and 2026-03), and its listing of all pages
//! can be empty too, so no listing proves a section empty. Every notebook the OneNote API reads
//! lives in OneDrive or SharePoint: a section listed empty is read from its section file, as
//! `--via files` reads it (its notebook's folder found from its links, the file downloaded to where
//! the queue reads it, so it is not downloaded twice). Pages found there are planned and read from
//! the file; a file that holds no page confirms an empty section; a section confirmed neither way is
//! failed with that reason, so its job, `status` and `verify` name it and `migrate --resume
//! --retry-failed` reads it again. Only sections listed empty cost these drive requests (the
//! drive, the folder by its path, its listings, the file).

use std::path::PathBuf;

use super::locate::{drive_file, file_at, files, notebook_links};
use super::plan::{PlanError, Planner};
use super::way::Decision;
use crate::drive::SectionFile;
use crate::graph::scan::{Evidence, ListedEmpty, ScanFailure, ScanResult};
use crate::graph::{Caller, GraphError};
use crate::imports::link_guid;
use crate::onefile::{self, FilePage, SectionLocation};
use crate::store::inventory::{Notebook, Page, Section};
use crate::store::ways::{NotebookUrls, SectionWay, Way};

/// What a section's file says of a section Graph listed empty.
#[derive(Debug, PartialEq)]
pub(super) enum Verdict {
    /// Its file holds these pages: they are read from it.
    Pages(Vec<FilePage>),
    /// Its file holds no page: the section is empty.
    Empty,
    /// Nothing confirms it: why (the section's job fails with this reason).
    Unconfirmed(String),
}

/// The verdict on a section Graph listed empty, from what Graph's listing of all pages said of it
/// and what its section file holds (or why the file could not be read). Only the file confirms an
/// emptiness; a file with no page against a listing that names pages confirms nothing.
pub(super) fn verdict(evidence: &Evidence, file: Result<Vec<FilePage>, String>) -> Verdict {
    match (file, evidence) {
        (Ok(pages), _) if !pages.is_empty() => Verdict::Pages(pages),
        (Ok(_), Evidence::Pages(_)) => Verdict::Unconfirmed(format!(
            "its page listing was empty, but {evidence}, while its section file holds no page"
        )),
        (Ok(_), _) => Verdict::Empty,
        (Err(why), Evidence::Pages(_)) => {
            Verdict::Unconfirmed(format!("its page listing was empty, but {evidence}; {why}"))
        }
        (Err(why), _) => Verdict::Unconfirmed(format!(
            "Graph listed no page in it ({evidence}), as Graph does for some accounts' sections \
             that hold pages, and {why}: nothing confirms it is empty"
        )),
    }
}

/// Why a section Graph listed empty is read from its file, as the plan's lines, `status` and the
/// report give a way's reason ("2 sections from their files (listed empty by Graph)").
pub const READ_FROM_FILE: &str = "listed empty by Graph";

/// What reading the files of the sections Graph listed empty found.
#[derive(Debug, Default)]
pub(super) struct FromFiles {
    /// The ways of the sections whose pages are read from their files, whatever `--via` says.
    pub ways: Vec<SectionWay>,
    /// What the run says of them.
    pub notes: Vec<String>,
    /// The sections confirmed neither way: (notebook id, section id).
    pub unconfirmed: Vec<(String, String)>,
}

impl Planner<'_> {
    /// Reads the section file of each section `result` lists as listed empty (under inventory key
    /// `key`): the pages found are put into the section in `result` (with their GUIDs, the ids
    /// the queue finds them by in the file), and a section confirmed neither way becomes one of
    /// `result`'s failures. A failure that is the run's (a sign-in, an outage, a throttle past the
    /// deadline) ends planning.
    pub(super) async fn read_listed_empty(
        &self,
        who: &Caller,
        key: &str,
        result: &mut ScanResult,
    ) -> Result<FromFiles, PlanError> {
        let mut out = FromFiles::default();
        let listed = std::mem::take(&mut result.listed_empty);
        if listed.is_empty() {
            return Ok(out);
        }
        let decision = Decision {
            way: Way::Files,
            reason: READ_FROM_FILE.to_owned(),
            missing: None,
        };
        let (mut read, mut empty) = (Vec::new(), Vec::new());
        for nb in &mut result.notebooks {
            let paths: Vec<(Vec<String>, &ListedEmpty)> = nb
                .sections_by_path()
                .into_iter()
                .filter_map(|(path, s)| Some((path, listed.iter().find(|l| l.id == s.id)?)))
                .collect();
            if paths.is_empty() {
                continue;
            }
            let urls = result.notebook_urls.iter().find(|u| u.id == nb.id).cloned();
            let folder = self.section_files(who, key, urls).await?;
            for (path, l) in paths {
                let file = match &folder {
                    Ok(fs) => file_at(fs, &path).cloned().ok_or_else(|| {
                        format!(
                            "no file {}.one was found in its notebook's folder",
                            path.join("/")
                        )
                    }),
                    Err(why) => Err(why.clone()),
                };
                let section = section_mut(nb, &l.id).expect("the section was found above");
                let (pages, way) = match file {
                    Ok(f) => {
                        let way = files(key, section, &decision, Some(drive_file(&f)));
                        (self.read_file(who, &way, &f).await?, Some(way))
                    }
                    Err(why) => (Err(why), None),
                };
                match verdict(&l.evidence, pages) {
                    Verdict::Pages(pages) => {
                        read.push(format!("{} ({} pages)", l.label, pages.len()));
                        for p in &pages {
                            result.page_guids.push((p.id.clone(), link_guid(&p.id)));
                        }
                        section.pages = pages.into_iter().map(page_of).collect();
                        out.ways.extend(way);
                    }
                    Verdict::Empty => empty.push(l.label.clone()),
                    Verdict::Unconfirmed(why) => {
                        out.unconfirmed.push((nb.id.clone(), l.id.clone()));
                        result.failures.push(ScanFailure {
                            kind: "section",
                            id: l.id.clone(),
                            label: l.label.clone(),
                            error: GraphError::BadAnswer {
                                account: who.account.clone(),
                                item: l.label.clone(),
                                problem: why,
                            },
                            listed_empty: true,
                        });
                    }
                }
            }
        }
        if !read.is_empty() {
            out.notes.push(format!(
                "Graph listed no page in {}, whose section files hold pages (Graph lists some \
                 accounts' sections empty while they hold pages): their pages are migrated from \
                 the files: {}",
                plural(read.len()),
                read.join(", ")
            ));
        }
        if !empty.is_empty() {
            out.notes.push(format!(
                "Graph listed no page in {}, and their section files hold none: {}",
                plural(empty.len()),
                empty.join(", ")
            ));
        }
        Ok(out)
    }

    /// Records, for a real run, which sections of the notebooks `result` holds nothing confirmed
    /// (a retry of their failed jobs scans those notebooks again); the others' records go.
    pub(super) async fn record_unconfirmed(
        &self,
        key: &str,
        result: &ScanResult,
        from_files: &FromFiles,
    ) -> Result<(), PlanError> {
        if self.owner.is_none() {
            return Ok(());
        }
        let k = key.to_owned();
        let scanned: Vec<String> = result.notebooks.iter().map(|n| n.id.clone()).collect();
        let unconfirmed = from_files.unconfirmed.clone();
        self.db
            .call(move |db| db.save_unconfirmed_sections(&k, &scanned, &unconfirmed))
            .await?;
        Ok(())
    }

    /// The section files of the notebook whose links the scan found (`urls`), or why they
    /// cannot be had.
    async fn section_files(
        &self,
        who: &Caller,
        key: &str,
        urls: Option<NotebookUrls>,
    ) -> Result<Result<Vec<SectionFile>, String>, PlanError> {
        let Some(urls) = urls.filter(|u| u.client_url.is_some() || u.web_url.is_some()) else {
            return Ok(Err(
                "its notebook's links are not known (the scan did not get them), so its section \
                 file cannot be found"
                    .to_owned(),
            ));
        };
        match self.drive.locate(who, &notebook_links(key, urls)).await {
            Ok(found) => Ok(Ok(found.sections)),
            Err(e) if e.falls_back() => {
                Ok(Err(format!("its notebook's folder could not be read: {e}")))
            }
            Err(e) => Err(PlanError::Drive(e)),
        }
    }

    /// The pages section file `f` holds, downloaded to where the queue reads the section `way`
    /// plans (it stays there when it holds pages and the run is real), or why it cannot be read.
    async fn read_file(
        &self,
        who: &Caller,
        way: &SectionWay,
        f: &SectionFile,
    ) -> Result<Result<Vec<FilePage>, String>, PlanError> {
        let dir = crate::queue::downloads_dir(self.db.path());
        let dest = crate::queue::section_download(&dir, way).expect("the way names its file");
        match self.drive.download(who, f, &dest).await {
            Ok(_) => {}
            Err(e) if e.falls_back() => {
                remove(&dest);
                return Ok(Err(format!(
                    "its section file could not be downloaded: {e}"
                )));
            }
            Err(e) => return Err(PlanError::Drive(e)),
        }
        let location = SectionLocation::File(dest.clone());
        let opened = tokio::task::spawn_blocking(move || {
            // The parsed section holds its file open; it goes before the file may be removed.
            onefile::open_section(&location).map(|parsed| parsed.pages())
        })
        .await;
        let pages = match opened {
            Ok(Ok(pages)) => Ok(pages),
            Ok(Err(problem)) => Err(format!(
                "its section file could not be read: {}",
                problem.reason
            )),
            Err(e) => Err(format!(
                "reading its section file stopped unexpectedly: {e}"
            )),
        };
        // The queue reads a file that holds pages; nothing else is kept.
        if !matches!(&pages, Ok(p) if !p.is_empty()) || self.owner.is_none() {
            remove(&dest);
        }
        Ok(pages)
    }
}

/// Removes a download and its folder (one per section); a failure leaves it to the run's clean-up.
fn remove(dest: &std::path::Path) {
    let dir: Option<PathBuf> = dest.parent().map(std::path::Path::to_path_buf);
    if let Some(dir) = dir {
        let _ = std::fs::remove_dir_all(dir);
    }
}

/// An inventory page from a section file's page: its id is its OneNote GUID, as an import's is.
fn page_of(p: FilePage) -> Page {
    Page {
        id: p.id,
        title: p.title,
        level: i64::from(p.level),
        order: i64::from(p.order),
        last_modified: p.last_modified,
        created: p.created,
        content_url: None,
        author: p.author,
        web_url: None,
    }
}

/// The section `id` of notebook `nb`, at any depth.
fn section_mut<'a>(nb: &'a mut Notebook, id: &str) -> Option<&'a mut Section> {
    let mut stack = vec![(&mut nb.section_groups, &mut nb.sections)];
    while let Some((groups, sections)) = stack.pop() {
        if let Some(s) = sections.iter_mut().find(|s| s.id == id) {
            return Some(s);
        }
        for g in groups.iter_mut() {
            stack.push((&mut g.section_groups, &mut g.sections));
        }
    }
    None
}

fn plural(n: usize) -> String {
    if n == 1 {
        "1 section".to_owned()
    } else {
        format!("{n} sections")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(id: &str) -> FilePage {
        FilePage {
            id: id.into(),
            title: "A page".into(),
            level: 0,
            order: 0,
            created: None,
            last_modified: None,
            author: None,
            problem: None,
        }
    }

    #[test]
    fn pages_in_the_file_are_read_from_it_whatever_the_listings_said() {
        for evidence in [
            Evidence::Empty,
            Evidence::Pages(2),
            Evidence::None("failed too".into()),
        ] {
            assert_eq!(
                verdict(&evidence, Ok(vec![page("a")])),
                Verdict::Pages(vec![page("a")])
            );
        }
    }

    #[test]
    fn only_a_file_with_no_page_confirms_an_empty_section() {
        assert_eq!(verdict(&Evidence::Empty, Ok(Vec::new())), Verdict::Empty);
        assert_eq!(
            verdict(&Evidence::None("failed too".into()), Ok(Vec::new())),
            Verdict::Empty
        );
        // The other listing names pages: an empty file contradicts it, and confirms nothing.
        let Verdict::Unconfirmed(why) = verdict(&Evidence::Pages(1), Ok(Vec::new())) else {
            panic!("a contradiction is no confirmation");
        };
        assert!(why.contains("holds no page"), "{why}");
    }

    #[test]
    fn a_file_that_cannot_be_read_confirms_nothing_and_says_why() {
        let Verdict::Unconfirmed(why) = verdict(
            &Evidence::Empty,
            Err("its file could not be downloaded: 404".into()),
        ) else {
            panic!("an unread file is no confirmation");
        };
        assert!(
            why.contains("nothing confirms it is empty") && why.contains("404"),
            "{why}"
        );
        let Verdict::Unconfirmed(why) = verdict(&Evidence::Pages(2), Err("no file".into())) else {
            panic!("an unread file is no confirmation");
        };
        assert!(
            why.contains("its page listing was empty, but Graph's pages filtered by parentSection")
                && why.contains("no file"),
            "{why}"
        );
    }

    #[test]
    fn a_section_is_found_at_any_depth() {
        let section = |id: &str| Section {
            id: id.into(),
            name: id.into(),
            created: None,
            last_modified: None,
            pages: Vec::new(),
        };
        let group = |sections, groups| crate::store::inventory::SectionGroup {
            id: "g".into(),
            name: "g".into(),
            created: None,
            last_modified: None,
            section_groups: groups,
            sections,
        };
        let mut nb = Notebook {
            id: "nb".into(),
            name: "nb".into(),
            created: None,
            last_modified: None,
            section_groups: vec![group(vec![], vec![group(vec![section("deep")], vec![])])],
            sections: vec![section("top")],
        };
        assert!(section_mut(&mut nb, "deep").is_some());
        assert!(section_mut(&mut nb, "top").is_some());
        assert!(section_mut(&mut nb, "none").is_none());
    }
}
