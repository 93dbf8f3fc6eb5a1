//! The command line: argument parsing, reading files, printing tables or JSON.
//!
//! Each subcommand lives in its own file and only calls the core. Errors are printed as one
//! line on stderr with exit code 2; a closed stdout (`fusionscope … | head`) ends quietly.

use std::io::Write;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod bench;
mod calib;
mod graph;
mod model;
mod optrace;
mod simcsv;
mod trace;
mod transformer;

/// What a subcommand returns: nothing on success, or an error whose `Display` is one line.
pub type CliResult = Result<(), Box<dyn std::error::Error>>;

/// `--json`, shared by the subcommands that print tables: `#[command(flatten)]` it after the
/// subcommand's own input argument(s), which keep their per-subcommand help. (`simcsv` and
/// `model` have their own `--json`: its help says what their JSON holds.)
#[derive(clap::Args)]
pub struct Output {
    /// Print the machine-readable result instead of tables
    #[arg(long)]
    pub json: bool,
}

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
    /// Summary of one PyTorch-profiler (Kineto) trace
    Trace(trace::TraceArgs),
    /// Compare two Kineto traces (AMD vs NVIDIA, or before/after)
    Compare(trace::CompareArgs),
    /// Case view and fusion analysis of an op trace (optrace text form)
    Optrace(optrace::Args),
    /// Op graph, traffic and time of a model workload on a chip
    Model(model::Args),
    /// Hardware calibration profile: measured fusion speedups
    Calib(calib::Args),
    /// NPU simulator (NeuSim) op table: fusion-index groups with times and bound
    Simcsv(simcsv::Args),
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
        Command::Optrace(args) => optrace::run(args),
        Command::Model(args) => model::run(args),
        Command::Calib(args) => calib::run(args),
        Command::Simcsv(args) => simcsv::run(args),
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

/// Writes `text` to stdout; a closed pipe surfaces as an `io::Error` that `main` ends quietly on.
pub fn print(text: &str) -> CliResult {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()?;
    Ok(())
}

/// Reads a whole text file, naming it in the error when it can't be read or isn't UTF-8.
pub fn read_text(path: &std::path::Path) -> Result<String, Box<dyn std::error::Error>> {
    String::from_utf8(read_file(path)?).map_err(|e| format!("{}: not UTF-8 text ({e})", path.display()).into())
}

/// Reads a text file and parses it with `parse`, naming the file in any error.
pub fn read_parsed<T, E: std::fmt::Display>(
    path: &std::path::Path,
    parse: impl FnOnce(&str) -> Result<T, E>,
) -> Result<T, Box<dyn std::error::Error>> {
    parse(&read_text(path)?).map_err(|e| format!("{}: {e}", path.display()).into())
}

/// Prints `value` as pretty JSON followed by a newline.
pub fn print_json(value: &impl serde::Serialize) -> CliResult {
    print(&(serde_json::to_string_pretty(value)? + "\n"))
}

/// Reads a whole file, naming it in the error.
pub fn read_file(path: &std::path::Path) -> Result<Vec<u8>, Box<dyn std::error::Error>> {
    std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()).into())
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
