//! `fusionscope graph FILE.json [--json [--details]]`, and the report both it and
//! `transformer` print.

use std::io::Write;
use std::path::{Path, PathBuf};

use analysis::findings::graph::graph_overview;
use fusion::analysis::{write_json, BorrowedReport};
use fusion::{analyse, parse_graph, summary, Analysis, OpGraph};
use view::findings::overview_text;

use super::io::{read_parsed, CliResult};

#[derive(clap::Args)]
pub struct Args {
    /// Op-graph JSON file (object with "ops" and "tensors", or an array of ops)
    pub file: PathBuf,
    #[command(flatten)]
    pub output: ReportOutput,
}

/// `--json` and `--details`, shared by `graph` and `transformer`.
#[derive(clap::Args)]
pub struct ReportOutput {
    /// Print the machine-readable result instead of tables: groups, unfused and fused
    /// traffic, savings_pct, assumed_tensors (indented up to 10,000 ops, one line above)
    #[arg(long)]
    pub json: bool,
    /// With --json, also per group and per op: group_details, op_details (why each op is in
    /// its group) and processing_order
    #[arg(long, requires = "json")]
    pub details: bool,
}

pub fn run(args: Args) -> CliResult {
    let (graph, analysis) = analyse_file(&args.file)?;
    let written = print_report(analysis.view(&graph), &args.output, &title(&args.file));
    // A million-op graph is millions of small allocations; freeing them one by one takes
    // about as long as grouping them, and the process is about to end: leave them to the OS.
    std::mem::forget((graph, analysis));
    written
}

/// Reads and analyses a graph file, naming it in any error.
pub fn analyse_file(file: &Path) -> Result<(OpGraph, Analysis), Box<dyn std::error::Error>> {
    let graph = read_parsed(file, parse_graph)?;
    let analysis = analyse(&graph);
    Ok((graph, analysis))
}

/// The chip whose bandwidth the overview's times are at: the page's default.
const DEFAULT_CHIP: &str = "h100";

/// What the tables of `graph FILE` start with.
pub fn title(file: &Path) -> String {
    format!("{}: ", file.display())
}

/// Writes the report to stdout as it is made: JSON ([`BorrowedReport::json`]) or the tables, the
/// latter after `title`.
pub fn print_report(view: BorrowedReport<'_>, output: &ReportOutput, title: &str) -> CliResult {
    let mut out = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
    write_report(&mut out, view, output, title)?;
    out.flush()?;
    Ok(())
}

/// [`print_report`] to any writer (the end-to-end benchmark writes to a sink).
pub fn write_report(out: &mut impl Write, view: BorrowedReport<'_>, output: &ReportOutput, title: &str) -> CliResult {
    if output.json {
        // An I/O error (a closed pipe) comes back as itself, which `main` ends quietly on.
        write_json(&mut *out, &view.json(output.details), view.graph().len()).map_err(std::io::Error::from)?;
    } else {
        // The answer first, as a trace's: what fusion saves and where the traffic is, at the
        // page's default chip's bandwidth.
        let chip = hardware::chip::preset(DEFAULT_CHIP).map_err(|e| e.to_string())?;
        out.write_all(overview_text(&graph_overview(&view, &chip)).as_bytes())?;
        out.write_all(b"\n")?;
        out.write_all(title.as_bytes())?;
        summary::write_text_report(out, &view)?;
    }
    Ok(())
}
