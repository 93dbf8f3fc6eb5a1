//! What "Model × chip" runs, validated: which model (a built-in config or a config file the
//! user loaded), the phase and the workload parameters. [`ModelSpec`] is what a share link
//! stores (a few dozen bytes for a built-in model); the page's form for it is
//! `page::form::model`.

use serde::{Deserialize, Serialize};

use super::config::{parse_model_config, ModelConfig};
use super::presets::preset_model;
use super::{Phase, WorkloadParams};

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
