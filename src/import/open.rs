//! The one dispatch over every kind of file fusionscope reads: the kind is detected from the
//! first bytes, and [`FileOpener::finish`] gives one typed [`Imported`] value, or an
//! [`OpenError`] naming the kind and what went wrong. The page maps `Imported` to an action in
//! one match (`page::open`); the command line reads each kind through the same parsers.
//!
//! Reading is slice by slice: a trace is fed to its format's reader (`formats::registry`) as its
//! slices arrive (so that a 1 GB Kineto trace never sits whole in memory); every other kind is
//! gathered, up to its budget ([`super::text_budget`]), and parsed at the end; of a file of no
//! known kind (an unrecognised one, or gzip whose content cannot be inflated) only the head is
//! kept, since it says all there is to say. The page's
//! analysis worker feeds the slices it reads from a `File`; the page's own fallback (no
//! worker) and the tests feed a whole file. Either way the figures are those of the command
//! line. A new trace format is a line in the trace registry; a new kind of other file, a
//! [`FileKind`] in `detect`, a variant here and its arm in [`parse`].

use thiserror::Error;

use analysis::exec_trace::{parse_exec_trace, EtError, ExecTrace};
use analysis::pipeline::{report, Choices, TraceTime};
use analysis::ranks::{RankSink, RankSummary};
use analysis::structure::TraceStructure;
use analysis::summary::{summarize, ClassifiedTrace};
use analysis::TraceSummary;
use calib::{parse_calibration, CalibError, CalibrationFile};
use formats::registry::{Format, FormatError, FormatReader, Registry, BUILTIN};
use fusion::{analyse, AnalysisReport, OpGraph};
use hardware::{parse_chip, Chip, ChipError};
use optrace::{analyze_optrace_with_graph, OptraceError, OptraceReport};
use simcsv::{infer_setup, parse_sim_csv, InferredSetup, SimCsvError, SimTable};
use trace::Trace;
use workload::{parse_model_config, WorkloadError};

use super::{
    detect_in, read_graph, text, text_budget, unrecognised_reason, Detected, FileKind, ImportError, DETECT_BYTES,
};

pub use super::trace_reading::READS_LARGE_KINDS;
use super::trace_reading::{TraceAndRank, TraceReaders};

/// What a file turned out to hold, read and analysed: one variant per kind.
#[derive(Debug)]
#[allow(clippy::large_enum_variant)] // made and moved once per file opened
pub enum Imported {
    /// A Kineto trace, its summary and where its time goes (the chip detected from its devices),
    /// and its structure search (`None`: nothing found), kept so that comparing it later does
    /// not search again.
    Trace { trace: Trace, summary: TraceSummary, time: TraceTime, search: Option<Box<TraceStructure>> },
    /// An op graph and its analysis (`fusionscope graph FILE --json`).
    Graph { graph: OpGraph, report: AnalysisReport },
    /// An op trace: its text (a share link carries it), case view and op graph.
    OpTrace { text: String, report: OptraceReport, graph: OpGraph },
    /// A simulator op table, its CSV text, and the workload its file name describes.
    SimTable { text: String, table: SimTable, inferred: InferredSetup },
    /// A hardware calibration profile (or a measured-subgraph file).
    Calibration(CalibrationFile),
    /// A model configuration, checked; its text is kept whole (a share link carries it).
    ModelConfig { text: String },
    /// A chip configuration.
    Chip(Chip),
    /// A PyTorch execution trace: the page's worker links it to the Kineto trace of its run.
    ExecTrace(ExecTrace),
    /// A torch.compile log: the page's worker joins it to the traces of its run.
    CompileLog(inductor::CompileLog),
    /// No kind fusionscope reads (or gzip whose content could not be inflated): why, in words.
    Unrecognised { detected: Detected, reason: String },
}

/// Why the content of a file of a recognised kind cannot be read.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum ReadError {
    /// Boxed, as is [`ReadError::OpTrace`]: the two are the largest errors, and a file's
    /// error is made once but passed up through every reading call's `Result`.
    #[error(transparent)]
    Import(Box<ImportError>),
    /// A trace's format's own error (`formats::interface`).
    #[error(transparent)]
    Format(#[from] FormatError),
    #[error(transparent)]
    OpTrace(Box<OptraceError>),
    #[error(transparent)]
    SimTable(#[from] SimCsvError),
    #[error(transparent)]
    Calibration(#[from] CalibError),
    #[error(transparent)]
    ModelConfig(#[from] WorkloadError),
    #[error(transparent)]
    Chip(#[from] ChipError),
    #[error(transparent)]
    ExecTrace(#[from] EtError),
    #[error(transparent)]
    CompileLog(#[from] inductor::LogError),
    /// A file of a kind that is not a profiler's output was given where a trace was wanted.
    #[error("it is {0}, not a profiler's trace")]
    NotATrace(&'static str),
    /// A trace or op graph reached a build that does not read them ([`READS_LARGE_KINDS`]).
    #[error(
        "this page reads traces and op graphs in its analysis worker, which could not start in this browser \
         (the command line reads the file too)"
    )]
    NeedsWorker,
}

impl From<ImportError> for ReadError {
    fn from(e: ImportError) -> Self {
        ReadError::Import(Box::new(e))
    }
}

impl From<OptraceError> for ReadError {
    fn from(e: OptraceError) -> Self {
        ReadError::OpTrace(Box::new(e))
    }
}

/// A file of a recognised kind that could not be read: its kind and why.
#[derive(Debug, Clone, PartialEq)]
pub struct OpenError {
    pub detected: Detected,
    pub error: ReadError,
}

impl OpenError {
    /// The sentence a user reads: the file, its kind, and what is wrong with it and where.
    pub fn message(&self, file_name: &str) -> String {
        let gz = if self.detected.gzipped { " (gzip-compressed)" } else { "" };
        let (what, verb) = match self.detected.kind {
            FileKind::Trace(format) => (format.noun(), "read"),
            FileKind::OpGraph => ("an op graph", "analysed"),
            FileKind::OpTrace => ("an op trace", "read"),
            FileKind::SimOpsCsv => ("a simulator op table", "read"),
            FileKind::ExecTrace => ("a PyTorch execution trace", "read"),
            FileKind::CompileLog => ("a torch.compile log", "read"),
            kind => (kind.describe(), "read"),
        };
        format!("{file_name} is {what}{gz} but cannot be {verb}: {}.", self.error)
    }
}

/// Where the opener is.
enum Stage {
    /// Fewer than [`DETECT_BYTES`] seen: the kind is not known yet.
    Detecting(Vec<u8>),
    /// A trace: its format's reader takes each slice as it comes.
    Trace { gzipped: bool, reader: TraceReaders },
    /// Any other kind: the bytes are kept (all of them, or only the head for a file of no known
    /// kind: see [`head_only`]).
    Gathering { detected: Detected, bytes: Vec<u8> },
}

/// The incremental opener; see the module docs.
pub struct FileOpener {
    file_name: String,
    /// The trace formats detection tries.
    registry: Registry,
    stage: Stage,
    /// Fold a trace's rank summary as it is read ([`FileOpener::with_ranks`]).
    ranks: bool,
}

impl FileOpener {
    /// An opener for a file named `file_name` (the name goes into a trace's summary and is
    /// what a simulator table's workload is read from).
    pub fn new(file_name: &str) -> Self {
        FileOpener::with_registry(file_name, BUILTIN)
    }

    /// An opener that reads the trace formats of `registry` (every other kind as usual).
    pub fn with_registry(file_name: &str, registry: Registry) -> Self {
        FileOpener { file_name: file_name.to_string(), registry, stage: Stage::Detecting(Vec::new()), ranks: false }
    }

    /// An opener that, for a Kineto trace, also folds the rank summary of `analysis::ranks` in
    /// the same pass ([`FileOpener::finish_with_ranks`]): the page's worker keeps it, to give the
    /// job report of the ranks opened together, the figures of `fusionscope ranks`.
    pub fn with_ranks(file_name: &str) -> Self {
        FileOpener { ranks: true, ..FileOpener::new(file_name) }
    }

    /// Whether more bytes would change the result: false once the file is known to be of no
    /// kind fusionscope reads (its head says all there is to say), so the reader can stop early.
    pub fn wants_more(&self) -> bool {
        !matches!(&self.stage, Stage::Gathering { detected, .. } if head_only(detected.kind))
    }

    /// The kind: once the first [`DETECT_BYTES`] have been seen, or, for a file that ended
    /// sooner, what all its bytes say.
    pub fn detected(&self) -> Detected {
        match &self.stage {
            Stage::Detecting(head) => detect_in(self.registry, head),
            Stage::Trace { gzipped, reader } => Detected { kind: FileKind::Trace(reader.format()), gzipped: *gzipped },
            Stage::Gathering { detected, .. } => *detected,
        }
    }

    /// The next slice of the file. A trace's error is reported as soon as its slice is read.
    pub fn feed(&mut self, slice: &[u8]) -> Result<(), OpenError> {
        match &mut self.stage {
            Stage::Detecting(head) => {
                head.extend_from_slice(slice);
                if head.len() >= DETECT_BYTES {
                    self.stage = stage_for(self.registry, std::mem::take(head), &self.file_name, self.ranks)?;
                }
                Ok(())
            }
            Stage::Trace { gzipped, reader } => {
                reader.feed(slice).map_err(|e| trace_error(reader.format(), *gzipped, e))
            }
            Stage::Gathering { detected, bytes } => gather(*detected, bytes, slice),
        }
    }

    /// The bytes gathered so far, for a file that is not streamed (not a trace): what the
    /// page's worker sends back for kinds the page opens itself (see
    /// [`FileKind::analysed_off_the_page`]).
    pub fn into_gathered(self) -> Option<Vec<u8>> {
        match self.stage {
            Stage::Detecting(bytes) | Stage::Gathering { bytes, .. } => Some(bytes),
            Stage::Trace { .. } => None,
        }
    }

    /// Ends the file: reads what was gathered and analyses it.
    pub fn finish(self) -> Result<Imported, OpenError> {
        self.finish_with_ranks(|_| None).map(|(imported, _)| imported)
    }

    /// [`FileOpener::finish`], with a trace's rank summary when the opener was made
    /// [`FileOpener::with_ranks`] (none for other kinds). A trace's report takes the execution
    /// trace `exec_trace` picks for it once it is read (the page's worker links each it holds
    /// to the trace), so that its op table and fusion are made once, with it.
    pub fn finish_with_ranks<'e>(
        self,
        exec_trace: impl FnOnce(&Trace) -> ExecTraceOf<'e>,
    ) -> Result<(Imported, Option<RankSummary>), OpenError> {
        let stage = match self.stage {
            Stage::Detecting(head) => stage_for(self.registry, head, &self.file_name, self.ranks)?,
            decided => decided,
        };
        match stage {
            // A file shorter than the detection prefix: nothing but its head to go on.
            Stage::Detecting(bytes) => {
                parse_with(&self.file_name, detect_in(self.registry, &bytes), &bytes, exec_trace).map(|i| (i, None))
            }
            // Never made without the readers; the guard lets the compiler drop the arm.
            Stage::Trace { gzipped, reader } if !READS_LARGE_KINDS => Err(OpenError {
                detected: Detected { kind: FileKind::Trace(reader.format()), gzipped },
                error: ReadError::NeedsWorker,
            }),
            Stage::Trace { gzipped, reader } => {
                let format = reader.format();
                let (trace, rank) = reader.finish().map_err(|e| trace_error(format, gzipped, e))?;
                let (summary, time, search) = trace_results(&trace, &self.file_name, exec_trace(&trace));
                Ok((Imported::Trace { trace, summary, time, search }, rank))
            }
            Stage::Gathering { detected, bytes } => {
                parse_with(&self.file_name, detected, &bytes, exec_trace).map(|i| (i, None))
            }
        }
    }
}

fn trace_error(format: &'static Format, gzipped: bool, error: FormatError) -> OpenError {
    OpenError { detected: Detected { kind: FileKind::Trace(format), gzipped }, error: error.into() }
}

/// Chooses the stage from the first bytes and passes them on: a trace to its format's reader.
fn stage_for(registry: Registry, head: Vec<u8>, file_name: &str, ranks: bool) -> Result<Stage, OpenError> {
    let detected = detect_in(registry, &head[..head.len().min(DETECT_BYTES)]);
    if let (FileKind::Trace(format), true) = (detected.kind, READS_LARGE_KINDS) {
        let mut reader = if ranks {
            let sink = TraceAndRank { trace: Trace::default(), rank: RankSink::new(file_name) };
            TraceReaders::WithRanks(FormatReader::new(format, sink))
        } else {
            TraceReaders::Plain(FormatReader::new(format, Trace::default()))
        };
        let gzipped = detected.gzipped;
        reader.feed(&head).map_err(|e| trace_error(format, gzipped, e))?;
        return Ok(Stage::Trace { gzipped, reader });
    }
    let mut bytes = Vec::new();
    gather(detected, &mut bytes, &head)?;
    Ok(Stage::Gathering { detected, bytes })
}

/// Files of these kinds are not read past their head: it is all [`parse`] looks at.
fn head_only(kind: FileKind) -> bool {
    matches!(kind, FileKind::Unknown | FileKind::Gzip)
}

/// Adds `slice` to the bytes gathered of a file of a kind read whole: an error as soon as
/// they pass the kind's budget (a gzip file's compressed bytes are held to it as well, being
/// fewer than its text); only the head of a file of no known kind.
fn gather(detected: Detected, bytes: &mut Vec<u8>, slice: &[u8]) -> Result<(), OpenError> {
    if head_only(detected.kind) {
        let room = DETECT_BYTES.saturating_sub(bytes.len());
        bytes.extend_from_slice(&slice[..slice.len().min(room)]);
        return Ok(());
    }
    if let Some(limit) = text_budget(detected.kind) {
        if bytes.len() + slice.len() > limit {
            return Err(OpenError { detected, error: ImportError::TooLarge { limit }.into() });
        }
    }
    bytes.extend_from_slice(slice);
    Ok(())
}

/// An execution trace and its file name, for a trace's report.
pub type ExecTraceOf<'e> = Option<(&'e ExecTrace, &'e str)>;

/// A whole file of a detected kind, parsed: the one match over the kinds.
pub fn parse(file_name: &str, detected: Detected, bytes: &[u8]) -> Result<Imported, OpenError> {
    parse_with(file_name, detected, bytes, |_| None)
}

/// [`parse`], a trace's report taking the execution trace `exec_trace` picks for it.
fn parse_with<'e>(
    file_name: &str,
    detected: Detected,
    bytes: &[u8],
    exec_trace: impl FnOnce(&Trace) -> ExecTraceOf<'e>,
) -> Result<Imported, OpenError> {
    let fail = |error: ReadError| OpenError { detected, error };
    // Borrowed for a plain file: copied (`into_owned`) only by the kinds that keep their text.
    let limit = text_budget(detected.kind).unwrap_or(usize::MAX);
    let text = || text(bytes, limit).map_err(|e| fail(e.into()));
    Ok(match detected.kind {
        // A pattern and a constant guard, not `kind.analysed_off_the_page()`: the compiler must
        // see the trace and graph arms below are dead in the page's own build, or the readers
        // and every trace analysis join the page's first download (about 390 KB).
        FileKind::Trace(_) | FileKind::OpGraph | FileKind::ExecTrace | FileKind::CompileLog if !READS_LARGE_KINDS => {
            return Err(fail(ReadError::NeedsWorker))
        }
        FileKind::Trace(_) => {
            let trace = read_trace_of(detected, bytes)?;
            let (summary, time, search) = trace_results(&trace, file_name, exec_trace(&trace));
            Imported::Trace { trace, summary, time, search }
        }
        FileKind::OpGraph => {
            let graph = read_graph(bytes).map_err(|e| fail(e.into()))?;
            let report = analyse(&graph).report(&graph);
            Imported::Graph { graph, report }
        }
        FileKind::OpTrace => {
            let text = text()?.into_owned();
            let (report, graph) = analyze_optrace_with_graph(&text).map_err(|e| fail(e.into()))?;
            Imported::OpTrace { text, report, graph }
        }
        FileKind::SimOpsCsv => {
            let text = text()?.into_owned();
            let table = parse_sim_csv(&text).map_err(|e| fail(e.into()))?;
            let inferred = infer_setup(file_name, &table);
            Imported::SimTable { text, table, inferred }
        }
        FileKind::Calibration => Imported::Calibration(parse_calibration(&text()?).map_err(|e| fail(e.into()))?),
        FileKind::ModelConfig => {
            let text = text()?.into_owned();
            parse_model_config(&text).map_err(|e| fail(e.into()))?;
            Imported::ModelConfig { text }
        }
        FileKind::Chip => Imported::Chip(parse_chip(&text()?).map_err(|e| fail(e.into()))?),
        FileKind::ExecTrace => Imported::ExecTrace(parse_exec_trace(&text()?, file_name).map_err(|e| fail(e.into()))?),
        FileKind::CompileLog => Imported::CompileLog(inductor::CompileLog::read(&text()?).map_err(|e| fail(e.into()))?),
        FileKind::Gzip | FileKind::Unknown => {
            Imported::Unrecognised { detected, reason: unrecognised_reason(&bytes[..bytes.len().min(DETECT_BYTES)]) }
        }
    })
}

/// A whole profiler output of a trace kind, held in memory, read into the format-neutral
/// trace by its format's reader.
pub fn read_trace_of(detected: Detected, bytes: &[u8]) -> Result<Trace, OpenError> {
    let fail = |error: ReadError| OpenError { detected, error };
    let FileKind::Trace(format) = detected.kind else {
        return Err(fail(ReadError::NotATrace(detected.kind.describe())));
    };
    let mut reader = FormatReader::new(format, Trace::default());
    let read = bytes.chunks(1 << 20).try_for_each(|chunk| reader.feed(chunk));
    read.and_then(|()| reader.finish()).map_err(|e| fail(e.into()))
}

/// Opens a whole file held in memory.
pub fn open_whole(file_name: &str, bytes: &[u8]) -> Result<Imported, OpenError> {
    open_in_slices(file_name, bytes, 1 << 20)
}

/// Opens a file held in memory as if it arrived in slices of `slice_bytes` (as the worker
/// reads it): the result does not depend on the slicing.
pub fn open_in_slices(file_name: &str, bytes: &[u8], slice_bytes: usize) -> Result<Imported, OpenError> {
    let mut opener = FileOpener::new(file_name);
    for slice in bytes.chunks(slice_bytes.max(1)) {
        if !opener.wants_more() {
            break;
        }
        opener.feed(slice)?;
    }
    opener.finish()
}

/// A trace's summary and report, as opening its file gives them, classified once; the report
/// with the execution trace of its run, if one is given.
/// A trace's summary, report and structure search.
type TraceResults = (TraceSummary, TraceTime, Option<Box<TraceStructure>>);

fn trace_results(trace: &Trace, file_name: &str, exec_trace: ExecTraceOf<'_>) -> TraceResults {
    // One structure search (the side's) for the summary, the fusion's windows and a later
    // comparison.
    let side = ClassifiedTrace::new(trace);
    let summary = summarize(&side, Some(file_name));
    let time = report(&side, summary.structure.as_deref(), &Choices::with_exec_trace(exec_trace));
    (summary, time, side.into_search().map(Box::new))
}

#[cfg(test)]
mod tests;
