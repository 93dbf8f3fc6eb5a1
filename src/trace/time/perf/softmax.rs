//! Softmax: `aten::_softmax`, `aten::softmax`, `aten::_safe_softmax`, `aten::_log_softmax`,
//! `aten::log_softmax`.
//!
//! FLOPs: 5 per element, one per elementary step (the row maximum, the subtraction, the
//! exponential, the row sum, the division; `log_softmax` has the same count). Bytes: the input
//! read once and the output written once, the output in `fp32` when `half_to_float` is set, or
//! in the `dtype` asked for.

use super::args::OpArgs;
use super::cost::{product, Family, OpCost, Traffic, Unit};
use super::dtype::DType;
use super::error::{NoModel, Quantity};

/// FLOPs per element (module documentation).
pub const FLOPS_PER_ELEMENT: u64 = 5;

/// `_softmax(self, dim, half_to_float)` and `_log_softmax`.
pub fn internal(args: &OpArgs) -> Result<OpCost, NoModel> {
    let x = args.tensor(0, "the input")?;
    let out = if args.flag(2, "half_to_float", false)? { DType::F32 } else { x.dtype() };
    cost(args, out)
}

/// `softmax(self, dim, dtype?)`, `log_softmax` and `_safe_softmax`.
pub fn public(args: &OpArgs) -> Result<OpCost, NoModel> {
    let x = args.tensor(0, "the input")?;
    let out = match args.int(2, "dtype")? {
        None => x.dtype(),
        Some(code) => DType::from_scalar_type_code(code)
            .ok_or_else(|| NoModel::Unsupported(format!("dtype {code} (input 2) is not a type with a known size")))?,
    };
    cost(args, out)
}

fn cost(args: &OpArgs, out: DType) -> Result<OpCost, NoModel> {
    let x = args.tensor(0, "the input")?;
    let n = x.numel()?;
    let flops = product(&[n, FLOPS_PER_ELEMENT], Quantity::Flops, x.index())?;
    let bytes = Traffic::new().tensor(x)?.elements(n, out, x.index())?;
    Ok(OpCost::exact(Family::Softmax, Unit::Vector, x.dtype(), flops, bytes.total()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(dims: &str, types: &str, concrete: &str) -> OpArgs {
        OpArgs::of_text(dims, types, Some(concrete))
    }

    #[test]
    fn softmax_in_and_out() {
        let c = internal(&args(
            "[[16, 12, 128, 128], [], []]",
            r#"["c10::Half", "Scalar", "Scalar"]"#,
            r#"["", "-1", "False"]"#,
        ))
        .unwrap();
        let n = 16 * 12 * 128 * 128;
        assert_eq!((c.flops, c.bytes, c.family), (5 * n, 4 * n, Family::Softmax));
        let c = internal(&args("[[4, 10], [], []]", r#"["c10::Half", "Scalar", "Scalar"]"#, r#"["", "-1", "True"]"#))
            .unwrap();
        assert_eq!(c.bytes, 40 * 2 + 40 * 4);
        let c = public(&args("[[4, 10], [], []]", r#"["c10::BFloat16", "Scalar", "Scalar"]"#, r#"["", "1", "6"]"#))
            .unwrap();
        assert_eq!(c.bytes, 40 * 2 + 40 * 4);
        let c = public(&args("[[4, 10], [], []]", r#"["float", "Scalar", ""]"#, r#"["", "1", ""]"#)).unwrap();
        assert_eq!(c.bytes, 40 * 8);
    }
}
