//! At most one big page in memory per process (issue 20): converting a page holds its parsed HTML
//! and its blocks, about 17 bytes for each byte of HTML, so two 50 MB pages at once would pass a
//! gigabyte while one stays under it (856 MB for the whole process).
//!
//! A page whose body is over [`BIG_PAGE_BYTES`] is converted and written only under the one
//! [`BigPermit`], and only once it has its turn (its earlier siblings have their Notion pages). The
//! permit is taken after the turn, never before: pages are fetched ahead of their turn, so a later
//! sibling holding the permit while it waits for its turn would wait for an earlier big sibling
//! that waits for the permit. A big body that cannot be converted at once is dropped and fetched
//! again under the permit, so a waiting page holds nothing of it.

use std::sync::Arc;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// A page body over this many bytes is a big page: converted and written one at a time.
pub const BIG_PAGE_BYTES: usize = 4 * 1024 * 1024;

/// Whether a page body of `len` bytes is converted only under the [`BigPermit`].
pub fn is_big(len: usize) -> bool {
    len > BIG_PAGE_BYTES
}

/// The process's one permit to hold a big page, shared by every worker of a run.
#[derive(Clone, Debug)]
pub struct BigPages {
    permit: Arc<Semaphore>,
}

/// Held from a big page's conversion to the end of its write; dropping it lets the next big page in.
#[derive(Debug)]
pub struct BigPermit {
    _permit: OwnedSemaphorePermit,
}

impl Drop for BigPermit {
    fn drop(&mut self) {
        // glibc keeps freed memory in the arena of the thread that freed it, and the next big page
        // is most likely converted on another runtime thread: without handing the last one's
        // memory back, sequential big pages would add up in RSS as if they were held together.
        crate::platform::release_freed_memory();
    }
}

impl Default for BigPages {
    fn default() -> Self {
        Self {
            permit: Arc::new(Semaphore::new(1)),
        }
    }
}

impl BigPages {
    /// The permit if no other big page holds it now.
    pub fn try_take(&self) -> Option<BigPermit> {
        self.permit
            .clone()
            .try_acquire_owned()
            .ok()
            .map(|p| BigPermit { _permit: p })
    }

    /// The permit, once the big page holding it is written (or has failed).
    pub async fn take(&self) -> BigPermit {
        let p = self
            .permit
            .clone()
            .acquire_owned()
            .await
            .expect("the big-page semaphore is never closed");
        BigPermit { _permit: p }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn a_page_is_big_past_the_threshold_only() {
        assert!(!is_big(BIG_PAGE_BYTES));
        assert!(is_big(BIG_PAGE_BYTES + 1));
    }

    #[tokio::test(start_paused = true)]
    async fn a_second_big_page_waits_until_the_first_is_written() {
        let big = BigPages::default();
        let first = big.try_take().expect("free");
        assert!(big.try_take().is_none(), "one big page at a time");
        let other = big.clone();
        let second = tokio::spawn(async move { other.take().await });
        tokio::time::sleep(Duration::from_secs(60)).await;
        assert!(!second.is_finished(), "taken while the first is held");
        drop(first);
        let held = tokio::time::timeout(Duration::from_secs(1), second)
            .await
            .expect("handed over once the first is dropped")
            .unwrap();
        assert!(big.try_take().is_none());
        drop(held);
        assert!(big.try_take().is_some());
    }
}
