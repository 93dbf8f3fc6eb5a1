//! Other profilers' outputs (rocprofv3 JSON, …) read into the format-neutral trace: on the real
//! files in tests/data/formats, each checked against the file's own figures computed here a
//! second, simpler way (serde_json over the whole document); the one dispatch the page uses
//! (`import::open_whole`) against the command line; and a comparison across formats.

use crate::common::{data, data_bytes, gunzip, json, trace_kind};
use fusionscope::analysis::{Category, TraceSummary};
use fusionscope::import::{detect, open_whole, Imported};
use fusionscope::trace::Trace;

const ROCPROF: &str = "formats/rocprofv3/tracelens_mi350x_results.json.gz";
const XPLANE: &str = "formats/xplane/tracelens_jax_conv_mi300x.xplane.pb";
const NSYS: &str = "formats/nsys/pipit_saxpy_mpi_a100.sqlite";
/// The XLA profile above as JAX's `perfetto_trace.json.gz` (made from it; tests/data/PROVENANCE.md).
const XLA_JSON: &str = "formats/xla_json/tracelens_jax_conv_mi300x.perfetto_trace.json.gz";

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

/// The share of kernel time the category table classifies (not `other`), in %.
fn classified_pct(s: &TraceSummary) -> f64 {
    let gpu = s.platforms[0].kernel_time_us;
    let other: f64 = s.categories.iter().filter(|r| r.category == Category::Other).map(|r| r.trace.time_us).sum();
    100.0 * (gpu - other) / gpu
}

fn opened(rel: &str) -> (Trace, TraceSummary, serde_json::Value) {
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

/// A protobuf field's value: a varint or a length-delimited slice (other wire types skipped).
enum Field<'a> {
    Varint(u64),
    Bytes(&'a [u8]),
    Other,
}

/// Every field of one protobuf message, read from the wire format by hand: a second reading,
/// independent of the reader's decoder.
fn fields(mut b: &[u8]) -> Vec<(u64, Field<'_>)> {
    fn varint(b: &mut &[u8]) -> u64 {
        let mut v = 0u64;
        for i in 0.. {
            let byte = b[0];
            *b = &b[1..];
            v |= u64::from(byte & 0x7f) << (7 * i);
            if byte & 0x80 == 0 {
                break;
            }
        }
        v
    }
    let mut out = Vec::new();
    while !b.is_empty() {
        let key = varint(&mut b);
        let field = match key & 7 {
            0 => Field::Varint(varint(&mut b)),
            2 => {
                let n = varint(&mut b) as usize;
                let (v, rest) = b.split_at(n);
                b = rest;
                Field::Bytes(v)
            }
            1 => {
                b = &b[8..];
                Field::Other
            }
            5 => {
                b = &b[4..];
                Field::Other
            }
            w => panic!("wire type {w}"),
        };
        out.push((key >> 3, field));
    }
    out
}

/// (kernels, their summed duration in ps) of an XSpace: events that have a start (`offset_ps`,
/// field 2) on the kernel stream lines (`Stream #N(Kernel…)`) of the `/device:GPU:N` planes.
fn xplane_figures(bytes: &[u8]) -> (usize, u64) {
    let text = |f: &Field| match f {
        Field::Bytes(b) => String::from_utf8_lossy(b).into_owned(),
        _ => String::new(),
    };
    let (mut count, mut ps) = (0, 0u64);
    for (_, plane) in fields(bytes).iter().filter(|(n, _)| *n == 1) {
        let Field::Bytes(plane) = plane else { continue };
        let plane = fields(plane);
        if !plane.iter().any(|(n, f)| *n == 2 && text(f).starts_with("/device:GPU:")) {
            continue;
        }
        for (_, line) in plane.iter().filter(|(n, _)| *n == 3) {
            let Field::Bytes(line) = line else { continue };
            let line = fields(line);
            if !line.iter().any(|(n, f)| *n == 2 && text(f).starts_with("Stream #") && text(f).contains("(Kernel")) {
                continue;
            }
            for (_, event) in line.iter().filter(|(n, _)| *n == 4) {
                let Field::Bytes(event) = event else { continue };
                let event = fields(event);
                if event.iter().any(|(n, _)| *n == 2) {
                    count += 1;
                    ps += event
                        .iter()
                        .find_map(|(n, f)| match f {
                            Field::Varint(v) if *n == 3 => Some(*v),
                            _ => None,
                        })
                        .unwrap_or(0);
                }
            }
        }
    }
    (count, ps)
}

#[test]
fn xplane_has_the_files_kernel_count_and_gpu_time() {
    let bytes = data_bytes(XPLANE);
    assert_eq!(detect(&bytes[..64 * 1024]).kind, trace_kind("xplane"));
    let (count, ps) = xplane_figures(&bytes);
    assert!(count > 0);
    let (trace, summary, _) = opened(XPLANE);
    assert_eq!(trace.kernels.len(), count);
    let trace_ps: u64 = trace.kernels.iter().map(|k| (k.dur * 1e6).round() as u64).sum();
    assert_eq!(trace_ps, ps);
    assert_eq!(summary.platforms[0].vendor, fusionscope::trace::Vendor::Amd);
    // 8 GPUs, each a plane.
    let mut devices: Vec<i64> = trace.kernels.iter().map(|k| k.device).collect();
    devices.sort_unstable();
    devices.dedup();
    assert_eq!(devices, (0..8).collect::<Vec<_>>());
    let pct = classified_pct(&summary);
    assert!(pct >= 98.0, "{pct:.2} % of GPU time classified");
    // Every kernel XLA ran for an HLO op is joined to it: one op per execution, which may run
    // several kernels (cuDNN's convolution: an im2col and a GEMM).
    let joined = trace.kernels.iter().filter(|k| k.external_id.is_some()).count();
    let ids: std::collections::HashSet<u64> = trace.cpu_ops.iter().map(|o| o.external_id).collect();
    assert!(trace.kernels.iter().filter_map(|k| k.external_id).all(|id| ids.contains(&id)));
    assert!(
        joined > 0 && trace.cpu_ops.len() < joined,
        "{} ops for {joined} of {} kernels",
        ids.len(),
        trace.kernels.len()
    );
}

#[test]
fn xplane_the_page_gives_what_the_command_line_gives() {
    let (_, _, page) = opened(XPLANE);
    let cli = json(&["trace", &data(XPLANE), "--json"]);
    assert_eq!(cli, page);
}

/// An XLA profile's fusion groups are its HLO's: every kernel XLA ran for an HLO op gets the
/// op's instructions with their shapes and its bytes from the HLO module the profile records.
#[test]
fn xplane_fusion_groups_come_from_the_profiles_hlo() {
    let (_, _, page) = opened(XPLANE);
    let groups = page["fusion"]["groups"].as_array().unwrap();
    let of = |kernel: &str| groups.iter().find(|g| g["kernel"] == kernel && !g["launched_by"].is_null()).unwrap();
    // The transpose fusion: bf16[5120,55862] read and written once (its bitcast moves nothing).
    let t = of("input_transpose_fusion");
    assert_eq!(t["how"], "HLO");
    assert_eq!(t["parts"], serde_json::json!(["transpose"]));
    assert_eq!(t["ops"][0]["op"], "transpose.5.1 = bf16[55862,5120] transpose");
    assert_eq!(t["ops"][0]["input_dims"], serde_json::json!(["bf16[5120,55862]"]));
    let elements = 5120u64 * 55862;
    assert_eq!(t["fused_bytes_per_call"], 2 * elements * 2);
    assert_eq!(t["unfused_bytes_per_call"], 2 * elements * 2);
    // cuDNN's convolution runs two kernels; its bytes (input, filter, output and workspace)
    // are counted once, at the GEMM, which takes the most time.
    let conv_in = 16u64 * 32 * 60 * 104;
    let filter = 5120u64 * 16 * 2 * 2;
    let out = 5120u64 * 34 * 31 * 53;
    let gemm = groups.iter().find(|g| g["category"] == "gemm").unwrap();
    assert_eq!(gemm["launched_by"], "cudnn-conv.1");
    assert_eq!(gemm["fused_bytes_per_call"], (conv_in + filter + out) * 2 + 7_150_336);
    let im2col = of("Im3d2Col");
    assert!(im2col["fused_bytes_per_call"].is_null());
    assert_eq!(im2col["bytes_unknown_cause"], "counted at another kernel");
    // What the HLO does not cover is only ROCm's runtime copies, which run for no HLO op.
    let totals = &page["fusion"]["totals"];
    assert!(totals["bytes_known_pct"].as_f64().unwrap() > 97.0, "{totals}");
    for g in groups.iter().filter(|g| g["how"] != "HLO" && g["bytes_unknown_cause"] != "counted at another kernel") {
        assert!(g["launched_by"].is_null(), "{g}");
    }
}

/// An XLA profile's op table is priced from its HLO: cuDNN's convolution (an im2col and a GEMM
/// per execution, one op) with its FLOPs and bytes, the transposes with their bytes.
#[test]
fn xplane_ops_are_priced_from_the_profiles_hlo() {
    let (_, _, page) = opened(XPLANE);
    let ops = page["ops"].as_array().unwrap();
    let op = |name: &str| ops.iter().find(|o| o["op"] == name).unwrap();
    let conv = op("cudnn-conv.1");
    assert_eq!(conv["model"], "HLO");
    assert_eq!(conv["calls"], 40, "one op per execution, not per kernel");
    let out = 5120u64 * 34 * 31 * 53;
    assert_eq!(conv["flops_per_call"], 2 * out * 16 * 2 * 2);
    assert_eq!(conv["bytes_per_call"], (16u64 * 32 * 60 * 104 + 5120 * 16 * 2 * 2 + out) * 2 + 7_150_336);
    assert_eq!(conv["compute"], "matrix_bf16");
    let t = op("input_transpose_fusion");
    assert_eq!((t["flops_per_call"].as_u64(), t["bytes_per_call"].as_u64()), (Some(0), Some(2 * 5120 * 55862 * 2)));
    assert!(conv["roofline_pct"].as_f64().unwrap() > 0.0);
}

/// (kernels, their summed duration in ps, HLO ops named) of XLA's trace-event JSON, from the
/// document parsed whole: the complete events of the threads named `Stream #N(…)` of the
/// processes named `/device:GPU:N`, less the threads of copies only.
fn xla_json_figures(text: &[u8]) -> (usize, u64, usize) {
    let v: serde_json::Value = serde_json::from_slice(text).unwrap();
    let events = v["traceEvents"].as_array().unwrap();
    let named = |what: &str| -> std::collections::HashMap<(i64, i64), String> {
        events
            .iter()
            .filter(|e| e["ph"] == "M" && e["name"] == what)
            .map(|e| ((e["pid"].as_i64().unwrap(), e["tid"].as_i64().unwrap_or(-1)), e["args"]["name"].to_string()))
            .collect()
    };
    let (processes, threads) = (named("process_name"), named("thread_name"));
    let (mut count, mut ps, mut hlo) = (0, 0u64, 0);
    for e in events.iter().filter(|e| e["ph"] == "X") {
        let pid = e["pid"].as_i64().unwrap();
        let gpu = processes.get(&(pid, -1)).is_some_and(|n| n.starts_with("\"/device:GPU:"));
        let thread = threads.get(&(pid, e["tid"].as_i64().unwrap())).map_or("", |t| t.as_str());
        let kernels = thread.starts_with("\"Stream #") && !thread.contains("Memcpy") && !thread.contains("Memset");
        if gpu && kernels {
            count += 1;
            ps += (e["dur"].as_f64().unwrap() * 1e6).round() as u64;
            hlo += usize::from(e["args"]["hlo_op"].is_string());
        }
    }
    (count, ps, hlo)
}

#[test]
fn xla_json_has_the_files_kernel_count_and_gpu_time() {
    let bytes = data_bytes(XLA_JSON);
    assert_eq!(detect(&bytes).kind, trace_kind("xla-json"), "the whole file is shorter than the detection prefix");
    let (count, ps, hlo) = xla_json_figures(&gunzip(&bytes));
    assert_eq!(count, 235, "the 8 GPUs' kernels of the profile it was made from");
    assert!(hlo > 0 && hlo < count, "{hlo}: copy kernels run for no HLO op");
    let (trace, summary, page) = opened(XLA_JSON);
    assert_eq!(trace.kernels.len(), count);
    let trace_ps: u64 = trace.kernels.iter().map(|k| (k.dur * 1e6).round() as u64).sum();
    assert_eq!(trace_ps, ps);
    // Every kernel XLA ran for an HLO op is joined to it.
    assert_eq!(trace.kernels.iter().filter(|k| k.external_id.is_some()).count(), hlo);
    assert_eq!(trace.cpu_ops.len(), hlo);
    let pct = classified_pct(&summary);
    assert!(pct >= 98.0, "{pct:.2} % of GPU time classified");
    // The same kernels, ops and category table as the profile it was converted from; only
    // the device's model is lost, so no chip is detected.
    let (xplane, xplane_summary, _) = opened(XPLANE);
    let key = |t: &Trace| -> Vec<(String, i64, i64, i64, i64)> {
        t.kernels
            .iter()
            .map(|k| {
                (
                    t.name(k.name).to_string(),
                    (k.ts * 1e3).round() as i64,
                    (k.dur * 1e6).round() as i64,
                    k.device,
                    k.stream,
                )
            })
            .collect()
    };
    assert_eq!(key(&trace), key(&xplane));
    assert_eq!(summary.categories, xplane_summary.categories);
    assert_eq!(summary.platforms[0].devices, vec!["AMD GPU (model not recorded in the trace)"]);
    assert_eq!(page["chip"], serde_json::Value::Null);
}

#[test]
fn xla_json_the_page_gives_what_the_command_line_gives() {
    let (_, _, page) = opened(XLA_JSON);
    let cli = json(&["trace", &data(XLA_JSON), "--json"]);
    assert_eq!(cli, page);
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
    use fusionscope::analysis::view::fusion::no_bytes_statement;
    use fusionscope::analysis::view::time::{no_roofline_statement, op_roofline, RooflineSide};
    for (path, words) in [(ROCPROF, "a rocprofv3 results file")] {
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
}

/// An Nsight Systems export (its copies have bytes, its kernels none) beside a rocprofv3 run:
/// the pair's fusion drawing has no 0 B traffic bar, and says why.
#[test]
fn formats_without_shapes_get_no_zero_byte_bar_but_say_why() {
    use fusionscope::analysis::summary::ClassifiedTrace;
    use fusionscope::analysis::trace_fusion::dag::fusion_with_dag;
    use fusionscope::analysis::trace_fusion::{BuiltIn, FusionOptions};
    use fusionscope::analysis::view::fusion_pair::{aligned_pair, pair_bytes_unknown, pair_traffic_chart};
    use fusionscope::analysis::{compare, Input};
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
