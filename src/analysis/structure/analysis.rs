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
use trace::intern::NameId;
use trace::Trace;

/// What the search found in one trace.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TraceStructure {
    pub stream: StreamChoice,
    pub steps: StepsFound,
    /// Layers in each step (0 without).
    pub step_layers: Vec<usize>,
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
    let step_layers = found.iter().map(|f| f.as_ref().map_or(0, |f| f.layers.len())).collect();
    Some(TraceStructure {
        steps: found_steps,
        step_layers,
        step_phase,
        phases,
        budget_exhausted: budget.exhausted,
        stream,
    })
}
