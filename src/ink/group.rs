//! Groups strokes into drawings as OneNote shows them, one rule for both routes (Graph's InkML and
//! a section file's ink objects): strokes that touch or nearly touch belong together; so do strokes
//! written one right after the other a little further apart (the words of a handwritten line), and
//! strokes OneNote recognised as one line of handwriting. Groups whose boxes overlap are merged, so
//! no two drawings are stacked on one another when placed on the page.
//!
//! Time and memory are bounded per page: the pairs compared are found by a sweep over the boxes
//! (along the page or down it, whichever compares fewer), the overlap merge is quadratic in the
//! number of groups at most, and a page with more than [`MAX_GROUPED_STROKES`] strokes, or whose
//! strokes are so dense that more than [`MAX_COMPARED_PAIRS`] pairs would be compared, is drawn as
//! one drawing rather than grouped.

use super::inkml::Stroke;

/// Strokes whose ink boxes are closer than this (CSS px, about 5 mm) belong together.
pub const TOUCH_PX: f64 = 19.0;
/// Strokes written within this time of each other (ms)...
pub const QUICK_MS: f64 = 1500.0;
/// ...belong together up to this distance (CSS px, 1 inch): the gap between handwritten words.
pub const QUICK_PX: f64 = 96.0;
/// Strokes grouped per page. Grouping compares nearby pairs, which on a page written edge to edge
/// grows with the square of the strokes; past this bound (tens of pages of handwriting on one page)
/// the page's ink is one drawing, which costs one pass over the strokes.
pub const MAX_GROUPED_STROKES: usize = 10_000;
/// Pairs of strokes compared per page. Strokes stacked so densely that a sweep would compare more
/// (thousands scribbled over one spot) overlap into one drawing anyway, so the page's ink is one
/// drawing; this bounds the grouping's time, whatever the layout.
pub const MAX_COMPARED_PAIRS: u64 = 4_000_000;

/// A box on the page, CSS px.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bounds {
    /// Left edge.
    pub left: f64,
    /// Top edge.
    pub top: f64,
    /// Right edge.
    pub right: f64,
    /// Bottom edge.
    pub bottom: f64,
}

impl Bounds {
    fn gap(&self, o: &Bounds) -> f64 {
        let dx = (o.left - self.right).max(self.left - o.right).max(0.0);
        let dy = (o.top - self.bottom).max(self.top - o.bottom).max(0.0);
        dx.max(dy)
    }

    fn union(&self, o: &Bounds) -> Bounds {
        Bounds {
            left: self.left.min(o.left),
            top: self.top.min(o.top),
            right: self.right.max(o.right),
            bottom: self.bottom.max(o.bottom),
        }
    }

    fn overlaps(&self, o: &Bounds) -> bool {
        self.left < o.right && o.left < self.right && self.top < o.bottom && o.top < self.bottom
    }
}

/// The ink box of one stroke: its points widened by half the pen width.
pub fn stroke_bounds(s: &Stroke) -> Bounds {
    let h = s.brush.width / 2.0;
    let mut b = Bounds {
        left: f64::INFINITY,
        top: f64::INFINITY,
        right: f64::NEG_INFINITY,
        bottom: f64::NEG_INFINITY,
    };
    for &(x, y) in &s.points {
        b.left = b.left.min(x - h);
        b.top = b.top.min(y - h);
        b.right = b.right.max(x + h);
        b.bottom = b.bottom.max(y + h);
    }
    b
}

/// The ink box of several strokes (at least one).
pub fn bounds<'a>(strokes: impl Iterator<Item = &'a Stroke>) -> Bounds {
    strokes
        .map(stroke_bounds)
        .reduce(|a, b| a.union(&b))
        .unwrap_or(Bounds {
            left: 0.0,
            top: 0.0,
            right: 0.0,
            bottom: 0.0,
        })
}

fn find(p: &mut [usize], mut i: usize) -> usize {
    while p[i] != i {
        p[i] = p[p[i]];
        i = p[i];
    }
    i
}

/// Groups strokes (indices into `strokes`); groups come in reading order (top, then left), strokes
/// inside a group in document order.
pub fn group(strokes: &[Stroke]) -> Vec<Vec<usize>> {
    group_lines(strokes, &[])
}

/// [`group`], where `lines[i]` (when given) is the recognised line of handwriting stroke `i` belongs
/// to: strokes of one recognised line are one drawing however far apart their words are.
pub fn group_lines(strokes: &[Stroke], lines: &[Option<u64>]) -> Vec<Vec<usize>> {
    let n = strokes.len();
    if n == 0 {
        return Vec::new();
    }
    if n > MAX_GROUPED_STROKES {
        return vec![(0..n).collect()];
    }
    let boxes: Vec<Bounds> = strokes.iter().map(stroke_bounds).collect();
    let mut parent: Vec<usize> = (0..n).collect();
    let join = |p: &mut Vec<usize>, a: usize, b: usize| {
        let (ra, rb) = (find(p, a), find(p, b));
        if ra != rb {
            p[ra.max(rb)] = ra.min(rb);
        }
    };
    // Touching: only boxes whose extents along an axis come within TOUCH_PX can, so sweep the
    // boxes along the axis that leaves fewer such pairs (lines of handwriting stacked on a page:
    // across; one tall column: down), comparing each with those that start before it ends.
    let (across, across_pairs) = sweep_order(&boxes, Axis::Across);
    let (down, down_pairs) = sweep_order(&boxes, Axis::Down);
    let (order, axis) = if down_pairs < across_pairs {
        (down, Axis::Down)
    } else {
        (across, Axis::Across)
    };
    if across_pairs.min(down_pairs) > MAX_COMPARED_PAIRS {
        return vec![(0..n).collect()];
    }
    for (k, &i) in order.iter().enumerate() {
        let reach = axis.end(&boxes[i]) + TOUCH_PX;
        for &j in &order[k + 1..] {
            if axis.start(&boxes[j]).total_cmp(&reach).is_gt() {
                break;
            }
            if boxes[i].gap(&boxes[j]) <= TOUCH_PX {
                join(&mut parent, i, j);
            }
        }
    }
    // Written one right after the other: consecutive in time, or in document order when the
    // strokes carry no times (the writer stores strokes in the order they were drawn).
    let mut order: Vec<usize> = (0..n).collect();
    if strokes.iter().all(|s| s.time_ms.is_some()) {
        order.sort_by(|&a, &b| {
            let (ta, tb) = (strokes[a].time_ms, strokes[b].time_ms);
            ta.unwrap_or(0.0)
                .total_cmp(&tb.unwrap_or(0.0))
                .then(a.cmp(&b))
        });
    }
    for w in order.windows(2) {
        let (a, b) = (w[0], w[1]);
        let dt = match (strokes[a].time_ms, strokes[b].time_ms) {
            (Some(ta), Some(tb)) => tb - ta,
            _ => 0.0,
        };
        if dt <= QUICK_MS && boxes[a].gap(&boxes[b]) <= QUICK_PX {
            join(&mut parent, a, b);
        }
    }
    // One recognised line: its first stroke stands for it.
    let mut line_first: std::collections::HashMap<u64, usize> = std::collections::HashMap::new();
    for (i, l) in lines.iter().enumerate().take(n) {
        if let Some(l) = l {
            let first = *line_first.entry(*l).or_insert(i);
            join(&mut parent, first, i);
        }
    }
    let mut groups: Vec<(Bounds, Vec<usize>)> = Vec::new();
    let mut slot: Vec<Option<usize>> = vec![None; n];
    for (i, b) in boxes.iter().enumerate() {
        let r = find(&mut parent, i);
        match slot[r] {
            Some(g) => {
                groups[g].0 = groups[g].0.union(b);
                groups[g].1.push(i);
            }
            None => {
                slot[r] = Some(groups.len());
                groups.push((*b, vec![i]));
            }
        }
    }
    let mut groups = merge_overlapping(groups);
    groups.sort_by(|a, b| {
        a.0.top
            .total_cmp(&b.0.top)
            .then(a.0.left.total_cmp(&b.0.left))
    });
    groups.into_iter().map(|(_, g)| g).collect()
}

/// A direction a sweep runs along.
#[derive(Clone, Copy)]
enum Axis {
    /// Left to right.
    Across,
    /// Top to bottom.
    Down,
}

impl Axis {
    fn start(self, b: &Bounds) -> f64 {
        match self {
            Axis::Across => b.left,
            Axis::Down => b.top,
        }
    }

    fn end(self, b: &Bounds) -> f64 {
        match self {
            Axis::Across => b.right,
            Axis::Down => b.bottom,
        }
    }
}

/// The boxes (by index) in the order a sweep along `axis` takes them, and how many pairs that
/// sweep compares (counted by binary search, without comparing them).
fn sweep_order(boxes: &[Bounds], axis: Axis) -> (Vec<usize>, u64) {
    let mut order: Vec<usize> = (0..boxes.len()).collect();
    order.sort_by(|&a, &b| {
        axis.start(&boxes[a])
            .total_cmp(&axis.start(&boxes[b]))
            .then(a.cmp(&b))
    });
    let starts: Vec<f64> = order.iter().map(|&i| axis.start(&boxes[i])).collect();
    let mut pairs = 0u64;
    for (k, &i) in order.iter().enumerate() {
        let reach = axis.end(&boxes[i]) + TOUCH_PX;
        let upto = starts.partition_point(|s| s.total_cmp(&reach).is_le());
        pairs += upto.saturating_sub(k + 1) as u64;
    }
    (order, pairs)
}

/// Merges groups whose boxes overlap until none do. Each group taken in turn absorbs every kept
/// group its (growing) box overlaps, so the kept ones never overlap one another: each group is
/// absorbed at most once, and the work is quadratic in the number of groups at most.
fn merge_overlapping(groups: Vec<(Bounds, Vec<usize>)>) -> Vec<(Bounds, Vec<usize>)> {
    let mut kept: Vec<(Bounds, Vec<usize>)> = Vec::with_capacity(groups.len());
    for (mut b, mut idx) in groups {
        let mut absorbed = false;
        while let Some(k) = kept.iter().position(|(kb, _)| kb.overlaps(&b)) {
            let (kb, mut ki) = kept.swap_remove(k);
            b = b.union(&kb);
            idx.append(&mut ki);
            absorbed = true;
        }
        if absorbed {
            idx.sort_unstable();
        }
        kept.push((b, idx));
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ink::inkml::Brush;

    fn s(points: &[(f64, f64)], t: Option<f64>) -> Stroke {
        Stroke {
            points: points.to_vec(),
            brush: Brush {
                width: 2.0,
                ..Brush::default()
            },
            time_ms: t,
        }
    }

    #[test]
    fn near_strokes_join_far_ones_do_not() {
        let v = vec![
            s(&[(0.0, 0.0), (10.0, 10.0)], None),
            s(&[(20.0, 0.0), (30.0, 10.0)], None),
            s(&[(500.0, 0.0), (510.0, 10.0)], None),
        ];
        assert_eq!(group(&v), vec![vec![0, 1], vec![2]]);
    }

    #[test]
    fn quick_succession_joins_words_but_not_later_strokes() {
        // 60 px apart: too far to touch, close enough for the next word of a line.
        let v = vec![
            s(&[(0.0, 0.0), (10.0, 10.0)], Some(0.0)),
            s(&[(70.0, 0.0), (80.0, 10.0)], Some(400.0)),
            s(&[(150.0, 0.0), (160.0, 10.0)], Some(90_000.0)),
        ];
        assert_eq!(group(&v), vec![vec![0, 1], vec![2]]);
    }

    #[test]
    fn reading_order_is_top_then_left_and_overlaps_merge() {
        let v = vec![
            s(&[(0.0, 300.0), (10.0, 310.0)], None),
            s(&[(400.0, 0.0), (410.0, 10.0)], None),
            s(&[(0.0, 0.0), (10.0, 10.0)], None),
            // an L-shaped stroke whose box covers the first one
            s(&[(-100.0, 250.0), (-100.0, 400.0), (200.0, 400.0)], None),
        ];
        let g = group(&v);
        assert_eq!(g, vec![vec![2], vec![1], vec![0, 3]]);
    }

    /// Two drawings never overlap, and every stroke is in exactly one, whatever the strokes.
    fn no_overlap_and_a_partition(v: &[Stroke]) {
        let g = group(v);
        let mut seen = vec![false; v.len()];
        for grp in &g {
            for &i in grp {
                assert!(!seen[i], "stroke {i} twice");
                seen[i] = true;
            }
        }
        assert!(seen.iter().all(|&x| x));
        let boxes: Vec<Bounds> = g
            .iter()
            .map(|grp| bounds(grp.iter().map(|&i| &v[i])))
            .collect();
        for a in 0..boxes.len() {
            for b in a + 1..boxes.len() {
                assert!(
                    !boxes[a].overlaps(&boxes[b]),
                    "{:?} {:?}",
                    boxes[a],
                    boxes[b]
                );
            }
        }
    }

    proptest::proptest! {
        #[test]
        fn drawings_partition_the_strokes_and_never_overlap(
            pts in proptest::collection::vec(
                (0.0f64..2000.0, 0.0f64..2000.0, 1.0f64..300.0, 1.0f64..300.0, proptest::option::of(0.0f64..20_000.0)),
                0..120,
            )
        ) {
            let timed = pts.iter().all(|p| p.4.is_some());
            let v: Vec<Stroke> = pts
                .iter()
                .map(|&(x, y, w, h, t)| s(&[(x, y), (x + w, y + h)], if timed { t } else { None }))
                .collect();
            no_overlap_and_a_partition(&v);
        }
    }

    /// A page written edge to edge, several screens long: 40 lines of 60 strokes. Each line is a
    /// drawing (its strokes touch; the lines are a finger apart), in reading order.
    #[test]
    fn a_long_page_of_handwriting_is_its_lines() {
        let mut v = Vec::new();
        for line in 0..40 {
            for k in 0..60 {
                let (x, y) = (f64::from(k) * 12.0, f64::from(line) * 60.0);
                v.push(s(&[(x, y), (x + 8.0, y + 30.0)], None));
            }
        }
        let g = group(&v);
        assert_eq!(g.len(), 40);
        for (line, grp) in g.iter().enumerate() {
            assert_eq!(grp, &(line * 60..line * 60 + 60).collect::<Vec<_>>());
        }
        no_overlap_and_a_partition(&v);
    }

    /// Thousands of strokes scribbled over one spot: past the pairs a page may compare, one
    /// drawing (which the overlapping boxes would make of them anyway).
    #[test]
    fn strokes_too_dense_to_compare_are_one_drawing() {
        let v: Vec<Stroke> = (0..4000)
            .map(|k| {
                let (x, y) = ((k % 7) as f64, (k % 11) as f64);
                s(&[(x, y), (x + 8.0, y + 30.0)], None)
            })
            .collect();
        let (_, pairs) = sweep_order(&v.iter().map(stroke_bounds).collect::<Vec<_>>(), Axis::Down);
        assert!(pairs > MAX_COMPARED_PAIRS, "{pairs}");
        assert_eq!(group(&v), vec![(0..4000).collect::<Vec<_>>()]);
        // A few hundred such strokes are compared, and still one drawing.
        assert_eq!(group(&v[..300]).len(), 1);
    }

    /// Past the bound, the page's ink is one drawing: one pass, whatever the layout.
    #[test]
    fn past_the_bound_a_pages_ink_is_one_drawing() {
        let v: Vec<Stroke> = (0..=MAX_GROUPED_STROKES)
            .map(|k| {
                let x = (k % 100) as f64 * 500.0;
                let y = (k / 100) as f64 * 500.0;
                s(&[(x, y), (x + 1.0, y + 1.0)], None)
            })
            .collect();
        let g = group(&v);
        assert_eq!(g.len(), 1);
        assert_eq!(g[0].len(), MAX_GROUPED_STROKES + 1);
    }

    #[test]
    fn strokes_of_one_recognised_line_are_one_drawing() {
        // Three words an inch and a half apart, written with pauses: only the line joins them.
        let v = vec![
            s(&[(0.0, 0.0), (10.0, 10.0)], Some(0.0)),
            s(&[(150.0, 0.0), (160.0, 10.0)], Some(9_000.0)),
            s(&[(300.0, 0.0), (310.0, 10.0)], Some(20_000.0)),
        ];
        assert_eq!(group(&v).len(), 3);
        assert_eq!(
            group_lines(&v, &[Some(7), Some(7), None]),
            vec![vec![0, 1], vec![2]]
        );
    }
}
