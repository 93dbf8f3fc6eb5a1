//! The Inductor re-prediction on synthetic traces (docs/trace-fusion.md): the boundaries the
//! Inductor-like rules draw between adjacent Inductor kernels, and how a kernel missed again is
//! counted.

use crate::trace_fusion::{fusion_of, synthetic};
use fusionscope::analysis::trace_fusion::BuiltIn;
use fusionscope::formats::read_trace;

/// An Inductor kernel's launch of 10 µs with float buffers of these dims.
fn float_kernel(name: &'static str, dims: &str) -> (&'static str, String, String, f64) {
    let n = serde_json::from_str::<Vec<serde_json::Value>>(dims).unwrap().len();
    (name, dims.to_string(), serde_json::to_string(&vec!["float"; n]).unwrap(), 10.0)
}

/// Four adjacent Inductor kernels, two of which the Inductor-like rules would fuse.
fn adjacent_inductor_kernels() -> [(&'static str, String, String, f64); 4] {
    [
        // A pointwise add over [64, 64]…
        float_kernel("triton_poi_fused_add_0", "[[64, 64], [64, 64]]"),
        // …then a sum over [128, 64]: another iteration space and no input of A's size: apart.
        float_kernel("triton_red_fused_sum_1", "[[128, 64], [128]]"),
        // A multiply of the sum's [128] output: the reduction's output is another size: apart.
        float_kernel("triton_poi_fused_mul_2", "[[128], [128]]"),
        // An add over the same [128] reading the multiply's output: the rules fuse the two, where
        // Inductor made two kernels.
        float_kernel("triton_poi_fused_add_3", "[[128], [128]]"),
    ]
}

#[test]
fn reprediction_draws_boundaries_between_adjacent_inductor_kernels() {
    let ops = adjacent_inductor_kernels();
    let trace = read_trace(&synthetic(&ops)).unwrap();
    let f = fusion_of(&trace, BuiltIn::Inductor, None);
    let r = f.reprediction.unwrap();
    assert_eq!((r.kernels, r.matched, r.isolated), (4, 2, 0), "{r:?}");
    let reasons: Vec<(&str, &str)> = r.misses.iter().map(|m| (m.kernel.as_str(), m.reason.as_str())).collect();
    assert!(
        reasons.iter().any(|(k, why)| k.ends_with("triton_poi_fused_mul_2") && why.contains("kernel after")),
        "{reasons:?}"
    );
    assert!(
        reasons.iter().any(|(k, why)| k.ends_with("triton_poi_fused_add_3") && why.contains("kernel before")),
        "{reasons:?}"
    );
}

#[test]
fn a_kernel_missed_again_counts_once_more_with_its_first_reason() {
    // The four kernels of the test above, run three times: the same two misses each time.
    let once = adjacent_inductor_kernels();
    let ops: Vec<_> = (0..3).flat_map(|_| once.iter().cloned()).collect();
    // Each run's kernels named alike (the helper numbers every kernel).
    let mut text = String::from_utf8(synthetic(&ops)).unwrap();
    for i in (0..ops.len()).rev() {
        text = text.replace(&format!("\"kernel_{i}_"), "\"kernel_");
    }
    let trace = read_trace(text.as_bytes()).unwrap();
    let r = fusion_of(&trace, BuiltIn::Inductor, None).reprediction.unwrap();
    assert_eq!((r.kernels, r.matched), (12, 6), "{r:?}");
    let misses: Vec<(&str, u64, &str)> =
        r.misses.iter().map(|m| (m.kernel.as_str(), m.count, m.reason.as_str())).collect();
    assert_eq!(misses.len(), 2, "{misses:?}");
    // Equal counts: by name.
    assert!(misses[0].0.ends_with("triton_poi_fused_add_3") && misses[0].1 == 3, "{misses:?}");
    assert!(misses[0].2.contains("kernel before"), "{misses:?}");
    assert!(misses[1].0.ends_with("triton_poi_fused_mul_2") && misses[1].1 == 3, "{misses:?}");
    assert!(misses[1].2.contains("kernel after"), "{misses:?}");
}
