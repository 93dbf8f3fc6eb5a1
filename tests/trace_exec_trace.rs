//! Fusion in real traces with a PyTorch Execution Trace of the same run (docs/trace-fusion.md):
//! exact data flow, shapes for ops that recorded none, and refusals that name the file.

use crate::common::{data, json, run, temp_dir};

/// `trace PAIR_kineto --exec-trace PAIR_et --json` of a shared execution-trace pair, run once
/// for every test that reads it.
pub(crate) fn with_exec_trace(pair: &str) -> &'static serde_json::Value {
    static RUNS: [(&str, std::sync::OnceLock<serde_json::Value>); 2] =
        [("param_linear", std::sync::OnceLock::new()), ("hta_simple_add", std::sync::OnceLock::new())];
    let (_, run) = RUNS.iter().find(|(p, _)| *p == pair).expect("a shared execution-trace pair");
    run.get_or_init(|| {
        let (kineto, et) =
            (data(&format!("exec-trace/{pair}_kineto.json.gz")), data(&format!("exec-trace/{pair}_et.json.gz")));
        json(&["trace", &kineto, "--exec-trace", &et, "--json"])
    })
}

#[test]
fn an_execution_trace_makes_the_data_flow_exact() {
    let v = with_exec_trace("param_linear");
    let f = &v["fusion"];
    let et = &f["exec_trace"];
    // The ET holds one iteration; its forward ops link by rf_id = External id and name.
    assert_eq!(et["ops"], 928);
    assert!(et["linked_ops"].as_u64().unwrap() > 200, "{et}");
    assert!(et.get("note").is_none());
    // The Kineto trace recorded no shapes: the linked linear layers take the ET's.
    let addmm = f["groups"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["how"] == "execution trace" && g["launched_by"] == "aten::addmm")
        .expect("an addmm group with the ET's shapes");
    // addmm(bias [1024], x [512, 1024], W [1024, 1024]) in fp32, output [512, 1024].
    let out = 512 * 1024 * 4u64;
    assert_eq!(addmm["fused_bytes_per_call"], (1024 + 512 * 1024 + 1024 * 1024) * 4 + out);
    assert_eq!(addmm["unfused_bytes_per_call"], (1024 + 512 * 1024 + 1024 * 1024) * 4 + 3 * out);
    // addmm → clamp_min (the ReLU) by tensor id: the GEMM's output written and read back.
    let o = f["opportunities"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["ops"] == serde_json::json!(["aten::addmm", "aten::clamp_min"]))
        .expect("linear → relu");
    assert_eq!(o["saved_bytes_per_call"], 2 * out);
    assert!(o["evidence"].as_str().unwrap().contains("by tensor id"), "{o}");
}

#[test]
fn an_execution_trace_of_another_run_links_nothing_and_says_so() {
    let v = json(&[
        "trace",
        &data("exec-trace/hta_simple_add_kineto.json.gz"),
        "--exec-trace",
        &data("exec-trace/param_linear_et.json.gz"),
        "--json",
    ]);
    let et = &v["fusion"]["exec_trace"];
    assert_eq!(et["linked_ops"], 0);
    assert!(et["note"].as_str().unwrap().contains("another run"), "{et}");
}

#[test]
fn its_own_execution_trace_links_every_op_and_gives_a_random_fill_its_bytes() {
    let v = with_exec_trace("hta_simple_add");
    let f = &v["fusion"];
    assert_eq!(f["exec_trace"]["linked_pct"], 100.0);
    let fill =
        f["groups"].as_array().unwrap().iter().find(|g| g["ops"][0]["op"] == "aten::uniform_").expect("uniform_");
    // uniform_(self, from, to, generator): self written once, nothing read, in its own type.
    let self_dims: Vec<u64> = serde_json::from_value(fill["ops"][0]["input_dims"][0].clone()).unwrap();
    assert_eq!(fill["ops"][0]["input_types"][0], "float");
    let written = self_dims.iter().product::<u64>() * 4;
    assert_eq!(fill["fused_bytes_per_call"], written);
    assert_eq!(fill["unfused_bytes_per_call"], written);
    assert_eq!(fill["how"], "execution trace");
    // With it, every kernel of this run has its bytes.
    assert_eq!(f["totals"]["bytes_known_pct"], 100.0, "{}", f["totals"]);
}

/// The op rows of a `trace --json` output whose shapes came from the execution trace.
fn exec_trace_rows(v: &serde_json::Value) -> Vec<&serde_json::Value> {
    v["ops"].as_array().unwrap().iter().filter(|r| r["shapes_from"] == "execution trace").collect()
}

/// A row's dims as numbers: an empty list for a scalar argument.
fn dims(r: &serde_json::Value) -> Vec<Vec<u64>> {
    r["input_dims"].as_array().unwrap().iter().map(|d| serde_json::from_value(d.clone()).unwrap_or_default()).collect()
}

#[test]
fn a_trace_without_shapes_prices_its_linked_ops_with_the_execution_traces_shapes() {
    let (kineto, et) = (data("exec-trace/param_linear_kineto.json.gz"), data("exec-trace/param_linear_et.json.gz"));
    let v = json(&["trace", &kineto, "--exec-trace", &et, "--chip", "h100", "--json"]);
    assert_eq!(v["shapes_recorded"], false, "the Kineto trace recorded no shapes");
    let rows = exec_trace_rows(&v);
    // One row per op and ET shapes of the one linked iteration: addmm, mm (two shapes),
    // clamp_min, sum, threshold_backward, _softmax, fill_.
    assert_eq!(rows.len(), 8, "{rows:?}");
    let addmm = rows.iter().find(|r| r["op"] == "aten::addmm").unwrap();
    // addmm(bias [N], x [M, K], w [K, N]) in fp32: 2·M·N·K multiply-adds and the bias, M·N;
    // bytes: the three inputs read and the [M, N] output written, 4 bytes each.
    let d = dims(addmm);
    let (m, k, n) = (d[1][0], d[1][1], d[2][1]);
    assert_eq!((m, k, n), (512, 1024, 1024));
    assert_eq!(addmm["input_types"][0], "float");
    assert_eq!(addmm["flops_per_call"], 2 * m * n * k + m * n);
    assert_eq!(addmm["bytes_per_call"], 4 * (n + m * k + k * n + m * n));
    assert_eq!(addmm["model"], "GEMM");
    // All its calls at the H100's fp32 roofline (no TF32 by default: vector fp32, 67 TFLOP/s).
    let calls = addmm["calls"].as_u64().unwrap();
    let flops = (2 * m * n * k + m * n) as f64 * calls as f64;
    let roof_us = flops / 67e12 * 1e6;
    assert!((addmm["roofline_time_us"].as_f64().unwrap() - roof_us).abs() < 1e-3, "{addmm}");
    let pct = 100.0 * roof_us / addmm["kernel_time_us"].as_f64().unwrap();
    assert!((addmm["roofline_pct"].as_f64().unwrap() - pct).abs() < 1e-2, "{addmm}");
    for mm in rows.iter().filter(|r| r["op"] == "aten::mm") {
        let d = dims(mm);
        let (m, k, n) = (d[0][0], d[0][1], d[1][1]);
        assert_eq!(d[1][0], k);
        assert_eq!(mm["flops_per_call"], 2 * m * n * k);
        assert_eq!(mm["bytes_per_call"], 4 * (m * k + k * n + m * n));
    }
    // Ops the execution trace did not reach keep saying why they have no model.
    let unlinked = v["ops"].as_array().unwrap().iter().find(|r| r["op"] == "aten::mm" && r["input_dims"].is_null());
    assert_eq!(unlinked.unwrap()["no_model"], "Input Dims not recorded");
    assert!(v["op_coverage"]["modelled_us"].as_f64().unwrap() > 0.0);
    // Without the execution trace, no row has shapes.
    let plain = json(&["trace", &kineto, "--json"]);
    assert!(exec_trace_rows(&plain).is_empty());
    assert!(plain["ops"].as_array().unwrap().iter().all(|r| r["input_dims"].is_null()));
}

#[test]
fn the_op_table_and_the_fusion_groups_give_an_op_the_same_bytes_from_the_execution_trace() {
    let v = with_exec_trace("param_linear");
    let groups: Vec<&serde_json::Value> =
        v["fusion"]["groups"].as_array().unwrap().iter().filter(|g| g["how"] == "execution trace").collect();
    assert!(!groups.is_empty());
    let mut compared = 0;
    for g in &groups {
        // A group of one op: the op's own kernel, priced by the same model on the same shapes.
        let [op] = g["ops"].as_array().unwrap().as_slice() else { panic!("{g}") };
        let row = exec_trace_rows(v)
            .into_iter()
            .find(|r| {
                r["op"] == op["op"] && r["input_dims"] == op["input_dims"] && r["input_types"] == op["input_types"]
            })
            .unwrap_or_else(|| panic!("no op row for {op}"));
        assert_eq!(row["bytes_per_call"], g["fused_bytes_per_call"], "{} {}", op["op"], op["input_dims"]);
        compared += 1;
    }
    // Every op row the execution trace priced has its group (and the two GEMM kernels of each
    // mm shape, one per call, two groups each).
    assert_eq!(compared, 10);
}

#[test]
fn an_execution_traces_shapes_put_a_trace_without_them_on_the_roofline() {
    let v = with_exec_trace("hta_simple_add");
    assert_eq!(v["chip"]["name"], "A100 SXM 80GB");
    let add = exec_trace_rows(v).into_iter().find(|r| r["op"] == "aten::add").expect("aten::add");
    // add of two [256, 256] fp32 tensors: one FLOP per element; two read, one written.
    assert_eq!(dims(add)[..2], [vec![256, 256], vec![256, 256]]);
    let elements = 256 * 256;
    assert_eq!(add["flops_per_call"], elements);
    assert_eq!(add["bytes_per_call"], 3 * 4 * elements);
    // Memory-bound at the A100's 2,039 GB/s.
    let calls = add["calls"].as_f64().unwrap();
    let roof_us = calls * (3 * 4 * elements) as f64 / 2.039e12 * 1e6;
    assert!((add["roofline_time_us"].as_f64().unwrap() - roof_us).abs() < 1e-3, "{add}");
    assert_eq!(add["bound"], "memory");
    let pct = 100.0 * roof_us / add["kernel_time_us"].as_f64().unwrap();
    assert!((add["roofline_pct"].as_f64().unwrap() - pct).abs() < 1e-2, "{add}");
}

#[test]
fn a_trace_without_shapes_says_its_op_table_takes_them_from_the_linked_execution_trace() {
    let (kineto, et) = (data("exec-trace/param_linear_kineto.json.gz"), data("exec-trace/param_linear_et.json.gz"));
    let rows = exec_trace_rows(with_exec_trace("param_linear")).len();
    let (code, text, _) = run(&["trace", &kineto, "--exec-trace", &et]);
    assert_eq!(code, 0);
    let said = format!(
        "The trace was recorded without record_shapes. {rows} op rows take their shapes from the execution trace {et} \
         (`shapes_from`: their ops recorded none and link to its nodes), as the fusion groups do"
    );
    // At the end of the op table's coverage line.
    assert!(text.contains(&said), "{text}");
    // Without the execution trace, nothing is claimed.
    let (_, plain, _) = run(&["trace", &kineto]);
    assert!(plain.contains("ops have times but no FLOPs or bytes.") && !plain.contains("execution trace"));
}

#[test]
fn bad_execution_traces_are_refused_naming_the_file() {
    let dir = temp_dir("trace-fusion-et");
    let trace = data("exec-trace/hta_simple_add_kineto.json.gz");
    for (name, text, expect) in [
        (
            "cycle.json",
            r#"{"nodes": [{"id": 1, "name": "a", "parent": 2}, {"id": 2, "name": "b", "parent": 1}]}"#,
            "cycle",
        ),
        ("notet.json", r#"{"traceEvents": []}"#, "no \"nodes\" list"),
        ("broken.json", r#"{"nodes": [{"id": 1, "name": "a", "inputs": 3}]}"#, "\"inputs\" is not a list"),
    ] {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        let (code, _, stderr) = run(&["trace", &trace, "--exec-trace", path.to_str().unwrap()]);
        assert_eq!(code, 2, "{name}");
        assert!(stderr.contains(name) && stderr.contains(expect), "{name}: {stderr}");
    }
}

#[test]
fn summary_only_refuses_an_execution_trace() {
    let (code, _, stderr) = run(&[
        "trace",
        &data("exec-trace/hta_simple_add_kineto.json.gz"),
        "--summary-only",
        "--exec-trace",
        &data("exec-trace/hta_simple_add_et.json.gz"),
    ]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("cannot be used with"), "{stderr}");
}

/// An execution trace that shares no record-function ids with its Kineto trace (PyTorch before
/// 2.1) is linked by op order on each thread, when it is of the same process: made here from
/// the shared pair by dropping the ET's `rf_id`s. On the ET's main thread (the forward pass,
/// where the ids link 171 ops) the order gives the node the ids give; the autograd thread, which
/// the ids hardly link (46 of its 617 ops share an id and a name with a CPU op), is linked by
/// order too. An ET of another process links nothing.
#[test]
fn an_execution_trace_without_shared_ids_is_linked_by_op_order_in_its_process() {
    use crate::common::{data_bytes, gunzip};
    use fusionscope::analysis::exec_trace::{link, parse_exec_trace};
    use fusionscope::formats::read_trace;
    let trace = read_trace(&data_bytes("exec-trace/param_linear_kineto.json.gz")).unwrap();
    let text = String::from_utf8(gunzip(&data_bytes("exec-trace/param_linear_et.json.gz"))).unwrap();
    let with_ids = parse_exec_trace(&text, "et.json").unwrap();
    let by_id = link(&trace, &with_ids);
    assert!(!by_id.by_order && by_id.linked_ops > 200, "{}", by_id.linked_ops);
    let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
    for n in v["nodes"].as_array_mut().unwrap() {
        n.as_object_mut().unwrap().remove("rf_id");
    }
    let without_ids = parse_exec_trace(&v.to_string(), "et.json").unwrap();
    let by_order = link(&trace, &without_ids);
    assert!(by_order.by_order);
    // Node indices are the same in both parses: the same op's node wherever the ids linked one
    // on the main thread.
    let (mut same, mut linked) = (0, 0);
    for (a, b) in by_id.by_cpu_op.iter().zip(&by_order.by_cpu_op) {
        if let Some(a) = a.filter(|&a| with_ids.nodes[a].tid == 1) {
            linked += 1;
            same += usize::from(*b == Some(a));
        }
    }
    assert!(linked >= 170 && same * 100 >= linked * 98, "{same} of {linked} ops linked to the node the ids give");
    assert!(by_order.linked_ops >= by_id.linked_ops, "{} vs {}", by_order.linked_ops, by_id.linked_ops);
    // The same ET said to be of another process links nothing.
    v["pid"] = serde_json::json!(1);
    let other = link(&trace, &parse_exec_trace(&v.to_string(), "et.json").unwrap());
    assert_eq!((other.linked_ops, other.by_order), (0, false));
    // The command line says how they were linked.
    let dir = temp_dir("et-by-order");
    let et_path = dir.join("et.json");
    v["pid"] = serde_json::json!(without_ids.pid.unwrap());
    std::fs::write(&et_path, v.to_string()).unwrap();
    let out = json(&[
        "trace",
        &data("exec-trace/param_linear_kineto.json.gz"),
        "--exec-trace",
        et_path.to_str().unwrap(),
        "--json",
    ]);
    let et = &out["fusion"]["exec_trace"];
    assert_eq!(et["linked_ops"], by_order.linked_ops);
    assert!(et["note"].as_str().unwrap().contains("linked by their order"), "{et}");
}
