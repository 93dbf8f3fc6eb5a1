//! Trace views cut down for a link: a summary or comparison keeps each category's longest
//! kernels and each mapping row's main kernel, with kernel names as short as the page's tables
//! show them, so that every shared trace and pair stays well under the 8 KB a typical link
//! must stay under. Totals, counts and fusion differences stay whole.

use analysis::summary::SideStats;
use classify::family::table_name;
use view::NAME_WIDTH;

use analysis::pipeline::TraceTime;
use analysis::structure::Structure;
use analysis::time::gap::Gap;
use analysis::trace_fusion::TraceFusion;
use analysis::{Comparison, TraceSummary};

/// Distinct kernel names a shared trace view keeps per category (the summary's kernel
/// table lists these); the rest are dropped to keep links near a few KiB.
pub const SHARED_KERNELS_PER_CATEGORY: usize = 8;
/// Kernel names a shared comparison keeps per mapping row and side (the main kernel).
pub const SHARED_KERNELS_PER_ROW: usize = 1;

/// Keeps the `keep` longest kernels of a side; true if any were dropped.
fn trim_kernels(s: &mut SideStats, keep: usize) -> bool {
    let cut = s.kernels.len() > keep;
    s.kernels.truncate(keep);
    cut
}

/// Steps a shared structure keeps (the strip of the first ones; phases keep their counts).
pub const SHARED_STRUCTURE_STEPS: usize = 64;
/// Kernels a shared phase keeps before and after its layers, near-repeat variants it keeps,
/// and notes a shared structure keeps.
pub const SHARED_STRUCTURE_EDGES: usize = 4;

/// A structure for a link: the first [`SHARED_STRUCTURE_STEPS`] steps, each phase's layer whole
/// with kernel names as the tables show them, [`SHARED_STRUCTURE_EDGES`] kernels before and
/// after the layers, variants and notes. True if anything was dropped.
pub fn trim_structure(st: &mut Structure) -> bool {
    let mut cut = st.steps.len() > SHARED_STRUCTURE_STEPS || st.notes.len() > SHARED_STRUCTURE_EDGES;
    st.steps.truncate(SHARED_STRUCTURE_STEPS);
    st.notes.truncate(SHARED_STRUCTURE_EDGES);
    for p in &mut st.phases {
        cut |= p.before_layers.len() > SHARED_STRUCTURE_EDGES
            || p.after_layers.len() > SHARED_STRUCTURE_EDGES
            || p.variants.len() > SHARED_STRUCTURE_EDGES;
        p.before_layers.truncate(SHARED_STRUCTURE_EDGES);
        p.after_layers.truncate(SHARED_STRUCTURE_EDGES);
        p.variants.truncate(SHARED_STRUCTURE_EDGES);
        for k in p.layer.iter_mut().chain(&mut p.before_layers).chain(&mut p.after_layers) {
            cut |= shorten(&mut k.kernel);
        }
        for v in &mut p.variants {
            v.differences.truncate(SHARED_STRUCTURE_EDGES);
            for d in &mut v.differences {
                cut |= shorten(d);
            }
        }
    }
    cut
}

/// A summary for a link: each category keeps its [`SHARED_KERNELS_PER_CATEGORY`] longest
/// kernels (totals, counts and fused kernels stay whole) and the structure is trimmed
/// ([`trim_structure`]; a link too long for it leaves it out, `fit_time_rows`). Returns it and
/// whether anything was dropped.
pub fn trim_summary(summary: &TraceSummary) -> (TraceSummary, bool) {
    let mut s = summary.clone();
    let mut trimmed = s.structure.as_deref_mut().is_some_and(trim_structure);
    for r in &mut s.categories {
        trimmed |= trim_kernels(&mut r.trace, SHARED_KERNELS_PER_CATEGORY);
    }
    (s, trimmed)
}

/// Kernel names a shared comparison carries are what the page's tables show
/// ([`view::NAME_WIDTH`] characters by [`table_name`]: a library kernel read out, any
/// other shortened, so the link's tables read as the page's did): full names of templated
/// kernels run to hundreds of characters, enough to push a comparison's link (the A100-vs-B200
/// pair's, for one) well past the 8 KB a typical link must stay under.
fn shorten(name: &mut String) -> bool {
    let short = table_name(name, NAME_WIDTH);
    let cut = short != *name;
    *name = short;
    cut
}

/// `text` cut to `width` characters with an ellipsis; true if it was longer.
fn shorten_to(text: &mut String, width: usize) -> bool {
    let cut = text.chars().count() > width;
    if cut {
        *text = units::ellipsize(text, width);
    }
    cut
}

fn shorten_names(s: &mut SideStats) -> bool {
    s.kernels.iter_mut().fold(false, |cut, k| shorten(&mut k.name) | cut)
}

/// A comparison for a link: categories keep [`SHARED_KERNELS_PER_CATEGORY`] kernels per
/// side and mapping rows their main kernel; totals and fusion differences stay whole; the layer
/// alignment is left out; kernel names are shortened as the tables show them. Returns it and
/// whether anything was dropped.
pub fn trim_comparison(comparison: &Comparison) -> (Comparison, bool) {
    let (mut c, mut trimmed) = trim_comparison_lists(comparison);
    for r in &mut c.categories {
        for side in r.sides.values_mut() {
            trimmed |= shorten_names(side);
        }
    }
    for r in &mut c.op_mapping {
        for side in r.sides.values_mut() {
            trimmed |= shorten_names(&mut side.stats);
        }
    }
    for r in c.layer_alignment.iter_mut().flat_map(|a| &mut a.rows) {
        for n in r.sides.values_mut().flatten().flat_map(|s| &mut s.kernels) {
            trimmed |= shorten(n);
        }
    }
    for d in &mut c.fusion_differences {
        trimmed |= shorten(&mut d.fused_kernel);
        for n in &mut d.unfused_kernels {
            trimmed |= shorten(n);
        }
    }
    (c, trimmed)
}

/// The kernel lists of [`trim_comparison`] cut, names left whole.
pub(super) fn trim_comparison_lists(comparison: &Comparison) -> (Comparison, bool) {
    let mut c = comparison.clone();
    let mut trimmed = false;
    for r in &mut c.categories {
        for side in r.sides.values_mut() {
            trimmed |= trim_kernels(side, SHARED_KERNELS_PER_CATEGORY);
        }
    }
    for r in &mut c.op_mapping {
        for side in r.sides.values_mut() {
            trimmed |= trim_kernels(&mut side.stats, SHARED_KERNELS_PER_ROW);
        }
    }
    (c, trimmed)
}

/// Op rows a shared trace or comparison keeps (the longest, or the largest differences): the
/// rows a design review asks about; the file has them all.
pub const SHARED_OP_ROWS: usize = 12;
/// Gap rows a shared comparison keeps (the largest differences): a comparison link carries
/// two sides' categories and mapping already.
pub const SHARED_GAP_ROWS: usize = 8;
/// Step windows a shared trace keeps (the first ones; the whole-trace window always).
pub const SHARED_STEPS: usize = 8;
/// Unattributed kernel names a shared trace keeps.
pub const SHARED_UNATTRIBUTED_NAMES: usize = 3;

/// A trace's time report for a link: its [`SHARED_OP_ROWS`] longest op rows, the first
/// [`SHARED_STEPS`] steps, the longest unattributed names (shortened); coverage and timeline
/// whole. True if anything was dropped.
pub fn trim_time(time: &TraceTime) -> (TraceTime, bool) {
    let mut t = time.clone();
    let cut = t.ops.len() > SHARED_OP_ROWS
        || t.steps.len() > SHARED_STEPS
        || t.unattributed.kernels.len() > SHARED_UNATTRIBUTED_NAMES;
    t.ops.truncate(SHARED_OP_ROWS);
    t.steps.truncate(SHARED_STEPS);
    t.other_devices.truncate(SHARED_STEPS);
    // Streams: the busiest few of the first devices (a link is a summary, the file has them all).
    let streams_cut = t.streams.len() > SHARED_STEPS || t.streams.iter().any(|d| d.streams.len() > SHARED_STREAMS);
    t.streams.truncate(SHARED_STEPS);
    t.streams.iter_mut().for_each(|d| d.streams.truncate(SHARED_STREAMS));
    t.unattributed.kernels.truncate(SHARED_UNATTRIBUTED_NAMES);
    let names = t.unattributed.kernels.iter_mut().fold(false, |cut, k| shorten(&mut k.name) | cut);
    let fusion = t.fusion.as_mut().is_some_and(trim_fusion);
    // The drawing's boxes index the groups trimming just cut: a link carries no drawing.
    let dag = t.fusion_dag.take().is_some();
    let waits = trim_waits_and_paths(&mut t);
    (t, cut | names | fusion | streams_cut | dag | waits)
}

/// Why the GPU waits, for a link: the first [`SHARED_STEPS`] steps of the idle split, the
/// launch cost and the critical path, the busiest [`SHARED_STREAMS`] streams, and the paths'
/// [`SHARED_PATH_NAMES`] longest names (shortened). True if anything was dropped.
fn trim_waits_and_paths(t: &mut TraceTime) -> bool {
    let mut cut = false;
    if let Some(w) = &mut t.waits {
        cut |= w.steps.len() > SHARED_STEPS || w.streams.len() > SHARED_STREAMS;
        w.steps.truncate(SHARED_STEPS);
        w.streams.sort_by(|a, b| b.times().total_us().total_cmp(&a.times().total_us()));
        w.streams.truncate(SHARED_STREAMS);
    }
    if let Some(l) = &mut t.launch_cost {
        cut |= l.steps.len() > SHARED_STEPS;
        l.steps.truncate(SHARED_STEPS);
        for c in std::iter::once(&mut l.whole).chain(l.steps.iter_mut().map(|s| &mut s.cost)) {
            cut |= c.small.names.iter_mut().fold(false, |cut, (n, _)| shorten(n) | cut);
        }
    }
    cut |= t.critical_path.len() > SHARED_STEPS;
    t.critical_path.truncate(SHARED_STEPS);
    for p in &mut t.critical_path {
        // The drawn events stay with the page that computed them: a link carries the figures.
        p.drawn.clear();
        cut |= p.top.len() > SHARED_PATH_NAMES;
        p.top.truncate(SHARED_PATH_NAMES);
        cut |= p.top.iter_mut().fold(false, |cut, i| shorten(&mut i.name) | cut);
    }
    cut
}

/// Names a shared critical path keeps (its longest).
pub const SHARED_PATH_NAMES: usize = 3;

/// Streams a shared trace keeps per device (the busiest).
pub const SHARED_STREAMS: usize = 4;

/// Kernel groups a shared trace keeps (the longest; the totals are of all).
pub const SHARED_FUSION_GROUPS: usize = 8;
/// Ops listed per shared kernel group.
pub const SHARED_GROUP_OPS: usize = 3;
/// Opportunities a shared trace keeps (those saving the most).
pub const SHARED_OPPORTUNITIES: usize = 5;
/// Kernels and ops listed per shared opportunity, and missed kernels per re-prediction.
pub const SHARED_OPPORTUNITY_KERNELS: usize = 4;

/// Characters of a shared pair's reason why a group's bytes are unknown.
pub const SHARED_REASON_CHARS: usize = 48;
/// Characters of a kernel name in a shared pair's fusion groups.
pub const SHARED_PAIR_NAME_CHARS: usize = 40;
/// Ops and parts listed per group of a shared pair's side.
pub const SHARED_PAIR_GROUP_OPS: usize = 2;

/// Both sides' fusion of a comparison for its link, each trimmed by [`trim_fusion`], without
/// what a comparison does not show (the ops' recorded shapes, the op times both ways, the
/// re-prediction's misses): two sides must fit where one trace's link fits. True if anything
/// was dropped.
pub fn fusion_pair(sides: [&TraceFusion; 2]) -> ([TraceFusion; 2], bool) {
    let [mut a, mut b] = sides.map(TraceFusion::clone);
    let mut cut = trim_fusion(&mut a) | trim_fusion(&mut b);
    for f in [&mut a, &mut b] {
        cut |= !f.op_times.is_empty();
        f.op_times.clear();
        if let Some(r) = &mut f.reprediction {
            cut |= !r.misses.is_empty();
            r.misses.clear();
        }
        // The definition is a constant ([`analysis::trace_fusion::GPU_TIME_DEFINITION`]), put back
        // when the link opens.
        f.totals.gpu_time_definition.clear();
        for g in &mut f.groups {
            // The tables show the ops, not the launching op; names as a narrow column shows them.
            g.launched_by = None;
            cut |= shorten_to(&mut g.kernel, SHARED_PAIR_NAME_CHARS);
            cut |= g.ops.len() > SHARED_PAIR_GROUP_OPS || g.parts.len() > SHARED_PAIR_GROUP_OPS;
            g.ops.truncate(SHARED_PAIR_GROUP_OPS);
            g.parts.truncate(SHARED_PAIR_GROUP_OPS);
            if let Some(u) = &mut g.unknown {
                cut |= shorten_to(&mut u.why, SHARED_REASON_CHARS);
            }
        }
        for op in f.groups.iter_mut().flat_map(|g| g.ops.iter_mut()) {
            op.input_dims = serde_json::Value::Null;
            op.input_types = serde_json::Value::Null;
        }
        for o in &mut f.opportunities {
            o.per_step = None;
        }
    }
    ([a, b], cut)
}

/// A fusion analysis for a link: its longest groups with their first ops, the opportunities
/// that save most, names shortened; the totals and the re-prediction's figures whole. True if
/// anything was dropped.
pub fn trim_fusion(f: &mut TraceFusion) -> bool {
    let mut cut = f.groups.len() > SHARED_FUSION_GROUPS
        || f.opportunities.len() > SHARED_OPPORTUNITIES
        || f.op_times.len() > SHARED_OPPORTUNITIES;
    // Op times both ways: the ops of the longest subtree time (the list is in that order).
    f.op_times.truncate(SHARED_OPPORTUNITIES);
    for o in &mut f.op_times {
        cut |= shorten(&mut o.op);
    }
    f.groups.truncate(SHARED_FUSION_GROUPS);
    f.opportunities.truncate(SHARED_OPPORTUNITIES);
    for g in &mut f.groups {
        cut |= g.ops.len() > SHARED_GROUP_OPS || g.parts.len() > SHARED_GROUP_OPS;
        g.ops.truncate(SHARED_GROUP_OPS);
        g.parts.truncate(SHARED_GROUP_OPS);
        cut |= shorten(&mut g.kernel);
        if let Some(op) = &mut g.launched_by {
            cut |= shorten(op);
        }
        for op in &mut g.ops {
            cut |= shorten(&mut op.op);
        }
    }
    for o in &mut f.opportunities {
        cut |= o.kernels.len() > SHARED_OPPORTUNITY_KERNELS;
        o.kernels.truncate(SHARED_OPPORTUNITY_KERNELS);
        o.ops.truncate(SHARED_OPPORTUNITY_KERNELS);
        o.kinds.truncate(SHARED_OPPORTUNITY_KERNELS);
        for name in o.kernels.iter_mut().chain(o.ops.iter_mut()) {
            cut |= shorten(name);
        }
    }
    if let Some(r) = &mut f.reprediction {
        cut |= r.misses.len() > SHARED_OPPORTUNITY_KERNELS;
        r.misses.truncate(SHARED_OPPORTUNITY_KERNELS);
        for m in &mut r.misses {
            cut |= shorten(&mut m.kernel);
        }
    }
    cut
}

/// A gap for a link: its [`SHARED_GAP_ROWS`] largest differences; unattributed time and the
/// headline whole. True if rows were dropped.
pub fn trim_gap(gap: &Gap) -> (Gap, bool) {
    let mut g = gap.clone();
    let cut = g.rows.len() > SHARED_GAP_ROWS;
    g.rows.truncate(SHARED_GAP_ROWS);
    (g, cut)
}

/// Rows of the collectives table a shared Ranks view keeps: those with the largest start skew.
pub const SHARED_COLLECTIVE_ROWS: usize = 16;
/// Rows of the unmatched table a shared Ranks view keeps.
pub const SHARED_UNMATCHED_ROWS: usize = 4;

/// A Ranks view for a link: no report text (the export), the collectives table cut to the
/// [`SHARED_COLLECTIVE_ROWS`] with the largest start skew (in their order), the unmatched table
/// to its first [`SHARED_UNMATCHED_ROWS`], notes to [`limits::SHARED_NOTES`].
pub fn trim_ranks(d: &view::ranks::RanksDrawn) -> view::ranks::RanksDrawn {
    use view::ranks::{COLLECTIVES_TABLE, UNMATCHED_TABLE};
    let mut d = d.clone();
    d.report_json.clear();
    for t in &mut d.tables {
        let (keep, skew) = match t.id.as_str() {
            COLLECTIVES_TABLE => (SHARED_COLLECTIVE_ROWS, t.columns.iter().position(|c| c.0 == "start skew")),
            UNMATCHED_TABLE => (SHARED_UNMATCHED_ROWS, None),
            _ => continue,
        };
        if t.rows.len() <= keep {
            continue;
        }
        let total = t.rows.len();
        let mut order: Vec<usize> = (0..total).collect();
        if let Some(col) = skew {
            let key = |i: usize| t.rows[i].get(col).and_then(|c| c.2).unwrap_or(f64::NEG_INFINITY);
            order.sort_by(|&a, &b| key(b).total_cmp(&key(a)).then(a.cmp(&b)));
        }
        let mut kept: Vec<usize> = order.into_iter().take(keep).collect();
        kept.sort_unstable();
        t.rows = kept.into_iter().map(|i| t.rows[i].clone()).collect();
        t.title = match skew {
            Some(_) => format!("Collectives matched across ranks: the {keep} of {total} with the largest start skew"),
            None => format!("{} (the first {keep} of {total})", t.title),
        };
        d.trimmed = true;
    }
    d.notes.truncate(limits::SHARED_NOTES);
    d
}
