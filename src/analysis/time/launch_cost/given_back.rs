//! What capturing the work in a CUDA/HIP graph gives back of the host wait before launched
//! kernels (`super`, "what a graph would remove"): only time the device ran nothing and had
//! nothing queued.
//!
//! - A stream's gap while another stream of the device works gives back nothing: a stream with
//!   two copies half a second apart, beside a stream busy between them, is no half second a
//!   graph saves.
//! - Two streams waiting at once wait once.
//! - Until the call that ends a gap has submitted its kernel, the device idling with another
//!   stream's work queued (launched, not yet started) is not waiting on this host's launches:
//!   in the SGLang prefill trace of the test data, all of a step's kernels are launched in its
//!   first millisecond and start from 493 ms on, and the copy stream's gap across them is not
//!   493 ms a graph would save. From the submission to the kernel's start the wait is the
//!   launch's own latency, which a graph's nodes do not have.
//!
//! Each device's spans are merged once (a sort, with prefix sums of the busy time); each gap
//! then costs binary searches and a walk over the queued spans it overlaps: O(n log n) in the
//! events, however many step windows ask.

use std::collections::BTreeMap;

use crate::time::timeline::Intervals;
use trace::Trace;

/// One device's busy spans (kernels, copies and sets of every stream, graph nodes and kernels
/// without a recorded call too), disjoint and in start order, and the spans where work was
/// queued on it (from a launch call's end to its event's start), each with whose.
#[derive(Debug, Default)]
pub(super) struct DeviceSpans {
    busy: Intervals,
    queued: Vec<Queued>,
}

/// A span of queued work, disjoint from the others, in start order.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Queued {
    start: f64,
    end: f64,
    /// The one stream with work queued, or `None` for several.
    only: Option<i64>,
}

/// A stream's host wait: idle `from`, the launch call that ended it returned at `submitted`,
/// and its event started at `to`.
#[derive(Debug, Clone, Copy)]
pub(super) struct HostGap {
    pub device: i64,
    pub stream: i64,
    pub from: f64,
    pub submitted: f64,
    pub to: f64,
}

/// Every device's spans.
pub(super) fn device_spans(trace: &Trace) -> BTreeMap<i64, DeviceSpans> {
    let mut busy: BTreeMap<i64, Vec<(f64, f64)>> = BTreeMap::new();
    let mut queued: BTreeMap<(i64, i64), Vec<(f64, f64)>> = BTreeMap::new();
    let kernels = trace.kernels.iter().map(|k| (k.device, Some(k.stream), k.ts, k.dur, k.correlation));
    let copies = trace.transfers.iter().map(|t| (t.device, t.stream, t.ts, t.dur, t.correlation));
    for (device, stream, ts, dur, correlation) in kernels.chain(copies) {
        busy.entry(device).or_default().push((ts, ts + dur));
        let call = correlation.and_then(|c| trace.launches.get(&c));
        if let (Some(stream), Some(call)) = (stream, call) {
            queued.entry((device, stream)).or_default().push((call.ts + call.dur, ts));
        }
    }
    let mut out: BTreeMap<i64, DeviceSpans> =
        busy.into_iter().map(|(d, b)| (d, DeviceSpans { busy: Intervals::union(b), queued: Vec::new() })).collect();
    // Each stream's spans merged, then the device's streams swept together.
    let mut edges: BTreeMap<i64, Vec<(f64, i64, bool)>> = BTreeMap::new();
    for ((device, stream), spans) in queued {
        let e = edges.entry(device).or_default();
        for &(s, t) in Intervals::union(spans).spans() {
            e.extend([(s, stream, true), (t, stream, false)]);
        }
    }
    for (device, e) in edges {
        out.entry(device).or_default().queued = sweep(e);
    }
    out
}

/// Disjoint spans of queued work from each stream's span edges `(time, stream, opens)`, each
/// saying whether one stream or several had work queued. Ends sort before starts at one time;
/// the open streams' ids are summed, so with one open the sum is its id.
fn sweep(mut edges: Vec<(f64, i64, bool)>) -> Vec<Queued> {
    edges.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.2.cmp(&b.2)));
    let mut out: Vec<Queued> = Vec::new();
    let (mut open, mut ids, mut since) = (0usize, 0i128, f64::MIN);
    for (t, stream, opens) in edges {
        if open > 0 && t > since {
            out.push(Queued { start: since, end: t, only: (open == 1).then_some(ids as i64) });
        }
        if opens {
            open += 1;
            ids += i128::from(stream);
        } else {
            open = open.saturating_sub(1);
            ids -= i128::from(stream);
        }
        since = t;
    }
    out
}

/// The time of `gaps` a graph gives back, µs, summed over devices.
pub(super) fn given_back(gaps: &[HostGap], devices: &BTreeMap<i64, DeviceSpans>) -> f64 {
    // Before each gap's submission, by stream (whose own queued work does not count); after it.
    let mut before: BTreeMap<(i64, i64), Vec<(f64, f64)>> = BTreeMap::new();
    let mut after: BTreeMap<i64, Vec<(f64, f64)>> = BTreeMap::new();
    for g in gaps.iter().filter(|g| g.to > g.from) {
        let cut = g.submitted.clamp(g.from, g.to);
        before.entry((g.device, g.stream)).or_default().push((g.from, cut));
        after.entry(g.device).or_default().push((cut, g.to));
    }
    let none = DeviceSpans::default();
    for ((device, stream), spans) in before {
        let d = devices.get(&device).unwrap_or(&none);
        let waits = Intervals::union(spans);
        after.entry(device).or_default().extend(unqueued(waits.spans(), &d.queued, stream));
    }
    after
        .into_iter()
        .map(|(device, waits)| {
            let d = devices.get(&device).unwrap_or(&none);
            // Each wait less the busy time within it: binary searches, so a step window's
            // figure does not walk the device's whole busy time.
            Intervals::union(waits).spans().iter().map(|&(s, e)| (e - s - d.busy.within(s, e)).max(0.0)).sum::<f64>()
        })
        .sum()
}

/// What of `spans` (disjoint, in start order) no stream but `stream` had work queued over: each
/// span a binary search into `queued` and a walk over the segments it overlaps.
fn unqueued(spans: &[(f64, f64)], queued: &[Queued], stream: i64) -> Vec<(f64, f64)> {
    let mut out = Vec::with_capacity(spans.len());
    for &(s, e) in spans {
        let mut at = s;
        let first = queued.partition_point(|q| q.end <= s);
        let others = queued[first..].iter().take_while(|q| q.start < e).filter(|q| q.only != Some(stream));
        for q in others {
            if q.start > at {
                out.push((at, q.start));
            }
            at = at.max(q.end);
        }
        if e > at {
            out.push((at, e));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_span_keeps_what_no_other_stream_had_queued() {
        let q = |start, end, only| Queued { start, end, only };
        let queued = [q(2.0, 3.0, Some(4)), q(5.0, 6.0, Some(7)), q(6.0, 8.0, None), q(9.0, 20.0, Some(4))];
        // Stream 7's own queued work is no other stream's.
        assert_eq!(unqueued(&[(0.0, 10.0)], &queued, 7), [(0.0, 2.0), (3.0, 6.0), (8.0, 9.0)]);
        assert_eq!(unqueued(&[(3.0, 5.0), (10.0, 12.0)], &queued, 4), [(3.0, 5.0), (10.0, 12.0)]);
        assert_eq!(unqueued(&[(0.0, 1.0)], &[], 4), [(0.0, 1.0)]);
    }

    #[test]
    fn the_sweep_says_which_stream_alone_had_work_queued() {
        // Stream 3 at 0–10, stream 5 at 4–6 and 10–12.
        let edges =
            vec![(0.0, 3, true), (10.0, 3, false), (4.0, 5, true), (6.0, 5, false), (10.0, 5, true), (12.0, 5, false)];
        let q = |start, end, only| Queued { start, end, only };
        assert_eq!(
            sweep(edges),
            [q(0.0, 4.0, Some(3)), q(4.0, 6.0, None), q(6.0, 10.0, Some(3)), q(10.0, 12.0, Some(5))]
        );
    }
}
