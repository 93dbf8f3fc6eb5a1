//! fusionscope — a kernel-fusion analyzer.
//!
//! The analysis is a workspace of crates under `src/`, one idea each; `src/README.md` maps them
//! and says what each may depend on. This crate gathers them under one name for the integration
//! tests (`tests/`) and the two binaries: the command line natively, and in wasm32 the page and
//! its analysis worker. It holds no code of its own.

pub use analysis;
pub use calib;
pub use classify;
pub use draw;
pub use formats;
pub use fusion;
pub use hardware;
pub use import;
pub use inductor;
pub use limits;
pub use optrace;
pub use page;
pub use perf;
pub use report;
pub use share;
pub use simcsv;
pub use table;
pub use trace;
pub use units;
pub use view;
pub use workload;

#[cfg(target_arch = "wasm32")]
pub use web;
