//! What opening a file does to the page: the one match from what was opened to an [`Action`].
//! The core's dispatch ([`import::open`]) says what a file is; this says what the page
//! does with each kind. Adding a format adds one arm here.

use super::action::Action;
use super::by_address::ByAddress;
use super::form::sim::SetupForm;
use super::state::SimView;
use super::time_inputs::LoadedCalibration;
use super::traces::{LoadedTrace, TraceHeld};
use analysis::pipeline::TraceTime;
use analysis::provenance::CompiledKernels;
use analysis::TraceSummary;
use import::{FileKind, Imported};
use workload::ModelChoice;

/// A file as it reaches the page: opened by the core's dispatch (on the page's thread, or by
/// the analysis worker and sent back), or a trace the worker read and keeps.
#[derive(Debug)]
#[allow(clippy::large_enum_variant)] // made and matched once per file opened
pub enum Opened {
    Imported(Imported),
    /// A Kineto trace kept by the analysis worker under the job's id: only its summary crosses.
    TraceInWorker {
        summary: TraceSummary,
        time: TraceTime,
    },
    /// A graph-capture trace kept by the analysis worker, and the traces it was joined to.
    CaptureInWorker {
        graphs: u32,
        joined: Vec<(u32, TraceTime)>,
    },
    /// A torch.compile log kept by the analysis worker: its kernels, and the traces it was
    /// joined to with their new reports.
    CompileLogInWorker {
        kernels: CompiledKernels,
        joined: Vec<(u32, TraceTime)>,
    },
    /// An execution trace kept by the analysis worker (`ops` op nodes), the traces it linked
    /// to, and the names of those it did not.
    ExecTraceInWorker {
        ops: u64,
        joined: Vec<(u32, TraceTime)>,
        unlinked: Vec<String>,
    },
}

/// The action for an opened file. `id` is the job that opened it: a trace is listed under it.
pub fn action_of(file_name: &str, opened: Opened, id: u32) -> Action {
    let file_name = file_name.to_string();
    let imported = match opened {
        Opened::TraceInWorker { summary, time } => {
            let held = TraceHeld::Worker;
            let (summary, time) = (ByAddress::new(summary), ByAddress::new(time));
            return Action::OpenTrace(LoadedTrace { id, file_name, summary, time, held });
        }
        Opened::CaptureInWorker { graphs, joined } => {
            let joined = joined.into_iter().map(|(id, time)| (id, ByAddress::new(time))).collect();
            return Action::CaptureOpened { file_name, graphs, joined };
        }
        Opened::ExecTraceInWorker { ops, joined, unlinked } => {
            let joined = joined.into_iter().map(|(id, time)| (id, ByAddress::new(time))).collect();
            return Action::ExecTraceOpened { file_name, ops, joined, unlinked };
        }
        Opened::CompileLogInWorker { kernels, joined } => {
            let joined = joined.into_iter().map(|(id, time)| (id, ByAddress::new(time))).collect();
            return Action::CompileLogOpened { file_name, kernels: ByAddress::new(kernels), joined };
        }
        Opened::Imported(imported) => imported,
    };
    match imported {
        Imported::Trace { trace, summary, time, .. } => Action::OpenTrace(LoadedTrace {
            id,
            file_name,
            summary: ByAddress::new(summary),
            time: ByAddress::new(time),
            held: TraceHeld::Page(ByAddress::new(trace)),
        }),
        Imported::Graph { graph, report } => {
            Action::OpenAnalysedGraph { file_name, graph: ByAddress::new(graph), report: ByAddress::new(report) }
        }
        Imported::OpTrace { text, report, graph } => Action::OpenOpTrace {
            file_name,
            text: ByAddress::new(text),
            report: ByAddress::new(report),
            graph: ByAddress::new(graph),
        },
        Imported::SimTable { text, table, inferred } => Action::OpenSimTable(SimView {
            file_name,
            text: ByAddress::new(text),
            table: ByAddress::new(table),
            form: SetupForm::from(&inferred.setup),
            notes: inferred.notes,
        }),
        Imported::Calibration(file) => Action::LoadCalibration(LoadedCalibration::new(file_name, file)),
        Imported::ModelConfig { text } => Action::AddModelFile(ModelChoice::File { file_name, text }),
        Imported::Chip(chip) => Action::AddChip(chip),
        // Only the analysis worker, which holds the traces, links one; read elsewhere it is
        // what it is with no trace held.
        Imported::ExecTrace(et) => Action::ExecTraceOpened {
            file_name,
            ops: et.nodes.iter().filter(|n| n.is_op()).count() as u64,
            joined: Vec::new(),
            unlinked: Vec::new(),
        },
        // Only the analysis worker, which holds the traces, reads one.
        Imported::CompileLog(_) => {
            Action::Fail(format!("{file_name} is a torch.compile log: the page's analysis worker reads it."))
        }
        Imported::Unrecognised { detected, .. } if detected.kind == FileKind::Gzip => Action::Inform(format!(
            "{file_name} is {} (gzip-compressed). This page shows op graphs, Kineto traces, op traces, simulator op \
             tables, calibration profiles, model and chip configurations and the transformer block; for this file use \
             the command line: fusionscope trace {file_name}.",
            FileKind::Gzip.describe(),
        )),
        Imported::Unrecognised { reason, .. } => Action::Fail(format!(
            "{file_name} cannot be opened: {reason}. fusionscope reads op-graph JSON (an object with \"ops\" or an array of ops), \
             PyTorch-profiler traces (.json or .json.gz), op traces, simulator op CSVs, calibration profiles, \
             model and chip configurations."
        )),
    }
}

/// The action for a whole file read on the page's thread: the core's dispatch, then
/// [`action_of`]; a file that cannot be read is a message naming it, its kind and the place.
pub fn open_bytes(file_name: &str, bytes: &[u8], id: u32) -> Action {
    match import::open_whole(file_name, bytes) {
        Ok(imported) => action_of(file_name, Opened::Imported(imported), id),
        Err(e) => Action::Fail(e.message(file_name)),
    }
}
