//! XLA's profiles (`*.xplane.pb`, what JAX's and TensorFlow's profilers write): an `XSpace`
//! protobuf of planes. Each `/device:GPU:N` plane is a GPU; its stream lines
//! (`Stream #17(Kernel)`, `Stream #3(MemcpyH2D)`) hold the kernels and copies; an event's name
//! is its `event_metadata` entry's, and its stats name the HLO op and module it ran for. Read
//! into the format-neutral [`Trace`]; the only code that knows XSpace's layout
//! (`docs/trace-analysis.md`, "Other profilers' formats").
//!
//! Mapping: a kernel's start is its line's `timestamp_ns` plus its `offset_ps`; its device is
//! the plane's GPU number and its stream the line's id. The HLO op a kernel belongs to
//! (`hlo_op` stat, with `hlo_module`) becomes the op that launched it: a CPU op of that name
//! spanning the kernel, joined to it by a fresh id, so that the per-op table lists HLO ops. A
//! device is named by what its plane's stats say (vendor, compute capability, cores, memory):
//! XLA writes no marketing name.
//!
//! What the format lacks: shapes (HLO ops carry none the analyses read, so no FLOPs or bytes),
//! framework ops and launch calls (the host planes' Python and PJRT threads are not read).
//!
//! Protobuf is binary: the file is gathered (plain or gzip, within [`XPLANE_BYTES`]) and
//! decoded at the end by prost into the messages of [`proto`], whose schema is checked in
//! beside it (`xplane.proto`). Unknown fields are skipped; a length that runs past the input,
//! a wrong wire type or a nesting past prost's recursion limit is a decode error naming the
//! message and field where it was found.

pub mod hlo;
pub mod proto;

use std::collections::BTreeMap;

use prost::Message;
use rustc_hash::FxHashMap;
use thiserror::Error;

use super::formats::{readable, About};
use super::model::compiled::Compiled;
use super::model::intern::NameTable;
use super::model::{CpuOp, DeviceProperties, Kernel, RecordedShapes, Trace, TraceFormat, Transfer, TransferKind};
use super::read::inflate::{GatherError, Gathered};
use super::read::{EventSink, TraceHeader};
use limits::{TRACE_NAME_BYTES, XPLANE_BYTES};
use proto::{Value, XPlane, XSpace};
use units::{format_bytes, group_digits};

/// Why an XLA profile could not be read.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum XplaneError {
    /// prost's description says which message and field held the fault.
    #[error("the protobuf cannot be decoded as an XLA profile (XSpace): {message}")]
    Decode { message: String },
    #[error("not an XLA profile: the protobuf has no device or host planes (planes named {names})")]
    NoPlanes { names: String },
    #[error(
        "the profile is longer than the limit of {} ({} bytes) for an XLA profile",
        format_bytes(*limit as u64),
        group_digits(*limit as u64)
    )]
    TooLarge { limit: usize },
    #[error(
        "the kernel and op names pass the limit of {} in all (in plane \"{plane}\", line \"{line}\")",
        format_bytes(*limit as u64)
    )]
    TooManyNames { plane: String, line: String, limit: usize },
    #[error("corrupt gzip data after {compressed_offset} compressed bytes: {message}")]
    Gzip { compressed_offset: u64, message: String },
    #[error("the reader was used after an error")]
    Poisoned,
}

impl From<GatherError> for XplaneError {
    fn from(e: GatherError) -> Self {
        match e {
            GatherError::TooLarge { limit } => XplaneError::TooLarge { limit },
            GatherError::Gzip(e) => XplaneError::Gzip { compressed_offset: e.compressed_offset, message: e.message },
            GatherError::Poisoned => XplaneError::Poisoned,
        }
    }
}

/// Incremental reader into any [`EventSink`]: bytes in, the sink's result out at `finish`.
pub struct Reader<S> {
    /// The input, inflated and held to [`XPLANE_BYTES`] (smaller in tests).
    input: Gathered,
    sink: S,
}

/// The reader of a whole [`Trace`].
pub type XplaneReader = Reader<Trace>;

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
        Reader { input: Gathered::new(XPLANE_BYTES), sink }
    }

    /// Bytes of input fed so far (compressed ones for gzip).
    pub fn bytes_consumed(&self) -> u64 {
        self.input.consumed()
    }

    /// Reads the next slice; an error as soon as the profile passes its budget.
    pub fn feed(&mut self, chunk: &[u8]) -> Result<(), XplaneError> {
        Ok(self.input.feed(chunk)?)
    }

    /// Ends the input: decodes the profile and hands its GPU events to the sink.
    pub fn finish(self) -> Result<S::Output, XplaneError> {
        let Self { input, mut sink } = self;
        let bytes = input.finish()?;
        let space = XSpace::decode(bytes.as_slice()).map_err(|e| XplaneError::Decode { message: e.to_string() })?;
        if !space.planes.iter().any(|p| p.name.starts_with("/device:") || p.name.starts_with("/host:")) {
            let names: Vec<String> = space.planes.iter().take(4).map(|p| format!("{:?}", p.name)).collect();
            let names = if names.is_empty() { "none: it has no planes".to_string() } else { names.join(", ") };
            return Err(XplaneError::NoPlanes { names });
        }
        let mut header =
            TraceHeader { json_bytes: bytes.len() as u64, format: TraceFormat::Xplane, ..TraceHeader::default() };
        let mut next_op_id = 1u64;
        let mut programs = Programs::of(&space);
        for plane in &space.planes {
            if let Some(device) = gpu_number(&plane.name) {
                emit_plane(plane, device, &mut header, &mut sink, &mut next_op_id, &mut programs)?;
            }
        }
        Ok(sink.finish(header))
    }
}

/// `N` of a `/device:GPU:N` plane.
pub(crate) fn gpu_number(name: &str) -> Option<i64> {
    name.strip_prefix("/device:GPU:")?.parse().ok()
}

/// What a stream line holds, from the kind XLA's GPU tracer writes in its name. XLA's
/// trace-event JSON ([`super::xla_json`]) names its threads by the same lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LineKind {
    Kernels,
    Copies(TransferKind),
    /// A derived line (`XLA Ops`, `XLA Modules`, `Steps`, `Launch Stats`, …): its events span
    /// kernels already counted on the stream lines, so it is not read.
    Derived,
}

pub(crate) fn line_kind(name: &str) -> LineKind {
    let Some(rest) = name.strip_prefix("Stream #") else { return LineKind::Derived };
    let kinds = rest.split_once('(').map_or("", |(_, k)| k.trim_end_matches(')'));
    if kinds.contains("Memset") {
        LineKind::Copies(TransferKind::Memset)
    } else if kinds.contains("Memcpy") && !kinds.contains("Kernel") {
        LineKind::Copies(TransferKind::Memcpy)
    } else {
        LineKind::Kernels
    }
}

/// The programs' HLO modules the profile records (`/host:metadata`), and the groups made of
/// them so far, each made once.
struct Programs {
    /// Program id → module.
    modules: FxHashMap<i64, hlo::Module>,
    /// Module name → program id, for a kernel that names its module but not its program.
    by_name: FxHashMap<String, i64>,
    /// (program, HLO op) → the group's index in the header's compiled groups (`None`: the
    /// module has no such instruction).
    made: FxHashMap<(i64, String), Option<u32>>,
}

impl Programs {
    /// The modules of the metadata plane: each event metadata entry is a program (its id the
    /// program id) with its optimized HLO in a stat `Hlo Proto`. A module that cannot be
    /// decoded is left out: its kernels' groups are inferred, as without HLO.
    fn of(space: &XSpace) -> Programs {
        let mut modules = FxHashMap::default();
        for plane in space.planes.iter().filter(|p| p.name == "/host:metadata") {
            let Some(hlo_stat) = plane.stat_metadata.values().find(|m| m.name == "Hlo Proto").map(|m| m.id) else {
                continue;
            };
            for (&program, meta) in &plane.event_metadata {
                let bytes = meta.stats.iter().find_map(|s| match &s.value {
                    Some(Value::Bytes(b)) if s.metadata_id == hlo_stat => Some(b),
                    _ => None,
                });
                let decoded = bytes.and_then(|b| hlo::HloProto::decode(b.as_slice()).ok());
                if let Some(module) = decoded.and_then(|p| hlo::Module::new(p.hlo_module?).ok()) {
                    modules.insert(program, module);
                }
            }
        }
        let by_name = modules.iter().map(|(&id, m)| (m.name().to_string(), id)).collect();
        Programs { modules, by_name, made: FxHashMap::default() }
    }

    /// The compiled group of `op` in the program `program` (else the module named `module`),
    /// added to `compiled` the first time it is asked for.
    fn group(&mut self, program: Option<i64>, module: Option<&str>, op: &str, compiled: &mut Compiled) -> Option<u32> {
        let program =
            program.filter(|p| self.modules.contains_key(p)).or_else(|| self.by_name.get(module?).copied())?;
        let modules = &self.modules;
        *self
            .made
            .entry((program, op.to_string()))
            .or_insert_with(|| modules.get(&program)?.group(op).map(|g| compiled.add(g)))
    }
}

/// The execution of an HLO op a stream line is in: its program, op, CPU op id, and the
/// kernels it has run.
struct Run {
    program: Option<i64>,
    op: String,
    id: u64,
    kernels: Vec<String>,
}

/// One GPU plane's device, kernels and copies into the header and the sink.
fn emit_plane<S: EventSink>(
    plane: &XPlane,
    device: i64,
    header: &mut TraceHeader,
    sink: &mut S,
    next_op_id: &mut u64,
    programs: &mut Programs,
) -> Result<(), XplaneError> {
    let stat_name = |id: i64| plane.stat_metadata.get(&id).map_or("", |m| m.name.as_str());
    let stat_text = |v: &Value| -> Option<String> {
        match v {
            Value::Str(s) => Some(s.clone()),
            Value::Ref(r) => i64::try_from(*r).ok().map(|r| stat_name(r).to_string()),
            _ => None,
        }
    };
    let stat_int = |v: &Value| -> Option<i64> {
        match *v {
            Value::Int64(i) => Some(i),
            Value::Uint64(u) => i64::try_from(u).ok(),
            _ => None,
        }
    };
    // The plane's own stats: what the device is.
    let mut props: BTreeMap<&str, &Value> = BTreeMap::new();
    for s in &plane.stats {
        if let Some(v) = &s.value {
            props.insert(stat_name(s.metadata_id), v);
        }
    }
    let vendor = props.get("device_vendor").and_then(|v| stat_text(v));
    let major = props.get("compute_cap_major").and_then(|v| stat_int(v));
    let minor = props.get("compute_cap_minor").and_then(|v| stat_int(v));
    let cores = props.get("core_count").and_then(|v| stat_int(v));
    let memory = props.get("memory_size").and_then(|v| stat_int(v));
    header.devices.push(DeviceProperties {
        id: Some(device),
        name: device_name(vendor.as_deref(), major.zip(minor), cores, memory),
        // NVIDIA GPUs run warps of 32; AMD's gfx9 family (GCN, CDNA: MI50 to MI355X, compute
        // capability 9.x in XLA's terms) waves of 64. Other AMD GPUs (RDNA) run either.
        warp_size: match (vendor.as_deref(), major) {
            (Some("NVIDIA"), _) => Some(32),
            (Some("AMD"), Some(9)) => Some(64),
            _ => None,
        },
        compute_major: major.and_then(|m| u32::try_from(m).ok()),
        compute_minor: minor.and_then(|m| u32::try_from(m).ok()),
        num_sms: cores.and_then(|c| u32::try_from(c).ok()),
    });
    for line in &plane.lines {
        let kind = line_kind(&line.name);
        if matches!(kind, LineKind::Derived) {
            continue;
        }
        let start_ps = i128::from(line.timestamp_ns) * 1000;
        let mut run: Option<Run> = None;
        for event in &line.events {
            header.event_count = header.event_count.saturating_add(1);
            let Some(offset_ps) = event.offset_ps else { continue }; // an aggregate, not a run
            let ts = (start_ps + i128::from(offset_ps)) as f64 / 1e6;
            let dur = event.duration_ps.max(0) as f64 / 1e6;
            let meta = plane.event_metadata.get(&event.metadata_id);
            let raw_name = meta.map(|m| if m.display_name.is_empty() { &m.name } else { &m.display_name });
            let raw_name = raw_name.map_or("", |n| n.as_str());
            let mut hlo_op = None;
            let mut hlo_module = None;
            let mut program = None;
            let mut correlation = None;
            for s in &event.stats {
                let Some(v) = &s.value else { continue };
                match stat_name(s.metadata_id) {
                    "hlo_op" => hlo_op = stat_text(v),
                    "hlo_module" => hlo_module = stat_text(v),
                    "program_id" => program = stat_int(v),
                    "correlation_id" => correlation = stat_int(v).and_then(|c| u64::try_from(c).ok()),
                    _ => {}
                }
            }
            let fallback = format!("event #{}", event.metadata_id);
            let name = if raw_name.is_empty() { &fallback } else { raw_name };
            // A kernel of another name right after one of the same HLO op, in the same program,
            // is the next kernel of the same execution: it joins that op.
            let same_op = match (&run, hlo_op.as_deref()) {
                (Some(r), Some(op)) if r.program == program && r.op == op && !r.kernels.iter().any(|k| k == name) => {
                    Some(r.id)
                }
                _ => None,
            };
            let event =
                StreamEvent { name, hlo_op: hlo_op.as_deref(), same_op, ts, dur, device, stream: line.id, correlation };
            let op_id = event.emit(&kind, &mut header.names, sink, next_op_id);
            match (op_id, hlo_op) {
                (Some(_), Some(_)) if same_op.is_some() => {
                    if let Some(r) = run.as_mut() {
                        r.kernels.push(name.to_string());
                    }
                }
                (Some(id), Some(op)) => {
                    if let Some(group) = programs.group(program, hlo_module.as_deref(), &op, &mut header.compiled) {
                        header.compiled.link(id, group);
                    }
                    run = Some(Run { program, op, id, kernels: vec![name.to_string()] });
                }
                _ => run = None,
            }
            if header.names.bytes() > TRACE_NAME_BYTES {
                return Err(XplaneError::TooManyNames {
                    plane: plane.name.clone(),
                    line: line.name.clone(),
                    limit: TRACE_NAME_BYTES,
                });
            }
        }
    }
    Ok(())
}

/// One event of a GPU stream line, as XLA's GPU tracer records it, whichever file holds it
/// (this protobuf or the trace-event JSON converted from it, [`super::xla_json`]).
pub(crate) struct StreamEvent<'a> {
    /// The event's name: a kernel's symbol (ROCm's with its `.kd` descriptor suffix), a copy's kind.
    pub name: &'a str,
    /// The HLO op the kernel ran for (`hlo_op`).
    pub hlo_op: Option<&'a str>,
    /// The id of the op whose run this kernel continues: another kernel of the same execution
    /// of the same HLO op (cuDNN's convolution runs an im2col, then a GEMM).
    pub same_op: Option<u64>,
    /// Start and duration, µs.
    pub ts: f64,
    pub dur: f64,
    /// The GPU's number (`N` of `/device:GPU:N`) and the line's id.
    pub device: i64,
    pub stream: i64,
    pub correlation: Option<u64>,
}

impl StreamEvent<'_> {
    /// The event into the sink as what its line holds: a copy, or a kernel joined to a CPU op
    /// named after its HLO op (spanning it, with a fresh id from `next_op_id`, returned). Not
    /// called for derived lines.
    pub(crate) fn emit<S: EventSink>(
        &self,
        kind: &LineKind,
        names: &mut NameTable,
        sink: &mut S,
        next_op_id: &mut u64,
    ) -> Option<u64> {
        // ROCm names a kernel by its descriptor symbol (`loop_fusion.kd`); the kernel is the
        // name without it, as rocprofv3's formatted names and the PyTorch profiler have it.
        let name = names.intern(self.name.strip_suffix(".kd").unwrap_or(self.name));
        let Self { ts, dur, device, correlation, .. } = *self;
        match kind {
            LineKind::Derived => None,
            LineKind::Copies(kind) => {
                let transfer = Transfer {
                    kind: *kind,
                    name,
                    ts,
                    dur,
                    device,
                    stream: Some(self.stream),
                    bytes: None,
                    correlation,
                    external_id: None,
                };
                sink.transfer(names, transfer);
                None
            }
            LineKind::Kernels => {
                let external_id = match self.hlo_op.filter(|o| !o.is_empty()) {
                    Some(_) if S::CPU_SIDE && self.same_op.is_some() => self.same_op,
                    Some(op) if S::CPU_SIDE => {
                        let id = *next_op_id;
                        *next_op_id = next_op_id.saturating_add(1);
                        sink.cpu_op(CpuOp {
                            name: names.intern(op),
                            ts,
                            dur,
                            tid: self.stream,
                            external_id: id,
                            annotation: false,
                            shapes: RecordedShapes::default(),
                        });
                        Some(id)
                    }
                    _ => None,
                };
                let kernel =
                    Kernel { name, ts, dur, device, stream: self.stream, correlation, external_id, graph_node: false };
                sink.kernel(names, kernel);
                external_id
            }
        }
    }
}

/// `AMD GPU (compute capability 9.4, 304 cores, 192 GiB)`: what the plane says, no more.
fn device_name(vendor: Option<&str>, cap: Option<(i64, i64)>, cores: Option<i64>, memory: Option<i64>) -> String {
    let mut parts = Vec::new();
    if let Some((major, minor)) = cap {
        parts.push(format!("compute capability {major}.{minor}"));
    }
    if let Some(c) = cores {
        parts.push(format!("{c} cores"));
    }
    if let Some(m) = memory {
        // Rounded: a device reports a little less than its nominal memory (191.98 GiB of 192).
        parts.push(format!("{} GiB", m.saturating_add(1 << 29) / (1 << 30)));
    }
    let vendor = vendor.unwrap_or("unknown vendor");
    if parts.is_empty() {
        format!("{vendor} GPU")
    } else {
        format!("{vendor} GPU ({})", parts.join(", "))
    }
}

/// What the format says of itself, for the registry ([`crate::registry`]): an `XSpace` protobuf ([`looks_like_xspace`]).
pub const ABOUT: About = About {
    name: "xplane",
    noun: "an XLA/JAX profile",
    describe: "an XLA/JAX profile (xplane protobuf)",
    detect: |s| looks_like_xspace(s.head),
};

/// The format, for the registry.
pub struct Xplane;

readable!(Xplane, Reader, XplaneError);

/// Reads a whole profile held in memory (plain or gzip).
pub fn read_xplane(bytes: &[u8]) -> Result<Trace, XplaneError> {
    let mut reader = XplaneReader::new();
    for chunk in bytes.chunks(1 << 20) {
        reader.feed(chunk)?;
    }
    reader.finish()
}

/// Whether `head` (a file's first bytes) has the shape of an `XSpace`: its first field is a
/// plane (field 1, length-delimited) whose first fields are an id (field 1, varint) and/or a
/// name (field 2) that starts like a plane's name. Cheap, and enough to tell an XLA profile
/// from other binary data.
pub fn looks_like_xspace(head: &[u8]) -> bool {
    let Some(rest) = head.strip_prefix(&[0x0a]) else { return false };
    let Some((_, rest)) = varint(rest) else { return false };
    let rest = match rest.first() {
        Some(0x08) => match varint(&rest[1..]) {
            Some((_, r)) => r,
            None => return false,
        },
        _ => rest,
    };
    let Some(rest) = rest.strip_prefix(&[0x12]) else { return false };
    let Some((len, name)) = varint(rest) else { return false };
    let name = &name[..name.len().min(usize::try_from(len).unwrap_or(usize::MAX))];
    [&b"/host:"[..], b"/device:", b"Task Environment"].iter().any(|p| name.starts_with(p))
}

/// A protobuf varint and the bytes after it.
fn varint(bytes: &[u8]) -> Option<(u64, &[u8])> {
    let mut v = 0u64;
    for (i, &b) in bytes.iter().enumerate().take(10) {
        v |= u64::from(b & 0x7f) << (7 * i);
        if b & 0x80 == 0 {
            return Some((v, &bytes[i + 1..]));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use prost::Message;

    use super::proto::*;
    use super::*;

    fn stat(id: i64, value: Value) -> XStat {
        XStat { metadata_id: id, value: Some(value) }
    }

    fn event(meta: i64, offset_ps: i64, duration_ps: i64, stats: Vec<XStat>) -> XEvent {
        XEvent { metadata_id: meta, offset_ps: Some(offset_ps), num_occurrences: None, duration_ps, stats }
    }

    fn line(id: i64, name: &str, timestamp_ns: i64, events: Vec<XEvent>) -> XLine {
        XLine { id, name: name.into(), timestamp_ns, events, ..Default::default() }
    }

    /// A host plane, one GPU plane with a kernel stream, a copy stream, a derived `XLA Ops` line
    /// and an aggregated event, and a second GPU with one kernel.
    fn space() -> XSpace {
        let stat_meta: HashMap<i64, XStatMetadata> = [
            (1, "device_vendor"),
            (2, "compute_cap_major"),
            (3, "compute_cap_minor"),
            (4, "core_count"),
            (5, "memory_size"),
            (6, "hlo_op"),
            (7, "correlation_id"),
            (8, "fusion.3"),
        ]
        .into_iter()
        .map(|(id, name)| (id, XStatMetadata { id, name: name.into() }))
        .collect();
        let ev_meta: HashMap<i64, XEventMetadata> =
            [(10, "loop_fusion.kd", ""), (11, "MEMCPYHtoD", ""), (12, "fusion.3", "")]
                .into_iter()
                .map(|(id, name, display)| {
                    (id, XEventMetadata { id, name: name.into(), display_name: display.into(), stats: vec![] })
                })
                .collect();
        let gpu0 = XPlane {
            id: 1,
            name: "/device:GPU:0".into(),
            lines: vec![
                line(
                    7,
                    "Stream #7(Kernel)",
                    1_000,
                    vec![
                        // hlo_op by reference to a stat name, and as a string.
                        event(10, 2_500_000, 1_250_000, vec![stat(6, Value::Ref(8)), stat(7, Value::Uint64(41))]),
                        event(10, 500_000, 250_000, vec![stat(6, Value::Str("convolution.1".into()))]),
                        // An aggregate (no start): not a run.
                        XEvent {
                            metadata_id: 10,
                            offset_ps: None,
                            num_occurrences: Some(9),
                            duration_ps: 5,
                            stats: vec![],
                        },
                    ],
                ),
                line(8, "Stream #8(MemcpyH2D)", 2_000, vec![event(11, 0, 4_000_000, vec![])]),
                line(9, "XLA Ops", 1_000, vec![event(12, 0, 9_000_000, vec![])]),
            ],
            event_metadata: ev_meta.clone(),
            stat_metadata: stat_meta.clone(),
            stats: vec![
                stat(1, Value::Str("NVIDIA".into())),
                stat(2, Value::Int64(9)),
                stat(3, Value::Int64(0)),
                stat(4, Value::Int64(132)),
                stat(5, Value::Uint64(85_899_345_920 - 100)),
            ],
        };
        let gpu3 = XPlane {
            id: 2,
            name: "/device:GPU:3".into(),
            lines: vec![line(2, "Stream #2(Kernel,MemcpyD2D)", 0, vec![event(10, 7_000_000, 1_000_000, vec![])])],
            event_metadata: ev_meta,
            stat_metadata: stat_meta,
            stats: vec![],
        };
        let host = XPlane {
            name: "/host:CPU".into(),
            lines: vec![line(1, "python", 0, vec![event(1, 0, 5, vec![])])],
            ..Default::default()
        };
        XSpace { planes: vec![host, gpu0, gpu3], hostnames: vec!["h".into()] }
    }

    #[test]
    fn stream_lines_become_kernels_and_copies_with_their_hlo_ops() {
        let bytes = space().encode_to_vec();
        assert!(looks_like_xspace(&bytes));
        let t = read_xplane(&bytes).unwrap();
        let kernels: Vec<(&str, f64, f64, i64, i64)> =
            t.kernels.iter().map(|k| (t.name(k.name), k.ts, k.dur, k.device, k.stream)).collect();
        assert_eq!(
            kernels,
            vec![
                // 1,000 ns + 500,000 ps = 1.5 µs; the `.kd` descriptor suffix dropped.
                ("loop_fusion", 1.5, 0.25, 0, 7),
                ("loop_fusion", 3.5, 1.25, 0, 7),
                ("loop_fusion", 7.0, 1.0, 3, 2),
            ]
        );
        assert_eq!(t.kernels[1].correlation, Some(41));
        let [copy] = t.transfers.as_slice() else { panic!("{:?}", t.transfers) };
        assert_eq!((t.name(copy.name), copy.ts, copy.dur, copy.kind), ("MEMCPYHtoD", 2.0, 4.0, TransferKind::Memcpy));
        // Each kernel with an HLO op is joined to an op of that name spanning it.
        let ops: Vec<(&str, f64, u64)> = t.cpu_ops.iter().map(|o| (t.name(o.name), o.ts, o.external_id)).collect();
        assert_eq!(ops.iter().map(|o| (o.0, o.1)).collect::<Vec<_>>(), vec![("convolution.1", 1.5), ("fusion.3", 3.5)]);
        for (k, op) in t.kernels.iter().zip(&t.cpu_ops) {
            assert_eq!(k.external_id, Some(op.external_id));
            assert!(!op.shapes.is_recorded());
        }
        assert_eq!(t.kernels[2].external_id, None);
        // The two GPU planes, named from their stats; events counted on stream lines only.
        assert_eq!(t.devices[0].name, "NVIDIA GPU (compute capability 9.0, 132 cores, 80 GiB)");
        assert_eq!(t.devices[0].warp_size, Some(32));
        assert_eq!(t.devices[1].name, "unknown vendor GPU");
        assert_eq!(t.event_count, 5);
    }

    /// A module whose `fusion.3` is `negate(p)` on f32[8], as the metadata plane holds it.
    fn module(name: &str) -> Vec<u8> {
        use hlo::*;
        let f32s = |n| Some(ShapeProto { element_type: 11, dimensions: vec![n], tuple_shapes: vec![] });
        let inst = |id, name: &str, opcode: &str, operands: Vec<i64>| HloInstructionProto {
            id,
            name: name.into(),
            opcode: opcode.into(),
            shape: f32s(8),
            operand_ids: operands,
            ..Default::default()
        };
        let fused = HloComputationProto {
            id: 2,
            instructions: vec![inst(10, "q", "parameter", vec![]), inst(11, "negate.1", "negate", vec![10])],
            ..Default::default()
        };
        let mut fusion = inst(2, "fusion.3", "fusion", vec![1]);
        (fusion.fusion_kind, fusion.called_computation_ids) = ("kLoop".into(), vec![2]);
        let entry = HloComputationProto {
            id: 1,
            instructions: vec![inst(1, "p", "parameter", vec![]), fusion],
            ..Default::default()
        };
        let m = HloModuleProto { name: name.into(), computations: vec![fused, entry], ..Default::default() };
        HloProto { hlo_module: Some(m) }.encode_to_vec()
    }

    /// [`space`] with a metadata plane holding `hlo` as program 5, the kernels' stats naming
    /// that program (`by_program`) or only a module called `jit_f`.
    fn with_hlo(hlo: Vec<u8>, by_program: bool) -> XSpace {
        let mut s = space();
        let gpu0 = &mut s.planes[1];
        gpu0.stat_metadata.insert(20, XStatMetadata { id: 20, name: "program_id".into() });
        gpu0.stat_metadata.insert(21, XStatMetadata { id: 21, name: "hlo_module".into() });
        let module_stat = if by_program { stat(20, Value::Int64(5)) } else { stat(21, Value::Str("jit_f".into())) };
        for e in &mut gpu0.lines[0].events {
            e.stats.push(module_stat.clone());
        }
        let metadata = XPlane {
            name: "/host:metadata".into(),
            stat_metadata: [(3, XStatMetadata { id: 3, name: "Hlo Proto".into() })].into_iter().collect(),
            event_metadata: [(
                5,
                XEventMetadata {
                    id: 5,
                    name: "jit_f".into(),
                    stats: vec![stat(3, Value::Bytes(hlo))],
                    ..Default::default()
                },
            )]
            .into_iter()
            .collect(),
            ..Default::default()
        };
        s.planes.push(metadata);
        s
    }

    #[test]
    fn a_kernels_hlo_op_finds_its_group_in_the_programs_module() {
        for by_program in [true, false] {
            let t = read_xplane(&with_hlo(module("jit_f"), by_program).encode_to_vec()).unwrap();
            // The kernel run for `fusion.3` has its group; `convolution.1` is not in the module.
            let linked: Vec<(&str, Option<&str>)> = t
                .cpu_ops
                .iter()
                .map(|o| (t.name(o.name), t.compiled.of_op(o.external_id).map(|(_, g)| g.op.as_str())))
                .collect();
            assert_eq!(linked, [("convolution.1", None), ("fusion.3", Some("fusion.3"))], "by program: {by_program}");
            let (_, g) = t.compiled.of_op(t.cpu_ops[1].external_id).unwrap();
            assert_eq!(
                (g.kind.as_str(), g.ops.len(), g.fused_bytes, g.unfused_bytes),
                ("kLoop", 1, Some(64), Some(64))
            );
        }
    }

    #[test]
    fn the_kernels_of_one_execution_of_an_hlo_op_share_its_op() {
        // cuDNN's convolution runs an im2col and a GEMM for each execution; two executions.
        let mut s = space();
        let gpu0 = &mut s.planes[1];
        gpu0.event_metadata.insert(20, XEventMetadata { id: 20, name: "Im3d2Col".into(), ..Default::default() });
        gpu0.event_metadata.insert(21, XEventMetadata { id: 21, name: "Cijk_gemm".into(), ..Default::default() });
        let conv = || stat(6, Value::Str("cudnn-conv.1".into()));
        gpu0.lines[0].events = [(20, 0), (21, 1_000_000), (20, 5_000_000), (21, 6_000_000)]
            .into_iter()
            .map(|(meta, at)| event(meta, at, 500_000, vec![conv()]))
            .collect();
        let t = read_xplane(&s.encode_to_vec()).unwrap();
        let ids: Vec<Option<u64>> = t.kernels.iter().filter(|k| k.device == 0).map(|k| k.external_id).collect();
        assert_eq!(ids.len(), 4);
        assert_eq!((ids[0], ids[2]), (ids[1], ids[3]), "each execution is one op");
        assert_ne!(ids[0], ids[2], "two executions, two ops");
        assert_eq!(t.cpu_ops.iter().filter(|o| t.name(o.name) == "cudnn-conv.1").count(), 2);
    }

    #[test]
    fn a_module_that_cannot_be_decoded_leaves_the_kernels_without_groups() {
        let t = read_xplane(&with_hlo(vec![0x0a, 0xff, 0xff, 0x03], true).encode_to_vec()).unwrap();
        assert_eq!(t.kernels.len(), 3);
        assert!(t.compiled.is_empty());
    }

    #[test]
    fn gzip_and_any_slicing_give_the_same_trace() {
        use std::io::Write;
        let bytes = space().encode_to_vec();
        let whole = read_xplane(&bytes).unwrap();
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        enc.write_all(&bytes).unwrap();
        let gz = enc.finish().unwrap();
        for input in [&bytes, &gz] {
            let mut r = XplaneReader::new();
            for c in input.chunks(3) {
                r.feed(c).unwrap();
            }
            let t = r.finish().unwrap();
            assert_eq!((t.kernels, t.transfers), (whole.kernels.clone(), whole.transfers.clone()));
        }
    }

    #[test]
    fn unknown_fields_are_skipped() {
        // A field 15 (varint) and a field 14 (bytes) in the space and in each plane: a newer
        // profiler's additions.
        let mut bytes = vec![0x78, 0x05, 0x72, 0x02, 0xaa, 0xbb];
        bytes.extend(space().encode_to_vec());
        let t = read_xplane(&bytes).unwrap();
        assert_eq!(t.kernels.len(), 3);
    }

    #[test]
    fn bad_protobuf_is_refused_with_the_message_and_field() {
        let bytes = space().encode_to_vec();
        // Cut short: a length runs past the end.
        let e = read_xplane(&bytes[..bytes.len() - 7]).unwrap_err();
        assert!(matches!(&e, XplaneError::Decode { message } if message.contains("XSpace.planes")), "{e}");
        // A plane claiming 2^62 bytes: refused at once, nothing allocated for it.
        let mut absurd = vec![0x0a];
        absurd.extend([0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x40]);
        absurd.extend([0x12, 0x02, b'/', b'h']);
        let e = read_xplane(&absurd).unwrap_err();
        assert!(matches!(e, XplaneError::Decode { .. }), "{e}");
        // Valid protobuf of another shape: no planes named like a profile's.
        let other = XSpace { planes: vec![XPlane { name: "layer".into(), ..Default::default() }], hostnames: vec![] };
        let e = read_xplane(&other.encode_to_vec()).unwrap_err();
        assert_eq!(
            e.to_string(),
            "not an XLA profile: the protobuf has no device or host planes (planes named \"layer\")"
        );
        assert!(!looks_like_xspace(&other.encode_to_vec()));
        assert!(!looks_like_xspace(b"\n0:0:0 %1:<2xf16> = a.b.add(%0:<2xf16>)\n"));
        let mut r = XplaneReader::new();
        r.input = Gathered::new(10);
        assert_eq!(r.feed(&bytes).unwrap_err(), XplaneError::TooLarge { limit: 10 });
        assert_eq!(r.feed(&bytes).unwrap_err(), XplaneError::Poisoned);
    }
}
