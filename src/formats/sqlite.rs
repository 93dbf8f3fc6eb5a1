//! The SQLite side both SQLite trace formats share (Nsight Systems' export, [`crate::nsys`],
//! and rocpd, [`crate::rocpd`]): opening a database read-only from its bytes, its tables and
//! views, rows selected by column name within [`NSYS_TABLE_ROWS`], and the error type. Kept
//! apart from either reader so that neither imports the other.

use std::collections::HashSet;

use rusqlite::{Connection, OpenFlags, MAIN_DB};
use thiserror::Error;

use limits::{NSYS_TABLE_ROWS, SQLITE_STEPS};
use trace::read::inflate::{GatherError, InflateError};
use units::{format_bytes, group_digits};

/// Why an SQLite file could not be read as an Nsight Systems export.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum SqliteError {
    /// SQLite's own message (`database disk image is malformed`, `file is not a database`),
    /// with what was being done.
    #[error("SQLite cannot read the database ({during}): {message}")]
    Sqlite { during: String, message: String },
    #[error(
        "it is neither an Nsight Systems export (no CUPTI_ACTIVITY_KIND_KERNEL or StringIds table) nor a \
         rocpd database (no kernels view); its tables: {tables}"
    )]
    NotNsys { tables: String },
    /// The queries passed [`SQLITE_STEPS`]: a view that never ends, or a database far beyond
    /// any real export.
    #[error(
        "SQLite stopped {during}: the queries passed the budget of {} steps of work (a view that never ends?)",
        group_digits(SQLITE_STEPS)
    )]
    TooMuchWork { during: String },
    #[error("table {table} has {} rows, more than the limit of {}", group_digits(*rows), group_digits(*limit))]
    TooManyRows { table: String, rows: u64, limit: u64 },
    #[error(
        "the database is larger than the limit of {} ({} bytes) for an SQLite export",
        format_bytes(*limit as u64),
        group_digits(*limit as u64)
    )]
    TooLarge { limit: usize },
    #[error("the names pass the limit of {} in all (reading table {table})", format_bytes(*limit as u64))]
    TooManyNames { table: String, limit: usize },
    #[error("corrupt gzip data after {compressed_offset} compressed bytes: {message}")]
    Gzip { compressed_offset: u64, message: String },
    #[error("the reader was used after an error")]
    Poisoned,
}

impl From<GatherError> for SqliteError {
    fn from(e: GatherError) -> Self {
        match e {
            GatherError::TooLarge { limit } => SqliteError::TooLarge { limit },
            GatherError::Gzip(e) => e.into(),
            GatherError::Poisoned => SqliteError::Poisoned,
        }
    }
}

impl From<InflateError> for SqliteError {
    fn from(e: InflateError) -> Self {
        SqliteError::Gzip { compressed_offset: e.compressed_offset, message: e.message }
    }
}

pub(crate) fn sqlite_err(during: impl Into<String>) -> impl FnOnce(rusqlite::Error) -> SqliteError {
    let during = during.into();
    move |e| match e.sqlite_error_code() {
        Some(rusqlite::ErrorCode::OperationInterrupted) => SqliteError::TooMuchWork { during },
        _ => SqliteError::Sqlite { during, message: e.to_string() },
    }
}

/// How often (in SQLite virtual-machine steps) the work budget is checked.
const CHECK_EVERY: i32 = 10_000;

/// The database, read-only, from its bytes, its queries held to `steps` SQLite virtual-machine
/// steps in all ([`SQLITE_STEPS`]): a table is read in steps proportional to its rows, but a
/// crafted view (a recursive query with no end) would otherwise run for ever.
pub(crate) fn open(db: &[u8], steps: u64) -> Result<Connection, SqliteError> {
    let mut conn = Connection::open_in_memory_with_flags(OpenFlags::SQLITE_OPEN_READ_WRITE)
        .map_err(sqlite_err("opening an in-memory database"))?;
    conn.deserialize_read_exact(MAIN_DB, db, db.len(), true).map_err(sqlite_err("loading the file's bytes"))?;
    let max_checks = steps / CHECK_EVERY as u64;
    let mut checks = 0u64;
    let over = move || {
        checks = checks.saturating_add(1);
        checks > max_checks
    };
    conn.progress_handler(CHECK_EVERY, Some(over)).map_err(sqlite_err("setting the work budget"))?;
    Ok(conn)
}

/// An open export: its tables and the columns of those it reads.
pub(crate) struct Export {
    pub(crate) conn: Connection,
    tables: HashSet<String>,
    /// [`NSYS_TABLE_ROWS`] (smaller in tests).
    pub(crate) row_limit: u64,
}

impl Export {
    pub(crate) fn new(conn: Connection) -> Result<Self, SqliteError> {
        let tables = {
            let during = "listing its tables";
            let mut st = conn
                .prepare("SELECT name FROM sqlite_master WHERE type IN ('table', 'view')")
                .map_err(sqlite_err(during))?;
            let rows = st.query_map([], |r| r.get::<_, String>(0)).map_err(sqlite_err(during))?;
            rows.collect::<Result<HashSet<String>, _>>().map_err(sqlite_err(during))?
        };
        let export = Export { conn, tables, row_limit: NSYS_TABLE_ROWS };
        if !export.has("CUPTI_ACTIVITY_KIND_KERNEL") && !export.has("StringIds") && !export.is_rocpd() {
            let mut names: Vec<&str> = export.tables.iter().map(String::as_str).collect();
            names.sort_unstable();
            let shown = names.iter().take(8).copied().collect::<Vec<_>>().join(", ");
            let tables = match names.len() {
                0 => "none".to_string(),
                n if n > 8 => format!("{shown}, … {n} in all"),
                _ => shown,
            };
            return Err(SqliteError::NotNsys { tables });
        }
        Ok(export)
    }

    pub(crate) fn has(&self, table: &str) -> bool {
        self.tables.contains(table)
    }

    /// rocprofv3's rocpd database: its `kernels` view over `rocpd_` tables.
    pub(crate) fn is_rocpd(&self) -> bool {
        self.has("kernels") && self.has("rocpd_info_agent")
    }

    /// The table's columns, by name.
    fn columns(&self, table: &str) -> Result<HashSet<String>, SqliteError> {
        let during = format!("reading the columns of {table}");
        let mut st = self.conn.prepare(&format!("PRAGMA table_info(\"{table}\")")).map_err(sqlite_err(&during))?;
        let rows = st.query_map([], |r| r.get::<_, String>(1)).map_err(sqlite_err(&during))?;
        rows.collect::<Result<HashSet<String>, _>>().map_err(sqlite_err(during))
    }

    /// The rows of `table` (held to [`NSYS_TABLE_ROWS`]), with `columns` selected where the
    /// table has them and NULL where it does not; nothing when the table is absent.
    pub(crate) fn rows(
        &self,
        table: &str,
        columns: &[&str],
        mut row: impl FnMut(&rusqlite::Row<'_>) -> Result<(), SqliteError>,
    ) -> Result<(), SqliteError> {
        if !self.has(table) {
            return Ok(());
        }
        let during = format!("reading table {table}");
        let n: i64 = self
            .conn
            .query_row(&format!("SELECT count(*) FROM \"{table}\""), [], |r| r.get(0))
            .map_err(sqlite_err(&during))?;
        let n = u64::try_from(n).unwrap_or(0);
        if n > self.row_limit {
            return Err(SqliteError::TooManyRows { table: table.to_string(), rows: n, limit: self.row_limit });
        }
        let present = self.columns(table)?;
        let select: Vec<String> = columns
            .iter()
            .map(|c| if present.contains(*c) { format!("\"{c}\"") } else { "NULL".to_string() })
            .collect();
        let sql = format!("SELECT {} FROM \"{table}\"", select.join(", "));
        let mut st = self.conn.prepare(&sql).map_err(sqlite_err(&during))?;
        let mut rows = st.query([]).map_err(sqlite_err(&during))?;
        while let Some(r) = rows.next().map_err(sqlite_err(&during))? {
            row(r)?;
        }
        Ok(())
    }
}

/// A column's value when it has the wanted type, else absent (NULL or another type).
pub(crate) fn get<T: rusqlite::types::FromSql>(r: &rusqlite::Row<'_>, i: usize) -> Option<T> {
    r.get::<_, Option<T>>(i).ok().flatten()
}

/// Start and duration in µs from ns; an end before the start (or none) lasts 0.
pub(crate) fn span(start: Option<i64>, end: Option<i64>) -> (f64, f64) {
    let start = start.unwrap_or(0);
    let dur = end.map_or(0, |e| e.saturating_sub(start).max(0));
    (start as f64 / 1000.0, dur as f64 / 1000.0)
}
