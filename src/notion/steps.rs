//! A page's write steps: its typed blocks turned into a flat list of steps Notion accepts, made in
//! the same order every time and before anything is written.
//!
//! A step creates the page with its first blocks, appends blocks under a parent, or uploads the file
//! of one media block (right before the step that sends that block). A parent is the page or the
//! block an earlier step created ([`Parent::Created`]), so the writer only has to remember what each
//! step learned. Steps refer to the typed tree by position ([`Items`]), never copy it: the request
//! JSON is made when a step is sent, one request at a time, and the steps are produced lazily
//! ([`Steps`] is an iterator) so a long page is never held twice.
//!
//! Notion's rules live here: at most [`MAX_CHILDREN`] children per array, two levels of nesting per
//! request, [`MAX_BLOCKS_PER_REQUEST`] block elements and [`MAX_REQUEST_BYTES`] per request. Texts
//! of at most 2,000 characters are the converter's guarantee ([`crate::convert::RichKind`]).
//!
//! A block goes out together with its children when none of them has children of its own (and none
//! is a table, whose rows would be a third level); a table always carries its first rows (Notion
//! refuses a table without one). Otherwise a block goes out bare and its children are appended to
//! the id Notion gives it, by the same rule. Children past the first 100 (or past the byte budget)
//! are appended to the block afterwards. Sending a block with children that have children would
//! leave those grandchildren to be appended to ids Notion does not return (an append answers only
//! first-level blocks), costing a listing per child; sending it bare costs one append whose answer
//! gives every child's id. So the rule never costs more requests than the alternative (see
//! `tests/it/notion_writer.rs` for the count). Children are written depth first, a request at a
//! time, so a kill leaves a prefix of the steps written and resuming finds where it stopped.

use std::collections::VecDeque;
use std::ops::Range;

use serde_json::Value;

use crate::convert::blocks::table_row_json;
use crate::convert::{Block, MediaSource, RichText};

/// Most children in one array.
pub const MAX_CHILDREN: usize = 100;
/// Most block elements in one request.
pub const MAX_BLOCKS_PER_REQUEST: usize = 1000;
/// Largest request body we send (Notion's limit is 500 KB; keep headroom for the envelope).
pub const MAX_REQUEST_BYTES: usize = 480 * 1000;

/// Where a block is in the page's tree: its index at the top level, then among its parent's
/// children, and so on down.
pub type Path = Vec<usize>;

/// What a step's blocks go under.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Parent {
    /// The page itself.
    Page,
    /// The `index`-th first-level block that step number `step` created.
    Created {
        /// The step's number among the page's steps.
        step: usize,
        /// The block's index among that step's blocks.
        index: usize,
    },
}

/// The blocks one request sends, by position in the typed tree.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Items {
    /// Children `range` of the block at `under` (the page's top level when `under` is empty), each
    /// with its first `carried[i]` children sent along (those have no children of their own).
    Blocks {
        /// The parent block's path (empty: the top level).
        under: Path,
        /// Which of its children.
        range: Range<usize>,
        /// For each of them, how many of its own children travel with it.
        carried: Vec<usize>,
    },
    /// Rows `range` of the table at `table`.
    Rows {
        /// The table's path.
        table: Path,
        /// Which rows.
        range: Range<usize>,
    },
}

impl Items {
    /// How many first-level blocks the request sends.
    pub fn len(&self) -> usize {
        match self {
            Items::Blocks { range, .. } | Items::Rows { range, .. } => range.len(),
        }
    }

    /// Whether it sends nothing (only a page created without a body).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// How many of the parent's children come before these (written by earlier steps).
    pub fn before(&self) -> usize {
        match self {
            Items::Blocks { range, .. } | Items::Rows { range, .. } => range.start,
        }
    }

    /// Block elements sent: the first-level blocks and what they carry.
    pub fn elements(&self) -> usize {
        match self {
            Items::Blocks { carried, .. } => carried.len() + carried.iter().sum::<usize>(),
            Items::Rows { range, .. } => range.len(),
        }
    }

    /// The parent's path (`under`, or the table's).
    pub fn parent_path(&self) -> &[usize] {
        match self {
            Items::Blocks { under, .. } => under,
            Items::Rows { table, .. } => table,
        }
    }
}

/// One step of a page's write.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    /// Upload the file of the media block at this path; the next send step sends that block.
    Upload {
        /// The media block.
        block: Path,
    },
    /// Create the page with these first-level blocks.
    CreatePage {
        /// The page's first blocks (children of the top level).
        items: Items,
    },
    /// Append these blocks under `parent`.
    Append {
        /// Where they go.
        parent: Parent,
        /// What goes.
        items: Items,
    },
}

impl Step {
    /// What the step sends, unless it is an upload.
    pub fn items(&self) -> Option<&Items> {
        match self {
            Step::CreatePage { items } | Step::Append { items, .. } => Some(items),
            Step::Upload { .. } => None,
        }
    }

    /// One line saying what the step does (for snapshots and logs).
    pub fn describe(&self) -> String {
        fn path(p: &[usize]) -> String {
            if p.is_empty() {
                "top".into()
            } else {
                p.iter().map(usize::to_string).collect::<Vec<_>>().join(".")
            }
        }
        fn items(i: &Items) -> String {
            match i {
                Items::Blocks {
                    under,
                    range,
                    carried,
                } => {
                    let c: usize = carried.iter().sum();
                    format!(
                        "blocks {}[{}..{}] carrying {c}",
                        path(under),
                        range.start,
                        range.end
                    )
                }
                Items::Rows { table, range } => {
                    format!("rows {}[{}..{}]", path(table), range.start, range.end)
                }
            }
        }
        match self {
            Step::Upload { block } => format!("upload the file of {}", path(block)),
            Step::CreatePage { items: i } => format!("create the page with {}", items(i)),
            Step::Append {
                parent: Parent::Page,
                items: i,
            } => format!("append {} to the page", items(i)),
            Step::Append {
                parent: Parent::Created { step, index },
                items: i,
            } => format!("append {} to block {index} of step {step}", items(i)),
        }
    }
}

/// The block at `path` in `blocks`, if there is one.
pub fn block_at<'a>(blocks: &'a [Block], path: &[usize]) -> Option<&'a Block> {
    let (first, rest) = path.split_first()?;
    let mut b = blocks.get(*first)?;
    for i in rest {
        b = b.children().get(*i)?;
    }
    Some(b)
}

/// The children (or a table's rows) of the block at `path`; the top level when `path` is empty.
fn kids_at<'a>(blocks: &'a [Block], path: &[usize]) -> Kids<'a> {
    if path.is_empty() {
        return Kids::Blocks(blocks);
    }
    block_at(blocks, path)
        .map(kids)
        .unwrap_or(Kids::Blocks(&[]))
}

/// A block's children as Notion sees them: blocks, or a table's rows.
#[derive(Clone, Copy)]
enum Kids<'a> {
    Blocks(&'a [Block]),
    Rows(&'a [Vec<Vec<RichText>>]),
}

impl Kids<'_> {
    fn len(&self) -> usize {
        match self {
            Kids::Blocks(b) => b.len(),
            Kids::Rows(r) => r.len(),
        }
    }

    /// Bytes child `i` takes in a request (it is sent with no children of its own).
    fn json_len(&self, i: usize) -> usize {
        match self {
            Kids::Blocks(b) => json_len(&b[i].to_json_shallow()),
            Kids::Rows(r) => json_len(&table_row_json(&r[i])),
        }
    }
}

fn kids(b: &Block) -> Kids<'_> {
    match b {
        Block::Table { rows, .. } => Kids::Rows(rows),
        other => Kids::Blocks(other.children()),
    }
}

fn kid_count(b: &Block) -> usize {
    kids(b).len()
}

/// Bytes a value takes in a request body.
fn json_len(v: &Value) -> usize {
    v.to_string().len()
}

/// Bytes of `"children":[]` and a comma around it.
const CHILDREN_ENVELOPE: usize = 14;

/// How one first-level block of a request goes: how many of its children travel with it, and what
/// it costs in elements and bytes.
struct Prep {
    carried: usize,
    elements: usize,
    bytes: usize,
}

/// How `b` goes out as a first-level block of a request (see the module's rule).
fn prepare(b: &Block) -> Prep {
    let bare = json_len(&b.to_json_shallow());
    let k = kids(b);
    let shallow = match k {
        Kids::Rows(_) => true,
        Kids::Blocks(kb) => kb
            .iter()
            .all(|c| kid_count(c) == 0 && !matches!(c, Block::Table { .. })),
    };
    if k.len() == 0 || !shallow {
        return Prep {
            carried: 0,
            elements: 1,
            bytes: bare,
        };
    }
    // A table needs at least one row whatever it weighs.
    let min = usize::from(matches!(k, Kids::Rows(_)));
    let mut bytes = bare + CHILDREN_ENVELOPE;
    let mut n = 0;
    for i in 0..k.len().min(MAX_CHILDREN) {
        let add = k.json_len(i) + 1;
        if bytes + add > MAX_REQUEST_BYTES && n >= min {
            break;
        }
        bytes += add;
        n += 1;
    }
    Prep {
        carried: n,
        elements: 1 + n,
        bytes: if n == 0 { bare } else { bytes },
    }
}

/// Whether a media block's file is uploaded by the writer (a OneNote resource or a file that came
/// inside the page), rather than fetched by Notion from its address.
pub fn needs_upload(b: &Block) -> bool {
    matches!(
        b.media(),
        Some(MediaSource::Resource { .. } | MediaSource::Embedded(_))
    )
}

/// Children of one parent still to be sent.
struct Frame {
    parent: Parent,
    /// The parent block's path (empty: the page).
    under: Path,
    /// The parent is a table: its rows are sent.
    rows: bool,
    next: usize,
    end: usize,
}

/// The steps of one page, produced one at a time (see the module doc); collect it for the whole
/// list.
pub struct Steps<'a> {
    blocks: &'a [Block],
    /// The page is created by the first step (else the body goes into an existing page).
    create: bool,
    /// Parents with children still to send; the innermost last.
    stack: Vec<Frame>,
    /// Steps made and not yet given out (a request's uploads, then its send).
    ready: VecDeque<Step>,
    /// Steps given out so far.
    given: usize,
}

impl<'a> Steps<'a> {
    /// The steps of a new page with body `blocks`: its creation with the first request's blocks,
    /// then the rest.
    pub fn new_page(blocks: &'a [Block]) -> Self {
        Self::with(blocks, true)
    }

    /// The steps of `blocks` as the body of a page that exists: appends only.
    pub fn body(blocks: &'a [Block]) -> Self {
        Self::with(blocks, false)
    }

    fn with(blocks: &'a [Block], create: bool) -> Self {
        Self {
            blocks,
            create,
            stack: vec![Frame {
                parent: Parent::Page,
                under: Vec::new(),
                rows: false,
                next: 0,
                end: blocks.len(),
            }],
            ready: VecDeque::new(),
            given: 0,
        }
    }

    /// Makes the next request of the innermost parent with children left, with its uploads.
    fn next_request(&mut self) -> bool {
        let blocks = self.blocks;
        let (items, under, parent, start) = loop {
            let Some(top) = self.stack.last_mut() else {
                return false;
            };
            if top.next >= top.end && !(self.create && top.under.is_empty()) {
                self.stack.pop();
                continue;
            }
            let start = top.next;
            let kids = kids_at(blocks, &top.under);
            let items = if top.rows {
                let mut bytes = 0;
                let mut end = start;
                while end < top.end && end - start < MAX_CHILDREN.min(MAX_BLOCKS_PER_REQUEST) {
                    let add = kids.json_len(end) + 1;
                    if bytes + add > MAX_REQUEST_BYTES && end > start {
                        break;
                    }
                    bytes += add;
                    end += 1;
                }
                Items::Rows {
                    table: top.under.clone(),
                    range: start..end,
                }
            } else {
                let Kids::Blocks(level) = kids else {
                    unreachable!("a frame of blocks lists blocks");
                };
                let (mut elements, mut bytes) = (0, 0);
                let mut carried = Vec::new();
                for b in &level[start..top.end] {
                    let p = prepare(b);
                    let full = carried.len() >= MAX_CHILDREN
                        || elements + p.elements > MAX_BLOCKS_PER_REQUEST
                        || bytes + p.bytes + 1 > MAX_REQUEST_BYTES;
                    if full && !carried.is_empty() {
                        break;
                    }
                    elements += p.elements;
                    bytes += p.bytes + 1;
                    carried.push(p.carried);
                }
                Items::Blocks {
                    under: top.under.clone(),
                    range: start..start + carried.len(),
                    carried,
                }
            };
            top.next = start + items.len();
            break (items, top.under.clone(), top.parent.clone(), start);
        };
        // The files of the blocks this request sends go up first, in page order.
        if let Items::Blocks { range, carried, .. } = &items {
            for (i, c) in range.clone().zip(carried) {
                let mut path = under.clone();
                path.push(i);
                let b = block_at(blocks, &path).expect("planned blocks exist");
                if needs_upload(b) {
                    self.ready.push_back(Step::Upload {
                        block: path.clone(),
                    });
                }
                for (j, kid) in b.children().iter().take(*c).enumerate() {
                    if needs_upload(kid) {
                        let mut p = path.clone();
                        p.push(j);
                        self.ready.push_back(Step::Upload { block: p });
                    }
                }
            }
        }
        let step = self.given + self.ready.len();
        // Deferred children go right after their parent's request, depth first: the first block's
        // on top of the stack.
        if let Items::Blocks { range, carried, .. } = &items {
            for (i, c) in range.clone().zip(carried.iter()).rev() {
                let mut path = under.clone();
                path.push(i);
                let b = block_at(blocks, &path).expect("planned blocks exist");
                let n = kid_count(b);
                if n > *c {
                    self.stack.push(Frame {
                        parent: Parent::Created {
                            step,
                            index: i - start,
                        },
                        under: path,
                        rows: matches!(b, Block::Table { .. }),
                        next: *c,
                        end: n,
                    });
                }
            }
        }
        let send = if self.create {
            self.create = false;
            Step::CreatePage { items }
        } else {
            Step::Append { parent, items }
        };
        self.ready.push_back(send);
        true
    }
}

impl Iterator for Steps<'_> {
    type Item = Step;

    fn next(&mut self) -> Option<Step> {
        loop {
            if let Some(s) = self.ready.pop_front() {
                self.given += 1;
                return Some(s);
            }
            if !self.next_request() {
                return None;
            }
        }
    }
}

/// The request JSON of one send: each block as `json` makes it (without children), its carried
/// children with it; a table's rows as they are.
pub fn request_json(
    blocks: &[Block],
    items: &Items,
    mut json: impl FnMut(&Block, &[usize]) -> Value,
) -> Vec<Value> {
    match items {
        Items::Rows { table, range } => {
            let Some(Block::Table { rows, .. }) = block_at(blocks, table) else {
                unreachable!("rows are planned for a table");
            };
            rows[range.clone()]
                .iter()
                .map(|r| table_row_json(r))
                .collect()
        }
        Items::Blocks {
            under,
            range,
            carried,
        } => {
            let mut out = Vec::with_capacity(range.len());
            let mut path = under.clone();
            for (i, c) in range.clone().zip(carried) {
                path.push(i);
                let b = block_at(blocks, &path).expect("planned blocks exist");
                let mut v = json(b, &path);
                if *c > 0 {
                    let kids: Vec<Value> = match b {
                        Block::Table { rows, .. } => {
                            rows[..*c].iter().map(|r| table_row_json(r)).collect()
                        }
                        other => other.children()[..*c]
                            .iter()
                            .enumerate()
                            .map(|(j, k)| {
                                path.push(j);
                                let v = json(k, &path);
                                path.pop();
                                v
                            })
                            .collect(),
                    };
                    // A media block replaced by a placeholder has no children to carry.
                    if let Some(p) = v.get_mut(b.type_name()).and_then(Value::as_object_mut) {
                        p.insert("children".into(), Value::Array(kids));
                    }
                }
                out.push(v);
                path.pop();
            }
            out
        }
    }
}

/// Counts the block elements of `blocks` at every depth, table rows included.
pub fn element_count(blocks: &[Block]) -> usize {
    // Iterative: a tree may be as deep as the input makes it.
    let mut n = 0;
    let mut stack: Vec<&Block> = blocks.iter().collect();
    while let Some(b) = stack.pop() {
        n += 1;
        match b {
            Block::Table { rows, .. } => n += rows.len(),
            other => stack.extend(other.children()),
        }
    }
    n
}

/// The depth of the deepest nesting in `blocks` (a leaf is 1, a table's rows are a level).
pub fn depth(blocks: &[Block]) -> usize {
    let mut deepest = 0;
    let mut stack: Vec<(&Block, usize)> = blocks.iter().map(|b| (b, 1)).collect();
    while let Some((b, d)) = stack.pop() {
        deepest = deepest.max(d);
        match b {
            Block::Table { rows, .. } if !rows.is_empty() => deepest = deepest.max(d + 1),
            other => stack.extend(other.children().iter().map(|k| (k, d + 1))),
        }
    }
    deepest
}

/// The shape of a body (see [`super::split::shape`]): the number of children of the page and then
/// of every block, level by level, hashed; table rows are children of their table.
pub fn shape(blocks: &[Block]) -> String {
    enum Node<'a> {
        Block(&'a Block),
        Row,
    }
    let mut counts = vec![blocks.len()];
    let mut queue: VecDeque<Node> = blocks.iter().map(Node::Block).collect();
    while let Some(n) = queue.pop_front() {
        match n {
            Node::Row => counts.push(0),
            Node::Block(Block::Table { rows, .. }) => {
                counts.push(rows.len());
                queue.extend(rows.iter().map(|_| Node::Row));
            }
            Node::Block(b) => {
                counts.push(b.children().len());
                queue.extend(b.children().iter().map(Node::Block));
            }
        }
    }
    super::split::shape_of_counts(&counts)
}

#[cfg(test)]
mod tests;
