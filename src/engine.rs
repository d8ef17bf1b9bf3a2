//! The `migrate` run as the library does it: which accounts it covers, failed items put back when
//! asked, each account planned and drained side by side, and the summary of the queue afterwards.
//! [`migrate()`] is the whole run; the command only parses, shows the [`Event`]s and maps the
//! [`Outcome`] to an exit code.

use std::future::Future;

#[cfg(test)]
mod drain_tests;
pub mod estimate;
pub mod events;
mod listed_empty;
mod locate;
mod migrate;
pub mod pending;
pub mod plan;
pub mod way;

pub use events::{Changes, Event, Observer, Progress, Snapshot};
pub use migrate::{migrate, MigrateError, Outcome, Process, Report, Request, Services, WORKERS};

use crate::failure::{Class, Classify, Meaning, Next, Scope};
use crate::graph::sources::account_of_key;
use crate::queue::{Migration, RunEnd, RunOptions};
use crate::store::jobs::RunToken;
use crate::store::{Db, StoreError};

/// Which accounts a run covers.
#[derive(Clone, Copy, Debug, Default)]
pub struct Selection<'a> {
    /// One account by name.
    pub account: Option<&'a str>,
    /// Every signed-in account.
    pub all_accounts: bool,
    /// Only what is queued already (`--resume`).
    pub resume: bool,
}

/// Why no accounts could be selected.
#[derive(Debug, thiserror::Error)]
pub enum SelectError {
    /// `--all-accounts` with nobody signed in.
    #[error("no signed-in accounts; run `notebridge login`")]
    NoneSignedIn,
    /// `--resume --account` naming an account with neither sign-in nor queued work (a typo must
    /// not look like "nothing left to do").
    #[error("no account named {name} in this database (accounts: {known}); nothing was resumed")]
    Unknown {
        /// The name asked for.
        name: String,
        /// The accounts that exist, listed.
        known: String,
    },
    /// The state database failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl Classify for SelectError {
    fn class(&self) -> Class {
        match self {
            SelectError::NoneSignedIn => Class::new(Scope::Run, Next::Never).means(Meaning::SignIn),
            SelectError::Unknown { .. } => {
                Class::new(Scope::Run, Next::Never).means(Meaning::Usage)
            }
            SelectError::Store(e) => e.class(),
        }
    }
}

/// The accounts `sel` covers, in the order they are run.
pub fn select_accounts(db: &Db, sel: Selection<'_>) -> Result<Vec<String>, SelectError> {
    if sel.all_accounts {
        let all: Vec<String> = db
            .accounts()?
            .into_iter()
            .filter(|a| a.signed_in())
            .map(|a| a.name)
            .collect();
        if all.is_empty() {
            return Err(SelectError::NoneSignedIn);
        }
        return Ok(all);
    }
    match (sel.account, sel.resume) {
        (Some(a), true) if db.account(a)?.is_none() && db.queued_keys(a)?.is_empty() => {
            let known: Vec<String> = db.accounts()?.into_iter().map(|a| a.name).collect();
            Err(SelectError::Unknown {
                name: a.to_owned(),
                known: if known.is_empty() {
                    "none".to_owned()
                } else {
                    known.join(", ")
                },
            })
        }
        (Some(a), _) => Ok(vec![a.to_owned()]),
        // A group's or site's work is queued under its key and drained with its account.
        (None, true) => {
            let mut all: Vec<String> = db
                .accounts_with_jobs()?
                .iter()
                .map(|k| account_of_key(k).to_owned())
                .collect();
            all.sort();
            all.dedup();
            Ok(all)
        }
        (None, false) => Ok(vec!["default".into()]),
    }
}

/// Puts the permanently failed items of `accounts` (their groups' and sites' included) back in
/// the queue (`--retry-failed`) as the run lock's holder `token`; returns how many.
pub fn retry_failed(
    db: &Db,
    token: &RunToken,
    accounts: &[String],
    now: i64,
) -> Result<usize, StoreError> {
    let mut keys = Vec::new();
    for a in accounts {
        keys.extend(db.queued_keys(a)?);
    }
    if keys.is_empty() {
        return Ok(0);
    }
    db.retry_failed(token, &keys, now)
}

/// What drains the queue of some inventory keys: the queue's [`Migration`] (a fake in tests, so
/// [`drain`] runs on tokio's paused clock).
pub trait Drain {
    /// The state database whose queue is drained.
    fn db(&self) -> &std::sync::Arc<Db>;
    /// Drains the queue of `opts.accounts`.
    fn run(
        &self,
        opts: &RunOptions,
    ) -> impl Future<Output = Result<RunEnd, crate::queue::RunError>>;
}

impl Drain for Migration {
    fn db(&self) -> &std::sync::Arc<Db> {
        Migration::db(self)
    }

    fn run(
        &self,
        opts: &RunOptions,
    ) -> impl Future<Output = Result<RunEnd, crate::queue::RunError>> {
        Migration::run(self, opts)
    }
}

/// Prepares (through `prepare`: plans, announces) and drains each of `accounts` side by side with
/// `workers` pages in flight each: one account's throttle never holds up another's planning or
/// pages. Stopped when any account's run stopped with work left.
pub async fn drain<D, F, Fut, E>(
    migration: &D,
    accounts: &[String],
    deadline: Option<i64>,
    workers: usize,
    prepare: F,
) -> Result<RunEnd, E>
where
    D: Drain,
    F: Fn(String) -> Fut,
    Fut: Future<Output = Result<(), E>>,
    E: From<StoreError> + From<crate::queue::RunError>,
{
    let db = migration.db().clone();
    let prepare = &prepare;
    let runs = accounts.iter().map(|account| {
        let db = db.clone();
        async move {
            prepare(account.clone()).await?;
            // The account's own work and its groups' and sites', queued now or before.
            let a = account.clone();
            let keys = db.call(move |db| db.queued_keys(&a)).await?;
            if keys.is_empty() {
                return Ok(RunEnd::Finished);
            }
            let opts = RunOptions {
                accounts: keys,
                deadline,
                workers,
            };
            Ok::<_, E>(migration.run(&opts).await?)
        }
    });
    let mut end = RunEnd::Finished;
    for e in futures::future::join_all(runs).await {
        if e? == RunEnd::Stopped {
            end = RunEnd::Stopped;
        }
    }
    Ok(end)
}

/// What the queue of the run's accounts holds after it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    /// Items failed for good.
    pub failed: i64,
    /// Items waiting on a failed one.
    pub blocked: i64,
    /// OneNote pages migrated.
    pub pages_done: i64,
    /// OneNote pages planned.
    pub pages_total: i64,
}

/// The summary of `accounts`' queues (their groups' and sites' included).
pub fn summarise(db: &Db, accounts: &[String]) -> Result<Summary, StoreError> {
    let mut s = Summary::default();
    for a in accounts {
        let c = db.account_job_counts(a)?;
        s.failed += c.failed;
        s.blocked += c.blocked;
        s.pages_done += c.pages_done;
        s.pages_total += c.pages_total;
    }
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn open() -> (tempfile::TempDir, Db) {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(&dir.path().join("s.db")).unwrap();
        (dir, db)
    }

    #[test]
    fn a_resume_of_an_unknown_account_is_a_usage_error_naming_the_known_ones() {
        let (_dir, db) = open();
        let sel = Selection {
            account: Some("typo"),
            resume: true,
            ..Selection::default()
        };
        let e = select_accounts(&db, sel).unwrap_err();
        assert_eq!(e.meaning(), Some(Meaning::Usage));
        assert!(e.to_string().contains("(accounts: none)"), "{e}");
        // Without --resume the name is taken as given (planning signs it in or says why).
        let sel = Selection {
            account: Some("typo"),
            ..Selection::default()
        };
        assert_eq!(select_accounts(&db, sel).unwrap(), ["typo"]);
        assert_eq!(
            select_accounts(&db, Selection::default()).unwrap(),
            ["default"]
        );
    }

    #[test]
    fn all_accounts_with_nobody_signed_in_asks_for_a_sign_in() {
        let (_dir, db) = open();
        let sel = Selection {
            all_accounts: true,
            ..Selection::default()
        };
        let e = select_accounts(&db, sel).unwrap_err();
        assert_eq!(e.meaning(), Some(Meaning::SignIn));
        let resume = Selection {
            resume: true,
            ..Selection::default()
        };
        assert!(select_accounts(&db, resume).unwrap().is_empty());
        let lock = db
            .acquire_run_lock(1, "run", 0, std::time::Duration::from_secs(90), |_| false)
            .unwrap()
            .unwrap();
        assert_eq!(retry_failed(&db, &lock, &["a".into()], 1).unwrap(), 0);
        assert_eq!(summarise(&db, &["a".into()]).unwrap(), Summary::default());
    }
}
