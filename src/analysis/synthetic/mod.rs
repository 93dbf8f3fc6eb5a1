//! Synthetic Kineto traces for benchmarks and tests: realistic in shape and size, without
//! shipping gigabytes of real traces.
//!
//! The traces mimic eager PyTorch inference of a transformer: per layer ~20 CPU ops with
//! Python frames, runtime launch calls with correlation ids, flow events and kernels with long
//! templated names; every 8th layer is a graph replay (kernels without External id, one
//! correlation id). The NVIDIA side runs the RMSNorm as one fused Triton kernel, the AMD side
//! as five eager kernels, so a comparison of the two has fusion differences to find.
//!
//! Writes to any [`std::io::Write`] (a file natively, a buffer in tests), so the module stays
//! free of file-system code.

pub mod serving;

use std::io::Write;

/// Which vendor's trace to imitate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flavor {
    Nvidia,
    Amd,
}

/// One op of a layer: name, input dims text, kernel names per flavor (several = several
/// kernels), python frame.
struct OpSpec {
    op: &'static str,
    dims: &'static str,
    frame: &'static str,
}

const ELEMENTWISE_NV: &str = "void at::native::elementwise_kernel<128, 4, at::native::gpu_kernel_impl_nocast<at::native::BinaryFunctor<c10::BFloat16, c10::BFloat16, c10::BFloat16, at::native::binary_internal::MulFunctor<float> > >(at::TensorIteratorBase&, at::native::BinaryFunctor<c10::BFloat16, c10::BFloat16, c10::BFloat16, at::native::binary_internal::MulFunctor<float> > const&)::{lambda(int)#1}>(int, at::native::gpu_kernel_impl_nocast<at::native::BinaryFunctor<c10::BFloat16, c10::BFloat16, c10::BFloat16, at::native::binary_internal::MulFunctor<float> > >(at::TensorIteratorBase&, at::native::BinaryFunctor<c10::BFloat16, c10::BFloat16, c10::BFloat16, at::native::binary_internal::MulFunctor<float> > const&)::{lambda(int)#1})";
const ELEMENTWISE_AMD: &str = "void at::native::elementwise_kernel_manual_unroll<128, 8, at::native::gpu_kernel_impl_nocast<at::native::BinaryFunctor<c10::BFloat16, c10::BFloat16, c10::BFloat16, at::native::binary_internal::MulFunctor<float> > >(at::TensorIteratorBase&, at::native::BinaryFunctor<c10::BFloat16, c10::BFloat16, c10::BFloat16, at::native::binary_internal::MulFunctor<float> > const&)::{lambda(int)#1}>(int, at::native::gpu_kernel_impl_nocast<at::native::BinaryFunctor<c10::BFloat16, c10::BFloat16, c10::BFloat16, at::native::binary_internal::MulFunctor<float> > >(at::TensorIteratorBase&, at::native::BinaryFunctor<c10::BFloat16, c10::BFloat16, c10::BFloat16, at::native::binary_internal::MulFunctor<float> > const&)::{lambda(int)#1})";
const REDUCE: &str = "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::MeanOps<float, float, float, float>, unsigned int, c10::BFloat16, 4, 4> >(at::native::ReduceOp<float, at::native::MeanOps<float, float, float, float>, unsigned int, c10::BFloat16, 4, 4>)";
const POW: &str = "void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous namespace)::pow_tensor_scalar_kernel_impl<float, float>(at::TensorIteratorBase&, float)::{lambda(float)#1}, std::array<char*, 2ul> >(int, at::native::(anonymous namespace)::pow_tensor_scalar_kernel_impl<float, float>(at::TensorIteratorBase&, float)::{lambda(float)#1}, std::array<char*, 2ul>)";
const RSQRT: &str = "void at::native::vectorized_elementwise_kernel<4, at::native::rsqrt_kernel_cuda(at::TensorIteratorBase&)::{lambda()#2}::operator()() const::{lambda()#2}::operator()() const::{lambda(float)#1}, std::array<char*, 2ul> >(int, at::native::rsqrt_kernel_cuda(at::TensorIteratorBase&)::{lambda()#2}::operator()() const::{lambda()#2}::operator()() const::{lambda(float)#1}, std::array<char*, 2ul>)";
const GEMM_NV: [&str; 3] = [
    "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas",
    "nvjet_tst_128x256_64x4_1x2_h_bz_coopA_NNT",
    "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize64x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas",
];
const GEMM_AMD: [&str; 3] = [
    "Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT256x128x64_MI16x16x1_SN_LDSB1_AFC1_AFEM1_AFEM1_ASEM1_CLR1_CADS0_DTVA0_DTVB0_EPS0_FDSI0_GRPM1_GRVWA8_GRVWB8_GSUAMB_GLS0_ISA942_IU1_K1_LBSPPA2048_LBSPPB256_LBSPPM0_LPA16_LPB16_LPM0_LRVW8_LWPMn1_MIAV1_MIWT4_4_MO40_NTn1_NTA0_NTB0_NTC0_NTD0_NTM0_NEPBS16_NLCA1_NLCB1_ONLL1_PGR2_PLR1_PKA1_SIA3_SS1_SPO0_SRVW0_SSO0_SVW1_SK0_SKFTR0_SKXCCM0_TLDS1_ULSGRO0_USL1_UIOFGRO0_USFGROn1_VSn1_VWA1_VWB1_WSGRA0_WSGRB0_WS64_WG64_4_1",
    "Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT128x224x64_MI16x16x1_SN_LDSB1_AFC1_AFEM1_AFEM1_ASEM1_CLR1_CADS0_DTVA0_DTVB0_EPS0_FDSI0_GRPM1_GRVWA8_GRVWB8_GSUAMB_GLS0_ISA942_IU1_K1_LBSPPA2048_LBSPPB256_LBSPPM0_LPA16_LPB16_LPM0_LRVW8_LWPMn1_MIAV1_MIWT4_4_MO40_NTn1_NTA0_NTB0_NTC0_NTD0_NTM0_NEPBS16_NLCA1_NLCB1_ONLL1_PGR2_PLR1_PKA1_SIA3_SS1_SPO0_SRVW0_SSO0_SVW1_SK0_SKFTR0_SKXCCM0_TLDS1_ULSGRO0_USL1_UIOFGRO0_USFGROn1_VSn1_VWA1_VWB1_WSGRA0_WSGRB0_WS64_WG64_4_1",
    "Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT64x64x128_MI16x16x1_SN_LDSB1_AFC1_AFEM1_AFEM1_ASEM1_CLR1_CADS0_DTVA0_DTVB0_EPS0_FDSI0_GRPM1_GRVWA8_GRVWB8_GSUAMB_GLS0_ISA942_IU1_K1_LBSPPA2048_LBSPPB256_LBSPPM0_LPA16_LPB16_LPM0_LRVW8_LWPMn1_MIAV1_MIWT4_4_MO40_NTn1_NTA0_NTB0_NTC0_NTD0_NTM0_NEPBS16_NLCA1_NLCB1_ONLL1_PGR2_PLR1_PKA1_SIA3_SS1_SPO0_SRVW0_SSO0_SVW1_SK0_SKFTR0_SKXCCM0_TLDS1_ULSGRO0_USL1_UIOFGRO0_USFGROn1_VSn1_VWA1_VWB1_WSGRA0_WSGRB0_WS64_WG64_4_1",
];
const ATTN_NV: &str = "void pytorch_flash::flash_fwd_kernel<pytorch_flash::Flash_fwd_kernel_traits<64, 128, 128, 4, false, false, cutlass::bfloat16_t, pytorch_flash::Flash_kernel_traits<64, 128, 128, 4, cutlass::bfloat16_t> >, false, true, false, false, true, true, false, false>(pytorch_flash::Flash_fwd_params)";
const ATTN_AMD: &str = "attn_fwd";
const SILU: &str = "void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous namespace)::silu_kernel(at::TensorIteratorBase&)::{lambda()#1}::operator()() const::{lambda()#4}::operator()() const::{lambda(c10::BFloat16)#1}, std::array<char*, 2ul> >(int, at::native::(anonymous namespace)::silu_kernel(at::TensorIteratorBase&)::{lambda()#1}::operator()() const::{lambda()#4}::operator()() const::{lambda(c10::BFloat16)#1}, std::array<char*, 2ul>)";
const FUSED_NORM: &str = "triton_red_fused__to_copy_add_mean_mul_pow_rsqrt_0";

const OPS: [OpSpec; 4] = [
    OpSpec {
        op: "aten::mm",
        dims: "[[1, 1024, 1024], [1024, 3072]]",
        frame: "torch/nn/modules/linear.py(125): forward",
    },
    OpSpec {
        op: "aten::_flash_attention_forward",
        dims: "[[1, 16, 1024, 64], [1, 16, 1024, 64], [1, 16, 1024, 64]]",
        frame: "transformers/models/qwen2/modeling_qwen2.py(242): forward",
    },
    OpSpec { op: "aten::silu", dims: "[[1, 1024, 2816]]", frame: "transformers/activations.py(56): forward" },
    OpSpec {
        op: "aten::mul",
        dims: "[[1, 1024, 2816], [1, 1024, 2816]]",
        frame: "transformers/models/qwen2/modeling_qwen2.py(83): forward",
    },
];

struct Gen<W: Write> {
    out: W,
    flavor: Flavor,
    ts: f64,
    ext: u64,
    corr: u64,
    py: u64,
    first: bool,
}

impl<W: Write> Gen<W> {
    fn sep(&mut self) -> std::io::Result<()> {
        if self.first {
            self.first = false;
            Ok(())
        } else {
            self.out.write_all(b",\n")
        }
    }

    fn python(&mut self, frame: &str, n: usize) -> std::io::Result<()> {
        for i in 0..n {
            self.sep()?;
            self.py += 1;
            write!(
                self.out,
                "  {{\n    \"ph\": \"X\", \"cat\": \"python_function\", \"name\": \"{frame}\", \"pid\": 1234, \"tid\": 1234,\n    \"ts\": {:.3}, \"dur\": {:.3},\n    \"args\": {{\n      \"Python parent id\": {}, \"Python id\": {}, \"Ev Idx\": {}\n    }}\n  }}",
                self.ts + i as f64 * 0.1,
                20.0 - i as f64,
                self.py.saturating_sub(1),
                self.py,
                self.py * 3
            )?;
        }
        Ok(())
    }

    /// One op: Python frames, the cpu_op, a launch call and its kernel(s) with flow events.
    fn op(&mut self, op: &str, dims: &str, frame: &str, kernels: &[&str], graph: bool) -> std::io::Result<()> {
        self.python(frame, 3)?;
        self.ext += 1;
        let ext = self.ext;
        if !graph {
            self.sep()?;
            write!(
                self.out,
                "  {{\n    \"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"{op}\", \"pid\": 1234, \"tid\": 1234,\n    \"ts\": {:.3}, \"dur\": 12.345,\n    \"args\": {{\n      \"External id\": {ext},\"Record function id\": 0, \"Ev Idx\": {}, \"Input Dims\": {dims}, \"Input type\": [\"c10::BFloat16\", \"c10::BFloat16\"], \"Input Strides\": [[3145728, 3072, 1], [3072, 1]], \"Concrete Inputs\": [\"\", \"\"]\n    }}\n  }}",
                self.ts + 0.5,
                ext * 4
            )?;
        }
        for (i, k) in kernels.iter().enumerate() {
            if !graph {
                self.corr += 1;
            }
            let corr = self.corr;
            let launch = match (self.flavor, k.starts_with("Cijk")) {
                (Flavor::Nvidia, _) => "cudaLaunchKernel",
                (Flavor::Amd, true) => "hipExtModuleLaunchKernel",
                (Flavor::Amd, false) => "hipLaunchKernel",
            };
            let kts = self.ts + 30.0 + i as f64 * 5.0;
            let dur = 3.0 + (k.len() % 17) as f64;
            if !graph {
                self.sep()?;
                write!(
                    self.out,
                    "  {{\n    \"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"{launch}\", \"pid\": 1234, \"tid\": 1234,\n    \"ts\": {:.3}, \"dur\": 4.210,\n    \"args\": {{\n      \"External id\": {ext}, \"cbid\": 211, \"correlation\": {corr}\n    }}\n  }}",
                    self.ts + 1.0 + i as f64
                )?;
                self.sep()?;
                write!(self.out, "  {{\n    \"ph\": \"s\", \"id\": {corr}, \"pid\": 1234, \"tid\": 1234, \"ts\": {:.3},\n    \"cat\": \"ac2g\", \"name\": \"ac2g\"\n  }}", self.ts + 1.0)?;
            }
            self.sep()?;
            let ext_arg = if graph { String::new() } else { format!("\"External id\": {ext}, ") };
            let extra = match self.flavor {
                Flavor::Nvidia => ", \"queued\": 0, \"context\": 1, \"registers per thread\": 32, \"shared memory\": 0, \"blocks per SM\": 0.5, \"warps per SM\": 2.0, \"est. achieved occupancy %\": 3",
                Flavor::Amd if graph => ", \"kind\": \"Dispatch Task\"",
                Flavor::Amd => ", \"kind\": \"Dispatch Kernel\"",
            };
            write!(
                self.out,
                "  {{\n    \"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"{k}\", \"pid\": 0, \"tid\": 7,\n    \"ts\": {kts:.3}, \"dur\": {dur:.3},\n    \"args\": {{\n      {ext_arg}\"device\": 0, \"stream\": 7, \"correlation\": {corr}, \"grid\": [132, 1, 1], \"block\": [256, 1, 1]{extra}\n    }}\n  }}"
            )?;
            self.sep()?;
            write!(self.out, "  {{\n    \"ph\": \"f\", \"id\": {corr}, \"pid\": 0, \"tid\": 7, \"ts\": {kts:.3},\n    \"cat\": \"ac2g\", \"name\": \"ac2g\", \"bp\": \"e\"\n  }}")?;
        }
        self.ts += 40.0 + kernels.len() as f64 * 5.0;
        Ok(())
    }

    fn layer(&mut self, l: usize) -> std::io::Result<()> {
        let graph = l % 8 == 7;
        if graph {
            self.corr += 1; // one correlation id for the whole replay
        }
        let nv = self.flavor == Flavor::Nvidia;
        let frame = "transformers/models/qwen2/modeling_qwen2.py(62): forward";
        if nv {
            self.op("aten::add", "[[1, 1024, 1024], [1, 1024, 1024]]", frame, &[FUSED_NORM], graph)?;
        } else {
            for (op, k) in [
                ("aten::add", ELEMENTWISE_AMD),
                ("aten::pow", POW),
                ("aten::mean", REDUCE),
                ("aten::rsqrt", RSQRT),
                ("aten::mul", ELEMENTWISE_AMD),
            ] {
                self.op(op, "[[1, 1024, 1024], []]", frame, &[k], graph)?;
            }
        }
        let gemm = if nv { GEMM_NV } else { GEMM_AMD };
        for (i, spec) in OPS.iter().enumerate() {
            let kernel = match i {
                0 => gemm[l % 3],
                1 if nv => ATTN_NV,
                1 => ATTN_AMD,
                2 => SILU,
                _ if nv => ELEMENTWISE_NV,
                _ => ELEMENTWISE_AMD,
            };
            self.op(spec.op, spec.dims, spec.frame, &[kernel], graph)?;
        }
        Ok(())
    }
}

/// Counts the bytes written through it, so the generator can stop at a target size.
pub(crate) struct Counting<W: Write> {
    pub(crate) inner: W,
    pub(crate) bytes: u64,
}

impl<W: Write> Write for Counting<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.bytes += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// How long a trace to write: a number of layers, or as many layers as make at least this
/// many bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Length {
    Layers(usize),
    AtLeastBytes(u64),
}

/// Writes one synthetic trace; returns its size in bytes and its number of layers (give the
/// same layer count to the other flavor to get the same workload).
pub fn write_trace<W: Write>(out: W, flavor: Flavor, length: Length) -> std::io::Result<(u64, usize)> {
    let mut g = Gen { out: Counting { inner: out, bytes: 0 }, flavor, ts: 1.7e12, ext: 0, corr: 0, py: 0, first: true };
    let (name, keys) = match flavor {
        Flavor::Nvidia => (
            "NVIDIA H100 80GB HBM3",
            "\"cupti_version\": 24, \"cuda_runtime_version\": 12040, \"cuda_driver_version\": 12090",
        ),
        Flavor::Amd => (
            "AMD Instinct MI300X",
            "\"roctracer_version\": 4.1, \"hip_runtime_version\": 60443483, \"hip_driver_version\": 60443483",
        ),
    };
    let warp = if flavor == Flavor::Nvidia { 32 } else { 64 };
    write!(g.out, "{{\n  \"schemaVersion\": 1,\n  \"deviceProperties\": [\n    {{\n      \"id\": 0, \"name\": \"{name}\", \"totalGlobalMem\": 85045379072,\n      \"computeMajor\": 9, \"computeMinor\": 0,\n      \"warpSize\": {warp}, \"numSms\": 132\n    }}\n  ],\n  {keys},\n  \"traceEvents\": [\n")?;
    let mut l = 0;
    let more = |l: usize, bytes: u64| match length {
        Length::Layers(n) => l < n,
        Length::AtLeastBytes(b) => bytes < b,
    };
    while more(l, g.out.bytes) {
        g.layer(l)?;
        l += 1;
    }
    write!(g.out, "\n  ],\n  \"traceName\": \"synthetic\"\n}}\n")?;
    g.out.flush()?;
    Ok((g.out.bytes, l))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{compare, Input};
    use formats::read_trace;
    use trace::Vendor;

    /// A small pair reads back with the right vendors and kernel counts, and the comparison
    /// finds the fused RMSNorm the generator put on the NVIDIA side.
    #[test]
    fn synthetic_pair_reads_and_compares() {
        let (mut nv, mut amd) = (Vec::new(), Vec::new());
        let (_, layers) = write_trace(&mut nv, Flavor::Nvidia, Length::Layers(16)).unwrap();
        write_trace(&mut amd, Flavor::Amd, Length::Layers(layers)).unwrap();
        let (a, b) = (read_trace(&nv).unwrap(), read_trace(&amd).unwrap());
        // Per layer: NVIDIA 1 fused norm + 4 ops, AMD 5 norm kernels + 4 ops.
        assert_eq!(a.kernels.len(), 16 * 5);
        assert_eq!(b.kernels.len(), 16 * 9);
        let c = compare(Input::new(&a, None), Input::new(&b, None));
        assert_eq!(c.platforms.iter().map(|p| p.vendor).collect::<Vec<_>>(), vec![Vendor::Amd, Vendor::Nvidia]);
        assert!(
            c.fusion_differences.iter().any(|d| d.fused_kernel.starts_with("triton_red_fused")),
            "{:?}",
            c.fusion_differences
        );
    }

    #[test]
    fn stops_at_the_requested_size() {
        let mut out = Vec::new();
        let (bytes, layers) = write_trace(&mut out, Flavor::Amd, Length::AtLeastBytes(200_000)).unwrap();
        assert_eq!(bytes, out.len() as u64);
        assert!(bytes >= 200_000 && layers > 1);
    }
}
