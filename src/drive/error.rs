//! What can go wrong reading a notebook's files from its drive, and what each failure means: read
//! this section through the OneNote API instead ([`DriveError::falls_back`]), stop the run
//! resumably, or sign in again.

use std::path::PathBuf;

use crate::auth::AuthError;
use crate::clock::UnixMillis;
use crate::failure::{Class, Classify, Meaning, Next, Scope};
use crate::net::Unreachable;
use crate::store::StoreError;

/// Errors of the drive client. Each names the account and what was asked for.
#[derive(Debug, thiserror::Error)]
pub enum DriveError {
    /// 404 or 410: the item is not (or no longer) there.
    #[error("{account}: {what}: the drive answered {status}: not found")]
    NotFound {
        /// Account name.
        account: String,
        /// What was asked for (the notebook's web URL, a folder, a section file).
        what: String,
        /// HTTP status.
        status: u16,
    },
    /// 403, or a 401 after the token was refreshed: the account may not read it (the sign-in may
    /// lack `Files.Read`, or the item is not shared with the user).
    #[error("{account}: {what}: the drive refused access ({status}): {message}")]
    Forbidden {
        /// Account name.
        account: String,
        /// What was asked for.
        what: String,
        /// HTTP status.
        status: u16,
        /// The service's error code and message.
        message: String,
    },
    /// Any other refusal (400, 405, 409, ...): the same request gets the same answer.
    #[error("{account}: {what}: the drive answered {status}: {message}")]
    Refused {
        /// Account name.
        account: String,
        /// What was asked for.
        what: String,
        /// HTTP status.
        status: u16,
        /// The service's error code and message.
        message: String,
    },
    /// The web URL led to a drive item that is not a OneNote notebook (no `package` of type
    /// `oneNote`).
    #[error("{account}: {what}: not a OneNote notebook in a drive: {problem}")]
    NotANotebook {
        /// Account name.
        account: String,
        /// The notebook's web URL.
        what: String,
        /// What was found instead.
        problem: String,
    },
    /// The section file is bigger than the service serves (it answers 503 to the download of a
    /// OneNote file over 2 GB): refused before any byte is asked for.
    #[error("{account}: {what}: {size} bytes is over the {max} bytes the drive serves")]
    TooLarge {
        /// Account name.
        account: String,
        /// The section file.
        what: String,
        /// Its announced size.
        size: u64,
        /// The limit.
        max: u64,
    },
    /// Neither way found the notebook's folder: its client URL's path is not in the drive the
    /// caller named (or names no notebook there), and the shares API was refused, found nothing or
    /// could not be asked (the sign-in holds no write scope).
    #[error("{account}: {what}: its folder was not found in a drive: {why}")]
    NotLocated {
        /// Account name.
        account: String,
        /// The notebook.
        what: String,
        /// What each way met.
        why: String,
    },
    /// The notebook's folders go deeper or hold more than a notebook can (hostile or broken
    /// input): the walk stops at its bound instead of following them.
    #[error("{account}: {what}: the notebook's folders are over the bound of {bound}")]
    OverBound {
        /// Account name.
        account: String,
        /// The notebook.
        what: String,
        /// Which bound, with its value.
        bound: String,
    },
    /// An answer the client could not use (not JSON, no `Location`, a body whose size is not the
    /// one announced again and again).
    #[error("{account}: {what}: unexpected answer from the drive: {problem}")]
    BadAnswer {
        /// Account name.
        account: String,
        /// What was asked for.
        what: String,
        /// What was wrong.
        problem: String,
    },
    /// A next link pointed away from Microsoft Graph: the token is not sent there.
    #[error(
        "{account}: {what}: refused to send the access token to {url:?}: not the configured \
         Graph host nor one of Microsoft's Graph hosts"
    )]
    ForeignHost {
        /// Account name.
        account: String,
        /// What was asked for.
        what: String,
        /// The URL, without its query.
        url: String,
    },
    /// Transient failures (5xx, timeouts, cut transfers) went on past the item's retries.
    #[error("{account}: {what}: gave up after {attempts} attempts: {last}")]
    TransferFailed {
        /// Account name.
        account: String,
        /// What was asked for.
        what: String,
        /// Attempts made.
        attempts: u32,
        /// Retries spent from the item's count in this attempt at it.
        retries: u32,
        /// The last failure.
        last: String,
    },
    /// The drive asked the account to wait past the run's deadline.
    #[error("{account}: the drive asked to wait until {until} (unix ms), past the run's deadline")]
    Throttled {
        /// Account name.
        account: String,
        /// When the account's drive requests may go again (unix ms).
        until: UnixMillis,
    },
    /// The file at the destination could not be written.
    #[error("{path}: {action}: {source}")]
    File {
        /// The file.
        path: PathBuf,
        /// What was being done.
        action: &'static str,
        /// The OS error.
        source: std::io::Error,
    },
    /// Tokens could not be had (sign in again, or the sign-in service is down).
    #[error(transparent)]
    Auth(#[from] AuthError),
    /// The state database failed (the shared breaker lives there).
    #[error(transparent)]
    Store(#[from] StoreError),
    /// Graph or the drive could not be reached until the deadline: the work is parked.
    #[error(transparent)]
    Unreachable(#[from] Unreachable),
}

impl DriveError {
    /// Whether the section should be read through the OneNote API instead: this file (or this
    /// notebook's folder) cannot be read as a file, and asking the same again will not change it.
    pub fn falls_back(&self) -> bool {
        self.class().next == Next::Degrade
    }
}

impl Classify for DriveError {
    fn class(&self) -> Class {
        // Read through the OneNote API instead: the item goes on, degraded to the slower road.
        let fall_back = Class::new(Scope::Item, Next::Degrade);
        match self {
            DriveError::NotFound { .. }
            | DriveError::Forbidden { .. }
            | DriveError::Refused { .. }
            | DriveError::NotANotebook { .. }
            | DriveError::NotLocated { .. }
            | DriveError::TooLarge { .. }
            | DriveError::OverBound { .. }
            | DriveError::BadAnswer { .. }
            | DriveError::ForeignHost { .. }
            | DriveError::TransferFailed { .. } => fall_back,
            DriveError::Throttled { .. } => Class::stop_run(),
            // The state folder is the user's to fix (space, permissions); the API would not help.
            DriveError::File { .. } => Class::new(Scope::Run, Next::Never).means(Meaning::Usage),
            DriveError::Auth(e) => e.class(),
            DriveError::Store(e) => e.class(),
            DriveError::Unreachable(e) => e.class(),
        }
    }

    fn retries(&self) -> u32 {
        match self {
            DriveError::TransferFailed { retries, .. } => *retries,
            DriveError::NotFound { .. }
            | DriveError::Forbidden { .. }
            | DriveError::Refused { .. }
            | DriveError::NotANotebook { .. }
            | DriveError::NotLocated { .. }
            | DriveError::TooLarge { .. }
            | DriveError::OverBound { .. }
            | DriveError::BadAnswer { .. }
            | DriveError::ForeignHost { .. }
            | DriveError::Throttled { .. }
            | DriveError::File { .. }
            | DriveError::Auth(_)
            | DriveError::Store(_)
            | DriveError::Unreachable(_) => 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::Service;

    #[test]
    fn the_caller_tells_fall_back_from_stop_from_sign_in() {
        let a = || "alice".to_owned();
        let w = || "section Math".to_owned();
        let fall_back = [
            DriveError::NotFound {
                account: a(),
                what: w(),
                status: 404,
            },
            DriveError::Forbidden {
                account: a(),
                what: w(),
                status: 403,
                message: "accessDenied".into(),
            },
            DriveError::TooLarge {
                account: a(),
                what: w(),
                size: 3 << 30,
                max: 2 << 30,
            },
            DriveError::TransferFailed {
                account: a(),
                what: w(),
                attempts: 5,
                retries: 4,
                last: "HTTP 500".into(),
            },
            DriveError::NotANotebook {
                account: a(),
                what: w(),
                problem: "a file".into(),
            },
            DriveError::NotLocated {
                account: a(),
                what: w(),
                why: "by its path: not found".into(),
            },
        ];
        for e in &fall_back {
            assert!(e.falls_back(), "{e}");
            assert_eq!(e.class().code(), "item/degrade", "{e}");
        }
        assert_eq!(fall_back[3].retries(), 4, "spent retries go up with it");
        let stops = [
            DriveError::Throttled {
                account: a(),
                until: 5,
            },
            DriveError::Unreachable(Unreachable {
                service: Service::Graph,
                since: 0,
            }),
        ];
        for e in &stops {
            assert!(!e.falls_back(), "{e}");
            assert_eq!(e.class(), Class::stop_run(), "{e}");
        }
        let sign_in = DriveError::Auth(AuthError::RefreshRejected {
            account: a(),
            reason: "invalid_grant".into(),
        });
        assert!(!sign_in.falls_back());
        assert_eq!(sign_in.meaning(), Some(Meaning::SignIn));
    }
}
