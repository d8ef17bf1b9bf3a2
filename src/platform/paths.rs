//! How the platform compares paths and file names: Windows and macOS (APFS and HFS+ as formatted
//! by default) ignore letter case, Linux does not; on Windows `/` and `\` are one separator and a
//! long path's `\\?\` form names the same file as the plain one. A path typed again in other
//! letters must find the same import, and a table of contents its section files.

/// Whether this platform's file systems ignore letter case (by default; a case-sensitive APFS
/// volume or a case-sensitive NTFS folder is rare and still finds its files, compared this way).
pub const CASE_INSENSITIVE_PATHS: bool = cfg!(any(windows, target_os = "macos"));

/// Whether paths here are Windows paths (separators, `\\?\`).
const WINDOWS_PATHS: bool = cfg!(windows);

/// The form of `path` in which two paths naming the same file compare equal on this platform.
pub fn path_key(path: &str) -> String {
    key(path, CASE_INSENSITIVE_PATHS, WINDOWS_PATHS)
}

/// Whether `a` and `b` name the same file here (by their text; no file is looked at).
pub fn same_path(a: &str, b: &str) -> bool {
    a == b || path_key(a) == path_key(b)
}

fn key(path: &str, fold_case: bool, windows: bool) -> String {
    let mut p = path.to_owned();
    if windows {
        p = p.replace('/', "\\");
        // The verbatim forms name the same file as the plain ones: \\?\C:\x is C:\x,
        // \\?\UNC\server\share is \\server\share.
        if let Some(rest) = p.strip_prefix(r"\\?\UNC\") {
            p = format!(r"\\{rest}");
        } else if let Some(rest) = p.strip_prefix(r"\\?\") {
            p = rest.to_owned();
        }
        // A trailing separator does not change the folder (but `C:\` keeps its root).
        while p.len() > 3 && p.ends_with('\\') {
            p.pop();
        }
    }
    if fold_case {
        // Windows compares names through its upcase table, one UTF-16 unit to one: a letter whose
        // upper case is several letters (ß) stays itself.
        p = p
            .chars()
            .map(|c| {
                let mut u = c.to_uppercase();
                match (u.next(), u.next()) {
                    (Some(one), None) => one,
                    _ => c,
                }
            })
            .collect();
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    fn win(p: &str) -> String {
        key(p, true, true)
    }
    fn mac(p: &str) -> String {
        key(p, true, false)
    }
    fn linux(p: &str) -> String {
        key(p, false, false)
    }

    #[test]
    fn windows_ignores_case_separators_and_the_long_path_prefix() {
        let typed = r"C:\Users\Ana\Documents\OneNote Notebooks\Arbeit";
        for same in [
            r"c:\users\ana\documents\onenote notebooks\arbeit",
            "C:/Users/Ana/Documents/OneNote Notebooks/Arbeit",
            r"\\?\C:\Users\Ana\Documents\OneNote Notebooks\Arbeit",
            r"C:\Users\Ana\Documents\OneNote Notebooks\Arbeit\",
        ] {
            assert_eq!(win(typed), win(same), "{same}");
        }
        assert_ne!(
            win(typed),
            win(r"D:\Users\Ana\Documents\OneNote Notebooks\Arbeit")
        );
        assert_eq!(win(r"C:\"), r"C:\", "a drive's root keeps its separator");
    }

    #[test]
    fn windows_unc_paths_and_their_long_form_are_one() {
        assert_eq!(
            win(r"\\fileserver\Team\Notizbücher\Projekt"),
            win(r"\\?\UNC\FileServer\team\NOTIZBÜCHER\projekt")
        );
        assert_ne!(win(r"\\fileserver\Team\a"), win(r"\\other\Team\a"));
    }

    #[test]
    fn long_and_non_ascii_paths_fold_letter_by_letter() {
        let long = format!(r"C:\{}\Ärger.one", "Ünterordner".repeat(30));
        assert!(long.chars().count() > 260);
        assert_eq!(win(&format!(r"\\?\{long}")), win(&long.to_lowercase()));
        assert_eq!(mac("/Users/ana/Ελληνικά"), mac("/users/ANA/ΕΛΛΗΝΙΚΆ"));
        // One letter whose upper case is two stays itself, as Windows' upcase table keeps it.
        assert_ne!(win(r"C:\Straße"), win(r"C:\STRASSE"));
    }

    #[test]
    fn linux_compares_bytes_and_macos_keeps_its_separators() {
        assert_ne!(linux("/home/ana/Notes"), linux("/home/ana/notes"));
        assert_eq!(linux("/home/ana/Notes"), "/home/ana/Notes");
        assert_ne!(mac(r"/Users/ana/a\b"), mac("/Users/ana/a/b"));
    }

    #[test]
    fn this_platform_uses_its_own_rule() {
        assert_eq!(
            same_path("/x/Notes", "/x/notes"),
            cfg!(any(windows, target_os = "macos"))
        );
        assert!(same_path("/x/Notes", "/x/Notes"));
    }
}
