//! `fusionscope compile-log` as a user runs it, on the compiled runs of tests/data/compiled.

use crate::common::{data, json, run};

#[test]
fn a_compile_log_alone_lists_each_kernel_with_its_nodes_and_bytes() {
    let log = data("compiled/torch_block_cpu.compile.log.gz");
    let (code, text, err) = run(&["compile-log", &log]);
    assert_eq!(code, 0, "{err}");
    assert!(
        text.contains(
            "torch_block_cpu.compile.log.gz: 1 compiled graph and 9 kernels with their exact post-grad nodes"
        ),
        "{text}"
    );
    assert!(text.contains("cpp_fused__unsafe_view_gelu_2:7"), "{text}");
    // No trace given: no time column.
    assert!(!text.contains("calls"), "{text}");
    let v = json(&["compile-log", &log, "--json"]);
    let kernels = v["log"]["graphs"][0]["kernels"].as_array().unwrap();
    assert_eq!(kernels.len(), 9);
    assert_eq!(kernels[0]["name"], "cpp_fused_native_layer_norm_0");
    assert_eq!(kernels[0]["handle"], 1);
    assert_eq!(kernels[0]["fused_bytes"], 8192 + 256 + 256 + 8192);
    assert!(v.get("joined").is_none());
}

#[test]
fn with_its_trace_every_kernel_has_its_calls_and_time() {
    let log = data("compiled/torch_convnet_cpu.compile.log.gz");
    let trace = data("compiled/torch_convnet_cpu.trace.json.gz");
    let (code, text, err) = run(&["compile-log", &log, "--trace", &trace]);
    assert_eq!(code, 0, "{err}");
    assert!(
        text.contains("6 of 6 ran in the trace (3 compiled regions), 0 generated kernels not in the log"),
        "{text}"
    );
    let v = json(&["compile-log", &log, "--trace", &trace, "--json"]);
    let joined = v["joined"]["kernels"].as_array().unwrap();
    assert_eq!(joined.len(), 6);
    assert!(joined.iter().all(|k| k["calls"] == 3 && k["cpu_us"].as_f64().unwrap() > 0.0), "{joined:?}");
}

/// A CPU run's compiled C++ kernels ran on the CPU: its report speaks of CPU time and an idle
/// CPU, and names no GPU vendor.
#[test]
fn a_cpu_runs_report_speaks_of_the_cpu() {
    let trace = data("compiled/torch_block_cpu.trace.json.gz");
    let (code, text, err) = run(&["trace", &trace]);
    assert_eq!(code, 0, "{err}");
    let first = text.lines().next().unwrap();
    assert!(first.starts_with("CPU: 35.95 ms of CPU time in 12 kernels; CPU busy 35.95 ms, idle 41.87 ms"), "{first}");
    for line in [
        "The CPU is idle 41.87 ms of the trace's 77.83 ms (53.8 %): no compiled kernel ran (the runtime, library \
         calls and Python are not kernels)",
        "norm kernels are 99.8 % of CPU time",
        "torch_block_cpu.trace.json.gz: CPU: 12 kernels, CPU time 35.95 ms",
        "\nCPU timeline\n",
        "\nOps by CPU time (all 4;",
        // Every kernel has its op: the line says nothing of unattributed work.
        "\nModels cover 0.00 % of CPU time (0 µs); ops without a model 35.95 ms.\n",
        "\nFusion: 4 groups of 12 CPU events (CPU time being the sum of",
        "bytes known for 0.00 % of CPU time (0 µs of 35.95 ms)",
        "  in kernels  in calls  launch delay  other waits  kernel share  ",
        "graph_0_cpp_fused__unsafe_view_add_native_layer_norm_1 (kernel, 35.85 ms)",
    ] {
        assert!(text.contains(line), "{line:?} in:\n{text}");
    }
    // Nothing in it speaks of a GPU: the fusion section and the critical path included.
    assert!(!text.contains("GPU") && !text.contains("unknown on CPU"), "{text}");
    // Its gaps between kernels are library calls and Python: no split of them by cause.
    assert!(!text.contains("Idle time between kernels"), "{text}");
    let v = json(&["trace", &trace, "--json"]);
    assert_eq!(v["fusion"]["totals"]["processor"], "cpu");
    assert!(v.get("waits").is_none(), "{}", v["waits"]);
    let summary = json(&["trace", &trace, "--summary-only", "--json"]);
    assert!(summary.get("waits").is_none(), "{}", summary["waits"]);
    let ranks = json(&["ranks", &trace, "--json"]);
    assert!(ranks["ranks"][0].get("waits").is_none(), "{}", ranks["ranks"][0]["waits"]);
}

#[test]
fn a_file_that_is_not_a_compile_log_is_named_with_what_it_lacks() {
    let trace = data("compiled/torch_convnet_cpu.trace.json.gz");
    let (code, _, err) = run(&["compile-log", &trace]);
    assert_eq!(code, 2);
    assert!(err.contains("torch_convnet_cpu.trace.json.gz: not a torch.compile structured log"), "{err}");
}

/// A compile log written here by hand for the TraceLens MI300X compiled trace (its real log
/// was not kept): the first RMSNorm kernel and the first GEMM, as Inductor's provenance
/// (version 2.0) records them. The trace's other generated kernels are not in it.
fn hand_written_log() -> String {
    let header = |name: &str| {
        format!(
            "V0521 11:50:40.520000 3054118 compile_fx.py:2069] {{\"artifact\": {{\"name\": \"{name}\", \"encoding\": \"string\"}}, \"frame_id\": 0, \"frame_compile_id\": 0, \"attempt\": 0, \"has_payload\": \"x\"}}\n"
        )
    };
    let t = |dtype: &str, dims: &str, strides: &str| format!("\\\"{dtype}[{dims}][{strides}]cuda:0\\\"");
    let big = t("bf16", "8, 4096, 2048", "8388608, 2048, 1");
    let graph = [
        "class <lambda>(torch.nn.Module):".to_string(),
        format!(
            "    def forward(self, x: {big}, r: {big}, w: {}, wq: {}):",
            t("bf16", "2048", "1"),
            t("bf16", "2048, 2048", "2048, 1")
        ),
        format!("        add: {big} = torch.ops.aten.add.Tensor(x, r);  x = r = None"),
        format!(
            "        pow_1: {} = torch.ops.aten.pow.Tensor_Scalar(add, 2)",
            t("f32", "8, 4096, 2048", "8388608, 2048, 1")
        ),
        format!("        mean: {} = torch.ops.aten.mean.dim(pow_1, [-1], True)", t("f32", "8, 4096, 1", "4096, 1, 1")),
        format!("        add_1: {} = torch.ops.aten.add.Tensor(mean, 1e-06)", t("f32", "8, 4096, 1", "4096, 1, 1")),
        format!("        rsqrt: {} = torch.ops.aten.rsqrt.default(add_1)", t("f32", "8, 4096, 1", "4096, 1, 1")),
        format!("        mul: {big} = torch.ops.aten.mul.Tensor(add, rsqrt)"),
        format!("        mul_1: {big} = torch.ops.aten.mul.Tensor(mul, w)"),
        format!(
            "        view: {} = torch.ops.aten.view.default(mul_1, [32768, 2048])",
            t("bf16", "32768, 2048", "2048, 1")
        ),
        format!("        mm: {} = torch.ops.aten.mm.default(view, wq)", t("bf16", "32768, 2048", "2048, 1")),
        "        return (mm, add)".to_string(),
    ]
    .map(|l| format!("\t{}\n", l.replace("\\\"", "\"")))
    .concat();
    let provenance = "\t{\"cppCodeToPost\": {\"triton_red_fused_add_mean_mul_pow_rsqrt_0:1\": [\"add\", \"pow_1\", \"mean\", \"add_1\", \"rsqrt\", \"mul\", \"mul_1\"], \"extern_kernels.mm:2\": [\"mm\"]}, \"version\": 2.0}\n";
    header("inductor_post_grad_graph") + &graph + &header("inductor_provenance_tracking_node_mappings") + provenance
}

#[test]
fn a_gpu_traces_kernels_take_their_groups_from_the_log() {
    let dir = crate::common::temp_dir("compile-log-gpu");
    let log = dir.join("hand_written.log");
    std::fs::write(&log, hand_written_log()).unwrap();
    let log = log.display().to_string();
    let trace = data("traces/amd/torch_compile_triton_mi300x.json.gz");
    let v = json(&["trace", &trace, "--compile-log", &log, "--json"]);
    let groups = v["fusion"]["groups"].as_array().unwrap();
    let norm = groups.iter().find(|g| g["kernel"] == "triton_red_fused_add_mean_mul_pow_rsqrt_0").unwrap();
    assert_eq!(norm["how"], "Inductor provenance", "{norm}");
    assert_eq!(norm["ops"][0]["op"], "add = bf16[8, 4096, 2048] add");
    assert_eq!(norm["ops"].as_array().unwrap().len(), 7);
    // Reads x, r (64 MiB each) and w (4 KiB); writes the normed x (read by the GEMM) and the
    // residual sum (returned).
    let mib64 = 8u64 * 4096 * 2048 * 2;
    assert_eq!(norm["fused_bytes_per_call"], 4 * mib64 + 4096, "{norm}");
    // The log's one GEMM is the trace's first `aten::mm`; the other GEMMs keep their groups.
    let gemms: Vec<_> = groups.iter().filter(|g| g["category"] == "gemm").collect();
    assert!(gemms.iter().any(|g| g["how"] == "Inductor provenance"), "{gemms:?}");
    assert!(gemms.iter().any(|g| g["how"] == "recorded shapes"), "{gemms:?}");
    // The generated kernels the log does not name are listed, with why.
    let unjoined = v["compiled_kernels"]["unjoined"].as_array().unwrap();
    let names: Vec<&str> = unjoined.iter().map(|u| u["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "triton_poi_fused__unsafe_view_add_3",
            "triton_poi_fused__unsafe_view_mul_silu_2",
            "triton_red_fused__unsafe_view_add_mean_mul_pow_rsqrt_1"
        ]
    );
    assert_eq!(unjoined[0]["why"], "no kernel of this name in the log's graph 0/0");
    // Beside the exact group, the one inferred from the kernel's name and the launch's buffers:
    // the same five ops, but half the bytes: the launch records three buffers (two of
    // 8 × 4096 × 2048 bf16 and the weight), while the graph written here reads x and r apart
    // and writes both the sum and the normed x.
    let rows = v["compiled_kernels"]["kernels"].as_array().unwrap();
    let inferred = &rows[0]["inferred"];
    assert_eq!(rows[0]["kernel"], "triton_red_fused_add_mean_mul_pow_rsqrt_0:1");
    assert_eq!(inferred["how"], "kernel name");
    assert_eq!(inferred["parts"], serde_json::json!(["add", "mean", "mul", "pow", "rsqrt"]));
    assert_eq!(inferred["fused_bytes"], 2 * mib64 + 4096);
    // A library call is not inferred from a name.
    assert!(rows[1].get("inferred").is_none(), "{}", rows[1]);
    let (code, text, err) = crate::common::run(&["trace", &trace, "--compile-log", &log]);
    assert_eq!(code, 0, "{err}");
    assert!(text.contains("2 of 2 ran in the trace (1 compiled region), 3 generated kernels not in the log"), "{text}");
}

#[test]
fn a_torch_trace_folder_is_read_whole_and_a_bad_file_in_it_named() {
    let dir = crate::common::temp_dir("compile-log-folder");
    for name in ["inductor_provenance_jit_cuda_log.txt", "inductor_provenance_jit_debug_handle_log.txt"] {
        std::fs::copy(data(&format!("compile-logs/{name}")), dir.join(name)).unwrap();
    }
    let folder = dir.display().to_string();
    let v = json(&["compile-log", &folder, "--json"]);
    // Both processes' graphs, in file-name order: 4 kernels and 5 launch sites.
    let graphs = v["log"]["graphs"].as_array().unwrap();
    assert_eq!(graphs.iter().map(|g| g["kernels"].as_array().unwrap().len()).collect::<Vec<_>>(), [4, 5]);
    std::fs::write(dir.join("zz_broken.log"), "not a log\n".repeat(20)).unwrap();
    let (code, _, err) = run(&["compile-log", &folder]);
    assert_eq!(code, 2);
    assert!(err.contains("zz_broken.log: not a torch.compile structured log"), "{err}");
}
