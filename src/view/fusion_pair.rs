//! Two traces' kernel groups of the aligned layer, side by side: which window of each side's
//! group drawing ([`super::fusion_dag`]) is the layer the comparison aligned
//! ([`analysis::compare::LayerAlignment`]), each side's traffic for one pass of it (unfused
//! vs fused, the launches whose bytes are known), and which boxes each fusion difference the
//! comparison found names, so the page can mark them. Pure, so the pairing is tested natively.

use analysis::compare::{Comparison, FusionDifference};
use analysis::trace_fusion::TraceFusion;
use classify::family::box_name;
use draw::chart::{traffic_series, Bar, BarChart, BarRow};
use units::plural;

use analysis::trace_fusion::dag::{DagWindow, FusionDag};

/// One side of the pair.
#[derive(Debug, Clone, PartialEq)]
pub struct PairSide {
    /// The comparison's key of the side (`amd`, `nvidia`, `a`, `b`).
    pub key: String,
    /// Index into the side's `fusion_dag.windows`.
    pub window: usize,
    /// Bytes of one pass of the window, over its drawn launches with both figures known.
    pub unfused_bytes: u64,
    pub fused_bytes: u64,
    /// Drawn launches whose bytes are not known (left out of the two sums), and those known.
    pub unknown: usize,
    pub known: usize,
}

/// A fusion difference of the comparison and the boxes it names on each side.
#[derive(Debug, Clone, PartialEq)]
pub struct PairDifference {
    /// Index into `comparison.fusion_differences`.
    pub index: usize,
    /// Box indices (in each side's window) of the fused kernel (on the fused side) and of the
    /// unfused kernels (on the other).
    pub boxes: [Vec<usize>; 2],
}

/// Characters of a kernel's name in [`difference_line`].
const NAME_CHARS: usize = 50;
/// The other side's kernels named in [`difference_line`]; more are counted.
const NAMED_KERNELS: usize = 3;

/// A fusion difference in words, its kernels by their box names: "nvidia runs elementwise:
/// direct_copy where amd runs elementwise_manual_unroll: direct_copy". The other side's kernels
/// are named, not counted: the difference lists them once each, and one may run more than once
/// in its place (the evidence, shown beside, says how many kernels each side runs). `keys` are
/// the comparison's two sides.
pub fn difference_line(d: &FusionDifference, keys: [&str; 2]) -> String {
    let other = if keys[0] == d.fused_side { keys[1] } else { keys[0] };
    let mut names: Vec<String> = Vec::new();
    for n in &d.unfused_kernels {
        let n = box_name(n, NAME_CHARS);
        if !names.contains(&n) {
            names.push(n);
        }
    }
    let more = names.len().saturating_sub(NAMED_KERNELS);
    names.truncate(NAMED_KERNELS);
    let listed = match names.split_last() {
        _ if more > 0 => format!("{} and {}", names.join(", "), plural(more as u64, "more kernel", "more kernels")),
        Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
        Some((last, _)) => last.clone(),
        None => "nothing".to_string(),
    };
    if d.fused_kernel.is_empty() {
        format!("{other} runs {listed} where {} runs none", d.fused_side)
    } else {
        format!("{} runs {} where {other} runs {listed}", d.fused_side, box_name(&d.fused_kernel, NAME_CHARS))
    }
}

/// The aligned layer of both sides.
#[derive(Debug, Clone, PartialEq)]
pub struct PairDag {
    /// What is shown: the aligned phases' layer, or why the first windows are.
    pub label: String,
    pub sides: [PairSide; 2],
    pub differences: Vec<PairDifference>,
}

/// The window of `phase`'s first layer, if the side drew one.
fn layer_window(dag: &FusionDag, phase: Option<usize>) -> Option<usize> {
    let phase = phase?;
    dag.windows.iter().position(|w| w.phase == Some(phase) && w.layer.is_some())
}

fn traffic(w: &DagWindow, f: &TraceFusion) -> (u64, u64, usize) {
    let (mut unfused, mut fused, mut unknown) = (0u64, 0u64, 0usize);
    // `known` is the rest of the boxes.
    for b in &w.boxes {
        match f.groups.get(b.group).and_then(|g| g.unfused_bytes_per_call.zip(g.fused_bytes_per_call)) {
            Some((u, fu)) => {
                unfused = unfused.saturating_add(u);
                fused = fused.saturating_add(fu);
            }
            None => unknown += 1,
        }
    }
    (unfused, fused, unknown)
}

/// Why the second side's drawing does not start where the alignment does. The alignment reads
/// the second side's layer from its kernel `rotation` (wrapping around); the drawing keeps
/// launch order from the layer's first kernel, because its arrows are hand-offs from an earlier
/// launch to a later one and its columns follow them: rotated, the hand-offs into the first
/// boxes would come from boxes drawn after them.
fn rotation_note(rotation: usize, keys: [&str; 2]) -> String {
    if rotation == 0 {
        return String::new();
    }
    format!(
        ". The alignment reads {}'s layer from its box {} (wrapping around to box 1), which lines up with {}'s box 1; \
         it is drawn from box 1 in launch order, so that every arrow runs from an earlier launch to a later one",
        keys[1],
        rotation + 1,
        keys[0]
    )
}

/// The pair view of a comparison whose two sides (in the comparison's order) carry their
/// fusion and group windows; `None` when a side has no window.
pub fn aligned_pair(comparison: &Comparison, sides: [(&TraceFusion, &FusionDag); 2]) -> Option<PairDag> {
    let keys: Vec<&str> = comparison.platforms.iter().map(|p| p.key.as_str()).collect();
    let [k0, k1] = keys.as_slice() else { return None };
    let keys = [*k0, *k1];
    let alignment = comparison.layer_alignment.first();
    let aligned = alignment.map(|a| [0, 1].map(|i| layer_window(sides[i].1, a.phases.get(keys[i]).copied())));
    let (windows, label) = match (alignment, aligned) {
        (Some(a), Some([Some(w0), Some(w1)])) => {
            let phase = |k: &str| a.labels.get(k).cloned().unwrap_or_default();
            let label = format!(
                "The aligned layer: {} {} (layer {} of its step, {}) against {} {} (layer {}, {})",
                keys[0],
                phase(keys[0]),
                sides[0].1.windows[w0].layer.map_or(0, |l| l + 1),
                plural(sides[0].1.windows[w0].kernels as u64, "kernel", "kernels"),
                keys[1],
                phase(keys[1]),
                sides[1].1.windows[w1].layer.map_or(0, |l| l + 1),
                plural(sides[1].1.windows[w1].kernels as u64, "kernel", "kernels"),
            );
            ([w0, w1], label + &rotation_note(a.rotation, keys))
        }
        _ if sides.iter().all(|(_, d)| !d.windows.is_empty()) => {
            ([0, 0], "No layer aligned between the traces: each side's first window of kernels".to_string())
        }
        _ => return None,
    };
    let pair_sides: [PairSide; 2] = [0, 1].map(|i| {
        let (f, dag) = sides[i];
        let w = &dag.windows[windows[i]];
        let (unfused, fused, unknown) = traffic(w, f);
        let known = w.boxes.len() - unknown;
        PairSide {
            key: keys[i].to_string(),
            window: windows[i],
            unfused_bytes: unfused,
            fused_bytes: fused,
            unknown,
            known,
        }
    });
    let boxes_of = |i: usize, names: &[&str]| -> Vec<usize> {
        let (f, dag) = sides[i];
        dag.windows[windows[i]]
            .boxes
            .iter()
            .enumerate()
            .filter(|(_, b)| f.groups.get(b.group).is_some_and(|g| names.contains(&g.kernel.as_str())))
            .map(|(n, _)| n)
            .collect()
    };
    let differences = comparison
        .fusion_differences
        .iter()
        .enumerate()
        .filter_map(|(index, d)| {
            let fused_side = keys.iter().position(|k| *k == d.fused_side)?;
            let unfused: Vec<&str> = d.unfused_kernels.iter().map(String::as_str).collect();
            let mut boxes = [Vec::new(), Vec::new()];
            boxes[fused_side] = boxes_of(fused_side, &[d.fused_kernel.as_str()]);
            boxes[1 - fused_side] = boxes_of(1 - fused_side, &unfused);
            (!boxes[0].is_empty() || !boxes[1].is_empty()).then_some(PairDifference { index, boxes })
        })
        .collect();
    Some(PairDag { label, sides: pair_sides, differences })
}

/// Unfused vs fused bytes of one pass of the aligned layer, a row per side with a launch of
/// known bytes drawn (a side without one would be a 0 B bar: [`pair_bytes_unknown`] names it);
/// `None` when neither side has one.
pub fn pair_traffic_chart(p: &PairDag) -> Option<BarChart> {
    let rows: Vec<BarRow> = p
        .sides
        .iter()
        .filter(|s| s.known > 0)
        .map(|s| BarRow {
            label: s.key.clone(),
            detail: format!("{} without known bytes left out", plural(s.unknown as u64, "launch", "launches")),
            values: vec![Bar { read: s.unfused_bytes, written: 0 }, Bar { read: s.fused_bytes, written: 0 }],
        })
        .collect();
    (!rows.is_empty()).then(|| BarChart {
        title: "Memory traffic of one pass of the layer drawn (launches with known bytes)".to_string(),
        series: traffic_series(),
        rows,
        split: false,
    })
}

/// Why a side has no bar in [`pair_traffic_chart`]: none of its drawn launches has known bytes.
pub fn pair_bytes_unknown(p: &PairDag) -> Option<String> {
    let keys: Vec<&str> = p.sides.iter().filter(|s| s.known == 0).map(|s| s.key.as_str()).collect();
    (!keys.is_empty()).then(|| {
        format!(
            "No traffic bar for {}: bytes unknown for every launch drawn (the trace's format records no shapes, or its ops none a model knows).",
            keys.join(" and ")
        )
    })
}

#[cfg(test)]
mod tests;
