//! Chip presets and chip JSON files: every TPU config in tests/data loads with the documented
//! formula, the GPU presets carry their sources, and no input makes the reader panic.

use crate::common::{data, data_text};
use fusionscope::hardware::chip::{all_presets, systolic_peak_flops};
use fusionscope::hardware::{parse_chip, preset, preset_names};
use proptest::prelude::*;

#[test]
fn every_chip_file_loads_with_the_systolic_formula() {
    let mut n = 0;
    for entry in std::fs::read_dir(data("models/chips")).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        let chip = parse_chip(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        let f = |k: &str| v[k].as_f64().unwrap();
        assert_eq!(chip.peak_flops, systolic_peak_flops(f("num_sa"), f("sa_dim"), f("freq_GHz")));
        assert_eq!(chip.hbm_bandwidth, f("hbm_bw_GBps") * 1e9);
        assert!(chip.name.starts_with("TPU v"), "{}", chip.name);
        // The preset of the same file gives the same numbers.
        let key = path.file_stem().unwrap().to_str().unwrap();
        let p = preset(key).unwrap();
        assert_eq!((p.peak_flops, p.hbm_bandwidth), (chip.peak_flops, chip.hbm_bandwidth));
        n += 1;
    }
    assert_eq!(n, 7);
}

#[test]
fn known_peaks() {
    // TPU v4: 2 × 4 MXUs… in NeuSim terms 8 SAs of 128² at 1.05 GHz = 275 TFLOP/s (Google's figure).
    let v4 = preset("tpuv4").unwrap();
    assert!((v4.peak_flops / 1e12 - 275.25).abs() < 0.01, "{}", v4.peak_flops);
    let h100 = preset("h100").unwrap();
    assert_eq!((h100.peak_flops, h100.hbm_bandwidth), (989.4e12, 3.35e12));
    assert!(h100.source.contains("datasheet"));
    assert_eq!(all_presets().len(), preset_names().len());
    // 7 TPUs, 15 GPUs.
    assert_eq!(preset_names().len(), 22);
    for c in all_presets() {
        assert!(c.peak_flops > 1e13 && c.hbm_bandwidth > 1e11 && !c.source.is_empty(), "{}", c.name);
    }
}

proptest! {
    #[test]
    fn random_text_never_panics(s in "\\PC*") {
        let _ = parse_chip(&s);
    }

    #[test]
    fn truncated_chip_files_never_panic(cut in 0usize..1100) {
        let text = data_text("models/chips/tpuv5p.json");
        let end = text.char_indices().map(|(i, _)| i).take_while(|&i| i <= cut).last().unwrap_or(0);
        let _ = parse_chip(&text[..end]);
    }

    #[test]
    fn random_simple_chips_are_validated(peak in proptest::num::f64::ANY, bw in proptest::num::f64::ANY) {
        let text = format!(r#"{{"name": "x", "peak_flops": {peak:e}, "hbm_bw_GBps": {bw:e}}}"#);
        if let Ok(c) = parse_chip(&text) {
            prop_assert!(c.peak_flops > 0.0 && c.hbm_bandwidth > 0.0);
        }
    }
}

#[test]
fn detection_tells_chips_models_tables_and_profiles_apart() {
    use fusionscope::import::detect::{detect_kind, FileKind};
    for (dir, want) in [
        ("models/chips", FileKind::Chip),
        ("models/models", FileKind::ModelConfig),
        ("ops-csv", FileKind::SimOpsCsv),
        ("calibration", FileKind::Calibration),
    ] {
        for entry in std::fs::read_dir(data(dir)).unwrap() {
            let path = entry.unwrap().path();
            assert_eq!(detect_kind(&std::fs::read(&path).unwrap()), want, "{}", path.display());
        }
    }
}
