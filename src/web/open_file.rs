//! What opening a file does: detect its kind from its first bytes, then read it with the core.
//! New kinds plug in here, one match arm each.

use crate::import::{self, FileKind, DETECT_BYTES};

use super::shared::Shared;
use super::state::Action;

/// The action for a file's content.
pub fn open_bytes(file_name: &str, bytes: &[u8]) -> Action {
    let detected = import::detect(&bytes[..bytes.len().min(DETECT_BYTES)]);
    let gz = if detected.gzipped { " (gzip-compressed)" } else { "" };
    match detected.kind {
        FileKind::OpGraph => match import::read_graph(bytes) {
            Ok(graph) => Action::OpenGraph { file_name: file_name.to_string(), graph: Shared::new(graph) },
            Err(e) => Action::Fail(format!("{file_name} is an op graph{gz} but cannot be analysed: {e}.")),
        },
        kind @ (FileKind::KinetoTrace
        | FileKind::OpTrace
        | FileKind::SimOpsCsv
        | FileKind::Calibration
        | FileKind::Gzip) => Action::Inform(format!(
            "{file_name} is {}{gz}. This page shows op graphs and the transformer block; for this file use the command line: {}.",
            kind.describe(),
            cli_command(kind, file_name)
        )),
        FileKind::Unknown => Action::Fail(format!(
            "{file_name} cannot be opened: {}. fusionscope reads op-graph JSON (an object with \"ops\" or an array of ops), \
             PyTorch-profiler traces (.json or .json.gz), op traces, simulator op CSVs and calibration profiles.",
            import::unrecognised_reason(&bytes[..bytes.len().min(DETECT_BYTES)])
        )),
    }
}

/// The command that reads a file of this kind.
fn cli_command(kind: FileKind, file_name: &str) -> String {
    let sub = match kind {
        FileKind::KinetoTrace | FileKind::Gzip => "trace",
        FileKind::OpTrace => "optrace",
        FileKind::SimOpsCsv => "simcsv",
        FileKind::Calibration => "calib",
        FileKind::OpGraph | FileKind::Unknown => "graph",
    };
    format!("fusionscope {sub} {file_name}")
}
