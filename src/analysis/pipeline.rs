//! One trace through every analysis, the same for the command line and the page: [`analyse`]
//! makes its summary and its report ([`TraceTime`], what `fusionscope trace --json` prints and
//! the page shows): the chip it ran on, its GPU timelines (whole trace and per step), streams,
//! waits, launch cost, critical paths, per-op table, and every kernel as a fusion group. The
//! [`Choices`] are the user's flags, or the defaults when the page opens a file.
//!
//! It sits above the `time` and `fusion` folders, which do not import each other back.

use serde::{Deserialize, Serialize};

use crate::capture::CaptureReport;
use crate::exec_trace::{link, ExecTrace};
use crate::structure::Structure;
use crate::summary::{summarize, ClassifiedTrace, TraceSummary};
use crate::time::critical_path::{critical_paths, CriticalPath};
use crate::time::launch_cost::{launch_cost, LaunchReport};
use crate::time::op_table::{op_table, set_roofline, Coverage, OpRow, OpTable, Unattributed};
use crate::time::recorded_cost::{recorded_cost, CallCosts, NoCallCosts};
use crate::time::streams::{device_streams, DeviceStreams};
use crate::time::timeline::{step_windows, timelines_and_busy, Timeline};
use crate::time::waits::{waits, Waits};
use crate::trace_fusion::dag::{fusion_with_dag, FusionDag};
use crate::trace_fusion::vllm_calls::VllmCalls;
use crate::trace_fusion::{BuiltIn, FusionOptions, RuleSet, TraceFusion};
use calib::CalibrationProfile;
use hardware::{detect_chip, DetectedChip};
use trace::{Processor, TraceFormat};

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
    /// communication ([`crate::time::streams`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub streams: Vec<DeviceStreams>,
    /// The idle time between kernels on every stream, by cause ([`crate::time::waits`]); `null`
    /// when no kernel ran.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "crate::time::waits::as_value")]
    pub waits: Option<Waits>,
    /// What launching kernels costs the host, whole trace and per step ([`crate::time::launch_cost`]);
    /// `null` when the trace records no kernel's launch call.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "crate::time::launch_cost::as_value")]
    pub launch_cost: Option<LaunchReport>,
    /// The critical path of each step (of the whole trace without steps): the chain of calls and
    /// kernels that decided when its last work ended ([`crate::time::critical_path`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty", with = "crate::time::critical_path::as_value")]
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
    /// ([`fusion()`]), where it was computed with the report ([`set_fusion`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fusion: Option<TraceFusion>,
    /// The kernel groups of each layer (or step) as boxes and data edges, for the group
    /// drawing (the `view` crate's `fusion_dag`); indices into `fusion.groups`.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "crate::trace_fusion::dag::as_value")]
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

/// The choices one trace is analysed with: a user's flags on the command line, the defaults
/// when the page opens a file ([`Choices::default`]). Both run [`analyse`] with them, so the two
/// give the same report.
pub struct Choices<'a> {
    /// The chip the user named; `None`: detected from the trace's devices ([`detect_chip`]).
    pub chip: Option<&'a DetectedChip>,
    /// The rule set that finds the fusion left on the table.
    pub rules: RuleSet,
    /// A calibration profile: each opportunity whose pattern it measured gets its speedup.
    pub calibration: Option<&'a CalibrationProfile>,
    /// An execution trace of the same run and its file name: exact data flow for the fusion
    /// groups, shapes for ops that recorded none.
    pub exec_trace: Option<(&'a ExecTrace, &'a str)>,
}

impl Default for Choices<'_> {
    /// What opening a file gives: the chip detected, the Inductor-like rules the command line
    /// uses by default, no calibration, no execution trace.
    fn default() -> Self {
        Choices { chip: None, rules: BuiltIn::Inductor.rules(), calibration: None, exec_trace: None }
    }
}

impl<'a> Choices<'a> {
    /// The defaults with an execution trace of the run (`None`: without one).
    pub fn with_exec_trace(exec_trace: Option<(&'a ExecTrace, &'a str)>) -> Self {
        Choices { exec_trace, ..Choices::default() }
    }

    /// These choices with `detected` ([`chip_to_detect`]) as the chip where none was chosen.
    fn or_chip(&self, detected: Option<&'a DetectedChip>) -> Choices<'a> {
        Choices {
            chip: self.chip.or(detected),
            rules: self.rules.clone(),
            calibration: self.calibration,
            exec_trace: self.exec_trace,
        }
    }

    /// The fusion analysis's options under these choices, per step and layer of `structure`.
    fn fusion_options<'s>(&'s self, structure: Option<&'s Structure>) -> FusionOptions<'s> {
        FusionOptions {
            rules: self.rules.clone(),
            chip: self.chip.map(|c| &c.chip),
            calibration: self.calibration,
            exec_trace: self.exec_trace,
            structure,
        }
    }
}

/// The chip detected from the trace's device names, when the choices name none: detected
/// once, for the op table's roofline and the fusion's bandwidth alike.
fn chip_to_detect(side: &ClassifiedTrace<'_>, choices: &Choices<'_>) -> Option<DetectedChip> {
    match choices.chip {
        Some(_) => None,
        None => detect_chip(&side.platform.devices).ok(),
    }
}

/// One trace through every analysis: its summary (with the structure search the side makes
/// once), and its report with the fusion groups per step and layer.
pub fn analyse(side: &ClassifiedTrace<'_>, file: Option<&str>, choices: &Choices<'_>) -> (TraceSummary, TraceTime) {
    let summary = summarize(side, file);
    let time = report(side, summary.structure.as_deref(), choices);
    (summary, time)
}

/// [`analyse`] for the fleet export: the report with its fusion groups but not their drawing,
/// and each kernel's group (index into the groups, by index into `trace.kernels`).
pub fn analyse_with_kernel_groups(
    side: &ClassifiedTrace<'_>,
    file: Option<&str>,
    choices: &Choices<'_>,
) -> (TraceSummary, TraceTime, Vec<u32>) {
    let summary = summarize(side, file);
    let detected = chip_to_detect(side, choices);
    let choices = choices.or_chip(detected.as_ref());
    let mut time = time_report(side, &choices);
    let options = choices.fusion_options(summary.structure.as_deref());
    let (fusion, groups) = crate::trace_fusion::analyse_with_kernel_groups(side, &options);
    time.fusion = Some(fusion);
    (summary, time, groups)
}

/// The report of one classified trace, its fusion groups included; per step and layer where
/// `structure` is known.
pub fn report(side: &ClassifiedTrace<'_>, structure: Option<&Structure>, choices: &Choices<'_>) -> TraceTime {
    let detected = chip_to_detect(side, choices);
    let choices = choices.or_chip(detected.as_ref());
    let mut time = time_report(side, &choices);
    set_fusion(&mut time, side, structure, &choices);
    time
}

/// The report without its fusion groups: the chip (the one chosen, or detected from the
/// device names), the timelines, streams, waits, launch cost, critical paths and the op table,
/// priced by the per-op cost formulas over the recorded shapes ([`recorded_cost`]).
pub fn time_report(side: &ClassifiedTrace<'_>, choices: &Choices<'_>) -> TraceTime {
    let (chip, chip_note) = match choices.chip {
        Some(c) => (Some(c.clone()), None),
        None => match detect_chip(&side.platform.devices) {
            Ok(c) => (Some(c), None),
            Err(seen) => (None, Some(unknown_chip_note(&seen))),
        },
    };
    let (mut devices, busy) = timelines_and_busy(side);
    let (timeline, steps) = if devices.is_empty() {
        (None, Vec::new())
    } else {
        let first = devices.remove(0);
        (Some(first.whole), first.steps)
    };
    let windows = step_windows(side);
    // Made before the op table, so that the devices' busy time is not held beside it.
    let launch_cost = launch_cost(side.trace, &windows, busy);
    let table = op_table_of(side, chip.as_ref(), choices);
    TraceTime {
        chip: chip.as_ref().map(ChipUsed::of),
        chip_note,
        timeline,
        steps,
        other_devices: devices.into_iter().map(|d| d.whole).collect(),
        streams: device_streams(side),
        // A CPU run's gaps between compiled kernels are its library calls and Python, not
        // waits on the host, on launches or on another stream: no split by cause.
        waits: match side.platform.processor() {
            Processor::Gpu => waits(side.trace, &windows),
            Processor::Cpu => None,
        },
        launch_cost,
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

/// The op table against `chip`, with the execution trace's shapes where it has one.
fn op_table_of(side: &ClassifiedTrace<'_>, chip: Option<&DetectedChip>, choices: &Choices<'_>) -> OpTable {
    let linked = choices.exec_trace.map(|(et, _)| (et, link(side.trace, et)));
    let vllm = VllmCalls::new(side);
    let call_costs: &dyn CallCosts = match &vllm {
        Some(v) => v,
        None => &NoCallCosts,
    };
    op_table(side, chip.map(|c| &c.chip), &recorded_cost, call_costs, linked.as_ref().map(|(et, l)| (*et, l)))
}

/// `time`'s op table and fusion made again with an execution trace of the run that came after
/// the report (the page's worker: an execution trace dropped onto an opened trace); the chip
/// detected as [`time_report`] detects it, the rest of the report (timeline, streams, capture
/// join) kept, since the execution trace does not change it.
pub fn add_exec_trace(
    time: &mut TraceTime,
    side: &ClassifiedTrace<'_>,
    structure: Option<&Structure>,
    exec_trace: (&ExecTrace, &str),
) {
    let chip = detect_chip(&side.platform.devices).ok();
    let choices = Choices { chip: chip.as_ref(), ..Choices::with_exec_trace(Some(exec_trace)) };
    let table = op_table_of(side, chip.as_ref(), &choices);
    (time.ops, time.unattributed, time.op_coverage) = (table.rows, table.unattributed, table.coverage);
    set_fusion(time, side, structure, &choices);
}

/// Every kernel as a fusion group and the fusion left on the table, against the chip chosen
/// or detected; with the group drawing's boxes per layer (or step) where `structure` is known.
pub fn fusion(
    side: &ClassifiedTrace<'_>,
    structure: Option<&Structure>,
    choices: &Choices<'_>,
) -> (TraceFusion, Option<FusionDag>) {
    let detected = chip_to_detect(side, choices);
    let choices = choices.or_chip(detected.as_ref());
    let options = choices.fusion_options(structure);
    #[cfg(any(test, feature = "test-counters"))]
    FUSIONS_MADE.with(|n| n.set(n.get() + 1));
    fusion_with_dag(side, &options)
}

/// Puts [`fusion()`]'s groups and drawing into `time`.
pub fn set_fusion(
    time: &mut TraceTime,
    side: &ClassifiedTrace<'_>,
    structure: Option<&Structure>,
    choices: &Choices<'_>,
) {
    let (groups, dag) = fusion(side, structure, choices);
    (time.fusion, time.fusion_dag) = (Some(groups), dag);
}

// Counted in this crate's tests and where a dependent's tests ask (feature `test-counters`).
#[cfg(any(test, feature = "test-counters"))]
thread_local! {
    /// Fusion analyses [`fusion()`] made on this thread: tests check that opening a trace with
    /// its execution trace analyses it once.
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
    pub fn op_table(&self) -> OpTable {
        OpTable {
            rows: self.ops.clone(),
            unattributed: self.unattributed.clone(),
            coverage: self.op_coverage.clone(),
            shapes_recorded: self.shapes_recorded,
        }
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
