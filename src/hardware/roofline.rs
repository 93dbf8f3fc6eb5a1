//! The roofline time model: per op and per fusion group, FLOPs, bytes, arithmetic intensity,
//! `time = max(flops / peak, bytes / bandwidth) + launch overhead` and which bound it is.
//!
//! * FLOPs of a matmul are `2 · M · N · K`: `M · N` (times any batch dims) is the number of
//!   elements of its output shape, and `K`, the contracted dimension, is the last dimension
//!   of its first input. The first input's shape is the shape of the op that produces it, or
//!   its declared shape; when neither is known (an assumed tensor) `K` falls back to the first
//!   dimension of the second input (a `[K, N]` weight) and, failing that, to 1 — the op is then
//!   marked `k_known: false`, never silently.
//! * An elementwise op costs 1 FLOP per output element; a reduction (norm, softmax) costs
//!   [`REDUCTION_FLOPS_PER_ELEMENT`] per element of its first input; a reshape costs nothing.
//! * Bytes are the fusion analysis's traffic: an op alone reads each distinct input once and
//!   writes its output (the unfused traffic of `docs/fusion-rules.md`); a fused group costs the
//!   group's fused traffic from [`fusion::Analysis`].
//! * Unfused, every op is a kernel and pays one launch overhead; fused, a group is one kernel.
//!
//! FLOP counts are exact: an op, a group or a repeat-weighted total whose count does not fit in
//! 64 bits is a [`TimeError`] naming it, never a wrapped or capped count shown as if right.
//! Byte counts need no check: they are traffic figures, which the graph bounds when it is built.

use serde::{Deserialize, Serialize};
use thiserror::Error;

use super::chip::Chip;
use fusion::{Analysis, OpGraph, OpId, OpType, TensorId};

/// FLOPs charged per input element of a reduction: e.g. RMSNorm squares, sums, scales and
/// multiplies by the weight (4); softmax takes a max, subtracts, exponentiates, sums and
/// divides (5). The figure only matters for compute-bound reductions, which are rare.
pub const REDUCTION_FLOPS_PER_ELEMENT: u64 = 4;

/// A FLOP count that does not fit in 64 bits, naming where it passes.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum TimeError {
    #[error("op \"{op}\" does more FLOPs ({formula}) than 64 bits can count")]
    OpFlops { op: String, formula: &'static str },
    #[error("fusion group {group} (first op \"{first_op}\") does more FLOPs than 64 bits can count")]
    GroupFlops { group: usize, first_op: String },
    #[error("the total FLOPs pass what 64 bits can count at op \"{op}\" ({repeat} runs)")]
    TotalFlops { op: String, repeat: u64 },
}

/// Which side of the roofline limits a kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Bound {
    Compute,
    Memory,
}

impl Bound {
    pub fn as_str(self) -> &'static str {
        match self {
            Bound::Compute => "compute",
            Bound::Memory => "memory",
        }
    }
}

/// One kernel (or `kernels` kernels) on the roofline.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RooflineTime {
    /// `flops / peak`, µs.
    pub compute_us: f64,
    /// `bytes / bandwidth`, µs.
    pub memory_us: f64,
    /// `max(compute, memory) + kernels × launch overhead`, µs.
    pub time_us: f64,
    pub bound: Bound,
}

/// The roofline time of `kernels` back-to-back launches that together do `flops` and move `bytes`.
pub fn roofline(flops: u64, bytes: u64, chip: &Chip, kernels: u64) -> RooflineTime {
    let compute_us = flops as f64 / chip.peak_flops * 1e6;
    let memory_us = bytes as f64 / chip.hbm_bandwidth * 1e6;
    let bound = if compute_us > memory_us { Bound::Compute } else { Bound::Memory };
    RooflineTime {
        compute_us,
        memory_us,
        time_us: compute_us.max(memory_us) + kernels as f64 * chip.launch_overhead_us,
        bound,
    }
}

/// FLOP per byte, 0 when nothing moves.
pub fn intensity(flops: u64, bytes: u64) -> f64 {
    if bytes == 0 {
        0.0
    } else {
        flops as f64 / bytes as f64
    }
}

/// The shape of a tensor if the graph knows it: its producer's shape or its declared shape.
pub fn tensor_shape(graph: &OpGraph, t: TensorId) -> Option<&[u64]> {
    let tensor = graph.tensor(t);
    match tensor.producer {
        Some(p) => Some(&graph.op(p).shape),
        None => tensor.declared.as_ref().map(|d| d.shape.as_slice()),
    }
}

/// Elements of a shape; `None` if the count does not fit in 64 bits (never for a tensor of a
/// built graph, whose size in bytes fits).
fn elements(shape: &[u64]) -> Option<u64> {
    shape.iter().try_fold(1u64, |a, &d| a.checked_mul(d))
}

/// A matmul's contracted dimension `K` (see the module doc), and whether it came from a shape.
pub fn matmul_k(graph: &OpGraph, id: OpId) -> (u64, bool) {
    let op = graph.op(id);
    let first = op.inputs.first().and_then(|&t| tensor_shape(graph, t)).and_then(|s| s.last().copied());
    let second = op.inputs.get(1).and_then(|&t| tensor_shape(graph, t)).and_then(|s| s.first().copied());
    match (first, second) {
        (Some(k), _) => (k, true),
        (None, Some(k)) => (k, true),
        (None, None) => (1, false),
    }
}

/// FLOPs of one op and whether its `K` was known (always true for non-matmuls); an error
/// naming the op when they do not fit in 64 bits (a matmul's `K` is any dimension of its input,
/// so `2 · M · N · K` can pass 2^64 though every tensor fits).
pub fn op_flops(graph: &OpGraph, id: OpId) -> Result<(u64, bool), TimeError> {
    let op = graph.op(id);
    let too_many = |formula| TimeError::OpFlops { op: op.name.clone(), formula };
    let out = elements(&op.shape).ok_or_else(|| too_many("output elements"))?;
    Ok(match op.op_type {
        OpType::Matmul => {
            let (k, known) = matmul_k(graph, id);
            let flops = out.checked_mul(k).and_then(|f| f.checked_mul(2));
            (flops.ok_or_else(|| too_many("2 · M · N · K"))?, known)
        }
        OpType::Elementwise => (out, true),
        OpType::Reduction => {
            let input = match op.inputs.first().and_then(|&t| tensor_shape(graph, t)) {
                Some(shape) => elements(shape),
                None => Some(out),
            };
            let flops = input.and_then(|n| n.checked_mul(REDUCTION_FLOPS_PER_ELEMENT));
            (flops.ok_or_else(|| too_many("4 per input element"))?, true)
        }
        OpType::Reshape => (0, true),
    })
}

/// An op run alone: each distinct input read once, the output written (the unfused traffic of
/// `docs/fusion-rules.md`). Part of the graph's unfused total, which fits in 64 bits (checked
/// when the graph was built), so the sum cannot wrap.
pub fn op_bytes(graph: &OpGraph, id: OpId) -> u64 {
    let op = graph.op(id);
    let mut seen: Vec<TensorId> = Vec::with_capacity(op.inputs.len());
    let mut bytes = graph.tensor(op.output).size_bytes;
    for &t in &op.inputs {
        if !seen.contains(&t) {
            seen.push(t);
            bytes += graph.tensor(t).size_bytes;
        }
    }
    bytes
}

/// One op as its own kernel.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OpTime {
    pub name: String,
    pub op_type: OpType,
    /// 0-based fusion group.
    pub group: usize,
    pub flops: u64,
    pub bytes: u64,
    /// FLOP/byte.
    pub intensity: f64,
    pub compute_us: f64,
    pub memory_us: f64,
    pub time_us: f64,
    pub bound: Bound,
    /// False when a matmul's `K` could not be read from any shape (FLOPs then use K = 1).
    pub k_known: bool,
    /// How many times the op runs in the workload (layers × steps); 1 for a plain graph.
    pub repeat: u64,
}

/// A group's measured speedup, taken from a calibration profile instead of the roofline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GroupCalibration {
    /// The profile's pattern name, e.g. `Linear_Bias_ReLU`.
    pub pattern: String,
    pub speedup: f64,
    /// The measured speedup is below 1: fusing here is slower on this hardware.
    pub fusion_slower: bool,
}

/// One fusion group, unfused (one kernel per op) and fused (one kernel).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GroupTime {
    /// 0-based group index, as in the analysis.
    pub group: usize,
    pub ops: Vec<String>,
    pub op_types: Vec<OpType>,
    pub flops: u64,
    pub unfused_bytes: u64,
    pub fused_bytes: u64,
    /// FLOP/byte of the fused kernel.
    pub intensity: f64,
    /// Sum of the ops' times.
    pub unfused_us: f64,
    /// The fused kernel's time: the roofline's, or `unfused / measured speedup` when calibrated.
    pub fused_us: f64,
    /// The fused kernel's roofline time, whatever `fused_us` says.
    pub roofline_fused_us: f64,
    /// The fused kernel's bound on the roofline.
    pub bound: Bound,
    /// `unfused_us / fused_us`.
    pub speedup: f64,
    pub repeat: u64,
    /// Set when a calibration profile supplied the speedup.
    pub calibration: Option<GroupCalibration>,
}

/// Times of a whole graph; totals weight each group by its `repeat`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TimeReport {
    pub chip: String,
    pub ops: Vec<OpTime>,
    pub groups: Vec<GroupTime>,
    pub unfused_us: f64,
    pub fused_us: f64,
    /// `unfused_us / fused_us` (1 for an empty graph).
    pub speedup: f64,
    /// FLOPs of every op, weighted by its runs (checked to fit in 64 bits).
    pub total_flops: u64,
}

fn ratio(unfused: f64, fused: f64) -> f64 {
    if fused > 0.0 {
        unfused / fused
    } else {
        1.0
    }
}

/// Times every op and group of an analysed graph, each run once; an error names the op or group
/// whose FLOPs do not fit in 64 bits.
pub fn estimate(graph: &OpGraph, analysis: &Analysis, chip: &Chip) -> Result<TimeReport, TimeError> {
    estimate_repeated(graph, analysis, chip, &[])
}

/// The FLOPs of every op weighted by its runs (`op_repeat[i]`, missing entries 1), or the op at
/// which the total passes 2^64 − 1.
pub fn total_flops(graph: &OpGraph, op_repeat: &[u64]) -> Result<u64, TimeError> {
    let mut total = 0u64;
    for (i, op) in graph.ops().iter().enumerate() {
        let repeat = op_repeat.get(i).copied().unwrap_or(1);
        let (flops, _) = op_flops(graph, OpId(i as u32))?;
        total = flops
            .checked_mul(repeat)
            .and_then(|f| total.checked_add(f))
            .ok_or_else(|| TimeError::TotalFlops { op: op.name.clone(), repeat })?;
    }
    Ok(total)
}

/// As [`estimate`], with `op_repeat[i]` runs of op `i` (missing entries count 1). A group's
/// repeat is that of its first op; workload generators give every op of a layer the same one.
pub fn estimate_repeated(
    graph: &OpGraph,
    analysis: &Analysis,
    chip: &Chip,
    op_repeat: &[u64],
) -> Result<TimeReport, TimeError> {
    let repeat_of = |i: usize| op_repeat.get(i).copied().unwrap_or(1);
    let total_flops = total_flops(graph, op_repeat)?;
    let ops: Vec<OpTime> = graph
        .ops()
        .iter()
        .enumerate()
        .map(|(i, op)| {
            let id = OpId(i as u32);
            let (flops, k_known) = op_flops(graph, id)?;
            let bytes = op_bytes(graph, id);
            let r = roofline(flops, bytes, chip, 1);
            Ok(OpTime {
                name: op.name.clone(),
                op_type: op.op_type,
                group: analysis.grouping.op_group[i].index(),
                flops,
                bytes,
                intensity: intensity(flops, bytes),
                compute_us: r.compute_us,
                memory_us: r.memory_us,
                time_us: r.time_us,
                bound: r.bound,
                k_known,
                repeat: repeat_of(i),
            })
        })
        .collect::<Result<_, TimeError>>()?;
    let groups: Vec<GroupTime> = analysis
        .grouping
        .groups
        .iter()
        .zip(&analysis.traffic.per_group)
        .enumerate()
        .map(|(gi, (g, t))| {
            let members: Vec<&OpTime> = g.ops.iter().map(|o| &ops[o.index()]).collect();
            let flops =
                members.iter().try_fold(0u64, |a, o| a.checked_add(o.flops)).ok_or_else(|| TimeError::GroupFlops {
                    group: gi + 1,
                    first_op: members.first().map_or(String::new(), |o| o.name.clone()),
                })?;
            let unfused_us: f64 = members.iter().map(|o| o.time_us).sum();
            let fused = roofline(flops, t.fused.total(), chip, 1);
            Ok(GroupTime {
                group: gi,
                ops: members.iter().map(|o| o.name.clone()).collect(),
                op_types: members.iter().map(|o| o.op_type).collect(),
                flops,
                unfused_bytes: t.unfused.total(),
                fused_bytes: t.fused.total(),
                intensity: intensity(flops, t.fused.total()),
                unfused_us,
                fused_us: fused.time_us,
                roofline_fused_us: fused.time_us,
                bound: fused.bound,
                speedup: ratio(unfused_us, fused.time_us),
                repeat: g.ops.first().map(|o| repeat_of(o.index())).unwrap_or(1),
                calibration: None,
            })
        })
        .collect::<Result<_, TimeError>>()?;
    let mut report =
        TimeReport { chip: chip.name.clone(), ops, groups, unfused_us: 0.0, fused_us: 0.0, speedup: 1.0, total_flops };
    report.recompute_totals();
    Ok(report)
}

impl TimeReport {
    /// Sums the groups (weighted by repeat) into the totals; call after changing a group.
    pub fn recompute_totals(&mut self) {
        self.unfused_us = self.groups.iter().map(|g| g.unfused_us * g.repeat as f64).sum();
        self.fused_us = self.groups.iter().map(|g| g.fused_us * g.repeat as f64).sum();
        self.speedup = ratio(self.unfused_us, self.fused_us);
    }
}

/// One group as a point of the roofline chart.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RooflinePoint {
    /// 0-based group index.
    pub group: usize,
    /// The group's ops, joined, for a tooltip.
    pub label: String,
    /// FLOP/byte of the fused kernel.
    pub intensity: f64,
    /// FLOP/s the fused kernel achieves in the model: `flops / fused time` (launch included).
    pub achieved_flops: f64,
    pub bound: Bound,
}

/// What a roofline chart draws: the two roofs, the ridge and the groups.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RooflineChart {
    pub peak_flops: f64,
    /// Bytes/s.
    pub hbm_bandwidth: f64,
    /// FLOP/byte where the roofs meet.
    pub ridge_intensity: f64,
    /// Groups that do FLOPs and move bytes (the others have no place on log axes).
    pub points: Vec<RooflinePoint>,
}

/// The chart geometry of a time report on its chip.
pub fn roofline_chart(report: &TimeReport, chip: &Chip) -> RooflineChart {
    let points = report
        .groups
        .iter()
        .filter(|g| g.flops > 0 && g.fused_bytes > 0 && g.fused_us > 0.0)
        .map(|g| RooflinePoint {
            group: g.group,
            label: g.ops.join(", "),
            intensity: g.intensity,
            achieved_flops: g.flops as f64 / (g.fused_us * 1e-6),
            bound: g.bound,
        })
        .collect();
    RooflineChart {
        peak_flops: chip.peak_flops,
        hbm_bandwidth: chip.hbm_bandwidth,
        ridge_intensity: chip.ridge_intensity(),
        points,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fusion::{analyse, parse_graph};

    fn chip() -> Chip {
        // 1 TFLOP/s, 1 GB/s: a µs is a MFLOP or a KB.
        Chip {
            name: "toy".into(),
            peak_flops: 1e12,
            hbm_bandwidth: 1e9,
            launch_overhead_us: 1.0,
            source: "test".into(),
            peaks: Default::default(),
        }
    }

    /// The worked example of `docs/fusion-rules.md`: matmul1 (x [1024,512] declared) · w1 → [1024,4096].
    const EXAMPLE: &str = r#"{"ops": [
      {"name": "matmul1", "op_type": "matmul", "inputs": ["x", "w1"], "output": "y1", "shape": [1024, 4096], "bytes_per_element": 2},
      {"name": "bias1", "op_type": "elementwise", "inputs": ["y1", "b1"], "output": "y2", "shape": [1024, 4096], "bytes_per_element": 2},
      {"name": "relu", "op_type": "elementwise", "inputs": ["y2"], "output": "y3", "shape": [1024, 4096], "bytes_per_element": 2}],
      "tensors": {"x": {"shape": [1024, 512]}, "w1": {"shape": [512, 4096]}, "b1": {"shape": [4096]}}}"#;

    #[test]
    fn matmul_flops_use_k_of_the_first_input() {
        let g = parse_graph(EXAMPLE).unwrap();
        assert_eq!(matmul_k(&g, OpId(0)), (512, true));
        assert_eq!(op_flops(&g, OpId(0)), Ok((2 * 1024 * 4096 * 512, true)));
        assert_eq!(op_flops(&g, OpId(1)), Ok((1024 * 4096, true)));
    }

    #[test]
    fn unknown_k_is_flagged() {
        let g = parse_graph(
            r#"[{"name": "mm", "op_type": "matmul", "inputs": ["a", "b"], "output": "c", "shape": [4, 4], "bytes_per_element": 2}]"#,
        )
        .unwrap();
        assert_eq!(op_flops(&g, OpId(0)), Ok((32, false)));
    }

    #[test]
    fn group_times_follow_the_roofline() {
        let g = parse_graph(EXAMPLE).unwrap();
        let a = analyse(&g);
        let r = estimate(&g, &a, &chip()).unwrap();
        assert_eq!(r.groups.len(), 1);
        let grp = &r.groups[0];
        // Memory-bound on this chip: fused bytes = x + w1 + b1 + y3.
        let fused_bytes = (1024 * 512 + 512 * 4096 + 4096 + 1024 * 4096) * 2;
        assert_eq!(grp.fused_bytes, fused_bytes);
        assert_eq!(grp.bound, Bound::Memory);
        assert!((grp.fused_us - (fused_bytes as f64 / 1e3 + 1.0)).abs() < 1e-6);
        let sum: f64 = r.ops.iter().map(|o| o.time_us).sum();
        assert!((grp.unfused_us - sum).abs() < 1e-9);
        assert!(grp.speedup > 1.0);
        assert!((r.speedup - grp.unfused_us / grp.fused_us).abs() < 1e-12);
        let chart = roofline_chart(&r, &chip());
        assert_eq!(chart.points.len(), 1);
        assert_eq!(chart.ridge_intensity, 1000.0);
    }

    /// A matmul contracting over a dimension of 2^60 whose input is empty (a 0 in its shape):
    /// every tensor is small, but `2 · M · N · K` is 2^83. Before, it was capped at 2^64 − 1 and
    /// shown as a count.
    #[test]
    fn flops_that_do_not_fit_name_the_op() {
        let g = parse_graph(
            r#"{"ops": [{"name": "mm", "op_type": "matmul", "inputs": ["a", "b"], "output": "c", "shape": [4096, 1024], "bytes_per_element": 2}],
                "tensors": {"a": {"shape": [0, 1152921504606846976]}}}"#,
        )
        .unwrap();
        let e = op_flops(&g, OpId(0)).unwrap_err();
        assert_eq!(e.to_string(), "op \"mm\" does more FLOPs (2 · M · N · K) than 64 bits can count");
        assert_eq!(estimate(&g, &analyse(&g), &chip()), Err(e));
    }

    #[test]
    fn a_total_over_runs_that_does_not_fit_names_the_op() {
        let g = parse_graph(EXAMPLE).unwrap();
        let e = total_flops(&g, &[u64::MAX, 1, 1]).unwrap_err();
        assert_eq!(e, TimeError::TotalFlops { op: "matmul1".into(), repeat: u64::MAX });
        assert_eq!(total_flops(&g, &[2, 1, 1]), Ok(2 * 2 * 1024 * 4096 * 512 + 2 * 1024 * 4096));
    }

    #[test]
    fn compute_bound_when_intensity_is_past_the_ridge() {
        let t = roofline(2_000_000_000, 1000, &chip(), 1);
        assert_eq!(t.bound, Bound::Compute);
        assert!((t.time_us - 2001.0).abs() < 1e-9);
    }
}
