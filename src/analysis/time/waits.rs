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

use crate::summary::round3;
use trace::Trace;

/// HTA's `consecutive_kernel_delay`: a gap shorter than this, after a launch that came in time,
/// is the cost of launching back to back. HTA documents it as 30 ns, but compares it with
/// times in µs, so 30 µs is what it applies; this is that figure.
pub const LAUNCH_GAP_US: f64 = 30.0;

/// The host-wait test, one definition for the idle split, the launch cost and the launches an
/// opportunity removes: the stream went idle at `idle_from`, and the event that ended the gap
/// (starting at `start`) was launched by a call made after that, so the stream waited on the host.
pub(crate) fn waited_on_host(idle_from: f64, call_start: f64, start: f64) -> bool {
    start > idle_from && call_start > idle_from
}

/// Idle time between kernels, by cause, µs.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
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
    pub(crate) fn rounded(self) -> WaitTimes {
        WaitTimes {
            host_wait_us: round3(self.host_wait_us),
            kernel_wait_us: round3(self.kernel_wait_us),
            other_us: round3(self.other_us),
        }
    }

    pub(crate) fn add(&mut self, other: &WaitTimes) {
        self.host_wait_us += other.host_wait_us;
        self.kernel_wait_us += other.kernel_wait_us;
        self.other_us += other.other_us;
    }
}

/// One stream's waits (its figures are a [`WaitTimes`]'s, written out: serde's `flatten`
/// would cost the page's download several KB).
#[derive(Debug, Clone, PartialEq)]
pub struct StreamWaits {
    /// The device, as the trace numbers it.
    pub device: i64,
    pub stream: i64,
    /// Kernels and copies on the stream (gaps: one fewer).
    pub events: u64,
    pub host_wait_us: f64,
    pub kernel_wait_us: f64,
    pub other_us: f64,
}

/// One step's waits: the part of every stream's gaps inside the step's window.
#[derive(Debug, Clone, PartialEq)]
pub struct StepWaits {
    /// The window, named as the timeline's steps are (`ProfilerStep#6`).
    pub window: String,
    pub host_wait_us: f64,
    pub kernel_wait_us: f64,
    pub other_us: f64,
}

/// Every stream's waits, their sum, and each step's.
#[derive(Debug, Clone, PartialEq)]
pub struct Waits {
    pub host_wait_us: f64,
    pub kernel_wait_us: f64,
    pub other_us: f64,
    /// Every stream that ran kernels or copies, by device and stream.
    pub streams: Vec<StreamWaits>,
    /// Each `ProfilerStep` window's share of the gaps, summed over the streams (`[]` when the
    /// trace has no step annotation).
    pub steps: Vec<StepWaits>,
}

impl Waits {
    /// The sum over the streams.
    pub fn total(&self) -> WaitTimes {
        WaitTimes { host_wait_us: self.host_wait_us, kernel_wait_us: self.kernel_wait_us, other_us: self.other_us }
    }
}

impl StreamWaits {
    pub fn times(&self) -> WaitTimes {
        WaitTimes { host_wait_us: self.host_wait_us, kernel_wait_us: self.kernel_wait_us, other_us: self.other_us }
    }
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

/// The waits of every stream of `trace`, and of each step window `(name, start, end)` (a gap
/// counts in a window for the part of it inside); `None` when it ran no kernel or copy.
pub fn waits(trace: &Trace, windows: &[(String, f64, f64)]) -> Option<Waits> {
    waits_with(trace, windows, Clock::Exact)
}

/// How an event time is taken: as it is, or rounded up or down (HTA's clock).
type Rounding = fn(f64) -> f64;

/// A kernel or copy on its stream: start, end and its launch call's start (µs), where known.
type StreamEvent = (f64, f64, Option<f64>);

/// [`waits`], with event times taken as `clock` says.
pub fn waits_with(trace: &Trace, windows: &[(String, f64, f64)], clock: Clock) -> Option<Waits> {
    let (up, down): (Rounding, Rounding) = match clock {
        Clock::Exact => (|t| t, |t| t),
        Clock::HtaRounded => (f64::ceil, f64::floor),
    };
    let mut by_stream: BTreeMap<(i64, i64), Vec<StreamEvent>> = BTreeMap::new();
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
    let mut sorted: Vec<&(String, f64, f64)> = windows.iter().collect();
    sorted.sort_by(|a, b| a.1.total_cmp(&b.1));
    let mut steps = vec![WaitTimes::default(); sorted.len()];
    // The latest end among the windows up to each one.
    let reach: Vec<f64> = sorted
        .iter()
        .scan(f64::MIN, |end, w| {
            *end = end.max(w.2);
            Some(*end)
        })
        .collect();
    let streams = by_stream
        .into_iter()
        .map(|((device, stream), mut kernels)| {
            // A stable sort by start: kernels and copies each come sorted, and keep that order on ties.
            kernels.sort_by(|a, b| a.0.total_cmp(&b.0));
            let times = stream_waits(&kernels, |from, to, cause| {
                // The windows starting before the gap ends, back to the first that cannot
                // reach it (no window before it ends after the gap starts).
                let last = sorted.partition_point(|w| w.1 < to);
                for i in (0..last).rev() {
                    if reach[i] <= from {
                        break;
                    }
                    let inside = to.min(sorted[i].2) - from.max(sorted[i].1);
                    if inside > 0.0 {
                        steps[i].add_to(cause, inside);
                    }
                }
            });
            total.add(&times);
            let WaitTimes { host_wait_us, kernel_wait_us, other_us } = times.rounded();
            StreamWaits { device, stream, events: kernels.len() as u64, host_wait_us, kernel_wait_us, other_us }
        })
        .collect();
    let steps = sorted
        .iter()
        .zip(steps)
        .map(|(w, t)| {
            let WaitTimes { host_wait_us, kernel_wait_us, other_us } = t.rounded();
            StepWaits { window: w.0.clone(), host_wait_us, kernel_wait_us, other_us }
        })
        .collect();
    let WaitTimes { host_wait_us, kernel_wait_us, other_us } = total.rounded();
    Some(Waits { host_wait_us, kernel_wait_us, other_us, streams, steps })
}

/// Why a stream waited through one gap.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Cause {
    Host,
    Kernel,
    Other,
}

impl WaitTimes {
    pub(crate) fn add_to(&mut self, cause: Cause, us: f64) {
        match cause {
            Cause::Host => self.host_wait_us += us,
            Cause::Kernel => self.kernel_wait_us += us,
            Cause::Other => self.other_us += us,
        }
    }
}

/// The waits of one stream's events, `(start, end, launch call's start)` in start order; each
/// gap `(from, to, cause)` is also handed to `gap`.
fn stream_waits(events: &[(f64, f64, Option<f64>)], mut gap: impl FnMut(f64, f64, Cause)) -> WaitTimes {
    let mut w = WaitTimes::default();
    for pair in events.windows(2) {
        let (prev_end, (start, _, launch)) = (pair[0].1, pair[1]);
        if let Some((cause, length)) = gap_cause(prev_end, start, launch) {
            w.add_to(cause, length);
            gap(prev_end, start, cause);
        }
    }
    w
}

/// The gap between an event that ended at `prev_end` and the next on its stream, starting at
/// `start` and launched by a call that started at `launch`: its cause and length; `None` when
/// the two touch or overlap.
pub(crate) fn gap_cause(prev_end: f64, start: f64, launch: Option<f64>) -> Option<(Cause, f64)> {
    let length = start - prev_end;
    if length <= 0.0 {
        return None;
    }
    let cause = if launch.is_some_and(|l| waited_on_host(prev_end, l, start)) {
        Cause::Host
    } else if length < LAUNCH_GAP_US {
        Cause::Kernel
    } else {
        Cause::Other
    };
    Some((cause, length))
}

/// The JSON form of [`Waits`] (the keys of `docs/trace-analysis.md`, "Why the GPU waits"),
/// written and read by hand through `serde_json::Value`, as `fusion_dag` is: derived serde code
/// would be built once per serializer and deserializer the page uses, several KB of its first
/// download for three small structs.
pub mod as_value {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};
    use serde_json::{json, Map, Value};

    use super::{StepWaits, StreamWaits, WaitTimes, Waits};

    fn times(t: WaitTimes) -> Map<String, Value> {
        let mut m = Map::new();
        m.insert("host_wait_us".into(), json!(t.host_wait_us));
        m.insert("kernel_wait_us".into(), json!(t.kernel_wait_us));
        m.insert("other_us".into(), json!(t.other_us));
        m
    }

    fn with(mut first: Map<String, Value>, rest: Map<String, Value>) -> Value {
        first.extend(rest);
        Value::Object(first)
    }

    fn to_value(w: &Waits) -> Value {
        let streams: Vec<Value> = w
            .streams
            .iter()
            .map(|s| {
                let head = json!({"device": s.device, "stream": s.stream, "events": s.events});
                with(head.as_object().cloned().unwrap_or_default(), times(s.times()))
            })
            .collect();
        let mut m = times(w.total());
        m.insert("streams".into(), Value::Array(streams));
        if !w.steps.is_empty() {
            let steps = w.steps.iter().map(|s| {
                let t =
                    WaitTimes { host_wait_us: s.host_wait_us, kernel_wait_us: s.kernel_wait_us, other_us: s.other_us };
                with(json!({"window": s.window}).as_object().cloned().unwrap_or_default(), times(t))
            });
            m.insert("steps".into(), Value::Array(steps.collect()));
        }
        Value::Object(m)
    }

    fn times_of(v: &Value) -> Option<WaitTimes> {
        let f = |k: &str| v.get(k)?.as_f64();
        Some(WaitTimes {
            host_wait_us: f("host_wait_us")?,
            kernel_wait_us: f("kernel_wait_us")?,
            other_us: f("other_us")?,
        })
    }

    fn from_value(v: &Value) -> Option<Waits> {
        let list = |k: &str| v.get(k).and_then(Value::as_array).cloned().unwrap_or_default();
        let streams = list("streams")
            .iter()
            .map(|s| {
                let t = times_of(s)?;
                Some(StreamWaits {
                    device: s.get("device")?.as_i64()?,
                    stream: s.get("stream")?.as_i64()?,
                    events: s.get("events")?.as_u64()?,
                    host_wait_us: t.host_wait_us,
                    kernel_wait_us: t.kernel_wait_us,
                    other_us: t.other_us,
                })
            })
            .collect::<Option<_>>()?;
        let steps = list("steps")
            .iter()
            .map(|s| {
                let t = times_of(s)?;
                Some(StepWaits {
                    window: s.get("window")?.as_str()?.to_string(),
                    host_wait_us: t.host_wait_us,
                    kernel_wait_us: t.kernel_wait_us,
                    other_us: t.other_us,
                })
            })
            .collect::<Option<_>>()?;
        let t = times_of(v)?;
        Some(Waits {
            host_wait_us: t.host_wait_us,
            kernel_wait_us: t.kernel_wait_us,
            other_us: t.other_us,
            streams,
            steps,
        })
    }

    #[cfg(test)]
    pub(super) fn to_value_for_tests(w: &Waits) -> Value {
        to_value(w)
    }

    pub fn serialize<S: Serializer>(w: &Option<Waits>, s: S) -> Result<S::Ok, S::Error> {
        w.as_ref().map(to_value).serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Waits>, D::Error> {
        match Option::<Value>::deserialize(d)? {
            None | Some(Value::Null) => Ok(None),
            Some(v) => {
                from_value(&v).map(Some).ok_or_else(|| serde::de::Error::custom("waits: a malformed stream or step"))
            }
        }
    }
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
        let mut gaps = Vec::new();
        let w = stream_waits(&kernels, |from, to, cause| gaps.push((from, to, cause)));
        assert_eq!((w.host_wait_us, w.kernel_wait_us, w.other_us), (5.0, 4.0 + 10.0, 100.0));
        assert_eq!(gaps.len(), 4);
        assert_eq!(gaps[0], (10.0, 15.0, Cause::Host));
        assert_eq!(stream_waits(&kernels[..1], |_, _, _| {}), WaitTimes::default());
    }

    #[test]
    fn each_step_gets_the_part_of_each_gap_inside_it() {
        use trace::Kernel;
        let mut t = Trace::default();
        let name = t.names.intern("k");
        for (ts, dur) in [(0.0, 10.0), (15.0, 5.0), (130.0, 10.0)] {
            let k =
                Kernel { name, ts, dur, device: 0, stream: 7, correlation: None, external_id: None, graph_node: false };
            t.kernels.push(k);
        }
        // Gaps: 10–15 (a launch gap), 20–130 (other). Windows given out of order.
        let windows = [("C".to_string(), 100.0, 200.0), ("A".to_string(), 0.0, 12.0), ("B".to_string(), 12.0, 100.0)];
        let w = waits(&t, &windows).unwrap();
        assert_eq!((w.kernel_wait_us, w.other_us), (5.0, 110.0));
        let steps: Vec<(&str, f64, f64)> =
            w.steps.iter().map(|s| (s.window.as_str(), s.kernel_wait_us, s.other_us)).collect();
        assert_eq!(steps, [("A", 2.0, 0.0), ("B", 3.0, 80.0), ("C", 0.0, 30.0)]);
        assert!(waits(&Trace::default(), &windows).is_none());
        // Its JSON form reads back as it was written.
        let json = serde_json::to_string(&as_value::to_value_for_tests(&w)).unwrap();
        assert!(json.contains(r#""window":"B""#), "{json}");
        let back = as_value::deserialize(&mut serde_json::Deserializer::from_str(&json)).unwrap();
        assert_eq!(back, Some(w));
    }
}
