//! The simulator's op tables (tests/data/ops-csv) imported, and compared with our analysis of
//! the same model and chip. Where the two models agree the figures must match; where they
//! differ the difference is the documented one (docs/time-model.md, "Against the simulator").

use crate::common::data_text;
use fusionscope::hardware::preset;
use fusionscope::simcsv::{compare, parse_sim_csv, Comparison, RoleComparison, SimBound, SimTable};
use fusionscope::workload::report::model_time;
use fusionscope::workload::{build_workload, preset_model, Phase, WorkloadParams};

/// The simulator table tests/data/ops-csv/`name`.csv.
fn table(name: &str) -> SimTable {
    parse_sim_csv(&data_text(&format!("ops-csv/{name}.csv"))).unwrap()
}

fn side_by_side(model: &str, csv: &str, phase: Phase, p: WorkloadParams) -> (Comparison, SimTable) {
    let w = build_workload(&preset_model(model).unwrap(), phase, p).unwrap();
    let chip = preset("tpuv5p").unwrap();
    let (_, time) = model_time(&w, &chip).unwrap();
    let t = table(csv);
    (compare(&t, &w, &time), t)
}

fn role<'a>(c: &'a Comparison, name: &str) -> &'a RoleComparison {
    c.roles.iter().find(|r| r.role == name).unwrap_or_else(|| panic!("no role {name}"))
}

/// The simulator reads `hbm_bw_GBps` as GiB/s (2^30 bytes); we read the datasheet's decimal GB/s.
const GIB_OVER_GB: f64 = 1073741824.0 / 1e9;

const LLAMA_1K: WorkloadParams =
    WorkloadParams { batch: Some(1), seq_len: Some(1024), output_len: Some(128), tp: Some(1) };

#[test]
fn every_table_imports() {
    let expect = [
        ("deepseekv2-236b_inference_tpuv5p_tp16_ep16_bs8_prefill", 55, 55),
        ("dit-xl_inference_tpuv5p_bs8", 10, 8),
        ("llama3-8b_inference_tpuv5p_1chip_bs1_in1024_out128", 28, 20),
        ("llama3-8b_inference_tpuv5p_1chip_bs1_in1024_out128_decode", 16, 10),
        ("llama3-8b_inference_tpuv5p_1chip_bs1_in1024_out128_prefill", 12, 10),
    ];
    for (name, rows, groups) in expect {
        let t = table(name);
        assert_eq!((t.rows.len(), t.groups.len()), (rows, groups), "{name}");
        let sum: f64 = t.groups.iter().map(|g| g.total_ns).sum();
        assert!((sum - t.total_ns).abs() < 1e-6 * t.total_ns, "{name}");
    }
    let t = table("llama3-8b_inference_tpuv5p_1chip_bs1_in1024_out128_decode");
    // Fusion index 14 is the decode attention: 6 rows (two QK einsums, softmax, two ·V, add).
    let g = t.groups.iter().find(|g| g.fusion_index == 14).unwrap();
    assert_eq!(g.rows.len(), 6);
    assert_eq!(g.count, 4096);
    assert_eq!(g.bound, SimBound::Memory);
    let t = table("deepseekv2-236b_inference_tpuv5p_tp16_ep16_bs8_prefill");
    assert_eq!(t.rows[1].bound, SimBound::Interconnect);
}

#[test]
fn llama3_8b_prefill_matmuls_agree_with_the_simulator() {
    let (c, _) = side_by_side(
        "llama3-8b",
        "llama3-8b_inference_tpuv5p_1chip_bs1_in1024_out128_prefill",
        Phase::Prefill,
        LLAMA_1K,
    );
    for name in ["q_proj", "o_proj", "ffn_gate", "ffn_up", "ffn_down"] {
        let r = role(&c, name);
        assert_eq!(r.our_flops, r.sim_flops, "{name}");
        assert_eq!(r.our_bytes, r.sim_bytes, "{name}");
        // Our peak is 445.6 TFLOP/s from the config's 1.7 GHz; the simulator's MXU times imply
        // ≈ 458.6 TFLOP/s (Google's published 459). Plus our 0.5 µs per kernel.
        let t = r.time_ratio().unwrap();
        assert!((1.025..1.045).contains(&t), "{name}: time ratio {t}");
        assert_eq!((r.sim_bound.as_str(), r.our_bound.unwrap().as_str()), ("compute", "compute"), "{name}");
    }
}

#[test]
fn llama3_8b_prefill_differences_are_the_documented_ones() {
    let (c, t) = side_by_side(
        "llama3-8b",
        "llama3-8b_inference_tpuv5p_1chip_bs1_in1024_out128_prefill",
        Phase::Prefill,
        LLAMA_1K,
    );
    // Norms: same bytes except our 8 KiB norm weight; memory time differs by exactly GiB/GB.
    for name in ["attn_norm", "ffn_norm"] {
        let r = role(&c, name);
        assert_eq!(r.our_bytes, r.sim_bytes + 4096 * 2, "{name}");
        let row = t
            .rows
            .iter()
            .find(|row| fusionscope::simcsv::compare::role_of(&row.description).map(|x| x.0) == Some(name))
            .unwrap();
        let ours_memory_us = r.our_bytes as f64 / 2765e9 * 1e6;
        let ratio = ours_memory_us / (row.memory_ns / 1000.0);
        assert!((ratio - GIB_OVER_GB).abs() < 0.002, "{name}: {ratio}");
    }
    // GQA: the simulator projects K and V with all 32 heads; Llama 3 8B has 8 KV heads.
    for name in ["k_proj", "v_proj"] {
        assert_eq!(role(&c, name).flops_ratio(), Some(0.25), "{name}");
    }
    // Binary elementwise ops: the simulator counts one operand and the result, we count both operands.
    for name in ["ffn_activation", "ffn_residual"] {
        assert_eq!(role(&c, name).bytes_ratio(), Some(1.5), "{name}");
    }
    // Attention: the simulator's FlashAttention counts 132 FLOPs per (head, query, key) and moves
    // only Q, K, V and O; ours is QKᵀ, softmax, ·V at 4·dh + 4 = 516 FLOPs, with the 32 × 1024 × 1024
    // scores and probabilities written and read back.
    let a = role(&c, "attention");
    assert_eq!(a.sim_flops, 132 * 32 * 1024 * 1024);
    assert_eq!(a.our_flops, 516 * 32 * 1024 * 1024);
    const MIB: u64 = 1024 * 1024;
    // attn_scores: Q 8 + K 2 + scores 64; softmax: 64 + 64; attn_v: probs 64 + V 2 + out 8 (MiB).
    assert_eq!(a.our_bytes, (8 + 2 + 64 + 64 + 64 + 64 + 2 + 8) * MIB);
    assert_eq!(a.sim_bytes, 32 * MIB);
    assert!(c.sim_only.is_empty());
    assert!(c.ours_only.contains(&"layer0.q_rope".to_string()));
}

#[test]
fn llama3_8b_decode_is_memory_bound_on_both_sides() {
    let (c, t) =
        side_by_side("llama3-8b", "llama3-8b_inference_tpuv5p_1chip_bs1_in1024_out128_decode", Phase::Decode, LLAMA_1K);
    // Count = 32 layers × 128 steps, the repeat of each of our ops.
    assert!(t.rows.iter().all(|r| r.count == 32 * 128));
    for name in ["o_proj", "ffn_gate", "ffn_up", "ffn_down"] {
        let r = role(&c, name);
        assert_eq!((r.our_flops, r.our_bytes), (r.sim_flops, r.sim_bytes), "{name}");
        assert_eq!((r.sim_bound.as_str(), r.our_bound.unwrap().as_str()), ("memory", "memory"));
        // Memory-bound: GiB/GB plus our 0.5 µs launch.
        let expect = GIB_OVER_GB + 0.5 / r.sim_time_us;
        assert!((r.time_ratio().unwrap() - expect).abs() < 0.01, "{name}: {:?} vs {expect}", r.time_ratio());
    }
    // The simulator's K/V projections use 32 heads: our Q + K + V weights are half its bytes.
    let qkv = role(&c, "qkv_proj");
    assert!((qkv.bytes_ratio().unwrap() - 0.5).abs() < 0.001);
    // Attention reads the KV cache on both sides; ours has 8 KV heads of 1152 tokens, the
    // simulator's 32 heads over the same 1152 tokens (1024 + 128, in two parts).
    let a = role(&c, "attention");
    assert!(a.our_bytes > 2 * 8 * 1152 * 128 * 2);
    assert!((a.bytes_ratio().unwrap() - 0.262).abs() < 0.01, "{:?}", a.bytes_ratio());
}

#[test]
fn deepseek_mla_einsums_agree_with_the_simulator() {
    let p = WorkloadParams { batch: Some(8), seq_len: Some(1024), output_len: Some(1), tp: Some(16) };
    let (c, _) =
        side_by_side("deepseekv2-236b", "deepseekv2-236b_inference_tpuv5p_tp16_ep16_bs8_prefill", Phase::Prefill, p);
    for name in [
        "q_a_proj",
        "q_b_proj",
        "kv_a_proj",
        "q_absorb",
        "scores_nope",
        "scores_rope",
        "attn_latent",
        "v_up",
        "o_proj",
        "router",
    ] {
        let r = role(&c, name);
        assert_eq!((r.our_flops, r.our_bytes), (r.sim_flops, r.sim_bytes), "{name}");
    }
    // Collectives are the simulator's only.
    assert!(c.sim_only.iter().any(|d| d.contains("AllGather")));
    assert!(c.sim_only.iter().any(|d| d.contains("AllToAll")));
}
