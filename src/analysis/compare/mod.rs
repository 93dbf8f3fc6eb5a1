//! Comparison of two traces of the same workload (`docs/trace-analysis.md`, "Comparing two
//! traces"): the category table, the op-anchored kernel mapping with its sequence-alignment
//! fallback, and the fusion differences.
//!
//! Sides are keyed `amd`/`nvidia` when the vendors differ (AMD first, whatever the order the
//! traces were given in), else `a`/`b` in the order given. `time_ratio` is always the first
//! key's time over the second's (`amd / nvidia`, `a / b`).

use std::collections::BTreeMap;

use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

mod fusion;
mod layers;
pub mod pairing;
mod side;

use crate::structure::align::{align, Step};
use crate::summary::{ClassifiedTrace, PlatformEntry, SideAcc, SideStats};
use classify::category::Category;
pub use fusion::FusionDifference;
use fusion::FusionFinder;
use layers::{align_layers, merge};
pub use layers::{LayerAlignment, LayerRow, RowSide, EVIDENCE_PREFIX as LAYER_EVIDENCE};
use side::{align_kernels, ratio, two, Side, MAX_ALIGN_CELLS};
use trace::platform::{Processor, Vendor};
use trace::Trace;

/// A side whose kernels are at least this share op-anchored is mapped by op.
const MIN_ANCHORED_SHARE: f64 = 0.5;

/// How a mapping row was obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Method {
    /// Kernels joined to their launching CPU op by `External id`, op sequences aligned.
    #[serde(rename = "op-anchored")]
    OpAnchored,
    /// Kernels without a CPU op (graph replays, launches outside the CPU window) aligned as a
    /// sequence by category.
    #[serde(rename = "sequence")]
    Sequence,
}

/// One row of the category table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CategoryRow {
    pub category: Category,
    #[serde(flatten)]
    pub sides: BTreeMap<String, SideStats>,
    /// First key's time over the second's; absent when either side has none.
    pub time_ratio: Option<f64>,
}

/// One side of a mapping row.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OpSide {
    /// The op name on this side (differs between sides when aligned ops were renamed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub op: Option<String>,
    /// Op instances (calls) on this side; on `sequence` rows, the kernels (there is no op).
    pub calls: u64,
    #[serde(flatten)]
    pub stats: SideStats,
}

/// One row of the kernel mapping.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OpRow {
    pub op: String,
    pub method: Method,
    #[serde(flatten)]
    pub sides: BTreeMap<String, OpSide>,
}

/// The comparison (`fusionscope compare --json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    pub platforms: Vec<PlatformEntry>,
    /// What `time_ratio` divides (e.g. `"amd / nvidia"`).
    pub time_ratio: String,
    pub categories: Vec<CategoryRow>,
    pub op_mapping: Vec<OpRow>,
    pub fusion_differences: Vec<FusionDifference>,
    /// Each phase pair's layers aligned kernel by kernel (`docs/trace-analysis.md`, "Layer
    /// alignment"); empty when either trace has no layers. Absent in older share links.
    #[serde(default)]
    pub layer_alignment: Vec<LayerAlignment>,
}

impl Comparison {
    /// What ran both sides' kernels: the CPU where both are CPU runs, else GPUs (the words of
    /// a pair's sentences and charts: "of CPU time").
    pub fn processor(&self) -> Processor {
        match !self.platforms.is_empty() && self.platforms.iter().all(|p| p.processor() == Processor::Cpu) {
            true => Processor::Cpu,
            false => Processor::Gpu,
        }
    }
}

/// One input of the comparison: a classified trace and its file name (shown for same-vendor
/// pairs). A side handed its structure search when the trace was opened
/// ([`ClassifiedTrace::with_search`]) is not searched again.
pub struct Input<'t> {
    pub side: ClassifiedTrace<'t>,
    pub file: Option<&'t str>,
}

impl<'t> Input<'t> {
    /// `trace` classified by the built-in rules, named `file`.
    pub fn new(trace: &'t Trace, file: Option<&'t str>) -> Self {
        Input { side: ClassifiedTrace::new(trace), file }
    }
}

/// Compares two traces; see the module docs for keys and ordering.
pub fn compare<'t>(a: Input<'t>, b: Input<'t>) -> Comparison {
    let mut sides = [a, b].map(|Input { side: c, file }| {
        let ops = c.trace.kernel_ops();
        Side { c, key: String::new(), label: String::new(), file, ops }
    });
    let (va, vb) = (sides[0].c.platform.vendor, sides[1].c.platform.vendor);
    let cross_vendor = va != vb && va != Vendor::Unknown && vb != Vendor::Unknown;
    if cross_vendor {
        if swapped(va, vb) {
            sides.swap(0, 1);
        }
        for s in &mut sides {
            s.key = s.c.platform.vendor.to_string().to_lowercase();
            s.label = s.c.platform.vendor.to_string();
        }
    } else {
        for (s, key) in sides.iter_mut().zip(["a", "b"]) {
            s.key = key.to_string();
            s.label = s.file.unwrap_or(key).to_string();
        }
    }
    let [s0, s1] = sides;
    let (structure0, structure1) = (s0.c.structure_search(), s1.c.structure_search());
    let (layer_alignment, layer_differences) = match (structure0, structure1) {
        (Some(a), Some(b)) => align_layers(&s0, &s1, [a, b]),
        _ => (Vec::new(), Vec::new()),
    };
    let (s0, s1) = (&s0, &s1);
    let sides = [s0, s1];
    let mut fusion = FusionFinder::default();
    let op_mapping = op_mapping(s0, s1, &mut fusion, !layer_alignment.is_empty());
    let mut fusion_differences = fusion.finish(s0, s1);
    merge(&mut fusion_differences, layer_differences);
    Comparison {
        platforms: sides.iter().map(|s| PlatformEntry::new(&s.c, &s.key, s.file)).collect(),
        time_ratio: format!("{} / {}", s0.key, s1.key),
        categories: category_rows(s0, s1),
        op_mapping,
        fusion_differences,
        layer_alignment,
    }
}

/// Whether the comparison puts the second trace first: AMD goes first in a cross-vendor pair.
pub fn swapped(a: Vendor, b: Vendor) -> bool {
    a != b && a != Vendor::Unknown && b != Vendor::Unknown && a != Vendor::Amd
}

fn category_rows(s0: &Side<'_>, s1: &Side<'_>) -> Vec<CategoryRow> {
    let (c0, c1) = (s0.c.by_category(), s1.c.by_category());
    let mut cats: Vec<Category> = c0.keys().chain(c1.keys()).copied().collect();
    cats.sort();
    cats.dedup();
    let mut rows: Vec<CategoryRow> = cats
        .into_iter()
        .map(|cat| {
            let st0 = c0.get(&cat).cloned().unwrap_or_default().stats(&s0.c);
            let st1 = c1.get(&cat).cloned().unwrap_or_default().stats(&s1.c);
            CategoryRow { category: cat, time_ratio: ratio(st0.time_us, st1.time_us), sides: two(s0, st0, s1, st1) }
        })
        .collect();
    let max_time = |r: &CategoryRow| r.sides.values().map(|s| s.time_us).fold(0.0, f64::max);
    rows.sort_by(|x, y| max_time(y).total_cmp(&max_time(x)).then(x.category.cmp(&y.category)));
    rows
}

/// One op instance: a CPU op and the kernels it launched.
struct OpCall {
    op: usize,
    kernels: Vec<usize>,
    /// Category of its longest kernel.
    dominant: Category,
}

fn op_calls(s: &Side<'_>) -> Vec<OpCall> {
    let mut by_op: FxHashMap<usize, Vec<usize>> = FxHashMap::default();
    for (k, op) in s.ops.iter().enumerate() {
        if let Some(op) = op {
            by_op.entry(*op).or_default().push(k);
        }
    }
    let mut calls: Vec<OpCall> = by_op
        .into_iter()
        .map(|(op, kernels)| {
            let longest = kernels.iter().copied().max_by(|&x, &y| s.dur(x).total_cmp(&s.dur(y))).unwrap_or(0);
            OpCall { op, dominant: s.class(longest).category, kernels }
        })
        .collect();
    // cpu_ops are sorted by start time, so their index orders the calls.
    calls.sort_by_key(|c| c.op);
    calls
}

/// One mapping row being filled: per side, the op's name (when the sides differ), the op calls
/// and the kernels.
struct RowAcc {
    op: String,
    method: Method,
    names: [Option<String>; 2],
    calls: [u64; 2],
    kernels: [SideAcc; 2],
}

/// Accumulates the rows of the mapping in order of first appearance.
#[derive(Default)]
struct Rows {
    index: FxHashMap<(String, Method), usize>,
    rows: Vec<RowAcc>,
}

impl Rows {
    /// The row for `op` by `method`, created on first use.
    fn row(&mut self, op: String, method: Method, names: [Option<String>; 2]) -> &mut RowAcc {
        let i = self.index_of(op, method, names);
        &mut self.rows[i]
    }

    /// The index of [`Self::row`]'s row.
    fn index_of(&mut self, op: String, method: Method, names: [Option<String>; 2]) -> usize {
        let next = self.rows.len();
        let i = *self.index.entry((op.clone(), method)).or_insert(next);
        if i == next {
            self.rows.push(RowAcc { op, method, names, calls: [0, 0], kernels: Default::default() });
        }
        i
    }

    fn finish(self, s0: &Side<'_>, s1: &Side<'_>) -> Vec<OpRow> {
        self.rows
            .into_iter()
            .map(|r| {
                let [n0, n1] = r.names;
                let [a0, a1] = r.kernels;
                OpRow {
                    op: r.op,
                    method: r.method,
                    sides: two(
                        s0,
                        OpSide { op: n0, calls: r.calls[0], stats: a0.stats(&s0.c) },
                        s1,
                        OpSide { op: n1, calls: r.calls[1], stats: a1.stats(&s1.c) },
                    ),
                }
            })
            .collect()
    }
}

/// The kernel mapping. Kernels without a CPU op are aligned as one sequence per side, unless
/// the layers of both traces were aligned (`layered`): the layer alignment compares them kernel
/// by kernel on one layer, and aligning whole streams of hundreds of thousands of kernels would
/// only repeat it at most of a comparison's cost, so they are mapped by category.
fn op_mapping(s0: &Side<'_>, s1: &Side<'_>, fusion: &mut FusionFinder, layered: bool) -> Vec<OpRow> {
    let mut rows = Rows::default();
    let by_op = s0.anchored_share() >= MIN_ANCHORED_SHARE && s1.anchored_share() >= MIN_ANCHORED_SHARE;
    let mut unanchored: [Vec<usize>; 2] = [Vec::new(), Vec::new()];
    for (side, s) in [s0, s1].iter().enumerate() {
        unanchored[side] = (0..s.ops.len()).filter(|&k| !by_op || s.ops[k].is_none()).collect();
    }
    if by_op {
        map_by_op(s0, s1, &mut rows, fusion);
    }
    if layered {
        map_by_category(s0, s1, &unanchored, &mut rows);
    } else {
        let steps = align_kernels(s0, s1, &unanchored);
        map_by_sequence(s0, s1, &unanchored, &steps, &mut rows);
        if by_op {
            let all: [Vec<usize>; 2] = [(0..s0.ops.len()).collect(), (0..s1.ops.len()).collect()];
            fusion.by_sequence(s0, s1, &all, &align_kernels(s0, s1, &all));
        } else {
            // Without op anchoring every kernel is unanchored: the same alignment serves.
            fusion.by_sequence(s0, s1, &unanchored, &steps);
        }
    }
    rows.finish(s0, s1)
}

fn map_by_op(s0: &Side<'_>, s1: &Side<'_>, rows: &mut Rows, fusion: &mut FusionFinder) {
    let calls = [op_calls(s0), op_calls(s1)];
    // Op names of both traces in one id space so that they compare as integers.
    let mut ids: FxHashMap<&str, u32> = FxHashMap::default();
    let keyed: Vec<Vec<u32>> = [s0, s1]
        .iter()
        .zip(&calls)
        .map(|(s, cs)| {
            cs.iter()
                .map(|c| {
                    let name = s.c.trace.name(s.c.trace.cpu_ops[c.op].name);
                    let next = ids.len() as u32;
                    *ids.entry(name).or_insert(next)
                })
                .collect()
        })
        .collect();
    let score = |i: usize, j: usize| {
        if keyed[0][i] == keyed[1][j] {
            Some(4)
        } else {
            let (d0, d1) = (calls[0][i].dominant, calls[1][j].dominant);
            (d0 == d1 && d0 != Category::Other).then_some(1)
        }
    };
    let steps = align(calls[0].len(), calls[1].len(), score, 1, MAX_ALIGN_CELLS);
    let sides = [s0, s1];
    let op_name = |side: usize, call: &OpCall| {
        let t = sides[side].c.trace;
        t.name(t.cpu_ops[call.op].name).to_string()
    };
    for step in steps {
        let (c0, c1) = match step {
            Step::Pair(i, j) => (Some(&calls[0][i]), Some(&calls[1][j])),
            Step::OnlyA(i) => (Some(&calls[0][i]), None),
            Step::OnlyB(j) => (None, Some(&calls[1][j])),
        };
        let names = [c0.map(|c| op_name(0, c)), c1.map(|c| op_name(1, c))];
        let op = match &names {
            [Some(x), Some(y)] if x != y => format!("{x} / {y}"),
            [Some(x), _] | [None, Some(x)] => x.clone(),
            [None, None] => continue,
        };
        // Each side's own op name only where the two differ.
        let names = if matches!(&names, [Some(x), Some(y)] if x != y) { names } else { [None, None] };
        let row = rows.row(op.clone(), Method::OpAnchored, names);
        for (side, call) in [c0, c1].into_iter().enumerate() {
            if let Some(call) = call {
                row.calls[side] += 1;
                for &k in &call.kernels {
                    row.kernels[side].add(sides[side].kernel_name(k), sides[side].dur(k));
                }
            }
        }
        if let (Some(x), Some(y)) = (c0, c1) {
            fusion.by_op(s0, s1, &x.kernels, &y.kernels, &op);
        }
    }
}

/// One `sequence` row per category of the kernels without a CPU op, in order of first
/// appearance (the first side's kernels first).
fn map_by_category(s0: &Side<'_>, s1: &Side<'_>, seqs: &[Vec<usize>; 2], rows: &mut Rows) {
    let sides = [s0, s1];
    // Each category's row is looked up once, not per kernel (there are hundreds of thousands).
    let mut row_of: FxHashMap<Category, usize> = FxHashMap::default();
    for (side, seq) in seqs.iter().enumerate() {
        let s = sides[side];
        for &k in seq {
            let category = s.class(k).category;
            let i = *row_of.entry(category).or_insert_with(|| {
                rows.index_of(format!("{category} kernels without CPU op"), Method::Sequence, [None, None])
            });
            let row = &mut rows.rows[i];
            row.calls[side] += 1;
            row.kernels[side].add(s.kernel_name(k), s.dur(k));
        }
    }
}

fn map_by_sequence(s0: &Side<'_>, s1: &Side<'_>, seqs: &[Vec<usize>; 2], steps: &[Step], rows: &mut Rows) {
    if seqs[0].is_empty() && seqs[1].is_empty() {
        return;
    }
    let sides = [s0, s1];
    for &step in steps {
        let ks = match step {
            Step::Pair(i, j) => [Some(seqs[0][i]), Some(seqs[1][j])],
            Step::OnlyA(i) => [Some(seqs[0][i]), None],
            Step::OnlyB(j) => [None, Some(seqs[1][j])],
        };
        let cats = [ks[0].map(|k| s0.class(k).category), ks[1].map(|k| s1.class(k).category)];
        let op = match cats {
            [Some(x), Some(y)] if x != y => format!("{x} / {y} kernels without CPU op"),
            [Some(x), _] | [None, Some(x)] => format!("{x} kernels without CPU op"),
            [None, None] => continue,
        };
        let row = rows.row(op, Method::Sequence, [None, None]);
        for (side, k) in ks.into_iter().enumerate() {
            if let Some(k) = k {
                row.calls[side] += 1;
                row.kernels[side].add(sides[side].kernel_name(k), sides[side].dur(k));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::summary::tests::by_prefix;
    use formats::read_trace;

    /// A trace from (kernel name, op name or "" for none) pairs, one op per kernel.
    fn trace(vendor_key: &str, kernels: &[(&str, &str)]) -> Trace {
        let mut ev = Vec::new();
        for (i, (k, op)) in kernels.iter().enumerate() {
            let ts = i as f64 * 10.0;
            if op.is_empty() {
                ev.push(format!(
                    r#"{{"ph":"X","cat":"kernel","name":"{k}","pid":0,"ts":{ts},"dur":2,"args":{{"correlation":{i}}}}}"#
                ));
            } else {
                ev.push(format!(r#"{{"ph":"X","cat":"cpu_op","name":"{op}","pid":1,"tid":1,"ts":{ts},"dur":1,"args":{{"External id":{i}}}}}"#));
                ev.push(format!(
                    r#"{{"ph":"X","cat":"kernel","name":"{k}","pid":0,"ts":{ts},"dur":2,"args":{{"External id":{i}}}}}"#
                ));
            }
        }
        read_trace(format!(r#"{{"{vendor_key}":1,"traceEvents":[{}]}}"#, ev.join(",")).as_bytes()).unwrap()
    }

    #[test]
    fn keys_amd_first_whatever_the_order() {
        let nv = trace("cupti_version", &[("gemm_nv", "aten::mm")]);
        let amd = trace("roctracer_version", &[("gemm_amd", "aten::mm"), ("add_x", "aten::add")]);
        let c = compare(
            Input { side: ClassifiedTrace::with_classifier(&nv, &by_prefix), file: Some("n") },
            Input { side: ClassifiedTrace::with_classifier(&amd, &by_prefix), file: Some("a") },
        );
        assert_eq!(c.platforms.iter().map(|p| p.key.as_str()).collect::<Vec<_>>(), vec!["amd", "nvidia"]);
        assert_eq!(c.time_ratio, "amd / nvidia");
        let gemm = c.categories.iter().find(|r| r.category == Category::Gemm).unwrap();
        assert_eq!(gemm.time_ratio, Some(1.0));
        let add = c.categories.iter().find(|r| r.category == Category::Elementwise).unwrap();
        assert_eq!((add.sides["amd"].count, add.sides["nvidia"].count, add.time_ratio), (1, 0, None));
        let mm = &c.op_mapping[0];
        assert_eq!((mm.op.as_str(), mm.method), ("aten::mm", Method::OpAnchored));
        assert_eq!(mm.sides["amd"].stats.kernels[0].name, "gemm_amd");
        assert_eq!(mm.sides["nvidia"].stats.kernels[0].name, "gemm_nv");
        assert_eq!(c.op_mapping[1].sides["nvidia"].calls, 0);
    }

    #[test]
    fn renamed_ops_pair_up_by_their_kernels_category() {
        let nv = trace(
            "cupti_version",
            &[("gemm_a", "aten::mm"), ("norm_x", "aten::_fused_rms_norm"), ("gemm_b", "aten::mm")],
        );
        let amd =
            trace("roctracer_version", &[("gemm_c", "aten::mm"), ("norm_y", "vllm::rms_norm"), ("gemm_d", "aten::mm")]);
        let c = compare(
            Input { side: ClassifiedTrace::with_classifier(&nv, &by_prefix), file: None },
            Input { side: ClassifiedTrace::with_classifier(&amd, &by_prefix), file: None },
        );
        let ops: Vec<&str> = c.op_mapping.iter().map(|r| r.op.as_str()).collect();
        assert_eq!(ops, ["aten::mm", "vllm::rms_norm / aten::_fused_rms_norm"]);
        let norm = &c.op_mapping[1];
        assert_eq!(norm.sides["amd"].op.as_deref(), Some("vllm::rms_norm"));
        assert_eq!(norm.sides["nvidia"].op.as_deref(), Some("aten::_fused_rms_norm"));
        assert_eq!((norm.sides["amd"].calls, norm.sides["nvidia"].calls), (1, 1));
        assert_eq!(c.op_mapping[0].sides["amd"].calls, 2);
    }

    #[test]
    fn same_vendor_pairs_are_a_and_b() {
        let t = trace("cupti_version", &[("gemm_x", "aten::mm")]);
        let c = compare(
            Input { side: ClassifiedTrace::with_classifier(&t, &by_prefix), file: Some("before") },
            Input { side: ClassifiedTrace::with_classifier(&t, &by_prefix), file: Some("after") },
        );
        assert_eq!(c.platforms.iter().map(|p| p.key.as_str()).collect::<Vec<_>>(), vec!["a", "b"]);
        assert_eq!(c.platforms[1].file.as_deref(), Some("after"));
        assert!(c.fusion_differences.is_empty());
    }

    #[test]
    fn finds_fusion_by_sequence_and_by_op() {
        // Graph replays (no ops): a fused add+norm against add and norm.
        let fused = trace("cupti_version", &[("gemm_1", ""), ("fusednorm_x", ""), ("gemm_2", "")]);
        let split = trace("roctracer_version", &[("gemm_1", ""), ("add_y", ""), ("norm_z", ""), ("gemm_2", "")]);
        let c = compare(
            Input { side: ClassifiedTrace::with_classifier(&fused, &by_prefix), file: None },
            Input { side: ClassifiedTrace::with_classifier(&split, &by_prefix), file: None },
        );
        assert!(c.op_mapping.iter().all(|r| r.method == Method::Sequence));
        assert_eq!(c.fusion_differences.len(), 1, "{:#?}", c.fusion_differences);
        let d = &c.fusion_differences[0];
        assert_eq!((d.fused_platform.as_str(), d.fused_kernel.as_str()), ("NVIDIA", "fusednorm_x"));
        assert_eq!(d.unfused_kernels, vec!["add_y", "norm_z"]);
        assert_eq!(d.time_us["amd"], 4.0);
        assert!(d.evidence.starts_with("sequence"));
        // The same inside one op: op-anchored evidence, higher confidence.
        let mut ev =
            vec![r#"{"ph":"X","cat":"cpu_op","name":"aten::layer_norm","ts":0,"dur":9,"args":{"External id":1}}"#
                .to_string()];
        for (i, k) in ["add_y", "norm_z"].iter().enumerate() {
            ev.push(format!(
                r#"{{"ph":"X","cat":"kernel","name":"{k}","pid":0,"ts":{i},"dur":2,"args":{{"External id":1}}}}"#
            ));
        }
        let split_op =
            read_trace(format!(r#"{{"roctracer_version":1,"traceEvents":[{}]}}"#, ev.join(",")).as_bytes()).unwrap();
        let fused_op = trace("cupti_version", &[("fusednorm_x", "aten::layer_norm")]);
        let c = compare(
            Input { side: ClassifiedTrace::with_classifier(&fused_op, &by_prefix), file: None },
            Input { side: ClassifiedTrace::with_classifier(&split_op, &by_prefix), file: None },
        );
        assert_eq!(c.fusion_differences.len(), 1);
        assert!(c.fusion_differences[0].evidence.starts_with("op-anchored"));
        assert!(c.fusion_differences[0].confidence > d.confidence);
    }
}
