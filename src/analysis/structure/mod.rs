//! The structure of a serving trace (`docs/trace-analysis.md`, "Serving traces: steps, phases,
//! layers"): forward passes (steps), steps grouped by what they run (phases), and in each phase
//! the repeating decoder layer, found from the kernel stream alone so that CUDA/HIP-graph
//! replays, whose kernels link to no CPU op, can still be read and compared layer by layer.
//!
//! [`search`] runs the search on a trace ([`stream`] picks the kernels, [`steps`] the passes,
//! [`layers`] the repeating unit, [`phases`] the groups) and keeps ids for the comparison's
//! layer alignment; [`report()`] writes it as the `"structure"` of `fusionscope trace --json`.

pub mod align;
pub mod analysis;
pub mod layers;
pub mod phases;
pub mod report;
pub mod steps;
pub mod stream;

pub use analysis::{search, Place, TraceStructure};
pub use report::{report, LayerKernel, PhaseEntry, Regularity, Spread, StepEntry, Structure, VariantEntry};
