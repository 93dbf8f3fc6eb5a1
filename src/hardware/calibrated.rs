//! The calibrated time model: a fusion group whose op sequence matches a measured fusion
//! pattern of a hardware calibration profile takes the measured speedup instead of the
//! roofline's estimate: `fused = unfused / speedup_factor`.
//!
//! Matching is [`calib::matching_pattern`]'s: the group's op types in order, reshapes
//! left out, equal the pattern's operators mapped to op types (`Linear_Bias_ReLU` ↔ matmul +
//! elementwise + elementwise); when several patterns share the sequence the lowest measured
//! speedup is used. Groups of one op are never calibrated (nothing is fused). A measured
//! speedup below 1 flags the group: fusing here is slower on this hardware.

use serde::{Deserialize, Serialize};

use super::roofline::{GroupCalibration, TimeReport};
use calib::{matching_pattern, CalibrationProfile};

/// A calibrated group, for listing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CalibratedGroup {
    /// 0-based group index.
    pub group: usize,
    pub ops: Vec<String>,
    pub pattern: String,
    pub speedup: f64,
    /// Fusing here is slower on this hardware (measured speedup < 1).
    pub fusion_slower: bool,
}

/// What calibration did to a time report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CalibrationSummary {
    /// The profile's hardware name.
    pub hardware: String,
    /// Fusion patterns the profile measured.
    pub patterns: usize,
    pub calibrated_groups: Vec<CalibratedGroup>,
}

/// Replaces the fused time of every group that matches a pattern of `profile` and recomputes
/// the totals. Groups that match nothing keep their roofline estimate.
pub fn apply_calibration(report: &mut TimeReport, profile: &CalibrationProfile) -> CalibrationSummary {
    let mut calibrated = Vec::new();
    for g in &mut report.groups {
        let Some(p) = matching_pattern(profile, &g.op_types) else { continue };
        if !(p.speedup_factor.is_finite() && p.speedup_factor > 0.0) {
            continue;
        }
        g.fused_us = g.unfused_us / p.speedup_factor;
        g.speedup = p.speedup_factor;
        let fusion_slower = p.speedup_factor < 1.0;
        g.calibration = Some(GroupCalibration { pattern: p.name.clone(), speedup: p.speedup_factor, fusion_slower });
        calibrated.push(CalibratedGroup {
            group: g.group,
            ops: g.ops.clone(),
            pattern: p.name.clone(),
            speedup: p.speedup_factor,
            fusion_slower,
        });
    }
    report.recompute_totals();
    CalibrationSummary {
        hardware: profile.metadata.hardware_name.clone().unwrap_or_else(|| "unknown hardware".into()),
        patterns: profile.fusion_patterns.len(),
        calibrated_groups: calibrated,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{estimate, preset};
    use calib::{parse_calibration, CalibrationFile};
    use fusion::{analyse, parse_graph};

    /// The worked example of `docs/fusion-rules.md`: [[matmul1, bias1, relu], [matmul2]].
    const EXAMPLE: &str = r#"[
      {"name": "matmul1", "op_type": "matmul", "inputs": ["x", "w1"], "output": "y1", "shape": [1024, 4096], "bytes_per_element": 2},
      {"name": "bias1", "op_type": "elementwise", "inputs": ["y1", "b1"], "output": "y2", "shape": [1024, 4096], "bytes_per_element": 2},
      {"name": "relu", "op_type": "elementwise", "inputs": ["y2"], "output": "y3", "shape": [1024, 4096], "bytes_per_element": 2},
      {"name": "matmul2", "op_type": "matmul", "inputs": ["y3", "w2"], "output": "y4", "shape": [1024, 1024], "bytes_per_element": 2}]"#;

    fn profile(text: &str) -> CalibrationProfile {
        match parse_calibration(text).unwrap() {
            CalibrationFile::Profile(p) => p,
            CalibrationFile::Measured(_) => panic!("expected a profile"),
        }
    }

    #[test]
    fn matching_group_takes_the_measured_speedup() {
        let g = parse_graph(EXAMPLE).unwrap();
        let a = analyse(&g);
        let chip = preset("h100").unwrap();
        let mut t = estimate(&g, &a, &chip).unwrap();
        let roofline_fused = t.groups[0].fused_us;
        let p = profile(include_str!("../../tests/data/calibration/i7_12700k_with_fusion.json"));
        let s = apply_calibration(&mut t, &p);
        // matmul + elementwise + elementwise: Linear_Bias_ReLU (0.981), Linear_Bias_GELU (1.000)
        // and Conv2d_BN_ReLU (1.028) share the sequence; the lowest speedup is used.
        assert_eq!(s.calibrated_groups.len(), 1);
        let c = &s.calibrated_groups[0];
        assert_eq!((c.group, c.pattern.as_str(), c.fusion_slower), (0, "Linear_Bias_ReLU", true));
        let g0 = &t.groups[0];
        assert!((g0.fused_us - g0.unfused_us / 0.9807189076563718).abs() < 1e-9);
        assert_eq!(g0.roofline_fused_us, roofline_fused);
        assert!(g0.fused_us > g0.unfused_us, "a speedup below 1 makes the fused kernel slower");
        // A lone matmul is not a fusion: roofline estimate kept.
        assert!(t.groups[1].calibration.is_none());
        let total: f64 = t.groups.iter().map(|g| g.fused_us).sum();
        assert!((t.fused_us - total).abs() < 1e-9);
    }

    #[test]
    fn a_profile_without_patterns_changes_nothing() {
        let g = parse_graph(EXAMPLE).unwrap();
        let a = analyse(&g);
        let chip = preset("a100").unwrap();
        let mut t = estimate(&g, &a, &chip).unwrap();
        let before = t.clone();
        let p = profile(include_str!("../../tests/data/calibration/jetson_orin_nano_gpu_pytorch.json"));
        let s = apply_calibration(&mut t, &p);
        assert!(s.calibrated_groups.is_empty());
        assert_eq!(s.patterns, 0);
        assert_eq!(t, before);
    }
}
