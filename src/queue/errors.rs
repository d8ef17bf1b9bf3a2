//! What ends a run ([`RunError`]) and what becomes of one job that did not complete
//! ([`JobError`]): an error's class alone decides.

use crate::clock::UnixMillis;
use crate::drive::DriveError;
use crate::failure::{Class, Classify, Meaning, Next, Scope};
use crate::graph::GraphError;
use crate::notion::client::NotionError;
use crate::notion::writer::WriteError;
use crate::store::StoreError;

/// Errors that end the run (as opposed to failing one item).
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The state database failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// Sign-in is needed, or the limiter failed.
    #[error(transparent)]
    Graph(GraphError),
    /// A worker died (a bug): the run stops; what it held is taken up by the next run.
    #[error("a migration worker stopped unexpectedly: {0}")]
    Worker(String),
    /// Notion refuses every further write (a bad token, a missing capability, the workspace block
    /// limit): the run stops with nothing marked failed.
    #[error(transparent)]
    Notion(NotionError),
    /// Writing a page met a failure that ends the run (Notion refusing every further write, a file
    /// download that needs a sign-in).
    #[error(transparent)]
    Write(WriteError),
    /// A created Notion page could not be recorded: going on could create it twice.
    #[error("could not record a created Notion page: {0}")]
    Unrecorded(String),
    /// Reading a section file met a failure that ends the run (a sign-in, a throttle longer than
    /// the time left, the state folder).
    #[error(transparent)]
    Drive(DriveError),
}

impl Classify for RunError {
    fn class(&self) -> Class {
        match self {
            RunError::Store(e) => e.class(),
            RunError::Graph(e) => e.class(),
            RunError::Notion(e) => e.class(),
            RunError::Write(e) => e.class(),
            RunError::Drive(e) => e.class(),
            // Bugs: nothing the user can do but report them.
            RunError::Worker(_) | RunError::Unrecorded(_) => Class::new(Scope::Run, Next::Never),
        }
    }
}

/// Why a job did not complete.
pub(super) enum JobError {
    /// Fails this item for good (the run goes on).
    Permanent(Failure),
    /// Try again later, while the item's retry budget lasts ([`super::JOB_RETRIES`]).
    Transient(Failure),
    /// The deadline or a stop: park the job.
    Stop,
    /// Not its turn yet (an earlier sibling is still queued): park it until about when that one may
    /// run, attempt not counted.
    NotYet(UnixMillis),
    /// The whole run must end.
    Fatal(RunError),
}

/// An item's failure: the message stored with it, its class (stored beside it) and the retries lower
/// layers already spent on it.
pub(super) struct Failure {
    message: String,
    pub(super) class: Class,
    pub(super) retries: u32,
}

impl Failure {
    /// The failure of a classified error.
    fn of(e: &(impl Classify + std::fmt::Display)) -> Self {
        Self {
            message: e.to_string(),
            class: e.class(),
            retries: e.retries(),
        }
    }
}

impl Classify for Failure {
    fn class(&self) -> Class {
        self.class
    }

    fn retries(&self) -> u32 {
        self.retries
    }
}

impl std::ops::Deref for Failure {
    type Target = str;

    fn deref(&self) -> &str {
        &self.message
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl JobError {
    /// This item fails for good for a reason of its own.
    pub(super) fn permanent(message: String) -> Self {
        JobError::Permanent(Failure {
            message,
            class: Class::item_fails(),
            retries: 0,
        })
    }

    /// This attempt failed; the item is tried again while its budget lasts.
    pub(super) fn transient(message: String) -> Self {
        JobError::Transient(Failure {
            message,
            class: Class::retry(None),
            retries: 0,
        })
    }

    /// What the queue does with a classified error: its class decides, and nothing else.
    pub(super) fn classified<E>(e: E, fatal: impl FnOnce(E) -> RunError) -> Self
    where
        E: Classify + std::fmt::Display,
    {
        let class = e.class();
        match (class.next, class.scope) {
            // Waits that would pass the deadline, the network's included: park, fail nothing.
            (Next::Stop, _) if class.meaning == Some(Meaning::WorkRemaining) => JobError::Stop,
            // A stop the user must act on first (a capability, the block limit): the job is
            // parked, nothing failed, and the run ends with the reason.
            (Next::Stop, _) => JobError::Fatal(fatal(e)),
            (Next::Retry(_), _) => JobError::Transient(Failure::of(&e)),
            // Sign-in required, a refusal of every write, a broken limiter or state: nothing more
            // can be done in this run.
            (Next::Never | Next::Degrade, Scope::Run | Scope::Account) => JobError::Fatal(fatal(e)),
            // This item (or an element no layer below could degrade) cannot be had: the rest can.
            (Next::Never | Next::Degrade, Scope::Item | Scope::Resource | Scope::Attempt) => {
                JobError::Permanent(Failure::of(&e))
            }
        }
    }
}

impl From<StoreError> for JobError {
    fn from(e: StoreError) -> Self {
        JobError::Fatal(RunError::Store(e))
    }
}

impl From<GraphError> for JobError {
    fn from(e: GraphError) -> Self {
        JobError::classified(e, RunError::Graph)
    }
}

impl From<WriteError> for JobError {
    fn from(e: WriteError) -> Self {
        JobError::classified(e, RunError::Write)
    }
}

impl From<NotionError> for JobError {
    fn from(e: NotionError) -> Self {
        JobError::classified(e, RunError::Notion)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::queue::JOB_RETRIES;
    use std::time::Duration;

    #[test]
    fn a_page_too_large_to_download_fails_alone_and_the_run_goes_on() {
        let e = GraphError::TooLarge {
            account: "a".into(),
            item: "page x".into(),
            size: 600_000_000,
            max: 512 * 1024 * 1024,
        };
        assert!(matches!(JobError::from(e), JobError::Permanent(_)));
    }

    fn notion_refused(kind: crate::notion::client::Refusal) -> NotionError {
        NotionError::Refused {
            what: "appending".into(),
            kind,
            needs: None,
            status: 403,
            code: "restricted_resource".into(),
            message: "m".into(),
        }
    }

    #[test]
    fn the_class_alone_decides_what_the_queue_does() {
        use crate::notion::client::Refusal;
        let gone = GraphError::Item {
            account: "a".into(),
            item: "page".into(),
            status: 404,
            code: crate::graph::ServiceCode::Other,
            message: "gone".into(),
        };
        match JobError::from(gone) {
            JobError::Permanent(f) => assert_eq!(f.class.code(), "item/never"),
            _ => panic!("a page Graph refuses fails alone"),
        }
        let down = crate::net::Unreachable {
            service: crate::net::Service::Graph,
            since: 0,
        };
        assert!(matches!(
            JobError::from(GraphError::from(down.clone())),
            JobError::Stop
        ));
        assert!(matches!(
            JobError::from(WriteError::Notion(NotionError::Unreachable(down))),
            JobError::Stop
        ));
        let signed_out = GraphError::Auth(crate::auth::AuthError::NoAccount {
            account: "a".into(),
        });
        assert!(matches!(
            JobError::from(signed_out),
            JobError::Fatal(RunError::Graph(_))
        ));
        // Every further write would meet it: the run stops, nothing failed.
        let limit = WriteError::Notion(notion_refused(Refusal::BlockLimit));
        match JobError::from(limit) {
            JobError::Fatal(e) => assert_eq!(e.meaning(), Some(crate::failure::Meaning::Usage)),
            _ => panic!("the block limit stops the run"),
        }
        // A page not shared (deleted meanwhile) is that page's.
        let unshared = WriteError::Notion(notion_refused(Refusal::NotShared));
        assert!(matches!(JobError::from(unshared), JobError::Permanent(_)));
        // A refused value no layer below could degrade fails the page.
        let refused_value = NotionError::Rejected {
            what: "appending".into(),
            status: 400,
            code: "validation_error".into(),
            message: "body failed validation".into(),
        };
        match JobError::from(WriteError::Notion(refused_value)) {
            JobError::Permanent(f) => assert_eq!(f.class.code(), "resource/degrade"),
            _ => panic!("fails the page"),
        }
        let edited = WriteError::Mismatch("edited meanwhile".into());
        assert!(matches!(JobError::from(edited), JobError::Permanent(_)));
    }

    #[test]
    fn a_failure_the_client_retried_is_not_retried_again_by_the_queue() {
        // An unclear write the writer could not settle: nothing below retried it, so the queue
        // gives it its whole budget.
        let unclear = WriteError::Notion(NotionError::Ambiguous {
            what: "appending".into(),
            detail: "504".into(),
            saved: None,
        });
        let JobError::Transient(f) = JobError::from(unclear) else {
            panic!("retried")
        };
        assert_eq!(
            JOB_RETRIES.should_retry(&f, 0),
            Some(Duration::from_secs(4))
        );
        assert_eq!(
            JOB_RETRIES.should_retry(&f, 3),
            Some(Duration::from_secs(32))
        );
        assert_eq!(
            JOB_RETRIES.should_retry(&f, 4),
            None,
            "five attempts in all"
        );
        // The Graph client gave up after 6 attempts: its 5 retries spent the item's budget.
        let gave_up = GraphError::GaveUp {
            account: "a".into(),
            item: "page".into(),
            attempts: 6,
            retries: 5,
            last: "HTTP 503".into(),
            timed_out: false,
        };
        let JobError::Transient(f) = JobError::from(gave_up) else {
            panic!("a retry class")
        };
        assert_eq!(f.retries, 5);
        assert_eq!(JOB_RETRIES.should_retry(&f, 0), None);
        // A file download the client retried twice leaves the queue two more attempts.
        let fetch = WriteError::Fetch(GraphError::GaveUp {
            account: "a".into(),
            item: "file".into(),
            attempts: 3,
            retries: 2,
            last: "HTTP 503".into(),
            timed_out: false,
        });
        let JobError::Transient(f) = JobError::from(fetch) else {
            panic!("a retry class")
        };
        assert!(JOB_RETRIES.should_retry(&f, 1).is_some());
        assert_eq!(JOB_RETRIES.should_retry(&f, 2), None);
        // Notion's client gave up after 8 attempts: nothing left on top.
        let notion = WriteError::Notion(NotionError::GaveUp {
            what: "listing".into(),
            attempts: 8,
            last: "503".into(),
        });
        let JobError::Transient(f) = JobError::from(notion) else {
            panic!("a retry class")
        };
        assert_eq!(JOB_RETRIES.should_retry(&f, 0), None);
    }
}
