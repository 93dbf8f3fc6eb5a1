//! The overview: a verdict that names the devices, and findings ranked by the time they
//! explain. A reviewer opens a trace or a pair to learn what is slow and why; the analyses
//! answer that in a dozen tables, and this module picks the few rows that matter most and
//! says each in one sentence with its numbers (`docs/trace-analysis.md`, "Overview").
//!
//! Every finding carries the time it explains, in µs: the gap between the sides for an op or
//! a category, the time a fusion difference costs the unfused side, the time an opportunity
//! would save, the time the GPU sat idle. Findings are ranked by that time, at most
//! [`MAX_FINDINGS`], with a cap per kind so that one kind (thirty op rows) cannot crowd out
//! the others. The page, the command line and the Markdown export show the same list.

use serde::{Deserialize, Serialize};

use classify::family::readable_name;
use units::{format_bytes, format_duration_us, group_digits, plural};

use crate::compare::Comparison;
use crate::pipeline::TraceTime;
use crate::summary::{round3, PlatformEntry};
use crate::time::gap::{Gap, GapRow};
use crate::time::launch_cost::LaunchCost;
use crate::time::timeline::Timeline;
use crate::time::waits::Waits;
use crate::trace_fusion::TraceFusion;
use trace::platform::{Processor, Vendor};

/// At most this many findings: the first screen holds them without scrolling.
pub const MAX_FINDINGS: usize = 8;

/// Kernel names in a sentence are read out (library and fields, [`readable_name`]) in at
/// most this many characters (the full name is in the evidence's tables).
const KERNEL_WIDTH: usize = 56;

/// The answer first: the verdict, then the findings, largest time first.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Overview {
    pub verdict: Verdict,
    pub findings: Vec<Finding>,
}

/// Which side is faster (or, for one trace, where its time went), naming the devices.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Verdict {
    /// One sentence: "MI300X (AMD) takes 43.06 ms of GPU time, H100 SXM (NVIDIA) 45.65 ms:
    /// MI300X (AMD) is 1.06× faster (2.58 ms less)".
    pub text: String,
    /// Each side, in the comparison's order (one for a single trace).
    pub sides: Vec<VerdictSide>,
}

/// One side of the verdict.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VerdictSide {
    /// The comparison's key of the side (`amd`, `nvidia`, `a`, `b`); `trace` for one trace.
    pub key: String,
    /// How sentences name it: "MI300X (AMD)" across vendors, its file name otherwise.
    pub name: String,
    /// Sum of kernel, memcpy and memset durations, µs.
    pub gpu_time_us: f64,
    /// The busiest device's whole-trace timeline: its span, busy and idle µs (absent where
    /// the timeline was not computed, as in a share link made without it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub span_us: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub busy_us: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle_us: Option<f64>,
    /// What ran its kernels: its busy line's words ("CPU busy"); absent for a GPU.
    #[serde(default, skip_serializing_if = "Processor::is_gpu")]
    pub processor: Processor,
}

/// What a finding is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FindingKind {
    /// An op (with its input shapes) whose time differs most between the sides.
    OpGap,
    /// One side runs as one kernel what the other runs as several.
    FusionDifference,
    /// Fusion left on the table: kernels a rule set would fuse, and the time that saves.
    Opportunity,
    /// The GPU ran nothing.
    Idle,
    /// A kernel category whose time differs most between the sides.
    CategoryShift,
    /// One trace's op (with its input shapes) that takes the most GPU time.
    Op,
    /// One trace's category that takes the largest share of GPU time.
    Category,
    /// A rank the other ranks of a job waited for at the collectives it arrived last at.
    Straggler,
    /// The collective a job's ranks waited at longest.
    CollectiveWait,
    /// Communication no computation overlaps, on the rank that has most of it.
    ExposedCommunication,
    /// An op graph's fusion group that saves the most traffic.
    GroupSaving,
    /// An op graph's fusion group that moves the most after fusion.
    GroupTraffic,
}

/// Where a finding's evidence is: the view (the page's tab, the CLI's table) holding its rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Evidence {
    /// Kernel groups, fusion differences and the fusion left on the table.
    Fusion,
    /// Categories and the kernel mapping.
    Kernels,
    /// Where the time goes: the timeline, the op table and the gap between two traces.
    Time,
    /// A job's ranks: the ranks, the collectives matched across them, the stragglers.
    Ranks,
}

/// One finding: one sentence with its numbers, the time it explains, and where its evidence is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    pub kind: FindingKind,
    /// The time it explains, µs: what the findings are ranked by.
    pub time_us: f64,
    pub text: String,
    pub evidence: Evidence,
}

/// What one side of a pair adds to the comparison: its timeline and its fusion analysis,
/// where they were computed (a share link carries the fusion only).
#[derive(Debug, Clone, Copy, Default)]
pub struct SideFacts<'a> {
    pub timeline: Option<&'a Timeline>,
    pub fusion: Option<&'a TraceFusion>,
    /// The idle time between kernels by cause.
    pub waits: Option<&'a Waits>,
    /// What launching kernels cost the host.
    pub launch: Option<&'a LaunchCost>,
}

impl<'a> SideFacts<'a> {
    /// The facts a time report holds.
    pub fn of(time: &'a TraceTime) -> Self {
        SideFacts {
            timeline: time.timeline.as_ref(),
            fusion: time.fusion.as_ref(),
            waits: time.waits.as_ref(),
            launch: time.launch_cost.as_ref().map(|l| &l.whole),
        }
    }
}

/// Most findings of one kind (before ranking cuts the list to [`MAX_FINDINGS`]).
fn cap(kind: FindingKind) -> usize {
    match kind {
        FindingKind::OpGap | FindingKind::Op => 3,
        FindingKind::Opportunity | FindingKind::FusionDifference | FindingKind::Idle => 2,
        FindingKind::CategoryShift | FindingKind::Category => 1,
        FindingKind::Straggler => 2,
        FindingKind::CollectiveWait | FindingKind::ExposedCommunication => 1,
        FindingKind::GroupSaving | FindingKind::GroupTraffic => 3,
    }
}

/// Ranks candidates by the time they explain (largest first; equal times keep their order),
/// keeps at most a kind's cap of each kind and [`MAX_FINDINGS`] in all, and drops those that
/// explain no time (to the ns, as the JSON writes times).
pub fn rank(mut candidates: Vec<Finding>) -> Vec<Finding> {
    for f in &mut candidates {
        f.time_us = round3(f.time_us);
    }
    candidates.retain(|f| f.time_us.is_finite() && f.time_us > 0.0);
    candidates.sort_by(|a, b| b.time_us.total_cmp(&a.time_us));
    let mut taken: Vec<Finding> = Vec::new();
    for f in candidates {
        let same = taken.iter().filter(|t| t.kind == f.kind).count();
        if same < cap(f.kind) && taken.len() < MAX_FINDINGS {
            taken.push(f);
        }
    }
    taken
}

/// How sentences name a device: the chip the analysis used ("H100 SXM"), else the device
/// name the trace gives, with the vendor: "H100 SXM (NVIDIA)".
fn device_name(p: &PlatformEntry, chip: Option<&str>) -> String {
    let device = chip
        .map(str::to_string)
        .or_else(|| hardware::detect::detect_chip(&p.devices).ok().map(|d| d.chip.name))
        .or_else(|| p.devices.first().cloned());
    match (device, p.vendor) {
        (Some(d), Vendor::Unknown) => d,
        (Some(d), v) => format!("{d} ({v})"),
        (None, Vendor::Unknown) => "unknown device".to_string(),
        (None, v) => v.to_string(),
    }
}

/// The names of a pair's sides: their devices across vendors; their file names (or keys)
/// when both are one vendor's, where the devices may well be the same.
fn side_names(c: &Comparison, facts: &[SideFacts<'_>; 2]) -> [String; 2] {
    names_with_chips(c, [0, 1].map(|i| facts[i].fusion.and_then(|f| f.chip.as_deref())))
}

/// The names the overview gives a pair's sides ("MI300X (AMD)"), for views that have only the
/// comparison: each device is the one its name detects.
pub fn pair_side_names(c: &Comparison) -> [String; 2] {
    names_with_chips(c, [None, None])
}

fn names_with_chips(c: &Comparison, chips: [Option<&str>; 2]) -> [String; 2] {
    let chip = |i: usize| chips[i];
    let cross_vendor = c.platforms.len() == 2
        && c.platforms[0].vendor != c.platforms[1].vendor
        && c.platforms.iter().all(|p| p.vendor != Vendor::Unknown);
    [0, 1].map(|i| match c.platforms.get(i) {
        Some(p) if cross_vendor => device_name(p, chip(i)),
        Some(p) => p.file.clone().unwrap_or_else(|| p.key.clone()),
        None => ["first", "second"][i].to_string(),
    })
}

fn verdict_side(
    key: &str,
    name: &str,
    gpu_time_us: f64,
    timeline: Option<&Timeline>,
    processor: Processor,
) -> VerdictSide {
    VerdictSide {
        key: key.to_string(),
        name: name.to_string(),
        gpu_time_us,
        span_us: timeline.map(|t| t.total_us),
        busy_us: timeline.map(|t| t.busy_us),
        idle_us: timeline.map(|t| t.idle_us),
        processor,
    }
}

/// "45.65 ms" with, where the timeline is known, "; busy 45.43 ms, idle 12.10 ms (21 %) of a
/// 57.53 ms span".
fn busy_clause(s: &VerdictSide, processor: Processor) -> String {
    match (s.span_us, s.busy_us, s.idle_us) {
        (Some(span), Some(busy), Some(idle)) if span > 0.0 => format!(
            "{processor} busy {}, idle {} ({:.0} %) of a {} span",
            format_duration_us(busy),
            format_duration_us(idle),
            100.0 * idle / span,
            format_duration_us(span)
        ),
        _ => String::new(),
    }
}

/// The verdict of a pair: both GPU times, which is faster and by how much (as the gap's
/// headline says it, from the platforms' GPU times, so that a pair without a gap has it too).
fn pair_verdict(c: &Comparison, names: &[String; 2], facts: &[SideFacts<'_>; 2]) -> Verdict {
    let sides: Vec<VerdictSide> = c
        .platforms
        .iter()
        .zip(names)
        .zip(facts)
        .map(|((p, n), f)| verdict_side(&p.key, n, p.gpu_time_us, f.timeline, p.processor()))
        .collect();
    let [Some(a), Some(b)] = [sides.first(), sides.get(1)] else {
        return Verdict { text: "The comparison has fewer than two sides".to_string(), sides };
    };
    let processor = c.processor();
    let times = format!(
        "{} takes {} of {processor} time, {} {}",
        a.name,
        format_duration_us(a.gpu_time_us),
        b.name,
        format_duration_us(b.gpu_time_us)
    );
    let (fast, slow) = if a.gpu_time_us <= b.gpu_time_us { (a, b) } else { (b, a) };
    let text = if fast.gpu_time_us == slow.gpu_time_us {
        format!("{times}: the same")
    } else if fast.gpu_time_us > 0.0 {
        format!(
            "{times}: {} is {:.2}× faster ({} less)",
            fast.name,
            slow.gpu_time_us / fast.gpu_time_us,
            format_duration_us(slow.gpu_time_us - fast.gpu_time_us)
        )
    } else {
        format!("{times}: {} ran no {processor} work", fast.name)
    };
    Verdict { text, sides }
}

/// The op's input shapes as the gap and op tables print them (`[[8944,1024],[1024,2816]]`).
fn dims(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::Null => String::new(),
        // No tensor among the inputs (`record_param_comms [[],[],[],[],[],[],[]]`): nothing to say.
        serde_json::Value::Array(a) if a.iter().all(|x| x.as_array().is_some_and(Vec::is_empty)) => String::new(),
        other => format!(" {}", units::ellipsize(&other.to_string(), 60)),
    }
}

/// The main kernel of an op on one side, from the kernel mapping, shortened.
fn main_kernel(c: &Comparison, op: &str, key: &str) -> Option<String> {
    let row = c.op_mapping.iter().find(|r| r.op == op)?;
    let k = row.sides.get(key)?.stats.kernels.first()?;
    Some(readable_name(&k.name, KERNEL_WIDTH))
}

fn op_gap(c: &Comparison, row: &GapRow, keys: [&str; 2], names: &[String; 2]) -> Finding {
    let side = |i: usize| row.sides.get(keys[i]).and_then(|s| s.as_ref());
    let what = format!("{}{}", row.op, dims(&row.input_dims));
    let text = match (side(0), side(1)) {
        (Some(a), Some(b)) => {
            let (slow, fast) = if a.kernel_time_us >= b.kernel_time_us { (0, 1) } else { (1, 0) };
            let t = [a.kernel_time_us, b.kernel_time_us];
            let ratio = if t[fast] > 0.0 { format!(", {:.2}×", t[slow] / t[fast]) } else { String::new() };
            let kernels = match (main_kernel(c, &row.op, keys[0]), main_kernel(c, &row.op, keys[1])) {
                (Some(ka), Some(kb)) if ka != kb => format!("; kernels {ka} vs {kb}"),
                (Some(k), Some(_)) => format!("; kernel {k} on both"),
                _ => String::new(),
            };
            format!(
                "{what} takes {} on {} and {} on {}: {} more on {}{ratio}{kernels}",
                format_duration_us(t[0]),
                names[0],
                format_duration_us(t[1]),
                names[1],
                format_duration_us(t[slow] - t[fast]),
                names[slow],
            )
        }
        (Some(s), None) | (None, Some(s)) => {
            let only = if side(0).is_some() { 0 } else { 1 };
            format!(
                "{what} runs only on {}: {} in {}",
                names[only],
                format_duration_us(s.kernel_time_us),
                plural(s.calls, "call", "calls")
            )
        }
        (None, None) => what,
    };
    Finding { kind: FindingKind::OpGap, time_us: row.difference_us.abs(), text, evidence: Evidence::Time }
}

fn fusion_differences(c: &Comparison, keys: [&str; 2], names: &[String; 2]) -> Vec<Finding> {
    c.fusion_differences
        .iter()
        .filter_map(|d| {
            let fused = keys.iter().position(|k| *k == d.fused_side)?;
            let other = 1 - fused;
            let t = |i: usize| d.time_us.get(keys[i]).copied().unwrap_or(0.0);
            let components: Vec<String> = d.components.iter().map(|k| k.to_string()).collect();
            let unfused: Vec<String> = d.unfused_kernels.iter().map(|k| readable_name(k, KERNEL_WIDTH)).collect();
            let cost = t(other) - t(fused);
            let who = if cost >= 0.0 { &names[other] } else { &names[fused] };
            let text = format!(
                "{} runs {} as one kernel ({}) where {} runs {} ({}); {} times: {} vs {}, {} more on {}",
                names[fused],
                components.join(" + "),
                readable_name(&d.fused_kernel, KERNEL_WIDTH),
                names[other],
                if d.unfused_kernels.len() == 1 {
                    "it apart".to_string()
                } else {
                    format!("{} kernels", d.unfused_kernels.len())
                },
                unfused.join(", "),
                group_digits(d.count),
                format_duration_us(t(fused)),
                format_duration_us(t(other)),
                format_duration_us(cost.abs()),
                who,
            );
            Some(Finding { kind: FindingKind::FusionDifference, time_us: cost.abs(), text, evidence: Evidence::Fusion })
        })
        .collect()
}

/// The opportunities of one side that save most (at most its kind's cap), each priced at the chip's
/// bandwidth, plus the host wait before the kernels it would no longer launch; those without a
/// chip explain no time and are left out.
fn opportunities(fusion: &TraceFusion, on: Option<&str>) -> Vec<Finding> {
    let chip = fusion.chip.as_deref().unwrap_or("the chip");
    fusion
        .opportunities
        .iter()
        .filter_map(|o| {
            let saved = o.saved_us?;
            let per_step = o
                .per_step
                .as_ref()
                .filter(|p| p.steps > 1)
                .and_then(|p| p.saved_us_per_step)
                .map(|s| format!(", {} per step", format_duration_us(s)))
                .unwrap_or_default();
            let place = on.map(|n| format!(" on {n}")).unwrap_or_default();
            let ops = o.ops.iter().map(|op| op.strip_prefix("aten::").unwrap_or(op)).collect::<Vec<_>>().join(" → ");
            let traffic = format!(
                "{} per call × {} no longer written and read back",
                format_bytes(o.saved_bytes_per_call),
                plural(o.calls, "call", "calls")
            );
            let (time_us, text) = if o.launches_removed == 0 {
                let text = format!(
                    "Fusing {ops} ({}){place} would save {}{per_step}: {traffic}, at {chip}'s bandwidth",
                    o.rule,
                    format_duration_us(saved),
                );
                (saved, text)
            } else {
                let total = saved + o.host_wait_us;
                let wait = if o.host_wait_us > 0.0 {
                    format!("{} of host wait before their kernels", format_duration_us(o.host_wait_us))
                } else {
                    "the stream never waited for them".to_string()
                };
                let text = format!(
                    "Fusing {ops} ({}){place} would save {}: {traffic} ({} at {chip}'s bandwidth{per_step}), and {} \
                     launch calls fewer ({} of CPU; {wait})",
                    o.rule,
                    format_duration_us(total),
                    format_duration_us(saved),
                    group_digits(o.launches_removed),
                    format_duration_us(o.launch_cpu_us),
                );
                (total, text)
            };
            Some(Finding { kind: FindingKind::Opportunity, time_us, text, evidence: Evidence::Fusion })
        })
        .take(cap(FindingKind::Opportunity))
        .collect()
}

/// What idle time is on `processor`: on a CPU, the time no compiled kernel ran (between them
/// the CPU runs library calls and Python, which are no kernels).
fn idle_means(processor: Processor) -> &'static str {
    match processor {
        Processor::Gpu => "no kernel or copy ran",
        Processor::Cpu => "no compiled kernel ran (the runtime, library calls and Python are not kernels)",
    }
}

/// The GPU's idle time, why its streams waited between kernels and what launching cost the
/// host, where those are known.
fn idle(
    timeline: &Timeline,
    waits: Option<&Waits>,
    launch: Option<&LaunchCost>,
    name: Option<&str>,
) -> Option<Finding> {
    (timeline.total_us > 0.0 && timeline.idle_us > 0.0).then(|| {
        let processor = timeline.processor();
        let whose = name.map(|n| format!("{n}'s {processor}")).unwrap_or_else(|| format!("The {processor}"));
        let why = waits.and_then(|w| {
            let split = w.total().split_text()?;
            let between = format_duration_us(w.total().total_us());
            Some(match w.streams.len() {
                1 => format!("; its stream's gaps between kernels ({between}) are {split}"),
                n => format!("; its streams' gaps between kernels ({between} summed over {n} streams) are {split}"),
            })
        });
        let why = why.unwrap_or_default() + &launch.map(launch_clause).unwrap_or_default();
        // A CPU run's "streams" wait on no other stream, and launch nothing: no why.
        let why = if processor.is_gpu() { why } else { String::new() };
        let what = idle_means(processor);
        Finding {
            kind: FindingKind::Idle,
            time_us: timeline.idle_us,
            text: format!(
                "{whose} is idle {} of the trace's {} ({:.1} %): {what}{why}",
                format_duration_us(timeline.idle_us),
                format_duration_us(timeline.total_us),
                100.0 * timeline.idle_us / timeline.total_us
            ),
            evidence: Evidence::Time,
        }
    })
}

/// What launching costs the host, as a clause of the idle finding: the kernels of the
/// host-bound stretches and their idle time, a launch call's CPU time, and the kernels that ran
/// for less time than their launch took; empty without host-bound stretches.
fn launch_clause(launch: &LaunchCost) -> String {
    let hb = &launch.host_bound;
    if hb.stretches == 0 {
        return String::new();
    }
    let stretches = plural(hb.stretches, "stretch", "stretches");
    let small = match launch.small.kernels {
        0 => String::new(),
        1 => ", and 1 kernel ran for less time than its launch call took".to_string(),
        n => format!(", and {} kernels ran for less time than their launch call took", group_digits(n)),
    };
    format!(
        "; {} ran in {stretches} where each waited for its launch ({} idle), a launch call takes {} of CPU{small}",
        plural(hb.kernels, "kernel", "kernels"),
        format_duration_us(hb.idle_us),
        format_duration_us(launch.per_launch_us),
    )
}

fn category_shift(c: &Comparison, keys: [&str; 2], names: &[String; 2]) -> Option<Finding> {
    let row = c.categories.iter().max_by(|a, b| {
        let d = |r: &crate::compare::CategoryRow| {
            let t = |k: &str| r.sides.get(k).map_or(0.0, |s| s.time_us);
            (t(keys[0]) - t(keys[1])).abs()
        };
        d(a).total_cmp(&d(b))
    })?;
    let side = |i: usize| row.sides.get(keys[i]);
    let (t, share) = (|i: usize| side(i).map_or(0.0, |s| s.time_us), |i: usize| side(i).map_or(0.0, |s| s.share_pct));
    let ratio = row.time_ratio.map(|r| format!(" ({r:.2}×)")).unwrap_or_default();
    let text = format!(
        "{} kernels take {} ({:.1} % of {} time) on {} and {} ({:.1} %) on {}{ratio}",
        row.category,
        format_duration_us(t(0)),
        share(0),
        c.processor(),
        names[0],
        format_duration_us(t(1)),
        share(1),
        names[1],
    );
    Some(Finding { kind: FindingKind::CategoryShift, time_us: (t(0) - t(1)).abs(), text, evidence: Evidence::Kernels })
}

/// The overview of a pair: the comparison, the gap between its op tables (where it was
/// computed), and each side's facts, all in the comparison's order.
pub fn pair_overview(c: &Comparison, gap: Option<&Gap>, facts: [SideFacts<'_>; 2]) -> Overview {
    let names = side_names(c, &facts);
    let keys = [0, 1].map(|i| c.platforms.get(i).map_or("", |p| p.key.as_str()));
    let verdict = pair_verdict(c, &names, &facts);
    let rows = gap.map_or(&[][..], |g| &g.rows[..]);
    let mut candidates: Vec<Finding> =
        rows.iter().take(cap(FindingKind::OpGap)).map(|r| op_gap(c, r, keys, &names)).collect();
    candidates.extend(fusion_differences(c, keys, &names));
    for (f, n) in facts.iter().zip(&names) {
        if let Some(fusion) = f.fusion {
            candidates.extend(opportunities(fusion, Some(n)));
        }
        if let Some(t) = f.timeline {
            candidates.extend(idle(t, f.waits, f.launch, Some(n)));
        }
    }
    candidates.extend(category_shift(c, keys, &names));
    Overview { verdict, findings: rank(candidates) }
}

/// The lines after a pair's verdict for the page and the text output: each side's busy and
/// idle time (one trace's verdict says them itself).
pub fn busy_lines(v: &Verdict) -> Vec<String> {
    if v.sides.len() < 2 {
        return Vec::new();
    }
    v.sides
        .iter()
        .filter_map(|s| {
            let b = busy_clause(s, s.processor);
            (!b.is_empty()).then(|| format!("{}: {b}", s.name))
        })
        .collect()
}

pub mod as_value;
pub mod graph;
pub mod ranks;
pub mod single;

#[cfg(test)]
mod tests;
