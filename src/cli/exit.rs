//! The exit-code contract (`shared/spec/cli.md`), in one place.
//!
//! Commands return `anyhow::Result`; [`classify`] walks the error chain for the typed errors that carry
//! a [`Meaning`] and turns it into the contract's number, so no command and no library module picks
//! its own numbers.

use std::process::ExitCode;

use crate::failure::{Classify, Meaning};

/// One row of the contract's exit-code table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exit {
    /// 0: done.
    Done,
    /// 1: an unexpected error.
    Unexpected,
    /// 2: usage or configuration error (names the flag, variable or file).
    Usage,
    /// 3: sign-in required: no account, or its refresh token was rejected.
    SignIn,
    /// 4: finished, but some items failed permanently.
    SomeFailed,
    /// 5: another notebridge process is migrating with this database.
    Busy,
    /// 75: stopped with work remaining; run `migrate --resume` again.
    WorkRemaining,
}

impl Exit {
    /// The numeric process exit code.
    pub fn code(self) -> u8 {
        match self {
            Exit::Done => 0,
            Exit::Unexpected => 1,
            Exit::Usage => 2,
            Exit::SignIn => 3,
            Exit::SomeFailed => 4,
            Exit::Busy => 5,
            Exit::WorkRemaining => 75,
        }
    }
}

impl From<Exit> for ExitCode {
    fn from(e: Exit) -> Self {
        ExitCode::from(e.code())
    }
}

/// An error that already knows its exit code; commands raise it where a typed library error does not
/// exist (e.g. "no account named bob").
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct CliError {
    /// The exit code this error ends the process with.
    pub exit: Exit,
    /// The message shown on stderr.
    pub message: String,
}

impl CliError {
    /// A usage or configuration error (exit 2).
    pub fn usage(message: impl Into<String>) -> Self {
        Self {
            exit: Exit::Usage,
            message: message.into(),
        }
    }

    /// A sign-in-required error (exit 3).
    pub fn sign_in(message: impl Into<String>) -> Self {
        Self {
            exit: Exit::SignIn,
            message: message.into(),
        }
    }

    /// Any other code.
    pub fn new(exit: Exit, message: impl Into<String>) -> Self {
        Self {
            exit,
            message: message.into(),
        }
    }
}

impl From<Meaning> for Exit {
    fn from(m: Meaning) -> Self {
        match m {
            Meaning::Usage => Exit::Usage,
            Meaning::SignIn => Exit::SignIn,
            Meaning::Busy => Exit::Busy,
            Meaning::WorkRemaining => Exit::WorkRemaining,
        }
    }
}

/// The exit code for an error that reached the command edge.
pub fn classify(err: &anyhow::Error) -> Exit {
    for cause in err.chain() {
        if let Some(e) = cause.downcast_ref::<CliError>() {
            return e.exit;
        }
        if let Some(x) = typed_class(cause) {
            return x;
        }
    }
    Exit::Unexpected
}

/// The exit class of one error in a chain, for every library error type that has one. Errors that
/// wrap others transparently (no `source` of their own) answer for what they wrap.
fn typed_class(cause: &(dyn std::error::Error + 'static)) -> Option<Exit> {
    fn class<E: Classify + std::error::Error + 'static>(
        cause: &(dyn std::error::Error + 'static),
    ) -> Option<Meaning> {
        cause.downcast_ref::<E>().and_then(Classify::meaning)
    }
    class::<crate::settings::SettingsError>(cause)
        .or_else(|| class::<crate::store::StoreError>(cause))
        .or_else(|| class::<crate::graph::GraphError>(cause))
        .or_else(|| class::<crate::graph::sources::SourceError>(cause))
        .or_else(|| class::<crate::limiter::LimiterError>(cause))
        .or_else(|| class::<crate::queue::RunError>(cause))
        .or_else(|| class::<crate::engine::SelectError>(cause))
        .or_else(|| class::<crate::engine::MigrateError>(cause))
        .or_else(|| class::<crate::engine::plan::PlanError>(cause))
        .or_else(|| class::<crate::auth::AuthError>(cause))
        .or_else(|| class::<crate::notion::client::NotionError>(cause))
        .or_else(|| class::<crate::notion::writer::WriteError>(cause))
        .or_else(|| class::<crate::verify::VerifyError>(cause))
        .or_else(|| class::<crate::net::Unreachable>(cause))
        .or_else(|| class::<crate::imports::ImportError>(cause))
        .or_else(|| class::<crate::onefile::FilesError>(cause))
        .map(Exit::from)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_match_the_contract() {
        let table = [
            (Exit::Done, 0),
            (Exit::Unexpected, 1),
            (Exit::Usage, 2),
            (Exit::SignIn, 3),
            (Exit::SomeFailed, 4),
            (Exit::Busy, 5),
            (Exit::WorkRemaining, 75),
        ];
        for (e, c) in table {
            assert_eq!(e.code(), c);
        }
    }

    #[test]
    fn classify_finds_typed_errors_in_the_chain() {
        let e = anyhow::Error::new(CliError::sign_in("no account")).context("while scanning");
        assert_eq!(classify(&e), Exit::SignIn);
        let e = anyhow::anyhow!("boom");
        assert_eq!(classify(&e), Exit::Unexpected);
        // a sign-in error wrapped transparently by the Graph client still means "sign in"
        let auth = crate::auth::AuthError::NoAccount {
            account: "bob".into(),
        };
        let e = anyhow::Error::new(crate::graph::GraphError::Auth(auth)).context("planning");
        assert_eq!(classify(&e), Exit::SignIn);
        // Notion's refusals, straight or inside the verification, are the user's to fix.
        let refused = || crate::notion::client::NotionError::Refused {
            what: "reading the integration".into(),
            kind: crate::notion::client::Refusal::BadToken,
            status: 401,
            code: "unauthorized".into(),
            message: "API token is invalid.".into(),
        };
        assert_eq!(classify(&anyhow::Error::new(refused())), Exit::Usage);
        let e = crate::verify::VerifyError::Notion {
            account: "a".into(),
            source: refused(),
        };
        assert_eq!(classify(&anyhow::Error::new(e)), Exit::Usage);
        // A service that stayed down until the deadline: work remains.
        let down = crate::net::Unreachable {
            service: crate::net::Service::Notion,
            since: 0,
        };
        assert_eq!(
            classify(&anyhow::Error::new(down).context("writing")),
            Exit::WorkRemaining
        );
        let e = crate::notion::writer::WriteError::Mismatch("edited".into());
        assert_eq!(classify(&anyhow::Error::new(e)), Exit::Unexpected);
    }
}
