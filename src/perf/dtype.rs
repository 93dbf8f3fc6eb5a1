//! Element types as the profiler writes them in `args["Input type"]`, with their sizes.
//!
//! The profiler writes a tensor's type as its C++ type name (`float`, `c10::BFloat16`,
//! `long int`), so this table maps those names, not PyTorch's Python names. A name it does
//! not know (complex, quantized and packed 4-bit types, or a spelling of a future PyTorch) is
//! not guessed at: [`DType::from_trace_name`] returns `None`, the input is kept as an unknown
//! tensor, and a model that needs its size says so ("unknown element type … of input 2")
//! rather than counting bytes with a size that may be wrong.

use std::fmt;

use serde::{Serialize, Serializer};

/// An element type whose size is known. The short [`name`](DType::name) (`bf16`, `fp32`) is
/// what chip peaks are keyed by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DType {
    F64,
    F32,
    F16,
    BF16,
    F8E4M3FN,
    F8E4M3FNUZ,
    F8E5M2,
    F8E5M2FNUZ,
    I64,
    I32,
    I16,
    I8,
    U64,
    U32,
    U16,
    U8,
    Bool,
}

/// What kind of number a type holds, for PyTorch's type promotion (a float outranks an
/// integer, which outranks a bool, whatever their sizes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    Bool,
    Integer,
    Float,
}

/// Trace spellings, element size in bytes, short name. Several spellings map to one type:
/// older profilers write `long`, newer ones `long int`.
const TABLE: &[(&str, DType)] = &[
    ("double", DType::F64),
    ("float", DType::F32),
    ("c10::Half", DType::F16),
    ("c10::BFloat16", DType::BF16),
    ("c10::Float8_e4m3fn", DType::F8E4M3FN),
    ("c10::Float8_e4m3fnuz", DType::F8E4M3FNUZ),
    ("c10::Float8_e5m2", DType::F8E5M2),
    ("c10::Float8_e5m2fnuz", DType::F8E5M2FNUZ),
    ("long int", DType::I64),
    ("long", DType::I64),
    ("long long", DType::I64),
    ("long long int", DType::I64),
    ("int", DType::I32),
    ("short int", DType::I16),
    ("short", DType::I16),
    ("signed char", DType::I8),
    ("unsigned long", DType::U64),
    ("unsigned long int", DType::U64),
    ("unsigned long long", DType::U64),
    ("unsigned int", DType::U32),
    ("unsigned short", DType::U16),
    ("unsigned short int", DType::U16),
    ("unsigned char", DType::U8),
    ("bool", DType::Bool),
];

impl DType {
    /// The type a trace names (`"c10::BFloat16"`), or `None` if the name is not a known
    /// element type (`"Scalar"`, `""`, `"c10::complex<float>"`).
    pub fn from_trace_name(name: &str) -> Option<DType> {
        TABLE.iter().find(|(n, _)| *n == name).map(|&(_, d)| d)
    }

    /// The type of a `torch.dtype` argument as the trace records it: the number of
    /// `c10::ScalarType` (`_to_copy(x, dtype=torch.float32)` has `"6"` in Concrete Inputs).
    /// Codes of types without a size here (complex, quantized, sub-byte) are `None`.
    pub fn from_scalar_type_code(code: i64) -> Option<DType> {
        Some(match code {
            0 => DType::U8,
            1 => DType::I8,
            2 => DType::I16,
            3 => DType::I32,
            4 => DType::I64,
            5 => DType::F16,
            6 => DType::F32,
            7 => DType::F64,
            11 => DType::Bool,
            15 => DType::BF16,
            23 => DType::F8E5M2,
            24 => DType::F8E4M3FN,
            25 => DType::F8E5M2FNUZ,
            26 => DType::F8E4M3FNUZ,
            27 => DType::U16,
            28 => DType::U32,
            29 => DType::U64,
            _ => return None,
        })
    }

    /// Bytes per element.
    pub fn size_bytes(self) -> u64 {
        match self {
            DType::F64 | DType::I64 | DType::U64 => 8,
            DType::F32 | DType::I32 | DType::U32 => 4,
            DType::F16 | DType::BF16 | DType::I16 | DType::U16 => 2,
            DType::F8E4M3FN
            | DType::F8E4M3FNUZ
            | DType::F8E5M2
            | DType::F8E5M2FNUZ
            | DType::I8
            | DType::U8
            | DType::Bool => 1,
        }
    }

    /// Short name, as chip peaks are keyed: `fp32`, `bf16`, `fp8_e4m3fn`, `int64`, `bool`.
    pub fn name(self) -> &'static str {
        match self {
            DType::F64 => "fp64",
            DType::F32 => "fp32",
            DType::F16 => "fp16",
            DType::BF16 => "bf16",
            DType::F8E4M3FN => "fp8_e4m3fn",
            DType::F8E4M3FNUZ => "fp8_e4m3fnuz",
            DType::F8E5M2 => "fp8_e5m2",
            DType::F8E5M2FNUZ => "fp8_e5m2fnuz",
            DType::I64 => "int64",
            DType::I32 => "int32",
            DType::I16 => "int16",
            DType::I8 => "int8",
            DType::U64 => "uint64",
            DType::U32 => "uint32",
            DType::U16 => "uint16",
            DType::U8 => "uint8",
            DType::Bool => "bool",
        }
    }

    pub fn kind(self) -> Kind {
        match self {
            DType::Bool => Kind::Bool,
            DType::I64 | DType::I32 | DType::I16 | DType::I8 | DType::U64 | DType::U32 | DType::U16 | DType::U8 => {
                Kind::Integer
            }
            _ => Kind::Float,
        }
    }

    pub fn is_float(self) -> bool {
        self.kind() == Kind::Float
    }

    /// The type PyTorch computes `a ⊕ b` in, for two operands of the same standing (both
    /// dimensioned tensors, say): the higher kind wins; within a kind the larger size; `fp16`
    /// with `bf16` meet in `fp32`, and a signed with an unsigned integer type in the next signed
    /// size up. Float8 types do not promote in PyTorch (it raises); the larger is kept here, so
    /// that a model never fails for it.
    pub fn promote(self, other: DType) -> DType {
        use DType::*;
        if self == other {
            return self;
        }
        match self.kind().cmp(&other.kind()) {
            std::cmp::Ordering::Greater => return self,
            std::cmp::Ordering::Less => return other,
            std::cmp::Ordering::Equal => {}
        }
        match (self, other) {
            (F16, BF16) | (BF16, F16) => F32,
            (a, b) if a.kind() == Kind::Integer && a.is_signed() != b.is_signed() => {
                let size = a.size_bytes().max(b.size_bytes());
                let (unsigned, signed) = if a.is_signed() { (b, a) } else { (a, b) };
                if signed.size_bytes() > unsigned.size_bytes() {
                    signed
                } else {
                    match size {
                        1 => I16,
                        2 => I32,
                        _ => I64,
                    }
                }
            }
            (a, b) => {
                if b.size_bytes() > a.size_bytes() {
                    b
                } else {
                    a
                }
            }
        }
    }

    fn is_signed(self) -> bool {
        !matches!(self, DType::U64 | DType::U32 | DType::U16 | DType::U8 | DType::Bool)
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl Serialize for DType {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trace_names_and_sizes() {
        assert_eq!(DType::from_trace_name("c10::BFloat16"), Some(DType::BF16));
        assert_eq!(DType::from_trace_name("long int"), Some(DType::I64));
        assert_eq!(DType::from_trace_name("long"), Some(DType::I64));
        assert_eq!(DType::from_trace_name("c10::Float8_e4m3fn").map(DType::size_bytes), Some(1));
        assert_eq!(DType::from_trace_name("double").map(DType::size_bytes), Some(8));
        assert_eq!(DType::from_trace_name("Scalar"), None);
        assert_eq!(DType::from_trace_name(""), None);
        assert_eq!(DType::from_trace_name("c10::complex<float>"), None);
    }

    #[test]
    fn scalar_type_codes() {
        assert_eq!(DType::from_scalar_type_code(6), Some(DType::F32));
        assert_eq!(DType::from_scalar_type_code(15), Some(DType::BF16));
        assert_eq!(DType::from_scalar_type_code(4), Some(DType::I64));
        assert_eq!(DType::from_scalar_type_code(9), None);
        assert_eq!(DType::from_scalar_type_code(-1), None);
    }

    #[test]
    fn promotion() {
        use DType::*;
        assert_eq!(BF16.promote(F32), F32);
        assert_eq!(F16.promote(BF16), F32);
        assert_eq!(I64.promote(F16), F16);
        assert_eq!(Bool.promote(U8), U8);
        assert_eq!(U8.promote(I8), I16);
        assert_eq!(U8.promote(I32), I32);
        assert_eq!(I32.promote(I64), I64);
    }
}
