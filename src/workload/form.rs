//! The "Model × chip" inputs: which model (a built-in config or a config file the user
//! loaded), the phase and the four workload numbers as typed, so that a bad value can be quoted
//! back in a message that names its field. [`ModelSpec`] is the validated form: what a share
//! link stores (a few dozen bytes for a built-in model).

use serde::{Deserialize, Serialize};

use super::config::{parse_model_config, ModelConfig};
use super::presets::preset_model;
use super::{build_workload, Phase, Workload, WorkloadParams};

/// A model config: built-in by name, or a file's text (kept whole so that a link can carry it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ModelChoice {
    Preset(String),
    File { file_name: String, text: String },
}

impl ModelChoice {
    /// The config; errors are sentences naming the model or the file.
    pub fn config(&self) -> Result<ModelConfig, String> {
        match self {
            ModelChoice::Preset(name) => preset_model(name).map_err(|e| e.to_string()),
            ModelChoice::File { file_name, text } => {
                parse_model_config(text).map_err(|e| format!("{file_name} cannot be read: {e}"))
            }
        }
    }

    /// How the choice is named on the page: the preset key or the file name.
    pub fn label(&self) -> &str {
        match self {
            ModelChoice::Preset(name) => name,
            ModelChoice::File { file_name, .. } => file_name,
        }
    }
}

/// A workload's numeric inputs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModelField {
    Batch,
    SeqLen,
    OutputLen,
    Tp,
}

impl ModelField {
    pub const ALL: [ModelField; 4] = [ModelField::Batch, ModelField::SeqLen, ModelField::OutputLen, ModelField::Tp];

    /// How the field is named on the page and in messages (messages start with it).
    pub fn label(self) -> &'static str {
        match self {
            ModelField::Batch => "Batch size",
            ModelField::SeqLen => "Input length",
            ModelField::OutputLen => "Output length",
            ModelField::Tp => "Tensor parallelism",
        }
    }

    /// The element id of the field's input.
    pub fn id(self) -> &'static str {
        match self {
            ModelField::Batch => "in-model-batch",
            ModelField::SeqLen => "in-model-seq-len",
            ModelField::OutputLen => "in-model-output-len",
            ModelField::Tp => "in-model-tp",
        }
    }

    /// The name of the generator's parameter (as its errors say it).
    fn param_name(self) -> &'static str {
        match self {
            ModelField::Batch => "batch",
            ModelField::SeqLen => "seq_len",
            ModelField::OutputLen => "output_len",
            ModelField::Tp => "tp",
        }
    }
}

/// A whole number of at least 1, or a message that starts with the field's label.
pub fn parse_count(label: &str, text: &str) -> Result<u64, String> {
    let text = text.trim();
    if text.is_empty() {
        return Err(format!("{label} is empty: enter a whole number of at least 1."));
    }
    match text.parse::<u64>() {
        Ok(0) => Err(format!("{label} must be at least 1 (got 0).")),
        Ok(v) => Ok(v),
        Err(_) if text.bytes().all(|b| b.is_ascii_digit()) => {
            Err(format!("{label} is too large: \"{text}\" does not fit in 64 bits."))
        }
        Err(_) => Err(format!("{label} must be a whole number of at least 1 (got \"{text}\").")),
    }
}

/// The form as typed; an empty number takes the config's value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelForm {
    pub model: ModelChoice,
    pub phase: Phase,
    pub batch: String,
    pub seq_len: String,
    pub output_len: String,
    pub tp: String,
}

impl Default for ModelForm {
    fn default() -> Self {
        ModelForm {
            model: ModelChoice::Preset("llama3-8b".into()),
            phase: Phase::Prefill,
            batch: String::new(),
            seq_len: String::new(),
            output_len: String::new(),
            tp: String::new(),
        }
    }
}

/// Validated inputs: what a share link stores.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelSpec {
    pub model: ModelChoice,
    pub phase: Phase,
    #[serde(default, skip_serializing_if = "is_default")]
    pub params: WorkloadParams,
}

fn is_default(p: &WorkloadParams) -> bool {
    *p == WorkloadParams::default()
}

impl ModelForm {
    pub fn get(&self, f: ModelField) -> &str {
        match f {
            ModelField::Batch => &self.batch,
            ModelField::SeqLen => &self.seq_len,
            ModelField::OutputLen => &self.output_len,
            ModelField::Tp => &self.tp,
        }
    }

    pub fn set(&mut self, f: ModelField, value: String) {
        match f {
            ModelField::Batch => self.batch = value,
            ModelField::SeqLen => self.seq_len = value,
            ModelField::OutputLen => self.output_len = value,
            ModelField::Tp => self.tp = value,
        }
    }

    /// The validated inputs, or a message naming the first bad field.
    pub fn spec(&self) -> Result<ModelSpec, String> {
        let num = |f: ModelField| -> Result<Option<u64>, String> {
            let text = self.get(f);
            if text.trim().is_empty() {
                Ok(None)
            } else {
                parse_count(f.label(), text).map(Some)
            }
        };
        Ok(ModelSpec {
            model: self.model.clone(),
            phase: self.phase,
            params: WorkloadParams {
                batch: num(ModelField::Batch)?,
                seq_len: num(ModelField::SeqLen)?,
                output_len: num(ModelField::OutputLen)?,
                tp: num(ModelField::Tp)?,
            },
        })
    }
}

impl From<ModelSpec> for ModelForm {
    fn from(s: ModelSpec) -> Self {
        let text = |v: Option<u64>| v.map(|v| v.to_string()).unwrap_or_default();
        ModelForm {
            model: s.model,
            phase: s.phase,
            batch: text(s.params.batch),
            seq_len: text(s.params.seq_len),
            output_len: text(s.params.output_len),
            tp: text(s.params.tp),
        }
    }
}

impl ModelSpec {
    /// The workload of these inputs. A parameter the generator rejects is reported with the
    /// form's label for it (`Tensor parallelism = 3: …`); a model that is not modelled
    /// (GLIGEN) says why.
    pub fn workload(&self) -> Result<Workload, String> {
        let config = self.model.config()?;
        build_workload(&config, self.phase, self.params).map_err(|e| match &e {
            super::WorkloadError::Param { name, value, reason } => {
                match ModelField::ALL.iter().find(|f| f.param_name() == *name) {
                    Some(f) => format!("{} = {value}: {reason}.", f.label()),
                    None => format!("{e}."),
                }
            }
            _ => format!("{e}."),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::model_names;

    #[test]
    fn empty_fields_take_the_config_values() {
        let spec = ModelForm::default().spec().unwrap();
        assert_eq!(spec.params, WorkloadParams::default());
        let w = spec.workload().unwrap();
        assert_eq!(w.model, "llama3-8b");
        assert_eq!(w.layers, 32);
    }

    #[test]
    fn bad_numbers_name_their_field() {
        for (field, text, expect) in [
            (ModelField::Batch, "0", "Batch size must be at least 1"),
            (ModelField::SeqLen, "12x", "Input length must be a whole number of at least 1 (got \"12x\")"),
            (ModelField::OutputLen, "-3", "Output length must be a whole number"),
            (ModelField::Tp, "99999999999999999999999", "Tensor parallelism is too large"),
        ] {
            let mut form = ModelForm::default();
            form.set(field, text.into());
            let e = form.spec().unwrap_err();
            assert!(e.starts_with(expect), "{e}");
        }
    }

    #[test]
    fn generator_rejections_use_the_form_labels() {
        let mut form = ModelForm::default();
        form.set(ModelField::SeqLen, (1u64 << 40).to_string());
        let e = form.spec().unwrap().workload().unwrap_err();
        assert!(e.starts_with("Input length = "), "{e}");
    }

    #[test]
    fn gligen_says_it_is_not_modelled() {
        let form = ModelForm { model: ModelChoice::Preset("gligen".into()), ..ModelForm::default() };
        let e = form.spec().unwrap().workload().unwrap_err();
        assert!(e.contains("GLIGEN"), "{e}");
    }

    #[test]
    fn every_other_preset_builds_in_both_phases() {
        for name in model_names().into_iter().filter(|n| *n != "gligen") {
            for phase in [Phase::Prefill, Phase::Decode] {
                let spec =
                    ModelSpec { model: ModelChoice::Preset(name.into()), phase, params: WorkloadParams::default() };
                // DiT and DLRM have no decode phase: that is a message, not a panic.
                let _ = spec.workload();
            }
            let spec = ModelSpec {
                model: ModelChoice::Preset(name.into()),
                phase: Phase::Prefill,
                params: WorkloadParams::default(),
            };
            assert!(spec.workload().is_ok(), "{name}");
        }
    }

    #[test]
    fn a_file_choice_reads_its_text_and_a_bad_file_is_named() {
        let text = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/models/models/llama2-13b.json"));
        let choice = ModelChoice::File { file_name: "mine.json".into(), text: text.into() };
        assert_eq!(choice.config().unwrap().name(), "llama2-13b");
        let bad = ModelChoice::File { file_name: "bad.json".into(), text: "{".into() };
        assert!(bad.config().unwrap_err().starts_with("bad.json cannot be read"));
    }

    #[test]
    fn form_and_spec_round_trip() {
        let mut form = ModelForm::default();
        form.set(ModelField::Tp, "2".into());
        form.phase = Phase::Decode;
        let spec = form.spec().unwrap();
        assert_eq!(ModelForm::from(spec.clone()), form);
        let json = serde_json::to_string(&spec).unwrap();
        assert!(json.len() < 160, "{json}");
        assert_eq!(serde_json::from_str::<ModelSpec>(&json).unwrap(), spec);
    }
}
