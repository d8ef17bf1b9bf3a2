//! Where output goes: results on stdout (human text or one JSON document), messages and progress on
//! stderr, nothing but errors with `--quiet`, no bars without a terminal.

use std::io::{IsTerminal, Write};
use std::sync::{Arc, Mutex};

use super::GlobalArgs;

/// Knows the output mode and writes accordingly.
#[derive(Debug, Clone)]
pub struct Printer {
    /// `--json`: stdout carries machine-readable documents only.
    pub json: bool,
    /// `--quiet`: stderr carries errors only.
    pub quiet: bool,
    /// Progress bars may be drawn (a terminal on stderr and no `--no-progress`/`--quiet`).
    pub progress: bool,
    /// The bar on screen, if any: notes are printed above it instead of through it.
    bar: Arc<Mutex<Option<indicatif::ProgressBar>>>,
}

impl Printer {
    /// From the global flags and whether stderr is a terminal.
    pub fn new(g: &GlobalArgs) -> Self {
        Self {
            json: g.json,
            quiet: g.quiet,
            progress: !g.no_progress && !g.quiet && std::io::stderr().is_terminal(),
            bar: Arc::default(),
        }
    }

    /// A result line for people (stdout; suppressed in JSON mode).
    pub fn out(&self, line: impl AsRef<str>) {
        if !self.json {
            let mut o = std::io::stdout().lock();
            let _ = writeln!(o, "{}", line.as_ref());
        }
    }

    /// One JSON document on stdout, flushed at once (a script may be waiting for it).
    pub fn json_line(&self, value: &serde_json::Value) {
        let mut o = std::io::stdout().lock();
        let _ = writeln!(o, "{value}");
        let _ = o.flush();
    }

    /// A note for people on stderr (not with `--quiet`).
    pub fn note(&self, line: impl AsRef<str>) {
        if !self.quiet {
            let bar = self.bar.lock().expect("printer bar poisoned").clone();
            match bar {
                Some(b) => b.suspend(|| eprintln!("{}", line.as_ref())),
                None => eprintln!("{}", line.as_ref()),
            }
        }
    }

    /// A problem that did not stop the run, on stderr even with `--quiet`, above any bar.
    pub fn problem(&self, line: impl AsRef<str>) {
        let bar = self.bar.lock().expect("printer bar poisoned").clone();
        match bar {
            Some(b) => b.suspend(|| eprintln!("error: {}", line.as_ref())),
            None => eprintln!("error: {}", line.as_ref()),
        }
    }

    /// Sets (or clears) the bar that notes must be printed above.
    pub fn set_bar(&self, bar: Option<indicatif::ProgressBar>) {
        *self.bar.lock().expect("printer bar poisoned") = bar;
    }

    /// The final error message on stderr, with its causes.
    pub fn error(&self, err: &anyhow::Error) {
        let mut text = format!("error: {err}");
        for cause in err.chain().skip(1) {
            let c = cause.to_string();
            if !text.contains(&c) {
                text.push_str(&format!("\n  caused by: {c}"));
            }
        }
        eprintln!("{text}");
    }
}
