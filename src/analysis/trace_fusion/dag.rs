//! The kernel groups of one step or decoder layer as windows of boxes: one box per kernel
//! launch, in launch order, listing the ops its group ran; one edge per data hand-off between
//! consecutive launches ([`super::flow`]: exact with an execution trace, else inferred from sizes).
//! `view::fusion_dag` draws them with the group DAG of op graphs.
//!
//! Which windows: where the structure search ([`crate::structure`]) finds decoder layers,
//! each layer of the first step of each phase that has them; a phase without layers gives its
//! first step; a trace without structure gives its first kernels in launch order. Every window
//! and box count is bounded ([`DAG_WINDOWS`], [`DAG_BOXES`]) and what is left out is counted,
//! so the report stays small whatever the trace. Computed in the core (in the page's worker,
//! which holds the trace), so the page only draws it and the command line prints the same
//! (`fusionscope trace --json`'s `fusion_dag`).

use rustc_hash::FxHashMap;

use super::flow::handoff;
use super::groups::Grouping;
use super::{analyze_then, FusionOptions, TraceFusion};
use crate::structure::TraceStructure;
use crate::summary::ClassifiedTrace;
use trace::Trace;

/// Windows kept (layers first, phase by phase): a picker of a few dozen entries is still usable,
/// and a thousand-step trace must not grow its report by a window per step.
pub const DAG_WINDOWS: usize = 48;
/// Boxes drawn per window (launch order); the rest are counted in [`DagWindow::hidden`]. A
/// decoder layer runs 10–60 kernels; a window without structure is cut here.
pub const DAG_BOXES: usize = 64;
/// Characters kept of a box line (an op or part name; the page cuts it further to the box).
pub const BOX_LINE_CHARS: usize = 40;

/// One box: one kernel launch of the window.
#[derive(Debug, Clone, PartialEq)]
pub struct DagBox {
    /// Index into the trace's `fusion.groups`.
    pub group: usize,
    /// Its kernel's name (the group's), for readers of the JSON.
    pub kernel: String,
    /// This launch's duration, µs.
    pub dur_us: f64,
}

/// Data handed from box `from` to box `to` (consecutive launches).
#[derive(Debug, Clone, PartialEq)]
pub struct DagEdge {
    pub from: usize,
    pub to: usize,
    /// Bytes of the tensor handed over.
    pub bytes: u64,
    /// Taken from an execution trace's tensor ids (else inferred from sizes).
    pub exact: bool,
}

/// One step or layer.
#[derive(Debug, Clone, PartialEq)]
pub struct DagWindow {
    /// What it is, for the picker ("decode, step 1, layer 3 of 24").
    pub label: String,
    /// Kernels of the window (boxes plus hidden).
    pub kernels: usize,
    pub boxes: Vec<DagBox>,
    pub edges: Vec<DagEdge>,
    /// Launches past [`DAG_BOXES`], not drawn.
    pub hidden: usize,
    /// The structure's phase it is of (index into `structure.phases`), when structure was found.
    pub phase: Option<usize>,
    /// Its layer in the step (from 0), when it is a layer.
    pub layer: Option<usize>,
}

/// The windows of a trace.
#[derive(Debug, Clone, PartialEq)]
pub struct FusionDag {
    /// How the windows were chosen, in words.
    pub source: String,
    pub windows: Vec<DagWindow>,
    /// Windows past [`DAG_WINDOWS`].
    pub windows_left_out: usize,
}

/// The JSON form of [`FusionDag`] (the keys of `docs/trace-fusion.md`), written and read by
/// hand through `serde_json::Value`: derived serde code would be built once per serializer and
/// deserializer the page uses, about 8 KB of the page's first download for four small structs.
pub mod as_value {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};
    use serde_json::{json, Value};

    use super::{DagBox, DagEdge, DagWindow, FusionDag};

    fn to_value(d: &FusionDag) -> Value {
        let windows: Vec<Value> = d
            .windows
            .iter()
            .map(|w| {
                let mut o = json!({
                    "label": w.label,
                    "kernels": w.kernels,
                    "boxes": w.boxes.iter().map(|b| json!({"group": b.group, "kernel": b.kernel, "dur_us": b.dur_us})).collect::<Vec<_>>(),
                    "edges": w.edges.iter().map(|e| json!({"from": e.from, "to": e.to, "bytes": e.bytes, "exact": e.exact})).collect::<Vec<_>>(),
                    "hidden": w.hidden,
                });
                if let (Some(p), Some(map)) = (w.phase, o.as_object_mut()) {
                    map.insert("phase".into(), p.into());
                }
                if let (Some(l), Some(map)) = (w.layer, o.as_object_mut()) {
                    map.insert("layer".into(), l.into());
                }
                o
            })
            .collect();
        json!({"source": d.source, "windows": windows, "windows_left_out": d.windows_left_out})
    }

    fn num(v: &Value, k: &str) -> Option<usize> {
        v.get(k)?.as_u64().and_then(|n| usize::try_from(n).ok())
    }

    fn from_value(v: &Value) -> Option<FusionDag> {
        let text = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).map(str::to_string);
        let list = |v: &Value, k: &str| v.get(k).and_then(Value::as_array).cloned().unwrap_or_default();
        let windows = list(v, "windows")
            .iter()
            .map(|w| {
                Some(DagWindow {
                    label: text(w, "label")?,
                    kernels: num(w, "kernels")?,
                    boxes: list(w, "boxes")
                        .iter()
                        .map(|b| {
                            Some(DagBox {
                                group: num(b, "group")?,
                                kernel: text(b, "kernel")?,
                                dur_us: b.get("dur_us")?.as_f64()?,
                            })
                        })
                        .collect::<Option<_>>()?,
                    edges: list(w, "edges")
                        .iter()
                        .map(|e| {
                            Some(DagEdge {
                                from: num(e, "from")?,
                                to: num(e, "to")?,
                                bytes: e.get("bytes")?.as_u64()?,
                                exact: e.get("exact")?.as_bool()?,
                            })
                        })
                        .collect::<Option<_>>()?,
                    hidden: num(w, "hidden")?,
                    phase: num(w, "phase"),
                    layer: num(w, "layer"),
                })
            })
            .collect::<Option<_>>()?;
        Some(FusionDag { source: text(v, "source")?, windows, windows_left_out: num(v, "windows_left_out")? })
    }

    pub fn serialize<S: Serializer>(d: &Option<FusionDag>, s: S) -> Result<S::Ok, S::Error> {
        d.as_ref().map(to_value).serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<FusionDag>, D::Error> {
        let v = Option::<Value>::deserialize(d)?;
        match v {
            None | Some(Value::Null) => Ok(None),
            Some(v) => {
                from_value(&v).map(Some).ok_or_else(|| serde::de::Error::custom("fusion_dag: a malformed window"))
            }
        }
    }
}

/// A window's kernels (indices into `trace.kernels`, launch order) and label, before boxing.
struct Span {
    label: String,
    kernels: Vec<usize>,
    phase: Option<usize>,
    layer: Option<usize>,
}

/// The fusion analysis and its windows, grouping the trace once; the windows come from the
/// side's structure search.
pub fn fusion_with_dag(side: &ClassifiedTrace<'_>, options: &FusionOptions<'_>) -> (TraceFusion, Option<FusionDag>) {
    analyze_then(side, options, |grouping, position| dag_of(side, grouping, position))
}

fn dag_of(side: &ClassifiedTrace<'_>, grouping: &Grouping, position: &[usize]) -> Option<FusionDag> {
    let trace = side.trace;
    if trace.kernels.is_empty() {
        return None;
    }
    let structure = side.structure_search();
    let (source, spans, left_out) = match structure {
        Some(s) => spans_of(side, s),
        None => first_kernels(trace.kernels.len()),
    };
    let of_kernel =
        instance_of_kernel(trace, grouping, spans.iter().flat_map(|s| s.kernels.iter().copied().take(DAG_BOXES)));
    let windows = spans.iter().map(|span| window(grouping, position, span, &of_kernel)).collect();
    Some(FusionDag { source, windows, windows_left_out: left_out })
}

/// The first [`DAG_BOXES`] kernels in launch order, when no structure was found.
fn first_kernels(n: usize) -> (String, Vec<Span>, usize) {
    let kernels: Vec<usize> = (0..n).collect();
    let span = Span {
        label: format!("first {} in launch order", units::plural(n.min(DAG_BOXES) as u64, "kernel", "kernels")),
        kernels,
        phase: None,
        layer: None,
    };
    ("no steps or layers found: the first kernels in launch order".to_string(), vec![span], 0)
}

/// Layers of the first step with layers of each phase; phases without, their first step.
fn spans_of(side: &ClassifiedTrace<'_>, s: &TraceStructure) -> (String, Vec<Span>, usize) {
    let trace = side.trace;
    let mut spans: Vec<Span> = Vec::new();
    let mut left_out = 0usize;
    let mut any_layers = false;
    let to_kernels = |positions: &[usize]| -> Vec<usize> { positions.iter().map(|&p| s.stream.kernels[p]).collect() };
    let phases = s.phases.len();
    for (pi, phase) in s.phases.iter().enumerate() {
        let phase_name = if phases > 1 { format!("{}, ", phase.label) } else { String::new() };
        let with_layers = phase.steps.iter().copied().find(|&st| s.layers.get(st).is_some_and(|l| !l.is_empty()));
        let step = with_layers.or_else(|| phase.steps.first().copied());
        let Some(step) = step else { continue };
        let span = &s.steps.steps[step];
        match with_layers.map(|st| &s.layers[st]) {
            Some(layers) => {
                any_layers = true;
                let n = layers.len();
                for (li, l) in layers.iter().enumerate() {
                    if spans.len() >= DAG_WINDOWS {
                        left_out += 1;
                        continue;
                    }
                    spans.push(Span {
                        label: format!("{phase_name}step {}, layer {} of {n}", step + 1, li + 1),
                        kernels: to_kernels(&span.kernels[l.clone()]),
                        phase: Some(pi),
                        layer: Some(li),
                    });
                }
            }
            None if spans.len() < DAG_WINDOWS => spans.push(Span {
                label: format!("{phase_name}step {}", step + 1),
                kernels: to_kernels(&span.kernels),
                phase: Some(pi),
                layer: None,
            }),
            None => left_out += 1,
        }
    }
    if spans.is_empty() {
        let (_, first, left) = first_kernels(trace.kernels.len());
        return ("no steps found: the first kernels in launch order".to_string(), first, left);
    }
    let source = if any_layers {
        "the decoder layers of each phase's first step with layers (the structure search)"
    } else {
        "each phase's first step (the structure search found no repeating layer)"
    };
    (source.to_string(), spans, left_out)
}

/// The grouping's instance of each of `wanted` kernels (indices into `trace.kernels`). The
/// grouping holds one instance per kernel but in its own order, so a kernel is found by what
/// identifies its event: device, stream, start and duration (equal events taken in turn).
fn instance_of_kernel(
    trace: &Trace,
    grouping: &Grouping,
    wanted: impl Iterator<Item = usize>,
) -> FxHashMap<usize, usize> {
    type EventKey = (i64, i64, u64, u64);
    let key = |device: i64, stream: i64, ts: f64, dur: f64| (device, stream, ts.to_bits(), dur.to_bits());
    let mut wanted: Vec<usize> = wanted.collect();
    wanted.sort_unstable();
    wanted.dedup();
    let mut waiting: FxHashMap<EventKey, Vec<usize>> = FxHashMap::default();
    for &k in wanted.iter().rev() {
        let kr = &trace.kernels[k];
        waiting.entry(key(kr.device, kr.stream, kr.ts, kr.dur)).or_default().push(k);
    }
    let mut out = FxHashMap::default();
    for (i, inst) in grouping.instances.iter().enumerate() {
        let Some(stream) = inst.stream else { continue };
        if let Some(ks) = waiting.get_mut(&key(inst.device, stream, inst.ts, inst.dur)) {
            if let Some(k) = ks.pop() {
                out.insert(k, i);
            }
        }
    }
    out
}

/// Boxes and edges of one span; `of_kernel` maps its kernels to their instances (a kernel
/// without one ends the drawn part).
fn window(grouping: &Grouping, position: &[usize], span: &Span, of_kernel: &FxHashMap<usize, usize>) -> DagWindow {
    let shown: Vec<usize> = span.kernels.iter().take(DAG_BOXES).map_while(|k| of_kernel.get(k).copied()).collect();
    let boxes: Vec<DagBox> = shown
        .iter()
        .map(|&i| {
            let inst = &grouping.instances[i];
            DagBox {
                group: position[inst.group],
                kernel: grouping.groups[inst.group].kernel.clone(),
                dur_us: crate::summary::round3(inst.dur),
            }
        })
        .collect();
    let edges = shown
        .windows(2)
        .enumerate()
        .filter_map(|(i, w)| {
            let (a, b) = (&grouping.instances[w[0]], &grouping.instances[w[1]]);
            match handoff(grouping, a, b) {
                (Some(bytes), exact) => Some(DagEdge { from: i, to: i + 1, bytes, exact }),
                (None, _) => None,
            }
        })
        .collect();
    DagWindow {
        label: span.label.clone(),
        kernels: span.kernels.len(),
        hidden: span.kernels.len().saturating_sub(shown.len()),
        boxes,
        edges,
        phase: span.phase,
        layer: span.layer,
    }
}

#[cfg(test)]
mod tests;
