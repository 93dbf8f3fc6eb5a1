//! The fusion left on the table: runs of consecutive kernels that a rule set would make one
//! kernel, the intermediate bytes that would no longer go through device memory, and the time
//! that saves at the chip's bandwidth (`docs/trace-fusion.md`, "Opportunities").

use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

use super::flow::{handoff, same_stream, streams};
use super::groups::{Grouping, KernelGroup};
use super::kind::Kind;
use super::rules::{RuleSet, Run};
use crate::structure::Structure;
use crate::summary::round3;
use calib::{matching_pattern, CalibrationProfile, Verdict};
use fusion::OpType;
use hardware::Chip;

/// Where an opportunity falls in the trace's structure (serving traces, eager passes: the
/// steps `structure` found on its main stream).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PerStep {
    /// Steps holding at least one of its runs.
    pub steps: u64,
    pub calls_per_step: f64,
    pub saved_us_per_step: Option<f64>,
    /// Decoder layers found in those steps, and its runs per layer (`None` without layers).
    pub layers: u64,
    pub calls_per_layer: Option<f64>,
}

/// What a calibration profile measured for an opportunity's pattern.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Measured {
    pub pattern: String,
    pub speedup: f64,
    pub verdict: Verdict,
}

/// One opportunity: a sequence of kernel groups that ran back to back and that the rules fuse.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Opportunity {
    /// The rule set and the kinds it fuses (`inductor: matmul + elementwise`).
    pub rule: String,
    pub kernels: Vec<String>,
    /// The launching op of each kernel (`?` where none).
    pub ops: Vec<String>,
    pub kinds: Vec<Kind>,
    /// Times the sequence ran.
    pub calls: u64,
    /// Intermediate bytes one call no longer writes and reads back.
    pub saved_bytes_per_call: u64,
    /// The measured time of the sequence's kernels over all calls, µs.
    pub kernels_time_us: f64,
    /// Launch calls fusing would remove over all calls (every kernel after the first, where the
    /// trace records its launch call), their CPU time, and the host wait before those kernels
    /// (their launch call started after the kernel before them had ended, so the stream sat idle
    /// waiting for the host), µs: what one launch in place of several gives back, beside bytes.
    pub launches_removed: u64,
    pub launch_cpu_us: f64,
    pub host_wait_us: f64,
    /// `calls × saved_bytes_per_call` at the chip's bandwidth, at most `kernels_time_us`; `None`
    /// without a chip.
    pub saved_us: Option<f64>,
    /// The bandwidth figure was above the kernels' measured time and was cut to it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub capped: bool,
    /// Per step and layer, where the structure is known and its runs are on the structure's
    /// stream.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per_step: Option<PerStep>,
    /// The calibration profile's measured speedup for this pattern, if one matches.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measured: Option<Measured>,
    pub evidence: String,
}

/// A run in the making: instance positions and the bytes of each hand-off.
struct Growing {
    at: Vec<usize>,
    handoffs: Vec<u64>,
    run: Run,
    /// Every hand-off came from an execution trace.
    exact: bool,
}

/// Per distinct group sequence: calls, summed kernel time, one call's hand-offs.
#[derive(Default)]
struct Acc {
    calls: u64,
    time: f64,
    handoffs: Vec<u64>,
    first: usize,
    exact: bool,
    /// Steps (indexes into the structure's) its runs fell in, and its runs on the structure's
    /// stream.
    steps: rustc_hash::FxHashSet<usize>,
    on_stream: u64,
    launches: u64,
    launch_cpu: f64,
    host_wait: f64,
}

/// The opportunities of a trace under `rules`, longest saved time first (bytes when no chip).
pub(crate) fn opportunities(
    g: &Grouping,
    rules: &RuleSet,
    chip: Option<&Chip>,
    calibration: Option<&CalibrationProfile>,
    structure: Option<&Structure>,
) -> Vec<Opportunity> {
    let mut found: FxHashMap<Vec<usize>, Acc> = FxHashMap::default();
    let mut order = 0usize;
    let mut finish = |grow: Growing, found: &mut FxHashMap<Vec<usize>, Acc>| {
        if !rules.accepts(&grow.run.kinds) {
            return;
        }
        let key: Vec<usize> = grow.at.iter().map(|&i| g.instances[i].group).collect();
        let time: f64 = grow.at.iter().map(|&i| g.instances[i].dur).sum();
        let acc = found.entry(key).or_insert_with(|| {
            order += 1;
            Acc { handoffs: grow.handoffs.clone(), first: order, exact: true, ..Acc::default() }
        });
        acc.exact &= grow.exact;
        acc.calls = acc.calls.saturating_add(1);
        acc.time += time;
        for pair in grow.at.windows(2) {
            let (prev, next) = (&g.instances[pair[0]], &g.instances[pair[1]]);
            let Some((call, cpu)) = next.launch else { continue };
            acc.launches = acc.launches.saturating_add(1);
            acc.launch_cpu += cpu;
            let idle_from = prev.ts + prev.dur;
            if crate::time::waits::waited_on_host(idle_from, call, next.ts) {
                acc.host_wait += next.ts - idle_from;
            }
        }
        let first = &g.instances[grow.at[0]];
        if let Some(s) = structure.filter(|s| s.device == first.device && Some(s.stream) == first.stream) {
            acc.on_stream += 1;
            // Steps are in time order; the last starting at or before the run's first kernel.
            let at = s.steps.partition_point(|st| st.start_us <= first.ts + 1e-3);
            if let Some(i) = at.checked_sub(1).filter(|&i| first.ts <= s.steps[i].end_us + 1e-3) {
                acc.steps.insert(i);
            }
        }
    };
    for stream in streams(&g.instances) {
        let mut grow: Option<Growing> = None;
        for &i in &stream {
            let inst = &g.instances[i];
            let group = &g.groups[inst.group];
            let flow = &g.flow[inst.group];
            let usable = group.bytes_known();
            if let Some(cur) = grow.as_mut() {
                let &last = cur.at.last().expect("a run holds a kernel");
                let prev = &g.instances[last];
                let (handoff, exact) =
                    if usable && same_stream(prev, inst) { handoff(g, prev, inst) } else { (None, false) };
                if let Some(bytes) = handoff {
                    if let Some(rule) = rules.joins(&cur.run, group.kind, flow.space) {
                        cur.at.push(i);
                        cur.handoffs.push(bytes);
                        cur.exact &= exact;
                        cur.run.kinds.push(group.kind);
                        cur.run.closed = rule.closes;
                        continue;
                    }
                    // A reduction that a product's epilogue keeps out: the product alone, and the
                    // epilogue with the reduction as a run of their own, when the rules allow it.
                    if let Some(rest) = split_epilogue(rules, cur, g, group.kind, flow.space) {
                        let mut rest = rest;
                        let closes = rules.joins(&rest.run, group.kind, flow.space).is_some_and(|r| r.closes);
                        rest.at.push(i);
                        rest.handoffs.push(bytes);
                        rest.exact &= exact;
                        rest.run.kinds.push(group.kind);
                        rest.run.closed = closes;
                        grow = Some(rest);
                        continue;
                    }
                }
                if let Some(done) = grow.take() {
                    finish(done, &mut found);
                }
            }
            if usable && rules.starts(group.kind) {
                grow = Some(Growing {
                    at: vec![i],
                    handoffs: Vec::new(),
                    run: Run { kinds: vec![group.kind], space: flow.space, closed: false },
                    exact: true,
                });
            }
        }
        if let Some(done) = grow.take() {
            finish(done, &mut found);
        }
    }
    let mut out: Vec<(usize, Opportunity)> = found
        .into_iter()
        .filter_map(|(key, acc)| {
            let groups: Vec<&KernelGroup> = key.iter().map(|&k| &g.groups[k]).collect();
            opportunity(rules, &groups, &acc, chip, calibration, structure).map(|o| (acc.first, o))
        })
        .collect();
    out.sort_by(|(fa, a), (fb, b)| {
        let saved = |o: &Opportunity| o.saved_us.unwrap_or(0.0);
        let bytes = |o: &Opportunity| o.saved_bytes_per_call.saturating_mul(o.calls);
        saved(b).total_cmp(&saved(a)).then(bytes(b).cmp(&bytes(a))).then(fa.cmp(fb))
    });
    out.into_iter().map(|(_, o)| o).collect()
}

/// With a rule set that prefers reductions to epilogues: when `next` (a reduction) may not join
/// a run that starts with a product, but the run without its product, started afresh at the
/// product's first epilogue kernel, takes every kernel of the epilogue and then `next`, that
/// shorter run is returned (the product, left alone, is no opportunity). Inductor fuses pointwise
/// work into the reduction that follows it rather than into a GEMM's epilogue.
fn split_epilogue(rules: &RuleSet, cur: &Growing, g: &Grouping, next: Kind, space: Option<u64>) -> Option<Growing> {
    let reduction = matches!(next, Kind::Reduction | Kind::Norm | Kind::Softmax);
    let product = matches!(cur.run.kinds.first(), Some(Kind::Matmul | Kind::Attention));
    if !rules.prefer_reductions || !reduction || !product || cur.at.len() < 2 || !rules.starts(cur.run.kinds[1]) {
        return None;
    }
    let space_of = |at: usize| g.flow[g.instances[at].group].space;
    let mut run = Run { kinds: vec![cur.run.kinds[1]], space: space_of(cur.at[1]), closed: false };
    for (&k, &at) in cur.run.kinds[2..].iter().zip(&cur.at[2..]) {
        let rule = rules.joins(&run, k, space_of(at))?;
        run.closed = rule.closes;
        run.kinds.push(k);
    }
    rules.joins(&run, next, space)?;
    Some(Growing { at: cur.at[1..].to_vec(), handoffs: cur.handoffs[1..].to_vec(), run, exact: cur.exact })
}

/// The opportunity of one distinct sequence; `None` when its savings do not fit in 64 bits.
fn opportunity(
    rules: &RuleSet,
    groups: &[&KernelGroup],
    acc: &Acc,
    chip: Option<&Chip>,
    calibration: Option<&CalibrationProfile>,
    structure: Option<&Structure>,
) -> Option<Opportunity> {
    // Each hand-off is written by one kernel and read back by the next: twice its bytes.
    let per_call = acc.handoffs.iter().try_fold(0u64, |s, &b| s.checked_add(b.checked_mul(2)?))?;
    let total = per_call.checked_mul(acc.calls)?;
    let kinds: Vec<Kind> = groups.iter().map(|g| g.kind).collect();
    let time = round3(acc.time);
    let (saved_us, capped) = saved_time(total, time, chip);
    let measured = calibration.and_then(|p| {
        let types: Vec<OpType> = kinds.iter().filter_map(|k| k.op_type()).collect();
        matching_pattern(p, &types).map(|m| Measured {
            pattern: m.name.clone(),
            speedup: m.speedup_factor,
            verdict: Verdict::of_speedup(m.speedup_factor),
        })
    });
    let per_step = structure.filter(|_| !acc.steps.is_empty()).map(|s| {
        let steps = acc.steps.len() as u64;
        let layers: u64 = acc.steps.iter().map(|&i| s.steps[i].layers as u64).sum();
        let calls = acc.on_stream as f64;
        PerStep {
            steps,
            calls_per_step: round3(calls / steps as f64),
            saved_us_per_step: saved_us.map(|t| round3(t * calls / acc.calls as f64 / steps as f64)),
            layers,
            calls_per_layer: (layers > 0).then(|| round3(calls / layers as f64)),
        }
    });
    let sizes: Vec<String> = acc.handoffs.iter().map(|&b| units::format_bytes(b)).collect();
    Some(Opportunity {
        rule: format!("{}: {}", rules.name, kinds_text(&kinds)),
        kernels: groups.iter().map(|g| g.kernel.clone()).collect(),
        ops: groups.iter().map(|g| g.launched_by.clone().unwrap_or_else(|| "?".to_string())).collect(),
        kinds,
        calls: acc.calls,
        saved_bytes_per_call: per_call,
        kernels_time_us: time,
        launches_removed: acc.launches,
        launch_cpu_us: round3(acc.launch_cpu),
        host_wait_us: round3(acc.host_wait),
        saved_us,
        capped,
        per_step,
        measured,
        evidence: format!(
            "ran back to back on one stream {} time(s); each kernel reads {} the one before wrote ({}){}",
            acc.calls,
            if acc.exact { "the tensor" } else { "a tensor of the size" },
            sizes.join(", "),
            if acc.exact { ", by tensor id from the execution trace" } else { ", inferred from recorded shapes" }
        ),
    })
}

/// `matmul + elementwise ×3`: the kinds of a run, repeats counted.
pub fn kinds_text(kinds: &[Kind]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < kinds.len() {
        let n = kinds[i..].iter().take_while(|k| **k == kinds[i]).count();
        parts.push(if n > 1 { format!("{} ×{n}", kinds[i].id()) } else { kinds[i].id().to_string() });
        i += n;
    }
    parts.join(" + ")
}

/// `bytes` no longer moved, as time at `chip`'s bandwidth, at most the kernels' measured `time`
/// (µs); whether it was cut to it. `None` without a chip.
pub(crate) fn saved_time(bytes: u64, time: f64, chip: Option<&Chip>) -> (Option<f64>, bool) {
    match chip {
        Some(c) if c.hbm_bandwidth > 0.0 => {
            let at_bandwidth = bytes as f64 / c.hbm_bandwidth * 1e6;
            if at_bandwidth > time {
                (Some(time), true)
            } else {
                (Some(round3(at_bandwidth)), false)
            }
        }
        _ => (None, false),
    }
}
