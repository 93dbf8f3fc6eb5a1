//! The figures of the analysis shown (or why there is none): headline, traffic charts, groups
//! table and exports, the time model, the calibration profile while one is loaded, and the
//! fusion groups drawn.

use yew::prelude::*;

use super::calibration_panel::CalibrationPanel;
use super::exports::Exports;
use super::group_view::GroupView;
use super::groups_table::GroupsTable;
use super::overview::{show_evidence, OverviewView};
use super::share_link::ShareLink;
use super::summary::Summary;
use super::time_panel::TimePanel;
use super::traffic_chart::{ChartKind, TrafficChart};
use hardware::ChipChoice;
use page::{Source, State};

#[derive(Properties, PartialEq)]
pub struct Props {
    pub state: page::ByAddress<State>,
    pub make_fragment: Callback<(), Result<String, String>>,
    pub on_select: Callback<Option<usize>>,
    pub on_chip: Callback<ChipChoice>,
    pub on_unload_calibration: Callback<()>,
    pub on_error: Callback<String>,
}

/// The stem of export file names: the graph file's name, the model and phase, or the block.
fn base_name(source: &Source) -> AttrValue {
    match source {
        Source::Graph { file_name, .. } | Source::OpTrace { file_name, .. } => {
            file_name.trim_end_matches(".gz").trim_end_matches(".json").to_string().into()
        }
        Source::Model(f) => format!("{}-{}", f.model.label().trim_end_matches(".json"), f.phase).into(),
        Source::Transformer(_) => "transformer".into(),
    }
}

#[function_component(Results)]
pub fn results(props: &Props) -> Html {
    let state = &props.state;
    let error = state.current.as_ref().err().cloned();
    let base_name = base_name(&state.source);
    let calibration_panel = state.time.calibration.clone().map(|calibration| {
        html! { <CalibrationPanel {calibration} on_unload={props.on_unload_calibration.clone()} /> }
    });
    // The verdict and findings at the time model's chip's bandwidth (none for an unusable chip),
    // made again only when the report or the chip changes, not on every selection.
    let overview = (*use_memo((state.shown().map(|c| c.report.clone()), state.time.chip().ok()), |(report, chip)| {
        report
            .as_ref()
            .zip(chip.as_ref())
            .map(|(r, chip)| page::ByAddress::new(analysis::findings::graph::graph_overview(&**r, chip)))
    }))
    .clone();
    let Some(c) = state.shown().cloned() else {
        return html! { <>
            <section class="panel empty" role="alert">
                <p>{ error.unwrap_or_else(|| "Nothing to show yet: open an op graph or enter the transformer block's sizes.".to_string()) }</p>
            </section>
            { for calibration_panel }
        </> };
    };
    html! { <>
        <section class="panel results" aria-labelledby="results-h" data-stale={error.is_some().to_string()}>
            <div class="results-head">
                <h2 id="results-h" data-testid="results-title">{ c.title.clone() }</h2>
                <ShareLink make_fragment={props.make_fragment.clone()} />
            </div>
            if error.is_some() {
                <p class="stale-note">{ "These figures are for the last valid inputs; fix the input above to update them." }</p>
            }
            if let Some(o) = overview {
                <OverviewView overview={o} on_evidence={Callback::from(show_evidence)} />
            }
            <Summary report={c.report.clone()} />
            <div class="charts">
                <TrafficChart id="chart-groups" report={c.report.clone()} kind={ChartKind::PerGroup} />
                <TrafficChart id="chart-total" report={c.report.clone()} kind={ChartKind::Total} />
            </div>
            <GroupsTable report={c.report.clone()} />
            <Exports report={c.report.clone()} base_name={base_name.clone()} on_error={props.on_error.clone()} />
        </section>
        <TimePanel graph={c.graph.clone()} analysis={c.analysis.clone()} workload={c.workload.clone()}
            time={state.time.clone()} on_chip={props.on_chip.clone()} on_error={props.on_error.clone()} {base_name} />
        { for calibration_panel }
        <section class="panel" aria-labelledby="groups-h">
            <h2 id="groups-h">{ "Fusion groups" }</h2>
            <GroupView graph={c.graph.clone()} report={c.report.clone()} selected={state.selected_op} on_select={props.on_select.clone()} />
        </section>
    </> }
}
