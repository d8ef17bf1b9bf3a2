//! What a worker does with one job: a container's page, a OneNote page (fetched, converted,
//! written), or the link pass.

use std::collections::HashMap;
use std::sync::atomic::Ordering;

use crate::convert::MediaSource;
use crate::graph::sources::account_of_key;
use crate::graph::Caller;
use crate::limiter::Lane;
use crate::notion::writer::Resource;
use crate::store::imports::is_files_key;
use crate::store::jobs::{Job, JobKind};

use super::conversion::{resource_url, resources_of};
use super::ensure::PageWrite;
use super::prefetch::{self, Prefetched};
use super::rows::{self, RowWrite};
use super::stats::HeldAhead;
use super::{links, JobError, Migration, RunOptions, Turn};

impl Migration {
    /// The Graph caller for a job's inventory key (background lane, the run's deadline): a group's
    /// or site's items are read as the signed-in account, with its token and its budget (Graph's
    /// limits are the user's).
    async fn caller(&self, key: &str, opts: &RunOptions) -> Result<Caller, JobError> {
        if is_files_key(key) {
            // An import from files reads nothing from Graph: no user, no budget. Its pages'
            // files are embedded in them and served from memory.
            return Ok(Caller {
                account: key.to_owned(),
                user_id: String::new(),
                lane: Lane::Background,
                deadline: opts.deadline,
                retries: None,
            });
        }
        let account = account_of_key(key);
        if let Some(c) = self.callers.lock().expect("callers poisoned").get(account) {
            return Ok(c.clone());
        }
        let mut c = Caller::of_account(&self.db, account, Lane::Background).await?;
        c.deadline = opts.deadline;
        self.callers
            .lock()
            .expect("callers poisoned")
            .insert(account.to_owned(), c.clone());
        Ok(c)
    }

    /// The Notion page this job's page goes under.
    async fn parent_notion_id(&self, job: &Job) -> Result<String, JobError> {
        /// What the database says of a job's parent.
        enum Parent {
            /// The plan's target page (none: the plan has none).
            Target(Option<String>),
            /// The parent job is not in the database.
            Missing,
            /// The parent's Notion page (none: not created yet).
            Page(Option<String>),
        }
        let (plan, parent) = (job.plan_id, job.parent_job);
        let found = self
            .db
            .call(move |db| {
                Ok::<_, crate::store::StoreError>(match parent {
                    None => Parent::Target(db.plan_target(plan)?),
                    Some(p) => match db.job_item(p)? {
                        None => Parent::Missing,
                        Some((account, item)) => Parent::Page(
                            db.notion_item(&account, &item)?
                                .and_then(|i| i.into_page_id()),
                        ),
                    },
                })
            })
            .await?;
        match found {
            Parent::Target(t) => {
                t.ok_or_else(|| JobError::permanent(format!("plan {} has no target", job.plan_id)))
            }
            Parent::Missing => Err(JobError::permanent(format!(
                "parent job {} is missing",
                parent.unwrap_or_default()
            ))),
            Parent::Page(page) => page.ok_or_else(|| {
                JobError::transient(format!(
                    "the parent of {} has no Notion page yet",
                    job.item_id
                ))
            }),
        }
    }

    pub(super) async fn process(
        &self,
        job: &Job,
        opts: &RunOptions,
        turn: &Turn,
    ) -> Result<(), JobError> {
        match job.kind {
            JobKind::Links => {
                let who = self.caller(&job.account, opts).await?;
                let n = links::rewrite_pending(self, &who).await?;
                self.stats.links.fetch_add(n, Ordering::Relaxed);
                Ok(())
            }
            JobKind::Page => self.page(job, opts, turn).await,
            _ => self.container(job, turn).await,
        }
    }

    /// A notebook, section group or section: a page with no body.
    async fn container(&self, job: &Job, turn: &Turn) -> Result<(), JobError> {
        let (account, kind, id) = (job.account.clone(), job.kind.as_str(), job.item_id.clone());
        let (name, _) = self
            .db
            .call(move |db| db.item_name(&account, kind, &id))
            .await?
            .ok_or_else(|| {
                JobError::permanent(format!(
                    "{} {} is not in the inventory",
                    job.kind.as_str(),
                    job.item_id
                ))
            })?;
        let parent = self.parent_notion_id(job).await?;
        if self.section_as_database(job, &parent, &name).await? {
            self.stats.containers.fetch_add(1, Ordering::Relaxed);
            return Ok(());
        }
        let created = self
            .ensure(job, turn, &parent, &name, &[], &HashMap::new(), None)
            .await?;
        if created {
            self.stats.containers.fetch_add(1, Ordering::Relaxed);
        }
        Ok(())
    }

    /// A OneNote page: fetch, convert, write.
    async fn page(&self, job: &Job, opts: &RunOptions, turn: &Turn) -> Result<(), JobError> {
        // What the page is, as planned and as written so far: read off the runtime.
        let (account, id) = (job.account.clone(), job.item_id.clone());
        let (named, existing, last_modified) = self
            .db
            .call(move |db| {
                Ok::<_, crate::store::StoreError>((
                    db.item_name(&account, "page", &id)?,
                    db.notion_item(&account, &id)?,
                    db.page_last_modified(&account, &id)?,
                ))
            })
            .await?;
        let (title, deleted) = named.ok_or_else(|| {
            JobError::permanent(format!("page {} is not in the inventory", job.item_id))
        })?;
        let item = format!("page {title:?} ({})", job.item_id);
        if deleted {
            return Err(JobError::permanent(format!(
                "{item} was deleted in OneNote after it was planned"
            )));
        }
        if let Some(existing) = &existing {
            if existing.state.is_complete() {
                return Ok(());
            }
        }
        // A page of a section laid out as a database is a row of it.
        let row_into = self.row_parent(job).await?;
        let parent = match &row_into {
            Some(data_source) => data_source.clone(),
            None => self.parent_notion_id(job).await?,
        };
        // The page's Graph requests (content, ink, files) spend from the item's one count.
        let already = u32::try_from(job.attempts - 1).unwrap_or(0);
        let who = self
            .caller(&job.account, opts)
            .await?
            .for_item(crate::failure::Retries::new(self.retries, already));
        let rewriting = existing.as_ref().is_some_and(|i| {
            matches!(i.state, crate::store::notion_items::ItemState::Rewriting(_))
        });
        let created = existing.is_some_and(|i| i.page_id().is_some());
        if !created {
            // An earlier sibling waiting for a retry would make this page wait long after its
            // content is fetched: park it before spending Graph budget. Siblings in flight are
            // not waited for here: the content and files are fetched while they are created, and
            // the page waits for its turn only before its own creation (in `ensure`).
            turn.check()?;
        }
        // A big page is converted and written under the one big-page permit, held to the end.
        let (mut page, mut svgs, _big) = self
            .fetch_page(
                &who,
                (!created).then_some(turn),
                &job.account,
                &job.item_id,
                &item,
                last_modified.clone(),
            )
            .await?;
        // Counted from its content until its Notion page exists (or the attempt ends): each
        // worker holds at most one page ahead of its turn.
        let _ahead = (!created).then(|| HeldAhead::enter(&self.stats));
        for m in page.resources() {
            if let MediaSource::Embedded(f) = m {
                svgs.insert(f.key.clone(), f.bytes.clone());
            }
        }
        let migrated = self
            .db
            .migrated_page_targets(account_of_key(&job.account))?;
        let mut unresolved = false;
        page.resolve_page_links(|id| match migrated.get(&id.to_ascii_lowercase()) {
            Some(t) => Some(t.clone()),
            None => {
                unresolved = true;
                None
            }
        });
        let media = page.resources();
        let resources = resources_of(&media);
        // A page to be created uploads every file it has: fetch them now, in page order, while
        // its earlier siblings are still being written (a page being resumed or rewritten may
        // skip files already in Notion, so it fetches as the writer goes).
        let prefetched = if created {
            Prefetched::default()
        } else {
            let ordered: Vec<&Resource> = media
                .iter()
                .filter_map(|m| resource_url(m))
                .filter_map(|u| resources.get(u))
                .collect();
            let max = usize::try_from(self.max_upload).unwrap_or(usize::MAX);
            prefetch::fetch_ahead(
                &self.graph,
                &who,
                &ordered,
                max,
                &self.stats.prefetched_bytes,
            )
            .await
        };
        drop(media);
        let row = match row_into {
            Some(data_source) => {
                rows::drop_date_line(&mut page.blocks);
                let row = self
                    .row_of(
                        job,
                        &title,
                        &data_source,
                        &page.tags,
                        page.author.as_deref(),
                        &mut page.report,
                    )
                    .await?;
                Some(RowWrite { row, data_source })
            }
            None => None,
        };
        let report = serde_json::to_string(&page.report).ok();
        let approximations = page.report.items.len() as u64;
        // The typed blocks go to the writer, which makes each request's JSON when it sends it.
        let blocks = std::mem::take(&mut page.blocks);
        drop(page);
        self.ensure(
            job,
            turn,
            &parent,
            &title,
            &blocks,
            &resources,
            Some(PageWrite {
                who: &who,
                report: report.as_deref(),
                last_modified: last_modified.as_deref(),
                svgs,
                prefetched,
                pending_links: unresolved,
                row,
            }),
        )
        .await?;
        self.stats.pages.fetch_add(1, Ordering::Relaxed);
        if rewriting {
            self.stats.rewritten.fetch_add(1, Ordering::Relaxed);
        }
        self.stats
            .approximations
            .fetch_add(approximations, Ordering::Relaxed);
        Ok(())
    }
}
