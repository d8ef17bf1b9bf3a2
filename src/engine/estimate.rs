//! The work still to do and the time the budgets imply: `migrate` prints it before work (and
//! `--dry-run` prints only it), and the progress ETA is the same model on what is left. Times come
//! from the limiter's own budget model ([`crate::limiter::budget`]), not from a measured rate.

use std::time::Duration;

use serde::Serialize;

use crate::limiter::budget::{self, WindowState};
use crate::limiter::{Limiter, LimiterError};
use crate::settings::Window;
use crate::store::jobs::Remaining;
use crate::store::layouts::{layouts_label, Layout};
use crate::store::ways::FilesLeft;
use crate::store::{Db, StoreError};

/// Files per page assumed before any page of this database has been read.
pub const ASSUMED_FILES_PER_PAGE: f64 = 1.0;

/// Notion requests per notebook, section group or section page (create).
const NOTION_PER_CONTAINER: f64 = 1.0;
/// Notion requests per OneNote page: create, at least one append of its body, and the listing of
/// its children for its fingerprint once written (the page half is the writes' own answers:
/// `notion::conflict`).
const NOTION_PER_PAGE: f64 = 3.0;
/// Notion requests per file: create the upload, send it (the block that shows it goes with the body).
const NOTION_PER_FILE: f64 = 2.0;
/// Drive requests per section read from its file: the content request (answered with a redirect)
/// and the download from where it points. Finding the files is done while planning, before this.
pub const DRIVE_PER_SECTION: i64 = 2;

/// One account's part of the plan.
#[derive(Clone, Debug, Serialize)]
pub struct AccountPlan {
    /// Account name.
    pub account: String,
    /// OneNote pages to migrate.
    pub pages: i64,
    /// Notebook, section group and section pages to create.
    pub containers: i64,
    /// Files (images, attachments) expected in those pages.
    pub files: i64,
    /// OneNote API requests: one per page's content, one per file (pages read from their
    /// section files send none).
    pub graph_requests: i64,
    /// Pages read from their section files (`--via files` or `auto`).
    #[serde(skip_serializing_if = "is_zero")]
    pub pages_by_files: i64,
    /// Sections read from their files: one download each.
    #[serde(skip_serializing_if = "is_zero")]
    pub sections_by_files: i64,
    /// Drive requests to download those sections (not counted in any OneNote window).
    #[serde(skip_serializing_if = "is_zero")]
    pub drive_requests: i64,
    /// Bytes those downloads bring.
    #[serde(skip_serializing_if = "is_zero")]
    pub drive_bytes: i64,
    /// The requests per hour background work may send for this account (the binding window).
    pub requests_per_hour: f64,
    /// The binding window, e.g. `400/1h`.
    pub window: String,
    /// The time this account's windows imply.
    pub seconds: u64,
    /// Read from OneNote's own files: no Graph request, only Notion's pace binds.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub from_files: bool,
    /// How its work is laid out in Notion (`pages`, `database`; both, comma-separated, when its
    /// targets differ).
    pub layout: String,
}

/// The whole plan and its time.
#[derive(Clone, Debug, Serialize)]
pub struct Plan {
    /// Per account.
    pub accounts: Vec<AccountPlan>,
    /// The files-per-page figure used.
    pub files_per_page: f64,
    /// Whether it was measured (pages migrated before) or assumed.
    pub files_per_page_measured: bool,
    /// The time the app-wide windows imply (when configured).
    pub app_seconds: Option<u64>,
    /// Notion requests (at least).
    pub notion_requests: i64,
    /// Notion's rate, e.g. `3/1s`.
    pub notion_rate: String,
    /// The time Notion's rate implies.
    pub notion_seconds: u64,
    /// The slowest of all (Graph and Notion run side by side).
    pub seconds: u64,
}

fn is_zero(n: &i64) -> bool {
    *n == 0
}

/// One account's (or import's) work for the plan: its name, its Graph user (none for an import
/// from files), what is left, and what of that is read from section files.
#[derive(Clone, Debug, Default)]
pub struct Work {
    /// How the plan names it.
    pub label: String,
    /// The Graph user its requests are counted against.
    pub user_id: Option<String>,
    /// What is left.
    pub left: Remaining,
    /// What of it is read from section files.
    pub files: FilesLeft,
    /// The layouts of its targets (empty: `pages`, nothing recorded yet).
    pub layouts: Vec<Layout>,
}

/// Files per page: measured over the pages this database migrated, else assumed.
pub fn files_per_page(db: &Db) -> Result<(f64, bool), StoreError> {
    let (per_page, pages) = db.files_per_page()?;
    Ok(if pages > 0 {
        (per_page, true)
    } else {
        (ASSUMED_FILES_PER_PAGE, false)
    })
}

/// The plan for `work`, timed by the limiter's budgets as they stand now and by Notion's rate.
/// An import from files has no Graph user: it sends no Graph request and only Notion's rate times
/// it. Pages read from their section files send no OneNote request either: their sections' drive
/// downloads are counted apart, outside the OneNote windows.
pub fn plan(
    limiter: &Limiter,
    notion_rate: Window,
    files_per_page: (f64, bool),
    work: &[Work],
) -> Result<Plan, LimiterError> {
    let now = limiter.now_ms();
    let (fpp, measured) = files_per_page;
    let mut accounts = Vec::new();
    let mut app: Option<Vec<WindowState>> = None;
    let (mut all_graph, mut notion) = (0i64, 0f64);
    for Work {
        label: account,
        user_id,
        left,
        files: by_files,
        layouts,
    } in work
    {
        let layout = layouts_label(layouts);
        let files = (left.pages as f64 * fpp).round() as i64;
        notion += left.containers as f64 * NOTION_PER_CONTAINER
            + left.pages as f64 * NOTION_PER_PAGE
            + files as f64 * NOTION_PER_FILE;
        let Some(user_id) = user_id else {
            accounts.push(AccountPlan {
                account: account.clone(),
                pages: left.pages,
                containers: left.containers,
                files,
                graph_requests: 0,
                pages_by_files: 0,
                sections_by_files: 0,
                drive_requests: 0,
                drive_bytes: 0,
                requests_per_hour: f64::INFINITY,
                window: String::new(),
                seconds: 0,
                from_files: true,
                layout,
            });
            continue;
        };
        let by_api = (left.pages - by_files.pages).max(0);
        let graph_requests = by_api + (by_api as f64 * fpp).round() as i64;
        let (user, app_windows) = limiter.background_budget(user_id)?;
        app.get_or_insert(app_windows);
        let t = budget::time_for(now, graph_requests as u64, &user);
        let lanes: Vec<_> = user.iter().map(|w| w.lane).collect();
        let bind = budget::binding(&lanes);
        accounts.push(AccountPlan {
            account: account.clone(),
            pages: left.pages,
            containers: left.containers,
            files,
            graph_requests,
            pages_by_files: by_files.pages.min(left.pages),
            sections_by_files: by_files.sections,
            drive_requests: by_files.sections * DRIVE_PER_SECTION,
            drive_bytes: by_files.bytes,
            requests_per_hour: bind.map(|b| b.per_hour()).unwrap_or(f64::INFINITY),
            window: bind.map(|b| b.window.to_string()).unwrap_or_default(),
            seconds: t.as_secs(),
            from_files: false,
            layout,
        });
        all_graph += graph_requests;
    }
    let app_seconds = app
        .filter(|a| !a.is_empty())
        .map(|a| budget::time_for(now, all_graph as u64, &a).as_secs());
    let notion_requests = notion.round() as i64;
    let notion_seconds = (notion_requests as f64 * notion_rate.length.as_secs_f64()
        / notion_rate.count.max(1) as f64)
        .round() as u64;
    let seconds = accounts
        .iter()
        .map(|a| a.seconds)
        .chain(app_seconds)
        .chain([notion_seconds])
        .max()
        .unwrap_or(0);
    Ok(Plan {
        accounts,
        files_per_page: fpp,
        files_per_page_measured: measured,
        app_seconds,
        notion_requests,
        notion_rate: notion_rate.to_string(),
        notion_seconds,
        seconds,
    })
}

/// The time `left` would take for the Graph user `user_id` read each way: through the OneNote API
/// (its windows bind) and from `sections` section files (Notion's pace binds), in seconds. What
/// `doctor` shows when a missing permission forces the API.
pub fn by_way(
    limiter: &Limiter,
    notion_rate: Window,
    files_per_page: (f64, bool),
    user_id: &str,
    left: Remaining,
    sections: i64,
) -> Result<(u64, u64), LimiterError> {
    let work = |files: FilesLeft| Work {
        label: String::new(),
        user_id: Some(user_id.to_owned()),
        left,
        files,
        layouts: Vec::new(),
    };
    let api = plan(
        limiter,
        notion_rate,
        files_per_page,
        &[work(FilesLeft::default())],
    )?;
    let files = plan(
        limiter,
        notion_rate,
        files_per_page,
        &[work(FilesLeft {
            pages: left.pages,
            sections,
            bytes: 0,
        })],
    )?;
    Ok((api.seconds, files.seconds))
}

impl AccountPlan {
    /// The layout as the plan's text says it.
    fn layout_shown(&self) -> String {
        match self.layout.as_str() {
            "database" => "database (one Notion database per section, a row per page)".into(),
            "pages" => "pages (nested pages)".into(),
            other => format!("{other} (its targets are laid out differently)"),
        }
    }
}

impl Plan {
    /// One plan of several (each account planned on its own): accounts side by side, Notion's
    /// requests added up (its rate is shared), the slowest time.
    pub fn merge(plans: Vec<Plan>) -> Option<Plan> {
        let mut it = plans.into_iter();
        let mut all = it.next()?;
        for p in it {
            all.accounts.extend(p.accounts);
            all.app_seconds = match (all.app_seconds, p.app_seconds) {
                (Some(a), Some(b)) => Some(a.max(b)),
                (a, b) => a.or(b),
            };
            all.notion_requests += p.notion_requests;
        }
        let rate: Window = crate::settings::parse_windows(&all.notion_rate)
            .ok()
            .and_then(|w| w.first().copied())?;
        all.notion_seconds = (all.notion_requests as f64 * rate.length.as_secs_f64()
            / rate.count.max(1) as f64)
            .round() as u64;
        all.seconds = all
            .accounts
            .iter()
            .map(|a| a.seconds)
            .chain(all.app_seconds)
            .chain([all.notion_seconds])
            .max()
            .unwrap_or(0);
        Some(all)
    }

    /// The plan as lines for a person: one per account, then Notion's and the total.
    pub fn lines(&self) -> Vec<String> {
        let mut out = Vec::new();
        for a in &self.accounts {
            if a.from_files {
                out.push(format!(
                    "{}: {} pages, {} notebook/section pages, about {} files, read from OneNote's \
                     own files (no Graph requests: Notion's rate alone binds); layout {}",
                    a.account,
                    a.pages,
                    a.containers,
                    a.files,
                    a.layout_shown()
                ));
                continue;
            }
            out.push(format!(
                "{}: {} pages, {} notebook/section pages, about {} files, {} Graph requests: {} at \
                 {:.0} requests/hour (background's part of {}); layout {}",
                a.account,
                a.pages,
                a.containers,
                a.files,
                a.graph_requests,
                budget::human(Duration::from_secs(a.seconds)),
                a.requests_per_hour,
                a.window,
                a.layout_shown()
            ));
            if a.sections_by_files > 0 {
                out.push(format!(
                    "{}: {} of the pages from {} section files: {} drive requests, {:.1} MB \
                     (outside the OneNote windows); the other {} pages through the OneNote API",
                    a.account,
                    a.pages_by_files,
                    a.sections_by_files,
                    a.drive_requests,
                    a.drive_bytes as f64 / 1e6,
                    a.pages - a.pages_by_files
                ));
            }
        }
        if let Some(s) = self.app_seconds {
            out.push(format!(
                "the app-wide Graph limits: {}",
                budget::human(Duration::from_secs(s))
            ));
        }
        out.push(format!(
            "Notion: at least {} requests, {} at {}; files per page {} {:.1}",
            self.notion_requests,
            budget::human(Duration::from_secs(self.notion_seconds)),
            self.notion_rate,
            if self.files_per_page_measured {
                "measured over the pages migrated so far:"
            } else {
                "assumed until pages are read:"
            },
            self.files_per_page
        ));
        out.push(format!(
            "in all: {}",
            budget::human(Duration::from_secs(self.seconds))
        ));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(account: &str, seconds: u64, notion_requests: i64) -> Plan {
        Plan {
            accounts: vec![AccountPlan {
                account: account.into(),
                pages: 10,
                containers: 2,
                files: 10,
                graph_requests: 20,
                pages_by_files: 0,
                sections_by_files: 0,
                drive_requests: 0,
                drive_bytes: 0,
                requests_per_hour: 380.0,
                window: "400/1h".into(),
                seconds,
                from_files: false,
                layout: "pages".into(),
            }],
            files_per_page: 1.0,
            files_per_page_measured: false,
            app_seconds: None,
            notion_requests,
            notion_rate: "3/1s".into(),
            notion_seconds: (notion_requests / 3) as u64,
            seconds: seconds.max((notion_requests / 3) as u64),
        }
    }

    #[tokio::test(start_paused = true)]
    async fn pages_read_from_section_files_send_no_onenote_request_and_their_downloads_are_counted_apart(
    ) {
        use crate::clock::{Clock, Jitter};
        use crate::settings::GraphLimits;
        let t = tempfile::tempdir().unwrap();
        let db = std::sync::Arc::new(Db::open(&t.path().join("s.db")).unwrap());
        let limiter = Limiter::open(
            db,
            GraphLimits::default(),
            Clock::anchored_at(1_700_000_000_000),
            Jitter::seeded(1),
        )
        .unwrap();
        let rate = Window {
            count: 3,
            length: Duration::from_secs(1),
        };
        let left = Remaining {
            pages: 1000,
            containers: 20,
        };
        let work = |files| Work {
            label: "alice".into(),
            user_id: Some("u1".into()),
            left,
            files,
            layouts: Vec::new(),
        };
        let api = plan(&limiter, rate, (1.0, true), &[work(FilesLeft::default())]).unwrap();
        let a = &api.accounts[0];
        assert_eq!((a.graph_requests, a.drive_requests), (2000, 0));
        let mixed = FilesLeft {
            pages: 900,
            sections: 18,
            bytes: 36_000_000,
        };
        let p = plan(&limiter, rate, (1.0, true), &[work(mixed)]).unwrap();
        let a = &p.accounts[0];
        assert_eq!(
            a.graph_requests, 200,
            "only the 100 API pages and their files"
        );
        assert_eq!(a.pages_by_files, 900);
        assert_eq!(a.drive_requests, 36);
        assert_eq!(a.drive_bytes, 36_000_000);
        assert!(a.seconds < api.accounts[0].seconds);
        assert_eq!(
            p.notion_requests, api.notion_requests,
            "Notion's work is the same"
        );
        let lines = p.lines();
        assert!(
            lines[1].contains("900 of the pages from 18 section files: 36 drive requests, 36.0 MB"),
            "{lines:?}"
        );
        // The hour window binds the API way at the documented limits; Notion's pace the other.
        let (by_api, by_files) = by_way(&limiter, rate, (1.0, true), "u1", left, 20).unwrap();
        assert!(by_api > 4 * 3600, "2000 requests at 400/h: {by_api}");
        assert_eq!(by_files, p.notion_seconds, "{by_files}");
    }

    #[test]
    fn merged_plans_share_notions_rate_and_take_the_slowest_account() {
        assert!(Plan::merge(Vec::new()).is_none());
        let p = Plan::merge(vec![one("alice", 100, 300), one("bob", 50, 300)]).unwrap();
        assert_eq!(p.accounts.len(), 2);
        assert_eq!(p.notion_requests, 600);
        assert_eq!(p.notion_seconds, 200, "one token's rate for both");
        assert_eq!(p.seconds, 200);
        let lines = p.lines();
        assert!(lines[0].starts_with("alice: 10 pages"), "{lines:?}");
        assert!(lines[0].contains("380 requests/hour"), "{lines:?}");
        assert!(
            lines[2].contains("Notion: at least 600 requests"),
            "{lines:?}"
        );
        assert_eq!(lines.last().unwrap(), "in all: about 4 min");
    }
}
