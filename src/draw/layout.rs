//! A layered ("Sugiyama") drawing of a directed acyclic graph, for the page's fusion-group
//! diagram: pure geometry, no browser code, so it is tested natively.
//!
//! The steps are the classic ones, each kept simple and linear-ish so that a few thousand nodes
//! lay out in milliseconds:
//! 1. **Layers** by longest path from the sources: every edge goes from a layer to a later one.
//! 2. **Dummy nodes** on edges that span several layers, so that long edges are routed between
//!    the boxes of the layers they cross instead of through them.
//! 3. **Order within layers** by barycentre sweeps (down, then up, a few times), keeping the
//!    order with the fewest edge crossings seen.
//! 4. **Coordinates**: layers top to bottom (each as tall as its tallest box); within a layer,
//!    boxes in their order, pulled towards the mean position of their neighbours in the layer
//!    above (then below), never closer than the gap.
//! 5. **Edges** as polylines from the bottom of the source box through its dummies to the top of
//!    the target box.
//!
//! The result is deterministic: the same input gives the same drawing.

use thiserror::Error;

mod loose;
pub use loose::layered_layout_loose_below;

/// Width and height of one node's box, in drawing units (pixels on the page).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Size {
    pub width: f64,
    pub height: f64,
}

/// Distances the drawing keeps.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Spacing {
    /// Horizontal gap between neighbouring boxes of a layer.
    pub node_gap: f64,
    /// Vertical gap between a layer's tallest box and the next layer.
    pub layer_gap: f64,
    /// Width reserved for a long edge passing through a layer.
    pub dummy_width: f64,
    /// Blank border around the drawing.
    pub margin: f64,
}

impl Default for Spacing {
    fn default() -> Self {
        Spacing { node_gap: 24.0, layer_gap: 48.0, dummy_width: 8.0, margin: 16.0 }
    }
}

/// A node's place: its box's top-left corner and size, its layer and its position in the layer.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Placed {
    pub x: f64,
    pub y: f64,
    pub width: f64,
    pub height: f64,
    pub layer: usize,
    /// Position among the layer's boxes and dummies, from the left.
    pub order: usize,
}

impl Placed {
    /// The horizontal centre of the box.
    pub fn center_x(&self) -> f64 {
        self.x + self.width / 2.0
    }
}

/// One edge of the input, drawn as a polyline (at least two points, `y` increasing).
#[derive(Debug, Clone, PartialEq)]
pub struct Route {
    pub from: usize,
    pub to: usize,
    pub points: Vec<(f64, f64)>,
}

/// The drawing: one [`Placed`] per input node (same index), one [`Route`] per distinct edge, and
/// the size of the whole.
#[derive(Debug, Clone, PartialEq)]
pub struct Layout {
    pub nodes: Vec<Placed>,
    pub routes: Vec<Route>,
    pub width: f64,
    pub height: f64,
    /// Edge crossings between neighbouring layers in the final order (a measure of readability).
    pub crossings: usize,
}

/// Why a graph cannot be laid out.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum LayoutError {
    #[error("edge {from} -> {to} names a node that does not exist (there are {nodes} nodes)")]
    NoSuchNode { from: usize, to: usize, nodes: usize },
    #[error("edge {node} -> {node} is a self-loop, which a layered drawing cannot show")]
    SelfLoop { node: usize },
    #[error("the graph has a cycle through node {node}; only acyclic graphs are drawn in layers")]
    Cycle { node: usize },
}

/// Barycentre sweeps down and up: more improve little on the graphs the page draws.
const SWEEPS: usize = 8;
/// Passes pulling boxes towards their neighbours.
const PLACEMENT_PASSES: usize = 4;

/// Lays out the graph with nodes of the given `sizes` and `edges` (from, to). Duplicate edges
/// are drawn once.
pub fn layered_layout(sizes: &[Size], edges: &[(usize, usize)], spacing: Spacing) -> Result<Layout, LayoutError> {
    let n = sizes.len();
    let mut edges: Vec<(usize, usize)> = edges.to_vec();
    for &(from, to) in &edges {
        if from >= n || to >= n {
            return Err(LayoutError::NoSuchNode { from, to, nodes: n });
        }
        if from == to {
            return Err(LayoutError::SelfLoop { node: from });
        }
    }
    edges.sort_unstable();
    edges.dedup();
    let layer = longest_path_layers(n, &edges)?;

    // The layered graph: real nodes 0..n, then dummies; each edge becomes a chain of unit edges.
    let mut node_layer = layer.clone();
    let mut widths: Vec<f64> = sizes.iter().map(|s| s.width).collect();
    let mut chains: Vec<Vec<usize>> = Vec::with_capacity(edges.len());
    for &(from, to) in &edges {
        let mut chain = vec![from];
        for l in layer[from] + 1..layer[to] {
            node_layer.push(l);
            widths.push(spacing.dummy_width);
            chain.push(node_layer.len() - 1);
        }
        chain.push(to);
        chains.push(chain);
    }
    let total = node_layer.len();
    let mut up: Vec<Vec<usize>> = vec![Vec::new(); total];
    let mut down: Vec<Vec<usize>> = vec![Vec::new(); total];
    for chain in &chains {
        for w in chain.windows(2) {
            down[w[0]].push(w[1]);
            up[w[1]].push(w[0]);
        }
    }
    let depth = node_layer.iter().max().map_or(0, |&m| m + 1);
    let mut layers: Vec<Vec<usize>> = vec![Vec::new(); depth];
    for (v, &l) in node_layer.iter().enumerate() {
        layers[l].push(v);
    }

    let layers = order_layers(layers, &up, &down);
    let crossings = count_crossings(&layers, &down);
    let mut pos = vec![0usize; total];
    for layer in &layers {
        for (i, &v) in layer.iter().enumerate() {
            pos[v] = i;
        }
    }

    // Vertical: each layer as tall as its tallest real box.
    let mut layer_y = Vec::with_capacity(depth);
    let mut layer_h = Vec::with_capacity(depth);
    let mut y = spacing.margin;
    for layer in &layers {
        let h = layer.iter().filter(|&&v| v < n).map(|&v| sizes[v].height).fold(0.0, f64::max);
        layer_y.push(y);
        layer_h.push(h);
        y += h + spacing.layer_gap;
    }
    let height = if depth == 0 { 2.0 * spacing.margin } else { y - spacing.layer_gap + spacing.margin };

    let x = place_horizontally(&layers, &widths, &up, &down, spacing);
    let width =
        layers.iter().filter_map(|l| l.last().map(|&v| x[v] + widths[v])).fold(0.0, f64::max).max(0.0) + spacing.margin;

    let nodes: Vec<Placed> = (0..n)
        .map(|v| Placed {
            x: x[v],
            // Boxes sit at the top of their layer's band.
            y: layer_y[layer[v]],
            width: sizes[v].width,
            height: sizes[v].height,
            layer: layer[v],
            order: pos[v],
        })
        .collect();
    let routes = chains
        .iter()
        .map(|chain| {
            let (from, to) = (chain[0], *chain.last().expect("a chain has two ends"));
            let mut points = Vec::with_capacity(chain.len() + 1);
            points.push((nodes[from].center_x(), nodes[from].y + nodes[from].height));
            for &d in &chain[1..chain.len() - 1] {
                let l = node_layer[d];
                let cx = x[d] + widths[d] / 2.0;
                // Through the whole band of the layer, so it never cuts a box of that layer.
                points.push((cx, layer_y[l]));
                points.push((cx, layer_y[l] + layer_h[l]));
            }
            points.push((nodes[to].center_x(), nodes[to].y));
            Route { from, to, points }
        })
        .collect();
    Ok(Layout { nodes, routes, width: width.max(2.0 * spacing.margin), height, crossings })
}

/// Layer of each node: 0 for a source, else one more than the largest layer among its
/// predecessors (Kahn's algorithm; an unsettled node is on a cycle). Edges must name nodes
/// below `n`.
pub fn longest_path_layers(n: usize, edges: &[(usize, usize)]) -> Result<Vec<usize>, LayoutError> {
    let mut succs: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut waiting = vec![0usize; n];
    for &(a, b) in edges {
        succs[a].push(b);
        waiting[b] += 1;
    }
    let mut ready: Vec<usize> = (0..n).rev().filter(|&v| waiting[v] == 0).collect();
    let mut layer = vec![0usize; n];
    let mut settled = 0;
    while let Some(v) = ready.pop() {
        settled += 1;
        for &s in &succs[v] {
            layer[s] = layer[s].max(layer[v] + 1);
            waiting[s] -= 1;
            if waiting[s] == 0 {
                ready.push(s);
            }
        }
    }
    if settled < n {
        let node = (0..n).find(|&v| waiting[v] > 0).expect("an unsettled node exists");
        return Err(LayoutError::Cycle { node });
    }
    Ok(layer)
}

/// Pass `pass` of an alternating sweep: even passes go down (layers 1.. against the layer above
/// them), odd passes up (layers ..n-1, bottom first, against the layer below).
fn sweep_step<'a>(
    pass: usize,
    depth: usize,
    up: &'a [Vec<usize>],
    down: &'a [Vec<usize>],
) -> (Vec<usize>, &'a [Vec<usize>]) {
    if pass.is_multiple_of(2) {
        ((1..depth).collect(), up)
    } else {
        ((0..depth.saturating_sub(1)).rev().collect(), down)
    }
}

/// Orders each layer by barycentre sweeps, keeping the best order seen.
fn order_layers(mut layers: Vec<Vec<usize>>, up: &[Vec<usize>], down: &[Vec<usize>]) -> Vec<Vec<usize>> {
    let total = up.len();
    let mut pos = vec![0f64; total];
    let index = |layers: &[Vec<usize>], pos: &mut [f64]| {
        for layer in layers {
            for (i, &v) in layer.iter().enumerate() {
                pos[v] = i as f64;
            }
        }
    };
    index(&layers, &mut pos);
    let mut best = layers.clone();
    let mut best_crossings = count_crossings(&layers, down);
    for sweep in 0..SWEEPS {
        let (order, neighbours) = sweep_step(sweep, layers.len(), up, down);
        for l in order {
            // Barycentre of the neighbours in the fixed layer; a node without any keeps its place.
            let mut keyed: Vec<(f64, usize, usize)> = layers[l]
                .iter()
                .enumerate()
                .map(|(i, &v)| {
                    let ns = &neighbours[v];
                    let key = if ns.is_empty() {
                        i as f64
                    } else {
                        ns.iter().map(|&u| pos[u]).sum::<f64>() / ns.len() as f64
                    };
                    (key, i, v)
                })
                .collect();
            keyed.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
            layers[l] = keyed.into_iter().map(|(_, _, v)| v).collect();
            for (i, &v) in layers[l].iter().enumerate() {
                pos[v] = i as f64;
            }
        }
        let c = count_crossings(&layers, down);
        if c < best_crossings {
            best_crossings = c;
            best = layers.clone();
        }
    }
    best
}

/// Crossings between each pair of neighbouring layers: pairs of edges whose ends are in
/// opposite orders (counted by merge sort, O(E log E) per layer pair).
fn count_crossings(layers: &[Vec<usize>], down: &[Vec<usize>]) -> usize {
    let mut pos = vec![0usize; down.len()];
    for layer in layers {
        for (i, &v) in layer.iter().enumerate() {
            pos[v] = i;
        }
    }
    let mut total = 0;
    for layer in layers.iter().take(layers.len().saturating_sub(1)) {
        let mut ends: Vec<(usize, usize)> =
            layer.iter().flat_map(|&v| down[v].iter().map(move |&w| (v, w))).map(|(v, w)| (pos[v], pos[w])).collect();
        ends.sort_unstable();
        let mut seq: Vec<usize> = ends.into_iter().map(|(_, b)| b).collect();
        total += inversions(&mut seq);
    }
    total
}

/// Number of pairs i < j with `v[i] > v[j]` (sorts `v`).
fn inversions(v: &mut [usize]) -> usize {
    if v.len() < 2 {
        return 0;
    }
    let mid = v.len() / 2;
    let mut count = inversions(&mut v[..mid]) + inversions(&mut v[mid..]);
    let mut merged = Vec::with_capacity(v.len());
    let (mut i, mut j) = (0, mid);
    while i < mid && j < v.len() {
        if v[j] < v[i] {
            count += mid - i;
            merged.push(v[j]);
            j += 1;
        } else {
            merged.push(v[i]);
            i += 1;
        }
    }
    merged.extend_from_slice(&v[i..mid]);
    merged.extend_from_slice(&v[j..]);
    v.copy_from_slice(&merged);
    count
}

/// Left edges of every box (real and dummy): each layer packed in its order, then pulled
/// towards its neighbours' centres in alternating passes, keeping the order and the gaps;
/// finally shifted so that the leftmost box starts at the margin.
fn place_horizontally(
    layers: &[Vec<usize>],
    widths: &[f64],
    up: &[Vec<usize>],
    down: &[Vec<usize>],
    s: Spacing,
) -> Vec<f64> {
    let mut x = vec![0f64; widths.len()];
    for layer in layers {
        let mut left = s.margin;
        for &v in layer {
            x[v] = left;
            left += widths[v] + s.node_gap;
        }
    }
    let center = |x: &[f64], v: usize| x[v] + widths[v] / 2.0;
    for pass in 0..PLACEMENT_PASSES {
        let (order, neighbours) = sweep_step(pass, layers.len(), up, down);
        for l in order {
            let layer = &layers[l];
            let wanted: Vec<f64> = layer
                .iter()
                .map(|&v| {
                    let ns = &neighbours[v];
                    if ns.is_empty() {
                        x[v]
                    } else {
                        ns.iter().map(|&u| center(&x, u)).sum::<f64>() / ns.len() as f64 - widths[v] / 2.0
                    }
                })
                .collect();
            // Packed from the left (boxes pushed right of their wish when crowded) and from the
            // right (pushed left), then the mean of the two: each respects the order and the
            // gaps, so their mean does too, and a crowded layer spreads both ways.
            let k = layer.len();
            let mut from_left = vec![0f64; k];
            for i in 0..k {
                from_left[i] = if i == 0 {
                    wanted[i]
                } else {
                    wanted[i].max(from_left[i - 1] + widths[layer[i - 1]] + s.node_gap)
                };
            }
            let mut from_right = vec![0f64; k];
            for i in (0..k).rev() {
                from_right[i] = if i + 1 == k {
                    wanted[i]
                } else {
                    wanted[i].min(from_right[i + 1] - widths[layer[i]] - s.node_gap)
                };
            }
            let placed: Vec<f64> = (0..k).map(|i| (from_left[i] + from_right[i]) / 2.0).collect();
            for (i, &v) in layer.iter().enumerate() {
                x[v] = placed[i];
            }
        }
    }
    // Shift so that the leftmost box starts at the margin.
    let min = x.iter().copied().fold(f64::INFINITY, f64::min);
    if min.is_finite() {
        for v in &mut x {
            *v += s.margin - min;
        }
    }
    x
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn boxes(n: usize) -> Vec<Size> {
        (0..n).map(|i| Size { width: 40.0 + (i % 3) as f64 * 10.0, height: 20.0 + (i % 4) as f64 * 5.0 }).collect()
    }

    /// The drawing's invariants: every node placed once inside the drawing, boxes of a layer
    /// in order without overlap, layers stacked without overlap, every edge going down from its
    /// source's bottom to its target's top.
    fn check(sizes: &[Size], edges: &[(usize, usize)], l: &Layout, s: Spacing) {
        assert_eq!(l.nodes.len(), sizes.len());
        for (v, p) in l.nodes.iter().enumerate() {
            assert_eq!((p.width, p.height), (sizes[v].width, sizes[v].height));
            assert!(
                p.x >= s.margin - 1e-9 && p.x + p.width <= l.width + 1e-9,
                "node {v} outside: {p:?} in {}",
                l.width
            );
            assert!(p.y >= 0.0 && p.y + p.height <= l.height + 1e-9);
        }
        let depth = l.nodes.iter().map(|p| p.layer + 1).max().unwrap_or(0);
        for layer in 0..depth {
            let mut row: Vec<&Placed> = l.nodes.iter().filter(|p| p.layer == layer).collect();
            row.sort_by_key(|p| p.order);
            let orders: Vec<usize> = row.iter().map(|p| p.order).collect();
            let mut distinct = orders.clone();
            distinct.dedup();
            assert_eq!(orders, distinct, "two nodes share a position in layer {layer}");
            for w in row.windows(2) {
                assert!(w[0].x + w[0].width + s.node_gap <= w[1].x + 1e-6, "boxes overlap in layer {layer}: {w:?}");
            }
        }
        for a in &l.nodes {
            for b in &l.nodes {
                if a.layer < b.layer {
                    assert!(a.y + a.height < b.y, "layer {} reaches into layer {}", a.layer, b.layer);
                }
            }
        }
        let mut distinct: Vec<(usize, usize)> = edges.to_vec();
        distinct.sort_unstable();
        distinct.dedup();
        assert_eq!(l.routes.len(), distinct.len());
        for r in &l.routes {
            assert!(distinct.contains(&(r.from, r.to)));
            let (f, t) = (&l.nodes[r.from], &l.nodes[r.to]);
            assert!(f.layer < t.layer, "edge {} -> {} does not go down", r.from, r.to);
            assert_eq!(r.points.first(), Some(&(f.center_x(), f.y + f.height)));
            assert_eq!(r.points.last(), Some(&(t.center_x(), t.y)));
            assert!(r.points.windows(2).all(|w| w[0].1 <= w[1].1), "edge {} -> {} goes back up", r.from, r.to);
        }
    }

    #[test]
    fn chain_is_one_node_per_layer_and_straight() {
        let sizes = boxes(4);
        let edges = [(0, 1), (1, 2), (2, 3)];
        let l = layered_layout(&sizes, &edges, Spacing::default()).unwrap();
        check(&sizes, &edges, &l, Spacing::default());
        assert_eq!(l.nodes.iter().map(|p| p.layer).collect::<Vec<_>>(), vec![0, 1, 2, 3]);
        assert_eq!(l.crossings, 0);
        // Each box is centred under the one before.
        for w in l.nodes.windows(2) {
            assert!((w[0].center_x() - w[1].center_x()).abs() < 1e-9);
        }
    }

    #[test]
    fn long_edge_gets_a_bend_per_layer_it_crosses() {
        // 0 -> 1 -> 2 -> 3 and a skip 0 -> 3: the skip passes layers 1 and 2 beside their boxes.
        let sizes = boxes(4);
        let edges = [(0, 1), (1, 2), (2, 3), (0, 3)];
        let l = layered_layout(&sizes, &edges, Spacing::default()).unwrap();
        check(&sizes, &edges, &l, Spacing::default());
        let skip = l.routes.iter().find(|r| (r.from, r.to) == (0, 3)).unwrap();
        assert_eq!(skip.points.len(), 2 + 2 * 2);
        for layer in [1, 2] {
            let node = &l.nodes[layer];
            let (x, _) = skip.points[1 + 2 * (layer - 1)];
            assert!(x < node.x || x > node.x + node.width, "the skip edge cuts through node {layer}");
        }
    }

    #[test]
    fn barycentre_sweeps_undo_a_crossing() {
        // 0 -> 3 and 1 -> 2: in input order the edges cross; the sweeps swap a layer.
        let sizes = boxes(4);
        let edges = [(0, 3), (1, 2)];
        let l = layered_layout(&sizes, &edges, Spacing::default()).unwrap();
        check(&sizes, &edges, &l, Spacing::default());
        assert_eq!(l.crossings, 0);
    }

    #[test]
    fn errors_name_the_bad_edge() {
        let sizes = boxes(3);
        assert_eq!(
            layered_layout(&sizes, &[(0, 5)], Spacing::default()),
            Err(LayoutError::NoSuchNode { from: 0, to: 5, nodes: 3 })
        );
        assert_eq!(layered_layout(&sizes, &[(1, 1)], Spacing::default()), Err(LayoutError::SelfLoop { node: 1 }));
        let err = layered_layout(&sizes, &[(0, 1), (1, 2), (2, 1)], Spacing::default()).unwrap_err();
        assert!(matches!(err, LayoutError::Cycle { node: 1 | 2 }), "{err}");
        assert!(err.to_string().contains("cycle"));
    }

    #[test]
    fn empty_graph_is_an_empty_drawing() {
        let l = layered_layout(&[], &[], Spacing::default()).unwrap();
        assert!(l.nodes.is_empty() && l.routes.is_empty());
        assert!(l.width > 0.0 && l.height > 0.0);
    }

    #[test]
    fn inversions_count_pairs_out_of_order() {
        assert_eq!(inversions(&mut [3, 1, 2]), 2);
        assert_eq!(inversions(&mut [1, 2, 3]), 0);
        assert_eq!(inversions(&mut [3, 2, 1, 0]), 6);
    }

    /// A random DAG: edges only from a lower to a higher index.
    fn dag() -> impl Strategy<Value = (Vec<Size>, Vec<(usize, usize)>)> {
        (1usize..60).prop_flat_map(|n| {
            let sizes = proptest::collection::vec((8.0f64..120.0, 8.0f64..80.0), n)
                .prop_map(|v| v.into_iter().map(|(width, height)| Size { width, height }).collect::<Vec<_>>());
            let edges = proptest::collection::vec((0..n, 0..n), 0..3 * n).prop_map(|pairs| {
                pairs.into_iter().filter(|(a, b)| a != b).map(|(a, b)| (a.min(b), a.max(b))).collect::<Vec<_>>()
            });
            (sizes, edges)
        })
    }

    proptest! {
        #[test]
        fn random_dags_keep_the_invariants((sizes, edges) in dag()) {
            let s = Spacing::default();
            let l = layered_layout(&sizes, &edges, s).unwrap();
            check(&sizes, &edges, &l, s);
            // Deterministic, whatever order the edges come in.
            let mut reversed = edges.clone();
            reversed.reverse();
            prop_assert_eq!(&layered_layout(&sizes, &reversed, s).unwrap(), &l);
        }
    }
}
