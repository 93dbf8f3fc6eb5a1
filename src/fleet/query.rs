//! Queries over exported traces with Apache DataFusion, embedded: each table's Parquet files
//! of every export folder registered as one table (a baseline's as `baseline_<table>`), the
//! canned reports' SQL ([`REPORTS`], in `src/fleet/sql/`, the same text Spark SQL runs), and a
//! user's SQL, read-only: no DDL, no DML, no statement that sets anything.

use std::num::NonZeroUsize;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicU64;
use std::sync::Arc;

use datafusion::arrow::array::{Array, ArrayRef, AsArray};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, Float64Type, Int64Type, UInt64Type};
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::arrow::util::display::{ArrayFormatter, FormatOptions};
use datafusion::datasource::file_format::parquet::ParquetFormat;
use datafusion::datasource::listing::{ListingOptions, ListingTable, ListingTableConfig, ListingTableUrl};
use datafusion::execution::context::{SQLOptions, SessionConfig, SessionContext};
use datafusion::execution::object_store::ObjectStoreUrl;
use datafusion::execution::runtime_env::RuntimeEnvBuilder;
use datafusion::object_store::local::LocalFileSystem;
use futures::StreamExt;
use serde::Serialize;

use crate::files::checked_files;
use crate::scan::CountingStore;
use crate::FleetError;

/// Memory a query's sorts, joins and aggregations may hold at once, unless told otherwise
/// ([`Limits`]); past it they spill to the system's temporary folder, and a query
/// that cannot spill fails, saying so, rather than taking the machine's memory.
pub const QUERY_MEMORY_BYTES: usize = 1 << 30;

/// Rows a result keeps at most, unless told otherwise ([`Fleet::query_at_most`]): a result is
/// held whole to be printed as a table, and `SELECT * FROM kernels` over a fleet has billions.
/// The query stops reading once it has them.
pub const RESULT_ROWS: usize = 100_000;

/// What a fleet's queries may take of the machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Bytes a query's sorts, joins and aggregations may hold before they spill.
    pub memory: usize,
    /// Threads a query runs on; each table's files are read in as many partitions.
    pub threads: NonZeroUsize,
}

impl Default for Limits {
    /// [`QUERY_MEMORY_BYTES`], and every core this process may run on.
    fn default() -> Limits {
        let threads = std::thread::available_parallelism().unwrap_or(NonZeroUsize::MIN);
        Limits { memory: QUERY_MEMORY_BYTES, threads }
    }
}

/// A canned report: its name (`fleet --report NAME`), what it answers, and its SQL.
#[derive(Debug, Clone, Copy)]
pub struct Report {
    pub name: &'static str,
    pub about: &'static str,
    pub sql: &'static str,
    /// It compares against a baseline set (`--baseline DIR`).
    pub needs_baseline: bool,
}

/// The canned reports, in the order `fleet` lists them.
pub const REPORTS: [Report; 6] = [
    Report {
        name: "categories",
        about: "kernel time by category",
        sql: include_str!("sql/categories.sql"),
        needs_baseline: false,
    },
    Report {
        name: "kernels",
        about: "the kernels with the most time",
        sql: include_str!("sql/kernels.sql"),
        needs_baseline: false,
    },
    Report {
        name: "fusions",
        about: "missing fusions by time saved",
        sql: include_str!("sql/fusions.sql"),
        needs_baseline: false,
    },
    Report {
        name: "devices",
        about: "the same op on each set of devices",
        sql: include_str!("sql/devices.sql"),
        needs_baseline: false,
    },
    Report {
        name: "stragglers",
        about: "each rank's busy time against its job's mean",
        sql: include_str!("sql/stragglers.sql"),
        needs_baseline: false,
    },
    Report {
        name: "regressions",
        about: "kernel time per trace by category against the baseline",
        sql: include_str!("sql/regressions.sql"),
        needs_baseline: true,
    },
];

/// The canned report of a name.
pub fn report(name: &str) -> Option<&'static Report> {
    REPORTS.iter().find(|r| r.name == name)
}

/// One cell of a result.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Cell {
    Null,
    Int(i64),
    Count(u64),
    Real(f64),
    Text(String),
}

impl Cell {
    /// The cell as a table shows it: reals to three decimals, nothing for null.
    pub fn text(&self) -> String {
        match self {
            Cell::Null => String::new(),
            Cell::Int(n) => n.to_string(),
            Cell::Count(n) => n.to_string(),
            Cell::Real(x) => format!("{x:.3}"),
            Cell::Text(s) => s.clone(),
        }
    }
}

/// A query's result: its columns and rows, in the order the query gives.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct QueryResult {
    pub columns: Vec<String>,
    pub rows: Vec<Vec<Cell>>,
    /// The query gives more rows than these, its first ones ([`RESULT_ROWS`]).
    pub truncated: bool,
}

/// The export folders a query reads: the current set and, optionally, a baseline.
pub struct Fleet {
    ctx: SessionContext,
    runtime: tokio::runtime::Runtime,
    /// Parquet files registered, and their bytes, for the progress lines.
    pub files: usize,
    pub bytes: u64,
    /// Bytes the queries have read from the files so far ([`CountingStore`]).
    read: Arc<AtomicU64>,
    /// Bytes a query's operators may hold before they spill.
    memory: usize,
}

impl Fleet {
    /// Registers every table of `dirs` (and `baseline`'s as `baseline_<table>`), after checking
    /// that each file is a Parquet file of this schema version; queries run within the default
    /// [`Limits`].
    pub fn open(dirs: &[PathBuf], baseline: &[PathBuf]) -> Result<Fleet, FleetError> {
        Fleet::open_within(dirs, baseline, Limits::default())
    }

    /// As [`Fleet::open`], with queries run within `limits`.
    pub fn open_within(dirs: &[PathBuf], baseline: &[PathBuf], limits: Limits) -> Result<Fleet, FleetError> {
        let Limits { memory, threads } = limits;
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(threads.get())
            .enable_all()
            .build()
            .map_err(|e| FleetError::Query { message: e.to_string() })?;
        let env = RuntimeEnvBuilder::new().with_memory_limit(memory, 1.0).build_arc().map_err(FleetError::query)?;
        let config = SessionConfig::new().with_target_partitions(threads.get());
        let ctx = SessionContext::new_with_config_rt(config, env);
        let read = Arc::new(AtomicU64::new(0));
        let local = CountingStore::new(Arc::new(LocalFileSystem::new()), Arc::clone(&read));
        ctx.register_object_store(ObjectStoreUrl::local_filesystem().as_ref(), Arc::new(local));
        let (mut files, mut bytes) = (0, 0u64);
        for (prefix, set) in [("", dirs), ("baseline_", baseline)] {
            let mut by_table: Vec<(&'static str, Vec<PathBuf>)> = Vec::new();
            for dir in set {
                for (table, paths) in checked_files(dir)? {
                    match by_table.iter_mut().find(|(t, _)| *t == table) {
                        Some((_, all)) => all.extend(paths),
                        None => by_table.push((table, paths)),
                    }
                }
            }
            for (table, paths) in by_table.into_iter().filter(|(_, p)| !p.is_empty()) {
                files += paths.len();
                bytes = paths.iter().filter_map(|p| p.metadata().ok()).fold(bytes, |b, m| b.saturating_add(m.len()));
                let name = format!("{prefix}{table}");
                runtime.block_on(register(&ctx, &name, &paths))?;
            }
        }
        Ok(Fleet { ctx, runtime, files, bytes, read, memory })
    }

    /// The count of bytes the queries have read from the files, shared: a progress line reads
    /// it while a query runs.
    pub fn read(&self) -> Arc<AtomicU64> {
        Arc::clone(&self.read)
    }

    /// Runs `sql` read-only over the registered tables; at most [`RESULT_ROWS`] rows.
    pub fn query(&self, sql: &str) -> Result<QueryResult, FleetError> {
        self.query_at_most(sql, RESULT_ROWS)
    }

    /// Runs `sql` read-only over the registered tables, keeping its first `max_rows` rows: the
    /// rest is never computed where the plan allows (the stream is dropped).
    pub fn query_at_most(&self, sql: &str, max_rows: usize) -> Result<QueryResult, FleetError> {
        let options = SQLOptions::new().with_allow_ddl(false).with_allow_dml(false).with_allow_statements(false);
        let failed = |e: datafusion::error::DataFusionError| FleetError::of_query(e, self.memory);
        let (columns, batches, truncated) = self.runtime.block_on(async {
            let frame = self.ctx.sql_with_options(sql, options).await.map_err(failed)?;
            let mut stream = frame.execute_stream().await.map_err(failed)?;
            let columns: Vec<String> = stream.schema().fields().iter().map(|f| f.name().clone()).collect();
            let (mut batches, mut kept, mut truncated) = (Vec::new(), 0usize, false);
            while let Some(batch) = stream.next().await {
                let batch = batch.map_err(failed)?;
                if kept + batch.num_rows() > max_rows {
                    batches.push(batch.slice(0, max_rows - kept));
                    truncated = true;
                    break;
                }
                kept += batch.num_rows();
                batches.push(batch);
            }
            Ok::<_, FleetError>((columns, batches, truncated))
        })?;
        let mut rows = Vec::new();
        for batch in &batches {
            rows.extend(rows_of(batch)?);
        }
        Ok(QueryResult { columns, rows, truncated })
    }
}

async fn register(ctx: &SessionContext, name: &str, paths: &[PathBuf]) -> Result<(), FleetError> {
    let urls = paths.iter().map(|p| url(p)).collect::<Result<Vec<_>, _>>()?;
    let options = ListingOptions::new(Arc::new(ParquetFormat::default())).with_file_extension(".parquet");
    let config = ListingTableConfig::new_with_multi_paths(urls)
        .with_listing_options(options)
        .infer_schema(&ctx.state())
        .await
        .map_err(FleetError::query)?;
    let table = ListingTable::try_new(config).map_err(FleetError::query)?;
    ctx.register_table(name, Arc::new(table)).map_err(FleetError::query)?;
    Ok(())
}

fn url(path: &Path) -> Result<ListingTableUrl, FleetError> {
    let absolute = std::path::absolute(path).map_err(|e| FleetError::io(path, e))?;
    ListingTableUrl::parse(absolute.to_string_lossy()).map_err(FleetError::query)
}

/// The rows of a batch as cells: integers and reals as numbers, the rest as Arrow writes it.
fn rows_of(batch: &RecordBatch) -> Result<Vec<Vec<Cell>>, FleetError> {
    let columns: Vec<Vec<Cell>> = batch.columns().iter().map(cells).collect::<Result<_, _>>()?;
    Ok((0..batch.num_rows()).map(|r| columns.iter().map(|c| c[r].clone()).collect()).collect())
}

fn cells(array: &ArrayRef) -> Result<Vec<Cell>, FleetError> {
    let n = array.len();
    let err = |e: datafusion::arrow::error::ArrowError| FleetError::Query { message: e.to_string() };
    let cells = match array.data_type() {
        DataType::Int8 | DataType::Int16 | DataType::Int32 | DataType::Int64 => {
            let a = cast(array, &DataType::Int64).map_err(err)?;
            let a = a.as_primitive::<Int64Type>();
            (0..n).map(|i| if a.is_null(i) { Cell::Null } else { Cell::Int(a.value(i)) }).collect()
        }
        DataType::UInt8 | DataType::UInt16 | DataType::UInt32 | DataType::UInt64 => {
            let a = cast(array, &DataType::UInt64).map_err(err)?;
            let a = a.as_primitive::<UInt64Type>();
            (0..n).map(|i| if a.is_null(i) { Cell::Null } else { Cell::Count(a.value(i)) }).collect()
        }
        DataType::Float16 | DataType::Float32 | DataType::Float64 | DataType::Decimal128(..) => {
            let a = cast(array, &DataType::Float64).map_err(err)?;
            let a = a.as_primitive::<Float64Type>();
            (0..n).map(|i| if a.is_null(i) { Cell::Null } else { Cell::Real(a.value(i)) }).collect()
        }
        _ => {
            let f = ArrayFormatter::try_new(array.as_ref(), &FormatOptions::default()).map_err(err)?;
            (0..n).map(|i| if array.is_null(i) { Cell::Null } else { Cell::Text(f.value(i).to_string()) }).collect()
        }
    };
    Ok(cells)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::files::{write_tables, Partition};
    use crate::schema::{FactTable, Values};

    /// An export folder of one `traces` row, for queries that need none of it (removed with
    /// the [`tempfile::TempDir`] dropped).
    fn export() -> (tempfile::TempDir, PathBuf) {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().to_path_buf();
        let mut trace = Values::text(1);
        if let Values::Text(b) = &mut trace {
            b.append_value("a.json");
        }
        let table = FactTable { name: "traces", columns: vec![("trace", trace)] };
        write_tables(&dir, &Partition { job: None, rank: None }, "a", vec![table]).unwrap();
        (tmp, dir)
    }

    /// A result keeps its first rows and says there were more; a query of exactly that many
    /// is whole, and one of none still names its columns.
    #[test]
    fn a_result_keeps_its_first_rows_and_says_there_were_more() {
        let (_tmp, dir) = export();
        let fleet = Fleet::open(std::slice::from_ref(&dir), &[]).unwrap();
        // A hundred million rows: only the first few are ever made.
        let r = fleet.query_at_most("SELECT value FROM range(100000000)", 5).unwrap();
        assert_eq!((r.rows.len(), r.truncated), (5, true));
        assert_eq!(r.rows[4], vec![Cell::Int(4)]);
        let r = fleet.query_at_most("SELECT value FROM range(5)", 5).unwrap();
        assert_eq!((r.rows.len(), r.truncated), (5, false));
        let r = fleet.query("SELECT trace FROM traces WHERE trace = 'none'").unwrap();
        assert_eq!((r.columns, r.rows.len(), r.truncated), (vec!["trace".to_string()], 0, false));
    }

    /// A query that needs more than its memory limit, even spilling, fails saying so and how
    /// to go on; under the default limit the same query answers.
    #[test]
    fn a_query_past_its_memory_limit_says_so() {
        let (_tmp, dir) = export();
        let sql = "SELECT COUNT(*) AS keys, SUM(n) AS rows FROM \
                   (SELECT value % 300000 AS k, COUNT(*) AS n FROM range(600000) GROUP BY k)";
        let limits = Limits { memory: 1 << 20, ..Limits::default() };
        let small = Fleet::open_within(std::slice::from_ref(&dir), &[], limits).unwrap();
        let e = small.query(sql).unwrap_err();
        assert!(matches!(e, FleetError::Memory { .. }), "{e}");
        let text = e.to_string();
        assert!(text.contains("limit of 1.00 MiB") && text.contains("--memory-mb"), "{text}");
        // DataFusion's part names the allocation and its operator, not every reservation.
        assert!(text.contains("DataFusion says: Failed to allocate additional "), "{text}");
        assert!(!text.contains("top memory consumers") && !text.contains("pool_size"), "{text}");
        let r = Fleet::open(std::slice::from_ref(&dir), &[]).unwrap().query(sql).unwrap();
        assert_eq!(r.rows, vec![vec![Cell::Int(300000), Cell::Int(600000)]]);
    }
}
