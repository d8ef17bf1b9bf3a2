//! The exit-code contract (`shared/spec/cli.md`), in one place.
//!
//! Commands return [`CliResult`]: its error, [`Failure`], is made only from an error that says what
//! it means ([`Classify`], every library error) or from a command's own [`CliError`] (which names
//! its [`Exit`]), so an error type without a meaning cannot reach the command edge: it does not
//! compile. No command and no library module picks its own numbers, and nothing is read out of an
//! error chain by type.

use std::fmt;
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

/// What a command returns.
pub type CliResult<T> = Result<T, Failure>;

/// An error that reached the command edge, with the exit code it means, fixed when it entered.
pub struct Failure {
    exit: Exit,
    error: anyhow::Error,
    /// What to do next, when the command knows better than the exit code's usual hint.
    hint: Option<String>,
}

impl Failure {
    /// The exit code this failure ends the process with.
    pub fn exit(&self) -> Exit {
        self.exit
    }

    /// The error, with its causes, for the message.
    pub fn error(&self) -> &anyhow::Error {
        &self.error
    }

    /// What to do next, when the command said it ([`Failure::with_hint`]).
    pub fn hint(&self) -> Option<&str> {
        self.hint.as_deref()
    }

    /// The same failure with `hint` as what to do next.
    pub fn with_hint(self, hint: impl Into<String>) -> Self {
        Self {
            hint: Some(hint.into()),
            ..self
        }
    }

    /// A failure the command does not expect (exit 1): writing its output failed, a runtime could
    /// not be built. Named at the call, so that it is chosen, never fallen into.
    pub fn unexpected(error: impl Into<anyhow::Error>) -> Self {
        Self {
            exit: Exit::Unexpected,
            error: error.into(),
            hint: None,
        }
    }

    /// The same failure, saying what was being done (the exit code stays).
    pub fn context(self, doing: impl fmt::Display + Send + Sync + 'static) -> Self {
        Self {
            exit: self.exit,
            error: self.error.context(doing),
            hint: self.hint,
        }
    }
}

impl fmt::Debug for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?} (exit {})", self.error, self.exit.code())
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.error, f)
    }
}

/// A library error means what its class says; one without a meaning is unexpected (exit 1).
impl<E> From<E> for Failure
where
    E: Classify + std::error::Error + Send + Sync + 'static,
{
    fn from(e: E) -> Self {
        Self {
            exit: e.meaning().map_or(Exit::Unexpected, Exit::from),
            error: anyhow::Error::new(e),
            hint: None,
        }
    }
}

impl From<CliError> for Failure {
    fn from(e: CliError) -> Self {
        Self {
            exit: e.exit,
            error: anyhow::Error::new(e),
            hint: None,
        }
    }
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
    fn a_failure_means_what_its_error_says() {
        let e = Failure::from(CliError::sign_in("no account")).context("while scanning");
        assert_eq!(e.exit(), Exit::SignIn);
        assert!(format!("{:#}", e.error()).contains("no account"));
        // A sign-in error wrapped transparently by the Graph client still means "sign in".
        let auth = crate::auth::AuthError::NoAccount {
            account: "bob".into(),
        };
        let e = Failure::from(crate::graph::GraphError::Auth(auth)).context("planning");
        assert_eq!(e.exit(), Exit::SignIn);
        // Notion's refusals, straight or inside the verification, are the user's to fix.
        let refused = || crate::notion::client::NotionError::Refused {
            what: "reading the integration".into(),
            kind: crate::notion::client::Refusal::BadToken,
            needs: None,
            status: 401,
            code: "unauthorized".into(),
            message: "API token is invalid.".into(),
        };
        assert_eq!(Failure::from(refused()).exit(), Exit::Usage);
        let e = crate::verify::VerifyError::Notion {
            account: "a".into(),
            source: refused(),
        };
        assert_eq!(Failure::from(e).exit(), Exit::Usage);
        // A service that stayed down until the deadline: work remains.
        let down = crate::net::Unreachable {
            service: crate::net::Service::Notion,
            since: 0,
        };
        assert_eq!(
            Failure::from(down).context("writing").exit(),
            Exit::WorkRemaining
        );
        let e = crate::notion::writer::WriteError::Mismatch("edited".into());
        assert_eq!(Failure::from(e).exit(), Exit::Unexpected);
    }

    /// Every `.rs` file under `dir`, read.
    fn sources(dir: &std::path::Path) -> Vec<(std::path::PathBuf, String)> {
        let mut out = Vec::new();
        let mut dirs = vec![dir.to_path_buf()];
        while let Some(d) = dirs.pop() {
            for entry in std::fs::read_dir(&d).expect("src is readable") {
                let path = entry.expect("a directory entry").path();
                if path.is_dir() {
                    dirs.push(path);
                } else if path.extension().is_some_and(|e| e == "rs") {
                    let text = std::fs::read_to_string(&path).expect("a source file");
                    out.push((path, text));
                }
            }
        }
        out
    }

    /// The compiler lets into [`Failure`] only errors that implement [`Classify`] (and
    /// [`CliError`], which names its exit): this checks that every error type the library declares
    /// is one of them, so a new one says what it means before any command can return it.
    #[test]
    fn every_error_type_the_library_declares_says_what_it_means() {
        let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let files = sources(&src);
        let all: String = files.iter().map(|(_, t)| t.as_str()).collect();
        let mut declared = Vec::new();
        for (path, text) in &files {
            let mut lines = text.lines();
            while let Some(line) = lines.next() {
                if !(line.trim_start().starts_with("#[derive") && line.contains("thiserror::Error"))
                {
                    continue;
                }
                let decl = lines
                    .by_ref()
                    .find(|l| !l.trim_start().starts_with("#["))
                    .unwrap_or_default();
                let name = decl
                    .split_whitespace()
                    .skip_while(|w| *w != "enum" && *w != "struct")
                    .nth(1)
                    .map(|n| n.trim_end_matches(|c: char| !c.is_alphanumeric()))
                    .unwrap_or_else(|| panic!("{}: {decl:?} declares no type", path.display()));
                declared.push(name.to_owned());
            }
        }
        assert!(declared.len() >= 15, "found {declared:?}");
        let unclassified: Vec<&String> = declared
            .iter()
            .filter(|n| n.as_str() != "CliError")
            .filter(|n| {
                !(all.contains(&format!("Classify for {n} "))
                    || all.contains(&format!("Classify for {n}\n")))
            })
            .collect();
        assert!(
            unclassified.is_empty(),
            "error types without `impl Classify`: {unclassified:?}"
        );
    }
}
