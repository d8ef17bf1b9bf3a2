//! Splitting a block tree into requests Notion accepts: at most 100 children per array, two levels of
//! nesting per request, 1000 block elements and 500 KB per request.
//!
//! A block goes out together with its children when none of them has children of its own (and none
//! is a table, whose rows would be a third level). Otherwise it goes out bare and its children are
//! appended to the id Notion returns for it, by the same rule. Children past the first 100 (or past the
//! byte budget) are appended to the block's id afterwards; so are a big table's later rows. Listing
//! children to learn ids is needed only for the blocks sent with a page's creation, whose answer is
//! the page, not its blocks.

use serde_json::Value;

/// Most children in one array.
pub const MAX_CHILDREN: usize = 100;
/// Most block elements in one request.
pub const MAX_BLOCKS_PER_REQUEST: usize = 1000;
/// Largest request body we send (Notion's limit is 500 KB; keep headroom for the envelope).
pub const MAX_REQUEST_BYTES: usize = 480 * 1000;

/// A block prepared for one request, and what must follow it once Notion has given it an id.
#[derive(Clone, Debug, PartialEq)]
pub struct Prepared {
    /// The block as it goes in this request (children included or removed).
    pub block: Value,
    /// How many of its children travel with it (they are the first `carried` of its children).
    pub carried: usize,
    /// Children to append to this block's id afterwards, after the carried ones (empty when none).
    pub deferred: Vec<Value>,
}

/// The type payload of a block (`block[block.type]`), if well formed.
fn payload(block: &Value) -> Option<&Value> {
    let t = block_type(block)?;
    block.get(t)
}

/// The block's type name: `type` when present, else the one key that is not `object`/`type`.
pub fn block_type(block: &Value) -> Option<&str> {
    if let Some(t) = block.get("type").and_then(Value::as_str) {
        return Some(t);
    }
    block
        .as_object()?
        .keys()
        .find(|k| *k != "object" && *k != "type")
        .map(String::as_str)
}

/// The block's children as given in the tree (empty when none).
pub fn children(block: &Value) -> &[Value] {
    payload(block)
        .and_then(|p| p.get("children"))
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[])
}

fn has_children(block: &Value) -> bool {
    !children(block).is_empty()
}

fn set_children(block: &mut Value, kids: Option<Vec<Value>>) {
    let Some(t) = block_type(block).map(str::to_owned) else {
        return;
    };
    if let Some(p) = block.get_mut(&t).and_then(Value::as_object_mut) {
        match kids {
            Some(k) => {
                p.insert("children".into(), Value::Array(k));
            }
            None => {
                p.remove("children");
            }
        }
    }
}

/// Tables must be created with at least one row; rows past the first request's worth are appended to
/// the table's id like any other children.
fn is_table(block: &Value) -> bool {
    block_type(block) == Some("table")
}

/// Bytes a value takes in a request body.
fn json_len(v: &Value) -> usize {
    v.to_string().len()
}

/// How many of `kids` fit with their parent in one request: at most 100, and within the byte budget
/// left by the parent itself (at least `min`).
fn carry_count(parent_len: usize, kids: &[Value], min: usize) -> usize {
    let mut bytes = parent_len;
    let mut n = 0;
    for k in kids.iter().take(MAX_CHILDREN) {
        bytes += json_len(k) + 1;
        if bytes > MAX_REQUEST_BYTES && n >= min {
            break;
        }
        n += 1;
    }
    n
}

/// Prepares one first-level block of a request.
///
/// A block travels with its children only when none of them has children (or is a table). Sending a
/// block with children that have children of their own would leave those grandchildren to be appended
/// to ids Notion does not return (an append answers only first-level blocks), costing a listing per
/// child; sending the block bare instead costs one append whose answer gives every child's id. So this
/// rule never costs more requests than the alternative (see `tests/notion_writer.rs` for the count).
pub fn prepare(block: &Value) -> Prepared {
    let kids = children(block);
    if kids.is_empty() {
        return Prepared {
            block: block.clone(),
            carried: 0,
            deferred: Vec::new(),
        };
    }
    let table = is_table(block);
    let shallow = table || kids.iter().all(|k| !has_children(k) && !is_table(k));
    let mut b = block.clone();
    if shallow {
        set_children(&mut b, None);
        let n = carry_count(json_len(&b), kids, usize::from(table));
        if n == 0 {
            return Prepared {
                block: b,
                carried: 0,
                deferred: kids.to_vec(),
            };
        }
        set_children(&mut b, Some(kids[..n].to_vec()));
        Prepared {
            block: b,
            carried: n,
            deferred: kids[n..].to_vec(),
        }
    } else {
        set_children(&mut b, None);
        Prepared {
            block: b,
            carried: 0,
            deferred: kids.to_vec(),
        }
    }
}

/// Counts the block elements of a prepared block (itself and what it carries).
pub fn element_count(block: &Value) -> usize {
    // Iterative: a hand-made tree may be as deep as it likes.
    let mut n = 0;
    let mut stack = vec![block];
    while let Some(b) = stack.pop() {
        n += 1;
        stack.extend(children(b));
    }
    n
}

/// Groups prepared blocks into requests within every per-request limit, keeping order.
pub fn chunk(prepared: &[Prepared]) -> Vec<std::ops::Range<usize>> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut blocks = 0;
    let mut bytes = 0;
    for (i, p) in prepared.iter().enumerate() {
        let n = element_count(&p.block);
        let b = p.block.to_string().len() + 1;
        let full = i - start >= MAX_CHILDREN
            || blocks + n > MAX_BLOCKS_PER_REQUEST
            || bytes + b > MAX_REQUEST_BYTES;
        if full && i > start {
            out.push(start..i);
            start = i;
            blocks = 0;
            bytes = 0;
        }
        blocks += n;
        bytes += b;
    }
    if start < prepared.len() {
        out.push(start..prepared.len());
    }
    out
}

/// Prepares the blocks at the front of `blocks` that go in one request (at least one), by the rules
/// of [`chunk`]. A long body is prepared a request at a time, so a page's request JSON is never held
/// twice whole.
pub fn next_request(blocks: &[Value]) -> Vec<Prepared> {
    let mut out = Vec::new();
    let mut elements = 0;
    let mut bytes = 0;
    for b in blocks {
        let p = prepare(b);
        let n = element_count(&p.block);
        let len = json_len(&p.block) + 1;
        let full = out.len() >= MAX_CHILDREN
            || elements + n > MAX_BLOCKS_PER_REQUEST
            || bytes + len > MAX_REQUEST_BYTES;
        if full && !out.is_empty() {
            break;
        }
        elements += n;
        bytes += len;
        out.push(p);
    }
    out
}

/// The shape of a body: the number of children of the page and then of every block, level by level
/// (breadth first, in order), hashed. Block types are left out on purpose: a file that could not be
/// carried over is replaced one for one by a placeholder paragraph.
pub fn shape(blocks: &[Value]) -> String {
    let mut counts = vec![blocks.len()];
    let mut queue: std::collections::VecDeque<&Value> = blocks.iter().collect();
    while let Some(b) = queue.pop_front() {
        let kids = children(b);
        counts.push(kids.len());
        queue.extend(kids.iter());
    }
    shape_of_counts(&counts)
}

/// [`shape`] from the level-order child counts (the page first).
pub fn shape_of_counts(counts: &[usize]) -> String {
    // FNV-1a over the counts: stable across versions and platforms.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for c in counts {
        for byte in (*c as u64).to_le_bytes() {
            h ^= u64::from(byte);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    format!("{h:016x}")
}

/// The depth of the deepest nesting under `block` (a leaf is 1).
pub fn depth(block: &Value) -> usize {
    let mut deepest = 0;
    let mut stack = vec![(block, 1)];
    while let Some((b, d)) = stack.pop() {
        deepest = deepest.max(d);
        stack.extend(children(b).iter().map(|k| (k, d + 1)));
    }
    deepest
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn para(t: &str) -> Value {
        json!({"type": "paragraph", "paragraph": {"rich_text": [{"type": "text", "text": {"content": t}}]}})
    }

    fn item(t: &str, kids: Vec<Value>) -> Value {
        let mut b = json!({"type": "bulleted_list_item", "bulleted_list_item": {"rich_text": [{"type": "text", "text": {"content": t}}]}});
        if !kids.is_empty() {
            b["bulleted_list_item"]["children"] = Value::Array(kids);
        }
        b
    }

    #[test]
    fn shallow_children_travel_with_their_parent() {
        let b = item("a", vec![para("x"), para("y")]);
        let p = prepare(&b);
        assert_eq!(p.block, b);
        assert!(p.deferred.is_empty());
    }

    #[test]
    fn deep_children_are_deferred_whole() {
        let b = item("a", vec![item("b", vec![para("c")]), para("d")]);
        let p = prepare(&b);
        assert_eq!(children(&p.block).len(), 0);
        assert_eq!(p.deferred.len(), 2);
        // and the deferred ones follow the same rule
        let q = prepare(&p.deferred[0]);
        assert_eq!(children(&q.block).len(), 1);
    }

    #[test]
    fn more_than_100_children_spill_into_later_appends() {
        let kids: Vec<Value> = (0..250).map(|i| para(&i.to_string())).collect();
        let p = prepare(&item("a", kids));
        assert_eq!(children(&p.block).len(), 100);
        assert_eq!(p.deferred.len(), 150);
    }

    #[test]
    fn tables_keep_their_rows_and_are_never_second_level() {
        let table = json!({"type": "table", "table": {"table_width": 1, "has_column_header": false, "has_row_header": false,
            "children": [{"type": "table_row", "table_row": {"cells": [[]]}}]}});
        let p = prepare(&table);
        assert_eq!(children(&p.block).len(), 1);
        let holder = item("a", vec![table.clone()]);
        let p = prepare(&holder);
        assert!(children(&p.block).is_empty());
        assert_eq!(p.deferred, vec![table]);
    }

    #[test]
    fn big_tables_carry_100_rows_and_append_the_rest() {
        let row = json!({"type": "table_row", "table_row": {"cells": [[]]}});
        let table = json!({"type": "table", "table": {"table_width": 1, "has_column_header": false,
            "has_row_header": false, "children": vec![row.clone(); 230]}});
        let p = prepare(&table);
        assert_eq!((children(&p.block).len(), p.carried), (100, 100));
        assert_eq!(p.deferred.len(), 130);
    }

    #[test]
    fn carried_children_stay_within_the_byte_budget() {
        // 100 children of ~10 KB each would be ~1 MB: only part of them travels with the parent
        let kids: Vec<Value> = (0..100).map(|_| para(&"é".repeat(1999))).collect();
        let heavy: Vec<Value> = kids
            .iter()
            .map(|k| {
                let mut k = k.clone();
                let rt = k["paragraph"]["rich_text"][0].clone();
                k["paragraph"]["rich_text"] = Value::Array(vec![rt; 3]);
                k
            })
            .collect();
        let p = prepare(&item("a", heavy.clone()));
        assert!(p.carried > 0 && p.carried < 100, "{}", p.carried);
        assert!(p.block.to_string().len() <= MAX_REQUEST_BYTES);
        assert_eq!(p.carried + p.deferred.len(), 100);
        assert_eq!(&heavy[p.carried..], p.deferred.as_slice());
    }

    #[test]
    fn chunks_respect_count_elements_and_bytes() {
        let flat: Vec<Prepared> = (0..250).map(|i| prepare(&para(&i.to_string()))).collect();
        let c = chunk(&flat);
        assert_eq!(c, vec![0..100, 100..200, 200..250]);

        // 100 items with 10 children each = 1100 elements: must split by elements
        let heavy: Vec<Prepared> = (0..100)
            .map(|_| prepare(&item("x", (0..10).map(|_| para("y")).collect())))
            .collect();
        let c = chunk(&heavy);
        assert!(c.len() >= 2);
        for r in &c {
            let n: usize = heavy[r.clone()]
                .iter()
                .map(|p| element_count(&p.block))
                .sum();
            assert!(n <= MAX_BLOCKS_PER_REQUEST);
        }

        // big text: bytes bound
        let big: Vec<Prepared> = (0..100)
            .map(|_| prepare(&para(&"z".repeat(1999))))
            .collect();
        for r in chunk(&big) {
            let bytes: usize = big[r].iter().map(|p| p.block.to_string().len()).sum();
            assert!(bytes <= MAX_REQUEST_BYTES);
        }
    }

    #[test]
    fn requests_prepared_one_at_a_time_split_as_chunk_does() {
        let body: Vec<Value> = (0..700)
            .map(|i| match i % 7 {
                0 => item("x", (0..(i % 13)).map(|_| para("y")).collect()),
                1 => para(&"z".repeat(1999)),
                _ => para(&i.to_string()),
            })
            .collect();
        let all: Vec<Prepared> = body.iter().map(prepare).collect();
        let mut at = 0;
        let mut got = Vec::new();
        while at < body.len() {
            let part = next_request(&body[at..]);
            assert_eq!(part.as_slice(), &all[at..at + part.len()]);
            got.push(at..at + part.len());
            at += part.len();
        }
        assert_eq!(got, chunk(&all));
        assert!(next_request(&[]).is_empty());
    }
}
