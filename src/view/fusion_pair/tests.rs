use super::*;
use analysis::compare::{compare, Input};
use analysis::summary::ClassifiedTrace;
use analysis::trace_fusion::dag::fusion_with_dag;
use analysis::trace_fusion::{BuiltIn, FusionOptions};
use formats::read_trace;
use trace::Trace;

fn read(path: &str) -> Trace {
    let bytes =
        std::fs::read(format!("{}/tests/data/traces/{path}", concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))).unwrap();
    read_trace(&bytes).unwrap()
}

fn fusion_of(trace: &Trace) -> (TraceFusion, FusionDag) {
    let side = ClassifiedTrace::new(trace);
    let options = FusionOptions::rules_only(BuiltIn::Inductor.rules());
    let (f, d) = fusion_with_dag(&side, &options);
    (f, d.unwrap())
}

#[test]
fn the_qwen_pair_shows_each_sides_aligned_layer_and_marks_the_differences_kernels() {
    let files = ["nvidia/hf_qwen1.5-0.5b_eager_h100.json.gz", "amd/hf_qwen1.5-0.5b_eager_mi300x.json.gz"];
    let traces = files.map(read);
    let c = compare(Input::new(&traces[0], Some("nv.json.gz")), Input::new(&traces[1], Some("amd.json.gz")));
    // The comparison's sides in its order, each with its own trace's analysis.
    let order: Vec<usize> =
        c.platforms.iter().map(|p| if p.file.as_deref() == Some("nv.json.gz") { 0 } else { 1 }).collect();
    let analysed: Vec<(TraceFusion, FusionDag)> = order.iter().map(|&i| fusion_of(&traces[i])).collect();
    let sides = [(&analysed[0].0, &analysed[0].1), (&analysed[1].0, &analysed[1].1)];
    let p = aligned_pair(&c, sides).unwrap();
    let a = &c.layer_alignment[0];
    for (i, s) in p.sides.iter().enumerate() {
        assert_eq!(s.key, c.platforms[i].key);
        let (f, dag) = sides[i];
        let w = &dag.windows[s.window];
        // The window is the first layer of the phase the comparison aligned, as long as the
        // alignment's layer.
        assert_eq!(w.phase, Some(a.phases[&s.key]));
        assert_eq!(w.layer, Some(0));
        assert_eq!(w.kernels, a.kernels_per_layer[&s.key]);
        // Its traffic adds each drawn launch's per-call bytes, where both are known.
        let known: Vec<(u64, u64)> = w
            .boxes
            .iter()
            .filter_map(|b| f.groups[b.group].unfused_bytes_per_call.zip(f.groups[b.group].fused_bytes_per_call))
            .collect();
        assert_eq!(s.unfused_bytes, known.iter().map(|k| k.0).sum::<u64>());
        assert_eq!(s.fused_bytes, known.iter().map(|k| k.1).sum::<u64>());
        assert_eq!(s.unknown, w.boxes.len() - known.len());
        assert!(s.fused_bytes <= s.unfused_bytes);
    }
    // Every difference shown names boxes whose kernels are the difference's.
    assert!(!c.fusion_differences.is_empty());
    for d in &p.differences {
        let diff = &c.fusion_differences[d.index];
        let fused = p.sides.iter().position(|s| s.key == diff.fused_side).unwrap();
        for (side, boxes) in d.boxes.iter().enumerate() {
            let (f, dag) = sides[side];
            let w = &dag.windows[p.sides[side].window];
            for &b in boxes {
                let kernel = &f.groups[w.boxes[b].group].kernel;
                if side == fused {
                    assert_eq!(kernel, &diff.fused_kernel);
                } else {
                    assert!(diff.unfused_kernels.contains(kernel), "{kernel}");
                }
            }
        }
    }
    assert!(!p.differences.is_empty(), "some difference names kernels of the aligned layer");
    // The label says where the second side's layer lines up when the alignment rotated it.
    assert_eq!(p.label.contains("The alignment reads"), a.rotation > 0, "{}", p.label);
    assert!(p.label.ends_with(&rotation_note(a.rotation, [&p.sides[0].key, &p.sides[1].key])));
    let chart = pair_traffic_chart(&p).unwrap();
    assert_eq!(chart.rows.len(), 2);
    assert_eq!(pair_bytes_unknown(&p), None);
    assert_eq!(chart.rows[1].values[1].total(), p.sides[1].fused_bytes);
    assert!(p.label.starts_with("The aligned layer"), "{}", p.label);
    // The Qwen pair's one difference: the MI300X runs the layer's bf16 copy as two launches of
    // one kernel, the H100 as one. Named, not counted as "1 kernel"; the evidence counts.
    let keys = [p.sides[0].key.as_str(), p.sides[1].key.as_str()];
    let d = &c.fusion_differences[0];
    assert_eq!(d.unfused_kernels.len(), 1);
    assert!(d.evidence.contains("2 kernels per layer on amd vs 1 on nvidia"), "{}", d.evidence);
    assert_eq!(
        difference_line(d, keys),
        "nvidia runs elementwise: direct_copy where amd runs elementwise_manual_unroll: direct_copy"
    );
}

/// The other side's kernels by name, each once, at most three; a side with no kernel of its
/// own in their place runs none.
#[test]
fn a_difference_names_the_other_sides_kernels_each_once() {
    let d = |fused: &str, unfused: &[&str]| FusionDifference {
        fused_platform: "NVIDIA".into(),
        fused_side: "nvidia".into(),
        fused_kernel: fused.into(),
        components: Vec::new(),
        unfused_kernels: unfused.iter().map(|s| s.to_string()).collect(),
        count: 1,
        time_us: Default::default(),
        confidence: 1.0,
        evidence: String::new(),
    };
    let keys = ["amd", "nvidia"];
    assert_eq!(difference_line(&d("f", &["a", "b"]), keys), "nvidia runs f where amd runs a and b");
    assert_eq!(difference_line(&d("f", &["a", "b", "c"]), keys), "nvidia runs f where amd runs a, b and c");
    assert_eq!(
        difference_line(&d("f", &["a", "b", "c", "d", "e"]), keys),
        "nvidia runs f where amd runs a, b, c and 2 more kernels"
    );
    assert_eq!(difference_line(&d("", &["a"]), ["nvidia", "amd"]), "amd runs a where nvidia runs none");
}

#[test]
fn a_rotated_alignment_says_where_the_second_sides_layer_lines_up() {
    assert_eq!(rotation_note(0, ["nvidia", "amd"]), "");
    assert_eq!(
        rotation_note(3, ["nvidia", "amd"]),
        ". The alignment reads amd's layer from its box 4 (wrapping around to box 1), which lines up with nvidia's \
         box 1; it is drawn from box 1 in launch order, so that every arrow runs from an earlier launch to a later one"
    );
}
