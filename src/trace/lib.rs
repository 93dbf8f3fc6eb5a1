//! GPU profiler traces: one format-neutral trace model, a reader per profiler format, and the
//! analyses over the model (`docs/trace-analysis.md`).
//!
//! | folder or file | what it is |
//! |---|---|
//! | [`model`] | the format-neutral trace: kernels, copies, CPU ops with shapes, launches (sorted by correlation id, [`model::launches`]), annotations, devices; names interned; vendor and devices ([`model::platform`]); kernel → op links ([`model::links`]) |
//! | [`formats`] | the one reader interface every format implements: detection from the first bytes, incremental feeding into any sink |
//! | [`registry`] | the list of formats in detection order, the one dispatch to their readers, and the one error type with each format's own details |
//! | [`read`] | reading whatever the format: plain or gzip input, the [`EventSink`] events stream into, the summary-only fold, the wire form between page workers |
//! | [`kineto`] | the PyTorch profiler's (Kineto) JSON reader: the only code that knows Kineto's keys |
//! | `nsys` | Nsight Systems SQLite exports: kernels, copies, runtime calls, NVTX ranges, GPUs; opens every SQLite file (natively, and in the page's worker: feature `sqlite`) |
//! | `rocpd` | rocprofv3's rocpd SQLite database, through its `kernels`, `memory_copies` and `rocpd_info_agent` views (as `nsys`) |
//! | [`rocprof`] | rocprofv3's results JSON reader: kernel dispatches, kernel symbols, agents, memory copies |
//! | [`xla_json`] | XLA's trace-event JSON (JAX's `perfetto_trace.json.gz`, TensorBoard's `*.trace.json.gz`): the profile converted to JSON, read as the protobuf is |
//! | [`xplane`] | XLA/JAX profiles (`*.xplane.pb`, XSpace protobuf): GPU planes, stream lines, kernels and copies, HLO ops, and each program's optimized HLO (the kernels' exact fusion groups); the schemas and their licence beside it |
//! | [`summary`](mod@summary) | the single-trace summary: platform, categories, kernels, fused kernels |
//! | [`compare`](mod@compare) | two traces: the AMD-vs-NVIDIA kernel mapping, fusion differences, aligned layers, which two to pair |
//! | [`structure`] | serving traces: steps, phases, decoder layers; the sequence alignment they use |
//! | [`documents`] | the JSON documents of `trace --json` and `compare --json` (and the page's JSON export) |
//! | [`findings`] | the overview: a verdict naming the devices, and findings ranked by the time they explain |
//! | [`capture`] | graph-capture traces joined to their replays |
//! | [`ranks`] | the ranks of one distributed job: per-rank fold, collectives matched across ranks, clocks, stragglers (`docs/ranks.md`) |
//! | [`fusion`] | every kernel as a fusion group with its ops and bytes, the fusion a rule set would still add, the Inductor re-prediction (`docs/trace-fusion.md`) |
//! | [`provenance`] | Inductor's compile log (the `inductor` crate) joined to a trace of the same run: each generated kernel's calls and time |
//! | [`exec_trace`] | PyTorch Execution Traces (Chakra ET JSON): exact tensor data flow for the fusion groups |
//! | [`time`] | where the time goes: GPU timeline, why the GPU waits (idle time between kernels by cause), per-op table (priced by the `perf` crate's per-op models), the gap between two traces, the time report |
//! | [`view`] | the results as the page and its exports draw them: tables, charts, Markdown |
//! | [`synthetic`] | synthetic traces (eager and serving) for tests and benchmarks |
//!
//! A reader turns a file into a [`Trace`] (or streams it into another [`EventSink`]); every
//! analysis takes a [`Trace`] and never a file format. A new profiler format adds one folder
//! beside [`kineto`] (its reader and its `FORMAT`) and one line in [`registry::BUILTIN`].

pub mod capture;
pub mod compare;
pub mod documents;
pub mod exec_trace;
pub mod findings;
pub mod formats;
pub mod fusion;
pub mod kineto;
pub mod model;
#[cfg(any(not(target_arch = "wasm32"), feature = "sqlite"))]
pub mod nsys;
pub mod provenance;
pub mod ranks;
pub mod read;
pub mod registry;
#[cfg(any(not(target_arch = "wasm32"), feature = "sqlite"))]
pub mod rocpd;
pub mod rocprof;
pub mod structure;
pub mod summary;
pub mod synthetic;
pub mod time;
pub mod view;
pub mod xla_json;
pub mod xplane;

pub use classify::category::Category;
pub use classify::{classify, Classification};
pub use compare::{compare, Comparison, Input};
pub use kineto::{read_trace, Reader, TraceError, TraceReader};
pub use model::intern::{NameId, NameTable};
pub use model::platform::{Platform, Vendor};
pub use model::Trace;
pub use read::{EventSink, TraceHeader};
pub use summary::{summarize, TraceSummary};
