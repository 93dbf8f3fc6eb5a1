//! Fusion in real traces (docs/trace-fusion.md): kernel groups, opportunities and the Inductor
//! re-prediction on the shared traces, the `fusion` JSON of `trace` and `compare`, rule files,
//! and the invariants on random traces.

use crate::common::{data, json, run, temp_dir, trace_bytes};
use fusionscope::analysis::summary::ClassifiedTrace;
use fusionscope::analysis::trace_fusion::{analyse, BuiltIn, Cause, FusionOptions, How, Kind, TraceFusion};
use fusionscope::formats::read_trace;
use fusionscope::hardware::preset;
use fusionscope::trace::Trace;
use proptest::prelude::*;

pub(crate) fn fusion_of(trace: &Trace, rules: BuiltIn, chip: Option<&str>) -> TraceFusion {
    let side = ClassifiedTrace::new(trace);
    let chip = chip.map(|c| preset(c).expect("preset"));
    analyse(
        &side,
        &FusionOptions {
            rules: rules.rules(),
            chip: chip.as_ref(),
            calibration: None,
            exec_trace: None,
            structure: None,
        },
    )
}

pub(crate) fn real(rel: &str) -> Trace {
    read_trace(&trace_bytes(rel)).expect("trace reads")
}

/// Every GPU event is in exactly one group: calls add up to the events, times to GPU time.
#[track_caller]
fn check_partition(trace: &Trace, f: &TraceFusion) {
    let events = (trace.kernels.len() + trace.transfers.len()) as u64;
    assert_eq!(f.groups.iter().map(|g| g.calls).sum::<u64>(), events);
    assert_eq!(f.totals.events, events);
    let gpu: f64 = trace.kernels.iter().map(|k| k.dur).chain(trace.transfers.iter().map(|t| t.dur)).sum();
    let grouped: f64 = f.groups.iter().map(|g| g.time_us).sum();
    assert!((grouped - gpu).abs() <= 1e-3 * f.groups.len() as f64 + 1e-6, "{grouped} vs {gpu}");
    assert!((f.totals.gpu_time_us - gpu).abs() < 1e-2);
}

#[track_caller]
fn check_bytes_and_savings(f: &TraceFusion) {
    for g in &f.groups {
        if let (Some(fused), Some(unfused)) = (g.fused_bytes_per_call, g.unfused_bytes_per_call) {
            assert!(fused <= unfused, "{}: fused {fused} > unfused {unfused}", g.kernel);
        }
        if !g.bytes_known() {
            assert!(g.unknown.is_some(), "{}: bytes unknown without a reason", g.kernel);
        }
    }
    // The GPU time is known or unknown for exactly one cause.
    let (t, u) = (&f.totals, &f.totals.unknown_us);
    let parts = t.bytes_known_us + u.not_recorded + u.no_model + u.bad_input;
    assert!((parts - t.gpu_time_us).abs() <= 1e-2, "{t:?}");
    let recorded = t.gpu_time_us - u.not_recorded;
    assert!((t.shapes_recorded_us - recorded).abs() <= 1e-2, "{t:?}");
    for o in &f.opportunities {
        assert!(o.kernels.len() >= 2 && o.kernels.len() == o.kinds.len() && o.kernels.len() == o.ops.len());
        assert!(o.saved_bytes_per_call > 0, "{o:?}");
        if let Some(saved) = o.saved_us {
            assert!(saved <= o.kernels_time_us, "{o:?}");
        }
        // At most every kernel after the first, in every call.
        assert!(o.launches_removed <= o.calls * (o.kernels.len() as u64 - 1), "{o:?}");
        assert!(o.launch_cpu_us >= 0.0 && o.host_wait_us >= 0.0, "{o:?}");
    }
}

/// The launches an opportunity removes, on a host-bound trace: every kernel after the first of
/// each run was launched by a recorded call, and the host wait before those kernels is part of
/// the stream's host wait (`waits`), no more.
#[test]
fn an_opportunity_counts_the_launches_and_the_host_wait_it_removes() {
    use fusionscope::analysis::time::waits::waits;
    let trace = real("nvidia/hf_bert-small_eager_h100.json.gz");
    let f = fusion_of(&trace, BuiltIn::Inductor, Some("h100"));
    let host_wait = waits(&trace, &[]).unwrap().host_wait_us;
    let norm = f.opportunities.iter().find(|o| o.ops == ["aten::add", "aten::native_layer_norm"]).unwrap();
    assert_eq!(norm.launches_removed, norm.calls);
    assert!(norm.launch_cpu_us > 0.0 && norm.host_wait_us > 0.0, "{norm:?}");
    let removed: f64 = f.opportunities.iter().map(|o| o.host_wait_us).sum();
    assert!(removed <= host_wait + 1e-3, "{removed} of {host_wait}");
    // A graph replay's nodes have no launch call of their own: nothing to remove.
    let graph = fusion_of(&real("amd/vllm_decode_graph_full_replay.json.gz"), BuiltIn::Inductor, Some("mi300x"));
    assert!(graph.opportunities.iter().all(|o| o.launches_removed == 0), "{:?}", graph.opportunities.first());
}

const SHARED: &[&str] = &[
    "nvidia/hf_qwen1.5-0.5b_eager_h100.json.gz",
    "amd/hf_qwen1.5-0.5b_eager_mi300x.json.gz",
    "nvidia/hf_bert-small_eager_h100.json.gz",
    "amd/hf_bert-small_eager_mi300x.json.gz",
    "amd/torch_compile_triton_mi300x.json.gz",
    "nvidia/hta_a100_compiled_rank0.json.gz",
    "amd/vllm_decode_graph_full_replay.json.gz",
];

#[test]
fn every_event_is_in_one_group_and_no_fusion_adds_bytes() {
    for rel in SHARED {
        let trace = real(rel);
        for rules in BuiltIn::ALL {
            let f = fusion_of(&trace, rules, Some("h100"));
            check_partition(&trace, &f);
            check_bytes_and_savings(&f);
        }
    }
}

#[test]
fn eager_pairs_know_the_bytes_of_all_the_time_whose_shapes_are_recorded() {
    for rel in SHARED[..4].iter() {
        let f = fusion_of(&real(rel), BuiltIn::Inductor, None);
        assert!(f.totals.bytes_known_of_recorded_pct >= 95.0, "{rel}: {:?}", f.totals);
    }
    // BERT's trace recorded every op's shapes, and every kernel is known.
    let f = fusion_of(&real("nvidia/hf_bert-small_eager_h100.json.gz"), BuiltIn::Inductor, None);
    assert_eq!(f.totals.bytes_known_pct, 100.0);
}

#[test]
fn qwen_kernels_before_the_cpu_window_say_so() {
    let f = fusion_of(&real("nvidia/hf_qwen1.5-0.5b_eager_h100.json.gz"), BuiltIn::Inductor, None);
    let early: Vec<_> = f.groups.iter().filter(|g| g.launched_by.is_none() && g.how != How::TransferSize).collect();
    assert!(!early.is_empty());
    for g in early {
        assert_eq!(g.how, How::Unknown);
        assert!(g.why_unknown().unwrap().contains("before the profiler's CPU window"), "{g:?}");
        assert_eq!(g.cause(), Some(Cause::NotRecorded));
    }
}

#[test]
fn attention_unfused_adds_the_score_matrix_twice_over() {
    // MI300X torch.compile trace: one `attn_fwd` of `_scaled_dot_product_flash_attention`.
    let f = fusion_of(&real("amd/torch_compile_triton_mi300x.json.gz"), BuiltIn::Inductor, None);
    let attn = f.groups.iter().find(|g| g.kernel == "attn_fwd").expect("attention group");
    assert_eq!(attn.kind, Kind::Attention);
    assert_eq!(attn.parts, ["matmul (Q·Kᵀ)", "softmax", "matmul (·V)"]);
    // `_flash_attention_forward` lays Q, K out [B, N, H, d]; this call is not causal
    // (`is_causal` False in its Concrete Inputs), so every (query head, query, key) is a score.
    let dims: Vec<Vec<u64>> = serde_json::from_value(attn.ops[0].input_dims.as_array().unwrap()[..3].into()).unwrap();
    let (q, k) = (&dims[0], &dims[1]);
    let heads_queries: u64 = q[..3].iter().product();
    let keys = k[1];
    let pairs = heads_queries * keys;
    let extra = attn.unfused_bytes_per_call.unwrap() - attn.fused_bytes_per_call.unwrap();
    // S and P (bf16) each written once and read once.
    assert_eq!(extra, 4 * pairs * 2, "{attn:?}");
}

#[test]
fn compiled_mi300x_kernels_are_their_op_words_and_all_are_repredicted() {
    let f = fusion_of(&real("amd/torch_compile_triton_mi300x.json.gz"), BuiltIn::Inductor, Some("mi300x"));
    let silu = f.groups.iter().find(|g| g.kernel == "triton_poi_fused__unsafe_view_mul_silu_2").unwrap();
    assert_eq!(silu.how, How::KernelName);
    assert_eq!(silu.ops.iter().map(|o| o.op.as_str()).collect::<Vec<_>>(), ["unsafe_view", "mul", "silu"]);
    assert_eq!(silu.parts, ["mul", "silu"]);
    // Buffers [8, 4096, 8192] and [32768, 8192] in bf16, one hand-off of the larger.
    let buffer = 8 * 4096 * 8192 * 2u64;
    assert_eq!(silu.fused_bytes_per_call, Some(2 * buffer));
    assert_eq!(silu.unfused_bytes_per_call, Some(4 * buffer));
    let norm = f.groups.iter().find(|g| g.kernel == "triton_red_fused_add_mean_mul_pow_rsqrt_0").unwrap();
    assert_eq!(norm.kind, Kind::Norm);
    let r = f.reprediction.as_ref().expect("an Inductor trace is re-predicted");
    assert_eq!((r.kernels, r.matched, r.not_expandable), (4, 4, 0));
    assert_eq!(r.matched_pct, Some(100.0));
    // Each sits between hipBLASLt GEMMs or attention: no boundary between two Inductor kernels.
    assert_eq!(r.isolated, 4);
}

#[test]
fn old_inductor_names_are_not_expandable_and_say_so() {
    let f = fusion_of(&real("nvidia/hta_a100_compiled_rank0.json.gz"), BuiltIn::Inductor, None);
    let r = f.reprediction.as_ref().expect("triton kernels are seen");
    assert_eq!((r.kernels, r.matched_pct), (0, None));
    let triton = f.groups.iter().filter(|g| g.kernel.starts_with("triton__")).map(|g| g.calls).sum::<u64>();
    assert_eq!(r.not_expandable, triton);
    assert!(triton > 0);
}

#[test]
fn qwen_eager_leaves_the_rms_norm_and_the_mlp_unfused() {
    let f = fusion_of(&real("nvidia/hf_qwen1.5-0.5b_eager_h100.json.gz"), BuiltIn::Inductor, Some("h100"));
    // The residual add, the cast to fp32 and the RMSNorm's square and mean: what Inductor makes
    // one `triton_red_fused_add_mean_mul_pow_rsqrt` kernel. Two norms per decoder layer (the
    // first layer's first norm has no residual add before it).
    let norm = f
        .opportunities
        .iter()
        .find(|o| o.ops == ["aten::add", "aten::copy_", "aten::pow", "aten::mean"])
        .expect("add → copy_ → pow → mean");
    assert_eq!(norm.calls, 48);
    assert_eq!(norm.kinds, [Kind::Elementwise, Kind::Elementwise, Kind::Elementwise, Kind::Reduction]);
    // Hand-offs: the bf16 sum, its fp32 copy and the fp32 square, each written and read back.
    let pow = f.groups.iter().find(|g| g.launched_by.as_deref() == Some("aten::pow")).unwrap();
    let dims: Vec<u64> = serde_json::from_value(pow.ops[0].input_dims[0].clone()).unwrap();
    let n: u64 = dims.iter().product();
    assert_eq!(norm.saved_bytes_per_call, 2 * (n * 2 + n * 4 + n * 4));
    // The time saved is the bytes at H100's bandwidth.
    let h100 = preset("h100").unwrap();
    let expect = (norm.saved_bytes_per_call * norm.calls) as f64 / h100.hbm_bandwidth * 1e6;
    assert!((norm.saved_us.unwrap() - expect).abs() < 1e-3);
    // Ranked by time saved, this one first.
    let saved: Vec<f64> = f.opportunities.iter().map(|o| o.saved_us.unwrap()).collect();
    assert!(saved.windows(2).all(|w| w[0] >= w[1]), "{saved:?}");
    assert_eq!(f.opportunities[0].ops, norm.ops);
    // The MLP's gate GEMM and its SiLU.
    assert!(f.opportunities.iter().any(|o| o.ops == ["aten::mm", "aten::silu"]));
    // The project's rules keep the GEMM's epilogue (a reduction closes a group, and may not
    // join one with a product), so the residual add stays with the GEMM there.
    let p = fusion_of(&real("nvidia/hf_qwen1.5-0.5b_eager_h100.json.gz"), BuiltIn::Project, Some("h100"));
    assert!(p.opportunities.iter().all(|o| o.ops != norm.ops));
}

#[test]
fn the_project_rules_never_put_a_norm_after_a_product() {
    for rel in SHARED[..4].iter() {
        let f = fusion_of(&real(rel), BuiltIn::Project, None);
        for o in &f.opportunities {
            let after_product = o.kinds.iter().position(|k| *k == Kind::Matmul);
            let reduction = o.kinds.iter().rposition(|k| matches!(k, Kind::Norm | Kind::Reduction | Kind::Softmax));
            if let (Some(p), Some(r)) = (after_product, reduction) {
                assert!(r < p, "{rel}: {o:?}");
            }
        }
    }
}

#[test]
fn capture_joined_replays_get_their_ops() {
    let args = [
        "trace",
        &data("traces/amd/vllm_decode_graph_full_replay.json.gz"),
        "--capture",
        &data("traces/amd/vllm_decode_graph_full_capture.json.gz"),
        "--json",
    ]
    .map(String::from);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let v = json(&args);
    let groups = v["fusion"]["groups"].as_array().unwrap();
    let with_op = groups.iter().filter(|g| !g["launched_by"].is_null()).count();
    assert!(with_op * 10 >= groups.len() * 9, "{with_op} of {}", groups.len());
    // Without the capture every replayed kernel says why it has no ops.
    let v = json(&["trace", &data("traces/amd/vllm_decode_graph_full_replay.json.gz"), "--json"]);
    let reasons: Vec<&str> =
        v["fusion"]["groups"].as_array().unwrap().iter().filter_map(|g| g["bytes_unknown"].as_str()).collect();
    assert!(reasons.iter().any(|r| r.contains("graph replay")), "{reasons:?}");
}

#[test]
fn trace_json_has_the_documented_fusion_keys() {
    let v = json(&["trace", &data("traces/amd/torch_compile_triton_mi300x.json.gz"), "--json"]);
    let f = &v["fusion"];
    for key in ["groups", "totals", "opportunities", "rule_set", "reprediction"] {
        assert!(f.get(key).is_some(), "fusion.{key} missing");
    }
    for key in
        ["kernel", "category", "calls", "time_us", "ops", "fused_bytes_per_call", "unfused_bytes_per_call", "how"]
    {
        assert!(f["groups"][0].get(key).is_some(), "groups[].{key} missing");
    }
    assert_eq!(f["rule_set"], "inductor");
    assert_eq!(f["reprediction"]["matched_pct"], 100.0);
    let hows: Vec<&str> = f["groups"].as_array().unwrap().iter().map(|g| g["how"].as_str().unwrap()).collect();
    assert!(hows.contains(&"kernel name") && hows.contains(&"recorded shapes"), "{hows:?}");
    // The summary's keys are still there beside it.
    assert!(v.get("platforms").is_some());
    // The JSON reads back into the core type (the page carries it).
    let back: TraceFusion = serde_json::from_value(f.clone()).unwrap();
    assert_eq!(back.groups.len(), f["groups"].as_array().unwrap().len());
}

#[test]
fn compare_json_has_each_sides_fusion() {
    let v = json(&[
        "compare",
        &data("traces/amd/hf_bert-small_eager_mi300x.json.gz"),
        &data("traces/nvidia/hf_bert-small_eager_h100.json.gz"),
        "--fusion-rules",
        "project",
        "--json",
    ]);
    let sides = v["fusion"].as_object().unwrap();
    assert_eq!(sides.len(), 2);
    for (key, f) in sides {
        assert_eq!(f["rule_set"], "project", "{key}");
        assert_eq!(f["totals"]["bytes_known_pct"], 100.0, "{key}");
    }
}

#[test]
fn rule_files_and_their_errors() {
    let dir = temp_dir("trace-fusion-rules");
    let good = dir.join("epilogue.json");
    std::fs::write(
        &good,
        r#"{"name": "gemm epilogues", "start": ["matmul"], "joins": [{"next": "elementwise", "after": ["matmul"], "same_size": true, "closes": true}]}"#,
    )
    .unwrap();
    let trace = data("traces/nvidia/hf_bert-small_eager_h100.json.gz");
    let v = json(&["trace", &trace, "--fusion-rules", good.to_str().unwrap(), "--json"]);
    let ops: Vec<&serde_json::Value> = v["fusion"]["opportunities"].as_array().unwrap().iter().collect();
    assert!(!ops.is_empty());
    for o in ops {
        assert_eq!(o["kinds"], serde_json::json!(["matmul", "elementwise"]));
        assert!(o["rule"].as_str().unwrap().starts_with("gemm epilogues: "));
    }
    let bad = dir.join("bad.json");
    std::fs::write(&bad, r#"{"name": "x", "joins": [{"next": "gemm"}]}"#).unwrap();
    let (code, _, stderr) = run(&["trace", &trace, "--fusion-rules", bad.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(stderr.contains("bad.json") && stderr.contains("unknown variant `gemm`"), "{stderr}");
    let (code, _, stderr) = run(&["trace", &trace, "--fusion-rules", "xla"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("unknown rule set \"xla\""), "{stderr}");
}

#[test]
fn text_output_tables() {
    let (code, out, stderr) = run(&["trace", &data("traces/amd/torch_compile_triton_mi300x.json.gz")]);
    assert_eq!(code, 0, "{stderr}");
    let fusion = &out[out.find("\nFusion: ").expect("fusion section")..];
    insta::assert_snapshot!("compiled_mi300x_fusion_text", fusion);
}

/// A Kineto trace text of `ops` launched one after the other on one stream: each op name with
/// its recorded dims and types, its kernel's duration.
pub(crate) fn synthetic(ops: &[(&str, String, String, f64)]) -> Vec<u8> {
    let mut events = Vec::new();
    let mut ts = 1000.0;
    for (i, (name, dims, types, dur)) in ops.iter().enumerate() {
        let ext = i + 1;
        events.push(format!(
            r#"{{"ph": "X", "cat": "cpu_op", "name": "{name}", "pid": 1, "tid": 1, "ts": {ts}, "dur": 5, "args": {{"External id": {ext}, "Input Dims": {dims}, "Input type": {types}}}}}"#
        ));
        events.push(format!(
            r#"{{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": {}, "dur": 2, "args": {{"External id": {ext}, "correlation": {ext}}}}}"#,
            ts + 1.0
        ));
        // A vLLM MoE call's kernels are told by their triton_kernels names.
        let suffix = if *name == "vllm::moe_forward" { ["_matmul_ogs", "_finalize_matmul_scatter"][i % 2] } else { "" };
        events.push(format!(
            r#"{{"ph": "X", "cat": "kernel", "name": "kernel_{i}_{name}{suffix}", "pid": 0, "tid": 7, "ts": {}, "dur": {dur}, "args": {{"External id": {ext}, "correlation": {ext}, "device": 0, "stream": 7}}}}"#,
            ts + 10.0
        ));
        ts += 20.0 + dur;
    }
    // A vLLM step annotation over it all, for the attention ops' KV lengths.
    events.push(format!(
        r#"{{"ph": "X", "cat": "user_annotation", "name": "execute_10_context_1(sq8sk16sqsq64sqsk128)_generation_2(sq2sk70sqsq2sqsk70)", "pid": 1, "tid": 1, "ts": 999, "dur": {}, "args": {{}}}}"#,
        ts - 999.0
    ));
    format!(r#"{{"traceEvents": [{}]}}"#, events.join(",")).into_bytes()
}

fn op_strategy() -> impl Strategy<Value = (&'static str, String, String, f64)> {
    let names = prop::sample::select(vec![
        "aten::add",
        "aten::mul",
        "aten::silu",
        "aten::mm",
        "aten::addmm",
        "aten::softmax",
        "aten::sum",
        "aten::native_layer_norm",
        "aten::cat",
        "aten::view",
        "triton_poi_fused_add_mul_0",
        "vllm::unified_attention_with_output",
        "_C_cache_ops::reshape_and_cache_flash",
        "vllm::moe_forward",
        "TopK",
    ]);
    let dim = prop::sample::select(vec![1u64, 2, 3, 8, 64, 4096, 1 << 20, u64::MAX / 2]);
    (names, prop::collection::vec(prop::collection::vec(dim, 0..4), 0..4), 0.0f64..50.0).prop_map(
        |(name, shapes, dur)| {
            let dims = serde_json::to_string(&shapes).unwrap();
            let types = serde_json::to_string(&vec!["c10::BFloat16"; shapes.len()]).unwrap();
            (name, dims, types, dur)
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// On any trace, absurd shapes included: every kernel in exactly one group, fused bytes never
    /// above unfused, no opportunity saving more than its kernels' time, and no panic.
    #[test]
    fn invariants_on_random_traces(ops in prop::collection::vec(op_strategy(), 1..40)) {
        let trace = read_trace(&synthetic(&ops)).unwrap();
        for rules in BuiltIn::ALL {
            let f = fusion_of(&trace, rules, Some("h100"));
            check_partition(&trace, &f);
            check_bytes_and_savings(&f);
        }
    }
}

#[test]
fn gpu_time_is_named_and_split_into_kernels_and_copies() {
    let rel = "nvidia/hf_qwen1.5-0.5b_eager_h100.json.gz";
    let trace = real(rel);
    let f = fusion_of(&trace, BuiltIn::Inductor, None);
    let kernels: f64 = trace.kernels.iter().map(|k| k.dur).sum();
    let copies: f64 = trace.transfers.iter().map(|t| t.dur).sum();
    assert!(copies > 0.0);
    assert!((f.totals.kernel_time_us - kernels).abs() < 1e-2 && (f.totals.copy_time_us - copies).abs() < 1e-2);
    assert!(f.totals.gpu_time_definition.contains("kernel, memcpy and memset"));
    // The platform line gives the same GPU time, and kernels alone as its own figure.
    let v = json(&["trace", &data(&format!("traces/{rel}")), "--json"]);
    let p = &v["platforms"][0];
    assert_eq!(p["gpu_time_us"].as_f64().unwrap(), f.totals.gpu_time_us);
    assert_eq!(p["kernel_time_us"].as_f64().unwrap(), f.totals.kernel_time_us);
    assert_eq!(p["gpu_time_definition"].as_str().unwrap(), f.totals.gpu_time_definition);
    assert_eq!(v["op_coverage"]["gpu_time_us"].as_f64().unwrap(), f.totals.gpu_time_us);
}

#[test]
fn a_calibration_profile_adds_the_measured_verdict() {
    let v = json(&[
        "trace",
        &data("traces/nvidia/hf_qwen1.5-0.5b_eager_h100.json.gz"),
        "--calibration",
        &data("calibration/i7_12700k_with_fusion.json"),
        "--json",
    ]);
    let ops = v["fusion"]["opportunities"].as_array().unwrap();
    // matmul + elementwise: the profile's Linear_Bias, Conv2d_ReLU and QK_AttentionScores share
    // that op-type sequence; the lowest measured speedup (Linear_Bias, 0.985×) is used.
    let silu = ops.iter().find(|o| o["ops"] == serde_json::json!(["aten::mm", "aten::silu"])).unwrap();
    assert_eq!(silu["measured"]["pattern"], "Linear_Bias");
    assert_eq!(silu["measured"]["verdict"], "minimal");
    // No measured pattern is elementwise + reduction.
    let norm = ops
        .iter()
        .find(|o| o["ops"] == serde_json::json!(["aten::add", "aten::copy_", "aten::pow", "aten::mean"]))
        .unwrap();
    assert!(norm.get("measured").is_none());
    // The text table has the measured column with a profile, and none of blanks without one.
    let header_after = |text: &str| {
        let at = text.find("\nFusion left on the table").unwrap_or_else(|| panic!("{text}"));
        text[at..].lines().nth(2).unwrap().to_string()
    };
    let qwen = data("traces/nvidia/hf_qwen1.5-0.5b_eager_h100.json.gz");
    let calibration = data("calibration/i7_12700k_with_fusion.json");
    let (_, with, _) = run(&["trace", &qwen, "--calibration", &calibration]);
    assert!(header_after(&with).trim_end().ends_with("host wait  measured"), "{with}");
    assert!(with.contains("Linear_Bias 0.99× minimal"), "{with}");
    let (_, without, _) = run(&["trace", &qwen]);
    assert!(header_after(&without).trim_end().ends_with("host wait"), "{without}");
    let (code, _, stderr) = run(&[
        "trace",
        &data("traces/nvidia/hf_bert-small_eager_h100.json.gz"),
        "--calibration",
        &data("calibration/resnet18_b1.json"),
    ]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("resnet18_b1.json"), "{stderr}");
}

#[test]
fn vllm_inductor_kernels_are_repredicted_from_the_capture() {
    let v = json(&[
        "trace",
        &data("traces/amd/vllm_prefilldecode_graph_piecewise_replay.json.gz"),
        "--capture",
        &data("traces/amd/vllm_prefilldecode_graph_piecewise_capture.json.gz"),
        "--json",
    ]);
    let r = &v["fusion"]["reprediction"];
    assert_eq!(r["kernels"], 47);
    assert_eq!(r["matched"], 47);
    assert_eq!(r["isolated"], 47);
    assert_eq!(r["not_expandable"], 1);
}

#[test]
fn opportunities_per_step_and_layer_where_the_structure_is_known() {
    let v = json(&["trace", &data("traces/nvidia/hf_qwen1.5-0.5b_eager_h100.json.gz"), "--json"]);
    let layers = v["structure"]["steps"][0]["layers"].as_u64().unwrap();
    assert_eq!(layers, 24);
    let ops = v["fusion"]["opportunities"].as_array().unwrap();
    let norm = ops
        .iter()
        .find(|o| o["ops"] == serde_json::json!(["aten::add", "aten::copy_", "aten::pow", "aten::mean"]))
        .unwrap();
    let p = &norm["per_step"];
    assert_eq!((p["steps"].as_u64(), p["layers"].as_u64()), (Some(1), Some(24)));
    // Two RMSNorms per decoder layer, each after a residual add: 48 runs over 24 layers.
    assert_eq!(p["calls_per_layer"], 2.0);
    let silu = ops.iter().find(|o| o["ops"] == serde_json::json!(["aten::mm", "aten::silu"])).unwrap();
    assert_eq!(silu["per_step"]["calls_per_layer"], 1.0);
}

#[test]
fn an_ops_time_is_given_both_ways_where_they_differ() {
    let f = fusion_of(&real("nvidia/hf_bert-small_eager_h100.json.gz"), BuiltIn::Inductor, None);
    // aten::linear launches nothing itself: aten::addmm inside it runs the GEMM. Its own time is
    // 0 (the op table's attribution) and its subtree holds every addmm kernel (TraceLens's).
    let linear: Vec<_> = f.op_times.iter().filter(|o| o.op == "aten::linear").collect();
    assert!(!linear.is_empty());
    assert!(linear.iter().all(|o| o.own_us == 0.0));
    let subtree: f64 = linear.iter().map(|o| o.subtree_us).sum();
    let addmm: f64 =
        f.groups.iter().filter(|g| g.launched_by.as_deref() == Some("aten::addmm")).map(|g| g.time_us).sum();
    assert!((subtree - addmm).abs() < 1e-2, "{subtree} vs {addmm}");
    // Ops that launch their own kernels and nothing nested are not listed.
    assert!(f.op_times.iter().all(|o| o.subtree_us > o.own_us && o.op != "aten::addmm"));
    let sorted = f.op_times.windows(2).all(|w| w[0].subtree_us >= w[1].subtree_us);
    assert!(sorted);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// Any node list: the reader refuses it with a message or accepts it, never panics, and an
    /// accepted one's parent links always reach a root (no cycle got through).
    #[test]
    fn execution_trace_parent_links_never_loop(parents in prop::collection::vec(0u64..14, 0..12), dup in any::<bool>()) {
        // Ids 0, 1, 2, … (or, with `dup`, the last node repeating the first's id).
        let n = parents.len();
        let nodes: Vec<String> = parents
            .iter()
            .enumerate()
            .map(|(i, parent)| {
                let id = if dup && n > 1 && i == n - 1 { 0 } else { i as u64 };
                format!(r#"{{"id": {id}, "name": "aten::op{i}", "parent": {parent}, "rf_id": {i}}}"#)
            })
            .collect();
        let text = format!(r#"{{"nodes": [{}]}}"#, nodes.join(","));
        // Independently: does following parents from some node (ids unique) never reach a root?
        let unique = !(dup && n > 1);
        let looping = unique && (0..n).any(|start| {
            let mut at = start as u64;
            for _ in 0..=n {
                match parents.get(at as usize) {
                    Some(&p) if p != at && (p as usize) < n => at = p,
                    _ => return false,
                }
            }
            true
        });
        let result = fusionscope::analysis::exec_trace::parse_exec_trace(&text, "et.json");
        if unique {
            prop_assert_eq!(looping, result.as_ref().is_err_and(|e| e.to_string().contains("cycle")), "{:?}", parents);
        }
        match result {
            Err(e) => {
                let m = e.to_string();
                prop_assert!(m.starts_with("execution trace et.json: "), "{}", m);
                prop_assert!(m.contains("cycle") || m.contains("two nodes have id"), "{}", m);
            }
            Ok(et) => {
                let by_id: std::collections::HashMap<u64, u64> = et.nodes.iter().map(|n| (n.id, n.parent)).collect();
                for n in &et.nodes {
                    let (mut at, mut steps) = (n.id, 0);
                    while let Some(&p) = by_id.get(&at) {
                        if p == at { break; }
                        at = p;
                        steps += 1;
                        prop_assert!(steps <= et.nodes.len(), "parent chain from {} loops", n.id);
                    }
                }
            }
        }
    }
}
