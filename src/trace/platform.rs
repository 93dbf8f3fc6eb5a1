//! Which vendor a trace comes from and which devices ran its kernels (`docs/trace-analysis.md`,
//! "Platform").

use std::fmt;

use serde::{Deserialize, Serialize};

use super::{DeviceProperties, Trace, VersionKeys, CPU_DEVICE};

/// GPU vendor of a trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Vendor {
    #[serde(rename = "AMD")]
    Amd,
    #[serde(rename = "NVIDIA")]
    Nvidia,
    #[serde(rename = "unknown")]
    Unknown,
}

impl fmt::Display for Vendor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Vendor::Amd => "AMD",
            Vendor::Nvidia => "NVIDIA",
            Vendor::Unknown => "unknown",
        })
    }
}

/// What the vendor was decided from, strongest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum VendorEvidence {
    /// The profiler's recorded ROCm (roctracer, HIP) or CUDA (CUPTI, CUDA runtime/driver) versions.
    VersionKeys,
    /// A device's warp size (64 on AMD, 32 on NVIDIA).
    WarpSize,
    /// Inferred from kernel names (`Cijk_`, `ck_`, `hip…` vs `nvjet_`, `sm90_`, `cutlass`…).
    KernelNames,
    /// Nothing identified the vendor.
    None,
}

impl VendorEvidence {
    /// Whether the vendor was inferred rather than read from the trace's keys.
    pub fn inferred(self) -> bool {
        matches!(self, VendorEvidence::KernelNames)
    }
}

/// What ran a trace's kernels: GPUs, or the CPU (a CPU run of compiled C++ kernels, whose
/// trace has no GPU). Only a report's words depend on it: "CPU time", "the CPU is idle".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Processor {
    #[default]
    Gpu,
    Cpu,
}

impl Processor {
    /// Whether it is a GPU: the usual case, which the JSON leaves unsaid.
    pub fn is_gpu(&self) -> bool {
        *self == Processor::Gpu
    }

    /// The CPU where every device that ran kernels is the CPU, else a GPU (also with none).
    pub fn of_devices<S: AsRef<str>>(devices: &[S]) -> Processor {
        match !devices.is_empty() && devices.iter().all(|d| d.as_ref() == CPU_DEVICE) {
            true => Processor::Cpu,
            false => Processor::Gpu,
        }
    }
}

impl fmt::Display for Processor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Processor::Gpu => "GPU",
            Processor::Cpu => "CPU",
        })
    }
}

/// Vendor, evidence and the devices that ran kernels.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Platform {
    pub vendor: Vendor,
    pub evidence: VendorEvidence,
    /// Names of the devices that ran kernels, distinct, in order of their first kernel.
    pub devices: Vec<String>,
    pub kernels: usize,
    /// Sum of kernel durations, µs (copies left out: GPU time adds them, `PlatformEntry`).
    pub kernel_time_us: f64,
}

impl Platform {
    /// What ran the kernels ([`Processor::of_devices`]).
    pub fn processor(&self) -> Processor {
        Processor::of_devices(&self.devices)
    }
}

/// Kernel-name fragments typical of one vendor's libraries (lower case).
const AMD_HINTS: [&str; 6] = ["cijk_", "ck_", "hip", "rocm", "wvsplitk", "mfma"];
const NVIDIA_HINTS: [&str; 8] = ["nvjet_", "sm90_", "sm80_", "sm100_", "cutlass", "cublas", "__nv_", "ampere_"];

/// The vendor whose library names a kernel name recalls (by the fragments above), or
/// `Unknown` when it recalls neither or both.
pub fn vendor_of_name(name: &str) -> Vendor {
    let name = name.to_ascii_lowercase();
    let amd = AMD_HINTS.iter().any(|h| name.contains(h));
    let nv = NVIDIA_HINTS.iter().any(|h| name.contains(h));
    match (amd, nv) {
        (true, false) => Vendor::Amd,
        (false, true) => Vendor::Nvidia,
        _ => Vendor::Unknown,
    }
}

/// Detects the vendor by the documented rules, in order: version keys, warp size, kernel names.
pub fn detect_vendor(trace: &Trace) -> (Vendor, VendorEvidence) {
    let mut seen = vec![false; trace.names.len()];
    let distinct = trace.kernels.iter().filter(|k| !std::mem::replace(&mut seen[k.name.index()], true));
    detect_vendor_of(&trace.versions, &trace.devices, distinct.map(|k| trace.name(k.name)))
}

/// [`detect_vendor`] from its parts: the version keys, the device list and every distinct
/// kernel name (each once; in any order).
pub fn detect_vendor_of<'n>(
    v: &VersionKeys,
    devices: &[DeviceProperties],
    kernel_names: impl Iterator<Item = &'n str>,
) -> (Vendor, VendorEvidence) {
    let amd_keys = v.roctracer_version.is_some() || v.hip_runtime_version.is_some() || v.hip_driver_version.is_some();
    let nv_keys = v.cupti_version.is_some() || v.cuda_runtime_version.is_some() || v.cuda_driver_version.is_some();
    if amd_keys && !nv_keys {
        return (Vendor::Amd, VendorEvidence::VersionKeys);
    }
    if devices.iter().any(|d| d.warp_size == Some(64)) {
        return (Vendor::Amd, VendorEvidence::WarpSize);
    }
    if nv_keys && !amd_keys {
        return (Vendor::Nvidia, VendorEvidence::VersionKeys);
    }
    if devices.iter().any(|d| d.warp_size == Some(32)) {
        return (Vendor::Nvidia, VendorEvidence::WarpSize);
    }
    let (mut amd, mut nv) = (0usize, 0usize);
    for name in kernel_names {
        let name = name.to_ascii_lowercase();
        amd += AMD_HINTS.iter().any(|h| name.contains(h)) as usize;
        nv += NVIDIA_HINTS.iter().any(|h| name.contains(h)) as usize;
    }
    match amd.cmp(&nv) {
        std::cmp::Ordering::Greater => (Vendor::Amd, VendorEvidence::KernelNames),
        std::cmp::Ordering::Less => (Vendor::Nvidia, VendorEvidence::KernelNames),
        std::cmp::Ordering::Equal => (Vendor::Unknown, VendorEvidence::None),
    }
}

/// The name of each device that ran kernels. NVIDIA kernels carry the CUDA ordinal, which is
/// the device list's id. ROCm kernels carry the HSA agent index (CPU agents counted
/// first), which is not: there, when every listed device has the same name that name is used,
/// else the k-th GPU agent that ran kernels is taken as the k-th listed device when the counts
/// agree, else the agent is named by its index.
pub fn kernel_devices(trace: &Trace, vendor: Vendor) -> Vec<String> {
    let mut pids: Vec<i64> = Vec::new();
    for k in &trace.kernels {
        if !pids.contains(&k.device) {
            pids.push(k.device);
        }
    }
    let mut names: Vec<String> = Vec::new();
    for name in device_names(&trace.devices, vendor, &pids) {
        if !names.contains(&name) {
            names.push(name);
        }
    }
    names
}

/// The name of each of `pids` (GPU process ids of kernels), by the rules of [`kernel_devices`]
/// over the trace's device list; `GPU (pid N)` when the trace does not say.
pub fn device_names(devices: &[DeviceProperties], vendor: Vendor, pids: &[i64]) -> Vec<String> {
    let single_name = {
        let first = devices.first().map(|d| d.name.as_str());
        first.filter(|f| !f.is_empty() && devices.iter().all(|d| d.name == *f))
    };
    let mut sorted = pids.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    pids.iter()
        .map(|&pid| {
            let by_id = devices.iter().find(|d| d.id == Some(pid)).map(|d| d.name.clone());
            match vendor {
                Vendor::Amd => single_name.map(str::to_string).or_else(|| {
                    (sorted.len() == devices.len())
                        .then(|| devices[sorted.iter().position(|&p| p == pid).unwrap_or(0)].name.clone())
                }),
                _ => by_id.or_else(|| single_name.map(str::to_string)),
            }
            .filter(|n| !n.is_empty())
            .unwrap_or_else(|| format!("GPU (pid {pid})"))
        })
        .collect()
}

/// Everything a `platforms[]` entry of the JSON result reports.
pub fn platform(trace: &Trace) -> Platform {
    let (vendor, evidence) = detect_vendor(trace);
    Platform {
        vendor,
        evidence,
        devices: kernel_devices(trace, vendor),
        kernels: trace.kernels.len(),
        kernel_time_us: trace.kernels.iter().map(|k| k.dur).fold(0.0, |a, b| a + b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_is_the_cpus_only_where_every_device_is_the_cpu() {
        assert_eq!(Processor::of_devices(&[CPU_DEVICE]), Processor::Cpu);
        assert_eq!(Processor::of_devices(&[CPU_DEVICE, "NVIDIA H100 80GB HBM3"]), Processor::Gpu);
        assert_eq!(Processor::of_devices::<&str>(&[]), Processor::Gpu);
        assert_eq!(format!("{} time", Processor::Cpu), "CPU time");
    }
}
