//! Any bytes as an op trace: parse, place, view, convert and analyse (what the page does with a
//! dropped `.optrace` file). Never a panic, an overflowed stack or a hang.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    if let Ok(report) = fusionscope::optrace::analyze_optrace(&text) {
        let _ = fusionscope::optrace::view::case_table(&report);
        let _ = fusionscope::optrace::view::headline(&report);
    }
});
