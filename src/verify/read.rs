//! Reading Notion back: one children listing per page, kept for the whole verification (accounts may
//! share a target), in the typed model the writer and the link pass read too ([`Listed`]).

use std::collections::{HashMap, HashSet, VecDeque};

use crate::notion::client::{NotionClient, NotionError};
use crate::notion::database;
use crate::notion::listed::{self, Listed};
use crate::notion::split;
use futures::stream::{self, StreamExt};

use super::VerifyError;

/// How many Notion listings may be in flight at once (the client's pacing still rules the rate).
const CONCURRENT_LISTINGS: usize = 4;

/// A children listing, or why it could not be read (a 404 or refusal is a finding, not a failure).
pub(super) type Listing = Result<Vec<Listed>, String>;

/// What an id names, and so how its children are read.
#[derive(Clone, Copy)]
enum Source {
    /// A page or block: its children listing.
    Children,
    /// A data source: its rows, through its queries.
    Rows,
}

pub(super) struct Reader<'a> {
    pub(super) client: &'a NotionClient,
    /// By normalised id; shared across accounts (they may share a target).
    pub(super) listings: HashMap<String, Listing>,
}

impl Reader<'_> {
    /// Lists every id not listed yet, a few at a time.
    pub(super) async fn fetch(
        &mut self,
        ids: Vec<String>,
        account: &str,
    ) -> Result<(), VerifyError> {
        self.read_all(ids, account, Source::Children).await
    }

    /// Reads every row of the data sources `ids` not read yet (paged queries), each kept as a
    /// listing of its rows, as child pages, under the data source's id: rows are matched and
    /// located as the pages under a page are.
    pub(super) async fn query_rows(
        &mut self,
        ids: Vec<String>,
        account: &str,
    ) -> Result<(), VerifyError> {
        self.read_all(ids, account, Source::Rows).await
    }

    /// Reads the ids not read yet from `source`, a few at a time. A refusal is kept as that id's
    /// finding; any other failure ends the verification.
    async fn read_all(
        &mut self,
        ids: Vec<String>,
        account: &str,
        source: Source,
    ) -> Result<(), VerifyError> {
        let todo: Vec<String> = {
            let mut seen = HashSet::new();
            ids.into_iter()
                .filter(|id| !self.listings.contains_key(&norm(id)) && seen.insert(norm(id)))
                .collect()
        };
        let client = self.client;
        let results: Vec<(String, Result<Vec<Listed>, NotionError>)> = stream::iter(todo)
            .map(|id| async move {
                let r = match source {
                    Source::Children => listed::list(client, &id).await,
                    Source::Rows => database::rows(client, &id)
                        .await
                        .map(|rows| rows.iter().filter_map(row_as_listed).collect()),
                };
                (id, r)
            })
            .buffer_unordered(CONCURRENT_LISTINGS)
            .collect()
            .await;
        for (id, r) in results {
            let listing = match r {
                Ok(v) => Ok(v),
                Err(e @ (NotionError::Refused { .. } | NotionError::Rejected { .. })) => {
                    Err(e.to_string())
                }
                Err(source) => {
                    return Err(VerifyError::Notion {
                        account: account.to_owned(),
                        source,
                    })
                }
            };
            self.listings.insert(norm(&id), listing);
        }
        Ok(())
    }

    pub(super) fn listing(&self, id: &str) -> Option<&Listing> {
        self.listings.get(&norm(id))
    }

    /// Counts body blocks under `page` at any depth, stopping once `enough` is reached: the top
    /// level comes from the listing already made; nested levels cost one listing per parent block.
    pub(super) async fn count_body(
        &self,
        page: &str,
        account: &str,
    ) -> Result<Result<(i64, String), String>, VerifyError> {
        let top = match self.listing(page) {
            Some(Ok(v)) => v.clone(),
            Some(Err(e)) => return Ok(Err(e.clone())),
            None => return Ok(Err(format!("page {page} was not listed"))),
        };
        // Every block is visited, level by level, as `notion::split::shape` does for what was
        // written: a body written twice, or a lost block hidden by a stray one, must not pass.
        let mut count = 0i64;
        let mut counts = Vec::new();
        let mut queue: VecDeque<Option<String>> = VecDeque::new();
        take_body(&top, &mut count, &mut counts, &mut queue);
        while let Some(next) = queue.pop_front() {
            let Some(id) = next else {
                counts.push(0);
                continue;
            };
            match listed::list(self.client, &id).await {
                Ok(kids) => take_body(&kids, &mut count, &mut counts, &mut queue),
                Err(e @ (NotionError::Refused { .. } | NotionError::Rejected { .. })) => {
                    return Ok(Err(e.to_string()))
                }
                Err(source) => {
                    return Err(VerifyError::Notion {
                        account: account.to_owned(),
                        source,
                    })
                }
            }
        }
        Ok(Ok((count, split::shape_of_counts(&counts))))
    }
}

/// Counts the body blocks of one listing, notes how many there are (the shape), and queues each in
/// order: its id when it has children to list, `None` when it has none.
pub(super) fn take_body(
    blocks: &[Listed],
    count: &mut i64,
    counts: &mut Vec<usize>,
    queue: &mut VecDeque<Option<String>>,
) {
    let body: Vec<&Listed> = blocks.iter().filter(|b| b.is_body()).collect();
    counts.push(body.len());
    for b in body {
        *count += 1;
        queue.push_back(b.has_children.then(|| b.id.clone()));
    }
}

/// A row of a data source query as the child page it is.
fn row_as_listed(row: &serde_json::Value) -> Option<Listed> {
    Some(Listed {
        id: row["id"].as_str()?.to_owned(),
        kind: "child_page".into(),
        has_children: false,
        trashed: row["in_trash"].as_bool() == Some(true) || row["archived"].as_bool() == Some(true),
        title: Some(database::row_title(row)),
    })
}

/// Visible child pages in a listing: (id, title).
pub(super) fn child_pages(listing: &[Listed]) -> Vec<(String, String)> {
    listing
        .iter()
        .filter(|b| b.is_subpage() && !b.trashed)
        .map(|b| (b.id.clone(), b.title.clone().unwrap_or_default()))
        .collect()
}

/// Notion ids compare without dashes and case (the API accepts and returns both forms).
pub(super) fn norm(id: &str) -> String {
    id.replace('-', "").to_ascii_lowercase()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    pub(super) fn ids_compare_without_dashes_or_case() {
        assert_eq!(
            norm("1A2b3c4d-0000-4000-8000-000000000001"),
            norm("1a2b3c4d000040008000000000000001")
        );
    }

    #[test]
    pub(super) fn child_pages_skip_body_and_trashed_blocks() {
        let listing = listed::of_all(
            &[
                json!({"id": "a", "type": "paragraph", "paragraph": {}}),
                json!({"id": "b", "type": "child_page", "child_page": {"title": "One"}}),
                json!({"id": "c", "type": "child_page", "child_page": {"title": "Two"},
                    "in_trash": true}),
            ],
            "p",
        )
        .unwrap();
        assert_eq!(child_pages(&listing), vec![("b".into(), "One".into())]);
        assert!(listing[0].is_body());
        assert!(!listing[1].is_body());
    }
}
