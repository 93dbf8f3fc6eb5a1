//! The command line: argument parsing, reading files, printing tables or JSON.
//!
//! Each subcommand lives in its own file and only calls the core. Errors are printed as one
//! line on stderr with exit code 2; a closed stdout (`fusionscope … | head`) ends quietly.

#![cfg(not(target_arch = "wasm32"))]

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod bench;
mod bench_fleet;
mod calib;
mod compile_log;
mod fleet;
mod graph;
mod io;
mod model;
mod optrace;
mod peak_memory;
mod pipeline;
mod ranks;
mod report;
mod simcsv;
mod trace;
mod trace_file;
mod trace_fusion;
mod transformer;

#[derive(Parser)]
#[command(
    name = "fusionscope",
    version,
    about = "Kernel-fusion analyzer: fusion groups, memory traffic, AMD-vs-NVIDIA traces"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Fusion groups and memory traffic of an op-graph JSON file
    Graph(graph::Args),
    /// Fusion groups and memory traffic of the built-in transformer block
    Transformer(transformer::Args),
    /// Benchmarks: fusion grouping throughput, trace reading and comparison speed and memory
    Bench(bench::Args),
    /// Summary of one GPU profiler trace: PyTorch profiler JSON, rocprofv3 JSON, rocpd or Nsight Systems SQLite, XLA xplane.pb or JAX JSON
    Trace(trace::TraceArgs),
    /// Kernels Inductor generated, from a torch.compile log (TORCH_TRACE): each one's exact
    /// post-grad nodes and bytes, and with --trace, its calls and time in a trace of the same run
    CompileLog(compile_log::Args),
    /// Compare two profiler traces of any format (AMD vs NVIDIA, or before/after)
    Compare(trace::CompareArgs),
    /// One self-contained HTML report of a trace or a pair, for a review: the overview, the views and the main tables
    Report(report::Args),
    /// The ranks of one distributed job: timelines, collectives matched across ranks, stragglers
    Ranks(ranks::Args),
    /// Case view and fusion analysis of an op trace (optrace text form)
    Optrace(optrace::Args),
    /// Op graph, traffic and time of a model workload on a chip
    Model(model::Args),
    /// Hardware calibration profile: measured fusion speedups
    Calib(calib::Args),
    /// NPU simulator (NeuSim) op table: fusion-index groups with times and bound
    Simcsv(simcsv::Args),
    /// Every trace's facts (traces, kernels, ops, fusion groups, missing fusions) as Parquet tables
    Export(fleet::ExportArgs),
    /// Query exported traces with DataFusion: canned reports or read-only SQL
    Fleet(fleet::FleetArgs),
}

pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() { ExitCode::from(2) } else { ExitCode::SUCCESS };
        }
    };
    let result = match cli.command {
        Command::Graph(args) => graph::run(args),
        Command::Transformer(args) => transformer::run(args),
        Command::Bench(args) => bench::run(args),
        Command::Trace(args) => trace::run_trace(args),
        Command::Compare(args) => trace::run_compare(args),
        Command::CompileLog(args) => compile_log::run(args),
        Command::Report(args) => report::run(args),
        Command::Ranks(args) => ranks::run(args),
        Command::Optrace(args) => optrace::run(args),
        Command::Model(args) => model::run(args),
        Command::Calib(args) => calib::run(args),
        Command::Simcsv(args) => simcsv::run(args),
        Command::Export(args) => fleet::run_export(args),
        Command::Fleet(args) => fleet::run_fleet(args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if is_broken_pipe(e.as_ref()) => ExitCode::SUCCESS,
        Err(e) => {
            // One line, whatever the error carried.
            let msg = e.to_string().replace('\n', " ");
            eprintln!("fusionscope: {msg}");
            ExitCode::from(2)
        }
    }
}

fn is_broken_pipe(e: &(dyn std::error::Error + 'static)) -> bool {
    e.downcast_ref::<std::io::Error>().is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
}

#[cfg(test)]
mod tests {
    /// clap checks a subcommand's definitions only when that subcommand is parsed; this checks
    /// them all (flattened structs included: no clashing ids, conflicts naming real args).
    #[test]
    fn clap_definitions_are_consistent() {
        use clap::CommandFactory;
        super::Cli::command().debug_assert();
    }
}
