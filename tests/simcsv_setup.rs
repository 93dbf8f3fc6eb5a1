//! The page's side-by-side of every simulator table in tests/data/ops-csv: the workload read
//! from the file name (and table) is the one the command-line tests compare by hand, and a
//! combined prefill + decode table compares only the rows of the chosen phase.

use crate::common::{data, data_text, run};
use fusionscope::simcsv::{infer_setup, parse_sim_csv, side_by_side, SimTable};
use fusionscope::workload::{Phase, WorkloadParams};

/// The simulator table tests/data/ops-csv/`name`.csv.
fn table(name: &str) -> SimTable {
    parse_sim_csv(&data_text(&format!("ops-csv/{name}.csv"))).unwrap()
}

#[test]
fn every_table_gets_its_workload_from_its_name() {
    let llama = WorkloadParams { batch: Some(1), seq_len: Some(1024), output_len: Some(128), tp: Some(1) };
    let expect = [
        (
            "deepseekv2-236b_inference_tpuv5p_tp16_ep16_bs8_prefill",
            "deepseekv2-236b",
            Phase::Prefill,
            WorkloadParams { batch: Some(8), seq_len: Some(1024), output_len: None, tp: Some(16) },
        ),
        (
            "dit-xl_inference_tpuv5p_bs8",
            "dit-xl",
            Phase::Prefill,
            WorkloadParams { batch: Some(8), ..Default::default() },
        ),
        ("llama3-8b_inference_tpuv5p_1chip_bs1_in1024_out128", "llama3-8b", Phase::Prefill, llama),
        ("llama3-8b_inference_tpuv5p_1chip_bs1_in1024_out128_decode", "llama3-8b", Phase::Decode, llama),
        ("llama3-8b_inference_tpuv5p_1chip_bs1_in1024_out128_prefill", "llama3-8b", Phase::Prefill, llama),
    ];
    for (name, model, phase, params) in expect {
        let t = table(name);
        let inferred = infer_setup(&format!("{name}.csv"), &t);
        let s = &inferred.setup;
        assert_eq!((s.model.as_str(), s.chip.as_str(), s.phase, s.params), (model, "tpuv5p", phase, params), "{name}");
        let side = side_by_side(&t, s).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(!side.comparison.roles.is_empty(), "{name}");
        assert_eq!(side.rows_compared + side.rows_other_phase, t.rows.len());
    }
}

#[test]
fn a_combined_table_compares_the_chosen_phase_only() {
    let combined = table("llama3-8b_inference_tpuv5p_1chip_bs1_in1024_out128");
    let inferred = infer_setup("llama3-8b_inference_tpuv5p_1chip_bs1_in1024_out128.csv", &combined);
    assert!(inferred.notes.iter().any(|n| n.contains("prefill and decode rows")), "{:?}", inferred.notes);
    for (phase, alone) in [
        (Phase::Prefill, "llama3-8b_inference_tpuv5p_1chip_bs1_in1024_out128_prefill"),
        (Phase::Decode, "llama3-8b_inference_tpuv5p_1chip_bs1_in1024_out128_decode"),
    ] {
        let setup = fusionscope::simcsv::SimSetup { phase, ..inferred.setup.clone() };
        let from_combined = side_by_side(&combined, &setup).unwrap();
        let from_alone = side_by_side(&table(alone), &setup).unwrap();
        // The combined file's rows of one phase are the single-phase file's rows.
        assert_eq!(from_combined.comparison, from_alone.comparison, "{phase}");
        assert_eq!(from_combined.rows_compared, table(alone).rows.len());
        assert_eq!(from_combined.rows_other_phase, combined.rows.len() - table(alone).rows.len());
    }
}

#[test]
fn the_groups_table_names_each_unit_once() {
    let t = table("llama3-8b_inference_tpuv5p_1chip_bs1_in1024_out128_decode");
    let d = fusionscope::simcsv::view::groups_table(&t);
    // Fusion index 14, the decode attention: MXU and VPU rows interleaved.
    let row = d.rows.iter().find(|r| r[0].text == "14").unwrap();
    assert_eq!((row[2].text.as_str(), row[3].text.as_str()), ("6", "MXU+VPU"));
    assert_eq!(d.rows.len(), t.groups.len());
}

proptest::proptest! {
    /// Any file name and shape text: no panic, and the model and chip are always built-in ones.
    #[test]
    fn any_file_name_gives_a_buildable_setup(name in "\\PC{0,60}", shape in "\\PC{0,30}") {
        let t = parse_sim_csv(&format!(
            "Fusion index,Description,OpType,Count,Bounded-by,Execution time,Compute time,Memory time,Bytes accessed,FLOP Count,Input Tensor Shapes\n\
             1,Input_layernorm,VPU,1,Memory,1,1,1,1,1,\"{}\"\n",
            shape.replace('"', "")
        ))
        .unwrap();
        let s = infer_setup(&name, &t).setup;
        proptest::prop_assert!(fusionscope::workload::model_names().contains(&s.model.as_str()));
        proptest::prop_assert!(fusionscope::hardware::preset(&s.chip).is_ok());
    }
}

#[test]
fn the_command_line_shows_the_same_side_by_side() {
    let (code, text, err) = run(&["simcsv", &data("ops-csv/llama3-8b_inference_tpuv5p_1chip_bs1_in1024_out128.csv")]);
    assert_eq!(code, 0, "{err}");
    assert!(text.contains("28 ops in 20 fusion groups"), "{text}");
    assert!(text.contains("note: The table holds prefill and decode rows"), "{text}");
    assert!(
        text.contains(
            "workload read from the file name: llama3-8b on TPU v5p, prefill: batch 1, 1024 input tokens, 128 output tokens, tp 1; 12 rows compared, 16 of the other phase left out"
        ),
        "{text}"
    );
    assert!(text.contains("other workloads: fusionscope model --model llama3-8b --chip tpuv5p --phase prefill --batch 1 --seq-len 1024 --output-len 128 --tp 1 --simcsv"), "{text}");
    // The prefill roles, with the ratios of docs/time-model.md §4 (k_proj: GQA, 0.250 of the FLOPs).
    assert!(text.contains("simulator side by side"), "{text}");
    let k = text.lines().find(|l| l.starts_with("k_proj ")).unwrap();
    assert!(k.contains("0.250"), "{k}");
}
