//! The graph of fusion groups: which groups read what others write, and each group's layer
//! (the longest chain of groups before it), so that the page can draw groups in data-flow
//! order, one row per layer, each with the groups it reads from.

use crate::layout::{layered_layout, layered_layout_loose_below, longest_path_layers, Layout, Size, Spacing};
use fusion::OpGraph;

/// Data edges between fusion groups and a layering of them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupGraph {
    /// For each group, the groups whose outputs it reads, ascending.
    pub preds: Vec<Vec<usize>>,
    /// For each group, the groups that read its outputs, ascending.
    pub succs: Vec<Vec<usize>>,
    /// For each group, its layer: 0 for a group that reads no other group, else one more than
    /// the largest layer it reads from.
    pub layer: Vec<usize>,
}

impl GroupGraph {
    /// Every edge (group that writes, group that reads), in ascending order.
    pub fn edges(&self) -> Vec<(usize, usize)> {
        edge_list(&self.succs)
    }

    /// Groups by layer, each layer in group order.
    pub fn layers(&self) -> Vec<Vec<usize>> {
        let depth = self.layer.iter().max().map_or(0, |&m| m + 1);
        let mut out = vec![Vec::new(); depth];
        for (g, &l) in self.layer.iter().enumerate() {
            out[l].push(g);
        }
        out
    }
}

/// How a group's box is drawn: a header line, then one line per op up to
/// [`MAX_OP_ROWS`](crate::group_graph::metrics::MAX_OP_ROWS) (a larger group shows one line fewer and a "+ n more ops" line; selecting
/// the group lists them all). Boxes of one width keep the layers' columns regular.
pub mod metrics {
    /// Width of a group box.
    pub const BOX_WIDTH: f64 = 196.0;
    /// Height of the header line (group number, kind).
    pub const HEAD_HEIGHT: f64 = 24.0;
    /// Height of one op line.
    pub const OP_ROW_HEIGHT: f64 = 18.0;
    /// Op lines a box shows at most, the "+ n more" line included: a tall group would stretch
    /// its whole layer.
    pub const MAX_OP_ROWS: usize = 6;
    /// Bottom padding inside a box.
    pub const PADDING: f64 = 6.0;
}

/// Which of a group's ops its box lists: the first `shown`, and `more` further ones counted on a
/// last line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BoxRows {
    pub shown: usize,
    pub more: usize,
}

impl BoxRows {
    /// The lines of a box for a group of `ops` ops.
    pub fn for_ops(ops: usize) -> BoxRows {
        if ops <= metrics::MAX_OP_ROWS {
            BoxRows { shown: ops, more: 0 }
        } else {
            let shown = metrics::MAX_OP_ROWS - 1;
            BoxRows { shown, more: ops - shown }
        }
    }

    /// Height of the box.
    pub fn height(&self) -> f64 {
        let lines = self.shown + usize::from(self.more > 0);
        metrics::HEAD_HEIGHT + lines as f64 * metrics::OP_ROW_HEIGHT + metrics::PADDING
    }
}

/// Op graphs above this many ops are listed, not drawn: the drawing of a random graph of this
/// size is already tens of layers deep and wide, and each further op adds SVG nodes the
/// browser must lay out on every zoom.
pub const MAX_DRAWN_OPS: usize = 2000;

/// The drawing of the group graph: one box per group (same index), sized by [`BoxRows`], one
/// route per group edge. Group-level boxes listing their ops (rather than one node per op)
/// keep the drawing readable at 500 ops: a fused chain is one box, not a column of nodes
/// with edges between each, and the edges drawn are the data that crosses group boundaries,
/// which is the traffic fusion cannot save.
pub fn group_drawing(gg: &GroupGraph, ops_per_group: &[usize]) -> Layout {
    let heights: Vec<f64> = ops_per_group.iter().map(|&ops| BoxRows::for_ops(ops).height()).collect();
    group_drawing_heights(gg, &heights)
}

/// [`group_drawing`] of boxes of the given heights (and the one width), for boxes that draw
/// more than their ops (a trace's kernel groups: their name on two lines, their traffic).
pub fn group_drawing_heights(gg: &GroupGraph, heights: &[f64]) -> Layout {
    layered_layout(&box_sizes(heights), &gg.edges(), GROUP_SPACING)
        .expect("a group graph is acyclic and its edges name its groups")
}

/// How many boxes wide the rows of loose boxes are at least
/// ([`group_drawing_heights_loose_below`]): five fill the page's drawing at its own size.
pub const LOOSE_ROW_BOXES: usize = 5;

/// [`group_drawing_heights`] with the groups that neither read from nor feed another drawn
/// group set apart, in rows below the linked ones ([`layered_layout_loose_below`]): for a
/// trace's window of kernels, few of which may share a tensor.
pub fn group_drawing_heights_loose_below(gg: &GroupGraph, heights: &[f64]) -> Layout {
    let row = LOOSE_ROW_BOXES as f64 * metrics::BOX_WIDTH + (LOOSE_ROW_BOXES - 1) as f64 * GROUP_SPACING.node_gap;
    layered_layout_loose_below(&box_sizes(heights), &gg.edges(), GROUP_SPACING, row)
        .expect("a group graph is acyclic and its edges name its groups")
}

/// The group drawings' distances.
const GROUP_SPACING: Spacing = Spacing { node_gap: 18.0, layer_gap: 40.0, dummy_width: 6.0, margin: 12.0 };

/// Boxes of the one width and the given heights.
fn box_sizes(heights: &[f64]) -> Vec<Size> {
    heights.iter().map(|&height| Size { width: metrics::BOX_WIDTH, height }).collect()
}

/// The (from, to) pairs of successor lists.
fn edge_list(succs: &[Vec<usize>]) -> Vec<(usize, usize)> {
    succs.iter().enumerate().flat_map(|(a, s)| s.iter().map(move |&b| (a, b))).collect()
}

/// The group graph of `graph` under a grouping given as the group of each op (in file order,
/// as `AnalysisReport::op_details[i].group`). Linear in ops and edges, apart from sorting
/// each group's edge list.
///
/// # Panics
/// If `op_group` is not one group per op, or the groups have a cycle; neither happens for a
/// grouping made by [`fusion::analyse`], which keeps the group graph acyclic.
pub fn group_graph(graph: &OpGraph, op_group: &[usize]) -> GroupGraph {
    assert_eq!(op_group.len(), graph.len(), "one group per op");
    let n = op_group.iter().max().map_or(0, |&m| m + 1);
    let mut preds = vec![Vec::new(); n];
    let mut succs = vec![Vec::new(); n];
    for (i, op) in graph.ops().iter().enumerate() {
        let to = op_group[i];
        for &t in &op.inputs {
            if let Some(p) = graph.tensor(t).producer {
                let from = op_group[p.index()];
                if from != to {
                    preds[to].push(from);
                    succs[from].push(to);
                }
            }
        }
    }
    for v in preds.iter_mut().chain(succs.iter_mut()) {
        v.sort_unstable();
        v.dedup();
    }
    let layer = longest_path_layers(n, &edge_list(&succs)).expect("the fusion groups are acyclic");
    GroupGraph { preds, succs, layer }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fusion::random::random_graph;
    use fusion::transformer::{transformer_block, TransformerConfig};
    use fusion::{analyse, parse_graph, AnalysisReport};

    fn groups_of(r: &AnalysisReport) -> Vec<usize> {
        r.op_details.iter().map(|d| d.group).collect()
    }

    #[test]
    fn worked_example_is_two_layers() {
        let g = parse_graph(include_str!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../tests/data/graphs/worked_example.json"
        )))
        .unwrap();
        let r = analyse(&g).report(&g);
        let gg = group_graph(&g, &groups_of(&r));
        assert_eq!(gg.preds, vec![vec![], vec![0]]);
        assert_eq!(gg.succs, vec![vec![1], vec![]]);
        assert_eq!(gg.layers(), vec![vec![0], vec![1]]);
    }

    #[test]
    fn transformer_block_is_a_chain_with_a_skip() {
        let g = transformer_block(TransformerConfig::default()).unwrap();
        let r = analyse(&g).report(&g);
        let gg = group_graph(&g, &groups_of(&r));
        // Nine groups, one per layer; group 4 (attn_output) also reads v from group 1.
        assert_eq!(gg.layer, (0..9).collect::<Vec<_>>());
        assert_eq!(gg.preds[3], vec![0, 2]);
    }

    #[test]
    fn box_rows_cap_tall_groups() {
        assert_eq!(BoxRows::for_ops(1), BoxRows { shown: 1, more: 0 });
        assert_eq!(BoxRows::for_ops(metrics::MAX_OP_ROWS), BoxRows { shown: metrics::MAX_OP_ROWS, more: 0 });
        let big = BoxRows::for_ops(40);
        assert_eq!(big.shown + big.more, 40);
        assert_eq!(big.height(), BoxRows::for_ops(metrics::MAX_OP_ROWS).height());
    }

    #[test]
    fn transformer_drawing_follows_the_groups_layers() {
        let g = transformer_block(TransformerConfig::default()).unwrap();
        let r = analyse(&g).report(&g);
        let gg = group_graph(&g, &groups_of(&r));
        let sizes: Vec<usize> = r.group_details.iter().map(|d| d.ops.len()).collect();
        let d = group_drawing(&gg, &sizes);
        assert_eq!(d.nodes.len(), r.group_details.len());
        for (g2, p) in d.nodes.iter().enumerate() {
            assert_eq!(p.layer, gg.layer[g2]);
            assert_eq!(p.height, BoxRows::for_ops(sizes[g2]).height());
        }
        let edges: usize = gg.succs.iter().map(Vec::len).sum();
        assert_eq!(d.routes.len(), edges);
        assert_eq!(d.crossings, 0);
    }

    #[test]
    fn a_500_op_drawing_has_few_crossings() {
        let g = random_graph(500, 7);
        let r = analyse(&g).report(&g);
        let gg = group_graph(&g, &groups_of(&r));
        let sizes: Vec<usize> = r.group_details.iter().map(|d| d.ops.len()).collect();
        let d = group_drawing(&gg, &sizes);
        assert_eq!(d.nodes.len(), r.group_details.len());
        let edges: usize = gg.succs.iter().map(Vec::len).sum();
        assert_eq!(d.routes.len(), edges);
        // The sweeps leave far fewer crossings than edges (the input order had many).
        assert!(d.crossings < edges, "{} crossings for {edges} edges", d.crossings);
    }

    #[test]
    fn every_edge_goes_to_a_later_layer_on_random_graphs() {
        for seed in 0..20 {
            let g = random_graph(300, seed);
            let r = analyse(&g).report(&g);
            let gg = group_graph(&g, &groups_of(&r));
            for (a, succ) in gg.succs.iter().enumerate() {
                for &b in succ {
                    assert!(gg.layer[a] < gg.layer[b], "seed {seed}: {a} -> {b}");
                    assert!(gg.preds[b].contains(&a));
                }
            }
            // Layers are tight: a group above layer 0 reads one from the layer just before.
            for (g2, &l) in gg.layer.iter().enumerate() {
                if l > 0 {
                    assert!(gg.preds[g2].iter().any(|&p| gg.layer[p] == l - 1));
                }
            }
            assert_eq!(gg.layers().iter().map(Vec::len).sum::<usize>(), r.groups.len());
        }
    }
}
