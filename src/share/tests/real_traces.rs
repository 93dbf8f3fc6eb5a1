use super::*;

const SHARED_TRACES: [&str; 9] = [
    "nvidia/hf_bert-small_eager_h100.json.gz",
    "nvidia/hf_qwen1.5-0.5b_eager_h100.json.gz",
    "nvidia/hta_a100_compiled_rank0.json.gz",
    "nvidia/tracelens_eager_b200.json.gz",
    "amd/hf_bert-small_eager_mi300x.json.gz",
    "amd/hf_qwen1.5-0.5b_eager_mi300x.json.gz",
    "amd/hta_mi250_minitoy_train_rocm6.2.json.gz",
    "amd/sglang_qwen3-8b_decode_hipgraph_mi300x.json.gz",
    "amd/torch_compile_triton_mi300x.json.gz",
];

/// Typical links must stay under 8 KB so that they paste into chat and review tools. Every
/// shared trace alone and every pair of them (including the A100-vs-B200 pair, which needs
/// both the compact form of [`crate::compact`] and the shortened names to fit) makes a
/// link under 8 KB that opens to the same view: equal state, and tables that read as the
/// untrimmed names did.
fn c_vendor(t: &trace::Trace) -> trace::Vendor {
    trace::platform::detect_vendor(t).0
}

#[test]
fn every_shared_trace_and_pair_makes_a_link_under_8_kb_that_round_trips() {
    use analysis::{compare, summarize, Input};
    use view::comparison_tables;
    let traces: Vec<_> = SHARED_TRACES.iter().map(|n| trace(n)).collect();
    let shown = |tables: Vec<table::DataTable>| tables.iter().map(|t| t.shown_table()).collect::<Vec<_>>();
    // Every state within the limits a link is opened with, with room (the largest and the
    // longest kernel name are what `limits` quotes; `--nocapture` shows them).
    let mut largest = (0, String::new());
    let mut longest_kernel = 0;
    let mut measure = |what: &str, view: &SharedView| {
        let state = SharedState::from(view.clone());
        assert_eq!(check_shareable(&state), Ok(()), "{what}");
        largest = largest.clone().max((state_json(&state).len(), what.to_string()));
    };
    // As opening the file on the page gives it: with the fusion analysis.
    let report = |t| {
        let side = analysis::summary::ClassifiedTrace::new(t);
        analysis::pipeline::report(&side, None, &Default::default())
    };
    let mut sizes = Vec::new();
    let mut fewest_gap_rows = usize::MAX;
    let mut fewest_fusion_groups = usize::MAX;
    let mut totals_only = Vec::new();
    for (t, name) in traces.iter().zip(SHARED_TRACES) {
        let (summary, trimmed) = trim_summary(&summarize(&analysis::summary::ClassifiedTrace::new(t), Some(name)));
        let (time, time_cut) = trim_time(&report(t));
        let (time, trimmed) = (Some(Box::new(time)), trimmed || time_cut);
        for r in &summary.categories {
            longest_kernel = r.trace.kernels.iter().map(|k| k.name.chars().count()).fold(longest_kernel, usize::max);
        }
        let view = fit_time_rows(
            SharedView::TraceSummary { file_name: name.into(), summary, trimmed, time, overview: None }.into(),
        )
        .view;
        measure(name, &view);
        let SharedView::TraceSummary { time: Some(shared_time), .. } = &view else { panic!("{name}: no time report") };
        let fusion = shared_time.fusion.as_ref().unwrap_or_else(|| panic!("{name}: the link lost the fusion groups"));
        assert!(!fusion.groups.is_empty() && fusion.groups.len() <= crate::SHARED_FUSION_GROUPS, "{name}");
        let link = encode(&view.clone().into());
        sizes.push((link.len(), name.to_string()));
        assert!(link.len() < 8 * 1024, "{name}: {} bytes", link.len());
        assert_eq!(decode(&link).unwrap().view, view, "{name}");
    }
    for i in 0..traces.len() {
        for j in i + 1..traces.len() {
            let (a, b) = (SHARED_TRACES[i], SHARED_TRACES[j]);
            let c = compare(Input::new(&traces[i], Some(a)), Input::new(&traces[j], Some(b)));
            let (small, trimmed) = trim_comparison(&c);
            let (ti, tj) = (report(&traces[i]), report(&traces[j]));
            let (k0, k1) = (c.platforms[0].key.as_str(), c.platforms[1].key.as_str());
            let swap = analysis::compare::swapped(c_vendor(&traces[i]), c_vendor(&traces[j]));
            let (first, second) = if swap { (&tj, &ti) } else { (&ti, &tj) };
            let whole_gap = analysis::time::gap::gap((k0, &first.op_table()), (k1, &second.op_table()));
            let (gap, gap_cut) = trim_gap(&whole_gap);
            // The overview as the sender's page computed it, from the whole reports.
            let facts = [analysis::findings::SideFacts::of(first), analysis::findings::SideFacts::of(second)];
            let overview = analysis::findings::pair_overview(&c, Some(&whole_gap), facts);
            // Both sides' fusion, as the page's link makes it from the sides' reports.
            let (fusion, fusion_cut) =
                crate::fusion_pair([first.fusion.as_ref().unwrap(), second.fusion.as_ref().unwrap()]);
            let view = fit_time_rows(
                SharedView::TraceComparison {
                    files: (a.into(), b.into()),
                    comparison: small,
                    trimmed: trimmed || gap_cut || fusion_cut,
                    gap: Some(Box::new(gap)),
                    fusion: Some(Box::new(fusion)),
                    overview: Some(Box::new(overview)),
                }
                .into(),
            )
            .view;
            if let SharedView::TraceComparison { gap: Some(g), fusion, .. } = &view {
                fewest_gap_rows = fewest_gap_rows.min(g.rows.len());
                // Each side keeps its longest groups (at least one) in the report's order, its
                // totals whole, and the opportunities that save most.
                let huge = [a, b].iter().any(|n| n.contains("a100_compiled"));
                // The pairs of a 450 ms training step (the A100 TorchRec trace) against an
                // inference run have the largest comparisons (up to 3.5 KB of op mapping): the
                // gap's rows come first, and its groups may all be cut.
                let sides = fusion.as_deref().map_or(&[][..], |f| &f[..]);
                if sides.is_empty() {
                    assert!(huge, "{a} vs {b}: the link lost the fusion");
                    totals_only.push(format!("{a} vs {b} (none)"));
                }
                for (shared, whole) in sides.iter().zip([first, second].map(|t| t.fusion.as_ref().unwrap())) {
                    let mut totals = shared.totals.clone();
                    totals.gpu_time_definition = whole.totals.gpu_time_definition.clone();
                    assert_eq!(totals, whole.totals, "{a} vs {b}");
                    assert!(huge || !shared.groups.is_empty(), "{a} vs {b}");
                    for (g, w) in shared.groups.iter().zip(&whole.groups) {
                        assert_eq!((g.calls, g.fused_bytes_per_call), (w.calls, w.fused_bytes_per_call), "{a} vs {b}");
                    }
                    for (o, w) in shared.opportunities.iter().zip(&whole.opportunities) {
                        assert_eq!(o.saved_bytes_per_call, w.saved_bytes_per_call, "{a} vs {b}");
                    }
                }
                let kept = sides.iter().map(|s| s.groups.len()).min().unwrap_or(0);
                if sides.is_empty() {
                } else if kept > 0 {
                    fewest_fusion_groups = fewest_fusion_groups.min(kept);
                } else {
                    totals_only.push(format!("{a} vs {b}"));
                }
            }
            measure(&format!("{a} vs {b}"), &view);
            let link = encode(&view.clone().into());
            sizes.push((link.len(), format!("{a} vs {b}")));
            assert!(link.len() < 8 * 1024, "{a} vs {b}: {} bytes", link.len());
            let back = decode(&link).unwrap().view;
            assert_eq!(back, view, "{a} vs {b}");
            let SharedView::TraceComparison { comparison: back, .. } = back else { unreachable!() };
            // Shortened names read as the full ones did.
            assert_eq!(
                shown(comparison_tables(&back)),
                shown(comparison_tables(&trim_comparison_lists(&c).0)),
                "{a} vs {b}"
            );
        }
    }
    sizes.sort();
    eprintln!(
        "largest trace state: {} bytes ({}); longest kernel name: {longest_kernel} characters; largest link: {:?}",
        largest.0,
        largest.1,
        sizes.last()
    );
    assert!(largest.0 * 10 < SHARE_STATE_BYTES, "{largest:?}");
    // Even the largest pair keeps the largest differences, and each side's longest groups.
    assert!(fewest_gap_rows >= 4, "{fewest_gap_rows}");
    eprintln!("fewest fusion groups a pair's side keeps: {fewest_fusion_groups}; totals only: {totals_only:?}");
    // Only the training step's pairs may lose their groups; every other pair keeps some.
    assert!(totals_only.iter().all(|p| p.contains("a100_compiled")), "{totals_only:?}");
    assert!(fewest_fusion_groups >= 1, "{fewest_fusion_groups}");
    assert!(longest_kernel * 8 < limits::SHARED_NAME_CHARS, "{longest_kernel}");
}

/// Serving traces' links carry the Layers view: a trace's steps, phases and layer, a pair's
/// aligned layers, within 8 KB, and they open to the same tables.
#[test]
fn serving_links_carry_the_structure_and_the_aligned_layers() {
    use analysis::{compare, summarize, Input};
    use view::layers::{alignment_table, layer_table, phase_table};
    let t = trace("amd/vllm_decode_graph_full_replay.json.gz");
    let (summary, trimmed) = trim_summary(&summarize(&analysis::summary::ClassifiedTrace::new(&t), Some("v.json.gz")));
    let view = fit_time_rows(
        SharedView::TraceSummary { file_name: "v".into(), summary, trimmed, time: None, overview: None }.into(),
    );
    let link = encode(&view);
    assert!(link.len() < TYPICAL_LINK_BYTES, "{}", link.len());
    assert_eq!(check_limits(&decode(&link).unwrap()), Ok(()));
    let SharedView::TraceSummary { summary: back, .. } = decode(&link).unwrap().view else { unreachable!() };
    let st = back.structure.as_deref().expect("the structure is carried");
    assert_eq!(st.phases[0].layers_per_step, 24);
    let SharedView::TraceSummary { summary: sent, .. } = &view.view else { unreachable!() };
    let sent = sent.structure.as_deref().unwrap();
    assert_eq!(phase_table(st), phase_table(sent));
    assert_eq!(layer_table(st), layer_table(sent));

    let (a, b) = (trace(SHARED_TRACES[7]), trace("amd/sglang_qwen3-8b_prefilldecode_mi300x.json.gz"));
    let c = compare(Input::new(&a, Some("d")), Input::new(&b, Some("p")));
    assert!(!c.layer_alignment.is_empty());
    let (small, trimmed) = trim_comparison(&c);
    let view = fit_time_rows(
        SharedView::TraceComparison {
            files: ("d".into(), "p".into()),
            comparison: small,
            trimmed,
            gap: None,
            fusion: None,
            overview: None,
        }
        .into(),
    );
    let link = encode(&view);
    assert!(link.len() < TYPICAL_LINK_BYTES, "{}", link.len());
    let SharedView::TraceComparison { comparison: back, .. } = decode(&link).unwrap().view else { unreachable!() };
    let SharedView::TraceComparison { comparison: sent, .. } = &view.view else { unreachable!() };
    assert!(!back.layer_alignment.is_empty(), "the aligned layers are carried");
    assert_eq!(alignment_table(&back.layer_alignment, ["a", "b"]), alignment_table(&sent.layer_alignment, ["a", "b"]));
}

/// The largest states of the tests' graphs, op traces and simulator tables, measured against
/// [`SHARE_STATE_BYTES`] (the figures its doc comment quotes; run with `--nocapture` to see
/// them; the trace views are measured by
/// `every_shared_trace_and_pair_makes_a_link_under_8_kb_that_round_trips`). Each passes every
/// limit, with room.
#[test]
fn real_states_are_far_under_the_state_limit() {
    let mut largest: Vec<(usize, String)> = Vec::new();
    let mut measure = |what: String, state: SharedState| {
        assert_eq!(check_shareable(&state), Ok(()), "{what}");
        largest.push((state_json(&state).len(), what));
    };
    measure("500-op graph".into(), SharedView::of_graph("random.json", &random_graph(500, 7)).into());
    let dir = |d: &str| {
        let mut files: Vec<_> =
            std::fs::read_dir(format!("{}/tests/data/{d}", concat!(env!("CARGO_MANIFEST_DIR"), "/../..")))
                .unwrap()
                .map(|e| e.unwrap().path())
                .collect();
        files.sort();
        files
    };
    for path in dir("optrace").into_iter().filter(|p| p.extension().is_some_and(|e| e == "optrace")) {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(&path).unwrap();
        measure(name.clone(), SharedView::OpTrace { file_name: name, text }.into());
    }
    for path in dir("ops-csv").into_iter().filter(|p| p.extension().is_some_and(|e| e == "csv")) {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(&path).unwrap();
        let inferred = simcsv::infer_setup(&name, &simcsv::parse_sim_csv(&text).unwrap());
        let view = SharedView::SimTable { file_name: name.clone(), text, setup: inferred.setup, notes: inferred.notes };
        measure(name, view.into());
    }
    largest.sort();
    for (bytes, what) in largest.iter().rev().take(3) {
        eprintln!("{bytes} bytes: {what}");
    }
    let (bytes, what) = largest.last().unwrap();
    assert!(bytes * 10 < SHARE_STATE_BYTES, "{what}: {bytes} bytes");
}

proptest::proptest! {
    #[test]
    fn never_panics_on_any_fragment(s in "\\PC{0,200}") {
        let _ = decode(&s);
        let _ = decode(&format!("s=1.{s}"));
    }
}

/// An eight-rank synthetic job's Ranks view, as the page's worker draws it.
fn eight_ranks() -> view::ranks::RanksDrawn {
    use analysis::ranks::job_report;
    use analysis::ranks::synthetic::SyntheticJob;
    use import::read_rank;
    let job = SyntheticJob { world_size: 8, steps: 12, ..SyntheticJob::small() };
    let job = SyntheticJob {
        extra_us: (0..8).map(|r| if r == 5 { 400 } else { 10 * r }).collect(),
        offsets_us: (0..8).map(|r| 37 * r as u64).collect(),
        straggler: 5,
        ..job
    };
    let summaries: Vec<_> = (0..8)
        .map(|r| {
            let name = format!("job_0123456789/trace_rank{r}.json.gz");
            read_rank(&name, [job.rank_trace(r).as_bytes()]).unwrap()
        })
        .collect();
    view::ranks::RanksDrawn::of(&job_report(&summaries).unwrap()).unwrap()
}

#[test]
fn eight_ranks_make_a_link_under_8_kb_that_round_trips() {
    let drawn = eight_ranks();
    let collectives = drawn.tables.iter().find(|t| t.id == "collectives").unwrap();
    assert!(collectives.rows.len() > SHARED_COLLECTIVE_ROWS, "{} rows: nothing to trim", collectives.rows.len());
    let small = trim_ranks(&drawn);
    assert!(small.trimmed && small.report_json.is_empty());
    let kept = small.tables.iter().find(|t| t.id == "collectives").unwrap();
    assert_eq!(kept.rows.len(), SHARED_COLLECTIVE_ROWS);
    // The rows with the largest start skew, in the table's order.
    let skew = |rows: &[Vec<(String, String, Option<f64>)>]| rows.iter().map(|r| r[5].2.unwrap()).collect::<Vec<_>>();
    let mut all = skew(&collectives.rows);
    all.sort_by(|a, b| b.total_cmp(a));
    let mut got = skew(&kept.rows);
    got.sort_by(|a, b| b.total_cmp(a));
    assert_eq!(got, all[..SHARED_COLLECTIVE_ROWS]);
    // The other tables and the strips stay whole.
    assert_eq!(small.tables[0], drawn.tables[0]);
    assert_eq!(small.strips, drawn.strips);
    let state: SharedState = SharedView::Ranks { drawn: small.clone() }.into();
    check_shareable(&state).unwrap();
    let link = encode(&state);
    assert!(link.len() < 8 * 1024, "{} bytes", link.len());
    assert_eq!(decode(&link).unwrap().view, SharedView::Ranks { drawn: small });
}

#[test]
fn a_ranks_link_with_a_row_of_the_wrong_width_or_report_text_is_refused() {
    let mut d = trim_ranks(&eight_ranks());
    d.tables[0].rows[0].pop();
    let e = check_limits(&SharedView::Ranks { drawn: d }.into()).unwrap_err();
    assert!(e.to_string().contains("a row of the ranks table"), "{e}");
    let mut d = trim_ranks(&eight_ranks());
    d.report_json = "{}".into();
    assert!(check_limits(&SharedView::Ranks { drawn: d }.into()).is_err());
}

/// A trace opened with its execution trace (both shared pairs): its link, with the op rows
/// priced with the execution trace's shapes and the fusion that used it, stays under 8 KB and
/// opens to the same view.
#[test]
fn a_trace_opened_with_its_execution_trace_makes_a_link_under_8_kb_that_round_trips() {
    use analysis::exec_trace::parse_exec_trace;
    use analysis::summarize;
    use analysis::time::op_table::ShapesFrom;
    for run in ["param_linear", "hta_simple_add"] {
        let t = trace(&format!("../exec-trace/{run}_kineto.json.gz"));
        let bytes = std::fs::read(format!(
            "{}/tests/data/exec-trace/{run}_et.json.gz",
            concat!(env!("CARGO_MANIFEST_DIR"), "/../..")
        ))
        .unwrap();
        let text = import::text(&bytes, usize::MAX).unwrap();
        let et = parse_exec_trace(&text, "et.json.gz").unwrap();
        let side = analysis::summary::ClassifiedTrace::new(&t);
        let time = analysis::pipeline::report(
            &side,
            None,
            &analysis::pipeline::Choices::with_exec_trace(Some((&et, "et.json.gz"))),
        );
        let (summary, trimmed) = trim_summary(&summarize(&analysis::summary::ClassifiedTrace::new(&t), Some(run)));
        let (time, time_cut) = trim_time(&time);
        let view = SharedView::TraceSummary {
            file_name: run.into(),
            summary,
            trimmed: trimmed || time_cut,
            time: Some(Box::new(time)),
            overview: None,
        };
        let view = fit_time_rows(view.into()).view;
        let SharedView::TraceSummary { time: Some(shared), .. } = &view else { panic!("{run}: no time report") };
        assert!(shared.ops.iter().any(|r| r.shapes_from == ShapesFrom::ExecutionTrace), "{run}: rows kept");
        assert!(shared.fusion.as_ref().and_then(|f| f.exec_trace.as_ref()).is_some(), "{run}");
        let link = encode(&view.clone().into());
        assert!(link.len() < 8 * 1024, "{run}: {} bytes", link.len());
        assert_eq!(decode(&link).unwrap().view, view, "{run}");
    }
}
