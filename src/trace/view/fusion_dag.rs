//! The kernel groups of one step or decoder layer as the page draws them with the group DAG of
//! op graphs ([`draw::group_graph`]): one box per kernel launch, in launch order, listing
//! the ops its group ran; one edge per data hand-off between consecutive launches
//! ([`crate::fusion::flow`]: exact with an execution trace, else inferred from sizes).
//!
//! Which windows: where the structure search ([`crate::structure`]) finds decoder layers,
//! each layer of the first step of each phase that has them; a phase without layers gives its
//! first step; a trace without structure gives its first kernels in launch order. Every window
//! and box count is bounded ([`DAG_WINDOWS`], [`DAG_BOXES`]) and what is left out is counted,
//! so the report stays small whatever the trace. Computed in the core (in the page's worker,
//! which holds the trace), so the page only draws it and the command line prints the same
//! (`fusionscope trace --json`'s `fusion_dag`).

use rustc_hash::FxHashMap;

use crate::fusion::flow::handoff;
use crate::fusion::groups::Grouping;
use crate::fusion::{analyze_then, FusionOptions, KernelGroup, TraceFusion};
use crate::model::intern::NameId;
use crate::model::Trace;
use crate::structure::analysis::kernel_categories;
use crate::structure::layers::Budget;
use crate::structure::phases::step_layers;
use crate::structure::steps::StreamView;
use crate::structure::TraceStructure;
use crate::summary::ClassifiedTrace;
use classify::category::Category;
use draw::group_graph::{group_drawing, BoxRows, GroupGraph};
use draw::layout::{longest_path_layers, Layout};
use limits::LAYER_SEARCH_CELLS;

/// Windows kept (layers first, phase by phase): a picker of a few dozen entries is still usable,
/// and a thousand-step trace must not grow its report by a window per step.
pub const DAG_WINDOWS: usize = 48;
/// Boxes drawn per window (launch order); the rest are counted in [`DagWindow::hidden`]. A
/// decoder layer runs 10–60 kernels; a window without structure is cut here.
pub const DAG_BOXES: usize = 64;
/// Characters kept of a box line (an op or part name; the page cuts it further to the box).
const BOX_LINE_CHARS: usize = 40;

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
    let category = |id: NameId| side.class(id).category;
    let structure = side.structure_search();
    let (source, spans, left_out) = match structure {
        Some(s) => spans_of(side, s, &category),
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
fn spans_of(
    side: &ClassifiedTrace<'_>,
    s: &TraceStructure,
    category: &dyn Fn(NameId) -> Category,
) -> (String, Vec<Span>, usize) {
    let trace = side.trace;
    let categories = kernel_categories(trace, category);
    let view = StreamView { trace, stream: &s.stream, categories: &categories };
    let mut budget = Budget::new(LAYER_SEARCH_CELLS);
    let mut spans: Vec<Span> = Vec::new();
    let mut left_out = 0usize;
    let mut any_layers = false;
    let to_kernels = |positions: &[usize]| -> Vec<usize> { positions.iter().map(|&p| s.stream.kernels[p]).collect() };
    let phases = s.phases.len();
    for (pi, phase) in s.phases.iter().enumerate() {
        let phase_name = if phases > 1 { format!("{}, ", phase.label) } else { String::new() };
        let with_layers = phase.steps.iter().copied().find(|&st| s.step_layers.get(st).is_some_and(|&n| n > 0));
        let step = with_layers.or_else(|| phase.steps.first().copied());
        let Some(step) = step else { continue };
        let span = &s.steps.steps[step];
        let found =
            with_layers.and_then(|_| step_layers(&view, std::slice::from_ref(span), &mut budget).pop().flatten());
        match found {
            Some(found) => {
                any_layers = true;
                let n = found.layers.len();
                for (li, l) in found.layers.iter().enumerate() {
                    if spans.len() >= DAG_WINDOWS {
                        left_out += 1;
                        continue;
                    }
                    spans.push(Span {
                        label: format!("{phase_name}step {}, layer {} of {n}", step + 1, li + 1),
                        kernels: to_kernels(&span.kernels[l.start..l.end]),
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

/// The lines a group's box lists: its ops; a library kernel that fused several parts under one
/// op lists the parts; a group without ops says what launched it, or that nothing did.
pub fn box_lines(g: &KernelGroup) -> Vec<String> {
    let cut = |s: &str| units::ellipsize(s, BOX_LINE_CHARS);
    if g.ops.len() <= 1 && g.parts.len() >= 2 {
        return g.parts.iter().map(|p| cut(p)).collect();
    }
    if !g.ops.is_empty() {
        return g.ops.iter().map(|o| cut(&o.op)).collect();
    }
    vec![match &g.launched_by {
        Some(op) => cut(op),
        None => "no CPU op".to_string(),
    }]
}

/// The graph and layout of a window: boxes sized by their lines, layered by the data edges.
pub fn window_drawing(w: &DagWindow, fusion: &TraceFusion) -> (GroupGraph, Layout) {
    let n = w.boxes.len();
    let mut preds = vec![Vec::new(); n];
    let mut succs = vec![Vec::new(); n];
    let mut edges = Vec::with_capacity(w.edges.len());
    for e in w.edges.iter().filter(|e| e.from < n && e.to < n && e.from < e.to) {
        preds[e.to].push(e.from);
        succs[e.from].push(e.to);
        edges.push((e.from, e.to));
    }
    // Edges go from a launch to a later one, so there is no cycle.
    let layer = longest_path_layers(n, &edges).unwrap_or_else(|_| vec![0; n]);
    let gg = GroupGraph { preds, succs, layer };
    let sizes: Vec<usize> =
        w.boxes.iter().map(|b| fusion.groups.get(b.group).map_or(1, |g| box_lines(g).len())).collect();
    let layout = group_drawing(&gg, &sizes);
    (gg, layout)
}

/// How many lines a box of `lines` lines shows (the cap of the op-graph drawing).
pub fn shown_lines(lines: usize) -> BoxRows {
    BoxRows::for_ops(lines)
}

#[cfg(test)]
mod tests;

/// A window drawn as SVG text (as the page's charts are: text is far smaller in the page's
/// bundle than a component tree): one `g.dag-group` per box (`data-box` from 1, `data-group`,
/// `data-kernel`), its head, its lines, and a `path.dag-edge` per edge. `marked` groups get the
/// `marked` class, the `selected` box the `selected` class.
pub fn window_svg(
    w: &DagWindow,
    fusion: &TraceFusion,
    test_id: &str,
    marked: &[usize],
    selected: Option<usize>,
) -> String {
    use draw::chart::escape_xml;
    use draw::group_graph::metrics::{BOX_WIDTH, HEAD_HEIGHT, OP_ROW_HEIGHT};
    use std::fmt::Write;
    use units::{ellipsize, format_bytes};
    let (_, layout) = window_drawing(w, fusion);
    let mut s = format!(
        r#"<svg class="dag" data-testid="{test_id}" role="group" aria-label="Kernel groups of the window as a data-flow graph" width="{:.0}" height="{:.0}" viewBox="0 0 {:.1} {:.1}"><defs><marker id="trace-dag-arrow" viewBox="0 0 10 10" refX="9" refY="5" markerUnits="userSpaceOnUse" markerWidth="8" markerHeight="8" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" class="dag-arrow"/></marker></defs><g class="dag-edges">"#,
        layout.width, layout.height, layout.width, layout.height
    );
    for r in &layout.routes {
        let Some(e) = w.edges.iter().find(|e| e.from == r.from && e.to == r.to) else { continue };
        let mut d = format!("M{:.1},{:.1}", r.points[0].0, r.points[0].1);
        for p in r.points.windows(2) {
            let ((x0, y0), (x1, y1)) = (p[0], p[1]);
            let my = (y0 + y1) / 2.0;
            let _ = write!(d, " C{x0:.1},{my:.1} {x1:.1},{my:.1} {x1:.1},{y1:.1}");
        }
        let how = if e.exact { "execution trace" } else { "inferred from sizes" };
        let _ = write!(
            s,
            r#"<path class="dag-edge" d="{d}" marker-end="url(#trace-dag-arrow)" data-bytes="{}"><title>{} → {}: {} ({how})</title></path>"#,
            e.bytes,
            e.from + 1,
            e.to + 1,
            format_bytes(e.bytes)
        );
    }
    s += r#"</g><g class="dag-groups">"#;
    for (i, (p, b)) in layout.nodes.iter().zip(&w.boxes).enumerate() {
        let Some(g) = fusion.groups.get(b.group) else { continue };
        let lines = box_lines(g);
        let rows = shown_lines(lines.len());
        let class = format!(
            "dag-group {}{}{}",
            g.kind.id(),
            if selected == Some(i) { " selected" } else { "" },
            if marked.contains(&b.group) { " marked" } else { "" }
        );
        let fused = g.fused_bytes_per_call.map_or_else(|| "? B".to_string(), format_bytes);
        let _ = write!(
            s,
            r#"<g class="{class}" data-box="{}" data-group="{}" data-kernel="{}" transform="translate({:.1},{:.1})"><rect class="dag-box" width="{}" height="{}" rx="6"/><g class="dag-head" role="button" tabindex="0"><title>{} ({} this call; click for its bytes and tensors)</title><rect class="dag-head-bg" width="{}" height="{HEAD_HEIGHT}" rx="6"/><text class="dag-head-text" x="8" y="16">{} {}</text><text class="dag-head-bytes" x="{}" y="16" text-anchor="end">{fused}</text></g>"#,
            i + 1,
            b.group,
            escape_xml(&g.kernel),
            p.x,
            p.y,
            p.width,
            p.height,
            escape_xml(&g.kernel),
            units::format_duration_us(b.dur_us),
            p.width,
            i + 1,
            escape_xml(&ellipsize(&classify::name::short_name(&g.kernel, 40), head_chars(i + 1, &fused))),
            BOX_WIDTH - 8.0,
        );
        for (k, line) in lines.iter().take(rows.shown).enumerate() {
            let y = HEAD_HEIGHT + k as f64 * OP_ROW_HEIGHT + 13.0;
            let _ = write!(s, r#"<text class="op-name" x="8" y="{y}">{}</text>"#, escape_xml(&ellipsize(line, 28)));
        }
        if rows.more > 0 {
            let y = HEAD_HEIGHT + rows.shown as f64 * OP_ROW_HEIGHT + 13.0;
            let _ = write!(s, r#"<text class="dag-more" x="8" y="{y}">+ {} more (click the box)</text>"#, rows.more);
        }
        s += "</g>";
    }
    s += "</g></svg>";
    s
}

/// Characters of the kernel's name a box's head has room for beside its number and its bytes
/// (the head holds about 23 characters of the label font): a two-digit number or a wide byte
/// figure takes them from the name, so the two never overlap.
fn head_chars(number: usize, bytes: &str) -> usize {
    const HEAD: usize = 23;
    let taken = number.to_string().len() + 1 + bytes.chars().count() + 1;
    HEAD.saturating_sub(taken).max(4)
}

/// The details of box `i` of a window as HTML text: its group's kind, calls and time, bytes per
/// call and how they were known, parts, launching op, and each op's recorded input dims and
/// types.
pub fn box_details_html(w: &DagWindow, fusion: &TraceFusion, i: usize, suffix: &str) -> Option<String> {
    use draw::chart::escape_xml;
    use std::fmt::Write;
    use units::{format_bytes, format_duration_us};
    let b = w.boxes.get(i)?;
    let g = fusion.groups.get(b.group)?;
    let known = |x: Option<u64>| x.map_or_else(|| "unknown".to_string(), format_bytes);
    let saved = g.unfused_bytes_per_call.zip(g.fused_bytes_per_call).map(|(u, f)| u.saturating_sub(f));
    let mut s = format!(
        r#"<section class="op-details" aria-live="polite" data-testid="dag-box-details{suffix}"><h3>Kernel {} of the window: {}</h3><p>{} ({}); {} in the trace, {} in all, this call {}.</p><p data-testid="dag-box-bytes{suffix}">Per call: fused {}, unfused {}, fusion saved {}. Known from: {}{}.</p>"#,
        i + 1,
        escape_xml(&classify::name::short_name(&g.kernel, 80)),
        g.kind.id(),
        g.category,
        units::plural(g.calls, "call", "calls"),
        format_duration_us(g.time_us),
        format_duration_us(b.dur_us),
        known(g.fused_bytes_per_call),
        known(g.unfused_bytes_per_call),
        known(saved),
        g.how.text(),
        g.unknown.as_ref().map(|u| format!(" ({}: {})", u.cause.text(), escape_xml(&u.why))).unwrap_or_default()
    );
    if g.parts.len() >= 2 {
        let _ = write!(s, "<p>Parts it fused: {}.</p>", escape_xml(&g.parts.join(" + ")));
    }
    if let Some(op) = &g.launched_by {
        let _ = write!(s, "<p>Launched by {}.</p>", escape_xml(op));
    }
    if !g.ops.is_empty() {
        s += r#"<div class="table-wrap"><table class="tensors"><caption>Ops and their input tensors (dims, types) as the trace recorded them</caption><thead><tr><th scope="col">op</th><th scope="col">input dims</th><th scope="col">input types</th></tr></thead><tbody>"#;
        let text = |v: &serde_json::Value| if v.is_null() { "not recorded".to_string() } else { v.to_string() };
        for o in &g.ops {
            let _ = write!(
                s,
                "<tr><td><code>{}</code></td><td><code>{}</code></td><td><code>{}</code></td></tr>",
                escape_xml(&o.op),
                escape_xml(&text(&o.input_dims)),
                escape_xml(&text(&o.input_types))
            );
        }
        s += "</tbody></table></div>";
    }
    s += "</section>";
    Some(s)
}
