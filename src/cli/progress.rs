//! Live progress: an indicatif bar in a terminal, a concise log line every few seconds without one
//! (cron), nothing with `--quiet`.

use std::sync::Arc;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use super::output::Printer;

/// What a progress display shows at one moment.
#[derive(Clone, Debug, Default)]
pub struct Frame {
    /// Units done (pages, items).
    pub done: u64,
    /// Units in all, when known.
    pub total: Option<u64>,
    /// The rest of the line (requests, lane use, the reason for a wait).
    pub message: String,
    /// What the run is doing ("running", or why it waits): without a terminal a change of it is
    /// logged at once, not only every few seconds.
    pub state: String,
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
            bar.set_style(
                ProgressStyle::with_template(
                    "{spinner} {prefix} [{elapsed_precise}] {bar:30} {pos}/{len} {wide_msg}",
                )
                .expect("progress template parses"),
            );
            bar.set_prefix(label);
            printer.set_bar(Some(bar.clone()));
            let b = bar.clone();
            let task = tokio::spawn(async move {
                loop {
                    let f = frame();
                    if let Some(t) = f.total {
                        b.set_length(t);
                    }
                    b.set_position(f.done);
                    b.set_message(f.message);
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
                    if f.state == last_state && last_line.elapsed() < log_every {
                        continue;
                    }
                    let total = f.total.map(|t| format!("/{t}")).unwrap_or_default();
                    eprintln!(
                        "{label}: {}{total} after {}s; {}",
                        f.done,
                        started.elapsed().as_secs(),
                        f.message
                    );
                    last_line = tokio::time::Instant::now();
                    last_state = f.state;
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
