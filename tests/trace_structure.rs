//! Steps, phases and layers of serving traces (`docs/trace-analysis.md`, "Serving traces"), and
//! the layer alignment of two traces ("Layer alignment"): on the real vLLM and SGLang traces,
//! whose counts are checked against TraceLens's own per-op counts for the same files
//! (`ops_summary.csv`: 24 `unified_attention` calls and 48 `rmsnorm2d_fwd_with_add` in the vLLM
//! decode, one plain `rms_norm` and 23 `to_copy` for its first layer; 36 `mha_batch_prefill` and
//! 73 `aiter::rmsnorm` in the SGLang prefill), and on synthetic serving traces whose structure
//! and differences are planted.

use crate::common::trace_bytes;
use fusionscope::analysis::compare::LAYER_EVIDENCE;
use fusionscope::analysis::structure::{search, Structure};
use fusionscope::analysis::summary::ClassifiedTrace;
use fusionscope::analysis::synthetic::serving::{write_serving_trace, ServingSpec};
use fusionscope::analysis::{classify, compare, summarize, Category, Comparison, Input};
use fusionscope::formats::read_trace;
use fusionscope::trace::Trace;

fn load(rel: &str) -> Trace {
    read_trace(&trace_bytes(rel)).unwrap()
}

fn structure(t: &Trace) -> Structure {
    *summarize(&ClassifiedTrace::new(t), None).structure.expect("a structure")
}

fn synthetic(spec: &ServingSpec) -> Trace {
    let mut out = Vec::new();
    write_serving_trace(&mut out, spec).unwrap();
    read_trace(&out).unwrap()
}

fn pair(a: &Trace, b: &Trace) -> Comparison {
    compare(Input::new(a, Some("a.json")), Input::new(b, Some("b.json")))
}

/// Kernel names of a phase's layer.
fn layer_names(s: &Structure, phase: usize) -> Vec<&str> {
    s.phases[phase].layer.iter().map(|k| k.kernel.as_str()).collect()
}

const VLLM_DECODE: &str = "amd/vllm_decode_graph_full_replay.json.gz";
const VLLM_MIXED: &str = "amd/vllm_prefilldecode_graph_piecewise_replay.json.gz";
const SGLANG_DECODE: &str = "amd/sglang_qwen3-8b_decode_hipgraph_mi300x.json.gz";
const SGLANG_PREFILL: &str = "amd/sglang_qwen3-8b_prefilldecode_mi300x.json.gz";

#[test]
fn vllm_full_graph_decode_has_24_layers_alternating_two_attentions() {
    let s = structure(&load(VLLM_DECODE));
    assert_eq!((s.device, s.stream, s.kernels), (2, 0, 425));
    assert_eq!(s.steps_from, "annotations");
    assert_eq!(s.steps.len(), 1);
    assert_eq!((s.steps[0].kernels, s.steps[0].layers), (425, 24));
    let p = &s.phases[0];
    assert_eq!((p.label.as_str(), p.label_from.as_str()), ("decode", "annotation"));
    assert_eq!((p.layers_per_step, p.kernels_per_layer), (24, 17));
    // The layer starts at its input RMSNorm; attention, the MoE routing and GEMMs follow.
    let cats: Vec<Category> = p.layer.iter().map(|k| k.category).collect();
    assert_eq!(
        cats[..6],
        [Category::Norm, Category::Gemm, Category::Memory, Category::Rotary, Category::KvCache, Category::Attention]
    );
    assert!(layer_names(&s, 0).contains(&"kernel_unified_attention_2d"));
    // Every other layer runs the 3-D attention and its reduce: 12 near-repeats of one variant;
    // the first layer (plain norm, no to_copy) is the other near-repeat.
    let r = p.regularity.as_ref().unwrap();
    assert_eq!((r.layers, r.exact, r.near), (24, 11, 13));
    assert_eq!((p.variants[0].layers, p.variants[0].kernels), (12, 18));
    assert!(p.variants[0].differences.iter().any(|d| d.contains("kernel_unified_attention_3d")), "{:?}", p.variants);
    assert_eq!((p.variants[1].layers, p.variants[1].kernels), (1, 16));
    assert!(p.variants[1].differences.iter().any(|d| d.starts_with("- triton_poi_fused__to_copy_1")));
    // Outside the layers: the position add and the embedding before; the final norm, the
    // logits' copy, gather and GEMM after.
    assert_eq!((p.before_layers.len(), p.after_layers.len()), (2, 4));
    assert_eq!(p.after_layers[0].category, Category::Norm);
    assert_eq!(p.after_layers[3].category, Category::Gemm);
    let t = p.time_per_layer_us.unwrap();
    let spread = p.layer_time_spread_us.as_ref().unwrap();
    assert!(spread.min <= t && t <= spread.max && spread.stdev > 0.0);
}

#[test]
fn vllm_piecewise_mixed_step_has_24_layers() {
    let s = structure(&load(VLLM_MIXED));
    assert_eq!(s.steps.len(), 1);
    let p = &s.phases[0];
    assert_eq!((p.label.as_str(), p.layers_per_step, p.kernels_per_layer), ("mixed", 24, 17));
    let r = p.regularity.as_ref().unwrap();
    assert_eq!((r.exact, r.near), (23, 1));
}

#[test]
fn sglang_qwen3_8b_has_36_layers_in_decode_and_prefill() {
    let d = structure(&load(SGLANG_DECODE));
    assert_eq!(d.other_stream_kernels, 2, "two kernels on a side stream");
    assert!(d.notes.iter().any(|n| n.contains("2 kernels on its other streams")), "{:?}", d.notes);
    let p = &d.phases[0];
    assert_eq!((p.label.as_str(), p.layers_per_step, p.kernels_per_layer), ("decode", 36, 15));
    // Decode attention is split in two: the paged-attention kernel and its reduce.
    let attention = p.layer.iter().filter(|k| k.category == Category::Attention).count();
    assert_eq!(attention, 2);
    let f = structure(&load(SGLANG_PREFILL));
    let p = &f.phases[0];
    assert_eq!((p.label.as_str(), p.layers_per_step, p.kernels_per_layer), ("prefill", 36, 14));
    assert_eq!(p.layer.iter().filter(|k| k.category == Category::Attention).count(), 1);
}

#[test]
fn eager_hf_traces_have_their_layers_too() {
    for (path, layers, kernels) in [
        ("nvidia/hf_qwen1.5-0.5b_eager_h100.json.gz", 24, 42),
        ("amd/hf_qwen1.5-0.5b_eager_mi300x.json.gz", 24, 43),
        ("nvidia/hf_bert-small_eager_h100.json.gz", 4, 12),
        ("nvidia/tracelens_eager_b200.json.gz", 36, 21),
    ] {
        let s = structure(&load(path));
        assert_eq!(s.steps.len(), 1, "{path}");
        assert_eq!((s.phases[0].layers_per_step, s.phases[0].kernels_per_layer), (layers, kernels), "{path}");
    }
    // A training trace without a repeating layer: five profiler steps alike, no layer.
    let s = structure(&load("nvidia/hta_a100_compiled_rank0.json.gz"));
    assert_eq!((s.steps.len(), s.phases.len(), s.phases[0].layers_per_step), (5, 1, 0));
    // Nothing repeats: no structure.
    let t = load("amd/torch_compile_triton_mi300x.json.gz");
    assert!(summarize(&ClassifiedTrace::new(&t), None).structure.is_none());
}

#[test]
fn sglang_decode_against_prefill_splits_attention_only() {
    let c = pair(&load(SGLANG_DECODE), &load(SGLANG_PREFILL));
    assert_eq!(c.layer_alignment.len(), 1);
    let a = &c.layer_alignment[0];
    assert_eq!((a.labels["a"].as_str(), a.labels["b"].as_str()), ("decode", "prefill"));
    assert_eq!(a.rotation, 0);
    let differences: Vec<&str> = a.rows.iter().filter_map(|r| r.difference.as_deref()).collect();
    assert_eq!(differences, ["attention: 2 kernels per layer on a vs 1 on b"]);
    assert_eq!(a.rows.len(), 14);
    let d = c.fusion_differences.iter().find(|d| d.evidence.starts_with(LAYER_EVIDENCE)).unwrap();
    assert_eq!((d.fused_side.as_str(), d.count), ("b", 36));
    assert!(d.fused_kernel.contains("FmhaBatchPrefill"));
    assert_eq!(d.unfused_kernels.len(), 2);
}

#[test]
fn vllm_decode_against_mixed_step_pairs_every_kernel() {
    let c = pair(&load(VLLM_DECODE), &load(VLLM_MIXED));
    let a = &c.layer_alignment[0];
    assert_eq!(a.rows.len(), 17);
    for r in &a.rows {
        let (x, y) = (r.sides["a"].as_ref().unwrap(), r.sides["b"].as_ref().unwrap());
        assert_eq!(x.kernels.len(), 1);
        assert_eq!(y.kernels.len(), 1);
        assert!(r.difference.is_none());
    }
    // Same kernels, a step of 8192 tokens against one of 32: every row slower in the mixed step.
    assert!(a
        .rows
        .iter()
        .all(|r| r.sides["b"].as_ref().unwrap().time_us > r.sides["a"].as_ref().unwrap().time_us * 0.9));
}

/// The vendors' decode and prefill layers differ as [`ServingSpec`] plants them.
fn vendor_pair() -> (ServingSpec, ServingSpec) {
    ServingSpec::vendor_pair()
}

/// `found` is `planted` read from another kernel (a rotation).
fn is_rotation(found: &[&str], planted: &[&str]) -> bool {
    found.len() == planted.len()
        && (0..planted.len()).any(|r| (0..found.len()).all(|i| found[i] == planted[(i + r) % planted.len()]))
}

#[test]
fn synthetic_steps_phases_and_layers_are_the_planted_ones() {
    let (amd, nv) = vendor_pair();
    for spec in [&amd, &nv] {
        let s = structure(&synthetic(spec));
        assert_eq!(s.steps_from, "gaps");
        assert_eq!(s.steps.len(), 4);
        assert_eq!(s.steps[0].kernels, spec.pass_kernels(true));
        assert!(s.steps[1..].iter().all(|st| st.kernels == spec.pass_kernels(false)));
        let labels: Vec<(&str, usize, usize)> =
            s.phases.iter().map(|p| (p.label.as_str(), p.steps, p.layers_per_step)).collect();
        assert_eq!(labels, [("prefill", 1, 8), ("decode", 3, 8)]);
        assert!(s.phases.iter().all(|p| p.label_from == "guess"));
        assert!(is_rotation(&layer_names(&s, 1), &spec.decode_layer()), "{:#?}", layer_names(&s, 1));
        assert!(is_rotation(&layer_names(&s, 0), &spec.prefill_layer()));
        // The first layer (plain norm) is the only near-repeat of each step.
        let r = s.phases[1].regularity.as_ref().unwrap();
        assert_eq!((r.layers, r.exact, r.near), (24, 21, 3));
        // Embedding before, final norm and logits after; sampling and the next preparation are
        // split at the idle gap between passes.
        assert_eq!(s.phases[1].before_layers.len(), 2);
        assert_eq!(s.phases[1].after_layers.len(), 3);
    }
    // A fused first kernel starts the layer where the model's layer starts.
    let s = structure(&synthetic(&nv));
    assert_eq!(layer_names(&s, 1), nv.decode_layer());
}

#[test]
fn back_to_back_passes_are_cut_between_runs_of_layers() {
    let (mut amd, _) = vendor_pair();
    amd.step_gap_us = 0.0;
    amd.decode_steps = 5;
    let s = structure(&synthetic(&amd));
    assert_eq!(s.steps.len(), 6);
    assert!(s.steps[1..].iter().all(|st| st.kernels == amd.pass_kernels(false) && st.layers == 8));
    assert!(s.notes.iter().any(|n| n.starts_with("5 step boundaries are between runs of layers")), "{:?}", s.notes);
}

#[test]
fn annotated_passes_are_steps_labelled_by_their_annotation() {
    let (mut amd, _) = vendor_pair();
    amd.annotate = true;
    amd.step_gap_us = 0.0;
    let s = structure(&synthetic(&amd));
    assert_eq!(s.steps_from, "annotations");
    assert_eq!(s.step_annotation.as_deref(), Some("execute_… (vLLM execute, CPU ranges)"));
    assert_eq!((s.steps.len(), s.outside_steps), (4, 0));
    assert!(s.steps.iter().all(|st| st.annotation.as_deref().is_some_and(|a| a.starts_with("execute_"))));
    assert_eq!((s.phases[0].label.as_str(), s.phases[1].label.as_str()), ("prefill", "decode"));
    assert!(s.phases.iter().all(|p| p.label_from == "annotation"));
}

#[test]
fn vendor_layers_align_with_each_planted_difference() {
    let (amd, nv) = vendor_pair();
    let (ta, tn) = (synthetic(&amd), synthetic(&nv));
    let c = pair(&tn, &ta);
    assert_eq!(c.layer_alignment.len(), 2);
    let decode = &c.layer_alignment[1];
    assert_eq!((decode.labels["amd"].as_str(), decode.labels["nvidia"].as_str()), ("decode", "decode"));
    assert_eq!((decode.kernels_per_layer["amd"], decode.kernels_per_layer["nvidia"]), (15, 10));
    assert_eq!(decode.rows.len(), 10, "one row per NVIDIA kernel");
    let differences: Vec<&str> = decode.rows.iter().filter_map(|r| r.difference.as_deref()).collect();
    assert_eq!(
        differences,
        [
            "elementwise + norm fused on nvidia: 1 kernel per layer vs 2 on amd",
            "attention: 2 kernels per layer on amd vs 1 on nvidia",
            "gemm + split-K reduce on amd: 2 kernels per layer vs 1 kernel on nvidia",
            "elementwise + norm fused on nvidia: 1 kernel per layer vs 2 on amd",
            "activation + elementwise fused on nvidia: 1 kernel per layer vs 2 on amd",
        ]
    );
    let prefill = &c.layer_alignment[0];
    let differences: Vec<&str> = prefill.rows.iter().filter_map(|r| r.difference.as_deref()).collect();
    assert_eq!(differences.len(), 3, "{differences:?}: prefill runs one attention kernel and no split-K");
    // In the fusion differences: the norm counted once for its two places per layer.
    let layer: Vec<&fusionscope::analysis::compare::FusionDifference> =
        c.fusion_differences.iter().filter(|d| d.evidence.starts_with(LAYER_EVIDENCE)).collect();
    assert_eq!(layer.len(), 4 + 2);
    let norm = layer
        .iter()
        .find(|d| d.evidence.contains("amd decode") && d.fused_kernel.contains("fused_add_rms_norm"))
        .unwrap();
    assert_eq!((norm.fused_side.as_str(), norm.count), ("nvidia", 2 * 8 * 3));
    assert!(norm.evidence.contains("(in 2 places per layer)"), "{}", norm.evidence);
    assert_eq!(norm.components, [Category::Elementwise, Category::Norm]);
    assert!(norm.time_us["amd"] > norm.time_us["nvidia"]);
    // Either order gives the same alignment and differences.
    let swapped = pair(&ta, &tn);
    assert_eq!(
        serde_json::to_value(&c.layer_alignment).unwrap(),
        serde_json::to_value(&swapped.layer_alignment).unwrap()
    );
    assert_eq!(c.fusion_differences, swapped.fusion_differences);
}

#[test]
fn same_vendor_before_and_after_fusing() {
    let (before, _) = vendor_pair();
    let mut after = before.clone();
    after.fused_add_norm = true;
    after.fused_silu_mul = true;
    after.seed = 3;
    let c = pair(&synthetic(&before), &synthetic(&after));
    assert_eq!(c.time_ratio, "a / b");
    let decode = &c.layer_alignment[1];
    let differences: Vec<&str> = decode.rows.iter().filter_map(|r| r.difference.as_deref()).collect();
    assert_eq!(
        differences,
        [
            "elementwise + norm fused on b: 1 kernel per layer vs 2 on a",
            "elementwise + norm fused on b: 1 kernel per layer vs 2 on a",
            "activation + elementwise fused on b: 1 kernel per layer vs 2 on a",
        ]
    );
    // The unchanged kernels (QKV, rotary, KV cache, the two attention kernels, the split-K GEMM
    // and its reduce, gate-up, down) pair by name.
    let same = decode
        .rows
        .iter()
        .filter(|r| r.sides["a"].as_ref().map(|s| &s.kernels) == r.sides["b"].as_ref().map(|s| &s.kernels));
    assert_eq!(same.count(), 9);
}

#[test]
fn several_ranks_read_one_and_say_so() {
    let (mut amd, _) = vendor_pair();
    amd.ranks = 2;
    let t = synthetic(&amd);
    let s = structure(&t);
    assert_eq!((s.device, s.kernels, s.other_device_kernels), (0, t.kernels.len() / 2, t.kernels.len() / 2));
    assert!(s.notes[0].starts_with("2 devices ran kernels: read device 0"), "{:?}", s.notes);
    assert_eq!((s.steps.len(), s.phases[1].layers_per_step), (4, 8));
}

#[test]
fn a_side_stream_is_left_out() {
    let (amd, _) = vendor_pair();
    let mut t = synthetic(&amd);
    // A copy stream interleaving one kernel after every 10th of the main stream.
    let extra: Vec<_> = t
        .kernels
        .iter()
        .step_by(10)
        .map(|k| fusionscope::trace::Kernel { stream: 99, ts: k.ts + 0.1, dur: 0.2, ..*k })
        .collect();
    let n = extra.len();
    t.kernels.extend(extra);
    t.kernels.sort_by(|a, b| a.ts.total_cmp(&b.ts));
    let s = structure(&t);
    assert_eq!(s.other_stream_kernels, n);
    assert_eq!(
        (s.steps.len(), s.phases[1].layers_per_step, s.phases[1].regularity.as_ref().unwrap().exact),
        (4, 8, 21)
    );
}

#[test]
fn a_pass_cut_short_stays_in_its_phase_and_is_named() {
    let (amd, _) = vendor_pair();
    let mut t = synthetic(&amd);
    // The profile ends in the middle of the last decode pass.
    let keep = t.kernels.len() - amd.pass_kernels(false) / 2;
    t.kernels.truncate(keep);
    let s = structure(&t);
    assert_eq!(s.steps.len(), 4);
    assert_eq!(s.phases[1].steps, 3);
    assert_eq!(s.phases[1].layers_per_step, 8);
    let last = s.steps.last().unwrap();
    assert!(last.layers < 8 && last.layers >= 2, "{last:?}");
    assert!(s.notes.iter().any(|n| n.starts_with("step 3 of phase 1 holds")), "{:?}", s.notes);
}

#[test]
fn no_repeat_no_structure_and_no_alignment() {
    let mut events = Vec::new();
    for i in 0..200 {
        events.push(format!(r#"{{"ph":"X","cat":"kernel","name":"kernel_{i}","pid":0,"ts":{},"dur":2}}"#, i * 10));
    }
    let t = read_trace(format!(r#"{{"traceEvents":[{}]}}"#, events.join(",")).as_bytes()).unwrap();
    assert!(summarize(&ClassifiedTrace::new(&t), None).structure.is_none());
    let s = search(&t, &|id| classify(t.name(id)).category).unwrap();
    assert_eq!((s.steps.steps.len(), s.phases.len()), (1, 1));
    assert!(s.phases[0].layer.is_none());
    let (amd, _) = vendor_pair();
    let c = pair(&t, &synthetic(&amd));
    assert!(c.layer_alignment.is_empty());
    assert!(search(&read_trace(br#"{"traceEvents":[]}"#).unwrap(), &|_| Category::Other).is_none());
}

mod props {
    use super::*;
    use fusionscope::trace::Kernel;
    use fusionscope::trace::NameTable;
    use proptest::prelude::*;

    /// A trace of kernels named by `tokens`, one after another with `gaps` of idle time.
    fn trace(tokens: &[u8], gaps: &[u16], streams: &[bool]) -> Trace {
        let mut names = NameTable::new();
        let mut ts = 0.0;
        let mut kernels = Vec::new();
        for (i, &t) in tokens.iter().enumerate() {
            let name = names.intern(&format!("k{t}"));
            let dur = 1.0 + f64::from(t % 7);
            kernels.push(Kernel {
                name,
                ts,
                dur,
                device: 0,
                stream: if streams.get(i).copied().unwrap_or(false) { 2 } else { 1 },
                correlation: Some(i as u64),
                external_id: None,
                graph_node: true,
            });
            ts += dur + f64::from(gaps.get(i).copied().unwrap_or(1));
        }
        Trace { names, kernels, ..Default::default() }
    }

    /// Random streams, and planted passes (prologue, layers, epilogue) repeated, some shuffled.
    fn tokens() -> impl Strategy<Value = Vec<u8>> {
        let random = proptest::collection::vec(0u8..16, 0..400);
        let planted =
            (proptest::collection::vec(20u8..60, 2..12), 2usize..10, 1usize..4).prop_map(|(layer, layers, passes)| {
                let mut t = Vec::new();
                for _ in 0..passes {
                    t.extend([1, 2]);
                    for _ in 0..layers {
                        t.extend(&layer);
                    }
                    t.extend([3, 4]);
                }
                t
            });
        prop_oneof![random, planted]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(96))]

        /// Never a panic; steps partition the kernels they cover (each in one step at most, in
        /// order, all of them without annotations); every phase's layer really repeats.
        #[test]
        fn steps_partition_and_layers_repeat(
            t in tokens(),
            gaps in proptest::collection::vec(prop_oneof![Just(1u16), Just(2000u16), 0u16..50], 0..400),
            streams in proptest::collection::vec(prop_oneof![Just(false), Just(false), Just(false), Just(true)], 0..400),
        ) {
            let tr = trace(&t, &gaps, &streams);
            let Some(s) = search(&tr, &|id| if tr.name(id).len().is_multiple_of(2) { Category::Gemm } else { Category::Norm }) else {
                prop_assert!(t.is_empty());
                return Ok(());
            };
            let n = s.stream.kernels.len();
            let mut seen = vec![false; n];
            let mut last_first = None;
            for step in &s.steps.steps {
                prop_assert!(!step.kernels.is_empty());
                prop_assert!(step.kernels.windows(2).all(|w| w[0] < w[1]));
                prop_assert!(last_first < Some(step.kernels[0]));
                last_first = Some(step.kernels[0]);
                for &k in &step.kernels {
                    prop_assert!(!seen[k], "kernel {} in two steps", k);
                    seen[k] = true;
                }
            }
            prop_assert_eq!(seen.iter().filter(|&&x| x).count() + s.steps.outside, n);
            prop_assert_eq!(s.steps.outside, 0, "no annotations: every kernel in a step");
            for p in &s.phases {
                if let Some(l) = &p.layer {
                    prop_assert!(l.exact >= 2);
                    prop_assert_eq!(l.layer_us.len(), l.layers_per_step.iter().sum::<usize>());
                    prop_assert_eq!(l.layers_per_step.len(), p.steps.len());
                    prop_assert_eq!(l.position_us.len(), l.names.len());
                }
            }
            let report = fusionscope::analysis::structure::report(&tr, &s, &|_| Category::Other);
            prop_assert_eq!(report.is_some(), s.repeats());
        }
    }
}

/// The fleet export's `kernels.step` and `kernels.layer`: on the stream searched, each step
/// holds as many kernels and layers as the report says; elsewhere, a kernel's step is the one
/// whose span holds its start, and it is in no layer.
#[test]
fn every_kernel_is_placed_in_the_step_and_layer_that_hold_it() {
    let mut placed_elsewhere = 0;
    for rel in [VLLM_DECODE, SGLANG_PREFILL, VLLM_MIXED] {
        let t = load(rel);
        let side = ClassifiedTrace::new(&t);
        let places = side.structure_search().expect("a structure").kernel_places(&t);
        let s = structure(&t);
        assert_eq!(places.len(), t.kernels.len());
        let searched = |k: &fusionscope::trace::Kernel| k.device == s.device && k.stream == s.stream;
        for (i, step) in s.steps.iter().enumerate() {
            let on_stream: Vec<_> = t
                .kernels
                .iter()
                .zip(&places)
                .filter(|(k, p)| searched(k) && p.step == Some(i as u32))
                .map(|(_, p)| p)
                .collect();
            assert_eq!(on_stream.len(), step.kernels, "{rel} step {i}");
            let layers: std::collections::BTreeSet<u32> = on_stream.iter().filter_map(|p| p.layer).collect();
            assert_eq!(layers.len(), step.layers, "{rel} step {i}");
            assert!(layers.iter().copied().eq(0..step.layers as u32), "{rel} step {i}: {layers:?}");
        }
        let outside = t.kernels.iter().zip(&places).filter(|(k, p)| searched(k) && p.step.is_none()).count();
        assert_eq!(outside, s.outside_steps, "{rel}");
        for (k, p) in t.kernels.iter().zip(&places).filter(|(k, _)| !searched(k)) {
            assert_eq!(p.layer, None, "{rel}");
            if let Some(i) = p.step {
                let step = &s.steps[i as usize];
                assert!(step.start_us - 1e-3 <= k.ts && k.ts < step.end_us + 1e-3, "{rel}: {} in step {i}", k.ts);
                placed_elsewhere += 1;
            }
        }
    }
    assert!(placed_elsewhere > 0, "no kernel of another stream fell in a step: the time lookup went untested");
}
