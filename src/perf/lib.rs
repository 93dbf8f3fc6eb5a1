//! Per-op cost formulas: FLOPs and minimum memory traffic of one op call, from the
//! shapes, types and scalar arguments a trace records for it (`record_shapes=True`), so that
//! each op's measured kernel time can be placed on a roofline ("where the time goes").
//!
//! [`cost_from_trace`] takes an op name and the three raw JSON texts of its `cpu_op` event
//! (`args["Input Dims"]`, `args["Input type"]`, `args["Concrete Inputs"]`), reads them into a
//! typed [`OpArgs`] and returns an [`OpCost`]: FLOPs, bytes, the [`Family`] of work, and the
//! [`Unit`] and [`DType`] that say which chip peak the op is measured against; or a
//! [`NoCost`] whose message says why not, for the op's row. Formulas, what "bytes" means and
//! how these figures differ from TraceLens's: `docs/cost-formulas.md`.
//!
//! One file per family of ops (`gemm`, `attention`, `conv`, `elementwise`, `norm`, `softmax`,
//! `reduce`, `embedding`, `scatter`, `copy`, `arange`, `loss`, `quantize`, serving engines'
//! `rotary` embeddings and `kv_cache` writes, FBGEMM's `sparse_features` and table-batched
//! embeddings `tbe`, `triton`; `foreach` says why the multi-tensor ops have no cost);
//! `by_name` maps op names to them. Every count is
//! checked arithmetic: sizes come from a file, and an overflow is an error naming the input.

pub mod arange;
pub mod args;
pub mod attention;
pub mod by_name;
pub mod conv;
pub mod copy;
pub mod cost;
pub mod dtype;
pub mod elementwise;
pub mod embedding;
pub mod error;
pub mod foreach;
pub mod gemm;
pub mod index;
pub mod kv_cache;
pub mod loss;
pub mod norm;
pub mod quantize;
pub mod reduce;
pub mod rotary;
pub mod scatter;
pub mod shape;
pub mod softmax;
pub mod sparse_features;
pub mod tbe;
pub mod triton;

pub use args::{Input, List, OpArgs, RawArgs, Tensor};
pub use by_name::{cost_from_trace, costed_ops, has_formula, op_cost};
pub use cost::{Family, OpCost, Unit};
pub use dtype::DType;
pub use error::{ArgsError, NoCost};
pub use shape::Shape;
