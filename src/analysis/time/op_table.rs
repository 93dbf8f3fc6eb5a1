//! The per-op table: one row per distinct (op, input dims, input types), with the GPU time its
//! calls took and, where a cost formula knows the op, its FLOPs, bytes, achieved rates and
//! distance from the chip's roofline (`docs/trace-analysis.md`, "Where the time goes").
//!
//! Every GPU event (kernel, memcpy, memset) is attributed to exactly one op, the innermost
//! `cpu_op` that launched it ([`OpLinks`]), so an `aten::linear` that calls `aten::addmm` is
//! counted once, at `addmm`. A call's time is the union of its events' intervals (a cuBLAS
//! call's memset and GEMM count once each, overlapping work once). Events with no op are
//! listed as unattributed, so the rows and the unattributed time add up to the GPU time.
//!
//! An op's shapes are its own recorded arguments; for an op that recorded none (a trace taken
//! without `record_shapes`) and links to a node of an execution trace of the same run, the
//! node's ([`ShapesFrom::ExecutionTrace`]), as the fusion groups take them: both views then
//! price the same op with the same shapes through the same models.

use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::exec_trace::{EtLink, ExecTrace};
use crate::summary::{round3, ClassifiedTrace};
use crate::time::recorded_cost::{is_list_copy, list_copy_cost};
pub use crate::time::recorded_cost::{CallCosts, Cost, CostLookup, NoCallCosts, ShapeText};
use hardware::{Chip, PeakKey, Precision, Unit};
use trace::compiled::Compiler;
use trace::intern::NameId;
use trace::{OpLinks, RecordedShapes, Trace};

/// Where a row's shapes came from.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum ShapesFrom {
    /// The op's own arguments in the trace (none when it was recorded without `record_shapes`).
    #[default]
    #[serde(rename = "trace")]
    Trace,
    /// The linked execution-trace node's `input_shapes`, `input_types` and `inputs`: the op
    /// recorded none.
    #[serde(rename = "execution trace")]
    ExecutionTrace,
}

impl ShapesFrom {
    pub fn is_trace(&self) -> bool {
        *self == ShapesFrom::Trace
    }
}

/// Compute- or memory-bound on the chip: which roof the op sits under.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Bound {
    Compute,
    Memory,
}

/// One row of the table. Rates and roofline figures are `None` without a model (and the
/// roofline ones without a chip).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OpRow {
    pub op: String,
    /// `Input Dims` exactly as the trace records them (or as the execution trace's node gives
    /// them: see `shapes_from`); `null` without either.
    pub input_dims: Value,
    pub input_types: Value,
    /// Where the dims and types came from; absent: the trace's own op.
    #[serde(default, skip_serializing_if = "ShapesFrom::is_trace")]
    pub shapes_from: ShapesFrom,
    /// The model's family, or `null` ("no model": see `no_model`).
    pub model: Option<String>,
    /// Why there is no model (missing shapes, an op no model knows, a bad dim).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub no_model: Option<String>,
    /// The FLOPs are an estimate (Triton kernels).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub estimate: bool,
    pub calls: u64,
    /// Sum over calls of the union of each call's GPU events, µs.
    pub kernel_time_us: f64,
    pub flops_per_call: Option<u64>,
    pub bytes_per_call: Option<u64>,
    pub tflops_per_s: Option<f64>,
    pub tb_per_s: Option<f64>,
    pub flop_per_byte: Option<f64>,
    /// The time all calls would take at the chip's roofline, µs.
    pub roofline_time_us: Option<f64>,
    /// `roofline_time_us / kernel_time_us`, percent.
    pub roofline_pct: Option<f64>,
    pub bound: Option<Bound>,
    /// The unit and type the op computes in (`matrix_bf16`): the peak it is measured against.
    pub compute: Option<PeakKey>,
    /// The chip peak used: `compute` when the chip has that figure, a fallback (named), or
    /// `peak_flops` when the chip has none per type.
    pub peak: Option<String>,
}

/// GPU events no CPU op launched (graph replays, work before the profiled window).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Unattributed {
    pub events: u64,
    pub time_us: f64,
    /// The longest, by total time (at most [`UNATTRIBUTED_NAMES`]).
    pub kernels: Vec<NamedTime>,
}

/// A kernel name with its count and total time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NamedTime {
    pub name: String,
    pub count: u64,
    pub time_us: f64,
}

/// How many unattributed kernel names the table lists.
pub const UNATTRIBUTED_NAMES: usize = 20;

/// How much of the GPU time the models explain.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Coverage {
    /// GPU time ([`crate::summary::GPU_TIME_DEFINITION`]), µs: `modelled_us +
    /// unmodelled_us + unattributed_us + overlap_us`.
    pub gpu_time_us: f64,
    #[serde(default)]
    pub gpu_time_definition: String,
    pub modelled_us: f64,
    pub unmodelled_us: f64,
    pub unattributed_us: f64,
    /// Time by which one op call's own events overlap each other (kernels of one call on two
    /// streams), µs: a row's time is the union of each call's events (as TraceLens counts it),
    /// GPU time their sum, so this is the difference.
    #[serde(default)]
    pub overlap_us: f64,
    /// `modelled_us / gpu_time_us`, percent.
    pub modelled_pct: f64,
}

/// The table, its unattributed time and coverage.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct OpTable {
    /// Longest kernel time first.
    pub rows: Vec<OpRow>,
    pub unattributed: Unattributed,
    pub coverage: Coverage,
    /// The trace was recorded with `record_shapes=True` (some op carries `Input Dims`).
    pub shapes_recorded: bool,
}

/// A row's key: the op and its dims and types.
type RowKey = (NameId, ShapesKey);

/// The dims, types and (expanded inputs') strides of a row: the op's recorded ones as interned texts, or the index of a
/// distinct execution-trace (dims, types) text pair ([`OpShapes`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum ShapesKey {
    Recorded(Option<NameId>, Option<NameId>, Option<NameId>),
    ExecTrace(usize),
}

/// One call's shapes: its op's recorded arguments, or those of the execution-trace node (by
/// index) linked to it.
#[derive(Debug, Clone, Copy)]
enum CallShapes {
    Recorded(RecordedShapes),
    ExecTrace(usize),
}

/// An execution trace of the run and how its nodes link to the trace's CPU ops.
pub type LinkedExecTrace<'e> = (&'e ExecTrace, &'e EtLink);

/// Each op's shapes: its own if it recorded any, else its linked execution-trace node's.
struct OpShapes<'t> {
    trace: &'t Trace,
    exec_trace: Option<LinkedExecTrace<'t>>,
    /// Distinct (dims, types) texts of the nodes used, numbered in the order met.
    et_texts: FxHashMap<(&'t str, &'t str), usize>,
}

impl<'t> OpShapes<'t> {
    fn of(&mut self, op: usize) -> (ShapesKey, CallShapes) {
        let shapes = self.trace.cpu_ops[op].shapes;
        let node = self
            .exec_trace
            .filter(|_| !shapes.is_recorded())
            .and_then(|(et, l)| Some((et, l.by_cpu_op.get(op).copied()??)));
        match node {
            Some((et, i)) => {
                let n = &et.nodes[i];
                let next = self.et_texts.len();
                let text = *self.et_texts.entry((n.input_dims.as_str(), n.input_types.as_str())).or_insert(next);
                (ShapesKey::ExecTrace(text), CallShapes::ExecTrace(i))
            }
            None => (ShapesKey::Recorded(shapes.dims, shapes.types, shapes.strides), CallShapes::Recorded(shapes)),
        }
    }

    fn text(&self, shapes: CallShapes) -> (ShapeText<'t>, ShapesFrom) {
        let trace = self.trace;
        match (shapes, self.exec_trace) {
            (CallShapes::ExecTrace(i), Some((et, _))) => {
                let n = &et.nodes[i];
                let text = ShapeText {
                    dims: Some(&n.input_dims),
                    types: Some(&n.input_types),
                    concrete: Some(&n.concrete_inputs),
                    strides: None,
                };
                (text, ShapesFrom::ExecutionTrace)
            }
            (CallShapes::Recorded(s), _) => (ShapeText::recorded(trace, s), ShapesFrom::Trace),
            // Not made: an execution-trace call exists only with the execution trace.
            (CallShapes::ExecTrace(_), None) => (ShapeText::default(), ShapesFrom::Trace),
        }
    }
}

/// A row's calls as they are gathered: how many, their summed time, one call's shapes, and a
/// few calls (for the delegation check and the costs beyond the shapes).
type RowCalls = (u64, f64, CallShapes, Vec<usize>);

/// Builds the table of a classified trace, with the op links it keeps (made once for the op
/// table and the fusion groups: [`ClassifiedTrace::event_ops`]). `chip` gives the roofline
/// figures; without one they are `None`. With an execution trace of the run, ops that recorded
/// no shapes take their linked node's. `call_costs` prices calls whose shapes give no cost from
/// what else the trace records of them, in rows of their own where their costs differ.
pub fn op_table(
    side: &ClassifiedTrace<'_>,
    chip: Option<&Chip>,
    model: CostLookup<'_>,
    call_costs: &dyn CallCosts,
    exec_trace: Option<LinkedExecTrace<'_>>,
) -> OpTable {
    let (trace, links, event_ops) = (side.trace, &side.links(), side.event_ops());
    let mut shapes = OpShapes { trace, exec_trace, et_texts: FxHashMap::default() };
    // (op, start, end) of every attributed event; the rest are unattributed.
    let mut spans: Vec<(usize, f64, f64)> = Vec::with_capacity(trace.kernels.len() + trace.transfers.len());
    let mut unattributed: FxHashMap<NameId, (u64, f64)> = FxHashMap::default();
    // Times from the first event: a span's end less its start is then its duration to the
    // last bit, where on the trace's own clock (µs since an epoch, 10¹² and more) each loses
    // a fraction of a ns, and the covered time summed over the ops passed the GPU time.
    let base =
        trace.kernels.iter().map(|k| k.ts).chain(trace.transfers.iter().map(|t| t.ts)).fold(f64::INFINITY, f64::min);
    let base = if base.is_finite() { base } else { 0.0 };
    let mut attribute = |op: Option<usize>, name: NameId, ts: f64, dur: f64| match op {
        Some(op) => spans.push((op, ts - base, ts - base + dur)),
        None => {
            let e = unattributed.entry(name).or_insert((0, 0.0));
            e.0 += 1;
            e.1 += dur;
        }
    };
    // A list copy's first kernel, whose name gives the element size its arguments do not.
    let mut list_copy_kernel: FxHashMap<usize, NameId> = FxHashMap::default();
    for (k, &op) in trace.kernels.iter().zip(&event_ops.kernels) {
        if let Some(op) = op.filter(|&op| is_list_copy(trace.name(trace.cpu_ops[op].name))) {
            list_copy_kernel.entry(op).or_insert(k.name);
        }
        attribute(op, k.name, k.ts, k.dur);
    }
    for (t, &op) in trace.transfers.iter().zip(&event_ops.transfers) {
        attribute(op, t.name, t.ts, t.dur);
    }
    spans.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.total_cmp(&b.1)));

    // Per call: the union of its events; per row: the calls, their summed time and one call
    // (for the delegation check below).
    let mut rows: FxHashMap<(RowKey, u32), RowCalls> = FxHashMap::default();
    let mut order: Vec<(RowKey, u32)> = Vec::new();
    let mut i = 0;
    // Attributed events' summed durations, and their per-call unions summed.
    let attributed: f64 = spans.iter().map(|&(_, s, e)| e - s).sum();
    let mut union_total = 0.0;
    while i < spans.len() {
        let op = spans[i].0;
        let (mut total, mut cur_start, mut cur_end) = (0.0, spans[i].1, spans[i].2);
        i += 1;
        while i < spans.len() && spans[i].0 == op {
            let (_, s, e) = spans[i];
            if s > cur_end {
                total += cur_end - cur_start;
                (cur_start, cur_end) = (s, e);
            } else {
                cur_end = cur_end.max(e);
            }
            i += 1;
        }
        total += cur_end - cur_start;
        let (shapes_key, call) = shapes.of(op);
        let key = ((trace.cpu_ops[op].name, shapes_key), call_costs.class(op));
        let row = rows.entry(key).or_insert_with(|| {
            order.push(key);
            (0, 0.0, call, Vec::new())
        });
        row.0 += 1;
        row.1 += total;
        union_total += total;
        if row.3.len() < DELEGATION_SAMPLES {
            row.3.push(op);
        }
    }

    let mut costs = CostCache { shapes, model, by_key: FxHashMap::default() };
    let nested = NestedOps { trace, links };
    // Each row's time unrounded, modelled or not: the coverage sums these, not the rows'
    // rounded times (whose sum may pass the GPU time: 100.01 %).
    let (mut modelled, mut unmodelled) = (0.0_f64, 0.0_f64);
    let mut out: Vec<OpRow> = order
        .iter()
        .map(|&(key, class)| {
            let (calls, time, call, ref sample) = rows[&(key, class)];
            let name = trace.name(key.0);
            // An op the compiler recorded (XLA's HLO) is priced from that record.
            let compiled = sample.iter().find_map(|&op| compiled_cost(trace, op));
            // A list copy's element size is in its kernel's name.
            let cost = compiled
                .unwrap_or_else(|| costs.get(key, call))
                .or_else(|e| {
                    let kernel = sample.iter().find_map(|op| list_copy_kernel.get(op)).map(|&k| trace.name(k));
                    kernel.and_then(|k| list_copy_cost(costs.shapes.text(call).0, k)).ok_or(e)
                })
                // Where the shapes give none, what else the trace records of the call.
                .or_else(|e| sample.first().and_then(|&op| call_costs.cost(op)).unwrap_or(Err(e)));
            let cost = match cost {
                Ok(c) => match sample.iter().find_map(|&op| nested.delegate(op, c.model, &mut costs)) {
                    Some(child) => Err(format!("its work is counted at {child}, which it calls")),
                    None => Ok(c),
                },
                Err(e) => Err(e),
            };
            let (text, from) = costs.shapes.text(call);
            let r = row(name, text, from, calls, time, cost, chip);
            *(if r.model.is_some() { &mut modelled } else { &mut unmodelled }) += time;
            r
        })
        .collect();
    out.sort_by(|a, b| b.kernel_time_us.total_cmp(&a.kernel_time_us).then_with(|| a.op.cmp(&b.op)));

    let mut names: Vec<NamedTime> = unattributed
        .iter()
        .map(|(&id, &(count, time))| NamedTime { name: trace.name(id).to_string(), count, time_us: round3(time) })
        .collect();
    let un = Unattributed {
        events: names.iter().map(|n| n.count).sum(),
        time_us: round3(unattributed.values().map(|v| v.1).fold(0.0, |a, b| a + b)),
        kernels: {
            names.sort_by(|a, b| b.time_us.total_cmp(&a.time_us).then_with(|| a.name.cmp(&b.name)));
            names.truncate(UNATTRIBUTED_NAMES);
            names
        },
    };
    let overlap = (attributed - union_total).max(0.0);
    let gpu = crate::summary::gpu_time_us(trace);
    OpTable {
        shapes_recorded: trace.cpu_ops.iter().any(|o| o.shapes.is_recorded()),
        coverage: Coverage {
            gpu_time_us: round3(gpu),
            gpu_time_definition: crate::summary::GPU_TIME_DEFINITION.to_string(),
            modelled_us: round3(modelled),
            unmodelled_us: round3(unmodelled),
            unattributed_us: un.time_us,
            overlap_us: round3(overlap),
            modelled_pct: if gpu > 0.0 { round3(100.0 * modelled / gpu) } else { 0.0 },
        },
        rows: out,
        unattributed: un,
    }
}

/// The cost of CPU op `op` from the group its compiler recorded (XLA's HLO: the fusion's
/// operands and outputs, its ops' FLOPs); `None` when there is no such record.
fn compiled_cost(trace: &Trace, op: usize) -> Option<Result<Cost, String>> {
    let (_, g) = trace.compiled.of_op(trace.cpu_ops[op].external_id)?;
    // Inductor's record has no FLOPs: its ops keep their own models.
    if g.compiler != Compiler::Xla {
        return None;
    }
    let unit = if g.matrix { Unit::Matrix } else { Unit::Vector };
    let precision = match g.element.as_deref() {
        Some("bf16") => Precision::Bf16,
        Some("f16") => Precision::Fp16,
        Some("f64") => Precision::Fp64,
        Some(e) if e.starts_with("f8") => Precision::Fp8,
        _ => Precision::Fp32,
    };
    Some(match (g.flops, g.fused_bytes) {
        (Some(flops), Some(bytes)) => {
            Ok(Cost { model: "HLO", flops, bytes, peak: PeakKey::new(unit, precision), estimate: false })
        }
        (None, Some(_)) => {
            let opcodes: Vec<&str> = g.ops.iter().map(|o| o.opcode.as_str()).collect();
            Err(format!("no FLOP count for its HLO ({})", opcodes.join(", ")))
        }
        (_, None) => Err("its HLO shapes hold more bytes than 64 bits count".to_string()),
    })
}

/// Calls of a row checked for a modelled child: a few suffice (a model's ops call the same
/// children every time).
const DELEGATION_SAMPLES: usize = 3;
/// Nested ops looked at per call (an op's own children come first after it).
const NESTED_WALK: usize = 64;

/// Each distinct (op, dims, types)'s cost, computed once.
struct CostCache<'t, 'm> {
    shapes: OpShapes<'t>,
    model: CostLookup<'m>,
    by_key: FxHashMap<RowKey, Result<Cost, String>>,
}

impl CostCache<'_, '_> {
    fn get(&mut self, key: RowKey, shapes: CallShapes) -> Result<Cost, String> {
        if let Some(c) = self.by_key.get(&key) {
            return c.clone();
        }
        let c = (self.model)(self.shapes.trace.name(key.0), self.shapes.text(shapes).0);
        self.by_key.insert(key, c.clone());
        c
    }

    /// The cost of CPU op `op`'s call, with its key.
    fn of_op(&mut self, op: usize) -> (RowKey, Result<Cost, String>) {
        let (shapes_key, call) = self.shapes.of(op);
        let key = (self.shapes.trace.cpu_ops[op].name, shapes_key);
        (key, self.get(key, call))
    }
}

/// The ops a call made: those nested in its interval on its thread.
struct NestedOps<'t, 'l> {
    trace: &'t Trace,
    links: &'l OpLinks<'t>,
}

impl<'t> NestedOps<'t, '_> {
    /// The name of an op nested in call `op` whose own model is of the same family (`aten::sdpa`
    /// calling `aten::_flash_attention_forward`, `aten::linear` calling `aten::addmm`): then the
    /// call's work is counted there, where its main kernels are attributed, and the outer row
    /// (holding at most a helper kernel, such as ROCm's fill before attention) must not count it
    /// again over a few microseconds.
    fn delegate(&self, op: usize, family: &str, costs: &mut CostCache<'_, '_>) -> Option<&'t str> {
        let call = &self.trace.cpu_ops[op];
        let list = self.links.thread_ops(call.tid);
        let at = list.partition_point(|&i| self.trace.cpu_ops[i].ts < call.ts);
        let end = call.ts + call.dur;
        list[at..]
            .iter()
            .copied()
            .filter(|&i| i != op)
            .take_while(|&i| self.trace.cpu_ops[i].ts <= end)
            .take(NESTED_WALK)
            .filter(|&i| self.trace.cpu_ops[i].ts + self.trace.cpu_ops[i].dur <= end)
            .find(|&i| self.trace.cpu_ops[i].name != call.name && costs.of_op(i).1.is_ok_and(|c| c.model == family))
            .map(|i| self.trace.name(self.trace.cpu_ops[i].name))
    }
}

/// `text` parsed as JSON, or `null` (the reader only keeps arrays, so this does not fail on
/// a trace's own text).
fn json(text: Option<&str>) -> Value {
    text.and_then(|t| serde_json::from_str(t).ok()).unwrap_or(Value::Null)
}

/// One row's figures from its calls, time and cost.
fn row(
    op: &str,
    shapes: ShapeText<'_>,
    shapes_from: ShapesFrom,
    calls: u64,
    time_us: f64,
    cost: Result<Cost, String>,
    chip: Option<&Chip>,
) -> OpRow {
    let mut r = OpRow {
        op: op.to_string(),
        input_dims: json(shapes.dims),
        input_types: json(shapes.types),
        shapes_from,
        model: None,
        no_model: None,
        estimate: false,
        calls,
        kernel_time_us: round3(time_us),
        flops_per_call: None,
        bytes_per_call: None,
        tflops_per_s: None,
        tb_per_s: None,
        flop_per_byte: None,
        roofline_time_us: None,
        roofline_pct: None,
        bound: None,
        compute: None,
        peak: None,
    };
    let cost = match cost {
        Ok(c) => c,
        Err(reason) => {
            r.no_model = Some(reason);
            return r;
        }
    };
    r.model = Some(cost.model.to_string());
    r.estimate = cost.estimate;
    r.flops_per_call = Some(cost.flops);
    r.bytes_per_call = Some(cost.bytes);
    let (flops, bytes) = (cost.flops as f64 * calls as f64, cost.bytes as f64 * calls as f64);
    // µs × 1e6 = FLOP per µs → TFLOP/s.
    if time_us > 0.0 {
        r.tflops_per_s = Some(round3(flops / time_us / 1e6));
        r.tb_per_s = Some(round3(bytes / time_us / 1e6));
    }
    if cost.bytes > 0 {
        r.flop_per_byte = Some(round3(cost.flops as f64 / cost.bytes as f64));
    }
    r.compute = Some(cost.peak);
    set_roofline(&mut r, chip);
    r
}

/// Sets (or, without a chip, clears) a row's roofline figures from its FLOPs, bytes and time:
/// the page re-runs this when the user picks another chip, with no need to read the trace again.
pub fn set_roofline(r: &mut OpRow, chip: Option<&Chip>) {
    (r.roofline_time_us, r.roofline_pct, r.bound, r.peak) = (None, None, None, None);
    let (Some(chip), Some(compute), Some(f), Some(b)) = (chip, r.compute, r.flops_per_call, r.bytes_per_call) else {
        return;
    };
    let (flops, bytes) = (f as f64 * r.calls as f64, b as f64 * r.calls as f64);
    let peak = chip.peak(compute);
    let compute_s = flops / peak.flops;
    let memory_s = bytes / chip.hbm_bandwidth;
    let roof_us = compute_s.max(memory_s) * 1e6;
    r.roofline_time_us = Some(round3(roof_us));
    r.roofline_pct = (r.kernel_time_us > 0.0).then(|| round3(100.0 * roof_us / r.kernel_time_us));
    r.bound = Some(if compute_s >= memory_s { Bound::Compute } else { Bound::Memory });
    r.peak = Some(peak.key.map(|k| k.name()).unwrap_or_else(|| "peak_flops".to_string()));
}

#[cfg(test)]
mod tests;
