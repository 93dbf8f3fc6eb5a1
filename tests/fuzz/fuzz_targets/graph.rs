//! Any bytes as an op-graph file: parse, validate, group and report. Never a panic or a hang.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    if let Ok(graph) = fusionscope::fusion::parse_graph(&text) {
        let _ = fusionscope::fusion::analyse(&graph).report(&graph);
    }
});
