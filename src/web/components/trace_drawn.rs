//! What the trace view draws, computed once per view: the title, the platform lines, the
//! charts (SVG from the core), the tables, the fusion lines and the group drawings of one trace
//! or of two compared.

use yew::prelude::*;

use analysis::compare::Comparison;
use analysis::pipeline::TraceTime;
use analysis::trace_fusion::dag::FusionDag;
use analysis::trace_fusion::TraceFusion;
use hardware::gpu_preset_names;
use page::ByAddress;
use page::TraceView;
use table::DataTable;
use trace::TraceFormat;
use view::fusion::{
    exec_trace_line, fusion_group_chart, fusion_groups_table, fusion_headline, fusion_total_chart, no_bytes_statement,
    op_times_table, opportunities_table, reprediction_line,
};
use view::layers::{alignment_table, layer_table, phase_table, step_strip};
use view::time::{
    capture_line, coverage_line, gap_headline, gap_table, no_roofline_statement, op_roofline, op_table_view,
    timeline_chart, timeline_table, unattributed_table, RooflineSide,
};
use view::{category_chart, comparison_chart, comparison_tables, platform_line, side_label, summary_tables};

/// One trace's fusion and the windows of its group drawing.
pub(super) type DagSide = (ByAddress<TraceFusion>, ByAddress<FusionDag>);

/// Everything the panel draws, computed once per view.
pub(super) struct Drawn {
    pub(super) title: String,
    /// (label, line) per platform.
    pub(super) platforms: Vec<(String, String)>,
    pub(super) chart: AttrValue,
    /// Where the time goes: (test id, SVG) of the timeline and roofline charts.
    pub(super) time_charts: Vec<(&'static str, AttrValue)>,
    /// (test id, sentence) in place of a chart that would be empty: why there is none.
    pub(super) statements: Vec<(String, String)>,
    /// The chip line ("H100 SXM, from device name …" or why there is none), and its preset.
    pub(super) chip: Option<(String, Option<String>)>,
    /// How much of the GPU time the cost formulas explain, for one trace.
    pub(super) coverage: Option<String>,
    /// How a graph-capture trace was joined to the trace, if one was.
    pub(super) capture: Option<String>,
    /// The gap's headline, for a comparison.
    pub(super) headline: Option<String>,
    /// Fusion in the trace (each side's, for a comparison): (test id, line).
    pub(super) fusion: Vec<(String, String)>,
    /// The kernel groups of a layer or step drawn (a trace's report carries its windows).
    pub(super) dag: Option<DagSide>,
    /// A comparison's two sides' fusion and windows, for the aligned layer side by side.
    pub(super) pair: Option<(ByAddress<Comparison>, [DagSide; 2])>,
    pub(super) tables: Vec<ByAddress<DataTable>>,
    pub(super) base_name: String,
    pub(super) view: TraceView,
}

fn stem(file: &str) -> String {
    file.trim_end_matches(".gz").trim_end_matches(".json").to_string()
}

/// The summary's tables; from a shortened share link, the kernel table says it lists only
/// each category's longest kernels, and the per-category name count (no longer known) goes.
fn shared_summary_tables(summary: &analysis::TraceSummary, trimmed: bool) -> Vec<ByAddress<DataTable>> {
    let mut tables = summary_tables(summary);
    if trimmed {
        tables[0] = tables[0].clone().without_column("names");
        tables[1].title = format!(
            "Longest kernels of each category (up to {} per category in a share link)",
            share::SHARED_KERNELS_PER_CATEGORY
        );
    }
    tables.into_iter().map(ByAddress::new).collect()
}

/// The chip line and the preset it is (to select it in the picker).
fn chip_line(time: &TraceTime) -> (String, Option<String>) {
    match (&time.chip, &time.chip_note) {
        (Some(c), _) => {
            (format!("Roofline figures against {} (from {}).", c.name, c.detected_from), preset_key(&c.name))
        }
        (None, note) => (format!("No chip: {}.", note.clone().unwrap_or_default()), None),
    }
}

/// The GPU preset named `name`, if it is one.
fn preset_key(name: &str) -> Option<String> {
    gpu_preset_names().into_iter().find(|k| hardware::preset(k).is_ok_and(|c| c.name == name)).map(str::to_string)
}

pub(super) fn drawn(view: &TraceView) -> Drawn {
    match view {
        TraceView::Summary { file_name, summary, trimmed, time, .. } => {
            let mut tables: Vec<ByAddress<DataTable>> = Vec::new();
            let mut time_charts = Vec::new();
            let mut statements = Vec::new();
            if let Some(t) = time {
                tables.push(ByAddress::new(timeline_table(t)));
                if let Some(w) = &t.waits {
                    tables.push(ByAddress::new(view::waits::waits_table(w)));
                }
                if let Some(l) = &t.launch_cost {
                    tables.push(ByAddress::new(view::launch_cost::launch_cost_table(l)));
                }
                if !t.critical_path.is_empty() {
                    let processor = view::time::processor(t);
                    tables.push(ByAddress::new(view::critical_path::critical_path_table(&t.critical_path, processor)));
                }
                tables.push(ByAddress::new(op_table_view(t)));
                if !t.unattributed.kernels.is_empty() {
                    tables.push(ByAddress::new(unattributed_table(t)));
                }
                time_charts.push(("chart-timeline", AttrValue::from(timeline_chart(t))));
                if let Some(svg) = view::critical_path::path_svg(&t.critical_path, view::time::processor(t)) {
                    time_charts.push(("chart-critical-path", AttrValue::from(svg)));
                }
                if let Some(f) = &t.fusion {
                    match no_bytes_statement(f, t.format) {
                        None => {
                            let groups = fusion_group_chart(f).to_svg();
                            time_charts.push(("chart-fusion-groups", AttrValue::from(groups)));
                            let total = fusion_total_chart(&[("", f)]).to_svg();
                            time_charts.push(("chart-fusion-total", AttrValue::from(total)));
                        }
                        Some(s) => statements.push(("fusion-bytes-unknown".to_string(), s)),
                    }
                    tables.push(ByAddress::new(fusion_groups_table(f, "fusion-groups", "Kernels as fusion groups")));
                    tables.push(ByAddress::new(opportunities_table(f, "opportunities", "Fusion left on the table")));
                    if !f.op_times.is_empty() {
                        tables.push(ByAddress::new(op_times_table(f, "op-times", "Op time both ways")));
                    }
                }
                if let Some(c) = &t.compiled_kernels {
                    tables.push(ByAddress::new(view::provenance::kernels_table(c)));
                    if !c.unjoined.is_empty() {
                        tables.push(ByAddress::new(view::provenance::unjoined_table(&c.unjoined)));
                    }
                }
                match op_roofline(&[RooflineSide { label: "ops", time: t, color: "" }]) {
                    Some(plot) => {
                        let chip = t.chip.as_ref().map(|c| c.name.as_str()).unwrap_or("");
                        let title = format!("Ops on the roofline of {chip}");
                        time_charts.push(("chart-roofline", AttrValue::from(plot.to_svg(&title))));
                    }
                    None if t.chip.is_some() => {
                        statements.push(("roofline-none".to_string(), no_roofline_statement(t)))
                    }
                    None => {}
                }
            }
            if let Some(st) = summary.structure.as_deref() {
                time_charts.push(("chart-steps", AttrValue::from(step_strip(st))));
                tables.push(ByAddress::new(phase_table(st)));
                tables.push(ByAddress::new(layer_table(st)));
            }
            tables.extend(shared_summary_tables(summary, *trimmed));
            Drawn {
                title: format!("Trace {file_name}"),
                // The title names the file and the line the vendor: no label.
                platforms: summary.platforms.iter().map(|p| (String::new(), platform_line(p))).collect(),
                chart: category_chart(summary).into(),
                time_charts,
                statements,
                chip: time.as_ref().map(|t| chip_line(t)),
                coverage: time.as_ref().map(|t| coverage_line(t)),
                capture: time.as_ref().and_then(|t| t.capture.as_ref().map(capture_line)),
                headline: None,
                fusion: time.as_ref().and_then(|t| t.fusion.as_ref()).map(|f| fusion_lines(f, "")).unwrap_or_default(),
                pair: None,
                dag: time.as_ref().and_then(|t| {
                    let (f, d) = (t.fusion.as_ref()?, t.fusion_dag.as_ref()?);
                    Some((ByAddress::new(f.clone()), ByAddress::new(d.clone())))
                }),
                tables,
                base_name: stem(file_name),
                view: view.clone(),
            }
        }
        TraceView::Comparison { files, comparison, gap, overview, .. } => {
            let keys: Vec<&str> = comparison.platforms.iter().map(|p| p.key.as_str()).collect();
            let mut tables: Vec<ByAddress<DataTable>> = Vec::new();
            let mut time_charts = Vec::new();
            let mut statements = Vec::new();
            let mut fusion = Vec::new();
            let mut pair = None;
            if let (Some(g), [k0, k1]) = (gap, keys.as_slice()) {
                tables.push(ByAddress::new(gap_table(&g.gap, [k0, k1])));
                if let Some([t0, t1]) = &g.times {
                    let sides = [
                        RooflineSide { label: k0, time: t0, color: draw::roofline::BLUE },
                        RooflineSide { label: k1, time: t1, color: draw::roofline::ORANGE },
                    ];
                    match op_roofline(&sides) {
                        Some(plot) => time_charts.push((
                            "chart-roofline",
                            AttrValue::from(plot.to_svg("Ops of both traces on their chips' rooflines")),
                        )),
                        None if t0.chip.is_some() || t1.chip.is_some() => {
                            for (k, t) in [(k0, t0), (k1, t1)] {
                                statements
                                    .push((format!("roofline-none-{k}"), format!("{k}: {}", no_roofline_statement(t))));
                            }
                        }
                        None => {}
                    }
                    if let (Some(f0), Some(f1), Some(d0), Some(d1)) =
                        (&t0.fusion, &t1.fusion, &t0.fusion_dag, &t1.fusion_dag)
                    {
                        let side =
                            |f: &TraceFusion, d: &FusionDag| (ByAddress::new(f.clone()), ByAddress::new(d.clone()));
                        pair = Some((comparison.clone(), [side(f0, d0), side(f1, d1)]));
                    }
                }
                // Each side's fusion: the reports' whole, or a share link's trimmed copy.
                let sides = match (&g.times, &g.fusion) {
                    (Some([t0, t1]), _) => t0.fusion.as_ref().zip(t1.fusion.as_ref()),
                    (None, Some([f0, f1])) => Some((&**f0, &**f1)),
                    (None, None) => None,
                };
                if let Some((f0, f1)) = sides {
                    // A side whose format records no shapes has no bar: it says why instead.
                    let formats = g.times.as_ref().map_or([TraceFormat::Kineto; 2], |[t0, t1]| [t0.format, t1.format]);
                    let mut known = Vec::new();
                    for ((k, f), format) in [(k0, f0), (k1, f1)].into_iter().zip(formats) {
                        match no_bytes_statement(f, format) {
                            None => known.push((*k, f)),
                            Some(s) => statements.push((format!("fusion-bytes-unknown-{k}"), format!("{k}: {s}"))),
                        }
                    }
                    if !known.is_empty() {
                        let chart = fusion_total_chart(&known);
                        time_charts.push(("chart-fusion-total", AttrValue::from(chart.to_svg())));
                    }
                    fusion.extend(fusion_lines(f0, k0));
                    fusion.extend(fusion_lines(f1, k1));
                    let ids = [
                        ("fusion-groups-a", "opportunities-a", k0, f0),
                        ("fusion-groups-b", "opportunities-b", k1, f1),
                    ];
                    for (groups, opportunities, key, f) in ids {
                        tables.push(ByAddress::new(fusion_groups_table(
                            f,
                            groups,
                            &format!("{key}: kernels as fusion groups"),
                        )));
                        tables.push(ByAddress::new(opportunities_table(
                            f,
                            opportunities,
                            &format!("{key}: fusion left on the table"),
                        )));
                        if !f.op_times.is_empty() {
                            let id = if groups.ends_with("-a") { "op-times-a" } else { "op-times-b" };
                            tables.push(ByAddress::new(op_times_table(f, id, &format!("{key}: op time both ways"))));
                        }
                    }
                }
            }
            if let (false, [k0, k1]) = (comparison.layer_alignment.is_empty(), keys.as_slice()) {
                tables.push(ByAddress::new(alignment_table(&comparison.layer_alignment, [k0, k1])));
            }
            tables.extend(comparison_tables(comparison).into_iter().map(ByAddress::new));
            Drawn {
                title: format!(
                    "{} compared",
                    comparison.platforms.iter().map(side_label).collect::<Vec<_>>().join(" vs ")
                ),
                platforms: comparison
                    .platforms
                    .iter()
                    .map(|p| (side_label(p), format!("{}: {}", p.file.clone().unwrap_or_default(), platform_line(p))))
                    .collect(),
                chart: comparison_chart(comparison).into(),
                time_charts,
                statements,
                chip: None,
                coverage: None,
                capture: None,
                headline: gap.as_ref().map(|g| {
                    // The sides named as the verdict names them (their devices, across vendors).
                    let names: Vec<(&str, &str)> =
                        overview.verdict.sides.iter().map(|s| (s.key.as_str(), s.name.as_str())).collect();
                    gap_headline(&g.gap, &names, comparison.processor())
                }),
                fusion,
                dag: None,
                pair,
                tables,
                base_name: format!("{}-vs-{}", stem(&files.0), stem(&files.1)),
                view: view.clone(),
            }
        }
    }
}

/// The fusion headline and re-prediction of one trace (`key` names the side of a comparison).
fn fusion_lines(f: &analysis::trace_fusion::TraceFusion, key: &str) -> Vec<(String, String)> {
    let (id, prefix) = match key {
        "" => (String::new(), String::new()),
        k => (format!("-{k}"), format!("{k}: ")),
    };
    let mut lines = vec![(format!("fusion-headline{id}"), format!("{prefix}Fusion: {}", fusion_headline(f)))];
    if let Some(r) = reprediction_line(f) {
        lines.push((format!("fusion-reprediction{id}"), format!("{prefix}{r}")));
    }
    if let Some(e) = exec_trace_line(f) {
        lines.push((format!("fusion-exec-trace{id}"), format!("{prefix}{e}")));
    }
    lines
}
