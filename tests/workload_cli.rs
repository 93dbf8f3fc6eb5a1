//! `fusionscope model` and `fusionscope simcsv` run as a user would run them.

use crate::common::{data, json, run, temp_dir, TempDir};

/// A tiny Llama-shaped config (GQA 4:2) so the snapshot stays one small layer.
const TINY: &str = r#"{"model_name": "tiny-llama", "model_type": "llm", "d_model": 64, "num_heads": 4, "num_kv_heads": 2,
  "d_head": 16, "d_ff": 128, "num_layers": 2, "ffn_type": "llama", "global_batch_size": 1, "input_seqlen": 32, "output_seqlen": 8}"#;

/// The config written in a folder of its own (removed when the folder is dropped).
fn tiny_file() -> (TempDir, std::path::PathBuf) {
    let dir = temp_dir("fusionscope-workload-cli");
    let path = dir.join("tiny.json");
    std::fs::write(&path, TINY).unwrap();
    (dir, path)
}

#[test]
fn model_json_has_the_issue_keys() {
    let chip = data("models/chips/tpuv5p.json");
    let v = json(&[
        "model",
        "--model",
        "llama3-8b",
        "--chip",
        &chip,
        "--phase",
        "prefill",
        "--batch",
        "1",
        "--seq-len",
        "1024",
        "--output-len",
        "128",
        "--tp",
        "1",
        "--json",
    ]);
    assert_eq!(v["model"], "llama3-8b");
    assert_eq!(v["chip"], "TPU v5p");
    assert_eq!(v["phase"], "prefill");
    assert_eq!(v["layers"], 32);
    let per_layer = v["per_layer_flops"].as_u64().unwrap();
    assert_eq!(v["total_flops"].as_u64().unwrap(), 32 * per_layer);
    let op = &v["ops"][1];
    assert_eq!(op["name"], "layer0.q_proj");
    assert_eq!(op["op_type"], "matmul");
    assert_eq!(op["flops"], 2u64 * 1024 * 4096 * 4096);
    assert_eq!(op["bound"], "compute");
    assert!(op["time_us"].as_f64().unwrap() > 0.0 && op["bytes"].as_u64().unwrap() > 0);
    assert!(v["analysis"]["groups"].as_array().unwrap().len() > 1);
    let (unfused, fused) = (v["time_us"]["unfused"].as_f64().unwrap(), v["time_us"]["fused"].as_f64().unwrap());
    assert!(fused > 0.0 && fused < unfused);
    assert!(v.get("simulator").is_none());
}

#[test]
fn model_json_snapshot_of_one_small_layer() {
    let (_dir, path) = tiny_file();
    let v = json(&["model", "--model", path.to_str().unwrap(), "--chip", "h100", "--phase", "decode", "--json"]);
    // The keys docs/time-model.md §6 lists and the op table; per-group details and grouping
    // reasons have their own tests (and the fusion module's snapshots), so the snapshot stays
    // small.
    let keep = serde_json::json!({
        "model": v["model"], "chip": v["chip"], "phase": v["phase"], "layers": v["layers"], "steps": v["steps"],
        "params": v["params"], "per_layer_flops": v["per_layer_flops"], "total_flops": v["total_flops"],
        "ops": v["ops"], "time_us": v["time_us"],
        "analysis": {"groups": v["analysis"]["groups"], "unfused": v["analysis"]["unfused"], "fused": v["analysis"]["fused"]},
    });
    assert_eq!(v["groups"].as_array().unwrap().len(), v["analysis"]["groups"].as_array().unwrap().len());
    assert!(!v["roofline"]["points"].as_array().unwrap().is_empty());
    insta::assert_json_snapshot!("model_tiny_llama_decode_h100", keep);
}

#[test]
fn csv_prints_the_op_table() {
    let (code, out, err) = run(&["model", "--model", "llama3-8b", "--chip", "tpuv5p", "--seq-len", "128", "--csv"]);
    assert_eq!(code, 0, "{err}");
    let mut lines = out.lines();
    assert_eq!(lines.next().unwrap(), "name,op_type,group,runs,flops,bytes,flop_per_byte,time_us,bound");
    assert!(lines.next().unwrap().starts_with("layer0.attn_norm,reduction,1,32,"));
    assert_eq!(out.lines().count(), 1 + 21);
}

#[test]
fn text_output_has_units_and_the_simulator_side_by_side() {
    let csv = data("ops-csv/llama3-8b_inference_tpuv5p_1chip_bs1_in1024_out128_prefill.csv");
    let (code, out, err) = run(&[
        "model",
        "--model",
        "llama3-8b",
        "--chip",
        "TPU v5p",
        "--seq-len",
        "1024",
        "--output-len",
        "128",
        "--simcsv",
        &csv,
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("peak 445.64 TFLOP/s, HBM 2765 GB/s"), "{out}");
    assert!(out.contains("464.05 GFLOP per layer"), "{out}");
    assert!(out.contains("simulator side by side"));
    assert!(out.contains("ffn_gate        120.26 GFLOP     1.000"), "{out}");
}

#[test]
fn simcsv_subcommand_groups_by_fusion_index() {
    let csv = data("ops-csv/llama3-8b_inference_tpuv5p_1chip_bs1_in1024_out128_decode.csv");
    let (code, out, err) = run(&["simcsv", &csv]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("16 ops in 10 fusion groups"), "{out}");
    let v = json(&["simcsv", &csv, "--json"]);
    assert_eq!(v["groups"].as_array().unwrap().len(), 10);
}

#[test]
fn errors_are_one_line_and_name_the_input() {
    // P100: a chip no preset covers (V100 now has one).
    let (code, _, err) = run(&["model", "--model", "llama3-8b", "--chip", "p100"]);
    assert_eq!(code, 2);
    assert!(err.starts_with("fusionscope: --chip p100: no such file, and not a chip preset"), "{err}");
    assert_eq!(err.lines().count(), 1);
    let (code, _, err) = run(&["model", "--model", "nope-7b", "--chip", "h100"]);
    assert_eq!(code, 2);
    assert!(err.contains("--model nope-7b"), "{err}");
    let (code, _, err) = run(&["model", "--model", "dit-xl", "--chip", "h100", "--phase", "decode"]);
    assert_eq!(code, 2);
    assert!(err.contains("decode phase does not apply"), "{err}");
    let bad = data("ops-csv/../models/models/llama3-8b.json");
    let (code, _, err) = run(&["simcsv", &bad]);
    assert_eq!(code, 2);
    assert!(err.contains("llama3-8b.json") && err.contains("Fusion index"), "{err}");
    let (code, _, err) = run(&["model", "--model", "gligen", "--chip", "h100"]);
    assert_eq!(code, 2);
    assert!(err.contains("not modelled"), "{err}");
}

#[test]
fn calibration_profile_replaces_matching_groups() {
    let calib = data("calibration/i7_12700k_with_fusion.json");
    let args = ["model", "--model", "llama3-8b", "--chip", "h100", "--seq-len", "256"];
    let plain = json(&[&args[..], &["--json"]].concat());
    let v = json(&[&args[..], &["--calib", &calib, "--json"]].concat());
    assert_eq!(v["calibration"]["hardware"], "i7-12700K");
    let calibrated = v["calibration"]["calibrated_groups"].as_array().unwrap();
    // q, k (matmul + RoPE), o_proj + residual, gate + SiLU·mul, down + residual: matmul +
    // elementwise, whose lowest measured speedup is Linear_Bias (0.985 < 1: flagged).
    assert_eq!(calibrated.len(), 5);
    for c in calibrated {
        assert_eq!(c["pattern"], "Linear_Bias");
        assert_eq!(c["fusion_slower"], true);
        let g = &v["groups"][c["group"].as_u64().unwrap() as usize];
        let expect = g["unfused_us"].as_f64().unwrap() / c["speedup"].as_f64().unwrap();
        assert!((g["fused_us"].as_f64().unwrap() - expect).abs() < 1e-9);
    }
    // Uncalibrated groups keep the roofline time; the unfused total does not change.
    assert!(v["groups"][0]["calibration"].is_null());
    assert_eq!(v["groups"][0]["fused_us"], plain["groups"][0]["fused_us"]);
    assert_eq!(v["time_us"]["unfused"], plain["time_us"]["unfused"]);
    let (code, out, _) = run(&[&args[..], &["--calib", &calib]].concat());
    assert_eq!(code, 0);
    assert!(out.contains("Linear_Bias (fusing here is slower on this hardware)"), "{out}");
    let measured = data("calibration/resnet18_b1.json");
    let (code, _, err) = run(&[&args[..], &["--calib", &measured]].concat());
    assert_eq!(code, 2);
    assert!(err.contains("resnet18_b1.json") && err.contains("measured-subgraph"), "{err}");
}
