//! A layer of two traces aligned kernel by kernel ([`LayerAlignment`]), drawn: one row per
//! aligned step, each side's kernels in a cell with their time per layer as a bar on one scale,
//! and where the sides run different numbers of kernels (one fused kernel on one side against
//! several on the other) the row marked and the counts written between the cells. What the
//! layers table says, drawn so that a fusion difference is seen where it happens.

use std::fmt::Write;

use draw::chart::{escape_xml, svg_start};
use draw::roofline::{BLUE, ORANGE};
use units::format_duration_us;

use analysis::compare::{LayerAlignment, LayerRow};

/// The drawing's width in SVG units (the page scales it to its panel, as its charts).
const WIDTH: f64 = 760.0;
/// Each side's cell width; the gutter between them holds a difference's counts.
const CELL: f64 = 320.0;
const GUTTER_X: f64 = CELL;
const RIGHT_X: f64 = WIDTH - CELL;
/// One kernel line, the time bar under the lines (its line holds the time too), the padding
/// inside and between rows.
const LINE: f64 = 15.0;
const BAR: f64 = 5.0;
/// Room the time takes at the end of the bar's line.
const TIME_W: f64 = 64.0;
const PAD: f64 = 6.0;
const ROW_GAP: f64 = 4.0;
/// Characters of a kernel's name a line holds (12 px system-ui).
const NAME_CHARS: usize = 46;
/// Where the rows start, under the title and the side labels (two lines each).
const TOP: f64 = 64.0;
/// The difference marker's colour.
const MARK: &str = "#2f81f7";

/// The drawing of one aligned layer, `keys` naming the two sides in the comparison's order
/// (`labels` the way the page names them: `MI300X (AMD)`). `None` when the layer has no rows.
pub fn aligned_layer_svg(a: &LayerAlignment, keys: [&str; 2], labels: [&str; 2]) -> Option<String> {
    if a.rows.is_empty() {
        return None;
    }
    let heights: Vec<f64> = a.rows.iter().map(|r| row_height(r, keys)).collect();
    let height = TOP + heights.iter().map(|h| h + ROW_GAP).sum::<f64>() + 4.0;
    let longest = a
        .rows
        .iter()
        .flat_map(|r| keys.iter().filter_map(|k| r.sides.get(*k).cloned().flatten()))
        .map(|s| s.time_us)
        .fold(0.0_f64, f64::max);
    let mut s = svg_start(WIDTH as u32, height.ceil() as u32, "One layer aligned kernel by kernel");
    for (i, (x, color)) in [(0.0, BLUE), (RIGHT_X, ORANGE)].into_iter().enumerate() {
        let _ = write!(
            s,
            r#"<rect x="{x}" y="28" width="12" height="12" fill="{color}"/><text x="{}" y="38" fill="currentColor" font-weight="600">{}</text><text x="{}" y="54" fill="currentColor" fill-opacity="0.8">{}</text>"#,
            x + 16.0,
            escape_xml(labels[i]),
            x + 16.0,
            escape_xml(&phase_line(a, keys[i]))
        );
    }
    let mut y = TOP;
    for (row, h) in a.rows.iter().zip(&heights) {
        s += &row_svg(row, keys, y, *h, longest);
        y += h + ROW_GAP;
    }
    s += "</svg>";
    Some(s)
}

/// `phase 0 · 43 kernels · 1.23 ms`: the side's phase and one layer of it.
fn phase_line(a: &LayerAlignment, key: &str) -> String {
    let label = a.labels.get(key).map_or("", String::as_str);
    let kernels = a.kernels_per_layer.get(key).copied().unwrap_or(0);
    let time = a.time_per_layer_us.get(key).copied().unwrap_or(0.0);
    format!("{label} · {kernels} kernels · {}", format_duration_us(time))
}

/// Kernels of the row's fuller side (at least one line: an empty side says so).
fn row_height(row: &LayerRow, keys: [&str; 2]) -> f64 {
    let lines = keys.iter().map(|k| row.sides.get(*k).cloned().flatten().map_or(1, |s| s.kernels.len())).max();
    2.0 * PAD + (lines.unwrap_or(1).max(1) + 1) as f64 * LINE
}

/// One row at `y`: both cells and, between them, the connector (marked on a difference).
fn row_svg(row: &LayerRow, keys: [&str; 2], y: f64, h: f64, longest: f64) -> String {
    let differs = row.difference.is_some();
    let mut s = format!(r#"<g class="aligned-row" data-differs="{differs}" data-category="{}">"#, row.category.id());
    let counts: Vec<usize> =
        keys.iter().map(|k| row.sides.get(*k).cloned().flatten().map_or(0, |side| side.kernels.len())).collect();
    let mid = y + h / 2.0;
    let (stroke, width, dash) = if differs { (MARK, 2.0, r#" stroke-dasharray="5 3""#) } else { ("#8b949e", 1.0, "") };
    let _ = write!(
        s,
        r#"<line x1="{GUTTER_X}" y1="{mid:.1}" x2="{RIGHT_X}" y2="{mid:.1}" stroke="{stroke}" stroke-width="{width}"{dash}/>"#
    );
    if let Some(d) = &row.difference {
        let _ = write!(
            s,
            r##"<rect x="{:.1}" y="{:.1}" width="64" height="18" rx="9" fill="{MARK}"/><text x="{:.1}" y="{:.1}" text-anchor="middle" fill="#fff" font-weight="600">{} : {}<title>{}</title></text>"##,
            (GUTTER_X + RIGHT_X) / 2.0 - 32.0,
            mid - 9.0,
            (GUTTER_X + RIGHT_X) / 2.0,
            mid + 4.0,
            counts[0],
            counts[1],
            escape_xml(d)
        );
    }
    for (i, (key, color)) in keys.iter().zip([BLUE, ORANGE]).enumerate() {
        let x = if i == 0 { 0.0 } else { RIGHT_X };
        s += &cell_svg(row.sides.get(*key).cloned().flatten().as_ref(), x, y, h, color, differs, longest);
    }
    s + "</g>"
}

/// One side's cell: its kernels, their time per layer, and a bar of that time on the layer's
/// scale (`longest`: the slowest cell of the layer).
fn cell_svg(
    side: Option<&analysis::compare::RowSide>,
    x: f64,
    y: f64,
    h: f64,
    color: &str,
    differs: bool,
    longest: f64,
) -> String {
    let stroke = if differs {
        format!(r#"stroke="{MARK}" stroke-width="2""#)
    } else {
        r##"stroke="#8b949e" stroke-opacity="0.6""##.to_string()
    };
    let Some(side) = side else {
        return format!(
            r#"<rect x="{x}" y="{y:.1}" width="{CELL}" height="{h:.1}" rx="5" fill="none" {stroke} stroke-dasharray="4 3"/><text x="{:.1}" y="{:.1}" fill="currentColor" fill-opacity="0.7" font-style="italic">nothing here</text>"#,
            x + PAD,
            y + PAD + 11.0
        );
    };
    let mut s = format!(
        r#"<rect x="{x}" y="{y:.1}" width="{CELL}" height="{h:.1}" rx="5" fill="{color}" fill-opacity="0.07" {stroke}/>"#
    );
    for (k, kernel) in side.kernels.iter().enumerate() {
        let _ = write!(
            s,
            r#"<text x="{:.1}" y="{:.1}" fill="currentColor">{}<title>{}</title></text>"#,
            x + PAD,
            y + PAD + 11.0 + k as f64 * LINE,
            escape_xml(&classify::family::box_name(kernel, NAME_CHARS)),
            escape_xml(kernel)
        );
    }
    let baseline = y + h - PAD - 4.0;
    let _ = write!(
        s,
        r#"<text x="{:.1}" y="{baseline:.1}" text-anchor="end" fill="currentColor" font-variant-numeric="tabular-nums">{}</text>"#,
        x + CELL - PAD,
        format_duration_us(side.time_us)
    );
    let full = CELL - 2.0 * PAD - TIME_W;
    let bar = if longest > 0.0 { (side.time_us / longest).clamp(0.0, 1.0) * full } else { 0.0 };
    let _ = write!(
        s,
        r#"<rect x="{:.1}" y="{:.1}" width="{bar:.1}" height="{BAR}" rx="2" fill="{color}"/>"#,
        x + PAD,
        baseline - BAR
    );
    s
}

#[cfg(test)]
mod tests;
