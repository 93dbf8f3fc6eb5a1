//! The rule table: plain data, in the order the rules are tried ([`super`] explains the order
//! and scopes). Its first part is here: the names of compilers, launchers and libraries, and the
//! fused kinds (attention, MoE, norms) that must win over the words they contain; the rest, a
//! kernel's op word, its namespace and its template arguments, is in
//! [`super::generic`].

use super::{Pattern::*, Rule, Scope::*};
use crate::category::Category::*;

/// The table. Order matters within a scope (first match wins).
pub static RULES: &[Rule] = &ALL;

/// Rules in the table.
const LEN: usize = SPECIFIC.len() + super::generic::GENERIC.len();

static ALL: [Rule; LEN] = join([SPECIFIC, super::generic::GENERIC]);

/// The parts of the table one after the other, in a fixed-size array (built when compiling).
const fn join<const N: usize>(parts: [&[Rule]; 2]) -> [Rule; N] {
    let mut out = [parts[0][0]; N];
    let (mut at, mut p) = (0, 0);
    while p < parts.len() {
        let mut i = 0;
        while i < parts[p].len() {
            out[at] = parts[p][i];
            at += 1;
            i += 1;
        }
        p += 1;
    }
    assert!(at == N);
    out
}

/// Base-name rules for names that say their origin: compiler-generated names and generic
/// launchers first, then collectives, library GEMM families, KV-cache writes, attention, MoE,
/// norms and rotary embeddings.
const SPECIFIC: &[Rule] = &[
    // ---- base name: compiler-generated names and generic launchers first
    Rule::new(
        "inductor-fused",
        BaseName,
        Inductor,
        &[],
        "TorchInductor Triton kernel: the components are the fused op words (add → elementwise, \
         silu → activation, …); a norm or softmax listed decomposed (mean/pow/rsqrt, amax/exp/sum) \
         counts as one norm/softmax component; GEMM words in a pointwise/reduction kernel are the \
         bias add or nothing, never a GEMM (vLLM's rocm_unquantized_gemm in a triton_poi name is a \
         cast/copy next to the GEMM); words not known are ignored and a kernel with none falls back \
         to its kind (poi → elementwise, red/per → reduction, tem → gemm)",
        "triton_red_fused_add_mean_mul_pow_rsqrt_0",
    ),
    Rule::new(
        "xla-fusion",
        BaseName,
        Xla,
        &[],
        "XLA kernel named after its HLO instructions only (loop_add_fusion, wrapped_reduce): the \
         components are the opcodes; bitcast, broadcast and reshape add none",
        "loop_add_fusion",
    ),
    Rule::new(
        "inductor-legacy",
        BaseName,
        InductorLegacy,
        &[Other],
        "old TorchInductor name (PyTorch 2.0/2.1): only the argument signature, so a fused Triton \
         kernel of unknown ops",
        "triton__0d1d2d3d",
    ),
    Rule::new(
        "aten-elementwise-launcher",
        BaseName,
        Exact(&[
            "vectorized_elementwise_kernel",
            "unrolled_elementwise_kernel",
            "elementwise_kernel",
            "elementwise_kernel_manual_unroll",
            "elementwise_kernel_with_index",
            "multi_tensor_apply_kernel",
        ]),
        &[Elementwise],
        "PyTorch's elementwise launchers: the functor in the template arguments says what runs \
         (GeluCUDAKernelImpl → activation, direct_copy_kernel_cuda → memory); elementwise otherwise",
        "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, std::array<char*, 3ul> >(int, at::native::CUDAFunctor_add<float>, std::array<char*, 3ul>)",
    )
    .launcher(),
    Rule::new(
        "template-launcher",
        BaseName,
        Exact(&["kernel", "kernel2", "device_kernel", "kentry", "trampoline_kernel"]),
        &[Other],
        "CUTLASS (cutlass::Kernel, Kernel2, device_kernel), CK-tile (kentry) and rocPRIM \
         (trampoline_kernel) entry points: the operation is the template argument \
         (cutlass_80_*gemm*, flash::FlashAttnFwdSm90, FmhaFwdKernel, scan_config)",
        "void cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_64x6_tn_align8>(cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_64x6_tn_align8::Params)",
    )
    .launcher(),
    // ---- collectives before anything that says reduce/gather/scatter
    Rule::new(
        "collective-nccl",
        BaseName,
        Prefix(&["nccl", "rccl", "msccl"]),
        &[Communication],
        "NCCL/RCCL device kernels, whatever the collective (ncclDevKernel_AllGather_*, \
         ncclDevKernel_Generic_* on ROCm, ncclKernel_SendRecv_*)",
        "ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
    ),
    Rule::new(
        "collective-custom",
        BaseName,
        Contains(&[
            "cross_device_reduce",
            "all_reduce",
            "allreduce",
            "all_gather",
            "allgather",
            "reduce_scatter",
            "reducescatter",
            "all_to_all",
            "alltoall",
            "multimem",
            "custom_ar",
            "quickreduce",
        ]),
        &[Communication],
        "custom collectives: vLLM/SGLang custom all-reduce (cross_device_reduce_1stage/2stage), \
         symmetric-memory multimem_all_reduce, quick-reduce",
        "void cross_device_reduce_1stage<__hip_bfloat16>(__hip_bfloat16*, int)",
    ),
    // ---- GEMM families with unmistakable prefixes
    Rule::new(
        "gemm-tensile",
        BaseName,
        Prefix(&["cijk_", "custom_cijk_"]),
        &[Gemm],
        "Tensile/hipBLASLt GEMM (Cijk_Alik_Bljk_…, and the GSU reduction Cijk_SB_BiasS_…_PostGSU); \
         Bias/SAV tokens are capabilities, not a fused epilogue",
        "Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT256x192x64_MI16x16x1_SN_LDSB1_ISA942",
    ),
    Rule::new(
        "gemm-nvjet",
        BaseName,
        Prefix(&["nvjet_"]),
        &[Gemm],
        "cuBLASLt nvjet GEMM (Hopper/Blackwell); a bias/relu/gelu word is the fused epilogue",
        "nvjet_tst_144x128_64x6_2x1_v_bz_bias_TNN",
    )
    .epilogue(),
    // ---- KV cache writes before attention (reshape_and_cache_flash is not FlashAttention)
    Rule::new(
        "kv-cache",
        BaseName,
        Contains(&[
            "reshape_and_cache",
            "concat_and_cache",
            "store_kvcache",
            "store_kv_cache",
            "kv_cache_update",
            "copy_blocks",
            "swap_blocks",
            "kv_indices",
            "page_indices",
            "block_table",
            "slot_mapping",
            "req_to_token",
        ]),
        &[KvCache],
        "KV-cache writes and page-table bookkeeping: vLLM reshape_and_cache(_flash), SGLang \
         store_kvcache and req_to_token pool writes, FlashInfer kv_indices/page_indices builders, \
         slot-mapping computation",
        "void vllm::reshape_and_cache_flash_kernel<__nv_bfloat16, unsigned char, (vllm::Fp8KVCacheDataType)1>(__nv_bfloat16 const*)",
    ),
    Rule::new(
        "attention",
        BaseName,
        Contains(&[
            "attention",
            "flashattn",
            "flash_attn",
            "flash_fwd",
            "flash_bwd",
            "fmha",
            "attn_fwd",
            "attn_bwd",
            "mha_fwd",
            "mha_bwd",
            "sdpa",
            "batchdecode",
            "batchprefill",
            "mla_decode",
            "prepare_varlen_num_blocks",
            "merge_attn_states",
            "mergestate",
            "xqa",
            // SageAttention's forward kernels (its `sage_quant_kernel` is quantization).
            "sage_fwd",
            "sageattn",
        ]),
        &[Attention],
        "attention kernels: FlashAttention 2/3 (flash_fwd_kernel, FlashAttnFwdSm90, \
         FlashAttnFwdCombine), TRT-LLM fmha*, aotriton attn_fwd, CK fmha, vLLM paged_attention_* \
         (including the split-KV reduce), unified_attention, FlashInfer BatchDecode/BatchPrefill \
         and MergeStates, TRT-LLM XQA",
        "void paged_attention_ll4mi_QKV_mfma16_kernel<0, __hip_bfloat16, __hip_bfloat16, (vllm::Fp8KVCacheDataType)0, 1, 128>(__hip_bfloat16 const*)",
    ),
    Rule::new(
        "attention-triton",
        BaseName,
        Prefix(&["_fwd_kernel", "_fwd_grouped_kernel", "_bwd_kernel", "_attn_fwd", "_attn_bwd"]),
        &[Attention],
        "Triton attention kernels with generic names (vLLM prefix-prefill _fwd_kernel, SGLang \
         decode attention _fwd_kernel_stage1/_fwd_grouped_kernel_stage1/_fwd_kernel_stage2)",
        "_fwd_grouped_kernel_stage1",
    ),
    Rule::new(
        "attention-reduce-segments",
        BaseName,
        Exact(&["reduce_segments"]),
        &[Attention],
        "vLLM unified attention 3D: the reduction of the per-segment partial results",
        "reduce_segments",
    ),
    Rule::new(
        "moe",
        BaseName,
        Contains(&["moe", "expert", "topkgating", "topk_gating", "routing", "bitmatrix"]),
        &[Moe],
        "mixture-of-experts kernels: fused_moe, moe_align_block_size, top-k gating, TRT-LLM \
         routing, the Triton MoE routing's bit-matrix sums (_sum_bitmatrix_rows); a fused MoE \
         kernel counts as one moe component",
        "void moe::dev::routing::routingIndicesHistogramKernel<moe::dev::routing::routingRenormalize::KernelParams<__nv_bfloat16, __nv_bfloat16, 128, false, true, true> >(moe::dev::routing::routingRenormalize::KernelParams<__nv_bfloat16, __nv_bfloat16, 128, false, true, true>)",
    ),
    // ---- norms, fused ones first
    Rule::new(
        "norm-add-quant",
        BaseName,
        AllOf(&["add_", "norm", "quant"]),
        &[Elementwise, Norm, Quantization],
        "residual add + RMSNorm + quantization in one kernel (aiter add_rmsnorm_quant_kernel, vLLM \
         fused_add_rms_norm_static_fp8_quant)",
        "_ZN5aiter24add_rmsnorm_quant_kernelIDF16bDF16bLi256ELi16ELb0ELb0ELb1ELi1EEEvPT0_PT_PfS4_S4_S4_diiiiiiib",
    ),
    Rule::new(
        "norm-quant",
        BaseName,
        AllOf(&["norm", "quant"]),
        &[Norm, Quantization],
        "RMSNorm + quantization (vLLM rms_norm_dynamic_per_token_quant)",
        "void vllm::rms_norm_dynamic_per_token_quant_kernel<c10::BFloat16, c10::Float8_e4m3fn, false>(c10::Float8_e4m3fn*)",
    ),
    Rule::new(
        "norm-rope",
        BaseName,
        AllOf(&["norm", "rope"]),
        &[Norm, Rotary],
        "QK-norm + rotary embedding in one kernel",
        "fused_qk_norm_rope_kernel",
    ),
    Rule::new(
        "norm-add",
        BaseName,
        AllOf(&["add_", "norm"]),
        &[Elementwise, Norm],
        "residual add + norm in one kernel (vLLM fused_add_rms_norm_kernel, add_rmsnorm)",
        "std::enable_if<(((8)>(0)))&&vllm::_typeConvert<c10::BFloat16>::exists, void>::type vllm::fused_add_rms_norm_kernel<c10::BFloat16, 8>(c10::BFloat16*, long, c10::BFloat16*, c10::BFloat16 const*, float, int, int)",
    ),
    Rule::new(
        "norm",
        BaseName,
        Contains(&[
            "rms_norm",
            "rmsnorm",
            "layer_norm",
            "layernorm",
            "group_norm",
            "groupnorm",
            "batch_norm",
            "batchnorm",
            "instance_norm",
            "instancenorm",
            "l2norm",
            "l2_norm",
            "qk_norm",
            "rowwisemoments",
            "gammabeta",
            "bn_fw_",
            "bn_bw_",
        ]),
        &[Norm],
        "normalisations: RMSNorm (rms_norm and rmsnorm spellings), LayerNorm (also ATen's \
         RowwiseMoments and GammaBetaBackward steps), GroupNorm, BatchNorm (also cuDNN's \
         bn_fw_tr_*/bn_bw_* training kernels)",
        "void vllm::rms_norm_kernel<c10::BFloat16, 8, 2>(c10::BFloat16*, c10::BFloat16 const*, long)",
    ),
    Rule::new(
        "norm-word",
        BaseName,
        Word(&["norm"]),
        &[Norm],
        "a kernel named …_norm_… (whole word, so renormalize or normal_ are not norms)",
        "void ln_fwd_norm_kernel<float>(float*)",
    ),
    Rule::new(
        "softmax",
        BaseName,
        Contains(&["softmax"]),
        &[Softmax],
        "softmax and log-softmax (cunn_SoftMaxForward, softmax_warp_forward)",
        "void (anonymous namespace)::softmax_warp_forward<float, float, float, 10, false, false>(float*, float const*, int, int, int, bool const*, int, bool)",
    ),
    Rule::new(
        "rotary",
        BaseName,
        Contains(&["rotary"]),
        &[Rotary],
        "rotary position embedding (before embedding: rotary_embedding is not a lookup)",
        "void vllm::rotary_embedding_kernel<c10::BFloat16, true>(long const*, c10::BFloat16*)",
    ),
    Rule::new(
        "rotary-word",
        BaseName,
        Word(&["rope", "mrope"]),
        &[Rotary],
        "RoPE kernels named with the word rope",
        "apply_rope_kernel",
    ),
];
