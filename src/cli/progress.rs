//! Live progress: an indicatif bar in a terminal, a concise log line every few seconds without one
//! (cron), nothing with `--quiet`.

use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use super::output::Printer;
use crate::engine::{Changes, Event, Observer, Progress};

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

/// Where a display's frames come from.
pub trait Frames: Send + 'static {
    /// The frame now.
    fn frame(&mut self) -> BoxFuture<'_, Frame>;
    /// Resolves when what the frames show may have changed since the last one was read.
    fn changed(&mut self) -> BoxFuture<'_, ()>;
}

/// Frames made from counters in memory, cheap enough to read on every tick: `changed` is the
/// tick.
struct Polled {
    frame: Arc<dyn Fn() -> Frame + Send + Sync>,
    every: Duration,
}

impl Frames for Polled {
    fn frame(&mut self) -> BoxFuture<'_, Frame> {
        Box::pin(std::future::ready((self.frame)()))
    }

    fn changed(&mut self) -> BoxFuture<'_, ()> {
        Box::pin(tokio::time::sleep(self.every))
    }
}

/// A terminal's line is drawn again at most this often, however many changes come.
const REDRAW: Duration = Duration::from_millis(200);

/// A running progress display; dropping or [`Ticker::finish`] stops it.
pub struct Ticker {
    task: Option<tokio::task::JoinHandle<()>>,
    bar: Option<ProgressBar>,
    printer: Printer,
}

impl Ticker {
    /// Starts showing `frame()` every tick: a bar when `printer.progress`, otherwise a log line every
    /// `log_every` on stderr (unless quiet), otherwise nothing. For frames read from counters in
    /// memory; [`Ticker::follow`] reads them only when they change.
    pub fn start(
        printer: &Printer,
        label: &'static str,
        log_every: Duration,
        frame: Arc<dyn Fn() -> Frame + Send + Sync>,
    ) -> Ticker {
        let every = if printer.progress {
            Duration::ZERO
        } else {
            Duration::from_secs(1)
        };
        Self::follow(printer, label, log_every, Polled { frame, every })
    }

    /// Starts showing `frames`, reading one each time they change: a bar when
    /// `printer.progress` (at most every [`REDRAW`]), otherwise a log line at each change of what
    /// the run waits for and every `log_every` on stderr (unless quiet), otherwise nothing.
    pub fn follow(
        printer: &Printer,
        label: &'static str,
        log_every: Duration,
        mut frames: impl Frames,
    ) -> Ticker {
        if printer.progress {
            let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
            // The line is fitted to the width by `Frame::fit` (by importance), not cut at its end.
            bar.set_style(
                ProgressStyle::with_template("{spinner} {msg}").expect("progress template parses"),
            );
            // The spinner turns on its own: a long wait with nothing new still looks alive.
            bar.enable_steady_tick(REDRAW);
            printer.set_bar(Some(bar.clone()));
            let b = bar.clone();
            let task = tokio::spawn(async move {
                let started = tokio::time::Instant::now();
                let mut logged = started;
                loop {
                    let f = frames.frame().await;
                    // `-v`: what the run is doing, at most once a minute, above the bar (the bar
                    // itself may have dropped the details to fit).
                    if logged.elapsed() >= Duration::from_secs(60) {
                        tracing::info!("{}", f.log_line(label, started.elapsed()));
                        logged = tokio::time::Instant::now();
                    }
                    b.set_message(f.fit(label, terminal_width().saturating_sub(3)));
                    tokio::time::sleep(REDRAW).await;
                    frames.changed().await;
                }
            });
            Ticker {
                task: Some(task),
                bar: Some(bar),
                printer: printer.clone(),
            }
        } else if !printer.quiet {
            let task = tokio::spawn(async move {
                log_lines(&mut frames, label, log_every, |line| eprintln!("{line}")).await
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

/// The display without a terminal: a line as soon as what the run waits for changes, and one
/// every `log_every` otherwise; frames are read only at a change or when a line is due.
async fn log_lines(
    frames: &mut impl Frames,
    label: &str,
    log_every: Duration,
    mut out: impl FnMut(String),
) {
    let started = tokio::time::Instant::now();
    let mut last_line = started;
    let mut last_state = String::new();
    loop {
        tokio::select! {
            _ = frames.changed() => {}
            _ = tokio::time::sleep_until(last_line + log_every) => {}
        }
        let f = frames.frame().await;
        if f.state() == last_state && last_line.elapsed() < log_every {
            continue;
        }
        out(f.log_line(label, started.elapsed()));
        last_line = tokio::time::Instant::now();
        last_state = f.state().to_owned();
    }
}

/// The progress display of a migration: pages, requests, the reason for a wait, and the ETA the
/// budget model gives for what is left; read when the run tells of a change.
pub fn migration(printer: &Printer, progress: Progress) -> Ticker {
    let changes = progress.changes();
    Ticker::follow(
        printer,
        "migrate",
        Duration::from_secs(15),
        Migration {
            progress,
            changes,
            names: None,
        },
    )
}

/// A migration's frames.
struct Migration {
    progress: Progress,
    changes: Changes,
    /// Read with the first frame.
    names: Option<Arc<AccountNames>>,
}

impl Frames for Migration {
    fn frame(&mut self) -> BoxFuture<'_, Frame> {
        Box::pin(async move {
            let names = match &self.names {
                Some(n) => n.clone(),
                None => {
                    let n = Arc::new(self.progress.db().call(AccountNames::load).await);
                    self.names.insert(n).clone()
                }
            };
            let s = self.progress.snapshot().await;
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
        })
    }

    fn changed(&mut self) -> BoxFuture<'_, ()> {
        Box::pin(self.changes.next())
    }
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

    /// Why this process's Graph requests wait now, if they do (from memory, not the database).
    pub fn current_wait(&self, limiter: &crate::limiter::Limiter) -> Option<String> {
        limiter.waits().first().map(|w| self.label(&w.message))
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

    /// Frames whose wait changes when told, counting how often they are read.
    struct Told {
        waiting: tokio::sync::watch::Receiver<Option<String>>,
        reads: Arc<std::sync::atomic::AtomicUsize>,
    }

    impl Frames for Told {
        fn frame(&mut self) -> BoxFuture<'_, Frame> {
            self.reads.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let waiting = self.waiting.borrow_and_update().clone();
            Box::pin(std::future::ready(Frame {
                unit: "pages",
                waiting,
                ..Frame::default()
            }))
        }

        fn changed(&mut self) -> BoxFuture<'_, ()> {
            Box::pin(async move {
                if self.waiting.changed().await.is_err() {
                    std::future::pending::<()>().await;
                }
            })
        }
    }

    #[tokio::test(start_paused = true)]
    async fn without_a_terminal_a_change_is_logged_at_once_and_nothing_is_read_between() {
        let (tell, waiting) = tokio::sync::watch::channel(None);
        let reads = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let lines = Arc::new(std::sync::Mutex::new(Vec::new()));
        let start = tokio::time::Instant::now();
        let task = {
            let (reads, lines) = (reads.clone(), lines.clone());
            tokio::spawn(async move {
                let mut frames = Told { waiting, reads };
                log_lines(&mut frames, "migrate", Duration::from_secs(15), |l| {
                    lines.lock().unwrap().push((start.elapsed(), l))
                })
                .await
            })
        };
        tokio::time::sleep(Duration::from_millis(3_500)).await;
        tell.send_replace(Some("network unreachable since 14:03 (Notion)".into()));
        tokio::time::sleep(Duration::from_secs(60)).await;
        task.abort();
        let lines = lines.lock().unwrap();
        // The change, the moment it came (not on a second's grid), then a line every 15 s.
        assert_eq!(lines[0].0, Duration::from_millis(3_500));
        assert!(
            lines[0].1.contains("waiting: network unreachable"),
            "{lines:?}"
        );
        let at: Vec<u64> = lines.iter().map(|(t, _)| t.as_millis() as u64).collect();
        assert_eq!(at, [3_500, 18_500, 33_500, 48_500]);
        // Read once per line: no poll in between (a one-second poll would have read 63 times).
        assert_eq!(reads.load(std::sync::atomic::Ordering::SeqCst), lines.len());
    }

    #[test]
    fn without_a_terminal_one_line_holds_every_part() {
        let line = throttled().log_line("migrate", Duration::from_secs(95));
        insta::assert_snapshot!("progress_log_line", line);
        assert!(!line.contains('\n'));
    }
}
