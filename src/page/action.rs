//! Everything that can happen to the page, as one enum: each user gesture, each file read and
//! each link opened ends in one [`Action`], and [`super::State::apply`] is the one place the
//! state changes.

use super::by_address::ByAddress;
use super::form::sim::SetupForm;
use super::form::transformer::TransformerField;
use super::form::WorkloadField;
use super::state::SimView;
use super::time_inputs::LoadedCalibration;
use super::traces::{LoadedTrace, PairSide, ResultsTab};
use analysis::pipeline::TraceTime;
use analysis::provenance::CompiledKernels;
use analysis::Comparison;
use fusion::{AnalysisReport, OpGraph};
use hardware::{Chip, ChipChoice};
use optrace::OptraceReport;
use share::SharedState;
use view::ranks::RanksDrawn;
use workload::{ModelChoice, Phase};

/// Everything that can happen to the page.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// One transformer input changed (switches to the transformer block if a file was open).
    SetField(TransformerField, String),
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
    /// (Boxed: the largest of the actions, and each action is moved through the reducer.)
    Restore(Box<SharedState>),
    /// Open one view (tab) of a trace's or a pair's results.
    ShowTab(ResultsTab),
    /// A Kineto trace was read: list it and show its summary.
    OpenTrace(LoadedTrace),
    /// A graph-capture trace was read (and kept by the analysis worker): the traces it was
    /// joined to (by id) have new reports, in which replayed kernels have their captured ops.
    CaptureOpened {
        file_name: String,
        graphs: u32,
        joined: Vec<(u32, ByAddress<TraceTime>)>,
    },
    /// An execution trace was read (and kept by the analysis worker): the traces it linked to
    /// (by id) have new reports whose fusion takes its data flow; `unlinked` names the opened
    /// traces it did not link to (`ops`: its op nodes).
    ExecTraceOpened {
        file_name: String,
        ops: u64,
        joined: Vec<(u32, ByAddress<TraceTime>)>,
        unlinked: Vec<String>,
    },
    /// A torch.compile log was read (and kept by the analysis worker): the traces of its run
    /// (by id) have new reports whose fusion groups are the log's; `kernels` is the log's
    /// kernels, as its own view shows them.
    CompileLogOpened {
        file_name: String,
        kernels: ByAddress<CompiledKernels>,
        joined: Vec<(u32, ByAddress<TraceTime>)>,
    },
    /// The compile log's own view is closed.
    CloseCompileLog,
    /// An op graph was read and analysed (by the analysis worker).
    OpenAnalysedGraph {
        file_name: String,
        graph: ByAddress<OpGraph>,
        report: ByAddress<AnalysisReport>,
    },
    /// Show an opened trace's summary.
    ShowTrace(u32),
    /// Pick an opened trace as one side of the comparison.
    PickTrace(PairSide, u32),
    /// Remove a trace from the list.
    RemoveTrace(u32),
    /// Measure the shown trace's ops against this chip preset (the user's pick).
    TraceChip(String),
    /// Two traces compared (by the analysis worker): show the comparison.
    ShowComparison {
        files: (String, String),
        comparison: ByAddress<Comparison>,
    },
    /// Leave the trace view (back to the op graph or transformer block).
    CloseTrace,
    /// The ranks opened make one distributed job: show its report (the Ranks view).
    ShowRanks(ByAddress<RanksDrawn>),
    /// Show the Ranks view of the job report held.
    ShowJob,
    /// The job report made again without a removed rank: held, and shown only if the Ranks
    /// view was showing when the rank was removed.
    RedoneJob {
        job: ByAddress<RanksDrawn>,
        show: bool,
    },
    /// The analysis worker stopped (out of memory, a bug, or no answer to Cancel) and was
    /// replaced: the traces it held are gone. The text says what happened, naming the file it
    /// was reading, if any.
    WorkerStopped(String),
    /// An op trace was read and converted.
    OpenOpTrace {
        file_name: String,
        /// The trace's text, which a share link carries.
        text: ByAddress<String>,
        report: ByAddress<OptraceReport>,
        graph: ByAddress<OpGraph>,
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
    SetModelField(WorkloadField, String),
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
