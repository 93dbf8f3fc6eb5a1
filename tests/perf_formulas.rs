//! The per-op cost formulas (`src/perf/`, `docs/cost-formulas.md`) checked three ways:
//! against TraceLens's report of the same two Qwen1.5-0.5B traces (FLOPs and bytes within 1 %
//! on every GEMM and SDPA row; the pointwise and reduction rows differ only where the docs say
//! why); on the arguments real traces record (every op TraceLens saw launch kernels gets a cost
//! or a known reason, Inductor's Triton kernels get bytes). Their properties are
//! `tests/perf_props.rs`.

use std::collections::BTreeMap;

use crate::common::tracelens::{csv, python_list_to_json, python_tuple_to_json};
use fusionscope::perf::{cost_from_trace, DType, Family, NoCost, OpCost, RawArgs};

// ---- TraceLens's report ------------------------------------------------------------------------

const FOLDERS: [&str; 2] = ["qwen1.5-0.5b_h100", "qwen1.5-0.5b_mi300x"];

/// A report row: op name, the three recorded arguments as the trace writes them, TraceLens's
/// FLOPs and bytes.
struct Row {
    sheet: String,
    name: String,
    dims: String,
    types: String,
    concrete: String,
    flops: f64,
    bytes: f64,
}

impl Row {
    fn cost(&self) -> Result<OpCost, NoCost> {
        cost_from_trace(
            &self.name,
            RawArgs {
                input_dims: Some(&self.dims),
                input_type: Some(&self.types),
                concrete_inputs: Some(&self.concrete),
                input_strides: None,
            },
        )
    }

    fn label(&self) -> String {
        format!("{} {} {} {}", self.sheet, self.name, self.dims, self.types)
    }
}

fn report(sheet: &str) -> Vec<Row> {
    FOLDERS.iter().flat_map(|folder| sheet_rows(folder, sheet)).collect()
}

/// The rows of one sheet of one report.
fn sheet_rows(folder: &str, sheet: &str) -> Vec<Row> {
    csv(&format!("reference/tracelens/{folder}/{sheet}.csv"))
        .into_iter()
        .map(|r| Row {
            sheet: format!("{folder}/{sheet}"),
            name: r["name"].clone(),
            dims: r["Input Dims_first"].clone(),
            types: python_list_to_json(&r["Input type_first"]),
            concrete: python_list_to_json(&r["Concrete Inputs_first"]),
            flops: r["GFLOPS_first"].parse::<f64>().unwrap() * 1e9,
            // "MB" in the report is MiB.
            bytes: r["Data Moved (MB)_first"].parse::<f64>().unwrap() * 1024.0 * 1024.0,
        })
        .collect()
}

fn relative(ours: u64, theirs: f64) -> f64 {
    if theirs == 0.0 {
        if ours == 0 {
            0.0
        } else {
            f64::INFINITY
        }
    } else {
        (ours as f64 - theirs).abs() / theirs
    }
}

#[test]
fn gemm_and_sdpa_rows_match_tracelens_within_one_percent() {
    for sheet in ["GEMM", "SDPA_fwd"] {
        let rows = report(sheet);
        assert!(rows.len() >= 2, "{sheet}: {} rows", rows.len());
        let (mut worst_flops, mut worst_bytes) = (0f64, 0f64);
        for row in &rows {
            let c = row.cost().unwrap_or_else(|e| panic!("{}: {e}", row.label()));
            let (f, b) = (relative(c.flops, row.flops), relative(c.bytes, row.bytes));
            assert!(f <= 0.01, "{}: FLOPs {} vs TraceLens {} ({:.4} %)", row.label(), c.flops, row.flops, f * 100.0);
            assert!(b <= 0.01, "{}: bytes {} vs TraceLens {} ({:.4} %)", row.label(), c.bytes, row.bytes, b * 100.0);
            worst_flops = worst_flops.max(f);
            worst_bytes = worst_bytes.max(b);
        }
        println!(
            "{sheet}: {} rows, largest relative difference FLOPs {:.2e}, bytes {:.2e}",
            rows.len(),
            worst_flops,
            worst_bytes
        );
    }
}

/// Where the pointwise and reduction models count differently from TraceLens, and why
/// (`docs/cost-formulas.md`, "Differences from TraceLens").
fn documented_difference(row: &Row, ours: &OpCost) -> Option<&'static str> {
    match row.name.as_str() {
        "aten::copy_" if ours.flops == 0 => Some("a copy or conversion moves data and does no arithmetic: 0 FLOPs"),
        "aten::mean" => Some("the output is the reduced shape read from Concrete Inputs (dim [-1]), not 1 element"),
        _ => None,
    }
}

#[test]
fn pointwise_and_reduction_rows_differ_only_where_documented() {
    let mut seen = BTreeMap::new();
    for sheet in ["BinaryElementwise", "UnaryElementwise", "Reduce_fwd"] {
        let rows = report(sheet);
        assert!(!rows.is_empty(), "{sheet}");
        for row in &rows {
            let c = row.cost().unwrap_or_else(|e| panic!("{}: {e}", row.label()));
            let (f, b) = (relative(c.flops, row.flops), relative(c.bytes, row.bytes));
            // Bytes agree within 1 % on every row (the reduction's output is 0.1 % of its input).
            assert!(b <= 0.01, "{}: bytes {} vs TraceLens {}", row.label(), c.bytes, row.bytes);
            match documented_difference(row, &c) {
                Some(why) if f > 1e-9 || b > 1e-9 => {
                    println!(
                        "{}: FLOPs {} vs {}, bytes {} vs {} ({:+.3} %): {why}",
                        row.label(),
                        c.flops,
                        row.flops,
                        c.bytes,
                        row.bytes,
                        (c.bytes as f64 / row.bytes - 1.0) * 100.0
                    );
                    *seen.entry(row.name.clone()).or_insert(0) += 1;
                }
                _ => {
                    assert!(f <= 1e-9, "{}: FLOPs {} vs TraceLens {}", row.label(), c.flops, row.flops);
                    assert!(b <= 1e-9, "{}: bytes {} vs TraceLens {}", row.label(), c.bytes, row.bytes);
                }
            }
        }
    }
    // Both documented differences occur (so the list above stays honest).
    assert_eq!(seen.keys().cloned().collect::<Vec<_>>(), vec!["aten::copy_", "aten::mean"]);
}

#[test]
fn every_op_tracelens_saw_launch_kernels_gets_a_cost_or_a_known_reason() {
    let known: BTreeMap<&str, &str> = [
        ("aten::cat", "the trace does not record the element type of the tensors in list input 0"),
        ("aten::_local_scalar_dense", "no model for aten::_local_scalar_dense"),
    ]
    .into_iter()
    .collect();
    for folder in FOLDERS {
        let mut costed = 0;
        for r in csv(&format!("reference/tracelens/{folder}/ops_unique_args.csv")) {
            let time: f64 = r["total_direct_kernel_time_sum"].parse().unwrap_or(0.0);
            if time <= 0.0 {
                continue;
            }
            let (dims, types, concrete) = (
                python_tuple_to_json(&r["Input Dims"]),
                python_tuple_to_json(&r["Input type"]),
                python_tuple_to_json(&r["Concrete Inputs"]),
            );
            let raw = RawArgs {
                input_dims: Some(&dims),
                input_type: Some(&types),
                concrete_inputs: Some(&concrete),
                input_strides: None,
            };
            let name = r["name"].as_str();
            match (cost_from_trace(name, raw), known.get(name)) {
                (Ok(_), None) => costed += 1,
                (Err(e), Some(why)) => assert_eq!(e.to_string(), *why, "{folder} {name} {dims}"),
                (result, _) => panic!("{folder} {name} {dims} {types}: {result:?}"),
            }
        }
        assert!(costed >= 30, "{folder}: {costed} ops costed");
    }
}

/// SGLang's Qwen3-8B on an MI300X: the serving engine's own ops (AMD aiter's RMSNorms and paged prefill,
/// SGLang's rotary embedding, gated activation and KV-cache write) against TraceLens's report,
/// each difference the one `docs/cost-formulas.md` gives ("Differences from TraceLens").
#[test]
fn serving_ops_match_tracelens_where_the_docs_say() {
    let mut checked = BTreeMap::<String, usize>::new();
    for sheet in ["RMSNorm_fwd", "RoPE_fwd", "UnaryElementwise", "InferenceAttention_fwd"] {
        for row in sheet_rows("sglang_qwen3-8b_prefilldecode", sheet) {
            if row.name.starts_with("aten::") {
                continue; // the Qwen1.5 reports check these
            }
            let c = row.cost().unwrap_or_else(|e| panic!("{}: {e}", row.label()));
            let dims: Vec<Vec<u64>> = serde_json::from_str(&row.dims).unwrap();
            let tokens = dims[0][0];
            // TraceLens counts neither index tensors (positions, slots: int64) nor the rotary
            // cache's rows (one of 128 bf16 values per token here).
            let (flops, bytes) = match row.name.as_str() {
                "sgl_kernel::rotary_embedding" => (row.flops, row.bytes + (tokens * 8 + tokens * 128 * 2) as f64),
                "sglang::store_cache" => (row.flops, row.bytes + (tokens * 8) as f64),
                // Nor the prefill's: cu_seqlens_q and kv_indptr (16 int32 each), and the page
                // indices its 15 sequences of 1,024 keys use (one int32 a token-page).
                "aiter::mha_batch_prefill" => (row.flops, row.bytes + (2 * 16 * 4 + tokens * 4) as f64),
                // A pointwise step is one FLOP here; TraceLens counts SiLU as 4.
                "sgl_kernel::silu_and_mul" => (row.flops * 2.0 / 5.0, row.bytes),
                _ => (row.flops, row.bytes),
            };
            assert!(relative(c.bytes, bytes) <= 1e-9, "{}: bytes {} vs {bytes}", row.label(), c.bytes);
            // TraceLens's RMSNorm adds a few FLOPs per row; the rest agree exactly.
            let within = if sheet == "RMSNorm_fwd" { 0.01 } else { 1e-9 };
            assert!(relative(c.flops, flops) <= within, "{}: FLOPs {} vs {flops}", row.label(), c.flops);
            *checked.entry(row.name.clone()).or_default() += 1;
        }
    }
    let names: Vec<&str> = checked.keys().map(String::as_str).collect();
    assert_eq!(
        names,
        [
            "aiter::add_rmsnorm",
            "aiter::mha_batch_prefill",
            "aiter::rmsnorm",
            "sgl_kernel::rotary_embedding",
            "sgl_kernel::silu_and_mul",
            "sglang::store_cache"
        ]
    );
}

// ---- real traces ------------------------------------------------------------------------------

/// A `cpu_op` as a trace records it: its name and the three argument texts (re-serialised from
/// the parsed event, as the reader keeps them).
#[derive(Debug)]
struct RecordedOp {
    name: String,
    dims: Option<String>,
    types: Option<String>,
    concrete: Option<String>,
}

impl RecordedOp {
    fn cost(&self) -> Result<OpCost, NoCost> {
        cost_from_trace(
            &self.name,
            RawArgs {
                input_dims: self.dims.as_deref(),
                input_type: self.types.as_deref(),
                concrete_inputs: self.concrete.as_deref(),
                input_strides: None,
            },
        )
    }
}

/// Every `cpu_op` of a trace under tests/data/traces.
fn cpu_ops(rel: &str) -> Vec<RecordedOp> {
    let bytes = crate::common::gunzip(&crate::common::trace_bytes(rel));
    let trace: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    let events = trace.get("traceEvents").and_then(|e| e.as_array()).cloned().unwrap_or_default();
    events
        .iter()
        .filter(|e| e["cat"] == "cpu_op")
        .map(|e| {
            let text = |key: &str| e["args"].get(key).map(|v| v.to_string());
            RecordedOp {
                name: e["name"].as_str().unwrap_or("").to_string(),
                dims: text("Input Dims"),
                types: text("Input type"),
                concrete: text("Concrete Inputs"),
            }
        })
        .collect()
}

#[test]
fn inductor_triton_kernels_get_their_bytes() {
    let ops = cpu_ops("amd/torch_compile_triton_mi300x.json.gz");
    let mut triton: Vec<(String, OpCost)> = ops
        .iter()
        .filter(|op| op.name.starts_with("triton_"))
        .map(|op| (op.name.clone(), op.cost().unwrap_or_else(|e| panic!("{}: {e}", op.name))))
        .collect();
    triton.sort_by(|a, b| a.0.cmp(&b.0));
    let x = 8 * 4096 * 2048; // the hidden state, bf16
    let expected: Vec<(&str, u64, u64)> = vec![
        // (kernel, bytes, estimated FLOPs): each buffer argument once; the op words times the
        // iteration elements.
        ("triton_poi_fused__unsafe_view_add_3", 3 * x * 2, x),
        ("triton_poi_fused__unsafe_view_mul_silu_2", 2 * 4 * x * 2, 2 * 4 * x),
        ("triton_red_fused__unsafe_view_add_mean_mul_pow_rsqrt_1", (3 * x + 2048) * 2, 5 * x),
        ("triton_red_fused_add_mean_mul_pow_rsqrt_0", (2 * x + 2048) * 2, 5 * x),
    ];
    let got: Vec<(&str, u64, u64)> = triton.iter().map(|(n, c)| (n.as_str(), c.bytes, c.flops)).collect();
    assert_eq!(got, expected);
    for (name, c) in &triton {
        assert_eq!((c.family, c.estimate, c.dtype), (Family::Triton, true, DType::BF16), "{name}");
    }
}

#[test]
fn every_cpu_op_of_every_test_trace_is_costed_or_refused_with_a_one_line_reason() {
    let traces = [
        "nvidia/hf_qwen1.5-0.5b_eager_h100.json.gz",
        "amd/hf_qwen1.5-0.5b_eager_mi300x.json.gz",
        "nvidia/hf_bert-small_eager_h100.json.gz",
        "amd/hf_bert-small_eager_mi300x.json.gz",
        "nvidia/tracelens_eager_b200.json.gz",
        "nvidia/hta_a100_compiled_rank0.json.gz",
        "amd/sglang_qwen3-8b_decode_hipgraph_mi300x.json.gz",
        "amd/torch_compile_triton_mi300x.json.gz",
        "amd/hta_mi250_minitoy_train_rocm6.2.json.gz",
    ];
    for rel in traces {
        let mut reasons: BTreeMap<String, usize> = BTreeMap::new();
        let mut costed: BTreeMap<String, usize> = BTreeMap::new();
        for op in cpu_ops(rel) {
            match op.cost() {
                Ok(_) => *costed.entry(op.name.clone()).or_default() += 1,
                Err(e) => {
                    let text = e.to_string();
                    assert!(
                        !text.is_empty() && !text.contains('\n') && text.len() < 300,
                        "{rel} {}: {text:?}",
                        op.name
                    );
                    if !matches!(e, NoCost::UnknownOp(_)) {
                        *reasons.entry(format!("{}: {text}", op.name)).or_default() += 1;
                    }
                }
            }
        }
        println!("{rel}: {} ops costed ({} distinct)", costed.values().sum::<usize>(), costed.len());
        for (reason, n) in &reasons {
            println!("  {n:>5} × {reason}");
        }
    }
}

#[test]
fn the_eager_qwen_traces_model_every_kernel_owning_op() {
    // The ops whose kernels make up the eager Qwen traces (see ops_unique_args.csv).
    for rel in ["nvidia/hf_qwen1.5-0.5b_eager_h100.json.gz", "amd/hf_qwen1.5-0.5b_eager_mi300x.json.gz"] {
        let ops = cpu_ops(rel);
        for name in [
            "aten::mm",
            "aten::addmm",
            "aten::bmm",
            "aten::_flash_attention_forward",
            "aten::copy_",
            "aten::add",
            "aten::mul",
            "aten::pow",
            "aten::mean",
            "aten::rsqrt",
            "aten::silu",
            "aten::neg",
            "aten::index_select",
            "aten::cos",
            "aten::sin",
            "aten::eq",
            "aten::all",
        ] {
            let calls: Vec<_> = ops.iter().filter(|op| op.name == name).collect();
            assert!(!calls.is_empty(), "{rel}: no {name}");
            for op in calls {
                op.cost().unwrap_or_else(|e| panic!("{rel} {name} {:?}: {e}", op.dims));
            }
        }
    }
}

// ---- through the CLI: the fusion groups take their bytes from these models ------------------------

/// The groups of `fusionscope trace FILE --json` launched by `op` whose first op recorded `dims`.
fn groups_of<'a>(v: &'a serde_json::Value, op: &str, dims: &str) -> Vec<&'a serde_json::Value> {
    let dims: serde_json::Value = serde_json::from_str(dims).unwrap();
    v["fusion"]["groups"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|g| g["launched_by"] == op && g["ops"][0]["input_dims"] == dims)
        .collect()
}

/// The TorchRec DLRM training step on an A100 (FBGEMM's sparse-feature and embedding ops, no
/// Concrete Inputs): every FBGEMM op has a model, the groups of the ones whose outputs the
/// shapes fix carry their bytes, and the others say which recorded value is missing.
#[test]
fn torchrec_groups_get_fbgemm_bytes_or_the_missing_value() {
    let v = crate::common::json(&[
        "trace",
        &crate::common::data("traces/nvidia/hta_a100_compiled_rank0.json.gz"),
        "--json",
    ]);
    let bytes = |op: &str, dims: &str, kernel: &str| -> Vec<u64> {
        groups_of(&v, op, dims)
            .into_iter()
            .filter(|g| g["kernel"].as_str().unwrap().contains(kernel))
            .map(|g| {
                g["fused_bytes_per_call"].as_u64().unwrap_or_else(|| panic!("{op} {dims}: {}", g["bytes_unknown"]))
            })
            .collect()
    };
    // permute of 88 features × 4,096 samples: permute list, lengths read and written, 689,849
    // int values read and written.
    assert_eq!(
        bytes("fbgemm::permute_2D_sparse_data", "[[88], [88, 4096], [689849], [], []]", "permute_2D_data_kernel"),
        [88 * 4 + 2 * 88 * 4096 * 4 + 2 * 689_849 * 4]
    );
    assert_eq!(
        bytes("fbgemm::bounds_check_indices", "[[6], [34174], [393217], [], [1], [], [], []]", "bounds_check"),
        [(6 + 34_174 + 393_217) * 8]
    );
    assert_eq!(
        bytes("fbgemm::permute_pooled_embs_auto_grad", "[[4096, 768], [13], [12], [13], [12]]", "permute_pooled"),
        [2 * 4096 * 768 * 4 + (13 + 12 + 13 + 12) * 8]
    );
    assert_eq!(
        bytes("fbgemm::asynchronous_complete_cumsum", "[[393216]]", "DeviceScanKernel"),
        [(2 * 393_216 + 1) * 4]
    );
    // A 1-D mean reduces to one element whatever its unrecorded dim.
    assert_eq!(bytes("aten::mean", "[[4096], [], [], []]", "reduce_kernel"), [(4096 + 1) * 4]);
    for g in v["fusion"]["groups"].as_array().unwrap() {
        // (A memset the op launched knows its own size.)
        let Some(why) = g["bytes_unknown"].as_str() else { continue };
        assert!(!why.starts_with("no model for"), "{}: {why}", g["launched_by"]);
        match g["launched_by"].as_str().unwrap_or_default() {
            "fbgemm::block_bucketize_sparse_features" if !why.starts_with("one of") => {
                assert_eq!(why, "Concrete Inputs missing: my_size (input 5) is needed")
            }
            "fbgemm::split_embedding_codegen_lookup_rowwise_adagrad_function" => {
                assert_eq!(why, "Concrete Inputs missing: total_D (input 7) is needed")
            }
            "torch::autograd::CppNode<SplitLookupFunction_rowwise_adagrad_Op>" => {
                assert!(
                    why.starts_with("the embedding backward updates the rows its forward's indices picked"),
                    "{why}"
                )
            }
            _ => {}
        }
    }
}

/// The MI250 toy training step's loss and its backward, the B200 vLLM trace's FP8 quantization.
#[test]
fn loss_and_fp8_quant_groups_get_their_bytes() {
    let v = crate::common::json(&[
        "trace",
        &crate::common::data("traces/amd/hta_mi250_minitoy_train_rocm6.2.json.gz"),
        "--json",
    ]);
    let known = |v: &serde_json::Value, op: &str, dims: &str| -> u64 {
        let g = groups_of(v, op, dims);
        assert_eq!(g.len(), 1, "{op} {dims}");
        g[0]["fused_bytes_per_call"].as_u64().unwrap()
    };
    assert_eq!(known(&v, "aten::mse_loss", "[[5, 128], [5, 128], []]"), (640 + 640 + 1) * 4);
    assert_eq!(known(&v, "aten::mse_loss_backward", "[[], [5, 128], [5, 128], [], [5, 128]]"), (1 + 3 * 640) * 4);
    let v =
        crate::common::json(&["trace", &crate::common::data("traces/nvidia/tracelens_eager_b200.json.gz"), "--json"]);
    // bf16 input read, fp8 result written, one fp32 scale read.
    assert_eq!(known(&v, "_C::static_scaled_fp8_quant", "[[888, 512], [888, 512], []]"), 888 * 512 * 3 + 4);
}

/// The eager Qwen traces' `aten::cat` (rotary halves joined, no `out=` tensor): the op table
/// takes its element size from its kernel's name, as its fusion group does, so both give the
/// same bytes and the op counts towards the models' coverage.
#[test]
fn a_list_copy_gets_its_element_size_from_its_kernel_in_the_op_table_too() {
    for rel in ["nvidia/hf_qwen1.5-0.5b_eager_h100.json.gz", "amd/hf_qwen1.5-0.5b_eager_mi300x.json.gz"] {
        let v = crate::common::json(&["trace", &crate::common::data(&format!("traces/{rel}")), "--json"]);
        let dims = "[[[16, 16, 559, 32], [16, 16, 559, 32]], []]";
        let row = v["ops"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| {
                r["op"] == "aten::cat" && r["input_dims"] == serde_json::from_str::<serde_json::Value>(dims).unwrap()
            })
            .unwrap_or_else(|| panic!("{rel}: no cat row"));
        // Two bf16 halves of 16 × 16 × 559 × 32 read, their join written.
        let bytes = 2 * 2 * (2 * 16 * 16 * 559 * 32);
        assert_eq!((row["model"].as_str(), row["bytes_per_call"].as_u64()), (Some("copy"), Some(bytes)), "{rel}");
        assert_eq!(row["bound"], "memory", "{rel}");
        let groups = groups_of(&v, "aten::cat", dims);
        assert!(!groups.is_empty() && groups.iter().all(|g| g["fused_bytes_per_call"] == bytes), "{rel}");
    }
}
