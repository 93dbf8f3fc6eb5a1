//! rocprofv3's SQLite output, the rocpd database (the default output of recent ROCm), read
//! into the format-neutral [`crate::trace::Trace`] through its documented views, which stay stable while the
//! tables under them change between ROCm versions (`docs/trace-analysis.md`, "Other profilers'
//! formats"):
//!
//! | view | becomes |
//! |---|---|
//! | `kernels` | kernels: `name` (the kernel symbol's display name), `start`/`end` (ns), device = `agent_log_index` (else `agent_abs_index`), stream = `stream_id` (else `queue_id`), `corr_id` |
//! | `memory_copies` | copies: `name`, `size`, on the GPU end (`dst_agent_type` GPU, else the source) |
//! | `rocpd_info_agent` | the GPU agents (`type` GPU) as devices: `product_name`, else `name`; the wave size from `extdata` |
//!
//! Detected and opened by the SQLite reader of [`super::nsys`] (one file kind for both:
//! SQLite's magic bytes), whose helpers look every view and column up by name, count each view
//! against [`crate::limits::NSYS_TABLE_ROWS`] before reading it, and report SQLite's errors
//! with what was being read. What the format lacks here: the CPU side (rocpd keeps HIP API
//! regions, but no framework ops or shapes; they are not read).

use super::model::{DeviceProperties, Kernel, Transfer, TransferKind};
use super::nsys::{get, span, Export, NsysError};
use super::read::{EventSink, TraceHeader};
use crate::limits::TRACE_NAME_BYTES;

/// Reads an open rocpd database into the sink.
pub(crate) fn read<S: EventSink>(db: &Export, mut sink: S, db_bytes: u64) -> Result<S::Output, NsysError> {
    let mut header = TraceHeader { json_bytes: db_bytes, ..TraceHeader::default() };
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
    let too_many = |view: &str| NsysError::TooManyNames { table: view.to_string(), limit: TRACE_NAME_BYTES };
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
    let copy_cols =
        ["name", "start", "end", "size", "dst_agent_type", "dst_agent_log_index", "src_agent_log_index", "corr_id"];
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
mod tests;
