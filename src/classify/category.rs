//! The fixed list of kernel categories of `docs/trace-analysis.md`, with the precedence that
//! decides a fused kernel's category (its heaviest component).

use std::fmt;

use serde::{Deserialize, Serialize};

/// One kernel category. The JSON ids are the documented ones (`gemm`, `kv_cache`, ...).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Category {
    Gemm,
    Attention,
    Norm,
    Activation,
    Softmax,
    Elementwise,
    Reduction,
    Embedding,
    Rotary,
    KvCache,
    Moe,
    Communication,
    Memory,
    Sort,
    Quantization,
    Sampling,
    Other,
}

impl Category {
    /// Every category, in the order `docs/trace-analysis.md` lists them.
    pub const ALL: [Category; 17] = [
        Category::Gemm,
        Category::Attention,
        Category::Norm,
        Category::Activation,
        Category::Softmax,
        Category::Elementwise,
        Category::Reduction,
        Category::Embedding,
        Category::Rotary,
        Category::KvCache,
        Category::Moe,
        Category::Communication,
        Category::Memory,
        Category::Sort,
        Category::Quantization,
        Category::Sampling,
        Category::Other,
    ];

    /// The JSON id.
    pub fn id(self) -> &'static str {
        match self {
            Category::Gemm => "gemm",
            Category::Attention => "attention",
            Category::Norm => "norm",
            Category::Activation => "activation",
            Category::Softmax => "softmax",
            Category::Elementwise => "elementwise",
            Category::Reduction => "reduction",
            Category::Embedding => "embedding",
            Category::Rotary => "rotary",
            Category::KvCache => "kv_cache",
            Category::Moe => "moe",
            Category::Communication => "communication",
            Category::Memory => "memory",
            Category::Sort => "sort",
            Category::Quantization => "quantization",
            Category::Sampling => "sampling",
            Category::Other => "other",
        }
    }

    /// Weight of a component when it decides a fused kernel's category: higher wins.
    /// The contract orders `gemm > attention > moe > norm > softmax > activation > reduction >
    /// elementwise …`; the rest follow, with `other` last.
    pub fn weight(self) -> u8 {
        match self {
            Category::Gemm => 100,
            Category::Attention => 95,
            Category::Moe => 90,
            Category::Norm => 85,
            Category::Softmax => 80,
            Category::Activation => 75,
            Category::Reduction => 70,
            Category::Elementwise => 65,
            Category::Communication => 60,
            Category::KvCache => 55,
            Category::Rotary => 50,
            Category::Embedding => 45,
            Category::Quantization => 40,
            Category::Sampling => 35,
            Category::Sort => 30,
            Category::Memory => 25,
            Category::Other => 0,
        }
    }

    /// The heaviest of `components`, `Other` when empty.
    pub fn heaviest(components: &[Category]) -> Category {
        components.iter().copied().max_by_key(|c| c.weight()).unwrap_or(Category::Other)
    }
}

impl fmt::Display for Category {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.id())
    }
}

impl std::str::FromStr for Category {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Category::ALL.into_iter().find(|c| c.id() == s).ok_or_else(|| format!("unknown category \"{s}\""))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_round_trip() {
        for c in Category::ALL {
            assert_eq!(c.id().parse::<Category>(), Ok(c));
            assert_eq!(serde_json::to_string(&c).unwrap(), format!("\"{}\"", c.id()));
        }
    }

    #[test]
    fn heaviest_follows_spec_order() {
        use Category::*;
        assert_eq!(Category::heaviest(&[Elementwise, Norm]), Norm);
        assert_eq!(Category::heaviest(&[Activation, Elementwise]), Activation);
        assert_eq!(Category::heaviest(&[Elementwise, Gemm, Activation]), Gemm);
        assert_eq!(Category::heaviest(&[Moe, Norm]), Moe);
        assert_eq!(Category::heaviest(&[]), Other);
    }
}
