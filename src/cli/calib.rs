//! `fusionscope calib`: not built yet (see the open issues).

use super::CliResult;

#[derive(clap::Args)]
pub struct Args {
    /// Input file
    pub file: Option<std::path::PathBuf>,
}

pub fn run(_args: Args) -> CliResult {
    Err("this subcommand is not available yet".into())
}
