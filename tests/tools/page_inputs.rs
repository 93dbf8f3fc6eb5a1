//! Writes the large inputs the page benchmark (tests/e2e/worker-bench.mjs) opens: a random op
//! graph of `OPS` ops as graph JSON, and a synthetic NVIDIA-like Kineto trace of at least
//! `TRACE_MB` MB.
//!
//! Run: `cargo run --release --example page_inputs -- DIR [OPS] [TRACE_MB]` (defaults 100000
//! ops, 100 MB); prints the two paths.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use fusionscope::analysis::synthetic::{write_trace, Flavor, Length};
use fusionscope::fusion::json::to_file;
use fusionscope::fusion::random::random_graph;

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let dir = PathBuf::from(args.next().ok_or("usage: page_inputs DIR [OPS] [TRACE_MB]")?);
    let ops: usize = args.next().map(|s| s.parse()).transpose()?.unwrap_or(100_000);
    let trace_mb: u64 = args.next().map(|s| s.parse()).transpose()?.unwrap_or(100);
    std::fs::create_dir_all(&dir)?;

    let graph_path = dir.join(format!("random_{ops}_ops.json"));
    let mut out = BufWriter::new(File::create(&graph_path)?);
    serde_json::to_writer(&mut out, &to_file(&random_graph(ops, 42)))?;
    out.flush()?;
    println!("{}", graph_path.display());

    let trace_path = dir.join(format!("synthetic_{trace_mb}mb_nvidia.json"));
    let out = BufWriter::with_capacity(1 << 20, File::create(&trace_path)?);
    write_trace(out, Flavor::Nvidia, Length::AtLeastBytes(trace_mb * 1_000_000))?;
    println!("{}", trace_path.display());
    Ok(())
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("page_inputs: {e}");
            ExitCode::from(2)
        }
    }
}
