//! Where the time goes, on real traces, against a peer's numbers: the GPU timeline and the
//! per-op table of the shared Qwen1.5-0.5B pair (H100, MI300X) match TraceLens's report for the
//! same files (`tests/data/reference/tracelens/`, PROVENANCE.md there) within the tolerances
//! docs/trace-analysis.md states: 0.5 % for the timeline.

use crate::common::tracelens::{reference_timeline, timeline_figures};
use crate::common::{gunzip, trace_bytes};
use fusionscope::analysis::summary::ClassifiedTrace;
use fusionscope::analysis::time::timeline::timelines;
use fusionscope::formats::read_trace;

#[track_caller]
fn close(ours: f64, theirs: f64, tolerance: f64, what: &str) {
    let err = if theirs == 0.0 { ours.abs() } else { ((ours - theirs) / theirs).abs() };
    assert!(err <= tolerance || (ours - theirs).abs() < 0.01, "{what}: ours {ours} µs, TraceLens {theirs} µs");
}

#[test]
fn the_qwen_pairs_step_timeline_matches_tracelens_within_half_a_percent() {
    for (file, folder) in [
        ("nvidia/hf_qwen1.5-0.5b_eager_h100.json.gz", "qwen1.5-0.5b_h100"),
        ("amd/hf_qwen1.5-0.5b_eager_mi300x.json.gz", "qwen1.5-0.5b_mi300x"),
    ] {
        let trace = read_trace(&gunzip(&trace_bytes(file))).unwrap();
        let side = ClassifiedTrace::new(&trace);
        let devices = timelines(&side);
        assert_eq!(devices.len(), 1, "{file}: one device");
        // TraceLens's window is the GPU-side ProfilerStep#6 range.
        let steps = &devices[0].steps;
        assert_eq!(steps.iter().map(|s| s.window.as_str()).collect::<Vec<_>>(), vec!["ProfilerStep#6"], "{file}");
        let s = &steps[0];
        let r = reference_timeline(folder);
        for (key, ours) in timeline_figures(s) {
            close(ours, r[key], 0.005, &format!("{file} {key}"));
        }
        // The whole trace spans more than the step, and its parts add up.
        let w = &devices[0].whole;
        assert!(w.total_us > s.total_us, "{file}");
        assert!((w.busy_us + w.idle_us - w.total_us).abs() < 0.01, "{file}");
    }
}

#[test]
fn the_chip_is_detected_given_by_name_or_file_or_said_to_be_unknown() {
    use crate::common::{data, json, run};
    let qwen_amd = data("traces/amd/hf_qwen1.5-0.5b_eager_mi300x.json.gz");
    let v = json(&["trace", &qwen_amd, "--json"]);
    assert_eq!(v["chip"]["name"], "MI300X");
    assert_eq!(v["chip"]["detected_from"], "device name \"AMD Instinct MI300X VF\"");
    assert_eq!(v["chip"]["peaks_tflops"]["matrix_bf16"], 1307.4);
    // TraceLens's own chip file (max achievable, not datasheet, peaks) is read as it is.
    let arch = data("reference/tracelens/arch/MI300X.json");
    let v = json(&["trace", &qwen_amd, "--chip", &arch, "--json"]);
    assert_eq!(v["chip"]["peaks_tflops"]["matrix_bf16"], 708.0);
    assert_eq!(v["chip"]["hbm_tb_per_s"], 5.3);
    assert_eq!(v["chip"]["detected_from"], format!("chip file {arch}"));
    let v = json(&["trace", &qwen_amd, "--chip", "H100", "--json"]);
    assert_eq!(
        (v["chip"]["name"].as_str(), v["chip"]["detected_from"].as_str()),
        (Some("H100 SXM"), Some("--chip H100"))
    );
    // ROCm 6.2 names an MI250 "AMD Radeon Graphics": no chip, said once, and the figures that
    // need none are still there.
    let mi250 = data("traces/amd/hta_mi250_minitoy_train_rocm6.2.json.gz");
    let v = json(&["trace", &mi250, "--json"]);
    assert!(v["chip"].is_null());
    assert!(v["chip_note"].as_str().unwrap().contains("\"AMD Radeon Graphics\""), "{}", v["chip_note"]);
    assert!(v["timeline"]["busy_us"].as_f64().unwrap() > 0.0);
    assert!(v["ops"].as_array().unwrap().iter().all(|o| o["roofline_pct"].is_null()));
    let (code, text, _) = run(&["trace", &mi250]);
    assert_eq!(code, 0);
    assert!(text.contains("Chip: none") && text.contains("--chip NAME|FILE"), "{text}");
    let (code, _, err) = run(&["trace", &mi250, "--chip", "h900"]);
    assert_ne!(code, 0);
    assert!(err.contains("--chip h900: no such file, and not a chip preset"), "{err}");
}

/// Our op table of a trace, as `fusionscope trace --json` gives it.
fn op_rows(file: &str) -> Vec<serde_json::Value> {
    crate::common::json(&["trace", &crate::common::data(&format!("traces/{file}")), "--json"])["ops"]
        .as_array()
        .unwrap()
        .clone()
}

#[test]
fn the_qwen_pairs_gemm_and_sdpa_rows_match_tracelens_flops_bytes_and_kernel_time() {
    use crate::common::tracelens::{csv, python_list_to_json};
    for (file, folder) in [
        ("nvidia/hf_qwen1.5-0.5b_eager_h100.json.gz", "qwen1.5-0.5b_h100"),
        ("amd/hf_qwen1.5-0.5b_eager_mi300x.json.gz", "qwen1.5-0.5b_mi300x"),
    ] {
        let ours = op_rows(file);
        let mut checked = 0;
        for sheet in ["GEMM", "SDPA_fwd"] {
            for r in csv(&format!("reference/tracelens/{folder}/{sheet}.csv")) {
                let dims: serde_json::Value = serde_json::from_str(&r["Input Dims_first"]).unwrap();
                let types: serde_json::Value =
                    serde_json::from_str(&python_list_to_json(&r["Input type_first"])).unwrap();
                let what = format!("{file} {} {dims}", r["name"]);
                let exact =
                    ours.iter().find(|o| o["op"] == r["name"] && o["input_dims"] == dims && o["input_types"] == types);
                // TraceLens counts the SDPA op with its subtree. We attribute each kernel to the
                // op that launched it: the attention to the child `_flash_attention_forward`
                // (same tensors, recorded as [B, N, H, d]), which holds the FLOPs; on ROCm that
                // op also zeroes a 1-element buffer (zeros → zero_ → fill_: one fill kernel per
                // call), which is `aten::fill_`'s row here. Together they are TraceLens's time.
                let (row, helper_us) = if sheet == "SDPA_fwd" {
                    let child = ours.iter().find(|o| o["op"] == "aten::_flash_attention_forward");
                    let calls = child.map(|c| c["calls"].clone());
                    let fill = ours.iter().find(|o| {
                        o["op"] == "aten::fill_"
                            && o["input_dims"] == serde_json::json!([[1], []])
                            && Some(o["calls"].clone()) == calls
                    });
                    (child, fill.map_or(0.0, |o| o["kernel_time_us"].as_f64().unwrap()))
                } else {
                    (exact, 0.0)
                };
                let row = row.unwrap_or_else(|| panic!("{what}: no such row of ours"));
                if let Some(outer) = exact.filter(|_| sheet == "SDPA_fwd") {
                    assert!(outer["model"].is_null(), "{what}: the outer SDPA row must not count the FLOPs again");
                }
                let theirs = |col: &str| r[col].parse::<f64>().unwrap();
                let rel = |a: f64, b: f64| ((a - b) / b).abs();
                let flops = row["flops_per_call"].as_f64().unwrap();
                let bytes = row["bytes_per_call"].as_f64().unwrap();
                assert!(rel(flops, theirs("GFLOPS_first") * 1e9) <= 0.01, "{what}: FLOPs {flops}");
                // The report's "MB" are MiB.
                assert!(rel(bytes, theirs("Data Moved (MB)_first") * 1048576.0) <= 0.01, "{what}: bytes {bytes}");
                let calls = row["calls"].as_f64().unwrap();
                assert_eq!(calls, theirs("name_count"), "{what}: calls");
                let time = row["kernel_time_us"].as_f64().unwrap() + helper_us;
                assert!(rel(time, theirs("Kernel Time (µs)_sum")) <= 0.02, "{what}: kernel time {time} µs");
                checked += 1;
            }
        }
        assert!(checked >= 6, "{file}: {checked} rows");
    }
}

#[test]
fn a_trace_without_record_shapes_says_so_once_and_keeps_its_timeline_and_op_times() {
    use fusionscope::analysis::pipeline::{time_report, Choices};
    use fusionscope::view::time::{coverage_line, time_text};
    let text = String::from_utf8(gunzip(&trace_bytes("nvidia/hf_bert-small_eager_h100.json.gz"))).unwrap();
    // The same trace as if recorded without `record_shapes=True`.
    let stripped = text.replace("\"Input Dims\"", "\"Input Dimz\"").replace("\"Input type\"", "\"Input typz\"");
    let (with, without) = (read_trace(text.as_bytes()).unwrap(), read_trace(stripped.as_bytes()).unwrap());
    let report = |t| time_report(&ClassifiedTrace::new(t), &Choices::default());
    let (a, b) = (report(&with), report(&without));
    assert!(a.shapes_recorded && !b.shapes_recorded);
    assert_eq!(a.timeline, b.timeline);
    assert_eq!(a.op_coverage.gpu_time_us, b.op_coverage.gpu_time_us);
    assert_eq!(b.op_coverage.modelled_us, 0.0);
    for r in &b.ops {
        assert!(r.input_dims.is_null() && r.flops_per_call.is_none(), "{}", r.op);
        let why = r.no_model.as_deref().unwrap();
        assert!(why.starts_with("Input Dims not recorded") || why.starts_with("no model for"), "{}: {why}", r.op);
    }
    let line = coverage_line(&b);
    assert!(line.ends_with("The trace was recorded without record_shapes: ops have times but no FLOPs or bytes."));
    assert_eq!(time_text(&b).matches("record_shapes").count(), 1, "said once");
}

/// The op enclosing each kernel's launch call, found from the raw JSON: per thread the
/// `cpu_op`s by start, the latest-starting one whose interval holds the call (kernel name, op).
fn enclosing_ops_from_json(text: &[u8]) -> Vec<(String, Option<String>)> {
    let v: serde_json::Value = serde_json::from_slice(text).unwrap();
    let events = v["traceEvents"].as_array().unwrap();
    let f = |e: &serde_json::Value, k: &str| e[k].as_f64().unwrap();
    let launches: std::collections::HashMap<u64, &serde_json::Value> = events
        .iter()
        .filter(|e| e["cat"] == "cuda_runtime")
        .filter_map(|e| Some((e["args"]["correlation"].as_u64()?, e)))
        .collect();
    let mut ops: std::collections::HashMap<i64, Vec<&serde_json::Value>> = Default::default();
    for e in events.iter().filter(|e| e["cat"] == "cpu_op") {
        ops.entry(e["tid"].as_i64().unwrap()).or_default().push(e);
    }
    for list in ops.values_mut() {
        list.sort_by(|a, b| f(a, "ts").total_cmp(&f(b, "ts")));
    }
    events
        .iter()
        .filter(|e| e["cat"] == "kernel")
        .map(|e| {
            let call = launches[&e["args"]["correlation"].as_u64().unwrap()];
            let ts = f(call, "ts");
            let list = &ops[&call["tid"].as_i64().unwrap()];
            let before = &list[..list.partition_point(|o| f(o, "ts") <= ts)];
            let op = before.iter().rev().find(|o| ts <= f(o, "ts") + f(o, "dur"));
            (e["name"].as_str().unwrap().to_string(), op.map(|o| o["name"].as_str().unwrap().to_string()))
        })
        .collect()
}

#[test]
fn an_older_traces_kernels_link_to_the_op_enclosing_their_launch_not_the_op_their_correlation_id_names() {
    use fusionscope::analysis::pipeline::{time_report, Choices};
    // PyTorch 1.x: every kernel's and launch call's `External id` is its correlation id, which
    // as an op id names unrelated ops (the GEMMs landed on `aten::t`).
    let text = gunzip(&crate::common::data_bytes("exec-trace/param_linear_kineto.json.gz"));
    let trace = read_trace(&text).unwrap();
    assert!(trace.kernels.iter().all(|k| k.external_id == k.correlation));
    let kernels_expected = enclosing_ops_from_json(&text);
    let ops = trace.kernel_ops();
    assert_eq!(ops.len(), kernels_expected.len());
    let count = |names: &mut dyn Iterator<Item = (bool, Option<String>)>| {
        let mut m: std::collections::BTreeMap<(bool, Option<String>), u64> = Default::default();
        for n in names {
            *m.entry(n).or_default() += 1;
        }
        m
    };
    // Per (is a GEMM, op): ours against the raw JSON's.
    let ours = count(&mut trace.kernels.iter().zip(&ops).map(|(k, op)| {
        (trace.name(k.name).contains("gemm"), op.map(|o| trace.name(trace.cpu_ops[o].name).to_string()))
    }));
    let want = count(&mut kernels_expected.iter().map(|(n, op)| (n.contains("gemm"), op.clone())));
    assert_eq!(ours, want);
    let gemm_ops: Vec<&str> = want.keys().filter(|(g, _)| *g).filter_map(|(_, o)| o.as_deref()).collect();
    assert_eq!(gemm_ops, vec!["aten::addmm", "aten::mm"]);
    // The op table: GEMM time on `aten::mm`/`aten::addmm`, none on `aten::t` or `aten::transpose`.
    let report = time_report(&ClassifiedTrace::new(&trace), &Choices::default());
    let row = |op: &str| report.ops.iter().find(|r| r.op == op);
    assert!(row("aten::t").is_none() && row("aten::transpose").is_none());
    // One GEMM per call.
    assert_eq!(row("aten::addmm").unwrap().calls, want[&(true, Some("aten::addmm".to_string()))]);
    assert_eq!(row("aten::mm").unwrap().calls, want[&(true, Some("aten::mm".to_string()))]);
    assert_eq!(report.unattributed.events, 0);
}

/// A model counts the fewest bytes an op can move, so no op of the test traces runs faster than
/// its chip's roof. SGLang's embedding gathers with an index expanded to the hidden size
/// (strides `[1, 0]`): read at its shape, the index alone was 503 MB and the op ran at 215 % of
/// the MI300X's roof; the 15,360 indices it holds are 123 KB.
#[test]
fn no_op_of_the_test_traces_runs_above_its_roof() {
    let traces = [
        "nvidia/hf_qwen1.5-0.5b_eager_h100.json.gz",
        "amd/hf_qwen1.5-0.5b_eager_mi300x.json.gz",
        "nvidia/hf_bert-small_eager_h100.json.gz",
        "amd/hf_bert-small_eager_mi300x.json.gz",
        "amd/sglang_qwen3-8b_prefilldecode_mi300x.json.gz",
        "amd/torch_compile_triton_mi300x.json.gz",
        "nvidia/tracelens_eager_b200.json.gz",
    ];
    for rel in traces {
        let rows = op_rows(rel);
        assert!(rows.iter().any(|o| o["roofline_pct"].is_number()), "{rel}: no row on a roofline");
        if let Some(o) = rows.iter().find(|o| o["roofline_pct"].as_f64().is_some_and(|p| p > 100.0)) {
            panic!("{rel}: {} {} at {} % of its roof", o["op"], o["input_dims"], o["roofline_pct"]);
        }
    }
    let gather = op_rows("amd/sglang_qwen3-8b_prefilldecode_mi300x.json.gz")
        .into_iter()
        .find(|o| o["op"] == "aten::gather")
        .unwrap();
    // The source rows gathered and the output written, bf16, and the 15,360 int64 indices.
    assert_eq!(gather["bytes_per_call"], 2 * 15_360 * 4096 * 2 + 15_360 * 8);
}
