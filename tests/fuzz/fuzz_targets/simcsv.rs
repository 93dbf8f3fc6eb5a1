//! Any bytes as a simulator op table: read, group, infer the workload from a file name, and the
//! page's group table. Never a panic or a hang.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    if let Ok(table) = fusionscope::simcsv::parse_sim_csv(&text) {
        let _ = fusionscope::simcsv::infer_setup("llama3-8b_inference_tpuv5p_1chip_bs1_prefill.csv", &table);
        let _ = fusionscope::simcsv::view::groups_table(&table);
        let _ = fusionscope::simcsv::view::headline(&table);
    }
});
