//! Tests of `chip`.

use super::*;

#[test]
fn tpu_v5p_peak_follows_the_systolic_formula() {
    let c = preset("TPU v5p").unwrap();
    assert_eq!(c.name, "TPU v5p");
    assert!((c.peak_flops - 8.0 * 128.0 * 128.0 * 2.0 * 1.7e9).abs() < 1.0);
    assert_eq!(c.hbm_bandwidth, 2765e9);
    assert_eq!(c.launch_overhead_us, TPU_LAUNCH_OVERHEAD_US);
}

#[test]
fn gpu_names_are_forgiving() {
    assert_eq!(preset("H100-SXM").unwrap().name, "H100 SXM");
    assert_eq!(preset("mi300x").unwrap().peak_flops, 1307.4e12);
    assert_eq!(preset("MI355X").unwrap().peak_flops, 2516.6e12);
    assert_eq!(preset("a100-40gb").unwrap().hbm_bandwidth, 1.555e12);
    let e = preset("p100").unwrap_err().to_string();
    assert!(e.contains("p100") && e.contains("tpuv5p") && e.contains("mi355x"), "{e}");
}

#[test]
fn simple_form_and_errors() {
    let c = parse_chip(r#"{"name": "x", "peak_flops": 1e15, "hbm_bw_GBps": 1000}"#).unwrap();
    assert_eq!((c.peak_flops, c.hbm_bandwidth, c.launch_overhead_us), (1e15, 1e12, 0.0));
    assert_eq!(parse_chip(r#"{"name": "x", "hbm_bw_GBps": 1000}"#).unwrap_err(), ChipError::MissingField("peak_flops"));
    assert!(matches!(
        parse_chip(r#"{"name": "x", "peak_flops": -1, "hbm_bw_GBps": 1}"#),
        Err(ChipError::BadNumber { field: "peak_flops", .. })
    ));
    assert!(matches!(parse_chip("{\n\"name\": }"), Err(ChipError::Json { line: 2, .. })));
    assert_eq!(parse_chip("[1]").unwrap_err(), ChipError::NotObject);
    assert!(matches!(
        parse_chip(r#"{"num_sa": 2, "sa_dim": 128, "freq_GHz": 1, "hbm_bw_GBps": 1, "launch_overhead_us": -3}"#),
        Err(ChipError::OutOfRange { field: "launch_overhead_us", .. })
    ));
}

#[test]
fn every_preset_is_within_the_limits() {
    for c in all_presets() {
        assert_eq!(c.validate(), Ok(()), "{}", c.name);
    }
}

#[test]
fn absurd_figures_are_refused_naming_the_field_and_range() {
    let simple =
        |peak: &str, bw: &str| parse_chip(&format!(r#"{{"name": "x", "peak_flops": {peak}, "hbm_bw_GBps": {bw}}}"#));
    assert_eq!(
        simple("1e308", "1000").unwrap_err().to_string(),
        "chip field `peak_flops` is 1e308, outside the accepted range 1e6 to 1e21 FLOP/s"
    );
    assert_eq!(
        simple("1e-320", "1000").unwrap_err().to_string(),
        "chip field `peak_flops` is 1e-320, outside the accepted range 1e6 to 1e21 FLOP/s"
    );
    assert_eq!(
        simple("1e15", "1e12").unwrap_err().to_string(),
        "chip field `hbm_bw_GBps` is 1e12, outside the accepted range 0.001 to 1e8 GB/s"
    );
    let neusim = parse_chip(r#"{"num_sa": 1e200, "sa_dim": 128, "freq_GHz": 1, "hbm_bw_GBps": 100}"#);
    assert!(matches!(&neusim, Err(ChipError::OutOfRange { value, .. }) if value.ends_with("e213")), "{neusim:?}");
    let long = format!(r#"{{"name": "{}", "peak_flops": 1e15, "hbm_bw_GBps": 1000}}"#, "n".repeat(201));
    assert_eq!(
        parse_chip(&long).unwrap_err().to_string(),
        "chip field `name` is 201 characters long; it must have 1 to 200"
    );
    assert!(matches!(
        simple("1e15", "1000").map(|mut c| {
            c.name.clear();
            c.validate()
        }),
        Ok(Err(ChipError::Text { field: "name", .. }))
    ));
    let c = Chip { peak_flops: f64::NAN, ..preset("h100").unwrap() };
    assert_eq!(
        c.validate().unwrap_err().to_string(),
        "chip field `peak_flops` is NaN, outside the accepted range 1e6 to 1e21 FLOP/s"
    );
    let c = Chip { launch_overhead_us: f64::INFINITY, ..preset("h100").unwrap() };
    assert!(matches!(c.validate(), Err(ChipError::OutOfRange { field: "launch_overhead_us", .. })));
}

#[test]
fn deserialising_a_chip_validates_it() {
    let json = |peak: &str| {
        format!(
            r#"{{"name": "x", "peak_flops": {peak}, "hbm_bandwidth": 1e12, "launch_overhead_us": 1, "source": "s"}}"#
        )
    };
    assert!(serde_json::from_str::<Chip>(&json("1e15")).is_ok());
    let e = serde_json::from_str::<Chip>(&json("1e308")).unwrap_err().to_string();
    assert!(e.contains("chip field `peak_flops` is 1e308, outside the accepted range 1e6 to 1e21 FLOP/s"), "{e}");
    assert!(serde_json::from_str::<Chip>(&json("-5")).is_err());
}

#[test]
fn an_edited_preset_name_is_quoted_short() {
    let e = preset(&"z".repeat(100_000)).unwrap_err().to_string();
    assert!(e.len() < 400, "{e}");
}
