//! The trace formats: one reader interface ([`interface`]) that every profiler format
//! implements, a folder per format, and the [`registry`] that lists them in detection order and
//! is the one dispatch the command line and the page's worker read files through. Every reader
//! turns a file into a [`trace::Trace`] or streams it into another [`trace::EventSink`]; no
//! analysis knows a format (`docs/trace-analysis.md`).
//!
//! | module | what it is |
//! |---|---|
//! | [`interface`] | the one reader interface: detection from the first bytes, incremental feeding into any sink |
//! | [`registry`] | the formats in detection order, the one dispatch to their readers, and the one error type with each format's own details |
//! | [`kineto`] | the PyTorch profiler's (Kineto) JSON reader: the only code that knows Kineto's keys |
//! | `nsys` | Nsight Systems SQLite exports: kernels, copies, runtime calls, NVTX ranges, GPUs; opens every SQLite file (natively, and in the page's worker: feature `sqlite`) |
//! | `rocpd` | rocprofv3's rocpd SQLite database, through its `kernels`, `memory_copies` and `rocpd_info_agent` views (as `nsys`) |
//! | `sqlite` | what both SQLite formats share: a database opened read-only from its bytes, rows by column name within the budgets, the error type |
//! | [`rocprof`] | rocprofv3's results JSON reader: kernel dispatches, kernel symbols, agents, memory copies |
//! | [`xla_json`] | XLA's trace-event JSON (JAX's `perfetto_trace.json.gz`, TensorBoard's `*.trace.json.gz`): the profile converted to JSON, read as the protobuf is |
//! | [`xplane`] | XLA/JAX profiles (`*.xplane.pb`, XSpace protobuf): GPU planes, stream lines, kernels and copies, HLO ops, and each program's optimized HLO (the kernels' exact fusion groups); the schemas and their licence beside it |
//!
//! A new profiler format adds one folder beside [`kineto`] (its reader and its `ABOUT`) and one
//! line in [`registry::BUILTIN`].

pub mod interface;
pub mod kineto;
#[cfg(any(not(target_arch = "wasm32"), feature = "sqlite"))]
pub mod nsys;
pub mod registry;
#[cfg(any(not(target_arch = "wasm32"), feature = "sqlite"))]
pub mod rocpd;
pub mod rocprof;
#[cfg(any(not(target_arch = "wasm32"), feature = "sqlite"))]
pub mod sqlite;
pub mod xla_json;
pub mod xplane;

pub use interface::{About, Incremental, Readable, Sniff};
pub use kineto::{read_trace, Reader, TraceError, TraceReader};
pub use registry::{Format, FormatError, FormatReader, Registry, BUILTIN};
