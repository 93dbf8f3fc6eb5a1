//! Why the GPU waits: the idle time between consecutive kernels on each stream, split by cause
//! as HolisticTraceAnalysis's idle time breakdown splits it (`docs/trace-analysis.md`, "Why
//! the GPU waits").
//!
//! On one stream, kernels and copies in start order, each gap between one's end and the next
//! one's start is:
//! - **host wait** when the next kernel's launch call started after the stream went idle: the
//!   CPU had not yet asked for it;
//! - **kernel wait** when the launch came in time and the gap is shorter than
//!   [`LAUNCH_GAP_US`]: the cost of launching kernels back to back;
//! - **other** otherwise: the stream waited on something else (another stream's kernel, an
//!   event, a synchronisation).
//!
//! A kernel whose launch call the trace does not record (a graph replay's nodes) cannot be a
//! host wait. Gaps are summed per stream; overlapping kernels give no gap. One pass over the
//! kernels after a sort: linear but for the sort.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::model::Trace;
use crate::summary::round3;

/// HTA's `consecutive_kernel_delay`: a gap shorter than this, after a launch that came in time,
/// is the cost of launching back to back. HTA documents it as 30 ns, but compares it with
/// times in µs, so 30 µs is what it applies; this is that figure.
pub const LAUNCH_GAP_US: f64 = 30.0;

/// Idle time between kernels, by cause, µs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct WaitTimes {
    pub host_wait_us: f64,
    pub kernel_wait_us: f64,
    pub other_us: f64,
}

impl WaitTimes {
    pub fn total_us(&self) -> f64 {
        self.host_wait_us + self.kernel_wait_us + self.other_us
    }

    /// The share of the time that is host wait, %; `None` when there is none.
    pub fn host_share(&self) -> Option<f64> {
        let total = self.total_us();
        (total > 0.0).then(|| 100.0 * self.host_wait_us / total)
    }

    /// "98.0 % waiting on the host, 1.5 % back-to-back launch gaps, 0.5 % waiting on other
    /// streams or syncs": the split in words; `None` when no stream was idle between kernels.
    pub fn split_text(&self) -> Option<String> {
        let total = self.total_us();
        (total > 0.0).then(|| {
            let pct = |x: f64| format!("{:.1} %", 100.0 * x / total);
            format!(
                "{} waiting on the host, {} back-to-back launch gaps, {} waiting on other streams or syncs",
                pct(self.host_wait_us),
                pct(self.kernel_wait_us),
                pct(self.other_us)
            )
        })
    }

    /// To the ns, as every time the JSON gives (a sum of many floats carries noise digits).
    fn rounded(self) -> WaitTimes {
        WaitTimes {
            host_wait_us: round3(self.host_wait_us),
            kernel_wait_us: round3(self.kernel_wait_us),
            other_us: round3(self.other_us),
        }
    }

    fn add(&mut self, other: &WaitTimes) {
        self.host_wait_us += other.host_wait_us;
        self.kernel_wait_us += other.kernel_wait_us;
        self.other_us += other.other_us;
    }
}

/// One stream's waits.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StreamWaits {
    /// The device, as the trace numbers it.
    pub device: i64,
    pub stream: i64,
    /// Kernels and copies on the stream (gaps: one fewer).
    pub events: u64,
    #[serde(flatten)]
    pub times: WaitTimes,
}

/// Every stream's waits, and their sum.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Waits {
    #[serde(flatten)]
    pub total: WaitTimes,
    /// Every stream that ran kernels or copies, by device and stream.
    pub streams: Vec<StreamWaits>,
}

/// How event times are taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Clock {
    /// As the trace records them.
    Exact,
    /// As HTA reads them: every start rounded up and every end down to the whole µs (it does
    /// so against overlapping events of nanosecond traces). Each gap grows by up to 2 µs, which
    /// on a trace of many short gaps is much of its idle time: only for checking that the
    /// definitions here are HTA's (`tests/data/reference/hta/`).
    HtaRounded,
}

/// The waits of every stream of `trace`; `None` when it ran no kernel or copy.
pub fn waits(trace: &Trace) -> Option<Waits> {
    waits_with(trace, Clock::Exact)
}

/// [`waits`], with event times taken as `clock` says.
pub fn waits_with(trace: &Trace, clock: Clock) -> Option<Waits> {
    let (up, down): (fn(f64) -> f64, fn(f64) -> f64) = match clock {
        Clock::Exact => (|t| t, |t| t),
        Clock::HtaRounded => (f64::ceil, f64::floor),
    };
    let mut by_stream: BTreeMap<(i64, i64), Vec<(f64, f64, Option<f64>)>> = BTreeMap::new();
    let launch = |correlation: Option<u64>| correlation.and_then(|c| trace.launches.get(&c)).map(|l| up(l.ts));
    for k in &trace.kernels {
        by_stream.entry((k.device, k.stream)).or_default().push((up(k.ts), down(k.ts + k.dur), launch(k.correlation)));
    }
    // Copies and sets take their stream's time too, where the format records their stream.
    for t in &trace.transfers {
        if let Some(stream) = t.stream {
            by_stream.entry((t.device, stream)).or_default().push((
                up(t.ts),
                down(t.ts + t.dur),
                launch(t.correlation),
            ));
        }
    }
    if by_stream.is_empty() {
        return None;
    }
    let mut total = WaitTimes::default();
    let streams = by_stream
        .into_iter()
        .map(|((device, stream), mut kernels)| {
            // A stable sort by start: kernels and copies each come sorted, and keep that order on ties.
            kernels.sort_by(|a, b| a.0.total_cmp(&b.0));
            let times = stream_waits(&kernels);
            total.add(&times);
            StreamWaits { device, stream, events: kernels.len() as u64, times: times.rounded() }
        })
        .collect();
    Some(Waits { total: total.rounded(), streams })
}

/// The waits of one stream's kernels, `(start, end, launch call's start)` in start order.
fn stream_waits(kernels: &[(f64, f64, Option<f64>)]) -> WaitTimes {
    let mut w = WaitTimes::default();
    for pair in kernels.windows(2) {
        let (prev_end, (start, _, launch)) = (pair[0].1, pair[1]);
        let gap = start - prev_end;
        if gap <= 0.0 {
            continue;
        }
        if launch.is_some_and(|l| l > prev_end) {
            w.host_wait_us += gap;
        } else if gap < LAUNCH_GAP_US {
            w.kernel_wait_us += gap;
        } else {
            w.other_us += gap;
        }
    }
    w
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_gap_goes_to_its_cause() {
        let kernels = [
            (0.0, 10.0, Some(0.0)),
            // Launched at 12, after the stream went idle at 10: 5 µs of host wait.
            (15.0, 20.0, Some(12.0)),
            // Launched in time, 4 µs later: a back-to-back launch gap.
            (24.0, 30.0, Some(1.0)),
            // Launched in time, 100 µs later: waiting on something else.
            (130.0, 140.0, Some(2.0)),
            // A graph node with no launch call: never a host wait.
            (150.0, 160.0, None),
            // Overlapping the one before: no gap.
            (155.0, 170.0, Some(3.0)),
        ];
        let w = stream_waits(&kernels);
        assert_eq!((w.host_wait_us, w.kernel_wait_us, w.other_us), (5.0, 4.0 + 10.0, 100.0));
        assert_eq!(stream_waits(&kernels[..1]), WaitTimes::default());
    }
}
