//! The page's state: what it analyses ([`Source`]), the analysis of it (or why there is none),
//! the traces opened, the simulator view, the time model's inputs and the notice shown.
//!
//! Every figure on the page is derived from [`State::source`] by the core; the state keeps
//! the last valid analysis so that a half-typed input shows a message beside the figures of
//! the last valid block instead of blanking them. The state changes only in
//! [`State::apply`].

use super::by_address::ByAddress;
use super::form::model::{self, ModelForm};
use super::form::sim::SetupForm;
use super::form::transformer::{self, TransformerForm};
use super::time_inputs::TimeInputs;
use super::traces::Traces;
use fusion::transformer::{transformer_block, TransformerConfig};
use fusion::{analyse, Analysis, AnalysisReport, OpGraph};
use optrace::OptraceReport;
use simcsv::SimTable;
use workload::Workload;

/// What the page analyses.
#[derive(Debug, Clone, PartialEq)]
pub enum Source {
    /// The built-in transformer block with the form's inputs.
    Transformer(TransformerForm),
    /// An op graph read from a file.
    Graph { file_name: String, graph: ByAddress<OpGraph> },
    /// An op trace (optrace text form): its case view, and its conversion to an op graph.
    OpTrace { file_name: String, text: ByAddress<String>, report: ByAddress<OptraceReport>, graph: ByAddress<OpGraph> },
    /// "Model × chip": the op graph a workload generator makes of a model config.
    Model(ModelForm),
}

/// A simulator op table and the workload it is compared with.
#[derive(Debug, Clone, PartialEq)]
pub struct SimView {
    pub file_name: String,
    /// The CSV as read, which a share link carries.
    pub text: ByAddress<String>,
    pub table: ByAddress<SimTable>,
    pub form: SetupForm,
    /// What was assumed when reading the workload from the file name.
    pub notes: Vec<String>,
}

/// A finished analysis and what it was computed from, in words.
#[derive(Debug, Clone, PartialEq)]
pub struct Computed {
    pub title: String,
    pub graph: ByAddress<OpGraph>,
    pub report: ByAddress<AnalysisReport>,
    /// The analysis itself, for the time model.
    pub analysis: ByAddress<Analysis>,
    /// For "Model × chip": the workload (layers, steps, runs of each op); the time view weights
    /// each op by its runs.
    pub workload: Option<ByAddress<Workload>>,
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
    /// Seconds left at the rate so far, once there is a rate to go by (a quarter of a second
    /// of reading, so that the first slice's start-up cost does not make a wild estimate).
    pub fn seconds_left(&self, now_ms: f64) -> Option<f64> {
        let rate = self.rate(now_ms);
        (now_ms - self.started_ms >= 250.0 && rate > 0.0).then(|| ((self.total - self.done) / rate).max(0.0))
    }

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
    /// A torch.compile log opened with no trace of its run: its kernels' view, shown when no
    /// trace view is.
    pub compile_log: Option<ByAddress<analysis::provenance::CompiledKernels>>,
    /// The chip, loaded chips and model configs, and the calibration profile of the time view.
    pub time: TimeInputs,
}

/// Analyses the source; the error is a sentence for the page.
fn compute(source: &Source) -> Result<Computed, String> {
    match source {
        Source::Transformer(form) => {
            let c = transformer::config(form)?;
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
                ByAddress::new(graph),
            ))
        }
        Source::Graph { file_name, graph } => Ok(computed(format!("Op graph {file_name}"), graph.clone())),
        // The report's own analysis: the figures of `fusionscope optrace FILE --json`.
        Source::OpTrace { file_name, report, graph, .. } => Ok(Computed {
            title: format!("Op trace {file_name}: fusion groups of its op graph"),
            graph: graph.clone(),
            report: ByAddress::new(report.analysis.clone()),
            analysis: ByAddress::new(analyse(graph)),
            workload: None,
        }),
        Source::Model(form) => {
            let workload = model::workload(&form.spec()?)?;
            let p = &workload.params;
            let title = format!(
                "Model {}, {}: batch {}, {} input tokens, {} output tokens, tensor parallelism {}",
                workload.model, workload.phase, p.batch, p.seq_len, p.output_len, p.tp
            );
            let mut c = computed(title, ByAddress::new(workload.graph.clone()));
            c.workload = Some(ByAddress::new(workload));
            Ok(c)
        }
    }
}

fn computed(title: String, graph: ByAddress<OpGraph>) -> Computed {
    let analysis = analyse(&graph);
    let report = ByAddress::new(analysis.report(&graph));
    Computed { title, graph, report, analysis: ByAddress::new(analysis), workload: None }
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
            compile_log: None,
            time: TimeInputs::default(),
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_left_follows_the_rate_once_there_is_one() {
        let r = Reading { file_name: "big.json".into(), done: 1e9, total: 3e9, started_ms: 0.0 };
        assert_eq!(r.rate(10_000.0), 1e8);
        assert_eq!(r.seconds_left(10_000.0), Some(20.0));
        assert_eq!(r.seconds_left(100.0), None, "too early to tell");
        let start = Reading { done: 0.0, ..r.clone() };
        assert_eq!(start.seconds_left(5_000.0), None, "nothing read yet: no rate");
    }
}
