//! The PyTorch profiler's (Kineto's) Chrome-trace JSON, the first format read into the
//! format-neutral [`Trace`] and the only place that knows its keys. A push reader: bytes in
//! (plain or gzip JSON, any chunking), a [`Trace`] out — or, with another [`EventSink`], whatever
//! that sink folds the events into (the summary-only mode's per-name statistics,
//! `analysis::summary_only`).
//!
//! [`scan`] splits the text into events and top-level values; [`raw`] is the lenient view of
//! one event; [`extract`] reads that view in one pass, leaving to serde only the events it cannot
//! vouch for; `event` maps events and keys onto the model; [`error`] says what went wrong where.
//!
//! ```
//! use fusionscope_formats::TraceReader;
//! let mut reader = TraceReader::new();
//! for chunk in br#"{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": 2, "pid": 0}]}"#.chunks(5) {
//!     reader.feed(chunk).unwrap();
//! }
//! let trace = reader.finish().unwrap();
//! assert_eq!(trace.kernels.len(), 1);
//! ```
//!
//! Gzip is recognised by its magic bytes, not a file name, and decompressed as it streams in.
//! Each event's bytes are read into a borrowed view ([`raw::RawEvent`]) by the one-pass
//! extractor, or by serde where the extractor defers (the view is the same either way); only
//! kernels, memory copies/sets, CPU ops and annotations with an `External id`, launch calls and
//! device properties are kept, with names interned.
//!
//! Memory stays bounded whatever the file: the scanner holds one item, of at most
//! [`limits::TRACE_ITEM_BYTES`], and gzip is inflated a few tens of KB at a time (a
//! 64 KB slice of a `.gz` can inflate to 64 MB).

pub mod distributed;
pub mod error;
mod event;
pub mod extract;
mod prefilter;
pub mod raw;
pub mod scan;
mod structural;

pub use error::TraceError;
use event::Builder;
use scan::Scanner;

use crate::interface::{readable, About};
use trace::read::inflate::Inflate;
use trace::read::EventSink;
use trace::Trace;

/// Incremental reader into any [`EventSink`]; see the module docs.
pub struct Reader<S> {
    inflate: Inflate,
    scanner: Scanner,
    builder: Builder<S>,
    failed: bool,
}

/// The reader of a whole [`Trace`].
pub type TraceReader = Reader<Trace>;

impl<S: EventSink + Default> Default for Reader<S> {
    fn default() -> Self {
        Self::with_sink(S::default())
    }
}

impl<S: EventSink + Default> Reader<S> {
    pub fn new() -> Self {
        Self::with_sink(S::default())
    }
}

impl<S: EventSink> Reader<S> {
    /// A reader handing the events to `sink`.
    pub fn with_sink(sink: S) -> Self {
        Reader { inflate: Inflate::new(), scanner: Scanner::new(), builder: Builder::new(sink), failed: false }
    }

    /// Bytes of input fed so far (of the file as given, compressed or not): for progress bars.
    pub fn bytes_consumed(&self) -> u64 {
        self.inflate.consumed()
    }

    /// Bytes of JSON text scanned so far (equal to `bytes_consumed` for plain JSON).
    pub fn json_bytes(&self) -> u64 {
        self.scanner.bytes_seen()
    }

    /// Events seen so far.
    pub fn events_seen(&self) -> u64 {
        self.builder.header.event_count
    }

    /// Reads the next slice of the file. After an error the reader is unusable.
    pub fn feed(&mut self, chunk: &[u8]) -> Result<(), TraceError> {
        if self.failed {
            return Err(TraceError::Poisoned);
        }
        let Self { inflate, scanner, builder, .. } = self;
        let result = inflate.feed(chunk, &mut |text| scanner.feed_to(text, builder));
        self.failed = result.is_err();
        result
    }

    /// Ends the input and returns the sink's result (the trace): an error if it stopped early.
    pub fn finish(mut self) -> Result<S::Output, TraceError> {
        if self.failed {
            return Err(TraceError::Poisoned);
        }
        let Self { inflate, scanner, builder, .. } = &mut self;
        inflate.finish(&mut |text| scanner.feed_to(text, builder))?;
        self.scanner.finish()?;
        if !self.scanner.has_events_array() {
            return Err(TraceError::NoEvents);
        }
        let (mut header, sink) = self.builder.into_parts();
        header.json_bytes = self.scanner.bytes_seen();
        Ok(sink.finish(header))
    }
}

/// What the format says of itself, for the registry ([`crate::registry`]): a JSON object with `traceEvents`, or with
/// `schemaVersion` and `deviceProperties` (a trace whose events come later).
pub const ABOUT: About = About {
    name: "kineto",
    noun: "a PyTorch-profiler trace",
    describe: "a PyTorch-profiler (Kineto) trace",
    detect: |s| s.has_key("traceEvents") || (s.has_key("schemaVersion") && s.has_key("deviceProperties")),
};

/// The format, for the registry.
pub struct Kineto;

readable!(Kineto, Reader, TraceError);

/// Reads a whole trace held in memory (plain or gzip).
pub fn read_trace(bytes: &[u8]) -> Result<Trace, TraceError> {
    let mut reader = TraceReader::new();
    for chunk in bytes.chunks(1 << 20) {
        reader.feed(chunk)?;
    }
    reader.finish()
}

#[cfg(test)]
mod tests;
