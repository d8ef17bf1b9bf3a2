//! A page's content fetched from Graph (with its ink) and converted, a big body only at its turn
//! and under the big-page permit; and the writer's fetcher of a page's files.

use std::collections::HashMap;
use std::sync::Arc;

use bytes::Bytes;

use crate::convert::{convert_page_owned, ConvertOptions, ConvertedPage, Ink, MAX_PAGE_BYTES};
use crate::graph::sources::root_of_key;
use crate::graph::{Caller, GraphError};
use crate::ink::{self, split_multipart, PageDrawings};
use crate::notion::writer::{Fetch, Resource};
use crate::store::imports::is_files_key;

use super::big_page::{self, BigPermit};
use super::conversion::isolated;
use super::prefetch::Prefetched;
use super::{drive_pages, JobError, Migration, Turn};

impl Migration {
    /// Fetches a page's content with its ink and converts it; returns the page and the rendered
    /// drawings' SVG by their `ink:` URL. Ink that cannot be read is in the page's report (the
    /// page still migrates); an answer that cannot even be split is fetched again without ink.
    /// `key` is the page's inventory key: a group's or site's page is read from its OneNote root.
    /// A big page comes with the big-page permit, taken after its turn (`turn`: the page's job when
    /// its Notion page is still to be created), see [`big_page`].
    pub(super) async fn fetch_page(
        &self,
        who: &Caller,
        turn: Option<&Turn>,
        key: &str,
        item_id: &str,
        item: &str,
        last_modified: Option<String>,
    ) -> Result<(ConvertedPage, HashMap<String, Bytes>, Option<BigPermit>), JobError> {
        if is_files_key(key) {
            let page = self
                .sections
                .convert(&self.db, key, item_id, item, &self.stats.sections_opened)
                .await?;
            return Ok((page, HashMap::new(), None));
        }
        if let Some(drive) = &self.drive {
            let read = drive
                .read(&self.db, who, key, item_id, item, &self.stats.from_drive)
                .await?;
            if let drive_pages::Read::Page(page) = read {
                return Ok((page, HashMap::new(), None));
            }
        }
        let mut permit = None;
        loop {
            if let Some(got) = self
                .fetch_page_once(who, turn, key, item_id, item, &last_modified, &mut permit)
                .await?
            {
                return Ok((got.0, got.1, permit));
            }
            // A big body that had to wait was dropped; it is fetched again with its turn and the
            // permit.
            tracing::info!(
                item,
                "big page: waiting for its turn and the big-page permit to fetch it again"
            );
            self.admit_later(turn, &mut permit).await?;
        }
    }

    /// Whether a body of `len` bytes may be converted now: a small one always, a big one when the
    /// page has its turn and the big-page permit is free at once (then held in `permit`).
    fn admit_now(&self, len: usize, turn: Option<&Turn>, permit: &mut Option<BigPermit>) -> bool {
        if permit.is_some() || !big_page::is_big(len) {
            return true;
        }
        let at_turn = match turn {
            None => true,
            Some(t) => t.is_now(),
        };
        *permit = at_turn.then(|| self.big.try_take()).flatten();
        permit.is_some()
    }

    /// Waits for the page's turn, then for the big-page permit (a stop ends the wait).
    async fn admit_later(
        &self,
        turn: Option<&Turn>,
        permit: &mut Option<BigPermit>,
    ) -> Result<(), JobError> {
        if let Some(t) = turn {
            t.wait().await?;
        }
        tokio::select! {
            p = self.big.take() => *permit = Some(p),
            _ = self.cancel.stopped() => return Err(JobError::Stop),
        }
        Ok(())
    }

    /// One fetch of the page's content, converted; `None` when the body is big and could not be
    /// converted now (dropped: the caller waits for the turn and the permit, then fetches again).
    #[allow(clippy::too_many_arguments)]
    async fn fetch_page_once(
        &self,
        who: &Caller,
        turn: Option<&Turn>,
        key: &str,
        item_id: &str,
        item: &str,
        last_modified: &Option<String>,
        permit: &mut Option<BigPermit>,
    ) -> Result<Option<(ConvertedPage, HashMap<String, Bytes>)>, JobError> {
        let last_modified = last_modified.clone();
        let path = format!("{}/pages/{item_id}/content", root_of_key(key));
        let with_ink = self
            .graph
            .get_with_type(
                who,
                &format!("{path}?includeInkML=true"),
                item,
                MAX_PAGE_BYTES,
            )
            .await;
        let (ctype, body) = match with_ink {
            Ok(a) => a,
            // `includeInkML` is undocumented: when the service errors on it, the page is fetched
            // without it and its ink reported as not carried over. Too large with its ink, the page
            // may still fit without it: the HTML is what must not be lost.
            Err(
                e @ (GraphError::Item { .. }
                | GraphError::GaveUp { .. }
                | GraphError::TooLarge { .. }),
            ) => {
                tracing::warn!(
                    item,
                    "page content with ink failed ({e}); fetching it without ink"
                );
                let html = self.page_html(who, &path, item).await?;
                if !self.admit_now(html.len(), turn, permit) {
                    return Ok(None);
                }
                let opts = ConvertOptions {
                    last_modified,
                    ink: Ink::Unreadable(format!(
                        "the page with its ink could not be fetched: {}",
                        e.reason()
                    )),
                };
                let page = isolated(item, "converting it", || convert_page_owned(html, &opts))?;
                return Ok(Some((page, HashMap::new())));
            }
            Err(e) => return Err(e.into()),
        };
        if !self.admit_now(body.len(), turn, permit) {
            return Ok(None);
        }
        let split = isolated(item, "reading its ink", || {
            split_multipart(&ctype, &body).map(|parts| {
                let d = ink::for_page(parts.inkml.as_deref());
                (parts.html, d)
            })
        })?;
        let (html, drawings) = match split {
            Ok(parts) => parts,
            Err(e) => {
                tracing::warn!(item, "page content with ink could not be split: {e}");
                let html = self.page_html(who, &path, item).await?;
                if !self.admit_now(html.len(), turn, permit) {
                    return Ok(None);
                }
                let d = PageDrawings {
                    ink: Ink::Unreadable(e.to_string()),
                    ..PageDrawings::default()
                };
                (html, d)
            }
        };
        drop(body);
        let opts = ConvertOptions {
            last_modified,
            ink: drawings.ink,
        };
        let mut page = isolated(item, "converting it", || convert_page_owned(html, &opts))?;
        for _ in 0..drawings.svgs.len() {
            page.report
                .add(ink::DRAWING_REPORTED.0, ink::DRAWING_REPORTED.1);
        }
        Ok(Some((page, drawings.svgs)))
    }

    /// The page's HTML without its ink; a page over [`MAX_PAGE_BYTES`] is refused as it arrives
    /// (from its Content-Length, or once that many bytes came), so it never holds more.
    async fn page_html(&self, who: &Caller, path: &str, item: &str) -> Result<String, JobError> {
        match self.graph.get_text(who, path, item, MAX_PAGE_BYTES).await {
            Ok(html) => Ok(html),
            Err(GraphError::TooLarge { size, .. }) => Err(oversized(item, size)),
            Err(e) => Err(e.into()),
        }
    }

    /// Downloads resources through the Graph limiter, in the background lane; rendered drawings
    /// (`ink:` URLs) come from `svgs` in memory.
    pub(super) fn fetcher(
        &self,
        who: Caller,
        svgs: HashMap<String, Bytes>,
        ahead: Prefetched,
    ) -> Fetch {
        let graph = self.graph.clone();
        // Nothing bigger than Notion takes is downloaded at all.
        let max = usize::try_from(self.max_upload).unwrap_or(usize::MAX);
        let svgs = Arc::new(svgs);
        Arc::new(move |res: Resource| {
            let graph = graph.clone();
            let who = who.clone();
            let svg = svgs.get(&res.url).cloned();
            let fetched = ahead.take(&res.url);
            // Drawings and files embedded in the page are served from memory, never fetched.
            let drawing = res.url.starts_with(ink::DRAWING_SCHEME)
                || res.url.starts_with(crate::convert::EMBEDDED_SCHEME);
            Box::pin(async move {
                let item = format!("file {:?}", res.file_name);
                if drawing {
                    return svg.ok_or_else(|| GraphError::BadAnswer {
                        account: who.account.clone(),
                        item,
                        problem: "the drawing was not rendered".into(),
                    });
                }
                match fetched {
                    Some(answer) => answer,
                    None => graph.get_bytes(&who, &res.url, &item, max).await,
                }
            })
        })
    }
}

/// A fetcher for pages without resources.
pub(super) fn no_fetch() -> Fetch {
    Arc::new(|res: Resource| {
        Box::pin(async move {
            Err(GraphError::BadAnswer {
                account: String::new(),
                item: format!("file {:?}", res.file_name),
                problem: "it has no source to fetch from".into(),
            })
        })
    })
}

/// A page body over [`MAX_PAGE_BYTES`] (`size` is its Content-Length, or what had arrived when it
/// was refused): failed for good with the reason (the run goes on, `--retry-failed` tries it again).
fn oversized(item: &str, size: u64) -> JobError {
    JobError::permanent(format!(
        "{item}: its content is {size} bytes or more, over the limit of {MAX_PAGE_BYTES} bytes for \
         one page; not migrated (split the page in OneNote)"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_over_the_limit_is_refused_for_good_with_the_sizes() {
        match oversized("page \"big\"", MAX_PAGE_BYTES as u64 + 1) {
            JobError::Permanent(why) => {
                assert!(why.contains(&(MAX_PAGE_BYTES + 1).to_string()), "{why}");
                assert!(why.contains(&MAX_PAGE_BYTES.to_string()), "{why}");
                assert!(why.contains("over the limit"), "{why}");
            }
            _ => panic!("refused for good"),
        }
    }
}
