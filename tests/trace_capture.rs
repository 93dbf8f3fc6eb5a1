//! Graph replays joined to their capture traces (`src/analysis/capture.rs`), on the two real vLLM
//! pairs in tests/data, against TraceLens's report of the same files
//! (`tests/data/reference/tracelens/vllm_*`, PROVENANCE.md there): per op, the calls and the
//! kernel time; per GEMM call site, the FLOPs and bytes; the GPU timeline. Then the comparison
//! of two replays becomes op-anchored, and mismatched inputs fail with a reason.

use std::collections::BTreeMap;

use crate::common::tracelens::{csv, python_list_to_json, reference_timeline, timeline_figures};
use crate::common::{gunzip, json, run, trace_bytes};
use fusionscope::analysis::capture::{attribute, CaptureError};
use fusionscope::analysis::compare::Method;
use fusionscope::analysis::pipeline::{time_report, Choices};
use fusionscope::analysis::summary::ClassifiedTrace;
use fusionscope::analysis::{compare, Input};
use fusionscope::formats::read_trace;
use fusionscope::trace::Trace;

const PAIRS: [&str; 2] = ["vllm_decode_graph_full", "vllm_prefilldecode_graph_piecewise"];

fn read(file: &str) -> Trace {
    read_trace(&gunzip(&trace_bytes(&format!("amd/{file}.json.gz")))).unwrap()
}

fn joined(pair: &str) -> (Trace, fusionscope::analysis::capture::CaptureReport) {
    attribute(&read(&format!("{pair}_replay")), &read(&format!("{pair}_capture"))).unwrap()
}

/// The report of the replay joined to its capture.
fn joined_time(pair: &str) -> fusionscope::analysis::pipeline::TraceTime {
    let (trace, _) = joined(pair);
    time_report(&ClassifiedTrace::new(&trace), &Choices::default())
}

#[track_caller]
fn close(ours: f64, theirs: f64, what: &str) {
    assert!((ours - theirs).abs() <= 1e-3 * theirs.abs().max(1.0), "{what}: ours {ours}, TraceLens {theirs}");
}

#[test]
fn every_replayed_kernel_finds_its_captured_op() {
    let (_, full) = joined(PAIRS[0]);
    assert_eq!(
        (full.graphs_captured, full.replays, full.replays_matched, full.replay_kernels, full.kernels_attributed),
        (1, 1, 1, 421, 421)
    );
    let (_, piecewise) = joined(PAIRS[1]);
    assert_eq!(
        (piecewise.graphs_captured, piecewise.replays, piecewise.replays_matched, piecewise.kernels_attributed),
        (25, 25, 25, 361)
    );
    assert_eq!(full.matched_by_count + piecewise.matched_by_count, 0, "ROCm captures name their kernels");
}

#[test]
fn per_op_calls_and_kernel_time_match_tracelens() {
    for pair in PAIRS {
        let time = joined_time(pair);
        assert_eq!(time.unattributed.events, 0, "{pair}: every kernel has an op");
        // Ours is per (op, shapes); TraceLens's ops_summary per op name.
        let mut ours: BTreeMap<&str, (u64, f64)> = BTreeMap::new();
        for r in &time.ops {
            let e = ours.entry(r.op.as_str()).or_default();
            e.0 += r.calls;
            e.1 += r.kernel_time_us;
        }
        let theirs = csv(&format!("reference/tracelens/{pair}/ops_summary.csv"));
        assert_eq!(ours.len(), theirs.len(), "{pair}: the same ops ({:?})", ours.keys());
        for row in theirs {
            let name = row["name"].as_str();
            let (calls, us) = ours.get(name).copied().unwrap_or_else(|| panic!("{pair}: no row for {name}"));
            assert_eq!(calls, row["Count"].parse::<u64>().unwrap(), "{pair} {name}: calls");
            close(us, row["total_direct_kernel_time_ms"].parse::<f64>().unwrap() * 1e3, &format!("{pair} {name} µs"));
        }
    }
}

#[test]
fn gemm_flops_and_bytes_from_captured_shapes_match_tracelens() {
    for pair in PAIRS {
        let time = joined_time(pair);
        let mut checked = 0;
        for row in csv(&format!("reference/tracelens/{pair}/GEMM.csv")) {
            // TraceLens also lists the wrapping custom op (vllm::rocm_unquantized_gemm) whose
            // aten::addmm child launched the kernel; ours attributes the kernel to the child.
            if !row["name"].starts_with("aten::") {
                continue;
            }
            let dims: serde_json::Value = serde_json::from_str(&row["Input Dims_first"]).unwrap();
            let ours = time
                .ops
                .iter()
                .find(|r| r.op == row["name"] && r.input_dims == dims)
                .unwrap_or_else(|| panic!("{pair}: no {} {dims}", row["name"]));
            let what = format!("{pair} {} {dims}", row["name"]);
            close(ours.flops_per_call.unwrap() as f64, row["GFLOPS_first"].parse::<f64>().unwrap() * 1e9, &what);
            close(
                ours.bytes_per_call.unwrap() as f64,
                row["Data Moved (MB)_first"].parse::<f64>().unwrap() * 1024.0 * 1024.0,
                &what,
            );
            let types: serde_json::Value =
                serde_json::from_str(&python_list_to_json(&row["Input type_first"])).unwrap();
            assert_eq!(ours.input_types, types, "{what}");
            assert_eq!(ours.calls, row["name_count"].parse::<u64>().unwrap(), "{what}: calls");
            checked += 1;
        }
        assert!(checked >= 4, "{pair}: {checked} GEMM rows checked");
    }
}

#[test]
fn the_join_leaves_the_timeline_as_tracelens_reports_it() {
    for pair in PAIRS {
        let time = joined_time(pair);
        let t = time.timeline.unwrap();
        let r = reference_timeline(pair);
        for (key, ours) in timeline_figures(&t) {
            let theirs = r[key];
            assert!((ours - theirs).abs() <= 0.005 * theirs.max(1.0), "{pair} {key}: {ours} vs {theirs}");
        }
    }
}

#[test]
fn joined_replays_compare_op_by_op() {
    let (full, _) = joined(PAIRS[0]);
    let (piecewise, _) = joined(PAIRS[1]);
    let c = compare(Input::new(&full, Some("full")), Input::new(&piecewise, Some("piecewise")));
    let addmm = c.op_mapping.iter().find(|r| r.op == "aten::addmm").expect("an aten::addmm row");
    assert_eq!(addmm.method, Method::OpAnchored);
    assert_eq!((addmm.sides["a"].calls, addmm.sides["b"].calls), (72, 72));
    let anchored: u64 =
        c.op_mapping.iter().filter(|r| r.method == Method::OpAnchored).map(|r| r.sides["a"].stats.count).sum();
    assert!(anchored >= 421, "the replayed kernels are op-anchored: {anchored}");
    // Without the capture, the same replay has no op for its graph kernels.
    let bare = read(&format!("{}_replay", PAIRS[0]));
    let c = compare(Input::new(&bare, Some("full")), Input::new(&piecewise, Some("piecewise")));
    assert!(c.op_mapping.iter().all(|r| r.op != "aten::addmm" || r.sides["a"].calls == 0));
}

#[test]
fn inputs_that_do_not_belong_together_say_why() {
    let full_replay = read(&format!("{}_replay", PAIRS[0]));
    let piecewise_capture = read(&format!("{}_capture", PAIRS[1]));
    assert_eq!(
        attribute(&full_replay, &piecewise_capture).unwrap_err(),
        CaptureError::NoMatch { replays: 1, graphs: 25 }
    );
    let eager = read("hf_qwen1.5-0.5b_eager_mi300x");
    assert_eq!(attribute(&full_replay, &eager).unwrap_err(), CaptureError::NoCapture);
    assert_eq!(attribute(&eager, &piecewise_capture).unwrap_err(), CaptureError::NoReplay);
}

#[test]
fn the_cli_joins_with_capture_and_names_the_files_when_it_cannot() {
    let dir = crate::common::data("traces/amd");
    let replay = format!("{dir}/{}_replay.json.gz", PAIRS[0]);
    let capture = format!("{dir}/{}_capture.json.gz", PAIRS[0]);
    let out = json(&["trace", &replay, "--capture", &capture, "--json"]);
    assert_eq!(out["capture"]["kernels_attributed"], 421);
    assert_eq!(out["unattributed"]["events"], 0);
    let (code, text, _) = run(&["trace", &replay, "--capture", &capture]);
    assert_eq!(code, 0);
    assert!(text.contains("1 of 1 graph replays matched to 1 captured graphs; 421 of 421 replayed kernels"), "{text}");
    let wrong = format!("{dir}/{}_capture.json.gz", PAIRS[1]);
    let (code, _, err) = run(&["trace", &replay, "--capture", &wrong]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("vllm_prefilldecode_graph_piecewise_capture.json.gz")
            && err.contains("none of the 1 graph replays"),
        "{err}"
    );
    let out = json(&["compare", &replay, &replay, "--capture-a", &capture, "--json"]);
    assert_eq!(out["captures"]["a"]["replays_matched"], 1);
    assert!(out["captures"].get("b").is_none());
}
