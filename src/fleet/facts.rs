//! One trace's facts as tables ([`FactTable`]): what `trace --json` reports of it, row by row,
//! so that any engine can add them up across traces. Pure: a trace and its analysis in, tables
//! out; the file names and the writing are [`crate::files`]'.

use analysis::pipeline::TraceTime;
use analysis::ranks::RankSummary;
use analysis::structure::{Place, Structure};
use analysis::summary::{ClassifiedTrace, TraceSummary};
use analysis::time::op_table::OpRow;
use analysis::trace_fusion::{KernelGroup, Opportunity};
use classify::name::short_name;
use trace::{Kernel, Trace, TraceFormat};

use crate::schema::{FactTable, Values};

/// The width of a kernel's short name (the tables' width; `name` keeps it whole).
pub(crate) const SHORT_NAME: usize = 70;

/// Who a trace is: the id every table's `trace` column holds (the path as given) and the job it
/// belongs to.
#[derive(Debug, Clone, PartialEq)]
pub struct TraceId {
    pub trace: String,
    pub job: Option<String>,
}

/// What the streamed `kernels` file came to.
pub struct Streamed {
    pub format: TraceFormat,
    pub kernels: u64,
    pub kernel_time_us: f64,
    pub gpu_time_us: f64,
}

/// A trace's row in `traces`: who it is and its figures (all `None` for a trace that could not
/// be read, whose `error` says why).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TraceRow {
    pub rank: Option<i64>,
    pub world_size: Option<i64>,
    pub format: Option<String>,
    pub vendor: Option<String>,
    pub devices: Option<String>,
    pub kernels: Option<u64>,
    pub gpu_time_us: Option<f64>,
    pub kernel_time_us: Option<f64>,
    pub span_us: Option<f64>,
    pub busy_us: Option<f64>,
    pub idle_us: Option<f64>,
    /// The idle time between kernels on every stream by cause (`Why the GPU waits`): waiting
    /// on the host, back-to-back launch gaps, the rest, µs summed over the streams.
    pub waits: Option<(f64, f64, f64)>,
    /// What the export left out of this trace's tables, and why.
    pub notes: Option<String>,
    pub error: Option<String>,
}

impl TraceRow {
    /// The row of a trace that could not be read.
    pub fn failed(error: &str) -> TraceRow {
        TraceRow { error: Some(error.to_string()), ..TraceRow::default() }
    }

    /// The row of a trace read whole and analysed, its identity from the rank's fold.
    pub fn analysed(trace: &Trace, summary: &TraceSummary, time: &TraceTime, rank: Option<&RankSummary>) -> TraceRow {
        let platform = summary.platforms.first();
        let timeline = time.timeline.as_ref();
        let identity = rank.and_then(|r| r.distributed.as_ref());
        TraceRow {
            rank: rank.and_then(rank_of),
            world_size: identity.and_then(|i| i.world_size).map(i64::from),
            format: Some(format_key(trace.format)),
            vendor: platform.map(|p| p.vendor.to_string()),
            devices: platform.map(|p| p.devices.join(", ")),
            kernels: platform.map(|p| p.kernels as u64),
            gpu_time_us: platform.map(|p| p.gpu_time_us),
            kernel_time_us: platform.map(|p| p.kernel_time_us),
            span_us: timeline.map(|t| t.total_us),
            busy_us: timeline.map(|t| t.busy_us),
            idle_us: timeline.map(|t| t.idle_us),
            waits: time.waits.as_ref().map(|w| (w.host_wait_us, w.kernel_wait_us, w.other_us)),
            notes: None,
            error: None,
        }
    }

    /// The row of a trace exported as it streamed: the rank's fold gives its identity, devices
    /// and busiest device's timeline, the kernel rows its counts.
    pub fn streamed(kernels: &Streamed, rank: &RankSummary, notes: String) -> TraceRow {
        let identity = rank.distributed.as_ref();
        let timeline = rank.timeline();
        let devices: Vec<&str> = rank.devices.iter().map(|d| d.timeline.device.as_str()).collect();
        TraceRow {
            rank: rank_of(rank),
            world_size: identity.and_then(|i| i.world_size).map(i64::from),
            format: Some(format_key(kernels.format)),
            vendor: None,
            devices: Some(devices.join(", ")),
            kernels: Some(kernels.kernels),
            gpu_time_us: Some(kernels.gpu_time_us),
            kernel_time_us: Some(kernels.kernel_time_us),
            span_us: timeline.map(|t| t.total_us),
            busy_us: timeline.map(|t| t.busy_us),
            idle_us: timeline.map(|t| t.idle_us),
            waits: rank.waits.as_ref().map(|w| (w.host_wait_us, w.kernel_wait_us, w.other_us)),
            notes: Some(notes),
            error: None,
        }
    }

    /// The one-row `traces` table.
    pub fn table(&self, id: &TraceId) -> FactTable {
        let mut t = traces_table(1);
        let c = &mut t.columns;
        text(&mut c[0].1, Some(id.trace.clone()));
        text(&mut c[1].1, id.job.clone());
        int(&mut c[2].1, self.rank);
        int(&mut c[3].1, self.world_size);
        text(&mut c[4].1, self.format.clone());
        text(&mut c[5].1, self.vendor.clone());
        text(&mut c[6].1, self.devices.clone());
        count(&mut c[7].1, self.kernels);
        real(&mut c[8].1, self.gpu_time_us);
        real(&mut c[9].1, self.kernel_time_us);
        real(&mut c[10].1, self.span_us);
        real(&mut c[11].1, self.busy_us);
        real(&mut c[12].1, self.idle_us);
        real(&mut c[13].1, self.waits.map(|w| w.0));
        real(&mut c[14].1, self.waits.map(|w| w.1));
        real(&mut c[15].1, self.waits.map(|w| w.2));
        text(&mut c[16].1, self.notes.as_deref());
        text(&mut c[17].1, self.error.as_deref());
        t
    }
}

/// Every table of one trace read whole and analysed, in [`crate::schema::TABLES`] order.
pub fn tables(
    id: &TraceId,
    side: &ClassifiedTrace<'_>,
    summary: &TraceSummary,
    time: &TraceTime,
    kernel_groups: &[u32],
    rank: &RankSummary,
) -> Vec<FactTable> {
    let row = TraceRow::analysed(side.trace, summary, time, Some(rank));
    let fusion = time.fusion.as_ref();
    vec![
        row.table(id),
        kernels(id, side, kernel_groups),
        steps(id, summary.structure.as_deref()),
        ops(id, &time.ops),
        fusion_groups(id, fusion.map_or(&[][..], |f| &f.groups[..])),
        opportunities(id, fusion.map_or(&[][..], |f| &f.opportunities[..])),
        collectives(id, rank),
    ]
}

/// The tables of a trace exported as it streamed, but `traces` and `kernels`: the steps, the op
/// table and the fusion groups need the whole trace, so theirs are empty; its collectives are
/// folded.
pub fn streamed_tables(id: &TraceId, rank: &RankSummary) -> Vec<FactTable> {
    vec![steps(id, None), ops(id, &[]), fusion_groups(id, &[]), opportunities(id, &[]), collectives(id, rank)]
}

fn text(v: &mut Values, s: Option<impl AsRef<str>>) {
    if let Values::Text(v) = v {
        v.append_option(s);
    }
}
fn int(v: &mut Values, n: Option<i64>) {
    if let Values::Int(v) = v {
        v.push(n);
    }
}
fn count(v: &mut Values, n: Option<u64>) {
    if let Values::Count(v) = v {
        v.push(n);
    }
}
fn real(v: &mut Values, x: Option<f64>) {
    if let Values::Real(v) = v {
        v.push(x);
    }
}

fn traces_table(rows: usize) -> FactTable {
    let t = || Values::text(rows);
    let i = || Values::Int(Vec::with_capacity(rows));
    let c = || Values::Count(Vec::with_capacity(rows));
    let r = || Values::Real(Vec::with_capacity(rows));
    FactTable {
        name: "traces",
        columns: vec![
            ("trace", t()),
            ("job", t()),
            ("rank", i()),
            ("world_size", i()),
            ("format", t()),
            ("vendor", t()),
            ("devices", t()),
            ("kernels", c()),
            ("gpu_time_us", r()),
            ("kernel_time_us", r()),
            ("span_us", r()),
            ("busy_us", r()),
            ("idle_us", r()),
            ("idle_host_wait_us", r()),
            ("idle_launch_gap_us", r()),
            ("idle_other_us", r()),
            ("notes", t()),
            ("error", t()),
        ],
    }
}

/// The rank a trace records (`distributedInfo`), as `traces.rank`, `collectives.rank` and the
/// partition folder hold it.
pub(crate) fn rank_of(rank: &RankSummary) -> Option<i64> {
    rank.distributed.as_ref().and_then(|d| d.rank).map(i64::from)
}

/// The format's name as the JSON results write it (`kineto`, `nsys`, `xplane`, …).
fn format_key(format: TraceFormat) -> String {
    serde_json::to_value(format).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default()
}

/// The empty `kernels` table, with room for `rows`.
pub(crate) fn kernel_columns(rows: usize) -> FactTable {
    FactTable {
        name: "kernels",
        columns: vec![
            ("trace", Values::text(rows)),
            ("device", Values::Int(Vec::with_capacity(rows))),
            ("stream", Values::Int(Vec::with_capacity(rows))),
            ("start_us", Values::Real(Vec::with_capacity(rows))),
            ("duration_us", Values::Real(Vec::with_capacity(rows))),
            ("name", Values::text(rows)),
            ("short_name", Values::text(rows)),
            ("category", Values::text(rows)),
            ("launching_op", Values::text(rows)),
            ("step", Values::Int(Vec::with_capacity(rows))),
            ("layer", Values::Int(Vec::with_capacity(rows))),
            ("fusion_group", Values::Int(Vec::with_capacity(rows))),
        ],
    }
}

/// One row of `kernels`, whether the trace is held or streams.
pub(crate) struct KernelRow<'a> {
    pub trace: &'a str,
    pub kernel: &'a Kernel,
    pub name: &'a str,
    pub short_name: &'a str,
    pub category: &'a str,
    pub launching_op: Option<&'a str>,
    /// Its step and layer (index of the step in `steps`, of the layer in the step).
    pub place: Place,
    /// Its group's `fusion_group` in `fusion_groups`.
    pub fusion_group: Option<u32>,
}

impl KernelRow<'_> {
    pub(crate) fn push(self, t: &mut FactTable) {
        let c = &mut t.columns;
        text(&mut c[0].1, Some(self.trace));
        int(&mut c[1].1, Some(self.kernel.device));
        int(&mut c[2].1, Some(self.kernel.stream));
        real(&mut c[3].1, Some(self.kernel.ts));
        real(&mut c[4].1, Some(self.kernel.dur));
        text(&mut c[5].1, Some(self.name));
        text(&mut c[6].1, Some(self.short_name));
        text(&mut c[7].1, Some(self.category));
        text(&mut c[8].1, self.launching_op);
        int(&mut c[9].1, self.place.step.map(i64::from));
        int(&mut c[10].1, self.place.layer.map(i64::from));
        int(&mut c[11].1, self.fusion_group.map(i64::from));
    }
}

fn kernels(id: &TraceId, side: &ClassifiedTrace<'_>, groups: &[u32]) -> FactTable {
    let trace = side.trace;
    let ops = &side.event_ops().kernels;
    let places = side.structure_search().map(|s| s.kernel_places(trace)).unwrap_or_default();
    let mut t = kernel_columns(trace.kernels.len());
    let mut shorts: Vec<Option<(String, String)>> = vec![None; trace.names.len()];
    for (i, k) in trace.kernels.iter().enumerate() {
        let name = trace.name(k.name);
        let (short_name, category) = shorts[k.name.index()]
            .get_or_insert_with(|| (short_name(name, SHORT_NAME), side.class(k.name).category.to_string()));
        let launching_op = ops.get(i).copied().flatten().map(|o| trace.name(trace.cpu_ops[o].name));
        KernelRow {
            trace: &id.trace,
            kernel: k,
            name,
            short_name,
            category,
            launching_op,
            place: places.get(i).copied().unwrap_or_default(),
            fusion_group: groups.get(i).copied(),
        }
        .push(&mut t);
    }
    t
}

/// The steps the structure search found (`structure.steps` of `trace --json`), with their
/// phase's label.
fn steps(id: &TraceId, structure: Option<&Structure>) -> FactTable {
    let steps = structure.map_or(&[][..], |s| &s.steps[..]);
    let n = steps.len();
    let mut t = FactTable {
        name: "steps",
        columns: vec![
            ("trace", Values::text(n)),
            ("step", Values::Int(Vec::with_capacity(n))),
            ("phase", Values::text(n)),
            ("start_us", Values::Real(Vec::with_capacity(n))),
            ("end_us", Values::Real(Vec::with_capacity(n))),
            ("kernels", Values::Count(Vec::with_capacity(n))),
            ("layers", Values::Count(Vec::with_capacity(n))),
            ("kernel_time_us", Values::Real(Vec::with_capacity(n))),
            ("annotation", Values::text(n)),
        ],
    };
    for (i, s) in steps.iter().enumerate() {
        let phase = structure.and_then(|st| st.phases.get(s.phase)).map(|p| p.label.as_str());
        let c = &mut t.columns;
        text(&mut c[0].1, Some(id.trace.as_str()));
        int(&mut c[1].1, i64::try_from(i).ok());
        text(&mut c[2].1, phase);
        real(&mut c[3].1, Some(s.start_us));
        real(&mut c[4].1, Some(s.end_us));
        count(&mut c[5].1, u64::try_from(s.kernels).ok());
        count(&mut c[6].1, u64::try_from(s.layers).ok());
        real(&mut c[7].1, Some(s.time_us));
        text(&mut c[8].1, s.annotation.as_deref());
    }
    t
}

fn ops(id: &TraceId, rows: &[OpRow]) -> FactTable {
    let n = rows.len();
    let mut t = FactTable {
        name: "ops",
        columns: vec![
            ("trace", Values::text(n)),
            ("op", Values::text(n)),
            ("input_dims", Values::text(n)),
            ("calls", Values::Count(Vec::with_capacity(n))),
            ("kernel_time_us", Values::Real(Vec::with_capacity(n))),
            ("flops_per_call", Values::Count(Vec::with_capacity(n))),
            ("bytes_per_call", Values::Count(Vec::with_capacity(n))),
            ("tflops_per_s", Values::Real(Vec::with_capacity(n))),
            ("tb_per_s", Values::Real(Vec::with_capacity(n))),
            ("roofline_pct", Values::Real(Vec::with_capacity(n))),
            ("bound", Values::text(n)),
            ("formula", Values::text(n)),
        ],
    };
    for r in rows {
        let c = &mut t.columns;
        text(&mut c[0].1, Some(id.trace.clone()));
        text(&mut c[1].1, Some(r.op.clone()));
        text(&mut c[2].1, (!r.input_dims.is_null()).then(|| r.input_dims.to_string()));
        count(&mut c[3].1, Some(r.calls));
        real(&mut c[4].1, Some(r.kernel_time_us));
        count(&mut c[5].1, r.flops_per_call);
        count(&mut c[6].1, r.bytes_per_call);
        real(&mut c[7].1, r.tflops_per_s);
        real(&mut c[8].1, r.tb_per_s);
        real(&mut c[9].1, r.roofline_pct);
        text(&mut c[10].1, r.bound.map(|b| serde_text(&b)));
        text(&mut c[11].1, r.model.clone());
    }
    t
}

/// A value's JSON string form (an enum's name as the JSON results write it).
fn serde_text<T: serde::Serialize>(v: &T) -> String {
    match serde_json::to_value(v) {
        Ok(serde_json::Value::String(s)) => s,
        Ok(other) => other.to_string(),
        Err(_) => String::new(),
    }
}

fn fusion_groups(id: &TraceId, groups: &[KernelGroup]) -> FactTable {
    let n = groups.len();
    let mut t = FactTable {
        name: "fusion_groups",
        columns: vec![
            ("trace", Values::text(n)),
            ("fusion_group", Values::Int(Vec::with_capacity(n))),
            ("kernel", Values::text(n)),
            ("category", Values::text(n)),
            ("kind", Values::text(n)),
            ("calls", Values::Count(Vec::with_capacity(n))),
            ("time_us", Values::Real(Vec::with_capacity(n))),
            ("launched_by", Values::text(n)),
            ("ops", Values::text(n)),
            ("fused_bytes_per_call", Values::Count(Vec::with_capacity(n))),
            ("unfused_bytes_per_call", Values::Count(Vec::with_capacity(n))),
            ("how", Values::text(n)),
            ("exact", Values::Int(Vec::with_capacity(n))),
        ],
    };
    for (i, g) in groups.iter().enumerate() {
        let c = &mut t.columns;
        text(&mut c[0].1, Some(id.trace.as_str()));
        int(&mut c[1].1, i64::try_from(i).ok());
        text(&mut c[2].1, Some(g.kernel.as_str()));
        text(&mut c[3].1, Some(g.category.to_string()));
        text(&mut c[4].1, Some(serde_text(&g.kind)));
        count(&mut c[5].1, Some(g.calls));
        real(&mut c[6].1, Some(g.time_us));
        text(&mut c[7].1, g.launched_by.as_deref());
        text(&mut c[8].1, Some(g.parts.join(" + ")));
        count(&mut c[9].1, g.fused_bytes_per_call);
        count(&mut c[10].1, g.unfused_bytes_per_call);
        text(&mut c[11].1, Some(g.how.text()));
        int(&mut c[12].1, Some(i64::from(g.how.is_exact())));
    }
    t
}

fn opportunities(id: &TraceId, found: &[Opportunity]) -> FactTable {
    let n = found.len();
    let mut t = FactTable {
        name: "opportunities",
        columns: vec![
            ("trace", Values::text(n)),
            ("rule", Values::text(n)),
            ("kernels", Values::text(n)),
            ("ops", Values::text(n)),
            ("calls", Values::Count(Vec::with_capacity(n))),
            ("saved_bytes_per_call", Values::Count(Vec::with_capacity(n))),
            ("kernels_time_us", Values::Real(Vec::with_capacity(n))),
            ("saved_us", Values::Real(Vec::with_capacity(n))),
            ("launches_removed", Values::Count(Vec::with_capacity(n))),
        ],
    };
    for o in found {
        let c = &mut t.columns;
        text(&mut c[0].1, Some(id.trace.clone()));
        text(&mut c[1].1, Some(o.rule.clone()));
        text(&mut c[2].1, Some(o.kernels.join(" + ")));
        text(&mut c[3].1, Some(o.ops.join(" + ")));
        count(&mut c[4].1, Some(o.calls));
        count(&mut c[5].1, Some(o.saved_bytes_per_call));
        real(&mut c[6].1, Some(o.kernels_time_us));
        real(&mut c[7].1, o.saved_us);
        count(&mut c[8].1, Some(o.launches_removed));
    }
    t
}

/// The rank's collectives, as the ranks view folds them: one row per collective kernel, with
/// its sequence number in its process group, so that a query matches ranks as `ranks` does.
pub fn collectives(id: &TraceId, rank: &RankSummary) -> FactTable {
    let n = rank.collectives.len();
    let mut t = FactTable {
        name: "collectives",
        columns: vec![
            ("trace", Values::text(n)),
            ("rank", Values::Int(Vec::with_capacity(n))),
            ("process_group", Values::text(n)),
            ("sequence", Values::Count(Vec::with_capacity(n))),
            ("kind", Values::text(n)),
            ("kernel", Values::text(n)),
            ("device", Values::Int(Vec::with_capacity(n))),
            ("stream", Values::Int(Vec::with_capacity(n))),
            ("bytes", Values::Count(Vec::with_capacity(n))),
            ("start_us", Values::Real(Vec::with_capacity(n))),
            ("duration_us", Values::Real(Vec::with_capacity(n))),
            ("lead_in_us", Values::Real(Vec::with_capacity(n))),
            ("compute_before_us", Values::Real(Vec::with_capacity(n))),
        ],
    };
    let rank_id = rank_of(rank);
    let mut sequence = vec![0u64; rank.groups.len()];
    for c in &rank.collectives {
        let group = rank.groups.get(c.group as usize);
        let seq = sequence.get_mut(c.group as usize).map(|s| {
            *s += 1;
            *s - 1
        });
        let cols = &mut t.columns;
        text(&mut cols[0].1, Some(id.trace.clone()));
        int(&mut cols[1].1, rank_id);
        text(&mut cols[2].1, group.map(|g| g.key.clone()));
        count(&mut cols[3].1, seq);
        text(&mut cols[4].1, Some(serde_text(&c.kind)));
        text(&mut cols[5].1, rank.collective_names.get(c.name as usize).cloned());
        int(&mut cols[6].1, Some(c.device));
        int(&mut cols[7].1, Some(c.stream));
        count(&mut cols[8].1, c.bytes);
        real(&mut cols[9].1, Some(c.start_us));
        real(&mut cols[10].1, Some(c.end_us - c.start_us));
        real(&mut cols[11].1, Some(c.lead_in_us));
        real(&mut cols[12].1, c.compute_before_us);
    }
    t
}
