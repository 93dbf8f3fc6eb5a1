//! XLA's profiles read into the format-neutral trace: `*.xplane.pb` (checked against a second
//! reading of the protobuf by hand) and JAX's `perfetto_trace.json.gz`, their kernels, GPU time
//! and HLO fusion groups, and the page's dispatch against the command line.

use crate::common::{data, data_bytes, gunzip, json, trace_kind};
use crate::trace_formats::{classified_pct, opened, XLA_JSON, XPLANE};
use fusionscope::import::detect;
use fusionscope::trace::Trace;

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

/// A jax[cpu] profile has no GPU plane: its ops ran on the host's CPU client thread, and the
/// report reads them as a CPU run's kernels, each with its HLO group and bytes, in the CPU's
/// words; the page (through the worker's reader) gives what the command line gives.
#[test]
fn a_jax_cpu_profile_is_a_cpu_run_with_its_hlo_groups() {
    let file = "compiled/jax_block_cpu.xplane.pb";
    let v = json(&["trace", &data(file), "--json"]);
    assert_eq!(v["platforms"][0]["devices"], serde_json::json!([fusionscope::trace::CPU_DEVICE]), "{}", v["platforms"]);
    // 29 instructions of the entry that do work, three calls.
    assert_eq!(v["platforms"][0]["kernels"], 87);
    let groups = v["fusion"]["groups"].as_array().unwrap();
    assert_eq!(groups.len(), 29);
    assert!(groups.iter().all(|g| g["how"] == "HLO" && g["calls"] == 3), "{groups:?}");
    // The first of YNNPACK's dots, as the HLO has it; its name keeps XLA's `.N`.
    let dot = groups.iter().find(|g| g["kernel"] == "ynn_fusion.5").unwrap();
    assert_eq!(dot["parts"], serde_json::json!(["dot"]));
    assert_eq!(v["fusion"]["totals"]["bytes_known_pct"], 100.0);
    assert_eq!(v["fusion"]["totals"]["processor"], "cpu");
    let (code, text, err) = crate::common::run(&["trace", &data(file)]);
    assert_eq!(code, 0, "{err}");
    assert!(text.starts_with("CPU: 427.85 µs of CPU time in 87 kernels"), "{text}");
    assert!(text.contains("\nFusion: 29 groups of 87 CPU events") && !text.contains("GPU"), "{text}");
    let (trace, _, page) = opened(file);
    assert_eq!(trace.kernels.len(), 87);
    assert_eq!(page, v);
}

/// The CPU run read as a job's rank speaks of the CPU too: its verdict, its idle finding and
/// the page's strip of where its time went.
#[test]
fn a_jax_cpu_profile_read_as_a_rank_is_a_cpu_rank() {
    let file = data("compiled/jax_block_cpu.xplane.pb");
    let (code, text, err) = crate::common::run(&["ranks", &file]);
    assert_eq!(code, 0, "{err}");
    assert!(!text.contains("GPU"), "{text}");
    assert!(text.starts_with("1 rank of one job (world size unknown) over 8.03 ms"), "{text}");
    assert!(text.contains("; each CPU busy 427.85 µs\n"), "{text}");
    assert!(
        text.contains("Rank 0's CPU is idle 7.60 ms of its 8.03 ms span (94.7 %): no compiled kernel ran"),
        "{text}"
    );
    let v = json(&["ranks", &file, "--json"]);
    let report: fusionscope::analysis::ranks::job::JobReport = serde_json::from_value(v).unwrap();
    assert_eq!(report.processor(), fusionscope::trace::platform::Processor::Cpu);
    let strips = fusionscope::view::ranks::rank_strips(&report);
    assert!(strips.contains("<title>Each rank&#39;s CPU time: computation,"), "{strips}");
}

/// Two CPU runs compared speak of the CPU: the verdict, each side's busy line and the
/// category finding, in the text and in the JSON's verdict sides.
#[test]
fn two_jax_cpu_profiles_compared_are_cpu_runs() {
    let (a, b) = (data("compiled/jax_block_cpu.xplane.pb"), data("compiled/jax_convnet_cpu.xplane.pb"));
    let (code, text, err) = crate::common::run(&["compare", &a, &b]);
    assert_eq!(code, 0, "{err}");
    assert!(!text.contains("GPU"), "{text}");
    assert!(
        text.starts_with("jax_block_cpu.xplane.pb takes 427.85 µs of CPU time, jax_convnet_cpu.xplane.pb 539.31 µs"),
        "{text}"
    );
    assert!(
        text.contains("\njax_block_cpu.xplane.pb: CPU busy 427.85 µs, idle 7.60 ms (95 %) of a 8.03 ms span\n"),
        "{text}"
    );
    assert!(text.contains("(67.6 % of CPU time) on jax_block_cpu.xplane.pb"), "{text}");
    let v = json(&["compare", &a, &b, "--json"]);
    let sides = v["verdict"]["sides"].as_array().unwrap();
    assert!(sides.iter().all(|s| s["processor"] == "cpu"), "{sides:?}");
    // The one-file report of the pair, and of one of them: its charts' titles and bars too.
    let dir = crate::common::temp_dir("cpu-reports");
    for (files, out) in [(vec![a.as_str(), b.as_str()], "pair.html"), (vec![a.as_str()], "one.html")] {
        let out = dir.join(out);
        let mut args = vec!["report"];
        args.extend(files);
        args.extend(["-o", out.to_str().unwrap()]);
        let (code, _, err) = crate::common::run(&args);
        assert_eq!(code, 0, "{err}");
        let html = std::fs::read_to_string(&out).unwrap();
        assert!(html.contains("Share of CPU time by kernel category"), "{}", out.display());
        assert!(!html.contains("GPU"), "{}: {}", out.display(), html.lines().find(|l| l.contains("GPU")).unwrap_or(""));
    }
}

/// XLA's CPU client runs a model's dots as `ynn_fusion.N` (calls into YNNPACK): the name says
/// nothing, and the rules leave it `other`; the profile's HLO says each is a `dot`. The whole
/// reading, the summary-only fold and the streamed export read the name from its HLO alike.
#[test]
fn kernels_whose_names_say_nothing_are_classified_from_their_hlo_in_every_reading() {
    let file = data("compiled/jax_block_cpu.xplane.pb");
    assert_eq!(
        fusionscope::classify::classify("ynn_fusion.5").category,
        fusionscope::classify::category::Category::Other
    );
    let categories = |v: &serde_json::Value| -> Vec<(String, u64, String)> {
        let rows = v["categories"].as_array().unwrap();
        rows.iter()
            .map(|r| {
                let t = &r["trace"];
                (
                    r["category"].as_str().unwrap().to_string(),
                    t["count"].as_u64().unwrap(),
                    format!("{:.3}", t["time_us"].as_f64().unwrap()),
                )
            })
            .collect()
    };
    let whole = json(&["trace", &file, "--json"]);
    let want: Vec<(String, u64, String)> = vec![
        ("gemm".into(), 18, "289.349".into()),
        ("elementwise".into(), 33, "69.541".into()),
        ("reduction".into(), 24, "44.772".into()),
        ("memory".into(), 12, "24.186".into()),
    ];
    assert_eq!(categories(&whole), want);
    let gemm = whole["categories"][0]["trace"]["kernels"].as_array().unwrap();
    assert!(gemm.iter().all(|k| k["name"].as_str().unwrap().starts_with("ynn_fusion")), "{gemm:?}");
    let summary_only = json(&["trace", "--summary-only", &file, "--json"]);
    assert_eq!(categories(&summary_only), want);
    // Their means and shares too, though the fold sums each category's durations in another
    // order: the reduction's mean, 44.772 µs / 24, sits on a rounding boundary.
    let figures = |v: &serde_json::Value| -> Vec<(f64, f64)> {
        let rows = v["categories"].as_array().unwrap();
        rows.iter()
            .map(|r| (r["trace"]["mean_us"].as_f64().unwrap(), r["trace"]["share_pct"].as_f64().unwrap()))
            .collect()
    };
    assert_eq!(figures(&summary_only), figures(&whole));
    // The streamed export's kernels table says the same category for every kernel.
    let dir = crate::common::temp_dir("xla-hlo-classes");
    let out = dir.join("export");
    let (code, _, err) = crate::common::run(&["export", "--streamed", "-o", out.to_str().unwrap(), &file]);
    assert_eq!(code, 0, "{err}");
    let q = "SELECT category, COUNT(*) AS n FROM kernels WHERE name LIKE 'ynn_fusion%' GROUP BY category";
    let v = json(&["fleet", out.to_str().unwrap(), "--sql", q, "--json"]);
    assert_eq!(v["rows"], serde_json::json!([["gemm", 18]]), "{v}");
}

/// The same block's profile as JAX's trace-event JSON (a later run of the same module): the
/// host CPU's HLO ops are its kernels too, the same 29 ops three times each as the protobuf
/// has them, each launched by its HLO op; the JSON carries no HLO module, so no bytes.
#[test]
fn a_jax_cpu_perfetto_trace_is_a_cpu_run_with_the_protobufs_ops() {
    let json_file = "compiled/jax_block_cpu.perfetto_trace.json.gz";
    let (trace, _, page) = opened(json_file);
    let protobuf = fusionscope::formats::xplane::read_xplane(&data_bytes("compiled/jax_block_cpu.xplane.pb")).unwrap();
    assert_eq!(trace.devices.len(), 1);
    assert_eq!(trace.devices[0].name, fusionscope::trace::CPU_DEVICE);
    let calls = |t: &Trace| {
        let mut n: std::collections::BTreeMap<String, usize> = std::collections::BTreeMap::new();
        for k in &t.kernels {
            *n.entry(t.name(k.name).to_string()).or_default() += 1;
        }
        n
    };
    assert_eq!(calls(&trace), calls(&protobuf));
    assert_eq!(trace.kernels.len(), 87);
    // Each kernel's op is the HLO op of its name.
    let ops: std::collections::BTreeMap<u64, &str> =
        trace.cpu_ops.iter().map(|o| (o.external_id, trace.name(o.name))).collect();
    for k in &trace.kernels {
        assert_eq!(ops[&k.external_id.unwrap()], trace.name(k.name));
    }
    assert_eq!(page["fusion"]["totals"]["processor"], "cpu");
    assert_eq!(json(&["trace", &data(json_file), "--json"]), page);
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
