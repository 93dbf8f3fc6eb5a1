//! The worked example of docs/fusion-rules.md, the transformer block and every graph error,
//! through the binary.

use crate::common::{data, json, run, temp_dir};
use fusionscope::fusion::analysis::PRETTY_JSON_MAX_OPS;
use fusionscope::fusion::json::to_file;
use fusionscope::fusion::random::random_graph;
use fusionscope::fusion::{analyse, parse_graph};
use serde_json::Value;

fn traffic(v: &Value) -> [u64; 4] {
    ["bytes_read", "bytes_written", "total", "saved_by_fusion"].map(|k| v[k].as_u64().unwrap())
}

#[test]
fn worked_example_to_the_byte() {
    let v = json(&["graph", &data("graphs/worked_example.json"), "--json"]);
    assert_eq!(v["groups"], serde_json::json!([["matmul1", "bias1", "relu"], ["matmul2"]]));
    assert_eq!(traffic(&v["unfused"]), [52_428_800, 27_262_976, 79_691_776, 0]);
    assert_eq!(traffic(&v["fused"]), [35_651_584, 10_485_760, 46_137_344, 33_554_432]);
    let pct = v["savings_pct"].as_f64().unwrap();
    assert!((pct - 42.105).abs() < 0.001, "{pct}");
    assert_eq!(v["assumed_tensors"], serde_json::json!(["b1", "w1", "w2", "x"]));
}

#[test]
fn transformer_block_to_the_byte() {
    let v = json(&["transformer", "--seq-len", "2048", "--hidden", "4096", "--heads", "32", "--json"]);
    let groups: Vec<Vec<String>> = serde_json::from_value(v["groups"].clone()).unwrap();
    assert_eq!(
        groups,
        [
            &["qkv_proj", "split_q", "split_k", "split_v"][..],
            &["attn_scores"],
            &["softmax"],
            &["attn_output", "concat_heads"],
            &["out_proj", "residual1"],
            &["layernorm1"],
            &["ffn_up", "gelu"],
            &["ffn_down", "residual2"],
            &["layernorm2"],
        ]
        .map(|g| g.iter().map(|s| s.to_string()).collect::<Vec<_>>())
    );
    assert_eq!(v["unfused"]["total"], 2_348_810_240u64);
    assert_eq!(v["fused"]["total"], 1_962_934_272u64);
    assert_eq!(v["fused"]["saved_by_fusion"], 385_875_968u64);
    assert!((v["savings_pct"].as_f64().unwrap() - 16.43).abs() < 0.005);
    assert_eq!(v["assumed_tensors"], serde_json::json!([]));
}

#[test]
fn transformer_dtype_bytes_scales_traffic() {
    let two = json(&["transformer", "--seq-len", "128", "--hidden", "256", "--heads", "4", "--json"]);
    let four =
        json(&["transformer", "--seq-len", "128", "--hidden", "256", "--heads", "4", "--dtype-bytes", "4", "--json"]);
    assert_eq!(four["unfused"]["total"].as_u64().unwrap(), 2 * two["unfused"]["total"].as_u64().unwrap());
    assert_eq!(four["groups"], two["groups"]);
}

#[test]
fn readable_table_has_units_and_totals() {
    let (code, out, _) = run(&["graph", &data("graphs/worked_example.json")]);
    assert_eq!(code, 0);
    assert!(out.contains("4 ops in 2 fusion groups"), "{out}");
    assert!(out.contains("matmul1, bias1, relu"), "{out}");
    assert!(out.contains("79,691,776 (76.00 MiB)"), "{out}");
    assert!(out.contains("46,137,344 (44.00 MiB)"), "{out}");
    assert!(out.contains("42.11 %"), "{out}");
    assert!(out.contains("b1, w1, w2, x"), "{out}");
}

#[test]
fn file_order_that_is_not_topological_is_reordered() {
    let v = json(&["graph", &data("graphs/out_of_order.json"), "--json", "--details"]);
    assert_eq!(v["processing_order"], serde_json::json!(["matmul1", "bias1", "relu"]));
    assert_eq!(v["groups"], serde_json::json!([["matmul1", "bias1", "relu"]]));
    // x is declared without bytes_per_element: it takes matmul1's 2 bytes (1 MiB); b1 is assumed.
    assert_eq!(v["unfused"]["bytes_read"], 30_408_704u64);
    assert_eq!(v["assumed_tensors"], serde_json::json!(["b1"]));
}

const CONTRACT_KEYS: [&str; 5] = ["groups", "unfused", "fused", "savings_pct", "assumed_tensors"];
const DETAIL_KEYS: [&str; 3] = ["group_details", "op_details", "processing_order"];

/// The top-level keys of a JSON object's text, in the order written.
fn keys(text: &str) -> Vec<String> {
    let v: Value = serde_json::from_str(text).unwrap();
    let mut keys: Vec<String> = v.as_object().unwrap().keys().cloned().collect();
    keys.sort_by_key(|k| text.find(&format!("\"{k}\":")).unwrap());
    keys
}

fn stdout(args: &[&str]) -> String {
    let (code, stdout, stderr) = run(args);
    assert_eq!(code, 0, "{args:?}: {stderr}");
    stdout
}

/// `--json` prints the contract's keys, `--details` adds the per-group and per-op ones; with
/// them the object is the page's report (the page's JSON export), byte for byte.
#[test]
fn json_has_the_contract_keys_and_details_on_request() {
    let file = data("graphs/worked_example.json");
    assert_eq!(keys(&stdout(&["graph", &file, "--json"])), CONTRACT_KEYS);
    let detailed = stdout(&["graph", &file, "--json", "--details"]);
    assert_eq!(keys(&detailed), [&CONTRACT_KEYS[..], &DETAIL_KEYS[..]].concat());
    let g = parse_graph(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let report = analyse(&g).report(&g);
    assert_eq!(detailed, serde_json::to_string_pretty(&report).unwrap() + "\n");
    assert_eq!(detailed, fusionscope::fusion::analysis::report_json_text(&report));
    let t = ["transformer", "--seq-len", "128", "--hidden", "256", "--heads", "4", "--json"];
    assert_eq!(keys(&stdout(&t)), CONTRACT_KEYS);
    assert_eq!(keys(&stdout(&[&t[..], &["--details"]].concat())), [&CONTRACT_KEYS[..], &DETAIL_KEYS[..]].concat());
    // --details is a part of --json.
    let (code, _, stderr) = run(&["graph", &file, "--details"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("--json"), "{stderr}");
}

/// Above PRETTY_JSON_MAX_OPS ops the JSON is one line (indentation would double it), with
/// or without details; the figures are those of the report.
#[test]
fn a_large_graph_prints_compact_json() {
    let n = PRETTY_JSON_MAX_OPS + 1;
    let dir = temp_dir("fusionscope-large-graph");
    let file = dir.join("large.json");
    std::fs::write(&file, serde_json::to_string(&to_file(&random_graph(n, 7))).unwrap()).unwrap();
    let file = file.to_str().unwrap();
    let g = parse_graph(&std::fs::read_to_string(file).unwrap()).unwrap();
    let report = serde_json::to_value(analyse(&g).report(&g)).unwrap();
    for details in [false, true] {
        let args = if details { vec!["graph", file, "--json", "--details"] } else { vec!["graph", file, "--json"] };
        let text = stdout(&args);
        assert_eq!(text.lines().count(), 1, "one line");
        let expected: Vec<&str> =
            if details { [&CONTRACT_KEYS[..], &DETAIL_KEYS[..]].concat() } else { CONTRACT_KEYS.to_vec() };
        assert_eq!(keys(&text), expected);
        let v: Value = serde_json::from_str(&text).unwrap();
        for k in expected {
            assert_eq!(v[k], report[k], "{k}");
        }
    }
}

/// Each bad file: exit code 2, one line on stderr with these fragments, nothing on stdout.
#[test]
fn every_graph_error_is_one_line_naming_the_culprit() {
    let cases: &[(&str, &[&str])] = &[
        ("bad/duplicate_op.json", &["duplicate op name \"a\"", "line 4, column 5"]),
        ("bad/two_producers.json", &["tensor \"y\" is produced by two ops, \"a\" and \"b\"", "line 3"]),
        ("bad/unknown_op_type.json", &["op \"conv\" has unknown op_type \"convolution\"", "line 3"]),
        ("bad/negative_dim.json", &["op \"a\" has a negative dimension (-4)", "line 2"]),
        ("bad/negative_tensor_dim.json", &["tensor \"w\" has a negative dimension (-1)", "line 4"]),
        ("bad/zero_bytes.json", &["op \"b\" has bytes_per_element 0", "line 3"]),
        ("bad/cycle.json", &["cycle: p -> q -> r -> p"]),
        ("bad/malformed.json", &["malformed JSON at line 3, column 18"]),
    ];
    for (file, fragments) in cases {
        let (code, stdout, stderr) = run(&["graph", &data(&format!("graphs/{file}"))]);
        assert_eq!(code, 2, "{file}: {stderr}");
        assert!(stdout.is_empty(), "{file}: {stdout}");
        assert_eq!(stderr.lines().count(), 1, "{file}: {stderr}");
        assert!(stderr.starts_with("fusionscope: "), "{file}: {stderr}");
        assert!(stderr.contains(file), "{file}: error names the file: {stderr}");
        for f in *fragments {
            assert!(stderr.contains(f), "{file}: missing {f:?} in {stderr}");
        }
    }
}

#[test]
fn bad_invocations_exit_2_without_panicking() {
    for args in [
        &["graph", "/nonexistent/graph.json"][..],
        &["transformer", "--seq-len", "2048", "--hidden", "4096", "--heads", "3"],
        &["transformer", "--seq-len", "0", "--hidden", "4096", "--heads", "32"],
        &["transformer", "--seq-len", "-1", "--hidden", "4096", "--heads", "32"],
        &["nosuchcommand"],
    ] {
        let (code, _, stderr) = run(args);
        assert_eq!(code, 2, "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    }
    let (_, _, stderr) = run(&["transformer", "--seq-len", "2048", "--hidden", "4096", "--heads", "3"]);
    assert!(stderr.contains("hidden_dim 4096 is not divisible by num_heads 3"), "{stderr}");
}

#[test]
fn bench_prints_throughput() {
    let (code, out, stderr) = run(&["bench", "fusion", "--sizes", "2000", "--runs", "1"]);
    assert_eq!(code, 0, "{stderr}");
    let row = out.lines().find(|l| l.trim_start().starts_with("2000")).expect("a row for 2000 ops");
    let ops_per_s: f64 = row.split_whitespace().nth(3).unwrap().parse().unwrap();
    assert!(ops_per_s > 0.0, "{row}");
}

/// The command line reads every kind read whole as the page does: plain or gzip, held to the
/// same text budget (a small `.gz` that inflates past it is refused while inflating).
#[test]
fn graph_files_read_gzipped_and_within_the_text_budget() {
    use std::io::Write;
    let dir = crate::common::temp_dir("fusion_cli_gzip");
    let plain = std::fs::read(data("graphs/worked_example.json")).unwrap();
    let gz = dir.join("worked_example.json.gz");
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    enc.write_all(&plain).unwrap();
    std::fs::write(&gz, enc.finish().unwrap()).unwrap();
    assert_eq!(
        json(&["graph", gz.to_str().unwrap(), "--json"]),
        json(&["graph", &data("graphs/worked_example.json"), "--json"])
    );

    // 300 MiB of spaces (a valid start of JSON) compress to about 300 KB.
    let bomb = dir.join("bomb.json.gz");
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    enc.write_all(b"{\"ops\": []").unwrap();
    let spaces = vec![b' '; 1 << 20];
    for _ in 0..300 {
        enc.write_all(&spaces).unwrap();
    }
    enc.write_all(b"}").unwrap();
    std::fs::write(&bomb, enc.finish().unwrap()).unwrap();
    let (code, out, err) = run(&["graph", bomb.to_str().unwrap()]);
    assert_eq!((code, out.as_str()), (2, ""), "{err}");
    assert!(err.contains("bomb.json.gz: ") && err.contains("256.00 MiB"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");

    let latin1 = dir.join("latin1.json");
    std::fs::write(&latin1, b"{\"ops\": [], \"note\": \"caf\xe9\"}").unwrap();
    let (code, _, err) = run(&["graph", latin1.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(err.contains("latin1.json: ") && err.contains("not UTF-8"), "{err}");
}

#[test]
fn bench_times_the_graph_command_end_to_end() {
    let dir = temp_dir("fusionscope-bench-graph");
    let (code, out, stderr) = run(&["bench", "graph", "--ops", "2000", "--runs", "1", "--dir", dir.to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}");
    for output in ["--json ", "--json --details", "tables"] {
        let row = out.lines().find(|l| l.starts_with(output)).unwrap_or_else(|| panic!("a row for {output}: {out}"));
        let size: f64 = row.split_whitespace().last().unwrap().parse().unwrap();
        assert!(size > 0.0, "{row}");
    }
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0, "the graph file is removed");
}
