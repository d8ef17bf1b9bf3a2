//! The run's counters, read by the progress display and the summary.

use std::sync::atomic::{AtomicU64, Ordering};

use super::drive_pages;

/// Counters of one run.
#[derive(Debug, Default)]
pub struct RunStats {
    /// OneNote pages written.
    pub pages: AtomicU64,
    /// Notebook, section group and section pages created.
    pub containers: AtomicU64,
    /// Blocks written.
    pub blocks: AtomicU64,
    /// Files uploaded.
    pub files: AtomicU64,
    /// Bytes uploaded.
    pub bytes: AtomicU64,
    /// Items failed for good in this run.
    pub failed: AtomicU64,
    /// Approximations reported by the converter.
    pub approximations: AtomicU64,
    /// Resources replaced by placeholders.
    pub placeholders: AtomicU64,
    /// Pages found edited in Notion in this run: left as they are, their OneNote version kept
    /// beside them.
    pub conflicts: AtomicU64,
    /// Pages of `pages` that were rewritten in place (changed in OneNote since written).
    pub rewritten: AtomicU64,
    /// Pages of `rewritten` whose new version converted to the body already in Notion under the
    /// same title: nothing of them was written (`queue::unchanged`).
    pub unchanged: AtomicU64,
    /// Links rewritten by the link pass.
    pub links: AtomicU64,
    /// Pages to be created whose content is fetched and whose write has not ended, now (they
    /// wait for their turn, or are being written).
    pub ahead: AtomicU64,
    /// The most pages that were ever ahead at once (at most the workers: each holds one).
    pub ahead_peak: AtomicU64,
    /// Bytes of files fetched before their page's turn.
    pub prefetched_bytes: AtomicU64,
    /// Section files parsed for imports from files (once per section while its pages are
    /// converted, not once per page).
    pub sections_opened: AtomicU64,
    /// Counts the job transitions recorded (and plans added): what a progress display waits on.
    pub transitions: tokio::sync::watch::Sender<u64>,
    /// What was read from section files in OneDrive or SharePoint (`--via`).
    pub from_drive: drive_pages::FileStats,
}

/// One page counted in [`RunStats::ahead`] while it lives.
pub(super) struct HeldAhead<'a>(&'a RunStats);

impl<'a> HeldAhead<'a> {
    pub(super) fn enter(stats: &'a RunStats) -> Self {
        let now = stats.ahead.fetch_add(1, Ordering::SeqCst) + 1;
        stats.ahead_peak.fetch_max(now, Ordering::SeqCst);
        HeldAhead(stats)
    }
}

impl Drop for HeldAhead<'_> {
    fn drop(&mut self) {
        self.0.ahead.fetch_sub(1, Ordering::SeqCst);
    }
}
