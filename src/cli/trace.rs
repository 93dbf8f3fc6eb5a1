//! `fusionscope trace`: not built yet (see the open issues).

use super::CliResult;

#[derive(clap::Args)]
pub struct TraceArgs {
    /// Kineto trace (.json or .json.gz)
    pub file: std::path::PathBuf,
}

#[derive(clap::Args)]
pub struct CompareArgs {
    pub file_a: std::path::PathBuf,
    pub file_b: std::path::PathBuf,
}

pub fn run_trace(_args: TraceArgs) -> CliResult {
    Err("this subcommand is not available yet".into())
}

pub fn run_compare(_args: CompareArgs) -> CliResult {
    Err("this subcommand is not available yet".into())
}
