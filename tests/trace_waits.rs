//! Why the GPU waits: the idle time between kernels on each stream, split by cause, equals
//! HolisticTraceAnalysis's idle time breakdown on the same traces (figures made with HTA 0.5.0
//! by `scripts/hta-reference`, kept in `tests/data/reference/hta/`), when times are taken as
//! HTA takes them (rounded to the µs); and the exact figures the product reports differ from
//! those only by that rounding.

use crate::common::{data_bytes, data_text};
use fusionscope::analysis::time::waits::{waits, waits_with, Clock, WaitTimes};
use fusionscope::formats::read_trace;
use fusionscope::trace::Trace;

/// The trace as HTA reads it: with two or more `ProfilerStep`s, only the GPU work whose launch
/// call the trace records, made before the last step ended (HTA keeps the kernels "launched by
/// the CPU kernels in the traced iterations"); a window, not part of the definitions.
fn as_hta_reads(mut trace: Trace) -> Trace {
    let steps: Vec<(f64, String)> = trace
        .annotations
        .iter()
        .filter(|a| !a.gpu && trace.name(a.name).starts_with("ProfilerStep#"))
        .map(|a| (a.ts + a.dur, trace.name(a.name).to_string()))
        .collect();
    let mut names: Vec<&String> = steps.iter().map(|s| &s.1).collect();
    names.sort_unstable();
    names.dedup();
    if names.len() < 2 {
        return trace;
    }
    let end = steps.iter().map(|s| s.0).fold(f64::MIN, f64::max);
    let launched = |c: Option<u64>| c.and_then(|c| trace.launches.get(&c)).is_some_and(|l| l.ts <= end);
    let kernels = trace.kernels.iter().filter(|k| launched(k.correlation)).copied().collect();
    let transfers = trace.transfers.iter().filter(|t| launched(t.correlation)).copied().collect();
    (trace.kernels, trace.transfers) = (kernels, transfers);
    trace
}

fn reference() -> serde_json::Value {
    serde_json::from_str(&data_text("reference/hta/idle_time_breakdown.json")).unwrap()
}

#[test]
fn the_idle_split_per_stream_is_htas_within_one_percent() {
    let reference = reference();
    let traces = reference["traces"].as_object().unwrap();
    assert!(traces.len() >= 9);
    let mut wrong = Vec::new();
    for (rel, streams) in traces {
        let trace = as_hta_reads(read_trace(&data_bytes(rel)).unwrap());
        let ours = waits_with(&trace, &[], Clock::HtaRounded).unwrap();
        for (stream, hta) in streams.as_object().unwrap() {
            let stream: i64 = stream.parse().unwrap();
            let mine: Vec<WaitTimes> = ours.streams.iter().filter(|s| s.stream == stream).map(|s| s.times()).collect();
            let [mine] = mine[..] else { panic!("{rel}: stream {stream} on {} devices", mine.len()) };
            let h = |k: &str| hta[k].as_f64().unwrap();
            let total = h("host_wait") + h("kernel_wait") + h("other");
            // 1 % of the stream's idle time, and at least 1 µs (HTA rounds each figure).
            let tolerance = (0.01 * total).max(1.0);
            for (name, mine, theirs) in [
                ("host wait", mine.host_wait_us, h("host_wait")),
                ("kernel wait", mine.kernel_wait_us, h("kernel_wait")),
                ("other", mine.other_us, h("other")),
            ] {
                if (mine - theirs).abs() > tolerance {
                    wrong.push(format!(
                        "{rel} stream {stream} {name}: {mine:.1} µs here, {theirs:.1} µs by HTA (idle {total:.0} µs)"
                    ));
                }
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn the_exact_figures_differ_from_htas_only_by_its_rounding() {
    // HTA rounds each kernel's start up and end down to the µs: every gap grows by up to 2 µs.
    for rel in ["traces/nvidia/hf_qwen1.5-0.5b_eager_h100.json.gz", "traces/amd/hf_qwen1.5-0.5b_eager_mi300x.json.gz"] {
        let trace = read_trace(&data_bytes(rel)).unwrap();
        let (exact, rounded) = (waits(&trace, &[]).unwrap(), waits_with(&trace, &[], Clock::HtaRounded).unwrap());
        let gaps: u64 = exact.streams.iter().map(|s| s.events.saturating_sub(1)).sum();
        let grown = rounded.total().total_us() - exact.total().total_us();
        assert!(grown >= 0.0 && grown <= 2.0 * gaps as f64, "{rel}: {grown:.1} µs over {gaps} gaps");
        assert!(exact.total().total_us() > 0.0, "{rel}");
    }
}
