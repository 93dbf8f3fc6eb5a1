//! The reference transformer block of `docs/fusion-rules.md` ("Transformer block").

use serde::{Deserialize, Serialize};
use thiserror::Error;

use super::error::GraphError;
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
    /// `3 × hidden_dim` or `4 × hidden_dim` (the QKV and FFN widths) does not fit in 64 bits.
    #[error("the block is too large: {what} = {factor} × {hidden_dim} does not fit in 64 bits")]
    WidthOverflow { what: &'static str, factor: u64, hidden_dim: u64 },
    /// A dimension above `i64::MAX`, which graph files cannot write.
    #[error("the block is too large: tensor \"{tensor}\" has a dimension above 2^63 - 1")]
    DimensionTooLarge { tensor: String },
    /// A tensor size, or the total traffic, does not fit in 64 bits; the error names the tensor
    /// or the op.
    #[error(transparent)]
    Graph(#[from] GraphError),
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
    let wide = |what: &'static str, factor: u64| {
        h.checked_mul(factor).ok_or(TransformerError::WidthOverflow { what, factor, hidden_dim: h })
    };
    let (h3, h4) = (wide("the QKV width", 3)?, wide("the FFN width", 4)?);
    use OpType::*;
    let ops: [OpRow; 16] = [
        ("qkv_proj", Matmul, &["x", "w_qkv"], "qkv", vec![s, h3]),
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
        ("ffn_up", Matmul, &["ln1", "w_up"], "up", vec![s, h4]),
        ("gelu", Elementwise, &["up"], "act", vec![s, h4]),
        ("ffn_down", Matmul, &["act", "w_down"], "down", vec![s, h]),
        ("residual2", Elementwise, &["down", "ln1"], "res2", vec![s, h]),
        ("layernorm2", Reduction, &["res2"], "ln2", vec![s, h]),
    ];
    let mut g = GraphBuilder::with_capacity(ops.len());
    let dims = |tensor: &str, v: &[u64]| {
        v.iter()
            .map(|&d| i64::try_from(d).map_err(|_| TransformerError::DimensionTooLarge { tensor: tensor.to_string() }))
            .collect::<Result<Vec<_>, _>>()
    };
    let bi = i64::try_from(b).map_err(|_| TransformerError::DimensionTooLarge { tensor: "x".into() })?;
    for (name, shape) in [("x", [s, h]), ("w_qkv", [h, h3]), ("w_o", [h, h]), ("w_up", [h, h4]), ("w_down", [h4, h])] {
        g.declare_tensor(name, &dims(name, &shape)?, Some(bi))?;
    }
    for (name, ty, inputs, output, shape) in ops {
        dims(output, &shape)?;
        g.add_op(OpSpec::new(name, ty, inputs, output, &shape, b))?;
    }
    Ok(g.build()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block(seq_len: u64, hidden_dim: u64, num_heads: u64) -> Result<OpGraph, TransformerError> {
        transformer_block(TransformerConfig { seq_len, hidden_dim, num_heads, dtype_bytes: 2 })
    }

    /// S = 2^31, H = 2^28, one head: every tensor fits in 64 bits (the scores are 2^63 bytes),
    /// but the traffic does not; before the traffic check the totals wrapped and were printed.
    #[test]
    fn a_block_whose_traffic_overflows_names_the_op() {
        let e = block(1 << 31, 1 << 28, 1).unwrap_err();
        assert!(matches!(&e, TransformerError::Graph(GraphError::TrafficOverflow { .. })), "{e}");
        assert!(
            e.to_string().starts_with("the graph is too large: its memory traffic passes 2^64 bytes at op \""),
            "{e}"
        );
    }

    #[test]
    fn a_tensor_that_overflows_is_named() {
        let e = block(1 << 31, 1 << 28, 32).unwrap_err();
        assert_eq!(e, TransformerError::Graph(GraphError::SizeOverflow { tensor: "scores".into() }));
    }

    #[test]
    fn widths_and_dimensions_that_overflow_are_named() {
        let h = u64::MAX / 2;
        assert_eq!(
            block(1, h, 1).unwrap_err().to_string(),
            format!("the block is too large: the QKV width = 3 × {h} does not fit in 64 bits")
        );
        let h = u64::MAX / 4 + 1;
        assert!(block(1, h, 1).unwrap_err().to_string().contains("the FFN width"));
        let e = block(1 << 63, 1, 1).unwrap_err();
        assert_eq!(e, TransformerError::DimensionTooLarge { tensor: "x".into() });
    }
}
