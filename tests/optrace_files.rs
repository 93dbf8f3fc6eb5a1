//! The op-trace reader, case view, addresses and conversion on the test files in
//! tests/data/optrace (hand-written in the grammar of docs/optrace.md, see the README there).

use crate::common::data_text;
use fusionscope::optrace::{analyze_optrace, parse_optrace, CaseType, OptraceError, Role, BASE_ADDRESS};
use proptest::prelude::*;

#[test]
fn spec_example_addresses_counted_by_hand() {
    let r = analyze_optrace(&data_text("optrace/spec_example.optrace")).unwrap();
    assert_eq!(r.skipped_lines, 0);
    assert!(r.unmapped.is_empty() && r.warnings.is_empty());
    // Sizes in allocation order: %0 1x128 i32 = 512; %1 30522x768 f16 = 46,881,792;
    // %2, %4, %5, %7 1x128x768 f16 = 196,608 each; %6 768 f16 = 1,536;
    // %8 768x2304 f16 = 3,538,944; %9 2304 f16 = 4,608; %10 1x128x2304 f16 = 589,824.
    let base = BASE_ADDRESS;
    assert_eq!(base, 0x500_0000_0000);
    let a1 = base + 512;
    let a2 = a1 + 46_881_792;
    let a4 = a2 + 196_608;
    let a5 = a4 + 196_608;
    let a6 = a5 + 196_608;
    let a7 = a6 + 1_536;
    let a8 = a7 + 196_608;
    let a9 = a8 + 3_538_944;
    let a10 = a9 + 4_608;
    let c = &r.cases;
    assert_eq!((c[0].input_addrs.clone(), c[0].output_addrs.clone()), (vec![base, a1], vec![a2]));
    assert_eq!((c[1].input_addrs.clone(), c[1].output_addrs.clone()), (vec![a2, a4], vec![a5]));
    assert_eq!((c[2].input_addrs.clone(), c[2].output_addrs.clone()), (vec![a5, a6], vec![a7]));
    assert_eq!((c[3].input_addrs.clone(), c[3].output_addrs.clone()), (vec![a7, a8, a9], vec![a10]));
    assert_eq!(a10, 5_497_609_352_704);
    assert_eq!(fusionscope::optrace::hex(a10), "0x500030d7600");
    // Four 1x12x128x64 f16 tensors (196,608 bytes each) follow %10 (589,824 bytes).
    let a11 = a10 + 589_824;
    assert_eq!(c[4].input_addrs, [a11, a11 + 196_608, a11 + 2 * 196_608]);
    assert_eq!(c[4].output_addrs, [a11 + 3 * 196_608]);
    assert_eq!(c[5].input_addrs, [a11 + 3 * 196_608], "%14 reuses its address");
    assert_eq!(c[6].input_addrs, [a11 + 5 * 196_608]);
    assert_eq!(c[6].output_addrs, [a11 + 6 * 196_608]);
}

#[test]
fn spec_example_case_shapes_and_groups() {
    let r = analyze_optrace(&data_text("optrace/spec_example.optrace")).unwrap();
    let shapes: Vec<(CaseType, String)> =
        r.cases.iter().map(|c| (c.case_type, serde_json::to_string(&c.case_shape).unwrap())).collect();
    assert_eq!(
        shapes,
        [
            (CaseType::Gather, "[1,128,30522,768]".to_string()),
            (CaseType::Add, "[1,128,1,768]".to_string()),
            (CaseType::Layernorm, "[128,768]".to_string()),
            (CaseType::Gemm, "[1,128,768,2304]".to_string()),
            (CaseType::Sdpa, "[[1,12,128,64],[1,12,128,64],true]".to_string()),
            (CaseType::Transpose, "[[1,12,128,64],[0,2,1,3]]".to_string()),
            (CaseType::Allreduce, "[1,128,768]".to_string()),
        ]
    );
    assert_eq!(r.cases[3].input_ids, [7, 8, 9]);
    assert_eq!(r.cases[3].output_ids, [10]);
    assert_eq!(r.cases[0].dtype.to_string(), "f16", "the case dtype is the result's, not the i32 indices'");
    assert_eq!(
        r.analysis.groups,
        [
            vec!["embedding %2", "add %5", "layer_norm %7"],
            vec!["dot %10"],
            vec!["flash_attention_fusion %14", "transpose %15"],
            vec!["allreduce %17"],
            vec!["%17 of allreduce"],
        ]
    );
    // The embedding reads the 128 rows it gathers (196,608 bytes), not the 46.9 MB table.
    // Unfused traffic, op by op (reads + write):
    //   embedding 512 + 196,608 + 196,608; add 2 x 196,608 + 196,608; layer_norm 196,608 + 1,536 + 196,608;
    //   dot 196,608 + 3,538,944 + 4,608 + 589,824; sdpa 3 x 196,608 + 196,608; transpose 2 x 196,608;
    //   allreduce head 196,608 + 0; allreduce result 0 + 196,608.
    let unfused = 512
        + 2 * 196_608
        + 3 * 196_608
        + 196_608
        + 1_536
        + 196_608
        + 196_608
        + 3_538_944
        + 4_608
        + 589_824
        + 4 * 196_608
        + 2 * 196_608
        + 2 * 196_608;
    assert_eq!(r.analysis.unfused.total, unfused);
    assert_eq!(r.analysis.unfused.total, 7_281_152);
}

#[test]
fn spec_example_json_snapshot() {
    let r = analyze_optrace(&data_text("optrace/spec_example.optrace")).unwrap();
    // The per-op grouping reasons are the fusion module's wording, snapshotted there.
    let mut v = serde_json::to_value(&r).unwrap();
    v["analysis"].as_object_mut().unwrap().remove("op_details");
    insta::assert_json_snapshot!("optrace_spec_example", v);
}

#[test]
fn gpt2_block_every_grammar_feature() {
    let text = data_text("optrace/gpt2_block_tp_rank1.optrace");
    let trace = parse_optrace(&text).unwrap();
    assert_eq!(trace.records.len(), 22);
    assert_eq!(trace.skipped_lines, [1, 2, 3, 8, 9, 19, 29], "comments, log lines, the blank line");
    let stray = &trace.records[1];
    assert_eq!((stray.line, stray.op.as_str(), stray.prefix.pid), (5, "add", Some(58388)));
    assert_eq!(trace.records[2].prefix.rank, None);

    let r = analyze_optrace(&text).unwrap();
    assert_eq!(r.unmapped, ["split", "dropout", "slice", "sum"]);
    assert_eq!(r.skipped_lines, 7);
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    // Per-use shapes: %240 is defined 1x128x768 and used as 1x128x12x64.
    let t = r.cases.iter().find(|c| c.line == 11).unwrap();
    assert_eq!(t.input_shapes, [vec![1, 128, 12, 64]]);
    assert_eq!(serde_json::to_string(&t.case_shape).unwrap(), "[[1,128,12,64],[0,2,1,3]]");
    // A 0-d operand takes 4 bytes (one f32), unaligned: %260 starts 4 bytes after %0.
    let sdpa = r.cases.iter().find(|c| c.case_type == CaseType::Sdpa).unwrap();
    assert_eq!(sdpa.input_ids, [250, 251, 252, 0]);
    assert_eq!(sdpa.output_ids, [260, 261]);
    assert_eq!(sdpa.output_addrs[0], sdpa.input_addrs[3] + 4);
    let ag = r.cases.iter().find(|c| c.case_type == CaseType::Allgather).unwrap();
    assert_eq!(serde_json::to_string(&ag.case_shape).unwrap(), "[[1,4096,768],[1,128,768]]");
    // Weights that no op produces become declared tensors, so nothing is assumed.
    assert!(r.analysis.assumed_tensors.is_empty());
}

#[test]
fn collectives_and_unknown_ops_never_share_a_group() {
    let r = analyze_optrace(&data_text("optrace/gpt2_block_tp_rank1.optrace")).unwrap();
    let standalone: Vec<&str> = r
        .graph_ops
        .iter()
        .filter(|o| matches!(o.role, Role::Collective | Role::Opaque))
        .map(|o| o.name.as_str())
        .collect();
    assert_eq!(
        standalone.len(),
        4 + 2 + 2 + 2 + 2 + 2,
        "split has three results; allreduce, allgather, dropout, slice, sum one"
    );
    for g in &r.analysis.groups {
        if g.iter().any(|op| standalone.contains(&op.as_str())) {
            assert_eq!(g.len(), 1, "{g:?}");
        }
    }
    // The flash-attention head keeps its two results and the transpose after it.
    assert!(r.analysis.groups.contains(&vec![
        "flash_attention_fusion %260,%261".to_string(),
        "%260 of flash_attention_fusion".to_string(),
        "%261 of flash_attention_fusion".to_string(),
        "transpose %262".to_string(),
    ]));
    insta::assert_json_snapshot!("optrace_gpt2_groups", r.analysis.groups);
}

#[test]
fn the_bad_line_is_named() {
    match analyze_optrace(&data_text("optrace/malformed_line4.optrace")).unwrap_err() {
        OptraceError::Parse(e) => assert_eq!(e.line, 4),
        other => panic!("{other:?}"),
    }
}

#[test]
fn edge_cases() {
    // Unknown dtype, untyped results sized by a later use, a weight read before any definition.
    let r =
        analyze_optrace("0:0:0 %5, %6 = a.b.split(%1:<4x2xunknown>)\n0:0:0 %7:<4xf16> = a.b.gelu(%5:<1x4x2xf16>)\n")
            .unwrap();
    let warnings: Vec<&str> = r.warnings.iter().map(|w| w.message.as_str()).collect();
    assert_eq!(warnings.len(), 2, "{warnings:?}");
    assert!(warnings[0].contains("%1 has dtype \"unknown\""));
    assert!(warnings[1].contains("%6 never has a type"));
    assert_eq!(r.unmapped_cases[0].line, 1);
    // gelu needs rank 3 at operand 0: it has it (per use), so it maps.
    assert_eq!(r.cases[0].case_type, CaseType::Gelu);
    assert_eq!(r.cases[0].input_addrs, [BASE_ADDRESS + 8]);
    // An id produced twice is an error naming both lines.
    let e = analyze_optrace("0:0:0 %1:<2xf16> = a.b.gelu(%0:<2xf16>)\n0:1:0 %1:<2xf16> = a.b.gelu(%0:<2xf16>)\n")
        .unwrap_err();
    assert!(e.to_string().contains("line 1 and again on line 2"), "{e}");
    // An empty file is an empty report.
    let r = analyze_optrace("").unwrap();
    assert!(r.cases.is_empty() && r.analysis.groups.is_empty());
}

#[test]
fn every_truncation_of_the_gpt2_file_is_handled() {
    let text = data_text("optrace/gpt2_block_tp_rank1.optrace");
    for end in (0..=text.len()).step_by(13) {
        let _ = analyze_optrace(&text[..end]);
    }
}

proptest! {
    #[test]
    fn random_text_never_panics(s in "\\PC{0,300}") {
        let _ = analyze_optrace(&s);
    }

    #[test]
    fn record_like_text_never_panics(s in r"([0-9N]{1,3}:(None|[0-9]):[0-9] (%[0-9]{1,2}(:<([0-9]x){0,3}(f16|i32|unknown|q)>)?,? ?){0,3}= ?[a-z.]{1,8}\(((%[0-9]{1,2}:<([0-9]x){0,3}f32>(\{1,[0-9]\})?(\+[0-9])?|[0-9]:i32|list\{|\}|k=|,|ScriptObject <x>:S| )){0,8}\)?\n?){1,4}") {
        let _ = analyze_optrace(&s);
    }
}
