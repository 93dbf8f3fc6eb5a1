//! `fusionscope model --model F --chip F --phase prefill|decode [--batch B] [--seq-len S]
//! [--output-len O] [--tp N] [--launch-us U] [--calib F] [--simcsv F] [--json|--csv|--ops]`
//!
//! `--model` is a NeuSim model config file or a built-in name (`llama3-8b`, `deepseekv2-236b`,
//! …); `--chip` is a chip JSON file (NeuSim or `{name, peak_flops, hbm_bw_GBps,
//! launch_overhead_us}`) or a preset (`tpuv5p`, `h100`, `mi300x`, …). A path that exists wins
//! over a preset of the same name.

use std::path::{Path, PathBuf};

use calib::{parse_calibration, CalibrationFile};
use hardware::{apply_calibration, CalibrationSummary};
use serde::Serialize;
use simcsv::{compare, parse_sim_csv, Comparison};
use table::Table;
use units::format_flops;
use units::{format_bytes, format_duration_us};
use workload::report::{model_report_from, model_time, op_table};
use workload::{
    build_workload, model_names, parse_model_config, preset_model, ModelConfig, ModelReport, Phase, WorkloadParams,
};

use super::io::{load_chip, print, print_json, read_parsed, CliResult};

#[derive(clap::Args)]
pub struct Args {
    /// Model config JSON (NeuSim format) or a built-in model name
    #[arg(long)]
    pub model: String,
    /// Chip JSON file or preset name (tpuv2 … tpuv6p; a100, a10040gb, v100, h100, h100pcie, h100nvl, h800,
    /// h200, b200, rtx4090; mi250x, mi300x, mi325x, mi350x, mi355x)
    #[arg(long)]
    pub chip: String,
    /// Inference phase: prefill (whole prompt) or decode (one token per step over the KV cache)
    #[arg(long, default_value = "prefill")]
    pub phase: String,
    /// Batch size (default: the config's global_batch_size)
    #[arg(long)]
    pub batch: Option<u64>,
    /// Input (prompt) length in tokens (default: the config's input_seqlen)
    #[arg(long)]
    pub seq_len: Option<u64>,
    /// Output length in tokens = decode steps (default: the config's output_seqlen)
    #[arg(long)]
    pub output_len: Option<u64>,
    /// Tensor parallelism: the graph is one chip's share (default: the config's degree)
    #[arg(long)]
    pub tp: Option<u64>,
    /// Override the chip's per-kernel launch overhead, µs
    #[arg(long)]
    pub launch_us: Option<f64>,
    /// Hardware calibration profile: groups matching a measured fusion pattern take its speedup
    #[arg(long)]
    pub calib: Option<PathBuf>,
    /// A NeuSim simulator op table (CSV) of the same model and chip, shown side by side
    #[arg(long)]
    pub simcsv: Option<PathBuf>,
    /// Print the machine-readable result
    #[arg(long, conflicts_with_all = ["csv", "ops"])]
    pub json: bool,
    /// Print the op table as CSV
    #[arg(long, conflicts_with = "ops")]
    pub csv: bool,
    /// Print the op table as text after the groups
    #[arg(long)]
    pub ops: bool,
}

fn load_model(arg: &str) -> Result<ModelConfig, Box<dyn std::error::Error>> {
    let path = Path::new(arg);
    if path.exists() {
        read_parsed(path, parse_model_config)
    } else if model_names().contains(&arg.to_ascii_lowercase().replace('.', "_").as_str()) {
        Ok(preset_model(arg)?)
    } else {
        Err(format!("--model {arg}: no such file, and not a built-in model ({})", model_names().join(", ")).into())
    }
}

/// The `--json` object: the model report, then the simulator side-by-side when asked for.
#[derive(Serialize)]
struct JsonOut<'a> {
    #[serde(flatten)]
    report: &'a ModelReport,
    #[serde(skip_serializing_if = "Option::is_none")]
    calibration: Option<&'a CalibrationSummary>,
    #[serde(skip_serializing_if = "Option::is_none")]
    simulator: Option<&'a Comparison>,
}

pub fn run(args: Args) -> CliResult {
    let config = load_model(&args.model)?;
    let mut chip = load_chip(&args.chip)?;
    if let Some(us) = args.launch_us {
        chip.launch_overhead_us = us;
        chip.validate().map_err(|e| format!("--launch-us: {e}"))?;
    }
    let phase: Phase = args.phase.parse()?;
    let params = WorkloadParams { batch: args.batch, seq_len: args.seq_len, output_len: args.output_len, tp: args.tp };
    let workload = build_workload(&config, phase, params)?;
    let (analysis, mut time) = model_time(&workload, &chip)?;
    let calibration = match &args.calib {
        Some(path) => {
            let file = read_parsed(path, parse_calibration)?;
            let CalibrationFile::Profile(profile) = file else {
                return Err(format!(
                    "{}: a measured-subgraph file; --calib needs a hardware profile with fusion_profiles",
                    path.display()
                )
                .into());
            };
            Some(apply_calibration(&mut time, &profile))
        }
        None => None,
    };
    let comparison = match &args.simcsv {
        Some(path) => {
            let table = read_parsed(path, parse_sim_csv)?;
            Some(compare(&table, &workload, &time))
        }
        None => None,
    };
    let report = model_report_from(&workload, &chip, &analysis, time);
    if args.json {
        let out = JsonOut { report: &report, calibration: calibration.as_ref(), simulator: comparison.as_ref() };
        return print_json(&out);
    }
    if args.csv {
        return print(&op_table(&report).to_csv());
    }
    let mut text = summary(&report);
    if let Some(c) = &calibration {
        text.push_str(&calibration_text(c));
    }
    text.push_str(&groups_table(&report).to_text());
    if args.ops {
        text.push('\n');
        text.push_str(&op_table(&report).to_text());
    }
    if let Some(c) = &comparison {
        text.push('\n');
        text.push_str(&comparison_text(c));
    }
    print(&text)
}

fn summary(r: &ModelReport) -> String {
    let p = &r.params;
    let c = &r.chip_details;
    let mut s = format!(
        "{} on {}, {}: batch {}, {} input tokens, {} output tokens, tp {}; {} layers × {} step(s)\n",
        r.model, r.chip, r.phase, p.batch, p.seq_len, p.output_len, p.tp, r.layers, r.steps
    );
    s.push_str(&format!(
        "chip: peak {}/s, HBM {:.0} GB/s, ridge {:.1} FLOP/B, launch {} per kernel\n",
        format_flops(c.peak_flops),
        c.hbm_bandwidth / 1e9,
        c.ridge_intensity(),
        format_duration_us(c.launch_overhead_us)
    ));
    s.push_str(&format!(
        "FLOPs: {} per layer, {} in total\ntime: unfused {}, fused {} (speedup {:.2}×); traffic of one layer of each kind: unfused {}, fused {}\n",
        format_flops(r.per_layer_flops as f64),
        format_flops(r.total_flops as f64),
        format_duration_us(r.time_us.unfused),
        format_duration_us(r.time_us.fused),
        r.time_us.speedup,
        format_bytes(r.analysis.unfused.total),
        format_bytes(r.analysis.fused.total),
    ));
    for n in &r.not_modelled {
        s.push_str(&format!("not modelled: {n}\n"));
    }
    s.push('\n');
    s
}

fn calibration_text(c: &CalibrationSummary) -> String {
    let slower = c.calibrated_groups.iter().filter(|g| g.fusion_slower).count();
    format!(
        "calibration: {} ({} measured patterns): {} group(s) take the measured speedup instead of the roofline, {} of them slower fused\n\n",
        c.hardware,
        c.patterns,
        c.calibrated_groups.len(),
        slower
    )
}

fn ops_cell(ops: &[String]) -> String {
    if ops.len() <= 4 {
        ops.join(", ")
    } else {
        format!("{}, … {} ops …, {}", ops[0], ops.len() - 2, ops[ops.len() - 1])
    }
}

fn groups_table(r: &ModelReport) -> Table {
    let mut t = Table::new(&[
        ">#",
        "ops",
        "bound",
        ">FLOPs",
        ">fused bytes",
        ">FLOP/B",
        ">unfused",
        ">fused",
        ">speedup",
        ">runs",
        "calibrated",
    ]);
    for g in &r.groups {
        t.row([
            (g.group + 1).to_string(),
            ops_cell(&g.ops),
            g.bound.as_str().to_string(),
            format_flops(g.flops as f64),
            format_bytes(g.fused_bytes),
            format!("{:.1}", g.intensity),
            format_duration_us(g.unfused_us),
            format_duration_us(g.fused_us),
            format!("{:.2}×", g.speedup),
            g.repeat.to_string(),
            match &g.calibration {
                Some(c) if c.fusion_slower => format!("{} (fusing here is slower on this hardware)", c.pattern),
                Some(c) => c.pattern.clone(),
                None => String::new(),
            },
        ]);
    }
    t
}

fn ratio_cell(r: Option<f64>) -> String {
    r.map(|x| format!("{x:.3}")).unwrap_or_else(|| "–".into())
}

pub(super) fn comparison_text(c: &Comparison) -> String {
    let mut t = Table::new(&[
        "role",
        ">sim FLOPs",
        ">ours/sim",
        ">sim bytes",
        ">ours/sim",
        ">sim time",
        ">our time",
        ">ours/sim",
        "sim bound",
        "our bound",
    ]);
    for r in &c.roles {
        t.row([
            r.role.clone(),
            format_flops(r.sim_flops as f64),
            ratio_cell(r.flops_ratio()),
            format_bytes(r.sim_bytes),
            ratio_cell(r.bytes_ratio()),
            format_duration_us(r.sim_time_us),
            format_duration_us(r.our_time_us),
            ratio_cell(r.time_ratio()),
            r.sim_bound.clone(),
            r.our_bound.map(|b| b.as_str().to_string()).unwrap_or_else(|| "–".into()),
        ]);
    }
    let mut s = String::from("simulator side by side (per execution; see docs/time-model.md for the differences)\n");
    s.push_str(&t.to_text());
    if !c.sim_only.is_empty() {
        s.push_str(&format!("only in the simulator: {}\n", c.sim_only.join(", ")));
    }
    if !c.ours_only.is_empty() {
        s.push_str(&format!("only in fusionscope: {}\n", c.ours_only.join(", ")));
    }
    s
}
