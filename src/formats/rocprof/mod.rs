//! rocprofv3's results JSON (`rocprofv3 --output-format json`, `<pid>_results.json`): kernel
//! dispatches named by their kernel symbols, memory copies, and the GPU agents as devices, read
//! into the format-neutral [`Trace`]. The only code that knows rocprofiler-sdk's keys
//! (`docs/trace-analysis.md`, "Other profilers' formats").
//!
//! A push reader like the Kineto one ([`crate::kineto`]): bytes in (plain or gzip, any
//! slicing), a [`Trace`] out, or whatever another [`EventSink`] folds the events into. Unlike a
//! Kineto trace the file is not a list of self-contained events: a dispatch names its kernel by
//! an id the `kernel_symbols` list resolves and its GPU by an agent handle, so the text is
//! gathered (held to [`ROCPROF_JSON_BYTES`]) and parsed at the end by serde into typed records
//! (`raw`): no JSON tree is built, and every key the analysis does not use is skipped.
//!
//! HIP and RCCL API records, where traced (`--hip-trace`, `--rccl-trace`), become launch calls
//! keyed by their correlation id (named from `strings.buffer_records`), which the dispatches
//! they launched share. ROCTx markers and ranges (`--marker-trace`) become CPU annotations named
//! by their messages (`strings.marker_api`, keyed by the record's internal correlation id).
//!
//! What the format lacks: framework ops. A results file has no PyTorch ops, so no shapes and
//! no per-op table: kernels are unattributed, and the views that need ops say the trace has none.
//!
//! ```
//! use fusionscope_formats::rocprof::read_rocprof;
//! let text = br#"{"rocprofiler-sdk-tool": [{
//!   "agents": [{"id": {"handle": 7}, "type": 2, "name": "gfx942", "product_name": "AMD Instinct MI300X", "logical_node_id": 1, "wave_front_size": 64}],
//!   "kernel_symbols": [{"kernel_id": 3, "formatted_kernel_name": "Cijk_Alik_Bljk"}],
//!   "buffer_records": {"kernel_dispatch": [{"start_timestamp": 1000, "end_timestamp": 3500,
//!     "correlation_id": {"internal": 1, "external": 0},
//!     "dispatch_info": {"agent_id": {"handle": 7}, "queue_id": {"handle": 1}, "kernel_id": 3}}]}}]}"#;
//! let trace = read_rocprof(text).unwrap();
//! assert_eq!(trace.kernels.len(), 1);
//! assert_eq!(trace.kernels[0].dur, 2.5);
//! assert_eq!(trace.name(trace.kernels[0].name), "Cijk_Alik_Bljk");
//! assert_eq!(trace.devices[0].name, "AMD Instinct MI300X");
//! ```

mod raw;

use rustc_hash::FxHashMap;
use thiserror::Error;

use crate::interface::{readable, About};
use limits::{ROCPROF_JSON_BYTES, TRACE_NAME_BYTES};
use trace::intern::NameId;
use trace::read::inflate::{GatherError, Gathered};
use trace::read::{EventSink, TraceHeader};
use trace::{Annotation, DeviceProperties, Kernel, Launch, Trace, TraceFormat, Transfer, TransferKind};
use units::{format_bytes, group_digits};

/// Why a rocprofv3 results file could not be read; offsets count bytes of the JSON text
/// (after decompression, for a `.json.gz`).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum RocprofError {
    #[error("malformed rocprofv3 JSON at byte {offset} of the text: {message}")]
    Json { offset: u64, message: String },
    #[error("not a rocprofv3 results file: the JSON has no \"rocprofiler-sdk-tool\" key")]
    NoTool,
    #[error(
        "the JSON text is longer than the limit of {} ({} bytes) for a rocprofv3 results file",
        format_bytes(*limit as u64),
        group_digits(*limit as u64)
    )]
    TooLarge { limit: usize },
    #[error(
        "the kernel names pass the limit of {} in all (at dispatch {dispatch} of process {process})",
        format_bytes(*limit as u64)
    )]
    TooManyNames { process: usize, dispatch: usize, limit: usize },
    #[error("corrupt gzip data after {compressed_offset} compressed bytes: {message}")]
    Gzip { compressed_offset: u64, message: String },
    #[error("the reader was used after an error")]
    Poisoned,
}

impl From<GatherError> for RocprofError {
    fn from(e: GatherError) -> Self {
        match e {
            GatherError::TooLarge { limit } => RocprofError::TooLarge { limit },
            GatherError::Gzip(e) => RocprofError::Gzip { compressed_offset: e.compressed_offset, message: e.message },
            GatherError::Poisoned => RocprofError::Poisoned,
        }
    }
}

/// Incremental reader into any [`EventSink`]; see the module docs.
pub struct Reader<S> {
    /// The input, inflated and held to [`ROCPROF_JSON_BYTES`] (smaller in tests).
    input: Gathered,
    sink: S,
}

/// The reader of a whole [`Trace`].
pub type RocprofReader = Reader<Trace>;

impl<S: EventSink + Default> Default for Reader<S> {
    fn default() -> Self {
        Self::with_sink(S::default())
    }
}

impl<S: EventSink + Default> Reader<S> {
    pub fn new() -> Self {
        Self::default()
    }
}

impl<S: EventSink> Reader<S> {
    pub fn with_sink(sink: S) -> Self {
        Reader { input: Gathered::new(ROCPROF_JSON_BYTES), sink }
    }

    /// Bytes of input fed so far (compressed ones for gzip): for progress bars.
    pub fn bytes_consumed(&self) -> u64 {
        self.input.consumed()
    }

    /// Reads the next slice of the file; an error as soon as the text passes its budget.
    pub fn feed(&mut self, chunk: &[u8]) -> Result<(), RocprofError> {
        Ok(self.input.feed(chunk)?)
    }

    /// Ends the input: parses the text and hands the kernels and copies to the sink.
    pub fn finish(self) -> Result<S::Output, RocprofError> {
        let Self { input, mut sink } = self;
        let text = input.finish()?;
        let root: raw::Root = serde_json::from_slice(&text)
            .map_err(|e| RocprofError::Json { offset: json_offset(&text, &e), message: strip_position(&e) })?;
        let tools = root.tool.ok_or(RocprofError::NoTool)?.into_vec();
        let mut header =
            TraceHeader { json_bytes: text.len() as u64, format: TraceFormat::RocprofJson, ..TraceHeader::default() };
        for (process, tool) in tools.into_iter().enumerate() {
            emit(process, tool, &mut header, &mut sink)?;
        }
        Ok(sink.finish(header))
    }
}

/// rocprofiler-sdk's memory-copy directions (`rocprofiler_memory_copy_operation_t`).
const COPY_NAMES: [&str; 5] = [
    "MEMORY_COPY_NONE",
    "MEMORY_COPY_HOST_TO_HOST",
    "MEMORY_COPY_HOST_TO_DEVICE",
    "MEMORY_COPY_DEVICE_TO_HOST",
    "MEMORY_COPY_DEVICE_TO_DEVICE",
];

/// HSA agent type of a GPU.
const AGENT_GPU: i64 = 2;

/// One process's agents, symbols and records into the header and the sink.
fn emit<S: EventSink>(
    process: usize,
    tool: raw::Tool<'_>,
    header: &mut TraceHeader,
    sink: &mut S,
) -> Result<(), RocprofError> {
    // A kernel's device is its GPU agent's logical node id: the HSA agent index (CPU agents
    // counted first), which is what the PyTorch profiler's ROCm traces carry as `pid`.
    let mut agent_device: FxHashMap<u64, i64> = FxHashMap::default();
    for (i, a) in tool.agents.iter().enumerate() {
        let device = a.logical_node_id.or(a.node_id).unwrap_or(i as i64);
        agent_device.insert(a.id.handle, device);
        if a.kind == Some(AGENT_GPU) && !header.devices.iter().any(|d| d.id == Some(device)) {
            let name = a.product_name.as_deref().filter(|n| !n.is_empty()).or(a.name.as_deref()).unwrap_or("");
            header.devices.push(DeviceProperties {
                id: Some(device),
                name: name.trim().to_string(),
                warp_size: a.wave_front_size.filter(|w| *w > 0),
                compute_major: None,
                compute_minor: None,
                num_sms: a.cu_count,
            });
        }
    }
    let names = &mut header.names;
    let mut symbol: FxHashMap<u64, NameId> = FxHashMap::default();
    for s in &tool.kernel_symbols.0 {
        if let Some(name) = s.name() {
            symbol.insert(s.kernel_id, names.intern(name));
        }
    }
    let device_of = |handle: u64| agent_device.get(&handle).copied().unwrap_or(-1);
    let records = &tool.buffer_records;
    header.event_count = header
        .event_count
        .saturating_add(records.kernel_dispatch.len() as u64)
        .saturating_add(records.memory_copy.len() as u64);
    for (dispatch, d) in records.kernel_dispatch.iter().enumerate() {
        let info = &d.dispatch_info;
        let name = match symbol.get(&info.kernel_id) {
            Some(&id) => id,
            // A dispatch of a kernel the symbol list does not name still counts, by its id.
            None => {
                let id = names.intern(&format!("kernel #{}", info.kernel_id));
                symbol.insert(info.kernel_id, id);
                id
            }
        };
        if names.bytes() > TRACE_NAME_BYTES {
            return Err(RocprofError::TooManyNames { process, dispatch, limit: TRACE_NAME_BYTES });
        }
        let (ts, dur) = span(d.start_timestamp, d.end_timestamp);
        let kernel = Kernel {
            name,
            ts,
            dur,
            device: device_of(info.agent_id.handle),
            // The HIP stream where recorded (rocprofv3 ≥ ROCm 6.4), else the HSA queue.
            stream: i64::try_from(d.stream_id.map_or(info.queue_id.handle, |s| s.handle)).unwrap_or(-1),
            correlation: nonzero(d.correlation_id.internal),
            external_id: nonzero(d.correlation_id.external),
            graph_node: false,
        };
        sink.kernel(names, kernel);
    }
    // HIP and RCCL API calls: the launch calls of the kernels with their correlation id.
    header.event_count =
        header.event_count.saturating_add(records.hip_api.len() as u64).saturating_add(records.rccl_api.len() as u64);
    if S::LAUNCHES {
        let kinds = &tool.strings.buffer_records;
        for call in records.hip_api.iter().chain(&records.rccl_api) {
            let Some(correlation) = nonzero(call.correlation_id.internal) else { continue };
            let names_of = kinds.get(call.kind as usize);
            let name = match names_of.and_then(|k| k.operations.get(call.operation as usize)) {
                Some(op) => names.intern(op),
                None => {
                    let kind = names_of.and_then(|k| k.kind.as_deref()).unwrap_or("API");
                    names.intern(&format!("{kind} operation #{}", call.operation))
                }
            };
            let (ts, dur) = span(call.start_timestamp, call.end_timestamp);
            let launch = Launch {
                name,
                kernel: None,
                external_id: nonzero(call.correlation_id.external),
                ts,
                dur,
                tid: call.thread_id,
            };
            sink.launch(correlation, launch);
        }
    }
    // ROCTx markers and ranges with a message: the CPU annotations (NVTX's counterpart).
    header.event_count = header.event_count.saturating_add(records.marker_api.len() as u64);
    if S::CPU_SIDE && !records.marker_api.is_empty() {
        let messages: FxHashMap<u64, &str> =
            tool.strings.marker_api.iter().filter_map(|m| Some((m.key, m.value.as_deref()?))).collect();
        let pid = tool.metadata.pid.unwrap_or(-1);
        for m in &records.marker_api {
            let Some(message) = messages.get(&m.correlation_id.internal) else { continue };
            let (ts, dur) = span(m.start_timestamp, m.end_timestamp);
            sink.annotation(Annotation { name: names.intern(message), ts, dur, gpu: false, pid });
        }
        if names.bytes() > TRACE_NAME_BYTES {
            return Err(RocprofError::TooManyNames {
                process,
                dispatch: records.kernel_dispatch.len(),
                limit: TRACE_NAME_BYTES,
            });
        }
    }
    for c in &records.memory_copy {
        let name = names.intern(COPY_NAMES.get(c.operation as usize).copied().unwrap_or("MEMORY_COPY"));
        let (ts, dur) = span(c.start_timestamp, c.end_timestamp);
        // The GPU end of the copy (the destination of a host-to-device copy, else the source).
        let gpu = |h: u64| header_is_gpu(&header.devices, device_of(h));
        let device = if gpu(c.dst_agent_id.handle) { c.dst_agent_id.handle } else { c.src_agent_id.handle };
        let transfer = Transfer {
            kind: TransferKind::Memcpy,
            name,
            ts,
            dur,
            device: device_of(device),
            stream: None,
            bytes: c.bytes,
            correlation: nonzero(c.correlation_id.internal),
            external_id: nonzero(c.correlation_id.external),
        };
        sink.transfer(names, transfer);
    }
    Ok(())
}

fn header_is_gpu(devices: &[DeviceProperties], device: i64) -> bool {
    devices.iter().any(|d| d.id == Some(device))
}

/// Start and duration in µs from ns timestamps; a record that ends before it starts lasts 0.
fn span(start_ns: u64, end_ns: u64) -> (f64, f64) {
    (start_ns as f64 / 1000.0, end_ns.saturating_sub(start_ns) as f64 / 1000.0)
}

/// rocprofiler-sdk writes 0 for "no id".
fn nonzero(id: u64) -> Option<u64> {
    (id != 0).then_some(id)
}

/// Byte offset in `text` of a serde_json error (which reports a line and column).
pub(crate) fn json_offset(text: &[u8], e: &serde_json::Error) -> u64 {
    let mut line_start = 0usize;
    if e.line() > 1 {
        let mut seen = 1usize;
        for at in memchr::memchr_iter(b'\n', text) {
            seen += 1;
            if seen == e.line() {
                line_start = at + 1;
                break;
            }
        }
    }
    line_start.saturating_add(e.column().saturating_sub(1)).min(text.len()) as u64
}

/// serde_json's message without its " at line L column C" (the offset says where).
pub(crate) fn strip_position(e: &serde_json::Error) -> String {
    let s = e.to_string();
    match s.rfind(" at line ") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

/// What the format says of itself, for the registry ([`crate::registry`]): a JSON object with `rocprofiler-sdk-tool`.
pub const ABOUT: About = About {
    name: "rocprof-json",
    noun: "a rocprofv3 results file",
    describe: "a rocprofv3 results file (JSON)",
    detect: |s| s.has_key("rocprofiler-sdk-tool"),
};

/// The format, for the registry.
pub struct Rocprof;

readable!(Rocprof, Reader, RocprofError);

/// Reads a whole results file held in memory (plain or gzip).
pub fn read_rocprof(bytes: &[u8]) -> Result<Trace, RocprofError> {
    let mut reader = RocprofReader::new();
    for chunk in bytes.chunks(1 << 20) {
        reader.feed(chunk)?;
    }
    reader.finish()
}

#[cfg(test)]
mod tests {
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
        assert_eq!(
            devices,
            vec![(Some(1), "AMD Instinct MI355X", Some(64)), (Some(2), "AMD Instinct MI355X", Some(64))]
        );
        let [copy] = t.transfers.as_slice() else { panic!("{:?}", t.transfers) };
        assert_eq!((t.name(copy.name), copy.ts, copy.dur, copy.device), ("MEMORY_COPY_HOST_TO_DEVICE", 0.5, 0.4, 2));
        assert_eq!(copy.bytes, Some(4096));
        let p = trace::platform::platform(&t);
        assert_eq!(p.vendor, trace::Vendor::Amd);
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
        r.input = Gathered::new(100);
        assert_eq!(r.feed(&[b' '; 101]).unwrap_err(), RocprofError::TooLarge { limit: 100 });
        assert_eq!(r.feed(b"{}").unwrap_err(), RocprofError::Poisoned);
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        gz.write_all(TWO_PROCESSES.as_bytes()).unwrap();
        let gz = gz.finish().unwrap();
        assert!(matches!(read_rocprof(&gz[..gz.len() - 9]).unwrap_err(), RocprofError::Gzip { .. }));
    }

    #[test]
    fn roctx_markers_and_ranges_become_annotations_named_by_their_messages() {
        // As rocprofv3 --marker-trace writes them: records in buffer_records.marker_api, their
        // messages in strings.marker_api keyed by the record's internal correlation id (a
        // roctxRangePush/Pop pair is one record from push to pop). A record with no message (a
        // control call such as roctxProfilerPause) is no annotation.
        let text = r#"{"rocprofiler-sdk-tool": [{"metadata": {"pid": 11},
          "strings": {"marker_api": [{"key": 7, "value": "forward"}, {"key": 9, "value": "step 3"}]},
          "buffer_records": {"kernel_dispatch": [], "marker_api": [
            {"kind": 2, "operation": 3, "thread_id": 5, "correlation_id": {"internal": 7, "external": 0},
             "start_timestamp": 10000, "end_timestamp": 35000},
            {"kind": 2, "operation": 0, "thread_id": 5, "correlation_id": {"internal": 9, "external": 0},
             "start_timestamp": 2000, "end_timestamp": 2000},
            {"kind": 3, "operation": 1, "thread_id": 5, "correlation_id": {"internal": 10, "external": 0},
             "start_timestamp": 40000, "end_timestamp": 41000}]}}]}"#;
        let t = read_rocprof(text.as_bytes()).unwrap();
        let got: Vec<(&str, f64, f64, bool, i64)> =
            t.annotations.iter().map(|a| (t.name(a.name), a.ts, a.dur, a.gpu, a.pid)).collect();
        assert_eq!(got, vec![("step 3", 2.0, 0.0, false, 11), ("forward", 10.0, 25.0, false, 11)]);
        assert_eq!(t.event_count, 3);
        // A file traced without --marker-trace has none.
        assert!(read_rocprof(TWO_PROCESSES.as_bytes()).unwrap().annotations.is_empty());
    }

    #[test]
    fn hip_and_rccl_calls_become_launches_named_from_the_strings() {
        let text = r#"{"rocprofiler-sdk-tool": {
          "strings": {"buffer_records": [{"kind": "NONE", "operations": []}, {"kind": "A", "operations": []},
            {"kind": "B", "operations": []}, {"kind": "C", "operations": []}, {"kind": "D", "operations": []},
            {"kind": "HIP_RUNTIME_API", "operations": ["hipApiName", "hipLaunchKernel"]}]},
          "kernel_symbols": [{"kernel_id": 1, "formatted_kernel_name": "k"}],
          "buffer_records": {
            "kernel_dispatch": [{"start_timestamp": 5000, "end_timestamp": 6000, "correlation_id": {"internal": 7, "external": 0},
              "dispatch_info": {"kernel_id": 1}}],
            "hip_api": [{"kind": 5, "operation": 1, "correlation_id": {"internal": 7, "external": 3}, "start_timestamp": 4000,
              "end_timestamp": 4500, "thread_id": 42}],
            "rccl_api": [{"kind": 14, "operation": 2, "correlation_id": {"internal": 8, "external": 0}, "start_timestamp": 4600,
              "thread_id": 42}]}}}"#;
        let t = read_rocprof(text.as_bytes()).unwrap();
        let l = &t.launches[&7];
        assert_eq!((t.name(l.name), l.ts, l.dur, l.tid, l.external_id), ("hipLaunchKernel", 4.0, 0.5, 42, Some(3)));
        assert_eq!(t.kernels[0].correlation, Some(7));
        // A kind the strings do not list: named by its number.
        assert_eq!(t.name(t.launches[&8].name), "API operation #2");
        // No end recorded: no duration.
        assert_eq!(t.launches[&8].dur, 0.0);
        assert_eq!(t.event_count, 3);
    }
}
