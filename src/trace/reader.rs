//! The push reader: bytes in (plain or gzip JSON, any chunking), a [`Trace`] out — or, with
//! another [`EventSink`], whatever that sink folds the events into (the summary-only mode's
//! per-name statistics, [`super::summary_only`]).
//!
//! ```
//! use fusionscope::trace::TraceReader;
//! let mut reader = TraceReader::new();
//! for chunk in br#"{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": 2, "pid": 0}]}"#.chunks(5) {
//!     reader.feed(chunk).unwrap();
//! }
//! let trace = reader.finish().unwrap();
//! assert_eq!(trace.kernels.len(), 1);
//! ```
//!
//! Gzip is recognised by its magic bytes, not a file name, and decompressed as it streams in.
//! Each event's bytes are parsed by serde into a borrowed view ([`super::raw::RawEvent`]); only
//! kernels, memory copies/sets, CPU ops and annotations with an `External id`, launch calls and
//! device properties are kept, with names interned.
//!
//! Memory stays bounded whatever the file: the scanner holds one item, of at most
//! [`crate::limits::TRACE_ITEM_BYTES`], and gzip is inflated a few tens of KB at a time (a
//! 64 KB slice of a `.gz` can inflate to 64 MB).

use std::io::Write;

use thiserror::Error;

use super::intern::{NameId, NameTable};
use super::model::{
    Annotation, CpuOp, DeviceProperties, Kernel, Launch, RecordedShapes, Trace, Transfer, TransferKind, VersionKeys,
};
use super::raw::{CollectiveArgs, RawDevice, RawEvent};
use super::scan::{Item, Part, ScanError, Scanner};
use crate::limits::TRACE_NAME_BYTES;
use crate::units::{format_bytes, group_digits};

/// Why a trace could not be read. Offsets count bytes of the JSON text, i.e. after gzip
/// decompression for a `.json.gz` file.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum TraceError {
    #[error("not a trace: {problem} at byte {offset} of the JSON text")]
    Structure { offset: u64, problem: &'static str },
    #[error("malformed event at byte {offset} of the JSON text: {message}")]
    Event { offset: u64, message: String },
    #[error("malformed top-level \"{key}\" at byte {offset} of the JSON text: {message}")]
    Field { key: String, offset: u64, message: String },
    /// One event, top-level value or key is longer than its budget ([`crate::limits`]).
    #[error(
        "{part} starting at byte {offset} of the JSON text is longer than the limit of {} ({} bytes)",
        format_bytes(*limit as u64),
        group_digits(*limit as u64)
    )]
    TooLong { part: Part, offset: u64, limit: usize },
    /// Arrays and objects nest deeper than the budget in one item; `at` is the bracket.
    #[error("{part} starting at byte {offset} of the JSON text nests deeper than the limit of {limit} levels (at byte {at})")]
    TooDeep { part: Part, offset: u64, at: u64, limit: u32 },
    /// The distinct names held (kernels, ops, annotations) pass their budget.
    #[error(
        "the event at byte {offset} of the JSON text takes the trace's distinct names past the limit of {} in all",
        format_bytes(*limit as u64)
    )]
    TooManyNames { offset: u64, limit: usize },
    #[error("corrupt gzip data after {compressed_offset} compressed bytes: {message}")]
    Gzip { compressed_offset: u64, message: String },
    #[error("not a trace: the JSON has no \"traceEvents\" array")]
    NoEvents,
    #[error("the reader was used after an error")]
    Poisoned,
}

impl From<ScanError> for TraceError {
    fn from(e: ScanError) -> Self {
        match e {
            ScanError::Syntax { offset, problem } => TraceError::Structure { offset, problem },
            ScanError::TooLong { part, offset, limit } => TraceError::TooLong { part, offset, limit },
            ScanError::TooDeep { part, offset, at, limit } => TraceError::TooDeep { part, offset, at, limit },
        }
    }
}

/// Whether the input turned out to be gzip.
enum Decoding {
    /// Fewer than two bytes seen: cannot tell yet.
    Undecided(Vec<u8>),
    Plain,
    Gzip(Box<flate2::write::MultiGzDecoder<Vec<u8>>>),
}

/// What the reader keeps of a trace whatever the sink: the names it interned, the device list,
/// the version keys and the counts. Its size grows with distinct names, never with events.
#[derive(Debug, Clone, Default)]
pub struct TraceHeader {
    pub names: NameTable,
    pub devices: Vec<DeviceProperties>,
    pub versions: VersionKeys,
    /// Events in `traceEvents`, kept or not.
    pub event_count: u64,
    /// Size of the JSON text (after decompression).
    pub json_bytes: u64,
    /// The top-level `distributedInfo` as written (JSON text; its budget is a top-level
    /// value's): a rank's identity, read by `super::ranks`.
    pub distributed_info: Option<String>,
}

/// Where the reader hands each event it keeps, as it reads: [`Trace`] keeps them all (the
/// default reader, [`TraceReader`]); a fold keeps what it needs (the summary-only mode). Names
/// come interned in the reader's [`NameTable`], which is passed along to resolve them.
pub trait EventSink {
    /// What [`Reader::finish`] returns.
    type Output;
    /// Whether CPU-side events (ops, launch calls, annotations) are wanted. When not, the
    /// reader skips them before interning any of their names or shapes.
    const CPU_SIDE: bool = true;
    fn kernel(&mut self, names: &NameTable, kernel: Kernel);
    /// A kernel whose args carry c10d's collective keys (an NCCL/RCCL kernel recorded with
    /// shapes): by default just a [`Self::kernel`]; the ranks fold keeps the keys.
    fn collective_kernel(&mut self, names: &NameTable, kernel: Kernel, _args: &CollectiveArgs<'_>) {
        self.kernel(names, kernel)
    }
    fn transfer(&mut self, names: &NameTable, transfer: Transfer);
    fn cpu_op(&mut self, _op: CpuOp) {}
    fn annotation(&mut self, _annotation: Annotation) {}
    /// A launch call with its correlation id.
    fn launch(&mut self, _correlation: u64, _launch: Launch) {}
    /// The end of the input: the sink's result, with what the reader kept beside it.
    fn finish(self, header: TraceHeader) -> Self::Output;
}

/// The whole trace as its own sink: every event pushed, sorted by start time at the end.
impl EventSink for Trace {
    type Output = Trace;
    fn kernel(&mut self, _: &NameTable, kernel: Kernel) {
        self.kernels.push(kernel);
    }
    fn transfer(&mut self, _: &NameTable, transfer: Transfer) {
        self.transfers.push(transfer);
    }
    fn cpu_op(&mut self, op: CpuOp) {
        self.cpu_ops.push(op);
    }
    fn annotation(&mut self, annotation: Annotation) {
        self.annotations.push(annotation);
    }
    fn launch(&mut self, correlation: u64, launch: Launch) {
        self.launches.insert(correlation, launch);
    }
    fn finish(mut self, header: TraceHeader) -> Trace {
        let TraceHeader { names, devices, versions, event_count, json_bytes, .. } = header;
        (self.names, self.devices, self.versions, self.event_count, self.json_bytes) =
            (names, devices, versions, event_count, json_bytes);
        let by_ts = |a: &f64, b: &f64| a.total_cmp(b);
        self.kernels.sort_by(|a, b| by_ts(&a.ts, &b.ts));
        self.transfers.sort_by(|a, b| by_ts(&a.ts, &b.ts));
        self.cpu_ops.sort_by(|a, b| by_ts(&a.ts, &b.ts));
        self.annotations.sort_by(|a, b| by_ts(&a.ts, &b.ts));
        self
    }
}

/// Turns items, as the scanner finds them, into the header and the sink's events.
struct Builder<S> {
    header: TraceHeader,
    sink: S,
}

/// Incremental reader into any [`EventSink`]; see the module docs.
pub struct Reader<S> {
    decoding: Decoding,
    scanner: Scanner,
    builder: Builder<S>,
    /// Bytes given to `feed` (compressed ones for gzip).
    consumed: u64,
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
        Reader {
            decoding: Decoding::Undecided(Vec::new()),
            scanner: Scanner::new(),
            builder: Builder { header: TraceHeader::default(), sink },
            consumed: 0,
            failed: false,
        }
    }

    /// Bytes of input fed so far (of the file as given, compressed or not): for progress bars.
    pub fn bytes_consumed(&self) -> u64 {
        self.consumed
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
        let result = self.feed_inner(chunk);
        self.failed = result.is_err();
        result
    }

    fn feed_inner(&mut self, chunk: &[u8]) -> Result<(), TraceError> {
        let before = self.consumed;
        self.consumed += chunk.len() as u64;
        if let Decoding::Undecided(head) = &mut self.decoding {
            head.extend_from_slice(chunk);
            if head.len() < 2 {
                return Ok(());
            }
            let head = std::mem::take(head);
            self.decoding = if head[..2] == [0x1f, 0x8b] {
                Decoding::Gzip(Box::new(flate2::write::MultiGzDecoder::new(Vec::new())))
            } else {
                Decoding::Plain
            };
            return self.decode(&head, 0);
        }
        self.decode(chunk, before)
    }

    /// Passes `bytes` (starting at `compressed_offset` of the input) through decompression
    /// to the scanner.
    fn decode(&mut self, bytes: &[u8], compressed_offset: u64) -> Result<(), TraceError> {
        let Self { decoding, scanner, builder, .. } = self;
        match decoding {
            Decoding::Plain => scanner.feed(bytes, &mut |item| builder.item(item)),
            Decoding::Gzip(gz) => {
                // One `write` inflates at most the decoder's buffer (32 KiB) into ours, so
                // scanning after each keeps the inflated bytes small: `write_all` on a 64 KB
                // slice of a crafted file would first inflate all of its 64 MB.
                let mut rest = bytes;
                while !rest.is_empty() {
                    let at = compressed_offset + (bytes.len() - rest.len()) as u64;
                    let gzip_err = |message: String| TraceError::Gzip { compressed_offset: at, message };
                    match gz.write(rest) {
                        Ok(0) => return Err(gzip_err("the decoder accepts no more data".to_string())),
                        Ok(n) => rest = &rest[n..],
                        Err(e) => return Err(gzip_err(e.to_string())),
                    }
                    let out = std::mem::take(gz.get_mut());
                    scanner.feed(&out, &mut |item| builder.item(item))?;
                    *gz.get_mut() = recycle(out);
                }
                Ok(())
            }
            Decoding::Undecided(_) => Ok(()),
        }
    }

    /// Ends the input and returns the sink's result (the trace): an error if it stopped early.
    pub fn finish(mut self) -> Result<S::Output, TraceError> {
        if self.failed {
            return Err(TraceError::Poisoned);
        }
        match std::mem::replace(&mut self.decoding, Decoding::Plain) {
            Decoding::Undecided(head) => self.decode(&head, 0)?,
            Decoding::Plain => {}
            Decoding::Gzip(mut gz) => {
                let offset = self.consumed;
                let gzip_err =
                    |e: std::io::Error| TraceError::Gzip { compressed_offset: offset, message: e.to_string() };
                gz.try_finish().map_err(gzip_err)?;
                let out = std::mem::take(gz.get_mut());
                let Self { scanner, builder, .. } = &mut self;
                scanner.feed(&out, &mut |item| builder.item(item))?;
            }
        }
        self.scanner.finish()?;
        if !self.scanner.has_events_array() {
            return Err(TraceError::NoEvents);
        }
        let Builder { mut header, sink } = self.builder;
        header.json_bytes = self.scanner.bytes_seen();
        Ok(sink.finish(header))
    }
}

/// An emptied buffer back for the decoder to reuse its allocation.
fn recycle(mut v: Vec<u8>) -> Vec<u8> {
    v.clear();
    v
}

/// Reads a whole trace held in memory (plain or gzip).
pub fn read_trace(bytes: &[u8]) -> Result<Trace, TraceError> {
    let mut reader = TraceReader::new();
    for chunk in bytes.chunks(1 << 20) {
        reader.feed(chunk)?;
    }
    reader.finish()
}

/// Cheap test on an event's raw bytes for the categories the analysis drops and that make up
/// most of a trace (Python frames, flows, memory instants): skips parsing them at all. Only a
/// complete `"cat": "<category>"` member matches, so a name that merely contains the word
/// does not.
fn is_dropped_category(bytes: &[u8]) -> bool {
    const DROPPED: [&[u8]; 4] = [b"\"python_function\"", b"\"ac2g\"", b"\"cpu_instant_event\"", b"\"fwdbwd\""];
    let Some(at) = memchr::memmem::find(bytes, b"\"cat\"") else { return false };
    if !at_top_of_object(&bytes[..at]) {
        return false;
    }
    let rest = &bytes[at + 5..];
    let rest = trim_start(rest);
    let Some(rest) = rest.strip_prefix(b":") else { return false };
    let rest = trim_start(rest);
    DROPPED.iter().any(|d| rest.starts_with(d))
}

/// Whether the end of `prefix` (the start of an event) is directly inside the event object,
/// not inside a string or a nested object such as `args`.
fn at_top_of_object(prefix: &[u8]) -> bool {
    let (mut depth, mut in_string, mut escape) = (0u32, false, false);
    for &b in prefix {
        if in_string {
            match (escape, b) {
                (true, _) => escape = false,
                (false, b'\\') => escape = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
        } else {
            match b {
                b'"' => in_string = true,
                b'{' | b'[' => depth += 1,
                b'}' | b']' => depth = depth.saturating_sub(1),
                _ => {}
            }
        }
    }
    depth == 1 && !in_string
}

fn trim_start(b: &[u8]) -> &[u8] {
    let n = b.iter().take_while(|c| matches!(c, b' ' | b'\n' | b'\r' | b'\t')).count();
    &b[n..]
}

impl<S: EventSink> Builder<S> {
    fn item(&mut self, item: Item<'_>) -> Result<(), TraceError> {
        match item {
            Item::Event { bytes, offset } => {
                self.header.event_count += 1;
                if is_dropped_category(bytes) {
                    return Ok(());
                }
                let event: RawEvent = serde_json::from_slice(bytes)
                    .map_err(|e| TraceError::Event { offset: offset + error_offset(bytes, &e), message: strip(&e) })?;
                self.event(event);
                if self.header.names.bytes() > TRACE_NAME_BYTES {
                    return Err(TraceError::TooManyNames { offset, limit: TRACE_NAME_BYTES });
                }
                Ok(())
            }
            Item::Field { key, value, offset } => self.field(key, value, offset),
        }
    }

    fn event(&mut self, e: RawEvent<'_>) {
        if e.ph.as_str() != Some("X") {
            return;
        }
        let (Some(cat), Some(name)) = (e.cat.as_str(), e.name.as_str()) else { return };
        let (names, sink) = (&mut self.header.names, &mut self.sink);
        let ts = e.ts.0.unwrap_or(0.0);
        let dur = e.dur.0.filter(|d| *d >= 0.0).unwrap_or(0.0);
        let args = e.args.0.unwrap_or_default();
        match cat {
            "kernel" => {
                let kernel = Kernel {
                    name: names.intern(name),
                    ts,
                    dur,
                    device: e.pid.int().or(args.device.int()).unwrap_or(-1),
                    stream: args.stream.int().or(e.tid.int()).unwrap_or(-1),
                    correlation: args.correlation.id(),
                    external_id: args.external_id.id(),
                    graph_node: args.kind.as_str() == Some("Dispatch Task"),
                };
                match args.collective() {
                    Some(collective) => sink.collective_kernel(names, kernel, &collective),
                    None => sink.kernel(names, kernel),
                }
            }
            "gpu_memcpy" | "gpu_memset" => {
                let transfer = Transfer {
                    kind: if cat == "gpu_memcpy" { TransferKind::Memcpy } else { TransferKind::Memset },
                    name: names.intern(name),
                    ts,
                    dur,
                    device: e.pid.int().or(args.device.int()).unwrap_or(-1),
                    bytes: args.bytes.id(),
                    correlation: args.correlation.id(),
                    external_id: args.external_id.id(),
                };
                sink.transfer(names, transfer);
            }
            "cpu_op" | "user_annotation" if S::CPU_SIDE => {
                if cat == "user_annotation" {
                    sink.annotation(Annotation {
                        name: names.intern(name),
                        ts,
                        dur,
                        gpu: false,
                        pid: e.pid.int().unwrap_or(-1),
                    });
                }
                if let Some(external_id) = args.external_id.id() {
                    sink.cpu_op(CpuOp {
                        name: names.intern(name),
                        ts,
                        dur,
                        tid: e.tid.int().unwrap_or(-1),
                        external_id,
                        annotation: cat == "user_annotation",
                        shapes: if cat == "cpu_op" {
                            RecordedShapes {
                                dims: array_text(names, args.input_dims),
                                types: array_text(names, args.input_types),
                                concrete: array_text(names, args.concrete_inputs),
                            }
                        } else {
                            RecordedShapes::default()
                        },
                    });
                }
            }
            "gpu_user_annotation" if S::CPU_SIDE => {
                sink.annotation(Annotation {
                    name: names.intern(name),
                    ts,
                    dur,
                    gpu: true,
                    pid: e.pid.int().unwrap_or(-1),
                });
            }
            "cuda_runtime" | "cuda_driver" if S::CPU_SIDE => {
                if let Some(c) = args.correlation.id() {
                    let launch = Launch {
                        name: names.intern(name),
                        kernel: args.kernel.as_str().map(|k| names.intern(k)),
                        external_id: args.external_id.id(),
                        ts,
                        tid: e.tid.int().unwrap_or(-1),
                    };
                    sink.launch(c, launch);
                }
            }
            _ => {}
        }
    }

    fn field(&mut self, key: &[u8], value: &[u8], offset: u64) -> Result<(), TraceError> {
        let key_str = String::from_utf8_lossy(key);
        let err = |e: serde_json::Error| TraceError::Field {
            key: key_str.to_string(),
            offset: offset + error_offset(value, &e),
            message: strip(&e),
        };
        let versions = &mut self.header.versions;
        let slot = match key {
            b"deviceProperties" => {
                let devices: Vec<RawDevice> = match serde_json::from_slice(value) {
                    Ok(d) => d,
                    // Not a list: validate the JSON, then ignore the key.
                    Err(_) => {
                        serde_json::from_slice::<serde::de::IgnoredAny>(value).map_err(err)?;
                        Vec::new()
                    }
                };
                self.header.devices = devices
                    .into_iter()
                    .map(|d| DeviceProperties {
                        id: d.id.int(),
                        name: d.name.as_str().unwrap_or("").trim().to_string(),
                        warp_size: small(d.warp_size),
                        compute_major: small(d.compute_major),
                        compute_minor: small(d.compute_minor),
                        num_sms: small(d.num_sms),
                    })
                    .collect();
                return Ok(());
            }
            b"distributedInfo" => {
                serde_json::from_slice::<serde::de::IgnoredAny>(value).map_err(err)?;
                self.header.distributed_info = Some(String::from_utf8_lossy(value).into_owned());
                return Ok(());
            }
            b"cupti_version" => &mut versions.cupti_version,
            b"cuda_runtime_version" => &mut versions.cuda_runtime_version,
            b"cuda_driver_version" => &mut versions.cuda_driver_version,
            b"roctracer_version" => &mut versions.roctracer_version,
            b"hip_runtime_version" => &mut versions.hip_runtime_version,
            b"hip_driver_version" => &mut versions.hip_driver_version,
            _ => {
                serde_json::from_slice::<serde::de::IgnoredAny>(value).map_err(err)?;
                return Ok(());
            }
        };
        let v: serde_json::Value = serde_json::from_slice(value).map_err(err)?;
        *slot = match v {
            serde_json::Value::Null => None,
            serde_json::Value::String(s) => Some(s),
            other => Some(other.to_string()),
        };
        Ok(())
    }
}

/// Interns a recorded-shapes value when it is a JSON array (anything else reads as absent).
fn array_text(names: &mut NameTable, value: Option<&serde_json::value::RawValue>) -> Option<NameId> {
    let text = value?.get();
    text.starts_with('[').then(|| names.intern(text))
}

fn small(n: super::raw::Num) -> Option<u32> {
    n.int().and_then(|v| u32::try_from(v).ok())
}

/// Byte offset inside `bytes` of a serde_json error (which reports line and column).
fn error_offset(bytes: &[u8], e: &serde_json::Error) -> u64 {
    let mut line = 1;
    let mut line_start = 0;
    for (i, &b) in bytes.iter().enumerate() {
        if line == e.line() {
            break;
        }
        if b == b'\n' {
            line += 1;
            line_start = i + 1;
        }
    }
    (line_start + e.column().saturating_sub(1)).min(bytes.len()) as u64
}

/// serde_json's message without its " at line L column C" (the offset says where).
fn strip(e: &serde_json::Error) -> String {
    let s = e.to_string();
    match s.rfind(" at line ") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefilter_matches_only_the_category_member() {
        assert!(is_dropped_category(br#"{"ph": "X", "cat" : "python_function", "name": "a.py(1): f"}"#));
        assert!(!is_dropped_category(br#"{"ph": "X", "cat": "cpu_op", "name": "python_function"}"#));
        assert!(!is_dropped_category(br#"{"name": "\"cat\": \"ac2g\"", "cat": "kernel"}"#));
        assert!(!is_dropped_category(br#"{"name": "k", "args": {"cat": "ac2g"}, "cat": "kernel"}"#));
        assert!(!is_dropped_category(br#"{"ph": "X", "cat": "kernel"}"#));
    }

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
        let Decoding::Gzip(decoder) = &reader.decoding else { panic!("not gzip") };
        let inflated = decoder.get_ref().capacity();
        assert!(inflated <= 64 << 10, "{inflated} bytes inflated at once");
        assert_eq!(reader.finish().unwrap().event_count, 1);
    }

    #[test]
    fn error_offsets_point_into_the_event() {
        let text = b"{\"traceEvents\": [\n{\"ph\": \"X\", \"name\": tru}]}";
        let err = read_trace(text).unwrap_err();
        assert_eq!(err, TraceError::Event { offset: 41, message: "expected ident".into() });
    }
}
