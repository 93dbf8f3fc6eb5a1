//! Which chip preset a trace ran on, from the device names the profiler recorded
//! (`deviceProperties[].name`, e.g. `NVIDIA H100 80GB HBM3`, `AMD Instinct MI300X VF`).
//!
//! Only names that pin down one preset are matched: a roofline percentage against the wrong
//! chip is worse than none, so `AMD Radeon Graphics` (what ROCm 6.2 reports for an MI250) or an
//! empty name stays unknown and the user picks the chip.

use serde::Serialize;

use super::chip::{preset, Chip};

/// The preset a device name denotes, or `None`. Case and punctuation do not matter.
pub fn preset_of_device(device: &str) -> Option<&'static str> {
    let d: String = device.chars().filter(|c| c.is_ascii_alphanumeric()).collect::<String>().to_ascii_lowercase();
    let has = |s: &str| d.contains(s);
    // Most specific first: "MI300X" before "MI300", "H100 PCIe" before "H100".
    let key = if has("mi355x") {
        "mi355x"
    } else if has("mi350x") {
        "mi350x"
    } else if has("mi325x") {
        "mi325x"
    } else if has("mi300x") {
        "mi300x"
    } else if has("computecapability94") && has("304cores") && (has("192gib") || has("256gib")) {
        // An XLA profile's GPU (`AMD GPU (compute capability 9.4, 304 cores, 192 GiB)`, named
        // by `formats::xplane` from the plane's stats): gfx942 with 304 CUs is an MI300X (192 GB)
        // or MI325X (256 GB); MI300A has 228 CUs.
        if has("192gib") {
            "mi300x"
        } else {
            "mi325x"
        }
    } else if has("computecapability90") && has("132cores") && (has("139gib") || has("140gib") || has("141gib")) {
        // An XLA profile's NVIDIA GPU: Hopper (compute capability 9.0) with 132 SMs is an H100
        // SXM (80 GB), H100 NVL (94 GB) or H200 (141 GB, reported as 139.8 GiB).
        "h200"
    } else if has("computecapability90") && has("132cores") && (has("79gib") || has("80gib")) {
        "h100"
    } else if has("computecapability90") && has("132cores") && (has("93gib") || has("94gib")) {
        "h100nvl"
    } else if has("computecapability90") && has("114cores") {
        "h100pcie"
    } else if has("mi250x") || has("mi250") {
        "mi250x"
    } else if has("h200") {
        "h200"
    } else if has("h100") && has("pcie") {
        "h100pcie"
    } else if has("h100") && has("nvl") {
        "h100nvl"
    } else if has("h100") {
        // `NVIDIA H100 80GB HBM3` is the SXM part (the PCIe card reports `H100 PCIe`).
        "h100"
    } else if has("b200") {
        "b200"
    } else if has("h800") {
        "h800"
    } else if has("a100") && has("40gb") {
        // The 40GB part, PCIe or SXM: the datasheet gives both the same peaks and bandwidth.
        "a10040gb"
    } else if has("a100") && !has("pcie") {
        "a100"
    } else if has("v100") && !has("pcie") {
        // `Tesla V100-SXM2-32GB`; the PCIe card's peaks are lower (no preset).
        "v100"
    } else if has("rtx4090") {
        "rtx4090"
    } else {
        return None;
    };
    Some(key)
}

/// The chip a trace is measured against and how it was chosen.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DetectedChip {
    #[serde(flatten)]
    pub chip: Chip,
    /// `device name "NVIDIA H100 80GB HBM3"`, `--chip h100`, `chip file my.json`.
    pub detected_from: String,
}

/// The chip for a trace's devices (those that ran kernels): the preset the first device with a
/// recognised name denotes. `Err` carries the names seen, for the "pick a chip" message.
pub fn detect_chip(devices: &[String]) -> Result<DetectedChip, Vec<String>> {
    devices
        .iter()
        .find_map(|d| {
            let key = preset_of_device(d)?;
            let chip = preset(key).ok()?;
            Some(DetectedChip { chip, detected_from: format!("device name \"{d}\"") })
        })
        .ok_or_else(|| devices.to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn device_names_of_the_shipped_traces_map_to_presets() {
        // Every name here is one the profiler wrote in a trace under tests/data/traces/.
        let cases = [
            ("NVIDIA H100 80GB HBM3", Some("h100")),
            ("AMD Instinct MI300X VF", Some("mi300x")),
            ("AMD Instinct MI300X", Some("mi300x")),
            ("NVIDIA A100-SXM4-80GB", Some("a100")),
            ("NVIDIA B200", Some("b200")),
            ("AMD Radeon Graphics", None),
            ("", None),
        ];
        for (name, key) in cases {
            assert_eq!(preset_of_device(name), key, "{name}");
        }
        assert_eq!(preset_of_device("NVIDIA H100 PCIe"), Some("h100pcie"));
        assert_eq!(preset_of_device("NVIDIA H100 NVL"), Some("h100nvl"));
        assert_eq!(preset_of_device("NVIDIA H200"), Some("h200"));
        assert_eq!(preset_of_device("AMD Instinct MI325X"), Some("mi325x"));
        assert_eq!(preset_of_device("NVIDIA A100-PCIE-40GB"), Some("a10040gb"));
        // Names the other profilers' formats give (tests/data/formats).
        assert_eq!(preset_of_device("NVIDIA A100-SXM4-40GB"), Some("a10040gb"));
        assert_eq!(preset_of_device("AMD Instinct MI350X"), Some("mi350x"));
        assert_eq!(preset_of_device("AMD GPU (compute capability 9.4, 304 cores, 192 GiB)"), Some("mi300x"));
        assert_eq!(preset_of_device("AMD GPU (compute capability 9.4, 228 cores, 128 GiB)"), None);
        // The H200 that made tests/data/compiled/jax_*_cuda.xplane.pb, as its plane's stats name it.
        assert_eq!(preset_of_device("Nvidia GPU (compute capability 9.0, 132 cores, 140 GiB)"), Some("h200"));
        assert_eq!(preset_of_device("Nvidia GPU (compute capability 9.0, 132 cores, 80 GiB)"), Some("h100"));
        assert_eq!(preset_of_device("Nvidia GPU (compute capability 8.0, 108 cores, 80 GiB)"), None);
        assert_eq!(preset_of_device("AMD Instinct MI355X"), Some("mi355x"));
        assert_eq!(preset_of_device("NVIDIA H800"), Some("h800"));
        assert_eq!(preset_of_device("Tesla V100-SXM2-32GB"), Some("v100"));
        assert_eq!(preset_of_device("Tesla V100-PCIE-16GB"), None);
        assert_eq!(preset_of_device("NVIDIA GeForce RTX 4090"), Some("rtx4090"));
        assert_eq!(preset_of_device("NVIDIA A100-PCIE-80GB"), None);
        // Every preset a device maps to is a GPU preset.
        let gpus = crate::gpu_preset_names();
        for name in [
            "NVIDIA H100 PCIe",
            "NVIDIA H100 NVL",
            "NVIDIA H200",
            "AMD Instinct MI325X",
            "AMD Instinct MI250X",
            "AMD Instinct MI350X",
            "AMD Instinct MI355X",
            "NVIDIA H800",
            "Tesla V100-SXM2-32GB",
            "NVIDIA A100-SXM4-40GB",
            "NVIDIA GeForce RTX 4090",
        ] {
            assert!(gpus.contains(&preset_of_device(name).unwrap()), "{name}");
        }
    }

    #[test]
    fn detection_names_the_device_or_lists_the_unknown_ones() {
        let d = detect_chip(&["GPU (pid 3)".into(), "NVIDIA H100 80GB HBM3".into()]).unwrap();
        assert_eq!(d.chip.name, "H100 SXM");
        assert_eq!(d.detected_from, "device name \"NVIDIA H100 80GB HBM3\"");
        assert_eq!(detect_chip(&["AMD Radeon Graphics".into()]).unwrap_err(), vec!["AMD Radeon Graphics".to_string()]);
    }
}
