//! The Graph limiter: every Graph request of every process on one state database asks it for a slot.
//!
//! It models the service's limits instead of guessing them: per user (and per app, when configured),
//! every sliding window and concurrency cap from the settings, two lanes (foreground may use
//! everything; background everything but a foreground reserve sized from the account's scans, or a
//! fixed share), a shared circuit breaker per scope and a soft brake from the service's hints. All of it lives
//! in SQLite and every grant is one IMMEDIATE transaction (decision + ledger row together), so two
//! processes never over-grant. A request that must wait is told exactly until when: the max over every
//! layer that blocks it.

pub mod breaker;
pub mod budget;
pub mod headers;
pub mod ledger;
pub mod model;
#[cfg(test)]
mod queue_order;
pub mod state;
pub mod window;

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rusqlite::Connection;
use serde::Serialize;
use tokio::sync::Notify;

pub use headers::{parse_limit_percentage, parse_retry_after, parse_scope_header, ThrottleScope};
pub use state::{
    BreakerState, BudgetHolder, BudgetState, LimiterSnapshot, WaitReason, WaitState, WindowUse,
};

use crate::clock::{Clock, Jitter, UnixMillis};
use crate::failure::{self, Class, Classify, Meaning, Next};
use crate::settings::{BackgroundShare, GraphLimits, Window};
use crate::store::{Db, Priority, StoreError};
use budget::WindowState;
use model::{Blocked, BrakeView, BreakerView, Counted, LedgerView, Policy, ScopeView, Verdict};
use window::CooldownPolicy;

/// Which lane a request travels in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Lane {
    /// Scans and interactive look-ups: may use every window and cap in full, and go first.
    Foreground,
    /// Migration: every window and cap but the foreground reserve (or a fixed share), and no new
    /// grant while foreground work of the same budget waits or is in flight.
    Background,
}

impl Lane {
    /// The lane's number in the ledger (0 foreground, 1 background).
    pub fn code(self) -> i64 {
        match self {
            Lane::Foreground => 0,
            Lane::Background => 1,
        }
    }

    /// Where its calls go in the state database's queue: a foreground grant ahead of the
    /// migration's queued calls.
    pub fn priority(self) -> Priority {
        match self {
            Lane::Foreground => Priority::Foreground,
            Lane::Background => Priority::Background,
        }
    }
}

/// Errors of the limiter.
#[derive(Debug, thiserror::Error)]
pub enum LimiterError {
    /// The state database failed.
    #[error("Graph limiter: {0}")]
    Store(#[from] StoreError),
    /// `acquire_before`: the next slot comes after the deadline.
    #[error("Graph limiter: the next request could start only at {until} (unix ms), after the deadline: {reason}")]
    WouldWait {
        /// When the request could start at the earliest.
        until: UnixMillis,
        /// Why.
        reason: WaitReason,
    },
    /// The limits cannot be modelled.
    #[error("Graph limiter: invalid limits: {0}")]
    InvalidLimits(String),
}

impl Classify for LimiterError {
    fn class(&self) -> Class {
        match self {
            // The budgets say when; that is after the run's time: park, fail nothing.
            LimiterError::WouldWait { .. } => Class::stop_run(),
            LimiterError::InvalidLimits(_) => {
                Class::new(failure::Scope::Run, Next::Never).means(Meaning::Usage)
            }
            LimiterError::Store(e) => e.class(),
        }
    }
}

/// The limiter, shared by every task of the process (cheap to clone).
#[derive(Clone)]
pub struct Limiter {
    inner: Arc<Inner>,
}

struct Inner {
    db: Arc<Db>,
    limits: GraphLimits,
    clock: Clock,
    jitter: Jitter,
    /// `pid:token`: owns this process's slots, probes and waiter rows.
    owner: String,
    /// Woken when something every user may wait on changes (a slot under an app-wide cap, the
    /// app breaker's probe).
    notify: Notify,
    /// Per user: woken when a slot of this process for that user frees or its breaker changes. Only
    /// that user's waiters decide again, so one account's traffic costs the others nothing.
    user_notify: Mutex<HashMap<String, Arc<Notify>>>,
    /// Foreground grants per user so far (what a [`ScanMeter`] reads).
    foreground_grants: Mutex<HashMap<String, u64>>,
    /// One FIFO turn per (user, lane): only its head polls the database, the rest queue in order.
    turns: Mutex<HashMap<(String, Lane), Turn>>,
    waits: Mutex<HashMap<u64, WaitState>>,
    /// Counts the changes of `waits`: what a progress display waits on.
    waits_changed: tokio::sync::watch::Sender<u64>,
    next_waiter: AtomicU64,
    /// How long a slot, probe or waiter row outlives its last sign of life.
    lease_ms: i64,
    /// How often to re-check a block held by another process (its release does not wake us).
    poll_ms: i64,
    longest_ms: i64,
    last_prune: AtomicI64,
    /// How long a finished request keeps its concurrency slot (ms): the service counts a request
    /// in flight until it has sent the last byte, a moment after the client has read it.
    release_margin_ms: AtomicU64,
    /// How much longer than the service's each window is held (ms): our instants are whole
    /// milliseconds and the service counts arrivals a moment after our grant, so a request released
    /// at the exact boundary could reach it a fraction of a millisecond early.
    window_slack_ms: AtomicU64,
    user_policy: CooldownPolicy,
    app_policy: CooldownPolicy,
}

/// A FIFO queue position for one (user, lane).
type Turn = Arc<tokio::sync::Mutex<()>>;

/// One slot a grant transaction wrote: its ledger id and the breaker scopes it probes.
type Granted = (i64, Vec<String>);

/// What a grant transaction decided.
enum Decision {
    /// The permits, made on the database's side: should the asking task be gone when they
    /// arrive, dropping them gives the slots back.
    Granted(Vec<Permit>),
    Wait(Blocked),
}

impl Limiter {
    /// Opens the limiter on the state database with the given limits and seams.
    pub fn open(
        db: Arc<Db>,
        limits: GraphLimits,
        clock: Clock,
        jitter: Jitter,
    ) -> Result<Limiter, LimiterError> {
        if limits.user_windows.is_empty() {
            return Err(LimiterError::InvalidLimits("no user windows".into()));
        }
        for (name, cap) in [
            ("user", Some(limits.user_concurrency)),
            ("app", limits.app_concurrency),
        ] {
            if cap == Some(0) {
                return Err(LimiterError::InvalidLimits(format!(
                    "{name} concurrency is 0"
                )));
            }
        }
        if let BackgroundShare::Fixed(v) = limits.background_share {
            if !(v > 0.0 && v <= 1.0) {
                return Err(LimiterError::InvalidLimits(format!(
                    "background share {v} is not in (0, 1]"
                )));
            }
        }
        let ms = |w: &Window| w.length.as_millis() as i64;
        let span = |ws: &[Window]| {
            let min = ws.iter().map(ms).min().unwrap_or(1);
            let max = ws.iter().map(ms).max().unwrap_or(1);
            (min, max)
        };
        let (us, ul) = span(&limits.user_windows);
        // Without app windows the app breaker (a 429 scoped `Application`) cools down on the
        // user windows' schedule.
        let (as_, al) = if limits.app_windows.is_empty() {
            (us, ul)
        } else {
            span(&limits.app_windows)
        };
        let shortest = us.min(as_);
        let owner = format!("{}:{}", std::process::id(), uuid::Uuid::new_v4().simple());
        Ok(Limiter {
            inner: Arc::new(Inner {
                db,
                clock,
                jitter,
                owner,
                notify: Notify::new(),
                user_notify: Mutex::new(HashMap::new()),
                foreground_grants: Mutex::new(HashMap::new()),
                turns: Mutex::new(HashMap::new()),
                waits: Mutex::new(HashMap::new()),
                waits_changed: tokio::sync::watch::Sender::new(0),
                next_waiter: AtomicU64::new(1),
                // Two shortest windows (2 min by default): long enough for a slow response, short
                // enough that a killed process's slots come back soon.
                lease_ms: (2 * shortest).max(1_000),
                poll_ms: (shortest / 50).clamp(5, 1_000),
                longest_ms: ul.max(al),
                last_prune: AtomicI64::new(0),
                release_margin_ms: AtomicU64::new(0),
                window_slack_ms: AtomicU64::new(0),
                user_policy: CooldownPolicy::for_windows(us, ul),
                app_policy: CooldownPolicy::for_windows(as_, al),
                limits,
            }),
        })
    }

    /// Keeps a finished request's concurrency slot for `margin` more: the service counts a request
    /// in flight until it has sent its last byte, a moment after the client has read it.
    pub fn with_release_margin(self, margin: Duration) -> Self {
        self.inner
            .release_margin_ms
            .store(margin.as_millis() as u64, Ordering::Relaxed);
        self
    }

    /// Holds every window `slack` longer than the service does (see `window_slack_ms`).
    pub fn with_window_slack(self, slack: Duration) -> Self {
        self.inner
            .window_slack_ms
            .store(slack.as_millis() as u64, Ordering::Relaxed);
        self
    }

    /// The limits this limiter models.
    pub fn limits(&self) -> &GraphLimits {
        &self.inner.limits
    }

    /// Waits until one request of `user` in `lane` may start, records it in the ledger, returns the slot.
    pub async fn acquire(&self, user: &str, lane: Lane) -> Result<Permit, LimiterError> {
        let mut v = self.acquire_inner(user, lane, 1, None).await?;
        Ok(v.remove(0))
    }

    /// For `$batch`: waits for at least one slot, then grants as many as are free right now, up to
    /// `max` (at least 1).
    pub async fn acquire_up_to(
        &self,
        user: &str,
        lane: Lane,
        max: usize,
    ) -> Result<Vec<Permit>, LimiterError> {
        self.acquire_inner(user, lane, max.max(1), None).await
    }

    /// Like [`Limiter::acquire`], but returns [`LimiterError::WouldWait`] instead of waiting past
    /// `deadline` (unix ms).
    pub async fn acquire_before(
        &self,
        user: &str,
        lane: Lane,
        deadline: UnixMillis,
    ) -> Result<Permit, LimiterError> {
        let mut v = self.acquire_inner(user, lane, 1, Some(deadline)).await?;
        Ok(v.remove(0))
    }

    async fn acquire_inner(
        &self,
        user: &str,
        lane: Lane,
        max: usize,
        deadline: Option<UnixMillis>,
    ) -> Result<Vec<Permit>, LimiterError> {
        let inner = &self.inner;
        let turn = {
            let mut turns = inner.turns.lock().expect("limiter turns poisoned");
            turns
                .entry((user.to_owned(), lane))
                .or_insert_with(|| Arc::new(tokio::sync::Mutex::new(())))
                .clone()
        };
        let _turn = turn.lock().await;
        let n = inner.next_waiter.fetch_add(1, Ordering::Relaxed);
        let guard = WaiterGuard {
            inner: inner.clone(),
            n,
            id: format!("{}:{n}", inner.owner),
            registered: false,
        };
        let mut guard = guard;
        let user_notify = inner.user_notify(user);
        loop {
            let notified = inner.notify.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            let notified_user = user_notify.notified();
            tokio::pin!(notified_user);
            notified_user.as_mut().enable();
            // A foreground decision may leave a waiter row: removed whatever becomes of this task.
            guard.registered = lane == Lane::Foreground;
            let (me, who, waiter) = (inner.clone(), user.to_owned(), guard.id.clone());
            // Off the runtime: the transaction can wait out another process's write.
            let (decision, now) = inner
                .db
                .call_as(lane.priority(), move |db| {
                    me.grant(db, &who, lane, max, &waiter)
                })
                .await?;
            match decision {
                Decision::Granted(permits) => {
                    guard.registered = false; // the grant transaction deleted the row
                    if lane == Lane::Foreground {
                        *inner
                            .foreground_grants
                            .lock()
                            .expect("limiter counts poisoned")
                            .entry(user.to_owned())
                            .or_default() += permits.len() as u64;
                    }
                    return Ok(permits);
                }
                Decision::Wait(b) => {
                    let reason = b.reason();
                    let timed_until = b.timed.as_ref().map(|(t, _)| *t);
                    if let Some(d) = deadline {
                        let until = timed_until.unwrap_or(now);
                        if until > d || now >= d {
                            return Err(LimiterError::WouldWait { until, reason });
                        }
                    }
                    // Wake at least every third of a lease: deciding again renews this process's
                    // slot leases, so a long request in flight keeps its slot even while every
                    // other task waits out an hour window.
                    let mut wake = inner.wake_at(&b, now).min(now + inner.lease_ms / 3);
                    if let Some(d) = deadline {
                        wake = wake.min(d);
                    }
                    // A wait a person would notice is what `-v` is for; the short ones are `-vv`'s.
                    if wake - now >= 1_000 {
                        tracing::info!(user, ?lane, wait_ms = wake - now, reason = %reason, "Graph request waits");
                    } else {
                        tracing::debug!(user, ?lane, wait_ms = wake - now, reason = %reason, "Graph request waits");
                    }
                    inner.waits.lock().expect("limiter waits poisoned").insert(
                        n,
                        WaitState {
                            user: user.to_owned(),
                            lane,
                            until: timed_until.unwrap_or(wake),
                            message: reason.to_string(),
                            reason,
                        },
                    );
                    inner.waits_changed.send_modify(|n| *n += 1);
                    tokio::select! {
                        _ = inner.clock.sleep_until_ms(wake) => {}
                        _ = notified => {}
                        _ = notified_user => {}
                    }
                }
            }
        }
    }

    /// Live state for `status` and logs. Reads the state database on the calling thread, once
    /// every outcome this process gave back has been written: from async code, call it through
    /// [`Db::call`] (a progress line needs only [`Limiter::waits`]).
    pub fn snapshot(&self) -> Result<LimiterSnapshot, LimiterError> {
        let inner = &self.inner;
        inner.db.settle();
        let now = inner.clock.now_ms();
        let scopes = inner.db.read("reading the Graph limiter's state", |c| {
            inner.scopes_state(c, now)
        })?;
        Ok(LimiterSnapshot {
            at: now,
            scopes,
            waits: self.waits(),
        })
    }

    /// Tells of each change of [`Limiter::waits`] (a wait beginning, decided again or ending).
    pub fn watch_waits(&self) -> tokio::sync::watch::Receiver<u64> {
        self.inner.waits_changed.subscribe()
    }

    /// Why this process's requests wait now, longest first; read from memory, never the database.
    pub fn waits(&self) -> Vec<WaitState> {
        let mut waits: Vec<WaitState> = self
            .inner
            .waits
            .lock()
            .expect("limiter waits poisoned")
            .values()
            .cloned()
            .collect();
        waits.sort_by(|a, b| b.until.cmp(&a.until).then(a.user.cmp(&b.user)));
        waits
    }

    /// Starts counting the foreground requests of `user` this process sends: a scan's cost.
    pub fn scan_meter(&self, user: &str) -> ScanMeter {
        ScanMeter {
            limiter: self.clone(),
            user: user.to_owned(),
            start: self.inner.foreground_grants(user),
        }
    }

    /// Records that `user`'s last scan cost `requests` Graph requests: the foreground reserve of
    /// every window of `user` from now on. Written off the runtime, in order with the grants.
    pub async fn record_scan_cost(&self, user: &str, requests: u32) -> Result<(), LimiterError> {
        let now = self.inner.clock.now_ms();
        let user = user.to_owned();
        self.inner
            .db
            .call_as(Priority::Foreground, move |db| {
                db.write("recording a scan's cost", |c| {
                    ledger::set_scan_cost(c, &user, requests, now)
                })
            })
            .await?;
        Ok(())
    }

    /// The windows background work of `user` may use, as the limiter grants them, with what each
    /// counts now: the user's windows, then the app's (the budget model of the plan and the ETA).
    /// Reads the database on the calling thread, as [`Limiter::snapshot`] does.
    pub fn background_budget(
        &self,
        user: &str,
    ) -> Result<(Vec<WindowState>, Vec<WindowState>), LimiterError> {
        let inner = &self.inner;
        inner.db.settle();
        let now = inner.clock.now_ms();
        let out = inner.db.read("reading the Graph budget", |c| {
            let cost = ledger::scan_cost(c, user)?;
            let user_rows = inner.counted(c, &BudgetHolder::User(user.to_owned()), now, 0)?;
            let app_rows = inner.counted(c, &BudgetHolder::App, now, 0)?;
            let share = inner.limits.background_share;
            Ok((
                model::background_states(&inner.limits.user_windows, share, cost, &user_rows, now),
                model::background_states(&inner.limits.app_windows, share, None, &app_rows, now),
            ))
        })?;
        Ok(out)
    }

    /// Now, on the limiter's clock (unix ms).
    pub fn now_ms(&self) -> UnixMillis {
        self.inner.clock.now_ms()
    }
}

/// Counts a scan's foreground requests; [`ScanMeter::finish`] records them as the account's scan
/// cost (the foreground reserve).
pub struct ScanMeter {
    limiter: Limiter,
    user: String,
    start: u64,
}

impl ScanMeter {
    /// The requests counted so far.
    pub fn requests(&self) -> u64 {
        self.limiter.inner.foreground_grants(&self.user) - self.start
    }

    /// Records the scan's cost; returns it.
    pub async fn finish(self) -> Result<u32, LimiterError> {
        let n = self.requests().min(u32::MAX as u64) as u32;
        self.limiter.record_scan_cost(&self.user, n).await?;
        Ok(n)
    }
}

/// Cleans up a waiting request's traces when it is granted, fails or is cancelled.
struct WaiterGuard {
    inner: Arc<Inner>,
    n: u64,
    id: String,
    registered: bool,
}

impl Drop for WaiterGuard {
    fn drop(&mut self) {
        let waited = self
            .inner
            .waits
            .lock()
            .expect("limiter waits poisoned")
            .remove(&self.n);
        if waited.is_some() {
            self.inner.waits_changed.send_modify(|n| *n += 1);
        }
        if self.registered {
            let id = std::mem::take(&mut self.id);
            // Only a foreground request registers as a waiter.
            self.inner.db.submit_as(Priority::Foreground, move |db| {
                let r = db.write("removing a foreground waiter", |tx| {
                    ledger::delete_waiter(tx, &id)
                });
                if let Err(e) = r {
                    tracing::warn!(error = %e, "could not remove a foreground waiter (its lease ends it)");
                }
            });
        }
    }
}

impl Inner {
    fn windows(&self, scope: &BudgetHolder) -> &[Window] {
        match scope {
            BudgetHolder::App => &self.limits.app_windows,
            BudgetHolder::User(_) => &self.limits.user_windows,
        }
    }

    fn cap(&self, scope: &BudgetHolder) -> Option<u32> {
        match scope {
            BudgetHolder::App => self.limits.app_concurrency,
            BudgetHolder::User(_) => Some(self.limits.user_concurrency),
        }
    }

    fn foreground_grants(&self, user: &str) -> u64 {
        self.foreground_grants
            .lock()
            .expect("limiter counts poisoned")
            .get(user)
            .copied()
            .unwrap_or(0)
    }

    fn policy(&self, scope: &BudgetHolder) -> CooldownPolicy {
        match scope {
            BudgetHolder::App => self.app_policy,
            BudgetHolder::User(_) => self.user_policy,
        }
    }

    fn decision_policy(&self) -> Policy<'_> {
        Policy {
            limits: &self.limits,
            window_slack_ms: self.window_slack_ms.load(Ordering::Relaxed) as i64,
        }
    }

    /// The rows that may count in one of `scope`'s windows (held `slack_ms` longer), oldest first;
    /// none for a scope without windows.
    fn counted(
        &self,
        c: &Connection,
        scope: &BudgetHolder,
        now: UnixMillis,
        slack_ms: i64,
    ) -> rusqlite::Result<Vec<Counted>> {
        let ws = self.windows(scope);
        let Some(longest) = ws.iter().map(|w| w.length.as_millis() as i64).max() else {
            return Ok(Vec::new());
        };
        let u = match scope {
            BudgetHolder::User(u) => Some(u.as_str()),
            BudgetHolder::App => None,
        };
        ledger::counted_since(c, u, now - longest - slack_ms)
    }

    /// `scope`'s breaker as a decision for `user` sees it.
    fn breaker_view(
        &self,
        c: &Connection,
        scope: &BudgetHolder,
        user: &str,
    ) -> rusqlite::Result<Option<BreakerView>> {
        Ok(breaker::load(c, &scope.key())?.map(|b| BreakerView {
            open_until: b.open_until,
            trips: b.trips,
            probe_remote: b
                .probe_id
                .map(|_| b.probe_owner.as_deref() != Some(self.owner.as_str())),
            probe_left_to_others_until: b.probe_left_to_others_until(user),
        }))
    }

    /// Everything one decision for `user` in `lane` reads, in one go (inside its transaction).
    fn read_view(
        &self,
        c: &Connection,
        user: &str,
        lane: Lane,
        now: UnixMillis,
    ) -> rusqlite::Result<LedgerView> {
        let slack = self.window_slack_ms.load(Ordering::Relaxed) as i64;
        let me = BudgetHolder::User(user.to_owned());
        let f = ledger::in_flight_view(c, user, &self.owner)?;
        let brake = match ledger::brake(c, user)? {
            Some(b) => {
                let view = BrakeView {
                    percentage: b.percentage,
                    at: b.at,
                    hold_until: b.hold_until,
                    last_granted: ledger::last_granted(c, user)?,
                };
                let stale = model::shortest(&self.limits.user_windows)
                    .is_some_and(|w| model::brake_next(&view, w, now).is_none());
                if stale {
                    // A whole window has passed since the hint: it says nothing about now.
                    ledger::clear_brake(c, user)?;
                    None
                } else {
                    Some(view)
                }
            }
            None => None,
        };
        let background = lane == Lane::Background;
        let (waiting_user, waiting_app) = if background {
            ledger::foreground_waiting(c, user)?
        } else {
            (false, false)
        };
        Ok(LedgerView {
            now,
            user: ScopeView {
                counted: self.counted(c, &me, now, slack)?,
                in_flight: f.user,
                breaker: self.breaker_view(c, &me, user)?,
            },
            app: ScopeView {
                counted: self.counted(c, &BudgetHolder::App, now, slack)?,
                in_flight: f.app,
                breaker: self.breaker_view(c, &BudgetHolder::App, user)?,
            },
            scan_cost: if background {
                ledger::scan_cost(c, user)?
            } else {
                None
            },
            brake,
            foreground_waiting_user: waiting_user,
            foreground_waiting_app: waiting_app,
            foreground_in_flight_user: f.foreground_user,
            foreground_in_flight_any: f.foreground_any,
        })
    }

    fn bg_cap(&self, cap: u32) -> u32 {
        budget::background_cap(cap, self.limits.background_share)
    }

    /// One grant transaction for `user` in `lane` (on the database's side of [`Db::call`]); the
    /// time is read inside it, so a grant that waited for another process's write is stamped
    /// when it is made.
    fn grant(
        self: &Arc<Self>,
        db: &Db,
        user: &str,
        lane: Lane,
        max: usize,
        waiter_id: &str,
    ) -> Result<(Decision, UnixMillis), StoreError> {
        let (decided, now) = db.write("granting a Graph request slot", |tx| {
            let now = self.clock.now_ms();
            Ok((self.decide(tx, user, lane, max, now, waiter_id)?, now))
        })?;
        let decision = match decided {
            Ok(ids) => Decision::Granted(
                ids.into_iter()
                    .map(|(id, probe_scopes)| Permit {
                        inner: self.clone(),
                        id,
                        user: user.to_owned(),
                        lane,
                        granted_at: now,
                        probe_scopes,
                        done: false,
                    })
                    .collect(),
            ),
            Err(blocked) => Decision::Wait(blocked),
        };
        Ok((decision, now))
    }

    fn wake_at(&self, b: &Blocked, now: UnixMillis) -> UnixMillis {
        match (&b.timed, b.untimed.is_some()) {
            (Some((t, _)), _) => *t,
            // Local blockers wake us through `notify`; the lease bounds a leaked local slot.
            (None, true) if b.remote => now + self.poll_ms,
            _ => now + self.lease_ms,
        }
    }

    /// The grant decision, inside one IMMEDIATE transaction.
    fn decide(
        &self,
        c: &Connection,
        user: &str,
        lane: Lane,
        max: usize,
        now: UnixMillis,
        waiter_id: &str,
    ) -> rusqlite::Result<Result<Vec<Granted>, Blocked>> {
        // Refresh first: this process is alive, so its own slots must not expire under it.
        ledger::refresh_leases(c, &self.owner, now + self.lease_ms)?;
        ledger::expire(c, now)?;
        if now - self.last_prune.load(Ordering::Relaxed) >= self.longest_ms / 16 {
            // Rows inside the slack still count in the slackened windows: keep them.
            let slack = self.window_slack_ms.load(Ordering::Relaxed) as i64;
            ledger::prune(c, now - self.longest_ms - slack)?;
            self.last_prune.store(now, Ordering::Relaxed);
        }

        let view = self.read_view(c, user, lane, now)?;
        let (count, probes) =
            match model::decide(self.decision_policy(), &view, user, lane, max as u32) {
                Verdict::Wait(blocked) => {
                    if lane == Lane::Foreground {
                        let wake = self.wake_at(&blocked, now);
                        ledger::upsert_waiter(
                            c,
                            waiter_id,
                            user,
                            blocked.app_blocked,
                            wake + self.lease_ms,
                        )?;
                    }
                    return Ok(Err(blocked));
                }
                Verdict::Grant { count, probes } => (count, probes),
            };
        if lane == Lane::Foreground {
            ledger::delete_waiter(c, waiter_id)?;
        }
        let lease = now + self.lease_ms;
        let mut probe_scopes: Vec<String> = probes.iter().map(BudgetHolder::key).collect();
        let mut grants = Vec::with_capacity(count as usize);
        for i in 0..count {
            let id = ledger::insert_grant(c, user, lane, now, &self.owner, lease)?;
            let probes = if i == 0 {
                for key in &probe_scopes {
                    breaker::claim_probe(c, key, id, &self.owner, lease)?;
                }
                std::mem::take(&mut probe_scopes)
            } else {
                Vec::new()
            };
            grants.push((id, probes));
        }
        Ok(Ok(grants))
    }

    fn finish(self: &Arc<Self>, p: Sent, outcome: Outcome) {
        let now = self.clock.now_ms();
        let margin = self.release_margin_ms.load(Ordering::Relaxed);
        // The slot is freed a little later (when a runtime can do it): a next request sent the
        // instant this one's answer was read could otherwise reach the service while it still
        // counts this one in flight.
        let delayed = margin > 0
            && !matches!(outcome, Outcome::Throttled(..))
            && tokio::runtime::Handle::try_current().is_ok();
        // Every user waits on an app-wide cap and on the app breaker's probe.
        let app_wide = self.limits.app_concurrency.is_some()
            || p.probe_scopes.iter().any(|k| *k == BudgetHolder::App.key());
        if delayed {
            let (me, id, user, lane) = (self.clone(), p.id, p.user.clone(), p.lane);
            tokio::spawn(async move {
                tokio::time::sleep(Duration::from_millis(margin)).await;
                let db = me.db.clone();
                db.submit_as(lane.priority(), move |db| {
                    if let Err(e) = db.write("freeing a Graph slot", |c| ledger::release_slot(c, id))
                    {
                        tracing::warn!(error = %e, "could not free a Graph slot; its lease will end it");
                    }
                    me.wake(&user, app_wide);
                });
            });
        }
        // Written off the runtime; the waiters it may unblock are woken once it is. A 429 is
        // written before any grant asked for after it (an ordered call). Any other outcome may be
        // overtaken by a foreground grant, which then sees the slot still in flight and the
        // request counted from its grant, as for an answer that came a moment later; one lane's
        // grants never overtake its own outcomes.
        let priority = match outcome {
            Outcome::Throttled(..) => Priority::Ordered,
            _ => p.lane.priority(),
        };
        let me = self.clone();
        self.db.submit_as(priority, move |db| {
            let r = db.write("recording a Graph request's outcome", |c| {
                if delayed {
                    ledger::count_from(c, p.id, now)?;
                    // Should this process end before the delayed release runs, the slot still frees
                    // itself at the end of the margin.
                    ledger::release_slot_at(c, p.id, now + margin as i64)?;
                } else {
                    ledger::complete(c, p.id, now)?;
                }
                match outcome {
                    Outcome::Succeeded(pct) => {
                        for key in &p.probe_scopes {
                            breaker::close_if_probe(c, key, p.id)?;
                        }
                        match pct {
                            // Only a reading above what our own ledger explains means someone else
                            // uses this user's budget; our own use is already paced by the model.
                            Some(pct) if pct > 0.8 && pct > me.own_use(c, &p.user, now)? + 0.05 => {
                                let w = model::shortest(&me.limits.user_windows)
                                    .expect("validated: at least one window");
                                let len = w.length.as_millis() as i64;
                                let rows = me.counted(c, &BudgetHolder::User(p.user.clone()), now, 0)?;
                                let oldest = rows.iter().find(|r| r.at > now - len).map(|r| r.at);
                                let hold_until = if pct >= 1.0 {
                                    oldest.unwrap_or(now) + len
                                } else {
                                    now
                                };
                                let brake = ledger::Brake {
                                    percentage: pct,
                                    at: now,
                                    hold_until,
                                };
                                ledger::set_brake(c, &p.user, brake)?;
                            }
                            _ => ledger::clear_brake(c, &p.user)?,
                        }
                    }
                    Outcome::Throttled(scope, retry_after) => {
                        let own = BudgetHolder::User(p.user.clone());
                        let (scopes, guess) = match scope {
                            ThrottleScope::User => (vec![own], false),
                            ThrottleScope::Application => (vec![BudgetHolder::App], false),
                            ThrottleScope::Unknown => me.unscoped_scopes(c, &p.user, now)?,
                        };
                        for s in &scopes {
                            let basis = match scope {
                                _ if guess && *s == BudgetHolder::App => Basis::Guessed,
                                ThrottleScope::Unknown => Basis::Inferred,
                                _ => Basis::Named,
                            };
                            me.trip(c, s, &p, now, retry_after, basis)?;
                        }
                        for key in &p.probe_scopes {
                            if !scopes.iter().any(|s| &s.key() == key) {
                                breaker::release_probe(c, key, p.id)?;
                            }
                        }
                    }
                    Outcome::Failed | Outcome::Dropped => {
                        for key in &p.probe_scopes {
                            breaker::release_probe(c, key, p.id)?;
                        }
                    }
                }
                Ok(())
            });
            if let Err(e) = r {
                tracing::warn!(error = %e, user = %p.user, "could not record a Graph request's outcome; its slot lease will end it");
            }
            me.wake(&p.user, app_wide);
        });
    }

    fn user_notify(&self, user: &str) -> Arc<Notify> {
        self.user_notify
            .lock()
            .expect("limiter notify poisoned")
            .entry(user.to_owned())
            .or_default()
            .clone()
    }

    /// Wakes the waiters a finished request of `user` may unblock: that user's, and everyone's when
    /// it changed something of the app scope's.
    fn wake(&self, user: &str, app_wide: bool) {
        self.user_notify(user).notify_waiters();
        if app_wide {
            self.notify.notify_waiters();
        }
    }

    /// The highest share of any of `user`'s windows our own ledger has used (0..=1 and above).
    fn own_use(&self, c: &Connection, user: &str, now: UnixMillis) -> rusqlite::Result<f64> {
        let rows = self.counted(c, &BudgetHolder::User(user.to_owned()), now, 0)?;
        Ok(model::highest_use(&self.limits.user_windows, &rows, now))
    }

    /// Which breakers a 429 of `user` without `x-ms-throttle-scope` opens, and whether the app's
    /// among them is a guess.
    ///
    /// When another account is throttled too (its breaker open or waiting for its probe) or the
    /// app's breaker is (not on `user`'s own guess), the app's budget is what binds: every account
    /// cools down, on one breaker whose probes serve them all. When `user`'s 429 is the first of
    /// its throttle while other accounts are sending, the app's breaker opens too, as a guess:
    /// otherwise every other account would send (and have refused) requests of its own before its
    /// first 429 told it, and OneNote counts refused requests, so in a team migration each of them
    /// would prolong an app-wide throttle. The guess costs the other accounts one cooldown when
    /// the budget was `user`'s own: another account's request is its probe, and its answer closes
    /// it. Otherwise (one account, or `user`'s own probe refused again) the budget is `user`'s.
    fn unscoped_scopes(
        &self,
        c: &Connection,
        user: &str,
        now: UnixMillis,
    ) -> rusqlite::Result<(Vec<BudgetHolder>, bool)> {
        let own = BudgetHolder::User(user.to_owned());
        let key = own.key();
        if breaker::throttled_lately(c, "user:%", &key, user, now)?
            || breaker::throttled_lately(c, "app", &key, user, now)?
        {
            return Ok((vec![own, BudgetHolder::App], false));
        }
        let first = breaker::load(c, &key)?.is_none_or(|b| b.open_until + b.cooldown_ms <= now);
        let shortest =
            model::shortest(&self.limits.user_windows).map_or(0, |w| w.length.as_millis() as i64);
        if first && ledger::others_sending(c, user, now - shortest)? {
            return Ok((vec![own, BudgetHolder::App], true));
        }
        Ok((vec![own], false))
    }

    /// Opens (or re-opens, longer) the breaker of `scope` after a 429 of permit `p`, on `basis`.
    fn trip(
        &self,
        c: &Connection,
        scope: &BudgetHolder,
        p: &Sent,
        now: UnixMillis,
        retry_after: Option<Duration>,
        basis: Basis,
    ) -> rusqlite::Result<()> {
        let guessed = basis == Basis::Guessed;
        let key = scope.key();
        // The model's own Retry-After: until every window of the scope has room.
        let rows = self.counted(c, scope, now, 0)?;
        let model = model::room_at(self.windows(scope), &rows, now) - now;
        let ra = retry_after.map(|d| d.as_millis() as i64).unwrap_or(0);
        let policy = self.policy(scope);
        let existing = breaker::load(c, &key)?;
        let trips = match &existing {
            Some(b) if b.probe_id == Some(p.id) => b.trips + 1,
            Some(b) if p.granted_at < b.opened_at => {
                // Sent before the breaker opened: it says nothing new about the cooldown, but a
                // second account refused confirms a guess.
                let confirmed = match basis {
                    Basis::Named => true,
                    Basis::Inferred => b.inferred_from.as_deref() != Some(p.user.as_str()),
                    Basis::Guessed => false,
                };
                return breaker::extend(c, &key, now + model.max(ra), confirmed);
            }
            Some(b) => b.trips + 1,
            None => 1,
        };
        let cooldown = policy.cooldown_ms(trips, self.jitter.fraction(), model, retry_after);
        tracing::info!(scope = %scope, trips, cooldown_ms = cooldown, guessed, "Graph throttled: breaker open");
        breaker::store(
            c,
            &breaker::Breaker {
                scope: key,
                opened_at: now,
                open_until: now + cooldown,
                trips,
                cooldown_ms: cooldown,
                probe_id: None,
                probe_owner: None,
                inferred_from: guessed.then(|| p.user.clone()),
            },
        )
    }

    fn scopes_state(&self, c: &Connection, now: UnixMillis) -> rusqlite::Result<Vec<BudgetState>> {
        let mut scopes = vec![BudgetHolder::App];
        scopes.extend(ledger::known_users(c)?.into_iter().map(BudgetHolder::User));
        let breakers: HashMap<String, breaker::Breaker> = breaker::load_all(c)?
            .into_iter()
            .map(|b| (b.scope.clone(), b))
            .collect();
        let mut out = Vec::new();
        for scope in scopes {
            let u = match &scope {
                BudgetHolder::User(u) => Some(u.as_str()),
                BudgetHolder::App => None,
            };
            let scan_cost = match u {
                Some(u) => ledger::scan_cost(c, u)?,
                None => None,
            };
            let rows = self.counted(c, &scope, now, 0)?;
            let windows = model::scope_windows(
                self.windows(&scope),
                self.limits.background_share,
                scan_cost,
                &rows,
                now,
                0,
            )
            .iter()
            .map(|f| model::window_use(f, self.limits.background_share))
            .collect();
            let fv = ledger::in_flight_view(c, u.unwrap_or_default(), &self.owner)?;
            let f = if u.is_some() { fv.user } else { fv.app };
            let breaker = match breakers.get(&scope.key()) {
                None => BreakerState::Closed,
                Some(b) if now < b.open_until => BreakerState::Open {
                    until: b.open_until,
                    trips: b.trips,
                },
                Some(b) => BreakerState::HalfOpen {
                    probe_in_flight: b.probe_id.is_some(),
                    trips: b.trips,
                },
            };
            let brake = match u {
                Some(u) => ledger::brake(c, u)?.map(|b| b.percentage),
                None => None,
            };
            out.push(BudgetState {
                windows,
                in_flight_foreground: f.total - f.background,
                in_flight_background: f.background,
                concurrency: self.cap(&scope),
                background_concurrency: self.cap(&scope).map(|c| self.bg_cap(c)),
                breaker,
                brake,
                foreground_waiting: ledger::waiter_count(c, u)?,
                scope,
            });
        }
        Ok(out)
    }
}

/// Why a 429 opens a breaker.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Basis {
    /// The service named the scope (`x-ms-throttle-scope`).
    Named,
    /// No scope named; the caller's own, or the app's because another account is throttled too.
    Inferred,
    /// The app's, on one account's unscoped 429 while others send (see [`Inner::unscoped_scopes`]).
    Guessed,
}

/// What a permit's outcome is written with.
struct Sent {
    id: i64,
    user: String,
    lane: Lane,
    granted_at: UnixMillis,
    probe_scopes: Vec<String>,
}

#[derive(Clone, Copy)]
enum Outcome {
    Succeeded(Option<f64>),
    Throttled(ThrottleScope, Option<Duration>),
    Failed,
    Dropped,
}

/// One granted request. Exactly one outcome per permit; dropping it without one counts it as sent
/// (it is in the ledger already) and releases its slot.
pub struct Permit {
    inner: Arc<Inner>,
    id: i64,
    user: String,
    lane: Lane,
    granted_at: UnixMillis,
    probe_scopes: Vec<String>,
    done: bool,
}

impl std::fmt::Debug for Permit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Permit")
            .field("id", &self.id)
            .field("user", &self.user)
            .field("lane", &self.lane)
            .field("granted_at", &self.granted_at)
            .field("probe", &!self.probe_scopes.is_empty())
            .finish()
    }
}

impl Permit {
    /// The user the request is counted for.
    pub fn user(&self) -> &str {
        &self.user
    }

    /// The lane it was granted in.
    pub fn lane(&self) -> Lane {
        self.lane
    }

    /// When it was granted (unix ms).
    pub fn granted_at(&self) -> UnixMillis {
        self.granted_at
    }

    /// Whether it is a breaker's half-open probe.
    pub fn is_probe(&self) -> bool {
        !self.probe_scopes.is_empty()
    }

    /// A 2xx (or a client error that is not a throttle); `limit_percentage` is
    /// `x-ms-throttle-limit-percentage` when present.
    pub fn succeeded(mut self, limit_percentage: Option<f64>) {
        self.finish(Outcome::Succeeded(limit_percentage));
    }

    /// A 429 or a body error code 20166: opens the breaker of `scope`; `retry_after` is never
    /// undercut.
    pub fn throttled(mut self, scope: ThrottleScope, retry_after: Option<Duration>) {
        self.finish(Outcome::Throttled(scope, retry_after));
    }

    /// A 5xx or network failure: counted, but not a throttle.
    pub fn failed(mut self) {
        self.finish(Outcome::Failed);
    }

    fn finish(&mut self, outcome: Outcome) {
        if !self.done {
            self.done = true;
            let sent = Sent {
                id: self.id,
                user: self.user.clone(),
                lane: self.lane,
                granted_at: self.granted_at,
                probe_scopes: std::mem::take(&mut self.probe_scopes),
            };
            self.inner.finish(sent, outcome);
        }
    }
}

impl Drop for Permit {
    fn drop(&mut self) {
        self.finish(Outcome::Dropped);
    }
}
