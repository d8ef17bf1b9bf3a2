//! Crash points, for tests only: the places where a migration's state has changed on one side (in
//! Notion, in a file on disk, in the state database) and not yet on the other
//! (docs/ARCHITECTURE.md, "Crash points", lists them and what a resume does at each).
//!
//! Each is one [`point`] call. A binary built with the `crash-points` feature (the test suite's:
//! the package's own dev-dependency turns it on, so `cargo build`, `cargo install` and a release
//! build never have it) counts the points it passes and, told to by [`AT`], stops hard at the N-th
//! one: `SIGKILL` to itself, so no destructor, flush or transaction end runs, as `kill -9`.
//! [`LOG`] names a file each point passed is appended to (its number and name), so a test learns
//! how many points a run has. A binary built without the feature refuses either variable (the
//! command exits 2 naming it) rather than ignore a test's instruction.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

use crate::failure::{Class, Classify, Meaning, Next, Scope};

// The two variables are not settings: no user sets them (a release build refuses them), so they
// stay out of the settings table and the README's list of variables, which
// `settings::tests::every_variable_the_code_names_is_declared` keeps from literals of whole names.

/// The number of the crash point to stop at (1 is the first one a run passes).
pub const AT: &str = concat!("NOTEBRIDGE_", "CRASH_AT");
/// A file each crash point passed is appended to, one line each: its number and name.
pub const LOG: &str = concat!("NOTEBRIDGE_", "CRASH_LOG");

/// Whether this build has crash points.
pub const BUILT: bool = cfg!(feature = "crash-points");

/// A crash switch that cannot be honoured.
#[derive(Debug, thiserror::Error)]
pub enum CrashError {
    /// A crash variable was set for a binary built without crash points.
    #[error(
        "{var} is set, but this notebridge was built without crash points (a test-only \
         build feature): unset {var}"
    )]
    NotBuilt {
        /// The variable.
        var: &'static str,
    },
    /// `NOTEBRIDGE_CRASH_AT` is not a point's number.
    #[error("{AT}={value:?} is not the number of a crash point (1 or more)")]
    BadNumber {
        /// What it held.
        value: String,
    },
    /// The log file cannot be opened for appending.
    #[error("{LOG}: cannot append to {path}: {source}")]
    Log {
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
}

impl Classify for CrashError {
    fn class(&self) -> Class {
        Class {
            scope: Scope::Run,
            next: Next::Never,
            meaning: Some(Meaning::Usage),
        }
    }
}

/// What this process was told to do at its crash points.
#[derive(Debug)]
struct Armed {
    /// Points passed so far.
    passed: AtomicU64,
    /// The point to stop at.
    at: Option<u64>,
    /// Where each point passed is appended.
    log: Option<std::fs::File>,
}

static ARMED: OnceLock<Armed> = OnceLock::new();

/// What the two variables ask for, judged for a build that has crash points (`built`) or not.
fn decide(
    built: bool,
    at: Option<String>,
    log: Option<String>,
) -> Result<(Option<u64>, Option<String>), CrashError> {
    if !built {
        if at.is_some() {
            return Err(CrashError::NotBuilt { var: AT });
        }
        if log.is_some() {
            return Err(CrashError::NotBuilt { var: LOG });
        }
        return Ok((None, None));
    }
    let at = match at {
        None => None,
        Some(v) => match v.trim().parse::<u64>() {
            Ok(n) if n >= 1 => Some(n),
            _ => return Err(CrashError::BadNumber { value: v }),
        },
    };
    Ok((at, log))
}

/// Reads the crash variables once, at the start of a command: an error when they cannot be
/// honoured (see the module's documentation). Without this call (a library test), points are inert.
pub fn arm() -> Result<(), CrashError> {
    let var = |k| std::env::var_os(k).map(|v| v.to_string_lossy().into_owned());
    let (at, log) = decide(BUILT, var(AT), var(LOG))?;
    if !BUILT {
        return Ok(());
    }
    let log = match log {
        None => None,
        Some(path) => Some(
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&path)
                .map_err(|source| CrashError::Log { path, source })?,
        ),
    };
    let _ = ARMED.set(Armed {
        passed: AtomicU64::new(0),
        at,
        log,
    });
    Ok(())
}

/// A crash point named `name` (`area.what_just_happened`): counted, logged, and the process
/// stopped hard here when it is the one asked for. Nothing without the `crash-points` feature.
#[inline]
pub fn point(name: &'static str) {
    if BUILT {
        passed(name);
    }
}

#[inline(never)]
fn passed(name: &'static str) {
    let Some(armed) = ARMED.get() else { return };
    let n = armed.passed.fetch_add(1, Ordering::SeqCst) + 1;
    if let Some(mut log) = armed.log.as_ref() {
        use std::io::Write;
        // One write per line: lines of points passed on several threads do not interleave.
        let _ = log.write_all(format!("{n} {name}\n").as_bytes());
    }
    if armed.at == Some(n) {
        // As `kill -9`: nothing of this process runs after it.
        crate::platform::kill_self();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_build_without_crash_points_refuses_their_variables_by_name() {
        let e = decide(false, Some("3".into()), None).unwrap_err();
        assert!(e.to_string().contains(AT), "{e}");
        assert_eq!(e.class().meaning, Some(Meaning::Usage));
        let e = decide(false, None, Some("/tmp/x".into())).unwrap_err();
        assert!(e.to_string().contains(LOG), "{e}");
        assert!(decide(false, None, None).unwrap() == (None, None));
    }

    #[test]
    fn a_build_with_crash_points_takes_a_number_from_one_up() {
        assert_eq!(
            decide(true, Some("7".into()), None).unwrap(),
            (Some(7), None)
        );
        for bad in ["0", "-1", "x", ""] {
            assert!(
                matches!(
                    decide(true, Some(bad.into()), None),
                    Err(CrashError::BadNumber { .. })
                ),
                "{bad:?}"
            );
        }
        assert_eq!(
            decide(true, None, Some("l".into())).unwrap(),
            (None, Some("l".into()))
        );
    }
}
