//! fusionscope — a kernel-fusion analyzer.
//!
//! The crate is the analysis core plus two thin front ends; `src/README.md` maps every folder.
//!
//! * [`fusion`]: op graph in (JSON or built in code), fusion groups and global-memory traffic
//!   (unfused vs fused) out, as `docs/fusion-rules.md` states; [`fusion::transformer`] builds
//!   the reference transformer block.
//! * [`trace`]: PyTorch-profiler (Kineto) traces from NVIDIA and AMD GPUs: reading, kernel
//!   classification, single-trace summaries and the AMD-vs-NVIDIA comparison.
//! * [`optrace`], [`calib`], [`hardware`], [`workload`], [`simcsv`]: the other inputs (op traces,
//!   calibration profiles, chip presets and the time model, model workload generators, NPU
//!   simulator op tables).
//! * [`import`]: what kind a user's file is, and the one dispatch that opens any kind.
//! * [`share`]: share links: the page's state, versioned and compressed, in a URL fragment.
//! * [`table`]: tables as text, Markdown and CSV, and the page's sortable tables.
//! * [`draw`]: bar charts as SVG, the layered layout of the fusion groups' DAG.
//! * [`limits`]: every budget an input is held to (sizes, depths, counts), in one place.
//! * [`units`]: how numbers are shown (bytes, times) so the CLI and the page agree.
//! * [`page`]: the page's state, actions and reducer, natively testable.
//!
//! Every module above is free of browser and terminal code and builds natively and for
//! `wasm32-unknown-unknown`. The command line (`src/main.rs`, `src/cli/`) and the web page
//! (the `web` module, wasm only) only call into them.

pub mod calib;
pub mod draw;
pub mod fusion;
pub mod hardware;
pub mod import;
pub mod limits;
pub mod optrace;
pub mod page;
pub mod share;
pub mod simcsv;
pub mod table;
pub mod trace;
pub mod units;
pub mod workload;

#[cfg(target_arch = "wasm32")]
pub mod web;
