//! What launching kernels costs the host, and where the GPU ran only as fast as the CPU
//! launched (`docs/trace-analysis.md`, "Launch cost").
//!
//! Every kernel whose launch call the trace records (a runtime call with the same correlation
//! id) is a *launched* kernel; a graph replay's nodes are not (one call launches them all), and
//! are left out of the per-kernel figures. For those kernels:
//! - **CPU time per launch**: the calls' own durations, each call once;
//! - **launch-to-start latency**: from the call's return to the kernel's start (median and p90;
//!   HTA's `launch_delay`), 0 where the kernel started before the call returned;
//! - **host-bound stretches**: runs of at least [`HOST_BOUND_RUN`] kernels on one stream, each
//!   launched after the stream had gone idle (the same test as a host wait, `super::waits`), so
//!   the stream ran only as fast as the host issued work; the stretch spans from the end of
//!   the kernel before it to the end of its last kernel;
//! - **kernels smaller than their launch**: kernels that ran for less time than their launch
//!   call took on the CPU, which no GPU can hide unless launches overlap the work before them;
//! - **what a graph would remove**: every gap before a launched kernel whose call started after
//!   its stream went idle (in stretches or not), where the device ran nothing on any stream.
//!   Captured in a CUDA/HIP graph, the kernels are issued by the device: in the three
//!   graph-replayed traces of the test data, each node of a graph starts a median 1 ns (p90
//!   2 ns) after the node before it ends, so those gaps go, and the step's launch calls become
//!   one. Only time the device ran nothing and had nothing queued counts (`given_back.rs`).
//!
//! One sort per stream, of the calls and of each device's events, a selection for the
//! percentiles: O(n log n) in the kernels.

pub mod as_value;
mod given_back;
#[cfg(test)]
mod tests;

use std::cell::OnceCell;
use std::collections::BTreeMap;

use rustc_hash::FxHashMap;

use crate::summary::round3;
use crate::time::timeline::DeviceBusy;
use given_back::{given_back, queued_spans, HostGap, Queued};
use trace::intern::NameId;
use trace::Trace;

/// A host-bound stretch is at least this many kernels in a row, each launched after its stream
/// went idle: one or two such kernels are a pause, a run of them is a host that cannot keep up.
pub const HOST_BOUND_RUN: usize = 3;

/// How many kernel names [`SmallKernels::names`] keeps, those with the most calls first.
pub const SMALL_KERNEL_NAMES: usize = 3;

/// The launch cost of a trace (or one step of it).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct LaunchCost {
    /// Launch calls that launched at least one kernel (each call once).
    pub calls: u64,
    /// Kernels whose launch call the trace records, graph nodes left out.
    pub launched_kernels: u64,
    /// CPU time in those calls, µs, and per call.
    pub launch_cpu_us: f64,
    pub per_launch_us: f64,
    /// A kernel's start minus its launch call's end, at least 0, µs: median and 90th
    /// percentile (nearest rank); 0 when no kernel was launched.
    pub latency_median_us: f64,
    pub latency_p90_us: f64,
    pub host_bound: HostBound,
    pub small: SmallKernels,
    /// The host wait before launched kernels, µs: what capturing the work in a CUDA/HIP graph
    /// would give back (with the calls' CPU time, `launch_cpu_us`, but one call).
    pub graph_saving_us: f64,
}

/// The host-bound stretches of every stream.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct HostBound {
    pub stretches: u64,
    pub kernels: u64,
    /// Their summed span, µs, and the idle time inside it (the gaps the host left).
    pub span_us: f64,
    pub idle_us: f64,
    /// The stretch with the most idle time.
    pub longest: Option<Stretch>,
}

/// One host-bound stretch.
#[derive(Debug, Clone, PartialEq)]
pub struct Stretch {
    pub device: i64,
    pub stream: i64,
    /// Where it starts (the end of the kernel before it), µs on the trace's clock.
    pub start_us: f64,
    pub kernels: u64,
    pub span_us: f64,
    pub idle_us: f64,
}

/// Kernels that ran for less time than their launch call took.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SmallKernels {
    pub kernels: u64,
    /// Their summed run time and their calls' summed CPU time, µs.
    pub kernel_us: f64,
    pub launch_us: f64,
    /// The names with the most such kernels, with their counts (at most [`SMALL_KERNEL_NAMES`]).
    pub names: Vec<(String, u64)>,
}

/// A step's launch cost: the kernels that started inside its window.
#[derive(Debug, Clone, PartialEq)]
pub struct StepLaunchCost {
    /// The window, named as the timeline's steps are (`ProfilerStep#6`).
    pub window: String,
    pub cost: LaunchCost,
}

/// The launch cost of the whole trace and of each step.
#[derive(Debug, Clone, PartialEq)]
pub struct LaunchReport {
    pub whole: LaunchCost,
    /// One per `ProfilerStep` window (`[]` when the trace has none).
    pub steps: Vec<StepLaunchCost>,
}

/// The launch cost of the whole trace, and of each step window `(name, start, end)`, `busy`
/// being the trace's devices' busy time; `None` when the trace records no launch call of any
/// kernel (a GPU-only trace, a graph replay).
pub fn launch_cost(trace: &Trace, windows: &[(String, f64, f64)], busy: DeviceBusy) -> Option<LaunchReport> {
    let launched = launched_kernels(trace);
    if launched.is_empty() {
        return None;
    }
    // Each device's spans, made once and only where some window has a host wait to weigh.
    let queued = OnceCell::new();
    let cost_of = |kernels: &[Launched]| cost_of(trace, kernels, &busy, &queued);
    let whole = cost_of(&launched);
    // The kernels come in start order (the trace keeps them so): each window is a slice.
    let steps = windows
        .iter()
        .map(|(name, start, end)| {
            let (from, to) =
                (launched.partition_point(|k| k.start < *start), launched.partition_point(|k| k.start < *end));
            StepLaunchCost { window: name.clone(), cost: cost_of(&launched[from..to.max(from)]) }
        })
        .collect();
    Some(LaunchReport { whole, steps })
}

/// One kernel with what its launch call says about it.
#[derive(Debug, Clone, Copy)]
struct Launched {
    name: NameId,
    device: i64,
    stream: i64,
    start: f64,
    end: f64,
    correlation: u64,
    call_start: f64,
    call_dur: f64,
}

/// Every kernel launched by a recorded call, graph nodes left out, in the trace's order.
fn launched_kernels(trace: &Trace) -> Vec<Launched> {
    trace
        .kernels
        .iter()
        .filter(|k| !k.graph_node)
        .filter_map(|k| {
            let c = k.correlation?;
            let call = trace.launches.get(&c)?;
            Some(Launched {
                name: k.name,
                device: k.device,
                stream: k.stream,
                start: k.ts,
                end: k.ts + k.dur,
                correlation: c,
                call_start: call.ts,
                call_dur: call.dur,
            })
        })
        .collect()
}

fn cost_of(
    trace: &Trace,
    kernels: &[Launched],
    busy: &DeviceBusy,
    queued: &OnceCell<BTreeMap<i64, Vec<Queued>>>,
) -> LaunchCost {
    if kernels.is_empty() {
        return LaunchCost::default();
    }
    // Each call once: a call that launched several kernels costs the host once.
    let mut calls: Vec<(u64, f64)> = kernels.iter().map(|k| (k.correlation, k.call_dur)).collect();
    calls.sort_unstable_by_key(|c| c.0);
    calls.dedup_by_key(|c| c.0);
    let launch_cpu_us: f64 = calls.iter().map(|c| c.1).sum();
    let (host_bound, gaps) = host_bound(kernels, &copies_by_stream(trace));
    let host_wait =
        if gaps.is_empty() { 0.0 } else { given_back(&gaps, busy, queued.get_or_init(|| queued_spans(trace))) };
    let mut latencies: Vec<f64> = kernels.iter().map(|k| (k.start - (k.call_start + k.call_dur)).max(0.0)).collect();
    LaunchCost {
        calls: calls.len() as u64,
        launched_kernels: kernels.len() as u64,
        launch_cpu_us: round3(launch_cpu_us),
        per_launch_us: round3(launch_cpu_us / calls.len() as f64),
        latency_median_us: round3(nearest_rank(&mut latencies, 50.0)),
        latency_p90_us: round3(nearest_rank(&mut latencies, 90.0)),
        host_bound,
        small: small_kernels(trace, kernels),
        graph_saving_us: round3(host_wait),
    }
}

/// The `pct` percentile of `values` by nearest rank (they are reordered: a selection, not a
/// sort); 0 for none.
fn nearest_rank(values: &mut [f64], pct: f64) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    let rank = ((pct / 100.0) * values.len() as f64).ceil() as usize;
    *values.select_nth_unstable_by(rank.clamp(1, values.len()) - 1, f64::total_cmp).1
}

/// A copy or set on a stream: its start and end, and its launch call's start where recorded.
struct Copy {
    start: f64,
    end: f64,
    /// Its launch call's start and end, where recorded.
    call: Option<(f64, f64)>,
}

/// The copies and sets of each stream that records them, in start order: the stream is busy
/// with them, and waits on the host before one as before a kernel ([`super::waits`]).
fn copies_by_stream(trace: &Trace) -> BTreeMap<(i64, i64), Vec<Copy>> {
    let mut by_stream: BTreeMap<(i64, i64), Vec<Copy>> = BTreeMap::new();
    for t in &trace.transfers {
        if let Some(stream) = t.stream {
            let call = t.correlation.and_then(|c| trace.launches.get(&c)).map(|l| (l.ts, l.ts + l.dur));
            by_stream.entry((t.device, stream)).or_default().push(Copy { start: t.ts, end: t.ts + t.dur, call });
        }
    }
    for list in by_stream.values_mut() {
        list.sort_by(|a, b| a.start.total_cmp(&b.start));
    }
    by_stream
}

/// The host-bound stretches of every stream, and the host-wait gaps before every launched
/// kernel and every copy between them.
fn host_bound(kernels: &[Launched], copies: &BTreeMap<(i64, i64), Vec<Copy>>) -> (HostBound, Vec<HostGap>) {
    let mut by_stream: BTreeMap<(i64, i64), Vec<&Launched>> = BTreeMap::new();
    for k in kernels {
        by_stream.entry((k.device, k.stream)).or_default().push(k);
    }
    let mut all = HostBound::default();
    let mut gaps: Vec<HostGap> = Vec::new();
    for ((device, stream), mut list) in by_stream {
        list.sort_by(|a, b| a.start.total_cmp(&b.start));
        let (runs, waited) = stretches(&list, copies.get(&(device, stream)).map_or(&[][..], Vec::as_slice));
        gaps.extend(waited.into_iter().map(|(from, submitted, to)| HostGap { device, stream, from, submitted, to }));
        for s in runs {
            let stretch = Stretch { device, stream, ..s };
            all.stretches += 1;
            all.kernels += stretch.kernels;
            all.span_us += stretch.span_us;
            all.idle_us += stretch.idle_us;
            if all.longest.as_ref().is_none_or(|l| stretch.idle_us > l.idle_us) {
                all.longest = Some(stretch);
            }
        }
    }
    all.span_us = round3(all.span_us);
    all.idle_us = round3(all.idle_us);
    (all, gaps)
}

/// One stream's stretches (device and stream left 0) and its host-wait gaps, its kernels in
/// start order. Its copies (in start order) run between them as the idle split counts them: the
/// stream is busy while one runs, and the gap before one its call came late for is host wait
/// too (a graph captures copies as it does kernels), though only kernels count in a stretch.
fn stretches(list: &[&Launched], copies: &[Copy]) -> (Vec<Stretch>, Vec<(f64, f64, f64)>) {
    let mut out = Vec::new();
    let mut host_wait = Vec::new();
    // The current run: where it starts, its kernels, its idle time.
    let mut run: Option<(f64, u64, f64)> = None;
    let mut reach = f64::MIN;
    // An event that may end a gap: a kernel (counted in a run) or a copy.
    // Nothing before the first event: it starts no gap.
    // `call`: its launch call's start and end.
    let mut event = |start: f64, end: f64, call: Option<(f64, f64)>, kernel: bool| {
        let waited = reach > f64::MIN && call.is_some_and(|c| super::waits::waited_on_host(reach, c.0, start));
        if let (true, Some((_, submitted))) = (waited, call) {
            let gap = start - reach;
            host_wait.push((reach, submitted, start));
            let n = u64::from(kernel);
            match &mut run {
                Some((_, kernels, idle)) => {
                    *kernels += n;
                    *idle += gap;
                }
                None => run = Some((reach, n, gap)),
            }
        } else {
            close(&mut run, reach, &mut out);
        }
        reach = reach.max(end);
    };
    // From the first kernel on, whatever ran before it.
    let first = list.first().map_or(f64::MAX, |k| k.start);
    let mut copies = copies.iter().filter(|c| c.start >= first).peekable();
    for k in list {
        while let Some(c) = copies.next_if(|c| c.start <= k.start) {
            event(c.start, c.end, c.call, false);
        }
        event(k.start, k.end, Some((k.call_start, k.call_start + k.call_dur)), true);
    }
    close(&mut run, reach, &mut out);
    (out, host_wait)
}

/// Ends the current run at `end`: a stretch when it is long enough.
fn close(run: &mut Option<(f64, u64, f64)>, end: f64, out: &mut Vec<Stretch>) {
    if let Some((start, kernels, idle)) = run.take() {
        if kernels as usize >= HOST_BOUND_RUN {
            let span_us = round3(end - start);
            out.push(Stretch { device: 0, stream: 0, start_us: start, kernels, span_us, idle_us: round3(idle) });
        }
    }
}

/// Kernels that ran for less time than their call took on the CPU.
fn small_kernels(trace: &Trace, kernels: &[Launched]) -> SmallKernels {
    let mut small = SmallKernels::default();
    let mut by_name: FxHashMap<NameId, u64> = FxHashMap::default();
    for k in kernels.iter().filter(|k| k.call_dur > k.end - k.start) {
        small.kernels += 1;
        small.kernel_us += k.end - k.start;
        small.launch_us += k.call_dur;
        *by_name.entry(k.name).or_default() += 1;
    }
    small.kernel_us = round3(small.kernel_us);
    small.launch_us = round3(small.launch_us);
    let mut names: Vec<(String, u64)> =
        by_name.into_iter().map(|(n, count)| (trace.names.resolve(n).to_string(), count)).collect();
    names.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    names.truncate(SMALL_KERNEL_NAMES);
    small.names = names;
    small
}
