//! Which generator builds a model config's workload: the dispatch over the config's kind, kept
//! apart from the types the generators share (`mod.rs`), which the generators use and this
//! file calls, so that no two files import each other.

use super::config::ModelConfig;
use super::{dit, dlrm, llm, Phase, Workload, WorkloadError, WorkloadParams};

/// Builds the workload of a config in a phase.
pub fn build_workload(config: &ModelConfig, phase: Phase, params: WorkloadParams) -> Result<Workload, WorkloadError> {
    match config {
        ModelConfig::Llm(c) => llm::build(c, phase, params, false),
        ModelConfig::Dit(c) => dit::build(c, phase, params, false),
        ModelConfig::Dlrm(c) => dlrm::build(c, phase, params),
        ModelConfig::Unsupported { model_name, model_type } => Err(WorkloadError::Unsupported {
            model: model_name.clone(),
            reason: ModelConfig::not_modelled_reason(model_type),
        }),
    }
}

/// Every layer chained, each op with repeat = steps (decode steps, diffusion steps). Grows with
/// depth: for the whole DeepSeek-V3 prefill that is tens of thousands of ops (still fast).
pub fn whole_model_graph(
    config: &ModelConfig,
    phase: Phase,
    params: WorkloadParams,
) -> Result<Workload, WorkloadError> {
    match config {
        ModelConfig::Llm(c) => llm::build(c, phase, params, true),
        ModelConfig::Dit(c) => dit::build(c, phase, params, true),
        _ => build_workload(config, phase, params),
    }
}
