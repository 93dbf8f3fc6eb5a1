//! The one-file review report: what the page shows of a trace or a pair (the overview first,
//! then the fusion, kernels, time and layers views with their charts and main tables) as one
//! self-contained HTML file, for a design review. It opens offline in any browser with scripts
//! disabled: the CSS and SVG are inline, there is no script, and its Content-Security-Policy
//! allows none. Every name in it comes from a stranger's trace, so every text is escaped (as
//! the charts escape theirs: `&`, `<`, `>`, quotes, and characters XML forbids); the
//! SVG charts are the page's own, whose text the chart code escapes.
//!
//! The page's "Export report" button and `fusionscope report` write the same file from the
//! same analyses.

use analysis::compare::Comparison;
use analysis::findings::{busy_lines, Overview};
use analysis::pipeline::TraceTime;
use analysis::summary::TraceSummary;
use analysis::time::gap::Gap;
use analysis::trace_fusion::TraceFusion;
use draw::chart::escape_xml;
use table::DataTable;
use units::{format_duration_us, group_digits};
use view::findings::evidence_label;
use view::fusion::{fusion_groups_table, fusion_headline, fusion_total_chart, opportunities_table};
use view::layers::{alignment_table, layer_table, phase_table, step_strip};
use view::time::{gap_table, op_roofline, op_table_view, timeline_chart, timeline_table, RooflineSide};
use view::{category_chart, comparison_chart, comparison_tables, platform_line, side_label, summary_tables};

/// Rows a table of the report shows; the rest are counted under it (the JSON export has every
/// row): a review reads the top of each table, and a printout stays a few pages.
pub const REPORT_ROWS: usize = 40;

/// The report's stylesheet: light, readable, and a print layout (each view on its own page,
/// tables that break between rows).
const STYLE: &str = "
body { font: 14px/1.45 system-ui, sans-serif; color: #1f2328; max-width: 1200px; margin: 24px auto; padding: 0 16px; }
h1 { font-size: 1.4rem; } h2 { font-size: 1.15rem; border-bottom: 1px solid #d0d7de; padding-bottom: 4px; margin-top: 32px; }
h3 { font-size: 1rem; margin: 20px 0 6px; }
.overview { border: 1px solid #d0d7de; border-radius: 8px; padding: 12px 16px; }
.verdict { font-size: 1.1rem; font-weight: 600; margin: 0 0 4px; }
.busy, .note, .more { color: #57606a; margin: 2px 0; }
.findings li { margin: 4px 0; }
.time { font-weight: 600; font-variant-numeric: tabular-nums; margin-right: 6px; }
.evidence { color: #57606a; font-size: 0.85rem; }
.table-box { overflow-x: auto; }
table { border-collapse: collapse; font-size: 12px; }
th, td { border-bottom: 1px solid #eaeef2; padding: 3px 8px; text-align: left; vertical-align: top; }
th { color: #57606a; font-weight: 600; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
figure { margin: 12px 0; max-width: 100%; overflow-x: auto; }
figure svg { max-width: 100%; height: auto; }
@media print {
  body { margin: 0; max-width: none; font-size: 11px; }
  section.view { break-before: page; }
  tr { break-inside: avoid; }
  .table-box, figure { overflow: visible; }
}
";

/// One view of the report: its lines, charts (SVG) and tables.
struct View {
    id: &'static str,
    title: &'static str,
    lines: Vec<String>,
    figures: Vec<String>,
    tables: Vec<DataTable>,
}

impl View {
    fn new(id: &'static str, title: &'static str) -> Self {
        View { id, title, lines: Vec::new(), figures: Vec::new(), tables: Vec::new() }
    }

    fn is_empty(&self) -> bool {
        self.lines.is_empty() && self.figures.is_empty() && self.tables.is_empty()
    }
}

/// A table as HTML: its first [`REPORT_ROWS`] rows, numbers right-aligned, each cell's exact
/// value (a full kernel name) as its tooltip where the cell shows it shortened.
fn table_html(t: &DataTable) -> String {
    let mut out = format!("<h3>{}</h3>\n<div class=\"table-box\"><table>\n<thead><tr>", escape_xml(&t.title));
    for c in &t.columns {
        let class = if c.numeric { " class=\"num\"" } else { "" };
        out += &format!("<th{class}>{}</th>", escape_xml(&c.header));
    }
    out += "</tr></thead>\n<tbody>\n";
    for row in t.rows.iter().take(REPORT_ROWS) {
        out += "<tr>";
        for (cell, col) in row.iter().zip(&t.columns) {
            let class = if col.numeric { " class=\"num\"" } else { "" };
            let title = if !col.numeric && cell.exact != cell.text {
                format!(" title=\"{}\"", escape_xml(&cell.exact))
            } else {
                String::new()
            };
            out += &format!("<td{class}{title}>{}</td>", escape_xml(&cell.text));
        }
        out += "</tr>\n";
    }
    out += "</tbody></table></div>\n";
    if t.rows.len() > REPORT_ROWS {
        let more = (t.rows.len() - REPORT_ROWS) as u64;
        out += &format!("<p class=\"more\">{} more rows in the JSON export.</p>\n", group_digits(more));
    }
    out
}

fn overview_html(o: &Overview) -> String {
    let mut out = String::from("<section class=\"overview\" aria-label=\"Overview\">\n");
    out += &format!("<p class=\"verdict\" data-testid=\"verdict\">{}</p>\n", escape_xml(&o.verdict.text));
    for l in busy_lines(&o.verdict) {
        out += &format!("<p class=\"busy\">{}</p>\n", escape_xml(&l));
    }
    if !o.findings.is_empty() {
        out += "<ol class=\"findings\">\n";
        for f in &o.findings {
            out += &format!(
                "<li data-testid=\"finding\"><span class=\"time\">{}</span><span class=\"finding-text\">{}</span> <span class=\"evidence\">({})</span></li>\n",
                escape_xml(&format_duration_us(f.time_us)),
                escape_xml(&f.text),
                escape_xml(evidence_label(f.evidence))
            );
        }
        out += "</ol>\n";
    }
    out + "</section>\n"
}

fn view_html(v: &View) -> String {
    let mut out = format!("<section class=\"view\" id=\"{}\">\n<h2>{}</h2>\n", v.id, escape_xml(v.title));
    for l in &v.lines {
        out += &format!("<p class=\"note\">{}</p>\n", escape_xml(l));
    }
    for svg in &v.figures {
        // The page's own charts: their text is escaped by the chart code.
        out += &format!("<figure>{svg}</figure>\n");
    }
    for t in &v.tables {
        out += &table_html(t);
    }
    out + "</section>\n"
}

/// The whole file: head (charset, CSP, title, style), title, overview, the views that have
/// something to show.
fn document(title: &str, platforms: &[String], overview: &Overview, views: &[View]) -> String {
    let mut out = String::from("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    out += "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\">\n";
    out += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
    out += &format!(
        "<title>{} — fusionscope report</title>\n<style>{STYLE}</style>\n</head>\n<body>\n",
        escape_xml(title)
    );
    out += &format!("<h1>{}</h1>\n", escape_xml(title));
    for p in platforms {
        out += &format!("<p class=\"note\">{}</p>\n", escape_xml(p));
    }
    out += &overview_html(overview);
    for v in views.iter().filter(|v| !v.is_empty()) {
        out += &view_html(v);
    }
    out + "<p class=\"note\">Made by fusionscope from the trace files named above; no data left the machine it ran on.</p>\n</body>\n</html>\n"
}

/// A fusion analysis's lines, chart and tables into `v` (`key` names a pair's side).
fn add_fusion(v: &mut View, key: &str, f: &TraceFusion) {
    let prefix = if key.is_empty() { String::new() } else { format!("{key}: ") };
    v.lines.push(format!("{prefix}Fusion: {}", fusion_headline(f)));
    let (groups, opportunities) = if key.is_empty() {
        ("Kernels as fusion groups".to_string(), "Fusion left on the table".to_string())
    } else {
        (format!("{key}: kernels as fusion groups"), format!("{key}: fusion left on the table"))
    };
    v.tables.push(fusion_groups_table(f, "fusion-groups", &groups));
    v.tables.push(opportunities_table(f, "opportunities", &opportunities));
}

/// The report of one trace: its overview, then fusion, kernels, where the time goes, layers.
pub fn trace_report(file: &str, summary: &TraceSummary, time: Option<&TraceTime>, overview: &Overview) -> String {
    let mut fusion = View::new("fusion", "Fusion");
    let mut kernels = View::new("kernels", "Kernels & mapping");
    let mut when = View::new("time", "Where the time goes");
    let mut layers = View::new("layers", "Layers");
    kernels.figures.push(category_chart(summary));
    kernels.tables.extend(summary_tables(summary));
    if let Some(t) = time {
        if let Some(f) = &t.fusion {
            fusion.figures.push(fusion_total_chart(&[("", f)]).to_svg());
            add_fusion(&mut fusion, "", f);
        }
        when.figures.push(timeline_chart(t));
        if let Some(plot) = op_roofline(&[RooflineSide { label: "ops", time: t, color: "" }]) {
            let chip = t.chip.as_ref().map_or("", |c| c.name.as_str());
            when.figures.push(plot.to_svg(&format!("Ops on the roofline of {chip}")));
        }
        when.tables.push(timeline_table(t));
        if let Some(w) = &t.waits {
            when.tables.push(view::waits::waits_table(w));
        }
        if let Some(l) = &t.launch_cost {
            when.tables.push(view::launch_cost::launch_cost_table(l));
        }
        if !t.critical_path.is_empty() {
            when.tables.push(view::critical_path::critical_path_table(&t.critical_path, view::time::processor(t)));
        }
        if let Some(svg) = view::critical_path::path_svg(&t.critical_path, view::time::processor(t)) {
            when.figures.push(svg);
        }
        when.tables.push(op_table_view(t));
    }
    if let Some(st) = summary.structure.as_deref() {
        layers.figures.push(step_strip(st));
        layers.tables.extend([phase_table(st), layer_table(st)]);
    }
    let platforms: Vec<String> = summary.platforms.iter().map(platform_line).collect();
    document(&format!("Trace {file}"), &platforms, overview, &[fusion, kernels, when, layers])
}

/// What a pair's report has of each side: the two time reports, or (from a share link) only
/// their fusion analyses, in the comparison's order.
#[derive(Clone, Copy)]
pub enum PairSides<'a> {
    Reports([&'a TraceTime; 2]),
    Fusion([&'a TraceFusion; 2]),
    None,
}

/// The report of a pair: its overview, then fusion, kernels and mapping, where the time goes,
/// layers.
pub fn pair_report(
    files: (&str, &str),
    c: &Comparison,
    gap: Option<&Gap>,
    sides: PairSides<'_>,
    overview: &Overview,
) -> String {
    let keys: Vec<&str> = c.platforms.iter().map(|p| p.key.as_str()).collect();
    let [k0, k1] = [keys.first().copied().unwrap_or("a"), keys.get(1).copied().unwrap_or("b")];
    let mut fusion = View::new("fusion", "Fusion");
    let mut kernels = View::new("kernels", "Kernels & mapping");
    let mut when = View::new("time", "Where the time goes");
    let mut layers = View::new("layers", "Layers");
    let fusions = match sides {
        PairSides::Reports([t0, t1]) => t0.fusion.as_ref().zip(t1.fusion.as_ref()),
        PairSides::Fusion([f0, f1]) => Some((f0, f1)),
        PairSides::None => None,
    };
    if let Some((f0, f1)) = fusions {
        fusion.figures.push(fusion_total_chart(&[(k0, f0), (k1, f1)]).to_svg());
        add_fusion(&mut fusion, k0, f0);
        add_fusion(&mut fusion, k1, f1);
    }
    let names = analysis::findings::pair_side_names(c);
    if let Some(svg) = c
        .layer_alignment
        .first()
        .and_then(|a| view::aligned_layer::aligned_layer_svg(a, [k0, k1], [names[0].as_str(), names[1].as_str()]))
    {
        fusion.figures.push(svg);
    }
    kernels.figures.push(comparison_chart(c));
    for t in comparison_tables(c) {
        match t.id {
            "fusion-differences" => fusion.tables.insert(0, t),
            _ => kernels.tables.push(t),
        }
    }
    if let Some(g) = gap {
        when.tables.push(gap_table(g, [k0, k1]));
    }
    if let PairSides::Reports([t0, t1]) = sides {
        let roof = [
            RooflineSide { label: k0, time: t0, color: draw::roofline::BLUE },
            RooflineSide { label: k1, time: t1, color: draw::roofline::ORANGE },
        ];
        if let Some(plot) = op_roofline(&roof) {
            when.figures.push(plot.to_svg("Ops of both traces on their chips' rooflines"));
        }
    }
    if !c.layer_alignment.is_empty() {
        layers.tables.push(alignment_table(&c.layer_alignment, [k0, k1]));
    }
    let title = format!("{} compared", c.platforms.iter().map(side_label).collect::<Vec<_>>().join(" vs "));
    let platforms: Vec<String> = c
        .platforms
        .iter()
        .zip([files.0, files.1])
        .map(|(p, f)| format!("{}: {}: {}", side_label(p), p.file.as_deref().unwrap_or(f), platform_line(p)))
        .collect();
    document(&title, &platforms, overview, &[fusion, kernels, when, layers])
}

#[cfg(test)]
mod tests;
