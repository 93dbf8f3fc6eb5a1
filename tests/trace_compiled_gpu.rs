//! The compiled runs made on an NVIDIA H200 (tests/data/compiled/*_cuda.*, made by
//! scripts/make-compiled-traces on the GPU): a real GPU xplane with XLA's command buffers and
//! cuDNN convolutions, real Triton kernels with Inductor's provenance and its own estimates,
//! and one block run eagerly and replayed from a CUDA graph.

use crate::common::{data, json};

/// `trace FILE --json` of a file of tests/data/compiled.
fn trace(file: &str, more: &[&str]) -> serde_json::Value {
    let path = data(&format!("compiled/{file}"));
    let mut args = vec!["trace", path.as_str(), "--json"];
    args.extend_from_slice(more);
    json(&args)
}

/// Every kernel of the H200 profiles gets its group from the HLO the profile carries: the
/// block's kernels, which ran inside an XLA command buffer (`hlo_op` names the buffer, not the
/// fusion), by their kernel names; the convnet's, by `hlo_op`, where cuDNN's convolution runs
/// two kernels per op and its bytes are counted once.
#[test]
fn every_kernel_of_an_h200_xla_profile_has_its_hlo_group() {
    for (file, fusions) in [("jax_block_cuda.xplane.pb", 15), ("jax_convnet_cuda.xplane.pb", 8)] {
        let v = trace(file, &[]);
        assert_eq!(v["chip"]["name"], "H200 SXM", "{file}: {}", v["chip"]);
        assert_eq!(v["platforms"][0]["vendor"], "NVIDIA", "{file}");
        let groups = v["fusion"]["groups"].as_array().unwrap();
        assert_eq!(groups.len(), fusions, "{file}");
        for g in groups {
            let counted_elsewhere = g["bytes_unknown_cause"] == "counted at another kernel";
            assert!(g["how"] == "HLO" || counted_elsewhere, "{file}: {g}");
        }
        assert_eq!(v["fusion"]["totals"]["bytes_known_pct"], 100.0, "{file}");
        let ops = v["ops"].as_array().unwrap();
        assert!(ops.iter().all(|o| o["model"] == "HLO"), "{file}: {ops:?}");
        assert!(!ops.iter().any(|o| o["op"].as_str().unwrap().starts_with("command_buffer")), "{file}");
        assert_eq!(v["op_coverage"]["unattributed_us"], 0.0, "{file}");
    }
    // XLA names each fusion after its instructions: every kernel of the block has a category.
    let v = trace("jax_block_cuda.xplane.pb", &[]);
    let categories: Vec<&str> =
        v["categories"].as_array().unwrap().iter().map(|c| c["category"].as_str().unwrap()).collect();
    assert_eq!(categories, ["gemm", "memory", "softmax", "elementwise"], "{}", v["categories"]);
    // The first projection of the block: a Triton GEMM fusion, x f32[2,16,64] normalised by
    // the fusion before it (f32[32,64]) times the weight f32[64,192] into f32[32,192].
    let v = trace("jax_block_cuda.xplane.pb", &[]);
    let ops = v["ops"].as_array().unwrap();
    let gemm = ops.iter().find(|o| o["op"] == "gemm_fusion_dot").unwrap();
    assert_eq!(gemm["bytes_per_call"], (32 * 64 + 64 * 192 + 32 * 192) * 4);
    assert_eq!(gemm["flops_per_call"], 2 * 32 * 64 * 192);
}

/// The Triton kernels of the H200 run are every one joined to their provenance, and each
/// launch's own estimate (`kernel_num_gb`) stands beside the exact bytes: equal for six of the
/// nine, and 16 KiB under ours for the three kernels that slice q, k and v out of the fused
/// QKV projection, which read only their third of it where fusionscope counts the whole.
#[test]
fn triton_kernels_of_an_h200_run_join_their_provenance_beside_inductors_estimate() {
    let log = data("compiled/torch_block_cuda.compile.log.gz");
    let v = trace("torch_block_cuda.trace.json.gz", &["--compile-log", &log]);
    let c = &v["compiled_kernels"];
    assert!(
        c["line"].as_str().unwrap().contains("15 of 15 ran in the trace (3 compiled regions), 0 generated kernels"),
        "{}",
        c["line"]
    );
    let rows = c["kernels"].as_array().unwrap();
    assert!(rows.iter().all(|k| k["calls"] == 3), "{rows:?}");
    let triton: Vec<_> = rows.iter().filter(|k| k["kernel"].as_str().unwrap().starts_with("triton_")).collect();
    assert_eq!(triton.len(), 9);
    let mut equal = 0;
    for k in &triton {
        let name = k["kernel"].as_str().unwrap();
        let ours = k["fused_bytes"].as_u64().unwrap();
        let inductor = k["inductor_estimate"]["bytes"].as_u64().unwrap_or_else(|| panic!("{name}: {k}"));
        if name.contains("_split_") {
            assert_eq!(ours - inductor, 16 * 1024, "{name}");
        } else {
            assert_eq!(ours, inductor, "{name}");
            equal += 1;
        }
    }
    assert_eq!(equal, 6);
    // Library calls (cuBLAS through extern_kernels) carry no estimate.
    assert!(rows.iter().filter(|k| k["kind"] == "library call").all(|k| k.get("inductor_estimate").is_none()));
    // The groups in the trace's fusion view are the log's, for every Triton kernel.
    let groups = v["fusion"]["groups"].as_array().unwrap();
    for g in groups.iter().filter(|g| g["kernel"].as_str().unwrap().starts_with("triton_")) {
        assert_eq!(g["how"], "Inductor provenance", "{g}");
    }
    // The re-prediction scored against the truth: each Triton kernel expanded from its exact
    // post-grad nodes. The rules re-form 21 of the 27 launches so; from the names alone, 18,
    // where the softmax kernel's words (`_softmax_amax_div_mul_sub`) read as a softmax and a
    // separate reduction, which the rules will not fuse after it. The six misses left are the
    // q and k kernels sliced out of one projection, which the rules would fuse; the residual
    // add ending one call of the graph and the norm starting the next are never fused (a
    // barrier between calls).
    let exact = &v["fusion"]["reprediction"];
    assert_eq!((exact["kernels"].as_u64(), exact["exact"].as_u64()), (Some(27), Some(27)), "{exact}");
    assert_eq!((exact["matched"].as_u64(), exact["name_differs"].as_u64()), (Some(21), Some(12)), "{exact}");
    let misses: Vec<&str> = exact["misses"].as_array().unwrap().iter().map(|m| m["kernel"].as_str().unwrap()).collect();
    assert!(misses.iter().all(|m| m.contains("_split_transpose_view_")), "{misses:?}");
    let named = &trace("torch_block_cuda.trace.json.gz", &[])["fusion"]["reprediction"];
    assert_eq!((named["matched"].as_u64(), named["exact"].as_u64()), (Some(18), Some(0)), "{named}");
    let softmax = "triton_per_fused__softmax_amax_div_mul_sub_view_3";
    assert!(named["misses"].as_array().unwrap().iter().any(|m| m["kernel"] == softmax));
    assert!(!exact["misses"].as_array().unwrap().iter().any(|m| m["kernel"] == softmax));
    let log = data("compiled/torch_convnet_cuda.compile.log.gz");
    let v = trace("torch_convnet_cuda.trace.json.gz", &["--compile-log", &log]);
    let line = v["compiled_kernels"]["line"].as_str().unwrap();
    assert!(line.contains("ran in the trace") && line.contains(", 0 generated kernels not in the log"), "{line}");
    let rows = v["compiled_kernels"]["kernels"].as_array().unwrap();
    assert!(rows.iter().all(|k| k["calls"] == 3), "{rows:?}");
}

/// With its compile log every op of the compiled block's trace is priced: the op table covers
/// the GPU time exactly, never more (the ops' times are unions of their kernels on the trace's
/// clock, µs since an epoch, where each span's ends lose a fraction of a ns), and the four
/// parts of the coverage add up to the GPU time.
#[test]
fn the_op_tables_coverage_adds_up_to_the_gpu_time() {
    let log = data("compiled/torch_block_cuda.compile.log.gz");
    let v = trace("torch_block_cuda.trace.json.gz", &["--compile-log", &log]);
    let c = &v["op_coverage"];
    assert_eq!(c["modelled_pct"], 100.0, "{c}");
    assert_eq!(c["modelled_us"], c["gpu_time_us"], "{c}");
    for file in ["torch_block_cuda.eager.trace.json.gz", "torch_convnet_cuda.trace.json.gz", "jax_block_cuda.xplane.pb"]
    {
        let c = trace(file, &[])["op_coverage"].clone();
        let f = |k: &str| c[k].as_f64().unwrap();
        let parts = f("modelled_us") + f("unmodelled_us") + f("unattributed_us") + f("overlap_us");
        assert!((parts - f("gpu_time_us")).abs() < 0.002, "{file}: {c}");
        assert!(f("modelled_pct") <= 100.0, "{file}: {c}");
    }
}

/// The same block eager and replayed from one CUDA graph: what the eager trace says a graph
/// would remove is what the replay did remove, within 1 % (the host waits before its kernels
/// and its copies; a copy's own time is no wait).
#[test]
fn a_graph_replay_removes_the_host_wait_the_eager_trace_predicts() {
    let eager = trace("torch_block_cuda.eager.trace.json.gz", &[]);
    let graph = trace("torch_block_cuda.graph.trace.json.gz", &[]);
    let idle = |v: &serde_json::Value| v["timeline"]["idle_us"].as_f64().unwrap();
    let predicted = eager["launch_cost"]["graph_saving_us"].as_f64().unwrap();
    let removed = idle(&eager) - idle(&graph);
    println!("a graph would remove {predicted:.1} µs of idle time; the replay removed {removed:.1} µs");
    assert!((predicted - removed).abs() <= 0.01 * removed, "{predicted} vs {removed}");
    // The replay's kernels wait on no host: three launch calls, one per replay.
    assert_eq!(graph["launch_cost"]["calls"], 3);
    assert_eq!(graph["waits"]["streams"][0]["host_wait_us"], 0.0);
    assert_eq!(eager["launch_cost"]["calls"], 75);
}
