//! The gap between two traces, op by op: "where the time goes" (`docs/trace-analysis.md`,
//! "The gap between two traces").
//!
//! Each side's [`OpTable`] rows are joined by op name and input dims (the same call on both
//! platforms records the same shapes; the types may differ when one side ran in another
//! precision, so rows of one (op, dims) are merged). Rows are ranked by the absolute time
//! difference; with each side's unattributed time and the overlap within its op calls they add
//! up to that side's GPU time (the one definition, [`GPU_TIME_DEFINITION`]), the headline's
//! figure and the platform line's, so the table explains the whole difference.

use std::collections::BTreeMap;

use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::op_table::OpTable;
use crate::summary::{round3, GPU_TIME_DEFINITION};

/// One side of a gap row.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GapSide {
    pub calls: u64,
    pub kernel_time_us: f64,
    pub tflops_per_s: Option<f64>,
    pub roofline_pct: Option<f64>,
}

/// One (op, input dims) with both sides' figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GapRow {
    pub op: String,
    pub input_dims: Value,
    /// Keyed by side (`amd`, `nvidia` or `a`, `b`); `null` when the op did not run there.
    #[serde(flatten)]
    pub sides: BTreeMap<String, Option<GapSide>>,
    /// First side's time minus the second's, µs (positive: the first side is slower here).
    pub difference_us: f64,
}

/// Which side is faster overall, by how much.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Headline {
    /// Each side's GPU time (rows plus unattributed plus overlap), µs.
    pub gpu_time_us: BTreeMap<String, f64>,
    /// What the GPU time is, as the platform line and the fusion totals count it too.
    #[serde(default)]
    pub gpu_time_definition: String,
    /// The side with less GPU time (`null` on a tie).
    pub faster: Option<String>,
    /// Slower minus faster, µs.
    pub difference_us: f64,
    /// Slower over faster (`null` when the faster side has no time).
    pub ratio: Option<f64>,
}

/// The gap table (`"gap"` in `fusionscope compare --json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Gap {
    /// Largest absolute difference first.
    pub rows: Vec<GapRow>,
    pub unattributed_us: BTreeMap<String, f64>,
    /// Per side, the time by which an op call's own events overlap each other (a row counts
    /// each call's events once, as their union): rows + unattributed + this = the headline.
    #[serde(default)]
    pub overlap_us: BTreeMap<String, f64>,
    pub headline: Headline,
}

/// Figures of one side summed over the rows merged into one (op, dims).
#[derive(Default, Clone, Copy)]
struct Acc {
    calls: u64,
    time: f64,
    /// FLOPs over modelled rows, and the time of those rows (for TFLOP/s).
    flops: f64,
    flops_time: f64,
    /// Roofline µs over rows that have one, and their time.
    roof: f64,
    roof_time: f64,
}

impl Acc {
    fn side(self) -> GapSide {
        GapSide {
            calls: self.calls,
            kernel_time_us: round3(self.time),
            tflops_per_s: (self.flops_time > 0.0).then(|| round3(self.flops / self.flops_time / 1e6)),
            roofline_pct: (self.roof_time > 0.0).then(|| round3(100.0 * self.roof / self.roof_time)),
        }
    }
}

/// The gap between two sides, given as `(key, table)` in the comparison's order.
pub fn gap(first: (&str, &OpTable), second: (&str, &OpTable)) -> Gap {
    let tables = [first, second];
    // Join key: op and the dims' JSON text in one normal form (whitespace differs by writer).
    let mut index: FxHashMap<(String, String), usize> = FxHashMap::default();
    let mut joined: Vec<(String, Value, [Option<Acc>; 2])> = Vec::new();
    for (side, (_, table)) in tables.iter().enumerate() {
        for r in &table.rows {
            let key = (r.op.clone(), r.input_dims.to_string());
            let at = *index.entry(key).or_insert_with(|| {
                joined.push((r.op.clone(), r.input_dims.clone(), [None, None]));
                joined.len() - 1
            });
            let acc = joined[at].2[side].get_or_insert_with(Acc::default);
            acc.calls += r.calls;
            acc.time += r.kernel_time_us;
            if let Some(f) = r.flops_per_call {
                acc.flops += f as f64 * r.calls as f64;
                acc.flops_time += r.kernel_time_us;
            }
            if let Some(roof) = r.roofline_time_us {
                acc.roof += roof;
                acc.roof_time += r.kernel_time_us;
            }
        }
    }
    let mut rows: Vec<GapRow> = joined
        .into_iter()
        .map(|(op, input_dims, accs)| {
            let t = |a: Option<Acc>| a.map_or(0.0, |a| a.time);
            GapRow {
                op,
                input_dims,
                difference_us: round3(t(accs[0]) - t(accs[1])),
                sides: tables.iter().zip(accs).map(|((k, _), a)| (k.to_string(), a.map(Acc::side))).collect(),
            }
        })
        .collect();
    rows.sort_by(|a, b| b.difference_us.abs().total_cmp(&a.difference_us.abs()).then_with(|| a.op.cmp(&b.op)));
    let gpu: Vec<f64> = tables.iter().map(|(_, t)| t.coverage.gpu_time_us).collect();
    let (slow, fast) = if gpu[0] >= gpu[1] { (0, 1) } else { (1, 0) };
    Gap {
        rows,
        unattributed_us: tables.iter().map(|(k, t)| (k.to_string(), t.unattributed.time_us)).collect(),
        overlap_us: tables.iter().map(|(k, t)| (k.to_string(), t.coverage.overlap_us)).collect(),
        headline: Headline {
            gpu_time_us: tables.iter().zip(&gpu).map(|((k, _), g)| (k.to_string(), *g)).collect(),
            gpu_time_definition: GPU_TIME_DEFINITION.to_string(),
            faster: (gpu[0] != gpu[1]).then(|| tables[fast].0.to_string()),
            difference_us: round3(gpu[slow] - gpu[fast]),
            ratio: (gpu[fast] > 0.0).then(|| round3(gpu[slow] / gpu[fast])),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::op_table::{Coverage, OpRow, Unattributed};

    fn row(op: &str, dims: Value, calls: u64, time: f64, flops: Option<u64>) -> OpRow {
        OpRow {
            op: op.into(),
            input_dims: dims,
            input_types: Value::Null,
            shapes_from: Default::default(),
            model: flops.map(|_| "GEMM".to_string()),
            no_model: None,
            estimate: false,
            calls,
            kernel_time_us: time,
            flops_per_call: flops,
            bytes_per_call: None,
            tflops_per_s: None,
            tb_per_s: None,
            flop_per_byte: None,
            roofline_time_us: flops.map(|_| time / 2.0),
            roofline_pct: None,
            bound: None,
            compute: None,
            peak: None,
        }
    }

    fn table(rows: Vec<OpRow>, unattributed: f64) -> OpTable {
        let sum: f64 = rows.iter().map(|r| r.kernel_time_us).sum();
        OpTable {
            rows,
            unattributed: Unattributed { events: 1, time_us: unattributed, kernels: vec![] },
            coverage: Coverage { gpu_time_us: sum + unattributed, ..Default::default() },
            shapes_recorded: true,
        }
    }

    #[test]
    fn rows_join_by_op_and_dims_rank_by_difference_and_explain_the_total() {
        let d = serde_json::json!([[8, 8], [8, 8]]);
        let a = table(
            vec![row("aten::mm", d.clone(), 2, 100.0, Some(1_000_000)), row("aten::add", d.clone(), 1, 5.0, None)],
            10.0,
        );
        let b = table(
            vec![row("aten::mm", d.clone(), 2, 60.0, Some(1_000_000)), row("aten::mul", d.clone(), 1, 20.0, None)],
            0.0,
        );
        let g = gap(("amd", &a), ("nvidia", &b));
        let ops: Vec<(&str, f64)> = g.rows.iter().map(|r| (r.op.as_str(), r.difference_us)).collect();
        assert_eq!(ops, vec![("aten::mm", 40.0), ("aten::mul", -20.0), ("aten::add", 5.0)]);
        let mm = &g.rows[0];
        assert_eq!(mm.sides["amd"].as_ref().unwrap().tflops_per_s, Some(round3(2e6 / 100.0 / 1e6)));
        assert_eq!(mm.sides["amd"].as_ref().unwrap().roofline_pct, Some(50.0));
        assert_eq!(g.rows[1].sides["amd"], None);
        // Rows plus unattributed add up to each side's GPU time, and the headline says so.
        for (k, t) in [("amd", &a), ("nvidia", &b)] {
            let rows: f64 = g.rows.iter().filter_map(|r| r.sides[k].as_ref()).map(|s| s.kernel_time_us).sum();
            assert_eq!(rows + g.unattributed_us[k], t.coverage.gpu_time_us);
        }
        assert_eq!(g.headline.faster.as_deref(), Some("nvidia"));
        assert_eq!(g.headline.difference_us, 35.0);
        assert_eq!(g.headline.ratio, Some(round3(115.0 / 80.0)));
    }
}
