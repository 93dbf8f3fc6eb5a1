//! Which model an op gets, by name: the entry points [`op_cost`] and [`cost_from_trace`].

use super::args::{Input, OpArgs, RawArgs};
use super::cost::OpCost;
use super::error::NoCost;
use super::foreach;
use super::index;
use super::norm::Training;
use super::sparse_features::{self, Cumsum};
use super::tbe;
use super::{
    arange, attention, conv, copy, elementwise, embedding, gemm, kv_cache, loss, norm, quantize, reduce, rotary,
    scatter, softmax, triton,
};

type Formula = fn(&OpArgs) -> Result<OpCost, NoCost>;

/// Ops modelled by exact name (pointwise ops and reductions are looked up in their own tables,
/// Triton kernels by prefix).
const FORMULAS: &[(&str, Formula)] = &[
    ("aten::mm", gemm::mm),
    ("aten::addmm", gemm::addmm),
    ("aten::bmm", gemm::bmm),
    ("aten::baddbmm", gemm::baddbmm),
    ("aten::_scaled_mm", gemm::scaled_mm),
    ("aten::linear", gemm::linear),
    ("aten::index", index::index),
    ("aten::matmul", gemm::matmul),
    ("aten::scaled_dot_product_attention", attention::sdpa),
    ("aten::_scaled_dot_product_flash_attention", attention::sdpa_flash),
    ("aten::_scaled_dot_product_flash_attention_for_cpu", attention::sdpa_flash),
    ("aten::_scaled_dot_product_efficient_attention", attention::sdpa_efficient_or_cudnn),
    ("aten::_scaled_dot_product_cudnn_attention", attention::sdpa_efficient_or_cudnn),
    ("aten::_flash_attention_forward", attention::flash_forward),
    ("aten::_efficient_attention_forward", attention::efficient_forward),
    ("aiter::mha_batch_prefill", attention::paged_prefill),
    ("aten::convolution", |a| conv::cost(a, conv::CONVOLUTION)),
    ("aten::_convolution", |a| conv::cost(a, conv::CONVOLUTION)),
    ("aten::cudnn_convolution", |a| conv::cost(a, conv::CUDNN)),
    ("aten::cudnn_convolution_transpose", |a| conv::cost(a, conv::CUDNN_TRANSPOSE)),
    ("aten::miopen_convolution", |a| conv::cost(a, conv::MIOPEN)),
    ("aten::miopen_depthwise_convolution", |a| conv::cost(a, conv::MIOPEN)),
    ("aten::miopen_convolution_transpose", |a| conv::cost(a, conv::MIOPEN_TRANSPOSE)),
    ("aten::native_layer_norm", norm::layer_norm),
    ("aten::_fused_rms_norm", norm::fused_rms_norm),
    ("_C::rms_norm", |a| norm::unsaved_rms_norm(a, 1)),
    ("_C::fused_add_rms_norm", norm::vllm_fused_add_rms_norm),
    ("aiter::rms_norm", |a| norm::unsaved_rms_norm(a, 0)),
    ("aiter::rmsnorm", |a| norm::unsaved_rms_norm(a, 1)),
    ("aiter::add_rmsnorm", norm::aiter_add_rms_norm),
    ("aiter::rmsnorm2d_fwd_with_add_ck", norm::aiter_add_rms_norm),
    ("aten::native_group_norm", norm::group_norm),
    ("aten::native_batch_norm", |a| norm::batch_norm(a, Training::At(5))),
    ("aten::_native_batch_norm_legit", |a| norm::batch_norm(a, Training::At(5))),
    ("aten::_native_batch_norm_legit_no_training", |a| norm::batch_norm(a, Training::Never)),
    ("aten::cudnn_batch_norm", |a| norm::batch_norm(a, Training::At(5))),
    ("aten::miopen_batch_norm", |a| norm::batch_norm(a, Training::At(5))),
    ("aten::_softmax", softmax::internal),
    ("aten::_log_softmax", softmax::internal),
    ("aten::softmax", softmax::public),
    ("aten::log_softmax", softmax::public),
    ("aten::_safe_softmax", softmax::public),
    ("aten::_softmax_backward_data", softmax::backward),
    ("aten::_log_softmax_backward_data", softmax::backward),
    ("aten::embedding", embedding::embedding),
    ("aten::index_select", embedding::index_select),
    ("aten::gather", embedding::gather),
    ("aten::copy_", copy::copy),
    ("aten::_to_copy", copy::to_copy),
    ("aten::to", copy::to),
    ("aten::clone", copy::clone),
    ("aten::contiguous", copy::clone),
    ("aten::fill_", copy::fill),
    ("aten::zero_", copy::fill),
    // Random fills overwrite their tensor as `fill_` does; the generator's integer arithmetic
    // is not floating-point work.
    ("aten::uniform_", copy::fill),
    ("aten::normal_", copy::fill),
    ("aten::random_", copy::fill),
    ("aten::cat", copy::cat),
    ("aten::stack", copy::cat),
    ("aten::constant_pad_nd", copy::constant_pad),
    ("aten::upsample_nearest1d", |a| copy::upsample_nearest(a, 1)),
    ("aten::upsample_nearest2d", |a| copy::upsample_nearest(a, 2)),
    ("aten::upsample_nearest3d", |a| copy::upsample_nearest(a, 3)),
    ("aten::arange", arange::arange),
    ("aten::scatter_add", |a| scatter::scatter_add(a, false)),
    ("aten::scatter_add_", |a| scatter::scatter_add(a, true)),
    ("aten::scatter", |a| scatter::scatter(a, false)),
    ("aten::scatter_", |a| scatter::scatter(a, true)),
    ("aten::mse_loss", loss::mse_loss),
    ("aten::mse_loss_backward", loss::mse_loss_backward),
    ("_C::static_scaled_fp8_quant", quantize::static_scaled_fp8_quant),
    // Serving engines' own kernels (vLLM, SGLang).
    ("_C::silu_and_mul", elementwise::act_and_mul),
    ("_C::gelu_and_mul", elementwise::act_and_mul),
    ("_C::gelu_tanh_and_mul", elementwise::act_and_mul),
    ("sgl_kernel::silu_and_mul", elementwise::act_and_mul),
    ("sgl_kernel::gelu_and_mul", elementwise::act_and_mul),
    ("sgl_kernel::gelu_tanh_and_mul", elementwise::act_and_mul),
    ("_C::rotary_embedding", rotary::rotary_embedding),
    ("sgl_kernel::rotary_embedding", rotary::rotary_embedding),
    ("_C_cache_ops::reshape_and_cache_flash", kv_cache::store),
    ("_C_cache_ops::reshape_and_cache", kv_cache::store),
    ("sglang::store_cache", kv_cache::store),
    // FBGEMM (TorchRec's sparse features, embeddings and their compression).
    ("fbgemm::permute_2D_sparse_data", sparse_features::permute_sparse_data),
    ("fbgemm::permute_1D_sparse_data", sparse_features::permute_sparse_data),
    ("fbgemm::permute_sparse_features", sparse_features::permute_sparse_features),
    ("fbgemm::block_bucketize_sparse_features", sparse_features::block_bucketize_sparse_features),
    ("fbgemm::bounds_check_indices", sparse_features::bounds_check_indices),
    ("fbgemm::asynchronous_complete_cumsum", |a| sparse_features::cumsum(a, Cumsum::Complete)),
    ("fbgemm::asynchronous_exclusive_cumsum", |a| sparse_features::cumsum(a, Cumsum::SameSize)),
    ("fbgemm::asynchronous_inclusive_cumsum", |a| sparse_features::cumsum(a, Cumsum::SameSize)),
    ("fbgemm::permute_pooled_embs", tbe::permute_pooled),
    ("fbgemm::permute_pooled_embs_auto_grad", tbe::permute_pooled),
    ("fbgemm::FloatToFP8RowwiseQuantized", quantize::float_to_fp8_rowwise),
    ("fbgemm::FP8RowwiseQuantizedToFloat", quantize::fp8_rowwise_to_float),
    ("fbgemm::FloatToHFP8Quantized", quantize::float_to_hfp8),
    ("fbgemm::HFP8QuantizedToFloat", quantize::hfp8_to_float),
];

/// The cost of one call of `op` with `args`, or why there is none.
pub fn op_cost(op: &str, args: &OpArgs) -> Result<OpCost, NoCost> {
    if triton::is_triton(op) {
        return triton::cost(op, args);
    }
    if let Some((_, model)) = FORMULAS.iter().find(|(name, _)| *name == op) {
        return model(args);
    }
    if let Some(kind) = tbe::find(op) {
        return tbe::cost(kind, args);
    }
    if foreach::is_foreach(op) {
        return foreach::cost(args);
    }
    if let Some(r) = reduce::find(op) {
        // `max(self, other)` and `min(self, other)` are pointwise, not reductions.
        if let ("max" | "min", Some(Input::Tensor(_))) = (r.name, args.input(1)) {
            let pointwise = if r.name == "max" { "aten::maximum" } else { "aten::minimum" };
            if let Some((p, _)) = elementwise::find(pointwise) {
                return elementwise::cost(p, false, args);
            }
        }
        return reduce::cost(r, args);
    }
    if let Some((p, inplace)) = elementwise::find(op) {
        return elementwise::cost(p, inplace, args);
    }
    Err(NoCost::UnknownOp(op.to_string()))
}

/// [`op_cost`] from the three raw texts of a trace's `cpu_op` (`args["Input Dims"]`,
/// `["Input type"]`, `["Concrete Inputs"]`). An op without a model says so before its
/// arguments are read, so that "no model for aten::view" is not hidden behind a missing
/// `Input Dims`.
pub fn cost_from_trace(op: &str, raw: RawArgs<'_>) -> Result<OpCost, NoCost> {
    if !has_formula(op) {
        return Err(NoCost::UnknownOp(op.to_string()));
    }
    op_cost(op, &OpArgs::parse(raw)?)
}

/// Whether `op` has a model (its arguments may still make it fail), or a reason of its own why
/// it has no cost (the multi-tensor `_foreach_*` ops, whose lists' element type is not recorded).
pub fn has_formula(op: &str) -> bool {
    triton::is_triton(op)
        || FORMULAS.iter().any(|(name, _)| *name == op)
        || tbe::find(op).is_some()
        || foreach::is_foreach(op)
        || reduce::find(op).is_some()
        || elementwise::find(op).is_some()
}

/// Every op name with a model (pointwise ops also in their in-place `_` form), `triton_*` for
/// Inductor's kernels, and FBGEMM's table-batched-embedding ops as patterns (`*` the
/// optimizer).
pub fn costed_ops() -> Vec<String> {
    let mut names: Vec<String> = FORMULAS.iter().map(|(name, _)| name.to_string()).collect();
    names.extend(reduce::OPS.iter().map(|r| format!("aten::{}", r.name)));
    for p in elementwise::OPS {
        names.push(format!("aten::{}", p.name));
        names.push(format!("aten::{}_", p.name));
    }
    names.extend(tbe::PATTERNS.iter().map(|p| p.to_string()));
    names.push("triton_*".to_string());
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dispatch_by_name() {
        assert!(has_formula("aten::mm"));
        assert!(has_formula("aten::add_"));
        assert!(has_formula("aten::sum"));
        assert!(has_formula("triton_poi_fused_add_0"));
        assert!(!has_formula("aten::view"));
        assert!(has_formula("fbgemm::permute_2D_sparse_data"));
        assert!(has_formula("torch::autograd::CppNode<SplitLookupFunction_rowwise_adagrad_Op>"));
        assert!(!has_formula("torch::autograd::CppNode<SomethingElse>"));
        assert_eq!(
            cost_from_trace("aten::view", RawArgs::default()).unwrap_err().to_string(),
            "no model for aten::view"
        );
        assert_eq!(
            cost_from_trace("aten::mm", RawArgs::default()).unwrap_err().to_string(),
            "Input Dims missing (trace recorded without record_shapes)"
        );
        for name in costed_ops().iter().filter(|n| *n != "triton_*") {
            assert!(has_formula(name), "{name}");
        }
    }

    #[test]
    fn max_of_two_tensors_is_pointwise() {
        let raw = RawArgs {
            input_dims: Some("[[4], [4]]"),
            input_type: Some(r#"["float", "float"]"#),
            concrete_inputs: Some(r#"["", ""]"#),
            input_strides: None,
        };
        let c = cost_from_trace("aten::max", raw).unwrap();
        assert_eq!((c.family, c.flops, c.bytes), (crate::cost::Family::Elementwise, 4, 48));
    }
}
