//! Invariants of grouping and traffic on random DAGs, and the optimised grouping checked
//! against a direct, quadratic reading of the rules in docs/fusion-rules.md.

use std::collections::{BTreeSet, HashMap, HashSet, VecDeque};

use fusionscope::fusion::json::{build as build_file, parse_file, parse_graph, to_file};
use fusionscope::fusion::{analyse, GraphBuilder, OpGraph, OpSpec, OpType};
use proptest::prelude::*;

/// One generated op: its type, inputs as "earlier op k" or "external tensor e", and shape.
#[derive(Debug, Clone)]
struct GenOp {
    op_type: OpType,
    inputs: Vec<(bool, usize)>,
    shape: Vec<u64>,
    bpe: u64,
}

fn gen_op() -> impl Strategy<Value = GenOp> {
    (
        prop_oneof![Just(OpType::Matmul), Just(OpType::Elementwise), Just(OpType::Reduction), Just(OpType::Reshape)],
        prop::collection::vec((any::<bool>(), 0usize..1000), 0..4),
        prop::collection::vec(1u64..9, 0..3),
        1u64..5,
    )
        .prop_map(|(op_type, inputs, shape, bpe)| GenOp { op_type, inputs, shape, bpe })
}

/// Ops in a topological file order: input `(true, k)` reads op `k mod i`'s output.
fn specs(ops: &[GenOp]) -> Vec<OpSpec> {
    ops.iter()
        .enumerate()
        .map(|(i, g)| {
            let inputs: Vec<String> = g
                .inputs
                .iter()
                .map(|&(from_op, k)| if from_op && i > 0 { format!("t{}", k % i) } else { format!("e{}", k % 5) })
                .collect();
            OpSpec {
                name: format!("op{i}"),
                op_type: g.op_type,
                inputs,
                output: format!("t{i}"),
                shape: g.shape.clone(),
                bytes_per_element: g.bpe,
            }
        })
        .collect()
}

fn build(specs: &[OpSpec], declare_externals: bool) -> OpGraph {
    let mut b = GraphBuilder::new();
    if declare_externals {
        for e in 0..5 {
            b.declare_tensor(&format!("e{e}"), &[e + 1, 3], Some(2)).unwrap();
        }
    }
    for s in specs {
        b.add_op(s.clone()).unwrap();
    }
    b.build().unwrap()
}

fn names(g: &OpGraph, groups: &[Vec<fusionscope::fusion::OpId>]) -> Vec<Vec<String>> {
    groups.iter().map(|ops| ops.iter().map(|&o| g.op(o).name.clone()).collect()).collect()
}

/// The "Groups" rules of docs/fusion-rules.md read literally, with a fresh graph search for
/// every test.
fn reference_groups(g: &OpGraph) -> Vec<Vec<String>> {
    let mut op_group: HashMap<u32, usize> = HashMap::new();
    let mut groups: Vec<Vec<fusionscope::fusion::OpId>> = Vec::new();
    let group_edges = |op_group: &HashMap<u32, usize>| {
        let mut edges: HashSet<(usize, usize)> = HashSet::new();
        for (&o, &gi) in op_group {
            for &t in &g.op(fusionscope::fusion::OpId(o)).inputs {
                if let Some(p) = g.tensor(t).producer {
                    if let Some(&pg) = op_group.get(&p.0) {
                        if pg != gi {
                            edges.insert((pg, gi));
                        }
                    }
                }
            }
        }
        edges
    };
    for &id in g.order() {
        let op = g.op(id);
        let mut cands: Vec<usize> = Vec::new();
        for &t in &op.inputs {
            if let Some(p) = g.tensor(t).producer {
                let c = op_group[&p.0];
                if !cands.contains(&c) {
                    cands.push(c);
                }
            }
        }
        let mut chosen = None;
        if op.op_type != OpType::Matmul {
            let edges = group_edges(&op_group);
            for &c in &cands {
                let types: Vec<OpType> = groups[c].iter().map(|&o| g.op(o).op_type).collect();
                let has_red = types.contains(&OpType::Reduction);
                let has_mm = types.contains(&OpType::Matmul);
                let ok = match op.op_type {
                    OpType::Reduction => !has_mm && !has_red,
                    _ => !has_red,
                };
                if !ok {
                    continue;
                }
                // BFS from c over group edges.
                let mut seen = BTreeSet::from([c]);
                let mut q = VecDeque::from([c]);
                while let Some(v) = q.pop_front() {
                    for &(a, b) in &edges {
                        if a == v && seen.insert(b) {
                            q.push_back(b);
                        }
                    }
                }
                if cands.iter().any(|&o| o != c && seen.contains(&o)) {
                    continue;
                }
                chosen = Some(c);
                break;
            }
        }
        let gi = chosen.unwrap_or_else(|| {
            groups.push(Vec::new());
            groups.len() - 1
        });
        groups[gi].push(id);
        op_group.insert(id.0, gi);
    }
    names(g, &groups)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn grouping_matches_the_literal_rules(ops in prop::collection::vec(gen_op(), 1..40)) {
        let g = build(&specs(&ops), false);
        let a = analyse(&g);
        let got = names(&g, &a.grouping.groups.iter().map(|gr| gr.ops.clone()).collect::<Vec<_>>());
        prop_assert_eq!(got, reference_groups(&g));
    }

    #[test]
    fn invariants_hold(ops in prop::collection::vec(gen_op(), 1..60), declare in any::<bool>()) {
        let g = build(&specs(&ops), declare);
        let a = analyse(&g);
        // Every op in exactly one group, and op_group agrees with the group lists.
        let mut count = vec![0; g.len()];
        for (gi, grp) in a.grouping.groups.iter().enumerate() {
            prop_assert!(!grp.ops.is_empty());
            for &o in &grp.ops {
                count[o.index()] += 1;
                prop_assert_eq!(a.grouping.op_group[o.index()].index(), gi);
            }
        }
        prop_assert!(count.iter().all(|&c| c == 1));
        // Type rules: a matmul only ever starts a group; a reduction is last and never
        // shares a group with a matmul or another reduction.
        for grp in &a.grouping.groups {
            let types: Vec<OpType> = grp.ops.iter().map(|&o| g.op(o).op_type).collect();
            for (k, t) in types.iter().enumerate() {
                match t {
                    OpType::Matmul => prop_assert_eq!(k, 0),
                    OpType::Reduction => {
                        prop_assert_eq!(k, types.len() - 1);
                        prop_assert!(!types.contains(&OpType::Matmul));
                    }
                    _ => {}
                }
            }
        }
        // The group graph is acyclic (Kahn's algorithm consumes every group).
        let ng = a.grouping.groups.len();
        let mut edges: HashSet<(usize, usize)> = HashSet::new();
        for (i, op) in g.ops().iter().enumerate() {
            for &t in &op.inputs {
                if let Some(p) = g.tensor(t).producer {
                    let (from, to) = (a.grouping.op_group[p.index()].index(), a.grouping.op_group[i].index());
                    if from != to { edges.insert((from, to)); }
                }
            }
        }
        let mut indeg = vec![0; ng];
        for &(_, b) in &edges { indeg[b] += 1; }
        let mut ready: Vec<usize> = (0..ng).filter(|&v| indeg[v] == 0).collect();
        let mut done = 0;
        while let Some(v) = ready.pop() {
            done += 1;
            for &(x, y) in &edges {
                if x == v { indeg[y] -= 1; if indeg[y] == 0 { ready.push(y); } }
            }
        }
        prop_assert_eq!(done, ng);
        // Fusion never adds traffic, per group and in total.
        prop_assert!(a.traffic.fused.total() <= a.traffic.unfused.total());
        for t in &a.traffic.per_group {
            prop_assert!(t.fused.total() <= t.unfused.total());
        }
        let pct = a.savings_pct();
        prop_assert!((0.0..=100.0).contains(&pct));
    }

    /// Shuffling the file: the processing order is Kahn's with file priority, and the result is
    /// exactly that of the same graph written in the processing order. Unfused traffic, which
    /// does not depend on grouping, is the same for every file order when every tensor that no
    /// op produces is declared (assumed sizes depend on file order by the documented rule).
    #[test]
    fn file_order_matters_only_where_the_spec_says(
        ops in prop::collection::vec(gen_op(), 1..40),
        perm_seed in any::<u64>(),
    ) {
        let ordered = specs(&ops);
        let mut shuffled = ordered.clone();
        let mut rng = fusionscope::fusion::random::SplitMix64::new(perm_seed);
        for i in (1..shuffled.len()).rev() {
            let j = rng.below(i as u64 + 1) as usize;
            shuffled.swap(i, j);
        }
        let g = build(&shuffled, true);
        let a = analyse(&g);
        let rewritten: Vec<OpSpec> = g.order().iter().map(|&o| {
            shuffled.iter().find(|s| s.name == g.op(o).name).unwrap().clone()
        }).collect();
        let g2 = build(&rewritten, true);
        prop_assert_eq!(g2.order().iter().map(|o| o.0).collect::<Vec<_>>(), (0..g2.len() as u32).collect::<Vec<_>>());
        let a2 = analyse(&g2);
        prop_assert_eq!(a.report(&g).groups, a2.report(&g2).groups);
        prop_assert_eq!(a.traffic.fused, a2.traffic.fused);
        let base = analyse(&build(&ordered, true));
        prop_assert_eq!(a.traffic.unfused, base.traffic.unfused);
    }

    /// Writing a graph back to JSON and reading it again gives the same analysis.
    #[test]
    fn json_round_trip(ops in prop::collection::vec(gen_op(), 1..30), declare in any::<bool>()) {
        let g = build(&specs(&ops), declare);
        let text = serde_json::to_string(&to_file(&g)).unwrap();
        let g2 = parse_graph(&text).unwrap();
        let (r1, r2) = (analyse(&g).report(&g), analyse(&g2).report(&g2));
        prop_assert_eq!(r1, r2);
    }

    /// The loader streams the ops into the graph (tensors read first, wherever they are in the
    /// file); it must give what reading the whole file and then building it gives: the same
    /// graph, or the same error (the position it adds aside), on valid and damaged files alike.
    #[test]
    fn streamed_reading_agrees_with_whole_reading(
        ops in prop::collection::vec(gen_op(), 1..12),
        declare in any::<bool>(),
        tensors_first in any::<bool>(),
        duplicate in any::<Option<prop::sample::Index>>(),
        damage in prop::collection::vec((any::<prop::sample::Index>(), prop::sample::select(&b"\"-x,]}0 \\[{:"[..])), 0..3),
        cut in any::<Option<prop::sample::Index>>(),
    ) {
        let mut specs = specs(&ops);
        if let Some(i) = duplicate {
            // A second op with an earlier op's name, or (as the names are checked first) with
            // its output: duplicate names and two producers.
            let mut twin = specs[i.index(specs.len())].clone();
            if i.index(2) == 1 { twin.name = format!("other{}", specs.len()); }
            specs.push(twin);
        }
        let mut file = serde_json::to_value(to_file(&build(&specs[..1], declare))).unwrap();
        file["ops"] = serde_json::to_value(specs.iter().map(|s| serde_json::json!({
            "name": s.name, "op_type": s.op_type.to_string(), "inputs": s.inputs, "output": s.output,
            "shape": s.shape, "bytes_per_element": s.bytes_per_element,
        })).collect::<Vec<_>>()).unwrap();
        let tensors = file.get("tensors").map(|t| t.to_string());
        let ops_text = file["ops"].to_string();
        let mut text = match (tensors, tensors_first) {
            (Some(t), true) => format!("{{\"tensors\": {t}, \"ops\": {ops_text}}}"),
            (Some(t), false) => format!("{{\"ops\": {ops_text},\n\"tensors\": {t}}}"),
            (None, true) => ops_text,
            (None, false) => format!("{{\"ops\": {ops_text}}}"),
        }.into_bytes();
        for (at, byte) in damage {
            let i = at.index(text.len());
            text[i] = byte;
        }
        if let Some(c) = cut {
            text.truncate(c.index(text.len() + 1));
        }
        let text = String::from_utf8(text).unwrap();
        let whole = parse_file(&text).and_then(|f| build_file(&f, &|_| None, &|_| None));
        match (parse_graph(&text), whole) {
            (Ok(a), Ok(b)) => prop_assert_eq!(a, b),
            (Err(a), Err(b)) => {
                let a = a.to_string();
                let unplaced = a.rfind(" (line ").map_or(&a[..], |i| &a[..i]);
                prop_assert_eq!(unplaced, b.to_string());
            }
            (a, b) => prop_assert!(false, "streamed {:?}, whole {:?}\n{}", a.map(|g| g.len()), b.map(|g| g.len()), text),
        }
    }

    /// Arbitrary text never panics the loader: it is a graph or an error.
    #[test]
    fn loader_never_panics(text in ".{0,200}") {
        let _ = parse_graph(&text);
    }

    /// Truncating a valid file anywhere gives an error, not a panic.
    #[test]
    fn truncated_files_are_errors(ops in prop::collection::vec(gen_op(), 1..10), cut in any::<prop::sample::Index>()) {
        let g = build(&specs(&ops), true);
        let text = serde_json::to_string_pretty(&to_file(&g)).unwrap();
        let end = cut.index(text.len());
        prop_assert!(parse_graph(&text[..end]).is_err());
    }
}

#[test]
fn random_generator_graphs_are_grouped_like_the_literal_rules() {
    let g = fusionscope::fusion::random::random_graph(400, 7);
    let a = analyse(&g);
    let got = names(&g, &a.grouping.groups.iter().map(|gr| gr.ops.clone()).collect::<Vec<_>>());
    assert_eq!(got, reference_groups(&g));
}

/// Sizes that reach 64 bits: small dimensions mixed with 2^28, 2^31 and ~2^41 (the transformer
/// case S = 2^31, H = 2^28 makes tensors of 2^60 to 2^63 bytes).
fn huge_op() -> impl Strategy<Value = GenOp> {
    let dim = prop_oneof![1u64..9, Just(1u64 << 28), Just(1u64 << 31), (1u64 << 40)..(1u64 << 42)];
    (
        prop_oneof![Just(OpType::Matmul), Just(OpType::Elementwise), Just(OpType::Reduction), Just(OpType::Reshape)],
        prop::collection::vec((any::<bool>(), 0usize..1000), 0..4),
        prop::collection::vec(dim, 0..3),
        1u64..9,
    )
        .prop_map(|(op_type, inputs, shape, bpe)| GenOp { op_type, inputs, shape, bpe })
}

/// Tensor sizes by the rules of docs/fusion-rules.md in u128, which cannot overflow here:
/// produced tensors take their op's shape, the others (never declared here) the output of their
/// first reader.
fn sizes_u128(specs: &[OpSpec]) -> HashMap<String, u128> {
    let size = |s: &OpSpec| s.shape.iter().fold(u128::from(s.bytes_per_element), |a, &d| a * u128::from(d));
    let mut sizes: HashMap<String, u128> = specs.iter().map(|s| (s.output.clone(), size(s))).collect();
    for s in specs {
        for t in &s.inputs {
            sizes.entry(t.clone()).or_insert_with(|| size(s));
        }
    }
    sizes
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    /// No sizes make a wrapped total: the graph is refused with the overflow named exactly when
    /// a size or the unfused traffic passes 2^64 − 1, and otherwise every total equals its u128
    /// recomputation (unfused read and written; fused as the sum of its groups).
    #[test]
    fn no_sizes_produce_a_wrapped_total(ops in prop::collection::vec(huge_op(), 1..12)) {
        use fusionscope::fusion::GraphError;
        let specs = specs(&ops);
        let sizes = sizes_u128(&specs);
        let mut read = 0u128;
        let mut written = 0u128;
        for s in &specs {
            let distinct: BTreeSet<&String> = s.inputs.iter().collect();
            read += distinct.iter().map(|t| sizes[*t]).sum::<u128>();
            written += sizes[&s.output];
        }
        let mut b = GraphBuilder::new();
        for s in &specs {
            b.add_op(s.clone()).unwrap();
        }
        let max = u128::from(u64::MAX);
        match b.build() {
            Err(GraphError::SizeOverflow { tensor }) => prop_assert!(sizes[&tensor] > max, "{tensor} fits"),
            Err(GraphError::TrafficOverflow { op }) => {
                prop_assert!(sizes.values().all(|&s| s <= max));
                prop_assert!(read + written > max, "refused at {op}, but the traffic fits");
            }
            Err(e) => prop_assert!(false, "unexpected error {e}"),
            Ok(g) => {
                prop_assert!(read + written <= max);
                let r = analyse(&g).report(&g);
                prop_assert_eq!(u128::from(r.unfused.bytes_read), read);
                prop_assert_eq!(u128::from(r.unfused.bytes_written), written);
                prop_assert_eq!(u128::from(r.unfused.total), read + written);
                let fused: u128 = r.group_details.iter().map(|d| u128::from(d.fused.total)).sum();
                let unfused: u128 = r.group_details.iter().map(|d| u128::from(d.unfused.total)).sum();
                prop_assert_eq!(u128::from(r.fused.total), fused);
                prop_assert_eq!(unfused, read + written);
                prop_assert!(r.fused.total <= r.unfused.total);
                prop_assert_eq!(u128::from(r.fused.saved_by_fusion), read + written - fused);
            }
        }
    }
}
