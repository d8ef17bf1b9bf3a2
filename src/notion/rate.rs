//! Notion's request pacing, shared by every process on one state database: the pace of an
//! integration token ([`super::pace`]) lives in SQLite beside the Graph limiter's ledger, keyed by
//! the token's SHA-256, and every grant is one IMMEDIATE transaction over it (the ledger's rule), so
//! two `migrate` runs or `--all-accounts` on one token share one budget exactly. A 429's or 529's
//! `Retry-After` pauses every caller of every process at once, uncapped (Notion's workspace-level
//! waits can exceed the 60 s the official SDKs cap them at).
//!
//! Like the Graph limiter's, the transactions run off the async runtime, in the database's queue
//! ([`Db::call`]): a grant can wait out another process's write without holding a runtime thread.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;
use sha2::{Digest, Sha256};

use super::pace::{Counts, InWindow, Limit, Mode, Pace, Throttle, DOCUMENTED_PER_SECOND};
use super::pace_ledger as ledger;
use super::upload_refusals::{self, UploadRefusal};
use crate::clock::{Clock, UnixMillis};
use crate::failure::{Class, Classify};
use crate::settings::{NotionPace, Window};
use crate::store::{Db, StoreError};

/// Errors of the Notion pace.
#[derive(Debug, thiserror::Error)]
pub enum RateError {
    /// The state database failed.
    #[error("Notion pace: {0}")]
    Store(#[from] StoreError),
}

impl Classify for RateError {
    fn class(&self) -> Class {
        match self {
            RateError::Store(e) => e.class(),
        }
    }
}

/// One granted request: give it back with [`NotionRate::answered`] or [`NotionRate::throttled`].
#[derive(Debug)]
#[must_use = "a grant says what Notion answered"]
pub struct Grant {
    id: i64,
}

/// Paces the Notion requests of one integration token.
#[derive(Debug)]
pub struct NotionRate {
    db: Arc<Db>,
    key: String,
    mode: Mode,
    clock: Clock,
    /// Total time this process's callers waited (ms), for the run summary.
    waited_ms: AtomicU64,
}

/// The key of `token`'s pace: its SHA-256 in hex (the token itself is never stored).
pub fn token_key(token: &str) -> String {
    Sha256::digest(token.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

impl NotionRate {
    /// The pace of `token` on `db`, as `setting` asks, shared with every process on `db`.
    pub fn open(db: Arc<Db>, token: &str, setting: NotionPace, clock: Clock) -> NotionRate {
        Self::with_mode(db, token, Mode::of(setting), clock)
    }

    /// The pace of `token` on `db` in `mode` (tests and benchmarks give `auto` a short window).
    pub fn with_mode(db: Arc<Db>, token: &str, mode: Mode, clock: Clock) -> NotionRate {
        NotionRate {
            db,
            key: token_key(token),
            mode,
            clock,
            waited_ms: AtomicU64::new(0),
        }
    }

    /// A fixed pace of `rate` with `burst` back-to-back requests, in this process alone (a private
    /// database in memory): for tests and one-off clients that share nothing.
    pub fn new(rate: Window, burst: u32) -> NotionRate {
        let db = Db::open_in_memory().expect("an in-memory database opens");
        Self::with_mode(
            Arc::new(db),
            "",
            Mode::Fixed {
                window: rate,
                burst,
            },
            Clock::system(),
        )
    }

    /// The mode this pace runs in.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// Waits until one request may go, then takes its slot.
    pub async fn acquire(&self) -> Result<Grant, RateError> {
        loop {
            let (key, mode, clock) = (self.key.clone(), self.mode, self.clock.clone());
            let decision = self
                .db
                .call(move |db| {
                    db.write("granting a Notion request", |tx| {
                        // Read inside the transaction: another task's write may have held the
                        // database, and a grant stamped before that wait would let the next ones
                        // bunch.
                        let now = clock.now_ms();
                        let mut pace = ledger::load(tx, &key)?
                            .unwrap_or_else(|| Pace::fresh(mode, now))
                            .for_mode(mode, now);
                        if pace.window_passed(mode, now) {
                            let since_raise = ledger::granted_since(tx, &key, pace.raised_at)?;
                            pace.watch(mode, now, Counts { since_raise });
                            // Kept for the longer of two windows and the minute `status` shows.
                            ledger::prune(tx, &key, now - (2 * pace.window_ms).max(60_000))?;
                        }
                        let mut counted = Ok(InWindow::default());
                        let granted = pace.grant(mode, now, |start| {
                            counted = ledger::in_window(tx, &key, start);
                            *counted.as_ref().unwrap_or(&InWindow::default())
                        });
                        counted?;
                        let out = match granted {
                            Ok(()) => Ok(ledger::insert_grant(tx, &key, now)?),
                            Err(until) => Err((
                                until,
                                pace.pause_reason.filter(|_| until <= pace.paused_until),
                            )),
                        };
                        ledger::save(tx, &key, &pace)?;
                        Ok((out, now))
                    })
                })
                .await?;
            match decision {
                (Ok(id), _) => return Ok(Grant { id }),
                (Err((until, pause)), now) => {
                    let wait = (until - now).max(1);
                    self.waited_ms.fetch_add(wait as u64, Ordering::Relaxed);
                    if let Some(limit) = pause.filter(|_| wait >= 1_000) {
                        tracing::info!(wait_ms = wait, reason = %limit, "Notion requests wait");
                    }
                    self.clock.sleep_until_ms(until).await;
                }
            }
        }
    }

    /// Notion answered `g` (anything but a 429 or 529): it counted in the window.
    pub async fn answered(&self, g: Grant) -> Result<(), RateError> {
        self.db
            .call(move |db| {
                db.write("recording a Notion answer", |tx| {
                    ledger::set_outcome(tx, g.id, true).map(drop)
                })
            })
            .await?;
        Ok(())
    }

    /// Notion refused `g` with a 429 or 529: every caller pauses for its `Retry-After`, and the pace
    /// learns what the answer says. Returns the shared pause from now.
    pub async fn throttled(&self, g: Grant, t: Throttle) -> Result<Duration, RateError> {
        let now = self.clock.now_ms();
        let (key, mode) = (self.key.clone(), self.mode);
        let (wait, budget) = self
            .db
            .call(move |db| {
                db.write("recording a Notion 429", |tx| {
                    let granted_at = ledger::set_outcome(tx, g.id, false)?.unwrap_or(now);
                    let mut pace = ledger::load(tx, &key)?
                        .unwrap_or_else(|| Pace::fresh(mode, now))
                        .for_mode(mode, now);
                    let mut count = Ok(0);
                    let wait = pace.throttled(mode, t, now, granted_at, |from| {
                        count = ledger::answered_since(tx, &key, from);
                        *count.as_ref().unwrap_or(&0)
                    });
                    count?;
                    ledger::save(tx, &key, &pace)?;
                    Ok((wait, pace.budget))
                })
            })
            .await?;
        tracing::info!(
            limit = t.limit.code(),
            wait_s = wait.as_secs_f64(),
            budget,
            "Notion asked us to wait"
        );
        Ok(wait)
    }

    /// Every caller pauses for `d` from now, whatever the pace (a shorter pause never shortens a
    /// longer one already in force).
    pub async fn pause_for(&self, d: Duration, limit: Limit) -> Result<(), RateError> {
        let now = self.clock.now_ms();
        let (key, mode) = (self.key.clone(), self.mode);
        self.db
            .call(move |db| {
                db.write("pausing Notion requests", |tx| {
                    let mut pace = ledger::load(tx, &key)?
                        .unwrap_or_else(|| Pace::fresh(mode, now))
                        .for_mode(mode, now);
                    let until = now + d.as_millis() as i64;
                    if until > pace.paused_until {
                        pace.paused_until = until;
                        pace.pause_reason = Some(limit);
                    }
                    ledger::save(tx, &key, &pace)
                })
            })
            .await?;
        Ok(())
    }

    /// The smallest upload Notion refused this token within the last day, if any
    /// ([`upload_refusals`]): a file at least that big is not sent.
    pub async fn refused_upload(&self) -> Result<Option<UploadRefusal>, RateError> {
        let (key, now) = (self.key.clone(), self.clock.now_ms());
        let kept = self
            .db
            .call(move |db| {
                db.read("reading the refused upload size", |c| {
                    upload_refusals::load(c, &key, now)
                })
            })
            .await?;
        Ok(kept)
    }

    /// Notion refused a file of `size` bytes with `message` (its words, quoted in placeholders;
    /// never logged): kept for this token if it is the smallest refused.
    pub async fn refused_upload_of(&self, size: u64, message: &str) -> Result<(), RateError> {
        let (key, now, message) = (self.key.clone(), self.clock.now_ms(), message.to_owned());
        self.db
            .call(move |db| {
                db.write("recording a refused upload size", |tx| {
                    upload_refusals::record(tx, &key, size, &message, now)
                })
            })
            .await?;
        tracing::info!(
            size,
            "Notion refused an upload of this size; larger files stay placeholders"
        );
        Ok(())
    }

    /// How long the shared pause still lasts.
    pub fn paused_for(&self) -> Result<Duration, RateError> {
        Ok(self
            .view()?
            .paused_ms
            .map_or(Duration::ZERO, Duration::from_millis))
    }

    /// Total time this process's callers waited on pacing and pauses.
    pub fn waited(&self) -> Duration {
        Duration::from_millis(self.waited_ms.load(Ordering::Relaxed))
    }

    /// The pace as it stands, for progress, `status` and logs. Reads the state database on the
    /// calling thread: from async code, call it through [`Db::call`].
    pub fn view(&self) -> Result<PaceView, RateError> {
        let now = self.clock.now_ms();
        let view = self.db.read("reading the Notion pace", |c| {
            let pace = ledger::load(c, &self.key)?
                .unwrap_or_else(|| Pace::fresh(self.mode, now))
                .for_mode(self.mode, now);
            let last_minute = ledger::granted_since(c, &self.key, now - 60_000)?;
            Ok(PaceView::of(&pace, self.mode_name(), last_minute, now))
        })?;
        Ok(view)
    }

    /// The pace as one window, for the time estimates: the fixed number, else the learned
    /// budget, else what the pace spends now, at most the documented average (before its first
    /// 429 the pace is only a ceiling).
    pub fn window(&self) -> Window {
        match self.mode {
            Mode::Fixed { window, .. } => window,
            Mode::Auto { window } => {
                let per_window = self
                    .view()
                    .ok()
                    .map(|v| {
                        v.budget.map_or(
                            (v.pace_per_minute * v.window_ms as f64 / 60_000.0)
                                .min(DOCUMENTED_PER_SECOND * window.as_secs_f64()),
                            f64::from,
                        )
                    })
                    .unwrap_or(DOCUMENTED_PER_SECOND * window.as_secs_f64());
                Window {
                    count: (per_window.round() as u32).max(1),
                    length: window,
                }
            }
        }
    }

    fn mode_name(&self) -> String {
        match self.mode {
            Mode::Auto { .. } => "auto".into(),
            Mode::Fixed { window, .. } => window.to_string(),
        }
    }
}

/// Every token's pace on `db`, for `status` (which knows no token).
pub fn all_views(db: &Db, clock: &Clock) -> Result<Vec<PaceView>, RateError> {
    let now = clock.now_ms();
    let views = db.read("reading the Notion pace", |c| {
        let mut out = Vec::new();
        for (key, pace) in ledger::all(c)? {
            let last_minute = ledger::granted_since(c, &key, now - 60_000)?;
            out.push(PaceView::of(&pace, String::new(), last_minute, now));
        }
        Ok(out)
    })?;
    Ok(views)
}

/// What the Notion pace shows: "Notion: connection budget 180/min, window resets in 12 s".
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PaceView {
    /// `auto`, or the fixed window (empty when read without a setting, as `status` does).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub mode: String,
    /// Requests granted in the last minute that Notion did not refuse.
    pub requests_last_minute: u32,
    /// The pace now, in requests per minute.
    pub pace_per_minute: f64,
    /// The connection's budget learned from a per-connection 429, per window.
    pub budget: Option<u32>,
    /// The window the budget counts in (ms).
    pub window_ms: i64,
    /// Time to the next window reset a per-connection 429 gave (ms).
    pub reset_in_ms: Option<i64>,
    /// Time the shared pause still lasts (ms), when one is in force.
    pub paused_ms: Option<u64>,
    /// Which limit set that pause (`connection`, `workspace`, `rate_limited`, `service_overload`).
    pub pause_reason: Option<&'static str>,
}

impl PaceView {
    fn of(p: &Pace, mode: String, last_minute: u32, now: UnixMillis) -> PaceView {
        let paused = (p.paused_until > now).then(|| (p.paused_until - now) as u64);
        PaceView {
            mode,
            requests_last_minute: last_minute,
            pace_per_minute: p.per_window * 60_000.0 / p.window_ms.max(1) as f64,
            budget: p.budget,
            window_ms: p.window_ms,
            reset_in_ms: p.next_reset(now).map(|r| r - now),
            paused_ms: paused,
            pause_reason: paused.and(p.pause_reason.map(Limit::code)),
        }
    }
}

impl PaceView {
    /// Whether the database knows anything of this pace (requests, a budget, a pause).
    pub fn known(&self) -> bool {
        self.requests_last_minute > 0 || self.budget.is_some() || self.paused_ms.is_some()
    }

    /// The short form a progress line has room for: "180/min budget", "3.0/s learning", "wait 75 s: workspace".
    pub fn short(&self) -> String {
        let mut s = match self.budget {
            Some(b) if self.window_ms == 60_000 => format!("budget {b}/min"),
            Some(b) => format!("budget {b}/{} s", self.window_ms as f64 / 1_000.0),
            None => format!("{:.1}/s", self.pace_per_minute / 60.0),
        };
        if let (Some(ms), Some(reason)) = (self.paused_ms, self.pause_reason) {
            s.push_str(&format!(", wait {} s: {reason}", ms.div_ceil(1_000)));
        }
        s
    }
}

impl std::fmt::Display for PaceView {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let window = if self.window_ms == 60_000 {
            "min".to_owned()
        } else {
            format!("{} s", self.window_ms as f64 / 1_000.0)
        };
        write!(
            f,
            "Notion: {} requests in the last minute",
            self.requests_last_minute
        )?;
        match self.budget {
            Some(b) => write!(f, ", connection budget {b}/{window}")?,
            None if self.mode.is_empty() || self.mode == "auto" => write!(
                f,
                ", pace {:.0}/min (learning the connection's budget)",
                self.pace_per_minute
            )?,
            None => write!(f, ", fixed pace {}", self.mode)?,
        }
        if let Some(r) = self.reset_in_ms {
            write!(f, ", window resets in {} s", (r + 999) / 1_000)?;
        }
        if let (Some(ms), Some(reason)) = (self.paused_ms, self.pause_reason) {
            let why = Limit::from_code(reason).map_or(reason.to_owned(), |l| l.to_string());
            write!(f, "; waiting {} s for {why}", ms.div_ceil(1_000))?;
        }
        Ok(())
    }
}
