//! Where the time goes (`docs/trace-analysis.md`, "Where the time goes"): the GPU timeline
//! ([`timeline`]: busy, idle, computation, communication, exposed communication), the per-op
//! table with FLOPs, bytes and roofline ([`op_table`], from the per-op cost formulas of the `perf` crate), the
//! gap between two traces op by op ([`gap`]), the idle time between kernels by cause ([`waits`]),
//! what launching kernels costs the host ([`launch_cost`]), every stream's figures
//! ([`streams`]), and the critical path of each step ([`critical_path`]). The report that puts
//! them together with the fusion groups is [`crate::pipeline`].

pub mod critical_path;
pub mod disjoint_spans;
pub mod gap;
pub(crate) mod json_fields;
pub mod launch_cost;
pub mod op_table;
pub mod recorded_cost;
pub mod streamed_waits;
pub mod streams;
pub mod timeline;
pub mod waits;
