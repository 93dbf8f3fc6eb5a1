//! Synthetic serving traces (vLLM/SGLang-like) for tests and benchmarks: forward passes replayed
//! from CUDA/HIP graphs, as the structure search and the layer alignment meet them, with the
//! differences between vendors planted so that tests can assert exactly what is found.
//!
//! A trace is prefill passes (eager: every kernel has its CPU op) then decode passes (graph
//! replays: kernels carry no `External id`, share their replay's correlation id, and on ROCm are
//! `kind: "Dispatch Task"`). Each pass is input preparation (eager), the embedding, one decoder
//! layer per model layer, the final norm and the logits GEMM, then sampling (eager). Per layer:
//! input norm, QKV GEMM, rotary, KV-cache write, attention, output GEMM, post-attention norm,
//! gate-up GEMM, SiLU · mul, down GEMM; [`ServingSpec`] says how each vendor splits or fuses
//! them. Writes to any [`std::io::Write`], so the module stays free of file-system code.

use std::io::Write;

use super::{Counting, Flavor};

/// What to generate. [`ServingSpec::new`] gives a small vLLM-like workload.
#[derive(Debug, Clone, PartialEq)]
pub struct ServingSpec {
    pub flavor: Flavor,
    /// Decoder layers of the model.
    pub layers: usize,
    pub prefill_steps: usize,
    pub decode_steps: usize,
    /// Kernels of decode attention: 1 (one kernel), 2 (split-KV and its reduce), 3 (and a merge).
    pub attention_kernels: usize,
    /// The output projection is a split-K GEMM followed by its reduce kernel.
    pub split_k: bool,
    /// Residual add and RMSNorm in one kernel, else an add then a norm.
    pub fused_add_norm: bool,
    /// SiLU and the gate multiply in one kernel, else two.
    pub fused_silu_mul: bool,
    /// Durations vary by up to this share either way (0: none).
    pub noise: f64,
    /// The first layer has no residual add before its input norm (a plain norm), as in real
    /// models.
    pub first_layer_differs: bool,
    /// Idle GPU time between passes, µs (0: back to back).
    pub step_gap_us: f64,
    /// Each pass inside a vLLM-style `execute_…` CPU annotation.
    pub annotate: bool,
    /// Devices (ranks) that run the same kernels, written interleaved in one file.
    pub ranks: usize,
    pub seed: u64,
}

impl ServingSpec {
    /// An AMD-like and an NVIDIA-like trace of one model that differ as vendors do: the AMD one
    /// splits decode attention in two kernels, runs the output projection as a split-K GEMM and
    /// its reduce, and fuses neither add + RMSNorm nor SiLU·mul; the NVIDIA one fuses both.
    pub fn vendor_pair() -> (ServingSpec, ServingSpec) {
        let amd = ServingSpec {
            attention_kernels: 2,
            split_k: true,
            fused_add_norm: false,
            fused_silu_mul: false,
            ..ServingSpec::new(Flavor::Amd)
        };
        (amd, ServingSpec { seed: 7, ..ServingSpec::new(Flavor::Nvidia) })
    }

    pub fn new(flavor: Flavor) -> Self {
        ServingSpec {
            flavor,
            layers: 8,
            prefill_steps: 1,
            decode_steps: 3,
            attention_kernels: 1,
            split_k: false,
            fused_add_norm: true,
            fused_silu_mul: true,
            noise: 0.05,
            first_layer_differs: true,
            step_gap_us: 800.0,
            annotate: false,
            ranks: 1,
            seed: 1,
        }
    }
}

/// One kernel of a pass: its name and CPU op (eager launches), and its base duration, µs.
#[derive(Debug, Clone, Copy, PartialEq)]
struct K {
    name: &'static str,
    op: &'static str,
    us: f64,
}

const fn k(name: &'static str, op: &'static str, us: f64) -> K {
    K { name, op, us }
}

/// The names each vendor's libraries give a kernel.
struct Names {
    gemm_qkv: [&'static str; 2],
    gemm_o: [&'static str; 2],
    gemm_o_split_k: [&'static str; 2],
    gemm_up: [&'static str; 2],
    gemm_down: [&'static str; 2],
    lm_head: &'static str,
    attention_one: [&'static str; 2],
    attention_split: [&'static str; 3],
    rotary: &'static str,
    kv_cache: &'static str,
}

const AMD: Names = Names {
    gemm_qkv: [
        "Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT64x32x256_MI16x16x1_SN_LDSB1_AFC1_GRVWA8_GSU1_ISA942_WG64_4_1",
        "Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT256x192x64_MI16x16x1_SN_LDSB1_AFC1_GRVWA8_GSU1_ISA942_WG64_4_1",
    ],
    gemm_o: [
        "Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT16x32x512_MI16x16x1_SN_LDSB1_AFC1_GRVWA8_GSU1_ISA942_WG64_4_1",
        "Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT320x224x64_MI16x16x1_SN_LDSB0_AFC1_GRVWA8_GSU1_ISA942_WG64_4_1",
    ],
    gemm_o_split_k: [
        "Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT16x32x512_MI16x16x1_SN_LDSB1_AFC1_GRVWA8_GSU4_ISA942_WG64_4_1",
        "Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_PostGSU4_VW1",
    ],
    gemm_up: [
        "Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT256x32x64_MI16x16x1_SN_LDSB1_AFC1_GRVWA8_GSU1_ISA942_WG64_4_1",
        "Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT128x256x32_MI16x16x1_SN_LDSB1_AFC1_GRVWA8_GSU1_ISA942_WG64_4_1",
    ],
    gemm_down: [
        "Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT32x32x256_MI16x16x1_SN_LDSB1_AFC1_GRVWA8_GSU1_ISA942_WG64_4_1",
        "Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT320x224x64_MI16x16x1_SN_LDSB0_AFC1_GRVWA8_GSU2_ISA942_WG64_4_1",
    ],
    lm_head: "Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT256x48x64_MI16x16x1_SN_LDSB1_AFC1_GRVWA8_GSU1_ISA942_WG64_4_1",
    attention_one: ["kernel_unified_attention_2d", "kernel_unified_attention_2d"],
    attention_split: [
        "kernel_unified_attention_3d",
        "reduce_segments",
        "void vllm::merge_attn_states_kernel<__hip_bfloat16, 128u>(__hip_bfloat16*, float*, __hip_bfloat16 const*, float const*, __hip_bfloat16 const*, float const*, unsigned int, unsigned int, unsigned int)",
    ],
    rotary: "void vllm::rotary_embedding_kernel<c10::BFloat16, true>(long const*, c10::BFloat16*, c10::BFloat16*, c10::BFloat16 const*, int, long, long, long, int, int, int)",
    kv_cache: "void vllm::reshape_and_cache_flash_kernel<__hip_bfloat16, __hip_bfloat16, (vllm::Fp8KVCacheDataType)0>(__hip_bfloat16 const*, __hip_bfloat16 const*, __hip_bfloat16*, __hip_bfloat16*, long const*, long, long, long, long, long, int, int, int, float const*, float const*)",
};

const NVIDIA: Names = Names {
    gemm_qkv: ["nvjet_tst_64x8_64x16_4x1_v_bz_TNT", "nvjet_tst_256x128_64x4_2x1_v_bz_coopA_TNT"],
    gemm_o: ["nvjet_tst_64x8_64x16_2x1_v_bz_TNT", "nvjet_tst_192x128_64x5_2x1_v_bz_coopB_TNT"],
    gemm_o_split_k: [
        "nvjet_tst_64x8_64x16_4x1_v_bz_splitK_TNT",
        "void cublasLt::splitKreduce_kernel<32, 16, int, __nv_bfloat16, __nv_bfloat16, float, __nv_bfloat16, false, false, false, false>(cublasLt::cublasSplitKParams<float>, __nv_bfloat16 const*, __nv_bfloat16 const*, __nv_bfloat16*, float const*, float const*, __nv_bfloat16 const*, __nv_bfloat16 const*, __nv_bfloat16*, void*, long, float*, int*)",
    ],
    gemm_up: ["nvjet_tst_128x16_64x8_4x1_v_bz_TNT", "nvjet_tst_256x128_64x4_2x1_v_bz_coopB_TNT"],
    gemm_down: ["nvjet_tst_64x16_64x8_4x1_v_bz_TNT", "nvjet_tst_192x128_64x5_2x1_v_bz_coopA_TNT"],
    lm_head: "nvjet_tst_128x64_64x6_2x1_v_bz_coopB_TNT",
    attention_one: [
        "void flash::flash_fwd_kernel<Flash_fwd_kernel_traits<128, 64, 128, 4, false, false, cutlass::bfloat16_t, Flash_kernel_traits<128, 64, 128, 4, cutlass::bfloat16_t> >, false, false, false, false, true, true, false, false>(flash::Flash_fwd_params)",
        "void flash::flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4, false, false, cutlass::bfloat16_t, Flash_kernel_traits<128, 128, 64, 4, cutlass::bfloat16_t> >, false, true, false, false, false, true, false, false>(flash::Flash_fwd_params)",
    ],
    attention_split: [
        "void flash::flash_fwd_splitkv_kernel<Flash_fwd_kernel_traits<128, 64, 128, 4, false, false, cutlass::bfloat16_t, Flash_kernel_traits<128, 64, 128, 4, cutlass::bfloat16_t> >, false, false, false, false, true, false, false>(flash::Flash_fwd_params)",
        "void flash::flash_fwd_splitkv_combine_kernel<Flash_fwd_kernel_traits<128, 64, 128, 4, false, false, cutlass::bfloat16_t, Flash_kernel_traits<128, 64, 128, 4, cutlass::bfloat16_t> >, 4, 3, false>(flash::Flash_fwd_params)",
        "void vllm::merge_attn_states_kernel<__nv_bfloat16, 128u>(__nv_bfloat16*, float*, __nv_bfloat16 const*, float const*, __nv_bfloat16 const*, float const*, unsigned int, unsigned int, unsigned int)",
    ],
    rotary: "void vllm::rotary_embedding_kernel<c10::BFloat16, true>(long const*, c10::BFloat16*, c10::BFloat16*, c10::BFloat16 const*, int, long, long, long, int, int, int)",
    kv_cache: "void vllm::reshape_and_cache_flash_kernel<__nv_bfloat16, __nv_bfloat16, (vllm::Fp8KVCacheDataType)0>(__nv_bfloat16 const*, __nv_bfloat16 const*, __nv_bfloat16*, __nv_bfloat16*, long const*, long, long, long, long, long, int, int, int, float const*, float const*)",
};

const FUSED_ADD_NORM: &str = "void vllm::fused_add_rms_norm_kernel<c10::BFloat16, 8>(c10::BFloat16*, c10::BFloat16*, c10::BFloat16 const*, float, int, int)";
const NORM: &str =
    "void vllm::rms_norm_kernel<c10::BFloat16>(c10::BFloat16*, c10::BFloat16 const*, c10::BFloat16 const*, float, int, int)";
const ADD: &str = "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<c10::BFloat16>, std::array<char*, 3ul> >(int, at::native::CUDAFunctor_add<c10::BFloat16>, std::array<char*, 3ul>)";
const SILU_MUL: &str = "void vllm::act_and_mul_kernel<c10::BFloat16, &(c10::BFloat16 vllm::silu_kernel<c10::BFloat16>(c10::BFloat16 const&)), true>(c10::BFloat16*, c10::BFloat16 const*, int)";
const SILU: &str = "void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous namespace)::silu_kernel(at::TensorIteratorBase&)::{lambda()#1}::operator()() const::{lambda()#4}::operator()() const::{lambda(c10::BFloat16)#1}, std::array<char*, 2ul> >(int, at::native::(anonymous namespace)::silu_kernel(at::TensorIteratorBase&)::{lambda()#1}::operator()() const::{lambda()#4}::operator()() const::{lambda(c10::BFloat16)#1}, std::array<char*, 2ul>)";
const MUL: &str = "void at::native::vectorized_elementwise_kernel<4, at::native::BinaryFunctor<c10::BFloat16, c10::BFloat16, c10::BFloat16, at::native::binary_internal::MulFunctor<float> >, std::array<char*, 3ul> >(int, at::native::BinaryFunctor<c10::BFloat16, c10::BFloat16, c10::BFloat16, at::native::binary_internal::MulFunctor<float> >, std::array<char*, 3ul>)";
const GATHER: &str =
    "void at::native::vectorized_gather_kernel<16, long>(char*, char*, long*, int, long, long, long, long, bool)";
const POSITIONS: &str = "void at::native::unrolled_elementwise_kernel<at::native::CUDAFunctorOnSelf_add<int>, std::array<char*, 2ul>, 4, TrivialOffsetCalculator<1, unsigned int>, TrivialOffsetCalculator<1, unsigned int>, at::native::memory::LoadWithCast<1>, at::native::memory::StoreWithCast<1> >(int, at::native::CUDAFunctorOnSelf_add<int>, std::array<char*, 2ul>, TrivialOffsetCalculator<1, unsigned int>, TrivialOffsetCalculator<1, unsigned int>, at::native::memory::LoadWithCast<1>, at::native::memory::StoreWithCast<1>)";
const ARGMAX: &str = "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::ArgMaxOps<float>, unsigned int, long, 4, 4> >(at::native::ReduceOp<float, at::native::ArgMaxOps<float>, unsigned int, long, 4, 4>)";

impl ServingSpec {
    fn names(&self) -> &'static Names {
        match self.flavor {
            Flavor::Amd => &AMD,
            Flavor::Nvidia => &NVIDIA,
        }
    }

    /// The kernels of layer `l` of a prefill (`prefill`) or decode pass, from its input norm.
    fn layer(&self, l: usize, prefill: bool) -> Vec<K> {
        let n = self.names();
        let ph = usize::from(prefill);
        let first = l == 0 && self.first_layer_differs;
        let mut out = Vec::new();
        let norm = |out: &mut Vec<K>, first: bool| {
            if first {
                out.push(k(NORM, "_C::rms_norm", 6.0));
            } else if self.fused_add_norm {
                out.push(k(FUSED_ADD_NORM, "_C::fused_add_rms_norm", 7.0));
            } else {
                out.push(k(ADD, "aten::add", 4.0));
                out.push(k(NORM, "_C::rms_norm", 6.0));
            }
        };
        norm(&mut out, first);
        out.push(k(n.gemm_qkv[ph], "aten::mm", 25.0));
        out.push(k(n.rotary, "_C::rotary_embedding", 5.5));
        out.push(k(n.kv_cache, "_C_cache_ops::reshape_and_cache_flash", 5.0));
        if prefill || self.attention_kernels <= 1 {
            out.push(k(n.attention_one[ph], "vllm::unified_attention", 40.0));
        } else {
            let pieces = self.attention_kernels.min(3);
            out.push(k(n.attention_split[0], "vllm::unified_attention", 35.0));
            for name in &n.attention_split[1..pieces] {
                out.push(k(name, "vllm::unified_attention", 5.0));
            }
        }
        if self.split_k && !prefill {
            out.push(k(n.gemm_o_split_k[0], "aten::mm", 12.0));
            out.push(k(n.gemm_o_split_k[1], "aten::mm", 4.0));
        } else {
            out.push(k(n.gemm_o[ph], "aten::mm", 16.0));
        }
        norm(&mut out, false);
        out.push(k(n.gemm_up[ph], "aten::mm", 65.0));
        if self.fused_silu_mul {
            out.push(k(SILU_MUL, "_C::silu_and_mul", 9.0));
        } else {
            out.push(k(SILU, "aten::silu", 6.0));
            out.push(k(MUL, "aten::mul", 6.0));
        }
        out.push(k(n.gemm_down[ph], "aten::mm", 40.0));
        out
    }

    /// The kernel names of a decode layer (not the first), from its input norm: what the
    /// structure search should report as the decode phase's layer.
    pub fn decode_layer(&self) -> Vec<&'static str> {
        self.layer(1, false).into_iter().map(|k| k.name).collect()
    }

    /// The same for a prefill layer.
    pub fn prefill_layer(&self) -> Vec<&'static str> {
        self.layer(1, true).into_iter().map(|k| k.name).collect()
    }

    /// Kernels of one pass on one device: preparation, forward, sampling.
    pub fn pass_kernels(&self, prefill: bool) -> usize {
        2 + 3 + (0..self.layers).map(|l| self.layer(l, prefill).len()).sum::<usize>()
    }
}

/// xorshift64*: durations' noise, the same for a seed on every platform.
struct Noise(u64);

impl Noise {
    /// A number in [-1, 1).
    fn next(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        let x = self.0.wrapping_mul(0x2545_F491_4F6C_DD1D);
        (x >> 11) as f64 / (1u64 << 52) as f64 - 1.0
    }
}

struct Gen<'s, W: Write> {
    out: Counting<W>,
    spec: &'s ServingSpec,
    noise: Noise,
    first: bool,
    /// CPU and GPU clocks, µs.
    cpu: f64,
    gpu: f64,
    corr: u64,
    ext: u64,
}

fn quoted(s: &str) -> String {
    serde_json::to_string(s).expect("a string serialises")
}

impl<W: Write> Gen<'_, W> {
    fn event(&mut self, json: std::fmt::Arguments<'_>) -> std::io::Result<()> {
        if !std::mem::take(&mut self.first) {
            self.out.write_all(b",\n")?;
        }
        self.out.write_fmt(json)
    }

    fn launch(&mut self, name: &str, corr: u64, ext: Option<u64>) -> std::io::Result<()> {
        let ext = ext.map(|e| format!("\"External id\": {e}, ")).unwrap_or_default();
        let ts = self.cpu;
        self.cpu += 4.0;
        self.event(format_args!(
            "{{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"{name}\", \"pid\": 100, \"tid\": 100, \"ts\": {ts:.3}, \"dur\": 3.0, \"args\": {{{ext}\"correlation\": {corr}}}}}"
        ))
    }

    /// One kernel on every rank; `ext` for an eager launch, none for a graph node.
    fn kernel(&mut self, k: &K, scale: f64, corr: u64, ext: Option<u64>, graph: bool) -> std::io::Result<()> {
        let dur = (k.us * scale * (1.0 + self.spec.noise * self.noise.next())).max(0.5);
        let name = quoted(k.name);
        let kind = match (self.spec.flavor, graph) {
            (Flavor::Amd, true) => ", \"kind\": \"Dispatch Task\"",
            (Flavor::Amd, false) => ", \"kind\": \"Dispatch Kernel\"",
            (Flavor::Nvidia, _) => "",
        };
        let ext = ext.map(|e| format!("\"External id\": {e}, ")).unwrap_or_default();
        for rank in 0..self.spec.ranks.max(1) {
            let ts = self.gpu + rank as f64 * 1.3;
            let c = corr + rank as u64 * 1_000_000_000;
            self.event(format_args!(
                "{{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": {name}, \"pid\": {rank}, \"tid\": 7, \"ts\": {ts:.3}, \"dur\": {dur:.3}, \"args\": {{{ext}\"device\": {rank}, \"stream\": 7, \"correlation\": {c}{kind}}}}}"
            ))?;
        }
        self.gpu += dur + if graph { 0.4 } else { 6.0 };
        Ok(())
    }

    /// An eager kernel: its CPU op, launch call and kernel.
    fn eager(&mut self, k: &K, scale: f64) -> std::io::Result<()> {
        self.ext += 1;
        self.corr += 1;
        let (ext, corr, ts) = (self.ext, self.corr, self.cpu);
        self.event(format_args!(
            "{{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"{}\", \"pid\": 100, \"tid\": 100, \"ts\": {ts:.3}, \"dur\": 9.0, \"args\": {{\"External id\": {ext}}}}}",
            k.op
        ))?;
        self.cpu += 1.0;
        let launch = if self.spec.flavor == Flavor::Amd { "hipLaunchKernel" } else { "cudaLaunchKernel" };
        self.launch(launch, corr, Some(ext))?;
        self.cpu += 5.0;
        self.kernel(k, scale, corr, Some(ext), false)
    }

    fn step(&mut self, prefill: bool, index: usize) -> std::io::Result<()> {
        let spec = self.spec;
        let scale = if prefill { 12.0 } else { 1.0 };
        let cpu_start = self.cpu;
        self.gpu = self.gpu.max(self.cpu + 50.0);
        self.eager(&k(POSITIONS, "aten::add_", 3.0), 1.0)?;
        let mut forward = vec![k(GATHER, "aten::embedding", 6.0)];
        for l in 0..spec.layers {
            forward.extend(self.spec.layer(l, prefill));
        }
        forward.push(k(if spec.fused_add_norm { FUSED_ADD_NORM } else { NORM }, "_C::rms_norm", 6.0));
        forward.push(k(spec.names().lm_head, "aten::mm", 90.0));
        if prefill {
            for kernel in &forward {
                self.eager(kernel, scale)?;
            }
        } else {
            // One graph replay: one launch, one correlation id for all its kernels.
            self.corr += 1;
            let corr = self.corr;
            let launch = if spec.flavor == Flavor::Amd { "hipGraphLaunch" } else { "cudaGraphLaunch" };
            self.launch(launch, corr, None)?;
            self.gpu = self.gpu.max(self.cpu + 20.0);
            for kernel in &forward {
                self.kernel(kernel, scale, corr, None, true)?;
            }
        }
        self.eager(&k(ARGMAX, "aten::argmax", 8.0), 1.0)?;
        if spec.annotate {
            let tokens = if prefill { 512 } else { 8 };
            let (ctx, generation) = if prefill { (tokens, 0) } else { (0, tokens) };
            let name =
                format!("execute_{tokens}_context_{ctx}(sq{ctx})_generation_{generation}(sq{generation})_{index}");
            let dur = self.cpu - cpu_start + 2.0;
            self.event(format_args!(
                "{{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"{name}\", \"pid\": 100, \"tid\": 100, \"ts\": {:.3}, \"dur\": {dur:.3}}}",
                cpu_start - 1.0
            ))?;
        }
        self.gpu += spec.step_gap_us;
        self.cpu = self.cpu.max(self.gpu - 30.0);
        Ok(())
    }
}

/// Writes one serving trace; returns its size in bytes.
pub fn write_serving_trace<W: Write>(out: W, spec: &ServingSpec) -> std::io::Result<u64> {
    let mut g = Gen {
        out: Counting { inner: out, bytes: 0 },
        spec,
        noise: Noise(spec.seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1),
        first: true,
        cpu: 1.0e6,
        gpu: 1.0e6,
        corr: 0,
        ext: 0,
    };
    let (device, keys, warp) = match spec.flavor {
        Flavor::Nvidia => (
            "NVIDIA H100 80GB HBM3",
            "\"cupti_version\": 24, \"cuda_runtime_version\": 12040, \"cuda_driver_version\": 12090",
            32,
        ),
        Flavor::Amd => (
            "AMD Instinct MI300X",
            "\"roctracer_version\": 4.1, \"hip_runtime_version\": 60443483, \"hip_driver_version\": 60443483",
            64,
        ),
    };
    let devices: Vec<String> = (0..spec.ranks.max(1))
        .map(|r| format!("{{\"id\": {r}, \"name\": \"{device}\", \"warpSize\": {warp}}}"))
        .collect();
    write!(
        g.out,
        "{{\"schemaVersion\": 1, \"deviceProperties\": [{}], {keys},\n\"traceEvents\": [\n",
        devices.join(", ")
    )?;
    let mut index = 0;
    for _ in 0..spec.prefill_steps {
        g.step(true, index)?;
        index += 1;
    }
    for _ in 0..spec.decode_steps {
        g.step(false, index)?;
        index += 1;
    }
    write!(g.out, "\n], \"traceName\": \"synthetic serving\"}}\n")?;
    g.out.flush()?;
    Ok(g.out.bytes)
}

/// The [`ServingSpec::vendor_pair`] with `decode_steps` decode passes, each trace gzipped (fast
/// compression): the small pair the page's analysis worker reads as it starts, so that the code
/// of reading gzip, the analyses and the comparison is warm when a user's first file comes.
pub fn gzipped_vendor_pair(decode_steps: usize) -> std::io::Result<[Vec<u8>; 2]> {
    let (amd, nvidia) = ServingSpec::vendor_pair();
    let gzipped = |spec: ServingSpec| -> std::io::Result<Vec<u8>> {
        let spec = ServingSpec { decode_steps, ..spec };
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        write_serving_trace(&mut gz, &spec)?;
        gz.finish()
    };
    Ok([gzipped(amd)?, gzipped(nvidia)?])
}

#[cfg(test)]
mod tests {
    use super::*;
    use formats::read_trace;

    #[test]
    fn decode_passes_are_graph_replays() {
        let mut spec = ServingSpec::new(Flavor::Amd);
        spec.decode_steps = 2;
        let mut out = Vec::new();
        let bytes = write_serving_trace(&mut out, &spec).unwrap();
        assert_eq!(bytes, out.len() as u64);
        let t = read_trace(&out).unwrap();
        assert_eq!(t.kernels.len(), spec.pass_kernels(true) + 2 * spec.pass_kernels(false));
        let replayed: Vec<_> = t.kernels.iter().filter(|k| k.external_id.is_none()).collect();
        assert_eq!(replayed.len(), 2 * (spec.pass_kernels(false) - 2));
        assert!(replayed.iter().all(|k| k.graph_node && k.correlation.is_some()));
        let mut corrs: Vec<u64> = replayed.iter().filter_map(|k| k.correlation).collect();
        corrs.dedup();
        assert_eq!(corrs.len(), 2, "one correlation id per replay");
        assert!(t.kernels.windows(2).all(|w| w[0].ts + w[0].dur <= w[1].ts), "kernels in order, not overlapping");
    }

    #[test]
    fn the_gzipped_pair_is_the_vendor_pair_compressed() {
        let gzipped = gzipped_vendor_pair(2).unwrap();
        let (amd, nvidia) = ServingSpec::vendor_pair();
        for (gz, spec) in gzipped.iter().zip([amd, nvidia]) {
            let mut plain = Vec::new();
            write_serving_trace(&mut plain, &ServingSpec { decode_steps: 2, ..spec.clone() }).unwrap();
            let mut inflated = Vec::new();
            std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(&gz[..]), &mut inflated).unwrap();
            assert_eq!(inflated, plain);
            assert!(gz.len() * 5 < plain.len(), "compressed: {} of {} bytes", gz.len(), plain.len());
            let t = read_trace(&inflated).unwrap();
            assert_eq!(t.kernels.len(), spec.pass_kernels(true) + 2 * spec.pass_kernels(false));
        }
    }

    #[test]
    fn planted_layers_differ_as_asked() {
        let mut spec = ServingSpec::new(Flavor::Nvidia);
        assert_eq!(spec.decode_layer().len(), 10);
        spec.attention_kernels = 3;
        spec.split_k = true;
        spec.fused_add_norm = false;
        spec.fused_silu_mul = false;
        assert_eq!(spec.decode_layer().len(), 10 + 2 + 1 + 2 + 1);
        assert_eq!(spec.prefill_layer().len(), 10 + 2 + 1);
    }
}
