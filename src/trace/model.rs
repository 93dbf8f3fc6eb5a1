//! What the reader keeps of a trace: the GPU activity, the CPU ops and launch calls that link
//! kernels to ops, the device list and the version keys. Everything else (Python frames, flows,
//! memory events, metadata) is dropped while reading.

use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

use super::intern::{NameId, NameTable};

/// One kernel execution (`cat: "kernel"`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Kernel {
    pub name: NameId,
    /// Start, µs (absolute, as in the trace).
    pub ts: f64,
    /// Duration, µs.
    pub dur: f64,
    /// GPU process id: the CUDA ordinal on NVIDIA, the HSA agent index on ROCm.
    pub device: i64,
    pub stream: i64,
    /// Joins the kernel to its launch call; shared by all kernels of one graph replay.
    pub correlation: Option<u64>,
    /// Joins the kernel to the CPU op that launched it (absent for graph replays).
    pub external_id: Option<u64>,
    /// ROCm marks graph nodes `kind: "Dispatch Task"`.
    pub graph_node: bool,
}

/// Memory copy or set on the GPU timeline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum TransferKind {
    Memcpy,
    Memset,
}

/// One `gpu_memcpy` / `gpu_memset` event.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Transfer {
    pub kind: TransferKind,
    pub name: NameId,
    pub ts: f64,
    pub dur: f64,
    /// GPU process id, as a kernel's.
    pub device: i64,
    pub bytes: Option<u64>,
    /// Joins the copy to its launch call, like a kernel's.
    pub correlation: Option<u64>,
    /// Joins the copy to the CPU op that issued it (a cuBLAS call's memset, `aten::copy_`).
    pub external_id: Option<u64>,
}

/// A CPU op (`cpu_op`) or `user_annotation` range carrying an `External id`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct CpuOp {
    pub name: NameId,
    pub ts: f64,
    pub dur: f64,
    pub tid: i64,
    pub external_id: u64,
    /// `user_annotation` rather than `cpu_op`: only used when no op has the id.
    pub annotation: bool,
    /// The shapes `record_shapes=True` recorded, as written in the trace.
    pub shapes: RecordedShapes,
}

/// A `cpu_op`'s `Input Dims`, `Input type` and `Concrete Inputs`, each the JSON array text the
/// trace wrote (interned: a model repeats the same few shapes thousands of times). `None` when
/// the trace was recorded without `record_shapes` or the value is not an array.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct RecordedShapes {
    pub dims: Option<NameId>,
    pub types: Option<NameId>,
    pub concrete: Option<NameId>,
}

impl RecordedShapes {
    pub fn is_recorded(&self) -> bool {
        self.dims.is_some()
    }
}

/// A runtime or driver call (`cuda_runtime`/`cuda_driver`, also `hip*` on ROCm) with a
/// correlation id: what a kernel without `External id` is traced back through.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Launch {
    pub name: NameId,
    /// The kernel launched, where the call names it (ROCm's launch calls do; CUDA's do not).
    pub kernel: Option<NameId>,
    pub external_id: Option<u64>,
    /// Start, µs, and CPU thread: older traces (no shared External id) link the call to its op
    /// by the op's interval on the same thread.
    pub ts: f64,
    pub tid: i64,
}

/// A `record_function` range (`user_annotation`, or its GPU copy `gpu_user_annotation`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Annotation {
    pub name: NameId,
    pub ts: f64,
    pub dur: f64,
    pub gpu: bool,
    /// `pid`: the device of a GPU range (as a kernel's `device`), the process of a CPU one; -1
    /// when absent. GPU ranges of one device must not cut another device's kernels into steps.
    pub pid: i64,
}

/// One `deviceProperties[]` entry (the fields the analysis uses).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DeviceProperties {
    pub id: Option<i64>,
    pub name: String,
    pub warp_size: Option<u32>,
    pub compute_major: Option<u32>,
    pub compute_minor: Option<u32>,
    pub num_sms: Option<u32>,
}

/// The top-level keys that identify the platform, as written (numbers or strings).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct VersionKeys {
    pub cupti_version: Option<String>,
    pub cuda_runtime_version: Option<String>,
    pub cuda_driver_version: Option<String>,
    pub roctracer_version: Option<String>,
    pub hip_runtime_version: Option<String>,
    pub hip_driver_version: Option<String>,
}

/// A trace as the analysis needs it. Kernels and transfers are sorted by start time.
/// (Serialisable for [`super::wire`]: one page worker hands a trace it read to the other.)
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Trace {
    pub names: NameTable,
    pub kernels: Vec<Kernel>,
    pub transfers: Vec<Transfer>,
    pub cpu_ops: Vec<CpuOp>,
    pub launches: FxHashMap<u64, Launch>,
    pub annotations: Vec<Annotation>,
    pub devices: Vec<DeviceProperties>,
    pub versions: VersionKeys,
    /// Events in `traceEvents`, kept or not.
    pub event_count: u64,
    /// Size of the JSON text (after decompression).
    pub json_bytes: u64,
}

impl Trace {
    pub fn name(&self, id: NameId) -> &str {
        self.names.resolve(id)
    }

    /// The CPU op that launched each kernel (index into `cpu_ops`): by the kernel's
    /// `External id`, else its launch call's, else (older traces, whose kernels' External id is
    /// only the correlation) the innermost op on the launch call's thread whose interval holds
    /// the call. `None` for graph replays and for kernels whose launch fell outside the profiled
    /// CPU window.
    pub fn kernel_ops(&self) -> Vec<Option<usize>> {
        OpLinks::new(self).ops_of(self.kernels.iter().map(|k| (k.external_id, k.correlation))).collect()
    }

    /// Approximate heap bytes held, for the benchmark's memory figures.
    pub fn heap_bytes(&self) -> usize {
        use std::mem::size_of;
        self.names.heap_bytes()
            + self.kernels.capacity() * size_of::<Kernel>()
            + self.transfers.capacity() * size_of::<Transfer>()
            + self.cpu_ops.capacity() * size_of::<CpuOp>()
            + self.launches.capacity() * (size_of::<u64>() + size_of::<Launch>() + 1)
            + self.annotations.capacity() * size_of::<Annotation>()
    }
}

/// A GPU event's `External id` and correlation id.
pub type EventIds = (Option<u64>, Option<u64>);

/// The indexes that link a GPU event to the CPU op that launched it.
pub struct OpLinks<'t> {
    trace: &'t Trace,
    by_ext: FxHashMap<u64, usize>,
    /// Ops of each thread in start order, for the containment fallback.
    by_tid: FxHashMap<i64, Vec<usize>>,
}

impl<'t> OpLinks<'t> {
    pub fn new(trace: &'t Trace) -> Self {
        let mut by_ext: FxHashMap<u64, usize> = FxHashMap::default();
        for (i, op) in trace.cpu_ops.iter().enumerate() {
            match by_ext.get(&op.external_id) {
                // A real op wins over an annotation; of two ops, the later-starting (inner) one.
                Some(&j) if !trace.cpu_ops[j].annotation && (op.annotation || op.ts < trace.cpu_ops[j].ts) => {}
                _ => {
                    by_ext.insert(op.external_id, i);
                }
            }
        }
        let mut by_tid: FxHashMap<i64, Vec<usize>> = FxHashMap::default();
        for (i, op) in trace.cpu_ops.iter().enumerate() {
            if !op.annotation {
                by_tid.entry(op.tid).or_default().push(i);
            }
        }
        OpLinks { trace, by_ext, by_tid }
    }

    /// The CPU ops (not annotations) of thread `tid`, by start time.
    pub fn thread_ops(&self, tid: i64) -> &[usize] {
        self.by_tid.get(&tid).map_or(&[], Vec::as_slice)
    }

    fn containing(&self, launch: &Launch) -> Option<usize> {
        let ops = self.by_tid.get(&launch.tid)?;
        let after = ops.partition_point(|&i| self.trace.cpu_ops[i].ts <= launch.ts);
        // Nested ops start in outer-to-inner order: the innermost holder is the latest
        // start that still holds the call. Siblings in between are skipped (bounded walk).
        ops[..after].iter().rev().take(256).copied().find(|&i| {
            let op = &self.trace.cpu_ops[i];
            launch.ts <= op.ts + op.dur
        })
    }

    /// [`Self::op_of`] of each (`External id`, correlation) in turn. A run of equal pairs is
    /// looked up once: a graph replay's kernels share one correlation and no `External id`, and
    /// each lookup of theirs would walk the launching thread's ops.
    pub fn ops_of<'a>(
        &'a self,
        events: impl Iterator<Item = EventIds> + 'a,
    ) -> impl Iterator<Item = Option<usize>> + 'a {
        let mut last: Option<(EventIds, Option<usize>)> = None;
        events.map(move |ids| match last {
            Some((prev, op)) if prev == ids => op,
            _ => {
                let op = self.op_of(ids.0, ids.1);
                last = Some((ids, op));
                op
            }
        })
    }

    /// The op of a GPU event with this `External id` and correlation id.
    pub fn op_of(&self, external_id: Option<u64>, correlation: Option<u64>) -> Option<usize> {
        let launch = correlation.and_then(|c| self.trace.launches.get(&c));
        let by_id = |e: Option<u64>| e.and_then(|e| self.by_ext.get(&e).copied());
        by_id(external_id)
            .or_else(|| by_id(launch.and_then(|l| l.external_id)))
            .or_else(|| launch.and_then(|l| self.containing(l)))
    }
}
