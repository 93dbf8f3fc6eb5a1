//! The shared compile logs (tests/data/compile-logs, tlparse's own test inputs): every kernel's
//! nodes are the provenance's, and its bytes follow from `after_post_grad_graph`'s shapes.

use super::*;

fn read(name: &str) -> String {
    let path = format!("{}/../../tests/data/compile-logs/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn row(g: &CompiledGraph, k: &Kernel) -> (String, Vec<String>, Option<u64>, Option<u64>) {
    let key = match k.handle {
        Some(h) => format!("{}:{h}", k.name),
        None => k.name.clone(),
    };
    (key, g.nodes_of(k).map(|n| n.name.clone()).collect(), k.fused_bytes, k.unfused_bytes)
}

fn strings(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

#[test]
fn debug_handles_give_one_group_per_launch_site_with_exact_bytes() {
    let log = CompileLog::read(&read("inductor_provenance_jit_debug_handle_log.txt")).unwrap();
    assert_eq!(log.graphs.len(), 1);
    assert!(log.warnings.is_empty(), "{:?}", log.warnings);
    let g = &log.graphs[0];
    assert_eq!(g.compile.to_string(), "0/0");
    assert_eq!(g.provenance, "inductor_provenance_tracking_node_mappings");
    let rows: Vec<_> = g.kernels.iter().map(|k| row(g, k)).collect();
    // Bytes by hand from the graph's shapes (f32 unless said): the relu kernel reads mm (8×16)
    // and the bias (16), writes sigmoid and `le` (b8[8, 16]), both returned.
    assert_eq!(
        rows,
        [
            (
                "triton_poi_fused_addmm_relu_sigmoid_threshold_backward_0:1".to_string(),
                strings(&["add_tensor_1", "relu", "sigmoid", "le"]),
                Some(512 + 64 + 512 + 128),
                Some(1088 + 1024 + 1024 + 640),
            ),
            ("triton_poi_fused_mul_1:2".to_string(), strings(&["mul"]), Some(1600), Some(1600)),
            (
                "triton_poi_fused_addmm_gelu_2:3".to_string(),
                strings(&["add_tensor", "mul_1", "mul_2", "erf", "add", "mul_3"]),
                Some(3 * 1200),
                Some(3600 + 4 * 2400 + 3600),
            ),
            // x (8×10) and the transposed weight (16×10, a view) in, 8×16 out.
            ("extern_kernels.mm:4".to_string(), strings(&["mm_default_1"]), Some(320 + 640 + 512), Some(1472)),
            ("extern_kernels.mm:5".to_string(), strings(&["mm_default"]), Some(800 + 2400 + 1200), Some(4400)),
        ]
    );
    let gelu = &g.kernels[2];
    assert_eq!(gelu.kind, KernelKind::TritonPointwise);
    // The bias add of `addmm` went into the gelu kernel.
    assert_eq!(g.model_ops_of(gelu), ["y (addmm)", "z (gelu)"]);
    assert_eq!(g.model_ops_of(&g.kernels[4]), ["y (addmm)"]);
}

#[test]
fn every_kernel_lists_exactly_the_nodes_its_provenance_gives() {
    for name in [
        "inductor_provenance_jit_cuda_log.txt",
        "inductor_provenance_jit_debug_handle_log.txt",
        "inductor_provenance_aot_log.txt",
    ] {
        let text = read(name);
        let log = CompileLog::read(&text).unwrap();
        // The artifact read again here, on its own.
        let (artifacts, _) = log::artifacts(&text, |n| n == MAPPINGS).unwrap();
        let truth: serde_json::Value = serde_json::from_str(&artifacts.last().unwrap().payload).unwrap();
        let truth = truth["cppCodeToPost"].as_object().unwrap();
        let kernels: Vec<_> = log.kernels().collect();
        assert_eq!(kernels.len(), truth.len(), "{name}");
        for (g, k) in kernels {
            let (key, mut nodes, fused, unfused) = row(g, k);
            let mut want: Vec<String> =
                truth[&key].as_array().unwrap().iter().map(|v| v.as_str().unwrap().to_string()).collect();
            nodes.sort();
            want.sort();
            assert_eq!(nodes, want, "{name}: {key}");
            assert!(k.missing.is_empty(), "{name}: {key}");
            // Fused traffic is never above unfused.
            let (fused, unfused) = (fused.unwrap(), unfused.unwrap());
            assert!(fused > 0 && fused <= unfused, "{name}: {key}: {fused} > {unfused}");
        }
    }
}

#[test]
fn without_handles_a_library_name_stands_for_every_call_it_made() {
    let log = CompileLog::read(&read("inductor_provenance_jit_cuda_log.txt")).unwrap();
    let g = &log.graphs[0];
    let names: Vec<&str> = g.kernels.iter().map(|k| k.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "extern_kernels.mm",
            "triton_poi_fused_addmm_relu_sigmoid_0",
            "triton_poi_fused_mul_1",
            "triton_poi_fused_addmm_gelu_2"
        ]
    );
    let mm = row(g, &g.kernels[0]);
    assert_eq!(mm.1, strings(&["mm_default_1", "mul", "mm_default"]));
}

#[test]
fn an_aot_log_has_cpp_kernels_and_no_compile_ids() {
    let log = CompileLog::read(&read("inductor_provenance_aot_log.txt")).unwrap();
    let g = &log.graphs[0];
    assert_eq!(g.compile.to_string(), "(no compile id)");
    let kinds: Vec<(&str, KernelKind)> = g.kernels.iter().map(|k| (k.name.as_str(), k.kind)).collect();
    assert_eq!(
        kinds,
        [
            ("aoti_torch_cpu_addmm_out", KernelKind::Library),
            ("cpp_fused_mul_relu_sigmoid_0", KernelKind::Cpp),
            ("cpp_fused_gelu_1", KernelKind::Cpp),
        ]
    );
    assert_eq!(g.model_ops_of(&g.kernels[2]), ["gelu (gelu)"]);
}

/// The debug-handle log with its text changed by `edit`.
fn edited(edit: impl Fn(&str) -> String) -> Result<CompileLog, LogError> {
    CompileLog::read(&edit(&read("inductor_provenance_jit_debug_handle_log.txt")))
}

#[test]
fn a_log_cut_inside_its_provenance_says_so_and_keeps_nothing_false() {
    let text = read("inductor_provenance_jit_debug_handle_log.txt");
    let at = text.find("\"cppCodeToPost\"").unwrap();
    let err = CompileLog::read(&text[..at]).unwrap_err();
    assert!(matches!(err, LogError::NoProvenance), "{err}");
    assert!(err.to_string().contains("after_post_grad_graph"), "{err}");
}

#[test]
fn broken_artifacts_are_passed_over_with_their_line() {
    // The provenance's JSON broken: the plain map is gone too in this log, so nothing is left.
    let err = edited(|t| t.replacen("{\"preToPost\"", "{\"preToPost\" oops", 1)).unwrap_err();
    assert!(matches!(err, LogError::NoProvenance));
    // A graph line whose type is never closed: that graph is passed over, named by its line.
    let err = edited(|t| t.replace("relu: \"f32[8, 16][16, 1]cuda:0\"", "relu: \"f32[8, 16]")).unwrap_err();
    assert!(matches!(err, LogError::NoProvenance));
    let text = read("inductor_provenance_jit_cuda_log.txt");
    let broken = text.replacen("{\"preToPost\"", "{\"preToPost\" oops", 1);
    let log = CompileLog::read(&broken).unwrap();
    // The older plain map still gives the kernels.
    assert_eq!(log.graphs[0].provenance, "inductor_triton_kernel_to_post_grad_nodes");
    assert_eq!(log.graphs[0].kernels.len(), 4);
    assert!(log.warnings[0].contains("inductor_provenance_tracking_node_mappings"), "{:?}", log.warnings);
    assert!(log.warnings[0].contains("at line"), "{:?}", log.warnings);
}

#[test]
fn nodes_the_graph_never_had_are_named_not_invented() {
    let log = edited(|t| {
        t.replacen(
            "\"extern_kernels.mm:5\": [\"mm_default\"]",
            "\"extern_kernels.mm:5\": [\"mm_default\", \"ghost\"]",
            1,
        )
    })
    .unwrap();
    let k = &log.graphs[0].kernels[4];
    assert_eq!(k.missing, ["ghost"]);
    assert_eq!(k.fused_bytes, Some(4400));
}

#[test]
fn symbolic_shapes_leave_bytes_unknown() {
    let log = edited(|t| t.replace("f32[10, 30][30, 1]cuda:0", "f32[s0, 30][30, 1]cuda:0")).unwrap();
    let gelu = &log.graphs[0].kernels[2];
    assert_eq!((gelu.fused_bytes, gelu.unfused_bytes), (None, None));
}
