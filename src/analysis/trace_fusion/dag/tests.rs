use super::*;
use crate::summary::summarize;
use crate::trace_fusion::BuiltIn;
use formats::read_trace;
use trace::Trace;

fn read(path: &str) -> Trace {
    let bytes =
        std::fs::read(format!("{}/tests/data/traces/{path}", concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))).unwrap();
    read_trace(&bytes).unwrap()
}

fn options<'a>() -> FusionOptions<'a> {
    FusionOptions::rules_only(BuiltIn::Inductor.rules())
}

/// Kernel indices of the main stream that start inside `[start, end]` µs, in start order: a
/// step's kernels found from its report entry alone.
fn stream_kernels_between(trace: &Trace, device: i64, stream: i64, start: f64, end: f64) -> Vec<usize> {
    let mut ks: Vec<usize> = (0..trace.kernels.len())
        .filter(|&i| {
            let k = &trace.kernels[i];
            k.device == device && k.stream == stream && k.ts >= start - 1e-3 && k.ts <= end + 1e-3
        })
        .collect();
    ks.sort_by(|&a, &b| trace.kernels[a].ts.total_cmp(&trace.kernels[b].ts));
    ks
}

#[test]
fn the_boxes_of_each_qwen_layer_are_that_layers_kernels_in_launch_order() {
    let trace = read("amd/hf_qwen1.5-0.5b_eager_mi300x.json.gz");
    let side = ClassifiedTrace::new(&trace);
    let structure = summarize(&side, None).structure.unwrap();
    let (fusion, dag) = fusion_with_dag(&side, &options());
    let dag = dag.unwrap();
    // The report's first step, cut after its kernels before the layers into layers of the
    // phase's kernels per layer: the layers as the structure report states them.
    let step = &structure.steps[0];
    let phase = &structure.phases[step.phase];
    let kernels = stream_kernels_between(&trace, structure.device, structure.stream, step.start_us, step.end_us);
    assert_eq!(kernels.len(), step.kernels);
    assert_eq!((step.layers, phase.kernels_per_layer), (24, 43));
    assert_eq!(dag.windows.len(), step.layers);
    assert_eq!(dag.windows_left_out, 0);
    for (l, w) in dag.windows.iter().enumerate() {
        let start = phase.kernels_before_layers + l * phase.kernels_per_layer;
        let expected = &kernels[start..start + phase.kernels_per_layer];
        assert_eq!(w.label, format!("step 1, layer {} of 24", l + 1));
        assert_eq!((w.kernels, w.hidden, w.boxes.len()), (43, 0, 43));
        for (b, &k) in w.boxes.iter().zip(expected) {
            assert_eq!(b.kernel, trace.name(trace.kernels[k].name));
            assert_eq!(b.dur_us, crate::summary::round3(trace.kernels[k].dur));
            // The box's group is the group of that kernel in the report's groups.
            assert_eq!(fusion.groups[b.group].kernel, b.kernel);
        }
        // Edges join consecutive boxes and carry a tensor that the consumer's op reads.
        for e in &w.edges {
            assert_eq!(e.to, e.from + 1);
            assert!(e.bytes > 0 && !e.exact);
        }
    }
    // The layer opens with RMSNorm in eager ops, each handing its activations to the next:
    // copy → pow → mean → add → rsqrt → mul, six launches joined by five edges.
    let first = &dag.windows[0];
    let ops: Vec<&str> = first.boxes[..6].iter().map(|b| fusion.groups[b.group].ops[0].op.as_str()).collect();
    assert_eq!(ops, ["aten::copy_", "aten::pow", "aten::mean", "aten::add", "aten::rsqrt", "aten::mul"]);
    let from: Vec<usize> = first.edges.iter().take(5).map(|e| e.from).collect();
    assert_eq!(from, [0, 1, 2, 3, 4]);
    // pow reads the fp32 hidden states copy wrote; mean reads pow's output of the same size.
    assert_eq!(first.edges[0].bytes, first.edges[1].bytes);
}

#[test]
fn a_long_window_is_cut_at_the_box_cap_and_counts_the_rest() {
    let trace = read("amd/hf_qwen1.5-0.5b_eager_mi300x.json.gz");
    let side = ClassifiedTrace::new(&trace);
    let n = 3 * DAG_BOXES;
    let (fusion, w) = analyze_then(&side, &options(), |g, p| {
        let of_kernel = instance_of_kernel(&trace, g, 0..n);
        let span = Span { label: "test".to_string(), kernels: (0..n).collect(), phase: None, layer: None };
        window(g, p, &span, &of_kernel)
    });
    assert_eq!((w.kernels, w.boxes.len(), w.hidden), (n, DAG_BOXES, 2 * DAG_BOXES));
    assert!(w.edges.iter().all(|e| e.to < DAG_BOXES));
    for (b, k) in w.boxes.iter().zip(&trace.kernels) {
        assert_eq!(fusion.groups[b.group].kernel, trace.name(k.name));
    }
}

#[test]
fn the_json_form_round_trips_and_has_the_documented_keys() {
    #[derive(serde::Serialize, serde::Deserialize)]
    struct Holder {
        #[serde(default, with = "crate::trace_fusion::dag::as_value")]
        fusion_dag: Option<FusionDag>,
    }
    let trace = read("amd/hf_qwen1.5-0.5b_eager_mi300x.json.gz");
    let side = ClassifiedTrace::new(&trace);
    let (_, dag) = fusion_with_dag(&side, &options());
    let text = serde_json::to_string(&Holder { fusion_dag: dag.clone() }).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let w = &v["fusion_dag"]["windows"][1];
    assert_eq!(w["label"], "step 1, layer 2 of 24");
    assert_eq!((w["phase"].as_u64(), w["layer"].as_u64()), (Some(0), Some(1)));
    assert!(w["boxes"][0]["group"].is_u64() && w["edges"][0]["exact"].is_boolean());
    let back: Holder = serde_json::from_str(&text).unwrap();
    assert_eq!(back.fusion_dag, dag);
    // A malformed window is an error naming the key, not a panic.
    let bad = text.replacen("\"hidden\":0", "\"hidden\":\"x\"", 1);
    let err = serde_json::from_str::<Holder>(&bad).err().unwrap();
    assert!(err.to_string().contains("fusion_dag"), "{err}");
}

#[test]
fn the_windows_from_the_summarys_search_are_those_of_searching_again() {
    // A serving trace (graph replays: steps and layers found from the stream alone) and an eager
    // one (ProfilerStep annotations): the fusion handed the summary's search equals the fusion
    // that searches itself, and the summary from it equals the summary that searches.
    for path in ["amd/vllm_prefilldecode_graph_piecewise_replay.json.gz", "nvidia/hf_qwen1.5-0.5b_eager_h100.json.gz"] {
        let trace = read(path);
        let side = ClassifiedTrace::new(&trace);
        let found = side.structure_search().cloned();
        assert!(found.is_some(), "{path}");
        let handed = ClassifiedTrace::new(&trace).with_search(found.as_ref());
        let summary = summarize(&handed, None);
        assert_eq!(summary, summarize(&side, None), "{path}");
        let options = FusionOptions { structure: summary.structure.as_deref(), ..options() };
        let reused = fusion_with_dag(&handed, &options);
        let searched = fusion_with_dag(&ClassifiedTrace::new(&trace), &options);
        assert!(reused.1.as_ref().is_some_and(|d| !d.windows.is_empty()), "{path}");
        assert_eq!(reused, searched, "{path}");
    }
}
