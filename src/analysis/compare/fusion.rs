//! The fusion differences of a comparison: places where one side runs one kernel for what the
//! other runs as several (a fused norm against its reductions and elementwise kernels), found
//! under the same CPU op or in aligned stretches of the kernel sequences, with their evidence.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::side::{compatible, two, unfused_forms, Side};
use crate::structure::align::Step;
use crate::summary::round3;
use classify::category::Category;
use classify::Classification;
use trace::intern::NameId;

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

/// Share of the fused kernel's components that the unfused kernels account for.
pub(super) fn coverage(fused: &Classification, others: &[&Classification]) -> f64 {
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
pub(super) struct FusionFinder {
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
    pub(super) fn by_op(&mut self, s0: &Side<'_>, s1: &Side<'_>, k0: &[usize], k1: &[usize], op: &str) {
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
    /// Fusion differences along `steps`, the alignment of `seqs`.
    pub(super) fn by_sequence(&mut self, s0: &Side<'_>, s1: &Side<'_>, seqs: &[Vec<usize>; 2], steps: &[Step]) {
        let sides = [s0, s1];
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

    pub(super) fn finish(self, s0: &Side<'_>, s1: &Side<'_>) -> Vec<FusionDifference> {
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
