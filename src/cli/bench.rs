//! `fusionscope bench fusion|trace`: the speed and memory figures the README quotes.
//!
//! * `fusion`: grouping + traffic on random graphs of 10 k, 100 k and 1 M ops (ops/s).
//! * `graph`: `fusionscope graph FILE` end to end (read, parse, analyse, write the JSON or the
//!   tables) on a random graph file of 1 M ops.
//! * `trace`: writes a synthetic NVIDIA-like trace of at least `--size-mb` MB and an AMD-like
//!   one of the same workload, then reads one in the summary-only mode and whole (MB/s, peak
//!   memory of each) and compares both (`--no-compare`: one file, no comparison).
//! * `serving`: writes a synthetic serving trace of each vendor (graph-replayed decode passes),
//!   then times `fusionscope compare` on them as the command runs it (both files read at once)
//!   and, apart, the structure search and the layer alignment.
//! * `fleet`: `bench_fleet.rs`.
//! * `ranks`: `--ranks` synthetic ranks of `--size-mb` MB each, streamed from the generator
//!   into the ranks fold one after another (no files), then the job report: MB/s, peak memory,
//!   what was matched and the straggler named.

use std::fs::File;
use std::io::{BufWriter, Read};
use std::path::{Path, PathBuf};
use std::time::Instant;

use super::peak_memory::{mb, reset_hwm, vm_hwm};

use analysis::pipeline::{time_report, Choices};
use analysis::structure::search;
use analysis::summary::{summarize, ClassifiedTrace};
use analysis::summary_only::SummarySink;
use analysis::synthetic::serving::{write_serving_trace, ServingSpec};
use analysis::synthetic::{write_trace, Flavor, Length};
use analysis::{classify, compare, Input};
use formats::{Reader, TraceReader};
use fusion::analyse;
use fusion::random::random_graph;
use trace::Trace;

use super::io::{print, CliResult};

/// Default graph sizes of `bench fusion`, also used when `bench` is given no subcommand.
const FUSION_SIZES: [usize; 3] = [10_000, 100_000, 1_000_000];
/// Default timed runs per size of `bench fusion` (and of a bare `bench`).
const FUSION_RUNS: usize = 3;

#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub what: Option<What>,
}

#[derive(clap::Subcommand)]
pub enum What {
    /// Grouping + traffic throughput on random graphs (the default)
    Fusion {
        /// Graph sizes in ops
        #[arg(long, value_delimiter = ',', default_values_t = FUSION_SIZES)]
        sizes: Vec<usize>,
        /// Timed runs per size; the fastest is reported
        #[arg(long, default_value_t = FUSION_RUNS)]
        runs: usize,
    },
    /// `fusionscope graph FILE [--json [--details]]` end to end on a random graph file
    Graph {
        /// Ops in the graph
        #[arg(long, default_value_t = 1_000_000)]
        ops: usize,
        /// Timed runs of each output; the fastest and the median are reported
        #[arg(long, default_value_t = 5)]
        runs: usize,
        /// Folder for the graph file (removed afterwards)
        #[arg(long, default_value = "/tmp")]
        dir: PathBuf,
    },
    /// Trace reading and comparison on large synthetic Kineto traces
    Trace {
        /// Size of the NVIDIA-like trace in MB (10^6 bytes); the AMD-like one comes out larger
        #[arg(long, default_value_t = 1100)]
        size_mb: u64,
        /// Folder for the two trace files (they are left there for the wasm benchmark)
        #[arg(long, default_value = "/tmp")]
        dir: PathBuf,
        /// Only the NVIDIA-like file, read in the summary-only mode and whole; no AMD-like file
        /// and no comparison (for the largest traces: the comparison holds both)
        #[arg(long)]
        no_compare: bool,
    },
    /// `fusionscope compare` on two synthetic serving traces (AMD and NVIDIA, graph replays)
    Serving {
        /// Decode passes in each trace (after one prefill pass)
        #[arg(long, default_value_t = 500)]
        steps: usize,
        /// Decoder layers of the model
        #[arg(long, default_value_t = 32)]
        layers: usize,
        /// Timed runs; the fastest is reported
        #[arg(long, default_value_t = 3)]
        runs: usize,
        /// Folder for the two trace files (removed afterwards, unless --keep)
        #[arg(long, default_value = "/tmp")]
        dir: PathBuf,
        /// Leave the two trace files in --dir, to time another tool (or the page's
        /// `tests/e2e/compare-bench.mjs`) on the same pair
        #[arg(long)]
        keep: bool,
    },
    /// `fusionscope ranks` on a synthetic job: each rank folded as it is generated
    Ranks {
        /// Ranks in the job
        #[arg(long, default_value_t = 8)]
        ranks: u32,
        /// JSON text per rank in MB (10^6 bytes); 1000 for the 8 × 1 GB figure
        #[arg(long, default_value_t = 50)]
        size_mb: u64,
    },
    /// `fusionscope export` on a synthetic job's ranks against the ranks fold, then `fleet`'s
    /// reports over many exported traces
    Fleet {
        /// Ranks in the job
        #[arg(long, default_value_t = 8)]
        ranks: u32,
        /// JSON text per rank in MB (10^6 bytes); 1000 for the 8 × 1 GB figure
        #[arg(long, default_value_t = 50)]
        size_mb: u64,
        /// Small traces exported into one folder and queried
        #[arg(long, default_value_t = 1000)]
        traces: u32,
        /// JSON text per small trace in MB
        #[arg(long, default_value_t = 1)]
        trace_mb: u64,
        /// Folder for the exported files (removed afterwards)
        #[arg(long, default_value = "/tmp")]
        dir: PathBuf,
    },
}

pub fn run(args: Args) -> CliResult {
    match args.what.unwrap_or(What::Fusion { sizes: FUSION_SIZES.to_vec(), runs: FUSION_RUNS }) {
        What::Fusion { sizes, runs } => fusion(&sizes, runs),
        What::Graph { ops, runs, dir } => graph(ops, runs, &dir),
        What::Trace { size_mb, dir, no_compare } => trace(size_mb, &dir, !no_compare),
        What::Serving { steps, layers, runs, dir, keep } => serving(steps, layers, runs, &dir, keep),
        What::Ranks { ranks, size_mb } => ranks_bench(ranks, size_mb),
        What::Fleet { ranks, size_mb, traces, trace_mb, dir } => {
            super::bench_fleet::fleet_bench(ranks, size_mb, traces, trace_mb, &dir)
        }
    }
}

fn fusion(sizes: &[usize], runs: usize) -> CliResult {
    let mut out = String::from("fusion bench: grouping + traffic on random graphs (best of runs)\n");
    out.push_str(&format!("{:>10}  {:>7}  {:>12}  {:>14}  {:>10}\n", "ops", "groups", "time (ms)", "ops/s", "ns/op"));
    print(&out)?;
    for &n in sizes {
        let graph = random_graph(n, 42);
        let mut best = f64::INFINITY;
        let mut groups = 0;
        for _ in 0..runs.max(1) {
            let t = Instant::now();
            let a = analyse(&graph);
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

/// Counts what is written to it.
struct Count(u64);

impl std::io::Write for Count {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 += buf.len() as u64;
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Times `fusionscope graph FILE` in this process, as `graph::run` does it but writing to a
/// counter instead of stdout (and freeing the graph after the clock stops, where the command
/// leaves it to the OS): the figure is the command's, less starting the process.
fn graph(ops: usize, runs: usize, dir: &Path) -> CliResult {
    use super::graph::{analyse_file, title, write_report, ReportOutput};
    let path = dir.join(format!("fusionscope_bench_graph_{ops}.json"));
    let file = File::create(&path).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    let mut w = BufWriter::with_capacity(1 << 20, file);
    serde_json::to_writer(&mut w, &fusion::json::to_file(&random_graph(ops, 42)))?;
    std::io::Write::flush(&mut w)?;
    drop(w);
    let size = std::fs::metadata(&path)?.len();
    print(&format!(
        "graph bench: `fusionscope graph FILE` end to end on {} ({ops} ops, {:.1} MB), {runs} runs\n{:<24}  {:>9}  {:>11}  {:>10}\n",
        path.display(),
        mb(size),
        "output",
        "min (s)",
        "median (s)",
        "size (MB)"
    ))?;
    let outputs = [
        ("--json", ReportOutput { json: true, details: false }),
        ("--json --details", ReportOutput { json: true, details: true }),
        ("tables (no flag)", ReportOutput { json: false, details: false }),
    ];
    let result = (|| -> CliResult {
        for (name, output) in outputs {
            let mut times = Vec::new();
            let mut written = 0;
            for _ in 0..runs.max(1) {
                let t = Instant::now();
                let (g, a) = analyse_file(&path)?;
                let mut out = Count(0);
                write_report(&mut out, a.view(&g), &output, &title(&path))?;
                times.push(t.elapsed().as_secs_f64());
                written = out.0;
            }
            times.sort_by(f64::total_cmp);
            print(&format!(
                "{name:<24}  {:>9.2}  {:>11.2}  {:>10.2}\n",
                times[0],
                times[times.len() / 2],
                mb(written)
            ))?;
        }
        Ok(())
    })();
    let _ = std::fs::remove_file(&path);
    result
}

fn generate(path: &Path, flavor: Flavor, length: Length) -> Result<(u64, usize), Box<dyn std::error::Error>> {
    let file = File::create(path).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok(write_trace(BufWriter::with_capacity(1 << 20, file), flavor, length)?)
}

/// Reads a trace file in 1 MiB slices, as the page's worker reads a `File`.
fn read(path: &Path) -> Result<Trace, Box<dyn std::error::Error>> {
    let mut file = File::open(path)?;
    let mut reader = TraceReader::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            break;
        }
        reader.feed(&buf[..n]).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    Ok(reader.finish().map_err(|e| format!("{}: {e}", path.display()))?)
}

fn trace(size_mb: u64, dir: &Path, with_compare: bool) -> CliResult {
    let nv_path = dir.join("fusionscope_bench_nvidia.json");
    let amd_path = dir.join("fusionscope_bench_amd.json");
    let t = Instant::now();
    let (nv_size, layers) = generate(&nv_path, Flavor::Nvidia, Length::AtLeastBytes(size_mb * 1_000_000))?;
    let amd_size = if with_compare { generate(&amd_path, Flavor::Amd, Length::Layers(layers))?.0 } else { 0 };
    print(&format!(
        "generated {} ({:.0} MB){} in {:.1} s\n",
        nv_path.display(),
        mb(nv_size),
        if with_compare { format!(" and {} ({:.0} MB)", amd_path.display(), mb(amd_size)) } else { String::new() },
        t.elapsed().as_secs_f64()
    ))?;

    // The summary-only mode first, so that its peak is not the whole read's freed heap.
    reset_hwm();
    let t = Instant::now();
    let sink = SummarySink::new(Some("nvidia"));
    let folded = super::trace::load_sink(&nv_path, sink)?;
    let secs = t.elapsed().as_secs_f64();
    let peak = vm_hwm().unwrap_or(0);
    print(&format!(
        "summary-only: {:.0} MB in {:.2} s = {:.0} MB/s; {} events, {} kernels folded into {} names; peak RSS {:.1} MB ({:.4}× the file)\n",
        mb(nv_size),
        secs,
        mb(nv_size) / secs,
        folded.events,
        folded.platforms[0].kernels,
        folded.kernels.len(),
        mb(peak),
        peak as f64 / nv_size as f64,
    ))?;
    drop(folded);

    reset_hwm();
    let t = Instant::now();
    let trace = read(&nv_path)?;
    let secs = t.elapsed().as_secs_f64();
    let peak = vm_hwm().unwrap_or(0);
    print(&format!(
        "read:    {:.0} MB in {:.2} s = {:.0} MB/s; {} events, {} kernels kept; peak RSS {:.1} MB ({:.3}× the file)\n",
        mb(nv_size),
        secs,
        mb(nv_size) / secs,
        trace.event_count,
        trace.kernels.len(),
        mb(peak),
        peak as f64 / nv_size as f64,
    ))?;
    // What `fusionscope trace` adds to the read: the summary and where the time goes.
    let t = Instant::now();
    let side = ClassifiedTrace::new(&trace);
    let summary = summarize(&side, Some("nvidia"));
    let time = time_report(&side, &Choices::default());
    let analysis = t.elapsed().as_secs_f64();
    print(&format!(
        "trace:   read + summary + timeline + op table in {:.2} s = {:.0} MB/s ({:.2} s analysing; {} categories, {} op rows, {} steps)\n",
        secs + analysis,
        mb(nv_size) / (secs + analysis),
        analysis,
        summary.categories.len(),
        time.ops.len(),
        time.steps.len(),
    ))?;
    drop(trace);
    if !with_compare {
        return Ok(());
    }

    reset_hwm();
    let t = Instant::now();
    let a = read(&nv_path)?;
    let b = read(&amd_path)?;
    let read_secs = t.elapsed().as_secs_f64();
    let c = compare(Input::new(&a, Some("nvidia")), Input::new(&b, Some("amd")));
    let secs = t.elapsed().as_secs_f64();
    let peak = vm_hwm().unwrap_or(0);
    let total = nv_size + amd_size;
    print(&format!(
        "compare: {:.0} MB (both files) in {:.2} s ({:.2} s reading, {:.2} s comparing) = {:.0} MB/s; {} mapping rows, {} fusion differences; peak RSS {:.1} MB ({:.3}× one file)\n",
        mb(total),
        secs,
        read_secs,
        secs - read_secs,
        mb(total) / secs,
        c.op_mapping.len(),
        c.fusion_differences.len(),
        mb(peak),
        peak as f64 / nv_size as f64
    ))
}

/// Times the comparison of two serving traces: reading both (two threads, as `compare` does),
/// comparing, and within that the structure search of each side; the layer alignment is the
/// rest of the comparison's time that the whole-trace comparison without it does not take.
fn serving(steps: usize, layers: usize, runs: usize, dir: &Path, keep: bool) -> CliResult {
    let (mut amd, mut nv) = ServingSpec::vendor_pair();
    for spec in [&mut amd, &mut nv] {
        spec.layers = layers;
        spec.decode_steps = steps;
    }
    let paths = [dir.join("fusionscope_bench_serving_amd.json"), dir.join("fusionscope_bench_serving_nvidia.json")];
    let mut sizes = [0u64; 2];
    for (i, spec) in [&amd, &nv].into_iter().enumerate() {
        let file = File::create(&paths[i]).map_err(|e| format!("cannot write {}: {e}", paths[i].display()))?;
        sizes[i] = write_serving_trace(BufWriter::with_capacity(1 << 20, file), spec)?;
    }
    let result = (|| -> CliResult {
        let mut best = [f64::INFINITY; 4];
        let mut kernels = [0usize; 2];
        let mut found = (0usize, 0usize);
        for _ in 0..runs.max(1) {
            let t = Instant::now();
            let (a, b) = std::thread::scope(|s| {
                let a = s.spawn(|| super::trace::load(&paths[0]));
                let b = s.spawn(|| super::trace::load(&paths[1]));
                (a.join(), b.join())
            });
            let joined = |r: std::thread::Result<Result<Trace, String>>| {
                r.unwrap_or_else(|_| Err("a reader thread failed".into()))
            };
            let (a, b) = (joined(a)?, joined(b)?);
            let read = t.elapsed().as_secs_f64();
            let c = compare(Input::new(&a, Some("amd")), Input::new(&b, Some("nvidia")));
            let total = t.elapsed().as_secs_f64();
            let t = Instant::now();
            for tr in [&a, &b] {
                std::hint::black_box(search(tr, &|id| classify(tr.name(id)).category));
            }
            let search = t.elapsed().as_secs_f64();
            kernels = [a.kernels.len(), b.kernels.len()];
            found = (c.layer_alignment.len(), c.layer_alignment.iter().map(|l| l.rows.len()).sum());
            for (slot, v) in best.iter_mut().zip([read, total - read, search, total]) {
                *slot = slot.min(v);
            }
        }
        print(&format!(
            "serving bench: {steps} decode passes of {layers} layers per trace; {} + {} kernels, {:.1} + {:.1} MB (best of {runs})\n\
             compare end to end: {:.3} s = read both files at once {:.3} s + compare {:.3} s, of which structure search (both sides) {:.3} s ({:.1} %)\n\
             layer alignment: {} phase pairs, {} rows\n",
            group(kernels[0]),
            group(kernels[1]),
            mb(sizes[0]),
            mb(sizes[1]),
            best[3],
            best[0],
            best[1],
            best[2],
            100.0 * best[2] / best[3],
            found.0,
            found.1
        ))
    })();
    if keep {
        let kept: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
        print(&format!("kept: {}\n", kept.join(" ")))?;
    } else {
        for p in &paths {
            let _ = std::fs::remove_file(p);
        }
    }
    result
}

fn group(n: usize) -> String {
    units::group_digits(n as u64)
}

/// Feeds what is written to it to a trace reader (the generator's text straight into the fold).
struct Feed<S: trace::EventSink>(Reader<S>);

impl<S: trace::EventSink> std::io::Write for Feed<S> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.feed(buf).map_err(std::io::Error::other)?;
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn ranks_bench(ranks: u32, size_mb: u64) -> CliResult {
    use analysis::ranks::synthetic::SyntheticJob;
    use analysis::ranks::{job_report, RankSink};
    use std::io::Write;
    let job = SyntheticJob::sized(ranks, size_mb * 1_000_000);
    // The generator alone, on one rank, to tell its share of the time from the reading's.
    let t = Instant::now();
    let mut count = Count(0);
    job.write_rank(0, &mut std::io::BufWriter::with_capacity(1 << 20, &mut count))?;
    let generate_one = t.elapsed().as_secs_f64();
    print(&format!(
        "ranks bench: {} ranks of {:.0} MB ({} steps of {} kernels each); generating one takes {:.2} s\n",
        job.world_size,
        mb(count.0),
        job.steps,
        job.kernels_per_step,
        generate_one
    ))?;
    reset_hwm();
    let t = Instant::now();
    let mut summaries = Vec::new();
    let mut bytes = 0u64;
    for r in 0..job.world_size {
        let name = format!("rank{r}");
        let mut feed = std::io::BufWriter::with_capacity(1 << 20, Feed(Reader::with_sink(RankSink::new(&name))));
        bytes += job.write_rank(r, &mut feed)?;
        feed.flush()?;
        let reader = feed.into_inner().map_err(|e| e.into_error())?.0;
        summaries.push(reader.finish().map_err(|e| format!("{name}: {e}"))?);
    }
    let folded = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let report = job_report(&summaries)?;
    let reported = t.elapsed().as_secs_f64();
    let peak = vm_hwm().unwrap_or(0);
    let reading = (folded - generate_one * f64::from(job.world_size)).max(1e-9);
    print(&format!(
        "folded {:.0} MB in {:.2} s ({:.2} s less generating: {:.0} MB/s); job report in {:.3} s; peak RSS {:.1} MB ({:.4}× one rank)\n",
        mb(bytes),
        folded,
        reading,
        mb(bytes) / reading,
        reported,
        mb(peak),
        peak as f64 / (bytes as f64 / f64::from(job.world_size))
    ))?;
    let collectives: usize = summaries.iter().map(|s| s.collectives.len()).sum();
    let straggler = report.stragglers.first().map_or("none".to_string(), |s| {
        format!("rank {} (planted: rank {}), {:.1} ms of waits caused", s.rank, job.straggler, s.caused_wait_us / 1e3)
    });
    print(&format!(
        "{} collective kernels, {} collectives matched, {} groups unmatched; straggler {straggler}\n",
        group(collectives),
        group(report.collectives.len()),
        report.unmatched.len()
    ))
}
