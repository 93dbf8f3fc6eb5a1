//! `fusionscope trace` and `fusionscope compare` as a user runs them.

use crate::common::{data, json, run, temp_dir};

#[test]
fn trace_prints_tables_and_json() {
    let path = data("traces/amd/torch_compile_triton_mi300x.json.gz");
    let (code, text, _) = run(&["trace", &path]);
    assert_eq!(code, 0);
    assert!(text.contains("AMD on AMD Instinct MI300X: 12 kernels"), "{text}");
    assert!(text.contains("Fused kernels") && text.contains("triton_red_fused_add_mean_mul_pow_rsqrt_0"), "{text}");
    let v = json(&["trace", &path, "--json"]);
    assert_eq!(v["platforms"][0]["vendor"], "AMD");
    assert_eq!(v["platforms"][0]["kernels"], 12);
    assert!(v["categories"][0]["trace"]["kernels"].is_array());
    assert!(v.get("op_mapping").is_none() && v.get("fusion_differences").is_none());
}

#[test]
fn compare_prints_tables_and_spec_json() {
    let a = data("traces/nvidia/hf_bert-small_eager_h100.json.gz");
    let b = data("traces/amd/hf_bert-small_eager_mi300x.json.gz");
    let (code, text, _) = run(&["compare", &a, &b]);
    assert_eq!(code, 0);
    assert!(text.contains("Categories") && text.contains("Kernel mapping") && text.contains("aten::addmm"), "{text}");
    let v = json(&["compare", &a, &b, "--json"]);
    assert_eq!(v["platforms"][0]["vendor"], "AMD");
    assert_eq!(v["platforms"][1]["vendor"], "NVIDIA");
    let row = &v["categories"][0];
    for key in ["category", "amd", "nvidia", "time_ratio"] {
        assert!(row.get(key).is_some(), "category row lacks {key}: {row}");
    }
    let k = &row["amd"]["kernels"][0];
    for key in ["name", "count", "time_us", "category", "components"] {
        assert!(k.get(key).is_some(), "kernel entry lacks {key}: {k}");
    }
    assert!(v["op_mapping"][0]["method"].is_string());
    assert!(v["fusion_differences"].is_array());
}

#[test]
fn bad_input_gives_one_line_error_with_file_and_offset() {
    let dir = temp_dir("fusionscope-trace-cli");
    let bad = dir.join("cut.json");
    std::fs::write(&bad, br#"{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k"#).unwrap();
    let (code, _, err) = run(&["trace", bad.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(err.starts_with("fusionscope: ") && err.contains("cut.json") && err.contains("at byte 56"), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1);
    let (code, _, err) = run(&["compare", bad.to_str().unwrap(), "/nonexistent/x.json"]);
    assert_eq!(code, 2);
    assert!(err.contains("cut.json"), "{err}");
}

/// A category one side lacks sums no kernels; the JSON must say 0, not -0.0 (Rust's float sum
/// of nothing is negative zero).
#[test]
fn one_sided_categories_have_plain_zero_times() {
    let (code, out, err) = run(&[
        "compare",
        &data("traces/nvidia/hta_a100_compiled_rank0.json.gz"),
        &data("traces/amd/sglang_qwen3-8b_decode_hipgraph_mi300x.json.gz"),
        "--json",
    ]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let one_sided =
        v["categories"].as_array().unwrap().iter().any(|c| c["amd"]["count"] == 0 || c["nvidia"]["count"] == 0);
    assert!(one_sided, "the pair has categories on one side only");
    assert!(!out.contains("-0.0"), "negative zero in the JSON");
}

/// `trace --json` adds `structure`: steps and phases with the keys the page reads, or null.
#[test]
fn trace_json_has_the_structure() {
    let v = json(&["trace", &data("traces/amd/vllm_decode_graph_full_replay.json.gz"), "--json"]);
    let s = &v["structure"];
    let step = &s["steps"][0];
    for key in ["start_us", "end_us", "kernels", "phase"] {
        assert!(step.get(key).is_some(), "step lacks {key}: {step}");
    }
    let phase = &s["phases"][0];
    for key in ["phase", "label", "steps", "layers_per_step", "kernels_per_layer", "layer", "time_per_layer_us"] {
        assert!(phase.get(key).is_some(), "phase lacks {key}: {phase}");
    }
    assert_eq!((phase["label"].as_str(), phase["layers_per_step"].as_u64()), (Some("decode"), Some(24)));
    let k = &phase["layer"][0];
    assert_eq!((k["category"].as_str(), k["kernel"].is_string()), (Some("norm"), true));
    let v = json(&["trace", &data("traces/amd/torch_compile_triton_mi300x.json.gz"), "--json"]);
    assert!(v["structure"].is_null(), "nothing repeats in 12 kernels");
    let (code, text, _) = run(&["trace", &data("traces/amd/vllm_decode_graph_full_replay.json.gz")]);
    assert_eq!(code, 0);
    assert!(
        text.contains("Structure: device 2, stream 0: 425 kernels, 1 step")
            && text.contains("Layer of phase 0 (decode): 17 kernels, 24 per step"),
        "{text}"
    );
    // The layer's kernels counted from 1, as the page counts them; the first a norm read out.
    let layer = text.split("Layer of phase 0 (decode)").nth(1).unwrap();
    let first = layer.lines().nth(3).unwrap();
    assert!(first.starts_with(" 1  norm       CK tile: Rmsnorm2dFwd, fused add"), "{layer}");
    assert!(layer.lines().nth(19).unwrap().starts_with("17  "), "{layer}");
}

/// `compare --json` adds `layer_alignment` keyed by the sides' keys, and its fusion
/// differences join the existing list.
#[test]
fn compare_json_has_the_layer_alignment() {
    use fusionscope::analysis::synthetic::serving::{write_serving_trace, ServingSpec};
    use fusionscope::analysis::synthetic::Flavor;
    let dir = temp_dir("fusionscope-serving-cli");
    let mut amd = ServingSpec::new(Flavor::Amd);
    amd.attention_kernels = 2;
    amd.fused_add_norm = false;
    let nv = ServingSpec::new(Flavor::Nvidia);
    let (pa, pn) = (dir.join("amd.json"), dir.join("nv.json"));
    write_serving_trace(std::fs::File::create(&pa).unwrap(), &amd).unwrap();
    write_serving_trace(std::fs::File::create(&pn).unwrap(), &nv).unwrap();
    let (a, n) = (pa.to_str().unwrap(), pn.to_str().unwrap());
    let v = json(&["compare", n, a, "--json"]);
    let alignment = v["layer_alignment"].as_array().unwrap();
    assert_eq!(alignment.len(), 2);
    let decode = &alignment[1];
    assert_eq!((decode["phases"]["amd"].as_u64(), decode["phases"]["nvidia"].as_u64()), (Some(1), Some(1)));
    for row in decode["rows"].as_array().unwrap() {
        assert!(row["category"].is_string());
        for side in ["amd", "nvidia"] {
            let s = &row[side];
            assert!(s.is_null() || (s["kernels"].is_array() && s["time_us"].is_number()), "{row}");
        }
    }
    let differences = v["fusion_differences"].as_array().unwrap();
    assert!(differences.iter().any(|d| d["evidence"]
        .as_str()
        .unwrap()
        .starts_with("layer alignment (amd decode vs nvidia decode): attention")));
    for d in differences {
        for key in [
            "fused_platform",
            "fused_side",
            "fused_kernel",
            "components",
            "unfused_kernels",
            "count",
            "time_us",
            "confidence",
            "evidence",
        ] {
            assert!(d.get(key).is_some(), "difference lacks {key}: {d}");
        }
    }
    let (code, text, _) = run(&["compare", a, n]);
    assert_eq!(code, 0);
    assert!(text.contains("Layer alignment: amd decode vs nvidia decode (8 vs 8 layers per step"), "{text}");
    // These layers differ, so the table says how in its last column.
    let header = |text: &str| {
        let at = text.find("\nLayer alignment:").unwrap_or_else(|| panic!("{text}"));
        text[at..].lines().nth(2).unwrap().trim_end().to_string()
    };
    assert!(header(&text).ends_with("difference"), "{text}");
    // Two eager runs of one model split each layer alike: no column of blanks.
    let pair = ["traces/nvidia/hf_bert-small_eager_h100.json.gz", "traces/amd/hf_bert-small_eager_mi300x.json.gz"];
    let (code, text, _) = run(&["compare", &data(pair[0]), &data(pair[1])]);
    assert_eq!(code, 0);
    assert!(header(&text).ends_with("nvidia time"), "{text}");
}

/// `compare` answers first: the verdict naming both devices, then the findings, the same rows
/// in the text and in `--json` (largest time first, each with its evidence).
#[test]
fn compare_opens_with_the_verdict_and_the_findings_of_its_json() {
    let a = data("traces/nvidia/hf_qwen1.5-0.5b_eager_h100.json.gz");
    let b = data("traces/amd/hf_qwen1.5-0.5b_eager_mi300x.json.gz");
    let v = json(&["compare", &a, &b, "--json"]);
    let (_, raw, _) = run(&["compare", &a, &b, "--json"]);
    let at = |key: &str| raw.find(&format!("\n  \"{key}\": ")).unwrap_or(usize::MAX);
    assert!(at("verdict") < at("findings") && at("findings") < at("platforms"), "the answer comes first in the JSON");
    let verdict = v["verdict"]["text"].as_str().unwrap();
    assert_eq!(
        verdict,
        "MI300X (AMD) takes 43.06 ms of GPU time, H100 SXM (NVIDIA) 45.65 ms: MI300X (AMD) is 1.06× faster (2.58 ms less)"
    );
    let findings = v["findings"].as_array().unwrap();
    assert!((5..=8).contains(&findings.len()), "{findings:#?}");
    let times: Vec<f64> = findings.iter().map(|f| f["time_us"].as_f64().unwrap()).collect();
    assert!(times.windows(2).all(|w| w[0] >= w[1]), "{times:?}");
    let (code, text, _) = run(&["compare", &a, &b]);
    assert_eq!(code, 0);
    assert!(text.starts_with(verdict), "{text}");
    let listed: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with("Findings, ranked by the time they explain"))
        .skip(1)
        .take_while(|l| !l.is_empty())
        .collect();
    assert_eq!(listed.len(), findings.len(), "{text}");
    for (line, f) in listed.iter().zip(findings) {
        assert!(line.contains(f["text"].as_str().unwrap()), "{line} vs {f}");
    }
    // Right after the findings, each side's key (which heads the tables' columns: `amd time`)
    // with its file and platform, before the first table.
    let after: Vec<&str> = text.lines().skip_while(|l| !l.starts_with("Findings")).skip(listed.len() + 2).collect();
    assert!(after[0].starts_with("   amd  hf_qwen1.5-0.5b_eager_mi300x.json.gz: AMD on "), "{text}");
    assert!(after[1].starts_with("nvidia  hf_qwen1.5-0.5b_eager_h100.json.gz: NVIDIA on "), "{text}");
    assert!(after[3].starts_with("Where the time goes"), "{text}");
}

#[test]
fn trace_json_opens_with_the_device_and_its_findings() {
    let path = data("traces/amd/hf_qwen1.5-0.5b_eager_mi300x.json.gz");
    let v = json(&["trace", &path, "--json"]);
    let text = v["verdict"]["text"].as_str().unwrap();
    assert!(text.starts_with("MI300X (AMD): 43.06 ms of GPU time in 1,516 kernels; GPU busy "), "{text}");
    let kinds: Vec<&str> = v["findings"].as_array().unwrap().iter().map(|f| f["kind"].as_str().unwrap()).collect();
    assert!(kinds.contains(&"op") && kinds.contains(&"idle") && kinds.contains(&"opportunity"), "{kinds:?}");
}

/// `report` writes the one-file review report: the verdict and findings of `compare --json`,
/// then the views, with no script.
#[test]
fn report_writes_the_pair_s_overview_as_one_html_file() {
    let a = data("traces/nvidia/hf_bert-small_eager_h100.json.gz");
    let b = data("traces/amd/hf_bert-small_eager_mi300x.json.gz");
    let dir = temp_dir("report");
    let out = dir.join("review.html");
    let (code, _, err) = run(&["report", &a, &b, "-o", out.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let html = std::fs::read_to_string(&out).unwrap();
    let v = json(&["compare", &a, &b, "--json"]);
    assert!(html.contains(&fusionscope::draw::chart::escape_xml(v["verdict"]["text"].as_str().unwrap())));
    for f in v["findings"].as_array().unwrap() {
        assert!(html.contains(&fusionscope::draw::chart::escape_xml(f["text"].as_str().unwrap())), "{f}");
    }
    assert!(!html.to_ascii_lowercase().contains("<script"));
    // A file it cannot write is named.
    let (code, _, err) = run(&["report", &a, "-o", "/nonexistent-dir/r.html"]);
    assert_eq!(code, 2);
    assert!(err.contains("cannot write the report to /nonexistent-dir/r.html"), "{err}");
}
