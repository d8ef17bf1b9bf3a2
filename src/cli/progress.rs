//! Live progress: an indicatif bar in a terminal, a concise log line every few seconds without one
//! (cron), nothing with `--quiet`.

use std::sync::Arc;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use super::output::Printer;
use crate::engine::{Event, Observer, Progress};

/// What a progress display shows at one moment, by importance: how far, when done, what it waits
/// for, then the details. A line too wide for the terminal loses details first, never the count.
#[derive(Clone, Debug, Default)]
pub struct Frame {
    /// Units done (pages, sections).
    pub done: u64,
    /// Units in all, when known.
    pub total: Option<u64>,
    /// What the units are ("pages").
    pub unit: &'static str,
    /// The estimated time left, when it can be told.
    pub eta: Option<String>,
    /// Why the run waits right now (a throttle, the network), if it does.
    pub waiting: Option<String>,
    /// The rest (requests, files), most useful first.
    pub details: Vec<String>,
}

impl Frame {
    /// What the run is doing ("running", or why it waits): without a terminal a change of it is
    /// logged at once, not only every few seconds.
    fn state(&self) -> &str {
        self.waiting.as_deref().unwrap_or("running")
    }

    /// The parts of the line in order of importance.
    fn parts(&self) -> Vec<String> {
        let total = self.total.map(|t| format!("/{t}")).unwrap_or_default();
        let mut parts = vec![format!("{}{total} {}", self.done, self.unit)];
        if let Some(e) = &self.eta {
            parts.push(format!("ETA {e}"));
        }
        if let Some(w) = &self.waiting {
            parts.push(format!("waiting: {w}"));
        }
        parts.extend(self.details.iter().cloned());
        parts
    }

    /// The line for a terminal `width` columns wide: details dropped from the end until it fits,
    /// then the wait's reason shortened; the count is always there.
    pub fn fit(&self, label: &str, width: usize) -> String {
        let mut parts = self.parts();
        let join = |p: &[String]| format!("{label} {}", p.join(" · "));
        let keep = 1 + usize::from(self.eta.is_some()) + usize::from(self.waiting.is_some());
        while parts.len() > keep && join(&parts).chars().count() > width {
            parts.pop();
        }
        let line = join(&parts);
        if line.chars().count() <= width {
            return line;
        }
        let mut cut: String = line.chars().take(width.saturating_sub(1)).collect();
        cut.push('…');
        cut
    }

    /// The line without a terminal (cron, a log file): every part, one short line.
    pub fn log_line(&self, label: &str, elapsed: Duration) -> String {
        let mut parts = self.parts();
        parts[0] = format!("{} after {}s", parts[0], elapsed.as_secs());
        format!("{label}: {}", parts.join("; "))
    }
}

/// The width of the terminal on stderr (80 when it cannot be told).
fn terminal_width() -> usize {
    console::Term::stderr()
        .size_checked()
        .map_or(80, |(_, w)| usize::from(w))
}

/// A running progress display; dropping or [`Ticker::finish`] stops it.
pub struct Ticker {
    task: Option<tokio::task::JoinHandle<()>>,
    bar: Option<ProgressBar>,
    printer: Printer,
}

impl Ticker {
    /// Starts showing `frame()` every tick: a bar when `printer.progress`, otherwise a log line every
    /// `log_every` on stderr (unless quiet), otherwise nothing.
    pub fn start(
        printer: &Printer,
        label: &'static str,
        log_every: Duration,
        frame: Arc<dyn Fn() -> Frame + Send + Sync>,
    ) -> Ticker {
        if printer.progress {
            let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
            // The line is fitted to the width by `Frame::fit` (by importance), not cut at its end.
            bar.set_style(
                ProgressStyle::with_template("{spinner} {msg}").expect("progress template parses"),
            );
            printer.set_bar(Some(bar.clone()));
            let b = bar.clone();
            let task = tokio::spawn(async move {
                let started = tokio::time::Instant::now();
                let mut logged = started;
                loop {
                    let f = frame();
                    // `-v`: what the run is doing, once a minute, above the bar (the bar itself
                    // may have dropped the details to fit).
                    if logged.elapsed() >= Duration::from_secs(60) {
                        tracing::info!("{}", f.log_line(label, started.elapsed()));
                        logged = tokio::time::Instant::now();
                    }
                    b.set_message(f.fit(label, terminal_width().saturating_sub(3)));
                    b.tick();
                    tokio::time::sleep(Duration::from_millis(200)).await;
                }
            });
            Ticker {
                task: Some(task),
                bar: Some(bar),
                printer: printer.clone(),
            }
        } else if !printer.quiet {
            let task = tokio::spawn(async move {
                let started = tokio::time::Instant::now();
                let mut last_line = started;
                let mut last_state = String::new();
                loop {
                    tokio::time::sleep(Duration::from_secs(1)).await;
                    let f = frame();
                    if f.state() == last_state && last_line.elapsed() < log_every {
                        continue;
                    }
                    eprintln!("{}", f.log_line(label, started.elapsed()));
                    last_line = tokio::time::Instant::now();
                    last_state = f.state().to_owned();
                }
            });
            Ticker {
                task: Some(task),
                bar: None,
                printer: printer.clone(),
            }
        } else {
            Ticker {
                task: None,
                bar: None,
                printer: printer.clone(),
            }
        }
    }

    /// Stops the display and clears the bar.
    pub fn finish(mut self) {
        self.stop();
    }

    fn stop(&mut self) {
        if let Some(t) = self.task.take() {
            t.abort();
        }
        if let Some(b) = self.bar.take() {
            self.printer.set_bar(None);
            b.finish_and_clear();
        }
    }
}

impl Drop for Ticker {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The progress display of a migration: pages, requests, the reason for a wait, and the ETA the
/// budget model gives for what is left.
pub fn migration(printer: &Printer, progress: Progress) -> Ticker {
    let names = AccountNames::load(progress.db());
    Ticker::start(
        printer,
        "migrate",
        Duration::from_secs(15),
        Arc::new(move || {
            let s = progress.snapshot();
            let mut details = vec![
                format!("{} files", s.files),
                format!(
                    "Graph {} req, {} throttled",
                    s.graph.requests, s.graph.throttled
                ),
                match &s.notion_pace {
                    Some(p) => format!("Notion {} req ({})", s.notion.requests, p.short()),
                    None => format!("Notion {} req", s.notion.requests),
                },
            ];
            if s.pages_from_files + s.pages_fell_back > 0 {
                // Which way the pages went: from section files (drive requests apart), or the
                // OneNote API for sections that fell back.
                details.insert(
                    1,
                    format!(
                        "{} pages from section files ({} drive req, {:.1} MB), {} via the API",
                        s.pages_from_files,
                        s.drive.requests + s.drive.downloads,
                        s.drive.bytes as f64 / 1e6,
                        s.pages_fell_back
                    ),
                );
            }
            Frame {
                done: s.done.max(0) as u64,
                total: Some(s.total.max(0) as u64),
                unit: "pages",
                eta: s.eta_seconds.map(human_secs),
                waiting: s
                    .network_wait
                    .or_else(|| s.limiter_wait.map(|w| names.label(&w))),
                details,
            }
        }),
    )
}

/// A time left as a person reads it at a glance: `1h05m`, `4m10s`, `40s`.
fn human_secs(s: u64) -> String {
    if s >= 3600 {
        format!("{}h{:02}m", s / 3600, (s % 3600) / 60)
    } else if s >= 60 {
        format!("{}m{:02}s", s / 60, s % 60)
    } else {
        format!("{s}s")
    }
}

/// Shows planning's notes and problems on stderr (for `scan`, which plans nothing).
pub struct Notes<'a>(pub &'a Printer);

impl Observer for Notes<'_> {
    fn event(&self, event: Event) {
        match event {
            Event::Problem(_) => self.0.problem(event.to_string()),
            Event::Plan(_) | Event::Draining(_) => {}
            Event::Scanning { .. }
            | Event::Note(_)
            | Event::NoTeams { .. }
            | Event::SitesNeedPermission { .. }
            | Event::EarlierTarget { .. }
            | Event::SourcePageElsewhere { .. }
            | Event::Planned { .. }
            | Event::RetriedFailed(_) => self.0.note(event.to_string()),
        }
    }
}

/// Graph user ids -> account names, so waits read "alice's 400/1h window is full".
pub struct AccountNames(Vec<(String, String)>);

impl AccountNames {
    /// The accounts in `db`.
    pub fn load(db: &crate::store::Db) -> Self {
        Self(
            db.accounts()
                .unwrap_or_default()
                .into_iter()
                .map(|a| (a.user_id, a.name))
                .collect(),
        )
    }

    /// `text` with every known user id replaced by its account name.
    pub fn label(&self, text: &str) -> String {
        self.0.iter().fold(text.to_owned(), |t, (id, name)| {
            t.replace(id.as_str(), name)
        })
    }

    /// Why this process's Graph requests wait now, if they do.
    pub fn current_wait(&self, limiter: &crate::limiter::Limiter) -> Option<String> {
        let snapshot = limiter.snapshot().ok()?;
        snapshot.waits.first().map(|w| self.label(&w.message))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn throttled() -> Frame {
        Frame {
            done: 412,
            total: Some(1300),
            unit: "pages",
            eta: Some("5h 40m".into()),
            waiting: Some("alice throttled by Graph (User scope), 38s more".into()),
            details: vec![
                "1,104 files".into(),
                "Graph 1,562 req, 3 throttled".into(),
                "Notion 2,210 req".into(),
            ],
        }
    }

    #[test]
    fn the_line_fits_80_and_120_columns_by_importance() {
        let f = throttled();
        let at80 = f.fit("migrate", 80);
        let at120 = f.fit("migrate", 120);
        assert!(at80.chars().count() <= 80 && at120.chars().count() <= 120);
        insta::assert_snapshot!("progress_80", at80);
        insta::assert_snapshot!("progress_120", at120);
        // far too narrow: the count stays, the rest is cut visibly
        let at30 = f.fit("migrate", 30);
        assert!(at30.starts_with("migrate 412/1300 pages"), "{at30}");
        assert!(at30.chars().count() <= 30);
    }

    #[test]
    fn without_a_terminal_one_line_holds_every_part() {
        let line = throttled().log_line("migrate", Duration::from_secs(95));
        insta::assert_snapshot!("progress_log_line", line);
        assert!(!line.contains('\n'));
    }
}
