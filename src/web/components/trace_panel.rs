//! The trace view: one trace's results, or two traces compared, as tabs (overview, fusion,
//! kernels and mapping, where the time goes, layers, all views) over what [`super::trace_drawn`]
//! computed, with the share link, the review report and the exports.

use std::rc::Rc;

use yew::prelude::*;

use crate::browser;
use analysis::documents::{CompareJson, TraceJson};
use analysis::findings::Evidence;
use hardware::gpu_preset_names;
use page::ByAddress;
use page::{ResultsTab, TraceView};
use table::DataTable;
use view::{comparison_markdown, summary_markdown};
use wasm_bindgen::JsCast;

use super::data_table::DataTableView;
use super::fusion_dag_view::{FusionDagView, FusionPairView};
use super::overview::OverviewView;
use super::rules_view::RulesView;
use super::share_link::ShareLink;
use super::trace_drawn::{drawn, Drawn};

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
    let table_view = |t: &ByAddress<DataTable>| {
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
            if tab != ResultsTab::All {
                on_tab.emit(ResultsTab::from(e));
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
                // A pair's aligned layer first: what differs is seen before it is told.
                if let Some((comparison, sides)) = &d.pair {
                    <FusionPairView key={d.base_name.clone()} comparison={comparison.clone()} sides={sides.clone()} />
                }
                { for d.fusion.iter().map(|(id, line)| html! {
                    <p class="fusion-line" data-testid={id.clone()}>{ line.clone() }</p>
                }) }
                if let Some((fusion, dag)) = &d.dag {
                    <FusionDagView key={d.base_name.clone()} fusion={fusion.clone()} dag={dag.clone()} />
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
        "gap" | "timeline" | "waits" | "launch_cost" | "critical_path" | "ops" | "unattributed" => ResultsTab::Time,
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
