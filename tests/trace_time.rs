//! Where the time goes, on real traces, against a peer's numbers: the GPU timeline and the
//! per-op table of the shared Qwen1.5-0.5B pair (H100, MI300X) match TraceLens's report for the
//! same files (`tests/data/reference/tracelens/`, PROVENANCE.md there) within the tolerances
//! docs/trace-analysis.md states: 0.5 % for the timeline.

mod common;

use common::{data_text, gunzip, trace_bytes};
use fusionscope::trace::summary::ClassifiedTrace;
use fusionscope::trace::timeline::timelines;
use fusionscope::trace::{classify, read_trace};

/// `type,time ms,percent` rows of a TraceLens `gpu_timeline.csv`, in µs.
fn reference_timeline(folder: &str) -> std::collections::HashMap<String, f64> {
    data_text(&format!("reference/tracelens/{folder}/gpu_timeline.csv"))
        .lines()
        .skip(1)
        .filter_map(|l| {
            let mut f = l.split(',');
            Some((f.next()?.to_string(), f.next()?.parse::<f64>().ok()? * 1000.0))
        })
        .collect()
}

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
        let side = ClassifiedTrace::new(&trace, &classify);
        let devices = timelines(&side);
        assert_eq!(devices.len(), 1, "{file}: one device");
        // TraceLens's window is the GPU-side ProfilerStep#6 range.
        let steps = &devices[0].steps;
        assert_eq!(steps.iter().map(|s| s.window.as_str()).collect::<Vec<_>>(), vec!["ProfilerStep#6"], "{file}");
        let s = &steps[0];
        let r = reference_timeline(folder);
        for (ours, key) in [
            (s.total_us, "total_time"),
            (s.busy_us, "busy_time"),
            (s.idle_us, "idle_time"),
            (s.computation_us, "computation_time"),
            (s.exposed_communication_us, "exposed_comm_time"),
            (s.communication_us, "total_comm_time"),
            (s.memcpy_us, "total_memcpy_time"),
            (s.exposed_memcpy_us, "exposed_memcpy_time"),
        ] {
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
    use common::{data, json, run};
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
    assert_eq!((v["chip"]["name"].as_str(), v["chip"]["detected_from"].as_str()), (Some("H100 SXM"), Some("--chip H100")));
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
