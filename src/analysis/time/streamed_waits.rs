//! The idle split by cause ([`super::waits`]) folded as a trace streams past, in bounded memory:
//! the summary-only mode's and the ranks fold's form of it.
//!
//! The whole-trace split sorts each stream's kernels and copies by start and looks up each
//! one's launch call. Here each stream holds its latest events in a reorder buffer of
//! [`WAITS_HELD`] (readers hand kernels nearly in time order) and retires the earliest when it
//! is full, with the same gap rule; launch calls wait by correlation id, at most
//! [`WAITS_LAUNCHES`] of them, the oldest given up first (a call that launched no kernel, a
//! synchronisation, is never claimed). An event that starts before the last one retired on its
//! stream is counted late and left out; a kernel whose launch call had been given up is
//! classified as one without a recorded launch. Either makes the figures approximate, and
//! [`StreamedWaits::finish`] says how many there were. On every trace under `tests/data`
//! neither happens, and the figures equal the whole-trace split to the ns.

use std::collections::VecDeque;

use rustc_hash::FxHashMap;

use super::waits::{StreamWaits, WaitTimes, Waits};
use limits::{WAITS_HELD, WAITS_LAUNCHES, WAITS_STREAMS};

/// Claimed launch calls the arrival order may hold beyond twice the waiting ones before it is
/// compacted: enough that a trace whose kernels follow their calls closely compacts once per
/// this many calls, few enough to be 16 KB.
const COMPACT_SLACK: usize = 1024;

/// A launch call waiting for its kernel.
#[derive(Debug, Clone, Copy)]
struct Pending {
    start: f64,
    /// Its place among the calls, which tells it from an earlier call of the same id.
    seq: u64,
}

/// One kernel or copy on a stream: ordered by start, then by arrival (the whole-trace split's
/// stable sort).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Held {
    start: f64,
    arrival: u64,
    end: f64,
    correlation: Option<u64>,
    /// The launch call's start, once known.
    launch: Option<f64>,
}

impl Eq for Held {}

impl Ord for Held {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.start.total_cmp(&other.start).then(self.arrival.cmp(&other.arrival))
    }
}

impl PartialOrd for Held {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

/// One stream's running split.
#[derive(Default)]
struct StreamFold {
    /// In start order: readers hand a stream's events nearly in that order, so most go at the
    /// back after one comparison, and the rest near it (a binary search, then a short move).
    held: VecDeque<Held>,
    /// Start and end of the last event retired.
    last: Option<(f64, f64)>,
    events: u64,
    times: WaitTimes,
}

/// The running idle split of every stream; [`StreamedWaits::finish`] gives the [`Waits`].
#[derive(Default)]
pub struct StreamedWaits {
    /// By (device, stream), in first-seen order; sorted when finished.
    streams: Vec<((i64, i64), StreamFold)>,
    stream_index: FxHashMap<(i64, i64), usize>,
    /// Launch calls not yet claimed by their kernel: start and arrival number by correlation id.
    launches: FxHashMap<u64, Pending>,
    /// The unclaimed calls' correlation ids and arrival numbers in arrival order, for giving up
    /// the oldest. Claimed calls stay here until [`StreamedWaits::compact`] drops them.
    arrived: VecDeque<(u64, u64)>,
    /// Launch calls seen.
    calls: u64,
    arrivals: u64,
    /// Events that started before the last one retired on their stream, left out.
    late: u64,
    /// Events on streams past [`WAITS_STREAMS`], left out.
    untracked: u64,
    /// Launch calls given up before their kernel came.
    given_up: u64,
}

impl StreamedWaits {
    /// A launch call with its correlation id and start.
    pub fn launch(&mut self, correlation: u64, start: f64) {
        let seq = self.calls;
        self.calls += 1;
        self.launches.insert(correlation, Pending { start, seq });
        self.arrived.push_back((correlation, seq));
        while self.launches.len() > WAITS_LAUNCHES {
            let Some(oldest) = self.arrived.pop_front() else { break };
            if self.unclaimed(oldest) {
                self.launches.remove(&oldest.0);
                self.given_up += 1;
            }
        }
        if self.arrived.len() > 2 * self.launches.len() + COMPACT_SLACK {
            self.compact();
        }
    }

    /// Whether the arrival `(correlation, seq)` is a call still waiting for its kernel, not
    /// one claimed or one whose id a later call took.
    fn unclaimed(&self, (correlation, seq): (u64, u64)) -> bool {
        self.launches.get(&correlation).is_some_and(|p| p.seq == seq)
    }

    /// Drops the claimed calls from the arrival order, which then holds exactly the waiting
    /// ones. Run when claimed calls are more than the waiting ones and [`COMPACT_SLACK`]: each
    /// pass is paid for by as many calls as it keeps, so the order costs O(1) per call and
    /// never holds more than twice [`WAITS_LAUNCHES`] and the slack, however long the trace.
    fn compact(&mut self) {
        let mut arrived = std::mem::take(&mut self.arrived);
        arrived.retain(|&a| self.unclaimed(a));
        self.arrived = arrived;
    }

    /// A kernel or copy `[start, end]` on `stream` of `device`, launched by the call
    /// `correlation` where the trace records it.
    pub fn event(&mut self, device: i64, stream: i64, start: f64, end: f64, correlation: Option<u64>) {
        if !(start.is_finite() && end.is_finite()) {
            return;
        }
        let i = match self.stream_index.get(&(device, stream)) {
            Some(&i) => i,
            None if self.streams.len() < WAITS_STREAMS => {
                self.streams.push(((device, stream), StreamFold::default()));
                self.stream_index.insert((device, stream), self.streams.len() - 1);
                self.streams.len() - 1
            }
            None => {
                self.untracked += 1;
                return;
            }
        };
        let launch = correlation.and_then(|c| self.launches.remove(&c)).map(|p| p.start);
        let arrival = self.arrivals;
        self.arrivals += 1;
        let fold = &mut self.streams[i].1;
        let h = Held { start, arrival, end, correlation, launch };
        match fold.held.back() {
            Some(last) if *last > h => {
                let at = fold.held.partition_point(|x| *x <= h);
                fold.held.insert(at, h);
            }
            _ => fold.held.push_back(h),
        }
        if fold.held.len() > WAITS_HELD {
            let first = fold.held.pop_front().expect("the buffer is full");
            self.late += retire(fold, first, &mut self.launches);
        }
    }

    /// The split, with a note when some events were left out or some launch calls given up
    /// (the figures are then approximate); `None` when no kernel or copy ran.
    pub fn finish(mut self) -> (Option<Waits>, Option<String>) {
        self.streams.sort_by_key(|s| s.0);
        for (_, fold) in &mut self.streams {
            for h in std::mem::take(&mut fold.held) {
                self.late += retire(fold, h, &mut self.launches);
            }
        }
        let note = self.note();
        if self.streams.is_empty() {
            return (None, note);
        }
        let mut total = WaitTimes::default();
        let streams = self
            .streams
            .into_iter()
            .map(|((device, stream), fold)| {
                total.add(&fold.times);
                let WaitTimes { host_wait_us, kernel_wait_us, other_us } = fold.times.rounded();
                StreamWaits { device, stream, events: fold.events, host_wait_us, kernel_wait_us, other_us }
            })
            .collect();
        let WaitTimes { host_wait_us, kernel_wait_us, other_us } = total.rounded();
        (Some(Waits { host_wait_us, kernel_wait_us, other_us, streams, steps: Vec::new() }), note)
    }

    fn note(&self) -> Option<String> {
        let mut parts = Vec::new();
        if self.late > 0 {
            parts.push(format!(
                "{} kernels or copies reached the reader after {} later ones on their stream and are left out",
                self.late, WAITS_HELD
            ));
        }
        if self.untracked > 0 {
            parts.push(format!("{} ran on streams past the first {WAITS_STREAMS} and are left out", self.untracked));
        }
        if self.given_up > 0 {
            parts.push(format!(
                "{} launch calls waited past {} others for their kernel and were given up",
                self.given_up, WAITS_LAUNCHES
            ));
        }
        (!parts.is_empty()).then(|| format!("the idle split is approximate: {}", parts.join("; ")))
    }
}

/// Retires `h` (the earliest held event of `fold`): the gap from the last one retired goes to
/// its cause. 1 when `h` came too late to be placed, else 0.
fn retire(fold: &mut StreamFold, h: Held, launches: &mut FxHashMap<u64, Pending>) -> u64 {
    if let Some((last_start, _)) = fold.last {
        if h.start < last_start {
            return 1;
        }
    }
    let launch = h.launch.or_else(|| h.correlation.and_then(|c| launches.remove(&c)).map(|p| p.start));
    if let Some((_, prev_end)) = fold.last {
        if let Some((cause, length)) = super::waits::gap_cause(prev_end, h.start, launch) {
            fold.times.add_to(cause, length);
        }
    }
    fold.last = Some((h.start, h.end));
    fold.events += 1;
    0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::waits::waits;
    use trace::{Kernel, Launch, Trace};

    /// A trace of two streams with a host wait, a launch gap and a wait on something else, its
    /// events handed over out of order and its launch calls after their kernels.
    fn planted() -> Trace {
        let mut t = Trace::default();
        let name = t.names.intern("k");
        let call = t.names.intern("cudaLaunchKernel");
        // (stream, start, dur, launch call's start)
        let events = [
            (7, 0.0, 10.0, 0.0),
            (7, 15.0, 5.0, 12.0),
            (7, 24.0, 6.0, 1.0),
            (7, 130.0, 10.0, 2.0),
            (9, 5.0, 5.0, 0.5),
            (9, 50.0, 5.0, 45.0),
        ];
        for (i, &(stream, ts, dur, call_ts)) in events.iter().enumerate() {
            let correlation = Some(i as u64 + 1);
            t.kernels.push(Kernel {
                name,
                ts,
                dur,
                device: 0,
                stream,
                correlation,
                external_id: None,
                graph_node: false,
            });
            let launch = Launch { name: call, kernel: Some(name), external_id: None, ts: call_ts, dur: 1.0, tid: 1 };
            t.launches.insert(i as u64 + 1, launch);
        }
        t
    }

    #[test]
    fn the_fold_equals_the_whole_trace_split_whatever_the_order() {
        let t = planted();
        let whole = waits(&t, &[]).unwrap();
        assert_eq!((whole.host_wait_us, whole.kernel_wait_us, whole.other_us), (5.0 + 40.0, 4.0, 100.0));
        // Kernels in start order (each goes at the back) or last-first (each goes in before
        // the others); each launch call after its kernel, or all of them first.
        for (launches_first, last_first) in [(false, false), (false, true), (true, false), (true, true)] {
            let mut s = StreamedWaits::default();
            if launches_first {
                for (c, l) in t.launches.iter() {
                    s.launch(*c, l.ts);
                }
            }
            let kernels: Vec<&Kernel> =
                if last_first { t.kernels.iter().rev().collect() } else { t.kernels.iter().collect() };
            for k in kernels {
                s.event(k.device, k.stream, k.ts, k.ts + k.dur, k.correlation);
                if !launches_first {
                    let c = k.correlation.unwrap();
                    s.launch(c, t.launches.get(&c).unwrap().ts);
                }
            }
            let (streamed, note) = s.finish();
            assert_eq!(streamed.as_ref(), Some(&whole), "launches first: {launches_first}, last first: {last_first}");
            assert_eq!(note, None);
        }
    }

    /// Claimed calls leave the arrival order, so that it stays small however many calls the
    /// trace has, even behind a call no kernel ever claims; that call still waits, and a later
    /// call reusing a claimed id is the one waiting under it.
    #[test]
    fn the_arrival_order_stays_bounded_as_calls_are_claimed() {
        let mut s = StreamedWaits::default();
        s.launch(0, 0.0);
        for c in 1..=1_000_000u64 {
            s.launch(c, c as f64);
            s.event(0, 7, c as f64 + 1.0, c as f64 + 2.0, Some(c));
            assert!(s.arrived.len() <= 2 * 2 + COMPACT_SLACK, "{} arrivals held at call {c}", s.arrived.len());
        }
        assert!(s.unclaimed((0, 0)));
        s.launch(5, 7.0);
        assert_eq!(s.launches.len(), 2);
        s.compact();
        assert_eq!(s.arrived, VecDeque::from([(0, 0), (5, 1_000_001)]));
        let (_, note) = s.finish();
        assert_eq!(note, None);
    }

    #[test]
    fn late_events_and_given_up_launches_are_said() {
        let mut s = StreamedWaits::default();
        for i in 0..=WAITS_HELD as u64 + 1 {
            s.event(0, 7, 10.0 * i as f64, 10.0 * i as f64 + 1.0, None);
        }
        // Before every retired one.
        s.event(0, 7, -5.0, -4.0, None);
        for c in 0..=WAITS_LAUNCHES as u64 {
            s.launch(1_000_000 + c, 0.0);
        }
        let (w, note) = s.finish();
        assert_eq!(w.unwrap().streams[0].events, WAITS_HELD as u64 + 2);
        let note = note.unwrap();
        assert!(note.contains("1 kernels or copies reached the reader after"), "{note}");
        assert!(note.contains("1 launch calls waited past"), "{note}");
        assert_eq!(StreamedWaits::default().finish(), (None, None));
    }
}
