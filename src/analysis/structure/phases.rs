//! Steps grouped into phases (`docs/trace-analysis.md`, "Phases"): steps that repeat the same
//! layer (prefill passes, decode passes) form one phase, whatever their prologue, epilogue or
//! number of layers (a pass cut short by the end of the profile still belongs to its phase);
//! steps without layers group by their whole kernel sequence. Each phase gathers its layers'
//! statistics over all its steps.

use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

use super::layers::{find, Budget, Found, Tokens};
use super::steps::{StepSpan, StreamKernels};
use trace::intern::NameId;

/// A phase: its steps and, if its steps have layers, the layer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PhaseFound {
    /// Indices of its steps, in order.
    pub steps: Vec<usize>,
    /// `prefill`, `decode`, `mixed` (from the annotations, else guessed), or `phase N`.
    pub label: String,
    /// Whether the label was read from the steps' annotations.
    pub label_from_annotation: bool,
    pub layer: Option<PhaseLayer>,
}

/// The repeating layer of a phase, with statistics over all its steps.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PhaseLayer {
    /// The layer's kernels, from its first.
    pub names: Vec<NameId>,
    /// Mean duration of each position over the exact repeats, µs.
    pub position_us: Vec<f64>,
    /// Kernel time of every layer of every step (exact and near repeats), µs.
    pub layer_us: Vec<f64>,
    /// Layers in each of the phase's steps.
    pub layers_per_step: Vec<usize>,
    pub exact: usize,
    pub near: usize,
    /// Kernels between the first layer and the last of a step that are in no layer.
    pub between: usize,
    /// Distinct near-repeat sequences with their counts, most frequent first.
    pub variants: Vec<(Vec<NameId>, usize)>,
    /// Stream positions of the first step's kernels before its first layer and after its last.
    pub before: Vec<usize>,
    pub after: Vec<usize>,
}

impl PhaseLayer {
    /// The most common number of layers in a step (the largest on ties).
    pub fn typical_layers(&self) -> usize {
        let mut counts: FxHashMap<usize, usize> = FxHashMap::default();
        for &n in &self.layers_per_step {
            *counts.entry(n).or_insert(0) += 1;
        }
        counts.into_iter().max_by_key(|&(n, c)| (c, n)).map(|(n, _)| n).unwrap_or(0)
    }
}

/// The layers of each step (remembered per distinct kernel sequence, so a thousand identical
/// decode steps are searched once).
pub fn step_layers(view: &StreamKernels<'_>, steps: &[StepSpan], budget: &mut Budget) -> Vec<Option<Found>> {
    let mut known: FxHashMap<Vec<u32>, Option<Found>> = FxHashMap::default();
    steps
        .iter()
        .map(|s| {
            let tokens = view.tokens(&s.kernels);
            if let Some(f) = known.get(&tokens) {
                return f.clone();
            }
            let f = find(Tokens { tokens: &tokens, categories: view.categories }, budget);
            known.insert(tokens, f.clone());
            f
        })
        .collect()
}

/// The phase label an annotation name gives: SGLang `step[DECODE …]`, `step[EXTEND …]` /
/// `step[PREFILL …]`; vLLM `execute_N_context_C(…)_generation_G(…)`, prefill when only `C`
/// is non-zero, decode when only `G` is, mixed when both.
pub fn annotation_label(name: &str) -> Option<&'static str> {
    if let Some(rest) = name.strip_prefix("step[") {
        let kind = rest.split([' ', ']']).next().unwrap_or("").to_ascii_uppercase();
        return match kind.as_str() {
            "DECODE" => Some("decode"),
            "EXTEND" | "PREFILL" => Some("prefill"),
            "MIXED" => Some("mixed"),
            _ => None,
        };
    }
    if name.starts_with("execute_") {
        let number_after = |key: &str| -> Option<u64> {
            let at = name.find(key)? + key.len();
            let digits: String = name[at..].chars().take_while(char::is_ascii_digit).collect();
            digits.parse().ok()
        };
        return match (number_after("_context_")?, number_after("_generation_")?) {
            (0, 0) => None,
            (_, 0) => Some("prefill"),
            (0, _) => Some("decode"),
            _ => Some("mixed"),
        };
    }
    None
}

/// Groups steps into phases and gathers each phase's layer statistics.
pub fn phases(view: &StreamKernels<'_>, steps: &[StepSpan], found: &[Option<Found>]) -> (Vec<PhaseFound>, Vec<usize>) {
    let mut by_unit: FxHashMap<Vec<u32>, usize> = FxHashMap::default();
    let mut by_sequence: FxHashMap<Vec<u32>, usize> = FxHashMap::default();
    let mut phases: Vec<PhaseFound> = Vec::new();
    let mut step_phase = Vec::with_capacity(steps.len());
    for (i, (s, f)) in steps.iter().zip(found).enumerate() {
        let (map, key) = match f {
            Some(f) => (&mut by_unit, f.unit.clone()),
            None => (&mut by_sequence, view.tokens(&s.kernels)),
        };
        let next = phases.len();
        let p = *map.entry(key).or_insert(next);
        if p == next {
            phases.push(PhaseFound {
                steps: Vec::new(),
                label: String::new(),
                label_from_annotation: false,
                layer: None,
            });
        }
        phases[p].steps.push(i);
        step_phase.push(p);
    }
    for (p, phase) in phases.iter_mut().enumerate() {
        phase.layer = phase_layer(view, steps, found, &phase.steps);
        let first = &steps[phase.steps[0]];
        match first.annotation.and_then(|a| annotation_label(view.trace.name(a))) {
            Some(l) => {
                phase.label = l.to_string();
                phase.label_from_annotation = true;
            }
            None => phase.label = format!("phase {p}"),
        }
    }
    guess_prefill_decode(&mut phases);
    (phases, step_phase)
}

/// Without annotation labels: a first phase with layers holding one step, followed by a phase
/// with the same layer count holding several steps whose layers are faster, reads as a prefill
/// pass then decode passes.
fn guess_prefill_decode(phases: &mut [PhaseFound]) {
    if phases.iter().any(|p| p.label_from_annotation) {
        return;
    }
    let layered: Vec<usize> = (0..phases.len()).filter(|&p| phases[p].layer.is_some()).collect();
    let [a, b, ..] = layered[..] else { return };
    let mean =
        |p: &PhaseFound| p.layer.as_ref().map(|l| l.layer_us.iter().sum::<f64>() / l.layer_us.len().max(1) as f64);
    let typical = |p: &PhaseFound| p.layer.as_ref().map(PhaseLayer::typical_layers);
    let (pa, pb) = (&phases[a], &phases[b]);
    if pa.steps.len() == 1
        && pb.steps.len() >= 2
        && pa.steps[0] < pb.steps[0]
        && typical(pa) == typical(pb)
        && mean(pa) > mean(pb)
    {
        phases[a].label = "prefill".to_string();
        phases[b].label = "decode".to_string();
    }
}

/// The layer statistics of one phase's steps.
fn phase_layer(
    view: &StreamKernels<'_>,
    steps: &[StepSpan],
    found: &[Option<Found>],
    members: &[usize],
) -> Option<PhaseLayer> {
    let first = found[members[0]].as_ref()?;
    let p = first.unit.len();
    let dur = |step: &StepSpan, at: usize| view.kernel(step.kernels[at]).dur;
    let mut names: Option<Vec<NameId>> = None;
    let mut sums = vec![0.0; p];
    let mut layer_us = Vec::new();
    let mut layers_per_step = Vec::with_capacity(members.len());
    let (mut exact, mut near, mut between) = (0, 0, 0);
    let mut variants: FxHashMap<Vec<u32>, (usize, usize, Vec<NameId>)> = FxHashMap::default();
    for &s in members {
        let (step, f) = (&steps[s], found[s].as_ref()?);
        layers_per_step.push(f.layers.len());
        for l in &f.layers {
            layer_us.push((l.start..l.end).map(|at| dur(step, at)).sum());
            if l.exact {
                exact += 1;
                for (j, sum) in sums.iter_mut().enumerate() {
                    *sum += dur(step, l.start + j);
                }
                names.get_or_insert_with(|| (l.start..l.end).map(|at| view.kernel(step.kernels[at]).name).collect());
            } else {
                near += 1;
                let tokens = view.tokens(&step.kernels[l.start..l.end]);
                let next = variants.len();
                variants
                    .entry(tokens)
                    .or_insert_with(|| {
                        (0, next, (l.start..l.end).map(|at| view.kernel(step.kernels[at]).name).collect())
                    })
                    .0 += 1;
            }
        }
        if let (Some(a), Some(b)) = (f.layers.first(), f.layers.last()) {
            between += (b.end - a.start) - f.covered();
        }
    }
    let mut variants: Vec<(usize, usize, Vec<NameId>)> = variants.into_values().collect();
    variants.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    let step = &steps[members[0]];
    let (start, end) = (first.layers.first()?.start, first.layers.last()?.end);
    Some(PhaseLayer {
        names: names?,
        position_us: sums.iter().map(|s| s / exact.max(1) as f64).collect(),
        layer_us,
        layers_per_step,
        exact,
        near,
        between,
        variants: variants.into_iter().map(|(count, _, names)| (names, count)).collect(),
        before: step.kernels[..start].to_vec(),
        after: step.kernels[end..].to_vec(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_from_serving_annotations() {
        assert_eq!(annotation_label("step[DECODE bs=32]"), Some("decode"));
        assert_eq!(annotation_label("step[EXTEND bs=15 toks=15360]"), Some("prefill"));
        assert_eq!(
            annotation_label("execute_32_context_0(sq0sk0sqsq0sqsk0)_generation_32(sq32sk55086sqsq32sqsk55086)"),
            Some("decode")
        );
        assert_eq!(
            annotation_label(
                "execute_15360_context_15(sq15360sk15360sqsq15728640sqsk15728640)_generation_0(sq0sk0sqsq0sqsk0)"
            ),
            Some("prefill")
        );
        assert_eq!(annotation_label("execute_8192_context_9(sq8155)_generation_37(sq37)"), Some("mixed"));
        assert_eq!(annotation_label("execute_model"), None);
        assert_eq!(annotation_label("ProfilerStep#3"), None);
    }
}
