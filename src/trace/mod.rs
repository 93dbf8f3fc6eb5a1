//! PyTorch-profiler (Kineto) trace analysis: reading, kernel classification, summaries and the
//! AMD-vs-NVIDIA comparison (`spec/trace-analysis.md`).

pub mod category;
pub mod classify;

pub use category::Category;
pub use classify::{classify, Classification};
