//! The parsed section files a run holds, for both readers of section files (an import from files,
//! `queue::file_pages`; a section downloaded from OneDrive or SharePoint, `queue::drive_pages`): a
//! section is parsed at most once per run (the first page to need it does it; the others wait for
//! that), kept while its pages convert, then released, so a run holds the data of the sections
//! being worked on, not of all of them.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crate::onefile::ParsedSection;
use crate::store::Db;

/// Sections parsed and kept although no page is converting from them (their next pages may come
/// soon); beyond these, an idle section is released at once.
const IDLE_KEPT: usize = 1;

/// A section: (inventory key, section id).
pub(super) type SectionKey = (String, String);

/// One section: its parsed file (or why it cannot be read), the pages converting from it now, and
/// what its reader keeps beside it (`T`: where its download is).
pub(super) struct Slot<T> {
    /// The parsed file, or the section's reason it cannot be read.
    pub(super) parsed: tokio::sync::OnceCell<Result<Arc<ParsedSection>, String>>,
    users: Mutex<usize>,
    /// The reader's own.
    pub(super) extra: T,
}

/// What became of a section when a page was done with it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Released {
    /// Still in use, or kept for its next pages.
    Kept,
    /// Let go from memory while pages of it are still to come (too many idle sections).
    Idle,
    /// Let go with nothing more of it to read in this run.
    Done,
}

/// The sections one run holds.
pub(super) struct OpenSections<T> {
    open: Arc<Mutex<HashMap<SectionKey, Arc<Slot<T>>>>>,
}

impl<T> Default for OpenSections<T> {
    fn default() -> Self {
        Self {
            open: Arc::default(),
        }
    }
}

impl<T> Clone for OpenSections<T> {
    fn clone(&self) -> Self {
        Self {
            open: Arc::clone(&self.open),
        }
    }
}

impl<T> OpenSections<T> {
    /// Section `id` for one more page (held until [`release`](Self::release)); `extra` makes its
    /// reader's part when the section is not held yet.
    pub(super) fn enter(&self, id: &SectionKey, extra: impl FnOnce() -> T) -> Arc<Slot<T>> {
        let mut open = self.open.lock().expect("open sections poisoned");
        let slot = open
            .entry(id.clone())
            .or_insert_with(|| {
                Arc::new(Slot {
                    parsed: tokio::sync::OnceCell::new(),
                    users: Mutex::new(0),
                    extra: extra(),
                })
            })
            .clone();
        *slot.users.lock().expect("slot poisoned") += 1;
        slot
    }

    /// Lets go of every section held (the run is over; a page still converting keeps its own).
    pub(super) fn clear(&self) {
        self.open.lock().expect("open sections poisoned").clear();
    }

    /// One page is done with section `id`; it is released when nothing more of it is to be read
    /// in this run, or when it is idle and others are kept idle already. The count of pages left
    /// is read off the runtime, outside the map's lock; a page that took the section up meanwhile
    /// keeps it.
    pub(super) async fn release(
        &self,
        db: &Arc<Db>,
        id: &SectionKey,
        slot: &Arc<Slot<T>>,
    ) -> Released {
        let users = {
            let _open = self.open.lock().expect("open sections poisoned");
            let mut u = slot.users.lock().expect("slot poisoned");
            *u -= 1;
            *u
        };
        if users > 0 {
            return Released::Kept;
        }
        // This page's own job is still running: anything beyond it is another page to come.
        let (k, s) = id.clone();
        let left = db
            .call(move |db| db.pages_left_in_section(&k, &s))
            .await
            .unwrap_or(0);
        let mut open = self.open.lock().expect("open sections poisoned");
        let taken_up = *slot.users.lock().expect("slot poisoned") > 0;
        let same = open.get(id).is_some_and(|s| Arc::ptr_eq(s, slot));
        if taken_up || !same {
            return Released::Kept;
        }
        let idle = open
            .values()
            .filter(|s| *s.users.lock().expect("slot poisoned") == 0)
            .count();
        if left <= 1 {
            open.remove(id);
            Released::Done
        } else if idle > IDLE_KEPT {
            open.remove(id);
            Released::Idle
        } else {
            Released::Kept
        }
    }
}
