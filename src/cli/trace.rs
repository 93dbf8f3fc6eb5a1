//! `fusionscope trace FILE [--json]` and `fusionscope compare FILE_A FILE_B [--json]`:
//! Kineto trace summary and two-trace comparison (docs/trace-analysis.md).

use std::io::Read;
use std::path::{Path, PathBuf};

use fusionscope::hardware::DetectedChip;
use fusionscope::table::Table;
use fusionscope::trace::compare::{swapped, Comparison, OpSide};
use fusionscope::trace::gap::gap;
use fusionscope::trace::summary::{
    summarize_classified, ClassifiedTrace, KernelStat, PlatformEntry, SideStats, TraceSummary,
};
use fusionscope::trace::time_report::{recorded_cost, time_report, CompareJson, TraceJson};
use fusionscope::trace::time_view::{gap_text, time_text};
use fusionscope::trace::{classify, compare, Input, Trace, TraceReader};
use fusionscope::units::{format_duration_us, format_pct, group_digits};

use super::io::{load_chip, print, print_json, CliResult, Output};

#[derive(clap::Args)]
pub struct TraceArgs {
    /// Kineto trace (.json or .json.gz; gzip is recognised by its content)
    pub file: PathBuf,
    /// Chip for the roofline figures: a preset name or a chip JSON file (default: detected
    /// from the trace's device name)
    #[arg(long, value_name = "NAME|FILE")]
    pub chip: Option<String>,
    #[command(flatten)]
    pub output: Output,
}

#[derive(clap::Args)]
pub struct CompareArgs {
    /// First Kineto trace (AMD or NVIDIA, either order)
    pub file_a: PathBuf,
    /// Second Kineto trace
    pub file_b: PathBuf,
    /// Chip of the first trace (preset name or chip JSON file; default: detected)
    #[arg(long, value_name = "NAME|FILE")]
    pub chip_a: Option<String>,
    /// Chip of the second trace (preset name or chip JSON file; default: detected)
    #[arg(long, value_name = "NAME|FILE")]
    pub chip_b: Option<String>,
    #[command(flatten)]
    pub output: Output,
}

/// Longest kernel name shown in a table cell (the JSON has them whole).
const NAME_WIDTH: usize = 70;
/// Kernels listed in the `trace` table of longest kernels.
const TOP_KERNELS: usize = 15;

pub fn run_trace(args: TraceArgs) -> CliResult {
    let chip = given_chip(args.chip.as_deref())?;
    let trace = load(&args.file)?;
    let side = ClassifiedTrace::new(&trace, &classify);
    let summary = summarize_classified(&side, Some(&file_name(&args.file)));
    let time = time_report(&side, chip, &recorded_cost);
    if args.output.json {
        print_json(&TraceJson { summary: &summary, time: &time })
    } else {
        print(&(trace_text(&summary) + &time_text(&time)))
    }
}

pub fn run_compare(args: CompareArgs) -> CliResult {
    let chips = [given_chip(args.chip_a.as_deref())?, given_chip(args.chip_b.as_deref())?];
    let a = load(&args.file_a)?;
    let b = load(&args.file_b)?;
    let (na, nb) = (file_name(&args.file_a), file_name(&args.file_b));
    let c = compare(Input { trace: &a, file: Some(&na) }, Input { trace: &b, file: Some(&nb) }, &classify);
    let [ca, cb] = chips;
    let sides = [(&a, ca), (&b, cb)].map(|(t, chip)| {
        let side = ClassifiedTrace::new(t, &classify);
        (side.platform.vendor, time_report(&side, chip, &recorded_cost))
    });
    // The comparison puts AMD first: follow its order.
    let [first, second] = if swapped(sides[0].0, sides[1].0) { [1, 0] } else { [0, 1] };
    let g = gap((&c.platforms[0].key, &sides[first].1.op_table()), (&c.platforms[1].key, &sides[second].1.op_table()));
    if args.output.json {
        print_json(&CompareJson { comparison: &c, gap: &g })
    } else {
        print(&(gap_text([&c.platforms[0].key, &c.platforms[1].key], &g) + "\n" + &compare_text(&c)))
    }
}

/// The chip the user named, as the report states its origin.
fn given_chip(arg: Option<&str>) -> Result<Option<DetectedChip>, Box<dyn std::error::Error>> {
    arg.map(|a| -> Result<DetectedChip, Box<dyn std::error::Error>> {
        let chip = load_chip(a)?;
        let from = if Path::new(a).exists() { format!("chip file {a}") } else { format!("--chip {a}") };
        Ok(DetectedChip { chip, detected_from: from })
    })
    .transpose()
}

/// Streams the file through the reader in 1 MiB slices (no whole-file copy in memory).
fn load(path: &Path) -> Result<Trace, Box<dyn std::error::Error>> {
    let mut file = std::fs::File::open(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let mut reader = TraceReader::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = file.read(&mut buf).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        if n == 0 {
            break;
        }
        reader.feed(&buf[..n]).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    Ok(reader.finish().map_err(|e| format!("{}: {e}", path.display()))?)
}

fn file_name(path: &Path) -> String {
    path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| path.display().to_string())
}

fn short(name: &str) -> String {
    fusionscope::trace::classify::name::short_name(name, NAME_WIDTH)
}

fn platform_line(p: &PlatformEntry) -> String {
    let file = p.file.as_deref().map(|f| format!("{f}: ")).unwrap_or_default();
    format!("{file}{}\n", fusionscope::trace::view::platform_line(p))
}

fn top(s: &SideStats) -> String {
    s.kernels.first().map(|k| short(&k.name)).unwrap_or_default()
}

fn components(k: &KernelStat) -> String {
    fusionscope::trace::view::component_list(&k.components)
}

fn trace_text(s: &TraceSummary) -> String {
    let mut out = platform_line(&s.platforms[0]);
    let mut t = Table::new(&["category", ">kernels", ">total", ">mean", ">share", ">names", "longest kernel"]);
    for r in &s.categories {
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
    out += &format!("\nKernels by category\n{}", t.to_text());
    let mut all: Vec<&KernelStat> = s.categories.iter().flat_map(|r| &r.trace.kernels).collect();
    all.sort_by(|a, b| b.time_us.total_cmp(&a.time_us));
    let gpu = s.platforms[0].gpu_time_us;
    let mut k = Table::new(&["kernel", "category", ">count", ">total", ">share"]);
    for stat in all.iter().take(TOP_KERNELS) {
        let share = if gpu > 0.0 { 100.0 * stat.time_us / gpu } else { 0.0 };
        k.row([
            short(&stat.name),
            stat.category.id().to_string(),
            group_digits(stat.count),
            format_duration_us(stat.time_us),
            format_pct(share),
        ]);
    }
    let shown = if all.len() > TOP_KERNELS {
        format!("top {TOP_KERNELS} of {}", all.len())
    } else {
        format!("all {}", all.len())
    };
    out += &format!("\nKernels by time ({shown}; --json lists every one)\n{}", k.to_text());
    if !s.fused_kernels.is_empty() {
        let mut f = Table::new(&["fused kernel", ">count", ">total", "components"]);
        for k in &s.fused_kernels {
            f.row([short(&k.name), group_digits(k.count), format_duration_us(k.time_us), components(k)]);
        }
        out += &format!("\nFused kernels\n{}", f.to_text());
    }
    out
}

fn ratio(r: Option<f64>) -> String {
    r.map(|r| format!("{r:.2}×")).unwrap_or_else(|| "—".to_string())
}

fn compare_text(c: &Comparison) -> String {
    let mut out = String::new();
    for p in &c.platforms {
        out += &format!("{:>6}  {}", p.key, platform_line(p));
    }
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
    out += &format!("\nCategories\n{}", t.to_text());

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
                fusionscope::trace::view::component_list(&d.components),
                d.unfused_kernels.iter().map(|n| short(n)).collect::<Vec<_>>().join(" ; "),
                group_digits(d.count),
            ];
            row.extend(keys.iter().map(|k| format_duration_us(d.time_us[*k])));
            row.extend([format!("{:.2}", d.confidence), d.evidence.clone()]);
            t.row(row);
        }
        out += &format!("\nFusion differences\n{}", t.to_text());
    }
    out
}
