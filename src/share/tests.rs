//! Tests of `share`.

use super::trim::trim_comparison_lists;
use super::*;
use fusion::random::random_graph;
use fusion::transformer::TransformerConfig;
use fusion::{analyse, parse_graph};
use hardware::ChipChoice;
use workload::ModelSpec;

const EXAMPLE: &str = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/data/graphs/worked_example.json"));

fn trace(rel: &str) -> trace::Trace {
    let path = format!("{}/tests/data/traces/{rel}", concat!(env!("CARGO_MANIFEST_DIR"), "/../.."));
    formats::read_trace(&std::fs::read(path).unwrap()).unwrap()
}

#[test]
fn trace_comparison_round_trips_trimmed_and_small() {
    use analysis::{compare, Input};
    let (n, a) =
        (trace("nvidia/hf_qwen1.5-0.5b_eager_h100.json.gz"), trace("amd/hf_qwen1.5-0.5b_eager_mi300x.json.gz"));
    let c = compare(Input::new(&n, Some("n.json.gz")), Input::new(&a, Some("a.json.gz")));
    let (small, trimmed) = trim_comparison(&c);
    assert!(trimmed);
    // Totals stay whole; only kernel lists are shortened.
    assert_eq!(small.platforms, c.platforms);
    // Fusion differences stay whole but for their kernel names, shortened as tables show them.
    let figures = |c: &analysis::Comparison| {
        c.fusion_differences
            .iter()
            .map(|d| (d.fused_side.clone(), d.count, d.time_us.clone(), d.confidence, d.evidence.clone()))
            .collect::<Vec<_>>()
    };
    assert_eq!(figures(&small), figures(&c));
    // The aligned layers stay, their kernel names shortened as the tables show them.
    assert_eq!(small.layer_alignment.len(), c.layer_alignment.len());
    for (s, f) in small.op_mapping.iter().zip(&c.op_mapping) {
        for (k, side) in &s.sides {
            assert_eq!(side.stats.time_us, f.sides[k].stats.time_us);
            assert!(side.stats.kernels.len() <= SHARED_KERNELS_PER_ROW);
        }
    }
    let view = SharedView::TraceComparison {
        files: ("n.json.gz".into(), "a.json.gz".into()),
        comparison: small,
        trimmed,
        gap: None,
        fusion: None,
        overview: None,
    };
    let link = encode(&view.clone().into());
    assert!(link.len() < 8 * 1024, "{} bytes", link.len());
    assert_eq!(decode(&link).unwrap().view, view);
}

#[test]
fn trace_summary_round_trips() {
    let t = trace("amd/torch_compile_triton_mi300x.json.gz");
    let s = analysis::summarize(&analysis::summary::ClassifiedTrace::new(&t), Some("t.json.gz"));
    let (small, trimmed) = trim_summary(&s);
    assert!(!trimmed, "a 12-kernel trace keeps every kernel");
    assert_eq!(small, s);
    let view =
        SharedView::TraceSummary { file_name: "t.json.gz".into(), summary: small, trimmed, time: None, overview: None };
    let link = encode(&view.clone().into());
    assert!(link.len() < 4 * 1024, "{} bytes", link.len());
    assert_eq!(decode(&link).unwrap().view, view);
}

#[test]
fn transformer_round_trip_is_short() {
    let view = SharedView::Transformer {
        config: TransformerConfig { seq_len: 1024, hidden_dim: 2048, num_heads: 16, dtype_bytes: 4 },
    };
    let link = encode(&view.clone().into());
    assert!(link.starts_with("s=2."), "{link}");
    assert!(link.len() < 200, "{} bytes: {link}", link.len());
    assert_eq!(decode(&link).unwrap(), view.clone().into());
    assert_eq!(decode(&format!("#{link}")).unwrap().view, view);
}

#[test]
fn graph_round_trip_gives_the_same_analysis() {
    let graph = parse_graph(EXAMPLE).unwrap();
    let state = SharedState {
        view: SharedView::of_graph("wörked example.json", &graph),
        selected_op: Some("relu".to_string()),
        chip: Some(ChipChoice::Preset("mi300x".into())),
        tab: Some("fusion".to_string()),
    };
    let back = decode(&encode(&state)).unwrap();
    assert_eq!(back.selected_op.as_deref(), Some("relu"));
    assert_eq!(back.tab.as_deref(), Some("fusion"), "the sender's open view");
    assert_eq!(back.chip, Some(ChipChoice::Preset("mi300x".into())));
    let SharedView::Graph { file_name, graph: file } = back.view else { panic!("not a graph") };
    assert_eq!(file_name, "wörked example.json");
    let back = graph_of(&file).unwrap();
    assert_eq!(analyse(&back).report(&back), analyse(&graph).report(&graph));
}

#[test]
fn op_trace_links_carry_the_text_and_stay_small() {
    let text =
        include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/data/optrace/gpt2_block_tp_rank1.optrace"));
    let view = SharedView::OpTrace { file_name: "gpt2_block_tp_rank1.optrace".into(), text: text.into() };
    let link = encode(&view.clone().into());
    assert!(link.len() < 8 * 1024, "{} bytes for {} bytes of text", link.len(), text.len());
    assert_eq!(decode(&link).unwrap().view, view);
}

#[test]
fn simulator_table_links_round_trip_and_stay_small() {
    use simcsv::{infer_setup, parse_sim_csv};
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/data/ops-csv");
    let mut files: Vec<_> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    files.retain(|p| p.extension().is_some_and(|e| e == "csv"));
    assert!(files.len() >= 5, "{files:?}");
    for path in files {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(&path).unwrap();
        let inferred = infer_setup(&name, &parse_sim_csv(&text).unwrap());
        let view = SharedView::SimTable { file_name: name.clone(), text, setup: inferred.setup, notes: inferred.notes };
        let link = encode(&view.clone().into());
        assert!(link.len() < 8 * 1024, "{name}: {} bytes", link.len());
        assert_eq!(decode(&link).unwrap().view, view, "{name}");
    }
}

#[test]
fn a_500_op_graph_fits_a_typical_link() {
    let graph = random_graph(500, 7);
    let link = encode(&SharedView::of_graph("random.json", &graph).into());
    // Typical links must stay under 8 KB so that they paste into chat and review tools; a
    // 500-op graph with random shapes is larger than typical, so this bounds it loosely and
    // checks it round-trips.
    assert!(link.len() < 16 * 1024, "{} bytes", link.len());
    let SharedView::Graph { graph: file, .. } = decode(&link).unwrap().view else { panic!("not a graph") };
    assert_eq!(graph_of(&file).unwrap().len(), 500);
}

#[test]
fn bad_links_say_why() {
    let good = encode(&SharedView::Transformer { config: TransformerConfig::default() }.into());
    assert_eq!(decode("#view=3"), Err(ShareError::NotAShareLink));
    assert_eq!(decode("s=x.abc"), Err(ShareError::BadVersion("x".into())));
    assert_eq!(decode(&good.replacen("s=2.", "s=3.", 1)), Err(ShareError::Newer(3)));
    assert_eq!(decode(&good.replacen("s=2.", "s=0.", 1)), Err(ShareError::Unknown(0)));
    assert!(matches!(decode("s=2.a*b"), Err(ShareError::Base64(_))));
    assert!(matches!(decode(&good[..good.len() - 6]), Err(ShareError::Deflate(_) | ShareError::Base64(_))));
    let not_a_state = {
        let mut enc = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::fast());
        enc.write_all(br#"{"v": 2, "state": {"view": "graph", "file_name": 7}}"#).unwrap();
        format!("s=2.{}", URL_SAFE_NO_PAD.encode(enc.finish().unwrap()))
    };
    let e = decode(&not_a_state).unwrap_err();
    assert!(matches!(e, ShareError::Json { version: 2, .. }), "{e}");
    assert_eq!(
        ShareError::Newer(3).to_string(),
        "the link was made by a newer version of fusionscope (format 3); this page reads up to 2: open it with the newer version"
    );
}

#[test]
fn a_bomb_is_refused() {
    let mut enc = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::best());
    enc.write_all(&vec![b' '; SHARE_STATE_BYTES + 10]).unwrap();
    let link = format!("s=1.{}", URL_SAFE_NO_PAD.encode(enc.finish().unwrap()));
    assert_eq!(decode(&link), Err(ShareError::TooLarge));
}

fn deflated(json: &str, version: u32) -> String {
    let mut enc = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::fast());
    enc.write_all(json.as_bytes()).unwrap();
    format!("s={version}.{}", URL_SAFE_NO_PAD.encode(enc.finish().unwrap()))
}

#[test]
fn an_unknown_view_is_from_a_newer_version() {
    let e = decode(&deflated(r#"{"v": 2, "state": {"view": "teapot"}}"#, 2)).unwrap_err();
    assert_eq!(e, ShareError::NewerView { version: 2, view: "teapot".into() });
    let text = e.to_string();
    assert!(text.contains("made by a newer version of fusionscope (format 2"), "{text}");
    assert!(text.contains("this page reads up to 2"), "{text}");
    // A format-1 link cannot hold the model view: a page of format 1 would not know it.
    let spec = r#"{"model": {"preset": "llama3-8b"}, "phase": "prefill"}"#;
    let e = decode(&deflated(&format!(r#"{{"v": 1, "state": {{"view": "model", "spec": {spec}}}}}"#), 1));
    assert_eq!(e, Err(ShareError::NewerView { version: 1, view: "model".into() }));
}

/// Links written in format 1 still open, to the same views, so that links already shared
/// keep working.
#[test]
fn format_1_links_still_open() {
    let fixture = |name: &str| {
        let path = format!("{}/tests/data/share/{name}", concat!(env!("CARGO_MANIFEST_DIR"), "/../.."));
        std::fs::read_to_string(path).unwrap().trim().to_string()
    };
    let t = decode(&fixture("v1-transformer.txt")).unwrap();
    assert!(fixture("v1-transformer.txt").starts_with("s=1."));
    assert_eq!(
        t.view,
        SharedView::Transformer {
            config: TransformerConfig { seq_len: 1024, hidden_dim: 2048, num_heads: 16, dtype_bytes: 2 }
        }
    );
    assert_eq!(t.chip, None);
    let g = decode(&fixture("v1-graph.txt")).unwrap();
    assert_eq!(g.selected_op.as_deref(), Some("relu"));
    let SharedView::Graph { graph, .. } = g.view else { panic!("not a graph") };
    let example = parse_graph(EXAMPLE).unwrap();
    let back = graph_of(&graph).unwrap();
    assert_eq!(analyse(&back).report(&back), analyse(&example).report(&example));
    let SharedView::TraceSummary { summary, .. } = decode(&fixture("v1-trace-summary.txt")).unwrap().view else {
        panic!("not a summary")
    };
    assert!(!summary.categories.is_empty());
    let SharedView::TraceComparison { comparison, files, .. } =
        decode(&fixture("v1-trace-comparison.txt")).unwrap().view
    else {
        panic!("not a comparison")
    };
    assert_eq!(files.0, "hf_bert-small_eager_h100.json.gz");
    assert!(!comparison.op_mapping.is_empty());
}

/// Read straight into the types: the tag may stand after the fields (hand-written JSON),
/// unknown keys are skipped, and a duplicate or mistyped field is an error naming it.
#[test]
fn states_are_read_whatever_the_key_order() {
    let config = TransformerConfig { seq_len: 8, hidden_dim: 16, num_heads: 2, dtype_bytes: 2 };
    let json = r#"{"selected_op": "gelu", "x": [1, {"y": 2}], "state": {"config": {"seq_len": 8, "hidden_dim": 16,
        "num_heads": 2, "dtype_bytes": 2}, "note": "hi", "view": "transformer"}, "v": 2}"#;
    let s = decode(&deflated(json, 2)).unwrap();
    assert_eq!((s.view, s.selected_op.as_deref()), (SharedView::Transformer { config }, Some("gelu")));
    let e = decode(&deflated(r#"{"v": 2, "v": 2, "state": {"view": "transformer"}}"#, 2)).unwrap_err();
    assert!(e.to_string().contains("duplicate field `v`"), "{e}");
    let e = decode(&deflated(r#"{"v": 2, "state": {"view": "transformer"}}"#, 2)).unwrap_err();
    assert!(e.to_string().contains("missing field `config`"), "{e}");
    let e = decode(&deflated(r#"{"v": 2, "state": {"config": 1}}"#, 2)).unwrap_err();
    assert!(e.to_string().contains("the state has no `view`"), "{e}");
}

/// Nesting cannot exhaust the stack: values nobody reads are skipped without recursion
/// (serde_json skips them with a loop), and where a view's field stands the first wrong type
/// stops the reading a few levels down.
#[test]
fn deep_nesting_is_skipped_or_refused() {
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let config = r#"{"seq_len": 8, "hidden_dim": 16, "num_heads": 2, "dtype_bytes": 2}"#;
    let skipped = format!(
        r#"{{"v": 2, "extra": {deep}, "state": {{"view": "transformer", "extra": {deep}, "config": {config}}}}}"#
    );
    assert!(decode(&deflated(&skipped, 2)).is_ok());
    let typed = format!(r#"{{"v": 2, "state": {{"view": "graph", "file_name": "g", "graph": {deep}}}}}"#);
    let e = decode(&deflated(&typed, 2)).unwrap_err();
    assert!(e.to_string().contains("invalid type: sequence"), "{e}");
}

/// What a page refuses to put in a link is refused when a (hand-made) link holds it, with
/// the limit named.
#[test]
fn per_view_limits_are_enforced_on_opening() {
    use limits::{SHARED_GRAPH_OPS, SHARED_NAME_CHARS, SHARED_OPTRACE_BYTES};
    let text = "x".repeat(SHARED_OPTRACE_BYTES + 1);
    let link = encode(&SharedView::OpTrace { file_name: "big.optrace".into(), text }.into());
    assert_eq!(
        decode(&link).unwrap_err().to_string(),
        "the link's op trace text has 65,537 bytes; a link holds at most 65,536"
    );
    let ops: Vec<String> = (0..=SHARED_GRAPH_OPS)
        .map(|i| {
            format!(
                r#"{{"name": "o{i}", "op_type": "elementwise", "output": "t{i}", "shape": [], "bytes_per_element": 1}}"#
            )
        })
        .collect();
    let json = format!(
        r#"{{"v": 2, "state": {{"view": "graph", "file_name": "g.json", "graph": {{"ops": [{}]}}}}}}"#,
        ops.join(",")
    );
    assert_eq!(
        decode(&deflated(&json, 2)).unwrap_err().to_string(),
        "the link's graph has 5,001 ops; a link holds at most 5,000"
    );
    let long = "n".repeat(SHARED_NAME_CHARS + 1);
    let state = SharedState {
        selected_op: Some(long),
        ..SharedView::Transformer { config: TransformerConfig::default() }.into()
    };
    let e = decode(&encode(&state)).unwrap_err().to_string();
    assert!(
        e.starts_with("the link's selected op \"nnnn")
            && e.ends_with("has 16,385 characters; a link holds at most 16,384"),
        "{e}"
    );
    // A summary with more kernels in a category than trimming keeps (as a hand-made link
    // could hold).
    let t = trace("nvidia/hf_bert-small_eager_h100.json.gz");
    let mut summary = analysis::summarize(&analysis::summary::ClassifiedTrace::new(&t), Some("h100"));
    let gemm = &mut summary.categories[0].trace.kernels;
    *gemm = vec![gemm[0].clone(); SHARED_KERNELS_PER_CATEGORY + 1];
    let link = encode(
        &SharedView::TraceSummary { file_name: "h100".into(), summary, trimmed: false, time: None, overview: None }
            .into(),
    );
    let e = decode(&link).unwrap_err().to_string();
    assert_eq!(e, "the link's kernel list of category gemm has 9 kernels; a link holds at most 8");
}

#[test]
fn a_custom_chip_outside_the_limits_is_refused_naming_the_field() {
    let chip = |peak: &str| {
        format!(
            r#"{{"v": 2, "state": {{"view": "transformer", "config": {{"seq_len": 8, "hidden_dim": 16, "num_heads": 2, "dtype_bytes": 2}}}},
               "chip": {{"custom": {{"name": "evil", "peak_flops": {peak}, "hbm_bandwidth": 1e12, "launch_overhead_us": 1, "source": "link"}}}}}}"#
        )
    };
    assert!(decode(&deflated(&chip("1e15"), 2)).is_ok());
    for peak in ["1e308", "1e-320", "-1", "0"] {
        let e = decode(&deflated(&chip(peak), 2)).unwrap_err().to_string();
        assert!(e.contains("chip field `peak_flops` is"), "{peak}: {e}");
        assert!(e.contains("outside the accepted range 1e6 to 1e21 FLOP/s"), "{peak}: {e}");
    }
}

#[test]
fn model_view_is_tiny_and_round_trips() {
    use workload::{ModelChoice, Phase, WorkloadParams};
    let state = SharedState {
        view: SharedView::Model {
            spec: ModelSpec {
                model: ModelChoice::Preset("llama3-8b".into()),
                phase: Phase::Decode,
                params: WorkloadParams { batch: Some(8), tp: Some(2), ..WorkloadParams::default() },
            },
        },
        selected_op: None,
        chip: Some(ChipChoice::Preset("h100".into())),
        tab: None,
    };
    let link = encode(&state);
    assert!(link.len() < 200, "{} bytes: {link}", link.len());
    assert_eq!(decode(&link).unwrap(), state);
    // A chip from a file travels by its figures.
    let chip = hardware::Chip {
        name: "my accelerator".into(),
        peak_flops: 5e14,
        hbm_bandwidth: 2e12,
        launch_overhead_us: 1.5,
        source: "mine.json".into(),
        peaks: Default::default(),
    };
    let state = SharedState { chip: Some(ChipChoice::Custom(chip)), ..state };
    assert_eq!(decode(&encode(&state)).unwrap(), state);
}

/// Links made from the shared real traces, ranks and execution traces: sizes and round trips.
mod real_traces;
