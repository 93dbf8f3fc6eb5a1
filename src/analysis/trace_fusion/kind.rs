//! What kind of work a kernel group does, as the fusion rules see it, and the unfused parts a
//! library-fused op is made of.
//!
//! The rules of `docs/fusion-rules.md` know four op types; a trace has more distinctions that
//! matter to a compiler (a softmax or norm is a reduction whose output has its input's size, an
//! attention kernel is two products around a softmax), so the trace side keeps them apart and
//! maps them onto the project's types where its rules apply ([`Kind::op_type`]).

use serde::{Deserialize, Serialize};

use classify::category::Category;
use classify::inductor::InductorKind;
use fusion::OpType;
use perf::Family;

/// A kernel group's kind of work.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// A GEMM or convolution (a library kernel or an Inductor template).
    Matmul,
    /// Fused attention (Q·Kᵀ, softmax, ·V in one kernel).
    Attention,
    /// A softmax: a row reduction whose output has its input's size.
    Softmax,
    /// A normalisation (LayerNorm, RMSNorm, …): the same shape property as a softmax.
    Norm,
    /// Any other reduction (sum, mean, max, …): its output is smaller than its input.
    Reduction,
    /// Pointwise work, activations and copies.
    Elementwise,
    /// What no rule fuses: memcpy/memset, embedding lookups, sorting, communication, unknown.
    Other,
}

impl Kind {
    /// Every kind, in the order above (the rule file's vocabulary).
    pub const ALL: [Kind; 7] =
        [Kind::Matmul, Kind::Attention, Kind::Softmax, Kind::Norm, Kind::Reduction, Kind::Elementwise, Kind::Other];

    /// The JSON id.
    pub fn id(self) -> &'static str {
        match self {
            Kind::Matmul => "matmul",
            Kind::Attention => "attention",
            Kind::Softmax => "softmax",
            Kind::Norm => "norm",
            Kind::Reduction => "reduction",
            Kind::Elementwise => "elementwise",
            Kind::Other => "other",
        }
    }

    /// The kind of a modelled op family.
    pub fn of_family(family: Family) -> Kind {
        match family {
            Family::Gemm | Family::Conv => Kind::Matmul,
            Family::Attention => Kind::Attention,
            Family::Softmax => Kind::Softmax,
            Family::Norm => Kind::Norm,
            Family::Reduce => Kind::Reduction,
            Family::Elementwise | Family::Copy => Kind::Elementwise,
            Family::Embedding => Kind::Other,
            // Triton kernels are typed by their name (`of_inductor`); a nameless one is pointwise.
            Family::Triton => Kind::Elementwise,
        }
    }

    /// The kind of an Inductor kernel from its name's kind and components.
    pub fn of_inductor(kind: InductorKind, components: &[Category]) -> Kind {
        match kind {
            InductorKind::Template if components.contains(&Category::Attention) => Kind::Attention,
            InductorKind::Template => Kind::Matmul,
            InductorKind::Pointwise | InductorKind::Foreach => Kind::Elementwise,
            InductorKind::Reduction | InductorKind::PersistentReduction | InductorKind::Cpp => {
                if components.contains(&Category::Softmax) {
                    Kind::Softmax
                } else if components.contains(&Category::Norm) {
                    Kind::Norm
                } else if kind == InductorKind::Cpp && !components.contains(&Category::Reduction) {
                    Kind::Elementwise
                } else {
                    Kind::Reduction
                }
            }
        }
    }

    /// The kind a kernel's category implies, when no op tells more.
    pub fn of_category(category: Category) -> Kind {
        match category {
            Category::Gemm => Kind::Matmul,
            Category::Attention => Kind::Attention,
            Category::Softmax => Kind::Softmax,
            Category::Norm => Kind::Norm,
            Category::Reduction => Kind::Reduction,
            Category::Elementwise | Category::Activation | Category::Rotary => Kind::Elementwise,
            _ => Kind::Other,
        }
    }

    /// The project's op type (`docs/fusion-rules.md`): attention counts as a product, softmax
    /// and norm as reductions; `None` for work the project's rules do not cover.
    pub fn op_type(self) -> Option<OpType> {
        match self {
            Kind::Matmul | Kind::Attention => Some(OpType::Matmul),
            Kind::Softmax | Kind::Norm | Kind::Reduction => Some(OpType::Reduction),
            Kind::Elementwise => Some(OpType::Elementwise),
            Kind::Other => None,
        }
    }

    /// Whether the kind's output has the size of its (largest) input: pointwise work, softmax
    /// and norms. A plain reduction's output is smaller.
    pub fn keeps_size(self) -> bool {
        matches!(self, Kind::Elementwise | Kind::Softmax | Kind::Norm)
    }
}

impl std::str::FromStr for Kind {
    type Err = ();

    fn from_str(s: &str) -> Result<Kind, ()> {
        Kind::ALL.into_iter().find(|k| k.id() == s).ok_or(())
    }
}

/// An op that a library kernel runs as one kernel though it is several ops: its parts, in
/// order, and which tensor the unfused form writes and reads back between them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Composite {
    /// `addmm`, `baddbmm`, `linear` with a bias: the product writes C, the bias add reads it.
    GemmBias,
    /// Fused attention: S = Q·Kᵀ is written and read by the softmax, whose P is written and
    /// read by ·V.
    Attention,
    /// vLLM's `fused_add_rms_norm`: the residual sum is written and read by the norm.
    AddRmsNorm,
}

impl Composite {
    /// The parts, as the group lists them.
    pub fn parts(self) -> &'static [&'static str] {
        match self {
            Composite::GemmBias => &["matmul", "add (bias)"],
            Composite::Attention => &["matmul (Q·Kᵀ)", "softmax", "matmul (·V)"],
            Composite::AddRmsNorm => &["add (residual)", "rms_norm"],
        }
    }
}
