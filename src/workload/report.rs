//! A workload on a chip: the machine-readable result of `fusionscope model --json` (and the
//! page's "Model × chip" view): op table, fusion analysis, group times, totals.

use serde::{Deserialize, Serialize};

use super::{ResolvedParams, Workload};
use fusion::{analyse, Analysis, AnalysisReport, OpType};
use hardware::roofline::{estimate_repeated, roofline_chart, Bound, GroupTime, RooflineChart, TimeError, TimeReport};
use hardware::Chip;
use table::Table;

/// One op of the representative graph; `time_us` is one execution as its own kernel.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OpRow {
    pub name: String,
    pub op_type: OpType,
    pub flops: u64,
    pub bytes: u64,
    pub time_us: f64,
    pub bound: Bound,
    /// 0-based fusion group.
    pub group: usize,
    /// Executions in the whole phase (layers of its kind × steps).
    pub repeat: u64,
    /// FLOP/byte.
    pub intensity: f64,
}

/// Unfused and fused time of the whole phase (every layer, every step), µs.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PhaseTime {
    pub unfused: f64,
    pub fused: f64,
    pub speedup: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelReport {
    pub model: String,
    pub chip: String,
    pub phase: String,
    pub layers: u64,
    pub per_layer_flops: u64,
    pub total_flops: u64,
    pub ops: Vec<OpRow>,
    /// The fusion analysis object (`docs/fusion-rules.md`) for the representative graph (one
    /// layer of each kind).
    pub analysis: AnalysisReport,
    pub time_us: PhaseTime,
    pub params: ResolvedParams,
    /// Decode steps (output tokens), diffusion steps, or 1.
    pub steps: u64,
    pub groups: Vec<GroupTime>,
    pub roofline: RooflineChart,
    pub chip_details: Chip,
    pub not_modelled: Vec<String>,
}

/// The fusion analysis of a workload's graph and its times on a chip (roofline). A caller that
/// calibrates the times does so between this and [`model_report_from`]. (A built workload's
/// FLOPs fit in 64 bits, so the error is only the time model's guarantee made visible.)
pub fn model_time(w: &Workload, chip: &Chip) -> Result<(Analysis, TimeReport), TimeError> {
    let analysis = analyse(&w.graph);
    let time = estimate_repeated(&w.graph, &analysis, chip, &w.op_repeat)?;
    Ok((analysis, time))
}

/// The report of a workload from its analysis and (possibly calibrated) times.
pub fn model_report_from(w: &Workload, chip: &Chip, analysis: &Analysis, time: TimeReport) -> ModelReport {
    let ops = time
        .ops
        .iter()
        .map(|o| OpRow {
            name: o.name.clone(),
            op_type: o.op_type,
            flops: o.flops,
            bytes: o.bytes,
            time_us: o.time_us,
            bound: o.bound,
            group: o.group,
            repeat: o.repeat,
            intensity: o.intensity,
        })
        .collect();
    ModelReport {
        model: w.model.clone(),
        chip: chip.name.clone(),
        phase: w.phase.to_string(),
        layers: w.layers,
        per_layer_flops: w.per_layer_flops(),
        total_flops: w.total_flops(),
        ops,
        analysis: analysis.report(&w.graph),
        time_us: PhaseTime { unfused: time.unfused_us, fused: time.fused_us, speedup: time.speedup },
        params: w.params,
        steps: w.steps,
        roofline: roofline_chart(&time, chip),
        groups: time.groups,
        chip_details: chip.clone(),
        not_modelled: w.not_modelled.clone(),
    }
}

/// The op table: one row per op of the representative graph (`fusionscope model --csv`
/// and the page's CSV export), group 1-based, times of one run as its own kernel.
pub fn op_table(r: &ModelReport) -> Table {
    let mut t =
        Table::new(&["name", "op_type", ">group", ">runs", ">flops", ">bytes", ">flop_per_byte", ">time_us", "bound"]);
    for o in &r.ops {
        t.row([
            o.name.clone(),
            o.op_type.to_string(),
            (o.group + 1).to_string(),
            o.repeat.to_string(),
            o.flops.to_string(),
            o.bytes.to_string(),
            format!("{:.3}", o.intensity),
            format!("{:.3}", o.time_us),
            o.bound.as_str().to_string(),
        ]);
    }
    t
}

/// Analyses and times a workload on a chip with the roofline model.
pub fn model_report(w: &Workload, chip: &Chip) -> Result<ModelReport, TimeError> {
    let (analysis, time) = model_time(w, chip)?;
    Ok(model_report_from(w, chip, &analysis, time))
}
