//! Writing one OneNote item into Notion exactly once, by executing its write steps ([`super::steps`]).
//!
//! Notion has no idempotency keys and a write can be applied although its answer was a 504 or never
//! arrived. So the writer records what each step learned (the ids of the blocks it created, its
//! upload), in the page's journal as it learns it when it has one ([`super::journal`]), and one
//! place (the executor's look, [`exec`]) decides from what Notion holds whether a step was applied:
//! after an unclear answer, before writing again; and when a page is resumed, for the one step after
//! those its journal recorded (steps are sent one after another, so no later one can have been), or,
//! without records, step by step until the first one that was not.
//!
//! The rooms: [`exec`] executes a page's steps (creating the page, appending, looking);
//! [`fallback`] makes a file's upload, or its smaller rendition's, or says why it cannot be carried
//! over; [`names`] gives each file the name Notion takes (its types are [`crate::mime`]'s).

mod exec;
mod fallback;
mod names;

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use bytes::Bytes;
use futures::future::BoxFuture;
use serde::Serialize;
use serde_json::{json, Value};

use super::client::{NotionClient, NotionError};
use super::degrade::Degraded;
use super::journal::Journal;
use super::listed;
use crate::convert::Block;
use crate::failure::{Class, Classify, Next, Retries, RetryBudget, Scope, ITEM_RETRIES};
use crate::graph::GraphError;
use crate::store::StoreError;

pub use super::upload::{PART_SIZE, SINGLE_PART_MAX};
pub use names::{agree_with_bytes, fit_name, upload_name, MAX_NAME_BYTES};

/// A file the page refers to, to be fetched from Graph and uploaded to Notion.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Resource {
    /// Where to fetch it (a Graph resource URL).
    pub url: String,
    /// The file name to show in Notion.
    pub file_name: String,
    /// MIME type when OneNote gave one.
    pub mime: Option<String>,
    /// Another rendition to fetch when `url` cannot be carried over (an image's smaller `src`
    /// beside its full resolution); using it is reported ([`WriteStats::smaller`]).
    pub fallback: Option<String>,
}

/// Fetches a resource's bytes (through the Graph limiter); the error text names why it failed.
///
/// An error this one file's own for good (gone, forbidden, too big: [`Scope::Item`] and
/// [`Next::Never`]) leaves a placeholder; any other (a deadline, sign-in, retries exhausted) fails
/// the write so the page is tried again later instead of keeping a placeholder for good.
pub type Fetch =
    Arc<dyn Fn(Resource) -> BoxFuture<'static, Result<Bytes, GraphError>> + Send + Sync>;

/// Errors writing an item; each names the Notion object involved.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    /// Notion refused or kept failing.
    #[error(transparent)]
    Notion(#[from] NotionError),
    /// What Notion holds does not match what we wrote (someone edited the page meanwhile).
    #[error("{0}")]
    Mismatch(String),
    /// A file could not be fetched for a reason that is not the file's own (see [`Fetch`]).
    #[error(transparent)]
    Fetch(GraphError),
    /// What a step learned could not be recorded in the state database.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A created page could not be recorded: going on could create it twice.
    #[error("could not record a created Notion page: {0}")]
    Unrecorded(String),
}

impl Classify for WriteError {
    fn class(&self) -> Class {
        match self {
            WriteError::Notion(e) => e.class(),
            // Someone edited the page meanwhile: never written over, this page fails.
            WriteError::Mismatch(_) => Class::item_fails(),
            WriteError::Fetch(e) => e.class(),
            WriteError::Store(e) => e.class(),
            // A bug: nothing the user can do but report it.
            WriteError::Unrecorded(_) => Class::new(Scope::Run, Next::Never),
        }
    }

    fn retries(&self) -> u32 {
        match self {
            WriteError::Notion(e) => e.retries(),
            WriteError::Mismatch(_) => 0,
            WriteError::Fetch(e) => e.retries(),
            WriteError::Store(e) => e.retries(),
            WriteError::Unrecorded(_) => 0,
        }
    }
}

/// What writing a page did.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct WriteStats {
    /// Blocks written (all levels).
    pub blocks: usize,
    /// Files uploaded.
    pub files: usize,
    /// Bytes uploaded.
    pub bytes: u64,
    /// Resources that could not be carried over (a visible placeholder stands in their place).
    pub placeholders: Vec<String>,
    /// Elements Notion refused, sent degraded ([`super::degrade`]).
    pub degraded: Vec<Degraded>,
    /// Files carried over from their fallback rendition (`name: why the first failed`).
    pub smaller: Vec<String>,
    /// What the writes' own answers told of the page, for its fingerprint (`notion::conflict`).
    #[serde(skip)]
    pub answered: Answered,
}

/// The page as the writes' own answers gave it back: enough for a fingerprint's page half without
/// reading the page again, when every write of the page was answered in this run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Answered {
    /// The page object Notion answered its creation with (`None`: not created now, or found again
    /// after an unclear answer).
    pub page: Option<serde_json::Value>,
    /// The latest `last_edited_time` minute any write's answer carried.
    pub latest: Option<String>,
    /// A write of the page was found applied by a look-up, not by its answer (its time unknown).
    pub unclear: bool,
    /// The page's top-level blocks as its appends answered them, in order.
    pub body: crate::notion::conflict::AnsweredBody,
    /// Some of the body came back in no answer (sent inside the creation), or was changed after
    /// its append answered (children appended to it): the body is listed.
    pub body_unanswered: bool,
}

impl Answered {
    /// A write answered with `t` as its `last_edited_time`.
    pub fn saw(&mut self, t: Option<&str>) {
        if let Some(m) = t.map(crate::notion::conflict::minute) {
            if self.latest.as_ref().is_none_or(|l| m > *l) {
                self.latest = Some(m);
            }
        }
    }

    /// The page object to take the fingerprint's page half from: the creation's answer with the
    /// latest minute of any write's answer, when every write was answered now.
    pub fn page(&self) -> Option<serde_json::Value> {
        if self.unclear {
            return None;
        }
        let mut page = self.page.clone()?;
        let latest = self.latest.clone()?;
        page["last_edited_time"] = serde_json::Value::String(latest);
        Some(page)
    }

    /// The whole fingerprint from the answers, when the page and every block of its body came
    /// back in them (no read needed).
    pub fn fingerprint(&self) -> Option<crate::notion::conflict::Fingerprint> {
        if self.body_unanswered {
            return None;
        }
        self.page().map(|p| self.body.fingerprint(&p))
    }
}

/// A page to create: where, its title, its body and the resources the body refers to.
#[derive(Clone, Copy)]
pub struct NewPage<'a> {
    /// The Notion parent page id.
    pub parent: &'a str,
    /// The title (`Untitled` when empty).
    pub title: &'a str,
    /// The converted body.
    pub blocks: &'a [Block],
    /// Resource-backed media in the body, by URL.
    pub resources: &'a HashMap<String, Resource>,
}

/// Writes pages and their bodies.
#[derive(Clone)]
pub struct Writer {
    client: NotionClient,
    fetch: Fetch,
    max_upload: u64,
    /// The item's one retry budget ([`ITEM_RETRIES`]) and what earlier attempts spent of it.
    budget: RetryBudget,
    spent: u32,
    /// Where what each step learned is recorded as it is learned (`None`: kept in memory only).
    journal: Option<Journal>,
}

impl Writer {
    /// A writer that uploads resources fetched with `fetch`, refusing files above `max_upload` bytes
    /// (the workspace limit from `/v1/users/me`).
    pub fn new(client: NotionClient, fetch: Fetch, max_upload: u64) -> Self {
        Self {
            client,
            fetch,
            max_upload,
            budget: ITEM_RETRIES,
            spent: 0,
            journal: None,
        }
    }

    /// The same writer recording what each step learns in the page's `journal`, and the blocks it
    /// writes holding links to pages not migrated yet; a resumed write skips the steps recorded
    /// there.
    pub fn with_journal(mut self, journal: Journal) -> Self {
        self.journal = Some(journal);
        self
    }

    /// The same writer for an item whose earlier attempts already spent `retries` of its one retry
    /// budget: an unclear write is retried only while the rest lasts.
    pub fn after_retries(mut self, retries: u32) -> Self {
        self.spent = retries;
        self
    }

    /// The underlying client.
    pub fn client(&self) -> &NotionClient {
        &self.client
    }

    /// Finds the page we created earlier under `parent` with `title` whose id we never learnt (the
    /// answer was lost): the last child page with that title that is not already one of ours.
    pub async fn find_lost_page(
        &self,
        parent: &str,
        title: &str,
        ours: &HashSet<String>,
    ) -> Result<Option<String>, WriteError> {
        find_lost_page(&self.client, parent, title, ours).await
    }

    /// This writer's client for one step of an item's write (a creation, an append, an upload): the
    /// step's requests, looks and resends spend from one retry count, which starts from what the
    /// item's earlier attempts spent. Each step has its own, as each request of uv's has: what one
    /// failing step spends is not taken from the next.
    fn item_client(&self) -> NotionClient {
        self.client.for_item(Retries::new(self.budget, self.spent))
    }
}

/// [`Writer::find_lost_page`] with `client` (an item's, so the listing spends its retries).
async fn find_lost_page(
    client: &NotionClient,
    parent: &str,
    title: &str,
    ours: &HashSet<String>,
) -> Result<Option<String>, WriteError> {
    let title = display_title(title);
    let kids = listed::list(client, parent).await?;
    Ok(kids
        .into_iter()
        .filter(|b| b.is_subpage() && !b.trashed)
        .filter(|b| b.title.as_deref() == Some(title.as_str()))
        .map(|b| b.id)
        .rfind(|id| !ours.contains(id)))
}

/// The title Notion will show.
pub fn display_title(title: &str) -> String {
    if title.trim().is_empty() {
        "Untitled".into()
    } else {
        title.to_owned()
    }
}

/// A visible stand-in for a file that could not be carried over.
pub fn placeholder(name: &str, why: &str) -> Value {
    json!({"type": "paragraph", "paragraph": {"rich_text": [{"type": "text", "text": {"content":
        format!("⚠ {name} could not be carried over from OneNote: {why}")},
        "annotations": {"italic": true, "color": "red"}}]}})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_titles_become_untitled() {
        assert_eq!(display_title("  "), "Untitled");
        assert_eq!(display_title("Plan"), "Plan");
    }
}
