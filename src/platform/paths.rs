//! How the platform compares paths and file names: Windows and macOS (APFS and HFS+ as formatted
//! by default) ignore letter case, Linux does not; macOS also ignores Unicode normalisation (HFS+
//! stores names decomposed, NFD; APFS keeps them as written and finds them in either form), while
//! a `.onetoc2` names its sections as OneNote wrote them (composed, NFC, as typed on Windows); on
//! Windows `/` and `\` are one separator and a long path's `\\?\` form names the same file as the
//! plain one. A path typed again in other letters must find the same import, and a table of
//! contents its section files.

use std::borrow::Cow;

use icu_normalizer::ComposingNormalizerBorrowed;

/// Whether this platform's file systems ignore letter case (by default; a case-sensitive APFS
/// volume or a case-sensitive NTFS folder is rare and still finds its files, compared this way).
pub const CASE_INSENSITIVE_PATHS: bool = cfg!(any(windows, target_os = "macos"));

/// Whether this platform's file systems take a name in any Unicode normalisation for the same
/// name (macOS: "Café" typed composed and stored decomposed is one file). NTFS and Linux's file
/// systems compare code points, so there the two forms are two files.
pub const NORMALIZATION_INSENSITIVE_PATHS: bool = cfg!(target_os = "macos");

/// How names compare on one platform.
#[derive(Clone, Copy, Debug)]
struct Rule {
    /// Letter case is ignored.
    fold_case: bool,
    /// Windows' separators and long-path prefixes.
    windows: bool,
    /// Composed and decomposed forms are one name.
    normalization: bool,
}

/// This platform's rule.
const HERE: Rule = Rule {
    fold_case: CASE_INSENSITIVE_PATHS,
    windows: cfg!(windows),
    normalization: NORMALIZATION_INSENSITIVE_PATHS,
};

/// The form of `path` in which two paths naming the same file compare equal on this platform.
pub fn path_key(path: &str) -> String {
    key(path, HERE)
}

/// Whether `a` and `b` name the same file here (by their text; no file is looked at).
pub fn same_path(a: &str, b: &str) -> bool {
    a == b || path_key(a) == path_key(b)
}

fn key(path: &str, rule: Rule) -> String {
    // Composed first, so that a letter and its accent fold as the one letter they are (a
    // decomposed "É" upper-cases its "E" alone, and would then miss the composed "é").
    let mut p = match rule.normalization {
        true => ComposingNormalizerBorrowed::new_nfc().normalize(path),
        false => Cow::Borrowed(path),
    }
    .into_owned();
    if rule.windows {
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
    if rule.fold_case {
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

    const WINDOWS: Rule = Rule {
        fold_case: true,
        windows: true,
        normalization: false,
    };
    const MACOS: Rule = Rule {
        fold_case: true,
        windows: false,
        normalization: true,
    };
    const LINUX: Rule = Rule {
        fold_case: false,
        windows: false,
        normalization: false,
    };

    fn win(p: &str) -> String {
        key(p, WINDOWS)
    }
    fn mac(p: &str) -> String {
        key(p, MACOS)
    }
    fn linux(p: &str) -> String {
        key(p, LINUX)
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

    /// "Café" composed (é, U+00E9), as a `.onetoc2` names it, and decomposed (e + U+0301), as
    /// HFS+ lists it; and a decomposed capital with a composed small letter.
    const CAFE_NFC: &str = "Caf\u{e9}.one";
    const CAFE_NFD: &str = "Cafe\u{301}.one";

    #[test]
    fn macos_takes_either_normalisation_for_one_name() {
        assert_ne!(CAFE_NFC, CAFE_NFD);
        assert_eq!(mac(CAFE_NFC), mac(CAFE_NFD));
        assert_eq!(
            mac("/Users/ana/Notizb\u{fc}cher/Caf\u{e9}.one"),
            mac("/Users/ana/Notizbu\u{308}cher/Cafe\u{301}.one")
        );
        // Case and normalisation together: a decomposed capital is the composed small letter.
        assert_eq!(mac("E\u{301}t\u{e9}.one"), mac("\u{e9}t\u{c9}.ONE"));
        assert_ne!(mac(CAFE_NFC), mac("Cafe.one"), "the accent is not dropped");
    }

    #[test]
    fn windows_and_linux_keep_the_two_forms_apart() {
        assert_ne!(win(CAFE_NFC), win(CAFE_NFD));
        assert_ne!(linux(CAFE_NFC), linux(CAFE_NFD));
    }

    #[test]
    fn this_platform_takes_both_forms_only_where_its_file_system_does() {
        assert_eq!(same_path(CAFE_NFC, CAFE_NFD), cfg!(target_os = "macos"));
    }
}
