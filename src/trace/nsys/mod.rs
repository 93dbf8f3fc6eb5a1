//! Nsight Systems' SQLite export (`nsys export --type sqlite`) read into the format-neutral
//! [`Trace`]: the only code that knows its tables (`docs/trace-analysis.md`, "Other profilers'
//! formats").
//!
//! | table | becomes |
//! |---|---|
//! | `CUPTI_ACTIVITY_KIND_KERNEL` | kernels (`demangledName`, else `shortName`, → `StringIds`); `graphNodeId` marks graph nodes |
//! | `CUPTI_ACTIVITY_KIND_MEMCPY`, `_MEMSET` | copies and sets (`copyKind` names the direction) |
//! | `CUPTI_ACTIVITY_KIND_RUNTIME` | launch calls by correlation id (`cudaLaunchKernel`, `cudaGraphLaunch`, …) |
//! | `NVTX_EVENTS` | ranges (`text` or `textId`) as CPU annotations |
//! | `TARGET_INFO_GPU` | devices (name, SM count, warp size, compute capability) |
//!
//! Tables exist only when their activity was recorded, and columns change a little between
//! nsys versions: every table and column is looked up by name first, and a missing one reads
//! as no rows or an absent value. What the format lacks: framework ops and their shapes (an
//! NVTX range is an annotation, not an op), so the per-op table is empty and says why.
//!
//! rocprofv3's own SQLite output, the rocpd database, is told apart by its `kernels` view and
//! read by [`super::rocpd`] through the same helpers.
//!
//! SQLite is SQLite's own code (rusqlite's bundled build), opened read-only from the bytes in
//! memory: a truncated or corrupt file is SQLite's "database disk image is malformed", named
//! with the table being read. Every table is counted before it is read and held to
//! [`NSYS_TABLE_ROWS`]; the file to [`SQLITE_BYTES`]. Native only: the page's worker is built
//! for wasm32 without a C compiler for it (see the module's mention in `crate::import::open`).

use std::collections::HashSet;

use rusqlite::{Connection, OpenFlags, MAIN_DB};
use rustc_hash::FxHashMap;
use thiserror::Error;

use super::model::intern::NameId;
use super::model::{Annotation, DeviceProperties, Kernel, Launch, Trace, Transfer, TransferKind};
use super::read::inflate::{Inflate, InflateError};
use super::read::{EventSink, TraceHeader};
use crate::limits::{NSYS_TABLE_ROWS, SQLITE_BYTES, TRACE_NAME_BYTES};
use crate::units::{format_bytes, group_digits};

/// The first 16 bytes of every SQLite database file.
pub const SQLITE_MAGIC: &[u8; 16] = b"SQLite format 3\0";

/// Why an SQLite file could not be read as an Nsight Systems export.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum NsysError {
    /// SQLite's own message (`database disk image is malformed`, `file is not a database`),
    /// with what was being done.
    #[error("SQLite cannot read the database ({during}): {message}")]
    Sqlite { during: String, message: String },
    #[error(
        "it is neither an Nsight Systems export (no CUPTI_ACTIVITY_KIND_KERNEL or StringIds table) nor a \
         rocpd database (no kernels view); its tables: {tables}"
    )]
    NotNsys { tables: String },
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
}

impl From<InflateError> for NsysError {
    fn from(e: InflateError) -> Self {
        NsysError::Gzip { compressed_offset: e.compressed_offset, message: e.message }
    }
}

/// Reads a whole export held in memory (plain or gzip) into a [`Trace`].
pub fn read_nsys(bytes: &[u8]) -> Result<Trace, NsysError> {
    read_nsys_into(bytes, Trace::default(), SQLITE_BYTES)
}

/// [`read_nsys`] into any sink, with the database's byte budget.
pub fn read_nsys_into<S: EventSink>(bytes: &[u8], sink: S, limit: usize) -> Result<S::Output, NsysError> {
    let mut inflate = Inflate::new();
    let mut db = Vec::new();
    let mut append = |b: &[u8]| -> Result<(), NsysError> {
        if db.len().saturating_add(b.len()) > limit {
            return Err(NsysError::TooLarge { limit });
        }
        db.extend_from_slice(b);
        Ok(())
    };
    for chunk in bytes.chunks(1 << 20) {
        inflate.feed(chunk, &mut append)?;
    }
    inflate.finish(&mut append)?;
    let conn = open(&db)?;
    let db_bytes = db.len() as u64;
    drop(db);
    let export = Export::new(conn)?;
    if export.is_rocpd() {
        return super::rocpd::read(&export, sink, db_bytes);
    }
    export.read(sink, db_bytes)
}

fn sqlite_err(during: impl Into<String>) -> impl FnOnce(rusqlite::Error) -> NsysError {
    let during = during.into();
    move |e| NsysError::Sqlite { during, message: e.to_string() }
}

/// The database, read-only, from its bytes.
fn open(db: &[u8]) -> Result<Connection, NsysError> {
    let mut conn = Connection::open_in_memory_with_flags(OpenFlags::SQLITE_OPEN_READ_WRITE)
        .map_err(sqlite_err("opening an in-memory database"))?;
    conn.deserialize_read_exact(MAIN_DB, db, db.len(), true).map_err(sqlite_err("loading the file's bytes"))?;
    Ok(conn)
}

/// An open export: its tables and the columns of those it reads.
pub(crate) struct Export {
    conn: Connection,
    tables: HashSet<String>,
    /// [`NSYS_TABLE_ROWS`] (smaller in tests).
    row_limit: u64,
}

/// CUPTI's memory-copy directions (`CUpti_ActivityMemcpyKind`), as nsys names them.
const COPY_KINDS: [&str; 11] = [
    "Memcpy",
    "Memcpy HtoD",
    "Memcpy DtoH",
    "Memcpy HtoA",
    "Memcpy AtoH",
    "Memcpy AtoA",
    "Memcpy AtoD",
    "Memcpy DtoA",
    "Memcpy DtoD",
    "Memcpy HtoH",
    "Memcpy PtoP",
];

impl Export {
    fn new(conn: Connection) -> Result<Self, NsysError> {
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
            return Err(NsysError::NotNsys { tables });
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
    fn columns(&self, table: &str) -> Result<HashSet<String>, NsysError> {
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
        mut row: impl FnMut(&rusqlite::Row<'_>) -> Result<(), NsysError>,
    ) -> Result<(), NsysError> {
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
            return Err(NsysError::TooManyRows { table: table.to_string(), rows: n, limit: self.row_limit });
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

    fn read<S: EventSink>(self, mut sink: S, db_bytes: u64) -> Result<S::Output, NsysError> {
        let mut header = TraceHeader { json_bytes: db_bytes, ..TraceHeader::default() };
        // StringIds: id → text, interned only when an event names it.
        let mut strings: FxHashMap<i64, String> = FxHashMap::default();
        let mut string_bytes = 0usize;
        self.rows("StringIds", &["id", "value"], |r| {
            let (id, value): (Option<i64>, Option<String>) = (get(r, 0), get(r, 1));
            if let (Some(id), Some(value)) = (id, value) {
                string_bytes = string_bytes.saturating_add(value.len());
                if string_bytes > TRACE_NAME_BYTES {
                    return Err(NsysError::TooManyNames { table: "StringIds".into(), limit: TRACE_NAME_BYTES });
                }
                strings.insert(id, value);
            }
            Ok(())
        })?;
        let mut interned: FxHashMap<i64, NameId> = FxHashMap::default();
        let mut name_of = |names: &mut crate::trace::NameTable, id: Option<i64>, fallback: &str| -> NameId {
            match id {
                Some(id) => *interned.entry(id).or_insert_with(|| match strings.get(&id) {
                    Some(s) => names.intern(s),
                    None => names.intern(&format!("{fallback} (string #{id})")),
                }),
                None => names.intern(fallback),
            }
        };
        self.rows(
            "TARGET_INFO_GPU",
            &["id", "name", "smCount", "threadsPerWarp", "computeMajor", "computeMinor"],
            |r| {
                let small = |i| get::<i64>(r, i).and_then(|v| u32::try_from(v).ok());
                let device = DeviceProperties {
                    id: get(r, 0),
                    name: get::<String>(r, 1).unwrap_or_default().trim().to_string(),
                    warp_size: small(3),
                    compute_major: small(4),
                    compute_minor: small(5),
                    num_sms: small(2),
                };
                if !header.devices.iter().any(|d| d.id == device.id) {
                    header.devices.push(device);
                }
                Ok(())
            },
        )?;
        let names_full = |h: &TraceHeader, table: &str| {
            if h.names.bytes() > TRACE_NAME_BYTES {
                Err(NsysError::TooManyNames { table: table.into(), limit: TRACE_NAME_BYTES })
            } else {
                Ok(())
            }
        };
        let kernel_cols =
            ["start", "end", "deviceId", "streamId", "correlationId", "demangledName", "shortName", "graphNodeId"];
        self.rows("CUPTI_ACTIVITY_KIND_KERNEL", &kernel_cols, |r| {
            header.event_count = header.event_count.saturating_add(1);
            let (ts, dur) = span(get(r, 0), get(r, 1));
            let name_id = get::<i64>(r, 5).or(get(r, 6));
            let name = name_of(&mut header.names, name_id, "kernel");
            let kernel = Kernel {
                name,
                ts,
                dur,
                device: get(r, 2).unwrap_or(-1),
                stream: get(r, 3).unwrap_or(-1),
                correlation: get::<i64>(r, 4).and_then(|c| u64::try_from(c).ok()),
                external_id: None,
                graph_node: get::<i64>(r, 7).is_some(),
            };
            sink.kernel(&header.names, kernel);
            names_full(&header, "CUPTI_ACTIVITY_KIND_KERNEL")
        })?;
        let copy_cols = ["start", "end", "deviceId", "correlationId", "bytes", "copyKind"];
        for (table, kind) in
            [("CUPTI_ACTIVITY_KIND_MEMCPY", TransferKind::Memcpy), ("CUPTI_ACTIVITY_KIND_MEMSET", TransferKind::Memset)]
        {
            self.rows(table, &copy_cols, |r| {
                header.event_count = header.event_count.saturating_add(1);
                let (ts, dur) = span(get(r, 0), get(r, 1));
                let label = match kind {
                    TransferKind::Memset => "Memset",
                    TransferKind::Memcpy => {
                        let k = get::<i64>(r, 5).and_then(|k| usize::try_from(k).ok()).unwrap_or(0);
                        COPY_KINDS.get(k).copied().unwrap_or("Memcpy")
                    }
                };
                let transfer = Transfer {
                    kind,
                    name: header.names.intern(label),
                    ts,
                    dur,
                    device: get(r, 2).unwrap_or(-1),
                    bytes: get::<i64>(r, 4).and_then(|b| u64::try_from(b).ok()),
                    correlation: get::<i64>(r, 3).and_then(|c| u64::try_from(c).ok()),
                    external_id: None,
                };
                sink.transfer(&header.names, transfer);
                Ok(())
            })?;
        }
        if S::CPU_SIDE {
            self.rows("CUPTI_ACTIVITY_KIND_RUNTIME", &["start", "correlationId", "nameId", "globalTid"], |r| {
                header.event_count = header.event_count.saturating_add(1);
                let Some(c) = get::<i64>(r, 1).and_then(|c| u64::try_from(c).ok()) else { return Ok(()) };
                let launch = Launch {
                    name: name_of(&mut header.names, get(r, 2), "CUDA runtime call"),
                    kernel: None,
                    external_id: None,
                    ts: span(get(r, 0), None).0,
                    tid: get(r, 3).unwrap_or(-1),
                };
                sink.launch(c, launch);
                names_full(&header, "CUPTI_ACTIVITY_KIND_RUNTIME")
            })?;
            self.rows("NVTX_EVENTS", &["start", "end", "text", "textId", "globalTid"], |r| {
                header.event_count = header.event_count.saturating_add(1);
                // Ranges only: a mark has no end.
                let Some(end) = get::<i64>(r, 1) else { return Ok(()) };
                let (ts, dur) = span(get(r, 0), Some(end));
                let name = match get::<String>(r, 2) {
                    Some(text) => header.names.intern(&text),
                    None => name_of(&mut header.names, get(r, 3), "NVTX range"),
                };
                // nsys packs the process id into bits 24–47 of a global thread id.
                let pid = get::<i64>(r, 4).map_or(-1, |t| (t >> 24) & 0xff_ffff);
                sink.annotation(Annotation { name, ts, dur, gpu: false, pid });
                names_full(&header, "NVTX_EVENTS")
            })?;
        }
        Ok(sink.finish(header))
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

#[cfg(test)]
mod tests;
