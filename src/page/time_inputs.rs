//! The inputs of the time model that are not the graph: the chip chosen, chips and model
//! configs the user loaded, and a calibration profile while one is loaded. Kept apart from the
//! graph so that opening another graph keeps them.

use super::form::model::ModelForm;
use calib::{CalibReport, CalibrationFile, CalibrationProfile};
use hardware::chip::all_presets;
use hardware::{Chip, ChipChoice};
use workload::ModelChoice;

use super::by_address::ByAddress;

/// A calibration file as loaded: its report (shown) and its profile if it has one (used by the
/// calibrated time model; a measured-subgraph file has none).
#[derive(Debug, Clone, PartialEq)]
pub struct LoadedCalibration {
    pub file_name: String,
    pub report: ByAddress<CalibReport>,
    pub profile: Option<ByAddress<CalibrationProfile>>,
}

impl LoadedCalibration {
    pub fn new(file_name: String, file: CalibrationFile) -> Self {
        let report = ByAddress::new(CalibReport::new(&file));
        let profile = match file {
            CalibrationFile::Profile(p) => Some(ByAddress::new(p)),
            CalibrationFile::Measured(_) => None,
        };
        LoadedCalibration { file_name, report, profile }
    }

    /// The profile the time model applies: only one that measured fusion patterns changes times.
    pub fn active_profile(&self) -> Option<&ByAddress<CalibrationProfile>> {
        self.profile.as_ref().filter(|p| !p.fusion_patterns.is_empty())
    }
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct TimeInputs {
    pub chip: ChipChoice,
    /// Chips read from files, newest last.
    pub custom_chips: Vec<Chip>,
    /// Model configs read from files (offered beside the built-in models).
    pub model_files: Vec<ModelChoice>,
    pub calibration: Option<LoadedCalibration>,
    /// The "Model × chip" inputs last used, restored when the view is shown again.
    pub last_model: Option<ModelForm>,
}

impl TimeInputs {
    /// The chip the time view uses, or why it cannot (an unknown preset in an edited link).
    pub fn chip(&self) -> Result<Chip, String> {
        self.chip.chip().map_err(|e| format!("The chip cannot be used: {e}."))
    }

    /// Every chip offered: the presets, then the loaded ones, each with its choice.
    pub fn chip_options(&self) -> Vec<(ChipChoice, String)> {
        let presets = hardware::preset_names().into_iter().zip(all_presets());
        let mut out: Vec<(ChipChoice, String)> =
            presets.map(|(key, chip)| (ChipChoice::Preset(key.to_string()), chip.name)).collect();
        out.extend(
            self.custom_chips.iter().map(|c| (ChipChoice::Custom(c.clone()), format!("{} (from file)", c.name))),
        );
        // A custom chip restored from a link is offered too.
        if matches!(&self.chip, ChipChoice::Custom(_)) && !out.iter().any(|(c, _)| *c == self.chip) {
            if let ChipChoice::Custom(c) = &self.chip {
                out.push((self.chip.clone(), format!("{} (from the link)", c.name)));
            }
        }
        out
    }

    /// A chip read from a file: offered (replacing one of the same name) and chosen.
    pub fn with_chip(&self, chip: Chip) -> TimeInputs {
        let mut t = self.clone();
        t.custom_chips.retain(|c| c.name != chip.name);
        t.custom_chips.push(chip.clone());
        t.chip = ChipChoice::Custom(chip);
        t
    }

    /// A model config read from a file: offered (replacing one of the same file name).
    pub fn with_model_file(&self, choice: ModelChoice) -> TimeInputs {
        let mut t = self.clone();
        t.model_files.retain(|m| m.label() != choice.label());
        t.model_files.push(choice);
        t
    }
}
