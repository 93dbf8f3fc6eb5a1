//! Tests of `scan`.

use super::*;

/// Items as owned strings, feeding `text` in chunks of `chunk` bytes.
fn items(text: &str, chunk: usize) -> Result<Vec<String>, ScanError> {
    items_within(ScanLimits::default(), text.as_bytes(), chunk)
}

/// Like [`items`], with other budgets and any bytes.
fn items_within(limits: ScanLimits, text: &[u8], chunk: usize) -> Result<Vec<String>, ScanError> {
    let mut s = Scanner::with_limits(limits);
    let mut out = Vec::new();
    for c in text.chunks(chunk) {
        s.feed::<ScanError>(c, &mut |item| {
            out.push(match item {
                Item::Event { bytes, offset } => format!("E@{offset}:{}", String::from_utf8_lossy(bytes)),
                Item::Field { key, value, offset } => {
                    format!("F@{offset}:{}={}", String::from_utf8_lossy(key), String::from_utf8_lossy(value))
                }
            });
            Ok(())
        })?;
    }
    s.finish()?;
    Ok(out)
}

fn all_chunkings(text: &str) -> Result<Vec<String>, ScanError> {
    let whole = items(text, text.len().max(1));
    for chunk in [1, 2, 3, 7, 64] {
        assert_eq!(items(text, chunk), whole, "chunk size {chunk}");
    }
    whole
}

#[test]
fn splits_object_with_events_and_fields() {
    let text = r#"{"a": {"x": [1, "]}"]}, "traceEvents": [{"name": "k\"}"}, {"n": 2} ], "v": 4.1, "s": "x\\"}"#;
    assert_eq!(
        all_chunkings(text).unwrap(),
        vec![
            r#"F@6:a={"x": [1, "]}"]}"#.to_string(),
            r#"E@40:{"name": "k\"}"}"#.to_string(),
            r#"E@58:{"n": 2}"#.to_string(),
            "F@75:v=4.1".to_string(),
            r#"F@85:s="x\\""#.to_string(),
        ]
    );
}

#[test]
fn splits_bare_array() {
    assert_eq!(
        all_chunkings("\u{feff} [ {\"a\":1},{\"b\":[2]} ]\n").unwrap(),
        vec!["E@6:{\"a\":1}".to_string(), "E@14:{\"b\":[2]}".to_string()]
    );
    assert_eq!(all_chunkings("[]").unwrap(), Vec::<String>::new());
    assert_eq!(all_chunkings("{}").unwrap(), Vec::<String>::new());
}

#[test]
fn reports_truncation_and_garbage_with_offsets() {
    assert_eq!(all_chunkings(r#"{"traceEvents": [{"a": 1}"#).unwrap_err().offset(), 25);
    assert_eq!(all_chunkings(r#"{"traceEvents": [{"a": "x"#).unwrap_err().offset(), 25);
    assert_eq!(
        all_chunkings("").unwrap_err(),
        ScanError::Syntax { offset: 0, problem: "empty input: expected a JSON object or array" }
    );
    assert_eq!(all_chunkings("  x").unwrap_err().offset(), 2);
    assert_eq!(all_chunkings("[1,]").unwrap_err().offset(), 3);
    assert_eq!(all_chunkings("{\"traceEvents\": []} {").unwrap_err().offset(), 20);
    assert_eq!(all_chunkings("{\"a\" 1}").unwrap_err().offset(), 5);
}

#[test]
fn memory_holds_only_the_unfinished_item() {
    let mut s = Scanner::new();
    let event = br#"{"name": "aten::mm", "ts": 1.5},"#;
    s.feed::<ScanError>(b"{\"traceEvents\": [", &mut |_| Ok(())).unwrap();
    let mut n = 0;
    for _ in 0..1000 {
        s.feed::<ScanError>(event, &mut |_| {
            n += 1;
            Ok(())
        })
        .unwrap();
    }
    assert_eq!(n, 1000);
    assert!(s.buf.len() <= event.len(), "buffer kept {} bytes", s.buf.len());
    assert_eq!(s.bytes_seen(), 17 + 1000 * event.len() as u64);
}

/// Small budgets; keys as long as `traceEvents` (11 bytes) only.
const SMALL: ScanLimits = ScanLimits { item_bytes: 16, key_bytes: 11, depth: 3 };

/// `items_within(SMALL, …)` in every chunking, which must all agree.
fn small_all_chunkings(text: &str) -> Result<Vec<String>, ScanError> {
    let whole = items_within(SMALL, text.as_bytes(), text.len().max(1));
    for chunk in [1, 2, 3, 7, 64] {
        assert_eq!(items_within(SMALL, text.as_bytes(), chunk), whole, "{text:?} in chunks of {chunk}");
    }
    whole
}

#[test]
fn an_item_at_the_limit_passes_and_one_byte_more_fails_where_it_starts() {
    // 16 bytes: `{"a":"xxxxxxxx"}`.
    let at_limit = r#"{"traceEvents": [{"a":"xxxxxxxx"}]}"#;
    assert_eq!(small_all_chunkings(at_limit).unwrap(), vec![r#"E@17:{"a":"xxxxxxxx"}"#.to_string()]);
    let over = r#"{"traceEvents": [{"a":"xxxxxxxxx"}]}"#;
    assert_eq!(small_all_chunkings(over).unwrap_err(), ScanError::TooLong { part: Part::Event, offset: 17, limit: 16 });
    // An unterminated string longer than the limit fails at the limit, not at the end.
    let endless = format!(r#"{{"traceEvents": [{{"a":"{}"#, "x".repeat(1000));
    assert_eq!(
        small_all_chunkings(&endless).unwrap_err(),
        ScanError::TooLong { part: Part::Event, offset: 17, limit: 16 }
    );
    // Scalars end at a delimiter that is not theirs: 16 digits pass.
    assert!(small_all_chunkings(&format!("[{}]", "1".repeat(16))).is_ok());
    assert!(small_all_chunkings(&format!("[{}]", "1".repeat(17))).is_err());
}

#[test]
fn top_level_values_and_keys_have_limits_too() {
    assert_eq!(
        small_all_chunkings(r#"{"v": "0123456789abcdef", "traceEvents": []}"#).unwrap_err(),
        ScanError::TooLong { part: Part::Value, offset: 6, limit: 16 }
    );
    assert_eq!(
        small_all_chunkings(r#"{"abc": 1, "traceEventsX": []}"#).unwrap_err(),
        ScanError::TooLong { part: Part::Key, offset: 11, limit: 11 }
    );
    assert_eq!(small_all_chunkings(r#"{"a\"": 1}"#).unwrap(), vec![r#"F@8:a\"=1"#.to_string()]);
}

#[test]
fn nesting_deeper_than_the_limit_fails_at_the_bracket() {
    assert!(small_all_chunkings(r#"[{"a":[[1]]}]"#).is_ok());
    assert_eq!(
        small_all_chunkings(r#"[{"a":[[[1]]]}]"#).unwrap_err(),
        ScanError::TooDeep { part: Part::Event, offset: 1, at: 8, limit: 3 }
    );
    // Brackets inside strings do not count.
    assert!(small_all_chunkings(r#"[{"a":"[[[[{{"}]"#).is_ok());
}

#[test]
fn the_default_limits_are_those_of_the_limits_module() {
    let l = ScanLimits::default();
    assert_eq!((l.item_bytes, l.key_bytes, l.depth), (TRACE_ITEM_BYTES, TRACE_KEY_BYTES, TRACE_NESTING_DEPTH));
}

#[test]
fn one_byte_chunks_of_a_long_item_are_scanned_in_linear_time() {
    // A 1 MiB string fed a byte at a time: if each chunk rescanned the carried-over bytes
    // from the item's start this would take ~5·10¹¹ steps; resumed, it is 1 M.
    let mut s = Scanner::new();
    s.feed::<ScanError>(b"[\"", &mut |_| Ok(())).unwrap();
    let start = std::time::Instant::now();
    for _ in 0..1 << 20 {
        s.feed::<ScanError>(b"a", &mut |_| Ok(())).unwrap();
    }
    let mut n = 0;
    s.feed::<ScanError>(b"\"]", &mut |_| {
        n += 1;
        Ok(())
    })
    .unwrap();
    s.finish().unwrap();
    assert_eq!(n, 1);
    assert!(start.elapsed().as_secs() < 20, "{:?}", start.elapsed());
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]

    /// Any bytes, any chunking, small budgets: never a panic, and the same result whatever
    /// the chunking.
    #[test]
    fn never_panics_and_chunking_does_not_matter(
        bytes in proptest::collection::vec(proptest::sample::select(b"{}[]\",:\\ a1tn\xef".to_vec()), 0..300),
        chunk in 1usize..40,
    ) {
        let whole = items_within(SMALL, &bytes, bytes.len().max(1));
        proptest::prop_assert_eq!(items_within(SMALL, &bytes, chunk), whole);
        let _ = items_within(ScanLimits::default(), &bytes, chunk);
    }

    /// No item handed out is over the budget, and an item that fails for its size
    /// is reported where it starts.
    #[test]
    fn no_item_is_longer_than_the_limit(
        bytes in proptest::collection::vec(proptest::sample::select(b"{}[]\",: a1".to_vec()), 0..300),
        chunk in 1usize..40,
    ) {
        let mut s = Scanner::with_limits(SMALL);
        let mut longest = 0;
        for c in bytes.chunks(chunk) {
            let r = s.feed::<ScanError>(c, &mut |item| {
                longest = longest.max(match item {
                    Item::Event { bytes, .. } | Item::Field { value: bytes, .. } => bytes.len(),
                });
                Ok(())
            });
            match r {
                Err(ScanError::TooLong { part, offset, .. }) => {
                    let first = bytes[offset as usize];
                    let starts_item = if part == Part::Key { first == b'"' } else { !is_blank(first) };
                    proptest::prop_assert!(starts_item, "{part} at {offset}");
                }
                Err(ScanError::TooDeep { at, .. }) => {
                    let bracket = matches!(bytes[at as usize], b'{' | b'[');
                    proptest::prop_assert!(bracket, "at {at}");
                }
                _ => {}
            }
            if r.is_err() {
                break;
            }
        }
        proptest::prop_assert!(longest <= SMALL.item_bytes);
    }
}

/// Random JSON values whose strings hold brackets, quotes and backslashes (escaped by
/// serde_json), some long enough to span several of the scan's 64-byte blocks.
fn json_value() -> impl proptest::strategy::Strategy<Value = serde_json::Value> {
    use proptest::prelude::*;
    use serde_json::Value;
    let text = prop_oneof!["[a-z {}\\[\\]:,]{0,12}", "[a-z {}\\[\\]\"\\\\:,]{0,100}", "[a-z ]{60,200}",];
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        text.clone().prop_map(Value::String),
    ];
    leaf.prop_recursive(5, 64, 8, move |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..8).prop_map(Value::Array),
            proptest::collection::vec(("[a-z {}\\[\\]\"]{0,10}", inner), 0..8)
                .prop_map(|members| Value::Object(members.into_iter().collect())),
        ]
    })
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(512))]

    /// The block scan (64 bytes at a time, from the structural masks) splits a trace of random
    /// events exactly where serde_json's own serialisation put them, each event reading back as
    /// serde_json reads the value; and fed one byte at a time (when the scan can only go byte by
    /// byte) it gives the same items.
    #[test]
    fn events_end_where_serde_json_ends_them(
        values in proptest::collection::vec(json_value(), 0..6),
        pretty in proptest::prelude::any::<bool>(),
    ) {
        let texts: Vec<String> = values
            .iter()
            .map(|v| if pretty { serde_json::to_string_pretty(v) } else { serde_json::to_string(v) }.unwrap())
            .collect();
        let trace = format!("{{\"traceEvents\": [{}]}}", texts.join(",\n "));
        let mut events = Vec::new();
        let mut s = Scanner::new();
        s.feed::<ScanError>(trace.as_bytes(), &mut |item| {
            if let Item::Event { bytes, .. } = item {
                events.push(bytes.to_vec());
            }
            Ok(())
        })
        .unwrap();
        s.finish().unwrap();
        proptest::prop_assert_eq!(events.len(), values.len());
        for ((bytes, text), value) in events.iter().zip(&texts).zip(&values) {
            proptest::prop_assert_eq!(bytes.as_slice(), text.as_bytes());
            proptest::prop_assert_eq!(&serde_json::from_slice::<serde_json::Value>(bytes).unwrap(), value);
        }
        proptest::prop_assert_eq!(items(&trace, 1), items(&trace, trace.len()));
    }

    /// The same traces damaged (a byte replaced by one that shapes JSON, or the text cut): the
    /// block scan and the byte-by-byte scan still agree on every item, error and offset.
    #[test]
    fn damaged_traces_scan_alike_by_blocks_and_by_bytes(
        values in proptest::collection::vec(json_value(), 1..6),
        at in proptest::prelude::any::<proptest::sample::Index>(),
        with in proptest::sample::select(b"{}[]\"\\,: x".to_vec()),
        cut in proptest::prelude::any::<bool>(),
        shallow in proptest::prelude::any::<bool>(),
    ) {
        let limits = if shallow { ScanLimits { depth: 3, ..ScanLimits::default() } } else { ScanLimits::default() };
        let texts: Vec<String> = values.iter().map(|v| serde_json::to_string(v).unwrap()).collect();
        let mut trace = format!("{{\"traceEvents\": [{}]}}", texts.join(", ")).into_bytes();
        let at = at.index(trace.len());
        if cut {
            trace.truncate(at);
        } else {
            trace[at] = with;
        }
        let whole = items_within(limits, &trace, trace.len().max(1));
        proptest::prop_assert_eq!(items_within(limits, &trace, 1), whole.clone());
        proptest::prop_assert_eq!(items_within(limits, &trace, 100), whole);
    }
}
