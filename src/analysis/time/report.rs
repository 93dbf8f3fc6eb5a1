//! Where one trace's time goes: the chip it ran on, its GPU timeline (whole trace and per
//! step) and its per-op table, as `fusionscope trace --json` and the page show them; on the
//! page also its kernels as fusion groups ([`add_fusion`]), which travel with the report.

use serde::{Deserialize, Serialize};

use super::critical_path::{critical_paths, CriticalPath};
use super::launch_cost::{launch_cost, LaunchReport};
use super::op_table::{op_table_linked, set_roofline, Cost, CostModel, Coverage, OpRow, ShapeText, Unattributed};
use super::timeline::{step_windows, timelines, Timeline};
use super::waits::{waits, Waits};
use crate::capture::CaptureReport;
use crate::exec_trace::{link, ExecTrace};
use crate::fusion::dag::{fusion_with_dag, FusionDag};
use crate::fusion::{BuiltIn, FusionOptions, TraceFusion};
use crate::ranks::streams::{device_streams, DeviceStreams};
use crate::structure::Structure;
use crate::summary::ClassifiedTrace;
use hardware::{detect_chip, DetectedChip, PeakKey, Precision};
use perf::{cost_from_trace, has_model, DType, Family, RawArgs};
use trace::model::TraceFormat;

/// One trace's report. The keys are those of `docs/trace-analysis.md`, "Where the time goes".
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TraceTime {
    /// The chip the roofline figures use, and where it came from; `null` when the trace's
    /// devices are not a known chip and none was given.
    pub chip: Option<ChipUsed>,
    /// Why there is no chip (the device names seen), or other remarks on the choice.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chip_note: Option<String>,
    /// The whole trace, on the busiest device; `null` when no GPU event ran.
    pub timeline: Option<Timeline>,
    /// One per `ProfilerStep` window on that device (`[]` when none).
    pub steps: Vec<Timeline>,
    /// The other devices' whole-trace timelines, when the trace has several.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub other_devices: Vec<Timeline>,
    /// Every stream of every device that ran kernels: kernels, busy, computation and
    /// communication ([`crate::ranks::streams`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub streams: Vec<DeviceStreams>,
    /// The idle time between kernels on every stream, by cause ([`super::waits`]); `null`
    /// when no kernel ran.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "super::waits::as_value")]
    pub waits: Option<Waits>,
    /// What launching kernels costs the host, whole trace and per step ([`super::launch_cost`]);
    /// `null` when the trace records no kernel's launch call.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "super::launch_cost::as_value")]
    pub launch_cost: Option<LaunchReport>,
    /// The critical path of each step (of the whole trace without steps): the chain of calls and
    /// kernels that decided when its last work ended ([`super::critical_path`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty", with = "super::critical_path::as_value")]
    pub critical_path: Vec<CriticalPath>,
    pub ops: Vec<OpRow>,
    pub unattributed: Unattributed,
    pub op_coverage: Coverage,
    /// Whether the trace was recorded with `record_shapes=True`.
    pub shapes_recorded: bool,
    /// The profiler format the trace was read from (absent for Kineto): what it lacks is said
    /// once, by [`TraceFormat::lacks`], where the views that need it are empty.
    #[serde(default, skip_serializing_if = "TraceFormat::is_kineto")]
    pub format: TraceFormat,
    /// How a graph-capture trace's ops were joined to this trace's graph replays, when one was
    /// given ([`crate::capture`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capture: Option<CaptureReport>,
    /// Every kernel as a fusion group and the fusion left on the table
    /// ([`fusion`]), where it was computed with the report ([`add_fusion`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fusion: Option<TraceFusion>,
    /// The kernel groups of each layer (or step) as boxes and data edges, for the group
    /// drawing ([`crate::view::fusion_dag`]); indices into `fusion.groups`.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "crate::fusion::dag::as_value")]
    pub fusion_dag: Option<FusionDag>,
    /// The torch.compile log of the run, joined to the trace (`crate::provenance`): each of
    /// Inductor's kernels with its exact nodes, bytes, calls and time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compiled_kernels: Option<crate::provenance::CompiledKernels>,
}

/// The chip's figures as the report states them (TFLOP/s and TB/s, as datasheets do).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChipUsed {
    pub name: String,
    pub detected_from: String,
    pub peak_tflops: f64,
    pub hbm_tb_per_s: f64,
    /// Per unit and type, TFLOP/s (`matrix_bf16`, `vector_fp32`, …).
    pub peaks_tflops: std::collections::BTreeMap<String, f64>,
    pub source: String,
}

impl ChipUsed {
    fn of(d: &DetectedChip) -> Self {
        ChipUsed {
            name: d.chip.name.clone(),
            detected_from: d.detected_from.clone(),
            peak_tflops: d.chip.peak_flops / 1e12,
            hbm_tb_per_s: d.chip.hbm_bandwidth / 1e12,
            peaks_tflops: d.chip.peaks.iter().map(|(k, v)| (k.name(), v / 1e12)).collect(),
            source: d.chip.source.clone(),
        }
    }
}

/// The report of one classified trace. `chip` is the user's choice; without one the chip is
/// detected from the device names ([`detect_chip`]).
pub fn time_report(side: &ClassifiedTrace<'_>, chip: Option<DetectedChip>, model: CostModel<'_>) -> TraceTime {
    time_report_with(side, chip, model, None)
}

/// [`time_report`] with an execution trace of the run: ops that recorded no shapes take those
/// of the node linked to them (`fusionscope trace K --exec-trace ET`).
pub fn time_report_with(
    side: &ClassifiedTrace<'_>,
    chip: Option<DetectedChip>,
    model: CostModel<'_>,
    exec_trace: Option<&ExecTrace>,
) -> TraceTime {
    let (chip, chip_note) = match chip {
        Some(c) => (Some(c), None),
        None => match detect_chip(&side.platform.devices) {
            Ok(c) => (Some(c), None),
            Err(seen) => (None, Some(unknown_chip_note(&seen))),
        },
    };
    let mut devices = timelines(side);
    let (timeline, steps) = if devices.is_empty() {
        (None, Vec::new())
    } else {
        let first = devices.remove(0);
        (Some(first.whole), first.steps)
    };
    let windows = step_windows(side);
    let linked = exec_trace.map(|et| (et, link(side.trace, et)));
    let links = (&side.links(), side.event_ops());
    let table = op_table_linked(
        side.trace,
        links,
        chip.as_ref().map(|c| &c.chip),
        model,
        linked.as_ref().map(|(et, l)| (*et, l)),
    );
    TraceTime {
        chip: chip.as_ref().map(ChipUsed::of),
        chip_note,
        timeline,
        steps,
        other_devices: devices.into_iter().map(|d| d.whole).collect(),
        streams: device_streams(side),
        waits: waits(side.trace, &windows),
        launch_cost: launch_cost(side.trace, &windows),
        critical_path: critical_paths(side.trace, &windows),
        ops: table.rows,
        unattributed: table.unattributed,
        op_coverage: table.coverage,
        shapes_recorded: table.shapes_recorded,
        format: side.trace.format,
        capture: None,
        fusion: None,
        fusion_dag: None,
        compiled_kernels: None,
    }
}

/// The report as opening a trace gives it (the page's worker, and the `import` crate): the
/// chip detected, the op table and, by [`add_fusion_with`], the fusion, both with the
/// execution trace of the run if one is given, so that each is made once.
pub fn opened_report(
    side: &ClassifiedTrace<'_>,
    structure: Option<&Structure>,
    exec_trace: Option<(&ExecTrace, &str)>,
) -> TraceTime {
    let mut time = time_report_with(side, None, &recorded_cost, exec_trace.map(|(et, _)| et));
    add_fusion_with(&mut time, side, structure, exec_trace);
    time
}

/// `time`'s op table and fusion made again with an execution trace of the run that came after
/// the report (the page's worker: an execution trace dropped onto an opened trace); the chip
/// detected as [`opened_report`] detects it, the rest of the report (timeline, streams,
/// capture join) kept, since the execution trace does not change it.
pub fn add_exec_trace(
    time: &mut TraceTime,
    side: &ClassifiedTrace<'_>,
    structure: Option<&Structure>,
    exec_trace: (&ExecTrace, &str),
) {
    let chip = detect_chip(&side.platform.devices).ok();
    let linked = link(side.trace, exec_trace.0);
    let links = (&side.links(), side.event_ops());
    let table = op_table_linked(
        side.trace,
        links,
        chip.as_ref().map(|c| &c.chip),
        &recorded_cost,
        Some((exec_trace.0, &linked)),
    );
    (time.ops, time.unattributed, time.op_coverage) = (table.rows, table.unattributed, table.coverage);
    add_fusion_with(time, side, structure, Some(exec_trace));
}

/// Adds the fusion analysis to `time` as opening a file gives it: the rule set the command
/// line uses by default (Inductor-like), the chip detected from the trace's devices, no
/// calibration profile; per step and layer where `structure` is known.
pub fn add_fusion(time: &mut TraceTime, side: &ClassifiedTrace<'_>, structure: Option<&Structure>) {
    add_fusion_with(time, side, structure, None)
}

/// [`add_fusion`] with an execution trace of the run and its file name (the page's worker,
/// when one is dropped with or onto its Kineto trace): as `trace --exec-trace ET` gives it. The
/// group drawing's windows come from the side's structure search.
pub fn add_fusion_with(
    time: &mut TraceTime,
    side: &ClassifiedTrace<'_>,
    structure: Option<&Structure>,
    exec_trace: Option<(&ExecTrace, &str)>,
) {
    let chip = detect_chip(&side.platform.devices).ok();
    let options = FusionOptions {
        rules: BuiltIn::Inductor.rules(),
        chip: chip.as_ref().map(|c| &c.chip),
        calibration: None,
        exec_trace,
        structure,
    };
    #[cfg(any(test, feature = "test-counters"))]
    FUSIONS_MADE.with(|n| n.set(n.get() + 1));
    let (fusion, dag) = fusion_with_dag(side, &options);
    time.fusion = Some(fusion);
    time.fusion_dag = dag;
}

// Counted in this crate's tests and where a dependent's tests ask (feature `test-counters`).
#[cfg(any(test, feature = "test-counters"))]
thread_local! {
    /// Fusion analyses [`add_fusion_with`] made on this thread: tests check that opening a trace
    /// with its execution trace analyses it once.
    pub static FUSIONS_MADE: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

impl TraceTime {
    /// Measures the rows against another chip (the user's pick): only the roofline figures and
    /// the chip change, so nothing is read again.
    pub fn with_chip(&mut self, chip: DetectedChip) {
        for r in &mut self.ops {
            set_roofline(r, Some(&chip.chip));
        }
        if let Some(f) = &mut self.fusion {
            f.with_chip(&chip.chip);
        }
        self.chip = Some(ChipUsed::of(&chip));
        self.chip_note = None;
    }

    /// The op table part, for the gap.
    pub fn op_table(&self) -> super::op_table::OpTable {
        super::op_table::OpTable {
            rows: self.ops.clone(),
            unattributed: self.unattributed.clone(),
            coverage: self.op_coverage.clone(),
            shapes_recorded: self.shapes_recorded,
        }
    }
}

/// The production cost model: the performance models of [`perf`] over the recorded
/// shapes (`docs/perf-models.md`).
pub fn recorded_cost(op: &str, shapes: ShapeText<'_>) -> Result<Cost, String> {
    let raw = RawArgs { input_dims: shapes.dims, input_type: shapes.types, concrete_inputs: shapes.concrete };
    if shapes.dims.is_none() && has_model(op) {
        return Err("Input Dims not recorded".into());
    }
    let c = cost_from_trace(op, raw).map_err(|e| e.to_string())?;
    Ok(Cost {
        model: family_name(c.family),
        flops: c.flops,
        bytes: c.bytes,
        peak: PeakKey::new(c.unit, precision(c.dtype)),
        estimate: c.estimate,
    })
}

/// The model family as the op table names it.
fn family_name(f: Family) -> &'static str {
    match f {
        Family::Gemm => "GEMM",
        Family::Attention => "attention",
        Family::Conv => "convolution",
        Family::Elementwise => "elementwise",
        Family::Norm => "norm",
        Family::Softmax => "softmax",
        Family::Reduce => "reduction",
        Family::Embedding => "embedding",
        Family::Copy => "copy",
        Family::Triton => "Triton",
    }
}

/// The peak precision of an element type. fp32 matrix work is counted against the fp32 matrix
/// peak (PyTorch leaves TF32 off for matmuls by default); integer and bool ops run on the
/// vector units and have no datasheet peak of their own, so they use the fp32 one.
fn precision(d: DType) -> Precision {
    match d {
        DType::BF16 => Precision::Bf16,
        DType::F16 => Precision::Fp16,
        DType::F32 => Precision::Fp32,
        DType::F64 => Precision::Fp64,
        DType::F8E4M3FN | DType::F8E4M3FNUZ | DType::F8E5M2 | DType::F8E5M2FNUZ => Precision::Fp8,
        _ => Precision::Fp32,
    }
}

fn unknown_chip_note(seen: &[String]) -> String {
    let names = if seen.is_empty() {
        "no device name".to_string()
    } else {
        seen.iter().map(|s| format!("\"{}\"", units::ellipsize(s, 60))).collect::<Vec<_>>().join(", ")
    };
    format!("the trace's devices ({names}) are not a known chip: pick one for the roofline figures")
}
