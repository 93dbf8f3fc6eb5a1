//! Chips: the three numbers the roofline needs (peak FLOP/s, memory bandwidth, launch overhead),
//! from built-in presets or from a user's JSON file.
//!
//! Two JSON forms are accepted:
//!
//! * the NeuSim chip format (`num_sa`, `sa_dim`, `freq_GHz`, `hbm_bw_GBps`, `name`, …, as in
//!   `tests/data/models/chips/`): peak FLOP/s = `num_sa × sa_dim² × 2 × freq_GHz × 10⁹` (each
//!   systolic array does `sa_dim²` multiply-adds per cycle, one multiply-add being 2 FLOPs),
//!   bandwidth = `hbm_bw_GBps × 10⁹` bytes/s (decimal GB, as the datasheets state it);
//! * a simple form `{"name": "my-gpu", "peak_flops": 9.89e14, "hbm_bw_GBps": 3350,
//!   "launch_overhead_us": 2.0}` (`launch_overhead_us` optional, default 0).
//!
//! Every chip that is not a preset (read from a file, restored from a share link, deserialised
//! in any way) is held to the ranges of [`limits`] ([`Chip::validate`]): a chip of 1e308
//! FLOP/s or a NaN bandwidth would make every time and chart meaningless, and once made the
//! roofline chart loop over billions of decades.

use std::ops::RangeInclusive;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use thiserror::Error;

use super::peaks::{PeakKey, PeakUsed, Peaks, Precision, Unit};
use limits::{CHIP_BANDWIDTH, CHIP_LAUNCH_OVERHEAD_US, CHIP_NAME_CHARS, CHIP_PEAK_FLOPS, CHIP_SOURCE_CHARS};

/// A chip as the time model sees it. Deserialising one validates it ([`Chip::validate`]), so a
/// share link cannot bring in figures a chip file could not.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "ChipFields")]
pub struct Chip {
    /// Display name, e.g. `TPU v5p` or `H100 SXM`.
    pub name: String,
    /// Dense bf16/fp16 peak, FLOP/s.
    pub peak_flops: f64,
    /// HBM bandwidth, bytes/s.
    pub hbm_bandwidth: f64,
    /// Fixed cost added to every kernel, µs.
    pub launch_overhead_us: f64,
    /// Where the figures come from.
    pub source: String,
    /// Peaks per unit and data type where the datasheet gives them; `peak_flops` stands in for
    /// any that is missing ([`Chip::peak`]).
    #[serde(default, skip_serializing_if = "Peaks::is_empty")]
    pub peaks: Peaks,
}

/// A chip as written (in a share link), before [`Chip::validate`].
#[derive(Deserialize)]
struct ChipFields {
    name: String,
    peak_flops: f64,
    hbm_bandwidth: f64,
    launch_overhead_us: f64,
    source: String,
    #[serde(default)]
    peaks: Peaks,
}

impl TryFrom<ChipFields> for Chip {
    type Error = ChipError;
    fn try_from(f: ChipFields) -> Result<Self, ChipError> {
        let chip = Chip {
            name: f.name,
            peak_flops: f.peak_flops,
            hbm_bandwidth: f.hbm_bandwidth,
            launch_overhead_us: f.launch_overhead_us,
            source: f.source,
            peaks: f.peaks,
        };
        chip.validate()?;
        Ok(chip)
    }
}

impl Chip {
    /// Arithmetic intensity (FLOP/byte) above which an op is compute-bound: `peak / bandwidth`.
    pub fn ridge_intensity(&self) -> f64 {
        self.peak_flops / self.hbm_bandwidth
    }

    /// Checks every field against [`limits`]: name and source lengths, peak FLOP/s,
    /// bandwidth and launch overhead within their ranges (NaN and infinities are outside every
    /// range). The error names the field, its value and the range.
    pub fn validate(&self) -> Result<(), ChipError> {
        text_field("name", &self.name, CHIP_NAME_CHARS, false)?;
        text_field("source", &self.source, CHIP_SOURCE_CHARS, true)?;
        in_range("peak_flops", self.peak_flops, &CHIP_PEAK_FLOPS, 1.0, "FLOP/s")?;
        in_range("hbm_bandwidth", self.hbm_bandwidth, &CHIP_BANDWIDTH, 1.0, "bytes/s")?;
        in_range("launch_overhead_us", self.launch_overhead_us, &CHIP_LAUNCH_OVERHEAD_US, 1.0, "µs")?;
        for (key, flops) in self.peaks.iter() {
            in_range(peak_field(key), flops, &CHIP_PEAK_FLOPS, 1.0, "FLOP/s")?;
        }
        Ok(())
    }

    /// The peak an op of this unit and precision is measured against, and which figure it was.
    pub fn peak(&self, key: PeakKey) -> PeakUsed {
        self.peaks.lookup(key, self.peak_flops)
    }
}

/// The field name of a peak in messages (`peaks.matrix_bf16`); from a fixed set of keys, so
/// the `'static` strings are a small table rather than a leak.
fn peak_field(key: PeakKey) -> &'static str {
    use Precision::*;
    use Unit::*;
    match (key.unit, key.precision) {
        (Matrix, Fp8) => "peaks.matrix_fp8",
        (Matrix, Bf16) => "peaks.matrix_bf16",
        (Matrix, Fp16) => "peaks.matrix_fp16",
        (Matrix, Tf32) => "peaks.matrix_tf32",
        (Matrix, Fp32) => "peaks.matrix_fp32",
        (Matrix, Fp64) => "peaks.matrix_fp64",
        (Vector, Fp8) => "peaks.vector_fp8",
        (Vector, Bf16) => "peaks.vector_bf16",
        (Vector, Fp16) => "peaks.vector_fp16",
        (Vector, Tf32) => "peaks.vector_tf32",
        (Vector, Fp32) => "peaks.vector_fp32",
        (Vector, Fp64) => "peaks.vector_fp64",
    }
}

/// `1e308`, `1e-320`, `2000`, `0.001`, `NaN`: short enough for a one-line message, exact enough
/// to recognise the value typed.
fn show(v: f64) -> String {
    if v == 0.0 || (v.is_finite() && (1e-3..1e5).contains(&v.abs())) {
        format!("{v}")
    } else {
        format!("{v:e}")
    }
}

/// `value` (in the field's own unit, `scale` × the range's) within `range`, else the error
/// naming the field.
fn in_range(
    field: &'static str,
    value: f64,
    range: &RangeInclusive<f64>,
    scale: f64,
    unit: &'static str,
) -> Result<(), ChipError> {
    let (lo, hi) = (range.start() / scale, range.end() / scale);
    if (lo..=hi).contains(&value) {
        Ok(())
    } else {
        Err(ChipError::OutOfRange { field, value: show(value), range: format!("{} to {} {unit}", show(lo), show(hi)) })
    }
}

fn text_field(field: &'static str, text: &str, max: usize, may_be_empty: bool) -> Result<(), ChipError> {
    let chars = text.chars().count();
    if (chars == 0 && !may_be_empty) || chars > max {
        Err(ChipError::Text { field, chars, max })
    } else {
        Ok(())
    }
}

/// Why a chip JSON was rejected.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum ChipError {
    #[error("chip JSON is malformed at line {line}, column {column}: {message}")]
    Json { line: usize, column: usize, message: String },
    #[error("chip JSON must be an object")]
    NotObject,
    #[error(
        "chip JSON is neither the NeuSim form (num_sa, sa_dim, freq_GHz, hbm_bw_GBps) nor the simple form \
         (name, peak_flops, hbm_bw_GBps); missing field `{0}`"
    )]
    MissingField(&'static str),
    #[error("chip field `{field}` must be a positive finite number (got {value})")]
    BadNumber { field: &'static str, value: String },
    #[error("chip field `{field}` is {value}, outside the accepted range {range}")]
    OutOfRange { field: &'static str, value: String, range: String },
    #[error("chip field `{field}` is {chars} characters long; it must have 1 to {max}")]
    Text { field: &'static str, chars: usize, max: usize },
    #[error("unknown chip preset `{name}`; known presets: {known}")]
    UnknownPreset { name: String, known: String },
}

/// A NeuSim chip's peak: `num_sa × sa_dim² × 2 × freq_GHz × 10⁹` FLOP/s.
pub fn systolic_peak_flops(num_sa: f64, sa_dim: f64, freq_ghz: f64) -> f64 {
    num_sa * sa_dim * sa_dim * 2.0 * freq_ghz * 1e9
}

/// Reads a chip JSON in either accepted form and validates it ([`Chip::validate`]); errors
/// name the field as the file writes it (`hbm_bw_GBps` in GB/s).
pub fn parse_chip(text: &str) -> Result<Chip, ChipError> {
    let value: Value = serde_json::from_str(text).map_err(|e| ChipError::Json {
        line: e.line(),
        column: e.column(),
        message: e.to_string(),
    })?;
    let obj = value.as_object().ok_or(ChipError::NotObject)?;
    let num = |field: &'static str| -> Result<f64, ChipError> {
        let v = obj.get(field).ok_or(ChipError::MissingField(field))?;
        match v.as_f64() {
            Some(x) if x.is_finite() && x > 0.0 => Ok(x),
            _ => Err(ChipError::BadNumber { field, value: v.to_string().chars().take(40).collect() }),
        }
    };
    let launch = match obj.get("launch_overhead_us") {
        None => None,
        Some(v) => {
            let x = v.as_f64().ok_or_else(|| ChipError::OutOfRange {
                field: "launch_overhead_us",
                value: v.to_string().chars().take(40).collect(),
                range: format!(
                    "{} to {} µs",
                    show(*CHIP_LAUNCH_OVERHEAD_US.start()),
                    show(*CHIP_LAUNCH_OVERHEAD_US.end())
                ),
            })?;
            in_range("launch_overhead_us", x, &CHIP_LAUNCH_OVERHEAD_US, 1.0, "µs")?;
            Some(x)
        }
    };
    let bandwidth = |gbps: f64| -> Result<f64, ChipError> {
        in_range("hbm_bw_GBps", gbps, &CHIP_BANDWIDTH, 1e9, "GB/s")?;
        Ok(gbps * 1e9)
    };
    let name_field = obj.get("name").map(|v| v.as_str().map(str::to_string).unwrap_or_else(|| v.to_string()));
    let chip = if obj.contains_key("num_sa") {
        let peak = systolic_peak_flops(num("num_sa")?, num("sa_dim")?, num("freq_GHz")?);
        in_range("num_sa × sa_dim² × 2 × freq_GHz × 10⁹ (peak FLOP/s)", peak, &CHIP_PEAK_FLOPS, 1.0, "FLOP/s")?;
        let bw = bandwidth(num("hbm_bw_GBps")?)?;
        let name = match name_field {
            // NeuSim names TPUs by generation only ("5p").
            Some(n) if !n.is_empty() && n.chars().next().is_some_and(|c| c.is_ascii_digit()) => format!("TPU v{n}"),
            Some(n) if !n.is_empty() => n,
            _ => "unnamed NeuSim chip".to_string(),
        };
        Chip {
            name,
            peak_flops: peak,
            hbm_bandwidth: bw,
            launch_overhead_us: launch.unwrap_or(TPU_LAUNCH_OVERHEAD_US),
            source: "NeuSim chip config: peak = num_sa × sa_dim² × 2 × freq_GHz, bandwidth = hbm_bw_GBps".into(),
            peaks: Peaks::default(),
        }
    } else if let Some(table) = obj.get("max_achievable_tflops") {
        // TraceLens's arch files (name, mem_bw_gbps, max_achievable_tflops per type).
        let peaks = peaks_tflops(table, "max_achievable_tflops")?;
        let general = peaks
            .get(PeakKey::new(Unit::Matrix, Precision::Bf16))
            .or_else(|| peaks.get(PeakKey::new(Unit::Matrix, Precision::Fp16)))
            .ok_or(ChipError::MissingField("max_achievable_tflops.matrix_bf16"))?;
        Chip {
            name: name_field.filter(|n| !n.is_empty()).unwrap_or_else(|| "unnamed chip".to_string()),
            peak_flops: general,
            hbm_bandwidth: bandwidth(num("mem_bw_gbps")?)?,
            launch_overhead_us: launch.unwrap_or(GPU_LAUNCH_OVERHEAD_US),
            source: "TraceLens arch file: max achievable TFLOP/s per type, mem_bw_gbps".into(),
            peaks,
        }
    } else {
        let name = name_field.ok_or(ChipError::MissingField("name"))?;
        let peaks = match obj.get("peak_tflops") {
            Some(table) => peaks_tflops(table, "peak_tflops")?,
            None => Peaks::default(),
        };
        Chip {
            name,
            peak_flops: num("peak_flops")?,
            hbm_bandwidth: bandwidth(num("hbm_bw_GBps")?)?,
            launch_overhead_us: launch.unwrap_or(0.0),
            source: "user chip JSON".into(),
            peaks,
        }
    };
    chip.validate()?;
    Ok(chip)
}

/// A `{"matrix_bf16": 708, "vector_fp32": 81, …}` table in TFLOP/s. Keys that are not a
/// floating-point peak (`matrix_int8`) are skipped: no cost formula uses them.
fn peaks_tflops(table: &Value, field: &'static str) -> Result<Peaks, ChipError> {
    let obj = table.as_object().ok_or(ChipError::BadNumber { field, value: "not an object".into() })?;
    let mut entries = Vec::new();
    for (key, v) in obj {
        let Some(key) = PeakKey::parse(key) else { continue };
        match v.as_f64() {
            Some(t) if t.is_finite() && t > 0.0 => entries.push((key, t)),
            _ => {
                return Err(ChipError::BadNumber {
                    field: peak_field(key),
                    value: v.to_string().chars().take(40).collect(),
                })
            }
        }
    }
    Ok(Peaks::from_tflops(&entries))
}

/// Per-op fixed cost for TPU presets: the NeuSim simulator never reports an op faster than
/// 500 ns (see docs/time-model.md), so its tables and ours agree on tiny ops.
pub const TPU_LAUNCH_OVERHEAD_US: f64 = 0.5;

/// Per-kernel launch cost assumed for GPU presets (a back-to-back launch from a busy stream;
/// eager launches from Python cost more, CUDA/HIP graphs less).
pub const GPU_LAUNCH_OVERHEAD_US: f64 = 2.0;

mod presets;
pub use presets::{all_presets, gpu_preset_names, preset, preset_names};

#[cfg(test)]
mod tests;
