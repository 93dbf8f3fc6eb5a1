//! `fusionscope calib FILE [--json]`: hardware summary and measured fusion patterns of a
//! calibration profile (or the subgraphs of a measured-subgraph file).

use std::path::PathBuf;

use calib::{parse_calibration, CalibReport};

use super::io::{print, print_json, read_parsed, CliResult, Output};

#[derive(clap::Args)]
pub struct Args {
    /// Calibration JSON: a hardware profile (with or without fusion_profiles) or a measured-subgraph file
    pub file: PathBuf,
    #[command(flatten)]
    pub output: Output,
}

pub fn run(args: Args) -> CliResult {
    let file = read_parsed(&args.file, parse_calibration)?;
    let report = CalibReport::new(&file);
    if args.output.json {
        return print_json(&report);
    }
    let mut out =
        format!("{}: calibration of {}\n\n{}", args.file.display(), report.hardware, report.summary_table().to_text());
    if !report.subgraphs.is_empty() {
        out += &format!(
            "\nmeasured subgraphs (no unfused baseline, so no speedups)\n{}",
            report.subgraph_table().to_text()
        );
    } else if report.patterns.is_empty() {
        out += "\nno fusion patterns in this profile\n";
    } else {
        out += &format!("\nfusion patterns\n{}", report.pattern_table().to_text());
        out += &format!("\nmatching to fusion groups\n{}", report.mapping_table().to_text());
    }
    print(&out)
}
