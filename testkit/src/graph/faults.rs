//! Faults a test switches on while the server runs: server errors, slow responses, dropped connections,
//! 401s, failing inner batch requests and throttling caused by "another client". Random choices come
//! from a seeded generator so a test sees the same faults on every run.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use tokio::time::Instant;

use super::throttle::Throttle;

/// What to do to one outer request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OuterFault {
    /// Answer 401 `InvalidAuthenticationToken`.
    Unauthorized,
    /// Close the connection without a response.
    Drop,
    /// Hold the response this long, then answer normally.
    Delay(Duration),
    /// Answer with this status (500, 502, 503 or 504) and a Graph error body.
    Status(u16),
}

/// What the real service does that its documentation does not say, as reported in the field
/// (issue #48): each switch off by default, so the server stays the documented service.
#[derive(Clone, Debug, Default)]
pub struct Field {
    /// Notebooks, section groups and sections (by id) served with `displayName: null`, which the
    /// v1.0 model allows (msgraph-metadata: `onenoteEntityHierarchyModel.displayName` is nullable).
    pub null_names: Vec<String>,
    /// Group and site notebooks' pages carry the generic `https://www.onenote.com/notebooks` as both
    /// links, with no page id (field report: microsoft-graph-docs-contrib#9160).
    pub generic_team_page_links: bool,
    /// Page listings leave `@odata.count` out when `$top` is set, even with `$count=true` (field
    /// report: exporters' code comments).
    pub no_count_with_top: bool,
    /// Page listings asking for `$count` or `links` in `$select` are refused with a 400 (the
    /// shape obsidian-importer sends is the one known to work).
    pub refuse_count_and_links: bool,
    /// Sections (by id) whose page listing answers `{"value": []}` while they hold pages (field
    /// report: microsoft-graph-explorer-v4#3935).
    pub empty_page_lists: Vec<String>,
    /// Notebooks (by id) every page listing of which is empty while their pages and section files
    /// exist: each section's page list answers `{"value": []}`, and the listing of all pages
    /// (filtered or not) leaves their pages out (field report: microsoft-graph-explorer-v4#3935,
    /// 2025-08 and 2026-03, where asking the account-wide listing did not help either). Pages
    /// themselves, their content and the drive's files are served as always.
    pub empty_notebook_listings: Vec<String>,
    /// A page moved to another section comes back under a new id: new hex, its new section's id
    /// in it (`0-<32 hex>!<n>-<section id without its 0->`), 404 under the old one, and only its
    /// `onenote:` link GUID and created time kept (field report: a recorded page id embeds its
    /// section's id; microsoft-graph-docs#18296; OneMore #625, #1747).
    pub renumber_moved_pages: bool,
}

/// Who the external throttle hits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ExternalScope {
    /// One user's budget.
    User(String),
    /// The app's budget.
    Application,
}

#[derive(Debug)]
struct Plan {
    rng: StdRng,
    unauthorized_next: u32,
    drop_next: u32,
    delay_next: u32,
    delay: Duration,
    status_next: Vec<u16>,
    status_ratio: Option<(f64, Vec<u16>)>,
    inner_ratio: Option<(f64, Vec<u16>)>,
    omit_next_links: bool,
    edit_during_listings: u32,
    heavy_listings: Option<(usize, usize)>,
    batch_424: bool,
    ink_status: Option<u16>,
    bare_400s: u32,
    bare_400_code: Option<String>,
    many_sections: bool,
    field: Field,
}

/// The fault switchboard of one server; cheap to clone, usable from any task.
#[derive(Clone, Debug)]
pub struct Faults {
    plan: Arc<Mutex<Plan>>,
    throttle: Arc<Mutex<Throttle>>,
}

impl Faults {
    pub(crate) fn new(seed: u64, throttle: Arc<Mutex<Throttle>>) -> Self {
        Self {
            plan: Arc::new(Mutex::new(Plan {
                rng: StdRng::seed_from_u64(seed ^ 0xfa17),
                unauthorized_next: 0,
                drop_next: 0,
                delay_next: 0,
                delay: Duration::ZERO,
                status_next: Vec::new(),
                status_ratio: None,
                inner_ratio: None,
                omit_next_links: false,
                edit_during_listings: 0,
                heavy_listings: None,
                batch_424: false,
                ink_status: None,
                bare_400s: 0,
                bare_400_code: None,
                many_sections: false,
                field: Field::default(),
            })),
            throttle,
        }
    }

    fn plan(&self) -> std::sync::MutexGuard<'_, Plan> {
        self.plan.lock().expect("fault plan poisoned")
    }

    /// The next `n` requests fail with `status` (500, 502, 503 or 504).
    pub fn fail_next(&self, n: u32, status: u16) {
        let mut p = self.plan();
        p.status_next
            .extend(std::iter::repeat_n(status, n as usize));
    }

    /// From now on a share `ratio` of requests fail with a status drawn from `statuses`.
    pub fn fail_ratio(&self, ratio: f64, statuses: &[u16]) {
        self.plan().status_ratio =
            (ratio > 0.0 && !statuses.is_empty()).then(|| (ratio, statuses.to_vec()));
    }

    /// The next `n` requests are answered only after `hold` (longer than the client's timeout).
    pub fn delay_next(&self, n: u32, hold: Duration) {
        let mut p = self.plan();
        p.delay_next += n;
        p.delay = hold;
    }

    /// The next `n` requests have their connection closed without a response.
    pub fn drop_next(&self, n: u32) {
        self.plan().drop_next += n;
    }

    /// The next `n` requests get 401 even with a valid token.
    pub fn unauthorized_next(&self, n: u32) {
        self.plan().unauthorized_next += n;
    }

    /// From now on a share `ratio` of inner `$batch` requests fail with a status drawn from `statuses`
    /// (429, 502, 503, 504), while the batch itself still answers 200.
    pub fn batch_inner_failures(&self, ratio: f64, statuses: &[u16]) {
        self.plan().inner_ratio =
            (ratio > 0.0 && !statuses.is_empty()).then(|| (ratio, statuses.to_vec()));
    }

    /// Collection responses leave out `@odata.nextLink` even when more data exists (reported for the
    /// real service), so clients must fall back to `$skip`.
    pub fn omit_next_links(&self, on: bool) {
        self.plan().omit_next_links = on;
    }

    /// The owner edits a page while the next `n` page listings are read: after each, the page
    /// that is last in the default order (`lastModifiedDateTime desc`) is modified now, so it moves
    /// to the front, across the slices a `$skip` paging has not read yet or has read already.
    pub fn edit_during_listings(&self, n: u32) {
        self.plan().edit_during_listings += n;
    }

    /// Listings of sections with at least `min_pages` pages time out (504, as reported for big
    /// sections) unless they ask for at most `max_top` pages and `$select` only some fields.
    pub fn heavy_listings_time_out(&self, min_pages: usize, max_top: usize) {
        self.plan().heavy_listings = Some((min_pages, max_top));
    }

    /// A `$batch` with a throttled inner request answers 424 (still carrying the inner responses)
    /// instead of 200.
    pub fn batch_424_on_throttle(&self, on: bool) {
        self.plan().batch_424 = on;
    }

    /// Page content asked for with `includeInkML=true` (undocumented) answers `status` with a Graph
    /// error body; without it the page is served as usual.
    pub fn fail_ink_requests(&self, status: Option<u16>) {
        self.plan().ink_status = status;
    }

    /// The next `n` page listings, page, page-content and resource requests (outer or inside a
    /// `$batch`, after the throttle counted them) answer a bare 400: Graph's error body with `code`
    /// (`Some("19999")`), or with no code at all (`None`). Asked again, the same request succeeds.
    /// Field report, not documentation: obsidian-importer PR #611 retries such 400s ("a bare 400 is
    /// still retried").
    pub fn bare_400_next(&self, n: u32, code: Option<&str>) {
        let mut p = self.plan();
        p.bare_400s += n;
        p.bare_400_code = code.map(str::to_owned);
    }

    /// The bare 400 to answer a page or resource request with, if one is due (counts one down).
    pub(crate) fn take_bare_400(&self) -> Option<Option<String>> {
        let mut p = self.plan();
        if p.bare_400s == 0 {
            return None;
        }
        p.bare_400s -= 1;
        Some(p.bare_400_code.clone())
    }

    /// The account has more sections than the listing of all its pages (`GET ../onenote/pages`)
    /// takes: that listing answers 400 with code 20266, as Microsoft documents for accounts with
    /// many sections (onenote-error-codes; the digest's "avoid `GET me/onenote/pages`").
    pub fn too_many_sections_for_all_pages(&self, on: bool) {
        self.plan().many_sections = on;
    }

    pub(crate) fn too_many_sections(&self) -> bool {
        self.plan().many_sections
    }

    /// Switches on the field behaviours `field` names (and off those it does not).
    pub fn field(&self, field: Field) {
        self.plan().field = field;
    }

    pub(crate) fn field_behaviour(&self) -> Field {
        self.plan().field.clone()
    }

    pub(crate) fn ink_status(&self) -> Option<u16> {
        self.plan().ink_status
    }

    /// Another client used the budget: `scope` refuses every request for `length` from now (and the
    /// refused requests count, as any other).
    pub fn throttle_externally(&self, scope: ExternalScope, length: Duration) {
        let until = Instant::now() + length;
        let mut t = self.throttle.lock().expect("throttle poisoned");
        match scope {
            ExternalScope::User(u) => t.block(Some(&u), until),
            ExternalScope::Application => t.block(None, until),
        }
    }

    /// Switches every fault off.
    pub fn clear(&self) {
        let mut p = self.plan();
        p.unauthorized_next = 0;
        p.drop_next = 0;
        p.delay_next = 0;
        p.status_next.clear();
        p.status_ratio = None;
        p.inner_ratio = None;
        p.omit_next_links = false;
        p.edit_during_listings = 0;
        p.heavy_listings = None;
        p.batch_424 = false;
        p.ink_status = None;
        p.bare_400s = 0;
        p.bare_400_code = None;
        p.field = Field::default();
    }

    /// The fault for the next outer request, if any (one per request, most disruptive first).
    pub(crate) fn next_outer(&self) -> Option<OuterFault> {
        let mut p = self.plan();
        if p.unauthorized_next > 0 {
            p.unauthorized_next -= 1;
            return Some(OuterFault::Unauthorized);
        }
        if p.drop_next > 0 {
            p.drop_next -= 1;
            return Some(OuterFault::Drop);
        }
        if p.delay_next > 0 {
            p.delay_next -= 1;
            return Some(OuterFault::Delay(p.delay));
        }
        if !p.status_next.is_empty() {
            return Some(OuterFault::Status(p.status_next.remove(0)));
        }
        if let Some((ratio, statuses)) = p.status_ratio.clone() {
            if p.rng.random_bool(ratio.clamp(0.0, 1.0)) {
                let i = p.rng.random_range(0..statuses.len());
                return Some(OuterFault::Status(statuses[i]));
            }
        }
        None
    }

    /// The injected status of the next inner batch request, if any.
    pub(crate) fn next_inner(&self) -> Option<u16> {
        let mut p = self.plan();
        let (ratio, statuses) = p.inner_ratio.clone()?;
        if p.rng.random_bool(ratio.clamp(0.0, 1.0)) {
            let i = p.rng.random_range(0..statuses.len());
            Some(statuses[i])
        } else {
            None
        }
    }

    /// Whether to edit a page after this listing (counts one down).
    pub(crate) fn take_edit_during_listing(&self) -> bool {
        let mut p = self.plan();
        if p.edit_during_listings > 0 {
            p.edit_during_listings -= 1;
            true
        } else {
            false
        }
    }

    pub(crate) fn heavy_listings(&self) -> Option<(usize, usize)> {
        self.plan().heavy_listings
    }

    pub(crate) fn answers_424_on_throttle(&self) -> bool {
        self.plan().batch_424
    }

    pub(crate) fn omitting_next_links(&self) -> bool {
        self.plan().omit_next_links
    }
}
