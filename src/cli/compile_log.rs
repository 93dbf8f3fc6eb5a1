//! `fusionscope compile-log LOG [--trace TRACE]`: the kernels Inductor generated, each with its
//! exact post-grad nodes and bytes (the `inductor` crate), and with a trace of the same run,
//! each kernel's calls and time (`trace::provenance`).

use std::path::PathBuf;

use inductor::CompileLog;
use trace::documents::CompileLogDoc;
use trace::provenance::join;
use trace::view::provenance::{kernels_table, log_line, unjoined_table};

use super::io::{print, print_json, read_parsed, CliResult, Output};
use super::trace_file::load;

#[derive(clap::Args)]
pub struct Args {
    /// torch.compile structured log (TORCH_TRACE=DIR writes one per process; plain or gzip),
    /// written with INDUCTOR_PROVENANCE=1 on PyTorch 2.9 or later
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
    let doc = CompileLogDoc { log, joined };
    if args.output.json {
        return print_json(&doc);
    }
    print(&compile_log_text(&doc, &args.log.display().to_string()))
}

/// Reads a compile log, naming the file in any error.
pub(super) fn read_log(path: &std::path::Path) -> Result<CompileLog, Box<dyn std::error::Error>> {
    read_parsed(path, CompileLog::read)
}

/// The log's line, its warnings, its kernels and the trace's kernels it does not name.
pub(super) fn compile_log_text(doc: &CompileLogDoc, file: &str) -> String {
    let (log, joined) = (&doc.log, doc.joined.as_ref());
    let mut text = format!("{file}: {}\n", log_line(log, joined));
    for w in &log.warnings {
        text += &format!("warning: {w}\n");
    }
    let table = kernels_table(log, joined);
    text += &format!("\n{}\n{}", table.title, table.shown_table().to_text());
    if let Some(j) = joined.filter(|j| !j.unjoined.is_empty()) {
        let t = unjoined_table(j);
        text += &format!("\n{}\n{}", t.title, t.shown_table().to_text());
    }
    text
}
