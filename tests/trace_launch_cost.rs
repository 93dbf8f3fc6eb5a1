//! Launch cost: what launching kernels costs the host, checked against HolisticTraceAnalysis's
//! kernel launch statistics on the same traces (figures made with HTA 0.5.0 by
//! `scripts/hta-reference`, kept in `tests/data/reference/hta/launch_stats.json`), with times
//! taken as HTA takes them (each start rounded up and each end down to the µs) and the kernels
//! HTA counts (those launched by `cudaLaunchKernel` or `cudaLaunchKernelExC`).

use crate::common::{data_bytes, data_text};
use fusionscope::analysis::time::launch_cost::launch_cost;
use fusionscope::analysis::time::timeline::DeviceBusy;
use fusionscope::formats::read_trace;
use fusionscope::trace::Trace;

/// The trace as HTA's launch statistics read it: its kernels launched by the two calls it
/// counts, and every time rounded as HTA rounds them.
fn as_hta_reads(mut trace: Trace) -> Trace {
    let counted = |c: Option<u64>| {
        c.and_then(|c| trace.launches.get(&c))
            .is_some_and(|l| matches!(trace.name(l.name), "cudaLaunchKernel" | "cudaLaunchKernelExC"))
    };
    let mut kernels: Vec<_> = trace.kernels.iter().filter(|k| counted(k.correlation)).copied().collect();
    for k in &mut kernels {
        let (start, end) = (k.ts.ceil(), (k.ts + k.dur).floor());
        (k.ts, k.dur) = (start, end - start);
    }
    trace.kernels = kernels;
    let ids: Vec<u64> = trace.kernels.iter().filter_map(|k| k.correlation).collect();
    for id in ids {
        let mut l = trace.launches[&id];
        let (start, end) = (l.ts.ceil(), (l.ts + l.dur).floor());
        (l.ts, l.dur) = (start, end - start);
        trace.launches.insert(id, l);
    }
    trace.launches.settle();
    trace
}

#[test]
fn calls_cpu_time_latency_and_small_kernels_are_htas() {
    let reference: serde_json::Value = serde_json::from_str(&data_text("reference/hta/launch_stats.json")).unwrap();
    let traces = reference["traces"].as_object().unwrap();
    assert!(traces.len() >= 4, "HTA found launches in {} traces", traces.len());
    let mut wrong = Vec::new();
    for (rel, hta) in traces {
        let trace = as_hta_reads(read_trace(&data_bytes(rel)).unwrap());
        let ours =
            launch_cost(&trace, &[], DeviceBusy::of(&trace)).unwrap_or_else(|| panic!("{rel}: no launch cost")).whole;
        let h = |k: &str| hta[k].as_f64().unwrap();
        for (name, mine, theirs) in [
            ("kernels", ours.launched_kernels as f64, h("kernels")),
            ("CPU in calls", ours.launch_cpu_us, h("cpu_us")),
            ("latency median", ours.latency_median_us, h("delay_median_us")),
            ("latency p90", ours.latency_p90_us, h("delay_p90_us")),
            ("kernels shorter than their launch", ours.small.kernels as f64, h("shorter_than_launch")),
        ] {
            if (mine - theirs).abs() > (0.01 * theirs.abs()).max(1e-6) {
                wrong.push(format!("{rel}: {name}: ours {mine}, HTA's {theirs}"));
            }
        }
    }
    assert!(wrong.is_empty(), "not within 1 % of HTA:\n{}", wrong.join("\n"));
}

#[test]
fn a_real_trace_s_launch_cost_adds_up() {
    let trace = read_trace(&data_bytes("traces/nvidia/hf_qwen1.5-0.5b_eager_h100.json.gz")).unwrap();
    let report = launch_cost(&trace, &[], DeviceBusy::of(&trace)).unwrap();
    let c = &report.whole;
    // Every kernel of the profiled step has its launch call; none is a graph node.
    let launched = trace.kernels.iter().filter(|k| k.correlation.is_some_and(|id| trace.launches.get(&id).is_some()));
    assert_eq!(c.launched_kernels, launched.count() as u64);
    assert!(c.calls <= c.launched_kernels && c.calls > 0);
    assert!((c.per_launch_us * c.calls as f64 - c.launch_cpu_us).abs() < 0.01 * c.launch_cpu_us);
    assert!(c.latency_median_us <= c.latency_p90_us);
    let hb = &c.host_bound;
    assert!(hb.idle_us <= hb.span_us && hb.kernels >= 3 * hb.stretches);
    let longest = hb.longest.as_ref().unwrap();
    assert!(longest.idle_us <= hb.idle_us && longest.kernels >= 3);
    assert!(c.small.kernel_us < c.small.launch_us, "{:?}", c.small);
    // What a graph would remove is the stream's host wait before kernels (the waits' host wait
    // also counts copies'), and holds the stretches' idle time.
    let waits = fusionscope::analysis::time::waits::waits(&trace, &[]).unwrap();
    assert!(c.graph_saving_us <= waits.host_wait_us + 1e-3 && c.graph_saving_us >= hb.idle_us, "{c:?}");
}

/// A graph gives back only idle time: on every real trace with launch calls, what it would
/// remove is within the device's idle time. The SGLang prefill launches its step in the first
/// millisecond and the GPU starts it at 493 ms: the copy stream's 523 ms gap across it is
/// no launch wait, and 1.24 ms is left (stream 3's own host waits and its copy's).
#[test]
fn a_graph_removes_no_more_than_the_idle_time_and_none_while_work_is_queued() {
    for (file, at_most) in [
        ("amd/sglang_qwen3-8b_prefilldecode_mi300x.json.gz", Some(1_300.0)),
        ("nvidia/hta_a100_compiled_rank0.json.gz", None),
        ("nvidia/tracelens_eager_b200.json.gz", None),
        ("nvidia/hf_qwen1.5-0.5b_eager_h100.json.gz", None),
        ("amd/vllm_decode_graph_full_capture.json.gz", None),
    ] {
        let v = crate::common::json(&["trace", &crate::common::data(&format!("traces/{file}")), "--json"]);
        let saving = v["launch_cost"]["graph_saving_us"].as_f64().unwrap();
        let idle = v["timeline"]["idle_us"].as_f64().unwrap();
        assert!(saving > 0.0 && saving <= idle + 1e-3, "{file}: a graph would remove {saving} µs of {idle} µs idle");
        if let Some(most) = at_most {
            assert!(saving <= most, "{file}: {saving} µs");
        }
    }
}

#[test]
fn the_sqlite_reader_keeps_each_call_s_duration() {
    // (rocprofv3's JSON sample records no HIP calls; its reader's own tests check theirs.)
    let rel = "formats/nsys/pipit_saxpy_mpi_a100.sqlite";
    let bytes = data_bytes(rel);
    let trace = fusionscope::import::read_trace_of(fusionscope::import::detect(&bytes), &bytes).unwrap();
    let report = launch_cost(&trace, &[], DeviceBusy::of(&trace))
        .unwrap_or_else(|| panic!("{rel}: no launch call joined to a kernel"));
    assert!(report.whole.launch_cpu_us > 0.0, "{rel}: {:?}", report.whole);
}
