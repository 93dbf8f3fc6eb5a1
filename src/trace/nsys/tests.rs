use super::*;

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
    let p = crate::trace::model::platform::platform(&t);
    assert_eq!((p.vendor, p.devices), (crate::trace::Vendor::Nvidia, vec!["NVIDIA H100 80GB HBM3".to_string()]));
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
    assert_eq!(read_nsys(&other).unwrap_err(), NsysError::NotNsys { tables: "customers, orders".into() });
    // Cut to its first page: SQLite finds the tables' pages missing.
    let db = export("");
    let e = read_nsys(&db[..4096]).unwrap_err();
    assert!(matches!(&e, NsysError::Sqlite { .. }), "{e}");
    // The magic, then noise.
    let mut noise = SQLITE_MAGIC.to_vec();
    noise.extend((0..8192).map(|i| (i * 31 % 251) as u8));
    assert!(matches!(read_nsys(&noise).unwrap_err(), NsysError::Sqlite { .. }));
    assert_eq!(read_nsys_into(&db, Trace::default(), 1000).unwrap_err(), NsysError::TooLarge { limit: 1000 });
}

#[test]
fn a_table_past_its_row_budget_is_refused_before_it_is_read() {
    let db = export("");
    let mut e = Export::new(open(&db).unwrap()).unwrap();
    // StringIds (6 rows) is read first.
    e.row_limit = 5;
    assert_eq!(
        e.read(Trace::default(), 0).unwrap_err().to_string(),
        "table StringIds has 6 rows, more than the limit of 5"
    );
}
