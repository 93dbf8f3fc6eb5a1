//! Why a group's bytes are not known, typed by whose gap it is (`docs/trace-fusion.md`,
//! "Coverage"): the trace does not record what the bytes need, fusionscope has no model for
//! what it does record, or what it records does not fit the op. The split is what makes the
//! coverage figure honest: time the trace cannot give bytes for is left out of its denominator,
//! time fusionscope could model but does not stays in it.

use serde::{Deserialize, Serialize};

use perf::{ArgsError, NoCost};

/// Whose gap an unknown byte figure is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
pub enum Cause {
    /// The trace does not record what the bytes need: no launching op, no shapes, a tensor
    /// list's shapes, a compiled graph's kernels, a copy's size, the weights or cache a fused
    /// op reads, a concrete argument the size depends on.
    #[serde(rename = "not recorded")]
    NotRecorded,
    /// The trace records the op's arguments, but fusionscope has no byte formula for the op (or
    /// for this form of it).
    #[serde(rename = "no model")]
    NoCost,
    /// What the trace records does not fit the op: malformed or absurd shapes, sizes that
    /// overflow 64 bits.
    #[serde(rename = "bad input")]
    BadInput,
    /// One of several kernels of one op call: the op's bytes are counted at its longest
    /// kernel, so this kernel's time is covered by them.
    #[serde(rename = "counted at another kernel")]
    CountedElsewhere,
    /// Read from a share link made before the split, which carried the reason only.
    #[default]
    #[serde(rename = "unstated")]
    Unstated,
}

impl Cause {
    /// The words the text output and the page use.
    pub fn text(self) -> &'static str {
        match self {
            Cause::NotRecorded => "not recorded",
            Cause::NoCost => "no model",
            Cause::BadInput => "bad input",
            Cause::CountedElsewhere => "counted at another kernel",
            Cause::Unstated => "unstated",
        }
    }

    /// Whether the time is covered by known bytes (those of its op, counted elsewhere).
    pub fn covered(self) -> bool {
        self == Cause::CountedElsewhere
    }
}

/// Why a group's bytes are not known: whose gap, and the reason in words, naming the op and
/// the input.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Unknown {
    #[serde(rename = "bytes_unknown_cause", default)]
    pub cause: Cause,
    #[serde(rename = "bytes_unknown")]
    pub why: String,
}

impl Unknown {
    pub fn new(cause: Cause, why: impl Into<String>) -> Unknown {
        Unknown { cause, why: why.into() }
    }
    pub fn not_recorded(why: impl Into<String>) -> Unknown {
        Unknown::new(Cause::NotRecorded, why)
    }
    pub fn no_model(why: impl Into<String>) -> Unknown {
        Unknown::new(Cause::NoCost, why)
    }
    pub fn bad_input(why: impl Into<String>) -> Unknown {
        Unknown::new(Cause::BadInput, why)
    }

    /// The same gap, its reason prefixed (with the op's name).
    pub fn prefixed(self, prefix: &str) -> Unknown {
        Unknown { cause: self.cause, why: format!("{prefix}: {}", self.why) }
    }
}

impl std::fmt::Display for Unknown {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.why)
    }
}

/// Whose gap a cost formula's refusal is.
pub fn cause_of(e: &NoCost) -> Cause {
    match e {
        NoCost::UnknownOp(_) | NoCost::Unsupported(_) => Cause::NoCost,
        NoCost::Args(ArgsError::MissingDims | ArgsError::MissingTypes) => Cause::NotRecorded,
        NoCost::ListDType { .. }
        | NoCost::ListShapes { .. }
        | NoCost::MissingConcrete { .. }
        | NoCost::NotRecorded(_) => Cause::NotRecorded,
        // An argument of a form the model does not take (a scalar where it expects a tensor,
        // an absent optional input): a form of the op it does not model.
        NoCost::Input { .. } => Cause::NoCost,
        NoCost::Args(_)
        | NoCost::UnknownDType { .. }
        | NoCost::BadConcrete { .. }
        | NoCost::Shapes(_)
        | NoCost::Overflow { .. } => Cause::BadInput,
    }
}

/// A cost formula's refusal as a typed reason, its words unchanged.
pub fn of_no_cost(e: &NoCost) -> Unknown {
    Unknown::new(cause_of(e), e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cause_says_whose_gap_it_is() {
        assert_eq!(cause_of(&NoCost::UnknownOp("aten::foo".into())), Cause::NoCost);
        assert_eq!(cause_of(&NoCost::Args(ArgsError::MissingDims)), Cause::NotRecorded);
        assert_eq!(cause_of(&NoCost::ListShapes { input: 1 }), Cause::NotRecorded);
        assert_eq!(cause_of(&NoCost::MissingConcrete { input: 2, what: "dim" }), Cause::NotRecorded);
        assert_eq!(cause_of(&NoCost::Shapes("bad".into())), Cause::BadInput);
        assert_eq!(cause_of(&NoCost::NotRecorded("rows".into())), Cause::NotRecorded);
        assert!(Cause::CountedElsewhere.covered() && !Cause::NoCost.covered());
    }

    #[test]
    fn a_reason_serialises_as_its_two_keys_and_a_link_before_the_split_still_reads() {
        let u = Unknown::no_model("no model for aten::foo");
        let v = serde_json::to_value(&u).unwrap();
        assert_eq!(
            v,
            serde_json::json!({"bytes_unknown_cause": "no model", "bytes_unknown": "no model for aten::foo"})
        );
        let old: Unknown = serde_json::from_str(r#"{"bytes_unknown": "why"}"#).unwrap();
        assert_eq!(old, Unknown::new(Cause::Unstated, "why"));
    }
}
