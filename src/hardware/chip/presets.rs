//! The built-in chips: the TPU configs shipped with the crate and the GPU presets, each from its
//! vendor's datasheet; looked up by a forgiving name (`"H100"`, `"tpu-v5p"`).

use super::{parse_chip, Chip, ChipError, GPU_LAUNCH_OVERHEAD_US};
use crate::peaks::{PeakKey, Peaks, Precision, Unit};

/// The TPU chip files shipped with the crate (NeuSim configs, Apache-2.0).
const TPU_FILES: [(&str, &str); 7] = [
    ("tpuv2", include_str!("../../../tests/data/models/chips/tpuv2.json")),
    ("tpuv3", include_str!("../../../tests/data/models/chips/tpuv3.json")),
    ("tpuv4", include_str!("../../../tests/data/models/chips/tpuv4.json")),
    ("tpuv5e", include_str!("../../../tests/data/models/chips/tpuv5e.json")),
    ("tpuv5p", include_str!("../../../tests/data/models/chips/tpuv5p.json")),
    ("tpuv6e", include_str!("../../../tests/data/models/chips/tpuv6e.json")),
    ("tpuv6p", include_str!("../../../tests/data/models/chips/tpuv6p.json")),
];

/// A GPU preset: dense (no structured sparsity) bf16 tensor-core peak, HBM bandwidth, and the
/// peaks per unit and type the same datasheet gives.
struct GpuPreset {
    key: &'static str,
    name: &'static str,
    tflops: f64,
    tb_per_s: f64,
    /// TFLOP/s, dense.
    peaks: &'static [(PeakKey, f64)],
    source: &'static str,
}

const fn m(precision: Precision) -> PeakKey {
    PeakKey::new(Unit::Matrix, precision)
}

const fn v(precision: Precision) -> PeakKey {
    PeakKey::new(Unit::Vector, precision)
}

use Precision::{Bf16, Fp16, Fp32, Fp64, Fp8, Tf32};

/// H100 SXM and H200 SXM: the same compute (their datasheets list the same peaks).
const HOPPER_SXM_PEAKS: &[(PeakKey, f64)] = &[
    (m(Fp8), 1978.9),
    (m(Bf16), 989.4),
    (m(Fp16), 989.4),
    (m(Tf32), 494.7),
    (m(Fp64), 67.0),
    (v(Fp32), 67.0),
    (v(Fp64), 34.0),
];

/// MI300X and MI325X: the same compute (their datasheets list the same peaks).
const MI300_PEAKS: &[(PeakKey, f64)] = &[
    (m(Fp8), 2614.9),
    (m(Bf16), 1307.4),
    (m(Fp16), 1307.4),
    (m(Tf32), 653.7),
    (m(Fp32), 163.4),
    (m(Fp64), 163.4),
    (v(Fp32), 163.4),
    (v(Fp64), 81.7),
];

/// GPU presets, each from its vendor datasheet (the entry's `source` names it). NVIDIA lists
/// tensor-core peaks with 2:4 sparsity; the dense figure is half of it. AMD lists dense peaks.
/// Vector bf16/fp16 rates are not on these datasheets; PyTorch's elementwise kernels compute in
/// fp32 anyway, so those rows use the fp32 vector peak ([`Peaks::lookup`]).
const GPUS: [GpuPreset; 15] = [
    GpuPreset {
        key: "a100",
        name: "A100 SXM 80GB",
        tflops: 312.0,
        tb_per_s: 2.039,
        peaks: &[
            (m(Bf16), 312.0),
            (m(Fp16), 312.0),
            (m(Tf32), 156.0),
            (m(Fp64), 19.5),
            (v(Fp32), 19.5),
            (v(Fp64), 9.7),
        ],
        source: "NVIDIA A100 Tensor Core GPU datasheet (80GB SXM): BF16/FP16 312, TF32 156, FP64 tensor 19.5, \
                 FP32 19.5, FP64 9.7 TFLOPS dense; 2,039 GB/s",
    },
    GpuPreset {
        key: "h100",
        name: "H100 SXM",
        tflops: 989.4,
        tb_per_s: 3.35,
        peaks: HOPPER_SXM_PEAKS,
        source: "NVIDIA H100 Tensor Core GPU datasheet (SXM): FP8 3,958 / BF16 1,979 / TF32 989 TFLOPS sparse \
                 (half dense), FP64 tensor 67, FP32 67, FP64 34 TFLOPS; 3.35 TB/s",
    },
    GpuPreset {
        key: "h100pcie",
        name: "H100 PCIe",
        tflops: 756.5,
        tb_per_s: 2.0,
        peaks: &[
            (m(Fp8), 1513.0),
            (m(Bf16), 756.5),
            (m(Fp16), 756.5),
            (m(Tf32), 378.0),
            (m(Fp64), 51.0),
            (v(Fp32), 51.0),
            (v(Fp64), 26.0),
        ],
        source: "NVIDIA H100 Tensor Core GPU datasheet (PCIe): FP8 3,026 / BF16 1,513 / TF32 756 TFLOPS sparse \
                 (half dense), FP64 tensor 51, FP32 51, FP64 26 TFLOPS; 2 TB/s",
    },
    GpuPreset {
        key: "h100nvl",
        name: "H100 NVL",
        tflops: 835.5,
        tb_per_s: 3.9,
        peaks: &[
            (m(Fp8), 1670.5),
            (m(Bf16), 835.5),
            (m(Fp16), 835.5),
            (m(Tf32), 417.5),
            (m(Fp64), 60.0),
            (v(Fp32), 60.0),
            (v(Fp64), 30.0),
        ],
        source: "NVIDIA H100 Tensor Core GPU datasheet (NVL): FP8 3,341 / BF16 1,671 / TF32 835 TFLOPS sparse \
                 (half dense), FP64 tensor 60, FP32 60, FP64 30 TFLOPS; 3.9 TB/s",
    },
    GpuPreset {
        key: "h200",
        name: "H200 SXM",
        tflops: 989.4,
        tb_per_s: 4.8,
        peaks: HOPPER_SXM_PEAKS,
        source: "NVIDIA H200 Tensor Core GPU datasheet (SXM): FP8 3,958 / BF16 1,979 / TF32 989 TFLOPS sparse \
                 (half dense), FP64 tensor 67, FP32 67, FP64 34 TFLOPS; 4.8 TB/s",
    },
    GpuPreset {
        key: "b200",
        name: "B200",
        tflops: 2250.0,
        tb_per_s: 8.0,
        peaks: &[
            (m(Fp8), 4500.0),
            (m(Bf16), 2250.0),
            (m(Fp16), 2250.0),
            (m(Tf32), 1100.0),
            (m(Fp64), 37.0),
            (v(Fp64), 37.0),
        ],
        source: "NVIDIA HGX B200 datasheet, per GPU: FP8 9 / BF16 4.5 / TF32 2.2 PFLOPS sparse (half dense), \
                 FP64 37 TFLOPS; 8 TB/s",
    },
    GpuPreset {
        key: "mi250x",
        name: "MI250X",
        tflops: 383.0,
        tb_per_s: 3.2768,
        peaks: &[
            (m(Bf16), 383.0),
            (m(Fp16), 383.0),
            (m(Fp32), 95.7),
            (m(Fp64), 95.7),
            (v(Fp32), 47.9),
            (v(Fp64), 47.9),
        ],
        source: "AMD Instinct MI250X datasheet: FP16/BF16 383, FP32/FP64 matrix 95.7, FP32/FP64 vector 47.9 TFLOPS; \
                 3.2 TB/s (3,276.8 GB/s)",
    },
    GpuPreset {
        key: "mi300x",
        name: "MI300X",
        tflops: 1307.4,
        tb_per_s: 5.3,
        peaks: MI300_PEAKS,
        source: "AMD Instinct MI300X datasheet: FP8 2,614.9, BF16/FP16 1,307.4, TF32 653.7, FP32/FP64 matrix \
                 163.4, FP32 vector 163.4, FP64 vector 81.7 TFLOPS; 5.3 TB/s",
    },
    GpuPreset {
        key: "mi325x",
        name: "MI325X",
        tflops: 1307.4,
        tb_per_s: 6.0,
        peaks: MI300_PEAKS,
        source: "AMD Instinct MI325X datasheet: FP8 2,614.9, BF16/FP16 1,307.4, TF32 653.7, FP32/FP64 matrix \
                 163.4, FP32 vector 163.4, FP64 vector 81.7 TFLOPS; 6 TB/s",
    },
    // Checked against the A100 datasheet's figures as glennklockwood.com's A100 page
    // and TechPowerUp's A100 SXM4 40 GB page list them: FP64 9.7 / tensor 19.5, FP32 19.5, TF32 156,
    // FP16/BF16 312 TFLOPS dense, 1,555 GB/s.
    GpuPreset {
        key: "a10040gb",
        name: "A100 40GB",
        tflops: 312.0,
        tb_per_s: 1.555,
        peaks: &[
            (m(Bf16), 312.0),
            (m(Fp16), 312.0),
            (m(Tf32), 156.0),
            (m(Fp64), 19.5),
            (v(Fp32), 19.5),
            (v(Fp64), 9.7),
        ],
        source: "NVIDIA A100 Tensor Core GPU datasheet (40GB, PCIe and SXM alike): BF16/FP16 312, TF32 156, FP64 \
                 tensor 19.5, FP32 19.5, FP64 9.7 TFLOPS dense; 1,555 GB/s",
    },
    // Checked: the H800 is the H100 SXM's GH100 with FP64 cut to 1 TFLOPS (aiwiki.ai's H800 page); the
    // dense tensor figures are the H100 SXM's (glennklockwood.com's H100 page: TF32 494.7, FP16/BF16
    // 989.4, FP8 1,978.9, FP32 66.9 TFLOPS; 3.35 TB/s).
    GpuPreset {
        key: "h800",
        name: "H800 SXM",
        tflops: 989.4,
        tb_per_s: 3.35,
        peaks: &[
            (m(Fp8), 1978.9),
            (m(Bf16), 989.4),
            (m(Fp16), 989.4),
            (m(Tf32), 494.7),
            (m(Fp64), 1.0),
            (v(Fp32), 67.0),
            (v(Fp64), 1.0),
        ],
        source: "NVIDIA H800 Tensor Core GPU datasheet (SXM): FP8 3,958 / BF16 1,979 / TF32 989 TFLOPS sparse \
                 (half dense), FP64 and FP64 tensor 1, FP32 67 TFLOPS; 3.35 TB/s",
    },
    // Checked: 125 tensor TFLOPS (NVIDIA's "Programming Tensor Cores in CUDA 9" page), 900 GB/s; FP32 15.7
    // and FP64 7.8 are the SXM2 datasheet's at its 1,530 MHz boost (announcement-time pages give 15 and
    // 7.5 at 1,455 MHz).
    GpuPreset {
        key: "v100",
        name: "V100 SXM2",
        tflops: 125.0,
        tb_per_s: 0.9,
        peaks: &[(m(Fp16), 125.0), (v(Fp32), 15.7), (v(Fp64), 7.8)],
        source: "NVIDIA Tesla V100 datasheet (SXM2): tensor (FP16) 125, FP32 15.7, FP64 7.8 TFLOPS; 900 GB/s. \
                 No bf16: the FP16 tensor peak stands in for the matrix peak",
    },
    // Checked: waredb.com's RTX 4090 page: FP16/BF16 tensor 165.15 TFLOPS dense (330.3 sparse), FP32
    // 82.58 TFLOPS, 1,008 GB/s.
    GpuPreset {
        key: "rtx4090",
        name: "RTX 4090",
        tflops: 165.2,
        tb_per_s: 1.008,
        peaks: &[(m(Bf16), 165.2), (m(Fp16), 165.2), (v(Fp32), 82.6)],
        source: "NVIDIA Ada Lovelace architecture whitepaper (GeForce RTX 4090): FP16/BF16 tensor with FP32 \
                 accumulate 165.2 TFLOPS dense, FP32 82.6 TFLOPS; 1,008 GB/s",
    },
    // Checked: 8 TB/s (every MI350-series page); FP16 4.61 PFLOPS with sparsity, i.e. 2,306.9 dense
    // (gangliao.me's CDNA 4 deep dive, its spec table; FP8 dense is twice FP16's).
    GpuPreset {
        key: "mi350x",
        name: "MI350X",
        tflops: 2306.9,
        tb_per_s: 8.0,
        peaks: &[
            (m(Fp8), 4613.7),
            (m(Bf16), 2306.9),
            (m(Fp16), 2306.9),
            (m(Fp32), 144.2),
            (m(Fp64), 72.1),
            (v(Fp32), 144.2),
            (v(Fp64), 72.1),
        ],
        source: "AMD Instinct MI350X datasheet: FP8 4,613.7, BF16/FP16 2,306.9, FP32 matrix 144.2, FP64 matrix \
                 72.1, FP32 vector 144.2, FP64 vector 72.1 TFLOPS dense; 8 TB/s",
    },
    // Checked: FP32 157.3 TFLOPS (svethardware.cz's MI350X/MI355X article), FP8 about 5 PFLOPS (the ISSCC
    // report on world-today-news.com), FP16 5.03 PFLOPS with sparsity (gangliao.me), 8 TB/s.
    GpuPreset {
        key: "mi355x",
        name: "MI355X",
        tflops: 2516.6,
        tb_per_s: 8.0,
        peaks: &[
            (m(Fp8), 5033.2),
            (m(Bf16), 2516.6),
            (m(Fp16), 2516.6),
            (m(Fp32), 157.3),
            (m(Fp64), 78.6),
            (v(Fp32), 157.3),
            (v(Fp64), 78.6),
        ],
        source: "AMD Instinct MI355X datasheet: FP8 5,033.2, BF16/FP16 2,516.6, FP32 matrix 157.3, FP64 matrix \
                 78.6, FP32 vector 157.3, FP64 vector 78.6 TFLOPS dense; 8 TB/s",
    },
];

/// The preset keys, TPUs first, as `--chip` and the page list them.
pub fn preset_names() -> Vec<&'static str> {
    TPU_FILES.iter().map(|(k, _)| *k).chain(GPUS.iter().map(|g| g.key)).collect()
}

/// `"TPU v5p"`, `"tpu-v5p"`, `"H100"` → `"tpuv5p"`, `"h100"`: case and punctuation do not matter,
/// and a trailing `sxm` is dropped (`h100sxm` = `h100`).
fn preset_key(name: &str) -> String {
    let k: String = name.chars().filter(|c| c.is_ascii_alphanumeric()).collect::<String>().to_ascii_lowercase();
    k.strip_suffix("sxm").map(str::to_string).unwrap_or(k)
}

/// The GPU preset keys (traces come from GPUs: the trace view offers these).
pub fn gpu_preset_names() -> Vec<&'static str> {
    GPUS.iter().map(|g| g.key).collect()
}

/// A built-in chip by name (see [`preset_names`]).
pub fn preset(name: &str) -> Result<Chip, ChipError> {
    let key = preset_key(name);
    if let Some((_, text)) = TPU_FILES.iter().find(|(k, _)| *k == key) {
        let mut chip = parse_chip(text).expect("the shipped TPU configs are valid NeuSim chip files");
        chip.source = format!(
            "NeuSim configs/chips/{key}.json (Apache-2.0): {}",
            chip.source.trim_start_matches("NeuSim chip config: ")
        );
        return Ok(chip);
    }
    if let Some(g) = GPUS.iter().find(|g| g.key == key) {
        return Ok(Chip {
            name: g.name.to_string(),
            peak_flops: g.tflops * 1e12,
            hbm_bandwidth: g.tb_per_s * 1e12,
            launch_overhead_us: GPU_LAUNCH_OVERHEAD_US,
            source: g.source.to_string(),
            peaks: Peaks::from_tflops(g.peaks),
        });
    }
    // The name may come from an edited link: quote a bounded part of it.
    let name = units::ellipsize(name, 40);
    Err(ChipError::UnknownPreset { name, known: preset_names().join(", ") })
}

/// Every preset, in [`preset_names`] order.
pub fn all_presets() -> Vec<Chip> {
    preset_names().into_iter().filter_map(|n| preset(n).ok()).collect()
}
