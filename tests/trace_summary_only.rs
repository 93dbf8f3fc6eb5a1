//! `fusionscope trace --summary-only`: the fold over the streamed events gives the same
//! platform, categories, kernel totals, fused kernels and whole-trace timelines as the summary
//! of the whole trace, on the real traces of both vendors.

use crate::common::{data, json, run, trace_bytes};
use fusionscope::analysis::pipeline::{time_report, Choices};
use fusionscope::analysis::summarize;
use fusionscope::analysis::summary::ClassifiedTrace;
use fusionscope::analysis::summary_only::{SummaryOnly, SummarySink, LEFT_OUT};
use fusionscope::analysis::time::waits::Waits;
use fusionscope::formats::{read_trace, Reader};
use fusionscope::trace::Vendor;

/// Every real trace: eager, compiled and graph-replayed, both vendors, one and several devices.
const TRACES: [&str; 12] = [
    "amd/hf_bert-small_eager_mi300x.json.gz",
    "amd/hf_qwen1.5-0.5b_eager_mi300x.json.gz",
    "amd/hta_mi250_minitoy_train_rocm6.2.json.gz",
    "amd/sglang_qwen3-8b_decode_hipgraph_mi300x.json.gz",
    "amd/sglang_qwen3-8b_prefilldecode_mi300x.json.gz",
    "amd/torch_compile_triton_mi300x.json.gz",
    "amd/vllm_decode_graph_full_replay.json.gz",
    "amd/vllm_prefilldecode_graph_piecewise_replay.json.gz",
    "nvidia/hf_bert-small_eager_h100.json.gz",
    "nvidia/hf_qwen1.5-0.5b_eager_h100.json.gz",
    "nvidia/hta_a100_compiled_rank0.json.gz",
    "nvidia/tracelens_eager_b200.json.gz",
];

/// The summary-only fold of a stored trace, fed in odd-sized slices as a file read would be.
fn fold(rel: &str) -> SummaryOnly {
    let mut reader = Reader::with_sink(SummarySink::new(Some("f")));
    for chunk in trace_bytes(rel).chunks(100_003) {
        reader.feed(chunk).unwrap();
    }
    reader.finish().unwrap()
}

#[test]
fn the_fold_gives_the_whole_summarys_totals_on_every_real_trace() {
    let mut vendors = Vec::new();
    for rel in TRACES {
        let s = fold(rel);
        let trace = read_trace(&trace_bytes(rel)).unwrap();
        let whole = summarize(&ClassifiedTrace::new(&trace), Some("f"));
        assert_eq!(s.platforms, whole.platforms, "{rel}: platform, kernel count, GPU time, copies");
        assert_eq!(s.categories, whole.categories, "{rel}: categories and every kernel's total");
        assert_eq!(s.fused_kernels, whole.fused_kernels, "{rel}");
        assert_eq!(s.events, trace.event_count, "{rel}");
        // Every kernel name once, with the whole summary's count and time, inside its range.
        let names: Vec<_> = whole.categories.iter().flat_map(|c| &c.trace.kernels).collect();
        assert_eq!(s.kernels.len(), names.len(), "{rel}");
        for k in &s.kernels {
            let w = names.iter().find(|w| w.name == k.name).unwrap_or_else(|| panic!("{rel}: {}", k.name));
            assert_eq!((k.count, k.time_us, k.category), (w.count, w.time_us, w.category), "{rel}: {}", k.name);
            assert!(k.min_us <= k.mean_us + 1e-3 && k.mean_us <= k.max_us + 1e-3, "{rel}: {k:?}");
        }
        assert_eq!(s.kernels.iter().map(|k| k.count).sum::<u64>(), trace.kernels.len() as u64, "{rel}");
        // The whole-trace timeline of each device, busiest first.
        let time = time_report(&ClassifiedTrace::new(&trace), &Choices::default());
        assert!(s.notes.is_empty(), "{rel}: {:?}", s.notes);
        assert_eq!(s.timeline, time.timeline, "{rel}");
        assert_eq!(s.other_devices, time.other_devices, "{rel}");
        // The idle split by cause, streamed, is the whole trace's (less its step windows).
        let whole_waits = time.waits.map(|w| Waits { steps: Vec::new(), ..w });
        assert_eq!(s.waits, whole_waits, "{rel}");
        vendors.push(s.platforms[0].vendor);
    }
    assert!(vendors.contains(&Vendor::Amd) && vendors.contains(&Vendor::Nvidia));
}

#[test]
fn the_cli_prints_the_summary_and_says_what_it_left_out() {
    let path = data("traces/amd/hf_qwen1.5-0.5b_eager_mi300x.json.gz");
    let (code, text, err) = run(&["trace", &path, "--summary-only"]);
    assert_eq!(code, 0, "{err}");
    for part in ["Kernels by category", "Kernels by time", ">min", "GPU timeline", "whole trace", "left out"] {
        assert!(text.contains(part.trim_start_matches('>')), "lacks {part}: {text}");
    }
    for left in LEFT_OUT {
        assert!(text.contains(left), "{text}");
    }
    assert!(!text.contains("Ops by GPU time") && !text.contains("Structure:"), "{text}");
    let v = json(&["trace", &path, "--summary-only", "--json"]);
    let whole = json(&["trace", &path, "--json"]);
    assert_eq!(v["platforms"], whole["platforms"]);
    assert_eq!(v["categories"], whole["categories"]);
    assert_eq!(v["timeline"], whole["timeline"]);
    assert_eq!(v["left_out"].as_array().map(Vec::len), Some(LEFT_OUT.len()));
    assert!(v["kernels"][0]["max_us"].is_number());
    assert!(v.get("ops").is_none() && v.get("structure").is_none() && v.get("steps").is_none());
    // The roofline chip belongs to the op table, which this mode has not.
    let (code, _, err) = run(&["trace", &path, "--summary-only", "--chip", "mi300x"]);
    assert_eq!(code, 2, "{err}");
}
