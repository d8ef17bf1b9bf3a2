//! Reading OneNote's own files (`onefile`): read (scan) and read + convert time per page and per
//! MB over the samples in `fixtures/onenote-files`, and peak RSS, also for a section file of
//! several hundred MB (a real section followed by a sparse tail, so nothing is written to disk but
//! the file is that big: the parser reads through positional reads and must not hold it).
//! Run: `cargo bench --bench files`.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use notebridge::onefile::{self, FileImport};

/// Passes over every sample; the median is printed.
const ROUNDS: usize = 7;
/// The big section file's size.
const BIG_BYTES: u64 = 400 * 1024 * 1024;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/onenote-files")
}

/// Every section file and notebook the samples hold, each once: the lone files of `apache-tika`
/// and the interop `SUT` folder's files by themselves, the notebook folder as one input.
fn inputs() -> Vec<PathBuf> {
    let f = fixtures();
    let mut out = Vec::new();
    for dir in ["apache-tika", "interop-testsuites/SUT"] {
        let mut files: Vec<PathBuf> = std::fs::read_dir(f.join(dir))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "one"))
            .collect();
        files.sort();
        out.extend(files);
    }
    out.push(f.join("interop-testsuites/MS-ONESTORE-Resources/AlternativePackaging.one"));
    out.push(f.join("onenote.rs/samples"));
    out.push(f.join("obsidian-importer/makecab-lzx-notebook.onepkg"));
    out
}

/// Bytes of the section files an import read.
fn section_bytes(imp: &FileImport) -> u64 {
    imp.all_sections()
        .iter()
        .map(|(_, s)| match &s.location {
            onefile::SectionLocation::File(p) => std::fs::metadata(p).map(|m| m.len()).unwrap_or(0),
            onefile::SectionLocation::Package { package, .. } => {
                std::fs::metadata(package).map(|m| m.len()).unwrap_or(0)
            }
        })
        .sum()
}

/// Scans every input, then opens each readable section and converts each page.
fn read_and_convert(inputs: &[PathBuf]) -> (Duration, Duration, usize, u64) {
    let (mut scan_t, mut convert_t, mut pages, mut bytes) = (Duration::ZERO, Duration::ZERO, 0, 0);
    for p in inputs {
        let t = Instant::now();
        let imp = onefile::scan(p).expect("a sample");
        scan_t += t.elapsed();
        bytes += section_bytes(&imp);
        let t = Instant::now();
        for (_, s) in imp.all_sections() {
            if s.problem.is_some() {
                continue;
            }
            let parsed = onefile::open_section(&s.location).expect("scanned readable");
            for page in &s.pages {
                std::hint::black_box(parsed.convert(&page.id));
                pages += 1;
            }
        }
        convert_t += t.elapsed();
    }
    (scan_t, convert_t, pages, bytes)
}

fn status_kb(field: &str) -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with(field))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// In a fresh process: scans and converts the big file, prints the peak RSS.
fn measure_big(path: &Path) {
    let before = status_kb("VmHWM:").unwrap_or(0);
    let t = Instant::now();
    let imp = onefile::scan(path).expect("the big section");
    let s = &imp.sections[0];
    assert!(s.problem.is_none(), "{:?}", s.problem);
    let parsed = onefile::open_section(&s.location).unwrap();
    let mut blocks = 0;
    for p in &s.pages {
        blocks += parsed.convert(&p.id).map_or(0, |c| c.blocks.len());
    }
    let took = t.elapsed();
    let peak = status_kb("VmHWM:").unwrap_or(0);
    println!(
        "big section file: {} MB on disk, {} page(s), {blocks} blocks, read + convert {:.1} ms; \
         peak RSS {:.1} MB (before the read {:.1} MB)",
        BIG_BYTES / (1024 * 1024),
        s.pages.len(),
        took.as_secs_f64() * 1e3,
        peak as f64 / 1024.0,
        before as f64 / 1024.0
    );
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--measure-big") {
        measure_big(Path::new(&args[i + 1]));
        return;
    }
    let inputs = inputs();
    let mut rounds: Vec<(Duration, Duration, usize, u64)> =
        (0..ROUNDS).map(|_| read_and_convert(&inputs)).collect();
    rounds.sort_by_key(|r| r.0 + r.1);
    let (scan_t, convert_t, pages, bytes) = rounds[ROUNDS / 2];
    let mb = bytes as f64 / 1e6;
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!(
        "samples: {} inputs, {pages} pages converted, {mb:.2} MB of section files (median of {ROUNDS})",
        inputs.len()
    );
    println!(
        "  read (scan):        {:8.1} ms  = {:6.2} ms/page  {:6.2} ms/MB",
        ms(scan_t),
        ms(scan_t) / pages as f64,
        ms(scan_t) / mb
    );
    println!(
        "  open + convert:     {:8.1} ms  = {:6.2} ms/page  {:6.2} ms/MB",
        ms(convert_t),
        ms(convert_t) / pages as f64,
        ms(convert_t) / mb
    );
    println!(
        "  read + convert:     {:8.1} ms  = {:6.2} ms/page  {:6.2} ms/MB",
        ms(scan_t + convert_t),
        ms(scan_t + convert_t) / pages as f64,
        ms(scan_t + convert_t) / mb
    );
    println!(
        "  peak RSS of this process: {:.1} MB",
        status_kb("VmHWM:").unwrap_or(0) as f64 / 1024.0
    );

    // A real desktop section padded to BIG_BYTES with a sparse tail: the revision store is found
    // from its header, so the tail is never needed, and a reader that held the file would show it.
    let dir = std::env::temp_dir().join(format!("notebridge-files-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let big = dir.join("Big.one");
    std::fs::copy(
        fixtures().join("interop-testsuites/SUT/FileSyncWOPI_OneNoteWithODB.one"),
        &big,
    )
    .unwrap();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&big)
        .unwrap()
        .set_len(BIG_BYTES)
        .unwrap();
    let status = std::process::Command::new(std::env::current_exe().unwrap())
        .arg("--measure-big")
        .arg(&big)
        .status()
        .unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(status.success());
}
