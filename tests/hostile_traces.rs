//! Files crafted to hurt: a trace whose one string inflates past the event budget, gzip magic
//! followed by garbage, a gzip bomb of a small kind, names that are formulas or control
//! characters in the exports. Each must end fast with an error naming the place and the limit
//! (or export safely), through the library and the command line alike. The budgets are the
//! real ones of `fusionscope::limits`: the hostile files are generated on the fly, a megabyte
//! at a time, and compress about 1000:1, so the test data stays small.

use fusionscope::analysis::summary::ClassifiedTrace;
use std::io::Write;

use crate::common::{gunzip, run, temp_dir, trace_bytes};
use fusionscope::analysis::{compare, summarize, Input};
use fusionscope::formats::kineto::scan::Part;
use fusionscope::formats::{read_trace, TraceError, TraceReader};
use fusionscope::import::{open_in_slices, open_whole, FileKind, FileOpener, Imported, DETECT_BYTES};
use fusionscope::limits::{TRACE_ITEM_BYTES, TRACE_NAME_BYTES, WHOLE_FILE_TEXT_BYTES};
use fusionscope::view::{comparison_chart, summary_markdown, summary_tables};

/// Where the event starts in [`gzip_trace_with_string`]'s text: after `{"traceEvents": [`.
const EVENT_OFFSET: u64 = 17;

/// A gzip trace whose one event's name is `len` bytes of `a`, compressed as it is written (a
/// MiB at a time), so that neither the text nor more than a MiB of it is ever in memory.
/// `closed`: whether the string, event and document are closed after it.
fn gzip_trace_with_string(len: usize, closed: bool) -> Vec<u8> {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(br#"{"traceEvents": [{"ph": "X", "cat": "kernel", "name": ""#).unwrap();
    let chunk = vec![b'a'; 1 << 20];
    let mut left = len;
    while left > 0 {
        let n = left.min(chunk.len());
        gz.write_all(&chunk[..n]).unwrap();
        left -= n;
    }
    if closed {
        gz.write_all(br#"", "ts": 1, "dur": 1, "pid": 0}]}"#).unwrap();
    }
    gz.finish().unwrap()
}

/// The message the reader gives for an event past the budget at [`EVENT_OFFSET`].
fn oversize_event_message() -> String {
    format!(
        "the event starting at byte {EVENT_OFFSET} of the JSON text is longer than the limit of 64.00 MiB (67,108,864 bytes)"
    )
}

#[test]
fn a_string_inflating_past_the_event_limit_fails_at_the_limit_with_its_offset() {
    // 128 MiB of `a` in about 130 KB: the reader must stop about halfway through the file.
    let gz = gzip_trace_with_string(2 * TRACE_ITEM_BYTES, false);
    assert!(gz.len() < 1 << 20, "{} bytes of gzip", gz.len());
    let mut reader = TraceReader::new();
    let mut result = Ok(());
    for slice in gz.chunks(4096) {
        result = reader.feed(slice);
        if result.is_err() {
            break;
        }
    }
    let err = result.unwrap_err();
    assert_eq!(err, TraceError::TooLong { part: Part::Event, offset: EVENT_OFFSET, limit: TRACE_ITEM_BYTES });
    assert_eq!(err.to_string(), oversize_event_message());
    let consumed = reader.bytes_consumed() as usize;
    assert!(consumed < gz.len() * 3 / 4, "read {consumed} of {} compressed bytes before failing", gz.len());
    // The reader is unusable after the error.
    assert_eq!(reader.feed(b" "), Err(TraceError::Poisoned));
}

#[test]
fn an_event_of_exactly_the_limit_is_still_read() {
    let overhead = r#"{"ph": "X", "cat": "kernel", "name": "", "ts": 1, "dur": 1, "pid": 0}"#.len();
    let trace = read_trace(&gzip_trace_with_string(TRACE_ITEM_BYTES - overhead, true)).unwrap();
    assert_eq!(trace.kernels.len(), 1);
    assert_eq!(trace.name(trace.kernels[0].name).len(), TRACE_ITEM_BYTES - overhead);
}

#[test]
fn the_command_line_says_so_in_one_line_and_exits_2() {
    let dir = temp_dir("hostile-traces-cli");
    let path = dir.join("huge-string.json.gz");
    std::fs::write(&path, gzip_trace_with_string(TRACE_ITEM_BYTES + (1 << 20), true)).unwrap();
    let path = path.to_str().unwrap();
    let (code, stdout, stderr) = run(&["trace", path]);
    assert_eq!(code, 2, "stderr: {stderr}");
    assert_eq!(stdout, "");
    assert_eq!(
        stderr,
        format!(
            "fusionscope: {path} is a PyTorch-profiler trace (gzip-compressed) but cannot be read: {}.\n",
            oversize_event_message()
        )
    );
}

#[test]
fn keys_and_nesting_past_their_limits_name_the_place() {
    let long_key = format!(r#"{{"{}": 1, "traceEvents": []}}"#, "k".repeat(5000));
    assert_eq!(
        read_trace(long_key.as_bytes()).unwrap_err().to_string(),
        "the top-level key starting at byte 1 of the JSON text is longer than the limit of 4.00 KiB (4,096 bytes)"
    );
    // The event is level 1, the n-th `[` of its `args` (from byte 26) level n + 1: the 64th,
    // at byte 89, is one level too many.
    let deep = format!(r#"{{"traceEvents": [{{"args": {}1{}}}]}}"#, "[".repeat(64), "]".repeat(64));
    let err = read_trace(deep.as_bytes()).unwrap_err();
    assert_eq!(err, TraceError::TooDeep { part: Part::Event, offset: 17, at: 89, limit: 64 });
    let ok = format!(r#"{{"traceEvents": [{{"args": {}1{}}}]}}"#, "[".repeat(63), "]".repeat(63));
    assert_eq!(read_trace(ok.as_bytes()).unwrap().event_count, 1);
}

/// The gzip magic, then bytes that are no gzip stream.
fn gzip_garbage(len: usize) -> Vec<u8> {
    let mut bytes = vec![0x1f, 0x8b];
    bytes.extend((2..len).map(|i| (i * 131 % 251) as u8));
    bytes
}

#[test]
fn gzip_magic_then_garbage_is_recognised_from_its_head() {
    let garbage = gzip_garbage(4 << 20);
    let mut opener = FileOpener::new("garbage.json.gz");
    let mut fed = 0;
    for slice in garbage.chunks(16 * 1024) {
        if !opener.wants_more() {
            break;
        }
        opener.feed(slice).unwrap();
        fed += slice.len();
    }
    assert!(fed < DETECT_BYTES * 2, "read {fed} of {} bytes", garbage.len());
    match opener.finish().unwrap() {
        Imported::Unrecognised { detected, reason } => {
            assert_eq!((detected.kind, detected.gzipped), (FileKind::Gzip, true));
            assert_eq!(reason, "it is gzip-compressed but its content could not be inflated");
        }
        other => panic!("{other:?}"),
    }
    // As a trace on the command line: a one-line error.
    let dir = temp_dir("hostile-traces-garbage");
    let path = dir.join("garbage.json.gz");
    std::fs::write(&path, &garbage).unwrap();
    let path = path.to_str().unwrap();
    let (code, _, stderr) = run(&["trace", path]);
    assert_eq!(code, 2, "{stderr}");
    let said = format!("fusionscope: {path} is a PyTorch-profiler trace (gzip-compressed) but cannot be read: corrupt gzip data after ");
    assert!(stderr.starts_with(&said), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
}

#[test]
fn a_small_kind_inflating_past_its_budget_is_refused() {
    // A simulator table followed by 257 gzip members of 1 MiB of line breaks: 300 KB that
    // would inflate to 257 MiB.
    let gzip = |bytes: &[u8]| {
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        enc.write_all(bytes).unwrap();
        enc.finish().unwrap()
    };
    let mut gz = gzip(&crate::common::data_bytes("ops-csv/dit-xl_inference_tpuv5p_bs8.csv"));
    gz.extend(gzip(&vec![b'\n'; 1 << 20]).repeat(257));
    assert!(gz.len() < 1 << 20);
    let e = open_whole("bomb.csv.gz", &gz).unwrap_err();
    assert_eq!(e.detected.kind, FileKind::SimOpsCsv);
    assert_eq!(
        e.message("bomb.csv.gz"),
        "bomb.csv.gz is a simulator op table (gzip-compressed) but cannot be read: its gzip content inflates to \
         more than the limit of 256.00 MiB (268,435,456 bytes) for this kind of file."
    );
    assert_eq!(WHOLE_FILE_TEXT_BYTES, 268_435_456);
}

#[test]
fn a_real_trace_fed_a_byte_at_a_time_opens_as_the_whole_file() {
    let gz = trace_bytes("amd/torch_compile_triton_mi300x.json.gz");
    let plain = gunzip(&gz);
    let summary = |imported| match imported {
        Imported::Trace { summary, .. } => summary,
        other => panic!("{other:?}"),
    };
    let whole = summary(open_whole("t.json", &plain).unwrap());
    assert_eq!(summary(open_in_slices("t.json", &plain, 1).unwrap()), whole);
    let whole_gz = summary(open_whole("t.json", &gz).unwrap());
    assert_eq!(summary(open_in_slices("t.json", &gz, 1).unwrap()), whole_gz);
    assert_eq!(whole_gz.categories, whole.categories);
}

/// A trace whose kernel names are spreadsheet formulas, table breakers and control characters.
const HOSTILE_NAMES: &str = r#"{"traceEvents": [
 {"ph": "X", "cat": "kernel", "name": "=HYPERLINK(\"http://evil.example\",\"click\")", "pid": 0, "tid": 7, "ts": 1, "dur": 5},
 {"ph": "X", "cat": "kernel", "name": "-2+3+cmd|' /C calc'!A0", "pid": 0, "tid": 7, "ts": 10, "dur": 4},
 {"ph": "X", "cat": "kernel", "name": "@SUM(A1:A9)", "pid": 0, "tid": 7, "ts": 20, "dur": 3},
 {"ph": "X", "cat": "kernel", "name": "gemm\u0001\u001b[31m | x\ny", "pid": 0, "tid": 7, "ts": 30, "dur": 2}
], "deviceProperties": [{"id": 0, "name": "GPU", "warpSize": 32}]}"#;

#[test]
fn hostile_names_export_safely() {
    let trace = read_trace(HOSTILE_NAMES.as_bytes()).unwrap();
    let s = summarize(&ClassifiedTrace::new(&trace), Some("hostile.json"));
    // CSV: no cell starts a formula; the names are kept, behind a `'`.
    let kernels = &summary_tables(&s)[1];
    let csv = kernels.exact_table().to_csv();
    for line in csv.lines() {
        assert!(!line.starts_with(['=', '+', '-', '@', '\t', '\r']), "{line:?} in\n{csv}");
    }
    assert!(csv.contains(r#""'=HYPERLINK(""http://evil.example"",""click"")""#), "{csv}");
    assert!(csv.contains("'-2+3+cmd|' /C calc'!A0") && csv.contains("'@SUM(A1:A9)"), "{csv}");
    // Markdown: every table row is one line with its table's number of cells.
    let md = summary_markdown(&s, None);
    let mut columns: Option<usize> = None;
    for line in md.lines() {
        if !line.starts_with('|') {
            assert!(columns.is_none() || line.is_empty(), "a table row broke: {line:?} in\n{md}");
            columns = None;
            continue;
        }
        let cells = line.match_indices('|').filter(|(i, _)| !line[..*i].ends_with('\\')).count();
        assert_eq!(*columns.get_or_insert(cells), cells, "{line:?} in\n{md}");
    }
    // SVG: names from files (here the file names, as the same-vendor comparison labels its
    // sides) never put a character XML forbids in the document.
    let c = compare(Input::new(&trace, Some("a\u{1}.json")), Input::new(&trace, Some("b\u{1b}[31m.json")));
    let svg = comparison_chart(&c);
    assert!(svg.contains("a\u{fffd}.json") && svg.contains("b\u{fffd}[31m.json"), "{svg}");
    let forbidden =
        |ch: char| matches!(ch, '\0'..='\u{8}' | '\u{b}' | '\u{c}' | '\u{e}'..='\u{1f}' | '\u{fffe}' | '\u{ffff}');
    assert!(!svg.contains(forbidden), "{svg}");
}

/// Each event is bounded, but many events with long distinct names are not by that: the names a
/// trace holds in all have a budget of their own, met while reading (events are made one at a
/// time here, so the test holds no more than the reader does).
#[test]
fn many_long_distinct_names_pass_the_name_budget_and_stop_there() {
    let name_len = 1 << 20;
    let mut reader = TraceReader::new();
    reader.feed(b"{\"traceEvents\": [").unwrap();
    let mut offset = 17u64;
    let mut filler = vec![b'k'; name_len];
    let err = (0..(TRACE_NAME_BYTES / name_len + 2)).find_map(|i| {
        filler[..8].copy_from_slice(format!("{i:08}").as_bytes());
        let event = format!(
            "{}{{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"{}\", \"ts\": {i}, \"dur\": 1, \"pid\": 0, \"tid\": 0}}",
            if i == 0 { "" } else { "," },
            std::str::from_utf8(&filler).unwrap()
        );
        let at = offset;
        offset += event.len() as u64;
        reader.feed(event.as_bytes()).err().map(|e| (i, at, e))
    });
    let (i, _, e) = err.expect("the name budget stops the reader");
    assert_eq!(i, TRACE_NAME_BYTES / name_len, "stopped by the event that passed the budget");
    assert!(matches!(e, TraceError::TooManyNames { limit, .. } if limit == TRACE_NAME_BYTES), "{e}");
    assert!(e.to_string().contains("past the limit of 512.00 MiB in all"), "{e}");
}

/// The name budget is far above what real traces hold.
#[test]
fn real_traces_hold_a_sliver_of_the_name_budget() {
    for rel in ["nvidia/hta_a100_compiled_rank0.json.gz", "amd/sglang_qwen3-8b_decode_hipgraph_mi300x.json.gz"] {
        let t = read_trace(&trace_bytes(rel)).unwrap();
        assert!(t.names.bytes() < TRACE_NAME_BYTES / 100, "{rel}: {} bytes of names", t.names.bytes());
    }
}
