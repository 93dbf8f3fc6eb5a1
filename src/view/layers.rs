//! The Layers view of a serving trace, as tables and a drawing (the page, its exports and the
//! command line's JSON show the same): the step strip (each forward pass a bar, coloured by its
//! phase), each phase's decoder layer kernel by kernel, and for two traces the layers aligned
//! side by side with the differences marked.

use draw::chart::{escape_xml, svg_start};
use table::{Cell, DataTable};
use units::{format_duration_us, group_digits, plural};

use super::kernel_cell;
use analysis::compare::LayerAlignment;
use analysis::structure::{LayerKernel, Structure};

/// Phase colours of the step strip, in phase order (repeating past the fourth).
const PHASE_COLORS: [&str; 4] = ["#d9822b", "#2f81f7", "#3fb950", "#a371f7"];
/// Steps the strip draws at most (the table and JSON keep all).
pub const MAX_STRIP_STEPS: usize = 2000;

/// The step strip: one bar per step, placed by its start on the trace's clock and as wide as its
/// span, coloured by phase; the tooltip names the step, its phase, kernels, layers and time.
pub fn step_strip(s: &Structure) -> String {
    const LEFT: f64 = 10.0;
    const WIDTH: f64 = 740.0;
    const TOP: f64 = 46.0;
    let mut svg = svg_start(760, 90, "Forward passes (steps), coloured by phase");
    for (i, p) in s.phases.iter().enumerate() {
        let x = LEFT + 170.0 * i as f64;
        if i >= 4 {
            break;
        }
        svg.push_str(&format!(
            "<rect x=\"{x}\" y=\"24\" width=\"10\" height=\"10\" fill=\"{}\"/><text x=\"{}\" y=\"33\" fill=\"currentColor\">{} ({})</text>",
            PHASE_COLORS[i % PHASE_COLORS.len()],
            x + 14.0,
            escape_xml(&p.label),
            plural(p.steps as u64, "step", "steps")
        ));
    }
    let (lo, hi) = s.steps.iter().fold((f64::MAX, f64::MIN), |(a, b), st| (a.min(st.start_us), b.max(st.end_us)));
    let span = hi - lo;
    if !(span.is_finite() && span > 0.0) {
        svg.push_str("</svg>");
        return svg;
    }
    for (i, st) in s.steps.iter().enumerate().take(MAX_STRIP_STEPS) {
        let x = LEFT + WIDTH * (st.start_us - lo) / span;
        let w = (WIDTH * (st.end_us - st.start_us) / span).max(1.0);
        let label = s.phases.get(st.phase).map_or("", |p| p.label.as_str());
        svg.push_str(&format!(
            "<rect data-step=\"{}\" data-phase=\"{}\" x=\"{x:.1}\" y=\"{TOP}\" width=\"{w:.1}\" height=\"28\" fill=\"{}\">\
             <title>step {}: {} — {}, {}, {}</title></rect>",
            i + 1,
            st.phase,
            PHASE_COLORS[st.phase % PHASE_COLORS.len()],
            i + 1,
            escape_xml(label),
            plural(st.kernels as u64, "kernel", "kernels"),
            plural(st.layers as u64, "layer", "layers"),
            format_duration_us(st.time_us)
        ));
    }
    svg.push_str("</svg>");
    svg
}

/// One row per phase: its steps, layers and their times.
pub fn phase_table(s: &Structure) -> DataTable {
    let mut t = DataTable::new(
        "phases",
        format!(
            "Phases ({} on device {}, stream {})",
            plural(s.steps.len() as u64, "step", "steps"),
            s.device,
            s.stream
        ),
        &[
            ("phase", false),
            ("label", false),
            ("steps", true),
            ("layers per step", true),
            ("kernels per layer", true),
            ("time per layer", true),
            ("time per step", true),
            ("exact layers", true),
            ("near-repeats", true),
        ],
    );
    for p in &s.phases {
        let reg = p.regularity.as_ref();
        t.rows.push(vec![
            Cell::count(p.phase as u64),
            Cell::text(format!("{} ({})", p.label, p.label_from)),
            Cell::count(p.steps as u64),
            Cell::count(p.layers_per_step as u64),
            Cell::count(p.kernels_per_layer as u64),
            p.time_per_layer_us.map_or_else(|| Cell::decimal(None, 0), Cell::micros),
            Cell::micros(p.time_per_step_us),
            reg.map_or_else(|| Cell::decimal(None, 0), |r| Cell::count(r.exact as u64)),
            reg.map_or_else(|| Cell::decimal(None, 0), |r| Cell::count(r.near as u64)),
        ]);
    }
    t
}

/// Every phase's layer, kernel by kernel (with what runs before and after the layers).
pub fn layer_table(s: &Structure) -> DataTable {
    let mut t = DataTable::new(
        "layer",
        "The decoder layer of each phase, kernel by kernel (mean time over its exact repeats)",
        &[("phase", false), ("where", false), ("#", true), ("category", false), ("kernel", false), ("mean time", true)],
    );
    let mut push = |phase: &str, place: &str, kernels: &[LayerKernel]| {
        for (i, k) in kernels.iter().enumerate() {
            t.rows.push(vec![
                Cell::text(phase),
                Cell::text(place),
                Cell::count(i as u64 + 1),
                Cell::text(k.category.id()),
                kernel_cell(&k.kernel),
                Cell::micros(k.time_us),
            ]);
        }
    };
    for p in &s.phases {
        push(&p.label, "before the layers", &p.before_layers);
        push(&p.label, "layer", &p.layer);
        push(&p.label, "after the layers", &p.after_layers);
    }
    t
}

/// The aligned layers of a comparison: one row per position of each phase pair, the two sides'
/// kernels and time per layer; a row where the sides differ says how.
pub fn alignment_table(alignments: &[LayerAlignment], keys: [&str; 2]) -> DataTable {
    let cols: Vec<String> = vec![
        "phases".into(),
        "category".into(),
        format!("{} kernels", keys[0]),
        format!("{} time per layer", keys[0]),
        format!("{} kernels", keys[1]),
        format!("{} time per layer", keys[1]),
        "difference".into(),
    ];
    let numeric = [false, false, false, true, false, true, false];
    let headers: Vec<(&str, bool)> = cols.iter().map(String::as_str).zip(numeric).collect();
    let rows: usize = alignments.iter().map(|a| a.rows.len()).sum();
    let mut t = DataTable::new(
        "layer-alignment",
        format!("Layers aligned kernel by kernel ({} rows)", group_digits(rows as u64)),
        &headers,
    );
    for a in alignments {
        let phases = keys.map(|k| a.labels.get(k).cloned().unwrap_or_default()).join(" / ");
        for r in &a.rows {
            let mut row = vec![Cell::text(&phases), Cell::text(r.category.id())];
            for k in keys {
                match r.sides.get(k).and_then(|s| s.as_ref()) {
                    Some(s) => {
                        let names = s.kernels.iter().map(|n| kernel_cell(n).text).collect::<Vec<_>>().join(" ; ");
                        row.push(Cell { text: names, exact: s.kernels.join(" ; "), sort: 0.0 });
                        row.push(Cell::micros(s.time_us));
                    }
                    None => {
                        row.push(Cell::text("—"));
                        row.push(Cell::decimal(None, 0));
                    }
                }
            }
            row.push(Cell::text(r.difference.clone().unwrap_or_default()));
            t.rows.push(row);
        }
    }
    // Where every layer agrees kernel for kernel, a column of blanks says nothing.
    if alignments.iter().all(|a| a.rows.iter().all(|r| r.difference.is_none())) {
        t = t.without_column("difference");
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use analysis::summarize;
    use analysis::summary::ClassifiedTrace;
    use analysis::synthetic::serving::{write_serving_trace, ServingSpec};
    use analysis::synthetic::Flavor;
    use analysis::{compare, Input};
    use formats::read_trace;

    fn summary_of(spec: &ServingSpec) -> (trace::Trace, analysis::TraceSummary) {
        let mut bytes = Vec::new();
        write_serving_trace(&mut bytes, spec).unwrap();
        let trace = read_trace(&bytes).unwrap();
        let s = summarize(&ClassifiedTrace::new(&trace), Some("t.json"));
        (trace, s)
    }

    #[test]
    fn a_synthetic_serving_trace_draws_every_step_and_lists_every_layer_kernel() {
        let (_, s) = summary_of(&ServingSpec::new(Flavor::Nvidia));
        let st = s.structure.as_deref().expect("a structure");
        let svg = step_strip(st);
        assert_eq!(svg.matches("<rect data-step=").count(), st.steps.len());
        let phases = phase_table(st);
        assert_eq!(phases.rows.len(), st.phases.len());
        let layer = layer_table(st);
        let kernels: usize =
            st.phases.iter().map(|p| p.layer.len() + p.before_layers.len() + p.after_layers.len()).sum();
        assert_eq!(layer.rows.len(), kernels);
        assert!(layer.rows.iter().any(|r| r[1].text == "layer"));
    }

    #[test]
    fn an_aligned_pair_has_a_row_per_position_and_marks_the_differences() {
        let (ta, _) = summary_of(&ServingSpec::new(Flavor::Nvidia));
        // The AMD side splits attention in 3 kernels and its norms are not fused.
        let amd = ServingSpec { attention_kernels: 3, fused_add_norm: false, ..ServingSpec::new(Flavor::Amd) };
        let (tb, _) = summary_of(&amd);
        let c = compare(Input::new(&ta, Some("a")), Input::new(&tb, Some("b")));
        let keys = [c.platforms[0].key.as_str(), c.platforms[1].key.as_str()];
        let t = alignment_table(&c.layer_alignment, keys);
        let rows: usize = c.layer_alignment.iter().map(|a| a.rows.len()).sum();
        assert!(rows > 0);
        assert_eq!(t.rows.len(), rows);
        let marked = c.layer_alignment.iter().flat_map(|a| &a.rows).filter(|r| r.difference.is_some()).count();
        assert_eq!(t.rows.iter().filter(|r| !r[6].text.is_empty()).count(), marked);
        assert!(marked > 0, "the AMD-like side plants differences");
    }

    /// Two runs that split every layer alike have no difference to show: the table has no
    /// column of blanks for one.
    #[test]
    fn layers_that_agree_kernel_for_kernel_have_no_difference_column() {
        let (ta, _) = summary_of(&ServingSpec::new(Flavor::Nvidia));
        let (tb, _) = summary_of(&ServingSpec::new(Flavor::Nvidia));
        let c = compare(Input::new(&ta, Some("a")), Input::new(&tb, Some("b")));
        let keys = [c.platforms[0].key.as_str(), c.platforms[1].key.as_str()];
        let t = alignment_table(&c.layer_alignment, keys);
        assert!(!t.rows.is_empty());
        let headers: Vec<&str> = t.columns.iter().map(|c| c.header.as_str()).collect();
        assert_eq!(headers.len(), 6, "{headers:?}");
        assert!(!headers.contains(&"difference"), "{headers:?}");
        assert!(t.rows.iter().all(|r| r.len() == 6));
    }
}
