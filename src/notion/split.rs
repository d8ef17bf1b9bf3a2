//! Reading Notion request JSON: a block's type and children, and the shape of a body (what
//! `verify` compares with what Notion holds). How a body is split into requests is decided by its write steps
//! ([`super::steps`]).

use serde_json::Value;

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

/// Counts the block elements of a block (itself and its children at every depth).
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

    #[test]
    fn types_children_counts_and_depth_are_read_from_the_json() {
        let b = json!({"type": "bulleted_list_item", "bulleted_list_item": {"rich_text": [],
            "children": [{"paragraph": {"rich_text": [],
                "children": [{"type": "divider", "divider": {}}]}}, {"type": "divider", "divider": {}}]}});
        assert_eq!(block_type(&b), Some("bulleted_list_item"));
        assert_eq!(
            block_type(&children(&b)[0]),
            Some("paragraph"),
            "no `type`: its one key"
        );
        assert_eq!(children(&b).len(), 2);
        assert_eq!((element_count(&b), depth(&b)), (4, 3));
        assert_eq!(
            shape(std::slice::from_ref(&b)),
            shape_of_counts(&[1, 2, 1, 0, 0])
        );
    }
}
