//! C++ kernels of a CPU run (`graph_<N>_cpp_fused_…` ranges, with Inductor's
//! `enable_kernel_profile`) read as kernels of a CPU device, by every sink.

use trace::intern::NameTable;
use trace::platform::platform;
use trace::read::{EventSink, TraceHeader};
use trace::{Kernel, Transfer};

use super::super::prefilter::cpu_kernel;
use super::super::*;

fn data(name: &str) -> Vec<u8> {
    let path = format!("{}/../../tests/data/compiled/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// A sink that takes no CPU-side event (as the summary-only fold): the kernels' names alone.
#[derive(Default)]
struct KernelsOnly(Vec<String>);

impl EventSink for KernelsOnly {
    type Output = (Vec<String>, TraceHeader);
    const CPU_SIDE: bool = false;
    const LAUNCHES: bool = false;
    fn kernel(&mut self, names: &NameTable, kernel: Kernel) {
        self.0.push(names.resolve(kernel.name).to_string());
    }
    fn transfer(&mut self, _: &NameTable, _: Transfer) {}
    fn finish(self, header: TraceHeader) -> Self::Output {
        (self.0, header)
    }
}

#[test]
fn a_real_cpu_runs_cpp_kernel_ranges_are_kernels_of_its_cpu() {
    let bytes = data("torch_block_cpu.trace.json.gz");
    let trace = read_trace(&bytes).unwrap();
    // Four C++ kernels of the compiled block, three calls each; the library calls
    // (`aten::addmm`, attention) stay CPU ops.
    assert_eq!(trace.kernels.len(), 12);
    assert!(trace.kernels.iter().all(|k| trace.name(k.name).starts_with("graph_0_cpp_fused_")));
    assert!(trace.kernels.iter().all(|k| k.device == 898 && k.stream == 898 && k.correlation.is_none()));
    assert_eq!(platform(&trace).devices, ["CPU"]);
    // Each kernel is also its range as a CPU op, so it links to itself as its launching op.
    for k in &trace.kernels {
        let op = trace.cpu_ops.iter().find(|o| Some(o.external_id) == k.external_id).unwrap();
        assert_eq!((op.name, op.ts, op.dur), (k.name, k.ts, k.dur));
    }
    // A sink without the CPU side gets the same kernels: the reader parses a `cpu_op` that may
    // be a C++ kernel instead of stepping over it.
    let mut reader = Reader::<KernelsOnly>::new();
    reader.feed(&bytes).unwrap();
    let (names, header) = reader.finish().unwrap();
    let mut want: Vec<String> = trace.kernels.iter().map(|k| trace.name(k.name).to_string()).collect();
    let mut got = names;
    want.sort();
    got.sort();
    assert_eq!(got, want);
    assert_eq!(header.devices.iter().map(|d| d.name.as_str()).collect::<Vec<_>>(), ["CPU"]);
}

#[test]
fn only_a_numbered_graphs_cpp_range_is_a_kernel_and_a_listed_device_keeps_its_name() {
    assert!(cpu_kernel("graph_0_cpp_fused_add_0"));
    assert!(cpu_kernel("graph_12_cpp_fused_native_layer_norm_3"));
    for not in ["graph__cpp_fused_add_0", "graph_x_cpp_fused_add_0", "cpp_fused_add_0", "aten::add", "graph_0_"] {
        assert!(!cpu_kernel(not), "{not}");
    }
    let text = br#"{"deviceProperties": [{"id": 7, "name": "My CPU"}], "traceEvents": [
        {"ph": "X", "cat": "cpu_op", "name": "graph_3_cpp_fused_add_0", "pid": 7, "tid": 9, "ts": 1, "dur": 2, "args": {"External id": 4}},
        {"ph": "X", "cat": "cpu_op", "name": "graph_3_cpp_fused_add_0", "pid": 8, "tid": 9, "ts": 5, "dur": 2, "args": {"External id": 5}},
        {"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 8, "tid": 9, "ts": 8, "dur": 2, "args": {"External id": 6}}]}"#;
    let trace = read_trace(text).unwrap();
    assert_eq!(trace.kernels.len(), 2);
    assert_eq!(trace.cpu_ops.len(), 3);
    let names: Vec<_> = trace.devices.iter().map(|d| (d.id, d.name.as_str())).collect();
    assert_eq!(names, [(Some(7), "My CPU"), (Some(8), "CPU")]);
}
