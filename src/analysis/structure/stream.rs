//! Which kernels the structure is read from: one device's main stream. Kernels of two devices
//! (ranks of a tensor-parallel run) or of a side stream (a copy stream, an all-reduce stream)
//! interleave in time; put into one sequence they would break every repeat, so the search reads
//! the device with the most kernels and, on it, the stream with the most, and counts the rest.

use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

use trace::Trace;

/// The kernels the structure is read from, and what was left out.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StreamChoice {
    pub device: i64,
    pub stream: i64,
    /// Indices into `trace.kernels`, in start order.
    pub kernels: Vec<usize>,
    /// Every device that ran kernels and how many, in order of its first kernel.
    pub devices: Vec<(i64, usize)>,
    /// Kernels of the chosen device on its other streams.
    pub other_streams: usize,
}

/// Counts by key in order of first appearance; the first of the largest counts wins.
fn largest(keys: impl Iterator<Item = i64>) -> (Option<i64>, Vec<(i64, usize)>) {
    let mut index: FxHashMap<i64, usize> = FxHashMap::default();
    let mut counts: Vec<(i64, usize)> = Vec::new();
    for k in keys {
        let i = *index.entry(k).or_insert_with(|| {
            counts.push((k, 0));
            counts.len() - 1
        });
        counts[i].1 += 1;
    }
    let best = counts.iter().fold(None::<(i64, usize)>, |b, &c| match b {
        Some(b) if b.1 >= c.1 => Some(b),
        _ => Some(c),
    });
    (best.map(|b| b.0), counts)
}

/// The main stream of the busiest device; `None` for a trace without kernels.
pub fn main_stream(trace: &Trace) -> Option<StreamChoice> {
    let (device, devices) = largest(trace.kernels.iter().map(|k| k.device));
    let device = device?;
    let (stream, streams) = largest(trace.kernels.iter().filter(|k| k.device == device).map(|k| k.stream));
    let stream = stream?;
    let kernels: Vec<usize> = (0..trace.kernels.len())
        .filter(|&i| trace.kernels[i].device == device && trace.kernels[i].stream == stream)
        .collect();
    let other_streams = streams.iter().filter(|s| s.0 != stream).map(|s| s.1).sum();
    Some(StreamChoice { device, stream, kernels, devices, other_streams })
}

#[cfg(test)]
mod tests {
    use super::*;
    use formats::read_trace;

    #[test]
    fn busiest_device_then_busiest_stream() {
        let k = |pid: i64, stream: i64, ts: u32| {
            format!(
                r#"{{"ph":"X","cat":"kernel","name":"k","pid":{pid},"ts":{ts},"dur":1,"args":{{"stream":{stream}}}}}"#
            )
        };
        let events = [k(0, 7, 1), k(1, 3, 2), k(1, 3, 3), k(1, 9, 4), k(0, 7, 5), k(1, 3, 6)];
        let t = read_trace(format!(r#"{{"traceEvents":[{}]}}"#, events.join(",")).as_bytes()).unwrap();
        let s = main_stream(&t).unwrap();
        assert_eq!((s.device, s.stream, s.kernels.clone()), (1, 3, vec![1, 2, 5]));
        assert_eq!(s.devices, vec![(0, 2), (1, 4)]);
        assert_eq!(s.other_streams, 1);
        assert_eq!(main_stream(&read_trace(br#"{"traceEvents":[]}"#).unwrap()), None);
    }
}
