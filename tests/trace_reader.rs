//! The Kineto reader on every real trace in tests/data/traces, fed in tiny chunks as well as
//! whole, plus the format variations of the notes and malformed input (never a panic).

use crate::common::{gunzip, trace_bytes};
use fusionscope::formats::{read_trace, TraceError, TraceReader};
use fusionscope::trace::platform::{platform, VendorEvidence};
use fusionscope::trace::{Trace, Vendor};
use proptest::prelude::*;

fn read_chunked(bytes: &[u8], chunk: usize) -> Result<Trace, TraceError> {
    let mut r = TraceReader::new();
    for c in bytes.chunks(chunk) {
        r.feed(c)?;
    }
    assert_eq!(r.bytes_consumed(), bytes.len() as u64);
    r.finish()
}

/// What must not depend on chunking: every kept record, with names resolved.
fn fingerprint(t: &Trace) -> String {
    let mut s = String::new();
    for k in &t.kernels {
        s += &format!(
            "K {} {} {} {} {} {:?} {:?} {}\n",
            t.name(k.name),
            k.ts,
            k.dur,
            k.device,
            k.stream,
            k.correlation,
            k.external_id,
            k.graph_node
        );
    }
    for o in &t.cpu_ops {
        s += &format!("O {} {} {} {}\n", t.name(o.name), o.ts, o.external_id, o.annotation);
    }
    for x in &t.transfers {
        s += &format!("T {} {} {:?}\n", t.name(x.name), x.dur, x.bytes);
    }
    let mut launches: Vec<_> =
        t.launches.iter().map(|(c, l)| (*c, t.name(l.name).to_string(), l.external_id)).collect();
    launches.sort();
    s += &format!("L {launches:?}\nD {:?}\nV {:?}\nE {} {}\n", t.devices, t.versions, t.event_count, t.json_bytes);
    s
}

/// (file, vendor, evidence, devices, kernels) from tests/data/PROVENANCE.md.
const TRACES: [(&str, Vendor, VendorEvidence, &str, usize); 9] = [
    (
        "nvidia/hf_qwen1.5-0.5b_eager_h100.json.gz",
        Vendor::Nvidia,
        VendorEvidence::VersionKeys,
        "NVIDIA H100 80GB HBM3",
        1465,
    ),
    (
        "amd/hf_qwen1.5-0.5b_eager_mi300x.json.gz",
        Vendor::Amd,
        VendorEvidence::VersionKeys,
        "AMD Instinct MI300X VF",
        1516,
    ),
    (
        "nvidia/hf_bert-small_eager_h100.json.gz",
        Vendor::Nvidia,
        VendorEvidence::VersionKeys,
        "NVIDIA H100 80GB HBM3",
        60,
    ),
    ("amd/hf_bert-small_eager_mi300x.json.gz", Vendor::Amd, VendorEvidence::VersionKeys, "AMD Instinct MI300X VF", 60),
    ("nvidia/tracelens_eager_b200.json.gz", Vendor::Nvidia, VendorEvidence::VersionKeys, "NVIDIA B200", 768),
    ("nvidia/hta_a100_compiled_rank0.json.gz", Vendor::Nvidia, VendorEvidence::WarpSize, "NVIDIA A100-SXM4-80GB", 6080),
    (
        "amd/sglang_qwen3-8b_decode_hipgraph_mi300x.json.gz",
        Vendor::Amd,
        VendorEvidence::VersionKeys,
        "AMD Instinct MI300X",
        555,
    ),
    ("amd/torch_compile_triton_mi300x.json.gz", Vendor::Amd, VendorEvidence::VersionKeys, "AMD Instinct MI300X", 12),
    ("amd/hta_mi250_minitoy_train_rocm6.2.json.gz", Vendor::Amd, VendorEvidence::WarpSize, "AMD Radeon Graphics", 14),
];

#[test]
fn every_real_trace_reads_with_vendor_devices_and_kernel_count() {
    for (file, vendor, evidence, device, kernels) in TRACES {
        let t = read_trace(&trace_bytes(file)).unwrap_or_else(|e| panic!("{file}: {e}"));
        let p = platform(&t);
        assert_eq!((p.vendor, p.evidence), (vendor, evidence), "{file}");
        assert_eq!(p.devices, vec![device.to_string()], "{file}");
        assert_eq!(p.kernels, kernels, "{file}");
        assert!(p.kernel_time_us > 0.0, "{file}");
        assert!(t.kernels.windows(2).all(|w| w[0].ts <= w[1].ts), "{file}: kernels sorted by start");
    }
}

#[test]
fn compressed_input_in_tiny_chunks_reads_the_same() {
    for (file, ..) in TRACES {
        let bytes = trace_bytes(file);
        let whole = fingerprint(&read_chunked(&bytes, bytes.len()).unwrap());
        // 1-byte chunks on the small files; the large ones would only slow the suite down.
        let sizes: &[usize] = if bytes.len() < 200_000 { &[1, 7, 64] } else { &[7, 64] };
        for &chunk in sizes {
            assert_eq!(fingerprint(&read_chunked(&bytes, chunk).unwrap()), whole, "{file} in {chunk}-byte chunks");
        }
    }
}

#[test]
fn plain_json_in_tiny_chunks_reads_the_same() {
    for file in [
        "amd/hf_bert-small_eager_mi300x.json.gz",
        "amd/torch_compile_triton_mi300x.json.gz",
        "amd/hta_mi250_minitoy_train_rocm6.2.json.gz",
    ] {
        let plain = gunzip(&trace_bytes(file));
        let gz = fingerprint(&read_trace(&trace_bytes(file)).unwrap());
        for chunk in [1, 7, 64, plain.len()] {
            assert_eq!(fingerprint(&read_chunked(&plain, chunk).unwrap()), gz, "{file} plain in {chunk}-byte chunks");
        }
    }
}

#[test]
fn graph_replay_kernels_share_one_correlation_and_have_no_op() {
    let t = read_trace(&trace_bytes("amd/sglang_qwen3-8b_decode_hipgraph_mi300x.json.gz")).unwrap();
    let replay: Vec<_> = t.kernels.iter().filter(|k| k.correlation == Some(92178)).collect();
    assert_eq!(replay.len(), 544);
    assert!(replay.iter().all(|k| k.graph_node && k.external_id.is_none()));
    let ops = t.kernel_ops();
    assert!(ops.iter().filter(|o| o.is_none()).count() >= 544);
}

#[test]
fn kernels_join_ops_through_external_id_or_launch() {
    let t = read_trace(&trace_bytes("nvidia/hf_bert-small_eager_h100.json.gz")).unwrap();
    let ops = t.kernel_ops();
    assert!(ops.iter().all(|o| o.is_some()), "every bert kernel has an External id");
    let names: Vec<&str> = ops.iter().map(|o| t.name(t.cpu_ops[o.unwrap()].name)).collect();
    assert!(names.contains(&"aten::addmm"));
}

const VARIANTS: &str = r#"[
 {"ph":"M","name":"process_name","pid":0,"args":{"name":"python3"}},
 {"ph":"i","name":"Iteration Start: PyTorch Profiler","pid":"","tid":"","ts":1,"s":"g"},
 {"ph":"X","name":"PyTorch Profiler (0)","cat":"Trace","pid":"Spans","tid":"PyTorch Profiler","ts":0,"dur":100},
 {"ph":"X","cat":"cpu_op","name":"aten::mm","pid":7,"tid":7,"ts":10,"dur":5,"args":{"External id":3}},
 {"ph":"X","cat":"cuda_runtime","name":"hipExtModuleLaunchKernel","pid":7,"tid":7,"ts":11,"dur":1,"args":{"correlation":41,"External id":3}},
 {"ph":"X","cat":"kernel","name":"Cijk_Alik_Bljk_HHS_BH_MT128x128x32","pid":2,"tid":0,"ts":20,"dur":8.5,"args":{"correlation":41,"kind":"Dispatch Kernel"}},
 {"ph":"X","cat":"kernel","name":"_ZN4vllm18act_and_mul_kernelIN3c108BFloat16EEEvPT_PKS3_i","pid":2,"tid":3,"ts":30,"dur":1,"args":{"correlation":90,"kind":"Dispatch Task"}},
 {"ph":"X","cat":"kernel","name":"triton_poi_fused_mul_silu_1","pid":2,"tid":3,"ts":31,"dur":1,"args":{"correlation":90,"kind":"Dispatch Task"}},
 {"ph":"X","name":"no category","pid":1,"tid":1,"ts":5,"dur":1},
 {"ph":"X","cat":"kernel","name":"no args \u00e9 \"quoted\"","pid":"2","tid":0,"ts":40,"dur":2},
 {"ph":"X","cat":"gpu_memcpy","name":"Memcpy HtoD (Host -> Device)","pid":2,"tid":0,"ts":50,"dur":3,"args":{"bytes":1024,"kind":"HtoD"}},
 {"ph":"f","id":90,"pid":2,"tid":3,"ts":30,"cat":"ac2g","name":"ac2g","bp":"e"}
]"#;

#[test]
fn tolerates_the_format_variations() {
    for chunk in [1, 7, 64, VARIANTS.len()] {
        let t = read_chunked(VARIANTS.as_bytes(), chunk).unwrap();
        assert_eq!(t.kernels.len(), 4);
        assert_eq!(t.event_count, 12);
        assert_eq!(t.name(t.kernels[3].name), "no args é \"quoted\"");
        assert_eq!(t.kernels[3].device, 2, "string pid read as a number");
        assert!(t.kernels[1].graph_node && t.kernels[2].graph_node);
        assert_eq!(t.kernel_ops()[0].map(|i| t.name(t.cpu_ops[i].name)), Some("aten::mm"), "op via the launch call");
        assert_eq!(t.kernel_ops()[1], None);
        assert_eq!(t.transfers[0].bytes, Some(1024));
        // Vendor inferred from the kernel names (no keys, no deviceProperties).
        let p = platform(&t);
        assert_eq!((p.vendor, p.evidence), (Vendor::Amd, VendorEvidence::KernelNames));
    }
}

#[test]
fn errors_name_the_byte_offset_of_the_json_text() {
    let plain = gunzip(&trace_bytes("amd/torch_compile_triton_mi300x.json.gz"));
    let cut = plain.len() / 2;
    let err = read_trace(&plain[..cut]).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!("not a trace: unexpected end of input (truncated trace?) at byte {cut} of the JSON text")
    );
    // Truncated gzip: decompressed text stops early.
    let gz = trace_bytes("amd/torch_compile_triton_mi300x.json.gz");
    assert!(read_trace(&gz[..gz.len() / 2]).is_err());
    assert!(matches!(read_trace(b"{\"a\": 1}"), Err(TraceError::NoEvents)));
    assert!(matches!(read_trace(b"{\"a\": 1, \"traceEvents\": {}}"), Err(TraceError::NoEvents)));
    // An empty trace is a trace: no kernels.
    assert_eq!(read_trace(b"{\"traceEvents\": [ ]}").unwrap().kernels.len(), 0);
    assert_eq!(read_trace(b"[]").unwrap().event_count, 0);
    assert!(matches!(read_trace(b""), Err(TraceError::Structure { offset: 0, .. })));
    let err = read_trace(br#"{"traceEvents": [{"ph": "X", "ts": 1,, }]}"#).unwrap_err();
    assert!(matches!(err, TraceError::Event { offset: 37, .. }), "{err}");
    let err = read_trace(&[0x1f, 0x8b, 8, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]).unwrap_err();
    assert!(matches!(err, TraceError::Gzip { .. } | TraceError::Structure { .. }), "{err}");
}

fn small_plain() -> Vec<u8> {
    gunzip(&trace_bytes("amd/hta_mi250_minitoy_train_rocm6.2.json.gz"))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn truncation_never_panics_and_always_errors(cut in 0usize..1_000_000, chunk in 1usize..4096) {
        let plain = small_plain();
        let cut = cut % plain.len();
        // Cutting only trailing blanks leaves a whole trace.
        if plain[cut..].iter().all(|b| b.is_ascii_whitespace()) {
            return Ok(());
        }
        prop_assert!(read_chunked(&plain[..cut], chunk).is_err());
        let gz = trace_bytes("amd/hta_mi250_minitoy_train_rocm6.2.json.gz");
        prop_assert!(read_chunked(&gz[..cut % gz.len()], chunk).is_err());
    }

    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..2000), chunk in 1usize..64) {
        let _ = read_chunked(&bytes, chunk);
        let mut gz = vec![0x1f, 0x8b];
        gz.extend_from_slice(&bytes);
        let _ = read_chunked(&gz, chunk);
    }

    #[test]
    fn corrupted_bytes_never_panic(at in 0usize..1_000_000, byte in any::<u8>(), chunk in 1usize..512) {
        let mut plain = small_plain();
        let at = at % plain.len();
        plain[at] = byte;
        let _ = read_chunked(&plain, chunk);
    }
}

#[test]
fn gzip_cut_anywhere_is_an_error() {
    let gz = trace_bytes("amd/hta_mi250_minitoy_train_rocm6.2.json.gz");
    for cut in [gz.len() - 1, gz.len() - 4, gz.len() - 8, gz.len() - 9, gz.len() / 3, 10, 1] {
        assert!(read_trace(&gz[..cut]).is_err(), "cut at {cut} of {}", gz.len());
    }
}

#[test]
fn older_traces_link_kernels_to_ops_by_thread_containment() {
    // Here a kernel's External id is only its correlation id: no op shares it.
    let t = read_trace(&trace_bytes("nvidia/hta_a100_compiled_rank0.json.gz")).unwrap();
    let ops = t.kernel_ops();
    let linked = ops.iter().filter(|o| o.is_some()).count();
    // Counted independently: 705 kernels' launch calls are outside the CPU window and 90 are
    // launched outside any op; every other kernel is linked.
    assert_eq!((linked, ops.len()), (6080 - 705 - 90, 6080));
    let gemm_ops: Vec<&str> = t
        .kernels
        .iter()
        .zip(&ops)
        .filter(|(k, _)| t.name(k.name).contains("gemm"))
        .filter_map(|(_, o)| o.map(|i| t.name(t.cpu_ops[i].name)))
        .collect();
    assert!(!gemm_ops.is_empty());
    assert!(gemm_ops.contains(&"aten::addmm") && gemm_ops.contains(&"aten::mm"), "{gemm_ops:?}");
}

#[test]
fn kept_data_is_a_small_fraction_of_the_json() {
    for file in ["nvidia/hf_qwen1.5-0.5b_eager_h100.json.gz", "nvidia/hta_a100_compiled_rank0.json.gz"] {
        let t = read_trace(&trace_bytes(file)).unwrap();
        assert!(
            t.heap_bytes() * 4 < t.json_bytes as usize,
            "{file}: {} bytes kept of {} bytes of JSON",
            t.heap_bytes(),
            t.json_bytes
        );
    }
}
