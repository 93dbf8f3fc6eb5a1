//! What opening a file does on the page: the messages for files that cannot be opened, the
//! whole-file fallback when no analysis worker runs, and the actions for the kinds the worker
//! sends back as bytes. New kinds plug in at [`open_other`], one match arm each.

use crate::import::open::{open_whole, OpenError, Opened};
use crate::import::{self, Detected, FileKind, DETECT_BYTES};

use super::shared::Shared;
use super::state::{Action, LoadedTrace, SimView, TraceHeld};
use super::time_model::LoadedCalibration;
use crate::simcsv::view::SetupForm;
use crate::workload::ModelChoice;

/// Why a file of a recognised kind cannot be opened, naming the file and where it goes wrong.
pub fn failure(file_name: &str, e: &OpenError) -> String {
    match e {
        OpenError::Trace { gzipped, error } => {
            format!("{file_name} is a PyTorch-profiler trace{} but cannot be read: {error}.", gz(*gzipped))
        }
        OpenError::Graph { gzipped, error } => {
            format!("{file_name} is an op graph{} but cannot be analysed: {error}.", gz(*gzipped))
        }
    }
}

fn gz(gzipped: bool) -> &'static str {
    if gzipped {
        " (gzip-compressed)"
    } else {
        ""
    }
}

/// The action for a whole file's content, read and analysed on the page's thread: the
/// fallback when no analysis worker can start (the worker does the same off the thread).
pub fn open_bytes(file_name: &str, bytes: &[u8]) -> Action {
    match open_whole(file_name, bytes) {
        Ok(Opened::Graph { graph, report }) => Action::OpenAnalysedGraph {
            file_name: file_name.to_string(),
            graph: Shared::new(graph),
            report: Shared::new(report),
        },
        Ok(Opened::Trace { trace, summary }) => Action::OpenTrace(LoadedTrace {
            id: super::worker_client::next_job_id(),
            file_name: file_name.to_string(),
            summary: Shared::new(summary),
            held: TraceHeld::Page(Shared::new(trace)),
        }),
        Ok(Opened::Other { detected, bytes }) => open_other(file_name, detected, &bytes),
        Err(e) => Action::Fail(failure(file_name, &e)),
    }
}

/// The action for a file of a kind the analysis worker does not analyse (it sends back the
/// bytes): the page's own views of the small kinds plug in here, one match arm each.
pub fn open_other(file_name: &str, detected: Detected, bytes: &[u8]) -> Action {
    let gz = gz(detected.gzipped);
    match detected.kind {
        FileKind::OpTrace => match import::text(bytes).map_err(|e| e.to_string()).and_then(|text| {
            let (report, graph) = crate::optrace::analyze_optrace_with_graph(&text).map_err(|e| e.to_string())?;
            Ok((text.into_owned(), report, graph))
        }) {
            Ok((text, report, graph)) => Action::OpenOpTrace {
                file_name: file_name.to_string(),
                text: Shared::new(text),
                report: Shared::new(report),
                graph: Shared::new(graph),
            },
            Err(e) => Action::Fail(format!("{file_name} is an op trace{gz} but cannot be read: {e}.")),
        },
        FileKind::SimOpsCsv => match import::text(bytes)
            .map_err(|e| e.to_string())
            .and_then(|text| {
                let table = crate::simcsv::parse_sim_csv(&text).map_err(|e| e.to_string())?;
                Ok((text.into_owned(), table))
            }) {
            Ok((text, table)) => {
                let inferred = crate::simcsv::infer_setup(file_name, &table);
                Action::OpenSimTable(SimView {
                    file_name: file_name.to_string(),
                    text: Shared::new(text),
                    table: Shared::new(table),
                    form: SetupForm::from(&inferred.setup),
                    notes: inferred.notes,
                })
            }
            Err(e) => Action::Fail(format!("{file_name} is a simulator op table{gz} but cannot be read: {e}.")),
        },
        FileKind::Calibration | FileKind::ModelConfig | FileKind::Chip => open_time_input(detected.kind, file_name, bytes),
        kind @ (FileKind::Gzip
        // Only reached if detection changes its mind: the worker analyses these two.
        | FileKind::OpGraph
        | FileKind::KinetoTrace) => Action::Inform(format!(
            "{file_name} is {}{gz}. This page shows op graphs, Kineto traces, op traces, simulator op tables, \
             calibration profiles, model and chip configurations and the transformer block; for this file use the command line: {}.",
            kind.describe(),
            cli_command(kind, file_name)
        )),
        FileKind::Unknown => Action::Fail(format!(
            "{file_name} cannot be opened: {}. fusionscope reads op-graph JSON (an object with \"ops\" or an array of ops), \
             PyTorch-profiler traces (.json or .json.gz), op traces, simulator op CSVs, calibration profiles, \
             model and chip configurations.",
            import::unrecognised_reason(&bytes[..bytes.len().min(DETECT_BYTES)])
        )),
    }
}

/// A calibration profile, model config or chip: inputs of the time model and "Model × chip".
fn open_time_input(kind: FileKind, file_name: &str, bytes: &[u8]) -> Action {
    let text = match import::text(bytes) {
        Ok(t) => t,
        Err(e) => return Action::Fail(format!("{file_name} is {} but cannot be read: {e}.", kind.describe())),
    };
    let text: &str = &text;
    let fail = |e: &dyn std::fmt::Display| {
        Action::Fail(format!("{file_name} is {} but cannot be read: {e}.", kind.describe()))
    };
    match kind {
        FileKind::Calibration => match crate::calib::parse_calibration(text) {
            Ok(file) => Action::LoadCalibration(LoadedCalibration::new(file_name.to_string(), file)),
            Err(e) => fail(&e),
        },
        FileKind::ModelConfig => match crate::workload::parse_model_config(text) {
            Ok(_) => {
                Action::AddModelFile(ModelChoice::File { file_name: file_name.to_string(), text: text.to_string() })
            }
            Err(e) => fail(&e),
        },
        _ => match crate::hardware::parse_chip(text) {
            Ok(chip) => Action::AddChip(chip),
            Err(e) => fail(&e),
        },
    }
}

/// The command that reads a file of this kind.
fn cli_command(kind: FileKind, file_name: &str) -> String {
    match kind {
        FileKind::KinetoTrace | FileKind::Gzip => format!("fusionscope trace {file_name}"),
        FileKind::OpTrace => format!("fusionscope optrace {file_name}"),
        FileKind::SimOpsCsv => format!("fusionscope simcsv {file_name}"),
        FileKind::Calibration => format!("fusionscope calib {file_name}"),
        FileKind::ModelConfig => format!("fusionscope model --model {file_name} --chip h100 --phase prefill"),
        FileKind::Chip => format!("fusionscope model --model llama3-8b --chip {file_name} --phase prefill"),
        FileKind::OpGraph | FileKind::Unknown => format!("fusionscope graph {file_name}"),
    }
}
