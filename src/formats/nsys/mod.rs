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
//! read by [`crate::rocpd`] through the same helpers.
//!
//! SQLite is SQLite's own code (rusqlite's bundled build), opened read-only from the bytes in
//! memory: a truncated or corrupt file is SQLite's "database disk image is malformed", named
//! with the table being read. Every table is counted before it is read and held to
//! [`limits::NSYS_TABLE_ROWS`]; the file to [`SQLITE_BYTES`]. Natively, and on wasm32 with
//! the `sqlite` feature (the page's analysis worker: SQLite compiled by clang, see Cargo.toml).

use rustc_hash::FxHashMap;

use crate::interface::{Incremental, Readable};
use crate::sqlite::{get, open, span, Export, SqliteError};
use limits::{SQLITE_BYTES, SQLITE_STEPS, TRACE_NAME_BYTES};
use trace::intern::NameId;
use trace::read::inflate::Gathered;
use trace::read::{EventSink, TraceHeader};
use trace::{Annotation, DeviceProperties, Kernel, Launch, Trace, TraceFormat, Transfer, TransferKind};

/// The first 16 bytes of every SQLite database file.
pub use crate::interface::SQLITE_MAGIC;

/// Reads a whole export held in memory (plain or gzip) into a [`Trace`].
pub fn read_nsys(bytes: &[u8]) -> Result<Trace, SqliteError> {
    read_nsys_into(bytes, Trace::default(), SQLITE_BYTES)
}

/// [`read_nsys`] into any sink, with the database's byte budget.
pub fn read_nsys_into<S: EventSink>(bytes: &[u8], sink: S, limit: usize) -> Result<S::Output, SqliteError> {
    let mut reader = Reader { input: Gathered::new(limit), sink };
    for chunk in bytes.chunks(1 << 20) {
        reader.input.feed(chunk)?;
    }
    reader.finish_db()
}

/// SQLite databases, for the registry ([`crate::registry`]): an Nsight Systems export or a
/// rocpd database, told apart by their tables once the file is whole.
pub struct Sqlite;

impl Readable for Sqlite {
    type Error = SqliteError;
    type Reader<S: EventSink + 'static> = Reader<S>;
    fn reader<S: EventSink + 'static>(sink: S) -> Reader<S> {
        Reader { input: Gathered::new(SQLITE_BYTES), sink }
    }
}

/// Incremental reader into any [`EventSink`]: the database is gathered (inflated, held to its
/// budget) as it arrives, and opened by SQLite at the end.
pub struct Reader<S> {
    input: Gathered,
    sink: S,
}

impl<S: EventSink> Reader<S> {
    fn finish_db(self) -> Result<S::Output, SqliteError> {
        let db = self.input.finish()?;
        let conn = open(&db, SQLITE_STEPS)?;
        let db_bytes = db.len() as u64;
        drop(db);
        let export = Export::new(conn)?;
        if export.is_rocpd() {
            return crate::rocpd::read(&export, self.sink, db_bytes);
        }
        export.read(self.sink, db_bytes)
    }
}

impl<S: EventSink> Incremental<S> for Reader<S> {
    type Error = SqliteError;
    fn feed(&mut self, chunk: &[u8]) -> Result<(), SqliteError> {
        Ok(self.input.feed(chunk)?)
    }
    fn finish(self) -> Result<S::Output, SqliteError> {
        self.finish_db()
    }
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
    fn read<S: EventSink>(self, mut sink: S, db_bytes: u64) -> Result<S::Output, SqliteError> {
        let mut header = TraceHeader { json_bytes: db_bytes, format: TraceFormat::Nsys, ..TraceHeader::default() };
        // StringIds: id → text, interned only when an event names it.
        let mut strings: FxHashMap<i64, String> = FxHashMap::default();
        let mut string_bytes = 0usize;
        self.rows("StringIds", &["id", "value"], |r| {
            let (id, value): (Option<i64>, Option<String>) = (get(r, 0), get(r, 1));
            if let (Some(id), Some(value)) = (id, value) {
                string_bytes = string_bytes.saturating_add(value.len());
                if string_bytes > TRACE_NAME_BYTES {
                    return Err(SqliteError::TooManyNames { table: "StringIds".into(), limit: TRACE_NAME_BYTES });
                }
                strings.insert(id, value);
            }
            Ok(())
        })?;
        let mut interned: FxHashMap<i64, NameId> = FxHashMap::default();
        let mut name_of = |names: &mut trace::NameTable, id: Option<i64>, fallback: &str| -> NameId {
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
                Err(SqliteError::TooManyNames { table: table.into(), limit: TRACE_NAME_BYTES })
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
        let copy_cols = ["start", "end", "deviceId", "correlationId", "bytes", "copyKind", "streamId"];
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
                    // The stream the copy or set ran on, as the kernels' `streamId`: the
                    // stream was busy copying, not waiting, between its kernels.
                    stream: get(r, 6),
                    bytes: get::<i64>(r, 4).and_then(|b| u64::try_from(b).ok()),
                    correlation: get::<i64>(r, 3).and_then(|c| u64::try_from(c).ok()),
                    external_id: None,
                };
                sink.transfer(&header.names, transfer);
                Ok(())
            })?;
        }
        if S::LAUNCHES {
            self.rows("CUPTI_ACTIVITY_KIND_RUNTIME", &["start", "correlationId", "nameId", "globalTid", "end"], |r| {
                header.event_count = header.event_count.saturating_add(1);
                let Some(c) = get::<i64>(r, 1).and_then(|c| u64::try_from(c).ok()) else { return Ok(()) };
                let (ts, dur) = span(get(r, 0), get(r, 4));
                let launch = Launch {
                    name: name_of(&mut header.names, get(r, 2), "CUDA runtime call"),
                    kernel: None,
                    external_id: None,
                    ts,
                    dur,
                    tid: get(r, 3).unwrap_or(-1),
                };
                sink.launch(c, launch);
                names_full(&header, "CUPTI_ACTIVITY_KIND_RUNTIME")
            })?;
        }
        if S::CPU_SIDE {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sqlite::open;
    use rusqlite::{Connection, MAIN_DB};

    /// A kernel as the tests compare it: name, start, duration, device, stream, correlation, graph node.
    type KernelRow<'a> = (&'a str, f64, f64, i64, i64, Option<u64>, bool);
    /// A copy or set: name, kind, start, duration, device, bytes.
    type TransferRow<'a> = (&'a str, TransferKind, f64, f64, i64, Option<u64>);

    /// An export made with SQLite itself: the tables and columns nsys writes (a subset), two
    /// GPUs, kernels (one in a graph, one whose name is only a `shortName`), a copy, a set, two
    /// runtime calls, an NVTX range and a mark; `extra` is run after.
    fn export(extra: &str) -> Vec<u8> {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(
        "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);
         INSERT INTO StringIds VALUES (1, 'ampere_sgemm_128x64_nn'), (2, 'void at::native::vectorized_elementwise_kernel<4>()'),
           (3, 'cudaLaunchKernel'), (4, 'cudaGraphLaunch'), (5, 'short_kernel'), (6, 'forward');
         CREATE TABLE TARGET_INFO_GPU (id INTEGER, name TEXT, smCount INTEGER, threadsPerWarp INTEGER,
           computeMajor INTEGER, computeMinor INTEGER, busLocation TEXT);
         INSERT INTO TARGET_INFO_GPU VALUES (0, 'NVIDIA H100 80GB HBM3', 132, 32, 9, 0, '0000:01:00.0'),
           (1, 'NVIDIA H100 80GB HBM3', 132, 32, 9, 0, '0000:02:00.0');
         CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER,
           streamId INTEGER, correlationId INTEGER, demangledName INTEGER, shortName INTEGER, mangledName INTEGER,
           graphNodeId INTEGER, gridX INTEGER);
         INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES
           (5000, 7500, 0, 7, 11, 1, 1, NULL, NULL, 1),
           (1000, 1250, 1, 13, 12, 2, 2, NULL, 99, 1),
           (9000, 9100, 0, 7, 13, NULL, 5, NULL, NULL, 1);
         CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER, end INTEGER, deviceId INTEGER, correlationId INTEGER,
           bytes INTEGER, copyKind INTEGER);
         INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES (100, 600, 0, 10, 4096, 1);
         CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (start INTEGER, end INTEGER, deviceId INTEGER, correlationId INTEGER,
           bytes INTEGER, value INTEGER);
         INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET VALUES (700, 800, 1, 14, 64, 0);
         CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER, end INTEGER, correlationId INTEGER, nameId INTEGER,
           globalTid INTEGER);
         INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (4000, 4100, 11, 3, 281474993487878), (800, 900, 12, 4, 281474993487878);
         CREATE TABLE NVTX_EVENTS (start INTEGER, end INTEGER, eventType INTEGER, text TEXT, textId INTEGER,
           globalTid INTEGER);
         INSERT INTO NVTX_EVENTS VALUES (0, 10000, 59, NULL, 6, 281474993487878), (50, NULL, 34, 'mark', NULL, 1);",
    )
    .unwrap();
        conn.execute_batch(extra).unwrap();
        conn.serialize(MAIN_DB).unwrap().to_vec()
    }

    #[test]
    fn tables_become_kernels_copies_launches_and_ranges() {
        let db = export("");
        assert!(db.starts_with(SQLITE_MAGIC));
        let t = read_nsys(&db).unwrap();
        let kernels: Vec<KernelRow> = t
            .kernels
            .iter()
            .map(|k| (t.name(k.name), k.ts, k.dur, k.device, k.stream, k.correlation, k.graph_node))
            .collect();
        assert_eq!(
            kernels,
            vec![
                ("void at::native::vectorized_elementwise_kernel<4>()", 1.0, 0.25, 1, 13, Some(12), true),
                ("ampere_sgemm_128x64_nn", 5.0, 2.5, 0, 7, Some(11), false),
                ("short_kernel", 9.0, 0.1, 0, 7, Some(13), false),
            ]
        );
        let transfers: Vec<TransferRow> =
            t.transfers.iter().map(|x| (t.name(x.name), x.kind, x.ts, x.dur, x.device, x.bytes)).collect();
        assert_eq!(
            transfers,
            vec![
                ("Memcpy HtoD", TransferKind::Memcpy, 0.1, 0.5, 0, Some(4096)),
                ("Memset", TransferKind::Memset, 0.7, 0.1, 1, Some(64)),
            ]
        );
        assert_eq!(t.name(t.launches[&11].name), "cudaLaunchKernel");
        assert_eq!(t.name(t.launches[&12].name), "cudaGraphLaunch");
        let [range] = t.annotations.as_slice() else { panic!("{:?}", t.annotations) };
        assert_eq!((t.name(range.name), range.ts, range.dur, range.gpu), ("forward", 0.0, 10.0, false));
        assert_eq!(range.pid, (281474993487878 >> 24) & 0xff_ffff);
        assert_eq!(t.devices.len(), 2);
        assert_eq!(
            (t.devices[1].name.as_str(), t.devices[1].warp_size, t.devices[1].num_sms),
            ("NVIDIA H100 80GB HBM3", Some(32), Some(132))
        );
        assert!(t.cpu_ops.is_empty());
        let p = trace::platform::platform(&t);
        assert_eq!((p.vendor, p.devices), (trace::Vendor::Nvidia, vec!["NVIDIA H100 80GB HBM3".to_string()]));
    }

    #[test]
    fn missing_tables_and_columns_read_as_nothing() {
        let db = export(
            "DROP TABLE CUPTI_ACTIVITY_KIND_MEMSET; DROP TABLE NVTX_EVENTS; DROP TABLE TARGET_INFO_GPU;
         ALTER TABLE CUPTI_ACTIVITY_KIND_KERNEL DROP COLUMN graphNodeId;",
        );
        let t = read_nsys(&db).unwrap();
        assert_eq!(t.kernels.len(), 3);
        assert!(t.kernels.iter().all(|k| !k.graph_node));
        assert_eq!(t.transfers.len(), 1);
        assert!(t.annotations.is_empty() && t.devices.is_empty());
    }

    #[test]
    fn other_databases_and_damage_are_named() {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch("CREATE TABLE customers (id INTEGER); CREATE TABLE orders (id INTEGER);").unwrap();
        let other = conn.serialize(MAIN_DB).unwrap().to_vec();
        assert_eq!(read_nsys(&other).unwrap_err(), SqliteError::NotNsys { tables: "customers, orders".into() });
        // Cut to its first page: SQLite finds the tables' pages missing.
        let db = export("");
        let e = read_nsys(&db[..4096]).unwrap_err();
        assert!(matches!(&e, SqliteError::Sqlite { .. }), "{e}");
        // The magic, then noise.
        let mut noise = SQLITE_MAGIC.to_vec();
        noise.extend((0..8192).map(|i| (i * 31 % 251) as u8));
        assert!(matches!(read_nsys(&noise).unwrap_err(), SqliteError::Sqlite { .. }));
        assert_eq!(read_nsys_into(&db, Trace::default(), 1000).unwrap_err(), SqliteError::TooLarge { limit: 1000 });
    }

    #[test]
    fn a_table_past_its_row_budget_is_refused_before_it_is_read() {
        let db = export("");
        let mut e = Export::new(open(&db, SQLITE_STEPS).unwrap()).unwrap();
        // StringIds (6 rows) is read first.
        e.row_limit = 5;
        assert_eq!(
            e.read(Trace::default(), 0).unwrap_err().to_string(),
            "table StringIds has 6 rows, more than the limit of 5"
        );
    }

    #[test]
    fn a_view_that_never_ends_is_stopped_at_the_work_budget() {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(
            "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT);
             CREATE VIEW CUPTI_ACTIVITY_KIND_KERNEL AS WITH RECURSIVE r(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM r)
               SELECT n AS start, n + 1 AS end FROM r;",
        )
        .unwrap();
        let db = conn.serialize(MAIN_DB).unwrap().to_vec();
        let e = Export::new(open(&db, 1_000_000).unwrap()).unwrap();
        let err = e.read(Trace::default(), 0).unwrap_err();
        assert_eq!(err, SqliteError::TooMuchWork { during: "reading table CUPTI_ACTIVITY_KIND_KERNEL".into() });
        assert!(err.to_string().starts_with("SQLite stopped reading table CUPTI_ACTIVITY_KIND_KERNEL: the queries"));
    }
}
