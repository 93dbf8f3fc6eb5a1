//! XLA's trace-event JSON: what JAX writes as `perfetto_trace.json.gz`
//! (`jax.profiler.trace(…, create_perfetto_trace=True)`) and TensorBoard's profile plugin as
//! `*.trace.json.gz`. Both are an XLA profile ([`crate::xplane`]) converted by TSL's
//! `ConvertXSpaceToTraceContainer` and `TraceContainerToJson` (`xla/tsl/profiler/convert/`):
//! each GPU plane becomes a process named by the plane (`/device:GPU:0`), each of its lines a
//! thread named by the line (`Stream #17(Kernel)`, `XLA Ops`), each event a complete (`"X"`)
//! event whose `ts` and `dur` are µs and whose `args` are the event's stats as strings
//! (`hlo_op`, `hlo_module`, `correlation_id`, `kernel_details`). JAX only drops the
//! `metadata` key; the list ends with an empty event `{}`.
//!
//! Read into the format-neutral [`Trace`] as the protobuf is: the stream threads' events are
//! kernels and copies, the derived threads are skipped, and a kernel's HLO op becomes the op
//! that launched it (`xplane::stream::StreamEvent` does both readers' mapping). Process and
//! thread names come first in the converter's output, so events stream through; an event of a
//! thread not yet named waits until the end.
//!
//! A trace with no GPU process is a CPU run (`jax[cpu]`): the `/host:CPU` process's events
//! that carry an `hlo_op` are the ops XLA's CPU client ran, read as kernels of one CPU device
//! (the thread the stream), as the protobuf reader reads them. They are kept until the end,
//! where it is known that no GPU came.
//!
//! What the format lacks: everything the protobuf has and the conversion drops — the planes'
//! stats, so **no device model** (a GPU is `/device:GPU:N`; the chip is not detected, give
//! `--chip`), and, as for the protobuf, shapes and framework ops. A GPU whose kernels carry
//! ROCm's `.kd` descriptor suffix is named an AMD GPU.
//!
//! ```
//! use fusionscope_formats::xla_json::read_xla_json;
//! let text = br#"{"displayTimeUnit":"ns","traceEvents":[
//!   {"ph":"M","pid":1,"name":"process_name","args":{"name":"/device:GPU:0"}},
//!   {"ph":"M","pid":1,"tid":7,"name":"thread_name","args":{"name":"Stream #7(Kernel)"}},
//!   {"ph":"X","pid":1,"tid":7,"ts":2.5,"dur":1.25,"name":"loop_fusion","args":{"hlo_op":"fusion.3"}},
//!   {}]}"#;
//! let trace = read_xla_json(text).unwrap();
//! assert_eq!(trace.kernels.len(), 1);
//! assert_eq!(trace.name(trace.cpu_ops[0].name), "fusion.3");
//! ```

use rustc_hash::{FxHashMap, FxHashSet};
use serde::Deserialize;
use serde_json::value::RawValue;

use crate::interface::{readable, About};
use crate::kineto::error::{error_offset, strip};
use crate::kineto::raw::{Num, Text};
use crate::kineto::scan::{Item, Scanner};
use crate::xplane::stream::{gpu_number, line_kind, LineKind, StreamEvent, CPU_DEVICE_NUMBER, HOST_CPU_PLANE};
use crate::TraceError;
use limits::TRACE_NAME_BYTES;
use trace::intern::NameId;
use trace::read::inflate::Inflate;
use trace::read::{EventSink, TraceHeader};
use trace::{DeviceProperties, Trace, TraceFormat};

/// One element of `traceEvents`, leniently: a field of another type reads as absent.
#[derive(Deserialize)]
struct RawEvent<'a> {
    #[serde(default, borrow)]
    ph: Text<'a>,
    #[serde(default, borrow)]
    name: Text<'a>,
    #[serde(default)]
    pid: Num,
    #[serde(default)]
    tid: Num,
    #[serde(default)]
    ts: Num,
    #[serde(default)]
    dur: Num,
    #[serde(default, borrow)]
    args: Option<&'a RawValue>,
}

/// The args the reader uses: a metadata event's `name`, a kernel's stats.
#[derive(Deserialize, Default)]
struct RawArgs<'a> {
    #[serde(default, borrow)]
    name: Text<'a>,
    #[serde(default, borrow)]
    hlo_op: Text<'a>,
    #[serde(default)]
    correlation_id: Num,
}

/// A stream event whose thread was not named yet when it was read, or an HLO op of the host's
/// CPU kept until the end ([`Builder::host_ops`]).
struct Pending {
    pid: i64,
    tid: i64,
    name: NameId,
    hlo_op: Option<NameId>,
    ts: f64,
    dur: f64,
    correlation: Option<u64>,
}

/// Incremental reader into any [`EventSink`]: bytes in (plain or gzip, any slicing), the sink's
/// result out at `finish`.
pub struct Reader<S> {
    inflate: Inflate,
    scanner: Scanner,
    builder: Builder<S>,
    failed: bool,
}

/// The reader of a whole [`Trace`].
pub type XlaJsonReader = Reader<Trace>;

struct Builder<S> {
    header: TraceHeader,
    sink: S,
    /// Process id → GPU number, for processes named `/device:GPU:N`.
    gpus: FxHashMap<i64, i64>,
    /// (process, thread) → what the thread's line holds.
    threads: FxHashMap<(i64, i64), LineKind>,
    /// Processes named other than a GPU (`/host:CPU`): their events are dropped as read, but
    /// for the host CPU's HLO ops while no GPU has come.
    not_gpus: FxHashSet<i64>,
    /// The processes named `/host:CPU`.
    host_cpu: FxHashSet<i64>,
    /// The host CPU's events that name an HLO op, while no GPU process has come: a CPU run's
    /// kernels if none comes.
    host_ops: Vec<Pending>,
    /// GPU processes with a kernel named by its ROCm descriptor (`….kd`).
    rocm: FxHashMap<i64, bool>,
    pending: Vec<Pending>,
    next_op_id: u64,
}

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
        Reader {
            inflate: Inflate::new(),
            scanner: Scanner::new(),
            builder: Builder {
                header: TraceHeader { format: TraceFormat::XlaJson, ..TraceHeader::default() },
                sink,
                gpus: FxHashMap::default(),
                not_gpus: FxHashSet::default(),
                host_cpu: FxHashSet::default(),
                host_ops: Vec::new(),
                threads: FxHashMap::default(),
                rocm: FxHashMap::default(),
                pending: Vec::new(),
                next_op_id: 1,
            },
            failed: false,
        }
    }

    /// Bytes of input fed so far (compressed ones for gzip).
    pub fn bytes_consumed(&self) -> u64 {
        self.inflate.consumed()
    }

    /// Reads the next slice of the file. After an error the reader is unusable.
    pub fn feed(&mut self, chunk: &[u8]) -> Result<(), TraceError> {
        if self.failed {
            return Err(TraceError::Poisoned);
        }
        let Self { inflate, scanner, builder, .. } = self;
        let result = inflate.feed(chunk, &mut |text| scanner.feed(text, &mut |item| builder.item(item)));
        self.failed = result.is_err();
        result
    }

    /// Ends the input: the events that waited for their thread's name, the GPUs, the result.
    pub fn finish(mut self) -> Result<S::Output, TraceError> {
        if self.failed {
            return Err(TraceError::Poisoned);
        }
        let Self { inflate, scanner, builder, .. } = &mut self;
        inflate.finish(&mut |text| scanner.feed(text, &mut |item| builder.item(item)))?;
        self.scanner.finish()?;
        if !self.scanner.has_events_array() {
            return Err(TraceError::NoEvents);
        }
        let mut b = self.builder;
        b.header.json_bytes = self.scanner.bytes_seen();
        for p in std::mem::take(&mut b.pending) {
            let (Some(&device), Some(&kind)) = (b.gpus.get(&p.pid), b.threads.get(&(p.pid, p.tid))) else {
                if b.host_cpu.contains(&p.pid) && p.hlo_op.is_some() {
                    b.host_ops.push(p);
                }
                continue;
            };
            let name = b.header.names.resolve(p.name).to_string();
            let hlo_op = p.hlo_op.map(|o| b.header.names.resolve(o).to_string());
            b.emit(kind, p.pid, device, p.tid, &name, hlo_op.as_deref(), p.ts, p.dur, p.correlation);
        }
        // No GPU came: a CPU run, whose kernels are the host CPU's HLO ops.
        let host_ops = std::mem::take(&mut b.host_ops);
        if b.gpus.is_empty() && !host_ops.is_empty() {
            b.header.devices.push(DeviceProperties::cpu(CPU_DEVICE_NUMBER));
            for p in host_ops {
                let name = b.header.names.resolve(p.name).to_string();
                let hlo_op = p.hlo_op.map(|o| b.header.names.resolve(o).to_string());
                let kind = LineKind::Kernels;
                b.emit(kind, p.pid, CPU_DEVICE_NUMBER, p.tid, &name, hlo_op.as_deref(), p.ts, p.dur, p.correlation);
            }
        }
        let mut gpus: Vec<(i64, i64)> = b.gpus.iter().map(|(&pid, &n)| (n, pid)).collect();
        gpus.sort_unstable();
        for (n, pid) in gpus {
            let vendor = if b.rocm.get(&pid).copied().unwrap_or(false) { "AMD GPU" } else { "GPU" };
            b.header.devices.push(DeviceProperties {
                id: Some(n),
                name: format!("{vendor} (model not recorded in the trace)"),
                warp_size: None,
                compute_major: None,
                compute_minor: None,
                num_sms: None,
            });
        }
        Ok(b.sink.finish(b.header))
    }
}

impl<S: EventSink> Builder<S> {
    fn item(&mut self, item: Item<'_>) -> Result<(), TraceError> {
        match item {
            Item::Event { bytes, offset } => {
                self.header.event_count += 1;
                let malformed = |e: serde_json::Error| TraceError::Event {
                    offset: offset + error_offset(bytes, &e),
                    message: strip(&e),
                };
                let event: RawEvent = serde_json::from_slice(bytes).map_err(malformed)?;
                let args: RawArgs = match event.args {
                    Some(raw) if raw.get().starts_with('{') => {
                        serde_json::from_str(raw.get()).map_err(|e| TraceError::Event {
                            offset: offset + (raw.get().as_ptr() as usize - bytes.as_ptr() as usize) as u64,
                            message: strip(&e),
                        })?
                    }
                    _ => RawArgs::default(),
                };
                self.event(&event, &args);
                if self.header.names.bytes() > TRACE_NAME_BYTES {
                    return Err(TraceError::TooManyNames { offset, limit: TRACE_NAME_BYTES });
                }
                Ok(())
            }
            // `displayTimeUnit`, TensorBoard's `metadata`: checked to be JSON, not used.
            Item::Field { key, value, offset } => {
                serde_json::from_slice::<serde::de::IgnoredAny>(value).map_err(|e| TraceError::Field {
                    key: String::from_utf8_lossy(key).into_owned(),
                    offset: offset + error_offset(value, &e),
                    message: strip(&e),
                })?;
                Ok(())
            }
        }
    }

    fn event(&mut self, e: &RawEvent<'_>, args: &RawArgs<'_>) {
        let (Some(pid), Some(name)) = (e.pid.int(), e.name.as_str()) else { return };
        match e.ph.as_str() {
            Some("M") if name == "process_name" => {
                if let Some(n) = args.name.as_str().and_then(gpu_number) {
                    self.gpus.insert(pid, n);
                } else {
                    self.not_gpus.insert(pid);
                    if args.name.as_str() == Some(HOST_CPU_PLANE) {
                        self.host_cpu.insert(pid);
                    }
                }
            }
            Some("M") if name == "thread_name" => {
                if let (Some(tid), Some(line)) = (e.tid.int(), args.name.as_str()) {
                    self.threads.insert((pid, tid), line_kind(line));
                }
            }
            Some("X") => {
                let tid = e.tid.int().unwrap_or(-1);
                let ts = e.ts.0.filter(|t| t.is_finite()).unwrap_or(0.0);
                let dur = e.dur.0.filter(|d| d.is_finite() && *d >= 0.0).unwrap_or(0.0);
                let correlation = args.correlation_id.id();
                match (self.gpus.get(&pid), self.threads.get(&(pid, tid))) {
                    (Some(&device), Some(&kind)) => {
                        self.emit(kind, pid, device, tid, name, args.hlo_op.as_str(), ts, dur, correlation)
                    }
                    // A host process's event, or a GPU event before its names: kept for the end
                    // only while the process may still turn out to be a GPU, or while it is the
                    // host CPU's HLO op and no GPU has come.
                    _ if self.not_gpus.contains(&pid) => {
                        if self.host_cpu.contains(&pid) && self.gpus.is_empty() && args.hlo_op.as_str().is_some() {
                            let op = self.pending_of(pid, tid, name, args.hlo_op.as_str(), ts, dur, correlation);
                            self.host_ops.push(op);
                        }
                    }
                    _ => {
                        let pending = self.pending_of(pid, tid, name, args.hlo_op.as_str(), ts, dur, correlation);
                        self.pending.push(pending);
                    }
                }
            }
            _ => {}
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn pending_of(
        &mut self,
        pid: i64,
        tid: i64,
        name: &str,
        hlo_op: Option<&str>,
        ts: f64,
        dur: f64,
        correlation: Option<u64>,
    ) -> Pending {
        let names = &mut self.header.names;
        Pending { pid, tid, name: names.intern(name), hlo_op: hlo_op.map(|o| names.intern(o)), ts, dur, correlation }
    }

    #[allow(clippy::too_many_arguments)]
    fn emit(
        &mut self,
        kind: LineKind,
        pid: i64,
        device: i64,
        stream: i64,
        name: &str,
        hlo_op: Option<&str>,
        ts: f64,
        dur: f64,
        correlation: Option<u64>,
    ) {
        if kind == LineKind::Kernels && name.ends_with(".kd") {
            self.rocm.insert(pid, true);
        }
        let event = StreamEvent { name, hlo_op, same_op: None, ts, dur, device, stream, correlation };
        event.emit(&kind, &mut self.header.names, &mut self.sink, &mut self.next_op_id);
    }
}

/// What the format says of itself, for the registry ([`crate::registry`]): trace-event JSON whose processes are XLA's planes.
pub const ABOUT: About = About {
    name: "xla-json",
    noun: "an XLA/JAX trace (trace-event JSON)",
    describe: "an XLA/JAX trace (trace-event JSON, as JAX's perfetto_trace.json.gz)",
    detect: |s| looks_like_xla_json(s.head, s.json_keys),
};

/// The format, for the registry.
pub struct XlaJson;

readable!(XlaJson, Reader, TraceError);

/// Reads a whole trace held in memory (plain or gzip).
pub fn read_xla_json(bytes: &[u8]) -> Result<Trace, TraceError> {
    let mut reader = XlaJsonReader::new();
    for chunk in bytes.chunks(1 << 20) {
        reader.feed(chunk)?;
    }
    reader.finish()
}

/// Whether a trace-event JSON's first bytes are XLA's: a `process_name` event names a process
/// `/device:…` or `/host:…` (the converter names every process after its plane, the devices
/// first), and none of the Kineto keys (`schemaVersion`, `deviceProperties`) is at the top.
pub fn looks_like_xla_json(head: &[u8], top_level_keys: &[String]) -> bool {
    let has = |k: &str| top_level_keys.iter().any(|x| x == k);
    if !has("traceEvents") || has("schemaVersion") || has("deviceProperties") {
        return false;
    }
    let finder = memchr::memmem::Finder::new(b"\"process_name\"");
    finder.find_iter(head).any(|at| {
        // The process's name is in the same event, `"args": {"name": "/device:GPU:0"}`, before
        // or after the member (a tool may sort the keys): looked for within 200 bytes.
        let window = &head[at.saturating_sub(200)..head.len().min(at + 200)];
        memchr::memmem::find(window, b"\"/device:").is_some() || memchr::memmem::find(window, b"\"/host:").is_some()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use trace::TransferKind;

    /// The top-level keys of a JSON object, as detection scans them from a file's head.
    fn top_level_keys(text: &[u8]) -> Vec<String> {
        serde_json::from_slice::<serde_json::Map<String, serde_json::Value>>(text).unwrap().keys().cloned().collect()
    }

    /// Two GPUs and the host, as XLA's converter writes them: metadata first, then events of a
    /// kernel stream, a copy stream, a derived `XLA Ops` thread and a host thread.
    const TRACE: &str = r#"{"displayTimeUnit": "ns", "metadata": {"highres-ticks": true}, "traceEvents": [
        {"ph": "M", "pid": 1, "name": "process_name", "args": {"name": "/device:GPU:0"}},
        {"ph": "M", "pid": 1, "tid": 7, "name": "thread_name", "args": {"name": "Stream #7(Kernel)"}},
        {"ph": "M", "pid": 1, "tid": 8, "name": "thread_name", "args": {"name": "Stream #8(MemcpyH2D)"}},
        {"ph": "M", "pid": 1, "tid": 9, "name": "thread_name", "args": {"name": "XLA Ops"}},
        {"ph": "M", "pid": 4, "name": "process_name", "args": {"name": "/device:GPU:3"}},
        {"ph": "M", "pid": 4, "tid": 2, "name": "thread_name", "args": {"name": "Stream #2(Kernel,MemcpyD2D)"}},
        {"ph": "M", "pid": 501, "name": "process_name", "args": {"name": "/host:CPU"}},
        {"ph": "M", "pid": 501, "tid": 7, "name": "thread_name", "args": {"name": "Stream #7(Kernel)"}},
        {"ph": "X", "pid": 1, "tid": 7, "ts": 3.5, "dur": 1.25, "name": "loop_fusion.kd", "args": {"correlation_id": "41", "hlo_module": "jit_f", "hlo_op": "fusion.3"}},
        {"ph": "X", "pid": 1, "tid": 7, "ts": 1.5, "dur": 0.25, "name": "loop_fusion.kd", "args": {"hlo_op": "convolution.1"}},
        {"ph": "X", "pid": 1, "tid": 8, "ts": 2.0, "dur": 4.0, "name": "MEMCPYHtoD"},
        {"ph": "X", "pid": 1, "tid": 9, "ts": 1.0, "dur": 9.0, "name": "fusion.3"},
        {"ph": "X", "pid": 4, "tid": 2, "ts": 7.0, "dur": 1.0, "name": "Cijk_Alik_Bljk"},
        {"ph": "X", "pid": 501, "tid": 7, "ts": 0.5, "dur": 20.0, "name": "PjitFunction(f)"},
        {}]}"#;

    fn kernels(t: &Trace) -> Vec<(&str, f64, f64, i64, i64)> {
        t.kernels.iter().map(|k| (t.name(k.name), k.ts, k.dur, k.device, k.stream)).collect()
    }

    #[test]
    fn stream_threads_become_kernels_and_copies_with_their_hlo_ops() {
        assert!(looks_like_xla_json(TRACE.as_bytes(), &top_level_keys(TRACE.as_bytes())));
        let t = read_xla_json(TRACE.as_bytes()).unwrap();
        assert_eq!(
            kernels(&t),
            vec![
                ("loop_fusion", 1.5, 0.25, 0, 7),
                ("loop_fusion", 3.5, 1.25, 0, 7),
                ("Cijk_Alik_Bljk", 7.0, 1.0, 3, 2)
            ]
        );
        assert_eq!(t.kernels[1].correlation, Some(41));
        let [copy] = t.transfers.as_slice() else { panic!("{:?}", t.transfers) };
        assert_eq!((t.name(copy.name), copy.ts, copy.dur, copy.kind), ("MEMCPYHtoD", 2.0, 4.0, TransferKind::Memcpy));
        let ops: Vec<(&str, f64)> = t.cpu_ops.iter().map(|o| (t.name(o.name), o.ts)).collect();
        assert_eq!(ops, vec![("convolution.1", 1.5), ("fusion.3", 3.5)]);
        for (k, op) in t.kernels.iter().zip(&t.cpu_ops) {
            assert_eq!(k.external_id, Some(op.external_id));
        }
        // The GPU with ROCm's `.kd` kernels is named AMD; neither has a model.
        let devices: Vec<(Option<i64>, &str)> = t.devices.iter().map(|d| (d.id, d.name.as_str())).collect();
        assert_eq!(
            devices,
            vec![
                (Some(0), "AMD GPU (model not recorded in the trace)"),
                (Some(3), "GPU (model not recorded in the trace)")
            ]
        );
        assert_eq!(t.event_count, 15);
    }

    #[test]
    fn events_before_their_names_and_any_slicing_give_the_same_trace() {
        let whole = read_xla_json(TRACE.as_bytes()).unwrap();
        // The metadata moved to the end, the keys of every event reversed: a tool's rewrite.
        let v: serde_json::Value = serde_json::from_str(TRACE).unwrap();
        let mut events = v["traceEvents"].as_array().unwrap().clone();
        events.rotate_left(8);
        let text = serde_json::json!({"traceEvents": events}).to_string();
        let moved = read_xla_json(text.as_bytes()).unwrap();
        assert_eq!(kernels(&moved), kernels(&whole));
        assert_eq!(moved.transfers.len(), 1);
        assert!(looks_like_xla_json(text.as_bytes(), &top_level_keys(text.as_bytes())));
        let mut reader = XlaJsonReader::new();
        for c in TRACE.as_bytes().chunks(3) {
            reader.feed(c).unwrap();
        }
        assert_eq!(reader.finish().unwrap().kernels, whole.kernels);
    }

    #[test]
    fn bad_input_is_named_with_where() {
        let e = read_xla_json(br#"{"traceEvents": [{"ph": "X", "pid": tru}]}"#).unwrap_err();
        assert_eq!(e, TraceError::Event { offset: 39, message: "expected ident".into() });
        let e = read_xla_json(br#"{"traceEvents": [{"ph": "X", "args": {"hlo_op": 1,}}]}"#).unwrap_err();
        assert_eq!(e, TraceError::Event { offset: 50, message: "key must be a string".into() });
        assert_eq!(read_xla_json(br#"{"displayTimeUnit": "ns"}"#).unwrap_err(), TraceError::NoEvents);
        let cut = &TRACE.as_bytes()[..TRACE.len() / 2];
        assert!(read_xla_json(cut).is_err());
        // Not XLA's: no process named after a plane, or a Kineto key at the top.
        let kineto = br#"{"schemaVersion": 1, "traceEvents": [{"ph": "M", "name": "process_name", "args": {"name": "/device:GPU:0"}}]}"#;
        assert!(!looks_like_xla_json(kineto, &top_level_keys(kineto)));
        let other = br#"{"traceEvents": [{"ph": "M", "name": "process_name", "args": {"name": "python3"}}]}"#;
        assert!(!looks_like_xla_json(other, &top_level_keys(other)));
    }
}
