//! What a page's write learned, kept in the state database as it is learned: each finished step's
//! block ids and upload (so a resumed write skips finished steps without looking them up in Notion),
//! and each block written holding a link to a OneNote page not migrated yet (so the link pass
//! updates exactly those blocks, from what was written, without reading the page again).
//!
//! A step is recorded with a mark of what it sends: a resumed write trusts a record only while the
//! steps it makes from the page's content now send the same as when the step was recorded.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::clock::{Clock, UnixMillis};
use crate::convert::{Block, PageTarget, RichKind, RichText};
use crate::store::jobs::RunToken;
use crate::store::write_journal::{LinkRow, StepRow};
use crate::store::{Db, StoreError};

/// An upload not attached expires an hour after it was made (Notion's `expiry_time`); one recorded
/// longer ago than this is made again rather than sent to be refused.
pub const UPLOAD_REUSE_MS: UnixMillis = 45 * 60 * 1000;

/// What one of a page's write steps learned when it was executed (or found applied).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Learned {
    /// The page's creation with this many first blocks: their ids are listed when a later step
    /// needs them.
    PageBlocks(usize),
    /// The blocks a send created, in order.
    Blocks(Vec<Made>),
    /// An upload: how its file went (`None` while not made, or not needed: its block was found
    /// written already).
    Upload(Option<Uploaded>),
}

/// A block a step created.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct Made {
    pub(crate) id: String,
    /// Whether Notion said it has children (`None`: not said, or said long ago: a record).
    #[serde(skip)]
    pub(crate) has_children: Option<bool>,
    /// Notion's type of the block as sent or listed (`None`: not known).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) kind: Option<String>,
}

/// How an upload step went.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Uploaded {
    /// Notion holds the file: the block is sent pointing at it.
    File(String),
    /// The file cannot be carried over: a placeholder naming it and why stands in the block's place.
    Placeholder { name: String, why: String },
    /// Not a resource the page brought: the block is sent as converted.
    AsIs,
}

/// A step recorded by an earlier attempt.
#[derive(Clone, Debug)]
pub(crate) struct Recorded {
    pub(crate) mark: String,
    pub(crate) learned: Learned,
    pub(crate) at: UnixMillis,
}

/// One page's journal in the state database.
#[derive(Clone)]
pub struct Journal {
    db: Arc<Db>,
    /// The run lock's token: a process that lost the lock records nothing.
    token: RunToken,
    account: String,
    item: String,
    clock: Clock,
}

impl Journal {
    /// The journal of the OneNote item `item` of inventory key `account`.
    pub fn new(db: Arc<Db>, token: RunToken, account: &str, item: &str, clock: Clock) -> Self {
        Self {
            db,
            token,
            account: account.to_owned(),
            item: item.to_owned(),
            clock,
        }
    }

    /// The current time on the journal's clock.
    pub(crate) fn now(&self) -> UnixMillis {
        self.clock.now_ms()
    }

    /// The steps earlier attempts recorded, by step number; a record this version cannot read is
    /// left out (the step is looked up in Notion instead).
    pub(crate) async fn recorded(
        &self,
    ) -> Result<std::collections::HashMap<usize, Recorded>, StoreError> {
        let (account, item) = (self.account.clone(), self.item.clone());
        let rows = self
            .db
            .call(move |db| db.recorded_steps(&account, &item))
            .await?;
        Ok(rows
            .into_iter()
            .filter_map(|r| {
                let learned = serde_json::from_str(&r.learned).ok()?;
                Some((
                    usize::try_from(r.step).ok()?,
                    Recorded {
                        mark: r.mark,
                        learned,
                        at: r.at,
                    },
                ))
            })
            .collect())
    }

    /// Records what step `step` learned, with the blocks it wrote that hold links to pages not
    /// migrated yet: one transaction, so a kill never keeps the step without its links.
    pub(crate) async fn step(
        &self,
        step: usize,
        mark: &str,
        learned: &Learned,
        links: Vec<LinkRow>,
    ) -> Result<(), StoreError> {
        let row = StepRow {
            step: step as i64,
            mark: mark.to_owned(),
            learned: serde_json::to_string(learned).expect("a learned step serialises"),
            at: self.clock.now_ms(),
        };
        let token = self.token.clone();
        let (account, item) = (self.account.clone(), self.item.clone());
        self.db
            .call(move |db| db.record_step_with_links(&token, &account, &item, &row, &links))
            .await?;
        crate::crash::point("journal.step_recorded");
        Ok(())
    }
}

/// The rich text of one written block that holds links to OneNote pages, as recorded: enough to
/// send the block's text again with the links pointing at Notion pages.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LinkBody {
    /// Notion's type of the block (`paragraph`, `table_row`, `image`...).
    pub kind: String,
    /// The field holding the text: `rich_text`, `caption` or `cells`.
    pub field: String,
    /// Whether the field takes page mentions (text blocks and table cells; not captions or code).
    pub mentions: bool,
    /// The runs (each as sent, or a link to a OneNote page by its parts); for `cells`, one array
    /// of runs per cell.
    pub runs: Value,
}

/// A recorded block's update.
#[derive(Clone, Debug, PartialEq)]
pub struct Update {
    /// The body of `PATCH /v1/blocks/{id}`.
    pub body: Value,
    /// Links that point at Notion pages now.
    pub resolved: usize,
    /// Links whose page is not migrated yet (kept as text naming it).
    pub unresolved: usize,
}

/// One recorded run: as sent when it holds no link to a page, else the link's parts.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum Run {
    /// The run's request JSON.
    Sent(Value),
    /// A link to a OneNote page: its text, the page's OneNote id, its annotations' JSON (if any).
    Page {
        content: String,
        page: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        annotations: Option<Value>,
    },
}

fn runs_of(runs: &[RichText], mentions: bool) -> Value {
    Value::Array(
        runs.iter()
            .map(|r| {
                let run = match &r.kind {
                    RichKind::PageLink {
                        content,
                        onenote_page_id,
                        target: None,
                    } => Run::Page {
                        content: content.clone(),
                        page: onenote_page_id.clone(),
                        annotations: r.to_json_in(mentions).get("annotations").cloned(),
                    },
                    _ => Run::Sent(r.to_json_in(mentions)),
                };
                serde_json::to_value(run).expect("a run serialises")
            })
            .collect(),
    )
}

fn unresolved(runs: &[RichText]) -> bool {
    runs.iter()
        .any(|r| matches!(r.kind, RichKind::PageLink { target: None, .. }))
}

impl LinkBody {
    /// The record of a block whose own text holds a link to a page not migrated yet (`None`
    /// otherwise; a table's links are in its rows, see [`Self::of_row`]).
    pub fn of(b: &Block) -> Option<LinkBody> {
        let (field, mentions, runs) = match b {
            Block::Table { .. } => return None,
            Block::Code { rich_text, .. } => ("rich_text", false, rich_text),
            Block::Image { caption, .. }
            | Block::File { caption, .. }
            | Block::Pdf { caption, .. } => ("caption", false, caption),
            other => ("rich_text", true, &other.text()?.rich_text),
        };
        unresolved(runs).then(|| LinkBody {
            kind: b.type_name().to_owned(),
            field: field.to_owned(),
            mentions,
            runs: runs_of(runs, mentions),
        })
    }

    /// The record of a table row whose cells hold a link to a page not migrated yet.
    pub fn of_row(cells: &[Vec<RichText>]) -> Option<LinkBody> {
        cells.iter().any(|c| unresolved(c)).then(|| LinkBody {
            kind: "table_row".into(),
            field: "cells".into(),
            mentions: true,
            runs: Value::Array(cells.iter().map(|c| runs_of(c, true)).collect()),
        })
    }

    /// The block update that sends the recorded text with each link pointing at its page where
    /// `target` knows it (else kept as text naming the OneNote page, as written). `None`: a record
    /// this version cannot read.
    pub fn update(&self, mut target: impl FnMut(&str) -> Option<PageTarget>) -> Option<Update> {
        let (mut resolved, mut unresolved) = (0, 0);
        let mut field = |runs: &Value| -> Option<Value> {
            let runs = runs.as_array()?;
            let mut out = Vec::with_capacity(runs.len());
            for r in runs {
                out.push(match serde_json::from_value::<Run>(r.clone()).ok()? {
                    Run::Sent(v) => v,
                    Run::Page {
                        content,
                        page,
                        annotations,
                    } => {
                        let t = target(&page);
                        match t {
                            Some(_) => resolved += 1,
                            None => unresolved += 1,
                        }
                        let run = RichText {
                            kind: RichKind::PageLink {
                                content,
                                onenote_page_id: page,
                                target: t,
                            },
                            annotations: Default::default(),
                        };
                        let mut v = run.to_json_in(self.mentions);
                        if let Some(a) = annotations {
                            v["annotations"] = a;
                        }
                        v
                    }
                });
            }
            Some(Value::Array(out))
        };
        let value = if self.field == "cells" {
            let cells = self.runs.as_array()?;
            let mut out = Vec::with_capacity(cells.len());
            for c in cells {
                out.push(field(c)?);
            }
            Value::Array(out)
        } else {
            field(&self.runs)?
        };
        Some(Update {
            body: json!({ self.kind.as_str(): { self.field.as_str(): value } }),
            resolved,
            unresolved,
        })
    }

    /// The stored text of the record of block `id`.
    pub fn row(&self, id: &str) -> LinkRow {
        LinkRow {
            block_id: id.to_owned(),
            body: serde_json::to_string(self).expect("a link record serialises"),
        }
    }

    /// A stored record read back (`None`: not one this version wrote).
    pub fn of_row_text(text: &str) -> Option<LinkBody> {
        serde_json::from_str(text).ok()
    }
}

/// A short stable mark of what a step sends (FNV-1a of its description and its blocks' types).
pub(crate) fn mark(describe: &str, kinds: &[&str]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in describe
        .bytes()
        .chain(kinds.iter().flat_map(|k| k.bytes().chain([b','])))
    {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{h:016x}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::convert::{Annotations, TextBlock};

    fn link(content: &str, page: &str, bold: bool) -> RichText {
        RichText {
            kind: RichKind::PageLink {
                content: content.into(),
                onenote_page_id: page.into(),
                target: None,
            },
            annotations: Annotations {
                bold,
                ..Annotations::default()
            },
        }
    }

    fn target(id: &str, title: &str) -> PageTarget {
        PageTarget {
            id: id.into(),
            title: title.into(),
        }
    }

    #[test]
    fn a_recorded_block_is_sent_again_with_its_links_resolved_as_the_writer_would() {
        let runs = vec![
            RichText::plain("See "),
            link("Plan", "{A}", true),
            RichText::plain(" and "),
            link("my notes", "{B}", false),
        ];
        let b = Block::Paragraph(TextBlock::new(runs.clone()));
        let rec = LinkBody::of(&b).expect("it holds links to pages not migrated");
        let back = LinkBody::of_row_text(&rec.row("x").body).unwrap();
        assert_eq!(back, rec);
        // Only A is migrated: B stays text naming its OneNote page, as written.
        let u = back
            .update(|p| (p == "{A}").then(|| target("a-id", "Plan")))
            .unwrap();
        assert_eq!((u.resolved, u.unresolved), (1, 1));
        let body = u.body;
        let mut want = runs.clone();
        if let RichKind::PageLink { target: t, .. } = &mut want[1].kind {
            *t = Some(target("a-id", "Plan"));
        }
        let expect = Block::Paragraph(TextBlock::new(want.clone())).to_json();
        assert_eq!(
            body["paragraph"]["rich_text"],
            expect["paragraph"]["rich_text"]
        );
        assert_eq!(body["paragraph"]["rich_text"][1]["type"], "mention");
        assert_eq!(
            body["paragraph"]["rich_text"][1]["annotations"]["bold"],
            true
        );
        // Both migrated: every link points at Notion.
        let u = back.update(|p| Some(target(p, "other"))).unwrap();
        assert_eq!((u.resolved, u.unresolved), (2, 0));
        let body = u.body;
        assert!(!body.to_string().contains("OneNote page"), "{body}");
        // A block without links to unmigrated pages is not recorded.
        assert!(
            LinkBody::of(&Block::Paragraph(TextBlock::new(vec![RichText::plain(
                "x"
            )])))
            .is_none()
        );
    }

    #[test]
    fn a_rows_cells_and_a_caption_are_recorded_where_notion_holds_them() {
        let cells = vec![vec![RichText::plain("a")], vec![link("Plan", "{A}", false)]];
        let rec = LinkBody::of_row(&cells).unwrap();
        let u = rec.update(|_| Some(target("a-id", "Plan"))).unwrap();
        assert_eq!(u.unresolved, 0);
        let body = u.body;
        assert_eq!(body["table_row"]["cells"][0][0]["text"]["content"], "a");
        assert_eq!(body["table_row"]["cells"][1][0]["type"], "mention");
        let img = Block::Image {
            source: crate::convert::MediaSource::External("https://x.example/a.png".into()),
            caption: vec![link("Plan", "{A}", false)],
        };
        let rec = LinkBody::of(&img).unwrap();
        let body = rec.update(|_| Some(target("a-id", "Plan"))).unwrap().body;
        // Captions take no mentions: a link to the page.
        assert_eq!(
            body["image"]["caption"][0]["text"]["link"]["url"],
            "https://www.notion.so/aid"
        );
    }

    #[test]
    fn marks_tell_steps_apart() {
        assert_eq!(mark("a", &["paragraph"]), mark("a", &["paragraph"]));
        assert_ne!(mark("a", &["paragraph"]), mark("a", &["quote"]));
        assert_ne!(
            mark("a", &["paragraph", "quote"]),
            mark("a", &["paragraphquote"])
        );
    }
}
