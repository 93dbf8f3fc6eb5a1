//! Single-trace summaries and AMD-vs-NVIDIA comparisons on the real traces, with the real
//! classifier: mapping tables an engineer would trust, and JSON snapshots.

use crate::common::trace_bytes;
use fusionscope::analysis::compare::Method;
use fusionscope::analysis::summary::ClassifiedTrace;
use fusionscope::analysis::{compare, summarize, Category, Comparison, Input};
use fusionscope::formats::read_trace;
use fusionscope::trace::Trace;

fn load(path: &str) -> Trace {
    read_trace(&trace_bytes(path)).unwrap()
}

fn file(path: &str) -> &str {
    path.rsplit('/').next().unwrap()
}

fn pair(a: &str, b: &str) -> Comparison {
    let (ta, tb) = (load(a), load(b));
    compare(Input::new(&ta, Some(file(a))), Input::new(&tb, Some(file(b))))
}

const QWEN_NV: &str = "nvidia/hf_qwen1.5-0.5b_eager_h100.json.gz";
const QWEN_AMD: &str = "amd/hf_qwen1.5-0.5b_eager_mi300x.json.gz";
const BERT_NV: &str = "nvidia/hf_bert-small_eager_h100.json.gz";
const BERT_AMD: &str = "amd/hf_bert-small_eager_mi300x.json.gz";

fn row<'c>(c: &'c Comparison, op: &str) -> &'c fusionscope::analysis::compare::OpRow {
    c.op_mapping.iter().find(|r| r.op == op && r.method == Method::OpAnchored).unwrap_or_else(|| panic!("no row {op}"))
}

#[test]
fn qwen_pair_maps_gemms_attention_and_norm_pieces() {
    let c = pair(QWEN_NV, QWEN_AMD);
    assert_eq!(c.platforms.iter().map(|p| p.key.as_str()).collect::<Vec<_>>(), ["amd", "nvidia"]);
    assert_eq!((c.platforms[0].kernels, c.platforms[1].kernels), (1516, 1465));
    for op in ["aten::addmm", "aten::mm"] {
        let r = row(&c, op);
        let (amd, nv) = (&r.sides["amd"], &r.sides["nvidia"]);
        assert_eq!(amd.calls, nv.calls, "{op}: same number of calls");
        assert!(
            amd.stats.kernels.iter().all(|k| k.name.starts_with("Cijk_") && k.category == Category::Gemm),
            "{op}: {:?}",
            amd.stats.kernels
        );
        assert!(
            nv.stats.kernels.iter().all(|k| k.category == Category::Gemm
                && (k.name.starts_with("sm90_xmma_gemm") || k.name.starts_with("nvjet") || k.name.contains("cutlass"))),
            "{op}: {:?}",
            nv.stats.kernels
        );
    }
    let attn = row(&c, "aten::_flash_attention_forward");
    for side in ["amd", "nvidia"] {
        assert_eq!(attn.sides[side].calls, 24);
        assert!(attn.sides[side].stats.kernels.iter().all(|k| k.category == Category::Attention));
    }
    // Eager RMSNorm is pow, mean, rsqrt, mul: each piece lines up call for call.
    for op in ["aten::pow", "aten::mean", "aten::rsqrt", "aten::mul", "aten::add", "aten::silu"] {
        let r = row(&c, op);
        assert_eq!(r.sides["amd"].calls, r.sides["nvidia"].calls, "{op}");
        assert!(r.sides["amd"].calls > 0, "{op}");
    }
    // Kernels whose launch fell outside the CPU window still map, by sequence.
    assert!(c.op_mapping.iter().any(|r| r.method == Method::Sequence && r.op.starts_with("gemm")));
    // Every GEMM on both sides is a GEMM.
    let gemm = c.categories.iter().find(|r| r.category == Category::Gemm).unwrap();
    assert_eq!((gemm.sides["amd"].count, gemm.sides["nvidia"].count), (243, 242));
    // All kernels are accounted for in the mapping.
    for (key, total) in [("amd", 1516), ("nvidia", 1465)] {
        assert_eq!(c.op_mapping.iter().map(|r| r.sides[key].stats.count).sum::<u64>(), total, "{key}");
    }
}

#[test]
fn order_of_the_files_does_not_matter() {
    let ab = serde_json::to_value(pair(QWEN_NV, QWEN_AMD)).unwrap();
    let ba = serde_json::to_value(pair(QWEN_AMD, QWEN_NV)).unwrap();
    assert_eq!(ab, ba);
}

#[test]
fn same_vendor_pairs_are_keyed_a_b_with_file_names() {
    let c = pair(QWEN_AMD, BERT_AMD);
    assert_eq!(
        c.platforms.iter().map(|p| (p.key.as_str(), p.file.as_deref().unwrap())).collect::<Vec<_>>(),
        [("a", "hf_qwen1.5-0.5b_eager_mi300x.json.gz"), ("b", "hf_bert-small_eager_mi300x.json.gz")]
    );
    assert_eq!(c.time_ratio, "a / b");
    let same = pair(QWEN_AMD, QWEN_AMD);
    assert!(same.fusion_differences.is_empty());
    assert!(same.categories.iter().all(|r| r.time_ratio == Some(1.0)));
    assert!(same.op_mapping.iter().all(|r| r.sides["a"].stats.count == r.sides["b"].stats.count));
}

#[test]
fn hip_graph_replay_maps_by_sequence() {
    let c = pair("amd/sglang_qwen3-8b_decode_hipgraph_mi300x.json.gz", "nvidia/tracelens_eager_b200.json.gz");
    assert!(c.op_mapping.iter().all(|r| r.method == Method::Sequence));
    let gemm = c.op_mapping.iter().find(|r| r.op == "gemm kernels without CPU op").unwrap();
    assert!(gemm.sides["amd"].stats.count > 100 && gemm.sides["nvidia"].stats.count > 100);
    assert!(gemm.sides["amd"].stats.kernels.iter().all(|k| k.category == Category::Gemm));
    assert_eq!(c.op_mapping.iter().map(|r| r.sides["amd"].stats.count).sum::<u64>(), 555);
}

#[test]
fn torch_compile_triton_kernels_are_fused_with_components() {
    let s = summarize(&ClassifiedTrace::new(&load("amd/torch_compile_triton_mi300x.json.gz")), None);
    let fused: Vec<(&str, &[Category])> =
        s.fused_kernels.iter().map(|k| (k.name.as_str(), k.components.as_slice())).collect();
    assert!(
        fused.contains(&("triton_red_fused_add_mean_mul_pow_rsqrt_0", &[Category::Elementwise, Category::Norm][..])),
        "{fused:?}"
    );
    assert!(
        fused.contains(&(
            "triton_poi_fused__unsafe_view_mul_silu_2",
            &[Category::Activation, Category::Elementwise][..]
        )),
        "{fused:?}"
    );
    assert!(s.fused_kernels.iter().all(|k| k.name.starts_with("triton_")));
}

#[test]
fn bert_pair_snapshot() {
    insta::assert_json_snapshot!("bert_pair_compare", pair(BERT_AMD, BERT_NV));
}

#[test]
fn qwen_pair_snapshot_categories_and_mapping() {
    let c = pair(QWEN_AMD, QWEN_NV);
    insta::assert_json_snapshot!("qwen_pair_categories", c.categories);
    insta::assert_json_snapshot!("qwen_pair_op_mapping", c.op_mapping);
    insta::assert_json_snapshot!("qwen_pair_fusion_differences", c.fusion_differences);
}

#[test]
fn trace_summary_snapshots() {
    for (name, path) in
        [("summary_torch_compile_mi300x", "amd/torch_compile_triton_mi300x.json.gz"), ("summary_bert_h100", BERT_NV)]
    {
        insta::assert_json_snapshot!(name, summarize(&ClassifiedTrace::new(&load(path)), Some(file(path))));
    }
}

/// Kernel names from the real traces: the H100 eager kernels of one op each, and the
/// MI300X torch.compile kernels.
fn kernel_of(t: &Trace, op: &str) -> String {
    let ops = t.kernel_ops();
    let k = t.kernels.iter().zip(&ops).find(|(_, o)| o.is_some_and(|i| t.name(t.cpu_ops[i].name) == op)).unwrap();
    t.name(k.0.name).to_string()
}

/// A trace of `layers` repetitions of `kernels`, each with its op (or none: a graph replay).
fn synthetic(vendor_key: &str, layers: usize, kernels: &[(String, Option<&str>)]) -> Trace {
    let mut events = Vec::new();
    let mut n = 0u64;
    for _ in 0..layers {
        for (name, op) in kernels {
            n += 1;
            let ts = n as f64 * 10.0;
            let mut args = serde_json::json!({"correlation": n});
            if let Some(op) = op {
                events.push(serde_json::json!({"ph": "X", "cat": "cpu_op", "name": op, "pid": 1, "tid": 1, "ts": ts, "dur": 5.0, "args": {"External id": n}}));
                args["External id"] = n.into();
            }
            events.push(serde_json::json!({"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": 7, "ts": ts + 1.0, "dur": 4.0, "args": args}));
        }
    }
    let doc = serde_json::json!({vendor_key: 1, "traceEvents": events});
    read_trace(doc.to_string().as_bytes()).unwrap()
}

#[test]
fn compiled_rmsnorm_is_a_fusion_difference_against_eager_kernels() {
    let eager = load(QWEN_NV);
    let compiled = load("amd/torch_compile_triton_mi300x.json.gz");
    let gemm_amd =
        compiled.kernels.iter().map(|k| compiled.name(k.name)).find(|n| n.starts_with("Cijk_")).unwrap().to_string();
    let fused = "triton_red_fused_add_mean_mul_pow_rsqrt_0".to_string();
    let nv_layer: Vec<(String, Option<&str>)> =
        ["aten::mm", "aten::add", "aten::pow", "aten::mean", "aten::rsqrt", "aten::mul"]
            .into_iter()
            .map(|op| (kernel_of(&eager, op), Some(op)))
            .collect();
    let nv = synthetic("cupti_version", 3, &nv_layer);
    // Graph replay on AMD: no ops, so the comparison aligns kernel sequences.
    let amd = synthetic("roctracer_version", 3, &[(gemm_amd, None), (fused.clone(), None)]);
    let c = compare(Input::new(&nv, None), Input::new(&amd, None));
    assert!(c.op_mapping.iter().all(|r| r.method == Method::Sequence));
    assert_eq!(c.fusion_differences.len(), 1, "{:#?}", c.fusion_differences);
    let d = &c.fusion_differences[0];
    assert_eq!((d.fused_platform.as_str(), d.fused_kernel.as_str(), d.count), ("AMD", fused.as_str(), 3));
    assert_eq!(d.components, [Category::Elementwise, Category::Norm]);
    // The eager side's add, pow, mean, rsqrt and mul kernels (distinct names) stand against it.
    let eager_names: Vec<&str> = nv_layer[1..].iter().map(|(n, _)| n.as_str()).collect();
    assert!(
        d.unfused_kernels.len() >= 3 && d.unfused_kernels.iter().all(|n| eager_names.contains(&n.as_str())),
        "{:?}",
        d.unfused_kernels
    );
    assert_eq!(d.time_us["amd"], 12.0);
    // The three repeats are layers on both sides: the layer alignment puts the eager kernels
    // against the fused one in one row, and its evidence replaces the whole-trace sequence's.
    assert!(d.evidence.starts_with("layer alignment") && d.confidence > 0.5, "{}", d.evidence);
    assert!(
        d.evidence.contains("elementwise + norm fused on amd: 1 kernel per layer vs 5 on nvidia"),
        "{}",
        d.evidence
    );
    assert_eq!(c.layer_alignment.len(), 1);
    assert_eq!(c.layer_alignment[0].rows.len(), 2, "{:#?}", c.layer_alignment[0].rows);
}

/// GPU time in `compare --json`: one figure per side wherever the output says it, and the gap
/// rows with the unattributed time and the overlap within op calls add up to it (each row is
/// rounded to the nanosecond, so to within half a nanosecond a row).
#[track_caller]
fn check_one_gpu_time(a: &str, b: &str) -> Vec<f64> {
    let v = crate::common::json(&[
        "compare",
        &crate::common::data(&format!("traces/{a}")),
        &crate::common::data(&format!("traces/{b}")),
        "--json",
    ]);
    let gap = &v["gap"];
    let rows = gap["rows"].as_array().unwrap();
    let mut overlaps = Vec::new();
    for p in v["platforms"].as_array().unwrap() {
        let key = p["key"].as_str().unwrap();
        let gpu = p["gpu_time_us"].as_f64().unwrap();
        // The definition is named, and every place gives the same figure.
        assert_eq!(p["gpu_time_definition"], "sum of kernel, memcpy and memset durations (overlaps counted twice)");
        assert_eq!(gap["headline"]["gpu_time_definition"], p["gpu_time_definition"]);
        assert_eq!(v["fusion"][key]["totals"]["gpu_time_definition"], p["gpu_time_definition"]);
        assert_eq!(gap["headline"]["gpu_time_us"][key].as_f64().unwrap(), gpu, "{key}");
        assert_eq!(v["fusion"][key]["totals"]["gpu_time_us"].as_f64().unwrap(), gpu, "{key}");
        // Kernels alone plus the copies.
        let parts = p["kernel_time_us"].as_f64().unwrap()
            + p["memcpy"]["time_us"].as_f64().unwrap()
            + p["memset"]["time_us"].as_f64().unwrap();
        assert!((parts - gpu).abs() < 0.002, "{key}: {parts} vs {gpu}");
        // The gap rows add up to the headline.
        let side_rows: Vec<f64> = rows.iter().filter_map(|r| r[key]["kernel_time_us"].as_f64()).collect();
        let overlap = gap["overlap_us"][key].as_f64().unwrap();
        let sum = side_rows.iter().sum::<f64>() + gap["unattributed_us"][key].as_f64().unwrap() + overlap;
        assert!((sum - gpu).abs() <= 0.0005 * (side_rows.len() + 2) as f64, "{key}: rows {sum} vs GPU time {gpu}");
        overlaps.push(overlap);
    }
    overlaps
}

/// The gap table's "(unattributed: no CPU op)" row carries the time no op launched, so that
/// each side's column sums to its GPU time; where every kernel has its op it would be zeros.
#[test]
fn the_gap_table_has_an_unattributed_row_only_where_some_time_is() {
    let text = |a: &str, b: &str| {
        let (code, out, err) = crate::common::run(&[
            "compare",
            &crate::common::data(&format!("traces/{a}")),
            &crate::common::data(&format!("traces/{b}")),
        ]);
        assert_eq!(code, 0, "{err}");
        out
    };
    let bert = text("nvidia/hf_bert-small_eager_h100.json.gz", "amd/hf_bert-small_eager_mi300x.json.gz");
    assert!(bert.contains("\nWhere the time goes") && !bert.contains("(unattributed"), "{bert}");
    let qwen = text("nvidia/hf_qwen1.5-0.5b_eager_h100.json.gz", "amd/hf_qwen1.5-0.5b_eager_mi300x.json.gz");
    let row = qwen.lines().find(|l| l.starts_with("(unattributed: no CPU op)")).unwrap_or_else(|| panic!("{qwen}"));
    // 13,318.864 µs on the MI300X side, 13,741.827 on the H100 side (`compare --json`).
    assert!(row.contains("13.32 ms") && row.contains("13.74 ms"), "{row}");
    // The coverage line of one trace says it too, and only where there is some.
    let coverage = |file: &str| {
        let (_, out, _) = crate::common::run(&["trace", &crate::common::data(&format!("traces/{file}"))]);
        out.lines().find(|l| l.starts_with("Models cover")).unwrap_or_else(|| panic!("{out}")).to_string()
    };
    let qwen = coverage("nvidia/hf_qwen1.5-0.5b_eager_h100.json.gz");
    assert!(qwen.contains("; unattributed (no CPU op) 13.74 ms in 509 events."), "{qwen}");
    let bert = coverage("nvidia/hf_bert-small_eager_h100.json.gz");
    assert!(!bert.contains("unattributed"), "{bert}");
}

/// The gap table's title counts the rows it shows, the unattributed one among them (the page
/// prints the count twice, in the title and under the table).
#[test]
fn the_gap_table_s_title_counts_every_row_it_shows() {
    use fusionscope::analysis::pipeline::{time_report, Choices};
    let times = |p: &str| time_report(&ClassifiedTrace::new(&load(p)), &Choices::default());
    let (nv, amd) =
        (times("nvidia/hf_qwen1.5-0.5b_eager_h100.json.gz"), times("amd/hf_qwen1.5-0.5b_eager_mi300x.json.gz"));
    let g = fusionscope::analysis::time::gap::gap(("amd", &amd.op_table()), ("nvidia", &nv.op_table()));
    let t = fusionscope::view::time::gap_table(&g, ["amd", "nvidia"]);
    assert_eq!(t.rows.len(), g.rows.len() + 1, "the op rows and the unattributed time");
    assert_eq!(t.title, format!("Where the time goes ({} rows)", t.rows.len()));
    assert_eq!(t.row_count(t.rows.len()), format!("{} rows.", t.rows.len()));
}

#[test]
fn the_gap_rows_add_up_to_the_one_gpu_time_of_the_headline_and_platform_line() {
    // Copies are 0.5 % of the H100 side's GPU time: kernels alone would miss them.
    let overlaps =
        check_one_gpu_time("nvidia/hf_qwen1.5-0.5b_eager_h100.json.gz", "amd/hf_qwen1.5-0.5b_eager_mi300x.json.gz");
    assert_eq!(overlaps, vec![0.0, 0.0]);
    // The B200 trace has op calls whose kernels overlap (two streams): the overlap closes the sum.
    let overlaps = check_one_gpu_time("nvidia/tracelens_eager_b200.json.gz", "nvidia/hf_bert-small_eager_h100.json.gz");
    assert!(overlaps.iter().any(|&o| o > 60.0), "{overlaps:?}");
}

#[test]
fn the_platform_line_gives_gpu_time_with_copies_and_the_kernels_own() {
    use fusionscope::view::platform_line;
    let path = "nvidia/hf_bert-small_eager_h100.json.gz";
    let s = summarize(&ClassifiedTrace::new(&load(path)), Some(file(path)));
    let p = &s.platforms[0];
    let line = platform_line(p);
    // 307.197 µs of kernels and one 2.24 µs memcpy.
    assert!(line.contains("60 kernels, GPU time 309.44 µs (kernels 307.20 µs, copies the rest); memcpy 1"), "{line}");
    // A share link from before kernel time was its own figure: GPU time was kernels alone.
    let mut old = p.clone();
    old.kernel_time_us = 0.0;
    assert!(!platform_line(&old).contains("(kernels"), "{}", platform_line(&old));
}

/// `fusionscope compare` runs the structure search once per side, for the side's own report,
/// and hands it to the comparison: the comparison is the same as when it searches itself, for
/// pairs in either order (a cross-vendor pair is swapped, and the searches with it) and with
/// either side searched beforehand.
#[test]
fn reusing_the_structure_searches_leaves_the_comparison_unchanged() {
    use fusionscope::analysis::compare::{compare, Input};
    use fusionscope::analysis::summary::ClassifiedTrace;
    const VLLM_FULL: &str = "amd/vllm_decode_graph_full_replay.json.gz";
    const VLLM_PIECEWISE: &str = "amd/vllm_prefilldecode_graph_piecewise_replay.json.gz";
    let mut aligned = 0;
    for (a, b) in [(QWEN_NV, QWEN_AMD), (QWEN_AMD, QWEN_NV), (BERT_NV, BERT_AMD), (VLLM_FULL, VLLM_PIECEWISE)] {
        let (ta, tb) = (load(a), load(b));
        let searched = |t: &Trace| ClassifiedTrace::new(t).into_search();
        let (fa, fb) = (searched(&ta), searched(&tb));
        let fresh = compare(Input::new(&ta, Some(file(a))), Input::new(&tb, Some(file(b))));
        // Each side handed its search, or searching itself.
        for (given_a, given_b) in [(true, true), (true, false), (false, true)] {
            let (mut sa, mut sb) = (ClassifiedTrace::new(&ta), ClassifiedTrace::new(&tb));
            if given_a {
                sa = sa.with_search(fa.as_ref());
            }
            if given_b {
                sb = sb.with_search(fb.as_ref());
            }
            let reused = compare(Input { side: sa, file: Some(file(a)) }, Input { side: sb, file: Some(file(b)) });
            assert_eq!(reused, fresh, "{a} vs {b}, searches handed: {given_a}, {given_b}");
        }
        aligned += usize::from(!fresh.layer_alignment.is_empty());
    }
    // The searches matter: at least one pair's layers are aligned with them.
    assert!(aligned >= 1, "no pair had its layers aligned");
}
