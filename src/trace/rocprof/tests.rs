use std::io::Write;

use super::*;

/// Two processes: the first with two GPU agents behind a CPU agent, a symbol list, three
/// dispatches (one of a kernel no symbol names, one that ends before it starts) and a copy;
/// the second with its symbols as an object keyed by id.
const TWO_PROCESSES: &str = r#"{"rocprofiler-sdk-tool": [
 {"metadata": {"pid": 11},
  "agents": [
   {"id": {"handle": 100}, "type": 1, "name": "AMD EPYC", "product_name": "AMD EPYC", "logical_node_id": 0, "wave_front_size": 0},
   {"id": {"handle": 101}, "type": 2, "name": "gfx950", "product_name": "AMD Instinct MI355X", "logical_node_id": 1, "wave_front_size": 64, "cu_count": 256},
   {"id": {"handle": 102}, "type": 2, "name": "gfx950", "product_name": "AMD Instinct MI355X", "logical_node_id": 2, "wave_front_size": 64, "cu_count": 256}],
  "counters": [{"ignored": [1, 2, {"x": "y"}]}],
  "kernel_symbols": [
   {"kernel_id": 1, "kernel_name": "_Z3fooPf.kd", "demangled_kernel_name": "foo(float*).kd", "formatted_kernel_name": "foo(float*)"},
   {"kernel_id": 2, "kernel_name": "Cijk_A.kd", "formatted_kernel_name": ""}],
  "buffer_records": {
   "kernel_dispatch": [
    {"start_timestamp": 2000, "end_timestamp": 2750, "correlation_id": {"internal": 5, "external": 9},
     "dispatch_info": {"agent_id": {"handle": 102}, "queue_id": {"handle": 3}, "kernel_id": 2}, "stream_id": {"handle": 4}},
    {"start_timestamp": 1000, "end_timestamp": 1500, "correlation_id": {"internal": 4, "external": 0},
     "dispatch_info": {"agent_id": {"handle": 101}, "queue_id": {"handle": 3}, "kernel_id": 1}},
    {"start_timestamp": 3000, "end_timestamp": 2990, "correlation_id": {"internal": 6, "external": 0},
     "dispatch_info": {"agent_id": {"handle": 101}, "queue_id": {"handle": 3}, "kernel_id": 77}}],
   "memory_copy": [
    {"start_timestamp": 500, "end_timestamp": 900, "correlation_id": {"internal": 3, "external": 0}, "operation": 2,
     "dst_agent_id": {"handle": 102}, "src_agent_id": {"handle": 100}, "bytes": 4096}],
   "hip_api": []}},
 {"agents": [{"id": {"handle": 200}, "type": 2, "product_name": "AMD Instinct MI355X", "logical_node_id": 1, "wave_front_size": 64}],
  "kernel_symbols": {"8": {"kernel_id": 8, "formatted_kernel_name": "bar\u0028\u0029"}},
  "buffer_records": {"kernel_dispatch": [
    {"start_timestamp": 4000, "end_timestamp": 4100, "dispatch_info": {"agent_id": {"handle": 200}, "kernel_id": 8}}]}}
]}"#;

#[test]
fn dispatches_become_kernels_named_by_their_symbols() {
    let t = read_rocprof(TWO_PROCESSES.as_bytes()).unwrap();
    let got: Vec<(&str, f64, f64, i64, i64)> =
        t.kernels.iter().map(|k| (t.name(k.name), k.ts, k.dur, k.device, k.stream)).collect();
    assert_eq!(
        got,
        vec![
            ("foo(float*)", 1.0, 0.5, 1, 3),
            // An empty formatted name falls back to the mangled one.
            ("Cijk_A.kd", 2.0, 0.75, 2, 4),
            // No symbol: named by its id; ends before it starts: lasts 0.
            ("kernel #77", 3.0, 0.0, 1, 3),
            // The second process: symbols keyed by id, escapes decoded.
            ("bar()", 4.0, 0.1, 1, 0),
        ]
    );
    assert_eq!(t.kernels[1].correlation, Some(5));
    assert_eq!(t.kernels[1].external_id, Some(9));
    assert_eq!(t.kernels[0].external_id, None);
    assert_eq!(t.event_count, 5);
    // GPU agents only, once each.
    let devices: Vec<(Option<i64>, &str, Option<u32>)> =
        t.devices.iter().map(|d| (d.id, d.name.as_str(), d.warp_size)).collect();
    assert_eq!(devices, vec![(Some(1), "AMD Instinct MI355X", Some(64)), (Some(2), "AMD Instinct MI355X", Some(64))]);
    let [copy] = t.transfers.as_slice() else { panic!("{:?}", t.transfers) };
    assert_eq!((t.name(copy.name), copy.ts, copy.dur, copy.device), ("MEMORY_COPY_HOST_TO_DEVICE", 0.5, 0.4, 2));
    assert_eq!(copy.bytes, Some(4096));
    let p = crate::trace::model::platform::platform(&t);
    assert_eq!(p.vendor, crate::trace::Vendor::Amd);
    assert_eq!(p.devices, vec!["AMD Instinct MI355X"]);
}

#[test]
fn any_slicing_and_gzip_give_the_same_trace() {
    let whole = read_rocprof(TWO_PROCESSES.as_bytes()).unwrap();
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    enc.write_all(TWO_PROCESSES.as_bytes()).unwrap();
    let gz = enc.finish().unwrap();
    for bytes in [TWO_PROCESSES.as_bytes(), &gz] {
        for n in [1, 7, 1000] {
            let mut r = RocprofReader::new();
            for c in bytes.chunks(n) {
                r.feed(c).unwrap();
            }
            let t = r.finish().unwrap();
            assert_eq!(t.kernels, whole.kernels);
            assert_eq!(t.transfers, whole.transfers);
        }
    }
}

#[test]
fn bad_input_is_named_with_the_place() {
    let cut = &TWO_PROCESSES.as_bytes()[..TWO_PROCESSES.len() / 2];
    let e = read_rocprof(cut).unwrap_err();
    // serde points at the last line's last column read: within the last few bytes of the cut.
    let end = cut.len() as u64;
    assert!(matches!(e, RocprofError::Json { offset, .. } if offset + 8 > end && offset <= end), "{e:?}");
    let bad = r#"{"rocprofiler-sdk-tool": [{"buffer_records": {"kernel_dispatch": [{"start_timestamp": "x"}]}}]}"#;
    // serde stops at the string's closing quote.
    let at = bad.find(r#""x""#).unwrap() + 2;
    assert_eq!(
        read_rocprof(bad.as_bytes()).unwrap_err().to_string(),
        format!("malformed rocprofv3 JSON at byte {at} of the text: invalid type: string \"x\", expected u64")
    );
    assert_eq!(read_rocprof(br#"{"traceEvents": []}"#).unwrap_err(), RocprofError::NoTool);
    let mut r = RocprofReader::new();
    r.limit = 100;
    assert_eq!(r.feed(&[b' '; 101]).unwrap_err(), RocprofError::TooLarge { limit: 100 });
    assert_eq!(r.feed(b"{}").unwrap_err(), RocprofError::Poisoned);
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(TWO_PROCESSES.as_bytes()).unwrap();
    let gz = gz.finish().unwrap();
    assert!(matches!(read_rocprof(&gz[..gz.len() - 9]).unwrap_err(), RocprofError::Gzip { .. }));
}
