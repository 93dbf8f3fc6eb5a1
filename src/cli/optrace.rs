//! `fusionscope optrace FILE [--json]`: Nova's case view of an op trace and the fusion
//! analysis of the same trace.

use std::path::PathBuf;

use fusion::summary;
use fusion::OpType;
use optrace::{analyze_optrace, Role};

use super::io::{print, print_json, read_parsed, CliResult, Output};

#[derive(clap::Args)]
pub struct Args {
    /// Op trace in the optrace text form (one instruction a line)
    pub file: PathBuf,
    #[command(flatten)]
    pub output: Output,
}

pub fn run(args: Args) -> CliResult {
    let report = read_parsed(&args.file, analyze_optrace)?;
    if args.output.json {
        return print_json(&report);
    }
    let mut out = format!(
        "{}: {} records, {} lines skipped (not records)\n\ncase view\n{}",
        args.file.display(),
        report.records,
        report.skipped_lines,
        report.case_table().to_text()
    );
    if !report.unmapped_cases.is_empty() {
        out += &format!("\nunmapped ({})\n{}", report.unmapped.join(", "), report.unmapped_table().to_text());
    }
    for w in &report.warnings {
        out += &format!("warning: line {}: {}\n", w.line, w.message);
    }
    out += &format!("\nfusion analysis: {}", summary::text_report(&report.analysis));
    let standalone: Vec<&str> = report
        .graph_ops
        .iter()
        .filter(|o| matches!(o.role, Role::Collective | Role::Opaque) && o.op_type == OpType::Matmul)
        .map(|o| o.name.as_str())
        .collect();
    if !standalone.is_empty() {
        out += &format!(
            "\nstandalone ops (collectives and unknown ops never fuse): {}.\nEach is a head op (listed as matmul) that reads \
             the operands, and one op per result (listed as reduction) that writes it, joined by a 0-byte token.\n",
            standalone.join(", ")
        );
    }
    print(&out)
}
