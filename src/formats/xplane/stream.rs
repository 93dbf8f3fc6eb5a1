//! A GPU stream line's events as XLA's GPU tracer records them, shared by the protobuf reader
//! and the trace-event JSON reader ([`crate::xla_json`]), which names its threads by the same
//! lines.

use trace::intern::NameTable;
use trace::read::EventSink;
use trace::{CpuOp, Kernel, RecordedShapes, Transfer, TransferKind};

/// The host's plane (`/host:CPU`), whose threads run a CPU run's XLA ops (a profile with no
/// GPU plane): its events that name an HLO op are that run's kernels.
pub(crate) const HOST_CPU_PLANE: &str = "/host:CPU";

/// The device number a CPU run's kernels take: the profile has one CPU.
pub(crate) const CPU_DEVICE_NUMBER: i64 = 0;

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
                            pid: -1,
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
