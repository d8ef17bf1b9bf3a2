//! Where output goes: results on stdout (human text or one JSON document), messages and progress on
//! stderr, nothing but errors with `--quiet`, no bars without a terminal.

use std::io::{IsTerminal, Write};
use std::sync::Mutex;

use super::exit::Exit;
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
}

impl Printer {
    /// From the global flags and whether stderr is a terminal.
    pub fn new(g: &GlobalArgs) -> Self {
        Self {
            json: g.json,
            quiet: g.quiet,
            progress: !g.no_progress && !g.quiet && std::io::stderr().is_terminal(),
        }
    }

    /// A result line for people (stdout; suppressed in JSON mode).
    pub fn out(&self, line: impl AsRef<str>) {
        if !self.json {
            // stdout and the bar's stderr share the terminal: the bar steps aside for the line.
            let write = || {
                let mut o = std::io::stdout().lock();
                let _ = writeln!(o, "{}", line.as_ref());
                let _ = o.flush();
            };
            match current_bar() {
                Some(b) => b.suspend(write),
                None => write(),
            }
        }
    }

    /// One JSON line on stdout exactly as given (no `"version"`), flushed at once: for the one line
    /// whose shape the contract fixes, the device-code prompt.
    pub fn json_exact(&self, value: &serde_json::Value) {
        let mut o = std::io::stdout().lock();
        let _ = writeln!(o, "{value}");
        let _ = o.flush();
    }

    /// One JSON document on stdout, flushed at once (a script may be waiting for it). Every document
    /// carries `"version"`, notebridge's own, first, so a script can tell which shape it reads.
    pub fn json_line(&self, value: &serde_json::Value) {
        let value = with_version(value);
        let mut o = std::io::stdout().lock();
        let _ = writeln!(o, "{value}");
        let _ = o.flush();
    }

    /// A note for people on stderr (not with `--quiet`).
    pub fn note(&self, line: impl AsRef<str>) {
        if !self.quiet {
            let bar = current_bar();
            match bar {
                Some(b) => b.suspend(|| eprintln!("{}", line.as_ref())),
                None => eprintln!("{}", line.as_ref()),
            }
        }
    }

    /// A problem that did not stop the run, on stderr even with `--quiet`, above any bar.
    pub fn problem(&self, line: impl AsRef<str>) {
        let bar = current_bar();
        match bar {
            Some(b) => b.suspend(|| eprintln!("error: {}", line.as_ref())),
            None => eprintln!("error: {}", line.as_ref()),
        }
    }

    /// Sets (or clears) the bar that notes must be printed above.
    pub fn set_bar(&self, bar: Option<indicatif::ProgressBar>) {
        *BAR.lock().expect("progress bar slot poisoned") = bar;
    }

    /// The final error: on stderr as the argument parser prints its own (`error:` in bold red where
    /// colour is on, the causes, one `hint:` line with what to do next), and with `--json` also as one
    /// document on stdout: `{"version", "error": {"message", "causes", "hint"}, "exit"}`.
    /// `hint`, when given, is the next step instead of the exit code's usual one.
    pub fn error(&self, err: &anyhow::Error, exit: Exit, hint: Option<&str>) {
        let message = err.to_string();
        let mut causes: Vec<String> = Vec::new();
        for cause in err.chain().skip(1) {
            let c = cause.to_string();
            if !message.contains(&c) && !causes.iter().any(|k| k.contains(&c)) {
                causes.push(c);
            }
        }
        let hint = hint.map(str::to_owned).or_else(|| hint_for(exit, &message));
        let (red, yellow, reset) = if stderr_colour() {
            ("\x1b[1;31m", "\x1b[1;33m", "\x1b[0m")
        } else {
            ("", "", "")
        };
        let mut text = format!("{red}error:{reset} {message}");
        for c in &causes {
            text.push_str(&format!("\n  caused by: {c}"));
        }
        if let Some(h) = &hint {
            text.push_str(&format!("\n{yellow}hint:{reset} {h}"));
        }
        let bar = current_bar();
        match bar {
            Some(b) => b.suspend(|| eprintln!("{text}")),
            None => eprintln!("{text}"),
        }
        if self.json {
            self.json_line(&serde_json::json!({
                "error": {"message": message, "causes": causes, "hint": hint},
                "exit": exit.code(),
            }));
        }
    }
}

/// The bar on screen, if any: notes, problems and log lines are printed above it, never through it.
/// One per process, since there is one terminal.
static BAR: Mutex<Option<indicatif::ProgressBar>> = Mutex::new(None);

fn current_bar() -> Option<indicatif::ProgressBar> {
    BAR.lock().expect("progress bar slot poisoned").clone()
}

/// Where log lines go: stderr, above the bar when one is drawn. `tracing` writes an event through
/// one of these; it is written out whole when dropped, so a line is never split by a redraw.
pub struct LogLine(Vec<u8>);

impl Write for LogLine {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Drop for LogLine {
    fn drop(&mut self) {
        let out = || {
            let _ = std::io::stderr().lock().write_all(&self.0);
        };
        match current_bar() {
            Some(b) => b.suspend(out),
            None => out(),
        }
    }
}

/// A new log line (the `tracing` subscriber's writer).
pub fn log_line() -> LogLine {
    LogLine(Vec::with_capacity(256))
}

/// `value` with `"version"` first (objects only; anything else as it is).
fn with_version(value: &serde_json::Value) -> serde_json::Value {
    let serde_json::Value::Object(m) = value else {
        return value.clone();
    };
    if m.contains_key("version") {
        return value.clone();
    }
    let mut out = serde_json::Map::with_capacity(m.len() + 1);
    out.insert("version".into(), env!("CARGO_PKG_VERSION").into());
    out.extend(m.iter().map(|(k, v)| (k.clone(), v.clone())));
    serde_json::Value::Object(out)
}

/// Whether stderr gets colour: a terminal that shows it, and no `NO_COLOR`
/// (<https://no-color.org>).
pub fn stderr_colour() -> bool {
    crate::platform::colour(std::io::stderr().is_terminal())
}

/// The next step for an error of class `exit`, unless its message already says what to run.
fn hint_for(exit: Exit, message: &str) -> Option<String> {
    if message.contains("`notebridge ") {
        return None;
    }
    match exit {
        Exit::SignIn => Some("sign in with `notebridge login --account NAME`".into()),
        // `migrate` and `sync` name their own `--resume`; any other command is run again.
        Exit::WorkRemaining => Some("nothing was lost: run the same command again to go on".into()),
        Exit::Busy => Some("wait for the other run to finish (`notebridge status` shows it)".into()),
        Exit::Usage => Some("`notebridge help COMMAND` lists what each command takes; `notebridge doctor` checks the set-up".into()),
        Exit::SomeFailed => Some("`notebridge status` lists the failures; `migrate --resume --retry-failed` tries them again".into()),
        Exit::Unexpected => Some("run again with -v; `--trace FILE` records what the services answered".into()),
        Exit::Done => None,
    }
}
