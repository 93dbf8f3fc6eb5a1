//! `fusionscope simcsv FILE [--json]`: a NeuSim simulator op table grouped by fusion index,
//! then (as text) beside our analysis of the workload its file name describes, as the page
//! shows it (`simcsv::infer_setup`, `simcsv::side_by_side`).

use std::path::PathBuf;

use simcsv::{infer_setup, parse_sim_csv, side_by_side, SimSetup};
use table::Table;
use units::format_flops;
use units::{format_bytes, format_duration_us};

use super::io::{print, print_json, read_parsed, CliResult};

#[derive(clap::Args)]
pub struct Args {
    /// Simulator op table (CSV with `Fusion index`, `Description`, `Count`, times in ns …)
    pub file: PathBuf,
    /// Print the machine-readable result (rows, groups, total)
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: Args) -> CliResult {
    let table = read_parsed(&args.file, parse_sim_csv)?;
    if args.json {
        return print_json(&table);
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
    let mut out = format!(
        "{}: {} ops in {} fusion groups, simulated total {}\n\n{}",
        args.file.display(),
        table.rows.len(),
        table.groups.len(),
        format_duration_us(table.total_ns / 1000.0),
        t.to_text()
    );
    let name = args.file.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let inferred = infer_setup(&name, &table);
    out.push('\n');
    for note in &inferred.notes {
        out += &format!("note: {note}\n");
    }
    match side_by_side(&table, &inferred.setup) {
        Ok(s) => {
            out += &format!(
                "workload read from the file name: {}; {} rows compared, {} of the other phase left out\nother workloads: {}\n",
                s.describe(),
                s.rows_compared,
                s.rows_other_phase,
                model_command(&inferred.setup, &args.file.display().to_string())
            );
            out += &super::model::comparison_text(&s.comparison);
        }
        Err(e) => out += &format!("our side cannot be built for the workload read from the file name: {e}\n"),
    }
    print(&out)
}

/// The `fusionscope model` command that compares the table with this setup (change its flags
/// for another workload).
fn model_command(s: &SimSetup, file: &str) -> String {
    let mut c = format!("fusionscope model --model {} --chip {} --phase {}", s.model, s.chip, s.phase);
    let p = &s.params;
    for (flag, v) in [("--batch", p.batch), ("--seq-len", p.seq_len), ("--output-len", p.output_len), ("--tp", p.tp)] {
        if let Some(v) = v {
            c += &format!(" {flag} {v}");
        }
    }
    c + &format!(" --simcsv {file}")
}
