//! The one way tests run the `notebridge` binary: a clean environment (nothing of the developer's:
//! `PATH`, and a home the test owns, which holds the user's folders every platform reads, so the
//! default config and state are the test's own), no stdin, output captured, and a time limit so
//! that a hung binary fails its test instead of the suite.
//!
//! ```ignore
//! let out = notebridge(home, &["--json", "status"]).envs(lab.env()).run().await;
//! assert_eq!(out.code, Some(0), "{out:?}");
//! ```

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

/// The longest a run of the binary may take in a test.
const LIMIT: Duration = Duration::from_secs(120);

/// One run of the binary, set up but not started.
pub struct Bin {
    cmd: tokio::process::Command,
}

/// What a run printed, and how it ended.
#[derive(Debug)]
pub struct Output {
    /// The exit code (`None`: ended by a signal).
    pub code: Option<i32>,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
}

impl From<std::process::Output> for Output {
    fn from(out: std::process::Output) -> Self {
        Output {
            code: out.status.code(),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }
}

impl Output {
    /// Both streams, for a failure's message.
    pub fn all(&self) -> String {
        format!("{}\n{}", self.stdout, self.stderr)
    }

    /// Whether the run was stopped hard, as `kill -9` stops it (a crash point's
    /// `platform::kill_self`): on Unix it has no exit code (SIGKILL ended it); on Windows its
    /// code is `TerminateProcess`'s, 137, as a shell reports a `kill -9`.
    pub fn stopped_hard(&self) -> bool {
        self.code == if cfg!(windows) { Some(137) } else { None }
    }
}

/// The binary with `args`, in a clean environment whose home is `home`.
pub fn notebridge(home: &Path, args: &[&str]) -> Bin {
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_notebridge"));
    cmd.args(args)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .envs(user_folders(home))
        .envs(
            SYSTEM
                .iter()
                .filter_map(|k| Some((k, std::env::var_os(k)?))),
        )
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    Bin { cmd }
}

/// Whether this Windows is Wine (it keeps `HKLM\Software\Wine`). Wine 8.0 keeps no file ACL: its
/// `SetNamedSecurityInfoW` succeeds and stores nothing, and the ACL read back is made from the
/// Unix mode, with Everyone in it.
pub fn wine() -> bool {
    #[cfg(windows)]
    return windows_registry::LOCAL_MACHINE
        .open(r"Software\Wine")
        .is_ok();
    #[cfg(not(windows))]
    false
}

/// `doctor --json`'s document from a run that passed: every check ok, exit 0. Under Wine, which
/// keeps no ACL ([`wine`]), `database_mode` fails as it would on a Windows that lets everyone read
/// the file, so there it alone may fail, with its exit 2.
pub fn doctor_passed(code: Option<i32>, stdout: &str) -> serde_json::Value {
    let doc: serde_json::Value = serde_json::from_str(stdout.trim())
        .unwrap_or_else(|e| panic!("doctor --json: {e}: {stdout}"));
    let failed: Vec<&str> = doc["checks"]
        .as_array()
        .unwrap_or_else(|| panic!("no checks: {doc}"))
        .iter()
        .filter(|c| c["ok"] != true)
        .filter_map(|c| c["name"].as_str())
        .collect();
    if wine() && failed == ["database_mode"] {
        assert_eq!(code, Some(2), "{doc}");
    } else {
        assert_eq!((code, failed), (Some(0), vec![]), "{doc}");
        assert_eq!(doc["ok"], true, "{doc}");
    }
    doc
}

/// What Windows gives every process and a user's environment always holds, not the developer's:
/// without `SystemRoot` Winsock cannot start (no network at all). Absent elsewhere.
const SYSTEM: [&str; 2] = ["SystemRoot", "windir"];

/// The variables that put a user's folders in `home`, for every platform: `HOME` (Unix; macOS
/// keeps its folders under it), the XDG folders (Linux), `%USERPROFILE%`, `%LOCALAPPDATA%`,
/// `%APPDATA%` (Windows, where the user's folders are not under `HOME`; its temporary folder,
/// without `TEMP`/`TMP`, is `%USERPROFILE%`).
pub fn user_folders(home: &Path) -> Vec<(&'static str, PathBuf)> {
    vec![
        ("HOME", home.to_owned()),
        ("XDG_CONFIG_HOME", home.join(".config")),
        ("XDG_DATA_HOME", home.join(".local").join("share")),
        ("XDG_CACHE_HOME", home.join(".cache")),
        ("USERPROFILE", home.to_owned()),
        ("APPDATA", home.join("AppData").join("Roaming")),
        ("LOCALAPPDATA", home.join("AppData").join("Local")),
    ]
}

/// The state database the binary keeps by default for a user whose home is `home` (in the local
/// data folder [`user_folders`] gives this platform).
pub fn default_db(home: &Path) -> PathBuf {
    let data = if cfg!(windows) {
        home.join("AppData").join("Local")
    } else if cfg!(target_os = "macos") {
        home.join("Library").join("Application Support")
    } else {
        home.join(".local").join("share")
    };
    data.join("notebridge").join("notebridge.db")
}

impl Bin {
    /// Adds arguments after those given.
    pub fn args<A: AsRef<OsStr>>(mut self, args: impl IntoIterator<Item = A>) -> Self {
        self.cmd.args(args);
        self
    }

    /// Sets one variable.
    pub fn env(mut self, key: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> Self {
        self.cmd.env(key, value);
        self
    }

    /// Sets these variables (a lab's, say).
    pub fn envs<K, V>(mut self, vars: impl IntoIterator<Item = (K, V)>) -> Self
    where
        K: AsRef<OsStr>,
        V: AsRef<OsStr>,
    {
        self.cmd.envs(vars);
        self
    }

    /// Leaves a variable unset (one the lab sets, for a test of its absence).
    pub fn env_remove(mut self, key: impl AsRef<OsStr>) -> Self {
        self.cmd.env_remove(key);
        self
    }

    /// The command itself, for a test that spawns it and acts while it runs (signals, a second
    /// process).
    pub fn command(self) -> tokio::process::Command {
        self.cmd
    }

    /// Starts it, for a test that acts while it runs.
    pub fn spawn(mut self) -> tokio::process::Child {
        self.cmd.start()
    }

    /// Runs it to the end.
    pub async fn run(mut self) -> Output {
        let out = tokio::time::timeout(LIMIT, self.cmd.run_to_end())
            .await
            .expect("the binary did not end in time");
        Output::from(out)
    }

    /// [`Bin::run`] on this thread, blocking it: for a test that is not async, or a helper called
    /// from inside a runtime that cannot await.
    pub fn run_blocking(self) -> Output {
        let mut cmd = self.cmd.into_std();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let out = retry_failed_start(|| cmd.spawn()).and_then(|c| c.wait_with_output());
            tx.send(out)
        });
        let out = rx
            .recv_timeout(LIMIT)
            .expect("the binary did not end in time")
            .expect("the binary runs");
        Output::from(out)
    }
}

/// Starting the binary as every test starts it: a start that Wine failed before any of the
/// program ran is tried again ([`retry_failed_start`]), any other failure fails the test.
pub trait Start {
    /// Starts it, for a test that acts while it runs.
    fn start(&mut self) -> tokio::process::Child;
    /// Starts it and waits for its end, with what it printed (as `Command::output`, for a command
    /// whose output is piped, as [`notebridge`]'s is).
    fn run_to_end(&mut self) -> impl std::future::Future<Output = std::process::Output> + Send;
}

impl Start for tokio::process::Command {
    fn start(&mut self) -> tokio::process::Child {
        retry_failed_start(|| self.spawn()).expect("the binary starts")
    }

    fn run_to_end(&mut self) -> impl std::future::Future<Output = std::process::Output> + Send {
        let child = self.start();
        async move { child.wait_with_output().await.expect("the binary runs") }
    }
}

/// How many times a start Wine failed is tried in all.
const STARTS: u32 = 5;

/// Runs `spawn` until it starts the process, when it fails the way Wine fails a start on a loaded
/// machine: Wine's `NtCreateUserProcess` answers `STATUS_INTERNAL_ERROR` (Win32 error 1359) when
/// the new process ended before it finished loading, so none of its own code ran and starting it
/// again changes nothing a test checks. Windows itself has no such failure; elsewhere the first
/// answer is the answer.
fn retry_failed_start<C>(mut spawn: impl FnMut() -> std::io::Result<C>) -> std::io::Result<C> {
    const ERROR_INTERNAL_ERROR: i32 = 1359;
    let mut tries = 1;
    loop {
        match spawn() {
            Err(e)
                if cfg!(windows)
                    && e.raw_os_error() == Some(ERROR_INTERNAL_ERROR)
                    && tries < STARTS =>
            {
                eprintln!("the binary did not start ({e}); starting it again");
                tries += 1;
                std::thread::sleep(Duration::from_millis(200));
            }
            r => return r,
        }
    }
}

#[test]
fn a_start_wine_failed_is_tried_again_on_windows_alone() {
    let mut calls = 0;
    let r = retry_failed_start(|| {
        calls += 1;
        if calls < 3 {
            Err(std::io::Error::from_raw_os_error(1359))
        } else {
            Ok(calls)
        }
    });
    if cfg!(windows) {
        assert_eq!(r.unwrap(), 3);
    } else {
        assert_eq!(r.unwrap_err().raw_os_error(), Some(1359));
        assert_eq!(calls, 1);
    }
    // Another failure, or one that goes on, is the answer.
    let mut calls = 0;
    let r: std::io::Result<()> = retry_failed_start(|| {
        calls += 1;
        Err(std::io::Error::from_raw_os_error(if cfg!(windows) {
            1359
        } else {
            2
        }))
    });
    assert!(r.is_err());
    assert_eq!(calls, if cfg!(windows) { STARTS } else { 1 });
}
