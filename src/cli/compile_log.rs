//! `fusionscope compile-log LOG [--trace TRACE]`: the kernels Inductor generated, each with its
//! exact post-grad nodes and bytes (the `inductor` crate), and with a trace of the same run,
//! each kernel's calls and time (`analysis::provenance`).

use std::path::PathBuf;

use analysis::documents::CompileLogDoc;
use analysis::provenance::{join, CompiledKernels};
use view::provenance::{kernels_table, unjoined_table};

use super::io::{print, print_json, CliResult, Output};
use super::pipeline::file_name;
use super::trace_file::{load, read_log};

#[derive(clap::Args)]
pub struct Args {
    /// torch.compile structured log (TORCH_TRACE=DIR writes one per process; plain or gzip),
    /// or the folder of them, written with INDUCTOR_PROVENANCE=1 on PyTorch 2.9 or later
    pub log: PathBuf,
    /// Profiler trace of the same run: each kernel's calls and time
    #[arg(long, value_name = "TRACE")]
    pub trace: Option<PathBuf>,
    #[command(flatten)]
    pub output: Output,
}

pub fn run(args: Args) -> CliResult {
    let log = read_log(&args.log)?;
    let joined = match &args.trace {
        Some(path) => Some(join(&load(path)?, &log)),
        None => None,
    };
    if args.output.json {
        return print_json(&CompileLogDoc { log, joined });
    }
    print(&compiled_kernels_text(&CompiledKernels::of(&file_name(&args.log), &log, joined.as_ref())))
}

/// The log's line, its warnings, its kernels and the trace's kernels it does not name.
pub(super) fn compiled_kernels_text(c: &CompiledKernels) -> String {
    let mut text = format!("{}: {}\n", c.file, c.line);
    for w in &c.warnings {
        text += &format!("warning: {w}\n");
    }
    let table = kernels_table(c);
    text += &format!("\n{}\n{}", table.title, table.shown_table().to_text());
    if !c.unjoined.is_empty() {
        let t = unjoined_table(&c.unjoined);
        text += &format!("\n{}\n{}", t.title, t.shown_table().to_text());
    }
    text
}
