//! The page's state and the one place it changes: [`State::reduce`] applies an [`Action`].
//!
//! Every figure on the page is derived from [`State::source`] by the core; the state keeps
//! the last valid analysis so that a half-typed input shows a message beside the figures of
//! the last valid block instead of blanking them.

use std::rc::Rc;

use yew::Reducible;

use super::shared::Shared;
use super::time_model::{LoadedCalibration, TimeModel};

use crate::fusion::transformer::{transformer_block, TransformerConfig};
use crate::fusion::{analyze, Analysis, AnalysisReport, OpGraph};
use crate::hardware::{Chip, ChipChoice};
use crate::optrace::OptraceReport;
use crate::share::{self, SharedState, SharedView};
use crate::simcsv::view::SetupForm;
use crate::simcsv::SimTable;
use crate::trace::pairing::default_pair;
use crate::trace::{classify, compare, Comparison, Input, Trace, TraceSummary, Vendor};
use crate::workload::form::parse_count;
use crate::workload::{ModelChoice, ModelField, ModelForm, Phase, Workload};

/// The transformer block's inputs as typed (text), so that bad input can be quoted back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TransformerForm {
    pub seq_len: String,
    pub hidden: String,
    pub heads: String,
    pub dtype_bytes: String,
}

impl From<TransformerConfig> for TransformerForm {
    fn from(c: TransformerConfig) -> Self {
        TransformerForm {
            seq_len: c.seq_len.to_string(),
            hidden: c.hidden_dim.to_string(),
            heads: c.num_heads.to_string(),
            dtype_bytes: c.dtype_bytes.to_string(),
        }
    }
}

/// One input of the transformer form.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    SeqLen,
    Hidden,
    Heads,
    DtypeBytes,
}

impl Field {
    pub const ALL: [Field; 4] = [Field::SeqLen, Field::Hidden, Field::Heads, Field::DtypeBytes];

    /// How the field is named on the page and in messages.
    pub fn label(self) -> &'static str {
        match self {
            Field::SeqLen => "Sequence length S",
            Field::Hidden => "Hidden size H",
            Field::Heads => "Heads NH",
            Field::DtypeBytes => "Bytes per element",
        }
    }

    /// The element id of the field's input.
    pub fn id(self) -> &'static str {
        match self {
            Field::SeqLen => "in-seq-len",
            Field::Hidden => "in-hidden",
            Field::Heads => "in-heads",
            Field::DtypeBytes => "in-dtype",
        }
    }
}

impl TransformerForm {
    pub fn get(&self, f: Field) -> &str {
        match f {
            Field::SeqLen => &self.seq_len,
            Field::Hidden => &self.hidden,
            Field::Heads => &self.heads,
            Field::DtypeBytes => &self.dtype_bytes,
        }
    }

    fn set(&mut self, f: Field, value: String) {
        match f {
            Field::SeqLen => self.seq_len = value,
            Field::Hidden => self.hidden = value,
            Field::Heads => self.heads = value,
            Field::DtypeBytes => self.dtype_bytes = value,
        }
    }

    /// The block's parameters, or a message naming the field that is not a whole number ≥ 1.
    pub fn config(&self) -> Result<TransformerConfig, String> {
        let num = |f: Field| parse_count(f.label(), self.get(f));
        Ok(TransformerConfig {
            seq_len: num(Field::SeqLen)?,
            hidden_dim: num(Field::Hidden)?,
            num_heads: num(Field::Heads)?,
            dtype_bytes: num(Field::DtypeBytes)?,
        })
    }
}

/// What the page analyses.
#[derive(Debug, Clone, PartialEq)]
pub enum Source {
    /// The built-in transformer block with the form's inputs.
    Transformer(TransformerForm),
    /// An op graph read from a file.
    Graph { file_name: String, graph: Shared<OpGraph> },
    /// An op trace (optrace text form): its case view, and its conversion to an op graph.
    OpTrace { file_name: String, text: Shared<String>, report: Shared<OptraceReport>, graph: Shared<OpGraph> },
    /// "Model × chip": the op graph a workload generator makes of a model config.
    Model(ModelForm),
}

/// A simulator op table and the workload it is compared with.
#[derive(Debug, Clone, PartialEq)]
pub struct SimView {
    pub file_name: String,
    /// The CSV as read, which a share link carries.
    pub text: Shared<String>,
    pub table: Shared<SimTable>,
    pub form: SetupForm,
    /// What was assumed when reading the workload from the file name.
    pub notes: Vec<String>,
}

/// The longest op-trace text a share link carries (it holds the text; the view is recomputed
/// from it). Deflate shrinks op traces about 8×, so this keeps such links near 8 KB.
pub const MAX_SHARED_OPTRACE_BYTES: usize = 64 * 1024;

/// A finished analysis and what it was computed from, in words.
#[derive(Debug, Clone, PartialEq)]
pub struct Computed {
    pub title: String,
    pub graph: Shared<OpGraph>,
    pub report: Shared<AnalysisReport>,
    /// The analysis itself, for the time model.
    pub analysis: Shared<Analysis>,
    /// For "Model × chip": the workload (layers, steps, runs of each op); the time view weights
    /// each op by its runs.
    pub workload: Option<Shared<Workload>>,
}

/// A file being read, for the progress bar.
#[derive(Debug, Clone, PartialEq)]
pub struct Reading {
    pub file_name: String,
    pub done: f64,
    pub total: f64,
    /// When reading started (milliseconds, `Date.now()`), for the rate.
    pub started_ms: f64,
}

impl Reading {
    /// Bytes per second so far (0 until time has passed).
    pub fn rate(&self, now_ms: f64) -> f64 {
        let seconds = (now_ms - self.started_ms) / 1000.0;
        if seconds > 0.0 {
            self.done / seconds
        } else {
            0.0
        }
    }
}

/// A message about something the user did that is not about the form: a file that cannot be
/// read, a share link that cannot be opened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notice {
    pub text: String,
    pub is_error: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub struct State {
    pub source: Source,
    /// The analysis of `source`, or why there is none.
    pub current: Result<Computed, String>,
    /// The last analysis that succeeded (shown, marked as such, while `current` is an error).
    pub last_good: Option<Computed>,
    pub notice: Option<Notice>,
    /// The op (index in file order) whose details are shown.
    pub selected_op: Option<usize>,
    /// Kineto traces opened and the trace view, if one is shown (in place of the op graph).
    pub traces: Traces,
    /// The simulator-table view, if one is shown (in place of everything else).
    pub sim: Option<SimView>,
    /// The chip, loaded chips and model configs, and the calibration profile of the time view.
    pub time: TimeModel,
}

/// Where an opened trace is kept, for comparing it with another.
#[derive(Debug, Clone, PartialEq)]
pub enum TraceHeld {
    /// By the analysis worker, under the trace's id (the page has only the summary).
    Worker,
    /// On the page (read without a worker).
    Page(Shared<Trace>),
}

/// A Kineto trace read from a file: its summary, and where the trace is kept for comparing.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadedTrace {
    /// Unique for the page's life (the worker's job id).
    pub id: u32,
    pub file_name: String,
    pub summary: Shared<TraceSummary>,
    pub held: TraceHeld,
}

impl LoadedTrace {
    /// The vendor the summary found (unknown if it has no platform).
    pub fn vendor(&self) -> Vendor {
        self.summary.platforms.first().map(|p| p.vendor).unwrap_or(Vendor::Unknown)
    }
}

/// What the trace panel shows.
#[derive(Debug, Clone, PartialEq)]
pub enum TraceView {
    /// One trace's summary.
    Summary {
        file_name: String,
        summary: Shared<TraceSummary>,
        /// From a share link whose kernel lists were shortened.
        trimmed: bool,
    },
    /// Two traces side by side.
    Comparison { files: (String, String), comparison: Shared<Comparison>, trimmed: bool },
}

/// One of the two traces of a comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PairSide {
    A,
    B,
}

/// The traces opened (in opening order), the two picked for comparing, and the view shown.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Traces {
    pub view: Option<TraceView>,
    pub opened: Vec<LoadedTrace>,
    /// Ids of the traces to compare, A and B.
    pub pair: Option<(u32, u32)>,
}

impl Traces {
    /// A newly read trace: its summary is shown, and the pair becomes the default one.
    fn open(&self, loaded: LoadedTrace) -> Traces {
        let view =
            TraceView::Summary { file_name: loaded.file_name.clone(), summary: loaded.summary.clone(), trimmed: false };
        let mut opened = self.opened.clone();
        opened.push(loaded);
        Traces { view: Some(view), pair: default_pair_of(&opened), opened }
    }

    /// The trace with this id.
    pub fn get(&self, id: u32) -> Option<&LoadedTrace> {
        self.opened.iter().find(|t| t.id == id)
    }

    /// The pair's traces, A and B.
    pub fn pair_traces(&self) -> Option<(&LoadedTrace, &LoadedTrace)> {
        let (a, b) = self.pair?;
        Some((self.get(a)?, self.get(b)?))
    }

    /// The trace's summary, shown.
    fn show(&self, id: u32) -> Traces {
        let view = self.get(id).map(|t| TraceView::Summary {
            file_name: t.file_name.clone(),
            summary: t.summary.clone(),
            trimmed: false,
        });
        Traces { view: view.or_else(|| self.view.clone()), ..self.clone() }
    }

    /// One side of the pair set to a trace; picking the other side's trace swaps the two.
    fn pick(&self, side: PairSide, id: u32) -> Traces {
        let (a, b) = self.pair.unwrap_or((id, id));
        let pair = match side {
            PairSide::A if b == id => (id, a),
            PairSide::A => (id, b),
            PairSide::B if a == id => (b, id),
            PairSide::B => (a, id),
        };
        Traces { pair: Some(pair), ..self.clone() }
    }

    /// The trace no longer listed; the pair falls back to the default if it held it, and a
    /// view of its summary goes.
    fn remove(&self, id: u32) -> Traces {
        let Some(gone) = self.get(id) else { return self.clone() };
        let opened: Vec<LoadedTrace> = self.opened.iter().filter(|t| t.id != id).cloned().collect();
        let pair = match self.pair {
            Some((a, b)) if a != id && b != id => Some((a, b)),
            _ => default_pair_of(&opened),
        };
        let view = match &self.view {
            Some(TraceView::Summary { summary, .. }) if *summary == gone.summary => None,
            other => other.clone(),
        };
        Traces { view, opened, pair }
    }
}

/// The default pair of `opened` (see [`crate::trace::pairing::default_pair`]), as ids.
fn default_pair_of(opened: &[LoadedTrace]) -> Option<(u32, u32)> {
    let vendors: Vec<Vendor> = opened.iter().map(LoadedTrace::vendor).collect();
    default_pair(&vendors).map(|(a, b)| (opened[a].id, opened[b].id))
}

/// Compares two traces read on the page (the fallback without a worker).
pub fn compare_on_page(a: &LoadedTrace, b: &LoadedTrace) -> Option<Comparison> {
    let (TraceHeld::Page(ta), TraceHeld::Page(tb)) = (&a.held, &b.held) else { return None };
    Some(compare(
        Input { trace: ta, file: Some(&a.file_name) },
        Input { trace: tb, file: Some(&b.file_name) },
        &classify,
    ))
}

/// Everything that can happen to the page.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// One transformer input changed (switches to the transformer block if a file was open).
    SetField(Field, String),
    /// Back to the built-in transformer block with the default inputs.
    ResetTransformer,
    /// A file or link could not be opened; the figures shown stay as they were.
    Fail(String),
    /// Something worth saying that is not an error (e.g. a file kind this page does not show).
    Inform(String),
    DismissNotice,
    /// Show (or hide, with `None`) an op's details.
    SelectOp(Option<usize>),
    /// The state a share link holds.
    Restore(SharedState),
    /// A Kineto trace was read: list it and show its summary.
    OpenTrace(LoadedTrace),
    /// An op graph was read and analysed (by the analysis worker).
    OpenAnalysedGraph {
        file_name: String,
        graph: Shared<OpGraph>,
        report: Shared<AnalysisReport>,
    },
    /// Show an opened trace's summary.
    ShowTrace(u32),
    /// Pick an opened trace as one side of the comparison.
    PickTrace(PairSide, u32),
    /// Remove a trace from the list.
    RemoveTrace(u32),
    /// Two traces compared (by the analysis worker): show the comparison.
    ShowComparison {
        files: (String, String),
        comparison: Shared<Comparison>,
    },
    /// Leave the trace view (back to the op graph or transformer block).
    CloseTrace,
    /// An op trace was read and converted.
    OpenOpTrace {
        file_name: String,
        /// The trace's text, which a share link carries.
        text: Shared<String>,
        report: Shared<OptraceReport>,
        graph: Shared<OpGraph>,
    },
    /// A simulator op table was read: show it beside our analysis.
    OpenSimTable(SimView),
    /// The simulator view's workload changed.
    SetSimForm(SetupForm),
    /// Leave the simulator view.
    CloseSimTable,
    /// Show "Model × chip" (with the inputs last used there).
    ShowModel,
    /// One numeric input of "Model × chip" changed.
    SetModelField(ModelField, String),
    SetModel(ModelChoice),
    SetPhase(Phase),
    /// The time view's chip.
    SetChip(ChipChoice),
    /// A chip read from a file: offered and chosen.
    AddChip(Chip),
    /// A model config read from a file: offered and shown in "Model × chip".
    AddModelFile(ModelChoice),
    /// A calibration file was read: shown, and its profile calibrates the time view.
    LoadCalibration(LoadedCalibration),
    UnloadCalibration,
}

/// Analyses the source; the error is a sentence for the page.
fn compute(source: &Source) -> Result<Computed, String> {
    match source {
        Source::Transformer(form) => {
            let c = form.config()?;
            let graph = transformer_block(c).map_err(|e| format!("These inputs cannot be analysed: {e}."))?;
            Ok(computed(
                format!(
                    "Transformer block: S = {}, H = {}, NH = {}, {} byte{} per element",
                    c.seq_len,
                    c.hidden_dim,
                    c.num_heads,
                    c.dtype_bytes,
                    if c.dtype_bytes == 1 { "" } else { "s" }
                ),
                Shared::new(graph),
            ))
        }
        Source::Graph { file_name, graph } => Ok(computed(format!("Op graph {file_name}"), graph.clone())),
        // The report's own analysis: the figures of `fusionscope optrace FILE --json`.
        Source::OpTrace { file_name, report, graph, .. } => Ok(Computed {
            title: format!("Op trace {file_name}: fusion groups of its op graph"),
            graph: graph.clone(),
            report: Shared::new(report.analysis.clone()),
            analysis: Shared::new(analyze(graph)),
            workload: None,
        }),
        Source::Model(form) => {
            let workload = form.spec()?.workload()?;
            let p = &workload.params;
            let title = format!(
                "Model {}, {}: batch {}, {} input tokens, {} output tokens, tensor parallelism {}",
                workload.model, workload.phase, p.batch, p.seq_len, p.output_len, p.tp
            );
            let mut c = computed(title, Shared::new(workload.graph.clone()));
            c.workload = Some(Shared::new(workload));
            Ok(c)
        }
    }
}

fn computed(title: String, graph: Shared<OpGraph>) -> Computed {
    let analysis = analyze(&graph);
    let report = Shared::new(analysis.report(&graph));
    Computed { title, graph, report, analysis: Shared::new(analysis), workload: None }
}

impl State {
    /// The state for a source: its analysis, keeping `last_good` when it fails.
    pub fn with_source(source: Source, last_good: Option<Computed>) -> State {
        let current = compute(&source);
        let last_good = current.as_ref().ok().cloned().or(last_good);
        State {
            source,
            current,
            last_good,
            notice: None,
            selected_op: None,
            traces: Traces::default(),
            sim: None,
            time: TimeModel::default(),
        }
    }

    /// The page as a share link fragment describes it; a link that cannot be opened gives the
    /// default page with a message saying why.
    pub fn from_fragment(fragment: &str) -> State {
        let fragment = fragment.strip_prefix('#').unwrap_or(fragment);
        if fragment.is_empty() {
            return State::default();
        }
        match share::decode(fragment) {
            Ok(shared) => State::restored(shared, None),
            Err(e) => State {
                notice: Some(Notice { text: format!("This share link cannot be opened: {e}."), is_error: true }),
                ..State::default()
            },
        }
    }

    fn restored(shared: SharedState, last_good: Option<Computed>) -> State {
        let mut state = match shared.view {
            SharedView::Transformer { config } => State::with_source(Source::Transformer(config.into()), last_good),
            SharedView::Graph { file_name, graph } => match share::graph_of(&graph) {
                Ok(g) => State::with_source(Source::Graph { file_name, graph: Shared::new(g) }, last_good),
                Err(e) => State {
                    notice: Some(Notice {
                        text: format!("This share link holds a graph that is not valid: {e}."),
                        is_error: true,
                    }),
                    ..State::default()
                },
            },
            SharedView::TraceSummary { file_name, summary, trimmed } => {
                let view = TraceView::Summary { file_name, summary: Shared::new(summary), trimmed };
                State { traces: Traces { view: Some(view), ..Traces::default() }, ..State::default() }
            }
            SharedView::TraceComparison { files, comparison, trimmed } => {
                let view = TraceView::Comparison { files, comparison: Shared::new(comparison), trimmed };
                State { traces: Traces { view: Some(view), ..Traces::default() }, ..State::default() }
            }
            SharedView::Model { spec } => State::with_source(Source::Model(spec.into()), last_good),
            SharedView::SimTable { file_name, text, setup, notes } => match crate::simcsv::parse_sim_csv(&text) {
                Ok(table) => {
                    let (text, table, form) = (Shared::new(text), Shared::new(table), SetupForm::from(&setup));
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
            SharedView::OpTrace { file_name, text } => match crate::optrace::analyze_optrace_with_graph(&text) {
                Ok((report, graph)) => {
                    let (text, report, graph) = (Shared::new(text), Shared::new(report), Shared::new(graph));
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
        // The selected op, by name; a name the graph lacks (an edited link) selects nothing.
        let graph = state.current.as_ref().ok().map(|c| c.graph.clone());
        state.selected_op = shared.selected_op.and_then(|name| graph?.ops().iter().position(|op| op.name == name));
        state
    }

    /// What a share link of this page holds, or why there is nothing to share.
    pub fn shared_view(&self) -> Result<SharedState, String> {
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
        match &self.traces.view {
            Some(TraceView::Summary { file_name, summary, trimmed }) => {
                let (summary, cut) = share::trim_summary(summary);
                let view = SharedView::TraceSummary { file_name: file_name.clone(), summary, trimmed: *trimmed || cut };
                return Ok(self.with_chip(view.into()));
            }
            Some(TraceView::Comparison { files, comparison, trimmed }) => {
                let (comparison, cut) = share::trim_comparison(comparison);
                let view = SharedView::TraceComparison { files: files.clone(), comparison, trimmed: *trimmed || cut };
                return Ok(self.with_chip(view.into()));
            }
            None => {}
        }
        let computed =
            self.current.as_ref().map_err(|e| format!("Nothing to share while the inputs are invalid: {e}"))?;
        let view = match &self.source {
            Source::Transformer(form) => SharedView::Transformer { config: form.config()? },
            Source::Graph { file_name, graph } => SharedView::of_graph(file_name, graph),
            Source::OpTrace { text, .. } if text.len() > MAX_SHARED_OPTRACE_BYTES => {
                return Err(format!(
                    "This op trace is {} of text, too long for a share link (at most {}): send the file instead.",
                    crate::units::format_bytes(text.len() as u64),
                    crate::units::format_bytes(MAX_SHARED_OPTRACE_BYTES as u64)
                ))
            }
            Source::OpTrace { file_name, text, .. } => {
                SharedView::OpTrace { file_name: file_name.clone(), text: String::clone(text) }
            }
            Source::Model(form) => SharedView::Model { spec: form.spec()? },
        };
        let selected_op = self.selected_op.filter(|&i| i < computed.graph.len());
        let selected_op = selected_op.map(|i| computed.graph.ops()[i].name.clone());
        Ok(self.with_chip(SharedState { view, selected_op, chip: None }))
    }

    /// A link's state with the time view's chip, unless it is the default one (so that links
    /// that keep the default chip carry nothing for it and stay short).
    fn with_chip(&self, shared: SharedState) -> SharedState {
        let chip = Some(self.time.chip.clone()).filter(|c| *c != ChipChoice::default());
        SharedState { chip, ..shared }
    }

    /// The analysis to show: the current one, else the last good one.
    pub fn shown(&self) -> Option<&Computed> {
        self.current.as_ref().ok().or(self.last_good.as_ref())
    }

    /// The transformer form's values (the defaults while a file is shown).
    pub fn form(&self) -> TransformerForm {
        match &self.source {
            Source::Transformer(f) => f.clone(),
            Source::Graph { .. } | Source::OpTrace { .. } | Source::Model(_) => TransformerConfig::default().into(),
        }
    }

    /// The "Model × chip" inputs (the last used, else the defaults).
    pub fn model_form(&self) -> ModelForm {
        match &self.source {
            Source::Model(f) => f.clone(),
            _ => self.time.last_model.clone().unwrap_or_default(),
        }
    }
}

impl Default for State {
    fn default() -> Self {
        State::with_source(Source::Transformer(TransformerConfig::default().into()), None)
    }
}

impl Reducible for State {
    type Action = Action;

    fn reduce(self: Rc<Self>, action: Action) -> Rc<Self> {
        let last_good = self.last_good.clone();
        let with_notice = |text: String, is_error: bool| {
            Rc::new(State { notice: Some(Notice { text, is_error }), ..(*self).clone() })
        };
        let source = match action {
            Action::SetField(field, value) => {
                let mut form = self.form();
                form.set(field, value);
                Source::Transformer(form)
            }
            Action::ShowModel => Source::Model(self.model_form()),
            Action::SetModelField(field, value) => {
                let mut form = self.model_form();
                form.set(field, value);
                Source::Model(form)
            }
            Action::SetModel(model) => Source::Model(ModelForm { model, ..self.model_form() }),
            Action::SetPhase(phase) => Source::Model(ModelForm { phase, ..self.model_form() }),
            Action::AddModelFile(model) => {
                let time = self.time.with_model_file(model.clone());
                let form = ModelForm { model, ..self.model_form() };
                let traces = Traces { view: None, ..self.traces.clone() };
                return Rc::new(State { traces, time, ..State::with_source(Source::Model(form), last_good) });
            }
            Action::SetChip(chip) => {
                return Rc::new(State { time: TimeModel { chip, ..self.time.clone() }, ..(*self).clone() })
            }
            // A chip or profile acts on the time view: leave the trace view to show it.
            Action::AddChip(chip) => {
                let traces = Traces { view: None, ..self.traces.clone() };
                return Rc::new(State {
                    time: self.time.with_chip(chip),
                    traces,
                    sim: None,
                    notice: None,
                    ..(*self).clone()
                });
            }
            Action::LoadCalibration(calibration) => {
                let time = TimeModel { calibration: Some(calibration), ..self.time.clone() };
                let traces = Traces { view: None, ..self.traces.clone() };
                return Rc::new(State { time, traces, sim: None, notice: None, ..(*self).clone() });
            }
            Action::UnloadCalibration => {
                return Rc::new(State { time: TimeModel { calibration: None, ..self.time.clone() }, ..(*self).clone() })
            }
            Action::ResetTransformer => Source::Transformer(TransformerConfig::default().into()),
            Action::Fail(text) => return with_notice(text, true),
            Action::Inform(text) => return with_notice(text, false),
            Action::DismissNotice => return Rc::new(State { notice: None, ..(*self).clone() }),
            Action::SelectOp(selected_op) => return Rc::new(State { selected_op, ..(*self).clone() }),
            Action::Restore(view) => {
                // The link's trace view (if any); the traces opened here stay for comparing.
                // The loaded chips, models and calibration stay; the link may choose the chip.
                let restored = State::restored(view, last_good);
                let traces = Traces { view: restored.traces.view.clone(), ..self.traces.clone() };
                let time = TimeModel {
                    chip: restored.time.chip.clone(),
                    last_model: restored.time.last_model.clone().or(self.time.last_model.clone()),
                    ..self.time.clone()
                };
                return Rc::new(State { traces, time, ..restored });
            }
            Action::OpenTrace(loaded) => {
                return Rc::new(State { traces: self.traces.open(loaded), notice: None, sim: None, ..(*self).clone() })
            }
            Action::OpenAnalysedGraph { file_name, graph, report } => {
                let title = format!("Op graph {file_name}");
                // The report comes from the worker; the time model's grouping is recomputed here
                // (linear and a small share of the whole: ~60 ms at 100 k ops, natively).
                let analysis = Shared::new(analyze(&graph));
                let computed = Computed { title, graph: graph.clone(), report, analysis, workload: None };
                let traces = Traces { view: None, ..self.traces.clone() };
                return Rc::new(State {
                    source: Source::Graph { file_name, graph },
                    current: Ok(computed.clone()),
                    last_good: Some(computed),
                    notice: None,
                    selected_op: None,
                    traces,
                    sim: None,
                    time: self.time.clone(),
                });
            }
            Action::ShowTrace(id) => {
                return Rc::new(State { traces: self.traces.show(id), sim: None, ..(*self).clone() })
            }
            Action::PickTrace(side, id) => {
                return Rc::new(State { traces: self.traces.pick(side, id), ..(*self).clone() })
            }
            Action::RemoveTrace(id) => return Rc::new(State { traces: self.traces.remove(id), ..(*self).clone() }),
            Action::ShowComparison { files, comparison } => {
                let view = TraceView::Comparison { files, comparison, trimmed: false };
                let traces = Traces { view: Some(view), ..self.traces.clone() };
                return Rc::new(State { traces, notice: None, sim: None, ..(*self).clone() });
            }
            Action::OpenOpTrace { file_name, text, report, graph } => {
                Source::OpTrace { file_name, text, report, graph }
            }
            Action::OpenSimTable(view) => {
                let traces = Traces { view: None, ..self.traces.clone() };
                return Rc::new(State { sim: Some(view), traces, notice: None, ..(*self).clone() });
            }
            Action::SetSimForm(form) => {
                let sim = self.sim.clone().map(|v| SimView { form, ..v });
                return Rc::new(State { sim, ..(*self).clone() });
            }
            Action::CloseSimTable => return Rc::new(State { sim: None, ..(*self).clone() }),
            Action::CloseTrace => {
                return Rc::new(State { traces: Traces { view: None, ..self.traces.clone() }, ..(*self).clone() })
            }
        };
        // Changing the op graph or the block leaves the trace view; the traces stay for comparing.
        let traces = Traces { view: None, ..self.traces.clone() };
        let mut time = self.time.clone();
        if let Source::Model(form) = &source {
            time.last_model = Some(form.clone());
        }
        Rc::new(State { traces, time, ..State::with_source(source, last_good) })
    }
}
