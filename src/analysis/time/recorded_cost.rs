//! The production cost lookup of the op table: the per-op cost formulas of the `perf`
//! crate over an op's recorded shapes (`docs/cost-formulas.md`).

use super::op_table::{Cost, ShapeText};
use hardware::{PeakKey, Precision};
use perf::{cost_from_trace, has_formula, DType, Family, RawArgs};

/// The production cost lookup: the cost formulas of [`perf`] over the recorded
/// shapes (`docs/cost-formulas.md`).
pub fn recorded_cost(op: &str, shapes: ShapeText<'_>) -> Result<Cost, String> {
    let raw = RawArgs { input_dims: shapes.dims, input_type: shapes.types, concrete_inputs: shapes.concrete };
    if shapes.dims.is_none() && has_formula(op) {
        return Err("Input Dims not recorded".into());
    }
    let c = cost_from_trace(op, raw).map_err(|e| e.to_string())?;
    Ok(Cost {
        model: family_name(c.family),
        flops: c.flops,
        bytes: c.bytes,
        peak: PeakKey::new(c.unit, precision(c.dtype)),
        estimate: c.estimate,
    })
}

/// The model family as the op table names it.
fn family_name(f: Family) -> &'static str {
    match f {
        Family::Gemm => "GEMM",
        Family::Attention => "attention",
        Family::Conv => "convolution",
        Family::Elementwise => "elementwise",
        Family::Norm => "norm",
        Family::Softmax => "softmax",
        Family::Reduce => "reduction",
        Family::Embedding => "embedding",
        Family::Copy => "copy",
        Family::Triton => "Triton",
    }
}

/// The peak precision of an element type. fp32 matrix work is counted against the fp32 matrix
/// peak (PyTorch leaves TF32 off for matmuls by default); integer and bool ops run on the
/// vector units and have no datasheet peak of their own, so they use the fp32 one.
fn precision(d: DType) -> Precision {
    match d {
        DType::BF16 => Precision::Bf16,
        DType::F16 => Precision::Fp16,
        DType::F32 => Precision::Fp32,
        DType::F64 => Precision::Fp64,
        DType::F8E4M3FN | DType::F8E4M3FNUZ | DType::F8E5M2 | DType::F8E5M2FNUZ => Precision::Fp8,
        _ => Precision::Fp32,
    }
}
