//! fusionscope — a kernel-fusion analyzer.
//!
//! The crate is the analysis core plus two thin front ends:
//!
//! * [`fusion`]: op graph in (JSON or built in code), fusion groups and global-memory traffic
//!   (unfused vs fused) out, exactly as `docs/fusion-rules.md` states; [`fusion::transformer`]
//!   builds the reference transformer block.
//! * [`trace`]: PyTorch-profiler (Kineto) traces from NVIDIA and AMD GPUs: reading, kernel
//!   classification, single-trace summaries and the AMD-vs-NVIDIA comparison.
//! * [`optrace`], [`calib`], [`hardware`], [`workload`], [`simcsv`]: the other inputs (op traces,
//!   calibration profiles, chip presets and the time model, model workload generators, NPU
//!   simulator op tables).
//! * [`import`]: what kind a user's file is (from its first bytes) and reading it (gzip, UTF-8).
//! * [`share`]: share links: the page's state, versioned and compressed, in a URL fragment.
//! * [`group_graph`]: which fusion groups feed which, layered for drawing.
//! * [`chart`]: bar charts as standalone SVG, shown by the page and exported as is.
//! * [`table`]: plain tables as text, Markdown and CSV.
//! * [`units`]: how numbers are shown (bytes, times) so the CLI and the page agree.
//!
//! Every module above is free of browser and terminal code and builds natively and for
//! `wasm32-unknown-unknown`. The command line (`src/main.rs`, `src/cli/`) and the web page
//! (the `web` module, wasm only) only call into them.

pub mod calib;
pub mod draw;
pub mod fusion;
pub mod hardware;
pub mod import;
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
