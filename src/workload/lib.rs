//! Model workloads as op graphs: the NeuSim model configs (Llama 2/3/3.1, DeepSeek-V2/V3, DiT,
//! DLRM) turned into the ops of inference prefill or one decode step, on one chip of a
//! tensor-parallel group.
//!
//! A model is many copies of a few distinct layers, so a [`Workload`] holds one instance of
//! each distinct layer, chained (Llama: one layer; DeepSeek: the first dense layer and the
//! first MoE layer), and how many times each op runs (`op_repeat`: layers of that kind ×
//! decode steps or diffusion steps). That keeps the graph small whatever the depth; totals
//! weight by the repeats. [`whole_model_graph`] chains every layer when the full graph is wanted.
//!
//! Ops use the four fusion op types and meaningful names (`layer0.q_proj`); every weight,
//! input and cache is a declared tensor, so no size is assumed. What each generator leaves out
//! is listed in [`Workload::not_modelled`]; the closed forms are in `docs/time-model.md`.

mod build;
mod config;
mod dit;
mod dlrm;
mod llm;
mod net;
mod presets;
pub mod report;
pub mod spec;

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use thiserror::Error;

use fusion::OpGraph;
use limits::MODEL_DIM;

pub use build::{build_workload, whole_model_graph};
pub use config::{parse_model_config, DitConfig, DlrmConfig, LlmConfig, MlpLayer, ModelConfig};
pub use presets::{model_names, preset_model};
pub use report::{model_report, ModelReport};
pub use spec::{ModelChoice, ModelSpec};

/// Inference phase.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Phase {
    /// The whole prompt at once (for DiT and DLRM: one forward pass).
    Prefill,
    /// One new token per sequence, attending over the KV cache.
    Decode,
}

impl Phase {
    pub fn as_str(self) -> &'static str {
        match self {
            Phase::Prefill => "prefill",
            Phase::Decode => "decode",
        }
    }
}

impl fmt::Display for Phase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Phase {
    type Err = WorkloadError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_lowercase().as_str() {
            "prefill" => Ok(Phase::Prefill),
            "decode" => Ok(Phase::Decode),
            _ => {
                Err(WorkloadError::Param { name: "phase", value: s.to_string(), reason: "expected prefill or decode" })
            }
        }
    }
}

/// Workload parameters; `None` takes the config's value (`global_batch_size`, `input_seqlen`,
/// `output_seqlen`, `tensor_parallelism_degree`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct WorkloadParams {
    pub batch: Option<u64>,
    pub seq_len: Option<u64>,
    pub output_len: Option<u64>,
    pub tp: Option<u64>,
}

/// The parameters a workload was built with, after defaults.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResolvedParams {
    pub batch: u64,
    /// Prompt tokens (LLM), image tokens (DiT), 1 (DLRM).
    pub seq_len: u64,
    /// Generated tokens (LLM decode steps); 0 where it has no meaning.
    pub output_len: u64,
    pub tp: u64,
    /// Element size: bf16 everywhere, as the simulator's tables use.
    pub dtype_bytes: u64,
}

/// One distinct layer of the workload and how often it runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LayerPart {
    /// `dense`, `moe`, `block`, `mlp` …
    pub kind: String,
    /// How many layers of this kind the model has.
    pub layers: u64,
    /// Runs of each of its ops: `layers × steps`.
    pub repeat: u64,
    /// Its ops are `graph.ops()[first_op .. first_op + op_count]`.
    pub first_op: usize,
    pub op_count: usize,
}

/// A model on one chip in one phase.
#[derive(Debug, Clone, PartialEq)]
pub struct Workload {
    pub model: String,
    pub phase: Phase,
    pub params: ResolvedParams,
    /// Layers of the model (transformer blocks; 1 for DLRM's single pass).
    pub layers: u64,
    /// Decode steps (= output length) for decode, diffusion steps for DiT, else 1.
    pub steps: u64,
    /// One instance of each distinct layer, chained.
    pub graph: OpGraph,
    /// Runs of each op of `graph` in the whole phase.
    pub op_repeat: Vec<u64>,
    pub parts: Vec<LayerPart>,
    /// What the generator leaves out, in words.
    pub not_modelled: Vec<String>,
    /// FLOPs of the whole phase, counted (and checked to fit in 64 bits) when built.
    total_flops: u64,
}

/// Why a workload could not be built.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum WorkloadError {
    #[error("model config: {0}")]
    Config(String),
    #[error("model {model}: {reason}")]
    Unsupported { model: String, reason: String },
    #[error("model {model}: the {phase} phase does not apply ({reason})")]
    PhaseNotApplicable { model: String, phase: Phase, reason: &'static str },
    #[error("{name} = {value}: {reason}")]
    Param { name: &'static str, value: String, reason: &'static str },
    #[error("model {model}: config field `{field}` is required for {what}")]
    MissingField { model: String, field: &'static str, what: &'static str },
    /// A dimension, tensor size, the traffic or the FLOPs do not fit in 64 bits; the message
    /// names the tensor or op.
    #[error("the workload is too large: {0}")]
    TooLarge(String),
    #[error("internal error building the op graph: {0}")]
    Internal(String),
}

pub(crate) fn positive(name: &'static str, v: u64) -> Result<u64, WorkloadError> {
    if v == 0 {
        Err(WorkloadError::Param { name, value: "0".into(), reason: "must be at least 1" })
    } else if v > MODEL_DIM {
        Err(WorkloadError::Param { name, value: v.to_string(), reason: "must be at most 2^31" })
    } else {
        Ok(v)
    }
}

/// FLOPs of a generated graph, each op times its runs, by the roofline module's counting; an
/// error naming the op when they do not fit in 64 bits (2³¹-sized parameters can get there).
pub(crate) fn count_flops(graph: &OpGraph, op_repeat: &[u64]) -> Result<u64, WorkloadError> {
    hardware::roofline::total_flops(graph, op_repeat).map_err(|e| WorkloadError::TooLarge(e.to_string()))
}

impl Workload {
    /// FLOPs of the whole phase (every layer, every step), by the roofline module's counting
    /// (counted when the workload was built, which fails if they do not fit in 64 bits).
    pub fn total_flops(&self) -> u64 {
        self.total_flops
    }

    /// FLOPs of one layer of one step: `total / (layers × steps)`; for models whose layers
    /// differ (DeepSeek's dense and MoE layers) this is the mean layer.
    pub fn per_layer_flops(&self) -> u64 {
        self.total_flops() / (self.layers.max(1) * self.steps.max(1))
    }
}
