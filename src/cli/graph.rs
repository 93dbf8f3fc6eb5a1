//! `fusionscope graph FILE.json [--json]`

use std::path::PathBuf;

use fusionscope::fusion::{analyze, parse_graph, summary};

use super::io::{print, print_json, read_parsed, CliResult, Output};

#[derive(clap::Args)]
pub struct Args {
    /// Op-graph JSON file (object with "ops" and "tensors", or an array of ops)
    pub file: PathBuf,
    #[command(flatten)]
    pub output: Output,
}

pub fn run(args: Args) -> CliResult {
    let graph = read_parsed(&args.file, parse_graph)?;
    let report = analyze(&graph).report(&graph);
    if args.output.json {
        print_json(&report)
    } else {
        print(&format!("{}: {}", args.file.display(), summary::text_report(&report)))
    }
}
