//! The limits of [`limits`] ("share links") that a link's state is held to — the same
//! when a link is made (the page says what is too large before making it) and when one is
//! opened (a link can be written by hand: what its own page would have refused is refused).
//!
//! The whole state is already bounded by [`SHARE_STATE_BYTES`] when it is inflated; these
//! bound each part that the page turns into work (an op trace to parse, a graph to lay out) or
//! shows (names), and keep trace views within the kernel lists trimming leaves.

use super::state::{state_json, ShareError, SharedState, SharedView};
use super::trim::SHARED_COLLECTIVE_ROWS;
use super::trim::{
    SHARED_FUSION_GROUPS, SHARED_GAP_ROWS, SHARED_GROUP_OPS, SHARED_KERNELS_PER_CATEGORY, SHARED_KERNELS_PER_ROW,
    SHARED_OPPORTUNITIES, SHARED_OPPORTUNITY_KERNELS, SHARED_OP_ROWS, SHARED_PATH_NAMES, SHARED_STEPS, SHARED_STREAMS,
    SHARED_STRUCTURE_EDGES, SHARED_STRUCTURE_STEPS, SHARED_UNATTRIBUTED_NAMES,
};
use analysis::findings::{Overview, MAX_FINDINGS};
use analysis::pipeline::TraceTime;
use analysis::structure::Structure;
use analysis::summary::{PlatformEntry, SideStats};
use analysis::time::gap::Gap;
use analysis::time::launch_cost::SMALL_KERNEL_NAMES;
use analysis::trace_fusion::TraceFusion;
use limits::LAYER_MAX_KERNELS;
use limits::RANKS_FILES;
use limits::{
    SHARED_GRAPH_OPS, SHARED_MODEL_CONFIG_BYTES, SHARED_NAME_CHARS, SHARED_NOTES, SHARED_OPTRACE_BYTES,
    SHARED_SIM_TABLE_BYTES, SHARE_STATE_BYTES,
};
use units::ellipsize;
use workload::ModelChoice;

fn over(what: String, size: usize, max: usize, unit: &'static str) -> ShareError {
    ShareError::OverLimit { what, size, max, unit }
}

/// `size` of `unit` within `max`.
fn at_most(what: impl FnOnce() -> String, size: usize, max: usize, unit: &'static str) -> Result<(), ShareError> {
    if size > max {
        Err(over(what(), size, max, unit))
    } else {
        Ok(())
    }
}

/// A name (file, op, tensor, kernel…) within [`SHARED_NAME_CHARS`]; the error quotes its start.
fn name(kind: &str, text: &str) -> Result<(), ShareError> {
    // Bytes bound characters from above: count characters only when the bytes are over.
    if text.len() <= SHARED_NAME_CHARS {
        return Ok(());
    }
    let chars = text.chars().count();
    at_most(|| format!("{kind} \"{}\"", ellipsize(text, 40)), chars, SHARED_NAME_CHARS, "characters")
}

fn text(what: &str, text: &str, max: usize) -> Result<(), ShareError> {
    at_most(|| format!("{what} text"), text.len(), max, "bytes")
}

fn kernels(where_: impl FnOnce() -> String, s: &SideStats, max: usize) -> Result<(), ShareError> {
    at_most(|| format!("kernel list of {}", where_()), s.kernels.len(), max, "kernels")?;
    s.kernels.iter().try_for_each(|k| name("kernel name", &k.name))
}

fn platforms(list: &[PlatformEntry]) -> Result<(), ShareError> {
    for p in list {
        name("platform", &p.key)?;
        if let Some(file) = &p.file {
            name("file name", file)?;
        }
        p.devices.iter().try_for_each(|d| name("device name", d))?;
    }
    Ok(())
}

/// A shared time report within the rows trimming leaves, its names within the name limit.
/// A carried overview: at most [`MAX_FINDINGS`] findings and two sides, each text a name's
/// length at most (a finding quotes op shapes and two kernel names, each shortened).
fn overview_limits(o: &Overview) -> Result<(), ShareError> {
    at_most(|| "overview".into(), o.findings.len(), MAX_FINDINGS, "findings")?;
    at_most(|| "verdict".into(), o.verdict.sides.len(), 2, "sides")?;
    name("verdict", &o.verdict.text)?;
    o.verdict.sides.iter().try_for_each(|s| name("side", &s.key).and_then(|_| name("side name", &s.name)))?;
    o.findings.iter().try_for_each(|f| name("finding", &f.text))
}

fn time_limits(t: &TraceTime) -> Result<(), ShareError> {
    at_most(|| "op table".into(), t.ops.len(), SHARED_OP_ROWS, "rows")?;
    at_most(|| "step list".into(), t.steps.len(), SHARED_STEPS, "steps")?;
    at_most(|| "device list".into(), t.other_devices.len(), SHARED_STEPS, "devices")?;
    at_most(|| "unattributed kernel list".into(), t.unattributed.kernels.len(), SHARED_UNATTRIBUTED_NAMES, "kernels")?;
    t.unattributed.kernels.iter().try_for_each(|k| name("kernel name", &k.name))?;
    if let Some(c) = &t.chip {
        name("chip name", &c.name)?;
        name("chip origin", &c.detected_from)?;
        name("chip source", &c.source)?;
        // One entry per unit and type at most.
        at_most(|| "chip peak list".into(), c.peaks_tflops.len(), 12, "peaks")?;
        c.peaks_tflops.keys().try_for_each(|k| name("chip peak", k))?;
    }
    if let Some(n) = &t.chip_note {
        name("chip note", n)?;
    }
    if let Some(f) = &t.fusion {
        fusion_limits(f)?;
    }
    at_most(|| "stream device list".into(), t.streams.len(), SHARED_STEPS, "devices")?;
    for d in &t.streams {
        name("device name", &d.device)?;
        at_most(|| "stream list".into(), d.streams.len(), SHARED_STREAMS, "streams")?;
    }
    for w in t.timeline.iter().chain(&t.steps).chain(&t.other_devices) {
        name("window", &w.window)?;
        name("device name", &w.device)?;
    }
    if let Some(w) = &t.waits {
        at_most(|| "idle split's step list".into(), w.steps.len(), SHARED_STEPS, "steps")?;
        at_most(|| "idle split's stream list".into(), w.streams.len(), SHARED_STREAMS, "streams")?;
        w.steps.iter().try_for_each(|s| name("window", &s.window))?;
    }
    if let Some(l) = &t.launch_cost {
        at_most(|| "launch cost's step list".into(), l.steps.len(), SHARED_STEPS, "steps")?;
        for c in std::iter::once(&l.whole).chain(l.steps.iter().map(|s| &s.cost)) {
            at_most(|| "small kernel list".into(), c.small.names.len(), SMALL_KERNEL_NAMES, "names")?;
            c.small.names.iter().try_for_each(|(n, _)| name("kernel name", n))?;
        }
        l.steps.iter().try_for_each(|s| name("window", &s.window))?;
    }
    at_most(|| "critical path list".into(), t.critical_path.len(), SHARED_STEPS, "steps")?;
    for p in &t.critical_path {
        name("window", &p.window)?;
        at_most(|| "critical path's names".into(), p.top.len(), SHARED_PATH_NAMES, "names")?;
        p.top.iter().try_for_each(|i| name("path name", &i.name))?;
        at_most(|| "critical path's drawn events".into(), p.drawn.len(), 0, "events")?;
    }
    for o in &t.ops {
        op_row_names(&o.op, &o.input_dims)?;
        name("input types", &o.input_types.to_string())?;
        for text in [&o.model, &o.no_model, &o.peak].into_iter().flatten() {
            name("op model", text)?;
        }
    }
    Ok(())
}

/// A shared fusion analysis within what trimming leaves, its names within the name limit.
fn fusion_limits(f: &TraceFusion) -> Result<(), ShareError> {
    at_most(|| "kernel group list".into(), f.groups.len(), SHARED_FUSION_GROUPS, "groups")?;
    at_most(|| "opportunity list".into(), f.opportunities.len(), SHARED_OPPORTUNITIES, "opportunities")?;
    name("rule set", &f.rule_set)?;
    at_most(|| "op time list".into(), f.op_times.len(), SHARED_OPPORTUNITIES, "ops")?;
    for o in &f.op_times {
        op_row_names(&o.op, &o.input_dims)?;
    }
    for g in &f.groups {
        name("kernel name", &g.kernel)?;
        at_most(|| "group op list".into(), g.ops.len(), SHARED_GROUP_OPS, "ops")?;
        at_most(|| "group part list".into(), g.parts.len(), SHARED_GROUP_OPS, "parts")?;
        g.parts.iter().try_for_each(|p| name("op name", p))?;
        for text in g.launched_by.iter().map(String::as_str).chain(g.why_unknown()) {
            name("op name", text)?;
        }
        for op in &g.ops {
            op_row_names(&op.op, &op.input_dims)?;
            name("input types", &op.input_types.to_string())?;
        }
    }
    for o in &f.opportunities {
        name("rule", &o.rule)?;
        for list in [&o.kernels, &o.ops] {
            at_most(|| "opportunity kernel list".into(), list.len(), SHARED_OPPORTUNITY_KERNELS, "kernels")?;
            list.iter().try_for_each(|k| name("kernel name", k))?;
        }
        at_most(|| "opportunity kind list".into(), o.kinds.len(), SHARED_OPPORTUNITY_KERNELS, "kinds")?;
    }
    if let Some(r) = &f.reprediction {
        at_most(|| "re-prediction miss list".into(), r.misses.len(), SHARED_OPPORTUNITY_KERNELS, "kernels")?;
        for m in &r.misses {
            name("kernel name", &m.kernel)?;
            name("reason", &m.reason)?;
        }
    }
    Ok(())
}

fn op_row_names(op: &str, dims: &serde_json::Value) -> Result<(), ShareError> {
    name("op name", op)?;
    name("input dims", &dims.to_string())
}

/// Phases a shared structure (or phase pairs a shared alignment) may list.
const SHARED_PHASES: usize = 16;

/// A shared structure within what trimming leaves: steps, phases, kernels per layer.
fn structure_limits(st: &Structure) -> Result<(), ShareError> {
    at_most(|| "step list".into(), st.steps.len(), SHARED_STRUCTURE_STEPS, "steps")?;
    at_most(|| "phase list".into(), st.phases.len(), SHARED_PHASES, "phases")?;
    at_most(|| "structure notes".into(), st.notes.len(), SHARED_STRUCTURE_EDGES, "notes")?;
    st.notes.iter().try_for_each(|n| name("note", n))?;
    for s in &st.steps {
        s.annotation.iter().try_for_each(|a| name("step annotation", a))?;
    }
    for p in &st.phases {
        name("phase label", &p.label)?;
        name("phase label origin", &p.label_from)?;
        at_most(|| format!("layer of {}", ellipsize(&p.label, 40)), p.layer.len(), LAYER_MAX_KERNELS, "kernels")?;
        for edge in [&p.before_layers, &p.after_layers] {
            at_most(|| "kernels beside the layers".into(), edge.len(), SHARED_STRUCTURE_EDGES, "kernels")?;
        }
        at_most(|| "layer variants".into(), p.variants.len(), SHARED_STRUCTURE_EDGES, "variants")?;
        for k in p.layer.iter().chain(&p.before_layers).chain(&p.after_layers) {
            name("kernel name", &k.kernel)?;
        }
        for v in &p.variants {
            at_most(|| "variant differences".into(), v.differences.len(), SHARED_STRUCTURE_EDGES, "differences")?;
            v.differences.iter().try_for_each(|d| name("layer difference", d))?;
        }
    }
    Ok(())
}

/// A shared gap within the rows trimming leaves, two sides, names within the limit.
fn gap_limits(g: &Gap) -> Result<(), ShareError> {
    at_most(|| "gap table".into(), g.rows.len(), SHARED_GAP_ROWS, "rows")?;
    for r in &g.rows {
        op_row_names(&r.op, &r.input_dims)?;
        at_most(|| format!("sides of {}", ellipsize(&r.op, 40)), r.sides.len(), 2, "sides")?;
        r.sides.keys().try_for_each(|k| name("side", k))?;
    }
    at_most(|| "unattributed sides".into(), g.unattributed_us.len(), 2, "sides")?;
    at_most(|| "headline sides".into(), g.headline.gpu_time_us.len(), 2, "sides")?;
    g.unattributed_us
        .keys()
        .chain(g.headline.gpu_time_us.keys())
        .chain(&g.headline.faster)
        .try_for_each(|k| name("side", k))
}

/// Every per-view limit of a link's state; the error names what is over and by how much.
pub fn check_limits(state: &SharedState) -> Result<(), ShareError> {
    if let Some(op) = &state.selected_op {
        name("selected op", op)?;
    }
    if let Some(tab) = &state.tab {
        at_most(|| "view name".into(), tab.chars().count(), 32, "characters")?;
    }
    if let Some(hardware::ChipChoice::Preset(key)) = &state.chip {
        name("chip preset", key)?;
    }
    // A custom chip was validated as it was read (`Chip`'s deserialisation checks every field).
    match &state.view {
        SharedView::Transformer { .. } => Ok(()),
        SharedView::Graph { file_name, graph } => {
            name("file name", file_name)?;
            at_most(|| "graph".into(), graph.ops.len(), SHARED_GRAPH_OPS, "ops")?;
            for op in &graph.ops {
                name("op name", &op.name)?;
                name("op type", &op.op_type)?;
                name("tensor name", &op.output)?;
                op.inputs.iter().try_for_each(|t| name("tensor name", t))?;
            }
            graph.tensors.keys().try_for_each(|t| name("tensor name", t))
        }
        SharedView::TraceSummary { file_name, summary, time, overview, .. } => {
            name("file name", file_name)?;
            overview.as_deref().map_or(Ok(()), overview_limits)?;
            time.as_deref().map_or(Ok(()), time_limits)?;
            platforms(&summary.platforms)?;
            for r in &summary.categories {
                kernels(|| format!("category {}", r.category.id()), &r.trace, SHARED_KERNELS_PER_CATEGORY)?;
            }
            summary.fused_kernels.iter().try_for_each(|k| name("kernel name", &k.name))?;
            summary.structure.as_deref().map_or(Ok(()), structure_limits)
        }
        SharedView::TraceComparison { files, comparison, gap, fusion, overview, .. } => {
            overview.as_deref().map_or(Ok(()), overview_limits)?;
            for f in fusion.iter().flat_map(|f| f.iter()) {
                fusion_limits(f)?;
            }
            name("file name", &files.0)?;
            gap.as_deref().map_or(Ok(()), gap_limits)?;
            name("file name", &files.1)?;
            platforms(&comparison.platforms)?;
            for r in &comparison.categories {
                for s in r.sides.values() {
                    kernels(|| format!("category {}", r.category.id()), s, SHARED_KERNELS_PER_CATEGORY)?;
                }
            }
            for r in &comparison.op_mapping {
                name("op name", &r.op)?;
                for s in r.sides.values() {
                    if let Some(op) = &s.op {
                        name("op name", op)?;
                    }
                    kernels(|| format!("op {}", ellipsize(&r.op, 40)), &s.stats, SHARED_KERNELS_PER_ROW)?;
                }
            }
            for d in &comparison.fusion_differences {
                name("kernel name", &d.fused_kernel)?;
                d.unfused_kernels.iter().try_for_each(|k| name("kernel name", k))?;
                name("fusion evidence", &d.evidence)?;
            }
            at_most(|| "layer alignment".into(), comparison.layer_alignment.len(), SHARED_PHASES, "phase pairs")?;
            for a in &comparison.layer_alignment {
                at_most(|| "aligned layer".into(), a.rows.len(), 2 * LAYER_MAX_KERNELS, "rows")?;
                at_most(|| "aligned layer sides".into(), a.labels.len(), 2, "sides")?;
                a.labels.iter().try_for_each(|(k, v)| name("side", k).and_then(|_| name("phase label", v)))?;
                for r in &a.rows {
                    at_most(|| "aligned layer sides".into(), r.sides.len(), 2, "sides")?;
                    for s in r.sides.values().flatten() {
                        at_most(|| "aligned row".into(), s.kernels.len(), LAYER_MAX_KERNELS, "kernels")?;
                        s.kernels.iter().try_for_each(|k| name("kernel name", k))?;
                    }
                    r.difference.iter().try_for_each(|d| name("layer difference", d))?;
                }
            }
            Ok(())
        }
        SharedView::Model { spec } => match &spec.model {
            ModelChoice::Preset(key) => name("model preset", key),
            ModelChoice::File { file_name, text: config } => {
                name("file name", file_name)?;
                text("model config", config, SHARED_MODEL_CONFIG_BYTES)
            }
        },
        SharedView::OpTrace { file_name, text: trace } => {
            name("file name", file_name)?;
            text("op trace", trace, SHARED_OPTRACE_BYTES)
        }
        SharedView::SimTable { file_name, text: table, setup, notes } => {
            name("file name", file_name)?;
            text("simulator table", table, SHARED_SIM_TABLE_BYTES)?;
            name("model preset", &setup.model)?;
            name("chip preset", &setup.chip)?;
            at_most(|| "simulator notes".into(), notes.len(), SHARED_NOTES, "notes")?;
            notes.iter().try_for_each(|n| name("note", n))
        }
        SharedView::Ranks { drawn } => ranks_limits(drawn),
    }
}

/// Tables a shared Ranks view may hold (ranks, collectives, unmatched, stragglers), and their
/// columns at most.
const SHARED_RANKS_TABLES: usize = 4;
const SHARED_RANKS_COLUMNS: usize = 16;

/// A shared Ranks view: no report text, ranks within [`RANKS_FILES`], the tables within what
/// trimming leaves (the ranks and stragglers tables have a row per rank at most), every row as
/// wide as its columns, every text within the name limit.
fn ranks_limits(d: &view::ranks::RanksDrawn) -> Result<(), ShareError> {
    text("job report", &d.report_json, 0)?;
    name("headline", &d.headline)?;
    at_most(|| "rank list".into(), d.ranks.len(), RANKS_FILES, "ranks")?;
    d.ranks.iter().try_for_each(|(_, file)| name("file name", file))?;
    at_most(|| "strip list".into(), d.strips.len(), RANKS_FILES, "ranks")?;
    d.strips.iter().try_for_each(|s| name("device name", &s.device))?;
    at_most(|| "ranks notes".into(), d.notes.len(), SHARED_NOTES, "notes")?;
    d.notes.iter().try_for_each(|n| name("note", n))?;
    at_most(|| "table list".into(), d.tables.len(), SHARED_RANKS_TABLES, "tables")?;
    for t in &d.tables {
        name("table id", &t.id)?;
        name("table title", &t.title)?;
        at_most(|| format!("{} table", ellipsize(&t.id, 40)), t.columns.len(), SHARED_RANKS_COLUMNS, "columns")?;
        t.columns.iter().try_for_each(|(h, _)| name("column", h))?;
        let max_rows = RANKS_FILES.max(SHARED_COLLECTIVE_ROWS);
        at_most(|| format!("{} table", ellipsize(&t.id, 40)), t.rows.len(), max_rows, "rows")?;
        for row in &t.rows {
            if row.len() != t.columns.len() {
                return Err(over(
                    format!("a row of the {} table", ellipsize(&t.id, 40)),
                    row.len(),
                    t.columns.len(),
                    "cells",
                ));
            }
            row.iter()
                .try_for_each(|(shown, exact, _)| name("table cell", shown).and_then(|_| name("table cell", exact)))?;
        }
    }
    Ok(())
}

/// [`check_limits`], and the state's JSON within [`SHARE_STATE_BYTES`]: what a page checks
/// before it makes a link, so that it never makes one that would not open.
pub fn check_shareable(state: &SharedState) -> Result<(), ShareError> {
    check_limits(state)?;
    let bytes = state_json(state).len();
    if bytes > SHARE_STATE_BYTES {
        return Err(ShareError::TooLarge);
    }
    Ok(())
}
