//! `fusionscope export TRACE… -o DIR [--job NAME]` and `fusionscope fleet DIR… [--report NAME |
//! --sql QUERY] [--baseline DIR…] [--json|--csv] [--memory-mb MIB] [--threads N] [--max-rows N]`: every
//! trace's facts as Parquet tables, and queries over any number of exported traces with
//! DataFusion embedded, in bounded memory (docs/fleet.md).

use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::mpsc::RecvTimeoutError;
use std::time::{Duration, Instant};

use analysis::pipeline::{analyse_with_kernel_groups, Choices};
use analysis::ranks::RankSink;
use analysis::summary::ClassifiedTrace;
use fleet::facts::{tables, TraceId, TraceRow};
use fleet::files::{file_stem, write_tables, Partition};
use fleet::query::{report, Fleet, Limits, QueryResult, QUERY_MEMORY_BYTES, REPORTS, RESULT_ROWS};
use fleet::schema::FactTable;
use fleet::streamed::{finish, KernelRows};
use fleet::WHOLE_TRACE_FILE_BYTES;
use table::Table;
use trace::read::both::Both;
use trace::Trace;
use units::format_bytes;

use super::io::{print, print_json, CliResult};
use super::trace_file::{load_sink, load_sink_reporting};

/// How often a running query says how much it has read.
const PROGRESS_EVERY: Duration = Duration::from_secs(2);

/// How often a streamed trace's export says how much of the file it has read.
const PROGRESS_BYTES: u64 = 256 << 20;

#[derive(clap::Args)]
pub struct ExportArgs {
    /// Traces of any profiler format the page reads
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Folder the tables go into (`DIR/<table>/job=<job>/rank=<rank>/<trace>.parquet`); created
    /// if missing
    #[arg(short = 'o', long = "out", value_name = "DIR")]
    pub out: PathBuf,
    /// The job the traces belong to (default: each trace's folder name)
    #[arg(long, value_name = "NAME")]
    pub job: Option<String>,
    /// Stream every trace (kernels and collectives in bounded memory; no launching ops, op
    /// table or fusion groups), as traces over 256 MiB are
    #[arg(long)]
    pub streamed: bool,
}

#[derive(clap::Args)]
pub struct FleetArgs {
    /// Folders `fusionscope export` wrote
    #[arg(required = true)]
    pub dirs: Vec<PathBuf>,
    /// A canned report: categories, kernels, fusions, devices, stragglers, regressions (needs --baseline)
    #[arg(long, value_name = "NAME", conflicts_with = "sql")]
    pub report: Option<String>,
    /// Any read-only SQL over the tables traces, kernels, steps, ops, fusion_groups,
    /// opportunities, collectives (it may start with an SQL comment, `-- …`)
    #[arg(long, value_name = "QUERY", allow_hyphen_values = true)]
    pub sql: Option<String>,
    /// Export folders of the set to compare against, as tables baseline_<table>
    #[arg(long, value_name = "DIR")]
    pub baseline: Vec<PathBuf>,
    /// Print the result as JSON (columns and rows)
    #[arg(long, conflicts_with = "csv")]
    pub json: bool,
    /// Print the result as CSV
    #[arg(long)]
    pub csv: bool,
    /// Memory a query's sorts, joins and aggregations may hold, in MiB, before they spill to the
    /// system's temporary folder
    #[arg(long, value_name = "MIB", default_value_t = (QUERY_MEMORY_BYTES >> 20) as u64, value_parser = clap::value_parser!(u64).range(1..=1 << 20))]
    pub memory_mb: u64,
    /// Threads a query runs on, at most 1,024 (default: every core)
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=1024))]
    pub threads: Option<u16>,
    /// Rows of the result kept at most (the query stops reading past them)
    #[arg(long, value_name = "N", default_value_t = RESULT_ROWS as u64, value_parser = clap::value_parser!(u64).range(1..=1 << 32))]
    pub max_rows: u64,
}

pub fn run_export(args: ExportArgs) -> CliResult {
    let (mut read, mut failed) = (0usize, 0usize);
    let mut stems: Vec<String> = Vec::with_capacity(args.files.len());
    for (n, path) in args.files.iter().enumerate() {
        let shown = path.display().to_string();
        let job = args
            .job
            .clone()
            .or_else(|| path.parent().and_then(|p| p.file_name()).map(|f| f.to_string_lossy().into_owned()));
        let id = TraceId { trace: shown.clone(), job };
        let mut stem = file_stem(&shown);
        // Two inputs of one path (or one name after cleaning) keep two sets of files.
        while stems.contains(&stem) {
            stem.push('_');
        }
        stems.push(stem.clone());
        let size = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
        let streamed = args.streamed || size > WHOLE_TRACE_FILE_BYTES;
        let how = if streamed { "streamed" } else { "whole" };
        eprintln!("fusionscope: exporting {} of {} ({how}, {}): {shown}", n + 1, args.files.len(), format_bytes(size));
        let facts = if streamed { export_streamed(path, size, &args.out, &stem, &id) } else { export_whole(path, &id) };
        let (partition, facts) = match facts {
            Ok(facts) => {
                read += 1;
                facts
            }
            Err(e) => {
                failed += 1;
                eprintln!("fusionscope: {e} (listed in traces with its error)");
                (Partition::of(&id, None), vec![TraceRow::failed(&e).table(&id)])
            }
        };
        write_tables(&args.out, &partition, &stem, facts)?;
    }
    let traces = if read == 1 { "trace" } else { "traces" };
    eprintln!("fusionscope: {read} {traces} exported to {}, {failed} failed to read", args.out.display());
    Ok(())
}

/// A trace read whole and analysed as `trace` does, its rank folded as `ranks` does, in one
/// reading.
fn export_whole(path: &Path, id: &TraceId) -> Result<(Partition, Vec<FactTable>), String> {
    let (trace, rank) = load_sink(path, Both(Trace::default(), RankSink::new(&id.trace)))?;
    let side = ClassifiedTrace::new(&trace);
    let (summary, time, groups) = analyse_with_kernel_groups(&side, Some(&id.trace), &Choices::default());
    Ok((Partition::of(id, Some(&rank)), tables(id, &side, &summary, &time, &groups, &rank)))
}

/// A trace exported as it is read: its kernel rows written as they come, its rank folded.
/// Every 256 MiB of the file, it says how far it is.
fn export_streamed(
    path: &Path,
    size: u64,
    out: &Path,
    stem: &str,
    id: &TraceId,
) -> Result<(Partition, Vec<FactTable>), String> {
    let rows = KernelRows::create(out, stem, &id.trace).map_err(|e| e.to_string())?;
    let mut progress = |read: u64| eprintln!("fusionscope:   {} of {} read", format_bytes(read), format_bytes(size));
    let (rows, rank) = load_sink_reporting(path, Both(rows, RankSink::new(&id.trace)), PROGRESS_BYTES, &mut progress)?;
    let facts = finish(rows, &rank, id).map_err(|e| e.to_string())?;
    Ok((Partition::of(id, Some(&rank)), facts))
}

pub fn run_fleet(args: FleetArgs) -> CliResult {
    let sql = match (&args.report, &args.sql) {
        (_, Some(sql)) => sql.clone(),
        (Some(name), None) => {
            let r = report(name).ok_or_else(|| {
                let names: Vec<&str> = REPORTS.iter().map(|r| r.name).collect();
                format!("no report {name:?}: the reports are {}", names.join(", "))
            })?;
            if r.needs_baseline && args.baseline.is_empty() {
                return Err(format!("the {} report compares against a baseline: give --baseline DIR", r.name).into());
            }
            r.sql.to_string()
        }
        (None, None) => {
            let mut text = String::from("Reports (fleet DIR… --report NAME), or --sql QUERY:\n");
            for r in REPORTS {
                text.push_str(&format!("  {:<12} {}\n", r.name, r.about));
            }
            return print(&text);
        }
    };
    let mut limits = Limits { memory: (args.memory_mb as usize) << 20, ..Limits::default() };
    if let Some(threads) = args.threads.and_then(|n| std::num::NonZeroUsize::new(n.into())) {
        limits.threads = threads;
    }
    let fleet = Fleet::open_within(&args.dirs, &args.baseline, limits)?;
    let result = query_reporting(&fleet, &sql, args.max_rows as usize)?;
    let rows = result.rows.len();
    if result.truncated {
        eprintln!(
            "fusionscope: the query gives more rows than these first {}: narrow it (WHERE, GROUP BY, LIMIT) or \
             raise --max-rows",
            units::group_digits(rows as u64)
        );
    }
    if args.json {
        print_json(&result)
    } else if args.csv {
        print(&table_of(&result).to_csv())
    } else {
        print(&table_of(&result).to_text())
    }
}

/// Runs `sql` as [`Fleet::query_at_most`] does, saying on stderr how many bytes of Parquet it
/// is about to query, how far a long scan is every [`PROGRESS_EVERY`], and when done its rows,
/// the bytes it read and its time.
fn query_reporting(fleet: &Fleet, sql: &str, max_rows: usize) -> Result<QueryResult, fleet::FleetError> {
    let total = format_bytes(fleet.bytes);
    eprintln!("fusionscope: querying {} Parquet files ({total})", fleet.files);
    let started = Instant::now();
    let read = fleet.read();
    let (done, finished) = std::sync::mpsc::channel::<()>();
    let reading = std::sync::Arc::clone(&read);
    let result = std::thread::scope(|s| {
        s.spawn(move || {
            while let Err(RecvTimeoutError::Timeout) = finished.recv_timeout(PROGRESS_EVERY) {
                let so_far = format_bytes(reading.load(Ordering::Relaxed));
                eprintln!("fusionscope: read {so_far} of {total} so far ({:.0} s)", started.elapsed().as_secs_f64());
            }
        });
        let result = fleet.query_at_most(sql, max_rows);
        drop(done);
        result
    })?;
    let rows = result.rows.len();
    eprintln!(
        "fusionscope: {rows} {}, {} of Parquet read, in {:.2} s",
        if rows == 1 { "row" } else { "rows" },
        format_bytes(read.load(Ordering::Relaxed)),
        started.elapsed().as_secs_f64()
    );
    Ok(result)
}

fn table_of(result: &QueryResult) -> Table {
    let headers: Vec<&str> = result.columns.iter().map(String::as_str).collect();
    let mut table = Table::new(&headers);
    for row in &result.rows {
        table.row(row.iter().map(|c| c.text()));
    }
    table
}
