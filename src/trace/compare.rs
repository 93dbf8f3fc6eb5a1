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

use super::align::{align, Step};
use super::category::Category;
use super::classify::Classification;
use super::intern::NameId;
use super::model::Trace;
use super::platform::Vendor;
use super::summary::{round3, ClassifiedTrace, Classifier, PlatformEntry, SideAcc, SideStats};

/// Table cells the alignments may use (bytes of traceback): beyond this they are banded.
const MAX_ALIGN_CELLS: usize = 16 << 20;
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

/// One place where a side runs one kernel for what the other runs as several.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FusionDifference {
    /// Vendor (or file name for same-vendor pairs) of the side with the fused kernel.
    pub fused_platform: String,
    /// Its key (`amd`, `nvidia`, `a`, `b`).
    pub fused_side: String,
    pub fused_kernel: String,
    pub components: Vec<Category>,
    /// The other side's kernels, distinct, in order of execution.
    pub unfused_kernels: Vec<String>,
    /// Instances found.
    pub count: u64,
    /// Total time of the instances on each side, µs.
    pub time_us: BTreeMap<String, f64>,
    /// 0–1: how many of the fused kernel's components the other side's kernels account for,
    /// and whether the op anchor or only the sequence supports it.
    pub confidence: f64,
    pub evidence: String,
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
}

/// One input of the comparison.
pub struct Input<'t> {
    pub trace: &'t Trace,
    /// File name, shown for same-vendor pairs.
    pub file: Option<&'t str>,
}

struct Side<'t> {
    c: ClassifiedTrace<'t>,
    key: String,
    label: String,
    file: Option<&'t str>,
    /// The CPU op of each kernel, if any.
    ops: Vec<Option<usize>>,
}

impl Side<'_> {
    fn class(&self, k: usize) -> &Classification {
        self.c.class(self.c.trace.kernels[k].name)
    }
    fn kernel_name(&self, k: usize) -> NameId {
        self.c.trace.kernels[k].name
    }
    fn dur(&self, k: usize) -> f64 {
        self.c.trace.kernels[k].dur
    }
    fn anchored_share(&self) -> f64 {
        if self.ops.is_empty() {
            return 0.0;
        }
        self.ops.iter().filter(|o| o.is_some()).count() as f64 / self.ops.len() as f64
    }
}

/// Compares two traces; see the module docs for keys and ordering.
pub fn compare(a: Input<'_>, b: Input<'_>, classifier: Classifier<'_>) -> Comparison {
    let mut sides = [a, b].map(|i| {
        let c = ClassifiedTrace::new(i.trace, classifier);
        let ops = i.trace.kernel_ops();
        Side { c, key: String::new(), label: String::new(), file: i.file, ops }
    });
    let (va, vb) = (sides[0].c.platform.vendor, sides[1].c.platform.vendor);
    let cross_vendor = va != vb && va != Vendor::Unknown && vb != Vendor::Unknown;
    if cross_vendor {
        if va != Vendor::Amd {
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
    let [s0, s1] = &sides;
    let mut fusion = FusionFinder::default();
    let op_mapping = op_mapping(s0, s1, &mut fusion);
    Comparison {
        platforms: sides.iter().map(|s| PlatformEntry::new(&s.c, &s.key, s.file)).collect(),
        time_ratio: format!("{} / {}", s0.key, s1.key),
        categories: category_rows(s0, s1),
        op_mapping,
        fusion_differences: fusion.finish(s0, s1),
    }
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

fn ratio(t0: f64, t1: f64) -> Option<f64> {
    (t0 > 0.0 && t1 > 0.0).then(|| (t0 / t1 * 1000.0).round() / 1000.0)
}

fn two<T>(s0: &Side<'_>, v0: T, s1: &Side<'_>, v1: T) -> BTreeMap<String, T> {
    BTreeMap::from([(s0.key.clone(), v0), (s1.key.clone(), v1)])
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
        let next = self.rows.len();
        let i = *self.index.entry((op.clone(), method)).or_insert(next);
        if i == next {
            self.rows.push(RowAcc { op, method, names, calls: [0, 0], kernels: Default::default() });
        }
        &mut self.rows[i]
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

fn op_mapping(s0: &Side<'_>, s1: &Side<'_>, fusion: &mut FusionFinder) -> Vec<OpRow> {
    let mut rows = Rows::default();
    let by_op = s0.anchored_share() >= MIN_ANCHORED_SHARE && s1.anchored_share() >= MIN_ANCHORED_SHARE;
    let mut unanchored: [Vec<usize>; 2] = [Vec::new(), Vec::new()];
    for (side, s) in [s0, s1].iter().enumerate() {
        unanchored[side] = (0..s.ops.len()).filter(|&k| !by_op || s.ops[k].is_none()).collect();
    }
    if by_op {
        map_by_op(s0, s1, &mut rows, fusion);
    }
    map_by_sequence(s0, s1, &unanchored, &mut rows);
    let all: [Vec<usize>; 2] = [(0..s0.ops.len()).collect(), (0..s1.ops.len()).collect()];
    fusion.by_sequence(s0, s1, &all);
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

/// Kernel-alignment score by category: same category pairs best; a fused kernel may pair
/// with one that runs one of its components.
fn kernel_score(a: &Classification, b: &Classification) -> Option<i64> {
    if a.category == b.category {
        Some(3)
    } else if (a.is_fused() && compatible(a, b)) || (b.is_fused() && compatible(b, a)) {
        Some(1)
    } else {
        None
    }
}

fn align_kernels(s0: &Side<'_>, s1: &Side<'_>, seqs: &[Vec<usize>; 2]) -> Vec<Step> {
    // Scores depend only on the two kernel names: a table over the distinct names keeps the
    // alignment's inner loop to two lookups.
    let dense = |s: &Side<'_>, seq: &[usize]| {
        let mut ids: FxHashMap<NameId, u32> = FxHashMap::default();
        let mut names: Vec<NameId> = Vec::new();
        let coded: Vec<u32> = seq
            .iter()
            .map(|&k| {
                let name = s.kernel_name(k);
                *ids.entry(name).or_insert_with(|| {
                    names.push(name);
                    names.len() as u32 - 1
                })
            })
            .collect();
        (coded, names)
    };
    let (c0, n0) = dense(s0, &seqs[0]);
    let (c1, n1) = dense(s1, &seqs[1]);
    let table: Vec<Option<i64>> =
        n0.iter().flat_map(|&x| n1.iter().map(move |&y| kernel_score(s0.c.class(x), s1.c.class(y)))).collect();
    let width = n1.len();
    let score = |i: usize, j: usize| table[c0[i] as usize * width + c1[j] as usize];
    align(seqs[0].len(), seqs[1].len(), score, 1, MAX_ALIGN_CELLS)
}

fn map_by_sequence(s0: &Side<'_>, s1: &Side<'_>, seqs: &[Vec<usize>; 2], rows: &mut Rows) {
    if seqs[0].is_empty() && seqs[1].is_empty() {
        return;
    }
    let sides = [s0, s1];
    for step in align_kernels(s0, s1, seqs) {
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

/// What a component may look like when run unfused: a norm as reductions and elementwise
/// kernels, a softmax likewise, an activation as an elementwise kernel.
fn unfused_forms(c: Category) -> &'static [Category] {
    use Category::*;
    match c {
        Norm => &[Norm, Reduction, Elementwise],
        Softmax => &[Softmax, Reduction, Elementwise],
        Activation => &[Activation, Elementwise],
        Attention => &[Attention, Softmax, Gemm],
        Gemm => &[Gemm],
        Moe => &[Moe, Gemm, Sort, Activation],
        Rotary => &[Rotary, Elementwise],
        Quantization => &[Quantization, Elementwise, Reduction],
        Reduction => &[Reduction],
        Elementwise => &[Elementwise],
        Embedding => &[Embedding],
        KvCache => &[KvCache, Memory],
        Communication => &[Communication],
        Memory => &[Memory, Elementwise],
        Sort => &[Sort],
        Sampling => &[Sampling, Sort, Softmax, Reduction],
        Other => &[],
    }
}

/// Whether `other` could be one of the separate kernels `fused` stands for.
fn compatible(fused: &Classification, other: &Classification) -> bool {
    if other.is_fused() && other.components.len() >= fused.components.len() {
        return false;
    }
    other.components.iter().all(|c| fused.components.iter().any(|f| unfused_forms(*f).contains(c)))
}

/// Share of the fused kernel's components that the unfused kernels account for.
fn coverage(fused: &Classification, others: &[&Classification]) -> f64 {
    let covered = fused
        .components
        .iter()
        .filter(|f| others.iter().any(|o| o.components.iter().any(|c| unfused_forms(**f).contains(c))))
        .count();
    covered as f64 / fused.components.len().max(1) as f64
}

#[derive(Default)]
struct FusionAcc {
    count: u64,
    time: [f64; 2],
    coverage_sum: f64,
    op_anchored: bool,
    ops: Vec<String>,
}

/// Finds and groups fusion differences.
#[derive(Default)]
struct FusionFinder {
    /// (fused side, fused kernel name, unfused kernel names of the other side) → totals.
    found: BTreeMap<(usize, NameId, Vec<NameId>), FusionAcc>,
    order: Vec<(usize, NameId, Vec<NameId>)>,
    /// Fused kernels already explained by an op anchor: (side, kernel index).
    anchored: rustc_hash::FxHashSet<(usize, usize)>,
}

impl FusionFinder {
    fn record(&mut self, sides: [&Side<'_>; 2], fused_side: usize, fused: usize, others: &[usize], op: Option<&str>) {
        let (fs, os) = (sides[fused_side], sides[1 - fused_side]);
        let fc = fs.class(fused);
        let classes: Vec<&Classification> = others.iter().map(|&k| os.class(k)).collect();
        let mut names: Vec<NameId> = Vec::new();
        for &k in others {
            if !names.contains(&os.kernel_name(k)) {
                names.push(os.kernel_name(k));
            }
        }
        let key = (fused_side, fs.kernel_name(fused), names);
        if !self.found.contains_key(&key) {
            self.order.push(key.clone());
        }
        let acc = self.found.entry(key).or_default();
        acc.count += 1;
        acc.time[fused_side] += fs.dur(fused);
        acc.time[1 - fused_side] += others.iter().map(|&k| os.dur(k)).fold(0.0, |a, b| a + b);
        acc.coverage_sum += coverage(fc, &classes);
        if let Some(op) = op {
            acc.op_anchored = true;
            if !acc.ops.iter().any(|o| o == op) {
                acc.ops.push(op.to_string());
            }
        }
    }

    /// Within one aligned op pair: a fused kernel on one side against two or more kernels on
    /// the other that it could stand for.
    fn by_op(&mut self, s0: &Side<'_>, s1: &Side<'_>, k0: &[usize], k1: &[usize], op: &str) {
        let sides = [s0, s1];
        for (fused_side, (mine, theirs)) in [(k0, k1), (k1, k0)].into_iter().enumerate() {
            if mine.len() >= theirs.len() {
                continue;
            }
            let (fs, os) = (sides[fused_side], sides[1 - fused_side]);
            for &f in mine.iter().filter(|&&f| fs.class(f).is_fused()) {
                let others: Vec<usize> =
                    theirs.iter().copied().filter(|&k| compatible(fs.class(f), os.class(k))).collect();
                if others.len() >= 2 {
                    self.anchored.insert((fused_side, f));
                    self.record(sides, fused_side, f, &others, Some(op));
                }
            }
        }
    }

    /// Along the kernel alignment: a fused kernel and the stretch of columns around it up to
    /// the nearest kernel (on either side) that cannot be one of its parts. The other side's
    /// kernels in that stretch that are unpaired or paired with the fused kernel itself are
    /// what it stands for; two or more make a difference. (Kernels of the fused side paired in
    /// the stretch, e.g. an eager `mul` on both sides, keep their partners.)
    fn by_sequence(&mut self, s0: &Side<'_>, s1: &Side<'_>, seqs: &[Vec<usize>; 2]) {
        let sides = [s0, s1];
        let steps = align_kernels(s0, s1, seqs);
        let at = |step: Step, side: usize| -> Option<usize> {
            match (step, side) {
                (Step::Pair(i, _), 0) | (Step::OnlyA(i), 0) => Some(seqs[0][i]),
                (Step::Pair(_, j), 1) | (Step::OnlyB(j), 1) => Some(seqs[1][j]),
                _ => None,
            }
        };
        for fused_side in 0..2 {
            let other_side = 1 - fused_side;
            let (fs, os) = (sides[fused_side], sides[other_side]);
            for (c, &step) in steps.iter().enumerate() {
                let Some(f) = at(step, fused_side) else { continue };
                let fc = fs.class(f);
                if !fc.is_fused() || self.anchored.contains(&(fused_side, f)) {
                    continue;
                }
                // A column stays in the stretch when neither side's kernel rules it out.
                let inside = |s: Step| {
                    at(s, other_side).is_none_or(|k| compatible(fc, os.class(k)))
                        && at(s, fused_side).is_none_or(|k| !fs.class(k).is_fused() && compatible(fc, fs.class(k)))
                };
                let mut l = c;
                while l > 0 && inside(steps[l - 1]) {
                    l -= 1;
                }
                let mut r = c + 1;
                while r < steps.len() && inside(steps[r]) {
                    r += 1;
                }
                let others: Vec<usize> = steps[l..r]
                    .iter()
                    .enumerate()
                    .filter(|&(i, &s)| l + i == c || at(s, fused_side).is_none())
                    .filter_map(|(_, &s)| at(s, other_side))
                    .filter(|&k| compatible(fc, os.class(k)))
                    .collect();
                if others.len() >= 2 {
                    self.record(sides, fused_side, f, &others, None);
                }
            }
        }
    }

    fn finish(self, s0: &Side<'_>, s1: &Side<'_>) -> Vec<FusionDifference> {
        let sides = [s0, s1];
        let mut out: Vec<FusionDifference> = self
            .order
            .into_iter()
            .map(|key| {
                let acc = &self.found[&key];
                let (fused_side, fused, names) = key;
                let (fs, os) = (sides[fused_side], sides[1 - fused_side]);
                let mean_coverage = acc.coverage_sum / acc.count as f64;
                // Op anchors are strong evidence; a sequence match is weaker, more so when seen once.
                let base = if acc.op_anchored { 0.6 } else { 0.3 };
                let recurrence = if acc.count >= 2 { 0.1 } else { 0.0 };
                let confidence = (base + 0.3 * mean_coverage + recurrence).min(1.0);
                let evidence = if acc.op_anchored {
                    format!("op-anchored: same CPU op ({}) on both sides", acc.ops.join(", "))
                } else {
                    "sequence: kernel sequences aligned by category around the fused kernel".to_string()
                };
                FusionDifference {
                    fused_platform: fs.label.clone(),
                    fused_side: fs.key.clone(),
                    fused_kernel: fs.c.trace.name(fused).to_string(),
                    components: fs.c.class(fused).components.clone(),
                    unfused_kernels: names.iter().map(|&n| os.c.trace.name(n).to_string()).collect(),
                    count: acc.count,
                    time_us: two(s0, round3(acc.time[0]), s1, round3(acc.time[1])),
                    confidence: round3(confidence),
                    evidence,
                }
            })
            .collect();
        let total = |d: &FusionDifference| d.time_us.values().fold(0.0, |a, b| a + b);
        out.sort_by(|x, y| total(y).total_cmp(&total(x)).then_with(|| x.fused_kernel.cmp(&y.fused_kernel)));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::read_trace;
    use crate::trace::summary::tests::by_prefix;

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
        let c = compare(Input { trace: &nv, file: Some("n") }, Input { trace: &amd, file: Some("a") }, &by_prefix);
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
        let c = compare(Input { trace: &nv, file: None }, Input { trace: &amd, file: None }, &by_prefix);
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
        let c =
            compare(Input { trace: &t, file: Some("before") }, Input { trace: &t, file: Some("after") }, &by_prefix);
        assert_eq!(c.platforms.iter().map(|p| p.key.as_str()).collect::<Vec<_>>(), vec!["a", "b"]);
        assert_eq!(c.platforms[1].file.as_deref(), Some("after"));
        assert!(c.fusion_differences.is_empty());
    }

    #[test]
    fn finds_fusion_by_sequence_and_by_op() {
        // Graph replays (no ops): a fused add+norm against add and norm.
        let fused = trace("cupti_version", &[("gemm_1", ""), ("fusednorm_x", ""), ("gemm_2", "")]);
        let split = trace("roctracer_version", &[("gemm_1", ""), ("add_y", ""), ("norm_z", ""), ("gemm_2", "")]);
        let c = compare(Input { trace: &fused, file: None }, Input { trace: &split, file: None }, &by_prefix);
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
        let c = compare(Input { trace: &fused_op, file: None }, Input { trace: &split_op, file: None }, &by_prefix);
        assert_eq!(c.fusion_differences.len(), 1);
        assert!(c.fusion_differences[0].evidence.starts_with("op-anchored"));
        assert!(c.fusion_differences[0].confidence > d.confidence);
    }
}
