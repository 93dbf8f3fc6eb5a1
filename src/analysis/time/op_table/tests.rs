use super::*;
use formats::read_trace;
use hardware::{preset, Precision, Unit};

/// A stand-in model: `aten::mm` with 2·M·N·K FLOPs of its two dims, everything else none.
fn mm_cost(op: &str, shapes: ShapeText<'_>) -> Result<Cost, String> {
    if op != "aten::mm" && op != "aten::linear" {
        return Err(format!("no model for {op}"));
    }
    let dims: Vec<Vec<u64>> = serde_json::from_str(shapes.dims.ok_or("no dims")?).map_err(|e| e.to_string())?;
    let (m, k, n) = (dims[0][0], dims[0][1], dims[1][1]);
    Ok(Cost {
        model: "GEMM",
        flops: 2 * m * n * k,
        bytes: 2 * (m * k + k * n + m * n),
        peak: PeakKey::new(Unit::Matrix, Precision::Bf16),
        estimate: false,
    })
}

fn trace() -> Trace {
    // Two calls of mm (ids 1 and 2), one with a memset; one add; a kernel with no op.
    let text = r#"{"traceEvents":[
          {"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":0,"dur":10,"args":{"External id":1,"Input Dims":[[1024,1024],[1024,1024]],"Input type":["c10::BFloat16","c10::BFloat16"]}},
          {"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":20,"dur":10,"args":{"External id":2,"Input Dims":[[1024,1024],[1024,1024]],"Input type":["c10::BFloat16","c10::BFloat16"]}},
          {"ph":"X","cat":"cpu_op","name":"aten::add","pid":1,"tid":1,"ts":40,"dur":10,"args":{"External id":3,"Input Dims":[[4],[4]],"Input type":["float","float"]}},
          {"ph":"X","cat":"cuda_runtime","name":"cudaMemsetAsync","pid":1,"tid":1,"ts":1,"dur":1,"args":{"correlation":9,"External id":1}},
          {"ph":"X","cat":"gpu_memset","name":"Memset (Device)","pid":0,"tid":7,"ts":100,"dur":1,"args":{"correlation":9}},
          {"ph":"X","cat":"kernel","name":"gemm","pid":0,"tid":7,"ts":101,"dur":10,"args":{"External id":1,"correlation":10}},
          {"ph":"X","cat":"kernel","name":"gemm","pid":0,"tid":7,"ts":120,"dur":10,"args":{"External id":2,"correlation":11}},
          {"ph":"X","cat":"kernel","name":"add_kernel","pid":0,"tid":7,"ts":140,"dur":2,"args":{"External id":3,"correlation":12}},
          {"ph":"X","cat":"kernel","name":"graph_kernel","pid":0,"tid":7,"ts":150,"dur":5,"args":{"correlation":13}}
        ]}"#;
    read_trace(text.as_bytes()).unwrap()
}

#[test]
fn rows_group_calls_by_shape_and_attribute_every_event_once() {
    let chip = preset("h100").unwrap();
    let t = op_table(&ClassifiedTrace::new(&trace()), Some(&chip), &mm_cost, &NoCallCosts, None);
    assert!(t.shapes_recorded);
    assert_eq!(t.rows.len(), 2);
    let mm = &t.rows[0];
    assert_eq!((mm.op.as_str(), mm.calls), ("aten::mm", 2));
    // 11 µs (memset + GEMM back to back) + 10 µs.
    assert_eq!(mm.kernel_time_us, 21.0);
    assert_eq!(mm.input_dims, serde_json::json!([[1024, 1024], [1024, 1024]]));
    assert_eq!(mm.flops_per_call, Some(2 * 1024 * 1024 * 1024));
    // 2 × 2·1024³ FLOP in 21 µs.
    let tflops = 2.0 * 2.0 * 1024f64.powi(3) / 21e-6 / 1e12;
    assert!((mm.tflops_per_s.unwrap() - tflops).abs() < 1e-3);
    // Intensity 2·1024³ / (3·2·1024²) = 341.3 FLOP/B, above the H100 ridge (989.4/3.35 = 295): compute-bound.
    assert_eq!(mm.bound, Some(Bound::Compute));
    assert_eq!(mm.peak.as_deref(), Some("matrix_bf16"));
    let roof = 2.0 * 2.0 * 1024f64.powi(3) / 989.4e12 * 1e6;
    assert!((mm.roofline_time_us.unwrap() - roof).abs() < 1e-3);
    assert!((mm.roofline_pct.unwrap() - 100.0 * roof / 21.0).abs() < 1e-2);
    let add = &t.rows[1];
    assert_eq!((add.model.as_deref(), add.no_model.as_deref()), (None, Some("no model for aten::add")));
    assert_eq!(add.kernel_time_us, 2.0);
    assert_eq!(t.unattributed.events, 1);
    assert_eq!(t.unattributed.kernels[0].name, "graph_kernel");
    assert_eq!(t.coverage.gpu_time_us, 28.0);
    assert_eq!(t.coverage.modelled_us, 21.0);
    assert_eq!(t.coverage.unattributed_us, 5.0);
}

#[test]
fn an_op_whose_modelled_child_does_the_work_is_not_counted_twice() {
    // aten::linear calls aten::mm (nested on the same thread); the GEMM kernel belongs to
    // mm, a small helper kernel to linear itself.
    let text = r#"{"traceEvents":[
          {"ph":"X","cat":"cpu_op","name":"aten::linear","pid":1,"tid":1,"ts":0,"dur":30,"args":{"External id":1,"Input Dims":[[64,64],[64,64]],"Input type":["float","float"]}},
          {"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":5,"dur":10,"args":{"External id":2,"Input Dims":[[64,64],[64,64]],"Input type":["float","float"]}},
          {"ph":"X","cat":"kernel","name":"fill","pid":0,"tid":7,"ts":100,"dur":1,"args":{"External id":1}},
          {"ph":"X","cat":"kernel","name":"gemm","pid":0,"tid":7,"ts":102,"dur":20,"args":{"External id":2}}
        ]}"#;
    let t = op_table(&ClassifiedTrace::new(&read_trace(text.as_bytes()).unwrap()), None, &mm_cost, &NoCallCosts, None);
    let row = |op: &str| t.rows.iter().find(|r| r.op == op).unwrap();
    assert_eq!(row("aten::mm").model.as_deref(), Some("GEMM"));
    assert_eq!(row("aten::linear").model, None);
    assert_eq!(row("aten::linear").no_model.as_deref(), Some("its work is counted at aten::mm, which it calls"));
    assert_eq!(row("aten::linear").kernel_time_us, 1.0);
}

proptest::proptest! {
    /// Every GPU event is counted once: in its op's row or as unattributed. With the events
    /// of a call back to back (never overlapping), the rows and the unattributed time add up
    /// to the sum of all durations, whatever the ops, ids and shapes.
    #[test]
    fn rows_plus_unattributed_are_the_gpu_time(
        ops in proptest::collection::vec((0usize..3, 0u32..3), 1..12),
        events in proptest::collection::vec((0u64..15, 1u32..50, proptest::bool::ANY), 0..40),
    ) {
        let names = ["aten::mm", "aten::add", "triton_poi_fused_0"];
        let mut text = String::from("{\"traceEvents\":[");
        for (i, (name, dims)) in ops.iter().enumerate() {
            text += &format!(
                r#"{{"ph":"X","cat":"cpu_op","name":"{}","pid":1,"tid":1,"ts":{},"dur":5,"args":{{"External id":{},"Input Dims":[[{d},{d}],[{d},{d}]]}}}},"#,
                names[*name], i * 10, i + 1, d = dims * 7 + 1
            );
        }
        // Events one after another on the GPU timeline; ids past the ops have no op.
        let mut t = 1000.0;
        let mut total = 0.0;
        for (ext, dur, memset) in &events {
            let cat = if *memset { "gpu_memset" } else { "kernel" };
            text += &format!(r#"{{"ph":"X","cat":"{cat}","name":"k{ext}","pid":0,"tid":7,"ts":{t},"dur":{dur},"args":{{"External id":{ext}}}}},"#);
            t += *dur as f64 + 1.0;
            total += *dur as f64;
        }
        text.pop();
        text += "]}";
        let trace = read_trace(text.as_bytes()).unwrap();
        let table = op_table(&ClassifiedTrace::new(&trace), Some(&preset("h100").unwrap()), &mm_cost, &NoCallCosts, None);
        let rows: f64 = table.rows.iter().map(|r| r.kernel_time_us).sum();
        proptest::prop_assert!((rows + table.unattributed.time_us - total).abs() < 1e-6);
        proptest::prop_assert!((table.coverage.gpu_time_us - total).abs() < 1e-6);
        let calls: u64 = table.rows.iter().map(|r| r.calls).sum();
        proptest::prop_assert!(calls as usize <= ops.len());
    }
}

#[test]
fn ops_without_shapes_take_their_linked_execution_trace_nodes_and_recorded_ones_keep_theirs() {
    use crate::exec_trace::{link, parse_exec_trace};
    // mm 1 and 2 recorded no shapes, mm 3 did; the ET has nodes for 1 and 3 (rf_id = External id).
    let text = r#"{"traceEvents":[
          {"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":0,"dur":10,"args":{"External id":1}},
          {"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":20,"dur":10,"args":{"External id":2}},
          {"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":40,"dur":10,"args":{"External id":3,"Input Dims":[[8,8],[8,8]],"Input type":["float","float"]}},
          {"ph":"X","cat":"kernel","name":"gemm","pid":0,"tid":7,"ts":100,"dur":10,"args":{"External id":1}},
          {"ph":"X","cat":"kernel","name":"gemm","pid":0,"tid":7,"ts":120,"dur":10,"args":{"External id":2}},
          {"ph":"X","cat":"kernel","name":"gemm","pid":0,"tid":7,"ts":140,"dur":10,"args":{"External id":3}}
        ]}"#;
    let trace = read_trace(text.as_bytes()).unwrap();
    let node = |id: u64, rf: u64, m: u64| {
        format!(
            r#"{{"name": "aten::mm", "id": {id}, "rf_id": {rf}, "parent": 1,
                   "inputs": [[1, 1, 0, {e}, 4, "cuda:0"], [2, 2, 0, {e}, 4, "cuda:0"]],
                   "input_shapes": [[{m}, {m}], [{m}, {m}]], "input_types": ["Tensor(float)", "Tensor(float)"],
                   "outputs": [], "output_shapes": [], "output_types": []}}"#,
            e = m * m
        )
    };
    let et_text = format!(r#"{{"schema": "1.0.1", "pid": 1, "nodes": [{}, {}]}}"#, node(10, 1, 64), node(11, 3, 32));
    let et = parse_exec_trace(&et_text, "et.json").unwrap();
    let l = link(&trace, &et);
    assert_eq!(l.linked_ops, 2);
    let t = op_table(&ClassifiedTrace::new(&trace), None, &mm_cost, &NoCallCosts, Some((&et, &l)));
    let row = |dims: serde_json::Value| t.rows.iter().find(|r| r.input_dims == dims).unwrap();
    let from_et = row(serde_json::json!([[64, 64], [64, 64]]));
    assert_eq!((from_et.shapes_from, from_et.calls), (ShapesFrom::ExecutionTrace, 1));
    assert_eq!(from_et.input_types, serde_json::json!(["float", "float"]));
    assert_eq!(from_et.flops_per_call, Some(2 * 64 * 64 * 64));
    // Its own recorded shapes win over the node's [32, 32].
    let recorded = row(serde_json::json!([[8, 8], [8, 8]]));
    assert_eq!((recorded.shapes_from, recorded.flops_per_call), (ShapesFrom::Trace, Some(2 * 8 * 8 * 8)));
    // No node, no shapes: as without the execution trace.
    let none = row(serde_json::Value::Null);
    assert_eq!((none.shapes_from, none.no_model.as_deref()), (ShapesFrom::Trace, Some("no dims")));
    assert_eq!(t.rows.len(), 3);
    assert!(t.shapes_recorded, "mm 3 recorded its shapes");
}

#[test]
fn without_a_chip_rates_stay_and_roofline_figures_are_absent() {
    let t = op_table(&ClassifiedTrace::new(&trace()), None, &mm_cost, &NoCallCosts, None);
    assert!(t.rows[0].tflops_per_s.is_some());
    assert_eq!((t.rows[0].roofline_pct, t.rows[0].bound), (None, None));
    // Picking a chip afterwards gives the figures a chip given up front gives.
    let chip = preset("mi300x").unwrap();
    let mut rows = t.rows.clone();
    rows.iter_mut().for_each(|r| set_roofline(r, Some(&chip)));
    assert_eq!(rows, op_table(&ClassifiedTrace::new(&trace()), Some(&chip), &mm_cost, &NoCallCosts, None).rows);
}

/// Costs from beyond the shapes: calls of one op and shapes in different classes are rows of
/// their own, each priced by its first call; other calls keep their formula's answer.
#[test]
fn calls_priced_beyond_their_shapes_are_rows_by_class() {
    /// Each `aten::add` call (op 2) priced at 7 FLOPs; the two mm calls (ops 0 and 1) in
    /// classes of their own but priced by the formula.
    struct ByCall;
    impl CallCosts for ByCall {
        fn class(&self, op: usize) -> u32 {
            op as u32
        }
        fn cost(&self, op: usize) -> Option<Result<Cost, String>> {
            let seven = Cost {
                model: "stand-in",
                flops: 7,
                bytes: 7,
                peak: PeakKey::new(Unit::Vector, Precision::Fp32),
                estimate: false,
            };
            (op == 2).then_some(Ok(seven))
        }
    }
    let t = op_table(&ClassifiedTrace::new(&trace()), None, &mm_cost, &ByCall, None);
    let rows: Vec<(&str, u64, Option<u64>)> =
        t.rows.iter().map(|r| (r.op.as_str(), r.calls, r.flops_per_call)).collect();
    let mm = Some(2 * 1024 * 1024 * 1024);
    assert_eq!(rows, [("aten::mm", 1, mm), ("aten::mm", 1, mm), ("aten::add", 1, Some(7))]);
}
