//! The compiled runs of tests/data/compiled (scripts/make-compiled-traces): every kernel a
//! profiled call ran is joined to the log's kernel of the same launch site.

use std::io::Read;

use inductor::CompileLog;

use super::*;
use formats::kineto::read_trace;

fn data(name: &str) -> Vec<u8> {
    let path = format!("{}/../../tests/data/compiled/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

pub(crate) fn log_of(case: &str) -> CompileLog {
    let mut text = String::new();
    flate2::read::GzDecoder::new(data(&format!("{case}.compile.log.gz")).as_slice()).read_to_string(&mut text).unwrap();
    CompileLog::read(&text).unwrap()
}

#[test]
fn every_kernel_of_a_real_cpu_run_is_joined_once_per_call() {
    for (case, kernels) in [("torch_block_cpu", 9), ("torch_convnet_cpu", 6)] {
        let trace = read_trace(&data(&format!("{case}.trace.json.gz"))).unwrap();
        let log = log_of(case);
        assert_eq!(log.kernels().count(), kernels, "{case}");
        let joined = join(&trace, &log);
        assert_eq!(joined.regions, 3, "{case}");
        assert_eq!(joined.unjoined, [], "{case}");
        assert_eq!(joined.kernels.len(), kernels, "{case}");
        for j in &joined.kernels {
            let k = &log.graphs[j.graph as usize].kernels[j.kernel as usize];
            assert_eq!(j.calls, 3, "{case}: {}", k.name);
            assert!(j.cpu_us > 0.0, "{case}: {}", k.name);
            // A C++ kernel's range is a kernel of the CPU device, so it has the range's own
            // time as kernel time; a library call (`extern_kernels.addmm`) runs no kernel.
            if k.name.starts_with("cpp_fused_") {
                assert_eq!(j.gpu_kernels, [format!("graph_0_{}", k.name)], "{case}");
                assert_eq!(j.gpu_us, j.cpu_us, "{case}: {}", k.name);
            } else {
                assert_eq!((j.gpu_kernels.len(), j.gpu_us), (0, 0.0), "{case}: {}", k.name);
            }
        }
    }
}

#[test]
fn a_real_logs_kernels_are_its_provenance_with_bytes_that_add_up() {
    let log = log_of("torch_block_cpu");
    let g = &log.graphs[0];
    let first = &g.kernels[0];
    assert_eq!((first.name.as_str(), first.handle), ("cpp_fused_native_layer_norm_0", Some(1)));
    let nodes: Vec<&str> = g.nodes_of(first).map(|n| n.name.as_str()).collect();
    assert_eq!(nodes, ["var_mean", "sub", "add", "rsqrt", "mul", "mul_1", "add_1"]);
    // The first layer norm of a 2 × 16 × 64 f32 input: reads x (8 KiB) and its weight and
    // bias (256 B each), writes the normalised x (8 KiB).
    assert_eq!(first.fused_bytes, Some(8192 + 256 + 256 + 8192));
    for (_, k) in log.kernels() {
        let (f, u) = (k.fused_bytes.unwrap(), k.unfused_bytes.unwrap());
        assert!(f <= u, "{}: {f} > {u}", k.name);
    }
}

#[test]
fn library_calls_are_the_aten_ops_their_handles_name() {
    assert_eq!(op_name("extern_kernels.addmm"), "aten::addmm");
    assert_eq!(
        op_name("torch.ops.aten._scaled_dot_product_flash_attention_for_cpu.default"),
        "aten::_scaled_dot_product_flash_attention_for_cpu"
    );
    assert_eq!(op_name("aoti_torch_cpu_addmm_out"), "aten::addmm");
    assert_eq!(op_name("triton_poi_fused_add_0"), "triton_poi_fused_add_0");
    assert_eq!(kernel_key("graph_12_cpp_fused_gelu_2"), "cpp_fused_gelu_2");
    assert_eq!(kernel_key("graph_x_cpp"), "graph_x_cpp");
}

#[test]
fn kernels_the_log_does_not_name_are_listed_with_why() {
    let trace = read_trace(&data("torch_block_cpu.trace.json.gz")).unwrap();
    // The convnet's log does not describe the block's run.
    let joined = join(&trace, &log_of("torch_convnet_cpu"));
    let names: Vec<(&str, u64)> = joined.unjoined.iter().map(|u| (u.name.as_str(), u.calls)).collect();
    assert!(names.contains(&("cpp_fused_native_layer_norm_0", 3)), "{names:?}");
    assert!(joined.unjoined.iter().all(|u| u.why.contains("graph 0/0")), "{:?}", joined.unjoined);
}
