//! Which measured fusion pattern a fusion group is an instance of.
//!
//! A pattern's operators (`Linear`, `Bias`, `ReLU`) are mapped to the seed op types with
//! [`OPERATOR_OP_TYPES`] (case-insensitive). A group matches a pattern when the group's op
//! types, in processing order and **with reshapes left out** (a view moves no data inside a
//! fused kernel), equal the pattern's op types exactly. Rules:
//!
//! * A pattern with an operator not in the table (`FullAttention`, `SDPA`) never matches; nor
//!   does a pattern of fewer than two ops (a lone op is not a fusion).
//! * Several patterns can share one sequence (`Linear_Bias_ReLU`, `Linear_Bias_GELU` and
//!   `Conv2d_BN_ReLU` are all matmul + elementwise + elementwise). The op graph does not say
//!   which activation or whether a matmul was a convolution, so the pattern with the **lowest
//!   measured speedup** is used (the first in file order on a tie): a calibrated estimate never
//!   makes fusion look better than some measurement of that shape did.
//! * Some patterns cannot be formed by the seed rules at all (`QK_Softmax` is matmul +
//!   reduction, and a reduction never joins a group with a matmul); they are listed but can
//!   never match.

use serde::Serialize;

use super::profile::{CalibrationProfile, FusionPattern};
use fusion::OpType;

/// The operator names found in calibration patterns and the seed op type each stands for.
///
/// Convolutions count as matmuls (same compute-bound kernel class); inference batch norm is a
/// per-channel scale and shift, hence elementwise; `AttentionScores` is the scaling of `QK`.
pub const OPERATOR_OP_TYPES: &[(&str, OpType)] = &[
    ("linear", OpType::Matmul),
    ("matmul", OpType::Matmul),
    ("mm", OpType::Matmul),
    ("bmm", OpType::Matmul),
    ("gemm", OpType::Matmul),
    ("qk", OpType::Matmul),
    ("conv1d", OpType::Matmul),
    ("conv2d", OpType::Matmul),
    ("conv3d", OpType::Matmul),
    ("conv", OpType::Matmul),
    ("bias", OpType::Elementwise),
    ("add", OpType::Elementwise),
    ("mul", OpType::Elementwise),
    ("relu", OpType::Elementwise),
    ("relu6", OpType::Elementwise),
    ("gelu", OpType::Elementwise),
    ("silu", OpType::Elementwise),
    ("sigmoid", OpType::Elementwise),
    ("tanh", OpType::Elementwise),
    ("dropout", OpType::Elementwise),
    ("bn", OpType::Elementwise),
    ("batchnorm", OpType::Elementwise),
    ("batchnorm2d", OpType::Elementwise),
    ("attentionscores", OpType::Elementwise),
    ("scale", OpType::Elementwise),
    ("softmax", OpType::Reduction),
    ("layernorm", OpType::Reduction),
    ("rmsnorm", OpType::Reduction),
];

/// The seed op type of one pattern operator, if it has one.
pub fn operator_op_type(operator: &str) -> Option<OpType> {
    OPERATOR_OP_TYPES.iter().find(|(name, _)| name.eq_ignore_ascii_case(operator)).map(|&(_, t)| t)
}

/// A pattern operator with no seed op type (`FullAttention`, `SDPA`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("operator \"{0}\" has no op type in the seed rules")]
pub struct UnmappedOperator(pub String);

/// The pattern's op-type sequence, or the first operator that has no seed op type.
pub fn pattern_op_types(pattern: &FusionPattern) -> Result<Vec<OpType>, UnmappedOperator> {
    pattern.operators.iter().map(|o| operator_op_type(o).ok_or_else(|| UnmappedOperator(o.clone()))).collect()
}

/// How one pattern of a profile relates to fusion groups (for showing the mapping).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PatternMapping {
    pub fusion_pattern: String,
    pub operators: Vec<String>,
    /// The op-type sequence a group must have (reshapes aside); `None` when unmappable.
    pub op_types: Option<Vec<OpType>>,
    /// True when groups of this sequence take this pattern's speedup.
    pub used: bool,
    /// Why the pattern is not used, or which pattern is used instead; empty when used.
    pub note: String,
}

/// Every pattern of the profile with its sequence and whether groups use it, in file order.
pub fn pattern_mappings(profile: &CalibrationProfile) -> Vec<PatternMapping> {
    profile
        .fusion_patterns
        .iter()
        .map(|p| {
            let (op_types, used, note) = match pattern_op_types(p) {
                Err(unmapped) => (None, false, unmapped.to_string()),
                Ok(types) if types.len() < 2 => (Some(types), false, "a single op is not a fusion".to_string()),
                Ok(types) if !formable(&types) => (
                    Some(types),
                    false,
                    "the seed rules never form this group (a reduction joins no group with a matmul or \
                     a reduction)"
                        .to_string(),
                ),
                Ok(types) => match matching_pattern(profile, &types) {
                    Some(chosen) if std::ptr::eq(chosen, p) => (Some(types), true, String::new()),
                    Some(chosen) => (
                        Some(types),
                        false,
                        format!("same sequence as {}, whose speedup is lower and is used instead", chosen.name),
                    ),
                    None => (Some(types), false, String::new()),
                },
            };
            PatternMapping { fusion_pattern: p.name.clone(), operators: p.operators.clone(), op_types, used, note }
        })
        .collect()
}

/// The measured pattern a fusion group is an instance of (see the module docs for the rules).
pub fn matching_pattern<'a>(profile: &'a CalibrationProfile, group_op_types: &[OpType]) -> Option<&'a FusionPattern> {
    let group: Vec<OpType> = group_op_types.iter().copied().filter(|&t| t != OpType::Reshape).collect();
    if group.len() < 2 || !formable(&group) {
        return None;
    }
    profile.fusion_patterns.iter().filter(|p| pattern_op_types(p).is_ok_and(|types| types == group)).fold(
        None,
        |best: Option<&FusionPattern>, p| match best {
            Some(b) if b.speedup_factor <= p.speedup_factor => Some(b),
            _ => Some(p),
        },
    )
}

/// Whether the seed rules can put ops of these types, in this order, into one group: nothing
/// follows a reduction, and a reduction never follows a matmul.
fn formable(types: &[OpType]) -> bool {
    let mut seen_matmul = false;
    for (i, t) in types.iter().enumerate() {
        match t {
            OpType::Matmul if i > 0 => return false,
            OpType::Matmul => seen_matmul = true,
            OpType::Reduction if seen_matmul || i + 1 < types.len() => return false,
            _ => {}
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{parse_calibration, CalibrationFile};
    use OpType::*;

    fn profile(patterns: &[(&str, f64)]) -> CalibrationProfile {
        let body: Vec<String> = patterns.iter().map(|(n, s)| format!("\"{n}\": {{\"speedup_factor\": {s}}}")).collect();
        match parse_calibration(&format!("{{\"fusion_profiles\": {{{}}}}}", body.join(","))).unwrap() {
            CalibrationFile::Profile(p) => p,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn exact_sequence_reshapes_ignored() {
        let p = profile(&[("Linear_Bias", 1.2), ("Linear_Bias_ReLU", 1.3)]);
        assert_eq!(matching_pattern(&p, &[Matmul, Elementwise]).unwrap().name, "Linear_Bias");
        assert_eq!(
            matching_pattern(&p, &[Matmul, Reshape, Elementwise, Elementwise]).unwrap().name,
            "Linear_Bias_ReLU"
        );
        assert!(matching_pattern(&p, &[Matmul, Elementwise, Elementwise, Elementwise]).is_none());
        assert!(matching_pattern(&p, &[Matmul]).is_none());
        assert!(matching_pattern(&p, &[Elementwise, Matmul]).is_none());
        assert!(matching_pattern(&p, &[]).is_none());
    }

    #[test]
    fn shared_sequence_takes_the_lowest_speedup_first_on_ties() {
        let p = profile(&[("Conv2d_BN_ReLU", 1.03), ("Linear_Bias_ReLU", 0.98), ("Linear_Bias_GELU", 0.98)]);
        assert_eq!(matching_pattern(&p, &[Matmul, Elementwise, Elementwise]).unwrap().name, "Linear_Bias_ReLU");
        let m = pattern_mappings(&p);
        assert_eq!(m.iter().map(|m| m.used).collect::<Vec<_>>(), [false, true, false]);
        assert!(m[0].note.contains("Linear_Bias_ReLU"), "{}", m[0].note);
    }

    #[test]
    fn unmappable_and_unformable_patterns_are_explained() {
        let p = profile(&[("FullAttention_SDPA", 0.7), ("QK_Softmax", 1.05), ("Softmax", 2.0)]);
        let m = pattern_mappings(&p);
        assert_eq!(m[0].op_types, None);
        assert!(m[0].note.contains("FullAttention"));
        assert_eq!(m[1].op_types, Some(vec![Matmul, Reduction]));
        assert!(!m[1].used && m[1].note.contains("never form"));
        assert!(!m[2].used && m[2].note.contains("single op"));
        assert!(matching_pattern(&p, &[Matmul, Reduction]).is_none());
    }
}
