//! Planning each section's way (`--via`): the decision for the source ([`super::way::decide`]),
//! then, for the files way, each notebook's folder of section files found through the drive API
//! from the links the scan recorded ([`crate::drive::DriveClient::locate`]: a few drive requests
//! per notebook) and each inventory section matched with its file by its
//! place in the notebook (section-group folders, then the section's name). A section whose file is
//! not found goes through the OneNote API, and the plan says why.

use std::collections::HashMap;

use super::events::Event;
use super::plan::{PlanError, Planner};
use super::way::{decide, kind_of_key, lines, Decision};
use crate::drive::locate::{DriveOwner, NotebookLinks};
use crate::drive::{FileHash, SectionFile};
use crate::graph::sources::account_of_key;
use crate::graph::sources::{source_of_key, SourceKind};
use crate::graph::Caller;
use crate::store::inventory::{Notebook, Section};
use crate::store::ways::{DriveFile, FilesLeft, SectionWay, ShownWay, Way};

/// The ways planned for a key's sections (stored unless a dry run), and the plan's lines that say
/// which sections take which way.
pub(super) struct PlannedWays {
    ways: Vec<SectionWay>,
    notes: Vec<String>,
}

impl Planner<'_> {
    /// Plans the way of every section of `notebooks` under the inventory key `key` (`label` names
    /// it in events) and stores it (a dry run keeps it only in what it returns). Called before the
    /// key's jobs are recorded: a kill between the two must not leave planned sections with no
    /// way, which a resume would read through the API instead of their files.
    pub(super) async fn plan_ways(
        &self,
        who: &Caller,
        key: &str,
        label: &str,
        notebooks: &[Notebook],
        read_from_files: &[SectionWay],
    ) -> Result<PlannedWays, PlanError> {
        let account = account_of_key(key).to_owned();
        let granted = self.db.call(move |db| db.granted_scopes(&account)).await?;
        let decision = decide(self.via, kind_of_key(key), granted.as_deref());
        let mut ways = Vec::new();
        // Each section's name and its notebook's, for the plan's lines.
        let mut names: HashMap<&str, (&str, &str)> = HashMap::new();
        for nb in notebooks {
            let sections = nb.sections_by_path();
            for (_, s) in &sections {
                names.insert(s.id.as_str(), (s.name.as_str(), nb.name.as_str()));
            }
            match decision.way {
                Way::Api => ways.extend(sections.into_iter().map(|(_, s)| api(key, s, &decision))),
                Way::Files => {
                    ways.extend(self.locate(who, key, nb, sections, &decision).await?);
                }
            }
        }
        // A section Graph listed empty whose file holds its pages is read from that file, whatever
        // way its source takes (`engine::listed_empty`).
        for w in ways.iter_mut() {
            if let Some(f) = read_from_files
                .iter()
                .find(|f| f.section_id == w.section_id)
            {
                *w = f.clone();
            }
        }
        let shown: Vec<ShownWay> = ways
            .iter()
            .map(|w| {
                let (section, notebook) = names
                    .get(w.section_id.as_str())
                    .copied()
                    .unwrap_or((w.section_id.as_str(), ""));
                ShownWay {
                    way: w.clone(),
                    section: section.to_owned(),
                    notebook: notebook.to_owned(),
                }
            })
            .collect();
        let notes = lines(&shown)
            .into_iter()
            .map(|line| format!("{label}: {line}"))
            .collect();
        if self.owner.is_some() {
            let now = self.clock.now_ms();
            let saved = ways.clone();
            self.db
                .call(move |db| db.save_section_ways(&saved, now))
                .await?;
        }
        Ok(PlannedWays { ways, notes })
    }

    /// Tells which way the key's sections take (after its plan's own line) and returns what of its
    /// work is read from section files, once its jobs are planned (a dry run: previewed from the
    /// inventory).
    pub(super) async fn files_left(
        &self,
        key: &str,
        planned: PlannedWays,
    ) -> Result<FilesLeft, PlanError> {
        let PlannedWays { ways, notes } = planned;
        for note in notes {
            self.observer.event(Event::Note(note));
        }
        let (k, preview) = (key.to_owned(), self.owner.is_none());
        Ok(self
            .db
            .call(move |db| {
                if preview {
                    return db.preview_files_left(&k, &ways);
                }
                db.files_left(&k)
            })
            .await?)
    }
}

impl Planner<'_> {
    /// The `files` way for each section of notebook `nb`: its folder found from the notebook's
    /// links, each section matched with its file by place and name. A notebook whose folder cannot
    /// be found, and a section without a file, fall back to the API with the reason; a failure
    /// that is the run's (a sign-in, an outage, a throttle past the deadline) ends planning.
    async fn locate(
        &self,
        who: &Caller,
        key: &str,
        nb: &Notebook,
        sections: Vec<(Vec<String>, &Section)>,
        d: &Decision,
    ) -> Result<Vec<SectionWay>, PlanError> {
        let fell_back = |s: &Section, why: String| SectionWay {
            fell_back: Some(why),
            ..files(key, s, d, None)
        };
        let (k, id) = (key.to_owned(), nb.id.clone());
        let urls = self.db.call(move |db| db.notebook_urls(&k, &id)).await?;
        if urls.client_url.is_none() && urls.web_url.is_none() {
            let why = "the notebook's links are not known (the scan did not get them)".to_owned();
            return Ok(sections
                .into_iter()
                .map(|(_, s)| fell_back(s, why.clone()))
                .collect());
        }
        let links = notebook_links(key, urls);
        let found = match self.drive.locate(who, &links).await {
            Ok(f) => f,
            Err(e) if e.falls_back() => {
                let why = format!("the notebook's folder could not be read: {e}");
                return Ok(sections
                    .into_iter()
                    .map(|(_, s)| fell_back(s, why.clone()))
                    .collect());
            }
            Err(e) => return Err(PlanError::Drive(e)),
        };
        // Section and group names are matched as OneNote shows them: file names without `.one`,
        // in any case (OneDrive's names are case-insensitive).
        let key_of =
            |path: &[String]| -> Vec<String> { path.iter().map(|p| p.to_lowercase()).collect() };
        let by_path: HashMap<Vec<String>, &SectionFile> = found
            .sections
            .iter()
            .map(|f| (key_of(&f.path), f))
            .collect();
        Ok(sections
            .into_iter()
            .map(|(path, s)| match by_path.get(&key_of(&path)) {
                Some(f) => files(key, s, d, Some(drive_file(f))),
                None => fell_back(
                    s,
                    format!(
                        "no file {}.one was found in the notebook's folder",
                        path.join("/")
                    ),
                ),
            })
            .collect())
    }
}

/// Where a notebook's folder is to be found: its links, in the drive of the source it was listed
/// from (the account's own, a group's or a site's).
pub(super) fn notebook_links(key: &str, urls: crate::store::ways::NotebookUrls) -> NotebookLinks {
    NotebookLinks {
        web_url: urls.web_url,
        client_url: urls.client_url,
        owner: match source_of_key(key) {
            Some((SourceKind::Group, id)) => DriveOwner::Group(id.to_owned()),
            Some((SourceKind::Site, id)) => DriveOwner::Site(id.to_owned()),
            Some((SourceKind::Personal, _)) | None => DriveOwner::Me,
        },
    }
}

/// A section file as a section's way keeps it.
pub(super) fn drive_file(f: &SectionFile) -> DriveFile {
    DriveFile {
        drive_id: f.drive_id.clone(),
        item_id: f.item_id.clone(),
        size: f.size,
        ctag: f.ctag.clone(),
        hash: f.hash.as_ref().map(FileHash::stored),
    }
}

/// The file of the section at `path` (section-group names, then its own) among `files`, compared
/// as OneNote shows names: without `.one`, in any case (OneDrive's names are case-insensitive).
pub(super) fn file_at<'f>(files: &'f [SectionFile], path: &[String]) -> Option<&'f SectionFile> {
    files.iter().find(|f| {
        f.path.len() == path.len()
            && f.path
                .iter()
                .zip(path)
                .all(|(a, b)| a.to_lowercase() == b.to_lowercase())
    })
}

/// A section planned from its file.
pub(super) fn files(key: &str, s: &Section, d: &Decision, file: Option<DriveFile>) -> SectionWay {
    SectionWay {
        key: key.to_owned(),
        section_id: s.id.clone(),
        way: Way::Files,
        reason: d.reason.clone(),
        file,
        fell_back: None,
        pages_by_api: 0,
    }
}

/// A section planned through the API.
fn api(key: &str, s: &Section, d: &Decision) -> SectionWay {
    SectionWay {
        key: key.to_owned(),
        section_id: s.id.clone(),
        way: Way::Api,
        reason: d.reason.clone(),
        file: None,
        fell_back: None,
        pages_by_api: 0,
    }
}
