//! Element types of optrace tensors and their sizes.

use std::fmt;

use serde::{Serialize, Serializer};

/// An element type as written in a tensor type (`f16` in `<1x128xf16>`).
///
/// The text form's table (`docs/optrace.md`) is
/// `f16 f32 f64 bf16 f8e4m3 f8e5m2 u8 i8 u16 i16 u32 i32 b8 pred unknown`;
/// `i64` and `u64` (8 bytes) are accepted too because PyTorch index tensors use them. Any other
/// name, and the literal `unknown`, is [`Dtype::Unknown`]: its size is not known, and whoever
/// needs a size must say what it assumed.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Dtype {
    F16,
    F32,
    F64,
    Bf16,
    F8e4m3,
    F8e5m2,
    U8,
    I8,
    U16,
    I16,
    U32,
    I32,
    I64,
    U64,
    B8,
    Pred,
    /// `unknown` or a name not in the table, as written.
    Unknown(String),
}

const TABLE: [(&str, Dtype, u64); 16] = [
    ("f16", Dtype::F16, 2),
    ("f32", Dtype::F32, 4),
    ("f64", Dtype::F64, 8),
    ("bf16", Dtype::Bf16, 2),
    ("f8e4m3", Dtype::F8e4m3, 1),
    ("f8e5m2", Dtype::F8e5m2, 1),
    ("u8", Dtype::U8, 1),
    ("i8", Dtype::I8, 1),
    ("u16", Dtype::U16, 2),
    ("i16", Dtype::I16, 2),
    ("u32", Dtype::U32, 4),
    ("i32", Dtype::I32, 4),
    ("i64", Dtype::I64, 8),
    ("u64", Dtype::U64, 8),
    ("b8", Dtype::B8, 1),
    ("pred", Dtype::Pred, 1),
];

impl Dtype {
    /// Reads a dtype name; never fails (unknown names become [`Dtype::Unknown`]).
    pub fn parse(name: &str) -> Dtype {
        TABLE
            .iter()
            .find(|(n, _, _)| *n == name)
            .map_or_else(|| Dtype::Unknown(name.to_string()), |(_, d, _)| d.clone())
    }

    /// Bytes per element; `None` for an unknown dtype.
    pub fn bytes_per_element(&self) -> Option<u64> {
        TABLE.iter().find(|(_, d, _)| d == self).map(|&(_, _, b)| b)
    }

    pub fn name(&self) -> &str {
        match self {
            Dtype::Unknown(s) => s,
            known => TABLE.iter().find(|(_, d, _)| d == known).map_or("unknown", |(n, _, _)| n),
        }
    }
}

impl fmt::Display for Dtype {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl Serialize for Dtype {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_spec_table() {
        let expected = [
            ("f16", 2),
            ("f32", 4),
            ("f64", 8),
            ("bf16", 2),
            ("f8e4m3", 1),
            ("f8e5m2", 1),
            ("u8", 1),
            ("i8", 1),
            ("u16", 2),
            ("i16", 2),
            ("u32", 4),
            ("i32", 4),
            ("b8", 1),
            ("pred", 1),
        ];
        for (name, bytes) in expected {
            let d = Dtype::parse(name);
            assert_eq!(d.bytes_per_element(), Some(bytes), "{name}");
            assert_eq!(d.name(), name);
        }
        assert_eq!(Dtype::parse("unknown"), Dtype::Unknown("unknown".into()));
        assert_eq!(Dtype::parse("unknown").bytes_per_element(), None);
        assert_eq!(Dtype::parse("c64").bytes_per_element(), None);
        assert_eq!(Dtype::parse("c64").to_string(), "c64");
    }
}
