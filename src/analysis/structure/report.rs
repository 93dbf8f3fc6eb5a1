//! The structure as `fusionscope trace --json` writes it (`"structure"`): steps, phases, and each
//! phase's layer with its kernels, times, regularity, variants and what lies outside it.

use serde::{Deserialize, Serialize};

use super::analysis::TraceStructure;
use super::layers::NEAR_REPEAT;
use super::phases::{PhaseFound, PhaseLayer};
use super::steps::STEP_MARKERS;
use crate::structure::align::{align, Step};
use classify::category::Category;
use classify::family::table_name;
use trace::intern::NameId;
use trace::Trace;

/// Variants listed per phase; the rest are counted in a note.
pub const MAX_VARIANTS: usize = 8;
/// Steps named one by one in notes when their layer count differs from their phase's; more
/// are summed up in one note (a long profile cut short names one step, a broken one many).
const MAX_STEP_NOTES: usize = 8;
/// Differences listed per variant.
const MAX_DIFFERENCES: usize = 6;
/// Kernel names are shortened to this in variant differences (the layer lists them whole).
const DIFFERENCE_NAME_WIDTH: usize = 60;
/// Kernels listed before and after a phase's layers; the counts say how many there are. A
/// prologue or epilogue holds a few kernels; a step whose layers cover only part of it could
/// otherwise list hundreds of thousands of names.
pub const MAX_OUTSIDE: usize = 64;

/// The structure of one trace (`"structure"` in `fusionscope trace --json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Structure {
    /// The device (GPU `pid`) and stream read: the device with the most kernels, its busiest
    /// stream.
    pub device: i64,
    pub stream: i64,
    /// Kernels read.
    pub kernels: usize,
    /// Kernels not read: on the device's other streams, on other devices.
    pub other_stream_kernels: usize,
    pub other_device_kernels: usize,
    /// How steps were told apart: `annotations` or `gaps` (idle gaps and layer runs).
    pub steps_from: String,
    /// The annotation kind, e.g. `execute_… (vLLM execute, CPU ranges)`, when annotations.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step_annotation: Option<String>,
    /// Kernels read that no step holds (launched outside every step annotation).
    pub outside_steps: usize,
    pub steps: Vec<StepEntry>,
    pub phases: Vec<PhaseEntry>,
    /// What a reader should know: devices or streams left out, steps cut at layer runs, steps
    /// with fewer layers than their phase, a search stopped at its budget.
    pub notes: Vec<String>,
}

/// One step (forward pass).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepEntry {
    /// Start of its first kernel and end of its last, µs (the trace's clock).
    pub start_us: f64,
    pub end_us: f64,
    pub kernels: usize,
    /// Index into `phases`.
    pub phase: usize,
    /// Layers found in it (0 without).
    pub layers: usize,
    /// Kernel time, µs.
    pub time_us: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotation: Option<String>,
}

/// One kernel of a layer (or outside the layers), with its mean time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LayerKernel {
    pub category: Category,
    pub kernel: String,
    pub time_us: f64,
}

/// How layer times vary, µs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Spread {
    pub min: f64,
    pub max: f64,
    pub stdev: f64,
}

/// How regular the layers were, over all the phase's steps.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Regularity {
    /// Layers found.
    pub layers: usize,
    /// Identical to the layer listed.
    pub exact: usize,
    /// Near-repeats (see `near_repeat_share`).
    pub near: usize,
    /// Share of a near-repeat's kernels that must pair by name with the layer's.
    pub near_repeat_share: f64,
    /// Kernels between a step's first and last layer that are in no layer.
    pub between_kernels: usize,
}

/// A near-repeat sequence and how it differs from the layer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VariantEntry {
    /// How many layers ran it.
    pub layers: usize,
    pub kernels: usize,
    /// `+ name` (extra kernel), `- name` (kernel missing), `name for name` (other kernel).
    pub differences: Vec<String>,
}

/// One phase: steps that repeat the same layer (or the same kernels, without layers).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PhaseEntry {
    pub phase: usize,
    /// `prefill`, `decode`, `mixed`, or `phase N` when nothing says.
    pub label: String,
    /// Where the label comes from: `annotation`, `guess` (one slow step, then fast ones) or
    /// `none`.
    pub label_from: String,
    /// Steps in the phase.
    pub steps: usize,
    /// The most common number of layers in its steps (0: no layer).
    pub layers_per_step: usize,
    pub kernels_per_layer: usize,
    /// The layer's kernels in order, each with its mean time over the exact repeats.
    pub layer: Vec<LayerKernel>,
    /// Mean kernel time of a layer, over every layer of every step; `null` without layers.
    pub time_per_layer_us: Option<f64>,
    pub layer_time_spread_us: Option<Spread>,
    /// Mean kernel time of a step.
    pub time_per_step_us: f64,
    pub regularity: Option<Regularity>,
    /// Near-repeats, most frequent first (at most [`MAX_VARIANTS`]).
    pub variants: Vec<VariantEntry>,
    /// The first step's kernels before its first layer (embedding, input preparation) and after
    /// its last (final norm, logits, sampling): the first [`MAX_OUTSIDE`] of each, and how many
    /// there are.
    pub before_layers: Vec<LayerKernel>,
    pub after_layers: Vec<LayerKernel>,
    pub kernels_before_layers: usize,
    pub kernels_after_layers: usize,
}

/// Durations are ns-precise in the trace; three decimals of µs keep sums free of float noise.
fn round3(x: f64) -> f64 {
    let r = (x * 1000.0).round() / 1000.0;
    if r == 0.0 {
        0.0
    } else {
        r
    }
}

/// The report of `s`, or `None` when nothing repeats.
pub fn report(trace: &Trace, s: &TraceStructure, category: &dyn Fn(NameId) -> Category) -> Option<Structure> {
    if !s.repeats() {
        return None;
    }
    let stream = &s.stream;
    let kernel = |pos: usize| &trace.kernels[stream.kernels[pos]];
    let entry = |pos: usize| {
        let k = kernel(pos);
        LayerKernel { category: category(k.name), kernel: trace.name(k.name).to_string(), time_us: round3(k.dur) }
    };
    let steps: Vec<StepEntry> = s
        .steps
        .steps
        .iter()
        .enumerate()
        .map(|(i, step)| {
            let start = step.kernels.first().map_or(0.0, |&p| kernel(p).ts);
            let end = step.kernels.iter().map(|&p| kernel(p).ts + kernel(p).dur).fold(start, f64::max);
            StepEntry {
                start_us: round3(start),
                end_us: round3(end),
                kernels: step.kernels.len(),
                phase: s.step_phase[i],
                layers: s.layers[i].len(),
                time_us: round3(step.kernels.iter().map(|&p| kernel(p).dur).sum()),
                annotation: step.annotation.map(|a| trace.name(a).to_string()),
            }
        })
        .collect();
    let phases: Vec<PhaseEntry> =
        s.phases.iter().enumerate().map(|(i, p)| phase_entry(trace, i, p, &steps, &entry, category)).collect();
    let mut notes = Vec::new();
    let other_devices: usize = stream.devices.iter().filter(|d| d.0 != stream.device).map(|d| d.1).sum();
    if stream.devices.len() > 1 {
        let read = stream.devices.iter().find(|d| d.0 == stream.device).map_or(0, |d| d.1);
        notes.push(format!(
            "{} devices ran kernels: read device {} (the most kernels, {}); {} kernels on the other devices are not read",
            stream.devices.len(),
            stream.device,
            read,
            other_devices
        ));
    }
    if stream.other_streams > 0 {
        notes.push(format!(
            "read stream {} of device {}; {} kernels on its other streams are not read",
            stream.stream, stream.device, stream.other_streams
        ));
    }
    if s.steps.layer_cuts > 0 {
        notes.push(format!(
            "{} step boundaries are between runs of layers with no idle gap between them (passes back to back)",
            s.steps.layer_cuts
        ));
    }
    for (i, p) in s.phases.iter().enumerate() {
        if let Some(l) = &p.layer {
            let typical = l.typical_layers();
            let odd: Vec<(usize, usize)> =
                p.steps.iter().zip(&l.layers_per_step).filter(|(_, &n)| n != typical).map(|(&s, &n)| (s, n)).collect();
            if odd.len() > MAX_STEP_NOTES {
                let listed: Vec<String> = odd.iter().take(MAX_STEP_NOTES).map(|(s, n)| format!("{s} ({n})")).collect();
                notes.push(format!(
                    "{} steps of phase {i} hold another number of layers than the phase's {typical}: steps {}, …",
                    odd.len(),
                    listed.join(", ")
                ));
            } else {
                for (step, n) in odd {
                    notes.push(format!("step {step} of phase {i} holds {n} layers, the phase's steps {typical}"));
                }
            }
            if l.variants.len() > MAX_VARIANTS {
                notes.push(format!(
                    "phase {i}: {} near-repeat variants, the {MAX_VARIANTS} most frequent listed",
                    l.variants.len()
                ));
            }
        }
    }
    if s.budget_exhausted {
        notes.push(
            "the layer search stopped at its budget of alignment cells: some steps may hold layers not found"
                .to_string(),
        );
    }
    let (steps_from, step_annotation) = match s.steps.marker {
        Some(m) => (
            "annotations".to_string(),
            Some(format!(
                "{}… ({}, {} ranges)",
                STEP_MARKERS[m.kind].0,
                STEP_MARKERS[m.kind].1,
                if m.gpu { "GPU" } else { "CPU" }
            )),
        ),
        None => ("gaps".to_string(), None),
    };
    Some(Structure {
        device: stream.device,
        stream: stream.stream,
        kernels: stream.kernels.len(),
        other_stream_kernels: stream.other_streams,
        other_device_kernels: other_devices,
        steps_from,
        step_annotation,
        outside_steps: s.steps.outside,
        steps,
        phases,
        notes,
    })
}

fn phase_entry(
    trace: &Trace,
    index: usize,
    p: &PhaseFound,
    steps: &[StepEntry],
    entry: &dyn Fn(usize) -> LayerKernel,
    category: &dyn Fn(NameId) -> Category,
) -> PhaseEntry {
    let step_times: Vec<f64> = p.steps.iter().map(|&s| steps[s].time_us).collect();
    let time_per_step_us = round3(step_times.iter().sum::<f64>() / step_times.len().max(1) as f64);
    let label_from = if p.label_from_annotation {
        "annotation"
    } else if p.label.starts_with("phase ") {
        "none"
    } else {
        "guess"
    };
    let mut e = PhaseEntry {
        phase: index,
        label: p.label.clone(),
        label_from: label_from.to_string(),
        steps: p.steps.len(),
        layers_per_step: 0,
        kernels_per_layer: 0,
        layer: Vec::new(),
        time_per_layer_us: None,
        layer_time_spread_us: None,
        time_per_step_us,
        regularity: None,
        variants: Vec::new(),
        before_layers: Vec::new(),
        after_layers: Vec::new(),
        kernels_before_layers: 0,
        kernels_after_layers: 0,
    };
    let Some(l) = &p.layer else { return e };
    e.layers_per_step = l.typical_layers();
    e.kernels_per_layer = l.names.len();
    e.layer = l
        .names
        .iter()
        .zip(&l.position_us)
        .map(|(&n, &t)| LayerKernel { category: category(n), kernel: trace.name(n).to_string(), time_us: round3(t) })
        .collect();
    let count = l.layer_us.len().max(1) as f64;
    let mean = l.layer_us.iter().sum::<f64>() / count;
    let var = l.layer_us.iter().map(|t| (t - mean) * (t - mean)).sum::<f64>() / count;
    e.time_per_layer_us = Some(round3(mean));
    e.layer_time_spread_us = Some(Spread {
        min: round3(l.layer_us.iter().copied().fold(f64::INFINITY, f64::min)),
        max: round3(l.layer_us.iter().copied().fold(0.0, f64::max)),
        stdev: round3(var.sqrt()),
    });
    e.regularity = Some(Regularity {
        layers: l.exact + l.near,
        exact: l.exact,
        near: l.near,
        near_repeat_share: NEAR_REPEAT,
        between_kernels: l.between,
    });
    e.variants = l
        .variants
        .iter()
        .take(MAX_VARIANTS)
        .map(|(names, n)| VariantEntry {
            layers: *n,
            kernels: names.len(),
            differences: differences(trace, l, names, category),
        })
        .collect();
    e.before_layers = l.before.iter().take(MAX_OUTSIDE).map(|&pos| entry(pos)).collect();
    e.after_layers = l.after.iter().take(MAX_OUTSIDE).map(|&pos| entry(pos)).collect();
    e.kernels_before_layers = l.before.len();
    e.kernels_after_layers = l.after.len();
    e
}

/// How a variant differs from the layer, from their alignment (names first, then categories).
fn differences(
    trace: &Trace,
    l: &PhaseLayer,
    variant: &[NameId],
    category: &dyn Fn(NameId) -> Category,
) -> Vec<String> {
    let unit = &l.names;
    let score = |i: usize, j: usize| {
        if variant[i] == unit[j] {
            Some(2)
        } else if category(variant[i]) == category(unit[j]) {
            Some(1)
        } else {
            None
        }
    };
    // As the tables name them: a library kernel read out, so two of one launcher differ.
    let short = |n: NameId| table_name(trace.name(n), DIFFERENCE_NAME_WIDTH);
    align(variant.len(), unit.len(), score, 1, usize::MAX)
        .into_iter()
        .filter_map(|s| match s {
            Step::Pair(i, j) if variant[i] != unit[j] => Some(format!("{} for {}", short(variant[i]), short(unit[j]))),
            Step::Pair(..) => None,
            Step::OnlyA(i) => Some(format!("+ {}", short(variant[i]))),
            Step::OnlyB(j) => Some(format!("- {}", short(unit[j]))),
        })
        .take(MAX_DIFFERENCES)
        .collect()
}
