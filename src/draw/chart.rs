//! Horizontal bar charts as standalone SVG text.
//!
//! The page shows exactly the SVG it offers for download, so the chart is drawn here, in the
//! core, as a string: it can be tested natively, exported byte for byte, and the command line
//! could write it too. Colours are fixed mid-tones readable on light and dark backgrounds;
//! text uses `currentColor` so that the page's theme decides it (black in a standalone file).

use fusion::analysis::TrafficFigures;
use fusion::AnalysisReport;
use units::{format_bytes, group_digits};

use crate::text;

/// One series (e.g. "unfused"): a name for the legend and its bar colour.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Series {
    pub name: String,
    pub color: &'static str,
}

/// One bar: bytes read and bytes written, drawn as two segments of one length.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bar {
    pub read: u64,
    pub written: u64,
}

impl Bar {
    /// Read plus written (saturating: a bar never wraps around).
    pub fn total(self) -> u64 {
        self.read.saturating_add(self.written)
    }
}

/// One row of bars: a label and one bar per series.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BarRow {
    pub label: String,
    /// Shown as the row's tooltip (e.g. all ops of a group).
    pub detail: String,
    pub values: Vec<Bar>,
}

/// A chart of memory traffic: rows of bars, one bar per series, each split into bytes read
/// (solid) and written (lighter), all on one linear scale.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BarChart {
    pub title: String,
    pub series: Vec<Series>,
    pub rows: Vec<BarRow>,
    /// Whether bars are split into read and written (a kernel's bytes from a trace are known
    /// only in all: then each bar is one segment, `read` holding the total, and the legend says
    /// "read + written").
    pub split: bool,
}

/// Bar colours of the unfused and fused series.
pub const UNFUSED_COLOR: &str = "#d9822b";
pub const FUSED_COLOR: &str = "#2f81f7";

const WIDTH: u32 = 760;
const LABEL_W: u32 = 190;
const VALUE_W: u32 = 90;
const BAR_H: u32 = 14;
const BAR_GAP: u32 = 3;
const ROW_GAP: u32 = 12;
const TOP: u32 = 50;
/// The written segment is the series colour at this opacity.
const WRITTEN_OPACITY: &str = "0.5";

/// Escapes text for use in SVG element content and attribute values. Labels are kernel and op
/// names from files, so besides the markup characters, the characters XML 1.0 forbids
/// altogether (control characters other than tab and line breaks, U+FFFE, U+FFFF) become
/// U+FFFD, the replacement character: one `\u{1}` in a name would otherwise make the whole
/// exported SVG unreadable (not even as an escape such as `&#1;`, which XML 1.0 forbids too).
pub fn escape_xml(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c if !is_xml_char(c) => out.push(char::REPLACEMENT_CHARACTER),
            _ => out.push(c),
        }
    }
    out
}

/// Whether XML 1.0 allows `c` in a document (its `Char` production; Rust chars are never
/// surrogates).
fn is_xml_char(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\r' | '\u{20}'..='\u{FFFD}' | '\u{10000}'..)
}

/// The font size of a row's label, in SVG units (the drawing's `font-size`).
const FONT: f64 = 12.0;

/// `s` whole when it fits in `room` units at [`FONT`], otherwise cut with an ellipsis
/// ([`text::fit`]).
fn fit_label(s: &str, room: f64) -> String {
    text::fit(s, room, FONT)
}

/// The opening of a standalone chart document `width` × `height` with its title drawn and
/// given to screen readers (`role="img"`); text takes the page's colour (`currentColor`).
pub fn svg_start(width: u32, height: u32, title: &str) -> String {
    let title = escape_xml(title);
    format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {width} {height}\" width=\"{width}\" height=\"{height}\" \
         role=\"img\" aria-label=\"{title}\" font-family=\"system-ui, sans-serif\" font-size=\"12\">\
         <title>{title}</title>\
         <text x=\"0\" y=\"16\" font-size=\"14\" font-weight=\"600\" fill=\"currentColor\">{title}</text>"
    )
}

impl BarChart {
    /// Height of the drawing in SVG units.
    pub fn height(&self) -> u32 {
        let per_row = self.series.len() as u32 * (BAR_H + BAR_GAP) - BAR_GAP + ROW_GAP;
        TOP + self.rows.len() as u32 * per_row + 8
    }

    /// Width of a bar for `value` when the longest bar is `max` wide: at least 1 unit for a
    /// non-zero value so that it stays visible.
    fn bar_width(value: u64, max: u64) -> f64 {
        let full = f64::from(WIDTH - LABEL_W - VALUE_W - 10);
        if max == 0 || value == 0 {
            0.0
        } else {
            (full * value as f64 / max as f64).max(1.0)
        }
    }

    /// The chart as a standalone SVG document (with `role="img"` and a title for screen readers).
    pub fn to_svg(&self) -> String {
        let max = self.rows.iter().flat_map(|r| r.values.iter().map(|b| b.total())).max().unwrap_or(0);
        let h = self.height();
        let mut s = svg_start(WIDTH, h, &self.title);
        let mut x = LABEL_W;
        for series in &self.series {
            s.push_str(&format!(
                "<rect x=\"{x}\" y=\"28\" width=\"12\" height=\"12\" fill=\"{}\"/>\
                 <text x=\"{}\" y=\"38\" fill=\"currentColor\">{}</text>",
                series.color,
                x + 16,
                escape_xml(&series.name)
            ));
            x += 24 + 8 * series.name.chars().count() as u32;
        }
        // Which part of a bar is which, in the text colour: solid is read, light is written. A
        // bar of one part is said in words: a swatch of a colour no bar has would puzzle.
        let parts: &[(&str, &str)] = if self.split { &[("read", "0.75"), ("written", "0.3")] } else { &[] };
        if !self.split {
            s.push_str(&format!(
                "<text x=\"{x}\" y=\"38\" fill=\"currentColor\" fill-opacity=\"0.8\">each bar: bytes read + written</text>"
            ));
        }
        for &(name, opacity) in parts {
            s.push_str(&format!(
                "<rect x=\"{x}\" y=\"28\" width=\"12\" height=\"12\" fill=\"currentColor\" fill-opacity=\"{opacity}\"/>\
                 <text x=\"{}\" y=\"38\" fill=\"currentColor\">{name}</text>",
                x + 16
            ));
            x += 24 + 8 * name.len() as u32;
        }
        let mut y = TOP;
        for row in &self.rows {
            let rows_h = self.series.len() as u32 * (BAR_H + BAR_GAP) - BAR_GAP;
            s.push_str(&format!(
                "<g><title>{}</title><text x=\"{}\" y=\"{}\" text-anchor=\"end\" fill=\"currentColor\">{}</text>",
                escape_xml(&row.detail),
                LABEL_W - 8,
                y + rows_h / 2 + 4,
                escape_xml(&fit_label(&row.label, f64::from(LABEL_W - 8)))
            ));
            for (series, &bar) in self.series.iter().zip(&row.values) {
                let total = bar.total();
                let w = Self::bar_width(total, max);
                let w_read = if total == 0 { 0.0 } else { w * bar.read as f64 / total as f64 };
                let name = escape_xml(&series.name);
                let segment = |x: f64, width: f64, opacity: &str, what: &str, bytes: u64| {
                    format!(
                        "<rect x=\"{x:.1}\" y=\"{y}\" width=\"{width:.1}\" height=\"{BAR_H}\" fill=\"{}\" fill-opacity=\"{opacity}\">\
                         <title>{name} {what}: {} bytes ({})</title></rect>",
                        series.color,
                        group_digits(bytes),
                        format_bytes(bytes)
                    )
                };
                s.push_str(&format!("<g><title>{name}: {} bytes read + written</title>", group_digits(total)));
                let what = if self.split { "read" } else { "read + written" };
                s.push_str(&segment(f64::from(LABEL_W), w_read, "1", what, bar.read));
                s.push_str(&segment(f64::from(LABEL_W) + w_read, w - w_read, WRITTEN_OPACITY, "written", bar.written));
                s.push_str(&format!(
                    "<text x=\"{:.1}\" y=\"{}\" fill=\"currentColor\">{}</text></g>",
                    f64::from(LABEL_W) + w + 4.0,
                    y + BAR_H - 3,
                    format_bytes(total)
                ));
                y += BAR_H + BAR_GAP;
            }
            y += ROW_GAP - BAR_GAP;
            s.push_str("</g>");
        }
        s.push_str("</svg>");
        s
    }
}

fn traffic_bar(f: &TrafficFigures) -> Bar {
    Bar { read: f.bytes_read, written: f.bytes_written }
}

pub fn traffic_series() -> Vec<Series> {
    vec![
        Series { name: "unfused".to_string(), color: UNFUSED_COLOR },
        Series { name: "fused".to_string(), color: FUSED_COLOR },
    ]
}

/// Most groups drawn in one chart: past this, bars would be too thin to read.
pub const MAX_CHART_GROUPS: usize = 40;

/// Unfused vs fused bytes (read + written) of each fusion group; for more than
/// [`MAX_CHART_GROUPS`] groups, those with the most unfused traffic, in group order.
pub fn group_traffic_chart(r: &AnalysisReport) -> BarChart {
    let n = r.group_details.len();
    let mut keep: Vec<usize> = (0..n).collect();
    if n > MAX_CHART_GROUPS {
        // Stable: ties keep group order, so the chart is the same on every run.
        keep.sort_by_key(|&i| std::cmp::Reverse(r.group_details[i].unfused.total));
        keep.truncate(MAX_CHART_GROUPS);
        keep.sort_unstable();
    }
    let rows = keep
        .into_iter()
        .map(|i| (i, &r.group_details[i]))
        .map(|(i, g)| {
            let first = g.ops.first().map(String::as_str).unwrap_or("");
            let label = match g.ops.len() {
                0 | 1 => format!("{}. {first}", i + 1),
                n => format!("{}. {first} +{}", i + 1, n - 1),
            };
            BarRow {
                label,
                detail: format!("group {} ({}): {}", i + 1, format!("{:?}", g.kind).to_lowercase(), g.ops.join(", ")),
                values: vec![traffic_bar(&g.unfused), traffic_bar(&g.fused)],
            }
        })
        .collect();
    let title = if n > MAX_CHART_GROUPS {
        format!(
            "Memory traffic of the {MAX_CHART_GROUPS} fusion groups with the most unfused traffic, of {}",
            group_digits(n as u64)
        )
    } else {
        "Memory traffic per fusion group (read + written)".to_string()
    };
    BarChart { title, series: traffic_series(), rows, split: true }
}

/// Unfused vs fused bytes of the whole graph.
pub fn total_traffic_chart(r: &AnalysisReport) -> BarChart {
    BarChart {
        title: "Total memory traffic".to_string(),
        series: traffic_series(),
        rows: vec![BarRow {
            label: "total".to_string(),
            detail: format!("{} ops in {} groups", r.op_details.len(), r.groups.len()),
            values: vec![traffic_bar(&r.unfused), traffic_bar(&r.fused)],
        }],
        split: true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fusion::analyse;
    use fusion::transformer::{transformer_block, TransformerConfig};

    fn report() -> AnalysisReport {
        let g = transformer_block(TransformerConfig::default()).unwrap();
        analyse(&g).report(&g)
    }

    #[test]
    fn escapes_markup_in_labels() {
        assert_eq!(escape_xml("a<b & \"c\"'"), "a&lt;b &amp; &quot;c&quot;&#39;");
        assert_eq!(escape_xml("a\u{1}b\u{0}\u{1b}[31m\u{ffff}"), "a\u{fffd}b\u{fffd}\u{fffd}[31m\u{fffd}");
        assert_eq!(escape_xml("tab\tline\nµ 😀 \u{7f}"), "tab\tline\nµ 😀 \u{7f}");
        let chart = BarChart {
            title: "t".into(),
            series: traffic_series(),
            rows: vec![BarRow {
                label: "<script>".into(),
                detail: "&".into(),
                values: vec![Bar { read: 1, written: 0 }, Bar { read: 1, written: 1 }],
            }],
            split: true,
        };
        let svg = chart.to_svg();
        assert!(!svg.contains("<script>"));
        assert!(svg.contains("&lt;script&gt;"));
    }

    #[test]
    fn one_bar_per_group_and_series_with_exact_bytes() {
        let r = report();
        let svg = group_traffic_chart(&r).to_svg();
        // 4 legend swatches + 2 segments (read, written) of 2 bars per group.
        assert_eq!(svg.matches("<rect").count(), 4 + 4 * r.group_details.len());
        assert_eq!(r.group_details.len(), 9);
        let total = total_traffic_chart(&r).to_svg();
        assert!(total.contains("<g><title>unfused: 2,348,810,240 bytes read + written</title>"), "{total}");
        assert!(total.contains(">2.19 GiB</text>"), "{total}");
        assert!(total.contains("fused: 1,962,934,272 bytes read + written"), "{total}");
        let (fr, fw) = (r.fused.bytes_read, r.fused.bytes_written);
        assert!(total.contains(&format!("fused read: {} bytes", group_digits(fr))), "{total}");
        assert!(total.contains(&format!("fused written: {} bytes", group_digits(fw))), "{total}");
    }

    /// A chart of whole bars (a trace's bytes, known only in all) has a swatch per series and
    /// says in words what a bar is: no swatch of a colour that no bar has.
    #[test]
    fn whole_bars_are_said_in_words_not_by_a_swatch() {
        let chart = BarChart {
            title: "t".into(),
            series: traffic_series(),
            rows: vec![BarRow {
                label: "total".into(),
                detail: String::new(),
                values: vec![Bar { read: 10, written: 0 }, Bar { read: 6, written: 0 }],
            }],
            split: false,
        };
        let svg = chart.to_svg();
        // The legend's swatches, at the legend's height: the two series'.
        assert_eq!(svg.matches("y=\"28\" width=\"12\"").count(), 2, "{svg}");
        assert!(svg.contains(">each bar: bytes read + written</text>"), "{svg}");
    }

    #[test]
    fn longest_bar_fills_the_plot_and_zero_draws_nothing() {
        let full = f64::from(WIDTH - LABEL_W - VALUE_W - 10);
        assert_eq!(BarChart::bar_width(10, 10), full);
        assert_eq!(BarChart::bar_width(0, 10), 0.0);
        assert_eq!(BarChart::bar_width(0, 0), 0.0);
        // Tiny but non-zero values stay visible.
        assert_eq!(BarChart::bar_width(1, u64::MAX), 1.0);
    }

    #[test]
    fn read_and_written_segments_split_the_bar_in_proportion() {
        let chart = BarChart {
            title: "t".into(),
            series: vec![Series { name: "s".into(), color: FUSED_COLOR }],
            rows: vec![BarRow { label: "a".into(), detail: "".into(), values: vec![Bar { read: 3, written: 1 }] }],
            split: true,
        };
        let svg = chart.to_svg();
        let full = BarChart::bar_width(4, 4);
        assert!(svg.contains(&format!("width=\"{:.1}\"", full * 0.75)), "{svg}");
        assert!(
            svg.contains(&format!(
                "x=\"{:.1}\" y=\"{TOP}\" width=\"{:.1}\"",
                f64::from(LABEL_W) + full * 0.75,
                full * 0.25
            )),
            "{svg}"
        );
        assert_eq!(Bar { read: u64::MAX, written: 1 }.total(), u64::MAX);
    }

    #[test]
    fn height_grows_with_rows() {
        let r = report();
        assert!(group_traffic_chart(&r).height() > total_traffic_chart(&r).height());
        assert!(total_traffic_chart(&r).to_svg().starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
    }

    #[test]
    fn large_graphs_chart_their_heaviest_groups_in_order() {
        let g = fusion::random::random_graph(2000, 3);
        let r = analyse(&g).report(&g);
        assert!(r.group_details.len() > MAX_CHART_GROUPS);
        let chart = group_traffic_chart(&r);
        assert_eq!(chart.rows.len(), MAX_CHART_GROUPS);
        assert!(chart.title.contains(&format!("of {}", group_digits(r.group_details.len() as u64))));
        // Every group left out has no more unfused traffic than the lightest one drawn.
        let lightest = chart.rows.iter().map(|row| row.values[0].total()).min().unwrap();
        let drawn: Vec<usize> =
            chart.rows.iter().map(|row| row.label.split('.').next().unwrap().parse::<usize>().unwrap() - 1).collect();
        assert!(drawn.windows(2).all(|w| w[0] < w[1]), "group order kept");
        for (i, gd) in r.group_details.iter().enumerate() {
            if !drawn.contains(&i) {
                assert!(gd.unfused.total <= lightest);
            }
        }
    }

    #[test]
    fn labels_are_cut_to_their_column() {
        let room = f64::from(LABEL_W - 8);
        assert_eq!(fit_label("bmm = f32[8, 16, 16] bmm", room), "bmm = f32[8, 16, 16] bmm");
        // As wide in DejaVu Sans as the column: cut, where a count of 28 characters was not.
        let cut = fit_label("mm_default = f32[32, 64] mm", room);
        assert_eq!(cut, "mm_default = f32[32, 64]…");
        // Whatever the label, what is drawn fits, and is the label's beginning.
        for label in [
            "WWWWWWWWWWWWWWWWWWWWWWWWWWWWWW",
            "iiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiii",
            "…",
        ] {
            let drawn = fit_label(label, room);
            assert!(text::width(&drawn, FONT) <= room, "{drawn}");
            assert!(label.starts_with(drawn.trim_end_matches('…')), "{drawn}");
        }
    }
}
