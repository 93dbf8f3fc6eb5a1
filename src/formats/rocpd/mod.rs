//! rocprofv3's SQLite output, the rocpd database (the default output of recent ROCm), read
//! into the format-neutral [`trace::Trace`] through its documented views, which stay stable while the
//! tables under them change between ROCm versions (`docs/trace-analysis.md`, "Other profilers'
//! formats"):
//!
//! | view | becomes |
//! |---|---|
//! | `kernels` | kernels: `name` (the kernel symbol's display name), `start`/`end` (ns), device = `agent_log_index` (else `agent_abs_index`), stream = `stream_id` (else `queue_id`), `corr_id` |
//! | `memory_copies` | copies: `name`, `size`, on the GPU end (`dst_agent_type` GPU, else the source), stream = `stream_id` (else `queue_id`, else none) |
//! | `rocpd_info_agent` | the GPU agents (`type` GPU) as devices: `product_name`, else `name`; the wave size from `extdata` |
//!
//! Detected and opened by the SQLite reader of [`crate::nsys`] (one file kind for both:
//! SQLite's magic bytes), whose helpers look every view and column up by name, count each view
//! against [`limits::NSYS_TABLE_ROWS`] before reading it, and report SQLite's errors
//! with what was being read. What the format lacks here: the CPU side (rocpd keeps HIP API
//! regions, but no framework ops or shapes; they are not read).

use crate::sqlite::{get, span, Export, SqliteError};
use limits::TRACE_NAME_BYTES;
use trace::read::{EventSink, TraceHeader};
use trace::{DeviceProperties, Kernel, TraceFormat, Transfer, TransferKind};

/// Reads an open rocpd database into the sink.
pub(crate) fn read<S: EventSink>(db: &Export, mut sink: S, db_bytes: u64) -> Result<S::Output, SqliteError> {
    let mut header = TraceHeader { json_bytes: db_bytes, format: TraceFormat::Rocpd, ..TraceHeader::default() };
    let agent_cols = ["type", "logical_index", "absolute_index", "product_name", "name", "extdata"];
    db.rows("rocpd_info_agent", &agent_cols, |r| {
        if get::<String>(r, 0).as_deref() != Some("GPU") {
            return Ok(());
        }
        let id = get::<i64>(r, 1).or(get(r, 2));
        let name = get::<String>(r, 3).filter(|n| !n.trim().is_empty()).or(get(r, 4)).unwrap_or_default();
        // `extdata` is the agent's properties as JSON text (wave_front_size, cu_count, …).
        let ext: Option<serde_json::Value> = get::<String>(r, 5).and_then(|t| serde_json::from_str(&t).ok());
        let small = |key: &str| ext.as_ref()?.get(key)?.as_u64().and_then(|v| u32::try_from(v).ok()).filter(|v| *v > 0);
        if !header.devices.iter().any(|d| d.id == id) {
            header.devices.push(DeviceProperties {
                id,
                name: name.trim().to_string(),
                warp_size: small("wave_front_size"),
                compute_major: None,
                compute_minor: None,
                num_sms: small("cu_count"),
            });
        }
        Ok(())
    })?;
    let too_many = |view: &str| SqliteError::TooManyNames { table: view.to_string(), limit: TRACE_NAME_BYTES };
    let kernel_cols =
        ["name", "start", "end", "agent_log_index", "agent_abs_index", "stream_id", "queue_id", "corr_id"];
    db.rows("kernels", &kernel_cols, |r| {
        header.event_count = header.event_count.saturating_add(1);
        let (ts, dur) = span(get(r, 1), get(r, 2));
        let name = get::<String>(r, 0).unwrap_or_else(|| "kernel".to_string());
        let kernel = Kernel {
            name: header.names.intern(&name),
            ts,
            dur,
            device: get::<i64>(r, 3).or(get(r, 4)).unwrap_or(-1),
            stream: get::<i64>(r, 5).or(get(r, 6)).unwrap_or(-1),
            correlation: get::<i64>(r, 7).and_then(|c| u64::try_from(c).ok()).filter(|c| *c != 0),
            external_id: None,
            graph_node: false,
        };
        sink.kernel(&header.names, kernel);
        if header.names.bytes() > TRACE_NAME_BYTES {
            return Err(too_many("kernels"));
        }
        Ok(())
    })?;
    let copy_cols = [
        "name",
        "start",
        "end",
        "size",
        "dst_agent_type",
        "dst_agent_log_index",
        "src_agent_log_index",
        "corr_id",
        "stream_id",
        "queue_id",
    ];
    db.rows("memory_copies", &copy_cols, |r| {
        header.event_count = header.event_count.saturating_add(1);
        let (ts, dur) = span(get(r, 1), get(r, 2));
        let name = get::<String>(r, 0).unwrap_or_else(|| "MEMORY_COPY".to_string());
        let device = if get::<String>(r, 4).as_deref() == Some("GPU") { get(r, 5) } else { get(r, 6) };
        let transfer = Transfer {
            kind: TransferKind::Memcpy,
            name: header.names.intern(&name),
            ts,
            dur,
            device: device.unwrap_or(-1),
            stream: get::<i64>(r, 8).or(get(r, 9)),
            bytes: get::<i64>(r, 3).and_then(|b| u64::try_from(b).ok()),
            correlation: get::<i64>(r, 7).and_then(|c| u64::try_from(c).ok()).filter(|c| *c != 0),
            external_id: None,
        };
        sink.transfer(&header.names, transfer);
        if header.names.bytes() > TRACE_NAME_BYTES {
            return Err(too_many("memory_copies"));
        }
        Ok(())
    })?;
    Ok(sink.finish(header))
}

#[cfg(test)]
mod tests {
    use rusqlite::{Connection, MAIN_DB};

    use trace::TransferKind;

    /// A kernel as the test compares it: name, start, duration, device, stream, correlation.
    type KernelRow<'a> = (&'a str, f64, f64, i64, i64, Option<u64>);
    /// A device: id, name, warp size, compute units.
    type DeviceRow<'a> = (Option<i64>, &'a str, Option<u32>, Option<u32>);
    use crate::nsys::read_nsys;

    /// A rocpd database made with SQLite: its tables (the subset read) under the views rocpd
    /// defines, with their column names: two GPU agents behind a CPU agent, three dispatches and
    /// two copies.
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
             size INTEGER, dst INTEGER, src INTEGER, stream_id INTEGER, queue_id INTEGER);
           INSERT INTO rocpd_memory_copy_0 VALUES (1, 'MEMORY_COPY_HOST_TO_DEVICE', 100, 400, 8192, 3, 1, 2, 7),
             (2, 'MEMORY_COPY_DEVICE_TO_HOST', 9000, 9100, 64, 1, 3, NULL, 7);
           CREATE VIEW memory_copies AS SELECT M.name, M.start, M.end, M.size, D.type AS dst_agent_type,
             D.logical_index AS dst_agent_log_index, S.logical_index AS src_agent_log_index, NULL AS corr_id,
             M.stream_id, M.queue_id
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
        let [to_gpu, to_host] = t.transfers.as_slice() else { panic!("{:?}", t.transfers) };
        // Each on its GPU end, on its stream (the HIP stream where recorded, else the queue).
        assert_eq!(
            (t.name(to_gpu.name), to_gpu.kind, to_gpu.ts, to_gpu.dur, to_gpu.device, to_gpu.stream, to_gpu.bytes),
            ("MEMORY_COPY_HOST_TO_DEVICE", TransferKind::Memcpy, 0.1, 0.3, 2, Some(2), Some(8192))
        );
        assert_eq!((to_host.device, to_host.stream, to_host.bytes), (2, Some(7), Some(64)));
        let devices: Vec<DeviceRow> =
            t.devices.iter().map(|d| (d.id, d.name.as_str(), d.warp_size, d.num_sms)).collect();
        assert_eq!(
            devices,
            vec![
                (Some(1), "AMD Instinct MI355X", Some(64), Some(256)),
                (Some(2), "AMD Instinct MI355X", Some(64), Some(256))
            ]
        );
        let p = trace::platform::platform(&t);
        assert_eq!((p.vendor, p.devices), (trace::Vendor::Amd, vec!["AMD Instinct MI355X".to_string()]));
    }
}
