//! Model workloads from the NeuSim configs in tests/data: closed forms, GQA, KV cache, MoE routing.

use crate::common::{data, data_text};
use fusionscope::fusion::{OpGraph, OpId};
use fusionscope::hardware::roofline::{op_bytes, op_flops};
use fusionscope::workload::{
    build_workload, parse_model_config, whole_model_graph, ModelConfig, Phase, Workload, WorkloadError, WorkloadParams,
};

/// The model config tests/data/models/models/`name`.json.
fn config(name: &str) -> ModelConfig {
    parse_model_config(&data_text(&format!("models/models/{name}.json"))).unwrap()
}

fn params(batch: u64, seq: u64, out: u64, tp: u64) -> WorkloadParams {
    WorkloadParams { batch: Some(batch), seq_len: Some(seq), output_len: Some(out), tp: Some(tp) }
}

fn op<'a>(w: &'a Workload, name: &str) -> (OpId, &'a fusionscope::fusion::Op) {
    let i = w.graph.ops().iter().position(|o| o.name == name).unwrap_or_else(|| panic!("no op {name}"));
    (OpId(i as u32), &w.graph.ops()[i])
}

fn flops_of(g: &OpGraph) -> u64 {
    (0..g.len()).map(|i| op_flops(g, OpId(i as u32)).unwrap().0).sum()
}

/// Closed form of one Llama layer's FLOPs (docs/time-model.md §3, "Llama"), batch B, S new
/// tokens attending over T, local heads Hq/Hkv, head dim dh, model width D, FFN width F:
/// matmuls 2·B·S·D·dh·(Hq + 2·Hkv) + 2·2·B·Hq·S·T·dh + 2·B·S·Hq·dh·D + 3·2·B·S·D·F,
/// norms 2·4·B·S·D, RoPE B·S·dh·(Hq + Hkv), softmax 4·B·Hq·S·T, residuals 2·B·S·D, SiLU·mul B·S·F.
#[allow(clippy::too_many_arguments)] // the closed form's eight symbols, named as in the doc
fn llama_layer_flops(b: u64, s: u64, t: u64, d: u64, hq: u64, hkv: u64, dh: u64, f: u64) -> u64 {
    let matmul =
        2 * b * s * d * dh * (hq + 2 * hkv) + 4 * b * hq * s * t * dh + 2 * b * s * hq * dh * d + 6 * b * s * d * f;
    let other = 8 * b * s * d + b * s * dh * (hq + hkv) + 4 * b * hq * s * t + 2 * b * s * d + b * s * f;
    matmul + other
}

#[test]
fn every_model_config_loads() {
    let mut n = 0;
    for entry in std::fs::read_dir(data("models/models")).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        let c = parse_model_config(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let built = build_workload(&c, Phase::Prefill, params(1, 256, 16, 1));
        match &c {
            ModelConfig::Unsupported { model_type, .. } => {
                assert_eq!(model_type, "gligen");
                assert!(matches!(built, Err(WorkloadError::Unsupported { .. })));
            }
            _ => {
                let w = built.unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                assert!(w.total_flops() > 0 && !w.not_modelled.is_empty(), "{}", path.display());
            }
        }
        n += 1;
    }
    assert_eq!(n, 11);
}

#[test]
fn llama3_8b_prefill_layer_flops_match_the_closed_form() {
    let w = build_workload(&config("llama3-8b"), Phase::Prefill, params(1, 1024, 128, 1)).unwrap();
    let expected = llama_layer_flops(1, 1024, 1024, 4096, 32, 8, 128, 14336);
    assert_eq!(flops_of(&w.graph), expected);
    assert_eq!(w.per_layer_flops(), expected);
    assert_eq!(w.total_flops(), 32 * expected);
    assert_eq!(w.layers, 32);
    // The matmul part alone is the familiar ≈ 2 × params × tokens + attention: 463.9 GFLOP.
    assert_eq!(expected / 1_000_000_000, 464);
}

#[test]
fn llama_tp_and_batch_scale_the_closed_form() {
    let w = build_workload(&config("llama3-70b"), Phase::Prefill, params(2, 512, 64, 4)).unwrap();
    // Llama 3 70B: D 8192, 64 heads, 8 KV heads, dh 128, F 28672; per chip with tp 4.
    assert_eq!(flops_of(&w.graph), llama_layer_flops(2, 512, 512, 8192, 16, 2, 128, 7168));
    assert!(matches!(
        build_workload(&config("llama3-8b"), Phase::Prefill, params(1, 8, 1, 3)),
        Err(WorkloadError::Param { name: "tp", .. })
    ));
}

#[test]
fn gqa_k_and_v_use_num_kv_heads() {
    let w = build_workload(&config("llama3-8b"), Phase::Prefill, params(1, 1024, 128, 1)).unwrap();
    let (_, q) = op(&w, "layer0.q_proj");
    let (k_id, k) = op(&w, "layer0.k_proj");
    let (_, v) = op(&w, "layer0.v_proj");
    assert_eq!(q.shape, vec![1, 1024, 32 * 128]);
    assert_eq!(k.shape, vec![1, 1024, 8 * 128]);
    assert_eq!(v.shape, vec![1, 1024, 8 * 128]);
    // k_proj reads x (8 MiB) and wk (4096 × 1024 × 2 B = 8 MiB), writes 2 MiB.
    assert_eq!(op_bytes(&w.graph, k_id), 8 * 1024 * 1024 + 8 * 1024 * 1024 + 2 * 1024 * 1024);
    // Llama 2 13B has no num_kv_heads: plain multi-head attention.
    let w = build_workload(&config("llama2-13b"), Phase::Prefill, params(1, 64, 8, 1)).unwrap();
    let (_, k) = op(&w, "layer0.k_proj");
    assert_eq!(k.shape, vec![1, 64, 40 * 128]);
}

#[test]
fn decode_reads_the_kv_cache() {
    let w = build_workload(&config("llama3-8b"), Phase::Decode, params(1, 1024, 128, 1)).unwrap();
    assert_eq!(w.steps, 128);
    let (scores_id, scores) = op(&w, "layer0.attn_scores");
    assert_eq!(scores.shape, vec![1, 32, 1, 1152]);
    let cache = &w.graph.tensor(scores.inputs[1]);
    assert_eq!(cache.name, "layer0.k_cache");
    assert_eq!(cache.size_bytes, 8 * 1152 * 128 * 2);
    // q (32 × 128) + the K cache + the scores.
    assert_eq!(op_bytes(&w.graph, scores_id), (32 * 128 + 8 * 1152 * 128 + 32 * 1152) * 2);
    let (_, av) = op(&w, "layer0.attn_v");
    assert_eq!(w.graph.tensor(av.inputs[1]).name, "layer0.v_cache");
    // The new token's K and V are written into the cache.
    assert!(w.graph.ops().iter().any(|o| o.name == "layer0.k_cache_write"));
    // Every op runs once per layer per step.
    assert!(w.op_repeat.iter().all(|&r| r == 32 * 128));
    assert_eq!(w.total_flops(), flops_of(&w.graph) * 32 * 128);
    // Decode adds the two cache writes, 1 FLOP per element of the new token's K and V.
    assert_eq!(flops_of(&w.graph), llama_layer_flops(1, 1, 1152, 4096, 32, 8, 128, 14336) + 2 * 8 * 128);
}

#[test]
fn deepseek_moe_routes_to_experts() {
    let c = config("deepseekv2-236b");
    // Decode, batch 1: one token to top-6 of 160 experts → 6 active experts of one token each.
    let w = build_workload(&c, Phase::Decode, params(1, 1024, 8, 1)).unwrap();
    let experts: Vec<&str> =
        w.graph.ops().iter().filter(|o| o.name.ends_with(".dispatch")).map(|o| o.name.as_str()).collect();
    assert_eq!(experts.len(), 6, "{experts:?}");
    assert!(experts.iter().all(|n| n.starts_with("layer1.expert")));
    let (_, gate) = op(&w, "layer1.expert0.gate_proj");
    assert_eq!(gate.shape, vec![1, 1536]);
    let (_, shared) = op(&w, "layer1.shared_expert.gate_proj");
    assert_eq!(shared.shape, vec![1, 1, 2 * 1536]);
    // The first layer is dense (num_dense_layers = 1), with the 12288-wide FFN.
    let (_, dense) = op(&w, "layer0.gate_proj");
    assert_eq!(dense.shape, vec![1, 1, 12288]);
    assert_eq!(w.parts.iter().map(|p| (p.kind.as_str(), p.layers)).collect::<Vec<_>>(), [("dense", 1), ("moe", 59)]);
    // MLA decode reads the compressed latent cache (kv_lora_rank 512), not per-head K/V.
    let (_, s) = op(&w, "layer1.scores_nope");
    assert_eq!(w.graph.tensor(s.inputs[1]).name, "layer1.kv_cache");
    assert_eq!(w.graph.tensor(s.inputs[1]).size_bytes, 1032 * 512 * 2);

    // Prefill 1024 tokens × top-6 = 6144 assignments over all 160 experts: 39 tokens each.
    let w = build_workload(&c, Phase::Prefill, params(1, 1024, 8, 1)).unwrap();
    let n = w.graph.ops().iter().filter(|o| o.name.ends_with(".dispatch")).count();
    assert_eq!(n, 160);
    let (_, gate) = op(&w, "layer1.expert159.gate_proj");
    assert_eq!(gate.shape, vec![39, 1536]);
    // With tp (= expert parallelism) 16, 10 local experts take 384 assignments.
    let w = build_workload(&c, Phase::Prefill, params(1, 1024, 8, 16)).unwrap();
    assert_eq!(w.graph.ops().iter().filter(|o| o.name.ends_with(".dispatch")).count(), 10);
}

#[test]
fn deepseek_v3_has_three_dense_layers() {
    let w = build_workload(&config("deepseekv3-671b"), Phase::Prefill, params(1, 128, 8, 1)).unwrap();
    assert_eq!(w.parts.iter().map(|p| (p.kind.as_str(), p.layers)).collect::<Vec<_>>(), [("dense", 3), ("moe", 58)]);
    assert!(w.graph.ops().iter().any(|o| o.name == "layer3.router"));
}

#[test]
fn whole_model_equals_layers_times_one_layer() {
    for (name, phase) in
        [("llama3-8b", Phase::Prefill), ("llama3-8b", Phase::Decode), ("deepseekv2-236b", Phase::Decode)]
    {
        let c = config(name);
        let p = params(1, 128, 4, 1);
        let one = build_workload(&c, phase, p).unwrap();
        let all = whole_model_graph(&c, phase, p).unwrap();
        assert_eq!(one.total_flops(), all.total_flops(), "{name} {phase}");
        assert!(all.graph.len() > one.graph.len());
    }
}

#[test]
fn dit_and_dlrm_generate_what_their_configs_allow() {
    let w = build_workload(&config("dit-xl"), Phase::Prefill, WorkloadParams::default()).unwrap();
    // (512 / 2)² = 65,536 patch tokens, 28 layers × 20 diffusion steps.
    let (_, q) = op(&w, "layer0.q_proj");
    assert_eq!(q.shape, vec![1, 65536, 16 * 72]);
    assert_eq!((w.layers, w.steps), (28, 20));
    assert!(w.op_repeat.iter().all(|&r| r == 560));
    assert!(matches!(
        build_workload(&config("dit-xl"), Phase::Decode, WorkloadParams::default()),
        Err(WorkloadError::PhaseNotApplicable { .. })
    ));
    let w = build_workload(&config("dlrm-s"), Phase::Prefill, params(4, 1, 1, 1)).unwrap();
    let (_, pool) = op(&w, "emb0.pool");
    assert_eq!(pool.shape, vec![4, 64]);
    let (dot_id, dot) = op(&w, "interaction.dot");
    assert_eq!(dot.shape, vec![4, 9, 9]);
    assert_eq!(op_flops(&w.graph, dot_id).unwrap().0, 2 * 4 * 9 * 9 * 64);
}

#[test]
fn bad_configs_name_the_problem() {
    let e = parse_model_config("{\"model_type\": \"llm\", \"model_name\": \"x\"}").unwrap_err().to_string();
    assert!(e.contains("missing field"), "{e}");
    let e = parse_model_config("{\n  \"model_type\": ").unwrap_err().to_string();
    assert!(e.contains("line 2"), "{e}");
    let e = parse_model_config("{}").unwrap_err().to_string();
    assert!(e.contains("model_type"), "{e}");
    let c = config("llama3-8b");
    let e = build_workload(&c, Phase::Decode, params(1, 16, 0, 1)).unwrap_err().to_string();
    assert!(e.contains("output_len"), "{e}");
    let e = build_workload(&c, Phase::Prefill, params(0, 16, 1, 1)).unwrap_err().to_string();
    assert!(e.contains("batch"), "{e}");
}

#[test]
fn huge_parameters_are_refused_not_overflowed() {
    let big = 1u64 << 31;
    for name in ["llama3-8b", "deepseekv2-236b", "dit-xl", "dlrm-l"] {
        let c = config(name);
        let r = build_workload(&c, Phase::Prefill, params(big, big, big, 1));
        if name == "dlrm-l" {
            // DLRM has no sequence: 2^31 × 1024-wide activations still fit in 64 bits.
            assert!(r.is_ok(), "{:?}", r.err());
        } else {
            assert!(matches!(r, Err(WorkloadError::TooLarge(_))), "{name}: {:?}", r.err());
        }
        let r = build_workload(&c, Phase::Prefill, params(big + 1, 16, 1, 1));
        assert!(matches!(r, Err(WorkloadError::Param { name: "batch", .. })), "{name}: {:?}", r.err());
    }
    let e = parse_model_config(r#"{"model_type": "llm", "model_name": "x", "d_model": 99999999999}"#).unwrap_err();
    assert!(e.to_string().contains("d_model"), "{e}");
}

#[test]
fn op_bytes_add_up_to_the_fusion_analysis_unfused_traffic() {
    use fusionscope::hardware::preset;
    use fusionscope::workload::report::model_time;
    for (name, phase) in [("llama3-8b", Phase::Decode), ("deepseekv3-671b", Phase::Prefill), ("dlrm-m", Phase::Prefill)]
    {
        let w = build_workload(&config(name), phase, params(2, 64, 4, 1)).unwrap();
        let (analysis, time) = model_time(&w, &preset("mi300x").unwrap()).unwrap();
        assert_eq!(time.groups.len(), analysis.grouping.groups.len());
        for g in &time.groups {
            let sum: u64 = time.ops.iter().filter(|o| o.group == g.group).map(|o| o.bytes).sum();
            assert_eq!(sum, g.unfused_bytes, "{name} group {}", g.group);
            assert!(g.fused_bytes <= g.unfused_bytes);
            assert!(g.fused_us <= g.unfused_us + 1e-9, "{name}: fusing never loses on the roofline");
        }
        let total: u64 = time.groups.iter().map(|g| g.unfused_bytes).sum();
        assert_eq!(total, analysis.traffic.unfused.total());
    }
}
