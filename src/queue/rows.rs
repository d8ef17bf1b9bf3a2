//! Layout `database` in the queue: a section's job makes its database (not a page), and each
//! page directly in such a section is written as a row of it, with the values the inventory
//! holds. Subpages nest under their parent page's job, so they are child pages inside the parent
//! row's page, as in layout `pages`.

use chrono::{DateTime, NaiveDateTime, Utc};

use crate::convert::{Block, Report};
use crate::notion::database::{DatabaseError, Row};
use crate::store::jobs::{Job, JobKind};
use crate::store::layouts::Layout;

use super::{JobError, Migration};

/// A page written as a row: the data source it goes into and its properties.
pub(super) struct RowWrite {
    /// The section's data source (the row's parent).
    pub(super) data_source: String,
    /// Its properties.
    pub(super) row: Row,
}

impl From<DatabaseError> for JobError {
    fn from(e: DatabaseError) -> Self {
        match e {
            DatabaseError::Notion(e) => e.into(),
            DatabaseError::Store(e) => e.into(),
            e @ DatabaseError::BadAnswer { .. } => JobError::permanent(e.to_string()),
        }
    }
}

impl Migration {
    /// The layout recorded for the target of `job`'s plan (`pages` when none is).
    async fn layout_of_job(&self, job: &Job) -> Result<Layout, JobError> {
        let plan = job.plan_id;
        let layout = self
            .db
            .call(move |db| {
                Ok::<_, crate::store::StoreError>(match db.plan_target(plan)? {
                    Some(t) => db.layout_of(&t)?,
                    None => None,
                })
            })
            .await?;
        Ok(layout.unwrap_or_default())
    }

    /// Whether `job` is a section laid out as a database; if so its database is made (exactly
    /// once) in `parent`, titled `name`.
    pub(super) async fn section_as_database(
        &self,
        job: &Job,
        parent: &str,
        name: &str,
    ) -> Result<bool, JobError> {
        if job.kind != JobKind::Section || self.layout_of_job(job).await? != Layout::Database {
            return Ok(false);
        }
        self.databases
            .ensure_database(&self.notion, &job.account, &job.item_id, parent, name)
            .await?;
        Ok(true)
    }

    /// The data source `job`'s page is a row of: its parent job's section's database, when that
    /// section is laid out as one (`None`: the page is a page).
    pub(super) async fn row_parent(&self, job: &Job) -> Result<Option<String>, JobError> {
        let Some(parent) = job.parent_job else {
            return Ok(None);
        };
        let found = self
            .db
            .call(move |db| {
                Ok::<_, crate::store::StoreError>(match db.job_item(parent)? {
                    Some((account, item)) => db.section_database(&account, &item)?,
                    None => None,
                })
            })
            .await?;
        match found {
            None => Ok(None),
            Some(d) => match d.created {
                Some((_, data_source)) => Ok(Some(data_source)),
                None => Err(JobError::transient(format!(
                    "the database of the section of {} is not created yet",
                    job.item_id
                ))),
            },
        }
    }

    /// The row of page `job` titled `title` in `data_source`, with what the inventory holds of
    /// it, the note tags `tags` by their OneNote names (added to the schema first) and the
    /// `author` the page's source names; a tag name Notion refuses is written as an accepted one,
    /// and that goes in `report`.
    pub(super) async fn row_of(
        &self,
        job: &Job,
        title: &str,
        data_source: &str,
        tags: &[String],
        author: Option<&str>,
        report: &mut Report,
    ) -> Result<Row, JobError> {
        let tags = self
            .databases
            .ensure_tags(&self.notion, data_source, tags)
            .await?;
        for m in &tags.mapped {
            report.add(
                format!("note tag {:?}", m.from),
                &format!("written as the tag {:?} (a name Notion refuses)", m.to),
            );
        }
        let (account, id) = (job.account.clone(), job.item_id.clone());
        let values = self
            .db
            .call(move |db| db.page_values(&account, &id))
            .await?
            .unwrap_or_default();
        Ok(Row {
            title: title.to_owned(),
            created: values.created.as_deref().and_then(onenote_time),
            modified: values.last_modified.as_deref().and_then(onenote_time),
            order: u32::try_from(values.order).unwrap_or(0),
            level: u8::try_from(values.level.clamp(0, 2)).unwrap_or(0),
            tags: tags.names,
            // A section file read on the drive route names the author the scan could not.
            author: values.author.or_else(|| author.map(str::to_owned)),
            link: values.web_url,
        })
    }
}

/// A OneNote time (`2026-04-18T22:31:00.0000000Z`, or without an offset: UTC).
pub(crate) fn onenote_time(raw: &str) -> Option<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(raw)
        .map(|t| t.with_timezone(&Utc))
        .ok()
        .or_else(|| {
            NaiveDateTime::parse_from_str(raw, "%Y-%m-%dT%H:%M:%S%.f")
                .ok()
                .map(|n| n.and_utc())
        })
}

/// The converter's first block when it is the grey line of OneNote's dates, which a row does not
/// need: its `Created` and `Modified` properties hold them.
pub(super) fn drop_date_line(blocks: &mut Vec<Block>) {
    if blocks.first().is_some_and(crate::convert::is_date_line) {
        blocks.remove(0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn onenote_times_with_and_without_an_offset_read_as_utc() {
        let t = onenote_time("2026-04-18T22:31:00.0000000Z").unwrap();
        assert_eq!(t.to_rfc3339(), "2026-04-18T22:31:00+00:00");
        let t = onenote_time("2026-04-18T22:31:00.0000000").unwrap();
        assert_eq!(t.to_rfc3339(), "2026-04-18T22:31:00+00:00");
        let t = onenote_time("2026-04-18T22:31:00+02:00").unwrap();
        assert_eq!(t.to_rfc3339(), "2026-04-18T20:31:00+00:00");
        assert_eq!(onenote_time("yesterday"), None);
    }

    #[test]
    fn the_date_line_goes_and_a_first_paragraph_of_the_page_stays() {
        let html = "<html><head><title>T</title>\
            <meta name=\"created\" content=\"2026-04-18T22:31:00.0000000\"></head>\
            <body><p>Created 2026 by me (OneNote)</p></body></html>";
        let mut blocks = crate::convert::convert_page(html).blocks;
        assert_eq!(blocks.len(), 2);
        drop_date_line(&mut blocks);
        assert_eq!(blocks.len(), 1);
        drop_date_line(&mut blocks);
        assert_eq!(blocks.len(), 1, "the page's own paragraph stays");
    }
}
