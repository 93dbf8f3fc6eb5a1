//! The trace view: one trace's summary, or two traces compared. The platforms, the
//! category chart (SVG from the core), the tables and the exports.

use std::rc::Rc;

use yew::prelude::*;

use crate::browser;
use hardware::gpu_preset_names;
use page::Shared;
use page::{ResultsTab, TraceView};
use table::DataTable;
use trace::compare::Comparison;
use trace::documents::{CompareJson, TraceJson};
use trace::findings::Evidence;
use trace::fusion::dag::FusionDag;
use trace::fusion::TraceFusion;
use trace::model::TraceFormat;
use trace::time::report::TraceTime;
use trace::view::fusion::{
    exec_trace_line, fusion_group_chart, fusion_groups_table, fusion_headline, fusion_total_chart, no_bytes_statement,
    op_times_table, opportunities_table, reprediction_line,
};
use trace::view::layers::{alignment_table, layer_table, phase_table, step_strip};
use trace::view::time::{
    capture_line, coverage_line, gap_headline, gap_table, no_roofline_statement, op_roofline, op_table_view,
    timeline_chart, timeline_table, unattributed_table, RooflineSide,
};
use trace::view::{
    category_chart, comparison_chart, comparison_markdown, comparison_tables, platform_line, side_label,
    summary_markdown, summary_tables,
};
use wasm_bindgen::JsCast;

use super::data_table::DataTableView;
use super::fusion_dag_view::{FusionDagView, FusionPairView};
use super::overview::OverviewView;
use super::rules_view::RulesView;
use super::share_link::ShareLink;

#[derive(Properties, PartialEq)]
pub struct Props {
    pub view: TraceView,
    pub on_close: Callback<()>,
    /// Where an export that fails says why.
    pub on_error: Callback<String>,
    /// The share link's fragment for this view, or why there is none.
    pub make_fragment: Callback<(), Result<String, String>>,
    /// A chip preset picked for the shown trace's roofline figures.
    pub on_chip: Callback<String>,
    /// The open view of the results, and where picking another goes.
    pub tab: ResultsTab,
    pub on_tab: Callback<ResultsTab>,
}

/// One trace's fusion and the windows of its group drawing.
type DagSide = (Shared<TraceFusion>, Shared<FusionDag>);

/// Everything the panel draws, computed once per view.
struct Drawn {
    title: String,
    /// (label, line) per platform.
    platforms: Vec<(String, String)>,
    chart: AttrValue,
    /// Where the time goes: (test id, SVG) of the timeline and roofline charts.
    time_charts: Vec<(&'static str, AttrValue)>,
    /// (test id, sentence) in place of a chart that would be empty: why there is none.
    statements: Vec<(String, String)>,
    /// The chip line ("H100 SXM, from device name …" or why there is none), and its preset.
    chip: Option<(String, Option<String>)>,
    /// How much of the GPU time the op models explain, for one trace.
    coverage: Option<String>,
    /// How a graph-capture trace was joined to the trace, if one was.
    capture: Option<String>,
    /// The gap's headline, for a comparison.
    headline: Option<String>,
    /// Fusion in the trace (each side's, for a comparison): (test id, line).
    fusion: Vec<(String, String)>,
    /// The kernel groups of a layer or step drawn (a trace's report carries its windows).
    dag: Option<DagSide>,
    /// A comparison's two sides' fusion and windows, for the aligned layer side by side.
    pair: Option<(Shared<Comparison>, [DagSide; 2])>,
    tables: Vec<Shared<DataTable>>,
    base_name: String,
    view: TraceView,
}

/// What an export writes; computed when its button is clicked, so that a large trace's JSON
/// or 100,000-row CSV is not rebuilt on every render.
#[derive(Debug, Clone, Copy)]
enum Export {
    Json,
    Markdown,
    /// The one-file review report (HTML).
    Report,
    Chart,
    TimeChart(usize),
    Csv(usize),
}

fn export_content(d: &Drawn, export: Export) -> String {
    let json = |r: Result<String, serde_json::Error>| {
        r.map(|s| s + "\n").unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
    };
    match (export, &d.view) {
        (Export::Json, TraceView::Summary { summary, time: Some(time), overview, .. }) => {
            json(serde_json::to_string_pretty(&TraceJson { overview: Some(overview), summary, time }))
        }
        (Export::Json, TraceView::Summary { summary, .. }) => json(serde_json::to_string_pretty(&**summary)),
        (Export::Json, TraceView::Comparison { comparison, gap: Some(g), overview, .. }) => {
            // Each side's fusion, keyed as the command line keys it.
            let fusion = g
                .times
                .iter()
                .flat_map(|times| comparison.platforms.iter().zip(times.iter()))
                .filter_map(|(p, t)| t.fusion.as_ref().map(|f| (p.key.clone(), f)))
                .collect();
            json(serde_json::to_string_pretty(&CompareJson {
                overview: Some(overview),
                comparison,
                gap: &g.gap,
                captures: Default::default(),
                fusion,
            }))
        }
        (Export::Json, TraceView::Comparison { comparison, .. }) => json(serde_json::to_string_pretty(&**comparison)),
        (Export::Markdown, TraceView::Summary { summary, overview, .. }) => summary_markdown(summary, Some(overview)),
        (Export::Markdown, TraceView::Comparison { comparison, overview, .. }) => {
            comparison_markdown(comparison, Some(overview))
        }
        (Export::Report, TraceView::Summary { file_name, summary, time, overview, .. }) => {
            report::trace_report(file_name, summary, time.as_deref(), overview)
        }
        (Export::Report, TraceView::Comparison { files, comparison, gap, overview, .. }) => {
            let sides = match gap.as_ref().map(|g| (&g.times, &g.fusion)) {
                Some((Some([t0, t1]), _)) => report::PairSides::Reports([&**t0, &**t1]),
                Some((None, Some([f0, f1]))) => report::PairSides::Fusion([&**f0, &**f1]),
                _ => report::PairSides::None,
            };
            report::pair_report((&files.0, &files.1), comparison, gap.as_ref().map(|g| &*g.gap), sides, overview)
        }
        (Export::Chart, _) => d.chart.to_string(),
        (Export::TimeChart(i), _) => d.time_charts.get(i).map(|c| c.1.to_string()).unwrap_or_default(),
        (Export::Csv(i), _) => d.tables.get(i).map(|t| t.exact_table().to_csv()).unwrap_or_default(),
    }
}

fn stem(file: &str) -> String {
    file.trim_end_matches(".gz").trim_end_matches(".json").to_string()
}

/// The summary's tables; from a shortened share link, the kernel table says it lists only
/// each category's longest kernels, and the per-category name count (no longer known) goes.
fn shared_summary_tables(summary: &trace::TraceSummary, trimmed: bool) -> Vec<Shared<DataTable>> {
    let mut tables = summary_tables(summary);
    if trimmed {
        tables[0] = tables[0].clone().without_column("names");
        tables[1].title = format!(
            "Longest kernels of each category (up to {} per category in a share link)",
            share::SHARED_KERNELS_PER_CATEGORY
        );
    }
    tables.into_iter().map(Shared::new).collect()
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

fn drawn(view: &TraceView) -> Drawn {
    match view {
        TraceView::Summary { file_name, summary, trimmed, time, .. } => {
            let mut tables: Vec<Shared<DataTable>> = Vec::new();
            let mut time_charts = Vec::new();
            let mut statements = Vec::new();
            if let Some(t) = time {
                tables.push(Shared::new(timeline_table(t)));
                tables.push(Shared::new(op_table_view(t)));
                if !t.unattributed.kernels.is_empty() {
                    tables.push(Shared::new(unattributed_table(t)));
                }
                time_charts.push(("chart-timeline", AttrValue::from(timeline_chart(t))));
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
                    tables.push(Shared::new(fusion_groups_table(f, "fusion-groups", "Kernels as fusion groups")));
                    tables.push(Shared::new(opportunities_table(f, "opportunities", "Fusion left on the table")));
                    if !f.op_times.is_empty() {
                        tables.push(Shared::new(op_times_table(f, "op-times", "Op time both ways")));
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
                tables.push(Shared::new(phase_table(st)));
                tables.push(Shared::new(layer_table(st)));
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
                    Some((Shared::new(f.clone()), Shared::new(d.clone())))
                }),
                tables,
                base_name: stem(file_name),
                view: view.clone(),
            }
        }
        TraceView::Comparison { files, comparison, gap, .. } => {
            let keys: Vec<&str> = comparison.platforms.iter().map(|p| p.key.as_str()).collect();
            let mut tables: Vec<Shared<DataTable>> = Vec::new();
            let mut time_charts = Vec::new();
            let mut statements = Vec::new();
            let mut fusion = Vec::new();
            let mut pair = None;
            if let (Some(g), [k0, k1]) = (gap, keys.as_slice()) {
                tables.push(Shared::new(gap_table(&g.gap, [k0, k1])));
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
                        let side = |f: &TraceFusion, d: &FusionDag| (Shared::new(f.clone()), Shared::new(d.clone()));
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
                        tables.push(Shared::new(fusion_groups_table(
                            f,
                            groups,
                            &format!("{key}: kernels as fusion groups"),
                        )));
                        tables.push(Shared::new(opportunities_table(
                            f,
                            opportunities,
                            &format!("{key}: fusion left on the table"),
                        )));
                        if !f.op_times.is_empty() {
                            let id = if groups.ends_with("-a") { "op-times-a" } else { "op-times-b" };
                            tables.push(Shared::new(op_times_table(f, id, &format!("{key}: op time both ways"))));
                        }
                    }
                }
            }
            if let (false, [k0, k1]) = (comparison.layer_alignment.is_empty(), keys.as_slice()) {
                tables.push(Shared::new(alignment_table(&comparison.layer_alignment, [k0, k1])));
            }
            tables.extend(comparison_tables(comparison).into_iter().map(Shared::new));
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
                headline: gap.as_ref().map(|g| gap_headline(&g.gap)),
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
fn fusion_lines(f: &trace::fusion::TraceFusion, key: &str) -> Vec<(String, String)> {
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

/// A download button for `base` + `suffix`; `data-export` is the suffix (for tests).
fn export_button(
    label: String,
    (drawn, export): (&Rc<Drawn>, Export),
    suffix: String,
    mime: &'static str,
    on_error: Callback<String>,
) -> Html {
    let file_name = format!("{}{suffix}", drawn.base_name);
    let drawn = drawn.clone();
    let onclick = {
        let label = label.clone();
        Callback::from(move |_| {
            if let Err(e) = browser::download(&file_name, mime, &export_content(&drawn, export)) {
                on_error.emit(format!("The {label} export failed: {e}."));
            }
        })
    };
    html! { <button type="button" {onclick} data-export={suffix}>{ label }</button> }
}

#[function_component(TracePanel)]
pub fn trace_panel(props: &Props) -> Html {
    let d = use_memo(props.view.clone(), drawn);
    let trimmed = match &props.view {
        TraceView::Summary { trimmed, .. } | TraceView::Comparison { trimmed, .. } => *trimmed,
    };
    let make_fragment = props.make_fragment.clone();
    let on_close = props.on_close.clone();
    let chip_change = props.on_chip.reform(|e: Event| {
        let select: web_sys::HtmlSelectElement = e.target_unchecked_into();
        select.value()
    });
    // The review's file, beside the share link: everything a reviewer needs, offline.
    let report_button = export_button(
        "Export report".into(),
        (&d, Export::Report),
        "-report.html".into(),
        "text/html",
        props.on_error.clone(),
    );
    let mut exports = vec![
        export_button("JSON".into(), (&d, Export::Json), ".json".into(), "application/json", props.on_error.clone()),
        export_button("Markdown".into(), (&d, Export::Markdown), ".md".into(), "text/markdown", props.on_error.clone()),
        export_button(
            "SVG (chart)".into(),
            (&d, Export::Chart),
            "-categories.svg".into(),
            "image/svg+xml",
            props.on_error.clone(),
        ),
    ];
    for (i, (id, _)) in d.time_charts.iter().enumerate() {
        let name = id.trim_start_matches("chart-");
        exports.push(export_button(
            format!("SVG ({name})"),
            (&d, Export::TimeChart(i)),
            format!("-{name}.svg"),
            "image/svg+xml",
            props.on_error.clone(),
        ));
    }
    for (i, t) in d.tables.iter().enumerate() {
        exports.push(export_button(
            format!("CSV ({})", t.id),
            (&d, Export::Csv(i)),
            format!("-{}.csv", t.id),
            "text/csv",
            props.on_error.clone(),
        ));
    }
    let key = d.base_name.clone();
    // The classifier's rules, shown on demand or when a kernel row is clicked (which rule
    // classified that kernel).
    let show_rules = use_state_eq(|| false);
    let rule_kernel = use_state_eq(|| None::<AttrValue>);
    let table_view = |t: &Shared<DataTable>| {
        let on_activate = matches!(t.id, "kernels" | "fused").then(|| {
            let (t, show_rules, rule_kernel) = (t.clone(), show_rules.clone(), rule_kernel.clone());
            Callback::from(move |r: usize| {
                rule_kernel.set(t.rows.get(r).map(|row| AttrValue::from(row[0].exact.clone())));
                show_rules.set(true);
            })
        });
        html! { <DataTableView key={format!("{key}-{}", t.id)} table={t.clone()} {on_activate} /> }
    };
    let toggle_rules = {
        let (show_rules, shown) = (show_rules.clone(), *show_rules);
        Callback::from(move |_| show_rules.set(!shown))
    };
    let tab = props.tab;
    let shows = |t: ResultsTab| tab == ResultsTab::All || tab == t;
    let has_layers = d.tables.iter().any(|t| table_tab(t.id) == ResultsTab::Layers)
        || d.time_charts.iter().any(|(id, _)| chart_tab(id) == ResultsTab::Layers);
    let tabs: Vec<ResultsTab> =
        ResultsTab::ALL.into_iter().filter(|t| *t != ResultsTab::Layers || has_layers).collect();
    let on_tab = props.on_tab.clone();
    let tab_bar = html! {
        <div class="tabs" role="tablist" aria-label="Views of the results">
            { for tabs.iter().map(|&t| {
                let on_tab = on_tab.clone();
                html! {
                    <button type="button" role="tab" id={format!("tab-{}", t.id())} aria-controls="results-view"
                        aria-selected={(t == tab).to_string()} data-view={t.id()}
                        onclick={move |_| on_tab.emit(t)}>{ t.label() }</button>
                }
            }) }
        </div>
    };
    let on_evidence = {
        let on_tab = props.on_tab.clone();
        Callback::from(move |e: Evidence| {
            let to = match e {
                Evidence::Fusion => ResultsTab::Fusion,
                Evidence::Kernels => ResultsTab::Kernels,
                Evidence::Time => ResultsTab::Time,
            };
            if tab != ResultsTab::All {
                on_tab.emit(to);
            }
            show_evidence_later(e);
        })
    };
    let charts = |of: ResultsTab| -> Html {
        d.time_charts
            .iter()
            .filter(|(id, _)| chart_tab(id) == of)
            .map(|(id, svg)| {
                html! {
                    <figure class="chart" data-testid={*id}>{ Html::from_html_unchecked(svg.clone()) }</figure>
                }
            })
            .collect()
    };
    let tables =
        |of: ResultsTab| -> Html { d.tables.iter().filter(|t| table_tab(t.id) == of).map(table_view).collect() };
    let statements = |of: ResultsTab| -> Html {
        d.statements
            .iter()
            .filter(|(id, _)| statement_tab(id) == of)
            .map(|(id, line)| html! { <p class="hint" data-testid={id.clone()}>{ line.clone() }</p> })
            .collect()
    };
    html! {
        <section class="panel results trace" aria-labelledby="trace-h" data-testid="trace-panel">
            <div class="results-head">
                <h2 id="trace-h" data-testid="results-title">{ d.title.clone() }</h2>
                <div class="trace-actions">
                    <button type="button" onclick={move |_| on_close.emit(())}>{ "Close the trace view" }</button>
                    { report_button }
                </div>
                <ShareLink {make_fragment} />
            </div>
            { tab_bar }
            <div role="tabpanel" id="results-view" aria-labelledby={format!("tab-{}", tab.id())} data-view={tab.id()}>
            if shows(ResultsTab::Overview) {
                <OverviewView overview={props.view.overview().clone()} {on_evidence} />
                <ul class="platforms" data-testid="platforms">
                    { for d.platforms.iter().map(|(label, line)| html! {
                        <li>
                            if !label.is_empty() { <strong>{ label.clone() }</strong>{ " — " } }
                            { line.clone() }
                        </li>
                    }) }
                </ul>
                { charts(ResultsTab::Overview) }
                <figure class="chart" data-testid="chart-categories">
                    { Html::from_html_unchecked(d.chart.clone()) }
                </figure>
            }
            if shows(ResultsTab::Fusion) {
                { for d.fusion.iter().map(|(id, line)| html! {
                    <p class="fusion-line" data-testid={id.clone()}>{ line.clone() }</p>
                }) }
                if let Some((fusion, dag)) = &d.dag {
                    <FusionDagView key={d.base_name.clone()} fusion={fusion.clone()} dag={dag.clone()} />
                }
                if let Some((comparison, sides)) = &d.pair {
                    <FusionPairView key={d.base_name.clone()} comparison={comparison.clone()} sides={sides.clone()} />
                }
                { statements(ResultsTab::Fusion) }
                { charts(ResultsTab::Fusion) }
                { tables(ResultsTab::Fusion) }
            }
            if shows(ResultsTab::Kernels) {
                { tables(ResultsTab::Kernels) }
                <p class="hint">
                    { "Click a kernel row to see which classifier rule decided its category, or " }
                    <button type="button" class="link" data-testid="show-rules" aria-expanded={show_rules.to_string()} onclick={toggle_rules}>
                        { if *show_rules { "hide the classifier rules" } else { "show the classifier rules" } }
                    </button>
                    { "." }
                </p>
                if *show_rules {
                    <RulesView kernel={(*rule_kernel).clone()} />
                }
            }
            if shows(ResultsTab::Time) {
                if let Some(h) = &d.headline {
                    <p class="headline" data-testid="gap-headline">{ h.clone() }</p>
                }
                if let Some((line, key)) = &d.chip {
                    <p class="chip-line" data-testid="trace-chip-line">
                        { line.clone() }{ " " }
                        <label>{ "Chip: " }
                            <select data-testid="trace-chip" onchange={chip_change}>
                                <option value="" selected={key.is_none()}>{ "—" }</option>
                                { for gpu_preset_names().into_iter().map(|k| html! {
                                    <option value={k} selected={key.as_deref() == Some(k)}>
                                        { hardware::preset(k).map(|c| c.name).unwrap_or_default() }
                                    </option>
                                }) }
                            </select>
                        </label>
                    </p>
                }
                if let Some(c) = &d.capture {
                    <p class="hint" data-testid="capture-line">{ c.clone() }</p>
                }
                if let Some(c) = &d.coverage {
                    <p class="hint" data-testid="op-coverage">{ c.clone() }</p>
                }
                { statements(ResultsTab::Time) }
                { tables(ResultsTab::Time) }
                { charts(ResultsTab::Time) }
            }
            if shows(ResultsTab::Layers) {
                if !has_layers {
                    <p class="hint" data-testid="no-layers">{ "No steps or decoder layers were found in this trace." }</p>
                }
                { charts(ResultsTab::Layers) }
                { tables(ResultsTab::Layers) }
            }
            </div>
            if !trimmed {
                <p class="hint">{ "A share link carries these results, not the trace: every total, the fusion differences, each category's longest kernels and each mapping row's main kernel." }</p>
            } else {
                <p class="hint" data-testid="trimmed-note">
                    { "Opened from a share link, which carries the analysis without the trace: kernel lists keep each category's longest kernels and each mapping row's main kernel, and comparisons carry kernel names as the tables show them (shortened). Open the trace files for every kernel and full names." }
                </p>
            }
            <div class="exports" role="group" aria-label="Export">
                <span class="exports-label">{ "Export:" }</span>
                { for exports }
            </div>
        </section>
    }
}

/// The view (tab) a table of the results belongs to, by its id.
fn table_tab(id: &str) -> ResultsTab {
    match id {
        "gap" | "timeline" | "ops" | "unattributed" => ResultsTab::Time,
        "phases" | "layer" | "layer-alignment" => ResultsTab::Layers,
        "categories" | "kernels" | "fused" | "mapping" => ResultsTab::Kernels,
        _ => ResultsTab::Fusion,
    }
}

/// The view a chart belongs to: the traffic bars are one of the overview's two charts.
fn chart_tab(id: &str) -> ResultsTab {
    match id {
        "chart-fusion-total" => ResultsTab::Overview,
        "chart-fusion-groups" => ResultsTab::Fusion,
        "chart-steps" => ResultsTab::Layers,
        _ => ResultsTab::Time,
    }
}

/// The view a statement (why a chart is missing) belongs to.
fn statement_tab(id: &str) -> ResultsTab {
    if id.starts_with("fusion-") {
        ResultsTab::Fusion
    } else {
        ResultsTab::Time
    }
}

/// Brings a finding's evidence into view once the tab that holds it is drawn.
fn show_evidence_later(e: Evidence) {
    let f = wasm_bindgen::closure::Closure::once_into_js(move || super::overview::show_evidence(e));
    if let Some(w) = web_sys::window() {
        let _ = w.set_timeout_with_callback_and_timeout_and_arguments_0(f.unchecked_ref(), 30);
    }
}
