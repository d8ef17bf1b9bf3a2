//! The exit-code contract (`shared/spec/cli.md`), in one place.
//!
//! Commands return `anyhow::Result`; [`classify`] walks the error chain for the typed errors that carry
//! a meaning for scripts and cron wrappers, so no command picks its own numbers.

use std::process::ExitCode;

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

/// Implemented by library errors whose variants map to a contract exit code.
pub trait ExitClass {
    /// The exit code for this error, or `None` when it is unexpected (exit 1).
    fn exit_class(&self) -> Option<Exit>;
}

/// The exit code for an error that reached the command edge.
pub fn classify(err: &anyhow::Error) -> Exit {
    for cause in err.chain() {
        if let Some(e) = cause.downcast_ref::<CliError>() {
            return e.exit;
        }
        if let Some(e) = cause.downcast_ref::<crate::settings::SettingsError>() {
            if let Some(x) = e.exit_class() {
                return x;
            }
        }
        if let Some(e) = cause.downcast_ref::<crate::store::StoreError>() {
            if let Some(x) = e.exit_class() {
                return x;
            }
        }
        if let Some(x) = crate::auth::exit_class_of(cause) {
            return x;
        }
    }
    Exit::Unexpected
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
    }
}
