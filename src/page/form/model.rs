//! The "Model × chip" form: which model (a built-in config or a config file the user loaded),
//! the phase and the workload's sizes as typed (empty = the config's value). Its validated
//! form, [`ModelSpec`], is what a share link stores.

use super::{NumberField, Numbers, WorkloadField};
use workload::{build_workload, ModelChoice, ModelSpec, Phase, Workload, WorkloadError};

/// The form as typed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelForm {
    pub model: ModelChoice,
    pub phase: Phase,
    pub numbers: Numbers<WorkloadField>,
}

impl Default for ModelForm {
    fn default() -> Self {
        ModelForm {
            model: ModelChoice::Preset("llama3-8b".into()),
            phase: Phase::Prefill,
            numbers: Numbers::from_fn(|_| String::new()),
        }
    }
}

impl ModelForm {
    /// The validated inputs, or a message naming the first bad field.
    pub fn spec(&self) -> Result<ModelSpec, String> {
        Ok(ModelSpec { model: self.model.clone(), phase: self.phase, params: WorkloadField::params(&self.numbers)? })
    }
}

impl From<ModelSpec> for ModelForm {
    fn from(s: ModelSpec) -> Self {
        ModelForm { model: s.model, phase: s.phase, numbers: WorkloadField::numbers(&s.params) }
    }
}

/// The workload of these inputs. A parameter the generator rejects is reported with the
/// form's label for it (`Tensor parallelism = 3: …`); a model that is not modelled (GLIGEN)
/// says why.
pub fn workload(spec: &ModelSpec) -> Result<Workload, String> {
    let config = spec.model.config()?;
    build_workload(&config, spec.phase, spec.params).map_err(|e| match &e {
        WorkloadError::Param { name, value, reason } => {
            match WorkloadField::ALL.iter().find(|f| f.param_name() == *name) {
                Some(f) => format!("{} = {value}: {reason}.", f.label()),
                None => format!("{e}."),
            }
        }
        _ => format!("{e}."),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use workload::{model_names, WorkloadParams};

    #[test]
    fn empty_fields_take_the_config_values() {
        let spec = ModelForm::default().spec().unwrap();
        assert_eq!(spec.params, WorkloadParams::default());
        let w = workload(&spec).unwrap();
        assert_eq!(w.model, "llama3-8b");
        assert_eq!(w.layers, 32);
    }

    #[test]
    fn bad_numbers_name_their_field() {
        for (field, text, expect) in [
            (WorkloadField::Batch, "0", "Batch size must be at least 1"),
            (WorkloadField::SeqLen, "12x", "Input length must be a whole number of at least 1 (got \"12x\")"),
            (WorkloadField::OutputLen, "-3", "Output length must be a whole number"),
            (WorkloadField::Tp, "99999999999999999999999", "Tensor parallelism is too large"),
        ] {
            let mut form = ModelForm::default();
            form.numbers.set(field, text.into());
            let e = form.spec().unwrap_err();
            assert!(e.starts_with(expect), "{e}");
        }
    }

    #[test]
    fn generator_rejections_use_the_form_labels() {
        let mut form = ModelForm::default();
        form.numbers.set(WorkloadField::SeqLen, (1u64 << 40).to_string());
        let e = workload(&form.spec().unwrap()).unwrap_err();
        assert!(e.starts_with("Input length = "), "{e}");
    }

    #[test]
    fn gligen_says_it_is_not_modelled() {
        let form = ModelForm { model: ModelChoice::Preset("gligen".into()), ..ModelForm::default() };
        let e = workload(&form.spec().unwrap()).unwrap_err();
        assert!(e.contains("GLIGEN"), "{e}");
    }

    #[test]
    fn every_other_preset_builds_in_both_phases() {
        for name in model_names().into_iter().filter(|n| *n != "gligen") {
            for phase in [Phase::Prefill, Phase::Decode] {
                let spec =
                    ModelSpec { model: ModelChoice::Preset(name.into()), phase, params: WorkloadParams::default() };
                // DiT and DLRM have no decode phase: that is a message, not a panic.
                let _ = workload(&spec);
            }
            let spec = ModelSpec {
                model: ModelChoice::Preset(name.into()),
                phase: Phase::Prefill,
                params: WorkloadParams::default(),
            };
            assert!(workload(&spec).is_ok(), "{name}");
        }
    }

    #[test]
    fn a_file_choice_reads_its_text_and_a_bad_file_is_named() {
        let text = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/data/models/models/llama2-13b.json"));
        let choice = ModelChoice::File { file_name: "mine.json".into(), text: text.into() };
        assert_eq!(choice.config().unwrap().name(), "llama2-13b");
        let bad = ModelChoice::File { file_name: "bad.json".into(), text: "{".into() };
        assert!(bad.config().unwrap_err().starts_with("bad.json cannot be read"));
    }

    #[test]
    fn form_and_spec_round_trip() {
        let mut form = ModelForm::default();
        form.numbers.set(WorkloadField::Tp, "2".into());
        form.phase = Phase::Decode;
        let spec = form.spec().unwrap();
        assert_eq!(ModelForm::from(spec.clone()), form);
        let json = serde_json::to_string(&spec).unwrap();
        assert!(json.len() < 160, "{json}");
        assert_eq!(serde_json::from_str::<ModelSpec>(&json).unwrap(), spec);
    }
}
