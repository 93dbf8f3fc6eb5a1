//! `fusionscope compile-log` as a user runs it, on the compiled runs of tests/data/compiled.

use crate::common::{data, json, run};

#[test]
fn a_compile_log_alone_lists_each_kernel_with_its_nodes_and_bytes() {
    let log = data("compiled/torch_block_cpu.compile.log.gz");
    let (code, text, err) = run(&["compile-log", &log]);
    assert_eq!(code, 0, "{err}");
    assert!(text.contains("1 compiled graph and 9 kernels with their exact post-grad nodes"), "{text}");
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
    assert!(text.contains("6 of 6 ran in the trace (3 compiled regions), 0 generated kernels not in the log"), "{text}");
    let v = json(&["compile-log", &log, "--trace", &trace, "--json"]);
    let joined = v["joined"]["kernels"].as_array().unwrap();
    assert_eq!(joined.len(), 6);
    assert!(joined.iter().all(|k| k["calls"] == 3 && k["cpu_us"].as_f64().unwrap() > 0.0), "{joined:?}");
}

#[test]
fn a_file_that_is_not_a_compile_log_is_named_with_what_it_lacks() {
    let trace = data("compiled/torch_convnet_cpu.trace.json.gz");
    let (code, _, err) = run(&["compile-log", &trace]);
    assert_eq!(code, 2);
    assert!(err.contains("torch_convnet_cpu.trace.json.gz: not a torch.compile structured log"), "{err}");
}
