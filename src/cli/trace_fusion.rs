//! The `fusion` part of `fusionscope trace` and `compare`: the `--fusion-rules` and
//! `--calibration` flags, the analysis of a side, and its text tables (docs/trace-fusion.md).

use std::path::PathBuf;

use analysis::exec_trace::{parse_exec_trace, ExecTrace};
use analysis::pipeline::Choices;
use analysis::trace_fusion::{parse_rules, BuiltIn, RuleError, RuleSet, TraceFusion};
use calib::{parse_calibration, CalibrationFile, CalibrationProfile};
use hardware::DetectedChip;
use table::Table;
use units::{format_bytes, format_duration_us, format_pct, group_digits};
use view::fusion::coverage_text;

use super::io::{read_parsed, read_text};

/// Kernel groups listed in the text output (the JSON lists every one).
const SHOWN_GROUPS: usize = 20;
/// Opportunities listed in the text output.
const SHOWN_OPPORTUNITIES: usize = 15;
/// Ops listed in the text table of op times both ways.
const SHOWN_OP_TIMES: usize = 10;
/// Longest kernel name in a cell.
const NAME_WIDTH: usize = 48;

#[derive(clap::Args, Clone)]
pub struct FusionArgs {
    /// Rule set for the fusion left on the table: project, inductor, flash, or a JSON rule
    /// file (docs/trace-fusion.md)
    #[arg(long, value_name = "project|inductor|flash|FILE", default_value = "inductor")]
    pub fusion_rules: String,
    /// Calibration profile: each opportunity whose pattern it measured gets the measured
    /// speedup and verdict
    #[arg(long, value_name = "FILE")]
    pub calibration: Option<PathBuf>,
}

#[derive(clap::Args, Clone)]
pub struct ExecTraceArg {
    /// PyTorch Execution Trace (Chakra ET JSON, plain or gzip) of the same run: its tensor ids
    /// make the kernels' data flow exact, its shapes stand in where the trace recorded none
    #[arg(long, value_name = "ET", conflicts_with = "summary_only")]
    pub exec_trace: Option<PathBuf>,
}

/// The rule set and profile the flags name, read once for both sides of a comparison.
pub struct FusionSetup {
    rules: RuleSet,
    calibration: Option<CalibrationProfile>,
    exec_trace: Option<(ExecTrace, String)>,
}

impl FusionSetup {
    pub fn new(args: &FusionArgs) -> Result<FusionSetup, Box<dyn std::error::Error>> {
        let rules = match BuiltIn::from_id(&args.fusion_rules) {
            Some(b) => b.rules(),
            None => {
                let path = std::path::Path::new(&args.fusion_rules);
                if !path.exists() {
                    return Err(RuleError::Unknown(args.fusion_rules.clone()).to_string().into());
                }
                let text = read_text(path)?;
                parse_rules(&text, &path.display().to_string())?
            }
        };
        let calibration = match &args.calibration {
            None => None,
            Some(path) => match read_parsed(path, parse_calibration)? {
                CalibrationFile::Profile(p) => Some(p),
                _ => {
                    return Err(format!(
                        "{}: a measured-subgraph file has no fusion patterns; --calibration needs a hardware profile",
                        path.display()
                    )
                    .into())
                }
            },
        };
        Ok(FusionSetup { rules, calibration, exec_trace: None })
    }

    /// Adds the execution trace `--exec-trace` names.
    pub fn with_exec_trace(mut self, arg: &ExecTraceArg) -> Result<FusionSetup, Box<dyn std::error::Error>> {
        if let Some(path) = &arg.exec_trace {
            let name = path.display().to_string();
            let et = parse_exec_trace(&read_text(path)?, &name)?;
            self.exec_trace = Some((et, name));
        }
        Ok(self)
    }

    /// The choices the flags make for one side, against the chip given (`None`: detected).
    pub fn choices<'a>(&'a self, chip: Option<&'a DetectedChip>) -> Choices<'a> {
        Choices {
            chip,
            rules: self.rules.clone(),
            calibration: self.calibration.as_ref(),
            exec_trace: self.exec_trace.as_ref().map(|(et, name)| (et, name.as_str())),
        }
    }
}

fn short(name: &str) -> String {
    classify::family::table_name(name, NAME_WIDTH)
}

/// `text` cut to the cell width at a character boundary.
fn cell(text: &str) -> String {
    if text.chars().count() <= NAME_WIDTH {
        return text.to_string();
    }
    text.chars().take(NAME_WIDTH - 1).collect::<String>() + "…"
}

fn bytes(b: Option<u64>) -> String {
    b.map_or_else(|| "?".to_string(), format_bytes)
}

/// The groups, opportunities and re-prediction as text.
pub fn fusion_text(f: &TraceFusion) -> String {
    let t = &f.totals;
    let p = t.processor;
    let mut out = format!(
        "\nFusion: {} groups of {} {p} events ({p} time being the {}); {}\n",
        group_digits(t.groups),
        group_digits(t.events),
        t.gpu_time_definition,
        coverage_text(t),
    );
    out += &format!(
        "Moved {} as run; {} if every part were its own kernel (the trace's fusion saved {})\n",
        format_bytes(t.fused_bytes),
        format_bytes(t.unfused_bytes),
        format_bytes(t.saved_by_fusion_bytes)
    );
    let mut g = Table::new(&["kernel", "kind", ">calls", ">time", "ops", ">fused/call", ">unfused/call", "how"]);
    for grp in f.groups.iter().take(SHOWN_GROUPS) {
        let ops =
            if grp.parts.is_empty() { grp.launched_by.clone().unwrap_or_default() } else { grp.parts.join(" + ") };
        let how = match &grp.unknown {
            Some(u) if !grp.bytes_known() => format!("{} ({}): {}", grp.how.text(), u.cause.text(), u.why),
            _ => grp.how.text().to_string(),
        };
        g.row([
            short(&grp.kernel),
            grp.kind.id().to_string(),
            group_digits(grp.calls),
            format_duration_us(grp.time_us),
            cell(&ops),
            bytes(grp.fused_bytes_per_call),
            bytes(grp.unfused_bytes_per_call),
            how,
        ]);
    }
    out += &format!(
        "\nKernel groups (longest {} of {})\n{}",
        SHOWN_GROUPS.min(f.groups.len()),
        f.groups.len(),
        g.to_text()
    );
    let chip = f.chip.as_deref().map_or("no chip: bytes only".to_string(), |c| format!("time at {c}'s bandwidth"));
    if f.opportunities.is_empty() {
        out += &format!("\nFusion left on the table ({} rules): none found\n", f.rule_set);
    } else {
        let shown = &f.opportunities[..SHOWN_OPPORTUNITIES.min(f.opportunities.len())];
        // A measured verdict needs a calibration profile (`--calib`); without one the column
        // would be blank.
        let measured = shown.iter().any(|op| op.measured.is_some());
        let mut headers = vec![
            "rule",
            "ops",
            ">calls",
            ">per layer",
            ">saved/call",
            ">kernels' time",
            ">saved",
            ">launches",
            ">host wait",
        ];
        if measured {
            headers.push("measured");
        }
        let mut o = Table::new(&headers);
        for op in shown {
            let names: Vec<&str> = op.ops.iter().map(|o| o.strip_prefix("aten::").unwrap_or(o)).collect();
            let mut row = vec![
                op.rule.clone(),
                names.join(" → "),
                group_digits(op.calls),
                op.per_step.as_ref().and_then(|p| p.calls_per_layer).map_or_else(String::new, |c| format!("{c}")),
                format_bytes(op.saved_bytes_per_call),
                format_duration_us(op.kernels_time_us),
                op.saved_us
                    .map_or_else(|| "?".to_string(), |s| format_duration_us(s) + if op.capped { " (cap)" } else { "" }),
                group_digits(op.launches_removed),
                format_duration_us(op.host_wait_us),
            ];
            if measured {
                row.push(
                    op.measured
                        .as_ref()
                        .map_or_else(String::new, |m| format!("{} {:.2}× {}", m.pattern, m.speedup, m.verdict)),
                );
            }
            o.row(row);
        }
        out += &format!(
            "\nFusion left on the table ({} rules, {chip}; {} of {})\n{}",
            f.rule_set,
            shown.len(),
            f.opportunities.len(),
            o.to_text()
        );
    }
    if !f.op_times.is_empty() {
        let mut t = Table::new(&["op", ">calls", ">own kernels", ">whole subtree"]);
        for o in f.op_times.iter().take(SHOWN_OP_TIMES) {
            t.row([cell(&o.op), group_digits(o.calls), format_duration_us(o.own_us), format_duration_us(o.subtree_us)]);
        }
        out += &format!(
            "\nOp time both ways where they differ (own kernels: ours, as the op table; whole subtree: TraceLens's; {} of {})\n{}",
            SHOWN_OP_TIMES.min(f.op_times.len()),
            f.op_times.len(),
            t.to_text()
        );
    }
    if let Some(e) = &f.exec_trace {
        out += &format!(
            "\nExecution trace {}: {} of {} ops linked ({}), {} kernels with exact data flow\n",
            e.file,
            group_digits(e.linked_ops),
            group_digits(e.ops),
            format_pct(e.linked_pct),
            group_digits(e.linked_kernels)
        );
        if let Some(note) = &e.note {
            out += &format!("{note}\n");
        }
    }
    if let Some(r) = &f.reprediction {
        out += &format!(
            "\nRe-prediction ({} rules on Inductor's unfused ops): {} of {} kernels re-formed exactly{}{}\n",
            r.rule_set,
            group_digits(r.matched),
            group_digits(r.kernels),
            r.matched_pct.map_or_else(String::new, |p| format!(" ({})", format_pct(p))),
            view::fusion::exact_clause(r)
        );
        if r.isolated > 0 {
            out += &format!(
                "{} of them have a library kernel on both sides: only the rules within a kernel are tested there\n",
                group_digits(r.isolated)
            );
        }
        if r.not_expandable > 0 {
            out += &format!(
                "{} Inductor kernel launches have names that list no known op words (such as the older triton__0d1d2d…) and are not counted\n",
                group_digits(r.not_expandable)
            );
        }
        for m in r.misses.iter().take(5) {
            out += &format!("  missed {} ×{}: {}\n", short(&m.kernel), m.count, m.reason);
        }
    }
    out
}
