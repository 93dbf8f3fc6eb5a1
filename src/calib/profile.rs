//! The calibration file formats and how one is recognised and read.
//!
//! Two shapes of file exist (both from branes-ai/graphs):
//!
//! * a **hardware profile**: `metadata` (with `hardware_name`), peak and measured GFLOP/s and
//!   bandwidth, `operation_profiles` (single-op microbenchmarks) and, in newer files,
//!   `fusion_profiles` (each pattern measured unfused and fused). Older files have no
//!   `fusion_profiles` key or an empty one; they load with no patterns.
//! * **measured subgraphs** (`schema_version` 2.0): one model on one device, its fused
//!   subgraphs with FLOPs, bytes and measured latency (no unfused baseline, so no speedups).
//!
//! Every field that a file may leave out is an `Option`; keys we do not know are ignored, so a
//! newer calibration tool does not break the reader.

use std::fmt;
use std::marker::PhantomData;

use serde::de::{Deserializer, MapAccess, Visitor};
use serde::{Deserialize, Serialize};
use thiserror::Error;

/// A calibration file that cannot be used, with what is wrong in words a user can act on.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum CalibError {
    #[error("malformed JSON at line {line}, column {column}: {message}")]
    Json { line: usize, column: usize, message: String },

    #[error(
        "not a calibration file: expected a JSON object with \"metadata\" and \"operation_profiles\" or \
         \"fusion_profiles\" (a hardware profile), or with \"subgraphs\" (measured subgraphs)"
    )]
    UnknownShape,

    #[error("fusion pattern \"{pattern}\" has no speedup_factor and no unfused/fused latencies to compute it from")]
    NoSpeedup { pattern: String },

    #[error("fusion pattern \"{pattern}\": {field} is {value}; it must be a finite number greater than 0")]
    BadNumber { pattern: String, field: &'static str, value: f64 },
}

impl CalibError {
    fn from_json(e: serde_json::Error) -> Self {
        let text = e.to_string();
        // serde_json appends " at line L column C"; the variant prints the position itself.
        let message = match text.rfind(" at line ") {
            Some(i) => text[..i].to_string(),
            None => text,
        };
        CalibError::Json { line: e.line(), column: e.column(), message }
    }
}

/// A loaded calibration file of either shape.
#[derive(Debug, Clone, PartialEq)]
pub enum CalibrationFile {
    Profile(CalibrationProfile),
    Measured(MeasuredSubgraphs),
}

impl CalibrationFile {
    /// The hardware the file describes: `metadata.hardware_name` of a profile, `hardware_id`
    /// (or `device`) of a measured-subgraph file; `"unknown hardware"` if the file names none.
    pub fn hardware(&self) -> &str {
        let name = match self {
            CalibrationFile::Profile(p) => p.metadata.hardware_name.as_deref(),
            CalibrationFile::Measured(m) => m.hardware_id.as_deref().or(m.device.as_deref()),
        };
        name.filter(|n| !n.trim().is_empty()).unwrap_or("unknown hardware")
    }
}

/// Reads a calibration file of either shape, recognised by its keys.
pub fn parse_calibration(text: &str) -> Result<CalibrationFile, CalibError> {
    let value: serde_json::Value = serde_json::from_str(text).map_err(CalibError::from_json)?;
    let obj = value.as_object().ok_or(CalibError::UnknownShape)?;
    if obj.contains_key("subgraphs") {
        // Deserialize from the text, not the value, so that type errors keep their line.
        let m: MeasuredSubgraphs = serde_json::from_str(text).map_err(CalibError::from_json)?;
        return Ok(CalibrationFile::Measured(m));
    }
    let profile_keys = ["metadata", "operation_profiles", "fusion_profiles", "theoretical_peak_gflops"];
    if !profile_keys.iter().any(|k| obj.contains_key(*k)) {
        return Err(CalibError::UnknownShape);
    }
    let raw: RawProfile = serde_json::from_str(text).map_err(CalibError::from_json)?;
    raw.validate().map(CalibrationFile::Profile)
}

/// `metadata` of a hardware profile: who measured what, where.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Metadata {
    pub hardware_name: Option<String>,
    pub calibration_date: Option<String>,
    pub calibration_tool_version: Option<String>,
    pub cpu_model: Option<String>,
    pub cpu_count: Option<u32>,
    pub total_memory_gb: Option<f64>,
    pub pytorch_version: Option<String>,
    pub num_warmup_runs: Option<u32>,
    pub num_measurement_runs: Option<u32>,
    /// `cpu` or `cuda` in newer files; absent in older ones (which are CPU profiles).
    pub device_type: Option<String>,
    pub framework: Option<String>,
    pub gpu_clock: Option<GpuClock>,
}

/// The GPU clock state during calibration (Jetson-style files).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct GpuClock {
    pub sm_clock_mhz: Option<f64>,
    pub max_sm_clock_mhz: Option<f64>,
    pub power_mode_name: Option<String>,
}

/// One single-op microbenchmark of a profile (`operation_profiles`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct OperationProfile {
    pub operation_type: Option<String>,
    pub measured_gflops: Option<f64>,
    pub achieved_bandwidth_gbps: Option<f64>,
    pub efficiency: Option<f64>,
    pub memory_bound: Option<bool>,
    pub mean_latency_ms: Option<f64>,
}

/// Per-precision peaks (`precision_matrix`), in GFLOP/s.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct PrecisionMatrix {
    #[serde(default, deserialize_with = "ordered_map")]
    pub peak_gflops_by_precision: Vec<(String, f64)>,
    #[serde(default, deserialize_with = "ordered_map")]
    pub theoretical_peaks: Vec<(String, f64)>,
}

/// One measured fusion pattern: the same ops timed unfused and fused.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FusionPattern {
    /// `fusion_pattern`, or the map key when the entry has none (`Linear_Bias_ReLU`).
    pub name: String,
    /// The pattern's operators in order (`["Linear", "Bias", "ReLU"]`); from the name split
    /// on `_` when the file gives no `operators`.
    pub operators: Vec<String>,
    /// Unfused time / fused time; above 1 fusion helps.
    pub speedup_factor: f64,
    /// Fraction of memory traffic fusion removes (0.33 = 33 %), from the file or from the
    /// byte counts.
    pub memory_reduction: Option<f64>,
    pub unfused_latency_ms: Option<f64>,
    pub fused_latency_ms: Option<f64>,
    pub unfused_gflops: Option<f64>,
    pub fused_gflops: Option<f64>,
    pub unfused_memory_bytes: Option<u64>,
    pub fused_memory_bytes: Option<u64>,
    pub input_shape: Vec<u64>,
    pub num_trials: Option<u32>,
}

impl FusionPattern {
    /// Fused minus unfused throughput, in GFLOP/s (negative: fusion lost throughput).
    pub fn gflops_change(&self) -> Option<f64> {
        Some(self.fused_gflops? - self.unfused_gflops?)
    }

    /// The throughput change relative to unfused, in percent.
    pub fn gflops_change_pct(&self) -> Option<f64> {
        let unfused = self.unfused_gflops.filter(|&g| g > 0.0)?;
        Some(100.0 * self.gflops_change()? / unfused)
    }
}

/// A hardware calibration profile.
#[derive(Debug, Clone, PartialEq)]
pub struct CalibrationProfile {
    pub metadata: Metadata,
    pub theoretical_peak_gflops: Option<f64>,
    pub theoretical_bandwidth_gbps: Option<f64>,
    pub best_measured_gflops: Option<f64>,
    pub avg_measured_gflops: Option<f64>,
    pub worst_measured_gflops: Option<f64>,
    pub measured_bandwidth_gbps: Option<f64>,
    pub bandwidth_efficiency: Option<f64>,
    pub operation_profiles: Vec<(String, OperationProfile)>,
    /// In file order; empty for profiles from before fusion calibration existed.
    pub fusion_patterns: Vec<FusionPattern>,
    pub precision_matrix: Option<PrecisionMatrix>,
}

/// The profile as written, before the fusion patterns are checked.
#[derive(Debug, Deserialize)]
struct RawProfile {
    #[serde(default)]
    metadata: Metadata,
    theoretical_peak_gflops: Option<f64>,
    theoretical_bandwidth_gbps: Option<f64>,
    best_measured_gflops: Option<f64>,
    avg_measured_gflops: Option<f64>,
    worst_measured_gflops: Option<f64>,
    measured_bandwidth_gbps: Option<f64>,
    bandwidth_efficiency: Option<f64>,
    #[serde(default, deserialize_with = "ordered_map")]
    operation_profiles: Vec<(String, OperationProfile)>,
    #[serde(default, deserialize_with = "ordered_map")]
    fusion_profiles: Vec<(String, RawFusionPattern)>,
    precision_matrix: Option<PrecisionMatrix>,
}

#[derive(Debug, Deserialize)]
struct RawFusionPattern {
    fusion_pattern: Option<String>,
    #[serde(default)]
    operators: Vec<String>,
    speedup_factor: Option<f64>,
    memory_reduction: Option<f64>,
    unfused_latency_ms: Option<f64>,
    fused_latency_ms: Option<f64>,
    unfused_gflops: Option<f64>,
    fused_gflops: Option<f64>,
    unfused_memory_bytes: Option<u64>,
    fused_memory_bytes: Option<u64>,
    #[serde(default)]
    input_shape: Vec<u64>,
    num_trials: Option<u32>,
}

impl RawProfile {
    fn validate(self) -> Result<CalibrationProfile, CalibError> {
        let fusion_patterns =
            self.fusion_profiles.into_iter().map(|(key, raw)| raw.validate(key)).collect::<Result<Vec<_>, _>>()?;
        Ok(CalibrationProfile {
            metadata: self.metadata,
            theoretical_peak_gflops: self.theoretical_peak_gflops,
            theoretical_bandwidth_gbps: self.theoretical_bandwidth_gbps,
            best_measured_gflops: self.best_measured_gflops,
            avg_measured_gflops: self.avg_measured_gflops,
            worst_measured_gflops: self.worst_measured_gflops,
            measured_bandwidth_gbps: self.measured_bandwidth_gbps,
            bandwidth_efficiency: self.bandwidth_efficiency,
            operation_profiles: self.operation_profiles,
            fusion_patterns,
            precision_matrix: self.precision_matrix,
        })
    }
}

impl RawFusionPattern {
    fn validate(self, key: String) -> Result<FusionPattern, CalibError> {
        let name = self.fusion_pattern.filter(|n| !n.trim().is_empty()).unwrap_or(key);
        let positive = |field: &'static str, v: f64| {
            if v.is_finite() && v > 0.0 {
                Ok(v)
            } else {
                Err(CalibError::BadNumber { pattern: name.clone(), field, value: v })
            }
        };
        let speedup_factor = match (self.speedup_factor, self.unfused_latency_ms, self.fused_latency_ms) {
            (Some(s), _, _) => positive("speedup_factor", s)?,
            (None, Some(u), Some(f)) => positive("unfused_latency_ms", u)? / positive("fused_latency_ms", f)?,
            _ => return Err(CalibError::NoSpeedup { pattern: name }),
        };
        let memory_reduction =
            self.memory_reduction.or_else(|| match (self.unfused_memory_bytes, self.fused_memory_bytes) {
                (Some(u), Some(f)) if u > 0 => Some(1.0 - f as f64 / u as f64),
                _ => None,
            });
        let operators = if self.operators.is_empty() {
            name.split('_').filter(|s| !s.is_empty()).map(String::from).collect()
        } else {
            self.operators
        };
        Ok(FusionPattern {
            name,
            operators,
            speedup_factor,
            memory_reduction,
            unfused_latency_ms: self.unfused_latency_ms,
            fused_latency_ms: self.fused_latency_ms,
            unfused_gflops: self.unfused_gflops,
            fused_gflops: self.fused_gflops,
            unfused_memory_bytes: self.unfused_memory_bytes,
            fused_memory_bytes: self.fused_memory_bytes,
            input_shape: self.input_shape,
            num_trials: self.num_trials,
        })
    }
}

/// A measured-subgraph file: one model's fused subgraphs timed on one device.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct MeasuredSubgraphs {
    pub schema_version: Option<String>,
    pub measurement_type: Option<String>,
    pub model: Option<String>,
    pub hardware_id: Option<String>,
    pub device: Option<String>,
    pub precision: Option<String>,
    pub thermal_profile: Option<String>,
    /// FLOP/s (not GFLOP/s).
    pub theoretical_peak_flops: Option<f64>,
    pub measurement_date: Option<String>,
    pub batch_size: Option<u32>,
    #[serde(default)]
    pub subgraphs: Vec<MeasuredSubgraph>,
    pub model_summary: Option<ModelSummary>,
}

/// One fused subgraph (a kernel) and its measurement.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct MeasuredSubgraph {
    pub subgraph_id: Option<u32>,
    /// `Conv2d_BatchNorm2d_ReLU`, or `Unfused` for a lone op.
    #[serde(default)]
    pub fusion_pattern: String,
    pub operation_type: Option<String>,
    pub flops: Option<f64>,
    pub total_bytes: Option<u64>,
    pub arithmetic_intensity: Option<f64>,
    /// Milliseconds.
    pub measured_latency: Option<Statistic>,
    /// FLOP/s.
    pub achieved_flops: Option<f64>,
    /// Fraction of the theoretical peak.
    pub efficiency: Option<Statistic>,
    #[serde(default)]
    pub node_names: Vec<String>,
}

/// Summary statistics of repeated measurements.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Statistic {
    pub mean: f64,
    pub std: Option<f64>,
    pub min: Option<f64>,
    pub max: Option<f64>,
    pub samples: Option<u32>,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ModelSummary {
    pub total_flops: Option<f64>,
    pub total_bytes: Option<u64>,
    pub total_latency_ms: Option<f64>,
    pub throughput_fps: Option<f64>,
    pub num_subgraphs: Option<u32>,
}

/// A JSON object read as `(key, value)` pairs in file order (serde_json's own map would sort
/// the keys, and patterns are best shown in the order the calibration tool ran them).
/// `null` reads as empty.
fn ordered_map<'de, D, T>(d: D) -> Result<Vec<(String, T)>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    struct Ordered<T>(PhantomData<T>);
    impl<'de, T: Deserialize<'de>> Visitor<'de> for Ordered<T> {
        type Value = Vec<(String, T)>;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a JSON object")
        }
        fn visit_unit<E>(self) -> Result<Self::Value, E> {
            Ok(Vec::new())
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            let mut out = Vec::with_capacity(map.size_hint().unwrap_or(0));
            while let Some(entry) = map.next_entry()? {
                out.push(entry);
            }
            Ok(out)
        }
    }
    d.deserialize_any(Ordered(PhantomData))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn profile(text: &str) -> CalibrationProfile {
        match parse_calibration(text).unwrap() {
            CalibrationFile::Profile(p) => p,
            other => panic!("expected a profile, got {other:?}"),
        }
    }

    #[test]
    fn patterns_keep_file_order_and_fill_in_missing_fields() {
        let p = profile(
            r#"{"metadata": {"hardware_name": "X", "new_key": 1},
                "fusion_profiles": {
                  "Z_last": {"unfused_latency_ms": 3.0, "fused_latency_ms": 2.0,
                             "unfused_memory_bytes": 400, "fused_memory_bytes": 100},
                  "A_first": {"fusion_pattern": "Linear_Bias", "speedup_factor": 1.2}}}"#,
        );
        let names: Vec<&str> = p.fusion_patterns.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["Z_last", "Linear_Bias"]);
        assert_eq!(p.fusion_patterns[0].speedup_factor, 1.5);
        assert_eq!(p.fusion_patterns[0].memory_reduction, Some(0.75));
        assert_eq!(p.fusion_patterns[0].operators, ["Z", "last"]);
        assert_eq!(p.fusion_patterns[1].operators, ["Linear", "Bias"]);
    }

    #[test]
    fn missing_or_null_fusion_profiles_load_empty() {
        assert!(profile(r#"{"metadata": {"hardware_name": "old"}}"#).fusion_patterns.is_empty());
        assert!(profile(r#"{"metadata": {}, "fusion_profiles": null}"#).fusion_patterns.is_empty());
    }

    #[test]
    fn a_pattern_without_any_timing_is_an_error_naming_it() {
        let e = parse_calibration(r#"{"fusion_profiles": {"Linear_Bias": {"operators": ["Linear", "Bias"]}}}"#)
            .unwrap_err();
        assert_eq!(e, CalibError::NoSpeedup { pattern: "Linear_Bias".into() });
        let e = parse_calibration(r#"{"fusion_profiles": {"P": {"speedup_factor": -1}}}"#).unwrap_err();
        assert!(e.to_string().contains("\"P\": speedup_factor is -1"), "{e}");
    }

    #[test]
    fn other_json_is_rejected_with_the_shape_or_the_position() {
        assert_eq!(parse_calibration("[1, 2]").unwrap_err(), CalibError::UnknownShape);
        assert_eq!(parse_calibration(r#"{"ops": []}"#).unwrap_err(), CalibError::UnknownShape);
        match parse_calibration("{\n  \"metadata\": {\"cpu_count\": \"twelve\"}\n}").unwrap_err() {
            CalibError::Json { line, .. } => assert_eq!(line, 2),
            e => panic!("{e:?}"),
        }
        assert!(matches!(parse_calibration("{\"metadata\": ").unwrap_err(), CalibError::Json { line: 1, .. }));
    }
}
