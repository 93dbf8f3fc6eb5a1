use rusqlite::{Connection, MAIN_DB};

use crate::trace::model::TransferKind;

/// A kernel as the test compares it: name, start, duration, device, stream, correlation.
type KernelRow<'a> = (&'a str, f64, f64, i64, i64, Option<u64>);
/// A device: id, name, warp size, compute units.
type DeviceRow<'a> = (Option<i64>, &'a str, Option<u32>, Option<u32>);
use crate::trace::nsys::read_nsys;

/// A rocpd database made with SQLite: its tables (the subset read) under the views rocpd
/// defines, with their column names: two GPU agents behind a CPU agent, three dispatches and
/// a copy.
fn rocpd() -> Vec<u8> {
    let conn = Connection::open_in_memory().unwrap();
    conn.execute_batch(
        r#"CREATE TABLE rocpd_info_agent_0 (id INTEGER PRIMARY KEY, type TEXT, absolute_index INTEGER,
             logical_index INTEGER, name TEXT, product_name TEXT, extdata JSONB DEFAULT '{}' NOT NULL);
           INSERT INTO rocpd_info_agent_0 VALUES (1, 'CPU', 0, 0, 'AMD EPYC 9575F', 'AMD EPYC 9575F', '{}'),
             (2, 'GPU', 1, 1, 'gfx950', 'AMD Instinct MI355X', '{"wave_front_size": 64, "cu_count": 256}'),
             (3, 'GPU', 2, 2, 'gfx950', 'AMD Instinct MI355X', '{"wave_front_size": 64, "cu_count": 256}');
           CREATE VIEW rocpd_info_agent AS SELECT * FROM rocpd_info_agent_0;
           CREATE TABLE rocpd_kernel_dispatch_0 (id INTEGER PRIMARY KEY, agent_id INTEGER, name TEXT,
             stream_id INTEGER, queue_id INTEGER, start INTEGER, end INTEGER, corr INTEGER);
           INSERT INTO rocpd_kernel_dispatch_0 VALUES
             (1, 3, 'Cijk_Alik_Bljk_BBS_BH_MT256x256x64', 2, 7, 5000, 9000, 21),
             (2, 2, 'void at::native::vectorized_elementwise_kernel<4>()', 1, 7, 1000, 1500, 20),
             (3, 2, 'ncclDevKernel_Generic_1(ncclDevKernelArgsStorage<4096ul>)', 1, 7, 2000, 1990, 0);
           CREATE VIEW kernels AS SELECT K.id, K.name, A.absolute_index AS agent_abs_index,
             A.logical_index AS agent_log_index, K.stream_id, K.queue_id, K.start, K.end,
             (K.end - K.start) AS duration, K.corr AS corr_id
             FROM rocpd_kernel_dispatch_0 K JOIN rocpd_info_agent_0 A ON A.id = K.agent_id;
           CREATE TABLE rocpd_memory_copy_0 (id INTEGER PRIMARY KEY, name TEXT, start INTEGER, end INTEGER,
             size INTEGER, dst INTEGER, src INTEGER);
           INSERT INTO rocpd_memory_copy_0 VALUES (1, 'MEMORY_COPY_HOST_TO_DEVICE', 100, 400, 8192, 3, 1);
           CREATE VIEW memory_copies AS SELECT M.name, M.start, M.end, M.size, D.type AS dst_agent_type,
             D.logical_index AS dst_agent_log_index, S.logical_index AS src_agent_log_index, NULL AS corr_id
             FROM rocpd_memory_copy_0 M JOIN rocpd_info_agent_0 D ON D.id = M.dst
             JOIN rocpd_info_agent_0 S ON S.id = M.src;"#,
    )
    .unwrap();
    conn.serialize(MAIN_DB).unwrap().to_vec()
}

#[test]
fn the_views_become_kernels_copies_and_devices() {
    let t = read_nsys(&rocpd()).unwrap();
    let kernels: Vec<KernelRow> =
        t.kernels.iter().map(|k| (t.name(k.name), k.ts, k.dur, k.device, k.stream, k.correlation)).collect();
    assert_eq!(
        kernels,
        vec![
            ("void at::native::vectorized_elementwise_kernel<4>()", 1.0, 0.5, 1, 1, Some(20)),
            // Ends before it starts: lasts 0; correlation 0 is none.
            ("ncclDevKernel_Generic_1(ncclDevKernelArgsStorage<4096ul>)", 2.0, 0.0, 1, 1, None),
            ("Cijk_Alik_Bljk_BBS_BH_MT256x256x64", 5.0, 4.0, 2, 2, Some(21)),
        ]
    );
    let [copy] = t.transfers.as_slice() else { panic!("{:?}", t.transfers) };
    assert_eq!(
        (t.name(copy.name), copy.kind, copy.ts, copy.dur, copy.device, copy.bytes),
        ("MEMORY_COPY_HOST_TO_DEVICE", TransferKind::Memcpy, 0.1, 0.3, 2, Some(8192))
    );
    let devices: Vec<DeviceRow> = t.devices.iter().map(|d| (d.id, d.name.as_str(), d.warp_size, d.num_sms)).collect();
    assert_eq!(
        devices,
        vec![
            (Some(1), "AMD Instinct MI355X", Some(64), Some(256)),
            (Some(2), "AMD Instinct MI355X", Some(64), Some(256))
        ]
    );
    let p = crate::trace::model::platform::platform(&t);
    assert_eq!((p.vendor, p.devices), (crate::trace::Vendor::Amd, vec!["AMD Instinct MI355X".to_string()]));
}
