//! Roofline charts as standalone SVG: log-log axes (FLOP/byte across, FLOP/s up), one roof per
//! chip (the memory slope `bandwidth × intensity` up to the ridge, then the peak), and points
//! whose tooltips name them. The fusion view draws its groups on one chip; the trace view draws
//! its ops, and a comparison both chips' ops in two colours.

use crate::chart::{escape_xml, svg_start};
use limits::ROOFLINE_DECADES;
use units::format_bytes;
use units::format_flops;

const W: f64 = 760.0;
const H: f64 = 420.0;
/// Plot area: left, top, right, bottom edges.
pub const PLOT: (f64, f64, f64, f64) = (110.0, 50.0, 740.0, 370.0);
/// Points drawn at most: past this a chart is a blur and its SVG megabytes (the tables and
/// CSV keep every row).
pub const MAX_ROOFLINE_POINTS: usize = 2000;
/// Colours of the two series (memory-bound / compute-bound groups; the two sides of a
/// comparison).
pub const BLUE: &str = "#2f81f7";
pub const ORANGE: &str = "#d9822b";

/// A chip's roof.
#[derive(Debug, Clone, PartialEq)]
pub struct Roof {
    pub label: String,
    pub peak_flops: f64,
    /// Bytes/s.
    pub hbm_bandwidth: f64,
    /// `currentColor` for a lone roof, the series colour in a comparison.
    pub color: &'static str,
}

impl Roof {
    fn ridge(&self) -> f64 {
        self.peak_flops / self.hbm_bandwidth
    }
}

/// One point: where, its colour, its tooltip and the data attribute that names it for tests
/// and links (`data-group="3"`, `data-op="aten::mm"`).
#[derive(Debug, Clone, PartialEq)]
pub struct PlotPoint {
    pub intensity: f64,
    pub flops: f64,
    pub color: &'static str,
    pub title: String,
    pub attr: (&'static str, String),
}

/// What a chart draws.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RooflinePlot {
    pub roofs: Vec<Roof>,
    /// Legend entries: text and colour.
    pub legend: Vec<(String, &'static str)>,
    pub points: Vec<PlotPoint>,
    /// What the points are, plural (`groups`, `ops`), for the "first N of M drawn" note.
    pub noun: &'static str,
}

/// Whole decades around `[lo, hi]`: `(floor(log10 lo), ceil(log10 hi))`, at least one decade
/// and at most [`ROOFLINE_DECADES`] wide (keeping the top ones, where the peak is), whatever the
/// numbers: zero, subnormal, huge, infinite or NaN bounds are brought back to the f64 range
/// first, so the grid loops that draw one line per decade are always short.
fn decades(lo: f64, hi: f64) -> (i32, i32) {
    /// Within the decades whose powers of ten are normal f64s (1e±308), so that `10^e` of
    /// every grid line is finite and non-zero.
    const F64_DECADES: f64 = 300.0;
    let log = |v: f64, fallback: f64| {
        let l = v.log10();
        if l.is_nan() {
            fallback
        } else {
            l.clamp(-F64_DECADES, F64_DECADES)
        }
    };
    let a = log(lo, 0.0).floor() as i32;
    let b = (log(hi, 1.0).ceil() as i32).max(a + 1);
    (a.max(b - ROOFLINE_DECADES), b)
}

/// `10^e` as an axis label: `0.01`, `1`, `1000`, `1e6`.
pub(crate) fn decade_label(e: i32) -> String {
    if (-2..=3).contains(&e) {
        let v = 10f64.powi(e);
        if e < 0 {
            format!("{v:.*}", (-e) as usize)
        } else {
            format!("{v:.0}")
        }
    } else {
        format!("1e{e}")
    }
}

impl RooflinePlot {
    /// Axis ranges in decades: intensity (FLOP/B) and FLOP/s, covering every ridge, peak and
    /// point.
    pub fn axes(&self) -> ((i32, i32), (i32, i32)) {
        let xs = self.points.iter().map(|p| p.intensity).chain(self.roofs.iter().map(Roof::ridge));
        let ys = self.points.iter().map(|p| p.flops).chain(self.roofs.iter().map(|r| r.peak_flops));
        let positive = |v: &f64| v.is_finite() && *v > 0.0;
        let (xlo, xhi) = xs.filter(positive).fold((f64::MAX, f64::MIN), |(a, b), v| (a.min(v), b.max(v)));
        let (ylo, yhi) = ys.filter(positive).fold((f64::MAX, f64::MIN), |(a, b), v| (a.min(v), b.max(v)));
        if xlo > xhi || ylo > yhi {
            return ((-1, 3), (9, 15));
        }
        // Room below the lowest point and above the peak; the roof's slope shows below the ridge.
        let low_peak = self.roofs.iter().map(|r| r.peak_flops).filter(positive).fold(yhi, f64::min);
        (decades(xlo / 2.0, xhi * 2.0), decades((ylo / 2.0).min(low_peak / 1e3), yhi * 2.0))
    }

    /// The chart as a standalone SVG document.
    pub fn to_svg(&self, title: &str) -> String {
        let ((x0, x1), (y0, y1)) = self.axes();
        let (left, top, right, bottom) = PLOT;
        let sx = |v: f64| left + (v.log10() - f64::from(x0)) / f64::from(x1 - x0) * (right - left);
        let sy = |v: f64| bottom - (v.log10() - f64::from(y0)) / f64::from(y1 - y0) * (bottom - top);
        let mut s = svg_start(W as u32, H as u32, title);
        for e in x0..=x1 {
            let x = sx(10f64.powi(e));
            s.push_str(&format!(
                "<line x1=\"{x:.1}\" y1=\"{top}\" x2=\"{x:.1}\" y2=\"{bottom}\" stroke=\"currentColor\" stroke-opacity=\"0.15\"/>\
                 <text x=\"{x:.1}\" y=\"{}\" text-anchor=\"middle\" fill=\"currentColor\">{}</text>",
                bottom + 16.0,
                decade_label(e)
            ));
        }
        for e in y0..=y1 {
            let y = sy(10f64.powi(e));
            s.push_str(&format!(
                "<line x1=\"{left}\" y1=\"{y:.1}\" x2=\"{right}\" y2=\"{y:.1}\" stroke=\"currentColor\" stroke-opacity=\"0.15\"/>\
                 <text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\" fill=\"currentColor\">{}/s</text>",
                left - 6.0,
                y + 4.0,
                format_flops(10f64.powi(e)).replace(".00", "")
            ));
        }
        s.push_str(&format!(
            "<text x=\"{:.1}\" y=\"{}\" text-anchor=\"middle\" fill=\"currentColor\">arithmetic intensity (FLOP/byte, log scale)</text>\
             <text x=\"14\" y=\"{:.1}\" text-anchor=\"middle\" fill=\"currentColor\" transform=\"rotate(-90 14 {:.1})\">FLOP/s (log scale)</text>",
            (left + right) / 2.0,
            bottom + 36.0,
            (top + bottom) / 2.0,
            (top + bottom) / 2.0
        ));
        let (x_min, x_max, y_min, y_max) = (10f64.powi(x0), 10f64.powi(x1), 10f64.powi(y0), 10f64.powi(y1));
        // Every coordinate clamped into the plot, and no roof for a chip whose figures make
        // none (zero, negative or non-finite: only a chip outside the limits, drawn anyway).
        let sx = |v: f64| sx(if v.is_nan() { x_min } else { v.clamp(x_min, x_max) });
        let sy = |v: f64| sy(if v.is_nan() { y_min } else { v.clamp(y_min, y_max) });
        for roof in &self.roofs {
            let ridge_raw = roof.ridge();
            if ![roof.peak_flops, roof.hbm_bandwidth, ridge_raw].iter().all(|v| v.is_finite() && *v > 0.0) {
                continue;
            }
            let start = x_min.max(y_min / roof.hbm_bandwidth);
            let ridge = ridge_raw.clamp(x_min, x_max);
            s.push_str(&format!(
                "<polyline data-role=\"roof\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\" points=\"{:.1},{:.1} {:.1},{:.1} {:.1},{:.1}\">\
                 <title>{}: {}/s of HBM bandwidth up to the ridge at {:.1} FLOP/byte, then the peak {}/s</title></polyline>",
                roof.color,
                sx(start),
                sy(roof.hbm_bandwidth * start),
                sx(ridge),
                sy(roof.peak_flops.min(roof.hbm_bandwidth * ridge)),
                sx(x_max),
                sy(roof.peak_flops),
                escape_xml(&roof.label),
                format_bytes(roof.hbm_bandwidth as u64),
                ridge_raw,
                format_flops(roof.peak_flops)
            ));
        }
        for (i, (name, color)) in self.legend.iter().enumerate() {
            let x = left + 10.0 + 190.0 * i as f64;
            s.push_str(&format!(
                "<circle cx=\"{x:.1}\" cy=\"34\" r=\"5\" fill=\"{color}\"/><text x=\"{:.1}\" y=\"38\" fill=\"currentColor\">{}</text>",
                x + 10.0,
                escape_xml(name)
            ));
        }
        if self.points.len() > MAX_ROOFLINE_POINTS {
            s.push_str(&format!(
                "<text x=\"{right}\" y=\"38\" text-anchor=\"end\" fill=\"currentColor\">first {MAX_ROOFLINE_POINTS} of {} {} drawn</text>",
                self.points.len(),
                self.noun
            ));
        }
        let drawable = |p: &&PlotPoint| p.intensity.is_finite() && p.flops.is_finite();
        for p in self.points.iter().filter(drawable).take(MAX_ROOFLINE_POINTS) {
            s.push_str(&format!(
                "<circle {}=\"{}\" cx=\"{:.1}\" cy=\"{:.1}\" r=\"6\" fill=\"{}\" fill-opacity=\"0.8\" stroke=\"currentColor\" stroke-width=\"0.5\">\
                 <title>{}</title></circle>",
                p.attr.0,
                escape_xml(&p.attr.1),
                sx(p.intensity),
                sy(p.flops),
                p.color,
                escape_xml(&p.title)
            ));
        }
        s.push_str("</svg>");
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decade_labels_read_plainly() {
        assert_eq!(decade_label(-2), "0.01");
        assert_eq!(decade_label(0), "1");
        assert_eq!(decade_label(3), "1000");
        assert_eq!(decade_label(6), "1e6");
    }

    #[test]
    fn two_roofs_and_points_of_both_series_are_drawn() {
        let roof = |label: &str, peak: f64, bw: f64, color| Roof {
            label: label.into(),
            peak_flops: peak,
            hbm_bandwidth: bw,
            color,
        };
        let point = |x: f64, y: f64, color, name: &str| PlotPoint {
            intensity: x,
            flops: y,
            color,
            title: name.into(),
            attr: ("data-op", name.into()),
        };
        let plot = RooflinePlot {
            roofs: vec![roof("MI300X", 1307.4e12, 5.3e12, BLUE), roof("H100 SXM", 989.4e12, 3.35e12, ORANGE)],
            legend: vec![("amd".into(), BLUE), ("nvidia".into(), ORANGE)],
            points: vec![point(600.0, 600e12, BLUE, "aten::mm <a>"), point(0.2, 1e12, ORANGE, "aten::add")],
            noun: "ops",
        };
        let svg = plot.to_svg("Roofline");
        assert_eq!(svg.matches("data-role=\"roof\"").count(), 2);
        assert_eq!(svg.matches("<circle data-op=").count(), 2);
        assert!(svg.contains("aten::mm &lt;a&gt;"));
        let ((x0, x1), (y0, y1)) = plot.axes();
        assert!(10f64.powi(x0) <= 0.2 && 600.0 <= 10f64.powi(x1));
        assert!(10f64.powi(y1) >= 1307.4e12 && 10f64.powi(y0) <= 1e12);
    }
}
