//! Other profilers' outputs (rocprofv3 JSON, …) read into the format-neutral trace: on the real
//! files in tests/data/formats, each checked against the file's own figures computed here a
//! second, simpler way (serde_json over the whole document); the one dispatch the page uses
//! (`import::open_whole`) against the command line; and a comparison across formats.

mod common;

use common::{data, data_bytes, gunzip, json};
use fusionscope::import::{detect, open_whole, FileKind, Imported};
use fusionscope::trace::{Category, Trace, TraceSummary};

const ROCPROF: &str = "formats/rocprofv3/tracelens_mi350x_results.json.gz";

/// (dispatches, their summed duration in ns) of a rocprofv3 results JSON, from the document
/// parsed whole as a JSON value.
fn rocprof_figures(text: &[u8]) -> (usize, u64) {
    let v: serde_json::Value = serde_json::from_slice(text).unwrap();
    let tools = match &v["rocprofiler-sdk-tool"] {
        serde_json::Value::Array(a) => a.clone(),
        one => vec![one.clone()],
    };
    let mut count = 0;
    let mut ns = 0u64;
    for tool in &tools {
        for d in tool["buffer_records"]["kernel_dispatch"].as_array().unwrap() {
            count += 1;
            ns += d["end_timestamp"].as_u64().unwrap() - d["start_timestamp"].as_u64().unwrap();
        }
    }
    (count, ns)
}

/// The summed kernel time of a trace, in ns (each duration is a whole number of ns / 1000).
fn kernel_ns(trace: &Trace) -> u64 {
    trace.kernels.iter().map(|k| (k.dur * 1000.0).round() as u64).sum()
}

/// The share of GPU time the category table classifies (not `other`), in %.
fn classified_pct(s: &TraceSummary) -> f64 {
    let gpu = s.platforms[0].gpu_time_us;
    let other: f64 = s.categories.iter().filter(|r| r.category == Category::Other).map(|r| r.trace.time_us).sum();
    100.0 * (gpu - other) / gpu
}

fn opened(rel: &str) -> (Trace, TraceSummary, serde_json::Value) {
    let name = rel.rsplit('/').next().unwrap();
    match open_whole(name, &data_bytes(rel)) {
        Ok(Imported::Trace { trace, summary, time }) => {
            let page = serde_json::to_value(fusionscope::trace::time::report::TraceJson {
                summary: &summary,
                time: &time,
            })
            .unwrap();
            (trace, summary, page)
        }
        other => panic!("{rel}: {other:?}"),
    }
}

#[test]
fn rocprof_json_has_the_files_kernel_count_and_gpu_time() {
    let bytes = data_bytes(ROCPROF);
    assert_eq!(detect(&bytes[..64 * 1024]).kind, FileKind::RocprofJson);
    let (count, ns) = rocprof_figures(&gunzip(&bytes));
    let (trace, summary, _) = opened(ROCPROF);
    assert_eq!(trace.kernels.len(), count);
    assert_eq!(kernel_ns(&trace), ns);
    assert_eq!(summary.platforms[0].kernels, count);
    assert_eq!(summary.platforms[0].devices, vec!["AMD Instinct MI350X"]);
    assert_eq!(summary.platforms[0].vendor, fusionscope::trace::Vendor::Amd);
    let pct = classified_pct(&summary);
    assert!(pct >= 98.0, "{pct:.2} % of GPU time classified");
}

#[test]
fn rocprof_json_the_page_gives_what_the_command_line_gives() {
    let (_, _, page) = opened(ROCPROF);
    let cli = json(&["trace", &data(ROCPROF), "--json"]);
    assert_eq!(cli, page);
}

#[test]
fn rocprof_json_cut_short_is_named_with_where() {
    let bytes = data_bytes(ROCPROF);
    let e = open_whole("r.json.gz", &bytes[..bytes.len() / 2]).unwrap_err();
    assert_eq!(e.detected.kind, FileKind::RocprofJson);
    let m = e.message("r.json.gz");
    assert!(m.starts_with("r.json.gz is a rocprofv3 results file (gzip-compressed) but cannot be read: "), "{m}");
    // The text, cut: the place is the end of what there is.
    let text = gunzip(&bytes);
    let cut = &text[..text.len() / 3];
    let e = open_whole("r.json", cut).unwrap_err();
    let m = e.message("r.json");
    assert!(m.contains("malformed rocprofv3 JSON at byte"), "{m}");
    let (code, _, stderr) = common::run(&["trace", "/dev/null/none.json"]);
    assert_ne!(code, 0, "{stderr}");
}
