//! Softmax: `aten::_softmax`, `aten::softmax`, `aten::_safe_softmax`, `aten::_log_softmax`,
//! `aten::log_softmax`, and the backward ops `aten::_softmax_backward_data`,
//! `aten::_log_softmax_backward_data`.
//!
//! FLOPs: 5 per element, one per elementary step (the row maximum, the subtraction, the
//! exponential, the row sum, the division; `log_softmax` has the same count). Bytes: the input
//! read once and the output written once, the output in `fp32` when `half_to_float` is set, or
//! in the `dtype` asked for.

use super::args::OpArgs;
use super::cost::{product, Family, OpCost, Traffic, Unit};
use super::dtype::DType;
use super::error::{NoCost, Quantity};

/// FLOPs per element (module documentation).
pub const FLOPS_PER_ELEMENT: u64 = 5;

/// FLOPs per element of the backward: `y·(g − Σ g·y)` multiplies, adds up, subtracts and
/// multiplies; `g − exp(y)·Σ g` exponentiates, adds up, multiplies and subtracts: 4 either way.
pub const BACKWARD_FLOPS_PER_ELEMENT: u64 = 4;

/// `_softmax_backward_data(grad_output, output, dim, input_dtype)` and
/// `_log_softmax_backward_data`: the gradient and the forward's output read, the input's
/// gradient written in `input_dtype` (the forward input's type, which differs from the
/// gradient's after a `half_to_float` softmax), so it needs that code from Concrete Inputs.
pub fn backward(args: &OpArgs) -> Result<OpCost, NoCost> {
    let grad = args.tensor(0, "the output's gradient")?;
    let y = args.tensor(1, "the forward's output")?;
    let code =
        args.int(3, "input_dtype")?.ok_or(NoCost::Input { input: 3, expected: "input_dtype", found: "absent" })?;
    let out = DType::from_scalar_type_code(code)
        .ok_or_else(|| NoCost::Unsupported(format!("dtype {code} (input 3) is not a type with a known size")))?;
    let n = grad.numel()?;
    let flops = product(&[n, BACKWARD_FLOPS_PER_ELEMENT], Quantity::Flops, grad.index())?;
    let bytes = Traffic::new().tensor(grad)?.tensor(y)?.elements(n, out, grad.index())?;
    Ok(OpCost::exact(Family::Softmax, Unit::Vector, grad.dtype(), flops, bytes.total()))
}

/// `_softmax(self, dim, half_to_float)` and `_log_softmax`.
pub fn internal(args: &OpArgs) -> Result<OpCost, NoCost> {
    let x = args.tensor(0, "the input")?;
    let out = if args.flag(2, "half_to_float", false)? { DType::F32 } else { x.dtype() };
    cost(args, out)
}

/// `softmax(self, dim, dtype?)`, `log_softmax` and `_safe_softmax`.
pub fn public(args: &OpArgs) -> Result<OpCost, NoCost> {
    let x = args.tensor(0, "the input")?;
    let out = match args.int(2, "dtype")? {
        None => x.dtype(),
        Some(code) => DType::from_scalar_type_code(code)
            .ok_or_else(|| NoCost::Unsupported(format!("dtype {code} (input 2) is not a type with a known size")))?,
    };
    cost(args, out)
}

fn cost(args: &OpArgs, out: DType) -> Result<OpCost, NoCost> {
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
    fn backward_writes_the_input_type() {
        // `tests/data/multirank/hta_sampled_128rank_rank0.json.gz` records no Concrete Inputs.
        let e =
            backward(&OpArgs::of_text("[[2, 1], [2, 1], [], []]", r#"["float", "float", "Scalar", "Scalar"]"#, None))
                .unwrap_err();
        assert_eq!(e.to_string(), "Concrete Inputs missing: input_dtype (input 3) is needed");
        let c = backward(&args(
            "[[16, 16, 559, 559], [16, 16, 559, 559], [], []]",
            r#"["float", "float", "Scalar", "Scalar"]"#,
            r#"["", "", "-1", "15"]"#,
        ))
        .unwrap();
        let n = 16 * 16 * 559 * 559;
        assert_eq!((c.flops, c.bytes), (4 * n, n * 4 * 2 + n * 2));
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
