//! Hostile OneNote files: truncated and bit-flipped copies of every sample, scanned, opened and
//! converted. Nothing may panic out of the reader (a parser panic is the section's problem), and
//! every page that still parses converts to blocks Notion takes.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

use notebridge::onefile::{self, ProblemKind};
use proptest::prelude::*;

use crate::convert_validate as validate;

/// Every sample under 1 MB (the bigger ones add time, not cases).
fn samples() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/onenote-files");
    let mut out = Vec::new();
    let mut stack = vec![root];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p
                .extension()
                .is_some_and(|x| matches!(x.to_str(), Some("one" | "onetoc2" | "onepkg")))
                && std::fs::metadata(&p).unwrap().len() < 1_000_000
            {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// Scans `bytes` written as `name`, opens each readable section and converts each page; a panic
/// anywhere, or a page Notion would refuse, is the failure returned.
fn survive(name: &str, bytes: &[u8]) -> Result<(), String> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    std::fs::write(&path, bytes).unwrap();
    let run = catch_unwind(AssertUnwindSafe(|| -> Result<(), String> {
        let Ok(imp) = onefile::scan(&path) else {
            return Ok(());
        };
        for (_, s) in imp.all_sections() {
            if let Some(p) = &s.problem {
                if p.kind == ProblemKind::Damaged && !p.reason.contains("the section's own records")
                {
                    return Err(format!(
                        "reason without the whole-section note: {}",
                        p.reason
                    ));
                }
                continue;
            }
            let parsed = match onefile::open_section(&s.location) {
                Ok(p) => p,
                Err(_) => continue,
            };
            for p in &s.pages {
                if let Some(page) = parsed.convert(&p.id) {
                    validate::blocks(&page.blocks)?;
                }
            }
        }
        Ok(())
    }));
    match run {
        Ok(r) => r,
        Err(_) => Err(format!("{name}: panicked")),
    }
}

#[test]
fn every_sample_whole_survives() {
    for p in samples() {
        let bytes = std::fs::read(&p).unwrap();
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        survive(&name, &bytes).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn truncated_samples_never_panic(pick in any::<prop::sample::Index>(), cut in 0.0f64..1.0) {
        let files = samples();
        let p = pick.get(&files);
        let bytes = std::fs::read(p).unwrap();
        let n = (bytes.len() as f64 * cut) as usize;
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        prop_assert!(survive(&name, &bytes[..n]).is_ok(), "{} cut at {n}", p.display());
    }

    #[test]
    fn bit_flipped_samples_never_panic(
        pick in any::<prop::sample::Index>(),
        flips in prop::collection::vec((0.0f64..1.0, 0u8..8), 1..16),
    ) {
        let files = samples();
        let p = pick.get(&files);
        let mut bytes = std::fs::read(p).unwrap();
        for (at, bit) in &flips {
            let i = ((bytes.len() as f64 * at) as usize).min(bytes.len().saturating_sub(1));
            if let Some(b) = bytes.get_mut(i) {
                *b ^= 1 << bit;
            }
        }
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        let r = survive(&name, &bytes);
        prop_assert!(r.is_ok(), "{} with flips {flips:?}: {r:?}", p.display());
    }
}
