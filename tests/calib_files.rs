//! The calibration reader on the real profiles in tests/data/calibration and on edge cases.

use crate::common::data_text;
use fusionscope::calib::{
    matching_pattern, parse_calibration, CalibReport, CalibrationFile, CalibrationProfile, Verdict,
};
use fusionscope::fusion::OpType::{Elementwise, Matmul, Reduction, Reshape};
use proptest::prelude::*;

fn profile(name: &str) -> CalibrationProfile {
    match parse_calibration(&data_text(&format!("calibration/{name}"))).unwrap() {
        CalibrationFile::Profile(p) => p,
        CalibrationFile::Measured(_) => panic!("{name} read as a measured-subgraph file"),
    }
}

#[test]
fn i7_profile_has_nine_patterns_with_their_measured_figures() {
    let p = profile("i7_12700k_with_fusion.json");
    assert_eq!(p.metadata.hardware_name.as_deref(), Some("i7-12700K"));
    assert_eq!(p.theoretical_peak_gflops, Some(1280.0));
    assert_eq!(p.theoretical_bandwidth_gbps, Some(89.6));
    let names: Vec<&str> = p.fusion_patterns.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "Linear_Bias",
            "Linear_Bias_ReLU",
            "Linear_Bias_GELU",
            "Conv2d_ReLU",
            "Conv2d_BN",
            "Conv2d_BN_ReLU",
            "QK_AttentionScores",
            "QK_Softmax",
            "FullAttention_SDPA"
        ]
    );
    let lb = &p.fusion_patterns[0];
    assert!((lb.speedup_factor - 0.9853798707361283).abs() < 1e-12);
    assert!((lb.memory_reduction.unwrap() - 0.33322486169866583).abs() < 1e-12);
    assert_eq!(lb.unfused_memory_bytes, Some(12587008));
    // GFLOPS change: 457.87 - 464.66 GFLOP/s, -1.46 % (the file's gflops_improvement is -0.01462).
    assert!((lb.gflops_change().unwrap() - (457.8696673948132 - 464.6631020103562)).abs() < 1e-9);
    assert!((lb.gflops_change_pct().unwrap() - -1.4620129263871785).abs() < 1e-6);
    let verdicts: Vec<Verdict> = p.fusion_patterns.iter().map(|f| Verdict::of_speedup(f.speedup_factor)).collect();
    assert_eq!(verdicts[..8], [Verdict::Minimal; 8]);
    assert_eq!(verdicts[8], Verdict::Slower, "FullAttention_SDPA measured 0.71x");
}

#[test]
fn jetson_profile_without_fusion_profiles_loads_with_its_hardware() {
    let p = profile("jetson_orin_nano_gpu_pytorch.json");
    assert_eq!(p.metadata.hardware_name.as_deref(), Some("Jetson Orin Nano (GPU)"));
    assert_eq!(p.metadata.device_type.as_deref(), Some("cuda"));
    assert!(p.fusion_patterns.is_empty());
    assert_eq!(p.operation_profiles.len(), 52);
    let pm = p.precision_matrix.as_ref().unwrap();
    assert_eq!(pm.peak_gflops_by_precision[0].0, "fp64");
    assert!((pm.peak_gflops_by_precision[0].1 - 5.03883167598338).abs() < 1e-12);
    assert!(matching_pattern(&p, &[Matmul, Elementwise]).is_none());
}

#[test]
fn resnet18_measured_subgraphs_are_recognised() {
    let CalibrationFile::Measured(m) = parse_calibration(&data_text("calibration/resnet18_b1.json")).unwrap() else {
        panic!("resnet18_b1.json should read as measured subgraphs");
    };
    assert_eq!(m.hardware_id.as_deref(), Some("jetson_orin_30w"));
    assert_eq!(m.subgraphs.len(), 32);
    assert_eq!(m.model_summary.as_ref().unwrap().num_subgraphs, Some(32));
    let first = &m.subgraphs[0];
    assert_eq!(first.fusion_pattern, "Conv2d_BatchNorm2d_ReLU");
    assert_eq!(first.node_names, ["conv1", "bn1", "relu"]);
    assert_eq!(first.total_bytes, Some(3851520));
    assert_eq!(first.measured_latency.unwrap().samples, Some(50));
    let report = CalibReport::new(&CalibrationFile::Measured(m));
    assert!(report.patterns.is_empty());
    assert_eq!(report.subgraphs.len(), 32);
}

#[test]
fn calibrated_matching_on_the_real_profiles() {
    let i7 = profile("i7_12700k_with_fusion.json");
    // Three patterns are matmul + elementwise + elementwise; the slowest measured one is used.
    assert_eq!(matching_pattern(&i7, &[Matmul, Elementwise, Elementwise]).unwrap().name, "Linear_Bias_ReLU");
    assert_eq!(matching_pattern(&i7, &[Matmul, Reshape, Elementwise]).unwrap().name, "Linear_Bias");
    assert!(matching_pattern(&i7, &[Matmul, Reduction]).is_none(), "QK_Softmax cannot be a seed group");
    assert!(matching_pattern(&i7, &[Elementwise, Elementwise]).is_none());
    let test = profile("test_fusion_integration.json");
    // Here GELU (1.00092x) measured below ReLU (1.00137x).
    assert_eq!(matching_pattern(&test, &[Matmul, Elementwise, Elementwise]).unwrap().name, "Linear_Bias_GELU");
}

#[test]
fn report_json_of_each_real_file() {
    for name in ["i7_12700k_with_fusion.json", "test_fusion_integration.json", "jetson_orin_nano_gpu_pytorch.json"] {
        let report = CalibReport::new(&parse_calibration(&data_text(&format!("calibration/{name}"))).unwrap());
        insta::assert_json_snapshot!(format!("calib_report_{}", name.trim_end_matches(".json")), report);
    }
}

#[test]
fn profile_edge_cases() {
    // Extra keys anywhere, no metadata, speedup from latencies.
    let f = parse_calibration(
        r#"{"extra": [1, {"x": null}], "fusion_profiles": {"Linear_Bias": {"unfused_latency_ms": 3.0,
            "fused_latency_ms": 1.5, "new_field": "ignored"}}}"#,
    )
    .unwrap();
    assert_eq!(f.hardware(), "unknown hardware");
    let report = CalibReport::new(&f);
    assert_eq!(report.patterns[0].speedup_factor, 2.0);
    assert_eq!(report.patterns[0].verdict, Verdict::Strong);
    assert_eq!(report.patterns[0].memory_reduction, None);
    // A wrong type names the line.
    let e = parse_calibration("{\"fusion_profiles\": {\n\"P\": {\"speedup_factor\": \"fast\"}}}").unwrap_err();
    assert!(e.to_string().starts_with("malformed JSON at line 2"), "{e}");
    assert!(parse_calibration("").is_err());
    assert!(parse_calibration("null").is_err());
}

fn truncations(text: &str) -> impl Iterator<Item = &str> {
    (0..=text.len()).step_by(97).filter(|&i| text.is_char_boundary(i)).map(move |i| &text[..i])
}

#[test]
fn every_truncation_of_a_real_profile_is_an_error_not_a_panic() {
    let text = data_text("calibration/i7_12700k_with_fusion.json");
    for t in truncations(&text) {
        assert!(parse_calibration(t).is_err(), "a truncated file parsed: {} bytes", t.len());
    }
}

proptest! {
    #[test]
    fn random_text_never_panics(s in "\\PC{0,200}") {
        let _ = parse_calibration(&s);
    }

    #[test]
    fn random_json_values_never_panic(s in r#"\{("(metadata|fusion_profiles|subgraphs|operators|speedup_factor|x)": ?(null|-?[0-9]{1,3}(\.[0-9])?|"a"|\[\]|\{\}|\{"P": ?\{"speedup_factor": ?-?[0-9]\}\}),? ?){0,4}\}"#) {
        if let Ok(f) = parse_calibration(&s) {
            let _ = CalibReport::new(&f);
        }
    }
}
