//! Convolutions: `aten::convolution`, `aten::_convolution`, `aten::cudnn_convolution`,
//! `aten::cudnn_convolution_transpose`, `aten::miopen_convolution`,
//! `aten::miopen_convolution_transpose`, `aten::miopen_depthwise_convolution`.
//!
//! Input `[N, C_in, spatial…]`, weight `[C_out, C_in/groups, kernel…]` (transposed:
//! `[C_in, C_out/groups, kernel…]`). Each output position of a direct convolution is
//! `C_in/groups · prod(kernel)` multiply-adds: FLOPs `2·N·C_out·prod(out)·(C_in/groups)·prod(kernel)`;
//! a transposed convolution scatters each input position the same way:
//! `2·N·C_in·prod(in)·(C_out/groups)·prod(kernel)`; a bias adds `N·C_out·prod(out)`. Output
//! sizes: `(in + 2·pad − dilation·(k − 1) − 1) / stride + 1` (transposed:
//! `(in − 1)·stride − 2·pad + dilation·(k − 1) + output_padding + 1`). Bytes: input, weight and
//! bias read once, output written once (input's type). Stride, padding, dilation, groups and
//! `transposed` come from Concrete Inputs; a list of one value applies to every spatial
//! dimension.

use super::args::{OpArgs, Tensor};
use super::cost::{product, sum, Family, OpCost, Traffic, Unit};
use super::error::{NoCost, Quantity};

/// Where one convolution op keeps its arguments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Signature {
    bias: Option<usize>,
    stride: usize,
    padding: usize,
    dilation: usize,
    /// The position of the `transposed` flag, or the fixed answer for ops that are one kind.
    transposed: Transposed,
    output_padding: Option<usize>,
    groups: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Transposed {
    At(usize),
    Always(bool),
}

/// `convolution(input, weight, bias?, stride, padding, dilation, transposed, output_padding,
/// groups)`; `_convolution` starts the same.
pub const CONVOLUTION: Signature = Signature {
    bias: Some(2),
    stride: 3,
    padding: 4,
    dilation: 5,
    transposed: Transposed::At(6),
    output_padding: Some(7),
    groups: 8,
};

/// `cudnn_convolution(self, weight, padding, stride, dilation, groups, …)`: no bias.
pub const CUDNN: Signature = Signature {
    bias: None,
    stride: 3,
    padding: 2,
    dilation: 4,
    transposed: Transposed::Always(false),
    output_padding: None,
    groups: 5,
};

/// `cudnn_convolution_transpose(self, weight, padding, output_padding, stride, dilation,
/// groups, …)`.
pub const CUDNN_TRANSPOSE: Signature = Signature {
    bias: None,
    stride: 4,
    padding: 2,
    dilation: 5,
    transposed: Transposed::Always(true),
    output_padding: Some(3),
    groups: 6,
};

/// `miopen_convolution(self, weight, bias?, padding, stride, dilation, groups, …)`, and
/// `miopen_depthwise_convolution` with the same arguments.
pub const MIOPEN: Signature = Signature {
    bias: Some(2),
    stride: 4,
    padding: 3,
    dilation: 5,
    transposed: Transposed::Always(false),
    output_padding: None,
    groups: 6,
};

/// `miopen_convolution_transpose(self, weight, bias?, padding, output_padding, stride,
/// dilation, groups, …)`.
pub const MIOPEN_TRANSPOSE: Signature = Signature {
    bias: Some(2),
    stride: 5,
    padding: 3,
    dilation: 6,
    transposed: Transposed::Always(true),
    output_padding: Some(4),
    groups: 7,
};

/// The cost of a convolution whose arguments sit where `sig` says.
pub fn cost(args: &OpArgs, sig: Signature) -> Result<OpCost, NoCost> {
    let x = args.tensor(0, "the input")?;
    let w = args.tensor(1, "the weight")?;
    let bias = sig.bias.map(|i| args.opt_tensor(i, "the bias")).transpose()?.flatten();
    let (xd, wd) = (x.dims(), w.dims());
    if xd.len() < 3 || wd.len() != xd.len() {
        return Err(shapes(x, w, "needs an input [N, C, spatial…] and a weight of the same rank"));
    }
    let spatial = xd.len() - 2;
    let groups = positive(args.int(sig.groups, "groups")?.unwrap_or(1), sig.groups, "groups")?;
    let transposed = match sig.transposed {
        Transposed::At(i) => args.flag(i, "transposed", false)?,
        Transposed::Always(t) => t,
    };
    let stride = per_dim(args, sig.stride, "stride", spatial, 1)?;
    let padding = per_dim(args, sig.padding, "padding", spatial, 0)?;
    let dilation = per_dim(args, sig.dilation, "dilation", spatial, 1)?;
    let output_padding = match sig.output_padding {
        Some(i) => per_dim(args, i, "output_padding", spatial, 0)?,
        None => vec![0; spatial],
    };
    if stride.iter().chain(&dilation).any(|&v| v < 1) || padding.iter().chain(&output_padding).any(|&p| p < 0) {
        return Err(NoCost::Shapes("stride and dilation must be positive, padding not negative".to_string()));
    }
    let (n, c_in) = (xd[0], xd[1]);
    // Non-transposed weight [C_out, C_in/groups, kernel…]; transposed [C_in, C_out/groups, kernel…].
    let (c_out, channels_fit) = if transposed {
        let c_out = wd[1].checked_mul(groups).ok_or(NoCost::Overflow { what: Quantity::Size, input: w.index() })?;
        (c_out, wd[0] == c_in && c_in % groups == 0)
    } else {
        (wd[0], wd[1].checked_mul(groups) == Some(c_in) && wd[0] % groups == 0)
    };
    if !channels_fit {
        return Err(shapes(x, w, &format!("channels do not fit groups = {groups}")));
    }
    let kernel = &wd[2..];
    let mut out = Vec::with_capacity(spatial);
    for s in 0..spatial {
        let p = Params { stride: stride[s], pad: padding[s], dilation: dilation[s], out_pad: output_padding[s] };
        match out_size(xd[2 + s], kernel[s], p, transposed) {
            Some(size) if size >= 1 => {
                out.push(u64::try_from(size).map_err(|_| NoCost::Overflow { what: Quantity::Size, input: x.index() })?)
            }
            Some(_) => return Err(shapes(x, w, "the output would have no positions")),
            None => return Err(NoCost::Overflow { what: Quantity::Size, input: x.index() }),
        }
    }
    let at = x.index();
    let k_prod = product(kernel, Quantity::Flops, 1)?;
    let out_positions = product(&out, Quantity::Size, at)?;
    let outputs = product(&[n, c_out, out_positions], Quantity::Elements, at)?;
    // wd[1] is C_in/groups (direct) or C_out/groups (transposed): the multiply-adds per
    // output position, or per input position when transposed.
    let mut flops = if transposed {
        let in_positions = product(&xd[2..], Quantity::Flops, at)?;
        product(&[2, n, c_in, in_positions, wd[1], k_prod], Quantity::Flops, at)?
    } else {
        product(&[2, outputs, wd[1], k_prod], Quantity::Flops, at)?
    };
    if bias.is_some() {
        flops = sum(&[flops, outputs], Quantity::Flops, at)?;
    }
    let bytes = Traffic::new().tensor(x)?.tensor(w)?.opt_tensor(bias)?.elements(outputs, x.dtype(), at)?;
    Ok(OpCost::exact(Family::Conv, Unit::Matrix, x.dtype(), flops, bytes.total()))
}

/// One spatial dimension's stride, padding, dilation and output padding.
#[derive(Debug, Clone, Copy)]
struct Params {
    stride: i64,
    pad: i64,
    dilation: i64,
    out_pad: i64,
}

/// One output size (negative when the kernel does not fit); `None` on overflow.
fn out_size(input: u64, kernel: u64, p: Params, transposed: bool) -> Option<i128> {
    let (i, k) = (i128::from(input), i128::from(kernel));
    let (s, pad, d, op) = (i128::from(p.stride), i128::from(p.pad), i128::from(p.dilation), i128::from(p.out_pad));
    let span = d.checked_mul(k - 1)?;
    if transposed {
        // (in − 1)·stride − 2·pad + dilation·(k − 1) + output_padding + 1
        (i - 1).checked_mul(s)?.checked_sub(pad.checked_mul(2)?)?.checked_add(span)?.checked_add(op)?.checked_add(1)
    } else {
        // (in + 2·pad − dilation·(k − 1) − 1) / stride + 1, rounded down
        Some(i.checked_add(pad.checked_mul(2)?)?.checked_sub(span)?.checked_sub(1)?.div_euclid(s) + 1)
    }
}

/// A per-dimension list argument, one value repeated, or `default` when absent.
fn per_dim(args: &OpArgs, i: usize, what: &'static str, spatial: usize, default: i64) -> Result<Vec<i64>, NoCost> {
    match args.int_list(i, what)? {
        None => Ok(vec![default; spatial]),
        Some(v) if v.len() == 1 => Ok(vec![v[0]; spatial]),
        Some(v) if v.len() == spatial => Ok(v),
        Some(v) => {
            Err(NoCost::Shapes(format!("{what} (input {i}) has {} values for {spatial} spatial dimensions", v.len())))
        }
    }
}

fn positive(value: i64, i: usize, what: &'static str) -> Result<u64, NoCost> {
    u64::try_from(value)
        .ok()
        .filter(|&v| v >= 1)
        .ok_or_else(|| NoCost::Shapes(format!("{what} (input {i}) is {value}, not a positive count")))
}

fn shapes(x: &Tensor, w: &Tensor, why: &str) -> NoCost {
    NoCost::Shapes(format!("{why}: input 0 {}, input 1 {}", x.shape(), w.shape()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(dims: &str, types: &str, concrete: &str) -> OpArgs {
        OpArgs::of_text(dims, types, Some(concrete))
    }

    const TYPES: &str =
        r#"["float", "float", "float", "ScalarList", "ScalarList", "ScalarList", "Scalar", "ScalarList", "Scalar"]"#;
    /// Without a bias (type `""`: `None`).
    const NO_BIAS: &str =
        r#"["float", "float", "", "ScalarList", "ScalarList", "ScalarList", "Scalar", "ScalarList", "Scalar"]"#;

    #[test]
    fn resnet_first_layer() {
        // 224×224×3 → 112×112×64 with a 7×7 kernel, stride 2, padding 3, bias.
        let c = cost(
            &args(
                "[[8, 3, 224, 224], [64, 3, 7, 7], [64], [], [], [], [], [], []]",
                TYPES,
                r#"["", "", "", "[2, 2]", "[3, 3]", "[1, 1]", "False", "[0, 0]", "1"]"#,
            ),
            CONVOLUTION,
        )
        .unwrap();
        let outputs = 8 * 64 * 112 * 112;
        assert_eq!(c.flops, 2 * outputs * 3 * 49 + outputs);
        assert_eq!(c.bytes, (8 * 3 * 224 * 224 + 64 * 3 * 49 + 64 + outputs) * 4);
        assert_eq!((c.family, c.unit), (Family::Conv, Unit::Matrix));
    }

    #[test]
    fn depthwise_dilated_and_single_value_lists() {
        // groups = C = 32, 3×3, dilation 2, padding 2, stride 1: output stays 56×56.
        let c = cost(
            &args(
                "[[1, 32, 56, 56], [32, 1, 3, 3], [], [], [], [], [], [], []]",
                NO_BIAS,
                r#"["", "", "", "[1]", "[2]", "[2]", "False", "[0]", "32"]"#,
            ),
            CONVOLUTION,
        )
        .unwrap();
        assert_eq!(c.flops, 2 * 32 * 56 * 56 * 9);
        assert_eq!(c.bytes, (32 * 56 * 56 * 2 + 32 * 9) * 4);
    }

    #[test]
    fn transposed_doubles_the_size() {
        // [1, 16, 8, 8] → [1, 8, 16, 16] with a 4×4 kernel, stride 2, padding 1.
        let c = cost(
            &args(
                "[[1, 16, 8, 8], [16, 8, 4, 4], [], [], [], [], [], [], []]",
                NO_BIAS,
                r#"["", "", "", "[2, 2]", "[1, 1]", "[1, 1]", "True", "[0, 0]", "1"]"#,
            ),
            CONVOLUTION,
        )
        .unwrap();
        assert_eq!(c.flops, 2 * 16 * 64 * 8 * 16);
        assert_eq!(c.bytes, (16 * 64 + 16 * 8 * 16 + 8 * 16 * 16) * 4);
    }

    #[test]
    fn cudnn_argument_order() {
        let types = r#"["c10::Half", "c10::Half", "ScalarList", "ScalarList", "ScalarList", "Scalar", "Scalar", "Scalar", "Scalar"]"#;
        let c = cost(
            &args(
                "[[2, 64, 32, 32], [128, 64, 3, 3], [], [], [], [], [], [], []]",
                types,
                r#"["", "", "[1, 1]", "[2, 2]", "[1, 1]", "1", "False", "False", "True"]"#,
            ),
            CUDNN,
        )
        .unwrap();
        assert_eq!(c.flops, 2 * 2 * 128 * 16 * 16 * 64 * 9);
    }

    #[test]
    fn conv1d_and_bad_shapes() {
        let c = cost(
            &args(
                "[[4, 8, 100], [16, 8, 5], [], [], [], [], [], [], []]",
                NO_BIAS,
                r#"["", "", "", "[1]", "[0]", "[1]", "False", "[0]", "1"]"#,
            ),
            CONVOLUTION,
        )
        .unwrap();
        assert_eq!(c.flops, 2 * 4 * 16 * 96 * 8 * 5);
        let e = cost(
            &args(
                "[[4, 8, 3], [16, 8, 5], [], [], [], [], [], [], []]",
                NO_BIAS,
                r#"["", "", "", "[1]", "[0]", "[1]", "False", "[0]", "1"]"#,
            ),
            CONVOLUTION,
        )
        .unwrap_err();
        assert!(e.to_string().starts_with("the output would have no positions"), "{e}");
        let e = cost(
            &args(
                "[[4, 8, 30], [16, 4, 5], [], [], [], [], [], [], []]",
                NO_BIAS,
                r#"["", "", "", "[1]", "[0]", "[1]", "False", "[0]", "1"]"#,
            ),
            CONVOLUTION,
        )
        .unwrap_err();
        assert!(e.to_string().starts_with("channels do not fit groups = 1"), "{e}");
    }
}
