//! Layer alignment of two traces (`docs/trace-analysis.md`, "Layer alignment"): for each pair of
//! phases (prefill with prefill, decode with decode), one layer of each side aligned kernel by
//! kernel, so that each row reads "these kernels here vs these there", with their time per
//! layer. Rows where one side runs more kernels than the other, or kernels the other has no
//! counterpart for, are the fusion differences of serving traces, whose graph-replayed kernels
//! link to no CPU op: split attention, a split-K GEMM's reduce, an add + RMSNorm or a SiLU · mul
//! fused on one side.
//!
//! Only the layers are aligned (tens to hundreds of kernels), never the whole streams.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::fusion::FusionDifference;
use super::side::{compatible, two, Side};
use crate::structure::align::{align, best_rotation, Step};
use crate::structure::phases::{PhaseFound, PhaseLayer};
use crate::structure::TraceStructure;
use crate::summary::round3;
use classify::category::Category;
use classify::Classification;
use trace::intern::NameId;
use units::format_duration_us;

/// Evidence of a difference found here starts with this (the others start `op-anchored` or
/// `sequence`).
pub const EVIDENCE_PREFIX: &str = "layer alignment";

/// One side of a row: its kernels (in order) and their time per layer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RowSide {
    pub kernels: Vec<String>,
    /// Mean kernel time per layer, µs.
    pub time_us: f64,
}

/// One row of an aligned layer: these kernels on one side against those on the other.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LayerRow {
    /// The heaviest category of the row's kernels.
    pub category: Category,
    /// Per side key; `null` where that side runs nothing here.
    #[serde(flatten)]
    pub sides: BTreeMap<String, Option<RowSide>>,
    /// What differs, when the sides run different numbers of kernels here.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub difference: Option<String>,
}

/// The layers of one pair of phases, aligned.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LayerAlignment {
    /// Each side's phase (index into its trace's `structure.phases`).
    pub phases: BTreeMap<String, usize>,
    pub labels: BTreeMap<String, String>,
    pub layers_per_step: BTreeMap<String, usize>,
    pub kernels_per_layer: BTreeMap<String, usize>,
    pub time_per_layer_us: BTreeMap<String, f64>,
    /// The second side's layer is read from its kernel at this position (wrapping around), so
    /// that it lines up with the first side's; 0 when both start alike.
    pub rotation: usize,
    pub rows: Vec<LayerRow>,
}

/// How the rows of a pair differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// One side runs one fused kernel for the other's several.
    Fused,
    /// A GEMM with a separate split-K reduce kernel against fewer kernels.
    SplitReduce,
    /// Same work in more kernels on one side.
    Split,
    /// Kernels on one side with no counterpart.
    OneSided,
}

/// Pairs of phases with layers to align: equal labels first (prefill, decode, mixed), then the
/// rest in order.
fn pair_phases(a: &[PhaseFound], b: &[PhaseFound]) -> Vec<(usize, usize)> {
    let layered = |p: &[PhaseFound]| (0..p.len()).filter(|&i| p[i].layer.is_some()).collect::<Vec<_>>();
    let (la, lb) = (layered(a), layered(b));
    let known = |p: &PhaseFound| !p.label.starts_with("phase ");
    let mut used_b = vec![false; b.len()];
    let mut pairs: Vec<(usize, usize)> = Vec::new();
    let mut unpaired_a = Vec::new();
    for &i in &la {
        match lb.iter().find(|&&j| !used_b[j] && known(&a[i]) && a[i].label == b[j].label) {
            Some(&j) => {
                used_b[j] = true;
                pairs.push((i, j));
            }
            None => unpaired_a.push(i),
        }
    }
    let rest_b: Vec<usize> = lb.into_iter().filter(|&j| !used_b[j]).collect();
    pairs.extend(unpaired_a.into_iter().zip(rest_b));
    pairs.sort_unstable();
    pairs
}

/// The two sides' layers as the alignment reads them.
struct Pair<'a, 't> {
    sides: [&'a Side<'t>; 2],
    layers: [&'a PhaseLayer; 2],
    /// Side 1's positions, rotated.
    order: Vec<usize>,
}

impl Pair<'_, '_> {
    fn name(&self, side: usize, pos: usize) -> NameId {
        self.layers[side].names[pos]
    }
    fn class(&self, side: usize, pos: usize) -> &Classification {
        self.sides[side].c.class(self.name(side, pos))
    }
    fn text(&self, side: usize, pos: usize) -> &str {
        self.sides[side].c.trace.name(self.name(side, pos))
    }
    fn time(&self, side: usize, pos: usize) -> f64 {
        self.layers[side].position_us[pos]
    }
    /// Side 1's position at alignment index `j`.
    fn b(&self, j: usize) -> usize {
        self.order[j]
    }
}

/// Pairing score: same category pairs (better with the same name, for same-vendor pairs); a
/// fused kernel with one that could be one of its parts pairs weakly; nothing else pairs.
fn score(p: &Pair<'_, '_>, i: usize, j_pos: usize) -> Option<i64> {
    let (a, b) = (p.class(0, i), p.class(1, j_pos));
    if a.category == b.category {
        Some(if p.text(0, i) == p.text(1, j_pos) { 4 } else { 3 })
    } else if (a.is_fused() && compatible(a, b)) || (b.is_fused() && compatible(b, a)) {
        Some(1)
    } else {
        None
    }
}

fn total(steps: &[Step], s: impl Fn(usize, usize) -> Option<i64>) -> i64 {
    steps
        .iter()
        .map(|st| match *st {
            Step::Pair(i, j) => s(i, j).unwrap_or(0),
            _ => -1,
        })
        .sum()
}

/// One row being built: positions on each side (side 1's as alignment indices).
#[derive(Default, Clone)]
struct RowAcc {
    kernels: [Vec<usize>; 2],
}

/// Whether a one-sided kernel (side `s`, alignment index `k`) belongs with `row`: next to the
/// row's kernels on its side and of the same category (attention split in pieces), or right
/// after the row's GEMM or attention kernel and a reduction (split-K, split-KV); or, anywhere
/// near, a part of the other side's fused kernel.
fn belongs(p: &Pair<'_, '_>, row: &RowAcc, s: usize, k: usize) -> bool {
    let pos = |side: usize, x: usize| if side == 1 { p.b(x) } else { x };
    let c = p.class(s, pos(s, k));
    let theirs = &row.kernels[1 - s];
    if theirs.iter().any(|&x| {
        let f = p.class(1 - s, pos(1 - s, x));
        f.is_fused() && compatible(f, c)
    }) {
        return true;
    }
    let mine = &row.kernels[s];
    let (Some(&first), Some(&last)) = (mine.iter().min(), mine.iter().max()) else { return false };
    let next_to = k + 1 == first || k == last + 1;
    let same = mine.iter().any(|&x| p.class(s, pos(s, x)).category == c.category);
    let reduce_after_core = k == last + 1
        && c.category == Category::Reduction
        && matches!(p.class(s, pos(s, last)).category, Category::Gemm | Category::Attention);
    next_to && (same || reduce_after_core)
}

/// Rows from the alignment columns: each pair opens a row; a one-sided kernel joins the row
/// before it or after it when it belongs there, else it stands in a one-sided row (next to
/// one-sided kernels of its side and category). Layers repeat, so the row after the last is
/// the first and the row before the first is the last: a residual add found at the end of one
/// side's layer still joins the fused add + norm that starts the other's.
fn rows(p: &Pair<'_, '_>, steps: &[Step]) -> Vec<RowAcc> {
    let mut out: Vec<RowAcc> = Vec::new();
    // The row of each column's pair, and for one-sided columns the rows around them.
    let mut row_of: Vec<Option<usize>> = vec![None; steps.len()];
    for (c, st) in steps.iter().enumerate() {
        if let Step::Pair(i, j) = *st {
            row_of[c] = Some(out.len());
            out.push(RowAcc { kernels: [vec![i], vec![j]] });
        }
    }
    let mut prev: Vec<Option<usize>> = vec![None; steps.len()];
    let mut last = None;
    for c in 0..steps.len() {
        last = row_of[c].or(last);
        prev[c] = last;
    }
    let mut next: Vec<Option<usize>> = vec![None; steps.len()];
    let mut coming = None;
    for c in (0..steps.len()).rev() {
        coming = row_of[c].or(coming);
        next[c] = coming;
    }
    let (first_row, last_row) = ((!out.is_empty()).then_some(0), out.len().checked_sub(1));
    // One-sided kernels: joined to a neighbouring pair row, or collected as (place, side, pos).
    let mut alone: Vec<(usize, usize, usize)> = Vec::new();
    for (c, st) in steps.iter().enumerate() {
        let (s, k) = match *st {
            Step::OnlyA(i) => (0, i),
            Step::OnlyB(j) => (1, j),
            Step::Pair(..) => continue,
        };
        let (before, after) = (prev[c].or(last_row), next[c].or(first_row));
        let target = match (before, after) {
            (Some(r), _) if belongs(p, &out[r], s, k) => Some((r, prev[c].is_none())),
            (_, Some(r)) if belongs(p, &out[r], s, k) => Some((r, next[c].is_none())),
            _ => None,
        };
        match target {
            // Joined across the layer's end: it comes last in the last row, first in the first.
            Some((r, true)) if Some(r) == first_row && next[c].is_none() => out[r].kernels[s].insert(0, k),
            Some((r, true)) => out[r].kernels[s].push(k),
            Some((r, false)) => {
                out[r].kernels[s].push(k);
                out[r].kernels[s].sort_unstable();
            }
            None => alone.push((c, s, k)),
        }
    }
    // One-sided rows, placed after the pair row before them.
    let mut placed: Vec<(usize, RowAcc)> = out.into_iter().enumerate().map(|(r, acc)| (2 * r + 1, acc)).collect();
    let mut current: Option<(usize, usize, Category, RowAcc)> = None;
    for (c, s, k) in alone {
        let cat = p.class(s, if s == 1 { p.b(k) } else { k }).category;
        let at = prev[c].map_or(0, |r| 2 * r + 2);
        match &mut current {
            Some((place, side, category, acc)) if *place == at && *side == s && *category == cat => {
                acc.kernels[s].push(k)
            }
            _ => {
                if let Some((place, _, _, acc)) = current.take() {
                    placed.push((place, acc));
                }
                let mut acc = RowAcc::default();
                acc.kernels[s].push(k);
                current = Some((at, s, cat, acc));
            }
        }
    }
    if let Some((place, _, _, acc)) = current {
        placed.push((place, acc));
    }
    placed.sort_by_key(|(place, _)| *place);
    placed.into_iter().map(|(_, acc)| acc).collect()
}

/// What one row says, as a fusion difference kind with the side that runs fewer kernels.
fn kind(p: &Pair<'_, '_>, row: &RowAcc) -> Option<(Kind, usize)> {
    let (n0, n1) = (row.kernels[0].len(), row.kernels[1].len());
    if n0 == n1 {
        return None;
    }
    let few = if n0 < n1 { 0 } else { 1 };
    let many = 1 - few;
    let pos = |side: usize, x: usize| if side == 1 { p.b(x) } else { x };
    if row.kernels[few].is_empty() {
        return Some((Kind::OneSided, few));
    }
    if let [f] = row.kernels[few][..] {
        let fc = p.class(few, pos(few, f));
        if fc.is_fused() && row.kernels[many].iter().all(|&x| compatible(fc, p.class(many, pos(many, x)))) {
            return Some((Kind::Fused, few));
        }
    }
    // A split-K GEMM: GEMM kernels plus a reduce of the K slices (a reduction, or a kernel the
    // GEMM library names as its split-K reduce: cuBLASLt `splitKreduce`, hipBLASLt `PostGSU`).
    let many_kernels = || row.kernels[many].iter().map(|&x| pos(many, x));
    let gemm = many_kernels().any(|x| p.class(many, x).category == Category::Gemm);
    let reduce = many_kernels().any(|x| {
        let name = p.text(many, x).to_ascii_lowercase();
        p.class(many, x).category == Category::Reduction || name.contains("reduce") || name.contains("postgsu")
    });
    if gemm && reduce {
        return Some((Kind::SplitReduce, few));
    }
    Some((Kind::Split, few))
}

/// Aligns the layers of each phase pair; returns the alignments and the fusion differences they
/// show.
pub(super) fn align_layers(
    s0: &Side<'_>,
    s1: &Side<'_>,
    st: [&TraceStructure; 2],
) -> (Vec<LayerAlignment>, Vec<FusionDifference>) {
    let mut alignments = Vec::new();
    let mut differences = Vec::new();
    for (i, j) in pair_phases(&st[0].phases, &st[1].phases) {
        let (pa, pb) = (&st[0].phases[i], &st[1].phases[j]);
        let (Some(la), Some(lb)) = (&pa.layer, &pb.layer) else { continue };
        let (a, d) = align_pair(s0, s1, [pa, pb], [la, lb], [i, j]);
        alignments.push(a);
        differences.extend(d);
    }
    (alignments, differences)
}

fn align_pair(
    s0: &Side<'_>,
    s1: &Side<'_>,
    phases: [&PhaseFound; 2],
    layers: [&PhaseLayer; 2],
    index: [usize; 2],
) -> (LayerAlignment, Vec<FusionDifference>) {
    let (n, m) = (layers[0].names.len(), layers[1].names.len());
    let mut pair = Pair { sides: [s0, s1], layers, order: (0..m).collect() };
    // The second side's layer may start at another kernel: rotate it if that aligns better.
    let r = best_rotation(n, m, |i, j| score(&pair, i, j), 1);
    let plain = align(n, m, |i, j| score(&pair, i, j), 1, usize::MAX);
    let plain_score = total(&plain, |i, j| score(&pair, i, j));
    let rotated_order: Vec<usize> = (0..m).map(|j| (j + r) % m).collect();
    let rotated = align(n, m, |i, j| score(&pair, i, rotated_order[j]), 1, usize::MAX);
    let rotated_score = total(&rotated, |i, j| score(&pair, i, rotated_order[j]));
    let (steps, rotation) = if r != 0 && rotated_score > plain_score {
        pair.order = rotated_order;
        (rotated, r)
    } else {
        (plain, 0)
    };
    let accs = rows(&pair, &steps);
    let typical = [layers[0].typical_layers(), layers[1].typical_layers()];
    let mean_layer = |l: &PhaseLayer| round3(l.layer_us.iter().sum::<f64>() / l.layer_us.len().max(1) as f64);
    let mut out_rows = Vec::with_capacity(accs.len());
    let mut differences: Vec<Found> = Vec::new();
    for acc in &accs {
        let pos = |side: usize, x: usize| if side == 1 { pair.b(x) } else { x };
        let side_of = |side: usize| -> Option<RowSide> {
            let ks = &acc.kernels[side];
            (!ks.is_empty()).then(|| RowSide {
                kernels: ks.iter().map(|&x| pair.text(side, pos(side, x)).to_string()).collect(),
                time_us: round3(ks.iter().map(|&x| pair.time(side, pos(side, x))).sum()),
            })
        };
        let classes: Vec<Category> = (0..2)
            .flat_map(|side| acc.kernels[side].iter().map(move |&x| (side, x)))
            .map(|(side, x)| pair.class(side, pos(side, x)).category)
            .collect();
        let category = Category::heaviest(&classes);
        let sides = [side_of(0), side_of(1)];
        let found = kind(&pair, acc);
        let text = found.map(|(k, few)| describe(&pair, acc, k, few, category));
        if let Some((k, few)) = found {
            let d = difference(&pair, acc, k, few, &sides, text.clone().unwrap_or_default());
            match differences.iter_mut().find(|g| g.same(&d)) {
                Some(g) => g.add(&d),
                None => differences.push(d),
            }
        }
        let [a, b] = sides;
        out_rows.push(LayerRow { category, sides: two(s0, a, s1, b), difference: text });
    }
    let alignment = LayerAlignment {
        phases: two(s0, index[0], s1, index[1]),
        labels: two(s0, phases[0].label.clone(), s1, phases[1].label.clone()),
        layers_per_step: two(s0, typical[0], s1, typical[1]),
        kernels_per_layer: two(s0, n, s1, m),
        time_per_layer_us: two(s0, mean_layer(layers[0]), s1, mean_layer(layers[1])),
        rotation,
        rows: out_rows,
    };
    let differences = differences.into_iter().map(|d| d.finish(&pair, phases)).collect();
    (alignment, differences)
}

/// A difference of one pair, before the rows that show the same one are added up.
struct Found {
    d: FusionDifference,
    text: String,
    /// Rows (places in a layer) that show it.
    places: usize,
    /// Time per layer on each side, µs.
    per_layer: [f64; 2],
}

impl Found {
    fn key(d: &FusionDifference) -> (String, String, Vec<String>) {
        let mut u = d.unfused_kernels.clone();
        u.sort();
        (d.fused_side.clone(), d.fused_kernel.clone(), u)
    }

    /// The same kernels against the same kernels (the input and post-attention norms).
    fn same(&self, other: &Found) -> bool {
        Found::key(&self.d) == Found::key(&other.d) && self.text == other.text
    }

    fn add(&mut self, other: &Found) {
        self.places += 1;
        self.d.count += other.d.count;
        for (k, v) in &other.d.time_us {
            let t = self.d.time_us.entry(k.clone()).or_insert(0.0);
            *t = round3(*t + v);
        }
        self.per_layer[0] += other.per_layer[0];
        self.per_layer[1] += other.per_layer[1];
    }

    /// The difference with its evidence: which phases, what differs, where, and the times per
    /// layer and per step on each side.
    fn finish(mut self, p: &Pair<'_, '_>, phases: [&PhaseFound; 2]) -> FusionDifference {
        let typical = [p.layers[0].typical_layers(), p.layers[1].typical_layers()];
        let figures = (0..2)
            .map(|s| {
                format!(
                    "{} per layer, {} per step on {}",
                    format_duration_us(self.per_layer[s]),
                    format_duration_us(self.per_layer[s] * typical[s] as f64),
                    p.sides[s].key
                )
            })
            .collect::<Vec<_>>()
            .join(" vs ");
        let places = if self.places > 1 { format!(" (in {} places per layer)", self.places) } else { String::new() };
        self.d.evidence = format!(
            "{EVIDENCE_PREFIX} ({} {} vs {} {}): {}{places}; {figures}",
            p.sides[0].key, phases[0].label, p.sides[1].key, phases[1].label, self.text
        );
        self.d
    }
}

/// The difference in words: "attention: 2 kernels per layer on amd vs 1 on nvidia".
fn describe(p: &Pair<'_, '_>, row: &RowAcc, kind: Kind, few: usize, category: Category) -> String {
    let many = 1 - few;
    let (nf, nm) = (row.kernels[few].len(), row.kernels[many].len());
    let (kf, km) = (&p.sides[few].key, &p.sides[many].key);
    let plural = |n: usize| if n == 1 { "kernel" } else { "kernels" };
    match kind {
        Kind::Fused => {
            let pos = |side: usize, x: usize| if side == 1 { p.b(x) } else { x };
            let f = p.class(few, pos(few, row.kernels[few][0]));
            format!(
                "{} fused on {kf}: 1 kernel per layer vs {nm} on {km}",
                f.components.iter().map(|c| c.id()).collect::<Vec<_>>().join(" + ")
            )
        }
        Kind::SplitReduce => {
            format!("gemm + split-K reduce on {km}: {nm} kernels per layer vs {nf} {} on {kf}", plural(nf))
        }
        Kind::Split => format!("{category}: {nm} kernels per layer on {km} vs {nf} on {kf}"),
        Kind::OneSided => format!("{category}: {nm} {} per layer on {km}, none on {kf}", plural(nm)),
    }
}

fn difference(
    p: &Pair<'_, '_>,
    row: &RowAcc,
    kind: Kind,
    few: usize,
    sides: &[Option<RowSide>; 2],
    text: String,
) -> Found {
    let many = 1 - few;
    let pos = |side: usize, x: usize| if side == 1 { p.b(x) } else { x };
    let fs = p.sides[few];
    let few_kernels: Vec<usize> = row.kernels[few].iter().map(|&x| pos(few, x)).collect();
    // The fused kernel: the only one, else the longest; none for a one-sided row.
    let fused = few_kernels.iter().copied().max_by(|&x, &y| p.time(few, x).total_cmp(&p.time(few, y)).then(y.cmp(&x)));
    let mut components: Vec<Category> = match kind {
        Kind::Fused => fused.map(|f| p.class(few, f).components.clone()).unwrap_or_default(),
        Kind::OneSided => {
            row.kernels[many].iter().flat_map(|&x| p.class(many, pos(many, x)).components.clone()).collect()
        }
        _ => few_kernels.iter().flat_map(|&x| p.class(few, x).components.clone()).collect(),
    };
    Classification::canonical_order(&mut components);
    let mut unfused: Vec<String> = Vec::new();
    for &x in &row.kernels[many] {
        let name = p.text(many, pos(many, x)).to_string();
        if !unfused.contains(&name) {
            unfused.push(name);
        }
    }
    let coverage = match kind {
        Kind::Fused => {
            let f = fused.map(|f| p.class(few, f));
            let others: Vec<&Classification> = row.kernels[many].iter().map(|&x| p.class(many, pos(many, x))).collect();
            f.map_or(0.0, |f| super::fusion::coverage(f, &others))
        }
        Kind::SplitReduce | Kind::Split => 1.0,
        Kind::OneSided => 0.0,
    };
    let regular = |l: &PhaseLayer| l.exact as f64 / (l.exact + l.near).max(1) as f64;
    let regularity = regular(p.layers[0]).min(regular(p.layers[1]));
    // The row repeats in every layer: that recurrence is worth the usual 0.1.
    let confidence = (0.5 + 0.3 * coverage + 0.1 + 0.1 * regularity).min(1.0);
    let layers = [p.layers[0].layer_us.len(), p.layers[1].layer_us.len()];
    let per_layer = [sides[0].as_ref().map_or(0.0, |s| s.time_us), sides[1].as_ref().map_or(0.0, |s| s.time_us)];
    let d = FusionDifference {
        fused_platform: fs.label.clone(),
        fused_side: fs.key.clone(),
        fused_kernel: match kind {
            Kind::OneSided => String::new(),
            _ => fused.map(|f| p.text(few, f).to_string()).unwrap_or_default(),
        },
        components,
        unfused_kernels: unfused,
        count: layers[few] as u64,
        time_us: two(
            p.sides[0],
            round3(per_layer[0] * layers[0] as f64),
            p.sides[1],
            round3(per_layer[1] * layers[1] as f64),
        ),
        confidence: round3(confidence),
        evidence: String::new(),
    };
    Found { d, text, places: 1, per_layer }
}

/// Adds the layer differences to the others. The same kernels against the same kernels found
/// under one CPU op stay as they are (that evidence is stronger) and the layer's is dropped; found
/// only along the whole-trace sequence, they give way to the layer's. The same difference in two
/// phase pairs (prefill and decode) is listed for each.
pub(super) fn merge(existing: &mut Vec<FusionDifference>, layer: Vec<FusionDifference>) {
    let key = Found::key;
    for d in layer {
        let k = key(&d);
        let other = |e: &FusionDifference| key(e) == k && !e.evidence.starts_with(EVIDENCE_PREFIX);
        match existing.iter().position(other) {
            Some(i) if existing[i].evidence.starts_with("op-anchored") => {}
            Some(i) => existing[i] = d,
            None => existing.push(d),
        }
    }
    let total = |d: &FusionDifference| d.time_us.values().fold(0.0, |a, b| a + b);
    existing.sort_by(|x, y| total(y).total_cmp(&total(x)).then_with(|| x.fused_kernel.cmp(&y.fused_kernel)));
}
