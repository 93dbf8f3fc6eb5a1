//! What the page's time view shows of a [`TimeReport`]: the chip choice (a preset by name or a
//! chip the user loaded), the per-group time table with units, and the roofline chart as a
//! standalone SVG (log-log axes, the two roofs, each fused group as a point whose tooltip names
//! the group). Pure functions, so that what is exported is what is tested.

use serde::{Deserialize, Serialize};

use super::chip::{preset, Chip, ChipError};
use super::roofline::{format_flops, Bound, RooflineChart, TimeReport};
use crate::draw::chart::{escape_xml, svg_start};
use crate::limits::ROOFLINE_DECADES;
use crate::table::Table;
use crate::units::{format_bytes, format_duration_us};

/// Which chip the time model uses: a preset by its key (`h100`, `tpuv5p`, …) or a chip read from
/// a user's file, in full (so that a share link can carry it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChipChoice {
    Preset(String),
    Custom(Chip),
}

impl Default for ChipChoice {
    /// H100 SXM: the most common accelerator of the shared traces.
    fn default() -> Self {
        ChipChoice::Preset("h100".into())
    }
}

impl ChipChoice {
    /// The chip chosen; an unknown preset name (an edited link) is an error naming it, and a
    /// chip from a file or a link is checked again ([`Chip::validate`]) whatever made it.
    pub fn chip(&self) -> Result<Chip, ChipError> {
        match self {
            ChipChoice::Preset(key) => preset(key),
            ChipChoice::Custom(chip) => {
                chip.validate()?;
                Ok(chip.clone())
            }
        }
    }
}

/// `0.5 µs` per launch → `"3 × 0.5 µs = 1.5 µs"`-style cell: launches of the unfused ops and of
/// the one fused kernel.
fn launch_cell(ops: usize, launch_us: f64) -> String {
    format!(
        "{} → {}",
        format_duration_us(ops as f64 * launch_us),
        format_duration_us(if ops == 0 { 0.0 } else { launch_us })
    )
}

/// One row per fusion group: ops, FLOPs, bytes unfused and fused, intensity, bound, launch
/// overhead (unfused kernels → one fused kernel), unfused and fused time, speedup, runs and the
/// calibration that replaced the roofline estimate, if any.
pub fn group_time_table(report: &TimeReport, launch_overhead_us: f64) -> Table {
    let mut t = Table::new(&[
        ">#",
        "ops",
        ">FLOPs",
        ">unfused bytes",
        ">fused bytes",
        ">FLOP/B",
        "bound",
        ">launch overhead",
        ">unfused",
        ">fused",
        ">speedup",
        ">runs",
        "calibration",
    ]);
    for g in &report.groups {
        t.row([
            (g.group + 1).to_string(),
            g.ops.join(", "),
            format_flops(g.flops as f64),
            format_bytes(g.unfused_bytes),
            format_bytes(g.fused_bytes),
            format!("{:.1}", g.intensity),
            g.bound.as_str().to_string(),
            launch_cell(g.ops.len(), launch_overhead_us),
            format_duration_us(g.unfused_us),
            format_duration_us(g.fused_us),
            format!("{:.2}×", g.speedup),
            g.repeat.to_string(),
            match &g.calibration {
                Some(c) if c.fusion_slower => format!("{}: slower fused", c.pattern),
                Some(c) => format!("{}: measured", c.pattern),
                None => String::new(),
            },
        ]);
    }
    t
}

const W: f64 = 760.0;
const H: f64 = 420.0;
/// Plot area: left, top, right, bottom edges.
const PLOT: (f64, f64, f64, f64) = (110.0, 50.0, 740.0, 370.0);
/// Points drawn at most: past this a chart is a blur and its SVG megabytes (the tables and
/// CSV keep every group).
pub const MAX_ROOFLINE_POINTS: usize = 2000;
const MEMORY_COLOR: &str = "#2f81f7";
const COMPUTE_COLOR: &str = "#d9822b";

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
fn decade_label(e: i32) -> String {
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

impl RooflineChart {
    /// Axis ranges in decades: intensity (FLOP/B) and FLOP/s, covering the ridge, the peak and
    /// every point.
    pub fn axes(&self) -> ((i32, i32), (i32, i32)) {
        let xs = self.points.iter().map(|p| p.intensity).chain([self.ridge_intensity]);
        let ys = self.points.iter().map(|p| p.achieved_flops).chain([self.peak_flops]);
        let positive = |v: &f64| v.is_finite() && *v > 0.0;
        let (xlo, xhi) = xs.filter(positive).fold((f64::MAX, f64::MIN), |(a, b), v| (a.min(v), b.max(v)));
        let (ylo, yhi) = ys.filter(positive).fold((f64::MAX, f64::MIN), |(a, b), v| (a.min(v), b.max(v)));
        if xlo > xhi || ylo > yhi {
            return ((-1, 3), (9, 15));
        }
        // Room below the lowest point and above the peak; the roof's slope shows below the ridge.
        (decades(xlo / 2.0, xhi * 2.0), decades((ylo / 2.0).min(self.peak_flops / 1e3), self.peak_flops * 2.0))
    }

    /// The chart as a standalone SVG document: log-log axes (FLOP/byte across, FLOP/s up), the
    /// memory roof `bandwidth × intensity` up to the ridge, then the compute roof at the peak,
    /// and each group as a point (blue memory-bound, orange compute-bound) whose tooltip names
    /// the group, its ops, intensity and achieved FLOP/s.
    pub fn to_svg(&self, title: &str) -> String {
        let ((x0, x1), (y0, y1)) = self.axes();
        let (left, top, right, bottom) = PLOT;
        let sx = |v: f64| left + (v.log10() - f64::from(x0)) / f64::from(x1 - x0) * (right - left);
        let sy = |v: f64| bottom - (v.log10() - f64::from(y0)) / f64::from(y1 - y0) * (bottom - top);
        let mut s = svg_start(W as u32, H as u32, title);
        // Grid and decade labels.
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
        // The roof: memory slope from the left edge (clipped to the plot) to the ridge, then flat.
        let x_min = 10f64.powi(x0);
        let x_max = 10f64.powi(x1);
        let y_min = 10f64.powi(y0);
        let y_max = 10f64.powi(y1);
        let start = x_min.max(y_min / self.hbm_bandwidth);
        let ridge = self.ridge_intensity.clamp(x_min, x_max);
        // Every coordinate clamped into the plot, and no roof for a chip whose figures make
        // none (zero, negative or non-finite: only a chip outside the limits, drawn anyway).
        let sx = |v: f64| sx(if v.is_nan() { x_min } else { v.clamp(x_min, x_max) });
        let sy = |v: f64| sy(if v.is_nan() { y_min } else { v.clamp(y_min, y_max) });
        let has_roof =
            [self.peak_flops, self.hbm_bandwidth, self.ridge_intensity].iter().all(|v| v.is_finite() && *v > 0.0);
        if has_roof {
            s.push_str(&format!(
                "<polyline data-role=\"roof\" fill=\"none\" stroke=\"currentColor\" stroke-width=\"2\" points=\"{:.1},{:.1} {:.1},{:.1} {:.1},{:.1}\">\
                 <title>Roof: {}/s of HBM bandwidth up to the ridge at {:.1} FLOP/byte, then the peak {}/s</title></polyline>",
                sx(start),
                sy(self.hbm_bandwidth * start),
                sx(ridge),
                sy(self.peak_flops.min(self.hbm_bandwidth * ridge)),
                sx(x_max),
                sy(self.peak_flops),
                format_bytes(self.hbm_bandwidth as u64),
                self.ridge_intensity,
                format_flops(self.peak_flops)
            ));
        }
        // Legend.
        for (i, (name, color)) in
            [("memory-bound group", MEMORY_COLOR), ("compute-bound group", COMPUTE_COLOR)].iter().enumerate()
        {
            let x = left + 10.0 + 190.0 * i as f64;
            s.push_str(&format!(
                "<circle cx=\"{x:.1}\" cy=\"34\" r=\"5\" fill=\"{color}\"/><text x=\"{:.1}\" y=\"38\" fill=\"currentColor\">{name}</text>",
                x + 10.0
            ));
        }
        if self.points.len() > MAX_ROOFLINE_POINTS {
            s.push_str(&format!(
                "<text x=\"{right}\" y=\"38\" text-anchor=\"end\" fill=\"currentColor\">first {MAX_ROOFLINE_POINTS} of {} groups drawn</text>",
                self.points.len()
            ));
        }
        let drawable = |p: &&super::roofline::RooflinePoint| p.intensity.is_finite() && p.achieved_flops.is_finite();
        for p in self.points.iter().filter(drawable).take(MAX_ROOFLINE_POINTS) {
            let color = match p.bound {
                Bound::Memory => MEMORY_COLOR,
                Bound::Compute => COMPUTE_COLOR,
            };
            s.push_str(&format!(
                "<circle data-group=\"{}\" cx=\"{:.1}\" cy=\"{:.1}\" r=\"6\" fill=\"{color}\" fill-opacity=\"0.8\" stroke=\"currentColor\" stroke-width=\"0.5\">\
                 <title>Group {}: {} — {:.1} FLOP/byte, {}/s achieved, {}-bound</title></circle>",
                p.group + 1,
                sx(p.intensity),
                sy(p.achieved_flops),
                p.group + 1,
                escape_xml(&p.label),
                p.intensity,
                format_flops(p.achieved_flops),
                p.bound.as_str()
            ));
        }
        s.push_str("</svg>");
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fusion::{analyze, parse_graph};
    use crate::hardware::{estimate, roofline_chart};

    const EXAMPLE: &str = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/graphs/worked_example.json"));

    fn report(chip: &Chip) -> TimeReport {
        let g = parse_graph(EXAMPLE).unwrap();
        estimate(&g, &analyze(&g), chip).unwrap()
    }

    #[test]
    fn chip_choice_resolves_presets_and_names_unknown_ones() {
        assert_eq!(ChipChoice::default().chip().unwrap().name, preset("h100").unwrap().name);
        let e = ChipChoice::Preset("h900".into()).chip().unwrap_err().to_string();
        assert!(e.contains("h900"), "{e}");
        let custom = Chip {
            name: "mine".into(),
            peak_flops: 1e12,
            hbm_bandwidth: 1e9,
            launch_overhead_us: 1.0,
            source: "file".into(),
            peaks: Default::default(),
        };
        assert_eq!(ChipChoice::Custom(custom.clone()).chip().unwrap(), custom);
    }

    #[test]
    fn group_table_has_a_row_per_group_with_units() {
        let chip = preset("h100").unwrap();
        let r = report(&chip);
        let t = group_time_table(&r, chip.launch_overhead_us);
        let csv = t.to_csv();
        assert_eq!(csv.lines().count(), r.groups.len() + 1);
        let first = csv.lines().nth(1).unwrap();
        assert!(first.contains("matmul1, bias1, relu"), "{first}");
        // Three unfused launches of 2 µs against one fused launch.
        assert!(first.contains("6.00 µs → 2.00 µs") || first.contains("6 µs → 2 µs"), "{first}");
        assert!(first.contains("GFLOP") || first.contains("MFLOP"), "{first}");
    }

    #[test]
    fn roofline_svg_has_the_roof_and_one_point_per_group_inside_the_plot() {
        let chip = preset("a100").unwrap();
        let r = report(&chip);
        let c = roofline_chart(&r, &chip);
        assert!(!c.points.is_empty());
        let svg = c.to_svg("Roofline");
        assert!(svg.starts_with("<svg") && svg.ends_with("</svg>"));
        assert_eq!(svg.matches("data-role=\"roof\"").count(), 1);
        assert_eq!(svg.matches("<circle data-group=").count(), c.points.len());
        for p in &c.points {
            assert!(svg.contains(&format!("Group {}: {}", p.group + 1, escape_xml(&p.label))));
        }
        // Every point lies within the plot area.
        for cap in svg.split("<circle data-group=").skip(1) {
            let num = |key: &str| -> f64 {
                let rest = &cap[cap.find(key).unwrap() + key.len()..];
                rest[..rest.find('"').unwrap()].parse().unwrap()
            };
            let (cx, cy) = (num("cx=\""), num("cy=\""));
            assert!((PLOT.0..=PLOT.2).contains(&cx) && (PLOT.1..=PLOT.3).contains(&cy), "{cx},{cy}");
        }
        let ((x0, x1), (y0, y1)) = c.axes();
        assert!(10f64.powi(x0) <= c.ridge_intensity && c.ridge_intensity <= 10f64.powi(x1));
        assert!(10f64.powi(y1) >= c.peak_flops && 10f64.powi(y0) < c.peak_flops);
    }

    #[test]
    fn an_empty_chart_still_draws_axes() {
        let chip = preset("h100").unwrap();
        let c = RooflineChart {
            peak_flops: chip.peak_flops,
            hbm_bandwidth: chip.hbm_bandwidth,
            ridge_intensity: chip.ridge_intensity(),
            points: vec![],
        };
        let svg = c.to_svg("empty");
        assert!(svg.contains("data-role=\"roof\""));
        assert!(!svg.contains("NaN") && !svg.contains("inf"));
    }

    #[test]
    fn a_huge_chart_draws_a_bounded_number_of_points_and_says_so() {
        use crate::hardware::roofline::RooflinePoint;
        let point = |g: usize| RooflinePoint {
            group: g,
            label: format!("op{g}"),
            intensity: 1.0 + g as f64,
            achieved_flops: 1e12,
            bound: Bound::Memory,
        };
        let c = RooflineChart {
            peak_flops: 1e15,
            hbm_bandwidth: 3e12,
            ridge_intensity: 333.3,
            points: (0..5000).map(point).collect(),
        };
        let svg = c.to_svg("big");
        assert_eq!(svg.matches("<circle data-group=").count(), MAX_ROOFLINE_POINTS);
        assert!(svg.contains(&format!("first {MAX_ROOFLINE_POINTS} of 5000 groups drawn")));
    }

    /// A chip outside every limit (as a link could once carry) and points of every kind of bad
    /// number: the chart is drawn with a bounded number of grid lines, no NaN or infinity, and
    /// every point that can be placed lies inside the plot.
    #[test]
    fn absurd_numbers_draw_a_bounded_chart() {
        use crate::hardware::roofline::RooflinePoint;
        let point = |g: usize, intensity: f64, achieved_flops: f64| RooflinePoint {
            group: g,
            label: format!("g{g}"),
            intensity,
            achieved_flops,
            bound: Bound::Memory,
        };
        for (peak, bw) in
            [(1e308, 1e-320), (1e-320, 1e308), (f64::NAN, f64::INFINITY), (-1.0, 0.0), (f64::MAX, f64::MIN_POSITIVE)]
        {
            let c = RooflineChart {
                peak_flops: peak,
                hbm_bandwidth: bw,
                ridge_intensity: peak / bw,
                points: vec![
                    point(0, 1e-300, 1e300),
                    point(1, f64::NAN, 1.0),
                    point(2, 1.0, f64::INFINITY),
                    point(3, 10.0, 1e12),
                ],
            };
            let ((x0, x1), (y0, y1)) = c.axes();
            assert!(x1 - x0 <= ROOFLINE_DECADES && y1 - y0 <= ROOFLINE_DECADES, "{peak} {bw}: {x0}..{x1}, {y0}..{y1}");
            let svg = c.to_svg("absurd");
            assert!(!svg.contains("NaN") && !svg.contains("inf"), "{peak} {bw}: {svg}");
            assert!(svg.matches("<line ").count() <= 2 * (ROOFLINE_DECADES as usize + 1));
            assert_eq!(svg.matches("<circle data-group=").count(), 2, "the NaN and infinite points are skipped");
        }
    }

    #[test]
    fn decade_labels_read_plainly() {
        assert_eq!(decade_label(-2), "0.01");
        assert_eq!(decade_label(0), "1");
        assert_eq!(decade_label(3), "1000");
        assert_eq!(decade_label(6), "1e6");
    }
}
