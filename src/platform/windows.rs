//! Windows: owner-only ACLs, `OpenProcess`, `TerminateProcess`, `GetDiskFreeSpaceExW`, the
//! console's control events and VT mode, a path's UTF-16 text, DPAPI.

use std::ffi::OsStr;
use std::os::windows::ffi::OsStrExt;
use std::path::Path;
use std::ptr::{null, null_mut};

use windows_sys::Win32::Foundation::{
    CloseHandle, GetLastError, LocalFree, ERROR_ACCESS_DENIED, HANDLE, STILL_ACTIVE,
};
use windows_sys::Win32::Security::Authorization::{
    ConvertSecurityDescriptorToStringSecurityDescriptorW, ConvertSidToStringSidW,
    ConvertStringSecurityDescriptorToSecurityDescriptorW, GetNamedSecurityInfoW,
    SetNamedSecurityInfoW, SDDL_REVISION_1, SE_FILE_OBJECT,
};
use windows_sys::Win32::Security::{
    GetSecurityDescriptorDacl, GetTokenInformation, TokenUser, ACL, DACL_SECURITY_INFORMATION,
    PROTECTED_DACL_SECURITY_INFORMATION, PSECURITY_DESCRIPTOR, TOKEN_QUERY, TOKEN_USER,
};
use windows_sys::Win32::Storage::FileSystem::GetDiskFreeSpaceExW;
use windows_sys::Win32::System::Console::{
    GetConsoleMode, GetStdHandle, SetConsoleMode, ENABLE_VIRTUAL_TERMINAL_PROCESSING,
    STD_ERROR_HANDLE,
};
use windows_sys::Win32::System::Threading::{
    GetCurrentProcess, GetExitCodeProcess, OpenProcess, OpenProcessToken, TerminateProcess,
    PROCESS_QUERY_LIMITED_INFORMATION,
};

use super::acl;
use super::{Privacy, Stop};

pub(super) const PRIVACY_RULE: &str =
    "an owner-only ACL (the folder's inherited by what is made in it), tokens sealed with DPAPI";

/// `s` as a NUL-terminated UTF-16 string.
fn wide(s: &OsStr) -> Vec<u16> {
    s.encode_wide().chain(std::iter::once(0)).collect()
}

/// A NUL-terminated UTF-16 string the system allocated, read and handed back with `LocalFree`.
///
/// # Safety
/// `p` is null or a `LocalAlloc`ed NUL-terminated UTF-16 string owned by the caller.
unsafe fn take_local_wide(p: *mut u16) -> Option<String> {
    if p.is_null() {
        return None;
    }
    let mut n = 0;
    while *p.add(n) != 0 {
        n += 1;
    }
    let s = String::from_utf16_lossy(std::slice::from_raw_parts(p, n));
    LocalFree(p.cast());
    Some(s)
}

/// The current user's SID in its string form (`S-1-5-21-...`).
fn user_sid() -> std::io::Result<String> {
    // SAFETY: each call gets valid out-pointers; the token handle is closed, the string freed.
    unsafe {
        let mut token: HANDLE = null_mut();
        if OpenProcessToken(GetCurrentProcess(), TOKEN_QUERY, &mut token) == 0 {
            return Err(std::io::Error::last_os_error());
        }
        let mut len = 0u32;
        GetTokenInformation(token, TokenUser, null_mut(), 0, &mut len);
        // u64s keep the buffer aligned for TOKEN_USER.
        let mut buf = vec![0u64; (len as usize).div_ceil(8).max(1)];
        let ok = GetTokenInformation(token, TokenUser, buf.as_mut_ptr().cast(), len, &mut len);
        let err = std::io::Error::last_os_error();
        CloseHandle(token);
        if ok == 0 {
            return Err(err);
        }
        let user = &*(buf.as_ptr() as *const TOKEN_USER);
        let mut s: *mut u16 = null_mut();
        if ConvertSidToStringSidW(user.User.Sid, &mut s) == 0 {
            return Err(std::io::Error::last_os_error());
        }
        take_local_wide(s).ok_or_else(|| std::io::Error::other("no SID string"))
    }
}

/// Replaces the DACL of `path` by a protected one (nothing inherited from above) described by
/// `sddl`.
fn set_dacl(path: &Path, sddl: &str) -> std::io::Result<()> {
    let sddl = wide(OsStr::new(sddl));
    let path = wide(path.as_os_str());
    // SAFETY: valid NUL-terminated strings and out-pointers; the descriptor is freed.
    unsafe {
        let mut sd: PSECURITY_DESCRIPTOR = null_mut();
        if ConvertStringSecurityDescriptorToSecurityDescriptorW(
            sddl.as_ptr(),
            SDDL_REVISION_1,
            &mut sd,
            null_mut(),
        ) == 0
        {
            return Err(std::io::Error::last_os_error());
        }
        let (mut present, mut defaulted) = (0, 0);
        let mut dacl: *mut ACL = null_mut();
        let got = GetSecurityDescriptorDacl(sd, &mut present, &mut dacl, &mut defaulted);
        let r = if got == 0 || present == 0 {
            Err(std::io::Error::other(
                "the owner-only descriptor has no DACL",
            ))
        } else {
            match SetNamedSecurityInfoW(
                path.as_ptr(),
                SE_FILE_OBJECT,
                DACL_SECURITY_INFORMATION | PROTECTED_DACL_SECURITY_INFORMATION,
                null_mut(),
                null_mut(),
                dacl,
                null(),
            ) {
                0 => Ok(()),
                e => Err(std::io::Error::from_raw_os_error(e as i32)),
            }
        };
        LocalFree(sd);
        r
    }
}

/// The DACL of `path` in SDDL (`D:P(A;;FA;;;S-1-5-...)...`).
fn dacl_sddl(path: &Path) -> std::io::Result<String> {
    let path = wide(path.as_os_str());
    // SAFETY: valid NUL-terminated path and out-pointers; descriptor and string are freed.
    unsafe {
        let mut sd: PSECURITY_DESCRIPTOR = null_mut();
        let e = GetNamedSecurityInfoW(
            path.as_ptr(),
            SE_FILE_OBJECT,
            DACL_SECURITY_INFORMATION,
            null_mut(),
            null_mut(),
            null_mut(),
            null_mut(),
            &mut sd,
        );
        if e != 0 {
            return Err(std::io::Error::from_raw_os_error(e as i32));
        }
        let mut s: *mut u16 = null_mut();
        let ok = ConvertSecurityDescriptorToStringSecurityDescriptorW(
            sd,
            SDDL_REVISION_1,
            DACL_SECURITY_INFORMATION,
            &mut s,
            null_mut(),
        );
        let err = std::io::Error::last_os_error();
        LocalFree(sd);
        if ok == 0 {
            return Err(err);
        }
        take_local_wide(s).ok_or_else(|| std::io::Error::other("no SDDL string"))
    }
}

pub(super) fn open_private(
    opts: &std::fs::OpenOptions,
    path: &Path,
) -> std::io::Result<std::fs::File> {
    let f = opts.open(path)?;
    // Before a byte is written: the file is empty (or, opened again, already private).
    set_dacl(path, &acl::owner_only_file(&user_sid()?))?;
    Ok(f)
}

pub(super) async fn open_private_tokio(
    opts: &tokio::fs::OpenOptions,
    path: &Path,
) -> std::io::Result<tokio::fs::File> {
    let f = opts.open(path).await?;
    let owned = path.to_owned();
    tokio::task::spawn_blocking(move || set_dacl(&owned, &acl::owner_only_file(&user_sid()?)))
        .await
        .map_err(std::io::Error::other)??;
    Ok(f)
}

pub(super) fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    set_dacl(dir, &acl::owner_only_dir(&user_sid()?))
}

pub(super) fn privacy(path: &Path) -> std::io::Result<Privacy> {
    let sddl = dacl_sddl(path)?;
    let others = acl::readers_besides(&sddl, &user_sid()?);
    Ok(if others.is_empty() {
        Privacy::Private("owner-only ACL".into())
    } else {
        Privacy::Open {
            who: format!("its ACL lets {} read it", others.join(", ")),
            fix: format!(
                "icacls \"{}\" /inheritance:r /grant:r \"%USERNAME%:F\"",
                path.display()
            ),
        }
    })
}

/// Test seam: makes `path` readable by everyone.
#[cfg(test)]
pub(super) fn make_open(path: &Path) -> std::io::Result<()> {
    set_dacl(path, &format!("D:P(A;;FA;;;{})(A;;FR;;;WD)", user_sid()?))
}

pub(super) fn pid_alive(pid: i64) -> bool {
    let Ok(pid) = u32::try_from(pid) else {
        return false;
    };
    // SAFETY: the handle, when one is given, is closed; the out-pointer is valid.
    unsafe {
        let h = OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, 0, pid);
        if h.is_null() {
            // Another user's (or an elevated) process exists but may not be queried.
            return GetLastError() == ERROR_ACCESS_DENIED;
        }
        let mut code = 0u32;
        let ok = GetExitCodeProcess(h, &mut code);
        CloseHandle(h);
        // A process that ended keeps its object while a handle is open; its exit code tells.
        ok != 0 && code == STILL_ACTIVE as u32
    }
}

pub(super) fn kill_self() {
    // 137 as a shell reports `kill -9` (128 + 9).
    // SAFETY: the pseudo-handle of this process needs no closing.
    unsafe {
        TerminateProcess(GetCurrentProcess(), 137);
    }
}

pub(super) fn free_bytes(dir: &Path) -> Option<u64> {
    if !dir.is_dir() {
        return None;
    }
    let w = wide(dir.as_os_str());
    let mut free = 0u64;
    // SAFETY: a valid NUL-terminated path and out-pointer; the others may be null.
    let ok = unsafe { GetDiskFreeSpaceExW(w.as_ptr(), &mut free, null_mut(), null_mut()) };
    (ok != 0).then_some(free)
}

pub(super) async fn stop_signal() -> Stop {
    use tokio::signal::windows::{ctrl_break, ctrl_c, ctrl_close, ctrl_logoff, ctrl_shutdown};
    let (Ok(mut c), Ok(mut b)) = (ctrl_c(), ctrl_break()) else {
        std::future::pending::<()>().await;
        unreachable!()
    };
    // Close, log-off and shutdown are delivered only to a console process; without one there is
    // nothing to register, and Ctrl-C/Ctrl-Break still count.
    let close = async {
        match (ctrl_close(), ctrl_logoff(), ctrl_shutdown()) {
            (Ok(mut cl), Ok(mut lo), Ok(mut sh)) => {
                tokio::select! {
                    _ = cl.recv() => {}
                    _ = lo.recv() => {}
                    _ = sh.recv() => {}
                }
            }
            _ => std::future::pending().await,
        }
    };
    tokio::select! {
        _ = c.recv() => Stop::Interrupt,
        _ = b.recv() => Stop::Terminate,
        _ = close => Stop::Close,
    }
}

pub(super) fn ansi_console() -> bool {
    // SAFETY: the standard handle needs no closing; out-pointers are valid.
    unsafe {
        let h = GetStdHandle(STD_ERROR_HANDLE);
        let mut mode = 0;
        if h.is_null() || GetConsoleMode(h, &mut mode) == 0 {
            // Not a console (a pipe, or a terminal emulator's pty that reads ANSI itself).
            return true;
        }
        mode & ENABLE_VIRTUAL_TERMINAL_PROCESSING != 0
            || SetConsoleMode(h, mode | ENABLE_VIRTUAL_TERMINAL_PROCESSING) != 0
    }
}

pub(super) fn typed_path(path: &Path) -> typed_path::TypedPathBuf {
    // A path that is not valid UTF-16 (an unpaired surrogate) cannot name a OneNote file.
    typed_path::TypedPath::new(
        path.to_string_lossy().as_bytes(),
        typed_path::PathType::Windows,
    )
    .to_path_buf()
}

/// Seals `secret` with DPAPI for the current user (`CryptProtectData`).
pub(super) fn protect(secret: &[u8]) -> std::io::Result<Vec<u8>> {
    dpapi(secret, true)
}

/// Opens what [`protect`] sealed.
pub(super) fn unprotect(sealed: &[u8]) -> std::io::Result<Vec<u8>> {
    dpapi(sealed, false)
}

fn dpapi(data: &[u8], seal: bool) -> std::io::Result<Vec<u8>> {
    use windows_sys::Win32::Security::Cryptography::{
        CryptProtectData, CryptUnprotectData, CRYPTPROTECT_UI_FORBIDDEN, CRYPT_INTEGER_BLOB,
    };
    let input = CRYPT_INTEGER_BLOB {
        cbData: u32::try_from(data.len()).map_err(std::io::Error::other)?,
        pbData: data.as_ptr() as *mut u8,
    };
    let mut out = CRYPT_INTEGER_BLOB {
        cbData: 0,
        pbData: null_mut(),
    };
    // SAFETY: the input blob borrows `data` for the call; the output is copied, then freed.
    unsafe {
        let ok = if seal {
            CryptProtectData(
                &input,
                null(),
                null(),
                null(),
                null(),
                CRYPTPROTECT_UI_FORBIDDEN,
                &mut out,
            )
        } else {
            CryptUnprotectData(
                &input,
                null_mut(),
                null(),
                null(),
                null(),
                CRYPTPROTECT_UI_FORBIDDEN,
                &mut out,
            )
        };
        if ok == 0 {
            return Err(std::io::Error::last_os_error());
        }
        let v = std::slice::from_raw_parts(out.pbData, out.cbData as usize).to_vec();
        LocalFree(out.pbData.cast());
        Ok(v)
    }
}
