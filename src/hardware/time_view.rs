//! What the page's time view shows of a [`TimeReport`]: the chip choice (a preset by name or a
//! chip the user loaded), the per-group time table with units, and the roofline chart as a
//! standalone SVG (log-log axes, the two roofs, each fused group as a point whose tooltip names
//! the group). Pure functions, so that what is exported is what is tested.

use serde::{Deserialize, Serialize};

use super::chip::{preset, Chip, ChipError};
use super::roofline::{Bound, RooflineChart, TimeReport};
use draw::roofline::{PlotPoint, Roof, RooflinePlot, BLUE, ORANGE};
use table::Table;
use units::format_flops;
use units::{format_bytes, format_duration_us};

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

impl RooflineChart {
    /// The chart as a plot: this chip's roof, each group a point (blue memory-bound, orange
    /// compute-bound) whose tooltip names the group, its ops, intensity and achieved FLOP/s.
    pub fn plot(&self) -> RooflinePlot {
        RooflinePlot {
            roofs: vec![Roof {
                label: "Roof".into(),
                peak_flops: self.peak_flops,
                hbm_bandwidth: self.hbm_bandwidth,
                color: "currentColor",
            }],
            legend: vec![("memory-bound group".into(), BLUE), ("compute-bound group".into(), ORANGE)],
            points: self
                .points
                .iter()
                .map(|p| PlotPoint {
                    intensity: p.intensity,
                    flops: p.achieved_flops,
                    color: match p.bound {
                        Bound::Memory => BLUE,
                        Bound::Compute => ORANGE,
                    },
                    title: format!(
                        "Group {}: {} — {:.1} FLOP/byte, {}/s achieved, {}-bound",
                        p.group + 1,
                        p.label,
                        p.intensity,
                        format_flops(p.achieved_flops),
                        p.bound.as_str()
                    ),
                    attr: ("data-group", (p.group + 1).to_string()),
                })
                .collect(),
            noun: "groups",
        }
    }

    /// Axis ranges in decades (see [`RooflinePlot::axes`]).
    pub fn axes(&self) -> ((i32, i32), (i32, i32)) {
        self.plot().axes()
    }

    /// The chart as a standalone SVG document.
    pub fn to_svg(&self, title: &str) -> String {
        self.plot().to_svg(title)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{estimate, roofline_chart};
    use draw::chart::escape_xml;
    use draw::roofline::{MAX_ROOFLINE_POINTS, PLOT};
    use fusion::{analyse, parse_graph};
    use limits::ROOFLINE_DECADES;

    const EXAMPLE: &str =
        include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/data/graphs/worked_example.json"));

    fn report(chip: &Chip) -> TimeReport {
        let g = parse_graph(EXAMPLE).unwrap();
        estimate(&g, &analyse(&g), chip).unwrap()
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
        use crate::roofline::RooflinePoint;
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
        use crate::roofline::RooflinePoint;
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
}
