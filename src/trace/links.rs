//! How a GPU event finds the CPU op that launched it: by the id the op and the event share
//! (`external_id`), else through its launch call (correlation id), else (older traces) by the
//! op on the launch call's thread whose interval holds the call.
//!
//! Older traces (PyTorch 1.x: the `param` linear pair, the A100 TorchRec trace) write a
//! kernel's and its launch call's correlation id as their `External id`. Looked up as an op id,
//! that number finds whatever unrelated op happens to carry it (param linear's GEMMs landed on
//! `aten::t`), so in such a trace the ids are not used at all and every event goes to the op
//! enclosing its launch call. One rule here, so the op table, the gap and the fusion groups agree.

use std::borrow::Cow;

use rustc_hash::FxHashMap;

use super::{Launch, Trace, TraceFormat};

impl Trace {
    /// The CPU op that launched each kernel (index into `cpu_ops`): by the kernel's op id,
    /// else its launch call's, else (older traces, whose kernels carry only the correlation)
    /// the innermost op on the launch call's thread whose interval holds
    /// the call. `None` for graph replays and for kernels whose launch fell outside the profiled
    /// CPU window.
    pub fn kernel_ops(&self) -> Vec<Option<usize>> {
        OpLinks::new(self).ops_of(self.kernels.iter().map(|k| (k.external_id, k.correlation))).collect()
    }
}

/// A GPU event's op id and correlation id.
pub type EventIds = (Option<u64>, Option<u64>);

/// The CPU op of every kernel and copy of a trace ([`OpLinks::op_of`]), by their index: looked
/// up once for the op table and the fusion groups alike (on a 1 GB trace the lookups are a
/// quarter of a second in WebAssembly, each time).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventOps {
    pub kernels: Vec<Option<usize>>,
    pub transfers: Vec<Option<usize>>,
}

/// The indexes that link a GPU event to the CPU op that launched it, over the trace they
/// were made of (their own, or borrowed from where they are kept:
/// `analysis::summary::ClassifiedTrace::links`).
pub struct OpLinks<'t> {
    trace: &'t Trace,
    index: Cow<'t, LinkIndex>,
}

/// What [`OpLinks`] looks ops up in. Kept apart from the trace it indexes so that it can be
/// held beside it.
#[derive(Debug, Clone)]
pub struct LinkIndex {
    by_ext: FxHashMap<u64, usize>,
    /// Ops of each thread in start order, for the containment fallback.
    by_tid: FxHashMap<i64, Vec<usize>>,
    /// The trace's events carry their correlation id as `External id` ([`ids_are_correlations`]):
    /// ids link nothing, containment links everything.
    ids_are_correlations: bool,
}

/// Whether the trace is of the older PyTorch-profiler form whose GPU events' `External id` is
/// only their correlation id: nine in ten of its kernels and copies with both ids have them
/// equal. In a current trace the two are counted apart (op ids from the op counter,
/// correlations from the runtime's) and equal only by chance. Only Kineto JSON has that form:
/// the other readers number their ops themselves, and an XLA profile's op ids (one per HLO op
/// run, counted from 1) match its CUPTI correlation ids (counted from 1, one per kernel) on
/// every kernel of a profile where each op runs one kernel.
pub fn ids_are_correlations(trace: &Trace) -> bool {
    if trace.format != TraceFormat::Kineto {
        return false;
    }
    let ids = trace
        .kernels
        .iter()
        .map(|k| (k.external_id, k.correlation))
        .chain(trace.transfers.iter().map(|t| (t.external_id, t.correlation)))
        .filter_map(|(e, c)| e.zip(c));
    let (mut both, mut same) = (0usize, 0usize);
    for (e, c) in ids {
        both += 1;
        same += usize::from(e == c);
    }
    both > 0 && same.saturating_mul(10) >= both.saturating_mul(9)
}

impl LinkIndex {
    pub fn new(trace: &Trace) -> Self {
        let mut by_ext: FxHashMap<u64, usize> = FxHashMap::default();
        for (i, op) in trace.cpu_ops.iter().enumerate() {
            match by_ext.get(&op.external_id) {
                // A real op wins over an annotation; of two ops, the later-starting (inner) one.
                Some(&j) if !trace.cpu_ops[j].annotation && (op.annotation || op.ts < trace.cpu_ops[j].ts) => {}
                _ => {
                    by_ext.insert(op.external_id, i);
                }
            }
        }
        let mut by_tid: FxHashMap<i64, Vec<usize>> = FxHashMap::default();
        for (i, op) in trace.cpu_ops.iter().enumerate() {
            if !op.annotation {
                by_tid.entry(op.tid).or_default().push(i);
            }
        }
        LinkIndex { by_ext, by_tid, ids_are_correlations: ids_are_correlations(trace) }
    }
}

impl<'t> OpLinks<'t> {
    pub fn new(trace: &'t Trace) -> Self {
        OpLinks { trace, index: Cow::Owned(LinkIndex::new(trace)) }
    }

    /// The links of `trace` by an index made of it before.
    pub fn with_index(trace: &'t Trace, index: &'t LinkIndex) -> Self {
        OpLinks { trace, index: Cow::Borrowed(index) }
    }

    /// The CPU ops (not annotations) of thread `tid`, by start time.
    pub fn thread_ops(&self, tid: i64) -> &[usize] {
        self.index.by_tid.get(&tid).map_or(&[], Vec::as_slice)
    }

    /// The op that made a launch call: by the call's op id, else the op enclosing it.
    pub fn op_of_launch(&self, launch: &Launch) -> Option<usize> {
        let by_id = launch
            .external_id
            .filter(|_| !self.index.ids_are_correlations)
            .and_then(|e| self.index.by_ext.get(&e).copied());
        by_id.or_else(|| self.containing(launch))
    }

    fn containing(&self, launch: &Launch) -> Option<usize> {
        let ops = self.index.by_tid.get(&launch.tid)?;
        let after = ops.partition_point(|&i| self.trace.cpu_ops[i].ts <= launch.ts);
        // Nested ops start in outer-to-inner order: the innermost holder is the latest
        // start that still holds the call. Siblings in between are skipped (bounded walk).
        ops[..after].iter().rev().take(256).copied().find(|&i| {
            let op = &self.trace.cpu_ops[i];
            launch.ts <= op.ts + op.dur
        })
    }

    /// [`Self::op_of`] of each (op id, correlation) in turn. A run of equal pairs is
    /// looked up once: a graph replay's kernels share one correlation and no op id, and
    /// each lookup of theirs would walk the launching thread's ops.
    pub fn ops_of<'a>(
        &'a self,
        events: impl Iterator<Item = EventIds> + 'a,
    ) -> impl Iterator<Item = Option<usize>> + 'a {
        let mut last: Option<(EventIds, Option<usize>)> = None;
        events.map(move |ids| match last {
            Some((prev, op)) if prev == ids => op,
            _ => {
                let op = self.op_of(ids.0, ids.1);
                last = Some((ids, op));
                op
            }
        })
    }

    /// The op of every kernel and copy of the trace.
    pub fn event_ops(&self) -> EventOps {
        let trace = self.trace;
        EventOps {
            kernels: self.ops_of(trace.kernels.iter().map(|k| (k.external_id, k.correlation))).collect(),
            transfers: self.ops_of(trace.transfers.iter().map(|t| (t.external_id, t.correlation))).collect(),
        }
    }

    /// The op of a GPU event with this op id and correlation id.
    pub fn op_of(&self, external_id: Option<u64>, correlation: Option<u64>) -> Option<usize> {
        let launch = correlation.and_then(|c| self.trace.launches.get(&c));
        if self.index.ids_are_correlations {
            return launch.and_then(|l| self.containing(l));
        }
        let by_id = |e: Option<u64>| e.and_then(|e| self.index.by_ext.get(&e).copied());
        by_id(external_id)
            .or_else(|| by_id(launch.and_then(|l| l.external_id)))
            .or_else(|| launch.and_then(|l| self.containing(l)))
    }
}
