//! A file's upload with its fallback: the full rendition, else its smaller one when the first
//! cannot be carried over for a reason of its own, else why not (a placeholder says it).

use super::names::{
    agree_with_bytes, describe_kind, fit_name, over_limit, over_refused, upload_name,
};
use super::{Resource, WriteStats, Writer, MAX_NAME_BYTES};
use crate::failure::{Class, Classify, Next, Scope};
use crate::graph::GraphError;
use crate::mime::{notion_accepts, OCTET_STREAM};
use crate::notion::client::{NotionClient, NotionError};
use crate::notion::upload::{self, UploadError};

impl Writer {
    /// Uploads a resource ([`Self::upload`]); when it cannot be carried over for a reason of its
    /// own (gone, forbidden, too big, a type Notion refuses) and it has a fallback rendition, that
    /// one is uploaded instead and recorded in `stats`. A failure that is not the file's (deadline,
    /// sign-in, outage, Notion failing) never reaches for the fallback: the page is tried again.
    pub(super) async fn upload_or_fallback(
        &self,
        c: &NotionClient,
        res: &Resource,
        stats: &mut WriteStats,
    ) -> Result<(String, u64), UploadFailure> {
        let why = match self.upload(c, res).await {
            Err(UploadFailure::CannotCarry(why)) => why,
            done => return done,
        };
        let Some(url) = res.fallback.clone() else {
            return Err(UploadFailure::CannotCarry(why));
        };
        let smaller = Resource {
            url,
            fallback: None,
            ..res.clone()
        };
        match self.upload(c, &smaller).await {
            Ok(done) => {
                tracing::info!(file = %res.file_name, "full resolution not carried over ({why}); \
                    the smaller rendition was");
                stats.smaller.push(format!("{}: {why}", res.file_name));
                Ok(done)
            }
            Err(UploadFailure::CannotCarry(also)) => Err(UploadFailure::CannotCarry(format!(
                "{why} (its smaller rendition too: {also})"
            ))),
            Err(other) => Err(other),
        }
    }

    /// Downloads one resource and uploads it to Notion exactly once ([`upload::upload_once`]);
    /// returns the upload id and size. Each write of a page makes its own uploads: one sent but never
    /// attached (a kill, a lost answer to an append) just expires.
    async fn upload(
        &self,
        c: &NotionClient,
        res: &Resource,
    ) -> Result<(String, u64), UploadFailure> {
        let Some(name) = upload_name(res) else {
            return Err(UploadFailure::CannotCarry(
                "Notion does not accept this file type".into(),
            ));
        };
        let bytes = (self.fetch)(res.clone()).await.map_err(|e| match e {
            // The download stops at the workspace's limit (the fetch is bounded by it).
            GraphError::TooLarge { size, max, .. } if max == self.max_upload => {
                UploadFailure::CannotCarry(over_limit(size, max))
            }
            e => UploadFailure::of_download(e),
        })?;
        let size = bytes.len() as u64;
        // The name's extension, the content type and the bytes must agree for Notion: an image
        // named `.png` that is a TIFF goes up as `.tif`, and the type follows the extension.
        let name = fit_name(&agree_with_bytes(&name, &bytes), MAX_NAME_BYTES);
        if !notion_accepts(&name) {
            return Err(UploadFailure::CannotCarry(format!(
                "it is {}, a file type Notion does not accept",
                describe_kind(&name)
            )));
        }
        if size > self.max_upload {
            return Err(UploadFailure::CannotCarry(over_limit(
                size,
                self.max_upload,
            )));
        }
        // A file at least as big as one Notion refused this token (this run or an earlier one)
        // would be refused too: it costs no create and no send.
        let refused = c.rate().refused_upload().await.map_err(NotionError::from)?;
        if let Some(r) = refused.filter(|r| r.covers(size)) {
            return Err(UploadFailure::CannotCarry(over_refused(size, &r)));
        }
        let mime = match crate::mime::for_name(&name) {
            OCTET_STREAM => res.mime.clone().unwrap_or_else(|| OCTET_STREAM.into()),
            m => m.to_owned(),
        };
        match upload::upload_once(c, &name, &mime, bytes).await {
            Ok(id) => Ok((id, size)),
            // Only a token told no limit learns one from a refusal: under a limit `users/me`
            // reported, a refused content is refused for another reason.
            Err(UploadError::ContentRefused(e)) if c.is_personal() => {
                if let NotionError::Rejected { message, .. } = &e {
                    c.rate()
                        .refused_upload_of(size, message)
                        .await
                        .map_err(NotionError::from)?;
                }
                Err(e.into())
            }
            Err(e) => Err(e.into_notion().into()),
        }
    }
}

/// Why a resource was not uploaded.
pub(super) enum UploadFailure {
    /// The file cannot be carried over (download failed, type or size refused): a placeholder.
    CannotCarry(String),
    /// Notion kept failing the upload until the item's retry budget was spent: a placeholder, and
    /// no fallback rendition (nothing is left to spend on it), so the page is not failed for it.
    Spent(String),
    /// Notion failed: the item fails and is retried later.
    Notion(NotionError),
    /// The download failed for a reason that is not the file's: the item fails.
    Fetch(GraphError),
}

impl UploadFailure {
    /// A download's failure: the file's own for good degrades it to a placeholder; any other fails
    /// the write.
    fn of_download(e: GraphError) -> Self {
        if the_files_own(e.class()) {
            UploadFailure::CannotCarry(format!("download failed: {}", e.reason()))
        } else {
            UploadFailure::Fetch(e)
        }
    }
}

/// Whether a failure concerns only the file it was for, for good: it becomes a placeholder.
fn the_files_own(class: Class) -> bool {
    matches!(
        (class.scope, class.next),
        (
            Scope::Attempt | Scope::Resource | Scope::Item,
            Next::Never | Next::Degrade
        )
    )
}

impl From<NotionError> for UploadFailure {
    fn from(e: NotionError) -> Self {
        // Notion refusing this file (type, size) is permanent for it; a refusal of every write, an
        // outage or a lost answer is not the file's.
        if the_files_own(e.class()) {
            UploadFailure::CannotCarry(e.to_string())
        } else if matches!(e.class().next, Next::Retry(_)) {
            // [`upload::upload_once`] retries whatever may be retried: this one spent the budget.
            UploadFailure::Spent(e.to_string())
        } else {
            UploadFailure::Notion(e)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_files_own_failure_for_good_leaves_a_placeholder() {
        let graph = |e: GraphError| match UploadFailure::of_download(e) {
            UploadFailure::CannotCarry(why) => Some(why),
            UploadFailure::Notion(_) | UploadFailure::Fetch(_) | UploadFailure::Spent(_) => None,
        };
        let a = || "a".to_owned();
        let gone = GraphError::Item {
            account: a(),
            item: a(),
            status: 404,
            code: crate::graph::ServiceCode::Other,
            message: "gone".into(),
        };
        assert!(graph(gone).is_some_and(|w| w.contains("404")));
        let foreign = GraphError::ForeignHost {
            account: a(),
            item: a(),
            url: "https://x".into(),
        };
        assert!(graph(foreign).is_some());
        let gave_up = GraphError::GaveUp {
            account: a(),
            item: a(),
            attempts: 6,
            retries: 5,
            last: "503".into(),
            timed_out: false,
        };
        assert!(
            graph(gave_up).is_none(),
            "retries exhausted are not the file's"
        );
        let signed_out = GraphError::Auth(crate::auth::AuthError::NoAccount { account: a() });
        assert!(graph(signed_out).is_none());
        let notion =
            |e: NotionError| matches!(UploadFailure::from(e), UploadFailure::CannotCarry(_));
        let rejected = |status, code: &str| NotionError::Rejected {
            what: "creating an upload".into(),
            status,
            code: code.into(),
            message: "m".into(),
        };
        assert!(notion(rejected(400, "validation_error")));
        assert!(notion(rejected(413, "")));
        assert!(
            !notion(rejected(400, "missing_version")),
            "every request's, not the file's"
        );
        assert!(!notion(NotionError::Ambiguous {
            what: "sending".into(),
            detail: "504".into(),
            saved: None,
        }));
        assert!(!notion(NotionError::GaveUp {
            what: "w".into(),
            attempts: 8,
            last: "503".into()
        }));
    }
}
