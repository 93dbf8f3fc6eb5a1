//! `fusionscope optrace` run as a user would.

use crate::common::{data, json, run};

#[test]
fn json_has_the_issue_keys() {
    let v = json(&["optrace", &data("optrace/spec_example.optrace"), "--json"]);
    let dot = &v["cases"][3];
    assert_eq!(dot["line"], 4);
    assert_eq!(dot["op"], "dot");
    assert_eq!(dot["case_type"], "gemm");
    assert_eq!(dot["case_shape"], serde_json::json!([1, 128, 768, 2304]));
    assert_eq!(dot["dtype"], "f16");
    assert_eq!(dot["input_ids"], serde_json::json!([7, 8, 9]));
    assert_eq!(dot["output_ids"], serde_json::json!([10]));
    assert_eq!(dot["output_addrs"], serde_json::json!([5_497_609_352_704u64]));
    assert!(dot["input_addrs"].as_array().unwrap().iter().all(|a| a.is_u64()));
    assert_eq!(v["cases"][4]["case_shape"], serde_json::json!([[1, 12, 128, 64], [1, 12, 128, 64], true]));
    assert_eq!(v["unmapped"], serde_json::json!([]));
    assert_eq!(v["skipped_lines"], 0);
    assert_eq!(v["analysis"]["groups"][0], serde_json::json!(["embedding %2", "add %5", "layer_norm %7"]));
    for key in ["unfused", "fused", "savings_pct", "assumed_tensors"] {
        assert!(v["analysis"].get(key).is_some(), "analysis.{key}");
    }
}

#[test]
fn unmapped_ops_and_skipped_lines_in_json() {
    let v = json(&["optrace", &data("optrace/gpt2_block_tp_rank1.optrace"), "--json"]);
    assert_eq!(v["unmapped"], serde_json::json!(["split", "dropout", "slice", "sum"]));
    assert_eq!(v["skipped_lines"], 7);
}

#[test]
fn table_shows_addresses_in_decimal_and_hex() {
    let (code, out, _) = run(&["optrace", &data("optrace/spec_example.optrace")]);
    assert_eq!(code, 0);
    let dot = out.lines().find(|l| l.trim_start().starts_with("4  dot")).unwrap();
    assert!(dot.contains("[1, 128, 768, 2304]"), "{dot}");
    assert!(dot.contains("5497609352704 (0x500030d7600)"), "{dot}");
    assert!(out.contains("5 fusion groups"), "{out}");
    assert!(out.contains("standalone ops (collectives and unknown ops never fuse): allreduce %17"), "{out}");
}

#[test]
fn a_malformed_record_fails_naming_its_line() {
    let (code, out, err) = run(&["optrace", &data("optrace/malformed_line4.optrace")]);
    assert_eq!(code, 2);
    assert!(out.is_empty());
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("fusionscope: "), "{err}");
    assert!(err.contains("malformed_line4.optrace: line 4: malformed record"), "{err}");
    assert!(err.contains("%5:<1x?x768xf16>"), "{err}");
}

#[test]
fn a_missing_file_is_named() {
    let (code, _, err) = run(&["optrace", &data("optrace/no_such_file.optrace")]);
    assert_eq!(code, 2);
    assert!(err.contains("cannot read") && err.contains("no_such_file.optrace"), "{err}");
}
