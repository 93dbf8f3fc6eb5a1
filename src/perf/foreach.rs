//! PyTorch's multi-tensor ops, `aten::_foreach_*` (`_foreach_add_`, `_foreach_copy_`,
//! `_foreach_mul_`, …): one pointwise op applied to every tensor of a list, as optimizers and
//! graph-input copies call them.
//!
//! Their work is that of the pointwise op over each tensor, but every tensor operand is in a
//! list, and the profiler records a list's shapes without its element type (`TensorList`).
//! With no type there is no size in bytes, so these ops have no cost; what they get here is the
//! reason, naming the list, instead of "no model": the missing piece is the trace's, not the
//! model's. A list recorded as `[]` (shapes not recorded either) says that.

use super::args::{Input, List, OpArgs};
use super::cost::OpCost;
use super::error::NoCost;

const PREFIX: &str = "aten::_foreach_";

/// Whether `op` is a multi-tensor op.
pub fn is_foreach(op: &str) -> bool {
    op.strip_prefix(PREFIX).is_some_and(|rest| !rest.is_empty())
}

/// Why one call has no cost: its first input must be a tensor list, whose element type the trace
/// does not record.
pub fn cost(args: &OpArgs) -> Result<OpCost, NoCost> {
    match args.input(0) {
        Some(Input::List(List::Tensors(shapes))) if shapes.is_empty() => Err(NoCost::ListShapes { input: 0 }),
        Some(Input::List(List::Tensors(_))) => Err(NoCost::ListDType { input: 0 }),
        other => {
            Err(NoCost::Input { input: 0, expected: "a tensor list", found: other.map_or("absent", Input::kind_name) })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert!(is_foreach("aten::_foreach_add_"));
        assert!(is_foreach("aten::_foreach_copy_"));
        assert!(!is_foreach("aten::_foreach_"));
        assert!(!is_foreach("aten::add_"));
    }

    /// `tests/data/traces/amd/hta_mi250_minitoy_train_rocm6.2.json.gz`: the optimizer's update
    /// of a linear layer's weight and bias; `sglang_qwen3-8b_decode_hipgraph_mi300x.json.gz`:
    /// four graph inputs copied.
    #[test]
    fn lists_have_no_element_type() {
        let args = OpArgs::of_text(
            "[[[128, 128], [128]], [[128, 128], [128]], []]",
            r#"["TensorList", "TensorList", "Scalar"]"#,
            Some(r#"["", "", "-0.001"]"#),
        );
        assert_eq!(
            cost(&args).unwrap_err().to_string(),
            "the trace does not record the element type of the tensors in list input 0"
        );
        let args = OpArgs::of_text(
            "[[[32], [32], [32], [32]], [[32], [32], [32], [32]], []]",
            r#"["TensorList", "TensorList", "Scalar"]"#,
            Some(r#"["", "", "False"]"#),
        );
        assert_eq!(cost(&args).unwrap_err(), NoCost::ListDType { input: 0 });
        let args = OpArgs::of_text("[[], []]", r#"["TensorList", "Scalar"]"#, None);
        assert_eq!(cost(&args).unwrap_err().to_string(), "the trace records no shapes for tensor list input 0");
        let args = OpArgs::of_text("[[4]]", r#"["float"]"#, None);
        assert_eq!(cost(&args).unwrap_err().to_string(), "input 0 is a tensor, expected a tensor list");
    }
}
