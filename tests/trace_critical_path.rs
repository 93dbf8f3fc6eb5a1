//! The critical path of a step on real traces: its parts add up to its length, which the step's
//! window bounds, and it lands on the side the idle split says the step waits on (a GPU-bound
//! Qwen step on the GPU, a host-bound BERT step on the CPU).

use crate::common::data_bytes;
use fusionscope::analysis::time::critical_path::critical_paths;
use fusionscope::analysis::time::waits::waits;
use fusionscope::formats::read_trace;
use fusionscope::trace::Trace;

/// The GPU-side `ProfilerStep` windows, as the time report takes them.
fn steps(trace: &Trace) -> Vec<(String, f64, f64)> {
    let mut w: Vec<(String, f64, f64)> = trace
        .annotations
        .iter()
        .filter(|a| a.gpu && trace.name(a.name).starts_with("ProfilerStep#"))
        .map(|a| (trace.name(a.name).to_string(), a.ts, a.ts + a.dur))
        .collect();
    w.sort_by(|a, b| a.1.total_cmp(&b.1));
    w
}

#[test]
fn each_path_s_parts_add_up_to_its_length_inside_its_window() {
    for rel in [
        "traces/nvidia/hf_qwen1.5-0.5b_eager_h100.json.gz",
        "traces/nvidia/hf_bert-small_eager_h100.json.gz",
        "traces/amd/hf_qwen1.5-0.5b_eager_mi300x.json.gz",
        "traces/amd/sglang_qwen3-8b_prefilldecode_mi300x.json.gz",
        "traces/nvidia/hta_a100_compiled_rank0.json.gz",
        "multirank/hta_nccl_a100_rank0_of2.json.gz",
    ] {
        let trace = read_trace(&data_bytes(rel)).unwrap();
        let windows = steps(&trace);
        let paths = critical_paths(&trace, &windows);
        assert_eq!(paths.len(), windows.len().max(1), "{rel}");
        for (p, w) in paths.iter().zip(windows.iter().map(Some).chain(std::iter::repeat(None))) {
            let parts = p.gpu_us + p.cpu_us + p.launch_us + p.other_us;
            assert!((parts - p.length_us).abs() <= 0.01, "{rel} {}: parts {parts} of {}", p.window, p.length_us);
            assert!(p.kernels + p.calls > 0 && p.length_us > 0.0, "{rel}: {p:?}");
            if let Some((_, start, end)) = w {
                assert!(
                    p.length_us <= end - start + 1e-3,
                    "{rel} {}: {} in a {} µs window",
                    p.window,
                    p.length_us,
                    end - start
                );
            }
            let top: f64 = p.top.iter().map(|i| i.time_us).sum();
            assert!(top <= p.length_us + 0.01, "{rel}: {:?}", p.top);
        }
        // The longest path keeps its events for the drawing: in time order, inside the path,
        // not overlapping, and (where none was left out) adding up to its kernels' and calls' time.
        let longest = paths.iter().map(|p| p.length_us).fold(0.0, f64::max);
        let drawn: Vec<_> = paths.iter().filter(|p| !p.drawn.is_empty()).collect();
        assert_eq!(drawn.len(), 1, "{rel}");
        let p = drawn[0];
        assert_eq!(p.length_us, longest, "{rel}");
        assert!(p.drawn.len() <= fusionscope::analysis::time::critical_path::DRAWN_EVENTS);
        for e in &p.drawn {
            assert!(0.0 <= e.start_us && e.start_us < e.end_us && e.end_us <= p.length_us + 1e-3, "{rel}: {e:?}");
        }
        assert!(p.drawn.windows(2).all(|w| w[0].end_us <= w[1].start_us + 1e-3), "{rel}");
        if p.drawn.len() as u64 == p.kernels + p.calls {
            let own: f64 = p.drawn.iter().map(|e| e.end_us - e.start_us).sum();
            let host_between = p.cpu_us
                - p.drawn
                    .iter()
                    .filter(|e| matches!(e.lane, fusionscope::analysis::time::critical_path::Lane::Cpu { .. }))
                    .map(|e| e.end_us - e.start_us)
                    .sum::<f64>();
            assert!((own + host_between + p.launch_us + p.other_us - p.length_us).abs() <= 0.05, "{rel}");
        }
    }
}

#[test]
fn a_gpu_bound_step_s_path_is_on_the_gpu_and_a_host_bound_one_s_on_the_cpu() {
    let qwen = read_trace(&data_bytes("traces/nvidia/hf_qwen1.5-0.5b_eager_h100.json.gz")).unwrap();
    let p = &critical_paths(&qwen, &steps(&qwen))[0];
    assert!(p.gpu_us > 0.8 * p.length_us, "{p:?}");
    let bert = read_trace(&data_bytes("traces/nvidia/hf_bert-small_eager_h100.json.gz")).unwrap();
    // Its stream's gaps are all host wait (the idle split): the path runs through the host.
    let w = waits(&bert, &[]).unwrap();
    assert!(w.host_wait_us >= 0.99 * w.total().total_us());
    let p = &critical_paths(&bert, &steps(&bert))[0];
    assert!(p.cpu_us > 0.9 * p.length_us, "{p:?}");
    assert!(p.top.iter().any(|i| i.side == "cpu" && i.name.starts_with("aten::")), "{:?}", p.top);
}
