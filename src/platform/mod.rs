//! What differs between Windows and Unix (Linux, macOS), in one place: how a file is kept private,
//! whether a process is alive, how a process stops itself hard, free disk space, the console's stop
//! signals and colour, a path's bytes for the OneNote parser, how paths compare, the per-user
//! folders for state and config, how a stored secret is protected, where the system keeps its
//! proxy settings and which certificate verifier it has. Everything else in notebridge is the same
//! source on every platform.
//!
//! Each function has one meaning on every platform; `unix.rs` and `windows.rs` hold the calls.

use std::path::Path;

#[cfg(unix)]
mod unix;
#[cfg(unix)]
use unix as sys;
#[cfg(windows)]
mod windows;
#[cfg(windows)]
use windows as sys;

pub mod acl;
mod folders;
mod paths;
mod proxy_settings;
mod secret;
mod trust;

pub use folders::{config_dir, local_data_dir};
pub use paths::{path_key, same_path, CASE_INSENSITIVE_PATHS, NORMALIZATION_INSENSITIVE_PATHS};
pub use proxy_settings::read as system_proxy_settings;
pub use secret::{is_protected_form, seal, seals_secrets, unseal, SecretError, SEALED_PREFIX};
pub use trust::{tls_verifier, trust_store};

/// How the platform keeps a file private to its owner, said for `doctor` and the docs.
pub const PRIVACY_RULE: &str = sys::PRIVACY_RULE;

/// Opens `path` with `opts` so that a file it creates is readable by its owner alone before its
/// first byte is written (mode 0600 on Unix; an owner-only ACL on Windows).
pub fn open_private(opts: &std::fs::OpenOptions, path: &Path) -> std::io::Result<std::fs::File> {
    sys::open_private(opts, path)
}

/// [`open_private`] with tokio's `OpenOptions`.
pub async fn open_private_tokio(
    opts: &tokio::fs::OpenOptions,
    path: &Path,
) -> std::io::Result<tokio::fs::File> {
    sys::open_private_tokio(opts, path).await
}

/// Creates `dir` and its missing parents, the last one readable by its owner alone (mode 0700 on
/// Unix, a protected owner-only ACL on Windows, inherited by what is created in it).
pub fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    sys::create_private_dir(dir)
}

/// Whether others than the owner (and, on Windows, the system and administrators, who can read
/// everything anyway) can read the file at `path`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Privacy {
    /// Only its owner can read it; the text says how it is known (`mode 600`, `owner-only ACL`).
    Private(String),
    /// Others can read it; the text says who, and `fix` what to run.
    Open {
        /// Who else can read it.
        who: String,
        /// The command that makes it private.
        fix: String,
    },
}

/// Reads how private the file at `path` is.
pub fn privacy(path: &Path) -> std::io::Result<Privacy> {
    sys::privacy(path)
}

/// Whether the process `pid` exists now (a migration lock's holder). A process of another user
/// counts as alive.
pub fn pid_alive(pid: i64) -> bool {
    sys::pid_alive(pid)
}

/// Stops this process at once, as `kill -9` would: nothing of it runs after this (the test-only
/// crash points).
pub fn kill_self() -> ! {
    sys::kill_self();
    std::process::abort()
}

/// Bytes free for this user on the volume holding `dir`.
pub fn free_bytes(dir: &Path) -> Option<u64> {
    sys::free_bytes(dir)
}

/// Which stop request ended a wait in [`stop_signal`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    /// Ctrl-C (SIGINT on Unix).
    Interrupt,
    /// SIGTERM on Unix; Ctrl-Break on Windows.
    Terminate,
    /// The console window closing, the user logging off or the machine shutting down (Windows;
    /// the system ends the process about 5 s later, so what is parked must be parked by then).
    Close,
}

/// Resolves when the user or the system asks the process to stop: SIGINT or SIGTERM on Unix;
/// Ctrl-C, Ctrl-Break, the console closing, log-off or shutdown on Windows.
pub async fn stop_signal() -> Stop {
    sys::stop_signal().await
}

/// Whether `stream` (stderr or stdout) shows colour: a terminal, `NO_COLOR` unset or empty
/// (<https://no-color.org>), and on Windows a console that takes ANSI sequences (it is switched to
/// them here; a legacy console that refuses gets none).
pub fn colour(is_terminal: bool) -> bool {
    colour_when(
        is_terminal,
        std::env::var_os("NO_COLOR").as_deref(),
        sys::ansi_console,
    )
}

/// [`colour`]'s rule, with what it reads passed in; `ansi` is asked last, since on Windows it
/// switches the console's mode.
fn colour_when(
    is_terminal: bool,
    no_color: Option<&std::ffi::OsStr>,
    ansi: impl FnOnce() -> bool,
) -> bool {
    is_terminal && no_color.is_none_or(|v| v.is_empty()) && ansi()
}

/// A host path in the OneNote parser's typed form (its bytes on Unix, its UTF-16 text on Windows).
pub fn typed_path(path: &Path) -> typed_path::TypedPathBuf {
    sys::typed_path(path)
}

/// Gives memory freed by other threads back to the system where the allocator keeps it per
/// thread (glibc's arenas); nothing elsewhere.
pub fn release_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only returns free memory to the system; it takes no pointer.
    unsafe {
        libc::malloc_trim(0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_is_alive_and_a_finished_one_is_not() {
        assert!(pid_alive(i64::from(std::process::id())));
        let mut child = std::process::Command::new(std::env::current_exe().unwrap())
            .arg("--list")
            .stdout(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let pid = i64::from(child.id());
        child.wait().unwrap();
        // Reaped, so the id is free (a reuse within this test is as good as impossible).
        assert!(!pid_alive(pid));
        assert!(!pid_alive(-1));
        assert!(!pid_alive(i64::MAX));
    }

    #[test]
    fn a_file_made_private_is_private_and_one_made_open_is_not() {
        let t = tempfile::tempdir().unwrap();
        let dir = t.path().join("state");
        create_private_dir(&dir).unwrap();
        let path = dir.join("s.db");
        open_private(
            std::fs::OpenOptions::new().write(true).create_new(true),
            &path,
        )
        .unwrap();
        assert!(
            matches!(privacy(&path).unwrap(), Privacy::Private(_)),
            "{:?}",
            privacy(&path)
        );
        sys::make_open(&path).unwrap();
        match privacy(&path).unwrap() {
            Privacy::Open { fix, .. } => assert!(!fix.is_empty()),
            p => panic!("{p:?}"),
        }
    }

    #[test]
    fn free_space_is_read_for_a_folder_and_not_for_nothing() {
        let t = tempfile::tempdir().unwrap();
        assert!(free_bytes(t.path()).is_some_and(|n| n > 0));
        assert_eq!(free_bytes(&t.path().join("not-there")), None);
    }

    #[test]
    fn colour_needs_a_terminal_no_no_color_and_a_console_that_takes_ansi() {
        let set = Some(std::ffi::OsStr::new("1"));
        let empty = Some(std::ffi::OsStr::new(""));
        assert!(colour_when(true, None, || true));
        assert!(
            colour_when(true, empty, || true),
            "an empty NO_COLOR is unset"
        );
        assert!(!colour_when(true, set, || true));
        assert!(!colour_when(false, None, || true));
        assert!(!colour_when(true, None, || false), "a legacy console");
        // A pipe never switches the console's mode.
        assert!(!colour_when(false, None, || panic!("asked")));
        assert!(!colour(false));
    }

    #[test]
    fn a_non_ascii_path_reaches_the_parser_whole() {
        let p = std::env::temp_dir()
            .join("Notizbücher 日本")
            .join("Sé ction.one");
        let t = typed_path(&p);
        assert_eq!(t.to_string_lossy(), p.to_string_lossy());
        assert_eq!(
            t.file_name()
                .map(|n| String::from_utf8_lossy(n).into_owned()),
            Some("Sé ction.one".to_owned())
        );
    }
}
