//! The second part of the rule table ([`super::table`]): base-name rules that read an op word
//! (a GEMM by name, activations, quantization, embeddings, sampling, sorts, reductions,
//! elementwise ops, data movement), then the namespace rules, then the template-argument rules
//! that decide for launchers and names no base-name rule knows.

use super::{Pattern::*, Rule, Scope::*};
use crate::category::Category::*;

/// After [`super::table`]'s rules, in the order they are tried.
pub(super) const GENERIC: &[Rule] = &[
    // ---- GEMM by name (after attention/moe/norm so fused kernels of those keep their kind)
    Rule::new(
        "gemm-name",
        BaseName,
        Contains(&["gemm", "gemv", "matmul", "xmma", "splitkreduce", "wvsplitk", "llmm1"]),
        &[Gemm],
        "GEMM/GEMV kernels: cuBLAS sm90_xmma_gemm_*, ampere_sgemm_*, gemv2T_kernel_val, the cuBLAS \
         split-K reduction splitKreduce_kernel (part of the GEMM), ROCm skinny wvSplitK/LLMM1, CK \
         gemm_xdl; epilogue words (relu, gelu, bias) add components",
        "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas",
    )
    .epilogue(),
    Rule::new(
        "gemm-batched",
        BaseName,
        Prefix(&["bmm_"]),
        &[Gemm],
        "TRT-LLM-gen batched GEMMs bmm_<types>_… (MoE experts on Blackwell); swiGlu and biasM \
         words are the fused epilogue",
        "bmm_Bfloat16_MxE2m1MxE4m3_Fp32_t128x16x256u2_s3_et128x16_m128x16x32_cga1x1x1_16dp256b_rM_TN_transOut_schedP2x1x2x3_biasM_bN_tmaOpt_clmp_dynBatch_sm100f",
    )
    .epilogue(),
    Rule::new(
        "gemm-conv",
        BaseName,
        Contains(&["convolution", "convolve", "conv2d", "conv1d", "conv3d", "fprop", "dgrad", "wgrad", "winograd"]),
        &[Gemm],
        "convolutions (implicit GEMM on tensor cores; names with gemm, such as \
         sm80_xmma_fprop_implicit_gemm_*, are already GEMMs by name; cuDNN's direct \
         convolve_common_engine_*)",
        "void cudnn::cnn::conv2d_grouped_direct_kernel<float, float, float, float, float, float, true, false, 0, 0, 0>(cudnn::cnn::GroupedDirectFpropParams)",
    ),
    // ---- activations
    Rule::new(
        "activation-gated",
        BaseName,
        Contains(&["_and_mul", "swiglu", "geglu", "reglu", "silu_mul", "gelu_mul"]),
        &[Activation, Elementwise],
        "gated activations act(x) * y in one kernel (vLLM/SGLang act_and_mul_kernel, \
         silu_and_mul, gelu_and_mul)",
        "_ZN7sgl_hip10activation18act_and_mul_kernelI14__hip_bfloat16TnPFT_RKS3_EXadL_Z4siluIS2_ES3_S5_EEEEvPS3_PS4_i",
    ),
    Rule::new(
        "activation",
        BaseName,
        Contains(&["silu", "gelu", "relu", "sigmoid", "tanh", "swish", "softplus", "mish", "activation", "threshold"]),
        &[Activation],
        "activation functions",
        "void silu_kernel<float>(float*, float const*, int)",
    ),
    Rule::new(
        "activation-word",
        BaseName,
        Word(&["act", "elu"]),
        &[Activation],
        "kernels named with the words act or elu",
        "fused_act_kernel",
    ),
    Rule::new(
        "quantization",
        BaseName,
        Contains(&["quant", "to_fp8", "fp8_cast", "cvt_fp16_to_fp4", "fp8rowwise_to", "fp8_qparam"]),
        &[Quantization],
        "quantization and dequantization (vLLM scaled_fp8_quant, TRT-LLM quantize_with_block_size, \
         fbgemm's FP8 row-wise _FP8rowwise_to_float and _get_FP8_qparam)",
        "void vllm::scaled_fp8_quant_kernel_strided<c10::BFloat16, c10::Float8_e4m3fn>(c10::Float8_e4m3fn*, c10::BFloat16 const*, float const*, int, long, long)",
    ),
    Rule::new(
        "embedding",
        BaseName,
        Contains(&[
            "embedding",
            "indexselect",
            "index_select",
            "bounds_check_indices",
            "linearize_index",
            "compute_grad_weight",
            "partial_segment",
            "partials_per_segment",
        ]),
        &[Embedding],
        "embedding lookups: fbgemm table-batched embeddings (split_embedding_*, and its \
         bounds_check_indices and linearize_index steps) and ATen index_select, which is what \
         nn.Embedding runs in eager mode (indexSelectLargeIndex); its backward's segment steps \
         (compute_grad_weight, krn_partials_per_segment)",
        "void at::native::(anonymous namespace)::indexSelectLargeIndex<c10::BFloat16, long, unsigned int, 2, 2, -2, true>(at::cuda::detail::TensorInfo<c10::BFloat16, unsigned int>)",
    ),
    Rule::new(
        "sampling",
        BaseName,
        Contains(&["sampling", "sample", "multinomial", "top_p", "topp", "penalt", "gumbel"]),
        &[Sampling],
        "token sampling: FlashInfer *SamplingFromProbs, top-p, rejection sampling, penalties",
        "TopKTopPSamplingFromProbKernel",
    ),
    Rule::new(
        "sort",
        BaseName,
        Contains(&["sort", "topk", "top_k", "kthvalue", "radixfind"]),
        &[Sort],
        "sorting and top-k (cub DeviceRadixSort*, bitonic sort)",
        "void cub::DeviceRadixSortOnesweepKernel<cub::DeviceRadixSortPolicy<long, int, int>::Policy800, false, long, int, int, int>(int*)",
    ),
    Rule::new(
        "reduction",
        BaseName,
        Contains(&[
            "reduce",
            "reduction",
            "scan",
            "cumsum",
            "cumprod",
            "argmax",
            "argmin",
            "compactinit",
            "logsumexp",
            "max_pool",
            "avg_pool",
            "adaptive_avg",
            "adaptive_max",
            "criterion",
            "lpnorm",
        ]),
        &[Reduction],
        "reductions and scans: ATen reduce_kernel, cub DeviceScan/DeviceReduceByKey (and the tile \
         state init DeviceCompactInitKernel), pooling, losses (ClassNLLCriterion), a tensor list's \
         L-p norm (lpnorm_cleanup, as gradient clipping runs it)",
        "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::MeanOps<float, float, float, float>, unsigned int, float, 4> >(at::native::ReduceOp<float, at::native::MeanOps<float, float, float, float>, unsigned int, float, 4>)",
    ),
    Rule::new(
        "elementwise-op",
        BaseName,
        Contains(&["masked_fill", "clamp", "where", "dropout", "triu", "tril"]),
        &[Elementwise],
        "named elementwise ops, some of which would otherwise read as data movement (masked_fill), \
         dropout, triu/tril",
        "void (anonymous namespace)::clamp_position_kernel<long>(long*, long const*, unsigned long)",
    ),
    Rule::new(
        "memory-im2col",
        BaseName,
        Contains(&["im2col", "im3d2col", "col2im", "col2im3d", "nchwtonhwc", "nhwctonchw"]),
        &[Memory],
        "im2col/col2im: a convolution's input unfolded into a matrix for the GEMM that follows \
         (MIOpen Im2Col and Im3d2Col, ATen im2col_kernel), and cuDNN's layout changes around one \
         (nchwToNhwcKernel, nhwcToNchwKernel): data movement, no arithmetic",
        "Im3d2Col",
    ),
    Rule::new(
        "memory",
        BaseName,
        Contains(&[
            "copy",
            "memcpy",
            "memset",
            "fill",
            "concat",
            "transpose",
            "permute",
            "gather",
            "scatter",
            "bucketize",
            "arange",
            "indexfunc",
        ]),
        &[Memory],
        "data movement and tensor creation: copies and casts, cat (CatArrayBatchedCopy), fill, \
         gather/scatter, permutes (fbgemm permute_2D_*), bucketize",
        "void at::native::(anonymous namespace)::CatArrayBatchedCopy<float, unsigned int, 2, 128, 1>(float*)",
    ),
    Rule::new(
        "memory-word",
        BaseName,
        Word(&["cat", "index", "pad"]),
        &[Memory],
        "indexing, cat and padding kernels (ATen index_elementwise_kernel for aten::index)",
        "void at::native::index_elementwise_kernel<128, 4, at::native::gpu_index_kernel<at::native::index_kernel_impl<at::native::OpaqueType<2> > > >(long)",
    ),
    Rule::new(
        "elementwise-axpy",
        BaseName,
        Exact(&["saxpy", "daxpy", "caxpy", "zaxpy", "haxpy", "axpy", "scal_kernel"]),
        &[Elementwise],
        "BLAS level-1 axpy (y = a·x + y) kernels, the CUDA and HIP samples' saxpy/daxpy, and \
         cuBLAS's scal_kernel (x = a·x): one multiply(-add) per element",
        "saxpy(double *, double *, double *, double, int)",
    ),
    Rule::new(
        "elementwise",
        BaseName,
        Contains(&["elementwise", "pointwise", "foreach", "unary", "binary"]),
        &[Elementwise],
        "other elementwise kernels",
        "pointwise_add_kernel",
    ),
    // ---- namespaces
    Rule::new(
        "namespace-moe",
        Namespace,
        Word(&["moe"]),
        &[Moe],
        "kernels in a moe namespace (TRT-LLM moe::dev::finalize::finalizeKernelVecLoad)",
        "void moe::dev::finalize::finalizeKernelVecLoad<moe::dev::finalize::KernelParams<cutlass::bfloat16_t, cutlass::bfloat16_t, 4, true> >(moe::dev::finalize::KernelParams<cutlass::bfloat16_t, cutlass::bfloat16_t, 4, true>)",
    ),
    Rule::new(
        "namespace-cublas",
        Namespace,
        Word(&["cublaslt", "cublas"]),
        &[Gemm],
        "cuBLAS/cuBLASLt helper kernels (cublasLt::epilogue::impl::globalKernel) belong to a GEMM",
        "void cublasLt::epilogue::impl::globalKernel<8, 32, float, float, __nv_bfloat16, true, false, 0>(int, int, long)",
    ),
    Rule::new(
        "namespace-deep-ep",
        Namespace,
        Contains(&["deep_ep"]),
        &[Communication],
        "DeepEP expert-parallel dispatch/combine (all-to-all communication)",
        "void deep_ep::internode::dispatch<true, 8, 3, 24, 8, 2>(int4*, float*)",
    ),
    Rule::new(
        "namespace-sampling",
        Namespace,
        Word(&["sampling"]),
        &[Sampling],
        "kernels in a sampling namespace (FlashInfer flashinfer::sampling::*)",
        "void flashinfer::sampling::RenormKernel<1024, (cub::BlockReduceAlgorithm)2, 4, float>(float*)",
    ),
    Rule::new(
        "namespace-flash",
        Namespace,
        Word(&["flash"]),
        &[Attention],
        "kernels in FlashAttention's namespaces (flash::prepare_varlen_num_blocks_kernel)",
        "void flash::compute_scheduler_metadata_kernel<int>(int)",
    ),
    // ---- template arguments and parameters (launchers and unknown names)
    Rule::new(
        "inner-attention",
        Inner,
        Contains(&["flashattn", "flash_fwd", "flash_bwd", "flash::", "fmha", "attention"]),
        &[Attention],
        "an attention kernel inside a launcher: cutlass::device_kernel<flash::FlashAttnFwdSm90<…>>, \
         FlashAttnFwdCombine, CK-tile FmhaFwdKernel",
        "void cutlass::device_kernel<flash::enable_sm90_or_later<flash::FlashAttnFwdSm90<flash::CollectiveMainloopFwdSm90<2, cutlass::bfloat16_t, float, cutlass::arch::Sm90> > > >(flash::FlashAttnFwdSm90<flash::CollectiveMainloopFwdSm90<2> >::Params)",
    ),
    Rule::new(
        "inner-gemm",
        Inner,
        Contains(&["gemm", "gemv", "fprop", "dgrad", "wgrad", "cublaslt"]),
        &[Gemm],
        "a GEMM inside a launcher: cutlass::Kernel2<cutlass_80_tensorop_*gemm*>, \
         device_kernel<cutlass::gemm::kernel::GemmUniversal<…>>, cuDNN's implicit-GEMM \
         convolutions (cutlass_cudnn_infer::Kernel<…s1688dgrad…>), and a kernel that takes \
         cuBLASLt's parameters (its epilogue::impl::globalKernel); epilogue words add components",
        "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_128x64_16x6_tn_align4>(cutlass_80_tensorop_s1688gemm_128x64_16x6_tn_align4::Params)",
    )
    .epilogue(),
    Rule::new(
        "inner-norm-add",
        Inner,
        Contains(&[
            "rmsnorm2dfusedaddenume1",
            "rmsnorm2dfusedaddenume2",
            "rmsnorm2dfusedaddenum)1",
            "rmsnorm2dfusedaddenum)2",
        ]),
        &[Elementwise, Norm],
        "a CK-tile RMSNorm launched with its residual add fused (Rmsnorm2dFusedAddEnum PRE_ADD_STORE \
         or PRE_ADD, what vLLM's aiter rmsnorm2d_fwd_with_add runs on ROCm); without it, a plain norm",
        "_ZN7ck_tile6kentryILi1ENS_12Rmsnorm2dFwdINS_27Rmsnorm2dFwdPipelineOnePassINS_27Rmsnorm2dFwdPipelineProblemIDF16bDF16bfDF16bDF16bDF16bffNS_19Generic2dBlockShapeINS_8sequenceIJLi1ELi3072EEEENS5_IJLi1ELi128EEEENS5_IJLi1ELi8EEEEEENS_18Rmsnorm2dFwdTraitsILb1ELb0ELb0ELb0ELNS_21Rmsnorm2dFusedAddEnumE1ELNS_23Rmsnorm2dFusedQuantEnumE0ELNS_22Rmsnorm2dSensitiveEnumE0EEEEENS_33Rmsnorm2dFwdPipelineDefaultPolicyEEENS_17Default2DEpilogueINS_24Default2DEpilogueProblemIfDF16bLb0ELb1ELb0EEEvEEEEJNSM_5KargsEEEEvDpT1_",
    ),
    Rule::new(
        "inner-norm",
        Inner,
        Contains(&["layer_norm", "layernorm", "rms_norm", "rmsnorm", "batch_norm", "group_norm"]),
        &[Norm],
        "a norm inside a launcher",
        "void ck_tile::kentry<ck_tile::Layernorm2dFwd<ck_tile::Layernorm2dFwdPipelineOnePass> >(int)",
    ),
    Rule::new(
        "inner-softmax",
        Inner,
        Contains(&["softmax"]),
        &[Softmax],
        "a softmax inside a launcher",
        "void cutlass::Kernel<cutlass::softmax::SoftmaxKernel<float> >(int)",
    ),
    Rule::new(
        "inner-activation",
        Inner,
        Contains(&["gelu", "silu", "relu", "sigmoid", "tanh", "threshold", "softplus", "hardswish", "mish", "swish"]),
        &[Activation],
        "an activation functor in an elementwise launcher (GeluCUDAKernelImpl, silu_kernel, \
         sigmoid_kernel_cuda, threshold_kernel_impl = ReLU backward)",
        "void at::native::vectorized_elementwise_kernel<4, at::native::sigmoid_kernel_cuda(at::TensorIteratorBase&)::{lambda()#2}::operator()() const::{lambda()#2}::operator()() const::{lambda(float)#1}, at::detail::Array<char*, 2> >(int, at::detail::Array<char*, 2>)",
    ),
    Rule::new(
        "inner-memory",
        Inner,
        Contains(&["copy_kernel", "::copy<", "copyfunctor", "fillfunctor", "arange"]),
        &[Memory],
        "copies (also dtype-converting ones such as bfloat16_copy_kernel_cuda), fill and arange in \
         an elementwise launcher",
        "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<int>, std::array<char*, 1ul> >(int, at::native::FillFunctor<int>, std::array<char*, 1ul>)",
    ),
    Rule::new(
        "inner-sort",
        Inner,
        Contains(&["sort"]),
        &[Sort],
        "a sort inside a launcher (rocPRIM radix sort)",
        "void rocprim::detail::trampoline_kernel<rocprim::detail::wrapped_radix_sort_onesweep_config<long> >(int)",
    ),
    Rule::new(
        "inner-scan",
        Inner,
        Contains(&["scan", "reduce"]),
        &[Reduction],
        "a scan or reduction inside a launcher (rocPRIM trampoline_kernel<wrapped_scan_config…>)",
        "void rocprim::ROCPRIM_400200_NS::detail::trampoline_kernel<rocprim::ROCPRIM_400200_NS::detail::wrapped_scan_config<rocprim::ROCPRIM_400200_NS::default_config, long> >(void*)",
    ),
];
