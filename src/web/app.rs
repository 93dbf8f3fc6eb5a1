//! The page: header with the Open button, notices, the transformer inputs, headline figures,
//! charts, the fusion groups and the groups table. Files dropped anywhere on the page are opened.

use wasm_bindgen::closure::Closure;
use wasm_bindgen::JsCast;
use yew::prelude::*;

use crate::share;

use super::browser;
use super::components::calibration_panel::CalibrationPanel;
use super::components::exports::Exports;
use super::components::file_open::{files_of, FileOpen};
use super::components::group_view::GroupView;
use super::components::groups_table::GroupsTable;
use super::components::model_form::ModelFormView;
use super::components::optrace_panel::OptracePanel;
use super::components::read_progress::ReadProgress;
use super::components::share_link::ShareLink;
use super::components::sim_panel::SimPanel;
use super::components::summary::Summary;
use super::components::time_panel::TimePanel;
use super::components::trace_list::TraceList;
use super::components::trace_panel::TracePanel;
use super::components::traffic_chart::{ChartKind, TrafficChart};
use super::components::transformer_form::TransformerFormView;
use super::opening::Opening;
use super::state::{Action, Field, PairSide, Reading, Source, State};
use crate::hardware::ChipChoice;
use crate::workload::{ModelChoice, ModelField, Phase};

/// Opens the state of a share link pasted into the address bar of an open page.
#[hook]
fn use_hash_restore(state: UseReducerHandle<State>) {
    use_effect_with((), move |_| {
        let listener = Closure::<dyn Fn()>::new(move || {
            let fragment = browser::fragment();
            if fragment.is_empty() {
                return;
            }
            match share::decode(&fragment) {
                Ok(shared) => state.dispatch(Action::Restore(shared)),
                Err(e) => state.dispatch(Action::Fail(format!("This share link cannot be opened: {e}."))),
            }
        });
        let window = web_sys::window();
        if let Some(w) = &window {
            let _ = w.add_event_listener_with_callback("hashchange", listener.as_ref().unchecked_ref());
        }
        move || {
            if let Some(w) = window {
                let _ = w.remove_event_listener_with_callback("hashchange", listener.as_ref().unchecked_ref());
            }
        }
    });
}

/// Files dropped anywhere in the window are opened (listening on the window, not an element,
/// so that no drop falls through to the browser, which would navigate away to the file).
#[hook]
fn use_window_drop(on_files: Callback<Vec<web_sys::File>>, dragging: UseStateSetter<bool>) {
    use_effect_with((), move |_| {
        let over = {
            let dragging = dragging.clone();
            Closure::<dyn Fn(web_sys::Event)>::new(move |e: web_sys::Event| {
                e.prevent_default(); // allows the drop
                dragging.set(true);
            })
        };
        let leave = {
            let dragging = dragging.clone();
            Closure::<dyn Fn(web_sys::Event)>::new(move |e: web_sys::Event| {
                // Only when the pointer leaves the window, not when it moves between elements.
                if e.dyn_ref::<web_sys::DragEvent>().is_some_and(|d| d.related_target().is_none()) {
                    dragging.set(false);
                }
            })
        };
        let drop = Closure::<dyn Fn(web_sys::Event)>::new(move |e: web_sys::Event| {
            e.prevent_default();
            dragging.set(false);
            if let Some(d) = e.dyn_ref::<web_sys::DragEvent>() {
                on_files.emit(files_of(d.data_transfer().and_then(|t| t.files())));
            }
        });
        let window = web_sys::window();
        let listeners = [("dragover", over), ("dragleave", leave), ("drop", drop)];
        if let Some(w) = &window {
            for (name, f) in &listeners {
                let _ = w.add_event_listener_with_callback(name, f.as_ref().unchecked_ref());
            }
        }
        move || {
            if let Some(w) = window {
                for (name, f) in &listeners {
                    let _ = w.remove_event_listener_with_callback(name, f.as_ref().unchecked_ref());
                }
            }
        }
    });
}

/// The callbacks of "Model × chip", the time view's chip and the calibration profile.
struct ModelCallbacks {
    show: Callback<MouseEvent>,
    field: Callback<(ModelField, String)>,
    model: Callback<ModelChoice>,
    phase: Callback<Phase>,
    chip: Callback<ChipChoice>,
    unload_calibration: Callback<()>,
}

impl ModelCallbacks {
    fn new(state: &UseReducerHandle<State>) -> Self {
        // Any change makes the address's share link stale.
        let on = |make: fn(()) -> Action| {
            let state = state.clone();
            Callback::from(move |()| {
                browser::clear_fragment();
                state.dispatch(make(()))
            })
        };
        let with = |state: &UseReducerHandle<State>| state.clone();
        let (s1, s2, s3, s4) = (with(state), with(state), with(state), with(state));
        let show = on(|()| Action::ShowModel);
        ModelCallbacks {
            show: Callback::from(move |_| show.emit(())),
            field: Callback::from(move |(f, v)| {
                browser::clear_fragment();
                s1.dispatch(Action::SetModelField(f, v))
            }),
            model: Callback::from(move |m| {
                browser::clear_fragment();
                s2.dispatch(Action::SetModel(m))
            }),
            phase: Callback::from(move |p| {
                browser::clear_fragment();
                s3.dispatch(Action::SetPhase(p))
            }),
            chip: Callback::from(move |c| {
                browser::clear_fragment();
                s4.dispatch(Action::SetChip(c))
            }),
            unload_calibration: on(|()| Action::UnloadCalibration),
        }
    }
}

#[function_component(App)]
pub fn app() -> Html {
    let state = use_reducer(|| State::from_fragment(&browser::fragment()));
    use_hash_restore(state.clone());
    let dragging = use_state_eq(|| false);
    let opening = Opening {
        state: state.clone(),
        reading: use_state(|| None::<Reading>),
        current: use_mut_ref(|| None),
        worker: use_mut_ref(|| None),
        comparing: use_state_eq(|| false),
    };

    let on_change = {
        let state = state.clone();
        Callback::from(move |(field, value): (Field, String)| {
            browser::clear_fragment();
            state.dispatch(Action::SetField(field, value))
        })
    };
    let on_files = {
        let opening = opening.clone();
        Callback::from(move |files: Vec<web_sys::File>| {
            opening.open_files(files.into_iter().map(|f| (f.clone().into(), f.name())).collect())
        })
    };
    use_window_drop(on_files.clone(), dragging.setter());
    let on_cancel = {
        let opening = opening.clone();
        Callback::from(move |()| opening.cancel())
    };
    let make_fragment = {
        let state = state.clone();
        Callback::from(move |()| state.shared_view().map(|v| share::encode(&v)))
    };
    let on_select = {
        let state = state.clone();
        Callback::from(move |i: Option<usize>| state.dispatch(Action::SelectOp(i)))
    };
    let on_error = {
        let state = state.clone();
        Callback::from(move |e: String| state.dispatch(Action::Fail(e)))
    };
    let dismiss = {
        let state = state.clone();
        Callback::from(move |_| state.dispatch(Action::DismissNotice))
    };
    let back_to_transformer = {
        let state = state.clone();
        Callback::from(move |_| {
            browser::clear_fragment();
            state.dispatch(Action::ResetTransformer)
        })
    };

    let on_example = {
        let opening = opening.clone();
        Callback::from(move |_| opening.open_example())
    };
    let on_compare = {
        let opening = opening.clone();
        let pair = state.traces.pair_traces().map(|(a, b)| (a.clone(), b.clone()));
        Callback::from(move |()| {
            if let Some((a, b)) = pair.clone() {
                let opening = opening.clone();
                wasm_bindgen_futures::spawn_local(async move { opening.compare(a, b).await });
            }
        })
    };
    let on_show_trace = {
        let state = state.clone();
        Callback::from(move |id| state.dispatch(Action::ShowTrace(id)))
    };
    let on_pick = {
        let state = state.clone();
        Callback::from(move |(side, id): (PairSide, u32)| state.dispatch(Action::PickTrace(side, id)))
    };
    let on_remove = {
        let (state, opening) = (state.clone(), opening.clone());
        Callback::from(move |id| {
            if let Some(t) = state.traces.get(id) {
                opening.forget(t);
            }
            state.dispatch(Action::RemoveTrace(id))
        })
    };
    let on_close_trace = {
        let state = state.clone();
        Callback::from(move |()| state.dispatch(Action::CloseTrace))
    };
    let on_sim_form = {
        let state = state.clone();
        Callback::from(move |form| state.dispatch(Action::SetSimForm(form)))
    };
    let on_close_sim = {
        let state = state.clone();
        Callback::from(move |()| state.dispatch(Action::CloseSimTable))
    };
    let on_close_optrace = {
        let state = state.clone();
        Callback::from(move |()| state.dispatch(Action::ResetTransformer))
    };
    let optrace = match &state.source {
        Source::OpTrace { file_name, report, .. } => Some((AttrValue::from(file_name.clone()), report.clone())),
        _ => None,
    };
    let trace_view = state.traces.view.clone();
    let error = state.current.as_ref().err().cloned();
    let graph_name = match &state.source {
        Source::Graph { file_name, .. } | Source::OpTrace { file_name, .. } => Some(file_name.clone()),
        Source::Transformer(_) | Source::Model(_) => None,
    };
    let is_model = matches!(state.source, Source::Model(_));
    let model_cb = ModelCallbacks::new(&state);
    let shown = state.shown().cloned();
    let base_name: AttrValue = match (&graph_name, &state.source) {
        (Some(name), _) => name.trim_end_matches(".gz").trim_end_matches(".json").to_string().into(),
        (None, Source::Model(f)) => format!("{}-{}", f.model.label().trim_end_matches(".json"), f.phase).into(),
        (None, _) => "transformer".into(),
    };
    let calibration_panel = state.time.calibration.clone().map(|calibration| {
        let on_unload = model_cb.unload_calibration.clone();
        html! { <CalibrationPanel {calibration} {on_unload} /> }
    });
    html! {
        <div class={classes!("page", dragging.then_some("dragging"))}>
            <header class="top">
                <h1>{ "fusionscope" }</h1>
                <p class="tagline">{ "Kernel fusion groups and the global-memory traffic they save, computed in your browser." }</p>
                <div class="top-actions">
                    <FileOpen {on_files} />
                    <span class="hint" title="Op graphs, PyTorch-profiler traces (two at once are compared) and the other kinds fusionscope reads">{ "or drop files anywhere" }</span>
                    <button type="button" data-testid="example" onclick={on_example}
                        title="Two small real traces of BERT-small (eager) on an NVIDIA H100 and an AMD MI300X, bundled with the page">
                        { "Try the AMD-vs-NVIDIA example" }
                    </button>
                </div>
            </header>
            if let Some(r) = &*opening.reading {
                <ReadProgress reading={r.clone()} {on_cancel} />
            }
            if let Some(notice) = &state.notice {
                <div class={classes!("notice", notice.is_error.then_some("error"))} role={if notice.is_error { "alert" } else { "status" }} data-testid="notice">
                    <p>{ notice.text.clone() }</p>
                    <button type="button" onclick={dismiss} aria-label="Dismiss this message">{ "×" }</button>
                </div>
            }
            if !state.traces.opened.is_empty() {
                <TraceList opened={state.traces.opened.clone()} pair={state.traces.pair} comparing={*opening.comparing}
                    on_show={on_show_trace} {on_pick} {on_remove} {on_compare} />
            }
            if let Some(view) = state.sim.clone() {
                <SimPanel {view} on_form={on_sim_form} on_close={on_close_sim} on_error={on_error.clone()} make_fragment={make_fragment.clone()} />
            } else if let Some(view) = trace_view.clone() {
                <TracePanel {view} on_close={on_close_trace} on_error={on_error.clone()} make_fragment={make_fragment.clone()} />
            } else {
            if let Some((file_name, report)) = optrace {
                <OptracePanel {file_name} {report} on_close={on_close_optrace} on_error={on_error.clone()} />
            } else {
            <div class="view-tabs" role="group" aria-label="What to analyse">
                <button type="button" aria-pressed={(!is_model).to_string()} data-testid="tab-transformer" onclick={back_to_transformer.clone()}>{ "Transformer block" }</button>
                <button type="button" aria-pressed={is_model.to_string()} data-testid="tab-model" onclick={model_cb.show.clone()}>{ "Model × chip" }</button>
            </div>
            if is_model {
            <section class="panel" aria-labelledby="inputs-h">
                <h2 id="inputs-h">{ "Model × chip" }</h2>
                <p class="hint">{ "A model config (built in, or drop a NeuSim model JSON) as the op graph of one layer of each kind, timed on the chip (the time model below uses the same one; drop a chip JSON to add a chip)." }</p>
                <ModelFormView form={state.model_form()} model_files={state.time.model_files.clone()} error={error.clone()}
                    workload={shown.as_ref().and_then(|c| c.workload.clone())} chip={state.time.chip().ok()}
                    chip_options={state.time.chip_options()} chip_choice={state.time.chip.clone()} on_chip={model_cb.chip.clone()}
                    on_field={model_cb.field.clone()} on_model={model_cb.model.clone()} on_phase={model_cb.phase.clone()} on_error={on_error.clone()} />
            </section>
            } else {
            <section class="panel" aria-labelledby="inputs-h">
                <h2 id="inputs-h">{ "Transformer block" }</h2>
                if let Some(name) = &graph_name {
                    <p class="hint">
                        { format!("Showing the op graph {name}. Change an input to analyse the transformer block instead, or ") }
                        <button type="button" class="link" onclick={back_to_transformer}>{ "go back to the default block" }</button>
                        { "." }
                    </p>
                } else {
                    <p class="hint">{ "Attention + MLP block of the fusion spec: QKV projection, attention, output projection, residuals, layer norms and a GELU MLP. H must be a multiple of NH." }</p>
                }
                <TransformerFormView form={state.form()} error={if graph_name.is_none() { error.clone() } else { None }} {on_change} />
            </section>
            }
            }
            {
                match shown {
                    Some(c) => html! { <>
                        <section class="panel results" aria-labelledby="results-h" data-stale={error.is_some().to_string()}>
                            <div class="results-head">
                                <h2 id="results-h" data-testid="results-title">{ c.title.clone() }</h2>
                                <ShareLink {make_fragment} />
                            </div>
                            if error.is_some() {
                                <p class="stale-note">{ "These figures are for the last valid inputs; fix the input above to update them." }</p>
                            }
                            <Summary report={c.report.clone()} />
                            <div class="charts">
                                <TrafficChart id="chart-groups" report={c.report.clone()} kind={ChartKind::PerGroup} />
                                <TrafficChart id="chart-total" report={c.report.clone()} kind={ChartKind::Total} />
                            </div>
                            <GroupsTable report={c.report.clone()} />
                            <Exports report={c.report.clone()} base_name={base_name.clone()} on_error={on_error.clone()} />
                        </section>
                        <TimePanel graph={c.graph.clone()} analysis={c.analysis.clone()} workload={c.workload.clone()}
                            time={state.time.clone()} on_chip={model_cb.chip.clone()} {on_error} {base_name} />
                        { for calibration_panel.clone() }
                        <section class="panel" aria-labelledby="groups-h">
                            <h2 id="groups-h">{ "Fusion groups" }</h2>
                            <GroupView graph={c.graph.clone()} report={c.report.clone()} selected={state.selected_op} {on_select} />
                        </section>
                    </> },
                    None => html! { <>
                        <section class="panel empty" role="alert">
                            <p>{ error.unwrap_or_else(|| "Nothing to show yet: open an op graph or enter the transformer block's sizes.".to_string()) }</p>
                        </section>
                        { for calibration_panel.clone() }
                    </> },
                }
            }
            }
            <footer class="foot">
                <p>{ "Everything runs locally in WebAssembly; no file or figure leaves this page. Share links carry the state in the part after #, which browsers never send to a server." }</p>
            </footer>
        </div>
    }
}
