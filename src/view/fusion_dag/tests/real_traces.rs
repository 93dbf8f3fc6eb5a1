//! The group drawing of real traces' windows: boxes in launch order, their lines, the SVG and
//! the details of a box (the windows themselves are the analysis's, `analysis::trace_fusion::dag`).

use super::super::*;
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

fn options<'a>() -> FusionOptions<'a> {
    FusionOptions::rules_only(BuiltIn::Inductor.rules())
}

/// Kernel indices of the main stream that start inside `[start, end]` µs, in start order: a
/// step's kernels found from its report entry alone.
fn stream_kernels_between(trace: &Trace, device: i64, stream: i64, start: f64, end: f64) -> Vec<usize> {
    let mut ks: Vec<usize> = (0..trace.kernels.len())
        .filter(|&i| {
            let k = &trace.kernels[i];
            k.device == device && k.stream == stream && k.ts >= start - 1e-3 && k.ts <= end + 1e-3
        })
        .collect();
    ks.sort_by(|&a, &b| trace.kernels[a].ts.total_cmp(&trace.kernels[b].ts));
    ks
}

#[test]
fn a_trace_without_layers_draws_its_step_on_the_main_stream_in_order() {
    let trace = read("amd/torch_compile_triton_mi300x.json.gz");
    let side = ClassifiedTrace::new(&trace);
    let (fusion, dag) = fusion_with_dag(&side, &options());
    let dag = dag.unwrap();
    assert_eq!(dag.windows.len(), 1);
    let w = &dag.windows[0];
    // One step without layers: every kernel of the busiest (device, stream), in start order.
    let mut count: std::collections::BTreeMap<(i64, i64), usize> = Default::default();
    for k in &trace.kernels {
        *count.entry((k.device, k.stream)).or_default() += 1;
    }
    let (&(device, stream), _) = count.iter().max_by_key(|(_, &n)| n).unwrap();
    let kernels = stream_kernels_between(&trace, device, stream, f64::MIN, f64::MAX);
    let names: Vec<&str> = kernels.iter().map(|&k| trace.name(trace.kernels[k].name)).collect();
    let boxes: Vec<&str> = w.boxes.iter().map(|b| b.kernel.as_str()).collect();
    assert_eq!(boxes, names);
    assert_eq!((w.kernels, w.hidden), (names.len(), 0));
    // Every Inductor kernel's box lists its op words.
    for b in &w.boxes {
        let g = &fusion.groups[b.group];
        if g.kernel.starts_with("triton_") {
            assert_eq!(box_lines(g), g.ops.iter().map(|o| o.op.clone()).collect::<Vec<_>>());
            assert!(box_lines(g).len() >= 2);
        }
    }
    // The drawing has a box per launch and a route per edge.
    let (gg, layout) = window_drawing(w, &fusion);
    assert_eq!(layout.nodes.len(), w.boxes.len());
    assert_eq!(layout.routes.len(), w.edges.len());
    for e in &w.edges {
        assert!(gg.layer[e.to] > gg.layer[e.from]);
    }
}

#[test]
fn box_lines_list_ops_or_a_library_kernels_parts_or_say_no_op() {
    let trace = read("amd/torch_compile_triton_mi300x.json.gz");
    let side = ClassifiedTrace::new(&trace);
    let fusion = analysis::trace_fusion::analyse(&side, &options());
    let attn = fusion.groups.iter().find(|g| g.kernel == "attn_fwd").unwrap();
    assert!(attn.parts.len() >= 2, "{:?}", attn.parts);
    assert_eq!(box_lines(attn), attn.parts);
    let qwen = read("nvidia/hf_qwen1.5-0.5b_eager_h100.json.gz");
    let side = ClassifiedTrace::new(&qwen);
    let fusion = analysis::trace_fusion::analyse(&side, &options());
    let orphan = fusion.groups.iter().find(|g| g.ops.is_empty() && g.launched_by.is_none()).unwrap();
    assert_eq!(box_lines(orphan), ["no CPU op"]);
}

#[test]
fn the_svg_draws_a_box_per_launch_an_edge_per_hand_off_and_the_details_name_the_groups_ops() {
    let trace = read("amd/hf_qwen1.5-0.5b_eager_mi300x.json.gz");
    let side = ClassifiedTrace::new(&trace);
    let (fusion, dag) = fusion_with_dag(&side, &options());
    let w = &dag.unwrap().windows[1];
    let marked = [w.boxes[2].group];
    let svg = window_svg(w, &fusion, "dag-boxes", &marked, Some(0), 1.0);
    assert_eq!(svg.matches("data-box=\"").count(), w.boxes.len());
    assert_eq!(svg.matches("class=\"dag-edge\"").count(), w.edges.len());
    // Every launch of the marked group is marked (a layer runs some kernels more than once).
    let marked_boxes = w.boxes.iter().filter(|b| b.group == marked[0]).count();
    assert_eq!(svg.matches(" marked\"").count(), marked_boxes);
    assert_eq!(svg.matches(" selected").count(), 1);
    assert!(svg.contains(&format!("data-box=\"3\" data-group=\"{}\"", w.boxes[2].group)));
    let g = &fusion.groups[w.boxes[2].group];
    let details = box_details_html(w, &fusion, 2, "").unwrap();
    for o in &g.ops {
        assert!(details.contains(&format!("<code>{}</code>", o.op)), "{details}");
    }
    assert!(details.contains(&format!("Known from: {}", g.how.text())));
    assert!(box_details_html(w, &fusion, w.boxes.len(), "").is_none());
}

#[test]
fn a_window_of_mostly_unlinked_kernels_draws_its_linked_ones_first_and_the_rest_in_rows() {
    use draw::group_graph::{metrics::BOX_WIDTH, LOOSE_ROW_BOXES};
    // A TorchRec step's first 64 kernels: fills and copies, few sharing a tensor.
    let trace = read("nvidia/hta_a100_compiled_rank0.json.gz");
    let side = ClassifiedTrace::new(&trace);
    let (fusion, dag) = fusion_with_dag(&side, &options());
    let w = &dag.unwrap().windows[0];
    let (gg, layout) = window_drawing(w, &fusion);
    let linked: Vec<usize> =
        (0..w.boxes.len()).filter(|&b| !gg.preds[b].is_empty() || !gg.succs[b].is_empty()).collect();
    let loose = w.boxes.len() - linked.len();
    assert!(!linked.is_empty() && loose > w.boxes.len() / 2, "{} linked of {}", linked.len(), w.boxes.len());
    // Every loose box lies below every linked one, in launch order row by row.
    let linked_bottom = linked.iter().map(|&b| layout.nodes[b].y + layout.nodes[b].height).fold(0.0, f64::max);
    let loose_at: Vec<(f64, f64)> =
        (0..w.boxes.len()).filter(|b| !linked.contains(b)).map(|b| (layout.nodes[b].y, layout.nodes[b].x)).collect();
    assert!(loose_at.iter().all(|&(y, _)| y > linked_bottom));
    assert!(loose_at.windows(2).all(|p| p[0].0 < p[1].0 || (p[0].0 == p[1].0 && p[0].1 < p[1].1)));
    // The drawing is as wide as its widest layer of linked boxes or the rows, not 64 boxes.
    let widest_layer = gg.layers().iter().map(|l| l.iter().filter(|b| linked.contains(b)).count()).max().unwrap();
    let boxes_wide = (layout.width / BOX_WIDTH).floor() as usize;
    assert!(
        boxes_wide <= widest_layer.max(LOOSE_ROW_BOXES) + 1,
        "{boxes_wide} boxes wide for a widest layer of {widest_layer}"
    );
    println!(
        "{} kernels: {} linked, {loose} loose; drawing {:.0} × {:.0}",
        w.boxes.len(),
        linked.len(),
        layout.width,
        layout.height
    );
}
