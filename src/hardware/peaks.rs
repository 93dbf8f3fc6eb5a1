//! Peak FLOP/s per compute unit and data type: a GEMM in fp8 and an elementwise add in fp32 run
//! against very different ceilings on the same chip, so one "peak FLOP/s" would put every
//! non-bf16 op's roofline percentage off by up to 30×.
//!
//! The keys are those datasheets (and TraceLens's "Compute Spec" column) use: `matrix_bf16`,
//! `vector_fp32`, … A chip holds the figures its datasheet gives; [`Peaks::lookup`] says which
//! one a row was measured against when the exact one is missing.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

/// Where the arithmetic runs: tensor/matrix cores (MFMA, WGMMA) or the vector ALUs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Unit {
    Matrix,
    Vector,
}

/// The arithmetic's data type, as far as peaks distinguish them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Precision {
    Fp8,
    Bf16,
    Fp16,
    Tf32,
    Fp32,
    Fp64,
}

impl Precision {
    const ALL: [Precision; 6] =
        [Precision::Fp8, Precision::Bf16, Precision::Fp16, Precision::Tf32, Precision::Fp32, Precision::Fp64];

    fn word(self) -> &'static str {
        match self {
            Precision::Fp8 => "fp8",
            Precision::Bf16 => "bf16",
            Precision::Fp16 => "fp16",
            Precision::Tf32 => "tf32",
            Precision::Fp32 => "fp32",
            Precision::Fp64 => "fp64",
        }
    }
}

/// One peak: unit and precision (`matrix_bf16`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PeakKey {
    pub unit: Unit,
    pub precision: Precision,
}

impl PeakKey {
    pub const fn new(unit: Unit, precision: Precision) -> Self {
        PeakKey { unit, precision }
    }

    /// `matrix_bf16`, `vector_fp32`.
    pub fn name(self) -> String {
        self.to_string()
    }

    /// Reads `matrix_bf16`-style keys; `None` for anything else.
    pub fn parse(text: &str) -> Option<PeakKey> {
        let (unit, precision) = text.split_once('_')?;
        let unit = match unit {
            "matrix" => Unit::Matrix,
            "vector" => Unit::Vector,
            _ => return None,
        };
        let precision = Precision::ALL.into_iter().find(|p| p.word() == precision)?;
        Some(PeakKey { unit, precision })
    }

    /// The peaks to try, in order, when this one is not on the datasheet. fp16 and bf16 tensor
    /// cores run at the same rate on every chip here; PyTorch's bf16/fp16 elementwise kernels
    /// compute in fp32 (they upcast), so the fp32 vector rate is theirs; a chip without fp8 or
    /// tf32 matrix units runs such GEMMs no faster than bf16.
    fn fallbacks(self) -> &'static [PeakKey] {
        use Precision::*;
        use Unit::*;
        const MB: PeakKey = PeakKey::new(Matrix, Bf16);
        const MH: PeakKey = PeakKey::new(Matrix, Fp16);
        const MS: PeakKey = PeakKey::new(Matrix, Fp32);
        const VS: PeakKey = PeakKey::new(Vector, Fp32);
        const VD: PeakKey = PeakKey::new(Vector, Fp64);
        match (self.unit, self.precision) {
            (Matrix, Bf16) => &[MH],
            (Matrix, Fp16) => &[MB],
            (Matrix, Fp8) => &[MB, MH],
            (Matrix, Tf32) => &[MS, VS],
            (Matrix, Fp32) => &[VS],
            (Matrix, Fp64) => &[VD],
            (Vector, Bf16) | (Vector, Fp16) | (Vector, Tf32) | (Vector, Fp8) => &[VS],
            (Vector, Fp32) => &[],
            (Vector, Fp64) => &[],
        }
    }
}

impl fmt::Display for PeakKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let unit = match self.unit {
            Unit::Matrix => "matrix",
            Unit::Vector => "vector",
        };
        write!(f, "{unit}_{}", self.precision.word())
    }
}

impl Serialize for PeakKey {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for PeakKey {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        PeakKey::parse(&text).ok_or_else(|| {
            serde::de::Error::custom(format!(
                "unknown peak `{}`: peaks are matrix_ or vector_ followed by fp8, bf16, fp16, tf32, fp32 or fp64",
                units::ellipsize(&text, 40)
            ))
        })
    }
}

/// A chip's peaks per unit and precision, FLOP/s (dense: no structured sparsity).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Peaks(BTreeMap<PeakKey, f64>);

/// The peak a row is measured against, and which figure that was.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PeakUsed {
    pub flops: f64,
    /// The figure used: the key asked for, a fallback, or `None` for the chip's one
    /// `peak_flops` (a chip file without per-type peaks).
    pub key: Option<PeakKey>,
}

impl Peaks {
    pub fn from_tflops(entries: &[(PeakKey, f64)]) -> Self {
        Peaks(entries.iter().map(|&(k, t)| (k, t * 1e12)).collect())
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn get(&self, key: PeakKey) -> Option<f64> {
        self.0.get(&key).copied()
    }

    pub fn iter(&self) -> impl Iterator<Item = (PeakKey, f64)> + '_ {
        self.0.iter().map(|(k, v)| (*k, *v))
    }

    /// The figure for `key`, else its first fallback present, else `general` (the chip's
    /// `peak_flops`).
    pub fn lookup(&self, key: PeakKey, general: f64) -> PeakUsed {
        std::iter::once(key)
            .chain(key.fallbacks().iter().copied())
            .find_map(|k| self.get(k).map(|flops| PeakUsed { flops, key: Some(k) }))
            .unwrap_or(PeakUsed { flops: general, key: None })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_read_and_write_as_datasheet_words() {
        for unit in [Unit::Matrix, Unit::Vector] {
            for p in Precision::ALL {
                let k = PeakKey::new(unit, p);
                assert_eq!(PeakKey::parse(&k.name()), Some(k));
            }
        }
        assert_eq!(PeakKey::new(Unit::Matrix, Precision::Bf16).name(), "matrix_bf16");
        assert_eq!(PeakKey::parse("matrix_int8"), None);
        assert_eq!(PeakKey::parse("bf16"), None);
        let json =
            serde_json::to_string(&Peaks::from_tflops(&[(PeakKey::new(Unit::Vector, Precision::Fp32), 67.0)])).unwrap();
        assert_eq!(json, r#"{"vector_fp32":67000000000000.0}"#);
        assert!(serde_json::from_str::<Peaks>(r#"{"matrix_int4": 1}"#)
            .unwrap_err()
            .to_string()
            .contains("unknown peak"));
    }

    #[test]
    fn lookup_says_which_figure_it_used() {
        let mb = PeakKey::new(Unit::Matrix, Precision::Bf16);
        let vs = PeakKey::new(Unit::Vector, Precision::Fp32);
        let peaks = Peaks::from_tflops(&[(mb, 989.4), (vs, 67.0)]);
        assert_eq!(peaks.lookup(mb, 1.0), PeakUsed { flops: 989.4e12, key: Some(mb) });
        // fp8 GEMM on a chip without fp8: the bf16 figure, named.
        assert_eq!(peaks.lookup(PeakKey::new(Unit::Matrix, Precision::Fp8), 1.0).key, Some(mb));
        // bf16 elementwise: the fp32 vector rate.
        assert_eq!(peaks.lookup(PeakKey::new(Unit::Vector, Precision::Bf16), 1.0).key, Some(vs));
        // fp64 vector: nothing on file, so the general peak.
        assert_eq!(peaks.lookup(PeakKey::new(Unit::Vector, Precision::Fp64), 5.0), PeakUsed { flops: 5.0, key: None });
    }
}
