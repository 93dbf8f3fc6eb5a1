//! The Kineto reader's own tests; vendor and device detection on Kineto traces in [`platform`].

mod cpu_kernels;
mod platform;

use std::io::Write;

use super::scan::{Part, ScanError};
use super::*;

#[test]
fn oversize_and_overdeep_items_are_named_with_their_offset_and_the_limit() {
    let e = TraceError::from(ScanError::TooLong { part: Part::Event, offset: 17, limit: 64 << 20 });
    assert_eq!(
        e.to_string(),
        "the event starting at byte 17 of the JSON text is longer than the limit of 64.00 MiB (67,108,864 bytes)"
    );
    // The outer `[` is the events array; the event at byte 1 opens its 65th level at byte 65.
    let deep = "[".repeat(66) + &"]".repeat(66);
    let e = read_trace(deep.as_bytes()).unwrap_err();
    assert_eq!(
        e.to_string(),
        "the event starting at byte 1 of the JSON text nests deeper than the limit of 64 levels (at byte 65)"
    );
    // 64 levels pass (an event that is not an object is skipped, as every such event).
    assert_eq!(read_trace(("[".repeat(65) + &"]".repeat(65)).as_bytes()).unwrap().event_count, 1);
}

#[test]
fn gzip_is_inflated_a_little_at_a_time() {
    // 8 MiB of text in 8 KB of gzip, fed in one slice: the inflated bytes waiting for the
    // scanner never exceed a few tens of KB (the event itself is the scanner's to hold).
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    enc.write_all(b"{\"traceEvents\": [{\"name\": \"").unwrap();
    enc.write_all(&vec![b'a'; 8 << 20]).unwrap();
    enc.write_all(b"\"}]}").unwrap();
    let gz = enc.finish().unwrap();
    assert!(gz.len() < 64 << 10);
    let mut reader = TraceReader::new();
    reader.feed(&gz).unwrap();
    assert!(reader.inflate.is_gzip());
    let inflated = reader.inflate.buffered_capacity();
    assert!(inflated <= 64 << 10, "{inflated} bytes inflated at once");
    assert_eq!(reader.finish().unwrap().event_count, 1);
}

#[test]
fn error_offsets_point_into_the_event() {
    let text = b"{\"traceEvents\": [\n{\"ph\": \"X\", \"name\": tru}]}";
    let err = read_trace(text).unwrap_err();
    assert_eq!(err, TraceError::Event { offset: 41, message: "expected ident".into() });
}
