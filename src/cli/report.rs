//! `fusionscope report A [B] -o review.html`: the one-file review report (`report` crate) of a
//! trace or of a pair, the file the page's "Export report" writes.

use std::path::PathBuf;

use super::io::{print, CliResult};
use super::pipeline::{analyse_pair, analyse_trace, file_name, OneInput, OneTrace, Pair, PairInput};
use super::trace_fusion::{ExecTraceArg, FusionArgs};

#[derive(clap::Args)]
pub struct Args {
    /// A trace of any profiler format the page reads
    pub file_a: PathBuf,
    /// A second trace: the report compares the two (AMD or NVIDIA, either order)
    pub file_b: Option<PathBuf>,
    /// Chip of the first trace (preset name or chip JSON file; default: detected)
    #[arg(long, value_name = "NAME|FILE")]
    pub chip_a: Option<String>,
    /// Chip of the second trace (preset name or chip JSON file; default: detected)
    #[arg(long, value_name = "NAME|FILE")]
    pub chip_b: Option<String>,
    #[command(flatten)]
    pub fusion: FusionArgs,
    /// The HTML file to write (default: standard output)
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

pub fn run(args: Args) -> CliResult {
    let html = match &args.file_b {
        None => {
            let no_exec_trace = ExecTraceArg { exec_trace: None };
            let OneTrace { summary, time, overview } = analyse_trace(OneInput {
                file: &args.file_a,
                chip: args.chip_a.as_deref(),
                capture: None,
                fusion: &args.fusion,
                exec_trace: &no_exec_trace,
                compile_log: None,
            })?;
            report::trace_report(&file_name(&args.file_a), &summary, Some(&time), &overview)
        }
        Some(file_b) => {
            let Pair { comparison, gap, times, overview } = analyse_pair(PairInput {
                files: [&args.file_a, file_b],
                chips: [args.chip_a.as_deref(), args.chip_b.as_deref()],
                captures: [None, None],
                fusion: &args.fusion,
            })?;
            let sides = report::PairSides::Reports([&times[0], &times[1]]);
            let names = (file_name(&args.file_a), file_name(file_b));
            report::pair_report((&names.0, &names.1), &comparison, Some(&gap), sides, &overview)
        }
    };
    match &args.output {
        Some(path) => {
            std::fs::write(path, html).map_err(|e| format!("cannot write the report to {}: {e}", path.display()).into())
        }
        None => print(&html),
    }
}
