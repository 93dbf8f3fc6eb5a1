//! PyTorch-profiler (Kineto) trace analysis: reading, kernel classification, summaries and the
//! AMD-vs-NVIDIA comparison (`docs/trace-analysis.md`).
//!
//! [`TraceReader`] reads a trace incrementally (plain or gzip JSON, chunk by chunk) into a
//! compact [`Trace`]; [`platform::platform`] says which vendor and devices; [`summarize`] gives
//! the single-trace summary and [`compare()`] the two-trace comparison, both serde-serialisable
//! as the JSON that `docs/trace-analysis.md` describes. [`summary_only`] folds the events as they
//! stream in instead, for traces whose kernel list would not fit: its memory grows with distinct
//! names, not events.

pub mod align;
pub mod capture;
pub mod category;
pub mod classify;
pub mod compare;
pub mod exec_trace;
pub mod fusion;
pub mod gap;
pub mod intern;
pub mod layers_view;
pub mod model;
pub mod op_table;
pub mod pairing;
pub mod perf;
pub mod platform;
pub mod raw;
pub mod reader;
pub mod scan;
pub mod structure;
pub mod summary;
pub mod summary_only;
pub mod synthetic;
pub mod synthetic_serving;
pub mod time_report;
pub mod time_view;
pub mod timeline;
pub mod view;
pub mod wire;

pub use category::Category;
pub use classify::{classify, Classification};
pub use compare::{compare, Comparison, Input};
pub use intern::{NameId, NameTable};
pub use model::Trace;
pub use platform::{Platform, Vendor};
pub use reader::{read_trace, EventSink, Reader, TraceError, TraceHeader, TraceReader};
pub use summary::{summarize, TraceSummary};
