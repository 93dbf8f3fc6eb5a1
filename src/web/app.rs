//! The page: header with the Open button, the progress of a read, notices, the opened traces,
//! and one of the views (simulator table, trace, op trace, or the graph views with their
//! figures). Files dropped anywhere on the page are opened.

use yew::prelude::*;

use super::browser;
use super::components::compile_log_panel::CompileLogPanel;
use super::components::file_open::FileOpen;
use super::components::graph_inputs::GraphInputs;
use super::components::optrace_panel::OptracePanel;
use super::components::ranks_panel::RanksPanel;
use super::components::read_progress::ReadProgress;
use super::components::results::Results;
use super::components::sim_panel::SimPanel;
use super::components::trace_list::TraceList;
use super::components::trace_panel::TracePanel;
use super::hooks::{use_hash_restore, use_window_drop};
use super::opening::Opening;
use super::page_state::PageState;
use page::{Action, LoadedTrace, PairSide, Reading, Source, State};

/// Makes the page's callbacks, one line each.
#[derive(Clone)]
struct Dispatch(UseReducerHandle<PageState>);

impl Dispatch {
    /// A callback that dispatches the action `make` builds from its argument.
    fn to<T: 'static>(&self, make: impl Fn(T) -> Action + 'static) -> Callback<T> {
        let state = self.0.clone();
        Callback::from(move |v| state.dispatch(make(v)))
    }

    /// Like [`Dispatch::to`], for a change of what is analysed: the share link in the address
    /// no longer describes the page, so it is cleared first.
    fn edit<T: 'static>(&self, make: impl Fn(T) -> Action + 'static) -> Callback<T> {
        let state = self.0.clone();
        Callback::from(move |v| {
            browser::clear_fragment();
            state.dispatch(make(v))
        })
    }
}

#[function_component(App)]
pub fn app() -> Html {
    let state = use_reducer(|| PageState(State::from_fragment(&browser::fragment())));
    use_hash_restore(state.clone());
    let dragging = use_state_eq(|| false);
    let opening = Opening {
        state: state.clone(),
        reading: use_state(|| None::<Reading>),
        current: use_mut_ref(Vec::new),
        worker: use_mut_ref(|| None),
        reader: use_mut_ref(|| None),
        comparing: use_state_eq(|| false),
    };
    {
        // The analysis worker (its own WebAssembly) starts once the page has drawn, so that the
        // first file dropped does not wait for it to load.
        let opening = opening.clone();
        use_effect_with((), move |_| {
            wasm_bindgen_futures::spawn_local(async move {
                browser::next_task().await;
                opening.prewarm();
            });
        });
    }
    let d = Dispatch(state.clone());
    // Callbacks that start work (reading files, comparing) go through `opening`.
    let with_opening = |run: fn(&Opening)| {
        let opening = opening.clone();
        Callback::from(move |_: ()| run(&opening))
    };
    let on_files = {
        let opening = opening.clone();
        Callback::from(move |files: Vec<web_sys::File>| {
            opening.open_files(files.into_iter().map(|f| (f.clone().into(), f.name())).collect())
        })
    };
    use_window_drop(on_files.clone(), dragging.setter());
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
    let on_remove = {
        let (state, opening) = (state.clone(), opening.clone());
        Callback::from(move |id| {
            let Some(t) = state.traces.get(id) else { return };
            opening.forget(t);
            // A rank of the job held: the job is made again from the ranks left.
            // (Read before dispatching: the handle may already show the state after it.)
            let in_job = state.traces.job.as_ref().is_some_and(|j| j.ranks.iter().any(|(_, f)| *f == t.file_name));
            let job_shown = state.traces.job_shown;
            let rest: Vec<LoadedTrace> = state.traces.opened.iter().filter(|o| o.id != id).cloned().collect();
            state.dispatch(Action::RemoveTrace(id));
            if in_job {
                opening.redo_job(rest, job_shown);
            }
        })
    };
    let make_fragment = {
        let state = state.clone();
        Callback::from(move |()| state.shared_view().map(|v| share::encode(&v)))
    };
    let on_error = d.to(Action::Fail);
    // ByAddress: the sections compare it by identity (they redraw with the page, as before).
    let snapshot = page::ByAddress::new((*state).clone());
    let view = if let Some(view) = state.sim.clone() {
        html! { <SimPanel {view} on_form={d.to(Action::SetSimForm)} on_close={d.to(|()| Action::CloseSimTable)}
        on_error={on_error.clone()} make_fragment={make_fragment.clone()} /> }
    } else if let Some(view) = state.traces.view.clone() {
        // A view picked is a step in the history (Back returns to the one before), unless
        // the address holds a share link, which stays as it was pasted.
        let on_tab = {
            let state = state.clone();
            Callback::from(move |tab: page::ResultsTab| {
                browser::push_view(tab.id());
                state.dispatch(Action::ShowTab(tab));
            })
        };
        let tab = state.traces.tab;
        html! { <TracePanel {view} on_close={d.to(|()| Action::CloseTrace)} on_error={on_error.clone()}
        make_fragment={make_fragment.clone()} on_chip={d.to(Action::TraceChip)} {tab} {on_tab} /> }
    } else if let Some(drawn) = state.traces.job.clone().filter(|_| state.traces.job_shown) {
        let on_rank = {
            let state = state.clone();
            Callback::from(move |rank: u32| {
                state.dispatch(match state.traces.rank_trace(rank) {
                    Some(t) => Action::ShowTrace(t.id),
                    None => Action::Fail(format!("Rank {rank}'s trace is no longer opened: open its file again.")),
                })
            })
        };
        html! { <RanksPanel {drawn} {on_rank} on_close={d.to(|()| Action::CloseTrace)} on_error={on_error.clone()}
        make_fragment={make_fragment.clone()} /> }
    } else if let Some(kernels) = state.compile_log.clone() {
        html! { <CompileLogPanel {kernels} on_close={d.to(|()| Action::CloseCompileLog)} /> }
    } else {
        let inputs = match &state.source {
            Source::OpTrace { file_name, report, .. } => html! {
                <OptracePanel file_name={AttrValue::from(file_name.clone())} report={report.clone()}
                    on_close={d.to(|()| Action::ResetTransformer)} on_error={on_error.clone()} />
            },
            _ => html! {
                <GraphInputs state={snapshot.clone()} on_transformer_field={d.edit(|(f, v)| Action::SetField(f, v))}
                    on_reset_transformer={d.edit(|()| Action::ResetTransformer)} on_show_model={d.edit(|()| Action::ShowModel)}
                    on_model_field={d.edit(|(f, v)| Action::SetModelField(f, v))} on_model={d.edit(Action::SetModel)}
                    on_phase={d.edit(Action::SetPhase)} on_chip={d.edit(Action::SetChip)} on_error={on_error.clone()} />
            },
        };
        html! { <>
            { inputs }
            <Results state={snapshot} make_fragment={make_fragment.clone()} on_select={d.to(Action::SelectOp)}
                on_chip={d.edit(Action::SetChip)} on_unload_calibration={d.edit(|()| Action::UnloadCalibration)}
                on_error={on_error.clone()} />
        </> }
    };
    html! {
        <div class={classes!("page", dragging.then_some("dragging"))}>
            <header class="top">
                <h1>{ "fusionscope" }</h1>
                <p class="tagline">{ "Kernel fusion groups and the global-memory traffic they save, computed in your browser." }</p>
                <div class="top-actions">
                    <FileOpen {on_files} />
                    <span class="hint" title="Op graphs, PyTorch-profiler traces (two at once are compared) and the other kinds fusionscope reads">{ "or drop files anywhere" }</span>
                    <button type="button" data-testid="example" onclick={with_opening(Opening::open_example).reform(|_: MouseEvent| ())}
                        title="Two small real traces of BERT-small (eager) on an NVIDIA H100 and an AMD MI300X, bundled with the page">
                        { "Try the AMD-vs-NVIDIA example" }
                    </button>
                </div>
            </header>
            if let Some(r) = &*opening.reading {
                <ReadProgress reading={r.clone()} on_cancel={with_opening(Opening::cancel)} />
            }
            if let Some(notice) = &state.notice {
                <div class={classes!("notice", notice.is_error.then_some("error"))} role={if notice.is_error { "alert" } else { "status" }} data-testid="notice">
                    <p>{ notice.text.clone() }</p>
                    <button type="button" onclick={d.to(|_: MouseEvent| Action::DismissNotice)} aria-label="Dismiss this message">{ "×" }</button>
                </div>
            }
            if !state.traces.opened.is_empty() {
                <TraceList opened={state.traces.opened.clone()} pair={state.traces.pair} comparing={*opening.comparing}
                    on_show={d.to(Action::ShowTrace)} on_pick={d.to(|(side, id): (PairSide, u32)| Action::PickTrace(side, id))}
                    {on_remove} {on_compare} />
            }
            if state.traces.job.is_some() && !state.traces.job_shown {
                <p class="ranks-back">
                    <button type="button" data-testid="show-ranks" onclick={d.to(|_: MouseEvent| Action::ShowJob)}>
                        { format!("Ranks of the job ({})", state.traces.job.as_ref().map_or(0, |j| j.ranks.len())) }
                    </button>
                </p>
            }
            { view }
            <footer class="foot">
                <p>{ "Everything runs locally in WebAssembly; no file or figure leaves this page. Share links carry the state in the part after #, which browsers never send to a server." }</p>
            </footer>
        </div>
    }
}
