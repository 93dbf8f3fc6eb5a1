//! Tests of `extract`: wherever the extractor answers, serde_json gives the same event; on
//! clean input (and on every event of the real traces) it answers.

use std::io::Read;

use proptest::prelude::*;

use super::event;
use crate::kineto::raw::RawEvent;
use crate::kineto::scan::{Item, ScanError, Scanner};

/// Compares the extractor with serde on `bytes`: if the extractor answers, serde must accept the
/// bytes and read the same event (compared through `Debug`, which tells `-0.0` from `0.0`).
/// Returns whether the extractor answered.
fn agrees(bytes: &[u8]) -> Result<bool, String> {
    let Some(fast) = event(bytes) else { return Ok(false) };
    match serde_json::from_slice::<RawEvent>(bytes) {
        Ok(slow) if format!("{fast:?}") == format!("{slow:?}") => Ok(true),
        Ok(slow) => Err(format!("{}\nextractor: {fast:?}\nserde:     {slow:?}", String::from_utf8_lossy(bytes))),
        Err(e) => Err(format!("{}\nextractor: {fast:?}\nserde fails: {e}", String::from_utf8_lossy(bytes))),
    }
}

#[track_caller]
fn answers(text: &str) {
    assert_eq!(agrees(text.as_bytes()), Ok(true), "{text}");
}

#[track_caller]
fn defers(text: &str) {
    assert_eq!(agrees(text.as_bytes()), Ok(false), "{text}");
}

#[test]
fn reads_every_field_as_serde_does() {
    answers(
        r#"{"ph": "X", "cat": "kernel", "name": "void gemm<128>(float*)", "pid": 0, "tid": 7, "ts": 1700000000000.123,
        "dur": 12.5, "args": {"External id": 31, "correlation": 9, "device": 0, "stream": 7, "bytes": 4096,
        "kind": "Dispatch Task", "kernel": "k", "Input Dims": [[1, 2], []], "Input type": ["float", ""],
        "Concrete Inputs": ["", "3"], "Collective name": "allreduce", "In msg nelems": 10, "Out msg nelems": 10,
        "Group size": 2, "dtype": "Float", "Process Group Name": "0", "Process Group Description": "default_pg",
        "Process Group Ranks": "[0, 1]", "grid": [1, 1, 1], "nested": {"a": [{"b": null}]}}}"#,
    );
    answers(r#"{}"#);
    answers(" {\n\t\"ph\" : \"X\" \r} ");
}

#[test]
fn reads_type_variations_as_serde_does() {
    answers(
        r#"{"ph":"X","pid":"Spans","tid":"PyTorch Profiler","ts":"12.5","name":7,"args":{"External id":3.0,"correlation":"9","kind":"Dispatch Task"}}"#,
    );
    answers(
        r#"{"name": true, "cat": null, "ph": [1, {"x": 2}], "pid": {"a": 1}, "tid": false, "ts": " 3 ", "dur": "inf"}"#,
    );
    answers(r#"{"args": [1, {"x": 2}]}"#);
    answers(r#"{"args": "text"}"#);
    answers(r#"{"args": 12}"#);
    answers(r#"{"args": null}"#);
    answers(r#"{"args": {"Input Dims": null, "Input type": "x", "Concrete Inputs": 3}}"#);
    answers(r#"{"ts": "NaN", "dur": "-1e3", "pid": "+4", "tid": "0x10"}"#);
}

#[test]
fn reads_numbers_in_every_form_as_serde_does() {
    for n in [
        "0",
        "-0",
        "7",
        "-7",
        "0.0",
        "-0.0",
        "1.5",
        "-1.5",
        "1700000000000.123",
        "0.1",
        "0.30000000000000004",
        "123456789012345678",
        "1234567890123456789",
        "12345678901234567890",
        "18446744073709551615",
        "18446744073709551616",
        "-9223372036854775808",
        "-9223372036854775809",
        "99999999999999999999999",
        "1e5",
        "1E5",
        "1e+5",
        "1e-5",
        "-2.5e-3",
        "1.7976931348623157e308",
        "5e-324",
        "1e-400",
        "0e0",
        "123.456789012345678901",
        "0.000000000000000000001",
        "4.35",
        "9007199254740993",
        "9007199254740993.0",
    ] {
        for key in ["ts", "dur", "pid", "tid", "name"] {
            answers(&format!(r#"{{"{key}": {n}}}"#));
        }
        answers(&format!(r#"{{"args": {{"External id": {n}, "correlation": [{n}], "kind": {n}}}, "x": {n}}}"#));
        answers(&format!(r#"{{"ts": "{n}"}}"#));
    }
    // Out of range where serde reads the number, fine where it only skips it.
    defers(r#"{"ts": 1e999}"#);
    defers(r#"{"name": -1e400}"#);
    answers(r#"{"x": 1e999, "name": [1e999]}"#);
}

#[test]
fn reads_escapes_and_unicode_as_serde_does() {
    answers(r#"{"name": "a\"b\\c\/d\b\f\n\r\t\u00e9\u4e2d\u0000", "cat": "é中😀"}"#);
    answers(r#"{"x": "😀", "y": {"k\u00e9y": 1}, "args": {"w": ["\u00e9"]}}"#);
    // A surrogate escape, anywhere, goes to serde, which decides (a pair is fine; a lone one
    // fails where serde decodes the string, not where it skips it).
    defers(r#"{"name": "\ud83d\ude00"}"#);
    defers(r#"{"name": "\ud83d"}"#);
    defers(r#"{"x": "\ud83d", "args": {"w": ["\ude00"]}}"#);
    // A key with an escape goes to serde, which matches it after unescaping.
    defers(r#"{"n\u0061me": "k"}"#);
    // Control characters, bad escapes and bad UTF-8 are serde's to reject.
    defers("{\"name\": \"a\tb\"}");
    defers(r#"{"name": "\x"}"#);
    defers(r#"{"name": "\u12G4"}"#);
    assert_eq!(agrees(b"{\"name\": \"\xff\"}"), Ok(false));
    assert_eq!(agrees(b"{\"x\": \"\xc3\"}"), Ok(false));
}

#[test]
fn duplicate_keys_are_serdes_to_judge() {
    // serde fails on a known key written twice (at the top or in `args`) and ignores a repeated
    // unknown key; the extractor answers only the latter.
    defers(r#"{"name": "a", "name": "b"}"#);
    defers(r#"{"args": {"correlation": 1, "correlation": 2}}"#);
    assert!(serde_json::from_slice::<RawEvent>(br#"{"name": "a", "name": "b"}"#).is_err());
    answers(r#"{"x": 1, "x": 2, "args": {"y": 1, "y": [2]}}"#);
}

#[test]
fn malformed_events_are_serdes_to_reject() {
    for bad in [
        r#"{"name": "x", }"#,
        r#"{"name": tru}"#,
        r#"{"name" "x"}"#,
        r#"{name: "x"}"#,
        r#"{"ts": 01}"#,
        r#"{"ts": 1.}"#,
        r#"{"ts": .5}"#,
        r#"{"ts": -}"#,
        r#"{"ts": 1e}"#,
        r#"{"ts": +1}"#,
        r#"{"x": [1,]}"#,
        r#"{"x": [1 2]}"#,
        r#"{"x": {"a" 1}}"#,
        r#"{"x": {"a": 1,}}"#,
        r#"{"x": 1} x"#,
        r#"{"x": NaN}"#,
        r#"{"x": "open}"#,
        r#"{"x": [}"#,
    ] {
        defers(bad);
        assert!(serde_json::from_str::<RawEvent>(bad).is_err(), "{bad}");
    }
    // Not an object: serde reads an array positionally, so it is serde's.
    defers(r#"["X", "kernel", "k"]"#);
    defers("7");
}

/// Every event of every real trace in `tests/data/traces`: the extractor answers each one and
/// agrees with serde.
#[test]
fn answers_every_event_of_the_real_traces_as_serde_does() {
    let dir = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../..")).join("tests/data/traces");
    let mut files = Vec::new();
    for vendor in ["amd", "nvidia"] {
        for entry in std::fs::read_dir(dir.join(vendor)).unwrap() {
            let path = entry.unwrap().path();
            if path.to_string_lossy().ends_with(".json.gz") {
                files.push(path);
            }
        }
    }
    assert!(files.len() >= 14, "{files:?}");
    for path in files {
        let mut text = Vec::new();
        flate2::read::GzDecoder::new(std::fs::File::open(&path).unwrap()).read_to_end(&mut text).unwrap();
        let (mut events, mut problems) = (0u64, Vec::new());
        let mut scanner = Scanner::new();
        scanner
            .feed::<ScanError>(&text, &mut |item| {
                if let Item::Event { bytes, .. } = item {
                    events += 1;
                    match agrees(bytes) {
                        Ok(true) => {}
                        Ok(false) => problems.push(format!("not answered: {}", String::from_utf8_lossy(bytes))),
                        Err(e) => problems.push(e),
                    }
                }
                Ok(())
            })
            .unwrap();
        assert!(events > 0, "{}", path.display());
        assert!(problems.is_empty(), "{}: {} of {events} events: {}", path.display(), problems.len(), problems[0]);
    }
}

// ---- Random events.

/// JSON whitespace, mostly none.
fn blank() -> impl Strategy<Value = String> {
    prop_oneof![4 => Just(String::new()), 1 => "[ \t\r\n]{1,3}"]
}

/// A string's body: plain text, escapes, unicode; `clean` leaves out what makes serde fail or
/// the extractor defer (control characters, bad escapes, surrogates, bad UTF-8 is impossible in
/// a `String`).
fn string_body(clean: bool) -> BoxedStrategy<String> {
    let piece = prop_oneof![
        4 => "[a-zA-Z0-9 _:<>,.()*&]{0,6}",
        1 => Just(r#"\""#.to_string()),
        1 => Just(r"\\".to_string()),
        1 => Just(r"\/".to_string()),
        1 => prop::sample::select(vec![r"\b", r"\f", r"\n", r"\r", r"\t"]).prop_map(str::to_string),
        1 => prop::sample::select(vec![r"\u00e9", r"\u4E2D", r"\u0000", r"\u001f", r"\u0041"]).prop_map(str::to_string),
        1 => prop::sample::select(vec!["é", "中", "😀", "ß"]).prop_map(str::to_string),
        1 => prop::sample::select(vec!["{", "}", "[", "]", ":", ","]).prop_map(str::to_string),
    ];
    let unclean = prop_oneof![
        1 => prop::sample::select(vec![r"\ud83d\ude00", r"\ud83d", r"\ude00", r"\x", r"\u12", "\t", "\u{1}", "\n"])
            .prop_map(str::to_string),
    ];
    let piece = if clean { piece.boxed() } else { prop_oneof![6 => piece, 1 => unclean].boxed() };
    prop::collection::vec(piece, 0..4).prop_map(|p| p.concat()).boxed()
}

/// A JSON number as text, in every form serde accepts (and, unless `clean`, some it rejects).
fn number(clean: bool) -> BoxedStrategy<String> {
    let good = (
        any::<bool>(),
        prop_oneof![Just("0".to_string()), "[1-9][0-9]{0,24}"],
        prop::option::of("[0-9]{1,22}"),
        prop::option::weighted(0.2, ("[eE]", "[+-]?", "[0-9]{1,3}")),
    )
        .prop_map(|(neg, int, frac, exp)| {
            let mut s = if neg { "-".to_string() } else { String::new() };
            s += &int;
            if let Some(f) = frac {
                s += ".";
                s += &f;
            }
            if let Some((e, sign, digits)) = exp {
                s += &(e + &sign + &digits);
            }
            s
        });
    if clean {
        // A number serde reads may be out of range (`1e999`); keep exponents small.
        good.prop_filter("in range", |s| s.parse::<f64>().is_ok_and(|v| v.is_finite() && v.abs() < 1e300)).boxed()
    } else {
        prop_oneof![
            6 => good,
            1 => prop::sample::select(vec!["01", "1.", ".5", "-", "1e", "+1", "1e+", "00", "-01", "1.5.2", "NaN"])
                .prop_map(str::to_string),
        ]
        .boxed()
    }
}

/// A JSON value as text, nested.
fn value(clean: bool) -> BoxedStrategy<String> {
    let leaf = prop_oneof![
        3 => string_body(clean).prop_map(|s| format!("\"{s}\"")),
        3 => number(clean),
        1 => number(clean).prop_map(|n| format!("\"{n}\"")),
        1 => prop::sample::select(vec!["true", "false", "null", "\" 12.5 \"", "\"inf\"", "\"1e400\""]).prop_map(str::to_string),
    ];
    let leaf = if clean {
        leaf.boxed()
    } else {
        prop_oneof![8 => leaf, 1 => prop::sample::select(vec!["tru", "nul", "[1,]", "{,}", "\"a"]).prop_map(str::to_string)]
            .boxed()
    };
    leaf.prop_recursive(3, 24, 4, move |inner| {
        prop_oneof![
            (prop::collection::vec((blank(), inner.clone(), blank()), 0..4)).prop_map(|items| format!(
                "[{}]",
                items.into_iter().map(|(a, v, b)| a + &v + &b).collect::<Vec<_>>().join(",")
            )),
            (prop::collection::vec((key(clean, ARGS_KEYS), blank(), inner), 0..4)).prop_map(|members| {
                let members: Vec<String> = members.into_iter().map(|(k, b, v)| format!("{k}{b}:{b}{v}")).collect();
                format!("{{{}}}", members.join(","))
            }),
        ]
    })
    .boxed()
}

const EVENT_KEYS: &[&str] = &["ph", "cat", "name", "pid", "tid", "ts", "dur", "args", "x", "id"];
const ARGS_KEYS: &[&str] = &[
    "External id",
    "correlation",
    "device",
    "stream",
    "bytes",
    "kind",
    "kernel",
    "Input Dims",
    "Input type",
    "Concrete Inputs",
    "Collective name",
    "In msg nelems",
    "Out msg nelems",
    "Group size",
    "dtype",
    "Process Group Name",
    "Process Group Description",
    "Process Group Ranks",
    "grid",
    "Ev Idx",
];

/// A key (quoted): mostly one the analysis reads, sometimes any string (written without escapes
/// when `clean`).
fn key(clean: bool, known: &'static [&'static str]) -> BoxedStrategy<String> {
    let other = if clean { "[a-zA-Z0-9 _é中]{0,8}".boxed() } else { string_body(false) };
    prop_oneof![
        4 => prop::sample::select(known).prop_map(|k| format!("\"{k}\"")),
        1 => other.prop_map(|s| format!("\"{s}\"")),
    ]
    .boxed()
}

/// An event object as text; `args` is an object of args keys most of the time.
fn event_text(clean: bool) -> impl Strategy<Value = String> {
    let args = prop::collection::vec((key(clean, ARGS_KEYS), blank(), value(clean)), 0..8).prop_map(|members| {
        let members: Vec<String> = members.into_iter().map(|(k, b, v)| format!("{k}{b}:{b}{v}")).collect();
        format!("{{{}}}", members.join(", "))
    });
    let member_value = prop_oneof![3 => value(clean), 1 => args];
    (blank(), prop::collection::vec((key(clean, EVENT_KEYS), blank(), member_value, blank()), 0..10)).prop_map(
        |(lead, members)| {
            let members: Vec<String> = members.into_iter().map(|(k, b, v, c)| format!("{k}{b}:{c}{v}{b}")).collect();
            format!("{lead}{{{}}}{lead}", members.join(","))
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    /// Wherever the extractor answers, serde agrees; on any input.
    #[test]
    fn agrees_with_serde_on_random_events(text in event_text(false)) {
        if let Err(e) = agrees(text.as_bytes()) {
            prop_assert!(false, "{}", e);
        }
    }

    /// On clean input (no escaped keys, surrogates, control characters or numbers out of
    /// range) the extractor answers exactly when serde accepts the event: it defers only for a
    /// known key written twice and for what is not JSON.
    #[test]
    fn answers_clean_random_events_that_serde_accepts(text in event_text(true)) {
        let serde_accepts = serde_json::from_str::<RawEvent>(&text).is_ok();
        prop_assert_eq!(agrees(text.as_bytes()), Ok(serde_accepts), "{}", text);
    }

    /// One byte of a valid event changed or the event cut short: still never a disagreement.
    #[test]
    fn agrees_with_serde_on_damaged_events(
        text in event_text(true),
        at in any::<prop::sample::Index>(),
        byte in prop::sample::select(b"\"\\,:{}[]0-.eE \x01\xff\xc3t".to_vec()),
        cut in any::<bool>(),
    ) {
        let mut bytes = text.into_bytes();
        if !bytes.is_empty() {
            let i = at.index(bytes.len());
            if cut { bytes.truncate(i) } else { bytes[i] = byte }
        }
        if let Err(e) = agrees(&bytes) {
            prop_assert!(false, "{}", e);
        }
    }
}

// ---- The one-pass read (events offered where they start) against the two-pass one.

use crate::kineto::event::Builder;
use crate::kineto::scan::ScanLimits;
use crate::kineto::TraceError;
use trace::read::{EventSink, TraceHeader};
use trace::Trace;

/// Reads `text` in `chunk`-byte slices under `limits`, either as the reader does (events
/// offered to the builder, read in one pass where they can be) or the two-pass way (every event
/// scanned for its end, then handed over whole).
fn read_with(text: &[u8], chunk: usize, limits: ScanLimits, one_pass: bool) -> Result<String, TraceError> {
    read_into::<Trace>(text, chunk, limits, one_pass)
}

/// The whole trace's kernels and copies, as a sink that takes no CPU-side events (as the
/// summary-only mode and the ranks fold) would be given them.
#[derive(Default)]
struct GpuSide(Trace);

impl EventSink for GpuSide {
    type Output = Trace;
    const CPU_SIDE: bool = false;
    fn kernel(&mut self, names: &trace::intern::NameTable, kernel: trace::Kernel) {
        self.0.kernel(names, kernel);
    }
    fn transfer(&mut self, names: &trace::intern::NameTable, transfer: trace::Transfer) {
        self.0.transfer(names, transfer);
    }
    fn finish(self, header: TraceHeader) -> Trace {
        self.0.finish(header)
    }
}

/// [`read_with`] into any sink.
fn read_into<S: EventSink + Default>(
    text: &[u8],
    chunk: usize,
    limits: ScanLimits,
    one_pass: bool,
) -> Result<String, TraceError>
where
    S::Output: std::fmt::Debug,
{
    let mut scanner = Scanner::with_limits(limits);
    let mut builder = Builder::new(S::default());
    for c in text.chunks(chunk.max(1)) {
        if one_pass {
            scanner.feed_to(c, &mut builder)?;
        } else {
            scanner.feed(c, &mut |item| builder.item(item))?;
        }
    }
    scanner.finish()?;
    let (header, sink) = builder.into_parts();
    let events = header.event_count;
    Ok(format!("{events} events: {:?}", sink.finish(header)))
}

/// A trace of random events: kept ones, dropped ones (whose rest may be malformed), ones whose
/// first `"cat"` is not their category, ones without a category.
fn trace_text() -> impl Strategy<Value = String> {
    let dropped = (
        prop::sample::select(vec!["python_function", "ac2g", "cpu_instant_event", "fwdbwd", "python_functio"]),
        prop::sample::select(vec![
            r#", "name": "a.py(1): f", "args": {"Python id": 1}"#,
            r#", "name": tru"#,
            r#", "args": {"x": [1, {"cat": "kernel"}]}"#,
            "",
            r#", "x": "\"}"#,
        ]),
        prop::sample::select(vec![r#""ph": "X", "#, r#""name": "cat", "#, r#""args": {"cat": "x"}, "#, ""]),
    )
        .prop_map(|(cat, rest, lead)| format!(r#"{{{lead}"cat" : "{cat}"{rest}}}"#));
    let kept = prop::sample::select(vec![
        r#"{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 10.5, "dur": 2, "args": {"correlation": 3, "stream": 7}}"#,
        r#"{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "tid": 1, "ts": 9, "dur": 4, "args": {"External id": 3, "Input Dims": [[2, 3], [3, 4]], "Input type": ["float", "float"]}}"#,
        r#"{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "tid": 1, "ts": 9.5, "dur": 1, "args": {"correlation": 3, "External id": 3}}"#,
        r#"{"ph": "M", "name": "process_name", "pid": 0, "args": {"name": "python"}}"#,
        r#"{"ph": "X", "cat": "kernel", "name": "k", "name": "k2"}"#,
        r#"{"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD", "ts": 1e1, "dur": 1, "args": {"bytes": 64}}"#,
        "[1, 2]",
        r#"{"ph": "X", "cat": "kernel", "name": tru}"#,
        r#"{"a": [[[[[[1]]]]]], "cat": "python_function"}"#,
    ])
    .prop_map(str::to_string);
    let one = prop_oneof![3 => kept, 3 => dropped, 2 => event_text(false)];
    (prop::collection::vec((one, blank()), 0..12), blank()).prop_map(|(events, b)| {
        let events: Vec<String> = events.into_iter().map(|(e, w)| w.clone() + &e + &w).collect();
        format!("{{\"traceEvents\":{b}[{}]{b}}}", events.join(","))
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1000, ..ProptestConfig::default() })]

    /// The reader's one-pass read gives what the two-pass read gives — the trace, the event
    /// count or the very error — for any slicing and under tight budgets too.
    #[test]
    fn one_pass_reads_as_two_passes(
        text in trace_text(),
        chunk in prop_oneof![Just(1usize), 2usize..64, Just(1 << 20)],
        tight in any::<bool>(),
    ) {
        let limits = if tight { ScanLimits { item_bytes: 120, key_bytes: 64, depth: 4 } } else { ScanLimits::default() };
        let two = read_with(text.as_bytes(), chunk, limits, false);
        prop_assert_eq!(read_with(text.as_bytes(), chunk, limits, true), two.clone(), "{}", text);
        prop_assert_eq!(read_with(text.as_bytes(), 1 << 20, limits, true), read_with(text.as_bytes(), 1 << 20, limits, false));
    }

    /// The same for a sink without CPU-side events, for which CPU-side categories are dropped
    /// unparsed too; and where the whole read succeeds, it keeps the same kernels and copies.
    #[test]
    fn one_pass_reads_as_two_passes_without_the_cpu_side(
        text in trace_text(),
        chunk in prop_oneof![Just(1usize), 2usize..64, Just(1 << 20)],
    ) {
        let limits = ScanLimits::default();
        let two = read_into::<GpuSide>(text.as_bytes(), chunk, limits, false);
        prop_assert_eq!(read_into::<GpuSide>(text.as_bytes(), chunk, limits, true), two.clone(), "{}", text);
        if let Ok(whole) = crate::kineto::read_trace(text.as_bytes()) {
            let mut reader = crate::Reader::with_sink(GpuSide::default());
            reader.feed(text.as_bytes()).unwrap();
            let gpu = reader.finish().unwrap();
            let kernels = |t: &Trace| {
                t.kernels.iter().map(|k| (t.names.resolve(k.name).to_string(), k.ts, k.dur, k.device)).collect::<Vec<_>>()
            };
            let transfers = |t: &Trace| {
                t.transfers.iter().map(|c| (t.names.resolve(c.name).to_string(), c.ts, c.bytes)).collect::<Vec<_>>()
            };
            prop_assert_eq!(kernels(&gpu), kernels(&whole));
            prop_assert_eq!(transfers(&gpu), transfers(&whole));
            prop_assert_eq!(gpu.event_count, whole.event_count);
        }
    }
}
