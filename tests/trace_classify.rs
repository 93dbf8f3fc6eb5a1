//! The kernel classifier against the labelled regression set (every distinct kernel name in the
//! real traces under tests/data/traces), the known traps of docs/trace-analysis.md, and invariants
//! on any input.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::common::{data, gunzip};
use fusionscope::analysis::{classify, Category, Classification};
use proptest::prelude::*;

const LABELS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/kernel_labels.tsv");

/// One row of the label table.
struct Label {
    line: usize,
    category: Category,
    components: Vec<Category>,
    name: String,
}

fn unescape(field: &str) -> String {
    field.replace("\\t", "\t").replace("\\n", "\n")
}

fn parse_category(text: &str, line: usize) -> Category {
    text.parse().unwrap_or_else(|e| panic!("{LABELS}:{line}: {e}"))
}

fn labels() -> Vec<Label> {
    let text = std::fs::read_to_string(LABELS).expect("read kernel_labels.tsv");
    let mut rows = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line_no = i + 1;
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let mut fields = line.splitn(3, '\t');
        let (Some(category), Some(components), Some(name)) = (fields.next(), fields.next(), fields.next()) else {
            panic!("{LABELS}:{line_no}: expected 3 tab-separated columns");
        };
        rows.push(Label {
            line: line_no,
            category: parse_category(category, line_no),
            components: components.split(',').map(|c| parse_category(c, line_no)).collect(),
            name: unescape(name),
        });
    }
    rows
}

fn trace_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("read traces dir") {
        let path = entry.expect("dir entry").path();
        if path.is_dir() {
            trace_files(&path, out);
        } else if path.to_string_lossy().ends_with(".json.gz") {
            out.push(path);
        }
    }
}

/// Every distinct kernel name (events with cat == "kernel") in the real traces.
fn trace_kernel_names() -> BTreeSet<String> {
    let mut files = Vec::new();
    trace_files(Path::new(&data("traces")), &mut files);
    assert!(files.len() >= 9, "expected the 9 shared traces, found {}", files.len());
    let mut names = BTreeSet::new();
    for file in files {
        let bytes = std::fs::read(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let json = String::from_utf8(gunzip(&bytes)).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let trace: serde_json::Value =
            serde_json::from_str(&json).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let events = trace.get("traceEvents").unwrap_or(&trace).as_array().expect("traceEvents array");
        for event in events {
            if event.get("cat").and_then(|c| c.as_str()) == Some("kernel") {
                if let Some(name) = event.get("name").and_then(|n| n.as_str()) {
                    names.insert(name.to_string());
                }
            }
        }
    }
    names
}

#[test]
fn every_labelled_kernel_is_classified_as_labelled() {
    let rows = labels();
    assert!(rows.len() >= 200, "label table has only {} rows", rows.len());
    let mut mismatches = Vec::new();
    for row in &rows {
        let got = classify(&row.name);
        if got.category != row.category || got.components != row.components {
            let ids = |cs: &[Category]| cs.iter().map(|c| c.id()).collect::<Vec<_>>().join(",");
            mismatches.push(format!(
                "line {}: expected {} [{}], got {} [{}] (rule {:?}): {}",
                row.line,
                row.category,
                ids(&row.components),
                got.category,
                ids(&got.components),
                got.rule,
                row.name.chars().take(200).collect::<String>()
            ));
        }
    }
    assert!(mismatches.is_empty(), "{} of {} labels differ:\n{}", mismatches.len(), rows.len(), mismatches.join("\n"));
}

#[test]
fn labels_are_consistent_and_unique() {
    let rows = labels();
    let mut seen = BTreeSet::new();
    for row in &rows {
        assert!(seen.insert(row.name.as_str()), "line {}: duplicate name", row.line);
        assert_eq!(
            row.category,
            Category::heaviest(&row.components),
            "line {}: category is not the heaviest component",
            row.line
        );
        let mut sorted = row.components.clone();
        Classification::canonical_order(&mut sorted);
        assert_eq!(sorted, row.components, "line {}: components not in canonical order / duplicated", row.line);
    }
}

#[test]
fn every_trace_kernel_name_is_labelled() {
    let labelled: BTreeSet<String> = labels().into_iter().map(|l| l.name).collect();
    let missing: Vec<_> = trace_kernel_names().into_iter().filter(|n| !labelled.contains(n)).collect();
    assert!(missing.is_empty(), "{} kernel names are not in kernel_labels.tsv:\n{}", missing.len(), missing.join("\n"));
}

fn check(name: &str, category: Category, components: &[Category]) {
    let got = classify(name);
    assert_eq!((got.category, got.components.as_slice()), (category, components), "{name} (rule {:?})", got.rule);
}

use Category::*;

// ---- the known traps of docs/trace-analysis.md, one test each

#[test]
fn trap_ck_tile_rmsnorm_with_fused_add_is_fused() {
    // The launcher is `ck_tile::kentry`; only the traits' Rmsnorm2dFusedAddEnum (E1) says the
    // residual add is done in the same kernel (vLLM's aiter rmsnorm2d_fwd_with_add on ROCm).
    let with_add = "_ZN7ck_tile6kentryILi1ENS_12Rmsnorm2dFwdINS_27Rmsnorm2dFwdPipelineOnePassINS_27Rmsnorm2dFwdPipelineProblemIDF16bDF16bfDF16bDF16bDF16bffNS_19Generic2dBlockShapeINS_8sequenceIJLi1ELi3072EEEENS5_IJLi1ELi128EEEENS5_IJLi1ELi8EEEEEENS_18Rmsnorm2dFwdTraitsILb1ELb0ELb0ELb0ELNS_21Rmsnorm2dFusedAddEnumE1ELNS_23Rmsnorm2dFusedQuantEnumE0ELNS_22Rmsnorm2dSensitiveEnumE0EEEEENS_33Rmsnorm2dFwdPipelineDefaultPolicyEEENS_17Default2DEpilogueINS_24Default2DEpilogueProblemIfDF16bLb0ELb1ELb0EEEvEEEEJNSM_5KargsEEEEvDpT1_";
    check(with_add, Norm, &[Elementwise, Norm]);
    check(&with_add.replace("FusedAddEnumE1", "FusedAddEnumE0"), Norm, &[Norm]);
}

#[test]
fn trap_fp8_kv_cache_template_argument_in_paged_attention_is_attention() {
    check(
        "void paged_attention_ll4mi_QKV_mfma16_kernel<0, __hip_bfloat16, __hip_bfloat16, (vllm::Fp8KVCacheDataType)0, 1, 128, 256, false, 4, 1, ck_tile::ComposedAttention<0u, false> >(__hip_bfloat16 const*, __hip_bfloat16 const*, __hip_bfloat16 const*, float, int const*)",
        Attention,
        &[Attention],
    );
    check(
        "void vllm::paged_attention_v2_kernel<__nv_bfloat16, unsigned char, 128, 16, 128, (vllm::Fp8KVCacheDataType)1, false, 512>(float*, float*, __nv_bfloat16*)",
        Attention,
        &[Attention],
    );
}

#[test]
fn trap_fp8_kv_cache_template_argument_in_reshape_and_cache_is_kv_cache() {
    check(
        "void vllm::reshape_and_cache_flash_kernel<__nv_bfloat16, unsigned char, (vllm::Fp8KVCacheDataType)1>(__nv_bfloat16 const*, __nv_bfloat16 const*, unsigned char*, unsigned char*, long const*, long, long, long, long, long, int, int, int, float const*, float const*)",
        KvCache,
        &[KvCache],
    );
    check(
        "void vllm::reshape_and_cache_kernel<__hip_bfloat16, __hip_bfloat16, (vllm::Fp8KVCacheDataType)0>(__hip_bfloat16 const*, __hip_bfloat16 const*)",
        KvCache,
        &[KvCache],
    );
}

#[test]
fn trap_sm90_xmma_gemm_is_gemm() {
    check("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize64x64x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas", Gemm, &[Gemm]);
}

#[test]
fn trap_nvjet_is_gemm() {
    check("nvjet_tst_192x8_64x8_4x1_v_bz_TNT", Gemm, &[Gemm]);
    check("nvjet_hsh_256x128_64x4_1x2_h_bz_coopA_NNT", Gemm, &[Gemm]);
}

#[test]
fn trap_flash_attention_3_forward_is_attention() {
    check(
        "void cutlass::device_kernel<flash::enable_sm90_or_later<flash::FlashAttnFwdSm90<flash::CollectiveMainloopFwdSm90<2, cute::tuple<cute::C<1>, cute::C<1>, cute::C<1> >, cute::tuple<cute::C<128>, cute::C<128>, cute::C<128> >, 128, cutlass::bfloat16_t, float, cutlass::arch::Sm90, true, false, false, true, true, false, false, true, true, true, false, false>, flash::CollectiveEpilogueFwd<cute::tuple<cute::C<128>, cute::C<128>, cute::C<128> >, cute::tuple<cute::C<1>, cute::C<1>, cute::C<1> >, cutlass::bfloat16_t, cutlass::arch::Sm90, 256, true, true, false, false>, flash::VarlenDynamicPersistentTileScheduler<128, 256, 128, false, true, true> > > >(flash::FlashAttnFwdSm90<flash::CollectiveMainloopFwdSm90<2> >::Params)",
        Attention,
        &[Attention],
    );
    check("FlashAttnFwdSm90", Attention, &[Attention]);
}

#[test]
fn trap_flash_attention_3_combine_is_attention() {
    check(
        "void cutlass::device_kernel<flash::FlashAttnFwdCombine<cute::tuple<cute::C<8>, cute::C<128> >, 7, 256, 1, false, true, cutlass::bfloat16_t, float, cutlass::arch::Sm90> >(flash::FlashAttnFwdCombine<cute::tuple<cute::C<8>, cute::C<128> >, 7, 256, 1, false, true, cutlass::bfloat16_t, float, cutlass::arch::Sm90>::Params)",
        Attention,
        &[Attention],
    );
    check("FlashAttnFwdCombine", Attention, &[Attention]);
}

#[test]
fn trap_nccl_all_gather_is_communication() {
    check("ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)", Communication, &[Communication]);
}

#[test]
fn trap_nccl_generic_is_communication() {
    check("ncclDevKernel_Generic_2(ncclDevKernelArgsStorage<4096ul>)", Communication, &[Communication]);
    check("ncclDevKernel_Generic", Communication, &[Communication]);
}

#[test]
fn trap_cross_device_reduce_is_communication() {
    check("void vllm::cross_device_reduce_1stage<__nv_bfloat16, 8>(vllm::RankData*, vllm::RankSignals, vllm::Signal*, __nv_bfloat16*, int, int)", Communication, &[Communication]);
    check(
        "void cross_device_reduce_2stage<__hip_bfloat16>(RankData*, RankSignals, Signal*, __hip_bfloat16*, int, int)",
        Communication,
        &[Communication],
    );
}

#[test]
fn trap_rms_norm_and_rmsnorm_are_both_norms() {
    check("void vllm::rms_norm_kernel<c10::BFloat16, 8, 2>(c10::BFloat16*, c10::BFloat16 const*, long, long, long, long, long, c10::BFloat16 const*, float, int, int)", Norm, &[Norm]);
    check("_ZN5aiter14rmsnorm_kernelIDF16bLi256EEEvPT_", Norm, &[Norm]);
    check(
        "void rmsnorm_twoPassAlgo_e8<__nv_bfloat16>(float4*, float4 const*, float4 const*, int, int, float)",
        Norm,
        &[Norm],
    );
}

#[test]
fn trap_mangled_act_and_mul_is_activation() {
    check(
        "_ZN4vllm18act_and_mul_kernelIN3c108BFloat16EXadL_ZNS_11silu_kernelIS2_EET_RKS4_EELb1EEEvPS4_PS5_i",
        Activation,
        &[Activation, Elementwise],
    );
    check(
        "_ZN7sgl_hip10activation18act_and_mul_kernelI14__hip_bfloat16TnPFT_RKS3_EXadL_Z4siluIS2_ES3_S5_EEEEvPS3_PS4_i",
        Activation,
        &[Activation, Elementwise],
    );
}

#[test]
fn trap_old_inductor_names_are_other() {
    check("triton__0d1d2d", Other, &[Other]);
    check("triton__0d1d2d3d4d5d6d7d8d9d10d11d12d13d14", Other, &[Other]);
    assert_eq!(classify("triton__0d1d2d3d").rule, Some("inductor-legacy"));
}

// ---- fused kernels named in docs/trace-analysis.md ("Categories")

#[test]
fn spec_fused_examples() {
    check("triton_red_fused_add_mean_mul_pow_rsqrt_0", Norm, &[Elementwise, Norm]);
    check("std::enable_if<(((8)>(0)))&&vllm::_typeConvert<c10::BFloat16>::exists, void>::type vllm::fused_add_rms_norm_kernel<c10::BFloat16, 8>(c10::BFloat16*, long, c10::BFloat16*, c10::BFloat16 const*, float, int, int)", Norm, &[Elementwise, Norm]);
    check("void vllm::act_and_mul_kernel<c10::BFloat16, &(c10::BFloat16 vllm::silu_kernel<c10::BFloat16>(c10::BFloat16 const&)), true>(c10::BFloat16*, c10::BFloat16 const*, int)", Activation, &[Activation, Elementwise]);
    check("void cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_64x6_tn_align8>(cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_64x6_tn_align8::Params)", Gemm, &[Gemm, Activation]);
}

#[test]
fn inductor_rocm_gemm_hint_is_not_a_gemm() {
    check("triton_poi_fused_rocm_unquantized_gemm_0", Elementwise, &[Elementwise]);
    check("triton_poi_fused__to_copy_rocm_unquantized_gemm_silu_3", Activation, &[Activation, Memory]);
    check("triton_poi_fused_addmm_gelu_2", Activation, &[Activation, Elementwise]);
    check("triton_tem_fused_addmm_gelu_2", Gemm, &[Gemm, Activation]);
}

// ---- invariants on any input

fn arbitrary_name() -> impl Strategy<Value = String> {
    let pieces = prop::sample::select(vec![
        "<",
        ">",
        "(",
        ")",
        "{",
        "}",
        "[",
        "]",
        "::",
        " ",
        "_",
        "void ",
        "_Z",
        "_ZN",
        "N",
        "E",
        "I",
        "4",
        "12",
        "99",
        "(anonymous namespace)",
        "triton_",
        "poi_",
        "red_",
        "tem_",
        "fused_",
        "__",
        "0d1d",
        "rms_norm",
        "gemm",
        "nccl",
        "attention",
        "é",
        "ß",
        "\u{1F600}",
        "\t",
        "\n",
        "Cijk_",
        "nvjet_",
        "add",
        "relu",
        "_and_mul",
        "_ZN7ck_tile6kentryI",
        "ck_tile::kentry<",
        "12Rmsnorm2dFwd",
        "FusedAddEnumE1",
        "99999999999999999999",
        "fmhaSm100aKernel_Qkv",
        "OBfloat16H64",
        "bmm_",
        "_t128x16x256",
        "_sm100f",
    ]);
    prop_oneof![any::<String>(), prop::collection::vec(pieces, 0..24).prop_map(|p| p.concat()),]
}

/// Every GPU trace of the test data, each format and vendor: at most 2 % of its kernel time is
/// `other` (the rest of the gaps are kernels no name can place, such as PyTorch 2.0's
/// `triton__0d1d2d`). A CPU run's JSON without its HLO is left out: its YNNPACK calls say nothing.
#[test]
fn the_test_traces_kernels_are_classified() {
    let mut files: Vec<PathBuf> = Vec::new();
    for dir in [
        "traces/nvidia",
        "traces/amd",
        "multirank",
        "formats/nsys",
        "formats/rocprofv3",
        "formats/xplane",
        "formats/xla_json",
    ] {
        for entry in std::fs::read_dir(data(dir)).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().to_string();
            if name.ends_with(".gz") || name.ends_with(".pb") || name.ends_with(".sqlite") {
                files.push(path);
            }
        }
    }
    files.extend(
        [
            "jax_block_cuda.xplane.pb",
            "jax_convnet_cuda.xplane.pb",
            "jax_block_cpu.xplane.pb",
            "jax_convnet_cpu.xplane.pb",
            "torch_block_cuda.eager.trace.json.gz",
        ]
        .map(|f| PathBuf::from(data(&format!("compiled/{f}")))),
    );
    assert!(files.len() >= 20, "{files:?}");
    let mut worst = Vec::new();
    for path in &files {
        let v = crate::common::json(&["trace", "--summary-only", path.to_str().unwrap(), "--json"]);
        let other: f64 = v["categories"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["category"] == "other")
            .map(|c| c["trace"]["share_pct"].as_f64().unwrap())
            .sum();
        if other > 2.0 {
            worst.push(format!("{}: {other:.2} % other", path.display()));
        }
    }
    assert!(worst.is_empty(), "{}", worst.join("\n"));
}

proptest! {
    #[test]
    fn classify_never_panics_and_keeps_its_invariants(name in arbitrary_name()) {
        let got = classify(&name);
        prop_assert!(!got.components.is_empty());
        prop_assert_eq!(got.category, Category::heaviest(&got.components));
        let mut sorted = got.components.clone();
        Classification::canonical_order(&mut sorted);
        prop_assert_eq!(sorted, got.components);
    }

    /// A table asks for 8 characters or more (the shortener's floor).
    #[test]
    fn read_out_names_never_panic_and_fit_their_width(name in arbitrary_name(), width in 8usize..90) {
        let shown = fusionscope::classify::family::table_name(&name, width);
        prop_assert!(shown.chars().count() <= width, "{shown:?} is wider than {width}");
        let _ = fusionscope::classify::family::box_name(&name, width);
    }

    #[test]
    fn truncated_real_names_never_panic(cut in 0usize..2000) {
        let name = "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<bool, at::native::func_wrapper_t<bool, at::native::and_kernel_cuda(at::TensorIterator&)::{lambda()#1}::operator()() const::{lambda()#12}::operator()() const::{lambda(bool, bool)#1}>, unsigned int, bool, 4> >(at::native::ReduceOp<bool, at::native::func_wrapper_t<bool, at::native::and_kernel_cuda(at::TensorIterator&)::{lambda()#1}::operator()() const::{lambda()#12}::operator()() const::{lambda(bool, bool)#1}>, unsigned int, bool, 4>)";
        let cut = name.char_indices().map(|(i, _)| i).take_while(|&i| i <= cut).last().unwrap_or(0);
        let got = classify(&name[..cut]);
        prop_assert_eq!(got.category, Category::heaviest(&got.components));
    }
}

// ---- kernel families from the format notes and common libraries, beyond the shared traces

#[test]
fn families_from_the_format_notes() {
    let cases: &[(&str, Category, &[Category])] = &[
        ("void cublasLt::splitKreduce_kernel<32, 16, int, float, float, float, float, __nv_bfloat16, __nv_bfloat16, true, false, false>(cublasLt::cublasSplitKParams<float>, float const*)", Gemm, &[Gemm]),
        ("Custom_Cijk_Alik_Bljk_BBS_BH_GSU1_MT128x128x64", Gemm, &[Gemm]),
        ("Cijk_SB_BiasS_HAS_ScaleAlphaVec_PostGSU4_VW4", Gemm, &[Gemm]),
        ("void wvSplitK_hf_sml_<__hip_bfloat16, 64, 2, 16, 8, 2, 1>(int, int, __hip_bfloat16 const*)", Gemm, &[Gemm]),
        ("void cublasLt::epilogue::impl::globalKernel<8, 32, float, float, __nv_bfloat16, true, false, 0>(int, int, long)", Gemm, &[Gemm]),
        ("void ck::kernel_gemm_xdl_cshuffle_v3<ck::GridwiseGemm_xdl_cshuffle_v3<ck::tensor_layout::gemm::RowMajor> >(ck::GridwiseGemm_xdl_cshuffle_v3<>::Argument)", Gemm, &[Gemm]),
        ("void cutlass::device_kernel<cutlass::gemm::kernel::GemmUniversal<cute::tuple<int, int, int, int>, cutlass::epilogue::fusion::LinCombEltAct<cutlass::epilogue::thread::SiLu, cutlass::bfloat16_t> > >(cutlass::gemm::kernel::GemmUniversal<>::Params)", Gemm, &[Gemm, Activation]),
        ("void pytorch_flash::flash_fwd_splitkv_combine_kernel<pytorch_flash::Flash_fwd_kernel_traits<128, 64, 128, 4, false, false, cutlass::bfloat16_t> >(pytorch_flash::Flash_fwd_params)", Attention, &[Attention]),
        ("void flash::prepare_varlen_num_blocks_kernel<true>(int, int, int, int const*, int const*)", Attention, &[Attention]),
        ("fmhaSm100aKernel_QkvE4m3OBfloat16H64PagedKvCausalP16VarSeqQ128Kv128PersistentContext", Attention, &[Attention]),
        ("void convolve_common_engine_float_NHWC<float, float, 1024, 5, 5, 3, 3, 3, true, false, false, false, false>(int, int, int, float const*, float const*, int, float*, conv_kernel_common_params, unsigned long long, unsigned long, float, float, bool, float const*, float const*, bool, bool)", Gemm, &[Gemm]),
        // The HTA A100 training rank's cuDNN kernels, a third of its GPU time.
        ("void cudnn::bn_bw_1C11_kernel_new<float, float, float2, 128, true, 1>(float, float, float, float, cudnnTensorStruct, float const*)", Norm, &[Norm]),
        ("void cudnn::bn_fw_tr_1C11_singleread<float, 512, true, 1, 2, 0>(cudnn::bn_fw_tr_1C11_args<float>)", Norm, &[Norm]),
        ("void cudnn::ops::nchwToNhwcKernel<float, float, float, false, true, (cudnnKernelDataType_t)2>(cudnn::ops::nchw2nhwc_params_t<float>, float const*, float*)", Memory, &[Memory]),
        ("void cutlass_cudnn_infer::Kernel<cutlass_tensorop_s1688dgrad_optimized_tf32_64x128_32x3_nhwc_align4>(cutlass_tensorop_s1688dgrad_optimized_tf32_64x128_32x3_nhwc_align4::Params)", Gemm, &[Gemm]),
        ("void cutlass_cudnn_train::Kernel<cutlass_tensorop_s1688wgrad_optimized_tf32_256x128_16x3_nhwc_align4>(cutlass_tensorop_s1688wgrad_optimized_tf32_256x128_16x3_nhwc_align4::Params)", Gemm, &[Gemm]),
        // cuBLAS's and cuBLASLt's helpers beside a GEMM, fbgemm's FP8 row-wise (de)quantizers,
        // an embedding's backward and gradient clipping's norm (the HTA and TraceLens ranks).
        ("void scal_kernel<float, float, 1, true, 6, 5, 5, 3>(cublasTransposeParams<float>, float const*, float*, float const*)", Elementwise, &[Elementwise]),
        ("void epilogue::impl::globalKernel<float, float, float, true, true>(int, int, long, float*, cublasLtEpilogue_t, int, float*, long)", Gemm, &[Gemm]),
        ("void fbgemm_gpu::(anonymous namespace)::_FP8rowwise_to_float_cuda_kernel<float>(unsigned char const*, int, int, float*, bool)", Quantization, &[Quantization]),
        ("void fbgemm_gpu::(anonymous namespace)::_get_FP8_qparam_cuda_kernel<float>(float const*, int, int, unsigned char*, float*, bool)", Quantization, &[Quantization]),
        ("void at::native::(anonymous namespace)::compute_grad_weight<float, long>(long const*, float const*, long const*, long, long)", Embedding, &[Embedding]),
        ("void at::native::(anonymous namespace)::krn_partials_per_segment<long>(long*, long const*, long const*, long)", Embedding, &[Embedding]),
        ("void at::native::lpnorm_cleanup<float, (at::native::NormType)1, float, float>(float const*, at::native::TensorListAddresses, int)", Reduction, &[Reduction]),
        ("kernel_unified_attention_2d", Attention, &[Attention]),
        ("kernel_unified_attention_3d", Attention, &[Attention]),
        ("_fwd_kernel", Attention, &[Attention]),
        ("ck_fmha_fwd_d128_bf16_batch_b128x128x32_r1x4x1", Attention, &[Attention]),
        ("void ck_tile::kentry<128, 1, ck_tile::FmhaFwdKernel<ck_tile::BlockFmhaPipelineQRKSVSAsync<> > >(ck_tile::FmhaFwdKernel<>::Kargs)", Attention, &[Attention]),
        ("void flashinfer::BatchDecodeWithPagedKVCacheKernel<(flashinfer::PosEncodingMode)0, 2u, 4u>(flashinfer::BatchDecodeParams)", Attention, &[Attention]),
        ("void (anonymous namespace)::multimem_all_reduce_kernel<c10::BFloat16, 16>(c10::BFloat16*, unsigned long)", Communication, &[Communication]),
        ("ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)", Communication, &[Communication]),
        ("void deep_ep::intranode::combine<__nv_bfloat16, 8, 768>(int4*, float*)", Communication, &[Communication]),
        ("_ZN5aiter24add_rmsnorm_quant_kernelIDF16bDF16bLi64ELi8ELb0ELb0ELb1ELi1EEEvPT0_PT_PfS4_S4_S4_diiiiiiib", Norm, &[Elementwise, Norm, Quantization]),
        ("void vllm::rms_norm_dynamic_per_token_quant_kernel<c10::BFloat16, c10::Float8_e4m3fn, false>(c10::Float8_e4m3fn*)", Norm, &[Norm, Quantization]),
        ("void vllm::rms_norm_padded_kernel<c10::BFloat16>(c10::BFloat16*)", Norm, &[Norm]),
        ("void at::native::(anonymous namespace)::RowwiseMomentsCUDAKernel<float, float>(long, float, float const*, float*, float*)", Norm, &[Norm]),
        ("void vllm::moe::topkGatingSoftmax<8, 128, 4, 16, int>(float const*, bool const*, float*, int, int*, int*, int, int, int)", Moe, &[Moe]),
        ("fused_moe_kernel", Moe, &[Moe]),
        ("void vllm::moe::count_and_sort_expert_tokens_kernel<int>(int const*, int*, int*, unsigned long)", Moe, &[Moe]),
        ("void vllm::silu_and_mul_kernel<c10::BFloat16>(c10::BFloat16*, c10::BFloat16 const*, int)", Activation, &[Activation, Elementwise]),
        ("void at::native::(anonymous namespace)::cunn_SoftMaxForward<8, float, float, float, at::native::(anonymous namespace)::SoftMaxForwardEpilogue>(float*, float const*, int)", Softmax, &[Softmax]),
        ("void at::native::(anonymous namespace)::permute_pooled_embs_kernel<float>(float const*)", Memory, &[Memory]),
        ("void at::native::sbtopk::gatherTopK<float, unsigned int, 2, false>(at::cuda::detail::TensorInfo<float const, unsigned int>)", Sort, &[Sort]),
        ("void at::native::(anonymous namespace)::fused_dropout_kernel_vec<float, float, unsigned int, 1, 4, bool>(at::cuda::detail::TensorInfo<float const, unsigned int>)", Elementwise, &[Elementwise]),
        ("void flashinfer::sampling::TopKTopPSamplingFromProbKernel<1024, (cub::BlockScanAlgorithm)2, (cub::BlockReduceAlgorithm)2, 4, false, float, int>(float*, int*)", Sampling, &[Sampling]),
        ("void vllm::concat_and_cache_mla_kernel<__nv_bfloat16, __nv_bfloat16, (vllm::Fp8KVCacheDataType)0>(__nv_bfloat16 const*)", KvCache, &[KvCache]),
        ("triton_per_fused__softmax_0", Softmax, &[Softmax]),
        ("triton_per_fused_native_layer_norm_0", Norm, &[Norm]),
        ("triton_poi_fused_embedding_0", Embedding, &[Embedding]),
        ("triton_red_fused__to_copy_add_mean_mul_pow_rsqrt_3", Norm, &[Elementwise, Memory, Norm]),
    ];
    let wrong: Vec<String> = cases
        .iter()
        .filter_map(|&(name, category, components)| {
            let got = classify(name);
            (got.category != category || got.components != components).then(|| {
                format!(
                    "{name}: expected {category} {components:?}, got {} {:?} (rule {:?})",
                    got.category, got.components, got.rule
                )
            })
        })
        .collect();
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
