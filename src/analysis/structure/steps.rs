//! Forward passes (steps) in one stream's kernels (`docs/trace-analysis.md`, "Steps").
//!
//! Serving engines mark each pass with an annotation (vLLM `execute_…`, SGLang `step[…]`, the
//! profiler's `ProfilerStep#N`); when one of those kinds of range holds kernels, its ranges are
//! the steps. Without them, passes are told apart by what the GPU did: idle gaps cut the stream
//! into bursts (never inside one graph replay, whose kernels share a correlation id), each burst's
//! runs of layers are the cores of passes (two passes back to back are two runs with the
//! epilogue and the next prologue between them), and the kernels between two cores go to the
//! earlier pass up to the longest idle gap between them and to the later one after it.

use serde::{Deserialize, Serialize};
use std::ops::Range;

use rustc_hash::FxHashMap;

use super::layers::{find, Budget, Tokens};
use super::stream::StreamChoice;
use classify::category::Category;
use trace::intern::NameId;
use trace::Trace;

/// Annotation names that mark a step, by prefix, with what they are called in reports.
pub const STEP_MARKERS: [(&str, &str); 3] =
    [("ProfilerStep#", "profiler step"), ("execute_", "vLLM execute"), ("step[", "SGLang step")];
/// The marker whose ranges may hold several passes (a profiler step is a training or generate
/// step, not a pass): its ranges are cut at layer runs like bursts.
const MANY_PASS_MARKER: &str = "ProfilerStep#";
/// Shortest idle gap that ends a burst, µs.
pub const STEP_GAP_US: f64 = 500.0;
/// ... and it must be this many times the stream's median gap.
pub const STEP_GAP_FACTOR: f64 = 8.0;
/// Nested ranges of one kind looked through to find the innermost holding a kernel.
const CONTAINING_WALK: usize = 64;

/// One step: positions in the stream (indices into [`StreamChoice::kernels`]), increasing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StepSpan {
    pub kernels: Vec<usize>,
    /// The annotation range that marked it.
    pub annotation: Option<NameId>,
}

/// Which annotations marked the steps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Marker {
    /// Index into [`STEP_MARKERS`].
    pub kind: usize,
    /// GPU-side ranges (`gpu_user_annotation`), else CPU-side ones holding the launch calls.
    pub gpu: bool,
}

/// The steps of a stream and how they were found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StepsFound {
    pub steps: Vec<StepSpan>,
    /// `None`: idle gaps and layer runs.
    pub marker: Option<Marker>,
    /// Stream kernels in no step (launched outside every marking range).
    pub outside: usize,
    /// Cuts made between runs of layers (passes with no idle gap between them).
    pub layer_cuts: usize,
}

/// A stream's kernels as the step and layer searches read them.
pub struct StreamKernels<'a> {
    pub trace: &'a Trace,
    pub stream: &'a StreamChoice,
    /// Category of each name, by name index.
    pub categories: &'a [Category],
}

impl StreamKernels<'_> {
    pub fn len(&self) -> usize {
        self.stream.kernels.len()
    }

    pub fn is_empty(&self) -> bool {
        self.stream.kernels.is_empty()
    }

    pub fn kernel(&self, pos: usize) -> &trace::Kernel {
        &self.trace.kernels[self.stream.kernels[pos]]
    }

    pub fn token(&self, pos: usize) -> u32 {
        self.kernel(pos).name.index() as u32
    }

    pub fn tokens(&self, positions: &[usize]) -> Vec<u32> {
        positions.iter().map(|&p| self.token(p)).collect()
    }

    /// Idle time between the kernel at `a` and the later one at `b`, µs (0 when they overlap).
    pub fn gap(&self, a: usize, b: usize) -> f64 {
        let (ka, kb) = (self.kernel(a), self.kernel(b));
        (kb.ts - (ka.ts + ka.dur)).max(0.0)
    }
}

/// The steps of the stream; see the module docs.
pub fn steps(view: &StreamKernels<'_>, budget: &mut Budget) -> StepsFound {
    let mut known = KnownCores::default();
    if let Some((marker, ranges)) = annotated(view) {
        let covered: usize = ranges.iter().map(|s| s.kernels.len()).sum();
        let outside = view.len() - covered;
        if STEP_MARKERS[marker.kind].0 != MANY_PASS_MARKER {
            return StepsFound { steps: ranges, marker: Some(marker), outside, layer_cuts: 0 };
        }
        let mut steps = Vec::new();
        let mut layer_cuts = 0;
        for r in ranges {
            let pieces = divide(view, &r.kernels, &cores(view, &r.kernels, budget, &mut known));
            layer_cuts += pieces.len() - 1;
            steps.extend(pieces.into_iter().map(|kernels| StepSpan { kernels, annotation: r.annotation }));
        }
        return StepsFound { steps, marker: Some(marker), outside, layer_cuts };
    }
    let all: Vec<usize> = (0..view.len()).collect();
    let bursts = bursts(view);
    let mut found_cores: Vec<Range<usize>> = Vec::new();
    for b in &bursts {
        let positions: Vec<usize> = b.clone().collect();
        found_cores.extend(
            cores(view, &positions, budget, &mut known).into_iter().map(|c| c.start + b.start..c.end + b.start),
        );
    }
    let steps: Vec<Vec<usize>> = if found_cores.is_empty() {
        bursts.iter().filter(|b| !b.is_empty()).map(|b| b.clone().collect()).collect()
    } else {
        divide(view, &all, &found_cores)
    };
    // Cuts that are not burst boundaries were made between runs of layers.
    let burst_starts: rustc_hash::FxHashSet<usize> = bursts.iter().map(|b| b.start).collect();
    let layer_cuts = steps.iter().skip(1).filter(|s| !burst_starts.contains(&s[0])).count();
    StepsFound {
        steps: steps.into_iter().map(|kernels| StepSpan { kernels, annotation: None }).collect(),
        marker: None,
        outside: 0,
        layer_cuts,
    }
}

/// The step ranges of the marking annotations that hold the most steps (then the most kernels;
/// GPU ranges before CPU ones, then the order of [`STEP_MARKERS`]), each with its kernels.
fn annotated(view: &StreamKernels<'_>) -> Option<(Marker, Vec<StepSpan>)> {
    let mut best: Option<(Marker, Vec<StepSpan>, usize)> = None;
    for gpu in [true, false] {
        for kind in 0..STEP_MARKERS.len() {
            let marker = Marker { kind, gpu };
            let spans = assign(view, marker);
            let covered: usize = spans.iter().map(|s| s.kernels.len()).sum();
            let better = match &best {
                None => !spans.is_empty(),
                Some((_, b, c)) => (spans.len(), covered) > (b.len(), *c),
            };
            if better {
                best = Some((marker, spans, covered));
            }
        }
    }
    best.map(|(m, s, _)| (m, s))
}

/// The stream's kernels in the ranges of one marker: each kernel in the innermost range (the
/// latest-starting one) that holds its start on the GPU, or its launch call on the CPU.
fn assign(view: &StreamKernels<'_>, marker: Marker) -> Vec<StepSpan> {
    let trace = view.trace;
    let prefix = STEP_MARKERS[marker.kind].0;
    let ranges: Vec<&trace::Annotation> = trace
        .annotations
        .iter()
        .filter(|a| a.gpu == marker.gpu && (!a.gpu || a.pid == view.stream.device))
        .filter(|a| trace.name(a.name).starts_with(prefix))
        .collect();
    if ranges.is_empty() {
        return Vec::new();
    }
    let mut by_range: FxHashMap<usize, usize> = FxHashMap::default();
    let mut spans: Vec<StepSpan> = Vec::new();
    for pos in 0..view.len() {
        let k = view.kernel(pos);
        let at = if marker.gpu { Some(k.ts) } else { k.correlation.and_then(|c| trace.launches.get(&c)).map(|l| l.ts) };
        let Some(at) = at else { continue };
        let after = ranges.partition_point(|r| r.ts <= at);
        let holder = (after.saturating_sub(CONTAINING_WALK)..after).rev().find(|&i| at <= ranges[i].ts + ranges[i].dur);
        if let Some(r) = holder {
            let s = *by_range.entry(r).or_insert_with(|| {
                spans.push(StepSpan { kernels: Vec::new(), annotation: Some(ranges[r].name) });
                spans.len() - 1
            });
            spans[s].kernels.push(pos);
        }
    }
    spans
}

/// Correlation ids shared by two or more kernels of the stream: graph replays.
fn replays(view: &StreamKernels<'_>) -> FxHashMap<u64, usize> {
    let mut counts: FxHashMap<u64, usize> = FxHashMap::default();
    for pos in 0..view.len() {
        if let Some(c) = view.kernel(pos).correlation {
            *counts.entry(c).or_insert(0) += 1;
        }
    }
    counts.retain(|_, n| *n >= 2);
    counts
}

/// The idle gap that ends a burst: [`STEP_GAP_US`], or [`STEP_GAP_FACTOR`] × the median gap
/// when that is longer (a stream that idles between all its kernels).
fn gap_threshold(view: &StreamKernels<'_>) -> f64 {
    let mut gaps: Vec<f64> = (1..view.len()).map(|i| view.gap(i - 1, i)).collect();
    if gaps.is_empty() {
        return STEP_GAP_US;
    }
    let mid = gaps.len() / 2;
    let (_, median, _) = gaps.select_nth_unstable_by(mid, f64::total_cmp);
    STEP_GAP_US.max(STEP_GAP_FACTOR * *median)
}

fn is_boundary(view: &StreamKernels<'_>, replay: &FxHashMap<u64, usize>, threshold: f64, a: usize, b: usize) -> bool {
    let same_replay = match (view.kernel(a).correlation, view.kernel(b).correlation) {
        (Some(x), Some(y)) => x == y && replay.contains_key(&x),
        _ => false,
    };
    !same_replay && view.gap(a, b) >= threshold
}

/// The stream cut at long idle gaps (never inside a graph replay).
fn bursts(view: &StreamKernels<'_>) -> Vec<Range<usize>> {
    let threshold = gap_threshold(view);
    let replay = replays(view);
    let mut out = Vec::new();
    let mut start = 0;
    for i in 1..view.len() {
        if is_boundary(view, &replay, threshold, i - 1, i) {
            out.push(start..i);
            start = i;
        }
    }
    out.push(start..view.len());
    out
}

/// How deep the search for cores goes into the stretches a search left (a prefill pass
/// before decode passes holds another layer than they do).
const CORE_DEPTH: usize = 3;
/// Shortest stretch searched again for cores of another layer.
const MIN_CORE_STRETCH: usize = 8;
/// A run of layers is the core of a pass when it holds at least this share of the longest
/// run's layers: passes of one model run the same number of layers whatever the phase, while
/// the embedding lookups of one pass (`index_select`, `add`, twice) are a short run of a tiny
/// "layer" that must not make a pass of its own.
const CORE_SHARE: f64 = 0.75;

/// The cores found in each distinct kernel sequence searched, with the search's depth and
/// least layers: a serving trace's decode steps are bursts of the same kernels, hundreds of
/// times, and the layer search of one is most of the step search's work.
///
/// A remembered result is only reused when it is exactly what the search would give again:
/// its first search had no alignment refused, and the budget still holds the cells it spent
/// (then every request of a second search would be granted too), which are spent again; so
/// the steps, and when the budget runs out, are those of searching every burst.
#[derive(Default)]
struct KnownCores {
    known: FxHashMap<CoreSearch, (Vec<Range<usize>>, u64)>,
}

/// One search for cores: the sequence's tokens, the depth left and the least layers of a core.
type CoreSearch = (Vec<u32>, usize, usize);

/// The runs of layers in `positions` that are cores of passes, as ranges of indices into
/// `positions`, in order: those of the layer that covers the most, then, in the stretches
/// between and around them, those of other layers (a prefill pass between decode passes).
fn cores(
    view: &StreamKernels<'_>,
    positions: &[usize],
    budget: &mut Budget,
    known: &mut KnownCores,
) -> Vec<Range<usize>> {
    cores_within(view, positions, budget, known, CORE_DEPTH, 0)
}

fn cores_within(
    view: &StreamKernels<'_>,
    positions: &[usize],
    budget: &mut Budget,
    known: &mut KnownCores,
    depth: usize,
    min_layers: usize,
) -> Vec<Range<usize>> {
    let key = (view.tokens(positions), depth, min_layers);
    if let Some((cores, cells)) = known.known.get(&key) {
        if *cells <= budget.left() {
            budget.spend(*cells);
            return cores.clone();
        }
    }
    let left = budget.left();
    let cores = cores_searched(view, positions, &key.0, budget, known, depth, min_layers);
    // `exhausted` is set by a refusal: still unset, nothing was ever refused.
    if !budget.exhausted {
        known.known.insert(key, (cores.clone(), left - budget.left()));
    }
    cores
}

/// [`cores_within`]'s search itself, on the sequence's `tokens`.
fn cores_searched(
    view: &StreamKernels<'_>,
    positions: &[usize],
    tokens: &[u32],
    budget: &mut Budget,
    known: &mut KnownCores,
    depth: usize,
    min_layers: usize,
) -> Vec<Range<usize>> {
    let Some(found) = find(Tokens { tokens, categories: view.categories }, budget) else {
        return Vec::new();
    };
    let longest = found.runs.iter().map(|r| r.len()).max().unwrap_or(0);
    let least = min_layers.max((CORE_SHARE * longest as f64).ceil() as usize);
    let runs: Vec<Range<usize>> = found
        .runs
        .iter()
        .filter(|r| r.len() >= least)
        .map(|r| found.layers[r.start].start..found.layers[r.end - 1].end)
        .collect();
    if depth <= 1 {
        return runs;
    }
    let mut out = Vec::with_capacity(runs.len());
    let mut from = 0;
    for r in runs.iter().cloned().chain(std::iter::once(positions.len()..positions.len())) {
        if r.start >= from + MIN_CORE_STRETCH {
            let inner = cores_within(view, &positions[from..r.start], budget, known, depth - 1, least);
            out.extend(inner.into_iter().map(|c| c.start + from..c.end + from));
        }
        if !r.is_empty() {
            from = r.end;
            out.push(r);
        }
    }
    out
}

/// `positions` cut into one piece per core: the kernels between two cores go to the earlier
/// piece up to the longest idle gap between them (where a new graph replay starts, on equal
/// gaps; else the first), those before the first core to the first piece and after the last to
/// the last.
fn divide(view: &StreamKernels<'_>, positions: &[usize], cores: &[Range<usize>]) -> Vec<Vec<usize>> {
    if cores.len() < 2 {
        return vec![positions.to_vec()];
    }
    let replay_starts = |x: usize| {
        let (a, b) = (view.kernel(positions[x - 1]), view.kernel(positions[x]));
        a.correlation != b.correlation
    };
    let mut cuts = Vec::with_capacity(cores.len() + 1);
    cuts.push(0);
    for w in cores.windows(2) {
        // A cut at x starts a piece with positions[x]; x runs over the stretch between the cores.
        let (lo, hi) = (w[0].end.max(1), w[1].start.max(w[0].end.max(1)));
        let mut best = (lo, f64::NEG_INFINITY, false);
        for x in lo..=hi {
            let key = (view.gap(positions[x - 1], positions[x]), replay_starts(x));
            if key.0 > best.1 || (key.0 == best.1 && key.1 && !best.2) {
                best = (x, key.0, key.1);
            }
        }
        cuts.push(best.0);
    }
    cuts.push(positions.len());
    cuts.windows(2).filter(|w| w[0] < w[1]).map(|w| positions[w[0]..w[1]].to_vec()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::structure::stream::main_stream;
    use trace::{Annotation, Kernel, Launch};

    /// Kernels `k0`, `k1`, … on `device`, 10 µs apart (1 µs long), with `gap` more µs before
    /// each kernel listed in `after_gap`; correlation id = index.
    fn trace(device_of: &[i64], after_gap: &[usize], gap: f64) -> Trace {
        let mut t = Trace::default();
        let mut ts = 0.0;
        for (i, &d) in device_of.iter().enumerate() {
            if after_gap.contains(&i) {
                ts += gap;
            }
            let name = t.names.intern(&format!("k{}", i % 3));
            t.kernels.push(Kernel {
                name,
                ts,
                dur: 1.0,
                device: d,
                stream: 7,
                correlation: Some(i as u64),
                external_id: None,
                graph_node: false,
            });
            ts += 10.0;
        }
        t
    }

    fn found(t: &Trace) -> StepsFound {
        let stream = main_stream(t).unwrap();
        let categories = vec![Category::Other; t.names.len()];
        steps(&StreamKernels { trace: t, stream: &stream, categories: &categories }, &mut Budget::new(1 << 20))
    }

    #[test]
    fn idle_gaps_cut_bursts_and_other_devices_ranges_do_not_count() {
        let mut t = trace(&[0, 0, 0, 1, 0, 0, 0], &[4], 5_000.0);
        // A GPU step range of device 1 over everything: not device 0's.
        let name = t.names.intern("ProfilerStep#1");
        t.annotations.push(Annotation { name, ts: -1.0, dur: 1e9, gpu: true, pid: 1 });
        let s = found(&t);
        assert_eq!(s.marker, None);
        assert_eq!(s.steps.iter().map(|s| s.kernels.clone()).collect::<Vec<_>>(), [vec![0, 1, 2], vec![3, 4, 5]]);
        // The same range on device 0 makes one step of all its kernels.
        t.annotations[0].pid = 0;
        let s = found(&t);
        assert_eq!(s.marker, Some(Marker { kind: 0, gpu: true }));
        assert_eq!(s.steps.len(), 1);
        assert_eq!(s.steps[0].kernels, (0..6).collect::<Vec<_>>());
    }

    #[test]
    fn cpu_ranges_hold_the_launch_calls_innermost_first() {
        let mut t = trace(&[0; 6], &[], 0.0);
        for c in 0..6u64 {
            let name = t.names.intern("hipGraphLaunch");
            t.launches
                .insert(c, Launch { name, kernel: None, external_id: None, ts: 100.0 + c as f64, dur: 1.0, tid: 1 });
        }
        let outer = t.names.intern("execute_8_context_0(sq0)_generation_8(sq8)");
        let inner = t.names.intern("execute_model");
        // Launches 0–3 in the outer range, 2–3 also in an inner one; 4–5 in none.
        t.annotations.push(Annotation { name: outer, ts: 99.5, dur: 4.0, gpu: false, pid: 100 });
        t.annotations.push(Annotation { name: inner, ts: 101.5, dur: 2.0, gpu: false, pid: 100 });
        let s = found(&t);
        assert_eq!(s.marker, Some(Marker { kind: 1, gpu: false }));
        assert_eq!(s.steps.iter().map(|s| s.kernels.clone()).collect::<Vec<_>>(), [vec![0, 1], vec![2, 3]]);
        assert_eq!(s.steps[1].annotation, Some(inner));
        assert_eq!(s.outside, 2);
    }

    /// A synthetic serving trace's view (graph replays, no step annotations: bursts).
    fn serving() -> (Trace, Vec<Category>) {
        use crate::synthetic::serving::{write_serving_trace, ServingSpec};
        let (mut spec, _) = ServingSpec::vendor_pair();
        (spec.layers, spec.decode_steps) = (4, 12);
        let mut bytes = Vec::new();
        write_serving_trace(&mut bytes, &spec).unwrap();
        let t = formats::read_trace(&bytes).unwrap();
        let categories = crate::structure::analysis::kernel_categories(&t, &|id| crate::classify(t.name(id)).category);
        (t, categories)
    }

    #[test]
    fn remembered_cores_are_those_of_searching_every_burst_whatever_the_budget() {
        let (t, categories) = serving();
        let stream = main_stream(&t).unwrap();
        let view = StreamKernels { trace: &t, stream: &stream, categories: &categories };
        let bursts: Vec<Vec<usize>> = bursts(&view).into_iter().map(|b| b.collect()).collect();
        assert!(bursts.len() >= 12, "{}", bursts.len());
        // What searching every burst afresh costs, then budgets that run out part of the way.
        let mut full = Budget::new(u64::MAX);
        for b in &bursts {
            cores(&view, b, &mut full, &mut KnownCores::default());
        }
        let cost = u64::MAX - full.left();
        assert!(cost > 0);
        for cells in [u64::MAX, cost, cost - 1, cost / 2, cost / 3 + 7, cost / bursts.len() as u64] {
            let (mut remembering, mut afresh) = (Budget::new(cells), Budget::new(cells));
            let mut known = KnownCores::default();
            let mut found = 0;
            for b in &bursts {
                let reused = cores(&view, b, &mut remembering, &mut known);
                let searched = cores(&view, b, &mut afresh, &mut KnownCores::default());
                assert_eq!(reused, searched, "budget {cells}");
                assert_eq!((remembering.left(), remembering.exhausted), (afresh.left(), afresh.exhausted));
                found += usize::from(!searched.is_empty());
            }
            if cells >= cost {
                // Every decode burst has its layers, and the identical ones were searched once.
                assert!(found >= 12 && known.known.len() < bursts.len(), "{found} {}", known.known.len());
            }
        }
    }

    #[test]
    fn a_graph_replay_is_never_cut_at_a_gap() {
        let mut t = trace(&[0; 6], &[3], 5_000.0);
        for k in &mut t.kernels[1..5] {
            k.correlation = Some(42);
        }
        assert_eq!(found(&t).steps.len(), 1);
    }
}
