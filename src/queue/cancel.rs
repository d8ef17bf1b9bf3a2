//! One stop for a run: a signal, a lost migration lock and the deadline all end in the same token,
//! and whatever waits for work listens to it instead of polling a flag.
//!
//! A token is a tree: a child stops with its parent, or alone. `migrate` makes the root (signals
//! and the lock's heartbeat stop it), and each run's deadline is a child that stops at its time.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};

use tokio::sync::Notify;

/// A stop request shared by everything of one run.
#[derive(Clone, Default)]
pub struct Cancel {
    inner: Arc<Inner>,
}

#[derive(Default)]
struct Inner {
    stopped: AtomicBool,
    woken: Notify,
    children: Mutex<Vec<Weak<Inner>>>,
}

impl Inner {
    fn stop(&self) {
        if self.stopped.swap(true, Ordering::SeqCst) {
            return;
        }
        self.woken.notify_waiters();
        let children = std::mem::take(&mut *self.children.lock().expect("cancel poisoned"));
        for c in children.iter().filter_map(Weak::upgrade) {
            c.stop();
        }
    }
}

impl Cancel {
    /// A token that nothing has stopped.
    pub fn new() -> Self {
        Self::default()
    }

    /// A token that stops with this one (or on its own).
    pub fn child(&self) -> Cancel {
        let child = Cancel::new();
        let mut children = self.inner.children.lock().expect("cancel poisoned");
        // Checked under the lock `stop` takes the children with: a parent stopping meanwhile
        // either sees this child or has already set its flag.
        if self.is_stopped() {
            child.stop();
        } else {
            children.retain(|c| c.strong_count() > 0);
            children.push(Arc::downgrade(&child.inner));
        }
        child
    }

    /// Stops this token and its children; waiters wake.
    pub fn stop(&self) {
        self.inner.stop();
    }

    /// Whether it was stopped.
    pub fn is_stopped(&self) -> bool {
        self.inner.stopped.load(Ordering::SeqCst)
    }

    /// Waits until it is stopped.
    pub async fn stopped(&self) {
        loop {
            let woken = self.inner.woken.notified();
            tokio::pin!(woken);
            woken.as_mut().enable();
            if self.is_stopped() {
                return;
            }
            woken.await;
        }
    }

    /// Stops this token after `after` (the run's deadline); the timer ends with the token.
    pub fn stop_after(&self, after: std::time::Duration) {
        let weak = Arc::downgrade(&self.inner);
        tokio::spawn(async move {
            tokio::time::sleep(after).await;
            if let Some(inner) = weak.upgrade() {
                inner.stop();
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test(start_paused = true)]
    async fn a_stop_reaches_children_and_wakes_waiters() {
        let root = Cancel::new();
        let child = root.child();
        let other = root.child();
        let waiter = tokio::spawn({
            let child = child.clone();
            async move { child.stopped().await }
        });
        tokio::task::yield_now().await;
        assert!(!waiter.is_finished());
        other.stop();
        assert!(
            !root.is_stopped() && !child.is_stopped(),
            "a child stops alone"
        );
        root.stop();
        waiter.await.unwrap();
        assert!(child.is_stopped());
        // A child made after the stop is born stopped.
        assert!(root.child().is_stopped());
    }

    #[tokio::test(start_paused = true)]
    async fn a_deadline_stops_its_token_at_its_time_and_not_before() {
        let root = Cancel::new();
        let run = root.child();
        run.stop_after(Duration::from_secs(50 * 60));
        tokio::time::sleep(Duration::from_secs(50 * 60 - 1)).await;
        assert!(!run.is_stopped());
        tokio::time::timeout(Duration::from_secs(2), run.stopped())
            .await
            .expect("stopped at the deadline");
        assert!(
            !root.is_stopped(),
            "the deadline is the run's, not the root's"
        );
    }
}
