//! Opening a file slice by slice: the kind is detected from the first bytes, a Kineto trace
//! is fed to the incremental [`TraceReader`] as its slices arrive (so that a 1 GB trace never
//! sits whole in memory), an op graph is gathered and then parsed and analysed, and any other
//! kind is gathered as it is for whoever shows it.
//!
//! The page's analysis worker drives this with the slices it reads from a `File`; the page's
//! own fallback (no worker) and the tests feed it a whole file. Either way the figures are those
//! of the command line, which reads the same files with the same core.

use crate::fusion::{analyze, AnalysisReport, OpGraph};
use crate::trace::{classify, summarize, Trace, TraceError, TraceReader, TraceSummary};

use super::{detect, read_graph, Detected, FileKind, ImportError, DETECT_BYTES};

/// What a file turned out to hold, read and analysed.
#[derive(Debug)]
pub enum Opened {
    /// A Kineto trace and its summary (`fusionscope trace FILE --json`).
    Trace { trace: Trace, summary: TraceSummary },
    /// An op graph and its analysis (`fusionscope graph FILE --json`).
    Graph { graph: OpGraph, report: AnalysisReport },
    /// A kind this opener does not analyse, with its bytes as read. For
    /// [`FileKind::Unknown`] only the first [`DETECT_BYTES`] are kept: they are all that says
    /// what the file looks like instead.
    Other { detected: Detected, bytes: Vec<u8> },
}

/// Why a file of a recognised kind could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OpenError {
    Trace { gzipped: bool, error: TraceError },
    Graph { gzipped: bool, error: ImportError },
}

/// Where the opener is.
enum Stage {
    /// Fewer than [`DETECT_BYTES`] seen: the kind is not known yet.
    Detecting(Vec<u8>),
    Trace {
        gzipped: bool,
        reader: Box<TraceReader>,
    },
    /// Any other kind: the bytes are kept (all of them, or only the head for an unknown file).
    Gathering {
        detected: Detected,
        bytes: Vec<u8>,
    },
}

/// The incremental opener; see the module docs.
pub struct FileOpener {
    file_name: String,
    stage: Stage,
}

impl FileOpener {
    /// An opener for a file named `file_name` (the name goes into the trace summary).
    pub fn new(file_name: &str) -> Self {
        FileOpener { file_name: file_name.to_string(), stage: Stage::Detecting(Vec::new()) }
    }

    /// Whether more bytes would change the result: false once the file is known to be of an
    /// unrecognised kind (its head says all there is to say), so the reader can stop early.
    pub fn wants_more(&self) -> bool {
        !matches!(&self.stage, Stage::Gathering { detected, .. } if detected.kind == FileKind::Unknown)
    }

    /// The next slice of the file. A trace's error is reported as soon as its slice is read.
    pub fn feed(&mut self, slice: &[u8]) -> Result<(), OpenError> {
        match &mut self.stage {
            Stage::Detecting(head) => {
                head.extend_from_slice(slice);
                if head.len() >= DETECT_BYTES {
                    self.stage = stage_for(std::mem::take(head))?;
                }
                Ok(())
            }
            Stage::Trace { gzipped, reader } => {
                reader.feed(slice).map_err(|error| OpenError::Trace { gzipped: *gzipped, error })
            }
            Stage::Gathering { detected, bytes } => {
                if detected.kind != FileKind::Unknown {
                    bytes.extend_from_slice(slice);
                }
                Ok(())
            }
        }
    }

    /// Ends the file: reads what was gathered and analyses it.
    pub fn finish(self) -> Result<Opened, OpenError> {
        let stage = match self.stage {
            Stage::Detecting(head) => stage_for(head)?,
            decided => decided,
        };
        match stage {
            // A file shorter than the detection prefix: nothing but its head to go on.
            Stage::Detecting(bytes) => Ok(Opened::Other { detected: detect(&bytes), bytes }),
            Stage::Trace { gzipped, reader } => {
                let trace = reader.finish().map_err(|error| OpenError::Trace { gzipped, error })?;
                let summary = summarize(&trace, Some(&self.file_name), &classify);
                Ok(Opened::Trace { trace, summary })
            }
            Stage::Gathering { detected, bytes } if detected.kind == FileKind::OpGraph => {
                let gzipped = detected.gzipped;
                let graph = read_graph(&bytes).map_err(|error| OpenError::Graph { gzipped, error })?;
                let report = analyze(&graph).report(&graph);
                Ok(Opened::Graph { graph, report })
            }
            Stage::Gathering { detected, bytes } => Ok(Opened::Other { detected, bytes }),
        }
    }
}

/// Chooses the stage from the first bytes and passes them on.
fn stage_for(head: Vec<u8>) -> Result<Stage, OpenError> {
    let detected = detect(&head[..head.len().min(DETECT_BYTES)]);
    if detected.kind == FileKind::KinetoTrace {
        let mut reader = Box::new(TraceReader::new());
        let gzipped = detected.gzipped;
        reader.feed(&head).map_err(|error| OpenError::Trace { gzipped, error })?;
        return Ok(Stage::Trace { gzipped, reader });
    }
    let mut bytes = head;
    if detected.kind == FileKind::Unknown {
        bytes.truncate(DETECT_BYTES);
    }
    Ok(Stage::Gathering { detected, bytes })
}

/// Opens a whole file held in memory.
pub fn open_whole(file_name: &str, bytes: &[u8]) -> Result<Opened, OpenError> {
    open_in_slices(file_name, bytes, 1 << 20)
}

/// Opens a file held in memory as if it arrived in slices of `slice_bytes` (as the worker
/// reads it): the result does not depend on the slicing.
pub fn open_in_slices(file_name: &str, bytes: &[u8], slice_bytes: usize) -> Result<Opened, OpenError> {
    let mut opener = FileOpener::new(file_name);
    for slice in bytes.chunks(slice_bytes.max(1)) {
        if !opener.wants_more() {
            break;
        }
        opener.feed(slice)?;
    }
    opener.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::read_trace;

    const TRITON: &[u8] = include_bytes!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/traces/amd/torch_compile_triton_mi300x.json.gz"
    ));
    const QWEN: &[u8] = include_bytes!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/traces/nvidia/hf_qwen1.5-0.5b_eager_h100.json.gz"
    ));
    const GRAPH: &[u8] = include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/graphs/worked_example.json"));

    #[test]
    fn a_trace_fed_in_any_slices_gives_the_summary_of_the_whole_file() {
        let whole = read_trace(QWEN).unwrap();
        let expected = summarize(&whole, Some("q.json.gz"), &classify);
        for n in [7, 4096, 100_000, QWEN.len()] {
            match open_in_slices("q.json.gz", QWEN, n).unwrap() {
                Opened::Trace { trace, summary } => {
                    assert_eq!(summary, expected, "slices of {n}");
                    assert_eq!(trace.kernels.len(), whole.kernels.len());
                }
                other => panic!("slices of {n}: {other:?}"),
            }
        }
    }

    #[test]
    fn a_graph_is_parsed_and_analysed() {
        let Opened::Graph { graph, report } = open_in_slices("g.json", GRAPH, 100).unwrap() else { panic!() };
        assert_eq!(graph.len(), 4);
        assert_eq!(report, analyze(&graph).report(&graph));
    }

    #[test]
    fn a_cut_trace_fails_with_the_offset() {
        let plain = crate::import::decompress(TRITON).unwrap().into_owned();
        let cut = &plain[..plain.len() / 2];
        match open_in_slices("cut.json", cut, 1000) {
            Err(OpenError::Trace { gzipped: false, error }) => {
                assert!(error.to_string().contains("byte"), "{error}");
            }
            other => panic!("{other:?}"),
        }
        let gz_cut = &TRITON[..TRITON.len() / 2];
        assert!(matches!(open_in_slices("cut.json.gz", gz_cut, 1000), Err(OpenError::Trace { gzipped: true, .. })));
    }

    #[test]
    fn an_unknown_file_keeps_only_its_head() {
        let noise: Vec<u8> = (0..DETECT_BYTES * 3).map(|i| b"lorem ipsum\n"[i % 12]).collect();
        let mut opener = FileOpener::new("x.txt");
        opener.feed(&noise[..DETECT_BYTES + 10]).unwrap();
        assert!(!opener.wants_more());
        match opener.finish().unwrap() {
            Opened::Other { detected, bytes } => {
                assert_eq!(detected.kind, FileKind::Unknown);
                assert_eq!(bytes.len(), DETECT_BYTES);
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn other_kinds_come_back_whole_and_small_files_are_decided_at_the_end() {
        let csv: &[u8] =
            include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/ops-csv/dit-xl_inference_tpuv5p_bs8.csv"));
        match open_whole("ops.csv", csv).unwrap() {
            Opened::Other { detected, bytes } => {
                assert_eq!(detected.kind, FileKind::SimOpsCsv);
                assert_eq!(bytes, csv);
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(open_whole("empty", b""), Ok(Opened::Other { .. })));
    }
}
