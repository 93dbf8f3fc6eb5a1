//! `fusionscope graph FILE.json [--json]`

use std::path::PathBuf;

use fusionscope::fusion::{analyze, parse_graph, summary};

use super::{print, print_json, read_parsed, CliResult};

#[derive(clap::Args)]
pub struct Args {
    /// Op-graph JSON file (object with "ops" and "tensors", or an array of ops)
    pub file: PathBuf,
    /// Print the machine-readable result instead of tables
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: Args) -> CliResult {
    let graph = read_parsed(&args.file, parse_graph)?;
    let report = analyze(&graph).report(&graph);
    if args.json {
        print_json(&report)
    } else {
        print(&format!("{}: {}", args.file.display(), summary::text_report(&report)))
    }
}
