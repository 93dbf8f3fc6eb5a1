//! The slice-by-slice opener the page's analysis worker uses: on every shared trace its summary
//! is the command line's (same core, any slicing), and no cut or slicing of a real file panics.

use crate::common::{trace_bytes, trace_kind};
use fusionscope::analysis::summarize;
use fusionscope::analysis::summary::ClassifiedTrace;
use fusionscope::formats::read_trace;
use fusionscope::import::{open_in_slices, Imported};
use proptest::prelude::*;

const TRACES: [&str; 9] = [
    "nvidia/hta_a100_compiled_rank0.json.gz",
    "nvidia/tracelens_eager_b200.json.gz",
    "amd/sglang_qwen3-8b_decode_hipgraph_mi300x.json.gz",
    "amd/hta_mi250_minitoy_train_rocm6.2.json.gz",
    "amd/torch_compile_triton_mi300x.json.gz",
    "nvidia/hf_qwen1.5-0.5b_eager_h100.json.gz",
    "amd/hf_qwen1.5-0.5b_eager_mi300x.json.gz",
    "nvidia/hf_bert-small_eager_h100.json.gz",
    "amd/hf_bert-small_eager_mi300x.json.gz",
];

#[test]
fn every_shared_trace_opened_in_slices_gives_the_whole_files_summary() {
    for rel in TRACES {
        let bytes = trace_bytes(rel);
        let expected = summarize(&ClassifiedTrace::new(&read_trace(&bytes).unwrap()), Some(rel));
        // Slices smaller than the detection prefix: the worker's 4 MiB slices hold these
        // files whole, so this is the harder case.
        match open_in_slices(rel, &bytes, 10_000) {
            Ok(Imported::Trace { summary, .. }) => assert_eq!(summary, expected, "{rel} in 10 kB slices"),
            other => panic!("{rel}: {other:?}"),
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// A cut trace, in any slicing: an error about the trace (or, cut inside the detection
    /// prefix, a file of another kind), never a panic.
    #[test]
    fn a_cut_trace_in_any_slices_is_an_error_not_a_panic(cut in 0.0f64..1.0, slice in 1usize..100_000) {
        let bytes = trace_bytes("amd/torch_compile_triton_mi300x.json.gz");
        let cut = (bytes.len() as f64 * cut) as usize;
        match open_in_slices("cut.json.gz", &bytes[..cut], slice) {
            Err(e) => prop_assert_eq!((e.detected.kind, e.detected.gzipped), (trace_kind("kineto"), true)),
            Ok(Imported::Unrecognised { .. }) => {}
            other => prop_assert!(false, "{:?}", other.map(|_| ())),
        }
    }
}
