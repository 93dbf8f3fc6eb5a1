//! Trace-reader and comparison benchmark on large synthetic Kineto traces.
//!
//! ```text
//! cargo run --release --example trace_bench -- [SIZE_MB] [DIR]
//! ```
//! Writes an NVIDIA-like and an AMD-like trace of about SIZE_MB megabytes each (default 1100,
//! i.e. over 1 GB) into DIR (default /tmp), then reports for reading one and for the full
//! comparison (reading both + compare): time, MB/s (1 MB = 10^6 bytes of JSON text) and peak
//! resident memory (VmHWM, reset before each phase through /proc/self/clear_refs).
//!
//! The traces mimic eager PyTorch inference of a transformer: per layer ~20 CPU ops with
//! Python frames, runtime launch calls with correlation ids, flow events and kernels with long
//! templated names; every 8th layer is a graph replay (kernels without External id, one
//! correlation id). The NVIDIA side runs the RMSNorm as one fused Triton kernel, the AMD side
//! as five eager kernels, so the comparison has fusion differences to find.

use std::fs::File;
use std::io::{BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use fusionscope::trace::{classify, compare, Input, Trace, TraceReader};

#[derive(Clone, Copy, PartialEq)]
enum Flavor {
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

/// Writes a trace of `layers` layers, or if `None` of as many layers as make at least `size`
/// bytes; returns its size and layer count.
fn generate(path: &Path, flavor: Flavor, size: u64, layers: Option<usize>) -> std::io::Result<(u64, usize)> {
    let file = File::create(path)?;
    let mut g =
        Gen { out: BufWriter::with_capacity(1 << 20, file), flavor, ts: 1.7e12, ext: 0, corr: 0, py: 0, first: true };
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
    let mut written = 0u64;
    // Check the size every 64 layers (the writer does not know its byte count).
    while layers.map_or(written < size, |n| l < n) {
        for _ in 0..layers.map_or(64, |n| (n - l).min(64)) {
            g.layer(l)?;
            l += 1;
        }
        g.out.flush()?;
        written = g.out.get_ref().metadata()?.len();
    }
    write!(g.out, "\n  ],\n  \"traceName\": \"synthetic\"\n}}\n")?;
    g.out.flush()?;
    Ok((g.out.get_ref().metadata()?.len(), l))
}

/// Peak resident memory of this process, bytes (Linux).
fn vm_hwm() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse::<u64>().ok().map(|kb| kb * 1024)
}

/// Resets the peak so that the next phase's VmHWM is its own.
fn reset_hwm() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

fn read(path: &Path) -> Trace {
    let mut file = File::open(path).expect("open trace");
    let mut reader = TraceReader::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = file.read(&mut buf).expect("read trace");
        if n == 0 {
            break;
        }
        reader.feed(&buf[..n]).expect("valid trace");
    }
    reader.finish().expect("valid trace")
}

fn mb(bytes: u64) -> f64 {
    bytes as f64 / 1e6
}

fn main() {
    let mut args = std::env::args().skip(1);
    let size_mb: u64 = args.next().map(|s| s.parse().expect("SIZE_MB is a number")).unwrap_or(1100);
    let dir = PathBuf::from(args.next().unwrap_or_else(|| "/tmp".to_string()));
    let nv_path = dir.join("fusionscope_bench_nvidia.json");
    let amd_path = dir.join("fusionscope_bench_amd.json");
    let t = Instant::now();
    // The same workload on both sides: as many layers on AMD as make the NVIDIA file large enough.
    let (nv_size, layers) =
        generate(&nv_path, Flavor::Nvidia, size_mb * 1_000_000, None).expect("write the NVIDIA trace");
    let (amd_size, _) = generate(&amd_path, Flavor::Amd, 0, Some(layers)).expect("write the AMD trace");
    println!(
        "generated {} ({:.0} MB) and {} ({:.0} MB) in {:.1} s",
        nv_path.display(),
        mb(nv_size),
        amd_path.display(),
        mb(amd_size),
        t.elapsed().as_secs_f64()
    );

    reset_hwm();
    let base = vm_hwm().unwrap_or(0);
    let t = Instant::now();
    let trace = read(&nv_path);
    let secs = t.elapsed().as_secs_f64();
    let peak = vm_hwm().unwrap_or(0);
    println!(
        "read:    {:.0} MB in {:.2} s = {:.0} MB/s; {} events, {} kernels kept; peak RSS {:.1} MB ({:.3}× the file; {:.1} MB before), trace data ~{:.1} MB",
        mb(nv_size),
        secs,
        mb(nv_size) / secs,
        trace.event_count,
        trace.kernels.len(),
        mb(peak),
        peak as f64 / nv_size as f64,
        mb(base),
        mb(trace.heap_bytes() as u64)
    );
    drop(trace);

    reset_hwm();
    let t = Instant::now();
    let a = read(&nv_path);
    let b = read(&amd_path);
    let read_secs = t.elapsed().as_secs_f64();
    let c = compare(Input { trace: &a, file: Some("nvidia") }, Input { trace: &b, file: Some("amd") }, &classify);
    let secs = t.elapsed().as_secs_f64();
    let peak = vm_hwm().unwrap_or(0);
    let total = nv_size + amd_size;
    println!(
        "compare: {:.0} MB (both files) in {:.2} s ({:.2} s reading, {:.2} s comparing) = {:.0} MB/s; {} mapping rows, {} fusion differences; peak RSS {:.1} MB ({:.3}× one file)",
        mb(total),
        secs,
        read_secs,
        secs - read_secs,
        mb(total) / secs,
        c.op_mapping.len(),
        c.fusion_differences.len(),
        mb(peak),
        peak as f64 / nv_size as f64
    );
    for d in c.fusion_differences.iter().take(3) {
        println!(
            "  fusion: {} {} ×{} vs {:?} ({})",
            d.fused_platform,
            d.fused_kernel,
            d.count,
            d.unfused_kernels.len(),
            d.evidence
        );
    }
}
