//! The integration tests, as one binary: each file of `tests/` is a module of it (`common/`
//! holds their shared helpers), so the workspace is linked once for all of them rather than
//! once per file. `tests/web_browser.rs` is apart: it runs in a browser (wasm32 only).
#![cfg(not(target_arch = "wasm32"))]

mod common;

mod architecture_map;
mod calib_cli;
mod calib_files;
mod compile_log_cli;
mod fleet_cli;
mod format_registry;
mod fusion_cli;
mod fusion_props;
mod fusion_snapshots;
mod hardware_chips;
mod hostile_inputs;
mod hostile_text;
mod hostile_traces;
mod import_open;
mod module_cycles;
mod optrace_cli;
mod optrace_files;
mod page_state;
mod page_state_model;
mod perf_formulas;
mod perf_props;
mod ranks_page_data;
mod simcsv_compare;
mod simcsv_fuzz;
mod simcsv_setup;
mod trace_capture;
mod trace_classify;
mod trace_cli;
mod trace_compare;
mod trace_compiled_gpu;
mod trace_critical_path;
mod trace_exec_trace;
mod trace_formats;
mod trace_formats_xla;
mod trace_fusion;
mod trace_launch_cost;
mod trace_ranks;
mod trace_ranks_real;
mod trace_reader;
mod trace_repredict;
mod trace_serving_bytes;
mod trace_structure;
mod trace_summary_only;
mod trace_time;
mod trace_waits;
mod trace_xla_reference;
mod workload_cli;
mod workload_fuzz;
mod workload_models;
