//! Fusion in serving traces (docs/trace-fusion.md): the fused ops of serving engines, the bytes
//! of vLLM's and SGLang's attention, KV-cache and MoE kernels from what the trace records
//! (against TraceLens's figures where it has them), and collectives' bytes from their c10d op.

use crate::common::{data, json};
use crate::trace_exec_trace::with_exec_trace;
use crate::trace_fusion::{fusion_of, real};
use fusionscope::analysis::trace_fusion::BuiltIn;

#[test]
fn serving_engines_fused_ops_have_their_parts_and_bytes() {
    let f = fusion_of(&real("amd/sglang_qwen3-8b_prefilldecode_mi300x.json.gz"), BuiltIn::Inductor, Some("mi300x"));
    // SGLang's silu_and_mul(out [T, H], input [T, 2H]): input read, output written; unfused the
    // SiLU's [T, H] result is written and read back.
    let g = f.groups.iter().find(|g| g.launched_by.as_deref() == Some("sgl_kernel::silu_and_mul")).unwrap();
    let dims: Vec<Vec<u64>> = serde_json::from_value(g.ops[0].input_dims.clone()).unwrap();
    let (out, input) = (dims[0].iter().product::<u64>() * 2, dims[1].iter().product::<u64>() * 2);
    assert_eq!(g.parts, ["silu", "mul"]);
    assert_eq!(g.fused_bytes_per_call, Some(input + out));
    assert_eq!(g.unfused_bytes_per_call, Some(input + 3 * out));
    // aiter's add_rmsnorm: the residual sum is written either way; unfused it is read back once.
    let n = f.groups.iter().find(|g| g.launched_by.as_deref() == Some("aiter::add_rmsnorm")).unwrap();
    let dims: Vec<Vec<u64>> = serde_json::from_value(n.ops[0].input_dims.clone()).unwrap();
    let sum = dims[3].iter().product::<u64>() * 2;
    assert_eq!(n.unfused_bytes_per_call.unwrap() - n.fused_bytes_per_call.unwrap(), sum);
    // With these, bytes are known for ≥ 95 % of the GPU time (the rest: aiter's prefill attention).
    assert!(f.totals.bytes_known_pct >= 95.0, "{:?}", f.totals);
}

/// The `trace REPLAY --capture CAPTURE --json` output of a shared vLLM pair.
fn vllm_joined(pair: &str) -> serde_json::Value {
    let (replay, capture) = (
        data(&format!("traces/amd/vllm_{pair}_replay.json.gz")),
        data(&format!("traces/amd/vllm_{pair}_capture.json.gz")),
    );
    json(&["trace", &replay, "--capture", &capture, "--json"])
}

#[test]
fn vllm_kv_cache_writes_have_bytes_and_what_stays_unknown_says_why() {
    for (pair, coverage) in [("decode_graph_full", 100.0), ("prefilldecode_graph_piecewise", 100.0)] {
        let v = vllm_joined(pair);
        let f = &v["fusion"];
        let groups = f["groups"].as_array().unwrap();
        let launched_by = |g: &serde_json::Value, op: &str| g["launched_by"] == op;
        // The KV-cache write: key and value read (bf16), 8-byte slots read, key and value rows
        // written to the caches in their type; computed here from the recorded dims and types.
        let caches: Vec<_> =
            groups.iter().filter(|g| launched_by(g, "_C_cache_ops::reshape_and_cache_flash")).collect();
        assert!(!caches.is_empty(), "{pair}");
        for g in &caches {
            let dims: Vec<Vec<u64>> = serde_json::from_value(serde_json::Value::Array(
                g["ops"][0]["input_dims"].as_array().unwrap()[..5].to_vec(),
            ))
            .unwrap();
            let types = g["ops"][0]["input_types"].as_array().unwrap();
            assert!(types[..4].iter().all(|t| t == "c10::BFloat16") && types[4] == "long int", "{types:?}");
            let tokens = dims[4][0];
            let row: u64 = dims[0][1..].iter().product();
            let expected = tokens * 8 + 4 * tokens * row * 2;
            assert_eq!(g["fused_bytes_per_call"], expected, "{pair}");
            assert_eq!(g["unfused_bytes_per_call"], expected, "{pair}");
            assert_eq!(g["how"], "recorded shapes");
        }
        // What stays unknown: helper kernels of attention and the routing's SortTokens (their
        // call's bytes are at the longest), one gather (its indices not recorded); each says why.
        let mut not_recorded = 0.0;
        for g in groups.iter().filter(|g| g["fused_bytes_per_call"].is_null() || g["unfused_bytes_per_call"].is_null())
        {
            let why = g["bytes_unknown"].as_str().unwrap();
            let op = g["launched_by"].as_str().unwrap();
            match (op, g["bytes_unknown_cause"].as_str().unwrap()) {
                // Its index list is recorded as `[]`: the output's size is not in the trace.
                ("aten::index", "not recorded") => {
                    assert_eq!(why, "the trace records no shapes for tensor list input 1");
                    not_recorded += g["time_us"].as_f64().unwrap();
                }
                ("vllm::unified_attention_with_output", "counted at another kernel") => {
                    assert!(why.contains("counted at its longest, kernel_unified_attention_3d"), "{why}")
                }
                // The routing's sort: its bytes at its longest kernel, from its subtree.
                ("SortTokens", "counted at another kernel") => {
                    assert!(why.starts_with("one of 3 kernels of each SortTokens call"), "{why}")
                }
                // An Inductor kernel of the capture whose name lists no op words: its fused
                // bytes are known, its unfused are not.
                (_, "not recorded") if why == "the kernel name lists no op words to split it into" => {
                    assert!(g["fused_bytes_per_call"].is_u64(), "{g}");
                    not_recorded += g["time_us"].as_f64().unwrap();
                }
                _ => panic!("{pair}: {op}'s {} has no bytes: {why}", g["kernel"]),
            }
        }
        let sorts: Vec<_> =
            groups.iter().filter(|g| launched_by(g, "SortTokens") && g["how"] == "op subtree").collect();
        assert!(!sorts.is_empty() && sorts.iter().all(|g| g["fused_bytes_per_call"].is_u64()), "{pair}");
        let totals = &f["totals"];
        let gpu = totals["gpu_time_us"].as_f64().unwrap();
        assert_eq!(totals["unknown_us"]["not_recorded"].as_f64().unwrap(), not_recorded, "{pair}");
        assert!((totals["shapes_recorded_us"].as_f64().unwrap() - (gpu - not_recorded)).abs() < 1e-2, "{pair}");
        assert_eq!(totals["bytes_known_of_recorded_pct"], coverage, "{pair}");
    }
}

/// TraceLens's rows of reference CSV `file` of a vLLM pair (`tests/data/reference/tracelens/`).
fn tracelens_rows(pair: &str, file: &str) -> Vec<std::collections::BTreeMap<String, String>> {
    crate::common::tracelens::csv(&format!("reference/tracelens/vllm_{pair}/{file}"))
}

fn num(row: &std::collections::BTreeMap<String, String>, key: &str) -> u64 {
    row[key].parse().unwrap_or_else(|_| panic!("{key}: {}", row[key]))
}

#[test]
fn vllm_attention_bytes_follow_from_the_step_annotation_and_equal_tracelenss() {
    for pair in ["decode_graph_full", "prefilldecode_graph_piecewise"] {
        let v = vllm_joined(pair);
        let groups = v["fusion"]["groups"].as_array().unwrap().clone();
        let attention: Vec<_> = groups
            .iter()
            .filter(|g| {
                g["launched_by"] == "vllm::unified_attention_with_output" && !g["fused_bytes_per_call"].is_null()
            })
            .collect();
        assert!(!attention.is_empty(), "{pair}");
        let rows = tracelens_rows(pair, "InferenceAttention_fwd.csv");
        // The step's sums as TraceLens read them from the same annotation.
        let row = &rows[0];
        let (c_sq, c_sk, c_sqsq, c_sqsk) =
            (num(row, "param: c_sq"), num(row, "param: c_sk"), num(row, "param: c_sqsq"), num(row, "param: c_sqsk"));
        let (g_sq, g_sk, g_sqsk) = (num(row, "param: g_sq"), num(row, "param: g_sk"), num(row, "param: g_sqsk"));
        for g in attention {
            let d: Vec<Vec<u64>> = g["ops"][0]["input_dims"].as_array().unwrap()[..4]
                .iter()
                .map(|d| serde_json::from_value(d.clone()).unwrap())
                .collect();
            assert!(g["ops"][0]["input_types"].as_array().unwrap()[..4].iter().all(|t| t == "c10::BFloat16"));
            let (hq, d_qk, hkv, d_v) = (d[0][1], d[0][2], d[1][1], d[2][2]);
            let tokens = c_sq + g_sq;
            // Q read, O written, the new tokens' K and V read, the cached K and V read; bf16.
            let elems = tokens * hq * (d_qk + d_v)
                + tokens * hkv * (d_qk + d_v)
                + (c_sk - c_sq + g_sk - g_sq) * hkv * (d_qk + d_v);
            assert_eq!(g["fused_bytes_per_call"], 2 * elems, "{pair}");
            // Unfused: S and P written and read; causal context pairs Σ sq·sk − sq(sq−1)/2.
            let pairs = c_sqsk - (c_sqsq - c_sq) / 2 + g_sqsk;
            assert_eq!(g["unfused_bytes_per_call"], 2 * elems + 4 * hq * pairs * 2, "{pair}");
            assert_eq!(g["how"], "step annotation");
            // TraceLens's Data Moved (MiB) of the same call, to the byte.
            for row in &rows {
                let theirs = row["Data Moved (MB)_first"].parse::<f64>().unwrap() * 1024.0 * 1024.0;
                assert_eq!(theirs, (2 * elems) as f64, "{pair}");
            }
            // The op table's row of the step's calls: the same bytes, and two matmuls over the
            // pairs, a causal triangle counted as area (Σ sq² / 2): TraceLens's FLOPs.
            let op: Vec<_> = v["ops"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|r| r["op"] == "vllm::unified_attention_with_output")
                .collect();
            assert_eq!(op.len(), 1, "{pair}: one step, one row");
            // With the MoE calls, the models cover nearly all GPU time (21.7 % and 16.3 %
            // without the two ops).
            let covered = v["op_coverage"]["modelled_pct"].as_f64().unwrap();
            assert!(covered >= if pair == "decode_graph_full" { 95.3 } else { 99.6 }, "{pair}: {covered} %");
            let flops = hq * (2 * (c_sqsk + g_sqsk) - c_sqsq) * (d_qk + d_v);
            assert_eq!((&op[0]["flops_per_call"], &op[0]["bytes_per_call"]), (&flops.into(), &(2 * elems).into()));
            let theirs = rows[0]["GFLOPS_first"].parse::<f64>().unwrap() * 1e9;
            assert!((theirs - flops as f64).abs() < 1.0, "{pair}: {theirs} vs {flops}");
        }
    }
}

#[test]
fn vllm_moe_kernels_bytes_follow_from_the_recorded_expert_weights() {
    // In the capture traces, vllm::moe_forward's subtree hands its GEMMs the views
    // [32, 1536, 5888] (gate/up) and [32, 1472, 3072] (down) of `unsigned char` (two mxfp4
    // values a byte): H = 1536·2 = 3072, N = 1472·2 = 2944, gate/up 2N wide; TopK's k is 4.
    let (w13, w2, n, k) = (32u64 * 1536 * 5888, 32u64 * 1472 * 3072, 2944u64, 4u64);
    for pair in ["decode_graph_full", "prefilldecode_graph_piecewise"] {
        let v = vllm_joined(pair);
        let groups = v["fusion"]["groups"].as_array().unwrap().clone();
        let moe = |suffix: &str| -> serde_json::Value {
            let found: Vec<_> = groups
                .iter()
                .filter(|g| g["launched_by"] == "vllm::moe_forward")
                .filter(|g| {
                    let name = g["kernel"].as_str().unwrap();
                    name.contains(suffix) && (suffix.contains("swiglu") || !name.contains("swiglu"))
                })
                .collect();
            assert_eq!(found.len(), 1, "{pair} {suffix}: {found:?}");
            found[0].clone()
        };
        // The gate/up GEMM has SwiGLU in its epilogue (`_swiglu`), the down GEMM not.
        let (up, down, fin) = (moe("_swiglu"), moe("_matmul_ogs_NNT_"), moe("_finalize_matmul_scatter"));
        let d: Vec<Vec<u64>> = up["ops"][0]["input_dims"].as_array().unwrap()[..2]
            .iter()
            .map(|d| serde_json::from_value(d.clone()).unwrap())
            .collect();
        let (t, h, e) = (d[0][0], d[0][1], d[1][1]);
        assert_eq!((h, e), (3072, 32));
        // Experts expected to get a token under uniform routing.
        let f = 1.0 - ((e - k) as f64 / e as f64).powi(t as i32);
        let active = |w: u64| (w as f64 * f).round() as u64;
        let (x, mid, rows) = (t * h * 2, t * k * n * 2, t * k * h * 2);
        assert_eq!(up["fused_bytes_per_call"], x + active(w13) + mid, "{pair}");
        assert_eq!(up["unfused_bytes_per_call"], x + active(w13) + mid + 4 * mid, "{pair}");
        assert_eq!(down["fused_bytes_per_call"], mid + active(w2) + rows, "{pair}");
        assert_eq!(fin["fused_bytes_per_call"], rows + t * k * 2 + x, "{pair}");
        assert!([&up, &down, &fin].iter().all(|g| g["how"] == "op subtree"), "{pair}");
        // The routing's TopK: the [T, E] bf16 logits read; written what its subtree allocates in
        // the capture trace: [T, k] bf16 values, [T, k] int16 indices, a [1, T] uint32
        // bitmatrix (E = 32 experts: one word a token) and a [128] int32 scratch row.
        let topk: Vec<_> = groups.iter().filter(|g| g["launched_by"] == "TopK").collect();
        assert_eq!(topk.len(), 1, "{pair}");
        assert_eq!(topk[0]["fused_bytes_per_call"], t * e * 2 + t * k * 2 + t * k * 2 + t * 4 + 128 * 4, "{pair}");
        // TraceLens's model (its moe_triton_unfused_up/_down pseudo ops) is the
        // same with N = H (it assumes so: N is not recorded where it looks) and the down GEMM
        // writing T rows: with N = 2944 and T·k rows written, it gives ours.
        let theirs = |n: f64, down: bool| {
            let (t, h, k) = (t as f64, h as f64, k as f64);
            let weights = e as f64 * f * h * n * 0.5;
            if down {
                t * n * k * 2.0 + weights + t * h * 2.0
            } else {
                t * h * 2.0 + 2.0 * weights + t * n * k * 2.0
            }
        };
        // The op table prices each call: the two GEMMs' FLOPs (gate/up 2N wide) and the bytes
        // of its three kernels as the groups count them. TraceLens's FLOPs take N = H.
        let row: Vec<_> = v["ops"].as_array().unwrap().iter().filter(|r| r["op"] == "vllm::moe_forward").collect();
        assert_eq!(row.len(), 1, "{pair}");
        let flops = 2 * t * k * h * (2 * n + n);
        assert_eq!(
            (&row[0]["model"], &row[0]["flops_per_call"]),
            (&serde_json::json!("MoE"), &serde_json::json!(flops))
        );
        let group_bytes = |g: &serde_json::Value| g["fused_bytes_per_call"].as_u64().unwrap();
        assert_eq!(row[0]["bytes_per_call"], group_bytes(&up) + group_bytes(&down) + group_bytes(&fin), "{pair}");
        let their_flops: f64 = tracelens_rows(pair, "MoE_unfused_fwd.csv")
            .iter()
            .map(|r| r["GFLOPS_first"].parse::<f64>().unwrap() * 1e9)
            .sum();
        assert!((their_flops * n as f64 / h as f64 - flops as f64).abs() < 1.0, "{pair}: {their_flops} vs {flops}");
        for row in tracelens_rows(pair, "MoE_unfused_fwd.csv") {
            let is_down = row["name"].ends_with("_down");
            assert_eq!((num(&row, "param: inter_dim"), num(&row, "param: topk")), (h, k));
            let mib = row["Data Moved (MB)_first"].parse::<f64>().unwrap();
            assert!((theirs(h as f64, is_down) / 1048576.0 - mib).abs() < 1e-6, "{pair} {}: {mib}", row["name"]);
            let (ours, extra) = if is_down { (&down, (rows - x) as f64) } else { (&up, 0.0) };
            let ours = ours["fused_bytes_per_call"].as_f64().unwrap();
            assert!((ours - theirs(n as f64, is_down) - extra).abs() <= 1.0, "{pair} {}", row["name"]);
        }
    }
}

#[test]
fn sglang_paged_prefill_attention_and_kv_store_bytes_follow_from_the_recorded_shapes_and_bounds() {
    let v = json(&["trace", &data("traces/amd/sglang_qwen3-8b_prefilldecode_mi300x.json.gz"), "--json"]);
    let f = &v["fusion"];
    let groups = f["groups"].as_array().unwrap();
    let dims = |g: &serde_json::Value| -> Vec<Vec<u64>> {
        g["ops"][0]["input_dims"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| serde_json::from_value(d.clone()).unwrap())
            .collect()
    };
    let numel = |d: &[u64]| d.iter().product::<u64>();
    let attention: Vec<_> = groups.iter().filter(|g| g["launched_by"] == "aiter::mha_batch_prefill").collect();
    assert!(!attention.is_empty());
    for g in attention {
        let d = dims(g);
        // 15 sequences (cu_seqlens_q of 16) packed into 15,360 = 15 × 1,024 queries, both
        // bounds 1,024: each sequence 1,024 queries over 1,024 keys.
        let (b, n) = (d[3][0] - 1, 1024);
        assert_eq!((b, d[0][0]), (15, b * n));
        // q read and the output written (bf16), each sequence's K and V rows read (a token a
        // page in this [pages, heads, dim] cache), cu_seqlens_q and kv_indptr, and the page
        // indices used (int32): 15,360 of the 15,616 recorded.
        let q = numel(&d[0]) * 2;
        let row = numel(&d[1][1..]) * 2;
        let fused = 2 * q + 2 * b * n * row + 4 * (d[3][0] + d[4][0] + b * n);
        assert_eq!(g["fused_bytes_per_call"], fused);
        // Unfused, 32 heads × 15 causal score triangles of n(n+1)/2, bf16, written and read
        // twice over.
        assert_eq!(g["unfused_bytes_per_call"], fused + 32 * b * (n * (n + 1) / 2) * 2 * 4);
    }
    let stores: Vec<_> = groups.iter().filter(|g| g["launched_by"] == "sglang::store_cache").collect();
    assert!(!stores.is_empty());
    for g in stores {
        let d = dims(g);
        let tokens = d[4][0];
        // 8-byte slots; key and value rows read and written, all bf16.
        assert_eq!(g["fused_bytes_per_call"], tokens * 8 + 4 * tokens * d[0][1] * 2);
    }
    // 0.001 % has no model (SGLang's position kernel under a profiler annotation).
    assert_eq!(f["totals"]["bytes_known_of_recorded_pct"], 99.999);
}

#[test]
fn collectives_take_their_bytes_from_the_c10d_op_that_holds_the_launch() {
    let v = json(&["trace", &data("traces/nvidia/hta_a100_compiled_rank0.json.gz"), "--json"]);
    let f = &v["fusion"];
    let groups: Vec<_> =
        f["groups"].as_array().unwrap().iter().filter(|g| g["kernel"].as_str().unwrap().starts_with("nccl")).collect();
    let (mut known, mut allreduce) = (0, 0);
    for g in &groups {
        let op = g["ops"][0]["op"].as_str().unwrap_or_default();
        match op {
            // (output, input, …): the input read and the output written once; dims and types
            // as this PyTorch recorded them on the c10d op.
            "c10d::alltoall_base_" | "c10d::_reduce_scatter_base_" | "c10d::_allgather_base_" => {
                let dims: Vec<Vec<u64>> = serde_json::from_value(g["ops"][0]["input_dims"].clone()).unwrap();
                let size = |t: &serde_json::Value| match t.as_str().unwrap() {
                    "float" | "int" => 4,
                    "long" | "long int" => 8,
                    other => panic!("{other}"),
                };
                let types = g["ops"][0]["input_types"].as_array().unwrap();
                let bytes: u64 = (0..2).map(|i| dims[i].iter().product::<u64>() * size(&types[i])).sum();
                assert_eq!(g["fused_bytes_per_call"], bytes, "{op} {dims:?}");
                assert_eq!(g["unfused_bytes_per_call"], bytes);
                assert_eq!(g["kind"], "other");
                known += 1;
            }
            // The gradient all-reduce: c10d::allreduce_ records its tensor list as `[]`.
            _ if g["launched_by"] == "record_param_comms" => {
                let why = g["bytes_unknown"].as_str().unwrap();
                assert!(why.starts_with("c10d::allreduce_ recorded its tensors as [[], [], [], []]"), "{why}");
                allreduce += 1;
            }
            // Before the profiler's CPU window: no op at all.
            _ => assert!(g["launched_by"].is_null(), "{g}"),
        }
    }
    // 17 collective signatures with their buffers recorded, one all-reduce without.
    assert_eq!((known, allreduce), (17, 1));
    // The rest is not recorded: the all-reduce, compiled graphs, kernels before the CPU window.
    assert_eq!(f["totals"]["bytes_known_of_recorded_pct"], 100.0);
}

/// The named serving and compiled traces, beyond what the tests above pin: bytes
/// for ≥ 95 % of the GPU time whose bytes the trace records what they need for (the split by
/// cause in `docs/trace-fusion.md`, "Whose gap"), and the unknown time all accounted for.
#[test]
fn the_named_traces_know_the_bytes_of_what_they_record() {
    let compiled = json(&["trace", &data("traces/amd/torch_compile_triton_mi300x.json.gz"), "--json"]);
    for (name, v) in [
        ("compiled", &compiled),
        ("param_linear", with_exec_trace("param_linear")),
        ("simple add", with_exec_trace("hta_simple_add")),
    ] {
        let t = &v["fusion"]["totals"];
        let f = |k: &str| t[k].as_f64().unwrap();
        let u = |k: &str| t["unknown_us"][k].as_f64().unwrap();
        assert!(f("bytes_known_of_recorded_pct") >= 95.0, "{name}: {t}");
        let parts = f("bytes_known_us") + u("not_recorded") + u("no_model") + u("bad_input");
        assert!((parts - f("gpu_time_us")).abs() < 1e-2, "{name}: {t}");
    }
}
