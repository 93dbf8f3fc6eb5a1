//! Trace results as tables and charts for the page and its exports: the single-trace summary
//! ([`summary_tables`]) and the comparison ([`comparison_tables`]) as [`DataTable`]s, whose
//! cells keep a short text to show, the exact value for CSV and a key to sort by; the
//! category breakdown as an SVG chart ([`category_chart`]); the Markdown summaries.
//!
//! Kept in the core (no browser code) so that what the page shows and exports is tested natively.
//! Where the time goes is drawn by [`time`], the Layers view of serving traces by [`layers`], the
//! kernels as fusion groups by [`fusion`](mod@fusion); the
//! ranks of one distributed job by [`ranks`]; the overview's verdict and findings by
//! [`findings`](mod@findings).

pub mod aligned_layer;
pub mod critical_path;
pub mod findings;
pub mod fusion;
pub mod fusion_dag;
pub mod fusion_pair;
pub mod launch_cost;
pub mod layers;
pub mod provenance;
pub mod ranks;
pub mod rules;
pub mod time;
pub mod waits;

use draw::chart::{escape_xml, svg_start};
use table::{markdown_text, Cell, DataTable};
use units::{format_duration_us, format_pct, group_digits, positive_zero};

use analysis::compare::{Comparison, Method};
use analysis::findings::Overview;
use analysis::summary::{KernelStat, PlatformEntry, SideStats, TraceSummary};
use analysis::Category;
use trace::Processor;

/// Kernel names are shortened to this many characters in cells (the full name is the
/// cell's `exact` value: tooltip and CSV).
pub const NAME_WIDTH: usize = 60;

/// A kernel name as a cell: a library kernel read out, any other shortened
/// ([`classify::family::table_name`]); whole in `exact` (tooltip, CSV, filter).
// Called from every table: one copy of the name reading, not one inlined into each.
#[inline(never)]
pub fn kernel_cell(name: &str) -> Cell {
    Cell { text: classify::family::table_name(name, NAME_WIDTH), exact: name.to_string(), sort: 0.0 }
}

/// The platform in one line: vendor, devices, kernels, GPU time (kernels and copies, as every
/// "GPU time" of the output), the kernels' own time when copies ran, the copies.
pub fn platform_line(p: &PlatformEntry) -> String {
    let how = if p.vendor_inferred { " (inferred from kernel names)" } else { "" };
    let processor = p.processor();
    // A CPU run's kernels are compiled C++ on the CPU: no vendor to name.
    let on = match processor {
        Processor::Cpu => "CPU".to_string(),
        Processor::Gpu => format!(
            "{}{how} on {}",
            p.vendor,
            if p.devices.is_empty() { "no device".to_string() } else { p.devices.join(", ") }
        ),
    };
    let mut line = format!(
        "{on}: {}, {processor} time {}",
        units::plural(p.kernels as u64, "kernel", "kernels"),
        format_duration_us(p.gpu_time_us)
    );
    if p.memcpy.count + p.memset.count > 0 && p.kernel_time_us > 0.0 {
        line += &format!(" (kernels {}, copies the rest)", format_duration_us(p.kernel_time_us));
    }
    for (what, t) in [("memcpy", &p.memcpy), ("memset", &p.memset)] {
        if t.count > 0 {
            line += &format!(
                "; {what} {} ({}, {})",
                group_digits(t.count),
                format_duration_us(t.time_us),
                units::format_bytes(t.bytes)
            );
        }
    }
    line
}

/// How a side is named to people: its vendor (or file, for same-vendor pairs) and key.
pub fn side_label(p: &PlatformEntry) -> String {
    match (p.key.as_str(), &p.file) {
        ("a" | "b", Some(f)) => format!("{} ({f})", p.key),
        // A CPU run has no GPU vendor.
        _ if p.processor() == Processor::Cpu => Processor::Cpu.to_string(),
        _ => p.vendor.to_string(),
    }
}

/// A fused kernel's components, as `norm + elementwise`.
pub fn component_list(k: &[Category]) -> String {
    k.iter().map(|c| c.id()).collect::<Vec<_>>().join(" + ")
}

fn longest(s: &SideStats) -> Cell {
    s.kernels.first().map(|k| kernel_cell(&k.name)).unwrap_or_else(|| Cell::text(""))
}

/// The single-trace tables: categories, every kernel (longest total first), fused kernels.
pub fn summary_tables(s: &TraceSummary) -> Vec<DataTable> {
    let mut cats = DataTable::new(
        "categories",
        "Kernels by category",
        &[
            ("category", false),
            ("kernels", true),
            ("total", true),
            ("mean", true),
            ("share", true),
            ("names", true),
            ("longest kernel", false),
        ],
    );
    for r in &s.categories {
        let st = &r.trace;
        cats.rows.push(vec![
            Cell::text(r.category.id()),
            Cell::count(st.count),
            Cell::micros(st.time_us),
            Cell::micros(st.mean_us),
            Cell::pct(st.share_pct),
            Cell::count(st.kernels.len() as u64),
            longest(st),
        ]);
    }
    // Shares of kernel time, as the category table's (a share link made before kernel time was
    // its own figure has none: its GPU time was kernels alone).
    let gpu = s
        .platforms
        .first()
        .map(|p| if p.kernel_time_us > 0.0 { p.kernel_time_us } else { p.gpu_time_us })
        .unwrap_or(0.0);
    let mut all: Vec<&KernelStat> = s.categories.iter().flat_map(|r| &r.trace.kernels).collect();
    all.sort_by(|a, b| b.time_us.total_cmp(&a.time_us));
    let legacy_inductor = all.iter().any(|k| classify::inductor::is_legacy_name(&k.name));
    let mut kernels = DataTable::new(
        "kernels",
        format!("Kernels by time ({} distinct)", group_digits(all.len() as u64)),
        &[("kernel", false), ("category", false), ("count", true), ("total", true), ("share", true)],
    );
    for k in all {
        let share = if gpu > 0.0 { 100.0 * k.time_us / gpu } else { 0.0 };
        kernels.rows.push(vec![
            kernel_cell(&k.name),
            Cell::text(k.category.id()),
            Cell::count(k.count),
            Cell::micros(k.time_us),
            Cell::pct(share),
        ]);
    }
    let mut fused = DataTable::new(
        "fused",
        fused_title(s.fused_kernels.len(), legacy_inductor),
        &[("fused kernel", false), ("count", true), ("total", true), ("components", false)],
    );
    for k in &s.fused_kernels {
        fused.rows.push(vec![
            kernel_cell(&k.name),
            Cell::count(k.count),
            Cell::micros(k.time_us),
            Cell::text(component_list(&k.components)),
        ]);
    }
    vec![cats, kernels, fused]
}

/// The fused kernels' title: their count, and, where the trace has old Inductor kernels, that
/// those fuse ops their names do not list (so "none" is not "no fusion").
fn fused_title(fused: usize, legacy_inductor: bool) -> String {
    if legacy_inductor {
        format!("Fused kernels ({fused}; the old Inductor kernels, triton__0d1d2d…, fuse ops their names do not list)")
    } else {
        format!("Fused kernels ({fused})")
    }
}

/// The comparison tables: categories per side, the kernel mapping, the fusion differences.
pub fn comparison_tables(c: &Comparison) -> Vec<DataTable> {
    let keys: Vec<&str> = c.platforms.iter().map(|p| p.key.as_str()).collect();
    let mut cols = vec!["category".to_string()];
    for k in &keys {
        cols.extend([format!("{k} kernels"), format!("{k} time"), format!("{k} mean"), format!("{k} share")]);
    }
    cols.push(format!("ratio {}", c.time_ratio));
    let spec: Vec<(&str, bool)> = cols.iter().enumerate().map(|(i, h)| (h.as_str(), i > 0)).collect();
    let mut cats = DataTable::new("categories", "Categories", &spec);
    for r in &c.categories {
        let mut row = vec![Cell::text(r.category.id())];
        for k in &keys {
            let s = r.sides.get(*k);
            row.extend([
                Cell::count(s.map_or(0, |s| s.count)),
                Cell::micros(s.map_or(0.0, |s| s.time_us)),
                Cell::micros(s.map_or(0.0, |s| s.mean_us)),
                Cell::pct(s.map_or(0.0, |s| s.share_pct)),
            ]);
        }
        row.push(Cell::ratio(r.time_ratio));
        cats.rows.push(row);
    }

    // The two sides' main kernels stand next to each other, right after the op: that pair
    // (`Cijk_…` vs `sm90_xmma_gemm_…`) is what a reader compares first; the figures follow.
    let mut cols = vec![("op".to_string(), false), ("method".to_string(), false)];
    cols.extend(keys.iter().map(|k| (format!("{k} main kernel"), false)));
    for k in &keys {
        cols.extend([(format!("{k} calls"), true), (format!("{k} kernels"), true), (format!("{k} time"), true)]);
    }
    let spec: Vec<(&str, bool)> = cols.iter().map(|(h, n)| (h.as_str(), *n)).collect();
    // Too wide for its panel, the mapping hides calls, kernel counts and the method first.
    let mut mapping =
        DataTable::new("mapping", format!("Kernel mapping ({} rows)", group_digits(c.op_mapping.len() as u64)), &spec)
            .with_details(|h| h == "method" || h.ends_with(" calls") || h.ends_with(" kernels"));
    for r in &c.op_mapping {
        let method = match r.method {
            Method::OpAnchored => "op-anchored",
            Method::Sequence => "sequence",
        };
        let mut row = vec![Cell::text(r.op.clone()), Cell::text(method)];
        row.extend(keys.iter().map(|k| r.sides.get(*k).map_or_else(|| Cell::text(""), |s| longest(&s.stats))));
        for k in &keys {
            match r.sides.get(*k) {
                Some(s) => {
                    row.extend([Cell::count(s.calls), Cell::count(s.stats.count), Cell::micros(s.stats.time_us)])
                }
                None => row.extend([Cell::count(0), Cell::count(0), Cell::micros(0.0)]),
            }
        }
        mapping.rows.push(row);
    }

    let mut cols = vec![
        ("fused on".to_string(), false),
        ("fused kernel".to_string(), false),
        ("components".to_string(), false),
        ("other side runs".to_string(), false),
        ("count".to_string(), true),
    ];
    cols.extend(keys.iter().map(|k| (format!("{k} time"), true)));
    cols.extend([("confidence".to_string(), true), ("evidence".to_string(), false)]);
    let spec: Vec<(&str, bool)> = cols.iter().map(|(h, n)| (h.as_str(), *n)).collect();
    let mut diffs =
        DataTable::new("fusion-differences", format!("Fusion differences ({})", c.fusion_differences.len()), &spec);
    for d in &c.fusion_differences {
        let others = d
            .unfused_kernels
            .iter()
            .map(|n| classify::family::table_name(n, NAME_WIDTH))
            .collect::<Vec<_>>()
            .join(" ; ");
        let mut row = vec![
            Cell::text(d.fused_platform.clone()),
            kernel_cell(&d.fused_kernel),
            Cell::text(component_list(&d.components)),
            Cell { text: others, exact: d.unfused_kernels.join(" ; "), sort: 0.0 },
            Cell::count(d.count),
        ];
        row.extend(keys.iter().map(|k| Cell::micros(d.time_us.get(*k).copied().unwrap_or(0.0))));
        row.extend([
            Cell { text: format!("{:.2}", d.confidence), exact: format!("{}", d.confidence), sort: d.confidence },
            Cell::text(d.evidence.clone()),
        ]);
        diffs.rows.push(row);
    }
    vec![cats, mapping, diffs]
}

/// Colours of the chart's series (first side, second side).
const SERIES_COLORS: [&str; 2] = ["#2f81f7", "#d9822b"];

const CHART_W: u32 = 760;
const CHART_LABEL_W: u32 = 130;
const CHART_VALUE_W: u32 = 80;
const CHART_BAR_H: u32 = 14;
const CHART_TOP: u32 = 50;

/// One row of the category chart: a category and its share of each side's GPU time.
struct ShareRow {
    label: String,
    values: Vec<(f64, f64)>, // (share %, time µs)
}

/// Horizontal bars of each category's share of the kernels' time on `processor`, one bar per
/// side, as a standalone SVG document (what the page shows is what it exports).
fn share_chart(processor: Processor, series: &[String], rows: &[ShareRow]) -> String {
    let title = format!("Share of {processor} time by kernel category");
    let per_row = series.len().max(1) as u32 * (CHART_BAR_H + 3) + 6;
    let h = CHART_TOP + rows.len() as u32 * per_row;
    let mut s = svg_start(CHART_W, h, &title);
    let mut x = CHART_LABEL_W;
    for (i, name) in series.iter().enumerate() {
        s.push_str(&format!(
            "<rect x=\"{x}\" y=\"28\" width=\"12\" height=\"12\" fill=\"{}\"/>\
             <text x=\"{}\" y=\"38\" fill=\"currentColor\">{}</text>",
            SERIES_COLORS[i % SERIES_COLORS.len()],
            x + 16,
            escape_xml(name)
        ));
        x += 32 + 8 * name.chars().count() as u32;
    }
    let full = f64::from(CHART_W - CHART_LABEL_W - CHART_VALUE_W - 10);
    let mut y = CHART_TOP;
    for row in rows {
        let rows_h = row.values.len() as u32 * (CHART_BAR_H + 3) - 3;
        s.push_str(&format!(
            "<g><text x=\"{}\" y=\"{}\" text-anchor=\"end\" fill=\"currentColor\">{}</text>",
            CHART_LABEL_W - 8,
            y + rows_h / 2 + 4,
            escape_xml(&row.label)
        ));
        for (i, &(pct, us)) in row.values.iter().enumerate() {
            let (pct, us) = (positive_zero(pct), positive_zero(us));
            let w = if pct > 0.0 { (full * pct.min(100.0) / 100.0).max(1.0) } else { 0.0 };
            let name = escape_xml(series.get(i).map(String::as_str).unwrap_or(""));
            s.push_str(&format!(
                "<rect x=\"{CHART_LABEL_W}\" y=\"{y}\" width=\"{w:.1}\" height=\"{CHART_BAR_H}\" fill=\"{}\">\
                 <title>{name} {}: {} of {processor} time ({})</title></rect>\
                 <text x=\"{:.1}\" y=\"{}\" fill=\"currentColor\">{}</text>",
                SERIES_COLORS[i % SERIES_COLORS.len()],
                escape_xml(&row.label),
                format_pct(pct),
                format_duration_us(us),
                f64::from(CHART_LABEL_W) + w + 4.0,
                y + CHART_BAR_H - 3,
                format_pct(pct)
            ));
            y += CHART_BAR_H + 3;
        }
        y += 6;
        s.push_str("</g>");
    }
    s.push_str("</svg>");
    s
}

/// The category breakdown of one trace: each category's share of GPU time.
pub fn category_chart(s: &TraceSummary) -> String {
    let side = s.platforms.first().map(side_label).unwrap_or_default();
    let processor = s.platforms.first().map_or(Processor::Gpu, PlatformEntry::processor);
    let rows: Vec<ShareRow> = s
        .categories
        .iter()
        .map(|r| ShareRow { label: r.category.id().to_string(), values: vec![(r.trace.share_pct, r.trace.time_us)] })
        .collect();
    share_chart(processor, &[side], &rows)
}

/// The category breakdown of both sides of a comparison.
pub fn comparison_chart(c: &Comparison) -> String {
    let series: Vec<String> = c.platforms.iter().map(side_label).collect();
    let rows: Vec<ShareRow> = c
        .categories
        .iter()
        .map(|r| ShareRow {
            label: r.category.id().to_string(),
            values: c
                .platforms
                .iter()
                .map(|p| r.sides.get(&p.key).map_or((0.0, 0.0), |s| (s.share_pct, s.time_us)))
                .collect(),
        })
        .collect();
    share_chart(c.processor(), &series, &rows)
}

/// Markdown of a table list under a heading, for pasting into a review.
/// The heading and lines hold names from files: they are escaped ([`markdown_text`]).
fn markdown(heading: &str, lines: &[String], tables: &[DataTable]) -> String {
    let mut out = format!("# {}\n\n", markdown_text(heading));
    for l in lines {
        out += &format!("- {}\n", markdown_text(l));
    }
    for t in tables {
        out += &format!("\n## {}\n\n{}", t.title, t.shown_table().to_markdown());
    }
    out
}

/// The overview's verdict lines and its findings table, first in a Markdown export.
fn overview_parts(overview: Option<&Overview>) -> (Vec<String>, Vec<DataTable>) {
    match overview {
        Some(o) => (findings::verdict_lines(o), vec![findings::findings_table(o)]),
        None => (Vec::new(), Vec::new()),
    }
}

/// The single-trace summary as Markdown, its overview first.
pub fn summary_markdown(s: &TraceSummary, overview: Option<&Overview>) -> String {
    let file = s.platforms.first().and_then(|p| p.file.clone()).unwrap_or_else(|| "trace".to_string());
    let (mut lines, mut tables) = overview_parts(overview);
    lines.extend(s.platforms.iter().map(platform_line));
    tables.extend(summary_tables(s));
    markdown(&format!("Trace summary: {file}"), &lines, &tables)
}

/// The comparison as Markdown, its overview first.
pub fn comparison_markdown(c: &Comparison, overview: Option<&Overview>) -> String {
    let lines: Vec<String> = c
        .platforms
        .iter()
        .map(|p| {
            format!(
                "{}: {}{}",
                p.key,
                p.file.as_deref().map(|f| format!("{f}, ")).unwrap_or_default(),
                platform_line(p)
            )
        })
        .collect();
    let title = c.platforms.iter().map(side_label).collect::<Vec<_>>().join(" vs ");
    let (mut first, mut tables) = overview_parts(overview);
    first.extend(lines);
    tables.extend(comparison_tables(c));
    markdown(&format!("Trace comparison: {title}"), &first, &tables)
}

#[cfg(test)]
mod tests {
    use super::*;
    use analysis::summary::ClassifiedTrace;
    use analysis::{compare, summarize, Input};
    use formats::read_trace;
    use table::SortBy;

    fn load(rel: &str) -> trace::Trace {
        let path = format!("{}/tests/data/traces/{rel}", concat!(env!("CARGO_MANIFEST_DIR"), "/../.."));
        read_trace(&std::fs::read(&path).unwrap()).unwrap()
    }

    #[test]
    fn summary_tables_cover_every_kernel_with_full_names() {
        let t = load("amd/torch_compile_triton_mi300x.json.gz");
        let s = summarize(&ClassifiedTrace::new(&t), Some("torch_compile_triton_mi300x.json.gz"));
        let tables = summary_tables(&s);
        let kernels = &tables[1];
        let distinct: usize = s.categories.iter().map(|r| r.trace.kernels.len()).sum();
        assert_eq!(kernels.rows.len(), distinct);
        let counted: u64 = kernels.rows.iter().map(|r| r[2].sort as u64).sum();
        assert_eq!(counted as usize, s.platforms[0].kernels);
        // Sorted longest first, and full names kept for the tooltip and CSV.
        assert!(kernels.rows.windows(2).all(|w| w[0][3].sort >= w[1][3].sort));
        assert!(kernels.rows.iter().all(|r| r[0].text.chars().count() <= NAME_WIDTH));
        let fused = &tables[2];
        assert!(!fused.rows.is_empty(), "torch.compile trace has fused Triton kernels");
        assert!(fused.rows.iter().any(|r| r[0].exact.starts_with("triton_")));
        assert!(fused.rows.iter().all(|r| r[3].text.contains(" + ")));
        let csv = kernels.exact_table().to_csv();
        assert!(csv.starts_with("kernel,category,count,total (µs),share\n"), "{csv}");
        assert_eq!(fused.title, format!("Fused kernels ({})", fused.rows.len()));
    }

    #[test]
    fn old_inductor_names_are_not_read_as_no_fusion() {
        // TorchRec on PyTorch 2.0: 81 launches of `triton__0d1d2d…`, none naming its ops.
        let t = load("nvidia/hta_a100_compiled_rank0.json.gz");
        let s = summarize(&ClassifiedTrace::new(&t), None);
        let fused = &summary_tables(&s)[2];
        assert!(fused.rows.is_empty());
        assert_eq!(
            fused.title,
            "Fused kernels (0; the old Inductor kernels, triton__0d1d2d…, fuse ops their names do not list)"
        );
        assert!(classify::inductor::is_legacy_name("triton__0d1d2d3d4d5d6d7d8d9d10d11d12d13d14"));
        assert!(
            !classify::inductor::is_legacy_name("triton__")
                && !classify::inductor::is_legacy_name("triton_poi_fused_add_0")
        );
    }

    #[test]
    fn negative_zero_reads_as_zero() {
        assert_eq!(Cell::pct(-0.0).text, "0.00 %");
        assert_eq!(Cell::micros(-0.0).text, "0 µs");
        assert_eq!(Cell::pct(-1.5).text, "-1.50 %");
        let rows = [ShareRow { label: "gemm".into(), values: vec![(-0.0, -0.0)] }];
        assert!(!share_chart(Processor::Gpu, &["a".into()], &rows).contains("-0"));
    }

    #[test]
    fn view_filters_and_sorts_stably() {
        let t = load("amd/torch_compile_triton_mi300x.json.gz");
        let s = summarize(&ClassifiedTrace::new(&t), None);
        let kernels = &summary_tables(&s)[1];
        let all = kernels.view(None, "");
        assert_eq!(all, (0..kernels.rows.len()).collect::<Vec<_>>());
        let triton = kernels.view(None, "TRITON");
        assert!(!triton.is_empty() && triton.len() < all.len());
        assert!(triton.iter().all(|&i| kernels.rows[i][0].exact.to_lowercase().contains("triton")));
        let by_count = kernels.view(Some(SortBy { column: 2, descending: false }), "");
        assert!(by_count.windows(2).all(|w| kernels.rows[w[0]][2].sort <= kernels.rows[w[1]][2].sort));
        let by_name = kernels.view(Some(SortBy { column: 0, descending: true }), "");
        assert!(by_name.windows(2).all(|w| kernels.rows[w[0]][0].text >= kernels.rows[w[1]][0].text));
        assert_eq!(kernels.view(Some(SortBy { column: 99, descending: true }), "").len(), all.len());
    }

    #[test]
    fn comparison_tables_and_chart_name_both_vendors() {
        let n = load("nvidia/hf_bert-small_eager_h100.json.gz");
        let a = load("amd/hf_bert-small_eager_mi300x.json.gz");
        let c = compare(Input::new(&n, Some("n.json.gz")), Input::new(&a, Some("a.json.gz")));
        let tables = comparison_tables(&c);
        assert_eq!(tables[0].rows.len(), c.categories.len());
        assert_eq!(tables[0].columns[1].header, "amd kernels");
        assert_eq!(tables[1].rows.len(), c.op_mapping.len());
        assert!(tables[1].rows.iter().all(|r| r[1].text == "op-anchored" || r[1].text == "sequence"));
        assert_eq!(tables[2].rows.len(), c.fusion_differences.len());
        let total: u64 = tables[0].rows.iter().map(|r| r[1].sort as u64).sum();
        assert_eq!(total as usize, c.platforms[0].kernels);
        let svg = comparison_chart(&c);
        assert!(svg.starts_with("<svg") && svg.ends_with("</svg>"));
        assert!(svg.contains(">AMD<") && svg.contains(">NVIDIA<"), "{svg}");
        let md = comparison_markdown(&c, None);
        assert!(md.starts_with("# Trace comparison: AMD vs NVIDIA"), "{md}");
        assert!(md.contains("## Categories"));
    }

    #[test]
    fn category_chart_has_one_bar_per_category_and_escapes() {
        let t = load("amd/torch_compile_triton_mi300x.json.gz");
        let s = summarize(&ClassifiedTrace::new(&t), Some("a<b>.json"));
        let svg = category_chart(&s);
        assert_eq!(svg.matches("height=\"14\"").count(), s.categories.len());
        let cats = summary_tables(&s).remove(0);
        let width = cats.columns.len();
        let cut = cats.without_column("names").without_column("no such column");
        assert_eq!(cut.columns.len(), width - 1);
        assert!(cut.rows.iter().all(|r| r.len() == width - 1));
        let md = summary_markdown(&s, None);
        assert!(md.starts_with("# Trace summary: a\\<b\\>.json\n"), "{md}");
        assert!(md.contains("## Fused kernels"));
    }

    proptest::proptest! {
        /// Any filter and any column (even one that does not exist) give a subset of the rows,
        /// each once, every one containing the filter: never a panic.
        #[test]
        fn view_is_a_filtered_permutation(filter in "\\PC{0,12}", column in 0usize..12, descending: bool) {
            let t = load("amd/torch_compile_triton_mi300x.json.gz");
            let s = summarize(&ClassifiedTrace::new(&t), None);
            for table in summary_tables(&s) {
                let rows = table.view(Some(SortBy { column, descending }), &filter);
                let mut seen = rows.clone();
                seen.sort_unstable();
                seen.dedup();
                proptest::prop_assert_eq!(seen.len(), rows.len());
                proptest::prop_assert!(rows.len() <= table.rows.len());
                proptest::prop_assert_eq!(rows.len(), table.view(None, &filter).len());
            }
        }
    }
}
