//! Reading, whatever the format: an input's bytes (plain or gzip, [`inflate`]) stream through a
//! format's reader (the `formats` crate), which hands each event it keeps to an [`EventSink`].
//! The whole [`Trace`] is one sink; the analyses' summary-only fold another, whose memory grows
//! with distinct names, not events.

pub mod both;
pub mod inflate;

use crate::compiled::{Compiled, CompiledGroup};
use crate::intern::{NameId, NameTable};
use crate::{
    Annotation, CollectiveArgs, CpuOp, DeviceProperties, Distributed, Kernel, Launch, Trace, TraceFormat, Transfer,
    VersionKeys,
};

/// What a reader keeps of a trace whatever the sink: the names it interned, the device list,
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
    /// The rank's distributed identity, where the trace has one (read by `crate::ranks`).
    pub distributed: Option<Distributed>,
    /// The profiler format being read (each reader sets its own).
    pub format: TraceFormat,
    /// The kernels' groups as the compiler recorded them (XLA's HLO): they grow with the
    /// distinct compiled ops, and their links with the CPU ops.
    pub compiled: Compiled,
}

/// Where the reader hands each event it keeps, as it reads: [`Trace`] keeps them all (the
/// default reader, the `formats` crate's `TraceReader`); a fold keeps what it needs (the summary-only mode). Names
/// come interned in the reader's [`NameTable`], which is passed along to resolve them.
pub trait EventSink {
    /// What a reader's `finish` returns.
    type Output;
    /// Whether CPU-side events (ops, launch calls, annotations) are wanted. When not, the
    /// reader skips them before interning any of their names or shapes; the Kineto reader
    /// steps over them unparsed, by their category, as it does Python frames.
    const CPU_SIDE: bool = true;
    /// Whether launch calls are wanted (their start, by correlation id): with every CPU-side
    /// event, or alone by a fold that skips the rest (the idle split by cause of the
    /// summary-only mode and the ranks fold needs when each kernel was launched).
    const LAUNCHES: bool = Self::CPU_SIDE;
    fn kernel(&mut self, names: &NameTable, kernel: Kernel);
    /// A kernel of a collective whose args say which (an NCCL/RCCL kernel recorded with
    /// shapes): by default just a [`Self::kernel`]; the ranks fold keeps the args.
    fn collective_kernel(&mut self, names: &NameTable, kernel: Kernel, _args: &CollectiveArgs<'_>) {
        self.kernel(names, kernel)
    }
    fn transfer(&mut self, names: &NameTable, transfer: Transfer);
    fn cpu_op(&mut self, _op: CpuOp) {}
    fn annotation(&mut self, _annotation: Annotation) {}
    /// A launch call with its correlation id.
    fn launch(&mut self, _correlation: u64, _launch: Launch) {}
    /// The compiler's group of the first kernel of `name` that has one (XLA's HLO), told before
    /// that kernel: a sink that classifies kernels as they come (the summary-only fold, the
    /// streamed export) reads from it a name its rules leave `other`, as the whole trace's
    /// classification reads [`crate::compiled::Compiled::of_name`].
    fn compiled_name(&mut self, _names: &NameTable, _name: NameId, _group: &CompiledGroup) {}
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
        let TraceHeader { names, devices, versions, event_count, json_bytes, format, compiled, distributed } = header;
        (self.names, self.devices, self.versions, self.event_count, self.json_bytes, self.format, self.compiled) =
            (names, devices, versions, event_count, json_bytes, format, compiled);
        self.distributed = distributed;
        let by_ts = |a: &f64, b: &f64| a.total_cmp(b);
        self.kernels.sort_by(|a, b| by_ts(&a.ts, &b.ts));
        self.transfers.sort_by(|a, b| by_ts(&a.ts, &b.ts));
        self.cpu_ops.sort_by(|a, b| by_ts(&a.ts, &b.ts));
        self.annotations.sort_by(|a, b| by_ts(&a.ts, &b.ts));
        self.launches.settle();
        self
    }
}
