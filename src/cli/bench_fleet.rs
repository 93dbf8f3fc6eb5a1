//! `fusionscope bench fleet`: the figures of docs/fleet.md. A synthetic job's ranks (as `bench
//! ranks` makes them), each generated into the ranks fold alone and then into the streamed
//! export, so that the export's cost over the reading is measured on the same input; then many
//! small synthetic traces exported into one folder and every canned report run over them, with
//! the Parquet's size per GB of JSON.

use std::io::Write;
use std::path::Path;
use std::time::Instant;

use analysis::ranks::synthetic::SyntheticJob;
use analysis::ranks::RankSink;
use analysis::summary_only::SummarySink;
use fleet::facts::TraceId;
use fleet::files::{write_tables, Partition};
use fleet::query::{Fleet, REPORTS};
use fleet::streamed::{finish, KernelRows};
use formats::Reader;
use trace::read::both::Both;
use trace::EventSink;

use super::io::{print, CliResult};
use super::peak_memory::{heap_peak_of, mb, reset_hwm, vm_hwm};

/// Feeds what a generator writes to a reader.
struct Feed<S: EventSink>(Reader<S>);

impl<S: EventSink> Write for Feed<S> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.feed(buf).map_err(std::io::Error::other)?;
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Generates rank `r` of `job` into `sink`'s reader; the sink's output and the bytes fed.
fn fold<S: EventSink>(job: &SyntheticJob, r: u32, sink: S) -> Result<(S::Output, u64), Box<dyn std::error::Error>> {
    let mut feed = std::io::BufWriter::with_capacity(1 << 20, Feed(Reader::with_sink(sink)));
    let bytes = job.write_rank(r, &mut feed)?;
    feed.flush()?;
    let reader = feed.into_inner().map_err(|e| e.into_error())?.0;
    Ok((reader.finish().map_err(|e| format!("rank {r}: {e}"))?, bytes))
}

/// Exports rank `r` of `job` streamed into `out`.
fn export(job: &SyntheticJob, r: u32, out: &Path) -> Result<u64, Box<dyn std::error::Error>> {
    let name = format!("rank{r}.json");
    let id = TraceId { trace: name.clone(), job: Some("synthetic".into()) };
    let rows = KernelRows::create(out, &name, &name)?;
    let ((rows, rank), bytes) = fold(job, r, Both(rows, RankSink::new(&name)))?;
    write_tables(out, &Partition::of(&id, Some(&rank)), &name, finish(rows, &rank, &id)?)?;
    Ok(bytes)
}

fn folder_bytes(dir: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else { return 0 };
    entries
        .flatten()
        .map(|e| match e.file_type() {
            Ok(t) if t.is_dir() => folder_bytes(&e.path()),
            _ => e.metadata().map(|m| m.len()).unwrap_or(0),
        })
        .sum()
}

/// One phase's time and peak resident memory.
struct Phase {
    secs: f64,
    resident: u64,
}

/// Runs `work` as a phase of its own: its time and its peak resident memory.
fn phase(work: impl FnOnce() -> CliResult) -> Result<Phase, Box<dyn std::error::Error>> {
    reset_hwm();
    let t = Instant::now();
    work()?;
    Ok(Phase { secs: t.elapsed().as_secs_f64(), resident: vm_hwm().unwrap_or(0) })
}

pub fn fleet_bench(ranks: u32, size_mb: u64, traces: u32, trace_mb: u64, dir: &Path) -> CliResult {
    let out = dir.join(format!("fusionscope-fleet-bench-{}", std::process::id()));
    let job = SyntheticJob::sized(ranks, size_mb * 1_000_000);
    print(&format!("fleet bench: {} ranks of {size_mb} MB, then {traces} traces of {trace_mb} MB\n", job.world_size))?;
    // The generator alone, so that both phases' reading can be told from it.
    let t = Instant::now();
    job.write_rank(0, &mut std::io::sink())?;
    let generate = t.elapsed().as_secs_f64() * f64::from(job.world_size);
    // The summary-only fold first: its peak is the mark the export's is held to.
    let summary = phase(|| {
        for r in 0..job.world_size {
            fold(&job, r, SummarySink::new(Some("bench")))?;
        }
        Ok(())
    })?;
    let mut bytes = 0;
    let ranks = phase(|| {
        for r in 0..job.world_size {
            bytes += fold(&job, r, RankSink::new(&format!("rank{r}")))?.1;
        }
        Ok(())
    })?;
    let ranks_dir = out.join("ranks");
    let exported = phase(|| {
        for r in 0..job.world_size {
            export(&job, r, &ranks_dir)?;
        }
        Ok(())
    })?;
    let parquet = folder_bytes(&ranks_dir);
    let (read_s, export_s) = ((ranks.secs - generate).max(1e-9), (exported.secs - generate).max(1e-9));
    print(&format!(
        "ranks: {:.0} MB of JSON; folded in {:.2} s and exported in {:.2} s, less {:.2} s generating: {:.2} s vs \
         {:.2} s ({:+.1} %); {:.1} MB of Parquet ({:.1} MB per GB of JSON)\n",
        mb(bytes),
        ranks.secs,
        exported.secs,
        generate,
        read_s,
        export_s,
        (export_s / read_s - 1.0) * 100.0,
        mb(parquet),
        mb(parquet) / (mb(bytes) / 1000.0)
    ))?;
    // The heap of one rank each, counted apart from the timed phases so that they do not pay
    // for the counting; each rank is read alone, so one rank's peak is the phase's.
    let heaps = [
        heap_peak_of(|| fold(&job, 0, SummarySink::new(Some("bench"))).map(drop)),
        heap_peak_of(|| fold(&job, 0, RankSink::new("rank0")).map(drop)),
        heap_peak_of(|| export(&job, 0, &ranks_dir).map(drop)),
    ];
    let phases = [("summary-only", &summary), ("ranks fold", &ranks), ("export", &exported)];
    for ((name, p), (done, heap)) in phases.into_iter().zip(heaps) {
        done?;
        print(&format!("  {name:<12} peak RSS {:5.1} MB, peak heap {:5.1} MB\n", mb(p.resident), mb(heap)))?;
    }
    std::fs::remove_dir_all(&ranks_dir)?;

    let many = SyntheticJob::sized(traces, trace_mb * 1_000_000);
    let fleet_dir = out.join("fleet");
    let t = Instant::now();
    let mut json = 0;
    for r in 0..many.world_size {
        json += export(&many, r, &fleet_dir)?;
    }
    let exported = t.elapsed().as_secs_f64();
    let parquet = folder_bytes(&fleet_dir);
    print(&format!(
        "fleet: {} traces, {:.0} MB of JSON, exported in {:.1} s; {:.1} MB of Parquet ({:.1} MB per GB of JSON)\n",
        many.world_size,
        mb(json),
        exported,
        mb(parquet),
        mb(parquet) / (mb(json) / 1000.0)
    ))?;
    reset_hwm();
    let t = Instant::now();
    let fleet = Fleet::open(std::slice::from_ref(&fleet_dir), &[])?;
    let opened = t.elapsed().as_secs_f64();
    print(&format!("opened {} Parquet files (every footer checked) in {opened:.2} s\n", fleet.files))?;
    for report in REPORTS.iter().filter(|r| !r.needs_baseline) {
        let t = Instant::now();
        let result = fleet.query(report.sql)?;
        print(&format!("  {:<12} {:>6} rows in {:.2} s\n", report.name, result.rows.len(), t.elapsed().as_secs_f64()))?;
    }
    print(&format!("peak RSS while querying {:.1} MB\n", mb(vm_hwm().unwrap_or(0))))?;
    std::fs::remove_dir_all(&out)?;
    Ok(())
}
