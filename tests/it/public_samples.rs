//! The public OneNote samples beside the clone (`../shared/fixtures/onenote-public`, or
//! `NOTEBRIDGE_PUBLIC_FIXTURES`). They are others' files and never copied into the repository, so a
//! clone without them (a user's) skips the tests that read them, saying so.

use std::path::PathBuf;

/// The samples' folder, or `None` (with a line on stderr naming the test that skips) when absent.
pub fn dir(test: &str) -> Option<PathBuf> {
    let dir = std::env::var("NOTEBRIDGE_PUBLIC_FIXTURES")
        .map(PathBuf::from)
        .unwrap_or_else(|_| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/fixtures/onenote-public")
        });
    if dir.is_dir() {
        Some(dir)
    } else {
        eprintln!(
            "{test}: skipped: no public OneNote samples at {}",
            dir.display()
        );
        None
    }
}

/// The text of the sample whose file name starts with `prefix`, or `None` when the samples are absent.
pub fn read(test: &str, prefix: &str) -> Option<String> {
    let dir = dir(test)?;
    let entry = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("public samples at {}: {e}", dir.display()))
        .filter_map(Result::ok)
        .find(|e| e.file_name().to_string_lossy().starts_with(prefix))
        .unwrap_or_else(|| panic!("no sample {prefix}* in {}", dir.display()));
    Some(String::from_utf8_lossy(&std::fs::read(entry.path()).unwrap()).into_owned())
}
