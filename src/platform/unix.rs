//! Unix (Linux, macOS): modes, `kill`, `statvfs`, SIGINT/SIGTERM, a path's bytes.

use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::Path;

use super::{Privacy, Stop};

pub(super) const PRIVACY_RULE: &str = "mode 0600 (the folder 0700)";

pub(super) fn open_private(
    opts: &std::fs::OpenOptions,
    path: &Path,
) -> std::io::Result<std::fs::File> {
    opts.clone().mode(0o600).open(path)
}

pub(super) async fn open_private_tokio(
    opts: &tokio::fs::OpenOptions,
    path: &Path,
) -> std::io::Result<tokio::fs::File> {
    opts.clone().mode(0o600).open(path).await
}

pub(super) fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
}

pub(super) fn privacy(path: &Path) -> std::io::Result<Privacy> {
    let m = std::fs::metadata(path)?.permissions().mode() & 0o777;
    Ok(if m & 0o077 == 0 {
        Privacy::Private(format!("mode {m:o}"))
    } else {
        Privacy::Open {
            who: format!("mode {m:o}: others"),
            fix: format!("chmod 600 {}", path.display()),
        }
    })
}

/// Test seam: makes `path` readable by others.
#[cfg(test)]
pub(super) fn make_open(path: &Path) -> std::io::Result<()> {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o644))
}

pub(super) fn pid_alive(pid: i64) -> bool {
    // 0 and negative numbers name process groups for kill(2), never one process.
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    if pid <= 0 {
        return false;
    }
    // SAFETY: kill with signal 0 only checks whether the process exists.
    let r = unsafe { libc::kill(pid, 0) };
    r == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

pub(super) fn kill_self() {
    // SAFETY: `kill` and `getpid` have no preconditions.
    unsafe {
        libc::kill(libc::getpid(), libc::SIGKILL);
    }
}

pub(super) fn free_bytes(dir: &Path) -> Option<u64> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(dir.as_os_str().as_bytes()).ok()?;
    // SAFETY: an all-zero statvfs is a valid value of the plain C struct.
    let mut s: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: `c` is a valid NUL-terminated path and `s` a writable statvfs.
    let r = unsafe { libc::statvfs(c.as_ptr(), &mut s) };
    // The field types differ between Linux and macOS (u64 / u32 and c_ulong).
    #[allow(clippy::unnecessary_cast, clippy::useless_conversion)]
    (r == 0).then(|| u64::from(s.f_bavail) * (s.f_frsize as u64))
}

pub(super) async fn stop_signal() -> Stop {
    use tokio::signal::unix::{signal, SignalKind};
    let mut term = match signal(SignalKind::terminate()) {
        Ok(s) => s,
        Err(_) => {
            let _ = tokio::signal::ctrl_c().await;
            return Stop::Interrupt;
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => Stop::Interrupt,
        _ = term.recv() => Stop::Terminate,
    }
}

pub(super) fn ansi_console() -> bool {
    true
}

pub(super) fn typed_path(path: &Path) -> typed_path::TypedPathBuf {
    use std::os::unix::ffi::OsStrExt;
    typed_path::TypedPath::new(path.as_os_str().as_bytes(), typed_path::PathType::Unix)
        .to_path_buf()
}
