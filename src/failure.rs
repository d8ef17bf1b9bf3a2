//! What a failure means. Every library error says it once, in one exhaustive match per error type
//! ([`Classify::class`]): whose failure it is ([`Scope`]), what comes next ([`Next`]) and, for the
//! person or script that ran the command, its [`Meaning`]. The layers that act on failures (the
//! clients, the writer, the queue) and the command layer (`cli::exit`, the only place that knows exit
//! numbers) all read that one answer instead of deciding again by variant or by text.
//!
//! Retries share one budget per item, after uv's `uv-client/src/retry.rs`: one policy
//! ([`ITEM_RETRIES`]) says how many retries an item gets and how long each layer waits between them;
//! within one attempt at an item, every layer (the Notion client, the writer, the file upload)
//! spends from one shared count ([`Retries`]), and a failure that comes up carries what the layers
//! below spent ([`Classify::retries`]) so the queue spends only what is left. One failing request
//! cannot multiply into each layer's attempts times the next one's.

use std::fmt;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crate::clock::Jitter;

/// The longest pause before a request is sent again in process.
const MAX_PAUSE: Duration = Duration::from_secs(60);

/// The meaning of an error for the person or script that ran the command.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Meaning {
    /// The input or configuration is wrong (a flag, variable, file, target or workspace setting the
    /// user must change); retrying the same command cannot help.
    Usage,
    /// An account must sign in (again) before the work can go on.
    SignIn,
    /// Another process is doing this work on the same state database.
    Busy,
    /// The work stopped safely with something left to do; a later run continues it.
    WorkRemaining,
}

/// Whose failure it is: how much of the work it concerns (ordered from the least to the most).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Scope {
    /// This one attempt at a request: the same request may well succeed.
    Attempt,
    /// One element or file of an item: the item goes on without it.
    Resource,
    /// One item (a page, a section, a file asked for by itself): the rest of the run goes on.
    Item,
    /// One account (its sign-in): its work cannot go on, other accounts' could.
    Account,
    /// The whole run: every further request would meet it.
    Run,
}

/// What comes next after the failure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Next {
    /// Try again: after this long when the service said so, else after the retry policy's backoff.
    Retry(Option<Duration>),
    /// Carry on with the element degraded (a placeholder, a link as text), reported.
    Degrade,
    /// Stop the work it concerns with nothing marked failed; a later run goes on from there.
    Stop,
    /// Never: trying again cannot help until something changes (the item fails, or the run ends).
    Never,
}

/// One error's classification.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Class {
    /// Whose failure it is.
    pub scope: Scope,
    /// What comes next.
    pub next: Next,
    /// What it means to whoever ran the command; `None` when unexpected (a bug, an outage that
    /// outlasted every retry).
    pub meaning: Option<Meaning>,
}

impl Class {
    /// A class without a meaning for the caller.
    pub const fn new(scope: Scope, next: Next) -> Self {
        Self {
            scope,
            next,
            meaning: None,
        }
    }

    /// The same class with a meaning for the caller.
    pub const fn means(self, meaning: Meaning) -> Self {
        Self {
            meaning: Some(meaning),
            ..self
        }
    }

    /// Try this attempt again (after `after` when the service said).
    pub const fn retry(after: Option<Duration>) -> Self {
        Self::new(Scope::Attempt, Next::Retry(after))
    }

    /// Stop the run resumably: a later run goes on (exit 75 unless the meaning says otherwise).
    pub const fn stop_run() -> Self {
        Self::new(Scope::Run, Next::Stop).means(Meaning::WorkRemaining)
    }

    /// This item fails for good; the rest goes on.
    pub const fn item_fails() -> Self {
        Self::new(Scope::Item, Next::Never)
    }

    /// The stable text stored next to the message in the jobs table and shown by `status --json`:
    /// `scope/next`, e.g. `item/never`, `attempt/retry`, `run/stop`.
    pub fn code(&self) -> String {
        self.to_string()
    }
}

impl Scope {
    /// The scope's name in [`Class::code`].
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Attempt => "attempt",
            Scope::Resource => "resource",
            Scope::Item => "item",
            Scope::Account => "account",
            Scope::Run => "run",
        }
    }
}

impl Next {
    /// The next step's name in [`Class::code`].
    pub fn as_str(self) -> &'static str {
        match self {
            Next::Retry(_) => "retry",
            Next::Degrade => "degrade",
            Next::Stop => "stop",
            Next::Never => "never",
        }
    }
}

impl fmt::Display for Class {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.scope.as_str(), self.next.as_str())
    }
}

/// Implemented by every library error: one exhaustive classification per type (no wildcard arms, so
/// a new variant does not compile until it is classified).
pub trait Classify {
    /// Whose failure this is, what comes next, and what it means to the caller.
    fn class(&self) -> Class;

    /// What this error means to the command's caller, or `None` when it is unexpected.
    fn meaning(&self) -> Option<Meaning> {
        self.class().meaning
    }

    /// How many times a lower layer already retried before this failure came up: spent from the
    /// item's one [`RetryBudget`].
    fn retries(&self) -> u32 {
        0
    }
}

/// The one retry policy for an item across the layers (client, writer, upload, queue), after uv's
/// `uv-client/src/retry.rs`: how many retries in all, and how long a layer waits before each. Each
/// layer adds the retries the failure says lower layers made to its own and retries only while the
/// total is under the budget.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RetryBudget {
    /// Retries allowed in all (the first attempt is not a retry).
    pub max_retries: u32,
    /// The queue's backoff before the first retry of an item; doubled each time.
    pub base: Duration,
    /// The longest backoff.
    pub cap: Duration,
    /// The pause before one request is sent again within an attempt (client, writer, upload);
    /// doubled each time, capped at a minute. Short, as the answer is awaited in process.
    pub pause: Duration,
}

/// An item's retries in all, the client's, the writer's, the upload's and the queue's included (the
/// first attempt and four more; in process 0.5 s after the first and doubling, the queue's 4 s and
/// doubling): a failure a lower layer retried is not retried again on top.
pub const ITEM_RETRIES: RetryBudget = RetryBudget {
    max_retries: 4,
    base: Duration::from_secs(4),
    cap: Duration::from_secs(128),
    pause: Duration::from_millis(500),
};

/// One item's retries within one attempt at it, shared by every layer working on it (clones share
/// the count): uv's `RetryState`, handed down instead of kept per layer. It starts from what
/// earlier attempts at the item spent.
#[derive(Clone, Debug)]
pub struct Retries {
    policy: RetryBudget,
    /// Retries earlier attempts at the item spent (the queue's).
    start: u32,
    /// Retries spent in all, `start` included.
    spent: Arc<AtomicU32>,
}

impl Retries {
    /// The count of an item whose earlier attempts spent `already` of `policy`.
    pub fn new(policy: RetryBudget, already: u32) -> Self {
        Self {
            policy,
            start: already,
            spent: Arc::new(AtomicU32::new(already)),
        }
    }

    /// The policy counted against.
    pub fn policy(&self) -> RetryBudget {
        self.policy
    }

    /// Spends one retry if any is left; returns how many were spent before it (the backoff's
    /// exponent), `None` when the budget is spent.
    pub fn spend(&self) -> Option<u32> {
        let max = self.policy.max_retries;
        self.spent
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < max).then_some(n + 1)
            })
            .ok()
    }

    /// Spends one retry after `err` when its class says to retry and the budget lasts: `Some` with
    /// the service's wait, if it gave one, and the retry's number (see [`Self::spend`]).
    pub fn retry_after(&self, err: &(impl Classify + ?Sized)) -> Option<(Option<Duration>, u32)> {
        let Next::Retry(after) = err.class().next else {
            return None;
        };
        self.spend().map(|n| (after, n))
    }

    /// Retries spent in this attempt (what a failure going up reports as [`Classify::retries`]).
    pub fn here(&self) -> u32 {
        self.spent
            .load(Ordering::Acquire)
            .saturating_sub(self.start)
    }

    /// Retries spent in all, earlier attempts' included.
    pub fn spent(&self) -> u32 {
        self.spent.load(Ordering::Acquire)
    }
}

impl RetryBudget {
    /// Whether to try again after `err` when this layer already retried `retried` times, and after
    /// how long: `None` when the class says retrying cannot help or the budget is spent.
    pub fn should_retry(&self, err: &(impl Classify + ?Sized), retried: u32) -> Option<Duration> {
        let class = err.class();
        let Next::Retry(after) = class.next else {
            return None;
        };
        let total = retried.saturating_add(err.retries());
        if total >= self.max_retries {
            return None;
        }
        Some(after.unwrap_or_else(|| self.backoff(total)))
    }

    /// The backoff before retry number `n + 1`.
    pub fn backoff(&self, n: u32) -> Duration {
        self.base
            .saturating_mul(2u32.saturating_pow(n.min(16)))
            .min(self.cap)
    }
}

/// The pause before retry `n + 1` of a request sent again in process (`n` retries spent before it):
/// `base` doubling, capped at a minute, spread by half either way so that requests that failed
/// together do not come back together. The one formula of every client (Graph, `$batch`, the
/// sign-in refresh, Notion).
pub fn pause(base: Duration, n: u32, jitter: &Jitter) -> Duration {
    let grown = base.saturating_mul(2u32.pow(n.min(6)));
    jitter.spread(grown.min(MAX_PAUSE), 0.5)
}

#[cfg(test)]
mod tests {
    use super::*;

    struct E(Class, u32);
    impl Classify for E {
        fn class(&self) -> Class {
            self.0
        }
        fn retries(&self) -> u32 {
            self.1
        }
    }

    const BUDGET: RetryBudget = RetryBudget {
        max_retries: 4,
        base: Duration::from_secs(2),
        cap: Duration::from_secs(60),
        pause: Duration::from_millis(100),
    };

    #[test]
    fn codes_are_scope_then_next() {
        assert_eq!(Class::item_fails().code(), "item/never");
        assert_eq!(Class::retry(None).code(), "attempt/retry");
        assert_eq!(Class::stop_run().code(), "run/stop");
        assert_eq!(
            Class::new(Scope::Resource, Next::Degrade).code(),
            "resource/degrade"
        );
        assert_eq!(
            Class::stop_run().meaning,
            Some(Meaning::WorkRemaining),
            "a resumable stop of the run means work remains"
        );
    }

    #[test]
    fn retries_of_lower_layers_are_spent_from_the_one_budget() {
        // Nothing retried below: this layer may use the whole budget.
        let fresh = E(Class::retry(None), 0);
        assert_eq!(BUDGET.should_retry(&fresh, 0), Some(Duration::from_secs(2)));
        assert_eq!(
            BUDGET.should_retry(&fresh, 3),
            Some(Duration::from_secs(16))
        );
        assert_eq!(BUDGET.should_retry(&fresh, 4), None);
        // The client already retried three times: one retry left on top, then none.
        let retried = E(Class::retry(None), 3);
        assert_eq!(
            BUDGET.should_retry(&retried, 0),
            Some(Duration::from_secs(16))
        );
        assert_eq!(BUDGET.should_retry(&retried, 1), None);
        // A client that spent the whole budget leaves nothing to the queue.
        assert_eq!(BUDGET.should_retry(&E(Class::retry(None), 7), 0), None);
    }

    #[test]
    fn every_layer_spends_from_one_count_that_starts_from_earlier_attempts() {
        let item = Retries::new(BUDGET, 1);
        let below = item.clone();
        // The queue's earlier attempt spent one; a retryable failure below spends the next.
        assert_eq!(
            below.retry_after(&E(Class::retry(None), 0)),
            Some((None, 1))
        );
        let wait = Some(Duration::from_secs(3));
        assert_eq!(item.retry_after(&E(Class::retry(wait), 0)), Some((wait, 2)));
        // What says not to retry spends nothing.
        assert_eq!(item.retry_after(&E(Class::item_fails(), 0)), None);
        assert_eq!((item.here(), item.spent()), (2, 3));
        assert_eq!(below.spend(), Some(3));
        assert_eq!(
            item.spend(),
            None,
            "four retries in all, by whichever layer"
        );
        assert_eq!(below.retry_after(&E(Class::retry(None), 0)), None);
        assert_eq!((item.here(), item.spent()), (3, 4));
        // The failure going up says how many were spent here: the queue adds them to its own.
        let up = E(Class::retry(None), item.here());
        assert_eq!(BUDGET.should_retry(&up, 1), None);
    }

    #[test]
    fn the_other_library_errors_have_their_classes() {
        let path = || std::path::PathBuf::from("/x/s.db");
        let codes = |c: Class| (c.code(), c.meaning);
        let newer = crate::store::StoreError::NewerSchema {
            path: path(),
            found: 99,
            known: 9,
        };
        assert_eq!(
            codes(newer.class()),
            ("run/never".into(), Some(Meaning::Usage))
        );
        let io = crate::store::StoreError::Io {
            path: path(),
            action: "creating its folder",
            source: std::io::Error::other("denied"),
        };
        assert_eq!(
            codes(io.class()),
            ("run/never".into(), Some(Meaning::Usage))
        );
        let sql = crate::store::StoreError::Sqlite {
            path: path(),
            action: "x".into(),
            source: rusqlite::Error::InvalidQuery,
        };
        assert_eq!(codes(sql.class()), ("run/never".into(), None));
        let limits = crate::limiter::LimiterError::InvalidLimits("0/1s".into());
        assert_eq!(
            codes(limits.class()),
            ("run/never".into(), Some(Meaning::Usage))
        );
        let store = crate::limiter::LimiterError::Store(sql);
        assert_eq!(codes(store.class()), ("run/never".into(), None));
        let settings = crate::settings::SettingsError::Missing("no db".into());
        assert_eq!(
            codes(settings.class()),
            ("run/never".into(), Some(Meaning::Usage))
        );
        // Ink and equations cost only their element.
        let ink = crate::ink::InkError::Xml("unclosed".into());
        assert_eq!(codes(ink.class()), ("resource/degrade".into(), None));
        let math = crate::mathml::MathError::Empty;
        assert_eq!(codes(math.class()), ("resource/degrade".into(), None));
        let down = crate::net::Unreachable {
            service: crate::net::Service::SignIn,
            since: 0,
        };
        assert_eq!(
            codes(down.class()),
            ("run/stop".into(), Some(Meaning::WorkRemaining))
        );
        // A verification that meets Notion failing ends, whatever the failure; a refusal keeps its
        // meaning for the caller.
        let v = crate::verify::VerifyError::Notion {
            account: "a".into(),
            source: crate::notion::client::NotionError::Ambiguous {
                what: "listing".into(),
                detail: "504".into(),
                saved: None,
            },
        };
        assert_eq!(codes(v.class()), ("run/never".into(), None));
    }

    #[test]
    fn only_retry_classes_are_retried_and_the_service_wait_wins() {
        let wait = Duration::from_millis(1500);
        assert_eq!(
            BUDGET.should_retry(&E(Class::retry(Some(wait)), 0), 2),
            Some(wait)
        );
        for class in [
            Class::item_fails(),
            Class::stop_run(),
            Class::new(Scope::Resource, Next::Degrade),
        ] {
            assert_eq!(BUDGET.should_retry(&E(class, 0), 0), None, "{class}");
        }
        assert_eq!(BUDGET.backoff(30), Duration::from_secs(60), "capped");
    }

    #[test]
    fn the_pause_doubles_from_its_base_within_its_spread_and_stops_at_a_minute() {
        let j = Jitter::seeded(7);
        let base = Duration::from_millis(500);
        for (n, middle) in [(0, 500), (1, 1000), (3, 4000), (6, 32_000)] {
            let p = pause(base, n, &j).as_millis();
            assert!(
                (middle / 2..=middle * 3 / 2).contains(&p),
                "retry {n}: {p} ms"
            );
        }
        for n in [7, 20, u32::MAX] {
            assert!(pause(base, n, &j) <= MAX_PAUSE.mul_f64(1.5), "retry {n}");
        }
        assert_eq!(pause(Duration::ZERO, 3, &j), Duration::ZERO);
    }
}
