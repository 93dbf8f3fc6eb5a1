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
//! Each device's busy time is its timeline's union ([`DeviceBusy`]) and its queued spans are
//! merged once (a sort); each gap then costs searches from where the last one ended and a walk
//! over the queued spans it overlaps: O(n log n) in the events, however many step windows ask.

use std::collections::BTreeMap;

use crate::time::timeline::{DeviceBusy, Intervals};
use trace::search::partition_point_from;
use trace::Trace;

/// A span where work was queued on a device (from a launch call's end to its event's start),
/// disjoint from the device's others, in start order, with whose work it was.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Queued {
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

/// Every device's spans of queued work.
///
/// The raw spans are one per event, 16 bytes each: they are gathered into vectors allocated
/// once, at their events' count (on a trace of 430,000 kernels, growing them by doubling
/// beside the busy spans held about 40 MB).
pub(super) fn queued_spans(trace: &Trace) -> BTreeMap<i64, Vec<Queued>> {
    let events = || {
        let kernels = trace.kernels.iter().map(|k| (k.device, Some(k.stream), k.ts, k.dur, k.correlation));
        kernels.chain(trace.transfers.iter().map(|t| (t.device, t.stream, t.ts, t.dur, t.correlation)))
    };
    // Counted without looking the calls up (a search each): an event whose call is missing
    // only leaves room unused.
    let with_call = events()
        .filter_map(|(device, stream, _, _, correlation)| Some((device, stream.filter(|_| correlation.is_some())?)));
    let queued = gathered(
        with_call,
        events().filter_map(|(device, stream, ts, _, correlation)| {
            let call = correlation.and_then(|c| trace.launches.get(&c))?;
            Some(((device, stream?), (call.ts + call.dur, ts)))
        }),
    );
    // Each stream's spans merged, then the device's streams swept together; a device with one
    // stream of queued work needs no sweep: its merged spans are the device's.
    let mut streams: BTreeMap<i64, Vec<(i64, Intervals)>> = BTreeMap::new();
    for ((device, stream), spans) in queued {
        streams.entry(device).or_default().push((stream, Intervals::union(spans)));
    }
    let mut out = BTreeMap::new();
    for (device, merged) in streams {
        let queued = match merged.as_slice() {
            [(stream, spans)] => {
                spans.spans().iter().map(|&(start, end)| Queued { start, end, only: Some(*stream) }).collect()
            }
            _ => {
                let mut edges = Vec::with_capacity(merged.iter().map(|(_, m)| 2 * m.spans().len()).sum());
                for (stream, spans) in &merged {
                    edges.extend(spans.spans().iter().flat_map(|&(s, t)| [(s, *stream, true), (t, *stream, false)]));
                }
                drop(merged);
                sweep(edges)
            }
        };
        out.insert(device, queued);
    }
    out
}

/// `items`' values by key, each key's vector allocated once, at the count of that key in
/// `keys` (at least its length). Events of one device or stream come in runs, so the map is
/// looked up once per run, not once per event.
fn gathered<K: Ord + Copy, V>(
    keys: impl Iterator<Item = K>,
    items: impl Iterator<Item = (K, V)>,
) -> BTreeMap<K, Vec<V>> {
    let mut counts: BTreeMap<K, usize> = BTreeMap::new();
    let mut run: Option<(K, usize)> = None;
    for k in keys {
        match &mut run {
            Some((key, n)) if *key == k => *n += 1,
            _ => {
                if let Some((key, n)) = run.replace((k, 1)) {
                    *counts.entry(key).or_default() += n;
                }
            }
        }
    }
    if let Some((key, n)) = run {
        *counts.entry(key).or_default() += n;
    }
    let mut out: BTreeMap<K, Vec<V>> = counts.into_iter().map(|(k, n)| (k, Vec::with_capacity(n))).collect();
    // The current run's vector, taken out of the map until its key changes.
    let mut current: Option<(K, Vec<V>)> = None;
    for (k, v) in items {
        match &mut current {
            Some((key, list)) if *key == k => list.push(v),
            _ => {
                if let Some((key, list)) = current.take() {
                    out.insert(key, list);
                }
                let mut list = out.get_mut(&k).map(std::mem::take).unwrap_or_default();
                list.push(v);
                current = Some((k, list));
            }
        }
    }
    if let Some((key, list)) = current {
        out.insert(key, list);
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

/// The time of `gaps` a graph gives back, µs, summed over devices, against the devices' busy
/// time and queued work.
pub(super) fn given_back(gaps: &[HostGap], busy: &DeviceBusy, queued: &BTreeMap<i64, Vec<Queued>>) -> f64 {
    // Before each gap's submission, by stream (whose own queued work does not count); after it.
    let mut before: BTreeMap<(i64, i64), Vec<(f64, f64)>> = BTreeMap::new();
    let mut after: BTreeMap<i64, Vec<(f64, f64)>> = BTreeMap::new();
    for g in gaps.iter().filter(|g| g.to > g.from) {
        let cut = g.submitted.clamp(g.from, g.to);
        before.entry((g.device, g.stream)).or_default().push((g.from, cut));
        after.entry(g.device).or_default().push((cut, g.to));
    }
    for ((device, stream), spans) in before {
        let queued = queued.get(&device).map_or(&[][..], Vec::as_slice);
        let waits = Intervals::union(spans);
        after.entry(device).or_default().extend(unqueued(waits.spans(), queued, stream));
    }
    let none = Intervals::default();
    after
        .into_iter()
        .map(|(device, waits)| {
            let busy = busy.device(device).unwrap_or(&none);
            // Each wait less the busy time within it: searches from where the last one ended
            // (the waits are in time order), so a step window's figure does not walk the
            // device's whole busy time.
            let mut from = 0;
            let waits = Intervals::union(waits);
            waits.spans().iter().map(|&(s, e)| (e - s - busy.within_from(s, e, &mut from)).max(0.0)).sum::<f64>()
        })
        .sum()
}

/// What of `spans` (disjoint, in start order) no stream but `stream` had work queued over: each
/// span a search into `queued` from where the last one ended and a walk over the segments it
/// overlaps.
fn unqueued(spans: &[(f64, f64)], queued: &[Queued], stream: i64) -> Vec<(f64, f64)> {
    let mut out = Vec::with_capacity(spans.len());
    let mut first = 0;
    for &(s, e) in spans {
        let mut at = s;
        first = partition_point_from(queued, first, |q| q.end <= s);
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

    /// Runs of one key and keys coming back after others gather as a map would gather them,
    /// each vector allocated at its key's count.
    #[test]
    fn gathered_groups_by_key_in_order() {
        let keys = [3, 3, 1, 3, 2, 2, 1, 1];
        let got = gathered(keys.iter().copied(), keys.iter().copied().zip(0..));
        let want: BTreeMap<i32, Vec<i32>> = [(1, vec![2, 6, 7]), (2, vec![4, 5]), (3, vec![0, 1, 3])].into();
        assert_eq!(got, want);
        assert_eq!(got[&3].capacity(), 3);
        // An item whose key was not counted still gathers.
        assert_eq!(gathered([1].into_iter(), [(1, 'a'), (9, 'b')].into_iter())[&9], ['b']);
    }

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

    /// A device whose one stream had work queued takes that stream's merged spans as they are,
    /// which is what the sweep makes of them; with two streams the sweep tells them apart.
    #[test]
    fn one_stream_needs_no_sweep() {
        use trace::{Kernel, Launch};
        let mut t = Trace::default();
        let (name, call) = (t.names.intern("k"), t.names.intern("cudaLaunchKernel"));
        // (stream, start, launch call's start): stream 7's queued spans 1–10 and 2–12 merge.
        for (i, (stream, ts, call_ts)) in [(7, 10.0, 0.0), (7, 12.0, 1.0), (7, 30.0, 20.0)].into_iter().enumerate() {
            let correlation = Some(i as u64);
            t.kernels.push(Kernel {
                name,
                ts,
                dur: 1.0,
                device: 0,
                stream,
                correlation,
                external_id: None,
                graph_node: false,
            });
            t.launches.insert(
                i as u64,
                Launch { name: call, kernel: Some(name), external_id: None, ts: call_ts, dur: 1.0, tid: 1 },
            );
        }
        let one = &queued_spans(&t)[&0];
        let edges = vec![(1.0, 7, true), (12.0, 7, false), (21.0, 7, true), (30.0, 7, false)];
        assert_eq!(*one, sweep(edges));
        assert_eq!(DeviceBusy::of(&t).device(0).unwrap().spans(), [(10.0, 11.0), (12.0, 13.0), (30.0, 31.0)]);
        // A second stream's work queued 5–8 splits stream 7's first span.
        t.kernels.push(Kernel {
            name,
            ts: 8.0,
            dur: 1.0,
            device: 0,
            stream: 9,
            correlation: Some(3),
            external_id: None,
            graph_node: false,
        });
        t.launches.insert(3, Launch { name: call, kernel: Some(name), external_id: None, ts: 4.0, dur: 1.0, tid: 1 });
        let q = |start, end, only| Queued { start, end, only };
        let two = &queued_spans(&t)[&0];
        assert_eq!(two[..3], [q(1.0, 5.0, Some(7)), q(5.0, 8.0, None), q(8.0, 12.0, Some(7))]);
    }
}
