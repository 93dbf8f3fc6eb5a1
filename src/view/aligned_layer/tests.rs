use std::collections::BTreeMap;

use super::*;
use analysis::compare::RowSide;
use classify::category::Category;

fn side(kernels: &[&str], time_us: f64) -> Option<RowSide> {
    Some(RowSide { kernels: kernels.iter().map(|k| k.to_string()).collect(), time_us })
}

fn row(category: Category, a: Option<RowSide>, b: Option<RowSide>, difference: Option<&str>) -> LayerRow {
    LayerRow {
        category,
        sides: BTreeMap::from([("amd".to_string(), a), ("nvidia".to_string(), b)]),
        difference: difference.map(str::to_string),
    }
}

fn alignment(rows: Vec<LayerRow>) -> LayerAlignment {
    let both = |a: usize, b: usize| BTreeMap::from([("amd".to_string(), a), ("nvidia".to_string(), b)]);
    LayerAlignment {
        phases: both(0, 0),
        labels: BTreeMap::from([
            ("amd".to_string(), "decode".to_string()),
            ("nvidia".to_string(), "decode".to_string()),
        ]),
        layers_per_step: both(24, 24),
        kernels_per_layer: both(4, 3),
        time_per_layer_us: BTreeMap::from([("amd".to_string(), 30.0), ("nvidia".to_string(), 20.0)]),
        rotation: 0,
        rows,
    }
}

const KEYS: [&str; 2] = ["amd", "nvidia"];
const LABELS: [&str; 2] = ["MI300X (AMD)", "H100 (NVIDIA)"];

#[test]
fn a_fusion_difference_is_marked_on_its_row_with_both_sides_counts() {
    let a = alignment(vec![
        row(
            Category::Gemm,
            side(&["Cijk_Alik_Bljk_BBS_MT128x128x64_MI16x16x1"], 12.0),
            side(&["nvjet_tst_128x256_64x4_2x1_v_bz_coopA_TNT"], 8.0),
            None,
        ),
        row(
            Category::Elementwise,
            side(
                &[
                    "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float> >()",
                    "rms_norm_kernel",
                ],
                9.0,
            ),
            side(&["fused_add_rms_norm_kernel"], 6.0),
            Some("elementwise: 2 kernels per layer on amd vs 1 on nvidia"),
        ),
        row(Category::Memory, side(&["copy"], 3.0), None, Some("memory: 1 kernel per layer on amd vs none on nvidia")),
    ]);
    let svg = aligned_layer_svg(&a, KEYS, LABELS).unwrap();
    assert_eq!(svg.matches(r#"class="aligned-row""#).count(), 3);
    assert_eq!(svg.matches(r#"data-differs="true""#).count(), 2);
    assert!(svg.contains(">2 : 1<title>elementwise: 2 kernels per layer on amd vs 1 on nvidia</title>"), "{svg}");
    assert!(svg.contains(">1 : 0<title>"), "{svg}");
    assert!(svg.contains("nothing here"));
    // Library kernels read out, PyTorch's by their own name; the full name on hover.
    assert!(svg.contains(">hipBLASLt/Tensile: GEMM MT 128×128×64, MI 16×…<title>"), "{svg}");
    assert!(svg.contains(">vectorized_elementwise: add<title>"), "{svg}");
    // One time scale: the slowest cell (12 µs) fills its bar, 6 µs half of it.
    let full = CELL - 2.0 * PAD - TIME_W;
    assert!(svg.contains(&format!(r#"width="{full:.1}" height="{BAR}""#)), "{svg}");
    assert!(svg.contains(&format!(r#"width="{:.1}" height="{BAR}""#, full / 2.0)), "{svg}");
    assert!(svg.contains(r#">MI300X (AMD)</text>"#) && svg.contains(">decode · 4 kernels · 30.00 µs</text>"), "{svg}");
}

#[test]
fn a_strangers_kernel_name_stays_text() {
    let a = alignment(vec![row(
        Category::Other,
        side(&["<script>alert(1)</script>"], 1.0),
        side(&["\"><img onerror=x>"], 1.0),
        None,
    )]);
    let svg = aligned_layer_svg(&a, KEYS, LABELS).unwrap();
    assert!(!svg.contains("<script>") && !svg.contains("<img"), "{svg}");
    assert!(svg.contains("&lt;script&gt;"));
    assert!(aligned_layer_svg(&alignment(Vec::new()), KEYS, LABELS).is_none());
}
