//! Boxes with no edge, set apart from the layered drawing.
//!
//! A layered drawing puts every box without a predecessor in its first layer. A trace's window
//! of kernels in launch order may link only a few of them: the first 64 kernels of a TorchRec
//! step are mostly fills and copies that share no tensor with another drawn kernel. In one
//! layer they made a drawing 9,600 px wide, and the one chain of 13 linked kernels at its far
//! end made it 1,700 px tall, so the page opened on a row of unlinked boxes above an empty
//! corner. Drawn apart, the linked boxes keep the layered drawing, at the top left where the
//! page opens, and the loose ones follow below it in rows, in their input order.

use super::{layered_layout, Layout, LayoutError, Placed, Route, Size, Spacing};

/// [`layered_layout`] of the boxes that have an edge, then the boxes with none below it, in
/// input order, in rows as wide as the layered drawing but never narrower than `min_row_width`
/// (the first box of a row is placed whatever its width). A loose box's `layer` is 0 (nothing
/// precedes it) and its `order` its place in its row; rows are `node_gap` apart.
pub fn layered_layout_loose_below(
    sizes: &[Size],
    edges: &[(usize, usize)],
    spacing: Spacing,
    min_row_width: f64,
) -> Result<Layout, LayoutError> {
    let n = sizes.len();
    for &(from, to) in edges {
        if from >= n || to >= n {
            return Err(LayoutError::NoSuchNode { from, to, nodes: n });
        }
    }
    let mut linked = vec![false; n];
    for &(from, to) in edges {
        linked[from] = true;
        linked[to] = true;
    }
    // The linked boxes renumbered 0.., and back.
    let kept: Vec<usize> = (0..n).filter(|&v| linked[v]).collect();
    let mut new_index = vec![usize::MAX; n];
    for (i, &v) in kept.iter().enumerate() {
        new_index[v] = i;
    }
    let sub_sizes: Vec<Size> = kept.iter().map(|&v| sizes[v]).collect();
    let sub_edges: Vec<(usize, usize)> = edges.iter().map(|&(a, b)| (new_index[a], new_index[b])).collect();
    let sub = layered_layout(&sub_sizes, &sub_edges, spacing).map_err(|e| match e {
        LayoutError::SelfLoop { node } => LayoutError::SelfLoop { node: kept[node] },
        LayoutError::Cycle { node } => LayoutError::Cycle { node: kept[node] },
        LayoutError::NoSuchNode { .. } => e,
    })?;

    let mut nodes: Vec<Option<Placed>> = vec![None; n];
    for (i, &v) in kept.iter().enumerate() {
        nodes[v] = Some(sub.nodes[i]);
    }
    // Below the layered drawing (its bottom margin becomes the gap of one layer).
    let mut y = if kept.is_empty() { spacing.margin } else { sub.height - spacing.margin + spacing.layer_gap };
    let row_end = spacing.margin + (sub.width - 2.0 * spacing.margin).max(min_row_width);
    let (mut x, mut row_height, mut order, mut right) = (spacing.margin, 0.0f64, 0, sub.width);
    for v in (0..n).filter(|&v| !linked[v]) {
        let s = sizes[v];
        if order > 0 && x + s.width > row_end {
            y += row_height + spacing.node_gap;
            (x, row_height, order) = (spacing.margin, 0.0, 0);
        }
        nodes[v] = Some(Placed { x, y, width: s.width, height: s.height, layer: 0, order });
        right = right.max(x + s.width + spacing.margin);
        row_height = row_height.max(s.height);
        x += s.width + spacing.node_gap;
        order += 1;
    }
    let height = if kept.len() == n { sub.height } else { y + row_height + spacing.margin };
    let routes =
        sub.routes.into_iter().map(|r| Route { from: kept[r.from], to: kept[r.to], points: r.points }).collect();
    Ok(Layout {
        nodes: nodes.into_iter().map(|p| p.expect("every box is linked or loose")).collect(),
        routes,
        width: right,
        height,
        crossings: sub.crossings,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn overlap(a: &Placed, b: &Placed) -> bool {
        a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height
    }

    fn boxes(n: usize) -> Vec<Size> {
        vec![Size { width: 100.0, height: 40.0 }; n]
    }

    #[test]
    fn loose_boxes_wrap_below_the_linked_ones_in_input_order() {
        // 0 -> 5 -> 9 linked; the seven others loose, in rows of three 100-wide boxes (348 units).
        let s = Spacing::default();
        let l = layered_layout_loose_below(&boxes(10), &[(0, 5), (5, 9)], s, 350.0).unwrap();
        for v in [0, 5, 9] {
            assert_eq!(l.nodes[v].x, s.margin, "the chain is straight, at the left");
        }
        let chain_bottom = l.nodes[9].y + l.nodes[9].height;
        let loose = [1, 2, 3, 4, 6, 7, 8];
        let rows: Vec<Vec<usize>> = [&loose[..3], &loose[3..6], &loose[6..]].map(|r| r.to_vec()).to_vec();
        for (r, row) in rows.iter().enumerate() {
            for (k, &v) in row.iter().enumerate() {
                let p = l.nodes[v];
                assert!(p.y > chain_bottom, "box {v} is not below the chain");
                assert_eq!((p.layer, p.order), (0, k));
                assert_eq!(p.x, s.margin + k as f64 * (100.0 + s.node_gap), "box {v}");
                assert_eq!(p.y, l.nodes[row[0]].y);
                if r > 0 {
                    assert_eq!(p.y, l.nodes[rows[r - 1][0]].y + 40.0 + s.node_gap);
                }
            }
        }
        assert_eq!(l.routes.iter().map(|r| (r.from, r.to)).collect::<Vec<_>>(), vec![(0, 5), (5, 9)]);
        assert_eq!(l.height, l.nodes[8].y + 40.0 + s.margin);
    }

    #[test]
    fn without_edges_every_box_is_in_rows_and_without_loose_boxes_nothing_moves() {
        let s = Spacing::default();
        let l = layered_layout_loose_below(&boxes(7), &[], s, 230.0).unwrap();
        assert_eq!(l.nodes.iter().map(|p| p.order).collect::<Vec<_>>(), vec![0, 1, 0, 1, 0, 1, 0]);
        assert_eq!(l.nodes[0].y, s.margin);
        assert!(l.width <= 2.0 * s.margin + 230.0);
        let edges = [(0, 1), (1, 2), (0, 2)];
        assert_eq!(
            layered_layout_loose_below(&boxes(3), &edges, s, 220.0).unwrap(),
            layered_layout(&boxes(3), &edges, s).unwrap()
        );
    }

    #[test]
    fn errors_name_the_input_boxes() {
        let s = Spacing::default();
        assert_eq!(
            layered_layout_loose_below(&boxes(3), &[(0, 7)], s, 100.0),
            Err(LayoutError::NoSuchNode { from: 0, to: 7, nodes: 3 })
        );
        assert_eq!(layered_layout_loose_below(&boxes(4), &[(3, 3)], s, 100.0), Err(LayoutError::SelfLoop { node: 3 }));
    }

    proptest! {
        #[test]
        fn no_two_boxes_overlap_and_every_edge_goes_down(
            n in 1usize..40,
            pairs in proptest::collection::vec((0usize..40, 0usize..40), 0..30),
            widths in proptest::collection::vec(20.0f64..150.0, 40),
        ) {
            let edges: Vec<(usize, usize)> =
                pairs.into_iter().filter(|&(a, b)| a < n && b < n && a != b).map(|(a, b)| (a.min(b), a.max(b))).collect();
            let sizes: Vec<Size> = widths[..n].iter().map(|&width| Size { width, height: 30.0 }).collect();
            let l = layered_layout_loose_below(&sizes, &edges, Spacing::default(), 300.0).unwrap();
            for (i, a) in l.nodes.iter().enumerate() {
                prop_assert!(a.x >= 0.0 && a.x + a.width <= l.width + 1e-9 && a.y + a.height <= l.height + 1e-9);
                for b in &l.nodes[i + 1..] {
                    prop_assert!(!overlap(a, b), "{a:?} overlaps {b:?}");
                }
            }
            for r in &l.routes {
                let (f, t) = (l.nodes[r.from], l.nodes[r.to]);
                prop_assert_eq!(r.points.first(), Some(&(f.center_x(), f.y + f.height)));
                prop_assert_eq!(r.points.last(), Some(&(t.center_x(), t.y)));
            }
        }
    }
}
