//! Steps checked without a server: the rules by example, a snapshot of a mixed page's steps, and
//! properties over random trees (every request within Notion's limits, every block in exactly one
//! step, order kept, parents resolved, each file uploaded right before its block is sent).

use std::collections::{HashMap, HashSet};

use proptest::prelude::*;

use super::*;
use crate::convert::{RichText, TextBlock};

fn para(t: &str) -> Block {
    Block::Paragraph(TextBlock::new(vec![RichText::plain(t)]))
}

fn item(t: &str, kids: Vec<Block>) -> Block {
    Block::Bulleted(TextBlock {
        children: kids,
        ..TextBlock::new(vec![RichText::plain(t)])
    })
}

fn table(rows: usize) -> Block {
    Block::Table {
        width: 1,
        has_column_header: false,
        rows: (0..rows)
            .map(|i| vec![vec![RichText::plain(i.to_string())]])
            .collect(),
    }
}

fn image(url: &str) -> Block {
    Block::Image {
        source: MediaSource::Resource {
            url: url.into(),
            file_name: None,
            mime: None,
            fallback: None,
        },
        caption: Vec::new(),
    }
}

fn sends(steps: &[Step]) -> Vec<&Items> {
    steps.iter().filter_map(Step::items).collect()
}

#[test]
fn shallow_children_travel_with_their_parent() {
    let blocks = vec![item("a", vec![para("x"), para("y")])];
    let steps: Vec<Step> = Steps::new_page(&blocks).collect();
    assert_eq!(steps.len(), 1);
    assert_eq!(
        steps[0],
        Step::CreatePage {
            items: Items::Blocks {
                under: vec![],
                range: 0..1,
                carried: vec![2]
            }
        }
    );
    let json = request_json(&blocks, steps[0].items().unwrap(), |b, _| {
        b.to_json_shallow()
    });
    assert_eq!(
        json,
        vec![blocks[0].to_json()],
        "the same JSON as the block"
    );
}

#[test]
fn deep_children_are_deferred_whole_to_the_block_the_step_created() {
    let blocks = vec![item("a", vec![item("b", vec![para("c")]), para("d")])];
    let steps: Vec<Step> = Steps::body(&blocks).collect();
    let lines: Vec<String> = steps.iter().map(Step::describe).collect();
    assert_eq!(
        lines,
        [
            "append blocks top[0..1] carrying 0 to the page",
            "append blocks 0[0..2] carrying 1 to block 0 of step 0",
        ]
    );
}

#[test]
fn more_than_100_children_spill_into_later_appends() {
    let blocks = vec![item("a", (0..250).map(|i| para(&i.to_string())).collect())];
    let lines: Vec<String> = Steps::new_page(&blocks).map(|s| s.describe()).collect();
    assert_eq!(
        lines,
        [
            "create the page with blocks top[0..1] carrying 100",
            "append blocks 0[100..200] carrying 0 to block 0 of step 0",
            "append blocks 0[200..250] carrying 0 to block 0 of step 0",
        ]
    );
}

#[test]
fn tables_carry_100_rows_append_the_rest_and_are_never_second_level() {
    let blocks = vec![table(230), item("holder", vec![table(2)])];
    let lines: Vec<String> = Steps::new_page(&blocks).map(|s| s.describe()).collect();
    assert_eq!(
        lines,
        [
            "create the page with blocks top[0..2] carrying 100",
            "append rows 0[100..200] to block 0 of step 0",
            "append rows 0[200..230] to block 0 of step 0",
            "append blocks 1[0..1] carrying 2 to block 1 of step 0",
        ]
    );
}

#[test]
fn carried_children_stay_within_the_byte_budget() {
    // 100 children of ~18 KB each would be ~1.8 MB: only part of them travels with the parent.
    let heavy: Vec<Block> = (0..100)
        .map(|_| Block::Paragraph(TextBlock::new(vec![RichText::plain("é".repeat(1999)); 3])))
        .collect();
    let blocks = vec![item("a", heavy)];
    let steps: Vec<Step> = Steps::new_page(&blocks).collect();
    let Some(Items::Blocks { carried, .. }) = steps[0].items() else {
        panic!("{steps:?}");
    };
    assert!(carried[0] > 0 && carried[0] < 100, "{carried:?}");
    for s in &steps {
        let json = request_json(&blocks, s.items().unwrap(), |b, _| b.to_json_shallow());
        let bytes: usize = json.iter().map(|v| v.to_string().len() + 1).sum();
        assert!(bytes <= MAX_REQUEST_BYTES, "{bytes}");
    }
    let rest: usize = sends(&steps)[1..].iter().map(|i| i.len()).sum();
    assert_eq!(carried[0] + rest, 100, "the rest appended after");
}

#[test]
fn an_empty_page_is_created_without_blocks_and_an_empty_body_has_no_steps() {
    let steps: Vec<Step> = Steps::new_page(&[]).collect();
    assert_eq!(steps.len(), 1);
    assert!(steps[0].items().unwrap().is_empty());
    assert_eq!(Steps::body(&[]).count(), 0);
}

#[test]
fn the_shape_of_typed_blocks_is_the_shape_of_their_json() {
    let blocks = vec![
        item("a", vec![item("b", vec![para("c")]), table(3)]),
        para("d"),
        table(2),
    ];
    let json: Vec<Value> = blocks.iter().map(Block::to_json).collect();
    assert_eq!(shape(&blocks), crate::notion::split::shape(&json));
    assert_eq!(element_count(&blocks), 11);
    let deepest = json.iter().map(crate::notion::split::depth).max();
    assert_eq!(Some(depth(&blocks)), deepest);
    assert_eq!(depth(&blocks), 3);
}

#[test]
fn a_mixed_pages_steps_are_as_the_snapshot_says() {
    let mut deep = para("leaf");
    for d in (1..5).rev() {
        deep = item(
            &format!("level {d}"),
            vec![deep, para(&format!("side {d}"))],
        );
    }
    let mut blocks = vec![
        para("start"),
        image("https://graph.example/r/0/$value"),
        deep,
    ];
    blocks.push(table(130));
    blocks.push(item(
        "wide",
        (0..150)
            .map(|i| match i {
                7 => image("https://graph.example/r/1/$value"),
                _ => para(&format!("w{i}")),
            })
            .collect(),
    ));
    blocks.extend((0..120).map(|i| para(&format!("p{i}"))));
    let steps: Vec<String> = Steps::new_page(&blocks)
        .enumerate()
        .map(|(n, s)| format!("{n}: {}", s.describe()))
        .collect();
    insta::assert_snapshot!("mixed_page_steps", steps.join("\n"));
}

/// Every block or table row of the tree, by path (a row's path ends in its row index).
fn all_nodes(blocks: &[Block]) -> Vec<Path> {
    let mut out = Vec::new();
    let mut stack: Vec<Path> = (0..blocks.len()).rev().map(|i| vec![i]).collect();
    while let Some(p) = stack.pop() {
        let b = block_at(blocks, &p).unwrap();
        out.push(p.clone());
        let n = kid_count(b);
        for j in (0..n).rev() {
            let mut q = p.clone();
            q.push(j);
            match b {
                Block::Table { .. } => out.push(q),
                _ => stack.push(q),
            }
        }
    }
    out
}

/// Checks every property of the steps of `blocks`; `new` whether it creates the page.
fn check_steps(blocks: &[Block], new: bool) -> Result<(), TestCaseError> {
    let steps: Vec<Step> = if new {
        Steps::new_page(blocks).collect()
    } else {
        Steps::body(blocks).collect()
    };
    let mut covered: HashMap<Path, usize> = HashMap::new();
    // How many children of each parent have been sent, in order.
    let mut sent: HashMap<Path, usize> = HashMap::new();
    let mut uploads_pending: Vec<Path> = Vec::new();
    let mut uploaded: HashSet<Path> = HashSet::new();
    let mut first_send = true;
    for (n, step) in steps.iter().enumerate() {
        let items = match step {
            Step::Upload { block } => {
                prop_assert!(needs_upload(block_at(blocks, block).unwrap()));
                uploads_pending.push(block.clone());
                continue;
            }
            Step::CreatePage { items } => {
                prop_assert!(new && first_send, "the page is created first, once");
                items
            }
            Step::Append { parent, items } => {
                prop_assert!(!(new && first_send), "a new page's steps start with it");
                // The parent is the page or a block an earlier send created: that very block.
                match parent {
                    Parent::Page => prop_assert!(items.parent_path().is_empty()),
                    Parent::Created { step: s, index } => {
                        prop_assert!(*s < n);
                        let Some(Items::Blocks { under, range, .. }) = steps[*s].items() else {
                            return Err(TestCaseError::fail(format!("step {s} sends no blocks")));
                        };
                        let mut p = under.clone();
                        p.push(range.start + index);
                        prop_assert!(*index < range.len());
                        prop_assert_eq!(&p[..], items.parent_path());
                    }
                }
                items
            }
        };
        first_send = false;
        // Notion's limits.
        prop_assert!(items.len() <= MAX_CHILDREN, "{} first-level", items.len());
        prop_assert!(items.elements() <= MAX_BLOCKS_PER_REQUEST);
        let json = request_json(blocks, items, |b, _| b.to_json_shallow());
        let bytes: usize = json.iter().map(|v| v.to_string().len() + 1).sum();
        prop_assert!(
            bytes <= MAX_REQUEST_BYTES || items.len() == 1,
            "{bytes} bytes"
        );
        // In order: each parent's children go out from the first, without gaps.
        let at = sent.entry(items.parent_path().to_vec()).or_insert(0);
        prop_assert_eq!(*at, items.before(), "children sent in order");
        *at += items.len();
        let mut here: Vec<Path> = Vec::new();
        match items {
            Items::Rows { table, range } => {
                for r in range.clone() {
                    let mut p = table.clone();
                    p.push(r);
                    here.push(p);
                }
            }
            Items::Blocks {
                under,
                range,
                carried,
            } => {
                for (i, c) in range.clone().zip(carried) {
                    let mut p = under.clone();
                    p.push(i);
                    let b = block_at(blocks, &p).unwrap();
                    prop_assert!(*c <= kid_count(b) && *c <= MAX_CHILDREN);
                    if matches!(b, Block::Table { .. }) {
                        prop_assert!(*c >= 1, "a table goes with a row");
                    }
                    // Two levels per request: what is carried has nothing under it.
                    if let Block::Table { .. } = b {
                    } else {
                        for k in &b.children()[..*c] {
                            prop_assert_eq!(kid_count(k), 0);
                            let nested_table = matches!(k, Block::Table { .. });
                            prop_assert!(!nested_table, "a table is never carried");
                        }
                    }
                    sent.insert(p.clone(), *c);
                    for j in 0..*c {
                        let mut q = p.clone();
                        q.push(j);
                        here.push(q);
                    }
                    here.push(p);
                }
            }
        }
        // Each file goes up right before the send of its block, and only then.
        let media: Vec<Path> = here
            .iter()
            .filter(|p| block_at(blocks, p).is_some_and(needs_upload))
            .filter(|_| matches!(items, Items::Blocks { .. }))
            .cloned()
            .collect();
        let mut pending = std::mem::take(&mut uploads_pending);
        pending.sort();
        let mut want = media.clone();
        want.sort();
        prop_assert_eq!(pending, want, "uploads of step {}", n);
        uploaded.extend(media);
        for p in here {
            *covered.entry(p).or_insert(0) += 1;
        }
    }
    prop_assert!(uploads_pending.is_empty());
    let nodes = all_nodes(blocks);
    prop_assert_eq!(covered.len(), nodes.len(), "every block in a step");
    for p in &nodes {
        prop_assert_eq!(covered.get(p), Some(&1), "{:?} in exactly one step", p);
    }
    Ok(())
}

fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        16 => "[a-z ]{0,20}",
        1 => Just("é".repeat(1999)),
    ]
}

fn leaf() -> impl Strategy<Value = Block> {
    prop_oneof![
        6 => text().prop_map(|t| para(&t)),
        1 => (1usize..230).prop_map(table),
        1 => (0u32..1000).prop_map(|i| image(&format!("https://graph.example/r/{i}/$value"))),
    ]
}

fn tree() -> impl Strategy<Value = Block> {
    leaf().prop_recursive(6, 150, 110, |inner| {
        (
            text(),
            prop_oneof![
                4 => prop::collection::vec(inner.clone(), 0..6),
                1 => prop::collection::vec(inner, 90..140),
            ],
        )
            .prop_map(|(t, kids)| item(&t, kids))
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn every_pages_steps_keep_notions_limits_every_block_once_in_order_with_parents_resolved(
        blocks in prop::collection::vec(tree(), 0..40),
        new in any::<bool>(),
    ) {
        check_steps(&blocks, new)?;
    }
}
