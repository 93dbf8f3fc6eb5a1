//! The page's state natively, for a model's workload: the model form's actions through the
//! reducer, as `tests/page_state.rs` checks the rest.

use fusionscope::calib::parse_calibration;
use fusionscope::hardware::{Chip, ChipChoice};
use fusionscope::page::form::WorkloadField;
use fusionscope::page::time_inputs::LoadedCalibration;
use fusionscope::page::{Action, Source, State};
use fusionscope::share;
use fusionscope::workload::{ModelChoice, Phase};

const PROFILE: &str =
    include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/calibration/i7_12700k_with_fusion.json"));

fn reduce(s: State, a: Action) -> State {
    s.apply(a)
}

#[test]
fn model_inputs_chip_and_calibration_through_the_reducer() {
    let s = reduce(State::default(), Action::ShowModel);
    let c = s.current.as_ref().unwrap();
    let w = c.workload.as_ref().expect("a model view has its workload");
    assert_eq!((w.model.as_str(), w.layers), ("llama3-8b", 32));
    // A bad field is named and keeps the last figures.
    let s = reduce(s, Action::SetModelField(WorkloadField::Tp, "0".into()));
    assert_eq!(s.current.as_ref().unwrap_err(), "Tensor parallelism must be at least 1 (got 0).");
    assert!(s.shown().unwrap().workload.is_some());
    let s = reduce(s, Action::SetModelField(WorkloadField::Tp, "".into()));
    let s = reduce(s, Action::SetPhase(Phase::Decode));
    let s = reduce(s, Action::SetModel(ModelChoice::Preset("dit-xl".into())));
    assert!(s.current.as_ref().unwrap_err().contains("decode"), "DiT has no decode phase");
    let s = reduce(s, Action::SetPhase(Phase::Prefill));
    assert!(s.current.is_ok());
    // A chip from a file is offered and chosen; opening the transformer keeps it.
    let chip = Chip {
        name: "npu".into(),
        peak_flops: 1e14,
        hbm_bandwidth: 1e12,
        launch_overhead_us: 1.0,
        source: "f".into(),
        peaks: Default::default(),
    };
    let s = reduce(s, Action::AddChip(chip.clone()));
    assert_eq!(s.time.chip, ChipChoice::Custom(chip.clone()));
    assert!(s.time.chip_options().iter().any(|(c, label)| *c == s.time.chip && label == "npu (from file)"));
    // The link carries the model and the chip; a fresh page restores both.
    let fragment = share::encode(&s.shared_view().unwrap());
    let restored = State::from_fragment(&fragment);
    assert!(matches!(&restored.source, Source::Model(f) if f.model == ModelChoice::Preset("dit-xl".into())));
    assert_eq!(restored.time.chip, ChipChoice::Custom(chip.clone()));
    let s = reduce(s, Action::ResetTransformer);
    assert_eq!(s.time.chip, ChipChoice::Custom(chip));
    // Back to Model × chip: the inputs last used come back.
    let s = reduce(s, Action::ShowModel);
    assert!(matches!(&s.source, Source::Model(f) if f.model == ModelChoice::Preset("dit-xl".into())));
    // A calibration profile loads and unloads.
    let calibration = LoadedCalibration::new("p.json".into(), parse_calibration(PROFILE).unwrap());
    let s = reduce(s, Action::LoadCalibration(calibration));
    let loaded = s.time.calibration.as_ref().unwrap();
    assert_eq!(loaded.report.patterns.len(), 9);
    assert!(loaded.active_profile().is_some());
    let s = reduce(s, Action::UnloadCalibration);
    assert!(s.time.calibration.is_none());
}
