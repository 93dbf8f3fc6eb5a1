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

use crate::interface::{readable, About};
use limits::{TRACE_NAME_BYTES, XPLANE_BYTES};
use proto::{Value, XPlane, XSpace};
use trace::model::compiled::Compiled;
use trace::model::intern::NameTable;
use trace::model::{CpuOp, DeviceProperties, Kernel, RecordedShapes, Trace, TraceFormat, Transfer, TransferKind};
use trace::read::inflate::{GatherError, Gathered};
use trace::read::{EventSink, TraceHeader};
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
/// trace-event JSON ([`crate::xla_json`]) names its threads by the same lines.
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
/// (this protobuf or the trace-event JSON converted from it, [`crate::xla_json`]).
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
mod tests;
