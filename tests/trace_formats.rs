//! Other profilers' outputs (rocprofv3 JSON, …) read into the format-neutral trace: on the real
//! files in tests/data/formats, each checked against the file's own figures computed here a
//! second, simpler way (serde_json over the whole document); the one dispatch the page uses
//! (`import::open_whole`) against the command line; and a comparison across formats.

use crate::common::{data, data_bytes, gunzip, json, trace_kind};
use fusionscope::analysis::{Category, TraceSummary};
use fusionscope::import::{detect, open_whole, Imported};
use fusionscope::trace::Trace;

const ROCPROF: &str = "formats/rocprofv3/tracelens_mi350x_results.json.gz";
pub(crate) const XPLANE: &str = "formats/xplane/tracelens_jax_conv_mi300x.xplane.pb";
const NSYS: &str = "formats/nsys/pipit_saxpy_mpi_a100.sqlite";
/// The XLA profile above as JAX's `perfetto_trace.json.gz` (made from it; tests/data/PROVENANCE.md).
pub(crate) const XLA_JSON: &str = "formats/xla_json/tracelens_jax_conv_mi300x.perfetto_trace.json.gz";

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
pub(crate) fn kernel_ns(trace: &Trace) -> u64 {
    trace.kernels.iter().map(|k| (k.dur * 1000.0).round() as u64).sum()
}

/// The share of kernel time the category table classifies (not `other`), in %.
pub(crate) fn classified_pct(s: &TraceSummary) -> f64 {
    let gpu = s.platforms[0].kernel_time_us;
    let other: f64 = s.categories.iter().filter(|r| r.category == Category::Other).map(|r| r.trace.time_us).sum();
    100.0 * (gpu - other) / gpu
}

pub(crate) fn opened(rel: &str) -> (Trace, TraceSummary, serde_json::Value) {
    let name = rel.rsplit('/').next().unwrap();
    match open_whole(name, &data_bytes(rel)) {
        Ok(Imported::Trace { trace, summary, time, .. }) => {
            // The page's export: its overview, computed as the page computes it, first.
            let overview = fusionscope::analysis::findings::single::trace_overview(&summary, Some(&time));
            let page = serde_json::to_value(fusionscope::analysis::documents::TraceJson {
                overview: Some(&overview),
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
    assert_eq!(detect(&bytes[..64 * 1024]).kind, trace_kind("rocprof-json"));
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
    assert_eq!(e.detected.kind, trace_kind("rocprof-json"));
    let m = e.message("r.json.gz");
    assert!(m.starts_with("r.json.gz is a rocprofv3 results file (gzip-compressed) but cannot be read: "), "{m}");
    // The text, cut: the place is the end of what there is.
    let text = gunzip(&bytes);
    let cut = &text[..text.len() / 3];
    let e = open_whole("r.json", cut).unwrap_err();
    let m = e.message("r.json");
    assert!(m.contains("malformed rocprofv3 JSON at byte"), "{m}");
    let (code, _, stderr) = crate::common::run(&["trace", "/dev/null/none.json"]);
    assert_ne!(code, 0, "{stderr}");
}

#[test]
fn kineto_traces_stay_kineto_traces() {
    // Every PyTorch-profiler trace in tests/data, by its first 64 KiB: not taken for XLA's JSON
    // (both are trace-event JSON with `traceEvents`).
    for dir in ["traces/amd", "traces/nvidia", "multirank"] {
        for entry in std::fs::read_dir(data(dir)).unwrap() {
            let path = entry.unwrap().path();
            let name = path.to_string_lossy().to_string();
            if !name.ends_with(".json.gz") || name.ends_with(".details.json") {
                continue;
            }
            let mut bytes = std::fs::read(&path).unwrap();
            bytes.truncate(64 * 1024);
            assert_eq!(detect(&bytes).kind, trace_kind("kineto"), "{name}");
        }
    }
    // A Kineto trace without its top-level keys in the head still is one: its process names
    // are not XLA's planes.
    let kineto = br#"{"traceEvents": [{"ph": "M", "pid": 0, "name": "process_name", "args": {"name": "python3 1234"}},
        {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1, "dur": 2}]}"#;
    assert_eq!(detect(kineto).kind, trace_kind("kineto"));
    let t = fusionscope::formats::read_trace(kineto).unwrap();
    assert_eq!(t.kernels.len(), 1);
}

#[test]
fn compare_works_across_formats() {
    // A Kineto trace of an H100 against rocprofv3's JSON of an MI350X, and the XLA profile.
    let nv = data("traces/nvidia/hf_bert-small_eager_h100.json.gz");
    let nv_kernels = fusionscope::formats::read_trace(&data_bytes("traces/nvidia/hf_bert-small_eager_h100.json.gz"))
        .unwrap()
        .kernels
        .len();
    for (rel, kernels) in [
        (ROCPROF, opened(ROCPROF).0.kernels.len()),
        (XPLANE, opened(XPLANE).0.kernels.len()),
        (XLA_JSON, opened(XLA_JSON).0.kernels.len()),
    ] {
        let v = json(&["compare", &nv, &data(rel), "--json"]);
        assert_eq!(v["platforms"][0]["vendor"], "AMD", "{rel}");
        assert_eq!(v["platforms"][1]["vendor"], "NVIDIA", "{rel}");
        assert_eq!(v["platforms"][0]["kernels"], kernels, "{rel}");
        assert_eq!(v["platforms"][1]["kernels"], nv_kernels, "{rel}");
        assert!(!v["categories"].as_array().unwrap().is_empty(), "{rel}");
    }
}

#[test]
fn nsys_sqlite_has_the_files_kernel_count_and_gpu_time() {
    let bytes = data_bytes(NSYS);
    assert_eq!(detect(&bytes[..64 * 1024]).kind, trace_kind("sqlite"));
    // The file's own figures, by SQL.
    let conn = rusqlite::Connection::open_with_flags(data(NSYS), rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap();
    let (count, ns): (i64, i64) = conn
        .query_row("SELECT count(*), sum(end - start) FROM CUPTI_ACTIVITY_KIND_KERNEL", [], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .unwrap();
    let copies: i64 = conn.query_row("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMCPY", [], |r| r.get(0)).unwrap();
    let gpu: String = conn.query_row("SELECT name FROM TARGET_INFO_GPU", [], |r| r.get(0)).unwrap();
    let (trace, summary, _) = opened(NSYS);
    assert_eq!(trace.kernels.len() as i64, count);
    assert_eq!(kernel_ns(&trace) as i64, ns);
    assert_eq!(trace.transfers.len() as i64, copies);
    assert_eq!(summary.platforms[0].devices, vec![gpu]);
    assert_eq!(summary.platforms[0].vendor, fusionscope::trace::Vendor::Nvidia);
    let pct = classified_pct(&summary);
    assert!(pct >= 98.0, "{pct:.2} % of GPU time classified");
}

/// Nsight Systems records each copy's stream: the saxpy run's stream copies between its
/// kernels, so its gaps are the GPU's idle time, not that plus the copies, and no kernel
/// waited on the host for its launch (each was launched while the copy before it ran).
#[test]
fn nsys_sqlite_copies_keep_their_stream_busy() {
    let v = json(&["trace", &data(NSYS), "--json"]);
    let stream = &v["waits"]["streams"][0];
    assert_eq!(stream["events"], 20, "5 kernels and 15 copies: {stream}");
    let gaps: f64 = ["host_wait_us", "kernel_wait_us", "other_us"].iter().map(|k| stream[k].as_f64().unwrap()).sum();
    let idle = v["timeline"]["idle_us"].as_f64().unwrap();
    assert!((gaps - idle).abs() < 0.01, "gaps {gaps} µs against idle {idle} µs");
    assert_eq!(v["launch_cost"]["host_bound"]["stretches"], 0, "{}", v["launch_cost"]);
    let saving = v["launch_cost"]["graph_saving_us"].as_f64().unwrap();
    assert!(saving <= idle, "a graph cannot remove more than the idle time: {saving} > {idle}");
}

#[test]
fn nsys_sqlite_the_page_gives_what_the_command_line_gives() {
    let (_, _, page) = opened(NSYS);
    let cli = json(&["trace", &data(NSYS), "--json"]);
    assert_eq!(cli, page);
}

#[test]
fn nsys_sqlite_compares_with_rocprof_json() {
    // An Nsight Systems export against a rocprofv3 run: NVIDIA and AMD, each its own format.
    let v = json(&["compare", &data(NSYS), &data(ROCPROF), "--json"]);
    assert_eq!(v["platforms"][0]["vendor"], "AMD");
    assert_eq!(v["platforms"][1]["vendor"], "NVIDIA");
    assert_eq!(v["platforms"][0]["kernels"], opened(ROCPROF).0.kernels.len());
    assert_eq!(v["platforms"][1]["kernels"], opened(NSYS).0.kernels.len());
}

#[test]
fn nsys_sqlite_damaged_or_of_another_tool_is_named() {
    let bytes = data_bytes(NSYS);
    let e = open_whole("cut.sqlite", &bytes[..bytes.len() / 3]).unwrap_err();
    assert_eq!(e.detected.kind, trace_kind("sqlite"));
    let m = e.message("cut.sqlite");
    assert!(
        m.starts_with("cut.sqlite is an SQLite database but cannot be read: SQLite cannot read the database"),
        "{m}"
    );
    let conn = rusqlite::Connection::open_in_memory().unwrap();
    conn.execute_batch("CREATE TABLE moz_places (id INTEGER);").unwrap();
    let other = conn.serialize(rusqlite::MAIN_DB).unwrap().to_vec();
    let m = open_whole("places.sqlite", &other).unwrap_err().message("places.sqlite");
    assert!(m.contains("neither an Nsight Systems export") && m.contains("moz_places"), "{m}");
}

#[test]
fn each_formats_devices_map_to_a_chip_preset() {
    for (rel, chip) in [(ROCPROF, "MI350X"), (NSYS, "A100 40GB"), (XPLANE, "MI300X")] {
        let (_, _, page) = opened(rel);
        assert_eq!(page["chip"]["name"], chip, "{rel}: {}", page["chip"]);
    }
}

#[test]
fn damaged_copies_of_each_file_fail_cleanly_or_read() {
    // Every 101st byte of each file flipped, one at a time in 40 places, and each file cut at
    // 40 places: never a panic or a hang; an error names the file's kind.
    for (rel, kind) in
        [(XPLANE, trace_kind("xplane")), (NSYS, trace_kind("sqlite")), (XLA_JSON, trace_kind("xla-json"))]
    {
        let bytes = data_bytes(rel);
        let step = bytes.len() / 40;
        for i in 1..40 {
            let mut damaged = bytes.clone();
            let at = i * step + 101;
            damaged[at] ^= 0x5a;
            if let Err(e) = open_whole("d", &damaged) {
                assert_eq!(e.detected.kind, kind, "{rel} flipped at {at}: {}", e.message("d"));
            }
            if let Err(e) = open_whole("c", &bytes[..i * step]) {
                assert_eq!(e.detected.kind, kind, "{rel} cut at {}: {}", i * step, e.message("c"));
            }
        }
    }
}

#[test]
fn summary_only_gives_each_formats_kernels_and_gpu_time() {
    for rel in [ROCPROF, XPLANE, NSYS, XLA_JSON] {
        let (trace, summary, _) = opened(rel);
        let v = json(&["trace", "--summary-only", &data(rel), "--json"]);
        assert_eq!(v["platforms"][0]["kernels"], trace.kernels.len(), "{rel}");
        let gpu = v["platforms"][0]["gpu_time_us"].as_f64().unwrap();
        assert!((gpu - summary.platforms[0].gpu_time_us).abs() < 1e-3, "{rel}: {gpu}");
        assert_eq!(v["platforms"][0]["kernel_time_us"].as_f64().unwrap(), summary.platforms[0].kernel_time_us, "{rel}");
        // The idle split by cause, streamed, is the whole trace's (less its step windows).
        let mut whole = json(&["trace", &data(rel), "--json"])["waits"].clone();
        if let Some(w) = whole.as_object_mut() {
            w.remove("steps");
        }
        assert_eq!(v["waits"], whole, "{rel}");
    }
}

#[test]
fn the_workers_slices_give_the_whole_files_result() {
    // The page's worker feeds a file in slices; the result must not depend on them.
    for rel in [ROCPROF, XPLANE, NSYS, XLA_JSON] {
        let bytes = data_bytes(rel);
        let (whole, summary, _) = opened(rel);
        for n in [4096, 1 << 20] {
            let name = rel.rsplit('/').next().unwrap();
            match fusionscope::import::open_in_slices(name, &bytes, n) {
                Ok(Imported::Trace { trace, summary: s, .. }) => {
                    assert_eq!(trace.kernels, whole.kernels, "{rel} in slices of {n}");
                    assert_eq!(s.platforms, summary.platforms, "{rel} in slices of {n}");
                }
                other => panic!("{rel}: {other:?}"),
            }
        }
    }
}

#[test]
fn what_each_format_lacks_is_said_once_naming_the_format() {
    for (rel, format, words) in [
        (ROCPROF, "rocprof_json", "a rocprofv3 results file"),
        (XPLANE, "xplane", "an XLA profile"),
        (NSYS, "nsys", "an Nsight Systems export"),
        (XLA_JSON, "xla_json", "an XLA trace-event JSON"),
    ] {
        let (code, text, stderr) = crate::common::run(&["trace", &data(rel)]);
        assert_eq!(code, 0, "{rel}: {stderr}");
        // Once, naming the format; never as a PyTorch trace recorded without record_shapes.
        assert_eq!(text.matches("This trace is ").count(), 1, "{rel}:\n{text}");
        assert!(text.contains(&format!("This trace is {words}")), "{rel}");
        assert!(!text.contains("record_shapes"), "{rel}:\n{text}");
        let (_, _, page) = opened(rel);
        assert_eq!(page["format"], format, "{rel}");
        // The views that need ops say why they have none: the op table of a format without
        // ops, and every fusion group whose bytes are unknown for want of ops or shapes.
        if page["ops"].as_array().unwrap().is_empty() {
            assert!(text.contains(&format!("Ops by GPU time (none: {words} records no framework ops)")), "{rel}");
        }
        for g in page["fusion"]["groups"].as_array().unwrap() {
            let elsewhere = g["bytes_unknown_cause"] == "counted at another kernel";
            if g["fused_bytes_per_call"].is_null() && g["kind"] != "memcpy" && !elsewhere {
                let why = g["bytes_unknown"].as_str().unwrap_or("");
                assert!(why.starts_with(words), "{rel}: {} — {why}", g["kernel"]);
            }
        }
    }
    // A Kineto trace keeps its own wording and has no `format` key.
    let (_, _, page) = opened("traces/nvidia/hf_bert-small_eager_h100.json.gz");
    assert!(page.get("format").is_none());
}

/// A format that records no shapes (rocprofv3, XLA) says so where the traffic bars and the
/// roofline would be, instead of drawing 0 B bars or an empty chart.
#[test]
fn a_format_without_shapes_says_so_in_place_of_bars_and_roofline() {
    use fusionscope::view::fusion::no_bytes_statement;
    use fusionscope::view::time::{no_roofline_statement, op_roofline, RooflineSide};
    let (path, words) = (ROCPROF, "a rocprofv3 results file");
    let Ok(Imported::Trace { time, .. }) = open_whole(path, &data_bytes(path)) else { panic!("{path}") };
    let f = time.fusion.as_ref().unwrap();
    assert_eq!((f.totals.fused_bytes, f.totals.unfused_bytes), (0, 0), "{path}");
    let lacks = time.format.lacks().unwrap();
    assert!(lacks.contains(words), "{lacks}");
    assert_eq!(
        no_bytes_statement(f, time.format).unwrap(),
        format!("No shapes recorded in this format: bytes unknown, so no traffic bars. {lacks}")
    );
    // The chip is known (MI350X, MI300X), the roofline has no point: no chart, a sentence.
    assert!(time.chip.is_some(), "{path}");
    assert!(op_roofline(&[RooflineSide { label: "ops", time: &time, color: "" }]).is_none(), "{path}");
    assert!(no_roofline_statement(&time).starts_with("No shapes recorded in this format: FLOPs and bytes unknown"));
}

/// An Nsight Systems export (its copies have bytes, its kernels none) beside a rocprofv3 run:
/// the pair's fusion drawing has no 0 B traffic bar, and says why.
#[test]
fn formats_without_shapes_get_no_zero_byte_bar_but_say_why() {
    use fusionscope::analysis::summary::ClassifiedTrace;
    use fusionscope::analysis::trace_fusion::dag::fusion_with_dag;
    use fusionscope::analysis::trace_fusion::{BuiltIn, FusionOptions};
    use fusionscope::analysis::{compare, Input};
    use fusionscope::view::fusion_pair::{aligned_pair, pair_bytes_unknown, pair_traffic_chart};
    let open = |path: &str| match open_whole(path, &data_bytes(path)).unwrap() {
        Imported::Trace { trace, .. } => trace,
        other => panic!("{path}: {other:?}"),
    };
    let traces = [open(NSYS), open(ROCPROF)];
    let c = compare(Input::new(&traces[0], Some("a.sqlite")), Input::new(&traces[1], Some("b.json.gz")));
    let order: Vec<usize> =
        c.platforms.iter().map(|p| if p.file.as_deref() == Some("a.sqlite") { 0 } else { 1 }).collect();
    let analysed: Vec<_> = order
        .iter()
        .map(|&i| {
            let side = ClassifiedTrace::new(&traces[i]);
            let (f, d) = fusion_with_dag(&side, &FusionOptions::rules_only(BuiltIn::Inductor.rules()));
            (f, d.unwrap())
        })
        .collect();
    let p = aligned_pair(&c, [(&analysed[0].0, &analysed[0].1), (&analysed[1].0, &analysed[1].1)]).unwrap();
    assert!(p.sides.iter().all(|s| s.known == 0 && s.unknown > 0), "{:?}", p.sides);
    assert_eq!(pair_traffic_chart(&p), None, "no 0 B bars");
    let keys: Vec<&str> = p.sides.iter().map(|s| s.key.as_str()).collect();
    assert_eq!(
        pair_bytes_unknown(&p).unwrap(),
        format!(
            "No traffic bar for {} and {}: bytes unknown for every launch drawn (the trace's format records no shapes, or its ops none a model knows).",
            keys[0], keys[1]
        )
    );
}
