//! `fusionscope simcsv FILE [--json]`: a NeuSim simulator op table grouped by fusion index.

use std::path::PathBuf;

use fusionscope::hardware::roofline::format_flops;
use fusionscope::simcsv::parse_sim_csv;
use fusionscope::table::Table;
use fusionscope::units::{format_bytes, format_duration_us};

use super::{print, CliResult};

#[derive(clap::Args)]
pub struct Args {
    /// Simulator op table (CSV with `Fusion index`, `Description`, `Count`, times in ns …)
    pub file: PathBuf,
    /// Print the machine-readable result (rows, groups, total)
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: Args) -> CliResult {
    let table = super::read_parsed(&args.file, parse_sim_csv)?;
    if args.json {
        return print(&(serde_json::to_string_pretty(&table)? + "\n"));
    }
    let mut t =
        Table::new(&[">fusion", "ops", "units", ">runs", "bound", ">per run", ">total", ">FLOPs/run", ">bytes/run"]);
    for g in &table.groups {
        let mut units: Vec<&str> = g.rows.iter().map(|&i| table.rows[i].unit.as_str()).collect();
        units.dedup();
        t.row([
            g.fusion_index.to_string(),
            format!("{} ({} rows)", g.descriptions.join(" | "), g.rows.len()),
            units.join("+"),
            g.count.to_string(),
            g.bound.as_str().to_string(),
            format_duration_us(g.execution_ns / 1000.0),
            format_duration_us(g.total_ns / 1000.0),
            format_flops(g.flops as f64),
            format_bytes(g.bytes),
        ]);
    }
    print(&format!(
        "{}: {} ops in {} fusion groups, simulated total {}\n\n{}",
        args.file.display(),
        table.rows.len(),
        table.groups.len(),
        format_duration_us(table.total_ns / 1000.0),
        t.to_text()
    ))
}
