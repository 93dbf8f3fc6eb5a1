//! `fusionscope bench`: grouping + traffic throughput on random graphs.

use std::time::Instant;

use fusionscope::fusion::analyze;
use fusionscope::fusion::random::random_graph;

use super::{print, CliResult};

#[derive(clap::Args)]
pub struct Args {
    /// Graph sizes in ops
    #[arg(long, value_delimiter = ',', default_values_t = [10_000usize, 100_000, 1_000_000])]
    pub sizes: Vec<usize>,
    /// Timed runs per size; the fastest is reported
    #[arg(long, default_value_t = 3)]
    pub runs: usize,
}

pub fn run(args: Args) -> CliResult {
    let mut out = String::from("fusion bench: grouping + traffic on random graphs (best of runs)\n");
    out.push_str(&format!("{:>10}  {:>7}  {:>12}  {:>14}  {:>10}\n", "ops", "groups", "time (ms)", "ops/s", "ns/op"));
    print(&out)?;
    for &n in &args.sizes {
        let graph = random_graph(n, 42);
        let mut best = f64::INFINITY;
        let mut groups = 0;
        for _ in 0..args.runs.max(1) {
            let t = Instant::now();
            let a = analyze(&graph);
            let secs = t.elapsed().as_secs_f64();
            groups = a.grouping.groups.len();
            best = best.min(secs);
            std::hint::black_box(&a);
        }
        print(&format!(
            "{:>10}  {:>7}  {:>12.1}  {:>14.0}  {:>10.1}\n",
            n,
            groups,
            best * 1e3,
            n as f64 / best,
            best * 1e9 / n as f64
        ))?;
    }
    Ok(())
}
