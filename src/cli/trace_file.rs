//! Reading a trace file of any profiler format for the command line: the format is detected from
//! the file's first bytes by the registry (`formats::interface`), and the file streams through its
//! reader in 1 MiB slices, into whatever sink the command wants (the whole trace, the
//! summary-only fold, a rank's fold), never whole in memory unless the format must be.

use std::io::Read;
use std::path::Path;

use formats::registry::{Format, FormatReader, KINETO};
use import::{Detected, FileKind, DETECT_BYTES};
use trace::{EventSink, Trace};

/// Reads a trace of any profiler format. The error is a `String`, so that a reader thread can
/// hand it back.
pub(super) fn load(path: &Path) -> Result<Trace, String> {
    load_sink(path, Trace::default())
}

/// Reads a trace of any profiler format into `sink`. A file of no known kind goes to the
/// PyTorch profiler's reader, whose error says where its JSON goes wrong; a file of another
/// kind (an op graph, a chip) is refused with what it is.
pub(super) fn load_sink<S: EventSink + 'static>(path: &Path, sink: S) -> Result<S::Output, String>
where
    S::Output: 'static,
{
    load_sink_reporting(path, sink, u64::MAX, &mut |_| {})
}

/// [`load_sink`], telling `report` the bytes read so far each time another `every` bytes of the
/// file have been read (a large trace's export says how far it is).
pub(super) fn load_sink_reporting<S: EventSink + 'static>(
    path: &Path,
    sink: S,
    every: u64,
    report: &mut dyn FnMut(u64),
) -> Result<S::Output, String>
where
    S::Output: 'static,
{
    let shown = path.display().to_string();
    let cannot = |e: std::io::Error| format!("cannot read {shown}: {e}");
    let mut file = std::fs::File::open(path).map_err(cannot)?;
    let mut head = Vec::with_capacity(DETECT_BYTES);
    (&mut file).take(DETECT_BYTES as u64).read_to_end(&mut head).map_err(cannot)?;
    let detected = import::detect(&head);
    let format = format_of(detected).map_err(|what| format!("{shown} is {what}, not a profiler's trace"))?;
    let mut reader = FormatReader::new(format, sink);
    let failed = |e| import::OpenError { detected: Detected { kind: FileKind::Trace(format), ..detected }, error: e };
    reader.feed(&head).map_err(|e| failed(e.into()).message(&shown))?;
    let mut read = head.len() as u64;
    let mut next = every;
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = file.read(&mut buf).map_err(cannot)?;
        if n == 0 {
            break;
        }
        reader.feed(&buf[..n]).map_err(|e| failed(e.into()).message(&shown))?;
        read = read.saturating_add(n as u64);
        if read >= next {
            report(read);
            next = read.saturating_add(every);
        }
    }
    reader.finish().map_err(|e| failed(e.into()).message(&shown))
}

/// The format a file is read as: its own, or Kineto's for a file of no known kind; the kind in
/// words for a file of another kind.
fn format_of(detected: Detected) -> Result<&'static Format, &'static str> {
    match detected.kind {
        FileKind::Trace(format) => Ok(format),
        FileKind::Unknown | FileKind::Gzip => Ok(&KINETO),
        kind => Err(kind.describe()),
    }
}

/// Reads a torch.compile log (`compile-log`, `trace --compile-log`), or every log of a
/// `TORCH_TRACE` folder (one per process, in name order) as one, naming the file in any error.
pub(super) fn read_log(path: &Path) -> Result<inductor::CompileLog, Box<dyn std::error::Error>> {
    if !path.is_dir() {
        return super::io::read_parsed(path, inductor::CompileLog::read);
    }
    let cannot = |e: std::io::Error| format!("cannot read the folder {}: {e}", path.display());
    let mut files: Vec<std::path::PathBuf> = std::fs::read_dir(path)
        .map_err(cannot)?
        .map(|e| e.map(|e| e.path()))
        .collect::<Result<_, _>>()
        .map_err(cannot)?;
    files.retain(|f| f.is_file());
    files.sort();
    if files.is_empty() {
        return Err(format!("the folder {} holds no compile log", path.display()).into());
    }
    if files.len() > limits::COMPILE_LOG_GRAPHS {
        return Err(
            format!("the folder {} holds more than {} files", path.display(), limits::COMPILE_LOG_GRAPHS).into()
        );
    }
    let logs = files
        .iter()
        .map(|f| Ok((f.display().to_string(), super::io::read_parsed(f, inductor::CompileLog::read)?)))
        .collect::<Result<Vec<_>, Box<dyn std::error::Error>>>()?;
    inductor::CompileLog::merged(logs).map_err(|e| format!("{}: {e}", path.display()).into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_read_reports_its_progress_every_step_of_the_file() {
        // A plain Kineto trace of about 7 MB: 80,000 kernels.
        let events: Vec<String> = (0..80_000)
            .map(|i| {
                format!(
                    r#"{{"ph":"X","cat":"kernel","name":"gemm_{}","pid":0,"tid":7,"ts":{i},"dur":1,"args":{{}}}}"#,
                    i % 7
                )
            })
            .collect();
        let path = std::env::temp_dir().join(format!("progress-{}.json", std::process::id()));
        std::fs::write(&path, format!(r#"{{"traceEvents":[{}]}}"#, events.join(","))).unwrap();
        let size = std::fs::metadata(&path).unwrap().len();
        let step = 1 << 20;
        let mut reports = Vec::new();
        let trace = load_sink_reporting(&path, Trace::default(), step, &mut |read| reports.push(read)).unwrap();
        assert_eq!(trace.kernels.len(), 80_000);
        // One report per step of the file, each at least a step past the last, none past the end.
        assert!(size > 5 * step && reports.len() as u64 == size / step, "{reports:?} of {size}");
        assert!(reports.windows(2).all(|w| w[1] >= w[0] + step), "{reports:?}");
        assert!(reports[0] >= step && reports.last().is_some_and(|&r| r <= size));
        // Without a step, nothing is reported.
        let mut none = 0;
        load_sink_reporting(&path, Trace::default(), u64::MAX, &mut |_| none += 1).unwrap();
        assert_eq!(none, 0);
        std::fs::remove_file(&path).unwrap();
    }
}
