//! Faults of the drive service a test switches on while the server runs: throttling (the next
//! requests, or a request budget per window), server errors, transfers cut short or gone quiet,
//! a `Range` ignored, section files missing, garbled, grown since they were listed or too large,
//! and a notebook whose sharing URL does not resolve. The drive service is SharePoint
//! / OneDrive, not OneNote: none of these touch the OneNote switches ([`crate::graph::faults`]).

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::time::Instant;

/// A throttled answer: its status and its `Retry-After`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DriveThrottle {
    /// 429 (`activityLimitReached`) or 503 (`serviceNotAvailable`).
    pub status: u16,
    /// The `Retry-After` header, in whole seconds as SharePoint sends it; `None`: the answer
    /// carries none (SharePoint does not always send it, Microsoft Q&A 922050).
    pub retry_after: Option<Duration>,
}

#[derive(Debug, Default)]
struct Plan {
    throttle_next: VecDeque<DriveThrottle>,
    errors_next: VecDeque<u16>,
    /// Downloads still to go quiet, and after how many body bytes.
    stalls: VecDeque<u64>,
    ignore_range: bool,
    grown: HashMap<String, usize>,
    /// Requests per window per user, and the `Retry-After` past it.
    budget: Option<(u32, Duration, Duration)>,
    admitted: HashMap<String, VecDeque<Instant>>,
    /// Downloads still to cut, and after how many body bytes.
    cuts: VecDeque<u64>,
    hidden: HashSet<String>,
    lost: HashSet<String>,
    garbled: HashSet<String>,
    too_large: HashSet<String>,
    misreported: HashMap<String, u64>,
    unshared: HashSet<String>,
    url_lifetime: Option<Duration>,
}

/// The drive fault switchboard of one server; cheap to clone, usable from any task. Items are
/// named by their drive item id ([`super::FilesSection::item_id`]).
#[derive(Clone, Debug, Default)]
pub struct DriveFaults {
    plan: Arc<Mutex<Plan>>,
}

/// How long a pre-authenticated download URL is valid when no test changes it: the docs promise
/// "a short period of time (a few minutes)"
/// (<https://learn.microsoft.com/en-us/graph/api/driveitem-get-content>).
pub const DOWNLOAD_URL_LIFETIME: Duration = Duration::from_secs(300);

impl DriveFaults {
    fn plan(&self) -> std::sync::MutexGuard<'_, Plan> {
        self.plan.lock().expect("drive fault plan poisoned")
    }

    /// The next `n` drive requests (API calls and downloads alike) answer `status` (429 or 503)
    /// with `Retry-After: retry_after` (rounded up to whole seconds).
    pub fn throttle_next(&self, n: u32, status: u16, retry_after: Duration) {
        self.throttle(n, status, Some(retry_after));
    }

    /// The next `n` drive requests answer `status` (429 or 503) without a `Retry-After` header,
    /// as SharePoint sometimes does (Microsoft Q&A 922050: the client is to back off on its own).
    pub fn throttle_next_without_retry_after(&self, n: u32, status: u16) {
        self.throttle(n, status, None);
    }

    fn throttle(&self, n: u32, status: u16, retry_after: Option<Duration>) {
        assert!(
            status == 429 || status == 503,
            "drive throttling answers 429 or 503"
        );
        let t = DriveThrottle {
            status,
            retry_after,
        };
        self.plan()
            .throttle_next
            .extend(std::iter::repeat_n(t, n as usize));
    }

    /// The next `n` drive requests (API calls and downloads alike) answer `status`, a server
    /// error the service may give any request (500 `generalException`, 502, 504), and are not
    /// served.
    pub fn fail_next(&self, n: u32, status: u16) {
        assert!(
            matches!(status, 500 | 502 | 504),
            "a drive server error is 500, 502 or 504 (503 is throttling)"
        );
        self.plan()
            .errors_next
            .extend(std::iter::repeat_n(status, n as usize));
    }

    /// From now on each user may make `count` drive requests per sliding `window`; past it a
    /// request answers 429 with `Retry-After: retry_after` and is not counted (`None`: no budget).
    pub fn set_budget(&self, budget: Option<(u32, Duration, Duration)>) {
        let mut p = self.plan();
        p.budget = budget;
        p.admitted.clear();
    }

    /// The next `n` downloads send their headers (the full `Content-Length`) and then only
    /// `after_bytes` bytes of the body before the transfer fails.
    pub fn cut_downloads(&self, n: u32, after_bytes: u64) {
        self.plan()
            .cuts
            .extend(std::iter::repeat_n(after_bytes, n as usize));
    }

    /// The next `n` downloads send their headers (the full `Content-Length`) and `after_bytes`
    /// bytes of the body, then nothing more while the connection stays open (an answer that goes
    /// quiet; only the client's own timeout ends it).
    pub fn stall_downloads(&self, n: u32, after_bytes: u64) {
        self.plan()
            .stalls
            .extend(std::iter::repeat_n(after_bytes, n as usize));
    }

    /// Download URLs ignore `Range` and answer `200` with the whole file, which the docs allow:
    /// "If the range can't be generated the Range header may be ignored and an HTTP 200 response
    /// would be returned with the full contents of the file"
    /// (<https://learn.microsoft.com/en-us/graph/api/driveitem-get-content#partial-range-downloads>).
    pub fn ignore_range(&self, on: bool) {
        self.plan().ignore_range = on;
    }

    /// The file's downloads serve `extra` bytes more than it is listed with (it grew between the
    /// listing and the download; listings keep the old size); `0` switches it off.
    pub fn grow_after_listing(&self, item_id: &str, extra: usize) {
        let mut p = self.plan();
        if extra == 0 {
            p.grown.remove(item_id);
        } else {
            p.grown.insert(item_id.to_owned(), extra);
        }
    }

    /// The item is gone from the drive: absent from its folder's children, 404 when asked for.
    pub fn hide(&self, item_id: &str, on: bool) {
        toggle(&mut self.plan().hidden, item_id, on);
    }

    /// The item is listed, but its content answers 404 `itemNotFound` (deleted between the listing
    /// and the download).
    pub fn lose_content(&self, item_id: &str, on: bool) {
        toggle(&mut self.plan().lost, item_id, on);
    }

    /// The file's bytes are replaced by bytes that are no OneNote section (its header kept, the
    /// rest noise of the same length), as a file damaged in storage; its eTag changes.
    pub fn garble(&self, item_id: &str, on: bool) {
        toggle(&mut self.plan().garbled, item_id, on);
    }

    /// The file is announced over 2 GB (`size` 2 GiB more than its bytes) and its download URL
    /// answers 503 with an HTML page every time, as the service does for OneNote files over its
    /// 2 GB limit (OneDrive/onedrive-api-docs#1456 and #1638, alcionai/corso#2910).
    pub fn too_large(&self, item_id: &str, on: bool) {
        toggle(&mut self.plan().too_large, item_id, on);
    }

    /// The file is listed with `size` `listed` whatever its bytes (`None`: its own length), as
    /// OneDrive lists OneNote section files (field report: OneDrive/onedrive-api-docs#927, 170
    /// bytes listed and 10,116,025 downloaded; #1066 and #492 for other files). Its download
    /// serves its bytes with their own `Content-Length`, and its `quickXorHash` stays the bytes'.
    pub fn list_wrong_size(&self, item_id: &str, listed: Option<u64>) {
        let mut p = self.plan();
        match listed {
            Some(n) => p.misreported.insert(item_id.to_owned(), n),
            None => p.misreported.remove(item_id),
        };
    }

    pub(crate) fn listed_size(&self, id: &str) -> Option<u64> {
        self.plan().misreported.get(id).copied()
    }

    /// The notebook's web URL no longer resolves: `/shares/{id}/driveItem` answers 404.
    pub fn unshare(&self, notebook_item_id: &str, on: bool) {
        toggle(&mut self.plan().unshared, notebook_item_id, on);
    }

    /// Download URLs handed out from now on are valid this long ([`DOWNLOAD_URL_LIFETIME`] by
    /// default).
    pub fn set_download_url_lifetime(&self, lifetime: Duration) {
        self.plan().url_lifetime = Some(lifetime);
    }

    /// Switches every drive fault off.
    pub fn clear(&self) {
        *self.plan() = Plan::default();
    }

    /// Whether a request of `user` goes through, or the throttled answer it gets. A request past
    /// the budget is not counted in it (SharePoint counts what it serves).
    pub(crate) fn admit(&self, user: &str) -> Result<(), DriveThrottle> {
        let mut p = self.plan();
        if let Some(t) = p.throttle_next.pop_front() {
            return Err(t);
        }
        let Some((count, window, retry_after)) = p.budget else {
            return Ok(());
        };
        let now = Instant::now();
        let q = p.admitted.entry(user.to_owned()).or_default();
        while q.front().is_some_and(|t| now.duration_since(*t) >= window) {
            q.pop_front();
        }
        if q.len() as u64 >= u64::from(count) {
            return Err(DriveThrottle {
                status: 429,
                retry_after: Some(retry_after),
            });
        }
        q.push_back(now);
        Ok(())
    }

    /// The server error to answer instead of serving, when one is queued.
    pub(crate) fn take_error(&self) -> Option<u16> {
        self.plan().errors_next.pop_front()
    }

    pub(crate) fn take_stall(&self) -> Option<u64> {
        self.plan().stalls.pop_front()
    }

    pub(crate) fn ignores_range(&self) -> bool {
        self.plan().ignore_range
    }

    pub(crate) fn grown_by(&self, id: &str) -> usize {
        self.plan().grown.get(id).copied().unwrap_or(0)
    }

    pub(crate) fn take_cut(&self) -> Option<u64> {
        self.plan().cuts.pop_front()
    }

    pub(crate) fn is_hidden(&self, id: &str) -> bool {
        self.plan().hidden.contains(id)
    }

    pub(crate) fn is_lost(&self, id: &str) -> bool {
        self.plan().lost.contains(id)
    }

    pub(crate) fn is_garbled(&self, id: &str) -> bool {
        self.plan().garbled.contains(id)
    }

    pub(crate) fn is_too_large(&self, id: &str) -> bool {
        self.plan().too_large.contains(id)
    }

    pub(crate) fn is_unshared(&self, id: &str) -> bool {
        self.plan().unshared.contains(id)
    }

    pub(crate) fn url_lifetime(&self) -> Duration {
        self.plan().url_lifetime.unwrap_or(DOWNLOAD_URL_LIFETIME)
    }
}

fn toggle(set: &mut HashSet<String>, id: &str, on: bool) {
    if on {
        set.insert(id.to_owned());
    } else {
        set.remove(id);
    }
}
