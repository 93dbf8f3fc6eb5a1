//! The GPU timeline: how a window of GPU time divides into computation, communication, memory
//! copies and idle time, by interval arithmetic (`docs/trace-analysis.md`, "GPU timeline").
//!
//! Kernels overlap (several streams, communication beside compute), so every figure is the
//! length of a *union* of intervals, never a sum of durations: busy = all GPU events; computation
//! = non-communication kernels and memsets (TraceLens counts a cuBLAS call's memset as
//! computation, and so do we, so the figures agree); communication = NCCL/RCCL and custom
//! all-reduce kernels; exposed communication = communication not overlapped by computation;
//! exposed memcpy = copies overlapped by neither.
//!
//! Each kind's union is built once per device (sorted, with prefix sums), so the figures of any
//! window cost two binary searches: a trace with thousands of `ProfilerStep` windows stays
//! linear.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::summary::{round3, ClassifiedTrace};
use crate::time::disjoint_spans::DisjointSpans;
use classify::category::Category;
use trace::search::partition_point_from;
use trace::{Processor, Trace, TransferKind};

/// Sorted, disjoint intervals with the running total of their lengths.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Intervals {
    spans: Vec<(f64, f64)>,
    /// `before[i]` = total length of `spans[..i]`.
    before: Vec<f64>,
}

impl Intervals {
    /// The union of `spans` (any order, overlapping or not; empty and inverted ones dropped).
    pub fn union(mut spans: Vec<(f64, f64)>) -> Self {
        spans.retain(|(s, e)| s.is_finite() && e.is_finite() && e > s);
        spans.sort_by(|a, b| a.0.total_cmp(&b.0));
        let mut out: Vec<(f64, f64)> = Vec::with_capacity(spans.len());
        for (s, e) in spans {
            match out.last_mut() {
                Some(last) if s <= last.1 => last.1 = last.1.max(e),
                _ => out.push((s, e)),
            }
        }
        Self::from_disjoint(out)
    }

    fn from_disjoint(spans: Vec<(f64, f64)>) -> Self {
        let mut before = Vec::with_capacity(spans.len() + 1);
        let mut total = 0.0;
        for (s, e) in &spans {
            before.push(total);
            total += e - s;
        }
        before.push(total);
        Intervals { spans, before }
    }

    /// Total length.
    pub fn length(&self) -> f64 {
        self.before.last().copied().unwrap_or(0.0)
    }

    /// Length of the part inside `[lo, hi]`.
    pub fn within(&self, lo: f64, hi: f64) -> f64 {
        if hi <= lo || self.spans.is_empty() {
            return 0.0;
        }
        // First span ending after lo, first span starting at or after hi.
        let a = self.spans.partition_point(|s| s.1 <= lo);
        let b = self.spans.partition_point(|s| s.0 < hi);
        self.covered(a, b, lo, hi)
    }

    /// [`Intervals::within`] for windows asked in time order: `from` is where the last
    /// window's search ended, and each search starts there (a few steps, not a binary
    /// search over every span).
    pub fn within_from(&self, lo: f64, hi: f64, from: &mut usize) -> f64 {
        if hi <= lo || self.spans.is_empty() {
            return 0.0;
        }
        let a = partition_point_from(&self.spans, *from, |s| s.1 <= lo);
        let b = partition_point_from(&self.spans, a, |s| s.0 < hi);
        *from = a;
        self.covered(a, b, lo, hi)
    }

    /// The length of `[lo, hi]` covered by `spans[a..b]`, the spans that overlap it.
    fn covered(&self, a: usize, b: usize, lo: f64, hi: f64) -> f64 {
        if a >= b {
            return 0.0;
        }
        let mut total = self.before[b] - self.before[a];
        total -= (lo - self.spans[a].0).max(0.0);
        total -= (self.spans[b - 1].1 - hi).max(0.0);
        total.max(0.0)
    }

    /// The parts of `self` not covered by `other` (both sorted): one merge pass.
    pub fn minus(&self, other: &Intervals) -> Intervals {
        let mut out = Vec::new();
        let mut j = 0;
        for &(s, e) in &self.spans {
            let mut cur = s;
            while j < other.spans.len() && other.spans[j].1 <= cur {
                j += 1;
            }
            let mut k = j;
            while k < other.spans.len() && other.spans[k].0 < e {
                let (os, oe) = other.spans[k];
                if os > cur {
                    out.push((cur, os));
                }
                cur = cur.max(oe);
                if cur >= e {
                    break;
                }
                k += 1;
            }
            if cur < e {
                out.push((cur, e));
            }
        }
        Self::from_disjoint(out)
    }

    pub fn first_start(&self) -> Option<f64> {
        self.spans.first().map(|s| s.0)
    }

    /// The spans, disjoint and in start order.
    pub fn spans(&self) -> &[(f64, f64)] {
        &self.spans
    }

    pub fn last_end(&self) -> Option<f64> {
        self.spans.last().map(|s| s.1)
    }
}

/// The length of a union of spans that arrive one by one in any order, in bounded memory (the
/// summary-only mode's timeline): disjoint spans are kept in start order, merged as they come,
/// and when more than `cap` are held the earliest half is retired into a running total. A span
/// that later reaches back before the retired ones is clipped to their end and counted
/// [`late`](Self::late): the length is then a lower bound. Kernels arrive nearly in time order,
/// so with thousands of spans held nothing is late in practice, and the length is the one
/// [`Intervals::union`] gives for the same spans.
#[derive(Debug, Clone)]
pub struct StreamedUnion {
    spans: DisjointSpans,
    cap: usize,
    /// Total length of the retired spans.
    retired: f64,
    /// End of the last retired span: nothing before it is held.
    watermark: f64,
    late: u64,
    /// Earliest start and latest end of every span added.
    bounds: Option<(f64, f64)>,
}

impl Default for StreamedUnion {
    fn default() -> Self {
        Self::with_cap(limits::SUMMARY_ONLY_SPANS)
    }
}

impl StreamedUnion {
    /// A union that holds at most `cap` disjoint spans (at least 2).
    pub fn with_cap(cap: usize) -> Self {
        StreamedUnion {
            spans: DisjointSpans::default(),
            cap: cap.max(2),
            retired: 0.0,
            watermark: f64::NEG_INFINITY,
            late: 0,
            bounds: None,
        }
    }

    /// Adds `[start, end]`; empty, inverted and non-finite spans are dropped, as
    /// [`Intervals::union`] drops them.
    pub fn add(&mut self, start: f64, end: f64) {
        if !(start.is_finite() && end.is_finite() && end > start) {
            return;
        }
        self.bounds = Some(self.bounds.map_or((start, end), |(lo, hi)| (lo.min(start), hi.max(end))));
        let (mut s, e) = (start, end);
        if s < self.watermark {
            self.late += 1;
            if e <= self.watermark {
                return;
            }
            s = self.watermark;
        }
        self.spans.add(s, e);
        self.retire_if_full();
    }

    /// Past `cap` spans held, the earliest half goes into the running total.
    fn retire_if_full(&mut self) {
        if self.spans.len() > self.cap {
            for _ in 0..self.cap / 2 {
                let Some((s, e)) = self.spans.pop_first() else { break };
                self.retired += e - s;
                self.watermark = e;
            }
        }
    }

    /// Total length (summed in start order, as [`Intervals`] sums it).
    pub fn length(&self) -> f64 {
        self.spans.iter().fold(self.retired, |total, (s, e)| total + (e - s))
    }

    /// Spans that reached back before the retired ones (clipped, or dropped when wholly before).
    pub fn late(&self) -> u64 {
        self.late
    }

    /// Earliest start and latest end of the spans added; `None` when none was.
    pub fn bounds(&self) -> Option<(f64, f64)> {
        self.bounds
    }

    /// Disjoint spans held now (at most the cap).
    pub fn held(&self) -> usize {
        self.spans.len()
    }
}

/// The figures of one window, µs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Timeline {
    /// `whole trace`, `ProfilerStep#6`, or `ProfilerStep#6 (CPU range)` when the trace has no
    /// GPU-side copy of the step annotation.
    pub window: String,
    /// The device the figures are for (its name as the trace gives it).
    pub device: String,
    pub total_us: f64,
    pub busy_us: f64,
    pub idle_us: f64,
    pub computation_us: f64,
    pub communication_us: f64,
    pub exposed_communication_us: f64,
    pub memcpy_us: f64,
    pub exposed_memcpy_us: f64,
}

impl Timeline {
    /// What ran the kernels it covers: the CPU where its device is (a CPU run), else a GPU.
    pub fn processor(&self) -> Processor {
        Processor::of_devices(&[&self.device])
    }
}

/// One device's unions, built once.
struct DeviceUnions {
    busy: Intervals,
    computation: Intervals,
    communication: Intervals,
    exposed_communication: Intervals,
    memcpy: Intervals,
    exposed_memcpy: Intervals,
}

impl DeviceUnions {
    fn figures(&self, window: String, device: String, lo: f64, hi: f64) -> Timeline {
        let total = (hi - lo).max(0.0);
        let busy = self.busy.within(lo, hi);
        Timeline {
            window,
            device,
            total_us: round3(total),
            busy_us: round3(busy),
            idle_us: round3((total - busy).max(0.0)),
            computation_us: round3(self.computation.within(lo, hi)),
            communication_us: round3(self.communication.within(lo, hi)),
            exposed_communication_us: round3(self.exposed_communication.within(lo, hi)),
            memcpy_us: round3(self.memcpy.within(lo, hi)),
            exposed_memcpy_us: round3(self.exposed_memcpy.within(lo, hi)),
        }
    }
}

/// The whole-trace timeline and one per step window, for one device.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DeviceTimeline {
    pub whole: Timeline,
    pub steps: Vec<Timeline>,
}

/// Each device's busy time: the union of its kernels, copies and sets (graph nodes and kernels
/// without a recorded call too), as its timeline measures it. The launch cost weighs host
/// waits against it; the timeline's own is handed on ([`timelines_and_busy`]) rather than
/// merged again.
#[derive(Debug, Default, PartialEq)]
pub struct DeviceBusy(BTreeMap<i64, Intervals>);

impl DeviceBusy {
    /// Every device's busy time, merged from `trace`'s events.
    pub fn of(trace: &Trace) -> Self {
        let mut spans: BTreeMap<i64, Vec<(f64, f64)>> = BTreeMap::new();
        let kernels = trace.kernels.iter().map(|k| (k.device, k.ts, k.dur));
        for (device, ts, dur) in kernels.chain(trace.transfers.iter().map(|t| (t.device, t.ts, t.dur))) {
            spans.entry(device).or_default().push((ts, ts + dur));
        }
        DeviceBusy(spans.into_iter().map(|(device, s)| (device, Intervals::union(s))).collect())
    }

    /// One device's busy time; `None` for a device that ran nothing.
    pub fn device(&self, device: i64) -> Option<&Intervals> {
        self.0.get(&device)
    }
}

/// The timeline of every device that ran GPU work, the busiest (most busy time) first.
pub fn timelines(side: &ClassifiedTrace<'_>) -> Vec<DeviceTimeline> {
    timelines_and_busy(side).0
}

/// [`timelines`], and each device's busy time they measured.
pub fn timelines_and_busy(side: &ClassifiedTrace<'_>) -> (Vec<DeviceTimeline>, DeviceBusy) {
    let trace = side.trace;
    let mut devices: Vec<i64> =
        trace.kernels.iter().map(|k| k.device).chain(trace.transfers.iter().map(|t| t.device)).collect();
    devices.sort_unstable();
    devices.dedup();
    let names = trace::platform::device_names(&trace.devices, side.platform.vendor, &devices);
    let windows = step_windows(side);
    let mut busy = BTreeMap::new();
    let mut out: Vec<DeviceTimeline> = devices
        .iter()
        .zip(names)
        .map(|(&device, name)| {
            let unions = device_unions(side, device);
            let (lo, hi) = (unions.busy.first_start().unwrap_or(0.0), unions.busy.last_end().unwrap_or(0.0));
            let timeline = DeviceTimeline {
                whole: unions.figures("whole trace".into(), name.clone(), lo, hi),
                steps: windows.iter().map(|(w, lo, hi)| unions.figures(w.clone(), name.clone(), *lo, *hi)).collect(),
            };
            busy.insert(device, unions.busy);
            timeline
        })
        .collect();
    out.sort_by(|a, b| b.whole.busy_us.total_cmp(&a.whole.busy_us));
    (out, DeviceBusy(busy))
}

fn device_unions(side: &ClassifiedTrace<'_>, device: i64) -> DeviceUnions {
    let trace = side.trace;
    let (mut comp, mut comm, mut copy) = (Vec::new(), Vec::new(), Vec::new());
    for k in trace.kernels.iter().filter(|k| k.device == device) {
        let span = (k.ts, k.ts + k.dur);
        if side.class(k.name).category == Category::Communication {
            comm.push(span);
        } else {
            comp.push(span);
        }
    }
    for t in trace.transfers.iter().filter(|t| t.device == device) {
        let span = (t.ts, t.ts + t.dur);
        match t.kind {
            TransferKind::Memset => comp.push(span),
            TransferKind::Memcpy => copy.push(span),
        }
    }
    let all: Vec<(f64, f64)> = comp.iter().chain(&comm).chain(&copy).copied().collect();
    let computation = Intervals::union(comp);
    let communication = Intervals::union(comm);
    let memcpy = Intervals::union(copy);
    let exposed_communication = communication.minus(&computation);
    let busy_compute = Intervals::union(computation.spans.iter().chain(&communication.spans).copied().collect());
    let exposed_memcpy = memcpy.minus(&busy_compute);
    DeviceUnions {
        busy: Intervals::union(all),
        computation,
        communication,
        exposed_communication,
        memcpy,
        exposed_memcpy,
    }
}

/// The `ProfilerStep#N` windows: their GPU-side ranges (`gpu_user_annotation`) when the trace
/// has them, else the CPU-side ranges, named as such (the GPU runs behind the CPU, so those
/// windows are approximate).
pub(crate) fn step_windows(side: &ClassifiedTrace<'_>) -> Vec<(String, f64, f64)> {
    let trace = side.trace;
    let steps = |gpu: bool| -> Vec<(String, f64, f64)> {
        let mut w: Vec<(String, f64, f64)> = trace
            .annotations
            .iter()
            .filter(|a| a.gpu == gpu && trace.name(a.name).starts_with("ProfilerStep#"))
            .map(|a| {
                let name = trace.name(a.name);
                let name = if gpu { name.to_string() } else { format!("{name} (CPU range)") };
                (name, a.ts, a.ts + a.dur)
            })
            .collect();
        w.sort_by(|a, b| a.1.total_cmp(&b.1));
        w
    };
    let gpu = steps(true);
    if gpu.is_empty() {
        steps(false)
    } else {
        gpu
    }
}

/// Which of a device's unions a GPU event's span goes to ([`StreamedDevice`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpanPart {
    Computation,
    Communication,
    Memcpy,
}

/// One device's running unions, whose lengths give every whole-trace figure of its timeline:
/// the streaming folds' form of [`timelines`] (the summary-only mode's and the ranks').
#[derive(Debug, Clone, Default)]
pub struct StreamedDevice {
    computation: StreamedUnion,
    communication: StreamedUnion,
    memcpy: StreamedUnion,
    /// Computation ∪ communication: exposed communication is this less computation.
    compute_or_comm: StreamedUnion,
    /// Everything: exposed memcpy is this less `compute_or_comm`.
    busy: StreamedUnion,
}

impl StreamedDevice {
    pub fn add(&mut self, part: SpanPart, start: f64, end: f64) {
        match part {
            SpanPart::Computation => {
                self.computation.add(start, end);
                self.compute_or_comm.add(start, end);
            }
            SpanPart::Communication => {
                self.communication.add(start, end);
                self.compute_or_comm.add(start, end);
            }
            SpanPart::Memcpy => self.memcpy.add(start, end),
        }
        self.busy.add(start, end);
    }

    /// Spans that reached back past the retired ones, over every union: the figures are lower
    /// bounds when this is not zero.
    pub fn late(&self) -> u64 {
        [&self.computation, &self.communication, &self.memcpy, &self.compute_or_comm, &self.busy]
            .iter()
            .map(|u| u.late())
            .sum()
    }

    /// Earliest start and latest end of every span added.
    pub fn bounds(&self) -> Option<(f64, f64)> {
        self.busy.bounds()
    }

    /// The whole-trace figures, as [`timelines`] gives them for the same events.
    pub fn timeline(&self, device: String) -> Timeline {
        let (lo, hi) = self.busy.bounds().unwrap_or((0.0, 0.0));
        let total = (hi - lo).max(0.0);
        let busy = self.busy.length();
        let computation = self.computation.length();
        let compute_or_comm = self.compute_or_comm.length();
        Timeline {
            window: "whole trace".into(),
            device,
            total_us: round3(total),
            busy_us: round3(busy),
            idle_us: round3((total - busy).max(0.0)),
            computation_us: round3(computation),
            communication_us: round3(self.communication.length()),
            exposed_communication_us: round3((compute_or_comm - computation).max(0.0)),
            memcpy_us: round3(self.memcpy.length()),
            exposed_memcpy_us: round3((busy - compute_or_comm).max(0.0)),
        }
    }
}

#[cfg(test)]
mod tests;
