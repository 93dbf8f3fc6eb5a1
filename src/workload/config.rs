//! Model configs in the NeuSim format (`tests/data/models/models/*.json`): the fields are
//! self-describing; `model_type` says which generator reads them.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::WorkloadError;
use limits::MODEL_DIM;

/// A decoder-only LLM (Llama family) or a DeepSeek MoE model (`model_type: "llm"`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LlmConfig {
    pub model_name: String,
    pub d_model: u64,
    pub num_heads: u64,
    pub d_head: u64,
    pub d_ff: u64,
    pub num_layers: u64,
    /// `llama` (SwiGLU FFN) or `deepseek_moe`.
    #[serde(default = "default_ffn_type")]
    pub ffn_type: String,
    /// Grouped-query attention: K/V heads (defaults to `num_heads`, i.e. plain multi-head).
    #[serde(default)]
    pub num_kv_heads: Option<u64>,
    #[serde(default = "one")]
    pub global_batch_size: u64,
    #[serde(default = "default_input")]
    pub input_seqlen: u64,
    #[serde(default = "default_output")]
    pub output_seqlen: u64,
    #[serde(default = "one")]
    pub tensor_parallelism_degree: u64,
    /// DeepSeek MoE: FFN width of one expert.
    #[serde(default)]
    pub moe_d_ff: Option<u64>,
    /// DeepSeek MoE: the first layers keep a dense FFN.
    #[serde(default)]
    pub num_dense_layers: Option<u64>,
    #[serde(default)]
    pub num_shared_experts: Option<u64>,
    #[serde(default)]
    pub num_routed_experts: Option<u64>,
    #[serde(default)]
    pub num_activated_routed_experts_per_token: Option<u64>,
    /// DeepSeek MLA: low-rank query and key/value compressions.
    #[serde(default)]
    pub q_lora_rank: Option<u64>,
    #[serde(default)]
    pub kv_lora_rank: Option<u64>,
    #[serde(default)]
    pub qk_nope_head_dim: Option<u64>,
    #[serde(default)]
    pub qk_rope_head_dim: Option<u64>,
    #[serde(default)]
    pub v_head_dim: Option<u64>,
}

/// DiT (`model_type: "dit"`): a transformer over image patches, run once per diffusion step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DitConfig {
    pub model_name: String,
    pub image_width: u64,
    pub patch_size: u64,
    pub num_diffusion_steps: u64,
    pub d_model: u64,
    pub num_heads: u64,
    pub d_head: u64,
    pub d_ff: u64,
    pub num_layers: u64,
    #[serde(default = "one")]
    pub global_batch_size: u64,
    #[serde(default = "one")]
    pub tensor_parallelism_degree: u64,
}

/// One layer of a DLRM MLP.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MlpLayer {
    pub in_features: u64,
    pub out_features: u64,
    #[serde(default)]
    pub bias: bool,
    #[serde(default)]
    pub activation: Option<String>,
}

/// DLRM (`model_type: "dlrm"`): bottom MLP, embedding-bag lookups, dot interaction, top MLP.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DlrmConfig {
    pub model_name: String,
    pub embedding_dim: u64,
    pub num_indices_per_lookup: Vec<u64>,
    pub embedding_table_sizes: Vec<u64>,
    pub bottom_mlp_config: Vec<MlpLayer>,
    pub top_mlp_config: Vec<MlpLayer>,
    #[serde(default)]
    pub interaction: Option<String>,
    #[serde(default = "one")]
    pub global_batch_size: u64,
}

fn one() -> u64 {
    1
}
fn default_input() -> u64 {
    1024
}
fn default_output() -> u64 {
    128
}
fn default_ffn_type() -> String {
    "llama".into()
}

/// A model config, by `model_type`.
#[derive(Debug, Clone, PartialEq)]
pub enum ModelConfig {
    Llm(LlmConfig),
    Dit(DitConfig),
    Dlrm(DlrmConfig),
    /// Read but not modelled (see [`ModelConfig::not_modelled_reason`]).
    Unsupported {
        model_name: String,
        model_type: String,
    },
}

impl ModelConfig {
    pub fn name(&self) -> &str {
        match self {
            ModelConfig::Llm(c) => &c.model_name,
            ModelConfig::Dit(c) => &c.model_name,
            ModelConfig::Dlrm(c) => &c.model_name,
            ModelConfig::Unsupported { model_name, .. } => model_name,
        }
    }

    /// Why an unsupported model type has no op graph.
    pub fn not_modelled_reason(model_type: &str) -> String {
        match model_type {
            "gligen" => "GLIGEN is a UNet with ConvNeXt/ResNet convolution blocks and grounding embedders; \
                         convolutions have no lowering to the four fusion op types here, so it is not modelled"
                .into(),
            other => format!("model_type `{other}` has no op-graph generator (known: llm, dit, dlrm)"),
        }
    }
}

fn typed<T: serde::de::DeserializeOwned>(value: Value) -> Result<T, WorkloadError> {
    serde_json::from_value(value).map_err(|e| WorkloadError::Config(e.to_string()))
}

/// The largest size or count a config or parameter may give ([`MODEL_DIM`]).
pub const MAX_DIM: u64 = MODEL_DIM;

/// The first number anywhere in the config above [`MAX_DIM`], with its field name.
fn oversized(v: &Value) -> Option<(String, String)> {
    match v {
        Value::Object(m) => m.iter().find_map(|(k, x)| match x {
            Value::Number(n) if n.as_f64().is_some_and(|f| f > MAX_DIM as f64) => Some((k.clone(), n.to_string())),
            other => oversized(other),
        }),
        Value::Array(a) => a.iter().find_map(oversized),
        _ => None,
    }
}

/// Reads a model config; the error names the malformed position or the missing field.
pub fn parse_model_config(text: &str) -> Result<ModelConfig, WorkloadError> {
    let value: Value = serde_json::from_str(text).map_err(|e| {
        WorkloadError::Config(format!("malformed JSON at line {}, column {}: {e}", e.line(), e.column()))
    })?;
    let obj = value.as_object().ok_or_else(|| WorkloadError::Config("a model config must be a JSON object".into()))?;
    let model_type = obj
        .get("model_type")
        .and_then(Value::as_str)
        .ok_or_else(|| WorkloadError::Config("missing string field `model_type` (llm, dit, dlrm, gligen)".into()))?
        .to_string();
    if let Some((field, v)) = oversized(&value) {
        return Err(WorkloadError::Config(format!(
            "field `{field}` = {v} is larger than {MAX_DIM}, the largest dimension the generators accept"
        )));
    }
    let model_name = obj.get("model_name").and_then(Value::as_str).unwrap_or("unnamed").to_string();
    match model_type.as_str() {
        "llm" => Ok(ModelConfig::Llm(typed(value)?)),
        "dit" => Ok(ModelConfig::Dit(typed(value)?)),
        "dlrm" => Ok(ModelConfig::Dlrm(typed(value)?)),
        _ => Ok(ModelConfig::Unsupported { model_name, model_type }),
    }
}
