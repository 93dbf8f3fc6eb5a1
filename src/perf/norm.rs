//! Normalisations: LayerNorm (`aten::native_layer_norm`), RMSNorm (`aten::_fused_rms_norm`,
//! vLLM's `_C::rms_norm` and `_C::fused_add_rms_norm`, AMD aiter's `rms_norm`, `rmsnorm`,
//! `add_rmsnorm` and `rmsnorm2d_fwd_with_add_ck`), GroupNorm (`aten::native_group_norm`)
//! and BatchNorm (`aten::native_batch_norm`, `_native_batch_norm_legit`,
//! `_native_batch_norm_legit_no_training`, `cudnn_batch_norm`, `miopen_batch_norm`).
//!
//! FLOPs per element, one per elementary step:
//!
//! | norm | steps | per element |
//! |---|---|---|
//! | LayerNorm, GroupNorm, BatchNorm (training) | sum for the mean, subtract it, square, sum for the variance, scale by 1/σ | 5, +1 with a weight, +1 with a bias |
//! | BatchNorm (inference: running statistics) | subtract the mean, scale by 1/σ | 2, +1 weight, +1 bias |
//! | RMSNorm | square, sum, scale by 1/rms | 3, +1 with a weight |
//! | fused add + RMSNorm | the residual add, then RMSNorm | 5 (weight always given) |
//!
//! Per-row work (the square root, ε) is left out. Bytes: the input, weight and bias read
//! once; the output written once; the statistics the op saves for the backward pass (mean and
//! 1/σ per row or group, `fp32` for half-precision inputs) written once; vLLM's fused op reads
//! and writes both the input and the residual in place; aiter's reads the input and the
//! residual and writes the sum and the output into tensors of their own.

use super::args::{OpArgs, Tensor};
use super::cost::{product, Family, OpCost, Traffic, Unit};
use super::dtype::DType;
use super::error::{NoCost, Quantity};

/// FLOPs per element of a LayerNorm with weight and bias (the table above): what an Inductor
/// kernel that lists a LayerNorm, GroupNorm or BatchNorm is counted with.
pub const LAYER_NORM_FLOPS_PER_ELEMENT: u64 = 7;

/// FLOPs per element of an RMSNorm with a weight.
pub const RMS_NORM_FLOPS_PER_ELEMENT: u64 = 4;

/// `native_layer_norm(input, normalized_shape, weight?, bias?, eps)`.
pub fn layer_norm(args: &OpArgs) -> Result<OpCost, NoCost> {
    let x = args.tensor(0, "the input")?;
    let (w, b) = (args.opt_tensor(2, "the weight")?, args.opt_tensor(3, "the bias")?);
    let rows = rows(args, x, w)?;
    let per_element = 5 + u64::from(w.is_some()) + u64::from(b.is_some());
    let stats = Traffic::new().elements(rows, stats_dtype(x), x.index())?.elements(rows, stats_dtype(x), x.index())?;
    finish(x, per_element, Traffic::new().opt_tensor(w)?.opt_tensor(b)?, stats)
}

/// `_fused_rms_norm(input, normalized_shape, weight?, eps)`: the output and 1/rms per row.
pub fn fused_rms_norm(args: &OpArgs) -> Result<OpCost, NoCost> {
    let x = args.tensor(0, "the input")?;
    let w = args.opt_tensor(2, "the weight")?;
    let rows = rows(args, x, w)?;
    let stats = Traffic::new().elements(rows, stats_dtype(x), x.index())?;
    finish(x, 3 + u64::from(w.is_some()), Traffic::new().opt_tensor(w)?, stats)
}

/// An RMSNorm that saves no statistics, its input at `at` and its weight next: vLLM's
/// `_C::rms_norm(out, input, weight, eps)` and aiter's `rmsnorm` of the same arguments at 1;
/// aiter's `rms_norm(input, weight, eps, use_model_sensitive_rmsnorm)`, which returns its
/// output, at 0.
pub fn unsaved_rms_norm(args: &OpArgs, at: usize) -> Result<OpCost, NoCost> {
    let x = args.tensor(at, "the input")?;
    let w = args.tensor(at + 1, "the weight")?;
    finish(x, 4, Traffic::new().tensor(w)?, Traffic::new())
}

/// vLLM `_C::fused_add_rms_norm(input, residual, weight, eps)`: `residual += input`, then
/// `input = rms_norm(residual)`, both in place.
pub fn vllm_fused_add_rms_norm(args: &OpArgs) -> Result<OpCost, NoCost> {
    let x = args.tensor(0, "the input")?;
    let r = args.tensor(1, "the residual")?;
    let w = args.tensor(2, "the weight")?;
    // The input is read and written by `finish`; the residual is read and written here.
    finish(x, 5, Traffic::new().tensor(r)?.tensor(r)?.tensor(w)?, Traffic::new())
}

/// AMD aiter's `add_rmsnorm` and `rmsnorm2d_fwd_with_add_ck`, both `(out, input, residual_in,
/// residual_out, weight, eps, …)`: `residual_out = input + residual_in`, then
/// `out = rms_norm(residual_out)`, into tensors of their own.
pub fn aiter_add_rms_norm(args: &OpArgs) -> Result<OpCost, NoCost> {
    let x = args.tensor(1, "the input")?;
    let residual_in = args.tensor(2, "the residual")?;
    let residual_out = args.tensor(3, "the residual's output")?;
    let w = args.tensor(4, "the weight")?;
    // The input is read and the output written by `finish`.
    finish(x, 5, Traffic::new().tensor(residual_in)?.tensor(w)?, Traffic::new().tensor(residual_out)?)
}

/// `native_group_norm(input, weight?, bias?, N, C, HxW, group, eps)`: statistics per sample and
/// group.
pub fn group_norm(args: &OpArgs) -> Result<OpCost, NoCost> {
    let x = args.tensor(0, "the input")?;
    let (w, b) = (args.opt_tensor(1, "the weight")?, args.opt_tensor(2, "the bias")?);
    let groups =
        args.int(6, "group")?.ok_or(NoCost::Input { input: 6, expected: "the group count", found: "absent" })?;
    let groups = u64::try_from(groups).map_err(|_| NoCost::Shapes(format!("group (input 6) is {groups}")))?;
    let n = x.dims().first().copied().unwrap_or(1);
    let stats_count = product(&[n, groups], Quantity::Elements, x.index())?;
    let stats = Traffic::new().elements(stats_count, stats_dtype(x), x.index())?.elements(
        stats_count,
        stats_dtype(x),
        x.index(),
    )?;
    let per_element = 5 + u64::from(w.is_some()) + u64::from(b.is_some());
    finish(x, per_element, Traffic::new().opt_tensor(w)?.opt_tensor(b)?, stats)
}

/// Where a BatchNorm op's `training` flag is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Training {
    At(usize),
    Never,
}

/// BatchNorm ops whose first five inputs are `(input, weight?, bias?, running_mean?,
/// running_var?)`; `_native_batch_norm_legit`'s `no_stats` overload (6 inputs, `training` at 3)
/// has no running statistics.
pub fn batch_norm(args: &OpArgs, training: Training) -> Result<OpCost, NoCost> {
    let x = args.tensor(0, "the input")?;
    let (w, b) = (args.opt_tensor(1, "the weight")?, args.opt_tensor(2, "the bias")?);
    let no_stats = training == Training::At(5) && args.len() == 6;
    let (running_mean, running_var, training) = if no_stats {
        (None, None, args.flag(3, "training", false)?)
    } else {
        let flag = match training {
            Training::At(i) => args.flag(i, "training", false)?,
            Training::Never => false,
        };
        (args.opt_tensor(3, "the running mean")?, args.opt_tensor(4, "the running variance")?, flag)
    };
    let channels = match x.dims() {
        [_, c, ..] => *c,
        _ => return Err(NoCost::Shapes(format!("batch norm needs an input [N, C, …]: input 0 is {}", x.shape()))),
    };
    let params = Traffic::new().opt_tensor(w)?.opt_tensor(b)?.opt_tensor(running_mean)?.opt_tensor(running_var)?;
    let affine = u64::from(w.is_some()) + u64::from(b.is_some());
    if !training {
        return finish(x, 2 + affine, params, Traffic::new());
    }
    // Training: the batch statistics are saved, and the running ones updated in place.
    let saved = Traffic::new()
        .elements(channels, stats_dtype(x), x.index())?
        .elements(channels, stats_dtype(x), x.index())?
        .opt_tensor(running_mean)?
        .opt_tensor(running_var)?;
    finish(x, 5 + affine, params, saved)
}

/// Rows of a norm over the last dimensions: the input's elements over those of
/// `normalized_shape` (input 1), or of the weight when the shape was not recorded.
fn rows(args: &OpArgs, x: &Tensor, weight: Option<&Tensor>) -> Result<u64, NoCost> {
    let row_len = match (args.int_list(1, "normalized_shape"), weight) {
        (Ok(Some(dims)), _) => {
            let dims = dims
                .iter()
                .map(|&d| {
                    u64::try_from(d)
                        .map_err(|_| NoCost::Shapes(format!("normalized_shape {dims:?} (input 1) has a negative size")))
                })
                .collect::<Result<Vec<u64>, _>>()?;
            product(&dims, Quantity::Elements, 1)?
        }
        (Err(NoCost::MissingConcrete { .. }) | Ok(None), Some(w)) => w.numel()?,
        (Err(e), _) => return Err(e),
        (Ok(None), None) => x.dims().last().copied().unwrap_or(1),
    };
    let n = x.numel()?;
    match (n.checked_div(row_len), n.checked_rem(row_len)) {
        (Some(rows), Some(0)) => Ok(rows),
        (None, _) => Ok(0),
        _ => Err(NoCost::Shapes(format!("normalized size {row_len} does not divide input 0 {}", x.shape()))),
    }
}

/// The type the saved statistics have: `fp32` for half-precision inputs (what CUDA and ROCm
/// kernels accumulate in), else the input's.
fn stats_dtype(x: &Tensor) -> DType {
    match x.dtype() {
        DType::F16 | DType::BF16 => DType::F32,
        d => d,
    }
}

/// Input read and output written once, plus `params` (read) and `saved` (written).
fn finish(x: &Tensor, per_element: u64, params: Traffic, saved: Traffic) -> Result<OpCost, NoCost> {
    let n = x.numel()?;
    let flops = product(&[n, per_element], Quantity::Flops, x.index())?;
    let bytes =
        Traffic::new().tensor(x)?.elements(n, x.dtype(), x.index())?.plus(params, x.index())?.plus(saved, x.index())?;
    Ok(OpCost::exact(Family::Norm, Unit::Vector, x.dtype(), flops, bytes.total()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(dims: &str, types: &str, concrete: Option<&str>) -> OpArgs {
        OpArgs::of_text(dims, types, concrete)
    }

    #[test]
    fn bert_layer_norm() {
        let c = layer_norm(&args(
            "[[1, 141, 512], [], [512], [512], []]",
            r#"["c10::BFloat16", "ScalarList", "c10::BFloat16", "c10::BFloat16", "Scalar"]"#,
            Some(r#"["", "[512]", "", "", "9.9999999999999998e-13"]"#),
        ))
        .unwrap();
        let n = 141 * 512;
        assert_eq!(c.flops, 7 * n);
        assert_eq!(c.bytes, n * 2 * 2 + 512 * 2 * 2 + 141 * 4 * 2);
        assert_eq!((c.family, c.unit, c.dtype), (Family::Norm, Unit::Vector, DType::BF16));
        // Without Concrete Inputs the weight gives the row length.
        let c2 = layer_norm(&args(
            "[[1, 141, 512], [], [512], [512], []]",
            r#"["c10::BFloat16", "", "c10::BFloat16", "c10::BFloat16", "Scalar"]"#,
            None,
        ))
        .unwrap();
        assert_eq!(c2, c);
    }

    #[test]
    fn rms_norms() {
        let c = fused_rms_norm(&args(
            "[[8, 4096, 2048], [], [2048], []]",
            r#"["c10::BFloat16", "ScalarList", "c10::BFloat16", "Scalar"]"#,
            Some(r#"["", "[2048]", "", "1e-06"]"#),
        ))
        .unwrap();
        let n = 8 * 4096 * 2048;
        assert_eq!((c.flops, c.bytes), (4 * n, n * 4 + 2048 * 2 + 8 * 4096 * 4));
        let vllm = args(
            "[[888, 2880], [888, 2880], [2880], []]",
            r#"["c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "Scalar"]"#,
            Some(r#"["", "", "", "1.0000000000000001e-05"]"#),
        );
        let n = 888 * 2880;
        let c = unsaved_rms_norm(&vllm, 1).unwrap();
        assert_eq!((c.flops, c.bytes), (4 * n, (2 * n + 2880) * 2));
        let c = vllm_fused_add_rms_norm(&vllm).unwrap();
        assert_eq!((c.flops, c.bytes), (5 * n, (4 * n + 2880) * 2));
    }

    #[test]
    fn aiter_rms_norms() {
        // vLLM's gpt-oss decode on an MI300X: aiter's RMSNorm returns its output.
        let c = unsaved_rms_norm(
            &args(
                "[[32, 2880], [2880], [], []]",
                r#"["c10::BFloat16", "c10::BFloat16", "Scalar", "Scalar"]"#,
                Some(r#"["", "", "1.0000000000000001e-05", "0"]"#),
            ),
            0,
        )
        .unwrap();
        let n = 32 * 2880;
        assert_eq!((c.flops, c.bytes), (4 * n, (2 * n + 2880) * 2));
        // The residual add writes a tensor of its own: two read, two written, and the weight.
        let c = aiter_add_rms_norm(&args(
            "[[15360, 4096], [15360, 4096], [15360, 4096], [15360, 4096], [4096], []]",
            r#"["c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "Scalar"]"#,
            Some(r#"["", "", "", "", "", "9.9999999999999995e-07"]"#),
        ))
        .unwrap();
        let n = 15_360 * 4096;
        assert_eq!((c.flops, c.bytes), (5 * n, (4 * n + 4096) * 2));
        assert_eq!(c.family, Family::Norm);
    }

    #[test]
    fn group_norm_statistics_per_group() {
        let c = group_norm(&args(
            "[[2, 64, 32, 32], [64], [64], [], [], [], [], []]",
            r#"["float", "float", "float", "Scalar", "Scalar", "Scalar", "Scalar", "Scalar"]"#,
            Some(r#"["", "", "", "2", "64", "1024", "32", "1e-05"]"#),
        ))
        .unwrap();
        let n = 2 * 64 * 1024;
        assert_eq!((c.flops, c.bytes), (7 * n, (2 * n + 128 + 2 * 2 * 32) * 4));
    }

    #[test]
    fn batch_norm_training_and_inference() {
        let dims = "[[8, 16, 10, 10], [16], [16], [16], [16], [], [], []]";
        let types = r#"["float", "float", "float", "float", "float", "Scalar", "Scalar", "Scalar"]"#;
        let n = 8 * 16 * 100;
        let eval =
            batch_norm(&args(dims, types, Some(r#"["", "", "", "", "", "False", "0.1", "1e-05"]"#)), Training::At(5))
                .unwrap();
        assert_eq!((eval.flops, eval.bytes), (4 * n, (2 * n + 4 * 16) * 4));
        let train =
            batch_norm(&args(dims, types, Some(r#"["", "", "", "", "", "True", "0.1", "1e-05"]"#)), Training::At(5))
                .unwrap();
        assert_eq!((train.flops, train.bytes), (7 * n, (2 * n + 4 * 16 + 2 * 16 + 2 * 16) * 4));
        let no_training = batch_norm(
            &args(
                "[[8, 16, 10, 10], [16], [16], [16], [16], [], []]",
                r#"["float", "float", "float", "float", "float", "Scalar", "Scalar"]"#,
                Some(r#"["", "", "", "", "", "0.1", "1e-05"]"#),
            ),
            Training::Never,
        )
        .unwrap();
        assert_eq!(no_training, eval);
    }
}
