//! Share links and the page: the state a link's fragment restores ([`State::from_fragment`])
//! and what a link of the page holds ([`State::shared_view`]). A link that cannot be opened
//! gives the default page with a message saying why, never a blank one.

use super::by_address::ByAddress;
use super::form::sim::SetupForm;
use super::form::transformer;
use super::state::{Computed, Notice, SimView, Source, State};
use super::traces::{GapView, ResultsTab, TraceView, Traces};
use analysis::findings::Overview;
use hardware::ChipChoice;
use share::{self, SharedState, SharedView};

use limits::SHARED_OPTRACE_BYTES;

impl State {
    /// The page as a share link fragment describes it; a link that cannot be opened gives the
    /// default page with a message saying why.
    pub fn from_fragment(fragment: &str) -> State {
        let fragment = fragment.strip_prefix('#').unwrap_or(fragment);
        if fragment.is_empty() {
            return State::default();
        }
        // A view of the results without a link (`#view=fusion`): the tab a trace opens in.
        if let Some(id) = fragment.strip_prefix("view=") {
            let tab = ResultsTab::from_id(id).unwrap_or_default();
            return State { traces: Traces { tab, ..Traces::default() }, ..State::default() };
        }
        match share::decode(fragment) {
            Ok(shared) => State::restored(shared, None),
            Err(e) => State {
                notice: Some(Notice { text: format!("This share link cannot be opened: {e}."), is_error: true }),
                ..State::default()
            },
        }
    }

    pub(super) fn restored(shared: SharedState, last_good: Option<Computed>) -> State {
        let mut state = match shared.view {
            SharedView::Transformer { config } => State::with_source(Source::Transformer(config.into()), last_good),
            SharedView::Graph { file_name, graph } => match share::graph_of(&graph) {
                Ok(g) => State::with_source(Source::Graph { file_name, graph: ByAddress::new(g) }, last_good),
                Err(e) => State {
                    notice: Some(Notice {
                        text: format!("This share link holds a graph that is not valid: {e}."),
                        is_error: true,
                    }),
                    ..State::default()
                },
            },
            SharedView::TraceSummary { file_name, summary, trimmed, time, overview } => {
                let time = time.map(|t| ByAddress::new(*t));
                let view = TraceView::summary(file_name, ByAddress::new(summary), time, trimmed)
                    .with_overview(overview.map(|o| *o));
                State { traces: Traces { view: Some(view), ..Traces::default() }, ..State::default() }
            }
            SharedView::TraceComparison { files, comparison, trimmed, gap, fusion, overview } => {
                let fusion = fusion.map(|f| {
                    let [mut a, mut b] = *f;
                    // A link leaves out the constant definition of GPU time.
                    for s in [&mut a, &mut b] {
                        s.totals.gpu_time_definition = analysis::trace_fusion::GPU_TIME_DEFINITION.to_string();
                    }
                    [ByAddress::new(a), ByAddress::new(b)]
                });
                let gap = gap.map(|g| GapView { gap: ByAddress::new(*g), times: None, fusion });
                let view = TraceView::comparison(files, ByAddress::new(comparison), gap, trimmed)
                    .with_overview(overview.map(|o| *o));
                State { traces: Traces { view: Some(view), ..Traces::default() }, ..State::default() }
            }
            SharedView::Model { spec } => State::with_source(Source::Model(spec.into()), last_good),
            SharedView::Ranks { drawn } => {
                let traces = Traces { job: Some(ByAddress::new(drawn)), job_shown: true, ..Traces::default() };
                State { traces, ..State::default() }
            }
            SharedView::SimTable { file_name, text, setup, notes } => match simcsv::parse_sim_csv(&text) {
                Ok(table) => {
                    let (text, table, form) = (ByAddress::new(text), ByAddress::new(table), SetupForm::from(&setup));
                    State { sim: Some(SimView { file_name, text, table, form, notes }), ..State::default() }
                }
                Err(e) => State {
                    notice: Some(Notice {
                        text: format!("This share link holds a simulator table that cannot be read: {e}."),
                        is_error: true,
                    }),
                    ..State::default()
                },
            },
            SharedView::OpTrace { file_name, text } => match optrace::analyze_optrace_with_graph(&text) {
                Ok((report, graph)) => {
                    let (text, report, graph) = (ByAddress::new(text), ByAddress::new(report), ByAddress::new(graph));
                    State::with_source(Source::OpTrace { file_name, text, report, graph }, last_good)
                }
                Err(e) => State {
                    notice: Some(Notice {
                        text: format!("This share link holds an op trace that cannot be read: {e}."),
                        is_error: true,
                    }),
                    ..State::default()
                },
            },
        };
        if let Some(chip) = shared.chip {
            state.time.chip = chip;
        }
        if let Source::Model(form) = &state.source {
            state.time.last_model = Some(form.clone());
        }
        // The sender's view of the results; an id of no view (an edited link) opens the overview.
        state.traces.tab = shared.tab.as_deref().and_then(ResultsTab::from_id).unwrap_or_default();
        // The selected op, by name; a name the graph lacks (an edited link) selects nothing.
        let graph = state.current.as_ref().ok().map(|c| c.graph.clone());
        state.selected_op = shared.selected_op.and_then(|name| graph?.ops().iter().position(|op| op.name == name));
        state
    }

    /// What a share link of this page holds, or why there is nothing to share: the view's
    /// state, held to the limits a link is opened with ([`share::check_shareable`]), so that
    /// the page never makes a link that would not open.
    pub fn shared_view(&self) -> Result<SharedState, String> {
        let mut state = self.shared_state()?;
        // The results' open view, unless it is the overview every link opens in.
        if self.traces.view.is_some() && self.traces.tab != ResultsTab::Overview {
            state.tab = Some(self.traces.tab.id().to_string());
        }
        share::check_shareable(&state)
            .map_err(|e| format!("This view is too large for a share link: {e}. Send the file instead."))?;
        Ok(state)
    }

    fn shared_state(&self) -> Result<SharedState, String> {
        if let Some(sim) = &self.sim {
            let setup = sim.form.setup().map_err(|e| format!("Nothing to share while the workload is invalid: {e}"))?;
            let view = SharedView::SimTable {
                file_name: sim.file_name.clone(),
                text: String::clone(&sim.text),
                setup,
                notes: sim.notes.clone(),
            };
            return Ok(self.with_chip(view.into()));
        }
        if let (None, true, Some(job)) = (&self.traces.view, self.traces.job_shown, &self.traces.job) {
            return Ok(SharedView::Ranks { drawn: share::trim_ranks(job) }.into());
        }
        match &self.traces.view {
            Some(TraceView::Summary { file_name, summary, trimmed, time, overview }) => {
                let (summary, cut) = share::trim_summary(summary);
                let (time, time_cut) = match time {
                    Some(t) => {
                        let (t, cut) = share::trim_time(t);
                        (Some(Box::new(t)), cut)
                    }
                    None => (None, false),
                };
                let trimmed = *trimmed || cut || time_cut;
                let overview = Some(Box::new(Overview::clone(overview)));
                let view = SharedView::TraceSummary { file_name: file_name.clone(), summary, trimmed, time, overview };
                return Ok(share::fit_time_rows(self.with_chip(view.into())));
            }
            Some(TraceView::Comparison { files, comparison, trimmed, gap, overview }) => {
                let (comparison, cut) = share::trim_comparison(comparison);
                // Each side's fusion, from its report (or the link it came from), trimmed.
                let sides = gap.as_ref().and_then(|g| match (&g.times, &g.fusion) {
                    (Some([t0, t1]), _) => Some(share::fusion_pair([t0.fusion.as_ref()?, t1.fusion.as_ref()?])),
                    (None, Some([f0, f1])) => Some(share::fusion_pair([&**f0, &**f1])),
                    (None, None) => None,
                });
                let (gap, gap_cut) = match gap {
                    Some(g) => {
                        let (g, cut) = share::trim_gap(&g.gap);
                        (Some(Box::new(g)), cut)
                    }
                    None => (None, false),
                };
                let fusion_cut = sides.as_ref().is_some_and(|(_, cut)| *cut);
                let fusion = sides.map(|(f, _)| Box::new(f));
                let trimmed = *trimmed || cut || gap_cut || fusion_cut;
                let overview = Some(Box::new(Overview::clone(overview)));
                let view =
                    SharedView::TraceComparison { files: files.clone(), comparison, trimmed, gap, fusion, overview };
                return Ok(share::fit_time_rows(self.with_chip(view.into())));
            }
            None => {}
        }
        let computed =
            self.current.as_ref().map_err(|e| format!("Nothing to share while the inputs are invalid: {e}"))?;
        let view = match &self.source {
            Source::Transformer(form) => SharedView::Transformer { config: transformer::config(form)? },
            Source::Graph { file_name, graph } => SharedView::of_graph(file_name, graph),
            Source::OpTrace { text, .. } if text.len() > SHARED_OPTRACE_BYTES => {
                return Err(format!(
                    "This op trace is {} of text, too long for a share link (at most {}): send the file instead.",
                    units::format_bytes(text.len() as u64),
                    units::format_bytes(SHARED_OPTRACE_BYTES as u64)
                ))
            }
            Source::OpTrace { file_name, text, .. } => {
                SharedView::OpTrace { file_name: file_name.clone(), text: String::clone(text) }
            }
            Source::Model(form) => SharedView::Model { spec: form.spec()? },
        };
        let selected_op = self.selected_op.filter(|&i| i < computed.graph.len());
        let selected_op = selected_op.map(|i| computed.graph.ops()[i].name.clone());
        Ok(self.with_chip(SharedState { view, selected_op, chip: None, tab: None }))
    }

    /// A link's state with the time view's chip, unless it is the default one (so that links
    /// that keep the default chip carry nothing for it and stay short).
    fn with_chip(&self, shared: SharedState) -> SharedState {
        let chip = Some(self.time.chip.clone()).filter(|c| *c != ChipChoice::default());
        SharedState { chip, ..shared }
    }
}
