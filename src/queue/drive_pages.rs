//! A page's content read from its section's `.one` file in OneDrive or SharePoint (`--via files`):
//! the section file is downloaded once per run through the drive API into the state directory
//! (streamed, checked against its size, resumed after a cut or a killed run), parsed once on the
//! blocking pool, kept while its pages convert, then released and its file removed. The page is
//! found in the file by its OneNote GUID, the same page either way. A section whose file cannot be
//! downloaded or read goes through the OneNote API instead, recorded with the reason; a page that
//! is not in its file goes through the API alone.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use sha2::{Digest, Sha256};

use crate::clock::{Clock, UnixMillis};
use crate::convert::ConvertedPage;
use crate::drive::{DriveClient, SectionFile};
use crate::graph::Caller;
use crate::onefile::{self, ParsedSection, SectionLocation};
use crate::store::ways::{SectionWay, Way};
use crate::store::{Db, StoreError};

use super::open_sections::{OpenSections, Released, SectionKey, Slot};
use super::JobError;

/// How a page's content is to be had.
pub(super) enum Read {
    /// Converted from its section's file.
    Page(ConvertedPage),
    /// Through the OneNote API, as its section was planned.
    Api,
    /// Through the OneNote API although its section was planned `files`: why.
    FellBack(String),
}

/// What this run read from section files, for its summary and progress.
#[derive(Debug, Default)]
pub struct FileStats {
    /// Section files downloaded and parsed.
    pub sections: AtomicU64,
    /// Pages converted from them.
    pub pages: AtomicU64,
    /// Pages of `files` sections read through the API instead.
    pub fell_back: AtomicU64,
}

/// The section files of one run.
#[derive(Clone)]
pub(super) struct DriveSections {
    drive: DriveClient,
    clock: Clock,
    /// Where downloads go: beside the state database.
    dir: PathBuf,
    /// Parsed section files, each with where it was downloaded.
    open: OpenSections<PathBuf>,
}

impl DriveSections {
    /// Section files read with `drive`, downloaded next to the database at `db_path`. Downloads a
    /// killed run left are kept for the sections still to read (they resume); the others go.
    pub(super) fn new(drive: DriveClient, db: &Arc<Db>, clock: Clock) -> Self {
        let dir = downloads_dir(db.path());
        let this = Self {
            drive,
            clock,
            dir,
            open: OpenSections::default(),
        };
        this.clean(db);
        this
    }

    /// Removes the downloads of sections with nothing left to read (at the start of a run: what a
    /// killed one left; at its end: what its last pages read, converted while a sibling was still
    /// being written). A partial download of a section still to read stays: it resumes.
    ///
    /// The parsed sections this run still holds are let go first (at its end, those kept for
    /// pages that were still being written): a parsed section keeps its file open, and Windows
    /// removes no folder with an open file in it.
    ///
    /// Submitted to the store's queue ([`Db::submit`]), not waited for: it lists and removes off
    /// the runtime, and runs before any later store call, so before any page of this run is read.
    pub(super) fn clean(&self, db: &Arc<Db>) {
        self.open.clear();
        let dir = self.dir.clone();
        db.submit(move |db| match db.sections_to_download() {
            Ok(live) => remove_stale(&dir, &live),
            Err(e) => tracing::warn!("could not list the section files still to read: {e}"),
        });
    }

    /// The drive client (its counters go in the run's summary).
    pub(super) fn client(&self) -> &DriveClient {
        &self.drive
    }

    /// Where the file of a `files` section is downloaded (see [`dest`]).
    fn dest(&self, w: &SectionWay) -> Option<PathBuf> {
        dest(&self.dir, w)
    }

    /// How page `page_id` of inventory key `key` is to be read; converted here when its section's
    /// file can be read. `item` names the page in messages. An error is the run's or the
    /// attempt's (a throttle longer than the time left, an outage, a sign-in), never the
    /// section's: those fall back.
    pub(super) async fn read(
        &self,
        db: &Arc<Db>,
        who: &Caller,
        key: &str,
        page_id: &str,
        item: &str,
        stats: &FileStats,
    ) -> Result<Read, JobError> {
        let (k, p) = (key.to_owned(), page_id.to_owned());
        let found = db
            .call(move |db| {
                let Some(section) = db.page_section(&k, &p)? else {
                    return Ok(None);
                };
                let Some(way) = db.section_way(&k, &section)? else {
                    return Ok(None);
                };
                let guid = match way.way == Way::Files && way.fell_back.is_none() {
                    true => db.page_guid(&k, &p)?,
                    false => None,
                };
                Ok::<_, StoreError>(Some((section, way, guid)))
            })
            .await?;
        let Some((section, way, guid)) = found else {
            return Ok(Read::Api);
        };
        if way.way != Way::Files {
            return Ok(Read::Api);
        }
        if let Some(why) = way.fell_back {
            by_api(db, key, &section, None, stats).await?;
            return Ok(Read::FellBack(why));
        }
        let Some(guid) = guid else {
            by_api(db, key, &section, None, stats).await?;
            return Ok(Read::FellBack(
                "its OneNote GUID is not known (the scan could not read its links)".into(),
            ));
        };
        let Some(dest) = self.dest(&way) else {
            let why = "no section file was found for it".to_owned();
            let at = self.clock.now_ms();
            by_api(db, key, &section, Some((&why, at)), stats).await?;
            return Ok(Read::FellBack(why));
        };
        let id = (key.to_owned(), section.clone());
        let slot = self.open.enter(&id, || dest.clone());
        let got = self
            .read_in(db, who, &slot, &way, &section, &guid, item, stats)
            .await;
        self.release(db, &id, slot).await;
        let got = got?;
        match got {
            Read::FellBack(ref why) => {
                by_api(db, key, &section, None, stats).await?;
                tracing::info!(item, "read through the OneNote API: {why}");
            }
            Read::Page(_) => {
                stats.pages.fetch_add(1, Ordering::Relaxed);
            }
            Read::Api => {}
        }
        Ok(got)
    }

    #[allow(clippy::too_many_arguments)]
    async fn read_in(
        &self,
        db: &Arc<Db>,
        who: &Caller,
        slot: &Slot<PathBuf>,
        way: &SectionWay,
        section: &str,
        guid: &str,
        item: &str,
        stats: &FileStats,
    ) -> Result<Read, JobError> {
        let parsed = slot
            .parsed
            .get_or_try_init(|| async {
                let (k, s) = (way.key.clone(), section.to_owned());
                let name = db
                    .call(move |db| db.item_name(&k, "section", &s))
                    .await?
                    .map_or_else(|| section.to_owned(), |(n, _)| n);
                let opened = self.fetch(who, way, &name, &slot.extra).await?;
                if opened.is_ok() {
                    stats.sections.fetch_add(1, Ordering::Relaxed);
                }
                Ok::<_, JobError>(opened)
            })
            .await?;
        let parsed = match parsed {
            Ok(p) => p.clone(),
            Err(why) => {
                let (k, s, w, at) = (
                    way.key.clone(),
                    section.to_owned(),
                    why.clone(),
                    self.clock.now_ms(),
                );
                db.call(move |db| db.record_fall_back(&k, &s, &w, at))
                    .await?;
                return Ok(Read::FellBack(why.clone()));
            }
        };
        let wanted = guid.to_owned();
        let section = Arc::clone(&parsed);
        let converted = tokio::task::spawn_blocking(move || {
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| parsed.convert(&wanted)))
        })
        .await;
        match converted {
            Ok(Ok(Some(page))) => Ok(Read::Page(page)),
            Ok(Ok(None)) => Ok(Read::FellBack(section.unreadable(guid).unwrap_or_else(
                || "it is not in its section file (added since the file was saved?)".into(),
            ))),
            Ok(Err(_)) | Err(_) => Err(JobError::permanent(format!(
                "{item}: failed while converting it from its section file"
            ))),
        }
    }

    /// Downloads and opens a section's file. The outer error ends the attempt (the run must stop
    /// or sign in again); the inner one is the section's reason to fall back.
    async fn fetch(
        &self,
        who: &Caller,
        way: &SectionWay,
        name: &str,
        dest: &Path,
    ) -> Result<Result<Arc<ParsedSection>, String>, JobError> {
        let f = way
            .file
            .as_ref()
            .expect("a section with a destination has a file");
        let file = SectionFile {
            path: vec![name.to_owned()],
            drive_id: f.drive_id.clone(),
            item_id: f.item_id.clone(),
            size: f.size,
            ctag: f.ctag.clone(),
            modified: None,
            hash: f
                .hash
                .as_deref()
                .and_then(crate::drive::FileHash::from_stored),
        };
        match self.drive.download(who, &file, dest).await {
            Ok(_) => {}
            Err(e) if e.falls_back() => {
                return Ok(Err(format!("its file could not be downloaded: {e}")));
            }
            Err(e) => return Err(JobError::classified(e, super::RunError::Drive)),
        }
        let location = SectionLocation::File(dest.to_owned());
        let opened = tokio::task::spawn_blocking(move || onefile::open_section(&location)).await;
        Ok(match opened {
            Ok(Ok(parsed)) => Ok(Arc::new(parsed)),
            Ok(Err(problem)) => Err(format!("its file could not be read: {}", problem.reason)),
            Err(e) => Err(format!("reading its file stopped unexpectedly: {e}")),
        })
    }

    /// One page is done with the section: when nothing more of it is to be read in this run, its
    /// file goes too; a section let go while idle keeps its file for its later pages.
    async fn release(&self, db: &Arc<Db>, id: &SectionKey, slot: Arc<Slot<PathBuf>>) {
        match self.open.release(db, id, &slot).await {
            Released::Done => {
                let dir = slot.extra.parent().map(Path::to_path_buf);
                // The parsed section reads its file on demand, so it holds it open until dropped,
                // and Windows removes no folder with an open file in it: it goes first (this was
                // its last holder: the map let go of it, and no other page has it).
                drop(slot);
                if let Some(dir) = dir {
                    remove_dir(&dir);
                }
                tracing::debug!(section = %id.1, "section file read and removed");
            }
            Released::Idle => {
                tracing::debug!(section = %id.1, "section file released; its download stays");
            }
            Released::Kept => {}
        }
    }
}

/// Removes the downloads under `dir` of sections that have nothing left to read, and of files
/// that changed.
fn remove_stale(dir: &Path, live: &[SectionWay]) {
    let keep: HashSet<PathBuf> = live.iter().filter_map(|w| dest(dir, w)).collect();
    let keep_dirs: HashSet<PathBuf> = keep
        .iter()
        .filter_map(|p| p.parent().map(Path::to_path_buf))
        .collect();
    let Ok(dirs) = std::fs::read_dir(dir) else {
        return;
    };
    for d in dirs.flatten() {
        let path = d.path();
        if !keep_dirs.contains(&path) {
            remove_dir(&path);
            continue;
        }
        for f in std::fs::read_dir(&path).into_iter().flatten().flatten() {
            // The file itself, or its partial download (`<file>.part`), which resumes.
            let name = f.file_name().to_string_lossy().into_owned();
            let kept = keep.iter().any(|k| {
                k.parent() == Some(path.as_path())
                    && k.file_name()
                        .is_some_and(|n| name.starts_with(&*n.to_string_lossy()))
            });
            if !kept {
                let _ = std::fs::remove_file(f.path());
            }
        }
    }
}

/// Where the file of a `files` section is downloaded: a folder per section, the file named by
/// its item and content tag, so a changed file is never taken for the one half-downloaded.
pub fn dest(dir: &Path, w: &SectionWay) -> Option<PathBuf> {
    let f = w.file.as_ref()?;
    let section = short_hash(&[&w.key, &w.section_id]);
    let file = short_hash(&[&f.drive_id, &f.item_id, f.ctag.as_deref().unwrap_or("")]);
    Some(dir.join(section).join(format!("{file}.one")))
}

/// Counts a page of section `section` of `key` read through the OneNote API, after recording
/// why the section falls back when `fell_back` says (with when); off the runtime.
async fn by_api(
    db: &Arc<Db>,
    key: &str,
    section: &str,
    fell_back: Option<(&str, UnixMillis)>,
    stats: &FileStats,
) -> Result<(), StoreError> {
    let (k, s) = (key.to_owned(), section.to_owned());
    let fell_back = fell_back.map(|(why, at)| (why.to_owned(), at));
    db.call(move |db| {
        if let Some((why, at)) = fell_back {
            db.record_fall_back(&k, &s, &why, at)?;
        }
        db.count_page_by_api(&k, &s)
    })
    .await?;
    stats.fell_back.fetch_add(1, Ordering::Relaxed);
    Ok(())
}

/// The folder of a database's section downloads: beside it, named after it.
pub fn downloads_dir(db_path: &Path) -> PathBuf {
    let name = db_path
        .file_name()
        .map_or_else(|| "notebridge".into(), |n| n.to_string_lossy().into_owned());
    db_path.with_file_name(format!("{name}.downloads"))
}

fn short_hash(parts: &[&str]) -> String {
    let mut h = Sha256::new();
    for p in parts {
        h.update(p.as_bytes());
        h.update([0u8]);
    }
    h.finalize()[..8]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn remove_dir(dir: &Path) {
    if let Err(e) = std::fs::remove_dir_all(dir) {
        if e.kind() != std::io::ErrorKind::NotFound {
            tracing::warn!(dir = %dir.display(), "could not remove a section download: {e}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn downloads_go_beside_the_database_named_after_it() {
        assert_eq!(
            downloads_dir(Path::new("/var/lib/nb/state.db")),
            Path::new("/var/lib/nb/state.db.downloads")
        );
    }

    #[test]
    fn a_files_name_changes_with_its_content_tag_and_parts_are_not_run_together() {
        let a = short_hash(&["d", "item", "ctag1"]);
        assert_eq!(a.len(), 16);
        assert_eq!(a, short_hash(&["d", "item", "ctag1"]));
        assert_ne!(a, short_hash(&["d", "item", "ctag2"]), "a changed file");
        assert_ne!(
            short_hash(&["ab", "c"]),
            short_hash(&["a", "bc"]),
            "each part is delimited"
        );
    }
}
