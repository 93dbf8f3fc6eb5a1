//! Pointwise ops: unary (`neg`, `silu`, `rsqrt`, …), binary with broadcasting (`add`, `mul`,
//! `eq`, …) and ternary (`where`, `addcmul`, `masked_fill`, …), and their in-place `_` forms.
//!
//! FLOPs: one per output element, whatever the function (a `silu` is several instructions, an
//! `add` one; counting each as one keeps fused and unfused forms of the same work comparable,
//! and these ops are far below any chip's ridge point either way). Bytes: each tensor operand
//! read once at its own size (a broadcast operand is not re-read) and the output written once,
//! its size the operands' broadcast shape and its type PyTorch's promotion of theirs (or `bool`
//! for comparisons, a float type for functions like `exp` of an integer tensor). An in-place op
//! writes its first operand; an `out=` tensor after the operands gives the output's type and is
//! not counted as read.

use super::args::{Input, OpArgs, Tensor};
use super::cost::{Family, OpCost, Traffic, Unit};
use super::dtype::DType;
use super::error::{NoCost, Quantity};
use super::shape::broadcast;

/// A gated activation as serving engines fuse it: vLLM's and SGLang's `silu_and_mul`,
/// `gelu_and_mul` and `gelu_tanh_and_mul`, all `(out [… , d], input [… , 2d])`:
/// `out = act(input[…, :d]) · input[…, d:]`. Two FLOPs per output element (the activation and
/// the product, one each as every pointwise op counts); the input read once and the output
/// written once.
pub fn act_and_mul(args: &OpArgs) -> Result<OpCost, NoCost> {
    let out = args.tensor(0, "the output")?;
    let input = args.tensor(1, "the input")?;
    let fits = match (out.dims().split_last(), input.dims().split_last()) {
        (Some((d, lead)), Some((two_d, input_lead))) => lead == input_lead && d.checked_mul(2) == Some(*two_d),
        _ => false,
    };
    if !fits {
        return Err(NoCost::Shapes(format!(
            "the output (input 0) {} is not the input (input 1) {} with its last dimension halved",
            out.shape(),
            input.shape()
        )));
    }
    let n = out.numel()?;
    let flops = n.checked_mul(2).ok_or(NoCost::Overflow { what: Quantity::Flops, input: out.index() })?;
    let bytes = Traffic::new().tensor(input)?.tensor(out)?;
    Ok(OpCost::exact(Family::Elementwise, Unit::Vector, input.dtype(), flops, bytes.total()))
}

/// What type a pointwise op's output has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Out {
    /// The operands' promoted type.
    Promoted,
    /// `bool` (comparisons, `isnan`, logical ops).
    Bool,
    /// The promoted type, or `fp32` when that is an integer or bool type (`exp`, `sqrt`, `/`).
    Float,
}

/// A pointwise op: its name without `aten::`, how many leading inputs are operands (tensors or
/// numbers combined element by element; later inputs are options like `alpha`), and its
/// output type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pointwise {
    pub name: &'static str,
    pub operands: usize,
    pub out: Out,
}

const fn op(name: &'static str, operands: usize, out: Out) -> Pointwise {
    Pointwise { name, operands, out }
}

use Out::{Bool, Float, Promoted};

/// Every pointwise op modelled.
pub const OPS: &[Pointwise] = &[
    // unary
    op("abs", 1, Promoted),
    op("neg", 1, Promoted),
    op("positive", 1, Promoted),
    op("square", 1, Promoted),
    op("sign", 1, Promoted),
    op("sgn", 1, Promoted),
    op("floor", 1, Promoted),
    op("ceil", 1, Promoted),
    op("round", 1, Promoted),
    op("trunc", 1, Promoted),
    op("frac", 1, Promoted),
    op("bitwise_not", 1, Promoted),
    op("nan_to_num", 1, Promoted),
    op("relu", 1, Promoted),
    op("relu6", 1, Promoted),
    op("leaky_relu", 1, Promoted),
    op("hardtanh", 1, Promoted),
    op("threshold", 1, Promoted),
    op("elu", 1, Promoted),
    op("selu", 1, Promoted),
    op("celu", 1, Promoted),
    op("gelu", 1, Promoted),
    op("silu", 1, Promoted),
    op("mish", 1, Promoted),
    op("hardswish", 1, Promoted),
    op("hardsigmoid", 1, Promoted),
    op("softplus", 1, Promoted),
    op("exp", 1, Float),
    op("exp2", 1, Float),
    op("expm1", 1, Float),
    op("log", 1, Float),
    op("log2", 1, Float),
    op("log10", 1, Float),
    op("log1p", 1, Float),
    op("sqrt", 1, Float),
    op("rsqrt", 1, Float),
    op("reciprocal", 1, Float),
    op("sin", 1, Float),
    op("cos", 1, Float),
    op("tan", 1, Float),
    op("sinh", 1, Float),
    op("cosh", 1, Float),
    op("tanh", 1, Float),
    op("asin", 1, Float),
    op("acos", 1, Float),
    op("atan", 1, Float),
    op("sigmoid", 1, Float),
    op("logit", 1, Float),
    op("erf", 1, Float),
    op("erfc", 1, Float),
    op("erfinv", 1, Float),
    op("isnan", 1, Bool),
    op("isinf", 1, Bool),
    op("isfinite", 1, Bool),
    op("signbit", 1, Bool),
    op("logical_not", 1, Bool),
    // binary
    op("add", 2, Promoted),
    op("sub", 2, Promoted),
    op("rsub", 2, Promoted),
    op("mul", 2, Promoted),
    op("div", 2, Float),
    op("true_divide", 2, Float),
    op("floor_divide", 2, Promoted),
    op("remainder", 2, Promoted),
    op("fmod", 2, Promoted),
    op("pow", 2, Promoted),
    op("maximum", 2, Promoted),
    op("minimum", 2, Promoted),
    op("fmax", 2, Promoted),
    op("fmin", 2, Promoted),
    op("clamp_min", 2, Promoted),
    op("clamp_max", 2, Promoted),
    op("atan2", 2, Float),
    op("hypot", 2, Float),
    op("xlogy", 2, Float),
    op("copysign", 2, Float),
    op("bitwise_and", 2, Promoted),
    op("bitwise_or", 2, Promoted),
    op("bitwise_xor", 2, Promoted),
    op("bitwise_left_shift", 2, Promoted),
    op("bitwise_right_shift", 2, Promoted),
    op("eq", 2, Bool),
    op("ne", 2, Bool),
    op("lt", 2, Bool),
    op("le", 2, Bool),
    op("gt", 2, Bool),
    op("ge", 2, Bool),
    op("logical_and", 2, Bool),
    op("logical_or", 2, Bool),
    op("logical_xor", 2, Bool),
    op("threshold_backward", 2, Promoted),
    op("silu_backward", 2, Promoted),
    op("gelu_backward", 2, Promoted),
    op("sigmoid_backward", 2, Promoted),
    op("tanh_backward", 2, Promoted),
    op("logit_backward", 2, Promoted),
    // ternary
    op("where", 3, Promoted),
    op("clamp", 3, Promoted),
    op("lerp", 3, Promoted),
    op("addcmul", 3, Promoted),
    op("addcdiv", 3, Promoted),
    op("masked_fill", 3, Promoted),
];

/// The pointwise op an ATen name (`aten::add`, `aten::mul_`) denotes, and whether it is the
/// in-place form.
pub fn find(op: &str) -> Option<(&'static Pointwise, bool)> {
    let base = op.strip_prefix("aten::")?;
    let (base, inplace) = match base.strip_suffix('_') {
        Some(b) => (b, true),
        None => (base, false),
    };
    OPS.iter().find(|p| p.name == base).map(|p| (p, inplace))
}

/// The cost of one call of `op`.
pub fn cost(op: &Pointwise, inplace: bool, args: &OpArgs) -> Result<OpCost, NoCost> {
    let mut tensors: Vec<&Tensor> = Vec::new();
    let mut float_number = false;
    for i in 0..op.operands.min(args.len()) {
        match args.input(i) {
            Some(Input::Scalar(text)) => float_number |= text.as_deref().is_some_and(looks_fractional),
            Some(Input::Absent) | None => {}
            Some(_) => tensors.push(args.tensor(i, "an operand")?),
        }
    }
    let Some(&first) = tensors.first() else {
        return Err(NoCost::Input {
            input: 0,
            expected: "a tensor operand",
            found: args.input(0).map_or("absent", Input::kind_name),
        });
    };
    let shape = broadcast(tensors.iter().map(|t| t.shape())).ok_or_else(|| {
        let shapes: Vec<String> = tensors.iter().map(|t| format!("input {} {}", t.index(), t.shape())).collect();
        NoCost::Shapes(format!("operands do not broadcast: {}", shapes.join(", ")))
    })?;
    let outputs = shape.numel().ok_or(NoCost::Overflow { what: Quantity::Elements, input: first.index() })?;
    let compute = promoted(&tensors, float_number);
    let out_tensor = args.tensors().find(|t| t.index() >= op.operands && t.shape() == &shape);
    let out = match (out_tensor, inplace) {
        (Some(t), _) => t.dtype(),
        (None, true) => first.dtype(),
        (None, false) => match op.out {
            Out::Promoted => compute,
            Out::Bool => DType::Bool,
            Out::Float if compute.is_float() => compute,
            Out::Float => DType::F32,
        },
    };
    let mut traffic = Traffic::new();
    for t in &tensors {
        traffic = traffic.tensor(t)?;
    }
    let bytes = traffic.elements(outputs, out, first.index())?;
    Ok(OpCost::exact(Family::Elementwise, Unit::Vector, compute, outputs, bytes.total()))
}

/// PyTorch's result type of `tensors` (and, when `float_number`, a fractional Python number):
/// dimensioned tensors decide, unless a 0-dim tensor or a number is of a higher kind (an
/// integer tensor times a 0-dim float is a float; a `bf16` tensor times a 0-dim `double` stays
/// `bf16`). A fractional number turns an integer result into the default float, `fp32`.
pub fn promoted(tensors: &[&Tensor], float_number: bool) -> DType {
    let fold = |zero_dim: bool| {
        tensors.iter().filter(|t| (t.shape().rank() == 0) == zero_dim).map(|t| t.dtype()).reduce(DType::promote)
    };
    let result = match (fold(false), fold(true)) {
        (Some(dim), Some(zero)) if zero.kind() > dim.kind() => dim.promote(zero),
        (Some(dim), _) => dim,
        (None, Some(zero)) => zero,
        (None, None) => DType::F32,
    };
    if float_number && !result.is_float() {
        DType::F32
    } else {
        result
    }
}

/// Whether a number's text is fractional (`"0.5"`, `"1e-05"`, `"0."`), not a whole number or
/// a flag.
fn looks_fractional(text: &str) -> bool {
    text.parse::<i64>().is_err() && text.parse::<f64>().is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gated_activations() {
        // SGLang's Qwen3-8B prefill: 15,360 tokens, an intermediate size of 12,288.
        let args = OpArgs::of_text("[[15360, 12288], [15360, 24576]]", r#"["c10::BFloat16", "c10::BFloat16"]"#, None);
        let c = act_and_mul(&args).unwrap();
        let n = 15_360 * 12_288;
        assert_eq!((c.flops, c.bytes), (2 * n, 2 * (2 * n + n)));
        assert_eq!((c.family, c.dtype), (Family::Elementwise, DType::BF16));
        // The operands the other way round are not this op.
        let swapped =
            OpArgs::of_text("[[15360, 24576], [15360, 12288]]", r#"["c10::BFloat16", "c10::BFloat16"]"#, None);
        assert_eq!(
            act_and_mul(&swapped).unwrap_err().to_string(),
            "the output (input 0) [15360, 24576] is not the input (input 1) [15360, 12288] with its last dimension halved"
        );
    }
    use crate::shape::Shape;

    fn run(name: &str, dims: &str, types: &str, concrete: &str) -> Result<OpCost, NoCost> {
        let args = OpArgs::of_text(dims, types, Some(concrete));
        let (op, inplace) = find(name).unwrap();
        cost(op, inplace, &args)
    }

    #[test]
    fn binary_same_shapes() {
        let c = run(
            "aten::add",
            "[[16, 16, 559, 64], [16, 16, 559, 64], []]",
            r#"["c10::BFloat16", "c10::BFloat16", "Scalar"]"#,
            r#"["", "", "1"]"#,
        )
        .unwrap();
        let n = 16 * 16 * 559 * 64;
        assert_eq!((c.flops, c.bytes, c.dtype, c.unit), (n, 3 * n * 2, DType::BF16, Unit::Vector));
    }

    #[test]
    fn broadcast_operand_read_at_its_own_size() {
        let c = run("aten::mul", "[[16, 559, 1024], [16, 559, 1]]", r#"["float", "float"]"#, r#"["", ""]"#).unwrap();
        assert_eq!((c.flops, c.bytes), (9_158_656, (9_158_656 * 2 + 8944) * 4));
        let c = run("aten::mul", "[[1024], [16, 559, 1024]]", r#"["c10::BFloat16", "c10::BFloat16"]"#, r#"["", ""]"#)
            .unwrap();
        assert_eq!(c.bytes, (1024 + 9_158_656 * 2) * 2);
    }

    #[test]
    fn zero_dim_double_does_not_promote_a_float_tensor() {
        let c =
            run("aten::add", "[[16, 559, 1], [], []]", r#"["float", "double", "Scalar"]"#, r#"["", "", "1"]"#).unwrap();
        assert_eq!((c.flops, c.bytes, c.dtype), (8944, 8944 * 4 + 8 + 8944 * 4, DType::F32));
    }

    #[test]
    fn unary_and_scalar_exponent() {
        let c = run("aten::silu", "[[16, 559, 2816]]", r#"["c10::BFloat16"]"#, r#"[""]"#).unwrap();
        assert_eq!((c.flops, c.bytes), (25_186_304, 25_186_304 * 4));
        let c = run("aten::pow", "[[16, 559, 1024], []]", r#"["float", "Scalar"]"#, r#"["", "2"]"#).unwrap();
        assert_eq!((c.flops, c.bytes), (9_158_656, 9_158_656 * 8));
        let c = run("aten::rsqrt", "[[10]]", r#"["long int"]"#, r#"[""]"#).unwrap();
        assert_eq!(c.bytes, 10 * 8 + 10 * 4);
    }

    #[test]
    fn comparisons_write_bool_and_in_place_writes_self() {
        let c = run("aten::eq", "[[16, 559], []]", r#"["long int", "Scalar"]"#, r#"["", "1"]"#).unwrap();
        assert_eq!(c.bytes, 8944 * 8 + 8944);
        let c =
            run("aten::add_", "[[128, 128], [128, 128], []]", r#"["float", "float", "Scalar"]"#, r#"["", "", "1"]"#)
                .unwrap();
        assert_eq!(c.bytes, 3 * 128 * 128 * 4);
        let c = run("aten::mul_", "[[4], [4]]", r#"["c10::BFloat16", "float"]"#, r#"["", ""]"#).unwrap();
        assert_eq!((c.bytes, c.dtype), (4 * 2 + 4 * 4 + 4 * 2, DType::F32));
    }

    #[test]
    fn out_tensor_and_ternary() {
        let c = run(
            "aten::add",
            "[[4, 4], [4, 4], [], [4, 4]]",
            r#"["float", "float", "Scalar", "c10::Half"]"#,
            r#"["", "", "1", ""]"#,
        )
        .unwrap();
        assert_eq!(c.bytes, 16 * 4 * 2 + 16 * 2);
        let c = run(
            "aten::where",
            "[[8, 1], [8, 16], []]",
            r#"["bool", "c10::BFloat16", "c10::BFloat16"]"#,
            r#"["", "", ""]"#,
        )
        .unwrap();
        assert_eq!((c.flops, c.bytes), (128, 8 + 256 + 2 + 256));
        let c = run(
            "aten::masked_fill_",
            "[[888, 2880], [888, 1], []]",
            r#"["c10::BFloat16", "bool", "Scalar"]"#,
            r#"["", "", "0"]"#,
        )
        .unwrap();
        assert_eq!(c.bytes, 888 * 2880 * 2 * 2 + 888);
    }

    #[test]
    fn mismatched_shapes_are_named() {
        let e = run("aten::add", "[[2, 3], [4, 3], []]", r#"["float", "float", "Scalar"]"#, r#"["", "", "1"]"#)
            .unwrap_err();
        assert_eq!(e.to_string(), "operands do not broadcast: input 0 [2, 3], input 1 [4, 3]");
    }

    #[test]
    fn promotion_classes() {
        let t = |shape: Vec<u64>, d| Tensor::new(0, Shape::new(shape), d);
        let (a, b) = (t(vec![4], DType::I64), t(vec![], DType::F64));
        assert_eq!(promoted(&[&a, &b], false), DType::F64);
        let (a, b) = (t(vec![4], DType::BF16), t(vec![], DType::F64));
        assert_eq!(promoted(&[&a, &b], false), DType::BF16);
        assert_eq!(promoted(&[&t(vec![4], DType::I32)], true), DType::F32);
        assert_eq!(promoted(&[&t(vec![4], DType::BF16), &t(vec![4], DType::F16)], false), DType::F32);
    }
}
