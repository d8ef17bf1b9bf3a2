//! A page's content for an import from files: its section file is opened once (parsed on the
//! blocking pool, never on a runtime thread) and kept while its pages are converted as their jobs
//! come, then released, so a run holds the data of the sections being worked on, not of the whole
//! import, and never parses a section once per page. A section that cannot be opened fails each of
//! its pages with the reader's reason (the path, when the file is gone since it was planned).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use crate::convert::ConvertedPage;
use crate::onefile::{self, ParsedSection, SectionLocation};
use crate::store::Db;

use super::open_sections::{OpenSections, Released, Slot};
use super::JobError;

/// The sections of imports opened by one run.
#[derive(Clone, Default)]
pub(super) struct ImportSections {
    open: OpenSections<()>,
}

impl ImportSections {
    /// Converts page `page_id` of import `key`; `item` names the page in messages.
    pub(super) async fn convert(
        &self,
        db: &Arc<Db>,
        key: &str,
        page_id: &str,
        item: &str,
        opened: &AtomicU64,
    ) -> Result<ConvertedPage, JobError> {
        let (k, p) = (key.to_owned(), page_id.to_owned());
        let section = db.call(move |db| db.page_section(&k, &p)).await?;
        let section = section.ok_or_else(|| {
            JobError::permanent(format!("{item} is not in the inventory of its import"))
        })?;
        let id = (key.to_owned(), section.clone());
        let slot = self.open.enter(&id, || ());
        let converted = self
            .convert_in(db, &slot, key, &section, page_id, item, opened)
            .await;
        if self.open.release(db, &id, &slot).await != Released::Kept {
            tracing::debug!(section = %id.1, "section file released");
        }
        converted
    }

    #[allow(clippy::too_many_arguments)]
    async fn convert_in(
        &self,
        db: &Arc<Db>,
        slot: &Slot<()>,
        key: &str,
        section: &str,
        page_id: &str,
        item: &str,
        opened: &AtomicU64,
    ) -> Result<ConvertedPage, JobError> {
        let parsed = slot
            .parsed
            .get_or_try_init(|| async {
                opened.fetch_add(1, Ordering::Relaxed);
                open(db, key, section).await
            })
            .await?;
        let parsed = match parsed {
            Ok(p) => p.clone(),
            Err(reason) => return Err(JobError::permanent(format!("{item}: {reason}"))),
        };
        let wanted = page_id.to_owned();
        let section = Arc::clone(&parsed);
        let converted = tokio::task::spawn_blocking(move || parsed.convert(&wanted))
            .await
            .map_err(|e| JobError::permanent(format!("{item}: failed while converting it: {e}")))?;
        if let (None, Some(why)) = (&converted, section.unreadable(page_id)) {
            return Err(JobError::permanent(format!("{item}: {why}")));
        }
        converted.ok_or_else(|| {
            JobError::permanent(format!(
                "{item} is no longer in its section file (deleted in OneNote since it was \
                 planned; run `notebridge migrate --from PATH` again to plan what the file holds \
                 now)"
            ))
        })
    }
}

/// Opens section `section` of import `key` from where it was planned, on the blocking pool. The
/// outer error ends the attempt (the state database); the inner one is the section's, and fails
/// each of its pages with the reason.
async fn open(
    db: &Arc<Db>,
    key: &str,
    section: &str,
) -> Result<Result<Arc<ParsedSection>, String>, JobError> {
    let (k, s) = (key.to_owned(), section.to_owned());
    let Some(stored) = db.call(move |db| db.file_section(&k, &s)).await? else {
        return Ok(Err(format!(
            "no file is recorded for its section {section}; run `notebridge migrate --from PATH` \
             again"
        )));
    };
    let Some(location) = SectionLocation::from_stored(&stored.location) else {
        return Ok(Err(format!(
            "its section's recorded location {:?} cannot be read",
            stored.location
        )));
    };
    let shown = describe(&location);
    let opened = tokio::task::spawn_blocking(move || onefile::open_section(&location)).await;
    Ok(match opened {
        Ok(Ok(parsed)) => Ok(Arc::new(parsed)),
        Ok(Err(problem)) => Err(format!(
            "its section file {shown} could not be read: {}",
            problem.reason
        )),
        Err(e) => Err(format!(
            "reading its section file {shown} stopped unexpectedly: {e}"
        )),
    })
}

/// Where a section is, for messages.
fn describe(location: &SectionLocation) -> String {
    match location {
        SectionLocation::File(p) => p.display().to_string(),
        SectionLocation::Package { package, entry } => {
            format!("{entry} in {}", package.display())
        }
    }
}
