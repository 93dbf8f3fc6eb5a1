//! The reference transformer block of `docs/fusion-rules.md` ("Transformer block").

use serde::{Deserialize, Serialize};
use thiserror::Error;

use super::graph::{GraphBuilder, OpGraph, OpSpec, OpType};

/// Parameters of the block. `hidden_dim` must be a multiple of `num_heads`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct TransformerConfig {
    pub seq_len: u64,
    pub hidden_dim: u64,
    pub num_heads: u64,
    pub dtype_bytes: u64,
}

impl Default for TransformerConfig {
    /// The page's opening example: S = 2048, H = 4096, NH = 32, 2-byte elements.
    fn default() -> Self {
        TransformerConfig { seq_len: 2048, hidden_dim: 4096, num_heads: 32, dtype_bytes: 2 }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum TransformerError {
    #[error("{name} must be at least 1 (got {value})")]
    Zero { name: &'static str, value: u64 },
    #[error("hidden_dim {hidden_dim} is not divisible by num_heads {num_heads}")]
    HeadsDoNotDivide { hidden_dim: u64, num_heads: u64 },
    #[error("the block is too large: a tensor size overflows 64 bits")]
    TooLarge,
}

/// One row of the block's table: name, type, inputs, output, shape.
type OpRow = (&'static str, OpType, &'static [&'static str], &'static str, Vec<u64>);

/// Builds the block's op graph.
pub fn transformer_block(c: TransformerConfig) -> Result<OpGraph, TransformerError> {
    for (name, value) in [
        ("seq_len", c.seq_len),
        ("hidden_dim", c.hidden_dim),
        ("num_heads", c.num_heads),
        ("dtype_bytes", c.dtype_bytes),
    ] {
        if value == 0 {
            return Err(TransformerError::Zero { name, value });
        }
    }
    if !c.hidden_dim.is_multiple_of(c.num_heads) {
        return Err(TransformerError::HeadsDoNotDivide { hidden_dim: c.hidden_dim, num_heads: c.num_heads });
    }
    let (s, h, nh, b) = (c.seq_len, c.hidden_dim, c.num_heads, c.dtype_bytes);
    let hd = h / nh;
    use OpType::*;
    let ops: [OpRow; 16] = [
        ("qkv_proj", Matmul, &["x", "w_qkv"], "qkv", vec![s, 3 * h]),
        ("split_q", Reshape, &["qkv"], "q", vec![nh, s, hd]),
        ("split_k", Reshape, &["qkv"], "k", vec![nh, s, hd]),
        ("split_v", Reshape, &["qkv"], "v", vec![nh, s, hd]),
        ("attn_scores", Matmul, &["q", "k"], "scores", vec![nh, s, s]),
        ("softmax", Reduction, &["scores"], "probs", vec![nh, s, s]),
        ("attn_output", Matmul, &["probs", "v"], "attn", vec![nh, s, hd]),
        ("concat_heads", Reshape, &["attn"], "concat", vec![s, h]),
        ("out_proj", Matmul, &["concat", "w_o"], "proj", vec![s, h]),
        ("residual1", Elementwise, &["proj", "x"], "res1", vec![s, h]),
        ("layernorm1", Reduction, &["res1"], "ln1", vec![s, h]),
        ("ffn_up", Matmul, &["ln1", "w_up"], "up", vec![s, 4 * h]),
        ("gelu", Elementwise, &["up"], "act", vec![s, 4 * h]),
        ("ffn_down", Matmul, &["act", "w_down"], "down", vec![s, h]),
        ("residual2", Elementwise, &["down", "ln1"], "res2", vec![s, h]),
        ("layernorm2", Reduction, &["res2"], "ln2", vec![s, h]),
    ];
    let mut g = GraphBuilder::with_capacity(ops.len());
    let dims = |v: &[u64]| {
        v.iter().map(|&d| i64::try_from(d).map_err(|_| TransformerError::TooLarge)).collect::<Result<Vec<_>, _>>()
    };
    let bi = i64::try_from(b).map_err(|_| TransformerError::TooLarge)?;
    for (name, shape) in
        [("x", [s, h]), ("w_qkv", [h, 3 * h]), ("w_o", [h, h]), ("w_up", [h, 4 * h]), ("w_down", [4 * h, h])]
    {
        g.declare_tensor(name, &dims(&shape)?, Some(bi)).map_err(|_| TransformerError::TooLarge)?;
    }
    for (name, ty, inputs, output, shape) in ops {
        g.add_op(OpSpec::new(name, ty, inputs, output, &shape, b)).map_err(|_| TransformerError::TooLarge)?;
    }
    g.build().map_err(|_| TransformerError::TooLarge)
}
