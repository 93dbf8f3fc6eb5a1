//! Reading a trace file of any profiler format for the command line: a Kineto trace streamed
//! from the file in 1 MiB slices, any other format detected by content and read whole through
//! the import dispatch.

use std::io::Read;
use std::path::Path;

use import::{FileKind, DETECT_BYTES};
use trace::{EventSink, Reader, Trace, TraceHeader};

/// Reads a trace of any profiler format. The error is a `String`, so that a reader thread can
/// hand it back.
pub(super) fn load(path: &Path) -> Result<Trace, String> {
    load_sink(path, Trace::default())
}

/// Reads a trace of any profiler format into `sink`: a Kineto trace streams through its reader
/// in 1 MiB slices (no whole-file copy in memory); every other format is detected by its
/// content, read whole through the import dispatch ([`import::read_trace_of`]),
/// and its events handed to the sink.
pub(super) fn load_sink<S: EventSink>(path: &Path, sink: S) -> Result<S::Output, String> {
    let cannot = |e: std::io::Error| format!("cannot read {}: {e}", path.display());
    let mut file = std::fs::File::open(path).map_err(cannot)?;
    let mut head = Vec::with_capacity(DETECT_BYTES);
    (&mut file).take(DETECT_BYTES as u64).read_to_end(&mut head).map_err(cannot)?;
    let detected = import::detect(&head);
    if !detected.kind.is_trace() || detected.kind == FileKind::KinetoTrace {
        return stream(path, file, &head, Reader::with_sink(sink));
    }
    let limit = import::text_budget(detected.kind).unwrap_or(usize::MAX);
    let mut bytes = head;
    // Held to the kind's budget while read (a gzip file's compressed bytes are fewer than its
    // text, which the reader holds to the same budget); one byte more says it is past it.
    (&mut file).take((limit as u64).saturating_add(1)).read_to_end(&mut bytes).map_err(cannot)?;
    if bytes.len() > limit {
        let e = import::ImportError::TooLarge { limit };
        return Err(format!("{}: {e}", path.display()));
    }
    let trace = import::read_trace_of(detected, &bytes).map_err(|e| e.message(&path.display().to_string()))?;
    Ok(replay(sink, trace))
}

/// A trace's events handed to another sink, as its reader would have.
fn replay<S: EventSink>(mut sink: S, trace: Trace) -> S::Output {
    let Trace {
        names,
        kernels,
        transfers,
        cpu_ops,
        launches,
        annotations,
        devices,
        versions,
        event_count,
        json_bytes,
        format,
    } = trace;
    kernels.into_iter().for_each(|k| sink.kernel(&names, k));
    transfers.into_iter().for_each(|t| sink.transfer(&names, t));
    if S::CPU_SIDE {
        cpu_ops.into_iter().for_each(|o| sink.cpu_op(o));
        annotations.into_iter().for_each(|a| sink.annotation(a));
        launches.into_iter().for_each(|(c, l)| sink.launch(c, l));
    }
    sink.finish(TraceHeader { names, devices, versions, event_count, json_bytes, distributed: None, format })
}

/// A Kineto trace streamed through the reader in 1 MiB slices (no whole-file copy in memory).
pub(super) fn load_into<S: EventSink>(path: &Path, reader: Reader<S>) -> Result<S::Output, String> {
    let file = std::fs::File::open(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    stream(path, file, &[], reader)
}

/// The rest of `file` after `head` (its first bytes, already read) through the reader.
fn stream<S: EventSink>(
    path: &Path,
    mut file: std::fs::File,
    head: &[u8],
    mut reader: Reader<S>,
) -> Result<S::Output, String> {
    reader.feed(head).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = file.read(&mut buf).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        if n == 0 {
            break;
        }
        reader.feed(&buf[..n]).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    reader.finish().map_err(|e| format!("{}: {e}", path.display()))
}
