//! Whether the services answer at all. A request that cannot even reach Graph, Notion or the sign-in
//! service (connection refused, DNS failure, connect timeout) says nothing about the item it was for:
//! the run waits for the network instead of failing the item, for as long as the run may run, and
//! every client of the run shares one record of since when it waits (progress lines and `status`).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::clock::{Clock, Jitter, UnixMillis};

/// First wait after a service could not be reached.
const FIRST_WAIT: Duration = Duration::from_millis(250);
/// Longest wait between two attempts: an outage's end is noticed within this.
const MAX_WAIT: Duration = Duration::from_secs(5);

/// A service a run talks to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Service {
    /// Microsoft Graph.
    Graph,
    /// The Notion API.
    Notion,
    /// The Microsoft identity platform (token refreshes, device-code polls).
    SignIn,
}

impl Service {
    /// The name shown to people.
    pub fn name(self) -> &'static str {
        match self {
            Service::Graph => "Microsoft Graph",
            Service::Notion => "Notion",
            Service::SignIn => "the Microsoft sign-in service",
        }
    }
}

/// The wait for a service would pass the run's deadline: the run parks its work and stops.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{} could not be reached since {} and the run's time is up", .service.name(), hh_mm(*.since))]
pub struct Unreachable {
    /// Which service.
    pub service: Service,
    /// Since when (unix ms).
    pub since: UnixMillis,
}

impl crate::failure::Classify for Unreachable {
    /// Nothing failed: the run parks its work and a later run goes on (exit 75).
    fn class(&self) -> crate::failure::Class {
        crate::failure::Class::stop_run()
    }
}

/// Shared by every client of a run (cheap to clone).
#[derive(Clone, Debug)]
pub struct Reachability {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    clock: Clock,
    deadline: Mutex<Option<UnixMillis>>,
    down: Mutex<BTreeMap<Service, UnixMillis>>,
    /// Since when some service is unreachable, told to whoever watches it when it changes.
    since: tokio::sync::watch::Sender<Option<UnixMillis>>,
}

impl Inner {
    /// Tells the watchers what `down` says now, when that changed.
    fn changed(&self, down: &BTreeMap<Service, UnixMillis>) {
        let since = down.values().min().copied();
        self.since
            .send_if_modified(|s| std::mem::replace(s, since) != since);
    }
}

impl Reachability {
    /// Everything reachable, no deadline.
    pub fn new(clock: Clock) -> Self {
        Self {
            inner: Arc::new(Inner {
                clock,
                deadline: Mutex::new(None),
                down: Mutex::new(BTreeMap::new()),
                since: tokio::sync::watch::Sender::new(None),
            }),
        }
    }

    /// Waits for the network end at `deadline` (unix ms; `None`: wait as long as it takes).
    pub fn set_deadline(&self, deadline: Option<UnixMillis>) {
        *self.inner.deadline.lock().expect("deadline poisoned") = deadline;
    }

    /// The run's deadline, if any.
    pub fn deadline(&self) -> Option<UnixMillis> {
        *self.inner.deadline.lock().expect("deadline poisoned")
    }

    /// Since when some service has been unreachable (the earliest), if one is.
    pub fn since(&self) -> Option<UnixMillis> {
        self.inner
            .down
            .lock()
            .expect("reachability poisoned")
            .values()
            .min()
            .copied()
    }

    /// Since when some service is unreachable, as it changes (for `status` and progress lines:
    /// woken by the change, never polled).
    pub fn watch(&self) -> tokio::sync::watch::Receiver<Option<UnixMillis>> {
        self.inner.since.subscribe()
    }

    /// The line shown while waiting: "network unreachable since 14:03 (Notion)".
    pub fn waiting(&self) -> Option<String> {
        let down = self.inner.down.lock().expect("reachability poisoned");
        let since = *down.values().min()?;
        let names: Vec<&str> = down.keys().map(|s| s.name()).collect();
        Some(format!(
            "network unreachable since {} ({})",
            hh_mm(since),
            names.join(", ")
        ))
    }

    /// `service` answered (with anything at all): it is reachable again.
    pub fn answered(&self, service: Service) {
        let mut down = self.inner.down.lock().expect("reachability poisoned");
        if down.remove(&service).is_some() {
            tracing::info!(service = service.name(), "reachable again");
            self.inner.changed(&down);
        }
    }

    /// Records that `service` could not be reached on attempt `attempt` (1, 2, ...) and waits before
    /// the next one (jittered, growing to [`MAX_WAIT`]); [`Unreachable`] instead when the wait would
    /// pass the deadline.
    pub async fn wait(
        &self,
        service: Service,
        attempt: u32,
        jitter: &Jitter,
    ) -> Result<(), Unreachable> {
        let now = self.inner.clock.now_ms();
        let since = {
            let mut down = self.inner.down.lock().expect("reachability poisoned");
            let since = *down.entry(service).or_insert(now);
            self.inner.changed(&down);
            if since == now && attempt <= 1 {
                tracing::warn!(
                    service = service.name(),
                    "cannot reach the service; waiting for the network"
                );
            }
            since
        };
        let wait = backoff(attempt, jitter);
        if let Some(d) = self.deadline() {
            if now + wait.as_millis() as i64 >= d {
                return Err(Unreachable { service, since });
            }
        }
        self.inner.clock.sleep(wait).await;
        Ok(())
    }
}

/// The wait before attempt `attempt + 1` at an unreachable service.
pub fn backoff(attempt: u32, jitter: &Jitter) -> Duration {
    let exp = FIRST_WAIT * 2u32.pow(attempt.saturating_sub(1).min(8));
    jitter.spread(exp.min(MAX_WAIT), 0.25)
}

/// Local `HH:MM` of a unix-ms time (what people read on a progress line).
pub fn hh_mm(t: UnixMillis) -> String {
    chrono::DateTime::from_timestamp_millis(t)
        .map(|d| d.with_timezone(&chrono::Local).format("%H:%M").to_string())
        .unwrap_or_else(|| "?".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn waits_grow_and_stop_at_the_deadline() {
        let clock = Clock::anchored_at(1_000_000);
        let r = Reachability::new(clock.clone());
        let j = Jitter::seeded(1);
        assert_eq!(r.since(), None);
        r.wait(Service::Notion, 1, &j).await.unwrap();
        assert_eq!(r.since(), Some(1_000_000));
        assert!(r.waiting().unwrap().contains("Notion"));
        r.set_deadline(Some(clock.now_ms() + 3_000));
        // Whichever attempt's wait would pass the deadline is refused before it sleeps.
        let mut n = 2;
        let err = loop {
            match r.wait(Service::Notion, n, &j).await {
                Ok(()) => n += 1,
                Err(e) => break e,
            }
        };
        assert!(clock.now_ms() < 1_000_000 + 3_000 + 1_000);
        assert_eq!(
            err,
            Unreachable {
                service: Service::Notion,
                since: 1_000_000
            }
        );
        r.answered(Service::Notion);
        assert_eq!(r.since(), None);
    }

    #[tokio::test(start_paused = true)]
    async fn watchers_are_told_each_change_of_since_when_and_only_those() {
        let clock = Clock::anchored_at(1_000_000);
        let r = Reachability::new(clock.clone());
        let mut w = r.watch();
        let j = Jitter::seeded(1);
        r.wait(Service::Notion, 1, &j).await.unwrap();
        assert!(w.has_changed().unwrap());
        assert_eq!(*w.borrow_and_update(), Some(1_000_000));
        // Another attempt, another service down later: the earliest time stays, no news.
        r.wait(Service::Notion, 2, &j).await.unwrap();
        r.wait(Service::Graph, 1, &j).await.unwrap();
        assert!(!w.has_changed().unwrap());
        r.answered(Service::Notion);
        assert!(w.has_changed().unwrap());
        assert!(w.borrow_and_update().unwrap() > 1_000_000, "Graph's, later");
        r.answered(Service::Graph);
        assert_eq!(*w.borrow_and_update(), None);
    }

    #[test]
    fn backoff_is_capped() {
        let j = Jitter::seeded(2);
        assert!(backoff(1, &j) <= Duration::from_millis(313));
        assert!(backoff(30, &j) <= MAX_WAIT.mul_f64(1.25));
    }
}
