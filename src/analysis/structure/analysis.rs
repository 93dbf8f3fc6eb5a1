//! The whole search on one trace: the stream, its steps, their layers, the phases. The result
//! keeps kernel indices and name ids, so that the comparison can align the layers of two
//! traces; [`super::report()`] turns it into the JSON of `fusionscope trace`.

use super::layers::Budget;
use super::phases::{phases, step_layers, PhaseFound};
use super::steps::{steps, StepsFound, StreamKernels};
use super::stream::{main_stream, StreamChoice};
use classify::category::Category;
use limits::LAYER_SEARCH_CELLS;
use serde::{Deserialize, Serialize};
use std::ops::Range;
use trace::intern::NameId;
use trace::Trace;

/// What the search found in one trace.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TraceStructure {
    pub stream: StreamChoice,
    pub steps: StepsFound,
    /// The layers of each step, in order: ranges of positions in the step's `kernels` (none
    /// in a step without layers).
    pub layers: Vec<Vec<Range<usize>>>,
    /// The phase of each step.
    pub step_phase: Vec<usize>,
    pub phases: Vec<PhaseFound>,
    /// The search stopped at [`LAYER_SEARCH_CELLS`]: later steps may hold layers not found.
    pub budget_exhausted: bool,
}

impl TraceStructure {
    /// Whether anything repeats: a phase with layers, or a phase of two or more steps.
    pub fn repeats(&self) -> bool {
        self.phases.iter().any(|p| p.layer.is_some() || p.steps.len() >= 2)
    }
}

/// Categories by name index, for the names of kernels.
pub fn kernel_categories(trace: &Trace, category: &dyn Fn(NameId) -> Category) -> Vec<Category> {
    let mut out = vec![Category::Other; trace.names.len()];
    let mut done = vec![false; trace.names.len()];
    for k in &trace.kernels {
        let i = k.name.index();
        if !done[i] {
            done[i] = true;
            out[i] = category(k.name);
        }
    }
    out
}

/// The steps, phases and layers of `trace`, with `category` giving each kernel name's
/// category; `None` for a trace without kernels.
pub fn search(trace: &Trace, category: &dyn Fn(NameId) -> Category) -> Option<TraceStructure> {
    let stream = main_stream(trace)?;
    let categories = kernel_categories(trace, category);
    let view = StreamKernels { trace, stream: &stream, categories: &categories };
    let mut budget = Budget::new(LAYER_SEARCH_CELLS);
    let found_steps = steps(&view, &mut budget);
    let found = step_layers(&view, &found_steps.steps, &mut budget);
    let (phases, step_phase) = phases(&view, &found_steps.steps, &found);
    let layers = found
        .iter()
        .map(|f| f.as_ref().map_or_else(Vec::new, |f| f.layers.iter().map(|l| l.start..l.end).collect()))
        .collect();
    Some(TraceStructure { steps: found_steps, layers, step_phase, phases, budget_exhausted: budget.exhausted, stream })
}

/// Where one kernel falls in the structure ([`TraceStructure::kernel_places`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Place {
    /// Index into the steps.
    pub step: Option<u32>,
    /// Index of its layer among its step's layers.
    pub layer: Option<u32>,
}

impl TraceStructure {
    /// The step and layer of each kernel of `trace` (the trace searched), by index into
    /// `trace.kernels`. A kernel of the searched stream is in the step that holds it (none for
    /// one outside every step) and, if a layer of that step holds it, in that layer. A kernel
    /// of another stream or device is in the step whose span, its first kernel's start to its
    /// last kernel's end, holds its start, and in no layer: layers are found on one stream.
    pub fn kernel_places(&self, trace: &Trace) -> Vec<Place> {
        let index = |i: usize| u32::try_from(i).ok();
        let kernel = |pos: usize| self.stream.kernels.get(pos).and_then(|&k| trace.kernels.get(k));
        // Each step's span and index, by start.
        let mut spans: Vec<(f64, f64, usize)> = self
            .steps
            .steps
            .iter()
            .enumerate()
            .filter_map(|(i, s)| {
                let start = kernel(*s.kernels.first()?)?.ts;
                let end = s.kernels.iter().filter_map(|&p| kernel(p)).map(|k| k.ts + k.dur).fold(start, f64::max);
                Some((start, end, i))
            })
            .collect();
        spans.sort_by(|a, b| a.0.total_cmp(&b.0));
        let by_time = |ts: f64| {
            let after = spans.partition_point(|s| s.0 <= ts);
            let &(_, end, i) = spans.get(after.checked_sub(1)?)?;
            (ts < end).then_some(i)
        };
        let mut places: Vec<Place> =
            trace.kernels.iter().map(|k| Place { step: by_time(k.ts).and_then(index), layer: None }).collect();
        for &k in &self.stream.kernels {
            if let Some(p) = places.get_mut(k) {
                *p = Place::default();
            }
        }
        for (si, step) in self.steps.steps.iter().enumerate() {
            for &pos in &step.kernels {
                if let Some(p) = self.stream.kernels.get(pos).and_then(|&k| places.get_mut(k)) {
                    p.step = index(si);
                }
            }
            for (li, layer) in self.layers.get(si).into_iter().flatten().enumerate() {
                for &pos in step.kernels.get(layer.clone()).into_iter().flatten() {
                    if let Some(p) = self.stream.kernels.get(pos).and_then(|&k| places.get_mut(k)) {
                        p.layer = index(li);
                    }
                }
            }
        }
        places
    }
}
