//! The NeuSim model configs shipped with the crate (Apache-2.0; see tests/data/PROVENANCE.md),
//! so the page and `--model llama3-8b` work without a file.

use super::config::{parse_model_config, ModelConfig};
use super::WorkloadError;

const FORMULAS: [(&str, &str); 11] = [
    ("llama2-13b", include_str!("../../tests/data/models/models/llama2-13b.json")),
    ("llama3-8b", include_str!("../../tests/data/models/models/llama3-8b.json")),
    ("llama3-70b", include_str!("../../tests/data/models/models/llama3-70b.json")),
    ("llama3_1-405b", include_str!("../../tests/data/models/models/llama3_1-405b.json")),
    ("deepseekv2-236b", include_str!("../../tests/data/models/models/deepseekv2-236b.json")),
    ("deepseekv3-671b", include_str!("../../tests/data/models/models/deepseekv3-671b.json")),
    ("dit-xl", include_str!("../../tests/data/models/models/dit-xl.json")),
    ("dlrm-s", include_str!("../../tests/data/models/models/dlrm-s.json")),
    ("dlrm-m", include_str!("../../tests/data/models/models/dlrm-m.json")),
    ("dlrm-l", include_str!("../../tests/data/models/models/dlrm-l.json")),
    ("gligen", include_str!("../../tests/data/models/models/gligen.json")),
];

/// Names of the built-in model configs.
pub fn model_names() -> Vec<&'static str> {
    FORMULAS.iter().map(|(n, _)| *n).collect()
}

/// A built-in model config by name (case-insensitive; `llama3.1-405b` = `llama3_1-405b`).
pub fn preset_model(name: &str) -> Result<ModelConfig, WorkloadError> {
    let key = name.to_ascii_lowercase().replace('.', "_");
    let (_, text) = FORMULAS.iter().find(|(n, _)| *n == key).ok_or_else(|| {
        WorkloadError::Config(format!("unknown model `{name}`; built-in models: {}", model_names().join(", ")))
    })?;
    parse_model_config(text)
}
