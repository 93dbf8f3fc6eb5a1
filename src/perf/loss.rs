//! Loss functions: `aten::mse_loss` and `aten::mse_loss_backward`.
//!
//! FLOPs, one per elementary step per element (as for the pointwise ops and reductions):
//! the loss subtracts, squares and, reduced (`mean` or `sum`), adds up: 3 per element, 2
//! unreduced; its backward `2·(self − target)·grad` (÷ N for `mean`, folded into the factor)
//! subtracts, scales and multiplies: 3. Bytes: every tensor input read once at its recorded
//! size and the output written once.

use super::args::OpArgs;
use super::cost::{product, Family, OpCost, Traffic, Unit};
use super::error::{NoCost, Quantity};
use super::shape::broadcast;

/// PyTorch's `reduction` codes (`torch.nn._reduction`).
const REDUCTION_NONE: i64 = 0;
const REDUCTION_MEAN: i64 = 1;
const REDUCTION_SUM: i64 = 2;

/// `mse_loss(self, target, reduction = mean)`: `(self − target)²`, averaged or summed to one
/// element unless `reduction` is none. Needs `reduction` from Concrete Inputs when the trace
/// recorded it as a value.
pub fn mse_loss(args: &OpArgs) -> Result<OpCost, NoCost> {
    let x = args.tensor(0, "the input")?;
    let target = args.tensor(1, "the target")?;
    let shape = broadcast([x.shape(), target.shape()]).ok_or_else(|| {
        NoCost::Shapes(format!(
            "the input (input 0) {} and the target (input 1) {} do not broadcast",
            x.shape(),
            target.shape()
        ))
    })?;
    let elements = shape.numel().ok_or(NoCost::Overflow { what: Quantity::Elements, input: 0 })?;
    let reduction = args.int(2, "reduction")?.unwrap_or(REDUCTION_MEAN);
    let (outputs, per_element, family) = match reduction {
        REDUCTION_NONE => (elements, 2, Family::Elementwise),
        REDUCTION_MEAN | REDUCTION_SUM => (1, 3, Family::Reduce),
        other => return Err(NoCost::BadConcrete { input: 2, what: "reduction", text: other.to_string() }),
    };
    let dtype = x.dtype().promote(target.dtype());
    let traffic = Traffic::new().tensor(x)?.tensor(target)?.elements(outputs, dtype, x.index())?;
    let flops = product(&[elements, per_element], Quantity::Flops, x.index())?;
    Ok(OpCost::exact(family, Unit::Vector, dtype, flops, traffic.total()))
}

/// `mse_loss_backward(grad_output, self, target, reduction)` and its `grad_input=` overload
/// (the output tensor as input 4, written, not read): the gradient, `self`'s shape, in the
/// `grad_input` tensor's type or `self`'s. `grad_output` is read at its recorded size (one
/// element after a reduced loss), so `reduction` is not needed.
pub fn mse_loss_backward(args: &OpArgs) -> Result<OpCost, NoCost> {
    let grad = args.tensor(0, "the output's gradient")?;
    let x = args.tensor(1, "the input")?;
    let target = args.tensor(2, "the target")?;
    let out = args.opt_tensor(4, "grad_input")?;
    let elements = x.numel()?;
    let dtype = out.map_or(x.dtype(), |o| o.dtype());
    let traffic = Traffic::new().tensor(grad)?.tensor(x)?.tensor(target)?.elements(elements, dtype, x.index())?;
    let flops = product(&[elements, 3], Quantity::Flops, x.index())?;
    Ok(OpCost::exact(Family::Elementwise, Unit::Vector, x.dtype(), flops, traffic.total()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dtype::DType;

    /// `tests/data/traces/amd/hta_mi250_minitoy_train_rocm6.2.json.gz` (a toy training step
    /// on an MI250): the loss with `reduction = mean` ("1") and both overloads of its backward.
    #[test]
    fn mi250_mse_loss_and_backward() {
        let c = mse_loss(&OpArgs::of_text(
            "[[5, 128], [5, 128], []]",
            r#"["float", "float", "Scalar"]"#,
            Some(r#"["", "", "1"]"#),
        ))
        .unwrap();
        assert_eq!((c.flops, c.bytes, c.family, c.dtype), (3 * 640, (640 + 640 + 1) * 4, Family::Reduce, DType::F32));
        let b = mse_loss_backward(&OpArgs::of_text(
            "[[], [5, 128], [5, 128], []]",
            r#"["float", "float", "float", "Scalar"]"#,
            Some(r#"["", "", "", "1"]"#),
        ))
        .unwrap();
        assert_eq!((b.flops, b.bytes), (3 * 640, (1 + 640 + 640 + 640) * 4));
        let b2 = mse_loss_backward(&OpArgs::of_text(
            "[[], [5, 128], [5, 128], [], [5, 128]]",
            r#"["float", "float", "float", "Scalar", "float"]"#,
            Some(r#"["", "", "", "1", ""]"#),
        ))
        .unwrap();
        assert_eq!(b2, b);
    }

    #[test]
    fn unreduced_and_unknown_reduction() {
        let c = mse_loss(&OpArgs::of_text(
            "[[5, 128], [5, 128], []]",
            r#"["c10::BFloat16", "c10::BFloat16", "Scalar"]"#,
            Some(r#"["", "", "0"]"#),
        ))
        .unwrap();
        assert_eq!((c.flops, c.bytes, c.family), (2 * 640, 3 * 640 * 2, Family::Elementwise));
        let e = mse_loss(&OpArgs::of_text("[[5, 128], [5, 128], []]", r#"["float", "float", "Scalar"]"#, None))
            .unwrap_err();
        assert_eq!(e.to_string(), "Concrete Inputs missing: reduction (input 2) is needed");
        let e = mse_loss(&OpArgs::of_text(
            "[[5, 128], [5, 128], []]",
            r#"["float", "float", "Scalar"]"#,
            Some(r#"["", "", "3"]"#),
        ))
        .unwrap_err();
        assert_eq!(e.to_string(), "cannot read reduction (input 2) from \"3\"");
    }
}
