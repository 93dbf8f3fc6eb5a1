//! `fusionscope trace FILE [--json]` and `fusionscope compare FILE_A FILE_B [--json]`:
//! A trace's summary and two-trace comparison, for every profiler format (docs/trace-analysis.md).

use std::path::PathBuf;

use analysis::compare::{Comparison, LayerAlignment, OpSide};
use analysis::documents::{CompareJson, TraceJson};
use analysis::structure::{LayerKernel, Structure};
use analysis::summary::{KernelStat, PlatformEntry, SideStats, SummaryRow, TraceSummary};
use analysis::summary_only::{SummaryOnly, SummarySink};
use analysis::time::streams::DeviceStreams;
use analysis::time::streams::StreamFigures;
use table::Table;
use units::{format_duration_us, format_pct, group_digits, plural};
use view::findings::overview_text;
use view::time::{capture_line, gap_text, time_text, timeline_table_of};

use super::compile_log::compiled_kernels_text;
use super::io::{print, print_json, CliResult, Output};
use super::pipeline::{analyse_pair, analyse_trace, file_name, OneInput, OneTrace, Pair, PairInput};
pub(super) use super::trace_file::{load, load_sink};
use super::trace_fusion::{fusion_text, ExecTraceArg, FusionArgs};

#[derive(clap::Args)]
pub struct TraceArgs {
    /// Trace file of any profiler format the page reads (its kind and gzip are recognised by its content)
    pub file: PathBuf,
    /// Chip for the roofline figures: a preset name or a chip JSON file (default: detected
    /// from the trace's device name)
    #[arg(long, value_name = "NAME|FILE")]
    pub chip: Option<String>,
    /// Trace taken while the graphs FILE replays were captured: its ops and shapes are
    /// attributed to the replayed kernels by their position in the graph
    #[arg(long, value_name = "CAPTURE", conflicts_with = "summary_only")]
    pub capture: Option<PathBuf>,
    /// Fold kernels and copies into per-name statistics as they are read, keeping nothing per
    /// event: memory bounded by the distinct names, for traces too large to hold. Gives the
    /// platform, categories, kernels (with min/max), fused kernels and whole-trace timelines;
    /// leaves out the structure, per-step timelines and the per-op table (the output says so)
    #[arg(long, conflicts_with = "chip")]
    pub summary_only: bool,
    #[command(flatten)]
    pub fusion: FusionArgs,
    #[command(flatten)]
    pub exec_trace: ExecTraceArg,
    /// torch.compile log of the same run (TORCH_TRACE, with INDUCTOR_PROVENANCE=1): each
    /// compiled kernel's group is then the log's exact post-grad nodes (see `compile-log`)
    #[arg(long, value_name = "LOG", conflicts_with = "summary_only")]
    pub compile_log: Option<PathBuf>,
    #[command(flatten)]
    pub output: Output,
}

#[derive(clap::Args)]
pub struct CompareArgs {
    /// First trace, of any profiler format (AMD or NVIDIA, either order)
    pub file_a: PathBuf,
    /// Second trace, of any profiler format
    pub file_b: PathBuf,
    /// Chip of the first trace (preset name or chip JSON file; default: detected)
    #[arg(long, value_name = "NAME|FILE")]
    pub chip_a: Option<String>,
    /// Chip of the second trace (preset name or chip JSON file; default: detected)
    #[arg(long, value_name = "NAME|FILE")]
    pub chip_b: Option<String>,
    /// Graph-capture trace of the first trace's replays (see `trace --capture`)
    #[arg(long, value_name = "CAPTURE")]
    pub capture_a: Option<PathBuf>,
    /// Graph-capture trace of the second trace's replays
    #[arg(long, value_name = "CAPTURE")]
    pub capture_b: Option<PathBuf>,
    #[command(flatten)]
    pub fusion: FusionArgs,
    #[command(flatten)]
    pub output: Output,
}

/// Longest kernel name shown in a table cell (the JSON has them whole).
const NAME_WIDTH: usize = 70;
/// Kernels listed in the `trace` table of longest kernels.
const TOP_KERNELS: usize = 15;
/// Steps listed in the structure's table of steps (the JSON lists every one).
const SHOWN_STEPS: usize = 20;
/// Longest kernel name in a cell of an aligned layer's row (a row may list several).
const ROW_NAME_WIDTH: usize = 40;
/// Kernels named in the line of kernels before or after a phase's layers.
const SHOWN_OUTSIDE: usize = 8;

pub fn run_trace(args: TraceArgs) -> CliResult {
    if args.summary_only {
        let sink = SummarySink::new(Some(&file_name(&args.file)));
        let s = load_sink(&args.file, sink)?;
        return if args.output.json { print_json(&s) } else { print(&summary_only_text(&s)) };
    }
    let OneTrace { summary, time, overview } = analyse_trace(OneInput {
        file: &args.file,
        chip: args.chip.as_deref(),
        capture: args.capture.as_deref(),
        fusion: &args.fusion,
        exec_trace: &args.exec_trace,
        compile_log: args.compile_log.as_deref(),
    })?;
    if args.output.json {
        print_json(&TraceJson { overview: Some(&overview), summary: &summary, time: &time })
    } else {
        let fusion = time.fusion.as_ref().map(fusion_text).unwrap_or_default();
        let text = overview_text(&overview) + "\n" + &trace_text(&summary);
        let log = time.compiled_kernels.as_ref().map(|c| format!("\n{}", compiled_kernels_text(c))).unwrap_or_default();
        print(&(text + &time_text(&time) + &streams_text(&time.streams) + &fusion + &log))
    }
}

/// The streams of every device, as a table.
fn streams_text(devices: &[DeviceStreams]) -> String {
    let rows = devices.iter().flat_map(|d| d.streams.iter().map(move |s| (None, d.device.as_str(), d.pid, s)));
    format!("\nStreams (kernels only)\n{}", stream_table(rows).to_text())
}

/// One row per stream: its rank (a column only when the first row has one), device, pid,
/// kernels and times. `trace` and `ranks` print their streams with it.
pub(super) fn stream_table<'a>(
    rows: impl IntoIterator<Item = (Option<u32>, &'a str, i64, &'a StreamFigures)>,
) -> Table {
    let mut rows = rows.into_iter().peekable();
    let ranked = matches!(rows.peek(), Some((Some(_), ..)));
    let headers = [">rank", "device", ">pid", ">stream", ">kernels", ">busy", ">computation", ">communication"];
    let mut t = Table::new(&headers[usize::from(!ranked)..]);
    for (rank, device, pid, s) in rows {
        let cells = [
            device.to_string(),
            pid.to_string(),
            s.stream.to_string(),
            group_digits(s.kernels),
            format_duration_us(s.busy_us),
            format_duration_us(s.computation_us),
            format_duration_us(s.communication_us),
        ];
        t.row(rank.filter(|_| ranked).map(|r| r.to_string()).into_iter().chain(cells));
    }
    t
}

pub fn run_compare(args: CompareArgs) -> CliResult {
    let Pair { comparison: c, gap: g, times, overview } = analyse_pair(PairInput {
        files: [&args.file_a, &args.file_b],
        chips: [args.chip_a.as_deref(), args.chip_b.as_deref()],
        captures: [args.capture_a.as_deref(), args.capture_b.as_deref()],
        fusion: &args.fusion,
    })?;
    let keys = [&c.platforms[0].key, &c.platforms[1].key];
    let captures = keys.iter().zip(&times).filter_map(|(k, t)| t.capture.clone().map(|r| (k.to_string(), r))).collect();
    let fusion: std::collections::BTreeMap<String, _> =
        keys.iter().zip(&times).filter_map(|(k, t)| t.fusion.as_ref().map(|f| (k.to_string(), f))).collect();
    if args.output.json {
        print_json(&CompareJson { overview: Some(&overview), comparison: &c, gap: &g, captures, fusion })
    } else {
        let lines: String = keys
            .iter()
            .zip(&times)
            .map(|(k, t)| t.capture.as_ref().map(|r| format!("{k}: {}\n", capture_line(r))).unwrap_or_default())
            .collect();
        let fusions: String = fusion.iter().map(|(k, f)| format!("\n{k}:{}", fusion_text(f))).collect();
        // The sides' keys head the tables' columns (`amd time`): each is said before the first.
        let text = overview_text(&overview) + "\n" + &legend(&c) + "\n" + &lines + &gap_text([keys[0], keys[1]], &g);
        print(&(text + "\n" + &compare_text(&c) + &fusions))
    }
}

fn short(name: &str) -> String {
    short_to(name, NAME_WIDTH)
}

fn short_to(name: &str, width: usize) -> String {
    classify::family::table_name(name, width)
}

fn platform_line(p: &PlatformEntry) -> String {
    let file = p.file.as_deref().map(|f| format!("{f}: ")).unwrap_or_default();
    format!("{file}{}\n", view::platform_line(p))
}

fn top(s: &SideStats) -> String {
    s.kernels.first().map(|k| short(&k.name)).unwrap_or_default()
}

fn components(k: &KernelStat) -> String {
    view::component_list(&k.components)
}

fn trace_text(s: &TraceSummary) -> String {
    let mut out = categories_text(&s.platforms[0], &s.categories);
    let mut all: Vec<&KernelStat> = s.categories.iter().flat_map(|r| &r.trace.kernels).collect();
    all.sort_by(|a, b| b.time_us.total_cmp(&a.time_us));
    let gpu = s.platforms[0].kernel_time_us;
    let mut k = Table::new(&["kernel", "category", ">count", ">total", ">share"]);
    for stat in all.iter().take(TOP_KERNELS) {
        k.row([
            short(&stat.name),
            stat.category.id().to_string(),
            group_digits(stat.count),
            format_duration_us(stat.time_us),
            format_pct(share(stat.time_us, gpu)),
        ]);
    }
    out += &format!("\nKernels by time ({}; --json lists every one)\n{}", shown_of(all.len()), k.to_text());
    out += &fused_text(&s.fused_kernels);
    out += &structure_text(s.structure.as_deref());
    out
}

/// The platform line and the table of categories.
fn categories_text(platform: &PlatformEntry, categories: &[SummaryRow]) -> String {
    let out = platform_line(platform);
    let mut t = Table::new(&["category", ">kernels", ">total", ">mean", ">share", ">names", "longest kernel"]);
    for r in categories {
        let st = &r.trace;
        t.row([
            r.category.id().to_string(),
            group_digits(st.count),
            format_duration_us(st.time_us),
            format_duration_us(st.mean_us),
            format_pct(st.share_pct),
            st.kernels.len().to_string(),
            top(st),
        ]);
    }
    out + &format!("\nKernels by category\n{}", t.to_text())
}

/// "top 15 of 120" or "all 12": how many of `total` kernels a table shows.
fn shown_of(total: usize) -> String {
    if total > TOP_KERNELS {
        format!("top {TOP_KERNELS} of {total}")
    } else {
        format!("all {total}")
    }
}

fn share(time_us: f64, gpu_us: f64) -> f64 {
    if gpu_us > 0.0 {
        100.0 * time_us / gpu_us
    } else {
        0.0
    }
}

fn fused_text(fused: &[KernelStat]) -> String {
    if fused.is_empty() {
        return String::new();
    }
    let mut f = Table::new(&["fused kernel", ">count", ">total", "components"]);
    for k in fused {
        f.row([short(&k.name), group_digits(k.count), format_duration_us(k.time_us), components(k)]);
    }
    format!("\nFused kernels\n{}", f.to_text())
}

/// `trace --summary-only`: the summary's tables, each kernel's range, the whole-trace timelines,
/// and what was left out.
fn summary_only_text(s: &SummaryOnly) -> String {
    let mut out = categories_text(&s.platforms[0], &s.categories);
    let gpu = s.platforms[0].kernel_time_us;
    let mut k = Table::new(&["kernel", "category", ">count", ">total", ">mean", ">min", ">max", ">share"]);
    for r in s.kernels.iter().take(TOP_KERNELS) {
        k.row([
            short(&r.name),
            r.category.id().to_string(),
            group_digits(r.count),
            format_duration_us(r.time_us),
            format_duration_us(r.mean_us),
            format_duration_us(r.min_us),
            format_duration_us(r.max_us),
            format_pct(share(r.time_us, gpu)),
        ]);
    }
    out += &format!("\nKernels by time ({}; --json lists every one)\n{}", shown_of(s.kernels.len()), k.to_text());
    out += &fused_text(&s.fused_kernels);
    let t = timeline_table_of(s.timeline.as_ref(), &[], &s.other_devices);
    out += &format!("\n{}\n{}", t.title, t.shown_table().to_text());
    for n in &s.notes {
        out += &format!("note: {n}\n");
    }
    out += &format!(
        "\nSummary only ({} events read, nothing kept per event); left out, run without --summary-only for them:\n",
        group_digits(s.events)
    );
    for l in &s.left_out {
        out += &format!("  - {l}\n");
    }
    out
}

/// The first `width` kernels of `ks` (of `total` in all), shortened.
fn kernel_list(ks: &[LayerKernel], width: usize, total: usize) -> String {
    let mut names: Vec<String> = ks.iter().take(width).map(|k| short(&k.kernel)).collect();
    if total > names.len() {
        names.push(format!("… {} more", total - names.len()));
    }
    names.join(" ; ")
}

/// Steps, phases and each phase's layer, as tables.
fn structure_text(s: Option<&Structure>) -> String {
    let Some(s) = s else {
        return "\nStructure: nothing repeats (no layer found in any step, and no two steps alike)\n".to_string();
    };
    let from = match &s.step_annotation {
        Some(a) => format!("steps from annotations {a}"),
        None => "steps from idle gaps and runs of layers".to_string(),
    };
    let mut out = format!(
        "\nStructure: device {}, stream {}: {}, {} ({from})",
        s.device,
        s.stream,
        plural(s.kernels as u64, "kernel", "kernels"),
        plural(s.steps.len() as u64, "step", "steps"),
    );
    if s.outside_steps > 0 {
        out += &format!("; {} outside every step", plural(s.outside_steps as u64, "kernel", "kernels"));
    }
    out += "\n";
    let mut t = Table::new(&["step", ">phase", ">start (µs)", ">kernels", ">layers", ">time"]);
    let first = s.steps.first().map_or(0.0, |st| st.start_us);
    for (i, st) in s.steps.iter().enumerate().take(SHOWN_STEPS) {
        t.row([
            i.to_string(),
            st.phase.to_string(),
            format!("+{:.1}", st.start_us - first),
            group_digits(st.kernels as u64),
            st.layers.to_string(),
            format_duration_us(st.time_us),
        ]);
    }
    let shown = if s.steps.len() > SHOWN_STEPS {
        format!("first {SHOWN_STEPS} of {}; --json lists every one", s.steps.len())
    } else {
        format!("{}", s.steps.len())
    };
    out += &format!("\nSteps ({shown})\n{}", t.to_text());
    let mut t = Table::new(&[
        "phase",
        "label",
        ">steps",
        ">layers/step",
        ">kernels/layer",
        ">time/layer",
        ">spread",
        ">time/step",
        ">exact",
        ">near",
    ]);
    for p in &s.phases {
        let spread = p
            .layer_time_spread_us
            .as_ref()
            .map_or(String::new(), |sp| format!("{}–{}", format_duration_us(sp.min), format_duration_us(sp.max)));
        let (exact, near) =
            p.regularity.as_ref().map_or((String::new(), String::new()), |r| (r.exact.to_string(), r.near.to_string()));
        t.row([
            p.phase.to_string(),
            p.label.clone(),
            p.steps.to_string(),
            p.layers_per_step.to_string(),
            p.kernels_per_layer.to_string(),
            p.time_per_layer_us.map_or(String::new(), format_duration_us),
            spread,
            format_duration_us(p.time_per_step_us),
            exact,
            near,
        ]);
    }
    out += &format!("\nPhases\n{}", t.to_text());
    for p in s.phases.iter().filter(|p| !p.layer.is_empty()) {
        let mut t = Table::new(&[">#", "category", "kernel", ">time"]);
        for (i, k) in p.layer.iter().enumerate() {
            // Counted from 1, as the page's layer table counts them.
            t.row([(i + 1).to_string(), k.category.id().to_string(), short(&k.kernel), format_duration_us(k.time_us)]);
        }
        out += &format!(
            "\nLayer of phase {} ({}): {}, {} per step\n{}",
            p.phase,
            p.label,
            plural(p.kernels_per_layer as u64, "kernel", "kernels"),
            p.layers_per_step,
            t.to_text()
        );
        if p.kernels_before_layers > 0 {
            out += &format!(
                "before the layers ({}): {}\n",
                p.kernels_before_layers,
                kernel_list(&p.before_layers, SHOWN_OUTSIDE, p.kernels_before_layers)
            );
        }
        if p.kernels_after_layers > 0 {
            out += &format!(
                "after the layers ({}): {}\n",
                p.kernels_after_layers,
                kernel_list(&p.after_layers, SHOWN_OUTSIDE, p.kernels_after_layers)
            );
        }
        for v in &p.variants {
            let (layers, kernels) =
                (plural(v.layers as u64, "layer", "layers"), plural(v.kernels as u64, "kernel", "kernels"));
            out += &format!("variant ({layers}, {kernels}): {}\n", v.differences.join("; "));
        }
    }
    for n in &s.notes {
        out += &format!("note: {n}\n");
    }
    out
}

fn ratio(r: Option<f64>) -> String {
    r.map(|r| format!("{r:.2}×")).unwrap_or_else(|| "—".to_string())
}

/// Each side's key, as the tables' columns name it, and its platform line.
fn legend(c: &Comparison) -> String {
    c.platforms.iter().map(|p| format!("{:>6}  {}", p.key, platform_line(p))).collect()
}

fn compare_text(c: &Comparison) -> String {
    let mut out = String::new();
    let keys: Vec<&str> = c.platforms.iter().map(|p| p.key.as_str()).collect();
    let mut cols = vec!["category".to_string()];
    for k in &keys {
        cols.extend([format!(">{k} kernels"), format!(">{k} time"), format!(">{k} mean")]);
    }
    cols.push(format!(">ratio {}", c.time_ratio));
    let mut t = Table::new(&cols.iter().map(String::as_str).collect::<Vec<_>>());
    for r in &c.categories {
        let mut row = vec![r.category.id().to_string()];
        for k in &keys {
            let s = &r.sides[*k];
            row.extend([group_digits(s.count), format_duration_us(s.time_us), format_duration_us(s.mean_us)]);
        }
        row.push(ratio(r.time_ratio));
        t.row(row);
    }
    out += &format!("Categories\n{}", t.to_text());

    // Main kernels side by side right after the op, as on the page; figures follow.
    let mut cols = vec!["op".to_string(), "method".to_string()];
    cols.extend(keys.iter().map(|k| format!("{k} main kernel")));
    for k in &keys {
        cols.extend([format!(">{k} calls"), format!(">{k} kernels"), format!(">{k} time")]);
    }
    let mut t = Table::new(&cols.iter().map(String::as_str).collect::<Vec<_>>());
    for r in &c.op_mapping {
        let mut row = vec![
            r.op.clone(),
            serde_json::to_value(r.method).map(|v| v.as_str().unwrap_or("").to_string()).unwrap_or_default(),
        ];
        row.extend(keys.iter().map(|k| top(&r.sides[*k].stats)));
        for k in &keys {
            let s: &OpSide = &r.sides[*k];
            row.extend([group_digits(s.calls), group_digits(s.stats.count), format_duration_us(s.stats.time_us)]);
        }
        t.row(row);
    }
    out += &format!("\nKernel mapping ({} rows; --json lists every kernel)\n{}", c.op_mapping.len(), t.to_text());

    if c.fusion_differences.is_empty() {
        out += "\nFusion differences: none found\n";
    } else {
        let mut cols = vec!["fused on", "fused kernel", "components", "other side runs", ">count"];
        let time_cols: Vec<String> = keys.iter().map(|k| format!(">{k} time")).collect();
        cols.extend(time_cols.iter().map(String::as_str));
        cols.extend([">confidence", "evidence"]);
        let mut t = Table::new(&cols);
        for d in &c.fusion_differences {
            let mut row = vec![
                d.fused_platform.clone(),
                short(&d.fused_kernel),
                view::component_list(&d.components),
                d.unfused_kernels.iter().map(|n| short(n)).collect::<Vec<_>>().join(" ; "),
                group_digits(d.count),
            ];
            row.extend(keys.iter().map(|k| format_duration_us(d.time_us[*k])));
            row.extend([format!("{:.2}", d.confidence), d.evidence.clone()]);
            t.row(row);
        }
        out += &format!("\nFusion differences\n{}", t.to_text());
    }
    for a in &c.layer_alignment {
        out += &alignment_text(a, &keys);
    }
    out
}

/// One pair of phases' layers side by side, one row per group of kernels.
fn alignment_text(a: &LayerAlignment, keys: &[&str]) -> String {
    let per = |m: &std::collections::BTreeMap<String, usize>| {
        keys.iter().map(|k| m.get(*k).copied().unwrap_or(0).to_string()).collect::<Vec<_>>().join(" vs ")
    };
    let label = |k: &str| format!("{k} {}", a.labels.get(k).map(String::as_str).unwrap_or(""));
    let times = keys
        .iter()
        .map(|k| format_duration_us(a.time_per_layer_us.get(*k).copied().unwrap_or(0.0)))
        .collect::<Vec<_>>()
        .join(" vs ");
    let out = format!(
        "\nLayer alignment: {} ({} layers per step, {} kernels per layer, {times} per layer{})\n",
        keys.iter().map(|k| label(k)).collect::<Vec<_>>().join(" vs "),
        per(&a.layers_per_step),
        per(&a.kernels_per_layer),
        if a.rotation > 0 {
            format!("; {}'s layer read from its kernel {}", keys[1], a.rotation)
        } else {
            String::new()
        }
    );
    let mut cols = vec!["category".to_string()];
    for k in keys {
        cols.extend([format!("{k} kernels"), format!(">{k} time")]);
    }
    // Where the layers agree kernel for kernel, a column of blanks says nothing.
    let differs = a.rows.iter().any(|r| r.difference.is_some());
    if differs {
        cols.push("difference".to_string());
    }
    let mut t = Table::new(&cols.iter().map(String::as_str).collect::<Vec<_>>());
    for r in &a.rows {
        let mut row = vec![r.category.id().to_string()];
        for k in keys {
            match r.sides.get(*k).and_then(Option::as_ref) {
                Some(side) => row.extend([
                    side.kernels.iter().map(|n| short_to(n, ROW_NAME_WIDTH)).collect::<Vec<_>>().join(" + "),
                    format_duration_us(side.time_us),
                ]),
                None => row.extend(["—".to_string(), String::new()]),
            }
        }
        if differs {
            row.push(r.difference.clone().unwrap_or_default());
        }
        t.row(row);
    }
    out + &t.to_text()
}
