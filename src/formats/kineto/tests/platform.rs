//! Vendor and device detection (`trace::platform`) on Kineto traces: the rules in the
//! order the format documentation gives them, read from real Kineto JSON.

use trace::platform::{detect_vendor, kernel_devices, Vendor, VendorEvidence};
use trace::Trace;

use crate::read_trace;

fn trace(top: &str, kernels: &[(&str, i64)]) -> Trace {
    let events: Vec<String> = kernels
        .iter()
        .map(|(n, pid)| format!(r#"{{"ph":"X","cat":"kernel","name":"{n}","pid":{pid},"tid":0,"ts":1,"dur":2}}"#))
        .collect();
    read_trace(format!(r#"{{{top}"traceEvents":[{}]}}"#, events.join(",")).as_bytes()).unwrap()
}

const MI250: &str = r#""deviceProperties":[{"id":0,"name":"AMD Radeon Graphics","warpSize":64},{"id":1,"name":"AMD Radeon Graphics","warpSize":64}],"#;

#[test]
fn rules_in_spec_order() {
    let t = trace(r#""roctracer_version":4.1,"#, &[("nvjet_x", 0)]);
    assert_eq!(detect_vendor(&t), (Vendor::Amd, VendorEvidence::VersionKeys));
    let t = trace(MI250, &[("k", 2)]);
    assert_eq!(detect_vendor(&t), (Vendor::Amd, VendorEvidence::WarpSize));
    assert_eq!(kernel_devices(&t, Vendor::Amd), vec!["AMD Radeon Graphics"]);
    let t = trace(r#""cupti_version":24,"#, &[("Cijk_x", 0)]);
    assert_eq!(detect_vendor(&t), (Vendor::Nvidia, VendorEvidence::VersionKeys));
    let t = trace("", &[("Cijk_Alik_Bljk", 0), ("ck_fmha_fwd", 0), ("nvjet_tst", 0)]);
    assert_eq!(detect_vendor(&t), (Vendor::Amd, VendorEvidence::KernelNames));
    assert!(detect_vendor(&t).1.inferred());
    let t = trace("", &[("sm90_xmma_gemm", 0)]);
    assert_eq!(detect_vendor(&t), (Vendor::Nvidia, VendorEvidence::KernelNames));
    let t = trace("", &[("mystery", 0)]);
    assert_eq!(detect_vendor(&t), (Vendor::Unknown, VendorEvidence::None));
    assert_eq!(kernel_devices(&t, Vendor::Unknown), vec!["GPU (pid 0)"]);
}

#[test]
fn nvidia_devices_by_ordinal_amd_by_order() {
    let nv = r#""deviceProperties":[{"id":0,"name":"NVIDIA A100","warpSize":32},{"id":1,"name":"NVIDIA H100","warpSize":32}],"#;
    let t = trace(nv, &[("k", 1)]);
    assert_eq!(kernel_devices(&t, Vendor::Nvidia), vec!["NVIDIA H100"]);
    let amd = r#""deviceProperties":[{"id":0,"name":"AMD Instinct MI300X","warpSize":64},{"id":1,"name":"AMD Instinct MI250","warpSize":64}],"#;
    let t = trace(amd, &[("k", 9), ("k", 2)]);
    assert_eq!(kernel_devices(&t, Vendor::Amd), vec!["AMD Instinct MI250", "AMD Instinct MI300X"]);
    let t = trace(amd, &[("k", 9)]);
    assert_eq!(kernel_devices(&t, Vendor::Amd), vec!["GPU (pid 9)"]);
}
