use super::single::trace_overview;
use super::*;
use crate::compare::{compare, Input};
use crate::pipeline::{analyse, Choices};
use crate::summary::ClassifiedTrace;
use crate::summary::TraceSummary;
use crate::time::gap::gap;
use formats::read_trace;
use trace::Trace;

fn read(path: &str) -> Trace {
    let bytes =
        std::fs::read(format!("{}/tests/data/traces/{path}", concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))).unwrap();
    read_trace(&bytes).unwrap()
}

/// A trace's summary and time report with its fusion analysis, as `fusionscope trace` makes them.
fn report(trace: &Trace, file: &str) -> (TraceSummary, TraceTime) {
    analyse(&ClassifiedTrace::new(trace), Some(file), &Choices::default())
}

/// The H100 and MI300X traces of one Qwen model, compared as `fusionscope compare` does.
fn qwen_pair() -> Overview {
    let (nv, amd) =
        (read("nvidia/hf_qwen1.5-0.5b_eager_h100.json.gz"), read("amd/hf_qwen1.5-0.5b_eager_mi300x.json.gz"));
    let (files, traces) = (["h100.json.gz", "mi300x.json.gz"], [&nv, &amd]);
    let [a, b] = [0, 1].map(|i| Input::new(traces[i], Some(files[i])));
    let c = compare(a, b);
    assert_eq!(c.platforms[0].key, "amd", "the comparison puts AMD first");
    let (_, t_amd) = report(&amd, files[1]);
    let (_, t_nv) = report(&nv, files[0]);
    let g = gap(("amd", &t_amd.op_table()), ("nvidia", &t_nv.op_table()));
    pair_overview(&c, Some(&g), [SideFacts::of(&t_amd), SideFacts::of(&t_nv)])
}

#[test]
fn the_pair_verdict_names_both_devices_and_the_faster() {
    let o = qwen_pair();
    let names: Vec<&str> = o.verdict.sides.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["MI300X (AMD)", "H100 SXM (NVIDIA)"]);
    assert_eq!(
        o.verdict.text,
        "MI300X (AMD) takes 43.06 ms of GPU time, H100 SXM (NVIDIA) 45.65 ms: MI300X (AMD) is 1.06× faster (2.58 ms less)"
    );
    for s in &o.verdict.sides {
        let (span, busy, idle) = (s.span_us.unwrap(), s.busy_us.unwrap(), s.idle_us.unwrap());
        assert!((busy + idle - span).abs() < 0.01, "{s:?}");
        assert!(busy <= s.gpu_time_us + 0.1, "busy is a union of the GPU time's events: {s:?}");
    }
}

#[test]
fn pair_findings_are_ranked_by_time_and_capped_per_kind() {
    let o = qwen_pair();
    let f = &o.findings;
    assert!((5..=MAX_FINDINGS).contains(&f.len()), "{f:#?}");
    assert!(f.windows(2).all(|w| w[0].time_us >= w[1].time_us), "largest time first: {f:#?}");
    for kind in [FindingKind::OpGap, FindingKind::Opportunity, FindingKind::Idle, FindingKind::CategoryShift] {
        let n = f.iter().filter(|x| x.kind == kind).count();
        assert!(n >= 1 && n <= cap(kind), "{kind:?}: {n} in {f:#?}");
    }
    // The largest op gap is the MLP's up projection: 5.31 ms on MI300X vs 4.06 ms on H100.
    let gemm = f.iter().find(|x| x.kind == FindingKind::OpGap).unwrap();
    assert!(gemm.text.starts_with("aten::mm [[8944,1024],[1024,2816]] takes 5.31 ms on MI300X (AMD) and 4.06 ms on H100 SXM (NVIDIA): 1.25 ms more on MI300X (AMD), 1.31×; kernels hipBLASLt/Tensile: GEMM MT 128×224×64, MI 16×16×1, bias… vs cuBLAS: sm90 GEMM bf16bf16 tn, tile 128×128×64"), "{}", gemm.text);
    assert!((gemm.time_us - 1253.022).abs() < 1e-6, "{}", gemm.time_us);
    // The category whose time moves most: elementwise, 11.70 ms on MI300X vs 16.19 ms on H100.
    let cat = f.iter().find(|x| x.kind == FindingKind::CategoryShift).unwrap();
    assert!(cat.text.starts_with("elementwise kernels take 11.70 ms"), "{}", cat.text);
}

#[test]
fn an_opportunity_finding_states_its_saving_per_call_and_chip() {
    let o = qwen_pair();
    let op = o.findings.iter().find(|x| x.kind == FindingKind::Opportunity).unwrap();
    // Inductor's rules fuse the RMSNorm's add → copy_ → pow → mean on either side; the saving is
    // priced at the side's chip bandwidth.
    assert!(
        op.text.starts_with("Fusing add → copy_ → pow → mean (inductor: elementwise ×3 + reduction) on "),
        "{}",
        op.text
    );
    assert!(op.text.contains("174.69 MiB per call × 48 calls"), "{}", op.text);
}

#[test]
fn one_trace_has_a_verdict_and_its_costliest_op_first_among_ops() {
    let t = read("nvidia/hf_qwen1.5-0.5b_eager_h100.json.gz");
    let (summary, time) = report(&t, "h100.json.gz");
    let o = trace_overview(&summary, Some(&time));
    assert!(
        o.verdict.text.starts_with("H100 SXM (NVIDIA): 45.65 ms of GPU time in 1,465 kernels; GPU busy "),
        "{}",
        o.verdict.text
    );
    let ops: Vec<&Finding> = o.findings.iter().filter(|f| f.kind == FindingKind::Op).collect();
    assert!(!ops.is_empty() && ops.len() <= cap(FindingKind::Op));
    assert!((ops[0].time_us - time.ops[0].kernel_time_us).abs() < 1e-9);
    assert!(o
        .findings
        .iter()
        .any(|f| f.kind == FindingKind::Category && f.text.starts_with("elementwise kernels are ")));
    assert!(o.findings.windows(2).all(|w| w[0].time_us >= w[1].time_us));
}

#[test]
fn without_a_timeline_or_fusion_the_pair_still_has_findings_from_the_comparison() {
    // A share link from before links carried the reports: the comparison and the gap alone.
    let (nv, amd) = (read("nvidia/hf_bert-small_eager_h100.json.gz"), read("amd/hf_bert-small_eager_mi300x.json.gz"));
    let c = compare(Input::new(&nv, None), Input::new(&amd, None));
    let (_, ta) = report(&amd, "amd");
    let (_, tn) = report(&nv, "nv");
    let g = gap(("amd", &ta.op_table()), ("nvidia", &tn.op_table()));
    let o = pair_overview(&c, Some(&g), [SideFacts::default(), SideFacts::default()]);
    assert!(o.verdict.sides.iter().all(|s| s.busy_us.is_none()));
    assert!(o.findings.iter().all(|f| !matches!(f.kind, FindingKind::Idle | FindingKind::Opportunity)));
    assert!(o.findings.iter().any(|f| f.kind == FindingKind::OpGap));
}

#[test]
fn rank_drops_findings_that_explain_no_time_and_keeps_ties_in_order() {
    let f = |kind, time_us: f64, text: &str| Finding { kind, time_us, text: text.into(), evidence: Evidence::Time };
    let ranked = rank(vec![
        f(FindingKind::Idle, 0.0, "none"),
        f(FindingKind::Idle, f64::NAN, "nan"),
        f(FindingKind::OpGap, 5.0, "a"),
        f(FindingKind::OpGap, 5.0, "b"),
        f(FindingKind::OpGap, 9.0, "c"),
        f(FindingKind::OpGap, 1.0, "d"),
        f(FindingKind::CategoryShift, 2.0, "e"),
        f(FindingKind::CategoryShift, 3.0, "f"),
    ]);
    let texts: Vec<&str> = ranked.iter().map(|f| f.text.as_str()).collect();
    assert_eq!(texts, ["c", "a", "b", "f"]);
}

#[cfg(not(target_arch = "wasm32"))]
mod properties {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn ranking_is_sorted_capped_and_a_subset(times in proptest::collection::vec((0usize..7, -10.0f64..100.0), 0..40)) {
            let kinds = [FindingKind::OpGap, FindingKind::FusionDifference, FindingKind::Opportunity, FindingKind::Idle,
                FindingKind::CategoryShift, FindingKind::Op, FindingKind::Category];
            let input: Vec<Finding> = times.iter().enumerate()
                .map(|(i, &(k, t))| Finding { kind: kinds[k], time_us: t, text: i.to_string(), evidence: Evidence::Time })
                .collect();
            let out = rank(input.clone());
            prop_assert!(out.len() <= MAX_FINDINGS);
            prop_assert!(out.windows(2).all(|w| w[0].time_us >= w[1].time_us));
            for k in kinds {
                prop_assert!(out.iter().filter(|f| f.kind == k).count() <= cap(k));
            }
            prop_assert!(out.iter().all(|f| f.time_us > 0.0 && input.iter().any(|i| i.text == f.text && i.kind == f.kind)));
        }
    }
}

#[test]
fn an_op_without_tensor_inputs_is_named_without_its_empty_dims() {
    // TorchRec's collectives: `record_param_comms` records seven inputs, none a tensor.
    let t = read("nvidia/hta_a100_compiled_rank0.json.gz");
    let (summary, time) = report(&t, "rank0.json.gz");
    let o = trace_overview(&summary, Some(&time));
    let comms = o.findings.iter().find(|f| f.text.starts_with("record_param_comms")).expect("a collective op finding");
    assert!(comms.text.starts_with("record_param_comms takes 126.56 ms in 10 calls"), "{}", comms.text);
    assert_eq!(dims(&serde_json::json!([[], [], []])), "");
    assert_eq!(dims(&serde_json::json!([[655421], [], []])), " [[655421],[],[]]");
}
