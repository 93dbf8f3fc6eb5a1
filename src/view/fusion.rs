//! Fusion in a real trace, as the page and its exports draw it: the headline, the traffic bars
//! (unfused vs fused, per kernel group and in total), the kernel groups and the opportunities
//! as sortable tables. The same figures as `fusionscope trace --json`'s `fusion` key
//! (`docs/trace-fusion.md`); kept in the core so what the page shows is tested natively.

use analysis::trace_fusion::describe::How;
use analysis::trace_fusion::{FusionTotals, KernelGroup, TraceFusion};
use draw::chart::{traffic_series, Bar, BarChart, BarRow};
use table::{Cell, DataTable};
use trace::TraceFormat;
use units::{format_bytes, format_duration_us, format_pct, group_digits, plural};

/// Kernel groups drawn in the per-group chart (the longest with known bytes).
pub const CHART_GROUPS: usize = 20;

/// Bytes of all of a group's calls, unfused and fused, when both are known.
fn group_bytes(g: &KernelGroup) -> Option<(u64, u64)> {
    let (f, u) = (g.fused_bytes_per_call?, g.unfused_bytes_per_call?);
    Some((u.saturating_mul(g.calls), f.saturating_mul(g.calls)))
}

/// How much of the GPU time has bytes, and whose gap the rest is: the trace's (it does not
/// record what the bytes need) or fusionscope's (no model, or input it cannot read). The second
/// share leaves the trace's gap out, so only fusionscope's keeps it under 100 %.
pub fn coverage_text(t: &FusionTotals) -> String {
    let share = |us: f64| if t.gpu_time_us > 0.0 { 100.0 * us / t.gpu_time_us } else { 0.0 };
    let u = &t.unknown_us;
    let mut rest: Vec<String> = Vec::new();
    if u.not_recorded > 0.0 {
        rest.push(format!("{} not recorded by the trace", format_pct(share(u.not_recorded))));
    }
    if u.no_model > 0.0 {
        rest.push(format!("{} with no model in fusionscope", format_pct(share(u.no_model))));
    }
    if u.bad_input > 0.0 {
        rest.push(format!("{} of bad input", format_pct(share(u.bad_input))));
    }
    let rest = if rest.is_empty() { String::new() } else { format!("; unknown: {}", rest.join(", ")) };
    let of_recorded = if t.shapes_recorded_us > 0.0 {
        format!("for {} of the time the trace records what they need", format_pct(t.bytes_known_of_recorded_pct))
    } else {
        "the trace records what they need for none of it".to_string()
    };
    format!(
        "bytes known for {} of {} time ({} of {}) and {of_recorded}{rest}",
        format_pct(t.bytes_known_pct),
        t.processor,
        format_duration_us(t.bytes_known_us),
        format_duration_us(t.gpu_time_us),
    )
}

/// One line of what the groups say: how much of the GPU time has bytes, what the trace's own
/// fusion saved, and what the rules would still save.
pub fn fusion_headline(f: &TraceFusion) -> String {
    let t = &f.totals;
    // The sums cover every opportunity; a share link lists only those that save most.
    let listed = f.opportunities.len() as u64;
    let all = t.opportunities.max(listed);
    let cut =
        if all > listed { format!(" (the {} that save most are listed)", group_digits(listed)) } else { String::new() };
    let n = plural(all, "opportunity", "opportunities");
    let save = if all == 1 { "saves" } else { "save" };
    let left = match (all, t.opportunity_us) {
        (0, _) => format!("no fusion left on the table by the {} rules", f.rule_set),
        (_, Some(us)) => format!(
            "{n} left on the table by the {} rules {save} {} ({} at {}'s bandwidth){cut}",
            f.rule_set,
            format_bytes(t.opportunity_bytes),
            format_duration_us(us),
            f.chip.as_deref().unwrap_or("the chip")
        ),
        (_, None) => format!(
            "{n} left on the table by the {} rules {save} {} (no chip: no time){cut}",
            f.rule_set,
            format_bytes(t.opportunity_bytes)
        ),
    };
    format!(
        "{} of {}; {}. Moved {} as run, {} if every part were its own kernel: the trace's fusion saved {}; {left}.",
        plural(t.groups, "kernel group", "kernel groups"),
        plural(t.events, &format!("{} event", t.processor), &format!("{} events", t.processor)),
        coverage_text(t),
        format_bytes(t.fused_bytes),
        format_bytes(t.unfused_bytes),
        format_bytes(t.saved_by_fusion_bytes),
    )
}

/// The re-prediction line of a trace with Inductor kernels.
pub fn reprediction_line(f: &TraceFusion) -> Option<String> {
    let r = f.reprediction.as_ref()?;
    Some(match r.matched_pct {
        Some(pct) => format!(
            "Re-prediction: the {} rules re-form {} of {} Inductor kernels exactly ({}){}.",
            r.rule_set,
            group_digits(r.matched),
            group_digits(r.kernels),
            format_pct(pct),
            exact_clause(r)
        ),
        None => {
            format!("Re-prediction: none of the {} Inductor kernels names its ops.", group_digits(r.not_expandable))
        }
    })
}

/// How many of the re-predicted kernels were expanded from the compile log's exact nodes, and
/// how many of those their names would have expanded otherwise; empty without a log.
pub fn exact_clause(r: &analysis::trace_fusion::Reprediction) -> String {
    match r.exact {
        0 => String::new(),
        e if e == r.kernels => format!(
            ", scored against the compile log's exact nodes (their names alone would give other ops for {})",
            group_digits(r.name_differs)
        ),
        e => format!(
            ", {} of them from the compile log's exact nodes (their names alone would give other ops for {})",
            group_digits(e),
            group_digits(r.name_differs)
        ),
    }
}

/// The execution-trace line of a trace whose fusion used one: how much of it linked, and how
/// many kernels' hand-offs are exact.
pub fn exec_trace_line(f: &TraceFusion) -> Option<String> {
    let e = f.exec_trace.as_ref()?;
    Some(match &e.note {
        Some(note) => format!("Execution trace {}: none of its {} links: {note}.", e.file, plural(e.ops, "op", "ops")),
        None => format!(
            "Execution trace {}: {} of its {} linked to this trace's CPU ops ({}); the hand-offs of {} are exact (its tensor ids).",
            e.file,
            group_digits(e.linked_ops),
            plural(e.ops, "op", "ops"),
            format_pct(e.linked_pct),
            plural(e.linked_kernels, "kernel launch", "kernel launches"),
        ),
    })
}

/// Why no traffic bar is drawn, when no kernel group's bytes are known: in a format that records
/// no shapes (rocprofv3, rocpd, Nsight Systems, XLA) its own sentence of what it lacks
/// ([`TraceFormat::lacks`]), else that no launch's shapes gave bytes. `None` when some are
/// known: the bars are drawn.
pub fn no_bytes_statement(f: &TraceFusion, format: TraceFormat) -> Option<String> {
    if f.groups.iter().any(|g| group_bytes(g).is_some()) {
        return None;
    }
    Some(match format.lacks() {
        Some(lacks) => format!("No shapes recorded in this format: bytes unknown, so no traffic bars. {lacks}"),
        None => "Bytes unknown for every kernel (no launching op recorded shapes a model knows), so no traffic bars."
            .to_string(),
    })
}

/// Unfused vs fused bytes of the [`CHART_GROUPS`] longest groups whose bytes are known, all
/// calls counted.
pub fn fusion_group_chart(f: &TraceFusion) -> BarChart {
    let known: Vec<(&KernelGroup, (u64, u64))> =
        f.groups.iter().filter_map(|g| group_bytes(g).map(|b| (g, b))).take(CHART_GROUPS).collect();
    let rows = known
        .iter()
        .map(|(g, (unfused, fused))| BarRow {
            // What ran: the parts where the kernel fused several, else its op (or its name); for
            // a group read from XLA's HLO, the instruction the kernel ran (its op is HLO's line).
            label: match (g.parts.len(), g.ops.first()) {
                (2.., _) => g.parts.join(" + "),
                (_, Some(_)) if g.how == How::Hlo => g.launched_by.clone().unwrap_or_else(|| g.kernel.clone()),
                (_, Some(op)) => op.op.clone(),
                _ => g.kernel.clone(),
            },
            detail: format!("{} ({}): {}", g.kernel, plural(g.calls, "call", "calls"), g.parts.join(" + ")),
            values: vec![Bar { read: *unfused, written: 0 }, Bar { read: *fused, written: 0 }],
        })
        .collect();
    BarChart {
        title: format!("Memory traffic of the {} longest kernel groups with known bytes (all calls)", known.len()),
        series: traffic_series(),
        rows,
        split: false,
    }
}

/// Unfused vs fused bytes of the whole trace (the groups with known bytes), one row per side.
pub fn fusion_total_chart(sides: &[(&str, &TraceFusion)]) -> BarChart {
    BarChart {
        title: "Total memory traffic of the kernels with known bytes".to_string(),
        series: traffic_series(),
        rows: sides
            .iter()
            .map(|(label, f)| BarRow {
                label: if label.is_empty() { "total".to_string() } else { label.to_string() },
                detail: format!(
                    "{}, bytes known for {} of {} time",
                    plural(f.totals.groups, "kernel group", "kernel groups"),
                    format_pct(f.totals.bytes_known_pct),
                    f.totals.processor
                ),
                values: vec![
                    Bar { read: f.totals.unfused_bytes, written: 0 },
                    Bar { read: f.totals.fused_bytes, written: 0 },
                ],
            })
            .collect(),
        split: false,
    }
}

fn bytes_cell(b: Option<u64>) -> Cell {
    b.map_or_else(|| Cell::text("?"), Cell::bytes)
}

/// Every kernel group: its ops, parts, bytes per call and how they were known.
pub fn fusion_groups_table(f: &TraceFusion, id: &'static str, title: &str) -> DataTable {
    let mut t = DataTable::new(
        id,
        format!("{title}: {}, longest first", plural(f.groups.len() as u64, "kernel group", "kernel groups")),
        &[
            ("kernel", false),
            ("kind", false),
            ("calls", true),
            ("time", true),
            ("ops", false),
            ("parts", false),
            ("fused / call", true),
            ("unfused / call", true),
            ("saved / call", true),
            ("how", false),
        ],
    );
    for g in &f.groups {
        let ops: Vec<&str> = g.ops.iter().map(|o| o.op.as_str()).collect();
        let saved = group_bytes(g)
            .map(|_| g.unfused_bytes_per_call.unwrap_or(0).saturating_sub(g.fused_bytes_per_call.unwrap_or(0)));
        let how = match &g.unknown {
            Some(u) => format!("{} ({}): {}", g.how.text(), u.cause.text(), u.why),
            None => g.how.text().to_string(),
        };
        t.rows.push(vec![
            super::kernel_cell(&g.kernel),
            Cell::text(g.kind.id()),
            Cell::count(g.calls),
            Cell::micros(g.time_us),
            Cell::text(ops.join(", ")),
            Cell::text(g.parts.join(" + ")),
            bytes_cell(g.fused_bytes_per_call),
            bytes_cell(g.unfused_bytes_per_call),
            bytes_cell(saved),
            Cell::text(how),
        ]);
    }
    t
}

/// The fusion left on the table: each run of kernels the rules would make one, most time
/// saved first.
pub fn opportunities_table(f: &TraceFusion, id: &'static str, title: &str) -> DataTable {
    let mut t = DataTable::new(
        id,
        format!(
            "{title}: {} by the {} rules{}",
            plural(f.opportunities.len() as u64, "opportunity", "opportunities"),
            f.rule_set,
            f.chip.as_ref().map(|c| format!(", time at {c}'s bandwidth")).unwrap_or_default()
        ),
        &[
            ("rule", false),
            ("kernels", false),
            ("ops", false),
            ("calls", true),
            ("saved / call", true),
            ("saved in all", true),
            ("time saved", true),
            ("kernels' time", true),
            ("launches removed", true),
            ("host wait before them", true),
            ("evidence", false),
        ],
    );
    for o in &f.opportunities {
        let kernels: Vec<String> = o.kernels.iter().map(|k| super::kernel_cell(k).text).collect();
        t.rows.push(vec![
            Cell::text(&o.rule),
            Cell::text(kernels.join(" → ")),
            Cell::text(o.ops.join(" → ")),
            Cell::count(o.calls),
            Cell::bytes(o.saved_bytes_per_call),
            Cell::bytes(o.saved_bytes_per_call.saturating_mul(o.calls)),
            o.saved_us.map_or_else(|| Cell::text("no chip"), Cell::micros),
            Cell::micros(o.kernels_time_us),
            Cell::count(o.launches_removed),
            Cell::micros(o.host_wait_us),
            Cell::text(&o.evidence),
        ]);
    }
    t
}

/// Each op whose own GPU time and whole-subtree time differ (`docs/trace-fusion.md`, "Op time
/// both ways"): ours, as the op table attributes it, and TraceLens's, so a peer's per-op figure
/// is always on the page.
pub fn op_times_table(f: &TraceFusion, id: &'static str, title: &str) -> DataTable {
    let mut t = DataTable::new(
        id,
        format!(
            "{title}: {} whose own kernels (ours, the op table's) and whole subtree (TraceLens's) differ",
            plural(f.op_times.len() as u64, "op", "ops")
        ),
        &[("op", false), ("input dims", false), ("calls", true), ("own kernels", true), ("whole subtree", true)],
    );
    for o in &f.op_times {
        let dims = if o.input_dims.is_null() { String::new() } else { o.input_dims.to_string() };
        t.rows.push(vec![
            Cell::text(&o.op),
            Cell::long_text(&dims, 60),
            Cell::count(o.calls),
            Cell::micros(o.own_us),
            Cell::micros(o.subtree_us),
        ]);
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use analysis::pipeline::{set_fusion, time_report, Choices};
    use analysis::summarize;
    use analysis::summary::ClassifiedTrace;
    use formats::read_trace;

    /// The torch.compile MI300X trace's fusion as opening its file on the page gives it.
    fn compiled() -> TraceFusion {
        opened("tests/data/traces/amd/torch_compile_triton_mi300x.json.gz")
    }

    /// A trace's fusion as opening its file on the page gives it.
    fn opened(path: &str) -> TraceFusion {
        let bytes = std::fs::read(format!("{}/{path}", concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))).unwrap();
        let trace = read_trace(&bytes).unwrap();
        let side = ClassifiedTrace::new(&trace);
        let summary = summarize(&ClassifiedTrace::new(&trace), None);
        let mut time = time_report(&side, &Choices::default());
        set_fusion(&mut time, &side, summary.structure.as_deref(), &Choices::default());
        time.fusion.unwrap()
    }

    #[test]
    fn the_coverage_names_whose_gap_the_unknown_time_is() {
        // Qwen's H100 trace: the kernels before the CPU window are not recorded, every op with
        // shapes has bytes.
        let f = opened("tests/data/traces/nvidia/hf_qwen1.5-0.5b_eager_h100.json.gz");
        let t = &f.totals;
        assert!(t.unknown_us.not_recorded > 0.0 && t.unknown_us.no_model == 0.0, "{t:?}");
        let text = coverage_text(t);
        let share = format_pct(100.0 * t.unknown_us.not_recorded / t.gpu_time_us);
        assert!(text.ends_with(&format!("and for 100.00 % of the time the trace records what they need; unknown: {share} not recorded by the trace")), "{text}");
        // A trace recorded without shapes has no time whose bytes it could give.
        let f = opened("tests/data/exec-trace/hta_simple_add_kineto.json.gz");
        assert_eq!(f.totals.unknown_us.not_recorded, f.totals.gpu_time_us);
        let text = coverage_text(&f.totals);
        assert!(
            text.contains("the trace records what they need for none of it; unknown: 100.00 % not recorded"),
            "{text}"
        );
    }

    #[test]
    fn tables_hold_every_group_and_opportunity_with_the_reports_figures() {
        let f = compiled();
        let groups = fusion_groups_table(&f, "fusion-groups", "Kernel groups");
        assert_eq!(groups.rows.len(), f.groups.len());
        let calls: u64 = groups.rows.iter().map(|r| r[2].exact.parse::<u64>().unwrap()).sum();
        assert_eq!(calls, f.totals.events);
        // Each row's saved bytes are its unfused minus fused bytes.
        for (row, g) in groups.rows.iter().zip(&f.groups) {
            if let (Some(fu), Some(un)) = (g.fused_bytes_per_call, g.unfused_bytes_per_call) {
                assert_eq!(row[8].exact, (un - fu).to_string(), "{}", g.kernel);
            }
        }
        let opportunities = opportunities_table(&f, "opportunities", "Left on the table");
        assert_eq!(opportunities.rows.len(), f.opportunities.len());
        // Op time both ways: a row per op whose figures differ; the flash-attention op holds
        // its kernel only in its subtree (an inner op launched it).
        let both = op_times_table(&f, "op-times", "Op time both ways");
        assert_eq!(both.rows.len(), f.op_times.len());
        let sdpa = f.op_times.iter().position(|o| o.op == "aten::_scaled_dot_product_flash_attention").expect("sdpa");
        assert_eq!(both.rows[sdpa][3].exact, f.op_times[sdpa].own_us.to_string());
        assert_eq!(both.rows[sdpa][4].exact, f.op_times[sdpa].subtree_us.to_string());
        assert!(f.op_times[sdpa].subtree_us > f.op_times[sdpa].own_us);
    }

    #[test]
    fn a_trace_with_shapes_draws_its_bars() {
        let f = compiled();
        assert_eq!(no_bytes_statement(&f, TraceFormat::Kineto), None);
    }

    #[test]
    fn a_cut_opportunity_list_says_how_many_its_totals_cover() {
        let mut f = opened("www/examples/hf_bert-small_eager_h100.json.gz");
        let all = f.opportunities.len();
        assert!(all > 2, "{all}");
        assert_eq!(f.totals.opportunities, all as u64);
        let whole = fusion_headline(&f);
        assert!(whole.contains(&format!("; {all} opportunities left on the table by the")), "{whole}");
        assert!(!whole.contains("that save most are listed"));
        // As a share link keeps them: the two that save most, the totals whole.
        f.opportunities.truncate(2);
        let cut = fusion_headline(&f);
        assert!(cut.contains(&format!("; {all} opportunities left on the table by the")), "{cut}");
        assert!(cut.ends_with("(the 2 that save most are listed)."), "{cut}");
        assert!(cut.contains(&format_bytes(f.totals.opportunity_bytes)));
        // One opportunity is one.
        f.opportunities.truncate(1);
        f.totals.opportunities = 1;
        assert!(fusion_headline(&f).contains("; 1 opportunity left on the table by the"));
        assert!(fusion_headline(&f).contains(" rules saves "));
    }

    #[test]
    fn the_total_chart_draws_the_totals_and_the_group_chart_only_known_bytes() {
        let f = compiled();
        let total = fusion_total_chart(&[("", &f)]);
        assert_eq!(total.rows[0].values[0].total(), f.totals.unfused_bytes);
        assert_eq!(total.rows[0].values[1].total(), f.totals.fused_bytes);
        assert!(total.to_svg().contains("read + written"));
        let per_group = fusion_group_chart(&f);
        let known = f.groups.iter().filter(|g| g.bytes_known()).count().min(CHART_GROUPS);
        assert_eq!(per_group.rows.len(), known);
        let drawn: u64 = per_group.rows.iter().map(|r| r.values[1].total()).sum();
        assert!(drawn <= f.totals.fused_bytes);
        assert!(fusion_headline(&f).contains(&format_bytes(f.totals.saved_by_fusion_bytes)));
    }

    #[test]
    fn picking_a_chip_re_measures_the_opportunities_as_analysing_with_it_does() {
        use analysis::trace_fusion::{analyse, BuiltIn, FusionOptions};
        use hardware::preset;
        let bytes = std::fs::read(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../tests/data/traces/nvidia/hf_qwen1.5-0.5b_eager_h100.json.gz"
        ))
        .unwrap();
        let trace = read_trace(&bytes).unwrap();
        let side = ClassifiedTrace::new(&trace);
        let mi300x = preset("mi300x").unwrap();
        let with = |chip| {
            analyse(
                &side,
                &FusionOptions {
                    rules: BuiltIn::Inductor.rules(),
                    chip,
                    calibration: None,
                    exec_trace: None,
                    structure: None,
                },
            )
        };
        let direct = with(Some(&mi300x));
        let mut picked = with(None);
        assert!(picked.opportunities.iter().all(|o| o.saved_us.is_none()));
        picked.with_chip(&mi300x);
        assert!(!direct.opportunities.is_empty());
        assert_eq!(picked.opportunities, direct.opportunities);
        assert_eq!(picked.totals, direct.totals);
        assert_eq!(picked.chip, direct.chip);
    }
}
