//! `fusionscope calib` run as a user would.

use crate::common::{data, json, run, temp_dir};

#[test]
fn json_has_the_issue_keys() {
    let v = json(&["calib", &data("calibration/i7_12700k_with_fusion.json"), "--json"]);
    assert_eq!(v["hardware"], "i7-12700K");
    let first = &v["patterns"][0];
    assert_eq!(first["fusion_pattern"], "Linear_Bias");
    // serde_json's default float parsing may be 1 ulp off the file's digits.
    assert!((first["speedup_factor"].as_f64().unwrap() - 0.9853798707361283).abs() < 1e-12);
    assert!((first["memory_reduction"].as_f64().unwrap() - 0.33322486169866583).abs() < 1e-12);
    assert_eq!(first["verdict"], "minimal");
    assert_eq!(v["patterns"][8]["verdict"], "slower");
    assert_eq!(v["patterns"][8]["verdict_text"], "fusion is slower");
}

#[test]
fn profile_without_fusion_profiles_gives_empty_patterns() {
    let v = json(&["calib", &data("calibration/jetson_orin_nano_gpu_pytorch.json"), "--json"]);
    assert_eq!(v["hardware"], "Jetson Orin Nano (GPU)");
    assert_eq!(v["patterns"], serde_json::json!([]));
}

#[test]
fn measured_subgraph_file_lists_subgraphs() {
    let v = json(&["calib", &data("calibration/resnet18_b1.json"), "--json"]);
    assert_eq!(v["hardware"], "jetson_orin_30w");
    assert_eq!(v["kind"], "measured_subgraphs");
    assert_eq!(v["patterns"], serde_json::json!([]));
    assert_eq!(v["subgraphs"].as_array().unwrap().len(), 32);
}

#[test]
fn readable_tables_by_default() {
    let (code, out, _) = run(&["calib", &data("calibration/i7_12700k_with_fusion.json")]);
    assert_eq!(code, 0);
    assert!(out.contains("theoretical peak") && out.contains("1280 GFLOP/s"), "{out}");
    let sdpa = out.lines().find(|l| l.starts_with("FullAttention_SDPA")).unwrap();
    assert!(sdpa.contains("0.715×") && sdpa.contains("fusion is slower"), "{sdpa}");
}

#[test]
fn errors_are_one_line_with_exit_code_2() {
    let dir = temp_dir("fusionscope-calib");
    let bad = dir.join("bad.json");
    std::fs::write(&bad, "{\"fusion_profiles\": {\n  \"P\": {\"operators\": [\"Linear\"]}\n}}").unwrap();
    let (code, _, err) = run(&["calib", bad.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("bad.json") && err.contains("\"P\" has no speedup_factor"), "{err}");
    let (code, _, err) = run(&["calib", dir.join("missing.json").to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(err.contains("cannot read"), "{err}");
}
