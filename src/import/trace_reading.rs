//! The readers a trace streams through while a file opens: the whole trace, or the whole trace
//! and its rank summary in one pass (the page's worker keeps both); one rank's file alone.

use thiserror::Error;

use analysis::ranks::{RankSink, RankSummary};
use formats::registry::{Format, FormatError, FormatReader, KINETO};
use trace::compiled::CompiledGroup;
use trace::intern::{NameId, NameTable};
use trace::read::{EventSink, TraceHeader};
use trace::Trace;
use trace::{Annotation, CollectiveArgs, CpuOp, Kernel, Launch, Transfer};

/// Whether this build reads traces and op graphs. Natively and in the page's analysis worker
/// (feature `page-worker`) it does; the page's own wasm does not: those kinds can be hundreds
/// of megabytes and are read in the worker, and their reader, analysis and comparison would be
/// most of the page's first download while serving only a fallback for hosts where the worker
/// cannot start. A constant, so that the compiler drops what it guards.
pub const READS_LARGE_KINDS: bool = cfg!(any(not(target_arch = "wasm32"), feature = "page-worker"));

/// The trace reader: the whole trace, or the whole trace and its rank summary in one pass
/// ([`FileOpener::with_ranks`]).
pub(super) enum TraceReaders {
    Plain(FormatReader<Trace>),
    WithRanks(FormatReader<TraceAndRank>),
}

impl TraceReaders {
    pub(super) fn format(&self) -> &'static Format {
        match self {
            TraceReaders::Plain(r) => r.format(),
            TraceReaders::WithRanks(r) => r.format(),
        }
    }

    pub(super) fn feed(&mut self, slice: &[u8]) -> Result<(), FormatError> {
        // Never made without the readers: the guard lets the compiler drop both readers (and
        // the rank fold) from the page's own build.
        if !READS_LARGE_KINDS {
            return Ok(());
        }
        match self {
            TraceReaders::Plain(r) => r.feed(slice),
            TraceReaders::WithRanks(r) => r.feed(slice),
        }
    }

    pub(super) fn finish(self) -> Result<(Trace, Option<RankSummary>), FormatError> {
        match self {
            TraceReaders::Plain(r) => Ok((r.finish()?, None)),
            TraceReaders::WithRanks(r) => r.finish().map(|(t, s)| (t, Some(s))),
        }
    }
}

/// Both sinks fed from one read of the file: the whole trace, and the fold the job report of
/// several ranks needs (`analysis::ranks`), which the trace does not keep (the trace's
/// `distributedInfo` and the collectives' process groups and sizes).
pub(super) struct TraceAndRank {
    pub(super) trace: Trace,
    pub(super) rank: RankSink<'static>,
}

impl EventSink for TraceAndRank {
    type Output = (Trace, RankSummary);
    fn kernel(&mut self, names: &NameTable, kernel: Kernel) {
        self.trace.kernel(names, kernel);
        self.rank.kernel(names, kernel);
    }
    fn collective_kernel(&mut self, names: &NameTable, kernel: Kernel, args: &CollectiveArgs<'_>) {
        self.trace.collective_kernel(names, kernel, args);
        self.rank.collective_kernel(names, kernel, args);
    }
    fn transfer(&mut self, names: &NameTable, transfer: Transfer) {
        self.trace.transfer(names, transfer);
        self.rank.transfer(names, transfer);
    }
    fn cpu_op(&mut self, op: CpuOp) {
        self.trace.cpu_op(op);
    }
    fn annotation(&mut self, annotation: Annotation) {
        self.trace.annotation(annotation);
    }
    fn launch(&mut self, correlation: u64, launch: Launch) {
        self.rank.launch(correlation, launch);
        self.trace.launch(correlation, launch);
    }
    fn compiled_name(&mut self, names: &NameTable, name: NameId, group: &CompiledGroup) {
        self.trace.compiled_name(names, name, group);
        self.rank.compiled_name(names, name, group);
    }
    fn finish(self, header: TraceHeader) -> (Trace, RankSummary) {
        let rank = self.rank.finish(header.clone());
        (self.trace.finish(header), rank)
    }
}

/// Why one rank's file could not be read: the file, and its format's own error.
#[derive(Debug, Clone, PartialEq, Error)]
#[error("{file}: {source}")]
pub struct RankReadError {
    pub file: String,
    #[source]
    pub source: FormatError,
}

/// Reads one rank's file, given as slices of its bytes (plain or gzip, in any format of the
/// registry, told by the first slice), into the summary the job report folds.
pub fn read_rank<'b>(file: &str, chunks: impl IntoIterator<Item = &'b [u8]>) -> Result<RankSummary, RankReadError> {
    let named = |source| RankReadError { file: file.to_string(), source };
    let mut chunks = chunks.into_iter().peekable();
    let first = chunks.peek().copied().unwrap_or_default();
    let format = super::detect(first).kind.format().unwrap_or(&KINETO);
    let mut reader = FormatReader::new(format, RankSink::new(file));
    for chunk in chunks {
        reader.feed(chunk).map_err(named)?;
    }
    reader.finish().map_err(named)
}
