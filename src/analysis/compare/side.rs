//! One side of a comparison: a classified trace, its key in the JSON (`amd`, `nvidia`, `a`,
//! `b`), its label, and the CPU op of each kernel; and the alignment of two sides' kernel
//! sequences, which the mapping and the fusion differences both use.

use std::collections::BTreeMap;

use rustc_hash::FxHashMap;

use crate::structure::align::{align, Step};
use crate::summary::ClassifiedTrace;
use classify::category::Category;
use classify::Classification;
use trace::intern::NameId;

pub(super) struct Side<'t> {
    pub c: ClassifiedTrace<'t>,
    pub key: String,
    pub label: String,
    pub file: Option<&'t str>,
    /// The CPU op of each kernel, if any.
    pub ops: Vec<Option<usize>>,
}

impl Side<'_> {
    pub fn class(&self, k: usize) -> &Classification {
        self.c.class(self.c.trace.kernels[k].name)
    }
    pub fn kernel_name(&self, k: usize) -> NameId {
        self.c.trace.kernels[k].name
    }
    pub fn dur(&self, k: usize) -> f64 {
        self.c.trace.kernels[k].dur
    }
    pub fn anchored_share(&self) -> f64 {
        if self.ops.is_empty() {
            return 0.0;
        }
        self.ops.iter().filter(|o| o.is_some()).count() as f64 / self.ops.len() as f64
    }
}

/// `t0 / t1` to three decimals, when both sides have time.
pub(super) fn ratio(t0: f64, t1: f64) -> Option<f64> {
    (t0 > 0.0 && t1 > 0.0).then(|| (t0 / t1 * 1000.0).round() / 1000.0)
}

/// A value for each side, keyed by the sides' keys.
pub(super) fn two<T>(s0: &Side<'_>, v0: T, s1: &Side<'_>, v1: T) -> BTreeMap<String, T> {
    BTreeMap::from([(s0.key.clone(), v0), (s1.key.clone(), v1)])
}

/// Table cells the alignments may use (bytes of traceback): beyond this they are banded.
pub(super) const MAX_ALIGN_CELLS: usize = 16 << 20;

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

pub(super) fn align_kernels(s0: &Side<'_>, s1: &Side<'_>, seqs: &[Vec<usize>; 2]) -> Vec<Step> {
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

/// What a component may look like when run unfused: a norm as reductions and elementwise
/// kernels, a softmax likewise, an activation as an elementwise kernel.
pub(super) fn unfused_forms(c: Category) -> &'static [Category] {
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
pub(super) fn compatible(fused: &Classification, other: &Classification) -> bool {
    if other.is_fused() && other.components.len() >= fused.components.len() {
        return false;
    }
    other.components.iter().all(|c| fused.components.iter().any(|f| unfused_forms(*f).contains(c)))
}
