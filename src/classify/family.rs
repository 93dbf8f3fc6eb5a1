//! What a library kernel's name says, read out for a reader: the library family and the fields
//! an engineer reads the name for (the GEMM's tile and layout, Tensile's macro tile and matrix
//! instruction, the collective and its algorithm, the ops an Inductor kernel fused). A name of
//! a few hundred characters becomes "cuBLAS sm90 GEMM bf16 tn, tile 128×128×64". Names of no
//! known family are left to [`crate::name::short_name`]. Fields are shown as the name writes
//! them where their meaning is not certain.

use crate::inductor::{self, InductorKind};
use crate::name::short_name;

/// A kernel name's library family and what it says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Family {
    /// The library, as its users call it: "cuBLAS", "hipBLASLt/Tensile", "NCCL/RCCL", …
    pub library: &'static str,
    /// The fields the name encodes, in words ("sm90 GEMM bf16 tn, tile 128×128×64").
    pub detail: String,
}

/// The kernel's own name: without a leading return type (`void `), the namespaces before it
/// and its template or argument list (`void at::native::reduce_kernel<…>(…)` → `reduce_kernel`).
fn base(name: &str) -> &str {
    const ANONYMOUS: &str = "(anonymous namespace)";
    let name = name.trim().trim_start_matches("void ");
    // `at::native::(anonymous namespace)::CatArrayBatchedCopy<…>`: that parenthesis is a
    // namespace, not the argument list.
    let mut end = name.len();
    let mut from = 0;
    while let Some(at) = name[from..].find(['<', '(']).map(|p| from + p) {
        if name[at..].starts_with(ANONYMOUS) {
            from = at + ANONYMOUS.len();
            continue;
        }
        end = at;
        break;
    }
    let head = &name[..end];
    match head.rfind("::") {
        Some(i) => &head[i + 2..],
        None => head,
    }
}

/// The `_`-separated fields of an identifier.
fn fields(s: &str) -> impl Iterator<Item = &str> {
    s.split('_').filter(|f| !f.is_empty())
}

/// The first field made of numbers joined by `x` (`128x128x64`), written with `×`.
fn tile<'a>(mut it: impl Iterator<Item = &'a str>) -> Option<String> {
    it.find(|f| {
        let parts: Vec<&str> = f.split('x').collect();
        parts.len() >= 2 && parts.iter().all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
    })
    .map(|f| f.replace('x', "×"))
}

/// An operand-layout field of a BLAS name (`tn`, `nt`, `nn`, `tt`).
fn layout<'a>(mut it: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    it.find(|f| matches!(*f, "tn" | "nt" | "nn" | "tt"))
}

/// cuBLAS's Hopper names: `sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_…_cublas`.
fn cublas(b: &str) -> Option<Family> {
    let (arch, rest) = b.split_once("_xmma_")?;
    let arch = arch.strip_prefix("sm").filter(|d| d.bytes().all(|c| c.is_ascii_digit()))?;
    let op = rest.split('_').next()?;
    let types = fields(rest).nth(1).map(|t| format!(" {t}")).unwrap_or_default();
    let lay = layout(fields(rest)).map(|l| format!(" {l}")).unwrap_or_default();
    let size = fields(rest).find_map(|f| f.strip_prefix("tilesize")).map(|t| format!(", tile {}", t.replace('x', "×")));
    Some(Family {
        library: CUBLAS,
        detail: format!("sm{arch} {}{types}{lay}{}", op.to_ascii_uppercase(), size.unwrap_or_default()),
    })
}

/// cuBLAS's JIT kernels: `nvjet_tst_128x256_64x4_2x1_v_bz_coopA_TNT` (the first tile is the CTA's).
fn nvjet(b: &str) -> Option<Family> {
    let rest = b.strip_prefix("nvjet_")?;
    let t = tile(fields(rest)).map(|t| format!("tile {t}")).unwrap_or_else(|| rest.to_string());
    Some(Family { library: NVJET, detail: t })
}

/// CUTLASS: `cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_128x64_64x6_tn_align8`, also inside
/// a wrapper's template arguments (`Kernel2<cutlass_80_simt_sgemm_128x32_8x5_nn_align1>`).
fn cutlass(name: &str) -> Option<Family> {
    let at = name.find("cutlass_")?;
    let id: String =
        name[at + "cutlass_".len()..].chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
    let mut it = fields(&id);
    let arch = it.next().filter(|a| a.bytes().all(|c| c.is_ascii_digit())).map(|a| format!("sm{a} "));
    let op = fields(&id)
        .find(|f| ["gemm", "fprop", "dgrad", "wgrad"].iter().any(|k| f.ends_with(k)))
        .map(|f| f.to_string())
        .unwrap_or_else(|| "kernel".to_string());
    let t = tile(fields(&id)).map(|t| format!(", tile {t}")).unwrap_or_default();
    let lay = layout(fields(&id)).map(|l| format!(" {l}")).unwrap_or_default();
    Some(Family { library: CUTLASS, detail: format!("{}{op}{lay}{t}", arch.unwrap_or_default()) })
}

/// Tensile (hipBLASLt, rocBLAS): `Cijk_Alik_Bljk_…_Bias_…_MT256x128x64_MI16x16x1_…`: the
/// index notation, the bias epilogue, the macro tile and the matrix instruction.
fn tensile(b: &str) -> Option<Family> {
    let mut it = fields(b);
    let c = it.next().filter(|f| f.starts_with("Cijk"))?;
    let a = it.next().unwrap_or("");
    let bb = it.next().unwrap_or("");
    // The macro tile and the matrix instruction first: they are what a reader compares.
    let mt = fields(b).find_map(|f| f.strip_prefix("MT")).map(|t| format!(" MT {},", t.replace('x', "×")));
    let mi = fields(b).find_map(|f| f.strip_prefix("MI")).map(|t| format!(" MI {},", t.replace('x', "×")));
    let bias = if fields(b).any(|f| f == "Bias") { " bias," } else { "" };
    Some(Family {
        library: TENSILE,
        detail: format!("GEMM{}{}{bias} {c}_{a}_{bb}", mt.unwrap_or_default(), mi.unwrap_or_default()),
    })
}

/// NCCL and RCCL (the same names): `ncclDevKernel_AllReduce_Sum_bf16_RING_LL`.
fn nccl(b: &str) -> Option<Family> {
    let rest = b.strip_prefix("ncclDevKernel_").or_else(|| b.strip_prefix("ncclKernel_"))?;
    Some(Family { library: NCCL, detail: fields(rest).collect::<Vec<_>>().join(" ") })
}

/// FlashAttention: `flash_fwd_kernel<Flash_fwd_kernel_traits<64, 128, 128, 4, …>>` (head dim,
/// query and key blocks), `flash_fwd_splitkv_kernel`, FA3's `FlashAttnFwdSm90`.
fn flash(name: &str, b: &str) -> Option<Family> {
    let lower = b.to_ascii_lowercase();
    if !(lower.starts_with("flash_") || lower.starts_with("flashattn")) {
        return None;
    }
    let dir = if lower.contains("bwd") { "backward" } else { "forward" };
    let split = if lower.contains("splitkv") { ", split KV" } else { "" };
    let traits = name.split_once("kernel_traits<").map(|(_, t)| {
        let nums: Vec<&str> = t.split([',', '>']).map(str::trim).take(3).collect();
        match nums.as_slice() {
            [d, q, k] if [d, q, k].iter().all(|n| n.bytes().all(|c| c.is_ascii_digit())) => {
                format!(", head dim {d}, blocks {q}×{k}")
            }
            _ => String::new(),
        }
    });
    Some(Family { library: FLASH, detail: format!("{dir}{split}{}", traits.unwrap_or_default()) })
}

/// Inductor's Triton kernels: the kind and the ops the name lists.
fn triton(b: &str) -> Option<Family> {
    let (kind, ops) = inductor::parse(&b.to_ascii_lowercase())?;
    let kind = match kind {
        InductorKind::Pointwise => "pointwise",
        InductorKind::Reduction => "reduction",
        InductorKind::PersistentReduction => "persistent reduction",
        InductorKind::Template => "template",
        InductorKind::Foreach => "foreach",
        InductorKind::Cpp => {
            let ops = if ops.is_empty() { "fused".to_string() } else { ops.join(", ") };
            return Some(Family { library: CPP, detail: ops });
        }
    };
    let ops = if ops.is_empty() { String::new() } else { format!(": {}", ops.join(", ")) };
    Some(Family { library: TRITON, detail: format!("{kind}{ops}") })
}

/// PyTorch's own CUDA/HIP kernels: the kernel's name and the functor that names its op
/// (`vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<…>>` → "elementwise: add").
fn aten(name: &str, b: &str) -> Option<Family> {
    if !name.contains("at::native::") {
        return None;
    }
    let kernel = b;
    let args = name.split_once('<').map_or("", |(_, a)| a);
    let op = args.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).find_map(|w| {
        w.strip_prefix("CUDAFunctor_")
            .or_else(|| w.strip_suffix("_kernel_cuda"))
            .or_else(|| w.strip_suffix("Functor").filter(|f| !f.is_empty()))
            .or_else(|| w.strip_suffix("Ops").filter(|f| !f.is_empty() && *f != "Reduce"))
            .or_else(|| w.strip_suffix("_kernel").filter(|f| !f.is_empty() && !f.ends_with("elementwise")))
    });
    let detail = match op {
        Some(op) => format!("{kernel}: {}", op.to_ascii_lowercase()),
        None => kernel.to_string(),
    };
    Some(Family { library: PYTORCH, detail })
}

/// trtllm-gen's GEMMs (Blackwell kernels of TensorRT-LLM and FlashInfer):
/// `bmm_Bfloat16_MxE2m1MxE4m3_Fp32_t128x16x256u2_…_swiGlu_dynBatch_sm100f`: the output type,
/// the inputs' types, the accumulator's, the tile, and a gated activation run in the epilogue.
fn trtllm_gemm(b: &str) -> Option<Family> {
    let (kind, rest) = b.split_once('_')?;
    let kind = match kind {
        "bmm" => "BMM",
        "gemm" => "GEMM",
        _ => return None,
    };
    let mut it = fields(rest);
    let (out, inputs, _acc, tile) = (it.next()?, it.next()?, it.next()?, it.next()?);
    let tile: String = tile.strip_prefix('t')?.chars().take_while(|c| c.is_ascii_digit() || *c == 'x').collect();
    let arch = fields(rest)
        .last()
        .filter(|a| a.strip_prefix("sm").is_some_and(|d| d.starts_with(|c: char| c.is_ascii_digit())))?;
    if tile.split('x').count() != 3 || tile.split('x').any(str::is_empty) {
        return None;
    }
    // `MxE2m1MxE4m3`: a type starts at a capital after a digit.
    let mut types = String::new();
    let mut last = ' ';
    for c in inputs.chars() {
        if c.is_ascii_uppercase() && last.is_ascii_digit() {
            types.push('×');
        }
        types.push(c);
        last = c;
    }
    let act = ["swiGlu", "geGlu"].into_iter().find(|a| fields(rest).any(|f| f == *a)).map(|a| format!(", {a}"));
    Some(Family {
        library: TRTLLM_GEN,
        detail: format!("{arch} {kind} {types} → {out}, tile {}{}", tile.replace('x', "×"), act.unwrap_or_default()),
    })
}

/// trtllm-gen's attention: `fmhaSm100aKernel_QkvE4m3OBfloat16H64PagedKvCausalP16VarSeqQ128Kv128PersistentContext`:
/// the inputs' and the output's types, the head dimension, the mask, a paged KV cache, and
/// whether it is a prefill's (context) or a decode's (generation) kernel.
fn trtllm_fmha(b: &str) -> Option<Family> {
    let (arch, rest) = b.strip_prefix("fmha")?.split_once("Kernel_")?;
    let (qkv, rest) = rest.strip_prefix("Qkv")?.split_once('O')?;
    let (out, rest) = rest.split_once('H')?;
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 || qkv.is_empty() || out.is_empty() {
        return None;
    }
    let (head, flags) = rest.split_at(digits);
    let mut detail = format!("{} FMHA {qkv} → {out}, head dim {head}", arch.to_ascii_lowercase());
    // The mask first: a table cuts the end of a long name, and the mask is what tells a
    // model's attention kernels apart.
    let words = [
        ("SlidingOrChunkedCausal", "sliding or chunked causal"),
        ("Causal", "causal"),
        ("PagedKv", "paged KV"),
        ("Context", "context"),
        ("Gen", "generation"),
    ];
    let mut seen = String::new();
    for (word, said) in words {
        // "Causal" is also the end of "SlidingOrChunkedCausal": one mask is said once.
        if flags.contains(word) && !seen.contains(word) {
            detail += ", ";
            detail += said;
            seen += word;
        }
    }
    Some(Family { library: TRTLLM_GEN, detail })
}

/// Composable Kernel's tile kernels: `ck_tile::kentry<1, ck_tile::Rmsnorm2dFwd<…>>`, often as
/// the compiler mangled it (`_ZN7ck_tile6kentryILi1ENS_12Rmsnorm2dFwdI…`): every such kernel is
/// the same entry point, and the class it runs (its first template argument of a class's
/// name) is what tells them apart. A norm's `FusedAddEnum` or `FusedQuantEnum` other than 0
/// (`NO_ADD`, `NO_SWEEP`) says an add or a quantization ran in the same kernel.
fn ck_tile(name: &str) -> Option<Family> {
    let at = name.find("ck_tile")?;
    let after = &name[at..];
    let entry = after.find("kentry")?;
    let args = &after[entry + "kentry".len()..];
    let class = if name.starts_with("_Z") {
        mangled_names(args).find(|n| is_class(n))
    } else {
        idents(args).find(|n| is_class(n))
    }?;
    let fused = |what: &str| -> bool {
        let enum_name = format!("Fused{what}Enum");
        name.split(enum_name.as_str()).skip(1).any(|rest| {
            let value = rest.trim_start_matches(['E', ')']);
            value.starts_with(|c: char| c.is_ascii_digit()) && !value.starts_with('0')
        })
    };
    let mut detail = class.to_string();
    for (what, words) in [("Add", "fused add"), ("Quant", "fused quantization")] {
        if fused(what) {
            detail += ", ";
            detail += words;
        }
    }
    Some(Family { library: CK_TILE, detail })
}

/// A class's name as a kernel's template argument names it: a capital first, and more than
/// a letter or two (a mangled literal's `E` is not one).
fn is_class(n: &str) -> bool {
    n.len() >= 4 && n.starts_with(|c: char| c.is_ascii_uppercase()) && n.bytes().any(|b| b.is_ascii_lowercase())
}

/// The identifiers of demangled text, in order.
fn idents(s: &str) -> impl Iterator<Item = &str> {
    s.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).filter(|w| !w.is_empty())
}

/// The length-prefixed names of a mangled name (`12Rmsnorm2dFwd` → `Rmsnorm2dFwd`), in order.
fn mangled_names(s: &str) -> impl Iterator<Item = &str> {
    let bytes = s.as_bytes();
    let mut i = 0;
    std::iter::from_fn(move || {
        while i < bytes.len() {
            if !bytes[i].is_ascii_digit() {
                i += 1;
                continue;
            }
            let start = i;
            while i < bytes.len() && bytes[i].is_ascii_digit() {
                i += 1;
            }
            let len: usize = s[start..i].parse().ok()?;
            let end = i.checked_add(len)?;
            if let Some(n) = s.get(i..end).filter(|n| n.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')) {
                i = end;
                return Some(n);
            }
        }
        None
    })
}

/// The family of a kernel name, when it is of a library this module reads.
pub fn family(name: &str) -> Option<Family> {
    let b = base(name);
    cublas(b)
        .or_else(|| nvjet(b))
        .or_else(|| tensile(b))
        .or_else(|| nccl(b))
        .or_else(|| flash(name, b))
        .or_else(|| triton(b))
        .or_else(|| cutlass(name))
        .or_else(|| ck_tile(name))
        .or_else(|| trtllm_gemm(b))
        .or_else(|| trtllm_fmha(b))
        .or_else(|| aten(name, b))
}

/// A kernel name a reader can use, at most `width` characters: its family and fields
/// ("cuBLAS: sm90 GEMM bf16bf16 tn, tile 128×128×64"), else the name shortened as tables do.
pub fn readable_name(name: &str, width: usize) -> String {
    match family(name) {
        Some(f) => cut(format!("{}: {}", f.library, f.detail), width),
        None => short_name(name, width),
    }
}

/// A kernel name for a drawn box, at most `width` characters: [`readable_name`], but PyTorch's
/// own kernels without the library's label and the word `kernel`, which their names already
/// make plain ("vectorized_elementwise: mul").
pub fn box_name(name: &str, width: usize) -> String {
    match family(name) {
        Some(f) if f.library == PYTORCH => cut(f.detail.replacen("_kernel", "", 1), width),
        _ => readable_name(name, width),
    }
}

/// A kernel name for a table cell, at most `width` characters: a vendor library's kernel read
/// out ([`readable_name`]: the library, the tile, the epilogue, where the name's middle would
/// otherwise be cut), else the name shortened as tables do. Triton's and PyTorch's own names
/// are kept: they are readable already, and their numbers tell kernels apart.
pub fn table_name(name: &str, width: usize) -> String {
    match family(name) {
        Some(f) if READ_OUT.contains(&f.library) => readable_name(name, width),
        // Read out already (a share link carries table names): kept as it is.
        None if READ_OUT.iter().any(|l| name.strip_prefix(l).is_some_and(|r| r.starts_with(": "))) => {
            cut(name.to_string(), width)
        }
        _ => short_name(name, width),
    }
}

/// `text` in at most `width` characters, an ellipsis ending what was cut.
fn cut(text: String, width: usize) -> String {
    if text.chars().count() <= width {
        text
    } else {
        text.chars().take(width.saturating_sub(1)).chain(['…']).collect()
    }
}

/// The libraries whose kernels [`table_name`] reads out, as it labels them.
const READ_OUT: [&str; 8] = [CUBLAS, NVJET, CUTLASS, TENSILE, NCCL, FLASH, CK_TILE, TRTLLM_GEN];

// The libraries' labels, as their users call them.
const CUBLAS: &str = "cuBLAS";
const NVJET: &str = "cuBLAS (nvjet)";
const CUTLASS: &str = "CUTLASS";
const TENSILE: &str = "hipBLASLt/Tensile";
const NCCL: &str = "NCCL/RCCL";
const FLASH: &str = "FlashAttention";
const CK_TILE: &str = "CK tile";
const TRTLLM_GEN: &str = "trtllm-gen";
const TRITON: &str = "Triton (Inductor)";
const CPP: &str = "C++ (Inductor)";
const PYTORCH: &str = "PyTorch";

#[cfg(test)]
mod tests {
    use super::*;

    fn read(name: &str) -> String {
        let f = family(name).unwrap_or_else(|| panic!("no family: {name}"));
        format!("{}: {}", f.library, f.detail)
    }

    #[test]
    fn library_kernels_of_the_test_traces_read_out() {
        let cases = [
            (
                "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas",
                "cuBLAS: sm90 GEMM bf16bf16 tn, tile 128×128×64",
            ),
            ("nvjet_tst_128x256_64x4_2x1_v_bz_coopA_TNT", "cuBLAS (nvjet): tile 128×256"),
            (
                "Cijk_Alik_Bljk_B_BS_BH_Bias_HA_S_SAV_UserArgs_MT256x128x64_MI16x16x1_SN_LDSB1_AFC1",
                "hipBLASLt/Tensile: GEMM MT 256×128×64, MI 16×16×1, bias, Cijk_Alik_Bljk",
            ),
            (
                "void cutlass::Kernel2<cutlass_80_simt_sgemm_128x32_8x5_nn_align1>(cutlass_80_simt_sgemm_128x32_8x5_nn_align1::Params)",
                "CUTLASS: sm80 sgemm nn, tile 128×32",
            ),
            ("cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_128x64_64x6_tn_align8", "CUTLASS: sm80 s16816gemm tn, tile 128×64"),
            (
                "void flash_fwd_kernel<pytorch_flash::Flash_fwd_kernel_traits<64, 128, 128, 4, false, false, cutlass::bfloat16_t>, false>(pytorch_flash::Flash_fwd_params)",
                "FlashAttention: forward, head dim 64, blocks 128×128",
            ),
            ("ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)", "NCCL/RCCL: AllReduce Sum bf16 RING LL"),
            ("triton_red_fused_add_mean_mul_pow_rsqrt_0", "Triton (Inductor): reduction: add, mean, mul, pow, rsqrt"),
            (
                "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<c10::BFloat16>, at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<c10::BFloat16>, at::detail::Array<char*, 3>)",
                "PyTorch: vectorized_elementwise_kernel: add",
            ),
            (
                "void at::native::vectorized_elementwise_kernel<4, at::native::cos_kernel_cuda(at::TensorIteratorBase&)::{lambda()#2}::operator()() const::{lambda()#1}::operator()() const::{lambda(float)#1}, at::detail::Array<char*, 2> >(int, at::native::cos_kernel_cuda(at::TensorIteratorBase&)::{lambda()#2}::operator()() const::{lambda()#1}::operator()() const::{lambda(float)#1}, at::detail::Array<char*, 2>)",
                "PyTorch: vectorized_elementwise_kernel: cos",
            ),
            (
                "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::MeanOps<float, float, float, float>, unsigned int, float, 4> >(at::native::ReduceOp<float, at::native::MeanOps<float, float, float, float>, unsigned int, float, 4>)",
                "PyTorch: reduce_kernel: mean",
            ),
            (
                "bmm_Bfloat16_MxE2m1MxE4m3_Fp32_t128x16x256u2_s3_et128x16_m128x16x32_cga1x1x1_16dp256b_rM_TN_transOut_schedP2x1x2x3_biasM_bN_tmaOpt_clmp_dynBatch_sm100f",
                "trtllm-gen: sm100f BMM MxE2m1×MxE4m3 → Bfloat16, tile 128×16×256",
            ),
            (
                "bmm_MxE4m3_MxE2m1MxE4m3_Fp32_t128x16x256u2_s3_et128x16_m128x16x32_cga1x1x1_16dp256b_rM_TN_transOut_schedP2x1x2x3_biasM_bN_tma_tmaOpt_clmp_swiGlu_dynBatch_sm100f",
                "trtllm-gen: sm100f BMM MxE2m1×MxE4m3 → MxE4m3, tile 128×16×256, swiGlu",
            ),
            (
                "fmhaSm100aKernel_QkvE4m3OBfloat16H64PagedKvCausalP16VarSeqQ128Kv128PersistentContext",
                "trtllm-gen: sm100a FMHA E4m3 → Bfloat16, head dim 64, causal, paged KV, context",
            ),
            (
                "fmhaSm100aKernel_QkvE4m3OBfloat16H64PagedKvSlidingOrChunkedCausalP16VarSeqQ128Kv128PersistentContext",
                "trtllm-gen: sm100a FMHA E4m3 → Bfloat16, head dim 64, sliding or chunked causal, paged KV, context",
            ),
        ];
        for (name, want) in cases {
            assert_eq!(read(name), want, "{name}");
        }
    }

    /// Composable Kernel's tile kernels all enter through `kentry`: the class each runs names
    /// it (the names are the vLLM and SGLang MI300X traces', cut where their tails repeat).
    #[test]
    fn ck_tile_kernels_read_out_by_the_class_they_run() {
        let norm = |add: u8| {
            format!("_ZN7ck_tile6kentryILi1ENS_12Rmsnorm2dFwdINS_27Rmsnorm2dFwdPipelineOnePassINS_27Rmsnorm2dFwdPipelineProblemIDF16bDF16bfDF16bDF16bDF16bffNS_19Generic2dBlockShapeINS_8sequenceIJLi1ELi3072EEEENS5_IJLi1ELi128EEEENS5_IJLi1ELi8EEEEEENS_18Rmsnorm2dFwdTraitsILb1ELb0ELb0ELb0ELNS_21Rmsnorm2dFusedAddEnumE{add}ELNS_23Rmsnorm2dFusedQuantEnumE0ELNS_22Rmsnorm2dSensitiveEnumE0EEEEEEEEEEvDpT0_")
        };
        assert_eq!(read(&norm(0)), "CK tile: Rmsnorm2dFwd");
        assert_eq!(read(&norm(1)), "CK tile: Rmsnorm2dFwd, fused add");
        let prefill = "_ZN7ck_tile6kentryILi2ENS_38FmhaBatchPrefillWithPagedKVCacheKernelINS_40BlockFmhaBatchPrefillPipelineQRKSVSAsyncINS_36BlockFmhaBatchPrefillPipelineProblemIDF16bDF16bDF16bffDF16bhfDF16bfDF16bNS_13TileFmhaShapeINS_8sequenceIJLi128ELi128ELi32ELi128ELi32ELi128EEEE";
        assert_eq!(read(prefill), "CK tile: FmhaBatchPrefillWithPagedKVCacheKernel");
        // Demangled, as other profilers write it.
        let demangled = "void ck_tile::kentry<1, ck_tile::Rmsnorm2dFwd<ck_tile::Rmsnorm2dFwdPipelineOnePass<…>, (ck_tile::Rmsnorm2dFusedAddEnum)1, (ck_tile::Rmsnorm2dFusedQuantEnum)0> >(…)";
        assert_eq!(read(demangled), "CK tile: Rmsnorm2dFwd, fused add");
        assert_eq!(table_name(&norm(1), 60), "CK tile: Rmsnorm2dFwd, fused add");
        // A kernel that only takes a ck_tile type as an argument is not one.
        let paged = "void paged_attention_ll4mi_QKV_mfma16_kernel<0, __hip_bfloat16, 4, 1, ck_tile::ComposedAttention<0u, false> >(__hip_bfloat16 const*)";
        assert!(family(paged).is_none());
        // Nothing to read: no family, no panic.
        for bad in ["_ZN7ck_tile6kentryILi1E", "ck_tile::kentry<1>", "_ZN7ck_tile6kentry99999999999999999999999Abc"] {
            assert!(family(bad).is_none(), "{bad}");
        }
    }

    /// The B200 vLLM trace's trtllm-gen kernels (two GEMMs and two attention kernels whose names
    /// differ only past the middle a table would cut) are read out with the others above; names
    /// of their shapes that are not theirs are not.
    #[test]
    fn names_shaped_like_trtllm_gen_s_are_not_read_as_theirs() {
        for name in [
            "bmm_kernel",
            "bmm_a_b_c_d_sm90",
            "gemm_x_y_z_t1x2_sm90",
            "fmha_fwd",
            "fmhaKernel_QkvOH",
            "fmhaSm100Kernel_QkvE4m3OBf16H",
        ] {
            assert!(family(name).is_none(), "{name}");
        }
    }

    #[test]
    fn a_table_name_read_out_stays_as_it_is() {
        let cijk = "Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT256x192x64_MI16x16x1_SN_LDSB1_AFC1_AFEM1_AFEM1_ASEM1_CLR1_CADS0_DTLA0_DTLB0_DTVA0_DTVB0_EPS0_FDSI0_GRPM1_GRVWA8_GRVWB8_GSUAMBSK_GLS0_ISA942_IU1_K1_LDSTI0_LBSPPA1024_LBSPPB256_LBSPPM0_LPA16_LPB16_LPM0_LRVW8_LWPMn1_MIAV0_MIWT8_6_MO40_NTn1_NTA0_NTB0_NTC0_NTD4_NTM0_NEPBS16_NLCA1_NLCB1_ONLL1_PGR2_PLR1_PKA1_SIA3_SS1_SPO0_SRVW0_SSO0_SVW8_SK0_SKFTR0_SKXCCM0_TLDS1_ULSGRO1_USL1_UIOFGRO0_USFGROn1_VSn1_VWA8_VWB2_WSGRA0_WSGRB0_WS64_WG32_8_1";
        let once = table_name(cijk, 60);
        assert!(once.starts_with("hipBLASLt/Tensile: GEMM MT 256×192×64"), "{once}");
        assert_eq!(table_name(&once, 60), once);
        assert_eq!(table_name("triton_poi_fused_add_0", 60), "triton_poi_fused_add_0");
    }

    #[test]
    fn a_kernel_in_an_anonymous_namespace_is_named_by_itself() {
        // From the shared Qwen H100 trace: the first parenthesis is the namespace.
        let cat = "void at::native::(anonymous namespace)::CatArrayBatchedCopy_aligned16_contig<at::native::(anonymous namespace)::OpaqueType<2u>, unsigned int, 4, 128, 1>(at::native::(anonymous namespace)::OpaqueType<2u>*, at::native::(anonymous namespace)::CatArrInputTensorMetadata<at::native::(anonymous namespace)::OpaqueType<2u>, unsigned int, 128, 1>, at::native::(anonymous namespace)::TensorSizeStride<unsigned int, 4u>, int, unsigned int)";
        assert_eq!(base(cat), "CatArrayBatchedCopy_aligned16_contig");
        assert!(box_name(cat, 60).starts_with("CatArrayBatchedCopy_aligned16_contig"), "{}", box_name(cat, 60));
    }

    #[test]
    fn unknown_names_fall_back_to_the_table_s_short_name() {
        for name in ["attn_fwd", "my_custom_kernel<int>(int)", "", "sm90_not_xmma", "Cij"] {
            assert!(family(name).is_none(), "{name}");
            assert_eq!(readable_name(name, 40), short_name(name, 40));
        }
        assert!(readable_name("ncclDevKernel_AllReduce_Sum_bf16_RING_LL", 12).chars().count() <= 12);
    }
}
