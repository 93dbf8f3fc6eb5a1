//! The analyses of a GPU trace (`docs/trace-analysis.md`); the `view` crate draws their results. Every analysis takes
//! a [`trace::Trace`] (or a sink's fold of one) and never a file format: the readers are the
//! `formats` crate, below this one.
//!
//! | folder or file | what it is |
//! |---|---|
//! | [`summary`](mod@summary) | the single-trace summary: platform, categories, kernels, fused kernels |
//! | [`summary_only`] | the summary-only fold: a sink whose memory grows with distinct names, not events |
//! | [`wire`] | a trace read by one page worker, as bytes for the other |
//! | [`compare`](mod@compare) | two traces: the AMD-vs-NVIDIA kernel mapping, fusion differences, aligned layers, which two to pair |
//! | [`structure`] | serving traces: steps, phases, decoder layers; the sequence alignment they use |
//! | [`documents`] | the JSON documents of `trace --json` and `compare --json` (and the page's JSON export) |
//! | [`findings`] | the overview of a trace, a pair, a job's ranks or an op graph: a verdict, and findings ranked by the time they explain |
//! | [`capture`] | graph-capture traces joined to their replays |
//! | [`ranks`] | the ranks of one distributed job: per-rank fold, collectives matched across ranks, clocks, stragglers (`docs/ranks.md`) |
//! | [`trace_fusion`] | every kernel as a fusion group with its ops and bytes, the fusion a rule set would still add, the Inductor re-prediction (`docs/trace-fusion.md`) |
//! | [`provenance`] | Inductor's compile log (the `inductor` crate) joined to a trace of the same run: each generated kernel's calls and time |
//! | [`exec_trace`] | PyTorch Execution Traces (Chakra ET JSON): exact tensor data flow for the fusion groups |
//! | [`time`] | where the time goes: GPU timeline, why the GPU waits (idle time between kernels by cause), per-op table (priced by the `perf` crate's per-op cost formulas), the gap between two traces, every stream's figures, the critical path |
//! | [`pipeline`] | one trace through every analysis, the same for the command line and the page: the report `trace --json` prints (`TraceTime`), the choices it is made with |
//! | [`synthetic`] | synthetic traces (eager and serving) for tests and benchmarks |

pub mod capture;
pub mod compare;
pub mod documents;
pub mod exec_trace;
pub mod findings;
pub mod pipeline;
pub mod provenance;
pub mod ranks;
pub mod structure;
pub mod summary;
pub mod summary_only;
pub mod synthetic;
pub mod time;
pub mod trace_fusion;
pub mod wire;

pub use classify::category::Category;
pub use classify::{classify, Classification};
pub use compare::{compare, Comparison, Input};
pub use summary::{summarize, TraceSummary};
