//! The format-neutral GPU trace: what every profiler format is read into and every analysis
//! reads (`docs/trace-analysis.md`). GPU activity (kernels, memory copies and sets, with their
//! device and stream), the CPU ops that launched them with the shapes they recorded, the launch
//! calls that link the two (correlation ids), annotations, the device list and the runtime
//! versions. It knows no file format: the readers are the `formats` crate, the analyses the
//! `analysis` crate; a reader maps its format's records onto these types and drops what the
//! analyses do not use.
//!
//! | module | what it is |
//! |---|---|
//! | this file | the trace's types: [`Trace`], [`Kernel`], [`Transfer`], [`CpuOp`], [`Annotation`], devices, versions, [`TraceFormat`] |
//! | [`intern`] | names interned once ([`NameTable`]): a model repeats the same few names and shapes thousands of times |
//! | [`launches`] | the launch calls, a list sorted by correlation id |
//! | [`platform`] | which vendor and devices a trace is from |
//! | [`links`] | how a GPU event finds its CPU op |
//! | [`compiled`] | the kernels' groups as a compiler recorded them (XLA's HLO, Inductor's provenance) |
//! | [`search`] | a place in a sorted list of events found from a guess: a lookup near the last one, or where the ids' spread puts it, takes a few steps, not a binary search's depth |
//! | [`read`] | what readers stream into: plain or gzip input ([`read::inflate`]), the [`EventSink`] a reader hands each event to, and the [`TraceHeader`] every sink receives at the end |

pub mod compiled;
pub mod intern;
pub mod launches;
pub mod links;
pub mod platform;
pub mod read;
pub mod search;

pub use platform::{Platform, Processor, Vendor};
pub use read::{EventSink, TraceHeader};

use serde::{Deserialize, Serialize};

pub use intern::{NameId, NameTable};
pub use launches::{Launch, Launches};
pub use links::{EventIds, EventOps, LinkIndex, OpLinks};

/// One kernel execution on a GPU.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Kernel {
    pub name: NameId,
    /// Start, µs (absolute, as in the trace).
    pub ts: f64,
    /// Duration, µs.
    pub dur: f64,
    /// The GPU, as the profiler numbers it (the CUDA ordinal on NVIDIA, the HSA agent index on
    /// ROCm; [`platform::device_names`] maps it to a name).
    pub device: i64,
    pub stream: i64,
    /// Joins the kernel to its launch call ([`Trace::launches`]); shared by all kernels of one
    /// graph replay.
    pub correlation: Option<u64>,
    /// The id it shares with the CPU op that launched it ([`CpuOp::external_id`]; absent for
    /// graph replays).
    pub external_id: Option<u64>,
    /// Run as a node of a replayed CUDA/HIP graph, where the profiler says so.
    pub graph_node: bool,
}

/// Memory copy or set on the GPU timeline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum TransferKind {
    Memcpy,
    Memset,
}

/// One memory copy or set on a GPU.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Transfer {
    pub kind: TransferKind,
    pub name: NameId,
    pub ts: f64,
    pub dur: f64,
    /// GPU process id, as a kernel's.
    pub device: i64,
    /// The stream it ran on, where the format says (Kineto, XLA's profiles, rocpd).
    #[serde(default)]
    pub stream: Option<i64>,
    pub bytes: Option<u64>,
    /// Joins the copy to its launch call, like a kernel's.
    pub correlation: Option<u64>,
    /// Joins the copy to the CPU op that issued it (a cuBLAS call's memset, `aten::copy_`).
    pub external_id: Option<u64>,
}

/// A CPU op (an ATen operator or a user's `record_function` range) with the id its GPU work
/// carries.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct CpuOp {
    pub name: NameId,
    pub ts: f64,
    pub dur: f64,
    pub tid: i64,
    /// The process that ran it, as the trace numbers processes (-1 where the format records
    /// none): an execution trace of the same process can be linked to it by op order.
    pub pid: i64,
    pub external_id: u64,
    /// A user's range rather than an operator: only used when no operator has the id.
    pub annotation: bool,
    /// The shapes `record_shapes=True` recorded, as written in the trace.
    pub shapes: RecordedShapes,
}

/// The shapes, types and scalar values of a CPU op's inputs, each as JSON array text with one
/// entry per input (`[[2048, 4096], [4096]]`, `["c10::BFloat16", "float"]`, `["", "1"]`): the
/// form the `perf` crate's `args` parses, whatever format a reader took them from.
/// Interned: a model repeats the same few shapes thousands of times. `None` when the profiler
/// did not record shapes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct RecordedShapes {
    pub dims: Option<NameId>,
    pub types: Option<NameId>,
    pub concrete: Option<NameId>,
    /// The inputs' strides (`[[4096, 1], [1, 0]]`), kept only where an input is expanded (a
    /// stride of 0: one element stands for many), all the cost formulas need of them: such an
    /// input is read at its distinct elements, not its shape's.
    /// (Always written: the workers hand traces over in postcard, which cannot skip a field.)
    #[serde(default)]
    pub strides: Option<NameId>,
}

impl RecordedShapes {
    pub fn is_recorded(&self) -> bool {
        self.dims.is_some()
    }
}

/// A user's range (`record_function`, an NVTX range), on the CPU or its copy on the GPU
/// timeline.
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

/// What c10d records on a collective's kernel (PyTorch ≥ 2.1 with `record_shapes`): which
/// collective, its message in elements, the element type and the process group. Each key is
/// absent when the trace does not have it; the ranks analysis (`crate::ranks`) matches kernels
/// across ranks by the group and derives the message size from these.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CollectiveArgs<'a> {
    pub collective: Option<&'a str>,
    pub in_nelems: Option<u64>,
    pub out_nelems: Option<u64>,
    pub group_size: Option<u64>,
    pub dtype: Option<&'a str>,
    pub group_name: Option<&'a str>,
    pub group_desc: Option<&'a str>,
    /// As written: a list in text, `"[0, 1]"`.
    pub group_ranks: Option<&'a str>,
}

/// One process group of a distributed job, as the profiler lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PgConfig {
    pub pg_name: String,
    #[serde(default)]
    pub pg_desc: Option<String>,
    #[serde(default)]
    pub pg_size: Option<u32>,
    /// Global ranks of the group's members.
    #[serde(default)]
    pub ranks: Vec<u32>,
}

/// A rank's distributed identity, as the profiler recorded it (PyTorch writes one when
/// `torch.distributed` was initialised): rank, world size, process groups.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DistributedInfo {
    #[serde(default)]
    pub backend: Option<String>,
    #[serde(default)]
    pub rank: Option<u32>,
    #[serde(default)]
    pub world_size: Option<u32>,
    #[serde(default)]
    pub pg_config: Vec<PgConfig>,
    #[serde(default)]
    pub nccl_version: Option<String>,
}

/// What a trace says of its rank's identity.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Distributed {
    Info(DistributedInfo),
    /// The trace has the record, but not of a shape the reader knows: ignored, and said.
    Unreadable,
}

/// The device name a trace's CPU takes where the trace records compiled C++ kernels run on it
/// ([`DeviceProperties::cpu`]; [`Processor`]).
pub const CPU_DEVICE: &str = "CPU";

/// One GPU's properties (the fields the analysis uses).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DeviceProperties {
    pub id: Option<i64>,
    pub name: String,
    pub warp_size: Option<u32>,
    pub compute_major: Option<u32>,
    pub compute_minor: Option<u32>,
    pub num_sms: Option<u32>,
}

impl DeviceProperties {
    /// The CPU of a process (`pid`) whose compiled C++ kernels a trace records as kernels.
    pub fn cpu(pid: i64) -> Self {
        DeviceProperties {
            id: Some(pid),
            name: CPU_DEVICE.to_string(),
            warp_size: None,
            compute_major: None,
            compute_minor: None,
            num_sms: None,
        }
    }
}

/// The profiler's and runtime's versions, as recorded (numbers or strings): the strongest
/// evidence of the vendor ([`platform::detect_vendor`]).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct VersionKeys {
    pub cupti_version: Option<String>,
    pub cuda_runtime_version: Option<String>,
    pub cuda_driver_version: Option<String>,
    pub roctracer_version: Option<String>,
    pub hip_runtime_version: Option<String>,
    pub hip_driver_version: Option<String>,
}

/// Which profiler's file a trace was read from: what it can record, so that what it lacks is
/// said once, naming the format, and the views that need it say why they are empty.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TraceFormat {
    /// The PyTorch profiler's (Kineto) JSON: ops with shapes when recorded with `record_shapes`.
    #[default]
    Kineto,
    /// rocprofv3's results JSON.
    RocprofJson,
    /// rocprofv3's rocpd SQLite database.
    Rocpd,
    /// An Nsight Systems SQLite export.
    Nsys,
    /// An XLA profile (`*.xplane.pb`).
    Xplane,
    /// XLA's trace-event JSON (JAX's `perfetto_trace.json.gz`).
    XlaJson,
}

impl TraceFormat {
    /// The format in words.
    pub fn describe(self) -> &'static str {
        match self {
            TraceFormat::Kineto => "a PyTorch-profiler trace",
            TraceFormat::RocprofJson => "a rocprofv3 results file",
            TraceFormat::Rocpd => "a rocpd database",
            TraceFormat::Nsys => "an Nsight Systems export",
            TraceFormat::Xplane => "an XLA profile",
            TraceFormat::XlaJson => "an XLA trace-event JSON (JAX's perfetto trace)",
        }
    }

    /// The PyTorch profiler's format (the default, left out of the JSON results).
    pub fn is_kineto(&self) -> bool {
        *self == TraceFormat::Kineto
    }

    /// Whether the format records framework or compiler ops the kernels belong to (the
    /// PyTorch profiler's CPU ops, XLA's HLO ops).
    pub fn records_ops(self) -> bool {
        matches!(self, TraceFormat::Kineto | TraceFormat::Xplane | TraceFormat::XlaJson)
    }

    /// What the format never records that the op table and the fusion groups need: the one
    /// sentence said for the trace (`None` for Kineto, which records shapes when asked to).
    pub fn lacks(self) -> Option<String> {
        let what = self.describe();
        match self {
            TraceFormat::Kineto => None,
            TraceFormat::RocprofJson | TraceFormat::Rocpd | TraceFormat::Nsys => Some(format!(
                "This trace is {what}, which records no framework ops and no shapes: kernels are attributed to \
                 no op, and ops have no FLOPs or bytes."
            )),
            // Its ops are HLO ops, priced from the HLO the profile records, not framework ops.
            TraceFormat::Xplane => Some(format!(
                "This trace is {what}: its ops are the HLO ops of the programs it ran, whose shapes, bytes and FLOPs \
                 (where an op's count is known) come from the HLO the profile records."
            )),
            TraceFormat::XlaJson => Some(format!(
                "This trace is {what}, which records the HLO op of each kernel but no shapes: ops have times but \
                 no FLOPs or bytes."
            )),
        }
    }
}

/// A trace as the analysis needs it. Kernels and transfers are sorted by start time.
/// (Serialisable for `analysis::wire`: one page worker hands a trace it read to the other.)
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Trace {
    pub names: NameTable,
    pub kernels: Vec<Kernel>,
    pub transfers: Vec<Transfer>,
    pub cpu_ops: Vec<CpuOp>,
    pub launches: Launches,
    pub annotations: Vec<Annotation>,
    pub devices: Vec<DeviceProperties>,
    pub versions: VersionKeys,
    /// Events (records) in the file, kept or not.
    pub event_count: u64,
    /// Size of the file's text (after decompression).
    pub json_bytes: u64,
    /// The profiler format it was read from.
    #[serde(default)]
    pub format: TraceFormat,
    /// The kernels' groups as the compiler recorded them (XLA's HLO), where the file has them.
    #[serde(default)]
    pub compiled: compiled::Compiled,
    /// The rank's distributed identity, where the trace records one (not sent between the
    /// page's workers: the page reads ranks with their own fold).
    #[serde(skip)]
    pub distributed: Option<Distributed>,
}

impl Trace {
    pub fn name(&self, id: NameId) -> &str {
        self.names.resolve(id)
    }

    /// Approximate heap bytes held, for the benchmark's memory figures.
    pub fn heap_bytes(&self) -> usize {
        use std::mem::size_of;
        self.names.heap_bytes()
            + self.kernels.capacity() * size_of::<Kernel>()
            + self.transfers.capacity() * size_of::<Transfer>()
            + self.cpu_ops.capacity() * size_of::<CpuOp>()
            + self.launches.capacity() * (size_of::<u64>() + size_of::<Launch>())
            + self.annotations.capacity() * size_of::<Annotation>()
    }
}
