//! The critical path of a step: the chain of CPU calls and GPU kernels that decided when the
//! step's last work ended (`docs/trace-analysis.md`, "Critical path").
//!
//! The events are the GPU's kernels on their streams and the CPU's runtime calls (launches,
//! synchronisations, copies) on their threads; each depends on the event before it on its stream
//! or thread, a kernel on its launch call, and a synchronising call on the kernel it waited for.
//! Walking back from the event that ends last, each step follows the dependency that was
//! satisfied last (the one the event actually waited for): a kernel that started after the kernel
//! before it on its stream ended was bound by the stream, one that started after its launch call
//! returned was bound by the host; a synchronising call that returned when a kernel ended was
//! bound by that kernel, any other call by the host's work before it. The time between two events
//! of the path is the wait or the host work between them. That is the longest path through the
//! graph of these dependencies (HTA's critical path analysis builds the graph itself), found in
//! one pass back: O(n log n) for the sorts, then per step a search from where the last one
//! ended.

pub mod as_value;
#[cfg(test)]
mod tests;

use std::cell::Cell;

use rustc_hash::FxHashMap;

use crate::summary::round3;
use trace::intern::NameId;
use trace::search::partition_point_from;
use trace::Trace;

/// A call that returned this close after a kernel's end waited for that kernel, µs.
const SYNC_SLACK_US: f64 = 5.0;

/// How many names [`CriticalPath::top`] keeps.
pub const PATH_NAMES: usize = 5;

/// How many events [`CriticalPath::drawn`] keeps (the longest on the path, where it has more).
pub const DRAWN_EVENTS: usize = 300;

/// The critical path of one window.
#[derive(Debug, Clone, PartialEq)]
pub struct CriticalPath {
    /// The window, named as the timeline's steps are (`ProfilerStep#6`, `whole trace`).
    pub window: String,
    /// From the window's start (or the path's first event) to the end of its last event, µs.
    pub length_us: f64,
    /// Kernel time on the path, µs.
    pub gpu_us: f64,
    /// CPU time on the path: runtime calls and the host's work between them, µs.
    pub cpu_us: f64,
    /// From a launch call's return to its kernel's start, where the path goes through a launch.
    pub launch_us: f64,
    /// A stream's gaps between two kernels of the path (waiting on another stream or an event).
    pub other_us: f64,
    /// Kernels and calls on the path.
    pub kernels: u64,
    pub calls: u64,
    /// Where the path's time goes, the longest first: kernels by name, calls by name, and the
    /// host's work between calls by the CPU op it ran in.
    pub top: Vec<PathItem>,
    /// The path's events in time order, for drawing the step with the path marked: only the
    /// longest path of the trace keeps them (the page draws that step), at most
    /// [`DRAWN_EVENTS`].
    pub drawn: Vec<PathEvent>,
}

/// Where an event of the path ran: a GPU stream or a CPU thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Lane {
    Cpu { tid: i64 },
    Gpu { device: i64, stream: i64 },
}

/// One event of the path: its part on the path (from when what it waited for released it to
/// when it ended), µs from the path's start, and its name (a kernel read out as tables read
/// it, a runtime call as the trace names it).
#[derive(Debug, Clone, PartialEq)]
pub struct PathEvent {
    pub lane: Lane,
    pub start_us: f64,
    pub end_us: f64,
    pub name: String,
}

/// A name on the path and its time there.
#[derive(Debug, Clone, PartialEq)]
pub struct PathItem {
    pub name: String,
    /// `gpu` for a kernel, `cpu` for a call or the host's work.
    pub side: &'static str,
    pub time_us: f64,
}

/// One event of the graph.
#[derive(Debug, Clone, Copy)]
enum Event {
    Kernel(usize),
    Call(usize),
}

/// A runtime call, from the trace's launches.
#[derive(Debug, Clone, Copy)]
struct Call {
    name: NameId,
    ts: f64,
    end: f64,
    tid: i64,
    sync: bool,
}

/// Whether a runtime call blocks the host until the GPU work before it has finished.
fn synchronises(name: &str) -> bool {
    name.contains("Synchronize") || matches!(name, "cudaMemcpy" | "hipMemcpy" | "cudaMemcpy2D" | "hipMemcpy2D")
}

/// The critical path of each window `(name, start, end)`, or of the whole trace when there is
/// none; empty when the trace ran no kernel.
pub fn critical_paths(trace: &Trace, windows: &[(String, f64, f64)]) -> Vec<CriticalPath> {
    if trace.kernels.is_empty() {
        return Vec::new();
    }
    let graph = Graph::of(trace);
    let whole = || {
        let calls = trace.launches.iter().map(|(_, l)| l.ts);
        let start = trace.kernels.iter().map(|k| k.ts).chain(calls).fold(f64::INFINITY, f64::min);
        let end = trace.kernels.iter().map(|k| k.ts + k.dur).fold(f64::NEG_INFINITY, f64::max);
        ("whole trace".to_string(), start, end)
    };
    let windows: Vec<(String, f64, f64)> = if windows.is_empty() { vec![whole()] } else { windows.to_vec() };
    let mut paths: Vec<CriticalPath> = Vec::with_capacity(windows.len());
    // Only the longest path keeps its events (the first of equals): one step is drawn, and
    // its events' names are read only for it.
    let mut longest: Option<(usize, Vec<RawEvent>, f64)> = None;
    for (name, start, end) in &windows {
        let Some((p, events, origin)) = graph.path(trace, name, *start, *end) else { continue };
        if longest.as_ref().is_none_or(|(i, ..)| p.length_us > paths[*i].length_us) {
            longest = Some((paths.len(), events, origin));
        }
        paths.push(p);
    }
    if let Some((i, events, origin)) = longest {
        paths[i].drawn = drawn_events(trace, events, origin);
    }
    paths
}

/// An event of a path as the walk finds it; named only when it is drawn.
#[derive(Debug, Clone, Copy)]
struct RawEvent {
    lane: Lane,
    start: f64,
    end: f64,
    name: NameId,
    kernel: bool,
}

/// The events kept for drawing: the longest [`DRAWN_EVENTS`] of them, in time order, their
/// times from `origin`, their names read out.
fn drawn_events(trace: &Trace, mut events: Vec<RawEvent>, origin: f64) -> Vec<PathEvent> {
    if events.len() > DRAWN_EVENTS {
        events.sort_by(|a, b| (b.end - b.start).total_cmp(&(a.end - a.start)));
        events.truncate(DRAWN_EVENTS);
    }
    events.sort_by(|a, b| a.start.total_cmp(&b.start));
    events
        .into_iter()
        .map(|e| PathEvent {
            lane: e.lane,
            start_us: round3(e.start - origin),
            end_us: round3(e.end - origin),
            name: match e.kernel {
                true => classify::family::table_name(trace.name(e.name), 60),
                false => trace.name(e.name).to_string(),
            },
        })
        .collect()
}

/// A CPU op as [`Graph::host_op`] reads it. Its own copy, side by side with its thread's
/// others, because the walk asks for the op under each stretch of host work: searching and
/// scanning back through the trace's op records, one cache line or more apart each, made the
/// critical paths of the 1 GB synthetic trace (375,000 ops) take 108–111 ms against 91 ms.
#[derive(Debug, Clone, Copy)]
struct HostOp {
    start: f64,
    end: f64,
    name: NameId,
}

/// The events and their dependencies.
struct Graph {
    calls: Vec<Call>,
    /// Per call, the call before it on its thread.
    prev_call: Vec<Option<usize>>,
    /// Per kernel, the kernel before it on its stream and its launch call.
    prev_kernel: Vec<Option<usize>>,
    launch: Vec<Option<usize>>,
    /// Kernel indexes by end time, for finding the kernel a synchronising call waited for and
    /// the last kernel of a window.
    by_end: Vec<usize>,
    /// Call indexes by end time, for the last call of a window.
    calls_by_end: Vec<usize>,
    /// Per CPU thread, its ops by start time.
    ops_by_thread: FxHashMap<i64, ThreadOps>,
}

/// One CPU thread's ops by start time, and where the last search among them ended: the walk
/// goes back in time, so the next one starts there.
#[derive(Default)]
struct ThreadOps {
    ops: Vec<HostOp>,
    last: Cell<usize>,
}

impl Graph {
    fn of(trace: &Trace) -> Graph {
        // The calls in the trace's order, so that a call's place there is its index here. Most
        // calls have the name of the call before them, whose answer is kept.
        let mut last: Option<(NameId, bool)> = None;
        let mut sync_of = |name: NameId| match last {
            Some((n, sync)) if n == name => sync,
            _ => last.insert((name, synchronises(trace.name(name)))).1,
        };
        let calls: Vec<Call> = trace
            .launches
            .values()
            .map(|l| Call { name: l.name, ts: l.ts, end: l.ts + l.dur, tid: l.tid, sync: sync_of(l.name) })
            .collect();
        let prev_call = previous_in_order(calls.len(), |i| (calls[i].tid, calls[i].ts));
        let k = &trace.kernels;
        // Kernels come in start order: the one before each on its stream in one pass.
        let mut last_on: FxHashMap<(i64, i64), usize> = FxHashMap::default();
        let prev_kernel =
            k.iter().enumerate().map(|(i, kernel)| last_on.insert((kernel.device, kernel.stream), i)).collect();
        let launch = k
            .iter()
            .map(|kernel| kernel.correlation.filter(|_| !kernel.graph_node).and_then(|c| trace.launches.index_of(&c)))
            .collect();
        let mut by_end: Vec<usize> = (0..k.len()).collect();
        by_end.sort_unstable_by(|&a, &b| (k[a].ts + k[a].dur).total_cmp(&(k[b].ts + k[b].dur)).then(a.cmp(&b)));
        let mut calls_by_end: Vec<usize> = (0..calls.len()).collect();
        calls_by_end.sort_unstable_by(|&a, &b| calls[a].end.total_cmp(&calls[b].end).then(a.cmp(&b)));
        let mut ops_by_thread: FxHashMap<i64, ThreadOps> = FxHashMap::default();
        for o in &trace.cpu_ops {
            ops_by_thread.entry(o.tid).or_default().ops.push(HostOp { start: o.ts, end: o.ts + o.dur, name: o.name });
        }
        for thread in ops_by_thread.values_mut() {
            thread.ops.sort_by(|a, b| a.start.total_cmp(&b.start));
            thread.last.set(thread.ops.len());
        }
        Graph { calls, prev_call, prev_kernel, launch, by_end, calls_by_end, ops_by_thread }
    }

    /// The kernel that ended last no later than `t + SYNC_SLACK_US` and after `after`.
    fn waited_for(&self, trace: &Trace, after: f64, t: f64) -> Option<usize> {
        let end = |i: usize| trace.kernels[i].ts + trace.kernels[i].dur;
        let at = self.by_end.partition_point(|&i| end(i) <= t + SYNC_SLACK_US);
        let &i = self.by_end[..at].last()?;
        (end(i) > after).then_some(i)
    }

    /// The innermost CPU op on thread `tid` running at `t` (the op whose host work that is): of
    /// the ops holding `t`, the one that started last; at most a few dozen ops back are looked at.
    fn host_op(&self, tid: i64, t: f64) -> Option<NameId> {
        let thread = self.ops_by_thread.get(&tid)?;
        let at = partition_point_from(&thread.ops, thread.last.get(), |o| o.start <= t);
        thread.last.set(at);
        thread.ops[..at].iter().rev().take(64).find(|o| o.end >= t).map(|o| o.name)
    }

    /// The path of one window, with its events as found and where it starts.
    fn path(&self, trace: &Trace, window: &str, start: f64, end: f64) -> Option<(CriticalPath, Vec<RawEvent>, f64)> {
        let kernels = &trace.kernels;
        let k_end = |i: usize| kernels[i].ts + kernels[i].dur;
        // The event that ends last inside the window.
        let kernels_before = self.by_end.partition_point(|&i| k_end(i) <= end);
        let last_kernel = self.by_end[..kernels_before].last().copied().filter(|&i| k_end(i) > start);
        let calls_before = self.calls_by_end.partition_point(|&i| self.calls[i].end <= end);
        let last_call = self.calls_by_end[..calls_before].last().copied().filter(|&i| self.calls[i].end > start);
        let mut at = match (last_kernel, last_call) {
            (Some(k), Some(c)) if self.calls[c].end > k_end(k) => Event::Call(c),
            (Some(k), _) => Event::Kernel(k),
            (None, Some(c)) => Event::Call(c),
            (None, None) => return None,
        };
        let mut p = CriticalPath {
            window: window.to_string(),
            length_us: 0.0,
            gpu_us: 0.0,
            cpu_us: 0.0,
            launch_us: 0.0,
            other_us: 0.0,
            kernels: 0,
            calls: 0,
            top: Vec::new(),
            drawn: Vec::new(),
        };
        let mut events: Vec<RawEvent> = Vec::new();
        let mut by_name: FxHashMap<(NameId, &'static str), f64> = FxHashMap::default();
        let path_end = match at {
            Event::Kernel(k) => k_end(k),
            Event::Call(c) => self.calls[c].end,
        };
        let mut cursor = path_end;
        // Each step moves to an event that ends no later than the current one starts (or, for a
        // launch, starts earlier): at most one step per event.
        for _ in 0..=(kernels.len() + self.calls.len()) {
            let (own_start, next) = match at {
                Event::Kernel(k) => {
                    let stream = self.prev_kernel[k].map(|q| (q, k_end(q)));
                    let host = self.launch[k].map(|c| (c, self.calls[c].end));
                    let next = match (stream, host) {
                        (Some((q, qe)), Some((_, ce))) if qe >= ce => Some((Event::Kernel(q), qe)),
                        (_, Some((c, ce))) => Some((Event::Call(c), ce)),
                        (Some((q, qe)), None) => Some((Event::Kernel(q), qe)),
                        (None, None) => None,
                    };
                    (kernels[k].ts, next)
                }
                Event::Call(c) => {
                    let call = self.calls[c];
                    let waited = call.sync.then(|| self.waited_for(trace, call.ts, call.end)).flatten();
                    let next = match waited {
                        Some(q) => Some((Event::Kernel(q), k_end(q))),
                        None => self.prev_call[c].map(|q| (Event::Call(q), self.calls[q].end)),
                    };
                    (call.ts, next)
                }
            };
            // What it waited for released it at `released`: its own part of the path runs from
            // then (or its start, if later) to the cursor; before that, the wait or host work.
            let released = next.map_or(start, |(_, r)| r).max(start).min(cursor);
            let own_from = own_start.max(released).min(cursor);
            let (name, side) = match at {
                Event::Kernel(k) => (kernels[k].name, "gpu"),
                Event::Call(c) => (self.calls[c].name, "cpu"),
            };
            let own = cursor - own_from;
            if own > 0.0 {
                let lane = match at {
                    Event::Kernel(k) => Lane::Gpu { device: kernels[k].device, stream: kernels[k].stream },
                    Event::Call(c) => Lane::Cpu { tid: self.calls[c].tid },
                };
                let kernel = matches!(at, Event::Kernel(_));
                events.push(RawEvent { lane, start: own_from, end: cursor, name, kernel });
            }
            match at {
                Event::Kernel(_) => {
                    p.gpu_us += own;
                    p.kernels += 1;
                }
                Event::Call(_) => {
                    p.cpu_us += own;
                    p.calls += 1;
                }
            }
            *by_name.entry((name, side)).or_default() += own;
            let Some((next, _)) = next else {
                cursor = own_from;
                break;
            };
            let gap = own_from - released;
            match (at, next) {
                // A kernel after its launch call: the launch delay.
                (Event::Kernel(_), Event::Call(_)) => p.launch_us += gap,
                // A kernel after the one before it on its stream: the stream's gap.
                (Event::Kernel(_), Event::Kernel(_)) => p.other_us += gap,
                // A call after the call before it: the host's work between them.
                (Event::Call(c), Event::Call(_)) => {
                    p.cpu_us += gap;
                    let op = self.host_op(self.calls[c].tid, own_from).unwrap_or(self.calls[c].name);
                    *by_name.entry((op, "cpu")).or_default() += gap;
                }
                // A synchronising call after the kernel it waited for.
                (Event::Call(_), Event::Kernel(_)) => p.other_us += gap,
            }
            cursor = released;
            if cursor <= start {
                break;
            }
            at = next;
        }
        p.length_us = round3(path_end - cursor);
        for v in [&mut p.gpu_us, &mut p.cpu_us, &mut p.launch_us, &mut p.other_us] {
            *v = round3(*v);
        }
        let mut top: Vec<PathItem> = by_name
            .into_iter()
            .filter(|(_, t)| *t > 0.0)
            .map(|((n, side), t)| PathItem { name: trace.name(n).to_string(), side, time_us: round3(t) })
            .collect();
        top.sort_by(|a, b| b.time_us.total_cmp(&a.time_us).then_with(|| a.name.cmp(&b.name)));
        top.truncate(PATH_NAMES);
        p.top = top;
        Some((p, events, cursor))
    }
}

/// Per item of `0..n`, the item before it in its group, ordered by `key`'s (group, time).
fn previous_in_order(n: usize, key: impl Fn(usize) -> (i64, f64)) -> Vec<Option<usize>> {
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_unstable_by(|&a, &b| {
        let (ga, ta) = key(a);
        let (gb, tb) = key(b);
        ga.cmp(&gb).then(ta.total_cmp(&tb)).then(a.cmp(&b))
    });
    let mut prev = vec![None; n];
    for pair in order.windows(2) {
        if key(pair[0]).0 == key(pair[1]).0 {
            prev[pair[1]] = Some(pair[0]);
        }
    }
    prev
}
