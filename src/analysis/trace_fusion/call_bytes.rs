//! What an op-level byte formula says of one call: fused and unfused bytes, kind, parts and data
//! flow. Its own file because the models that produce it (serving engines' fused ops,
//! collectives, vLLM's MoE and attention) and the group description that takes it must not
//! import each other.

use super::kind::Kind;
use super::unknown::Unknown;

/// What unfused attention moves beyond the fused kernel: the score matrix S written by Q·Kᵀ and
/// read by the softmax, and P written by it and read by ·V, 4 × `scores` elements (heads × the
/// (query, key) pairs computed) of `size` bytes; `None` past 64 bits.
pub(crate) fn score_round_trips(scores: u64, size: u64) -> Option<u64> {
    scores.checked_mul(size)?.checked_mul(4)
}

/// One call's bytes as an op-level model gives them.
pub(crate) struct CallBytes {
    pub fused: u64,
    /// `None` when the recorded arguments do not give it; `unfused_unknown` says why.
    pub unfused: Option<u64>,
    pub unfused_unknown: Option<Unknown>,
    pub kind: Kind,
    pub parts: &'static [&'static str],
    /// The data flow: its output's bytes (`None`: it writes no tensor a next kernel takes,
    /// such as a KV-cache write), its tensor inputs' bytes, its iteration space.
    pub out_bytes: Option<u64>,
    pub in_bytes: Vec<u64>,
    pub space: Option<u64>,
}
