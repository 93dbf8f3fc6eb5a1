use super::*;
use crate::interface::Sniff;
use trace::Trace;

#[test]
fn every_builtin_format_has_its_own_name() {
    let names: Vec<&str> = BUILTIN.formats().iter().map(|f| f.name()).collect();
    let mut unique = names.clone();
    unique.sort_unstable();
    unique.dedup();
    assert_eq!(unique.len(), names.len(), "{names:?}");
    assert_eq!(names, ["sqlite", "xplane", "xla-json", "kineto", "rocprof-json"]);
}

#[test]
fn detection_takes_the_first_format_that_claims_the_file() {
    let keys = |k: &[&str]| k.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let kineto = keys(&["schemaVersion", "traceEvents"]);
    let sniff = Sniff { head: br#"{"schemaVersion": 1, "traceEvents": []}"#, json_keys: &kineto };
    assert_eq!(BUILTIN.detect(&sniff).map(Format::name), Some("kineto"));
    let xla = keys(&["traceEvents"]);
    let head = br#"{"traceEvents": [{"ph": "M", "name": "process_name", "args": {"name": "/device:GPU:0"}}]}"#;
    assert_eq!(BUILTIN.detect(&Sniff { head, json_keys: &xla }).map(Format::name), Some("xla-json"));
    assert_eq!(BUILTIN.detect(&Sniff { head: b"SQLite format 3\0", json_keys: &[] }).map(Format::name), Some("sqlite"));
    assert_eq!(BUILTIN.detect(&Sniff { head: b"{}", json_keys: &[] }), None);
}

#[test]
fn a_format_reader_feeds_any_sink_in_any_slicing() {
    let text = br#"{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": 2, "pid": 0},
        {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "ts": 0, "dur": 4, "pid": 0, "tid": 1, "args": {"External id": 5}}]}"#;
    for slice in [1, 7, text.len()] {
        let mut reader = FormatReader::new(&KINETO, Trace::default());
        text.chunks(slice).for_each(|c| reader.feed(c).unwrap());
        let trace = reader.finish().unwrap();
        assert_eq!((trace.kernels.len(), trace.cpu_ops.len()), (1, 1), "slices of {slice}");
    }
}

#[test]
fn a_format_error_is_the_formats_own() {
    let mut reader = FormatReader::new(BUILTIN.named("rocprof-json").unwrap(), Trace::default());
    reader.feed(br#"{"rocprofiler-sdk-tool": [{"#).unwrap();
    let e = reader.finish().unwrap_err();
    assert!(matches!(e, FormatError::Rocprof(RocprofError::Json { .. })), "{e:?}");
    assert!(e.to_string().starts_with("malformed rocprofv3 JSON at byte "), "{e}");
}
