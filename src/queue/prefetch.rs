//! The files of a page fetched from Graph before the page's turn to be created in Notion, so a
//! section's Graph requests do not wait for its earlier siblings' Notion writes (issue 15 point 3).
//!
//! Bounded: a page holds ahead the files that fit in [`MAX_PREFETCH_BYTES`], plus at most the one
//! that passed it (a file is only known to be large once its request is spent, and the writer would
//! hold it whole for its upload anyway); the rest is fetched when the writer reaches it, as before. Each answer, an error included, is handed to the writer
//! once, so a prefetched file costs no second request and fails the same way it would have.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use bytes::Bytes;

use crate::graph::{Caller, GraphClient, GraphError};
use crate::notion::writer::{upload_name, Resource};

/// Bytes of one page's files held ahead of its turn; a file that would pass it is fetched later.
pub const MAX_PREFETCH_BYTES: usize = 8 * 1024 * 1024;

/// Answers fetched ahead, by URL, each taken once.
#[derive(Clone, Default)]
pub struct Prefetched {
    answers: Arc<Mutex<HashMap<String, Result<Bytes, GraphError>>>>,
}

impl Prefetched {
    /// The answer fetched ahead for `url`, if any (removed: a second use fetches again).
    pub fn take(&self, url: &str) -> Option<Result<Bytes, GraphError>> {
        self.answers.lock().expect("prefetch poisoned").remove(url)
    }

    /// How many answers are held.
    pub fn len(&self) -> usize {
        self.answers.lock().expect("prefetch poisoned").len()
    }

    /// Whether none is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn put(&self, url: &str, answer: Result<Bytes, GraphError>) {
        self.answers
            .lock()
            .expect("prefetch poisoned")
            .insert(url.to_owned(), answer);
    }
}

/// Whether the writer would download `res` from Graph at all: drawings and embedded files come
/// from memory, and a file type Notion refuses is never downloaded.
pub fn downloads(res: &Resource) -> bool {
    !res.url.starts_with(crate::ink::DRAWING_SCHEME)
        && !res.url.starts_with(crate::convert::EMBEDDED_SCHEME)
        && upload_name(res).is_some()
}

/// Fetches `resources` (in page order) through the limiter until [`MAX_PREFETCH_BYTES`] are held
/// or an answer says the rest would fail the same way (a deadline, sign-in, the network); files
/// larger than `max` bytes are refused by Graph's client as they would be later. `held` counts
/// the bytes held ahead across the run (for the run's figures).
pub async fn fetch_ahead(
    graph: &GraphClient,
    who: &Caller,
    resources: &[&Resource],
    max: usize,
    held: &AtomicU64,
) -> Prefetched {
    let out = Prefetched::default();
    let mut bytes = 0usize;
    for res in resources.iter().filter(|r| downloads(r)) {
        if bytes >= MAX_PREFETCH_BYTES {
            break;
        }
        let item = format!("file {:?}", res.file_name);
        let answer = graph.get_bytes(who, &res.url, &item, max).await;
        let go_on = match &answer {
            Ok(b) => {
                bytes += b.len();
                true
            }
            // This file's own failure: the next one may well come.
            Err(
                GraphError::Item { .. }
                | GraphError::TooLarge { .. }
                | GraphError::BadAnswer { .. }
                | GraphError::ForeignHost { .. },
            ) => true,
            // Anything else (a deadline, sign-in, the network, retries exhausted) would meet the
            // next file too: the writer meets it when it gets there.
            Err(_) => false,
        };
        if let Ok(b) = &answer {
            held.fetch_add(b.len() as u64, Ordering::Relaxed);
        }
        out.put(&res.url, answer);
        if !go_on {
            break;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn res(url: &str, name: &str) -> Resource {
        Resource {
            url: url.into(),
            file_name: name.into(),
            mime: None,
            fallback: None,
        }
    }

    #[test]
    fn only_what_the_writer_would_download_is_fetched_ahead() {
        assert!(downloads(&res("https://graph/x/$value", "a.png")));
        assert!(!downloads(&res(
            &format!("{}1", crate::ink::DRAWING_SCHEME),
            "d.svg"
        )));
        assert!(!downloads(&res(
            &format!("{}1", crate::convert::EMBEDDED_SCHEME),
            "e.png"
        )));
        // No type Notion takes, and no MIME type to give it one: never downloaded by the writer.
        assert!(!downloads(&res("https://graph/y/$value", "tool.exe")));
    }

    #[test]
    fn an_answer_is_handed_over_once() {
        let p = Prefetched::default();
        p.put("u", Ok(Bytes::from_static(b"abc")));
        assert_eq!(p.len(), 1);
        assert_eq!(p.take("u").unwrap().unwrap(), Bytes::from_static(b"abc"));
        assert!(p.take("u").is_none());
        assert!(p.is_empty());
    }
}
