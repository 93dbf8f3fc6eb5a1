//! The reducer: how each [`Action`] changes the page's [`State`].

use super::action::Action;
use super::by_address::ByAddress;
use super::form::model::ModelForm;
use super::state::{Computed, Notice, SimView, Source, State};
use super::time_inputs::TimeInputs;
use super::traces::{TraceView, Traces};
use fusion::analyse;
use fusion::transformer::TransformerConfig;
use units::plural;
use view::fusion::exec_trace_line;
use view::time::capture_line;

impl State {
    /// The state after `action`: the page's only transition. Pure (no browser call), so every
    /// path is tested natively; the page wraps it as Yew's `Reducible` (`web::app`).
    pub fn apply(&self, action: Action) -> State {
        let last_good = self.last_good.clone();
        let with_notice =
            |text: String, is_error: bool| State { notice: Some(Notice { text, is_error }), ..self.clone() };
        let source = match action {
            Action::SetField(field, value) => Source::Transformer(self.form().with(field, value)),
            Action::ShowModel => Source::Model(self.model_form()),
            Action::SetModelField(field, value) => {
                let form = self.model_form();
                Source::Model(ModelForm { numbers: form.numbers.with(field, value), ..form })
            }
            Action::SetModel(model) => Source::Model(ModelForm { model, ..self.model_form() }),
            Action::SetPhase(phase) => Source::Model(ModelForm { phase, ..self.model_form() }),
            Action::AddModelFile(model) => {
                let time = self.time.with_model_file(model.clone());
                let form = ModelForm { model, ..self.model_form() };
                let traces = self.traces.hidden();
                return State { traces, time, ..State::with_source(Source::Model(form), last_good) };
            }
            Action::SetChip(chip) => return State { time: TimeInputs { chip, ..self.time.clone() }, ..self.clone() },
            // A chip or profile acts on the time view: leave the trace view to show it.
            Action::AddChip(chip) => {
                let traces = self.traces.hidden();
                return State { time: self.time.with_chip(chip), traces, sim: None, notice: None, ..self.clone() };
            }
            Action::LoadCalibration(calibration) => {
                let time = TimeInputs { calibration: Some(calibration), ..self.time.clone() };
                let traces = self.traces.hidden();
                return State { time, traces, sim: None, notice: None, ..self.clone() };
            }
            Action::UnloadCalibration => {
                return State { time: TimeInputs { calibration: None, ..self.time.clone() }, ..self.clone() }
            }
            Action::ResetTransformer => Source::Transformer(TransformerConfig::default().into()),
            Action::Fail(text) => return with_notice(text, true),
            Action::Inform(text) => return with_notice(text, false),
            Action::DismissNotice => return State { notice: None, ..self.clone() },
            Action::SelectOp(selected_op) => return State { selected_op, ..self.clone() },
            Action::ShowTab(tab) => return State { traces: Traces { tab, ..self.traces.clone() }, ..self.clone() },
            Action::Restore(view) => {
                // The link's trace view (if any); the traces opened here stay for comparing.
                // The loaded chips, models and calibration stay; the link may choose the chip.
                let restored = State::restored(*view, last_good);
                let traces = Traces {
                    view: restored.traces.view.clone(),
                    job: restored.traces.job.clone().or_else(|| self.traces.job.clone()),
                    job_shown: restored.traces.job_shown,
                    tab: restored.traces.tab,
                    ..self.traces.clone()
                };
                let time = TimeInputs {
                    chip: restored.time.chip.clone(),
                    last_model: restored.time.last_model.clone().or(self.time.last_model.clone()),
                    ..self.time.clone()
                };
                return State { traces, time, ..restored };
            }
            Action::OpenTrace(loaded) => {
                // An execution trace dropped alone waits for its trace; if the trace that comes
                // is of another run, the fusion view's line says so, and so does an alert.
                let notice = loaded
                    .time
                    .fusion
                    .as_ref()
                    .and_then(|f| f.exec_trace.as_ref())
                    .filter(|e| e.linked_ops == 0)
                    .map(|e| Notice { text: other_run(&e.file, e.ops, &loaded.file_name), is_error: true });
                return State { traces: self.traces.open(loaded), notice, sim: None, ..self.clone() };
            }
            Action::CaptureOpened { file_name, graphs, joined } => {
                let traces = self.traces.with_times(&joined);
                let text = match joined.first().and_then(|(id, time)| Some((traces.get(*id)?, time))) {
                    Some((first, time)) => {
                        let line = time.capture.as_ref().map(capture_line).unwrap_or_default();
                        let more = match joined.len() {
                            1 => String::new(),
                            n => format!(" (and {} more traces)", n - 1),
                        };
                        format!("{file_name} (a graph capture) was joined to {}{more}. {line}", first.file_name)
                    }
                    None => format!(
                        "{file_name} is a graph-capture trace ({graphs} graphs captured): the traces of its replays \
                         opened with it or after it get the captured ops and shapes."
                    ),
                };
                let traces = match joined.first() {
                    Some((id, _)) => traces.show(*id),
                    None => traces,
                };
                return State { traces, notice: Some(Notice { text, is_error: false }), sim: None, ..self.clone() };
            }
            Action::ExecTraceOpened { file_name, ops, joined, unlinked } => {
                let traces = self.traces.with_times(&joined);
                let ops_text = plural(ops, "op", "ops");
                let notice = match joined.first().and_then(|(id, time)| Some((traces.get(*id)?, time))) {
                    Some((first, time)) => {
                        let line = time.fusion.as_ref().and_then(exec_trace_line).unwrap_or_default();
                        let more = match joined.len() {
                            1 => String::new(),
                            n => format!(" (and {})", plural(n as u64 - 1, "more trace", "more traces")),
                        };
                        let text = format!(
                            "{file_name} (an execution trace of {ops_text}) was linked to {}{more}: its fusion now takes the data flow from it. {line}",
                            first.file_name
                        );
                        Notice { text, is_error: false }
                    }
                    None if !unlinked.is_empty() => Notice { text: other_run(&file_name, ops, &unlinked.join(", ")), is_error: true },
                    None => Notice {
                        text: format!(
                            "{file_name} is an execution trace ({ops_text}): it needs the Kineto trace of the same run. Drop both together, or the trace now: its fusion then takes the exact data flow from the execution trace."
                        ),
                        is_error: false,
                    },
                };
                let traces = match joined.first() {
                    Some((id, _)) => traces.show(*id),
                    None => traces,
                };
                return State { traces, notice: Some(notice), sim: None, ..self.clone() };
            }
            Action::CompileLogOpened { file_name, kernels, joined } => {
                let traces = self.traces.with_times(&joined);
                let count = plural(kernels.kernels.len() as u64, "kernel", "kernels");
                return match joined.first().and_then(|(id, _)| Some((*id, traces.get(*id)?.file_name.clone()))) {
                    Some((id, first)) => {
                        let more = match joined.len() {
                            1 => String::new(),
                            n => format!(" (and {})", plural(n as u64 - 1, "more trace", "more traces")),
                        };
                        let text = format!(
                            "{file_name} (a torch.compile log of {count}) was joined to {first}{more}: its compiled kernels' \
                             groups are now Inductor's own (how: Inductor provenance), listed under Fusion with their calls and time."
                        );
                        let notice = Some(Notice { text, is_error: false });
                        State { traces: traces.show(id), notice, sim: None, compile_log: None, ..self.clone() }
                    }
                    None => {
                        let text = format!(
                            "{file_name} is a torch.compile log of {count}, each with its exact post-grad nodes and bytes. \
                             Drop the profiler trace of the same run with it for each kernel's calls and time."
                        );
                        let notice = Some(Notice { text, is_error: false });
                        State { traces: traces.hidden(), notice, sim: None, compile_log: Some(kernels), ..self.clone() }
                    }
                };
            }
            Action::CloseCompileLog => return State { compile_log: None, ..self.clone() },
            Action::OpenAnalysedGraph { file_name, graph, report } => {
                let title = format!("Op graph {file_name}");
                // The report comes from the worker; the time model's grouping is recomputed here
                // (linear and a small share of the whole: ~60 ms at 100 k ops, natively).
                let analysis = ByAddress::new(analyse(&graph));
                let computed = Computed { title, graph: graph.clone(), report, analysis, workload: None };
                let traces = self.traces.hidden();
                return State {
                    source: Source::Graph { file_name, graph },
                    current: Ok(computed.clone()),
                    last_good: Some(computed),
                    notice: None,
                    selected_op: None,
                    traces,
                    sim: None,
                    compile_log: None,
                    time: self.time.clone(),
                };
            }
            Action::ShowTrace(id) => return State { traces: self.traces.show(id), sim: None, ..self.clone() },
            Action::PickTrace(side, id) => return State { traces: self.traces.pick(side, id), ..self.clone() },
            Action::RemoveTrace(id) => return State { traces: self.traces.remove(id), ..self.clone() },
            Action::TraceChip(key) if key.is_empty() => return self.clone(),
            Action::TraceChip(key) => {
                return match hardware::preset(&key) {
                    Ok(chip) => {
                        let picked = hardware::DetectedChip { detected_from: "picked on the page".into(), chip };
                        State { traces: self.traces.with_chip(picked), notice: None, ..self.clone() }
                    }
                    Err(e) => State { notice: Some(Notice { text: e.to_string(), is_error: true }), ..self.clone() },
                };
            }
            Action::ShowComparison { files, comparison } => {
                let gap = self.traces.pair_gap(&comparison);
                let view = TraceView::comparison(files, comparison, gap, false);
                let traces = Traces { view: Some(view), job_shown: false, ..self.traces.clone() };
                return State { traces, notice: None, sim: None, ..self.clone() };
            }
            Action::OpenOpTrace { file_name, text, report, graph } => {
                Source::OpTrace { file_name, text, report, graph }
            }
            Action::OpenSimTable(view) => {
                let traces = self.traces.hidden();
                return State { sim: Some(view), traces, notice: None, ..self.clone() };
            }
            Action::SetSimForm(form) => {
                let sim = self.sim.clone().map(|v| SimView { form, ..v });
                return State { sim, ..self.clone() };
            }
            Action::CloseSimTable => return State { sim: None, ..self.clone() },
            Action::CloseTrace => return State { traces: self.traces.hidden(), ..self.clone() },
            Action::ShowRanks(job) => {
                return State { traces: self.traces.with_job(job), notice: None, sim: None, ..self.clone() }
            }
            Action::RedoneJob { job, show } => {
                // Shown again only if nothing else has been opened since the removal.
                let traces = if show && self.traces.view.is_none() {
                    self.traces.with_job(job)
                } else {
                    Traces { job: Some(job), ..self.traces.clone() }
                };
                return State { traces, ..self.clone() };
            }
            Action::ShowJob => {
                return match self.traces.job.clone() {
                    Some(job) => State { traces: self.traces.with_job(job), sim: None, ..self.clone() },
                    None => self.clone(),
                }
            }
            Action::WorkerStopped(text) => {
                let (traces, lost) = self.traces.without_worker_traces();
                let text = match lost.as_slice() {
                    [] => text,
                    names => format!(
                        "{text} The trace{} it held ({}) {} no longer listed: open {} again to compare.",
                        if names.len() == 1 { "" } else { "s" },
                        names.join(", "),
                        if names.len() == 1 { "is" } else { "are" },
                        if names.len() == 1 { "it" } else { "them" },
                    ),
                };
                return State { traces, notice: Some(Notice { text, is_error: true }), ..self.clone() };
            }
        };
        // Changing the op graph or the block leaves the trace view; the traces stay for comparing.
        let traces = self.traces.hidden();
        let mut time = self.time.clone();
        if let Source::Model(form) = &source {
            time.last_model = Some(form.clone());
        }
        State { traces, time, ..State::with_source(source, last_good) }
    }
}

/// The alert for an execution trace that links to none of the traces it met (named, joined).
fn other_run(et_file: &str, ops: u64, traces: &str) -> String {
    format!(
        "{et_file} is an execution trace of another run: none of its {} has a CPU op with its record-function id and name in {traces}. Drop it with the Kineto trace of the same run.",
        plural(ops, "op", "ops")
    )
}
