//! What a model says about one op call: its work ([`OpCost`]) and which chip peak it is
//! measured against ([`Unit`] and [`DType`]), plus the checked arithmetic every model counts
//! with (sizes come from a file, so any product can overflow; an overflow is an error naming
//! the input, never a wrapped or saturated number).

use serde::Serialize;

use super::args::Tensor;
use super::dtype::DType;
use super::error::{NoCost, Quantity};

/// The kind of work, for grouping rows and choosing how to read them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Family {
    Gemm,
    Attention,
    Conv,
    Elementwise,
    Norm,
    Softmax,
    Reduce,
    Embedding,
    Copy,
    /// An Inductor-generated Triton kernel (`triton_poi_fused_…`); its FLOPs are an estimate.
    Triton,
}

/// Which execution units the op's FLOPs run on (the matrix units for GEMM, attention and
/// convolution, the vector units for everything else): the chips' own [`Unit`], so that with
/// [`OpCost::dtype`] it picks the chip peak (matrix bf16, vector fp32, …).
pub use hardware::peaks::Unit;

/// The work of one op call: floating-point (or integer) operations, and the minimum bytes it
/// moves to and from device memory (each input read once, each output written once;
/// `docs/cost-formulas.md`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct OpCost {
    pub family: Family,
    pub flops: u64,
    pub bytes: u64,
    pub unit: Unit,
    /// The element type the FLOPs are done in (the first operand's), for the peak.
    pub dtype: DType,
    /// The FLOPs are an estimate rather than counted from the op's definition (Triton kernels,
    /// whose work is read from the op names in the kernel's name).
    pub estimate: bool,
}

impl OpCost {
    /// An exact cost (`estimate: false`).
    pub fn exact(family: Family, unit: Unit, dtype: DType, flops: u64, bytes: u64) -> OpCost {
        OpCost { family, flops, bytes, unit, dtype, estimate: false }
    }
}

/// The product of `factors`; overflow is [`NoCost::Overflow`] of `what`, naming `input`.
pub fn product(factors: &[u64], what: Quantity, input: usize) -> Result<u64, NoCost> {
    factors.iter().try_fold(1u64, |p, &f| p.checked_mul(f)).ok_or(NoCost::Overflow { what, input })
}

/// The sum of `terms`; overflow is [`NoCost::Overflow`] of `what`, naming `input`.
pub fn sum(terms: &[u64], what: Quantity, input: usize) -> Result<u64, NoCost> {
    terms.iter().try_fold(0u64, |s, &t| s.checked_add(t)).ok_or(NoCost::Overflow { what, input })
}

/// Bytes moved, added up tensor by tensor; the first overflow names the tensor whose bytes
/// did not fit. Reads and writes count alike: the split does not change the minimum traffic.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Traffic(u64);

impl Traffic {
    pub fn new() -> Traffic {
        Traffic(0)
    }

    /// Adds a whole tensor (read once or written once).
    pub fn tensor(self, t: &Tensor) -> Result<Traffic, NoCost> {
        self.add(t.bytes()?, t.index())
    }

    /// Adds an optional tensor (a bias that may be absent).
    pub fn opt_tensor(self, t: Option<&Tensor>) -> Result<Traffic, NoCost> {
        match t {
            Some(t) => self.tensor(t),
            None => Ok(self),
        }
    }

    /// Adds `elements` of `dtype` (an output, or the part of an input that is read); an
    /// overflow names `input`, the tensor the elements belong to or are computed from.
    pub fn elements(self, elements: u64, dtype: DType, input: usize) -> Result<Traffic, NoCost> {
        let bytes = product(&[elements, dtype.size_bytes()], Quantity::Bytes, input)?;
        self.add(bytes, input)
    }

    /// Adds another tally (bytes counted apart, e.g. a norm's parameters); an overflow names
    /// `input`.
    pub fn plus(self, other: Traffic, input: usize) -> Result<Traffic, NoCost> {
        self.add(other.0, input)
    }

    fn add(self, bytes: u64, input: usize) -> Result<Traffic, NoCost> {
        self.0.checked_add(bytes).map(Traffic).ok_or(NoCost::Overflow { what: Quantity::Bytes, input })
    }

    pub fn total(self) -> u64 {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shape::Shape;

    #[test]
    fn checked_sums_name_the_input() {
        let big = Tensor::new(3, Shape::new(vec![1 << 40, 1 << 22]), DType::F32);
        assert_eq!(Traffic::new().tensor(&big).unwrap_err().to_string(), "overflow computing bytes of input 3");
        assert_eq!(
            product(&[1 << 40, 1 << 30], Quantity::Flops, 0).unwrap_err().to_string(),
            "overflow computing FLOPs of input 0"
        );
        assert_eq!(
            sum(&[u64::MAX, 1], Quantity::Bytes, 2).unwrap_err(),
            NoCost::Overflow { what: Quantity::Bytes, input: 2 }
        );
        let t = Tensor::new(0, Shape::new(vec![2, 3]), DType::BF16);
        assert_eq!(Traffic::new().tensor(&t).unwrap().elements(5, DType::F32, 0).unwrap().total(), 32);
    }
}
