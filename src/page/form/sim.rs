//! The workload a simulator op table is compared with, as typed: model and chip presets, the
//! phase and the sizes (empty = the model config's value). It starts as what the file name
//! says ([`simcsv::infer_setup`]) and the user can change every part.

use super::{Numbers, WorkloadField};
use simcsv::SimSetup;
use workload::Phase;

/// The setup form as typed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SetupForm {
    pub model: String,
    pub chip: String,
    pub phase: Phase,
    pub numbers: Numbers<WorkloadField>,
}

impl From<&SimSetup> for SetupForm {
    fn from(s: &SimSetup) -> Self {
        SetupForm {
            model: s.model.clone(),
            chip: s.chip.clone(),
            phase: s.phase,
            numbers: WorkloadField::numbers(&s.params),
        }
    }
}

impl SetupForm {
    /// The setup, or a sentence naming the field that is neither empty nor a whole number ≥ 1.
    pub fn setup(&self) -> Result<SimSetup, String> {
        Ok(SimSetup {
            model: self.model.clone(),
            chip: self.chip.clone(),
            phase: self.phase,
            params: WorkloadField::params(&self.numbers)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use workload::WorkloadParams;

    #[test]
    fn form_names_the_bad_field() {
        let setup = SimSetup {
            model: "llama3-8b".into(),
            chip: "h100".into(),
            phase: Phase::Decode,
            params: WorkloadParams { batch: Some(4), ..WorkloadParams::default() },
        };
        let mut form = SetupForm::from(&setup);
        assert_eq!(form.setup().unwrap(), setup);
        form.numbers.set(WorkloadField::Tp, "0".into());
        assert_eq!(form.setup().unwrap_err(), "Tensor parallelism must be at least 1 (got 0).");
        form.numbers.set(WorkloadField::Tp, " ".into());
        assert_eq!(form.setup().unwrap().params.tp, None);
    }
}
